"""The estimators as scikit-learn users use them: generated from the registry, fitted on
numpy arrays and DataFrames (with categorical columns), cloned, pickled, grid-searched in
parallel, warm-started, and failing with the errors scikit-learn users expect."""

import pickle

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, train_test_split

import glassbox
from glassbox import _native


def test_every_registry_formulation_has_an_estimator():
    registry = {f["name"] for f in glassbox.formulations()}
    made = {cls._formulation["name"] for cls in glassbox.estimators().values()}
    assert registry == made
    # The names the issue asks for.
    for name in [
        "SORCTClassifier",
        "L0TreeClassifier",
        "SORRTRegressor",
        "OCTClassifier",
        "OCTHClassifier",
        "LossTreeClassifier",
        "ORSClassifier",
        "OGRSClassifier",
        "CARTClassifier",
        "CARTRegressor",
        "ForestClassifier",
        "TAOClassifier",
        "TMOClassifier",
    ]:
        assert name in glassbox.estimators(), name


def test_a_new_registry_entry_needs_no_class():
    # A formulation the STEMS table does not know gets a CamelCase class all the same.
    entry = dict(glassbox.SORCTClassifier._formulation, name="my_new_tree")
    probe = {"uses_solver": True, "regression": False, "decomposable": True}
    cls = glassbox._estimators.make_estimator(entry, "classification", probe, glassbox.solvers())
    assert cls.__name__ == "MyNewTreeClassifier"
    assert set(cls().get_params()) >= {"depth", "gamma", "solver", "n_starts"}


def test_parameters_are_the_registry_s_with_its_defaults():
    params = glassbox.SORCTClassifier().get_params()
    assert params["depth"] == 2 and params["gamma"] == 512
    assert params["solver"] == "ipopt" and params["n_starts"] == 1
    assert glassbox.OCTClassifier().get_params()["solver"] == "highs"
    # A keyword and a collision get clear names; a learner's seed is random_state.
    assert "lam" in glassbox.LogisticL1Classifier().get_params()
    assert "formulation_warm_start" in glassbox.ORSClassifier().get_params()
    forest = glassbox.ForestClassifier().get_params()
    assert "seed" not in forest and forest["random_state"] == 1
    assert "solver" not in glassbox.CARTClassifier().get_params()
    assert glassbox.CARTRegressor().get_params()["criterion"] == "squared_error"


def test_lists_what_the_cli_lists():
    names = {s["name"] for s in glassbox.solvers()}
    assert {"ipopt", "highs", "cbc", "lbfgs"} <= names
    ipopt = next(s for s in glassbox.solvers() if s["name"] == "ipopt")
    assert ipopt["problem_kind"] == "nlp" and ipopt["options"]
    sorct = next(f for f in glassbox.formulations() if f["name"] == "sorct")
    assert sorct["estimators"] == ["SORCTClassifier"]
    assert any(p["name"] == "gamma" and p["default"] == "512" for p in sorct["parameters"])


def test_fit_predict_numpy_and_pandas(iris):
    X, y = iris
    model = glassbox.SORCTClassifier(depth=2, n_starts=2).fit(X, y)
    assert list(model.classes_) == sorted(y.unique())
    assert list(model.feature_names_in_) == list(X.columns)
    assert model.n_features_in_ == 4
    assert model.score(X, y) > 0.9
    proba = model.predict_proba(X)
    assert proba.shape == (150, 3) and np.allclose(proba.sum(axis=1), 1)
    assert (model.classes_[proba.argmax(axis=1)] == model.predict(X)).all()
    # numpy, integer labels
    codes = pd.factorize(y, sort=True)[0] + 10
    on_arrays = glassbox.SORCTClassifier(depth=2, n_starts=2).fit(X.to_numpy(), codes)
    assert list(on_arrays.classes_) == [10, 11, 12]
    # the same fit: the labels differ, the tree does not
    as_codes = dict(zip(sorted(y.unique()), [10, 11, 12]))
    assert list(on_arrays.predict(X.to_numpy())) == [as_codes[c] for c in model.predict(X)]
    # the papers' quantities
    assert model.branch_coefficients_.shape == (4, 3)
    assert model.branch_intercepts_.shape == (3,)
    assert model.leaf_class_probabilities_.shape == (3, 4)
    result = model.solve_result_
    # the CART start (cart_start, the default) and the 2 random starts, then the line of the
    # cross-validated choice (selection_folds, the default): the optimized tree, or CART's
    # kept as it is where the optimized one is not clearly better
    assert result["starts"] == 3 and len(model.solve_records_) == 4
    chosen = model.solve_records_[-1]
    assert chosen["selected"] and chosen["origin"] in ("selection (optimized)", "selection (cart)")
    assert result["status"] in ("locally_optimal", "other_limit_feasible")
    assert result["total_seconds"] > 0


def test_categorical_columns_are_dummy_coded(iris):
    X, y = iris
    X = X.copy()
    X["size"] = np.where(X["petal_length"] > 4, "large", "small")
    X["kind"] = pd.Categorical(np.where(X["sepal_width"] > 3, "wide", "narrow"))
    model = glassbox.CARTClassifier(depth=3).fit(X, y)
    assert list(model.feature_names_in_) == list(X.columns)
    assert model._fitted.column_names == list(X.columns)
    assert "size=small" in model._fitted._native.feature_names
    assert model.score(X, y) > 0.9
    unseen = X.head(3).copy()
    unseen["size"] = "huge"
    with pytest.raises(ValueError, match="level 'huge' was not seen"):
        model.predict(unseen)
    # Every level coded (a config's `[data] dummies = "all"`): the first levels get theirs.
    names = model._fitted._native.feature_names
    assert "size=large" not in names and "kind=narrow" not in names
    every = glassbox.CARTClassifier(depth=3, dummies="all").fit(X, y)
    names = every._fitted._native.feature_names
    assert {"size=large", "size=small", "kind=narrow", "kind=wide"} <= set(names)
    assert len(names) == len(model._fitted._native.feature_names) + 2
    np.testing.assert_array_equal(every.predict(X.head(5)), every.predict(X.head(5)))
    with pytest.raises(ValueError, match='dummies = "first": .*"drop_first".*"all"'):
        glassbox.CARTClassifier(dummies="first").fit(X, y)
    with pytest.raises(ValueError, match="dummies must be a string"):
        glassbox.CARTClassifier(dummies=None).fit(X, y)


def test_regressor(iris):
    X = iris[0].copy()  # the fixture is shared: pop from a copy
    y = X.pop("petal_width")
    model = glassbox.SORRTRegressor(depth=1).fit(X, y)
    assert model.score(X, y) > 0.8
    assert model.predict(X).shape == (150,)
    tree = glassbox.CARTRegressor(depth=3).fit(X, y)
    assert tree.score(X, y) > 0.8


def test_clone_and_pickle(iris):
    X, y = iris
    model = glassbox.SORCTClassifier(depth=2, gamma=256, n_starts=1, solver="lbfgs")
    copy = clone(model)
    assert copy.get_params() == model.get_params()
    model.fit(X, y)
    restored = pickle.loads(pickle.dumps(model))
    assert (restored.predict_proba(X) == model.predict_proba(X)).all()
    assert restored.export_text() == model.export_text()
    assert not hasattr(clone(model), "classes_")
    # a damaged pickle is named as such, not by the temporary file it passes through
    damaged = pickle.dumps(model).replace(b'"glassbox_model"', b'"glassbox_mode1"')
    with pytest.raises(ValueError, match="model error in the pickled model: not a glassbox"):
        pickle.loads(damaged)


def test_a_row_that_overflows_the_scores_is_named(iris):
    X, y = iris
    model = glassbox.LogisticL1Classifier().fit(X, y)
    huge = X.head(2).copy()
    huge.iloc[1] = 1e308
    with pytest.raises(ValueError, match="row 1: the model's output .* not a finite number"):
        model.predict_proba(huge)


def test_category_levels_that_cannot_be_held_are_named():
    rng = np.random.default_rng(0)
    numbers = rng.normal(size=40)
    y = np.where(numbers > 0, "p", "n")
    empty = pd.DataFrame({"c": ["", "u"] * 20, "a": numbers})
    with pytest.raises(ValueError, match="column 'c', row 0: an empty string is not a category"):
        glassbox.CARTClassifier().fit(empty, y)
    clash = pd.DataFrame({"color": ["red", "blue"] * 20, "color=red": numbers})
    with pytest.raises(ValueError, match="two features would both be named 'color=red'"):
        glassbox.CARTClassifier().fit(clash, y)


def test_warm_start_refits_from_the_previous_model(iris):
    X, y = iris
    # the first fit selects the best objective, so that its solve is the one to compare with
    model = glassbox.SORCTClassifier(
        depth=2, n_starts=3, warm_start=True, selection_folds=0
    ).fit(X, y)
    first = model.solve_result_
    model.fit(X, y)
    # One solve, from the previous optimum: it stays there, in few iterations.
    assert model.solve_result_["starts"] == 1
    assert model.solve_records_[0]["seed"] is None
    assert model.solve_result_["objective"] <= first["objective"] + 1e-7
    assert model.solve_result_["iterations"] < first["iterations"]


def test_warm_start_after_a_change_of_depth_or_classes_refits_from_scratch(iris):
    X, y = iris
    model = glassbox.SORCTClassifier(depth=2, warm_start=True, selection_folds=0).fit(X, y)
    # Another depth: the previous model is no point of the new problem (this raised
    # "cannot warm start from a model with depth 2").
    model.set_params(depth=3).fit(X, y)
    assert model.solve_result_["starts"] >= 1 and model.solve_records_[-1]["depth"] == 3
    # Other classes: the same.
    binary = (y == "Iris-setosa").map({True: "yes", False: "no"})
    model.set_params(depth=2).fit(X, binary)
    assert list(model.classes_) == ["no", "yes"]
    # The same shape again: one solve from the previous model.
    model.fit(X, binary)
    assert model.solve_result_["starts"] == 1
    assert model.solve_records_[0]["seed"] is None


def test_warm_start_after_other_categorical_levels_refits_from_scratch(iris):
    X, y = iris
    X = X.assign(color=["red", "green", "blue"] * 50)
    model = glassbox.TAOClassifier(depth=2, warm_start=True).fit(X, y)
    # The same columns, but a level renamed: other encoded columns, which the engine refuses
    # to start from ("a model starts a run only on the same columns"); the refit is fresh.
    other = X.assign(color=["red", "green", "pink"] * 50)
    fresh = glassbox.TAOClassifier(depth=2).fit(other, y)
    assert list(model.fit(other, y).predict(other)) == list(fresh.predict(other))


def test_warm_start_where_no_model_can_be_started_from_refits_from_scratch(iris):
    X, y = iris
    can = {f["name"]: f["starts_from_model"] for f in glassbox.formulations()}
    assert can["sorct"] and can["oct"] and can["tao"]
    assert not (can["cart"] or can["forest"] or can["tmo"] or can["ors"] or can["ogrs"])
    binary = (y == "Iris-setosa").map({True: "yes", False: "no"})
    for model, target in [
        (glassbox.CARTClassifier(depth=2, warm_start=True), y),
        (glassbox.ForestClassifier(warm_start=True), y),
        (glassbox.OGRSClassifier(rules=2, time_limit=5, warm_start=True), binary),
    ]:
        first = model.fit(X, target).predict(X)
        # the second fit is a fit from scratch with the same seed: the same model
        assert list(model.fit(X, target).predict(X)) == list(first), type(model).__name__


def test_grid_search_in_two_processes(iris):
    X, y = iris
    X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0, stratify=y)
    search = GridSearchCV(
        glassbox.SORCTClassifier(depth=2), {"gamma": [64, 512]}, cv=3, n_jobs=2
    ).fit(X_train, y_train)
    assert search.best_params_["gamma"] in (64, 512)
    assert search.score(X_test, y_test) > 0.85
    milp = GridSearchCV(
        # depth 1: CBC proves it optimal in about a second (depth 2 takes minutes)
        glassbox.OCTClassifier(depth=1, solver="cbc", time_limit=60),
        {"alpha": [0.0, 0.01]},
        cv=2,
        n_jobs=2,
    ).fit(X_train, y_train)
    assert milp.best_estimator_.solve_result_["status"] == "optimal"
    # what the MILP was solved to: OCT's margins ask for at most the default 1e-6
    assert 0 < milp.best_estimator_.solve_result_["integrality_tolerance"] <= 1e-6


def test_bad_parameter_is_a_value_error_naming_it(iris):
    X, y = iris
    with pytest.raises(ValueError, match="depth"):
        glassbox.SORCTClassifier(depth=9).fit(X, y)
    with pytest.raises(ValueError, match="gamma"):
        glassbox.SORCTClassifier(gamma="steep").fit(X, y)
    with pytest.raises(ValueError, match="no_such_option"):
        glassbox.SORCTClassifier(solver_options={"no_such_option": 1}).fit(X, y)
    with pytest.raises(ValueError, match="unknown solver 'gurobi'"):
        glassbox.SORCTClassifier(solver="gurobi").fit(X, y)
    with pytest.raises(ValueError, match="n_starts"):
        glassbox.SORCTClassifier(n_starts=0).fit(X, y)
    with pytest.raises(ValueError, match="Invalid parameter 'detph'"):
        glassbox.SORCTClassifier().set_params(detph=3)
    # NaN and infinity, which JSON cannot carry, and integers out of range are named too
    # (they read "expected value at line 1 column 12" and an OverflowError).
    with pytest.raises(ValueError, match="gamma must be finite, got inf"):
        glassbox.SORCTClassifier(gamma=float("inf")).fit(X, y)
    with pytest.raises(ValueError, match="lam must be finite, got nan"):
        glassbox.LogisticL1Classifier(lam=float("nan")).fit(X, y)
    with pytest.raises(ValueError, match="solver_options must be finite"):
        glassbox.SORCTClassifier(solver_options={"mu_init": float("nan")}).fit(X, y)
    with pytest.raises(ValueError, match="verbose must be 0"):
        glassbox.SORCTClassifier(verbose=-1).fit(X, y)
    with pytest.raises(ValueError, match="random_state must be a non-negative int below 2"):
        glassbox.SORCTClassifier(random_state=2**64).fit(X, y)
    # a failed fit leaves the estimator as it was
    model = glassbox.SORCTClassifier(depth=9)
    with pytest.raises(ValueError):
        model.fit(X, y)
    assert not hasattr(model, "classes_") and not hasattr(model, "n_features_in_")


def test_binary_only_formulations(iris):
    X, y = iris
    # Three classes: scikit-learn's own message for a binary-only classifier.
    with pytest.raises(ValueError, match="Only binary classification is supported"):
        glassbox.OGRSClassifier().fit(X, y)
    # Two features and the default 3 rules: every feature may be scored (T above p is p).
    binary = (y == "Iris-setosa").map({True: "yes", False: "no"})
    card = glassbox.OGRSClassifier().fit(X[["sepal_length", "sepal_width"]], binary)
    assert card.solve_result_["status"] == "optimal"
    assert card.score(X[["sepal_length", "sepal_width"]], binary) > 0.9


def test_solver_failure_is_typed_and_carries_the_status(iris):
    X, y = iris
    # Per-class performance constraints (rho) make the start infeasible; IPOPT stopped by a
    # CPU-time limit before its first iteration returns no usable point.
    # (split_scale="fixed": one IPOPT solve per start, so the backend's own status is kept as
    # it is, not the trail of a gamma continuation)
    model = glassbox.SORCTClassifier(
        depth=2, rho=[0.999], split_scale="fixed", solver_options={"max_cpu_time": 1e-9}
    )
    with pytest.raises(glassbox.SolverError) as failure:
        model.fit(X, y)
    assert failure.value.status == "time_limit_no_solution"
    assert failure.value.raw_status == "Maximum_CpuTime_Exceeded"
    assert failure.value.records and failure.value.records[0]["status"] == failure.value.status
    assert not hasattr(model, "classes_")


def test_export_text_and_plot(iris):
    X, y = iris
    # a time limit: OCT at depth 2 on iris's continuous features takes HiGHS minutes to
    # prove optimal; any feasible tree draws
    model = glassbox.OCTClassifier(depth=2, time_limit=10).fit(X, y)
    text = model.export_text()
    assert "petal" in text
    drawing = model.plot()
    assert drawing._repr_png_()[:8] == b"\x89PNG\r\n\x1a\n"
    binary = (y == "Iris-setosa").map({True: "yes", False: "no"})
    card = glassbox.OGRSClassifier(rules=2).fit(X, binary)
    shown = card.plot()
    assert "<pre>" in shown._repr_html_() and card.export_text() in repr(shown)
    assert card.predict_proba(X).shape == (150, 2)


def test_missing_solver_library_message_names_the_debian_packages():
    from glassbox._native_import import missing_library_message

    error = ImportError("libipopt.so.1: cannot open shared object file: No such file or directory")
    message = missing_library_message(error)
    assert "coinor-libipopt-dev" in message and "coinor-libcbc-dev" in message
    assert missing_library_message(ImportError("No module named 'foo'")) is None


def test_native_backends_include_highs_built_in():
    assert "highs" in _native.build_features()
