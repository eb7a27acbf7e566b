#!/usr/bin/env bash
# Times mmdb_cook() in a Ninja build on a corpus, one cook against PER_CLIP (BENCHMARKS.md
# "Cooking in a build"): a cold build, a weight edit, a touched source and an edited one, each way.
#   bash scripts/bench-per-clip.sh BUILD_DIR CORPUS_DIR [JOBS]
# BUILD_DIR: a configured and built mmdb build tree (installed into a temporary prefix here);
# CORPUS_DIR: a folder of .bvh files, one mirrored clip each. CLIPS_PER_EDGE=n in the environment
# sets mmdb_cook()'s CLIPS_PER_EDGE (else its default).
set -euo pipefail
build=$(realpath "$1")
corpus=$(realpath "$2")
jobs=${3:-$(nproc)}
work=$(mktemp -d)
if [ -z "${KEEP:-}" ]; then trap 'rm -rf "$work"' EXIT; else echo "work folder: $work"; fi
cmake --install "$build" --prefix "$work/prefix" > /dev/null

# The sources are copied: the script touches one.
mkdir -p "$work/corpus"
cp "$corpus"/*.bvh "$work/corpus/"
corpus=$work/corpus
clips() {
  for f in "$corpus"/*.bvh; do printf '[[clip]]\nsource = "%s"\nmirror = true\n\n' "$f"; done
}
manifest() {  # manifest WEIGHT
  { printf '[weights]\ntrajectory_direction = %s\n\n' "$1"; clips; } > "$work/src/loco.toml"
}
mkdir -p "$work/src"
manifest 1.5
cat > "$work/src/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.25)
project(bench NONE)
find_package(mmdb REQUIRED COMPONENTS cook)
mmdb_cook(OUTPUT one.mmdb MANIFEST loco.toml CACHE one_cache)
add_custom_target(one DEPENDS \${CMAKE_CURRENT_BINARY_DIR}/one.mmdb)
mmdb_cook(OUTPUT per_clip.mmdb MANIFEST loco.toml PER_CLIP ${CLIPS_PER_EDGE:+CLIPS_PER_EDGE $CLIPS_PER_EDGE})
add_custom_target(per_clip DEPENDS \${CMAKE_CURRENT_BINARY_DIR}/per_clip.mmdb)
CMAKE
cmake -S "$work/src" -B "$work/bin" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" > /dev/null

seconds() {  # seconds TARGET: one build of it; prints the wall time and the edges run
  local start end
  start=$(date +%s.%N)
  ninja -C "$work/bin" -j "$jobs" "$1" > "$work/log" 2>&1 || { cat "$work/log"; exit 1; }
  end=$(date +%s.%N)
  printf '%.2f s (%s edges)' "$(echo "$end - $start" | bc)" \
    "$(grep -c '^\[' "$work/log" || true)"
}
count=$(ls "$corpus"/*.bvh | wc -l)
echo "corpus: $count clips (mirrored) from $2; ninja -j $jobs; $(nproc) cores"
echo "cold:          one cook $(seconds one);  PER_CLIP $(seconds per_clip)"
for w in 2.5 1.5 2.5; do
  manifest $w
  echo "weight $w:    one cook $(seconds one);  PER_CLIP $(seconds per_clip)"
done
# A source in the middle of the manifest (in an edge of several clips): touched, then edited (a
# line more at its end: the same motion from a new file, so the link runs too).
middle=$(ls "$corpus"/*.bvh | sed -n "$(( (count + 1) / 2 ))p")
touch "$middle"
echo "touch source:  one cook $(seconds one);  PER_CLIP $(seconds per_clip)"
echo >> "$middle"
echo "edit source:   one cook $(seconds one);  PER_CLIP $(seconds per_clip)"
