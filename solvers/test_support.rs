//! What the backends' unit tests share: raw option maps, checks of a registry entry, and
//! running one unit test in a child process to see what it prints.

use glassbox_core::backend::BackendEntry;
use glassbox_core::options::RawOptionValue;
use std::collections::BTreeMap;
use std::path::Path;

/// Raw backend options from name-value pairs.
pub(crate) fn raw(pairs: &[(&str, RawOptionValue)]) -> BTreeMap<String, RawOptionValue> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect()
}

/// Checks a backend's registry entry: its name, its problem kind, and options that all
/// have help and distinct names.
pub(crate) fn check_entry(entry: &BackendEntry, name: &str, problem_kind: &str) {
    assert_eq!(entry.name, name);
    assert_eq!(entry.problem_kind(), problem_kind);
    assert!(entry.options.iter().all(|o| !o.help.is_empty()));
    let mut names: Vec<&str> = entry.options.iter().map(|o| o.name).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), entry.options.len(), "duplicate option names");
}

/// Runs the unit test `test` (its full path, like `solvers::cbc::tests::silent_child`)
/// alone in a child process of this test binary, with the variable `env_var` set to
/// `mode`, in the folder `dir` when given; its stdout and stderr. Fails when the child
/// fails.
pub(crate) fn run_child(
    test: &str,
    env_var: &str,
    mode: &str,
    dir: Option<&Path>,
) -> (String, String) {
    let mut command = std::process::Command::new(std::env::current_exe().unwrap());
    command
        .args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env(env_var, mode);
    if let Some(dir) = dir {
        command.current_dir(dir);
    }
    let output = command.output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "child failed:\n{stdout}\n{stderr}");
    (stdout, stderr)
}

/// Checks that the child run of the test `test` printed nothing on stdout but the test
/// harness's own lines, and nothing on stderr.
pub(crate) fn assert_nothing_printed(test: &str, stdout: &str, stderr: &str) {
    let own_line = format!("test {test} ... ok");
    let leaked: Vec<&str> = stdout
        .lines()
        .map(str::trim)
        .filter(|l| {
            !(l.is_empty()
                || l.starts_with("running ")
                || *l == own_line
                || l.starts_with("test result: ok"))
        })
        .collect();
    assert!(leaked.is_empty(), "printed at verbosity 0:\n{stdout}");
    assert!(
        stderr.trim().is_empty(),
        "printed at verbosity 0:\n{stderr}"
    );
}
