"""The PTX executor's tests: the factories beside them importable, and nvcc's PTX made once per source."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
