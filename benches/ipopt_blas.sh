#!/usr/bin/env bash
# IPOPT on the system's BLAS against OpenBLAS: MUMPS, IPOPT's linear solver, does its dense
# work (the frontal matrices of the KKT factorization) in BLAS, and Debian's default libblas3
# is the unoptimized reference BLAS. For each cell (data set and depth) this runs S-ORCT's
# multistart (glassbox's defaults without the cross-validated choice: `cart_table.py`'s
# `objective` variant; one split, STARTS random starts, verbosity 2) twice, on the system's
# BLAS and on OpenBLAS, and prints per run IPOPT's own CPU seconds per iteration (its
# "Total CPU secs in IPOPT (w/o function evaluations)" over its iterations), the seconds in
# glassbox's evaluations, the iterations and the wall time.
#
#   benches/ipopt_blas.sh [GLASSBOX]             # default target/release/glassbox
#   CELLS="sonar:4 iris:2" STARTS=1 benches/ipopt_blas.sh
#
# OpenBLAS is not installed: Debian's libopenblas0-serial package is downloaded
# (`apt-get download`) and unpacked into WORK (default target/ipopt_blas), and a run reaches
# it through LD_LIBRARY_PATH (its folder holds libblas.so.3 and liblapack.so.3). The two
# runs of a cell take different paths (the rounding decides the basin a start reaches), so
# compare seconds per iteration, not totals.
set -euo pipefail
cd "$(dirname "$0")/.."
glassbox="$(realpath "${1:-target/release/glassbox}")"
read -r -a cells <<< "${CELLS:-sonar:4 pima:4 ionosphere:3 iris:2}"
starts="${STARTS:-3}"
work="$(mkdir -p "${WORK:-target/ipopt_blas}" && realpath "${WORK:-target/ipopt_blas}")"
[ -x "$glassbox" ] || { echo "ipopt_blas.sh: no glassbox binary at $glassbox" >&2; exit 1; }
openblas="$work/openblas/usr/lib/x86_64-linux-gnu/openblas-serial"
if [ ! -e "$openblas/libblas.so.3" ]; then
    (cd "$work" && apt-get download libopenblas0-serial > /dev/null 2>&1) ||
        { echo "ipopt_blas.sh: apt-get download libopenblas0-serial failed" >&2; exit 1; }
    dpkg -x "$work"/libopenblas0-serial_*.deb "$work/openblas"
fi
for cell in "${cells[@]}"; do
    dataset=${cell%%:*} depth=${cell##*:}
    python3 - "$dataset" "$depth" "$starts" "$work/cell.toml" <<'PY'
import sys
sys.path.insert(0, "experiments/quality")
import cart_table
dataset, depth, starts, path = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
text = cart_table.config("objective", dataset, depth, 1, starts)
# IPOPT's statistics (verbosity 2) are what this script reads: the [solver] table gets the key.
assert text.count("[solver]\n") == 1, "cart_table.config has no [solver] table"
open(path, "w").write(text.replace("[solver]\n", "[solver]\nverbosity = 2\n"))
PY
    for blas in system openblas; do
        library_path=""
        [ "$blas" = openblas ] && library_path="$openblas"
        start=$(date +%s%N)
        LD_LIBRARY_PATH="$library_path" "$glassbox" run "$work/cell.toml" --out "$work/run" \
            --force > "$work/log_${dataset}_${depth}_$blas.txt" 2>&1
        wall=$((($(date +%s%N) - start) / 1000000))
        awk -v cell="$dataset D=$depth" -v blas="$blas" -v wall="$wall" '
            /^Number of Iterations/ { iterations += $NF }
            /^Total CPU secs in IPOPT/ { ipopt += $NF }
            /^Total CPU secs in NLP function/ { evaluations += $NF }
            END { printf "%-16s %-8s iterations %6d  IPOPT %7.2f s (%6.2f ms an iteration)" \
                  "  evaluations %6.2f s  wall %7.1f s\n", cell, blas, iterations, ipopt,
                  1000 * ipopt / iterations, evaluations, wall / 1000 }' \
            "$work/log_${dataset}_${depth}_$blas.txt"
    done
done
