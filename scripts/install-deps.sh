#!/usr/bin/env bash
# Installs everything the project builds, tests and runs with, from Debian 12's packages.
# Safe to run again: apt-get skips what is already there.
set -euo pipefail

packages=(
  cmake ninja-build g++ clang libclang-rt-14-dev pkg-config   # toolchain (clang for the fuzzers)
  llvm                                                        # llvm-symbolizer: sanitizer reports
                                                              # and their suppressions by function
  libassimp-dev zlib1g-dev libmeshoptimizer-dev libglm-dev     # import (Assimp's CMake package
                                                              # links zlib, not pulled in) and math
  flatbuffers-compiler libflatbuffers-dev                     # the .mmdb file
  libcli11-dev libspdlog-dev libtomlplusplus-dev              # the mmcook command line
  libvulkan-dev glslc vulkan-validationlayers mesa-vulkan-drivers  # GPU part; lavapipe runs it on the CPU
  libgtest-dev libgmock-dev libbenchmark-dev                  # tests and benchmarks
  clang-format                                                # the formatting test (clang-format 14)
  g++-mingw-w64-x86-64-posix mingw-w64-x86-64-dev             # the runtime compiles for Windows
  assimp-testmodels                                           # sample BVH and FBX files
  chromium chromium-driver python3-selenium                   # the report's browser test
  python3-jsonschema                                          # cook_report.schema: mmcook's
                                                              # --report against its JSON Schema
)

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "Installing: ${missing[*]}"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# chromedriver reaches Chromium (and selenium reaches chromedriver) through the name `localhost`.
# Every installed Debian resolves it from /etc/hosts, but a minimal root (debootstrap, a container
# image) may have no /etc/hosts at all.
if ! getent hosts localhost >/dev/null; then
  echo "Adding localhost to /etc/hosts (the report's browser test needs it)"
  printf '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n' | $sudo tee -a /etc/hosts >/dev/null
fi
