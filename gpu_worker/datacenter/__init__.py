"""Module 6's GPU-cluster scheduling simulator and the runner for learners' scheduling policies.

What it owns: the synthetic job trace (`trace`), the discrete-event simulator of a
cluster of interchangeable GPUs that asks a policy what to run at every decision
(`simulate`), the models of GPUs shared through MIG instances (`mig`, H100's
placement table) and through MPS (`mps`, co-located jobs slowing each other),
the built-in policies of Gao et al.'s taxonomy (`policies`), the metrics
(`metrics`), the Plotly figures (`figures`), the sandboxed child that
runs a learner's policy (`policy_child`) and the trusted side that re-simulates
the child's decisions and judges them (`runner`). The exercise's settings in
`lab.yaml` (`PolicySpec`) are part of the job, so they live in `gpu_worker.protocol`.

What it may import: the standard library, pydantic, and for `figures` and
`runner` only, plotly and the rest of `gpu_worker` (the sandbox, the protocol).
`trace`, `simulate`, `mig`, `mps` and `policies` import nothing of ours beyond
each other, so the sandboxed child stays small. No Django, like the rest of `gpu_worker`.

Every number it makes is a model's, not a measurement: figures and results say so.
"""
