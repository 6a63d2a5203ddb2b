//! glassbox-formulations: the learning problems, one module per formulation. A formulation
//! builds a problem from data, maps a solution back to a fitted model, and a fitted model
//! back to a starting point; it knows nothing about a particular solver.
//!
//! Depends on `glassbox-core` only.

pub mod axis_start;
pub mod cart;
mod coefficients;
pub mod contextual;
pub mod continuation;
pub mod decomposition;
pub mod flowoct;
pub mod forest;
pub mod heuristic;
pub mod l0tree;
pub mod logistic_l1;
pub mod logloss_tangents;
pub mod loss_tree;
pub mod oct;
pub mod risk_score;
pub mod sorct;
pub mod sorrt;
pub mod tao;
pub mod tao_oblique;
pub mod tmo;
