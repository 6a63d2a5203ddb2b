#!/usr/bin/env python3
"""S-ORCT, glassbox against the peer (numpy + cyipopt), on the same machine, data and protocol.

For one data set, depth, number of starts and splits, this script runs

  (a) glassbox: `target/release/glassbox run CONFIG --out DIR` on a generated TOML config
      (formulation sorct, solver ipopt, the split protocol and multistart below), and reads
      DIR/results.jsonl (one line per start: solve_seconds, test_accuracy, selected);
  (b) the peer: `PYTHON /work/shared/peers/sorct_cyipopt.py DATA --depth ...`, and reads its
      one JSON line per start (solve_seconds, objective, test_accuracy),

then prints a table: mean and median seconds per start, the ratio peer / glassbox of the mean
(and of the median) time per start, and the mean over splits of the test accuracy of each
split's best start (lowest objective: glassbox's `selected`, the same rule for the peer).

Rows: by default glassbox gets the peer's exact rows for every split: the script writes the
peer's split (scikit-learn's stratified train_test_split with the same seed) as a training and
a test file and runs glassbox with `data.test_path`; `--different-rows` lets glassbox use its
own splitter instead.

Protocol: both use repeated stratified holdout, test fraction 0.25 (as `--test`), split r with
seed `--seed + r`, min-max scaling fitted on the training part, gamma 512, lambda = 0, IPOPT
with tol 1e-8. They do NOT share the random starts (each draws its own data-aware starts from
its own generator), nor the Hessian (glassbox:
IPOPT with the exact Hessian by default, `--hessian limited-memory` to match the peer; the
peer: always IPOPT's limited-memory approximation). The table says so.

Timing: both sides report the wall time of the IPOPT call alone (per start), so process start,
imports and data loading are left out; the table also gives each side's total process time.
The machine may be shared: by default the splits are interleaved (split r: glassbox then the
peer, or the peer then glassbox on odd r), so that a change of load hits both sides alike.
`--no-interleave` runs each side once over all splits instead.

Needs: stdlib only here; the peer's Python needs numpy, scikit-learn and cyipopt (see
benches/README.md for the venv). The glassbox binary must be built: `cargo build --release`.

usage: compare_sorct.py --data DATA.csv [--depth 2] [--starts 20] [--splits 10] [--seed 1]
                        [--categorical a1,a2] [--rho 0.1] [--hessian exact|limited-memory]
                        [--only glassbox|peer] [--python PY] [--glassbox BIN] [--peer PEER]
                        [--keep DIR] [--no-interleave]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_PEER = Path("/work/shared/peers/sorct_cyipopt.py")
TEST_FRACTION = 0.25


# cyipopt's integer statuses (Ipopt's ApplicationReturnStatus), named as glassbox's raw_status.
IPOPT_STATUS = {
    0: "Solve_Succeeded", 1: "Solved_To_Acceptable_Level", 2: "Infeasible_Problem_Detected",
    3: "Search_Direction_Becomes_Too_Small", 4: "Diverging_Iterates", 5: "User_Requested_Stop",
    6: "Feasible_Point_Found", -1: "Maximum_Iterations_Exceeded", -2: "Restoration_Failed",
    -3: "Error_In_Step_Computation", -4: "Maximum_CpuTime_Exceeded",
    -10: "Not_Enough_Degrees_Of_Freedom", -11: "Invalid_Problem_Definition", -12: "Invalid_Option",
    -13: "Invalid_Number_Detected", -100: "Unrecoverable_Exception",
    -101: "NonIpopt_Exception_Thrown", -102: "Insufficient_Memory", -199: "Internal_Error",
}


def fail(message):
    sys.exit(f"compare_sorct: {message}")


def toml_string(s):
    # JSON string escapes are valid TOML basic-string escapes.
    return json.dumps(str(s))


SPLIT_SNIPPET = r"""
import csv, sys
import numpy as np
from sklearn.model_selection import train_test_split
data, seed, test, train_out, test_out = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4], sys.argv[5]
with open(data, newline="") as f:
    rows = list(csv.reader(f))
header, rows = rows[0], rows[1:]
classes = sorted(set(r[-1] for r in rows))
y = np.array([classes.index(r[-1]) for r in rows])
# The peer calls train_test_split(X, y, test_size, stratify=y, random_state=seed): the rows
# it picks depend on n, y and the seed only, so indices give the same rows.
train, test_idx = train_test_split(np.arange(len(rows)), y, test_size=test, stratify=y, random_state=seed)[:2]
for path, idx in ((train_out, train), (test_out, test_idx)):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows[i] for i in idx)
"""


def write_split_files(args, data, work, split_seed):
    """The peer's split for `split_seed` (scikit-learn's stratified train_test_split, run by
    the peer's Python) written as a training and a test CSV for glassbox's data.test_path."""
    train, test = work / f"train-{split_seed}.csv", work / f"test-{split_seed}.csv"
    cmd = [str(args.python), "-c", SPLIT_SNIPPET, str(data), str(split_seed), str(TEST_FRACTION),
           str(train), str(test)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        fail(f"writing the split files failed: {proc.stderr[-2000:]}")
    return train, test


def glassbox_config(args, data, repeats, split_seed, start_seed, test_data=None):
    lines = [
        "[data]",
        f"path = {toml_string(data)}",
    ]
    if test_data is not None:
        lines.append(f"test_path = {toml_string(test_data)}")
    lines += [
        f"categorical = [{', '.join(toml_string(c) for c in args.categorical)}]",
        "",
        "[split]",
        f"test_fraction = {TEST_FRACTION}",
        f"repeats = {repeats}",
        f"seed = {split_seed}",
        "",
        "[formulation]",
        'name = "sorct"',
        f"depth = {args.depth}",
    ]
    if args.rho > 0:
        lines.append(f"rho = [{args.rho}]")
    lines += ["", "[solver]", 'name = "ipopt"']
    if args.hessian != "exact":
        lines.append(f"raw = {{ hessian_approximation = {toml_string(args.hessian)} }}")
    lines += ["", "[multistart]", f"starts = {args.starts}", f"seed = {start_seed}", ""]
    return "\n".join(lines)


def run_glassbox(args, data, work, tag, repeats, split_seed):
    """Runs glassbox on `repeats` splits from `split_seed`; returns (records, process seconds)."""
    config = work / f"glassbox-{tag}.toml"
    out = work / f"glassbox-{tag}"
    if args.same_rows and args.python is not None:
        train, test = write_split_files(args, data, work, split_seed)
        config.write_text(glassbox_config(args, train, 1, split_seed, split_seed, test))
    else:
        config.write_text(glassbox_config(args, data, repeats, split_seed, split_seed))
    cmd = [str(args.glassbox), "run", str(config), "--out", str(out), "--force"]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    (work / f"glassbox-{tag}.log").write_text(proc.stdout + proc.stderr)
    if proc.returncode != 0:
        fail(f"glassbox failed ({' '.join(cmd)}):\n{proc.stdout}{proc.stderr}")
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines() if line]
    return records, seconds


def run_peer(args, data, work, tag, splits, split_seed):
    """Runs the peer on `splits` splits from `split_seed`; returns (records, process seconds)."""
    cmd = [
        str(args.python), str(args.peer), str(data),
        "--depth", str(args.depth), "--starts", str(args.starts), "--splits", str(splits),
        "--seed", str(split_seed), "--rho", str(args.rho), "--test", str(TEST_FRACTION),
    ]
    if args.categorical:
        cmd += ["--categorical", ",".join(args.categorical)]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    (work / f"peer-{tag}.jsonl").write_text(proc.stdout)
    if proc.returncode != 0:
        fail(f"the peer failed ({' '.join(cmd)}):\n{proc.stdout[-2000:]}{proc.stderr[-4000:]}")
    records = []
    for line in proc.stdout.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        rec = json.loads(line)
        if rec.get("summary"):
            continue
        rec["status"] = IPOPT_STATUS.get(rec.get("status"), str(rec.get("status")))
        records.append(rec)
    return records, seconds


def check_peer_python(python):
    probe = subprocess.run(
        [str(python), "-c", "import numpy, sklearn, cyipopt; print(cyipopt.__version__)"],
        capture_output=True, text=True)
    if probe.returncode != 0:
        fail(f"{python} cannot import numpy, scikit-learn and cyipopt "
             f"(see benches/README.md for the venv):\n{probe.stderr.strip()[-1500:]}")
    return probe.stdout.strip()


def best_start_accuracies(records, key_split, selected):
    """Test accuracy of each split's best start, in split order."""
    by_split = {}
    for r in records:
        by_split.setdefault(key_split(r), []).append(r)
    out = []
    for split in sorted(by_split):
        best = selected(by_split[split])
        if best is not None:
            out.append(best["test_accuracy"])
    return out


def glassbox_selected(rs):
    sel = [r for r in rs if r.get("selected")]
    return sel[0] if sel else None


def peer_selected(rs):
    ok = [r for r in rs if r.get("objective") is not None]
    return min(ok, key=lambda r: r["objective"]) if ok else None


def summarize(name, records, process_seconds, accuracies, status_key):
    secs = [r["solve_seconds"] for r in records]
    statuses = {}
    for r in records:
        s = str(r.get(status_key))
        statuses[s] = statuses.get(s, 0) + 1
    return {
        "name": name,
        "solves": len(secs),
        "mean": statistics.fmean(secs) if secs else float("nan"),
        "median": statistics.median(secs) if secs else float("nan"),
        "total": sum(secs),
        "process": process_seconds,
        "accuracy": statistics.fmean(accuracies) if accuracies else float("nan"),
        "accuracy_sd": statistics.stdev(accuracies) if len(accuracies) > 1 else 0.0,
        "splits": len(accuracies),
        "statuses": ", ".join(f"{k} x{v}" for k, v in sorted(statuses.items())),
    }


def print_table(args, data, sides, peer_version):
    print()
    print(f"S-ORCT on {data.name}: depth {args.depth}, {args.starts} starts x {args.splits} splits, "
          f"test fraction {TEST_FRACTION}, seed {args.seed}, rho {args.rho}, lambda 0, gamma 512")
    labels = {
        "glassbox": f"glassbox (IPOPT, {args.hessian} Hessian)",
        "peer": f"peer (cyipopt {peer_version}, limited-memory)" if peer_version else "peer",
    }
    names = [s["name"] for s in sides]
    width = max(26, *(len(labels[n]) + 2 for n in names))
    rows = [
        ("solves", lambda s: f"{s['solves']}"),
        ("mean s / start", lambda s: f"{s['mean']:.4f}"),
        ("median s / start", lambda s: f"{s['median']:.4f}"),
        ("total solve s", lambda s: f"{s['total']:.2f}"),
        ("total process s", lambda s: f"{s['process']:.2f}"),
        ("test acc. of best start", lambda s: f"{s['accuracy']:.4f} (sd {s['accuracy_sd']:.4f}, {s['splits']} splits)"),
        ("statuses", lambda s: s["statuses"]),
    ]
    print(f"{'':<24}" + "  ".join(f"{labels[n]:<{width}}" for n in names).rstrip())
    for title, cell in rows:
        print(f"{title:<24}" + "  ".join(f"{cell(s):<{width}}" for s in sides).rstrip())
    if len(sides) == 2:
        g, p = sides
        print(f"ratio peer / glassbox, mean time per start:   {p['mean'] / g['mean']:.2f}x")
        print(f"ratio peer / glassbox, median time per start: {p['median'] / g['median']:.2f}x")
    if len(sides) == 2:
        print("note: same protocol (75/25 stratified holdout, split r seeded seed + r, min-max "
              "scaling fitted on the training part, IPOPT tol 1e-8)"
              + (", the same rows in every split" if args.same_rows else
                 ", but their splitters shuffle differently, so the rows of a split differ")
              + "; the two draw different random starts; the peer always uses IPOPT's "
              "limited-memory Hessian"
              + ("" if args.hessian != "exact" else ", glassbox the exact Hessian") + ".")
    print("times: wall seconds of the IPOPT call per start"
          + (", splits interleaved between the two sides." if args.interleave and len(sides) == 2
             else "."))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", required=True, type=Path, help="CSV file (label in column 'target')")
    ap.add_argument("--depth", type=int, default=2)
    ap.add_argument("--starts", type=int, default=20)
    ap.add_argument("--splits", type=int, default=10)
    ap.add_argument("--seed", type=int, default=1, help="seed of the first split")
    ap.add_argument("--categorical", default="", help="comma-separated categorical columns")
    ap.add_argument("--rho", type=float, default=0.0, help="rho of constraints (8) for every class (0: off)")
    ap.add_argument("--hessian", choices=["exact", "limited-memory"], default="exact",
                    help="glassbox's Hessian (the peer always uses limited-memory)")
    ap.add_argument("--only", choices=["glassbox", "peer"], help="run one side only")
    ap.add_argument("--python", type=Path, help="Python with numpy, scikit-learn, cyipopt "
                    "(default: $GLASSBOX_PEER_PYTHON, else .venv/bin/python, else this Python)")
    ap.add_argument("--glassbox", type=Path, default=ROOT / "target/release/glassbox")
    ap.add_argument("--peer", type=Path, default=DEFAULT_PEER)
    ap.add_argument("--keep", type=Path, help="keep configs, logs and results in this folder")
    ap.add_argument("--no-interleave", dest="interleave", action="store_false",
                    help="run each side once over all splits instead of split by split")
    ap.add_argument("--different-rows", dest="same_rows", action="store_false",
                    help="let glassbox split with its own splitter instead of giving it the "
                    "peer's rows (scikit-learn's stratified split) through data.test_path")
    args = ap.parse_args()
    if args.same_rows and not args.interleave:
        fail("--no-interleave needs --different-rows (the peer's rows go to glassbox split by split)")
    args.categorical = [c for c in args.categorical.split(",") if c]
    if args.depth < 1 or args.starts < 1 or args.splits < 1:
        fail("depth, starts and splits must be at least 1")
    data = args.data.resolve()
    if not data.is_file():
        fail(f"no data file {data}")

    run_g = args.only in (None, "glassbox")
    run_p = args.only in (None, "peer")
    if run_g and not os.access(args.glassbox, os.X_OK):
        fail(f"no glassbox binary at {args.glassbox}: run `cargo build --release` first")
    peer_version = None
    if run_p or args.same_rows:
        if args.python is None:
            env = os.environ.get("GLASSBOX_PEER_PYTHON")
            venv = ROOT / ".venv/bin/python"
            args.python = Path(env) if env else venv if venv.exists() else Path(sys.executable)
        if not args.peer.is_file():
            fail(f"no peer script at {args.peer}")
        peer_version = check_peer_python(args.python)

    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
        work = args.keep
    else:
        work = Path(tempfile.mkdtemp(prefix="compare_sorct-"))
    try:
        g_records, p_records = [], []
        g_process = p_process = 0.0
        if args.interleave:
            chunks = [(r, 1, args.seed + r) for r in range(args.splits)]
        else:
            chunks = [(0, args.splits, args.seed)]
        for i, (r, count, split_seed) in enumerate(chunks):
            order = ["glassbox", "peer"] if i % 2 == 0 else ["peer", "glassbox"]
            for side in order:
                if side == "glassbox" and run_g:
                    recs, secs = run_glassbox(args, data, work, f"split{r}", count, split_seed)
                    for rec in recs:
                        rec["split"] = rec["split_seed"] - args.seed
                    g_records += recs
                    g_process += secs
                elif side == "peer" and run_p:
                    recs, secs = run_peer(args, data, work, f"split{r}", count, split_seed)
                    for rec in recs:
                        rec["split"] = rec["split"] + r
                    p_records += recs
                    p_process += secs
            done = []
            if run_g:
                done.append(f"glassbox {len(g_records)} solves")
            if run_p:
                done.append(f"peer {len(p_records)} solves")
            print(f"[{i + 1}/{len(chunks)}] " + ", ".join(done), file=sys.stderr, flush=True)

        sides = []
        if run_g:
            acc = best_start_accuracies(g_records, lambda r: r["split"], glassbox_selected)
            sides.append(summarize("glassbox", g_records, g_process, acc, "raw_status"))
        if run_p:
            acc = best_start_accuracies(p_records, lambda r: r["split"], peer_selected)
            sides.append(summarize("peer", p_records, p_process, acc, "status"))
        print_table(args, data, sides, peer_version)
        if args.keep:
            print(f"configs, logs and per-start results: {work}")
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
