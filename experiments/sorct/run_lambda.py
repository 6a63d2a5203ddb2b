#!/usr/bin/env python3
"""S-ORCT Tables 3-5 (Blanquero et al. 2019, section 4), reduced: one `glassbox run` per
(data set, lambda) with fresh multistarts (no warm-started path: the grid engine is not on
main yet), every run's results.jsonl under OUT/<table>/<dataset>/<r>/.

Table 3: local S-ORCT, D = 1, two-class sets, lambda_G = 0, lambda_L = 2^r / (p |tau_B|).
Table 4: local S-ORCT, D = 2, three/four-class sets.
Table 5: global S-ORCT, D = 2, lambda_L = 0, lambda_G = 2^r / p.
The paper's settings otherwise: 75/25 stratified splits, gamma = 512, rho_k = 0.1 for every
class, IPOPT. Each run's config has an `[experiment]` table, so the engine resumes it: a
rerun of the same command skips every finished split and finishes the rest (an interrupted
run keeps its finished splits; Ctrl-C, then the same command again).

usage: run_lambda.py GLASSBOX OUT [--tables 3,4,5] [--grid none,-12,...] [--splits 5]
       [--starts 5] [--datasets iris,...] [--big-splits 3] [--big-starts 2]
"""
import argparse, json, os, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.normpath(os.path.join(HERE, "../../../shared/datasets"))
MONKS = '["a1", "a2", "a3", "a4", "a5", "a6"]'
# data set -> (file, categorical columns); in the paper's column order.
D1 = [("monks3", "monks3.csv", MONKS), ("monks1", "monks1.csv", MONKS),
      ("monks2", "monks2.csv", MONKS), ("sonar", "sonar.csv", "[]"),
      ("ionosphere", "ionosphere.csv", "[]"),
      ("breast_cancer_wisconsin", "breast_cancer_wisconsin.csv", "[]"),
      ("pima", "pima.csv", "[]"), ("german_credit", "german_credit.csv", "[]"),
      ("spambase", "spambase.csv", "[]")]
D2 = [("iris", "iris.csv", "[]"), ("wine", "wine.csv", "[]"),
      ("thyroid", "thyroid.csv", "[]"), ("car", "car.csv", '["buying", "maint", "doors", "persons", "lug_boots", "safety"]')]
# Slow per start (thousands of rows): run with fewer splits and starts.
BIG = {"german_credit", "spambase", "thyroid", "car"}
TABLES = {3: (1, "local", D1), 4: (2, "local", D2), 5: (2, "global", D2)}


def config(file, categorical, depth, mode, r, splits, starts):
    # The paper's protocol: gamma = 512 as given, random starts only, the best objective
    # selected (glassbox's defaults since issue 24 raise gamma to the data's scale, add the
    # CART tree as a start and select on held-out rows).
    form = ('name = "sorct"\ndepth = %d\ngamma = 512.0\nrho = [0.1]\n'
            'split_scale = "fixed"\ncart_start = false\nselection_folds = 0\n' % depth)
    if r != "none":
        form += "lambda_%s_log2 = %s\n" % (mode, r)
    cat = "categorical = %s\n" % categorical
    return ('[data]\npath = "%s"\n%s\n[split]\ntest_fraction = 0.25\nrepeats = %d\nseed = 1\n\n'
            '[formulation]\n%s\n[solver]\nname = "ipopt"\ntime_limit = 120.0\n\n'
            '[multistart]\nstarts = %d\nseed = 1\n\n'
            # The engine makes the run resumable split by split (a plain run is not).
            '[experiment]\n'
            % (os.path.join(DATA, file), cat, splits, form, starts))


def finished(run, splits):
    """Whether the run folder holds every split of `splits` (the engine's results lines:
    one `selected` line per finished split)."""
    path = os.path.join(run, "results.jsonl")
    if not os.path.exists(path):
        return False
    done = set()
    with open(path) as f:
        for line in f:
            try:
                rec = json.loads(line)
            except ValueError:
                continue  # a partial last line, which the engine drops on resume
            if rec.get("selected"):
                done.add(rec.get("split"))
    return len(done) >= splits


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("glassbox")
    ap.add_argument("out")
    ap.add_argument("--tables", default="3,4,5")
    ap.add_argument("--grid", default="none,-12,-9,-6,-4,-2,-1,0,1,2,3")
    ap.add_argument("--splits", type=int, default=5)
    ap.add_argument("--starts", type=int, default=5)
    ap.add_argument("--big-splits", type=int, default=3)
    ap.add_argument("--big-starts", type=int, default=2)
    ap.add_argument("--datasets", default="")
    ap.add_argument("--only-big", action="store_true")
    ap.add_argument("--skip-big", action="store_true")
    args = ap.parse_args()
    try:
        tables = [int(v) for v in args.tables.split(",")]
    except ValueError:
        sys.exit("run_lambda.py: --tables %r: give table numbers among 3, 4, 5" % args.tables)
    unknown = [t for t in tables if t not in TABLES]
    if unknown:
        sys.exit("run_lambda.py: no table %s (3, 4 or 5)" % ", ".join(map(str, unknown)))
    grid = args.grid.split(",")
    bad = [r for r in grid if r != "none" and not r.lstrip("-").isdigit()]
    if bad:
        sys.exit("run_lambda.py: --grid %s: each value is `none` or an integer r (lambda = 2^r)"
                 % ", ".join(bad))
    wanted = set(filter(None, args.datasets.split(",")))
    known = {name for t in tables for name, _, _ in TABLES[t][2]}
    if wanted - known:
        sys.exit("run_lambda.py: unknown data set %s for tables %s (one of %s)" % (
            ", ".join(sorted(wanted - known)), args.tables, ", ".join(sorted(known))))
    if not os.path.isfile(args.glassbox):
        sys.exit("run_lambda.py: no glassbox binary at %s" % args.glassbox)
    failed = 0
    try:
        for t in tables:
            failed += run_table(args, t, wanted, grid)
    except KeyboardInterrupt:
        sys.exit("\nrun_lambda.py: interrupted; the finished splits are kept: rerun the same "
                 "command to finish the rest")
    if failed:
        sys.exit("run_lambda.py: %d runs failed (above)" % failed)


def run_table(args, t, wanted, grid):
    """Runs (or resumes) every (data set, r) of table `t`; returns how many failed."""
    failed = 0
    depth, mode, sets = TABLES[t]
    for name, file, cat in sets:
        if wanted and name not in wanted:
            continue
        big = name in BIG
        if (args.only_big and not big) or (args.skip_big and big):
            continue
        splits = args.big_splits if big else args.splits
        starts = args.big_starts if big else args.starts
        for r in grid:
            run = os.path.join(args.out, "table%d" % t, name, r)
            if finished(run, splits):
                continue
            os.makedirs(run, exist_ok=True)
            cfg = os.path.join(run, "config.toml")
            with open(cfg, "w") as f:
                f.write(config(file, cat, depth, mode, r, splits, starts))
            print("table %d %s r=%s" % (t, name, r), flush=True)
            command = [args.glassbox, "run", cfg, "--out", run]
            # A folder of a plain run (before the [experiment] table; no experiment.json)
            # cannot resume: started over.
            if (os.path.exists(os.path.join(run, "results.jsonl"))
                    and not os.path.exists(os.path.join(run, "experiment.json"))):
                command.append("--force")
            p = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               text=True)
            if p.returncode != 0:
                failed += 1
                print("  failed: %s" % p.stderr.strip()[-400:], file=sys.stderr, flush=True)
    return failed

if __name__ == "__main__":
    main()
