//! The mixed-integer linear program (MILP), the contract between MILP formulations and MILP
//! backends: columns with bounds, integrality and cost; sparse rows with bounds; a sense and
//! an objective offset; names for debugging and exports.
//!
//! This file holds the problem itself ([`MilpProblem`], [`Column`], [`Row`]), its checks
//! ([`validate`], [`MilpProblem::max_violation`], [`MilpProblem::objective_value`]) and the
//! tolerances and default gaps every MILP backend shares. Beside it:
//! - `export.rs`: any instance as free MPS ([`MilpProblem::to_mps`]) and CPLEX LP
//!   ([`MilpProblem::to_lp`]), so that a solve can be reproduced outside glassbox;
//! - `presolve.rs`: what every MILP backend does before it calls its solver ([`mip_start`],
//!   [`presolve`]);
//! - `result.rs`: what every MILP backend shares when it turns its own answer into a
//!   [`crate::SolveResult`] ([`BackendReport`], [`assemble_result`], [`relative_gap`],
//!   [`settle_by_feasibility_check`]), so that HiGHS and CBC report in the same way.
//!
//! Conventions: a bound of `-inf` / `+inf` is absent; a row with `lower == upper` is an
//! equality; an integer column may have fractional bounds (the backend rounds them inward);
//! the objective is `objective_offset + sum cost_j x_j`, minimized or maximized.
//!
//! Depends on the core's error, options and result types, and on `model::write_atomically`
//! (the exports) only.

mod export;
mod presolve;
mod result;

pub use presolve::{mip_start, presolve};
pub use result::{
    assemble_result, feasibility_problem, limit_name, relative_gap, settle_by_feasibility_check,
    under_user_cutoff, BackendReport,
};

use crate::{GlassboxError, Result};
use serde::{Deserialize, Serialize};

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

/// Default relative MIP gap of every MILP backend when
/// [`crate::SolveOptions::relative_gap`] is not set (HiGHS's own default; CBC's is 0). One
/// default for all backends keeps their results comparable. Set `relative_gap = 0` to prove
/// exact optimality.
pub const DEFAULT_RELATIVE_GAP: f64 = 1e-4;

/// Default absolute MIP gap of every MILP backend when
/// [`crate::SolveOptions::absolute_gap`] is not set (HiGHS's own default).
pub const DEFAULT_ABSOLUTE_GAP: f64 = 1e-6;

/// Absolute tolerance on bounds, rows and integrality under which glassbox itself counts a
/// point (a MIP start, a backend's point) as feasible.
pub const FEASIBILITY_TOLERANCE: f64 = 1e-6;

/// The integrality tolerance HiGHS (`mip_feasibility_tolerance`) and CBC
/// (`integerTolerance`) use by default.
pub const DEFAULT_INTEGRALITY_TOLERANCE: f64 = 1e-6;

/// The tightest integrality tolerance a formulation may ask for: HiGHS accepts no
/// `mip_feasibility_tolerance` below 1e-10.
pub const TIGHTEST_INTEGRALITY_TOLERANCE: f64 = 1e-10;

/// The integrality tolerance at which big-M rows that separate by `margin` keep it: a binary
/// that ends `delta` off its value loosens a row by its binaries' big-M coefficients summed
/// (`switched`, the largest over the rows) times `delta`; at `margin / (4 switched)` a point
/// keeps at least 3/4 of the margin on its side, so the MILP's routing is the fitted
/// model's. At most [`DEFAULT_INTEGRALITY_TOLERANCE`], so that it only ever tightens; the
/// caller decides what to do below [`TIGHTEST_INTEGRALITY_TOLERANCE`]. For
/// [`crate::formulation::MilpClassifierFormulation::integrality_tolerance`].
pub fn integrality_tolerance_for_margin(margin: f64, switched: f64) -> f64 {
    (margin / (4.0 * switched)).min(DEFAULT_INTEGRALITY_TOLERANCE)
}

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

#[cfg(test)]
mod tests {
    use super::*;

    const INF: f64 = f64::INFINITY;

    pub(super) fn small() -> MilpProblem {
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
    fn serde_round_trip() {
        let p = small();
        let json = serde_json::to_string(&p).unwrap();
        let back: MilpProblem = serde_json::from_str(&json).unwrap();
        assert_eq!(back, p);
    }
}
