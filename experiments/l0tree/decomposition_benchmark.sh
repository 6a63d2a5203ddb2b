#!/usr/bin/env bash
# Issue 4's S-NB-DEC benchmark in one run: Car and Thyroid, S-NB-DEC against not-DEC on the
# same splits and starts (compare_decomposition.py), from glassbox's data-aware starts and
# from the paper's uniform random starts.
#
# usage: experiments/l0tree/decomposition_benchmark.sh [SPLITS [STARTS [OUT]]]
#   defaults: 5 splits (the paper's 5 outer folds) x 30 starts, OUT = out/decomposition
# Builds the release binary first; writes OUT/<data>-<starts>.txt and the raw results beside.
set -euo pipefail
cd "$(dirname "$0")/../.."
splits=${1:-5}
starts=${2:-30}
out=${3:-out/decomposition}
cargo build --release --quiet
mkdir -p "$out"
for data in car thyroid; do
    for init in data uniform; do
        echo "== $data, $init starts, $splits splits x $starts starts ($(date -u +%H:%M:%S) UTC, load $(cut -d' ' -f1-3 /proc/loadavg))"
        python3 experiments/l0tree/compare_decomposition.py target/release/glassbox \
            "experiments/l0tree/${data}_not_dec.toml" "experiments/l0tree/${data}_s_nb_dec.toml" \
            --splits "$splits" --starts "$starts" --initialization "$init" \
            --out "$out/$data-$init" | tee "$out/$data-$init.txt"
    done
done
