#!/usr/bin/env bash
# Runs every test of tvm-ffi-rs on a fresh machine (a Rust toolchain, gcc and
# python3 are all it needs; it installs the rest: docs/testing.md). The
# stages are the files of tests/stages/, in the order of their numbers, each
# defining `stage_<name>` (and `after_<name>` for one that runs in the
# background) with its description on its first line; `--list` lists them.
# This file is the driver: it runs them, times them and counts what passed.
#
# Options:
#   --fast        the fast tier, what to run before every commit: the venv,
#                 cargo test, the C tests with their transcript diffs, the
#                 C++ layer compiled in MSVC's ABI, the build script
#                 type-checked for a Windows host;
#   --list        the stages, in order: each one's name and what it runs;
#   --only NAME   one stage (or several: --only a,b), with what it needs
#                 first (the venv, the library, the C tests built, the
#                 official package on our library), in the foreground.
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

stages=()
for file in tests/stages/[0-9][0-9]-*.sh; do
  # Each file: its description on its first line (`# bg:` for a stage that
  # runs in the background in a full run), then `stage_<name>`.
  name="${file##*/[0-9][0-9]-}"
  name="${name%.sh}"
  stages+=("$name|$(sed -n '1s/^# //p' "$file")")
  # shellcheck source=/dev/null
  . "$file"
done
fast_stages=(cargo c msvc build-host)

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


report() { # what passed: the stages' seconds (wall, CPU), then the count
  echo "== all tests passed; seconds per stage (wall, CPU):"
  for i in "${!stage_names[@]}"; do
    printf "%6d %6d  %s\n" "${stage_secs[$i]}" "$((stage_cpus[$i] / 100))" "${stage_names[$i]}"
  done
  printf "%6d %6d  total\n" "$SECONDS" "$(($(children_cpu) / 100))"
  echo "disk: target/ holds $(du -sh "$root/target" | cut -f1), $(disk_free) left"
  [ "$mode" != all ] || echo "the README's figure: $(tr '\n' ' ' <README.md | grep -o 'It takes about [^;]*')"
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
