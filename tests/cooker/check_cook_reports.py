#!/usr/bin/env python3
"""Checks every cook report the tests kept against schema/cook-report.schema.json.

The tests that run mmcook with --report (test_cli, consumer.cook_at_build_time) copy each report
they see into one folder, and each test_cli test leaves a NAME.ran file there. This checks every
*.json in it with Draft 2020-12 (formats not asserted), and that the text is strict JSON (no
NaN, no key twice) whose warning_count is the number of warnings. Each problem is printed with
the file and the JSON path.

A whole run of test_cli (every test it lists left its .ran file) must have kept at least
--min-reports reports, among them a failed one and a link's: else the check fails, since it
would have checked next to nothing. A part of a run (ctest -R one test) that kept fewer is
skipped (exit 77) once the reports it kept are valid.

Needs Debian's python3-jsonschema (scripts/install-deps.sh).
"""

import argparse
import glob
import json
import os
import subprocess
import sys

SKIPPED = 77


def fail(message):
    print(message, file=sys.stderr)
    sys.exit(1)


def strict_json(text):
    def no_constant(name):
        raise ValueError(f"{name} is not JSON")

    def no_duplicates(pairs):
        seen = {}
        for key, value in pairs:
            if key in seen:
                raise ValueError(f"the key '{key}' appears twice in one object")
            seen[key] = value
        return seen

    return json.loads(text, parse_constant=no_constant, object_pairs_hook=no_duplicates)


def json_path(error):
    path = "$"
    for part in error.absolute_path:
        path += f"[{part}]" if isinstance(part, int) else f".{part}"
    return path


def listed_tests(executable):
    """The tests `executable --gtest_list_tests` names, as SUITE.NAME (disabled ones left out)."""
    out = subprocess.run([executable, "--gtest_list_tests"], check=True, capture_output=True,
                         text=True).stdout
    tests, suite = [], ""
    for line in out.splitlines():
        name = line.split("#")[0].rstrip()
        if not name:
            continue
        if not line.startswith(" "):
            suite = name
        elif "DISABLED_" not in suite + name:
            tests.append(suite + name.strip())
    return tests


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--schema", required=True)
    parser.add_argument("--reports", required=True, help="the folder the tests copied reports to")
    parser.add_argument("--tests-of", action="append", default=[],
                        help="a GoogleTest executable whose tests leave .ran files")
    parser.add_argument("--min-reports", type=int, default=8)
    args = parser.parse_args()

    try:
        import jsonschema
    except ImportError:
        fail("python3-jsonschema is missing: apt-get install python3-jsonschema "
             "(scripts/install-deps.sh installs it)")

    with open(args.schema, encoding="utf-8") as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema, format_checker=None)

    files = sorted(glob.glob(os.path.join(args.reports, "*.json")))
    problems = 0
    kinds = {"failed": 0, "link": 0}
    for path in files:
        name = os.path.basename(path)
        try:
            with open(path, encoding="utf-8") as f:
                doc = strict_json(f.read())
        except (ValueError, UnicodeDecodeError) as e:
            print(f"{name}: not JSON: {e}")
            problems += 1
            continue
        errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
        for error in errors:
            print(f"{name}: {json_path(error)}: {error.message}")
        problems += len(errors)
        if not errors:
            if doc["warning_count"] != len(doc["warnings"]):
                print(f"{name}: $.warning_count: {doc['warning_count']} but "
                      f"{len(doc['warnings'])} warnings")
                problems += 1
            kinds["failed"] += doc["status"] == "failed"
            kinds["link"] += doc["command"] == "link"

    print(f"{len(files)} cook reports in {args.reports}: {kinds['failed']} failed, "
          f"{kinds['link']} of a link, {problems} problems")
    if problems:
        fail(f"{problems} problems against {args.schema}")

    missing = []
    if len(files) < args.min_reports:
        missing.append(f"at least {args.min_reports} reports")
    if not kinds["failed"]:
        missing.append("a failed cook's report")
    if not kinds["link"]:
        missing.append("a link's report")
    if not missing:
        return 0

    expected = [t for exe in args.tests_of for t in listed_tests(exe)]
    ran = {os.path.basename(p)[:-len(".ran")]
           for p in glob.glob(os.path.join(args.reports, "*.ran"))}
    not_run = [t for t in expected if t not in ran]
    lacking = " and ".join(missing)
    if not not_run:
        fail(f"every test ran, yet the reports lack {lacking}: a test that wrote them no longer "
             f"does, or no longer keeps them for this check")
    print(f"skipped: {len(not_run)} of {len(expected)} tests did not run (the first: "
          f"{not_run[0]}), and the reports lack {lacking}")
    return SKIPPED


if __name__ == "__main__":
    sys.exit(main())
