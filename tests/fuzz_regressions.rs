//! Replays the fuzzing corpus (`fuzz/corpus/TARGET/`) and every crash reproducer
//! (`fuzz/artifacts/TARGET/`) through the fuzz targets' own entry points
//! (`fuzz/entry_points.rs`), so that CI, which does not run the fuzzer, keeps every input
//! the fuzzer ever found wrong from coming back. An input passes when its entry point returns
//! (bad input is an error, never a panic).

#[path = "../fuzz/entry_points.rs"]
mod entry_points;

use std::path::{Path, PathBuf};

/// The files of `fuzz/corpus/TARGET` and `fuzz/artifacts/TARGET` (sorted, so a failure
/// names the same file every time).
fn inputs(target: &str) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let mut files = Vec::new();
    for dir in ["corpus", "artifacts"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir).join(target)) else {
            continue;
        };
        files.extend(
            entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.is_file()),
        );
    }
    files.sort();
    files
}

fn replay(target: &str, entry: fn(&[u8]), at_least: usize) {
    let files = inputs(target);
    assert!(
        files.len() >= at_least,
        "fuzz/corpus/{target} holds {} file(s), expected at least {at_least}",
        files.len()
    );
    for file in files {
        let bytes = std::fs::read(&file).unwrap();
        let outcome = std::panic::catch_unwind(|| entry(&bytes));
        assert!(outcome.is_ok(), "{} panicked", file.display());
    }
}

#[test]
fn csv_reader_corpus_and_crashes() {
    replay("csv_reader", entry_points::csv_reader, 10);
}

#[test]
fn config_parser_corpus_and_crashes() {
    replay("config_parser", entry_points::config_parser, 10);
}

#[test]
fn model_loader_corpus_and_crashes() {
    replay("model_loader", entry_points::model_loader, 14);
}
