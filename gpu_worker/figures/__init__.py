"""Plotly figures built in Python and sent as JSON; each names its device, slice and backend.

Owns the occupancy graphs, the roofline, sweep curves, their shared text, and `analysis`: what every
submission is shown beside its verdict, built in the engine outside the learner's reach.

May import: `gpu_worker.science`, `gpu_worker.exercise` and `gpu_worker.protocol`.
"""
