"""Per-file report of the official C++ unit tests on both libraries.

usage: report.py OFFICIAL.json OURS.json
Reads gtest's JSON reports (a missing report means the binary crashed before
writing it: every test counts as failed) and prints passed/failed/disabled per
source file for each library. Exits 1 when a test that passes on the official
library does not pass on ours; the last line is `cxx-suite: N passed`.
"""

import collections
import json
import os
import sys


def outcomes(path):
    """{(file, suite.test): 'passed' | 'failed' | 'disabled'}, or None when there is no report."""
    if not os.path.exists(path):
        return None
    result = {}
    with open(path) as f:
        report = json.load(f)
    for suite in report["testsuites"]:
        for test in suite["testsuite"]:
            key = (test["file"].split("tests/cpp/")[-1], f"{suite['name']}.{test['name']}")
            if test.get("status") == "NOTRUN":
                result[key] = "disabled"
            elif test.get("failures") or test.get("result") != "COMPLETED":
                result[key] = "failed"
            else:
                result[key] = "passed"
    return result


def main():
    official = outcomes(sys.argv[1])
    ours = outcomes(sys.argv[2])
    if official is None:
        sys.exit("the official library's run left no report")
    if ours is None:
        print("our library's run left no report (crashed): every test counts as failed")
        ours = {}
    per_file = collections.defaultdict(lambda: collections.Counter())
    for (file, _), outcome in official.items():
        per_file[file]["official " + outcome] += 1
    for (file, _), outcome in ours.items():
        per_file[file]["ours " + outcome] += 1
    print(f"{'file':34} {'official p/f/d':>15} {'ours p/f/d':>15}")
    for file in sorted(per_file):
        c = per_file[file]
        cols = ["/".join(str(c[f"{lib} {o}"]) for o in ("passed", "failed", "disabled"))
                for lib in ("official", "ours")]
        mark = "" if cols[0] == cols[1] else "  <-- differs"
        print(f"{file:34} {cols[0]:>15} {cols[1]:>15}{mark}")
    regressions = sorted(name for key, name in official
                         if official[(key, name)] == "passed" and ours.get((key, name)) != "passed")
    passed = sum(1 for o in ours.values() if o == "passed")
    total_official = sum(1 for o in official.values() if o == "passed")
    print(f"official: {total_official} passed; ours: {passed} passed")
    if regressions:
        print("passing on the official library, not on ours:")
        for name in regressions:
            print("  " + name)
        sys.exit(1)
    print(f"cxx-suite: {passed} passed")


if __name__ == "__main__":
    main()
