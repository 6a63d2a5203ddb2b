//! glassbox: glass-box models learned by mathematical optimization.
//!
//! The workspace is laid out as its architecture (`Cargo.toml` says which crate is where):
//! - `glassbox-core` (`src/core/`): the core every part shares; its modules are re-exported
//!   here under the same names ([`nlp`], [`milp`], [`solver`], [`options`], [`result`],
//!   [`data`], [`metrics`], [`model`], [`formulation`], ...).
//! - `glassbox-solvers` (`solvers/`), re-exported as [`solvers`]: one module per backend. A
//!   backend knows nothing about trees.
//! - `glassbox-formulations` (`formulations/`), re-exported as [`formulations`]: one module
//!   per learning problem. A formulation knows nothing about a particular solver.
//! - this crate (`src/`): what sees everything: the registries ([`registry`]), the experiment
//!   engine ([`experiment`]), grids as shards in separate processes, on SLURM or locally
//!   ([`cluster`], unix), the comparison of solvers on its results ([`compare`]), plots of
//!   results, and the CLI ([`cli`]).
//!
//! Dependencies point inward, and the crate boundaries make the compiler check it:
//! formulations and solvers use the core, never each other.

pub mod allocator;
pub mod cli;
#[cfg(unix)]
pub mod cluster;
pub mod compare;
pub mod conformance;
pub mod experiment;
pub mod registry;
pub mod result_plots;

pub use glassbox_core::fitted_model;
#[cfg(feature = "torch")]
pub use glassbox_core::tensor;
pub use glassbox_core::{
    backend, data, diagram, error, formulation, learner, metrics, milp, model, nlp, options, plot,
    result, solver, starts, synthetic, tree, tree_search,
};
pub use glassbox_formulations as formulations;
pub use glassbox_solvers as solvers;
// The random number types of `NlpClassifierFormulation::random_start` and the like, and the
// matrix helpers of the core, for extension crates (docs/EXTENDING.md).
pub use glassbox_core::linalg;
pub use {rand, rand_chacha};

pub use glassbox_core::{
    Capabilities, GlassboxError, Interrupt, Limit, MilpSolver, NlpProblem, NlpSolver,
    RawOptionValue, Result, SolveOptions, SolveResult, TerminationStatus, TreeSearchSolver,
    WarmStart,
};
