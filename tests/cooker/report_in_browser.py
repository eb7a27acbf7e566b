#!/usr/bin/env python3
"""mmcook report in a real browser: cooks two small databases (the second with another block
weight), writes a report of one and a report comparing both (the first as A), opens each page from disk (file://) in headless Chromium and checks that
the browser logged no error, that no resource was fetched, that every section is there with the
counts `mmcook inspect --json` gives, and that a screenshot (written next to the report) is not
blank.

Exits 77 (ctest SKIP_RETURN_CODE) with a "no browser" message when Chromium, its driver or
python3-selenium is absent.

  report_in_browser.py --mmcook build/dev/bin/mmcook --bvh samples/data/walk_turn.bvh --work DIR
"""
import argparse
import base64
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time
import zlib

SKIP = 77
SECTIONS = ["timeline", "features", "coverage", "skeleton", "replay"]


def skip(why):
    print(f"no browser: {why}; install chromium, chromium-driver and python3-selenium "
          "(bash scripts/install-deps.sh), skipped")
    sys.exit(SKIP)


def fail(why):
    print(f"FAIL: {why}")
    sys.exit(1)


def find_browser():
    try:
        from selenium import webdriver  # noqa: F401
    except ImportError:
        skip(f"{sys.executable} cannot import selenium")
    browser = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")
                    if shutil.which(n)), None)
    driver = shutil.which("chromedriver")
    if not browser or not driver:
        skip("no chromium or chromedriver on PATH")
    return browser, driver


def run(cmd):
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        fail(f"{' '.join(cmd)} exited {done.returncode}:\n{done.stdout}{done.stderr}")
    return done.stdout


def png_pixels(path):
    """(width, height, rows of bytes, bytes per pixel) of an 8-bit RGB or RGBA PNG."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        fail(f"{path} is not a PNG")
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or colour not in (2, 6) or interlace:
                fail(f"{path}: unexpected PNG format (depth {depth}, colour {colour})")
            bpp = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, previous = [], bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if kind == 2:  # Up, the commonest: bytewise sums in 16-bit lanes of one big integer
            lanes_line, lanes_prev = bytearray(2 * stride), bytearray(2 * stride)
            lanes_line[1::2], lanes_prev[1::2] = line, previous
            total = int.from_bytes(lanes_line, "big") + int.from_bytes(lanes_prev, "big")
            line = bytearray(total.to_bytes(2 * stride + 1, "big")[2::2])
        elif kind != 0:
            for x in range(stride):
                a = line[x - bpp] if x >= bpp else 0
                b = previous[x]
                c = previous[x - bpp] if x >= bpp else 0
                if kind == 1:
                    line[x] = (line[x] + a) & 255
                elif kind == 3:
                    line[x] = (line[x] + (a + b) // 2) & 255
                elif kind == 4:
                    p = a + b - c
                    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                    line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        previous = line
    return width, height, rows, bpp


def check_screenshot(path):
    width, height, rows, bpp = png_pixels(path)
    colours, counts = set(), {}
    for y in range(0, height, 3):
        row = rows[y]
        for x in range(0, width, 3):
            px = row[x * bpp:x * bpp + 3]
            colours.add(px)
            counts[px] = counts.get(px, 0) + 1
    background = max(counts.values()) / sum(counts.values())
    print(f"  screenshot {os.path.basename(path)}: {width}x{height}, {len(colours)} colours, "
          f"{100 * (1 - background):.0f}% not background")
    if len(colours) < 50 or background > 0.97:
        fail(f"{path} looks blank: {len(colours)} colours, {100 * background:.0f}% one colour")


def check_page(driver, html, expected, compare):
    """expected: {"A": inspect json, "B": ...}."""
    started = time.time()
    driver.get("file://" + os.path.abspath(html))
    loaded = driver.execute_script(
        "var t = performance.getEntriesByType('navigation')[0];"
        "return t ? t.loadEventEnd : -1;")
    print(f"  {os.path.basename(html)}: loaded in {loaded:.0f} ms")
    errors = [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
    if errors:
        fail(f"{html}: the browser logged errors: {errors}")
    fetched = driver.execute_script(
        "return performance.getEntriesByType('resource').map(function (e) { return e.name; });")
    if fetched:
        fail(f"{html}: the page fetched {fetched}")
    q = lambda css: driver.execute_script(  # noqa: E731
        "return document.querySelectorAll(arguments[0]).length;", css)
    attr = lambda css, name: driver.execute_script(  # noqa: E731
        "var e = document.querySelector(arguments[0]);"
        "return e ? e.getAttribute(arguments[1]) : null;", css, name)
    for section in SECTIONS:
        if q(f"section#{section}") != 1:
            fail(f"{html}: no section #{section}")
        if q(f"section#{section} .db") != len(expected):
            fail(f"{html}: section #{section} shows {q(f'section#{section} .db')} databases, "
                 f"not {len(expected)}")
    for label, info in expected.items():
        clips, ranges, blocks = len(info["clips"]), len(info["ranges"]), len(info["feature_blocks"])
        frames = info["frame_count"]
        panel = f".db[data-db='{label}']"
        got = {
            "clip rows": q(f"#timeline {panel} .clip-row"),
            "range bars": q(f"#timeline {panel} .range"),
            "mirrored rows": q(f"#timeline {panel} .clip-row.mirrored"),
            "data-clips": int(attr(f"#timeline {panel} .summary", "data-clips")),
            "data-frames": int(attr(f"#timeline {panel} .summary", "data-frames")),
            "data-ranges": int(attr(f"#timeline {panel} .summary", "data-ranges")),
            "histograms": q(f"#features {panel} .block-hist"),
            "data-blocks": int(attr(f"#features {panel} .summary", "data-blocks")),
        }
        want = {
            "clip rows": clips, "range bars": ranges,
            "mirrored rows": sum(1 for c in info["clips"] if c["mirrored"]),
            "data-clips": clips, "data-frames": frames, "data-ranges": ranges,
            "histograms": blocks, "data-blocks": blocks,
        }
        if got != want:
            fail(f"{html} {label}: the page shows {got}, inspect --json says {want}")
        # Every clip by name, frames as inspect gives them.
        for clip in info["clips"]:
            n = driver.execute_script(
                "var rows = document.querySelectorAll(arguments[0]);"
                "for (var i = 0; i < rows.length; ++i)"
                "  if (rows[i].getAttribute('data-clip') === arguments[1])"
                "    return parseInt(rows[i].getAttribute('data-frames'));"
                "return -1;", f"#timeline {panel} .clip-row", clip["name"])
            if n != clip["frame_count"]:
                fail(f"{html} {label}: clip {clip['name']} shows {n} frames, not "
                     f"{clip['frame_count']}")
        cells = q(f"#coverage {panel} .cov-cell")
        worst = q(f"#coverage {panel} table.worst tr[data-cell]")
        if cells < 20 or worst < 1:
            fail(f"{html} {label}: coverage map with {cells} cells and {worst} listed")
        # The replay: character 0's paths, one marker per jump, its cost over time, clip usage.
        decisions = int(attr(f"#replay {panel} .summary", "data-decisions") or 0)
        jumps = int(attr(f"#replay {panel} .summary", "data-jumps") or -1)
        shown = {"paths": q(f"#replay {panel} svg.path polyline"),
                 "jump markers": q(f"#replay {panel} svg.path circle.jump"),
                 "cost plots": q(f"#replay {panel} svg.cost polyline"),
                 "usage rows": q(f"#replay {panel} table.usage tr") - 1}
        if (decisions < 1 or shown["paths"] != 2 or shown["jump markers"] != jumps or jumps < 1
                or shown["cost plots"] != 1 or shown["usage rows"] < 1
                or shown["usage rows"] > clips):
            fail(f"{html} {label}: replay with {decisions} searches, {jumps} jumps of "
                 f"character 0, showing {shown}")
        # What a player sees: one row per measure, and the clips where feet slide most (the
        # sample's toes plant, so there is at least one).
        # A clip is listed only for its own phases over the limit; with none, a line says so.
        measures = q(f"#replay {panel} table.motion tr") - 1
        tables = q(f"#replay {panel} table.slides")
        sliding = q(f"#replay {panel} table.slides tr") - 1 if tables else 0
        phases = int(attr(f"#replay {panel} table.motion", "data-phases") or -1)
        listed = int(attr(f"#replay {panel} table.slides", "data-clips") or 0) if tables else 0
        split = q(f"#replay {panel} p.slide-split")
        none_note = q(f"#replay {panel} p.no-sliding-clip")
        if (measures != 12 or phases < 1 or split != 1 or sliding != listed
                or not 0 <= sliding <= min(clips, 10) or (sliding == 0) != (none_note == 1)):
            fail(f"{html} {label}: {measures} motion measures over {phases} contact phases, "
                 f"{sliding} clips where feet slide (data-clips {listed}), split line {split}, "
                 f"no-sliding-clip line {none_note}")
        # Hovering a listed cell outlines it in the map (the page's script runs).
        driver.execute_script(
            "var row = document.querySelector(arguments[0]);"
            "row.dispatchEvent(new MouseEvent('mouseenter'));",
            f"#coverage {panel} table.worst tr[data-cell]")
        if q(f"#coverage {panel} .cov-cell.hot") != 1:
            fail(f"{html} {label}: hovering a listed cell does not outline it")
    check_player(driver, html, len(expected))
    check_decoded(driver, html)
    if compare:
        # The page leads with what changed: the weight, the note on cost scales, the measures.
        first = driver.execute_script("return document.querySelector('section').id;")
        weight = q("#changes tr[data-setting='weight.trajectory_direction']")
        note = q("#changes .weights-differ")
        measures = q("#changes table.measures-ab tr") - 1
        if first != "changes" or weight != 1 or note != 1 or measures < 5:
            fail(f"{html}: the compare page begins with #{first}; weight row {weight}, "
                 f"note {note}, {measures} measures")
    if compare and "Compared cell by cell" not in driver.page_source:
        fail(f"{html}: the comparison of two databases of one skeleton is not cell by cell")
    errors = [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
    if errors:
        fail(f"{html}: the browser logged errors: {errors}")
    png = os.path.splitext(html)[0] + ".png"
    height = driver.execute_script("return document.documentElement.scrollHeight;")
    driver.set_window_size(1400, min(max(height, 800), 4000))
    driver.save_screenshot(png)
    check_screenshot(png)
    print(f"  {os.path.basename(html)}: {os.path.getsize(html)} bytes, checked in "
          f"{time.time() - started:.1f} s")


def unpack_predicted(data, count, row, bits):
    """The page's predicted streams (review/replay_player.h packPredicted), decoded from the
    format's description: each value is 2a - b of the same position's two previous samples (the
    previous one for the second sample, 0 for the first) plus a nibble of -6..7, or nibble 8 and
    an int8 in two nibbles; or it is nibble 9 and the value in bits / 4 nibbles. Numbers go
    lowest nibble first; nibbles fill each byte low half first."""
    nibbles = [n for b in data for n in (b & 15, b >> 4)]
    out, q = [], 0

    def number(width):
        nonlocal q
        x = sum(nibbles[q + k] << (4 * k) for k in range(width // 4))
        q += width // 4
        return x - (1 << width) if x >= 1 << (width - 1) else x

    for i in range(count):
        v = nibbles[q]
        q += 1
        if v == 9:
            out.append(number(bits))
            continue
        r = number(8) if v == 8 else v - 16 if v > 9 else v
        p = (2 * out[i - row] - out[i - 2 * row] if i >= 2 * row
             else out[i - row] if i >= row else 0)
        out.append(p + r)
    if (q + 1) // 2 != len(data):
        fail(f"a stream of {len(data)} bytes holds {(q + 1) // 2} bytes of {count} values")
    return out


def checksum(values):
    return sum(v * (i % 7919 + 1) for i, v in enumerate(values)) % 2147483647


# checksum() of a decoded array of the player (window.mmReplay.sides[side][name]).
CHECKSUM_JS = """
  var a = window.mmReplay.sides[arguments[0]][arguments[1]], s = 0;
  for (var i = 0; i < a.length; ++i) s = (s + a[i] * (i % 7919 + 1)) % 2147483647;
  return [a.length, (s + 2147483647) % 2147483647];
"""


def check_decoded(driver, html):
    """The player decodes exactly what the page holds: its poses and ground positions, checked
    against the format decoded here."""
    for el in driver.find_elements("css selector", "script.rp-data"):
        side = int(el.get_attribute("data-side"))
        d = json.loads(driver.execute_script("return arguments[0].textContent;", el))
        row = d["characters"] * d["joints"] * 3
        poses = unpack_predicted(base64.b64decode(d["poses"]), row * d["samples"], row, 16)
        ground = unpack_predicted(base64.b64decode(d["ground"]),
                                  d["characters"] * 4 * d["samples"], d["characters"] * 4, 32)
        for name, want in (("offsets", poses), ("ground", ground)):
            length, got = driver.execute_script(CHECKSUM_JS, side, name)
            if length != len(want) or got != checksum(want):
                fail(f"{html}: side {side}'s {name} decode to {length} values of checksum {got}, "
                     f"the format to {len(want)} of {checksum(want)}")
    print(f"  {os.path.basename(html)}: the player's poses and ground positions are the page's")


def canvas_pixels(driver, css):
    """The drawn pixels of a canvas, as the page holds them (a data URL's text)."""
    return driver.execute_script("return document.querySelector(arguments[0]).toDataURL();", css)


def check_player(driver, html, sides):
    """The skeleton replay: it plays, the scrubber and the switch marks move it, a switch shows
    its candidates; a screenshot of it is written next to the report."""
    sample = lambda: int(driver.execute_script(  # noqa: E731
        "return document.getElementById('rp').getAttribute('data-sample');"))
    view = ".rp-side[data-db='A'] canvas.rp-view"
    if len(driver.find_elements("css selector", "canvas.rp-view")) != sides:
        fail(f"{html}: {sides} skeleton views expected")
    # Plays: two pictures of the view half a second apart differ.
    before, at = canvas_pixels(driver, view), sample()
    driver.execute_script("document.getElementById('rp-play').click();")
    time.sleep(0.5)
    after, moved = canvas_pixels(driver, view), sample()
    driver.execute_script("window.mmReplay.pause();")
    if before == after or moved == at:
        fail(f"{html}: the skeleton replay does not play (sample {at} -> {moved})")
    # The scrubber sets the time.
    driver.execute_script(
        "var s = document.getElementById('rp-scrub'); s.value = '300';"
        "s.dispatchEvent(new Event('input'));")
    shown = driver.find_element("id", "rp-time").text
    if sample() != 300 or shown != f"{301 / 60:.2f} s":
        fail(f"{html}: the scrubber set to step 300 shows sample {sample()} at {shown}")
    # One step on, one back.
    driver.execute_script("document.getElementById('rp-fwd').click();")
    if sample() != 301:
        fail(f"{html}: stepping on from 300 shows sample {sample()}")
    driver.execute_script("document.getElementById('rp-back').click();")
    # A switch mark jumps there and shows the winner and the next candidates.
    marks = driver.find_elements("css selector", ".rp-side[data-db='A'] .rp-switch")
    if len(marks) < 2:
        fail(f"{html}: {len(marks)} switch marks for character 0")
    mark = marks[len(marks) // 2]
    target = int(mark.get_attribute("data-sample"))
    driver.execute_script("arguments[0].click();", mark)
    rows = driver.find_elements("css selector", ".rp-side[data-db='A'] table.rp-cand tr")
    text = driver.find_element("css selector", ".rp-side[data-db='A'] .rp-cands").text
    if sample() != target or len(rows) < 3 or "winner" not in text or "Switch at" not in text:
        fail(f"{html}: the switch mark at sample {target} shows sample {sample()}, "
             f"{len(rows)} candidate rows: {text[:200]}")
    print(f"  {os.path.basename(html)}: the skeleton replay plays, scrubs, steps and shows the "
          f"{len(rows) - 1} candidates of the switch at sample {target}")
    png = os.path.splitext(html)[0] + "_replay.png"
    driver.set_window_size(1400, 1000)
    driver.find_element("id", "skeleton").screenshot(png)
    check_screenshot(png)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mmcook", required=True)
    parser.add_argument("--bvh", required=True, help="a walk to cook (samples/data/walk_turn.bvh)")
    parser.add_argument("--work", required=True, help="folder for databases, pages, screenshots")
    args = parser.parse_args()
    browser, chromedriver = find_browser()
    try:  # chromedriver talks to Chromium through this name, and selenium to chromedriver
        socket.getaddrinfo("localhost", None)
    except OSError:
        fail("the name localhost does not resolve (no entry in /etc/hosts), so chromedriver "
             "cannot reach Chromium: add '127.0.0.1 localhost' to /etc/hosts "
             "(bash scripts/install-deps.sh does)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    os.makedirs(args.work, exist_ok=True)
    # A: the walk, mirrored, with a tagged range and an excluded one.
    manifest = os.path.join(args.work, "walk_mirrored.toml")
    with open(manifest, "w") as f:
        f.write(f'[[clip]]\nsource = "{os.path.abspath(args.bvh)}"\nname = "walk"\n'
                'tags = ["locomotion"]\nmirror = true\n'
                '  [[clip.range]]\n  frames = [60, 120]\n  tags = ["turn"]\n'
                '  [[clip.range]]\n  frames = [200, 230]\n  exclude = true\n')
    a = os.path.join(args.work, "a.mmdb")
    b = os.path.join(args.work, "b.mmdb")
    run([args.mmcook, "-q", "cook", "--no-cache", manifest, "-o", a])
    # B: the walk alone, its trajectory direction weighing a fifth of the default.
    manifest_b = os.path.join(args.work, "walk_reweighted.toml")
    with open(manifest_b, "w") as f:
        f.write(f'[weights]\ntrajectory_direction = 0.3\n\n'
                f'[[clip]]\nsource = "{os.path.abspath(args.bvh)}"\nname = "walk"\n')
    run([args.mmcook, "-q", "cook", "--no-cache", manifest_b, "-o", b])
    info = {p: json.loads(run([args.mmcook, "inspect", "--json", p])) for p in (a, b)}

    single = os.path.join(args.work, "report.html")
    compared = os.path.join(args.work, "report_compare.html")
    for html in (single, compared):
        if os.path.exists(html):
            os.remove(html)
    started = time.time()
    run([args.mmcook, "report", a, "-o", single])
    # A is the older file, compared against: report B --compare A, as mmcook diff A B.
    run([args.mmcook, "report", b, "-o", compared, "--compare", a])
    print(f"  two reports written in {time.time() - started:.1f} s")

    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1400,1000", "--force-device-scale-factor=0.5"):
        options.add_argument(flag)
    profile = tempfile.mkdtemp(prefix="mmcook_report_chromium_")
    options.add_argument(f"--user-data-dir={profile}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    try:
        driver = webdriver.Chrome(service=Service(chromedriver), options=options)
    except Exception as e:  # a browser that is installed but does not start is a failure
        shutil.rmtree(profile, ignore_errors=True)
        fail(f"headless {browser} did not start: {e}")
    try:
        check_page(driver, single, {"A": info[a]}, compare=False)
        check_page(driver, compared, {"A": info[a], "B": info[b]}, compare=True)
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
    print("report pages check out in the browser")


if __name__ == "__main__":
    main()
