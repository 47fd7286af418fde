#!/usr/bin/env python3
"""Prints issue 23's speed table from the raw outputs run_all.sh wrote into one directory."""
import json
import re
import sys


def read(directory, name):
    with open(f"{directory}/{name}.txt", encoding="utf-8") as f:
        return f.read()


def series(text, columns):
    """Lines "<name> <n1> ... <ncolumns>" as {name: [numbers]}."""
    rows = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) <= columns:
            continue
        try:
            numbers = [float(p) for p in parts[-columns:]]
        except ValueError:
            continue
        rows[" ".join(parts[:-columns])] = numbers
    return rows


def core_medians(text, time="real_time"):
    """Benchmark name -> median `time` (real_time or cpu_time) in ns."""
    scale = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
    out = {}
    for b in json.loads(text)["benchmarks"]:
        if b.get("aggregate_name") == "median":
            out[b["run_name"]] = b[time] * scale[b["time_unit"]]
    return out


def main(directory):
    core = core_medians(read(directory, "core"))
    # Under load the benchmark thread is preempted; its CPU time is the steadier measure.
    core_cpu = core_medians(read(directory, "core"), "cpu_time")
    auth = series(read(directory, "authorizer"), 7)
    envelope_text = read(directory, "envelope")
    env = series(envelope_text, 6)
    normal = series(read(directory, "invoke_normal"), 5)
    full_text = read(directory, "invoke_full")
    full = series(full_text, 5)
    fsync = float(re.search(r"fsync p50 us[^:]*: ([0-9.]+)", full_text).group(1))
    open_p50 = float(re.search(r"OpenTurn \(host's view\)\s+([0-9.]+)", envelope_text).group(1))
    tools = re.search(r"OpenTurn, (\d+)-tool registry", envelope_text).group(1)

    # authorizer_bench columns: p50 p99 p50/floor p99/floor calls/s tput/floor server-cpu
    floor_cpu = auth["floor (health Check)"][6]
    record_cpu = auth["Authorize, local, no fsync"][6] - auth["Authorize, audit discarded"][6]
    tput_normal = auth["Authorize, local, no fsync"][4]
    tput_full = auth["Authorize, local audit"][4]
    # envelope_bench columns: p50 p99 p50/floor p99/floor cpu allocs
    allocs = env["sharedosd shape, audit"][5]
    env_floor = env["floor (health Check)"][0]
    # invoke_bench columns: p50 p99 p50/floor p99/floor server-cpu
    sd_full = full["sharedosd: InvokeTool"][0]
    sd_full_floor = full["sharedosd: floor"][0]
    resolve, decide = core["BM_Resolve/256"], core["BM_Decide/256"]
    scan = core["BM_Baseline_LinearScan/256"]
    resolve_cpu, decide_cpu = core_cpu["BM_Resolve/256"], core_cpu["BM_Decide/256"]
    scan_cpu = core_cpu["BM_Baseline_LinearScan/256"]

    rows = [
        ("writer-side CPU per audit record / server CPU of one floor call (16 callers)",
         f"{record_cpu / floor_cpu:.2f} × ({record_cpu:.1f} against {floor_cpu:.1f} µs)",
         "≤ 0.3 ×", record_cpu / floor_cpu <= 0.3),
        ("allocations per mediated InvokeTool (sharedosd shape, whole process)",
         f"{allocs:.0f}", "≤ 150", allocs <= 150),
        ("sharedosd InvokeTool, files provider, normal, one caller",
         f"{normal['sharedosd: InvokeTool'][2]:.2f} × floor", "≤ 1.8 ×",
         normal["sharedosd: InvokeTool"][2] <= 1.8),
        ("same, audit full (fsync p50 {:.0f} µs)".format(fsync),
         f"floor + {(sd_full - sd_full_floor) / fsync:.2f} × fsync ({sd_full:.0f} against "
         f"{sd_full_floor:.0f} µs)", "≤ floor + 2 × fsync",
         sd_full <= sd_full_floor + 2 * fsync),
        ("four processes, local, normal",
         f"{normal['four processes: InvokeTool'][2]:.2f} × floor", "≤ 3.0 ×",
         normal["four processes: InvokeTool"][2] <= 3.0),
        ("Authorize throughput, 16 callers, local normal, vs the floor's",
         f"{auth['Authorize, local, no fsync'][5]:.2f}", "≥ 0.5",
         auth["Authorize, local, no fsync"][5] >= 0.5),
        ("throughput at 16 callers, full vs normal (local outbox)",
         f"{tput_full / tput_normal:.2f}", "≥ 0.7", tput_full / tput_normal >= 0.7),
        ("BM_Resolve/256 / BM_Decide/256 (wall; CPU)",
         f"{resolve / decide:,.0f} × ({resolve / 1e3:,.0f} µs / {decide:.0f} ns); CPU "
         f"{resolve_cpu / decide_cpu:,.0f} × ({resolve_cpu / 1e3:,.0f} µs / {decide_cpu:.0f} ns)",
         "≤ 2,000 ×", resolve / decide <= 2000 and resolve_cpu / decide_cpu <= 2000),
        (f"OpenTurn, {tools} tools requested, one caller, vs the floor (envelope_bench)",
         f"{open_p50 / env_floor:.1f} × ({open_p50:,.0f} against {env_floor:.0f} µs)", "≤ 4 ×",
         open_p50 / env_floor <= 4),
        ("BM_Decide/256 vs the linear scan, wall; CPU (allocation-free: "
         "capability_authorizer_allocation_test)",
         f"{scan / decide:.0f} × faster; CPU {scan_cpu / decide_cpu:.0f} ×", "≥ 40 ×",
         scan / decide >= 40 and scan_cpu / decide_cpu >= 40),
    ]
    with open(f"{directory}/machine.txt", encoding="utf-8") as f:
        for line in f:
            print(f"- {line.strip()}")
    print()
    print("| what | this run | target | met |")
    print("|---|---|---|---|")
    for what, value, target, met in rows:
        print(f"| {what} | {value} | {target} | {'yes' if met else 'no'} |")


if __name__ == "__main__":
    main(sys.argv[1])
