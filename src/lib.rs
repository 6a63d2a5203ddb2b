//! glassbox: glass-box models learned by mathematical optimization.
//!
//! The crate is laid out as its architecture:
//! - `src/` (this module tree): the core every part shares. Problem representations
//!   ([`nlp`], [`milp`]), the solver traits ([`solver`]), options and results ([`options`],
//!   [`result`]), the backend registry ([`registry`]), data loading ([`data`]), metrics
//!   ([`metrics`]), the experiment runner ([`experiment`]), the comparison of solvers on its
//!   results ([`compare`]) and what plots share ([`plot`]).
//! - `solvers/`: one module per backend. A backend knows nothing about trees.
//! - `formulations/`: one module per learning problem. A formulation knows nothing about a
//!   particular solver.
//!
//! Dependencies point inward: formulations and solvers use the core, never each other; only
//! the registry, the experiment runner and the CLI see everything.

pub mod allocator;
pub mod compare;
pub mod data;
pub mod diagram;
pub mod error;
pub mod experiment;
pub mod formulation;
pub mod metrics;
pub mod milp;
pub mod model;
pub mod nlp;
pub mod options;
pub mod plot;
pub mod registry;
pub mod result;
pub mod result_plots;
pub mod solver;
pub mod synthetic;
#[cfg(feature = "torch")]
pub mod tensor;
pub mod tree;

#[path = "../solvers/mod.rs"]
pub mod solvers;

#[path = "../formulations/mod.rs"]
pub mod formulations;

pub use error::{GlassboxError, Result};
pub use nlp::NlpProblem;
pub use options::{RawOptionValue, SolveOptions, WarmStart};
pub use result::{Limit, SolveResult, TerminationStatus};
pub use solver::{Capabilities, MilpSolver, NlpSolver};
