"""Compares two junit reports of the official suite (the official library's
run and ours), per file, and fails when a test that passes on the official
library does not pass on ours. Counts are given per half: the core half and
the structural half (the reflection-driven algorithms).

usage: report.py OFFICIAL.xml OURS.xml
"""

import collections
import sys
import xml.etree.ElementTree as ET

# The files of the structural half.
STRUCTURAL = ("test_access_path", "test_serialization", "test_structural", "test_dataclass_")


def load(path):
    results = {}
    for case in ET.parse(path).iter("testcase"):
        parts = case.get("classname", "").split(".")
        module = next((p for p in parts if p.startswith("test_")), parts[0])
        status = "passed"
        for child in case:
            if child.tag in ("failure", "error"):
                status = "failed"
            elif child.tag == "skipped":
                status = "skipped"
        results[(module, case.get("classname"), case.get("name"))] = status
    return results


def counts(results):
    table = collections.defaultdict(collections.Counter)
    for (module, _, _), status in results.items():
        table[module][status] += 1
    return table


def main() -> None:
    official, ours = load(sys.argv[1]), load(sys.argv[2])
    a, b = counts(official), counts(ours)
    fmt = "{:<38} {:>20} {:>20}"
    print(fmt.format("file (passed/failed/skipped)", "official", "ours"))
    totals = {"core": [0, 0], "structural": [0, 0]}
    for module in sorted(set(a) | set(b)):
        half = "structural" if module.startswith(STRUCTURAL) else "core"
        cell = lambda c: f"{c['passed']}/{c['failed']}/{c['skipped']}"  # noqa: E731
        print(fmt.format(f"{module} [{half}]", cell(a[module]), cell(b[module])))
        totals[half][0] += a[module]["passed"]
        totals[half][1] += b[module]["passed"]
    regressions = [
        key for key, status in official.items() if status == "passed" and ours.get(key) != "passed"
    ]
    for half, (off, our) in totals.items():
        print(f"{half} half: {our} passed on ours, {off} on the official library")
    for module, cls, name in regressions[:50]:
        print(f"REGRESSION {cls}::{name}: {ours.get((module, cls, name), 'missing')}")
    if regressions:
        sys.exit(f"{len(regressions)} tests pass on the official library but not on ours")
    passed = totals["core"][1] + totals["structural"][1]
    print(f"official-suite: {passed} tests pass on ours, every one that passes on the official library")


if __name__ == "__main__":
    main()
