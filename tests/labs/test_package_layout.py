"""labs' packages import only what their docstrings say they may, and the top folder stays small.

Every import counts, the lazy ones inside functions too: a cycle hidden in a function is still a cycle a
newcomer has to untangle. The lab content (`labs/content/`) is learners' code, not the app's, and is not read.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import labs

ROOT = Path(labs.__file__).parent
# what each part of labs may import of labs, as its package docstring says; lowest first
MAY_IMPORT: dict[str, set[str]] = {
    "__init__": set(),
    "apps": set(),
    "models": set(),
    "migrations": {"models"},
    "accounts": set(),
    "fleet": {"models"},
    "runs": {"models", "fleet"},
    "courses": {"models", "accounts", "runs"},
    "curriculum": {"models", "runs", "courses"},
    "api_input": set(),
    "openapi": {"api_input", "models"},
    "consumers": {"api_input", "models", "runs"},
    "tasks": {"runs"},
    "admin": {"models", "fleet"},
    "converters": set(),
    "routing": {"consumers", "converters"},
    "views": {"api_input", "openapi", "models", "accounts", "fleet", "runs", "courses", "curriculum"},
    "urls": {"views", "converters"},
    "management": {"accounts", "courses", "curriculum"},
}
PACKAGES = {"fleet", "runs", "courses", "curriculum"}
TOP_MODULES = {
    "__init__", "apps", "admin", "urls", "routing", "converters", "consumers", "tasks", "openapi", "api_input",
    "accounts",
}  # fmt: skip
# The web side reads gpu_worker's contract and pure modules, never the worker's service, engine or sandbox.
WORKER_ONLY = (
    "gpu_worker.worker",
    "gpu_worker.engine",
    "gpu_worker.isolation",
    "gpu_worker.backends",
    "gpu_worker.cli",
)


def _part(path: Path) -> str:
    relative = path.relative_to(ROOT).parts
    return relative[0] if len(relative) > 1 else path.stem


def _imports(path: Path) -> set[str]:
    return _imports_of(path.read_text())


def _imports_of(source: str) -> set[str]:
    """Every module a source imports, as dotted names (`from labs import runs` reads as `labs.runs`)."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found |= {node.module} | {f"{node.module}.{a.name}" for a in node.names if node.module == "labs"}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
    return found


def _labs_parts(imports: set[str]) -> set[str]:
    """The parts of labs a file's imports reach (`labs` alone, the package face, is no part)."""
    return {name.split(".")[1] for name in imports if name.startswith("labs.")}


def _allowed(part: str, target: str) -> bool:
    return target == part or target in MAY_IMPORT[part]


FILES = sorted(p for p in ROOT.rglob("*.py") if "content" not in p.relative_to(ROOT).parts)


def test_the_top_folder_holds_a_dozen_modules_at_most():
    top = {p.stem for p in ROOT.glob("*.py")}
    assert top == TOP_MODULES and len(top) <= 12


def test_every_part_is_in_the_table():
    assert {_part(p) for p in FILES} <= set(MAY_IMPORT)


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_module_imports_only_what_its_part_may(path: Path):
    part = _part(path)
    wrong = sorted(t for t in _labs_parts(_imports(path)) if not _allowed(part, t))
    assert not wrong, (
        f"labs/{path.relative_to(ROOT)} ({part}) imports {wrong}; {part} may import {sorted(MAY_IMPORT[part])}"
    )


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_app_imports_neither_the_project_nor_the_workers_insides(path: Path):
    imports = _imports(path)
    wrong = sorted(i for i in imports if i.split(".")[0] == "labsite" or i.startswith(WORKER_ONLY))
    assert not wrong, f"labs/{path.relative_to(ROOT)} imports {wrong}"


def test_the_layout_check_catches_a_wrong_way_import():
    assert not _allowed("fleet", "runs") and not _allowed("runs", "courses") and not _allowed("courses", "curriculum")
    assert not _allowed("models", "runs") and not _allowed("accounts", "courses")
    assert _allowed("curriculum", "runs") and _allowed("views", "curriculum") and _allowed("runs", "runs")
    source = "def f():\n    from labs.courses import grading\n"
    assert _labs_parts(_imports_of(source)) == {"courses"}
    assert _labs_parts(_imports_of("from labs import runs, fleet\n")) == {"runs", "fleet"}


def test_the_parts_are_layered_with_no_loop():
    order = list(MAY_IMPORT)
    for part, allowed in MAY_IMPORT.items():
        assert all(order.index(a) < order.index(part) for a in allowed), f"{part} may import a part above it"


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_each_package_says_what_it_owns_and_may_import(package: str):
    doc = ast.get_docstring(ast.parse((ROOT / package / "__init__.py").read_text())) or ""
    assert "owns" in doc and "may import" in doc.lower() and len(doc) > 200, (
        f"labs/{package}/__init__.py: say what it owns and may import"
    )
