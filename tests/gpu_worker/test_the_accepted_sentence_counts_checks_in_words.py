"""The accepted verdict's sentence reads right for one, two and many checks."""

from gpu_worker.engine.judge import checks_passed


def test_one_check_reads_in_the_singular():
    assert checks_passed(1) == "1 check passed"


def test_two_and_more_checks_read_as_both_and_all():
    assert checks_passed(2) == "both checks passed"
    assert checks_passed(3) == "all 3 checks passed"
