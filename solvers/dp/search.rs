//! The search: MurTree's recursion (Algorithms 2 and 3 of the JMLR paper) over row sets,
//! depths and branch-node budgets, with upper bounds passed down, lower bounds kept in the
//! cache and from similarity, and the depth-2 kernel at the bottom.
//!
//! `solve(rows, depth, nodes, ub)` returns the optimal subtree of `rows` with depth at most
//! `depth` and at most `nodes` branch nodes *if its cost is below `ub`* (an exclusive upper
//! bound), and `None` otherwise, having then proven (and cached) that no subtree costs less
//! than `ub`. Exclusive bounds keep the search exact with real-valued costs (weights,
//! penalties): a bound `opt >= ub` is stored as it is, and a later request with the same
//! `ub` is answered from the cache.
//!
//! A branch node tries every feature and every split of the remaining budget between its
//! children; the child more likely to fail (the larger leaf cost, MurTree's dynamic order)
//! is solved first, with the bound left after the other child's lower bound, and the second
//! with the bound left after the first child's cost. A subproblem whose lower bound reaches
//! its upper bound is pruned; one whose lower bound equals its leaf cost is a leaf.
//!
//! The search stops at the time limit or step limit: then the best tree found at the root
//! is kept (its subtrees are cached optimal ones), and [`Search::root_lower_bound`] gives a
//! proven bound from what the cache knows of the root's splits.
//!
//! Depends on the other files of this backend and on the core's tree types.

use super::bounds::SimilarityArchive;
use super::cache::{Cache, Child, Solution};
use super::data::{Rows, SearchData};
use super::depth2::{depth_one, Depth2Kernel, NONE};
use glassbox_core::tree_search::SearchTree;
use glassbox_core::{deadline_passed, Interrupt, Limit};
use std::time::Instant;

/// When the search must stop.
#[derive(Clone, Debug, Default)]
pub(crate) struct StopRule {
    /// The wall-clock deadline.
    pub deadline: Option<Instant>,
    /// The most search steps (branch nodes searched plus depth-2 kernel calls).
    pub max_steps: Option<u64>,
    /// A stop request from outside (`SolveOptions::interrupt`: Ctrl-C in `glassbox run`).
    pub interrupt: Option<Interrupt>,
}

/// What the search counted.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Statistics {
    /// Branch nodes searched (the general case).
    pub branch_nodes: u64,
    /// Calls of the depth-2 kernel.
    pub kernel_calls: u64,
    /// Depth-1 subproblems solved directly.
    pub depth_one_calls: u64,
}

impl Statistics {
    /// All search steps.
    pub fn steps(&self) -> u64 {
        self.branch_nodes + self.kernel_calls + self.depth_one_calls
    }
}

/// The search state.
pub(crate) struct Search<'a> {
    data: &'a SearchData,
    cache: Cache,
    kernel: Depth2Kernel,
    archive: SimilarityArchive,
    stop: StopRule,
    use_kernel: bool,
    /// Row-set buffers of the splits, one pair per depth (a recursion visits each depth at
    /// most once on its stack).
    buffers: Vec<(Vec<u64>, Vec<u64>)>,
    /// Set when a limit stopped the search.
    pub stopped: Option<Limit>,
    /// The best tree found at the root so far.
    pub incumbent: Option<Solution>,
    /// What the search counted.
    pub statistics: Statistics,
}

/// A budget with `nodes <= 2^depth - 1` and `depth <= nodes`, so that equivalent requests
/// meet in the cache.
pub(crate) fn normalize(depth: u32, nodes: u32) -> (u32, u32) {
    let complete = if depth >= 31 {
        u32::MAX
    } else {
        (1u32 << depth) - 1
    };
    let nodes = nodes.min(complete);
    (depth.min(nodes), nodes)
}

impl<'a> Search<'a> {
    /// A search over `data` for trees of depth at most `max_depth`.
    pub fn new(
        data: &'a SearchData,
        max_depth: u32,
        stop: StopRule,
        use_kernel: bool,
        similarity: bool,
    ) -> Self {
        Search {
            data,
            cache: Cache::default(),
            kernel: Depth2Kernel::new(),
            archive: SimilarityArchive::new(max_depth as usize, similarity),
            stop,
            use_kernel,
            buffers: vec![(Vec::new(), Vec::new()); max_depth as usize + 1],
            stopped: None,
            incumbent: None,
            statistics: Statistics::default(),
        }
    }

    /// Row sets cached.
    pub fn cached_row_sets(&self) -> usize {
        self.cache.len()
    }

    /// Counts a step; false (and `stopped` set) when a limit is reached.
    fn step(&mut self) -> bool {
        if self.stopped.is_some() {
            return false;
        }
        if let Some(max) = self.stop.max_steps {
            if self.statistics.steps() >= max {
                self.stopped = Some(Limit::Iteration);
                return false;
            }
        }
        if deadline_passed(self.stop.deadline) {
            self.stopped = Some(Limit::Time);
            return false;
        }
        if self
            .stop
            .interrupt
            .as_ref()
            .is_some_and(Interrupt::requested)
        {
            self.stopped = Some(Limit::Interrupted);
            return false;
        }
        true
    }

    /// The optimal subtree of `rows` within the budget if it costs less than `ub`; see the
    /// module documentation. `None` also when a limit stopped the search.
    pub fn solve(&mut self, rows: &Rows, depth: u32, nodes: u32, ub: f64) -> Option<Solution> {
        let (depth, nodes) = normalize(depth, nodes);
        if self.stopped.is_some() {
            return None;
        }
        let (leaf_cost, _) = self.data.leaf(rows);
        if depth == 0 {
            return (leaf_cost < ub).then(|| Solution::leaf(leaf_cost));
        }
        if let Some(solution) = self.cache.solution(rows, depth, nodes) {
            return (solution.cost < ub).then_some(solution);
        }
        let mut lower_bound = self.cache.lower_bound(rows, depth, nodes);
        let similar = self
            .archive
            .lower_bound(self.data, &self.cache, rows, depth, nodes);
        if similar > lower_bound {
            self.cache.raise_lower_bound(rows, depth, nodes, similar);
            lower_bound = similar;
        }
        if lower_bound >= ub {
            return None;
        }
        if lower_bound >= leaf_cost {
            // No tree beats the leaf.
            let leaf = Solution::leaf(leaf_cost);
            self.cache.store(rows, depth, nodes, leaf);
            return Some(leaf);
        }
        if !self.step() {
            return None;
        }
        if self.use_kernel && depth <= 2 {
            return self.terminal(rows, depth, nodes, ub);
        }
        self.general(rows, depth, nodes, ub, lower_bound, leaf_cost)
    }

    /// Depth 1 directly, depth 2 by the kernel, which caches all three budgets at once.
    fn terminal(&mut self, rows: &Rows, depth: u32, nodes: u32, ub: f64) -> Option<Solution> {
        let solution = if depth == 1 {
            self.statistics.depth_one_calls += 1;
            let tree = depth_one(self.data, rows);
            let solution = Solution::small(&tree);
            self.cache.store(rows, 1, 1, solution);
            solution
        } else {
            self.statistics.kernel_calls += 1;
            let trees = self.kernel.solve(self.data, rows);
            self.cache.store(rows, 1, 1, Solution::small(&trees.one));
            self.cache.store(rows, 2, 2, Solution::small(&trees.two));
            self.cache.store(rows, 2, 3, Solution::small(&trees.three));
            Solution::small(if nodes == 2 { &trees.two } else { &trees.three })
        };
        self.archive.record(self.data, rows, depth);
        (solution.cost < ub).then_some(solution)
    }

    /// A branch node: every feature, every split of the budget (Algorithm 2).
    fn general(
        &mut self,
        rows: &Rows,
        depth: u32,
        nodes: u32,
        ub: f64,
        lower_bound: f64,
        leaf_cost: f64,
    ) -> Option<Solution> {
        self.statistics.branch_nodes += 1;
        // Only the root holds every row: a split leaves at least one row on each side.
        let is_root = rows == self.data.all.as_slice();
        let data = self.data;
        let penalty = data.penalty;
        let mut best = (leaf_cost < ub).then(|| Solution::leaf(leaf_cost));
        // The least cost of the options not taken, for the bound stored on failure.
        let mut refined = f64::INFINITY;
        let max_child = ((1u32 << (depth - 1)) - 1).min(nodes - 1);
        let min_child = nodes - 1 - max_child;
        let (mut zero, mut one) = std::mem::take(&mut self.buffers[depth as usize]);
        'features: for feature in 0..data.n_features {
            let cutoff = best.map_or(ub, |b| b.cost);
            if lower_bound >= cutoff {
                break; // the best is optimal
            }
            data.split(rows, feature, &mut zero, &mut one);
            if SearchData::count(&zero) < data.min_leaf || SearchData::count(&one) < data.min_leaf {
                continue;
            }
            let (zero_leaf, one_leaf) = (data.leaf(&zero).0, data.leaf(&one).0);
            for zero_nodes in min_child..=max_child {
                let cutoff = best.map_or(ub, |b| b.cost);
                let one_nodes = nodes - 1 - zero_nodes;
                let (zd, zn) = normalize(depth - 1, zero_nodes);
                let (od, on) = normalize(depth - 1, one_nodes);
                let zero_lb = self.cache.lower_bound(&zero, zd, zn);
                let one_lb = self.cache.lower_bound(&one, od, on);
                if penalty + zero_lb + one_lb >= cutoff {
                    refined = refined.min(penalty + zero_lb + one_lb);
                    continue;
                }
                // The side with the larger leaf cost first.
                let zero_first = zero_leaf >= one_leaf;
                let (first, fd, fnodes, second, sd, snodes, second_lb) = if zero_first {
                    (&zero, zd, zn, &one, od, on, one_lb)
                } else {
                    (&one, od, on, &zero, zd, zn, zero_lb)
                };
                let first_solution = self.solve(first, fd, fnodes, cutoff - penalty - second_lb);
                if self.stopped.is_some() {
                    break 'features;
                }
                let Some(first_solution) = first_solution else {
                    let bound = penalty
                        + self.cache.lower_bound(first, fd, fnodes)
                        + self.cache.lower_bound(second, sd, snodes);
                    refined = refined.min(bound);
                    continue;
                };
                let second_solution =
                    self.solve(second, sd, snodes, cutoff - penalty - first_solution.cost);
                if self.stopped.is_some() {
                    break 'features;
                }
                let Some(second_solution) = second_solution else {
                    let bound =
                        penalty + first_solution.cost + self.cache.lower_bound(second, sd, snodes);
                    refined = refined.min(bound);
                    continue;
                };
                let cost = penalty + first_solution.cost + second_solution.cost;
                if cost >= cutoff {
                    refined = refined.min(cost);
                    continue;
                }
                let (zero_solution, one_solution) = if zero_first {
                    (first_solution, second_solution)
                } else {
                    (second_solution, first_solution)
                };
                let found = Solution {
                    cost,
                    feature: Some(feature as u32),
                    zero: Child::Subtree {
                        depth: zd,
                        nodes: zn,
                    },
                    one: Child::Subtree {
                        depth: od,
                        nodes: on,
                    },
                    branch_nodes: 1 + zero_solution.branch_nodes + one_solution.branch_nodes,
                };
                best = Some(found);
                if is_root {
                    self.incumbent = Some(found);
                }
            }
        }
        self.buffers[depth as usize] = (zero, one);
        if self.stopped.is_some() {
            return None;
        }
        match best {
            Some(solution) => self.cache.store(rows, depth, nodes, solution),
            None => {
                let bound = lower_bound.max(leaf_cost.min(refined));
                self.cache.raise_lower_bound(rows, depth, nodes, bound);
            }
        }
        self.archive.record(self.data, rows, depth);
        best
    }

    /// A proven lower bound on the optimum of the whole problem from what the cache knows:
    /// the leaf, or the cheapest split at the root by the bounds of its children.
    pub fn root_lower_bound(&self, depth: u32, nodes: u32) -> f64 {
        let (depth, nodes) = normalize(depth, nodes);
        let data = self.data;
        let rows = &data.all;
        let (leaf_cost, _) = data.leaf(rows);
        let known = self.cache.lower_bound(rows, depth, nodes);
        if depth == 0 {
            return leaf_cost;
        }
        let mut bound = leaf_cost;
        let max_child = ((1u32 << (depth - 1)) - 1).min(nodes - 1);
        let min_child = nodes - 1 - max_child;
        let (mut zero, mut one) = (Vec::new(), Vec::new());
        for feature in 0..data.n_features {
            data.split(rows, feature, &mut zero, &mut one);
            if SearchData::count(&zero) < data.min_leaf || SearchData::count(&one) < data.min_leaf {
                continue;
            }
            for zero_nodes in min_child..=max_child {
                let (zd, zn) = normalize(depth - 1, zero_nodes);
                let (od, on) = normalize(depth - 1, nodes - 1 - zero_nodes);
                let split = data.penalty
                    + self.cache.lower_bound(&zero, zd, zn)
                    + self.cache.lower_bound(&one, od, on);
                bound = bound.min(split);
            }
        }
        known.max(bound)
    }

    /// The tree of a solution of `rows`, with the problem's feature indices. An error when
    /// a subtree it names is not in the cache (a bug of the search).
    pub fn tree(&self, rows: &Rows, solution: &Solution) -> Result<SearchTree, String> {
        let data = self.data;
        let leaf = |rows: &Rows| SearchTree::leaf(data.leaf(rows).1);
        let Some(feature) = solution.feature else {
            return Ok(leaf(rows));
        };
        let (mut zero, mut one) = (Vec::new(), Vec::new());
        data.split(rows, feature as usize, &mut zero, &mut one);
        let child = |rows: &Rows, child: Child| -> Result<SearchTree, String> {
            match child {
                Child::Leaf | Child::Subtree { depth: 0, .. } => Ok(leaf(rows)),
                Child::Stump(f) => {
                    debug_assert!(f != NONE);
                    let (mut z, mut o) = (Vec::new(), Vec::new());
                    data.split(rows, f as usize, &mut z, &mut o);
                    Ok(SearchTree::branch(
                        data.original_feature[f as usize],
                        leaf(&z),
                        leaf(&o),
                    ))
                }
                Child::Subtree { depth, nodes } => {
                    let cached = self.cache.solution(rows, depth, nodes).ok_or_else(|| {
                        format!("subtree of depth {depth} and {nodes} nodes missing from the cache")
                    })?;
                    self.tree(rows, &cached)
                }
            }
        };
        Ok(SearchTree::branch(
            data.original_feature[feature as usize],
            child(&zero, solution.zero)?,
            child(&one, solution.one)?,
        ))
    }
}
