"""Is bubblewrap usable on this machine, does a child under it see no network and still see the GPU?

Looks for `bwrap` on PATH, else unpacks the carried Debian packages (`.deb/*.deb`)
under /tmp/warplab-bwrap and uses that binary with its libraries.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
UNPACK = Path("/tmp/warplab-bwrap")

CHILD = (
    "import socket,os,json;r={}\n"
    "try:\n socket.create_connection(('1.1.1.1',53),timeout=2);r['net']='CONNECTED'\n"
    "except Exception as e:\n r['net']=type(e).__name__+': '+str(e)[:60]\n"
    "r['ifaces']=sorted(os.listdir('/sys/class/net')) if os.path.isdir('/sys/class/net') else None\n"
    "r['tmp']=os.listdir('/tmp');r['pid']=os.getpid()\n"
    "try:\n import cupy as cp;r['gpus']=cp.cuda.runtime.getDeviceCount();"
    "a=cp.arange(10);r['gpu_sum']=int(a.sum())\n"
    "except Exception as e:\n r['gpu']=repr(e)[:120]\n"
    "print(json.dumps(r))"
)


def find_bwrap() -> tuple[str | None, dict[str, str], str]:
    path = shutil.which("bwrap")
    if path:
        return path, {}, "on PATH"
    debs = sorted(glob.glob(str(ROOT / ".deb" / "*.deb")))
    if not debs:
        return None, {}, "no bwrap and no carried .deb"
    UNPACK.mkdir(parents=True, exist_ok=True)
    for deb in debs:
        subprocess.run(["dpkg", "-x", deb, str(UNPACK)], check=True)
    libdirs = [str(p) for p in (UNPACK / "lib/x86_64-linux-gnu", UNPACK / "usr/lib/x86_64-linux-gnu") if p.is_dir()]
    return str(UNPACK / "usr/bin/bwrap"), {"LD_LIBRARY_PATH": ":".join(libdirs)}, "unpacked from carried .deb"


def probe() -> dict[str, Any]:
    out: dict[str, Any] = {}
    for lib in ("libcap.so.2", "libselinux.so.1"):
        r = subprocess.run(["sh", "-c", f"ldconfig -p | grep -c {lib}"], capture_output=True, text=True)
        out[f"system {lib}"] = r.stdout.strip()
    bwrap, env_extra, how = find_bwrap()
    out["bwrap"] = f"{bwrap} ({how})"
    if not bwrap:
        return out
    env = dict(os.environ, **env_extra)
    v = subprocess.run([bwrap, "--version"], capture_output=True, text=True, env=env)
    out["version"] = (v.stdout or v.stderr).strip()[:120]
    ldd = subprocess.run(["ldd", bwrap], capture_output=True, text=True, env=env)
    out["ldd_missing"] = [ln.strip() for ln in ldd.stdout.splitlines() if "not found" in ln]
    args = [
        bwrap,
        "--ro-bind",
        "/",
        "/",
        "--dev-bind",
        "/dev",
        "/dev",
        "--proc",
        "/proc",
        "--tmpfs",
        "/tmp",
        "--unshare-net",
        "--unshare-pid",
        "--unshare-ipc",
        "--die-with-parent",
        "--new-session",
        sys.executable,
        "-c",
        CHILD,
    ]
    r = subprocess.run(args, capture_output=True, text=True, env=env, timeout=120)
    out["child_rc"] = r.returncode
    out["child"] = r.stdout.strip()[-400:]
    out["child_stderr"] = r.stderr.strip()[-400:]
    direct = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=120)
    out["without_sandbox"] = direct.stdout.strip()[-300:]
    return out


if __name__ == "__main__":
    import json

    print(json.dumps(probe(), indent=1))
