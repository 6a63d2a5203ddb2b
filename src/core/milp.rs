//! The mixed-integer linear program (MILP), the contract between MILP formulations and MILP
//! backends: columns with bounds, integrality and cost; sparse rows with bounds; a sense and
//! an objective offset; names for debugging and exports.
//!
//! The file has three parts:
//! - the problem itself ([`MilpProblem`], [`Column`], [`Row`]) and its checks ([`validate`],
//!   [`MilpProblem::max_violation`], [`MilpProblem::objective_value`]);
//! - exports of any instance as free MPS ([`MilpProblem::to_mps`]) and CPLEX LP
//!   ([`MilpProblem::to_lp`]), so that a solve can be reproduced outside glassbox;
//! - what every MILP backend shares when it turns its own answer into a
//!   [`SolveResult`] ([`BackendReport`], [`assemble_result`], [`mip_start`],
//!   [`relative_gap`], the default gaps), so that HiGHS and CBC report in the same way.
//!
//! Conventions: a bound of `-inf` / `+inf` is absent; a row with `lower == upper` is an
//! equality; an integer column may have fractional bounds (the backend rounds them inward);
//! the objective is `objective_offset + sum cost_j x_j`, minimized or maximized.
//!
//! Depends on the core's error, options and result types only.

use crate::options::SolveOptions;
use crate::result::{Limit, SolveResult, TerminationStatus};
use crate::{GlassboxError, Result};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt::Write as _;
use std::path::Path;

/// Whether the objective is minimized or maximized.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Sense {
    /// Minimize the objective.
    #[default]
    Minimize,
    /// Maximize the objective.
    Maximize,
}

/// A variable of a MILP.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Column {
    /// Name for debugging and exports (need not be unique or valid in a file format: the
    /// exports make names valid and unique).
    pub name: String,
    /// Lower bound (may be `-inf`; `null` in JSON).
    #[serde(with = "lower_bound")]
    pub lower: f64,
    /// Upper bound (may be `+inf`; `null` in JSON).
    #[serde(with = "upper_bound")]
    pub upper: f64,
    /// Objective coefficient.
    pub cost: f64,
    /// Whether the variable must take an integer value.
    pub integer: bool,
}

/// A linear constraint `lower <= sum coefficients[k].1 * x[coefficients[k].0] <= upper`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// Name for debugging and exports.
    pub name: String,
    /// Lower bound (may be `-inf`; `null` in JSON).
    #[serde(with = "lower_bound")]
    pub lower: f64,
    /// Upper bound (may be `+inf`; `null` in JSON).
    #[serde(with = "upper_bound")]
    pub upper: f64,
    /// Sparse coefficients as `(column index, value)`, each column at most once.
    pub coefficients: Vec<(usize, f64)>,
}

/// A MILP: `sense  objective_offset + cost . x  s.t.  rows, column bounds, integrality`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MilpProblem {
    /// Name for debugging and exports.
    #[serde(default)]
    pub name: String,
    /// Minimize or maximize.
    pub sense: Sense,
    /// Constant added to the objective.
    pub objective_offset: f64,
    /// The variables.
    pub columns: Vec<Column>,
    /// The constraints.
    pub rows: Vec<Row>,
}

/// Default relative MIP gap of every MILP backend when [`SolveOptions::relative_gap`] is not
/// set (HiGHS's own default; CBC's is 0). One default for all backends keeps their results
/// comparable. Set `relative_gap = 0` to prove exact optimality.
pub const DEFAULT_RELATIVE_GAP: f64 = 1e-4;

/// Default absolute MIP gap of every MILP backend when [`SolveOptions::absolute_gap`] is not
/// set (HiGHS's own default).
pub const DEFAULT_ABSOLUTE_GAP: f64 = 1e-6;

/// Absolute tolerance on bounds, rows and integrality under which glassbox itself counts a
/// point (a MIP start, a backend's point) as feasible.
pub const FEASIBILITY_TOLERANCE: f64 = 1e-6;

impl MilpProblem {
    /// An empty minimization problem named `name`.
    pub fn new(name: impl Into<String>) -> Self {
        MilpProblem {
            name: name.into(),
            ..Default::default()
        }
    }

    /// Adds a column and returns its index.
    pub fn add_column(
        &mut self,
        name: impl Into<String>,
        lower: f64,
        upper: f64,
        cost: f64,
        integer: bool,
    ) -> usize {
        self.columns.push(Column {
            name: name.into(),
            lower,
            upper,
            cost,
            integer,
        });
        self.columns.len() - 1
    }

    /// Adds a binary column (integer in `[0, 1]`) and returns its index.
    pub fn add_binary(&mut self, name: impl Into<String>, cost: f64) -> usize {
        self.add_column(name, 0.0, 1.0, cost, true)
    }

    /// Adds a row and returns its index.
    pub fn add_row(
        &mut self,
        name: impl Into<String>,
        lower: f64,
        upper: f64,
        coefficients: Vec<(usize, f64)>,
    ) -> usize {
        self.rows.push(Row {
            name: name.into(),
            lower,
            upper,
            coefficients,
        });
        self.rows.len() - 1
    }

    /// Number of columns.
    pub fn num_columns(&self) -> usize {
        self.columns.len()
    }

    /// Number of rows.
    pub fn num_rows(&self) -> usize {
        self.rows.len()
    }

    /// Number of stored coefficients of the rows.
    pub fn num_nonzeros(&self) -> usize {
        self.rows.iter().map(|r| r.coefficients.len()).sum()
    }

    /// Number of integer columns.
    pub fn num_integers(&self) -> usize {
        self.columns.iter().filter(|c| c.integer).count()
    }

    /// Checks the problem; see [`validate`].
    pub fn validate(&self) -> Result<()> {
        validate(self)
    }

    /// The objective at `x`, offset included. `x` must have one value per column.
    pub fn objective_value(&self, x: &[f64]) -> f64 {
        self.objective_offset
            + self
                .columns
                .iter()
                .zip(x)
                .map(|(c, v)| c.cost * v)
                .sum::<f64>()
    }

    /// The activity `sum a_ij x_j` of every row at `x`.
    pub fn row_activities(&self, x: &[f64]) -> Vec<f64> {
        self.rows
            .iter()
            .map(|r| r.coefficients.iter().map(|&(j, a)| a * x[j]).sum())
            .collect()
    }

    /// The largest violation at `x` of a column bound, a row bound or (for an integer
    /// column) integrality, as an absolute number; infinite when `x` has the wrong length or
    /// a non-finite value.
    pub fn max_violation(&self, x: &[f64]) -> f64 {
        if x.len() != self.columns.len() || x.iter().any(|v| !v.is_finite()) {
            return f64::INFINITY;
        }
        let mut worst: f64 = 0.0;
        for (c, &v) in self.columns.iter().zip(x) {
            worst = worst.max(c.lower - v).max(v - c.upper);
            if c.integer {
                worst = worst.max((v - v.round()).abs());
            }
        }
        for (r, a) in self.rows.iter().zip(self.row_activities(x)) {
            worst = worst.max(r.lower - a).max(a - r.upper);
        }
        worst
    }

    /// Whether `x` is feasible within [`FEASIBILITY_TOLERANCE`].
    pub fn is_feasible(&self, x: &[f64]) -> bool {
        self.max_violation(x) <= FEASIBILITY_TOLERANCE
    }

    /// Whether objective value `a` is better than `b` in this problem's sense.
    pub fn better(&self, a: f64, b: f64) -> bool {
        match self.sense {
            Sense::Minimize => a < b,
            Sense::Maximize => a > b,
        }
    }

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

/// Checks a problem before a backend sees it: every number is a number (costs, the offset
/// and coefficients finite; bounds not NaN), `lower <= upper` for every column and row,
/// no bound is `+inf` below or `-inf` above, every coefficient names an existing column,
/// and no row names a column twice. An integer column with fractional bounds is fine.
pub fn validate(problem: &MilpProblem) -> Result<()> {
    let invalid = |message: String| {
        let name = if problem.name.is_empty() {
            "MILP"
        } else {
            problem.name.as_str()
        };
        Err(GlassboxError::InvalidProblem(format!("{name}: {message}")))
    };
    if !problem.objective_offset.is_finite() {
        return invalid(format!(
            "the objective offset is {}",
            problem.objective_offset
        ));
    }
    let bounds_ok = |l: f64, u: f64| {
        !l.is_nan() && !u.is_nan() && l <= u && l < f64::INFINITY && u > -f64::INFINITY
    };
    for (j, c) in problem.columns.iter().enumerate() {
        if !c.cost.is_finite() {
            return invalid(format!("column {j} ('{}') has cost {}", c.name, c.cost));
        }
        if !bounds_ok(c.lower, c.upper) {
            return invalid(format!(
                "column {j} ('{}') has bounds [{}, {}]",
                c.name, c.lower, c.upper
            ));
        }
    }
    let n = problem.columns.len();
    let mut seen = vec![usize::MAX; n];
    for (i, r) in problem.rows.iter().enumerate() {
        if !bounds_ok(r.lower, r.upper) {
            return invalid(format!(
                "row {i} ('{}') has bounds [{}, {}]",
                r.name, r.lower, r.upper
            ));
        }
        for &(j, a) in &r.coefficients {
            if j >= n {
                return invalid(format!(
                    "row {i} ('{}') names column {j}, but there are {n} columns",
                    r.name
                ));
            }
            if !a.is_finite() {
                return invalid(format!(
                    "row {i} ('{}') has coefficient {a} on column {j}",
                    r.name
                ));
            }
            if seen[j] == i {
                return invalid(format!(
                    "row {i} ('{}') names column {j} ('{}') twice: add the coefficients up",
                    r.name, problem.columns[j].name
                ));
            }
            seen[j] = i;
        }
    }
    Ok(())
}

/// The relative gap `|objective - bound| / |objective|` between an incumbent and a proven
/// bound (the convention of Gurobi, HiGHS and OR-Tools), 0 when they are equal, `None` when
/// either is missing or not finite, or the objective is 0 and the bound is not.
pub fn relative_gap(objective: Option<f64>, bound: Option<f64>) -> Option<f64> {
    let (o, b) = (objective?, bound?);
    if !o.is_finite() || !b.is_finite() {
        return None;
    }
    let difference = (o - b).abs();
    if difference == 0.0 {
        Some(0.0)
    } else if o == 0.0 {
        None
    } else {
        Some(difference / o.abs())
    }
}

/// The MIP start of `options` checked against `problem`: `None` without a warm start, the
/// primal point otherwise (multipliers of a warm start are ignored: a MILP backend takes a
/// primal point only). A point of the wrong length or with a non-finite value is an error;
/// an infeasible point is not (the backend may repair it or ignore it).
pub fn mip_start(problem: &MilpProblem, options: &SolveOptions) -> Result<Option<Vec<f64>>> {
    let Some(warm) = &options.warm_start else {
        return Ok(None);
    };
    let n = problem.columns.len();
    if warm.primal.len() != n {
        return Err(GlassboxError::InvalidProblem(format!(
            "the MIP start has {} values, the problem has {n} columns",
            warm.primal.len()
        )));
    }
    if let Some(j) = warm.primal.iter().position(|v| !v.is_finite()) {
        return Err(GlassboxError::InvalidProblem(format!(
            "the MIP start has the non-finite value {} for column {j}",
            warm.primal[j]
        )));
    }
    Ok(Some(warm.primal.clone()))
}

/// What every MILP backend does before it calls its solver: answers the problems that need
/// no solver, and gives the others with the bounds of integer columns rounded inward
/// (borrowed when there is nothing to round).
///
/// - No columns: optimal (objective = offset) when 0 lies within every row's bounds,
///   infeasible otherwise (HiGHS calls such a model empty, CBC's C interface fails on it).
/// - An integer column with no integer value within its bounds: infeasible.
/// - Fractional bounds of integer columns are rounded inward (within
///   [`FEASIBILITY_TOLERANCE`] of an integer, to that integer): HiGHS 1.15 returns a wrong
///   "optimal" point for an integer column with a fractional upper bound (found by the
///   conformance suite), and the rounded problem has the same integer points.
///
/// `Err` holds the finished result, `Ok` the problem to give the solver.
pub fn presolve<'a>(
    solver: &str,
    problem: &'a MilpProblem,
) -> std::result::Result<Cow<'a, MilpProblem>, Box<SolveResult>> {
    let answer = |status, raw_status: String, objective: Option<f64>| {
        Box::new(SolveResult {
            objective,
            dual_bound: objective,
            gap: objective.map(|_| 0.0),
            max_violation: objective.map(|_| 0.0),
            nodes: Some(0),
            ..SolveResult::failed(solver, status, raw_status)
        })
    };
    if problem.columns.is_empty() {
        let feasible = problem
            .rows
            .iter()
            .all(|r| r.lower <= FEASIBILITY_TOLERANCE && r.upper >= -FEASIBILITY_TOLERANCE);
        return Err(if feasible {
            answer(
                TerminationStatus::Optimal,
                "no columns: solved by glassbox".into(),
                Some(problem.objective_offset),
            )
        } else {
            answer(
                TerminationStatus::Infeasible,
                "no columns and a row whose bounds exclude 0: infeasible (found by glassbox)"
                    .into(),
                None,
            )
        });
    }
    let round = |c: &Column| {
        (
            (c.lower - FEASIBILITY_TOLERANCE).ceil(),
            (c.upper + FEASIBILITY_TOLERANCE).floor(),
        )
    };
    let fractional = |c: &Column| c.integer && round(c) != (c.lower, c.upper);
    if !problem.columns.iter().any(fractional) {
        return Ok(Cow::Borrowed(problem));
    }
    let mut rounded = problem.clone();
    for (j, c) in rounded.columns.iter_mut().enumerate() {
        if !c.integer {
            continue;
        }
        let (lower, upper) = round(c);
        if lower > upper {
            return Err(answer(
                TerminationStatus::Infeasible,
                format!(
                    "integer column {j} ('{}') has no integer value in [{}, {}]: infeasible \
                     (found by glassbox)",
                    c.name, c.lower, c.upper
                ),
                None,
            ));
        }
        (c.lower, c.upper) = (lower, upper);
    }
    Ok(Cow::Owned(rounded))
}

/// What a MILP backend found, in glassbox's terms, before [`assemble_result`] checks it
/// against the problem and adds what every backend reports alike.
#[derive(Clone, Debug)]
pub struct BackendReport {
    /// The status the backend's answer maps to. For a limit, say `FeasibleAtLimit` when the
    /// backend has an incumbent, `NoSolutionAtLimit` otherwise; the incumbent goes in
    /// `primal`.
    pub status: TerminationStatus,
    /// The backend's point (its incumbent for a MILP), one value per column.
    pub primal: Option<Vec<f64>>,
    /// The backend's proven bound on the optimum, offset included, in the problem's sense.
    pub dual_bound: Option<f64>,
    /// Simplex (or other LP) iterations.
    pub iterations: u64,
    /// Branch-and-bound nodes.
    pub nodes: Option<u64>,
    /// The backend's status text, with any note on how it was mapped.
    pub raw_status: String,
}

/// Turns a backend's report into the [`SolveResult`] every MILP backend returns:
/// - the objective is computed from the returned point (offset included), so it always
///   agrees with the point, and `max_violation` is measured on it;
/// - when the solve stopped at a limit and the MIP start is feasible and better than what
///   the backend returned (or the backend returned nothing), the MIP start is the
///   incumbent (a backend may lose a start in presolve): the status becomes
///   `FeasibleAtLimit` and `raw_status` says so;
/// - the dual bound is kept only where it is finite, and never worse than the objective of
///   an optimal point; the gap is [`relative_gap`] of the two.
pub fn assemble_result(
    solver: &str,
    problem: &MilpProblem,
    report: BackendReport,
    start: Option<&[f64]>,
    wall_seconds: f64,
) -> SolveResult {
    let BackendReport {
        mut status,
        mut primal,
        dual_bound,
        iterations,
        nodes,
        mut raw_status,
    } = report;
    if !status.has_solution() {
        // Only a limit status may carry a (non-feasible) point; none other keeps one.
        if status.limit().is_none() {
            primal = None;
        }
    }
    if primal
        .as_ref()
        .is_some_and(|x| x.len() != problem.columns.len())
    {
        primal = None;
    }
    if let (Some(limit), Some(start)) = (status.limit(), start) {
        let start_objective = problem.objective_value(start);
        let backend_is_better = status.has_solution()
            && primal
                .as_ref()
                .is_some_and(|x| !problem.better(start_objective, problem.objective_value(x)));
        if !backend_is_better && problem.is_feasible(start) {
            primal = Some(start.to_vec());
            status = TerminationStatus::FeasibleAtLimit(limit);
            raw_status.push_str("; incumbent: the MIP start (glassbox kept it)");
        }
    }
    let objective = if status.has_solution() {
        primal.as_deref().map(|x| problem.objective_value(x))
    } else {
        None
    };
    let mut dual_bound = dual_bound.filter(|b| b.is_finite());
    if let (TerminationStatus::Optimal, Some(o)) = (status, objective) {
        // A bound is never worse than an optimal point; an LP's bound is its objective.
        let b = dual_bound.unwrap_or(o);
        dual_bound = Some(match problem.sense {
            Sense::Minimize => b.min(o),
            Sense::Maximize => b.max(o),
        });
    }
    if matches!(
        status,
        TerminationStatus::Infeasible | TerminationStatus::Unbounded
    ) {
        dual_bound = None;
    }
    let max_violation = primal.as_deref().map(|x| problem.max_violation(x));
    SolveResult {
        solver: solver.to_string(),
        status,
        objective,
        dual_bound,
        gap: relative_gap(objective, dual_bound),
        primal: primal.unwrap_or_default(),
        constraint_multipliers: None,
        lower_bound_multipliers: None,
        upper_bound_multipliers: None,
        max_violation,
        iterations,
        nodes,
        wall_seconds,
        raw_status,
    }
}

/// The same problem with a zero objective: what a backend solves to tell "infeasible" from
/// "unbounded" when it could only say "infeasible or unbounded". If this problem is feasible
/// and the original's (LP relaxation) is unbounded, the original is unbounded (for rational
/// data, Meyer 1974); if it is infeasible, so is the original.
pub fn feasibility_problem(problem: &MilpProblem) -> MilpProblem {
    let mut feasibility = problem.clone();
    feasibility.sense = Sense::Minimize;
    feasibility.objective_offset = 0.0;
    for column in &mut feasibility.columns {
        column.cost = 0.0;
    }
    feasibility
}

/// What a backend reports for a problem it could only call "infeasible or unbounded" (its
/// status text `raw_status`), from `check`, its report on the [`feasibility_problem`]:
/// feasible means unbounded, infeasible means infeasible, anything else is undecided.
pub fn settle_by_feasibility_check(raw_status: &str, check: BackendReport) -> BackendReport {
    let (status, note) = match check.status {
        TerminationStatus::Optimal => (
            TerminationStatus::Unbounded,
            "the problem with a zero objective is feasible, so it is unbounded",
        ),
        TerminationStatus::Infeasible => (
            TerminationStatus::Infeasible,
            "the problem with a zero objective is infeasible",
        ),
        TerminationStatus::FeasibleAtLimit(limit) | TerminationStatus::NoSolutionAtLimit(limit) => {
            (
                TerminationStatus::NoSolutionAtLimit(limit),
                "the check of feasibility stopped at a limit: undecided",
            )
        }
        _ => (
            TerminationStatus::Error,
            "the check of feasibility failed: undecided",
        ),
    };
    BackendReport {
        status,
        primal: None,
        dual_bound: None,
        iterations: check.iterations,
        nodes: check.nodes,
        raw_status: format!("{raw_status}; {note} ({})", check.raw_status),
    }
}

/// The limit (if any) that `status` names, as a word for messages.
pub fn limit_name(limit: Limit) -> &'static str {
    match limit {
        Limit::Time => "time limit",
        Limit::Iteration => "iteration limit",
        Limit::Node => "node limit",
        Limit::Interrupted => "interrupt",
        Limit::Other => "limit",
    }
}

// ---------------------------------------------------------------------------------------
// Serialization of bounds: JSON has no infinity, so an absent bound is `null`.

macro_rules! bound_serde {
    ($module:ident, $infinity:expr) => {
        mod $module {
            use serde::{Deserialize, Deserializer, Serializer};

            pub fn serialize<S: Serializer>(value: &f64, s: S) -> Result<S::Ok, S::Error> {
                if value.is_infinite() {
                    s.serialize_none()
                } else {
                    s.serialize_f64(*value)
                }
            }

            pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
                Ok(Option::<f64>::deserialize(d)?.unwrap_or($infinity))
            }
        }
    };
}
bound_serde!(lower_bound, f64::NEG_INFINITY);
bound_serde!(upper_bound, f64::INFINITY);

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

    const INF: f64 = f64::INFINITY;

    fn small() -> MilpProblem {
        let mut p = MilpProblem::new("small test");
        let x = p.add_column("x[1]", 0.0, INF, 1.0, false);
        let y = p.add_column("y", -INF, 4.0, -2.0, true);
        let z = p.add_binary("z", 0.5);
        let w = p.add_column("", -INF, INF, 0.0, false);
        p.add_row("eq", 3.0, 3.0, vec![(x, 1.0), (y, 1.0)]);
        p.add_row("range", -1.0, 2.5, vec![(y, 2.0), (z, -1.0), (w, 1.0)]);
        p.add_row("ge", 1e-7, INF, vec![(x, 1e-7)]);
        p.add_row("le", -INF, 1e20, vec![(w, 3.0)]);
        p.add_row("free", -INF, INF, vec![(x, 1.0)]);
        p.objective_offset = 7.25;
        p
    }

    #[test]
    fn validation_names_what_is_wrong() {
        assert!(small().validate().is_ok());
        type Breaker = Box<dyn Fn(&mut MilpProblem)>;
        let cases: Vec<(Breaker, &str)> = vec![
            (Box::new(|p| p.columns[0].lower = f64::NAN), "column 0"),
            (Box::new(|p| p.columns[1].lower = 5.0), "column 1"),
            (Box::new(|p| p.columns[0].upper = -INF), "column 0"),
            (Box::new(|p| p.columns[0].cost = INF), "cost"),
            (Box::new(|p| p.rows[0].upper = 2.0), "row 0"),
            (Box::new(|p| p.rows[1].lower = f64::NAN), "row 1"),
            (
                Box::new(|p| p.rows[2].coefficients.push((9, 1.0))),
                "column 9",
            ),
            (
                Box::new(|p| p.rows[2].coefficients.push((1, f64::NAN))),
                "coefficient",
            ),
            (Box::new(|p| p.rows[0].coefficients.push((0, 2.0))), "twice"),
            (Box::new(|p| p.objective_offset = f64::NAN), "offset"),
        ];
        for (break_it, expected) in cases {
            let mut p = small();
            break_it(&mut p);
            let err = validate(&p).unwrap_err().to_string();
            assert!(err.contains(expected), "{err}");
            assert!(err.contains("small test"), "{err}");
        }
        // Fractional bounds on an integer column are fine.
        let mut p = small();
        p.columns[1].lower = -2.5;
        p.columns[1].upper = 3.7;
        assert!(p.validate().is_ok());
    }

    #[test]
    fn objective_and_violation() {
        let p = small();
        let x = [2.0, 1.0, 1.0, 0.5];
        assert_eq!(p.objective_value(&x), 7.25 + 2.0 - 2.0 + 0.5);
        assert!(p.is_feasible(&x), "{}", p.max_violation(&x));
        assert!((p.max_violation(&[2.0, 1.5, 1.0, 0.5]) - 0.5).abs() < 1e-12);
        assert_eq!(p.max_violation(&[1.0]), INF);
        assert_eq!(p.max_violation(&[f64::NAN, 1.0, 1.0, 0.5]), INF);
    }

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

    #[test]
    fn gaps() {
        assert_eq!(relative_gap(Some(10.0), Some(9.0)), Some(0.1));
        assert_eq!(relative_gap(Some(-10.0), Some(-9.0)), Some(0.1));
        assert_eq!(relative_gap(Some(0.0), Some(0.0)), Some(0.0));
        assert_eq!(relative_gap(Some(0.0), Some(-1.0)), None);
        assert_eq!(relative_gap(Some(1.0), None), None);
        assert_eq!(relative_gap(Some(1.0), Some(f64::NEG_INFINITY)), None);
    }

    #[test]
    fn assembling_keeps_a_better_mip_start_at_a_limit() {
        let mut p = MilpProblem::new("k");
        let a = p.add_binary("a", 3.0);
        let b = p.add_binary("b", 2.0);
        p.add_row("cap", -INF, 1.0, vec![(a, 1.0), (b, 1.0)]);
        p.sense = Sense::Maximize;
        let report = BackendReport {
            status: TerminationStatus::NoSolutionAtLimit(Limit::Time),
            primal: None,
            dual_bound: Some(3.5),
            iterations: 1,
            nodes: Some(2),
            raw_status: "time".into(),
        };
        let r = assemble_result("t", &p, report.clone(), Some(&[0.0, 1.0]), 0.1);
        assert_eq!(r.status, TerminationStatus::FeasibleAtLimit(Limit::Time));
        assert_eq!(r.objective, Some(2.0));
        assert_eq!(r.gap, Some(0.75));
        assert!(r.raw_status.contains("MIP start"));
        // An infeasible start is not kept.
        let r = assemble_result("t", &p, report.clone(), Some(&[1.0, 1.0]), 0.1);
        assert_eq!(r.status, TerminationStatus::NoSolutionAtLimit(Limit::Time));
        assert_eq!(r.objective, None);
        // A better backend incumbent wins.
        let better = BackendReport {
            status: TerminationStatus::FeasibleAtLimit(Limit::Time),
            primal: Some(vec![1.0, 0.0]),
            ..report
        };
        let r = assemble_result("t", &p, better, Some(&[0.0, 1.0]), 0.1);
        assert_eq!(r.objective, Some(3.0));
        assert!(!r.raw_status.contains("MIP start"));
    }

    #[test]
    fn presolve_answers_trivial_problems_and_rounds_integer_bounds() {
        let mut p = MilpProblem::new("empty");
        p.objective_offset = 2.0;
        p.add_row("r", -1.0, 1.0, vec![]);
        let r = presolve("t", &p).unwrap_err();
        assert_eq!(r.status, TerminationStatus::Optimal);
        assert_eq!(r.objective, Some(2.0));
        p.add_row("bad", 1.0, 2.0, vec![]);
        let r = presolve("t", &p).unwrap_err();
        assert_eq!(r.status, TerminationStatus::Infeasible);

        let p = small();
        assert!(matches!(presolve("t", &p), Ok(Cow::Borrowed(_))));
        let mut q = small();
        q.columns[1].lower = -2.5;
        q.columns[1].upper = 3.0000000001;
        q.columns[0].upper = 2.5; // continuous: kept
        let rounded = presolve("t", &q).unwrap();
        assert_eq!(
            (rounded.columns[1].lower, rounded.columns[1].upper),
            (-2.0, 3.0)
        );
        assert_eq!(rounded.columns[0].upper, 2.5);
        q.columns[1].lower = 0.2;
        q.columns[1].upper = 0.8;
        let r = presolve("t", &q).unwrap_err();
        assert_eq!(r.status, TerminationStatus::Infeasible);
        assert!(r.raw_status.contains("'y'"), "{}", r.raw_status);
    }

    #[test]
    fn serde_round_trip() {
        let p = small();
        let json = serde_json::to_string(&p).unwrap();
        let back: MilpProblem = serde_json::from_str(&json).unwrap();
        assert_eq!(back, p);
    }
}
