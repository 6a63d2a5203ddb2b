#!/usr/bin/env python3
"""Never worse than CART: S-ORCT (lambda = 0) against CART of the same depth on the same
splits, for every classification data set of ../shared/datasets and depths 1 to 4 (where
2^D is at least the number of classes). Ten seeded stratified 75/25 splits, 20 random
starts (the S-ORCT paper's protocol), IPOPT.

Variants (one results folder each under OUT):
  cart     CART of depth D (Gini, grown to depth D, no pruning).
  paper    S-ORCT as the paper runs it: split_scale = "fixed" (gamma = 512 with the 1/p
           factor), random starts only (cart_start = false), the best objective selected
           (selection_folds = 0). glassbox's default before issue 24.
  default  S-ORCT with glassbox's defaults (split_scale = "data", the CART start, gamma
           continuation of the random starts, the cross-validated choice between the best
           objective's tree and the CART tree: 3 folds, each running 14 of the split's
           random starts again on its rows; whole3m's settings).
  bestpoint5  the defaults with the choice as it was the default until 2026-11-29: 5 folds,
           each solving the multistart's best point and ceil(20 / 5) - 1 random starts
           (selection_folds = 5, selection_starts = "best_point"). The results of
           benches/README's sections before "The whole multistart per fold" are this
           variant's under the name `default`.
  objective  the defaults without that choice (selection_folds = 0): glassbox's default
           before it was added.
  cartfixed  S-ORCT with the CART start at the paper's gamma (split_scale = "fixed"),
           the best objective selected.
  tao      bestpoint5 with the oblique TAO tree as one more start and candidate of the
           choice (tao_start = true).
  replay   bestpoint5 with the choice's folds replaying the multistart's best random
           starts instead of starting from its best point (selection_starts = "replay").
  softened bestpoint5 with the choice's folds solving the best point as a random start
           (climbing the gamma continuation; selection_starts = "softened").
  whole3   the choice on 3 folds, each running the split's whole multistart again from
           its seeds (selection_starts = "whole", selection_folds = 3,
           selection_fold_solves = 0): no leak, about 3.7x the multistart alone.
  whole2   the same on 2 folds (selection_folds = 2).
  whole3h  whole3 with 10 random starts a fold (selection_fold_solves = 10): about 2.5x.
  whole3m  whole3 with 14 random starts a fold (selection_fold_solves = 14): the default's
           settings, written out.
  polished whole3m with the tree optimized from CART's start judged by the choice too
           (selection_polished = true): the same solves, a three-way choice.
  polished5  polished on 5 folds (selection_folds = 5), 14 random starts a fold: the
           same multistart, 5/3 of the folds' solves.
  polished5h polished on 5 folds of 7 random starts each (selection_fold_solves = 7):
           about the folds' solves of polished, on more held-out rows per tree.
  rho      bestpoint5 with the performance constraints of the S-ORCT paper's Tables 3
           and 4 (rho_k = 0.1), for their lambda = 0 rows (`paper_rows`).
  rho3m    whole3m (the default's settings) with those constraints (rho_k = 0.1).
  V+onehot variant V with every level of a categorical column dummy coded (data.dummies =
           "all") instead of every level but the first: e.g. `paper+onehot`,
           `whole3m+onehot`, `cart+onehot`.

usage:
  cart_table.py run GLASSBOX --out DIR [--variants cart,paper,default] [--datasets a,b]
                [--depths 1,2,3,4] [--splits 10] [--starts 20] [--shard i/n]
                [--processes n]
  cart_table.py table --out DIR [--variants ...] [--first N]  # markdown table on stdout
  cart_table.py paper_rows --out DIR [--variants ...] [--first N]  # the S-ORCT paper's lambda = 0 rows
  cart_table.py margins --out DIR --variants cart,default [--margins 0.5,1,2]  # the choice's margin
  cart_table.py summary --out DIR --variants cart,default,whole3  # per variant, over the cells all ran
  cart_table.py cost --out DIR --variants paper,whole3m  # seconds and iterations per split over the first's
  cart_table.py plot --out DIR --variants cart,whole3m --file PNG [--splits 10]  # the table as a figure
  cart_table.py basins --out DIR --variants default/polished  # iterations of random starts that end in a basin already found
  cart_table.py archive --out DIR --to experiments/quality/results/cart_table [--variants ...]
                # the cells' results gzipped, which every reading command takes as --out

Every command reading results takes `VARIANT@Z` (e.g. `default@2`): VARIANT's runs with
the cross-validated choice decided again offline with a margin of Z standard errors instead
of one, from the paired counts the choice's line records (`load_margin`). On `polished`'s
results that is the two-way choice between CART's tree and the best objective's: a
`polished` run gives `whole3m`'s table too, as `polished@1`. And `A/B`: A's results where A
ran the cell, B's otherwise (`whole3m/polished@1`).

`table` and `paper_rows` read any folder under OUT as a variant, so two binaries compare by
running `default` with each into its own OUT and linking one's `default` folder into the
other's under another name (benches/README "The folds start from the multistart's best
point": `before`). Columns: mean test accuracy, the difference to CART with the standard
error of the paired per-split differences, the median seconds and IPOPT iterations per
split (every line of the split, the choice's folds included), over the splits every
variant of the row has finished (the first `--first` of them where given: `run --splits
30` into a fresh OUT solves split seeds 1-30, whose first ten are the protocol's, and
`table --first 10` still gives the ten-split protocol's row; a cell already run with other
`--splits` or `--starts` is refused, its results kept).

Each (variant, data set, depth) is one config on the experiment engine (resumable: an
interrupted cell continues where it stopped when `run` is repeated). `--shard i/n` runs
every n-th cell, for separate processes (IPOPT solves one problem at a time per process).
`--processes n` runs each cell's splits on n processes instead (`glassbox run --shard i/n`
into the cell's `shards/i`, merged into its `run`): for a cell that takes hours, such as
german credit at depth 4. A cell resumes only in the mode it was started in.
"""
import argparse, json, os, re, statistics, subprocess, sys

from results_archive import json_lines, read_text, write_config_gz, write_gz

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.normpath(os.path.join(HERE, "../../../shared/datasets"))
MONKS = '["a1", "a2", "a3", "a4", "a5", "a6"]'
CAR = '["buying", "maint", "doors", "persons", "lug_boots", "safety"]'
# name: (classes, categorical columns, drop_missing)
SETS = {
    "iris": (3, "[]", False), "wine": (3, "[]", False), "sonar": (2, "[]", False),
    "ionosphere": (2, "[]", False), "pima": (2, "[]", False),
    "german_credit": (2, "[]", False), "ecoli": (8, "[]", False),
    "haberman": (2, "[]", False), "breast_cancer_wisconsin": (2, "[]", False),
    "climate": (2, "[]", False), "wholesale": (2, "[]", False),
    "parkinsons": (2, "[]", False), "spectf": (2, "[]", False),
    "heart_cleveland": (2, "[]", True), "tic_tac_toe": (2, "[]", False),
    "spambase": (2, "[]", False), "monks1": (2, MONKS, False), "monks2": (2, MONKS, False),
    "monks3": (2, MONKS, False), "car": (4, CAR, False), "thyroid": (3, "[]", False),
}
# The choice as it was the default until 2026-11-29: 5 folds from the multistart's best point.
# The variants measured against it say so, so that their configs keep their meaning.
BEST_POINT_5 = 'selection_folds = 5\nselection_starts = "best_point"\nselection_fold_solves = 0\n'
# The default's settings written out (`whole3m`), which `polished` extends.
WHOLE3M = ('name = "sorct"\ndepth = %(depth)d\nselection_starts = "whole"\nselection_folds = 3\n'
           'selection_fold_solves = 14\n')
POLISHED = WHOLE3M + 'selection_polished = true\n'
POLISHED_5 = POLISHED.replace("selection_folds = 3", "selection_folds = 5")
VARIANTS = {
    "cart": 'name = "cart"\ndepth = %(depth)d\n',
    "paper": 'name = "sorct"\ndepth = %(depth)d\nsplit_scale = "fixed"\ncart_start = false\n'
             'selection_folds = 0\n',
    "default": 'name = "sorct"\ndepth = %(depth)d\n',
    "bestpoint5": 'name = "sorct"\ndepth = %(depth)d\n' + BEST_POINT_5,
    "cartfixed": 'name = "sorct"\ndepth = %(depth)d\nsplit_scale = "fixed"\nselection_folds = 0\n',
    "objective": 'name = "sorct"\ndepth = %(depth)d\nselection_folds = 0\n',
    "rho": 'name = "sorct"\ndepth = %(depth)d\nrho = [0.1]\n' + BEST_POINT_5,
    "rho3m": WHOLE3M + 'rho = [0.1]\n',
    "tao": 'name = "sorct"\ndepth = %(depth)d\ntao_start = true\n' + BEST_POINT_5,
    "replay": 'name = "sorct"\ndepth = %(depth)d\nselection_starts = "replay"\n'
              'selection_folds = 5\nselection_fold_solves = 0\n',
    "softened": 'name = "sorct"\ndepth = %(depth)d\nselection_starts = "softened"\n'
                'selection_folds = 5\nselection_fold_solves = 0\n',
    "whole3": 'name = "sorct"\ndepth = %(depth)d\nselection_starts = "whole"\nselection_folds = 3\n'
              'selection_fold_solves = 0\n',
    "whole2": 'name = "sorct"\ndepth = %(depth)d\nselection_starts = "whole"\nselection_folds = 2\n'
              'selection_fold_solves = 0\n',
    "whole3h": 'name = "sorct"\ndepth = %(depth)d\nselection_starts = "whole"\nselection_folds = 3\n'
               'selection_fold_solves = 10\n',
    "whole3m": WHOLE3M,
    "polished": POLISHED,
    "polished5": POLISHED_5,
    "polished5h": POLISHED_5.replace("selection_fold_solves = 14", "selection_fold_solves = 7"),
}
SOLVER = '\n[solver]\nname = "ipopt"\ntime_limit = 300.0\n\n[multistart]\nstarts = %(starts)d\nseed = 1\n'


def dataset_depths(args):
    """The (data set, depth) pairs of `--datasets` x `--depths` where 2^D is at least the
    number of classes."""
    return [(d, int(k)) for d in args.datasets.split(",") for k in args.depths.split(",")
            if 2 ** int(k) >= SETS[d][0]]


def cells(args):
    return [(v, d, k) for v in args.variants.split(",") for d, k in dataset_depths(args)]


def config(variant, dataset, depth, splits, starts):
    _, categorical, drop = SETS[dataset]
    base, _, coding = variant.partition("+")
    if coding not in ("", "onehot"):
        raise SystemExit("unknown variant %r: the suffix can only be +onehot" % variant)
    text = ('[data]\npath = "%s"\ncategorical = %s\ndrop_missing = %s\n%s\n[split]\n'
            'test_fraction = 0.25\nrepeats = %d\nseed = 1\n\n[formulation]\n'
            % (os.path.join(DATA, dataset + ".csv"), categorical, str(drop).lower(),
               'dummies = "all"\n' if coding else "", splits))
    text += VARIANTS[base] % {"depth": depth}
    if base != "cart":
        text += SOLVER % {"starts": starts}
    # The engine makes the cell resumable split by split.
    text += '\n[experiment]\nsave_models = false\n'
    return text


def cell_dir(out, variant, dataset, depth):
    return os.path.join(out, variant, "%s_d%d" % (dataset, depth))


def run(args):
    shard, of = (int(v) for v in args.shard.split("/"))
    for k, (variant, dataset, depth) in enumerate(cells(args)):
        if k % of != shard - 1:
            continue
        d = cell_dir(args.out, variant, dataset, depth)
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, "config.toml")
        text = config(variant, dataset, depth, args.splits, args.starts)
        print("%s %s D=%d" % (variant, dataset, depth), flush=True)
        # A cell resumes only in the mode it was started in: shards/ marks a sharded one
        # (its run/ is their merge), run/ alone a one-process one.
        sharded = os.path.isdir(os.path.join(d, "shards"))
        started = sharded or os.path.isdir(os.path.join(d, "run"))
        if sharded and args.processes == 1:
            sys.exit("%s was run in shards: resume it with the same --processes" % d)
        if not sharded and args.processes > 1 and started:
            sys.exit("%s was run in one process: resume it without --processes" % d)
        # The engine decides whether the results there are this config's (its fingerprint
        # ignores what does not change a solve); where it refuses them, the cell's
        # config.toml is put back, so that it still describes the results beside it.
        before = open(path).read() if os.path.exists(path) else None
        with open(path, "w") as f:
            f.write(text)
        if args.processes == 1:
            code = subprocess.run([args.glassbox, "run", path, "--out", os.path.join(d, "run")],
                                  stdout=subprocess.DEVNULL).returncode
        else:
            code = run_in_processes(args.glassbox, path, d, args.processes)
        if code:
            if before is not None:
                with open(path, "w") as f:
                    f.write(before)
            sys.exit("%s: glassbox failed (exit code %d): results of another --splits or "
                     "--starts need a fresh --out; otherwise run again to resume" % (d, code))


def archive(args):
    """The cells of `--variants` x `--datasets` x `--depths` that have finished their
    `--splits` splits under `--out`, into `--to`: each cell's config.toml and its results
    lines, both gzipped, all that the reading commands need (they read `run/results.jsonl` or its
    `.gz`)."""
    for variant, dataset, depth in cells(args):
        d = cell_dir(args.out, variant, dataset, depth)
        text = read_text(os.path.join(d, "run", "results.jsonl"))
        if text is None:
            continue
        recs = json_lines(text)
        done = len({r["split"] for r in recs if r.get("selected")})
        if done < args.splits:
            print("%s: %d of %d splits finished, not archived" % (d, done, args.splits))
            continue
        to = cell_dir(args.to, variant, dataset, depth)
        os.makedirs(os.path.join(to, "run"), exist_ok=True)
        write_config_gz(to, open(os.path.join(d, "config.toml")).read())
        write_gz(os.path.join(to, "run", "results.jsonl.gz"), text)
        print("archived %s" % to)


def run_in_processes(glassbox, config_path, d, n):
    """One cell's splits on n processes: `glassbox run --shard i/n` into D/shards/i (each
    resumable on its own; an earlier session's shard folders copied there are resumed),
    then `glassbox merge` into D/run, the folder every reading command takes. Returns 0 when
    every shard and the merge succeeded, else a failing exit code."""
    shards = [os.path.join(d, "shards", str(i)) for i in range(1, n + 1)]
    # (a shard folder of another n is refused by the engine: it names both shards)
    procs = [subprocess.Popen([glassbox, "run", config_path, "--out", s,
                               "--shard", "%d/%d" % (i + 1, n)], stdout=subprocess.DEVNULL)
             for i, s in enumerate(shards)]
    codes = [p.wait() for p in procs]
    if any(codes):
        print("%s: a shard failed (exit codes %s)" % (d, codes), file=sys.stderr)
        # (not max: a shard killed by a signal has a negative code)
        return next(c for c in codes if c)
    return subprocess.run([glassbox, "merge", os.path.join(d, "run")] + shards + ["--force"],
                          stdout=subprocess.DEVNULL).returncode


COUNTS = re.compile(r"cart [0-9.]+ \(rows only the optimized trees get right (\d+), only cart (\d+)\)")


def split_lines(out, variant, dataset, depth):
    """A cell's results lines grouped by split, as (split, lines) in split order; None
    where the cell has not run."""
    text = read_text(os.path.join(cell_dir(out, variant, dataset, depth), "run", "results.jsonl"))
    if text is None:
        return None
    recs = json_lines(text)
    return [(s, [r for r in recs if r["split"] == s]) for s in sorted({r["split"] for r in recs})]


def new_result():
    return {"splits": [], "acc": [], "secs": [], "alone": [], "iters": [], "alone_iters": [],
            "gamma": [], "cart_kept": [], "tao_kept": []}


def add_split(res, s, of, returned, acc, origin):
    """Appends split `s` (its lines `of`) to `res`: the returned tree's test accuracy `acc`,
    the split's seconds and iterations (every line, the choice's folds included), the
    returned line's gamma, and whether the tree returned is CART's or TAO's (`origin`)."""
    res["splits"].append(s)
    res["acc"].append(acc)
    res["secs"].append(sum(r["solve_seconds"] for r in of))
    # The split's time over its multistart's alone (every line but the choice's): what the
    # choice costs, measured within one run whatever the machine's load.
    multistart = [r for r in of if not (r.get("origin") or "").startswith("selection")]
    res["alone"].append(res["secs"][-1] / sum(r["solve_seconds"] for r in multistart))
    res["iters"].append(sum(r.get("iterations") or 0 for r in of))
    res["alone_iters"].append(sum(r.get("iterations") or 0 for r in multistart))
    res["gamma"].append(returned.get("gamma"))
    res["cart_kept"].append(origin == "selection (cart)")
    res["tao_kept"].append(origin == "selection (tao)")


def load_margin(out, variant, dataset, depth):
    """`base@z`: the choice of `base`'s results decided again with a margin of z standard
    errors instead of one, from the paired counts its line records (rows only the optimized
    trees get right, only CART's): the optimized tree (the best objective's start) where
    n_a - n_b > z sqrt(n_a + n_b), else CART's tree (its accuracy from the `cart` results
    of the same split). Splits whose line lacks the counts (results of a build before
    they were recorded) or that the `cart` results lack are left out. On `polished`'s
    results it decides the two-way choice, so `polished@1` is `whole3m`'s choice exactly
    (the same solves; checked on every split of the 60 cells both ran)."""
    base, z = variant.split("@")
    z = float(z)
    lines = split_lines(out, base, dataset, depth)
    cart = load(out, "cart", dataset, depth)
    if lines is None or cart is None:
        return None
    cart_acc = dict(zip(cart["splits"], cart["acc"]))
    res = new_result()
    for s, of in lines:
        choice = [r for r in of if (r.get("origin") or "").startswith("selection")]
        found = COUNTS.search(choice[0]["raw_status"]) if choice else None
        if not found or s not in cart_acc:
            continue
        n_a, n_b = int(found.group(1)), int(found.group(2))
        starts = [r for r in of if r not in choice and r.get("objective") is not None]
        best = min(starts, key=lambda r: r["objective"])
        optimized = n_a - n_b > z * (n_a + n_b) ** 0.5
        # The choice's own line is the best start's tree, CART's, or (`polished`) the tree
        # optimized from CART's start: check it agrees.
        returned = {"selection (optimized)": best,
                    "selection (cart optimized)": next(
                        (r for r in of if r.get("origin") == "cart"), None)}
        kept = returned.get(choice[0]["origin"])
        expected = kept["test_accuracy"] if kept else cart_acc[s]
        assert abs(choice[0]["test_accuracy"] - expected) < 1e-12, (dataset, depth, s)
        acc = best["test_accuracy"] if optimized else cart_acc[s]
        origin = "selection (optimized)" if optimized else "selection (cart)"
        add_split(res, s, of, choice[0], acc, origin)
    return res


def load(out, variant, dataset, depth):
    """A cell's results of `variant` (None where it has not run). `A/B` is A's where A
    has run the cell and B's otherwise, e.g. `whole3m/polished@1`: the default's table
    where the cells it lacks ran as `polished` only."""
    if "/" in variant:
        first, _, rest = variant.partition("/")
        return load(out, first, dataset, depth) or load(out, rest, dataset, depth)
    if "@" in variant:
        return load_margin(out, variant, dataset, depth)
    lines = split_lines(out, variant, dataset, depth)
    if lines is None:
        return None
    res = new_result()
    for s, of in lines:
        sel = of if variant.partition("+")[0] == "cart" else [r for r in of if r.get("selected")]
        if sel:
            add_split(res, s, of, sel[0], sel[0]["test_accuracy"], sel[0].get("origin"))
    return res


def paired_se(a, b):
    """Standard error (pp) of the mean of the per-split differences a - b."""
    d = [100 * (x - y) for x, y in zip(a, b)]
    return statistics.stdev(d) / len(d) ** 0.5 if len(d) > 1 else float("nan")


def table(args):
    variants = args.variants.split(",")
    sorct = [v for v in variants if v != "cart"]
    head = ["data set", "D", "CART"] + ["S-ORCT %s" % v for v in sorct]
    head += ["%s - CART (pp) +- SE" % v for v in sorct]
    head += ["s/split %s" % v for v in sorct]
    head += ["iterations/split %s" % v for v in sorct]
    # The CART-kept and gamma columns read the `default` variant's results where it is
    # listed (the tables of issue 24's first default), else the first S-ORCT variant's
    # (none with `--variants cart` alone: the columns stay empty).
    chosen = sorct[0] if sorct and "default" not in sorct else "default"
    head += ["CART kept (%s)" % chosen, "gamma (%s)" % chosen]
    if "tao" in sorct:
        head += ["CART / TAO kept (tao)"]
    head += ["splits"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    worst = {}
    for dataset in args.datasets.split(","):
        for depth in [int(d) for d in args.depths.split(",")]:
            if 2 ** depth < SETS[dataset][0]:
                continue
            res = {v: load(args.out, v, dataset, depth) for v in variants}
            if res.get("cart") is None:
                continue
            n = min([len(r["acc"]) for r in res.values() if r is not None] + [args.first])
            if n == 0:
                continue
            mean = lambda r: statistics.mean(r["acc"][:n]) if r else float("nan")
            cart = mean(res["cart"])
            row = [dataset, str(depth), "%.1f" % (100 * cart)]
            row += ["%.1f" % (100 * mean(res[v])) if res[v] else "not run" for v in sorct]
            for v in sorct:
                if res[v]:
                    diff = 100 * (mean(res[v]) - cart)
                    worst[v] = min(worst.get(v, 99.0), diff)
                    se = paired_se(res[v]["acc"][:n], res["cart"]["acc"][:n])
                    mark = "" if diff >= -0.5 else " **below**"
                    row.append("%+.1f +- %.1f%s" % (diff, se, mark))
                else:
                    row.append("")
            row += ["%.1f" % statistics.median(res[v]["secs"][:n]) if res[v] else "" for v in sorct]
            row += ["%d" % statistics.median(res[v]["iters"][:n]) if res[v] else "" for v in sorct]
            g = res.get(chosen)
            row.append("%d of %d" % (sum(g["cart_kept"][:n]), n) if g else "")
            row.append("%g" % statistics.median(g["gamma"][:n]) if g and g["gamma"][0] else "")
            if "tao" in sorct:
                t = res.get("tao")
                row.append("%d / %d" % (sum(t["cart_kept"][:n]), sum(t["tao_kept"][:n]))
                           if t else "")
            row.append(str(n))
            print("| " + " | ".join(row) + " |")
    for v, w in worst.items():
        print("\nworst %s - CART: %+.1f pp" % (v, w))


# The S-ORCT paper's out-of-sample accuracy (%) at lambda = 0 (the first row of each data
# set in its Table 3, D = 1, and Table 4, D = 2; transcribed in experiments/REPLICATION.md).
PAPER_LAMBDA0 = {
    ("monks3", 1): 89.7, ("monks1", 1): 77.7, ("monks2", 1): 74.3, ("sonar", 1): 75.8,
    ("ionosphere", 1): 84.1, ("breast_cancer_wisconsin", 1): 96.2, ("pima", 1): 75.8,
    ("german_credit", 1): 73.5, ("spambase", 1): 89.8,
    ("iris", 2): 95.9, ("wine", 2): 96.6, ("thyroid", 2): 92.8, ("car", 2): 92.7,
}


def paper_rows(args):
    """The lambda = 0 rows of the S-ORCT paper's Tables 3-4 against each variant run."""
    variants = [v for v in args.variants.split(",") if v != "cart"]
    # ("published": the paper's accuracy, so that the variant `paper` reads apart from it)
    head = ["data set", "D", "published"] + ["S-ORCT %s" % v for v in variants]
    head += ["%s - published (pp)" % v for v in variants] + ["splits"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for (dataset, depth), paper in PAPER_LAMBDA0.items():
        res = {v: load(args.out, v, dataset, depth) for v in variants}
        ns = [len(r["acc"]) for r in res.values() if r is not None and r["acc"]]
        if not ns:
            continue
        n = min(ns + [args.first])
        mean = lambda r: 100 * statistics.mean(r["acc"][:n]) if r and r["acc"] else None
        ours = [mean(res[v]) for v in variants]
        row = [dataset, str(depth), "%.1f" % paper]
        row += ["%.1f" % m if m is not None else "not run" for m in ours]
        for m in ours:
            mark = "" if m is None or m >= paper - 0.5 else " **below**"
            row.append("%+.1f%s" % (m - paper, mark) if m is not None else "")
        row.append(str(n))
        print("| " + " | ".join(row) + " |")


def margins(args):
    """Per margin Z (`--margins`), the choice of `--variants`' one S-ORCT variant decided
    again offline (`VARIANT@Z`) over every cell of `--datasets` x `--depths` that has the
    counts: how many cells end below CART minus 0.5, the mean and worst difference to CART,
    on how many splits CART's tree is returned, and the S-ORCT paper's lambda = 0 rows."""
    base = [v for v in args.variants.split(",") if v != "cart"][0]
    zs = [float(z) for z in args.margins.split(",")]
    cells = dataset_depths(args)
    head = ["margin (standard errors)", "cells", "below CART - 0.5", "mean - CART (pp)",
            "worst - CART (pp)", "CART returned (splits)"]
    head += ["%s D=%d (paper %.1f)" % (d, k, p) for (d, k), p in PAPER_LAMBDA0.items()
             if (d, k) in cells]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for z in zs:
        results = {cell: load(args.out, "%s@%g" % (base, z), *cell) for cell in cells}
        mean = lambda r, n: 100 * statistics.mean(r["acc"][:n])
        diffs, below, kept, splits, paper = [], [], 0, 0, []
        for (dataset, depth), r in results.items():
            cart = load(args.out, "cart", dataset, depth)
            n = min(len(r["acc"]), args.first) if r else 0
            if n == 0:
                continue
            d = mean(r, n) - mean(cart, n)
            diffs.append(d)
            if d < -0.5:
                below.append("%s D=%d" % (dataset, depth))
            kept += sum(r["cart_kept"][:n])
            splits += n
        if not diffs:
            sys.exit("cart_table.py margins: no cell of %s's with the choice's counts and "
                     "cart's results under %s" % (base, args.out))
        for cell, p in PAPER_LAMBDA0.items():
            if cell not in results:
                continue
            r = results[cell]
            n = min(len(r["acc"]), args.first) if r else 0
            paper.append("%.1f (%+.1f)" % (mean(r, n), mean(r, n) - p) if n else "not run")
        row = ["%g" % z, str(len(diffs)), "%d: %s" % (len(below), ", ".join(below)),
               "%+.2f" % statistics.mean(diffs), "%+.1f" % min(diffs),
               "%d of %d" % (kept, splits)] + paper
        print("| " + " | ".join(row) + " |")


def summary(args):
    """Per S-ORCT variant of `--variants`, over the cells of `--datasets` x `--depths` that
    every variant (and `cart`) ran on `--splits` splits (their first that many): how many
    end below CART minus 0.5, the mean difference to CART, the sum of the differences to
    the first variant, and the time per split over its multistart's alone (per cell the
    median over the splits; the median and range over the cells); then the cells left out,
    so that a table short of the whole grid says so."""
    sorct = [v for v in args.variants.split(",") if v != "cart"]
    n = args.splits
    cells, missing = [], []
    for d, k in dataset_depths(args):
        rs = [load(args.out, v, d, k) for v in ["cart"] + sorct]
        if all(r is not None and len(r["acc"]) >= n for r in rs):
            cells.append(("%s D=%d" % (d, k), rs[0], rs[1:]))
        else:
            missing.append("%s D=%d (%s)" % (d, k, ", ".join(
                "%s %d" % (v, len(r["acc"]) if r else 0)
                for v, r in zip(["cart"] + sorct, rs) if r is None or len(r["acc"]) < n)))
    if not cells:
        sys.exit("cart_table.py summary: no cell that cart and every variant ran on %d splits"
                 " under %s" % (n, args.out))
    print("| variant | cells | below CART - 0.5 | mean - CART (pp) | sum - %s (pp) | "
          "time / multistart alone, median (range) of cells |" % sorct[0])
    print("|---|---|---|---|---|---|")
    mean = lambda r: 100 * statistics.mean(r["acc"][:n])
    for i, v in enumerate(sorct):
        diffs = [mean(rs[i]) - mean(cart) for _, cart, rs in cells]
        below = [name for (name, _, _), d in zip(cells, diffs) if d < -0.5]
        cost = [statistics.median(rs[i]["alone"][:n]) for _, _, rs in cells]
        first = sum(mean(rs[i]) - mean(rs[0]) for _, _, rs in cells)
        print("| %s | %d | %d: %s | %+.2f | %+.1f | %.2f (%.2f-%.2f) |" % (
            v, len(cells), len(below), ", ".join(below), statistics.mean(diffs), first,
            statistics.median(cost), min(cost), max(cost)))
    if missing:
        # The table's cells left out above, with the splits each variant short of n has.
        print("\n%d of the %d cells left out (splits run): %s" % (
            len(missing), len(cells) + len(missing), "; ".join(missing)))


# Two end points are one basin when their objectives agree to this and their training
# accuracies are equal (benches/README "Two more uses of the starts").
BASIN_OBJECTIVE_TOLERANCE = 1e-5


def basin_shares(of):
    """For one split's lines `of`: the distinct end points of its seeded random starts
    (the multistart's lines without an origin), and the share of the split's IPOPT
    iterations (every line, the choice's folds included) spent by random starts that end
    in a basin an earlier random start of the split found: what deduplicating starts could
    save at most there, had it known the basin before solving."""
    seen, repeated = [], 0
    for r in of:
        if r.get("origin") is not None or r.get("start") is None:
            continue
        key = (r.get("objective"), r.get("train_accuracy"))
        if key[0] is None:
            continue
        if any(abs(key[0] - o) <= BASIN_OBJECTIVE_TOLERANCE and key[1] == a for o, a in seen):
            repeated += r.get("iterations") or 0
        else:
            seen.append(key)
    total = sum(r.get("iterations") or 0 for r in of)
    return len(seen), repeated / total if total else 0.0


def basins(args):
    """Per cell of the first of `--variants` (`A/B`: A's lines where A ran the cell, else
    B's), the median over the splits of the distinct end points of the random starts and
    of the share of iterations that repeat a basin (`basin_shares`); then the median and
    the largest share over the cells."""
    variant = args.variants.split(",")[0]
    rows = []
    for d, k in dataset_depths(args):
        lines = None
        for v in variant.split("/"):
            lines = split_lines(args.out, v, d, k)
            if lines is not None:
                break
        if not lines:
            continue
        per = [basin_shares(of) for _, of in lines[:args.first]]
        rows.append(("%s D=%d" % (d, k), len(per), statistics.median(n for n, _ in per),
                     statistics.median(x for _, x in per)))
    print("| cell | splits | distinct end points of the random starts | iterations repeating a basin |")
    print("|---|---|---|---|")
    for name, n, distinct, share in rows:
        print("| %s | %d | %g | %.2f |" % (name, n, distinct, share))
    if rows:
        shares = [x for _, _, _, x in rows]
        top = max(rows, key=lambda r: r[3])
        print()
        print("over %d cells: iterations repeating a basin, median %.2f, largest %.2f (%s)" % (
            len(rows), statistics.median(shares), top[3], top[0]))


# `cost`'s ratios: a variant's per-split key over the first variant's, and its name.
COST_RATIOS = (("secs", "secs", "seconds"), ("iters", "iters", "iterations"),
               ("alone_iters", "iters", "multistart alone iterations"))


def cost(args):
    """Per cell that every variant of `--variants` ran, each variant's seconds and IPOPT
    iterations per split over the first variant's on the same split, and the iterations of
    its multistart alone (every line but the choice's) over the first's (the median over
    the splits); then per variant the median and range over the cells and how many cells
    are above 3. Seconds compare only where the variants ran side by side under the same
    load (one folder of alternated runs); iterations do not depend on the load, but a
    fold's iteration (two thirds of the rows) counts as one of the multistart's."""
    variants = args.variants.split(",")
    base, others = variants[0], variants[1:]
    rows = []
    for d, k in dataset_depths(args):
        rs = [load(args.out, v, d, k) for v in variants]
        if any(r is None for r in rs):
            continue
        common = sorted(set.intersection(*(set(r["splits"]) for r in rs)))[:args.first]
        if not common:
            continue
        at = lambda r, key: dict(zip(r["splits"], r[key]))
        ratios = []
        for r in rs[1:]:
            for key, of_base, _ in COST_RATIOS:
                mine, theirs = at(r, key), at(rs[0], of_base)
                ratios.append(statistics.median(mine[s] / theirs[s] for s in common))
        rows.append(("%s D=%d" % (d, k), len(common), ratios))
    head = ["cell", "splits"]
    for v in others:
        head += ["%s / %s %s" % (v, base, what) for _, _, what in COST_RATIOS]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for name, n, ratios in rows:
        print("| %s | %d | %s |" % (name, n, " | ".join("%.2f" % x for x in ratios)))
    if not rows:
        return
    print()
    for i, v in enumerate(others):
        for j, (_, _, what) in enumerate(COST_RATIOS):
            col = [ratios[len(COST_RATIOS) * i + j] for _, _, ratios in rows]
            print("%s / %s %s over %d cells: median %.2f (%.2f-%.2f), above 3 on %d" % (
                v, base, what, len(col), statistics.median(col), min(col), max(col),
                sum(x > 3 for x in col)))


# The legend's names of the variants that have another name in the docs.
PLOT_LABELS = {"whole3m": "whole3m (the default)",
               "whole3m/polished@1": "whole3m (the default; polished@1 where only polished ran)"}


def plot(args):
    """The never-worse-than-CART table as a figure (`--file`, PNG; needs matplotlib): one
    panel per depth, per data set each S-ORCT variant's mean difference to CART over the
    first `--splits` splits (a cell with fewer is left out, as `summary` leaves it) with the
    standard error of the paired differences, on a symmetric log scale (linear within 2
    points of CART, where the clause is decided); the dashed line is CART minus 0.5 and a
    cell below it is drawn filled red."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    if not args.file:
        sys.exit("plot needs --file PNG")
    sorct = [v for v in args.variants.split(",") if v != "cart"]
    depths = [int(d) for d in args.depths.split(",")]
    fig, axes = plt.subplots(len(depths), 1, figsize=(11, 2.6 * len(depths)), squeeze=False)
    markers = "osD^v"
    for ax, depth in zip(axes[:, 0], depths):
        # CART's results per data set, read once for every variant of the panel.
        carts = {d: load(args.out, "cart", d, depth) for d in args.datasets.split(",")
                 if 2 ** depth >= SETS[d][0]}
        names = [d for d, cart in carts.items() if cart]
        drawn = set()
        for i, v in enumerate(sorct):
            for x, dataset in enumerate(names):
                cart, res = carts[dataset], load(args.out, v, dataset, depth)
                if not res:
                    continue
                n = args.splits
                if len(cart["acc"]) < n or len(res["acc"]) < n:
                    continue
                diff = 100 * (statistics.mean(res["acc"][:n]) - statistics.mean(cart["acc"][:n]))
                se = paired_se(res["acc"][:n], cart["acc"][:n])
                below = diff < -0.5
                ax.errorbar(x + 0.18 * (i - (len(sorct) - 1) / 2), diff, yerr=se, capsize=2,
                            marker=markers[i % len(markers)], color="C%d" % i,
                            markerfacecolor="red" if below else "white",
                            label=PLOT_LABELS.get(v, v) if v not in drawn else None,
                            linestyle="none")
                drawn.add(v)
        ax.axhline(0, color="grey", linewidth=0.8, linestyle=":")
        ax.axhline(-0.5, color="red", linewidth=0.8, linestyle="--")
        ax.set_yscale("symlog", linthresh=2)
        ax.set_ylim(-3, 60)
        ticks = [-2, -0.5, 0, 1, 2, 5, 10, 20, 40]
        ax.set_yticks(ticks)
        ax.set_yticklabels(["%g" % t for t in ticks], fontsize=7)
        ax.set_xticks(range(len(names)))
        ax.set_xticklabels([d.replace("_", " ") for d in names], rotation=30, ha="right",
                           fontsize=8)
        ax.set_ylabel("D=%d: S-ORCT - CART (pp)" % depth, fontsize=8)
        ax.grid(axis="y", alpha=0.3)
    fig.suptitle("S-ORCT (lambda = 0) against CART of the same depth: mean test accuracy "
                 "difference +- SE over %d splits" % args.splits,
                 fontsize=10)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0.975), ncol=len(sorct),
               fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    # Written whole or not at all: into a file beside it, then renamed.
    part = args.file + ".part.png"
    fig.savefig(part, dpi=110)
    os.replace(part, args.file)
    print("wrote %s" % args.file)


def check_arguments(args):
    """Usage errors as one line each: unknown data sets, depths, shards, margins, variants,
    a missing binary, and for the reading commands a --out that holds no results of the
    variants asked for (e.g. another script's folder)."""
    def fail(message):
        sys.exit("cart_table.py %s: %s" % (args.command, message))
    unknown = [d for d in args.datasets.split(",") if d not in SETS]
    if unknown:
        fail("unknown data set %s (one of %s)" % (", ".join(unknown), ", ".join(SETS)))
    if not re.fullmatch(r"[1-9]\d*(,[1-9]\d*)*", args.depths):
        fail("--depths %r: positive integers separated by commas" % args.depths)
    shard = re.fullmatch(r"(\d+)/(\d+)", args.shard)
    if not shard or not 1 <= int(shard.group(1)) <= int(shard.group(2)):
        fail("--shard %r: i/n with 1 <= i <= n" % args.shard)
    if args.command == "margins":
        try:
            [float(z) for z in args.margins.split(",")]
        except ValueError:
            fail("--margins %r: numbers separated by commas" % args.margins)
    variants = args.variants.split(",")
    if args.command == "run":
        if not args.glassbox:
            fail("give the glassbox binary")
        if not os.path.isfile(args.glassbox):
            fail("no glassbox binary at %s" % args.glassbox)
        if args.processes < 1:
            fail("--processes must be at least 1, got %d" % args.processes)
        for v in variants:
            base, _, coding = v.partition("+")
            if base not in VARIANTS or coding not in ("", "onehot"):
                fail("unknown variant %r (one of %s, each optionally +onehot)"
                     % (v, ", ".join(VARIANTS)))
        return
    if not os.path.isdir(args.out):
        fail("no results folder %s" % args.out)
    present = sorted(n for n in os.listdir(args.out) if os.path.isdir(os.path.join(args.out, n)))
    # (a reading command takes any folder under --out as a variant: VARIANT, VARIANT@Z, A/B)
    needed = [v for v in variants if v != "cart"]
    if args.command == "archive":
        return  # (archives the cells of --variants that have finished, whichever they are)
    if args.command in ("table", "margins", "summary", "plot"):
        needed.append("cart")
    for v in needed:
        if not any(os.path.isdir(os.path.join(args.out, a.partition("@")[0]))
                   for a in v.split("/")):
            fail("no results of variant %r under %s (its folders: %s)"
                 % (v, args.out, ", ".join(present) or "none"))
    if args.command == "cost" and len(variants) < 2:
        fail("--variants needs two variants or more (the first is the base)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("command", choices=["run", "table", "paper_rows", "margins", "summary",
                                        "cost", "plot", "archive", "basins"])
    ap.add_argument("glassbox", nargs="?")
    ap.add_argument("--out", required=True)
    ap.add_argument("--variants", default="cart,paper,default")
    ap.add_argument("--datasets", default=",".join(SETS))
    ap.add_argument("--depths", default="1,2,3,4")
    ap.add_argument("--splits", type=int, default=10)
    ap.add_argument("--starts", type=int, default=20)
    ap.add_argument("--shard", default="1/1")
    # run: each cell's splits on this many processes (a costly cell on several cores)
    ap.add_argument("--processes", type=int, default=1)
    # table / paper_rows: only the first N splits of each cell (a folder run with more
    # splits than the protocol's ten still gives the protocol's table).
    ap.add_argument("--first", type=int, default=10 ** 9)
    # margins: the margins (standard errors) to decide the choice again with
    ap.add_argument("--margins", default="0.5,1,1.5,2,3")
    # plot: the figure's path
    ap.add_argument("--file")
    # archive: the folder to write the cells' results into
    ap.add_argument("--to")
    args = ap.parse_args()
    check_arguments(args)
    if args.command == "run":
        run(args)
    elif args.command == "paper_rows":
        paper_rows(args)
    elif args.command == "margins":
        margins(args)
    elif args.command == "summary":
        summary(args)
    elif args.command == "cost":
        cost(args)
    elif args.command == "basins":
        basins(args)
    elif args.command == "plot":
        plot(args)
    elif args.command == "archive":
        if not args.to:
            sys.exit("archive needs --to, the folder to write")
        archive(args)
    else:
        table(args)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        # (the engine keeps every finished split; rerunning resumes the rest)
        sys.exit("\n%s: interrupted; rerun the same command to resume" % os.path.basename(__file__))
