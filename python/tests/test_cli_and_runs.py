"""Python and the CLI agree: the same data, split and seed give the same model; a model
fitted in Python is shown by `glassbox show`, one fitted by the CLI predicts in Python;
`glassbox.run` and `glassbox.compare` do what `glassbox run` and `glassbox compare` do; a
real SIGINT interrupts a fit with KeyboardInterrupt and leaves the estimator unfitted."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
from sklearn.model_selection import train_test_split

import glassbox
from conftest import DATASETS


def _split(iris, tmp_path):
    X, y = iris
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=3, stratify=y)
    train, test = tmp_path / "train.csv", tmp_path / "test.csv"
    X_train.assign(target=y_train).to_csv(train, index=False)
    X_test.assign(target=y_test).to_csv(test, index=False)
    return (X_train, y_train, X_test, y_test), train, test


def _cli_run(cli, tmp_path, formulation, solver, extra="", starts=3, depth=2):
    config = tmp_path / f"{formulation}.toml"
    config.write_text(
        textwrap.dedent(
            f"""
            [data]
            path = "train.csv"
            test_path = "test.csv"
            [formulation]
            name = "{formulation}"
            depth = {depth}
            {extra}
            [solver]
            name = "{solver}"
            [multistart]
            starts = {starts}
            seed = 7
            """
        )
    )
    out = tmp_path / f"out-{formulation}"
    subprocess.run([cli, "run", str(config), "--out", str(out)], check=True, capture_output=True)
    return out


# OCT at depth 1: solved to optimality in well under a second, so no time limit is needed
# (a limit would make the model depend on the machine's speed); depth 2 on iris's continuous
# features takes HiGHS minutes.
@pytest.mark.parametrize(
    "estimator, formulation, solver, depth",
    [
        (glassbox.SORCTClassifier(depth=2, n_starts=3, random_state=7), "sorct", "ipopt", 2),
        (glassbox.OCTClassifier(depth=1, solver="highs", random_state=7), "oct", "highs", 1),
    ],
)
def test_same_data_split_and_seed_give_the_cli_s_model(iris, tmp_path, cli, estimator, formulation, solver, depth):
    (X_train, y_train, X_test, _), _, _ = _split(iris, tmp_path)
    out = _cli_run(cli, tmp_path, formulation, solver, depth=depth)
    from_cli = json.loads((out / "models" / "split-0.json").read_text())["model"]
    estimator.fit(X_train, y_train)
    from_python = json.loads(estimator.to_json())["model"]
    assert from_python == from_cli
    cli_line = json.loads((out / "results.jsonl").read_text().splitlines()[0])
    assert estimator.solve_records_[0]["objective"] == cli_line["objective"]


def test_python_model_shown_by_the_cli_and_cli_model_predicts_in_python(iris, tmp_path, cli):
    (X_train, y_train, X_test, y_test), _, test = _split(iris, tmp_path)
    model = glassbox.SORCTClassifier(depth=2, n_starts=2).fit(X_train, y_train)
    path = tmp_path / "python-model.json"
    model.to_json(path)
    shown = subprocess.run([cli, "show", str(path)], check=True, capture_output=True, text=True)
    assert shown.stdout == model.export_text()
    predicted = tmp_path / "predictions.csv"
    subprocess.run(
        [cli, "predict", str(path), str(test), "--out", str(predicted)], check=True, capture_output=True
    )
    import pandas as pd

    assert list(pd.read_csv(predicted)["prediction"]) == list(model.predict(X_test))

    out = _cli_run(cli, tmp_path, "sorct", "ipopt", starts=2)
    loaded = glassbox.load(out / "models" / "split-0.json")
    assert isinstance(loaded, glassbox.SORCTClassifier)
    assert list(loaded.classes_) == sorted(y_train.unique())
    accuracy = json.loads((out / "results.jsonl").read_text().splitlines()[0])
    selected = [json.loads(l) for l in (out / "results.jsonl").read_text().splitlines()]
    selected = next(l for l in selected if l["selected"])
    assert loaded.score(X_test, y_test) == pytest.approx(selected["test_accuracy"])
    assert loaded.export_text() == subprocess.run(
        [cli, "show", str(out / "models" / "split-0.json")], check=True, capture_output=True, text=True
    ).stdout
    assert accuracy["dataset"] == "train"


def test_run_and_compare(tmp_path):
    config = {
        "data": {"path": str(DATASETS / "iris.csv")},
        "split": {"repeats": 2, "seed": 1},
        "formulation": {"name": "sorct", "depth": 2},
        "solver": {"name": "ipopt"},
        "multistart": {"starts": 2},
    }
    ipopt = glassbox.run(config, out=tmp_path / "ipopt")
    # 2 splits x (the CART start + 2 random starts + the line of the cross-validated choice,
    # which compare leaves out)
    assert len(ipopt) == 8
    choice = ipopt["origin"].fillna("").str.startswith("selection")
    assert choice.sum() == 2
    assert set(ipopt[~choice]["status"]) <= {"locally_optimal", "optimal"}
    assert ipopt["test_accuracy"].between(0.7, 1.0).all()
    config["solver"] = {"name": "lbfgs"}
    path = tmp_path / "lbfgs.toml"
    lbfgs_out = tmp_path / "lbfgs"
    path.write_text(
        f'[data]\npath = "{DATASETS / "iris.csv"}"\n[split]\nrepeats = 2\nseed = 1\n'
        '[formulation]\nname = "sorct"\ndepth = 2\n[solver]\nname = "lbfgs"\n[multistart]\nstarts = 2\n'
    )
    lbfgs = glassbox.run(path, out=lbfgs_out)
    assert len(lbfgs) == 8
    # another config into a folder that holds a run: refused, as the CLI refuses it
    with pytest.raises(ValueError, match="holds the results of another config"):
        glassbox.run(path, out=tmp_path / "ipopt")
    profile = tmp_path / "time.svg"
    summary = glassbox.compare(ipopt, lbfgs.attrs["results_path"], time_profile=profile)
    assert "ipopt" in summary and "lbfgs" in summary
    assert profile.read_text().startswith("<svg")


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child process")
def test_sigint_interrupts_a_fit_and_leaves_no_fitted_state(tmp_path):
    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(
                f"""
                import signal, sys, time
                import pandas as pd
                import glassbox
                # A background job of a non-interactive shell inherits SIGINT ignored, and
                # Python then installs no handler: Ctrl-C as a terminal gives it.
                signal.signal(signal.SIGINT, signal.default_int_handler)
                frame = pd.read_csv({str(DATASETS / "thyroid.csv")!r})
                X, y = frame.drop(columns="target"), frame["target"]
                model = glassbox.SORCTClassifier(depth=2, n_starts=500)
                print("fitting", flush=True)
                started = time.time()
                try:
                    model.fit(X, y)
                    print("finished", flush=True)
                except KeyboardInterrupt:
                    print("interrupted after", round(time.time() - started, 1), flush=True)
                print("fitted" if hasattr(model, "classes_") else "unfitted", flush=True)
                """
            ),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=os.path.dirname(__file__),
    )
    assert child.stdout.readline().strip() == "fitting"
    time.sleep(3)
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=120)
    assert "interrupted after" in out, (out, err)
    assert out.strip().endswith("unfitted")
