#!/usr/bin/env bash
# Remakes docs/images/report-replay.png, the README's picture: cooks the bundled sample clip
# (samples/data/walk_turn.bvh, with its mirrored copy), writes mmcook report's page of it and
# takes the skeleton replay section in headless Chromium. Usage, from the repository root:
#
#   bash scripts/report-screenshot.sh [MMCOOK] [OUT.png]
#
# MMCOOK defaults to build/bin/mmcook (bash samples/demo.sh builds it); OUT.png to
# docs/images/report-replay.png. Needs chromium, chromium-driver and python3-selenium
# (bash scripts/install-deps.sh installs them).
set -euo pipefail
cd "$(dirname "$0")/.."

mmcook=${1:-build/bin/mmcook}
out=${2:-docs/images/report-replay.png}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cp samples/data/walk_turn.bvh "$work/walk_turn.bvh"
cat > "$work/sample.toml" <<'EOF'
[[clip]]
source = "walk_turn.bvh"
tags = ["locomotion"]
mirror = true
EOF
"$mmcook" --quiet cook "$work/sample.toml" -o "$work/sample.mmdb" --no-cache
"$mmcook" report "$work/sample.mmdb" -o "$work/sample.html" --characters 4 --seconds 20
mkdir -p "$(dirname "$out")"
# Debian's python3 has the selenium package; a python3 earlier on PATH may not.
python=/usr/bin/python3
[ -x "$python" ] || python=python3
"$python" scripts/report-screenshot.py "$work/sample.html" "$out"
