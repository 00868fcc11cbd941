# a Rust crate on the rlib-only package: builds, runs, makes no C library, the docs snippet, cargo doc
# A stage of tests/run-all.sh, sourced by it: the helpers it calls
# (need_*, ours, count, passed, venv, root) are the driver's.
stage_rust_dependent() {
  tests/packaging/rust-dependent/run.sh | tee target/rust-dependent.log
  passed "$(count '^rust-dependent:' target/rust-dependent.log)"
}
