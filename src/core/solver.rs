//! The backend traits. A backend is a trait object (`Box<dyn NlpSolver>`,
//! `Box<dyn MilpSolver>` or `Box<dyn TreeSearchSolver>`), cloneable through `dyn-clone`,
//! created by name from the `glassbox::registry`, and declares what it can do in its
//! [`Capabilities`]. Asking a backend for something it cannot do is an error, never a silent
//! fallback.
//!
//! Depends on the problem, options and result types of the core.

use crate::milp::MilpProblem;
use crate::nlp::NlpProblem;
use crate::tree_search::TreeSearchProblem;
use crate::{GlassboxError, Result, SolveOptions, SolveResult};
use dyn_clone::DynClone;
use serde::Serialize;

/// What a backend can do.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Capabilities {
    /// Solves problems with integer variables.
    pub integers: bool,
    /// Handles general (non-bound) constraints.
    pub constraints: bool,
    /// Uses the problem's exact Hessian when given one.
    pub exact_hessian: bool,
    /// Starts from a given primal point.
    pub warm_start: bool,
    /// Starts from given multipliers as well.
    pub warm_start_duals: bool,
    /// Reports a proven bound on the optimum.
    pub dual_bound: bool,
    /// Runs on a GPU.
    pub gpu: bool,
    /// Its iterations are Newton steps (an interior point's), the unit in which the papers
    /// cap iterations (NB-DEC's 40 per subproblem); a first-order backend's iterations are
    /// many more and cheaper, so such caps default higher for it.
    pub newton_steps: bool,
    /// Solves only problems that give a tensor form of their objective
    /// (`NlpProblem::tensor_objective`), and refuses others with a capability error.
    pub tensor_objective_only: bool,
}

impl Capabilities {
    /// The list of capabilities that are set, for `glassbox solvers`.
    pub fn names(&self) -> Vec<&'static str> {
        [
            (self.integers, "integers"),
            (self.constraints, "constraints"),
            (self.exact_hessian, "exact-hessian"),
            (self.warm_start, "warm-start"),
            (self.warm_start_duals, "warm-start-duals"),
            (self.dual_bound, "dual-bound"),
            (self.gpu, "gpu"),
            (self.newton_steps, "newton-steps"),
            (self.tensor_objective_only, "tensor-objective-only"),
        ]
        .iter()
        .filter(|(on, _)| *on)
        .map(|(_, n)| *n)
        .collect()
    }
}

/// A backend for continuous NLPs.
pub trait NlpSolver: DynClone + Send + Sync {
    /// The registry name, e.g. `"ipopt"`.
    fn name(&self) -> &str;
    /// What this backend can do.
    fn capabilities(&self) -> Capabilities;
    /// Solves `problem`. An `Err` means the request itself was invalid (malformed problem,
    /// an option the backend cannot honour); every failure of the backend during the solve
    /// is a [`crate::TerminationStatus`] in the `Ok` result.
    fn solve(&self, problem: &dyn NlpProblem, options: &SolveOptions) -> Result<SolveResult>;
}
dyn_clone::clone_trait_object!(NlpSolver);

/// A backend for mixed-integer linear programs.
pub trait MilpSolver: DynClone + Send + Sync {
    /// The registry name, e.g. `"highs"`.
    fn name(&self) -> &str;
    /// What this backend can do.
    fn capabilities(&self) -> Capabilities;
    /// Solves `problem`; errors and statuses as for [`NlpSolver::solve`].
    fn solve(&self, problem: &MilpProblem, options: &SolveOptions) -> Result<SolveResult>;
}
dyn_clone::clone_trait_object!(MilpSolver);

/// A backend for optimal-tree search problems (exact search over binary features).
pub trait TreeSearchSolver: DynClone + Send + Sync {
    /// The registry name, e.g. `"dp"`.
    fn name(&self) -> &str;
    /// What this backend can do.
    fn capabilities(&self) -> Capabilities;
    /// Solves `problem`; errors and statuses as for [`NlpSolver::solve`]. The tree comes back
    /// in `SolveResult::primal` in the heap encoding of [`crate::tree_search::encode_tree`].
    fn solve(&self, problem: &TreeSearchProblem, options: &SolveOptions) -> Result<SolveResult>;
}
dyn_clone::clone_trait_object!(TreeSearchSolver);

/// Rejects a request that needs a capability the backend lacks.
pub fn require(solver: &str, has: bool, what: &str) -> Result<()> {
    if has {
        Ok(())
    } else {
        Err(GlassboxError::Capability {
            solver: solver.to_string(),
            what: what.to_string(),
        })
    }
}

/// Rejects the MILP-only options for a local NLP method: `relative_gap` and `absolute_gap`
/// (it has no dual bound to measure a gap against) and `integrality_tolerance` (it has no
/// integer variables).
pub fn refuse_milp_options(solver: &str, options: &SolveOptions) -> Result<()> {
    if options.integrality_tolerance.is_some() {
        return Err(GlassboxError::Capability {
            solver: solver.to_string(),
            what: "take an integrality_tolerance (it is an NLP method with no integer \
                   variables): remove integrality_tolerance"
                .to_string(),
        });
    }
    for (name, gap) in [
        ("relative_gap", options.relative_gap),
        ("absolute_gap", options.absolute_gap),
    ] {
        if gap.is_some() {
            return Err(GlassboxError::Capability {
                solver: solver.to_string(),
                what: format!(
                    "stop at a {name} (it is a local NLP method with no dual bound): remove {name}"
                ),
            });
        }
    }
    Ok(())
}
