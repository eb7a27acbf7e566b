#!/usr/bin/env bash
# Installs what is needed (Debian 12), builds and runs the whole test suite:
#  1. every test under AddressSanitizer and UndefinedBehaviorSanitizer (GCC), the GPU tests on
#     whatever Vulkan device exists (lavapipe on a machine without a GPU) with validation on;
#  2. each libFuzzer target for a short run (clang).
# Tests that need ../shared/data skip with a message when it is absent.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
jobs=$(nproc)

bash scripts/install-deps.sh

export ASAN_OPTIONS="abort_on_error=1:detect_stack_use_after_return=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
# The Vulkan driver and layers are not instrumented and keep some allocations until exit.
export LSAN_OPTIONS="suppressions=$root/tests/sanitizers/lsan.supp:print_suppressions=0"

echo "== tests (AddressSanitizer + UndefinedBehaviorSanitizer)"
cmake -S . -B build/sanitize -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMMDB_SANITIZE=ON \
  -DMMDB_BUILD_TESTS=ON -DMMDB_BUILD_BENCHMARKS=ON -DMMDB_BUILD_SAMPLES=ON
cmake --build build/sanitize -j "$jobs"
ctest --test-dir build/sanitize --output-on-failure -j "$jobs" --timeout 900

echo "== fuzz targets (clang, libFuzzer, short runs)"
CC=clang CXX=clang++ cmake -S . -B build/fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DMMDB_BUILD_FUZZERS=ON -DMMDB_BUILD_TESTS=OFF -DMMDB_BUILD_BENCHMARKS=OFF \
  -DMMDB_BUILD_SAMPLES=OFF -DMMDB_BUILD_GPU=OFF
cmake --build build/fuzz -j "$jobs"
ctest --test-dir build/fuzz --output-on-failure -j "$jobs"
