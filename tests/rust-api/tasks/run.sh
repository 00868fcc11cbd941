#!/usr/bin/env bash
# The six tasks, written with the official `tvm-ffi` crate
# (tests/rust-api/tasks/official, on the official library) and with tvmffi
# (tests/rust-api/tasks/ours): builds and runs both, prints their output, checks
# that docs/rust.md's comparison table is what tests/rust-api/tasks/count.py
# measures, and that every crate of the workspace passes `cargo package`
# (packaged and built from the package). Also a program using the official
# crate and tvmffi together. Usage: run.sh VENV OUR_LIBRARY.
# Prints "rust-tasks: N passed".
set -euo pipefail
venv="$(cd "$1" && pwd)"
ours_dir="$(cd "$(dirname "$2")" && pwd)"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
passed=0
ok() { echo "ok: $1"; passed=$((passed + 1)); }
fail() { echo "FAILED: $1"; exit 1; }
cd "$root"
official_lib="$(echo "$venv"/lib/python3*/site-packages/tvm_ffi/lib)"

# The official crate's build script runs `tvm-ffi-config` (the wheel's).
PATH="$venv/bin:$PATH" CARGO_TARGET_DIR="$root/target/rust-tasks" \
  cargo build --release --locked --quiet --manifest-path "$here/official/Cargo.toml"
bin="$root/target/rust-tasks/release"
for t in 2 3 4; do LD_LIBRARY_PATH="$official_lib" "$bin/task$t" | sed "s/^/  official task $t: /"; done
LD_LIBRARY_PATH="$official_lib" "$bin/task5" "$bin/libtask1_official.so" | sed "s/^/  official task 5: /"
ok "the official crate's five tasks build and run"

PATH="$venv/bin:$PATH" CARGO_TARGET_DIR="$root/target/rust-tasks" \
  cargo build --release --locked --quiet --manifest-path "$here/both/Cargo.toml"
for which in official ours; do
  dir="$official_lib"
  [ "$which" = ours ] && dir="$ours_dir"
  got="$(LD_LIBRARY_PATH="$dir" "$bin/rust-tasks-both")"
  [ "$got" = "both.double(21) = 42; both.greet = hello official" ] || fail "both crates on $which: $got"
done
ok "one program on the official crate and tvmffi together: no name collision, one runtime (official library and ours)"

# Debug builds reusing the runtime rlib of tests/packaging/rust-dependent; the
# library and the host in one build (only the host depends on tvmffi-host).
dep_target="$root/target/rust-dependent"
CARGO_TARGET_DIR="$dep_target" cargo build --locked --quiet -p rust-tasks-ours-ext -p rust-tasks-ours-host
for t in 2 3 4; do "$dep_target/debug/task$t" | sed "s/^/  tvmffi task $t: /"; done
"$dep_target/debug/task5" "$dep_target/debug/libtask1_ours.so" | sed "s/^/  tvmffi task 5: /"
ok "tvmffi's five tasks build and run"

# Task 6 from Python with NumPy: each library's in-place kernel, on each
# runtime (the same transcript on both).
for lib in "$bin/libtask1_official.so" "$dep_target/debug/libtask1_ours.so"; do
  "$venv/bin/python" "$here/in_place.py" "$lib" > "$root/target/in-place-official.txt"
  PYTHONPATH="$root/target/suite/pkg-ours" "$venv/bin/python" "$here/in_place.py" "$lib" > "$root/target/in-place-ours.txt"
  diff -u "$root/target/in-place-official.txt" "$root/target/in-place-ours.txt" \
    || fail "task 6 of $(basename "$lib") differs between the runtimes"
  grep -qxF "  y now: [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]" "$root/target/in-place-ours.txt" \
    || fail "task 6 of $(basename "$lib") did not write y"
  sed "s/^/  task 6 ($(basename "$lib")): /" "$root/target/in-place-ours.txt" | cut -c1-200
done
grep -q 'add_one_into(x, x) !! TypeError.*another argument already borrows' "$root/target/in-place-ours.txt" \
  || fail "tvmffi's task 6 took x as its own output"
ok "task 6, the in-place kernel, from NumPy on both runtimes: y written; strided, float64, misshaped y refused"

# One Rust host (no build script, no linker flags) loading a C++ extension
# built with the official headers, the official crate's task 1 and
# tvmffi's, calling across them; the official runtime on the loader path
# or not, the same transcript.
CARGO_TARGET_DIR="$dep_target" cargo build --locked --quiet -p rust-mixed-host
for path in "" "$official_lib"; do
  LD_LIBRARY_PATH="$path" "$dep_target/debug/rust-mixed-host" "$official_lib/libtvm_ffi_testing.so" \
    "$bin/libtask1_official.so" "$dep_target/debug/libtask1_ours.so" > "$root/target/mixed-host.txt" \
    || fail "the mixed host (LD_LIBRARY_PATH=$path)"
  diff -u "$here/../mixed-host/expected.txt" "$root/target/mixed-host.txt" \
    || fail "the mixed host's transcript (LD_LIBRARY_PATH=$path)"
done
sed "s/^/  mixed host: /" "$root/target/mixed-host.txt"
ok "one Rust host loads a C++ extension, the official crate's and tvmffi's, calls across them, with the official runtime on LD_LIBRARY_PATH and without"

table="$(python3 "$here/count.py")"
echo "$table"
python3 - "$root/docs/rust.md" "$table" <<'PY'
import sys
if sys.argv[2] not in open(sys.argv[1]).read():
    sys.exit("FAILED: docs/rust.md's table of the five tasks is not count.py's")
PY
ok "docs/rust.md's comparison table is measured from these programs"

# Packaged and built from the packages (again in the dependent's target
# directory, for its compiled dependencies). The top package holds the
# same sources and build script as the rlib one, which is built; building
# it again would only add the C library's link. --allow-dirty: a tree under
# test may hold edits not yet committed.
package() { # cargo package arguments...
  CARGO_TARGET_DIR="$dep_target" cargo package --locked --quiet --allow-dirty "$@" \
    2> "$root/target/package-check.log" || { cat "$root/target/package-check.log"; fail "cargo package $*"; }
}
# Cargo takes a registry crate of a given version as immutable: it reuses
# the copy it unpacked and the build it made of it. The packages verified
# here are rebuilt with the same versions on every run, so drop both first
# (these crates never come from crates.io; their path builds in this
# directory are rebuilt when next used).
rm -rf "${CARGO_HOME:-$HOME/.cargo}"/registry/src/-*/{tvmffi,tvmffi-host,tvmffi-macros,tvm-ffi-rs-rlib}-0.1.0
for kind in .fingerprint build deps; do
  rm -rf "$dep_target/debug/$kind"/{tvmffi-,tvmffi_macros-,tvmffi-macros-,tvmffi_host-,tvmffi-host-,libtvmffi-,libtvmffi_macros-,libtvmffi_host-,tvm-ffi-rs-rlib-,libtvm_ffi-,tvm_ffi-}*
done
package --no-verify -p tvm-ffi-rs
# The four Rust-facing crates as `cargo publish --dry-run` checks them
# (docs/rust.md): packaged, each built from its package against the others.
CARGO_TARGET_DIR="$dep_target" cargo publish --dry-run --locked --allow-dirty \
  -p tvm-ffi-rs-rlib -p tvmffi-macros -p tvmffi -p tvmffi-host > "$root/target/publish-check.log" 2>&1 \
  || { cat "$root/target/publish-check.log"; fail "cargo publish --dry-run"; }
! grep -q "^warning: manifest" "$root/target/publish-check.log" \
  || fail "a manifest lacks metadata: $(grep '^warning: manifest' "$root/target/publish-check.log")"
[ -f "$dep_target/package/tvm-ffi-rs-0.1.0.crate" ] || fail "cargo package: no tvm-ffi-rs"
for crate in tvm-ffi-rs-rlib tvmffi-macros tvmffi tvmffi-host; do
  grep -q "^ *Uploading $crate v0.1.0" "$root/target/publish-check.log" || fail "cargo publish --dry-run: no $crate"
done
ok "cargo package of tvm-ffi-rs; cargo publish --dry-run of tvm-ffi-rs-rlib, tvmffi-macros, tvmffi and tvmffi-host (each built from its package), no metadata warning"
echo "rust-tasks: $passed passed"
