//! Node-based decomposition (NB-DEC / S-NB-DEC, section 6 of the l0 paper) run from configs
//! for l0tree and S-ORCT: the trace per macro-iteration, the final point, the working-set
//! rules, and the config checks.

use glassbox::experiment::{self, ExperimentConfig, SolveRecord};
use glassbox::formulations::decomposition::WorkingSets;
use std::path::Path;

fn example() -> ExperimentConfig {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/l0tree_iris_decomposition.toml");
    let mut config = ExperimentConfig::load(&path).unwrap();
    config.split.repeats = 1;
    config.multistart.starts = 2;
    config
}

fn run(config: &ExperimentConfig) -> Vec<SolveRecord> {
    let dir = tempfile::tempdir().unwrap();
    experiment::run(config, dir.path(), false, false)
        .unwrap()
        .records
}

fn check_trace(record: &SolveRecord, macro_iterations: usize) {
    let trace = record
        .decomposition
        .as_ref()
        .expect("a decomposition trace");
    assert_eq!(trace.len(), macro_iterations + 1);
    for (s, m) in trace.iter().enumerate() {
        assert_eq!(m.macro_iteration, s);
        assert!(m.objective.is_finite());
        assert!((0.0..=1.0).contains(&m.test_accuracy));
    }
    assert!(trace
        .windows(2)
        .all(|w| w[1].seconds >= w[0].seconds && w[1].iterations > w[0].iterations));
    let last = trace.last().unwrap();
    assert_eq!(last.test_accuracy, record.test_accuracy);
    assert!((last.objective - record.objective.unwrap()).abs() < 1e-9);
    assert!((last.seconds - record.solve_seconds).abs() < 1e-9);
    // The decomposition improves on the 5-iteration initialization.
    assert!(
        last.objective < trace[0].objective,
        "{} vs {}",
        last.objective,
        trace[0].objective
    );
    assert!(
        record.status.starts_with("iteration_limit"),
        "{}",
        record.status
    );
}

#[test]
fn s_nb_dec_on_l0tree_traces_every_macro_iteration() {
    let config = example();
    let records = run(&config);
    for r in &records {
        check_trace(r, 5);
        assert!(r.raw_status.contains("15 subproblems"), "{}", r.raw_status);
    }
    let selected = records.iter().find(|r| r.selected).unwrap();
    assert!(selected.test_accuracy > 0.85, "{}", selected.test_accuracy);
    assert_eq!(selected.status, "iteration_limit_feasible");
}

#[test]
fn s_nb_dec_on_sorct_without_initialization_and_c_nb_dec() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/sorct_iris.toml");
    let mut config = ExperimentConfig::load(&path).unwrap();
    config.split.repeats = 1;
    config.multistart.starts = 1;
    let mut dec = example().decomposition.unwrap();
    dec.initialization = false;
    dec.macro_iterations = 3;
    config.decomposition = Some(dec.clone());
    let records = run(&config);
    check_trace(&records[0], 3);
    assert!(
        records[0].test_accuracy > 0.85,
        "{}",
        records[0].test_accuracy
    );

    dec.working_sets = WorkingSets::Alternating;
    config.decomposition = Some(dec);
    let records = run(&config);
    check_trace(&records[0], 3);
    assert!(
        records[0].raw_status.contains("6 subproblems"),
        "{}",
        records[0].raw_status
    );
}

#[test]
fn decomposition_config_errors() {
    let file = Path::new("x.toml");
    let head = "[data]\npath = \"x.csv\"\n[solver]\nname = \"ipopt\"\n";
    for (rest, needle) in [
        (
            "[formulation]\nname = \"logistic_l1\"\n[decomposition]\n",
            "tree formulation",
        ),
        (
            "[formulation]\nname = \"sorct\"\n[decomposition]\npsi = -1.0\n",
            "psi",
        ),
        (
            "[formulation]\nname = \"sorct\"\n[decomposition]\nmacro_iterations = 0\n",
            "macro_iterations",
        ),
        (
            "[formulation]\nname = \"l0tree\"\n[decomposition]\nworking_set = \"x\"\n",
            "working_set",
        ),
        (
            "[formulation]\nname = \"l0tree\"\n[decomposition]\nsubproblem_tolerance = 0.0\n",
            "subproblem_tolerance",
        ),
    ] {
        let err = ExperimentConfig::parse(file, &format!("{head}{rest}"))
            .unwrap_err()
            .to_string();
        assert!(err.contains(needle), "{err}");
    }
}

/// The number of macro-iterations that raise the full objective.
fn rises(record: &SolveRecord) -> usize {
    let trace = record
        .decomposition
        .as_ref()
        .expect("a decomposition trace");
    trace
        .windows(2)
        .filter(|w| w[1].objective > w[0].objective)
        .count()
}

/// The monotone rule ((22) of the l0 paper): no subproblem point that raises the full
/// objective is taken, so no macro-iteration raises it, and the run says how many points it
/// rejected. On these iris starts the unconditional update (21) does raise it (checked
/// first, so that the rule is exercised).
#[test]
fn monotone_rule_keeps_the_objective_from_rising() {
    let mut config = example();
    config.multistart.starts = 3;
    let unconditional = run(&config);
    assert!(
        unconditional.iter().any(|r| rises(r) > 0),
        "no start raises the objective under (21): the instance no longer exercises the rule"
    );
    config.decomposition.as_mut().unwrap().monotone = true;
    let monotone = run(&config);
    let mut rejected = 0;
    for r in &monotone {
        check_trace(r, 5);
        assert_eq!(rises(r), 0, "{:?}", r.decomposition);
        let count = r
            .raw_status
            .split(" rejected by the monotone rule")
            .next()
            .and_then(|head| head.rsplit(' ').next())
            .and_then(|n| n.parse::<usize>().ok())
            .unwrap_or_else(|| panic!("no rejection count in {}", r.raw_status));
        rejected += count;
    }
    assert!(rejected > 0);
}

/// Subproblems go through the registry: the gradient backend solves them as well.
#[test]
fn s_nb_dec_with_the_lbfgs_backend() {
    let mut config = example();
    config.multistart.starts = 1;
    config.solver.name = "lbfgs".into();
    let records = run(&config);
    check_trace(&records[0], 5);
    assert_eq!(records[0].solver, "lbfgs");
    assert!(
        records[0].test_accuracy > 0.85,
        "{}",
        records[0].test_accuracy
    );
}

/// The unset iteration caps are the paper's (5 and 40) for IPOPT and 25 times those for the
/// first-order backends, whose augmented Lagrangian ended 2 of these 12 solves infeasible at
/// 40 (no solution); set caps are kept.
#[test]
fn first_order_backends_get_caps_they_end_feasible_at() {
    use glassbox::formulations::decomposition::Caps;
    let registry = glassbox::registry::Registry::shared_builtin();
    let options = Default::default();
    let caps =
        |solver: &str, config: &glassbox::formulations::decomposition::DecompositionConfig| {
            Caps::of(config, &*registry.nlp_solver(solver, &options).unwrap())
        };
    let mut config = example();
    let unset = config.decomposition.clone().unwrap();
    assert_eq!(
        caps("ipopt", &unset),
        Caps {
            init: 5,
            subproblem: 40
        }
    );
    assert_eq!(
        caps("lbfgs", &unset),
        Caps {
            init: 125,
            subproblem: 1000
        }
    );
    let set = glassbox::formulations::decomposition::DecompositionConfig {
        subproblem_iterations: Some(40),
        ..unset
    };
    assert_eq!(
        caps("lbfgs", &set),
        Caps {
            init: 125,
            subproblem: 40
        }
    );

    config.split.repeats = 3;
    config.multistart.starts = 3;
    config.solver.name = "lbfgs".into();
    let records = run(&config);
    assert_eq!(records.len(), 12);
    for r in &records {
        assert!(
            r.status == "iteration_limit_feasible",
            "{}: {}",
            r.status,
            r.raw_status
        );
    }
}

/// An L0glob problem (exponential approximation, rho) on 40 iris rows, depth 2, and a point
/// inside the bounds.
fn l0glob_iris() -> (
    glassbox::formulations::l0tree::L0TreeConfig,
    glassbox::formulations::l0tree::L0TreeProblem,
    Vec<f64>,
) {
    use glassbox::data::{CsvOptions, MinMaxScaler, Table};
    use glassbox::formulation::NlpClassifierFormulation;
    use glassbox::formulations::l0tree::L0TreeConfig;
    use glassbox::nlp::NlpProblem;
    use rand::{Rng, SeedableRng};
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/datasets/iris.csv");
    let data = Table::from_csv(&path, &CsvOptions::default())
        .unwrap()
        .encode_classification()
        .unwrap();
    let data = data.rows(&(0..150).step_by(3).collect::<Vec<_>>());
    let x = std::sync::Arc::new(MinMaxScaler::fit(&data.x).transform(&data.x));
    let config = L0TreeConfig {
        depth: 2,
        gamma: 32.0,
        lambda_global: 0.5,
        rho: vec![0.1],
        ..Default::default()
    };
    let problem = config.problem(x, std::sync::Arc::new(data.y), 3).unwrap();
    let (lower, upper) = problem.variable_bounds();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    let mut point = config.random_start(&problem, &mut rng);
    for (v, (l, u)) in point.iter_mut().zip(lower.iter().zip(&upper)) {
        *v = (*v + rng.random_range(-0.05..0.05)).clamp(l + 0.02, u - 0.02);
    }
    (config, problem, point)
}

/// Every S-NB-DEC subproblem of L0glob (one branch node, every leaf, beta): exact gradient,
/// Jacobian and Hessian (only the free variables' parts are computed, with the fixed
/// nodes' routing cached) against central differences, and its values equal bit for bit
/// to those of a fresh problem, which computes every node's routing from scratch.
#[test]
fn cached_subproblems_are_exact() {
    use glassbox::formulation::NlpClassifierFormulation;
    use glassbox::formulations::decomposition::Restricted;
    use glassbox::nlp::{check, NlpProblem};
    let (config, problem, base) = l0glob_iris();
    let blocks = config.node_blocks(&problem).unwrap();
    let leaves: Vec<usize> = (0..blocks.leaves.len()).collect();
    for t in 0..blocks.branches.len() {
        let sub = Restricted::of(&problem, &blocks, &[t], &leaves, &base, 0.3);
        let mut xl = sub.local(&base);
        for (i, v) in xl.iter_mut().enumerate() {
            *v += 0.01 * ((i % 5) as f64 - 2.0);
        }
        let (lower, upper) = sub.variable_bounds();
        for (v, (l, u)) in xl.iter_mut().zip(lower.iter().zip(&upper)) {
            // Inside the bounds where there is room (a fixed node's |a_jt| near 1 leaves
            // beta_j almost none); clamp would panic there.
            *v = if u - l > 0.02 {
                v.clamp(l + 0.01, u - 0.01)
            } else {
                0.5 * (l + u)
            };
        }
        let step = 1e-6 / config.gamma.sqrt();
        let grad = check::gradient_error(&sub, &xl, step);
        assert!(grad < 1e-5, "node {t}: gradient error {grad}");
        let jac = check::jacobian_error(&sub, &xl, step);
        assert!(jac < 1e-5, "node {t}: Jacobian error {jac}");
        let m = sub.num_constraints();
        let lambda: Vec<f64> = (0..m).map(|r| 0.5 - (r % 3) as f64 * 0.4).collect();
        let hess = check::hessian_error(&sub, &xl, 1.3, &lambda, step).unwrap();
        assert!(hess < 1e-4, "node {t}: Hessian error {hess}");

        // The finite differences above moved only free variables, so `problem` now holds
        // the fixed nodes' routing from earlier points; `fresh` has none.
        let (_, fresh, _) = l0glob_iris();
        let fresh_sub = Restricted::of(&fresh, &blocks, &[t], &leaves, &base, 0.3);
        let values = |s: &Restricted| {
            let mut g = vec![0.0; s.num_variables()];
            s.gradient(&xl, &mut g);
            let mut c = vec![0.0; m];
            s.constraints(&xl, &mut c);
            let mut j = vec![0.0; s.jacobian_structure().len()];
            s.jacobian_values(&xl, &mut j);
            let mut h = vec![0.0; s.hessian_structure().unwrap().len()];
            s.hessian_values(&xl, 1.3, &lambda, &mut h);
            (s.objective(&xl), g, c, j, h)
        };
        assert!(values(&sub) == values(&fresh_sub), "node {t}");
        // And the free part of the full problem's gradient, computed for every node.
        let (x, positions) = (sub.full(&xl), sub.free());
        let mut full_grad = vec![0.0; problem.num_variables()];
        fresh.gradient(&x, &mut full_grad);
        let mut sub_grad = vec![0.0; sub.num_variables()];
        Restricted::of(&fresh, &blocks, &[t], &leaves, &x, 0.0).gradient(&xl, &mut sub_grad);
        for (&v, &g) in positions.iter().zip(&sub_grad) {
            assert!(
                (full_grad[v] - g).abs() <= 1e-12 * (1.0 + g.abs()),
                "node {t}, variable {v}: {} vs {g}",
                full_grad[v]
            );
        }
    }
}

/// The full problem without its linear-row declaration, so that its subproblems keep every
/// row with a free variable as a row (what they did before rows became bounds).
struct RowsKept<'a>(&'a dyn glassbox::nlp::NlpProblem);

impl glassbox::nlp::NlpProblem for RowsKept<'_> {
    fn num_variables(&self) -> usize {
        self.0.num_variables()
    }
    fn num_constraints(&self) -> usize {
        self.0.num_constraints()
    }
    fn variable_bounds(&self) -> (Vec<f64>, Vec<f64>) {
        self.0.variable_bounds()
    }
    fn constraint_bounds(&self) -> (Vec<f64>, Vec<f64>) {
        self.0.constraint_bounds()
    }
    fn objective(&self, x: &[f64]) -> f64 {
        self.0.objective(x)
    }
    fn gradient(&self, x: &[f64], grad: &mut [f64]) {
        self.0.gradient(x, grad)
    }
    fn constraints(&self, x: &[f64], g: &mut [f64]) {
        self.0.constraints(x, g)
    }
    fn jacobian_structure(&self) -> Vec<(usize, usize)> {
        self.0.jacobian_structure()
    }
    fn jacobian_values(&self, x: &[f64], values: &mut [f64]) {
        self.0.jacobian_values(x, values)
    }
    fn hessian_structure(&self) -> Option<Vec<(usize, usize)>> {
        self.0.hessian_structure()
    }
    fn hessian_values(&self, x: &[f64], s: f64, lambda: &[f64], values: &mut [f64]) {
        self.0.hessian_values(x, s, lambda, values)
    }
    fn masked(&self) -> Option<&dyn glassbox::nlp::MaskedEvaluations> {
        self.0.masked()
    }
}

/// An L0glob subproblem turns the fixed nodes' sign rows beta_j >= +-a_jt into bounds on
/// beta_j (max over the fixed nodes of |a_jt|): fewer rows, the same optimum (IPOPT to
/// convergence on both forms from the same point) and derivatives still exact.
#[cfg(feature = "ipopt")]
#[test]
fn fixed_sign_rows_become_bounds_with_the_same_optimum() {
    use glassbox::formulation::NlpClassifierFormulation;
    use glassbox::formulations::decomposition::Restricted;
    use glassbox::nlp::{check, NlpProblem};
    use glassbox::{NlpSolver, SolveOptions, WarmStart};
    let (config, problem, base) = l0glob_iris();
    let blocks = config.node_blocks(&problem).unwrap();
    let leaves: Vec<usize> = (0..blocks.leaves.len()).collect();
    let kept = RowsKept(&problem);
    // The rows declared linear (the inner S-ORCT's (10), (11), then the sign rows) have the
    // same Jacobian values at two different points.
    let linear = problem.linear_constraints();
    assert_eq!(linear.iter().filter(|&&l| l).count(), 3 + 4 + 2 * 4 * 3);
    let structure = problem.jacobian_structure();
    let moved: Vec<f64> = base.iter().map(|v| 0.9 * v + 0.03).collect();
    let (mut at_base, mut at_moved) = (vec![0.0; structure.len()], vec![0.0; structure.len()]);
    problem.jacobian_values(&base, &mut at_base);
    problem.jacobian_values(&moved, &mut at_moved);
    for (k, &(r, _)) in structure.iter().enumerate() {
        assert!(
            !linear[r] || at_base[k] == at_moved[k],
            "row {r} is not linear"
        );
    }
    let p = 4; // iris features
    let others = blocks.branches.len() - 1;
    for t in 0..blocks.branches.len() {
        let bounded = Restricted::of(&problem, &blocks, &[t], &leaves, &base, 0.3);
        let rows = Restricted::of(&kept, &blocks, &[t], &leaves, &base, 0.3);
        assert_eq!(bounded.free(), rows.free());
        assert_eq!(
            rows.num_constraints() - bounded.num_constraints(),
            2 * p * others,
            "node {t}: every fixed node's 2p sign rows become bounds"
        );
        let xl = bounded.local(&base);
        let step = 1e-6 / config.gamma.sqrt();
        assert!(check::gradient_error(&bounded, &xl, step) < 1e-5);
        assert!(check::jacobian_error(&bounded, &xl, step) < 1e-5);
        let lambda = vec![0.7; bounded.num_constraints()];
        assert!(check::hessian_error(&bounded, &xl, 1.3, &lambda, step).unwrap() < 1e-4);

        let options = SolveOptions {
            tolerance: Some(1e-10),
            warm_start: Some(WarmStart::primal(xl.clone())),
            ..Default::default()
        };
        let solver = glassbox::solvers::ipopt::IpoptSolver;
        let a = solver.solve(&bounded, &options).unwrap();
        let b = solver.solve(&rows, &options).unwrap();
        let (fa, fb) = (a.objective.unwrap(), b.objective.unwrap());
        assert!(
            (fa - fb).abs() <= 1e-6 * (1.0 + fb.abs()),
            "node {t}: optimum {fa} with bounds vs {fb} with rows ({:?} / {:?})",
            a.status,
            b.status
        );
        // The bounded optimum is feasible for the full problem's rows.
        let x = bounded.full(&a.primal);
        let violation = glassbox::nlp::max_violation(&problem, &x);
        assert!(violation < 1e-6, "node {t}: violation {violation}");
    }
}

/// S-ORCT and l0tree reach their masked evaluations through `NlpProblem::masked` (without
/// it a subproblem would quietly evaluate every node), and those agree with the full
/// evaluations on the free variables.
#[test]
fn tree_formulations_give_masked_evaluations() {
    use glassbox::formulations::sorct::SorctConfig;
    use glassbox::nlp::{self, NlpProblem};
    let (_, l0, x) = l0glob_iris();
    let sorct = SorctConfig {
        depth: 2,
        ..Default::default()
    }
    .problem(
        std::sync::Arc::new(nalgebra::DMatrix::from_fn(12, 3, |i, j| {
            ((i * 7 + j * 3) % 10) as f64 / 10.0
        })),
        std::sync::Arc::new((0..12).map(|i| i % 3).collect()),
        3,
    )
    .unwrap();
    let sorct_x: Vec<f64> = (0..sorct.num_variables())
        .map(|v| 0.1 + 0.8 * ((v * 5) % 7) as f64 / 7.0)
        .collect();
    let problems: [(&dyn NlpProblem, &[f64]); 2] = [(&l0, &x), (&sorct, &sorct_x)];
    for (problem, x) in problems {
        assert!(problem.masked().is_some(), "{}", problem.name());
        let n = problem.num_variables();
        // Free: the first third of the variables (a branch node's block and more).
        let free: Vec<bool> = (0..n).map(|v| v < n / 3).collect();
        let mut full = vec![0.0; n];
        problem.gradient(x, &mut full);
        let mut among = vec![0.0; n];
        nlp::gradient_among(problem, x, &free, &mut among);
        for v in (0..n).filter(|&v| free[v]) {
            assert!(
                (full[v] - among[v]).abs() <= 1e-12 * (1.0 + full[v].abs()),
                "{} variable {v}: {} vs {}",
                problem.name(),
                full[v],
                among[v]
            );
        }
    }
}

/// S-NB-DEC of [`l0glob_iris`] from its point by lbfgs under `options`.
fn decompose_l0glob(
    options: glassbox::SolveOptions,
    config: glassbox::formulations::decomposition::DecompositionConfig,
) -> glassbox::formulations::decomposition::Outcome {
    use glassbox::formulation::NlpClassifierFormulation;
    let (tree, problem, start) = l0glob_iris();
    let blocks = tree.node_blocks(&problem).unwrap();
    let options = options.with_warm_start(Some(glassbox::WarmStart::primal(start)));
    let solver = glassbox::registry::nlp_solver("lbfgs", &options).unwrap();
    glassbox::formulations::decomposition::solve(
        &problem,
        &blocks,
        &*solver,
        &options,
        &config,
        1,
        &mut |_| (0.0, 0.0),
    )
    .unwrap()
}

/// The solver's iteration_limit holds for the initialization as for every subproblem (the
/// initialization ran its 125 iterations whatever the limit: 125 with a limit of 0).
#[test]
fn iteration_limit_holds_for_the_initialization_too() {
    use glassbox::formulations::decomposition::DecompositionConfig;
    let config = DecompositionConfig {
        macro_iterations: 1,
        ..Default::default()
    };
    for limit in [0, 3] {
        let options = glassbox::SolveOptions {
            iteration_limit: Some(limit),
            ..Default::default()
        };
        let outcome = decompose_l0glob(options, config.clone());
        let r = &outcome.result;
        // Depth 2: one subproblem per branch node, 3, after the initialization.
        assert!(r.raw_status.contains("3 subproblems"), "{}", r.raw_status);
        assert!(
            outcome.trace[0].iterations <= limit,
            "limit {limit}: {} iterations to initialize",
            outcome.trace[0].iterations
        );
        assert!(r.iterations <= 4 * limit, "limit {limit}: {}", r.iterations);
        assert_eq!(r.status.limit(), Some(glassbox::Limit::Iteration));
        // Stopped short of feasibility, it names the limit that stopped the subproblems.
        if !r.status.has_solution() {
            let named = format!("iteration_limit = {limit}");
            assert!(r.raw_status.contains(&named), "{}", r.raw_status);
        }
    }
}

/// A stop request (Ctrl-C) ends a decomposition at its next solve with the interrupted
/// status, as it ends an undecomposed solve; it ran on to the macro-iteration or time
/// limit (10.6 s after a Ctrl-C with time_limit = 8).
#[test]
fn a_stop_request_ends_the_decomposition() {
    use glassbox::formulations::decomposition::DecompositionConfig;
    use glassbox::{Interrupt, Limit};
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let with_stop = |flag: &Arc<AtomicBool>| glassbox::SolveOptions {
        time_limit: Some(60.0),
        interrupt: Some(Interrupt::new(flag.clone())),
        ..Default::default()
    };
    // Requested before the run, with and without the initialization: nothing is solved.
    for initialization in [true, false] {
        let flag = Arc::new(AtomicBool::new(true));
        let config = DecompositionConfig {
            macro_iterations: 3,
            initialization,
            ..Default::default()
        };
        let outcome = decompose_l0glob(with_stop(&flag), config);
        let r = &outcome.result;
        assert_eq!(
            r.status.limit(),
            Some(Limit::Interrupted),
            "{}",
            r.raw_status
        );
        assert_eq!(outcome.trace.len(), 1, "{}", r.raw_status);
    }
    // Requested during the run: it ends within a few seconds, not at the time limit.
    let flag = Arc::new(AtomicBool::new(false));
    let config = DecompositionConfig {
        macro_iterations: 1_000_000,
        ..Default::default()
    };
    let setter = {
        let flag = flag.clone();
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(300));
            flag.store(true, Ordering::SeqCst);
        })
    };
    let clock = std::time::Instant::now();
    let outcome = decompose_l0glob(with_stop(&flag), config);
    setter.join().unwrap();
    let r = &outcome.result;
    assert!(clock.elapsed().as_secs_f64() < 10.0, "{}", r.raw_status);
    assert_eq!(
        r.status.limit(),
        Some(Limit::Interrupted),
        "{}",
        r.raw_status
    );
}
