#!/usr/bin/env python3
"""The compare page of mmcook report laid out by a real browser at 1600 pixels: cooks the walk
and its mirror twice (the second with a heavier trajectory direction weight), writes the page
comparing them, adds a script that goes to switches of character 0 on both sides, and loads it
in headless Chromium (--dump-dom, no driver needed) 1600 pixels wide. Checks that no candidate
table scrolls or passes its side's panel, that a switch lists the frame that was playing and
what the winner beat it by, that each trajectory block is drawn, and that both sides' measure
lanes have the same top.

Exits 77 (ctest SKIP_RETURN_CODE) with a "no browser" message when Chromium is absent.

  report_fits_in_browser.py --mmcook build/dev/bin/mmcook --bvh samples/data/walk_turn.bvh \
      --work DIR
"""
import argparse
import html
import json
import os
import re
import shutil
import subprocess
import sys

SKIP = 77

# Runs after the player: visits up to 12 switches of character 0 that have candidates, on each
# side, and writes what it measured into <body data-check="...">.
CHECK = """<script>
window.addEventListener('load', function () {
  var out = {visited: 0, scrolls: [], wider: [], beat: 0, playing: 0, traj: 0, rows: 0,
             peaks: []};
  var r = window.mmReplay;
  r.sides.forEach(function (d, i) {
    out.peaks.push(JSON.stringify(d.peaks));
    var js = d.switches.filter(function (j) { return j[1] === 0 && j[7].length; });
    js.slice(0, 12).forEach(function (j) {
      r.seek(Math.round(j[0] / d.sampleSeconds) + 1);
      out.visited++;
      var side = d.el, cands = d.cands;
      if (cands.scrollWidth > cands.clientWidth + 1)
        out.scrolls.push(i + ':' + j[0] + ':' + cands.scrollWidth + '>' + cands.clientWidth);
      var right = side.getBoundingClientRect().right;
      cands.querySelectorAll('table.rp-cand').forEach(function (t) {
        if (t.getBoundingClientRect().right > right + 1)
          out.wider.push(i + ':' + j[0] + ':' + t.getBoundingClientRect().right + '>' + right);
        out.rows = Math.max(out.rows, t.querySelectorAll('tr').length);
      });
      if (cands.querySelector('.rp-beat')) out.beat++;
      if (cands.querySelector('tr.playing')) out.playing++;
      out.traj = Math.max(out.traj, cands.querySelectorAll('svg.rp-traj polyline, ' +
                                                          'svg.rp-traj line').length);
    });
  });
  document.body.setAttribute('data-check', JSON.stringify(out));
});
</script>"""


def skip(why):
    print(f"no browser: {why}; install chromium (bash scripts/install-deps.sh), skipped")
    sys.exit(SKIP)


def fail(why):
    print(f"FAIL: {why}")
    sys.exit(1)


def run(cmd):
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        fail(f"{' '.join(cmd)} exited {done.returncode}:\n{done.stdout}{done.stderr}")
    return done.stdout


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mmcook", required=True)
    parser.add_argument("--bvh", required=True, help="a walk to cook (samples/data/walk_turn.bvh)")
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    browser = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")
                    if shutil.which(n)), None)
    if not browser:
        skip("no chromium on PATH")

    os.makedirs(args.work, exist_ok=True)
    clip = f'[[clip]]\nsource = "{os.path.abspath(args.bvh)}"\nname = "walk"\nmirror = true\n'
    paths = {}
    for name, weights in (("a", ""), ("b", "[weights]\ntrajectory_direction = 4.5\n\n")):
        manifest = os.path.join(args.work, f"{name}.toml")
        with open(manifest, "w") as f:
            f.write(weights + clip)
        paths[name] = os.path.join(args.work, f"{name}.mmdb")
        run([args.mmcook, "-q", "cook", "--no-cache", manifest, "-o", paths[name]])
    page = os.path.join(args.work, "compare.html")
    run([args.mmcook, "report", paths["b"], "--compare", paths["a"], "-o", page,
         "--characters", "2", "--seconds", "12"])
    with open(page, encoding="utf-8") as f:
        text = f.read()
    checked = os.path.join(args.work, "compare_checked.html")
    with open(checked, "w", encoding="utf-8") as f:
        f.write(text.replace("</body>", CHECK + "</body>"))

    profile = os.path.join(args.work, "profile")
    dom = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu",
                          f"--user-data-dir={profile}", "--window-size=1600,1200",
                          "--virtual-time-budget=10000", "--dump-dom",
                          "file://" + os.path.abspath(checked)],
                         capture_output=True, text=True, timeout=120)
    found = re.search(r'data-check="([^"]*)"', dom.stdout)
    if not found:
        fail(f"the page's check did not run (exit {dom.returncode}):\n{dom.stderr[-2000:]}")
    out = json.loads(html.unescape(found.group(1)))
    print(json.dumps(out))
    if out["visited"] < 4:
        fail(f"only {out['visited']} switches with candidates visited")
    if out["scrolls"] or out["wider"]:
        fail(f"candidate tables wider than their panel at 1600 px: {out['scrolls'] + out['wider']}")
    if out["rows"] < 4:
        fail(f"the largest candidate table has {out['rows']} rows")
    if out["beat"] < 1 or out["playing"] < 1:
        fail(f"no switch lists the frame playing ({out['beat']} beat lines, "
             f"{out['playing']} playing rows)")
    if out["traj"] < 6:
        fail(f"{out['traj']} trajectory lines drawn at most")
    if len(out["peaks"]) != 2 or out["peaks"][0] != out["peaks"][1]:
        fail(f"the two sides' measure lanes differ in scale: {out['peaks']}")
    print("ok")


if __name__ == "__main__":
    main()
