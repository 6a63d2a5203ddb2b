#!/usr/bin/env bash
# The torch backend on a machine with a CUDA GPU, the GPU against the CPU on the same machine:
#  1. the torch tests that compare CUDA with the CPU (objective, gradient and Hessian of
#     S-ORCT and S-ORRT; iris solves; libtorch_cuda.so opened): they check the CPU alone
#     on a machine without a GPU;
#  2. one evaluation's cost (objective and gradient) on CUDA and on one CPU thread by data
#     size (`examples/torch_evaluation_cost.rs`), where `device = "auto"` switches;
#  3. issue 24's best-of-20 comparison with IPOPT (`examples/gradient_vs_ipopt.rs`) with
#     `device = "cuda"` and `device = "cpu"`;
#  4. S-ORRT D=1 on the S-ORRT paper's section 4.4 data (1e5 rows and more, as
#     benches/sorrt_large.sh) on cuda, on one CPU thread and on every core.
# Each step has a wall-clock limit (LIMIT seconds, default 200; what ran comes out).
#
#   benches/torch_gpu.sh                      # SIZES="100000 1000000"
#   SIZES=100000 LIMIT=120 benches/torch_gpu.sh
#
# Builds through scripts/with-torch.sh (torch 2.13.0 for tch 0.26). A machine whose torch is
# another version needs the matching tch in Cargo.toml (benches/README.md, "The torch
# backend on a GPU"). Writes to WORK (default target/torch_gpu). The S-ORRT config is
# benches/sorrt_large_config.sh's.
set -uo pipefail
cd "$(dirname "$0")/.."
read -r -a sizes <<< "${SIZES:-100000 1000000}"
limit="${LIMIT:-200}"
work="${WORK:-target/torch_gpu}"
with_torch=scripts/with-torch.sh
mkdir -p "$work"
"$with_torch" nvidia-smi -L || echo "torch_gpu.sh: nvidia-smi failed: no GPU driver here?" >&2

tests=(cargo test --release -p glassbox --features glassbox/torch --test torch_backend)
"$with_torch" "${tests[@]}" --quiet --no-run || exit 1
"$with_torch" cargo build --release --quiet --features torch \
    --example gradient_vs_ipopt --example torch_evaluation_cost --bin glassbox || exit 1
echo "=== 1. tests comparing CUDA with the CPU"
"$with_torch" timeout "$limit" "${tests[@]}" -- --test-threads 1 --nocapture \
    asking_for_cuda tensor_objective_equals autograd_hessians on_the_gpu auto 2>&1 |
    grep -E "^test |test result|CUDA|cpu .* cuda"
echo "=== 2. one evaluation's cost by size"
"$with_torch" timeout "$limit" target/release/examples/torch_evaluation_cost 20
for device in cuda cpu; do
    echo "=== 3. gradient_vs_ipopt 20 torch device=$device"
    /usr/bin/time -f "wall %e s" "$with_torch" timeout "$limit" \
        target/release/examples/gradient_vs_ipopt 20 torch "device=$device" \
        > "$work/gvi_$device.txt" 2>&1
    grep -E "best over|^wall" "$work/gvi_$device.txt" || tail -3 "$work/gvi_$device.txt"
done

bin=target/release/glassbox
"$with_torch" "$bin" generate --rows 100000 --seed 1000 --out "$work/test.csv" --force > /dev/null
for n in "${sizes[@]}"; do
    "$with_torch" "$bin" generate --rows "$n" --seed 1 --out "$work/train_$n.csv" --force \
        > /dev/null
    for variant in cuda cpu1 "cpu$(nproc)"; do
        device=${variant%%[0-9]*}
        threads=${variant#cpu}
        [ "$device" = cuda ] && threads=1
        solver=$(printf 'name = "torch"\ntime_limit = 60.0\nthreads = %s\nraw = { device = "%s" }' \
            "$threads" "$device")
        benches/sorrt_large_config.sh "$n" 1 "$solver" > "$work/sorrt_${n}_$variant.toml"
        echo "=== 4. S-ORRT D=1, N=$n, $variant"
        /usr/bin/time -f "wall %e s" "$with_torch" timeout "$limit" "$bin" run \
            "$work/sorrt_${n}_$variant.toml" --out "$work/out_${n}_$variant" --force \
            > "$work/sorrt_${n}_$variant.txt" 2>&1
        tail -4 "$work/sorrt_${n}_$variant.txt"
    done
done
