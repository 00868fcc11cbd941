#!/bin/sh
# The linker shim of libtvm_ffi.so. build.rs installs it in OUT_DIR under the
# names of the linkers (ld, ld.bfd, ld.gold, ld.lld, ld.mold) and puts that
# directory first on the C compiler's program path (-B) for the cdylib link.
#
# Why: the library is linked with two version scripts, rustc's (the C
# functions) and the one build.rs writes from src/abi/exports.txt (the C++ symbols of the official
# library). lld takes both; GNU ld and gold refuse two anonymous version
# scripts ("anonymous version tag cannot be combined with other version
# tags"). The shim merges every --version-script into one anonymous script
# (every global of each, everything else local) and runs the real linker of
# the name it was called by. Without two version scripts it changes nothing.
set -eu
# Never twice in one link: a shim that found itself fails instead of looping.
[ -z "${TVM_FFI_LINK_SHIM:-}" ] || { echo "libtvm_ffi link shim: called by itself ($0)" >&2; exit 1; }
export TVM_FFI_LINK_SHIM=1
name=$(basename "$0")
self_dir=$(cd "$(dirname "$0")" && pwd -P)

# The real linker: as gcc finds it (collect2 names the driver in
# COLLECT_GCC; a cross compiler finds its own ld), else the next one on PATH.
# collect2 also passes the -B directories in COMPILER_PATH: the question is
# asked without them, and an answer in this directory is never taken.
real=""
if [ -n "${COLLECT_GCC:-}" ]; then
  found=$(env -u COMPILER_PATH -u GCC_EXEC_PREFIX "$COLLECT_GCC" -print-prog-name="$name" 2>/dev/null || true)
  case "$found" in
    /*) [ -x "$found" ] && [ "$(cd "$(dirname "$found")" && pwd -P)" != "$self_dir" ] && real="$found" ;;
  esac
fi
if [ -z "$real" ]; then
  saved_ifs=$IFS
  IFS=:
  for d in $PATH; do
    [ -n "$d" ] || continue
    [ "$(cd "$d" 2>/dev/null && pwd -P)" = "$self_dir" ] && continue
    if [ -x "$d/$name" ]; then real="$d/$name"; break; fi
  done
  IFS=$saved_ifs
fi
[ -n "$real" ] || { echo "libtvm_ffi link shim: no linker named $name outside $self_dir" >&2; exit 1; }

scripts=""
count=0
for arg in "$@"; do
  case "$arg" in
    --version-script=*) count=$((count + 1)) ;;
  esac
done
[ "$count" -ge 2 ] || exec "$real" "$@"

# A private directory (mode 0700, fresh name): nothing planted in TMPDIR is
# followed or overwritten.
work=$(mktemp -d "${TMPDIR:-/tmp}/tvm-ffi-link.XXXXXXXX")
trap 'rm -rf "$work"' EXIT
merged="$work/version-script"
for arg in "$@"; do
  shift
  case "$arg" in
    --version-script=*) scripts="$scripts
${arg#--version-script=}" ;;
    *) set -- "$@" "$arg" ;;
  esac
done
# Every name listed under `global:` in any script, once.
printf '%s\n' "$scripts" | while IFS= read -r f; do [ -z "$f" ] || cat "$f"; done | awk '
  { line = $0; gsub(/\/\*[^*]*\*\//, "", line) }
  incomment { if (line ~ /\*\//) { incomment = 0; sub(/.*\*\//, "", line) } else next }
  line ~ /\/\*/ { incomment = 1; sub(/\/\*.*/, "", line) }
  {
    n = split(line, words, /[ \t]+/)
    for (i = 1; i <= n; i++) {
      w = words[i]
      if (w == "" || w == "{") continue
      if (w == "global:") { global = 1; continue }
      if (w == "local:" || w ~ /^}/) { global = 0; continue }
      if (global) { sub(/;$/, "", w); if (w != "") print "    " w ";" }
    }
  }' | sort -u >"$work/globals"
{
  echo "{"
  echo "  global:"
  cat "$work/globals"
  echo "  local:"
  echo "    *;"
  echo "};"
} >"$merged"
"$real" "$@" "--version-script=$merged"
