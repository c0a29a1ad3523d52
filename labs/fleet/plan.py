"""The planner's rules: whether a GPU's layout of slices can exist, and what each slice gets.

A GPU is one of: one `full` slice; MIG instances (profiles from `labs.fleet.mig_profiles`, placed on free
memory slices at a start the profile allows, at most 7 compute slices, each profile's count limit);
MPS shares (active thread percentages adding to at most 100%, pinned memory within the GPU's); or
one time-sliced slice with its replicas. `check_layout` says every reason a layout is impossible, in
words an admin can act on; `place` fills in MIG starts left blank the way `nvidia-smi mig -cgi` does
(the first free one). Pure functions of plain data: the services and the page both call them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from labs.fleet.mig_profiles import COMPUTE_SLICES, MEMORY_SLICES, GpuModel, known_models_words, model_for

KINDS = ("full", "mig", "mps", "timeslice")
MAX_REPLICAS = 32


@dataclass(frozen=True)
class SliceSpec:
    """One slice as planned, before it is saved."""

    kind: str
    pool: str
    profile: str = ""
    placement: int | None = None
    thread_percent: int | None = None
    memory_limit_mib: int | None = None
    replicas: int = 1

    @property
    def exclusive(self) -> bool:
        return self.kind in ("full", "mig")


@dataclass(frozen=True)
class SliceShare:
    """What a slice gets of its GPU, for drawings and the class model."""

    sms: float
    memory_gb: float | None  # None: shares the GPU's memory with no limit of its own
    concurrency: int  # workers serving it
    service_factor: float  # a job's time here over its time on the whole GPU (a model; see class_model)
    words: str


class LayoutError(ValueError):
    """A layout that cannot exist; `problems` says every reason."""

    def __init__(self, problems: list[str]):
        super().__init__("; ".join(problems))
        self.problems = problems


def require_model(key: str) -> GpuModel:
    """The planner's model, or a clear message naming the ones it knows."""
    model = model_for(key)
    if model is None:
        raise LayoutError([f"The planner does not know the GPU model '{key}'. It knows {known_models_words()}."])
    return model


def _mig_problems(model: GpuModel, specs: list[SliceSpec]) -> list[str]:
    problems: list[str] = []
    if not model.profiles:
        return [f"{model.label} does not support MIG."]
    used: dict[int, str] = {}
    counts: dict[str, int] = {}
    compute = 0
    for spec in specs:
        profile = model.profile(spec.profile)
        if profile is None:
            valid = ", ".join(p.name for p in model.profiles)
            problems.append(f"'{spec.profile}' is not a MIG profile of {model.label}; valid profiles: {valid}.")
            continue
        counts[profile.name] = counts.get(profile.name, 0) + 1
        compute += profile.compute_slices
        start = spec.placement
        if start is None:
            problems.append(f"{profile.name} has no free placement left (starts {_starts(profile.starts)}).")
            continue
        if start not in profile.starts:
            allowed = _starts(profile.starts)
            problems.append(f"{profile.name} cannot start at memory slice {start}; it starts at {allowed}.")
            continue
        span = range(start, start + profile.memory_slices)
        taken = sorted({used[s] for s in span if s in used})
        if taken:
            problems.append(
                f"{profile.name} at {start} needs memory slices {span.start}-{span.stop - 1}, "
                f"already used by {', '.join(taken)}."
            )
        for s in span:
            used.setdefault(s, f"{profile.name} at {start}")
    for name, count in counts.items():
        profile = model.profile(name)
        if profile and count > profile.max_count:
            problems.append(f"{model.label} holds at most {profile.max_count} × {name}; the layout has {count}.")
    if sum(c for n, c in counts.items() if n.endswith("+me")) > 1:
        problems.append("Only one +me (media engine) instance fits a GPU.")
    if compute > COMPUTE_SLICES:
        problems.append(f"The instances need {compute} compute slices; {model.label} has {COMPUTE_SLICES}.")
    return problems


def _starts(starts: tuple[int, ...]) -> str:
    return ", ".join(str(s) for s in starts)


def _mps_problems(model: GpuModel, specs: list[SliceSpec]) -> list[str]:
    problems = []
    total = 0
    memory_mib = int(model.memory_gb * 1024)
    pinned = 0
    for spec in specs:
        pct = spec.thread_percent
        if pct is None or not 1 <= pct <= 100:
            problems.append(f"An MPS share needs an active thread percentage from 1 to 100; got {pct}.")
            continue
        total += pct
        if spec.memory_limit_mib is not None:
            if spec.memory_limit_mib > memory_mib:
                problems.append(f"An MPS share pins {spec.memory_limit_mib} MiB; {model.label} has {memory_mib} MiB.")
            pinned += spec.memory_limit_mib
    if total > 100:
        shares = " + ".join(f"{s.thread_percent}%" for s in specs if s.thread_percent)
        problems.append(f"MPS shares add up to {total}% ({shares}); they may add up to at most 100%.")
    if pinned > memory_mib:
        problems.append(f"MPS memory limits add up to {pinned} MiB; {model.label} has {memory_mib} MiB.")
    return problems


def check_layout(model_key: str, specs: list[SliceSpec]) -> list[str]:
    """Every reason this layout of one GPU cannot exist; [] when it can."""
    try:
        model = require_model(model_key)
    except LayoutError as exc:
        return exc.problems
    if not specs:
        return []
    unknown = sorted({s.kind for s in specs} - set(KINDS))
    if unknown:
        return [f"Unknown slice kind(s) {', '.join(unknown)}; a slice is one of {', '.join(KINDS)}."]
    kinds = {s.kind for s in specs}
    if len(kinds) > 1:
        return [f"A GPU is cut one way: whole, MIG, MPS or time-sliced; this layout mixes {', '.join(sorted(kinds))}."]
    kind = kinds.pop()
    if kind == "full" and len(specs) > 1:
        return ["A whole-GPU slice is the GPU's only slice."]
    if kind == "timeslice":
        if len(specs) > 1:
            return ["A time-sliced GPU is one slice with several replicas; give it replicas instead."]
        if not 2 <= specs[0].replicas <= MAX_REPLICAS:
            return [f"A time-sliced GPU has 2 to {MAX_REPLICAS} replicas; got {specs[0].replicas}."]
    if kind == "mig":
        return _mig_problems(model, specs)
    if kind == "mps":
        return _mps_problems(model, specs)
    return []


def place(model_key: str, specs: list[SliceSpec]) -> list[SliceSpec]:
    """The layout with each MIG instance that has no start given one, so that all fit if any assignment does.

    Tries the instances largest first, each at its allowed starts in order (a depth-first search: at
    most 7 instances of at most 7 starts); when no assignment fits them all, as many as fit are placed
    and the rest stay blank, which `check_layout` reports.
    """
    model = model_for(model_key)
    if model is None or not model.profiles:
        return specs
    used: set[int] = set()
    for spec in specs:
        profile = model.profile(spec.profile)
        if spec.kind == "mig" and profile and spec.placement is not None:
            used |= set(range(spec.placement, spec.placement + profile.memory_slices))
    todo = sorted(
        (i for i, s in enumerate(specs) if s.kind == "mig" and s.placement is None and model.profile(s.profile)),
        key=lambda i: -model.profile(specs[i].profile).memory_slices,  # type: ignore[union-attr]
    )
    spans = {i: model.profile(specs[i].profile) for i in todo}
    best: dict[int, int] = {}

    def search(k: int, taken: set[int], chosen: dict[int, int], after: dict[str, int]) -> bool:
        nonlocal best
        if len(chosen) > len(best):
            best = dict(chosen)
        if k == len(todo):
            return len(chosen) == len(todo)
        i = todo[k]
        profile = spans[i]
        assert profile is not None
        for start in profile.starts:
            span = set(range(start, start + profile.memory_slices))
            # identical instances are interchangeable: place them in increasing order only
            if start > after.get(profile.name, -1) and not span & taken and max(span) < MEMORY_SLICES:
                chosen[i] = start
                if search(k + 1, taken | span, chosen, {**after, profile.name: start}):
                    return True
                del chosen[i]
        return search(k + 1, taken, chosen, after)  # this one left blank

    search(0, used, {}, {})
    return [replace(s, placement=best[i]) if i in best else s for i, s in enumerate(specs)]


def share(model_key: str, spec: SliceSpec) -> SliceShare:
    """What `spec` gets of its GPU: SMs, memory, how many workers serve it and how much slower a job runs there.

    The slowdown is a model, said so wherever it is shown: a job's time scales with the SMs it gets
    (MIG, MPS), and N time-sliced replicas each run 1/N of the time when all are busy.
    """
    model = require_model(model_key)
    if spec.kind == "mig":
        profile = model.profile(spec.profile)
        if profile is None:
            raise LayoutError([f"'{spec.profile}' is not a MIG profile of {model.label}."])
        words = f"{profile.name}: {profile.sms} SMs, {profile.memory_gb:g} GB, memory slices from {spec.placement}"
        return SliceShare(profile.sms, profile.memory_gb, 1, model.sms / profile.sms, words)
    if spec.kind == "mps":
        pct = spec.thread_percent or 100
        sms = model.sms * pct / 100
        memory = spec.memory_limit_mib / 1024 if spec.memory_limit_mib else None
        pinned = f"{memory:.3g} GB pinned" if memory else "memory shared, no limit"
        return SliceShare(sms, memory, 1, 100 / pct, f"MPS {pct}% of threads (≈{sms:.0f} SMs), {pinned}")
    if spec.kind == "timeslice":
        r = spec.replicas
        words = f"time-sliced ×{r}: all {model.sms} SMs, {model.memory_gb:g} GB shared, 1/{r} of the time when busy"
        return SliceShare(model.sms, model.memory_gb, r, float(r), words)
    return SliceShare(model.sms, model.memory_gb, 1, 1.0, f"whole GPU: {model.sms} SMs, {model.memory_gb:g} GB")
