#!/usr/bin/env bash
# Installs Debian packages for a test stage: as root, or with sudo; the
# package lists are refreshed only when the first attempt fails. Exits 0
# when installed, nonzero when it cannot (no root and no sudo, or apt failed),
# with apt's output in LOG. Safe to run from stages running side by side.
# usage: tests/tools/apt-install.sh LOG PACKAGE...
set -uo pipefail
log="$1"
shift
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
if [ -n "$sudo" ] && ! command -v sudo >/dev/null; then
  echo "not root, and no sudo" >"$log"
  exit 1
fi
# One apt at a time, and apt waits for dpkg's own lock when something else
# holds it.
source "$(dirname "${BASH_SOURCE[0]}")/one-at-a-time.sh"
one_at_a_time apt
apt() { $sudo env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 "$@" >>"$log" 2>&1 9>&-; }
: >"$log"
apt install -y -q "$@" || { apt update -q && apt install -y -q "$@"; }
