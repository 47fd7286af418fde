#!/usr/bin/env python3
"""Counts individual test cases from a `bazel test` run and prints `N passed, N failed`.

Inputs: a file listing the test targets that should have run, the Build Event Protocol JSON file
of the run, and the bazel-testlogs directory. Each target's JUnit XML (gtest writes one; Bazel
synthesizes one for other tests) gives its cases. A target that did not pass and whose XML shows
no failing case (crash, timeout, build failure, no XML at all) counts as one failed case, so a
broken target can never disappear from the count. Each failing case's message is printed, cut to
a few KB (a failed assertion on a large value would otherwise sink in the log's size limit).
"""
import json
import os
import sys
import xml.etree.ElementTree as ET

MAX_MESSAGE = 6000
MAX_FAILURES_SHOWN = 20


def label_to_path(label):
    # //pkg/sub:name -> pkg/sub/name
    pkg, _, name = label.lstrip("/").partition(":")
    return os.path.join(pkg, name)


def main():
    targets_file, bep_file, testlogs = sys.argv[1:4]
    with open(targets_file) as f:
        targets = [line.strip() for line in f if line.strip()]

    status = {}
    if os.path.exists(bep_file):
        with open(bep_file) as f:
            for line in f:
                try:
                    event = json.loads(line)
                except ValueError:
                    continue
                summary = event.get("testSummary")
                if summary is not None:
                    label = event["id"]["testSummary"]["label"]
                    status[label] = summary.get("overallStatus", "PASSED")

    passed = failed = skipped = 0
    broken = []
    failures = []
    for label in targets:
        xml_path = os.path.join(testlogs, label_to_path(label), "test.xml")
        target_status = status.get(label, "NO_STATUS")
        case_failures = 0
        if target_status in ("PASSED", "FLAKY", "FAILED") and os.path.exists(xml_path):
            try:
                tree = ET.parse(xml_path)
            except ET.ParseError:
                tree = None
            if tree is not None:
                for case in tree.iter("testcase"):
                    problem = case.find("failure")
                    if problem is None:
                        problem = case.find("error")
                    if problem is not None:
                        failed += 1
                        case_failures += 1
                        text = problem.get("message") or problem.text or ""
                        failures.append("%s %s.%s:\n%s" % (label, case.get("classname", ""),
                                                             case.get("name", ""),
                                                             text[:MAX_MESSAGE]))
                    elif case.get("result") == "skipped" or case.get("status") == "notrun":
                        skipped += 1
                    else:
                        passed += 1
        if target_status not in ("PASSED", "FLAKY") and case_failures == 0:
            failed += 1
            broken.append("%s (%s)" % (label, target_status))

    for entry in failures[:MAX_FAILURES_SHOWN]:
        print("failed case: " + entry)
    for entry in broken:
        print("broken target: " + entry)
    line = "%d passed, %d failed" % (passed, failed)
    if skipped:
        line += ", %d skipped" % skipped
    print(line)
    return 0 if failed == 0 and targets else 1


if __name__ == "__main__":
    sys.exit(main())
