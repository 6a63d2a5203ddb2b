//! The learning problems, one module per formulation. A formulation builds a problem from
//! data, maps a solution back to a fitted model, and a fitted model back to a starting
//! point; it knows nothing about a particular solver.

pub mod cart;
pub mod contextual;
pub mod decomposition;
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
        oct::info(),
        oct::info_h(),
        l0tree::info(),
        risk_score::info_ors(),
        risk_score::info_ogrs(),
        tao_oblique::info(),
        loss_tree::info(),
        contextual::info_cct(),
        contextual::info_crt(),
    ]
}
