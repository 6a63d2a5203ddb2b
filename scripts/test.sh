#!/usr/bin/env bash
# The tests: installs what is missing, checks formatting and lints, and runs every test
# (unit, derivative checks, the solver conformance suites, end-to-end runs on ../shared data),
# then the `torch` backend's: scripts/with-torch.sh installs libtorch (the PyPI `torch` wheel,
# about 4.7 GB) into .venv-torch the first time. GLASSBOX_SKIP_TORCH=1 skips that part.
# tests/slurm.rs starts a one-node SLURM on this machine (scripts/slurm-cluster.sh: as root, it
# installs Debian's slurm-wlm and munge when missing) and runs the SLURM executor on it; where
# SLURM cannot be started, those tests print why and pass, except in CI (CI=true) or with
# GLASSBOX_REQUIRE_SLURM=1, where they fail with the reason.
set -euo pipefail
cd "$(dirname "$0")/.."
# Each step's start, in seconds since this script began, on standard error: where a CI run's
# time goes (it must stay under 45 minutes from a fresh clone) is read from its log.
step() { echo "test.sh: [${SECONDS} s] $*" >&2; }
step "system packages"
scripts/install-deps.sh
torch_pid=""
if [ "${GLASSBOX_SKIP_TORCH:-0}" != 1 ]; then
  # libtorch (the PyPI wheel, 4.7 GB the first time) downloads while the builds below use
  # the cores; its output goes to target/torch-install.log and is shown if it fails.
  mkdir -p target
  scripts/with-torch.sh true > target/torch-install.log 2>&1 &
  torch_pid=$!
fi
step "fmt, clippy, docs"
cargo fmt --all -- --check
# The workspace: the core (src/core), the formulations, the backends and the glassbox crate.
cargo clippy --workspace --all-targets --quiet -- -D warnings
# The API docs: a link rustdoc cannot resolve (or one to a private item) is an error, so the
# docs a newcomer reads keep up with the code. Reuses clippy's dependency builds.
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --quiet
# The tests: built, then run two test binaries at a time (scripts/cargo-test-parallel.sh:
# one at a time left a core idle). GLASSBOX_TEST_JOBS sets how many.
step "cargo test (default features): build"
cargo test --workspace --all-targets --no-run
step "cargo test (default features): run"
scripts/cargo-test-parallel.sh --workspace --all-targets
step "Python package"
# The Python package (python/): its extension built on the same target folder, then pytest.
scripts/test-python.sh
step "results files"
# Issue 24's quality tables regenerated from the results files kept in the repository, rows
# checked against the numbers benches/README quotes (the interpreter above has numpy).
"${GLASSBOX_PYTHON_VENV:-$PWD/.venv-python}/bin/python" experiments/quality/check_results.py

# The extension crate (examples/extension): a crate of its own that adds a formulation and a
# backend from outside and runs glassbox's conformance suites on them. It shares target/.
step "extension crate"
extension=(--manifest-path examples/extension/Cargo.toml)
cargo fmt "${extension[@]}" -- --check
cargo clippy "${extension[@]}" --target-dir target --all-targets --quiet -- -D warnings
cargo test "${extension[@]}" --target-dir target

if [ "${GLASSBOX_SKIP_TORCH:-0}" != 1 ]; then
  # The default backends and torch: with the feature pins of src/core/Cargo.toml and
  # solvers/Cargo.toml this build reuses the default build's dependencies, HiGHS included,
  # and compiles only the glassbox crates (and tch) again.
  step "torch feature: libtorch (installed in the background since the start)"
  wait "$torch_pid" || { cat target/torch-install.log >&2; exit 1; }
  step "torch feature: clippy"
  torch_features=(--features glassbox/torch)
  scripts/with-torch.sh cargo clippy --workspace "${torch_features[@]}" --all-targets --quiet \
    -- -D warnings
  # The tests that need libtorch (the torch backend, the contextual trees' fit). No unit test
  # is behind the feature (the tensor objectives are tested through the backend), and clippy
  # above has type-checked every target with it.
  # One binary at a time: libtorch's own threads take every core (two at a time took 510 s
  # against 474 s, two fresh-clone runs of this script).
  step "torch feature: tests"
  scripts/with-torch.sh cargo test -p glassbox "${torch_features[@]}" --test torch_backend \
    --test conformance_nlp --test contextual_trees --test gradient_best_of_starts
fi
step "done"
