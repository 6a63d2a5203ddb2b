//! glassbox-core: what every part of glassbox shares. The problem types a formulation builds
//! and a backend solves ([`nlp`], [`milp`], [`tree_search`]), the backend traits ([`solver`]) and what a
//! backend registers ([`backend`]), one options type and one result type ([`options`],
//! [`result`]), data loading and preprocessing ([`data`]), metrics ([`metrics`]), fitted
//! models ([`model`], [`tree`]), the formulation interfaces ([`formulation`]), and what plots
//! share ([`plot`]).
//!
//! Depends on no other glassbox crate. The formulations (`glassbox-formulations`) and the
//! backends (`glassbox-solvers`) depend on it and never on each other; the `glassbox` crate
//! (registries, experiment engine, CLI) sees them all.

pub mod backend;
mod columns;
pub mod data;
pub mod diagram;
pub mod error;
pub mod formulation;
pub mod learner;
pub mod linalg;
pub mod metrics;
pub mod milp;
pub mod model;
pub mod nlp;
pub mod options;
pub mod plot;
pub mod result;
pub mod solver;
pub mod starts;
pub mod synthetic;
#[cfg(feature = "torch")]
pub mod tensor;
pub mod tree;
pub mod tree_search;

pub use error::{GlassboxError, Result};
pub use nlp::NlpProblem;
pub use options::{deadline_passed, Interrupt, RawOptionValue, SolveOptions, WarmStart};
pub use result::{Limit, SolveResult, TerminationStatus};
pub use solver::{Capabilities, MilpSolver, NlpSolver, TreeSearchSolver};
