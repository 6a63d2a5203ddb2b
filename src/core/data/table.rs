//! Reading CSV text into a typed [`Table`]: the header (trimmed, named, distinct), one value
//! per column on every row, missing cells (an error, or their rows dropped), and the type of
//! every feature column (numeric, or categorical when declared or when no value is a
//! number); joining two tables read alike ([`Table::append`]).
//!
//! Depends on the core's error type and on `csv` and `serde`.

use super::quoted_list;
use crate::{GlassboxError, Result};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
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
    /// Read only these feature columns (and the target), each of which the file must have;
    /// the file's other columns are dropped before their values are typed or checked for
    /// gaps (a model's new data may carry columns it does not use). The file as a whole
    /// must still be CSV (UTF-8, distinct names, one field per column). `None` reads every
    /// column. Not a config key.
    #[serde(skip)]
    pub only_columns: Option<Vec<String>>,
}

impl Default for CsvOptions {
    fn default() -> Self {
        CsvOptions {
            target: "target".to_string(),
            categorical: Vec::new(),
            drop_missing: false,
            target_optional: false,
            only_columns: None,
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

/// A typed table read from a CSV file (or made up by
/// [`crate::synthetic::synthetic_oblique`]): feature columns, in file order, and the raw
/// target column.
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
    /// Whether the rows came from memory (a DataFrame) rather than a file: errors then
    /// name row `i` (0-based) instead of a line.
    pub rows_in_memory: bool,
    /// For the rows of several files ([`Table::append`]): where each file's rows begin
    /// (row index, file), so that errors name the file of a line. Empty for one file.
    pub parts: Vec<(usize, String)>,
}

/// A reader that notes the offset of every line break it passes on, for
/// [`Table::from_reader`]'s line numbers (the csv crate reads ahead, so a record's bytes have
/// all passed by the time it is returned). A break is '\n', or a '\r' not followed by '\n'
/// (old Mac files, whose lines the csv crate splits there too).
struct NewlineOffsets<R> {
    inner: R,
    read: u64,
    newlines: std::rc::Rc<std::cell::RefCell<Vec<u64>>>,
    /// A '\r' whose next byte has not been read yet.
    pending_cr: Option<u64>,
}

impl<R: std::io::Read> std::io::Read for NewlineOffsets<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        let mut newlines = self.newlines.borrow_mut();
        for (i, &b) in buf[..n].iter().enumerate() {
            if let Some(cr) = self.pending_cr.take() {
                if b != b'\n' {
                    newlines.push(cr);
                }
            }
            match b {
                b'\n' => newlines.push(self.read + i as u64),
                b'\r' => self.pending_cr = Some(self.read + i as u64),
                _ => {}
            }
        }
        if n == 0 {
            newlines.extend(self.pending_cr.take());
        }
        self.read += n as u64;
        Ok(n)
    }
}

/// What a cell looks like, for type detection.
pub(super) enum CellKind {
    Number,
    NonFinite,
    Text,
}

pub(super) fn cell_kind(s: &str) -> CellKind {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() => CellKind::Number,
        Ok(_) => CellKind::NonFinite,
        Err(_) => CellKind::Text,
    }
}

fn is_missing(s: &str) -> bool {
    s.is_empty() || s == "?"
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
        let newlines = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
        let mut csv_reader = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .from_reader(NewlineOffsets {
                inner: reader,
                read: 0,
                newlines: newlines.clone(),
                pending_cr: None,
            });
        // The file's line where a record starts: 1 + the line breaks up to its first byte.
        // (The csv crate's own count is one short after a CRLF, rust-csv#395, and its
        // position then points at the '\n': counted here, as it should be.)
        let line_at =
            |p: &csv::Position| 1 + newlines.borrow().partition_point(|&b: &u64| b <= p.byte());

        let mut header: Option<Vec<String>> = None;
        // Header name -> column (0-based), to find duplicates in linear time (10^6 columns).
        let mut seen: HashMap<String, usize> = HashMap::new();
        let mut rows: Vec<Vec<String>> = Vec::new();
        let mut lines: Vec<usize> = Vec::new();
        for record in csv_reader.byte_records() {
            let record = record.map_err(|e| {
                let at = e
                    .position()
                    .map(|p| format!("line {}: ", line_at(p)))
                    .unwrap_or_default();
                err(format!(
                    "{at}the file could not be read as CSV ({e}); check that it is a \
                     comma-separated text file"
                ))
            })?;
            let line = record.position().map(line_at).unwrap_or(0);
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
            // (A file to predict on may leave the target out.)
            let target = match options.target_optional {
                true => String::new(),
                false => format!(" (including the target column '{target_name}')"),
            };
            return Err(err(format!(
                "the file is empty; expected a header row naming the columns{target} followed \
                 by data rows"
            )));
        };
        if rows.is_empty() {
            return Err(err(
                "the file has a header row but no data rows; add data rows below the header"
                    .to_string(),
            ));
        }

        if let Some(wanted) = &options.only_columns {
            let present: std::collections::HashSet<&str> =
                names.iter().map(String::as_str).collect();
            if let Some(missing) = wanted.iter().find(|w| !present.contains(w.trim())) {
                return Err(err(format!(
                    "there is no column '{}', which the model was trained with; the columns \
                     are {}{}",
                    missing.trim(),
                    quoted_list(&names),
                    other_separator(&names)
                        .map(|c| format!("; {}", separator_message(&names, c)))
                        .unwrap_or_default()
                )));
            }
        }
        let (names, mut rows) = match &options.only_columns {
            Some(wanted) => {
                let wanted: std::collections::HashSet<&str> =
                    wanted.iter().map(|c| c.trim()).collect();
                let kept: Vec<usize> = (0..names.len())
                    .filter(|&j| names[j] == target_name || wanted.contains(names[j].as_str()))
                    .collect();
                let pick = |mut row: Vec<String>| -> Vec<String> {
                    kept.iter().map(|&j| std::mem::take(&mut row[j])).collect()
                };
                let rows: Vec<Vec<String>> = rows.into_iter().map(pick).collect();
                (pick(names), rows)
            }
            None => (names, rows),
        };
        let target_index = names.iter().position(|n| *n == target_name);
        if target_index.is_none() && !options.target_optional {
            if let Some(c) = other_separator(&names) {
                return Err(err(separator_message(&names, c)));
            }
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
                // New data to predict on take their categorical columns from the model.
                None if options.target_optional => {
                    return Err(err(format!(
                        "there is no column '{requested}', which the model was trained with \
                         (a categorical column); the columns are {}",
                        quoted_list(&names)
                    )))
                }
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
                // (`predict` and `explain` take no config: their rows are filled in or not.)
                let remedy = match options.target_optional {
                    true => "Fill them in, or leave those rows out",
                    false => "Fill them in, or set `data.drop_missing = true` to drop those rows",
                };
                return Err(err(format!(
                    "column '{}', line {}: missing value ({shown}); {n_missing_rows} row(s) \
                     have missing values. {remedy}",
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
        let mut feature_names = Vec::with_capacity(names.len().saturating_sub(1));
        let mut columns = Vec::with_capacity(names.len().saturating_sub(1));
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
                type_column(source, name, cells, &lines, options.target_optional)?
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
            rows_in_memory: false,
            parts: Vec::new(),
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
            rows_in_memory: self.rows_in_memory || other.rows_in_memory,
            parts: self
                .file_parts()
                .into_iter()
                .chain(
                    other
                        .file_parts()
                        .into_iter()
                        .map(|(start, file)| (start + self.n_rows(), file)),
                )
                .collect(),
        })
    }

    /// Where each file's rows begin: [`Table::parts`], or the one file from row 0.
    pub fn file_parts(&self) -> Vec<(usize, String)> {
        if self.parts.is_empty() {
            vec![(0, self.source.clone())]
        } else {
            self.parts.clone()
        }
    }

    /// The number of rows (samples).
    pub fn n_rows(&self) -> usize {
        self.line_numbers.len()
    }

    /// The line of the file row `i` came from (for error messages).
    pub(super) fn line_of(&self, i: usize) -> usize {
        self.line_numbers.get(i).copied().unwrap_or(i + 2)
    }

    /// Where row `i` is, as errors name it: "line N" of a file ("FILE line N" in a table of
    /// several), or "row i" of a table built in memory.
    pub fn place_of_row(&self, i: usize) -> String {
        if self.rows_in_memory {
            return format!("row {i}");
        }
        match self.parts.iter().rev().find(|(start, _)| *start <= i) {
            Some((_, file)) => format!("{file} line {}", self.line_of(i)),
            None => format!("line {}", self.line_of(i)),
        }
    }
}

/// The separator a header of one column holds (`;`, a tab, `|`): the file is then not
/// comma-separated.
fn other_separator(names: &[String]) -> Option<char> {
    match names {
        [only] => [';', '\t', '|'].into_iter().find(|c| only.contains(*c)),
        _ => None,
    }
}

fn separator_message(names: &[String], c: char) -> String {
    format!(
        "the header is one column, {}, which holds {c:?}: the file seems separated by {c:?}, \
         but glassbox reads comma-separated files; save it with commas",
        quoted_list(names)
    )
}

/// Decides the type of a feature column that was not declared categorical. `for_model`: the
/// file is read for a saved model (`predict`, `explain`), which takes no config, so the
/// remedies name none of its keys.
fn type_column(
    source: &str,
    name: &str,
    cells: Vec<String>,
    lines: &[usize],
    for_model: bool,
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
                 also holds numbers (e.g. '{}' on line {}); {}",
                lines[t],
                cells[t],
                cells[n],
                lines[n],
                match for_model {
                    true =>
                        "the model was trained on numbers in this column: fix the value".to_string(),
                    false => format!(
                        "if the column is categorical, declare it in `data.categorical` \
                         (e.g. categorical = [\"{name}\"]), otherwise fix the value{}",
                        match cells[t].to_ascii_lowercase().as_str() {
                            "na" | "n/a" | "null" | "none" | "-" => {
                                " (a missing value is an empty cell or '?')"
                            }
                            _ => "",
                        }
                    ),
                }
            ),
        )),
        (_, None, Some(b)) => Err(GlassboxError::data(
            source,
            format!(
                "column '{name}', line {}: the value '{}' is not a finite number; replace \
                 it with a number, or {}",
                lines[b],
                cells[b],
                match for_model {
                    true => "leave the row out",
                    false => "mark it missing ('?') and set `data.drop_missing = true`",
                }
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
