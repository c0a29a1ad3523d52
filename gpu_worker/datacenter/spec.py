"""A scheduling exercise's settings, as `runner` imports them: they live in `gpu_worker.protocol`.

The `policy:` block of a `lab.yaml` travels inside the job's harness (`protocol.Harness.policy`), so it is
part of the contract and is defined there; protocol imports nothing of `gpu_worker`. This module only hands
the names on to `runner`, which another change is reshaping; new code imports them from `gpu_worker.protocol`.
"""

from gpu_worker.protocol import BUILTIN_NAMES, HIGHER_IS_BETTER, METRIC_WORDS, PolicySpec

__all__ = ["BUILTIN_NAMES", "HIGHER_IS_BETTER", "METRIC_WORDS", "PolicySpec"]
