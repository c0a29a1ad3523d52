"""The fleet: the GPUs as planned, the workers as live, and where each run goes.

What it owns: the planner's rules and data (`plan`, `mig_profiles`, `forms`, `drawing`, `capacity`), the
exports an admin takes to the machines (`exports`, checked by `export_checks`), the live workers read from
their heartbeats (`heartbeats`) and drained or undrained by an admin through Celery's remote control (`drain`),
what the runs themselves say about the fleet (`stats`), and routing: the pool a run goes to, its place and
wait, the GPU-time cap (`routing`) and the GPU lane for CUDA C++ (`languages`). `services` is the only writer
of the plan's models (`labs.models.gpu`).

What it may import: `labs.models` (it reads runs and course memberships to route and cap), `gpu_worker`'s
contract (`gpu_worker.protocol`) and pure modules; nothing else of `labs`. `mig_profiles` and `plan` are
plain data and rules that need no Django (`bench/mig_probe.py` imports `mig_profiles` without it).
"""
