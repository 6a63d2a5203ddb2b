//! Data loading and preprocessing, one concern a file:
//! - `table.rs`: reading a CSV file into a typed [`Table`] (header, missing cells, column
//!   typing), and joining two tables ([`Table::append`]);
//! - `encoding.rs`: encoding a table into a numeric matrix for classification
//!   ([`ClassificationData`]) or regression ([`RegressionData`]) through a dummy
//!   [`Encoding`] (drop-first, or one-hot: [`DummyCoding`]) that a model keeps to encode
//!   new data alike ([`read_for_model`]), whose outputs on it must be finite
//!   ([`check_finite_outputs`]);
//! - `scaling.rs`: min-max scaling fitted on training rows ([`MinMaxScaler`]);
//! - `split.rs`: seeded stratified splits ([`stratified_split`], [`stratified_kfold`]) and a
//!   seeded random split for regression ([`random_split`]).
//!
//! The synthetic oblique data set for demos and tests is made in [`crate::synthetic`]
//! (beside the other generator) and re-exported here as [`synthetic_oblique`], where
//! callers have always found it.
//!
//! Depends on the core's error type ([`crate::GlassboxError`]) and on `nalgebra`, `csv`,
//! `serde`, `rand` and `rand_chacha`; nothing else in glassbox but the re-export of
//! [`crate::synthetic::synthetic_oblique`].
//!
//! Bad input is never a panic: every problem in a file is a [`crate::GlassboxError::Data`]
//! whose message names the column, the line of the file (1-based, the header is line 1)
//! and the offending value, and says how to fix it.

mod encoding;
mod scaling;
mod split;
mod table;

pub use crate::synthetic::synthetic_oblique;
pub use encoding::{
    check_finite_outputs, check_finite_predictions, read_for_model, read_table_for_model,
    ClassificationData, ColumnEncoding, DummyCoding, Encoding, RegressionData,
};
pub use scaling::MinMaxScaler;
pub use split::{random_split, stratified_kfold, stratified_split, stratified_split_named};
pub use table::{ColumnData, CsvOptions, Table};

/// Lists names for an error message: `'a', 'b', 'c'`.
fn quoted_list(names: &[String]) -> String {
    names
        .iter()
        .map(|n| format!("'{n}'"))
        .collect::<Vec<_>>()
        .join(", ")
}
