"""An exercise as its lab folder declares it: spec, formulas, inputs, launch shapes, checks, goals, diagnostics.

Owns `labspec` (lab.yaml into typed models), `formula` (safe arithmetic over sizes), `inputs` (seeded
kernel arguments, the same on both sides of the sandbox), `launch` (grid, block, shared memory, device
limits), `plan` (a job's precheck and its runs: a launch and a seed per size, then the sweep's points),
`checker` (the default output comparison), `goals` (what "done" means beyond correct), `profiled_goals`
(the memory-access goals judged from Nsight Compute's counters) and `diagnostics` (errors turned into the
learner's line). Pure Python and NumPy: no GPU, no process.

May import: `gpu_worker.protocol` only.
"""
