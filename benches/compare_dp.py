#!/usr/bin/env python3
"""glassbox's exact tree-search backend `dp` against the dynamic-programming peers pystreed
(STreeD) and pydl8.5 (DL8.5): misclassification-optimal trees of depth 2 to 4 on the
binarized classification sets of ../shared/datasets, with one time limit, in one run.

    cargo build --release --example tree_search_bench
    nice -n 19 /work/peers-venv/bin/python benches/compare_dp.py \
        --dl85-python /work/dl85-dp-venv/bin/python [--depths 2,3,4] [--time-limit 60] \
        [--repeats 3] [--datasets monks1,car] [--out target/compare_dp/results.jsonl] \
        [--milp-backends highs,cbc] [--milp-datasets monks1,tic_tac_toe,car] \
        [--milp-time-limit 60] [--milp-jobs 2] [--bench PATH]
    /work/peers-venv/bin/python benches/compare_dp.py --tables-from target/compare_dp/results.jsonl

pystreed must be importable by the Python that runs this script; pydl8.5 runs in its own
interpreter (--dl85-python), since it does not install beside a current scikit-learn.

Binarization (done once here; every tool reads the same 0/1 matrix from
target/compare_dp/NAME.csv, the class index in the last column):
- monks1-3: every attribute is categorical (integer codes); elsewhere a column with a value
  that is not a number (e.g. car's, german_credit's codes, heart_cleveland's '?') is
  categorical. A categorical column with k levels gives k columns `col=v`, one column when
  k = 2.
- A numeric column with two values gives one column `col>=high`; otherwise up to 5
  thresholds, the distinct quantiles at 1/6, ..., 5/6 of its values, each a column
  `col>=t` (pystreed's default of 5 quantile thresholds per continuous feature).
- Constant columns are dropped. A data set that gives more than 200 columns is left out
  (sonar, spambase, spectf).

Objective in all three tools: misclassifications on the training data, depth <= d, no
limit on branch nodes, no penalty, leaves of any size. Each tool's objective is recounted
from its predictions; the script reports whether all three agree.

Times per instance: glassbox's in-process seconds (building the problem from the parsed
matrix + the solve; `examples/tree_search_bench.rs`), and for each peer the time it reports
itself (STreeD's 'Total time elapsed' in its verbose log, DL8.5's `runtime_`) and the wall
time of its `fit` call. The order of the three tools alternates per repeat; the medians of
the repeats are reported. The ratio is glassbox's time over the faster peer's own time.

glassbox's MILP backends on the same instances (--milp-datasets, `all` for every data set
run, every depth, one solve each): the instance as glassbox's OCT MILP (alpha 0, N_min 1) on the
same 0/1 matrix, from OCT's greedy MIP start, one thread, relative gap 0, --milp-time-limit
seconds (`tree_search_bench ... BACKEND`); status, objective and bound in misclassifications,
gap and seconds (building the MILP and solving) are reported beside dp's. The MILP solves
run after all DP timings, so that they never overlap a DP tool's timing; --milp-jobs of them
run at a time (each single-threaded, its limit wall-clock). A MILP solve that fails (the
bench exits with an error, or runs past twice its limit plus 120 s and is stopped) is
recorded with status `error` and its message; the run goes on.

--tables-from prints the tables again from a results file (also from a run that was stopped
part way: the instances it finished).
"""

import argparse
import concurrent.futures
import contextlib
import io
import json
import os
import re
import statistics
import subprocess
import sys
import time

import numpy as np
import pandas as pd

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATASETS_DIR = os.path.join(ROOT, "..", "shared", "datasets")
OUT_DIR = os.path.join(ROOT, "target", "compare_dp")
BENCH = os.path.join(ROOT, "target", "release", "examples", "tree_search_bench")
CLASSIFICATION = [
    "monks1", "monks2", "monks3", "tic_tac_toe", "car", "iris", "wine", "sonar",
    "ionosphere", "pima", "german_credit", "ecoli", "haberman", "breast_cancer_wisconsin",
    "climate", "wholesale", "parkinsons", "spectf", "heart_cleveland", "spambase", "thyroid",
]
ALL_CATEGORICAL = {"monks1", "monks2", "monks3"}
MAX_COLUMNS = 200
THRESHOLDS = 5

# A long-lived DL8.5 worker in the other interpreter: one request (path, depth, limit) per
# line on stdin, one JSON answer per line on stdout (no interpreter start per solve).
DL85_WORKER = r"""
import json, sys, time
import numpy as np
from pydl85 import DL85Classifier
data = {}
for line in sys.stdin:
    path, depth, limit = json.loads(line)
    if path not in data:
        data[path] = np.loadtxt(path, delimiter=",", skiprows=1, dtype=np.int64)
    X, y = data[path][:, :-1], data[path][:, -1]
    model = DL85Classifier(max_depth=depth, time_limit=limit)
    clock = time.perf_counter()
    model.fit(X, y)
    wall = time.perf_counter() - clock
    errors = int((model.predict(X) != y).sum())
    print(json.dumps({"objective": errors, "optimal": not model.timeout_,
                      "own_seconds": model.runtime_, "wall_seconds": wall}), flush=True)
"""


def is_number(value):
    try:
        float(value)
        return True
    except ValueError:
        return False


def binarize(name):
    """The 0/1 matrix (DataFrame) and class indices of a data set; see the module doc."""
    frame = pd.read_csv(os.path.join(DATASETS_DIR, name + ".csv"), dtype=str)
    labels = frame.pop("target").str.strip()
    classes = sorted(labels.unique())
    y = labels.map({c: i for i, c in enumerate(classes)}).to_numpy()
    columns = {}
    for col in frame.columns:
        values = frame[col].str.strip()
        categorical = name in ALL_CATEGORICAL or not values.map(is_number).all()
        if categorical:
            levels = sorted(values.unique())
            if len(levels) == 2:
                columns[f"{col}={levels[1]}"] = values == levels[1]
            else:
                for level in levels:
                    columns[f"{col}={level}"] = values == level
            continue
        numbers = values.astype(float)
        distinct = np.unique(numbers)
        if len(distinct) == 2:
            columns[f"{col}>={distinct[1]:g}"] = numbers >= distinct[1]
            continue
        cuts = np.unique(np.quantile(numbers, [i / (THRESHOLDS + 1) for i in range(1, THRESHOLDS + 1)]))
        for t in cuts:
            column = numbers >= t
            if 0 < column.sum() < len(column):
                columns[f"{col}>={t:g}"] = column
    x = pd.DataFrame(columns).astype(np.int64)
    x = x.loc[:, x.nunique() > 1]
    return x, y


def write(name, x, y):
    os.makedirs(OUT_DIR, exist_ok=True)
    path = os.path.join(OUT_DIR, name + ".csv")
    out = x.copy()
    out["target"] = y
    out.to_csv(path, index=False)
    return path


def run_glassbox(bench, path, depth, limit, backend="dp"):
    output = subprocess.run(
        [bench, path, str(depth), str(limit), "1", backend], check=True, capture_output=True,
        text=True, timeout=2 * limit + 120,
    ).stdout
    line = json.loads(output.strip().splitlines()[-1])
    return {
        "objective": line["objective"],
        "optimal": line["status"] == "optimal",
        "bound": line["bound"],
        "own_seconds": line["seconds"],
        "wall_seconds": line["seconds"],
        "status": line["status"],
        "gap": line["gap"],
    }


def run_streed(x, y, depth, limit):
    from pystreed import STreeDClassifier

    model = STreeDClassifier(max_depth=depth, time_limit=limit, verbose=True)
    log = io.StringIO()
    with contextlib.redirect_stdout(log):
        clock = time.perf_counter()
        model.fit(x, y)
        wall = time.perf_counter() - clock
    match = re.search(r"Total time elapsed:\s*([0-9.eE+-]+)", log.getvalue())
    return {
        "objective": int((model.predict(x) != y).sum()),
        "optimal": bool(model.fit_result.is_optimal()),
        "own_seconds": float(match.group(1)) if match else wall,
        "wall_seconds": wall,
    }


def run_milp(bench, path, depth, limit, backend):
    """One MILP solve; a failure is a record with status `error`, not the end of the run."""
    try:
        return run_glassbox(bench, path, depth, limit, backend)
    except subprocess.TimeoutExpired:
        message = f"stopped after {2 * limit + 120:.0f} s"
    except subprocess.CalledProcessError as error:
        message = (error.stderr or "").strip().splitlines()[-1:] or [f"exit {error.returncode}"]
        message = message[0]
    return {"objective": None, "optimal": False, "bound": None, "own_seconds": float("nan"),
            "wall_seconds": float("nan"), "status": "error", "gap": None, "error": message}


class Dl85Worker:
    """The DL8.5 worker process (see DL85_WORKER)."""

    def __init__(self, python):
        self.process = subprocess.Popen(
            [python, "-c", DL85_WORKER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )

    def run(self, path, depth, limit):
        self.process.stdin.write(json.dumps([path, depth, limit]) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            sys.exit("the DL8.5 worker stopped")
        return json.loads(line)

    def close(self):
        self.process.stdin.close()
        self.process.wait()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--depths", default="2,3,4")
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--datasets", default=",".join(CLASSIFICATION))
    parser.add_argument("--dl85-python")
    parser.add_argument("--out", default=os.path.join(OUT_DIR, "results.jsonl"))
    parser.add_argument("--milp-backends", default="highs,cbc")
    parser.add_argument("--milp-datasets", default="monks1,tic_tac_toe,car",
                        help="data sets whose instances the MILP backends solve too; 'all': every one")
    parser.add_argument("--milp-time-limit", type=float, default=60.0)
    parser.add_argument("--milp-jobs", type=int, default=1,
                        help="MILP solves run at a time (after all DP timings)")
    parser.add_argument("--bench", default=BENCH, help="the tree_search_bench executable")
    parser.add_argument("--tables-from", help="print the tables of this results file and stop")
    args = parser.parse_args()
    milp_backends = [b for b in args.milp_backends.split(",") if b]
    if args.tables_from:
        rows = rows_from_records(args.tables_from)
        print_table(rows)
        print_milp_table(rows, milp_backends)
        return
    if not args.dl85_python:
        sys.exit("--dl85-python is required (the interpreter with pydl8.5)")
    if args.milp_jobs < 1:
        sys.exit(f"--milp-jobs must be at least 1, got {args.milp_jobs}")
    milp_datasets = set(d for d in args.milp_datasets.split(",") if d)
    if not os.path.exists(args.bench):
        sys.exit(f"{args.bench} is missing: cargo build --release --example tree_search_bench")
    depths = [int(d) for d in args.depths.split(",")]
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    rows = []
    milp_jobs = []
    dl85 = Dl85Worker(args.dl85_python)
    with open(args.out, "w") as out:
        def record(row, repeat, tool, result):
            line = {"dataset": row["dataset"], "rows": row["rows"], "columns": row["columns"],
                    "depth": row["depth"], "repeat": repeat, "tool": tool, **result}
            out.write(json.dumps(line) + "\n")
            out.flush()

        for name in args.datasets.split(","):
            x, y = binarize(name)
            if x.shape[1] > MAX_COLUMNS:
                print(f"# {name}: {x.shape[1]} binary columns > {MAX_COLUMNS}, left out", flush=True)
                continue
            path = write(name, x, y)
            xv = x.to_numpy()
            for depth in depths:
                row = {"dataset": name, "rows": len(y), "columns": x.shape[1], "depth": depth}
                runs = {"glassbox dp": [], "STreeD": [], "DL8.5": []}
                tools = [
                    ("glassbox dp", lambda: run_glassbox(args.bench, path, depth, args.time_limit)),
                    ("STreeD", lambda: run_streed(xv, y, depth, args.time_limit)),
                    ("DL8.5", lambda: dl85.run(path, depth, args.time_limit)),
                ]
                for repeat in range(args.repeats):
                    order = tools[repeat % 3:] + tools[:repeat % 3]
                    for tool, run in order:
                        result = run()
                        runs[tool].append(result)
                        record(row, repeat, tool, result)
                for tool, results in runs.items():
                    row[tool] = summarize(results)
                rows.append(row)
                print(summary_line(row), flush=True)
                if "all" in milp_datasets or name in milp_datasets:
                    row["milp"] = {}
                    milp_jobs += [(row, path, backend) for backend in milp_backends]
        dl85.close()
        # The MILP solves, after every DP timing is done.
        with concurrent.futures.ThreadPoolExecutor(args.milp_jobs) as pool:
            futures = {
                pool.submit(run_milp, args.bench, path, row["depth"], args.milp_time_limit,
                            backend): (row, backend)
                for row, path, backend in milp_jobs
            }
            for future in concurrent.futures.as_completed(futures):
                row, backend = futures[future]
                result = future.result()
                row["milp"][backend] = result
                record(row, 0, f"glassbox {backend}", result)
                print(f"{row['dataset']} d={row['depth']} {backend}: {result['status']} "
                      f"{result['objective']} / {result['bound']} {result['own_seconds']:.1f}s",
                      flush=True)
    print_table(rows)
    print_milp_table(rows, milp_backends)


def summarize(results):
    """A DP tool's repeats as one entry: the first objective, all optimal, median times."""
    return {
        "objective": results[0]["objective"],
        "optimal": all(r["optimal"] for r in results),
        "own": statistics.median(r["own_seconds"] for r in results),
        "wall": statistics.median(r["wall_seconds"] for r in results),
    }


def rows_from_records(path):
    """The table rows of a results file: instances whose three DP tools all finished."""
    instances = {}
    with open(path) as source:
        for line in source:
            line = json.loads(line)
            key = (line["dataset"], line["depth"])
            entry = instances.setdefault(key, {"dataset": line["dataset"], "rows": line["rows"],
                                               "columns": line["columns"], "depth": line["depth"],
                                               "dp": {}, "milp": {}})
            tool = line["tool"]
            if tool in ("glassbox dp", "STreeD", "DL8.5"):
                entry["dp"].setdefault(tool, []).append(line)
            else:
                entry["milp"][tool.removeprefix("glassbox ")] = line
    rows = []
    for entry in instances.values():
        if len(entry["dp"]) < 3:
            continue
        row = {k: entry[k] for k in ("dataset", "rows", "columns", "depth")}
        for tool, results in entry["dp"].items():
            row[tool] = summarize(results)
        if entry["milp"]:
            row["milp"] = entry["milp"]
        rows.append(row)
    return rows


def summary_line(row):
    parts = [f"{row['dataset']} d={row['depth']}"]
    for tool in ("glassbox dp", "STreeD", "DL8.5"):
        r = row[tool]
        parts.append(f"{tool}: {r['objective']} {'opt' if r['optimal'] else 'LIMIT'} "
                     f"{r['own']:.4f}s (wall {r['wall']:.4f}s)")
    return " | ".join(parts)


def print_table(rows):
    print()
    print("| data set | rows | columns | depth | misclassified (dp / STreeD / DL8.5) | all optimal | "
          "dp s | STreeD own s | STreeD fit s | DL8.5 own s | DL8.5 fit s | dp / faster peer (own) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    ratios = []
    for row in rows:
        dp, st, dl = row["glassbox dp"], row["STreeD"], row["DL8.5"]
        objectives = f"{dp['objective']:g} / {st['objective']} / {dl['objective']}"
        all_optimal = dp["optimal"] and st["optimal"] and dl["optimal"]
        agree = dp["objective"] == st["objective"] == dl["objective"]
        faster = min(st["own"], dl["own"])
        ratio = dp["own"] / faster if faster > 0 else float("inf")
        ratios.append(ratio)
        flag = "yes" if all_optimal else "no"
        if all_optimal and not agree:
            flag += " (OBJECTIVES DIFFER)"
        print(f"| {row['dataset']} | {row['rows']} | {row['columns']} | {row['depth']} | {objectives} | "
              f"{flag} | {dp['own']:.4f} | {st['own']:.4f} | {st['wall']:.4f} | {dl['own']:.4f} | "
              f"{dl['wall']:.4f} | {ratio:.2f} |")
    if ratios:
        print(f"\nmedian ratio dp / faster peer (own times): {statistics.median(ratios):.3f} "
              f"over {len(ratios)} instances")
        dp_optimal = sum(r["glassbox dp"]["optimal"] for r in rows)
        print(f"dp proved optimal on {dp_optimal} of {len(rows)} instances")


def print_milp_table(rows, backends):
    rows = [row for row in rows if "milp" in row]
    if not rows:
        return
    print()
    header = "| data set | depth | dp misclassified, s |"
    rule = "|---|---|---|"
    for backend in backends:
        header += f" {backend} status | {backend} objective / bound (gap) | {backend} s |"
        rule += "---|---|---|"
    print(header)
    print(rule)
    for row in rows:
        dp = row["glassbox dp"]
        line = f"| {row['dataset']} | {row['depth']} | {dp['objective']:g}, {dp['own']:.4f} |"
        for backend in backends:
            r = row["milp"].get(backend)
            if r is None:
                line += " not run | - | - |"
                continue
            objective = "-" if r["objective"] is None else f"{r['objective']:.6g}"
            bound = "-" if r["bound"] is None else f"{r['bound']:.6g}"
            gap = "-" if r["gap"] is None else f"{100 * r['gap']:.1f}%"
            line += f" {r['status']} | {objective} / {bound} ({gap}) | {r['own_seconds']:.2f} |"
        print(line)
    for backend in backends:
        solved = sum(row["milp"].get(backend, {}).get("optimal", False) for row in rows)
        print(f"{backend} proved optimal on {solved} of {len(rows)} instances")


if __name__ == "__main__":
    main()
