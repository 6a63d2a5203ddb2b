//! Risk scores (thesis chapter 4): ORS and OGRS solved by HiGHS and CBC reach the optimum a
//! brute-force enumeration finds on tiny instances; the score card printed for a person
//! gives, applied by hand, the score and risk `predict` returns; the edits of Theorem 4.1
//! and Corollaries 4.1-4.2 keep every prediction; AUC on a hand example; T above the
//! number of features is every feature; config errors;
//! the CLI runs, shows and predicts.

use glassbox::data::{ColumnEncoding, Encoding};
use glassbox::formulations::logloss_tangents::{Line, TangentSet};
use glassbox::formulations::risk_score::{
    self, ogrs::OgrsProblem, ors::OrsProblem, step, Binarize, BinaryData, Direction, Kind,
    RiskScoreConfig, RiskScoreData, RiskScoreMilp, RiskScoreModel, ScoreSet, StepSolver,
};
use glassbox::model::Classifier;
use glassbox::{metrics, registry, MilpSolver, SolveOptions};
use nalgebra::DMatrix;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::process::Command;

const A: ScoreSet = ScoreSet {
    min: -2.0,
    max: 2.0,
};

fn solvers() -> Vec<Box<dyn MilpSolver>> {
    ["highs", "cbc"]
        .iter()
        .map(|name| registry::milp_solver(name, &SolveOptions::default()).unwrap())
        .collect()
}

/// Exact optimality, quiet.
fn exact() -> SolveOptions {
    SolveOptions {
        relative_gap: Some(0.0),
        absolute_gap: Some(1e-9),
        time_limit: Some(120.0),
        threads: Some(1),
        ..SolveOptions::default()
    }
}

fn sigmoid(v: f64) -> f64 {
    1.0 / (1.0 + (-v).exp())
}

/// Labels drawn from a logistic model of the rows of `x` with weights `w` and bias `b`.
fn draw_labels(x: &DMatrix<f64>, w: &[f64], b: f64, rng: &mut ChaCha8Rng) -> Vec<usize> {
    (0..x.nrows())
        .map(|i| {
            let logit: f64 = (0..x.ncols()).map(|j| w[j] * x[(i, j)]).sum::<f64>() + b;
            usize::from(rng.random::<f64>() < sigmoid(logit))
        })
        .collect()
}

/// The tiny binary instance of the issue: 40 rows, 6 binary features.
fn tiny_binary() -> (DMatrix<f64>, Vec<usize>) {
    let mut rng = ChaCha8Rng::seed_from_u64(6);
    let x = DMatrix::from_fn(40, 6, |_, _| f64::from(rng.random::<f64>() < 0.5));
    let y = draw_labels(&x, &[2.0, -1.5, 1.0, 0.0, 0.5, -0.5], -0.5, &mut rng);
    (x, y)
}

/// The least approximate loss over the intercept of rows with total scores `totals`: the
/// loss is convex piecewise linear in beta, so its minimum is at a beta where some row's
/// margin sits on a breakpoint of the under-estimator.
fn best_over_intercept(totals: &[f64], y: &[f64], lines: &[Line], kinks: &[f64]) -> f64 {
    let loss = |beta: f64| -> f64 {
        totals
            .iter()
            .zip(y)
            .map(|(t, y)| {
                let m = y * (t + beta);
                lines
                    .iter()
                    .map(|l| l.at(m))
                    .fold(f64::NEG_INFINITY, f64::max)
            })
            .sum()
    };
    let mut best = f64::INFINITY;
    for (t, y) in totals.iter().zip(y) {
        for k in kinks {
            best = best.min(loss(y * k - t));
        }
    }
    best
}

/// Brute force over T = 2 rules: every pair of candidate rules (feature j < k, each with its
/// list of 0/1 columns "satisfied") and every pair of scores in A.
fn brute_force(candidates: &[Vec<Vec<f64>>], y: &[f64], tangents: TangentSet) -> f64 {
    let (lines, kinks) = (tangents.lines(), tangents.breakpoints());
    let scores: Vec<f64> = (A.min as i64..=A.max as i64).map(|s| s as f64).collect();
    let mut best = f64::INFINITY;
    for j in 0..candidates.len() {
        for k in j + 1..candidates.len() {
            for zj in &candidates[j] {
                for zk in &candidates[k] {
                    for sj in &scores {
                        for sk in &scores {
                            let totals: Vec<f64> =
                                (0..y.len()).map(|i| sj * zj[i] + sk * zk[i]).collect();
                            best = best.min(best_over_intercept(&totals, y, &lines, &kinks));
                        }
                    }
                }
            }
        }
    }
    best
}

fn pm(y: &[usize]) -> Vec<f64> {
    y.iter().map(|&k| if k == 1 { 1.0 } else { -1.0 }).collect()
}

/// Every rule `x_j >= v` of feature column `c` that holds for some rows but not all.
fn threshold_rules(c: &[f64]) -> Vec<Vec<f64>> {
    let mut values = c.to_vec();
    values.sort_by(f64::total_cmp);
    values.dedup();
    values
        .iter()
        .skip(1)
        .map(|v| c.iter().map(|x| f64::from(x >= v)).collect())
        .collect()
}

fn check_optimum(problem: &dyn RiskScoreMilp, best: f64, x: &DMatrix<f64>, y: &[f64]) {
    for solver in solvers() {
        let result = solver.solve(problem.milp(), &exact()).unwrap();
        eprintln!(
            "{}: {} in {:.2} s, {:?} nodes",
            solver.name(),
            result.status.as_str(),
            result.wall_seconds,
            result.nodes
        );
        assert_eq!(result.status.as_str(), "optimal", "{}", solver.name());
        let objective = result.objective.unwrap();
        assert!(
            (objective - best).abs() < 1e-6,
            "{}: MILP optimum {objective}, brute force {best}",
            solver.name()
        );
        // The decoded rules have the same loss.
        let score = problem.decode(&result.primal);
        let decoded = score.approximate_loss(x, y, TangentSet::V3);
        assert!((decoded - best).abs() < 1e-6, "decoded loss {decoded}");
    }
}

#[test]
fn ors_matches_brute_force_on_the_tiny_binary_instance() {
    let (x, y) = tiny_binary();
    let data = BinaryData::new(&x, &y, Binarize::None);
    assert_eq!(data.x, x);
    let yy = pm(&y);
    let candidates: Vec<Vec<Vec<f64>>> = (0..6)
        .map(|j| vec![x.column(j).iter().copied().collect()])
        .collect();
    let best = brute_force(&candidates, &yy, TangentSet::V3);
    let problem = OrsProblem::new(&data, 2, A, TangentSet::V3, &[0.0; 40], &[]).unwrap();
    check_optimum(&problem, best, &x, &yy);
}

#[test]
fn ogrs_matches_brute_force_on_the_tiny_binary_instance() {
    let (x, y) = tiny_binary();
    let data = RiskScoreData::new(x.clone(), &y);
    assert!(data.binary.iter().all(|&b| b));
    let yy = pm(&y);
    // On a binary feature the only discriminative rule is x_j >= 1 (4.16p-q).
    let candidates: Vec<Vec<Vec<f64>>> = (0..6)
        .map(|j| threshold_rules(&x.column(j).iter().copied().collect::<Vec<_>>()))
        .collect();
    let best = brute_force(&candidates, &yy, TangentSet::V3);
    let problem = OgrsProblem::new(&data, 2, A, TangentSet::V3, 1e-4, &[0.0; 40], &[]).unwrap();
    check_optimum(&problem, best, &x, &yy);
}

/// The warm start's step, solved by enumeration, reaches the optimum of the one-rule MILP
/// (with the scores of fixed rules as row constants and their features excluded).
#[test]
fn an_enumerated_warm_start_step_is_the_one_rule_milp_optimum() {
    let highs = registry::milp_solver("highs", &SolveOptions::default()).unwrap();
    // ORS on the tiny binary instance, rules on features 0 and 2 held fixed.
    let (x, y) = tiny_binary();
    let yy = pm(&y);
    let offsets: Vec<f64> = (0..40).map(|i| 2.0 * x[(i, 0)] - x[(i, 2)]).collect();
    let data = BinaryData::new(&x, &y, Binarize::None);
    let (rule, beta, loss) = step::best_rule(
        &step::ors_cuts(&data),
        &[0, 2],
        &yy,
        &offsets,
        A,
        TangentSet::V3,
        None,
    )
    .unwrap();
    assert!(rule.feature != 0 && rule.feature != 2);
    // Past its deadline a step still answers, with a rule no better than the best.
    let (_, _, hurried) = step::best_rule(
        &step::ors_cuts(&data),
        &[0, 2],
        &yy,
        &offsets,
        A,
        TangentSet::V3,
        Some(std::time::Instant::now()),
    )
    .unwrap();
    assert!(hurried >= loss - 1e-12);
    let problem = OrsProblem::new(&data, 1, A, TangentSet::V3, &offsets, &[0, 2]).unwrap();
    let result = highs.solve(problem.milp(), &exact()).unwrap();
    assert!(
        (result.objective.unwrap() - loss).abs() < 1e-6,
        "{result:?} vs {loss}"
    );
    // The enumerated rule is a feasible MILP point of that objective.
    let score = risk_score::ScaledScore {
        rules: vec![rule],
        intercept: beta,
    };
    let point = problem.point(&score).unwrap();
    assert!(problem.milp().is_feasible(&point));
    assert!((problem.milp().objective_value(&point) - loss).abs() < 1e-9);

    // OGRS on continuous features, one rule fixed.
    let (x, y) = tiny_continuous(16, 3);
    let yy = pm(&y);
    let scaler = glassbox::data::MinMaxScaler::fit(&x);
    let data = RiskScoreData::new(scaler.transform(&x), &y);
    let offsets: Vec<f64> = (0..16)
        .map(|i| if x[(i, 0)] >= 50.0 { -2.0 } else { 0.0 })
        .collect();
    let (rule, beta, loss) = step::best_rule(
        &step::ogrs_cuts(&data, 1e-4),
        &[0],
        &yy,
        &offsets,
        A,
        TangentSet::V1,
        None,
    )
    .unwrap();
    let problem = OgrsProblem::new(&data, 1, A, TangentSet::V1, 1e-4, &offsets, &[0]).unwrap();
    let result = highs.solve(problem.milp(), &exact()).unwrap();
    assert!(
        (result.objective.unwrap() - loss).abs() < 1e-6,
        "{result:?} vs {loss}"
    );
    let point = problem
        .point(&risk_score::ScaledScore {
            rules: vec![rule],
            intercept: beta,
        })
        .unwrap();
    assert!(problem.milp().is_feasible(&point));
    assert!((problem.milp().objective_value(&point) - loss).abs() < 1e-9);
}

/// 16 rows, 3 continuous features in user units (ages, pressures, ratios).
fn tiny_continuous(rows: usize, seed: u64) -> (DMatrix<f64>, Vec<usize>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let x = DMatrix::from_fn(rows, 3, |_, j| {
        let u: f64 = rng.random();
        match j {
            0 => (20.0 + 60.0 * u).round(),
            1 => 90.0 + 80.0 * u,
            _ => u,
        }
    });
    let y = draw_labels(&x, &[0.08, -0.03, 2.0], -1.0, &mut rng);
    (x, y)
}

#[test]
fn ogrs_matches_brute_force_on_continuous_features_through_fit() {
    let (x, y) = tiny_continuous(16, 3);
    let yy = pm(&y);
    let candidates: Vec<Vec<Vec<f64>>> = (0..3)
        .map(|j| threshold_rules(&x.column(j).iter().copied().collect::<Vec<_>>()))
        .collect();
    // V1 keeps the enumeration (every pair of thresholds) quick.
    let best = brute_force(&candidates, &yy, TangentSet::V1);
    let config = RiskScoreConfig {
        kind: Kind::Ogrs,
        rules: 2,
        score_min: -2,
        score_max: 2,
        tangents: TangentSet::V1,
        ..RiskScoreConfig::default()
    };
    for solver in solvers() {
        // Both kinds of warm-start steps: enumerated (HiGHS run), one-rule MILPs (CBC run).
        let config = RiskScoreConfig {
            warm_start_steps: if solver.name() == "cbc" {
                StepSolver::Milp
            } else {
                StepSolver::Enumerate
            },
            ..config.clone()
        };
        let fit = risk_score::fit(
            &config,
            solver.as_ref(),
            &exact(),
            &x,
            &y,
            classes(),
            encoding(3),
        )
        .unwrap();
        let objective = fit.result.objective.unwrap();
        eprintln!(
            "{}: {} in {:.2} s (warm start {:.2} s)",
            solver.name(),
            fit.result.status.as_str(),
            fit.result.wall_seconds,
            fit.warm_start_seconds
        );
        assert_eq!(fit.result.status.as_str(), "optimal");
        assert!((objective - best).abs() < 1e-6, "{objective} vs {best}");
        // The warm start is feasible and no better than the optimum.
        assert!(fit.warm_start_objective.unwrap() >= best - 1e-9);
        // The card in user units keeps the training rows on the same side of each rule.
        let model = fit.model.unwrap();
        let totals: Vec<f64> = model.scores(&x).iter().map(|&s| s as f64).collect();
        let loss: f64 = totals
            .iter()
            .zip(&yy)
            .map(|(t, y)| TangentSet::V1.value(y * (t + model.intercept)))
            .sum();
        assert!((loss - best).abs() < 1e-6, "card loss {loss} vs {best}");
    }
}

/// T above the number of features is every feature (`RiskScoreConfig::rules_for`): the
/// fit runs, and its optimum is the one of T = p.
#[test]
fn more_rules_than_features_is_every_feature() {
    let (x, y) = tiny_continuous(16, 5);
    let solver = registry::milp_solver("highs", &SolveOptions::default()).unwrap();
    let fit_with = |rules: usize| {
        let config = RiskScoreConfig {
            kind: Kind::Ogrs,
            rules,
            score_min: -2,
            score_max: 2,
            tangents: TangentSet::V1,
            ..RiskScoreConfig::default()
        };
        risk_score::fit(
            &config,
            solver.as_ref(),
            &exact(),
            &x,
            &y,
            classes(),
            encoding(3),
        )
        .unwrap()
    };
    let all = fit_with(3);
    let more = fit_with(5);
    assert_eq!(more.result.status.as_str(), "optimal");
    let (a, b) = (
        all.result.objective.unwrap(),
        more.result.objective.unwrap(),
    );
    assert!((a - b).abs() < 1e-6, "T = 5: {b}, T = p = 3: {a}");
    assert!(more.model.unwrap().rules.len() <= 3);
}

fn classes() -> Vec<String> {
    vec!["no".to_string(), "yes".to_string()]
}

fn encoding(p: usize) -> Encoding {
    Encoding {
        columns: (0..p)
            .map(|j| ColumnEncoding::Numeric {
                name: ["age", "pressure", "ratio"][j].to_string(),
            })
            .collect(),
        target: None,
    }
}

/// One OGRS fitted (time-limited) on 40 rows in user units, and 25 test rows; fitted once
/// for the tests that read it.
fn fitted_model() -> (RiskScoreModel, DMatrix<f64>) {
    static FITTED: std::sync::OnceLock<(RiskScoreModel, DMatrix<f64>)> = std::sync::OnceLock::new();
    FITTED
        .get_or_init(|| {
            let (x, y) = tiny_continuous(40, 11);
            let config = RiskScoreConfig {
                kind: Kind::Ogrs,
                rules: 3,
                ..RiskScoreConfig::default()
            };
            let solver = registry::milp_solver("highs", &SolveOptions::default()).unwrap();
            let options = SolveOptions {
                time_limit: Some(4.0),
                threads: Some(1),
                ..SolveOptions::default()
            };
            let fit = risk_score::fit(
                &config,
                solver.as_ref(),
                &options,
                &x,
                &y,
                classes(),
                encoding(3),
            )
            .unwrap();
            let (test, _) = tiny_continuous(25, 12);
            (fit.model.expect("a solution within 4 s"), test)
        })
        .clone()
}

/// Reads the card back as a person would: rules `name >= t` / `name < t` / `name = v` with
/// their points, and the table from score to risk (percent).
#[allow(clippy::type_complexity)]
fn read_card(card: &str) -> (Vec<(String, String, f64, i64)>, Vec<(i64, f64)>) {
    let mut rules = Vec::new();
    let mut table = Vec::new();
    let mut in_table = false;
    for line in card.lines().skip(2) {
        let words: Vec<&str> = line.split_whitespace().collect();
        if words.first() == Some(&"SCORE") {
            in_table = words.len() == 2;
            continue;
        }
        if in_table {
            table.push((
                words[0].parse().unwrap(),
                words[1].trim_end_matches('%').parse().unwrap(),
            ));
        } else if words.len() == 5 {
            rules.push((
                words[1].to_string(),
                words[2].to_string(),
                words[3].parse().unwrap(),
                words[4].parse().unwrap(),
            ));
        }
    }
    (rules, table)
}

#[test]
fn the_printed_card_applied_by_hand_gives_predicts_score_and_risk() {
    let (model, test) = fitted_model();
    let card = model.describe();
    eprintln!("{card}");
    let (rules, table) = read_card(&card);
    assert_eq!(rules.len(), model.rules.len(), "{card}");
    assert!(!rules.is_empty());
    let names = ["age", "pressure", "ratio"];
    let scores = model.scores(&test);
    let proba = model.predict_proba(&test);
    let predicted = model.predict(&test);
    for i in 0..test.nrows() {
        let mut by_hand = 0;
        for (name, op, threshold, points) in &rules {
            let v = test[(i, names.iter().position(|n| n == name).unwrap())];
            let holds = match op.as_str() {
                ">=" => v >= *threshold,
                "<" => v < *threshold,
                "=" => v == *threshold,
                other => panic!("unexpected operator {other}"),
            };
            if holds {
                by_hand += points;
            }
        }
        assert_eq!(by_hand, scores[i], "row {i}");
        let (_, risk) = table
            .iter()
            .find(|(s, _)| *s == by_hand)
            .unwrap_or_else(|| panic!("score {by_hand} not in the table"));
        assert!(
            (risk / 100.0 - proba[(i, 1)]).abs() <= 0.00005 + 1e-12,
            "row {i}: card {risk}%, predict {}",
            proba[(i, 1)]
        );
        assert_eq!(predicted[i], usize::from(proba[(i, 1)] > 0.5));
    }
}

/// Equal models, up to rounding in the intercept (sums of points added and taken back).
fn assert_same_model(a: &RiskScoreModel, b: &RiskScoreModel) {
    assert_eq!(a.rules, b.rules);
    assert!((a.intercept - b.intercept).abs() < 1e-12);
}

#[test]
fn theorem_4_1_and_its_corollaries_keep_every_prediction() {
    let (model, test) = fitted_model();
    let reference = model.predict_proba(&test);
    let same = |m: &RiskScoreModel| {
        let p = m.predict_proba(&test);
        (0..test.nrows()).all(|i| (p[(i, 1)] - reference[(i, 1)]).abs() < 1e-12)
    };
    for k in 0..model.rules.len() {
        let flipped = model.flip_rule(k).unwrap();
        assert_eq!(flipped.rules[k].direction, Direction::Below);
        assert_eq!(flipped.rules[k].points, -model.rules[k].points);
        assert!(same(&flipped), "flipping rule {k}");
        assert_same_model(&flipped.flip_rule(k).unwrap(), &model);
    }
    assert!(model.flip_rule(model.rules.len()).is_err());
    let nonnegative = model.with_nonnegative_points();
    assert!(nonnegative.rules.iter().all(|r| r.points >= 0));
    assert!(same(&nonnegative));
    let below = model.with_direction(Direction::Below);
    assert!(below.rules.iter().all(|r| r.direction == Direction::Below));
    assert!(same(&below));
    assert_same_model(&below.with_direction(Direction::AtLeast), &model);
    // Saved and loaded, the model is the same.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("model.json");
    nonnegative.save(&path).unwrap();
    assert_eq!(RiskScoreModel::load(&path).unwrap(), nonnegative);
}

#[test]
fn auc_of_a_hand_example() {
    // Positive scores 0.9, 0.4, 0.3; negative 0.1, 0.4: of the 6 pairs, 4 ordered right,
    // 1 tie (one half), 1 wrong: 4.5 / 6.
    let positive = [true, false, true, false, true];
    let scores = [0.9, 0.1, 0.4, 0.4, 0.3];
    assert!((metrics::roc_auc(&positive, &scores) - 0.75).abs() < 1e-15);
    assert_eq!(metrics::roc_auc(&[true, false], &[0.2, 0.1]), 1.0);
    assert_eq!(metrics::roc_auc(&[true, false], &[0.1, 0.2]), 0.0);
    assert!(metrics::roc_auc(&[true, true], &[0.1, 0.2]).is_nan());
}

// ---------------------------------------------------------------------------------------
// The CLI: config errors, run, show, predict.

fn glassbox(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_glassbox"))
        .args(args)
        .output()
        .expect("the glassbox binary runs")
}

/// A tiny CSV: 40 rows of two continuous columns and a binary one, and the label.
fn write_csv(dir: &std::path::Path, classes: usize) -> String {
    let (x, y) = tiny_continuous(40, 5);
    let mut text = String::from("age,pressure,smoker,target\n");
    for i in 0..x.nrows() {
        let label = if classes == 3 && i % 7 == 0 { 2 } else { y[i] };
        text.push_str(&format!(
            "{},{:.2},{},{}\n",
            x[(i, 0)],
            x[(i, 1)],
            i % 3 == 0,
            label
        ));
    }
    let path = dir.join(format!("tiny{classes}.csv"));
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

fn run(dir: &std::path::Path, formulation: &str, classes: usize) -> (std::process::Output, String) {
    let config = format!(
        "[data]\npath = \"{}\"\ncategorical = [\"smoker\"]\n[split]\ntest_fraction = 0.25\n\
         [formulation]\n{formulation}\n[solver]\nname = \"highs\"\ntime_limit = 4.0\nthreads = 1\n",
        write_csv(dir, classes)
    );
    let (output, out) = run_config(dir, &config);
    (output, out.to_str().unwrap().to_string())
}

/// Writes `config` in `dir` and runs it into `dir/out` (replacing it).
fn run_config(dir: &std::path::Path, config: &str) -> (std::process::Output, std::path::PathBuf) {
    let path = dir.join("config.toml");
    std::fs::write(&path, config).unwrap();
    let out = dir.join("out");
    let output = glassbox(&[
        "run",
        path.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--force",
    ]);
    (output, out)
}

/// Writes `csv` and a config of its `[data] path`, then `rest` (the tables after `[data]`),
/// in `dir`, and runs it into `dir/out` (replacing it).
fn run_csv(
    dir: &std::path::Path,
    csv: &str,
    rest: &str,
) -> (std::process::Output, std::path::PathBuf) {
    let data = dir.join("data.csv");
    std::fs::write(&data, csv).unwrap();
    run_config(
        dir,
        &format!("[data]\npath = \"{}\"\n{rest}", data.display()),
    )
}

fn assert_fails(formulation: &str, classes: usize, needles: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let (output, out) = run(dir.path(), formulation, classes);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "expected failure: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    for n in needles {
        assert!(stderr.contains(n), "'{n}' not in: {stderr}");
    }
    assert!(!std::path::Path::new(&out).join("results.jsonl").exists());
}

#[test]
fn config_errors_name_what_is_wrong() {
    assert_fails("name = \"ogrs\"\nrules = 0", 2, &["rules (T)", "got 0"]);
    assert_fails("name = \"ogrs\"\nrule = 2", 2, &["rule"]);
    assert_fails("name = \"ogrs\"\ntangents = \"V9\"", 2, &["V9"]);
    assert_fails(
        "name = \"ogrs\"\nscore_min = 1",
        2,
        &["score_min..score_max", "hold 0"],
    );
    assert_fails("name = \"ogrs\"\nepsilon = 0.0", 2, &["epsilon"]);
    assert_fails("name = \"ogrs\"\nbinarize = \"stump\"", 2, &["binarize"]);
    assert_fails(
        "name = \"ors\"",
        2,
        &["ORS needs binary features", "'age'", "stump"],
    );
    assert_fails("name = \"ogrs\"", 3, &["exactly two classes"]);
}

/// The warm start's own options with `warm_start = false` would be unused: refused, naming
/// the key.
#[test]
fn warm_start_options_without_the_warm_start_are_refused() {
    for key in ["warm_start_steps = \"milp\"", "warm_start_time_limit = 2.0"] {
        let name = key.split(' ').next().unwrap();
        assert_fails(
            &format!("name = \"ogrs\"\nwarm_start = false\n{key}"),
            2,
            &[name, "warm_start = false"],
        );
    }
}

/// OGRS's features are checked on every split's training rows before anything is written:
/// a feature that varies on one row only leaves the fold that tests that row with two
/// varying features for three rules. Before, the folds ahead of it wrote their lines and
/// the run failed at it.
#[test]
fn an_ogrs_split_that_cannot_be_fitted_fails_before_any_line() {
    let dir = tempfile::tempdir().unwrap();
    let (x, y) = tiny_continuous(40, 5);
    let mut text = String::from("age,pressure,rare,target\n");
    for i in 0..x.nrows() {
        let rare = u8::from(i == 7);
        text.push_str(&format!("{},{:.2},{rare},{}\n", x[(i, 0)], x[(i, 1)], y[i]));
    }
    let (output, out) = run_csv(
        dir.path(),
        &text,
        "[split]\nprotocol = \"kfold\"\nfolds = 4\n[formulation]\nname = \"ogrs\"\n\
         rules = 3\n[solver]\nname = \"highs\"\ntime_limit = 4.0\nthreads = 1\n",
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    assert!(!out.join("results.jsonl").exists(), "{stderr}");
    // The split is named: on all 40 rows the three features vary, on the fold's training
    // rows two do.
    assert!(
        stderr.contains("(fold ") && stderr.contains("2 feature(s) vary on these rows"),
        "{stderr}"
    );
}

#[test]
fn cli_runs_shows_and_predicts_a_risk_score() {
    let dir = tempfile::tempdir().unwrap();
    for formulation in [
        "name = \"ogrs\"\nrules = 2",
        "name = \"ors\"\nrules = 2\nbinarize = \"stump\"",
    ] {
        let (output, out) = run(dir.path(), formulation, 2);
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(stdout.contains("test_auc"), "{stdout}");
        let line: serde_json::Value = serde_json::from_str(
            std::fs::read_to_string(format!("{out}/results.jsonl"))
                .unwrap()
                .lines()
                .next()
                .unwrap(),
        )
        .unwrap();
        assert!(line["test_auc"].as_f64().is_some(), "{line}");
        assert!(line["train_auc"].as_f64().unwrap() > 0.5, "{line}");
        let model = format!("{out}/models/split-0.json");
        let show = glassbox(&["show", &model]);
        let card = String::from_utf8_lossy(&show.stdout);
        assert!(card.contains("points") && card.contains("risk"), "{card}");
        let csv = dir.path().join("tiny2.csv");
        let predict = glassbox(&["predict", &model, csv.to_str().unwrap()]);
        let text = String::from_utf8_lossy(&predict.stdout);
        assert!(
            predict.status.success(),
            "{}",
            String::from_utf8_lossy(&predict.stderr)
        );
        assert!(text.contains("auc "), "{text}");
    }
}

// ---------------------------------------------------------------------------------------
// Fixed defects: thresholds near f64::MAX, constant ORS features, epsilon past every gap,
// huge score sets, epsilon on ORS.

/// `readable_between` as it was, `0.5 * (low + high)`: the reference for ordinary values.
fn readable_between_before(low: f64, high: f64) -> f64 {
    let mid = 0.5 * (low + high);
    let slack = 0.25 * (high - low);
    if slack.is_nan() || slack <= 0.0 || !mid.is_finite() {
        return mid;
    }
    for digits in -6i32..=12 {
        let unit = 10f64.powi(-digits);
        let candidate = (mid / unit).round() * unit;
        let candidate: f64 = format!("{candidate:.prec$}", prec = digits.max(0) as usize)
            .parse()
            .unwrap_or(mid);
        if (candidate - mid).abs() <= slack && candidate > low && candidate < high {
            return candidate;
        }
    }
    mid
}

/// A threshold between two values near f64::MAX (whose sum overflows) is finite and between
/// them, the ordinary ones are bit-identical to before, and the CLI's OGRS model of such
/// data is saved, shown and predicts.
#[test]
fn a_threshold_between_values_near_f64_max_is_saved_and_loads() {
    use risk_score::card::readable_between;
    for (low, high) in [
        (1.6e308, 1.7e308),
        (1.4e308, 1.5e308),
        (f64::MAX / 2.0, f64::MAX),
        (-1.7e308, 1.7e308),
        (-f64::MAX, f64::MAX),
        (-1.7e308, -1.6e308),
    ] {
        let t = readable_between(low, high);
        assert!(t.is_finite() && low < t && t < high, "{low} {high}: {t}");
    }
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    for k in 0..20_000 {
        let scale = 10f64.powi(rng.random_range(-12..12));
        let low = (rng.random::<f64>() - 0.5) * scale;
        let high = if k % 3 == 0 {
            f64::from_bits(low.to_bits() + 1)
        } else {
            low + rng.random::<f64>() * scale
        };
        let (a, b) = (
            readable_between(low, high),
            readable_between_before(low, high),
        );
        assert_eq!(a.to_bits(), b.to_bits(), "{low} {high}: {a} vs {b}");
    }

    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from("a,b,target\n");
    for i in 0..8 {
        let a = ["1.7e308", "1.6e308", "1.5e308", "1.4e308"][i % 4];
        text.push_str(&format!("{a},{},{}\n", i + 1, ["x", "y"][i % 2]));
    }
    let (output, out) = run_csv(
        dir.path(),
        &text,
        "[split]\ntest_fraction = 0.25\nrepeats = 1\nseed = 1\n[formulation]\nname = \"ogrs\"\n\
         rules = 2\n[solver]\nname = \"highs\"\ntime_limit = 4.0\nthreads = 1\n",
    );
    let csv = dir.path().join("data.csv");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let model = out.join("models/split-0.json");
    let saved = std::fs::read_to_string(&model).unwrap();
    assert!(!saved.contains("\"threshold\": null"), "{saved}");
    let show = glassbox(&["show", model.to_str().unwrap()]);
    assert!(
        show.status.success(),
        "{}",
        String::from_utf8_lossy(&show.stderr)
    );
    let predict = glassbox(&["predict", model.to_str().unwrap(), csv.to_str().unwrap()]);
    assert!(
        predict.status.success(),
        "{}",
        String::from_utf8_lossy(&predict.stderr)
    );
}

/// ORS gives no points to a feature that is 0 on every training row: its points change no
/// training row's loss, so whatever the solver left there must not reach the card.
#[test]
fn ors_gives_no_points_to_a_feature_constant_on_the_training_rows() {
    // The rule on feature 1 holds on no row (all 0): dropped; the one on feature 0 kept.
    let x = DMatrix::from_row_slice(4, 2, &[0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0]);
    let scaler = glassbox::data::MinMaxScaler::fit(&x);
    let score = risk_score::ScaledScore {
        rules: vec![
            risk_score::ScaledRule {
                feature: 0,
                threshold: 0.5,
                points: 2,
            },
            risk_score::ScaledRule {
                feature: 1,
                threshold: 0.5,
                points: -5,
            },
        ],
        intercept: -1.0,
    };
    let model = risk_score::to_model(
        "ors",
        &score,
        &scaler.transform(&x),
        &x,
        &scaler,
        classes(),
        encoding(2),
    )
    .unwrap();
    assert_eq!(model.rules.len(), 1, "{}", model.card());
    assert_eq!((model.rules[0].feature, model.rules[0].points), (0, 2));
    // A stump binarizes a constant feature at +infinity: no rule, no infinite threshold.
    let stump = risk_score::to_model(
        "ors",
        &risk_score::ScaledScore {
            rules: vec![risk_score::ScaledRule {
                feature: 1,
                threshold: f64::INFINITY,
                points: 3,
            }],
            intercept: 0.0,
        },
        &scaler.transform(&x),
        &x,
        &scaler,
        classes(),
        encoding(2),
    )
    .unwrap();
    assert!(stump.rules.is_empty(), "{}", stump.card());

    // The repro: ORS without warm start on a, b (b all 0) predicts the test rows with b = 1
    // as those with b = 0.
    let train = DMatrix::from_row_slice(
        8,
        2,
        &[
            0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0,
        ],
    );
    let y = vec![0, 0, 0, 1, 1, 0, 1, 1];
    let config = RiskScoreConfig {
        kind: Kind::Ors,
        rules: 2,
        warm_start: false,
        ..RiskScoreConfig::default()
    };
    for solver in solvers() {
        let fit = risk_score::fit(
            &config,
            solver.as_ref(),
            &exact(),
            &train,
            &y,
            classes(),
            encoding(2),
        )
        .unwrap();
        let model = fit.model.unwrap();
        assert!(
            model.rules.iter().all(|r| r.feature == 0),
            "{}: {}",
            solver.name(),
            model.card()
        );
        let test = DMatrix::from_row_slice(4, 2, &[0.0, 1.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.0]);
        let risks = model.risks(&test);
        assert_eq!(
            (risks[0], risks[1]),
            (risks[2], risks[3]),
            "{}",
            model.card()
        );
    }
}

/// OGRS with an epsilon above every feature's gap cannot split: an error naming epsilon
/// (and the epsilon that would do), not an "infeasible" run of NaN metrics.
#[test]
fn ogrs_with_epsilon_above_every_gap_says_so() {
    let (x, y) = tiny_continuous(40, 11);
    let solver = registry::milp_solver("highs", &SolveOptions::default()).unwrap();
    let config = RiskScoreConfig {
        kind: Kind::Ogrs,
        rules: 2,
        epsilon: 0.49,
        ..RiskScoreConfig::default()
    };
    let Err(e) = risk_score::fit(
        &config,
        solver.as_ref(),
        &exact(),
        &x,
        &y,
        classes(),
        encoding(3),
    ) else {
        panic!("OGRS with epsilon 0.49 fitted");
    };
    let e = e.to_string();
    assert!(
        e.contains("epsilon = 0.49") && e.contains("set epsilon <= "),
        "{e}"
    );
    // The epsilon it names lets the rules split.
    let needed: f64 = e
        .split("set epsilon <= ")
        .nth(1)
        .unwrap()
        .split(|c: char| c == ',' || c.is_whitespace())
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let fit = risk_score::fit(
        &RiskScoreConfig {
            epsilon: needed,
            ..config
        },
        solver.as_ref(),
        &exact(),
        &x,
        &y,
        classes(),
        encoding(3),
    )
    .unwrap();
    assert!(fit.model.is_some(), "{:?}", fit.result.status);
}

/// The enumerated warm-start step keeps its deadline on a score set of 2 * 10^9 points
/// (both loops end), and the config check refuses such a score set, naming its keys.
#[test]
fn a_huge_score_set_keeps_the_deadline_and_is_refused() {
    let (x, y) = tiny_binary();
    let yy = pm(&y);
    let data = BinaryData::new(&x, &y, Binarize::None);
    let cuts = step::ors_cuts(&data);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let started = std::time::Instant::now();
        let found = step::best_rule(
            &cuts,
            &[],
            &yy,
            &[0.0; 40],
            ScoreSet {
                min: -1e9,
                max: 1e9,
            },
            TangentSet::V3,
            Some(started + std::time::Duration::from_millis(200)),
        );
        let _ = tx.send((found.is_some(), started.elapsed().as_secs_f64()));
    });
    let (found, seconds) = rx
        .recv_timeout(std::time::Duration::from_secs(20))
        .expect("best_rule keeps its 0.2 s deadline");
    assert!(found && seconds < 5.0, "{seconds} s");

    let config = RiskScoreConfig {
        score_min: -1_000_000_000,
        score_max: 1_000_000_000,
        ..RiskScoreConfig::default()
    };
    let e = config.check(2).unwrap_err().to_string();
    assert!(e.contains("score_min") && e.contains("score_max"), "{e}");
    let wide = RiskScoreConfig {
        score_min: i64::MIN,
        score_max: i64::MAX,
        ..RiskScoreConfig::default()
    };
    assert!(wide.check(2).is_err());
    let fine = RiskScoreConfig {
        score_min: -20_000,
        score_max: 20_000,
        ..RiskScoreConfig::default()
    };
    fine.check(2).unwrap();
}

/// epsilon is an OGRS parameter: ORS refuses a non-default one, naming it.
#[test]
fn ors_refuses_epsilon() {
    let ors = RiskScoreConfig {
        kind: Kind::Ors,
        epsilon: 0.3,
        ..RiskScoreConfig::default()
    };
    let e = ors.check(2).unwrap_err().to_string();
    assert!(e.contains("epsilon") && e.contains("OGRS"), "{e}");
    RiskScoreConfig {
        kind: Kind::Ors,
        ..RiskScoreConfig::default()
    }
    .check(2)
    .unwrap();
    RiskScoreConfig {
        epsilon: 0.3,
        ..RiskScoreConfig::default()
    }
    .check(2)
    .unwrap();
    assert_fails("name = \"ors\"\nepsilon = 0.3", 2, &["epsilon", "OGRS"]);
}

/// A score set whose every point fits a card but whose rules together could sum past what
/// a saved card may hold (and `show` / `predict` would refuse) is refused before the run,
/// counting the rules the data allow (here 2 of the 3 features' rules).
#[test]
fn rules_times_the_largest_score_past_a_card_s_total_are_refused() {
    assert_fails(
        "name = \"ogrs\"\nrules = 2\nscore_min = -60000\nscore_max = 40000",
        2,
        &["2 rules of up to 60000 points each could sum to 120000"],
    );
    let config = RiskScoreConfig {
        rules: 5,
        score_min: -30000,
        score_max: 30000,
        ..RiskScoreConfig::default()
    };
    let (x, _) = tiny_continuous(20, 3);
    let names: Vec<String> = (0..x.ncols()).map(|j| format!("x{j}")).collect();
    // Rules beyond the features count as the features: 3 x 30000 is within a card.
    config.check_features(&x, &names).unwrap();
    let wide = DMatrix::from_fn(20, 4, |i, j| x[(i, j % x.ncols())] + j as f64);
    let names4: Vec<String> = (0..4).map(|j| format!("x{j}")).collect();
    let e = config
        .check_features(&wide, &names4)
        .unwrap_err()
        .to_string();
    assert!(e.contains("4 rules of up to 30000"), "{e}");
}
