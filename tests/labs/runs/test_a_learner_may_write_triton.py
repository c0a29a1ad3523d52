"""Vector add and online softmax offer Triton beside CUDA Python and CUDA C++, with its starter in the editor."""

from __future__ import annotations

import json
import re

from labs.models import Submission
from labs.runs import services
from tests.labs.factories import client_for


def test_the_exercise_page_offers_triton_with_its_starter(alice, labs_loaded):
    page = client_for(alice).get("/exercises/vector-add/").content.decode()
    assert '<option value="triton">Triton</option>' in page
    data = json.loads(re.search(r'id="exercise-data"[^>]*>(.*?)</script>', page, re.S).group(1))
    assert "triton" in data["languages"] and "@triton.jit" in json.dumps(data)


def test_a_triton_run_is_saved_and_goes_to_the_simulators_queue_when_no_gpu_serves(alice, labs_loaded):
    run = services.submit_run(alice, "softmax-online", "triton", "import triton\n")
    saved = Submission.objects.get(pk=run.pk)
    assert saved.language == "triton" and saved.queue == "sim"
    assert services.build_job(saved).exercise.harness.triton.constexprs == {"BLOCK": 128}
