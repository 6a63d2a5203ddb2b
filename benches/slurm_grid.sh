#!/usr/bin/env bash
# The grid of examples/sorct_iris_grid.toml (17 x 17 cells x 2 splits x 20 warm-started
# starts, 11,560 IPOPT solves) in one process (`--jobs 1`) against the same grid as a SLURM job
# array of 2 tasks on the one-node cluster of scripts/slurm-cluster.sh (CPUs=2), timed in one
# run, alternating, R times (default 1). The SLURM time runs from the submission to the merge
# job's end (queueing, both tasks and the merge). Checks that the merged results equal the
# one process's apart from the timing fields. Prints one line per run (with the CPU seconds
# each used, and so how many cores it had on average: on a shared machine, what limits the
# ratio) and the ratio of medians.
#
#   benches/slurm_grid.sh [R]        (as root: the cluster's daemons run as root)
#
# Results: benches/README.md, "Experiment grids on SLURM".
set -euo pipefail
cd "$(dirname "$0")/.."
repeats=${1:-1}
config=examples/sorct_iris_grid.toml
cargo build --release --quiet
bin=$PWD/target/release/glassbox
work=$(mktemp -d /tmp/glassbox-slurm-bench.XXXXXX)
chmod 755 "$work" # munged (user munge) reaches its socket below it
cluster=$work/cluster
eval "$(scripts/slurm-cluster.sh start "$cluster" --watch $$)"
trap 'scripts/slurm-cluster.sh stop "$cluster" >/dev/null 2>&1 || true' EXIT

now() { date +%s.%N; }
# $1 - $2, $1 / $2 (awk: bc is not everywhere)
minus() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a - b }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

# Each prints "WALL CPU" (seconds; CPU = user + system of the glassbox processes).
one_process() {
  local out=$work/one-$1 t0 wall
  t0=$(now)
  /usr/bin/time -f "%U %S" -o "$work/time-$1" "$bin" run "$config" --out "$out" --jobs 1 >/dev/null
  wall=$(minus "$(now)" "$t0")
  echo "$wall $(awk '{ printf "%.1f", $1 + $2 }' "$work/time-$1")"
}

job_array() {
  local out=$work/array-$1 t0 ids
  t0=$(now)
  "$bin" run "$config" --out "$out" --executor slurm --shards 2 >/dev/null
  ids=$(python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); s=p["submissions"][-1]; print(s["array_job"]+","+s["merge_job"])' "$out/cluster.json")
  while [ -n "$(squeue --noheader --jobs="$ids" 2>/dev/null)" ]; do sleep 0.2; done
  local wall
  wall=$(minus "$(now)" "$t0")
  "$bin" status "$out" | grep -q "merge: done" || { "$bin" status "$out" >&2; exit 1; }
  # The tasks' own CPU seconds, from their attempt records.
  echo "$wall $(cat "$out"/tasks/*.jsonl | python3 -c 'import json,sys; print("%.1f" % sum(json.loads(l).get("cpu_seconds", 0) for l in sys.stdin))')"
}

same_results() {
  python3 - "$1/results.jsonl" "$2/results.jsonl" <<'EOF'
import json, sys
timed = {"solve_seconds", "backend_seconds", "lock_wait_seconds"}
def read(p):
    return [{k: v for k, v in json.loads(l).items() if k not in timed} for l in open(p)]
a, b = read(sys.argv[1]), read(sys.argv[2])
assert a == b, f"the merged results differ from the one process's ({len(a)} and {len(b)} lines)"
print(f"merged results equal the one process's apart from timings ({len(a)} lines)")
EOF
}

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
one=()
arr=()
for r in $(seq "$repeats"); do
  # Alternate the order, so that a change of the machine's load hits both alike.
  if [ $((r % 2)) -eq 1 ]; then
    a=$(one_process "$r"); b=$(job_array "$r")
  else
    b=$(job_array "$r"); a=$(one_process "$r")
  fi
  read -r aw ac <<<"$a"
  read -r bw bc <<<"$b"
  one+=("$aw"); arr+=("$bw")
  printf 'run %d: one process %.1f s (CPU %.1f s, %s cores), job array of 2 tasks %.1f s (CPU %.1f s, %s cores), ratio %s (load %s)\n' \
    "$r" "$aw" "$ac" "$(ratio "$ac" "$aw")" "$bw" "$bc" "$(ratio "$bc" "$bw")" "$(ratio "$aw" "$bw")" \
    "$(cut -d' ' -f1-3 /proc/loadavg)"
  same_results "$work/one-$r" "$work/array-$r"
done
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }
ma=$(median "${one[@]}"); mb=$(median "${arr[@]}")
printf 'median: one process %.1f s, job array %.1f s, wall-time ratio %s\n' "$ma" "$mb" "$(ratio "$ma" "$mb")"
rm -rf "$work/one-"* "$work/array-"*
