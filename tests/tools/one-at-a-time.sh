# Sourced by the tools that change what the machine has (apt, rustup):
# `one_at_a_time NAME` waits until no other stage holds target/NAME.lock
# and holds it on descriptor 9 until the script exits (stages run side by
# side). Commands the script starts should close it (`9>&-`), so that
# nothing they leave running keeps the lock.
one_at_a_time() {
  local root
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
  mkdir -p "$root/target"
  exec 9>"$root/target/$1.lock"
  ! command -v flock >/dev/null || flock -w 1200 9
}
