#!/usr/bin/env bash
# Installs PyPI packages into the tests' venv when one is missing, one pip
# at a time (stages run side by side and share the venv). Exits 0 when all
# are importable, else pip's status, with pip's output in LOG.
# usage: tests/tools/pip-install.sh VENV LOG MODULE=PACKAGE...
set -uo pipefail
venv="$1"
log="$2"
shift 2
source "$(dirname "${BASH_SOURCE[0]}")/one-at-a-time.sh"
one_at_a_time pip
: >"$log"
for pair in "$@"; do
  "$venv/bin/python" -c "import ${pair%%=*}" 2>/dev/null ||
    "$venv/bin/pip" install --quiet --disable-pip-version-check "${pair#*=}" >>"$log" 2>&1 9>&- || exit
done
