#!/usr/bin/env python3
"""S-NB-DEC against the undecomposed solve ("not-DEC"), as the l0 paper's Figures 5-6 and
Table 4 compare them: for each split, every start is solved by both configs (the same split
rows and the same starting points), the two runs interleaved split by split so that machine
load affects both alike. Prints the mean test accuracy and seconds per start of not-DEC, and
for S-NB-DEC after each macro-iteration the mean test accuracy, the mean cumulative seconds
and the time saving relative to not-DEC.

usage: compare_decomposition.py GLASSBOX NOT_DEC.toml S_NB_DEC.toml [--splits 3] [--starts 3]
       [--initialization data|uniform] [--out DIR]

`--initialization uniform` draws the starts as the paper does ("10 different random initial
solutions", section 6.4: a and mu uniform in [-1, 1], C = 1/K) instead of the configs'
data-aware starts; both configs get the same starts either way.

Only the standard library; the configs' [split] and [multistart] sizes are overridden.
"""
import argparse, json, os, re, statistics, subprocess, sys, tempfile


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
    ap.add_argument("--initialization", choices=["data", "uniform"])
    ap.add_argument("--out", default=tempfile.mkdtemp(prefix="nbdec-"))
    args = ap.parse_args()
    full, dec = [], []
    for s in range(1, args.splits + 1):
        full += run(args.glassbox, with_overrides(args.not_dec, s, args.starts, args.initialization),
                    os.path.join(args.out, "not-dec-%d" % s))
        dec += run(args.glassbox, with_overrides(args.s_nb_dec, s, args.starts, args.initialization),
                   os.path.join(args.out, "s-nb-dec-%d" % s))
        print("split %d done" % s, file=sys.stderr)
    mean = statistics.mean
    t_full = mean(r["solve_seconds"] for r in full)
    a_full = mean(r["test_accuracy"] for r in full)
    print("dataset %s, %d splits x %d starts (every start counted, as the paper averages its runs),"
          " %s starts" % (full[0]["dataset"], args.splits, args.starts,
                          args.initialization or "the configs'"))
    print("not-DEC : test accuracy %.4f, %.3f s per start (median %.3f), objective %.4f"
          % (a_full, t_full, statistics.median(r["solve_seconds"] for r in full),
             mean(r["objective"] for r in full)))
    # Savings from means (as before) and from medians (robust to the noise of a shared
    # machine): 1 - median cumulative S-NB-DEC seconds / median not-DEC seconds per start.
    t_full_median = statistics.median(r["solve_seconds"] for r in full)
    print("S-NB-DEC: %6s %9s %10s %10s %8s %10s %8s" % ("macro", "test_acc", "objective", "seconds",
                                                      "saving", "median_s", "saving_m"))
    macros = len(dec[0]["decomposition"])
    for m in range(macros):
        at = [r["decomposition"][m] for r in dec]
        sec = mean(e["seconds"] for e in at)
        sec_median = statistics.median(e["seconds"] for e in at)
        print("          %6d %9.4f %10.4f %10.3f %7.1f%% %10.3f %7.1f%%"
              % (m, mean(e["test_accuracy"] for e in at), mean(e["objective"] for e in at),
                 sec, 100.0 * (1.0 - sec / t_full), sec_median,
                 100.0 * (1.0 - sec_median / t_full_median)))
    json.dump({"not_dec": full, "s_nb_dec": dec}, open(os.path.join(args.out, "all.json"), "w"))
    print("raw results: %s" % args.out)


if __name__ == "__main__":
    main()
