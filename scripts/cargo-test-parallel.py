#!/usr/bin/env python3
"""Runs `cargo test ARGS` with several test binaries at a time.

Usage: scripts/cargo-test-parallel.py [cargo test arguments, e.g. --workspace --all-targets]

Why: `cargo test` runs its test binaries one after another, and most of ours hold a few long
solves, so on CI's two cores one sat idle (the default run used 116% of a core over its 12
minutes). This builds every target once (`cargo test ARGS --no-run`, the same build), then
runs one `cargo test` per test binary, selected by its target (`--lib`, `--test NAME`, ...)
with ARGS' other arguments unchanged, so each binary gets cargo's own environment, working
folder and features. Binaries known to be long start first; the others follow in cargo's
order. GLASSBOX_TEST_JOBS (default 2) binaries run at a time; each one's output is printed
whole when it ends, and every binary runs even when one fails (like --no-fail-fast). The
end lists each binary's seconds, longest first, and the failures; the exit status is 1
when any failed.
"""

import json
import os
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

# Target selections: dropped from ARGS, since each job selects its own target.
TARGET_FLAGS = {"--all-targets", "--lib", "--bins", "--tests", "--benches", "--examples"}
TARGET_OPTIONS = {"--bin", "--test", "--bench", "--example"}
# The longest binaries (seconds in a CI-like run of the default features, 2026-11-28), started
# first so that the short ones fill the gaps. A name missing here only starts later.
LONG_FIRST = [
    "gradient_best_of_starts",
    "sorrt_fit",
    "quality",
    "torch_backend",
    "slurm",
    "sorrt_gradient",
    "flowoct_tree_search",
    "gradient_backend",
    "oct",
    "oct_tree_search",
    "flowoct",
    "conformance_formulations",
]


def without_target_selection(args):
    """ARGS less the target selection flags and options (with their values)."""
    kept, skip = [], False
    for arg in args:
        if skip:
            skip = False
        elif arg in TARGET_FLAGS:
            pass
        elif arg in TARGET_OPTIONS:
            skip = True
        elif arg.split("=", 1)[0] in TARGET_OPTIONS:
            pass
        else:
            kept.append(arg)
    return kept


def test_binaries(args):
    """(label, selection) of every test binary `cargo test ARGS` would run, built here."""
    build = subprocess.run(
        ["cargo", "test", *args, "--no-run", "--message-format=json-render-diagnostics"],
        stdout=subprocess.PIPE,
        text=True,
    )
    if build.returncode != 0:
        sys.exit(build.returncode)
    jobs, libs = [], False
    for line in build.stdout.splitlines():
        message = json.loads(line)
        if message.get("reason") != "compiler-artifact" or not message.get("executable"):
            continue
        if not message["profile"]["test"]:
            continue  # a binary built for the tests to run (glassbox's CLI), not a test
        target = message["target"]
        kind = target["kind"][0]
        if kind in ("lib", "cdylib", "rlib", "staticlib", "dylib"):
            libs = True  # every library's unit tests: one job, `--lib`
        else:
            jobs.append((target["name"], [f"--{kind}", target["name"]]))
    if libs:
        jobs.insert(0, ("unit tests (--lib)", ["--lib"]))
    rank = {name: i for i, name in enumerate(LONG_FIRST)}
    jobs.sort(key=lambda job: rank.get(job[0], len(LONG_FIRST)))
    return jobs


def main():
    args = sys.argv[1:]
    jobs = test_binaries(args)
    common = without_target_selection(args)
    workers = int(os.environ.get("GLASSBOX_TEST_JOBS", "2"))
    print_lock = threading.Lock()
    results = []

    def run(job):
        label, selection = job
        command = ["cargo", "test", *common, *selection]
        start = time.monotonic()
        done = subprocess.run(
            command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
        )
        seconds = time.monotonic() - start
        verdict = "ok" if done.returncode == 0 else f"FAILED (exit {done.returncode})"
        with print_lock:
            print(f"==== {' '.join(command)}: {verdict}, {seconds:.1f} s", flush=True)
            sys.stdout.write(done.stdout.decode(errors="replace"))
            sys.stdout.flush()
            results.append((label, seconds, done.returncode))

    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        list(pool.map(run, jobs))
    wall = time.monotonic() - started
    print(f"==== {len(results)} test binaries, {workers} at a time, {wall:.0f} s:")
    for label, seconds, code in sorted(results, key=lambda r: -r[1]):
        print(f"  {seconds:7.1f} s  {label}{'' if code == 0 else '  FAILED'}")
    failed = [label for label, _, code in results if code != 0]
    if failed:
        print(f"==== failed: {', '.join(failed)}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
