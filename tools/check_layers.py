#!/usr/bin/env python3
"""Checks that no C++ file includes a file of a higher plane (docs/adr/0006-one-house.md).

The planes, lowest first:
  common < capability < audit_svc < grantstore_svc < authorizer_svc < envelope_svc
         < console, sharedosd, tools < tests
A file may include its own plane and every lower one. `tests/` (the shared test support under
tests/testing among it) is reachable only from test code: *_test.cc, *_bench.cc, *_fuzzer.cc,
*_fixture.h and files under a testing/, bench/ or fuzz/ directory or named *testing*. Generated
protobuf headers (sharedos/...) and third-party headers sit below every plane.

Known exceptions are listed in tools/check_layers_allow.txt, one `<file> <included plane>` per
line with the reason on the line before; an exception that no longer occurs is itself an error
(the list only shrinks). Prints each violation as `file:line: ...` and ends with
`layers: PASSED` or `layers: FAILED`. Usage: tools/check_layers.py [repository root]
"""
import os
import re
import sys

PLANES = {
    "common": 0,
    "capability": 1,
    "audit_svc": 2,
    "grantstore_svc": 3,
    "authorizer_svc": 4,
    "envelope_svc": 5,
    "console": 6,
    "sharedosd": 6,
    "tools": 6,
    "tests": 7,
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/')
TEST_FILE = re.compile(r"(_test|_bench|_fuzzer|testing|_fixture)\.(cc|h)$")
TEST_DIRS = {"testing", "bench", "fuzz"}


def is_test_code(path):
    parts = path.split("/")
    return bool(TEST_FILE.search(parts[-1])) or any(p in TEST_DIRS for p in parts[:-1])


def sources(root):
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = sorted(d for d in subdirs
                            if not d.startswith((".", "bazel-")) and d != "node_modules")
        for name in sorted(files):
            if name.endswith((".cc", ".h")):
                yield os.path.relpath(os.path.join(directory, name), root)


def load_allowed(root):
    allowed = set()
    path = os.path.join(root, "tools", "check_layers_allow.txt")
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line and not line.startswith("#"):
                    file, plane = line.split()
                    allowed.add((file, plane))
    return allowed


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    root = os.path.abspath(root)
    allowed = load_allowed(root)
    seen_allowed = set()
    violations = 0
    files = 0
    for path in sources(root):
        plane = path.split("/")[0]
        if plane not in PLANES:
            continue
        files += 1
        with open(os.path.join(root, path), errors="replace") as f:
            for number, line in enumerate(f, 1):
                match = INCLUDE.match(line)
                if not match or match.group(1) not in PLANES:
                    continue
                included = match.group(1)
                if included == "tests" and is_test_code(path):
                    continue
                if PLANES[included] <= PLANES[plane]:
                    continue
                if (path, included) in allowed:
                    seen_allowed.add((path, included))
                    continue
                violations += 1
                print(f"{path}:{number}: {plane} includes {included}, a higher plane: "
                      f"{line.strip()}")
    for file, plane in sorted(allowed - seen_allowed):
        violations += 1
        print(f"tools/check_layers_allow.txt: {file} no longer includes {plane}: "
              "remove the exception")
    print(f"layers: {files} files, {violations} violations")
    print("layers: PASSED" if violations == 0 else "layers: FAILED")
    return 0 if violations == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
