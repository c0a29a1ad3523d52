"""Jobs that cannot run are rejected before anything runs, with a message that says why."""

from __future__ import annotations

from engine_factories import alices_job, module_with, run

from gpu_worker.protocol import MAX_SOURCE_BYTES, Job, LaunchSpec


def rejected_before_running(job: Job) -> str:
    outcome = run(job)
    assert outcome.result.verdict == "rejected"
    assert [e.type for e in outcome.events] == ["started", "done"]
    return outcome.result.message


def test_it_rejects_an_empty_source():
    assert "empty" in rejected_before_running(alices_job("   \n"))


def test_it_rejects_a_source_over_the_limit():
    source = module_with("# " + "é" * (MAX_SOURCE_BYTES // 2 + 10))  # under the limit in characters, over in bytes
    assert f"over the limit of {MAX_SOURCE_BYTES} bytes" in rejected_before_running(alices_job(source))


def test_it_rejects_a_file_without_the_entry_kernel():
    message = rejected_before_running(alices_job(module_with("", "@cuda.jit\ndef vector_sub(a, b, c):\n    pass\n")))
    assert "no kernel named 'vector_add'" in message


def test_it_rejects_a_cuda_file_without_the_entry_kernel():
    source = 'extern "C" __global__ void add(const float* a, const float* b, float* c, int n) {}\n'
    assert "no kernel named 'vector_add'" in rejected_before_running(alices_job(source, "cuda"))


def test_it_rejects_a_block_over_1024_threads():
    job = alices_job(module_with(""), launch=LaunchSpec(block=["2048"], grid=["1"]))
    assert "over the device limit of 1024" in rejected_before_running(job)


def test_it_rejects_a_block_whose_threads_multiply_past_1024():
    job = alices_job(module_with(""), launch=LaunchSpec(block=["64", "32"], grid=["1"]))
    assert "2048 threads" in rejected_before_running(job)


def test_it_rejects_an_empty_grid():
    job = alices_job(module_with(""), launch=LaunchSpec(block=["256"], grid=["n - n"]))
    assert "at least 1" in rejected_before_running(job)


def test_it_rejects_a_module_that_only_mentions_the_kernel_in_a_string():
    source = module_with('NOTE = """\ndef vector_add(a, b, c):\n"""', "")
    result = run(alices_job(source)).result
    assert result.verdict == "rejected" and "no kernel named 'vector_add'" in result.message


def test_it_rejects_a_cuda_kernel_without_extern_c_and_says_so():
    source = "__global__ void vector_add(const float* a, const float* b, float* c, int n) {}\n"
    result = run(alices_job(source, "cuda")).result
    assert result.verdict == "rejected" and 'extern "C"' in result.message
