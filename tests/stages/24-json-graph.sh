# JSON graphs across runtimes: written by each library, read by the other, same bytes
# A stage of tests/run-all.sh, sourced by it: the helpers it calls
# (need_*, ours, count, passed, venv, root) are the driver's.
stage_json_graph() {
  need_pkg_ours
  rm -rf target/json-graphs
  "$venv/bin/python" tests/python/json_graph_cross.py write target/json-graphs/official
  ours "$venv/bin/python" tests/python/json_graph_cross.py read target/json-graphs/official | tee target/json-graph-cross.log
  ours "$venv/bin/python" tests/python/json_graph_cross.py write target/json-graphs/ours
  "$venv/bin/python" tests/python/json_graph_cross.py read target/json-graphs/ours | tee -a target/json-graph-cross.log
  passed "$(count '^json-graph-cross:' target/json-graph-cross.log)"
}
