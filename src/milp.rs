//! The mixed-integer linear program (MILP), the contract between MILP formulations and MILP
//! backends: columns with bounds, integrality and cost; sparse rows with bounds; a sense.
//! This is the shape the MILP backends (HiGHS, CBC) implement; its export to MPS/LP and the
//! backends themselves come with the MILP work.
//!
//! Depends on nothing in glassbox.

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
    /// Name for debugging and exports.
    pub name: String,
    /// Lower bound (may be `-inf`).
    pub lower: f64,
    /// Upper bound (may be `+inf`).
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
    /// Lower bound (may be `-inf`).
    pub lower: f64,
    /// Upper bound (may be `+inf`).
    pub upper: f64,
    /// Sparse coefficients as `(column index, value)`.
    pub coefficients: Vec<(usize, f64)>,
}

/// A MILP: `sense  cost . x  s.t.  rows, column bounds, integrality`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MilpProblem {
    /// Minimize or maximize.
    pub sense: Sense,
    /// Constant added to the objective.
    pub objective_offset: f64,
    /// The variables.
    pub columns: Vec<Column>,
    /// The constraints.
    pub rows: Vec<Row>,
}

impl MilpProblem {
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
}
