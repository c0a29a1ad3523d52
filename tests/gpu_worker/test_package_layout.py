"""gpu_worker's packages import only what their docstrings say they may, and the top folder stays small.

Every import counts, the lazy ones inside functions too: a cycle hidden in a function is still a
cycle a newcomer has to untangle.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import gpu_worker

ROOT = Path(gpu_worker.__file__).parent
BASE = {"protocol", "settings"}
BELOW_ISOLATION = {"backends", "ptx", "measurement", "science", "exercise", *BASE}
# what each part of gpu_worker may import of gpu_worker, as its package docstring says
MAY_IMPORT: dict[str, set[str]] = {
    "protocol": set(),  # the contract: a scheduling policy's settings and the heartbeat document live in it
    "settings": set(),
    "exercise": {"protocol"},
    "science": {"exercise", "protocol"},
    "figures": {"science", "exercise", "protocol"},
    "measurement": {"science", "exercise", *BASE},
    "ptx": {"science", "protocol"},
    "backends": {"ptx", "measurement", "science", "exercise", *BASE},
    "isolation": BELOW_ISOLATION,
    "multigpu": set(),
    "datacenter": {"isolation", *BELOW_ISOLATION},
    "answers": {"isolation", *BELOW_ISOLATION},
    "profiling": {"isolation", *BELOW_ISOLATION},
    "engine": {"profiling", "isolation", "datacenter", "answers", "figures", *BELOW_ISOLATION},
    "worker": {"engine", "profiling", "isolation", "datacenter", "figures", *BELOW_ISOLATION},
    "occupancy_cli": {"science"},
    "cli": {"worker", "engine", "occupancy_cli", "profiling", "isolation", "figures", *BELOW_ISOLATION},
    "__main__": {"cli"},
    "__init__": set(),
}
TOP_MODULES = {"__init__", "__main__", "profiling", "protocol", "settings", "cli", "occupancy_cli"}


def _part(path: Path) -> str:
    relative = path.relative_to(ROOT).parts
    return relative[0] if len(relative) > 1 else path.stem


def _imports(path: Path) -> set[str]:
    """The gpu_worker modules a file imports, as dotted names below `gpu_worker`."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "gpu_worker":
            base = node.module.removeprefix("gpu_worker").lstrip(".")
            found |= {f"{base}.{a.name}".lstrip(".") for a in node.names} if not base else {base}
        elif isinstance(node, ast.Import):
            found |= {a.name.removeprefix("gpu_worker.") for a in node.names if a.name.startswith("gpu_worker.")}
    return found


def _allowed(part: str, target: str) -> bool:
    allowed = MAY_IMPORT[part]
    return target.split(".")[0] in {part, *allowed} or any(target.startswith(a + ".") or target == a for a in allowed)


FILES = sorted(ROOT.rglob("*.py"))


def test_the_top_folder_holds_only_the_entry_points():
    assert {p.stem for p in ROOT.glob("*.py")} == TOP_MODULES


def test_every_part_is_in_the_table():
    assert {_part(p) for p in FILES} <= set(MAY_IMPORT)


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_module_imports_only_what_its_package_may(path: Path):
    part = _part(path)
    wrong = sorted(t for t in _imports(path) if not _allowed(part, t))
    assert not wrong, f"{path.relative_to(ROOT)} ({part}) imports {wrong}; {part} may import {sorted(MAY_IMPORT[part])}"


def test_the_layout_check_catches_an_upward_import():
    assert not _allowed("exercise", "measurement.timing")
    assert not _allowed("measurement", "isolation.sandbox")
    assert _allowed("isolation", "measurement.timing") and _allowed("datacenter", "protocol")
    assert not _allowed("protocol", "datacenter.spec") and not _allowed("backends", "worker.heartbeat")


@pytest.mark.parametrize("package", sorted(p.parent.name for p in ROOT.glob("*/__init__.py")))
def test_each_package_says_what_it_owns_and_may_import(package: str):
    doc = ast.get_docstring(ast.parse((ROOT / package / "__init__.py").read_text())) or ""
    assert "import" in doc.lower() and len(doc) > 200, (
        f"gpu_worker/{package}/__init__.py: say what it owns and may import"
    )


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_nothing_of_gpu_worker_imports_the_web_side_or_django(path: Path):
    tree = ast.parse(path.read_text())
    names = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    names |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module and not n.level}
    wrong = sorted(n for n in names if n.split(".")[0] in ("labs", "labsite", "django", "channels"))
    assert not wrong, f"gpu_worker/{path.relative_to(ROOT)} imports {wrong}: the execution service holds no Django"
