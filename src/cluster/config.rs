//! The `[cluster]` table of an experiment config: how `glassbox run --executor slurm` asks
//! SLURM for each array task (time, CPUs, memory, partition, account, extra `#SBATCH` lines,
//! shell lines that set up the environment) and how it sizes and stops the tasks. Options
//! given on the command line (`--cluster KEY=VALUE`) override the file's keys.
//!
//! The engine ignores the table (`src/experiment/grid.rs` removes it before parsing the grid):
//! where a grid runs is not part of what it computes, nor of its fingerprint.
//!
//! Depends on nothing of glassbox but its error type.

use crate::{GlassboxError, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The `[cluster]` table (every key optional).
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct ClusterConfig {
    /// Number of shards (array tasks); `--shards` overrides it. Without either, the shards
    /// are sized from `seconds_per_cell` and `time` ([`super::sizing`]).
    pub shards: Option<usize>,
    /// Time limit of each array task (`sbatch --time`), in SLURM's formats: `minutes`,
    /// `minutes:seconds`, `hours:minutes:seconds`, `days-hours`, `days-hours:minutes`,
    /// `days-hours:minutes:seconds`. Default: the partition's.
    pub time: Option<String>,
    /// CPUs per task (`--cpus-per-task`); the task's engine runs this many chains at once
    /// (IPOPT and CBC still solve one problem at a time per process). Default 1.
    pub cpus: Option<usize>,
    /// Memory per task (`--mem`), e.g. `"4G"`. Default: the partition's.
    pub memory: Option<String>,
    /// Partition (`--partition`).
    pub partition: Option<String>,
    /// Account to charge (`--account`).
    pub account: Option<String>,
    /// Array throttle: at most this many tasks run at once (`--array=...%N`).
    pub max_running: Option<usize>,
    /// The jobs' name (`--job-name`); default `glassbox-<config name>`.
    pub job_name: Option<String>,
    /// Further `#SBATCH` options, one per entry, e.g. `"--qos=long"` or `"--constraint=avx2"`.
    pub sbatch: Vec<String>,
    /// Shell lines each job runs before glassbox, e.g. `"module load ipopt"`.
    pub setup: Vec<String>,
    /// The glassbox binary the jobs run (on a filesystem the nodes see). Default: the binary
    /// that submits.
    pub binary: Option<PathBuf>,
    /// Seconds before its time limit at which a task stops and requeues itself (SLURM sends
    /// it SIGUSR1 then: `--signal=B:USR1@SECONDS`); 0 turns this off. Default: the longest
    /// solver time limit of the grid plus 60 s (a running solve finishes first), at most half
    /// the task's time.
    pub stop_before_limit: Option<u64>,
    /// Estimated seconds per cell-split (one cell on one split, all its starts), to size the
    /// shards when `--shards` is not given; `glassbox status` measures it on a run.
    pub seconds_per_cell: Option<f64>,
    /// Time limit of the merge job (default 1:00:00).
    pub merge_time: Option<String>,
}

impl ClusterConfig {
    /// The `[cluster]` table of the config file `path` (default when absent), with `overrides`
    /// (`KEY=VALUE`, the value in TOML syntax or a bare string) applied on top.
    pub fn load(path: &Path, overrides: &[String]) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| GlassboxError::io(path, e))?;
        let doc: toml::Table = toml::from_str(&text)
            .map_err(|e| GlassboxError::Config(format!("{}: {}", path.display(), one_line(&e))))?;
        let mut table = match doc.get("cluster") {
            Some(toml::Value::Table(t)) => t.clone(),
            Some(_) => {
                return Err(GlassboxError::Config(format!(
                    "{}: [cluster] must be a table",
                    path.display()
                )))
            }
            None => toml::Table::new(),
        };
        for o in overrides {
            let (key, value) = parse_override(o)?;
            table.insert(key, value);
        }
        let config: ClusterConfig = toml::Value::Table(table).try_into().map_err(|e| {
            GlassboxError::Config(format!(
                "{}: [cluster] (with --cluster options): {}",
                path.display(),
                one_line(&e)
            ))
        })?;
        config
            .check()
            .map_err(|m| GlassboxError::Config(format!("{}: [cluster]: {m}", path.display())))?;
        Ok(config)
    }

    /// Checks values that serde's types do not: positive counts, SLURM times, lines that
    /// would break the job script.
    fn check(&self) -> std::result::Result<(), String> {
        for (key, v) in [
            ("shards", self.shards),
            ("cpus", self.cpus),
            ("max_running", self.max_running),
        ] {
            if v == Some(0) {
                return Err(format!("{key} must be at least 1"));
            }
        }
        for (key, v) in [("time", &self.time), ("merge_time", &self.merge_time)] {
            if let Some(t) = v {
                slurm_seconds(t).map_err(|m| format!("{key}: {m}"))?;
            }
        }
        if let Some(s) = self.seconds_per_cell {
            if !(s.is_finite() && s > 0.0) {
                return Err(format!(
                    "seconds_per_cell must be positive seconds, got {s}"
                ));
            }
        }
        let single_line = |key: &str, v: &str| {
            if v.contains('\n') || v.contains('\r') {
                Err(format!("{key} = {v:?}: one line only"))
            } else {
                Ok(())
            }
        };
        for (key, v) in [
            ("memory", &self.memory),
            ("partition", &self.partition),
            ("account", &self.account),
            ("job_name", &self.job_name),
        ] {
            if let Some(v) = v {
                single_line(key, v)?;
                if v.is_empty() || v.contains(char::is_whitespace) {
                    return Err(format!("{key} = {v:?}: give one word"));
                }
            }
        }
        for line in self.sbatch.iter() {
            single_line("sbatch", line)?;
            if !line.trim_start_matches("#SBATCH").trim().starts_with('-') {
                return Err(format!(
                    "sbatch = {line:?}: give sbatch options, e.g. \"--qos=long\""
                ));
            }
        }
        for line in &self.setup {
            single_line("setup", line)?;
        }
        Ok(())
    }

    /// The task time limit in seconds (none: the partition's default, unknown here).
    pub fn time_seconds(&self) -> Option<u64> {
        self.time
            .as_deref()
            .and_then(|t| slurm_seconds(t).ok().flatten())
    }

    /// Seconds before the time limit at which a task stops and requeues itself (0: never),
    /// given the longest solver time limit of the grid (see [`Self::stop_before_limit`]).
    pub fn stop_before_limit(&self, longest_solve: Option<f64>) -> u64 {
        if let Some(s) = self.stop_before_limit {
            return s;
        }
        let wanted = longest_solve.map_or(120, |t| t.ceil() as u64 + 60);
        match self.time_seconds() {
            Some(limit) => wanted.min(limit / 2),
            None => wanted,
        }
    }
}

/// The keys of `[cluster]` whose values are strings: `--cluster` takes their text as it is
/// (`time=90` is 90 minutes, `job_name=123` a name), not as a TOML number.
const STRING_KEYS: [&str; 7] = [
    "time",
    "memory",
    "partition",
    "account",
    "job_name",
    "binary",
    "merge_time",
];

/// `KEY=VALUE` of `--cluster`: the value read as a TOML value (`cpus=2`,
/// `sbatch=["--qos=long"]`), else as a string (`time=02:00:00`); for a string-typed key, a
/// TOML string (`job_name="a"`) or else the text.
fn parse_override(text: &str) -> Result<(String, toml::Value)> {
    let (key, value) = text.split_once('=').ok_or_else(|| {
        GlassboxError::Config(format!(
            "--cluster '{text}': write KEY=VALUE, e.g. --cluster time=02:00:00"
        ))
    })?;
    let key = key.trim();
    if key.is_empty() {
        return Err(GlassboxError::Config(format!(
            "--cluster '{text}': the key is missing"
        )));
    }
    let value = value.trim();
    let parsed = toml::from_str::<toml::Table>(&format!("v = {value}"))
        .ok()
        .and_then(|mut t| t.remove("v"))
        .filter(|v| v.is_str() || !STRING_KEYS.contains(&key))
        .unwrap_or_else(|| toml::Value::String(value.to_string()));
    Ok((key.to_string(), parsed))
}

/// Seconds of a SLURM time (`--time`'s formats, see [`ClusterConfig::time`]); none for
/// `UNLIMITED` / `INFINITE`.
pub fn slurm_seconds(text: &str) -> std::result::Result<Option<u64>, String> {
    let t = text.trim();
    if t.eq_ignore_ascii_case("unlimited") || t.eq_ignore_ascii_case("infinite") {
        return Ok(None);
    }
    let bad = || {
        format!(
            "'{text}' is not a SLURM time: write minutes, minutes:seconds, hours:minutes:seconds, \
             days-hours, days-hours:minutes or days-hours:minutes:seconds"
        )
    };
    let number = |s: &str| -> std::result::Result<u64, String> {
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        s.parse::<u64>().map_err(|_| bad())
    };
    let (days, rest) = match t.split_once('-') {
        Some((d, rest)) => (Some(number(d)?), rest),
        None => (None, t),
    };
    let parts: Vec<u64> = rest
        .split(':')
        .map(number)
        .collect::<std::result::Result<_, _>>()?;
    let seconds = match (days, parts.as_slice()) {
        (None, [m]) => m * 60,
        (None, [m, s]) => m * 60 + s,
        (None, [h, m, s]) => h * 3600 + m * 60 + s,
        (Some(d), [h]) => d * 86400 + h * 3600,
        (Some(d), [h, m]) => d * 86400 + h * 3600 + m * 60,
        (Some(d), [h, m, s]) => d * 86400 + h * 3600 + m * 60 + s,
        _ => return Err(bad()),
    };
    if seconds == 0 {
        return Err(format!("'{text}' is no time at all: give a positive time"));
    }
    Ok(Some(seconds))
}

/// A duration as SLURM writes it, `[days-]hours:minutes:seconds`.
pub fn slurm_time(seconds: u64) -> String {
    let (d, rest) = (seconds / 86400, seconds % 86400);
    let hms = format!(
        "{:02}:{:02}:{:02}",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    );
    if d > 0 {
        format!("{d}-{hms}")
    } else {
        hms
    }
}

fn one_line(e: &impl std::fmt::Display) -> String {
    e.to_string()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::grid::Experiment;

    #[test]
    fn slurm_times_read_in_every_format_and_bad_ones_are_named() {
        assert_eq!(slurm_seconds("30"), Ok(Some(1800)));
        assert_eq!(slurm_seconds("30:15"), Ok(Some(1815)));
        assert_eq!(slurm_seconds("2:00:00"), Ok(Some(7200)));
        assert_eq!(slurm_seconds("1-12"), Ok(Some(86400 + 12 * 3600)));
        assert_eq!(slurm_seconds("1-0:30"), Ok(Some(86400 + 1800)));
        assert_eq!(slurm_seconds("2-01:00:05"), Ok(Some(2 * 86400 + 3605)));
        assert_eq!(slurm_seconds("UNLIMITED"), Ok(None));
        for bad in ["", "1h", "1:2:3:4", "-5", "1-", "0", "1-2:3:4:5"] {
            assert!(slurm_seconds(bad).is_err(), "{bad}");
        }
        assert_eq!(slurm_time(2 * 86400 + 3605), "2-01:00:05");
        assert_eq!(slurm_time(59), "00:00:59");
    }

    fn config_file(dir: &Path, cluster: &str) -> PathBuf {
        let path = dir.join("grid.toml");
        let text = format!(
            r#"{cluster}
[data]
path = "{}/../shared/datasets/iris.csv"
[formulation]
name = "cart"
depth = [1, 2]
"#,
            env!("CARGO_MANIFEST_DIR")
        );
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn the_table_reads_with_overrides_and_leaves_the_experiment_and_its_fingerprint_alone() {
        let dir = tempfile::tempdir().unwrap();
        let plain = Experiment::load(&config_file(dir.path(), "")).unwrap();
        let path = config_file(
            dir.path(),
            "[cluster]\ntime = \"1:00:00\"\ncpus = 2\npartition = \"short\"\n\
             sbatch = [\"--qos=long\"]\nsetup = [\"module load ipopt\"]",
        );
        let with_table = Experiment::load(&path).unwrap();
        assert_eq!(with_table.fingerprint, plain.fingerprint);
        assert_eq!(with_table.cells.len(), 2);

        let c = ClusterConfig::load(
            &path,
            &[
                "cpus=4".into(),
                "time=00:30:00".into(),
                "max_running=3".into(),
            ],
        )
        .unwrap();
        assert_eq!(c.cpus, Some(4));
        assert_eq!(c.time_seconds(), Some(1800));
        assert_eq!(c.partition.as_deref(), Some("short"));
        assert_eq!(c.max_running, Some(3));
        assert_eq!(c.sbatch, vec!["--qos=long".to_string()]);
        assert_eq!(c.setup, vec!["module load ipopt".to_string()]);
        // Half the task's time at most; the solver's limit plus a minute otherwise.
        assert_eq!(c.stop_before_limit(Some(60.0)), 120);
        assert_eq!(c.stop_before_limit(Some(3600.0)), 900);
        // String keys take the text of a number as it is; a quoted string, without quotes.
        let c = ClusterConfig::load(
            &path,
            &[
                "time=90".into(),
                "job_name=123".into(),
                "account=\"lab\"".into(),
                "merge_time=1-0".into(),
            ],
        )
        .unwrap();
        assert_eq!(c.time.as_deref(), Some("90"));
        assert_eq!(c.time_seconds(), Some(5400));
        assert_eq!(c.job_name.as_deref(), Some("123"));
        assert_eq!(c.account.as_deref(), Some("lab"));
        assert_eq!(c.merge_time.as_deref(), Some("1-0"));
    }

    #[test]
    fn bad_keys_and_values_are_errors_that_name_them() {
        let dir = tempfile::tempdir().unwrap();
        for (table, overrides, wanted) in [
            (
                "[cluster]\ntimee = \"1:00\"",
                vec![],
                "unknown field `timee`",
            ),
            (
                "[cluster]\ntime = \"1h\"",
                vec![],
                "time: '1h' is not a SLURM time",
            ),
            ("[cluster]\ncpus = 0", vec![], "cpus must be at least 1"),
            ("", vec!["cpus=two".to_string()], "cpus"),
            ("", vec!["partition".to_string()], "write KEY=VALUE"),
            (
                "",
                vec!["sbatch=[\"qos long\"]".to_string()],
                "give sbatch options",
            ),
            ("", vec!["partition=a b".to_string()], "give one word"),
            ("cluster = 3", vec![], "[cluster] must be a table"),
        ] {
            let path = config_file(dir.path(), table);
            let e = ClusterConfig::load(&path, &overrides)
                .unwrap_err()
                .to_string();
            assert!(e.contains(wanted), "{table} {overrides:?}: {e}");
            // Named by the file, or by the option.
            assert!(e.contains("grid.toml") || e.contains("--cluster"), "{e}");
        }
    }
}
