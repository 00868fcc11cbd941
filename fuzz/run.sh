#!/usr/bin/env bash
# Runs every fuzz target for a bounded time each (default 30 s; `run.sh 600`
# for a long run, `run.sh 60 dtype json` for some targets), one per core at
# a time. A crash fails and leaves its input in fuzz/artifacts/<target>.
# cargo-fuzz needs nightly features; RUSTC_BOOTSTRAP=1 enables them on the
# stable toolchain. Installs cargo-fuzz on first use; exits 3 if it cannot
# be installed.
set -uo pipefail
seconds="${1:-30}"
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(library_bin dtype dlpack inspect json artifacts device_code)
cd "$(dirname "${BASH_SOURCE[0]}")"
if ! command -v cargo-fuzz >/dev/null 2>&1; then
  cargo install cargo-fuzz --locked >/dev/null 2>&1 || exit 3
fi
mkdir -p ../target
# One build of every target first (cargo builds them side by side), then the
# runs, as many at once as there are cores: each libFuzzer run uses one.
RUSTC_BOOTSTRAP=1 cargo fuzz build >../target/fuzz-build.log 2>&1 || { tail -20 ../target/fuzz-build.log; exit 1; }
fuzz_one() { # target: runs it, leaves its exit code in ../target/fuzz-<target>.rc
  local t="$1" seeds=()
  mkdir -p "corpus/$t"
  # Committed seeds (fuzz/seeds/<target>) are read; new inputs go to corpus/.
  [ -d "seeds/$t" ] && seeds=("seeds/$t")
  RUSTC_BOOTSTRAP=1 cargo fuzz run "$t" "corpus/$t" "${seeds[@]}" -- -max_total_time="$seconds" \
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
