"""CUDA's UUID bytes as NVML spells them, and a UUID that CuPy cut at a zero byte recognised as unusable."""

from gpu_worker.measurement.device_info import format_uuid


def test_sixteen_bytes_read_as_nvml_prints_them():
    raw = bytes.fromhex("08e26d66da76cab292d577fe00a1b2c3")
    assert format_uuid(raw) == "GPU-08e26d66-da76-cab2-92d5-77fe00a1b2c3"


def test_a_uuid_cut_at_its_first_zero_byte_names_no_gpu():
    assert format_uuid(bytes.fromhex("08e26d66da76cab292d577fe")) is None  # run 14's H200, 12 of 16 bytes


def test_a_uuid_given_as_text_keeps_its_prefix():
    assert format_uuid("MIG-1234") == "MIG-1234" and format_uuid("abcd") == "GPU-abcd"
