"""On the GPU: the worker's facts name the same GPU as NVML, so its calibration is found again (run 14)."""

import pytest

from gpu_worker.measurement import calibrate
from gpu_worker.measurement.device_info import device_facts
from gpu_worker.measurement.gpu_lock import worker_gpu_uuid

pytestmark = pytest.mark.gpu


def test_cuda_and_nvml_agree_on_the_uuid_and_the_calibration_cache_is_found(tmp_path):
    facts = device_facts()
    assert facts.uuid == worker_gpu_uuid() and len(facts.uuid) == len("GPU-") + 36
    path = calibrate.cache_path(facts, str(tmp_path))
    path.parent.mkdir(parents=True)
    path.write_text('{"ceilings": {}}')
    assert calibrate.find_cached(directory=str(tmp_path)) == {"ceilings": {}}
