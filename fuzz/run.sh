#!/usr/bin/env bash
# Runs every fuzz target for a bounded time each (default 30 s; `run.sh 600`
# for a long run, `run.sh 60 dtype json` for some targets). A crash fails and
# leaves its input in fuzz/artifacts/<target>. cargo-fuzz needs nightly
# features; RUSTC_BOOTSTRAP=1 enables them on the stable toolchain. Installs
# cargo-fuzz on first use; exits 3 if it cannot be installed.
set -uo pipefail
seconds="${1:-30}"
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(library_bin dtype dlpack inspect json artifacts)
cd "$(dirname "${BASH_SOURCE[0]}")"
if ! command -v cargo-fuzz >/dev/null 2>&1; then
  cargo install cargo-fuzz --locked >/dev/null 2>&1 || exit 3
fi
mkdir -p ../target
rc=0
for t in "${targets[@]}"; do
  mkdir -p "corpus/$t"
  log="../target/fuzz-$t.log"
  # Committed seeds (fuzz/seeds/<target>) are read; new inputs go to corpus/.
  seeds=()
  [ -d "seeds/$t" ] && seeds=("seeds/$t")
  RUSTC_BOOTSTRAP=1 cargo fuzz run "$t" "corpus/$t" "${seeds[@]}" -- -max_total_time="$seconds" >"$log" 2>&1
  r=$?
  # libFuzzer's final line: "Done N runs in S second(s)".
  echo "fuzz $t: $(grep -o 'Done [0-9]* runs in [0-9]* second(s)' "$log" | tail -1 || true) exit $r"
  [ $r -ne 0 ] && { tail -20 "$log"; rc=1; }
done
exit $rc
