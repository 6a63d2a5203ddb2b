#!/usr/bin/env bash
# The tests: installs what is missing, checks formatting and lints, and runs every test
# (unit, derivative checks, the solver conformance suite, end-to-end runs on ../shared data).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cargo fmt --all -- --check
cargo clippy --all-targets --quiet -- -D warnings
cargo test --all-targets
