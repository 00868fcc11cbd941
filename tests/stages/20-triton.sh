# the kernels of every Triton release 3.0-3.9 launched by the release's own launcher and by ours on a logging fake driver (tests/python/triton_launch_diff.py): the same driver calls
# A stage of tests/run-all.sh, sourced by it: the helpers it calls
# (need_*, ours, count, passed, venv, root) are the driver's.
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
