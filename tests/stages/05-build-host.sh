# the build script type-checked for a Windows build host (x86-64, GNU and MSVC), as docs/platforms.md builds there
# A stage of tests/run-all.sh, sourced by it: the helpers it calls
# (need_*, ours, count, passed, venv, root) are the driver's.
stage_build_host() {
  # build.rs runs on the machine that builds, not the target: this checks it
  # as a program compiled for Windows (tests/build-host), whatever this
  # machine is. Only the targets' standard libraries are needed (rustup).
  local triple n=0
  for triple in x86_64-pc-windows-gnu x86_64-pc-windows-msvc; do
    tests/tools/rustup-target.sh target/rustup-build-host.log "$triple"
    cargo check --quiet -p tvm-ffi-build-host --target "$triple" --target-dir target/build-host
    echo "build-host: build.rs type-checks for a $triple host"
    n=$((n + 1))
  done
  passed "$n"
}
