"""The planner accepts the MIG layouts NVIDIA's guide allows and names the reason for every other."""

from __future__ import annotations

import pytest

from labs.fleet.mig_profiles import MODELS, model_for
from labs.fleet.plan import SliceSpec, check_layout, place, share


def mig(profile: str, at: int | None = None, pool: str = "h200.mig") -> SliceSpec:
    return SliceSpec(kind="mig", pool=pool, profile=profile, placement=at)


def mps(pct: int, mib: int | None = None) -> SliceSpec:
    return SliceSpec(kind="mps", pool="h200.mps", thread_percent=pct, memory_limit_mib=mib)


def test_the_h200_has_the_guides_seven_profiles_with_their_sms_and_starts():
    h200 = model_for("NVIDIA H200")
    assert h200 is not None and h200.key == "h200-141gb"
    table = {p.name: (p.compute_slices, p.memory_slices, p.sms, p.max_count, p.starts) for p in h200.profiles}
    assert table == {
        "1g.18gb": (1, 1, 16, 7, (0, 1, 2, 3, 4, 5, 6)),
        "1g.18gb+me": (1, 1, 16, 1, (0, 1, 2, 3, 4, 5, 6)),
        "1g.35gb": (1, 2, 26, 4, (0, 2, 4, 6)),
        "2g.35gb": (2, 2, 32, 3, (0, 2, 4)),
        "3g.71gb": (3, 4, 60, 2, (0, 4)),
        "4g.71gb": (4, 4, 64, 1, (0,)),
        "7g.141gb": (7, 8, 132, 1, (0,)),
    }


def test_every_known_gpu_takes_seven_1g_instances_and_one_whole_instance():
    for model in MODELS:
        smallest, whole = model.profiles[0], model.profiles[-1]
        assert check_layout(model.key, [mig(smallest.name, i) for i in range(7)]) == [], model.key
        assert check_layout(model.key, [mig(whole.name, 0)]) == [], model.key
    assert model_for("a100-40gb").profiles[0].name == "1g.5gb"
    assert model_for("h100-94gb").profiles[-1].name == "7g.94gb"


def test_a_4g_and_a_3g_share_an_h200_and_two_3g_do_too():
    assert check_layout("h200-141gb", [mig("4g.71gb", 0), mig("3g.71gb", 4)]) == []
    assert check_layout("h200-141gb", [mig("3g.71gb", 0), mig("3g.71gb", 4)]) == []


def test_an_overlapping_instance_is_refused_naming_the_one_in_its_way():
    problems = check_layout("h200-141gb", [mig("3g.71gb", 0), mig("2g.35gb", 2)])
    assert problems == ["2g.35gb at 2 needs memory slices 2-3, already used by 3g.71gb at 0."]


def test_a_start_the_profile_does_not_allow_is_refused_with_the_allowed_ones():
    assert check_layout("h200-141gb", [mig("3g.71gb", 2)]) == [
        "3g.71gb cannot start at memory slice 2; it starts at 0, 4."
    ]


def test_more_compute_slices_than_seven_are_refused():
    layout = place("h200-141gb", [mig("4g.71gb"), mig("2g.35gb"), mig("2g.35gb")])
    problems = check_layout("h200-141gb", layout)
    assert "The instances need 8 compute slices; NVIDIA H200 141GB has 7." in problems


def test_an_eighth_1g_has_no_placement_left():
    layout = place("h200-141gb", [mig("1g.18gb") for _ in range(8)])
    problems = check_layout("h200-141gb", layout)
    assert "1g.18gb has no free placement left (starts 0, 1, 2, 3, 4, 5, 6)." in problems
    assert "NVIDIA H200 141GB holds at most 7 × 1g.18gb; the layout has 8." in problems


def test_blank_starts_are_placed_largest_first_each_at_its_first_free_start():
    layout = place("h200-141gb", [mig("1g.18gb"), mig("3g.71gb"), mig("2g.35gb")])
    assert [s.placement for s in layout] == [6, 0, 4]
    assert check_layout("h200-141gb", layout) == []


def test_a_profile_of_another_gpu_is_refused_listing_this_ones():
    (problem,) = check_layout("a100-40gb", [mig("3g.71gb", 0)])
    assert problem.startswith("'3g.71gb' is not a MIG profile of NVIDIA A100 40GB; valid profiles: 1g.5gb,")


def test_two_media_engine_instances_are_refused():
    assert "Only one +me (media engine) instance fits a GPU." in check_layout(
        "h200-141gb", [mig("1g.18gb+me", 0), mig("1g.18gb+me", 1)]
    )


def test_mps_shares_may_add_to_100_percent_and_no_more():
    assert check_layout("h200-141gb", [mps(30), mps(70)]) == []
    assert check_layout("h200-141gb", [mps(60), mps(50)]) == [
        "MPS shares add up to 110% (60% + 50%); they may add up to at most 100%."
    ]
    zero = check_layout("h200-141gb", [mps(0)])
    assert "An MPS share needs an active thread percentage from 1 to 100; got 0." in zero


def test_mps_memory_limits_beyond_the_gpu_are_refused():
    problems = check_layout("h200-141gb", [mps(50, 100_000), mps(50, 100_000)])
    assert problems == ["MPS memory limits add up to 200000 MiB; NVIDIA H200 141GB has 144384 MiB."]


def test_an_unknown_gpu_model_is_named_with_the_ones_the_planner_knows():
    (problem,) = check_layout("rtx-4090", [SliceSpec(kind="full", pool="x")])
    assert problem.startswith("The planner does not know the GPU model 'rtx-4090'. It knows NVIDIA A100 40GB")


@pytest.mark.parametrize(
    ("layout", "reason"),
    [
        ([SliceSpec(kind="full", pool="a"), mps(50)], "A GPU is cut one way: whole, MIG, MPS or time-sliced"),
        ([SliceSpec(kind="full", pool="a"), SliceSpec(kind="full", pool="b")], "A whole-GPU slice is the GPU's only"),
        ([SliceSpec(kind="timeslice", pool="t", replicas=1)], "A time-sliced GPU has 2 to 32 replicas; got 1."),
    ],
)
def test_mixed_or_malformed_layouts_are_refused(layout, reason):
    (problem,) = check_layout("h200-141gb", layout)
    assert problem.startswith(reason)


def test_each_slice_says_what_it_gets_of_the_gpu():
    assert share("h200-141gb", mig("3g.71gb", 4)).sms == 60
    assert share("h200-141gb", mig("3g.71gb", 4)).service_factor == pytest.approx(132 / 60)
    assert share("h200-141gb", mps(25)).sms == pytest.approx(33)
    ts = share("h200-141gb", SliceSpec(kind="timeslice", pool="t", replicas=4))
    assert ts.concurrency == 4 and ts.service_factor == 4
