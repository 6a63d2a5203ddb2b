//! The results of an engine run on disk: `OUT/experiment.json` (the manifest: which config,
//! which shard, how many units) and `OUT/results.jsonl`, appended one whole unit (the lines of
//! one (cell, split)) at a time with a single write, so an interrupted run leaves complete
//! lines and complete units only; a crash in the middle of a write leaves at most a partial
//! last line or an unfinished last unit, which a resumed run detects and drops. Also
//! `glassbox merge`: shard outputs joined into one run.
//!
//! Depends on the engine's line format only (the fields named in `docs/GRID_FORMAT.md`).

use crate::model::write_atomically;
use crate::{GlassboxError, Result};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The results file's name.
pub const RESULTS: &str = "results.jsonl";
/// The manifest's name.
pub const MANIFEST: &str = "experiment.json";
/// The lock file a run holds while it writes its folder.
pub const LOCK: &str = ".lock";

/// What `OUT/experiment.json` records about the run that writes `OUT`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Manifest {
    /// The config file, as given.
    pub config: String,
    /// [`super::grid::Experiment::fingerprint`].
    pub config_fingerprint: String,
    /// `"i/n"` for a shard, none for a whole run.
    pub shard: Option<String>,
    /// Cells of the grid.
    pub cells: usize,
    /// Splits per cell.
    pub splits: usize,
    /// Units (cell x split) of the whole run.
    pub units: usize,
    /// Units of this shard (all of them for a whole run).
    pub shard_units: usize,
    /// The split protocol.
    pub protocol: super::grid::Protocol,
    /// The axes: label and values (non-finite floats as strings), outer first (of the
    /// first block, for a config of several).
    pub axes: Vec<(String, Vec<serde_json::Value>)>,
    /// A config of several data sets or formulations: its blocks, in cell order (empty
    /// for one block).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub blocks: Vec<BlockInfo>,
}

/// One block of a manifest: the cells of one data set and one formulation.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct BlockInfo {
    /// The data set's name.
    pub dataset: String,
    /// The formulation's name.
    pub formulation: String,
    /// Its first cell.
    pub first_cell: usize,
    /// Its number of cells.
    pub cells: usize,
    /// Its axes: label and values, outer first.
    pub axes: Vec<(String, Vec<serde_json::Value>)>,
}

/// The fields of a results line the store reads.
#[derive(Deserialize)]
struct LineKey {
    config_fingerprint: String,
    cell: usize,
    split: usize,
    start: usize,
    unit_solves: usize,
    #[serde(default)]
    x: Option<Vec<f64>>,
}

/// A finished unit found in a results file.
#[derive(Clone, Debug)]
pub struct DoneUnit {
    /// The final point of every start, by start (with a warm path).
    pub points: Vec<Option<Vec<f64>>>,
    /// The unit's lines as written.
    pub lines: Vec<String>,
}

/// The finished units of a results file, by (cell, split id).
pub type Done = HashMap<(usize, usize), DoneUnit>;

/// An open results file that units are appended to, and the folder's lock (released when
/// the store is dropped).
pub struct Store {
    path: PathBuf,
    file: Mutex<std::fs::File>,
    _lock: std::fs::File,
}

/// Takes the exclusive lock of `out` (created if missing), or says which run holds it.
/// An advisory `flock`: it covers every process that writes through [`open`], on this host
/// and, on a network filesystem that supports locks (NFSv4, Lustre, GPFS), on others.
fn lock(out: &Path) -> Result<std::fs::File> {
    std::fs::create_dir_all(out).map_err(|e| GlassboxError::io(out, e))?;
    let path = out.join(LOCK);
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| GlassboxError::io(&path, e))?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => Err(GlassboxError::Config(format!(
            "{} is being written by another glassbox run (it holds the lock {}): wait for \
             that run to end or stop it, then run again",
            out.display(),
            path.display()
        ))),
        Err(std::fs::TryLockError::Error(e)) => Err(GlassboxError::io(&path, e)),
    }
}

/// Prepares `out` for a run with `manifest`: a fresh folder, or (same config and shard) the
/// finished units of an earlier run to skip. `force` removes earlier results first. Refuses
/// results of another config or shard, and results without a manifest, and a folder that
/// another run is writing (see the module comment).
pub fn open(out: &Path, manifest: &Manifest, force: bool) -> Result<(Store, Done)> {
    let results = out.join(RESULTS);
    let manifest_path = out.join(MANIFEST);
    // Before anything is read, removed or repaired: another run may be appending.
    let lock = lock(out)?;
    if force {
        for f in [&results, &manifest_path, &out.join("nested.json")] {
            if f.exists() {
                std::fs::remove_file(f).map_err(|e| GlassboxError::io(f, e))?;
            }
        }
        let models = out.join("models");
        if models.exists() {
            std::fs::remove_dir_all(&models).map_err(|e| GlassboxError::io(&models, e))?;
        }
    }
    let done = if manifest_path.exists() {
        let earlier = read_manifest(out)?;
        if earlier.config_fingerprint != manifest.config_fingerprint {
            return Err(GlassboxError::Config(format!(
                "{} holds the results of another config ({}, fingerprint {}; this config's is {}): \
                 choose another --out folder, or pass --force to replace them",
                out.display(),
                earlier.config,
                earlier.config_fingerprint,
                manifest.config_fingerprint
            )));
        }
        if earlier.shard != manifest.shard {
            let name = |s: &Option<String>| {
                s.clone()
                    .map_or("the whole run".into(), |s| format!("shard {s}"))
            };
            return Err(GlassboxError::Config(format!(
                "{} holds {} of this config, not {}: choose another --out folder, or pass --force",
                out.display(),
                name(&earlier.shard),
                name(&manifest.shard)
            )));
        }
        scan(&results, &manifest.config_fingerprint, true)?
    } else if results.exists() {
        return Err(GlassboxError::Config(format!(
            "{} exists but {} does not (results of a one-setting run, or of an older version): \
             choose another --out folder, or pass --force to replace them",
            results.display(),
            manifest_path.display()
        )));
    } else {
        Done::new()
    };
    std::fs::create_dir_all(out).map_err(|e| GlassboxError::io(out, e))?;
    write_manifest(out, manifest)?;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&results)
        .map_err(|e| GlassboxError::io(&results, e))?;
    Ok((
        Store {
            path: results,
            file: Mutex::new(file),
            _lock: lock,
        },
        done,
    ))
}

impl Store {
    /// Appends the lines of one unit with one write, then flushes: the unit is on disk whole
    /// or (after a crash in the write) as a tail that [`scan`] drops.
    pub fn append_unit(&self, lines: &[String]) -> Result<()> {
        let mut text = String::new();
        for l in lines {
            text.push_str(l);
            text.push('\n');
        }
        let mut file = self.file.lock().unwrap_or_else(|p| p.into_inner());
        file.write_all(text.as_bytes())
            .and_then(|_| file.flush())
            .map_err(|e| GlassboxError::io(&self.path, e))
    }

    /// The results file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Reads `out`'s manifest.
pub fn read_manifest(out: &Path) -> Result<Manifest> {
    let path = out.join(MANIFEST);
    let text = std::fs::read_to_string(&path).map_err(|e| GlassboxError::io(&path, e))?;
    serde_json::from_str(&text).map_err(|e| {
        GlassboxError::Config(format!(
            "{}: not an experiment manifest: {e}",
            path.display()
        ))
    })
}

fn write_manifest(out: &Path, manifest: &Manifest) -> Result<()> {
    let text =
        serde_json::to_string_pretty(manifest).map_err(|e| GlassboxError::Config(e.to_string()))?;
    write_atomically(&out.join(MANIFEST), format!("{text}\n").as_bytes())
}

/// The finished units of `results` (none if it does not exist). Lines are grouped into units
/// as written (consecutive lines of one (cell, split)); a partial last line and an unfinished
/// last unit are the traces of an interrupted write: with `repair` the file is cut before
/// them (and a note printed), else they are an error. Anything else out of place (a line
/// that does not parse, another config's line, an unfinished unit before the end, a unit twice)
/// is an error.
pub fn scan(results: &Path, config_fingerprint: &str, repair: bool) -> Result<Done> {
    let mut done = Done::new();
    let bytes = match std::fs::read(results) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(done),
        Err(e) => return Err(GlassboxError::io(results, e)),
    };
    let bad = |m: String| GlassboxError::Config(format!("{}: {m}", results.display()));
    let complete_end = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let text = std::str::from_utf8(&bytes[..complete_end]).map_err(|e| bad(e.to_string()))?;
    let mut units: Vec<Pending> = Vec::new();
    let mut offset = 0;
    for (n, line) in text.split_terminator('\n').enumerate() {
        let key: LineKey = serde_json::from_str(line).map_err(|e| {
            bad(format!(
                "line {} is not a results line of the engine: {e}",
                n + 1
            ))
        })?;
        if key.config_fingerprint != config_fingerprint {
            return Err(bad(format!(
                "line {} belongs to another config (fingerprint {})",
                n + 1,
                key.config_fingerprint
            )));
        }
        let k = (key.cell, key.split);
        match units.last_mut() {
            Some(u) if u.key == k && u.unit.lines.len() < u.expected => {
                if key.start != u.unit.lines.len() {
                    return Err(bad(format!(
                        "line {}: start {} out of order",
                        n + 1,
                        key.start
                    )));
                }
                u.unit.lines.push(line.to_string());
                u.unit.points.push(key.x);
            }
            _ => {
                if let Some(u) = units.last() {
                    if u.unit.lines.len() < u.expected {
                        return Err(bad(format!(
                            "cell {} split {} has {} of its {} lines before line {}",
                            u.key.0,
                            u.key.1,
                            u.unit.lines.len(),
                            u.expected,
                            n + 1
                        )));
                    }
                }
                units.push(Pending {
                    key: k,
                    offset,
                    expected: key.unit_solves,
                    unit: DoneUnit {
                        points: vec![key.x],
                        lines: vec![line.to_string()],
                    },
                });
            }
        }
        offset += line.len() + 1;
    }
    let mut cut = None;
    if complete_end < bytes.len() {
        cut = Some((complete_end, "a partial last line".to_string()));
    }
    if let Some(u) = units.last() {
        if u.unit.lines.len() < u.expected {
            cut = Some((
                u.offset,
                format!("{} line(s) of an unfinished cell", u.unit.lines.len()),
            ));
            units.pop();
        }
    }
    if let Some((at, what)) = cut {
        if !repair {
            return Err(bad(format!("ends with {what}: resume the run first")));
        }
        eprintln!(
            "{}: dropping {what} left by an interrupted run",
            results.display()
        );
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(results)
            .map_err(|e| GlassboxError::io(results, e))?;
        f.set_len(at as u64)
            .map_err(|e| GlassboxError::io(results, e))?;
    }
    for u in units {
        let k = u.key;
        if done.insert(k, u.unit).is_some() {
            return Err(bad(format!("cell {} split {} appears twice", k.0, k.1)));
        }
    }
    Ok(done)
}

/// A unit being read by [`scan`]: its key, the offset of its first line, the lines it
/// should have.
struct Pending {
    key: (usize, usize),
    offset: usize,
    expected: usize,
    unit: DoneUnit,
}

/// Rewrites `results` with the units of `done` in canonical order (cell, then split), in one
/// atomic replace: a finished run, a merge of shards and the unsharded run then list the same
/// lines in the same order.
pub fn write_canonical(results: &Path, done: &Done) -> Result<()> {
    let ordered: BTreeMap<&(usize, usize), &DoneUnit> = done.iter().collect();
    let mut text = String::new();
    for unit in ordered.values() {
        for l in &unit.lines {
            text.push_str(l);
            text.push('\n');
        }
    }
    write_atomically(results, text.as_bytes())
}

/// `glassbox merge OUT DIR...`: joins finished shards of one config into `out` (results in
/// canonical order, manifest of the whole run, models copied). Refuses shards of different
/// configs, unfinished shards, a unit found twice and units that no shard has.
pub fn merge(out: &Path, dirs: &[PathBuf], force: bool) -> Result<Manifest> {
    let bad = |m: String| GlassboxError::Config(format!("merge: {m}"));
    if dirs.is_empty() {
        return Err(bad("give the shard folders to merge".into()));
    }
    let mut manifests = Vec::new();
    for d in dirs {
        manifests.push(read_manifest(d)?);
    }
    let first = &manifests[0];
    for (d, m) in dirs.iter().zip(&manifests).skip(1) {
        if m.config_fingerprint != first.config_fingerprint {
            return Err(bad(format!(
                "{} ran another config ({}, fingerprint {}) than {} ({}, fingerprint {})",
                d.display(),
                m.config,
                m.config_fingerprint,
                dirs[0].display(),
                first.config,
                first.config_fingerprint
            )));
        }
    }
    let mut all = Done::new();
    for (d, m) in dirs.iter().zip(&manifests) {
        let done = scan(&d.join(RESULTS), &m.config_fingerprint, false)?;
        if done.len() != m.shard_units {
            return Err(bad(format!(
                "{} is unfinished ({} of its {} cell-splits): resume it first",
                d.display(),
                done.len(),
                m.shard_units
            )));
        }
        for (k, u) in done {
            if all.insert(k, u).is_some() {
                return Err(bad(format!(
                    "cell {} split {} is in more than one folder (the same shard twice?)",
                    k.0, k.1
                )));
            }
        }
    }
    if all.len() != first.units {
        return Err(bad(format!(
            "the folders hold {} of the run's {} cell-splits: a shard is missing",
            all.len(),
            first.units
        )));
    }
    let results = out.join(RESULTS);
    if (results.exists() || out.join(MANIFEST).exists()) && !force {
        return Err(bad(format!(
            "{} already holds results: choose another folder, or pass --force to replace them",
            out.display()
        )));
    }
    // (creates `out`) A run or another merge writing `out` is refused.
    let _lock = lock(out)?;
    for d in dirs {
        copy_tree(&d.join("models"), &out.join("models"))?;
    }
    write_canonical(&results, &all)?;
    let manifest = Manifest {
        shard: None,
        shard_units: first.units,
        ..first.clone()
    };
    write_manifest(out, &manifest)?;
    Ok(manifest)
}

fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    let Ok(entries) = std::fs::read_dir(from) else {
        return Ok(());
    };
    std::fs::create_dir_all(to).map_err(|e| GlassboxError::io(to, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| GlassboxError::io(from, e))?;
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target).map_err(|e| GlassboxError::io(&target, e))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest() -> Manifest {
        Manifest {
            config: "grid.toml".into(),
            config_fingerprint: "f".into(),
            shard: Some("1/2".into()),
            cells: 1,
            splits: 1,
            units: 1,
            shard_units: 1,
            protocol: super::super::grid::Protocol::Holdout,
            axes: Vec::new(),
            blocks: Vec::new(),
        }
    }

    #[test]
    fn a_second_run_into_a_folder_being_written_is_refused_until_the_first_ends() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("shard-1");
        let (first, _) = open(&out, &manifest(), false).unwrap();
        first.append_unit(&[line(0, 0, 0, 1)]).unwrap();
        // (flock: a second open file description conflicts even in the same process)
        for force in [false, true] {
            let e = open(&out, &manifest(), force).err().unwrap().to_string();
            assert!(e.contains("being written by another glassbox run"), "{e}");
        }
        // Refused without touching what the first run wrote.
        assert_eq!(
            std::fs::read_to_string(out.join(RESULTS)).unwrap(),
            format!("{}\n", line(0, 0, 0, 1))
        );
        drop(first);
        let (_, done) = open(&out, &manifest(), false).unwrap();
        assert_eq!(done.len(), 1);
    }

    fn line(cell: usize, split: usize, start: usize, n: usize) -> String {
        format!(
            r#"{{"config_fingerprint":"f","cell":{cell},"split":{split},"start":{start},"unit_solves":{n},"x":[1.0]}}"#
        )
    }

    #[test]
    fn scan_drops_a_partial_line_and_an_unfinished_unit_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(RESULTS);
        let whole = format!(
            "{}\n{}\n{}\n",
            line(0, 0, 0, 2),
            line(0, 0, 1, 2),
            line(1, 0, 0, 2)
        );
        std::fs::write(&path, format!("{whole}{{\"config_fin")).unwrap();
        assert!(scan(&path, "f", false).is_err());
        let done = scan(&path, "f", true).unwrap();
        assert_eq!(done.len(), 1);
        assert_eq!(done[&(0, 0)].lines.len(), 2);
        let kept = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            kept,
            format!("{}\n{}\n", line(0, 0, 0, 2), line(0, 0, 1, 2))
        );
        assert!(scan(&path, "g", true)
            .unwrap_err()
            .to_string()
            .contains("another config"));
        // A unit twice is an error.
        std::fs::write(&path, format!("{kept}{kept}")).unwrap();
        assert!(scan(&path, "f", true)
            .unwrap_err()
            .to_string()
            .contains("twice"));
    }
}
