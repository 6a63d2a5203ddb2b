"""glassbox's estimators against the Python tools a user would try instead, on the same data,
depth and splits (stratified 75/25 holdouts, seeds 0..R-1), reporting test accuracy and fit
time (wall seconds of `fit`), whoever wins:

- S-ORCT (IPOPT, `n_starts` starts) against scikit-learn's DecisionTreeClassifier (CART) of
  the same depth, on continuous data;
- OCT (HiGHS, and the `dp` backend: dynamic programming over binary features) and FlowOCT
  (HiGHS) against ODTlearn's FlowOCT (CBC through python-mip) and pydl8.5, optimal
  axis-aligned trees, on the same one-hot binary features (both peers need binary ones);
- the risk scores ORS (stump-binarized) and OGRS against FasterRisk (on the raw features,
  and on its own threshold binarization), on binary problems, with the same number of rules
  and the same score range (rows with a missing value, '?',
  dropped for every tool: FasterRisk takes numbers only).

Each peer runs in its own virtual environment (their pins conflict: pydl8.5 and FasterRisk
need scikit-learn 1.2): this script, run with the Python where glassbox is installed, runs
the peers as workers (`--worker NAME`) in the Pythons given on the command line, handing
them the data and the split as JSON. Every fit of a split is made in the same run, one tool
after the other.

    python benches/python_peers.py --peers-python /work/peers-venv/bin/python \
        --dl85-python /work/dl85-py-venv/bin/python \
        --fasterrisk-python /work/fasterrisk-venv/bin/python --repeats 5
"""

import argparse
import collections
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DATASETS = os.path.join(HERE, "..", "..", "shared", "datasets")


# -- workers (run in the peers' environments: numpy and scikit-learn only) ------------------


def worker(name):
    import numpy as np

    job = json.load(sys.stdin)
    # The result is the only thing on stdout: what the peers print goes to stderr.
    result_out, sys.stdout = sys.stdout, sys.stderr
    X = np.array(job["X"], dtype=float)
    y = np.array(job["y"])
    train, test = job["train"], job["test"]
    depth, limit = job["depth"], job["time_limit"]
    # Imports first: the clock times the fit only, as glassbox's is timed.
    if name == "cart":
        from sklearn.tree import DecisionTreeClassifier
    elif name == "odtlearn_flowoct":
        from odtlearn.flow_oct import FlowOCT
    elif name == "pydl85":
        from pydl85 import DL85Classifier
    elif name in ("fasterrisk", "fasterrisk_binarized"):
        from fasterrisk.binarization_util import BinBinarizer
        from fasterrisk.fasterrisk import RiskScoreClassifier, RiskScoreOptimizer
    started = time.perf_counter()
    if name == "cart":
        model = DecisionTreeClassifier(max_depth=depth, random_state=0).fit(X[train], y[train])
        predict = model.predict
    elif name == "odtlearn_flowoct":
        model = FlowOCT(solver="cbc", depth=depth, time_limit=limit, _lambda=0.0, verbose=False)
        model.fit(X[train].astype(int), y[train])
        predict = lambda Z: model.predict(Z.astype(int))  # noqa: E731
    elif name == "pydl85":
        # DL8.5 takes integer class codes
        labels, codes = np.unique(y, return_inverse=True)
        model = DL85Classifier(max_depth=depth, time_limit=limit).fit(X[train].astype(int), codes[train])
        predict = lambda Z: labels[np.asarray(model.predict(Z.astype(int)), dtype=int)]  # noqa: E731
    elif name in ("fasterrisk", "fasterrisk_binarized"):
        # FasterRisk's integer coefficients multiply the given columns: the raw features, or
        # (as its documentation does with continuous data) its own 0/1 features `x <= t`, at
        # most 100 thresholds per feature, learned on the training rows.
        encode = lambda Z: Z  # noqa: E731
        if name == "fasterrisk_binarized":
            import pandas as pd

            binarizer = BinBinarizer(whether_interval=False, max_num_thresholds_per_feature=100)
            binarizer.fit(pd.DataFrame(X[train]))
            encode = lambda Z: binarizer.transform(pd.DataFrame(Z))[0].to_numpy(dtype=float)  # noqa: E731
        signs = np.where(y == job["positive"], 1, -1)
        optimizer = RiskScoreOptimizer(X=encode(X[train]), y=signs[train], k=job["rules"], lb=-5, ub=5)
        optimizer.optimize()
        multipliers, intercepts, coefficients = optimizer.get_models()
        model = RiskScoreClassifier(multipliers[0], intercepts[0], coefficients[0])
        predict = lambda Z: np.where(model.predict(encode(Z)) > 0, job["positive"], job["negative"])  # noqa: E731
    else:
        raise SystemExit(f"unknown worker {name}")
    seconds = time.perf_counter() - started
    accuracy = float(np.mean(predict(X[test]) == y[test]))
    json.dump({"accuracy": accuracy, "seconds": seconds}, result_out)


def run_worker(python, name, job):
    out = subprocess.run(
        [python, os.path.abspath(__file__), "--worker", name],
        input=json.dumps(job),
        capture_output=True,
        text=True,
    )
    if out.returncode != 0:
        return {"error": out.stderr.strip().splitlines()[-1] if out.stderr.strip() else "failed"}
    return json.loads(out.stdout)


# -- glassbox (this environment) ---------------------------------------------------------------


def glassbox_fit(make, X, y, train, test):
    model = make()
    started = time.perf_counter()
    try:
        model.fit(X.iloc[train], y.iloc[train])
    except Exception as error:  # reported in the table
        return {"error": str(error).splitlines()[0][:80]}
    seconds = time.perf_counter() - started
    accuracy = float((model.predict(X.iloc[test]) == y.iloc[test].to_numpy()).mean())
    return {"accuracy": accuracy, "seconds": seconds, "status": model.solve_result_["status"]}


def load(name, binary=False, numeric=False):
    """X and y of data set `name`; `binary`: one 0/1 column per level of every column;
    `numeric`: rows with a missing value ('?') dropped, every column a number."""
    import pandas as pd

    frame = pd.read_csv(os.path.join(DATASETS, f"{name}.csv"))
    if numeric:
        frame = frame.replace("?", float("nan")).dropna()
        features = frame.columns.drop("target")
        frame[features] = frame[features].apply(pd.to_numeric)
    X, y = frame.drop(columns="target"), frame["target"].astype(str)
    if binary:
        X = pd.get_dummies(X.astype(str), dtype=float)  # one 0/1 column per level
    return X, y


def main():
    import glassbox
    import numpy as np
    from sklearn.model_selection import train_test_split

    parser = argparse.ArgumentParser()
    parser.add_argument("--peers-python", required=True)
    parser.add_argument("--dl85-python", help="needed for the optimal-trees comparison")
    parser.add_argument("--fasterrisk-python", help="needed for the risk-score comparison")
    parser.add_argument("--only", default="sorct,trees,risk",
                        help="the comparisons to run, comma-separated: sorct, trees, risk")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--starts", type=int, default=10)
    args = parser.parse_args()
    limit = args.time_limit
    only = set(args.only.split(","))
    if not only <= {"sorct", "trees", "risk"}:
        parser.error(f"--only: unknown comparison(s) {sorted(only - {'sorct', 'trees', 'risk'})}")
    for part, option, value in [("trees", "--dl85-python", args.dl85_python),
                                ("risk", "--fasterrisk-python", args.fasterrisk_python)]:
        if part in only and not value:
            parser.error(f"the {part} comparison needs {option} (or leave it out with --only)")

    def splits(y):
        for seed in range(args.repeats):
            idx = np.arange(len(y))
            train, test = train_test_split(idx, test_size=0.25, random_state=seed, stratify=y)
            yield seed, sorted(train.tolist()), sorted(test.tolist())

    def job(X, y, train, test, depth, **extra):
        return {"X": X.to_numpy().tolist(), "y": y.tolist(), "train": train, "test": test,
                "depth": depth, "time_limit": limit, **extra}

    results = []  # (comparison, data, tool, seed, outcome)

    # S-ORCT against CART, continuous features, depth 2.
    for name in ["iris", "wine", "breast_cancer_wisconsin", "thyroid"] if "sorct" in only else []:
        X, y = load(name)
        for seed, train, test in splits(y):
            sorct = lambda: glassbox.SORCTClassifier(depth=2, n_starts=args.starts, time_limit=limit)  # noqa: E731
            results.append(("S-ORCT vs CART (D=2)", name, "glassbox S-ORCT", seed, glassbox_fit(sorct, X, y, train, test)))
            results.append(("S-ORCT vs CART (D=2)", name, "sklearn CART", seed,
                            run_worker(args.peers_python, "cart", job(X, y, train, test, 2))))
            print(results[-2][2:], results[-1][2:], flush=True)

    # Optimal axis-aligned trees on binary features, depth 2.
    for name in ["monks1", "monks3", "tic_tac_toe", "car"] if "trees" in only else []:
        X, y = load(name, binary=True)
        for seed, train, test in splits(y):
            oct_ = lambda: glassbox.OCTClassifier(depth=2, solver="highs", time_limit=limit)  # noqa: E731
            oct_dp = lambda: glassbox.OCTClassifier(depth=2, solver="dp", time_limit=limit)  # noqa: E731
            flow = lambda: glassbox.FlowOCTClassifier(depth=2, solver="highs", time_limit=limit)  # noqa: E731
            results.append(("OCT vs FlowOCT, DL8.5 (D=2)", name, "glassbox OCT (HiGHS)", seed, glassbox_fit(oct_, X, y, train, test)))
            results.append(("OCT vs FlowOCT, DL8.5 (D=2)", name, "glassbox OCT (dp)", seed, glassbox_fit(oct_dp, X, y, train, test)))
            results.append(("OCT vs FlowOCT, DL8.5 (D=2)", name, "glassbox FlowOCT (HiGHS)", seed, glassbox_fit(flow, X, y, train, test)))
            results.append(("OCT vs FlowOCT, DL8.5 (D=2)", name, "ODTlearn FlowOCT (CBC)", seed,
                            run_worker(args.peers_python, "odtlearn_flowoct", job(X, y, train, test, 2))))
            results.append(("OCT vs FlowOCT, DL8.5 (D=2)", name, "pydl8.5", seed,
                            run_worker(args.dl85_python, "pydl85", job(X, y, train, test, 2))))
            print(*[r[2:] for r in results[-5:]], flush=True)

    # Risk scores: 3 rules, scores in -5..5, binary problems.
    for name in ["breast_cancer_wisconsin", "haberman", "pima", "heart_cleveland"] if "risk" in only else []:
        X, y = load(name, numeric=True)
        if y.nunique() != 2:
            continue
        negative, positive = sorted(y.unique())
        for seed, train, test in splits(y):
            ors = lambda: glassbox.ORSClassifier(rules=3, binarize="stump", time_limit=limit)  # noqa: E731
            ogrs = lambda: glassbox.OGRSClassifier(rules=3, time_limit=limit)  # noqa: E731
            results.append(("risk scores (3 rules)", name, "glassbox ORS (stumps, HiGHS)", seed, glassbox_fit(ors, X, y, train, test)))
            results.append(("risk scores (3 rules)", name, "glassbox OGRS (HiGHS)", seed, glassbox_fit(ogrs, X, y, train, test)))
            risk_job = job(X, y, train, test, 0, rules=3, positive=positive, negative=negative)
            results.append(("risk scores (3 rules)", name, "FasterRisk (raw features)", seed,
                            run_worker(args.fasterrisk_python, "fasterrisk", risk_job)))
            results.append(("risk scores (3 rules)", name, "FasterRisk (its binarization)", seed,
                            run_worker(args.fasterrisk_python, "fasterrisk_binarized", risk_job)))
            print(*[r[2:] for r in results[-4:]], flush=True)

    print()
    print("| comparison | data | tool | test accuracy (mean over splits) | fit seconds (median) | notes |")
    print("|---|---|---|---|---|---|")
    keys = []
    for r in results:
        if r[:3] not in keys:
            keys.append(r[:3])
    for key in keys:
        outs = [r[4] for r in results if r[:3] == key]
        ok = [o for o in outs if "error" not in o]
        errors = [o["error"] for o in outs if "error" in o]
        acc = f"{statistics.mean(o['accuracy'] for o in ok):.4f}" if ok else "-"
        secs = f"{statistics.median(o['seconds'] for o in ok):.3f}" if ok else "-"
        counts = collections.Counter(o["status"] for o in ok if o.get("status"))
        statuses = [f"{status} x{n}" for status, n in sorted(counts.items())]
        notes = ", ".join(statuses + ([f"{len(errors)} failed: {errors[0]}"] if errors else []))
        print(f"| {key[0]} | {key[1]} | {key[2]} | {acc} | {secs} | {notes} |")
    print(f"\n({args.repeats} splits; time limit {limit} s per fit; load average at the end "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--worker":
        worker(sys.argv[2])
    else:
        main()
