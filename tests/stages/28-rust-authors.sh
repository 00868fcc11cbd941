# Rust authors (tvmffi): the extension on both libraries, hosts loading every kind of extension, the six tasks against the official crate, cargo publish --dry-run
# A stage of tests/run-all.sh, sourced by it: the helpers it calls
# (need_*, ours, count, passed, venv, root) are the driver's.
stage_rust_authors() {
  # (After the crate above: these debug builds reuse its runtime rlib.)
  need_pkg_ours
  tests/rust-api/extension/run.sh "$venv" "$lib" | tee target/rust-extension.log
  tests/rust-api/tasks/run.sh "$venv" "$lib" | tee target/rust-tasks.log
  passed "$(cat target/rust-extension.log target/rust-tasks.log | awk '/^rust-(extension|tasks):/ { n += $2 } END { print n + 0 }')"
}
