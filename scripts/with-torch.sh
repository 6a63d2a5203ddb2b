#!/usr/bin/env bash
# Runs its arguments with libtorch available for the `torch` cargo feature (the `tch` crate):
# installs the PyPI `torch` wheel that `tch` 0.26 requires (2.13.0, about 4.7 GB with the
# nvidia CUDA runtime wheels libtorch links) into .venv-torch when it is missing, then
# exports what torch-sys's build script and the dynamic linker need:
#   VIRTUAL_ENV, PATH          the venv's `python` first (torch-sys runs it to find libtorch)
#   LIBTORCH_USE_PYTORCH=1     take libtorch from the installed `torch` package
#   LD_LIBRARY_PATH            torch/lib and every nvidia/*/lib of the venv
# Example: scripts/with-torch.sh cargo test --features torch --test torch_backend
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${GLASSBOX_TORCH_VENV:-$root/.venv-torch}"
torch_version="2.13.0"
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import torch" >/dev/null 2>&1; then
    echo "with-torch.sh: installing torch==$torch_version into $venv" >&2
    python3 -m venv "$venv"
    "$venv/bin/pip" install "torch==$torch_version"
fi
site="$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
export VIRTUAL_ENV="$venv"
export PATH="$venv/bin:$PATH"
export LIBTORCH_USE_PYTORCH=1
libs="$site/torch/lib"
for d in "$site"/nvidia/*/lib "$site"/nvidia/*/*/lib; do
    [ -d "$d" ] && libs="$libs:$d"
done
export LD_LIBRARY_PATH="$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
exec "$@"
