//! Encoding a [`Table`] into numbers: the features through a dummy [`Encoding`] fitted on
//! the table (numeric columns as they are, one 0/1 feature per level of a categorical
//! column but the first, or per level with [`DummyCoding::All`]), the target as class
//! indices ([`ClassificationData`]) or numbers ([`RegressionData`]); and reading a file to
//! predict on as a model's encoding expects it ([`read_for_model`]).
//!
//! Depends on the core's error type, `table.rs` and `split.rs` (the splits of
//! [`ClassificationData`]), and on `nalgebra` and `serde`.

use super::quoted_list;
use super::split::{kfold_impl, stratified_split_named};
use super::table::{cell_kind, CellKind, ColumnData, CsvOptions, Table};
use crate::{GlassboxError, Result};
use nalgebra::DMatrix;
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::Path;

/// Sorts labels as numbers when every one parses as a finite number (so "2" < "10"),
/// otherwise lexicographically. Ties between equal numbers ("1" and "1.0") fall back to
/// the text, so the order is total and deterministic.
fn sort_labels(labels: &mut [String]) {
    let numbers: Option<Vec<f64>> = labels
        .iter()
        .map(|s| s.parse::<f64>().ok().filter(|v| v.is_finite()))
        .collect();
    if numbers.is_some() {
        labels.sort_by(|a, b| {
            let x: f64 = a.parse().unwrap_or(0.0);
            let y: f64 = b.parse().unwrap_or(0.0);
            x.partial_cmp(&y)
                .unwrap_or(Ordering::Equal)
                .then_with(|| a.cmp(b))
        });
    } else {
        labels.sort();
    }
}

/// The sorted distinct values of `values` (see [`sort_labels`] for the order).
fn distinct_sorted(values: &[String]) -> Vec<String> {
    let set: BTreeSet<&String> = values.iter().collect();
    let mut levels: Vec<String> = set.into_iter().cloned().collect();
    sort_labels(&mut levels);
    levels
}

/// Which levels of a categorical column get a 0/1 feature (config key `data.dummies`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DummyCoding {
    /// Every level but the first (sorted), the reference, whose rows are all zeros: no
    /// feature is a linear combination of the others. The default, and the papers' coding.
    #[default]
    DropFirst,
    /// Every level: one-hot. An oblique split (bounded coefficients, the S-ORCT paper's
    /// `a x / p`) then weighs every level directly, the reference included. Not the papers'
    /// protocol (the S-ORCT paper's p is drop-first's: 11 on monks, 15 on car), but it
    /// reaches its car D=2 row (benches/README "Dummy coding").
    All,
}

impl DummyCoding {
    /// Whether this is the default (a config that does not say is unchanged).
    pub fn is_default(&self) -> bool {
        *self == DummyCoding::default()
    }
}

/// Read by hand so that a wrong value names the config key (serde's message would not).
impl<'de> Deserialize<'de> for DummyCoding {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        match text.as_str() {
            "drop_first" => Ok(DummyCoding::DropFirst),
            "all" => Ok(DummyCoding::All),
            other => Err(serde::de::Error::custom(format!(
                "dummies = {other:?}: the dummy coding is \"drop_first\" (every level but the \
                 first, the default) or \"all\" (every level)"
            ))),
        }
    }
}

/// The largest |value| of a regression target: its square and sums of a few billion such
/// squares stay finite.
pub const MAX_REGRESSION_TARGET: f64 = 1e150;

impl Table {
    /// Encodes the table for classification: the features through a drop-first dummy
    /// [`Encoding`] fitted on this table, the target as class indices into the sorted
    /// distinct target labels (numeric order when every label is a number).
    pub fn encode_classification(&self) -> Result<ClassificationData> {
        self.encode_classification_with(DummyCoding::default())
    }

    /// [`Table::encode_classification`] with the categorical columns coded by `dummies`.
    pub fn encode_classification_with(&self, dummies: DummyCoding) -> Result<ClassificationData> {
        self.check_shape()?;
        let classes = distinct_sorted(&self.target);
        if classes.len() < 2 {
            return Err(GlassboxError::data(
                &self.source,
                format!(
                    "the target column '{}' has a single class '{}': classification needs \
                     at least two",
                    self.target_name,
                    classes.first().map(String::as_str).unwrap_or("")
                ),
            ));
        }
        let index: HashMap<&str, usize> = classes
            .iter()
            .enumerate()
            .map(|(k, c)| (c.as_str(), k))
            .collect();
        let y = self.target.iter().map(|t| index[t.as_str()]).collect();
        self.check_ranges(None)?;
        let encoding = Encoding::fit_with(self, dummies);
        let feature_names = encoding.distinct_feature_names(&self.source)?;
        let x = encoding.transform(self)?;
        Ok(ClassificationData {
            x,
            y,
            classes,
            feature_names,
            source: self.source.clone(),
            encoding,
        })
    }

    /// Encodes the table for regression: the features as in
    /// [`Table::encode_classification`], the target parsed as finite numbers.
    pub fn encode_regression(&self) -> Result<RegressionData> {
        self.encode_regression_with(DummyCoding::default())
    }

    /// [`Table::encode_regression`] with the categorical columns coded by `dummies`.
    pub fn encode_regression_with(&self, dummies: DummyCoding) -> Result<RegressionData> {
        self.check_shape()?;
        let mut y = Vec::with_capacity(self.n_rows());
        for (i, t) in self.target.iter().enumerate() {
            match t.parse::<f64>() {
                Ok(v) if v.is_finite() => y.push(v),
                _ => {
                    return Err(GlassboxError::data(
                        &self.source,
                        format!(
                            "column '{}', {}: the value '{t}' is not a finite number, \
                             but a regression target must be numeric; fix the value, or use \
                             a classification formulation",
                            self.target_name,
                            self.place_of_row(i)
                        ),
                    ))
                }
            }
        }
        self.check_ranges(Some(&y))?;
        let encoding = Encoding::fit_with(self, dummies);
        let feature_names = encoding.distinct_feature_names(&self.source)?;
        let x = encoding.transform(self)?;
        Ok(RegressionData {
            x,
            y,
            feature_names,
            source: self.source.clone(),
            encoding,
        })
    }

    /// Refuses a numeric column (and a regression `target`) whose values span more than an
    /// f64 holds (max - min infinite, as from -1e308 to 1e308): features are scaled by their
    /// range, and the models' scores are sums of such values, so every solve would fail on
    /// infinities without saying why. A regression target must also stay within
    /// [`MAX_REGRESSION_TARGET`].
    fn check_ranges(&self, target: Option<&[f64]>) -> Result<()> {
        let numeric =
            self.feature_names.iter().zip(&self.columns).filter_map(
                |(name, column)| match column {
                    ColumnData::Numeric(values) => Some((name, values.as_slice())),
                    ColumnData::Categorical(_) => None,
                },
            );
        for (name, values) in numeric.chain(target.map(|y| (&self.target_name, y))) {
            let min = values.iter().copied().fold(f64::INFINITY, f64::min);
            let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            if !values.is_empty() && !(max - min).is_finite() {
                return Err(GlassboxError::data(
                    &self.source,
                    format!(
                        "column '{name}': its values span from {min:e} to {max:e}, a range \
                         beyond what a 64-bit float holds; rescale the column (or drop the \
                         rows of its extreme values)"
                    ),
                ));
            }
        }
        // A regression is fitted and judged by squared errors: targets beyond 1e150 square
        // past what a 64-bit float holds, and every objective and metric became inf / NaN.
        if let Some(y) = target {
            if let Some(i) = y.iter().position(|v| v.abs() > MAX_REGRESSION_TARGET) {
                let v = y[i];
                return Err(GlassboxError::data(
                    &self.source,
                    format!(
                        "column '{}', {}: the regression target {v:e} is beyond \
                         +-{MAX_REGRESSION_TARGET:e}, where its square (squared errors are what \
                         a regression fits and reports) overflows a 64-bit float; rescale the \
                         target (e.g. divide it by a power of ten)",
                        self.target_name,
                        self.place_of_row(i)
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Checks that the table has rows and that its columns agree in length.
    fn check_shape(&self) -> Result<()> {
        if self.n_rows() == 0 {
            return Err(GlassboxError::data(
                &self.source,
                "the table has no rows; there is nothing to learn from",
            ));
        }
        if self.columns.len() != self.feature_names.len() {
            return Err(GlassboxError::data(
                &self.source,
                format!(
                    "the table has {} feature name(s) but {} column(s)",
                    self.feature_names.len(),
                    self.columns.len()
                ),
            ));
        }
        for (name, column) in self.feature_names.iter().zip(&self.columns) {
            if column.len() != self.n_rows() {
                return Err(GlassboxError::data(
                    &self.source,
                    format!(
                        "column '{name}' has {} value(s) but the target has {}",
                        column.len(),
                        self.n_rows()
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// How one raw feature column maps to encoded features.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum ColumnEncoding {
    /// A numeric column, copied as one feature.
    Numeric {
        /// The column's name.
        name: String,
    },
    /// A categorical column, dummy coded: one 0/1 feature `"name=level"` per level in
    /// `kept`; a row at a level not kept (the first, with drop-first coding) is all zeros.
    Dummies {
        /// The column's name.
        name: String,
        /// All levels seen when fitting, sorted (numerically if every level is a number).
        levels: Vec<String>,
        /// The levels that get a feature: `levels[1..]` ([`DummyCoding::DropFirst`]) or all
        /// of them ([`DummyCoding::All`]).
        kept: Vec<String>,
    },
}

impl ColumnEncoding {
    /// The raw column's name.
    pub fn name(&self) -> &str {
        match self {
            ColumnEncoding::Numeric { name } | ColumnEncoding::Dummies { name, .. } => name,
        }
    }

    /// The number of encoded features it produces.
    pub fn width(&self) -> usize {
        match self {
            ColumnEncoding::Numeric { .. } => 1,
            ColumnEncoding::Dummies { kept, .. } => kept.len(),
        }
    }
}

/// How the raw columns of a [`Table`] map to the encoded feature matrix: for each raw
/// column, in order, either the number itself or dummies. Fitted on one table,
/// it encodes others (e.g. new data to predict on) the same way; it serializes with a model.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Encoding {
    /// One entry per raw feature column, in the table's order.
    pub columns: Vec<ColumnEncoding>,
    /// The target column of the table it was fitted on, where `glassbox predict` finds a
    /// file's labels; absent in models saved before it was recorded (`target` then).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
}

impl Encoding {
    /// Fits the encoding on `table`: numeric columns stay, categorical columns get one
    /// dummy per level but the first (sorted).
    pub fn fit(table: &Table) -> Encoding {
        Encoding::fit_with(table, DummyCoding::default())
    }

    /// Fits the encoding on `table` with the categorical columns coded by `dummies`.
    pub fn fit_with(table: &Table, dummies: DummyCoding) -> Encoding {
        let first_kept = match dummies {
            DummyCoding::DropFirst => 1,
            DummyCoding::All => 0,
        };
        let columns = table
            .feature_names
            .iter()
            .zip(&table.columns)
            .map(|(name, column)| match column {
                ColumnData::Numeric(_) => ColumnEncoding::Numeric { name: name.clone() },
                ColumnData::Categorical(values) => {
                    let levels = distinct_sorted(values);
                    let kept = levels.iter().skip(first_kept).cloned().collect();
                    ColumnEncoding::Dummies {
                        name: name.clone(),
                        levels,
                        kept,
                    }
                }
            })
            .collect();
        Encoding {
            columns,
            target: Some(table.target_name.clone()),
        }
    }

    /// The number of encoded features (p).
    pub fn n_features(&self) -> usize {
        self.columns.iter().map(ColumnEncoding::width).sum()
    }

    /// The encoded feature names: the column name for a numeric column, `"col=level"` for
    /// a dummy.
    pub fn feature_names(&self) -> Vec<String> {
        let mut out = Vec::with_capacity(self.n_features());
        for c in &self.columns {
            match c {
                ColumnEncoding::Numeric { name } => out.push(name.clone()),
                ColumnEncoding::Dummies { name, kept, .. } => {
                    out.extend(kept.iter().map(|level| format!("{name}={level}")))
                }
            }
        }
        out
    }

    /// [`Encoding::feature_names`], refused where two are the same: a dummy named like
    /// another column (level `red` of column `color` beside a column `color=red`) would
    /// make the model's splits ambiguous to read. `source` names the data in the error.
    pub fn distinct_feature_names(&self, source: &str) -> Result<Vec<String>> {
        let names = self.feature_names();
        let mut seen = HashSet::with_capacity(names.len());
        for name in &names {
            if !seen.insert(name.as_str()) {
                return Err(GlassboxError::data(
                    source,
                    format!(
                        "two features would both be named '{name}': a categorical column's \
                         level gives a dummy of the same name as another column; rename the \
                         column or the level"
                    ),
                ));
            }
        }
        Ok(names)
    }

    /// Encodes `table` (rows = samples, unscaled). Columns are matched by name, so their
    /// order in `table` does not matter; a missing column, a column of the other type, or a
    /// level not seen when fitting is an error.
    pub fn transform(&self, table: &Table) -> Result<DMatrix<f64>> {
        let n = table.n_rows();
        let mut x = DMatrix::<f64>::zeros(n, self.n_features());
        let mut offset = 0;
        let err = |m: String| GlassboxError::data(&table.source, m);
        // Column name -> index, so matching by name stays linear in the columns (10^6).
        let mut index: HashMap<&str, usize> = HashMap::with_capacity(table.feature_names.len());
        for (j, f) in table.feature_names.iter().enumerate() {
            index.entry(f.as_str()).or_insert(j);
        }
        for enc in &self.columns {
            let name = enc.name();
            let Some(&j) = index.get(name) else {
                return Err(err(format!(
                    "there is no column '{name}', which the model was trained with; the \
                     columns are {}",
                    quoted_list(&table.feature_names)
                )));
            };
            let column = &table.columns[j];
            if column.len() != n {
                return Err(err(format!(
                    "column '{name}' has {} value(s) but the table has {n} row(s)",
                    column.len()
                )));
            }
            match (enc, column) {
                (ColumnEncoding::Numeric { .. }, ColumnData::Numeric(values)) => {
                    for (i, v) in values.iter().enumerate() {
                        x[(i, offset)] = *v;
                    }
                }
                (ColumnEncoding::Dummies { levels, kept, .. }, ColumnData::Categorical(values)) => {
                    let position: HashMap<&str, Option<usize>> = levels
                        .iter()
                        .map(|l| (l.as_str(), kept.iter().position(|k| k == l)))
                        .collect();
                    for (i, v) in values.iter().enumerate() {
                        match position.get(v.as_str()) {
                            Some(Some(k)) => x[(i, offset + k)] = 1.0,
                            Some(None) => {}
                            None => {
                                return Err(err(format!(
                                    "column '{name}', {}: the level '{v}' was not seen \
                                     when the encoding was fitted (known levels: {}); map it \
                                     to a known level or refit on data that includes it",
                                    table.place_of_row(i),
                                    quoted_list(levels)
                                )))
                            }
                        }
                    }
                }
                (ColumnEncoding::Numeric { .. }, ColumnData::Categorical(values)) => {
                    let (i, v) = values
                        .iter()
                        .enumerate()
                        .find(|(_, v)| !matches!(cell_kind(v), CellKind::Number))
                        .unwrap_or((0, &values[0]));
                    return Err(err(format!(
                        "column '{name}', {}: the value '{v}' is not a number, but the \
                         column was numeric when the encoding was fitted",
                        table.place_of_row(i)
                    )));
                }
                (ColumnEncoding::Dummies { .. }, ColumnData::Numeric(_)) => {
                    return Err(err(format!(
                        "column '{name}' holds numbers, but it was categorical when the \
                         encoding was fitted; declare it in `data.categorical` (a CSV file) \
                         or give it a string or category dtype (a DataFrame)"
                    )));
                }
            }
            offset += enc.width();
        }
        Ok(x)
    }
}

/// A table encoded for classification.
#[derive(Clone, Debug, PartialEq)]
pub struct ClassificationData {
    /// The encoded features, unscaled; one row per sample, one column per encoded feature.
    pub x: DMatrix<f64>,
    /// The class index of each sample, into `classes`.
    pub y: Vec<usize>,
    /// The class labels, sorted (numerically when every label is a number).
    pub classes: Vec<String>,
    /// The encoded feature names (`"col=level"` for dummies).
    pub feature_names: Vec<String>,
    /// Where the data came from.
    pub source: String,
    /// How the raw columns were encoded (to encode new data the same way).
    pub encoding: Encoding,
}

impl ClassificationData {
    /// The samples at `idx` (in that order), with everything else unchanged.
    ///
    /// # Panics
    /// If an index is out of range (a programming error, not bad input).
    pub fn rows(&self, idx: &[usize]) -> ClassificationData {
        ClassificationData {
            x: self.x.select_rows(idx.iter()),
            y: idx.iter().map(|&i| self.y[i]).collect(),
            classes: self.classes.clone(),
            feature_names: self.feature_names.clone(),
            source: self.source.clone(),
            encoding: self.encoding.clone(),
        }
    }

    /// The number of samples (N).
    pub fn n_samples(&self) -> usize {
        self.y.len()
    }

    /// The number of encoded features (p).
    pub fn n_features(&self) -> usize {
        self.x.ncols()
    }

    /// The number of classes (K), including classes absent from a subset made by `rows`.
    pub fn n_classes(&self) -> usize {
        self.classes.len()
    }

    /// How many samples each class has, indexed like `classes`.
    pub fn class_counts(&self) -> Vec<usize> {
        let mut counts = vec![0; self.n_classes()];
        for &k in &self.y {
            if k < counts.len() {
                counts[k] += 1;
            }
        }
        counts
    }

    /// [`super::stratified_split`] of these samples, with errors that name the file and
    /// class.
    pub fn stratified_split(
        &self,
        test_fraction: f64,
        seed: u64,
    ) -> Result<(Vec<usize>, Vec<usize>)> {
        stratified_split_named(&self.y, test_fraction, seed, &self.source, &self.classes)
    }

    /// [`super::stratified_kfold`] of these samples, with errors that name the file.
    pub fn stratified_kfold(&self, k: usize, seed: u64) -> Result<Vec<(Vec<usize>, Vec<usize>)>> {
        kfold_impl(&self.y, k, seed, &self.source)
    }
}

/// A table encoded for regression.
#[derive(Clone, Debug, PartialEq)]
pub struct RegressionData {
    /// The encoded features, unscaled; one row per sample.
    pub x: DMatrix<f64>,
    /// The target values.
    pub y: Vec<f64>,
    /// The encoded feature names (`"col=level"` for dummies).
    pub feature_names: Vec<String>,
    /// Where the data came from.
    pub source: String,
    /// How the raw columns were encoded.
    pub encoding: Encoding,
}

impl RegressionData {
    /// The samples at `idx` (in that order).
    ///
    /// # Panics
    /// If an index is out of range (a programming error, not bad input).
    pub fn rows(&self, idx: &[usize]) -> RegressionData {
        RegressionData {
            x: self.x.select_rows(idx.iter()),
            y: idx.iter().map(|&i| self.y[i]).collect(),
            feature_names: self.feature_names.clone(),
            source: self.source.clone(),
            encoding: self.encoding.clone(),
        }
    }

    /// The number of samples (N).
    pub fn n_samples(&self) -> usize {
        self.y.len()
    }

    /// The number of encoded features (p).
    pub fn n_features(&self) -> usize {
        self.x.ncols()
    }
}

/// Reads the CSV file `data_path` for a model with `encoding`: the model's columns only (a
/// column it does not use is not read), its categorical columns as the model's, and the
/// target column `target`, optional (a file to predict on may lack it).
pub fn read_table_for_model(encoding: &Encoding, data_path: &Path, target: &str) -> Result<Table> {
    if encoding.columns.iter().any(|c| c.name() == target) {
        return Err(GlassboxError::data(
            data_path.display().to_string(),
            format!(
                "'{target}' is one of the model's feature columns, so it cannot be the \
                 target: name the label column with --target"
            ),
        ));
    }
    let options = CsvOptions {
        target: target.to_string(),
        categorical: encoding
            .columns
            .iter()
            .filter(|c| matches!(c, ColumnEncoding::Dummies { .. }))
            .map(|c| c.name().to_string())
            .collect(),
        drop_missing: false,
        target_optional: true,
        only_columns: Some(
            encoding
                .columns
                .iter()
                .map(|c| c.name().to_string())
                .collect(),
        ),
    };
    Table::from_csv(data_path, &options)
}

/// [`read_table_for_model`], and the table's features encoded as the model's.
pub fn read_for_model(
    encoding: &Encoding,
    data_path: &Path,
    target: &str,
) -> Result<(Table, DMatrix<f64>)> {
    let table = read_table_for_model(encoding, data_path, target)?;
    let x = encoding.transform(&table)?;
    Ok((table, x))
}

/// Refuses a model's outputs on `table` (one row of `outputs` per row of the table) where
/// one is not a finite number. The features are finite, but a huge one overflows a linear
/// score (1e308 times a weight is infinite, and infinite scores of both signs give NaN), so
/// the row is named with its largest value, rather than NaN written as a prediction.
pub fn check_finite_outputs(outputs: &DMatrix<f64>, table: &Table) -> Result<()> {
    let row = (0..outputs.nrows()).find(|&i| outputs.row(i).iter().any(|v| !v.is_finite()));
    refuse_overflowed_row(row, table)
}

/// [`check_finite_outputs`] for one output per row (a regressor's predictions).
pub fn check_finite_predictions(predictions: &[f64], table: &Table) -> Result<()> {
    refuse_overflowed_row(predictions.iter().position(|v| !v.is_finite()), table)
}

fn refuse_overflowed_row(row: Option<usize>, table: &Table) -> Result<()> {
    let Some(i) = row else {
        return Ok(());
    };
    let largest = table
        .feature_names
        .iter()
        .zip(&table.columns)
        .filter_map(|(name, column)| match column {
            ColumnData::Numeric(values) => Some((name, values[i])),
            ColumnData::Categorical(_) => None,
        })
        .max_by(|a, b| a.1.abs().total_cmp(&b.1.abs()));
    let cause = match largest {
        Some((name, v)) => format!(
            "its largest value, {v:e} in column '{name}', overflows the model's scores; \
             rescale the column or drop the row"
        ),
        None => "drop the row".to_string(),
    };
    Err(GlassboxError::data(
        &table.source,
        format!(
            "{}: the model's output for this row is not a finite number: {cause}",
            table.place_of_row(i)
        ),
    ))
}
