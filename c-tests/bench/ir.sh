#!/usr/bin/env bash
# Instructions per operation (callgrind, deterministic) of each path of
# bench_core.c, on the official library and on ours, as a ratio:
# Ir/op = (Ir at 2N iterations - Ir at N) / N, so start-up cancels out. The
# figure includes the harness loop (about 16 instructions).
# usage: c-tests/bench/ir.sh [LABEL ...]   (after c-tests/bench/run.sh built
#        target/bench; needs valgrind)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="$root/target/bench"
command -v valgrind >/dev/null || { echo "needs valgrind"; exit 1; }
[ -x "$out/bench_ours" ] || { echo "run c-tests/bench/run.sh first"; exit 1; }
labels=("$@")
[ ${#labels[@]} -gt 0 ] || labels=(env_get_stream dtype_from_string call_0_args call_0_args_null_self call_1_arg \
  call_3_args global_lookup incref_decref string_small string_64_bytes tensor_from_dlpack shape_global global_call_builtin \
  error_raise_fetch module_load_warm module_call module_load_cold module_reload)
# The module paths load this one-function library (run.sh builds it and
# the copies module_load_cold and module_reload load, each once).
export BENCH_MODULE="$out/one.so" BENCH_COLD_DIR="$out/cold" BENCH_RELOAD_DIR="$out/reload"
ir() { # binary label iterations
  BENCH_ONLY="$2" BENCH_ITERS="$3" valgrind --tool=callgrind --callgrind-out-file=/dev/null "$1" 2>&1 |
    awk '/Collected/ { print $NF }'
}
per_op() { # binary label
  local a b n=20000
  case "$2" in
    module_load_warm) n=1000 ;;
    module_load_cold | module_reload) n=100 ;;
  esac
  a=$(ir "$1" "$2" "$n")
  b=$(ir "$1" "$2" $((2 * n)))
  echo $(((b - a) / n))
}
printf "%-24s %12s %12s %8s\n" path official_Ir ours_Ir ratio
for label in "${labels[@]}"; do
  o=$(per_op "$out/bench_official" "$label")
  u=$(per_op "$out/bench_ours" "$label")
  awk -v l="$label" -v o="$o" -v u="$u" 'BEGIN { printf "%-24s %12d %12d %8.2f\n", l, o, u, u / o }'
done
