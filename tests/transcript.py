"""What the differential Python scripts (structural_diff.py,
subclass_py.py) share: one transcript line per check, showing what a caller
observes (the result's type and repr, or the error's kind and the first line
of its message), and the count of checks."""

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
