//! OLCT (thesis (3.15)-(3.17)): the logistic loss-optimal tree with the tangent
//! under-estimator of the log-loss, solved by HiGHS and CBC. Both backends reach the same
//! optimum; the model reproduces the MILP objective from its hyperplanes alone; at depth 1
//! (a convex problem: no routing) no perturbation of the optimum improves it, checked without
//! derivatives; the greedy logistic start (IPOPT) is a feasible MIP start; the refinement of
//! Remark 1 never raises the exact objective; HFS keeps at most k features per node and a
//! large SFS penalty none; the feature influences r_jt agree with a hand computation and with
//! their meaning (the score's change over one standard deviation, in the user's units); runs
//! from config with `show`'s interpretation, and refuses multiclass data. Row samples keep
//! every solve to seconds.

use glassbox::data::{ClassificationData, CsvOptions, MinMaxScaler, Table};
use glassbox::experiment::{self, ExperimentConfig};
use glassbox::formulation::MilpClassifierFormulation;
use glassbox::formulations::logloss_tangents::{logistic_loss, TangentSet};
use glassbox::formulations::loss_tree::{
    greedy, Loss, LossTreeConfig, LossTreeModel, LossTreeProblem,
};
use glassbox::model::Classifier;
use glassbox::{registry, NlpSolver, SolveOptions, SolveResult, TerminationStatus};
use nalgebra::DMatrix;
use rand::{Rng, SeedableRng};
use std::path::Path;
use std::sync::Arc;

fn dataset_path(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/datasets")
        .join(name)
}

/// Every `step`-th row of `name`, the first `take` of them.
fn part(name: &str, step: usize, take: usize) -> ClassificationData {
    let data = Table::from_csv(&dataset_path(name), &CsvOptions::default())
        .unwrap()
        .encode_classification()
        .unwrap();
    let rows: Vec<usize> = (0..data.n_samples()).step_by(step).take(take).collect();
    data.rows(&rows)
}

fn olct(depth: usize, lambda: f64) -> LossTreeConfig {
    LossTreeConfig {
        depth,
        loss: Loss::Logloss,
        tangents: TangentSet::V0,
        lambda,
        ..Default::default()
    }
}

fn build(config: &LossTreeConfig, data: &ClassificationData) -> LossTreeProblem {
    let x = Arc::new(MinMaxScaler::fit(&data.x).transform(&data.x));
    let problem = config
        .problem(x, Arc::new(data.y.clone()), data.n_classes())
        .unwrap();
    problem.milp.validate().unwrap();
    problem
}

fn exact_options() -> SolveOptions {
    SolveOptions {
        relative_gap: Some(0.0),
        absolute_gap: Some(0.0),
        time_limit: Some(60.0),
        threads: Some(1),
        ..Default::default()
    }
}

fn solve(solver: &str, problem: &LossTreeProblem, options: &SolveOptions) -> SolveResult {
    let backend = registry::milp_solver(solver, options).unwrap();
    backend.solve(&problem.milp, options).unwrap()
}

fn ipopt() -> Box<dyn NlpSolver> {
    registry::nlp_solver("ipopt", &SolveOptions::default()).unwrap()
}

/// The OLCT objective (3.17a) of hyperplanes, computed from the planes alone: at every layer
/// the V-approximate log-loss of the node each point reaches, plus lambda times the l1
/// norms. Routing: left when the score is at most 0.
fn approximate_objective(
    planes: &[(Vec<f64>, f64)],
    x: &DMatrix<f64>,
    y: &[usize],
    depth: usize,
    tangents: TangentSet,
    lambda: f64,
) -> f64 {
    let mut total = 0.0;
    for i in 0..x.nrows() {
        let label = if y[i] == 1 { 1.0 } else { -1.0 };
        let mut t = 0;
        for _ in 0..depth {
            let (w, b) = &planes[t];
            let s: f64 = w
                .iter()
                .enumerate()
                .map(|(j, v)| v * x[(i, j)])
                .sum::<f64>()
                + b;
            total += tangents.value(label * s).max(0.0);
            t = if s <= 0.0 { 2 * t + 1 } else { 2 * t + 2 };
        }
    }
    total
        + lambda
            * planes
                .iter()
                .flat_map(|(w, _)| w)
                .map(|v| v.abs())
                .sum::<f64>()
}

#[test]
fn backends_agree_and_the_planes_reproduce_the_objective() {
    let data = part("haberman.csv", 12, 24);
    let x = MinMaxScaler::fit(&data.x).transform(&data.x);
    for (depth, tangents) in [
        (1, TangentSet::V0),
        (1, TangentSet::V2),
        (2, TangentSet::V0),
    ] {
        let config = LossTreeConfig {
            tangents,
            ..olct(depth, 0.5)
        };
        let problem = build(&config, &data);
        let results: Vec<SolveResult> = ["highs", "cbc"]
            .iter()
            .map(|s| solve(s, &problem, &exact_options()))
            .collect();
        for r in &results {
            assert_eq!(
                r.status,
                TerminationStatus::Optimal,
                "{}: {}",
                r.solver,
                r.raw_status
            );
            let planes = problem.hyperplanes(&r.primal);
            let recomputed =
                approximate_objective(&planes, &x, &data.y, depth, tangents, config.lambda);
            let objective = r.objective.unwrap();
            assert!(
                (recomputed - objective).abs() < 1e-5 * objective.max(1.0),
                "depth {depth} {tangents:?} {}: planes {recomputed}, MILP {objective}",
                r.solver
            );
            // The under-estimator is below the exact log-loss objective.
            assert!(problem.exact_objective(&planes) >= objective - 1e-6);
        }
        let (h, c) = (results[0].objective.unwrap(), results[1].objective.unwrap());
        assert!(
            (h - c).abs() <= 1e-6 * h.abs().max(1.0),
            "highs {h}, cbc {c}"
        );
    }
}

#[test]
fn depth_one_optimum_survives_every_perturbation() {
    // Depth 1 has no routing: OLCT is the convex problem min sum_i V(y_i (w x_i + b)) +
    // lambda |w|_1, so an optimum is global iff no small move lowers it.
    let data = part("breast_cancer_wisconsin.csv", 19, 30);
    let x = MinMaxScaler::fit(&data.x).transform(&data.x);
    let config = olct(1, 0.3);
    let problem = build(&config, &data);
    let r = solve("highs", &problem, &exact_options());
    assert_eq!(r.status, TerminationStatus::Optimal);
    let planes = problem.hyperplanes(&r.primal);
    let f = |planes: &[(Vec<f64>, f64)]| {
        approximate_objective(planes, &x, &data.y, 1, TangentSet::V0, config.lambda)
    };
    let best = f(&planes);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    for _ in 0..2000 {
        let step = 10f64.powi(rng.random_range(-4..=0));
        let mut moved = planes.clone();
        let j = rng.random_range(0..=x.ncols());
        let delta = step * if rng.random_bool(0.5) { 1.0 } else { -1.0 };
        if j == x.ncols() {
            moved[0].1 += delta;
        } else {
            moved[0].0[j] += delta;
        }
        let value = f(&moved);
        assert!(
            value >= best - 1e-7,
            "move of {delta} on {j}: {value} < {best}"
        );
    }
}

#[test]
fn greedy_start_is_feasible_and_refinement_lowers_the_exact_objective() {
    let data = part("breast_cancer_wisconsin.csv", 5, 100);
    let nlp = ipopt();
    for loss in [Loss::Logloss, Loss::Hinge] {
        let config = LossTreeConfig {
            loss,
            ..olct(2, 0.5)
        };
        let problem = build(&config, &data);
        let start = config
            .start_with_nlp(&problem, nlp.as_ref())
            .unwrap()
            .expect("a feasible greedy start");
        assert!(problem.milp.max_violation(&start) <= 1e-6, "{loss:?}");
        // The greedy tree alone classifies the training rows well.
        let planes = greedy::greedy_planes(&problem, nlp.as_ref()).unwrap();
        let model = config.model(
            &problem,
            &problem.point_of(&planes),
            MinMaxScaler::fit(&data.x),
            data.classes.clone(),
            data.encoding.clone(),
        );
        let accuracy = glassbox::metrics::accuracy(&data.y, &model.predict(&data.x));
        assert!(accuracy > 0.9, "{loss:?}: greedy tree accuracy {accuracy}");
    }
    // A MILP stopped early, then refined: the exact objective does not go up, and the
    // refined last-layer nodes are stationary logistic regressions (perturbations only
    // raise the node's exact term).
    let config = olct(2, 0.5);
    let problem = build(&config, &data);
    let options = SolveOptions {
        time_limit: Some(5.0),
        threads: Some(1),
        warm_start: Some(glassbox::WarmStart::primal(
            config
                .start_with_nlp(&problem, nlp.as_ref())
                .unwrap()
                .unwrap(),
        )),
        ..Default::default()
    };
    let r = solve("highs", &problem, &options);
    assert!(r.status.has_solution(), "{}", r.raw_status);
    let planes = problem.hyperplanes(&r.primal);
    let refined = greedy::refine_last_layer(&problem, &planes, nlp.as_ref()).unwrap();
    let (before, after) = (
        problem.exact_objective(&planes),
        problem.exact_objective(&refined),
    );
    assert!(after <= before + 1e-9, "refined {after} > MILP's {before}");
    assert_eq!(problem.leaves_of(&planes), problem.leaves_of(&refined));
}

#[test]
fn hard_feature_selection_respects_k_and_soft_selection_prunes() {
    let data = part("breast_cancer_wisconsin.csv", 11, 40);
    let options = SolveOptions {
        time_limit: Some(20.0),
        threads: Some(1),
        ..Default::default()
    };
    let nlp = ipopt();
    for k in [1, 2] {
        let config = LossTreeConfig {
            max_features: Some(k),
            ..olct(2, 0.1)
        };
        let problem = build(&config, &data);
        let start = config.start_with_nlp(&problem, nlp.as_ref()).unwrap();
        assert!(start.is_some(), "k = {k}: no feasible greedy start");
        let r = solve(
            "highs",
            &problem,
            &options.with_warm_start(start.map(glassbox::WarmStart::primal)),
        );
        assert!(r.status.has_solution(), "k = {k}: {}", r.raw_status);
        for (t, (w, _)) in problem.hyperplanes(&r.primal).iter().enumerate() {
            let used = w.iter().filter(|v| v.abs() > 1e-7).count();
            assert!(used <= k, "k = {k}: node {t} uses {used} features");
        }
        // The refinement keeps the bound too.
        let model = config
            .refine(
                &problem,
                config.model(
                    &problem,
                    &r.primal,
                    MinMaxScaler::fit(&data.x),
                    data.classes.clone(),
                    data.encoding.clone(),
                ),
                nlp.as_ref(),
            )
            .unwrap();
        assert!(model
            .planes
            .iter()
            .all(|(w, _)| w.iter().filter(|v| **v != 0.0).count() <= k));
    }
    // SFS: a feature costs more than any tree can gain, so no node uses one.
    let config = LossTreeConfig {
        l0_penalty: 1000.0,
        start: glassbox::formulations::loss_tree::LossTreeStart::None,
        ..olct(1, 0.1)
    };
    let problem = build(&config, &data);
    let r = solve("highs", &problem, &exact_options());
    assert_eq!(r.status, TerminationStatus::Optimal);
    assert!(problem.hyperplanes(&r.primal)[0]
        .0
        .iter()
        .all(|v| *v == 0.0));
}

/// A hand-made depth-2 tree on six rows of two raw features.
fn hand_model() -> (LossTreeModel, DMatrix<f64>) {
    // Raw rows (feature a in [0, 10], feature b in [100, 300]).
    let raw = DMatrix::from_row_slice(
        6,
        2,
        &[
            0.0, 100.0, 2.0, 300.0, 4.0, 200.0, 6.0, 100.0, 8.0, 250.0, 10.0, 150.0,
        ],
    );
    let scaler = MinMaxScaler::fit(&raw);
    let mut model = LossTreeModel {
        depth: 2,
        loss: Loss::Logloss,
        // Root: right when a > 5 (scaled a > 0.5); node 1: 2a - b; node 2: b only.
        planes: vec![
            (vec![4.0, 0.0], -2.0),
            (vec![2.0, -1.0], 0.1),
            (vec![0.0, 3.0], -1.5),
        ],
        epsilon: 1e-4,
        scaler,
        classes: vec!["no".into(), "yes".into()],
        feature_names: vec!["a".into(), "b".into()],
        encoding: Default::default(),
        influence: Vec::new(),
        node_sizes: Vec::new(),
        refined: false,
    };
    let z = model.scaler.transform(&raw);
    model.set_interpretation(&z);
    (model, raw)
}

#[test]
fn feature_influence_matches_a_hand_computation_and_its_meaning() {
    let (model, raw) = hand_model();
    assert_eq!(model.node_sizes, vec![6, 3, 3]);
    // Root, feature a: scaled values 0, .2, .4, .6, .8, 1: sd = sqrt(0.35/3 * ...) by hand.
    let values = [0.0, 0.2, 0.4, 0.6, 0.8, 1.0];
    let mean = 0.5;
    let sd = (values.iter().map(|v: &f64| (v - mean).powi(2)).sum::<f64>() / 6.0).sqrt();
    assert!((model.influence[0][0] - 4.0 * sd).abs() < 1e-12);
    assert_eq!(model.influence[0][1], 0.0);
    // Node 1 (rows a = 0, 2, 4; scaled b = 0, 1, 0.5): r = -1 * sd(b).
    let b = [0.0, 1.0, 0.5];
    let sd_b = (b.iter().map(|v: &f64| (v - 0.5).powi(2)).sum::<f64>() / 3.0).sqrt();
    assert!((model.influence[1][1] + sd_b).abs() < 1e-12);
    // Meaning, without derivatives and in the user's units: moving raw feature j by its
    // standard deviation among a node's rows changes that node's score by r_jt.
    let paths = |x: &DMatrix<f64>| model.node_probabilities(x);
    for (t, rows) in [
        (0usize, vec![0, 1, 2, 3, 4, 5]),
        (1, vec![0, 1, 2]),
        (2, vec![3, 4, 5]),
    ] {
        for j in 0..2 {
            let column: Vec<f64> = rows.iter().map(|&i| raw[(i, j)]).collect();
            let m = column.iter().sum::<f64>() / column.len() as f64;
            let sd_raw =
                (column.iter().map(|v| (v - m).powi(2)).sum::<f64>() / column.len() as f64).sqrt();
            let i = rows[0];
            let mut moved = raw.rows(i, 1).into_owned();
            let logit = |x: &DMatrix<f64>| {
                let p = paths(x)[0].iter().find(|(u, _)| *u == t).map(|(_, p)| *p);
                p.map(|p| (p / (1.0 - p)).ln())
            };
            let before = logit(&moved);
            moved[(0, j)] += sd_raw;
            let after = logit(&moved);
            // Only where the row still passes node t after the move.
            if let (Some(before), Some(after)) = (before, after) {
                let change = after - before;
                assert!(
                    (change - model.influence[t][j]).abs() < 1e-6,
                    "node {t} feature {j}: score change {change}, r {}",
                    model.influence[t][j]
                );
            }
        }
    }
    // Per-node probabilities: the root's confidence of going right, then the last node's
    // P(yes | x), which is also predict_proba's.
    let p = model.node_probabilities(&raw);
    let proba = model.predict_proba(&raw);
    for i in 0..6 {
        assert_eq!(p[i].len(), 2);
        assert_eq!(p[i][1].0, if raw[(i, 0)] > 5.0 { 2 } else { 1 });
        assert!((p[i][1].1 - proba[(i, 1)]).abs() < 1e-12);
    }
    let text = model.describe();
    assert!(text.contains("influence r_jt: a +"), "{text}");
    assert!(text.contains("N_t = 3"), "{text}");
}

#[test]
fn runs_from_config_on_both_backends_and_refuses_multiclass() {
    let dir = tempfile::tempdir().unwrap();
    let write = |data: &str, solver: &str| {
        let path = dir.path().join("c.toml");
        std::fs::write(
            &path,
            format!(
                "[data]\npath = \"{}\"\n[split]\ntest_fraction = 0.9\nseed = 1\n\
                 [formulation]\nname = \"loss_tree\"\nloss = \"logloss\"\ntangents = \"V0\"\n\
                 depth = 2\nlambda = 0.5\n[solver]\nname = \"{solver}\"\ntime_limit = 10.0\n",
                dataset_path(data).display()
            ),
        )
        .unwrap();
        ExperimentConfig::load(&path).unwrap()
    };
    for solver in ["highs", "cbc"] {
        let out = dir.path().join(solver);
        let outcome = experiment::run(&write("haberman.csv", solver), &out, true, false).unwrap();
        let r = &outcome.records[0];
        assert!(
            r.selected && r.test_balanced_accuracy > 0.5,
            "{solver}: {r:?}"
        );
        let line: serde_json::Value = serde_json::from_str(
            std::fs::read_to_string(&outcome.results_path)
                .unwrap()
                .lines()
                .next()
                .unwrap(),
        )
        .unwrap();
        for key in ["mip_gap", "dual_bound", "nodes"] {
            assert!(line.get(key).is_some(), "{solver}: no {key} in {line}");
        }
        let model = LossTreeModel::load(&out.join("models/split-0.json")).unwrap();
        assert!(model.refined, "OLCT refines its last layer by default");
        assert!(model.describe().contains("sigmoid"));
    }
    let err = experiment::run(
        &write("iris.csv", "highs"),
        &dir.path().join("x"),
        true,
        false,
    )
    .err()
    .unwrap()
    .to_string();
    assert!(err.contains("binary") && err.contains("3 classes"), "{err}");
}

#[test]
fn config_errors_name_the_problem() {
    let base = olct(2, 0.1);
    let check = |config: LossTreeConfig, word: &str| {
        let e = config.check(4, 2).unwrap_err().to_string();
        assert!(e.contains(word), "{e}");
    };
    check(
        LossTreeConfig {
            max_features: Some(0),
            ..base.clone()
        },
        "max_features",
    );
    check(
        LossTreeConfig {
            l0_penalty: -1.0,
            ..base.clone()
        },
        "l0_penalty",
    );
    check(
        LossTreeConfig {
            loss: Loss::Hinge,
            refine: Some(true),
            ..base.clone()
        },
        "logloss",
    );
    let parsed: Result<LossTreeConfig, _> = toml::from_str("tangents = \"V7\"");
    assert!(parsed.unwrap_err().to_string().contains("V7"));
    // The exact log-loss is what the refinement minimizes; sanity of the helper itself.
    assert!((logistic_loss(0.0) - 2f64.ln()).abs() < 1e-15);
}
