//! The learning problems, one module per formulation. A formulation builds a problem from
//! data, maps a solution back to a fitted model, and a fitted model back to a starting
//! point; it knows nothing about a particular solver.

pub mod logistic_l1;
pub mod loss_tree;
pub mod oct;
pub mod sorct;
pub mod sorrt;

use crate::formulation::FormulationInfo;

/// Every formulation compiled into glassbox, for `glassbox formulations`.
pub fn all() -> Vec<FormulationInfo> {
    vec![
        sorct::info(),
        logistic_l1::info(),
        sorrt::info(),
        oct::info(),
        oct::info_h(),
        loss_tree::info(),
    ]
}
