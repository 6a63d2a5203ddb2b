#!/usr/bin/env bash
# Installs the system packages glassbox's default backends need, when they are missing:
# IPOPT (Debian's coinor-libipopt-dev), CBC (coinor-libcbc-dev), pkg-config, and what the
# `highs` feature needs to build HiGHS from source (cmake, a C++ compiler, and libclang for
# bindgen), and a font for PNG plots. Safe to run again: it does nothing when everything is there. Runs apt-get as
# root, or through sudo.
set -euo pipefail

need=()
dpkg -s coinor-libipopt-dev >/dev/null 2>&1 || need+=(coinor-libipopt-dev)
command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)
command -v cc >/dev/null 2>&1 || need+=(build-essential)
# HiGHS (feature `highs`): built from source by the highs-sys crate.
command -v c++ >/dev/null 2>&1 || need+=(g++)
command -v cmake >/dev/null 2>&1 || need+=(cmake)
dpkg -s libclang-dev >/dev/null 2>&1 || need+=(libclang-dev)
# CBC (feature `cbc`).
dpkg -s coinor-libcbc-dev >/dev/null 2>&1 || need+=(coinor-libcbc-dev)
# Python's venv and pip, for the Python package's tests (scripts/test-python.sh).
python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || need+=(python3-venv)
# A TrueType font for the text of PNG plots (`glassbox explain --plot`); read at run time.
dpkg -s fonts-dejavu-core >/dev/null 2>&1 || need+=(fonts-dejavu-core)

if ((${#need[@]})); then
  echo "glassbox: installing system packages: ${need[*]}" >&2
  if [ "$(id -u)" -eq 0 ]; then sudo=""; else sudo="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq "${need[@]}" >/dev/null
fi

if ! command -v cargo >/dev/null 2>&1; then
  echo "glassbox: cargo is not on PATH; install a Rust toolchain (https://rustup.rs) first" >&2
  exit 1
fi
