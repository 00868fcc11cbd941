"""Compares what a release's testing library answers on its own library, on
the official latest (when the release imports there) and on ours: each
answer of ours must be its own library's, or, where its own and the
official latest disagree, the official latest's (the current reference
wins where two releases disagree).

Prints one cell of docs/releases.md's table, or the answers that differ
and exits 1.

usage: compare_globals.py OWN.txt LATEST.txt|- OURS.txt
"""

import sys


def main() -> None:
    own = open(sys.argv[1]).read().splitlines()
    latest = None if sys.argv[2] == "-" else open(sys.argv[2]).read().splitlines()
    ours = open(sys.argv[3]).read().splitlines()
    if len(own) != len(ours) or (latest is not None and len(latest) != len(own)):
        sys.exit(f"the transcripts differ in length: {len(own)} own, {len(ours)} ours")
    as_latest, wrong = 0, []
    for i, (o, u) in enumerate(zip(own, ours)):
        if o == u:
            continue
        if latest is not None and latest[i] == u:
            as_latest += 1
        else:
            wrong.append(f"  own:    {o}\n  ours:   {u}\n  latest: {latest[i] if latest else '-'}")
    if wrong:
        print(f"{len(wrong)} answers differ from its own library's (and the official latest's):")
        print("\n".join(wrong))
        sys.exit(1)
    cell = f"the same {len(own) - 1} answers"
    if as_latest:
        cell += f" ({as_latest} as the official latest gives them)"
    print(cell)


if __name__ == "__main__":
    main()
