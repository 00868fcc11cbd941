"""Python -> FFI -> Python recursion until the thread's stack is nearly used
up, through the official Python package: on our library the innermost call
raises (kind RecursionError, which Python shows as a RuntimeError, the base
of its own RecursionError) and every level unwinds cleanly; the official
library overflows the C stack and the process dies with SIGSEGV (checked in
a child process when `--official` is given). Runs on a thread with a 384 KiB
stack, so the error comes after a few hundred levels: the Python package
itself spends time quadratic in the depth carrying an error up."""
import subprocess
import sys
import threading

import tvm_ffi

EXPECTED = ("maximum recursion depth exceeded: the thread's stack is nearly used up, "
            "calling the callback would overflow it")


def recurse_on_thread(depth: int, stack_kib: int) -> str:
    """Recurses `depth` levels through a converted Python function on a new
    thread; answers `ok <depth>` or the exception's type and first line."""
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 4 * depth))
    threading.stack_size(stack_kib * 1024)

    def rec(n: int) -> int:
        return 0 if n == 0 else f(n - 1) + 1

    f = tvm_ffi.convert(rec)
    out = []

    def run() -> None:
        try:
            out.append(f"ok {f(depth)}")
        except Exception as e:  # noqa: BLE001 - the transcript shows it
            out.append(f"{type(e).__name__}: {str(e).splitlines()[0]}")

    t = threading.Thread(target=run)
    t.start()
    t.join()
    return out[0]


def recurse_on_main(depth: int) -> str:
    """Recurses `depth` levels on the main thread, with Python's default
    stack and recursion limit: Python's own limit comes first, inside a
    callback, where the package loses the RecursionError while reporting it
    and answers -1 with no error raised; ours then hands the package an
    error saying so instead of NULL (the official library: SIGSEGV)."""

    def rec(n: int) -> int:
        return 0 if n == 0 else f(n - 1) + 1

    f = tvm_ffi.convert(rec)
    try:
        return f"ok {f(depth)}"
    except Exception as e:  # noqa: BLE001 - the transcript shows it
        return f"{type(e).__name__}: {str(e).splitlines()[0]}"


def on_main_in_child() -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, __file__, "--main-child"], capture_output=True, text=True)


def main() -> None:
    if "--child" in sys.argv:
        print(recurse_on_thread(1500, 384))
        return
    if "--main-child" in sys.argv:
        print(recurse_on_main(1500))
        return
    if "--official" in sys.argv:
        child = subprocess.run([sys.executable, __file__, "--child"], capture_output=True, text=True)
        print(f"official: 1500 levels on a 384 KiB thread: exit {child.returncode}")
        child = on_main_in_child()
        print(f"official: 1500 levels on the main thread: exit {child.returncode}")
        return
    passed = 0
    deep = recurse_on_thread(1500, 384)
    print(f"1500 levels on a 384 KiB thread: {deep}")
    assert deep == f"RuntimeError: {EXPECTED}", deep
    passed += 1
    shallow = recurse_on_thread(100, 384)
    print(f"100 levels on a 384 KiB thread: {shallow}")
    assert shallow == "ok 100", shallow
    passed += 1
    main_thread = on_main_in_child()
    print(f"1500 levels on the main thread: exit {main_thread.returncode}: {main_thread.stdout.strip()}")
    assert main_thread.returncode == 0, main_thread.stderr[-2000:]
    assert main_thread.stdout.startswith("RuntimeError: maximum recursion depth exceeded"), main_thread.stdout
    passed += 1
    print(f"deep-callbacks-py: {passed} passed")


if __name__ == "__main__":
    main()
