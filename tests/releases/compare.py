"""Compares a release's own test suite run on its own library and on ours
(two junit reports): every test that passes on its own library must pass on
ours, unless the known list names it (a line `VERSION TEST  # why`, TEST
as `file::name`, with the row of docs/differences.md that says why). A test
lost in the first run of ours counts as passing when it passes when run
again alone (AGAIN.xml): the suites hold timing tests, which two workers
on two busy cores can fail.

Prints one cell of docs/releases.md's table ("281 of 281 pass", with the
known ones after), or the tests lost and exits 1. With --lost, prints the
pytest node ids of the tests lost and not known, one per line, to run again.

usage: compare.py [--lost] VERSION OWN.xml OURS.xml KNOWN.txt [AGAIN.xml]
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "official", "python"))
from report import load  # noqa: E402  (the official suite's junit reader)


def test_id(key):
    module, _, name = key
    return f"{module}::{name}"


def node_id(key):
    """The pytest node id of a junit test (`file.py::Class::name`)."""
    _, classname, name = key
    module, *classes = classname.split(".")
    return "::".join([f"{module}.py", *classes, name])


def main() -> None:
    args = sys.argv[1:]
    lost_only = args[:1] == ["--lost"]
    if lost_only:
        args = args[1:]
    version, own_xml, ours_xml, known_txt = args[:4]
    own, ours = load(own_xml), load(ours_xml)
    if len(args) > 4 and os.path.exists(args[4]):
        ours.update({k: v for k, v in load(args[4]).items() if v == "passed"})
    known = set()
    for line in open(known_txt):
        line = line.split("#")[0].split()
        if len(line) == 2 and line[0] == version:
            known.add(line[1])
    passing = [k for k, status in own.items() if status == "passed"]
    lost = [k for k in passing if ours.get(k) != "passed"]
    unexplained = sorted(test_id(k) for k in lost if test_id(k) not in known)
    if lost_only:
        for k in lost:
            if test_id(k) not in known:
                print(node_id(k))
        return
    if not own:
        sys.exit(f"{version}: no test ran on its own library")
    if unexplained:
        print(f"{version}: {len(unexplained)} tests pass on its own library and not on ours:")
        for t in unexplained:
            print(f"  {t}")
        sys.exit(1)
    cell = f"{len(passing) - len(lost)} of {len(passing)} pass"
    if lost:
        cell += f" ({len(lost)} known, docs/differences.md)"
    print(cell)


if __name__ == "__main__":
    main()
