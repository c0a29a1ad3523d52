"""The hardware's rules, computed: occupancy, the architecture table, datasheets, memory traces, metrics.

Owns the occupancy calculator (`occupancy`, `archs`), vendors' datasheet ceilings (`datasheets`), the
simulator's per-warp memory trace (`memtrace`) and its per-line report of sectors and bank conflicts
(`memtrace_report`), and what a kernel achieved from its declared work (`metrics`). No GPU needed.

May import: `gpu_worker.exercise` and `gpu_worker.protocol`.
"""
