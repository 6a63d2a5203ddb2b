#!/usr/bin/env bash
# The GPU checks that benches/torch_gpu_pack.sh packs, run on the GPU machine from the packed
# folder (the pack copies this file there as run.sh): `OUT=folder bash DIR/run.sh`. libtorch
# comes from that machine's own torch (`python3 -c "import torch"`, or TORCH_DIR); the
# binaries from pack.tgz; the data sets go where the binaries read them (the path in
# datasets_dir, ../shared/datasets beside the worktree they were built in).
#   OUT=folder bash DIR/run.sh [STEP...]     # steps 1 2 3 4 by default
# Steps 1-4's time limits add up to 560 s (about 5 minutes on an H200), step 5's to 420 s
# (about 4.5 minutes), each under the device tool's 600 s a command:
#  1. the tests comparing CUDA with the CPU (objective, gradient, Hessian, iris solves, auto);
#  2. one evaluation's cost by size, float64 and float32, on CUDA and on one CPU thread;
#  3. `device = "auto"` on iris and on 1e5 rows (which device each solve ran on);
#  4. issue 24's best-of-20 comparison with IPOPT, on CUDA and on the CPU side by side;
#  5. one start's solves by size, on CUDA and on the CPU (the crossover per solve, behind
#     CUDA_MIN_EVALUATION_SIZE in solvers/torch.rs);
#  6. step 4 on CUDA alone, float64 and float32 side by side, with time for Boston's 20
#     starts (step 4's 200 s end during them): `run.sh 6`, 480 s.
set -uo pipefail
cd "$(dirname "$0")"
steps=" ${*:-1 2 3 4} "
wants() { [[ "$steps" == *" $1 "* ]]; }
out="${OUT:-$PWD/out}"
data="$(cat datasets_dir)"
scratch=/tmp/gpu_checks
mkdir -p "$out" "$scratch" "$data"
tar xzf pack.tgz
cp datasets/* "$data/"
torch_dir=${TORCH_DIR:-$(python3 -c "import torch, os; print(os.path.dirname(torch.__file__))")}
site=$(dirname "$torch_dir")
nvidia=$(ls -d "$site"/nvidia/*/lib "$site"/nvidia/*/*/lib 2>/dev/null | tr '\n' ':')
export LD_LIBRARY_PATH="$torch_dir/lib:$nvidia$PWD/lib"
cat built_from
python3 -c "import torch; print('torch here:', torch.__version__)" 2>/dev/null
nvidia-smi -L
ldd bin/glassbox | grep "not found"

if wants 1; then
    echo "=== 1. tests comparing CUDA with the CPU [$SECONDS s]"
    timeout 120 bin/torch_backend --test-threads 1 --nocapture asking_for_cuda \
        tensor_objective_equals autograd_hessians on_the_gpu auto > "$out/tests.txt" 2>&1
    echo "rc $?"
    grep -E "^test |test result|CUDA|cpu .* cuda|panicked" "$out/tests.txt"
fi
if wants 2; then
    echo "=== 2. one evaluation's cost by size [$SECONDS s]"
    timeout 120 bin/torch_evaluation_cost 20 2>&1 | tee "$out/cost.txt"
fi
if wants 3; then
    echo "=== 3. device = auto on iris and on 1e5 rows [$SECONDS s]"
    bin/glassbox generate --rows 100000 --seed 1 --out "$scratch/train_100000.csv" --force
    bin/glassbox generate --rows 100000 --seed 1000 --out "$scratch/test.csv" --force
    cp iris_torch.toml auto_large.toml "$scratch/"
    for config in iris_torch auto_large; do
        timeout 60 bin/glassbox run "$scratch/$config.toml" --out "$scratch/$config" --force \
            > "$out/$config.txt" 2>&1
        tail -2 "$out/$config.txt"
        grep -rhoE "libtorch on [A-Za-z]+(\([0-9]\))?" "$scratch/$config" | sort | uniq -c
    done
fi
# Issue 24's best of 20 (`gradient_vs_ipopt 20 torch RAW...`) with a time limit, into
# $out/gvi_NAME.txt: best_of_20 NAME SECONDS RAW...; then best_of_20_report NAME...
best_of_20() {
    local name=$1 limit=$2
    shift 2
    timeout "$limit" bin/gradient_vs_ipopt 20 torch "$@" > "$out/gvi_$name.txt" 2>&1
}
best_of_20_report() {
    for name in "$@"; do
        echo "-- $name: $(grep -cE '^ +[0-9]+ ' "$out/gvi_$name.txt") solves"
        grep -E "best over|within 1% of IPOPT on" "$out/gvi_$name.txt"
    done
}
if wants 4; then
    echo "=== 4. best of 20 against IPOPT, CUDA and the CPU side by side [$SECONDS s]"
    best_of_20 cpu 200 device=cpu &
    best_of_20 cuda 200 device=cuda
    wait
    best_of_20_report cuda cpu
fi
if wants 5; then
    echo "=== 5. one start's solves by size, CUDA against the CPU [$SECONDS s]"
    # S-ORRT on generated data (25 features): evaluation size rows x 25 x 3 at D=1, x 7 at D=2.
    bin/glassbox generate --rows 20000 --seed 1000 --out "$scratch/test.csv" --force > /dev/null
    for rows in 3000 10000 30000; do
        bin/glassbox generate --rows $rows --seed 1 --out "$scratch/train_$rows.csv" --force \
            > /dev/null
        for depth in 1 2; do
            for device in cpu cuda; do
                sed -e "s/train_100000/train_$rows/" -e "s/^depth = 1/depth = $depth/" \
                    -e "s/\"auto\"/\"$device\"/" -e "s/^time_limit = .*/time_limit = 30.0/" \
                    auto_large.toml > "$scratch/by_size.toml"
                start=$(date +%s%N)
                timeout 35 bin/glassbox run "$scratch/by_size.toml" --out "$scratch/by_size" \
                    --force > "$scratch/by_size.txt" 2>&1
                ms=$((($(date +%s%N) - start) / 1000000))
                echo "rows $rows, D=$depth, $device: wall $ms ms;" \
                    "$(grep -E 'solves: mean' "$scratch/by_size.txt")"
            done
        done
    done | tee "$out/by_size.txt"
fi
if wants 6; then
    echo "=== 6. best of 20 against IPOPT on CUDA, float64 and float32 [$SECONDS s]"
    best_of_20 cuda64 480 device=cuda &
    best_of_20 cuda32 480 device=cuda dtype=float32
    wait
    best_of_20_report cuda64 cuda32
fi
echo "=== done [$SECONDS s]"
