#!/usr/bin/env python3
"""The default's choice (`whole3m`'s settings) against CART and against the previous
default (`bestpoint5`) on every cell of the never-worse-than-CART table that `whole3m` has
finished on ten splits.

The previous default's column is read from its 75-cell table in benches/README ("The
cross-validated choice": means over the same ten seeded splits), whose results files are
not all on this machine any more; CART's and `whole3m`'s columns are computed from the
results files under OUT (`cart_table.py run ... --variants cart,whole3m`). The last
column is each split's seconds over its multistart's alone (every line but the choice's),
the median over the ten splits: the cost read within one run, whatever the machine's load.

usage: against_previous.py --out OUT [--readme benches/README.md]
"""
import argparse, json, os, statistics

HERE = os.path.dirname(os.path.abspath(__file__))
SPLITS = 10


def previous_table(readme):
    """(data set, depth) -> the previous default's mean test accuracy (%), from the
    per-depth tables of benches/README's "The cross-validated choice" section."""
    lines = open(readme).read().splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith("### The cross-validated choice ("))
    end = next(i for i, l in enumerate(lines) if i > start and l.startswith("### "))
    table = {}
    for line in lines[start:end]:
        cells = [c.strip() for c in line.split("|")]
        # | data set | D | CART | S-ORCT default | ... | splits |: 10 columns
        if len(cells) == 12 and cells[2].isdigit():
            table[(cells[1], int(cells[2]))] = float(cells[4])
    return table


def split_lines(out, variant, cell):
    path = os.path.join(out, variant, cell, "run", "results.jsonl")
    by_split = {}
    if os.path.exists(path):
        for line in open(path):
            r = json.loads(line)
            by_split.setdefault(r["split"], []).append(r)
    return by_split


def selected_accuracy(lines):
    return 100 * next(r["test_accuracy"] for r in lines if r.get("selected"))


def cost(lines):
    """The split's seconds and their ratio to its multistart's alone."""
    choice = sum(r["solve_seconds"] for r in lines if (r.get("origin") or "").startswith("selection"))
    alone = sum(r["solve_seconds"] for r in lines) - choice
    return alone + choice, (alone + choice) / alone


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--readme", default=os.path.join(HERE, "../../benches/README.md"))
    args = ap.parse_args()
    previous = previous_table(args.readme)
    print("| data set | D | CART | previous default (bestpoint5) | default (whole3m) "
          "| bestpoint5 - CART (pp) | whole3m - CART (pp) +- SE | s/split whole3m "
          "| whole3m time / multistart alone |")
    print("|---|---|---|---|---|---|---|---|---|")
    ran, waiting = [], []
    for (dataset, depth), old in sorted(previous.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        cell = "%s_d%d" % (dataset, depth)
        cart, whole = split_lines(args.out, "cart", cell), split_lines(args.out, "whole3m", cell)
        if len(cart) < SPLITS or len(whole) < SPLITS:
            waiting.append("%s D=%d" % (dataset, depth))
            continue
        c = [selected_accuracy(cart[s]) for s in range(SPLITS)]
        w = [selected_accuracy(whole[s]) for s in range(SPLITS)]
        diffs = [b - a for a, b in zip(c, w)]
        costs = [cost(whole[s]) for s in range(SPLITS)]
        row = (dataset, depth, statistics.mean(c), old, statistics.mean(w),
               statistics.mean(diffs), statistics.stdev(diffs) / SPLITS ** 0.5,
               statistics.median(s for s, _ in costs), statistics.median(r for _, r in costs))
        ran.append(row)
        _, _, cm, old, wm, d, se, secs, ratio = row
        print("| %s | %d | %.1f | %.1f | %.1f | %+.1f%s | %+.1f +- %.1f%s | %.1f | %.2f |" % (
            dataset, depth, cm, old, wm, old - cm, " **below**" if old - cm < -0.5 else "",
            d, se, " **below**" if d < -0.5 else "", secs, ratio))
    print()
    below = lambda rows, k: ["%s D=%d" % (r[0], r[1]) for r in rows if k(r) < -0.5]
    print("cells: %d of %d (not yet run: %s)" % (len(ran), len(previous), ", ".join(waiting) or "none"))
    print("below CART - 0.5 on these cells: bestpoint5 %d (%s); whole3m %d (%s)" % (
        len(below(ran, lambda r: r[3] - r[2])), ", ".join(below(ran, lambda r: r[3] - r[2])),
        len(below(ran, lambda r: r[5])), ", ".join(below(ran, lambda r: r[5]))))
    if ran:
        print("mean - CART (pp): bestpoint5 %+.2f, whole3m %+.2f; whole3m - bestpoint5 summed %+.1f" % (
            statistics.mean(r[3] - r[2] for r in ran), statistics.mean(r[5] for r in ran),
            sum(r[4] - r[3] for r in ran)))
        ratios = [r[8] for r in ran]
        print("whole3m time / multistart alone: median %.2f (%.2f-%.2f), above 3 on %d cells" % (
            statistics.median(ratios), min(ratios), max(ratios), sum(x > 3 for x in ratios)))


if __name__ == "__main__":
    main()
