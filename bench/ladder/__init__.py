"""The tile-language rungs of module 4's softmax ladder (bench/softmax_ladder.py), one file a rung.

Each file imports its language at the top, so a worker without it fails that rung's import alone,
and the ladder records the import error as the rung's reason. Each file's `softmax(x, y)` is what a
student writes at that rung: the kernel and its launch; the ladder counts those lines.
"""
