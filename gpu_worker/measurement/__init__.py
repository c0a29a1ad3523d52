"""The trusted timer and what it leans on; nothing here ever imports a learner's code.

Owns CUDA-event timing with graph replay (`timing`), its statistics and stopping rule (`stats`), one timed run
per GPU (`gpu_lock`), the guard on what timed launches compute (`launch_guard`), the slice's measured ceilings
(`calibrate`), device identity and NVML state (`device_info`), Nsight Compute's command line and report
(`ncu`) and its per-instruction source page (`ncu_source`), the harness's own CuPy kernel cache
(`kernel_cache`) and the engine side of the child's timing and occupancy messages (`gpu_report`).

May import: `gpu_worker.science`, `gpu_worker.exercise`, `gpu_worker.protocol` and `gpu_worker.settings`.
"""
