"""Lab folders on disk: `lab.yaml` validated into typed models, with its files.

A lab is a folder `labs/content/<module>/<exercise>/` holding `lab.yaml`,
`README.md`, `starter.<ext>`, `reference.<ext>` per language and
`tests/<case>/` (a `submission.<ext>` and an `expected.yaml` with its verdict).
Each reference is a sample case too (`reference-<language>`): it must be accepted,
except CUDA C++ on the simulator, which compiles it but cannot run it, and it must
meet the lab's goals. A case's `expected.yaml` may say `goals_met: false` (a
correct but slow sample) or `true`, or one per backend (`{sim: false, cuda: true}`: a
sample the simulator's trace fails and the GPU's clock cannot tell from the reference);
it is checked on each backend that judges one of the lab's goals (`gpu_worker.exercise.goals`).
A module folder carries `module.yaml` and, optionally, `lesson.md` (its lesson page,
rendered by the web side's `labs.curriculum.lessons`). Both the web app (`sync_labs`) and the
worker's command line read labs through this module; a bad folder fails naming
the file and the field.
"""

from __future__ import annotations

import os
import uuid as uuid_lib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from gpu_worker.exercise.formula import FormulaError, check_formula
from gpu_worker.exercise.goals import BACKENDS as GOAL_BACKENDS
from gpu_worker.protocol import (
    SOURCE_SUFFIX,
    VERDICTS,
    Backend,
    ExerciseRef,
    GoalSpec,
    Harness,
    Language,
    Limits,
    Verdict,
)

CONTENT_ENV = "WARPLAB_CONTENT_DIR"


class LabError(ValueError):
    """A lab folder that cannot be loaded; the message names the file and the field."""


class ModuleSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    number: int = Field(ge=1)
    slug: str
    title: str
    summary: str = ""
    lesson: str = ""  # lesson.md beside module.yaml, Markdown with `{{figure:name}}` lines


class LabSpec(Harness):
    """`lab.yaml`: metadata plus the harness."""

    model_config = ConfigDict(extra="forbid")

    uuid: uuid_lib.UUID
    slug: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    title: str
    version: int = Field(ge=1)
    order: int = 0
    languages: list[Language] = Field(min_length=1)
    entry: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    summary: str = ""
    limits: Limits = Field(default_factory=Limits)
    pool: str | None = None

    @model_validator(mode="after")
    def _one_kind(self) -> LabSpec:
        """A policy lab (language `policy`) has a `policy` block and no kernel fields, a function lab (language
        `function`) a `function` block and none either; a kernel lab the reverse."""
        for kind in ("policy", "function"):
            other = "function" if kind == "policy" else "policy"
            if kind in self.languages:
                if self.languages != [kind] or getattr(self, kind) is None or getattr(self, other) is not None:
                    raise ValueError(f"a {kind} lab has languages [{kind}] and a '{kind}' block")
                break
        else:
            missing = [f for f in ("sizes", "args", "launch", "expected", "work") if f not in self.model_fields_set]
            if missing or self.policy is not None or self.function is not None:
                raise ValueError(
                    f"a kernel lab needs {', '.join(missing)}"
                    if missing
                    else "'policy' and 'function' are for policy and function labs"
                )
        if ("triton" in self.languages) != (self.triton is not None):
            raise ValueError("a lab offering triton says how to launch it in a 'triton' block, and only such a lab")
        return self

    def harness(self) -> Harness:
        return Harness.model_validate(self.model_dump(include=set(Harness.model_fields)))


@dataclass
class SampleCase:
    """A submission shipped with the lab and the verdict it must get."""

    name: str
    language: Language
    source: str
    verdict: Verdict
    by_backend: dict[str, Verdict] = field(default_factory=dict)
    goals_met: bool | dict[str, bool] | None = None  # None: says nothing; a mapping: per backend

    def verdict_on(self, backend: str) -> Verdict:
        """The verdict this case must get on a backend (`by_backend` where one differs from `verdict`)."""
        return self.by_backend.get(backend, self.verdict)

    def goals_met_on(self, backend: str, goals: Sequence[GoalSpec]) -> bool | None:
        """Whether an accepted run of this case must meet the goals on `backend`; None: not checked there."""
        wanted = self.goals_met.get(backend) if isinstance(self.goals_met, dict) else self.goals_met
        if wanted is None or self.verdict_on(backend) != "accepted":
            return None
        judged = [g for g in goals if backend in GOAL_BACKENDS[g.metric]]
        return wanted if judged else None


@dataclass
class Lab:
    folder: Path
    module: ModuleSpec
    spec: LabSpec
    statement: str
    starters: dict[str, str]
    references: dict[str, str]
    cases: list[SampleCase] = field(default_factory=list)

    def exercise_ref(self, language: str) -> ExerciseRef:
        """The exercise part of a job for one language."""
        return ExerciseRef(
            slug=self.spec.slug,
            language=language,  # type: ignore[arg-type]
            entry=self.spec.entry,
            harness=self.spec.harness(),
            limits=self.spec.limits,
            version=self.spec.version,
        )


def default_content_dir() -> Path:
    """`$WARPLAB_CONTENT_DIR`, else `labs/content` beside this package."""
    env = os.environ.get(CONTENT_ENV)
    return Path(env) if env else Path(__file__).resolve().parents[2] / "labs" / "content"


def _read_yaml(path: Path) -> dict:
    try:
        data = yaml.safe_load(path.read_text())
    except FileNotFoundError:
        raise LabError(f"{path}: file is missing") from None
    except yaml.YAMLError as exc:
        raise LabError(f"{path}: not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise LabError(f"{path}: expected a mapping at the top level")
    return data


def _validation_message(path: Path, exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "(top level)"
        parts.append(f"field '{where}': {err['msg']}")
    return f"{path}: " + "; ".join(parts)


def load_module(folder: Path) -> ModuleSpec:
    path = folder / "module.yaml"
    data = _read_yaml(path)
    if "lesson" in data:
        raise LabError(f"{path}: field 'lesson': write the lesson in lesson.md beside module.yaml")
    lesson = folder / "lesson.md"
    try:
        spec = ModuleSpec.model_validate(data)
    except ValidationError as exc:
        raise LabError(_validation_message(path, exc)) from None
    return spec.model_copy(update={"lesson": lesson.read_text()}) if lesson.exists() else spec


def _check_formulas(path: Path, spec: LabSpec) -> None:
    for backend, size_sets in spec.sizes.items():
        for sizes in size_sets:
            names = set(sizes)
            formulas = [("work.bytes", spec.work.bytes), ("work.flops", spec.work.flops)]
            formulas += [(f"launch.block[{i}]", f) for i, f in enumerate(spec.launch.block)]
            formulas += [(f"launch.grid[{i}]", f) for i, f in enumerate(spec.launch.grid)]
            formulas.append(("launch.dynamic_shared_bytes", spec.launch.dynamic_shared_bytes))
            if spec.triton is not None:
                formulas += [(f"triton.grid[{i}]", f) for i, f in enumerate(spec.triton.grid)]
            if spec.sweep is not None:
                formulas += [("sweep.x", spec.sweep.x), ("sweep.per", spec.sweep.per)]
            if spec.launch_choices is not None:
                for i, f in enumerate(spec.launch_choices.grid):
                    try:
                        check_formula(f, names | {"block"})
                    except FormulaError as exc:
                        raise LabError(f"{path}: field 'launch_choices.grid[{i}]' (sizes.{backend}): {exc}") from None
            for arg in spec.args:
                formulas += [(f"args.{arg.name}.shape", s) for s in arg.shape]
                if arg.value is not None:
                    formulas.append((f"args.{arg.name}.value", arg.value))
            for where, text in formulas:
                try:
                    check_formula(str(text), names)
                except FormulaError as exc:
                    raise LabError(f"{path}: field '{where}' (sizes.{backend}): {exc}") from None
    gpu_sizes = len(spec.sizes.get("cuda") or [])
    for i, goal in enumerate(spec.goals):
        if goal.size is not None and (goal.metric != "roof_percent" or goal.size >= gpu_sizes):
            raise LabError(
                f"{path}: field 'goals[{i}].size': {goal.size} names none of the {gpu_sizes} GPU sizes"
                if goal.metric == "roof_percent"
                else f"{path}: field 'goals[{i}].size': only a roof_percent goal reads one size"
            )
    arrays = {a.name for a in spec.args}
    for out, text in spec.expected.items():
        if out not in {a.name for a in spec.outputs()}:
            raise LabError(f"{path}: field 'expected.{out}': no output argument of that name")
        try:
            check_formula(text, arrays | {n for s in spec.sizes.values() for d in s for n in d}, allow_numpy=True)
        except FormulaError as exc:
            raise LabError(f"{path}: field 'expected.{out}': {exc}") from None


def _read_sources(folder: Path, stem: str, languages: Sequence[str], required: bool) -> dict[str, str]:
    found = {}
    for language in languages:
        path = folder / f"{stem}{SOURCE_SUFFIX[language]}"
        if path.exists():
            found[language] = path.read_text()
        elif required:
            raise LabError(f"{path}: file is missing (the lab lists language '{language}')")
    return found


def _read_cases(folder: Path, languages: Sequence[str]) -> list[SampleCase]:
    cases = []
    tests = folder / "tests"
    for case_dir in sorted(p for p in tests.iterdir() if p.is_dir()) if tests.is_dir() else []:
        expected_path = case_dir / "expected.yaml"
        expected = _read_yaml(expected_path)
        verdict, by_backend = expected.get("verdict"), expected.get("by_backend") or {}
        for where, value in [("verdict", verdict), *((f"by_backend.{k}", v) for k, v in by_backend.items())]:
            if value not in VERDICTS:
                raise LabError(f"{expected_path}: field '{where}': {value!r} is not a verdict")
        goals_met = expected.get("goals_met")
        by_backend_goals = goals_met.items() if isinstance(goals_met, dict) else [("", goals_met)]
        for backend, met in by_backend_goals:
            if met not in (None, True, False) or (backend and backend not in Backend.__args__):  # type: ignore[attr-defined]
                raise LabError(f"{expected_path}: field 'goals_met': {goals_met!r} is not true, false or per backend")
        sources = [p for p in case_dir.iterdir() if p.name.startswith("submission.")]
        if len(sources) != 1:
            raise LabError(f"{case_dir}: expected exactly one submission.py, submission.triton.py or submission.cu")
        suffix = sources[0].name.removeprefix("submission")
        offered = [lang for lang in languages if SOURCE_SUFFIX[lang] == suffix]
        language = offered[0] if offered else None  # .py is numba's, policy's or function's: a lab offers one
        if language is None:
            raise LabError(f"{sources[0]}: the lab offers no language written in {suffix} files")
        source = sources[0].read_text()
        cases.append(SampleCase(case_dir.name, language, source, verdict, by_backend, goals_met))  # type: ignore[arg-type]
    return cases


def _reference_cases(references: dict[str, str]) -> list[SampleCase]:
    return [
        SampleCase(
            f"reference-{language}",
            language,  # type: ignore[arg-type]
            source,
            "accepted",
            {},
            goals_met=True,
        )
        for language, source in sorted(references.items())
    ]


def load_lab(folder: Path, module: ModuleSpec | None = None) -> Lab:
    """Load and validate one lab folder."""
    folder = Path(folder)
    path = folder / "lab.yaml"
    try:
        spec = LabSpec.model_validate(_read_yaml(path))
    except ValidationError as exc:
        raise LabError(_validation_message(path, exc)) from None
    if spec.slug != folder.name:
        raise LabError(f"{path}: field 'slug': {spec.slug!r} must match the folder name {folder.name!r}")
    _check_formulas(path, spec)
    if spec.limits.gpus > 1 and not spec.pool:
        raise LabError(
            f"{path}: field 'pool': a lab with limits.gpus {spec.limits.gpus} must name the pool (queue) whose "
            "workers own that many GPUs"
        )
    statement_path = folder / "README.md"
    if not statement_path.exists():
        raise LabError(f"{statement_path}: file is missing")
    references = _read_sources(folder, "reference", spec.languages, required=True)
    return Lab(
        folder=folder,
        module=module or load_module(folder.parent),
        spec=spec,
        statement=statement_path.read_text(),
        starters=_read_sources(folder, "starter", spec.languages, required=True),
        references=references,
        cases=_reference_cases(references) + _read_cases(folder, spec.languages),
    )


def load_all(content_dir: Path | None = None) -> tuple[list[ModuleSpec], list[Lab]]:
    """Every module and lab under the content folder, in order."""
    root = Path(content_dir or default_content_dir())
    modules, labs = [], []
    for module_dir in sorted(p for p in root.iterdir() if (p / "module.yaml").exists()):
        module = load_module(module_dir)
        modules.append(module)
        for lab_dir in sorted(p for p in module_dir.iterdir() if (p / "lab.yaml").exists()):
            labs.append(load_lab(lab_dir, module))
    slugs = [lab.spec.slug for lab in labs]
    dupes = {s for s in slugs if slugs.count(s) > 1}
    if dupes:
        raise LabError(f"{root}: lab slugs are not unique: {', '.join(sorted(dupes))}")
    return sorted(modules, key=lambda m: m.number), labs


def find_lab(slug: str, content_dir: Path | None = None) -> Lab:
    """The lab with this slug, for the command line."""
    for lab in load_all(content_dir)[1]:
        if lab.spec.slug == slug:
            return lab
    raise LabError(f"no lab with slug {slug!r} under {content_dir or default_content_dir()}")
