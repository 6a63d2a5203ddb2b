//! Hostile inputs through the `glassbox` command, end to end: every one is either a single
//! error line with exit status 1 and no results file, or a documented, sensible behaviour
//! (exit 0): never a panic. The inputs are issue #9's list: an empty file, a header only,
//! ragged rows, duplicate column names, non-UTF-8 bytes, NaN and infinity cells, a constant
//! column, a constant target, one row per class, 10^6 columns, a label never seen in
//! training at predict time, a model file from another formulation, and configs with a
//! negative time limit or lambda.
//!
//! The fast learners (CART: no solver; logistic_l1 on IPOPT) keep the whole file to a few
//! seconds.

use glassbox::data::{CsvOptions, MinMaxScaler, Table};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn glassbox(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_glassbox"))
        .args(args)
        .output()
        .expect("the glassbox binary runs")
}

/// A scratch folder holding the files of one test.
struct Scratch(tempfile::TempDir);

impl Scratch {
    fn new() -> Self {
        Scratch(tempfile::tempdir().unwrap())
    }

    fn path(&self, name: &str) -> PathBuf {
        self.0.path().join(name)
    }

    fn write(&self, name: &str, bytes: impl AsRef<[u8]>) -> String {
        let p = self.path(name);
        std::fs::write(&p, bytes).unwrap();
        p.to_str().unwrap().to_string()
    }

    /// Runs a config with `data.path` = `data` (a file of this folder), the formulation
    /// and solver tables given, one split; returns the output and the out folder.
    fn run(&self, data: &str, formulation: &str, solver: &str) -> (Output, PathBuf) {
        let config = format!(
            "[data]\npath = \"{data}\"\n[split]\nrepeats = 1\ntest_fraction = 0.25\n\
             [formulation]\n{formulation}\n{solver}\n"
        );
        let config = self.write("config.toml", config);
        let out = self.path("out");
        let output = glassbox(&["run", &config, "--out", out.to_str().unwrap(), "--force"]);
        (output, out)
    }
}

const CART: &str = "name = \"cart\"\ndepth = 2";
const CART_REGRESSION: &str = "name = \"cart\"\ncriterion = \"squared_error\"\ndepth = 2";
const LOGISTIC: &str = "name = \"logistic_l1\"\nlambda = 0.01";
const IPOPT: &str = "[solver]\nname = \"ipopt\"\ntime_limit = 20.0";

/// Asserts a clean failure: exit status 1, one line on stderr starting `error: ` and
/// holding every needle, no panic, no results file in `out`.
fn assert_error(output: &Output, out: &Path, needles: &[&str]) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "stderr: {stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "one line: {stderr}");
    assert!(stderr.starts_with("error: "), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    for n in needles {
        assert!(stderr.contains(n), "'{n}' not in: {stderr}");
    }
    assert!(!out.join("results.jsonl").exists(), "results were written");
}

/// Asserts a successful run; returns its results lines.
fn assert_success(output: &Output, out: &Path) -> Vec<serde_json::Value> {
    assert!(
        output.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    std::fs::read_to_string(out.join("results.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// 24 rows, two numeric features and a categorical one, labels `a` / `b` by x1 + x2.
fn classification_csv() -> String {
    let mut text = String::from("x1,x2,color,target\n");
    for i in 0..24 {
        let (x1, x2) = (i as f64 * 0.37 % 5.0, (i * 7 % 11) as f64 - 5.0);
        let color = ["red", "green", "blue"][i % 3];
        let label = if x1 + x2 > 0.0 { "a" } else { "b" };
        text.push_str(&format!("{x1},{x2},{color},{label}\n"));
    }
    text
}

#[test]
fn empty_file() {
    let s = Scratch::new();
    let data = s.write("d.csv", "");
    let (output, out) = s.run(&data, CART, "");
    assert_error(&output, &out, &["d.csv", "the file is empty"]);
}

#[test]
fn header_only() {
    let s = Scratch::new();
    let data = s.write("d.csv", "x1,x2,target\n");
    let (output, out) = s.run(&data, CART, "");
    assert_error(&output, &out, &["d.csv", "no data rows"]);
}

#[test]
fn ragged_rows() {
    let s = Scratch::new();
    let data = s.write("d.csv", "x1,x2,target\n1,2,a\n3,b\n4,5,b\n");
    let (output, out) = s.run(&data, CART, "");
    assert_error(&output, &out, &["line 3 has 2 field(s)", "header has 3"]);
    let data = s.write("e.csv", "x1,x2,target\n1,2,a\n3,4,5,b\n");
    let (output, out) = s.run(&data, CART, "");
    assert_error(&output, &out, &["line 3 has 4 field(s)"]);
}

#[test]
fn duplicate_column_names() {
    let s = Scratch::new();
    let data = s.write("d.csv", "x1,x2, x1 ,target\n1,2,3,a\n4,5,6,b\n");
    let (output, out) = s.run(&data, CART, "");
    assert_error(&output, &out, &["'x1' appears twice", "columns 1 and 3"]);
}

#[test]
fn non_utf8_bytes() {
    let s = Scratch::new();
    let data = s.write("d.csv", b"x1,x2,target\n1,2,a\n3,\xff\xfe,b\n".as_slice());
    let (output, out) = s.run(&data, CART, "");
    assert_error(&output, &out, &["column 'x2', line 3", "not valid UTF-8"]);
    let data = s.write("h.csv", b"x1,\xc3\x28,target\n1,2,a\n".as_slice());
    let (output, out) = s.run(&data, CART, "");
    assert_error(&output, &out, &["header column 2", "not valid UTF-8"]);
}

#[test]
fn nan_and_infinity_cells() {
    let s = Scratch::new();
    for cell in ["NaN", "nan", "inf", "-infinity", "1e400"] {
        let data = s.write("d.csv", format!("x1,x2,target\n1,2,a\n3,{cell},b\n5,6,a\n"));
        let (output, out) = s.run(&data, CART, "");
        assert_error(
            &output,
            &out,
            &["column 'x2', line 3", cell, "not a finite number"],
        );
    }
    // In a regression target as well.
    let data = s.write("r.csv", "x1,target\n1,2\n3,inf\n5,6\n");
    let (output, out) = s.run(&data, CART_REGRESSION, "");
    assert_error(
        &output,
        &out,
        &["column 'target', line 3", "not a finite number"],
    );
}

/// Documented: a constant column scales to 0 (scale 1, see `MinMaxScaler`), is never used by
/// a split, and the model still fits and predicts.
#[test]
fn constant_column_is_harmless() {
    let s = Scratch::new();
    let mut text = String::from("x1,constant,target\n");
    for i in 0..24 {
        text.push_str(&format!(
            "{},7.5,{}\n",
            i,
            if i % 2 == 0 { "a" } else { "b" }
        ));
    }
    let data = s.write("d.csv", text);
    let (output, out) = s.run(&data, LOGISTIC, IPOPT);
    let results = assert_success(&output, &out);
    assert_eq!(results.len(), 1);
    assert!(results[0]["train_accuracy"].as_f64().unwrap().is_finite());
    let predict = glassbox(&[
        "predict",
        out.join("models/split-0.json").to_str().unwrap(),
        &data,
    ]);
    assert!(predict.status.success());
    assert!(String::from_utf8_lossy(&predict.stdout).contains("accuracy"));
}

/// A constant classification target is an error (one class); a constant regression target
/// is documented to fit the constant.
#[test]
fn constant_target() {
    let s = Scratch::new();
    let data = s.write("c.csv", "x1,target\n1,a\n2,a\n3,a\n4,a\n");
    let (output, out) = s.run(&data, CART, "");
    assert_error(&output, &out, &["single class 'a'", "at least two"]);

    let data = s.write("r.csv", "x1,target\n1,3.5\n2,3.5\n3,3.5\n4,3.5\n5,3.5\n");
    let (output, out) = s.run(&data, CART_REGRESSION, "");
    assert_success(&output, &out);
    let predict = glassbox(&[
        "predict",
        out.join("models/split-0.json").to_str().unwrap(),
        &data,
    ]);
    assert!(predict.status.success());
    let stdout = String::from_utf8_lossy(&predict.stdout);
    assert_eq!(
        stdout.lines().filter(|l| *l == "3.5").count(),
        5,
        "{stdout}"
    );
}

#[test]
fn one_row_per_class() {
    let s = Scratch::new();
    let data = s.write("d.csv", "x1,target\n1,a\n2,b\n3,c\n");
    let (output, out) = s.run(&data, CART, "");
    assert_error(
        &output,
        &out,
        &["d.csv", "class 'a' has only 1 sample", "at least 2"],
    );
    let (output, out) = s.run(
        &data,
        "name = \"oct\"\ndepth = 2",
        "[solver]\nname = \"cbc\"",
    );
    assert_error(&output, &out, &["d.csv", "class 'a' has only 1 sample"]);
}

/// A header of 10^6 columns (about 7 MB) and `rows` data rows; column 0 separates the
/// classes `a` / `b`, the others are noise. `last` names the last feature column.
fn wide_csv(rows: usize, last: &str) -> String {
    let p = 1_000_000;
    let mut text = String::with_capacity((rows + 1) * p * 8);
    for j in 0..p - 1 {
        text.push_str(&format!("c{j},"));
    }
    text.push_str(&format!("{last},target\n"));
    for i in 0..rows {
        for j in 0..p {
            let v = if j == 0 { i % 2 } else { j % 3 };
            text.push_str(&format!("{v},"));
        }
        text.push_str(if i % 2 == 0 { "a\n" } else { "b\n" });
    }
    text
}

/// 10^6 feature columns are read, encoded, scaled and split (in linear time: the header's
/// duplicate check and the encoding's match by name are hash lookups). A whole
/// `glassbox run` of CART on such a file works too but takes tens of seconds in the dev
/// profile (README, "Reliability"), so the end-to-end test below is the error path.
#[test]
fn a_million_columns_are_read_encoded_and_scaled() {
    let text = wide_csv(4, "c999999");
    let table = Table::from_reader("wide.csv", text.as_bytes(), &CsvOptions::default()).unwrap();
    assert_eq!(table.feature_names.len(), 1_000_000);
    let data = table.encode_classification().unwrap();
    assert_eq!((data.n_samples(), data.n_features()), (4, 1_000_000));
    let scaler = MinMaxScaler::fit(&data.x);
    let z = scaler.transform(&data.x);
    assert_eq!(z[(1, 0)], 1.0);
    assert_eq!(z[(1, 1)], 0.0); // a constant column maps to 0
    let (train, test) = data.stratified_split(0.5, 1).unwrap();
    assert_eq!((train.len(), test.len()), (2, 2));
}

/// A duplicate name at the end of a 10^6-column header is found at once (the check was
/// quadratic: 5 * 10^11 comparisons).
#[test]
fn a_million_columns_with_a_duplicate_name() {
    let s = Scratch::new();
    let data = s.write("wide.csv", wide_csv(2, "c17"));
    let (output, out) = s.run(&data, "name = \"cart\"\ndepth = 1", "");
    assert_error(
        &output,
        &out,
        &["'c17' appears twice", "columns 18 and 1000000"],
    );
}

/// What `--out` names is written as the user means it: never over the command's own input,
/// through a symbolic link to its target, into `/dev/null` (a rename replaced such paths by
/// regular files); labels with commas or quotes are quoted; a regressor's bad target value
/// fails the command before anything is written; and CRLF files' lines are counted right.
#[test]
fn predict_outputs_go_where_the_user_means() {
    let s = Scratch::new();
    let text = classification_csv().replace(",a\n", ",\"a, \"\"x\"\"\"\n");
    let data = s.write("d.csv", &text);
    let (output, out) = s.run(&data, CART, "");
    assert_success(&output, &out);
    let model = out.join("models/split-0.json");
    let model = model.to_str().unwrap();
    for input in [&data, model] {
        let predict = glassbox(&["predict", model, &data, "--out", input]);
        assert_error(&predict, &out.join("none"), &["would overwrite the input"]);
    }
    assert_eq!(std::fs::read_to_string(&data).unwrap(), text);

    let real = s.write("real.csv", "old");
    let link = s.path("link.csv");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let predict = glassbox(&["predict", model, &data, "--out", link.to_str().unwrap()]);
    assert!(predict.status.success());
    assert!(link.symlink_metadata().unwrap().file_type().is_symlink());
    let written = std::fs::read_to_string(&real).unwrap();
    let mut rows = csv::Reader::from_reader(written.as_bytes());
    assert_eq!(rows.headers().unwrap().get(1), Some("proba_a, \"x\""));
    assert!(rows.records().all(|r| r.unwrap().len() == 3));
    let predict = glassbox(&["predict", model, &data, "--out", "/dev/null"]);
    assert!(predict.status.success());
    assert!(!std::fs::metadata("/dev/null").unwrap().is_file());

    // A regressor: a text target fails before --out is written, naming its line; the same
    // file with CRLF line ends names the same line.
    let reg = s.write(
        "r.csv",
        "x,target\n1,1.5\n2,2.5\n3,3.5\n4,4.5\n5,5.5\n6,6.5\n7,7.5\n8,8.5\n",
    );
    let (output, out) = s.run(&reg, CART_REGRESSION, "");
    assert_success(&output, &out);
    let model = out.join("models/split-0.json");
    let preds = s.path("p.csv");
    for (name, eol) in [("bad.csv", "\n"), ("bad_crlf.csv", "\r\n")] {
        let bad = s.write(name, ["x,target", "1,1", "2,high", "3,3"].join(eol) + eol);
        let predict = glassbox(&[
            "predict",
            model.to_str().unwrap(),
            &bad,
            "--out",
            preds.to_str().unwrap(),
        ]);
        assert_error(
            &predict,
            &out.join("none"),
            &["line 3: 'high' is not a number"],
        );
        assert!(
            !preds.exists(),
            "{name}: predictions written before the error"
        );
        // predict reads no config: its remedies name none of its keys.
        for (row, remedy) in [
            ("two,2", "trained on numbers in this column"),
            ("inf,2", "leave the row out"),
        ] {
            let bad = s.write(name, ["x,target", "1,1", row].join(eol) + eol);
            let predict = glassbox(&["predict", model.to_str().unwrap(), &bad]);
            assert_error(&predict, &out.join("none"), &["column 'x', line 3", remedy]);
            assert!(!String::from_utf8_lossy(&predict.stderr).contains("data."));
        }
    }
}

/// A column whose values span more than an f64 holds (max - min infinite) is refused when a
/// run encodes it, naming the column: scaled by an infinite range, its values made every
/// S-ORCT solve end in a numerical error, and logistic_l1 said only "non-finite value".
#[test]
fn a_column_whose_range_overflows_is_named() {
    let s = Scratch::new();
    let text = classification_csv().replace(
        "x1,x2,color,target\n",
        "x1,x2,color,target\n1e308,1,red,a\n-1e308,1,red,b\n",
    );
    let data = s.write("d.csv", text);
    for (formulation, solver) in [(CART, ""), (LOGISTIC, IPOPT)] {
        let (output, out) = s.run(&data, formulation, solver);
        assert_error(
            &output,
            &out,
            &["column 'x1'", "from -1e308 to 1e308", "rescale the column"],
        );
    }
    let reg = s.write(
        "r.csv",
        "x,target\n1,1e308\n2,-1e308\n3,1\n4,2\n5,3\n6,4\n7,5\n8,6\n",
    );
    let (output, out) = s.run(&reg, CART_REGRESSION, "");
    assert_error(&output, &out, &["column 'target'", "rescale the column"]);
    // A finite range whose squares overflow: the fit wrote inf / NaN metrics and exit 0.
    let huge = s.write(
        "h.csv",
        "x,target\n1,1e160\n2,2e160\n3,3e160\n4,4e160\n5,5e160\n6,6e160\n7,7e160\n8,8e160\n",
    );
    let (output, out) = s.run(&huge, CART_REGRESSION, "");
    assert_error(
        &output,
        &out,
        &[
            "column 'target', line 2",
            "1e160 is beyond +-1e150",
            "rescale the target",
        ],
    );
    let fine = s.write(
        "f.csv",
        "x,target\n1,1e149\n2,2e149\n3,3e149\n4,4e149\n5,5e149\n6,6e149\n7,7e149\n8,8e149\n",
    );
    let (output, _) = s.run(&fine, CART_REGRESSION, "");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// A row of huge but finite values overflows a linear model's scores (1e308 times a weight
/// is infinite, and infinities of both signs give NaN): the row is named with its largest
/// value, and no NaN is written as a probability.
#[test]
fn a_row_that_overflows_the_scores_is_named() {
    let s = Scratch::new();
    let iris = format!("{}/../shared/datasets/iris.csv", env!("CARGO_MANIFEST_DIR"));
    let (output, out) = s.run(&iris, LOGISTIC, IPOPT);
    assert_success(&output, &out);
    let model = out.join("models/split-0.json");
    let huge = s.write(
        "huge.csv",
        "sepal_length,sepal_width,petal_length,petal_width,target\n\
         5.1,3.5,1.4,0.2,Iris-setosa\n1e308,1e308,1e308,1e308,Iris-setosa\n",
    );
    let preds = s.path("p.csv");
    let predict = glassbox(&[
        "predict",
        model.to_str().unwrap(),
        &huge,
        "--out",
        preds.to_str().unwrap(),
    ]);
    assert_error(
        &predict,
        &out.join("none"),
        &[
            "line 3: the model's output",
            "not a finite number",
            "1e308 in column",
        ],
    );
    assert!(!preds.exists(), "predictions written before the error");
    let dash = glassbox(&["predict", model.to_str().unwrap(), &huge, "--out", "-"]);
    assert_error(&dash, &out.join("none"), &["not standard output"]);
}

/// Documented (`glassbox predict`): a row whose label the model never saw is predicted as
/// usual and counted as an error, with a note; a feature level never seen is an error.
#[test]
fn label_never_seen_in_training() {
    let s = Scratch::new();
    let data = s.write("d.csv", classification_csv());
    let (output, out) = s.run(&data, CART, "");
    assert_success(&output, &out);
    let model = out.join("models/split-0.json");
    let new = s.write("new.csv", "x1,x2,color,target\n1,2,red,a\n1,2,red,zzz\n");
    let predict = glassbox(&["predict", model.to_str().unwrap(), &new]);
    assert!(predict.status.success());
    let stdout = String::from_utf8_lossy(&predict.stdout);
    assert!(
        stdout.contains("note: 1 rows have a label the model was not trained on"),
        "{stdout}"
    );
    // The one row of a known label leaves one class: no AUC (the unseen row counted as a
    // negative made one up).
    assert!(stdout.contains("auc undefined"), "{stdout}");

    let new = s.write("level.csv", "x1,x2,color,target\n1,2,purple,a\n");
    let predict = glassbox(&["predict", model.to_str().unwrap(), &new]);
    assert_error(
        &predict,
        &out.join("none"),
        &["level 'purple' was not seen"],
    );

    // A categorical column the file lacks is named as the model's (predict reads no config),
    // and a missing value's remedy names no config key.
    let new = s.write("nocolor.csv", "x1,x2,target\n1,2,a\n");
    let predict = glassbox(&["predict", model.to_str().unwrap(), &new]);
    assert_error(
        &predict,
        &out.join("none"),
        &["there is no column 'color', which the model was trained with"],
    );
    let new = s.write("gap.csv", "x1,x2,color,target\n1,?,red,a\n");
    let predict = glassbox(&["predict", model.to_str().unwrap(), &new]);
    assert_error(&predict, &out.join("none"), &["missing value ('?')"]);
    assert!(!String::from_utf8_lossy(&predict.stderr).contains("drop_missing"));
}

#[test]
fn model_file_from_another_formulation() {
    let s = Scratch::new();
    let data = s.write("d.csv", classification_csv());
    let (output, out) = s.run(&data, CART, "");
    assert_success(&output, &out);
    let cart_model = out.join("models/split-0.json");
    let cart_model = cart_model.to_str().unwrap();

    // As a warm start of another formulation.
    let config = format!(
        "[data]\npath = \"{data}\"\n[formulation]\nname = \"logistic_l1\"\n{IPOPT}\n\
         [multistart]\nwarm_start = \"{cart_model}\"\n"
    );
    let config = s.write("warm.toml", config);
    let out2 = s.path("out2");
    let output = glassbox(&["run", &config, "--out", out2.to_str().unwrap()]);
    assert_error(
        &output,
        &out2,
        &["this is a 'cart' model, expected a 'logistic_l1' model"],
    );

    // As TAO's start at another depth than the config's (TAO refines the tree it starts
    // from: the line said depth 1 of a depth-2 tree).
    let config = format!(
        "[data]\npath = \"{data}\"\n[formulation]\nname = \"tao\"\ndepth = 3\n\
         [multistart]\nwarm_start = \"{cart_model}\"\n"
    );
    let config = s.write("tao.toml", config);
    let output = glassbox(&["run", &config, "--out", out2.to_str().unwrap()]);
    assert_error(
        &output,
        &out2,
        &[
            "depth = 3, but the warm-start tree has depth",
            "TAO refines",
        ],
    );

    // To a command that needs another kind.
    let output = glassbox(&["explain", cart_model, &data, "--out", "/dev/null"]);
    assert_error(
        &output,
        &out2,
        &["explain works on the models of sorrt, cct, crt", "'cart'"],
    );

    // A JSON file that is no model, and a model whose kind no loader knows.
    let other = s.write(
        "other.json",
        "{\"glassbox_model\": \"nonesuch\", \"model\": {}}",
    );
    let output = glassbox(&["predict", &other, &data]);
    assert_error(&output, &out2, &["'nonesuch' models cannot be used"]);
    let other = s.write("plain.json", "[1, 2, 3]");
    let output = glassbox(&["show", &other]);
    assert_error(&output, &out2, &["not a glassbox model"]);
}

#[test]
fn a_warm_start_model_of_other_columns_is_refused() {
    let s = Scratch::new();
    let data = s.write("d.csv", classification_csv());
    // The same rows with x1 and x2 swapped: the same number of columns, so each
    // formulation's own check passed and TAO read the tree's x1 splits on x2.
    let swapped: String = classification_csv()
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            format!("{},{},{},{}\n", f[1], f[0], f[2], f[3])
        })
        .collect();
    let swapped = s.write("swapped.csv", swapped);
    // TAO from a CART tree (a learner), logistic_l1 from its own model (an NLP).
    for (fitted, formulation, solver) in [(CART, "name = \"tao\"", ""), (LOGISTIC, LOGISTIC, IPOPT)]
    {
        let (output, out) = s.run(&data, fitted, solver);
        assert_success(&output, &out);
        let model = s.path("model.json");
        std::fs::rename(out.join("models/split-0.json"), &model).unwrap();
        let model = model.to_str().unwrap();
        for (k, file) in [&data, &swapped].into_iter().enumerate() {
            let config = format!(
                "[data]\npath = \"{file}\"\n[formulation]\n{formulation}\n{solver}\n\
                 [multistart]\nwarm_start = \"{model}\"\n"
            );
            let config = s.write("warm.toml", config);
            let out2 = s.path(&format!("out{k}"));
            let output = glassbox(&["run", &config, "--out", out2.to_str().unwrap(), "--force"]);
            if k == 0 {
                assert_success(&output, &out2);
                continue;
            }
            assert_error(
                &output,
                &out2,
                &[
                    "warm_start",
                    "[x2, x1, color=green, color=red]",
                    "same order",
                ],
            );
        }
    }
}

#[test]
fn a_forest_too_large_to_hold_is_refused() {
    // 10^12 trees aborted the process on their bookkeeping's allocation.
    let s = Scratch::new();
    let data = s.write("d.csv", classification_csv());
    for formulation in ["name = \"forest\"", "name = \"tmo\"\ndepth = 1"] {
        let (output, out) = s.run(
            &data,
            &format!("{formulation}\nn_trees = 1000000000000"),
            "",
        );
        assert_error(
            &output,
            &out,
            &["n_trees must be", "1000000", "got 1000000000000"],
        );
    }
}

#[test]
fn negative_time_limit_iteration_limit_or_lambda() {
    let s = Scratch::new();
    let data = s.write("d.csv", classification_csv());
    for (solver, needle) in [
        ("time_limit = -1.0", "time_limit must be a positive number"),
        ("time_limit = nan", "time_limit must be a positive number"),
        ("iteration_limit = -5", "iteration_limit"),
        (
            "integrality_tolerance = 0.0",
            "integrality_tolerance must be positive",
        ),
        (
            "integrality_tolerance = 1e-9",
            "take an integrality_tolerance (it is an NLP method",
        ),
    ] {
        let (output, out) = s.run(
            &data,
            LOGISTIC,
            &format!("[solver]\nname = \"ipopt\"\n{solver}"),
        );
        assert_error(&output, &out, &[needle]);
    }
    for (formulation, solver, needle) in [
        (
            "name = \"logistic_l1\"\nlambda = -0.5",
            IPOPT,
            "lambda must be a finite number >= 0",
        ),
        (
            "name = \"sorct\"\ndepth = 1\nlambda_local = -1.0",
            IPOPT,
            "lambda_local must be a finite number >= 0, got -1",
        ),
        (
            "name = \"l0tree\"\ndepth = 1\nlambda_global = -1.0",
            IPOPT,
            "lambda_global must be a finite number >= 0, got -1",
        ),
        (
            "name = \"loss_tree\"\ndepth = 1\nlambda = -1.0",
            "[solver]\nname = \"highs\"",
            "lambda must be a finite number >= 0, got -1",
        ),
        (
            "name = \"sorct\"\ndepth = 1\nlambda_global = inf",
            IPOPT,
            "lambda_global must be a finite number >= 0, got inf",
        ),
        (
            "name = \"l0tree\"\ndepth = 1\ngamma = -1.0",
            IPOPT,
            "l0tree: gamma must be positive, got -1",
        ),
        (
            "name = \"loss_tree\"\ndepth = 1\nloss = \"misclassification\"\nepsilon = 1e-9",
            "[solver]\nname = \"highs\"",
            "is too small against big-M",
        ),
        (
            "name = \"oct\"\ndepth = 1\nalpha = -1.0",
            "[solver]\nname = \"cbc\"",
            "alpha must be a number >= 0",
        ),
        (
            "name = \"cart\"\nccp_alpha = -1.0",
            "",
            "ccp_alpha must be a finite number >= 0",
        ),
    ] {
        let (output, out) = s.run(&data, formulation, solver);
        assert_error(&output, &out, &[needle]);
    }
}

/// A raw option of the right type but out of its backend's range fails when the config is
/// read, for every backend: no out folder is created (it used to be left with an empty
/// `results.jsonl` that blocked the corrected rerun).
#[test]
fn out_of_range_backend_options_fail_before_anything_is_written() {
    let s = Scratch::new();
    let data = s.write("d.csv", classification_csv());
    for (formulation, solver, needle) in [
        (
            LOGISTIC,
            "name = \"ipopt\"\n[solver.raw]\nmu_init = -1.0",
            "mu_init",
        ),
        (
            LOGISTIC,
            "name = \"lbfgs\"\n[solver.raw]\nrefine_after = -3",
            "refine_after",
        ),
        (
            LOGISTIC,
            "name = \"lbfgs\"\n[solver.raw]\nmemory = 0",
            "memory",
        ),
        (
            LOGISTIC,
            "name = \"lbfgs\"\nrelative_gap = 0.01",
            "relative_gap",
        ),
        (
            "name = \"oct\"\ndepth = 1",
            "name = \"highs\"\n[solver.raw]\nmip_heuristic_effort = 2.0",
            "mip_heuristic_effort",
        ),
        (
            "name = \"oct\"\ndepth = 1",
            "name = \"cbc\"\n[solver.raw]\nmaxSolutions = 0",
            "maxSolutions",
        ),
    ] {
        let (output, out) = s.run(&data, formulation, &format!("[solver]\n{solver}"));
        assert_error(&output, &out, &[needle]);
        assert!(!out.exists(), "{solver}: the out folder was created");
    }
}

/// A model kind (the seed `fuzz/corpus/model_loader/KIND.json`), an edit of its model that
/// still parses but disagrees with itself, and words the error must hold.
type InconsistentModel = (&'static str, fn(&mut serde_json::Value), &'static str);

/// A saved model of every kind (the fuzzer's seed corpus), edited so that it still parses but
/// disagrees with itself.
fn inconsistent_models() -> Vec<InconsistentModel> {
    use serde_json::json;
    vec![
        ("sorct", |m| m["a"][1] = json!(3), "a 3 x 1 matrix holds 4"),
        (
            "sorct",
            |m| m["a"] = json!([[], 4294967296u64, 4294967296u64]),
            "a 4294967296 x 4294967296 matrix holds 0",
        ),
        ("sorct", |m| m["classes"] = json!([]), "0 class(es)"),
        (
            "sorrt",
            |m| m["mu"] = json!([0.0]),
            "the length of mu is 1, expected 3",
        ),
        (
            "sorrt",
            |m| m["depth"] = json!(60),
            "depth 60 is outside 1..=12",
        ),
        (
            "logistic_l1",
            |m| m["coefficients"]["intercepts"] = json!([0.0, 1.0]),
            "the number of intercepts is 2, expected 1",
        ),
        (
            "logistic_l1",
            |m| m["classes"] = json!(["a"]),
            "1 class(es), expected at least 2",
        ),
        (
            "loss_tree",
            |m| m["depth"] = json!(3),
            "the number of planes is 1, expected 7",
        ),
        (
            "oct",
            |m| m["leaves"][0]["class"] = json!(7),
            "leaf 0 predicts class 7",
        ),
        (
            "flowoct",
            |m| m["kind"] = json!("oct"),
            "the tree's kind is 'oct', expected 'flowoct'",
        ),
        (
            "oct_h",
            |m| m["depth"] = json!(9),
            "depth 9 is outside 1..=4",
        ),
        (
            "oct",
            |m| m["scaler"]["min"] = json!([0.0]),
            "the scaler has 1 minimum(s)",
        ),
        (
            "cart",
            |m| m["tree"]["nodes"][0]["branch"]["left"] = json!(99),
            "names child 99",
        ),
        (
            "cart",
            |m| m["tree"]["nodes"][0]["branch"]["right"] = json!(0),
            "node 0 is reached twice (the tree has a cycle)",
        ),
        (
            "cart_reg",
            |m| m["tree"]["nodes"][0]["value"] = json!([1.0, 2.0]),
            "node 0 holds 2 value(s), expected 1",
        ),
        (
            "tao",
            |m| m["tree"]["nodes"][0]["branch"]["split"]["feature"] = json!(17),
            "node 0 tests feature 17 but the model has 4",
        ),
        (
            "tmo",
            |m| m["feature_names"] = json!(["x1"]),
            "1 feature names",
        ),
        (
            "forest",
            |m| m["trees"] = json!([]),
            "the model has no trees",
        ),
        (
            "l0tree",
            |m| m["tree"]["depth"] = json!(40),
            "depth 40 is outside 1..=12",
        ),
        (
            "l0tree",
            |m| m["tree"]["c"] = json!([[1.0, 0.0], 1, 2]),
            "the rows of c is 1, expected 2",
        ),
        (
            "ors",
            |m| m["rules"][0]["feature"] = json!(9),
            "rule 1 tests feature 9 but the model has 4",
        ),
        (
            "ogrs",
            |m| m["rules"][1]["points"] = json!(1_000_000_000_000i64),
            "|points| sum to",
        ),
        (
            "ogrs",
            |m| m["classes"] = json!(["a", "b", "c"]),
            "3 class(es), expected 2",
        ),
        (
            "tao_oblique",
            |m| m["tree"]["nodes"][0]["branch"][0]["coefficients"] = json!([1.0]),
            "node 0 has 1 coefficient(s), expected 4",
        ),
        (
            "tao_oblique",
            |m| m["tree"]["nodes"][0]["branch"][2] = json!(0),
            "node 0 is reached twice",
        ),
        (
            "cct",
            |m| m["policy"]["layers"][0]["inputs"] = json!(3),
            "policy: layer 0 has 3 inputs, expected 4",
        ),
        (
            "cct",
            |m| m["policy"]["scale"][2] = json!(0.0),
            "feature 2 has scale 0, expected a positive scale",
        ),
        (
            "cct",
            |m| m["training_choices"] = json!([1]),
            "1 training count(s) for 2 trees",
        ),
        (
            "crt",
            |m| m["task"] = json!({"classification": {"classes": ["a"]}}),
            "a 'crt' model with a classification task",
        ),
        (
            "crt",
            |m| m["policy"]["mean"] = json!([0.0]),
            "policy: 1 mean(s)",
        ),
    ]
}

/// Issue #9: a model file that parses but is inconsistent (sizes that disagree, a tree link
/// out of range or in a cycle, a huge depth, a policy that does not chain) is one error line
/// naming the problem at `predict`, `show`, `draw` and `explain`, never a panic, and no
/// output file is written. Every model kind has a case; the same files, unedited, load.
#[test]
fn inconsistent_model_files_are_errors_naming_the_problem() {
    let dir = Scratch::new();
    let data = dir.write("data.csv", classification_csv());
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/model_loader");
    let read = |kind: &str| -> serde_json::Value {
        let text = std::fs::read_to_string(corpus.join(format!("{kind}.json"))).unwrap();
        serde_json::from_str(&text).unwrap()
    };
    let mut kinds: Vec<&str> = inconsistent_models().iter().map(|c| c.0).collect();
    kinds.dedup();
    for kind in &kinds {
        let model = dir.write("valid.json", read(kind).to_string());
        let output = glassbox(&["show", &model]);
        assert!(
            output.status.success(),
            "{kind}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    for (case, (kind, edit, needle)) in inconsistent_models().into_iter().enumerate() {
        let mut file = read(kind);
        edit(&mut file["model"]);
        let model = dir.write(&format!("{case}-{kind}.json"), file.to_string());
        let csv = dir.path(&format!("{case}.csv"));
        let svg = dir.path(&format!("{case}.svg"));
        let (csv, svg) = (csv.to_str().unwrap(), svg.to_str().unwrap());
        let commands: [&[&str]; 4] = [
            &["predict", &model, &data, "--out", csv],
            &["show", &model],
            &["draw", &model, svg],
            &["explain", &model, &data, "--out", csv],
        ];
        for args in commands {
            let output = glassbox(args);
            let stderr = String::from_utf8_lossy(&output.stderr);
            // `draw` and `explain` refuse the kinds they do not handle before reading them.
            if (args[0] == "draw" && stderr.contains("cannot be drawn"))
                || (args[0] == "explain" && stderr.contains("explain works on"))
            {
                continue;
            }
            assert_error(
                &output,
                dir.0.path(),
                &[&format!("{case}-{kind}.json"), needle],
            );
            for written in [csv, svg] {
                assert!(
                    !Path::new(written).exists(),
                    "{kind} {}: wrote {written}",
                    args[0]
                );
            }
        }
    }
}

/// A CART file whose tree is a chain of 50,000 splits (valid: every node reached once) is
/// shown and predicts: its rules are written without recursion (a recursive walk may overflow
/// the stack) and indented at most 64 levels (a chain would otherwise print O(n^2) spaces).
#[test]
fn a_tree_deeper_than_the_stack_is_shown_and_predicts() {
    let dir = Scratch::new();
    let data = dir.write("data.csv", classification_csv());
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/model_loader");
    let text = std::fs::read_to_string(corpus.join("cart.json")).unwrap();
    let mut file: serde_json::Value = serde_json::from_str(&text).unwrap();
    let n = 50_000;
    let leaf = serde_json::json!({"branch": null, "value": [1.0, 0.0], "n_samples": 1,
        "weight": 1.0, "impurity": 0.0});
    let mut nodes = Vec::with_capacity(2 * n + 1);
    for t in 0..n {
        // Node 2t splits; its left child is leaf 2t + 1, its right the next split.
        nodes.push(serde_json::json!({
            "branch": {"split": {"feature": 0, "threshold": -(t as f64)},
                       "left": 2 * t + 1, "right": 2 * t + 2},
            "value": [0.5, 0.5], "n_samples": 2, "weight": 2.0, "impurity": 0.5}));
        nodes.push(leaf.clone());
    }
    nodes.push(leaf);
    file["model"]["tree"]["nodes"] = serde_json::Value::Array(nodes);
    let model = dir.write("chain.json", file.to_string());
    let show = glassbox(&["show", &model]);
    let stdout = String::from_utf8_lossy(&show.stdout);
    assert!(
        show.status.success(),
        "{}",
        String::from_utf8_lossy(&show.stderr)
    );
    assert!(
        stdout.lines().count() > 2 * n,
        "{} lines",
        stdout.lines().count()
    );
    assert!(stdout.len() < 1000 * n, "{} bytes", stdout.len());
    let predict = glassbox(&["predict", &model, &data]);
    assert!(
        predict.status.success(),
        "{}",
        String::from_utf8_lossy(&predict.stderr)
    );
}

/// A table whose only feature is a categorical column of one level has no feature column
/// once encoded: every formulation says so (S-ORCT, S-ORRT, l0tree and logistic_l1 failed
/// inside the solver on a NaN start; loss_tree said "needs binary labels ... 2 classes").
#[test]
fn no_feature_columns_are_named_by_every_formulation() {
    let s = Scratch::new();
    let mut text = String::from("c,target\n");
    for i in 0..20 {
        text.push_str(&format!("only,{}\n", i % 2));
    }
    let data = s.write("nofeat.csv", text);
    for (formulation, solver) in [
        ("name = \"sorct\"\ndepth = 1", IPOPT),
        ("name = \"l0tree\"\ndepth = 1", IPOPT),
        ("name = \"logistic_l1\"", IPOPT),
        ("name = \"sorrt\"\ndepth = 1", IPOPT),
        (
            "name = \"loss_tree\"\ndepth = 1",
            "[solver]\nname = \"highs\"",
        ),
        (CART, ""),
    ] {
        let (output, out) = s.run(&data, formulation, solver);
        assert_error(&output, &out, &["the data have no feature columns"]);
    }
}

/// OGRS's rules each split the rows on a feature of their own, so fewer varying features
/// than rules is said before the MILP (whose backend could only say "infeasible").
#[test]
fn ogrs_with_fewer_varying_features_than_rules_says_so() {
    let s = Scratch::new();
    let mut text = String::from("x1,x2,x3,target\n");
    for i in 0..24 {
        text.push_str(&format!("1,{},2,{}\n", i % 5, ["a", "b"][i % 2]));
    }
    let data = s.write("const.csv", text);
    let (output, out) = s.run(
        &data,
        "name = \"ogrs\"\nrules = 2",
        "[solver]\nname = \"highs\"\ntime_limit = 20.0",
    );
    assert_error(
        &output,
        &out,
        &["OGRS's 2 rules", "but 1 feature(s) vary", "set rules <= 1"],
    );
}
