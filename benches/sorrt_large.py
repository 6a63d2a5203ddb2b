"""The CART baseline and the summary of benches/sorrt_large.sh.

Reads the S-ORRT results (`results.jsonl` of `glassbox run`), fits CART with
scikit-learn's DecisionTreeRegressor on the same training rows and prints, per N, the
S-ORRT solve times, the test MSEs and the relative improvement 1 - MSE(S-ORRT) / MSE(CART).

CART as the paper runs it: R's rpart with its defaults (Section 4.2: "the default
parameter setting in rpart"), whose depth is not restricted but controlled by the
complexity parameter cp = 0.01 (a split must lower the tree's squared error by 1% of the
root's), minsplit = 20, minbucket = 7 (round(minsplit / 3)), maxdepth = 30. In scikit-learn
terms: min_impurity_decrease = 0.01 * Var(y) (its impurity decrease is weighted by the
node's share of the rows, so this is rpart's cp), min_samples_split = 20,
min_samples_leaf = 7, max_depth = 30. rpart also prunes by 10-fold cross-validation only
when asked (printcp / prune), which the paper's default run does not. A depth-1 CART
(a stump, S-ORRT's depth) is printed too.
"""

import argparse
import json
import time

import numpy as np
from sklearn.tree import DecisionTreeRegressor


def load(path):
    data = np.loadtxt(path, delimiter=",", skiprows=1)
    return data[:, :-1], data[:, -1]


def cart_mse(x, y, x_test, y_test, **params):
    started = time.perf_counter()
    tree = DecisionTreeRegressor(random_state=0, **params).fit(x, y)
    seconds = time.perf_counter() - started
    mse = float(np.mean((tree.predict(x_test) - y_test) ** 2))
    return mse, seconds, tree.get_depth(), tree.get_n_leaves()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, required=True)
    parser.add_argument("--wall", type=float, required=True)
    parser.add_argument("--results", required=True)
    parser.add_argument("--train", required=True)
    parser.add_argument("--test", required=True)
    args = parser.parse_args()

    records = [json.loads(line) for line in open(args.results)]
    for r in records:
        print(
            f"N={args.rows}: start {r['start']}: {r['status']}, objective {r['objective']:.6f}, "
            f"{r['solve_seconds']:.2f} s, {r['iterations']} iterations, test MSE {r['test_mse']:.4f}"
        )
    selected = next(r for r in records if r["selected"])
    solve_seconds = sorted(r["solve_seconds"] for r in records)

    x, y = load(args.train)
    x_test, y_test = load(args.test)
    rpart = cart_mse(
        x, y, x_test, y_test,
        min_impurity_decrease=0.01 * float(np.var(y)),
        min_samples_split=20, min_samples_leaf=7, max_depth=30,
    )
    stump = cart_mse(x, y, x_test, y_test, max_depth=1)
    for name, (mse, seconds, depth, leaves) in [("CART (rpart defaults)", rpart), ("CART depth 1", stump)]:
        print(f"N={args.rows}: {name}: test MSE {mse:.4f} (depth {depth}, {leaves} leaves, fit {seconds:.2f} s)")
    improvement = 1.0 - selected["test_mse"] / rpart[0]
    print(
        f"SUMMARY N={args.rows}: S-ORRT D=1 lbfgs test MSE {selected['test_mse']:.4f} "
        f"(selected start {selected['start']}), CART {rpart[0]:.4f}: improvement {100 * improvement:.1f}%; "
        f"solve s per start: median {solve_seconds[len(solve_seconds) // 2]:.2f} "
        f"(min {solve_seconds[0]:.2f}, max {solve_seconds[-1]:.2f}) over {len(records)} starts; "
        f"glassbox run wall {args.wall:.1f} s"
    )


if __name__ == "__main__":
    main()
