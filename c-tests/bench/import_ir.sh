#!/usr/bin/env bash
# Instructions per operation (callgrind) of each phase of import_pattern.c,
# on the official library and on ours, and each library's total for one
# "import": every phase's count is dumped on its own (the program zeroes
# callgrind's counters before a phase and dumps them after it).
# usage: c-tests/bench/import_ir.sh   (after c-tests/bench/run.sh built
#        target/bench; needs valgrind)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="$root/target/bench"
command -v valgrind >/dev/null || { echo "needs valgrind"; exit 1; }
[ -x "$out/import_ours" ] || { echo "run c-tests/bench/run.sh first"; exit 1; }
# "phase Ir_per_op" lines, and "import Ir_total", for one binary.
phases() {
  local dir
  dir="$(mktemp -d "$out/import-ir.XXXXXX")"
  valgrind --tool=callgrind --callgrind-out-file="$dir/cg" "$1" >"$dir/ops.txt" 2>"$dir/valgrind.log"
  local listed
  listed=$(awk '/^import_names_listed / { print $2 }' "$dir/ops.txt")
  # Each client-request dump names its phase and its instructions.
  for f in "$dir"/cg.*; do
    awk '/^desc: Trigger: Client Request: / { p = $NF } /^(summary|totals):/ { t = $2 } END { if (p != "") print p, t }' "$f"
  done | awk -v listed="$listed" '
    BEGIN { n["alloc_index"] = 500; n["register_field"] = 1000; n["register_attr"] = 1800
            n["set_global"] = 2000; n["get_global"] = 2000; n["backtrace"] = 109; n["backtrace_first"] = 1; n["error"] = 1
            n["list_names"] = listed }
    { total += $2; printf "%s %.0f\n", $1, $2 / n[$1] }
    END { printf "import %.0f\n", total }'
  rm -rf "$dir"
}
printf "%-16s %14s %14s %8s\n" phase official_Ir ours_Ir ratio
join <(phases "$out/import_official" | sort) <(phases "$out/import_ours" | sort) |
  awk '{ printf "%-16s %14d %14d %8.2f\n", ($1 == "import" ? "import (total)" : $1 "/op"), $2, $3, $3 / $2 }'
