//! Tests of data loading, encoding, scaling, splits and the synthetic data set: the real
//! files under ../shared/datasets, and in-memory CSVs for every error case.

use glassbox::data::{
    stratified_kfold, stratified_split, synthetic_oblique, ClassificationData, ColumnData,
    ColumnEncoding, CsvOptions, DummyCoding, Encoding, MinMaxScaler, Table,
};
use glassbox::experiment::{EngineData, ExperimentConfig};
use glassbox::GlassboxError;
use std::path::{Path, PathBuf};

fn dataset(name: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/datasets")).join(name)
}

fn load(name: &str, options: &CsvOptions) -> glassbox::Result<Table> {
    Table::from_csv(&dataset(name), options)
}

fn categorical(names: &[&str]) -> CsvOptions {
    CsvOptions {
        categorical: names.iter().map(|s| s.to_string()).collect(),
        ..CsvOptions::default()
    }
}

fn read(text: &str) -> glassbox::Result<Table> {
    Table::from_reader("test.csv", text.as_bytes(), &CsvOptions::default())
}

/// The error's message, checked to be a data error about `test.csv`.
fn data_error(result: glassbox::Result<Table>) -> String {
    match result {
        Err(GlassboxError::Data { file, message }) => {
            assert_eq!(file, "test.csv");
            message
        }
        Err(other) => panic!("expected a data error, got {other:?}"),
        Ok(table) => panic!("expected an error, got a table of {} rows", table.n_rows()),
    }
}

fn assert_mentions(message: &str, parts: &[&str]) {
    for part in parts {
        assert!(
            message.contains(part),
            "message {message:?} should mention {part:?}"
        );
    }
}

// ---------------------------------------------------------------- real files

#[test]
fn iris_loads_150_by_4_with_3_classes() {
    let table = load("iris.csv", &CsvOptions::default()).unwrap();
    assert_eq!(table.n_rows(), 150);
    assert_eq!(
        table.feature_names,
        ["sepal_length", "sepal_width", "petal_length", "petal_width"]
    );
    assert!(table
        .columns
        .iter()
        .all(|c| matches!(c, ColumnData::Numeric(_))));
    let data = table.encode_classification().unwrap();
    assert_eq!(data.x.shape(), (150, 4));
    assert_eq!(
        data.classes,
        ["Iris-setosa", "Iris-versicolor", "Iris-virginica"]
    );
    assert_eq!(data.n_classes(), 3);
    assert_eq!(data.class_counts(), [50, 50, 50]);
    assert_eq!(data.x[(0, 0)], 5.1);
    assert_eq!(data.y[0], 0);
    assert!(data.source.ends_with("iris.csv"));
}

#[test]
fn monks3_encodes_to_p_11() {
    let options = categorical(&["a1", "a2", "a3", "a4", "a5", "a6"]);
    let data = load("monks3.csv", &options)
        .unwrap()
        .encode_classification()
        .unwrap();
    assert_eq!(data.x.shape(), (122, 11));
    assert_eq!(data.feature_names.len(), 11);
    assert_eq!(&data.feature_names[..3], ["a1=2", "a1=3", "a2=2"]);
    assert_eq!(data.classes, ["0", "1"]);
    // Dummies are 0/1 and at most one per raw column is set.
    assert!(data.x.iter().all(|&v| v == 0.0 || v == 1.0));
}

#[test]
fn monks_without_declaring_categorical_stays_numeric() {
    let data = load("monks3.csv", &CsvOptions::default())
        .unwrap()
        .encode_classification()
        .unwrap();
    assert_eq!(data.x.ncols(), 6);
}

#[test]
fn car_encodes_to_p_15_and_needs_mixed_columns_declared() {
    // 'doors' holds 2, 3, 4 and "5more": mixed, so it must be declared.
    let message = match load("car.csv", &CsvOptions::default()) {
        Err(GlassboxError::Data { message, .. }) => message,
        other => panic!("expected a data error, got {other:?}"),
    };
    assert_mentions(&message, &["'doors'", "5more", "data.categorical"]);

    let options = categorical(&["doors", "persons"]);
    let data = load("car.csv", &options)
        .unwrap()
        .encode_classification()
        .unwrap();
    assert_eq!(data.x.shape(), (1728, 15));
    assert_eq!(data.n_classes(), 4);
    assert!(data.feature_names.contains(&"doors=5more".to_string()));
    // Numeric levels sort before... as text when not all numeric: "2" < "3" < "4" < "5more".
    let doors = data
        .encoding
        .columns
        .iter()
        .find(|c| c.name() == "doors")
        .unwrap();
    match doors {
        ColumnEncoding::Dummies { levels, kept, .. } => {
            assert_eq!(levels, &["2", "3", "4", "5more"]);
            assert_eq!(kept, &["3", "4", "5more"]);
        }
        other => panic!("doors should be dummies, got {other:?}"),
    }
}

#[test]
fn german_credit_encodes_to_p_48() {
    let data = load("german_credit.csv", &CsvOptions::default())
        .unwrap()
        .encode_classification()
        .unwrap();
    assert_eq!(data.x.shape(), (1000, 48));
    assert_eq!(data.classes, ["1", "2"]);
}

#[test]
fn heart_cleveland_missing_values_error_then_drop() {
    let message = match load("heart_cleveland.csv", &CsvOptions::default()) {
        Err(GlassboxError::Data { message, .. }) => message,
        other => panic!("expected a data error, got {other:?}"),
    };
    assert_mentions(&message, &["'x13'", "line 89", "'?'", "drop_missing"]);

    let options = CsvOptions {
        drop_missing: true,
        ..CsvOptions::default()
    };
    let table = load("heart_cleveland.csv", &options).unwrap();
    assert_eq!(table.n_rows(), 297);
    assert!(!table.line_numbers.contains(&89));
    let data = table.encode_classification().unwrap();
    assert_eq!(data.x.shape(), (297, 13));
}

#[test]
fn regression_file_encodes_numeric_target() {
    let data = load("boston_housing.csv", &CsvOptions::default())
        .unwrap()
        .encode_regression()
        .unwrap();
    assert_eq!(data.x.shape(), (506, 13));
    assert_eq!(data.y[0], 24.0);
    let sub = data.rows(&[1, 0]);
    assert_eq!(sub.y, [21.6, 24.0]);
    assert_eq!(sub.x.shape(), (2, 13));
}

#[test]
fn missing_file_is_an_io_error_naming_the_path() {
    let err = load("no_such_file.csv", &CsvOptions::default()).unwrap_err();
    assert!(matches!(err, GlassboxError::Io { .. }));
    assert!(err.to_string().contains("no_such_file.csv"));
}

// ---------------------------------------------------------------- error cases

#[test]
fn missing_target_lists_the_columns() {
    let m = data_error(read("a,b,label\n1,2,x\n3,4,y\n"));
    assert_mentions(&m, &["'target'", "'a', 'b', 'label'", "data.target"]);
}

#[test]
fn other_target_name_works() {
    let options = CsvOptions {
        target: "label".into(),
        ..CsvOptions::default()
    };
    let t = Table::from_reader("test.csv", "a,label\n1,x\n2,y\n".as_bytes(), &options).unwrap();
    assert_eq!(t.target_name, "label");
    assert_eq!(t.target, ["x", "y"]);
}

#[test]
fn mixed_column_names_column_value_and_line() {
    let m = data_error(read("a,b,target\n1,2,x\n3,oops,y\n5,6,x\n"));
    assert_mentions(&m, &["'b'", "'oops'", "line 3", "data.categorical"]);
}

#[test]
fn mixed_column_declared_categorical_is_fine() {
    let options = categorical(&["b"]);
    let t = Table::from_reader(
        "test.csv",
        "a,b,target\n1,2,x\n3,oops,y\n".as_bytes(),
        &options,
    )
    .unwrap();
    assert!(matches!(t.columns[1], ColumnData::Categorical(_)));
}

#[test]
fn ragged_row_names_the_line() {
    let m = data_error(read("a,b,target\n1,2,x\n3,y\n"));
    assert_mentions(&m, &["line 3", "2 field(s)", "3 column(s)"]);
    let m = data_error(read("a,b,target\n1,2,x,extra\n"));
    assert_mentions(&m, &["line 2", "4 field(s)"]);
}

/// Lines end in '\n', '\r\n' or a lone '\r' (old Mac files): every kind counts once, so the
/// line an error names is the file's (a file of lone '\r's was all "line 1").
#[test]
fn every_kind_of_line_break_counts_once() {
    for (eol, text) in [
        ("LF", "a,b,target\n1,2,x\n3,y\n"),
        ("CRLF", "a,b,target\r\n1,2,x\r\n3,y\r\n"),
        ("CR", "a,b,target\r1,2,x\r3,y\r"),
        ("mixed", "a,b,target\r\n1,2,x\r3,y\n"),
    ] {
        let m = data_error(read(text));
        assert!(m.contains("line 3 has 2 field(s)"), "{eol}: {m}");
    }
}

/// A file separated by ';' (or tabs) reads as one column: said so, rather than "no target
/// column"; a numeric column's "NA" gets the missing-value markers in its message.
#[test]
fn other_separators_and_na_are_explained() {
    for (sep, text) in [
        (';', "a;b;target\n1;2;x\n"),
        ('\t', "a\tb\ttarget\n1\t2\tx\n"),
    ] {
        let m = data_error(read(text));
        assert!(
            m.contains(&format!("seems separated by {sep:?}")) && m.contains("comma-separated"),
            "{m}"
        );
    }
    let m = data_error(read("a,b,target\n1,2,x\nNA,3,y\n"));
    assert_mentions(&m, &["'NA'", "a missing value is an empty cell or '?'"]);
    let m = data_error(read("a,b,target\n1,2,x\nabc,3,y\n"));
    assert!(!m.contains("missing value"), "{m}");
}

#[test]
fn duplicate_names_are_named() {
    let m = data_error(read("a, b ,b,target\n1,2,3,x\n"));
    assert_mentions(&m, &["'b'", "twice", "columns 2 and 3"]);
}

#[test]
fn empty_header_name_is_an_error() {
    let m = data_error(read("a,,target\n1,2,x\n"));
    assert_mentions(&m, &["column 2", "no name"]);
}

#[test]
fn empty_file_and_header_only() {
    let m = data_error(read(""));
    assert_mentions(&m, &["empty", "header"]);
    let m = data_error(read("a,b,target\n"));
    assert_mentions(&m, &["no data rows"]);
}

#[test]
fn single_class_is_an_error() {
    let t = read("a,target\n1,x\n2,x\n").unwrap();
    match t.encode_classification() {
        Err(GlassboxError::Data { message, .. }) => assert_eq!(
            message,
            "the target column 'target' has a single class 'x': classification needs at least two"
        ),
        other => panic!("expected a data error, got {other:?}"),
    }
}

#[test]
fn nan_and_inf_cells_are_errors() {
    let m = data_error(read("a,target\n1,x\nnan,y\n"));
    assert_mentions(&m, &["'a'", "line 3", "'nan'", "finite"]);
    let m = data_error(read("a,target\n1,x\n2,y\ninf,x\n"));
    assert_mentions(&m, &["'a'", "line 4", "'inf'"]);
}

#[test]
fn non_utf8_bytes_are_an_error_not_a_panic() {
    let bytes: &[u8] = b"a,b,target\n1,2,x\n3,\xff\xfe,y\n";
    let m = data_error(Table::from_reader(
        "test.csv",
        bytes,
        &CsvOptions::default(),
    ));
    assert_mentions(&m, &["'b'", "line 3", "UTF-8"]);
    let bytes: &[u8] = b"a,\xff,target\n1,2,x\n";
    let m = data_error(Table::from_reader(
        "test.csv",
        bytes,
        &CsvOptions::default(),
    ));
    assert_mentions(&m, &["line 1", "UTF-8"]);
}

#[test]
fn missing_cells_error_unless_dropped() {
    let text = "a,b,target\n1,2,x\n3,,y\n4,?,x\n5,6,y\n";
    let m = data_error(read(text));
    assert_mentions(&m, &["'b'", "line 3", "empty", "2 row(s)", "drop_missing"]);

    let options = CsvOptions {
        drop_missing: true,
        ..CsvOptions::default()
    };
    let t = Table::from_reader("test.csv", text.as_bytes(), &options).unwrap();
    assert_eq!(t.n_rows(), 2);
    assert_eq!(t.line_numbers, [2, 5]);
    assert_eq!(t.columns[0], ColumnData::Numeric(vec![1.0, 5.0]));

    let m = data_error(Table::from_reader(
        "test.csv",
        "a,target\n?,x\n,y\n".as_bytes(),
        &options,
    ));
    assert_mentions(&m, &["no rows"]);
}

#[test]
fn missing_target_cell_is_missing_too() {
    let m = data_error(read("a,target\n1,x\n2, ? \n"));
    assert_mentions(&m, &["'target'", "line 3"]);
}

#[test]
fn categorical_option_is_checked() {
    let options = categorical(&["nope"]);
    let m = data_error(Table::from_reader(
        "test.csv",
        "a,target\n1,x\n".as_bytes(),
        &options,
    ));
    assert_mentions(&m, &["'nope'", "data.categorical", "'a', 'target'"]);
    let options = categorical(&["target"]);
    let m = data_error(Table::from_reader(
        "test.csv",
        "a,target\n1,x\n".as_bytes(),
        &options,
    ));
    assert_mentions(&m, &["'target'", "target column"]);
}

#[test]
fn regression_target_must_be_numeric() {
    let t = read("a,target\n1,2.5\n2,high\n").unwrap();
    match t.encode_regression() {
        Err(GlassboxError::Data { message, .. }) => {
            assert_mentions(&message, &["'target'", "line 3", "'high'"])
        }
        other => panic!("expected a data error, got {other:?}"),
    }
}

#[test]
fn headers_and_cells_are_trimmed() {
    let t = read(" a , target \n 1.5 , x \n2,y\n").unwrap();
    assert_eq!(t.feature_names, ["a"]);
    assert_eq!(t.columns[0], ColumnData::Numeric(vec![1.5, 2.0]));
    assert_eq!(t.target, ["x", "y"]);
}

#[test]
fn quoted_fields_and_line_numbers_across_multiline_cells() {
    // The second record spans lines 3-4, so the ragged third record starts on line 5.
    let m = data_error(read("a,b,target\n1,\"x\",p\n2,\"y\nz\",q\n3,r\n"));
    assert_mentions(&m, &["line 5"]);
}

// ---------------------------------------------------------------- encoding

#[test]
fn classes_and_levels_sort_numerically_when_numeric() {
    let options = categorical(&["c"]);
    let text = "c,target\n10,10\n2,2\n1,1\n10,2\n";
    let t = Table::from_reader("test.csv", text.as_bytes(), &options).unwrap();
    let data = t.encode_classification().unwrap();
    assert_eq!(data.classes, ["1", "2", "10"]);
    assert_eq!(data.y, [2, 1, 0, 1]);
    assert_eq!(data.feature_names, ["c=2", "c=10"]);
    assert_eq!(data.x.column(0).as_slice(), [0.0, 1.0, 0.0, 0.0]);
    assert_eq!(data.x.column(1).as_slice(), [1.0, 0.0, 0.0, 1.0]);
}

#[test]
fn text_columns_are_detected_categorical_and_dummy_coded() {
    let t = read("color,n,target\nred,1,a\nblue,2,b\ngreen,3,a\nblue,4,b\n").unwrap();
    assert!(matches!(t.columns[0], ColumnData::Categorical(_)));
    let data = t.encode_classification().unwrap();
    assert_eq!(data.feature_names, ["color=green", "color=red", "n"]);
    // blue is the reference level: all zeros.
    assert_eq!(
        data.x.row(1).iter().copied().collect::<Vec<_>>(),
        [0.0, 0.0, 2.0]
    );
    assert_eq!(
        data.x.row(0).iter().copied().collect::<Vec<_>>(),
        [0.0, 1.0, 1.0]
    );
}

/// `DummyCoding::All` gives every level a feature (one-hot), in classification and in
/// regression, and the model's encoding codes new rows alike.
#[test]
fn every_level_is_coded_with_dummies_all() {
    let t = read("color,n,target\nred,1,a\nblue,2,b\ngreen,3,a\nblue,4,b\n").unwrap();
    let data = t.encode_classification_with(DummyCoding::All).unwrap();
    assert_eq!(
        data.feature_names,
        ["color=blue", "color=green", "color=red", "n"]
    );
    assert_eq!(
        data.x.row(1).iter().copied().collect::<Vec<_>>(),
        [1.0, 0.0, 0.0, 2.0]
    );
    let encoding = Encoding::fit_with(&t, DummyCoding::All);
    assert_eq!(encoding, data.encoding);
    let json = serde_json::to_string(&encoding).unwrap();
    assert_eq!(serde_json::from_str::<Encoding>(&json).unwrap(), encoding);
    let new = read("n,color,target\n5,blue,a\n").unwrap();
    assert_eq!(
        encoding
            .transform(&new)
            .unwrap()
            .row(0)
            .iter()
            .copied()
            .collect::<Vec<_>>(),
        [1.0, 0.0, 0.0, 5.0]
    );
    let options = CsvOptions {
        target: "y".into(),
        ..CsvOptions::default()
    };
    let regression = Table::from_reader("r.csv", "color,y\nred,1\nblue,2\n".as_bytes(), &options)
        .unwrap()
        .encode_regression_with(DummyCoding::All)
        .unwrap();
    assert_eq!(regression.feature_names, ["color=blue", "color=red"]);
}

/// A config's `data.dummies` reaches the engine's encoding: car's 6 categorical columns
/// have 21 levels, 15 features without each column's first; an unknown coding is refused
/// naming the key and the values it takes.
#[test]
fn the_config_chooses_the_dummy_coding() {
    let path = dataset("car.csv");
    for (line, features) in [
        ("", 15),
        ("dummies = \"drop_first\"\n", 15),
        ("dummies = \"all\"\n", 21),
    ] {
        let text = format!(
            "[data]\npath = {:?}\ncategorical = [\"doors\", \"persons\"]\n{line}\n\
             [formulation]\nname = \"cart\"\ndepth = 2\n",
            path.display().to_string()
        );
        let config = ExperimentConfig::parse(Path::new("config.toml"), &text).unwrap();
        let data = EngineData::load(&config, false).unwrap();
        assert_eq!(
            data.classification("cart").unwrap().x.ncols(),
            features,
            "{line}"
        );
    }
    let text = "[data]\npath = \"car.csv\"\ndummies = \"none\"\n\n[formulation]\nname = \"cart\"\n";
    let message = ExperimentConfig::parse(Path::new("config.toml"), text)
        .unwrap_err()
        .to_string();
    assert_mentions(&message, &["dummies", "none", "drop_first", "all"]);
}

#[test]
fn encoding_transforms_new_tables_and_rejects_unseen_levels() {
    let train = read("color,n,target\nred,1,a\nblue,2,b\n").unwrap();
    let encoding = Encoding::fit(&train);
    assert_eq!(encoding.n_features(), 2);
    // Columns are matched by name.
    let new = read("n,color,target\n5,red,a\n6,blue,b\n").unwrap();
    let x = encoding.transform(&new).unwrap();
    assert_eq!(x.row(0).iter().copied().collect::<Vec<_>>(), [1.0, 5.0]);
    let unseen = read("n,color,target\n5,red,a\n6,green,b\n").unwrap();
    match encoding.transform(&unseen) {
        Err(GlassboxError::Data { message, .. }) => {
            assert_mentions(&message, &["'color'", "line 3", "'green'", "'blue', 'red'"])
        }
        other => panic!("expected a data error, got {other:?}"),
    }
    let json = serde_json::to_string(&encoding).unwrap();
    let back: Encoding = serde_json::from_str(&json).unwrap();
    assert_eq!(back, encoding);
}

#[test]
fn classification_rows_selects_samples() {
    let data = load("iris.csv", &CsvOptions::default())
        .unwrap()
        .encode_classification()
        .unwrap();
    let sub = data.rows(&[149, 0]);
    assert_eq!(sub.y, [2, 0]);
    assert_eq!(sub.x.shape(), (2, 4));
    assert_eq!(sub.x[(1, 0)], 5.1);
    assert_eq!(sub.n_classes(), 3);
    assert_eq!(sub.class_counts(), [1, 0, 1]);
}

// ---------------------------------------------------------------- scaling

#[test]
fn scaler_fitted_on_train_maps_train_into_unit_interval() {
    let data = load("wine.csv", &CsvOptions::default())
        .unwrap()
        .encode_classification()
        .unwrap();
    let (train, test) = stratified_split(&data.y, 0.25, 7).unwrap();
    let (xtr, xte) = (data.rows(&train).x, data.rows(&test).x);
    let scaler = MinMaxScaler::fit(&xtr);
    let z = scaler.transform(&xtr);
    assert!(z.iter().all(|&v| (0.0..=1.0).contains(&v)));
    for j in 0..z.ncols() {
        let col = z.column(j);
        assert_eq!(col.min(), 0.0);
        assert!((col.max() - 1.0).abs() < 1e-12);
    }
    // No clipping on test rows; the round trip is exact up to rounding.
    let zt = scaler.transform(&xte);
    let back = scaler.inverse_transform(&zt);
    assert!((back - xte).abs().max() < 1e-9);
}

#[test]
fn scaler_constant_column_and_no_clipping() {
    let x = nalgebra::DMatrix::from_row_slice(3, 2, &[1.0, 5.0, 3.0, 5.0, 2.0, 5.0]);
    let scaler = MinMaxScaler::fit(&x);
    assert_eq!(scaler.min, [1.0, 5.0]);
    assert_eq!(scaler.max, [3.0, 5.0]);
    assert_eq!(scaler.scale_of(0), 2.0);
    assert_eq!(scaler.scale_of(1), 1.0);
    let z = scaler.transform(&x);
    assert_eq!(z.column(0).as_slice(), [0.0, 1.0, 0.5]);
    assert_eq!(z.column(1).as_slice(), [0.0, 0.0, 0.0]);
    let outside = nalgebra::DMatrix::from_row_slice(1, 2, &[5.0, 7.0]);
    let zo = scaler.transform(&outside);
    assert_eq!(zo[(0, 0)], 2.0);
    assert_eq!(zo[(0, 1)], 2.0);
    let json = serde_json::to_string(&scaler).unwrap();
    assert_eq!(serde_json::from_str::<MinMaxScaler>(&json).unwrap(), scaler);
}

// ---------------------------------------------------------------- splits

fn labels(counts: &[usize]) -> Vec<usize> {
    counts
        .iter()
        .enumerate()
        .flat_map(|(k, &n)| std::iter::repeat_n(k, n))
        .collect()
}

#[test]
fn stratified_split_keeps_proportions() {
    let y = labels(&[60, 30, 10]);
    let (train, test) = stratified_split(&y, 0.25, 42).unwrap();
    assert_eq!(train.len() + test.len(), 100);
    let count = |idx: &[usize], k| idx.iter().filter(|&&i| y[i] == k).count();
    assert_eq!(
        (count(&test, 0), count(&test, 1), count(&test, 2)),
        (15, 8, 3) // round(15), round(7.5), round(2.5): half away from zero
    );
    assert!(train.windows(2).all(|w| w[0] < w[1]));
    assert!(test.windows(2).all(|w| w[0] < w[1]));
    let mut all: Vec<usize> = train.iter().chain(&test).copied().collect();
    all.sort_unstable();
    assert_eq!(all, (0..100).collect::<Vec<_>>());
}

#[test]
fn stratified_split_is_deterministic_by_seed() {
    let y = labels(&[50, 50, 50]);
    let a = stratified_split(&y, 0.3, 1).unwrap();
    let b = stratified_split(&y, 0.3, 1).unwrap();
    let c = stratified_split(&y, 0.3, 2).unwrap();
    assert_eq!(a, b);
    assert_ne!(a, c);
}

#[test]
fn stratified_split_keeps_one_in_train_per_class() {
    let y = labels(&[2, 10]);
    let (train, test) = stratified_split(&y, 0.9, 0).unwrap();
    assert_eq!(train.iter().filter(|&&i| y[i] == 0).count(), 1);
    assert_eq!(test.iter().filter(|&&i| y[i] == 0).count(), 1);
    assert_eq!(train.iter().filter(|&&i| y[i] == 1).count(), 1);
}

#[test]
fn stratified_split_errors() {
    let y = labels(&[5, 5]);
    for bad in [0.0, 1.0, -0.1, 1.5, f64::NAN] {
        assert!(matches!(
            stratified_split(&y, bad, 0),
            Err(GlassboxError::Config(_))
        ));
    }
    let err = stratified_split(&labels(&[5, 1]), 0.25, 0).unwrap_err();
    assert!(err.to_string().contains("class 1"), "{err}");
    // Named classes through ClassificationData.
    let data = read("a,target\n1,x\n2,x\n3,y\n")
        .unwrap()
        .encode_classification()
        .unwrap();
    let err = data.stratified_split(0.5, 0).unwrap_err();
    assert!(err.to_string().contains("class 'y'"), "{err}");
    assert!(err.to_string().contains("test.csv"), "{err}");
}

#[test]
fn kfold_covers_every_row_once() {
    let y = labels(&[23, 11, 7]);
    let folds = stratified_kfold(&y, 5, 3).unwrap();
    assert_eq!(folds.len(), 5);
    let mut seen = vec![0; y.len()];
    for (train, test) in &folds {
        assert_eq!(train.len() + test.len(), y.len());
        assert!(test.len() == 8 || test.len() == 9, "{}", test.len());
        for &i in test {
            seen[i] += 1;
            assert!(!train.contains(&i));
        }
        // Stratified: class 0 (23 samples) has 4 or 5 in every fold.
        let c0 = test.iter().filter(|&&i| y[i] == 0).count();
        assert!((4..=5).contains(&c0));
    }
    assert!(seen.iter().all(|&n| n == 1));
    assert_eq!(folds, stratified_kfold(&y, 5, 3).unwrap());
    assert_ne!(folds, stratified_kfold(&y, 5, 4).unwrap());
}

#[test]
fn kfold_errors() {
    let y = labels(&[3, 2]);
    assert!(stratified_kfold(&y, 1, 0).is_err());
    assert!(stratified_kfold(&y, 6, 0).is_err());
    assert_eq!(stratified_kfold(&y, 5, 0).unwrap().len(), 5);
}

// ---------------------------------------------------------------- synthetic

#[test]
fn synthetic_oblique_is_deterministic_and_has_every_class() {
    for classes in 2..=4 {
        let t = synthetic_oblique(200, 5, classes, 11);
        assert_eq!(t, synthetic_oblique(200, 5, classes, 11));
        assert_ne!(t, synthetic_oblique(200, 5, classes, 12));
        assert_eq!(t.source, "synthetic:oblique");
        assert_eq!(t.feature_names, ["x1", "x2", "x3", "x4", "x5"]);
        let data: ClassificationData = t.encode_classification().unwrap();
        assert_eq!(data.x.shape(), (200, 5));
        let expected: Vec<String> = (0..classes).map(|k| format!("c{k}")).collect();
        assert_eq!(data.classes, expected);
        assert!(data.x.iter().all(|&v| (0.0..=10.0).contains(&v)));
        // Roughly balanced: every class has at least 10% of the samples.
        assert!(
            data.class_counts().iter().all(|&n| n >= 20),
            "{:?}",
            data.class_counts()
        );
    }
    // Tiny tables still have every class.
    let data = synthetic_oblique(4, 2, 4, 0)
        .encode_classification()
        .unwrap();
    assert_eq!(data.class_counts(), [1, 1, 1, 1]);
}
