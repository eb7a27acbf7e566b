#!/usr/bin/env bash
# The main job on a fresh Debian 12 machine: install what is needed, build, cook the CMU motion
# capture that Debian's assimp-testmodels package ships into an .mmdb, print its summary, and
# drive a few characters with the runtime sample on it.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DMMDB_BUILD_TESTS=OFF -DMMDB_BUILD_BENCHMARKS=OFF -DMMDB_BUILD_SAMPLES=ON
cmake --build build -j "$(nproc)" --target mmcook mmdb_sample

models=/usr/share/assimp/models/BVH
mkdir -p build/demo
build/bin/mmcook cook "$models/01_01.bvh" "$models/01_03.bvh" -o build/demo/cmu.mmdb
build/bin/mmcook inspect build/demo/cmu.mmdb
build/bin/mmdb_sample build/demo/cmu.mmdb --characters 4 --seconds 20 --svg build/demo/trajectory.svg
echo "Wrote build/demo/cmu.mmdb and build/demo/trajectory.svg"
