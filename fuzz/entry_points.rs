//! The entry points the fuzz targets drive, shared with `tests/fuzz_regressions.rs` (which
//! replays every corpus file and crash reproducer on stable `cargo test`). Each takes
//! arbitrary bytes and must return without panicking: bad input is an `Err`, never a crash.
//!
//! - [`csv_reader`]: `Table::from_reader` on the bytes, then what a run does with a table
//!   (encoding for classification and regression, min-max scaling, a stratified split).
//! - [`config_parser`]: `ExperimentConfig::parse` on the bytes (when they are UTF-8, as
//!   `ExperimentConfig::load` requires).
//! - [`model_loader`]: every model kind's `load` on the bytes saved as a model file, as
//!   `glassbox show` / `glassbox predict` do, then `describe` and `predict` on a few rows,
//!   the explanations of the kinds `glassbox explain` takes, and the layout of the diagram
//!   `glassbox draw` makes.

use glassbox::data::{CsvOptions, MinMaxScaler, Table};
use glassbox::experiment::ExperimentConfig;
use glassbox::formulations::cart::TreeModel;
use glassbox::formulations::contextual::ContextualTreeModel;
use glassbox::formulations::forest::ForestModel;
use glassbox::formulations::l0tree::L0TreeModel;
use glassbox::formulations::logistic_l1::LogisticL1Model;
use glassbox::formulations::loss_tree::LossTreeModel;
use glassbox::formulations::oct::OctModel;
use glassbox::formulations::risk_score::RiskScoreModel;
use glassbox::formulations::sorct::SorctModel;
use glassbox::formulations::sorrt::SorrtModel;
use glassbox::formulations::tao_oblique::ObliqueTreeModel;
use glassbox::model::{Classifier, Regressor};
use nalgebra::DMatrix;
use std::path::{Path, PathBuf};

/// The CSV reader and the preprocessing a run applies to what it reads. The first byte
/// picks the reader's options (drop missing rows, target optional), the rest is the file.
pub fn csv_reader(data: &[u8]) {
    let (flags, text) = match data.split_first() {
        Some((flags, text)) => (*flags, text),
        None => (0, data),
    };
    let options = CsvOptions {
        drop_missing: flags & 1 != 0,
        target_optional: flags & 2 != 0,
        ..CsvOptions::default()
    };
    let Ok(table) = Table::from_reader("fuzz.csv", text, &options) else {
        return;
    };
    if let Ok(d) = table.encode_classification() {
        let scaler = MinMaxScaler::fit(&d.x);
        let z = scaler.transform(&d.x);
        let _ = scaler.inverse_transform(&z);
        let _ = d.stratified_split(0.25, 1);
        let _ = d.stratified_kfold(3, 1);
    }
    if let Ok(d) = table.encode_regression() {
        let _ = glassbox::data::random_split(d.n_samples(), 0.25, 1);
    }
}

/// The experiment config parser.
pub fn config_parser(data: &[u8]) {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = ExperimentConfig::parse(Path::new("fuzz.toml"), text);
    }
}

/// Every model loader, on the bytes as a model file; a model that loads describes itself
/// and predicts on three rows of its own width.
pub fn model_loader(data: &[u8]) {
    let path = scratch_file();
    if std::fs::write(&path, data).is_err() {
        return;
    }
    if let Ok(m) = SorrtModel::load(&path) {
        exercise_regressor(&m);
        let _ = m.explain(&rows(m.encoding.n_features()));
    }
    if let Ok(m) = TreeModel::load(&path) {
        if m.is_regression() {
            exercise_regressor(&m);
        } else {
            exercise_classifier(&m);
        }
    }
    if let Ok(m) = ForestModel::load(&path) {
        if m.is_regression() {
            exercise_regressor(&m);
        } else {
            exercise_classifier(&m);
        }
    }
    if let Ok(m) = SorctModel::load(&path) {
        exercise_classifier(&m);
    }
    if let Ok(m) = LogisticL1Model::load(&path) {
        exercise_classifier(&m);
    }
    if let Ok(m) = OctModel::load(&path) {
        exercise_classifier(&m);
    }
    if let Ok(m) = L0TreeModel::load(&path) {
        exercise_classifier(&m);
    }
    if let Ok(m) = RiskScoreModel::load(&path) {
        exercise_classifier(&m);
    }
    if let Ok(m) = ObliqueTreeModel::load(&path) {
        exercise_classifier(&m);
    }
    if let Ok(m) = LossTreeModel::load(&path) {
        exercise_classifier(&m);
    }
    if let Ok(m) = ContextualTreeModel::load(&path) {
        if m.is_regression() {
            exercise_regressor(&m);
        } else {
            exercise_classifier(&m);
        }
        for e in m.explain(&rows(m.encoding.n_features())) {
            let _ = m.explanation_text(&e);
        }
    }
    if let Ok(loaded) = glassbox::registry::Registry::builtin().load_model(&path) {
        if let Some(diagram) = loaded.model.diagram() {
            let _ = diagram.size();
        }
    }
    let _ = std::fs::remove_file(&path);
}

/// A file of this process and thread (tests replay inputs on parallel threads).
fn scratch_file() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("glassbox-fuzz-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let thread = format!("{:?}", std::thread::current().id());
    let thread: String = thread.chars().filter(char::is_ascii_digit).collect();
    dir.join(format!("model-{thread}.json"))
}

/// Three rows of `p` features: zeros, ones, and large values of both signs.
fn rows(p: usize) -> DMatrix<f64> {
    DMatrix::from_fn(3, p, |i, j| match i {
        0 => 0.0,
        1 => 1.0,
        _ => 1e6 * if j % 2 == 0 { 1.0 } else { -1.0 },
    })
}

fn exercise_classifier(m: &dyn Classifier) {
    let _ = m.describe();
    let x = rows(m.encoding().n_features());
    let _ = m.predict(&x);
}

fn exercise_regressor(m: &dyn Regressor) {
    let _ = m.describe();
    let x = rows(m.encoding().n_features());
    let _ = m.predict(&x);
}
