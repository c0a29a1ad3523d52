"""Run PTX on the CPU: the CPU tier's executor of the kernels that NVCC, NVVM (Numba) and Triton compile.

The sandboxed compile produces PTX; this package parses that text (`parser`, into the `program` model)
and runs one kernel launch on NumPy arrays (`executor`, with the instruction semantics in `alu` and the
address spaces in `memory`), then values the warps' memory requests (`report`). `abi` lays out each
language's kernel parameters. The PTX is hostile data: nothing in it is ever evaluated as code, every
address is checked against the buffers the launch was given, and steps and memory are bounded; an
instruction the executor does not know is refused by name and source line, never run wrongly.

May import: `gpu_worker.science` (the memory report's model) and `gpu_worker.protocol`.
"""
