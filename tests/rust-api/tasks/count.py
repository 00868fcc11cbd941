"""Counts the lines (not blank, not comment-only) and the `unsafe` keywords
of each task program in tests/rust-api/tasks/official and tests/rust-api/tasks/ours
and prints docs/rust.md's comparison table (tests/rust-api/tasks/run.sh checks
that docs/rust.md holds it word for word)."""

import pathlib
import re
import sys

HERE = pathlib.Path(__file__).resolve().parent
TASKS = [
    ("1. a library exporting `add_one(i64)` and a tensor kernel", "task1.rs"),
    ("2. a global from a closure, mixed arguments, an error", "bin/task2.rs"),
    ("3. an object type whose fields other languages see", "bin/task3.rs"),
    ("4. a tensor from Rust data, out through DLPack", "bin/task4.rs"),
    ("5. load a module and call it", "bin/task5.rs"),
    ("6. an in-place kernel `add_one_into(x, y)` writing into `y`", "task6.rs"),
]
OURS = {"task1.rs": "ext/src/task1.rs", "task6.rs": "ext/src/task6.rs"}
NOTES = {
    "task1.rs": ("", ""),
    "bin/task2.rs": ("", ""),
    "bin/task3.rs": ("fields not registered: repr `demo.Point`, equality a TypeError", "repr and equality by field"),
    "bin/task4.rs": ("no DLPack export in Rust (returned to Python, its tensors do reach `numpy.from_dlpack`)", "owned DLPack guard in Rust"),
    "bin/task5.rs": ("", ""),
    "task6.rs": (
        "`data_as_slice_mut(&self)`: `add_one_into(x, x)` runs with two aliasing Rust references",
        "`SliceMut`: `add_one_into(x, x)` refused, errors name the argument",
    ),
}


def measure(path):
    lines = [l.strip() for l in path.read_text().splitlines()]
    code = [l for l in lines if l and not l.startswith("//")]
    return len(code), sum(len(re.findall(r"\bunsafe\b", l)) for l in code)


def cell(path, note):
    n, u = measure(path)
    text = f"{n} lines, {u} `unsafe`"
    return f"{text}; {note}" if note else text


def main():
    out = [
        "| task | official `tvm-ffi` 0.1.15 | `tvmffi` (ours) |",
        "| --- | --- | --- |",
    ]
    for title, rel in TASKS:
        official = HERE / "official/src" / rel
        ours = HERE / "ours" / OURS.get(rel, "host/src/" + rel)
        note_off, note_ours = NOTES[rel]
        out.append(f"| {title} | {cell(official, note_off)} | {cell(ours, note_ours)} |")
    print("\n".join(out))


if __name__ == "__main__":
    sys.exit(main())
