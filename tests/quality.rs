//! Solution quality (issue 24): the CART start keeps S-ORCT, l0tree and S-ORRT from ending
//! below the greedy tree of the same depth, and S-ORCT's cross-validated choice returns
//! CART's tree where the oblique one generalizes worse. Each test runs one seeded split with
//! a single random start beside the CART start, so it fails if the CART start is lost (or
//! stops being solved first). Without it, thyroid's split below ends at 0.925 test accuracy
//! (the majority share) with either split scale (measured with `cart_start = false`).

use glassbox::experiment::{self, ExperimentConfig, SolveRecord};
use std::path::PathBuf;

fn shared(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/datasets")
        .join(name)
}

/// Runs `formulation` (a `[formulation]` table's body) on one seeded 75/25 split of
/// `dataset` with one random start; its results lines.
fn run(dataset: &str, formulation: &str) -> Vec<SolveRecord> {
    run_with(dataset, "", formulation)
}

/// [`run`] with `data` (lines of the `[data]` table besides its path).
fn run_with(dataset: &str, data: &str, formulation: &str) -> Vec<SolveRecord> {
    run_starts(dataset, data, formulation, 1)
}

/// [`run_with`] with `starts` random starts.
fn run_starts(dataset: &str, data: &str, formulation: &str, starts: usize) -> Vec<SolveRecord> {
    let dir = tempfile::tempdir().unwrap();
    // CART is a heuristic learner: no solver, no starts.
    let solver = match formulation.contains("\"cart\"") {
        true => String::new(),
        false => format!("[solver]\nname = \"ipopt\"\n[multistart]\nstarts = {starts}\nseed = 1\n"),
    };
    let text = format!(
        "[data]\npath = \"{}\"\n{data}\n[split]\ntest_fraction = 0.25\nrepeats = 1\nseed = 1\n\
         [formulation]\n{formulation}\n{solver}",
        shared(dataset).display()
    );
    let config = ExperimentConfig::parse(&dir.path().join("c.toml"), &text).unwrap();
    experiment::run(&config, &dir.path().join("out"), false, false)
        .unwrap()
        .records
}

fn selected(records: &[SolveRecord]) -> &SolveRecord {
    let mut chosen = records.iter().filter(|r| r.selected);
    let one = chosen.next().expect("no start was selected");
    assert!(chosen.next().is_none());
    one
}

/// The first example: thyroid at depth 2, where S-ORCT from random starts with the
/// paper's slope ends near the majority share (0.925) and CART reaches about 0.98.
#[test]
fn sorct_on_thyroid_depth_two_is_not_worse_than_cart() {
    let cart = run("thyroid.csv", "name = \"cart\"\ndepth = 2");
    let cart_accuracy = cart[0].test_accuracy;
    assert!(cart_accuracy > 0.95, "CART {cart_accuracy}");
    let records = run("thyroid.csv", "name = \"sorct\"\ndepth = 2");
    // The CART start is solved first, the random start after it, then the cross-validated
    // choice adds the returned tree's line.
    assert_eq!(records.len(), 3);
    assert_eq!(records[0].origin.as_deref(), Some("cart"));
    assert_eq!(records[1].origin, None);
    assert!(records[2]
        .origin
        .as_deref()
        .unwrap()
        .starts_with("selection ("));
    let best = selected(&records);
    assert_eq!(best.start, 2);
    assert!(
        best.test_accuracy >= cart_accuracy - 0.005,
        "S-ORCT {} against CART {cart_accuracy}",
        best.test_accuracy
    );
    // The data's split scale raised gamma above the paper's 512 (21 skewed features).
    assert!(best.gamma.unwrap() > 512.0, "gamma {:?}", best.gamma);
}

/// l0tree (L0glob) shares S-ORCT's CART start and split scale.
#[test]
fn l0tree_on_wine_depth_two_is_not_worse_than_cart() {
    let cart = run("wine.csv", "name = \"cart\"\ndepth = 2");
    let records = run("wine.csv", "name = \"l0tree\"\ndepth = 2");
    assert_eq!(records[0].origin.as_deref(), Some("cart"));
    let best = selected(&records);
    assert!(
        best.train_accuracy >= cart[0].train_accuracy - 1e-9,
        "l0tree train {} against CART train {}",
        best.train_accuracy,
        cart[0].train_accuracy
    );
}

/// The monks data sets' categorical columns, dummy coded.
const MONKS: &str = "categorical = [\"a1\", \"a2\", \"a3\", \"a4\", \"a5\", \"a6\"]";

/// The cross-validated choice (`selection_folds`, the default) on monks3 at depth 2 (5%
/// label noise on an axis-aligned rule): the oblique tree of the best training objective
/// generalizes worse than CART there, the folds see it, and the CART tree is returned with
/// hard splits, predicting exactly as CART does. Without the choice (`selection_folds = 0`)
/// the best objective's tree is returned, and no line is added.
#[test]
fn the_cross_validated_choice_keeps_cart_on_monks3() {
    let cart = run_with("monks3.csv", MONKS, "name = \"cart\"\ndepth = 2");
    let chosen = run_with("monks3.csv", MONKS, "name = \"sorct\"\ndepth = 2");
    let kept = selected(&chosen);
    assert_eq!(kept.origin.as_deref(), Some("selection (cart)"));
    assert_eq!(kept.status, "other_limit_feasible");
    assert!(
        kept.raw_status.contains("3-fold selection"),
        "{}",
        kept.raw_status
    );
    assert_eq!(kept.test_accuracy, cart[0].test_accuracy);
    assert_eq!(kept.train_accuracy, cart[0].train_accuracy);
    let objective = run_with(
        "monks3.csv",
        MONKS,
        "name = \"sorct\"\ndepth = 2\nselection_folds = 0",
    );
    assert_eq!(objective.len(), 2);
    let lowest = objective
        .iter()
        .map(|r| r.objective.unwrap())
        .fold(f64::INFINITY, f64::min);
    assert_eq!(selected(&objective).objective, Some(lowest));
}

/// Car at depth 2 (four classes on four leaves, every column categorical) with two random
/// starts: every whole-data solve, the CART start's included (constraint (3) gives each
/// class a leaf, so its leaves are relabelled), ends in the tree that sends every row to
/// the majority class, while the folds' solves find good trees. The folds' accuracy then
/// spoke for a tree the folds never saw; without a sparsity penalty the choice keeps the
/// greedy tree where the optimized one fits the training rows worse (it returned the
/// majority tree, 0.700 train and 0.701 test accuracy, against CART's 0.742 and 0.755).
#[test]
fn the_choice_keeps_cart_where_the_optimized_tree_fits_worse() {
    let car =
        "categorical = [\"buying\", \"maint\", \"doors\", \"persons\", \"lug_boots\", \"safety\"]";
    let cart = run_with("car.csv", car, "name = \"cart\"\ndepth = 2");
    let cart_fit = cart[0].train_accuracy;
    // Runs S-ORCT with `extra` in its table, asserts its best objective's tree fits the
    // training rows worse than CART's (else the case is gone) and returns the selected line.
    let chosen = |extra: &str| {
        let records = run_starts(
            "car.csv",
            car,
            &format!("name = \"sorct\"\ndepth = 2\n{extra}"),
            2,
        );
        let optimized_fit = records
            .iter()
            .filter(|r| !r.selected)
            .filter_map(|r| r.objective.map(|o| (o, r.train_accuracy)))
            .min_by(|a, b| a.0.total_cmp(&b.0))
            .unwrap()
            .1;
        assert!(
            optimized_fit < cart_fit,
            "{extra}: the best objective's tree now fits as CART's ({optimized_fit} against \
             {cart_fit}): the case is gone"
        );
        selected(&records).clone()
    };
    let kept = chosen("");
    assert_eq!(kept.origin.as_deref(), Some("selection (cart)"));
    assert!(
        kept.raw_status.contains("fits the training rows worse"),
        "{}",
        kept.raw_status
    );
    assert_eq!(kept.train_accuracy, cart_fit);
    assert_eq!(kept.test_accuracy, cart[0].test_accuracy);
    // With a sparsity penalty a worse fit may be the point, and with costs the objective is
    // the expected cost, not the accuracy the rule compares: the rule is off, and the
    // optimized tree that fits worse is returned.
    let costs = "costs = [[0.0, 0.5, 0.5, 0.5], [0.5, 0.0, 0.5, 0.5], [0.5, 0.5, 0.0, 0.5], [0.5, 0.5, 0.5, 0.0]]";
    for extra in ["lambda_global = 0.03", costs] {
        let kept = chosen(extra);
        assert_eq!(
            kept.origin.as_deref(),
            Some("selection (optimized)"),
            "{extra}: {}",
            kept.raw_status
        );
        assert!(!kept.raw_status.contains("fits the training rows worse"));
    }
}

/// ... and on monks1, where one oblique split on the dummies is exact and CART's axis
/// splits are far from it, the optimized tree is clearly better and returned.
#[test]
fn the_cross_validated_choice_keeps_the_optimized_tree_on_monks1() {
    let cart = run_with("monks1.csv", MONKS, "name = \"cart\"\ndepth = 2");
    let records = run_with("monks1.csv", MONKS, "name = \"sorct\"\ndepth = 2");
    let kept = selected(&records);
    assert_eq!(kept.origin.as_deref(), Some("selection (optimized)"));
    let best_start = records[..records.len() - 1]
        .iter()
        .filter(|r| r.objective.is_some())
        .min_by(|a, b| a.objective.unwrap().total_cmp(&b.objective.unwrap()))
        .unwrap();
    assert_eq!(kept.objective, best_start.objective);
    assert_eq!(kept.test_accuracy, best_start.test_accuracy);
    // With one random start (one per fold too, from its seed on the fold's rows) the folds'
    // trees do not all find the exact split: 0.68 cross-validated against CART's 0.61.
    assert!(
        kept.validation_accuracy.unwrap() > 0.65,
        "{}",
        kept.raw_status
    );
    assert!(kept.test_accuracy > cart[0].test_accuracy + 0.2);
}

/// `selection_margin`: a margin no optimized tree clears returns CART's tree even on monks1
/// (where one standard error returns the optimized tree, above), says so, and records the
/// paired counts behind the decision; a negative margin is refused, naming the key.
#[test]
fn a_selection_margin_no_tree_clears_returns_cart() {
    let records = run_with(
        "monks1.csv",
        MONKS,
        "name = \"sorct\"\ndepth = 2\nselection_margin = 1000.0",
    );
    let kept = selected(&records);
    assert_eq!(kept.origin.as_deref(), Some("selection (cart)"));
    let says = "3-fold selection (whole multistart per fold) (1 solve a fold) \
                (margin 1000 standard errors)";
    assert!(kept.raw_status.contains(says), "{}", kept.raw_status);
    assert!(
        kept.raw_status
            .contains("rows only the optimized trees get right"),
        "{}",
        kept.raw_status
    );
    let dir = tempfile::tempdir().unwrap();
    let text = format!(
        "[data]\npath = \"{}\"\n[formulation]\nname = \"sorct\"\nselection_margin = -1.0\n\
         [solver]\nname = \"ipopt\"\n",
        shared("iris.csv").display()
    );
    let err = ExperimentConfig::parse(&dir.path().join("c.toml"), &text)
        .and_then(|c| experiment::run(&c, &dir.path().join("out"), false, false).map(|_| ()))
        .unwrap_err()
        .to_string();
    assert!(err.contains("selection_margin"), "{err}");
}

/// S-ORRT's CART start: least-squares leaves on CART's regression splits.
#[test]
fn sorrt_on_boston_depth_two_starts_from_cart() {
    let records = run("boston_housing.csv", "name = \"sorrt\"\ndepth = 2");
    // The CART start, one random start, the cross-validated choice's line.
    assert_eq!(records.len(), 3);
    assert_eq!(records[0].origin.as_deref(), Some("cart"));
    let choice = selected(&records).origin.as_deref().unwrap_or("");
    assert!(choice.starts_with("selection ("), "{choice}");
    let r2 = |r: &SolveRecord| r.regression.as_ref().unwrap().train_r2;
    // CART of depth 2 alone explains about 0.7 of Boston's training variance; the solve
    // from its tree with linear leaves does better.
    assert!(
        r2(&records[0]) > 0.75,
        "train R2 from CART {}",
        r2(&records[0])
    );
}

/// Runs `formulation` (a `[formulation]` body) with 5 random starts on one 75/25 split of
/// data drawn from a sparse oblique tree (seed 1: p = 20, 3 relevant features, depth 2, 3
/// classes, 5% noise, Bayes accuracy 0.95; `split_scale` raises gamma 16-fold on it). Its
/// results lines, the output folder (its TempDir first) and the generator's relevant features.
fn run_on_sparse_tree(
    formulation: &str,
) -> (Vec<SolveRecord>, (tempfile::TempDir, PathBuf), Vec<usize>) {
    run_on_sparse_tree_of(1, formulation)
}

/// [`run_on_sparse_tree`] on the generator's seed `seed`.
fn run_on_sparse_tree_of(
    seed: u64,
    formulation: &str,
) -> (Vec<SolveRecord>, (tempfile::TempDir, PathBuf), Vec<usize>) {
    use glassbox::synthetic::tree::{generate_file, SparseTreeSpec};
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("sparse.csv");
    let spec = SparseTreeSpec {
        seed,
        ..SparseTreeSpec::default()
    };
    let data = generate_file(&spec, &csv, false).unwrap();
    let text = format!(
        "[data]\npath = \"{}\"\n[split]\ntest_fraction = 0.25\nrepeats = 1\nseed = 1\n\
         [formulation]\n{formulation}\nselection_folds = 0\n[solver]\nname = \"ipopt\"\n\
         [multistart]\nstarts = 5\nseed = 1\n",
        csv.display()
    );
    let config = ExperimentConfig::parse(&dir.path().join("c.toml"), &text).unwrap();
    let out = dir.path().join("out");
    let records = experiment::run(&config, &out, false, false)
        .unwrap()
        .records;
    (records, (dir, out), data.relevant)
}

/// Sparse structure: L0glob on the sparse-tree data. Its random starts are sparsified at the
/// configured gamma and the zeros held while gamma rises (`formulations/continuation.rs`);
/// when every stage penalized with the raised scale, 1 - exp(-alpha u) was flat at every
/// random start's coefficients and every lambda ended with all 20 features (delta_G 0).
#[test]
fn l0glob_finds_exactly_the_relevant_features_at_a_raised_gamma() {
    use glassbox::formulations::l0tree::L0TreeModel;
    let (records, (_dir, out), relevant) =
        run_on_sparse_tree("name = \"l0tree\"\ndepth = 2\nlambda_global_log2 = 0.0");
    let best = selected(&records);
    assert!(
        best.raw_status.contains("gamma 8192"),
        "{}",
        best.raw_status
    );
    let model = L0TreeModel::load(&out.join("models/split-0.json")).unwrap();
    let a = &model.tree.a;
    let used: Vec<usize> = (0..a.nrows())
        .filter(|&j| a.row(j).amax() > glassbox::metrics::SPARSITY_TOLERANCE)
        .collect();
    assert_eq!(used, relevant, "{}", best.raw_status);
    // About 0.96 on this split (Bayes 0.95); CART of depth 2 gets 0.83.
    assert!(best.test_accuracy > 0.93, "{}", best.test_accuracy);
}

/// S-ORCT's `refit_support`: the same starts, each compared on its refit's loss plus the
/// penalty its penalized solve paid, which is at most its penalized objective; the support
/// is kept and the splits refit without the penalty classify as the generator's tree does
/// (0.96 against 0.84 shrunk, on this split).
#[test]
fn sorct_refit_keeps_the_support_and_unshrinks_the_splits() {
    let sorct = "name = \"sorct\"\ndepth = 2\nlambda_global_log2 = 1.0";
    let (shrunk, ..) = run_on_sparse_tree(sorct);
    let (refit, ..) = run_on_sparse_tree(&format!("{sorct}\nrefit_support = true"));
    let (shrunk, refit) = (selected(&shrunk), selected(&refit));
    let (refit_score, penalized) = (refit.objective.unwrap(), shrunk.objective.unwrap());
    assert!(
        refit_score < penalized,
        "refit {refit_score} against penalized {penalized}"
    );
    assert_eq!(shrunk.delta_global, refit.delta_global);
    assert!(refit.raw_status.contains("refit on its support"));
    assert!(refit.train_accuracy > shrunk.train_accuracy + 0.05);
    assert!(refit.test_accuracy > 0.93, "{}", refit.test_accuracy);
}

/// `refit_support`'s multistart on the support: on the generator's seed 5 at lambda_G = 1 / p
/// every start that ends on exactly the relevant features refits from its own point into a
/// tree near 80% (train and test), while S-ORCT on those three columns alone finds the
/// generator's tree (94%), which, laid back into the full problem, is the one returned.
/// Without the multistart the returned tree stays near 80%.
#[test]
fn sorct_refit_reaches_the_tree_s_orct_finds_on_the_support_alone() {
    use glassbox::formulations::sorct::SorctModel;
    let sorct = "name = \"sorct\"\ndepth = 2\nlambda_global_log2 = 0.0";
    let (shrunk, ..) = run_on_sparse_tree_of(5, sorct);
    let (refit, (_dir, out), relevant) = run_on_sparse_tree_of(
        5,
        &format!("{sorct}\nrefit_support = true\nrefit_starts = 5"),
    );
    let (shrunk, refit) = (selected(&shrunk), selected(&refit));
    assert!(
        refit
            .raw_status
            .ends_with("kept the refit from the support's multistart"),
        "{}",
        refit.raw_status
    );
    let model = SorctModel::load(&out.join("models/split-0.json")).unwrap();
    let used: Vec<usize> = (0..model.a.nrows())
        .filter(|&j| model.a.row(j).amax() > glassbox::metrics::SPARSITY_TOLERANCE)
        .collect();
    assert_eq!(used, relevant);
    assert!(shrunk.test_accuracy < 0.9, "{}", shrunk.test_accuracy);
    assert!(refit.test_accuracy > 0.93, "{}", refit.test_accuracy);
    assert!(refit.train_accuracy > 0.93, "{}", refit.train_accuracy);
}

/// `tao_start`: oblique TAO's tree (CART's, its nodes refitted as l1-logistic regressions
/// through IPOPT) laid into S-ORCT's branch nodes predicts on the training rows exactly as
/// the TAO tree does, so the start is that tree and the choice's "kept as it is" is too.
#[test]
fn the_tao_start_is_the_tao_tree_laid_into_the_branch_nodes() {
    use glassbox::data::{MinMaxScaler, Table};
    use glassbox::formulation::NlpClassifierFormulation;
    use glassbox::formulations::sorct::SorctConfig;
    use glassbox::formulations::tao_oblique::TaoObliqueConfig;
    use glassbox::model::Classifier;
    use std::sync::Arc;
    let d = Table::from_csv(&shared("iris.csv"), &Default::default())
        .unwrap()
        .encode_classification()
        .unwrap();
    let scaler = MinMaxScaler::fit(&d.x);
    let x = scaler.transform(&d.x);
    let solver = glassbox::registry::nlp_solver("ipopt", &Default::default()).unwrap();
    let options = Default::default();
    let (tree, outcome, _) = TaoObliqueConfig {
        depth: Some(2),
        lambda: glassbox::formulations::sorct::starts::TAO_START_LAMBDA,
        ..Default::default()
    }
    .fit(&x, &d.y, 3, &*solver, &options)
    .unwrap();
    // TAO moved CART's splits (else this would test CART's start again).
    assert!(outcome.errors_after < outcome.errors_before, "{outcome:?}");
    let config = SorctConfig {
        tao_start: true,
        ..SorctConfig::default()
    };
    let problem = config
        .problem(Arc::new(x.clone()), Arc::new(d.y.clone()), 3)
        .unwrap();
    let starts = config.greedy_starts(&problem, &*solver, &options);
    let origins: Vec<&str> = starts.iter().map(|s| s.origin).collect();
    assert_eq!(origins, ["cart", "tao"]);
    let kept = config.greedy_model(
        &problem,
        &starts[1].point,
        scaler,
        d.classes.clone(),
        d.encoding.clone(),
    );
    assert_eq!(kept.predict(&d.x), tree.predict_class(&x));
}

/// ... and in a run: the TAO start is solved second, and the choice judges its tree too.
#[test]
fn with_tao_start_the_choice_judges_the_tao_tree() {
    let records = run("iris.csv", "name = \"sorct\"\ndepth = 2\ntao_start = true");
    let origins: Vec<Option<&str>> = records.iter().map(|r| r.origin.as_deref()).collect();
    assert_eq!(origins[..3], [Some("cart"), Some("tao"), None]);
    let choice = selected(&records);
    assert!(
        choice.raw_status.contains(", tao 0."),
        "{}",
        choice.raw_status
    );
}

/// `selection_starts`: the folds solve all the multistart's random starts from their seeds
/// ("whole", the default), its best random start again from its seed on their own rows
/// ("replay"), or its best point climbing the gamma continuation ("softened"), instead of
/// its best point as a solution ("best_point"). The choice says which, and its folds cost
/// more iterations than the best point's (a random start climbs the continuation; the best
/// point, solved at the target slope, is a solution already). On ionosphere, where
/// `split_scale = "data"` raises gamma (to 2048 and more), so that there is a continuation.
#[test]
fn selection_starts_say_what_the_folds_solve() {
    let sorct = "name = \"sorct\"\ndepth = 1";
    let best_point = run(
        "ionosphere.csv",
        &format!("{sorct}\nselection_starts = \"best_point\""),
    );
    let best_point = selected(&best_point);
    assert!(
        best_point.gamma.unwrap() > 512.0,
        "gamma {:?}",
        best_point.gamma
    );
    assert!(
        best_point
            .raw_status
            .contains("3-fold selection (1 solve a fold)"),
        "{}",
        best_point.raw_status
    );
    for (starts, says) in [
        ("", "(whole multistart per fold) (1 solve a fold)"),
        (
            "selection_starts = \"replay\"",
            "(best random starts replayed) (1 solve a fold)",
        ),
        (
            "selection_starts = \"softened\"",
            "(best point softened) (1 solve a fold)",
        ),
    ] {
        let says = format!("3-fold selection {says}");
        let records = run("ionosphere.csv", &format!("{sorct}\n{starts}"));
        let choice = selected(&records);
        assert!(choice.raw_status.contains(&says), "{}", choice.raw_status);
        assert!(
            choice.iterations > best_point.iterations,
            "{says}: {} iterations, best point {}",
            choice.iterations,
            best_point.iterations
        );
    }
}

/// `selection_fold_solves` sets the folds' solves besides the greedy starts, at most the
/// split's: with the whole multistart's plan and 3 starts, 1 a fold (the first seeded
/// start) costs fewer iterations than every start (0: the plan's own count), the default
/// 14 a fold is held to the 3 (the same solves as every start), and the choice says what
/// each fold spent.
#[test]
fn selection_fold_solves_sets_what_each_fold_spends() {
    let sorct = "name = \"sorct\"\ndepth = 1";
    let with = |solves: &str| {
        let records = run_starts("ionosphere.csv", "", &format!("{sorct}\n{solves}"), 3);
        selected(&records).clone()
    };
    let every = with("selection_fold_solves = 0");
    let one = with("selection_fold_solves = 1");
    let default = with("");
    let says = "3-fold selection (whole multistart per fold) (1 solve a fold)";
    assert!(one.raw_status.contains(says), "{}", one.raw_status);
    let says = "3-fold selection (whole multistart per fold) (3 solves a fold)";
    assert!(default.raw_status.contains(says), "{}", default.raw_status);
    assert!(
        !every.raw_status.contains("a fold)"),
        "{}",
        every.raw_status
    );
    assert!(
        one.iterations < every.iterations,
        "1 solve a fold: {} iterations, every start (3) {}",
        one.iterations,
        every.iterations
    );
    assert_eq!(default.iterations, every.iterations);
}

/// `selection_polished`: the choice also judges the tree the multistart optimized from
/// CART's start. On this iris split (three random starts) the folds find it clearly better
/// than CART's tree and the best objective's trees not clearly better than it, so it is
/// returned: the CART start's line (its objective and test accuracy), not the best
/// objective's, which is a random start's here. The choice records its accuracy and the
/// paired counts against CART and against the optimized trees.
#[test]
fn selection_polished_returns_the_tree_optimized_from_cart() {
    let records = run_starts(
        "iris.csv",
        "",
        "name = \"sorct\"\ndepth = 2\nselection_polished = true",
        3,
    );
    let kept = selected(&records);
    assert_eq!(kept.origin.as_deref(), Some("selection (cart optimized)"));
    let cart_start = &records[0];
    assert_eq!(cart_start.origin.as_deref(), Some("cart"));
    assert_eq!(kept.objective, cart_start.objective);
    assert_eq!(kept.test_accuracy, cart_start.test_accuracy);
    let best = records[..records.len() - 1]
        .iter()
        .filter(|r| r.objective.is_some())
        .min_by(|a, b| a.objective.unwrap().total_cmp(&b.objective.unwrap()))
        .unwrap();
    assert_ne!(best.start, 0, "the CART start has the best objective");
    assert!(
        kept.raw_status.contains(", cart optimized 0.")
            && kept.raw_status.contains("only the optimized trees"),
        "{}",
        kept.raw_status
    );
    let summary = experiment::summary_table(&records);
    assert!(
        summary.contains(concat!(
            "the optimized tree kept on 0, the one optimized from the greedy start on 1, ",
            "the greedy tree on 0"
        )),
        "{summary}"
    );
}

/// The choice returns a greedy tree kept as it is only where it meets the constraints the
/// user set on the training rows: CART's depth-2 tree on haberman gets fewer than half of
/// the minority class right, so with rho = 0.5 for both classes it is no candidate (it was
/// returned, and saved, before).
#[test]
fn the_choice_does_not_return_a_cart_tree_that_breaks_rho() {
    let records = run(
        "haberman.csv",
        "name = \"sorct\"\ndepth = 2\nrho = [0.5, 0.5]",
    );
    assert_cart_breaks_the_constraints(&records);
}

/// The choice returned the optimized tree because CART's broke the constraints.
fn assert_cart_breaks_the_constraints(records: &[SolveRecord]) {
    let kept = selected(records);
    assert_eq!(kept.origin.as_deref(), Some("selection (optimized)"));
    assert!(
        kept.raw_status
            .contains("the cart tree kept as it is breaks the problem's constraints"),
        "{}",
        kept.raw_status
    );
}

/// ... nor S-ORRT's CART tree that breaks the fairness constraint (6) of the shipped
/// example (mean prediction gap at most 0.3 on the tracts above B's third quartile).
#[test]
fn the_choice_does_not_return_a_cart_tree_that_breaks_fairness() {
    let records = run(
        "boston_housing.csv",
        "name = \"sorrt\"\ndepth = 2\n[formulation.fairness]\n\
         group = { column = \"x12\", above_quantile = 0.75 }\nmean_prediction_gap = 0.3",
    );
    assert_cart_breaks_the_constraints(&records);
}

/// More folds than training rows: no choice is made, and the selected line says why (the
/// choice was skipped without a word).
#[test]
fn more_folds_than_rows_are_said_on_the_selected_line() {
    let records = run(
        "iris.csv",
        "name = \"sorct\"\ndepth = 2\nselection_folds = 500",
    );
    let kept = selected(&records);
    assert!(!kept.is_selection());
    assert!(
        kept.raw_status.contains(
            "no cross-validated choice: selection_folds = 500 is more than the 111 training rows"
        ),
        "{}",
        kept.raw_status
    );
}
