"""scikit-learn's estimator checks for every generated estimator. The checks that cannot
hold for a formulation are in EXPECTED_FAILURES, one visible list, each with its reason."""

import os

from sklearn.utils.estimator_checks import parametrize_with_checks

import glassbox
from glassbox import _native

# Settings that keep each check's fits short (the checks fit hundreds of times); the
# formulations' defaults otherwise.
FAST = {
    "ForestClassifier": {"n_trees": 10},
    "ForestRegressor": {"n_trees": 10},
    "TMOClassifier": {"n_trees": 10, "n_gen": 2, "time_limit": 20.0},
    "TMORegressor": {"n_trees": 10, "n_gen": 2, "time_limit": 20.0},
    # ORS scores binary features (the thesis' setting; any other column is refused, naming
    # it): the checks' data are continuous, so the checked ORS binarizes them first (one
    # log-loss stump per feature, its `binarize = "stump"`) and the checks test ORS itself.
    "ORSClassifier": {"binarize": "stump"},
    # Depth 1: at its default depth 2, S-ORRT's fit on check_dtype_object's data (56 x 10,
    # four target values) takes 13,000 IPOPT iterations over its twelve solves (the random and
    # the CART start, on all rows and in the five folds of the cross-validated choice), 30 s
    # in the debug build the tests use; its checks took 230 of the run's 360 s. Depth 1 runs
    # the same code paths.
    "SORRTRegressor": {"depth": 1},
}
# The MILPs (OCT, OCT-H, FlowOCT, loss trees, risk scores) stop at HiGHS's root, with the
# greedy start their `start` gives it: at depth 2 on the checks' data HiGHS takes minutes to
# prove a tree optimal, and a time limit would make each fit last the whole limit (the full
# run took over 15 minutes for three of them) and its model depend on the machine's speed
# (check_fit_idempotent fits twice). A node limit is deterministic, and the fit still builds,
# solves and decodes the MILP; optimal solves are tested in test_estimators.py and
# test_cli_and_runs.py. The time limit guards against a long root: HiGHS looks at the node
# limit after it, and FlowOCT's root on check_classifiers_train's data reaches the limit.
MILP_SOLVER_OPTIONS = {"mip_max_nodes": 0}
MILP_TIME_LIMIT = 20.0

# scikit-learn's checks fit each estimator about 50 times: the whole Python run with every
# estimator's checks (about 930) took 165 and 173 s in two fresh-clone runs of the test command
# on the shared 2-core machine (2026-11-28). CI runs them all
# (scripts/test-python.sh sets GLASSBOX_SKLEARN_CHECKS=all under CI=true); a local run checks
# one estimator per kind of problem (heuristic classifier and regressor, NLP, MILP) unless
# GLASSBOX_SKLEARN_CHECKS=all.
DEFAULT_CHECKED = {"CARTClassifier", "CARTRegressor", "LogisticL1Classifier", "OCTClassifier"}

# check name -> reason, per estimator class: the checks that cannot hold for a formulation.
# Everything not listed must pass. None is listed today: the binary-only formulations (loss
# trees, ORS, OGRS) say so in their tags, so the checks give them two classes, and raise
# scikit-learn's "Only binary classification is supported" on more; the risk scores take any
# number of features (T above it uses them all). Add an entry as
# "OCTClassifier": {"check_name": "why it cannot hold"}.
EXPECTED_FAILURES = {}


def _needs_torch(cls):
    return cls._formulation["name"] in ("cct", "crt") and "torch" not in _native.build_features()


def _instances():
    out = []
    for name, cls in sorted(glassbox.estimators().items()):
        if _needs_torch(cls):
            continue  # fitting a contextual tree needs the torch build (listed below)
        if os.environ.get("GLASSBOX_SKLEARN_CHECKS") != "all" and name not in DEFAULT_CHECKED:
            continue
        params = dict(FAST.get(name, {}))
        if cls._uses_solver and cls._formulation["kind"] == "milp":
            params["time_limit"] = MILP_TIME_LIMIT
            params["solver_options"] = dict(MILP_SOLVER_OPTIONS)
        out.append(cls(**params))
    return out


def test_contextual_trees_need_the_torch_build():
    skipped = [n for n, cls in glassbox.estimators().items() if _needs_torch(cls)]
    assert set(skipped) <= {"CCTClassifier", "CRTRegressor"}


@parametrize_with_checks(
    _instances(),
    expected_failed_checks=lambda estimator: EXPECTED_FAILURES.get(type(estimator).__name__, {}),
)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)
