//! The config of a one-setting experiment: where the data come from, the split protocol,
//! the formulation (read through the formulation registry), the solver and its options, the
//! multistart and the decomposition. A grid config ([`super::grid`]) is a list of these, one
//! per cell.
//!
//! Depends on the core, the registry and the engine's view of a formulation.

use super::unit::Formulation;
use crate::data::{self, CsvOptions, DummyCoding, Table};
use crate::formulations::decomposition::DecompositionConfig;
use crate::registry::{self, Registry};
use crate::{GlassboxError, Result, SolveOptions};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Where the data come from.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DataConfig {
    /// A CSV file, relative to the config file's folder.
    pub path: Option<PathBuf>,
    /// A test file: `path` is then the training part and `test_path` the test part, one
    /// fixed split instead of the `[split]` protocol (e.g. to share splits with another
    /// tool). Both files are encoded together (same dummy levels); scaling is fitted on
    /// the training file only, as always.
    #[serde(default)]
    pub test_path: Option<PathBuf>,
    /// A generated data set instead of a file (the demo's).
    pub synthetic: Option<SyntheticConfig>,
    /// The target column.
    #[serde(default = "default_target")]
    pub target: String,
    /// Columns to treat as categorical (non-numeric columns are detected).
    #[serde(default)]
    pub categorical: Vec<String>,
    /// Which levels of a categorical column get a 0/1 feature: `"drop_first"` (the
    /// default) or `"all"` (one-hot). A config that does not set it keeps its fingerprint
    /// (fingerprints read the config's text), and it is serialized only when set.
    #[serde(default, skip_serializing_if = "DummyCoding::is_default")]
    pub dummies: DummyCoding,
    /// Drop rows with missing cells (`?` or empty) instead of failing.
    #[serde(default)]
    pub drop_missing: bool,
}

fn default_target() -> String {
    "target".to_string()
}

/// The seeded oblique classification set of [`data::synthetic_oblique`].
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SyntheticConfig {
    /// Rows.
    pub rows: usize,
    /// Features.
    pub features: usize,
    /// Classes (2 to 4).
    pub classes: usize,
    /// Seed.
    pub seed: u64,
}

/// The split protocol: repeated stratified holdout.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct SplitConfig {
    /// Fraction of rows in the test part.
    pub test_fraction: f64,
    /// Number of seeded splits.
    pub repeats: usize,
    /// Seed of the first split (split r uses seed + r).
    pub seed: u64,
}

impl Default for SplitConfig {
    fn default() -> Self {
        SplitConfig {
            test_fraction: 0.25,
            repeats: 1,
            seed: 1,
        }
    }
}

/// Multistart: n seeded random starts, plus optionally a start from a saved model.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct MultistartConfig {
    /// Number of random starts per split.
    pub starts: usize,
    /// Seed of the starts (start s of split r uses a generator seeded with
    /// `seed * 1_000_003 + r * 1_000 + s`).
    pub seed: u64,
    /// A saved model to start from (in addition to the random starts), relative to the
    /// config file's folder.
    pub warm_start: Option<PathBuf>,
}

impl Default for MultistartConfig {
    fn default() -> Self {
        MultistartConfig {
            starts: 1,
            seed: 1,
            warm_start: None,
        }
    }
}

/// The `[solver]` table: a backend name and its options.
#[derive(Clone, Debug)]
pub struct SolverConfig {
    /// Registry name.
    pub name: String,
    /// Options.
    pub options: SolveOptions,
}

/// A whole experiment config.
#[derive(Clone)]
pub struct ExperimentConfig {
    /// The config file (for relative paths and messages).
    pub file: PathBuf,
    /// Data source.
    pub data: DataConfig,
    /// Split protocol.
    pub split: SplitConfig,
    /// Formulation and parameters, as the formulation registry read them.
    pub formulation: Arc<dyn Formulation>,
    /// The `[formulation]` table as written (without `name`).
    pub formulation_table: toml::Table,
    /// The registry the config was read with: its backends create the solvers.
    pub registry: Arc<Registry>,
    /// Backend and options.
    pub solver: SolverConfig,
    /// Multistart.
    pub multistart: MultistartConfig,
    /// Node-based decomposition of each solve (`[decomposition]`), for tree formulations.
    pub decomposition: Option<DecompositionConfig>,
    /// The fingerprint of the problem the config poses, whatever solves it
    /// (the function `problem_fingerprint` below); a grid's cell adds its split protocol.
    pub problem_fingerprint: String,
}

impl std::fmt::Debug for ExperimentConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExperimentConfig")
            .field("file", &self.file)
            .field("data", &self.data)
            .field("split", &self.split)
            .field("formulation", &self.formulation.name())
            .field("formulation_table", &self.formulation_table)
            .field("solver", &self.solver)
            .field("multistart", &self.multistart)
            .field("decomposition", &self.decomposition)
            .finish()
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    data: DataConfig,
    #[serde(default)]
    split: SplitConfig,
    formulation: toml::Table,
    #[serde(default)]
    solver: Option<toml::Table>,
    #[serde(default)]
    multistart: MultistartConfig,
    #[serde(default)]
    decomposition: Option<DecompositionConfig>,
}

impl ExperimentConfig {
    /// Reads and checks a config file with the built-in registry: unknown keys, unknown
    /// formulations and solvers, ill-typed options are errors naming the key.
    pub fn load(path: &Path) -> Result<Self> {
        Self::load_with(path, Registry::shared_builtin())
    }

    /// [`ExperimentConfig::load`] with the formulations and backends of `registry`.
    pub fn load_with(path: &Path, registry: Arc<Registry>) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| GlassboxError::io(path, e))?;
        Self::parse_with(path, &text, registry)
    }

    /// Parses config text with the built-in registry; `path` locates relative paths and
    /// names the file in errors.
    pub fn parse(path: &Path, text: &str) -> Result<Self> {
        Self::parse_with(path, text, Registry::shared_builtin())
    }

    /// [`ExperimentConfig::parse`] with the formulations and backends of `registry`.
    pub fn parse_with(path: &Path, text: &str, registry: Arc<Registry>) -> Result<Self> {
        let file = path.display().to_string();
        let bad = |m: String| GlassboxError::Config(format!("{file}: {m}"));
        let raw: RawConfig = toml::from_str(text).map_err(|e| bad(in_table(text, &e)))?;
        let mut formulation = raw.formulation;
        let name = take_name(&mut formulation)
            .ok_or_else(|| bad("[formulation] needs a name, e.g. name = \"sorct\"".into()))?;
        // The registry's error is a config error already: named by the file, not wrapped.
        let entry = registry.formulation(&name).map_err(|e| match e {
            GlassboxError::Config(m) => bad(m),
            other => bad(other.to_string()),
        })?;
        // A solver the formulation's kind takes, for the messages below.
        let example = match entry.info.kind {
            "milp" => "highs",
            _ => "ipopt",
        };
        let formulation_table = formulation.clone();
        let formulation = entry
            .parse(formulation)
            .map_err(|e| bad(format!("[formulation]: {}", one_line(&e))))?;
        let (solver_name, options) = match (raw.solver, formulation.uses_solver()) {
            (Some(mut solver), true) => {
                let solver_name = take_name(&mut solver).ok_or_else(|| {
                    bad(format!("[solver] needs a name, e.g. name = \"{example}\""))
                })?;
                let options: SolveOptions = solver.try_into().map_err(|e: toml::de::Error| {
                    bad(format!("[solver]: {}", one_line(&e.to_string())))
                })?;
                let entry = registry.backend(&solver_name)?;
                registry::validate_options(entry, &options)?;
                (solver_name, options)
            }
            (None, true) => {
                return Err(bad(format!(
                    "a [solver] table is needed, e.g. [solver] name = \"{example}\""
                )))
            }
            (Some(_), false) => {
                return Err(bad(format!(
                    "'{}' is a heuristic learner and uses no solver: remove the [solver] table",
                    formulation.name()
                )))
            }
            (None, false) => ("none".to_string(), SolveOptions::default()),
        };
        let split = raw.split;
        if !(split.test_fraction > 0.0 && split.test_fraction < 1.0) {
            return Err(bad(format!(
                "split.test_fraction must be in (0, 1), got {}",
                split.test_fraction
            )));
        }
        if raw.data.test_path.is_some() && (split.repeats != 1 || raw.data.synthetic.is_some()) {
            return Err(bad("data.test_path gives one fixed split: set split.repeats = 1 (and use data.path, not synthetic)".into()));
        }
        if let (Some(train), Some(test)) = (&raw.data.path, &raw.data.test_path) {
            if train == test {
                return Err(bad(format!(
                    "data.test_path is data.path ({}): the test rows would be the training \
                     rows; give a file of other rows, or leave test_path out for random splits",
                    test.display()
                )));
            }
        }
        if split.repeats == 0 {
            return Err(bad("split.repeats must be at least 1".into()));
        }
        if raw.multistart.starts == 0 && raw.multistart.warm_start.is_none() {
            return Err(bad(
                "multistart.starts must be at least 1 (or give multistart.warm_start)".into(),
            ));
        }
        if raw.data.path.is_some() == raw.data.synthetic.is_some() {
            return Err(bad(
                "[data] needs exactly one of path = \"file.csv\" or synthetic = { ... }".into(),
            ));
        }
        if let Some(d) = &raw.decomposition {
            d.check().map_err(|e| e.within(&file))?;
            if !formulation.decomposable() {
                return Err(bad(format!(
                    "[decomposition] needs a tree formulation whose problem has tree nodes to \
                     decompose (such as sorct or l0tree), not '{name}'"
                )));
            }
        }
        let problem_fingerprint = problem_fingerprint(
            path,
            &raw.data,
            &split,
            &registry,
            &name,
            &formulation_table,
        );
        Ok(ExperimentConfig {
            problem_fingerprint,
            file: path.to_path_buf(),
            data: raw.data,
            split,
            formulation,
            formulation_table,
            registry,
            solver: SolverConfig {
                name: solver_name,
                options,
            },
            multistart: raw.multistart,
            decomposition: raw.decomposition,
        })
    }

    /// A path from the config, relative to the config file's folder.
    pub fn resolve(&self, relative: &Path) -> PathBuf {
        if relative.is_absolute() {
            relative.to_path_buf()
        } else {
            self.file.parent().unwrap_or(Path::new(".")).join(relative)
        }
    }

    /// Loads the data set the config names (with `data.test_path`, the training rows
    /// followed by the test rows).
    pub fn load_table(&self) -> Result<Table> {
        Ok(self.load_data()?.0)
    }

    /// Loads the data set and, with `data.test_path`, the number of training rows.
    pub fn load_data(&self) -> Result<(Table, Option<usize>)> {
        if let Some(s) = &self.data.synthetic {
            if !(2..=4).contains(&s.classes) || s.rows < 4 * s.classes || s.features == 0 {
                return Err(GlassboxError::Config(format!(
                    "{}: data.synthetic needs 2 to 4 classes, at least 1 feature and 4 rows per class",
                    self.file.display()
                )));
            }
            return Ok((
                data::synthetic_oblique(s.rows, s.features, s.classes, s.seed),
                None,
            ));
        }
        let path = self.resolve(self.data.path.as_deref().unwrap_or(Path::new("")));
        let options = CsvOptions {
            target: self.data.target.clone(),
            categorical: self.data.categorical.clone(),
            drop_missing: self.data.drop_missing,
            ..CsvOptions::default()
        };
        let table = Table::from_csv(&path, &options)?;
        match &self.data.test_path {
            Some(test) => {
                let n_train = table.n_rows();
                Ok((
                    table.append(&Table::from_csv(&self.resolve(test), &options)?)?,
                    Some(n_train),
                ))
            }
            None => Ok((table, None)),
        }
    }

    /// The (train, test) row indices of every split of `n` rows: the fixed split of
    /// `data.test_path` (its first `n_train` rows train), else `protocol(seed)` for each
    /// repeat of `[split]`.
    pub fn splits(
        &self,
        n: usize,
        fixed_train: Option<usize>,
        protocol: impl Fn(u64) -> Result<(Vec<usize>, Vec<usize>)>,
    ) -> Result<Vec<(Vec<usize>, Vec<usize>)>> {
        if let Some(n_train) = fixed_train {
            return Ok(vec![((0..n_train).collect(), (n_train..n).collect())]);
        }
        (0..self.split.repeats)
            .map(|r| protocol(self.split.seed + r as u64))
            .collect()
    }

    /// The data set's name for results: the file stem or the synthetic name.
    pub fn dataset_name(&self) -> String {
        match &self.data.path {
            Some(p) => p
                .file_stem()
                .map(|s| s.to_string_lossy().to_string())
                .unwrap_or_default(),
            None => "synthetic".to_string(),
        }
    }
}

/// The fingerprint of the problem a config poses, whatever solves it, for `glassbox compare`:
/// the data (the files' contents, the target, categorical columns, dummies, missing rows), the
/// split's test fraction (split index and seed are in compare's key, so `repeats` is not part
/// of it), and the formulation with every parameter. A parameter left out counts at its
/// printed default where that is a value; numbers count by value (`1` = `1.0`), a `*_log2`
/// key as its linear key (`lambda_local_log2 = -3` = `lambda_local = 0.125`), an empty list
/// as left out. The solver, the starts, the decomposition and the engine's settings are not
/// part of it.
fn problem_fingerprint(
    path: &Path,
    data: &DataConfig,
    split: &SplitConfig,
    registry: &Registry,
    formulation: &str,
    table: &toml::Table,
) -> String {
    let dir = path.parent().unwrap_or(Path::new("."));
    // A file that cannot be read counts by its path (the run reports it).
    let contents = |p: &Option<PathBuf>| {
        p.as_ref().map(|p| {
            let p = dir.join(p);
            super::grid::content_hash(&p).unwrap_or_else(|_| p.display().to_string())
        })
    };
    let mut categorical = data.categorical.clone();
    categorical.sort();
    let data_part = serde_json::json!({
        "path": contents(&data.path),
        "test_path": contents(&data.test_path),
        "synthetic": data.synthetic,
        "target": data.target,
        "categorical": categorical,
        "dummies": data.dummies,
        "drop_missing": data.drop_missing,
    });
    let mut parameters = std::collections::BTreeMap::new();
    let defaults = registry
        .formulation(formulation)
        .map(|entry| entry.printed_defaults())
        .unwrap_or_default();
    for (key, value) in defaults.into_iter().chain(table.clone()) {
        let (key, value) = match (key.strip_suffix("_log2"), numeric(&value)) {
            (Some(linear), Some(v)) => (linear.to_string(), toml::Value::Float(2f64.powf(v))),
            _ => (key, value),
        };
        match by_value(value) {
            Some(value) => parameters.insert(key, value),
            None => parameters.remove(&key),
        };
    }
    super::grid::fingerprint(&[
        &data_part.to_string(),
        &format!("{:?}", split.test_fraction),
        formulation,
        &serde_json::to_string(&parameters).unwrap_or_default(),
    ])
}

fn numeric(value: &toml::Value) -> Option<f64> {
    match value {
        toml::Value::Integer(i) => Some(*i as f64),
        toml::Value::Float(x) => Some(*x),
        _ => None,
    }
}

/// A parameter's value as the fingerprint counts it: integers as floats (inside lists and
/// tables too), an empty list as no value.
fn by_value(value: toml::Value) -> Option<toml::Value> {
    match value {
        toml::Value::Integer(i) => Some(toml::Value::Float(i as f64)),
        toml::Value::Array(a) if a.is_empty() => None,
        toml::Value::Array(a) => Some(toml::Value::Array(
            a.into_iter()
                .map(|v| by_value(v).unwrap_or(toml::Value::Array(Vec::new())))
                .collect(),
        )),
        toml::Value::Table(t) => Some(toml::Value::Table(
            t.into_iter()
                .filter_map(|(k, v)| by_value(v).map(|v| (k, v)))
                .collect(),
        )),
        other => Some(other),
    }
}

fn take_name(table: &mut toml::Table) -> Option<String> {
    match table.remove("name") {
        Some(toml::Value::String(s)) => Some(s),
        _ => None,
    }
}

pub(crate) fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A TOML error as "[table]: message", the table found above the error's position in
/// `text`. The text parsed here is a cell of the grid written back as TOML
/// (`experiment/grid.rs`), so toml's line numbers would point into that, not into the
/// user's file (whose syntax errors the grid's own parse reports with their lines).
fn in_table(text: &str, e: &toml::de::Error) -> String {
    let message = one_line(e.message());
    let is_header = |line: &str| line.trim_start().starts_with('[');
    let table = e.span().and_then(|span| {
        let before = text.get(..span.start)?;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        // An error on a header line is about the table's own name: a key of the root, or,
        // for `[a.b]` (how a cell writes back an inline table such as `b = { from, to }`),
        // key b of [a].
        let line = text[line_start..].lines().next().unwrap_or("");
        if is_header(line) {
            let name = line.trim().trim_start_matches('[').trim_end_matches(']');
            return name
                .rsplit_once('.')
                .map(|(table, key)| format!("[{table}] {key}"));
        }
        before[..line_start]
            .lines()
            .rev()
            .find(|line| is_header(line))
            .map(|line| line.trim().to_string())
    });
    match table {
        Some(table) => format!("{table}: {message}"),
        None => message,
    }
}

#[cfg(test)]
mod tests {
    use super::ExperimentConfig;

    /// The fingerprint of a config in `dir` with `data`'s `[data]` path, `split`'s and
    /// `formulation`'s table bodies and `solver`'s name.
    fn fingerprint(
        dir: &std::path::Path,
        data: &str,
        split: &str,
        formulation: &str,
        solver: &str,
    ) -> String {
        let text = format!(
            "[data]\npath = \"{data}\"\n[split]\n{split}\n[formulation]\n{formulation}\n\
             [solver]\nname = \"{solver}\"\n"
        );
        ExperimentConfig::parse(&dir.join("c.toml"), &text)
            .unwrap()
            .problem_fingerprint
    }

    /// The same problem agrees however it is written or solved; another problem does not.
    #[test]
    fn the_problem_fingerprint_counts_the_problem_not_its_spelling() {
        let dir = tempfile::tempdir().unwrap();
        let rows = "x,target\n1,a\n2,b\n3,a\n4,b\n5,a\n6,b\n7,a\n8,b\n";
        std::fs::write(dir.path().join("d.csv"), rows).unwrap();
        std::fs::write(dir.path().join("copy.csv"), rows).unwrap();
        std::fs::write(dir.path().join("other.csv"), rows.replace("8,b", "9,b")).unwrap();
        let absolute = dir.path().join("d.csv").display().to_string();
        let base = fingerprint(
            dir.path(),
            "d.csv",
            "repeats = 10",
            "name = \"oct\"\ndepth = 1",
            "highs",
        );
        let same = [
            fingerprint(
                dir.path(),
                &absolute,
                "repeats = 3",
                "name = \"oct\"\ndepth = 1",
                "dp",
            ),
            fingerprint(
                dir.path(),
                "copy.csv",
                "repeats = 10",
                "name = \"oct\"\ndepth = 1",
                "cbc",
            ),
            fingerprint(
                dir.path(),
                "d.csv",
                "repeats = 10\ntest_fraction = 0.25",
                "name = \"oct\"\nmin_leaf = 1\ndepth = 1",
                "highs",
            ),
        ];
        for (i, f) in same.iter().enumerate() {
            assert_eq!(f, &base, "case {i}");
        }
        let other = [
            fingerprint(
                dir.path(),
                "other.csv",
                "repeats = 10",
                "name = \"oct\"\ndepth = 1",
                "highs",
            ),
            fingerprint(
                dir.path(),
                "d.csv",
                "test_fraction = 0.5",
                "name = \"oct\"\ndepth = 1",
                "highs",
            ),
            fingerprint(
                dir.path(),
                "d.csv",
                "repeats = 10",
                "name = \"oct\"\ndepth = 1\nmin_leaf = 2",
                "highs",
            ),
        ];
        for (i, f) in other.iter().enumerate() {
            assert_ne!(f, &base, "case {i}");
        }
        // S-ORCT: lambda_local = 0 left out or written, log2 or linear, rho = [] or left out.
        let sorct = |body: &str| {
            fingerprint(
                dir.path(),
                "d.csv",
                "",
                &format!("name = \"sorct\"\ndepth = 1\n{body}"),
                "ipopt",
            )
        };
        assert_eq!(
            sorct(""),
            sorct("lambda_local = 0.0\nrho = []\ngamma = 512")
        );
        assert_eq!(
            sorct("lambda_local_log2 = -3"),
            sorct("lambda_local = 0.125")
        );
        assert_ne!(sorct(""), sorct("lambda_local = 0.125"));
    }

    /// A bad `[decomposition]` value is one config error naming the file and the table
    /// (it read "config error: FILE: config error: ...").
    #[test]
    fn a_decomposition_error_is_said_once() {
        let text = "[data]\nsynthetic = { rows = 60, features = 3, classes = 2, seed = 1 }\n\
                    [formulation]\nname = \"sorct\"\ndepth = 1\n[solver]\nname = \"lbfgs\"\n\
                    [decomposition]\nmacro_iterations = 0\n";
        let e = ExperimentConfig::parse(std::path::Path::new("d.toml"), text)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("config error: d.toml: [decomposition]"),
            "{e}"
        );
        assert_eq!(e.matches("config error").count(), 1, "{e}");
    }
}
