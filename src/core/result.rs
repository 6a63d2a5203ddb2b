//! [`SolveResult`] and [`TerminationStatus`]: what every backend returns. The status says
//! why the solve stopped and whether a usable point came with it, in the manner of
//! MathOptInterface's termination status and OR-Tools MathOpt's termination reason + limit.
//!
//! Depends on nothing in glassbox.

use serde::{Deserialize, Serialize};

/// Which limit stopped a solve.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Limit {
    /// The wall-clock time limit.
    Time,
    /// The iteration limit.
    Iteration,
    /// The node limit of a branch-and-bound.
    Node,
    /// The user interrupted the solve (or a callback asked it to stop).
    Interrupted,
    /// Another limit of the backend (e.g. on solutions or memory).
    Other,
}

/// Why a solve stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "limit")]
pub enum TerminationStatus {
    /// A globally optimal solution within the tolerances (convex problems, MILPs).
    Optimal,
    /// A point satisfying first-order conditions within the tolerances: for a nonconvex
    /// NLP, the best an NLP backend can certify.
    LocallyOptimal,
    /// A limit was hit; the returned point is feasible (within tolerance).
    FeasibleAtLimit(Limit),
    /// A limit was hit with no feasible point to return (a point may still be given).
    NoSolutionAtLimit(Limit),
    /// The problem was proven (or, for an NLP backend, detected locally) infeasible.
    Infeasible,
    /// The objective is unbounded below on the feasible set.
    Unbounded,
    /// The backend failed numerically (restoration failure at an infeasible point,
    /// non-finite evaluations, ...).
    NumericalError,
    /// Any other backend failure (memory, invalid problem detected by the backend, ...).
    Error,
}

impl TerminationStatus {
    /// A stable snake_case name for tables and results files, e.g. `time_limit_feasible`.
    pub fn as_str(&self) -> &'static str {
        use Limit::*;
        use TerminationStatus::*;
        match self {
            Optimal => "optimal",
            LocallyOptimal => "locally_optimal",
            FeasibleAtLimit(Time) => "time_limit_feasible",
            FeasibleAtLimit(Iteration) => "iteration_limit_feasible",
            FeasibleAtLimit(Node) => "node_limit_feasible",
            FeasibleAtLimit(Interrupted) => "interrupted_feasible",
            FeasibleAtLimit(Other) => "other_limit_feasible",
            NoSolutionAtLimit(Time) => "time_limit_no_solution",
            NoSolutionAtLimit(Iteration) => "iteration_limit_no_solution",
            NoSolutionAtLimit(Node) => "node_limit_no_solution",
            NoSolutionAtLimit(Interrupted) => "interrupted_no_solution",
            NoSolutionAtLimit(Other) => "other_limit_no_solution",
            Infeasible => "infeasible",
            Unbounded => "unbounded",
            NumericalError => "numerical_error",
            Error => "error",
        }
    }

    /// Whether the solve returned a point that can be used as a solution (optimal, locally
    /// optimal, or feasible at a limit).
    pub fn has_solution(&self) -> bool {
        matches!(
            self,
            TerminationStatus::Optimal
                | TerminationStatus::LocallyOptimal
                | TerminationStatus::FeasibleAtLimit(_)
        )
    }

    /// The limit that stopped the solve, if one did.
    pub fn limit(&self) -> Option<Limit> {
        match self {
            TerminationStatus::FeasibleAtLimit(l) | TerminationStatus::NoSolutionAtLimit(l) => {
                Some(*l)
            }
            _ => None,
        }
    }
}

impl std::fmt::Display for TerminationStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The outcome of one solve.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SolveResult {
    /// The backend's registry name.
    pub solver: String,
    /// Why the solve stopped.
    pub status: TerminationStatus,
    /// The final primal point (empty if the backend returned none).
    pub primal: Vec<f64>,
    /// Objective at `primal`, if a point was returned.
    pub objective: Option<f64>,
    /// Best proven bound on the optimal objective (MILP backends).
    pub dual_bound: Option<f64>,
    /// Relative gap between `objective` and `dual_bound`.
    pub gap: Option<f64>,
    /// Multipliers of the general constraints, where the backend gives them. Sign
    /// convention (Ipopt's, which every NLP backend follows): the Lagrangian is
    /// `f(x) + lambda^T g(x) - z_L^T (x - x_L) + z_U^T (x - x_U)`, so at a KKT point
    /// `grad f + J^T lambda - z_L + z_U = 0` with `z_L, z_U >= 0` and `lambda` of either sign.
    pub constraint_multipliers: Option<Vec<f64>>,
    /// Multipliers z_L >= 0 of the variables' lower bounds.
    pub lower_bound_multipliers: Option<Vec<f64>>,
    /// Multipliers z_U >= 0 of the variables' upper bounds.
    pub upper_bound_multipliers: Option<Vec<f64>>,
    /// Largest violation of a constraint or bound at `primal`.
    pub max_violation: Option<f64>,
    /// Iterations of the backend.
    pub iterations: u64,
    /// Branch-and-bound nodes (MILP backends).
    pub nodes: Option<u64>,
    /// Wall-clock seconds of the solve.
    pub wall_seconds: f64,
    /// The backend's own status text, for diagnosis.
    pub raw_status: String,
}

impl SolveResult {
    /// A result with no point, for a solve that failed before it started iterating.
    pub fn failed(solver: &str, status: TerminationStatus, raw_status: impl Into<String>) -> Self {
        SolveResult {
            solver: solver.to_string(),
            status,
            primal: Vec::new(),
            objective: None,
            dual_bound: None,
            gap: None,
            constraint_multipliers: None,
            lower_bound_multipliers: None,
            upper_bound_multipliers: None,
            max_violation: None,
            iterations: 0,
            nodes: None,
            wall_seconds: 0.0,
            raw_status: raw_status.into(),
        }
    }

    /// Drops the multipliers: for a result whose point was moved after the solve, or that
    /// stands for another problem than the one solved, they no longer belong to its point.
    pub fn clear_multipliers(&mut self) {
        self.constraint_multipliers = None;
        self.lower_bound_multipliers = None;
        self.upper_bound_multipliers = None;
    }

    /// The warm start that continues from this result (primal point and multipliers).
    pub fn warm_start(&self) -> crate::WarmStart {
        crate::WarmStart {
            primal: self.primal.clone(),
            constraint_multipliers: self.constraint_multipliers.clone(),
            lower_bound_multipliers: self.lower_bound_multipliers.clone(),
            upper_bound_multipliers: self.upper_bound_multipliers.clone(),
            explore: false,
        }
    }
}
