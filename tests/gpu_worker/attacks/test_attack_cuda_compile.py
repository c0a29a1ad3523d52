"""Attacks through the CUDA C++ compile path: include tricks, a planted include, and a flood of warnings.

nvcc runs in the sandbox as the job's uid, on the learner's file, so an
`#include` reads with the job's rights and sees the job's filesystem. Each row
is one trick; none may show a byte of the file it names, and none may turn into
an infrastructure error.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from attack_jobs import run_all
from engine_factories import alices_job

REPO = Path(__file__).resolve().parents[3]
KERNEL = 'extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {}\n'
INCLUDES = [  # (attack, the include line, text of the named file that must not show)
    ("the repository's settings", f'#include "{REPO}/labsite/settings.py"', "SECRET_KEY"),
    ("the main checkout's .env", '#include "/work/main/.env"', "SECRET_KEY="),
    ("a path climbing out of /tmp", '#include "../../../../../../etc/shadow"', "root:"),
    ("the worker's environment", '#include "/proc/1/environ"', "PATH="),
    ("a system header path to a host file", "#include </root/.bashrc>", "alias"),
    ("a lab's reference solution", f'#include "{REPO}/labs/content/01-silicon/vector-add/reference.cu"', "__global__"),
]
# a file the learner cannot write anywhere nvcc would look, so the include fails whatever /tmp holds
PLANTED = '#include "/usr/include/warplab-planted.h"\n' + KERNEL
# 2^13 warnings, each printed with its expanded line: gigabytes of compiler messages from a 1 KB file
MACROS = "#define D0(x) { int unused_##x; }\n" + "".join(
    f"#define D{i}(x) D{i - 1}(x##0) D{i - 1}(x##1)\n" for i in range(1, 14)
)
WARNINGS = MACROS + KERNEL.replace("{}", "{\n    D13(v)\n}")


@pytest.fixture(scope="module")
def outcomes():
    jobs = {name: alices_job(f"{line}\n{KERNEL}", "cuda") for name, line, _ in INCLUDES}
    jobs["planted header"] = alices_job(PLANTED, "cuda")
    jobs["warnings"] = alices_job(WARNINGS, "cuda", wall_seconds=60)
    return run_all(jobs)


@pytest.mark.parametrize(("name", "line", "secret"), INCLUDES, ids=[r[0] for r in INCLUDES])
def test_an_include_trick_shows_nothing_of_the_file(outcomes, name, line, secret):
    outcome = outcomes[name]
    assert outcome.result.verdict in ("compile_error", "wrong_answer"), outcome.result.message
    assert secret not in outcome.json()


def test_a_header_the_learner_hoped_to_plant_is_not_there(outcomes):
    assert not Path("/usr/include/warplab-planted.h").exists()
    assert outcomes["planted header"].result.verdict == "compile_error"


def test_a_compile_log_of_thousands_of_warnings_is_cut_like_output_not_an_error(outcomes):
    result = outcomes["warnings"].result
    assert result.verdict == "wrong_answer", result.message  # compiled, with warnings, run on the PTX executor
    assert 0 < len(result.compile.diagnostics) <= 100
    assert len(result.model_dump_json()) < 1 << 20
