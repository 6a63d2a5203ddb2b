//! Risk scores as MILPs (Aldinucci's thesis, chapter 4): ORS, the optimal risk score on
//! binary features (4.1)-(4.5), and OGRS, the optimal generalized risk score with rules
//! `x_j >= b_j` on features scaled to [0, 1] (4.16), both with the log-loss replaced by the
//! tangent under-estimator of [`crate::logloss_tangents`].
//!
//! - [`ors`] and [`ogrs`] build the MILPs, map a solution to rules and rules to a MIP start;
//! - the thesis' warm start, one rule at a time with the others fixed, solves each step
//!   exactly by enumeration ([`step`]) or as a one-rule MILP ([`greedy_start`]);
//! - [`stump`] is the baseline binarization (one log-loss stump per feature) that ORS runs
//!   on with `binarize = "stump"`;
//! - [`card`] is the fitted model, its score card and the edits of Theorem 4.1 and
//!   Corollaries 4.1-4.2.
//!
//! Labels: the second class (in the encoding's order) is the positive one, `y = +1`.
//! The score set A is the integer range `[score_min, score_max]`, which must hold 0 (an
//! unselected feature has score 0 in (4.3)); the big-M is `max |s|` over A, as the thesis.
//!
//! Depends on the core (`milp`, `data`, `model`, `formulation`, the solver trait and its
//! options and results), never on a backend.

pub mod card;
pub mod ogrs;
pub mod ors;
pub mod step;
pub mod stump;

use crate::logloss_tangents::TangentSet;
pub use card::{Direction, RiskScoreModel, Rule};
use glassbox_core::data::{Encoding, MinMaxScaler};
use glassbox_core::formulation::{FormulationInfo, ParamSpec};
use glassbox_core::milp::MilpProblem;
use glassbox_core::{GlassboxError, MilpSolver, Result, SolveOptions, SolveResult, WarmStart};
use nalgebra::DMatrix;
use serde::{Deserialize, Serialize};
use std::time::Instant;

/// The name of the risk score on binary features.
pub const ORS: &str = "ors";
/// The name of the generalized risk score.
pub const OGRS: &str = "ogrs";

/// Which of the two formulations.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Kind {
    /// ORS (4.1)-(4.5).
    Ors,
    /// OGRS (4.16).
    #[default]
    Ogrs,
}

/// How ORS gets binary features.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Binarize {
    /// The features must already have at most two values.
    #[default]
    None,
    /// One log-loss decision stump per feature (the thesis' baseline).
    Stump,
}

/// How each step of the warm start is solved.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StepSolver {
    /// Exactly, by enumeration of the one-rule problem ([`step::best_rule`]).
    #[default]
    Enumerate,
    /// As a one-rule MILP by the configured solver, within `warm_start_time_limit`.
    Milp,
}

/// The parameters of a risk score, as written in the `[formulation]` table of a config.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RiskScoreConfig {
    /// ORS or OGRS (from the table's `name`).
    #[serde(skip)]
    pub kind: Kind,
    /// T, the number of rules.
    pub rules: usize,
    /// The smallest score of A.
    pub score_min: i64,
    /// The largest score of A.
    pub score_max: i64,
    /// The tangent points of the log-loss under-estimator.
    pub tangents: TangentSet,
    /// epsilon of (4.16g), on features scaled to [0, 1] (OGRS).
    pub epsilon: f64,
    /// Start the MILP from the thesis' greedy warm start (one rule at a time).
    pub warm_start: bool,
    /// Time limit of each warm-start step, seconds (default: the solver's time limit over
    /// 2T, or none); an enumerated step past it keeps the best rule found so far.
    pub warm_start_time_limit: Option<f64>,
    /// How each warm-start step is solved: "enumerate" (exactly) or "milp".
    pub warm_start_steps: StepSolver,
    /// ORS only: "none" (binary features) or "stump" (the baseline binarization).
    pub binarize: Binarize,
}

impl Default for RiskScoreConfig {
    fn default() -> Self {
        RiskScoreConfig {
            kind: Kind::Ogrs,
            rules: 3,
            score_min: -5,
            score_max: 5,
            tangents: TangentSet::V3,
            epsilon: 1e-4,
            warm_start: true,
            warm_start_time_limit: None,
            warm_start_steps: StepSolver::Enumerate,
            binarize: Binarize::None,
        }
    }
}

const PARAMS_ORS: &[ParamSpec] = &[
    ParamSpec {
        name: "rules",
        default: "3",
        help: "T, the number of features with a score (4.2); T above the number of features uses them all",
    },
    ParamSpec {
        name: "score_min",
        default: "-5",
        help: "smallest score of A (A = score_min..score_max, holds 0)",
    },
    ParamSpec {
        name: "score_max",
        default: "5",
        help: "largest score of A",
    },
    ParamSpec {
        name: "tangents",
        default: "\"V3\"",
        help: "tangent points of the log-loss under-estimator: V0, V1, V2 or V3",
    },
    ParamSpec {
        name: "warm_start",
        default: "true",
        help: "greedy MIP start: one rule at a time, the others fixed",
    },
    ParamSpec {
        name: "warm_start_steps",
        default: "\"enumerate\"",
        help: "warm-start steps solved exactly by \"enumerate\", or as one-rule MILPs (\"milp\")",
    },
    ParamSpec {
        name: "warm_start_time_limit",
        default: "",
        help: "seconds per warm-start step (default: solver time_limit / 2T)",
    },
    ParamSpec {
        name: "binarize",
        default: "\"none\"",
        help: "\"none\" (binary features) or \"stump\" (one log-loss stump per feature)",
    },
];

const PARAMS_OGRS: &[ParamSpec] = &[
    PARAMS_ORS[0],
    PARAMS_ORS[1],
    PARAMS_ORS[2],
    PARAMS_ORS[3],
    ParamSpec {
        name: "epsilon",
        default: "1e-4",
        help: "epsilon of the strict side of a rule (4.16g), scaled units",
    },
    PARAMS_ORS[4],
    PARAMS_ORS[5],
    PARAMS_ORS[6],
];

/// The description of ORS for `glassbox formulations`.
pub fn info_ors() -> FormulationInfo {
    FormulationInfo {
        name: ORS,
        kind: "milp",
        description:
            "optimal risk score on binary features (thesis 4.1-4.5), log-loss by tangents V0-V3",
        parameters: PARAMS_ORS,
    }
}

/// The description of OGRS for `glassbox formulations`.
pub fn info_ogrs() -> FormulationInfo {
    FormulationInfo {
        name: OGRS,
        kind: "milp",
        description:
            "optimal generalized risk score, rules x_j >= b_j on scaled features (thesis 4.16)",
        parameters: PARAMS_OGRS,
    }
}

/// The score set A as an integer range.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScoreSet {
    /// Smallest score.
    pub min: f64,
    /// Largest score.
    pub max: f64,
}

impl ScoreSet {
    /// `M = max |s|` over A.
    pub fn big_m(&self) -> f64 {
        self.min.abs().max(self.max.abs())
    }
}

impl RiskScoreConfig {
    /// The formulation's name.
    pub fn name(&self) -> &'static str {
        match self.kind {
            Kind::Ors => ORS,
            Kind::Ogrs => OGRS,
        }
    }

    /// The score set A.
    pub fn score_set(&self) -> ScoreSet {
        ScoreSet {
            min: self.score_min as f64,
            max: self.score_max as f64,
        }
    }

    /// The number of rules the MILPs get on data with `features` columns: T, or every
    /// feature when T is larger. The choice (the thesis assumes T <= p): (4.2) picks exactly
    /// T distinct features and A holds 0, so T rules are "at most T scored features"; with
    /// T >= p that is every feature, the same set of score cards as T = p. Data with fewer
    /// columns than the default T (e.g. two features) are then fitted, not rejected.
    pub fn rules_for(&self, features: usize) -> usize {
        self.rules.min(features)
    }

    /// Checks the parameters for data with `classes` classes (any number of features: see
    /// [`RiskScoreConfig::rules_for`]).
    pub fn check(&self, classes: usize) -> Result<()> {
        let bad = |m: String| Err(GlassboxError::formulation(self.name(), m));
        if classes != 2 {
            return bad(format!(
                "a risk score needs exactly two classes, the data have {classes}"
            ));
        }
        if self.rules == 0 {
            return bad("rules (T) must be at least 1, got 0".into());
        }
        if !(self.score_min <= 0 && 0 <= self.score_max && self.score_min < self.score_max) {
            return bad(format!(
                "the score set score_min..score_max must hold 0 and another score, got {}..{}",
                self.score_min, self.score_max
            ));
        }
        // The warm start enumerates every score of A, the MILPs' big-M is max |s| and a saved
        // card's |points| may sum to at most MAX_TOTAL_POINTS: a wider A cannot be worked
        // with (nor a card of such points read back).
        let width = i128::from(self.score_max) - i128::from(self.score_min);
        if width > i128::from(card::MAX_TOTAL_POINTS) {
            return bad(format!(
                "the score set score_min..score_max is too wide: score_max - score_min must be \
                 at most {}, got {}..{}",
                card::MAX_TOTAL_POINTS,
                self.score_min,
                self.score_max
            ));
        }
        if self.kind == Kind::Ors && self.epsilon != RiskScoreConfig::default().epsilon {
            return bad(format!(
                "epsilon is an OGRS option (the gap of a rule's threshold); ORS's features are \
                 binary: leave epsilon out, got {}",
                self.epsilon
            ));
        }
        if !(self.epsilon > 0.0 && self.epsilon < 0.5) {
            return bad(format!(
                "epsilon must be in (0, 0.5) (scaled units), got {}",
                self.epsilon
            ));
        }
        if let Some(t) = self.warm_start_time_limit {
            if !(t > 0.0 && t.is_finite()) {
                return bad(format!(
                    "warm_start_time_limit must be a positive number of seconds, got {t}"
                ));
            }
        }
        // The warm start's own options with the warm start off would be silently unused.
        if !self.warm_start {
            let defaults = RiskScoreConfig::default();
            for (key, set) in [
                (
                    "warm_start_steps",
                    self.warm_start_steps != defaults.warm_start_steps,
                ),
                (
                    "warm_start_time_limit",
                    self.warm_start_time_limit.is_some(),
                ),
            ] {
                if set {
                    return bad(format!(
                        "{key} sets up the greedy warm start, which warm_start = false turns \
                         off: remove {key}, or set warm_start = true"
                    ));
                }
            }
        }
        if self.kind == Kind::Ogrs && self.binarize != Binarize::None {
            return bad("binarize is an ORS option (OGRS learns its own thresholds)".into());
        }
        Ok(())
    }

    /// OGRS's rules each split the rows on a feature of their own ((4.16c)-(4.16i)), so the
    /// MILP is infeasible with fewer varying features in `x` than rules: said here, where
    /// the backend could only say "infeasible".
    /// A split must also leave values at least `epsilon` apart on its two sides ((4.16f-g),
    /// on the features scaled on these rows): only features with such a gap count, the
    /// allowed cuts of [`step::ogrs_cuts`].
    fn check_varying(&self, x: &DMatrix<f64>) -> Result<()> {
        let varying = x
            .column_iter()
            .filter(|c| c.iter().any(|v| *v != c[0]))
            .count();
        let rules = self.rules_for(x.ncols());
        let remedy = |k: usize| match k {
            0 => String::new(),
            k => format!("set rules <= {k}, or "),
        };
        if varying < rules {
            return Err(GlassboxError::formulation(
                OGRS,
                format!(
                    "OGRS's {rules} rules each split the rows on a feature of their own \
                     (thesis (4.16c)-(4.16i)), but {varying} feature(s) vary on these rows: \
                     {}use the formulation \"ors\"",
                    remedy(varying)
                ),
            ));
        }
        let scaled = MinMaxScaler::fit(x).transform(x);
        let data = RiskScoreData {
            x: scaled,
            y: Vec::new(),
            binary: Vec::new(),
        };
        let cuts = step::ogrs_cuts(&data, self.epsilon);
        let splittable = cuts.iter().filter(|c| !c.cuts.is_empty()).count();
        if splittable < rules {
            // The epsilon that lets `rules` features split: the `rules`-th largest of the
            // features' widest gaps between consecutive values (scaled units).
            let mut widest: Vec<f64> = cuts
                .iter()
                .map(|c| {
                    c.order
                        .windows(2)
                        .map(|w| data.x[(w[1], c.feature)] - data.x[(w[0], c.feature)])
                        .fold(0.0, f64::max)
                })
                .collect();
            widest.sort_by(|a, b| b.total_cmp(a));
            let needed = widest[rules - 1];
            return Err(GlassboxError::formulation(
                OGRS,
                format!(
                    "OGRS's {rules} rules each split the rows on a feature of their own, with \
                     values at least epsilon = {} apart (scaled units) on the two sides \
                     (thesis (4.16f)-(4.16g)), but {splittable} of the {varying} varying \
                     feature(s) have two such values on these rows: set epsilon <= {needed}, \
                     or {}use the formulation \"ors\"",
                    self.epsilon,
                    remedy(splittable)
                ),
            ));
        }
        Ok(())
    }

    /// ORS without binarization needs features of at most two values: the first of
    /// `x`'s columns (named by `names`) with more is an error naming it.
    pub fn check_features(&self, x: &DMatrix<f64>, names: &[String]) -> Result<()> {
        // A card whose rules could sum to more |points| than a saved card may hold would be
        // written and then refused by `show` / `predict`.
        let rules = self.rules_for(x.ncols());
        let most = u128::try_from(rules).unwrap_or(u128::MAX)
            * u128::from(
                self.score_min
                    .unsigned_abs()
                    .max(self.score_max.unsigned_abs()),
            );
        if most > u128::from(card::MAX_TOTAL_POINTS) {
            return Err(GlassboxError::formulation(
                self.name(),
                format!(
                    "{rules} rules of up to {} points each could sum to {most} points, above \
                     the {} a saved card may hold: lower rules or narrow score_min..score_max",
                    self.score_min
                        .unsigned_abs()
                        .max(self.score_max.unsigned_abs()),
                    card::MAX_TOTAL_POINTS
                ),
            ));
        }
        if self.kind == Kind::Ogrs {
            return self.check_varying(x);
        }
        if self.kind != Kind::Ors || self.binarize != Binarize::None {
            return Ok(());
        }
        for (j, column) in x.column_iter().enumerate() {
            let mut values: Vec<f64> = column.iter().copied().collect();
            values.sort_by(f64::total_cmp);
            values.dedup();
            if values.len() > 2 {
                return Err(GlassboxError::formulation(
                    ORS,
                    format!(
                        "ORS needs binary features, but '{}' has {} distinct values: set \
                         binarize = \"stump\" or use the formulation \"ogrs\"",
                        names.get(j).map_or("?", |s| s.as_str()),
                        values.len()
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// Training data of OGRS: features scaled to [0, 1], labels in {-1, +1}, and which
/// features are binary (the set B_D of (4.16p-q)).
#[derive(Clone, Debug)]
pub struct RiskScoreData {
    /// Scaled features, N x p.
    pub x: DMatrix<f64>,
    /// Labels, +1 for the positive class.
    pub y: Vec<f64>,
    /// Whether feature j takes only the values 0 and 1.
    pub binary: Vec<bool>,
}

impl RiskScoreData {
    /// From scaled features and class indices (1 = positive).
    pub fn new(x: DMatrix<f64>, classes: &[usize]) -> Self {
        let binary = x
            .column_iter()
            .map(|c| c.iter().all(|&v| v == 0.0 || v == 1.0))
            .collect();
        RiskScoreData {
            y: labels(classes),
            x,
            binary,
        }
    }
}

/// Training data of ORS: 0/1 features, labels in {-1, +1}, and per feature the threshold
/// on the scaled original feature that made it (`x_j >= t_j`).
#[derive(Clone, Debug)]
pub struct BinaryData {
    /// 0/1 features, N x p.
    pub x: DMatrix<f64>,
    /// Labels, +1 for the positive class.
    pub y: Vec<f64>,
    /// The threshold of each feature on the scaled original one.
    pub thresholds: Vec<f64>,
}

impl BinaryData {
    /// Binarizes scaled features `x` (class indices `classes`, 1 = positive): by one stump
    /// per feature, or (`Binarize::None`) at 0.5 (a two-valued feature scales to {0, 1}).
    pub fn new(x: &DMatrix<f64>, classes: &[usize], binarize: Binarize) -> Self {
        let positive: Vec<bool> = classes.iter().map(|&k| k == 1).collect();
        let thresholds: Vec<f64> = x
            .column_iter()
            .map(|c| match binarize {
                Binarize::None => 0.5,
                Binarize::Stump => {
                    let values: Vec<f64> = c.iter().copied().collect();
                    // A constant feature binarizes to all zeros.
                    stump::stump_threshold(&values, &positive).unwrap_or(f64::INFINITY)
                }
            })
            .collect();
        let binarized = DMatrix::from_fn(x.nrows(), x.ncols(), |i, j| {
            f64::from(x[(i, j)] >= thresholds[j])
        });
        BinaryData {
            x: binarized,
            y: labels(classes),
            thresholds,
        }
    }
}

fn labels(classes: &[usize]) -> Vec<f64> {
    classes
        .iter()
        .map(|&k| if k == 1 { 1.0 } else { -1.0 })
        .collect()
}

/// A rule on scaled features: `x_feature >= threshold` earns `points`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScaledRule {
    /// Feature index.
    pub feature: usize,
    /// Threshold, scaled units.
    pub threshold: f64,
    /// Points.
    pub points: i64,
}

/// A risk score on scaled features, as the MILPs see it (rules of 0 points included).
#[derive(Clone, Debug, PartialEq)]
pub struct ScaledScore {
    /// The rules.
    pub rules: Vec<ScaledRule>,
    /// beta.
    pub intercept: f64,
}

impl ScaledScore {
    /// The total score of every row of scaled `x` (intercept not included).
    pub fn totals(&self, x: &DMatrix<f64>) -> Vec<f64> {
        (0..x.nrows())
            .map(|i| {
                self.rules
                    .iter()
                    .filter(|r| x[(i, r.feature)] >= r.threshold)
                    .map(|r| r.points as f64)
                    .sum()
            })
            .collect()
    }

    /// The approximate loss `sum_i max_k tangent_k(y_i (total_i + beta))`: the MILP's
    /// objective at this score.
    pub fn approximate_loss(&self, x: &DMatrix<f64>, y: &[f64], tangents: TangentSet) -> f64 {
        self.totals(x)
            .iter()
            .zip(y)
            .map(|(t, y)| tangents.value(y * (t + self.intercept)))
            .sum()
    }
}

/// A built risk-score MILP: the problem, its solution as rules, rules as a MIP start.
pub trait RiskScoreMilp {
    /// The MILP.
    fn milp(&self) -> &MilpProblem;
    /// The score at a solution `x` of the MILP.
    fn decode(&self, x: &[f64]) -> ScaledScore;
    /// The MILP point of `score` (a MIP start), or `None` when it does not fit the
    /// problem (wrong number of rules, an excluded feature, a gap below epsilon).
    fn point(&self, score: &ScaledScore) -> Option<Vec<f64>>;
}

/// The thesis' warm start (section 4.5): T steps, each solving the problem with one rule
/// while the rules found before are held fixed (their scores are constants of each row;
/// their features are excluded) and the intercept is free. `build(rules, offsets,
/// excluded)` builds the one-rule problem; `x` are the features the rules' thresholds refer
/// to. `None` when a step finds no solution.
pub fn greedy_start<P: RiskScoreMilp>(
    build: &impl Fn(usize, &[f64], &[usize]) -> Result<P>,
    x: &DMatrix<f64>,
    rules: usize,
    solver: &dyn MilpSolver,
    options: &SolveOptions,
) -> Result<Option<ScaledScore>> {
    let mut score = ScaledScore {
        rules: Vec::new(),
        intercept: 0.0,
    };
    for _ in 0..rules {
        let offsets = score.totals(x);
        let excluded: Vec<usize> = score.rules.iter().map(|r| r.feature).collect();
        let step = build(1, &offsets, &excluded)?;
        // The step starts from the rules so far plus a rule of 0 points (on the first free
        // feature that splits the rows), so a step stopped by its time limit is never worse
        // than the step before.
        let start = (0..x.ncols())
            .filter(|j| !excluded.contains(j))
            .find_map(|j| {
                let top = x.column(j).max();
                step.point(&ScaledScore {
                    rules: vec![ScaledRule {
                        feature: j,
                        threshold: top,
                        points: 0,
                    }],
                    intercept: score.intercept,
                })
            });
        let result = solver.solve(
            step.milp(),
            &options.with_warm_start(start.map(WarmStart::primal)),
        )?;
        if !result.status.has_solution() || result.primal.is_empty() {
            return Ok(None);
        }
        let found = step.decode(&result.primal);
        score.rules.extend(found.rules);
        score.intercept = found.intercept;
    }
    Ok(Some(score))
}

/// What fitting a risk score on one training set produced.
pub struct RiskScoreFit {
    /// The fitted model (none when the solve returned no solution).
    pub model: Option<RiskScoreModel>,
    /// The main solve.
    pub result: SolveResult,
    /// Seconds spent on the warm start.
    pub warm_start_seconds: f64,
    /// The approximate loss of the warm start (none without one).
    pub warm_start_objective: Option<f64>,
    /// Columns, rows and integer columns of the MILP.
    pub size: (usize, usize, usize),
}

/// Fits a risk score on raw training features `x_raw` (encoded, unscaled) and class indices
/// `y` (1 = positive): scales the features on these rows, builds the MILP, solves it with
/// `solver` (after the greedy warm start, given as MIP start, when configured) and maps the
/// solution to a score card in the user's units.
pub fn fit(
    config: &RiskScoreConfig,
    solver: &dyn MilpSolver,
    options: &SolveOptions,
    x_raw: &DMatrix<f64>,
    y: &[usize],
    classes: Vec<String>,
    encoding: Encoding,
) -> Result<RiskScoreFit> {
    config.check(classes.len())?;
    config.check_features(x_raw, &encoding.feature_names())?;
    let scaler = MinMaxScaler::fit(x_raw);
    let x = scaler.transform(x_raw);
    let (t, scores, tangents) = (
        config.rules_for(x.ncols()),
        config.score_set(),
        config.tangents,
    );
    let mut step_options = options.with_warm_start(None);
    step_options.time_limit = config
        .warm_start_time_limit
        .or(options.time_limit.map(|limit| limit / (2.0 * t as f64)));
    let started = Instant::now();
    let (problem, start): (Box<dyn RiskScoreMilp>, Option<ScaledScore>) = match config.kind {
        Kind::Ors => {
            let data = BinaryData::new(&x, y, config.binarize);
            let build = |rules: usize, offsets: &[f64], excluded: &[usize]| {
                ors::OrsProblem::new(&data, rules, scores, tangents, offsets, excluded)
            };
            let start = match (config.warm_start, config.warm_start_steps) {
                (false, _) => None,
                (true, StepSolver::Milp) => greedy_start(&build, &x, t, solver, &step_options)?,
                (true, StepSolver::Enumerate) => step::greedy_by_enumeration(
                    &step::ors_cuts(&data),
                    &x,
                    &data.y,
                    t,
                    scores,
                    tangents,
                    step_options.time_limit,
                ),
            };
            (Box::new(build(t, &vec![0.0; x.nrows()], &[])?), start)
        }
        Kind::Ogrs => {
            let data = RiskScoreData::new(x.clone(), y);
            let build = |rules: usize, offsets: &[f64], excluded: &[usize]| {
                ogrs::OgrsProblem::new(
                    &data,
                    rules,
                    scores,
                    tangents,
                    config.epsilon,
                    offsets,
                    excluded,
                )
            };
            let start = match (config.warm_start, config.warm_start_steps) {
                (false, _) => None,
                (true, StepSolver::Milp) => greedy_start(&build, &x, t, solver, &step_options)?,
                (true, StepSolver::Enumerate) => step::greedy_by_enumeration(
                    &step::ogrs_cuts(&data, config.epsilon),
                    &x,
                    &data.y,
                    t,
                    scores,
                    tangents,
                    step_options.time_limit,
                ),
            };
            (Box::new(build(t, &vec![0.0; x.nrows()], &[])?), start)
        }
    };
    let warm_start_seconds = started.elapsed().as_secs_f64();
    let labels = labels(y);
    let warm_start_objective = start
        .as_ref()
        .map(|s| s.approximate_loss(&x, &labels, tangents));
    let mip_start = start.as_ref().and_then(|s| problem.point(s));
    let milp = problem.milp();
    let result = solver.solve(
        milp,
        &options.with_warm_start(mip_start.map(WarmStart::primal)),
    )?;
    let model = if result.status.has_solution() && result.primal.len() == milp.num_columns() {
        let score = problem.decode(&result.primal);
        Some(to_model(
            config.name(),
            &score,
            &x,
            x_raw,
            &scaler,
            classes,
            encoding,
        )?)
    } else {
        None
    };
    Ok(RiskScoreFit {
        model,
        size: (milp.num_columns(), milp.num_rows(), milp.num_integers()),
        result,
        warm_start_seconds,
        warm_start_objective,
    })
}

/// The score card of `score` (rules on scaled training features `x`) in the user's units:
/// each threshold is a readable number between the largest raw training value below it and
/// the smallest at or above it (so the training rows satisfy the same rules), rules of 0
/// points left out, and so are rules that hold on no training row. An error where a
/// threshold would not be a finite number (a model file stores it as `null`, and could not
/// be read back).
pub fn to_model(
    formulation: &str,
    score: &ScaledScore,
    x: &DMatrix<f64>,
    x_raw: &DMatrix<f64>,
    scaler: &MinMaxScaler,
    classes: Vec<String>,
    encoding: Encoding,
) -> Result<RiskScoreModel> {
    let names = encoding.feature_names();
    let mut rules = Vec::new();
    for r in score.rules.iter().filter(|r| r.points != 0) {
        let j = r.feature;
        let (mut below, mut above) = (f64::NEG_INFINITY, f64::INFINITY);
        let mut distinct: Vec<f64> = x_raw.column(j).iter().copied().collect();
        distinct.sort_by(f64::total_cmp);
        distinct.dedup();
        for i in 0..x.nrows() {
            if x[(i, j)] >= r.threshold {
                above = above.min(x_raw[(i, j)]);
            } else {
                below = below.max(x_raw[(i, j)]);
            }
        }
        // A rule that holds on no training row (ORS on a feature that is all 0 on these
        // rows, e.g. a constant column) adds its points to no row of the MILP's loss, so its
        // points are whatever the solver left there and mean nothing: dropped here, as a rule
        // of 0 points is. The MILP itself is left as it is (every other problem, solve and
        // result stays bit-identical) and so are the training rows' scores; only rows that
        // the training data never showed no longer get the arbitrary points.
        if above == f64::INFINITY {
            continue;
        }
        let name = names.get(j).cloned().unwrap_or_else(|| format!("x{j}"));
        let splits = below.is_finite() && above.is_finite();
        let threshold = if splits {
            card::readable_between(below, above)
        } else {
            scaler.min[j] + r.threshold * scaler.scale_of(j)
        };
        if !threshold.is_finite() {
            return Err(GlassboxError::formulation(
                formulation,
                format!(
                    "the rule on '{name}' has no finite threshold ({threshold}, between the \
                     training values {below} and {above}): the model could not be saved"
                ),
            ));
        }
        rules.push(Rule {
            feature: j,
            name,
            threshold,
            direction: Direction::AtLeast,
            points: r.points,
            two_values: (splits && distinct.len() == 2).then(|| (distinct[0], distinct[1])),
        });
    }
    Ok(RiskScoreModel {
        formulation: formulation.to_string(),
        rules,
        intercept: score.intercept,
        classes,
        encoding,
    })
}
