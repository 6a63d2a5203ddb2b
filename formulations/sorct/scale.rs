//! The scale of a split: how the slope gamma of S-ORCT's (and l0tree's) logistic CDF is
//! chosen for a data set. A deviation from the paper, which the paper's setting undoes with
//! `split_scale = "fixed"`.
//!
//! The paper fixes gamma = 512 and scales a_t.x by 1/p with a_t in [-1, 1]^p, so a split on
//! one feature has a slope of at most gamma / p per min-max-scaled unit: 24 on thyroid's 21
//! features. Thyroid's TSH has its median at 0.003 and its 90th percentile at 0.011 of its
//! range, and CART's first split at 0.01: at slope 24 every row sits in the flat middle of
//! the CDF, the tree cannot express the split, and S-ORCT ends near the majority class
//! (0.925 on one split against CART's 0.979).
//!
//! `split_scale = "data"` (the default) keeps gamma where the data allow and raises it
//! where they need it: starting from the configured gamma it doubles gamma until CART's tree
//! of the same depth, laid into the randomized tree (`formulations/axis_start.rs`), sends
//! the training rows to the leaves its hard version sends them to with mean probability at
//! least `sharpness` (default 0.99), up to `gamma * 2^MAX_DOUBLINGS`. On iris, wine and the
//! other sets whose CART thresholds sit in wide gaps this keeps the paper's 512; on
//! thyroid it reaches the sharpness its skewed features need, whatever p is.
//!
//! Depends on the core and on `formulations/axis_start.rs`.

use crate::axis_start::{self, AxisSplits};
use crate::cart::grow::Targets;
use crate::continuation;
use glassbox_core::starts::StartKind;
use nalgebra::DMatrix;
use serde::{Deserialize, Serialize};

/// How gamma is chosen.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SplitScale {
    /// gamma doubled until CART's tree, randomized, agrees with its hard version (see the
    /// module comment); the default.
    #[default]
    Data,
    /// gamma as configured (the paper's setting).
    Fixed,
}

/// The default of `sharpness`: the mean probability with which CART's randomized tree
/// must send the training rows to their own leaves.
pub const DEFAULT_SHARPNESS: f64 = 0.99;

/// The most doublings of gamma `SplitScale::Data` makes (gamma * 64 at most). Some
/// thresholds cannot be made sharp at any reasonable slope: ionosphere's CART splits a
/// feature between 0.99997 and 1 with 90 rows 3e-5 from the threshold, which would need
/// gamma near 6e6; a cap keeps such data at the sharpest slope that still solves well.
pub const MAX_DOUBLINGS: u32 = 6;

/// The default of `screen` (see [`Continuation::screen`]).
pub const DEFAULT_SCREEN: f64 = 2.0;

/// The gamma `SplitScale::Data` gives for CART's tree `splits` on the rows `x`: the
/// smallest `gamma * 2^k`, `0 <= k <= MAX_DOUBLINGS`, at which [`axis_start::agreement`]
/// reaches `sharpness` (the largest when none does).
pub fn data_gamma(splits: &AxisSplits, x: &DMatrix<f64>, gamma: f64, sharpness: f64) -> f64 {
    let mut g = gamma;
    for _ in 0..MAX_DOUBLINGS {
        if axis_start::agreement(splits, x, g) >= sharpness {
            return g;
        }
        g *= 2.0;
    }
    g
}

/// CART's tree of depth `depth` on the classification rows (`x` scaled, `y` classes), laid
/// into a randomized tree.
pub fn cart_splits(x: &DMatrix<f64>, y: &[usize], classes: usize, depth: usize) -> AxisSplits {
    axis_start::cart_splits(
        x,
        Targets::Classes {
            y,
            n_classes: classes,
        },
        depth,
    )
}

/// The default of `continuation_factor`: gamma is multiplied by 4 per stage.
pub const DEFAULT_CONTINUATION_FACTOR: f64 = 4.0;

/// How a random start climbs to the data's gamma (the `continuation*` and `screen` keys of
/// S-ORCT and l0tree).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Continuation {
    /// Whether random starts climb at all (else they are solved at the target gamma).
    pub enabled: bool,
    /// gamma's factor per stage.
    pub factor: f64,
    /// A start goes past its first stage only when its point there, read at the target
    /// gamma, has an objective at most `screen` times the split's incumbent (0: always).
    pub screen: f64,
}

impl Continuation {
    /// The gammas a start of `kind` is solved at, from the configured `gamma` to the
    /// problem's `target`: the continuation's stages for a random start when it is enabled
    /// and the target is above `gamma`, else the target alone (greedy starts are built for
    /// the target; given points come from a solution at it).
    pub fn stages(&self, kind: StartKind, gamma: f64, target: f64) -> Vec<f64> {
        if self.enabled && kind == StartKind::Random && target > gamma {
            continuation::schedule(gamma, target, self.factor)
        } else {
            vec![target]
        }
    }

    /// These settings for a problem with a penalty (`penalized`): no screen. The screen
    /// reads a first stage's point at the target gamma, where the same coefficients make a
    /// tree target / configured times sharper and, with the lambdas following gamma
    /// (`with_gamma`), that many times more penalized: every random start looked far worse
    /// than the CART start and stopped after its first stage.
    pub fn for_penalty(mut self, penalized: bool) -> Self {
        if penalized {
            self.screen = 0.0;
        }
        self
    }

    /// Whether a start whose first stage reads `objective` at the target goes on.
    pub fn go_on(&self, objective: f64, incumbent: Option<f64>) -> bool {
        match incumbent {
            Some(best) if self.screen > 0.0 => objective <= self.screen * best,
            _ => true,
        }
    }

    /// Checks the settings.
    pub fn check(&self) -> std::result::Result<(), String> {
        if !(self.factor.is_finite() && self.factor > 1.0) {
            return Err(format!(
                "continuation_factor must be above 1, got {}",
                self.factor
            ));
        }
        if !(self.screen.is_finite() && (self.screen == 0.0 || self.screen >= 1.0)) {
            return Err(format!(
                "screen must be 0 (off) or at least 1, got {}",
                self.screen
            ));
        }
        Ok(())
    }
}

// Kept here, not in problem.rs, so that the NLP's file holds the NLP only.
impl super::SorctProblem {
    /// The variables that `x` leaves at zero, which a continuation's sharper stages hold
    /// there after its first stage ([`continuation::solve`]) and a refit after the solve:
    /// the zero coefficients a_jt (a+ and a- where lambda_L splits them) and beta_j where
    /// all of feature j's coefficients are zero; none without a lambda.
    pub(crate) fn settled_zeros(&self, x: &[f64]) -> Vec<usize> {
        if !self.params.penalized() {
            return Vec::new();
        }
        let lay = &self.layout;
        let zeros = self.zero_coefficients(x);
        let mut fixed: Vec<usize> = zeros.iter().map(|&(j, t)| lay.a(j, t)).collect();
        if lay.split {
            fixed.extend(zeros.iter().map(|&(j, t)| lay.a_neg(j, t)));
        }
        if lay.beta {
            fixed.extend(unused_features(&zeros, lay.branches).map(|j| lay.beta_at + j));
        }
        fixed
    }

    /// The (j, t) of the coefficients a_jt that are zero at `x` (up to the sparsity
    /// tolerance of the reported delta).
    pub(crate) fn zero_coefficients(&self, x: &[f64]) -> Vec<(usize, usize)> {
        let a = self.layout.coefficients(x);
        (0..a.ncols())
            .flat_map(|t| (0..a.nrows()).map(move |j| (j, t)))
            .filter(|&(j, t)| a[(j, t)].abs() <= glassbox_core::metrics::SPARSITY_TOLERANCE)
            .collect()
    }

    /// The same problem with slope `gamma` (a stage of a gamma continuation). The lambdas
    /// follow gamma as `split_scale` raised them (see `SorctConfig::problem`): a stage
    /// penalizes the tree its point holds as the configured lambda would at the configured
    /// gamma. Keeping the target's lambdas at a softer stage would penalize its tree
    /// target / stage times too much, and the early stages would shrink every coefficient.
    pub(crate) fn with_gamma(&self, gamma: f64) -> super::SorctProblem {
        let factor = gamma / self.params.gamma;
        let params = super::SorctParams {
            gamma,
            lambda_local: self.params.lambda_local * factor,
            lambda_global: self.params.lambda_global * factor,
            ..self.params.clone()
        };
        super::SorctProblem::new(
            self.x.clone(),
            self.y.clone(),
            self.layout.classes,
            params,
            self.costs.clone(),
        )
    }
}

/// The features j whose coefficient is zero at every one of the `branches` nodes, given
/// the zero coefficients (j, t).
pub(crate) fn unused_features(
    zeros: &[(usize, usize)],
    branches: usize,
) -> impl Iterator<Item = usize> + '_ {
    let mut seen = std::collections::BTreeMap::new();
    for &(j, _) in zeros {
        *seen.entry(j).or_insert(0) += 1;
    }
    seen.into_iter()
        .filter(move |&(_, count)| count == branches)
        .map(|(j, _)| j)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_penalized_problem_screens_no_start() {
        let settings = Continuation {
            enabled: true,
            factor: 4.0,
            screen: 2.0,
        };
        assert!(!settings.go_on(10.0, Some(1.0)));
        assert!(settings.for_penalty(false).go_on(1.5, Some(1.0)));
        assert!(!settings.for_penalty(false).go_on(10.0, Some(1.0)));
        assert!(settings.for_penalty(true).go_on(10.0, Some(1.0)));
    }

    #[test]
    fn unused_features_are_zero_at_every_node() {
        let zeros = [(0, 0), (0, 1), (0, 2), (1, 0), (2, 1), (2, 0), (2, 2)];
        assert_eq!(unused_features(&zeros, 3).collect::<Vec<_>>(), vec![0, 2]);
    }

    #[test]
    fn gamma_doubles_only_as_far_as_the_thresholds_need() {
        // One feature; class 1 above 0.0712, the rows crowded near 0 as thyroid's TSH.
        let values: Vec<f64> = (0..200)
            .map(|i| {
                if i < 190 {
                    i as f64 * 5e-4
                } else {
                    0.5 + i as f64 * 1e-3
                }
            })
            .collect();
        let mut rows: Vec<f64> = Vec::new();
        for v in &values {
            rows.extend([*v, 0.5]);
        }
        rows[2 * 199] = 1.0; // a max of 1, as min-max scaling gives
        let x = DMatrix::from_row_slice(200, 2, &rows);
        let y: Vec<usize> = values.iter().map(|&v| usize::from(v > 0.0712)).collect();
        let splits = cart_splits(&x, &y, 2, 1);
        let g = data_gamma(&splits, &x, 512.0, DEFAULT_SHARPNESS);
        assert!(g > 512.0, "crowded thresholds need a sharper split: {g}");
        assert!(g < 512.0 * 2f64.powi(MAX_DOUBLINGS as i32), "{g}");
        assert!(axis_start::agreement(&splits, &x, g) >= DEFAULT_SHARPNESS);
        assert!(axis_start::agreement(&splits, &x, g / 2.0) < DEFAULT_SHARPNESS);
        // Rows far from the threshold: the paper's gamma is sharp enough, and kept.
        let wide = DMatrix::from_fn(200, 2, |i, j| match j {
            0 if i < 100 => 0.4 * i as f64 / 99.0,
            0 => 0.6 + 0.4 * (i - 100) as f64 / 99.0,
            _ => 0.5,
        });
        let wide_y: Vec<usize> = (0..200).map(|i| usize::from(i >= 100)).collect();
        let wide_splits = cart_splits(&wide, &wide_y, 2, 1);
        assert_eq!(
            data_gamma(&wide_splits, &wide, 512.0, DEFAULT_SHARPNESS),
            512.0
        );
    }
}
