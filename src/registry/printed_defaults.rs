//! Tests that the defaults `glassbox formulations` prints (the `ParamSpec` text of each
//! formulation's `info()`) are the config types' `Default`: the text is written beside the
//! code, so this reads it as a config would and compares, and the two cannot drift apart.
//! The check is the conformance suite's
//! [`printed_defaults`](crate::conformance::formulations::printed_defaults) (an extension runs
//! it on its own formulations); it needs each config type, which a registry entry does not
//! keep, so this file names them. The test walks [`builtin_formulations`] itself, so an entry
//! this file has no arm for fails it: a formulation added to the registry adds its arm here.

use super::formulations::builtin_formulations;
use crate::conformance::formulations::printed_defaults as assert_printed_defaults;
use crate::formulations::{
    cart, contextual, flowoct, forest, l0tree, logistic_l1, loss_tree, oct, risk_score, sorct,
    sorrt, tao, tao_oblique, tmo,
};
use glassbox_core::formulation::FormulationInfo;

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
