//! Tests that the defaults `glassbox formulations` prints (the [`ParamSpec`] text of each
//! formulation's `info()`) are the config types' `Default`: the text is written beside the
//! code, so this reads it as a config would and compares, and the two cannot drift apart.
//! A printed default that is not a TOML value ("" for a required key, prose such as "0.5 off
//! the diagonal") is not read. Every entry of the registry's `builtin_formulations` has its
//! line in the test: a formulation added there adds one here.

use crate::{
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
fn assert_printed_defaults<F>(info: FormulationInfo, setup: fn(&mut F)) -> usize
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

#[test]
fn every_printed_default_is_the_config_default() {
    use contextual::{ContextualConfig, ContextualKind};
    let sorct_read = assert_printed_defaults::<sorct::SorctConfig>(sorct::info(), none);
    // Most printed defaults are values: S-ORCT's 21 keys print 17 of them as TOML (not read:
    // the two `_log2` keys, printed "" as they have none, and `costs` and `rho`, prose).
    assert!(
        sorct_read >= 15,
        "S-ORCT: only {sorct_read} printed defaults read"
    );
    assert_printed_defaults::<logistic_l1::LogisticL1Config>(logistic_l1::info(), none);
    assert_printed_defaults::<sorrt::SorrtConfig>(sorrt::info(), none);
    assert_printed_defaults::<cart::CartConfig>(cart::info(), none);
    assert_printed_defaults::<forest::ForestConfig>(forest::info(), none);
    assert_printed_defaults::<tao::TaoConfig>(tao::info(), none);
    assert_printed_defaults::<tmo::TmoConfig>(tmo::info(), none);
    assert_printed_defaults::<oct::OctConfig>(oct::info(), none);
    assert_printed_defaults::<oct::OcthConfig>(oct::info_h(), none);
    assert_printed_defaults::<flowoct::FlowOctConfig>(flowoct::info(), none);
    assert_printed_defaults::<l0tree::L0TreeConfig>(l0tree::info(), none);
    assert_printed_defaults::<risk_score::RiskScoreConfig>(risk_score::info_ors(), |c| {
        c.kind = risk_score::Kind::Ors
    });
    assert_printed_defaults::<risk_score::RiskScoreConfig>(risk_score::info_ogrs(), |c| {
        c.kind = risk_score::Kind::Ogrs
    });
    assert_printed_defaults::<tao_oblique::TaoObliqueConfig>(tao_oblique::info(), none);
    assert_printed_defaults::<loss_tree::LossTreeConfig>(loss_tree::info(), none);
    assert_printed_defaults::<ContextualConfig>(contextual::info_cct(), |c| {
        c.kind = ContextualKind::Cct
    });
    assert_printed_defaults::<ContextualConfig>(contextual::info_crt(), |c| {
        c.kind = ContextualKind::Crt
    });
}
