#!/usr/bin/env python3
"""Prints issue 37's scale table from the raw outputs run_scale.sh wrote into one directory.

Every curve is printed with the ratio of its largest to its smallest point, beside the ratio of
the work (grants, records, turns): a cost that grows faster than its work is flagged. Exits 1
when a row is missing from the raw outputs (the --quick smoke test relies on it).
"""
import json
import re
import sys


def read(directory, name):
    with open(f"{directory}/{name}.txt", encoding="utf-8") as f:
        return f.read()


def bench_times(text, time):
    """Benchmark run name -> `time` (real_time or cpu_time) in ns: the median over repetitions
    when there are several, else the single run."""
    scale = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
    single, median = {}, {}
    for b in json.loads(text)["benchmarks"]:
        value = b[time] * scale[b["time_unit"]]
        if b.get("aggregate_name") == "median":
            median[b["run_name"]] = value
        elif b.get("run_type", "iteration") == "iteration":
            single[b["run_name"]] = value
    single.update(median)
    return single, json.loads(text)["benchmarks"]


def lines(text, tag):
    """The "<tag> key=value ..." lines as a list of dicts of floats."""
    rows = []
    for line in text.splitlines():
        if not line.startswith(tag + " "):
            continue
        rows.append({k: float(v) for k, v in (p.split("=", 1) for p in line.split()[1:])})
    return rows


def fmt(value, unit):
    if unit == "ns" and value >= 1e6:
        return f"{value / 1e6:,.2f} ms"
    if unit == "ns" and value >= 1e4:
        return f"{value / 1e3:,.1f} µs"
    if unit == "ns":
        return f"{value:,.0f} ns"
    if unit == "µs" and value >= 1e4:
        return f"{value / 1e3:,.1f} ms"
    if unit == "µs":
        return f"{value:,.1f} µs"
    if unit == "B":
        return f"{value:,.0f} B"
    return f"{value:,.0f}"


class Table:
    def __init__(self):
        self.out = []
        self.missing = []

    def curve(self, name, points, unit, work_ratio, note="", higher_is_better=False):
        """points: [(label, value or None)]; work_ratio: what the work grows by, largest over
        smallest point (None: the work is constant — the cost should be too)."""
        values = [v for _, v in points if v is not None]
        if len(values) != len(points) or not values:
            self.missing.append(name)
            self.out.append(f"| {name} | missing | | | |")
            return
        ratio = values[-1] / values[0] if values[0] > 0 else float("inf")
        bound = work_ratio if work_ratio is not None else 1.0
        # Noise on a shared machine: a constant-work cost may move 2x between points.
        if higher_is_better:  # a rate: falling as the input grows is the defect
            falling = values[0] / values[-1] if values[-1] > 0 else float("inf")
            verdict = "falls as the input grows" if falling > 2.0 else "holds"
        else:
            verdict = "grows faster than its work" if ratio > 2.0 * bound else "within its work"
        work = f"{work_ratio:,.0f}×" if work_ratio is not None else "constant"
        cells = " · ".join(f"{label}: {fmt(v, unit)}" for label, v in points)
        self.out.append(f"| {name} | {cells} | **{ratio:,.2f}×** | {work} | {verdict}{note} |")


def main(directory):
    table = Table()
    print(read(directory, "machine").strip().replace("\n", "  \n"))
    print()
    print("| curve | points | largest / smallest | work grows | |")
    print("|---|---|---:|---:|---|")

    try:
        real, raw = bench_times(read(directory, "core"), "real_time")
        cpu, _ = bench_times(read(directory, "core"), "cpu_time")
    except (OSError, ValueError, KeyError):
        real, cpu, raw = {}, {}, []
    sizes = [1, 16, 64, 256]
    for bench, what, work in (
        ("BM_Decide", "decision (BM_Decide, CPU)", 256.0),
        ("BM_Resolve", "resolution (BM_Resolve, CPU)", 256.0),
        ("BM_Baseline_LinearScan", "linear scan (baseline, CPU)", 256.0),
    ):
        table.curve(what + " vs grants per (actor, authority)",
                    [(str(n), cpu.get(f"{bench}/{n}")) for n in sizes], "ns", work)
    ratios = [
        (str(n), cpu[f"BM_Baseline_LinearScan/{n}"] / cpu[f"BM_Decide/{n}"])
        for n in sizes
        if f"BM_Baseline_LinearScan/{n}" in cpu and f"BM_Decide/{n}" in cpu
    ]
    if len(ratios) == len(sizes):
        table.out.append("| linear scan / BM_Decide | " +
                         " · ".join(f"{label}: {v:,.1f}×" for label, v in ratios) + " | | | |")

    try:
        audit = lines(read(directory, "audit"), "audit_scale")
    except OSError:
        audit = []
    if audit:
        records = audit[-1]["records"] / audit[0]["records"]
    else:
        records = None
    labels = [f"{int(r['records']):,}" for r in audit] or ["?"]
    for key, what, unit in (
        ("append_p50_us", "audit append p50 (one event)", "µs"),
        ("append_cpu_p50_us", "audit append CPU p50 (caller's thread)", "µs"),
        ("query_p50_us", "audit Query p50 (one trace's 10 records)", "µs"),
        ("query_cpu_p50_us", "audit Query CPU p50", "µs"),
        ("verify_p50_us", "audit Verify from the last checkpoint (same records checked)", "µs"),
        ("verify_cpu_p50_us", "audit Verify CPU p50", "µs"),
        ("bytes_per_record", "audit database bytes per record", "B"),
        ("fill_events_per_s", "audit fill rate (events/s, 2 callers × 1,000-event requests)", ""),
    ):
        table.curve(what + " vs records", [(l, r.get(key)) for l, r in zip(labels, audit)] or
                    [("?", None)], unit, None, higher_is_better=(key == "fill_events_per_s"))
    if audit:
        checked = int(audit[0].get("verify_checked", 0))
        table.out.append(f"| (Verify checked {checked:,} records at every size; log grew "
                         f"{records:,.0f}×) | | | | |")

    try:
        turns = lines(read(directory, "turns"), "turns_scale")
    except OSError:
        turns = []
    labels = [f"{int(t['turns']):,}" for t in turns] or ["?"]
    table.curve("sharedosd memory per open turn vs open turns",
                [(l, t.get("bytes_per_turn")) for l, t in zip(labels, turns)] or [("?", None)],
                "B", None)
    table.curve("InvokeTool p50 vs open turns",
                [(l, t.get("invoke_p50_us")) for l, t in zip(labels, turns)] or [("?", None)],
                "µs", None)
    table.curve("sharedosd CPU per InvokeTool vs open turns",
                [(l, t.get("invoke_server_cpu_us")) for l, t in zip(labels, turns)] or
                [("?", None)], "µs", None)
    table.curve("OpenTurn p50 vs open turns",
                [(l, t.get("open_p50_us")) for l, t in zip(labels, turns)] or [("?", None)],
                "µs", None)

    for reader, what in (("plain", "readers copy pages (default)"),
                         ("mmap", "readers with mmap, 1 GiB")):
        p50, cpu = [], []
        for size in ("small", "large"):
            name = f"grantstore_{size}_{reader}"
            try:
                grants = int(re.search(r"--grants=(\d+)", read(directory, name + "_args")).group(1))
                benchmarks = json.loads(read(directory, name))["benchmarks"]
                b = next(b for b in benchmarks if b["name"].startswith("BM_LoadAuthority100/"))
                p50.append((f"{grants:,}", b.get("p50_us")))
                cpu.append((f"{grants:,}", b["cpu_time"] / {"ns": 1e3, "us": 1.0, "ms": 1e-3}[
                    b["time_unit"]]))
            except (OSError, ValueError, StopIteration, KeyError, AttributeError):
                p50.append((size, None))
                cpu.append((size, None))
        table.curve(f"grant store LoadAuthority p50 (an actor's 100 grants; {what}) vs grants "
                    "stored", p50, "µs", None)
        table.curve(f"grant store LoadAuthority CPU per call ({what}) vs grants stored", cpu,
                    "µs", None)

    table.out.append("| replicas (1, 2, 3 on one PostgreSQL) | not measured by this script | | | |")
    print("\n".join(table.out))
    if table.missing:
        print("\nmissing rows: " + ", ".join(table.missing), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
