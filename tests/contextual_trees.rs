//! Contextual classification and regression trees (thesis chapter 5), feature `torch`:
//! `scripts/with-torch.sh cargo test --no-default-features --features ipopt,cbc,torch --test contextual_trees`.
//!
//! - CCT on spambase as the thesis runs it (depth-4 trees, a 50-tree forest, the default
//!   training with early stopping; one 80/20 split, 20% of the training rows for
//!   validation): its test accuracy beats CART's of the same depth fitted on the same
//!   training rows (the thesis' baseline) and every single tree's of its forest. About
//!   20-60 s in the dev profile (training stops after about 180 epochs).
//! - A fit is the same for a seed, another seed gives another network; a stop request ends
//!   the training after its epoch.
//! - CRT on Boston: its test MSE is below the worst tree's, and it runs from a config, is
//!   saved, loaded, predicts and explains.

#![cfg(feature = "torch")]

use glassbox::data::{stratified_split, CsvOptions, Table};
use glassbox::experiment::{self, ExperimentConfig};
use glassbox::formulations::cart::grow::Targets;
use glassbox::formulations::cart::{CartConfig, TreeTask};
use glassbox::formulations::contextual::{
    self, ContextualConfig, ContextualFit, ContextualTreeModel, CCT, CRT,
};
use glassbox::metrics::{accuracy, mean_squared_error};
use glassbox::model::{Classifier, Regressor};
use glassbox::Interrupt;
use nalgebra::DMatrix;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

fn dataset(name: &str) -> Table {
    let path = format!(
        "{}/../shared/datasets/{name}.csv",
        env!("CARGO_MANIFEST_DIR")
    );
    Table::from_csv(Path::new(&path), &CsvOptions::default()).unwrap()
}

/// A short training: enough epochs for the policy to beat CART, few enough for CI.
fn short() -> ContextualConfig {
    ContextualConfig {
        max_epochs: 40,
        patience: 10,
        ..ContextualConfig::default()
    }
}

#[test]
fn cct_beats_cart_and_the_forests_trees_on_spambase() {
    let table = dataset("spambase");
    let d = table.encode_classification().unwrap();
    let (train, test) = stratified_split(&d.y, 0.2, 1).unwrap();
    let x = d.x.select_rows(train.iter());
    let x_test = d.x.select_rows(test.iter());
    let y: Vec<usize> = train.iter().map(|&i| d.y[i]).collect();
    let y_test: Vec<usize> = test.iter().map(|&i| d.y[i]).collect();
    let targets = Targets::Classes {
        y: &y,
        n_classes: 2,
    };
    let task = TreeTask::Classification {
        classes: d.classes.clone(),
    };
    let config = ContextualConfig::default();
    let fit = contextual::fit(&config, CCT, &x, targets, &task, &d.encoding).unwrap();
    let model = &fit.model;
    assert_eq!(model.trees.len(), 50);
    assert!(model.trees.iter().all(|t| t.depth() <= 4));
    let cct = accuracy(&y_test, &Classifier::predict(model, &x_test));
    let (own, _) = contextual::validation_split(targets, config.validation_fraction, 1).unwrap();
    let x_own = x.select_rows(own.iter());
    let y_own: Vec<usize> = own.iter().map(|&i| y[i]).collect();
    let cart_tree = CartConfig {
        depth: Some(4),
        ..CartConfig::default()
    }
    .fit_tree(
        &x_own,
        Targets::Classes {
            y: &y_own,
            n_classes: 2,
        },
        &vec![1.0; x_own.nrows()],
    );
    let cart = accuracy(&y_test, &cart_tree.predict_class(&x_test));
    let mut trees: Vec<f64> = model
        .trees
        .iter()
        .map(|t| accuracy(&y_test, &t.predict_class(&x_test)))
        .collect();
    trees.sort_by(f64::total_cmp);
    eprintln!(
        "spambase: CCT {cct:.4} ({} epochs, kept {}), CART {cart:.4}, trees {:.4}..{:.4}",
        fit.epochs, fit.best_epoch, trees[0], trees[49]
    );
    assert!(cct > cart, "CCT {cct} <= CART {cart}");
    assert!(cct > trees[49], "CCT {cct} <= the best tree {}", trees[49]);
    // The policy uses several trees, and each prediction is its chosen tree's.
    assert!(model.training_choices.iter().filter(|&&c| c > 0).count() >= 2);
    let explained = model.explain(&x_test);
    let predicted = Classifier::predict(model, &x_test);
    for (i, e) in explained.iter().enumerate().take(50) {
        let tree = &model.trees[e.tree];
        assert_eq!(
            predicted[i],
            tree.predict_class(&x_test.rows(i, 1).into_owned())[0]
        );
        assert!(!e.path.is_empty() && e.path.len() <= tree.depth());
    }
}

/// A small CCT (10 trees of depth 3, 32 hidden units) fitted on all of pima's rows, and
/// its accuracy on them.
fn fit_pima(config: ContextualConfig) -> (ContextualFit, f64) {
    let d = dataset("pima").encode_classification().unwrap();
    let targets = Targets::Classes {
        y: &d.y,
        n_classes: 2,
    };
    let task = TreeTask::Classification {
        classes: d.classes.clone(),
    };
    let config = ContextualConfig {
        n_trees: 10,
        depth: 3,
        hidden: 32,
        ..config
    };
    let fit = contextual::fit(&config, CCT, &d.x, targets, &task, &d.encoding).unwrap();
    let training = accuracy(&d.y, &Classifier::predict(&fit.model, &d.x));
    (fit, training)
}

#[test]
fn a_seed_gives_the_same_fit() {
    let config = ContextualConfig {
        max_epochs: 5,
        ..short()
    };
    let ((one, _), (two, _)) = (fit_pima(config.clone()), fit_pima(config.clone()));
    assert_eq!(one.model, two.model);
    assert_eq!(one.best_epoch, two.best_epoch);
    let (other, _) = fit_pima(ContextualConfig { seed: 2, ..config });
    assert_ne!(one.model.policy, other.model.policy);
}

#[test]
fn a_stop_request_ends_the_training_after_its_epoch() {
    let asked = ContextualConfig {
        max_epochs: 2000,
        patience: 2000,
        interrupt: Some(Interrupt::new(Arc::new(AtomicBool::new(true)))),
        ..short()
    };
    let (fit, training) = fit_pima(asked.clone());
    assert!(fit.interrupted);
    assert_eq!((fit.epochs, fit.best_epoch), (1, 1));
    // What it returns is the first epoch's network, a working model.
    assert!(training > 0.5, "training accuracy {training}");
    let (fit, _) = fit_pima(ContextualConfig {
        max_epochs: 3,
        interrupt: None,
        ..asked
    });
    assert!(!fit.interrupted && fit.epochs == 3);
}

#[test]
fn crt_beats_the_worst_tree_and_runs_from_a_config() {
    let dir = tempfile::tempdir().unwrap();
    let config_path = dir.path().join("crt.toml");
    let data = format!(
        "{}/../shared/datasets/boston_housing.csv",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::write(
        &config_path,
        format!(
            "[data]\npath = \"{data}\"\n[split]\ntest_fraction = 0.2\nrepeats = 1\nseed = 3\n\
             [formulation]\nname = \"crt\"\ndepth = 3\nn_trees = 20\nmax_epochs = 30\npatience = 10\n"
        ),
    )
    .unwrap();
    let config = ExperimentConfig::load(&config_path).unwrap();
    let out = dir.path().join("out");
    let outcome = experiment::run(&config, &out, false, false).unwrap();
    let record = &outcome.records[0];
    assert_eq!(record.status, "heuristic");
    assert!(
        record.raw_status.contains("epochs"),
        "{}",
        record.raw_status
    );
    let model = ContextualTreeModel::load(&out.join("models/split-0.json")).unwrap();
    assert_eq!(model.learner, CRT);
    // Its test MSE against the trees' on the same rows.
    let table = dataset("boston_housing");
    let d = table.encode_regression().unwrap();
    let (_, test) = glassbox::data::random_split(d.y.len(), 0.2, 3).unwrap();
    let x_test: DMatrix<f64> = d.x.select_rows(test.iter());
    let y_test: Vec<f64> = test.iter().map(|&i| d.y[i]).collect();
    let crt = mean_squared_error(&y_test, &Regressor::predict(&model, &x_test));
    let worst = model
        .trees
        .iter()
        .map(|t| {
            let p: Vec<f64> = t.values(&x_test).iter().map(|v| v[0]).collect();
            mean_squared_error(&y_test, &p)
        })
        .fold(0.0, f64::max);
    eprintln!("boston: CRT test MSE {crt:.3}, worst tree {worst:.3}");
    assert!(crt < worst, "CRT {crt} >= worst tree {worst}");
    let regression = record.regression.as_ref().unwrap();
    assert!((regression.test_mse - crt).abs() < 1e-9);
    // Explanations name a tree and a path that ends in its prediction.
    let e = model.explain(&x_test);
    let text = model.explanation_text(&e[0]);
    assert!(
        text.starts_with(&format!("tree {} (p ", e[0].tree)),
        "{text}"
    );
    assert!(text.contains(" -> target = "), "{text}");
}
