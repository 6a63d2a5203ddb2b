//! Experiment grids: the config grammar of axes (`docs/GRID_FORMAT.md`), its expansion into
//! cells, the split protocols (holdout, k-fold, nested k-fold) and the fingerprints that make
//! a run resumable and shardable.
//!
//! A grid config is a one-setting config in which some values are axes: a `[formulation]`
//! parameter given a list (when the parameter takes a scalar) or a range
//! `{ from, to, step, zero_first }`, a `[grid]` table of explicit axes, a list of solver names
//! or a list or range of multistart seeds. Each cell (a point of the cartesian product) is written back as a
//! one-setting TOML document and read by [`ExperimentConfig::parse`], so every check of a
//! plain config applies to every cell and a one-setting config is a grid of one cell.
//!
//! This module sees the experiment config only; the engine (`engine.rs`) runs the cells.

use super::config::one_line;
use super::ExperimentConfig;
use crate::registry::Registry;
use crate::{GlassboxError, Result};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The `[experiment]` table: what the engine does beyond one setting.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct EngineConfig {
    /// Start each cell from the previous cell's solutions (the S-ORCT paper's protocol).
    pub warm_path: bool,
    /// Seconds for the whole run: no new solve starts after it (the run can be resumed).
    pub time_budget: Option<f64>,
    /// Save the selected model of every (cell, split) under `OUT/models/`.
    pub save_models: bool,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            warm_path: false,
            time_budget: None,
            save_models: true,
        }
    }
}

/// The metric nested cross-validation tunes on (mean over the inner folds of the selected
/// start's test value).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum InnerMetric {
    /// Test accuracy.
    Accuracy,
    /// Test balanced accuracy.
    BalancedAccuracy,
    /// Test R squared (regression).
    R2,
    /// Test mean squared error (regression; lower is better).
    Mse,
}

impl InnerMetric {
    /// Whether it measures a regression.
    pub fn is_regression(self) -> bool {
        matches!(self, InnerMetric::R2 | InnerMetric::Mse)
    }

    /// Its name in a config.
    pub fn as_str(self) -> &'static str {
        match self {
            InnerMetric::Accuracy => "accuracy",
            InnerMetric::BalancedAccuracy => "balanced_accuracy",
            InnerMetric::R2 => "r2",
            InnerMetric::Mse => "mse",
        }
    }
}

/// How the rows are split.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(tag = "protocol", rename_all = "snake_case")]
pub enum Protocol {
    /// `repeats` seeded stratified holdouts (`[split] test_fraction`), split r seeded
    /// `seed + r` (as a one-setting run).
    Holdout,
    /// `repeats` seeded stratified k-fold partitions (repeat r seeded `seed + r`).
    Kfold {
        /// Folds.
        folds: usize,
    },
    /// Nested stratified k-fold: `folds` outer folds (seeded `seed`), each outer training
    /// part split into `inner_folds` (seeded `seed + 1 + outer fold`); every cell is fitted on
    /// every inner and outer split; for each outer fold, the cell with the best mean inner
    /// `metric` is chosen and its outer test value reported.
    Nested {
        /// Outer folds.
        folds: usize,
        /// Inner folds.
        inner_folds: usize,
        /// The tuning metric.
        metric: InnerMetric,
    },
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProtocolKeys {
    protocol: Option<String>,
    folds: Option<usize>,
    inner_folds: Option<usize>,
    inner_metric: Option<InnerMetric>,
}

/// Where an axis lives in the config.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AxisSection {
    /// A `[formulation]` parameter (from `[formulation]` or `[grid]`).
    Formulation,
    /// `[solver] name`.
    Solver,
    /// `[multistart] seed`.
    MultistartSeed,
}

/// One axis of the grid: a config key and its values.
#[derive(Clone, Debug)]
pub struct Axis {
    /// The key (`[formulation]` parameter name, or `name` / `seed`).
    pub key: String,
    /// Where it lives.
    pub section: AxisSection,
    /// Its values, in order.
    pub values: Vec<toml::Value>,
}

impl Axis {
    /// The name the results use: the parameter, `solver` or `multistart_seed`.
    pub fn label(&self) -> &str {
        match self.section {
            AxisSection::Formulation => &self.key,
            AxisSection::Solver => "solver",
            AxisSection::MultistartSeed => "multistart_seed",
        }
    }
}

/// One point of the grid: a complete one-setting config.
#[derive(Clone, Debug)]
pub struct Cell {
    /// Index (blocks in order; within a block row-major over its axes, the last axis
    /// fastest).
    pub index: usize,
    /// The block it belongs to.
    pub block: usize,
    /// Position on each axis.
    pub coords: Vec<usize>,
    /// The cell's config.
    pub config: ExperimentConfig,
    /// Fingerprint of the cell: data contents, formulation and parameters, solver and
    /// options, multistart, split protocol.
    pub fingerprint: String,
}

/// The cells of one data set and one formulation table: a config with several data sets
/// (`[data] path = [...]`) and several formulations (`[[formulation]]` tables) is one block
/// per (data set, formulation), data sets outer; a plain config is one block.
#[derive(Clone, Debug)]
pub struct Block {
    /// Index of its data set in `[data] path` (0 for one data set).
    pub dataset: usize,
    /// The data set's name (file stem, or "synthetic").
    pub dataset_name: String,
    /// The formulation's name.
    pub formulation: String,
    /// Its axes, outer first.
    pub axes: Vec<Axis>,
    /// Its first cell.
    pub first_cell: usize,
    /// Its number of cells.
    pub cells: usize,
}

/// A config read as a grid of cells.
#[derive(Clone, Debug)]
pub struct Experiment {
    /// The config file.
    pub file: PathBuf,
    /// The axes of the first block, outer first (a one-block config's axes).
    pub axes: Vec<Axis>,
    /// The blocks (one per data set and formulation table), in cell order.
    pub blocks: Vec<Block>,
    /// The cells (at least one).
    pub cells: Vec<Cell>,
    /// The split protocol.
    pub protocol: Protocol,
    /// The `[experiment]` table.
    pub engine: EngineConfig,
    /// Fingerprint of the whole config (data contents, not paths; not the time budget).
    pub fingerprint: String,
    /// Whether the config uses anything beyond one setting (axes, `[experiment]`, a split
    /// protocol other than holdout): such configs run on the engine.
    pub uses_engine: bool,
}

/// Keys of `[split]` that the engine reads (the rest is the one-setting [`super::SplitConfig`]).
const PROTOCOL_KEYS: [&str; 4] = ["protocol", "folds", "inner_folds", "inner_metric"];

impl Experiment {
    /// Reads a config file as a grid, with the built-in registry.
    pub fn load(path: &Path) -> Result<Self> {
        Self::load_with(path, Registry::shared_builtin())
    }

    /// [`Experiment::load`] with the formulations and backends of `registry`.
    pub fn load_with(path: &Path, registry: Arc<Registry>) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| GlassboxError::io(path, e))?;
        Self::parse_with(path, &text, registry)
    }

    /// Parses config text as a grid (see the module comment), with the built-in registry;
    /// `path` locates relative paths and names the file in errors.
    pub fn parse(path: &Path, text: &str) -> Result<Self> {
        Self::parse_with(path, text, Registry::shared_builtin())
    }

    /// [`Experiment::parse`] with the formulations and backends of `registry`.
    pub fn parse_with(path: &Path, text: &str, registry: Arc<Registry>) -> Result<Self> {
        let file = path.display().to_string();
        let bad = |m: String| GlassboxError::Config(format!("{file}: {m}"));
        let mut doc: toml::Table =
            toml::from_str(text).map_err(|e| bad(one_line(&e.to_string())))?;
        // [cluster] says how `glassbox run --executor` runs the grid (src/cluster/config.rs
        // reads it): not part of the experiment, nor of its fingerprint; like [experiment],
        // it makes the run an engine run.
        let had_engine_table = doc.contains_key("experiment") | doc.remove("cluster").is_some();
        let engine: EngineConfig = match doc.remove("experiment") {
            Some(v) => v.try_into().map_err(|e: toml::de::Error| {
                bad(format!("[experiment]: {}", one_line(&e.to_string())))
            })?,
            None => EngineConfig::default(),
        };
        if let Some(b) = engine.time_budget {
            if !(b.is_finite() && b > 0.0) {
                return Err(bad(format!(
                    "experiment.time_budget must be positive seconds, got {b}"
                )));
            }
        }
        let protocol = take_protocol(&mut doc).map_err(bad)?;
        let engine_fp = EngineConfig {
            time_budget: None,
            ..engine.clone()
        };
        let common = BlockCommon {
            path,
            registry: &registry,
            protocol_json: serde_json::to_string(&protocol).unwrap_or_default(),
            engine_json: serde_json::to_string(&engine_fp).unwrap_or_default(),
            protocol: &protocol,
        };
        // Several data sets: [data] path = [...]; several formulations: [[formulation]].
        let datasets: Vec<Option<toml::Value>> = match doc
            .get_mut("data")
            .and_then(|d| d.as_table_mut())
            .and_then(|d| match d.get("path") {
                Some(toml::Value::Array(_)) => d.remove("path"),
                _ => None,
            }) {
            Some(toml::Value::Array(list)) => non_empty(list, "data.path")
                .map_err(&bad)?
                .into_iter()
                .map(Some)
                .collect(),
            _ => vec![None],
        };
        let orders = formulation_key_orders(text);
        let formulations: Vec<(toml::Table, Vec<String>)> = match doc.remove("formulation") {
            Some(toml::Value::Array(list)) => {
                let list = non_empty(list, "[[formulation]]").map_err(&bad)?;
                list.into_iter()
                    .enumerate()
                    .map(|(i, v)| match v {
                        toml::Value::Table(t) => {
                            Ok((t, orders.get(i).cloned().unwrap_or_default()))
                        }
                        _ => Err(bad("[[formulation]] entries must be tables".into())),
                    })
                    .collect::<Result<_>>()?
            }
            Some(toml::Value::Table(t)) => vec![(t, orders.into_iter().next().unwrap_or_default())],
            Some(_) => return Err(bad("[formulation] must be a table".into())),
            None => Vec::new(),
        };
        // The results, the summary and the plots name a data set by its file's stem.
        let mut stems: std::collections::BTreeMap<String, String> = Default::default();
        for path in datasets.iter().flatten().filter_map(|p| p.as_str()) {
            let stem = Path::new(path)
                .file_stem()
                .map(|s| s.to_string_lossy().to_string())
                .unwrap_or_default();
            if let Some(first) = stems.insert(stem.clone(), path.to_string()) {
                return Err(bad(format!(
                    "data.path lists \"{first}\" and \"{path}\", both named '{stem}' in the \
                     results (a data set is named by its file's stem): rename one"
                )));
            }
        }
        let several = datasets.len() > 1 || formulations.len() > 1;
        if several {
            if formulations.len() > 1 && doc.contains_key("grid") {
                return Err(bad(
                    "[grid] applies to one formulation: with several [[formulation]] tables, \
                     write each one's axes in its table"
                        .into(),
                ));
            }
            if doc
                .get("data")
                .and_then(|d| d.as_table())
                .is_some_and(|d| d.contains_key("test_path"))
            {
                return Err(bad(
                    "data.test_path gives one fixed split of one data set: give one data.path"
                        .into(),
                ));
            }
        }
        let mut blocks = Vec::new();
        let mut cells = Vec::new();
        let mut block_fingerprints = Vec::new();
        for (d, dataset) in datasets.iter().enumerate() {
            for (table, order) in &formulations {
                let mut sub = doc.clone();
                if let Some(p) = dataset {
                    if let Some(toml::Value::Table(data)) = sub.get_mut("data") {
                        data.insert("path".into(), p.clone());
                    }
                }
                let mut table = table.clone();
                // A formulation's own solver (a MILP beside an NLP), or none for a learner
                // that uses none, in a config of several formulations.
                match table.remove("solver") {
                    Some(solver @ toml::Value::Table(_)) => {
                        sub.insert("solver".into(), solver);
                    }
                    Some(_) => {
                        return Err(bad(
                            "[[formulation]] solver must be a table, e.g. solver = { name = \"highs\" }"
                                .into(),
                        ))
                    }
                    None if several && !formulation_says(&registry, &table, |f| f.uses_solver()) => {
                        sub.remove("solver");
                    }
                    None => {}
                }
                // A seed list or range beside a formulation that solves once per split makes
                // cells that differ by nothing: dropped for it in a config of several
                // formulations (as [solver] is for a learner), refused in one of its own.
                if !formulation_says(&registry, &table, |f| f.random_starts()) {
                    if let Some(toml::Value::Table(ms)) = sub.get_mut("multistart") {
                        if matches!(
                            ms.get("seed"),
                            Some(toml::Value::Array(_) | toml::Value::Table(_))
                        ) {
                            // (Over several data sets the config is still this one
                            // formulation's.)
                            if formulations.len() <= 1 {
                                return Err(bad(format!(
                                    "[multistart] seed: '{}' solves once per split, so a list \
                                     or range of seeds makes cells that differ by nothing: give \
                                     one seed (or none)",
                                    table.get("name").and_then(|n| n.as_str()).unwrap_or("?")
                                )));
                            }
                            ms.remove("seed");
                        }
                    }
                }
                let fname = table
                    .get("name")
                    .and_then(|n| n.as_str())
                    .unwrap_or("?")
                    .to_string();
                sub.insert("formulation".into(), toml::Value::Table(table));
                let block = parse_block(&common, sub, order, cells.len()).map_err(|e| {
                    match (several, e) {
                        // Say which data set and formulation a message is about.
                        (true, GlassboxError::Config(m)) => bad(format!(
                            "data set {}, formulation '{fname}': {}",
                            dataset
                                .as_ref()
                                .or_else(|| doc.get("data").and_then(|d| d.get("path")))
                                .map_or("synthetic".to_string(), |p| p.to_string()),
                            m.strip_prefix(&format!("{file}: ")).unwrap_or(&m)
                        )),
                        (_, e) => e,
                    }
                })?;
                let block_index = blocks.len();
                let first = &block.cells[0].config;
                blocks.push(Block {
                    dataset: d,
                    dataset_name: first.dataset_name(),
                    formulation: first.formulation.name().to_string(),
                    axes: block.axes,
                    first_cell: cells.len(),
                    cells: block.cells.len(),
                });
                block_fingerprints.push(block.fingerprint);
                cells.extend(block.cells.into_iter().map(|c| Cell {
                    block: block_index,
                    ..c
                }));
            }
        }
        if blocks.is_empty() {
            // No [formulation]: the one-setting parser says what is missing.
            ExperimentConfig::parse_with(
                path,
                &toml::to_string(&doc).unwrap_or_default(),
                registry.clone(),
            )?;
            return Err(bad("[formulation] is missing".into()));
        }
        if cells.len() > 1_000_000 {
            return Err(bad(format!(
                "the grid has {} cells: more than a million",
                cells.len()
            )));
        }
        // One block: its own fingerprint (as before blocks existed, so earlier runs resume).
        let fingerprint = if blocks.len() == 1 {
            block_fingerprints.remove(0)
        } else {
            let parts: Vec<&str> = block_fingerprints.iter().map(|s| s.as_str()).collect();
            self::fingerprint(&parts)
        };
        // A path carries each cell's trees into the next; a tree of another depth cannot
        // start a solve, and the run would stop at the first cell of the next depth.
        let depth_axis = |b: &Block| {
            b.axes
                .iter()
                .any(|a| a.section == AxisSection::Formulation && a.key == "depth")
        };
        if engine.warm_path && blocks.iter().any(depth_axis) {
            return Err(bad(
                "[experiment] warm_path carries each cell's trees into the next, which cannot \
                 change the depth: remove the depth axis (one grid per depth) or set \
                 warm_path = false"
                    .into(),
            ));
        }
        let uses_engine = blocks.len() > 1
            || !blocks[0].axes.is_empty()
            || had_engine_table
            || protocol != Protocol::Holdout;
        Ok(Experiment {
            file: path.to_path_buf(),
            axes: blocks[0].axes.clone(),
            blocks,
            cells,
            protocol,
            engine,
            fingerprint,
            uses_engine,
        })
    }

    /// The distinct `what` of the blocks (formulation or data set names), joined by " + ".
    pub fn names(&self, what: impl Fn(&Block) -> &String) -> String {
        let mut names: Vec<&String> = Vec::new();
        for b in &self.blocks {
            if !names.contains(&what(b)) {
                names.push(what(b));
            }
        }
        names
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join(" + ")
    }

    /// The axes of `cell`'s block.
    pub fn axes_of(&self, cell: &Cell) -> &[Axis] {
        &self.blocks[cell.block].axes
    }

    /// The grid values of `cell`: axis label -> value (non-finite floats as strings).
    pub fn grid_values(&self, cell: &Cell) -> serde_json::Map<String, serde_json::Value> {
        self.axes_of(cell)
            .iter()
            .zip(&cell.coords)
            .map(|(a, &i)| (a.label().to_string(), toml_to_json(&a.values[i])))
            .collect()
    }

    /// The positions of `cell` on the axes: axis label -> index.
    pub fn grid_index(&self, cell: &Cell) -> std::collections::BTreeMap<String, usize> {
        self.axes_of(cell)
            .iter()
            .zip(&cell.coords)
            .map(|(a, &i)| (a.label().to_string(), i))
            .collect()
    }

    /// Cell `index`'s values as `key=value, ...` for messages and tables.
    pub fn describe(&self, cell: &Cell) -> String {
        let axes = describe_coords(self.axes_of(cell), &cell.coords);
        if self.blocks.len() == 1 {
            return axes;
        }
        let b = &self.blocks[cell.block];
        let what = format!("dataset={}, formulation={}", b.dataset_name, b.formulation);
        if axes.is_empty() {
            what
        } else {
            format!("{what}, {axes}")
        }
    }
}

/// What every block of a config shares.
struct BlockCommon<'a> {
    path: &'a Path,
    registry: &'a Arc<Registry>,
    protocol: &'a Protocol,
    protocol_json: String,
    engine_json: String,
}

/// The cells of one block (before they are numbered into the experiment).
struct ParsedBlock {
    axes: Vec<Axis>,
    cells: Vec<Cell>,
    fingerprint: String,
}

/// What the formulation a `[formulation]` table names says of itself, by `ask` (whether
/// it uses a solver, whether it takes random starts), on its default config: neither
/// depends on its keys. True where the table names none, or one that needs keys to parse.
fn formulation_says(
    registry: &Registry,
    table: &toml::Table,
    ask: impl Fn(&dyn super::Formulation) -> bool,
) -> bool {
    let Some(toml::Value::String(name)) = table.get("name") else {
        return true;
    };
    match registry
        .formulation(name)
        .map(|e| e.parse(toml::Table::new()))
    {
        Ok(Ok(formulation)) => ask(formulation.as_ref()),
        _ => true,
    }
}

/// One block of a config: `doc` with one data set and one formulation table (`order`: its
/// keys in the order of the text), its axes and cells numbered from `first`.
fn parse_block(
    common: &BlockCommon<'_>,
    mut doc: toml::Table,
    order: &[String],
    first: usize,
) -> Result<ParsedBlock> {
    let path = common.path;
    let file = path.display().to_string();
    let bad = |m: String| GlassboxError::Config(format!("{file}: {m}"));
    let mut axes = Vec::new();
    // Solver names and multistart seeds first: the path walks the formulation axes.
    if let Some(toml::Value::Table(solver)) = doc.get_mut("solver") {
        if let Some(toml::Value::Array(names)) = solver.get("name") {
            axes.push(Axis {
                key: "name".into(),
                section: AxisSection::Solver,
                values: non_empty(names.clone(), "[solver] name").map_err(&bad)?,
            });
            solver.remove("name");
        }
    }
    if let Some(toml::Value::Table(ms)) = doc.get_mut("multistart") {
        let seeds = match ms.get("seed") {
            Some(toml::Value::Array(seeds)) => {
                Some(non_empty(seeds.clone(), "[multistart] seed").map_err(&bad)?)
            }
            Some(toml::Value::Table(range)) => {
                Some(expand_range("[multistart] seed", range).map_err(&bad)?)
            }
            _ => None,
        };
        if let Some(values) = seeds {
            axes.push(Axis {
                key: "seed".into(),
                section: AxisSection::MultistartSeed,
                values,
            });
            ms.remove("seed");
        }
    }
    // Whether a formulation list is an axis is probed by parsing the config; with a solver
    // axis the probe names the first solver, as its first cell does.
    let first_solver = axes
        .iter()
        .find(|a| a.section == AxisSection::Solver)
        .map(|a| a.values[0].clone());
    let formulation_axes =
        take_formulation_axes(common, order, &mut doc, first_solver).map_err(&bad)?;
    axes.extend(formulation_axes);
    if *common.protocol != Protocol::Holdout {
        check_protocol(&doc, common.protocol).map_err(&bad)?;
    }

    let n_cells: usize = axes.iter().map(|a| a.values.len()).product();
    if n_cells > 1_000_000 {
        return Err(bad(format!(
            "the grid has {n_cells} cells: more than a million"
        )));
    }
    let dir = path.parent().unwrap_or(Path::new(".")).to_path_buf();
    let mut cells = Vec::with_capacity(n_cells);
    for i in 0..n_cells {
        let coords = coords_of(i, &axes);
        let mut cell_doc = doc.clone();
        for (axis, &i) in axes.iter().zip(&coords) {
            set_axis_value(&mut cell_doc, axis, axis.values[i].clone());
        }
        let cell_text = toml::to_string(&cell_doc).map_err(|e| bad(e.to_string()))?;
        let mut config = ExperimentConfig::parse_with(path, &cell_text, common.registry.clone())
            .map_err(|e| {
                if axes.is_empty() {
                    e
                } else {
                    e.within(&format!("grid cell {}", describe_coords(&axes, &coords)))
                }
            })?;
        // The split protocol (k-fold, nested) is taken out of [split] above: a k-fold fold
        // and a holdout split of as many rows are other problems. A holdout is what a
        // one-setting run does, whose fingerprint it keeps.
        if !matches!(common.protocol, Protocol::Holdout) {
            config.problem_fingerprint =
                fingerprint(&[&config.problem_fingerprint, &common.protocol_json]);
        }
        let canonical = canonical_doc(&cell_doc, &dir)?;
        let fingerprint = fingerprint(&[&canonical, &common.protocol_json, &common.engine_json]);
        cells.push(Cell {
            index: first + i,
            block: 0,
            coords,
            config,
            fingerprint,
        });
    }
    let mut whole = doc.clone();
    for axis in &axes {
        set_axis_value(&mut whole, axis, toml::Value::Array(axis.values.clone()));
    }
    let axes_json: Vec<String> = axes
        .iter()
        .map(|a| format!("{}={:?}", a.label(), a.values))
        .collect();
    let fingerprint = fingerprint(&[
        &canonical_doc(&whole, &dir)?,
        &axes_json.join(";"),
        &common.protocol_json,
        &common.engine_json,
    ]);
    Ok(ParsedBlock {
        axes,
        cells,
        fingerprint,
    })
}

/// Reads and removes the engine's keys of `[split]`.
fn take_protocol(doc: &mut toml::Table) -> std::result::Result<Protocol, String> {
    let mut keys = toml::Table::new();
    if let Some(toml::Value::Table(split)) = doc.get_mut("split") {
        for k in PROTOCOL_KEYS {
            if let Some(v) = split.remove(k) {
                keys.insert(k.to_string(), v);
            }
        }
    }
    let keys: ProtocolKeys = toml::Value::Table(keys)
        .try_into()
        .map_err(|e: toml::de::Error| format!("[split]: {}", one_line(&e.to_string())))?;
    let name = keys.protocol.as_deref().unwrap_or("holdout");
    let need_folds = |what: &str, v: Option<usize>| match v {
        Some(k) if k >= 2 => Ok(k),
        Some(k) => Err(format!("split.{what} must be at least 2, got {k}")),
        None => Err(format!(
            "split.protocol = \"{name}\" needs split.{what} (at least 2)"
        )),
    };
    let only = |what: &str, given: bool| {
        if given {
            Err(format!(
                "split.{what} does not apply to protocol \"{name}\""
            ))
        } else {
            Ok(())
        }
    };
    match name {
        "holdout" => {
            only("folds", keys.folds.is_some())?;
            only("inner_folds", keys.inner_folds.is_some())?;
            only("inner_metric", keys.inner_metric.is_some())?;
            Ok(Protocol::Holdout)
        }
        "kfold" => {
            only("inner_folds", keys.inner_folds.is_some())?;
            only("inner_metric", keys.inner_metric.is_some())?;
            Ok(Protocol::Kfold {
                folds: need_folds("folds", keys.folds)?,
            })
        }
        "nested" => Ok(Protocol::Nested {
            folds: need_folds("folds", keys.folds)?,
            inner_folds: need_folds("inner_folds", keys.inner_folds)?,
            metric: keys.inner_metric.unwrap_or(InnerMetric::Accuracy),
        }),
        other => Err(format!(
            "split.protocol '{other}' is unknown: use \"holdout\", \"kfold\" or \"nested\""
        )),
    }
}

/// Checks what a k-fold or nested protocol excludes: a test fraction, a fixed test file,
/// repeats for nested.
fn check_protocol(doc: &toml::Table, protocol: &Protocol) -> std::result::Result<(), String> {
    let split = doc.get("split").and_then(|s| s.as_table());
    if split.is_some_and(|s| s.contains_key("test_fraction")) {
        return Err("split.test_fraction applies to the holdout protocol only".into());
    }
    let data = doc.get("data").and_then(|s| s.as_table());
    if data.is_some_and(|d| d.contains_key("test_path")) {
        return Err("data.test_path gives one fixed split: use protocol = \"holdout\"".into());
    }
    if matches!(protocol, Protocol::Nested { .. })
        && split.is_some_and(|s| s.get("repeats").is_some_and(|r| r.as_integer() != Some(1)))
    {
        return Err("split.repeats must be 1 with protocol = \"nested\"".into());
    }
    Ok(())
}

fn non_empty(
    values: Vec<toml::Value>,
    what: &str,
) -> std::result::Result<Vec<toml::Value>, String> {
    if values.is_empty() {
        Err(format!("{what} is an empty list: give at least one value"))
    } else {
        Ok(values)
    }
}

/// Finds the axes of `[formulation]` (in the order the file writes them) and of `[grid]`,
/// removes them from `doc` and returns them.
fn take_formulation_axes(
    common: &BlockCommon<'_>,
    order: &[String],
    doc: &mut toml::Table,
    first_solver: Option<toml::Value>,
) -> std::result::Result<Vec<Axis>, String> {
    let grid = match doc.remove("grid") {
        Some(toml::Value::Table(t)) => t,
        Some(_) => return Err("[grid] must be a table of axes".into()),
        None => toml::Table::new(),
    };
    let Some(toml::Value::Table(formulation)) = doc.get("formulation").cloned() else {
        if grid.is_empty() {
            return Ok(Vec::new());
        }
        return Err("[grid] needs a [formulation] table".into());
    };
    let mut keys: Vec<&String> = formulation.keys().filter(|k| *k != "name").collect();
    keys.sort_by_key(|k| order.iter().position(|o| o == *k).unwrap_or(usize::MAX));
    let mut axes = Vec::new();
    for key in keys {
        let value = &formulation[key];
        let candidate = match value {
            toml::Value::Table(t) if t.contains_key("from") => Some(expand_range(key, t)?),
            toml::Value::Array(list) if !list.is_empty() => {
                // A list is the parameter's value when the formulation takes it as one
                // (rho, costs); otherwise each element is a value of an axis. Where another
                // section is at fault (an unknown solver option), every probe fails: an
                // element that fails as the config without the key does, where the list
                // fails otherwise, still makes an axis, so that the cells report that
                // error rather than this key's type.
                let alone = |v: Option<toml::Value>| {
                    let mut probe = doc.clone();
                    if let (Some(name), Some(toml::Value::Table(solver))) =
                        (&first_solver, probe.get_mut("solver"))
                    {
                        solver.insert("name".into(), name.clone());
                    }
                    let mut f = toml::Table::new();
                    f.insert("name".into(), formulation["name"].clone());
                    if let Some(v) = v {
                        f.insert(key.clone(), v);
                    }
                    probe.insert("formulation".into(), toml::Value::Table(f));
                    let text = toml::to_string(&probe).map_err(|e| e.to_string())?;
                    ExperimentConfig::parse_with(common.path, &text, common.registry.clone())
                        .map(|_| ())
                        .map_err(|e| e.to_string())
                };
                match (alone(Some(value.clone())), alone(Some(list[0].clone()))) {
                    (Err(_), Ok(())) => Some(list.clone()),
                    (Err(whole), Err(first)) => {
                        let without = alone(None).err();
                        (without.as_ref() == Some(&first) && without != Some(whole))
                            .then(|| list.clone())
                    }
                    _ => None,
                }
            }
            _ => None,
        };
        if let Some(values) = candidate {
            axes.push(Axis {
                key: key.clone(),
                section: AxisSection::Formulation,
                values,
            });
        }
    }
    for (key, value) in grid {
        if key == "name" {
            return Err(
                "[grid] cannot sweep the formulation's name: one formulation per config".into(),
            );
        }
        if formulation.contains_key(&key) {
            return Err(format!(
                "'{key}' is both in [formulation] and in [grid]: give it once"
            ));
        }
        let values = match &value {
            toml::Value::Table(t) if t.contains_key("from") => expand_range(&key, t)?,
            toml::Value::Array(list) => non_empty(list.clone(), &format!("grid.{key}"))?,
            _ => {
                return Err(format!(
                    "grid.{key} must be a list of values or a range {{ from, to, step }}"
                ))
            }
        };
        axes.push(Axis {
            key,
            section: AxisSection::Formulation,
            values,
        });
    }
    check_axes(&axes, &formulation)?;
    if let Some(toml::Value::Table(f)) = doc.get_mut("formulation") {
        for a in &axes {
            f.remove(&a.key);
        }
    }
    Ok(axes)
}

/// Refuses an axis that lists a value twice (two cells of one setting), and an axis on a
/// parameter that another key overrides (`lambda_local` beside `lambda_local_log2` or
/// `_fraction`, `_log2` beside `_fraction`: every cell would run the overriding value).
fn check_axes(axes: &[Axis], formulation: &toml::Table) -> std::result::Result<(), String> {
    // A value as written, with its type: 1 and 1.0 may be two settings (forest's
    // max_features reads an integer as a count, a float as a fraction).
    let written = |v: &toml::Value| match v {
        toml::Value::Float(x) => format!("float {}", x.to_bits()),
        other => format!("{} {other}", other.type_str()),
    };
    // The keys that override `key`, strongest last: plain < _log2 < _fraction.
    let overriding = |key: &str| -> Vec<String> {
        let (base, rank) = match (key.strip_suffix("_fraction"), key.strip_suffix("_log2")) {
            (Some(base), _) => (base, 2),
            (None, Some(base)) => (base, 1),
            (None, None) => (key, 0),
        };
        [format!("{base}_log2"), format!("{base}_fraction")]
            .into_iter()
            .skip(rank)
            .collect()
    };
    for axis in axes {
        let mut seen = BTreeSet::new();
        for v in &axis.values {
            if !seen.insert(written(v)) {
                return Err(format!(
                    "{}: the value {v} is listed twice; each value of an axis is one cell",
                    axis.key
                ));
            }
        }
        for stronger in overriding(&axis.key) {
            if formulation.contains_key(&stronger) || axes.iter().any(|a| a.key == stronger) {
                return Err(format!(
                    "{0} is an axis, but {stronger} overrides {0}: every cell would run \
                     {stronger}'s value; sweep one of them",
                    axis.key
                ));
            }
        }
    }
    Ok(())
}

/// The keys of `[formulation]` (or of each `[[formulation]]` table) in the order the text
/// writes them (document order decides which axis is outer; `toml::Table` sorts its keys).
fn formulation_key_orders(text: &str) -> Vec<Vec<String>> {
    let Ok(parsed) = toml::de::DeTable::parse(text) else {
        return Vec::new();
    };
    let Some((_, value)) = parsed
        .get_ref()
        .iter()
        .find(|(k, _)| k.get_ref().as_ref() == "formulation")
    else {
        return Vec::new();
    };
    let order = |table: &toml::de::DeTable<'_>| {
        let mut keys: Vec<(usize, String)> = table
            .iter()
            .map(|(k, _)| (k.span().start, k.get_ref().to_string()))
            .collect();
        keys.sort();
        keys.into_iter().map(|(_, k)| k).collect::<Vec<_>>()
    };
    match value.get_ref() {
        toml::de::DeValue::Table(table) => vec![order(table)],
        toml::de::DeValue::Array(list) => list
            .iter()
            .map(|v| match v.get_ref() {
                toml::de::DeValue::Table(t) => order(t),
                _ => Vec::new(),
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// Expands `{ from, to, step = 1, zero_first = false }` (see `docs/GRID_FORMAT.md`).
fn expand_range(key: &str, t: &toml::Table) -> std::result::Result<Vec<toml::Value>, String> {
    let err = |m: &str| format!("{key} = {{ from, to, step, zero_first }}: {m}");
    for k in t.keys() {
        if !["from", "to", "step", "zero_first"].contains(&k.as_str()) {
            return Err(err(&format!("unknown key '{k}'")));
        }
    }
    let num = |k: &str| -> std::result::Result<Option<toml::Value>, String> {
        match t.get(k) {
            None => Ok(None),
            Some(v @ (toml::Value::Integer(_) | toml::Value::Float(_))) => Ok(Some(v.clone())),
            Some(_) => Err(err(&format!("{k} must be a number"))),
        }
    };
    let (Some(from), Some(to)) = (num("from")?, num("to")?) else {
        return Err(err("needs both from and to"));
    };
    let step = num("step")?.unwrap_or(toml::Value::Integer(1));
    let zero_first = match t.get("zero_first") {
        None => false,
        Some(toml::Value::Boolean(b)) => *b,
        Some(_) => return Err(err("zero_first must be true or false")),
    };
    let as_f = |v: &toml::Value| {
        v.as_float()
            .or(v.as_integer().map(|i| i as f64))
            .unwrap_or(f64::NAN)
    };
    let (f, tt, s) = (as_f(&from), as_f(&to), as_f(&step));
    if !(s > 0.0 && s.is_finite() && f.is_finite() && tt.is_finite()) || tt < f {
        return Err(err("needs finite from <= to and step > 0"));
    }
    let n = ((tt - f) / s + 1e-9).floor() as usize + 1;
    if n > 100_000 {
        return Err(err(&format!("{n} values: too many")));
    }
    let integers = [&from, &to, &step].iter().all(|v| v.is_integer());
    let mut values: Vec<toml::Value> = (0..n)
        .map(|i| match (integers, &from, &step) {
            (true, toml::Value::Integer(a), toml::Value::Integer(b)) => {
                toml::Value::Integer(a + b * i as i64)
            }
            _ => toml::Value::Float(f + s * i as f64),
        })
        .collect();
    // A range from 0 has its zero already (a log2 range's zero is 2^-inf, never in it).
    if zero_first && (key.ends_with("_log2") || as_f(&values[0]) != 0.0) {
        values.insert(
            0,
            if key.ends_with("_log2") {
                toml::Value::Float(f64::NEG_INFINITY)
            } else if integers {
                toml::Value::Integer(0)
            } else {
                toml::Value::Float(0.0)
            },
        );
    }
    Ok(values)
}

/// The coordinates of cell `index` (row-major, the last axis fastest).
fn coords_of(mut index: usize, axes: &[Axis]) -> Vec<usize> {
    let mut coords = vec![0; axes.len()];
    for (c, axis) in coords.iter_mut().zip(axes).rev() {
        *c = index % axis.values.len();
        index /= axis.values.len();
    }
    coords
}

fn set_axis_value(doc: &mut toml::Table, axis: &Axis, value: toml::Value) {
    let section = match axis.section {
        AxisSection::Formulation => "formulation",
        AxisSection::Solver => "solver",
        AxisSection::MultistartSeed => "multistart",
    };
    let table = doc
        .entry(section.to_string())
        .or_insert_with(|| toml::Value::Table(toml::Table::new()));
    if let toml::Value::Table(t) = table {
        t.insert(axis.key.clone(), value);
    }
}

fn describe_coords(axes: &[Axis], coords: &[usize]) -> String {
    axes.iter()
        .zip(coords)
        .map(|(a, &i)| format!("{}={}", a.label(), a.values[i]))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A TOML value as JSON, non-finite floats as strings ("-inf", "inf", "nan").
pub fn toml_to_json(v: &toml::Value) -> serde_json::Value {
    match v {
        toml::Value::Float(f) if !f.is_finite() => serde_json::Value::String(format!("{f}")),
        toml::Value::Array(a) => serde_json::Value::Array(a.iter().map(toml_to_json).collect()),
        toml::Value::Table(t) => serde_json::Value::Object(
            t.iter()
                .map(|(k, v)| (k.clone(), toml_to_json(v)))
                .collect(),
        ),
        other => serde_json::to_value(other).unwrap_or(serde_json::Value::Null),
    }
}

/// The SHA-256 of a file's contents, cached for the process by path, length and modification
/// time: a config is parsed several times (its problem fingerprint, every grid cell's and the
/// grid's fingerprints), and a data file is read for it once.
pub(super) fn content_hash(path: &Path) -> Result<String> {
    use std::sync::Mutex;
    type Key = (PathBuf, u64, Option<std::time::SystemTime>);
    static CACHE: Mutex<Option<std::collections::HashMap<Key, String>>> = Mutex::new(None);
    let meta = std::fs::metadata(path).map_err(|e| GlassboxError::io(path, e))?;
    let key = (path.to_path_buf(), meta.len(), meta.modified().ok());
    let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    let cache = cache.get_or_insert_with(Default::default);
    if let Some(hash) = cache.get(&key) {
        return Ok(hash.clone());
    }
    let bytes = std::fs::read(path).map_err(|e| GlassboxError::io(path, e))?;
    let hash = format!("sha256:{:x}", Sha256::digest(&bytes));
    cache.insert(key, hash.clone());
    Ok(hash)
}

/// `doc` as canonical text, with the files it names (data, test data, warm-start model)
/// replaced by the hash of their contents: the same data under another path is the same
/// experiment, changed data is another one.
fn canonical_doc(doc: &toml::Table, dir: &Path) -> Result<String> {
    let mut doc = doc.clone();
    for (section, key) in [
        ("data", "path"),
        ("data", "test_path"),
        ("multistart", "warm_start"),
    ] {
        if let Some(toml::Value::Table(t)) = doc.get_mut(section) {
            if let Some(toml::Value::String(p)) = t.get(key) {
                let p = dir.join(p);
                t.insert(key.to_string(), toml::Value::String(content_hash(&p)?));
            }
        }
    }
    toml::to_string(&doc).map_err(|e| GlassboxError::Config(e.to_string()))
}

/// A short stable fingerprint (hex, 80 bits of SHA-256) of the parts, each length-prefixed.
pub fn fingerprint(parts: &[&str]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update((p.len() as u64).to_le_bytes());
        h.update(p.as_bytes());
    }
    format!("{:x}", h.finalize())[..20].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = r#"
[data]
synthetic = { rows = 60, features = 3, classes = 2, seed = 1 }
[formulation]
name = "sorct"
depth = 1
lambda_local_log2 = { from = -2, to = 0, zero_first = true }
rho = [0.1]
gamma = [32.0, 512.0]
[solver]
name = "ipopt"
"#;

    #[test]
    fn ranges_lists_and_document_order_make_the_cells() {
        let e = Experiment::parse(Path::new("x.toml"), BASE).unwrap();
        let labels: Vec<&str> = e.axes.iter().map(|a| a.label()).collect();
        // rho takes a list as its value; lambda_local_log2 is written before gamma.
        assert_eq!(labels, ["lambda_local_log2", "gamma"]);
        assert_eq!(e.cells.len(), 4 * 2);
        assert!(e.uses_engine);
        let first = &e.axes[0].values;
        assert_eq!(first[0].as_float(), Some(f64::NEG_INFINITY));
        assert_eq!(first[1].as_integer(), Some(-2));
        assert_eq!(first.len(), 4);
        // Cell 3 = (lambda index 1, gamma index 1).
        assert_eq!(e.cells[3].coords, vec![1, 1]);
        let cell = &e.cells[3].config;
        assert_eq!(cell.formulation.name(), "sorct");
        let f: crate::formulations::sorct::SorctConfig =
            cell.formulation_table.clone().try_into().unwrap();
        assert_eq!(f.lambda_local_log2, Some(-2.0));
        assert_eq!(f.gamma, 512.0);
        assert_eq!(f.rho, vec![0.1]);
        let fps: std::collections::BTreeSet<&String> =
            e.cells.iter().map(|c| &c.fingerprint).collect();
        assert_eq!(fps.len(), e.cells.len());
        assert_eq!(e.grid_values(&e.cells[0])["lambda_local_log2"], "-inf");
    }

    /// A `[multistart] seed` range is an axis as a list is (before, the range reached the
    /// config's parse and failed without naming the key); an inline table where a number
    /// belongs is an error naming its table and key.
    #[test]
    fn a_seed_range_is_an_axis_and_a_misplaced_range_is_named() {
        let range = format!("{BASE}[multistart]\nseed = {{ from = 3, to = 5 }}\n");
        let e = Experiment::parse(Path::new("x.toml"), &range).unwrap();
        assert_eq!(e.axes[0].label(), "multistart_seed");
        let seeds: Vec<u64> = e
            .cells
            .iter()
            .map(|c| c.config.multistart.seed)
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        assert_eq!(seeds, [3, 4, 5]);
        assert_eq!(e.cells.len(), 3 * 4 * 2);
        let list = range.replace("{ from = 3, to = 5 }", "[3, 4, 5]");
        let fps = |e: &Experiment| -> Vec<String> {
            e.cells.iter().map(|c| c.fingerprint.clone()).collect()
        };
        assert_eq!(
            fps(&e),
            fps(&Experiment::parse(Path::new("x.toml"), &list).unwrap())
        );
        let misplaced = format!("{BASE}[split]\nrepeats = {{ from = 1, to = 2 }}\n");
        let e = Experiment::parse(Path::new("x.toml"), &misplaced)
            .unwrap_err()
            .to_string();
        assert!(e.contains("[split] repeats: invalid type: map"), "{e}");
        assert_eq!(e.matches("config error").count(), 1, "{e}");
    }

    /// Two data sets whose files share a stem would share a name in the results: refused.
    #[test]
    fn two_data_sets_of_one_name_are_refused() {
        let same_stem = BASE.replace(
            "synthetic = { rows = 60, features = 3, classes = 2, seed = 1 }",
            "path = [\"d1/data.csv\", \"d2/data.csv\"]",
        );
        let e = Experiment::parse(Path::new("x.toml"), &same_stem)
            .unwrap_err()
            .to_string();
        assert!(e.contains("both named 'data' in the results"), "{e}");
        let distinct = same_stem
            .replace("d1/data.csv", "../shared/datasets/iris.csv")
            .replace("d2/data.csv", "../shared/datasets/wine.csv");
        assert_eq!(
            Experiment::parse(Path::new("x.toml"), &distinct)
                .unwrap()
                .blocks
                .len(),
            2
        );
    }

    /// A seed list makes no cells for a formulation that solves once per split: refused in
    /// a config of its own, dropped from its block beside an NLP formulation that takes it.
    #[test]
    fn a_seed_list_is_refused_or_dropped_where_no_random_start_takes_it() {
        let data = "[data]\nsynthetic = { rows = 60, features = 3, classes = 2, seed = 1 }\n";
        let seeds = "[multistart]\nseed = [1, 2]\n";
        let alone = format!("{data}[formulation]\nname = \"cart\"\ndepth = 1\n{seeds}");
        let e = Experiment::parse(Path::new("x.toml"), &alone)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("[multistart] seed: 'cart' solves once per split"),
            "{e}"
        );
        // Over several data sets the config is still the one formulation's.
        let two_sets = format!(
            "[data]\npath = [\"a.csv\", \"b.csv\"]\n[formulation]\nname = \"cart\"\n{seeds}"
        );
        let e = Experiment::parse(Path::new("x.toml"), &two_sets)
            .unwrap_err()
            .to_string();
        assert!(e.contains("solves once per split"), "{e}");
        let one_seed = alone.replace("[1, 2]", "3");
        assert_eq!(
            Experiment::parse(Path::new("x.toml"), &one_seed)
                .unwrap()
                .cells
                .len(),
            1
        );
        let beside = format!(
            "{data}[[formulation]]\nname = \"cart\"\ndepth = 1\n[[formulation]]\n\
             name = \"sorct\"\ndepth = 1\n[solver]\nname = \"ipopt\"\n{seeds}"
        );
        let e = Experiment::parse(Path::new("x.toml"), &beside).unwrap();
        let per_block: Vec<(String, usize)> = e
            .blocks
            .iter()
            .map(|b| (b.formulation.clone(), b.cells))
            .collect();
        assert_eq!(per_block, [("cart".into(), 1), ("sorct".into(), 2)]);
        // A block's error names its data set, here [data]'s synthetic one (it said "-").
        let e = Experiment::parse(
            Path::new("x.toml"),
            &beside.replace("depth = 1\n[[", "depth = 0.5\n[["),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("data set synthetic, formulation 'cart'"), "{e}");
    }

    /// A solver list multiplies with a formulation list (the list was taken as the
    /// parameter's value: the probe that tells an axis from a list-valued parameter parsed
    /// the config without a solver name, and failed either way).
    #[test]
    fn a_solver_list_and_a_formulation_list_make_their_product() {
        let both = BASE.replace("name = \"ipopt\"", "name = [\"ipopt\", \"lbfgs\"]");
        let e = Experiment::parse(Path::new("x.toml"), &both).unwrap();
        let labels: Vec<&str> = e.axes.iter().map(|a| a.label()).collect();
        assert_eq!(labels.len(), 3, "{labels:?}");
        assert!(labels.contains(&"gamma"), "{labels:?}");
        assert_eq!(e.cells.len(), 2 * 4 * 2);
        let solvers: std::collections::BTreeSet<&str> = e
            .cells
            .iter()
            .map(|c| c.config.solver.name.as_str())
            .collect();
        assert_eq!(solvers.len(), 2);
    }

    /// A bad [solver] with a formulation list is reported as the solver's error (the probe
    /// failed for the list and its first element alike, and the list was left as the
    /// parameter's value: "invalid type: sequence ... in `gamma`").
    #[test]
    fn a_bad_solver_beside_a_formulation_list_is_named() {
        for (solver, want) in [
            ("name = \"ipopt\"\nrelative_gap = 0.1", "relative_gap"),
            ("name = \"nosuch\"", "unknown solver 'nosuch'"),
        ] {
            let text = BASE.replace("name = \"ipopt\"", solver);
            let e = Experiment::parse(Path::new("x.toml"), &text)
                .unwrap_err()
                .to_string();
            assert!(e.contains(want) && !e.contains("sequence"), "{e}");
        }
    }

    #[test]
    fn a_plain_config_is_one_cell_and_the_fingerprint_ignores_the_budget() {
        let plain = BASE
            .replace(
                "lambda_local_log2 = { from = -2, to = 0, zero_first = true }",
                "",
            )
            .replace("gamma = [32.0, 512.0]", "");
        let e = Experiment::parse(Path::new("x.toml"), &plain).unwrap();
        assert_eq!(e.cells.len(), 1);
        assert!(!e.uses_engine);
        let a = Experiment::parse(
            Path::new("x.toml"),
            &format!("{plain}\n[experiment]\ntime_budget = 5.0\n"),
        )
        .unwrap();
        let b = Experiment::parse(
            Path::new("x.toml"),
            &format!("{plain}\n[experiment]\ntime_budget = 9.0\n"),
        )
        .unwrap();
        assert!(a.uses_engine);
        assert_eq!(a.fingerprint, b.fingerprint);
        // An [experiment] table with only a budget is the same experiment.
        assert_eq!(a.fingerprint, e.fingerprint);
    }

    #[test]
    fn bad_axes_and_protocols_are_errors_naming_the_key() {
        let cases = [
            ("lambda_local_log2 = { from = 1, to = 0 }", "from <= to"),
            (
                "lambda_local_log2 = { from = 0, to = 2, by = 1 }",
                "unknown key 'by'",
            ),
            ("depth = [\"a\", \"b\"]", "depth"),
            // Two cells of one setting.
            ("lambda_global = [2, 2]", "the value 2 is listed twice"),
            ("lambda_local = [0.5, 0.5]", "listed twice"),
            (
                "lambda_local_fraction = 0.5\nlambda_local_log2 = [-3, 0]",
                "lambda_local_fraction overrides lambda_local_log2",
            ),
            // An axis that another key overrides does nothing.
            (
                "lambda_local_log2 = -3\nlambda_local = [0.0, 0.5]",
                "lambda_local_log2 overrides lambda_local",
            ),
        ];
        for (line, want) in cases {
            let text = BASE.replace(
                "lambda_local_log2 = { from = -2, to = 0, zero_first = true }",
                line,
            );
            let e = Experiment::parse(Path::new("x.toml"), &text)
                .unwrap_err()
                .to_string();
            assert!(e.contains(want), "{e}");
        }
        // A range from 0 has its zero: zero_first adds none (a log2 range's zero is -inf).
        let text = BASE.replace(
            "lambda_local_log2 = { from = -2, to = 0, zero_first = true }",
            "lambda_local = { from = 0.0, to = 0.1, step = 0.1, zero_first = true }",
        );
        let grid = Experiment::parse(Path::new("x.toml"), &text).unwrap();
        assert_eq!(grid.cells.len(), 2 * 2, "{:?}", grid.cells.len());
        let text = BASE.replace("depth = 1", "depth = [1, 2]") + "[experiment]\nwarm_path = true\n";
        let e = Experiment::parse(Path::new("x.toml"), &text)
            .unwrap_err()
            .to_string();
        assert!(e.contains("remove the depth axis"), "{e}");
        let text = format!("{BASE}\n[split]\nprotocol = \"kfold\"\n");
        let e = Experiment::parse(Path::new("x.toml"), &text)
            .unwrap_err()
            .to_string();
        assert!(e.contains("split.folds"), "{e}");
        let text = format!("{BASE}\n[split]\nprotocol = \"nested\"\nfolds = 3\ninner_folds = 2\ninner_metric = \"auc\"\n");
        let e = Experiment::parse(Path::new("x.toml"), &text)
            .unwrap_err()
            .to_string();
        assert!(e.contains("inner_metric"), "{e}");
        let text = format!("{BASE}\n[split]\nprotocol = \"nested\"\nfolds = 3\ninner_folds = 2\ninner_metric = \"balanced_accuracy\"\n");
        let e = Experiment::parse(Path::new("x.toml"), &text).unwrap();
        assert!(matches!(
            e.protocol,
            Protocol::Nested {
                folds: 3,
                inner_folds: 2,
                metric: InnerMetric::BalancedAccuracy
            }
        ));
    }
}
