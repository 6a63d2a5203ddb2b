//! A fitted model as Python holds it: any registered formulation's model behind the
//! library's `FittedModel` trait, with the formulation's name. It predicts on columns,
//! describes itself (the rules in the user's units, as `glassbox show`), draws itself (as
//! `glassbox draw`), and reads and writes the CLI's model files (`save_fitted` and the
//! registry's loader), so a model fitted here is shown by the CLI and one fitted by the CLI
//! predicts here.
//!
//! Depends on the `glassbox` crate's registry and model types and PyO3.

use crate::convert::{columns_table, float_bytes, to_py_err};
use glassbox::data::{
    check_finite_outputs, check_finite_predictions, ColumnEncoding, Encoding, Table,
};
use glassbox::model::{save_fitted, FittedModel};
use glassbox::registry::Registry;
use glassbox::GlassboxError;
use nalgebra::DMatrix;
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};
use std::path::{Path, PathBuf};

/// A fitted model (see the module comment).
#[pyclass(module = "glassbox._native", frozen)]
pub struct Model {
    kind: String,
    inner: Box<dyn FittedModel>,
}

impl Model {
    /// The model `inner` of formulation `kind`.
    pub fn new(kind: String, inner: Box<dyn FittedModel>) -> Self {
        Model { kind, inner }
    }

    fn encoding(&self) -> PyResult<&Encoding> {
        match (self.inner.as_classifier(), self.inner.as_regressor()) {
            (Some(c), _) => Ok(c.encoding()),
            (None, Some(r)) => Ok(r.encoding()),
            (None, None) => Err(PyValueError::new_err(format!(
                "a '{}' model neither classifies nor predicts numbers",
                self.kind
            ))),
        }
    }

    /// The rows of `columns` (a list of `(name, values)`) as a table, and their features
    /// encoded as the model's.
    fn features(&self, columns: &Bound<'_, PyList>) -> PyResult<(Table, DMatrix<f64>)> {
        let table = columns_table("the data to predict on", columns, "\u{0}target", Vec::new())?;
        let x = self.encoding()?.transform(&table).map_err(to_py_err)?;
        Ok((table, x))
    }
}

#[pymethods]
impl Model {
    /// The formulation that made it (the `glassbox_model` tag of its file).
    #[getter]
    fn kind(&self) -> &str {
        &self.kind
    }

    /// Whether it predicts numbers (else it classifies).
    #[getter]
    fn is_regressor(&self) -> bool {
        self.inner.as_regressor().is_some()
    }

    /// The class labels, in the order of the columns of `predict_proba` (none for a
    /// regressor).
    #[getter]
    fn classes(&self) -> Option<Vec<String>> {
        self.inner.as_classifier().map(|c| c.classes().to_vec())
    }

    /// The raw columns it reads, in order, each `(name, levels)`: levels is None for a
    /// numeric column, the categories seen at fit for a dummy-coded one.
    #[getter]
    fn columns(&self) -> PyResult<Vec<(String, Option<Vec<String>>)>> {
        Ok(self
            .encoding()?
            .columns
            .iter()
            .map(|c| match c {
                ColumnEncoding::Numeric { name } => (name.clone(), None),
                ColumnEncoding::Dummies { name, levels, .. } => {
                    (name.clone(), Some(levels.clone()))
                }
            })
            .collect())
    }

    /// The encoded feature names (`"column=level"` for a dummy).
    #[getter]
    fn feature_names(&self) -> PyResult<Vec<String>> {
        Ok(self.encoding()?.feature_names())
    }

    /// Class probabilities of the rows of `columns`: the bytes of a row-major float64 array
    /// (rows x classes).
    fn predict_proba<'py>(
        &self,
        py: Python<'py>,
        columns: &Bound<'py, PyList>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        if self.inner.as_classifier().is_none() {
            return Err(PyValueError::new_err(format!(
                "a '{}' regressor has no class probabilities",
                self.kind
            )));
        }
        let (table, x) = self.features(columns)?;
        let inner = &self.inner;
        let proba = py
            .allow_threads(|| inner.as_classifier().map(|c| c.predict_proba(&x)))
            .unwrap_or_default();
        check_finite_outputs(&proba, &table).map_err(to_py_err)?;
        Ok(float_bytes(
            py,
            (0..proba.nrows()).flat_map(|i| proba.row(i).iter().copied().collect::<Vec<_>>()),
        ))
    }

    /// Predictions of a regressor on the rows of `columns`: the bytes of a float64 array.
    fn predict_values<'py>(
        &self,
        py: Python<'py>,
        columns: &Bound<'py, PyList>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        if self.inner.as_regressor().is_none() {
            return Err(PyValueError::new_err(format!(
                "a '{}' classifier predicts classes, not numbers",
                self.kind
            )));
        }
        let (table, x) = self.features(columns)?;
        let inner = &self.inner;
        let y = py
            .allow_threads(|| inner.as_regressor().map(|r| r.predict(&x)))
            .unwrap_or_default();
        check_finite_predictions(&y, &table).map_err(to_py_err)?;
        Ok(float_bytes(py, y.into_iter()))
    }

    /// The model as text a person reads (its rules in the user's units, its leaves or
    /// points, its sparsity), as `glassbox show` prints it.
    fn describe(&self) -> String {
        self.inner.describe()
    }

    /// The `model` field of its saved file, as JSON text.
    fn model_json(&self) -> PyResult<String> {
        let json = self.inner.to_json().map_err(to_py_err)?;
        Ok(json.to_string())
    }

    /// Saves it at `path` as `glassbox run` saves a model (the same file format).
    fn save(&self, path: PathBuf) -> PyResult<()> {
        save_fitted(&path, &self.kind, self.inner.as_ref()).map_err(to_py_err)
    }

    /// Its saved file's text.
    fn to_json(&self) -> PyResult<String> {
        let dir = tempfile::tempdir().map_err(|e| PyOSError::new_err(e.to_string()))?;
        let path = dir.path().join("model.json");
        self.save(path.clone())?;
        std::fs::read_to_string(&path).map_err(|e| PyOSError::new_err(e.to_string()))
    }

    /// Whether it draws as a tree.
    #[getter]
    fn draws(&self) -> bool {
        self.inner.diagram().is_some()
    }

    /// The drawing of its tree as PNG (or SVG with `svg`) bytes and a note (e.g. drawn
    /// without text for want of a font), as `glassbox draw` writes it; None when it is not
    /// a tree.
    #[pyo3(signature = (svg=false))]
    fn draw<'py>(
        &self,
        py: Python<'py>,
        svg: bool,
    ) -> PyResult<Option<(Bound<'py, PyBytes>, Option<String>)>> {
        let Some(diagram) = self.inner.diagram() else {
            return Ok(None);
        };
        let dir = tempfile::tempdir().map_err(|e| PyOSError::new_err(e.to_string()))?;
        let path = dir.path().join(if svg { "tree.svg" } else { "tree.png" });
        let note = diagram.save(&path).map_err(to_py_err)?;
        let bytes = std::fs::read(&path).map_err(|e| PyOSError::new_err(e.to_string()))?;
        Ok(Some((PyBytes::new(py, &bytes), note)))
    }
}

/// Loads the model file at `path` (made by `glassbox run` or by `Model.save`) through the
/// registry's loader, which checks it.
#[pyfunction]
pub fn load_model(path: PathBuf) -> PyResult<Model> {
    load(&path)
}

/// Loads a model from its file's text (unpickling). Errors name "the pickled model", not
/// the temporary file it passes through.
#[pyfunction]
pub fn load_model_text(text: &str) -> PyResult<Model> {
    let dir = tempfile::tempdir().map_err(|e| PyOSError::new_err(e.to_string()))?;
    let path = dir.path().join("model.json");
    std::fs::write(&path, text).map_err(|e| PyOSError::new_err(e.to_string()))?;
    load_checked(&path)
        .map_err(|e| match e {
            GlassboxError::Model { message, .. } => GlassboxError::Model {
                file: "the pickled model".to_string(),
                message,
            },
            other => other,
        })
        .map_err(to_py_err)
}

fn load(path: &Path) -> PyResult<Model> {
    load_checked(path).map_err(to_py_err)
}

fn load_checked(path: &Path) -> glassbox::Result<Model> {
    let loaded = Registry::shared_builtin().load_model(path)?;
    Ok(Model::new(loaded.kind, loaded.model))
}
