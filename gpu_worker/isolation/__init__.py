"""The sandbox a learner's code runs in, and the processes inside it.

Owns the bubblewrap sandbox and its pipe (`sandbox`, `wire`, `message_budget`), per-job limits
(`cgroups`, `syscall_filter`, `uid_pool`), the GPUs a job gets (`placement`), the child processes it
starts (`child` for jobs, `nccl_child` for the multi-GPU probe) and warm spares (`spare`).

May import: `gpu_worker.backends`, `gpu_worker.measurement`, `gpu_worker.science`,
`gpu_worker.exercise`, `gpu_worker.protocol` and `gpu_worker.settings`.
"""
