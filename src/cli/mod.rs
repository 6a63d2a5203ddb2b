//! The `glassbox` command line: run experiments from TOML configs, predict with, show, draw
//! and explain saved models, compare solvers, and list the registered solvers and
//! formulations. Every command reads a [`Registry`]: the `glassbox` binary passes the
//! built-in one, a program that extends glassbox passes its own to [`main_with`] and gets
//! the same CLI with its formulations and backends. Errors are printed as one line and exit
//! with status 1; nothing panics on bad input.

mod generate;
mod models;

use crate::experiment::{self, ExperimentConfig};
use crate::registry::Registry;
use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[derive(Parser)]
#[command(
    name = "glassbox",
    version,
    about = "Glass-box models learned by mathematical optimization"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run an experiment config: fit on every split, print a table, write DIR/results.jsonl
    /// (one JSON line per solve) and DIR/models/split-R.json.
    ///
    /// A config with grid axes (a [formulation] parameter given a list or a range
    /// `{ from = -12, to = 3, zero_first = true }`, a [grid] table, a list of [solver] names
    /// or of [multistart] seeds), a split protocol (`[split] protocol = "kfold"` or
    /// `"nested"`) or an [experiment] table (`warm_path = true`: each cell starts from the
    /// previous cell's solutions; `time_budget` in seconds) runs on the experiment engine:
    /// every (cell, split) appends its lines to DIR/results.jsonl in one write; rerunning the
    /// same command on the same DIR resumes it, skipping finished cells (a different config is
    /// refused); Ctrl-C (SIGINT) or SIGTERM ends the running solves (IPOPT, HiGHS, lbfgs and
    /// torch at their next iteration, dp, TMO, CCT, CRT and TAO at their next step, the forest
    /// before its next tree, CBC within 50 ms, CART when it finishes), keeps every finished
    /// line and exits with status 1 and how to resume. `--shard i/n` runs every n-th chain
    /// of cells; `glassbox merge` joins the shards. docs/GRID_FORMAT.md has the grammar and the
    /// results fields; the README section "Experiments: grids, paths, resume, shards" a guide.
    Run {
        /// The experiment config (TOML).
        config: PathBuf,
        /// Output folder (default: out/<config name>).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Replace the results of an earlier run in the output folder (start over).
        #[arg(long)]
        force: bool,
        /// Run this many chains of cells at once (threads; default 1). IPOPT and CBC solve
        /// one problem at a time per process (their libraries are not reentrant): with them,
        /// the lines record the wait as lock_wait_seconds; use shards in separate processes to
        /// solve in parallel. With --executor local: the shard processes run at once.
        #[arg(long, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
        jobs: Option<usize>,
        /// Run one shard i/n of the cells (chains dealt by index modulo n), e.g. 2/4.
        #[arg(long, conflicts_with = "executor")]
        shard: Option<experiment::engine::Shard>,
        /// Run the grid as shards in separate processes: `slurm` submits a job array (one
        /// task per shard, each resuming from its last whole cell-split) and a merge job after
        /// it, then returns; `local` runs the shards as --jobs processes here and merges them.
        /// DIR then holds the shards, their logs and the merged results; `glassbox status DIR`
        /// follows the run; running the same command again submits what is neither finished
        /// nor queued. See the README section "Grids on a cluster".
        #[cfg(unix)]
        #[arg(long)]
        executor: Option<crate::cluster::Executor>,
        /// With --executor: the number of shards (at most one per chain of cells; default:
        /// [cluster] shards, or sized from [cluster] seconds_per_cell and time; local: --jobs).
        #[cfg(unix)]
        #[arg(long, requires = "executor", value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
        shards: Option<usize>,
        /// With --executor: a [cluster] key of the config overridden, KEY=VALUE, e.g.
        /// --cluster time=02:00:00 --cluster partition=short --cluster 'sbatch=["--qos=long"]'
        /// (keys: shards, time, cpus, memory, partition, account, max_running, job_name, sbatch,
        /// setup, binary, stop_before_limit, seconds_per_cell, merge_time).
        #[cfg(unix)]
        #[arg(long = "cluster", value_name = "KEY=VALUE", requires = "executor")]
        cluster: Vec<String>,
    },
    /// How far a run is: for a folder of `glassbox run --executor`, each shard's cell-splits
    /// done out of its total, its state (finished, running, pending, stopped, failed: with
    /// the end of its log), the merge and the estimated time left; for an engine run's
    /// folder, its cell-splits done. Works while the run runs and after.
    #[cfg(unix)]
    Status {
        /// The run's output folder.
        dir: PathBuf,
    },
    /// What each task of `glassbox run --executor` runs: one shard of the run planned in
    /// DIR (resuming from its last whole cell-split; SIGTERM stops it cleanly, SIGUSR1 stops
    /// it and requeues its SLURM job), or the merge of every shard into DIR.
    #[cfg(unix)]
    Task {
        /// The run's output folder (holding cluster.json).
        dir: PathBuf,
        /// The shard to run (SLURM array tasks pass $SLURM_ARRAY_TASK_ID).
        #[arg(long, required_unless_present = "merge", conflicts_with = "merge")]
        shard: Option<usize>,
        /// Merge the finished shards into DIR.
        #[arg(long)]
        merge: bool,
    },
    /// Join the output folders of the shards of one config (`glassbox run --shard i/n`)
    /// into OUT: checks they ran the same config and together hold every cell once; results
    /// in canonical order (the same as an unsharded run's, apart from the timings).
    Merge {
        /// The merged output folder.
        out: PathBuf,
        /// The shards' output folders.
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// Replace results already in OUT.
        #[arg(long)]
        force: bool,
    },
    /// Predict with a saved model on a CSV file; prints accuracy (classification) or R squared
    /// and MSE (regression) if the file has the target.
    Predict {
        /// A model saved by `glassbox run` (DIR/models/split-R.json).
        model: PathBuf,
        /// A CSV file with the model's feature columns (other columns are not read).
        data: PathBuf,
        /// Write predictions (class and probabilities) to this CSV file.
        #[arg(long)]
        out: Option<PathBuf>,
        /// The target column, if present (default: the column the model was trained with).
        #[arg(long)]
        target: Option<String>,
    },
    /// Print a saved model: its rules in the user's units, its leaves and sparsity.
    Show {
        /// A saved model.
        model: PathBuf,
    },
    /// Explain a saved S-ORRT's predictions on a CSV file (the paper's local explanations
    /// (7)): the gradient of the prediction with respect to each feature, per row, in the
    /// user's units and in scaled units; optionally the parallel-coordinates plot (Fig. 2).
    /// For a CCT or CRT: per row, the tree the policy chose and the row's path through it.
    Explain {
        /// A saved S-ORRT model.
        model: PathBuf,
        /// A CSV file with the model's feature columns (and the target, to colour the plot
        /// by reliability).
        data: PathBuf,
        /// Write the explanations to this CSV file.
        #[arg(long)]
        out: PathBuf,
        /// Draw the parallel-coordinates plot to this .png or .svg file.
        #[arg(long)]
        plot: Option<PathBuf>,
    },
    /// Generate synthetic data as CSV with a header, the target last: by default the
    /// regression data of the S-ORRT paper's Section 4.4 (p = 25, two balanced groups on X1
    /// and X2, a linear response per group plus noise); with `--kind sparse-tree`,
    /// classification data drawn from a sparse oblique tree (src/core/synthetic/tree.rs).
    Generate {
        /// Number of rows.
        #[arg(long)]
        rows: usize,
        /// Seed of the random stream (the same rows and seed give the same file).
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// The CSV file to write.
        #[arg(long)]
        out: PathBuf,
        /// Replace the file if it exists.
        #[arg(long)]
        force: bool,
        #[command(flatten)]
        kind: generate::KindArgs,
    },
    /// Compare solvers on the same instances from results files of `glassbox run` (one
    /// run per solver, same config otherwise): per-solver tables, and optionally Dolan-More
    /// performance profiles of time and distributions of absolute gaps (.png or .svg).
    Compare {
        /// Results files (DIR/results.jsonl), one or more.
        #[arg(required = true)]
        results: Vec<PathBuf>,
        /// Compare on the instances every solver solved, listing the others, instead of
        /// refusing when the solvers' instances differ.
        #[arg(long)]
        drop_unmatched: bool,
        /// Draw the performance profile of solve time to this .png or .svg file.
        #[arg(long)]
        time_profile: Option<PathBuf>,
        /// Draw the distribution of absolute gaps to the best objective to this file.
        #[arg(long)]
        objective_gaps: Option<PathBuf>,
        /// Draw the distribution of absolute gaps to the best test accuracy (R2) to this file.
        #[arg(long)]
        metric_gaps: Option<PathBuf>,
    },
    /// Draw results files of `glassbox run` as the papers' figures (.png or .svg): every
    /// point is the mean over splits of each split's selected start.
    Plot {
        /// What to draw.
        #[command(subcommand)]
        kind: PlotCommand,
    },
    /// Draw a saved tree (the models of the formulations that draw, e.g. S-ORCT, OCT, CART;
    /// a model of another kind is refused with the list) with its splits and leaves to a
    /// .png or .svg file.
    Draw {
        /// The model file (OUT/models/split-0.json of `glassbox run`).
        model: PathBuf,
        /// The drawing (.png or .svg).
        out: PathBuf,
    },
    /// List the registered solver backends with their capabilities and options.
    Solvers,
    /// List the formulations with their parameters and defaults.
    Formulations,
}

/// The figures of `glassbox plot`.
#[derive(Subcommand)]
enum PlotCommand {
    /// Test accuracy, delta_L and delta_G heatmaps over the (lambda_L, lambda_G) grid, one
    /// row per data set (S-ORCT paper, Fig. 5).
    Heatmap {
        /// Results files (DIR/results.jsonl), one or more (e.g. one per grid cell).
        #[arg(required = true)]
        results: Vec<PathBuf>,
        /// The plot file (.png or .svg).
        #[arg(long)]
        out: PathBuf,
    },
    /// Accuracy, delta_L and delta_G against the lambda that varies, one panel per data
    /// set (S-ORCT paper, Figs. 2-4).
    Lambda {
        /// Results files, one or more (e.g. one per lambda).
        #[arg(required = true)]
        results: Vec<PathBuf>,
        /// The plot file (.png or .svg).
        #[arg(long)]
        out: PathBuf,
    },
    /// Accuracy (or R2) against sparsity, one point per setting, one labelled series per
    /// results file, one panel per data set (S-ORRT paper, Fig. 4).
    Scatter {
        /// Results files, one series each.
        #[arg(required = true)]
        results: Vec<PathBuf>,
        /// Series labels, in the order of the files (default: formulation and depth).
        #[arg(long)]
        label: Vec<String>,
        /// The sparsity on the x axis: global (delta_G) or local (delta_L).
        #[arg(long, default_value = "global", value_parser = ["global", "local"])]
        sparsity: String,
        /// The plot file (.png or .svg).
        #[arg(long)]
        out: PathBuf,
    },
}

/// The `glassbox` CLI with the formulations and backends of `registry`: parses the
/// process's arguments, runs the command, and exits with status 1 and one error line on
/// failure.
pub fn main_with(registry: Registry) {
    crate::allocator::keep_freed_memory();
    // A reader that stops early (`glassbox formulations | head`) ends the process quietly,
    // as it ends any Unix tool, where Rust's ignored SIGPIPE made `println!` panic. Every
    // command prints after its files are written (`run` its table), so none is cut short.
    #[cfg(unix)]
    // SAFETY: restoring a signal's default disposition before any other thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = Cli::parse();
    if let Err(e) = dispatch(cli.command, Arc::new(registry)) {
        eprintln!("error: {}", format!("{e:#}").replace('\n', " "));
        std::process::exit(1);
    }
}

fn dispatch(command: Command, registry: Arc<Registry>) -> Result<()> {
    match command {
        #[cfg(unix)]
        Command::Run {
            config,
            out,
            force,
            jobs,
            // (clap: --shard conflicts with --executor)
            shard: _,
            executor: Some(executor),
            shards,
            cluster,
        } => run_sharded(crate::cluster::submit::Request {
            out: out.unwrap_or_else(|| default_out(&config)),
            config,
            executor,
            shards,
            jobs,
            overrides: cluster,
            force,
            stop: stop_on_signals()?,
            registry,
        }),
        Command::Run {
            config,
            out,
            force,
            jobs,
            shard,
            ..
        } => {
            let grid = experiment::grid::Experiment::load_with(&config, registry.clone())?;
            if grid.uses_engine || jobs.is_some() || shard.is_some() {
                run_engine(&grid, out, force, jobs.unwrap_or(1), shard)
            } else {
                run(&config, out, force, registry)
            }
        }
        Command::Merge { out, dirs, force } => merge(&out, &dirs, force),
        #[cfg(unix)]
        Command::Status { dir } => {
            print!("{}", status(&dir)?);
            Ok(())
        }
        #[cfg(unix)]
        Command::Task { dir, shard, merge } => {
            use crate::cluster::task::{self, TaskKind};
            // (clap: exactly one of --shard and --merge)
            let kind = match (shard, merge) {
                (Some(i), _) => TaskKind::Shard(i),
                (None, _) => TaskKind::Merge,
            };
            let ending = task::run(&dir, kind, registry)?;
            println!("{}", ending.message.trim_end());
            match ending.exit_code() {
                0 => Ok(()),
                code => std::process::exit(code),
            }
        }
        Command::Predict {
            model,
            data,
            out,
            target,
        } => models::predict(&registry, &model, &data, out.as_deref(), target.as_deref()),
        Command::Show { model } => {
            print!("{}", registry.load_model(&model)?.model.describe());
            Ok(())
        }
        Command::Explain {
            model,
            data,
            out,
            plot,
        } => models::explain(&registry, &model, &data, &out, plot.as_deref()),
        Command::Generate {
            rows,
            seed,
            out,
            force,
            kind,
        } => generate::generate(&kind, rows, seed, &out, force),
        Command::Compare {
            results,
            drop_unmatched,
            time_profile,
            objective_gaps,
            metric_gaps,
        } => compare(
            &results,
            drop_unmatched,
            [time_profile, objective_gaps, metric_gaps],
        ),
        Command::Plot { kind } => plot_results(kind),
        Command::Draw { model, out } => models::draw(&registry, &model, &out),
        Command::Solvers => {
            for e in registry.backends() {
                println!("{} ({}): {}", e.name, e.problem_kind(), e.description);
                println!("  capabilities: {}", e.capabilities.names().join(", "));
                if !e.options.is_empty() {
                    println!("  raw options ([solver.raw] in a config):");
                    for o in e.options {
                        println!("    {:<28} {:?}: {}", o.name, o.kind, o.help);
                    }
                }
            }
            println!(
                "options every solver takes in [solver]: time_limit, iteration_limit, tolerance, \
                 integrality_tolerance (MILP backends), relative_gap, absolute_gap, threads, \
                 seed, verbosity, raw"
            );
            Ok(())
        }
        Command::Formulations => {
            for f in registry.formulations().iter().map(|e| &e.info) {
                println!("{} ({}): {}", f.name, f.kind, f.description);
                for p in f.parameters {
                    let default = if p.default.is_empty() { "-" } else { p.default };
                    println!("    {:<20} default {:<22} {}", p.name, default, p.help);
                }
            }
            Ok(())
        }
    }
}

fn run(
    config_path: &Path,
    out: Option<PathBuf>,
    force: bool,
    registry: Arc<Registry>,
) -> Result<()> {
    let config = ExperimentConfig::load_with(config_path, registry)?;
    let out = out.unwrap_or_else(|| {
        let stem = config_path
            .file_stem()
            .map(|s| s.to_string_lossy().to_string())
            .unwrap_or_else(|| "run".to_string());
        PathBuf::from("out").join(stem)
    });
    let stop = stop_on_signals()?;
    let progress = std::io::stderr().is_terminal();
    let outcome = experiment::run_until(&config, &out, force, progress, Some(stop))?;
    let random_starts = config.formulation.random_starts();
    let defaults = experiment::MultistartConfig::default();
    // After the run's checks: a config they refuse says why, not this.
    if !random_starts
        && (config.multistart.starts != defaults.starts || config.multistart.seed != defaults.seed)
    {
        eprintln!(
            "note: {} solves once per split: [multistart] starts and seed do not apply to it",
            config.formulation.name()
        );
    }
    let starts = if random_starts {
        format!(" x {} starts", config.multistart.starts)
    } else {
        String::new()
    };
    println!(
        "{} on {} with {} ({} splits{starts})",
        config.formulation.name(),
        config.dataset_name(),
        config.solver.name,
        config.split.repeats,
    );
    if !outcome.records.is_empty() {
        print!("{}", experiment::summary_table(&outcome.records));
    }
    println!("results: {}", outcome.results_path.display());
    if outcome.interrupted {
        bail!(
            "interrupted: {} of {} splits are in {} (every one whole; the summary above is theirs); rerun with --force to run them all",
            outcome.splits_done,
            outcome.splits,
            outcome.results_path.display()
        );
    }
    Ok(())
}

/// `glassbox compare`: matches the solves, prints the tables, draws the plots asked for
/// (time profile, objective gaps, metric gaps).
fn compare(results: &[PathBuf], drop_unmatched: bool, plots: [Option<PathBuf>; 3]) -> Result<()> {
    use crate::compare::{self, Mismatch, PlotKind};
    let inputs: Vec<&Path> = results.iter().map(PathBuf::as_path).collect();
    let outputs: Vec<&Path> = plots.iter().flatten().map(PathBuf::as_path).collect();
    models::check_outputs(&inputs, &outputs)?;
    for path in &outputs {
        crate::plot::plot_extension(path)?;
    }
    let mut records = Vec::new();
    for path in results {
        records.extend(compare::read_results(path)?);
    }
    let mismatch = if drop_unmatched {
        Mismatch::Drop
    } else {
        Mismatch::Refuse
    };
    let comparison = compare::match_instances(records, mismatch)?;
    if !comparison.dropped.is_empty() {
        eprintln!(
            "warning: {} instances not solved by every solver are left out: {}",
            comparison.dropped.len(),
            compare::list_dropped(&comparison.dropped)
        );
    }
    print!("{}", comparison.summary());
    let kinds = [
        PlotKind::TimeProfile,
        PlotKind::ObjectiveGaps,
        PlotKind::MetricGaps,
    ];
    let asked: Vec<(PlotKind, &Path)> = kinds
        .into_iter()
        .zip(&plots)
        .filter_map(|(kind, path)| Some((kind, path.as_deref()?)))
        .collect();
    for note in comparison.write_plots(&asked)? {
        eprintln!("note: {note}");
    }
    for (_, path) in &asked {
        println!("wrote {}", path.display());
    }
    Ok(())
}

/// `glassbox plot`: reads the results files and draws the figure asked for.
fn plot_results(kind: PlotCommand) -> Result<()> {
    use crate::result_plots::{self, Lambda, PlotKind, Series};
    let (kind, results, labels, sparsity, out) = match kind {
        PlotCommand::Heatmap { results, out } => (PlotKind::Heatmap, results, vec![], None, out),
        PlotCommand::Lambda { results, out } => (PlotKind::Lambda, results, vec![], None, out),
        PlotCommand::Scatter {
            results,
            label,
            sparsity,
            out,
        } => (PlotKind::Scatter, results, label, Some(sparsity), out),
    };
    let inputs: Vec<&Path> = results.iter().map(PathBuf::as_path).collect();
    models::check_outputs(&inputs, &[&out])?;
    crate::plot::plot_extension(&out)?;
    if labels.len() > results.len() {
        bail!(
            "{} labels for {} results files: give at most one --label per file",
            labels.len(),
            results.len()
        );
    }
    let series = results
        .iter()
        .enumerate()
        .map(|(i, path)| Series::read(path, labels.get(i).cloned()))
        .collect::<crate::Result<Vec<_>>>()?;
    let sparsity = match sparsity.as_deref() {
        Some("local") => Lambda::Local,
        _ => Lambda::Global,
    };
    if let Some(note) = result_plots::draw(&series, kind, sparsity, &out)? {
        eprintln!("note: {note}");
    }
    println!("wrote {}", out.display());
    Ok(())
}

/// The default output folder of a config: out/<config file stem>.
fn default_out(config_path: &Path) -> PathBuf {
    let stem = config_path
        .file_stem()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_else(|| "run".to_string());
    PathBuf::from("out").join(stem)
}

/// `glassbox run` on the experiment engine (grids, protocols, resume, shards).
fn run_engine(
    grid: &experiment::grid::Experiment,
    out: Option<PathBuf>,
    force: bool,
    jobs: usize,
    shard: Option<experiment::engine::Shard>,
) -> Result<()> {
    use experiment::engine::{self, Ending};
    let out = out.unwrap_or_else(|| default_out(&grid.file));
    let stop = stop_on_signals()?;
    let progress = std::io::stderr().is_terminal()
        && !std::env::var("CI").is_ok_and(|v| v == "true" || v == "1");
    let options = engine::RunOptions {
        out: out.clone(),
        force,
        jobs,
        shard,
        progress,
        stop,
    };
    let outcome = engine::run(grid, &options)?;
    let shard_note = shard.map_or(String::new(), |s| format!(" --shard {s}"));
    let resume = format!(
        "glassbox run {} --out {}{shard_note}",
        grid.file.display(),
        out.display()
    );
    match outcome.ending {
        Ending::Finished => {
            println!(
                "{} on {} ({} cells x {} splits{}): {} cell-splits solved now, {} were done",
                grid.names(|b| &b.formulation),
                grid.names(|b| &b.dataset_name),
                grid.cells.len(),
                outcome.shard_units / grid.cells.len().max(1),
                shard.map_or(String::new(), |s| format!(", shard {s}")),
                outcome.solved_units,
                outcome.done_units - outcome.solved_units
            );
            print!("{}", outcome.summary);
            println!("results: {}", outcome.results_path.display());
            Ok(())
        }
        Ending::Interrupted | Ending::BudgetSpent => bail!(
            "{}: {} of {} cell-splits are in {} (every finished one, whole); rerun `{resume}` to finish the rest",
            if outcome.ending == Ending::Interrupted {
                "interrupted"
            } else {
                "the time budget (experiment.time_budget) is spent"
            },
            outcome.done_units,
            outcome.shard_units,
            outcome.results_path.display()
        ),
    }
}

/// The stop flag of a run: the first SIGINT / SIGTERM sets it (the running solves end, at
/// their next iteration where the backend checks it); a second one exits at once (a unit
/// being written may then be left unfinished: resume drops it).
fn stop_on_signals() -> Result<Arc<std::sync::atomic::AtomicBool>> {
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    for (signal, code) in [
        (signal_hook::consts::SIGINT, 130),
        (signal_hook::consts::SIGTERM, 143),
    ] {
        signal_hook::flag::register_conditional_shutdown(signal, code, stop.clone())
            .and_then(|_| signal_hook::flag::register(signal, stop.clone()))
            .context("installing the signal handlers")?;
    }
    Ok(stop)
}

/// `glassbox run --executor`: plans or resumes the sharded run, submits or runs its shards.
#[cfg(unix)]
fn run_sharded(request: crate::cluster::submit::Request) -> Result<()> {
    let report = crate::cluster::submit::run(&request)?;
    print!("{}", report.text);
    if !report.success {
        bail!(
            "not every shard finished: `glassbox status {}` says why; run the same command again to go on",
            request.out.display()
        );
    }
    Ok(())
}

/// `glassbox status DIR`: a sharded run's, or an engine run's.
#[cfg(unix)]
fn status(dir: &Path) -> Result<String> {
    use crate::cluster::{plan::Layout, status};
    if Layout::new(dir).plan().exists() {
        return Ok(status::read(dir)?.render(20));
    }
    if dir.join(experiment::store::MANIFEST).exists() {
        return Ok(status::engine_folder(dir)?);
    }
    if !dir.is_dir() {
        bail!("{}: no such folder", dir.display());
    }
    // A one-setting run keeps no plan, only its results: whole splits, written as they end.
    let results = dir.join("results.jsonl");
    if results.exists() {
        let empty = std::fs::metadata(&results).is_ok_and(|m| m.len() == 0);
        let records = match empty {
            true => Vec::new(),
            false => crate::compare::read_results(&results)?,
        };
        let splits: std::collections::BTreeSet<usize> = records.iter().map(|r| r.split).collect();
        return Ok(format!(
            "{}: a one-setting run (no plan is kept): {} results lines, {} splits whole\n",
            dir.display(),
            records.len(),
            splits.len()
        ));
    }
    bail!(
        "{}: neither a run of `glassbox run --executor` (no cluster.json) nor of `glassbox run` \
         (no experiment.json)",
        dir.display()
    )
}

/// `glassbox merge OUT DIR...`.
fn merge(out: &Path, dirs: &[PathBuf], force: bool) -> Result<()> {
    use experiment::{engine, store};
    let manifest = store::merge(out, dirs, force)?;
    let done = store::scan(
        &out.join(store::RESULTS),
        &manifest.config_fingerprint,
        false,
    )?;
    if let Some(report) = engine::nested_report(&manifest, &done) {
        let path = out.join("nested.json");
        crate::model::write_atomically(&path, format!("{report:#}\n").as_bytes())?;
    }
    print!("{}", engine::summary(&manifest, &done));
    println!(
        "merged {} folders: {} cell-splits of {} into {}",
        dirs.len(),
        done.len(),
        manifest.config,
        out.join(store::RESULTS).display()
    );
    Ok(())
}
