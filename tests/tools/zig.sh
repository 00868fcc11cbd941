#!/usr/bin/env bash
# Installs PyPI's ziglang (and any other MODULE=PACKAGE given) into the
# tests' venv when missing, one pip at a time, and prints the path of its
# zig. Exits nonzero when pip cannot install them (its output in LOG).
# usage: tests/tools/zig.sh VENV LOG [MODULE=PACKAGE...]
set -euo pipefail
venv="$1"
log="$2"
shift 2
"$(dirname "${BASH_SOURCE[0]}")/pip-install.sh" "$venv" "$log" ziglang=ziglang "$@"
"$venv/bin/python" -c 'import ziglang, os; print(os.path.join(os.path.dirname(ziglang.__file__), "zig"))'
