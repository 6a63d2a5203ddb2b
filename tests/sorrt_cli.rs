//! The `glassbox` command on S-ORRT end to end: a regression config runs and writes R
//! squared, `show` prints the tree, `predict` prints R squared, and `explain` writes the
//! local explanations (7) (checked against finite differences of the prediction to 1e-5)
//! and the parallel-coordinates plot as SVG and PNG.

use glassbox::formulations::sorrt::SorrtModel;
use glassbox::model::Regressor;
use std::path::Path;
use std::process::{Command, Output};

fn boston() -> String {
    format!(
        "{}/../shared/datasets/boston_housing.csv",
        env!("CARGO_MANIFEST_DIR")
    )
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

fn run_boston(dir: &Path) -> std::path::PathBuf {
    let config = dir.join("c.toml");
    std::fs::write(
        &config,
        format!(
            "[data]\npath = \"{}\"\n[split]\nrepeats = 1\n[formulation]\nname = \"sorrt\"\n\
             depth = 2\n[solver]\nname = \"ipopt\"\n[multistart]\nstarts = 1\n",
            boston()
        ),
    )
    .unwrap();
    let out = dir.join("out");
    let stdout = ok(&glassbox(&[
        "run",
        config.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]));
    assert!(stdout.contains("test R2"), "{stdout}");
    out.join("models/split-0.json")
}

#[test]
fn run_show_predict_explain() {
    let dir = tempfile::tempdir().unwrap();
    let model_path = run_boston(dir.path());
    let shown = ok(&glassbox(&["show", model_path.to_str().unwrap()]));
    assert!(
        shown.contains("S-ORRT") && shown.contains("leaf 3"),
        "{shown}"
    );
    let predicted = ok(&glassbox(&[
        "predict",
        model_path.to_str().unwrap(),
        &boston(),
    ]));
    let r2: f64 = predicted
        .lines()
        .find_map(|l| l.strip_prefix("r2 "))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .expect("an r2 line");
    assert!(r2 > 0.5, "r2 {r2}");

    let csv = dir.path().join("explanations.csv");
    let svg = dir.path().join("fig.svg");
    ok(&glassbox(&[
        "explain",
        model_path.to_str().unwrap(),
        &boston(),
        "--out",
        csv.to_str().unwrap(),
        "--plot",
        svg.to_str().unwrap(),
    ]));
    assert!(std::fs::read_to_string(&svg).unwrap().contains("<svg"));
    let png = dir.path().join("fig.png");
    ok(&glassbox(&[
        "explain",
        model_path.to_str().unwrap(),
        &boston(),
        "--out",
        csv.to_str().unwrap(),
        "--plot",
        png.to_str().unwrap(),
    ]));
    assert_eq!(&std::fs::read(&png).unwrap()[1..4], b"PNG");

    // The CSV's gradients (user's units) against central differences of the prediction.
    let model = SorrtModel::load(&model_path).unwrap();
    let table = glassbox::data::Table::from_csv(Path::new(&boston()), &Default::default()).unwrap();
    let x = model.encoding.transform(&table).unwrap();
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let p = model.feature_names.len();
    let first_grad = header.iter().position(|h| *h == "grad_x1").unwrap();
    assert_eq!(header[first_grad + p], "scaled_grad_x1");
    let mut worst: f64 = 0.0;
    for (i, line) in lines.enumerate().step_by(5) {
        let cells: Vec<f64> = line.split(',').map(|c| c.parse().unwrap()).collect();
        for j in 0..p {
            let h = 1e-7 * model.scaler.scale_of(j);
            let mut plus = x.rows(i, 1).into_owned();
            let mut minus = plus.clone();
            plus[(0, j)] += h;
            minus[(0, j)] -= h;
            let fd = (model.predict(&plus)[0] - model.predict(&minus)[0]) / (2.0 * h);
            let g = cells[first_grad + j];
            worst = worst.max((g - fd).abs() / g.abs().max(1.0));
            let gs = cells[first_grad + p + j];
            let fds = fd * model.scaler.scale_of(j);
            worst = worst.max((gs - fds).abs() / gs.abs().max(1.0));
        }
    }
    assert!(
        worst < 1e-5,
        "explanations differ from finite differences by {worst}"
    );
}

#[test]
fn explain_refuses_a_classifier_and_a_bad_plot_name() {
    let dir = tempfile::tempdir().unwrap();
    let fake = dir.path().join("m.json");
    std::fs::write(
        &fake,
        "{\"glassbox_model\": \"sorct\", \"version\": \"0\", \"model\": {}}",
    )
    .unwrap();
    let out = glassbox(&[
        "explain",
        fake.to_str().unwrap(),
        &boston(),
        "--out",
        dir.path().join("e.csv").to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("explain works on the models of sorrt"));

    // A plot we cannot draw (.jpg) fails before anything is written (the extension is checked
    // before the model is even read: this one is an S-ORRT by kind only).
    std::fs::write(
        &fake,
        "{\"glassbox_model\": \"sorrt\", \"version\": \"0\", \"model\": {}}",
    )
    .unwrap();
    let csv = dir.path().join("e.csv");
    let out = glassbox(&[
        "explain",
        fake.to_str().unwrap(),
        &boston(),
        "--out",
        csv.to_str().unwrap(),
        "--plot",
        dir.path().join("e.jpg").to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    let message = String::from_utf8_lossy(&out.stderr);
    assert!(message.contains(".png or .svg"), "{message}");
    assert!(!csv.exists(), "the explanations were written");
}
