//! Min-max scaling of the encoded features to [0, 1], fitted on the training rows
//! ([`MinMaxScaler`]), and its inverse.
//!
//! Depends on `encoding.rs` (a scaler read with a model is checked against its encoding),
//! `nalgebra` and `serde`.

use super::encoding::Encoding;
use nalgebra::DMatrix;
use serde::{Deserialize, Serialize};

/// Min-max scaling of each feature to [0, 1], fitted on the training rows only (the caller
/// passes the training matrix to [`MinMaxScaler::fit`]).
///
/// [`MinMaxScaler::transform`] does **not** clip: a test row outside the training range maps
/// outside [0, 1], as in scikit-learn's default, so that a model sees the data as it is. A
/// constant column has scale 1 and maps to `x - min` (0 for the training rows).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MinMaxScaler {
    /// Per feature, the smallest training value.
    pub min: Vec<f64>,
    /// Per feature, the largest training value.
    pub max: Vec<f64>,
}

impl MinMaxScaler {
    /// Fits on `x` (rows = samples). With no rows, every feature gets min 0 and max 0.
    pub fn fit(x: &DMatrix<f64>) -> Self {
        let mut min = vec![0.0; x.ncols()];
        let mut max = vec![0.0; x.ncols()];
        if x.nrows() > 0 {
            for (j, column) in x.column_iter().enumerate() {
                min[j] = column.iter().copied().fold(f64::INFINITY, f64::min);
                max[j] = column.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            }
        }
        MinMaxScaler { min, max }
    }

    /// The number of features it was fitted on.
    pub fn n_features(&self) -> usize {
        self.min.len()
    }

    /// Checks, for a model read from a file, that the scaler fits `encoding`'s features
    /// (predicting relies on it); the message says what disagrees.
    pub fn check_against(&self, encoding: &Encoding) -> std::result::Result<(), String> {
        let p = encoding.n_features();
        if self.min.len() != p || self.max.len() != p {
            return Err(format!(
                "the scaler has {} minimum(s) and {} maximum(s) but the encoding gives {p} features",
                self.min.len(),
                self.max.len()
            ));
        }
        Ok(())
    }

    /// The scale of feature `j`: `max - min`, or 1 for a constant column.
    ///
    /// # Panics
    /// If `j` is out of range.
    pub fn scale_of(&self, j: usize) -> f64 {
        let scale = self.max[j] - self.min[j];
        if scale > 0.0 && scale.is_finite() {
            scale
        } else {
            1.0
        }
    }

    /// `(x - min) / scale`, column by column; no clipping (see the type's documentation).
    ///
    /// # Panics
    /// If `x` has a different number of columns than the matrix it was fitted on.
    pub fn transform(&self, x: &DMatrix<f64>) -> DMatrix<f64> {
        assert_eq!(
            x.ncols(),
            self.n_features(),
            "MinMaxScaler fitted on {} features, applied to {}",
            self.n_features(),
            x.ncols()
        );
        let mut out = x.clone();
        for (j, mut column) in out.column_iter_mut().enumerate() {
            let (min, scale) = (self.min[j], self.scale_of(j));
            column.apply(|v| *v = (*v - min) / scale);
        }
        out
    }

    /// The inverse of [`MinMaxScaler::transform`]: `z * scale + min`.
    ///
    /// # Panics
    /// If `z` has a different number of columns than the matrix it was fitted on.
    pub fn inverse_transform(&self, z: &DMatrix<f64>) -> DMatrix<f64> {
        assert_eq!(z.ncols(), self.n_features());
        let mut out = z.clone();
        for (j, mut column) in out.column_iter_mut().enumerate() {
            let (min, scale) = (self.min[j], self.scale_of(j));
            column.apply(|v| *v = *v * scale + min);
        }
        out
    }
}
