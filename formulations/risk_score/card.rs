//! The fitted risk score in the user's units, the score card people use (a table of rules
//! and points, and a table from total score to predicted risk, as the thesis' CHADS2 figure
//! 4.1), and the edits of Theorem 4.1 and Corollaries 4.1-4.2, which keep every prediction.

use glassbox_core::data::Encoding;
use glassbox_core::model::{CheckedModel, Classifier};
use glassbox_core::{GlassboxError, Result};
use nalgebra::DMatrix;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::Path;

/// Which side of its threshold a rule tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// `x_j >= threshold` (the rules OGRS learns).
    AtLeast,
    /// `x_j < threshold` (a flipped rule, Theorem 4.1).
    Below,
}

impl Direction {
    fn flipped(self) -> Self {
        match self {
            Direction::AtLeast => Direction::Below,
            Direction::Below => Direction::AtLeast,
        }
    }
}

/// One rule of a score card: its points are added when the feature is on its side of the
/// threshold.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Rule {
    /// The encoded feature's index.
    pub feature: usize,
    /// The encoded feature's name.
    pub name: String,
    /// The threshold, in the user's units.
    pub threshold: f64,
    /// Which side of the threshold earns the points.
    pub direction: Direction,
    /// The points (an integer of the score set A).
    pub points: i64,
    /// For a feature with two values in the training data, (low, high). Where they are 0
    /// and 1 (an indicator, such as a dummy of a categorical column) the card says `name =
    /// 1` (or `= 0`) instead of the threshold; other pairs keep the threshold, which is
    /// what `predict` applies to a value between them.
    #[serde(default)]
    pub two_values: Option<(f64, f64)>,
}

impl Rule {
    /// Whether the rule holds for feature value `v` (user units).
    pub fn holds(&self, v: f64) -> bool {
        match self.direction {
            Direction::AtLeast => v >= self.threshold,
            Direction::Below => v < self.threshold,
        }
    }

    /// The rule as a person reads it.
    pub fn text(&self) -> String {
        let indicator = self.two_values == Some((0.0, 1.0));
        match (indicator, self.direction) {
            (true, Direction::AtLeast) => format!("{} = 1", self.name),
            (true, Direction::Below) => format!("{} = 0", self.name),
            (false, Direction::AtLeast) => format!("{} >= {}", self.name, self.threshold),
            (false, Direction::Below) => format!("{} < {}", self.name, self.threshold),
        }
    }
}

/// A fitted (generalized) risk score: `P(positive | x) = sigma(sum of the points of the
/// rules that hold + intercept)`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RiskScoreModel {
    /// "ors" or "ogrs".
    pub formulation: String,
    /// The rules with non-zero points (a rule of 0 points changes no prediction and is left
    /// off the card).
    pub rules: Vec<Rule>,
    /// beta, the real intercept of the logit.
    pub intercept: f64,
    /// The classes: `[negative, positive]`.
    pub classes: Vec<String>,
    /// How raw columns are encoded into features.
    pub encoding: Encoding,
}

/// The logistic function.
pub fn sigmoid(v: f64) -> f64 {
    if v >= 0.0 {
        1.0 / (1.0 + (-v).exp())
    } else {
        let e = v.exp();
        e / (1.0 + e)
    }
}

impl RiskScoreModel {
    /// The total score (sum of points of the rules that hold) of every row of `x` (encoded,
    /// unscaled features).
    pub fn scores(&self, x: &DMatrix<f64>) -> Vec<i64> {
        (0..x.nrows())
            .map(|i| {
                self.rules
                    .iter()
                    .filter(|r| r.holds(x[(i, r.feature)]))
                    .map(|r| r.points)
                    .sum()
            })
            .collect()
    }

    /// The predicted risk (probability of the positive class) of a total score.
    pub fn risk_of_score(&self, score: i64) -> f64 {
        sigmoid(score as f64 + self.intercept)
    }

    /// The predicted risk of every row of `x`.
    pub fn risks(&self, x: &DMatrix<f64>) -> Vec<f64> {
        self.scores(x)
            .into_iter()
            .map(|s| self.risk_of_score(s))
            .collect()
    }

    /// Every total score a row can reach (the sums of the subsets of the rules' points;
    /// rules on one feature on opposite sides never both hold, but the card lists the sums
    /// regardless), ascending.
    pub fn reachable_scores(&self) -> Vec<i64> {
        let mut sums = BTreeSet::from([0i64]);
        for r in &self.rules {
            let more: Vec<i64> = sums.iter().map(|s| s + r.points).collect();
            sums.extend(more);
        }
        sums.into_iter().collect()
    }

    /// Theorem 4.1: rule `k` tests the other side of its threshold, its points change sign
    /// and the intercept gains its old points; every prediction stays the same.
    pub fn flip_rule(&self, k: usize) -> Result<RiskScoreModel> {
        let Some(rule) = self.rules.get(k) else {
            return Err(GlassboxError::formulation(
                &self.formulation,
                format!(
                    "there is no rule {k}: the model has {} rules",
                    self.rules.len()
                ),
            ));
        };
        let mut out = self.clone();
        out.intercept += rule.points as f64;
        out.rules[k].points = -rule.points;
        out.rules[k].direction = rule.direction.flipped();
        Ok(out)
    }

    /// Corollary 4.1: the equivalent model whose points are all non-negative (every rule of
    /// negative points flipped).
    pub fn with_nonnegative_points(&self) -> RiskScoreModel {
        self.flip_where(|r| r.points < 0)
    }

    /// Corollary 4.2: the equivalent model whose rules all test the same side,
    /// `direction`.
    pub fn with_direction(&self, direction: Direction) -> RiskScoreModel {
        self.flip_where(|r| r.direction != direction)
    }

    fn flip_where(&self, flip: impl Fn(&Rule) -> bool) -> RiskScoreModel {
        let mut out = self.clone();
        for r in out.rules.iter_mut().filter(|r| flip(r)) {
            out.intercept += r.points as f64;
            r.points = -r.points;
            r.direction = r.direction.flipped();
        }
        out
    }

    /// The score card: the rules and their points, the intercept, and the table from total
    /// score to predicted risk.
    pub fn card(&self) -> String {
        let positive = self.classes.get(1).map_or("?", |s| s.as_str());
        let mut out = String::new();
        let title = if self.formulation == super::OGRS {
            "Generalized risk score (OGRS)"
        } else {
            "Risk score (ORS)"
        };
        let _ = writeln!(
            out,
            "{title}: risk = P(class = \"{positive}\") = 1 / (1 + exp(-(SCORE + intercept)))"
        );
        let width = self
            .rules
            .iter()
            .map(|r| r.text().len())
            .max()
            .unwrap_or(0)
            .max(24);
        let _ = writeln!(out, "  {:>2}  {:<width$}  {:>6}", "#", "rule", "points");
        for (k, r) in self.rules.iter().enumerate() {
            let _ = writeln!(
                out,
                "  {:>2}  {:<width$}  {:>+6}",
                k + 1,
                r.text(),
                r.points
            );
        }
        let _ = writeln!(
            out,
            "  SCORE = sum of the points of the rules that hold; intercept = {:.6}",
            self.intercept
        );
        let _ = writeln!(out, "  {:>6}  {:>8}", "SCORE", "risk");
        for s in self.reachable_scores() {
            let _ = writeln!(out, "  {:>6}  {:>7.2}%", s, 100.0 * self.risk_of_score(s));
        }
        out
    }

    /// Saves the model as JSON (tagged with its formulation's name).
    pub fn save(&self, path: &Path) -> Result<()> {
        glassbox_core::model::save_json(path, &self.formulation, self)
    }

    /// Loads a model saved by [`RiskScoreModel::save`] (of either formulation).
    pub fn load(path: &Path) -> Result<Self> {
        let kind = glassbox_core::model::model_kind(path)?;
        if kind != super::ORS && kind != super::OGRS {
            return Err(GlassboxError::Model {
                file: path.display().to_string(),
                message: format!("this is a '{kind}' model, expected an 'ors' or 'ogrs' model"),
            });
        }
        glassbox_core::model::load_json(path, &kind)
    }
}

/// The largest sum of |points| a model read from a file may have: the card lists every
/// reachable total score, at most twice this many (the thesis' cards use points in -5..5
/// on a handful of rules); a larger sum could also overflow the i64 scores.
pub const MAX_TOTAL_POINTS: u64 = 100_000;

impl CheckedModel for RiskScoreModel {
    /// Two classes, rules on existing features, totals that stay small.
    fn check(&self, _kind: &str) -> std::result::Result<(), String> {
        if self.classes.len() != 2 {
            return Err(format!(
                "{} class(es), expected 2 (negative, positive)",
                self.classes.len()
            ));
        }
        let p = self.encoding.n_features();
        if let Some((k, r)) = self.rules.iter().enumerate().find(|(_, r)| r.feature >= p) {
            return Err(format!(
                "rule {} tests feature {} but the model has {p}",
                k + 1,
                r.feature
            ));
        }
        let total = self
            .rules
            .iter()
            .fold(0u64, |sum, r| sum.saturating_add(r.points.unsigned_abs()));
        if total > MAX_TOTAL_POINTS {
            return Err(format!(
                "the rules' |points| sum to {total}, above {MAX_TOTAL_POINTS}"
            ));
        }
        Ok(())
    }
}

impl Classifier for RiskScoreModel {
    fn classes(&self) -> &[String] {
        &self.classes
    }

    fn encoding(&self) -> &Encoding {
        &self.encoding
    }

    fn describe(&self) -> String {
        self.card()
    }

    fn predict_proba(&self, x: &DMatrix<f64>) -> DMatrix<f64> {
        let risks = self.risks(x);
        DMatrix::from_fn(risks.len(), 2, |i, k| {
            if k == 1 {
                risks[i]
            } else {
                1.0 - risks[i]
            }
        })
    }
}

/// The shortest decimal number in the middle half of `(low, high)` (for a threshold
/// between two training values that a person can read and type), or the midpoint. Finite
/// for finite `low` and `high`, even near `f64::MAX`, where `low + high` overflows.
pub fn readable_between(low: f64, high: f64) -> f64 {
    // `0.5 * (low + high)` is exact halving of the rounded sum, and so is `0.5 * low + 0.5
    // * high` (halving commutes with rounding) except for subnormal halves: the sum is kept
    // wherever it is finite, so every ordinary threshold stays bit-identical, and the halves
    // are added only where the sum overflows. The same for the slack's difference.
    let sum = low + high;
    let mid = if sum.is_finite() {
        0.5 * sum
    } else {
        0.5 * low + 0.5 * high
    };
    let gap = high - low;
    let slack = if gap.is_finite() {
        0.25 * gap
    } else {
        0.25 * high - 0.25 * low
    };
    if slack.is_nan() || slack <= 0.0 || !mid.is_finite() {
        return mid;
    }
    for digits in -6i32..=12 {
        let unit = 10f64.powi(-digits);
        let candidate = (mid / unit).round() * unit;
        // Print-and-parse so the stored number is exactly the printed one.
        let candidate: f64 = format!("{candidate:.prec$}", prec = digits.max(0) as usize)
            .parse()
            .unwrap_or(mid);
        if (candidate - mid).abs() <= slack && candidate > low && candidate < high {
            return candidate;
        }
    }
    mid
}

glassbox_core::fitted_model!(RiskScoreModel, classifier);

#[cfg(test)]
mod tests {
    use super::{Direction, Rule};

    fn rule(two_values: Option<(f64, f64)>, threshold: f64, direction: Direction) -> Rule {
        Rule {
            feature: 0,
            name: "a".into(),
            threshold,
            direction,
            points: 1,
            two_values,
        }
    }

    /// The card's text says what `holds` applies: an indicator reads `a = 1` / `a = 0`, any
    /// other two-valued feature keeps its threshold, so a value between the two (6 of 3
    /// and 7) is read on the card as `predict` takes it.
    #[test]
    fn a_rule_reads_as_predict_applies_it() {
        let at_least = rule(Some((3.0, 7.0)), 5.0, Direction::AtLeast);
        assert_eq!(at_least.text(), "a >= 5");
        assert!(at_least.holds(6.0));
        assert_eq!(
            rule(Some((3.0, 7.0)), 5.0, Direction::Below).text(),
            "a < 5"
        );
        assert_eq!(
            rule(Some((0.0, 1.0)), 0.5, Direction::AtLeast).text(),
            "a = 1"
        );
        assert_eq!(
            rule(Some((0.0, 1.0)), 0.5, Direction::Below).text(),
            "a = 0"
        );
        assert_eq!(rule(None, 2.5, Direction::AtLeast).text(), "a >= 2.5");
    }
}
