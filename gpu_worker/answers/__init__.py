"""Exercises judged by their answers: the learner writes a plain Python function, we check what it returns.

What it owns: the sandboxed child that imports the learner's file and calls its
function on each case (`child`), the trusted side that hands the cases out,
bounds and checks what comes back and compares it with a trusted reference
(`runner`), the registry of those references (`graders`), and the graders
themselves, one module each (`architectures`: module 1's resident warps of one
kernel on four GPU architectures, its NVIDIA answers from `science.occupancy`).
A lab chooses one by name in its `function:` block (`protocol.FunctionSpec`).

What it may import: the standard library, pydantic, `science` (a grader's reference)
and, for `runner`, the sandbox and the protocol. `child` imports only the sandbox's
child helpers, the learner-module loader and the diagnostics, so the sandboxed
process stays small. No Django, like the rest of `gpu_worker`.
"""
