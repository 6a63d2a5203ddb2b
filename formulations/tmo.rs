//! TMO, Tree Memetic Optimization (the thesis' section 3.3, Algorithm 3; Aldinucci 2023):
//! a memetic search over classification trees of depth d.
//!
//! 1. The initial population is a random forest of k trees of depth d (line 2), each then
//!    optimized by TAO on the training rows (section 3.3: "each model is locally optimized
//!    ... using TAO").
//! 2. For n_gen generations (line 5), with a fresh bootstrap sample B of the training rows
//!    per generation (line 6), every individual i (line 7) meets a partner j drawn
//!    uniformly among the others (line 8); the child takes each node z of the fixed-length
//!    BFS encoding from j with probability CR and from i otherwise (lines 9-15); the child
//!    is optimized by TAO on B (line 16) and replaces i if its training accuracy (the
//!    fitness) is strictly higher (lines 17-19); the best tree so far is kept (20-23).
//! 3. A wall-clock limit, counted from the start (growing the population included), stops
//!    the search between two children, and before then the population's growth (between
//!    two trees) and its TAO passes (between two trees).
//!
//! The encoding (Figure 3.10) has one gene per branch position `0..2^d - 1` of the complete
//! tree of depth d, in BFS order: a split (feature, threshold), a leaf, or nil. The last
//! level is not encoded: leaf classes always come from the majority of the rows reaching
//! them. Decoding a child repairs its structure top-down, as Figures 3.11-3.14 describe
//! them, each a change of the own tree t_i by a gene of the partner t_j:
//! - branch/leaf (3.11): a partner's leaf where t_i branches prunes the subtree;
//! - leaf/branch (3.12): a partner's branch where t_i has a leaf splits it, and its two
//!   children (nil in t_i) are created as leaves;
//! - branch/nil (3.13): a partner's nil under a branch of t_i makes that parent a leaf (the
//!   sibling's subtree goes too);
//! - nil/branch (3.14): a partner's branch under a leaf of t_i turns the parent into a
//!   branch with a random split, and the sibling (nil in t_i) into a leaf.
//!
//! A branch gene over a nil child gene, or a leaf gene over a branch gene, always come from
//! different parents (each parent is a valid tree); the thesis' figures change one node at
//! a time, so they do not say which wins when crossover draws both at once. Choice: the
//! partner's gene wins over the own gene it conflicts with, which gives exactly the four
//! figures when only one node comes from the partner.
//!
//! Other choices where the thesis is silent: the random split of 3.14 uses a uniformly
//! drawn feature and the value of that feature at a uniformly drawn training row as
//! threshold; a parent made a leaf by 3.13 stays a leaf; genes under a position that
//! decoded to nil are dropped; the population's forest uses
//! max_features = "sqrt" and bootstrap samples (scikit-learn's defaults, as the thesis used
//! scikit-learn's forest); fitness ties keep the incumbent (strict improvement, as line 17).
//!
//! The defaults are the thesis' experimental settings (section 3.3, "Numerical
//! experiments"): k = 100 trees of scikit-learn's forest with only the depth set, n_gen = 5,
//! CR = 0.75, 600 s. The thesis does not say how many TAO passes it makes; TAO here runs
//! until a pass changes nothing (at most `tao_passes`). The thesis splits its data 64/16/20
//! and uses the 16% validation part only to tune OCT's alpha: CART (scikit-learn's, only
//! the depth set), TAO and TMO are not tuned, and Algorithm 3 returns t_best, the fittest
//! tree on the training part. `validation_fraction` (TMO-V) is our addition, off by
//! default.
//!
//! Depends on the core and on `cart`, `forest` and `tao`.

use crate::cart::grow::{Criterion, Targets};
use crate::cart::tree::{AxisSplit, AxisTree, BfsNode, BfsTree};
use crate::cart::TreeModel;
use crate::forest::{bootstrap_weights, ForestConfig, MaxFeatures};
use crate::tao::Tao;
use glassbox_core::formulation::{FormulationInfo, ParamSpec};
use glassbox_core::learner::{HeuristicFit, HeuristicLearner, TrainingSet};
use glassbox_core::{GlassboxError, Interrupt, Result};
use nalgebra::DMatrix;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::time::Instant;

/// The name configs and saved models use.
pub const NAME: &str = "tmo";

/// The `[formulation]` table of TMO.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TmoConfig {
    /// Maximum depth d of every tree.
    pub depth: usize,
    /// Population size k (trees of the initial forest).
    pub n_trees: usize,
    /// Generations n_gen.
    pub n_gen: usize,
    /// Cross rate CR.
    pub cr: f64,
    /// Criterion of the forest's trees.
    pub criterion: Criterion,
    /// Features drawn per node by the forest (default "sqrt").
    pub max_features: Option<MaxFeatures>,
    /// Maximum passes of each TAO run.
    pub tao_passes: usize,
    /// Wall-clock limit in seconds.
    pub time_limit: f64,
    /// Seed.
    pub seed: u64,
    /// Hold out this part of the training rows (stratified) and return the tree of the
    /// final population (or t_best) that classifies it best; none: Algorithm 3's t_best.
    pub validation_fraction: Option<f64>,
    /// A stop request (Ctrl-C in `glassbox run`), checked with the time limit before every
    /// tree of the initial population is grown and before its TAO runs, and before every
    /// child: the run then ends
    /// with what it has (the runner abandons it). Not part of a config: the runner sets it
    /// from the training set's.
    #[serde(skip)]
    pub interrupt: Option<Interrupt>,
}

impl Default for TmoConfig {
    fn default() -> Self {
        TmoConfig {
            depth: 3,
            n_trees: 100,
            n_gen: 5,
            cr: 0.75,
            criterion: Criterion::Gini,
            // The initial forest's default, written out as `info` prints it (TMO classifies).
            max_features: Some(MaxFeatures::Rule("sqrt".to_string())),
            tao_passes: 50,
            time_limit: 600.0,
            seed: 1,
            validation_fraction: None,
            interrupt: None,
        }
    }
}

/// The description `glassbox formulations` prints.
pub fn info() -> FormulationInfo {
    const PARAMS: &[ParamSpec] = &[
        ParamSpec {
            name: "depth",
            default: "3",
            help: "maximum depth d of the trees",
        },
        ParamSpec {
            name: "n_trees",
            default: "100",
            help: "population size k (trees of the initial random forest)",
        },
        ParamSpec {
            name: "n_gen",
            default: "5",
            help: "generations n_gen",
        },
        ParamSpec {
            name: "cr",
            default: "0.75",
            help: "cross rate CR: a node comes from the partner with this probability",
        },
        ParamSpec {
            name: "criterion",
            default: "\"gini\"",
            help: "criterion of the initial forest's trees (gini | entropy)",
        },
        ParamSpec {
            name: "max_features",
            default: "\"sqrt\"",
            help: "features drawn per node by the initial forest",
        },
        ParamSpec {
            name: "tao_passes",
            default: "50",
            help: "maximum passes of each TAO run",
        },
        ParamSpec {
            name: "time_limit",
            default: "600.0",
            help: "wall-clock limit in seconds",
        },
        ParamSpec {
            name: "seed",
            default: "1",
            help: "seed of the forest, the bootstrap samples, partners and crossover",
        },
        ParamSpec {
            name: "validation_fraction",
            default: "",
            help: "hold out this part of the training rows and return the final tree that classifies it best (not in Algorithm 3)",
        },
    ];
    FormulationInfo {
        name: NAME,
        kind: "heuristic",
        description: "TMO (thesis 3.3, Algorithm 3): memetic search over depth-d trees, random-forest population, node-wise crossover, TAO on bootstrap samples",
        parameters: PARAMS,
    }
}

/// One gene of the encoding.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Gene {
    /// A branch with its split.
    Branch(AxisSplit),
    /// A leaf (its class is not encoded).
    Leaf,
    /// No node.
    Nil,
}

/// The thesis' fixed-length encoding of `tree` in depth `depth`: one gene per branch
/// position `0..2^depth - 1`, BFS order.
pub fn encode(tree: &AxisTree, depth: usize) -> Result<Vec<Gene>> {
    let bfs = tree.to_bfs(depth)?;
    Ok(bfs.nodes[..(1usize << depth) - 1]
        .iter()
        .map(|n| match n {
            BfsNode::Branch(s) => Gene::Branch(*s),
            BfsNode::Leaf(_) => Gene::Leaf,
            BfsNode::Nil => Gene::Nil,
        })
        .collect())
}

/// Where a decoded position stands.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Decoded {
    Branch(AxisSplit),
    Leaf,
    /// A leaf made so by a nil child (Figure 3.13): nothing may grow below it.
    Collapsed,
    Nil,
}

/// Decodes `genes` into a tree of depth `depth`, repairing the structure as the module
/// comment says; `from_partner[z]` says whether gene z came from the partner t_j;
/// `random_split` draws the split of a parent that Figure 3.14 creates. The leaves' values
/// are empty: TAO (or [`Tao::refresh`]) fills them.
pub fn decode(
    genes: &[Gene],
    from_partner: &[bool],
    depth: usize,
    mut random_split: impl FnMut() -> AxisSplit,
) -> Result<AxisTree> {
    let n_branch = (1usize << depth) - 1;
    if genes.len() != n_branch || from_partner.len() != n_branch {
        return Err(GlassboxError::formulation(
            NAME,
            format!("{} genes for depth {depth}", genes.len()),
        ));
    }
    let mut state = vec![Decoded::Nil; n_branch];
    // Whether a branch's children must exist: it came from the partner over a leaf of t_i
    // (3.12), or nil/branch created it (3.14).
    let mut keeps_children = vec![false; n_branch];
    for z in 0..n_branch {
        if z == 0 {
            state[0] = match genes[0] {
                Gene::Branch(s) => Decoded::Branch(s),
                _ => Decoded::Leaf,
            };
            keeps_children[0] = from_partner[0];
            continue;
        }
        let parent = (z - 1) / 2;
        let is_right = z % 2 == 0;
        let sibling = if is_right { z - 1 } else { z + 1 };
        // Whether this gene is the partner's change against an own parent gene.
        let child_prevails = from_partner[z] && !from_partner[parent];
        state[z] = match (state[parent], genes[z]) {
            (Decoded::Branch(_), Gene::Branch(s)) => {
                keeps_children[z] = from_partner[z];
                Decoded::Branch(s)
            }
            (Decoded::Branch(_), Gene::Leaf) => Decoded::Leaf,
            (Decoded::Branch(_), Gene::Nil) if keeps_children[parent] || !child_prevails => {
                // Figure 3.12: the children of a new branch are created as leaves.
                Decoded::Leaf
            }
            (Decoded::Branch(_), Gene::Nil) => {
                // Figure 3.13: the parent becomes a leaf, the sibling goes.
                state[parent] = Decoded::Collapsed;
                if is_right {
                    state[sibling] = Decoded::Nil;
                }
                Decoded::Nil
            }
            (Decoded::Leaf, Gene::Branch(s)) if child_prevails => {
                // Figure 3.14: the parent becomes a branch with a random split.
                state[parent] = Decoded::Branch(random_split());
                keeps_children[parent] = true;
                keeps_children[z] = true;
                if is_right {
                    state[sibling] = Decoded::Leaf;
                }
                Decoded::Branch(s)
            }
            // A partner's leaf over an own branch (3.11): the subtree below goes.
            _ => Decoded::Nil,
        };
    }
    let mut nodes = vec![BfsNode::Nil; (1usize << (depth + 1)) - 1];
    for (z, s) in state.iter().enumerate() {
        nodes[z] = match s {
            Decoded::Branch(split) => BfsNode::Branch(*split),
            Decoded::Leaf | Decoded::Collapsed => BfsNode::Leaf(Vec::new()),
            Decoded::Nil => BfsNode::Nil,
        };
    }
    // Children of branches on the last encoded level are leaves.
    for z in n_branch / 2..n_branch {
        if matches!(state[z], Decoded::Branch(_)) {
            nodes[2 * z + 1] = BfsNode::Leaf(Vec::new());
            nodes[2 * z + 2] = BfsNode::Leaf(Vec::new());
        }
    }
    // A position under a branch that decoded to nil (a branch child dropped because its
    // own parent was collapsed cannot happen; this guards the encoding's invariant).
    for z in 0..n_branch {
        if matches!(nodes[z], BfsNode::Branch(_)) {
            for c in [2 * z + 1, 2 * z + 2] {
                if nodes[c] == BfsNode::Nil {
                    nodes[c] = BfsNode::Leaf(Vec::new());
                }
            }
        }
    }
    AxisTree::from_bfs(&BfsTree { depth, nodes })
}

/// The node-wise crossover (Algorithm 3, lines 9-15): gene z from `partner` when a uniform
/// draw is below `cr`, else from `own`; with, per gene, whether it came from the partner.
pub fn crossover(
    own: &[Gene],
    partner: &[Gene],
    cr: f64,
    rng: &mut ChaCha8Rng,
) -> (Vec<Gene>, Vec<bool>) {
    own.iter()
        .zip(partner)
        .map(|(a, b)| {
            if rng.random::<f64>() < cr {
                (*b, true)
            } else {
                (*a, false)
            }
        })
        .unzip()
}

/// What a TMO run returns.
#[derive(Clone, Debug)]
pub struct TmoOutcome {
    /// The best tree found.
    pub tree: AxisTree,
    /// Its training accuracy.
    pub fitness: f64,
    /// Algorithm 3's t_best (the same as `tree` unless validation rows selected another).
    pub best_by_fitness: AxisTree,
    /// The best training accuracy of the initial population (after TAO).
    pub initial_fitness: f64,
    /// Generations completed.
    pub generations: usize,
    /// Whether the wall-clock limit stopped it.
    pub hit_time_limit: bool,
}

impl TmoConfig {
    /// Checks the parameters.
    pub fn check(&self, regression: bool, p: usize) -> Result<()> {
        let err = |m: String| Err(GlassboxError::formulation(NAME, m));
        if regression || self.criterion.is_regression() {
            return err("TMO evolves classification trees: it needs a classification target and criterion gini or entropy".into());
        }
        if self.depth == 0 || self.depth > 12 {
            return err(format!("depth must be in 1..=12, got {}", self.depth));
        }
        if self.n_trees < 2 || self.n_trees > crate::forest::MAX_TREES {
            return err(format!(
                "n_trees must be 2 (a partner is drawn among the others) to {}, got {}",
                crate::forest::MAX_TREES,
                self.n_trees
            ));
        }
        if !(0.0..=1.0).contains(&self.cr) {
            return err(format!("cr must be in [0, 1], got {}", self.cr));
        }
        if self.time_limit.is_nan() || self.time_limit <= 0.0 {
            return err(format!("time_limit must be > 0, got {}", self.time_limit));
        }
        if self.tao_passes == 0 {
            return err("tao_passes must be at least 1".into());
        }
        if let Some(f) = self.validation_fraction {
            if !(f > 0.0 && f < 1.0) {
                return err(format!(
                    "validation_fraction must be strictly between 0 and 1, got {f}"
                ));
            }
        }
        self.forest()
            .check(false, p)
            .map_err(|e| GlassboxError::formulation(NAME, e.to_string()))
    }

    fn forest(&self) -> ForestConfig {
        ForestConfig {
            n_trees: self.n_trees,
            criterion: self.criterion,
            depth: Some(self.depth),
            max_features: self.max_features.clone(),
            seed: self.seed,
            ..ForestConfig::default()
        }
    }

    /// Runs Algorithm 3 on the training rows `x`, `y` (see the module comment); with
    /// `validation_fraction`, on a stratified part of them, selecting on the rest
    /// (see [`TmoConfig::run_with_validation`]).
    pub fn run(&self, x: &DMatrix<f64>, y: &[usize], n_classes: usize) -> Result<TmoOutcome> {
        let Some(fraction) = self.validation_fraction else {
            return self.run_with_validation(x, y, n_classes, None);
        };
        // The split's own message speaks of a test set and class indices; name the key.
        let (train, val) =
            glassbox_core::data::stratified_split(y, fraction, self.seed).map_err(|e| {
                GlassboxError::formulation(
                    NAME,
                    format!(
                        "validation_fraction = {fraction}: no stratified part of these {} \
                         training rows can be held out ({e}; class numbers count from 0 in \
                         the labels' sorted order)",
                        y.len()
                    ),
                )
            })?;
        let pick = |rows: &[usize]| -> (DMatrix<f64>, Vec<usize>) {
            (
                x.select_rows(rows.iter()),
                rows.iter().map(|&i| y[i]).collect(),
            )
        };
        let ((x_train, y_train), (x_val, y_val)) = (pick(&train), pick(&val));
        self.run_with_validation(&x_train, &y_train, n_classes, Some((&x_val, &y_val)))
    }

    /// Runs Algorithm 3 on `x`, `y`. With `validation` rows, the tree returned is the one of
    /// the final population and t_best with the most validation rows right (ties: the higher
    /// fitness, then t_best, then the lower index) instead of t_best: model selection on
    /// held-out rows, which Algorithm 3 does not do (its fitness stays training accuracy).
    pub fn run_with_validation(
        &self,
        x: &DMatrix<f64>,
        y: &[usize],
        n_classes: usize,
        validation: Option<(&DMatrix<f64>, &[usize])>,
    ) -> Result<TmoOutcome> {
        let started = Instant::now();
        let n = x.nrows();
        let tao = Tao::new(x, y, n_classes).with_stop(self.interrupt.as_ref());
        let ones = vec![1.0; n];
        let fitness = |tree: &AxisTree| 1.0 - tao.errors(tree, &ones) / n as f64;
        // Line 2: the population, each tree optimized by TAO on the training rows; the time
        // limit counts from here (growing 1000 trees alone could take seconds past it).
        let interrupted = || self.interrupt.as_ref().is_some_and(Interrupt::requested);
        let out_of_time = || started.elapsed().as_secs_f64() >= self.time_limit;
        let mut population =
            self.forest()
                .fit_trees_until(x, Targets::Classes { y, n_classes }, || {
                    interrupted() || out_of_time()
                })?;
        // A population cut short by the limit (fewer trees, or not all optimized) is one.
        let mut hit_time_limit = population.len() < self.n_trees && out_of_time();
        for tree in &mut population {
            if interrupted() {
                break;
            }
            if out_of_time() {
                hit_time_limit = true;
                break;
            }
            tao.optimize(tree, &ones, self.tao_passes);
        }
        let mut scores: Vec<f64> = population.iter().map(fitness).collect();
        // Lines 3-4.
        let first_best = argmax_first(&scores);
        let (mut best_fit, mut best) = (scores[first_best], population[first_best].clone());
        let initial_fitness = best_fit;
        // The generator of the evolution: its own stream, apart from the forest's trees.
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        rng.set_stream(u64::MAX);
        let k = population.len();
        let mut generations = 0;
        'generations: for _ in 0..self.n_gen {
            let sample = bootstrap_weights(n, &mut rng);
            for i in 0..k {
                if out_of_time() {
                    hit_time_limit = true;
                    break 'generations;
                }
                if interrupted() {
                    break 'generations;
                }
                // Line 8: j uniform over the others.
                let mut j = rng.random_range(0..k - 1);
                if j >= i {
                    j += 1;
                }
                let own = encode(&population[i], self.depth)?;
                let partner = encode(&population[j], self.depth)?;
                let (genes, from_partner) = crossover(&own, &partner, self.cr, &mut rng);
                let mut child = decode(&genes, &from_partner, self.depth, || {
                    let feature = rng.random_range(0..x.ncols());
                    let row = rng.random_range(0..n);
                    AxisSplit {
                        feature,
                        threshold: x[(row, feature)],
                    }
                })?;
                // Leaf classes by majority on the sample, then line 16.
                tao.refresh(&mut child, &sample);
                tao.optimize(&mut child, &sample, self.tao_passes);
                let f = fitness(&child);
                if f > best_fit {
                    best_fit = f;
                    best = child.clone();
                }
                if f > scores[i] {
                    scores[i] = f;
                    population[i] = child;
                }
            }
            generations += 1;
        }
        let mut best_by_fitness = best.clone();
        best_by_fitness.compact();
        if let Some((xv, yv)) = validation {
            let right = |t: &AxisTree| {
                t.predict_class(xv)
                    .iter()
                    .zip(yv)
                    .filter(|(p, y)| p == y)
                    .count()
            };
            let mut chosen = (right(&best), best_fit);
            for (tree, &f) in population.iter().zip(&scores) {
                let candidate = (right(tree), f);
                if candidate.0 > chosen.0 || (candidate.0 == chosen.0 && candidate.1 > chosen.1) {
                    chosen = candidate;
                    best = tree.clone();
                    best_fit = f;
                }
            }
        }
        best.compact();
        Ok(TmoOutcome {
            tree: best,
            fitness: best_fit,
            best_by_fitness,
            initial_fitness,
            generations,
            hit_time_limit,
        })
    }
}

fn argmax_first(v: &[f64]) -> usize {
    crate::cart::tree::argmax(v)
}

/// TMO as a heuristic learner; its seed varies by split.
impl HeuristicLearner for TmoConfig {
    type Model = TreeModel;

    fn name(&self) -> &'static str {
        NAME
    }
    fn is_regression(&self) -> bool {
        self.criterion.is_regression()
    }
    fn depth(&self) -> Option<usize> {
        Some(self.depth)
    }
    fn check(&self, regression: bool, features: usize) -> Result<()> {
        crate::heuristic::check_features(NAME, features)?;
        TmoConfig::check(self, regression, features)
    }
    fn fit(
        &self,
        data: &TrainingSet<'_>,
        seed: u64,
        _start: Option<&TreeModel>,
        _solver: Option<(&dyn glassbox_core::NlpSolver, &glassbox_core::SolveOptions)>,
    ) -> Result<HeuristicFit<TreeModel>> {
        let (y, n_classes) = data.classes(NAME)?;
        let c = TmoConfig {
            seed: crate::heuristic::split_seed(self.seed, seed),
            interrupt: data.interrupt.cloned(),
            ..self.clone()
        };
        let outcome = c.run(data.x, y, n_classes)?;
        Ok(HeuristicFit {
            model: crate::heuristic::tree_model(data, NAME, c.criterion, outcome.tree),
            iterations: outcome.generations as u64,
            hit_time_limit: outcome.hit_time_limit,
            note: format!(
                "{} generations; training accuracy {:.4} (best of the initial population {:.4})",
                outcome.generations, outcome.fitness, outcome.initial_fitness
            ),
        })
    }
    fn sparsity(&self, model: &TreeModel) -> (f64, f64) {
        model.sparsity()
    }
}
