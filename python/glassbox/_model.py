"""A fitted model on the Python side: the extension's model (any formulation's), pickled
as the text of its CLI model file, with numpy results, the drawing shown inline by Jupyter,
and the papers' quantities read from the model file as fitted attributes."""

import json

import numpy as np

# Fields of a model file named as the estimators' fitted attributes, the papers' quantities
# under clear names (a field not listed keeps its own name plus "_"). The file's own
# bookkeeping (classes, encoding, scaler) is in other attributes.
CLEAR_NAMES = {
    "a": "branch_coefficients_",
    "mu": "branch_intercepts_",
    "c": "leaf_class_probabilities_",
    "leaf_a": "leaf_coefficients_",
    "leaf_mu": "leaf_intercepts_",
    "points": "points_",
    "thresholds": "thresholds_",
    "intercept": "intercept_",
}
BOOKKEEPING = {"classes", "feature_names", "encoding", "scaler", "task", "target", "version"}
# Attributes scikit-learn or the estimators set themselves: a model field of that name
# keeps its name with a "model_" prefix.
RESERVED = {"classes_", "n_features_in_", "feature_names_in_", "solve_result_", "solve_records_"}


class FittedModel:
    """The extension's model with numpy in and out (pickled as its model file's text)."""

    def __init__(self, native):
        self._native = native

    def __reduce__(self):
        return (_from_text, (self._native.to_json(),))

    @property
    def kind(self):
        return self._native.kind

    @property
    def classes(self):
        return self._native.classes

    @property
    def column_names(self):
        return [name for name, _ in self._native.columns]

    def predict_proba(self, columns):
        n_classes = len(self._native.classes)
        values = np.frombuffer(self._native.predict_proba(columns), dtype=np.float64)
        return values.reshape(-1, n_classes).copy()

    def predict_values(self, columns):
        return np.frombuffer(self._native.predict_values(columns), dtype=np.float64).copy()

    def describe(self):
        return self._native.describe()

    def to_json(self):
        return self._native.to_json()

    def save(self, path):
        self._native.save(path)

    def model_json(self):
        return json.loads(self._native.model_json())

    def drawing(self):
        drawn = self._native.draw()
        if drawn is None:
            return Text(self.describe())
        png, note = drawn
        return Drawing(png, note)


def _from_text(text):
    from . import _native

    return FittedModel(_native.load_model_text(text))


def _array(value):
    """A matrix as nalgebra writes it ([column-major data, rows, columns]) as a numpy array;
    a list of numbers as a vector; anything else as it is."""
    if (
        isinstance(value, list)
        and len(value) == 3
        and isinstance(value[0], list)
        and isinstance(value[1], int)
        and isinstance(value[2], int)
        and len(value[0]) == value[1] * value[2]
        and all(isinstance(v, (int, float)) for v in value[0])
    ):
        rows, cols = value[1], value[2]
        return np.array(value[0], dtype=np.float64).reshape(cols, rows).T
    if isinstance(value, list) and value and all(
        isinstance(v, (int, float)) and not isinstance(v, bool) for v in value
    ):
        return np.array(value)
    return value


def model_attributes(fitted):
    """The fitted attributes read from the model file's fields (see CLEAR_NAMES)."""
    out = {}
    fields = fitted.model_json()
    if not isinstance(fields, dict):
        return out
    for field, value in fields.items():
        if field in BOOKKEEPING:
            continue
        name = CLEAR_NAMES.get(field, f"{field}_")
        if name in RESERVED:
            name = f"model_{name}"
        out[name] = _array(value)
    return out


class Drawing:
    """A tree drawn as PNG (`glassbox draw`'s drawing): Jupyter shows it inline; `save`
    writes it; `png` holds the bytes; `note` says what is missing from it, if anything."""

    def __init__(self, png, note=None):
        self.png = bytes(png)
        self.note = note

    def _repr_png_(self):
        return self.png

    def save(self, path):
        with open(path, "wb") as out:
            out.write(self.png)

    def show(self):
        """Shows it with matplotlib (outside Jupyter)."""
        import io

        import matplotlib.image as mpimg
        import matplotlib.pyplot as plt

        image = mpimg.imread(io.BytesIO(self.png), format="png")
        plt.figure(figsize=(image.shape[1] / 100, image.shape[0] / 100))
        plt.imshow(image)
        plt.axis("off")
        plt.show()


class Text:
    """A model that is not a tree (a score card), shown as its text (`glassbox show`)."""

    def __init__(self, text):
        self.text = text

    def __repr__(self):
        return self.text

    def _repr_html_(self):
        import html

        return f"<pre>{html.escape(self.text)}</pre>"
