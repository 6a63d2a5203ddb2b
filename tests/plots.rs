//! `glassbox plot` and `glassbox draw`: the aggregation behind every plot on hand examples
//! (the mean over splits of the selected start, the grid layout, which lambda varies), each
//! plot written as PNG and SVG from small results files, fitted trees of every drawable
//! kind drawn from real fits, and bad input (an empty file, missing fields, a wrong
//! extension, a model that cannot be drawn) giving one error and no file.

use glassbox::compare::TestMetric;
use glassbox::experiment::SolveRecord;
use glassbox::result_plots::{
    grid_of, lambda_label, setting_means, varying_lambda, Lambda, SettingMeans,
};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// One results line as `glassbox run` writes it.
#[allow(clippy::too_many_arguments)]
fn line(
    dataset: &str,
    lambda_local: f64,
    lambda_global: f64,
    split: usize,
    start: usize,
    selected: bool,
    status: &str,
    accuracy: f64,
    delta_local: f64,
    delta_global: f64,
) -> String {
    format!(
        r#"{{"dataset":"{dataset}","formulation":"sorct","solver":"ipopt","depth":2,"lambda_local":{lambda_local},"lambda_global":{lambda_global},"gamma":512.0,"split":{split},"split_seed":1,"start":{start},"seed":{start},"selected":{selected},"status":"{status}","raw_status":"x","objective":0.1,"train_accuracy":1.0,"test_accuracy":{accuracy},"test_balanced_accuracy":{accuracy},"delta_local":{delta_local},"delta_global":{delta_global},"solve_seconds":0.1,"iterations":10,"n_train":10,"n_test":5}}"#
    )
}

fn record(text: &str) -> SolveRecord {
    serde_json::from_str(text).expect("a results line")
}

#[test]
fn means_over_splits_of_the_selected_start() {
    let lines = [
        // Setting (0, 0): split 0 selects start 1 (0.9), split 1 selects start 0 (0.7).
        line("d", 0.0, 0.0, 0, 0, false, "locally_optimal", 0.1, 0.0, 0.0),
        line("d", 0.0, 0.0, 0, 1, true, "locally_optimal", 0.9, 10.0, 0.0),
        line(
            "d",
            0.0,
            0.0,
            1,
            0,
            true,
            "locally_optimal",
            0.7,
            30.0,
            20.0,
        ),
        line(
            "d",
            0.0,
            0.0,
            1,
            1,
            false,
            "locally_optimal",
            0.2,
            90.0,
            90.0,
        ),
        // Setting (0.5, 0): one split; the other split's selected start has no point.
        line(
            "d",
            0.5,
            0.0,
            0,
            0,
            true,
            "locally_optimal",
            0.6,
            50.0,
            25.0,
        ),
        line("d", 0.5, 0.0, 1, 0, true, "error", 0.0, 0.0, 0.0),
        // Setting (0.5, 0.25): nothing selected with a point, so left out.
        line(
            "d",
            0.5,
            0.25,
            0,
            0,
            false,
            "locally_optimal",
            0.6,
            50.0,
            25.0,
        ),
    ];
    let records: Vec<SolveRecord> = lines.iter().map(|l| record(l)).collect();
    let refs: Vec<&SolveRecord> = records.iter().collect();
    let means = setting_means(&refs, TestMetric::Accuracy);
    assert_eq!(means.len(), 2);
    assert_eq!(means[0].setting.lambda_local, 0.0);
    assert_eq!(means[0].splits, 2);
    assert!((means[0].metric - 0.8).abs() < 1e-12);
    assert!((means[0].delta_local - 20.0).abs() < 1e-12);
    assert!((means[0].delta_global - 10.0).abs() < 1e-12);
    assert_eq!(means[1].setting.lambda_local, 0.5);
    assert_eq!(means[1].splits, 1);
    assert!((means[1].metric - 0.6).abs() < 1e-12);
    // Only lambda_L varies among the kept settings.
    assert_eq!(varying_lambda(&means), Some(Lambda::Local));
}

fn means(cells: &[(f64, f64, f64)]) -> Vec<SettingMeans> {
    let lines: Vec<String> = cells
        .iter()
        .map(|&(l, g, acc)| line("d", l, g, 0, 0, true, "optimal", acc, 0.0, 0.0))
        .collect();
    let records: Vec<SolveRecord> = lines.iter().map(|l| record(l)).collect();
    let refs: Vec<&SolveRecord> = records.iter().collect();
    setting_means(&refs, TestMetric::Accuracy)
}

#[test]
fn grid_layout_and_missing_cells() {
    // lambda_L in {0, 1}, lambda_G in {0, 2, 4}; (1, 4) not run.
    let m = means(&[
        (0.0, 0.0, 0.1),
        (0.0, 2.0, 0.2),
        (0.0, 4.0, 0.3),
        (1.0, 0.0, 0.4),
        (1.0, 2.0, 0.5),
    ]);
    let grid = grid_of(&m, |s| s.metric);
    assert_eq!(grid.rows, vec![0.0, 1.0]);
    assert_eq!(grid.columns, vec![0.0, 2.0, 4.0]);
    assert_eq!(grid.values[0], vec![Some(0.1), Some(0.2), Some(0.3)]);
    assert_eq!(grid.values[1], vec![Some(0.4), Some(0.5), None]);
    // Both lambdas vary: no path.
    assert_eq!(varying_lambda(&m), None);
    // Only lambda_G varies.
    let m = means(&[(0.0, 0.0, 0.1), (0.0, 2.0, 0.2)]);
    assert_eq!(varying_lambda(&m), Some(Lambda::Global));
}

#[test]
fn lambda_labels() {
    assert_eq!(lambda_label(0.0), "0");
    assert_eq!(lambda_label(0.125), "2^-3");
    assert_eq!(lambda_label(4.0), "2^2");
    assert_eq!(lambda_label(0.003), "3.00e-3");
}

fn glassbox(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_glassbox"))
        .args(args)
        .output()
        .expect("the glassbox binary runs")
}

fn ok(output: &Output) -> String {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).to_string()
}

fn fails(output: &Output) -> String {
    assert!(!output.status.success(), "expected a failure");
    let err = String::from_utf8_lossy(&output.stderr).to_string();
    assert_eq!(err.trim().lines().count(), 1, "one error line: {err}");
    assert!(!err.contains("panicked"), "{err}");
    err
}

/// A valid, non-empty PNG or SVG file.
fn assert_image(path: &Path) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(bytes.len() > 200, "{} is too small", path.display());
    if path.extension().unwrap() == "png" {
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "{}", path.display());
    } else {
        let text = String::from_utf8_lossy(&bytes);
        assert!(text.contains("<svg") && text.trim_end().ends_with("</svg>"));
    }
}

/// Nothing but `expected` in `dir` (no temporary or partial files).
fn assert_only(dir: &Path, expected: &[&str]) {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    names.sort();
    let mut expected: Vec<String> = expected.iter().map(|s| s.to_string()).collect();
    expected.sort();
    assert_eq!(names, expected);
}

fn write(dir: &Path, name: &str, lines: &[String]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

/// A 3 x 3 grid of two data sets, two splits, two starts per cell.
fn grid_results(dir: &Path) -> PathBuf {
    let mut lines = Vec::new();
    for dataset in ["iris", "wine"] {
        for (i, l) in [0.0, 0.01, 0.1].iter().enumerate() {
            for (j, g) in [0.0, 0.25, 0.5].iter().enumerate() {
                for split in 0..2 {
                    for start in 0..2 {
                        let acc = 0.95 - 0.05 * (i + j) as f64 - 0.01 * split as f64;
                        let dl = 20.0 * i as f64 + 5.0 * j as f64;
                        let dg = 25.0 * j as f64;
                        lines.push(line(
                            dataset,
                            *l,
                            *g,
                            split,
                            start,
                            start == 1,
                            "locally_optimal",
                            acc,
                            dl,
                            dg,
                        ));
                    }
                }
            }
        }
    }
    write(dir, "grid.jsonl", &lines)
}

#[test]
fn every_plot_written_as_png_and_svg() {
    let dir = tempfile::tempdir().unwrap();
    let results = grid_results(dir.path());
    let r = results.to_str().unwrap();
    for ext in ["png", "svg"] {
        let out = dir.path().join(format!("heat.{ext}"));
        let stdout = ok(&glassbox(&[
            "plot",
            "heatmap",
            r,
            "--out",
            out.to_str().unwrap(),
        ]));
        assert!(stdout.contains("wrote"));
        assert_image(&out);
        if ext == "svg" {
            // The lambda labels stand upright: rotated ones render garbled in PNGs.
            let svg = std::fs::read_to_string(&out).unwrap();
            assert!(!svg.contains("rotate(90,"), "{svg}");
        }
    }
    // A path: the lambda_G = 0 column only.
    let mut path_lines = Vec::new();
    for (i, l) in [0.0, 0.01, 0.1, 1.0].iter().enumerate() {
        for split in 0..3 {
            path_lines.push(line(
                "iris",
                *l,
                0.0,
                split,
                0,
                true,
                "optimal",
                0.9 - 0.1 * i as f64,
                25.0 * i as f64,
                0.0,
            ));
        }
    }
    let path = write(dir.path(), "path.jsonl", &path_lines);
    for ext in ["png", "svg"] {
        let out = dir.path().join(format!("lambda.{ext}"));
        ok(&glassbox(&[
            "plot",
            "lambda",
            path.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ]));
        assert_image(&out);
        let out = dir.path().join(format!("scatter.{ext}"));
        ok(&glassbox(&[
            "plot",
            "scatter",
            path.to_str().unwrap(),
            r,
            "--label",
            "path",
            "--label",
            "grid",
            "--sparsity",
            "local",
            "--out",
            out.to_str().unwrap(),
        ]));
        assert_image(&out);
    }
    // The grid is no path: a clear error, no file.
    let bad = dir.path().join("bad.png");
    let err = fails(&glassbox(&[
        "plot",
        "lambda",
        r,
        "--out",
        bad.to_str().unwrap(),
    ]));
    assert!(err.contains("both lambda_L and lambda_G vary"), "{err}");
    assert!(!bad.exists());
}

#[test]
fn bad_input_is_one_error_and_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let empty = write(dir.path(), "empty.jsonl", &[]);
    let out = dir.path().join("out.png");
    let o = out.to_str().unwrap();
    let err = fails(&glassbox(&[
        "plot",
        "heatmap",
        empty.to_str().unwrap(),
        "--out",
        o,
    ]));
    assert!(
        err.contains("empty.jsonl") && err.contains("no results lines"),
        "{err}"
    );
    // A line missing a field (delta_global).
    let text = line("d", 0.0, 0.0, 0, 0, true, "optimal", 0.9, 0.0, 0.0)
        .replace(r#","delta_global":0"#, "");
    let missing = write(dir.path(), "missing.jsonl", &[text]);
    let err = fails(&glassbox(&[
        "plot",
        "heatmap",
        missing.to_str().unwrap(),
        "--out",
        o,
    ]));
    assert!(
        err.contains("missing.jsonl") && err.contains("delta_global"),
        "{err}"
    );
    // Lines without lambdas (a CART run) cannot be drawn against lambda.
    let text = line("d", 0.0, 0.0, 0, 0, true, "heuristic", 0.9, 0.0, 0.0).replace(
        r#""lambda_local":0,"lambda_global":0"#,
        r#""lambda_local":null,"lambda_global":null"#,
    );
    let cart = write(dir.path(), "cart.jsonl", &[text]);
    let err = fails(&glassbox(&[
        "plot",
        "lambda",
        cart.to_str().unwrap(),
        "--out",
        o,
    ]));
    assert!(
        err.contains("cart.jsonl") && err.contains("lambda_local"),
        "{err}"
    );
    // ... but it is a point of a scatter.
    let scatter = dir.path().join("scatter.svg");
    ok(&glassbox(&[
        "plot",
        "scatter",
        cart.to_str().unwrap(),
        "--out",
        scatter.to_str().unwrap(),
    ]));
    // A file that is not there; a plot that is neither PNG nor SVG; too many labels.
    let err = fails(&glassbox(&["plot", "heatmap", "no/such.jsonl", "--out", o]));
    assert!(err.contains("no/such.jsonl"), "{err}");
    let err = fails(&glassbox(&[
        "plot",
        "heatmap",
        cart.to_str().unwrap(),
        "--out",
        dir.path().join("out.pdf").to_str().unwrap(),
    ]));
    assert!(err.contains(".png or .svg"), "{err}");
    // A folder that does not exist: named, and the OS's reason not repeated.
    let nowhere = dir.path().join("nowhere").join("out.svg");
    let err = fails(&glassbox(&[
        "plot",
        "scatter",
        cart.to_str().unwrap(),
        "--out",
        nowhere.to_str().unwrap(),
    ]));
    assert!(
        err.contains(nowhere.to_str().unwrap()) && err.contains("does not exist"),
        "{err}"
    );
    assert!(!err.contains("backend error"), "{err}");
    let err = fails(&glassbox(&[
        "plot",
        "scatter",
        cart.to_str().unwrap(),
        "--label",
        "a",
        "--label",
        "b",
        "--out",
        o,
    ]));
    assert!(err.contains("labels"), "{err}");
    let err = fails(&glassbox(&[
        "plot",
        "heatmap",
        cart.to_str().unwrap(),
        "--out",
        cart.to_str().unwrap(),
    ]));
    assert!(err.contains("would overwrite the input"), "{err}");
    assert_only(
        dir.path(),
        &["empty.jsonl", "missing.jsonl", "cart.jsonl", "scatter.svg"],
    );
}

fn datasets() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/datasets")
}

/// Fits one model of a formulation on iris (or boston) with `glassbox run`; its path.
fn fit(dir: &Path, name: &str, dataset: &str, formulation: &str, solver: &str) -> PathBuf {
    let config = dir.join(format!("{name}.toml"));
    let solver = if solver.is_empty() {
        String::new()
    } else {
        format!("[solver]\nname = \"{solver}\"\ntime_limit = 10.0\n")
    };
    std::fs::write(
        &config,
        format!(
            "[data]\npath = \"{}\"\n\n[split]\ntest_fraction = 0.25\nrepeats = 1\nseed = 1\n\n\
             [formulation]\n{formulation}\n{solver}\n[multistart]\nstarts = 1\nseed = 1\n",
            datasets().join(dataset).display()
        ),
    )
    .unwrap();
    let out = dir.join(name);
    ok(&glassbox(&[
        "run",
        config.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]));
    out.join("models/split-0.json")
}

#[test]
fn fitted_trees_drawn() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let models = [
        fit(
            d,
            "sorct",
            "iris.csv",
            "name = \"sorct\"\ndepth = 2\nlambda_local_log2 = -2\n",
            "ipopt",
        ),
        fit(
            d,
            "l0tree",
            "iris.csv",
            "name = \"l0tree\"\ndepth = 2\n",
            "ipopt",
        ),
        fit(
            d,
            "sorrt",
            "boston_housing.csv",
            "name = \"sorrt\"\ndepth = 1\n",
            "ipopt",
        ),
        fit(d, "oct", "iris.csv", "name = \"oct\"\ndepth = 2\n", "highs"),
        fit(d, "cart", "iris.csv", "name = \"cart\"\ndepth = 3\n", ""),
    ];
    for (model, ext) in models.iter().zip(["svg", "png", "svg", "png", "svg"]) {
        let out = model.with_extension(ext);
        ok(&glassbox(&[
            "draw",
            model.to_str().unwrap(),
            out.to_str().unwrap(),
        ]));
        assert_image(&out);
        if ext == "svg" && glassbox::plot::font_available() {
            // The splits and leaves are there as text.
            let svg = std::fs::read_to_string(&out).unwrap();
            assert!(svg.contains("node 0"), "{svg}");
            assert!(svg.contains("leaf"), "{svg}");
        }
    }
    // S-ORCT's drawing names the features its root split uses, and only those.
    let svg = std::fs::read_to_string(models[0].with_extension("svg")).unwrap();
    if glassbox::plot::font_available() {
        assert!(svg.contains("petal") || svg.contains("sepal"), "{svg}");
        assert!(svg.contains("P("), "{svg}");
    }
    // A risk score is no tree; a bad extension; neither leaves a file.
    let forest = fit(
        d,
        "forest",
        "iris.csv",
        "name = \"forest\"\nn_trees = 2\n",
        "",
    );
    let out = d.join("forest.svg");
    let err = fails(&glassbox(&[
        "draw",
        forest.to_str().unwrap(),
        out.to_str().unwrap(),
    ]));
    assert!(err.contains("cannot be drawn"), "{err}");
    assert!(!out.exists());
    let err = fails(&glassbox(&[
        "draw",
        models[0].to_str().unwrap(),
        d.join("tree.txt").to_str().unwrap(),
    ]));
    assert!(err.contains(".png or .svg"), "{err}");
}

/// Runs `glassbox` with `args`, killed after `seconds` (a plot that loops must fail the
/// test, not hang it).
fn glassbox_within(args: &[&str], seconds: u64) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_glassbox"))
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the glassbox binary runs");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(seconds);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            child.kill().unwrap();
            panic!("glassbox {args:?} ran past {seconds} s");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn a_data_set_whose_selected_starts_all_failed_is_an_error_not_a_hang() {
    let dir = tempfile::tempdir().unwrap();
    // iris is fine; every wine solve failed (no test accuracy).
    let lines = vec![
        line("iris", 0.0, 0.0, 0, 0, true, "optimal", 0.9, 10.0, 5.0),
        line("iris", 0.1, 0.0, 0, 0, true, "optimal", 0.8, 20.0, 5.0),
        line("wine", 0.0, 0.0, 0, 0, true, "error", 0.9, 0.0, 0.0)
            .replace(r#""test_accuracy":0.9,"#, ""),
        line("wine", 0.1, 0.0, 0, 0, true, "error", 0.9, 0.0, 0.0)
            .replace(r#""test_accuracy":0.9,"#, ""),
    ];
    let results = write(dir.path(), "failed.jsonl", &lines);
    for kind in ["scatter", "lambda", "heatmap"] {
        let out = dir.path().join(format!("{kind}.svg"));
        let err = fails(&glassbox_within(
            &[
                "plot",
                kind,
                results.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
            ],
            60,
        ));
        assert!(
            err.contains("failed.jsonl") && err.contains("wine") && err.contains("failed"),
            "{kind}: {err}"
        );
    }
    assert_only(dir.path(), &["failed.jsonl"]);
}

/// The filled rectangles of an SVG heatmap other than white, as (width, height).
fn coloured_cells(svg: &Path) -> Vec<(u32, u32)> {
    let text = std::fs::read_to_string(svg).unwrap();
    let attr = |tag: &str, name: &str| -> Option<String> {
        let start = tag.find(&format!(" {name}=\""))? + name.len() + 3;
        Some(tag[start..].split('"').next()?.to_string())
    };
    text.split("<rect")
        .skip(1)
        .filter_map(|tag| {
            let fill = attr(tag, "fill")?;
            (fill != "#FFFFFF").then(|| {
                (
                    attr(tag, "width").unwrap().parse().unwrap(),
                    attr(tag, "height").unwrap().parse().unwrap(),
                )
            })
        })
        .collect()
}

#[test]
fn a_heatmap_of_one_lambda_column_draws_its_cells() {
    let dir = tempfile::tempdir().unwrap();
    // lambda_L varies, lambda_G is 0 throughout: a 3 x 1 grid.
    let lines: Vec<String> = [0.0, 0.1, 0.2]
        .iter()
        .enumerate()
        .map(|(i, &l)| {
            let v = i as f64;
            line(
                "d",
                l,
                0.0,
                0,
                0,
                true,
                "optimal",
                0.5 + 0.1 * v,
                10.0 * v,
                5.0 * v,
            )
        })
        .collect();
    let results = write(dir.path(), "column.jsonl", &lines);
    let out = dir.path().join("heatmap.svg");
    ok(&glassbox(&[
        "plot",
        "heatmap",
        results.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]));
    // Two of the three cells of each of the three panels are coloured (the largest value is
    // white), each a real rectangle: not collapsed to a line.
    let cells = coloured_cells(&out);
    assert_eq!(cells.len(), 6, "{cells:?}");
    assert!(cells.iter().all(|&(w, h)| w > 100 && h > 50), "{cells:?}");
}

#[test]
fn a_scatter_never_averages_two_formulations_of_one_file() {
    let dir = tempfile::tempdir().unwrap();
    // One file holding S-ORCT's line and CART's at the same depth and lambdas.
    let sorct = line("d", 0.0, 0.0, 0, 0, true, "optimal", 0.9, 10.0, 10.0);
    let cart = line("d", 0.0, 0.0, 0, 0, true, "heuristic", 0.5, 90.0, 90.0).replace(
        r#""formulation":"sorct","solver":"ipopt""#,
        r#""formulation":"cart","solver":"cart""#,
    );
    let results = write(dir.path(), "both.jsonl", &[sorct, cart]);
    let out = dir.path().join("scatter.svg");
    ok(&glassbox(&[
        "plot",
        "scatter",
        results.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]));
    // Two points (and the legend's marker), not one at their mean.
    let text = std::fs::read_to_string(&out).unwrap();
    assert_eq!(text.matches("<circle").count(), 3, "{text}");
}

#[test]
fn a_sparsity_no_split_has_is_left_out_not_drawn_as_nan() {
    let dir = tempfile::tempdir().unwrap();
    let lines = vec![
        line("d", 0.0, 0.0, 0, 0, true, "optimal", 0.9, 0.0, 0.0).replace(
            r#""delta_local":0,"delta_global":0"#,
            r#""delta_local":null,"delta_global":null"#,
        ),
        line("d", 0.1, 0.0, 0, 0, true, "optimal", 0.8, 50.0, 40.0),
    ];
    let results = write(dir.path(), "null.jsonl", &lines);
    // A null sparsity reads as NaN.
    assert!(record(&lines[0]).delta_local.is_nan());
    for kind in ["heatmap", "lambda"] {
        let out = dir.path().join(format!("{kind}.svg"));
        ok(&glassbox(&[
            "plot",
            kind,
            results.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ]));
        let text = std::fs::read_to_string(&out).unwrap();
        assert!(!text.contains("NaN"), "{kind}: {text}");
    }
}

#[test]
fn grid_lines_are_plotted_by_their_configured_lambdas_and_axes() {
    use glassbox::result_plots::Series;
    // Split 0 solved at gamma 512 with lambda_L 0.04, split 1 at gamma 1024 with 0.08: one
    // setting (configured 0.04), as S-ORCT's split_scale = "data" writes it. A nested
    // run's inner-fold line is model selection, not a result; a gamma axis makes its own
    // panel.
    // (lambda_L solved, split, accuracy, delta_L, configured lambdas written, gamma axis,
    // split role)
    let cases = [
        (0.04, 0, 0.9, 10.0, true, "2.0", "fold"),
        (0.08, 1, 0.8, 30.0, true, "2.0", "fold"),
        (0.08, 2, 0.1, 90.0, true, "2.0", "inner"),
        (0.04, 0, 0.7, 50.0, false, "512.0", "fold"),
    ];
    let lines: Vec<String> = cases
        .iter()
        .map(|&(lambda, split, accuracy, delta, configured, gamma, role)| {
            let base = line(
                "iris",
                lambda,
                0.0,
                split,
                1,
                true,
                "locally_optimal",
                accuracy,
                delta,
                0.0,
            );
            let configured = if configured {
                r#","configured_lambdas":[0.04,0.0]"#
            } else {
                ""
            };
            format!(
                r#"{}{configured},"grid":{{"lambda_local_log2":-3,"gamma":{gamma}}},"split_role":"{role}"}}"#,
                base.trim_end_matches('}')
            )
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "grid.jsonl", &lines);
    let series = Series::read(&path, None).unwrap();
    assert_eq!(series.records.len(), 3, "the inner line left out");
    assert_eq!(
        series.other_axes,
        ["gamma=2.0", "gamma=2.0", "gamma=512.0"],
        "the axes besides the lambdas"
    );
    let first_gamma: Vec<&SolveRecord> = series.records[..2].iter().collect();
    let means = setting_means(&first_gamma, TestMetric::Accuracy);
    assert_eq!(means.len(), 1, "{means:?}");
    assert_eq!(means[0].splits, 2);
    assert_eq!(means[0].setting.lambda_local, 0.04);
    assert!((means[0].metric - 0.85).abs() < 1e-12);
    // The whole file draws: a lambda plot of two panels (one per gamma).
    let out = dir.path().join("lambda.svg");
    let output = glassbox(&[
        "plot",
        "lambda",
        path.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    ok(&output);
    let svg = std::fs::read_to_string(&out).unwrap();
    // Titles are drawn where a font was found (without one the plot has no text).
    if svg.contains("<text") {
        assert!(
            svg.contains("gamma=2.0") && svg.contains("gamma=512.0"),
            "panel titles"
        );
    }
}
