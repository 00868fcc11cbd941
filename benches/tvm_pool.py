"""TVM's parallel loops on our thread pool against TVM's own, idle and with every core busy.

    python benches/tvm_pool.py OURS_PKG TVM_PYTHON [ROUNDS]

OURS_PKG is a directory holding the official `tvm_ffi` package on our library
(target/suite/pkg-ours after tests/run-all.sh); TVM_PYTHON a Python with
apache-tvm 0.27 (the test command's stage tvm-runtime makes one in
target/tvm-runtime). Two workers stay up for the whole run: one
calls the libraries on ours without `import tvm` (our pool and workspaces),
the other on the official library after `import tvm` (TVM's pool, default
settings on both sides). Each round asks both for one sample, in turn, so
that both see the same machine: a sample is the median of 7 timed batches of
500 calls. Idle rounds first, then busy ones, during which one spinning
process per core runs beside them (started and stopped by this script).
Prints, per case and load, the median over the rounds in µs per call and the
ratio ours / TVM's."""

import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from tvm_libraries import DATA, SETUP  # noqa: E402  the same libraries, loaded the same way

WORKER = SETUP + r"""
import time
cases = {k: cases[k] for k in ("parallel_cpu", "workspace_cpu")}
for f in cases.values():
    for _ in range(1000):
        f()
print("ready", flush=True)
for line in sys.stdin:
    f = cases[line.strip()]
    per = []
    for _ in range(7):
        t0 = time.perf_counter()
        for _ in range(500):
            f()
        per.append((time.perf_counter() - t0) / 500 * 1e6)
    per.sort()
    print(per[3], flush=True)
"""

SPIN = "while True: pass"


def start(python, mode, env):
    p = subprocess.Popen([python, "-c", WORKER, mode, DATA], env=env, stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    if p.stdout.readline().strip() != "ready":
        sys.exit(f"the {mode} worker did not start")
    return p


def sample(p, case):
    p.stdin.write(case + "\n")
    p.stdin.flush()
    return float(p.stdout.readline())


def main():
    ours_pkg, tvm_python = sys.argv[1], sys.argv[2]
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 15
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TVM_NUM_THREADS", "OMP_NUM_THREADS")}
    workers = {"TVM": start(tvm_python, "tvm", clean), "ours": start(tvm_python, "ours", dict(clean, PYTHONPATH=ours_pkg))}
    cases = ["parallel_cpu", "workspace_cpu"]
    print(f"{os.cpu_count()} cores; medians of {rounds} interleaved rounds, µs per call")
    print(f"{'case':<16}{'load':<7}{'TVM':>10}{'ours':>10}{'ratio':>8}")
    for load in ["idle", "busy"]:
        spinners = []
        if load == "busy":
            spinners = [subprocess.Popen([sys.executable, "-c", SPIN]) for _ in range(os.cpu_count())]
        try:
            for case in cases:
                got = {side: [] for side in workers}
                for r in range(rounds):
                    # Alternate who goes first, so neither always follows the other.
                    order = list(workers) if r % 2 == 0 else list(reversed(list(workers)))
                    for side in order:
                        got[side].append(sample(workers[side], case))
                t, o = statistics.median(got["TVM"]), statistics.median(got["ours"])
                print(f"{case:<16}{load:<7}{t:>10.2f}{o:>10.2f}{o / t:>8.2f}", flush=True)
        finally:
            for s in spinners:
                s.kill()
                s.wait()
    for p in workers.values():
        p.stdin.close()
        p.wait()


if __name__ == "__main__":
    main()
