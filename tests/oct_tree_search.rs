//! OCT (axis-aligned) as a tree-search problem: on small subsamples, the `dp` backend's
//! optimum of [`OctTreeSearch`] equals HiGHS's (and CBC's) optimum of the OCT MILP, with
//! and without the complexity penalty and the minimum leaf size; the tree `dp` returns,
//! read back through the binary columns' thresholds, makes the errors it reports.

use glassbox::data::{ClassificationData, CsvOptions, MinMaxScaler, Table};
use glassbox::formulations::oct::{self, OctParams, OctTreeSearch, SplitKind};
use glassbox::tree_search::SearchTree;
use glassbox::{registry, SolveOptions, TerminationStatus};
use nalgebra::DMatrix;
use std::path::Path;

/// Every `step`-th row of `name`, first `take` of them, min-max scaled.
fn subsample(name: &str, step: usize, take: usize) -> (DMatrix<f64>, Vec<usize>, usize) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/datasets")
        .join(name);
    // car's doors and persons hold numbers and words ("5more", "more").
    let options = CsvOptions {
        categorical: if name == "car.csv" {
            vec!["doors".into(), "persons".into()]
        } else {
            Vec::new()
        },
        ..CsvOptions::default()
    };
    let data: ClassificationData = Table::from_csv(&path, &options)
        .unwrap()
        .encode_classification()
        .unwrap();
    let rows: Vec<usize> = (0..data.n_samples()).step_by(step).take(take).collect();
    let part = data.rows(&rows);
    let x = MinMaxScaler::fit(&part.x).transform(&part.x);
    let k = part.n_classes();
    (x, part.y.clone(), k)
}

/// The class the tree predicts for row i of `x`, routing by the columns' thresholds.
fn predict(search: &OctTreeSearch, tree: &SearchTree, x: &DMatrix<f64>, i: usize) -> usize {
    predict_counting(search, tree, x, i, &mut Default::default())
}

/// As [`predict`], counting in `sides` the rows each branch node (by its path from the
/// root) sends to its zero and one side.
fn predict_counting(
    search: &OctTreeSearch,
    tree: &SearchTree,
    x: &DMatrix<f64>,
    i: usize,
    sides: &mut std::collections::HashMap<Vec<bool>, (usize, usize)>,
) -> usize {
    let mut node = tree;
    let mut path = Vec::new();
    loop {
        match node {
            SearchTree::Leaf { class } => return *class,
            SearchTree::Branch { feature, zero, one } => {
                let split = search.split(*feature);
                let left = x[(i, split.weights[0].0)] < split.threshold;
                let count = sides.entry(path.clone()).or_insert((0, 0));
                if left {
                    count.0 += 1;
                } else {
                    count.1 += 1;
                }
                path.push(left);
                node = if left { zero } else { one };
            }
        }
    }
}

#[test]
fn dp_optimum_equals_the_oct_milp_optimum() {
    let milp_options = SolveOptions {
        relative_gap: Some(0.0),
        absolute_gap: Some(0.0),
        time_limit: Some(60.0),
        threads: Some(1),
        ..Default::default()
    };
    let milp_backends: Vec<&str> = ["highs", "cbc"]
        .into_iter()
        .filter(|name| registry::milp_solver(name, &milp_options).is_ok())
        .collect();
    assert!(!milp_backends.is_empty(), "no MILP backend in this build");
    let dp = registry::tree_search_solver("dp", &SolveOptions::default()).unwrap();
    for (name, step, take, depth, alpha, min_leaf) in [
        // Depth 2 on 20 rows, as tests/oct.rs, keeps each MILP to seconds; depth 1 elsewhere.
        ("iris.csv", 5, 30, 1, 0.0, 1),
        ("iris.csv", 7, 20, 2, 0.0, 1),
        ("haberman.csv", 15, 20, 1, 0.05, 1),
        ("wine.csv", 9, 20, 1, 0.0, 3),
        ("monks1.csv", 6, 20, 2, 0.02, 2),
        ("monks1.csv", 4, 30, 1, 0.0, 1),
        ("car.csv", 61, 25, 1, 0.0, 1),
        ("car.csv", 83, 20, 2, 0.0, 1),
    ] {
        let (x, y, k) = subsample(name, step, take);
        let params = OctParams {
            depth,
            alpha,
            min_leaf,
            kind: SplitKind::Axis,
        };
        let who = format!("{name} depth {depth} alpha {alpha} min_leaf {min_leaf}");
        let search = OctTreeSearch::new(oct::NAME, &x, &y, k, &params).unwrap();
        let result = dp.solve(&search.problem, &SolveOptions::default()).unwrap();
        assert_eq!(result.status, TerminationStatus::Optimal, "{who}");
        let dp_objective = search.oct_objective(result.objective.unwrap());

        // The tree, routed by thresholds on the scaled rows, makes the errors it reports.
        let tree = search.problem.decode(&result.primal).unwrap();
        let errors = (0..y.len())
            .filter(|&i| predict(&search, &tree, &x, i) != y[i])
            .count() as f64;
        let expected =
            dp_objective * search.baseline - alpha * search.baseline * tree.branch_nodes() as f64;
        assert!(
            (errors - expected).abs() < 1e-6,
            "{who}: {errors} errors, objective says {expected}"
        );

        let milp = oct::build(
            oct::NAME,
            std::sync::Arc::new(x.clone()),
            std::sync::Arc::new(y.clone()),
            k,
            params.clone(),
        )
        .unwrap();
        assert_eq!(milp.baseline, search.baseline, "{who}");
        for backend in &milp_backends {
            let solver = registry::milp_solver(backend, &milp_options).unwrap();
            let milp_result = solver.solve(&milp.milp, &milp_options).unwrap();
            assert_eq!(
                milp_result.status,
                TerminationStatus::Optimal,
                "{who} {backend}: {}",
                milp_result.raw_status
            );
            let milp_objective = milp_result.objective.unwrap();
            assert!(
                (milp_objective - dp_objective).abs() < 1e-6,
                "{who}: {backend} {milp_objective}, dp {dp_objective}"
            );
        }
    }
}

#[test]
fn oblique_oct_is_refused() {
    let (x, y, k) = subsample("iris.csv", 5, 30);
    let params = OctParams {
        depth: 2,
        alpha: 0.0,
        min_leaf: 1,
        kind: SplitKind::Oblique { mu: 0.005 },
    };
    let error = OctTreeSearch::new(oct::NAME_H, &x, &y, k, &params).unwrap_err();
    assert!(error.to_string().contains("axis-aligned"), "{error}");
}

#[test]
fn one_column_per_threshold_between_distinct_values() {
    let x = DMatrix::from_row_slice(4, 2, &[0.0, 1.0, 0.5, 1.0, 0.5, 0.0, 1.0, 0.0]);
    let params = OctParams {
        depth: 1,
        alpha: 0.1,
        min_leaf: 1,
        kind: SplitKind::Axis,
    };
    let search = OctTreeSearch::new(oct::NAME, &x, &[0, 0, 1, 1], 2, &params).unwrap();
    // Feature 0 has three values (two thresholds), feature 1 two (one).
    assert_eq!(search.columns.len(), 3);
    assert_eq!(search.problem.n_features(), 3);
    assert_eq!(search.split(0).threshold, 0.25);
    assert_eq!(search.split(1).threshold, 0.75);
    assert_eq!(search.split(2).threshold, 0.5);
    assert_eq!(search.baseline, 2.0);
    assert_eq!(search.problem.branch_penalty(), 0.2);
}

#[test]
fn a_warm_start_enters_the_search_as_the_same_tree() {
    use glassbox::tree_search::TreeSearchStatement;
    // `continuous`: no feature is binary, so that a threshold above the largest value reads
    // back as such (on 0/1 columns OCT reads any b above 1 as the split at 1).
    for (name, step, take, depth, continuous) in [
        ("iris.csv", 3, 50, 2, true),
        ("wine.csv", 2, 80, 3, true),
        ("car.csv", 17, 90, 2, false),
    ] {
        let (x, y, k) = subsample(name, step, take);
        let params = OctParams {
            depth,
            alpha: 0.0,
            min_leaf: 1,
            kind: SplitKind::Axis,
        };
        let milp = oct::build(
            oct::NAME,
            std::sync::Arc::new(x.clone()),
            std::sync::Arc::new(y.clone()),
            k,
            params,
        )
        .unwrap();
        let statement = oct::OctStatement::new(oct::NAME, &milp).unwrap();
        let search = statement.search();
        let branches = (1 << depth) - 1;
        // The greedy and CART starts, and hand-made trees whose splits send every row one
        // way (at the smallest value: right; above the largest: left), send every row
        // that reaches them one way (a split below one on the same threshold), or do not
        // split.
        let mut points = vec![oct::greedy_start(&milp)];
        points.extend(oct::cart_start(&milp));
        let max = |j: usize| x.column(j).max();
        // A training value of feature j halfway up its sorted values (a split OCT can make).
        let middle = |j: usize| {
            let mut values: Vec<f64> = x.column(j).iter().copied().collect();
            values.sort_by(f64::total_cmp);
            values[values.len() / 2]
        };
        let mut nodes: Vec<Option<(usize, f64)>> = vec![None; branches];
        nodes[0] = Some((0, x.column(0).min()));
        nodes[1] = Some((1, middle(1)));
        points.push(milp.point_of_axis_tree(&nodes));
        if continuous {
            nodes[0] = Some((1, max(1) + 0.5));
            points.push(milp.point_of_axis_tree(&nodes));
        }
        nodes[0] = Some((1, middle(1)));
        points.push(milp.point_of_axis_tree(&nodes));
        nodes[0] = None;
        nodes[branches - 1] = Some((2, middle(2)));
        points.push(milp.point_of_axis_tree(&nodes));
        let lay = &milp.layout;
        let leaves = 1 << depth;
        for (s, point) in points.iter().enumerate() {
            let who = format!("{name} depth {depth} start {s}");
            let encoded = statement.warm_start(point).unwrap();
            let tree = search.problem.decode(&encoded).unwrap();
            // Row by row, the tree predicts the class of the leaf the MILP point assigns
            // the row to (its z), and no split of the tree has an empty side.
            let mut sides = std::collections::HashMap::new();
            for i in 0..y.len() {
                let leaf = (0..leaves)
                    .find(|&l| point[lay.z(i, l)] > 0.5)
                    .expect("every row in a leaf");
                let class = (0..k).find(|&c| point[lay.c(c, leaf)] > 0.5);
                assert_eq!(
                    Some(predict_counting(search, &tree, &x, i, &mut sides)),
                    class,
                    "{who}: row {i}"
                );
            }
            assert!(
                sides.values().all(|&(zero, one)| zero > 0 && one > 0),
                "{who}: a split with an empty side: {sides:?}"
            );
            // So it makes the MILP point's errors (alpha 0: the objective is errors / Lhat).
            let errors = search.problem.evaluate(&tree).unwrap().objective;
            let milp_errors = milp.milp.objective_value(point) * search.baseline;
            assert!(
                (errors - milp_errors).abs() < 1e-9,
                "{who}: search {errors}, MILP {milp_errors}"
            );
        }
        // A point of another size is refused, naming the sizes.
        let error = statement.warm_start(&[0.0; 3]).unwrap_err().to_string();
        assert!(error.contains("3 values"), "{error}");
    }
}
