#!/usr/bin/env bash
# Runs `cargo test ARGS` with several test binaries at a time.
#
# Usage: scripts/cargo-test-parallel.sh [cargo test arguments, e.g. --workspace --all-targets]
#        [-- test binary arguments, e.g. --nocapture]
#
# Why: `cargo test` runs its test binaries one after another, and most of ours hold a few
# long solves, so on CI's two cores one sat idle (the default run used 116% of a core over
# its 10 to 12 minutes). This builds every target once (`cargo test ARGS --no-run`), then
# runs one `cargo test` per test binary, selected by its target (`--lib`, `--test NAME`, ...)
# with ARGS' other arguments unchanged, so each gets cargo's own environment, working folder
# and features. The binaries known to be long start first. GLASSBOX_TEST_JOBS (default 2)
# run at a time; each one's output is printed whole when it ends, and every binary runs
# even when one fails (like --no-fail-fast). The end lists each binary's seconds, longest
# first, and the failures; the exit status is 1 when any failed.
#
# The binaries that measure wall-clock limits (tests/limits.rs: a 1 s limit must stop every
# backend within 20% + 1 s) run last, alone: beside another binary on two cores, HiGHS once
# spent 2.87 s of a 1 s limit before its first simplex iteration (its MIP setup, where
# glassbox's interrupt callback is not called).
#
# Bash, not Python, on purpose: a Python started through a pyenv shim puts pyenv's folders
# on PATH, and pyo3's build script, which watches PATH, then compiles pyo3 again (34 s).
set -euo pipefail
cd "$(dirname "$0")/.."
workers="${GLASSBOX_TEST_JOBS:-2}"

# ARGS less their target selection, which each job replaces with its own (what follows
# `--` is the test binaries' and stays).
common=()
skip_value=0
binary_args=0
for arg in "$@"; do
  if ((binary_args)); then
    common+=("$arg")
    continue
  elif ((skip_value)); then
    skip_value=0
    continue
  fi
  case "$arg" in
    --all-targets | --lib | --bins | --tests | --benches | --examples) ;;
    --bin | --test | --bench | --example) skip_value=1 ;;
    --bin=* | --test=* | --bench=* | --example=*) ;;
    --) binary_args=1 && common+=("$arg") ;;
    *) common+=("$arg") ;;
  esac
done

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cargo test --no-run --message-format=json-render-diagnostics "$@" > "$tmp/build.json"

# One selection per line: `--lib` (every library's unit tests) first, then `--KIND NAME` for
# each other test binary, the long ones first (in the order of their seconds in a fresh-clone
# run of scripts/test.sh, 2026-11-28), the ones that run alone last; $tmp/alone holds how
# many of those there are.
python3 - "$tmp/build.json" "$tmp/alone" > "$tmp/jobs" <<'EOF'
import json, sys

long_first = ["sorrt_fit", "gradient_best_of_starts", "quality", "slurm", "flowoct", "oct",
              "sorrt_gradient", "gradient_backend", "conformance_formulations",
              "oct_tree_search", "flowoct_tree_search", "grid", "sorct_eval"]
alone = ["limits"]
libs, others = False, []
for line in open(sys.argv[1]):
    m = json.loads(line)
    if m.get("reason") != "compiler-artifact" or not m.get("executable"):
        continue
    if not m["profile"]["test"]:
        continue  # a binary the tests run (glassbox's CLI), not a test binary
    kind, name = m["target"]["kind"][0], m["target"]["name"]
    if kind in ("lib", "cdylib", "rlib", "staticlib", "dylib"):
        libs = True
    else:
        others.append(f"--{kind} {name}")
rank = {name: i for i, name in enumerate(long_first)}
rank.update({name: len(long_first) + 1 for name in alone})
others.sort(key=lambda s: rank.get(s.split()[1], len(long_first)))
print("\n".join((["--lib"] if libs else []) + others))
open(sys.argv[2], "w").write(str(sum(s.split()[1] in alone for s in others)))
EOF

# Runs job $1 (`--KIND NAME`), then prints its output whole (one printer at a time) and
# records its seconds and exit status.
run_job() {
  local i="$1" selection start rc=0 verdict
  selection="$(sed -n "${i}p" "$tmp/jobs")"
  start="$SECONDS"
  # shellcheck disable=SC2086 # the selection is two words by design
  cargo test $selection "${common[@]}" < /dev/null > "$tmp/$i.out" 2>&1 || rc=$?
  local seconds=$((SECONDS - start))
  {
    flock 9
    if ((rc)); then verdict="FAILED (exit $rc)"; else verdict="ok"; fi
    echo "==== cargo test $selection ${common[*]}: $verdict, $seconds s"
    cat "$tmp/$i.out"
    printf '%s %s %s\n' "$seconds" "$rc" "$selection" >> "$tmp/summary"
  } 9> "$tmp/print.lock"
}

total="$(wc -l < "$tmp/jobs")"
shared=$((total - $(cat "$tmp/alone")))
touch "$tmp/summary" # ARGS may select no test binary
started="$SECONDS"
for ((i = 1; i <= shared; i++)); do
  while (($(jobs -rp | wc -l) >= workers)); do
    wait -n || true
  done
  run_job "$i" &
done
wait
for ((i = shared + 1; i <= total; i++)); do
  run_job "$i"
done

echo "==== $total test binaries, $workers at a time, $((SECONDS - started)) s:"
sort -rn "$tmp/summary" | while read -r seconds rc selection; do
  printf '  %5d s  %s%s\n' "$seconds" "$selection" "$( ((rc)) && echo '  FAILED')"
done
failed="$(awk '$2 != 0 { $1 = ""; $2 = ""; print }' "$tmp/summary")"
if [ -n "$failed" ]; then
  echo "==== failed:" $failed >&2
  exit 1
fi
