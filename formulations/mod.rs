//! The learning problems, one module per formulation. A formulation builds a problem from
//! data, maps a solution back to a fitted model, and a fitted model back to a starting
//! point; it knows nothing about a particular solver.

pub mod cart;
pub mod forest;
pub mod heuristic;
pub mod logistic_l1;
pub mod sorct;
pub mod sorrt;
pub mod tao;
pub mod tao_oblique;
pub mod tmo;

use crate::formulation::FormulationInfo;

/// Every formulation compiled into glassbox, for `glassbox formulations`.
pub fn all() -> Vec<FormulationInfo> {
    vec![
        sorct::info(),
        logistic_l1::info(),
        sorrt::info(),
        cart::info(),
        forest::info(),
        tao::info(),
        tmo::info(),
        tao_oblique::info(),
    ]
}
