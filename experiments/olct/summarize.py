#!/usr/bin/env python3
"""The OLCT table from experiments/olct/run.sh's output: per data set, the mean test
balanced accuracy of OLCT and of CART over the splits both finished, OLCT's MILP status,
gap and seconds.

    python3 experiments/olct/summarize.py OUT
"""
import json
import pathlib
import statistics
import sys

out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "out/olct")
if not out.is_dir():
    sys.exit("summarize.py: no folder %s (run.sh's output)" % out)
runs = {}
for path in sorted(out.glob("*-split*/results.jsonl")):
    dataset, method, split = path.parent.name.rsplit("-", 2)
    for line in path.read_text().splitlines():
        record = json.loads(line)
        if record.get("selected", True):
            runs[(dataset, method, split)] = record

datasets = sorted({d for d, _, _ in runs})
print("| data set | splits | OLCT bal. acc. | CART bal. acc. | OLCT status (gap, s) |")
print("|---|---|---|---|---|")
olct_all, cart_all = [], []
olct_means, cart_means = [], []
for d in datasets:
    splits = sorted(s for (dd, m, s) in runs if dd == d and m == "olct" and (d, "cart", s) in runs)
    if not splits:
        continue
    o = [runs[(d, "olct", s)]["test_balanced_accuracy"] for s in splits]
    c = [runs[(d, "cart", s)]["test_balanced_accuracy"] for s in splits]
    olct_all += o
    cart_all += c
    olct_means.append(statistics.mean(o))
    cart_means.append(statistics.mean(c))
    status = "; ".join(
        "{} ({}, {:.0f})".format(
            runs[(d, "olct", s)]["status"],
            "-" if runs[(d, "olct", s)].get("mip_gap") is None else "{:.2f}".format(runs[(d, "olct", s)]["mip_gap"]),
            runs[(d, "olct", s)]["solve_seconds"],
        )
        for s in splits
    )
    print(f"| {d} | {len(splits)} | {statistics.mean(o):.4f} | {statistics.mean(c):.4f} | {status} |")
if olct_all:
    print(f"| **mean over {len(olct_all)} instances** | | **{statistics.mean(olct_all):.4f}** | **{statistics.mean(cart_all):.4f}** | |")
    print(f"| **mean over {len(olct_means)} data sets** | | **{statistics.mean(olct_means):.4f}** | **{statistics.mean(cart_means):.4f}** | |")
    wins = sum(o >= c for o, c in zip(olct_all, cart_all))
    print(f"\nOLCT >= CART on {wins} of {len(olct_all)} instances.")
