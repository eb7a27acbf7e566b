#!/usr/bin/env bash
# Installs what is needed (Debian 12), builds and runs the whole test suite:
#  1. every test under AddressSanitizer and UndefinedBehaviorSanitizer (GCC), the GPU tests on
#     whatever Vulkan device exists (lavapipe on a machine without a GPU) with validation on;
#  2. each libFuzzer target for a short run (clang);
#  Both builds treat compiler warnings as errors (MMDB_WERROR).
#  3. a closing summary (tests/summarize.sh): passed, failed, skipped by reason, fuzz runs.
# Tests that need ../shared/data skip with a message when it is absent; a test that skips for any
# other reason than that or a missing Vulkan device counts as failed.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
jobs=$(nproc)

bash scripts/install-deps.sh

export ASAN_OPTIONS="abort_on_error=1:detect_stack_use_after_return=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
# The Vulkan driver and layers are not instrumented and keep some allocations until exit
# (tests/sanitizers/lsan.supp says how they are told from ours).
export LSAN_OPTIONS="suppressions=$root/tests/sanitizers/lsan.supp:print_suppressions=0"

echo "== tests (AddressSanitizer + UndefinedBehaviorSanitizer)"
cmake -S . -B build/sanitize -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMMDB_SANITIZE=ON -DMMDB_WERROR=ON \
  -DMMDB_BUILD_TESTS=ON -DMMDB_BUILD_BENCHMARKS=ON -DMMDB_BUILD_SAMPLES=ON
cmake --build build/sanitize -j "$jobs"
# A failing suite still goes on to the fuzz targets, so the summary covers both.
rm -f build/sanitize/junit.xml build/fuzz/junit.xml
# Whole outputs in the JUnit files (ctest keeps 1 KiB of a passed test's by default): the summary
# reads skip reasons and the fuzzers' run counts from them.
ctest --test-dir build/sanitize --output-on-failure -j "$jobs" --timeout 900 \
  --test-output-size-passed 1000000 --output-junit "$root/build/sanitize/junit.xml" || true

echo "== fuzz targets (clang, libFuzzer, short runs)"
CC=clang CXX=clang++ cmake -S . -B build/fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMMDB_WERROR=ON \
  -DMMDB_BUILD_FUZZERS=ON -DMMDB_BUILD_TESTS=OFF -DMMDB_BUILD_BENCHMARKS=OFF \
  -DMMDB_BUILD_SAMPLES=OFF -DMMDB_BUILD_GPU=OFF
cmake --build build/fuzz -j "$jobs"
ctest --test-dir build/fuzz --output-on-failure -j "$jobs" --test-output-size-passed 1000000 \
  --output-junit "$root/build/fuzz/junit.xml" || true

echo "== summary"
bash tests/summarize.sh build/sanitize/junit.xml build/fuzz/junit.xml
