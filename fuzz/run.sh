#!/usr/bin/env bash
# Runs every fuzz target for a bounded time each (default 30 s; `run.sh 600`
# for a long run, `run.sh 60 dtype json` for some targets), one per core at
# a time. A crash fails and leaves its input in fuzz/artifacts/<target>.
#
# The targets are cargo-fuzz targets (`cargo fuzz run dtype` works as
# usual). This script builds them as `cargo fuzz build` 0.13 does, without
# installing cargo-fuzz (a minute of compiling on a fresh machine): a
# release build for the host triple with line tables, debug assertions,
# AddressSanitizer and libFuzzer's coverage instrumentation, one codegen
# unit; RUSTC_BOOTSTRAP=1 lets the stable toolchain take the sanitizer flag.
set -uo pipefail
seconds="${1:-30}"
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(library_bin dtype dlpack inspect json artifacts device_code triton_cache)
cd "$(dirname "${BASH_SOURCE[0]}")"
mkdir -p ../target
triple="$(rustc -vV | sed -n 's/^host: //p')"
flags=(-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4
  -Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table
  -Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing
  -Cllvm-args=-simplifycfg-branch-fold-threshold=0 -Zsanitizer=address -Cdebug-assertions
  -Ccodegen-units=1)
case "$triple" in *-linux-*) flags+=(-Cllvm-args=-sanitizer-coverage-stack-depth) ;; esac
# One build of every target first (cargo builds them side by side), then the
# runs, as many at once as there are cores: each libFuzzer run uses one.
RUSTC_BOOTSTRAP=1 RUSTFLAGS="${flags[*]} ${RUSTFLAGS:-}" \
  cargo build --locked --release --target "$triple" --config 'profile.release.debug="line-tables-only"' --bins \
  >../target/fuzz-build.log 2>&1 || { tail -20 ../target/fuzz-build.log; exit 1; }
fuzz_one() { # target: runs it, leaves its exit code in ../target/fuzz-<target>.rc
  local t="$1" seeds=()
  mkdir -p "corpus/$t"
  # Committed seeds (fuzz/seeds/<target>) are read; new inputs go to corpus/.
  [ -d "seeds/$t" ] && seeds=("seeds/$t")
  mkdir -p "artifacts/$t"
  ASAN_OPTIONS="detect_odr_violation=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}" "target/$triple/release/$t" \
    -artifact_prefix="artifacts/$t/" -max_total_time="$seconds" "corpus/$t" "${seeds[@]}" \
    >"../target/fuzz-$t.log" 2>&1
  echo $? >"../target/fuzz-$t.rc"
}
cores="$(nproc 2>/dev/null || echo 1)"
for t in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$cores" ]; do wait -n || true; done
  fuzz_one "$t" &
done
wait
rc=0
for t in "${targets[@]}"; do
  log="../target/fuzz-$t.log"
  r="$(cat "../target/fuzz-$t.rc" 2>/dev/null || echo 1)"
  # libFuzzer's final line: "Done N runs in S second(s)".
  echo "fuzz $t: $(grep -o 'Done [0-9]* runs in [0-9]* second(s)' "$log" | tail -1 || true) exit $r"
  [ "$r" -ne 0 ] && { tail -20 "$log"; rc=1; }
done
exit $rc
