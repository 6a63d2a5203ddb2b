"""scikit-learn estimators generated from glassbox's formulation registry at import time.

One class per learning problem of the registry (no hand-written class per formulation):

- A formulation that learns classifiers gives `<Stem>Classifier`, one that learns
  regressions `<Stem>Regressor`; a heuristic learner that does either, by its `criterion`,
  gives both (the regressor's criterion defaults to "squared_error"). `<Stem>` is the
  formulation's name as the papers spell it (`STEMS`; e.g. sorct -> SORCT, oct_h -> OCTH),
  or, for a name not in `STEMS`, its CamelCase (`my_tree` -> MyTree): a formulation added to
  the registry appears here with no Python code, and `STEMS` takes one line for a nicer name.
- Constructor parameters: the formulation's parameters with the registry's defaults (a
  default that is not a TOML value, such as "-" or "0.5 off the diagonal", is None: the
  formulation's own default applies), then the estimator's: `solver` (a backend of
  `glassbox.solvers()`), `solver_options` (a dict of the backend's raw options, checked as a
  config's `[solver] raw`), `time_limit` (wall-clock seconds per solve), `n_starts` (random
  starts of the multistart), `random_state` (the seed of the starts; for a learner with a
  `seed` parameter, that seed), `warm_start`, `verbose` and `dummies` (how categorical
  columns are coded: "drop_first", every level but the first, or "all", a config's `[data]
  dummies`). A formulation without a backend
  (the heuristic learners) has no `solver`, `solver_options` and `n_starts` (nor
  `time_limit`, unless it has its own). A parameter whose name is a Python keyword gets a
  clear name (`lambda` -> `lam`); one that collides with an estimator parameter is prefixed
  `formulation_` (the risk scores' greedy `warm_start` -> `formulation_warm_start`).
- `warm_start=True`: a refit starts from the previous fit's model (saved, then given to the
  engine as `[multistart] warm_start`) instead of new random starts and the CART start, as a
  warm path does, where the formulation can start from a model (`starts_from_model` in
  `glassbox.formulations()`); the others refit from scratch, and so does a refit on other
  columns, classes or depth.

Fitting goes through the library's engine (`glassbox._native.fit`); nothing is solved or
predicted in Python.
"""

import json
import keyword
import os
import tempfile

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from . import _data
from ._model import FittedModel, model_attributes

# How the papers spell the formulations' names (class stems); any other name is CamelCased.
STEMS = {
    "sorct": "SORCT",
    "sorrt": "SORRT",
    "l0tree": "L0Tree",
    "logistic_l1": "LogisticL1",
    "oct": "OCT",
    "oct_h": "OCTH",
    "flowoct": "FlowOCT",
    "loss_tree": "LossTree",
    "ors": "ORS",
    "ogrs": "OGRS",
    "cart": "CART",
    "forest": "Forest",
    "tao": "TAO",
    "tmo": "TMO",
    "tao_oblique": "TAOOblique",
    "cct": "CCT",
    "crt": "CRT",
}

# Python names for formulation parameters that are Python keywords.
KEYWORD_NAMES = {"lambda": "lam"}

# Formulations that learn from two classes only (the papers' setting): scikit-learn's tags
# say so, and its checks then give them binary problems. The registry does not state it yet.
BINARY_ONLY = {"loss_tree", "ors", "ogrs"}

# The estimator's own parameters, after the formulation's.
COMMON = (
    "solver", "solver_options", "time_limit", "n_starts", "random_state", "warm_start", "verbose",
    "dummies",
)


class SolverError(RuntimeError):
    """A fit whose solves returned no usable solution. `status` is the selected (last)
    solve's termination status as the results lines spell it (e.g. "infeasible",
    "time_limit_no_solution"), `raw_status` the backend's own, `records` every solve's
    results line."""

    def __init__(self, message, status, raw_status, records):
        super().__init__(message)
        self.status = status
        self.raw_status = raw_status
        self.records = records


def stem_of(name):
    """The class stem of formulation `name` (see the module docstring)."""
    return STEMS.get(name) or "".join(part.capitalize() for part in name.split("_"))


def python_name(name, common):
    """The Python name of formulation parameter `name` given the estimator's `common` ones."""
    if name in KEYWORD_NAMES:
        return KEYWORD_NAMES[name]
    if keyword.iskeyword(name):
        return f"{name}_value"
    if name in common:
        return f"formulation_{name}"
    return name


def _json_text(value, what):
    """`value` as JSON for the library; a NaN or infinity (which JSON cannot hold) is a
    ValueError naming `what`."""
    try:
        return json.dumps(value, default=_json_default, allow_nan=False)
    except ValueError:
        raise ValueError(f"{what} must be finite, got {value!r}") from None


def _json_default(value):
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"{type(value).__name__} is not a parameter value glassbox can take")


class GlassboxEstimator(BaseEstimator):
    """What every generated estimator shares (see the module docstring). The generated
    class sets `_formulation` (registry entry as a dict), `_task`, `_params` (Python name ->
    registry name, default), `_uses_solver`, `_seed_param`."""

    _formulation = None
    _task = None
    _params = {}
    _uses_solver = False
    _seed_param = None
    _defaults_override = {}

    # -- the config the engine gets -------------------------------------------------------

    def _formulation_table(self):
        """The `[formulation]` table: every parameter set away from the registry default."""
        table = {}
        for py_name, (name, default) in self._params.items():
            value = getattr(self, py_name)
            if value is None:
                continue
            value = json.loads(_json_text(value, py_name))
            if name in self._defaults_override or value != default:
                table[name] = value
        if self._seed_param is not None and self.random_state is not None:
            table[self._seed_param] = _seed(self.random_state)
        return table

    def _check_params(self):
        # Its values are checked by the library, as a config's `[data] dummies` is.
        if self.verbose is not None and not (
            isinstance(self.verbose, (int, np.integer)) and 0 <= self.verbose <= 2
        ):
            raise ValueError(
                f"verbose must be 0 (silent), 1 (a line per solve) or 2 (the backend's log), "
                f"got {self.verbose!r}"
            )
        if not isinstance(self.dummies, str):
            raise ValueError(
                f"dummies must be a string (a config's [data] dummies), got {self.dummies!r}"
            )
        if self._uses_solver:
            if not isinstance(self.n_starts, (int, np.integer)) or self.n_starts < 1:
                raise ValueError(f"n_starts must be an integer >= 1, got {self.n_starts!r}")
            if self.time_limit is not None and not (
                isinstance(self.time_limit, (int, float)) and self.time_limit > 0
            ):
                raise ValueError(f"time_limit must be a positive number of seconds, got {self.time_limit!r}")
            if self.solver_options is not None and not isinstance(self.solver_options, dict):
                raise ValueError(
                    f"solver_options must be a dict of the backend's raw options, got {self.solver_options!r}"
                )

    # -- fit ------------------------------------------------------------------------------

    def fit(self, X, y):
        """Fits the formulation on X, y through the library (the same path as `glassbox
        run`: one split whose training rows are all the rows). On any error, and on Ctrl-C
        (`KeyboardInterrupt`, raised once the running solve ends), the estimator is left as
        it was before the call."""
        state = dict(self.__dict__)
        try:
            return self._fit(X, y)
        except BaseException:
            self.__dict__.clear()
            self.__dict__.update(state)
            raise

    def _fit(self, X, y):
        from . import _native

        self._check_params()
        # Only a formulation that can start from a saved model refits from the previous one;
        # the others (CART, the forest, TMO, the risk scores, ...) refit from scratch.
        warm_model = (
            getattr(self, "_fitted", None)
            if self.warm_start and self._formulation.get("starts_from_model")
            else None
        )
        columns, y = _data.columns_of(self, X, y, reset=True)
        if self._task == "classification":
            check_classification_targets(y)
            classes, y_index = np.unique(y, return_inverse=True)
            if len(classes) < 2:
                raise ValueError(
                    f"{type(self).__name__} needs at least 2 classes, y has 1 class "
                    f"({classes[0]!r})"
                )
            if len(classes) > 2 and self._formulation["name"] in BINARY_ONLY:
                # scikit-learn's wording, which its checks (and users' code) look for.
                raise ValueError(
                    f"Only binary classification is supported. The type of the target is "
                    f"multiclass: {type(self).__name__} needs exactly two classes, y has "
                    f"{len(classes)}"
                )
            labels = [str(c) for c in classes]
            if len(set(labels)) != len(labels):
                raise ValueError(f"the class labels {list(classes)!r} are not distinct as text")
            targets = [labels[i] for i in y_index]
        else:
            classes = None
            y = np.asarray(y, dtype=np.float64)
            targets = [repr(float(v)) for v in y]
        names = {name for name, _ in columns}
        target_name = _data.unique_name("target", names)
        # The levels of each categorical column (None for a numeric one): other levels are
        # other encoded columns, which the engine refuses to start from.
        levels = [sorted(set(v)) if isinstance(v, list) else None for _, v in columns]
        previous_levels = getattr(self, "_fit_levels", None)
        if warm_model is not None and (
            warm_model.column_names != [n for n, _ in columns]
            or getattr(self, "_fit_shape", None) != self._shape(classes)
            or (previous_levels is not None and previous_levels != levels)
        ):
            warm_model = None  # other columns, levels, classes or depth: nothing to start from
        with tempfile.TemporaryDirectory() as folder:
            warm_path = None
            starts = self.n_starts if self._uses_solver else 1
            if warm_model is not None:
                warm_path = os.path.join(folder, "warm.json")
                warm_model.save(warm_path)
                if self._uses_solver:
                    starts = 0
            table = self._formulation_table()
            param_names = {n for n, _ in self._params.values()}
            if warm_path is not None:
                # A refit starts from the previous model alone: no greedy (CART, TAO) start
                # either.
                for greedy in ("cart_start", "tao_start"):
                    if greedy in param_names:
                        table[greedy] = False
            if warm_path is not None and "selection_folds" in param_names:
                # ... and nothing to choose between
                table["selection_folds"] = 0
            model, records = _native.fit(
                self._formulation["name"],
                json.dumps(table),
                columns,
                target_name,
                targets,
                (self.solver or self._default_solver) if self._uses_solver else None,
                _json_text(
                    (self.solver_options or {}) if self._uses_solver else {},
                    "solver_options",
                ),
                float(self.time_limit) if self._uses_solver and self.time_limit is not None else None,
                int(self.verbose or 0),
                int(starts),
                _seed(self.random_state) if self.random_state is not None else 1,
                warm_path,
                self.dummies,
            )
        records = json.loads(records)
        if model is None:
            last = records[-1] if records else {}
            status = last.get("status", "error")
            raise SolverError(
                f"{type(self).__name__}: no solve returned a usable solution (status "
                f"{status}, backend status {last.get('raw_status', '')!r})",
                status,
                last.get("raw_status", ""),
                records,
            )
        self._set_fitted(FittedModel(model), records, classes)
        self._fit_levels = levels
        return self

    def _shape(self, classes):
        """What a model must share with a refit to start it (`warm_start`): its classes and
        its depth (a model of another shape is no point of the new problem)."""
        labels = None if classes is None else [str(c) for c in classes]
        return (labels, getattr(self, "depth", None))

    def _set_fitted(self, fitted, records, classes=None):
        """Sets the fitted attributes from `fitted` (and the solves' `records`)."""
        self._fitted = fitted
        self._fit_shape = self._shape(classes)
        self._column_names = fitted.column_names
        self.n_features_in_ = len(fitted.column_names)
        for name, value in model_attributes(fitted).items():
            setattr(self, name, value)
        selected = next((r for r in records if r.get("selected")), records[-1] if records else {})
        self.solve_records_ = records
        self.solve_result_ = {
            "status": selected.get("status"),
            "raw_status": selected.get("raw_status"),
            "objective": selected.get("objective"),
            "gap": selected.get("mip_gap"),
            "dual_bound": selected.get("dual_bound"),
            "nodes": selected.get("nodes"),
            "integrality_tolerance": selected.get("integrality_tolerance"),
            "iterations": selected.get("iterations"),
            "seconds": selected.get("solve_seconds"),
            "total_seconds": sum(r.get("solve_seconds") or 0.0 for r in records),
            "starts": sum(1 for r in records if not _is_selection_line(r)),
        }

    # -- the fitted model -----------------------------------------------------------------

    def _columns_for_predict(self, X):
        check_is_fitted(self, "_fitted")
        columns, _ = _data.columns_of(self, X, reset=False)
        return columns

    def to_json(self, path=None):
        """The fitted model as the CLI's model file (`glassbox show`, `predict`, `draw`
        read it); written to `path` when given. Returns the file's text."""
        check_is_fitted(self, "_fitted")
        text = self._fitted.to_json()
        if path is not None:
            self._fitted.save(os.fspath(path))
        return text

    def export_text(self):
        """The rules (splits, leaves, points) in the user's units, as `glassbox show`
        prints them."""
        check_is_fitted(self, "_fitted")
        return self._fitted.describe()

    def plot(self):
        """The tree drawn as `glassbox draw` draws it (a PNG shown inline by Jupyter), or,
        for a model that is not a tree (a score card), its text."""
        check_is_fitted(self, "_fitted")
        return self._fitted.drawing()


class GlassboxClassifier(ClassifierMixin, GlassboxEstimator):
    """A generated glassbox classifier."""

    _task = "classification"

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        if self._formulation is not None and self._formulation["name"] in BINARY_ONLY:
            tags.classifier_tags.multi_class = False
        return tags

    def _set_fitted(self, fitted, records, classes=None):
        super()._set_fitted(fitted, records)
        labels = fitted.classes
        self.classes_ = _labels_array(labels) if classes is None else classes
        self._fit_shape = self._shape(self.classes_)
        order = [str(c) for c in self.classes_]
        # The library's class order (its own sort) -> the order of classes_ (numpy's).
        self._proba_order = [labels.index(c) for c in order]

    def predict_proba(self, X):
        """Class probabilities, one column per class of `classes_`."""
        columns = self._columns_for_predict(X)
        proba = self._fitted.predict_proba(columns)
        return proba[:, self._proba_order]

    def predict(self, X):
        """The most probable class per row (ties to the class first in the library's
        order, as `glassbox predict`)."""
        columns = self._columns_for_predict(X)
        proba = self._fitted.predict_proba(columns)
        best = np.argmax(proba, axis=1)  # in the library's order
        to_ours = np.argsort(self._proba_order)
        return self.classes_[to_ours[best]]


class GlassboxRegressor(RegressorMixin, GlassboxEstimator):
    """A generated glassbox regressor."""

    _task = "regression"

    def predict(self, X):
        """The predicted number per row."""
        columns = self._columns_for_predict(X)
        return self._fitted.predict_values(columns)


def _is_selection_line(record):
    """Whether a results line is the one the cross-validated choice (`selection_folds`)
    adds after the starts."""
    return (record.get("origin") or "").startswith("selection (")


def _labels_array(labels):
    """Class labels read from a model file as a numpy array: ints or floats when every label
    is one, else str."""
    for kind in (int, float):
        try:
            values = [kind(s) for s in labels]
        except ValueError:
            continue
        if [str(v) for v in values] == list(labels):
            return np.array(values)
    return np.array(labels)


def _seed(random_state):
    if isinstance(random_state, (int, np.integer)) and not isinstance(random_state, bool):
        if not 0 <= random_state < 2**63:
            raise ValueError(
                f"random_state must be a non-negative int below 2^63, got {random_state}"
            )
        return int(random_state)
    raise ValueError(
        f"random_state must be a non-negative int (glassbox's runs are seeded), got {random_state!r}"
    )


def _init_source(params):
    """The source of an `__init__` taking `params` ([(name, default)]) as keyword arguments
    and storing each unchanged (scikit-learn's rule)."""
    args = ", ".join(f"{name}={name}_default" for name, _ in params)
    body = "".join(f"    self.{name} = {name}\n" for name, _ in params) or "    pass\n"
    return f"def __init__(self, *, {args}):\n{body}" if params else f"def __init__(self):\n{body}"


def make_estimator(entry, task, probe, backends, criterion=None):
    """The estimator class of registry `entry` for `task` ("classification" or
    "regression"); `probe` is the extension's reading of its default config, `backends` the
    compiled backends, `criterion` the default criterion of a learner's other task."""
    uses_solver = probe["uses_solver"]
    common = set(COMMON) if uses_solver else {"random_state", "warm_start", "verbose", "dummies"}
    params = {}
    seed_param = None
    defaults_override = {}
    for p in entry["parameters"]:
        name, default = p["name"], p["value"]
        if name == "seed":
            seed_param = name
            continue
        if name == "criterion" and criterion is not None:
            default = criterion
            defaults_override[name] = criterion
        params[python_name(name, common)] = (name, default)
    own = [(py, default) for py, (_, default) in params.items()]
    if uses_solver:
        kind = "milp" if entry["kind"] == "milp" else "nlp"
        default_solver = next((b["name"] for b in backends if b["problem_kind"] == kind), None)
        seed_default = 1
        extra = [
            ("solver", default_solver),
            ("solver_options", None),
            ("time_limit", None),
            ("n_starts", 1),
            ("random_state", seed_default),
            ("warm_start", False),
            ("verbose", 0),
            ("dummies", "drop_first"),
        ]
    else:
        default_solver = None
        seed_default = next((p["value"] for p in entry["parameters"] if p["name"] == "seed"), 1)
        extra = [
            ("random_state", seed_default),
            ("warm_start", False),
            ("verbose", 0),
            ("dummies", "drop_first"),
        ]
    signature = own + extra
    namespace = {f"{name}_default": default for name, default in signature}
    exec(_init_source(signature), namespace)  # noqa: S102 - names are checked identifiers
    init = namespace["__init__"]
    stem = stem_of(entry["name"])
    suffix = "Classifier" if task == "classification" else "Regressor"
    base = GlassboxClassifier if task == "classification" else GlassboxRegressor
    doc = _class_doc(entry, params, uses_solver)
    cls = type(
        f"{stem}{suffix}",
        (base,),
        {
            "__init__": init,
            "__doc__": doc,
            "__module__": "glassbox",
            "_formulation": entry,
            "_params": params,
            "_uses_solver": uses_solver,
            "_seed_param": seed_param,
            "_default_solver": default_solver,
            "_defaults_override": defaults_override,
        },
    )
    init.__qualname__ = f"{cls.__name__}.__init__"
    return cls


def _class_doc(entry, params, uses_solver):
    lines = [
        f"{entry['description']}",
        "",
        f"glassbox formulation '{entry['name']}' ({entry['kind']}), as a scikit-learn estimator.",
        "",
        "Parameters",
        "----------",
    ]
    by_name = {p["name"]: p for p in entry["parameters"]}
    for py_name, (name, default) in params.items():
        p = by_name[name]
        lines.append(f"{py_name} : default {p['default'] or 'None'}")
        lines.append(f"    {p['help']}")
    if uses_solver:
        lines += [
            "solver : str, a backend of glassbox.solvers()",
            "solver_options : dict, the backend's raw options",
            "time_limit : float or None, wall-clock seconds per solve",
            "n_starts : int, random starts of the multistart (the best objective is kept)",
        ]
    lines += [
        "random_state : int, seed of the random starts (of the learner for a learner)",
        "warm_start : bool, a refit starts from the previous fit's model (where the formulation can start from one; otherwise it refits from scratch)",
        "verbose : int, 0 silent, 1 a line per solve, 2 the backend's log",
        "dummies : str, how categorical columns are coded: 'drop_first' (every level but the first)"
        " or 'all' (every level)",
    ]
    return "\n".join(lines)


def generate(native):
    """Every estimator class of the registry, by class name."""
    entries = json.loads(native.formulations())
    backends = json.loads(native.solvers())
    classes = {}
    for entry in entries:
        for p in entry["parameters"]:
            if not p["name"].isidentifier():
                raise RuntimeError(f"formulation {entry['name']}: parameter {p['name']!r} is not a name")
        probe = json.loads(native.probe(entry["name"], "{}"))
        task = "regression" if probe["regression"] else "classification"
        if entry[task]:
            cls = make_estimator(entry, task, probe, backends)
            classes[cls.__name__] = cls
        has_criterion = any(p["name"] == "criterion" for p in entry["parameters"])
        if task == "classification" and entry["regression"] and has_criterion:
            try:
                other = json.loads(native.probe(entry["name"], json.dumps({"criterion": "squared_error"})))
            except ValueError:
                continue
            if other["regression"]:
                cls = make_estimator(entry, "regression", other, backends, criterion="squared_error")
                classes[cls.__name__] = cls
    return classes
