//! Tables built from columns held in memory (the Python package's numpy arrays and pandas
//! DataFrames) instead of read from a CSV file: [`Table::from_columns`] checks what
//! [`Table::from_reader`] checks of a file (distinct names, one value per row, finite
//! numbers, a target column), so a table reaches the encoders in the same shape whichever
//! way it came in.
//!
//! Depends on the core's data types and error type only.

use crate::data::{ColumnData, Table};
use crate::{GlassboxError, Result};
use std::collections::HashSet;

impl Table {
    /// A table of feature columns `names` / `columns` (aligned) and an optional target column
    /// `target_name` / `target` (empty `target` for data to predict on); `source` names it in
    /// errors. Names must be non-empty and distinct (the target's too), every column as long
    /// as the first, numbers finite, category labels and targets non-empty. Errors name
    /// rows by their 0-based index ("row i").
    pub fn from_columns(
        source: &str,
        names: Vec<String>,
        columns: Vec<ColumnData>,
        target_name: &str,
        target: Vec<String>,
    ) -> Result<Table> {
        let err = |m: String| GlassboxError::data(source, m);
        if names.len() != columns.len() {
            return Err(err(format!(
                "{} column name(s) for {} column(s)",
                names.len(),
                columns.len()
            )));
        }
        let n = match (columns.first(), target.is_empty()) {
            (Some(c), _) => c.len(),
            (None, false) => target.len(),
            (None, true) => return Err(err("there are no columns".to_string())),
        };
        if n == 0 {
            return Err(err(
                "there are no rows; there is nothing to learn from".into()
            ));
        }
        let mut seen = HashSet::with_capacity(names.len() + 1);
        for name in names.iter().map(String::as_str).chain([target_name]) {
            if name.is_empty() {
                return Err(err("a column has an empty name".to_string()));
            }
            if !seen.insert(name) {
                return Err(err(format!(
                    "the column name '{name}' appears twice; rename one of them"
                )));
            }
        }
        for (name, column) in names.iter().zip(&columns) {
            if column.len() != n {
                return Err(err(format!(
                    "column '{name}' has {} value(s), the first column {n}",
                    column.len()
                )));
            }
            match column {
                ColumnData::Numeric(v) => {
                    if let Some(i) = v.iter().position(|x| !x.is_finite()) {
                        return Err(err(format!(
                            "column '{name}', row {i}: missing or non-finite value; fill it \
                             in or drop the row"
                        )));
                    }
                }
                // An empty level could not be told from a missing cell in the CSV files a
                // model also predicts on, so it is refused rather than coded as a dummy.
                ColumnData::Categorical(v) => {
                    if let Some(i) = v.iter().position(String::is_empty) {
                        return Err(err(format!(
                            "column '{name}', row {i}: an empty string is not a category \
                             level glassbox can hold (it reads an empty cell as missing); give \
                             the level a name, or drop the row"
                        )));
                    }
                }
            }
        }
        if !target.is_empty() && target.len() != n {
            return Err(err(format!(
                "the target '{target_name}' has {} value(s) for {n} row(s)",
                target.len()
            )));
        }
        if let Some(i) = target.iter().position(String::is_empty) {
            return Err(err(format!(
                "the target '{target_name}', row {i}: empty label"
            )));
        }
        Ok(Table {
            source: source.to_string(),
            feature_names: names,
            columns,
            target_name: target_name.to_string(),
            target,
            line_numbers: (0..n).map(|i| i + 2).collect(),
            rows_in_memory: true,
            parts: Vec::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numeric(v: &[f64]) -> ColumnData {
        ColumnData::Numeric(v.to_vec())
    }

    fn labels(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn encodes_like_the_same_csv() {
        let csv = "x,colour,target\n1.5,red,a\n2,blue,b\n3,red,a\n";
        let read = Table::from_reader("mem", csv.as_bytes(), &Default::default()).unwrap();
        let built = Table::from_columns(
            "mem",
            labels(&["x", "colour"]),
            vec![
                numeric(&[1.5, 2.0, 3.0]),
                ColumnData::Categorical(labels(&["red", "blue", "red"])),
            ],
            "target",
            labels(&["a", "b", "a"]),
        )
        .unwrap();
        assert!(built.rows_in_memory && !read.rows_in_memory);
        assert_eq!(
            read,
            Table {
                rows_in_memory: false,
                ..built.clone()
            }
        );
        let (a, b) = (
            read.encode_classification().unwrap(),
            built.encode_classification().unwrap(),
        );
        assert_eq!(a.x, b.x);
        assert_eq!(a.feature_names, vec!["x", "colour=red"]);
        assert_eq!(a.y, b.y);
    }

    #[test]
    fn names_the_problem() {
        let two = |a: ColumnData, b: ColumnData, names: &[&str]| {
            Table::from_columns("mem", labels(names), vec![a, b], "y", labels(&["p", "q"]))
                .unwrap_err()
                .to_string()
        };
        let e = two(numeric(&[1.0, 2.0]), numeric(&[1.0]), &["u", "v"]);
        assert!(e.contains("column 'v' has 1 value"), "{e}");
        let e = two(numeric(&[1.0, f64::NAN]), numeric(&[1.0, 2.0]), &["u", "v"]);
        assert!(
            e.contains("column 'u', row 1: missing or non-finite"),
            "{e}"
        );
        let level = |v: &[&str]| ColumnData::Categorical(labels(v));
        let e = two(numeric(&[1.0, 2.0]), level(&["red", ""]), &["u", "v"]);
        assert!(
            e.contains("column 'v', row 1: an empty string is not a category"),
            "{e}"
        );
        let e = two(numeric(&[1.0, 2.0]), numeric(&[1.0, 2.0]), &["u", "u"]);
        assert!(e.contains("'u' appears twice"), "{e}");
        let e = two(numeric(&[1.0, 2.0]), numeric(&[1.0, 2.0]), &["u", "y"]);
        assert!(e.contains("'y' appears twice"), "{e}");
        let e = Table::from_columns("mem", labels(&["u"]), vec![numeric(&[1.0])], "y", vec![])
            .map(|t| t.target.len())
            .unwrap();
        assert_eq!(e, 0, "a table to predict on has no target");
        let e = Table::from_columns(
            "mem",
            labels(&["u"]),
            vec![numeric(&[1.0])],
            "y",
            labels(&["a", "b"]),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("2 value(s) for 1 row(s)"), "{e}");
    }

    #[test]
    fn rows_in_memory_are_named_by_index_not_line() {
        let table = |levels: &[&str]| {
            Table::from_columns(
                "mem",
                labels(&["c"]),
                vec![ColumnData::Categorical(labels(levels))],
                "y",
                labels(&["p", "q"]),
            )
            .unwrap()
        };
        let encoding = crate::data::Encoding::fit(&table(&["u", "v"]));
        let e = encoding
            .transform(&table(&["u", "w"]))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("column 'c', row 1: the level 'w' was not seen"),
            "{e}"
        );
    }

    #[test]
    fn a_dummy_named_like_another_column_is_refused() {
        let table = Table::from_columns(
            "mem",
            labels(&["color", "color=red"]),
            vec![
                ColumnData::Categorical(labels(&["red", "blue", "red"])),
                numeric(&[0.5, 1.5, 2.5]),
            ],
            "y",
            labels(&["1", "2", "1"]),
        )
        .unwrap();
        let e = table.encode_classification().unwrap_err().to_string();
        assert!(
            e.contains("two features would both be named 'color=red'"),
            "{e}"
        );
        let e = table
            .encode_regression()
            .map(|_| ())
            .unwrap_err()
            .to_string();
        assert!(e.contains("'color=red'"), "{e}");
    }
}
