#!/usr/bin/env python3
"""The default's choice (`whole3m`'s settings) against CART and against the previous
default (`bestpoint5`) on every cell of the never-worse-than-CART table that `whole3m` has
finished on ten splits.

The previous default's column is read from its 75-cell table in benches/README ("The
cross-validated choice": means over the same ten seeded splits), whose results files are
not all on this machine any more; CART's and `whole3m`'s columns are computed from the
results files under OUT (`cart_table.py run ... --variants cart,whole3m`, read by its
`load`; `--variant`, by default `whole3m/default`: `whole3m`'s folder, else `default`'s,
whose settings are the same since 2026-11-29, so the committed archive
experiments/quality/results/cart_table, which names them `default`, gives the table too). The last column is each split's seconds over its multistart's alone (every line
but the choice's), the median over the splits: the cost read within one run, whatever the
machine's load.

usage: against_previous.py --out OUT [--readme benches/README.md] [--splits 10]
                           [--variant whole3m/default]
"""
import argparse, collections, os, statistics, sys

from cart_table import load, paired_se

HERE = os.path.dirname(os.path.abspath(__file__))


class Row(collections.namedtuple("Row", "name cart old whole se secs ratio")):
    """One cell: mean test accuracies (%) of CART, the previous default and whole3m, the
    paired standard error of whole3m - CART, whole3m's median seconds per split and its
    median time over the multistart's alone."""

    @property
    def gain(self):
        return self.whole - self.cart

    @property
    def old_gain(self):
        return self.old - self.cart


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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--readme", default=os.path.join(HERE, "../../benches/README.md"))
    ap.add_argument("--splits", type=int, default=10)
    # the default's results: the first of these folders under OUT that ran the cell
    ap.add_argument("--variant", default="whole3m/default")
    args = ap.parse_args()
    if not os.path.isdir(os.path.join(args.out, "cart")):
        sys.exit("against_previous.py: no CART results (%s/cart) under --out %s: give a "
                 "cart_table.py results folder" % (args.out.rstrip("/"), args.out))
    if not any(os.path.isdir(os.path.join(args.out, v)) for v in args.variant.split("/")):
        sys.exit("against_previous.py: no results of %s under --out %s"
                 % (" or ".join(args.variant.split("/")), args.out))
    n = args.splits
    previous = previous_table(args.readme)
    print("| data set | D | CART | previous default (bestpoint5) | default (whole3m) "
          "| bestpoint5 - CART (pp) | whole3m - CART (pp) +- SE | s/split whole3m "
          "| whole3m time / multistart alone |")
    print("|---|---|---|---|---|---|---|---|---|")
    ran, waiting = [], []
    for (dataset, depth), old in sorted(previous.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        cart, whole = (load(args.out, v, dataset, depth) for v in ("cart", args.variant))
        name = "%s D=%d" % (dataset, depth)
        if cart is None or whole is None or min(len(cart["acc"]), len(whole["acc"])) < n:
            waiting.append(name)
            continue
        c, w = cart["acc"][:n], whole["acc"][:n]
        row = Row(name, 100 * statistics.mean(c), old, 100 * statistics.mean(w),
                  paired_se(w, c), statistics.median(whole["secs"][:n]),
                  statistics.median(whole["alone"][:n]))
        ran.append(row)
        print("| %s | %d | %.1f | %.1f | %.1f | %+.1f%s | %+.1f +- %.1f%s | %.1f | %.2f |" % (
            dataset, depth, row.cart, old, row.whole, row.old_gain, below_mark(row.old_gain),
            row.gain, row.se, below_mark(row.gain), row.secs, row.ratio))
    print()
    print("cells: %d of %d (not yet run: %s)" % (
        len(ran), len(previous), ", ".join(waiting) or "none"))
    old_below = [r.name for r in ran if r.old_gain < -0.5]
    new_below = [r.name for r in ran if r.gain < -0.5]
    print("below CART - 0.5 on these cells: bestpoint5 %d (%s); whole3m %d (%s)" % (
        len(old_below), ", ".join(old_below), len(new_below), ", ".join(new_below)))
    if ran:
        print("mean - CART (pp): bestpoint5 %+.2f, whole3m %+.2f; "
              "whole3m - bestpoint5 summed %+.1f" % (
                  statistics.mean(r.old_gain for r in ran), statistics.mean(r.gain for r in ran),
                  sum(r.whole - r.old for r in ran)))
        ratios = [r.ratio for r in ran]
        print("whole3m time / multistart alone: median %.2f (%.2f-%.2f), above 3 on %d cells" % (
            statistics.median(ratios), min(ratios), max(ratios), sum(x > 3 for x in ratios)))


def below_mark(gain):
    return " **below**" if gain < -0.5 else ""

if __name__ == "__main__":
    main()
