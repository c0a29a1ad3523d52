"""The GPU execution service: run a learner's kernel in a sandbox, check it, time it, explain it. No Django.

The packages, from the bottom up; each may import only the ones below it (and
`tests/gpu_worker/test_package_layout.py` holds it to that):

- `protocol`, `settings`: the contract with the web app (jobs, events, results) and the worker's settings.
- `exercise/`: a lab folder's spec: `lab.yaml` (labspec), its formulas, inputs, launch shapes, the
  default checker, the performance goals, and diagnostics that point at the learner's line.
- `science/`: what the hardware does, computed: occupancy and the architecture table, datasheets,
  memory traces on the simulator and their per-line report, achieved metrics.
- `figures/`: the Plotly figures (occupancy, roofline, sweeps) and `analysis`, which builds them.
- `measurement/`: the trusted timer and what it leans on: CUDA-event timing, statistics, the per-GPU
  lock, the launch guard, calibration, device facts (CuPy, NVML), Nsight Compute's command line,
  the harness's kernel cache, and the engine side of GPU reports.
- `ptx/`: the CPU tier's PTX executor: PTX parsed and run on NumPy, every address checked, and the
  memory report (sectors per request, bank-conflict ways) counted from the warps' addresses.
- `backends/`: per language and device, compile and launch (`sim`, `cuda`, the compile server).
- `isolation/`: the sandbox (bubblewrap, cgroup, seccomp, uid pool), its pipe and budget, the child
  processes that run inside it, warm spares and GPU placement.
- `datacenter/` (module 6's scheduling simulator), `answers/` (exercises whose learner writes a plain
  Python function, judged by its answers against a trusted reference) and `multigpu/` (module 5's models).
- `engine`, `profiling`: one job from request to result, and its Nsight Compute run.
- `worker/`: the Celery service, its heartbeat and preflight; `cli` and `occupancy_cli`: the command line.

Before the 2026-12-04 reshape every module sat in this folder: `gpu_worker.<module>` is now
`gpu_worker.<package>.<module>` with the package named above (e.g. `gpu_worker.measurement.timing` is
`gpu_worker.measurement.timing`, `gpu_worker.isolation.sandbox` is `gpu_worker.isolation.sandbox`,
`gpu_worker.figures.analysis` is `gpu_worker.figures.analysis`, `gpu_worker.isolation.placement` is
`gpu_worker.isolation.placement`); `engine`, `profiling`, `protocol`, `settings`, `cli` and
`occupancy_cli` stay at the top.
"""
