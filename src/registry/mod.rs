//! The registries: every backend (`solvers/`) and every formulation (`formulations/`) this
//! build knows, as entries created by name from a config. [`Registry::builtin`] lists
//! glassbox's own; a program that extends glassbox adds its entries with
//! [`Registry::with_backend`] and [`Registry::with_formulation`] and hands the registry to
//! the CLI (`glassbox::cli::main_with`) or the experiment engine, without editing glassbox
//! (`examples/extension` does it). Everything that lists, parses, runs, loads, draws or
//! explains formulations reads a registry: no list of formulations exists outside it.
//!
//! The free functions ([`backends`], [`find`], [`nlp_solver`], [`milp_solver`],
//! [`tree_search_solver`]) read the
//! built-in registry, for programs and tests that need no extension.
//!
//! This module sees everything: it is one of the outer layers.

mod backends;
mod formulations;
#[cfg(test)]
mod printed_defaults;

pub use backends::{builtin_backends, find, milp_solver, nlp_solver, tree_search_solver};
pub use formulations::{builtin_formulations, printed_defaults, FormulationEntry, Tasks};
pub use glassbox_core::backend::{validate_options, BackendEntry, Constructor};

use glassbox_core::model::{model_kind, FittedModel};
use glassbox_core::{GlassboxError, MilpSolver, NlpSolver, Result, SolveOptions, TreeSearchSolver};
use std::path::Path;
use std::sync::Arc;

/// Every backend compiled into this build (the built-in registry's).
pub fn backends() -> Vec<BackendEntry> {
    builtin_backends()
}

/// The backends and formulations a run can name.
#[derive(Clone)]
pub struct Registry {
    backends: Vec<BackendEntry>,
    formulations: Vec<FormulationEntry>,
}

/// A saved model read through the registry: the formulation its file names, and the model.
pub struct LoadedModel {
    /// The `glassbox_model` tag of the file (the formulation's name).
    pub kind: String,
    /// The model.
    pub model: Box<dyn FittedModel>,
}

impl Registry {
    /// glassbox's own backends (those compiled into this build) and formulations.
    pub fn builtin() -> Self {
        Registry {
            backends: builtin_backends(),
            formulations: builtin_formulations(),
        }
    }

    /// The built-in registry, shared (built once per process).
    pub fn shared_builtin() -> Arc<Registry> {
        static BUILTIN: std::sync::OnceLock<Arc<Registry>> = std::sync::OnceLock::new();
        BUILTIN
            .get_or_init(|| Arc::new(Registry::builtin()))
            .clone()
    }

    /// This registry with `entry` added; an entry of the same name replaces the one it has
    /// (so a program may also swap a built-in backend for its own build of it).
    pub fn with_backend(mut self, entry: BackendEntry) -> Self {
        self.backends.retain(|e| e.name != entry.name);
        self.backends.push(entry);
        self
    }

    /// This registry with `entry` added; an entry of the same name replaces the one it has.
    pub fn with_formulation(mut self, entry: FormulationEntry) -> Self {
        self.formulations.retain(|e| e.info.name != entry.info.name);
        self.formulations.push(entry);
        self
    }

    /// The backends, in registration order.
    pub fn backends(&self) -> &[BackendEntry] {
        &self.backends
    }

    /// The formulations, in registration order.
    pub fn formulations(&self) -> &[FormulationEntry] {
        &self.formulations
    }

    /// The backend `name`; an unknown name is an error listing the known ones (and the cargo
    /// feature that adds a built-in backend left out of this build).
    pub fn backend(&self, name: &str) -> Result<&BackendEntry> {
        self.backends
            .iter()
            .find(|e| e.name == name)
            .ok_or_else(|| backends::unknown(name, &self.backends))
    }

    /// Creates the NLP backend `name`, after checking `options` against it.
    pub fn nlp_solver(&self, name: &str, options: &SolveOptions) -> Result<Box<dyn NlpSolver>> {
        backends::create_nlp(self.backend(name)?, options)
    }

    /// Creates the MILP backend `name`, after checking `options` against it.
    pub fn milp_solver(&self, name: &str, options: &SolveOptions) -> Result<Box<dyn MilpSolver>> {
        backends::create_milp(self.backend(name)?, options)
    }

    /// Creates the optimal-tree search backend `name`, after checking `options` against it.
    pub fn tree_search_solver(
        &self,
        name: &str,
        options: &SolveOptions,
    ) -> Result<Box<dyn TreeSearchSolver>> {
        backends::create_tree_search(self.backend(name)?, options)
    }

    /// The formulation `name`; an unknown name is an error listing the known ones.
    pub fn formulation(&self, name: &str) -> Result<&FormulationEntry> {
        self.formulations
            .iter()
            .find(|e| e.info.name == name)
            .ok_or_else(|| {
                GlassboxError::Config(format!(
                    "unknown formulation '{name}': known formulations are {} (one an extension \
                     registers is known to its own binary, or to `ExperimentConfig::load_with` \
                     given its registry)",
                    self.formulation_names().join(", ")
                ))
            })
    }

    /// The names of the formulations.
    pub fn formulation_names(&self) -> Vec<&'static str> {
        self.formulations.iter().map(|e| e.info.name).collect()
    }

    /// Loads a saved model of any registered formulation, by the kind its file declares.
    pub fn load_model(&self, path: &Path) -> Result<LoadedModel> {
        let kind = model_kind(path)?;
        let entry = self.formulation(&kind).map_err(|_| GlassboxError::Model {
            file: path.display().to_string(),
            message: format!(
                "'{kind}' models cannot be used: no formulation of this build makes them \
                 (known: {})",
                self.formulation_names().join(", ")
            ),
        })?;
        Ok(LoadedModel {
            model: entry.load_model(path)?,
            kind,
        })
    }
}
