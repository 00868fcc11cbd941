#!/usr/bin/env bash
# Loaded code that every tool can see, and a loader that costs the system
# what the reference's does: one C host (host.c) loads small kernel
# libraries (kern.c, built -g) through ffi.ModuleLoadFromFile, built once
# against the official library and once against ours, with the same
# expectations on both:
#   - dladdr and /proc/self/maps name the real path; a load error names it;
#   - gdb in batch mode stops at a breakpoint in the loaded library with its
#     file and line, and `info sharedlibrary` lists the real path;
#   - valgrind's and AddressSanitizer's reports name a loaded module's
#     function and line;
#   - perf report attributes samples to the library's functions (skipped
#     where perf cannot record here);
#   - 300 distinct libraries load under `ulimit -n 256`; unloading never
#     closes a descriptor the program has since reused; 70 hard links to one
#     15 MiB library map one image and no copy; a library on a noexec mount
#     is refused (skipped where mounting is not permitted); loading needs
#     neither /proc nor a writable TMPDIR (skipped where mounting is not
#     permitted); a library loading its own path from its constructor maps
#     one image; an $ORIGIN library loads, is released and reloads 2,100
#     times.
# Transcripts of both runs must be identical (target/loader-tools/*.log).
# usage: tests/loader-tools/run.sh VENV LIBRARY
set -euo pipefail
venv="$1"
lib="$2"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
here="$root/tests/loader-tools"
out="$root/target/loader-tools"
official_lib="$(echo "$venv"/lib/python3*/site-packages/tvm_ffi/lib)"
rm -rf "$out"
mkdir -p "$out/libs"
passed=0
pass() { echo "ok: $*"; passed=$((passed + 1)); }
fail() { echo "FAILED: $*"; exit 1; }

for tool in gdb valgrind; do
  command -v "$tool" >/dev/null || "$root/tests/tools/apt-install.sh" "$out/apt.log" "$tool" ||
    fail "$tool is needed and could not be installed (see $out/apt.log)"
done
command -v perf >/dev/null || "$root/tests/tools/apt-install.sh" "$out/apt.log" linux-perf || true

cc=(gcc -g -O1 -shared -fPIC -I"$root/include")
L="$out/libs"
"${cc[@]}" -o "$L/libkern.so" "$here/kern.c"
"${cc[@]}" -DPAD -o "$L/libbig.so" "$here/kern.c"
"${cc[@]}" -DSELF_LOAD -o "$L/libself.so" "$here/kern.c"
"${cc[@]}" -fsanitize=address -o "$L/libkern-asan.so" "$here/kern.c"
mkdir -p "$L/origin"
echo 'long dep(void) { return 0; }' >"$L/origin/dep.c"
gcc -shared -fPIC -Wl,-soname,libdep.so -o "$L/origin/libdep.so" "$L/origin/dep.c"
"${cc[@]}" -DWITH_DEP -o "$L/origin/libkorigin.so" "$here/kern.c" -L"$L/origin" -ldep -Wl,-rpath,'$ORIGIN'
echo "not a library" >"$L/notlib.so"
mkdir -p "$L/many" "$L/links"
for i in $(seq 0 299); do cp "$L/libkern.so" "$L/many/k$i.so"; done
for i in $(seq 0 69); do ln "$L/libbig.so" "$L/links/h$i.so"; done
mkdir -p "$L/self"
cp "$L/libself.so" "$L/self/h0.so"

# Whether this machine lets the test mount file systems in a namespace.
can_mount=0
if unshare -m sh -c "mount -t tmpfs -o noexec none '$out/libs' 2>/dev/null" 2>/dev/null; then
  can_mount=1
fi

for which in official ours; do
  libdir="$official_lib"
  [ "$which" = ours ] && libdir="$(dirname "$lib")"
  host="$out/host-$which"
  gcc -g -I"$root/include" -o "$host" "$here/host.c" -L"$libdir" -ltvm_ffi -Wl,-rpath,"$libdir"
  log="$out/$which.log"
  {
    "$host" run "$L/libkern.so"
    "$host" error "$L/notlib.so"
    "$host" error "$L/missing.so"
    (ulimit -n 256 && "$host" many "$L/many" 300)
    "$host" daemon "$L/libkern.so" "$L/many/k0.so"
    "$host" links "$L/links" 70
    "$host" links "$L/self" 1
    "$host" reload "$L/origin/libkorigin.so" 2100
    if [ "$can_mount" = 1 ]; then
      unshare -m sh -c "mount -t tmpfs -o noexec none '$out/libs/many' && cp '$L/libkern.so' '$out/libs/many/' &&
        '$host' error '$out/libs/many/libkern.so'"
      unshare -m sh -c "mount -t tmpfs none /proc && TMPDIR=/nonexistent '$host' run '$L/libkern.so'"
    else
      echo "noexec mount: skipped (mounting is not permitted here)"
      echo "no /proc: skipped (mounting is not permitted here)"
    fi
  } >"$log" 2>"$out/$which.err"
  echo "== $which"
  cat "$log"
done
diff "$out/official.log" "$out/ours.log" || fail "the transcripts differ"
pass "identical transcripts ($(wc -l <"$out/ours.log") lines)"
grep -q "^dladdr names: $L/libkern.so$" "$out/ours.log" || fail "dladdr"
grep -q "^maps names: $L/libkern.so$" "$out/ours.log" || fail "maps"
grep -q "library $L/notlib.so $L/notlib.so: file too short" "$out/ours.log" || fail "load error"
grep -q "^loaded 300 libraries; then open: ok$" "$out/ours.log" || fail "descriptors"
grep -q "^own descriptors open after unloading: 16 of 16$" "$out/ours.log" || fail "descriptor reuse"
grep -q "^70 hard links: 1 image(s), in-memory copies under 64 MiB$" "$out/ours.log" || fail "hard links"
grep -q "^1 hard links: 1 image(s)" "$out/ours.log" || fail "self-loading"
grep -q "^reloaded 2100 times$" "$out/ours.log" || fail "\$ORIGIN reloads"
if [ "$can_mount" = 1 ]; then
  grep -q "libkern.so: failed to map segment from shared object" "$out/ours.log" || fail "noexec"
  grep -q "^spin: int$" <(tail -1 "$out/ours.log") || fail "no /proc, no TMPDIR"
fi
pass "dladdr, maps, load errors, descriptors, hard links, self-loading, \$ORIGIN reloads, noexec, no /proc"

for which in official ours; do
  host="$out/host-$which"
  # gdb: a breakpoint in the loaded library, its file and line, the real path.
  timeout -s KILL 120 gdb -batch -nx -ex 'set breakpoint pending on' -ex 'break hot_loop' -ex run \
    -ex 'info sharedlibrary' -ex 'bt 1' --args "$host" run "$L/libkern.so" 100 >"$out/gdb-$which.txt" 2>&1 ||
    fail "gdb on $which (hung or failed: $out/gdb-$which.txt)"
  grep -q "^Breakpoint 1, hot_loop (n=100) at .*kern.c:[0-9]*" "$out/gdb-$which.txt" ||
    fail "gdb did not stop in hot_loop on $which"
  grep -qE "Yes +$L/libkern.so$" "$out/gdb-$which.txt" || fail "gdb's info sharedlibrary on $which"
  pass "gdb stops at kern.c:$(grep -o 'kern.c:[0-9]*' "$out/gdb-$which.txt" | head -1 | cut -d: -f2) on $which"
  # valgrind: the invalid read is named by function, file and line.
  valgrind --error-exitcode=0 "$host" bad "$L/libkern.so" >/dev/null 2>"$out/valgrind-$which.txt"
  grep -qE "at 0x[0-9A-F]+: bad_read \(kern.c:[0-9]+\)" "$out/valgrind-$which.txt" ||
    fail "valgrind does not name bad_read on $which"
  pass "valgrind names bad_read (kern.c) on $which"
  # AddressSanitizer: its symbolizer reads the module by its loaded name.
  libdir="$official_lib"
  [ "$which" = ours ] && libdir="$(dirname "$lib")"
  gcc -g -fsanitize=address -I"$root/include" -o "$host-asan" "$here/host.c" -L"$libdir" -ltvm_ffi -Wl,-rpath,"$libdir"
  ASAN_OPTIONS=detect_leaks=0 "$host-asan" bad "$L/libkern-asan.so" >/dev/null 2>"$out/asan-$which.txt" || true
  grep -qE "in bad_read .*kern.c:[0-9]+" "$out/asan-$which.txt" || fail "AddressSanitizer does not name bad_read on $which"
  pass "AddressSanitizer names bad_read (kern.c) on $which"
  # perf: samples attributed to the library's functions.
  if command -v perf >/dev/null && perf record -q -e cpu-clock -o "$out/perf-$which.data" \
    "$host" run "$L/libkern.so" 200000000 >/dev/null 2>"$out/perf-$which.err"; then
    perf report -i "$out/perf-$which.data" --stdio --sort dso,sym 2>/dev/null >"$out/perf-$which.txt"
    grep -qE "libkern.so +\[\.\] hot_loop" "$out/perf-$which.txt" || fail "perf report on $which ($out/perf-$which.txt)"
    pass "perf attributes samples to libkern.so hot_loop on $which"
  else
    echo "perf: skipped on $which (perf cannot record here: $(head -1 "$out/perf-$which.err" 2>/dev/null || echo 'not installed'))"
  fi
done
echo "loader-tools: $passed passed"
