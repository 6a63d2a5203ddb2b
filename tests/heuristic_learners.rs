//! Random forest, TAO and TMO: the forest is the same for a seed whatever the number of
//! threads; TAO never increases the training error and finds the 0/1-optimal split CART
//! misses; TMO's decoding follows the thesis' Figures 3.11-3.14; TMO runs from a config.

#[path = "common/grid_run.rs"]
mod grid_run;

use glassbox::data::synthetic_oblique;
use glassbox::experiment::{self, ExperimentConfig};
use glassbox::formulations::cart::grow::{Criterion, Targets};
use glassbox::formulations::cart::tree::{AxisSplit, AxisTree, BfsNode};
use glassbox::formulations::cart::{CartConfig, TreeModel};
use glassbox::formulations::forest::{ForestConfig, MaxFeatures};
use glassbox::formulations::tao::Tao;
use glassbox::formulations::tmo::{decode, encode, Gene};
use glassbox::Interrupt;
use nalgebra::DMatrix;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A seeded classification set: (x, y, classes).
fn data(rows: usize, features: usize, classes: usize, seed: u64) -> (DMatrix<f64>, Vec<usize>) {
    let d = synthetic_oblique(rows, features, classes, seed)
        .encode_classification()
        .unwrap();
    (d.x, d.y)
}

#[test]
fn forest_is_the_same_for_a_seed_whatever_the_threads() {
    let (x, y) = data(200, 6, 3, 4);
    let config = ForestConfig {
        n_trees: 12,
        depth: Some(4),
        max_features: Some(MaxFeatures::Rule("sqrt".into())),
        seed: 9,
        ..ForestConfig::default()
    };
    let targets = Targets::Classes {
        y: &y,
        n_classes: 3,
    };
    let grow = |threads: usize, config: &ForestConfig| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| config.fit_trees(&x, targets).unwrap())
    };
    let one = grow(1, &config);
    let three = grow(3, &config);
    assert_eq!(one, three);
    assert_eq!(one.len(), 12);
    // Trees differ from one another, and another seed gives another forest.
    assert_ne!(one[0], one[1]);
    let other = grow(2, &ForestConfig { seed: 10, ..config });
    assert_ne!(one, other);
    // Bad max_features is an error naming it.
    let bad = ForestConfig {
        max_features: Some(MaxFeatures::Rule("half".into())),
        ..ForestConfig::default()
    };
    assert!(bad
        .check(false, 6)
        .unwrap_err()
        .to_string()
        .contains("half"));
    // A count beyond the data's features is refused (it was taken as "all").
    let many = ForestConfig {
        max_features: Some(MaxFeatures::Count(10)),
        ..ForestConfig::default()
    };
    let e = many.check(false, 6).unwrap_err().to_string();
    assert!(
        e.contains("max_features = 10") && e.contains("6 features"),
        "{e}"
    );
    assert!(ForestConfig {
        max_features: Some(MaxFeatures::Count(6)),
        ..ForestConfig::default()
    }
    .check(false, 6)
    .is_ok());
}

#[test]
fn tao_never_increases_the_training_error() {
    for seed in 0..6 {
        let (x, y) = data(240, 5, 2 + (seed as usize % 2), seed);
        let n_classes = 2 + (seed as usize % 2);
        let targets = Targets::Classes { y: &y, n_classes };
        let tao = Tao::new(&x, &y, n_classes);
        // From CART, from forest trees (random feature subsets), with bootstrap weights.
        let mut trees = vec![CartConfig {
            depth: Some(3),
            ..CartConfig::default()
        }
        .fit_tree(&x, targets, &vec![1.0; x.nrows()])];
        trees.extend(
            ForestConfig {
                n_trees: 4,
                depth: Some(3),
                seed,
                ..ForestConfig::default()
            }
            .fit_trees(&x, targets)
            .unwrap(),
        );
        let weights: Vec<f64> = (0..x.nrows()).map(|i| ((i * 7 + 3) % 3) as f64).collect();
        for mut tree in trees {
            for w in [vec![1.0; x.nrows()], weights.clone()] {
                let before = tao.errors(&tree, &w);
                let outcome = tao.optimize(&mut tree, &w, 30);
                assert!(outcome.errors_after <= before, "{outcome:?}");
                assert_eq!(outcome.errors_before, before);
                assert_eq!(tao.errors(&tree, &w), outcome.errors_after);
            }
        }
    }
}

#[test]
fn tao_ends_before_its_next_pass_once_a_stop_is_requested() {
    let (x, y) = data(240, 5, 2, 0);
    let ones = vec![1.0; x.nrows()];
    let start = CartConfig {
        depth: Some(3),
        ..CartConfig::default()
    }
    .fit_tree(
        &x,
        Targets::Classes {
            y: &y,
            n_classes: 2,
        },
        &ones,
    );
    let flag = Arc::new(AtomicBool::new(true));
    let stop = Interrupt::new(flag.clone());
    let tao = Tao::new(&x, &y, 2).with_stop(Some(&stop));
    let mut stopped = start.clone();
    let outcome = tao.optimize(&mut stopped, &ones, 30);
    assert!(outcome.interrupted && outcome.passes == 0, "{outcome:?}");
    assert_eq!(outcome.ending(), "stopped on request");
    assert_eq!(outcome.errors_after, outcome.errors_before);
    // Without the request the same start is optimized: CART's tree is not TAO's optimum here.
    flag.store(false, Ordering::SeqCst);
    let mut optimized = start.clone();
    let outcome = tao.optimize(&mut optimized, &ones, 30);
    assert!(!outcome.interrupted && outcome.passes > 0, "{outcome:?}");
    assert!(outcome.errors_after < outcome.errors_before, "{outcome:?}");
    assert_ne!(optimized, stopped);
}

/// The least care-point weight any decision of branch node `t` misroutes (every threshold
/// of every feature, and the two constant decisions), and what its own split misroutes.
fn node_decisions(
    tree: &AxisTree,
    t: usize,
    x: &DMatrix<f64>,
    y: &[usize],
    w: &[f64],
) -> (f64, f64) {
    let b = tree.nodes[t].branch.unwrap();
    let reaches = |i: usize| {
        let mut s = 0;
        while s != t {
            let Some(bs) = tree.nodes[s].branch else {
                return false;
            };
            s = if bs.split.goes_left(x, i) {
                bs.left
            } else {
                bs.right
            };
        }
        true
    };
    let right_from = |c: usize, i: usize| tree.nodes[tree.leaf_from(c, x, i)].class() == y[i];
    // (row, wants left, weight) of the care points.
    let care: Vec<(usize, bool, f64)> = (0..x.nrows())
        .filter(|&i| w[i] > 0.0 && reaches(i))
        .filter(|&i| right_from(b.left, i) != right_from(b.right, i))
        .map(|i| (i, right_from(b.left, i), w[i]))
        .collect();
    let misrouted = |left: &dyn Fn(usize) -> bool| -> f64 {
        care.iter()
            .filter(|&&(i, l, _)| left(i) != l)
            .map(|c| c.2)
            .sum()
    };
    let own = misrouted(&|i| b.split.goes_left(x, i));
    let mut best = misrouted(&|_| true).min(misrouted(&|_| false));
    for j in 0..x.ncols() {
        for &(k, _, _) in &care {
            best = best.min(misrouted(&|i| x[(i, j)] <= x[(k, j)]));
        }
    }
    (best, own)
}

#[test]
fn tao_stops_where_no_single_node_decision_misroutes_fewer_care_points() {
    // Brute force on every branch node of the trees TAO returns: no threshold of any
    // feature, and neither constant decision (the node replaced by one of its subtrees),
    // misroutes less care-point weight than the node's own split.
    let mut collapsed = 0;
    for seed in 0..4 {
        let (x, y) = data(120, 3, 2 + (seed as usize % 2), seed);
        let n_classes = 2 + (seed as usize % 2);
        let tao = Tao::new(&x, &y, n_classes);
        let trees = ForestConfig {
            n_trees: 8,
            depth: Some(3),
            seed,
            ..ForestConfig::default()
        }
        .fit_trees(&x, Targets::Classes { y: &y, n_classes })
        .unwrap();
        let weights: Vec<f64> = (0..x.nrows()).map(|i| ((i * 5 + 1) % 3) as f64).collect();
        for start in trees {
            for w in [vec![1.0; x.nrows()], weights.clone()] {
                let mut tree = start.clone();
                let outcome = tao.optimize(&mut tree, &w, 100);
                assert!(outcome.converged, "{outcome:?}");
                if tree.nodes.len() < start.nodes.len() {
                    collapsed += 1;
                }
                for (t, _) in tree.bfs_order() {
                    if tree.nodes[t].branch.is_some() {
                        let (best, own) = node_decisions(&tree, t, &x, &y, &w);
                        assert!(own <= best + 1e-9, "node {t}: {own} > {best}");
                    }
                }
            }
        }
    }
    // The constant decisions do happen on these trees.
    assert!(collapsed > 0);
}

#[test]
fn tao_finds_the_zero_one_optimal_split_cart_misses() {
    // One feature, x = 0..11: Gini splits off the pure pair of 1s (x <= 1.5: leaves 1 and
    // 0, 5 errors; scikit-learn grows the same stump); with those leaves the 0/1 loss
    // prefers x <= 6.5 (4 errors). Depth 1.
    let y: Vec<usize> = vec![1, 1, 0, 1, 0, 1, 1, 0, 1, 0, 0, 1];
    let x = DMatrix::from_fn(y.len(), 1, |i, _| i as f64);
    let targets = Targets::Classes {
        y: &y,
        n_classes: 2,
    };
    let mut tree = CartConfig {
        depth: Some(1),
        criterion: Criterion::Gini,
        ..CartConfig::default()
    }
    .fit_tree(&x, targets, &vec![1.0; y.len()]);
    let ones = vec![1.0; y.len()];
    let tao = Tao::new(&x, &y, 2);
    // Brute force: the fewest errors of any stump threshold with leaves (1 left, 0 right).
    let best = (0..y.len())
        .map(|k| (0..y.len()).filter(|&i| (i <= k) != (y[i] == 1)).count() as f64)
        .fold(f64::INFINITY, f64::min);
    let outcome = tao.optimize(&mut tree, &ones, 10);
    assert!(
        outcome.errors_before > best,
        "CART is 0/1-optimal here: {outcome:?}"
    );
    assert_eq!(outcome.errors_after, best, "{outcome:?}");
}

fn split(feature: usize) -> AxisSplit {
    AxisSplit {
        feature,
        threshold: 0.5,
    }
}

#[test]
fn tmo_decoding_follows_figures_3_11_to_3_14() {
    // Figure 3.10: [(f0), leaf, (f2), nil, nil, (f5), leaf] in depth 3.
    let b = |f| Gene::Branch(split(f));
    let reference = vec![
        b(0),
        Gene::Leaf,
        b(2),
        Gene::Nil,
        Gene::Nil,
        b(5),
        Gene::Leaf,
    ];
    let never = || -> AxisSplit { panic!("no random split expected") };
    let own = [false; 7];
    let tree = decode(&reference, &own, 3, never).unwrap();
    assert_eq!(encode(&tree, 3).unwrap(), reference);
    let bfs = tree.to_bfs(3).unwrap();
    assert!(matches!(bfs.nodes[11], BfsNode::Leaf(_)) && matches!(bfs.nodes[12], BfsNode::Leaf(_)));

    // 3.11 branch/leaf on node 5: the subtree at 5 is pruned.
    // Each figure changes one node, taken from the partner.
    let partner_at = |z: usize| {
        let mut f = [false; 7];
        f[z] = true;
        f
    };
    let mut g = reference.clone();
    g[5] = Gene::Leaf;
    let t = decode(&g, &partner_at(5), 3, never).unwrap();
    assert_eq!(
        encode(&t, 3).unwrap(),
        vec![
            b(0),
            Gene::Leaf,
            b(2),
            Gene::Nil,
            Gene::Nil,
            Gene::Leaf,
            Gene::Leaf
        ]
    );
    // 3.12 leaf/branch on node 1: node 1 splits, its two children are leaves.
    let mut g = reference.clone();
    g[1] = b(1);
    let t = decode(&g, &partner_at(1), 3, never).unwrap();
    assert_eq!(
        encode(&t, 3).unwrap(),
        vec![b(0), b(1), b(2), Gene::Leaf, Gene::Leaf, b(5), Gene::Leaf]
    );
    // 3.13 branch/nil on node 5: its parent (2) becomes a leaf, the sibling 6 goes.
    let mut g = reference.clone();
    g[5] = Gene::Nil;
    let t = decode(&g, &partner_at(5), 3, never).unwrap();
    assert_eq!(
        encode(&t, 3).unwrap(),
        vec![
            b(0),
            Gene::Leaf,
            Gene::Leaf,
            Gene::Nil,
            Gene::Nil,
            Gene::Nil,
            Gene::Nil
        ]
    );
    // 3.14 nil/branch on node 3: its parent (1) gets a random split, the sibling 4 is a
    // leaf, node 3 takes the partner's split.
    let mut g = reference.clone();
    g[3] = b(3);
    let mut calls = 0;
    let t = decode(&g, &partner_at(3), 3, || {
        calls += 1;
        split(7)
    })
    .unwrap();
    assert_eq!(calls, 1);
    assert_eq!(
        encode(&t, 3).unwrap(),
        vec![b(0), b(7), b(2), b(3), Gene::Leaf, b(5), Gene::Leaf]
    );
    // The same genes with the parent from the partner and the child own: the partner's
    // gene wins both times (3.11 on node 2 prunes; 3.12 on node 1 creates leaves).
    let mut g = reference.clone();
    g[2] = Gene::Leaf;
    let t = decode(&g, &partner_at(2), 3, never).unwrap();
    assert_eq!(
        encode(&t, 3).unwrap(),
        vec![
            b(0),
            Gene::Leaf,
            Gene::Leaf,
            Gene::Nil,
            Gene::Nil,
            Gene::Nil,
            Gene::Nil
        ]
    );
}

#[test]
fn tmo_and_forest_run_from_configs() {
    let dir = tempfile::tempdir().unwrap();
    let data = format!("{}/../shared/datasets/pima.csv", env!("CARGO_MANIFEST_DIR"));
    let run = |formulation: &str, sub: &str| {
        let config = ExperimentConfig::parse(
            Path::new("config.toml"),
            &format!(
                "[data]\npath = \"{data}\"\n[split]\ntest_fraction = 0.2\n[formulation]\n{formulation}\n"
            ),
        )
        .unwrap();
        experiment::run(&config, &dir.path().join(sub), false, false).unwrap()
    };
    let cart = run("name = \"cart\"\ndepth = 2", "cart");
    let tmo = run(
        "name = \"tmo\"\ndepth = 2\nn_trees = 10\nn_gen = 2\nseed = 3",
        "tmo",
    );
    let r = &tmo.records[0];
    assert_eq!(r.iterations, 2);
    assert_eq!(r.status, "heuristic");
    // TMO's population contains TAO-optimized trees and its fitness only grows: on the
    // training rows it is at least as accurate as... itself rerun (determinism).
    let again = run(
        "name = \"tmo\"\ndepth = 2\nn_trees = 10\nn_gen = 2\nseed = 3",
        "tmo2",
    );
    assert_eq!(again.records[0].train_accuracy, r.train_accuracy);
    assert_eq!(again.records[0].test_accuracy, r.test_accuracy);
    let model = TreeModel::load(&dir.path().join("tmo/models/split-0.json")).unwrap();
    assert_eq!(model.learner, "tmo");
    assert!(model.tree.depth() <= 2);
    assert!(cart.records[0].train_accuracy > 0.7);
    let forest = run("name = \"forest\"\nn_trees = 5\ndepth = 3", "forest");
    assert!(forest.records[0].test_accuracy > 0.6);
    // TMO on a numeric target is refused before anything is written.
    let bad = ExperimentConfig::parse(
        Path::new("config.toml"),
        &format!("[data]\npath = \"{data}\"\n[formulation]\nname = \"tmo\"\ncr = 1.5\n"),
    )
    .unwrap();
    let e = experiment::run(&bad, &dir.path().join("bad"), false, false)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("cr must be in [0, 1]"), "{e}");
    assert!(!dir.path().join("bad/results.jsonl").exists());
}

#[test]
fn tao_starts_from_a_saved_tree_and_a_mismatched_one_is_refused_early() {
    let dir = tempfile::tempdir().unwrap();
    let datasets = format!("{}/../shared/datasets", env!("CARGO_MANIFEST_DIR"));
    let run = |text: String, sub: &str| {
        let config = ExperimentConfig::parse(Path::new("config.toml"), &text).unwrap();
        experiment::run(&config, &dir.path().join(sub), false, false)
    };
    let cart = run(
        format!(
            "[data]\npath = \"{datasets}/pima.csv\"\n[formulation]\nname = \"cart\"\ndepth = 2\n"
        ),
        "cart",
    )
    .unwrap();
    let saved = dir.path().join("cart/models/split-0.json");
    let tao = run(
        format!(
            "[data]\npath = \"{datasets}/pima.csv\"\n[formulation]\nname = \"tao\"\n\
             [multistart]\nwarm_start = \"{}\"\n",
            saved.display()
        ),
        "tao",
    )
    .unwrap();
    // The same split: TAO from the saved CART tree is at least as accurate on training.
    assert!(tao.records[0].train_accuracy >= cart.records[0].train_accuracy);
    let started = TreeModel::load(&dir.path().join("tao/models/split-0.json")).unwrap();
    assert!(started.tree.depth() <= 2);
    // A tree of pima (8 features) for spambase (57), and a warm start for CART: refused
    // before anything is written.
    for (name, data, needle) in [
        (
            "tao",
            "spambase",
            "has 8 features and 2 classes, the data 57",
        ),
        ("cart", "pima", "used by tao only"),
    ] {
        let sub = format!("bad-{name}");
        let e = run(
            format!(
                "[data]\npath = \"{datasets}/{data}.csv\"\n[formulation]\nname = \"{name}\"\n\
                 [multistart]\nwarm_start = \"{}\"\n",
                saved.display()
            ),
            &sub,
        )
        .err()
        .unwrap()
        .to_string();
        assert!(e.contains(needle), "{e}");
        assert!(!dir.path().join(&sub).join("results.jsonl").exists());
    }
}

#[test]
fn oblique_tao_lowers_the_training_error_through_ipopt_and_needs_a_solver() {
    use glassbox::formulations::tao_oblique::TaoObliqueConfig;
    // Sonar (208 x 60): CART of depth 2 leaves training errors that hyperplanes remove.
    let d = glassbox::data::Table::from_csv(
        Path::new(&format!(
            "{}/../shared/datasets/sonar.csv",
            env!("CARGO_MANIFEST_DIR")
        )),
        &Default::default(),
    )
    .unwrap()
    .encode_classification()
    .unwrap();
    let (x, y) = (d.x, d.y);
    let solver = glassbox::registry::nlp_solver("ipopt", &Default::default()).unwrap();
    let config = TaoObliqueConfig {
        depth: Some(2),
        ..TaoObliqueConfig::default()
    };
    let (tree, outcome, failures) = config
        .fit(&x, &y, 2, &*solver, &Default::default())
        .unwrap();
    assert_eq!(failures, 0);
    assert!(outcome.errors_after < outcome.errors_before, "{outcome:?}");
    let predicted = tree.predict_class(&x);
    let errors = predicted.iter().zip(&y).filter(|(p, t)| p != t).count() as f64;
    assert_eq!(errors, outcome.errors_after);
    // A stop request in the solver's options ends it before its first pass: no node solve.
    let options = glassbox::SolveOptions {
        interrupt: Some(Interrupt::new(Arc::new(AtomicBool::new(true)))),
        ..Default::default()
    };
    let (stopped, outcome, _) = config.fit(&x, &y, 2, &*solver, &options).unwrap();
    assert!(outcome.interrupted && outcome.passes == 0, "{outcome:?}");
    assert!(outcome.errors_after > 0.0 && outcome.errors_after == outcome.errors_before);
    assert_ne!(stopped, tree);
    // From a config: without [solver] it is an error naming the table.
    let e = ExperimentConfig::parse(
        Path::new("config.toml"),
        "[data]\npath = \"x.csv\"\n[formulation]\nname = \"tao_oblique\"\n",
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("[solver]"), "{e}");
}

#[test]
fn tmo_with_validation_rows_returns_the_final_tree_that_classifies_them_best() {
    use glassbox::formulations::tmo::TmoConfig;
    let (x, y) = data(300, 5, 2, 11);
    let (xv, yv) = data(200, 5, 2, 12);
    let config = TmoConfig {
        depth: 2,
        n_trees: 10,
        n_gen: 2,
        ..TmoConfig::default()
    };
    let right = |t: &glassbox::formulations::cart::tree::AxisTree| {
        t.predict_class(&xv)
            .iter()
            .zip(&yv)
            .filter(|(p, y)| p == y)
            .count()
    };
    let plain = config.run(&x, &y, 2).unwrap();
    let selected = config
        .run_with_validation(&x, &y, 2, Some((&xv, &yv)))
        .unwrap();
    // The same evolution: Algorithm 3's t_best is the same tree either way.
    assert_eq!(plain.tree, selected.best_by_fitness);
    assert_eq!(plain.tree, plain.best_by_fitness);
    assert!(right(&selected.tree) >= right(&selected.best_by_fitness));
    assert!(selected.fitness <= plain.fitness);
    // validation_fraction outside (0, 1) is an error naming it.
    let bad = TmoConfig {
        validation_fraction: Some(1.5),
        ..config
    };
    assert!(bad
        .check(false, 5)
        .unwrap_err()
        .to_string()
        .contains("validation_fraction"));
}

#[test]
fn tmo_time_limit_counts_from_the_population() {
    use glassbox::formulations::tmo::TmoConfig;
    let (x, y) = data(240, 4, 3, 21);
    let config = TmoConfig {
        depth: 3,
        n_trees: 400,
        seed: 5,
        time_limit: 1e-9,
        ..TmoConfig::default()
    };
    let out = config.run(&x, &y, 3).unwrap();
    assert!(out.hit_time_limit && out.generations == 0);
    // Past the limit before the population was grown: the first tree alone, as grown (no
    // TAO pass), where growing and optimizing all 400 ignored the limit.
    let first = ForestConfig {
        depth: Some(3),
        n_trees: 1,
        seed: 5,
        criterion: config.criterion,
        max_features: config.max_features.clone(),
        ..ForestConfig::default()
    };
    let grown = first
        .fit_trees(
            &x,
            Targets::Classes {
                y: &y,
                n_classes: 3,
            },
        )
        .unwrap();
    let right = grown[0]
        .predict_class(&x)
        .iter()
        .zip(&y)
        .filter(|(p, t)| p == t)
        .count() as f64;
    assert_eq!(out.initial_fitness, right / y.len() as f64);
    assert_eq!(out.tree, grown[0]);
}

#[test]
fn tmo_returns_its_fittest_tree_no_worse_than_the_tao_optimized_forest() {
    use glassbox::formulations::tmo::TmoConfig;
    let (x, y) = data(240, 4, 3, 21);
    let config = TmoConfig {
        depth: 3,
        n_trees: 12,
        n_gen: 3,
        seed: 5,
        ..TmoConfig::default()
    };
    let out = config.run(&x, &y, 3).unwrap();
    assert_eq!(out.generations, 3);
    assert!(!out.hit_time_limit);
    // Its fitness is the training accuracy of the tree it returns, at least the best of
    // the initial population (the forest after TAO), and the tree fits depth 3.
    let right = out
        .tree
        .predict_class(&x)
        .iter()
        .zip(&y)
        .filter(|(p, t)| p == t)
        .count();
    assert_eq!(out.fitness, right as f64 / y.len() as f64);
    assert!(out.fitness >= out.initial_fitness);
    assert!(out.tree.depth() <= 3);
    // The initial population is the forest (same seed, depth and size), each tree after
    // TAO on the training rows.
    let tao = Tao::new(&x, &y, 3);
    let ones = vec![1.0; y.len()];
    let forest = ForestConfig {
        n_trees: 12,
        depth: Some(3),
        seed: 5,
        ..ForestConfig::default()
    };
    let mut best = 0.0f64;
    for mut tree in forest
        .fit_trees(
            &x,
            Targets::Classes {
                y: &y,
                n_classes: 3,
            },
        )
        .unwrap()
    {
        tao.optimize(&mut tree, &ones, config.tao_passes);
        best = best.max(1.0 - tao.errors(&tree, &ones) / y.len() as f64);
    }
    assert_eq!(best, out.initial_fitness);
}

/// A stop request skips the forest's trees not yet started: only the first (a forest stays
/// a model) is grown once it is made before the fit, and without it the fit is
/// `fit_trees`'s, every tree.
#[test]
fn forest_grows_only_its_first_tree_once_a_stop_is_requested() {
    let (x, y) = data(200, 6, 3, 4);
    let config = ForestConfig {
        n_trees: 8,
        depth: Some(3),
        seed: 9,
        ..ForestConfig::default()
    };
    let targets = Targets::Classes {
        y: &y,
        n_classes: 3,
    };
    let flag = Arc::new(AtomicBool::new(true));
    let stop = Interrupt::new(flag.clone());
    let stopped = config
        .fit_trees_until(&x, targets, || stop.requested())
        .unwrap();
    flag.store(false, Ordering::SeqCst);
    let grown = config
        .fit_trees_until(&x, targets, || stop.requested())
        .unwrap();
    assert_eq!(grown.len(), 8);
    assert_eq!(grown, config.fit_trees(&x, targets).unwrap());
    assert_eq!(stopped, grown[..1]);
}

/// A learner's fit is its solution: the grid summary gives its objective and at_best 1 (a
/// filter of the spread to starts with a solver's solution showed NaN / 0.00 for every
/// learner cell).
#[test]
fn a_learner_grid_summary_shows_its_fits() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("grid.toml");
    let text = format!(
        "[data]\npath = \"{}/../shared/datasets/iris.csv\"\n[split]\nrepeats = 1\n\
         [formulation]\nname = \"cart\"\ndepth = [1, 2]\n",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::write(&path, text).unwrap();
    let outcome = grid_run::run_grid(&path, dir.path().join("out"));
    for depth in [1, 2] {
        let row: Vec<&str> = outcome
            .summary
            .lines()
            .find(|l| l.ends_with(&format!("depth={depth}")))
            .unwrap_or_else(|| panic!("{}", outcome.summary))
            .split_whitespace()
            .collect();
        // cell splits test_acc delta_L delta_G best_obj obj_range at_best sec/solve cell
        let best: f64 = row[5].parse().unwrap();
        assert!(best.is_finite() && best > 0.0, "{}", outcome.summary);
        assert_eq!(row[7], "1.00", "{}", outcome.summary);
    }
}
