#!/usr/bin/env bash
# The Python package's tests (python/tests): a virtual environment in .venv-python with the
# package's test requirements (numpy, pandas, scikit-learn, pytest, pytest-xdist, maturin),
# the extension built in the debug profile into it (`maturin develop`, sharing the
# workspace's target folder, so the glassbox crates `cargo test` built are not compiled
# again), then pytest.
# Run by scripts/test.sh; on its own after `cargo build` (the CLI tests run the glassbox
# binary of the same target folder).
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${GLASSBOX_PYTHON_VENV:-$PWD/.venv-python}"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install -q --disable-pip-version-check \
  "maturin>=1.5,<2" pytest pytest-xdist numpy pandas scikit-learn
(cd python && VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH" maturin develop -q)
cd python
# CI checks every estimator with scikit-learn's checks (about 930, 2 minutes here); a local
# run checks one estimator per kind of problem unless GLASSBOX_SKLEARN_CHECKS=all
# (python/tests/test_sklearn_checks.py).
if [ "${CI:-}" = true ]; then
  export GLASSBOX_SKLEARN_CHECKS="${GLASSBOX_SKLEARN_CHECKS:-all}"
fi
# Two test processes (pytest-xdist): one left a core idle (118% of a core; 149 s against 83 s
# with two here). GLASSBOX_TEST_JOBS sets how many, as for the Rust tests.
"$venv/bin/python" -m pytest tests -q -p no:cacheprovider -n "${GLASSBOX_TEST_JOBS:-2}" "$@"
