"""What the Python test scripts share: `show`, one transcript line per
check of a differential script (structural_diff.py, subclass.py), showing
what a caller observes (the result's type and repr, or the error's kind and
the first line of its message); `check`, one `ok:` line per assertion of a
script on our library (artifacts.py, cross_load.py), which stops at the
first failure; and the count of both."""

import sys

checks = 0


def show(tag, fn):
    """Runs `fn` and prints `tag -> type repr` or `tag !! kind message`."""
    global checks
    checks += 1
    try:
        r = fn()
        print(tag, "->", type(r).__name__, repr(r))
    except Exception as e:
        print(tag, "!!", type(e).__name__, str(e).splitlines()[0])


def check(label, cond):
    """Prints `ok: label`, or `FAILED: label` and exits with 1."""
    global checks
    if not cond:
        print(f"FAILED: {label}")
        sys.exit(1)
    checks += 1
    print(f"ok: {label}")
