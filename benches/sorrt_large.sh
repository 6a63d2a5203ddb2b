#!/usr/bin/env bash
# S-ORRT's scalability study (the paper's Section 4.4) on this machine, with the gradient
# backend "lbfgs": for each N (default 10^5 and 10^6) it generates the paper's synthetic
# training data (`glassbox generate`, seed 1) and one test set of 10^5 rows (seed 1000),
# fits S-ORRT of depth 1 (lambda_L = lambda_G = 0, gamma 512) from STARTS data-aware starts
# (`glassbox run`, release build, best training objective selected), and compares its test
# MSE with CART fitted by scikit-learn on the same training rows (benches/sorrt_large.py).
# It prints the wall time of every step and one summary line per N.
#
# As the paper, the starts come from the features of high random-forest importance, X1 and
# X2 (the paper's first step: "the predictor variables with low RF variable importance,
# namely X_j, j = 3, ..., 25, do not play a role"): `start_features = ["x1", "x2"]` draws
# the starts' split directions on them; the solve then frees all 25. Like the paper, which
# times S-ORRT until it is 30% better than CART, each solve has a wall-clock budget
# (TIME_LIMIT seconds, default 30): the projected L-BFGS of "lbfgs" has not converged
# then (see benches/README.md), and the MSE it has reached is what is reported.
#
#   benches/sorrt_large.sh                          # N = 1e5 and 1e6, 1 start, 30 s
#   SIZES="100000" TIME_LIMIT=20 benches/sorrt_large.sh
#
# Needs .venv (numpy, scikit-learn) and about 0.5 GB of disk per 10^6 rows (WORK, default
# target/sorrt_large). The release build leaves out HiGHS (not used here) so that it does
# not rebuild HiGHS from source; set FEATURES to change that.
set -euo pipefail
cd "$(dirname "$0")/.."
read -r -a sizes <<< "${SIZES:-100000 1000000}"
starts="${STARTS:-1}"
time_limit="${TIME_LIMIT:-30}"
work="${WORK:-target/sorrt_large}"
read -r -a features <<< "${FEATURES:---no-default-features --features ipopt,cbc}"
python="${PYTHON:-.venv/bin/python}"

cargo build --release --quiet "${features[@]}"
bin=target/release/glassbox
mkdir -p "$work"
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }

t=$(now)
"$bin" generate --rows 100000 --seed 1000 --out "$work/test.csv" --force >/dev/null
echo "generate test.csv (1e5 rows): $(since "$t") s"
for n in "${sizes[@]}"; do
    t=$(now)
    "$bin" generate --rows "$n" --seed 1 --out "$work/train_$n.csv" --force >/dev/null
    echo "N=$n: generate: $(since "$t") s"
    benches/sorrt_large_config.sh "$n" "$starts" \
        "$(printf 'name = "lbfgs"\ntime_limit = %s' "$time_limit")" > "$work/sorrt_$n.toml"
    t=$(now)
    "$bin" run "$work/sorrt_$n.toml" --out "$work/out_$n" --force > "$work/run_$n.txt"
    wall=$(since "$t")
    echo "N=$n: glassbox run (load, scale, $starts starts, metrics): $wall s"
    "$python" benches/sorrt_large.py --rows "$n" --wall "$wall" \
        --results "$work/out_$n/results.jsonl" --train "$work/train_$n.csv" --test "$work/test.csv"
done
