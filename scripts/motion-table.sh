#!/usr/bin/env bash
# Prints one Markdown table row of mmdb_sample's motion measures per run: 100 characters, 20 s,
# each run as `LABEL|DATABASE|SAMPLE OPTIONS...` on its own line of standard input. For
# BENCHMARKS.md "Keeping the character on its controller". Usage:
#   echo 'bandai-1 mirrored, none|all.mmdb|--sync none' | scripts/motion-table.sh build/bin/mmdb_sample
set -euo pipefail
sample=${1:?usage: motion-table.sh MMDB_SAMPLE < runs}
echo "| run | controller distance p50 / p95 / max (m) | adjusted (m/s, deg/s) | trajectory error mean (m) | toe slide p90 (mm) | phases over 21 mm | switches per character-s | step at a switch (x clips') |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
while IFS='|' read -r label database options; do
  [ -z "$label" ] && continue
  # shellcheck disable=SC2086  # the options are words
  out=$("$sample" "$database" --characters 100 --seconds 20 --quiet-decisions $options 2>&1)
  line() { grep -E "^motion: $1" <<<"$out" | head -1 || true; }
  distance=$(line "controller distance" | sed -E 's/.*p50 ([0-9.]+) m, p95 ([0-9.]+) m, max ([0-9.]+) m; adjusted ([0-9.]+) m\/s, ([0-9.]+) deg\/s/\1 \/ \2 \/ \3|\4, \5/')
  trajectory=$(line "trajectory error" | sed -E 's/.*mean ([0-9.]+) m.*/\1/')
  slide=$(line "planted toes" | sed -E 's/.*p90 ([0-9.]+) mm, max.*/\1/')
  phases=$(line "planted toes" | sed -E 's/.* ([0-9.]+)% drift over.*/\1 %/')
  switches=$(line "[0-9.]+ switches" | sed -E 's/^motion: ([0-9.]+) switches.*/\1/')
  step=$(line "within 0.6 s" | sed -E 's/.*mm, ([0-9.]+x) the clips.*/\1/')
  echo "| $label | ${distance%%|*} | ${distance##*|} | $trajectory | $slide | $phases | $switches | $step |"
done
