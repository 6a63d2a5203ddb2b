"""glassbox: glass-box models (sparse oblique randomized trees, optimal classification trees,
risk scores) learned by mathematical optimization, as scikit-learn estimators.

    from glassbox import SORCTClassifier
    from sklearn.datasets import load_iris
    X, y = load_iris(return_X_y=True, as_frame=True)
    model = SORCTClassifier(depth=2, n_starts=5).fit(X, y)
    print(model.export_text())

The estimators are generated from the library's formulation registry at import (one class
per learning problem, see `glassbox._estimators`); `formulations()` and `solvers()` list
what the CLI lists; `load()` reads a model file of `glassbox run`; `run()` runs an
experiment config and `compare()` compares solvers' results, as the CLI does. Everything is
computed by the Rust library: this package only converts and validates.
"""

import json
import os
import tempfile

from . import _native_import

_native = _native_import.load()

from . import _estimators  # noqa: E402
from ._estimators import SolverError, stem_of  # noqa: E402

__version__ = _native.version()

_CLASSES = _estimators.generate(_native)
globals().update(_CLASSES)


def estimators():
    """Every estimator class, by name (one per formulation and task of the registry)."""
    return dict(_CLASSES)


def formulations():
    """The formulations of the registry, as `glassbox formulations` lists them: dicts of
    name, kind, description, tasks, parameters (name, default, help) and the estimator
    classes made from each."""
    out = []
    for entry in json.loads(_native.formulations()):
        entry = dict(entry)
        entry["estimators"] = sorted(
            name for name, cls in _CLASSES.items() if cls._formulation["name"] == entry["name"]
        )
        for p in entry["parameters"]:
            p.pop("value", None)
        out.append(entry)
    return out


def solvers():
    """The backends of this build, as `glassbox solvers` lists them: dicts of name,
    problem kind, description, capabilities and raw options."""
    return json.loads(_native.solvers())


def load(path):
    """The model file at `path` (written by `glassbox run` or `to_json`) as a fitted
    estimator of its formulation: it predicts, prints and draws as one fitted in Python.
    Its parameters are the defaults (the file holds the model, not the config); class labels
    that all read as ints (or floats) come back as numbers."""
    from ._model import FittedModel

    fitted = FittedModel(_native.load_model(os.fspath(path)))
    task = "classification" if fitted.classes is not None else "regression"
    matching = [
        cls
        for cls in _CLASSES.values()
        if cls._formulation["name"] == fitted.kind and cls._task == task
    ]
    if not matching:
        raise ValueError(f"{path}: no estimator of this build makes '{fitted.kind}' models")
    estimator = matching[0]()
    names = fitted.column_names
    if names != [f"x{j}" for j in range(len(names))]:
        import numpy as np

        estimator.feature_names_in_ = np.array(names, dtype=object)
    estimator._set_fitted(fitted, [])
    return estimator


def run(config, out=None, force=False, jobs=1):
    """Runs an experiment config, a path to a TOML file or a dict of its tables, as
    `glassbox run --jobs JOBS` does (a grid, a protocol or one setting, on the experiment
    engine: resumable, interrupted between units by Ctrl-C), into `out` (default: a new
    temporary folder). Returns the results lines as a pandas DataFrame; its
    `attrs["results_path"]` is the results file. In a dict, paths are relative to the
    current folder."""
    import pandas as pd

    if out is None:
        out = tempfile.mkdtemp(prefix="glassbox-run-")
    if isinstance(config, dict):
        path, text = None, json.dumps(config)
    else:
        path, text = os.fspath(config), None
    results = _native.run(path, text, os.getcwd(), os.fspath(out), bool(force), int(jobs))
    with open(results) as lines:
        frame = pd.DataFrame([json.loads(line) for line in lines if line.strip()])
    frame.attrs["results_path"] = results
    return frame


def compare(*results, drop_unmatched=False, time_profile=None, objective_gaps=None, metric_gaps=None):
    """Compares solvers on the same instances from results files (or DataFrames returned by
    `run`), as `glassbox compare` does: returns its tables as text and draws the plots asked
    for (.png or .svg paths). Instances not solved by every solver are an error, or, with
    `drop_unmatched`, left out with a warning."""
    import warnings

    paths = []
    for r in results:
        if hasattr(r, "attrs") and "results_path" in getattr(r, "attrs", {}):
            paths.append(r.attrs["results_path"])
        else:
            paths.append(os.fspath(r))
    fspath = lambda p: None if p is None else os.fspath(p)  # noqa: E731
    summary, dropped, notes = _native.compare(
        paths, bool(drop_unmatched), fspath(time_profile), fspath(objective_gaps), fspath(metric_gaps)
    )
    if dropped:
        warnings.warn(f"instances not solved by every solver are left out: {dropped}", stacklevel=2)
    for note in notes:
        warnings.warn(note, stacklevel=2)
    return summary


__all__ = [
    "SolverError",
    "compare",
    "estimators",
    "formulations",
    "load",
    "run",
    "solvers",
    "stem_of",
    *sorted(_CLASSES),
]
