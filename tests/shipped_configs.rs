//! Every config this repository ships (`examples/*.toml`, `experiments/**/*.toml`) parses as
//! a grid with the built-in registry, and the papers' replication configs under
//! `experiments/` pin the papers' protocol where glassbox's defaults deviate from it (issue
//! 24: `split_scale = "data"`, the CART start and the validation selection): a replication config that silently ran on
//! the new defaults would no longer reproduce its paper's table.
//!
//! `examples/extension/` is left out: its configs name the extension crate's formulation and
//! backend, and its own tests run them.

use glassbox::experiment::grid::Experiment;
use std::path::{Path, PathBuf};

fn configs(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n != "extension") {
                configs(&path, out);
            }
        } else if path.extension().is_some_and(|e| e == "toml") {
            out.push(path);
        }
    }
}

fn shipped(folder: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    configs(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join(folder),
        &mut found,
    );
    found.sort();
    found
}

#[test]
fn every_shipped_config_parses() {
    let all: Vec<PathBuf> = shipped("examples")
        .into_iter()
        .chain(shipped("experiments"))
        .collect();
    assert!(all.len() > 40, "found only {} configs", all.len());
    let failures: Vec<String> = all
        .iter()
        .filter_map(|p| {
            Experiment::load(p)
                .err()
                .map(|e| format!("{}: {e}", p.display()))
        })
        // A config of the optional torch backend parses only where it was compiled in.
        .filter(|e| cfg!(feature = "torch") || !e.contains("was not compiled into this build"))
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn replication_configs_pin_the_papers_protocol() {
    let mut checked = 0;
    for path in shipped("experiments") {
        let text = std::fs::read_to_string(&path).unwrap();
        let doc: toml::Table = toml::from_str(&text).unwrap();
        let Some(formulation) = doc.get("formulation").and_then(|f| f.as_table()) else {
            continue;
        };
        let name = formulation["name"].as_str().unwrap_or("");
        let wanted: &[(&str, toml::Value)] = match name {
            "sorct" | "l0tree" => &[
                ("split_scale", toml::Value::String("fixed".into())),
                ("cart_start", toml::Value::Boolean(false)),
                ("selection_folds", toml::Value::Integer(0)),
            ],
            "sorrt" => &[
                ("cart_start", toml::Value::Boolean(false)),
                ("leaf_ridge", toml::Value::Float(0.0)),
                ("clip_predictions", toml::Value::Boolean(false)),
                ("selection_folds", toml::Value::Integer(0)),
            ],
            _ => continue,
        };
        for (key, value) in wanted {
            assert_eq!(
                formulation.get(*key),
                Some(value),
                "{}: a replication config of {name} must set {key} = {value} (the paper's \
                 protocol)",
                path.display()
            );
        }
        checked += 1;
    }
    assert!(checked >= 15, "checked only {checked} replication configs");
}
