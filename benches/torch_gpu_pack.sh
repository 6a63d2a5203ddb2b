#!/usr/bin/env bash
# benches/torch_gpu.sh's checks for a GPU machine that has PyTorch but no Rust toolchain and
# no network (such as one whose image has torch 2.11.0 on CUDA 13). Here, it builds
# HEAD against that torch version's libtorch (the PyPI wheel, unpacked, no venv) with the
# matching `tch` (in a git worktree: main's Cargo.toml keeps its pin), and writes to DIR:
#   pack.tgz     the release binaries (glassbox, the torch tests, gradient_vs_ipopt,
#                torch_evaluation_cost), stripped, and the system libraries of IPOPT and CBC
#   datasets/    the data sets the checks read; iris_torch.toml, auto_large.toml
#   run.sh       the checks, run there with `OUT=folder bash DIR/run.sh`: libtorch comes from
#                that machine's own torch (`python3 -c "import torch"`); the steps' time
#                limits add up to 560 s (about 6 minutes expected)
# The steps of run.sh: 1. the tests comparing CUDA with the CPU (objective, gradient, Hessian,
# iris solves, `device = "auto"`); 2. one evaluation's cost by size on CUDA and on one CPU
# thread (where "auto" should switch); 3. "auto" on iris and on 1e5 rows; 4. issue 24's
# best-of-20 comparison with IPOPT on CUDA and on the CPU, side by side.
#
#   TORCH=2.11.0 TCH=0.24 CUDA=13.0 benches/torch_gpu_pack.sh DIR   # these are the defaults
#
# WORK (default target/torch_gpu_pack) keeps the wheel, the worktree and its build between
# runs: the first build takes about 25 minutes on 2 cores, later ones only what changed.
# DIR (about 25 MB) is what goes to the GPU machine.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:?usage: benches/torch_gpu_pack.sh DIR}"
torch="${TORCH:-2.11.0}"
tch="${TCH:-0.24}"
cuda="${CUDA:-13.0}"
work="$(mkdir -p "${WORK:-target/torch_gpu_pack}" && cd "${WORK:-target/torch_gpu_pack}" && pwd)"
head="$(git rev-parse HEAD)"

# libtorch and the two CUDA runtime libraries libtorch_cpu.so links (for the linker only).
wheel="$work/wheel"
if [ ! -f "$wheel/torch/lib/libtorch_cpu.so" ]; then
    mkdir -p "$wheel"
    python3 -m pip download -q --no-deps --only-binary=:all: -d "$wheel" "torch==$torch" \
        "nvidia-cuda-runtime==$cuda.*" "nvidia-cuda-cupti==$cuda.*"
    (cd "$wheel" && unzip -q -o 'torch-*.whl' 'torch/lib/*' 'torch/include/*' 'torch/share/*' &&
        for w in nvidia_*.whl; do unzip -q -o "$w"; done && rm -f ./*.whl)
fi
nvidia_libs=$(find "$wheel/nvidia" -type d -name lib | tr '\n' ':')
export LIBTORCH="$wheel/torch"
export LD_LIBRARY_PATH="$wheel/torch/lib:$nvidia_libs${LD_LIBRARY_PATH:-}"

# HEAD with the tch of that torch version.
src="$work/src"
[ -d "$src" ] || git worktree add -q --detach "$src" "$head"
git -C "$src" checkout -q -- Cargo.toml Cargo.lock
git -C "$src" checkout -q --detach "$head"
sed -i "s/^tch = \"[0-9.]*\"/tch = \"$tch\"/" "$src/Cargo.toml"
(cd "$src" && cargo build --release --quiet --features torch --bin glassbox \
    --example gradient_vs_ipopt --example torch_evaluation_cost)
test_binary=$(cd "$src" && cargo test --release -p glassbox --features glassbox/torch \
    --test torch_backend --no-run 2>&1 | sed -n 's/.*(\(.*deps\/torch_backend-[0-9a-f]*\)).*/\1/p')

# The binaries and the libraries they need that the GPU machine's image may lack.
stage="$work/stage"
rm -rf "$stage" && mkdir -p "$stage/bin" "$stage/lib"
release="$src/target/release"
cp "$release/glassbox" "$release/examples/gradient_vs_ipopt" \
    "$release/examples/torch_evaluation_cost" "$stage/bin/"
case "$test_binary" in /*) ;; *) test_binary="$src/$test_binary" ;; esac
cp "$test_binary" "$stage/bin/torch_backend"
strip "$stage"/bin/*
ipopt=$(ldconfig -p | sed -n 's/.*libipopt\.so[.0-9]* .*=> \(.*\)/\1/p' | head -1)
ipopt=${ipopt:-$(pkg-config --variable=libdir ipopt)/libipopt.so}
cp -L "$ipopt" "$stage/lib/"
system='linux-vdso|ld-linux|/libc\.so|/libm\.so|libgcc_s|libstdc\+\+|libpthread|libdl\.so|librt\.so'
{ ldd "$stage/bin/glassbox"; ldd "$stage/bin/torch_backend"; ldd "$ipopt"; } |
    sed -n 's/.*=> \(\/[^ ]*\) .*/\1/p' | grep -vE "$system|$wheel" | sort -u |
    while read -r library; do cp -nL "$library" "$stage/lib/"; done
strip --strip-unneeded "$stage"/lib/* 2>/dev/null || true
mkdir -p "$out/datasets"
tar czf "$out/pack.tgz" -C "$stage" bin lib
cp ../shared/datasets/iris.csv ../shared/datasets/boston_housing.csv "$out/datasets/"

# The binaries read ../shared/datasets beside the worktree they were built in.
data="$(dirname "$(cd "$src" && pwd -P)")/shared/datasets"
sed -e "s#^path = .*#path = \"$data/iris.csv\"#" -e 's/^repeats = 10/repeats = 1/' \
    -e 's/^raw = .*/raw = { device = "auto" }/' -e 's/^starts = 20/starts = 3/' \
    examples/sorct_iris_torch.toml > "$out/iris_torch.toml"
benches/sorrt_large_config.sh 100000 1 \
    "$(printf 'name = "torch"\ntime_limit = 60.0\nraw = { device = "auto" }')" \
    > "$out/auto_large.toml"
cat > "$out/run.sh" <<EOF
#!/usr/bin/env bash
# Written by benches/torch_gpu_pack.sh for $head (tch $tch, torch $torch).
cd "\$(dirname "\$0")"
out="\${OUT:-\$PWD/out}"
mkdir -p "\$out" /tmp/gpu_checks "$data"
tar xzf pack.tgz
cp datasets/* "$data/"
torch_dir=\${TORCH_DIR:-\$(python3 -c "import torch, os; print(os.path.dirname(torch.__file__))")}
site=\$(dirname "\$torch_dir")
nvidia=\$(ls -d "\$site"/nvidia/*/lib "\$site"/nvidia/*/*/lib 2>/dev/null | tr '\n' ':')
export LD_LIBRARY_PATH="\$torch_dir/lib:\$nvidia\$PWD/lib"
python3 -c "import torch; print('torch', torch.__version__)"
nvidia-smi -L
ldd bin/glassbox | grep "not found"
echo "=== 1. tests comparing CUDA with the CPU [\$SECONDS s]"
timeout 120 bin/torch_backend --test-threads 1 --nocapture asking_for_cuda \\
    tensor_objective_equals autograd_hessians on_the_gpu auto > "\$out/tests.txt" 2>&1
echo "rc \$?"
grep -E "^test |test result|CUDA|cpu .* cuda|panicked" "\$out/tests.txt"
echo "=== 2. one evaluation's cost by size [\$SECONDS s]"
timeout 120 bin/torch_evaluation_cost 20 2>&1 | tee "\$out/cost.txt"
echo "=== 3. device = auto on iris and on 1e5 rows [\$SECONDS s]"
bin/glassbox generate --rows 100000 --seed 1 --out /tmp/gpu_checks/train_100000.csv --force
bin/glassbox generate --rows 100000 --seed 1000 --out /tmp/gpu_checks/test.csv --force
cp iris_torch.toml auto_large.toml /tmp/gpu_checks/
for config in iris_torch auto_large; do
    timeout 60 bin/glassbox run /tmp/gpu_checks/\$config.toml --out /tmp/gpu_checks/\$config \\
        --force > "\$out/\$config.txt" 2>&1
    tail -2 "\$out/\$config.txt"
    grep -rhoE "libtorch on [A-Za-z]+(\([0-9]\))?" /tmp/gpu_checks/\$config | sort | uniq -c
done
echo "=== 4. best of 20 against IPOPT, CUDA and the CPU side by side [\$SECONDS s]"
timeout 200 bin/gradient_vs_ipopt 20 torch device=cpu > "\$out/gvi_cpu.txt" 2>&1 &
timeout 200 bin/gradient_vs_ipopt 20 torch device=cuda > "\$out/gvi_cuda.txt" 2>&1
wait
for device in cuda cpu; do
    echo "-- \$device: \$(grep -cE '^ +[0-9]+ ' "\$out/gvi_\$device.txt") solves"
    grep -E "best over|within 1% of IPOPT on" "\$out/gvi_\$device.txt"
done
echo "=== done [\$SECONDS s]"
EOF
chmod +x "$out/run.sh"
echo "torch_gpu_pack.sh: $out ($(du -sh "$out" | cut -f1)); there: OUT=folder bash $out/run.sh"
