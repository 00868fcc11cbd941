# device code on a GPU (tests/gpu/run.sh; skipped without one)
# A stage of tests/run-all.sh, sourced by it: the helpers it calls
# (need_*, ours, count, passed, venv, root) are the driver's.
stage_gpu() {
  tests/gpu/run.sh "$lib"
}
