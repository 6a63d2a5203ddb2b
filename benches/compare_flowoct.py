#!/usr/bin/env python3
"""FlowOCT, glassbox against ODTlearn (the FlowOCT authors' package) on the same binarized
rows, depths, lambda and time limit; glassbox's OCT (Bertsimas and Dunn) on the same
instances (issue 21's acceptance check).

For every data set the script binarizes the file once: a column whose values are all 0 or 1
is kept, every other column is one-hot encoded in full (one 0/1 column `name=level` per
level, no level dropped: the encoding ODTlearn's users give FlowOCT, monks-1 124 x 17). The
0/1 matrix is written as a CSV of numbers (plus the target), and

  * ODTlearn gets that matrix and the labels in memory:
    `odtlearn.flow_oct.FlowOCT(solver="cbc", depth=D, time_limit=T, _lambda=L)` (defaults
    otherwise: one CBC thread, python-mip's relative gap 1e-4), fitted in a fresh Python
    process; its time is the wall time of `fit` (building its model in Python, then CBC);
  * glassbox gets the same CSV: `glassbox run` on a config per instance with `data.path` and
    `data.test_path` both that file (one fixed split whose training part is every row; the
    test part repeats them), `threads = 1`, `time_limit = T`, glassbox's default relative gap
    (1e-4, as python-mip's); formulation `flowoct` (depth D, lambda L) on HiGHS and on CBC,
    and `oct` (depth D, min_leaf 1, alpha = L / ((1 - L) Lhat)) on HiGHS and on CBC. Its
    times are the results line's `solve_seconds` (the backend's solve) and the wall time of
    the whole `glassbox run` process (reading, building, solving, writing).

Objectives are compared on FlowOCT's scale, `(1 - L) * correct - L * splits` (ODTlearn's
`objective_value` and glassbox FlowOCT's objective are on it already). OCT minimizes
`errors / Lhat + alpha * splits`, Lhat the errors of the majority class; with
`alpha = L / ((1 - L) Lhat)` its objective o converts as `(1 - L) * (N - Lhat * o)`, so every
optimum is the same number on the same instance.

Runs are interleaved: for each instance the five runs follow each other, their order
rotated from one instance to the next, so that the shared machine's load falls on all tools
alike. Every run appends one JSON line to `--out`; the Markdown table and the summary
(instances proven optimal per tool, objectives where two tools prove optimality, the median
time ratio ODTlearn / glassbox FlowOCT on HiGHS over the instances both prove) are printed at
the end (and can be printed again from the JSON lines with `--report`).

usage (from the repository root, with ODTlearn's venv):
  nice -n 19 /work/peers-venv/bin/python benches/compare_flowoct.py \\
      [--datasets monks1 ...] [--depths 1 2 3] [--lambda 0.0] [--time-limit 300] \\
      [--glassbox target/release/glassbox] [--out flowoct_runs.jsonl] [--keep DIR]
  /work/peers-venv/bin/python benches/compare_flowoct.py --report flowoct_runs.jsonl
"""
import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATASETS = ROOT.parent / "shared" / "datasets"
# The categorical sets of shared/datasets (every column categorical or 0/1).
DEFAULT_DATASETS = ["monks1", "monks2", "monks3", "tic_tac_toe", "car"]
TOOLS = ["odtlearn_cbc", "flowoct_highs", "flowoct_cbc", "oct_highs", "oct_cbc"]
TITLES = {
    "odtlearn_cbc": "ODTlearn CBC",
    "flowoct_highs": "FlowOCT HiGHS",
    "flowoct_cbc": "FlowOCT CBC",
    "oct_highs": "OCT HiGHS",
    "oct_cbc": "OCT CBC",
}


def binarize(name, work):
    """The data set's 0/1 matrix and labels, written to `work/name.csv`; returns
    (path, X as a DataFrame of ints, y as a list of strings)."""
    import pandas as pd

    df = pd.read_csv(DATASETS / f"{name}.csv", dtype=str, keep_default_na=False)
    if (df == "?").any().any() or (df == "").any().any():
        raise SystemExit(f"{name}: missing cells; this benchmark takes complete files only")
    y = df["target"].tolist()
    columns = {}
    for column in df.columns:
        if column == "target":
            continue
        values = df[column]
        if set(values) <= {"0", "1"}:
            columns[column] = values.astype(int)
        else:
            levels = sorted(set(values))
            if all(v.lstrip("-").isdigit() for v in levels):
                levels.sort(key=int)
            for level in levels:
                columns[f"{column}={level}"] = (values == level).astype(int)
    X = pd.DataFrame(columns)
    out = X.copy()
    out["target"] = y
    path = work / f"{name}.csv"
    out.to_csv(path, index=False)
    return path, X, y


def odtlearn_worker(csv_path, depth, lam, time_limit):
    """Fits ODTlearn's FlowOCT with CBC on the file (run in a fresh process) and prints one
    JSON line."""
    import numpy as np
    import pandas as pd
    from mip import OptimizationStatus
    from odtlearn.flow_oct import FlowOCT

    df = pd.read_csv(csv_path, dtype={"target": str}, keep_default_na=False)
    X = df.drop(columns="target").astype(int)
    y = df["target"].to_numpy()
    clf = FlowOCT(solver="cbc", depth=depth, time_limit=time_limit, _lambda=lam)
    started, cpu_started = time.perf_counter(), time.process_time()
    clf.fit(X, y)
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    status = clf._solver.model.status
    splits = sum(1 for v in clf.b_value.values() if v > 0.5)
    correct = int(np.sum(clf.predict(X) == y))
    print(
        json.dumps(
            {
                "status": status.name.lower(),
                "proven": status == OptimizationStatus.OPTIMAL,
                "objective": clf.objective_value,
                "bound": clf.objective_bound,
                "fit_seconds": seconds,
                "fit_cpu_seconds": cpu,
                "splits": splits,
                "correct": correct,
                "recomputed": (1 - lam) * correct - lam * splits,
            }
        )
    )


def run_odtlearn(csv_path, depth, lam, time_limit):
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, __file__, "--odtlearn-worker", str(csv_path), str(depth), repr(lam), str(time_limit)],
        capture_output=True,
        text=True,
        timeout=time_limit + 900,
    )
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        return {"status": "error", "proven": False, "objective": None, "error": proc.stderr[-2000:], "wall_seconds": wall}
    line = [l for l in proc.stdout.splitlines() if l.startswith("{")][-1]
    out = json.loads(line)
    out["seconds"] = out["fit_seconds"]
    out["cpu_seconds"] = out["fit_cpu_seconds"]
    out["wall_seconds"] = wall
    return out


def run_glassbox(binary, work, tag, csv_path, formulation, solver, time_limit):
    config = work / f"{tag}.toml"
    config.write_text(
        "[data]\n"
        f"path = {json.dumps(str(csv_path))}\n"
        f"test_path = {json.dumps(str(csv_path))}\n\n"
        "[split]\nrepeats = 1\n\n"
        f"[formulation]\n{formulation}\n\n"
        f'[solver]\nname = "{solver}"\ntime_limit = {float(time_limit)}\nthreads = 1\n'
    )
    out = work / tag
    started, before = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(
        [str(binary), "run", str(config), "--out", str(out), "--force"],
        capture_output=True,
        text=True,
        timeout=time_limit + 900,
    )
    wall, after = time.perf_counter() - started, resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode != 0:
        return {"status": "error", "proven": False, "objective": None, "error": proc.stderr[-2000:], "wall_seconds": wall}
    record = json.loads((out / "results.jsonl").read_text().splitlines()[0])
    return {
        "status": record["status"],
        "proven": record["status"] == "optimal",
        "objective": record["objective"],
        "bound": record.get("dual_bound"),
        "gap": record.get("mip_gap"),
        "seconds": record["solve_seconds"],
        "wall_seconds": wall,
        "cpu_seconds": cpu,
        "train_accuracy": record.get("train_accuracy"),
    }


def machine_state():
    load = os.getloadavg()
    cpu = ""
    try:
        cpu = next(l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return {"cores": os.cpu_count(), "cpu": cpu, "load_average": [round(v, 2) for v in load], "nice": os.nice(0)}


def fmt_cell(r):
    if r is None:
        return "-"
    if r["status"] == "error":
        return "error"
    obj = "-" if r["objective"] is None else f"{r['objective']:.2f}"
    mark = "opt" if r["proven"] else r["status"].replace("_", " ")
    if "solve_seconds" in r:
        return f"{obj} {mark} {r['solve_seconds']:.1f} / {r['wall_seconds']:.1f} s"
    return f"{obj} {mark} {r['seconds']:.1f} s"


def report(records):
    """The Markdown table and the summary of the runs `records`."""
    instances = {}
    meta = {}
    for r in records:
        key = (r["dataset"], r["depth"])
        instances.setdefault(key, {})[r["tool"]] = r
        meta[key] = r
    lines = []
    lines.append("| data (N x F) | D | " + " | ".join(TITLES[t] for t in TOOLS) + " | ODTlearn / FlowOCT HiGHS, wall (CPU) |")
    lines.append("|---|---|" + "---|" * (len(TOOLS) + 1))
    ratios, ratios_solve, ratios_cpu, mismatches, agreements = [], [], [], [], 0
    proven = {t: 0 for t in TOOLS}
    order = sorted(instances, key=lambda k: (DEFAULT_DATASETS.index(k[0]) if k[0] in DEFAULT_DATASETS else 99, k[0], k[1]))
    for key in order:
        runs = instances[key]
        m = meta[key]
        for t in TOOLS:
            if t in runs and runs[t]["proven"]:
                proven[t] += 1
        opt = {t: runs[t]["objective"] for t in TOOLS if t in runs and runs[t]["proven"]}
        if len(opt) >= 2:
            values = list(opt.values())
            if max(values) - min(values) > 1e-6 * max(1.0, abs(values[0])):
                mismatches.append((key, opt))
            else:
                agreements += 1
        ratio = ""
        o, h = runs.get("odtlearn_cbc"), runs.get("flowoct_highs")
        if o and h and o["proven"] and h["proven"]:
            ratios.append(o["seconds"] / h["wall_seconds"])
            ratios_solve.append(o["seconds"] / max(h["seconds"], 1e-3))
            if o.get("cpu_seconds") and h.get("cpu_seconds"):
                ratios_cpu.append(o["cpu_seconds"] / max(h["cpu_seconds"], 1e-3))
            ratio = f"{ratios[-1]:.1f}x" + (f" (CPU {ratios_cpu[-1]:.1f}x)" if o.get("cpu_seconds") and h.get("cpu_seconds") else "")
        cells = []
        for t in TOOLS:
            r = runs.get(t)
            if r is not None and t != "odtlearn_cbc":
                r = dict(r, solve_seconds=r.get("seconds", float("nan")))
            cells.append(fmt_cell(r))
        lines.append(f"| {key[0]} ({m['rows']} x {m['features']}) | {key[1]} | " + " | ".join(cells) + f" | {ratio} |")
    lines.append("")
    lines.append("Proven optimal: " + ", ".join(f"{TITLES[t]} {proven[t]}" for t in TOOLS) + f" (of {len(instances)} instances).")
    lines.append(
        f"Objectives where at least two tools prove optimality: {agreements} instance(s) equal"
        + (f", {len(mismatches)} differ: {mismatches}" if mismatches else ", none differ") + "."
    )
    if ratios:
        lines.append(
            f"Median time ratio ODTlearn / glassbox FlowOCT HiGHS over the {len(ratios)} instances both prove: "
            f"{statistics.median(ratios):.1f}x against glassbox's process wall time "
            f"(min {min(ratios):.1f}x, max {max(ratios):.1f}x), "
            f"{statistics.median(ratios_solve):.1f}x against its solve_seconds"
            + (f"; in CPU seconds (ODTlearn's fit, the glassbox process): {statistics.median(ratios_cpu):.1f}x "
               f"(min {min(ratios_cpu):.1f}x, max {max(ratios_cpu):.1f}x)" if ratios_cpu else "")
            + "."
        )
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--datasets", nargs="+", default=DEFAULT_DATASETS)
    ap.add_argument("--depths", nargs="+", type=int, default=[1, 2, 3])
    ap.add_argument("--lambda", dest="lam", type=float, default=0.0)
    ap.add_argument("--time-limit", type=int, default=300)
    ap.add_argument("--tools", nargs="+", default=TOOLS, choices=TOOLS)
    ap.add_argument("--glassbox", type=Path, default=None)
    ap.add_argument("--out", type=Path, default=Path("flowoct_runs.jsonl"))
    ap.add_argument("--keep", type=Path, default=None, help="keep the binarized files and configs here")
    ap.add_argument("--report", type=Path, default=None, help="only print the table of these JSON lines")
    ap.add_argument("--odtlearn-worker", nargs=4, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args.odtlearn_worker:
        path, depth, lam, limit = args.odtlearn_worker
        odtlearn_worker(path, int(depth), float(lam), int(limit))
        return
    if args.report:
        records = [json.loads(l) for l in args.report.read_text().splitlines() if l.strip()]
        print(report([r for r in records if "tool" in r]))
        return

    binary = args.glassbox
    if binary is None:
        release = ROOT / "target" / "release" / "glassbox"
        binary = release if release.exists() else ROOT / "target" / "debug" / "glassbox"
    if not binary.exists():
        raise SystemExit(f"no glassbox binary at {binary}: run `cargo build --release` first")
    work = args.keep or Path(tempfile.mkdtemp(prefix="flowoct_bench_"))
    work.mkdir(parents=True, exist_ok=True)
    lam, limit = args.lam, args.time_limit
    out = args.out.open("a")
    state = machine_state()
    out.write(json.dumps({"start": time.strftime("%Y-%m-%d %H:%M:%S"), "lambda": lam, "time_limit": limit, "machine": state}) + "\n")
    out.flush()
    print(f"machine at start: {state}", flush=True)

    records = []
    instance = 0
    for name in args.datasets:
        csv_path, X, y = binarize(name, work)
        n, f = X.shape
        counts = {}
        for label in y:
            counts[label] = counts.get(label, 0) + 1
        lhat = max(1, n - max(counts.values()))
        alpha = lam / ((1 - lam) * lhat) if lam < 1 else 0.0
        for depth in args.depths:
            k = instance % len(args.tools)
            order = args.tools[k:] + args.tools[:k]
            instance += 1
            for tool in order:
                tag = f"{name}_d{depth}_{tool}"
                if tool == "odtlearn_cbc":
                    r = run_odtlearn(csv_path, depth, lam, limit)
                else:
                    formulation_name, solver = tool.split("_")
                    if formulation_name == "flowoct":
                        formulation = f'name = "flowoct"\ndepth = {depth}\nlambda = {lam!r}'
                    else:
                        formulation = f'name = "oct"\ndepth = {depth}\nalpha = {alpha!r}\nmin_leaf = 1'
                    r = run_glassbox(binary, work, tag, csv_path, formulation, solver, limit)
                    if formulation_name == "oct" and r["objective"] is not None:
                        r["oct_objective"] = r["objective"]
                        r["objective"] = (1 - lam) * (n - lhat * r["objective"])
                r.update({"dataset": name, "depth": depth, "tool": tool, "rows": n, "features": f, "lambda": lam, "time_limit": limit, "load_average": [round(v, 2) for v in os.getloadavg()]})
                records.append(r)
                out.write(json.dumps(r) + "\n")
                out.flush()
                shown = "-" if r["objective"] is None else f"{r['objective']:.3f}"
                print(f"{name} D={depth} {tool}: {r['status']} {shown} in {r.get('seconds', float('nan')):.1f} s (wall {r['wall_seconds']:.1f} s)", flush=True)
    state = machine_state()
    out.write(json.dumps({"end": time.strftime("%Y-%m-%d %H:%M:%S"), "machine": state}) + "\n")
    out.close()
    print(f"machine at end: {state}")
    print(report(records))
    if args.keep is None:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
