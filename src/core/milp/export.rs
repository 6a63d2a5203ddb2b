//! Exports of a [`MilpProblem`] as free MPS and CPLEX LP text, and the writing of either to
//! a file, so that any instance a formulation builds can be solved again outside glassbox.
//! Names are made valid and unique for the formats, and numbers are written so that they
//! read back exactly.
//!
//! Depends on the MILP problem type and on `model::write_atomically` only.

use super::{MilpProblem, Sense};
use crate::Result;
use std::collections::HashSet;
use std::fmt::Write as _;
use std::path::Path;

impl MilpProblem {
    /// The problem in free MPS format: `OBJSENSE MAX` for maximization, `RANGES` for rows
    /// bounded on both sides, `MARKER` `INTORG` / `INTEND` around integer columns, explicit
    /// bounds for every integer column (some readers take unbounded integers to be binary)
    /// and every continuous column whose bounds are not `[0, +inf)`, the offset as minus the
    /// right-hand side of the objective row, rows with no finite bound as extra `N` rows.
    /// Names are made valid and unique (see [`MilpProblem::to_lp`]); numbers are written so
    /// that they read back exactly.
    pub fn to_mps(&self) -> String {
        let names = ExportNames::new(self);
        let mut out = String::new();
        let _ = writeln!(out, "NAME {}", names.problem);
        if self.sense == Sense::Maximize {
            out.push_str("OBJSENSE\n    MAX\n");
        }
        out.push_str("ROWS\n");
        let _ = writeln!(out, " N  {}", names.objective);
        for (row, name) in self.rows.iter().zip(&names.rows) {
            let kind = match (row.lower.is_finite(), row.upper.is_finite()) {
                _ if row.lower == row.upper => "E",
                (true, _) => "G",
                (false, true) => "L",
                (false, false) => "N",
            };
            let _ = writeln!(out, " {kind}  {name}");
        }

        // Columns, with their coefficients gathered column by column.
        let mut by_column: Vec<Vec<(usize, f64)>> = vec![Vec::new(); self.columns.len()];
        for (i, row) in self.rows.iter().enumerate() {
            for &(j, a) in &row.coefficients {
                if a != 0.0 {
                    by_column[j].push((i, a));
                }
            }
        }
        out.push_str("COLUMNS\n");
        let mut in_integers = false;
        let mut markers = 0;
        for (j, column) in self.columns.iter().enumerate() {
            if column.integer != in_integers {
                let kind = if column.integer { "INTORG" } else { "INTEND" };
                let _ = writeln!(out, "    MARKER{markers}  'MARKER'  '{kind}'");
                markers += 1;
                in_integers = column.integer;
            }
            let name = &names.columns[j];
            let mut written = false;
            if column.cost != 0.0 {
                let _ = writeln!(out, "    {name}  {}  {}", names.objective, num(column.cost));
                written = true;
            }
            for &(i, a) in &by_column[j] {
                let _ = writeln!(out, "    {name}  {}  {}", names.rows[i], num(a));
                written = true;
            }
            if !written {
                // A column must appear in COLUMNS to exist.
                let _ = writeln!(out, "    {name}  {}  0", names.objective);
            }
        }
        if in_integers {
            let _ = writeln!(out, "    MARKER{markers}  'MARKER'  'INTEND'");
        }

        out.push_str("RHS\n");
        if self.objective_offset != 0.0 {
            let _ = writeln!(
                out,
                "    RHS  {}  {}",
                names.objective,
                num(-self.objective_offset)
            );
        }
        let mut ranges = String::new();
        for (row, name) in self.rows.iter().zip(&names.rows) {
            let rhs = if row.lower.is_finite() {
                row.lower
            } else if row.upper.is_finite() {
                row.upper
            } else {
                continue;
            };
            if rhs != 0.0 {
                let _ = writeln!(out, "    RHS  {name}  {}", num(rhs));
            }
            // A G row with range R is [rhs, rhs + |R|].
            if row.lower.is_finite() && row.upper.is_finite() && row.lower < row.upper {
                let _ = writeln!(ranges, "    RNG  {name}  {}", num(row.upper - row.lower));
            }
        }
        if !ranges.is_empty() {
            out.push_str("RANGES\n");
            out.push_str(&ranges);
        }

        out.push_str("BOUNDS\n");
        for (column, name) in self.columns.iter().zip(&names.columns) {
            let (l, u) = (column.lower, column.upper);
            if !column.integer && l == 0.0 && u == f64::INFINITY {
                continue;
            }
            if column.integer && l == 0.0 && u == 1.0 {
                let _ = writeln!(out, " BV BND  {name}");
            } else if l == u {
                let _ = writeln!(out, " FX BND  {name}  {}", num(l));
            } else if !l.is_finite() && !u.is_finite() {
                let _ = writeln!(out, " FR BND  {name}");
            } else {
                if l.is_finite() {
                    let _ = writeln!(out, " LO BND  {name}  {}", num(l));
                } else {
                    let _ = writeln!(out, " MI BND  {name}");
                }
                if u.is_finite() {
                    let _ = writeln!(out, " UP BND  {name}  {}", num(u));
                } else {
                    let _ = writeln!(out, " PL BND  {name}");
                }
            }
        }
        out.push_str("ENDATA\n");
        out
    }

    /// The problem in CPLEX LP format. A row bounded on both sides (and not an equality) is
    /// written as two constraints `NAME_lo:` (`>=`) and `NAME_up:` (`<=`), as HiGHS writes
    /// them; a row with no finite bound is written as a comment. Integer columns with
    /// bounds `[0, 1]` are listed under `Binaries`, other integer columns under `Generals`.
    ///
    /// Names are made valid and unique for both formats: characters other than ASCII
    /// letters, digits and `_ . ( ) ,` become `_` (`[` and `]` become `(` and `)`), a name
    /// that could read as a number or a keyword gets a leading `_`, an empty name becomes
    /// `C<j>` / `R<i>`, and a name already taken gets a `_<index>` suffix.
    pub fn to_lp(&self) -> String {
        let names = ExportNames::new(self);
        let mut out = String::new();
        let _ = writeln!(out, "\\ Problem name: {}", names.problem);
        out.push_str(match self.sense {
            Sense::Minimize => "Minimize\n",
            Sense::Maximize => "Maximize\n",
        });
        let mut line = format!(" {}:", names.objective);
        let mut terms = 0;
        for (column, name) in self.columns.iter().zip(&names.columns) {
            if column.cost != 0.0 {
                push_term(&mut out, &mut line, column.cost, name);
                terms += 1;
            }
        }
        if self.objective_offset != 0.0 {
            let sign = if self.objective_offset < 0.0 {
                '-'
            } else {
                '+'
            };
            push_word(
                &mut out,
                &mut line,
                &format!("{sign} {}", num(self.objective_offset.abs())),
            );
        } else if terms == 0 {
            match names.columns.first() {
                Some(first) => push_word(&mut out, &mut line, &format!("0 {first}")),
                None => push_word(&mut out, &mut line, "0"),
            }
        }
        out.push_str(&line);
        out.push('\n');

        out.push_str("Subject To\n");
        let taken: HashSet<&str> = names.rows.iter().map(String::as_str).collect();
        let mut extra = HashSet::new();
        for (row, name) in self.rows.iter().zip(&names.rows) {
            let mut sides: Vec<(String, &str, f64)> = Vec::new();
            if row.lower == row.upper {
                sides.push((name.clone(), "=", row.lower));
            } else if row.lower.is_finite() && row.upper.is_finite() {
                for (suffix, op, rhs) in [("_lo", ">=", row.lower), ("_up", "<=", row.upper)] {
                    let mut n = format!("{name}{suffix}");
                    while taken.contains(n.as_str()) || !extra.insert(n.clone()) {
                        n.push('_');
                    }
                    sides.push((n, op, rhs));
                }
            } else if row.lower.is_finite() {
                sides.push((name.clone(), ">=", row.lower));
            } else if row.upper.is_finite() {
                sides.push((name.clone(), "<=", row.upper));
            } else {
                let _ = writeln!(out, "\\ {name}: free row (no finite bound), left out");
                continue;
            }
            for (label, op, rhs) in sides {
                let mut line = format!(" {label}:");
                let mut any = false;
                for &(j, a) in &row.coefficients {
                    if a != 0.0 {
                        push_term(&mut out, &mut line, a, &names.columns[j]);
                        any = true;
                    }
                }
                if !any {
                    match names.columns.first() {
                        Some(first) => push_word(&mut out, &mut line, &format!("0 {first}")),
                        None => {
                            let _ = writeln!(
                                out,
                                "\\ {label}: 0 {op} {} (no columns to write it with)",
                                num(rhs)
                            );
                            continue;
                        }
                    }
                }
                push_word(&mut out, &mut line, &format!("{op} {}", num(rhs)));
                out.push_str(&line);
                out.push('\n');
            }
        }

        out.push_str("Bounds\n");
        for (column, name) in self.columns.iter().zip(&names.columns) {
            let (l, u) = (column.lower, column.upper);
            if column.integer && l == 0.0 && u == 1.0 {
                continue; // listed under Binaries
            }
            if !column.integer && l == 0.0 && u == f64::INFINITY {
                continue;
            }
            let _ = if l == u {
                writeln!(out, " {name} = {}", num(l))
            } else if !l.is_finite() && !u.is_finite() {
                writeln!(out, " {name} free")
            } else if !u.is_finite() {
                writeln!(out, " {name} >= {}", num(l))
            } else if !l.is_finite() {
                writeln!(out, " -inf <= {name} <= {}", num(u))
            } else {
                writeln!(out, " {} <= {name} <= {}", num(l), num(u))
            };
        }
        let binaries: Vec<&String> = self
            .columns
            .iter()
            .zip(&names.columns)
            .filter(|(c, _)| c.integer && c.lower == 0.0 && c.upper == 1.0)
            .map(|(_, n)| n)
            .collect();
        let generals: Vec<&String> = self
            .columns
            .iter()
            .zip(&names.columns)
            .filter(|(c, _)| c.integer && !(c.lower == 0.0 && c.upper == 1.0))
            .map(|(_, n)| n)
            .collect();
        for (title, list) in [("Binaries", binaries), ("Generals", generals)] {
            if list.is_empty() {
                continue;
            }
            let _ = writeln!(out, "{title}");
            let mut line = String::new();
            for name in list {
                push_word(&mut out, &mut line, name);
            }
            out.push_str(&line);
            out.push('\n');
        }
        out.push_str("End\n");
        out
    }

    /// Writes [`MilpProblem::to_mps`] to `path` (through a temporary file and a rename).
    pub fn write_mps(&self, path: impl AsRef<Path>) -> Result<()> {
        crate::model::write_atomically(path.as_ref(), self.to_mps().as_bytes())
    }

    /// Writes [`MilpProblem::to_lp`] to `path` (through a temporary file and a rename).
    pub fn write_lp(&self, path: impl AsRef<Path>) -> Result<()> {
        crate::model::write_atomically(path.as_ref(), self.to_lp().as_bytes())
    }
}

// ---------------------------------------------------------------------------------------
// Export helpers.

/// Names valid in MPS and LP files and unique among columns and among rows.
struct ExportNames {
    problem: String,
    objective: String,
    columns: Vec<String>,
    rows: Vec<String>,
}

impl ExportNames {
    fn new(problem: &MilpProblem) -> Self {
        let columns = unique_names(problem.columns.iter().map(|c| c.name.as_str()), 'C');
        let rows = unique_names(problem.rows.iter().map(|r| r.name.as_str()), 'R');
        let mut objective = "obj".to_string();
        while rows.contains(&objective) {
            objective.push('_');
        }
        let problem_name = match sanitize(&problem.name) {
            s if s.is_empty() => "glassbox".to_string(),
            s => s,
        };
        ExportNames {
            problem: problem_name,
            objective,
            columns,
            rows,
        }
    }
}

/// Words an LP reader may take for something other than a name.
const LP_KEYWORDS: &[&str] = &[
    "inf",
    "infinity",
    "free",
    "st",
    "s.t.",
    "st.",
    "subject",
    "to",
    "such",
    "that",
    "bound",
    "bounds",
    "end",
    "bin",
    "binary",
    "binaries",
    "gen",
    "general",
    "generals",
    "int",
    "integer",
    "integers",
    "max",
    "maximize",
    "maximise",
    "maximum",
    "min",
    "minimize",
    "minimise",
    "minimum",
    "semi",
    "semis",
    "semi-continuous",
    "sos",
    "sos1",
    "sos2",
];

/// `name` with every character outside `[A-Za-z0-9_.(),]` replaced (brackets by
/// parentheses, others by `_`), and a leading `_` where it could read as a number, a
/// keyword, or an MPS comment.
fn sanitize(name: &str) -> String {
    let mut s: String = name
        .chars()
        .map(|c| match c {
            '[' => '(',
            ']' => ')',
            c if c.is_ascii_alphanumeric() || "_.(),".contains(c) => c,
            _ => '_',
        })
        .collect();
    let mut chars = s.chars();
    let first = chars.next();
    let second = chars.next();
    let numeric_like = match first {
        Some(c) if c.is_ascii_digit() || c == '.' => true,
        Some('e' | 'E') => second.is_none_or(|c| c.is_ascii_digit()),
        _ => false,
    };
    if numeric_like || LP_KEYWORDS.contains(&s.to_ascii_lowercase().as_str()) {
        s.insert(0, '_');
    }
    s
}

/// Sanitized, unique names: an empty one becomes `<prefix><index>`, a taken one gets
/// `_<index>` appended (and more `_` until it is free).
fn unique_names<'a>(names: impl Iterator<Item = &'a str>, prefix: char) -> Vec<String> {
    let names: Vec<&str> = names.collect();
    let mut taken = HashSet::with_capacity(names.len());
    let mut out = Vec::with_capacity(names.len());
    for (k, name) in names.iter().enumerate() {
        let mut s = sanitize(name);
        if s.is_empty() {
            s = format!("{prefix}{k}");
        }
        if taken.contains(&s) {
            s = format!("{s}_{k}");
            while taken.contains(&s) {
                s.push('_');
            }
        }
        taken.insert(s.clone());
        out.push(s);
    }
    out
}

/// A number in the shortest form that reads back to the same `f64` (integers without a
/// decimal point, others in plain or exponent notation, whichever is shorter).
fn num(x: f64) -> String {
    if x == x.trunc() && x.abs() < 1e15 {
        // -0.0 prints as 0.
        return format!("{}", x as i64);
    }
    let plain = format!("{x}");
    let exp = format!("{x:e}");
    if exp.len() < plain.len() {
        exp
    } else {
        plain
    }
}

/// Longest line the LP writer produces before wrapping (CPLEX reads up to 510 characters).
const LP_LINE: usize = 200;

/// Appends ` word` to `line`, first moving `line` to `out` when it would grow too long.
fn push_word(out: &mut String, line: &mut String, word: &str) {
    if line.len() + word.len() + 1 > LP_LINE && !line.trim().is_empty() {
        out.push_str(line);
        out.push('\n');
        line.clear();
        line.push(' ');
    }
    line.push(' ');
    line.push_str(word);
}

/// Appends the term `± |a| name`.
fn push_term(out: &mut String, line: &mut String, a: f64, name: &str) {
    let sign = if a < 0.0 { '-' } else { '+' };
    push_word(out, line, &format!("{sign} {} {name}", num(a.abs())));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::milp::tests::small;

    const INF: f64 = f64::INFINITY;

    #[test]
    fn names_are_made_valid_and_unique() {
        assert_eq!(sanitize("x[1,2]"), "x(1,2)");
        assert_eq!(sanitize("a b"), "a_b");
        assert_eq!(sanitize("1x"), "_1x");
        assert_eq!(sanitize("e12"), "_e12");
        assert_eq!(sanitize("eta"), "eta");
        assert_eq!(sanitize("free"), "_free");
        assert_eq!(sanitize("Inf"), "_Inf");
        let names = unique_names(["a", "a", "", "a_1", "b"].into_iter(), 'C');
        assert_eq!(names, ["a", "a_1", "C2", "a_1_3", "b"]);
    }

    #[test]
    fn numbers_read_back_exactly() {
        for x in [
            0.0,
            -0.0,
            1.0,
            -3.0,
            0.1,
            1e-7,
            1e20,
            123456.789,
            -2.5e-300,
            1.0 / 3.0,
        ] {
            let s = num(x);
            assert_eq!(s.parse::<f64>().unwrap(), x, "{s}");
            assert!(!s.contains("inf"));
        }
        assert_eq!(num(1e20), "1e20");
        assert_eq!(num(-0.0), "0");
    }

    #[test]
    fn mps_has_every_section() {
        let mut p = small();
        p.sense = Sense::Maximize;
        let mps = p.to_mps();
        for needle in [
            "NAME small_test",
            "OBJSENSE\n    MAX",
            " E  eq",
            " G  range",
            " G  ge",
            " L  le",
            " N  _free",
            "'MARKER'  'INTORG'",
            "'MARKER'  'INTEND'",
            "    RHS  obj  -7.25",
            "    RNG  range  3.5",
            " MI BND  y",
            " UP BND  y  4",
            " BV BND  z",
            " FR BND  C3",
            "ENDATA",
        ] {
            assert!(mps.contains(needle), "no {needle:?} in\n{mps}");
        }
        assert!(!mps.contains("BND  x(1)"), "x has default bounds:\n{mps}");
    }

    #[test]
    fn lp_splits_ranges_and_lists_integers() {
        let lp = small().to_lp();
        for needle in [
            "Minimize",
            " obj: + 1 x(1) - 2 y + 0.5 z + 7.25",
            " eq: + 1 x(1) + 1 y = 3",
            " range_lo: + 2 y - 1 z + 1 C3 >= -1",
            " range_up: + 2 y - 1 z + 1 C3 <= 2.5",
            " ge: + 1e-7 x(1) >= 1e-7",
            " le: + 3 C3 <= 1e20",
            "\\ _free: free row",
            " -inf <= y <= 4",
            " C3 free",
            "Binaries\n z",
            "Generals\n y",
            "End",
        ] {
            assert!(lp.contains(needle), "no {needle:?} in\n{lp}");
        }
    }

    #[test]
    fn long_lp_lines_are_wrapped() {
        let mut p = MilpProblem::new("wide");
        let cols: Vec<usize> = (0..500)
            .map(|j| p.add_column(format!("long_column_name_{j}"), 0.0, 1.0, 1.0, false))
            .collect();
        p.add_row("all", -INF, 10.0, cols.iter().map(|&j| (j, 1.5)).collect());
        let lp = p.to_lp();
        assert!(lp.lines().all(|l| l.len() <= LP_LINE + 40), "{lp}");
        assert_eq!(lp.matches("long_column_name_499").count(), 3);
    }

    #[test]
    fn write_is_atomic_and_complete() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.mps");
        small().write_mps(&path).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), small().to_mps());
        let path = dir.path().join("p.lp");
        small().write_lp(&path).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), small().to_lp());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    }
}
