#!/usr/bin/env python3
"""S-NB-DEC against the undecomposed solve ("not-DEC"), as the l0 paper's Figures 5-6 and
Table 4 compare them: for each split, every start is solved by both configs (the same split
rows and the same starting points), the two runs interleaved split by split so that machine
load affects both alike. Prints the mean test accuracy and seconds per start of not-DEC, and
for S-NB-DEC after each macro-iteration the mean test accuracy, the mean cumulative seconds
and the time saving relative to not-DEC, with their uncertainty over the starts: the
standard error of the paired accuracy difference (each start's S-NB-DEC accuracy minus its
not-DEC accuracy) and a 95% bootstrap interval of the saving (starts resampled with their
pairs, 2000 resamples, seeded), and the first macro-iteration within 1 pp of not-DEC.

usage: compare_decomposition.py GLASSBOX NOT_DEC.toml S_NB_DEC.toml [--splits 3] [--starts 3]
       [--first-split 1] [--initialization data|uniform] [--out DIR]

`--initialization uniform` draws the starts as the paper does ("10 different random initial
solutions", section 6.4: a and mu uniform in [-1, 1], C = 1/K) instead of the configs'
data-aware starts; both configs get the same starts either way.

Only the standard library; the configs' [split] and [multistart] sizes are overridden.
"""
import argparse, json, os, random, re, statistics, subprocess, sys, tempfile


def with_overrides(path, split_seed, starts, initialization=None):
    """The config text with an absolute data path, one split of seed `split_seed`, `starts`
    starts and, if given, the formulation's `initialization`."""
    text = open(path).read()
    base = os.path.dirname(os.path.abspath(path))
    text = re.sub(r'^path = "([^"]+)"',
                  lambda m: 'path = "%s"' % os.path.normpath(os.path.join(base, m.group(1))),
                  text, flags=re.M)
    text = re.sub(r"^repeats = \d+", "repeats = 1", text, flags=re.M)
    text = re.sub(r"^seed = \d+\n(?=\n\[formulation\])", "seed = %d\n" % split_seed, text, flags=re.M)
    text = re.sub(r"^starts = \d+", "starts = %d" % starts, text, flags=re.M)
    if initialization is not None:
        text = re.sub(r"^initialization = \"\w+\"\n", "", text, flags=re.M)
        text, found = re.subn(r"^\[formulation\]\n",
                              '[formulation]\ninitialization = "%s"\n' % initialization,
                              text, flags=re.M)
        if found != 1:
            sys.exit("%s: expected one [formulation] table" % path)
    return text


def run(binary, text, out):
    with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as f:
        f.write(text)
    subprocess.run([binary, "run", f.name, "--out", out, "--force"], check=True,
                   stdout=subprocess.DEVNULL)
    os.unlink(f.name)
    return [json.loads(line) for line in open(os.path.join(out, "results.jsonl"))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("glassbox")
    ap.add_argument("not_dec")
    ap.add_argument("s_nb_dec")
    ap.add_argument("--splits", type=int, default=3)
    ap.add_argument("--starts", type=int, default=3)
    ap.add_argument("--first-split", type=int, default=1,
                    help="seed of the first split (splits use seeds first .. first + splits - 1)")
    ap.add_argument("--initialization", choices=["data", "uniform"])
    ap.add_argument("--out", default=tempfile.mkdtemp(prefix="nbdec-"))
    args = ap.parse_args()
    full, dec = [], []
    for s in range(args.first_split, args.first_split + args.splits):
        full += run(args.glassbox, with_overrides(args.not_dec, s, args.starts, args.initialization),
                    os.path.join(args.out, "not-dec-%d" % s))
        dec += run(args.glassbox, with_overrides(args.s_nb_dec, s, args.starts, args.initialization),
                   os.path.join(args.out, "s-nb-dec-%d" % s))
        print("split %d done" % s, file=sys.stderr)
    mean = statistics.mean
    t_full = mean(r["solve_seconds"] for r in full)
    a_full = mean(r["test_accuracy"] for r in full)
    print("dataset %s, splits %d-%d x %d starts (every start counted, as the paper averages its"
          " runs), %s starts" % (full[0]["dataset"], args.first_split,
                                 args.first_split + args.splits - 1, args.starts,
                                 args.initialization or "the configs'"))
    print("not-DEC : test accuracy %.4f, %.3f s per start (median %.3f), objective %.4f"
          % (a_full, t_full, statistics.median(r["solve_seconds"] for r in full),
             mean(r["objective"] for r in full)))
    # Savings from means (as before) and from medians (robust to the noise of a shared
    # machine): 1 - median cumulative S-NB-DEC seconds / median not-DEC seconds per start.
    t_full_median = statistics.median(r["solve_seconds"] for r in full)
    # Pair each S-NB-DEC run with the not-DEC run of the same split and start.
    pairs = list(zip(full, dec))
    for f, d in pairs:
        if (f["split_seed"], f["seed"]) != (d["split_seed"], d["seed"]):
            sys.exit("the two runs' starts differ: %s" % ((f["split_seed"], f["seed"]),))
    rng = random.Random(1)
    resamples = [[rng.randrange(len(pairs)) for _ in pairs] for _ in range(2000)]
    low, high = int(0.025 * len(resamples)) - 1, int(0.975 * len(resamples)) - 1
    full_means = [mean(pairs[i][0]["solve_seconds"] for i in sample) for sample in resamples]
    print("S-NB-DEC: %6s %9s %10s %10s %8s %10s %8s %15s %16s"
          % ("macro", "test_acc", "objective", "seconds", "saving", "median_s", "saving_m",
             "diff_pp (se)", "saving 95% CI"))
    macros = len(dec[0]["decomposition"])
    first_within = None
    for m in range(macros):
        at = [r["decomposition"][m] for r in dec]
        sec = mean(e["seconds"] for e in at)
        saving = 100.0 * (1.0 - sec / t_full)
        sec_median = statistics.median(e["seconds"] for e in at)
        diff = [100.0 * (d["decomposition"][m]["test_accuracy"] - f["test_accuracy"])
                for f, d in pairs]
        diff_mean = mean(diff)
        se = statistics.stdev(diff) / len(diff) ** 0.5 if len(diff) > 1 else float("nan")
        savings = sorted(100.0 * (1.0 - mean(at[i]["seconds"] for i in sample) / full_mean)
                         for sample, full_mean in zip(resamples, full_means))
        if first_within is None and diff_mean >= -1.0:
            first_within = (m, diff_mean, saving, savings[low], savings[high])
        print("          %6d %9.4f %10.4f %10.3f %7.1f%% %10.3f %7.1f%% %+8.2f (%.2f) [%6.1f, %6.1f]"
              % (m, mean(e["test_accuracy"] for e in at), mean(e["objective"] for e in at),
                 sec, saving, sec_median, 100.0 * (1.0 - sec_median / t_full_median),
                 diff_mean, se, savings[low], savings[high]))
    if first_within is None:
        print("S-NB-DEC is never within 1 pp of not-DEC's mean test accuracy")
    else:
        print("first macro-iteration within 1 pp of not-DEC: %d (%+.2f pp), saving %.1f%%"
              " (95%% CI [%.1f, %.1f])" % first_within)
    json.dump({"not_dec": full, "s_nb_dec": dec}, open(os.path.join(args.out, "all.json"), "w"))
    print("raw results: %s" % args.out)


if __name__ == "__main__":
    main()
