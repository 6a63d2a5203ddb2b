"""Input as scikit-learn users give it (numpy arrays, pandas DataFrames) turned into the
columns the library's tables are made of: numeric columns as float64 bytes, categorical
ones (object, category, string and bool columns of a DataFrame) as lists of str, which the
library dummy-codes as the CLI does for a CSV file. Validation follows scikit-learn's
conventions (`validate_data`: shapes, finite values, feature names, n_features_in_)."""

import numpy as np

try:  # scikit-learn >= 1.6
    from sklearn.utils.validation import validate_data as _validate_data
except ImportError:  # pragma: no cover - older scikit-learn

    def _validate_data(estimator, *args, **kwargs):
        return estimator._validate_data(*args, **kwargs)


try:
    from sklearn.utils.validation import _check_feature_names, _check_n_features
except ImportError:  # pragma: no cover - older scikit-learn

    def _check_feature_names(estimator, X, *, reset):
        return estimator._check_feature_names(X, reset=reset)

    def _check_n_features(estimator, X, reset):
        return estimator._check_n_features(X, reset=reset)


def _categorical_columns(X):
    """The names of a DataFrame's non-numeric columns (none for anything else)."""
    dtypes = getattr(X, "dtypes", None)
    if dtypes is None or not hasattr(X, "columns"):
        return []
    import pandas as pd

    return [
        c
        for c, t in zip(X.columns, dtypes)
        if not pd.api.types.is_numeric_dtype(t) or pd.api.types.is_bool_dtype(t)
    ]


def default_names(n_features):
    """Column names for an array without them: x0, x1, ... (scikit-learn's own)."""
    return [f"x{j}" for j in range(n_features)]


def _float_column(values, name):
    column = np.ascontiguousarray(values, dtype=np.float64)
    if not np.all(np.isfinite(column)):
        raise ValueError(
            f"Input X contains NaN or infinity in column '{name}'; glassbox needs finite "
            "numbers (fill in or drop the rows)"
        )
    return column.tobytes()


def columns_of(estimator, X, y=None, *, reset):
    """Validates X (and, with `reset`, y) for `estimator` and returns (columns, y): columns
    is the list of (name, values) the extension takes. With `reset` (fit) it sets
    n_features_in_ and feature_names_in_; otherwise it checks X against them."""
    categorical = _categorical_columns(X)
    if not categorical:
        if not reset:
            X = _validate_data(estimator, X, reset=reset, dtype=np.float64)
        else:
            X, y = _validate_data(
                estimator, X, y, reset=reset, dtype=np.float64, y_numeric=_is_regressor(estimator)
            )
        if reset:
            names = getattr(estimator, "feature_names_in_", None)
            names = default_names(X.shape[1]) if names is None else list(map(str, names))
        else:
            # Predicting: the names it was fitted with (an array has none of its own).
            names = list(estimator._column_names)
        columns = [(names[j], _float_column(X[:, j], names[j])) for j in range(X.shape[1])]
        return columns, y
    # A DataFrame with categorical columns: the library encodes them (dummies of the levels
    # seen at fit, as the CLI does with a CSV file).
    _check_feature_names(estimator, X, reset=reset)
    _check_n_features(estimator, X, reset=reset)
    if X.shape[0] < 1:
        raise ValueError("Found array with 0 sample(s) while a minimum of 1 is required.")
    columns = []
    for name in X.columns:
        values = X[name]
        if name in categorical:
            if values.isna().any():
                raise ValueError(
                    f"Input X contains missing values in column '{name}'; fill them in or "
                    "drop the rows"
                )
            columns.append((str(name), [str(v) for v in values]))
        else:
            columns.append((str(name), _float_column(values.to_numpy(), name)))
    if reset:
        from sklearn.utils import column_or_1d

        if y is None:
            raise ValueError(
                f"{type(estimator).__name__} requires y to be passed, but the target y is None"
            )

        y = column_or_1d(y, warn=True)
        if len(y) != X.shape[0]:
            raise ValueError(
                f"Found input variables with inconsistent numbers of samples: "
                f"[{X.shape[0]}, {len(y)}]"
            )
    return columns, y


def _is_regressor(estimator):
    return getattr(estimator, "_task", None) == "regression"


def unique_name(preferred, taken):
    """`preferred`, or it with underscores appended until it is not in `taken`."""
    name = preferred
    while name in taken:
        name += "_"
    return name
