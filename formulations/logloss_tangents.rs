//! The piecewise-linear under-estimator of the logistic loss used by the MILP formulations
//! that fit a logistic model (risk scores, chapter 4 of Aldinucci's thesis; loss-optimal
//! trees OLCT, chapter 3): the maximum of tangent lines of `f(v) = log(1 + exp(-v))` at the
//! points of one of Sato et al.'s (2016) sets
//!
//! ```text
//!   V0 = {0, +-inf}         V1 = V0 u {+-1.9}        V2 = V1 u {+-0.89, +-3.55}
//!   V3 = V2 u {+-0.44, +-1.37, +-2.63, +-5.16}
//! ```
//!
//! so that `xi >= f(v_k) + f'(v_k) (m - v_k)` for every `k` (thesis (3.16), (4.4), (4.16o))
//! makes a slack `xi` at least the approximate loss of a margin `m = y (score)`. The tangent
//! "at +inf" is the line 0 and the one "at -inf" the line `-m` (the limits of the tangents,
//! both asymptotes of `f`).
//!
//! Depends on the core's MILP type only.

use glassbox_core::milp::MilpProblem;
use glassbox_core::{GlassboxError, Result};
use serde::{Deserialize, Serialize};

/// One of Sato et al.'s sets of tangent points.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum TangentSet {
    /// `{0, +-inf}`.
    V0,
    /// `V0 u {+-1.9}`.
    V1,
    /// `V1 u {+-0.89, +-3.55}`.
    V2,
    /// `V2 u {+-0.44, +-1.37, +-2.63, +-5.16}` (the thesis' choice for risk scores).
    #[default]
    V3,
}

/// A line `slope * m + intercept`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Line {
    /// The slope `f'(v_k)`, in [-1, 0].
    pub slope: f64,
    /// `f(v_k) - f'(v_k) v_k`.
    pub intercept: f64,
}

impl Line {
    /// The line at margin `m`.
    pub fn at(&self, m: f64) -> f64 {
        self.slope * m + self.intercept
    }
}

/// The logistic loss `f(v) = log(1 + exp(-v))`, computed without overflow.
pub fn logistic_loss(v: f64) -> f64 {
    if v > 0.0 {
        (-v).exp().ln_1p()
    } else {
        -v + v.exp().ln_1p()
    }
}

/// `f'(v) = -1 / (1 + exp(v))`.
fn logistic_loss_slope(v: f64) -> f64 {
    -1.0 / (1.0 + v.exp())
}

impl TangentSet {
    /// Parses "V0" to "V3" (case-insensitive).
    pub fn parse(text: &str) -> Result<Self> {
        match text.to_ascii_uppercase().as_str() {
            "V0" => Ok(TangentSet::V0),
            "V1" => Ok(TangentSet::V1),
            "V2" => Ok(TangentSet::V2),
            "V3" => Ok(TangentSet::V3),
            _ => Err(GlassboxError::Config(format!(
                "unknown set of tangent points '{text}': use \"V0\", \"V1\", \"V2\" or \"V3\""
            ))),
        }
    }

    /// The tangent points, ascending (with `-inf` first and `+inf` last).
    pub fn points(&self) -> Vec<f64> {
        let positive: &[f64] = match self {
            TangentSet::V0 => &[],
            TangentSet::V1 => &[1.9],
            TangentSet::V2 => &[0.89, 1.9, 3.55],
            TangentSet::V3 => &[0.44, 0.89, 1.37, 1.9, 2.63, 3.55, 5.16],
        };
        let mut points = vec![f64::NEG_INFINITY];
        points.extend(positive.iter().rev().map(|v| -v));
        points.push(0.0);
        points.extend(positive.iter().copied());
        points.push(f64::INFINITY);
        points
    }

    /// The tangent lines, in the order of [`TangentSet::points`] (slopes ascending).
    pub fn lines(&self) -> Vec<Line> {
        self.points()
            .into_iter()
            .map(|v| {
                if v == f64::NEG_INFINITY {
                    Line {
                        slope: -1.0,
                        intercept: 0.0,
                    }
                } else if v == f64::INFINITY {
                    Line {
                        slope: 0.0,
                        intercept: 0.0,
                    }
                } else {
                    let slope = logistic_loss_slope(v);
                    Line {
                        slope,
                        intercept: logistic_loss(v) - slope * v,
                    }
                }
            })
            .collect()
    }

    /// The approximate loss at margin `m`: the largest of the lines (never above `f(m)`).
    pub fn value(&self, m: f64) -> f64 {
        self.lines()
            .iter()
            .map(|l| l.at(m))
            .fold(f64::NEG_INFINITY, f64::max)
    }

    /// The margins where the approximation bends (consecutive lines cross), ascending: a
    /// convex piecewise-linear function of these pieces attains its minimum at one of them.
    pub fn breakpoints(&self) -> Vec<f64> {
        self.lines()
            .windows(2)
            .map(|w| (w[1].intercept - w[0].intercept) / (w[0].slope - w[1].slope))
            .collect()
    }

    /// Adds the rows `xi - f'(v_k) * margin >= f(v_k) - f'(v_k) v_k` to `problem`, one per
    /// tangent, with `margin = sum coef * x[col] + constant` given by `margin_terms` and
    /// `margin_constant`. The line at `+inf` is `xi >= 0`: it is left to the column bound of
    /// `xi`, which must be `>= 0` (as `xi in R+` in the thesis), instead of a row.
    pub fn add_rows(
        &self,
        problem: &mut MilpProblem,
        xi: usize,
        margin_terms: &[(usize, f64)],
        margin_constant: f64,
        name: &str,
    ) {
        self.add_switched_rows(problem, xi, margin_terms, margin_constant, &[], 0.0, name);
    }

    /// [`TangentSet::add_rows`] with a big-M switch: the rows
    /// `xi >= f(v_k) + f'(v_k) (margin - v_k) - big_m (1 - sum switch)` bind only when the
    /// binaries `switch` sum to 1 (OLCT's (3.15): the point reaches the node). An empty
    /// `switch` with `big_m = 0` gives the plain rows.
    #[allow(clippy::too_many_arguments)]
    pub fn add_switched_rows(
        &self,
        problem: &mut MilpProblem,
        xi: usize,
        margin_terms: &[(usize, f64)],
        margin_constant: f64,
        switch: &[usize],
        big_m: f64,
        name: &str,
    ) {
        debug_assert!(problem.columns[xi].lower >= 0.0);
        for (k, line) in self.lines().iter().enumerate() {
            if line.slope == 0.0 && line.intercept == 0.0 {
                continue;
            }
            let mut coefficients = Vec::with_capacity(margin_terms.len() + 1);
            coefficients.push((xi, 1.0));
            coefficients.extend(
                margin_terms
                    .iter()
                    .filter(|(_, c)| *c != 0.0)
                    .map(|&(j, c)| (j, -line.slope * c)),
            );
            coefficients.extend(switch.iter().map(|&z| (z, -big_m)));
            problem.add_row(
                format!("{name}_tangent{k}"),
                line.intercept + line.slope * margin_constant - big_m,
                f64::INFINITY,
                coefficients,
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets_have_the_thesis_sizes_and_are_symmetric() {
        for (set, n) in [
            (TangentSet::V0, 3),
            (TangentSet::V1, 5),
            (TangentSet::V2, 9),
            (TangentSet::V3, 17),
        ] {
            let p = set.points();
            assert_eq!(p.len(), n, "{set:?}");
            for (a, b) in p.iter().zip(p.iter().rev()) {
                assert_eq!(*a, -*b);
            }
        }
    }

    #[test]
    fn lines_under_estimate_and_touch_the_loss() {
        for set in [
            TangentSet::V0,
            TangentSet::V1,
            TangentSet::V2,
            TangentSet::V3,
        ] {
            for v in set.points().into_iter().filter(|v| v.is_finite()) {
                assert!((set.value(v) - logistic_loss(v)).abs() < 1e-12);
            }
            for k in -200..=200 {
                let m = k as f64 * 0.1;
                assert!(set.value(m) <= logistic_loss(m) + 1e-12);
            }
            // Far out, the asymptotes take over.
            assert!((set.value(-50.0) - 50.0).abs() < 1e-9);
            assert!(set.value(50.0).abs() < 1e-9);
        }
        // More points, a tighter approximation.
        let m = 1.1;
        assert!(TangentSet::V0.value(m) < TangentSet::V3.value(m));
        assert!(logistic_loss(m) - TangentSet::V3.value(m) < 0.01);
    }

    #[test]
    fn breakpoints_are_where_the_maximum_changes_line() {
        let set = TangentSet::V2;
        let lines = set.lines();
        let b = set.breakpoints();
        assert!(b.windows(2).all(|w| w[0] < w[1]));
        for (k, &m) in b.iter().enumerate() {
            assert!((lines[k].at(m) - lines[k + 1].at(m)).abs() < 1e-12);
            assert!((set.value(m) - lines[k].at(m)).abs() < 1e-12);
        }
    }

    #[test]
    fn rows_bound_the_slack_by_the_approximation() {
        let mut p = MilpProblem::new("t");
        let x = p.add_column("x", -10.0, 10.0, 0.0, false);
        let xi = p.add_column("xi", 0.0, f64::INFINITY, 1.0, false);
        // margin = -2 x + 0.5
        TangentSet::V1.add_rows(&mut p, xi, &[(x, -2.0)], 0.5, "r");
        assert_eq!(p.num_rows(), 4);
        for xv in [-3.0, -0.4, 0.0, 0.7, 2.0] {
            let m = -2.0 * xv + 0.5;
            let approx = TangentSet::V1.value(m).max(0.0);
            assert!(p.is_feasible(&[xv, approx]));
            assert!(!p.is_feasible(&[xv, approx - 1e-3]) || approx < 1e-3);
        }
        assert_eq!(TangentSet::parse("v2").unwrap(), TangentSet::V2);
        assert!(TangentSet::parse("V4").is_err());
    }
}
