//! What crosses the border between Python and the library: columns (numbers as the bytes
//! of a float64 array, labels as lists of str) into a [`Table`], dicts (as JSON text) into
//! TOML tables, and the library's errors into Python exceptions.
//!
//! Depends on the `glassbox` crate's data and error types and PyO3.

use glassbox::data::{ColumnData, Table};
use glassbox::GlassboxError;
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};

/// The library's error as a Python exception: bad input (config, data, parameters,
/// options, model files, a backend asked for what it cannot do) is a `ValueError`, a file
/// that cannot be read or written an `OSError`, anything else a `RuntimeError`. The message
/// is the library's, which names the problem.
pub fn to_py_err(e: GlassboxError) -> PyErr {
    let message = e.to_string();
    match e {
        GlassboxError::Io { .. } => PyOSError::new_err(message),
        GlassboxError::InvalidProblem(_) => PyRuntimeError::new_err(message),
        _ => PyValueError::new_err(message),
    }
}

/// A JSON object (a Python dict dumped by `json.dumps`) as a TOML table; `null` values are
/// refused (a parameter left at its default is left out instead).
pub fn json_to_toml(text: &str) -> PyResult<toml::Table> {
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| PyValueError::new_err(e.to_string()))?;
    if !value.is_object() {
        return Err(PyValueError::new_err(format!(
            "expected a dict, got {value}"
        )));
    }
    toml::Table::try_from(value).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// A seed as a TOML integer (TOML integers are signed 64-bit); `what` names it in errors.
pub fn toml_u64(v: u64, what: &str) -> PyResult<toml::Value> {
    i64::try_from(v)
        .map(toml::Value::Integer)
        .map_err(|_| PyValueError::new_err(format!("{what} must be below 2^63, got {v}")))
}

/// The feature columns of `columns` (a list of `(name, values)`: values are the bytes of a
/// float64 array for a numeric column, a list of str for a categorical one) and the
/// target (empty to predict) as a [`Table`] named `source` in errors.
pub fn columns_table(
    source: &str,
    columns: &Bound<'_, PyList>,
    target_name: &str,
    target: Vec<String>,
) -> PyResult<Table> {
    let mut names = Vec::with_capacity(columns.len());
    let mut data = Vec::with_capacity(columns.len());
    for item in columns.iter() {
        let (name, values): (String, Bound<'_, PyAny>) = item.extract()?;
        let column = match values.downcast::<PyBytes>() {
            Ok(bytes) => ColumnData::Numeric(floats(bytes.as_bytes(), &name)?),
            Err(_) => ColumnData::Categorical(values.extract::<Vec<String>>()?),
        };
        names.push(name);
        data.push(column);
    }
    Table::from_columns(source, names, data, target_name, target).map_err(to_py_err)
}

/// The float64 values (native byte order) of `bytes`.
fn floats(bytes: &[u8], name: &str) -> PyResult<Vec<f64>> {
    if !bytes.len().is_multiple_of(8) {
        return Err(PyValueError::new_err(format!(
            "column '{name}': {} bytes is not a whole number of float64 values",
            bytes.len()
        )));
    }
    Ok(bytes
        .chunks_exact(8)
        .map(|c| f64::from_ne_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
        .collect())
}

/// `values` (row-major) as the bytes of a float64 array, for `numpy.frombuffer`.
pub fn float_bytes<'py>(py: Python<'py>, values: impl Iterator<Item = f64>) -> Bound<'py, PyBytes> {
    let bytes: Vec<u8> = values.flat_map(f64::to_ne_bytes).collect();
    PyBytes::new(py, &bytes)
}
