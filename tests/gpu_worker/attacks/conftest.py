"""The attack suite's set-up: the factories of tests/gpu_worker importable from here."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
