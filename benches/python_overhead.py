"""The Python layer's cost against the CLI: the same S-ORCT fit (same data, depth, starts,
seed, backend) timed as `glassbox run` (a process: reading the CSV, the engine, writing the
results and the model) and as `SORCTClassifier.fit` (in this process: validating and
converting the DataFrame, the engine through the extension, reading the model back).
Both fit on every row and evaluate on every row (the CLI through a test file that is the
training file again), so they solve the same problems. Runs alternate (CLI, Python, CLI,
...) so that the machine's load falls on both alike; medians and the median of the paired
ratios are reported.

Run with the Python of an environment where the release build of the package is installed
(`pip install ./python`), and the release CLI:

    python benches/python_overhead.py --cli target/release/glassbox --repeats 5
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time

import pandas as pd

import glassbox

HERE = os.path.dirname(os.path.abspath(__file__))
DATASETS = os.path.join(HERE, "..", "..", "shared", "datasets")

CASES = [
    # (data set, depth, starts)
    ("iris", 2, 20),
    ("thyroid", 2, 2),
]


def cli_fit(cli, folder, name, depth, starts):
    config = os.path.join(folder, f"{name}.toml")
    data = os.path.join(DATASETS, f"{name}.csv")
    with open(config, "w") as f:
        f.write(
            textwrap.dedent(
                f"""
                [data]
                path = "{data}"
                test_path = "{data}"
                [formulation]
                name = "sorct"
                depth = {depth}
                [solver]
                name = "ipopt"
                [multistart]
                starts = {starts}
                seed = 1
                """
            )
        )
    out = os.path.join(folder, f"out-{name}")
    started = time.perf_counter()
    subprocess.run([cli, "run", config, "--out", out, "--force"], check=True, capture_output=True)
    seconds = time.perf_counter() - started
    with open(os.path.join(out, "results.jsonl")) as f:
        lines = [json.loads(line) for line in f]
    with open(os.path.join(out, "models", "split-0.json")) as f:
        model = json.load(f)["model"]
    return seconds, sum(l["solve_seconds"] for l in lines), model


def python_fit(X, y, depth, starts):
    estimator = glassbox.SORCTClassifier(depth=depth, n_starts=starts, random_state=1)
    started = time.perf_counter()
    estimator.fit(X, y)
    seconds = time.perf_counter() - started
    solves = sum(r["solve_seconds"] for r in estimator.solve_records_)
    return seconds, solves, json.loads(estimator.to_json())["model"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cli", required=True, help="the release glassbox binary")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for name, depth, starts in CASES:
            frame = pd.read_csv(os.path.join(DATASETS, f"{name}.csv"))
            X, y = frame.drop(columns="target"), frame["target"]
            cli_times, py_times, cli_solves, py_solves, ratios = [], [], [], [], []
            for _ in range(args.repeats):
                c, cs, cli_model = cli_fit(args.cli, folder, name, depth, starts)
                p, ps, py_model = python_fit(X, y, depth, starts)
                if cli_model != py_model:
                    sys.exit(f"{name}: the CLI and Python fitted different models")
                cli_times.append(c)
                py_times.append(p)
                cli_solves.append(cs)
                py_solves.append(ps)
                ratios.append(p / c)
            row = {
                "data": f"{name} ({len(frame)} x {X.shape[1]})",
                "starts": starts,
                "cli_s": statistics.median(cli_times),
                "python_s": statistics.median(py_times),
                "cli_solves_s": statistics.median(cli_solves),
                "python_solves_s": statistics.median(py_solves),
                "python/cli": statistics.median(ratios),
                "ratio_min": min(ratios),
                "ratio_max": max(ratios),
                "python_outside_solves_s": statistics.median(p - s for p, s in zip(py_times, py_solves)),
                "cli_outside_solves_s": statistics.median(c - s for c, s in zip(cli_times, cli_solves)),
            }
            rows.append(row)
            print(json.dumps(row), flush=True)
    print()
    print("| data | starts | CLI (s) | Python fit (s) | Python / CLI (median, min-max) | outside the solves: CLI / Python (s) |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['data']} | {r['starts']} | {r['cli_s']:.3f} | {r['python_s']:.3f} | "
            f"{r['python/cli']:.3f} ({r['ratio_min']:.3f}-{r['ratio_max']:.3f}) | "
            f"{r['cli_outside_solves_s']:.3f} / {r['python_outside_solves_s']:.3f} |"
        )
    print(f"\n(load average at the end: {os.getloadavg()[0]:.1f}; {os.cpu_count()} cores)")


if __name__ == "__main__":
    main()
