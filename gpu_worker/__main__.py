"""`python -m gpu_worker ...`: the worker's command line (see `gpu_worker.cli`)."""

import sys

from gpu_worker.cli import main

sys.exit(main())
