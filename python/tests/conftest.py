"""Shared test data and paths: the benchmark data sets of ../shared/datasets (beside the
repository), the repository's `glassbox` binary (built by `cargo test`, under
CARGO_TARGET_DIR or target/)."""

import os
import pathlib
import shutil

import pandas as pd
import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
DATASETS = REPO.parent / "shared" / "datasets"


def dataset(name):
    """The data set `name` (a CSV file of ../shared/datasets) as (X DataFrame, y Series)."""
    frame = pd.read_csv(DATASETS / f"{name}.csv")
    return frame.drop(columns="target"), frame["target"]


def glassbox_binary():
    """The CLI binary: $GLASSBOX_BIN, else the debug build of the target folder."""
    explicit = os.environ.get("GLASSBOX_BIN")
    if explicit:
        return explicit
    target = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    for profile in ("debug", "release"):
        candidate = target / profile / "glassbox"
        if candidate.exists():
            return str(candidate)
    return shutil.which("glassbox")


@pytest.fixture(scope="session")
def iris():
    return dataset("iris")


@pytest.fixture(scope="session")
def cli():
    binary = glassbox_binary()
    if binary is None:
        pytest.fail("the glassbox binary is not built: run `cargo build` (or set GLASSBOX_BIN)")
    return binary
