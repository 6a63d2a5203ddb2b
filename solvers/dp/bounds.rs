//! The similarity-based lower bound (MurTree, section 4.4): a row set that differs little
//! from one already searched cannot be much cheaper. If the optimum of row set `D'` is at
//! least `LB'`, the optimum of `D` is at least `LB' - w(D' \ D)`: the optimal tree of `D`,
//! applied to `D'`, misclassifies at most the rows it gained, so
//! `opt(D') <= opt(D) + w(D' \ D)` (the tree stays feasible on the larger set: its leaves
//! only grow). Rows in `D \ D'` do not weaken the bound, except with a minimum leaf size
//! above 1: a leaf of that tree could then hold too few rows of `D'`, so the bound is used
//! only when `D` has no row outside `D'`.
//!
//! As MurTree does, the archive keeps, for each depth, the two row sets searched last at
//! that depth (a new one replaces the more similar of the two), since consecutive splits of
//! the same parent see overlapping rows.
//!
//! Depends on [`super::data`] and [`super::cache`].

use super::cache::Cache;
use super::data::SearchData;

/// Row sets kept per depth.
const PER_DEPTH: usize = 2;

/// The recently searched row sets, by depth.
pub(crate) struct SimilarityArchive {
    by_depth: Vec<Vec<Vec<u64>>>,
    enabled: bool,
}

impl SimilarityArchive {
    /// An empty archive for depths up to `max_depth`; a disabled one bounds nothing.
    pub fn new(max_depth: usize, enabled: bool) -> Self {
        SimilarityArchive {
            by_depth: vec![Vec::new(); max_depth + 1],
            enabled,
        }
    }

    /// The best similarity bound on the optimum of `rows` for the budget, from the archived
    /// row sets of that depth (0 when there are none).
    pub fn lower_bound(
        &self,
        data: &SearchData,
        cache: &Cache,
        rows: &[u64],
        depth: u32,
        nodes: u32,
    ) -> f64 {
        if !self.enabled {
            return 0.0;
        }
        let mut bound = 0.0f64;
        for old in &self.by_depth[depth as usize] {
            let old_bound = cache.lower_bound(old, depth, nodes);
            if old_bound <= bound {
                continue;
            }
            let difference = data.difference(old, rows);
            if data.min_leaf > 1 && difference.added > 0 {
                continue;
            }
            bound = bound.max(old_bound - difference.removed_weight);
        }
        bound
    }

    /// Records that `rows` was searched at `depth`.
    pub fn record(&mut self, data: &SearchData, rows: &[u64], depth: u32) {
        if !self.enabled {
            return;
        }
        let archive = &mut self.by_depth[depth as usize];
        if archive.len() < PER_DEPTH {
            archive.push(rows.to_vec());
            return;
        }
        let closest = archive
            .iter()
            .enumerate()
            .min_by_key(|(_, old)| {
                let difference = data.difference(old, rows);
                difference.removed + difference.added
            })
            .map(|(i, _)| i)
            .expect("the archive is full");
        archive[closest].clear();
        archive[closest].extend_from_slice(rows);
    }
}
