#!/usr/bin/env bash
# Runs every test of tvm-ffi-rs on a fresh machine (Rust toolchain, gcc and
# python3 are all it needs):
#   1. a venv in target/venv with cmake and the official apache-tvm-ffi wheel
#      (the oracle for the differential tests),
#   2. cargo test (unit tests, header freshness, exported symbols, boundary),
#      in the `testing` profile (optimized, without the release profile's fat
#      LTO: Cargo.toml), whose target/testing/libtvm_ffi.so every later stage
#      uses,
#   3. the C tests under ctest, against our library and the official one,
#      with transcript diffs, then ours again under AddressSanitizer/UBSan,
#   3b. loaded libraries as tools see them: gdb, perf, valgrind, ASan and
#      dladdr on a library loaded by ffi.ModuleLoadFromFile, descriptors,
#      copies, noexec mounts, no /proc, reloads (tests/loader-tools/run.sh,
#      both libraries, identical transcripts),
#   4. cross-loading: the official Python package loads our library as a
#      module and runs an artifact built by our writer,
#   4b. the official package's own test suite, run on the official library
#      and on ours (tests/official/python/run.sh), failing on any test that passes on
#      the official library but not on ours,
#   4b'. the official package's C++ unit tests (tests/cpp, gtest), built
#      with the official headers and run on both libraries
#      (tests/official/cpp/run.sh), failing the same way,
#   4b*. every published apache-tvm-ffi release (0.1.0 to 0.1.15.post2) with our
#      library in its package: it imports, its testing library answers as on its
#      own, and the suites of five releases lose no test but the known ones
#      (tests/releases/run.sh),
#   4b''. an install into a prefix (scripts/install.sh, with the reference's C++
#      headers) used from C through
#      pkg-config, CMake and the static library, and from C++ through CMake
#      (tests/packaging/install/run.sh), and the Python wheel (scripts/build-wheel.sh)
#      installed with pip into a fresh venv (tests/packaging/wheel/run.sh),
#      Python -> FFI -> Python recursion until the stack is nearly used
#      up: a RecursionError on ours (tests/python/deep_callbacks.py),
#      finalizers that look globals up while a global is replaced, with
#      identical transcripts under a timeout (tests/python/reentrant.py),
#      TVM 0.27's libraries (tests/data/tvm) without `import tvm`: NumPy's
#      answers and CUDA modules on ours, the official library's failures
#      (tests/python/tvm_libraries.py), and the GPU script where a GPU is
#      (tests/gpu/run.sh; it says why it skipped elsewhere),
#   4c. structural visitors and mutators on both libraries, with identical
#      transcripts (tests/python/structural_diff.py),
#      subclasses defined in Python on every receiver (tests/python/subclass.py),
#      and JSON graphs written by each library read back in the other
#      (tests/python/json_graph_cross.py),
#   4d. C++ custom modules built by the official package's build helpers,
#      run on both libraries with identical transcripts (tests/python/cxx_module.py),
#   4e. a Rust crate depending on the rlib-only package (tests/packaging/rust-dependent),
#      the safe Rust API (tvmffi): the extension example loaded by the
#      official Python package on both libraries with identical transcripts,
#      the host example, the five Rust-author tasks written with the
#      official crate and with tvmffi, cargo package of every crate
#      (tests/rust-api/extension, tests/rust-api/tasks),
#      the library linked by GNU ld and gold (and mold when present) with the
#      same exports (tests/platforms/linkers),
#      the kernel-DSL quick start in Python (examples/kernel_dsl.py) and the
#      C examples, whose exported library is also loaded by the official one,
#   4f. aarch64 Linux: the library cross-built, its cargo tests and C tests
#      run under qemu-aarch64 (tests/platforms/aarch64; installs the cross compilers
#      and qemu-user with apt when missing),
#   4g. macOS: the library built and linked for both Apple targets with zig
#      and ld64.lld, its exports, install name and dependencies checked
#      against the official arm64 dylib (tests/platforms/macos/build.sh), then
#      Windows on ARM64: tvm_ffi.dll built with zig, its exports checked
#      against the official win_arm64 DLL, a C program linked against it
#      (tests/platforms/windows-arm64/build.sh); they run in the background
#      once the official C++ unit tests are done, their log printed at the end,
#   4h. Windows x86-64: tvm_ffi.dll built with mingw-w64, its exports
#      checked against the official win_amd64 DLL, cargo test and the C
#      tests (ours and official, transcript diffs) under Wine
#      (tests/platforms/windows/run.sh; installs mingw-w64 and wine with apt); it
#      runs in the background from stage 3 on, its log printed at the end,
#   5. the C tests under valgrind (leaks and invalid accesses), when present.
#
# Options:
#   --fast        the fast tier, what to run before every commit: the venv,
#                 cargo test, the C tests with their transcript diffs, the
#                 C++ layer compiled in MSVC's ABI;
#   --list        the stages, in order: each one's name and what it runs;
#   --only NAME   one stage (or several: --only a,b), with what it needs
#                 first (the venv, the library, the C tests built, the
#                 official package on our library), in the foreground.
# Each stage is a function `stage_<name>` below, in the order they run.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mkdir -p "$root/target"
cd "$root"
# Every build here starts from a clean tree, once: incremental compilation
# would only add its caches (1.7 GB of the run's disk), and full debug
# information in debug builds triples their size. Line tables are what the
# backtraces and tracebacks the tests read need. (A stage's script may set
# less: the Windows builds carry none.)
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
export CARGO_PROFILE_DEV_DEBUG="${CARGO_PROFILE_DEV_DEBUG:-line-tables-only}"

# The stages in order: name, then what it runs. `bg:` marks the ones that
# run in the background in a full run (beside the stages after them).
stages=(
  "cargo|cargo test"
  "windows|bg:Windows x86-64: tvm_ffi.dll built with mingw, exports, cargo test and the C tests (ours and official) under Wine"
  "c|C tests (ours and official, with transcript diffs)"
  "msvc|the C++ layer compiled in MSVC's ABI for x86-64 and ARM64 (seconds; the Windows stages link it)"
  "asan|C tests on our library under AddressSanitizer and UBSan"
  "loader-tools|loaded code seen by gdb, perf, valgrind, ASan and dladdr; descriptors, copies, mounts (both libraries)"
  "cross-load|cross-loading with the official Python package"
  "official-python|the official Python test suite, on the official library and on ours"
  "official-cpp|the official C++ unit tests (gtest), on the official library and on ours"
  "releases|every published apache-tvm-ffi release on ours: imports, its testing library, the suites of five"
  "macos|bg:macOS: the library built and linked for arm64 and x86-64 (zig, ld64.lld), exports, install name, dependencies; then Windows ARM64: tvm_ffi.dll built with zig, exports, a C program linked"
  "artifacts-python|artifacts through the official Python package on our library"
  "install|install: scripts/install.sh into a prefix; C via pkg-config, CMake and the static library; C++ via CMake"
  "wheel|wheel: scripts/build-wheel.sh, pip install into a fresh venv, import, call, check the mapped library"
  "deep-callbacks|deep Python -> FFI -> Python recursion: a RecursionError on ours (the official library dies)"
  "reentrant|finalizers calling back while a global is replaced: official library, then ours (transcript diff, 120 s timeout)"
  "tvm-libraries|TVM 0.27's libraries without import tvm: NumPy's answers and CUDA modules on ours; the official library fails on them as before"
  "tvm-runtime|every launch against TVM 0.27's own runtime on a logging fake driver (tests/python/tvm_runtime_diff.py): the same driver calls, CUDA source compiled to TVM's image"
  "triton|the kernels of every Triton release 3.0-3.9 launched by the release's own launcher and by ours on a logging fake driver (tests/python/triton_launch_diff.py): the same driver calls"
  "gpu|device code on a GPU (tests/gpu/run.sh; skipped without one)"
  "structural|structural visitors and mutators: official library, then ours (transcript diff)"
  "subclass|subclasses defined in Python, on every receiver: official library, then ours (transcript diff)"
  "json-graph|JSON graphs across runtimes: written by each library, read by the other, same bytes"
  "cxx-module|C++ custom modules through the official Python package (official library, then ours)"
  "fuzz|fuzzing every parser of untrusted bytes (bounded)"
  "rust-dependent|a Rust crate on the rlib-only package: builds, runs, makes no C library, the docs snippet, cargo doc"
  "rust-authors|Rust authors (tvmffi): the extension on both libraries, hosts loading every kind of extension, the six tasks against the official crate, cargo publish --dry-run"
  "linkers|any linker: the library linked by GNU ld and by gold exports exactly what this build exports"
  "kernel-dsl|kernel-DSL quick start (Python): on ours, then the exported library on the official package"
  "examples|examples (C): the main example, and artifacts loaded by ours and by the official library"
  "aarch64|aarch64 Linux: cross-built, exports, cargo test and the C tests (ours and official) under qemu-aarch64"
  "valgrind|C tests under valgrind (our library): no leaks, no invalid accesses"
)
fast_stages=(cargo c msvc)

mode=all
only=()
usage() { echo "usage: tests/run-all.sh [--fast | --list | --only NAME[,NAME...]]" >&2; exit 2; }
case "${1:-}" in
  "") ;;
  --fast) mode=fast ;;
  --list)
    for s in "${stages[@]}"; do
      what="${s#*|}"
      case "$what" in bg:*) what="${what#bg:} (in the background)" ;; esac
      printf '%-16s %s\n' "${s%%|*}" "$what"
    done
    exit 0
    ;;
  --only)
    [ -n "${2:-}" ] || usage
    mode=only
    IFS=, read -r -a only <<<"$2"
    for name in "${only[@]}"; do
      printf '%s\n' "${stages[@]}" | grep -q "^$name|" || { echo "no stage named $name (tests/run-all.sh --list)" >&2; exit 2; }
    done
    ;;
  *) usage ;;
esac

# Each stage prints its name and, at the end, how long it took and the CPU
# time its processes used (user + system, in seconds: on 2 cores a stage
# that keeps both busy shows twice its wall time).
stage_names=()
stage_secs=()
stage_cpus=()
stage_name=""
stage_start=$SECONDS
children_cpu() { # CPU time used so far by the finished child processes, in 1/100 s
  # (cutime and cstime of this shell, in clock ticks; `times` in a pipe or
  # a command substitution would report a subshell's.)
  awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); printf "%d", ($14 + $15) * 100 / hz }' "/proc/${1:-$$}/stat"
}
stage_cpu_start=0
stage() { # name ("" ends the last stage)
  local cpu
  cpu=$(children_cpu)
  if [ -n "$stage_name" ]; then
    stage_names+=("$stage_name")
    stage_secs+=($((SECONDS - stage_start)))
    # Background stages that ended meanwhile were counted with this one
    # (the shell collects its children as they exit): they have their own
    # lines. (Clamped: each figure was rounded on its own.)
    background_ended
    stage_cpus+=($((cpu - stage_cpu_start > bg_ended_cpu ? cpu - stage_cpu_start - bg_ended_cpu : 0)))
  fi
  stage_name="$1"
  stage_start=$SECONDS
  stage_cpu_start=$cpu
  [ -z "$1" ] || echo "== $1 ($(date +%T), $(disk_free) free)"
}
disk_free() { # the space left where target/ lies, for the stage headers
  df -Ph "$root/target" | awk 'NR == 2 { print $4 }'
}
# A stage that keeps a core idle most of the time (emulated programs run
# one after another, a compiler front end) runs in the background, beside
# the stages that follow it: its output goes to its log, printed when the
# last foreground stage is done, and its failure fails the run then.
bg_names=()
bg_pids=()
bg_logs=()
bg_records=()
bg_counted=()
bg_running=() # the process groups not yet waited for, which an early exit stops
background() { # name log command...
  local name="$1" log="$2"
  shift 2
  rm -f "$log.status"
  echo "== $name: in the background from $(date +%T), its log in $log"
  # (In a process group of its own, which the run stops if it fails first.)
  set -m
  (
    start=$SECONDS
    me=$BASHPID
    rc=0
    "$@" >"$log" 2>&1 </dev/null || rc=$?
    echo "$rc $((SECONDS - start)) $(children_cpu "$me")" >"$log.status"
    exit "$rc"
  ) >>"$log" 2>&1 </dev/null &
  set +m
  bg_names+=("$name")
  bg_running[${#bg_pids[@]}]=$!
  bg_pids+=($!)
  bg_logs+=("$log")
}
background_ended() { # sets bg_ended_cpu: the CPU of those ended since the last call
  local i rc secs cpu
  bg_ended_cpu=0
  for i in "${!bg_pids[@]}"; do
    [ -z "${bg_counted[$i]:-}" ] && [ -f "${bg_logs[$i]}.status" ] || continue
    read -r rc secs cpu <"${bg_logs[$i]}.status"
    bg_ended_cpu=$((bg_ended_cpu + cpu))
    bg_counted[$i]=1
  done
}
stop_background() {
  local rc=$? pid
  for pid in "${bg_running[@]}"; do kill -- "-$pid" 2>/dev/null || true; done
  # A failure says where it happened, and how much disk was left (a full
  # disk shows up as a compiler's or linker's I/O error).
  [ "$rc" -eq 0 ] || echo "FAILED in: ${stage_name:-setup} (exit $rc; $(disk_free) left where target/ lies)"
}
trap stop_background EXIT
wait_background() { # waits for each background stage, prints its log
  local i rc secs cpu
  [ ${#bg_pids[@]} -gt 0 ] || return 0
  stage "waiting for the background stages"
  for i in "${!bg_pids[@]}"; do
    rc=0
    wait "${bg_pids[$i]}" || rc=$?
    unset "bg_running[$i]"
    echo "== ${bg_names[$i]} (in the background; its log, ${bg_logs[$i]}:)"
    cat "${bg_logs[$i]}"
    [ "$rc" -eq 0 ] || { echo "FAILED: ${bg_names[$i]} (exit $rc)"; exit 1; }
    read -r _ secs cpu <"${bg_logs[$i]}.status"
    bg_records+=("$secs" "$cpu" "${bg_names[$i]} [background]")
  done
  stage ""
  for ((i = 0; i < ${#bg_records[@]}; i += 3)); do
    stage_secs+=("${bg_records[$i]}")
    stage_cpus+=("${bg_records[$((i + 1))]}")
    stage_names+=("${bg_records[$((i + 2))]}")
  done
}
# What each stage passed: its count, added up at the end (a stage whose
# log reports none adds 0).
passed_total=0
passed() { # count
  passed_total=$((passed_total + ${1:-0}))
}
count() { # pattern log: the sum of field 2 of the log's lines matching it
  awk -v p="$1" '$0 ~ p { n += ($2 == "skipped" ? 0 : $2) } END { print n + 0 }' "$2"
}

# What the stages need, made when a stage runs alone (a full run makes each
# in the stage that owns it).
venv="$root/target/venv"
# The Triton releases of tests/data/triton, each launched by its own launcher.
TRITON_RELEASES="${TRITON_RELEASES:-3.0.0 3.1.0 3.2.0 3.3.1 3.4.0 3.5.1 3.6.0 3.7.1 3.8.0 3.9.0}"
# Every stage tests the library `cargo test` builds in this profile.
profile=testing
lib="$root/target/$profile/libtvm_ffi.so"
need_setup() {
  stage "setup: the venv with cmake and the official wheel"
  if [ ! -x "$venv/bin/cmake" ] || [ ! -d "$(echo "$venv"/lib/python3*/site-packages/tvm_ffi)" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check cmake "apache-tvm-ffi==0.1.15.post2"
  fi
  # pkgconf (PyPI's build of pkg-config) for the install test.
  [ -x "$venv/bin/pkgconf" ] || "$venv/bin/pip" install --quiet --disable-pip-version-check pkgconf
  official_dir="$(echo "$venv"/lib/python3*/site-packages/tvm_ffi)"
}
need_library() { # the cdylib, built as the cargo stage builds it
  # (With the examples selected, so that dev-dependencies take part in
  # feature resolution as they do for `cargo test`: one build of the crate
  # serves both.)
  cargo build --profile "$profile" --locked --lib --examples
}
need_c_tests() { # the C tests, configured and built against both libraries
  "$venv/bin/cmake" -S c-tests -B target/c-tests -DTVM_FFI_OFFICIAL_DIR="$official_dir" -DTVM_FFI_LIBRARY="$lib" >/dev/null
  "$venv/bin/cmake" --build target/c-tests -j2 >/dev/null
}
need_pkg_ours() { # the official Python package with our library in it (target/suite/pkg-ours)
  [ -d target/suite/pkg-ours/tvm_ffi ] || {
    mkdir -p target/suite/wheel
    "$venv/bin/pip" download --quiet --disable-pip-version-check --no-deps \
      "apache-tvm-ffi==0.1.15.post2" -d target/suite/wheel
    "$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps \
      --target target/suite/pkg-ours target/suite/wheel/apache_tvm_ffi-*.whl
  }
  cp "$lib" target/suite/pkg-ours/tvm_ffi/lib/libtvm_ffi.so
}
ours() { # command...: run with the official package on our library first on the path
  PYTHONPATH="$root/target/suite/pkg-ours" "$@"
}

# The stages, in the order of `stages` above. A background stage's output
# goes to target/<name>.log (also when it runs in the foreground), which
# its `after_<name>` reads once it is done.
stage_cargo() {
  need_library
  TVM_FFI_OFFICIAL_DIR="$official_dir" cargo test --profile "$profile" --locked 2>&1 | tee target/cargo-test.log
  passed "$(awk '/^test result: ok/ { n += $4 } END { print n + 0 }' target/cargo-test.log)"
}
# Windows runs beside the stages from the C tests to the end: alone it
# keeps the 2 cores two-thirds busy (its programs run under Wine one at a
# time), and the stages below leave a core partly idle too. It builds in its
# own directories (target/x86_64-pc-windows-gnu, target/debug for its build
# scripts, target/windows), which no stage below uses.
stage_windows() {
  tests/platforms/windows/run.sh "$venv"
}
after_windows() { passed "$(count '^windows:' target/windows.log)"; }
stage_c() {
  need_c_tests
  "$venv/bin/ctest" --test-dir target/c-tests -j2 --output-on-failure | tee target/ctest.log
  passed "$(awk '/tests passed/ { print $NF }' target/ctest.log)"
}
stage_msvc() {
  tests/tools/msvc-compile.sh "$venv" | tee target/msvc-compile.log
  passed "$(count '^msvc-compile:' target/msvc-compile.log)"
}
stage_asan() {
  "$venv/bin/cmake" -S c-tests -B target/c-tests-asan -DSANITIZE=ON -DTVM_FFI_OFFICIAL_DIR="$official_dir" \
    -DTVM_FFI_LIBRARY="$lib" >/dev/null
  # Only the programs on our library (each test's program has its name):
  # the official variants and the transcript diffs stay out.
  local tests
  mapfile -t tests < <("$venv/bin/ctest" --test-dir target/c-tests-asan -N -E "official|_diff" | awk '/Test +#/ { print $3 }')
  "$venv/bin/cmake" --build target/c-tests-asan -j2 --target "${tests[@]}" >/dev/null
  "$venv/bin/ctest" --test-dir target/c-tests-asan -E "official|_diff" -j2 --output-on-failure | tee target/ctest-asan.log
  passed "$(awk '/tests passed/ { print $NF }' target/ctest-asan.log)"
}
stage_loader_tools() {
  tests/loader-tools/run.sh "$venv" "$lib" | tee target/loader-tools.log
  passed "$(count '^loader-tools:' target/loader-tools.log)"
}
stage_cross_load() {
  "$venv/bin/python" tests/python/cross_load.py "$lib" | tee target/cross-load.log
  passed "$(count '^cross-load:' target/cross-load.log)"
}
stage_official_python() {
  tests/official/python/run.sh "$venv" "$lib" | tee target/suite.log
  passed "$(count '^official-suite:' target/suite.log)"
}
stage_official_cpp() {
  tests/official/cpp/run.sh "$venv" "$lib" | tee target/cxx-suite.log
  passed "$(count '^cxx-suite:' target/cxx-suite.log)"
}
stage_releases() {
  tests/releases/run.sh "$venv" "$lib" | tee target/releases.log
  passed "$(count '^releases:' target/releases.log)"
}
# macOS beside the stages from here to the end (its own target directory,
# target/macos-link): they leave part of a core idle, the fuzzers and the
# Rust stages while their compilers' front ends run one crate at a time.
# Then Windows on ARM64 (zig as well; its own target directory).
stage_macos() {
  tests/platforms/macos/build.sh "$venv" && tests/platforms/windows-arm64/build.sh "$venv"
}
after_macos() { passed "$(count '^(macos|windows-arm64):' target/macos.log)"; }
stage_artifacts_python() {
  need_pkg_ours
  ours "$venv/bin/python" tests/python/artifacts.py | tee target/artifacts-python.log
  passed "$(count '^artifacts-python:' target/artifacts-python.log)"
}
stage_install() {
  tests/packaging/install/run.sh "$venv" "$profile" | tee target/install-test.log
  passed "$(count '^install:' target/install-test.log)"
}
stage_wheel() {
  tests/packaging/wheel/run.sh "$profile" | tee target/wheel-test.log
  passed "$(count '^wheel:' target/wheel-test.log)"
}
stage_deep_callbacks() {
  need_pkg_ours
  "$venv/bin/python" tests/python/deep_callbacks.py --official
  ours "$venv/bin/python" tests/python/deep_callbacks.py | tee target/deep-callbacks.log
  passed "$(count '^deep-callbacks-py:' target/deep-callbacks.log)"
}
stage_reentrant() {
  need_pkg_ours
  timeout 120 "$venv/bin/python" tests/python/reentrant.py >target/reentrant-official.log
  ours timeout 120 "$venv/bin/python" tests/python/reentrant.py >target/reentrant-ours.log
  diff target/reentrant-official.log target/reentrant-ours.log
  local n
  n=$(count '^reentrant-py:' target/reentrant-ours.log)
  echo "reentrant-py: $n checks, identical transcripts"
  passed "$n"
}
stage_tvm_libraries() {
  need_pkg_ours
  mkdir -p target/tvm-libraries
  TVM_LIBRARIES_TMP="$root/target/tvm-libraries" ours "$venv/bin/python" tests/python/tvm_libraries.py ours \
    | tee target/tvm-libraries-ours.log
  TVM_LIBRARIES_TMP="$root/target/tvm-libraries" "$venv/bin/python" tests/python/tvm_libraries.py official \
    | tee target/tvm-libraries-official.log
  passed "$(cat target/tvm-libraries-ours.log target/tvm-libraries-official.log | awk '/^tvm-libraries:/ { n += $2 } END { print n + 0 }')"
}
stage_tvm_runtime() {
  need_pkg_ours
  # TVM 0.27 with NumPy, and NVRTC with the headers it needs for CUDA source
  # (the driver and the CUDA runtime are the fakes built below).
  local tv="$root/target/tvm-runtime" fake="$root/target/tvm-runtime-diff/fake" cu
  if ! "$tv/bin/python" -c "import tvm, numpy, cuda.bindings.nvrtc" 2>/dev/null; then
    rm -rf "$tv"
    python3 -m venv "$tv"
    "$tv/bin/pip" install --quiet --disable-pip-version-check apache-tvm==0.27.0 numpy
    "$tv/bin/pip" install --quiet --disable-pip-version-check --no-deps nvidia-cuda-nvrtc==13.5.37 \
      nvidia-cuda-cccl==13.3.5.0.6 nvidia-cuda-runtime==13.5.37 cuda-bindings==13.5.0 cuda-pathfinder==1.9.1
  fi
  mkdir -p "$fake"
  cc -shared -fPIC -O2 -o "$fake/libcuda.so.1" tests/data/fake_cuda.c
  cc -shared -fPIC -O2 -o "$fake/libcudart.so.13" tests/data/fake_cudart.c \
    -Wl,--version-script=tests/data/fake_cudart.map -Wl,-soname,libcudart.so.13 -L"$fake" -l:libcuda.so.1
  cu="$(echo "$tv"/lib/python3*/site-packages/nvidia/cu13)"
  CUDA_PATH="$cu" TVM_CUDA_NVRTC_EXTRA_OPTS="-I$cu/include/cccl" "$tv/bin/python" tests/python/tvm_runtime_diff.py \
    "$tv/bin/python" "$root/target/suite/pkg-ours" "$fake" "$root/target/tvm-runtime-diff" | tee target/tvm-runtime-diff.log
  passed "$(count '^tvm-runtime-diff:' target/tvm-runtime-diff.log)"
}
stage_triton() {
  need_pkg_ours
  # Each release of tests/data/triton from PyPI (its launcher is built with
  # the C compiler and Python's headers at first use), with what the
  # official package needs, in the venv the fixtures were compiled in:
  # Triton records the paths of its own library's source in the cubin's
  # line table, so the same image needs the same path
  # (tests/tools/export-triton-kernels.sh).
  local fake="$root/target/triton-diff/fake" v tv
  mkdir -p "$fake"
  cc -shared -fPIC -O2 -o "$fake/libcuda.so.1" tests/data/fake_cuda.c
  ln -sf libcuda.so.1 "$fake/libcuda.so"  # what Triton's launcher links with
  : > target/triton-launch-diff.log
  for v in $TRITON_RELEASES; do
    tv="/tmp/tvm-ffi-rs-triton/$v/venv"
    if ! "$tv/bin/python" -c "import triton, numpy, typing_extensions" 2>/dev/null; then
      rm -rf "$tv"
      python3 -m venv "$tv"
      "$tv/bin/pip" install --quiet --disable-pip-version-check "triton==$v" numpy typing_extensions
    fi
    "$tv/bin/python" tests/python/triton_launch_diff.py "$v" "$tv/bin/python" "$root/target/suite/pkg-ours" \
      "$fake" "$root/target/triton-diff/$v" | tee -a target/triton-launch-diff.log
  done
  # The GPU check of Triton's kernels (tests/gpu/run.sh) on the fake driver:
  # the same loads and launches, outputs read back but not compared.
  LD_LIBRARY_PATH="$fake" ours "$venv/bin/python" tests/gpu/triton_check.py --fake \
    > target/triton-gpu-fake.log || { cat target/triton-gpu-fake.log; return 1; }
  tail -1 target/triton-gpu-fake.log
  passed "$(( $(count '^triton-launch-diff:' target/triton-launch-diff.log) \
    + $(count '^triton-gpu:' target/triton-gpu-fake.log) ))"
}
stage_gpu() {
  tests/gpu/run.sh "$lib"
}
stage_structural() {
  need_pkg_ours
  "$venv/bin/python" tests/python/structural_diff.py >target/structural-official.log
  ours "$venv/bin/python" tests/python/structural_diff.py --ours >target/structural-ours.log
  diff target/structural-official.log <(grep -v '^structural-ours-only:' target/structural-ours.log)
  local n
  n=$(count '^structural-(diff|ours-only):' target/structural-ours.log)
  echo "structural: $n checks, identical transcripts"
  passed "$n"
}
stage_subclass() {
  need_pkg_ours
  "$venv/bin/python" tests/python/subclass.py >target/subclass-py-official.log
  ours "$venv/bin/python" tests/python/subclass.py --ours >target/subclass-py-ours.log
  diff target/subclass-py-official.log \
    <(grep -v -e '^ours-only:' -e '^subclass-py-ours-only:' target/subclass-py-ours.log)
  local n
  n=$(count '^subclass-py(-ours-only)?:' target/subclass-py-ours.log)
  echo "subclass-py: $n checks, identical transcripts"
  passed "$n"
}
stage_json_graph() {
  need_pkg_ours
  rm -rf target/json-graphs
  "$venv/bin/python" tests/python/json_graph_cross.py write target/json-graphs/official
  ours "$venv/bin/python" tests/python/json_graph_cross.py read target/json-graphs/official | tee target/json-graph-cross.log
  ours "$venv/bin/python" tests/python/json_graph_cross.py write target/json-graphs/ours
  "$venv/bin/python" tests/python/json_graph_cross.py read target/json-graphs/ours | tee -a target/json-graph-cross.log
  passed "$(count '^json-graph-cross:' target/json-graph-cross.log)"
}
stage_cxx_module() {
  need_pkg_ours
  PATH="$venv/bin:$PATH" "$venv/bin/python" tests/python/cxx_module.py target/cxx-module/official >target/cxx-module-official.log
  PATH="$venv/bin:$PATH" ours "$venv/bin/python" tests/python/cxx_module.py target/cxx-module/ours >target/cxx-module-ours.log
  diff target/cxx-module-official.log target/cxx-module-ours.log
  local n
  n=$(count '^cxx-module:' target/cxx-module-ours.log)
  echo "cxx-module: $n checks, identical transcripts"
  passed "$n"
}
stage_fuzz() {
  fuzz/run.sh "${TVM_FFI_FUZZ_SECONDS:-10}" || { echo "fuzzing found a failure (target/fuzz-*.log, fuzz/artifacts)"; exit 1; }
  echo "fuzzing: no crash"
}
stage_rust_dependent() {
  tests/packaging/rust-dependent/run.sh | tee target/rust-dependent.log
  passed "$(count '^rust-dependent:' target/rust-dependent.log)"
}
stage_rust_authors() {
  # (After the crate above: these debug builds reuse its runtime rlib.)
  need_pkg_ours
  tests/rust-api/extension/run.sh "$venv" "$lib" | tee target/rust-extension.log
  tests/rust-api/tasks/run.sh "$venv" "$lib" | tee target/rust-tasks.log
  passed "$(cat target/rust-extension.log target/rust-tasks.log | awk '/^rust-(extension|tasks):/ { n += $2 } END { print n + 0 }')"
}
stage_linkers() {
  # (After the Rust crate above: this build reuses its dependencies.)
  local linkers=(bfd gold)
  command -v mold >/dev/null 2>&1 && linkers+=(mold)
  tests/platforms/linkers/run.sh "$lib" "${linkers[@]}" 2>&1 |
    grep -v -e '^warning: the gold linker' -e '^  [|=]' -e '^$' | tee target/linkers.log
  passed "$(count '^linkers:' target/linkers.log)"
}
stage_kernel_dsl() {
  need_pkg_ours
  rm -rf target/kernel-dsl
  ours "$venv/bin/python" examples/kernel_dsl.py target/kernel-dsl
  "$venv/bin/python" examples/kernel_dsl.py --call target/kernel-dsl/scale_add.so
}
stage_examples() {
  cargo run --profile "$profile" --locked --example add_one_c
  TVM_FFI_OFFICIAL_DIR="$official_dir" cargo run --profile "$profile" --locked --example artifacts_c
}
stage_aarch64() {
  tests/platforms/aarch64/run.sh "$venv" "$lib" "$profile" | tee target/aarch64.log
  passed "$(count '^aarch64:' target/aarch64.log)"
}
stage_valgrind() {
  if ! command -v valgrind >/dev/null 2>&1; then
    echo "valgrind: skipped (not installed)"
    return 0
  fi
  [ -d target/c-tests ] || need_c_tests
  # Two at a time (each valgrind runs its program on one core); xargs fails
  # when one does, after its report.
  ls target/c-tests/test_* | grep -v '_official$' |
    xargs -P 2 -I{} sh -c 'valgrind --quiet --leak-check=full --show-leak-kinds=definite \
      --errors-for-leak-kinds=definite --error-exitcode=3 "$1" >/dev/null && echo "valgrind clean: ${1##*/}"' sh {}
}

report() { # what passed: the stages' seconds (wall, CPU), then the count
  echo "== all tests passed; seconds per stage (wall, CPU):"
  for i in "${!stage_names[@]}"; do
    printf "%6d %6d  %s\n" "${stage_secs[$i]}" "$((stage_cpus[$i] / 100))" "${stage_names[$i]}"
  done
  printf "%6d %6d  total\n" "$SECONDS" "$(($(children_cpu) / 100))"
  echo "disk: target/ holds $(du -sh "$root/target" | cut -f1), $(disk_free) left"
  echo "summary: $passed_total passed, 0 failed"
}

need_setup
case "$mode" in
  fast) selected=("${fast_stages[@]}") ;;
  only) selected=("${only[@]}") ;;
  all)
    selected=()
    for s in "${stages[@]}"; do selected+=("${s%%|*}"); done
    # The Debian packages that later stages install when they are missing,
    # put in while `cargo test` compiles (downloads and unpacking leave the
    # cores mostly to the compiler). Each stage still installs what it
    # needs itself.
    early=()
    for p in linux-perf libgtest-dev gcc-aarch64-linux-gnu g++-aarch64-linux-gnu qemu-user clang lld-16 \
      gcc-mingw-w64-x86-64-posix g++-mingw-w64-x86-64-posix wine wine64; do
      dpkg-query -W -f '${Status}' "$p" 2>/dev/null | grep -q ' installed$' || early+=("$p")
    done
    if [ ${#early[@]} -gt 0 ] && command -v apt-get >/dev/null; then
      background "Debian packages for later stages, installed early: ${early[*]}" target/apt-early.log \
        sh -c 'tests/tools/apt-install.sh target/apt-early-apt.log "$@" && echo installed ||
          echo "not installed now (target/apt-early-apt.log); each stage installs its own"' sh "${early[@]}"
    fi
    ;;
esac
# A stage run alone (or a fast-tier stage) needs the library; the cargo
# stage builds it in a full run.
[ "$mode" = all ] || [[ " ${selected[*]} " == *" cargo "* ]] || need_library
after=()
for name in "${selected[@]}"; do
  line="$(printf '%s\n' "${stages[@]}" | grep "^$name|")"
  what="${line#*|}"
  fn="stage_${name//-/_}"
  if [[ "$what" != bg:* ]]; then
    stage "$what"
    "$fn"
  elif [ "$mode" = all ]; then
    background "${what#bg:}" "target/$name.log" "$fn"
    after+=("after_$name")
  else
    stage "${what#bg:}"
    "$fn" 2>&1 | tee "target/$name.log"
    "after_$name"
  fi
done
wait_background
stage ""
for f in "${after[@]}"; do "$f"; done
report
[ "$mode" != fast ] || echo "(the fast tier; tests/run-all.sh with no option runs every stage)"
