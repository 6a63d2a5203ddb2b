//! `glassbox generate`: the S-ORRT paper's Section 4.4 data as CSV, read back by glassbox's
//! own loader (header, 25 features, numeric target last), seeded, refusing to overwrite.

use glassbox::data::{CsvOptions, Table};
use std::process::{Command, Output};

fn glassbox(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_glassbox"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn generate_writes_a_csv_glassbox_reads_and_refuses_to_overwrite() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("synthetic.csv");
    let p = path.to_str().unwrap();
    let out = glassbox(&["generate", "--rows", "1000", "--seed", "5", "--out", p]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let table = Table::from_csv(&path, &CsvOptions::default()).unwrap();
    assert_eq!(table.n_rows(), 1000);
    assert_eq!(table.feature_names.len(), 25);
    assert_eq!(table.feature_names[24], "x25");
    let data = table.encode_regression().unwrap();
    assert_eq!(data.n_features(), 25);
    // Two groups of responses around 5 + 1.5 and -15 - 1.5, about half each.
    let high = data.y.iter().filter(|&&y| y > -5.0).count();
    assert_eq!(high, 500);

    let first = std::fs::read(&path).unwrap();
    let again = glassbox(&["generate", "--rows", "1000", "--seed", "6", "--out", p]);
    assert_eq!(again.status.code(), Some(1));
    let message = String::from_utf8_lossy(&again.stderr);
    assert!(
        message.contains("--force") && message.contains("synthetic.csv"),
        "{message}"
    );
    assert_eq!(std::fs::read(&path).unwrap(), first);
    let forced = glassbox(&[
        "generate", "--rows", "1000", "--seed", "5", "--out", p, "--force",
    ]);
    assert!(forced.status.success());
    assert_eq!(std::fs::read(&path).unwrap(), first, "same seed, same file");

    let zero = glassbox(&["generate", "--rows", "0", "--out", p, "--force"]);
    assert_eq!(zero.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&zero.stderr).contains("--rows"));
}

/// A folder that does not exist: one line naming the file asked for (not the temporary file
/// the write goes through) with the OS's reason once, and nothing written.
#[test]
fn generate_into_a_missing_folder_names_the_file_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("missing").join("synthetic.csv");
    let out = glassbox(&["generate", "--rows", "10", "--out", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let message = String::from_utf8_lossy(&out.stderr);
    assert_eq!(message.trim_end().lines().count(), 1, "{message}");
    assert!(
        message.contains(path.to_str().unwrap()) && !message.contains("synthetic.csv.tmp"),
        "{message}"
    );
    assert_eq!(
        message.matches("No such file or directory").count(),
        1,
        "{message}"
    );
    assert!(!dir.path().join("missing").exists());
}

/// A folder as `--out` is named as one (with `--force` it read "Not a directory"), and a
/// negative `--noise` reaches the range check (clap took "-0.1" for a flag).
#[test]
fn generate_names_a_folder_and_a_negative_noise() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().to_str().unwrap();
    for force in [&[][..], &["--force"][..]] {
        let mut args = vec!["generate", "--rows", "10", "--out", folder];
        args.extend(force);
        let out = glassbox(&args);
        assert_eq!(out.status.code(), Some(1));
        let message = String::from_utf8_lossy(&out.stderr);
        assert!(message.contains("is a folder"), "{message}");
    }
    let csv = dir.path().join("x.csv");
    let out = glassbox(&[
        "generate",
        "--rows",
        "100",
        "--kind",
        "sparse-tree",
        "--noise",
        "-0.1",
        "--out",
        csv.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let message = String::from_utf8_lossy(&out.stderr);
    assert!(
        message.contains("noise must be at least 0 and below") && message.contains("got -0.1"),
        "{message}"
    );
    assert!(!csv.exists());
}

/// `--kind sparse-tree`: the sparse oblique tree's data, a classification set glassbox reads
/// with the classes and features asked for; its options are refused for the other kind.
#[test]
fn generate_sparse_tree_classification_data() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tree.csv");
    let p = path.to_str().unwrap();
    let out = glassbox(&[
        "generate",
        "--kind",
        "sparse-tree",
        "--rows",
        "300",
        "--features",
        "8",
        "--seed",
        "4",
        "--out",
        p,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("relevant features") && said.contains("0.95"),
        "{said}"
    );
    let table = Table::from_csv(&path, &CsvOptions::default()).unwrap();
    let data = table.encode_classification().unwrap();
    assert_eq!(
        (data.n_samples(), data.n_features(), data.n_classes()),
        (300, 8, 3)
    );
    let refused = glassbox(&[
        "generate", "--rows", "10", "--depth", "3", "--out", p, "--force",
    ]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--kind sparse-tree"));
    let bad = glassbox(&[
        "generate",
        "--kind",
        "sparse-tree",
        "--rows",
        "10",
        "--relevant",
        "30",
        "--out",
        p,
        "--force",
    ]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("relevant"));
}

/// Ctrl-C (or a scheduler's SIGTERM) during a long `generate` leaves neither the partial
/// temporary file (hundreds of MB, hidden as `.NAME.tmpPID`) nor the output.
#[test]
fn an_interrupted_generate_leaves_no_partial_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("big.csv");
    let mut child = Command::new(env!("CARGO_BIN_EXE_glassbox"))
        .args([
            "generate",
            "--rows",
            "20000000",
            "--out",
            out.to_str().unwrap(),
        ])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let tmp = dir.path().join(format!(".big.csv.tmp{}", child.id()));
    // Interrupted once the temporary file is being written.
    let started = std::time::Instant::now();
    while !tmp.exists() && started.elapsed().as_secs() < 60 {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(tmp.exists(), "the temporary file never appeared");
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

/// `--out -` is no way to ask for standard output: refused, no file named `-`.
#[test]
fn generate_refuses_a_dash_for_out() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_glassbox"))
        .current_dir(dir.path())
        .args(["generate", "--rows", "5", "--out", "-"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--out -: generate writes a file"));
    assert!(!dir.path().join("-").exists());
}
