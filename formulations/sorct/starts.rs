//! Starting points for S-ORCT.
//!
//! With gamma = 512 the logistic CDF is flat away from its split, so a start whose splits
//! miss the data has no gradient and IPOPT stops at the trivial tree: uniform random
//! starts (`Initialization::Uniform`, kept for comparison) reach ~43% test accuracy on iris
//! D=2. Our default (`Initialization::Data`) draws, node by node from the root down:
//!
//! 1. a random oblique direction a_t ~ U[-1, 1]^p;
//! 2. mu_t at the median of a_t.x / p over the training points that the (hard) splits of
//!    the ancestors route to node t — not over all points, so that every split, the
//!    deeper ones included, cuts the points that actually reach it;
//! 3. the leaf labels C from the points each leaf receives under the hard splits: each
//!    leaf takes the class of least misclassification cost, then classes that label no
//!    leaf take over the leaf where that costs least (a greedy solution of the small
//!    transportation problem of Theorem 1), so constraint (11) holds at the start; C starts
//!    halfway between these 0/1 labels and the uniform 1/K, inside its box.
//!
//! The start is thus a deterministic oblique tree that already classifies better than
//! chance, and IPOPT refines every split where its gradient is alive.

use super::problem::SorctProblem;
use nalgebra::DMatrix;
use rand::Rng;
use serde::{Deserialize, Serialize};

/// How random starting points are drawn.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Initialization {
    /// Splits through the training points that reach each node, labels from the points
    /// that reach each leaf (the default).
    #[default]
    Data,
    /// a and mu uniform in [-1, 1], C uniform 1/K (for comparison only).
    Uniform,
}

/// A random starting point drawn as `init` says.
pub fn random_start<R: Rng>(problem: &SorctProblem, init: Initialization, rng: &mut R) -> Vec<f64> {
    let lay = &problem.layout;
    let (p, branches) = (lay.p, lay.branches);
    let mut a = DMatrix::zeros(p, branches);
    for v in a.iter_mut() {
        *v = rng.random_range(-1.0..=1.0);
    }
    match init {
        Initialization::Uniform => {
            let mu: Vec<f64> = (0..branches)
                .map(|_| rng.random_range(-1.0..=1.0))
                .collect();
            let c = DMatrix::from_element(lay.classes, lay.leaves, 1.0 / lay.classes as f64);
            point(problem, &a, &mu, &c)
        }
        Initialization::Data => {
            let x = &*problem.x;
            let projection = x * &a / p as f64;
            let mut mu = vec![0.0; branches];
            // node_of[i]: the branch node row i is at while we descend level by level.
            let mut node_of = vec![0usize; x.nrows()];
            for t in 0..branches {
                let mut values: Vec<f64> = (0..x.nrows())
                    .filter(|&i| node_of[i] == t)
                    .map(|i| projection[(i, t)])
                    .collect();
                if values.len() < 2 {
                    values = projection.column(t).iter().copied().collect();
                }
                mu[t] = glassbox_core::metrics::median_in_place(&mut values)
                    .unwrap_or(0.0)
                    .clamp(-1.0, 1.0);
                for i in 0..x.nrows() {
                    if node_of[i] == t {
                        node_of[i] = if projection[(i, t)] - mu[t] >= 0.0 {
                            2 * t + 1
                        } else {
                            2 * t + 2
                        };
                    }
                }
            }
            let leaf_of: Vec<usize> = node_of.iter().map(|&v| v - branches).collect();
            // Halfway between the hard labels and uniform: IPOPT starts inside the box of C
            // rather than at a vertex, which measured better (iris 95.1% vs 94.4%, wine
            // 96.9% vs 96.2% over ten splits x 20 starts).
            let uniform = 1.0 / lay.classes as f64;
            let c = label_leaves(problem, &leaf_of).map(|v| 0.5 * v + 0.5 * uniform);
            point(problem, &a, &mu, &c)
        }
    }
}

/// The CART tree of the problem's depth on its training rows as a start: one coefficient
/// -1 per splitting node at CART's threshold (`formulations/axis_start.rs`), the leaves
/// labelled from the rows CART sends them (step 3 of the module comment, halfway to
/// uniform as the random starts).
pub fn cart_start(problem: &SorctProblem) -> Vec<f64> {
    let lay = &problem.layout;
    let splits =
        super::scale::cart_splits(&problem.x, &problem.y, lay.classes, problem.params.depth);
    let uniform = 1.0 / lay.classes as f64;
    let c = label_leaves(problem, &splits.leaf_of).map(|v| 0.5 * v + 0.5 * uniform);
    point(problem, &splits.a, &splits.mu, &c)
}

/// The l1 penalty of the node regressions of [`tao_start`]'s oblique TAO, on the scaled
/// features: small, so that a node's hyperplane is the regression's with hardly a
/// coefficient removed (S-ORCT's lambda = 0 asks for no sparsity), yet positive, so that a
/// node whose care points a hyperplane separates still has a bounded regression.
pub const TAO_START_LAMBDA: f64 = 1e-4;

/// The oblique TAO tree (`tao_oblique`: CART of the problem's depth, then an l1-logistic
/// regression per node on its care points, solved by `solver`, kept where it misroutes
/// fewer of them) on the problem's training rows as a start: its hyperplanes laid into the
/// branch nodes ([`crate::tao_oblique::ObliqueTree::randomized_splits`]), the leaves
/// labelled as the CART start's are. `None` when TAO fails (its CART tree or every
/// regression; a failed node regression leaves that node's CART split).
pub fn tao_start(
    problem: &SorctProblem,
    solver: &dyn glassbox_core::NlpSolver,
    options: &glassbox_core::SolveOptions,
) -> Option<Vec<f64>> {
    let lay = &problem.layout;
    let depth = problem.params.depth;
    let tao = crate::tao_oblique::TaoObliqueConfig {
        depth: Some(depth),
        lambda: TAO_START_LAMBDA,
        ..Default::default()
    };
    let (tree, _, _) = tao
        .fit(&problem.x, &problem.y, lay.classes, solver, options)
        .ok()?;
    let splits = tree.randomized_splits(&problem.x, depth)?;
    let uniform = 1.0 / lay.classes as f64;
    let c = label_leaves(problem, &splits.leaf_of).map(|v| 0.5 * v + 0.5 * uniform);
    Some(point(problem, &splits.a, &splits.mu, &c))
}

/// Per leaf, the misclassification cost of labelling it with each class, over the rows
/// `leaf_of` sends it, and the cheapest label.
fn leaf_costs(problem: &SorctProblem, leaf_of: &[usize]) -> (Vec<Vec<f64>>, Vec<usize>) {
    let lay = &problem.layout;
    let (leaves, classes) = (lay.leaves, lay.classes);
    // cost[l][k]: misclassification cost of labelling leaf l with class k.
    let mut cost = vec![vec![0.0; classes]; leaves];
    for (i, &l) in leaf_of.iter().enumerate() {
        for (k, c) in cost[l].iter_mut().enumerate() {
            *c += problem.costs[(problem.y[i], k)];
        }
    }
    let label: Vec<usize> = cost
        .iter()
        .map(|row| {
            (0..classes)
                .min_by(|&a, &b| row[a].total_cmp(&row[b]))
                .unwrap_or(0)
        })
        .collect();
    (cost, label)
}

/// C (K x |tau_L|, one-hot) labelling each leaf with its cheapest class, whether or not
/// every class labels a leaf: the greedy tree's own leaves.
pub(crate) fn cheapest_labels(problem: &SorctProblem, leaf_of: &[usize]) -> DMatrix<f64> {
    one_hot(problem, &leaf_costs(problem, leaf_of).1)
}

fn one_hot(problem: &SorctProblem, label: &[usize]) -> DMatrix<f64> {
    let lay = &problem.layout;
    DMatrix::from_fn(lay.classes, lay.leaves, |k, l| {
        if label[l] == k {
            1.0
        } else {
            0.0
        }
    })
}

/// Leaf labels from a hard routing of the training rows (see the module comment, step 3).
pub(crate) fn label_leaves(problem: &SorctProblem, leaf_of: &[usize]) -> DMatrix<f64> {
    let lay = &problem.layout;
    let (leaves, classes) = (lay.leaves, lay.classes);
    let (cost, mut label) = leaf_costs(problem, leaf_of);
    for _ in 0..classes {
        let Some(missing) = (0..classes).find(|k| !label.contains(k)) else {
            break;
        };
        // Take the leaf whose relabelling costs least among leaves whose class keeps
        // another leaf.
        let candidate = (0..leaves)
            .filter(|&l| label.iter().filter(|&&k| k == label[l]).count() > 1)
            .min_by(|&l1, &l2| {
                let d1 = cost[l1][missing] - cost[l1][label[l1]];
                let d2 = cost[l2][missing] - cost[l2][label[l2]];
                d1.total_cmp(&d2)
            });
        match candidate {
            Some(l) => label[l] = missing,
            None => break,
        }
    }
    one_hot(problem, &label)
}

/// The NLP variable vector of a tree given by its coefficients a (p x |tau_B|, clipped to
/// [-1, 1]), locations mu and leaf labels C: splits a into a+ and a- and sets beta to
/// max_t |a_jt| as the layout requires.
pub fn point(problem: &SorctProblem, a: &DMatrix<f64>, mu: &[f64], c: &DMatrix<f64>) -> Vec<f64> {
    let lay = &problem.layout;
    let mut x = vec![0.0; lay.n];
    for t in 0..lay.branches {
        for j in 0..lay.p {
            let v = a[(j, t)].clamp(-1.0, 1.0);
            if lay.split {
                x[lay.a(j, t)] = v.max(0.0);
                x[lay.a_neg(j, t)] = (-v).max(0.0);
            } else {
                x[lay.a(j, t)] = v;
            }
        }
        x[lay.mu + t] = mu[t].clamp(-1.0, 1.0);
    }
    for k in 0..lay.classes {
        for l in 0..lay.leaves {
            x[lay.c(k, l)] = c[(k, l)].clamp(0.0, 1.0);
        }
    }
    if lay.beta {
        for j in 0..lay.p {
            x[lay.beta_at + j] = (0..lay.branches)
                .map(|t| a[(j, t)].abs().min(1.0))
                .fold(0.0, f64::max);
        }
    }
    x
}
