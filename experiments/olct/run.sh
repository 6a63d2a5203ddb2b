#!/usr/bin/env bash
# The OLCT table (thesis section 3.2, "OLCTs Performance Evaluation"): OLCT depth 2 with the
# tangent set V0 (loss_tree, loss = "logloss", greedy logistic start, refinement of the last
# layer) against CART of depth 2, on the thesis' ten binary data sets that
# ../shared/datasets holds, 80/20 stratified splits, mean test balanced accuracy.
#
#   experiments/olct/run.sh [OUT]        (from the repository root; then summarize.py OUT)
#
# Splits run split-major (every data set's split 0, then every split 1, ...), so a run cut
# short still has the same splits for every data set. Environment: TIME_LIMIT seconds per
# MILP (default 300, the thesis'), REPEATS splits (default 5), LAMBDA (default 1.0, the l1
# weight: the thesis tunes C = 1/lambda over 10^-2..10^2 by 4-fold cross-validation; we fix
# the grid's middle), SOLVER (highs), DATASETS, GLASSBOX (default target/debug/glassbox: the
# MILP and NLP time is spent in HiGHS / IPOPT, which are optimized in every profile).
# Writes OUT/<dataset>-<method>-split<r>/results.jsonl and the configs beside them.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$root/out/olct}
limit=${TIME_LIMIT:-300}
repeats=${REPEATS:-5}
lambda=${LAMBDA:-1.0}
solver=${SOLVER:-highs}
glassbox=${GLASSBOX:-$root/target/debug/glassbox}
datasets=${DATASETS:-"breast_cancer_wisconsin climate haberman heart_cleveland ionosphere parkinsons sonar spectf tic_tac_toe wholesale"}
mkdir -p "$out"
for r in $(seq 0 $((repeats - 1))); do
  for d in $datasets; do
    for method in cart olct; do
      case $method in
        cart) formulation=$'name = "cart"\ncriterion = "gini"\ndepth = 2'
              solver_table="" ;;
        olct) formulation=$'name = "loss_tree"\nloss = "logloss"\ntangents = "V0"\ndepth = 2\n'"lambda = $lambda"
              solver_table=$'[solver]\n'"name = \"$solver\""$'\n'"time_limit = $limit"$'\nthreads = 1' ;;
      esac
      run=$out/$d-$method-split$r
      [ -f "$run/results.jsonl" ] && continue
      config=$out/$d-$method-split$r.toml
      cat > "$config" <<TOML
[data]
path = "$root/../shared/datasets/$d.csv"
drop_missing = true

[split]
test_fraction = 0.2
repeats = 1
seed = $((1 + r))

[formulation]
$formulation

$solver_table
TOML
      echo "$(date -u +%H:%M:%S) $d $method split $r" >&2
      "$glassbox" run "$config" --out "$run" --force > "$run.log" 2>&1 || echo "  failed: see $run.log" >&2
    done
  done
done
