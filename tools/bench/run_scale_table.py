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

    def skipped(self, name, why):
        self.out.append(f"| {name} | skipped: {why} | | | |")

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

    def read_optional(name):
        """(text, None), or (None, why) for a step skipped or not run (--large only)."""
        try:
            text = read(directory, name)
        except OSError:
            return None, "not run"
        if text.startswith("skipped:"):
            return None, text.strip()[len("skipped: "):]
        return text, None

    audit_keys = (
        ("append_p50_us", "append p50 (one event)", "µs"),
        ("append_cpu_p50_us", "append CPU p50 (caller's thread)", "µs"),
        ("query_p50_us", "Query p50 (one trace's 10 records)", "µs"),
        ("query_cpu_p50_us", "Query CPU p50", "µs"),
        ("verify_p50_us", "Verify from the last checkpoint (same records checked)", "µs"),
        ("verify_cpu_p50_us", "Verify CPU p50", "µs"),
        ("bytes_per_record", "database bytes per record", "B"),
        ("fill_events_per_s", "fill rate (events/s)", ""),
    )

    def audit_curves(prefix, audit, keys=audit_keys):
        labels = [f"{int(r['records']):,}" for r in audit] or ["?"]
        for key, what, unit in keys:
            points = [(l, r.get(key)) for l, r in zip(labels, audit)] or [("?", None)]
            if key == "fill_events_per_s":
                # A reused fixture was not filled in this run: no rate to read.
                points = [(l, v) for (l, v), r in zip(points, audit or [{}])
                          if not r.get("reused")] or points
            table.curve(f"{prefix} {what} vs records", points, unit, None,
                        higher_is_better=(key == "fill_events_per_s"))

    try:
        audit = lines(read(directory, "audit"), "audit_scale")
    except OSError:
        audit = []
    audit_curves("audit (SQLite)", audit)
    if audit:
        checked = int(audit[0].get("verify_checked", 0))
        records = audit[-1]["records"] / audit[0]["records"]
        table.out.append(f"| (Verify checked {checked:,} records at every size; log grew "
                         f"{records:,.0f}×) | | | | |")

    # SQLite at 10M (--large): the SQLite curve extended by the cached fixture's point.
    text, why = read_optional("audit_10m")
    if text is None:
        table.skipped("audit (SQLite) at 10M records", why + " (run_scale.sh --large)"
                      if why == "not run" else why)
    else:
        large = lines(text, "audit_scale")
        audit_curves("audit (SQLite, with the 10M fixture)",
                     audit + large if audit and large else large,
                     keys=[k for k in audit_keys if k[0] != "fill_events_per_s"])
        for r in large:
            if r.get("reused"):
                table.out.append(f"| (10M point over a cached fixture of {int(r['reused']):,} "
                                 "records, not filled in this run) | | | | |")

    # PostgreSQL beside SQLite.
    text, why = read_optional("audit_postgres")
    if text is None:
        table.skipped("audit (PostgreSQL)", why)
    else:
        pg = lines(text, "audit_scale")
        audit_curves("audit (PostgreSQL)", pg)
        sqlite_by_size = {r["records"]: r for r in audit}
        for r in pg:
            other = sqlite_by_size.get(r["records"])
            if other is None:
                continue
            cells = " · ".join(
                f"{what.split(' (')[0]}: {r[key] / other[key]:,.2f}×"
                for key, what, _ in audit_keys[:7] if other.get(key))
            table.out.append(f"| PostgreSQL / SQLite at {int(r['records']):,} records | {cells} "
                             "| | | |")

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

    text, why = read_optional("replicas")
    if text is None:
        table.skipped("replicas (every service, one PostgreSQL)", why)
    else:
        rows = lines(text, "replicas_scale")
        labels = [f"{int(r['replicas'])}" for r in rows] or ["?"]
        work = rows[-1]["replicas"] / rows[0]["replicas"] if rows else None
        for key, what, unit, better in (
            ("authorize_per_s", "Authorize throughput (calls/s)", "", True),
            ("authorize_p50_us", "Authorize p50", "µs", False),
            ("authorize_services_cpu_us", "Authorize: services' CPU per call", "µs", False),
            ("authorize_postgres_cpu_us", "Authorize: PostgreSQL's CPU per call", "µs", False),
            ("invoke_per_s", "InvokeTool throughput (calls/s)", "", True),
            ("invoke_p50_us", "InvokeTool p50", "µs", False),
            ("invoke_services_cpu_us", "InvokeTool: services' CPU per call", "µs", False),
            ("invoke_postgres_cpu_us", "InvokeTool: PostgreSQL's CPU per call", "µs", False),
        ):
            table.curve(f"replicas: {what} vs replicas of every service",
                        [(l, r.get(key)) for l, r in zip(labels, rows)] or [("?", None)], unit,
                        None, higher_is_better=better)
        if rows:
            table.out.append(f"| (replicas: {int(rows[-1]['processes'])} service processes at "
                             f"{int(rows[-1]['replicas'])} replicas, {work:,.0f}× the first "
                             "point's; on two cores a rise in CPU per call is their overhead) "
                             "| | | | |")
    print("\n".join(table.out))
    if table.missing:
        print("\nmissing rows: " + ", ".join(table.missing), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
