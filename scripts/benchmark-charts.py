#!/usr/bin/env python3
"""Bar charts (SVG) of the benchmarks' ratios, from Google Benchmark's JSON output.

Reads the files that `--benchmark_format=json` or `--benchmark_out=FILE` wrote for bench_search,
bench_crowd and bench_pose, and writes one SVG per chart whose benchmarks are in them:

  search-speedup.svg     the search per query against a reference-style search, per database
  crowd-threads.svg      the CPU crowd's step on one thread and on two, split in its parts
  pose-compression.svg   raw bytes over coded bytes, per pose stream and database
  pose-decode.svg        decoding coded pose streams against copying raw ones

Usage, from the repository root:

  python3 scripts/benchmark-charts.py OUT_DIR RESULT.json [RESULT.json ...]

Where a benchmark ran with repetitions, its median is used (or the median of its runs when only
the runs were reported). Python 3 standard library only.
"""
import json
import os
import re
import sys
from xml.sax.saxutils import escape

UNIT_US = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}

# The colours of the series, in order: blue, orange, green, purple, grey, gold.
COLOURS = ["#3b6fb6", "#e07b39", "#4c9a52", "#8a63b8", "#8c8c8c", "#c9a227"]


def load(paths):
    """{name: {"us": time per iteration in microseconds, "label": ..., counters...}}"""
    runs = {}
    medians = {}
    for path in paths:
        with open(path) as f:
            data = json.load(f)
        for b in data.get("benchmarks", []):
            if b.get("error_occurred"):
                continue
            name = b.get("run_name", b["name"])
            entry = dict(b)
            entry["us"] = b.get("real_time", 0.0) * UNIT_US.get(b.get("time_unit", "ns"), 1e-3)
            if b.get("run_type") == "aggregate":
                if b.get("aggregate_name") == "median":
                    medians[name] = entry
            else:
                runs.setdefault(name, []).append(entry)
    result = {}
    for name, entries in runs.items():
        entries.sort(key=lambda e: e["us"])
        result[name] = entries[len(entries) // 2]
    result.update(medians)
    return result


def find(results, pattern):
    """The first benchmark whose name matches the regular expression, or None."""
    rx = re.compile(pattern)
    for name in sorted(results):
        if rx.fullmatch(name):
            return results[name]
    return None


def bar_chart(title, subtitle, groups, unit, baseline_line=None, width=760):
    """groups: [(group label, [(series label, value, text)])]; horizontal bars on one scale,
    each group under a heading of its own."""
    bar_h, head_h, gap, left, right, top = 18, 20, 8, 260, 130, 50
    series = []
    for _, bars in groups:
        for label, _, _ in bars:
            if label not in series:
                series.append(label)
    rows = sum(len(bars) for _, bars in groups)
    height = top + rows * bar_h + len(groups) * (head_h + gap) + 40
    top_value = max([v for _, bars in groups for _, v, _ in bars] + [baseline_line or 0]) or 1.0
    scale = (width - left - right) / top_value
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
           f'<text x="10" y="20" font-size="15" font-weight="bold">{escape(title)}</text>',
           f'<text x="10" y="38" fill="#555555">{escape(subtitle)}</text>']
    y = top
    for group, bars in groups:
        out.append(f'<text x="10" y="{y + head_h - 5}" font-weight="bold">{escape(group)}</text>')
        y += head_h
        for label, value, text in bars:
            colour = COLOURS[series.index(label) % len(COLOURS)]
            w = max(1.0, value * scale)
            out.append(f'<text x="{left - 8}" y="{y + bar_h - 5}" text-anchor="end" '
                       f'fill="#444444">{escape(label)}</text>')
            out.append(f'<rect x="{left}" y="{y + 2}" width="{w:.1f}" height="{bar_h - 4}" '
                       f'fill="{colour}"><title>{escape(group)}, {escape(label)}: '
                       f'{escape(text)}</title></rect>')
            out.append(f'<text x="{left + w + 5:.1f}" y="{y + bar_h - 5}">{escape(text)}</text>')
            y += bar_h
        y += gap
    axis_y = y
    out.append(f'<line x1="{left}" y1="{top}" x2="{left}" y2="{axis_y}" stroke="#333333"/>')
    if baseline_line is not None:
        x = left + baseline_line * scale
        out.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{axis_y}" stroke="#c03030" '
                   f'stroke-dasharray="4,3"/>')
        out.append(f'<text x="{x:.1f}" y="{axis_y + 14}" text-anchor="middle" fill="#c03030" '
                   f'font-size="11">{baseline_line:g}{escape(unit)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def search_chart(results):
    """Per game database: searchPruned, a batch of 64 (per query) and the exhaustive search,
    each as times faster than the reference-style search of the same run."""
    groups = []
    for which in range(6):
        ref = find(results, rf"BM_GameReference/{which}")
        if not ref:
            continue
        bars = []
        for label, pattern, per in (
                ("searchPruned", rf"BM_GamePruned/{which}", 1),
                ("searchBatch, 64 at once (per query)", rf"BM_GameBatch/{which}/64", 64),
                ("searchBatch with a scratch (per query)", rf"BM_GameBatchScratch/{which}/64", 64),
                ("searchExhaustive", rf"BM_GameExhaustive/{which}", 1)):
            b = find(results, pattern)
            if b and b["us"] > 0:
                ratio = ref["us"] / (b["us"] / per)
                bars.append((label, ratio, f"{ratio:.1f}x ({b['us'] / per:.1f} us)"))
        if bars:
            group = ref.get("label") or f"database {which}"
            groups.append((f"{group} ({ref['us']:.0f} us)", bars))
    if not groups:
        return None
    return bar_chart("Search, per query, against a reference-style search",
                     "times faster than the reference-style search of the same run (in brackets: "
                     "its time per query); 1,000 game queries", groups, "x", baseline_line=1.0)


def crowd_chart(results):
    """The crowd step of 1,000 characters, one thread against two."""
    one = find(results, r"BM_CrowdStep/threads:1/skip_decayed:1/split_decay:1/speed_limit:1/"
                        r"split_begin:0(/.*)?")
    if not one:
        return None
    groups = []
    for label, pattern in (
            ("1 thread", r"BM_CrowdStep/threads:1/skip_decayed:1/split_decay:1/speed_limit:1/"
                         r"split_begin:0(/.*)?"),
            ("2 threads", r"BM_CrowdStep/threads:2/skip_decayed:1/split_decay:1/speed_limit:1/"
                          r"split_begin:0(/.*)?"),
            ("2 threads, the beginning split too",
             r"BM_CrowdStep/threads:2/skip_decayed:1/split_decay:1/speed_limit:1/"
             r"split_begin:1(/.*)?")):
        b = find(results, pattern)
        if not b:
            continue
        step = b.get("step_ms", b["us"] / 1e3)
        bars = [("whole step", step, f"{step:.2f} ms ({one.get('step_ms', 0) / step:.2f}x)")]
        for part in ("begin", "search", "end"):
            if f"{part}_ms" in b:
                bars.append((part, b[f"{part}_ms"], f"{b[f'{part}_ms']:.2f} ms"))
        groups.append((label, bars))
    return bar_chart("CPU crowd step, 1,000 characters",
                     f"ms per step on {one.get('label', 'the database')}; in brackets the "
                     "speed-up over one thread", groups, " ms")


def pose_size_chart(results):
    groups = []
    for which in range(4):
        b = find(results, rf"BM_PoseSizes/{which}(/.*)?")
        if not b:
            continue
        bars = []
        for label, key in (("whole file", "file_ratio"), ("all four pose streams", "poses_ratio"),
                           ("rotations", "rot_ratio"), ("translations", "trans_ratio"),
                           ("velocities", "vel_ratio"), ("angular velocities", "angvel_ratio")):
            if key in b:
                bars.append((label, b[key], f"{b[key]:.2f}x"))
        groups.append((b.get("label") or f"database {which}", bars))
    if not groups:
        return None
    return bar_chart("Pose compression: raw bytes over coded bytes",
                     "the default budget: 0.1 mm in model space, 1 mm/s, 0.01 rad/s", groups, "x",
                     baseline_line=1.0)


def pose_decode_chart(results):
    groups = []
    for which in range(4):
        copy = find(results, rf"BM_DecodePoses/0/{which}(/.*)?")
        decode = find(results, rf"BM_DecodePoses/1/{which}(/.*)?")
        if not copy or not decode:
            continue
        bars = []
        for label, b in (("raw: copy (baseline)", copy), ("coded: decode", decode)):
            gbs = b.get("bytes_per_second", 0.0) / 1e9
            bars.append((label, gbs, f"{gbs:.2f} GB/s ({b['us'] / 1e3:.1f} ms)"))
        name = (copy.get("label") or f"database {which}").split(",")[0]
        groups.append((name, bars))
    if not groups:
        return None
    return bar_chart("Pose streams: decode against a copy of the raw streams",
                     "GB/s of decoded output on one core (in brackets: every frame of the "
                     "four streams)", groups, " GB/s")


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    out_dir, paths = sys.argv[1], sys.argv[2:]
    results = load(paths)
    os.makedirs(out_dir, exist_ok=True)
    written = 0
    for name, chart in (("search-speedup.svg", search_chart),
                        ("crowd-threads.svg", crowd_chart),
                        ("pose-compression.svg", pose_size_chart),
                        ("pose-decode.svg", pose_decode_chart)):
        svg = chart(results)
        if svg is None:
            print(f"{name}: no benchmarks for it in the input, not written")
            continue
        with open(os.path.join(out_dir, name), "w") as f:
            f.write(svg)
        print(f"wrote {os.path.join(out_dir, name)}")
        written += 1
    if not written:
        sys.exit("no chart written: none of the benchmarks the charts need is in the input")


if __name__ == "__main__":
    main()
