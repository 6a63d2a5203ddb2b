//! Iris for the S-ORCT backend tests (`tests/sorct_fit.rs`, `tests/gradient_backend.rs`,
//! `tests/gradient_best_of_starts.rs` and, with the `torch` feature, `tests/torch_backend.rs`):
//! the training rows of its first stratified 75/25 split (seed 1), scaled on themselves.

#![allow(dead_code)]

use glassbox::data::{self, ClassificationData, CsvOptions, MinMaxScaler, Table};
use nalgebra::DMatrix;
use std::path::Path;

/// The training rows as encoded, the min-max scaler fitted on them, and their features
/// scaled by it.
pub fn iris_train_rows() -> (DMatrix<f64>, MinMaxScaler, ClassificationData) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/datasets/iris.csv");
    let data = Table::from_csv(&path, &CsvOptions::default())
        .unwrap()
        .encode_classification()
        .unwrap();
    let (train, _) = data::stratified_split(&data.y, 0.25, 1).unwrap();
    let train = data.rows(&train);
    let scaler = MinMaxScaler::fit(&train.x);
    (scaler.transform(&train.x), scaler, train)
}

/// The scaled features and the class labels of [`iris_train_rows`].
pub fn iris_train() -> (DMatrix<f64>, Vec<usize>) {
    let (x, _, train) = iris_train_rows();
    (x, train.y)
}
