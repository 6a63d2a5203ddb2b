#!/usr/bin/env bash
# OGRS against the thesis' baseline (one log-loss stump per feature, then ORS) on the
# continuous data sets of the thesis' Table 4.2 that ../shared/datasets holds (heart failure
# is not there), 80/20 stratified splits, tangents V3, A = {-5..5}, HiGHS.
#
#   experiments/risk_scores/compare.sh [OUT]      (from the repository root)
#
# Environment: RULES (default 3), TIME_LIMIT seconds of the main solve (default 30; each
# of the T warm-start steps gets TIME_LIMIT / 2T), REPEATS splits (default 2), DATASETS
# (default: all nine), GLASSBOX (default target/debug/glassbox). Prints one line per data set
# and method (mean test AUC over the splits) and writes OUT/<dataset>-<method>/results.jsonl.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$root/out/risk_scores}
rules=${RULES:-3}
limit=${TIME_LIMIT:-30}
repeats=${REPEATS:-2}
glassbox=${GLASSBOX:-$root/target/debug/glassbox}
datasets=${DATASETS:-"breast_cancer_wisconsin pima heart_cleveland ionosphere parkinsons sonar spectf wholesale haberman"}
mkdir -p "$out"
for d in $datasets; do
  for method in ogrs stump_ors; do
    case $method in
      ogrs) formulation='name = "ogrs"' ;;
      stump_ors) formulation=$'name = "ors"\nbinarize = "stump"' ;;
    esac
    config=$out/$d-$method.toml
    cat > "$config" <<TOML
[data]
path = "$root/../shared/datasets/$d.csv"
drop_missing = true

[split]
test_fraction = 0.2
repeats = $repeats
seed = 1

[formulation]
$formulation
rules = $rules
tangents = "V3"

[solver]
name = "highs"
time_limit = $limit
threads = 1
TOML
    "$glassbox" run "$config" --out "$out/$d-$method" --force > "$out/$d-$method.txt"
  done
done
python3 - "$out" $datasets <<'PY'
import json, sys, statistics as st
out, datasets = sys.argv[1], sys.argv[2:]
print(f"{'dataset':<24} {'OGRS test AUC':>14} {'stump+ORS':>10} {'OGRS train':>11} {'stump train':>11} {'OGRS gap':>9} {'ORS gap':>8}")
wins = 0
for d in datasets:
    rows = {}
    for m in ("ogrs", "stump_ors"):
        recs = [json.loads(l) for l in open(f"{out}/{d}-{m}/results.jsonl")]
        rows[m] = recs
    mean = lambda m, k: st.mean(r.get(k) if r.get(k) is not None else float("nan") for r in rows[m])
    a, b = mean("ogrs", "test_auc"), mean("stump_ors", "test_auc")
    wins += a > b
    print(f"{d:<24} {a:>14.4f} {b:>10.4f} {mean('ogrs','train_auc'):>11.4f} {mean('stump_ors','train_auc'):>11.4f} {mean('ogrs','mip_gap'):>9.3f} {mean('stump_ors','mip_gap'):>8.3f}")
print(f"OGRS has the higher mean test AUC on {wins} of {len(datasets)} data sets")
PY
