//! The job scripts of the SLURM executor: `DIR/slurm/array.sbatch`, whose task I runs
//! `glassbox task DIR --shard I`, and `DIR/slurm/merge.sbatch`, which runs `glassbox task DIR
//! --merge` once the array has ended (`--dependency=afterany:ARRAY`, given at submission).
//! The array's range is given at submission too (`--array=1-N`, or the unfinished shards of
//! a resubmission), so one script serves every submission.
//!
//! The resources come from `[cluster]` ([`ClusterConfig`]). Both scripts append to their
//! logs (`--open-mode=append`), so a requeued task's log keeps its earlier attempts. The
//! array's tasks are requeueable (`--requeue`: a preempted or failed node's task is requeued
//! rather than cancelled) and, with `stop_before_limit`, asked to stop that many seconds
//! before their time limit (`--signal=B:USR1@...`, sent to the batch shell, which `exec`s
//! glassbox so that glassbox gets it). Each script `exec`s glassbox after the `setup` lines
//! (`module load ...`), under `set -e` so that a failing setup line fails the job visibly.
//!
//! Depends on nothing else of glassbox but its error type.

use super::config::ClusterConfig;
use super::plan::Layout;
use crate::{GlassboxError, Result};
use std::path::Path;

/// What the scripts need besides `[cluster]`.
pub struct ScriptInput<'a> {
    /// The run's folder.
    pub layout: &'a Layout,
    /// The config (named in the scripts' comments).
    pub config: &'a Path,
    /// The glassbox binary.
    pub binary: &'a Path,
    /// Number of shards.
    pub shards: usize,
    /// `--signal=B:USR1@SECONDS` (0: none).
    pub stop_before_limit: u64,
}

/// A word quoted for the shell (single quotes).
pub fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// Checks that `path` can be written in `#SBATCH` lines (SLURM reads them without shell
/// quoting and expands `%` patterns in file names).
pub fn check_sbatch_path(path: &Path) -> Result<()> {
    let s = path.display().to_string();
    if s.contains(char::is_whitespace) || s.contains('%') || s.contains('"') {
        return Err(GlassboxError::Config(format!(
            "{s}: the output folder of a SLURM run cannot hold spaces, '%' or quotes (SLURM \
             reads its log paths from #SBATCH lines without quoting): choose another --out"
        )));
    }
    Ok(())
}

fn common_lines(c: &ClusterConfig, out: &mut String) {
    for (flag, value) in [
        ("--mem", &c.memory),
        ("--partition", &c.partition),
        ("--account", &c.account),
    ] {
        if let Some(v) = value {
            out.push_str(&format!("#SBATCH {flag}={v}\n"));
        }
    }
}

fn extra_and_setup(c: &ClusterConfig, out: &mut String) {
    for line in &c.sbatch {
        let option = line.trim().trim_start_matches("#SBATCH").trim();
        out.push_str(&format!("#SBATCH {option}\n"));
    }
    out.push_str("\nset -e\n");
    for line in &c.setup {
        out.push_str(line);
        out.push('\n');
    }
}

fn job_name(c: &ClusterConfig, config: &Path) -> String {
    c.job_name.clone().unwrap_or_else(|| {
        let stem = config
            .file_stem()
            .map(|s| s.to_string_lossy().to_string())
            .unwrap_or_else(|| "grid".into());
        let clean: String = stem
            .chars()
            .map(|ch| {
                if ch.is_ascii_alphanumeric() || "-_.".contains(ch) {
                    ch
                } else {
                    '_'
                }
            })
            .collect();
        format!("glassbox-{clean}")
    })
}

/// The job array's script.
pub fn array_script(c: &ClusterConfig, input: &ScriptInput<'_>) -> Result<String> {
    let layout = input.layout;
    check_sbatch_path(&layout.root)?;
    let mut s = String::from("#!/bin/bash\n");
    s.push_str(&format!(
        "# glassbox: the shards of {} as a SLURM job array, written by `glassbox run --executor \
         slurm`.\n# Task I runs shard I/{} into {}/shards/I, resuming from what is on disk; \
         the array's\n# range is given at submission (sbatch --array=1-{} {}).\n",
        input.config.display(),
        input.shards,
        layout.root.display(),
        input.shards,
        layout.array_script().display()
    ));
    s.push_str(&format!(
        "#SBATCH --job-name={}\n",
        job_name(c, input.config)
    ));
    s.push_str(&format!(
        "#SBATCH --output={}\n",
        layout.root.join("logs").join("task-%a.log").display()
    ));
    s.push_str("#SBATCH --open-mode=append\n#SBATCH --requeue\n#SBATCH --ntasks=1\n");
    s.push_str(&format!(
        "#SBATCH --cpus-per-task={}\n",
        c.cpus.unwrap_or(1)
    ));
    if let Some(t) = &c.time {
        s.push_str(&format!("#SBATCH --time={t}\n"));
    }
    common_lines(c, &mut s);
    if input.stop_before_limit > 0 {
        s.push_str(&format!(
            "#SBATCH --signal=B:USR1@{}\n",
            input.stop_before_limit
        ));
    }
    extra_and_setup(c, &mut s);
    s.push_str(&format!(
        "exec {} task {} --shard \"$SLURM_ARRAY_TASK_ID\"\n",
        shell_quote(&input.binary.display().to_string()),
        shell_quote(&layout.root.display().to_string())
    ));
    Ok(s)
}

/// The merge job's script.
pub fn merge_script(c: &ClusterConfig, input: &ScriptInput<'_>) -> Result<String> {
    let layout = input.layout;
    check_sbatch_path(&layout.root)?;
    let mut s = String::from("#!/bin/bash\n");
    s.push_str(&format!(
        "# glassbox: merges the shards of {} into {} once the job array has ended\n# \
         (submitted with --dependency=afterany:ARRAY_JOB).\n",
        input.config.display(),
        layout.root.display()
    ));
    s.push_str(&format!(
        "#SBATCH --job-name={}-merge\n",
        job_name(c, input.config)
    ));
    s.push_str(&format!(
        "#SBATCH --output={}\n",
        layout.merge_log().display()
    ));
    s.push_str("#SBATCH --open-mode=append\n#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=1\n");
    s.push_str(&format!(
        "#SBATCH --time={}\n",
        c.merge_time.as_deref().unwrap_or("1:00:00")
    ));
    common_lines(c, &mut s);
    extra_and_setup(c, &mut s);
    s.push_str(&format!(
        "exec {} task {} --merge\n",
        shell_quote(&input.binary.display().to_string()),
        shell_quote(&layout.root.display().to_string())
    ));
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn the_scripts_carry_the_resources_and_run_the_task() {
        let c = ClusterConfig {
            time: Some("2:00:00".into()),
            cpus: Some(2),
            memory: Some("4G".into()),
            partition: Some("short".into()),
            account: Some("proj".into()),
            sbatch: vec!["--qos=long".into(), "#SBATCH --constraint=avx2".into()],
            setup: vec!["module load ipopt".into()],
            ..ClusterConfig::default()
        };
        let layout = Layout::new(Path::new("/scratch/me/grid"));
        let binary = PathBuf::from("/home/me/bin/glass'box");
        let input = ScriptInput {
            layout: &layout,
            config: Path::new("/home/me/grid.toml"),
            binary: &binary,
            shards: 4,
            stop_before_limit: 120,
        };
        let s = array_script(&c, &input).unwrap();
        for wanted in [
            "#SBATCH --job-name=glassbox-grid\n",
            "#SBATCH --output=/scratch/me/grid/logs/task-%a.log\n",
            "#SBATCH --open-mode=append\n",
            "#SBATCH --requeue\n",
            "#SBATCH --cpus-per-task=2\n",
            "#SBATCH --time=2:00:00\n",
            "#SBATCH --mem=4G\n",
            "#SBATCH --partition=short\n",
            "#SBATCH --account=proj\n",
            "#SBATCH --signal=B:USR1@120\n",
            "#SBATCH --qos=long\n",
            "#SBATCH --constraint=avx2\n",
            "set -e\nmodule load ipopt\n",
            "exec '/home/me/bin/glass'\\''box' task '/scratch/me/grid' --shard \"$SLURM_ARRAY_TASK_ID\"\n",
        ] {
            assert!(s.contains(wanted), "{wanted:?} missing from\n{s}");
        }
        // #SBATCH lines come before the first command (sbatch stops reading them there).
        let first_command = s.find("set -e").unwrap();
        assert!(s.rfind("#SBATCH").unwrap() < first_command);
        let m = merge_script(&c, &input).unwrap();
        assert!(
            m.contains("#SBATCH --output=/scratch/me/grid/logs/merge.log\n"),
            "{m}"
        );
        assert!(m.contains("#SBATCH --time=1:00:00\n"), "{m}");
        assert!(m.contains("--merge\n"), "{m}");
        assert!(!m.contains("--signal"), "{m}");

        let spaced = Layout::new(Path::new("/scratch/my grid"));
        let e = array_script(
            &c,
            &ScriptInput {
                layout: &spaced,
                ..input
            },
        )
        .unwrap_err();
        assert!(e.to_string().contains("cannot hold spaces"), "{e}");
    }
}
