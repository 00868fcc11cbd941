# every launch against TVM 0.27's own runtime on a logging fake driver (tests/python/tvm_runtime_diff.py): the same driver calls, CUDA source compiled to TVM's image
# A stage of tests/run-all.sh, sourced by it: the helpers it calls
# (need_*, ours, count, passed, venv, root) are the driver's.
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
