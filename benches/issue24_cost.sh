#!/usr/bin/env bash
# Issue 24's cost clause: S-ORCT's time per split with glassbox's defaults beside the default
# on the day the issue was filed (the paper's setting: gamma 512 fixed, random starts only,
# the best objective), measured in one run, cell by cell, every variant of a cell one after
# the other so that they share the machine's load:
#
#   old       OLD_BIN's default (the binary of the issue's day, main at f971632)
#   paper     NEW_BIN with the paper's setting (`cart_table.py`'s `paper`)
#   default   NEW_BIN's defaults (`cart_table.py`'s `default`)
#   paper_keep, default_keep   the same two with GLASSBOX_IPOPT_OVERHEADS=keep: Ipopt and
#             MUMPS as shipped (solvers/ipopt/overheads.rs), the seconds before that change
#
# Usage: benches/issue24_cost.sh OLD_BIN NEW_BIN OUT [DATASET:DEPTH ...]
#   (default cells: the seven of benches/README "The cost against the paper's setting")
# then:  python3 experiments/quality/cart_table.py cost --out OUT/all \
#            --variants old,paper_keep,paper,default_keep,default
#
# OLD_BIN: git worktree add /tmp/old24 f971632 && (cd /tmp/old24 && cargo build --release)
# Each variant's results stay in OUT/<variant>/<variant's cart_table name>/; OUT/all links
# them under one name each for `cart_table.py cost` and `table`. Resumable: a finished cell
# is skipped (cart_table.py's own resume).
set -euo pipefail
if [ $# -lt 3 ]; then
  sed -n '2,22p' "$0" >&2
  exit 2
fi
old_bin=$1 new_bin=$2 out=$3
shift 3
cells=("$@")
[ ${#cells[@]} -gt 0 ] || cells=(iris:2 wine:2 pima:2 breast_cancer_wisconsin:1 heart_cleveland:1 monks1:1 car:2)
here="$(cd "$(dirname "$0")/.." && pwd)"
table="$here/experiments/quality/cart_table.py"
mkdir -p "$out/all"
# variant  binary  cart_table variant  environment
runs=(
  "old $old_bin default -"
  "paper_keep $new_bin paper GLASSBOX_IPOPT_OVERHEADS=keep"
  "paper $new_bin paper -"
  "default_keep $new_bin default GLASSBOX_IPOPT_OVERHEADS=keep"
  "default $new_bin default -"
)
for cell in "${cells[@]}"; do
  data=${cell%%:*} depth=${cell##*:}
  for run in "${runs[@]}"; do
    read -r name bin variant env <<<"$run"
    echo "$name $data D=$depth" >&2
    if [ "$env" = - ]; then
      python3 "$table" run "$bin" --out "$out/$name" --variants "$variant" --datasets "$data" --depths "$depth"
    else
      env "$env" python3 "$table" run "$bin" --out "$out/$name" --variants "$variant" --datasets "$data" --depths "$depth"
    fi
    ln -sfn "../$name/$variant" "$out/all/$name"
  done
done
