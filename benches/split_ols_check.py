#!/usr/bin/env python3
"""Are glassbox's regression splits (data::random_split, seed r for split r) distributed like
numpy's? OLS test R^2 over many splits of each, plus uniformity and independence checks of
glassbox's test sets. No optimization is involved, so a difference in the mean would point at
the splitter, not at a method.

    .venv/bin/python benches/split_ols_check.py ../shared/datasets/wine_quality_red.csv \
        glassbox_splits.json [--test-fraction 0.25]

glassbox_splits.json: a JSON list of {"train": [...], "test": [...]} for seeds 1..K, written
with the throw-away example of benches/README.md ("S-ORRT on red wine") with `(1..=K)`.

With `--results R.jsonl [R2.jsonl ...]` (glassbox `run` outputs on the same data, splits seeded
1..K), it also pairs each split's selected start (best training objective) with OLS on the
same split: the mean test R^2 of both, the mean gain, and the means of blocks of ten
consecutive split seeds, i.e. the spread of a ten-split protocol's result.
"""
import argparse
import json

import numpy as np


def ols_r2(X, Y, tr, te):
    design = np.hstack([X[tr], np.ones((len(tr), 1))])
    coef = np.linalg.lstsq(design, Y[tr], rcond=None)[0]
    pred = np.hstack([X[te], np.ones((len(te), 1))]) @ coef
    return 1.0 - ((Y[te] - pred) ** 2).mean() / Y[te].var()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("csv")
    ap.add_argument("splits")
    ap.add_argument("--test-fraction", type=float, default=0.25)
    ap.add_argument("--results", nargs="+", default=[])
    args = ap.parse_args()
    data = np.genfromtxt(args.csv, delimiter=",", skip_header=1)
    X, Y = data[:, :-1], data[:, -1]
    n = len(Y)
    ours = [(np.array(s["train"]), np.array(s["test"])) for s in json.load(open(args.splits))]
    k = len(ours)
    n_test = int(round(args.test_fraction * n))
    theirs = []
    for seed in range(1, k + 1):
        perm = np.random.default_rng(seed).permutation(n)
        theirs.append((perm[n_test:], perm[:n_test]))
    for name, splits in [("glassbox", ours), ("numpy", theirs)]:
        r2 = np.array([ols_r2(X, Y, tr, te) for tr, te in splits])
        blocks = r2[: k - k % 10].reshape(-1, 10).mean(axis=1)
        print(f"{name}: OLS test R2 over {k} splits mean {r2.mean():.4f} sd {r2.std():.4f} "
              f"(se {r2.std() / np.sqrt(k):.4f}); splits 1-10 {r2[:10].mean():.4f}; means of "
              f"consecutive blocks of 10: min {blocks.min():.4f} max {blocks.max():.4f}")
    tests = [set(te.tolist()) for _, te in ours]
    overlap = np.mean([len(tests[i] & tests[i + 1]) for i in range(k - 1)])
    print(f"glassbox: test sets of consecutive seeds share {overlap:.1f} rows "
          f"(independent: {n_test * n_test / n:.1f})")
    freq = np.zeros(n)
    for _, te in ours:
        freq[te] += 1
    q = n_test / n
    print(f"glassbox: times each row is in the test set: mean {freq.mean():.2f} sd "
          f"{freq.std():.2f} (binomial: {k * q:.2f}, {np.sqrt(k * q * (1 - q)):.2f}); "
          f"correlation with the row index {np.corrcoef(np.arange(n), freq)[0, 1]:.3f}")
    print(f"rows {n}, distinct rows {len(np.unique(data, axis=0))}")
    if args.results:
        paired_with_ols(args.results, X, Y, ours)


def paired_with_ols(paths, X, Y, splits):
    """Each split's selected start beside OLS on the same rows, by split seed."""
    selected = {}
    for path in paths:
        for line in open(path):
            r = json.loads(line)
            if r.get("selected"):
                selected[r["split_seed"]] = r["test_r2"]
    seeds = sorted(s for s in selected if 1 <= s <= len(splits))
    if seeds != list(range(1, len(seeds) + 1)):
        raise SystemExit("--results: the split seeds are not 1..K without gaps")
    model = np.array([selected[s] for s in seeds])
    ols = np.array([ols_r2(X, Y, *splits[s - 1]) for s in seeds])
    k = len(seeds) - len(seeds) % 10
    blocks = model[:k].reshape(-1, 10).mean(axis=1)
    ols_blocks = ols[:k].reshape(-1, 10).mean(axis=1)
    print(f"results: {len(seeds)} splits (seeds 1-{len(seeds)}): test R2 mean {model.mean():.4f} "
          f"sd {model.std():.4f} (se {model.std() / np.sqrt(len(seeds)):.4f}); OLS on the same "
          f"splits {ols.mean():.4f}; gain over OLS {np.mean(model - ols):+.4f} "
          f"(better than OLS on {int(np.sum(model > ols))} splits)")
    print("blocks of 10 seeds (results / OLS): " + ", ".join(
        f"{10 * i + 1}-{10 * i + 10}: {b:.4f}/{o:.4f}" for i, (b, o) in enumerate(zip(blocks, ols_blocks))))
    print(f"block means: min {blocks.min():.4f}, median {np.median(blocks):.4f}, max "
          f"{blocks.max():.4f}; at least 0.33 in {int(np.sum(blocks >= 0.33))} of {len(blocks)}")


if __name__ == "__main__":
    main()
