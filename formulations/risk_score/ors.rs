//! ORS, the optimal risk score on binary features as a MILP (thesis (4.1)-(4.5)):
//!
//! ```text
//!   min  sum_i xi_i
//!   s.t. sum_j a_j = T                                                        (4.2)
//!        -M a_j <= s_j <= M a_j                                               (4.3)
//!        xi_i >= f(v_k) + f'(v_k) (y_i (s . x_i + beta + c_i) - v_k)   all i, k   (4.4)
//!        xi_i >= 0, beta free, a_j binary, s_j integer in A                   (4.5)
//! ```
//!
//! `c_i` is a constant score per row (0 in the thesis' problem; the scores of the rules held
//! fixed in a warm-start step). Features in `excluded` get `a_j = 0` (already used).

use super::{BinaryData, RiskScoreMilp, ScaledRule, ScaledScore, ScoreSet};
use crate::logloss_tangents::TangentSet;
use glassbox_core::milp::MilpProblem;
use glassbox_core::{GlassboxError, Result};

/// An ORS MILP with its column layout.
#[derive(Clone, Debug)]
pub struct OrsProblem {
    milp: MilpProblem,
    a: Vec<usize>,
    s: Vec<usize>,
    beta: usize,
    xi: Vec<usize>,
    rules: usize,
    data: BinaryData,
    offsets: Vec<f64>,
    tangents: TangentSet,
}

impl OrsProblem {
    /// Builds the MILP with `rules` (T) features, scores in `scores`, on `data` with the
    /// constant row scores `offsets` and the features `excluded` left out.
    pub fn new(
        data: &BinaryData,
        rules: usize,
        scores: ScoreSet,
        tangents: TangentSet,
        offsets: &[f64],
        excluded: &[usize],
    ) -> Result<Self> {
        let (n, p) = data.x.shape();
        if rules == 0 || rules + excluded.len() > p {
            return Err(GlassboxError::formulation(
                super::ORS,
                format!(
                    "{rules} rules cannot be chosen among {} features",
                    p - excluded.len()
                ),
            ));
        }
        let m = scores.big_m();
        let mut milp = MilpProblem::new("ors");
        let a: Vec<usize> = (0..p)
            .map(|j| {
                let upper = if excluded.contains(&j) { 0.0 } else { 1.0 };
                milp.add_column(format!("a_{j}"), 0.0, upper, 0.0, true)
            })
            .collect();
        let s: Vec<usize> = (0..p)
            .map(|j| milp.add_column(format!("s_{j}"), scores.min, scores.max, 0.0, true))
            .collect();
        let beta = milp.add_column("beta", f64::NEG_INFINITY, f64::INFINITY, 0.0, false);
        let xi: Vec<usize> = (0..n)
            .map(|i| milp.add_column(format!("xi_{i}"), 0.0, f64::INFINITY, 1.0, false))
            .collect();
        milp.add_row(
            "l0_(4.2)",
            rules as f64,
            rules as f64,
            a.iter().map(|&c| (c, 1.0)).collect(),
        );
        for j in 0..p {
            milp.add_row(
                format!("bigM_up_(4.3a)_{j}"),
                f64::NEG_INFINITY,
                0.0,
                vec![(s[j], 1.0), (a[j], -m)],
            );
            milp.add_row(
                format!("bigM_down_(4.3b)_{j}"),
                0.0,
                f64::INFINITY,
                vec![(s[j], 1.0), (a[j], m)],
            );
        }
        for i in 0..n {
            let y = data.y[i];
            let mut terms: Vec<(usize, f64)> = (0..p)
                .filter(|&j| data.x[(i, j)] != 0.0)
                .map(|j| (s[j], y * data.x[(i, j)]))
                .collect();
            terms.push((beta, y));
            tangents.add_rows(
                &mut milp,
                xi[i],
                &terms,
                y * offsets[i],
                &format!("loss_(4.4)_{i}"),
            );
        }
        Ok(OrsProblem {
            milp,
            a,
            s,
            beta,
            xi,
            rules,
            data: data.clone(),
            offsets: offsets.to_vec(),
            tangents,
        })
    }
}

impl RiskScoreMilp for OrsProblem {
    fn milp(&self) -> &MilpProblem {
        &self.milp
    }

    fn decode(&self, x: &[f64]) -> ScaledScore {
        let rules = self
            .a
            .iter()
            .enumerate()
            .filter(|(_, &c)| x[c] > 0.5)
            .map(|(j, _)| ScaledRule {
                feature: j,
                threshold: self.data.thresholds[j],
                points: x[self.s[j]].round() as i64,
            })
            .collect();
        ScaledScore {
            rules,
            intercept: x[self.beta],
        }
    }

    fn point(&self, score: &ScaledScore) -> Option<Vec<f64>> {
        let mut x = vec![0.0; self.milp.num_columns()];
        let mut chosen = 0;
        for rule in &score.rules {
            if self.milp.columns[self.a[rule.feature]].upper < 0.5 {
                return None;
            }
            x[self.a[rule.feature]] = 1.0;
            x[self.s[rule.feature]] = rule.points as f64;
            chosen += 1;
        }
        // (4.2) asks for exactly T features: fill up with free ones at 0 points.
        for &c in &self.a {
            if chosen >= self.rules {
                break;
            }
            if x[c] == 0.0 && self.milp.columns[c].upper > 0.5 {
                x[c] = 1.0;
                chosen += 1;
            }
        }
        x[self.beta] = score.intercept;
        for (i, &c) in self.xi.iter().enumerate() {
            let total: f64 = score
                .rules
                .iter()
                .map(|r| r.points as f64 * self.data.x[(i, r.feature)])
                .sum();
            let margin = self.data.y[i] * (total + score.intercept + self.offsets[i]);
            x[c] = self.tangents.value(margin).max(0.0);
        }
        Some(x)
    }
}
