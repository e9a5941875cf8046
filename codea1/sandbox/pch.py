"""Precompiled headers for the C++ compile of the process runner: built once per machine by the trusted
parent, read (never written) by the compiler inside the sandbox.

    argv = with_precompiled_headers(("g++", "-std=gnu++17", "-O2", "-pipe", "-o", "{out}", "{src}"))
    # ("g++", "-I", "<dir>", "-std=gnu++17", ...) once the headers are built; the argv unchanged where
    # they cannot be

A compile of a small program is mostly the parsing of its first header: `<bits/stdc++.h>` takes about
1.1 s of the 1.3 s, `<iostream>` about 0.2 s of 0.3 s. GCC reads a header's precompiled form
(`NAME.gch` in an include directory searched before the system's) only when it is the first thing the
program includes and only when the compile's options and macros are those it was built with; otherwise it
reads the header itself, so a precompiled header changes how long a compile takes, never what it means.

The headers (PCH_HEADERS, the usual first includes of contest programs) are compiled with the language's
own flags from a one-line wrapper that includes the system header, each beside a link to the header
itself (a later include of the same header then finds it there: the same file), into a directory keyed by the
compiler's version and the flags, under `pch_root()` (a directory of this user's alone, outside the home
directory that the sandbox hides). The build is atomic (a temporary directory renamed
into place), so parallel processes never see half a header. The allow-list root binds `pch_root()`
read-only at MOUNT (codea1.sandbox.allowlist); a machine where it cannot be built or read compiles without it.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import subprocess
import tempfile
from functools import lru_cache
from pathlib import Path

log = logging.getLogger(__name__)

PCH_HEADERS = ("bits/stdc++.h", "iostream", "cstdio")
MOUNT = "/.codea1-pch"  # where the allow-list root shows pch_root()
LAYOUT = 2  # of a headers' directory (2: each .gch beside a link to its header); part of its key
BUILD_TIMEOUT = 120.0  # seconds for all headers (bits/stdc++.h alone takes 3-4 s on an idle core)


def pch_root() -> Path:
    """Where precompiled headers live: $CODEA1_PCH_DIR, else codea1-pch-UID in the system's temp directory
    (not under the home directory, which the sandbox hides from its children)."""
    env = os.environ.get("CODEA1_PCH_DIR")
    return Path(env) if env else Path(tempfile.gettempdir()) / f"codea1-pch-{os.getuid()}"


def _own_root() -> Path | None:
    """pch_root(), made where it is missing; None where it cannot be made or is not this user's alone (a
    directory another user made, or may write to, could hold headers of theirs)."""
    root = pch_root()
    try:
        root.mkdir(mode=0o755, parents=True, exist_ok=True)
        st = root.stat()
    except OSError:
        return None
    if st.st_uid != os.getuid() or st.st_mode & 0o022:
        log.warning("%s is not this user's alone: C++ compiles read the headers themselves", root)
        return None
    return root


def _flags(compile_argv: tuple[str, ...]) -> list[str]:
    """The compile's options without its input, its output, and the compiler itself."""
    out, skip = [], False
    for part in compile_argv[1:]:
        if skip:
            skip = False
        elif part == "-o":
            skip = True
        elif "{src}" not in part and "{out}" not in part:
            out.append(part)
    return out


def bound_dirs() -> list[tuple[str, str]]:
    """What the allow-list root binds read-only for the precompiled headers: (pch_root(), MOUNT), the
    directory made where it is missing (bound while still empty, headers built later appear in it); none
    where it is not usable."""
    root = _own_root()
    return [] if root is None else [(str(root), MOUNT)]


@lru_cache(maxsize=8)
def precompiled_dir(compile_argv: tuple[str, ...]) -> str | None:
    """The directory of PCH_HEADERS precompiled for `compile_argv` (built on first use, then cached on
    disk), or None where the compiler is missing, the build fails, or the switch CODEA1_PCH=0 is set."""
    compiler = shutil.which(compile_argv[0]) if compile_argv else None
    if compiler is None or os.environ.get("CODEA1_PCH", "1") == "0":
        return None
    flags = _flags(compile_argv)
    try:
        version = subprocess.run([compiler, "-v"], check=False, capture_output=True, text=True, timeout=30).stderr
    except (OSError, subprocess.SubprocessError):
        return None
    key = hashlib.sha256("\0".join([f"layout {LAYOUT}", version, *flags, *PCH_HEADERS]).encode()).hexdigest()[:16]
    root = _own_root()
    if root is None:
        return None
    final = root / key
    if final.is_dir():  # renamed into place only once complete
        return str(final)
    try:
        _build(compiler, flags, final)
    except (OSError, subprocess.SubprocessError, StopIteration) as exc:
        log.warning("precompiled headers not built (%r); C++ compiles read the headers themselves", exc)
        return None
    return str(final) if final.is_dir() else None


def _build(compiler: str, flags: list[str], final: Path) -> None:
    """Each header's precompiled form beside a link to the header itself: once a compile has read X.gch from
    this directory, a later include of X (the program's own, or one inside another header) finds X here
    too, and reads the same file it would have read without the directory."""
    log.info("building precompiled C++ headers (once per machine) in %s", final)
    work = Path(tempfile.mkdtemp(prefix=".build-", dir=final.parent))
    try:
        for header in PCH_HEADERS:
            wrapper = work.parent / f"{work.name}.h"
            wrapper.write_text(f"#include <{header}>\n")
            target = work / f"{header}.gch"
            target.parent.mkdir(parents=True, exist_ok=True)
            done = subprocess.run(
                [compiler, *flags, "-H", "-x", "c++-header", str(wrapper), "-o", str(target)],
                check=True,
                capture_output=True,
                text=True,
                timeout=BUILD_TIMEOUT,
            )
            wrapper.unlink()
            # -H lists every header read, the wrapper's own include first (". PATH")
            first = next(line[2:].strip() for line in done.stderr.splitlines() if line.startswith(". "))
            os.symlink(os.path.realpath(first), work / header)
        for path in [work, *work.rglob("*")]:
            if not path.is_symlink():
                os.chmod(path, 0o755 if path.is_dir() else 0o644)
        try:
            os.rename(work, final)
        except OSError:  # another process built it first
            if not final.is_dir():
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)


def with_precompiled_headers(compile_argv: tuple[str, ...]) -> tuple[str, ...]:
    """`compile_argv` with the precompiled headers' directory searched first, as the allow-list root shows it
    (under MOUNT) and at its own place (a sandbox without that root); unchanged where there is none. A
    directory that is not there is skipped by the compiler."""
    built = precompiled_dir(tuple(compile_argv))
    if built is None:
        return tuple(compile_argv)
    dirs = [f"{MOUNT}/{os.path.basename(built)}", built]
    return (compile_argv[0], *[arg for d in dirs for arg in ("-I", d)], *compile_argv[1:])
