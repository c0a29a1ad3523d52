"""Without bubblewrap the job runs in unshare's network and PID namespaces and says so, or refuses plainly."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest
from engine_factories import alices_job, module_with, run

from gpu_worker.isolation import sandbox

PYTHON_VISIBLE = all(sandbox.everyone_can_read(Path(p)) for p in (sys.base_prefix, sys.prefix, sandbox.PACKAGE_DIR))
needs_root_and_unshare = pytest.mark.skipif(
    shutil.which("unshare") is None or os.geteuid() != 0, reason="needs unshare, run as root"
)
PROBE = """
    import os, socket
    print("uid", os.getuid())
    try:
        socket.create_connection(("8.8.8.8", 53), timeout=3)
        print("CONNECTED")
    except OSError as exc:
        print("could not connect:", exc)
"""


@pytest.fixture
def no_bwrap(monkeypatch):
    monkeypatch.setattr(sandbox, "find_bwrap", lambda: None)


@needs_root_and_unshare
@pytest.mark.skipif(not PYTHON_VISIBLE, reason="Python here is where uid 65534 cannot read it (e.g. under /root)")
def test_without_bwrap_it_falls_back_to_unshare_and_says_so(no_bwrap):
    result = run(alices_job(module_with(PROBE))).result
    assert result.verdict == "accepted", result.message
    assert result.sandbox["tool"] == "unshare" and "bwrap" in result.sandbox["warning"]
    assert result.sandbox["network"] is False and "no filesystem isolation" in result.sandbox["filesystem"]
    assert "uid 65534" in result.output and "could not connect" in result.output and "CONNECTED" not in result.output


@needs_root_and_unshare
@pytest.mark.skipif(PYTHON_VISIBLE, reason="Python here is readable by uid 65534")
def test_without_bwrap_and_with_python_out_of_nobodys_reach_it_refuses_plainly(no_bwrap):
    outcome = run(alices_job(module_with(PROBE)))
    assert outcome.result.verdict == "error" and "install bubblewrap" in outcome.result.message
    assert [e.type for e in outcome.events] == ["started", "error"]
