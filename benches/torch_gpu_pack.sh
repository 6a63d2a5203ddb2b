#!/usr/bin/env bash
# benches/torch_gpu.sh's checks for a GPU machine that has PyTorch but no Rust toolchain and
# no network (such as one whose image has torch 2.11.0 on CUDA 13). Here, it builds
# HEAD against that torch version's libtorch (the PyPI wheel, unpacked, no venv) with the
# matching `tch` (in a git worktree: main's Cargo.toml keeps its pin), and writes to DIR:
#   pack.tgz     the release binaries (glassbox, the torch tests, gradient_vs_ipopt,
#                torch_evaluation_cost), stripped, and the system libraries of IPOPT and CBC
#   datasets/    the data sets the checks read; iris_torch.toml, auto_large.toml
#   run.sh       benches/torch_gpu_run.sh, the checks, run there with
#                `OUT=folder bash DIR/run.sh` (its comment lists the steps and their limits);
#                datasets_dir and built_from, read by it
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
work="${WORK:-target/torch_gpu_pack}"
mkdir -p "$work" && work="$(cd "$work" && pwd)"
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
# The worktree is this script's own: its local changes (the tch pin) are discarded.
git -C "$src" checkout -q --force --detach "$head"
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

# The binaries read ../shared/datasets beside the worktree they were built in, by that path
# as it is (run.sh creates the worktree's folder there too, for the `..` to resolve).
data="$(cd "$src" && pwd -P)/../shared/datasets"
sed -e "s#^path = .*#path = \"$data/iris.csv\"#" -e 's/^repeats = 10/repeats = 1/' \
    -e 's/^raw = .*/raw = { device = "auto" }/' -e 's/^starts = 20/starts = 3/' \
    examples/sorct_iris_torch.toml > "$out/iris_torch.toml"
benches/sorrt_large_config.sh 100000 1 \
    "$(printf 'name = "torch"\ntime_limit = 60.0\nraw = { device = "auto" }')" \
    > "$out/auto_large.toml"
echo "$data" > "$out/datasets_dir"
echo "built from $head (tch $tch, torch $torch) by benches/torch_gpu_pack.sh" > "$out/built_from"
cp benches/torch_gpu_run.sh "$out/run.sh"
echo "torch_gpu_pack.sh: $out ($(du -sh "$out" | cut -f1)); there: OUT=folder bash $out/run.sh"
