"""Ada lays out a GPU on the planner page, is told why an impossible layout cannot exist, and downloads its files."""

from __future__ import annotations

import pytest
import yaml

from labs.models import Gpu, Worker
from tests.labs.factories import client_for
from tests.labs.fleet.factories import h200_node

pytestmark = pytest.mark.django_db


def _post(client, **data):
    return client.post("/fleet/plan/", data)


def test_ada_adds_a_node_and_an_h200_and_cuts_it_into_mig_instances(ada):
    client = client_for(ada)
    assert _post(client, action="add-node", name="lab1", hostname="lab1.school").status_code == 302
    assert _post(client, action="add-gpu", node="lab1", index=0, model="NVIDIA H200", uuid="").status_code == 302
    gpu = Gpu.objects.get(node__name="lab1", index=0)
    layout = "mig 3g.71gb h200.mig3g\nmig 2g.35gb h200.mig2g\nmig 2g.35gb h200.mig2g  # two graded slices"
    assert _post(client, action="layout", gpu=gpu.pk, layout=layout).status_code == 302
    assert sorted(Worker.objects.values_list("name", flat=True)) == [
        "gpu.h200.mig2g@lab1-gpu0-s1",
        "gpu.h200.mig2g@lab1-gpu0-s2",
        "gpu.h200.mig3g@lab1-gpu0-s0",
    ]
    page = client.get("/fleet/plan/").content.decode()
    assert "<svg" in page and "3g.71gb" in page and "60 SMs · 71 GB" in page and "32 SMs · 35 GB" in page
    assert "mig 3g.71gb@4 h200.mig3g" in page  # placed where all three fit
    assert "Exclusive (graded and practice)" in page


def test_an_impossible_layout_is_shown_again_with_every_reason_and_nothing_saved(ada):
    node = h200_node()
    gpu = node.gpus.get(index=1)
    before = list(Worker.objects.values_list("name", flat=True))
    response = _post(client_for(ada), action="layout", gpu=gpu.pk, layout="mps 60% h200.a\nmps 50% h200.b")
    assert response.status_code == 422
    assert "MPS shares add up to 110% (60% + 50%); they may add up to at most 100%." in response.content.decode()
    assert list(Worker.objects.values_list("name", flat=True)) == before
    bad = _post(client_for(ada), action="layout", gpu=gpu.pk, layout="mig 3g.71gb@2 h200.m\nslice it please")
    text = bad.content.decode()
    assert "line 2: &#x27;slice it please&#x27; is not a slice" in text


def test_an_unknown_gpu_model_is_refused_naming_the_known_ones(ada):
    client = client_for(ada)
    _post(client, action="add-node", name="lab2", hostname="")
    response = _post(client, action="add-gpu", node="lab2", index=0, model="GeForce RTX 4090", uuid="")
    assert response.status_code == 200
    words = "does not know the GPU model &#x27;GeForce RTX 4090&#x27;. It knows NVIDIA A100 40GB"
    assert words in response.content.decode()
    assert not Gpu.objects.filter(node__name="lab2").exists()


def test_the_class_model_says_concurrent_graded_runs_and_the_wait_and_that_it_is_a_model(ada):
    h200_node()
    page = client_for(ada).get("/fleet/plan/?per_minute=15&job_seconds=2").content.decode()
    graded = page.split('id="lane-graded"')[1].split("</li>")[0]
    assert "3 concurrent runs" in graded and "M/M/c queue (Erlang C)" in graded and "mean wait" in graded
    swamped = client_for(ada).get("/fleet/plan/?per_minute=600&job_seconds=2").content.decode()
    assert "the queue grows without bound" in swamped.split('id="lane-graded"')[1].split("</li>")[0]


def test_ada_downloads_each_checked_export(ada):
    h200_node()
    client = client_for(ada)
    response = client.get("/fleet/plan/export/node1/mig-parted/")
    assert response.status_code == 200 and response["Content-Disposition"].endswith('node1-mig-parted.yaml"')
    assert yaml.safe_load(response.content)["version"] == "v1"
    assert response["X-WarpLab-Checked-By"].startswith("typed after mig-parted")
    k8s = client.get("/fleet/plan/export/kubernetes/")
    assert k8s.status_code == 200 and b"nvidia.com/mig-3g.71gb" in k8s.content
    assert client.get("/fleet/plan/export/node1/nonsense/").status_code == 404


@pytest.mark.parametrize("url", ["/fleet/plan/", "/fleet/dashboard/", "/fleet/plan/export/kubernetes/"])
def test_the_planner_and_dashboard_are_for_admins_only(url, alice, ian):
    assert client_for(alice).get(url).status_code == 403
    assert client_for(ian).get(url).status_code == 403  # staff, not admin
