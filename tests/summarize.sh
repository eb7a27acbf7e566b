#!/usr/bin/env bash
# Reads the JUnit files that `ctest --output-junit` wrote and prints the suite's closing summary:
#
#   skipped: 14 no motion corpus, 0 no Vulkan device, 0 no browser
#   fuzz: fuzz_bvh 512340 runs, fuzz_database 80211 runs, fuzz_manifest 120934 runs
#   summary: 290 passed, 0 failed, 14 skipped
#
# A test may skip for three reasons only: the motion corpus beside the repository is absent (its
# skip message says "no motion corpus"), no Vulkan device exists ("no Vulkan device"), or no
# headless browser for the report's page test is installed ("no browser"). A skip counts only
# when ctest saw it as one (SKIP_REGULAR_EXPRESSION or SKIP_RETURN_CODE). Any other skip, and any
# test ctest did not run, counts as failed and is listed by name. Exits 1 when a test failed,
# else 0.
#
#   bash tests/summarize.sh build/sanitize/junit.xml build/fuzz/junit.xml
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: summarize.sh JUNIT.xml..." >&2; exit 2; }
for f in "$@"; do
  [ -f "$f" ] || { echo "summarize.sh: $f: no such JUnit file (did ctest run?)" >&2; exit 1; }
done

awk '
  function attr(line, key,    m) {
    if (match(line, key "=\"[^\"]*\"")) {
      m = substr(line, RSTART + length(key) + 2, RLENGTH - length(key) - 3)
      return m
    }
    return ""
  }
  function finish() {
    if (name == "") return
    if (status == "run") {
      passed++
    } else if (status == "notrun" && skip_matched && output ~ /no motion corpus/) {
      skipped++; no_corpus++
    } else if (status == "notrun" && skip_matched && output ~ /no Vulkan device/) {
      skipped++; no_vulkan++
    } else if (status == "notrun" && skip_matched && output ~ /no browser/) {
      skipped++; no_browser++
    } else {
      failed++
      why = (status == "fail") ? "failed" : (skip_matched ? "skipped for a reason that is not allowed" : "did not run")
      bad = bad "  " name ": " why "\n"
    }
    if (output ~ /Done [0-9]+ runs in/) {
      runs = output
      sub(/.*Done /, "", runs); sub(/ runs in.*/, "", runs)
      fuzz = fuzz (fuzz == "" ? "" : ", ") name " " runs " runs"
    }
    name = ""
  }
  /<testcase / {
    finish()
    name = attr($0, "name"); status = attr($0, "status"); output = ""; skip_matched = 0
    next
  }
  /<skipped message="(SKIP_REGULAR_EXPRESSION_MATCHED|SKIP_RETURN_CODE=[0-9]+)"/ { skip_matched = 1 }
  name != "" { output = output "\n" $0 }
  /<\/testcase>/ { finish() }
  END {
    finish()
    if (bad != "") printf "not passed:\n%s", bad
    printf "skipped: %d no motion corpus, %d no Vulkan device, %d no browser\n", no_corpus, no_vulkan,
      no_browser
    if (fuzz != "") printf "fuzz: %s\n", fuzz
    printf "summary: %d passed, %d failed, %d skipped\n", passed, failed, skipped
    exit failed > 0 ? 1 : 0
  }
' "$@"
