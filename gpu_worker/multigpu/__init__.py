"""The science of module 5 (multi-GPU): cost models of communication and parallelism, no Django, no GPU.

It owns the alpha-beta model of NCCL's collectives (all-reduce, all-gather,
reduce-scatter, broadcast; ring and tree) with algorithm and bus bandwidth as
nccl-tests defines them (`collectives`), the interconnects' published numbers
(`links`), Megatron-LM tensor parallelism's communication against its compute
(`tensor_parallel`), pipeline bubbles and the 1F1B and GPipe timetables
(`pipeline`), data-parallel gradient all-reduce (`data_parallel`) and
activation memory with and without sequence parallelism (`activation_memory`).

Every number here is a model: each function's docstring names its source, and
each result carries a `MODEL` label for the figures that draw it. It imports
only the standard library, so the web app (calculators, lesson figures), the
worker and the benchmark scripts share one implementation.
"""

MODEL = "model"
