//! Data loading and preprocessing: reading a CSV file into a typed [`Table`], encoding it
//! into a numeric matrix for classification ([`ClassificationData`]) or regression
//! ([`RegressionData`]), min-max scaling fitted on training rows ([`MinMaxScaler`]),
//! seeded stratified splits ([`stratified_split`], [`stratified_kfold`]), a seeded random
//! split for regression ([`random_split`]) and a synthetic
//! oblique data set for demos and tests ([`synthetic_oblique`]).
//!
//! Depends on the core's error type ([`crate::GlassboxError`]) and on `nalgebra`, `csv`,
//! `serde`, `rand` and `rand_chacha`; nothing else in glassbox.
//!
//! Bad input is never a panic: every problem in a file is a [`crate::GlassboxError::Data`]
//! whose message names the column, the line of the file (1-based, the header is line 1)
//! and the offending value, and says how to fix it.

use crate::{GlassboxError, Result};
use nalgebra::DMatrix;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;
use std::collections::{BTreeSet, HashMap};
use std::path::Path;

/// How to read a CSV file (the `[data]` table of a config).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CsvOptions {
    /// The name of the target (label) column. Default `"target"`.
    pub target: String,
    /// Columns to treat as categorical even if their values look like numbers (config key
    /// `data.categorical`). Columns whose every value is non-numeric are detected as
    /// categorical without being listed.
    pub categorical: Vec<String>,
    /// Drop rows with a missing cell (empty or `?`) instead of failing. Default `false`.
    pub drop_missing: bool,
    /// Accept a file without the target column (new data to predict on); the table's
    /// `target` is then empty. Not a config key.
    #[serde(skip)]
    pub target_optional: bool,
}

impl Default for CsvOptions {
    fn default() -> Self {
        CsvOptions {
            target: "target".to_string(),
            categorical: Vec::new(),
            drop_missing: false,
            target_optional: false,
        }
    }
}

/// The values of one feature column of a [`Table`].
#[derive(Clone, Debug, PartialEq)]
pub enum ColumnData {
    /// Every value is a finite number.
    Numeric(Vec<f64>),
    /// Category labels (trimmed text), declared in [`CsvOptions::categorical`] or detected
    /// because no value is a number.
    Categorical(Vec<String>),
}

impl ColumnData {
    /// The number of values.
    pub fn len(&self) -> usize {
        match self {
            ColumnData::Numeric(v) => v.len(),
            ColumnData::Categorical(v) => v.len(),
        }
    }

    /// Whether the column has no values.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A typed table read from a CSV file (or made up by [`synthetic_oblique`]): feature
/// columns, in file order, and the raw target column.
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    /// Where the data came from: the file path, or a synthetic name.
    pub source: String,
    /// The names of the feature columns (every column but the target), in file order.
    pub feature_names: Vec<String>,
    /// The feature columns, aligned with `feature_names`.
    pub columns: Vec<ColumnData>,
    /// The name of the target column.
    pub target_name: String,
    /// The target values as (trimmed) text.
    pub target: Vec<String>,
    /// For each row, the 1-based line of the file it was read from (the header is line 1),
    /// so that later errors can point at the file.
    pub line_numbers: Vec<usize>,
}

/// What a cell looks like, for type detection.
enum CellKind {
    Number,
    NonFinite,
    Text,
}

fn cell_kind(s: &str) -> CellKind {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() => CellKind::Number,
        Ok(_) => CellKind::NonFinite,
        Err(_) => CellKind::Text,
    }
}

fn is_missing(s: &str) -> bool {
    s.is_empty() || s == "?"
}

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

/// Lists names for an error message: `'a', 'b', 'c'`.
fn quoted_list(names: &[String]) -> String {
    names
        .iter()
        .map(|n| format!("'{n}'"))
        .collect::<Vec<_>>()
        .join(", ")
}

impl Table {
    /// Reads a CSV file with a header row. See [`Table::from_reader`] for the rules.
    pub fn from_csv(path: &Path, options: &CsvOptions) -> Result<Table> {
        let file = std::fs::File::open(path).map_err(|e| GlassboxError::io(path, e))?;
        Table::from_reader(&path.display().to_string(), file, options)
    }

    /// Reads CSV text with a header row from `reader`; `source` names it in errors.
    ///
    /// - Header names are trimmed; they must be non-empty and distinct. The target column
    ///   is found by name ([`CsvOptions::target`]).
    /// - Every row has one value per column. Cells are trimmed; an empty cell or `?` is
    ///   missing, which is an error unless [`CsvOptions::drop_missing`] is set, in which
    ///   case the row is dropped.
    /// - A feature column is categorical if it is listed in [`CsvOptions::categorical`] or
    ///   if none of its values is a number; otherwise every value must be a finite number
    ///   (a column mixing numbers and text, or holding `nan` / `inf`, is an error).
    pub fn from_reader<R: std::io::Read>(
        source: &str,
        reader: R,
        options: &CsvOptions,
    ) -> Result<Table> {
        let err = |message: String| GlassboxError::data(source, message);
        let mut csv_reader = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .from_reader(reader);

        let mut header: Option<Vec<String>> = None;
        // Header name -> column (0-based), to find duplicates in linear time (10^6 columns).
        let mut seen: HashMap<String, usize> = HashMap::new();
        let mut rows: Vec<Vec<String>> = Vec::new();
        let mut lines: Vec<usize> = Vec::new();
        for record in csv_reader.byte_records() {
            let record = record.map_err(|e| {
                let at = e
                    .position()
                    .map(|p| format!("line {}: ", p.line()))
                    .unwrap_or_default();
                err(format!(
                    "{at}the file could not be read as CSV ({e}); check that it is a \
                     comma-separated text file"
                ))
            })?;
            let line = record.position().map(|p| p.line() as usize).unwrap_or(0);
            match &header {
                None => {
                    let mut names = Vec::with_capacity(record.len());
                    for (j, field) in record.iter().enumerate() {
                        let text = std::str::from_utf8(field).map_err(|_| {
                            err(format!(
                                "line {line}, header column {}: the name {} is not valid \
                                 UTF-8; save the file as UTF-8",
                                j + 1,
                                String::from_utf8_lossy(field)
                            ))
                        })?;
                        let mut name = text.trim();
                        if j == 0 {
                            name = name.trim_start_matches('\u{feff}').trim();
                        }
                        if name.is_empty() {
                            return Err(err(format!(
                                "line {line}: column {} of the header has no name; give \
                                 every column a name in the header row",
                                j + 1
                            )));
                        }
                        if let Some(&first) = seen.get(name) {
                            return Err(err(format!(
                                "line {line}: the column name '{name}' appears twice in the \
                                 header (columns {} and {}); rename one of them",
                                first + 1,
                                j + 1
                            )));
                        }
                        seen.insert(name.to_string(), j);
                        names.push(name.to_string());
                    }
                    header = Some(names);
                }
                Some(names) => {
                    if record.len() != names.len() {
                        return Err(err(format!(
                            "line {line} has {} field(s) but the header has {} column(s); \
                             every row needs one value per column (look for a missing or \
                             extra comma, or quote values that contain commas)",
                            record.len(),
                            names.len()
                        )));
                    }
                    let mut cells = Vec::with_capacity(record.len());
                    for (j, field) in record.iter().enumerate() {
                        let text = std::str::from_utf8(field).map_err(|_| {
                            err(format!(
                                "column '{}', line {line}: the value {:?} is not valid \
                                 UTF-8; save the file as UTF-8",
                                names[j],
                                String::from_utf8_lossy(field)
                            ))
                        })?;
                        cells.push(text.trim().to_string());
                    }
                    rows.push(cells);
                    lines.push(line);
                }
            }
        }

        let target_name = options.target.trim().to_string();
        let Some(names) = header else {
            return Err(err(format!(
                "the file is empty; expected a header row naming the columns (including \
                 the target column '{target_name}') followed by data rows"
            )));
        };
        if rows.is_empty() {
            return Err(err(
                "the file has a header row but no data rows; add data rows below the header"
                    .to_string(),
            ));
        }

        let target_index = names.iter().position(|n| *n == target_name);
        if target_index.is_none() && !options.target_optional {
            return Err(err(format!(
                "there is no target column '{target_name}'; the columns are {}; name the \
                 target column with the config key `data.target`",
                quoted_list(&names)
            )));
        }

        let mut declared = vec![false; names.len()];
        for requested in &options.categorical {
            let requested = requested.trim();
            match names.iter().position(|n| n == requested) {
                None => {
                    return Err(err(format!(
                        "'{requested}' is listed in `data.categorical` but is not a column; \
                         the columns are {}",
                        quoted_list(&names)
                    )))
                }
                Some(j) if Some(j) == target_index => {
                    return Err(err(format!(
                        "'{requested}' is the target column; remove it from \
                         `data.categorical` (classification targets are always treated as \
                         labels)"
                    )))
                }
                Some(j) => declared[j] = true,
            }
        }

        // Missing cells: the first one (in file order) is an error unless rows are dropped.
        let has_missing = |row: &Vec<String>| row.iter().any(|c| is_missing(c));
        let n_missing_rows = rows.iter().filter(|r| has_missing(r)).count();
        if n_missing_rows > 0 {
            if !options.drop_missing {
                let (i, j) = rows
                    .iter()
                    .enumerate()
                    .find_map(|(i, r)| r.iter().position(|c| is_missing(c)).map(|j| (i, j)))
                    .unwrap_or((0, 0));
                let shown = if rows[i][j].is_empty() {
                    "an empty cell".to_string()
                } else {
                    format!("'{}'", rows[i][j])
                };
                return Err(err(format!(
                    "column '{}', line {}: missing value ({shown}); {n_missing_rows} row(s) \
                     have missing values. Fill them in, or set `data.drop_missing = true` to \
                     drop those rows",
                    names[j], lines[i]
                )));
            }
            let keep: Vec<bool> = rows.iter().map(|r| !has_missing(r)).collect();
            let mut k = 0;
            rows.retain(|_| {
                k += 1;
                keep[k - 1]
            });
            let mut k = 0;
            lines.retain(|_| {
                k += 1;
                keep[k - 1]
            });
            if rows.is_empty() {
                return Err(err(format!(
                    "every one of the {n_missing_rows} data row(s) has a missing value \
                     (empty or '?'), so `data.drop_missing` left no rows"
                )));
            }
        }

        // Column-major, typed.
        let mut feature_names = Vec::with_capacity(names.len() - 1);
        let mut columns = Vec::with_capacity(names.len() - 1);
        let mut target = Vec::new();
        for (j, name) in names.iter().enumerate() {
            let cells: Vec<String> = rows.iter_mut().map(|r| std::mem::take(&mut r[j])).collect();
            if Some(j) == target_index {
                target = cells;
                continue;
            }
            let column = if declared[j] {
                ColumnData::Categorical(cells)
            } else {
                type_column(source, name, cells, &lines)?
            };
            feature_names.push(name.clone());
            columns.push(column);
        }

        Ok(Table {
            source: source.to_string(),
            feature_names,
            columns,
            target_name,
            target,
            line_numbers: lines,
        })
    }

    /// The rows of `self` followed by those of `other` (e.g. a training file and its test
    /// file, so both are encoded alike). The two must have the same columns in the same
    /// order, each column of the same type.
    pub fn append(&self, other: &Table) -> Result<Table> {
        let err = |m: String| GlassboxError::data(format!("{} + {}", self.source, other.source), m);
        if self.feature_names != other.feature_names || self.target_name != other.target_name {
            return Err(err(format!(
                "the two files must have the same columns in the same order: {} vs {}",
                quoted_list(&self.feature_names),
                quoted_list(&other.feature_names)
            )));
        }
        let mut columns = Vec::with_capacity(self.columns.len());
        for ((name, a), b) in self
            .feature_names
            .iter()
            .zip(&self.columns)
            .zip(&other.columns)
        {
            columns.push(match (a, b) {
                (ColumnData::Numeric(x), ColumnData::Numeric(y)) => {
                    ColumnData::Numeric(x.iter().chain(y).copied().collect())
                }
                (ColumnData::Categorical(x), ColumnData::Categorical(y)) => {
                    ColumnData::Categorical(x.iter().chain(y).cloned().collect())
                }
                _ => {
                    return Err(err(format!(
                        "column '{name}' is numeric in one file and categorical in the other; \
                         declare it in `data.categorical`"
                    )))
                }
            });
        }
        Ok(Table {
            source: format!("{} + {}", self.source, other.source),
            feature_names: self.feature_names.clone(),
            columns,
            target_name: self.target_name.clone(),
            target: self.target.iter().chain(&other.target).cloned().collect(),
            line_numbers: self
                .line_numbers
                .iter()
                .chain(&other.line_numbers)
                .copied()
                .collect(),
        })
    }

    /// The number of rows (samples).
    pub fn n_rows(&self) -> usize {
        self.line_numbers.len()
    }

    /// The line of the file row `i` came from (for error messages).
    fn line_of(&self, i: usize) -> usize {
        self.line_numbers.get(i).copied().unwrap_or(i + 2)
    }

    /// Encodes the table for classification: the features through a drop-first dummy
    /// [`Encoding`] fitted on this table, the target as class indices into the sorted
    /// distinct target labels (numeric order when every label is a number).
    pub fn encode_classification(&self) -> Result<ClassificationData> {
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
        let encoding = Encoding::fit(self);
        let x = encoding.transform(self)?;
        Ok(ClassificationData {
            x,
            y,
            classes,
            feature_names: encoding.feature_names(),
            source: self.source.clone(),
            encoding,
        })
    }

    /// Encodes the table for regression: the features as in
    /// [`Table::encode_classification`], the target parsed as finite numbers.
    pub fn encode_regression(&self) -> Result<RegressionData> {
        self.check_shape()?;
        let mut y = Vec::with_capacity(self.n_rows());
        for (i, t) in self.target.iter().enumerate() {
            match t.parse::<f64>() {
                Ok(v) if v.is_finite() => y.push(v),
                _ => {
                    return Err(GlassboxError::data(
                        &self.source,
                        format!(
                            "column '{}', line {}: the value '{t}' is not a finite number, \
                             but a regression target must be numeric; fix the value, or use \
                             a classification formulation",
                            self.target_name,
                            self.line_of(i)
                        ),
                    ))
                }
            }
        }
        let encoding = Encoding::fit(self);
        let x = encoding.transform(self)?;
        Ok(RegressionData {
            x,
            y,
            feature_names: encoding.feature_names(),
            source: self.source.clone(),
            encoding,
        })
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

/// Decides the type of a feature column that was not declared categorical.
fn type_column(
    source: &str,
    name: &str,
    cells: Vec<String>,
    lines: &[usize],
) -> Result<ColumnData> {
    let mut first_number: Option<usize> = None;
    let mut first_text: Option<usize> = None;
    let mut first_non_finite: Option<usize> = None;
    for (i, c) in cells.iter().enumerate() {
        let slot = match cell_kind(c) {
            CellKind::Number => &mut first_number,
            CellKind::Text => &mut first_text,
            CellKind::NonFinite => &mut first_non_finite,
        };
        if slot.is_none() {
            *slot = Some(i);
        }
    }
    match (first_number, first_text, first_non_finite) {
        (Some(n), Some(t), _) => Err(GlassboxError::data(
            source,
            format!(
                "column '{name}', line {}: the value '{}' is not a number, but the column \
                 also holds numbers (e.g. '{}' on line {}); if the column is categorical, \
                 declare it in `data.categorical` (e.g. categorical = [\"{name}\"]), \
                 otherwise fix the value",
                lines[t], cells[t], cells[n], lines[n]
            ),
        )),
        (_, None, Some(b)) => Err(GlassboxError::data(
            source,
            format!(
                "column '{name}', line {}: the value '{}' is not a finite number; replace \
                 it with a number, or mark it missing ('?') and set `data.drop_missing = \
                 true`",
                lines[b], cells[b]
            ),
        )),
        (Some(_), None, None) => Ok(ColumnData::Numeric(
            cells
                .iter()
                .map(|c| c.parse::<f64>().unwrap_or(0.0))
                .collect(),
        )),
        // No numbers at all: text labels (possibly including words like "nan").
        (None, _, _) => Ok(ColumnData::Categorical(cells)),
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
    /// A categorical column, drop-first dummy coded: one 0/1 feature `"name=level"` per
    /// level in `kept`; a row at the first level (the reference) is all zeros.
    Dummies {
        /// The column's name.
        name: String,
        /// All levels seen when fitting, sorted (numerically if every level is a number).
        levels: Vec<String>,
        /// The levels that get a feature: `levels[1..]`.
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
/// column, in order, either the number itself or drop-first dummies. Fitted on one table,
/// it encodes others (e.g. new data to predict on) the same way; it serializes with a model.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Encoding {
    /// One entry per raw feature column, in the table's order.
    pub columns: Vec<ColumnEncoding>,
}

impl Encoding {
    /// Fits the encoding on `table`: numeric columns stay, categorical columns get one
    /// dummy per level but the first (sorted).
    pub fn fit(table: &Table) -> Encoding {
        let columns = table
            .feature_names
            .iter()
            .zip(&table.columns)
            .map(|(name, column)| match column {
                ColumnData::Numeric(_) => ColumnEncoding::Numeric { name: name.clone() },
                ColumnData::Categorical(values) => {
                    let levels = distinct_sorted(values);
                    let kept = levels.iter().skip(1).cloned().collect();
                    ColumnEncoding::Dummies {
                        name: name.clone(),
                        levels,
                        kept,
                    }
                }
            })
            .collect();
        Encoding { columns }
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
                                    "column '{name}', line {}: the level '{v}' was not seen \
                                     when the encoding was fitted (known levels: {}); map it \
                                     to a known level or refit on data that includes it",
                                    table.line_of(i),
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
                        "column '{name}', line {}: the value '{v}' is not a number, but the \
                         column was numeric when the encoding was fitted",
                        table.line_of(i)
                    )));
                }
                (ColumnEncoding::Dummies { .. }, ColumnData::Numeric(_)) => {
                    return Err(err(format!(
                        "column '{name}' was read as numeric, but it was categorical when \
                         the encoding was fitted; declare it in `data.categorical`"
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

    /// [`stratified_split`] of these samples, with errors that name the file and class.
    pub fn stratified_split(
        &self,
        test_fraction: f64,
        seed: u64,
    ) -> Result<(Vec<usize>, Vec<usize>)> {
        stratified_split_named(&self.y, test_fraction, seed, &self.source, &self.classes)
    }

    /// [`stratified_kfold`] of these samples, with errors that name the file.
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

/// The sample indices of each class present in `y`, in class order.
fn indices_by_class(y: &[usize]) -> Vec<(usize, Vec<usize>)> {
    let mut by_class: std::collections::BTreeMap<usize, Vec<usize>> = Default::default();
    for (i, &k) in y.iter().enumerate() {
        by_class.entry(k).or_default().push(i);
    }
    by_class.into_iter().collect()
}

/// A seeded stratified train/test split of the samples with labels `y`. Returns
/// `(train, test)`, each sorted.
///
/// For every class with `n_k` samples, its shuffled indices put `round(test_fraction * n_k)`
/// in the test set, but always keep at least one in the training set. `test_fraction` must
/// be in (0, 1); every class needs at least two samples; the test set must not come out
/// empty. The same `y`, fraction and seed give the same split.
pub fn stratified_split(
    y: &[usize],
    test_fraction: f64,
    seed: u64,
) -> Result<(Vec<usize>, Vec<usize>)> {
    split_impl(y, test_fraction, seed, "the class labels", &|k| {
        format!("class {k}")
    })
}

/// [`stratified_split`] with errors that name the data's `source` and the class labels
/// `classes` (indexed by the values of `y`) instead of class indices.
pub fn stratified_split_named(
    y: &[usize],
    test_fraction: f64,
    seed: u64,
    source: &str,
    classes: &[String],
) -> Result<(Vec<usize>, Vec<usize>)> {
    split_impl(y, test_fraction, seed, source, &|k| match classes.get(k) {
        Some(c) => format!("class '{c}'"),
        None => format!("class {k}"),
    })
}

fn split_impl(
    y: &[usize],
    test_fraction: f64,
    seed: u64,
    source: &str,
    class_label: &dyn Fn(usize) -> String,
) -> Result<(Vec<usize>, Vec<usize>)> {
    if !(test_fraction > 0.0 && test_fraction < 1.0) {
        return Err(GlassboxError::Config(format!(
            "the test fraction must be strictly between 0 and 1, got {test_fraction}"
        )));
    }
    if y.is_empty() {
        return Err(GlassboxError::data(source, "there are no samples to split"));
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut train = Vec::with_capacity(y.len());
    let mut test = Vec::new();
    for (k, mut idx) in indices_by_class(y) {
        if idx.len() < 2 {
            return Err(GlassboxError::data(
                source,
                format!(
                    "{} has only {} sample(s), so it cannot appear in both the training and \
                     the test set; a stratified split needs at least 2 samples per class \
                     (add samples or merge the class)",
                    class_label(k),
                    idx.len()
                ),
            ));
        }
        idx.shuffle(&mut rng);
        let n_test = ((test_fraction * idx.len() as f64).round() as usize).min(idx.len() - 1);
        test.extend_from_slice(&idx[..n_test]);
        train.extend_from_slice(&idx[n_test..]);
    }
    if test.is_empty() {
        return Err(GlassboxError::Config(format!(
            "a test fraction of {test_fraction} of {} sample(s) rounds to no test sample in \
             any class, so the test set would be empty; raise the test fraction",
            y.len()
        )));
    }
    train.sort_unstable();
    test.sort_unstable();
    Ok((train, test))
}

/// Seeded stratified k-fold cross-validation: returns `k` pairs `(train, test)`, each
/// sorted; every sample is in exactly one test fold.
///
/// Each class's indices are shuffled and dealt round-robin over the folds, the deal
/// continuing from one class to the next, so fold sizes differ by at most one and every
/// fold keeps the class proportions as far as the counts allow. `k` must be at least 2 and
/// at most the number of samples.
pub fn stratified_kfold(y: &[usize], k: usize, seed: u64) -> Result<Vec<(Vec<usize>, Vec<usize>)>> {
    kfold_impl(y, k, seed, "the class labels")
}

fn kfold_impl(
    y: &[usize],
    k: usize,
    seed: u64,
    source: &str,
) -> Result<Vec<(Vec<usize>, Vec<usize>)>> {
    if k < 2 {
        return Err(GlassboxError::Config(format!(
            "k-fold cross-validation needs at least 2 folds, got {k}"
        )));
    }
    if k > y.len() {
        return Err(GlassboxError::Config(format!(
            "{k} folds were asked for but {source} has only {} sample(s); use at most {} \
             folds",
            y.len(),
            y.len()
        )));
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut fold_of = vec![0usize; y.len()];
    let mut next = 0usize;
    for (_, mut idx) in indices_by_class(y) {
        idx.shuffle(&mut rng);
        for i in idx {
            fold_of[i] = next % k;
            next += 1;
        }
    }
    Ok((0..k)
        .map(|f| {
            let (test, train): (Vec<usize>, Vec<usize>) =
                (0..y.len()).partition(|&i| fold_of[i] == f);
            (train, test)
        })
        .collect())
}

/// A seeded random train/test split of `n` samples (for regression, where stratification
/// does not apply). Returns `(train, test)`, each sorted: the shuffled indices put
/// `round(test_fraction * n)` samples in the test set, at least one in each part. `n` must be
/// at least 2 and `test_fraction` in (0, 1). The same arguments give the same split.
pub fn random_split(n: usize, test_fraction: f64, seed: u64) -> Result<(Vec<usize>, Vec<usize>)> {
    if !(test_fraction > 0.0 && test_fraction < 1.0) {
        return Err(GlassboxError::Config(format!(
            "the test fraction must be strictly between 0 and 1, got {test_fraction}"
        )));
    }
    if n < 2 {
        return Err(GlassboxError::Config(format!(
            "a train/test split needs at least 2 samples, got {n}"
        )));
    }
    let mut idx: Vec<usize> = (0..n).collect();
    idx.shuffle(&mut ChaCha8Rng::seed_from_u64(seed));
    let n_test = ((test_fraction * n as f64).round() as usize).clamp(1, n - 1);
    let mut test = idx[..n_test].to_vec();
    let mut train = idx[n_test..].to_vec();
    train.sort_unstable();
    test.sort_unstable();
    Ok((train, test))
}

/// A standard normal draw (Box-Muller), for random hyperplane normals.
fn standard_normal(rng: &mut ChaCha8Rng) -> f64 {
    let u1: f64 = 1.0 - rng.random::<f64>(); // (0, 1]
    let u2: f64 = rng.random::<f64>();
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

/// The `q`-quantile of `values` (nearest rank on a sorted copy).
fn quantile(values: &[f64], q: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(|a, b| a.partial_cmp(b).unwrap_or(Ordering::Equal));
    let pos = ((sorted.len() - 1) as f64 * q).round() as usize;
    sorted[pos.min(sorted.len() - 1)]
}

/// A deterministic synthetic classification table for demos and tests.
///
/// `rows` points uniform in `[0, 10]^features`, labelled by which side of two random
/// oblique hyperplanes `h1: a1·x = b1` and `h2: a2·x = b2` they fall on, so a depth-2
/// oblique tree (root `h1`, both children `h2`) separates them. Each hyperplane uses up to
/// three randomly chosen features (the others are noise, so sparse trees can do as well as
/// dense ones); the thresholds are quantiles of the projections, chosen so that the
/// classes are roughly balanced. Leaves (left = `a·x <= b`) map to classes as:
///
/// - 2 classes: class 0 iff left of both hyperplanes, class 1 otherwise;
/// - 3 classes: left of `h1` split by `h2` into classes 0 and 1, right of `h1` is class 2;
/// - 4 classes: one class per leaf.
///
/// About 3% of the labels are then flipped to another class at random, and if some class
/// is still absent (only possible for tiny `rows`) a sample is relabelled so that every
/// class appears whenever `rows >= classes`. Class names are `"c0"`.. `"c{K-1}"`, feature
/// names `"x1"`.. `"xp"`, the source is `"synthetic:oblique"`.
///
/// `classes` is clamped to 2..=4 and `features` to at least 1. The same arguments give the
/// same table.
pub fn synthetic_oblique(rows: usize, features: usize, classes: usize, seed: u64) -> Table {
    let classes = classes.clamp(2, 4);
    let p = features.max(1);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);

    let x: Vec<Vec<f64>> = (0..rows)
        .map(|_| (0..p).map(|_| 10.0 * rng.random::<f64>()).collect())
        .collect();

    let hyperplane = |rng: &mut ChaCha8Rng| -> Vec<f64> {
        let mut chosen: Vec<usize> = (0..p).collect();
        chosen.shuffle(rng);
        let mut a = vec![0.0; p];
        for &j in chosen.iter().take(p.min(3)) {
            let mut v = standard_normal(rng);
            if v.abs() < 0.3 {
                v = 0.3f64.copysign(v);
            }
            a[j] = v;
        }
        a
    };
    let a1 = hyperplane(&mut rng);
    let a2 = hyperplane(&mut rng);
    let project = |a: &[f64]| -> Vec<f64> {
        x.iter()
            .map(|xi| xi.iter().zip(a).map(|(u, v)| u * v).sum())
            .collect()
    };
    let (z1, z2) = (project(&a1), project(&a2));
    let (q1, q2) = match classes {
        2 => (
            std::f64::consts::FRAC_1_SQRT_2,
            std::f64::consts::FRAC_1_SQRT_2,
        ),
        3 => (2.0 / 3.0, 0.5),
        _ => (0.5, 0.5),
    };
    let (b1, b2) = (quantile(&z1, q1), quantile(&z2, q2));

    let mut labels: Vec<usize> = (0..rows)
        .map(|i| {
            let right1 = z1[i] > b1;
            let right2 = z2[i] > b2;
            match (classes, right1, right2) {
                (2, false, false) => 0,
                (2, _, _) => 1,
                (3, false, r2) => usize::from(r2),
                (3, true, _) => 2,
                (_, r1, r2) => 2 * usize::from(r1) + usize::from(r2),
            }
        })
        .collect();

    for label in labels.iter_mut() {
        if rng.random::<f64>() < 0.03 {
            let shift = 1 + rng.random_range(0..classes - 1);
            *label = (*label + shift) % classes;
        }
    }

    if rows >= classes {
        let mut counts = vec![0usize; classes];
        for &l in &labels {
            counts[l] += 1;
        }
        for c in 0..classes {
            if counts[c] == 0 {
                if let Some(i) = (0..rows).find(|&i| counts[labels[i]] > 1) {
                    counts[labels[i]] -= 1;
                    labels[i] = c;
                    counts[c] += 1;
                }
            }
        }
    }

    let columns = (0..p)
        .map(|j| ColumnData::Numeric(x.iter().map(|xi| xi[j]).collect()))
        .collect();
    Table {
        source: "synthetic:oblique".to_string(),
        feature_names: (1..=p).map(|j| format!("x{j}")).collect(),
        columns,
        target_name: "target".to_string(),
        target: labels.iter().map(|l| format!("c{l}")).collect(),
        line_numbers: (0..rows).map(|i| i + 2).collect(),
    }
}

/// Reads the CSV file `data_path` for a model with `encoding`: its categorical columns as the
/// model's, its target column `target` optional (a file to predict on may lack it). The table
/// and its features encoded as the model's.
pub fn read_for_model(
    encoding: &Encoding,
    data_path: &Path,
    target: &str,
) -> Result<(Table, DMatrix<f64>)> {
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
    };
    let table = Table::from_csv(data_path, &options)?;
    let x = encoding.transform(&table)?;
    Ok((table, x))
}
