//! The formulation registry's entries. An entry is what the rest of glassbox knows of a
//! formulation: its [`FormulationInfo`] (name, kind, description, parameters with defaults
//! and help), the tasks it learns, how its config is read from a `[formulation]` table into
//! something the experiment engine runs, and how its saved models are loaded. An entry is
//! made in one line from a formulation's typed trait implementation
//! ([`FormulationEntry::nlp_classifier`] and its siblings, one per problem kind); the engine's
//! adapter for that kind supplies the rest (multistart, MIP starts, carrying solutions along a
//! warm path, regression metrics).
//!
//! [`builtin_formulations`] is glassbox's list: adding a formulation to glassbox is its own
//! files under `formulations/` plus one line there.

use crate::experiment::kinds::{Learner, MilpClassifier, NlpClassifier, NlpRegressor, RiskScore};
use crate::experiment::Formulation;
use crate::formulations::{
    cart, contextual, flowoct, forest, l0tree, logistic_l1, loss_tree, oct, risk_score, sorct,
    sorrt, tao, tao_oblique, tmo,
};
use glassbox_core::formulation::{
    FormulationInfo, MilpClassifierFormulation, ModelFile, NlpClassifierFormulation,
    NlpRegressorFormulation,
};
use glassbox_core::learner::HeuristicLearner;
use glassbox_core::model::{load_json, FittedModel, ModelAbilities};
use glassbox_core::Result;
use serde::de::DeserializeOwned;
use std::path::Path;
use std::sync::Arc;

/// glassbox's formulations, one line each, in the order `glassbox formulations` lists them.
pub fn builtin_formulations() -> Vec<FormulationEntry> {
    use contextual::{ContextualConfig, ContextualKind};
    use risk_score::Kind as Score;
    vec![
        FormulationEntry::nlp_classifier::<sorct::SorctConfig>(sorct::info()),
        FormulationEntry::nlp_classifier::<logistic_l1::LogisticL1Config>(logistic_l1::info()),
        FormulationEntry::nlp_regressor::<sorrt::SorrtConfig>(sorrt::info()),
        FormulationEntry::learner::<cart::CartConfig>(cart::info()),
        FormulationEntry::learner::<forest::ForestConfig>(forest::info()),
        FormulationEntry::learner::<tao::TaoConfig>(tao::info()).for_tasks(Tasks::CLASSIFICATION),
        FormulationEntry::learner::<tmo::TmoConfig>(tmo::info()).for_tasks(Tasks::CLASSIFICATION),
        FormulationEntry::milp_classifier::<oct::OctConfig>(oct::info()),
        FormulationEntry::milp_classifier::<oct::OcthConfig>(oct::info_h()),
        FormulationEntry::milp_classifier::<flowoct::FlowOctConfig>(flowoct::info()),
        FormulationEntry::nlp_classifier::<l0tree::L0TreeConfig>(l0tree::info()),
        FormulationEntry::risk_score(risk_score::info_ors(), Score::Ors),
        FormulationEntry::risk_score(risk_score::info_ogrs(), Score::Ogrs),
        FormulationEntry::learner::<tao_oblique::TaoObliqueConfig>(tao_oblique::info())
            .for_tasks(Tasks::CLASSIFICATION),
        FormulationEntry::milp_classifier::<loss_tree::LossTreeConfig>(loss_tree::info()),
        FormulationEntry::learner_with::<ContextualConfig>(contextual::info_cct(), |c| {
            c.kind = ContextualKind::Cct
        })
        .for_tasks(Tasks::CLASSIFICATION),
        FormulationEntry::learner_with::<ContextualConfig>(contextual::info_crt(), |c| {
            c.kind = ContextualKind::Crt
        })
        .for_tasks(Tasks::REGRESSION),
    ]
}

/// Which tasks a formulation learns (a heuristic learner's criterion may choose).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tasks {
    /// It learns classifiers.
    pub classification: bool,
    /// It learns regressors.
    pub regression: bool,
}

impl Tasks {
    /// Classification only.
    pub const CLASSIFICATION: Tasks = Tasks {
        classification: true,
        regression: false,
    };
    /// Regression only.
    pub const REGRESSION: Tasks = Tasks {
        classification: false,
        regression: true,
    };
    /// Either, as its parameters say.
    pub const EITHER: Tasks = Tasks {
        classification: true,
        regression: true,
    };
}

/// How an entry reads its config: the `[formulation]` table without `name` (a serde error
/// message on failure, which the config parser places in its file and table).
type Parse =
    Arc<dyn Fn(toml::Table) -> std::result::Result<Arc<dyn Formulation>, String> + Send + Sync>;

/// What the registry knows of a formulation (see the module comment).
#[derive(Clone)]
pub struct FormulationEntry {
    /// Name, kind, description, parameters.
    pub info: FormulationInfo,
    /// The tasks it learns.
    pub tasks: Tasks,
    /// Its models draw as trees (`glassbox draw`).
    pub draws: bool,
    /// Its models explain their predictions (`glassbox explain`).
    pub explains: bool,
    parse: Parse,
    load: fn(&Path, &str) -> Result<Box<dyn FittedModel>>,
}

impl FormulationEntry {
    /// The defaults its `info()` prints that are TOML values, as a `[formulation]` table
    /// would hold them ("" for a required key and prose such as "0.5 off the diagonal" are
    /// left out).
    pub fn printed_defaults(&self) -> toml::Table {
        printed_defaults(self.info.parameters)
    }

    /// A formulation whose config type `F` is an NLP classifier. Its `info.kind` is set to
    /// "nlp" whatever it said: the kind follows from the trait, and the conformance suite
    /// keys its derivative checks on it (a mistyped kind turned them off silently).
    pub fn nlp_classifier<F>(info: FormulationInfo) -> Self
    where
        F: NlpClassifierFormulation + DeserializeOwned + Clone + Send + Sync + 'static,
        F::Problem: 'static,
    {
        Self::of::<F, F::Model>(
            FormulationInfo {
                kind: "nlp",
                ..info
            },
            Tasks::CLASSIFICATION,
            |f| Arc::new(NlpClassifier(f)),
            |_| {},
        )
    }

    /// A formulation whose config type `F` is an NLP regressor (`info.kind` set to "nlp").
    pub fn nlp_regressor<F>(info: FormulationInfo) -> Self
    where
        F: NlpRegressorFormulation + DeserializeOwned + Clone + Send + Sync + 'static,
        F::Problem: 'static,
    {
        Self::of::<F, F::Model>(
            FormulationInfo {
                kind: "nlp",
                ..info
            },
            Tasks::REGRESSION,
            |f| Arc::new(NlpRegressor(f)),
            |_| {},
        )
    }

    /// A formulation whose config type `F` is a MILP classifier (`info.kind` set to "milp").
    pub fn milp_classifier<F>(info: FormulationInfo) -> Self
    where
        F: MilpClassifierFormulation + DeserializeOwned + Clone + Send + Sync + 'static,
    {
        Self::of::<F, F::Model>(
            FormulationInfo {
                kind: "milp",
                ..info
            },
            Tasks::CLASSIFICATION,
            |f| Arc::new(MilpClassifier(f)),
            |_| {},
        )
    }

    /// A heuristic learner whose config type is `F`.
    pub fn learner<F>(info: FormulationInfo) -> Self
    where
        F: HeuristicLearner + DeserializeOwned + Clone + Send + Sync + 'static,
    {
        Self::learner_with::<F>(info, |_| {})
    }

    /// A heuristic learner whose config type `F` serves several entries: `setup` marks which
    /// (e.g. CCT or CRT) on every config read.
    pub fn learner_with<F>(info: FormulationInfo, setup: fn(&mut F)) -> Self
    where
        F: HeuristicLearner + DeserializeOwned + Clone + Send + Sync + 'static,
    {
        Self::of::<F, F::Model>(info, Tasks::EITHER, |f| Arc::new(Learner(f)), setup)
    }

    /// A risk score (ORS or OGRS, `kind`): a score card learned by MILP.
    pub fn risk_score(info: FormulationInfo, kind: risk_score::Kind) -> Self {
        let parse: Parse = Arc::new(move |table: toml::Table| {
            let mut config: risk_score::RiskScoreConfig = table
                .try_into()
                .map_err(|e: toml::de::Error| e.to_string())?;
            config.kind = kind;
            Ok(Arc::new(RiskScore(config)) as Arc<dyn Formulation>)
        });
        Self::with_model::<risk_score::RiskScoreModel>(info, Tasks::CLASSIFICATION, parse)
    }

    /// The entry of config type `F` (its models `M`), run by the engine through `wrap`, each
    /// config read then set up by `setup`.
    fn of<F, M>(
        info: FormulationInfo,
        tasks: Tasks,
        wrap: fn(F) -> Arc<dyn Formulation>,
        setup: fn(&mut F),
    ) -> Self
    where
        F: DeserializeOwned + 'static,
        M: ModelFile,
    {
        let parse: Parse = Arc::new(move |table: toml::Table| {
            let mut config: F = table
                .try_into()
                .map_err(|e: toml::de::Error| e.to_string())?;
            setup(&mut config);
            Ok(wrap(config))
        });
        Self::with_model::<M>(info, tasks, parse)
    }

    /// The entry whose configs `parse` reads and whose models are of type `M`.
    fn with_model<M: ModelFile>(info: FormulationInfo, tasks: Tasks, parse: Parse) -> Self {
        FormulationEntry {
            info,
            tasks,
            draws: <M as ModelAbilities>::DRAWS,
            explains: <M as ModelAbilities>::EXPLAINS,
            parse,
            load: load::<M>,
        }
    }

    /// This entry learning `tasks` (a heuristic learner's entry says by default that its
    /// parameters choose).
    pub fn for_tasks(mut self, tasks: Tasks) -> Self {
        self.tasks = tasks;
        self
    }

    /// Reads a `[formulation]` table (without `name`) into what the engine runs; unknown keys
    /// and ill-typed values are errors naming them.
    pub fn parse(&self, table: toml::Table) -> std::result::Result<Arc<dyn Formulation>, String> {
        (self.parse)(table)
    }

    /// Loads a model of this formulation saved at `path` (checked against its tag).
    pub fn load_model(&self, path: &Path) -> Result<Box<dyn FittedModel>> {
        (self.load)(path, self.info.name)
    }
}

/// Loads a model of type `M` tagged `kind`.
fn load<M: ModelFile>(path: &Path, kind: &str) -> Result<Box<dyn FittedModel>> {
    Ok(Box::new(load_json::<M>(path, kind)?))
}

/// [`FormulationEntry::printed_defaults`] of a parameter list.
pub fn printed_defaults(parameters: &[glassbox_core::formulation::ParamSpec]) -> toml::Table {
    let mut table = toml::Table::new();
    for p in parameters {
        if let Ok(mut line) = format!("value = {}", p.default).parse::<toml::Table>() {
            if let Some(value) = line.remove("value") {
                table.insert(p.name.to_string(), value);
            }
        }
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kind follows from the constructor: a mistyped one ("NLP") silently turned off the
    /// conformance suite's derivative checks of an extension's formulation.
    #[test]
    fn the_constructor_sets_the_kind() {
        let info = FormulationInfo {
            kind: "NLP",
            ..logistic_l1::info()
        };
        let entry = FormulationEntry::nlp_classifier::<logistic_l1::LogisticL1Config>(info);
        assert_eq!(entry.info.kind, "nlp");
        let info = FormulationInfo {
            kind: "nlp",
            ..oct::info()
        };
        let entry = FormulationEntry::milp_classifier::<oct::OctConfig>(info);
        assert_eq!(entry.info.kind, "milp");
    }
}
