//! Tests that the defaults `glassbox formulations` prints (the [`ParamSpec`] text of each
//! formulation's `info()`) are the config types' `Default`: the text is written beside the
//! code, so this reads it as a config would and compares, and the two cannot drift apart.
//! A printed default that is not a TOML value ("" for a required key, prose such as "0.5 off
//! the diagonal") is not read. The test walks [`builtin_formulations`] itself, so an entry
//! this file has no arm for fails it: a formulation added to the registry adds its arm here.

use super::formulations::builtin_formulations;
use crate::formulations::{
    cart, contextual, flowoct, forest, l0tree, logistic_l1, loss_tree, oct, risk_score, sorct,
    sorrt, tao, tao_oblique, tmo,
};
use glassbox_core::formulation::{FormulationInfo, ParamSpec};
use serde::de::DeserializeOwned;
use std::fmt::Debug;

/// The printed defaults that are TOML values, as a `[formulation]` table would hold them.
fn printed_table(parameters: &[ParamSpec]) -> toml::Table {
    let mut table = toml::Table::new();
    for p in parameters {
        if let Ok(mut line) = format!("value = {}", p.default).parse::<toml::Table>() {
            table.insert(p.name.to_string(), line.remove("value").unwrap());
        }
    }
    table
}

/// Reads `info`'s printed defaults into `F` (then `setup`, as the registry entry does after
/// parsing) and asserts the result is `F::default()` after the same `setup` and that at
/// least one printed default was read; returns how many were.
fn assert_printed_defaults<F>(info: &FormulationInfo, setup: fn(&mut F)) -> usize
where
    F: DeserializeOwned + Default + PartialEq + Debug,
{
    let table = printed_table(info.parameters);
    let mut read: F = table
        .clone()
        .try_into()
        .unwrap_or_else(|e| panic!("{}: its printed defaults do not parse: {e}", info.name));
    setup(&mut read);
    let mut default = F::default();
    setup(&mut default);
    assert_eq!(
        read, default,
        "{}: the printed defaults {table:?}",
        info.name
    );
    assert!(
        !table.is_empty(),
        "{}: no printed default is a value",
        info.name
    );
    table.len()
}

/// No setup after parsing.
fn none<F>(_: &mut F) {}

/// Checks one registry entry's printed defaults against its config type (the type and the
/// setup its line in `builtin_formulations` names); returns how many were read.
fn check(info: &FormulationInfo) -> usize {
    use contextual::{ContextualConfig, ContextualKind};
    use risk_score::{Kind, RiskScoreConfig};
    match info.name {
        "sorct" => assert_printed_defaults::<sorct::SorctConfig>(info, none),
        "logistic_l1" => assert_printed_defaults::<logistic_l1::LogisticL1Config>(info, none),
        "sorrt" => assert_printed_defaults::<sorrt::SorrtConfig>(info, none),
        "cart" => assert_printed_defaults::<cart::CartConfig>(info, none),
        "forest" => assert_printed_defaults::<forest::ForestConfig>(info, none),
        "tao" => assert_printed_defaults::<tao::TaoConfig>(info, none),
        "tmo" => assert_printed_defaults::<tmo::TmoConfig>(info, none),
        "oct" => assert_printed_defaults::<oct::OctConfig>(info, none),
        "oct_h" => assert_printed_defaults::<oct::OcthConfig>(info, none),
        "flowoct" => assert_printed_defaults::<flowoct::FlowOctConfig>(info, none),
        "l0tree" => assert_printed_defaults::<l0tree::L0TreeConfig>(info, none),
        "ors" => assert_printed_defaults::<RiskScoreConfig>(info, |c| c.kind = Kind::Ors),
        "ogrs" => assert_printed_defaults::<RiskScoreConfig>(info, |c| c.kind = Kind::Ogrs),
        "tao_oblique" => assert_printed_defaults::<tao_oblique::TaoObliqueConfig>(info, none),
        "loss_tree" => assert_printed_defaults::<loss_tree::LossTreeConfig>(info, none),
        "cct" => {
            assert_printed_defaults::<ContextualConfig>(info, |c| c.kind = ContextualKind::Cct)
        }
        "crt" => {
            assert_printed_defaults::<ContextualConfig>(info, |c| c.kind = ContextualKind::Crt)
        }
        other => panic!(
            "{other}: a built-in formulation this test does not check (add its arm to `check`)"
        ),
    }
}

#[test]
fn every_printed_default_is_the_config_default() {
    let mut sorct_read = None;
    for entry in builtin_formulations() {
        let read = check(&entry.info);
        if entry.info.name == "sorct" {
            sorct_read = Some(read);
        }
    }
    // Most printed defaults are values: S-ORCT's 23 keys print 19 of them as TOML (not read:
    // the two `_log2` keys, printed "" as they have none, and `costs` and `rho`, prose).
    let sorct_read = sorct_read.expect("S-ORCT is a built-in formulation");
    assert!(
        sorct_read >= 15,
        "S-ORCT: only {sorct_read} printed defaults read"
    );
}
