//! OGRS, the optimal generalized risk score as a MILP (thesis (4.16)): T rules
//! `x_j >= b_t`, one feature per rule, no feature twice, on features scaled to [0, 1].
//!
//! ```text
//!   min  sum_i zeta_i                                                           (4.16a)
//!   s.t. sum_j a_jt = 1                                        all t            (4.16c)
//!        sum_t a_jt <= 1                                       all j            (4.16d)
//!        sum_{k>j} sum_{s<t} a_ks <= (1 - a_jt) T              all j, t         (4.16e)
//!        a_t . x_i >= b_t - 1 + z_it                           all t, i         (4.16f)
//!        a_t . x_i <= b_t - eps + z_it                         all t, i         (4.16g)
//!        1 <= sum_i z_it <= N - 1                              all t        (4.16h-i)
//!        s_t - (1 - z_it) M <= shat_it <= s_t + (1 - z_it) M   all t, i     (4.16j-k)
//!        -z_it M <= shat_it <= z_it M                          all t, i     (4.16l-m)
//!        sbar_i = sum_t shat_it                                all i            (4.16n)
//!        zeta_i >= f(v_k) + f'(v_k) (y_i (sbar_i + beta + c_i) - v_k)   all i, k (4.16o)
//!        a_jt - 1 <= b_t - 0.5 <= 1 - a_jt                     all t, binary j (4.16p-q)
//!        zeta >= 0, beta, b, shat, sbar free; a, z binary; s_t integer in A
//! ```
//!
//! `c_i` is a constant score per row (0 in the thesis' problem; the rules held fixed in a
//! warm-start step); features in `excluded` get `a_jt = 0`.

use super::{RiskScoreData, RiskScoreMilp, ScaledRule, ScaledScore, ScoreSet};
use crate::logloss_tangents::TangentSet;
use glassbox_core::milp::MilpProblem;
use glassbox_core::{GlassboxError, Result};

/// An OGRS MILP with its column layout.
#[derive(Clone, Debug)]
pub struct OgrsProblem {
    milp: MilpProblem,
    /// `a[t][j]`.
    a: Vec<Vec<usize>>,
    /// `z[t][i]`.
    z: Vec<Vec<usize>>,
    /// `shat[t][i]`.
    shat: Vec<Vec<usize>>,
    sbar: Vec<usize>,
    zeta: Vec<usize>,
    s: Vec<usize>,
    b: Vec<usize>,
    beta: usize,
    data: RiskScoreData,
    offsets: Vec<f64>,
    tangents: TangentSet,
    epsilon: f64,
}

impl OgrsProblem {
    /// Builds the MILP with `rules` (T) rules on scaled `data`, scores in `scores`, the
    /// strictness constant `epsilon` of (4.16g), the constant row scores `offsets` and the
    /// features `excluded` left out.
    // Index loops mirror the paper's indices (i rows, j features, t rules).
    #[allow(clippy::too_many_arguments, clippy::needless_range_loop)]
    pub fn new(
        data: &RiskScoreData,
        rules: usize,
        scores: ScoreSet,
        tangents: TangentSet,
        epsilon: f64,
        offsets: &[f64],
        excluded: &[usize],
    ) -> Result<Self> {
        let (n, p) = data.x.shape();
        if rules == 0 || rules + excluded.len() > p {
            return Err(GlassboxError::formulation(
                super::OGRS,
                format!(
                    "{rules} rules cannot be made from {} features",
                    p - excluded.len()
                ),
            ));
        }
        if n < 2 {
            return Err(GlassboxError::formulation(
                super::OGRS,
                "at least two training rows are needed",
            ));
        }
        let m = scores.big_m();
        let t_count = rules as f64;
        let mut milp = MilpProblem::new("ogrs");
        let a: Vec<Vec<usize>> = (0..rules)
            .map(|t| {
                (0..p)
                    .map(|j| {
                        let upper = if excluded.contains(&j) { 0.0 } else { 1.0 };
                        milp.add_column(format!("a_{j}_{t}"), 0.0, upper, 0.0, true)
                    })
                    .collect()
            })
            .collect();
        let z: Vec<Vec<usize>> = (0..rules)
            .map(|t| {
                (0..n)
                    .map(|i| milp.add_binary(format!("z_{i}_{t}"), 0.0))
                    .collect()
            })
            .collect();
        let free = f64::INFINITY;
        let shat: Vec<Vec<usize>> = (0..rules)
            .map(|t| {
                (0..n)
                    .map(|i| milp.add_column(format!("shat_{i}_{t}"), -free, free, 0.0, false))
                    .collect()
            })
            .collect();
        let sbar: Vec<usize> = (0..n)
            .map(|i| milp.add_column(format!("sbar_{i}"), -free, free, 0.0, false))
            .collect();
        let zeta: Vec<usize> = (0..n)
            .map(|i| milp.add_column(format!("zeta_{i}"), 0.0, free, 1.0, false))
            .collect();
        let s: Vec<usize> = (0..rules)
            .map(|t| milp.add_column(format!("s_{t}"), scores.min, scores.max, 0.0, true))
            .collect();
        let b: Vec<usize> = (0..rules)
            .map(|t| milp.add_column(format!("b_{t}"), -free, free, 0.0, false))
            .collect();
        let beta = milp.add_column("beta", -free, free, 0.0, false);

        for (t, a_t) in a.iter().enumerate() {
            milp.add_row(
                format!("one_feature_(4.16c)_{t}"),
                1.0,
                1.0,
                a_t.iter().map(|&c| (c, 1.0)).collect(),
            );
        }
        for j in 0..p {
            milp.add_row(
                format!("feature_once_(4.16d)_{j}"),
                f64::NEG_INFINITY,
                1.0,
                (0..rules).map(|t| (a[t][j], 1.0)).collect(),
            );
        }
        // (4.16e): sum_{k>j} sum_{s<t} a_ks + T a_jt <= T (vacuous for t = 1 and j = p).
        for t in 1..rules {
            for j in 0..p - 1 {
                let mut coefficients: Vec<(usize, f64)> = (0..t)
                    .flat_map(|s_| (j + 1..p).map(move |k| (s_, k)))
                    .map(|(s_, k)| (a[s_][k], 1.0))
                    .collect();
                coefficients.push((a[t][j], t_count));
                milp.add_row(
                    format!("order_(4.16e)_{j}_{t}"),
                    f64::NEG_INFINITY,
                    t_count,
                    coefficients,
                );
            }
        }
        for t in 0..rules {
            for i in 0..n {
                let mut coefficients: Vec<(usize, f64)> = (0..p)
                    .filter(|&j| data.x[(i, j)] != 0.0)
                    .map(|j| (a[t][j], data.x[(i, j)]))
                    .collect();
                coefficients.push((b[t], -1.0));
                coefficients.push((z[t][i], -1.0));
                milp.add_row(
                    format!("satisfied_(4.16f)_{i}_{t}"),
                    -1.0,
                    f64::INFINITY,
                    coefficients.clone(),
                );
                milp.add_row(
                    format!("not_satisfied_(4.16g)_{i}_{t}"),
                    f64::NEG_INFINITY,
                    -epsilon,
                    coefficients,
                );
            }
            milp.add_row(
                format!("discriminative_(4.16h-i)_{t}"),
                1.0,
                (n - 1) as f64,
                z[t].iter().map(|&c| (c, 1.0)).collect(),
            );
            for i in 0..n {
                let (sh, zi) = (shat[t][i], z[t][i]);
                milp.add_row(
                    format!("shat_(4.16j)_{i}_{t}"),
                    -m,
                    f64::INFINITY,
                    vec![(sh, 1.0), (s[t], -1.0), (zi, -m)],
                );
                milp.add_row(
                    format!("shat_(4.16k)_{i}_{t}"),
                    f64::NEG_INFINITY,
                    m,
                    vec![(sh, 1.0), (s[t], -1.0), (zi, m)],
                );
                milp.add_row(
                    format!("shat_(4.16l)_{i}_{t}"),
                    0.0,
                    f64::INFINITY,
                    vec![(sh, 1.0), (zi, m)],
                );
                milp.add_row(
                    format!("shat_(4.16m)_{i}_{t}"),
                    f64::NEG_INFINITY,
                    0.0,
                    vec![(sh, 1.0), (zi, -m)],
                );
            }
        }
        for i in 0..n {
            let mut coefficients = vec![(sbar[i], 1.0)];
            coefficients.extend((0..rules).map(|t| (shat[t][i], -1.0)));
            milp.add_row(format!("total_(4.16n)_{i}"), 0.0, 0.0, coefficients);
            let y = data.y[i];
            tangents.add_rows(
                &mut milp,
                zeta[i],
                &[(sbar[i], y), (beta, y)],
                y * offsets[i],
                &format!("loss_(4.16o)_{i}"),
            );
        }
        for t in 0..rules {
            for j in (0..p).filter(|&j| data.binary[j]) {
                milp.add_row(
                    format!("binary_(4.16p)_{j}_{t}"),
                    -0.5,
                    f64::INFINITY,
                    vec![(b[t], 1.0), (a[t][j], -1.0)],
                );
                milp.add_row(
                    format!("binary_(4.16q)_{j}_{t}"),
                    f64::NEG_INFINITY,
                    1.5,
                    vec![(b[t], 1.0), (a[t][j], 1.0)],
                );
            }
        }
        Ok(OgrsProblem {
            milp,
            a,
            z,
            shat,
            sbar,
            zeta,
            s,
            b,
            beta,
            data: data.clone(),
            offsets: offsets.to_vec(),
            tangents,
            epsilon,
        })
    }
}

impl RiskScoreMilp for OgrsProblem {
    fn milp(&self) -> &MilpProblem {
        &self.milp
    }

    /// The rules of a solution: rule t on the feature with `a_jt = 1`; its threshold is
    /// the midpoint between the largest training value with `z_it = 0` and the smallest with
    /// `z_it = 1` (any b in that gap makes the same training rows satisfy the rule; the
    /// midpoint generalizes best), or `b_t` itself when one side is empty.
    fn decode(&self, x: &[f64]) -> ScaledScore {
        let n = self.data.x.nrows();
        let mut rules = Vec::new();
        for (t, a_t) in self.a.iter().enumerate() {
            let Some(j) = (0..a_t.len()).max_by(|&u, &v| x[a_t[u]].total_cmp(&x[a_t[v]])) else {
                continue;
            };
            let (mut below, mut above) = (f64::NEG_INFINITY, f64::INFINITY);
            for i in 0..n {
                let v = self.data.x[(i, j)];
                if x[self.z[t][i]] > 0.5 {
                    above = above.min(v);
                } else {
                    below = below.max(v);
                }
            }
            let threshold = if below.is_finite() && above.is_finite() && below < above {
                0.5 * (below + above)
            } else {
                x[self.b[t]]
            };
            rules.push(ScaledRule {
                feature: j,
                threshold,
                points: x[self.s[t]].round() as i64,
            });
        }
        ScaledScore {
            rules,
            intercept: x[self.beta],
        }
    }

    /// The MILP point of a score with T rules on distinct, usable features: rules ordered by
    /// feature (4.16e), `b_t` the smallest training value that satisfies rule t (so
    /// (4.16f-g) hold whenever the values on the two sides are `epsilon` apart).
    fn point(&self, score: &ScaledScore) -> Option<Vec<f64>> {
        let rules_count = self.a.len();
        if score.rules.len() != rules_count {
            return None;
        }
        let mut rules = score.rules.clone();
        rules.sort_by_key(|r| r.feature);
        let n = self.data.x.nrows();
        let mut x = vec![0.0; self.milp.num_columns()];
        let mut totals = vec![0.0; n];
        for (t, rule) in rules.iter().enumerate() {
            let j = rule.feature;
            if self.milp.columns[self.a[t][j]].upper < 0.5 {
                return None;
            }
            x[self.a[t][j]] = 1.0;
            x[self.s[t]] = rule.points as f64;
            let mut b = f64::INFINITY;
            let mut below = f64::NEG_INFINITY;
            for i in 0..n {
                let v = self.data.x[(i, j)];
                if v >= rule.threshold {
                    x[self.z[t][i]] = 1.0;
                    x[self.shat[t][i]] = rule.points as f64;
                    totals[i] += rule.points as f64;
                    b = b.min(v);
                } else {
                    below = below.max(v);
                }
            }
            if !b.is_finite() || below > b - self.epsilon {
                return None;
            }
            x[self.b[t]] = if self.data.binary[j] { 0.5 } else { b };
        }
        x[self.beta] = score.intercept;
        for i in 0..n {
            x[self.sbar[i]] = totals[i];
            let margin = self.data.y[i] * (totals[i] + score.intercept + self.offsets[i]);
            x[self.zeta[i]] = self.tangents.value(margin).max(0.0);
        }
        Some(x)
    }
}
