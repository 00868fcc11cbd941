# bg:macOS: the library built and linked for arm64 and x86-64 (zig, ld64.lld), exports, install name, dependencies; then Windows ARM64: tvm_ffi.dll built with zig, exports, a C program linked
# A stage of tests/run-all.sh, sourced by it: the helpers it calls
# (need_*, ours, count, passed, venv, root) are the driver's.
# macOS beside the stages from here to the end (its own target directory,
# target/macos-link): they leave part of a core idle, the fuzzers and the
# Rust stages while their compilers' front ends run one crate at a time.
# Then Windows on ARM64 (zig as well; its own target directory).
stage_macos() {
  tests/platforms/macos/build.sh "$venv" && tests/platforms/windows-arm64/build.sh "$venv"
}
after_macos() { passed "$(count '^(macos|windows-arm64):' target/macos.log)"; }
