#!/usr/bin/env bash
# Prints the S-ORRT config of the S-ORRT paper's scalability study (section 4.4) that
# benches/sorrt_large.sh and benches/torch_gpu.sh run: depth 1, gamma 512, no sparsity
# penalties, starts drawn on x1 and x2, the training rows train_ROWS.csv and the test rows
# test.csv beside the config, one split, STARTS starts of seed 1, and the [solver] table's
# lines given as the third argument.
#   benches/sorrt_large_config.sh ROWS STARTS SOLVER_LINES > sorrt.toml
set -euo pipefail
rows="$1"
starts="$2"
solver="$3"
cat <<TOML
# Written by benches/sorrt_large_config.sh.
[data]
path = "train_$rows.csv"
test_path = "test.csv"

[split]
repeats = 1
seed = 1

[formulation]
name = "sorrt"
depth = 1
start_features = ["x1", "x2"]
gamma = 512.0
lambda_local = 0.0
lambda_global = 0.0

[solver]
$solver

[multistart]
starts = $starts
seed = 1
TOML
