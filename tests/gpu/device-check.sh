#!/usr/bin/env bash
# GPU tests and benchmark on a machine with a real GPU but no Vulkan loader or build tools (a
# data-centre NVIDIA machine, for instance). Two steps:
#
#   bash tests/gpu/device-check.sh prepare   # here: fetch the loader .debs into .gl/, build the
#                                            # GPU tests and bench_gpu with a static C++ runtime,
#                                            # copy them and the libraries they load into .devbin/
#   bash tests/gpu/device-check.sh run       # there, from the repository root (with .gl/ and
#                                            # .devbin/ copied over): unpack the loader, run the
#                                            # GPU tests (subgroup size of that device) and the
#                                            # benchmark, print a table last
#
# `run` also works here, on lavapipe, to check the bundle before taking it anywhere.
set -euo pipefail
cd "$(dirname "$0")/../.."

case "${1:-}" in
prepare)
  grep -qx '/.gl/' .git/info/exclude 2>/dev/null || echo '/.gl/' >> .git/info/exclude
  grep -qx '/.devbin/' .git/info/exclude 2>/dev/null || echo '/.devbin/' >> .git/info/exclude
  mkdir -p .gl /tmp/amd64-lists/partial
  o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64-lists'
  apt-get $o update >/dev/null
  (cd .gl && apt-get $o download libvulkan1 >/dev/null)
  cmake -S . -B build/device -G Ninja -DCMAKE_BUILD_TYPE=Release -DMMDB_STATIC_RUNTIME=ON \
    -DMMDB_BUILD_TESTS=ON -DMMDB_BUILD_BENCHMARKS=ON -DMMDB_BUILD_SAMPLES=OFF
  cmake --build build/device -j "$(nproc)" --target mmdb_gpu_tests bench_gpu
  rm -rf .devbin && mkdir -p .devbin
  for bin in build/device/bin/mmdb_gpu_tests build/device/bin/bench_gpu; do
    cp "$bin" .devbin/
    ldd "$bin" | awk '/=> \// {print $3}' | while read -r lib; do
      case "$(basename "$lib")" in
        libc.so.*|libm.so.*|libpthread.so.*|libdl.so.*|librt.so.*|ld-linux*|libvulkan.so.*) ;;
        *) cp -L "$lib" .devbin/ ;;
      esac
    done
  done
  ls -1 .gl .devbin
  ;;
run)
  if ! ldconfig -p | grep -q 'libvulkan.so.1'; then
    for f in .gl/*.deb; do dpkg -x "$f" /; done
    ldconfig
  fi
  nvidia_icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
  if [ -z "${VK_DRIVER_FILES:-}" ] && [ -f "$nvidia_icd" ] && ! ls /usr/share/vulkan/icd.d/*.json >/dev/null 2>&1; then
    export VK_DRIVER_FILES=$nvidia_icd
  fi
  export LD_LIBRARY_PATH=$PWD/.devbin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  mkdir -p "${OUT:-build/device-out}"
  out=${OUT:-build/device-out}
  status=0
  .devbin/mmdb_gpu_tests --gtest_brief=1 2>&1 | tee "$out/gpu-tests.txt" || status=1
  # MMDB_BENCH_ARGS narrows the run (e.g. --max-work=2000000 for a quick check on lavapipe).
  .devbin/bench_gpu ${MMDB_VK_DEVICE:+--device=$MMDB_VK_DEVICE} ${MMDB_BENCH_ARGS:---max-work=0} \
    --benchmark_counters_tabular=true --benchmark_out="$out/bench_gpu.json" \
    --benchmark_out_format=json 2>&1 | tee "$out/bench_gpu.txt" || status=1
  echo "== summary"
  grep -E "PASSED|FAILED|SKIPPED" "$out/gpu-tests.txt" | tail -3
  grep -E "^BM_|^Benchmark" "$out/bench_gpu.txt" | cut -c1-160
  exit $status
  ;;
*)
  echo "usage: $0 prepare|run" >&2
  exit 2
  ;;
esac
