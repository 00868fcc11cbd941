# any linker: the library linked by GNU ld and by gold exports exactly what this build exports
# A stage of tests/run-all.sh, sourced by it: the helpers it calls
# (need_*, ours, count, passed, venv, root) are the driver's.
stage_linkers() {
  # (After the Rust crate above: this build reuses its dependencies.)
  local linkers=(bfd gold)
  command -v mold >/dev/null 2>&1 && linkers+=(mold)
  tests/platforms/linkers/run.sh "$lib" "${linkers[@]}" 2>&1 |
    grep -v -e '^warning: the gold linker' -e '^  [|=]' -e '^$' | tee target/linkers.log
  passed "$(count '^linkers:' target/linkers.log)"
}
