#!/usr/bin/env bash
# The demo: installs what is missing, builds glassbox, and fits S-ORCT (depth 2, IPOPT,
# 10 starts x 5 splits) on a seeded synthetic data set that glassbox generates itself.
# Results go to out/demo/ (results.jsonl, models/); the fitted tree of split 0 is printed.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cargo build --release --quiet
./target/release/glassbox run examples/demo.toml --out out/demo --force
./target/release/glassbox show out/demo/models/split-0.json
