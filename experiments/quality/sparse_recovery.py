#!/usr/bin/env python3
"""Sparse structure recovered: S-ORCT (l-infinity, lambda_G) and the l0 paper's L0glob
(l0tree, lambda_G) along a lambda_G path on data drawn from a sparse oblique tree
(`glassbox generate --kind sparse-tree`: p = 20 features of which 3 are relevant, depth 2,
3 classes, 5% label noise, 1000 rows; Bayes accuracy 0.95).

For each generator seed: one stratified 75/25 split, `--starts` random starts plus the CART
start at every lambda_G = 2^r (r in --grid; S-ORCT's lambda_G = 2^r / p, l0tree's
lambda_0^G = 2^r on its summed loss), S-ORCT's path warm-started (its paper's protocol),
L0glob's not (see METHODS), glassbox's defaults otherwise. At every
lambda the split's selected tree (best objective) is read from its saved model: the
features it uses (max_t |a_jt| > 1e-6), its test accuracy.

A seed counts as recovered for a method when some lambda on its path gives a tree that uses
exactly the relevant features (delta_G = 85%) with test accuracy at least the Bayes accuracy
minus 2 points.

`oracle` (a reference, not a method): S-ORCT with lambda = 0 on the relevant features alone
(the other columns dropped; the same rows, so the same split), the same starts. It tells what
a depth-2 tree on exactly the right support reaches on the seed's test rows: where it is
below the threshold, no method that recovers the support can pass it there.

usage:
  sparse_recovery.py run GLASSBOX --out DIR [--seeds 1-10] [--starts 10] [--grid -6,...,4]
                     [--methods sorct,sorct_refit,l0glob,oracle]
  sparse_recovery.py report --out DIR [--plot experiments/figures/sparse_recovery_path.png]
                     [--plot-seed 1] [--plot-methods sorct,sorct_refit,l0glob]
  sparse_recovery.py archive --out DIR --to experiments/quality/results/sparse_recovery

`archive` keeps what `report` reads, compressed: per seed relevant.json, and per method its
results lines (results.jsonl.gz) and its saved models (models.json.gz, by cell); `report
--out` on the archive gives the same table as on the run's folder.
"""
import argparse, json, os, re, shutil, statistics, subprocess, sys

from results_archive import json_lines, read_text, write_gz

# selection_folds = 0: each lambda's tree is the best objective, as in the papers; the
# cross-validated choice would return CART's tree wherever the sparse tree is not clearly
# more accurate, and the path would no longer show what the formulation finds.
# Per method: the [formulation] body, `warm_path`, and the title of its column and panel.
# S-ORCT's paper warm-starts its lambda path; the l0 paper solves every lambda from its own
# starts, and L0glob needs it: a point carried from the previous lambda is solved at the
# raised gamma only, where the steep l0 approximation cannot make a used feature unused (a
# random start is sparsified at the configured gamma first, formulations/continuation.rs),
# so one dense tree carried along the path stayed dense. S-ORCT with `refit_support` (the
# relaxed fit) is solved fresh at every lambda too: a carried refit point would start the
# next penalized solve from unshrunk coefficients; `sorct_fresh` is S-ORCT solved so too,
# without the refit (what the refit adds, in accuracy and in time: `report` prints both).
METHODS = {
    "sorct": ('name = "sorct"\ndepth = 2\nselection_folds = 0\nlambda_global_log2 = %s\n',
              "true", "S-ORCT, l-infinity"),
    "sorct_fresh": ('name = "sorct"\ndepth = 2\nselection_folds = 0\nlambda_global_log2 = %s\n',
                    "false", "S-ORCT, l-infinity, fresh starts"),
    "sorct_refit": ('name = "sorct"\ndepth = 2\nselection_folds = 0\nrefit_support = true\n'
                    'lambda_global_log2 = %s\n', "false", "S-ORCT, refit on its support"),
    "l0glob": ('name = "l0tree"\ndepth = 2\nselection_folds = 0\nlambda_global_log2 = %s\n',
               "false", "L0glob"),
}
# The reference on the relevant features alone (see the module comment).
ORACLE = ('name = "sorct"\ndepth = 2\nselection_folds = 0\n', "S-ORCT on the relevant features alone")
BAYES = 0.95
FEATURES = 20


def seeds(text):
    if "-" in text:
        a, b = text.split("-")
        return list(range(int(a), int(b) + 1))
    return [int(s) for s in text.split(",")]


def config(data, method, grid, starts):
    if method == "oracle":
        formulation, warm = ORACLE[0], "false"
    else:
        formulation, warm = METHODS[method][0] % grid, METHODS[method][1]
    return ('[data]\npath = "%s"\n\n[split]\ntest_fraction = 0.25\nrepeats = 1\nseed = 1\n\n'
            '[formulation]\n%s\n[solver]\nname = "ipopt"\ntime_limit = 300.0\n\n'
            '[multistart]\nstarts = %d\nseed = 1\n\n[experiment]\nwarm_path = %s\n'
            'save_models = true\n' % (data, formulation, starts, warm))


def relevant_only(data, names, path):
    """`data`'s relevant columns and its target, the rows in their order (the same split)."""
    import csv
    with open(data) as f:
        rows = list(csv.DictReader(f))
    with open(path + ".part", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(names + ["target"])
        for r in rows:
            w.writerow([r[c] for c in names] + [r["target"]])
    os.replace(path + ".part", path)


def run(args):
    grid = "[%s]" % ", ".join(repr(float(r)) for r in args.grid.split(","))
    for seed in seeds(args.seeds):
        d = os.path.join(args.out, "seed%d" % seed)
        os.makedirs(d, exist_ok=True)
        data = os.path.abspath(os.path.join(d, "data.csv"))
        if not os.path.exists(os.path.join(d, "relevant.json")):
            said = subprocess.run(
                [args.glassbox, "generate", "--kind", "sparse-tree", "--rows", "1000",
                 "--seed", str(seed), "--out", data, "--force"],
                check=True, capture_output=True, text=True).stdout
            relevant = re.search(r"relevant features ([x0-9, ]+?), Bayes", said).group(1)
            names = [n.strip() for n in relevant.split(",")]
            json.dump(names, open(os.path.join(d, "relevant.json"), "w"))
        for method in args.methods.split(","):
            if method != "oracle" and method not in METHODS:
                sys.exit("unknown method %r (one of %s, oracle)" % (method, ", ".join(METHODS)))
            source = data
            if method == "oracle":
                source = os.path.join(d, "relevant.csv")
                names = json.load(open(os.path.join(d, "relevant.json")))
                relevant_only(data, names, source)
            path = os.path.join(d, method + ".toml")
            with open(path, "w") as f:
                f.write(config(source, method, grid, args.starts))
            print("seed %d %s" % (seed, method), flush=True)
            subprocess.run([args.glassbox, "run", path, "--out", os.path.join(d, method)],
                           check=True, stdout=subprocess.DEVNULL)


def matrix(value):
    """nalgebra's serialization: [column-major data, rows, cols]."""
    data, rows, cols = value
    return [[data[c * rows + r] for c in range(cols)] for r in range(rows)]


def records(d, method):
    """The results lines of the method's run on the seed (folder `d`), or None where it has
    not run."""
    text = read_text(os.path.join(d, method, "results.jsonl"))
    if text is None:
        return None
    return json_lines(text)


def model_of(d, method, cell):
    """The model the method's run saved for `cell`: from the run's folder or the archive."""
    path = os.path.join(d, method, "models", "cell-%d" % cell, "split-0.json")
    if os.path.exists(path):
        return json.load(open(path))["model"]
    return json.loads(read_text(os.path.join(d, method, "models.json")))[str(cell)]["model"]


def archive(args):
    names = [n for n in os.listdir(args.out) if n.startswith("seed") and n[4:].isdigit()]
    for name in sorted(names, key=lambda n: int(n[4:])):
        d = os.path.join(args.out, name)
        if not os.path.exists(os.path.join(d, "relevant.json")):
            continue
        to = os.path.join(args.to, name)
        os.makedirs(to, exist_ok=True)
        shutil.copy(os.path.join(d, "relevant.json"), os.path.join(to, "relevant.json"))
        for method in list(METHODS) + ["oracle"]:
            text = read_text(os.path.join(d, method, "results.jsonl"))
            if text is None:
                continue
            os.makedirs(os.path.join(to, method), exist_ok=True)
            write_gz(os.path.join(to, method, "results.jsonl.gz"), text)
            if method == "oracle":
                continue  # `report` reads the oracle's accuracy only, not its tree
            recs = json_lines(text)
            cells = sorted({r["cell"] for r in recs if r.get("selected")})
            models = {str(c): {"model": model_of(d, method, c)} for c in cells}
            write_gz(os.path.join(to, method, "models.json.gz"),
                     json.dumps(models, sort_keys=True))
        print("archived %s" % to)


def path_of(d, method, relevant):
    """Per lambda cell: (r, used feature names, test accuracy, delta_G)."""
    recs = records(d, method)
    if recs is None:
        return None
    out = []
    for rec in recs:
        if not rec.get("selected"):
            continue
        cell = rec["cell"]
        r = rec["grid"]["lambda_global_log2"]
        model = model_of(d, method, cell)
        tree = model.get("tree", model)
        a = matrix(tree["a"])
        names = tree["feature_names"]
        used = sorted(names[j] for j in range(len(a)) if max(abs(v) for v in a[j]) > 1e-6)
        out.append((float(r), used, rec["test_accuracy"], rec["delta_global"]))
    return sorted(out)


def cost_of(d, method):
    """(seconds, IPOPT iterations) of every solve of the method's run on the seed, or None."""
    recs = records(d, method)
    if recs is None:
        return None
    return (sum(r.get("solve_seconds") or 0.0 for r in recs),
            sum(r.get("iterations") or 0 for r in recs))


def oracle_of(d):
    """The oracle's test accuracy on the seed's split, or None where it has not run."""
    selected = [r["test_accuracy"] for r in records(d, "oracle") or [] if r.get("selected")]
    return selected[0] if selected else None


def report(args):
    rows = []
    recovered = {m: 0 for m in METHODS}
    exact_any = {m: 0 for m in METHODS}
    ran = {m: 0 for m in METHODS}
    costs = {m: [] for m in METHODS}
    oracles = []
    names = [n for n in os.listdir(args.out) if n.startswith("seed") and n[4:].isdigit()]
    for name in sorted(names, key=lambda n: int(n[4:])):
        d = os.path.join(args.out, name)
        if not os.path.exists(os.path.join(d, "relevant.json")):
            continue
        relevant = sorted(json.load(open(os.path.join(d, "relevant.json"))))
        paths = {m: path_of(d, m, relevant) for m in METHODS}
        if all(p is None for p in paths.values()):
            continue
        oracle = oracle_of(d)
        oracles.append(oracle)
        row = [name[4:], ", ".join(relevant),
               "not run" if oracle is None else "%.1f%%" % (100 * oracle)]
        for m in METHODS:
            if paths[m] is None:
                row.append("not run")
                continue
            ran[m] += 1
            costs[m].append(cost_of(d, m))
            exact = [(r, acc) for (r, used, acc, _) in paths[m] if used == relevant]
            good = [(r, acc) for (r, acc) in exact if acc >= BAYES - 0.02]
            exact_any[m] += bool(exact)
            recovered[m] += bool(good)
            best = max(exact, key=lambda t: t[1]) if exact else None
            row.append("yes (r = %g, %.1f%%)" % (best[0], 100 * best[1]) if good else
                       ("support at r = %g, %.1f%%" % (best[0], 100 * best[1]) if best else "no"))
        rows.append(row)
    print("| seed | relevant | %s | " % ORACLE[1] + " | ".join(METHODS[m][2] for m in METHODS)
          + " |")
    print("|---|---|---|" + "---|" * len(METHODS))
    for row in rows:
        print("| " + " | ".join(row) + " |")
    for m in METHODS:
        print("\n%s: exact support with test accuracy >= %.2f on %d of %d seeds "
              "(exact support at some lambda on %d)" % (m, BAYES - 0.02, recovered[m], ran[m],
                                                        exact_any[m]))
    print("\nper seed, the seconds and IPOPT iterations of every solve over the grid "
          "(median over the seeds run):")
    for m in METHODS:
        if costs[m]:
            print("  %-12s %8.1f s %9d iterations" % (
                m, statistics.median(c[0] for c in costs[m]),
                statistics.median(c[1] for c in costs[m])))
    reached = [o for o in oracles if o is not None]
    if reached:
        print("\noracle: at or above %.2f on %d of %d seeds" % (
            BAYES - 0.02, sum(o >= BAYES - 0.02 for o in reached), len(reached)))
    if args.plot:
        plot(args, args.plot_seed)


def plot(args, seed):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    d = os.path.join(args.out, "seed%d" % seed)
    relevant = sorted(json.load(open(os.path.join(d, "relevant.json"))))
    shown = [m for m in args.plot_methods.split(",") if path_of(d, m, relevant)]
    oracle = oracle_of(d)
    fig, axes = plt.subplots(1, len(shown), figsize=(5 * len(shown), 3.8), squeeze=False)
    for ax, m in zip(axes[0], shown):
        title = METHODS[m][2] + (" (lambda_0^G = 2^r)" if m == "l0glob" else
                                 " (lambda_G = 2^r / p)")
        p = path_of(d, m, relevant)
        r = [t[0] for t in p]
        ax.plot(r, [100 * t[2] for t in p], "o-", label="test accuracy (%)")
        ax.axhline(100 * BAYES, color="grey", ls=":", label="Bayes accuracy")
        if oracle is not None:
            ax.axhline(100 * oracle, color="C3", ls="--", lw=0.8,
                       label="S-ORCT on the relevant features alone")
        ax.set_xlabel("r")
        ax.set_ylabel("test accuracy (%)")
        # One scale for every panel, so the methods compare at a glance.
        ax.set_ylim(40, 100)
        ax.set_title(title, fontsize=10)
        ax2 = ax.twinx()
        ax2.step(r, [len(t[1]) for t in p], where="mid", color="C1", label="features used")
        exact = [t[0] for t in p if t[1] == relevant]
        ax2.plot(exact, [3] * len(exact), "s", color="C2", label="exactly the 3 relevant")
        ax2.set_ylabel("features used (of %d)" % FEATURES)
        ax2.set_ylim(0, FEATURES + 1)
        lines = ax.get_legend_handles_labels()
        lines2 = ax2.get_legend_handles_labels()
        ax.legend(lines[0] + lines2[0], lines[1] + lines2[1], fontsize=7, loc="lower left")
    fig.suptitle("Sparse oblique tree data (seed %d; relevant %s), depth 2, one 75/25 split"
                 % (seed, ", ".join(relevant)), fontsize=10)
    fig.tight_layout()
    fig.savefig(args.plot, dpi=110)
    print("\nplot: %s" % args.plot)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("command", choices=["run", "report", "archive"])
    ap.add_argument("glassbox", nargs="?")
    ap.add_argument("--out", required=True)
    ap.add_argument("--seeds", default="1-10")
    ap.add_argument("--starts", type=int, default=10)
    ap.add_argument("--grid", default="-6,-5,-4,-3,-2,-1,0,1,2,3,4")
    ap.add_argument("--methods", default=",".join(list(METHODS) + ["oracle"]))
    ap.add_argument("--to", help="archive: the folder to write")
    ap.add_argument("--plot")
    ap.add_argument("--plot-seed", type=int, default=1)
    ap.add_argument("--plot-methods", default="sorct,sorct_refit,l0glob")
    args = ap.parse_args()
    unknown = [m for m in args.plot_methods.split(",") if m not in METHODS]
    if unknown:
        sys.exit("unknown --plot-methods %s (of %s)" % (", ".join(unknown), ", ".join(METHODS)))
    try:
        seeds(args.seeds)
        [float(r) for r in args.grid.split(",")]
    except ValueError:
        sys.exit("sparse_recovery.py: --seeds (a-b or a,b,...) or --grid (numbers) unreadable: "
                 "%r, %r" % (args.seeds, args.grid))
    if args.command != "run":
        kept = os.path.isdir(args.out) and any(
            os.path.exists(os.path.join(args.out, n, "relevant.json")) for n in os.listdir(args.out))
        if not kept:
            sys.exit("sparse_recovery.py %s: no seed folders (seedN/relevant.json) under %s"
                     % (args.command, args.out))
    if args.command == "run":
        if not args.glassbox:
            sys.exit("run needs the glassbox binary")
        if not os.path.isfile(args.glassbox):
            sys.exit("sparse_recovery.py run: no glassbox binary at %s" % args.glassbox)
        run(args)
    elif args.command == "archive":
        if not args.to:
            sys.exit("archive needs --to, the folder to write")
        archive(args)
    else:
        report(args)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        # (the engine keeps every finished split; rerunning resumes the rest)
        sys.exit("\n%s: interrupted; rerun the same command to resume" % os.path.basename(__file__))
