"""Every kernel lab's `expected` formula evaluates on the names the GPU's device check hands it.

Run 19 on the H200: the device check named only the inputs, so eight labs whose answer reads a size (`n`,
`P`, `m`) raised FormulaError in the measuring process. NumPy stands in for CuPy here: the names, not the
arrays' home, are what this checks; `test_gpu_kernel_cache` runs the same check with CuPy on the GPU.
"""

from __future__ import annotations

import numpy as np
import pytest

from gpu_worker.exercise.formula import array_value
from gpu_worker.exercise.inputs import formula_names, make_arguments, shape_of
from gpu_worker.exercise.labspec import load_all

KERNEL_LABS = [lab for lab in load_all()[1] if lab.spec.languages[0] not in ("policy", "function")]


@pytest.mark.parametrize("lab", KERNEL_LABS, ids=lambda lab: lab.spec.slug)
def test_the_expected_answer_has_every_name_it_reads_and_the_outputs_shape(lab):
    spec = lab.spec
    sizes = spec.sizes["sim"][0]
    for language in spec.languages:
        args = spec.args_for(language)
        values = list(make_arguments(args, sizes, seed=1).values())
        names = formula_names(args, sizes, values)  # what `device_check.expect` hands the formula
        for arg in spec.outputs():
            if arg.name in spec.expected:
                answer = np.asarray(array_value(spec.expected[arg.name], names))
                assert answer.size == int(np.prod(shape_of(arg, sizes))), (language, arg.name)
