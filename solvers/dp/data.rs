//! The search's view of a [`TreeSearchProblem`]: rows renumbered so that counting is fast,
//! features without duplicates, and the operations on row sets (datasets) that every part
//! of the search uses (split, class weights, leaf cost).
//!
//! Rows are grouped by (class, weight); each group occupies its own run of 64-bit words of
//! every bitset, so the weighted count of a class in a row set is a sum of popcounts times
//! the group weights. Without weights there is one group per class.
//!
//! Features that cannot split (constant over the rows), and features equal to an earlier
//! one or to its complement (the same split with the children swapped), are dropped: they
//! give no tree that the kept features do not give with the same objective.
//!
//! Depends on the core's tree-search problem only.

use glassbox_core::tree_search::TreeSearchProblem;
use std::collections::HashMap;
use std::ops::Range;

/// A set of rows: one bit per internal row, [`SearchData::n_words`] words.
pub(crate) type Rows = [u64];

/// Rows of one class and one weight, in a run of whole words.
#[derive(Clone, Debug)]
pub(crate) struct Group {
    /// The class of its rows.
    pub class: usize,
    /// The weight of each of its rows.
    pub weight: f64,
    /// Its words in every row bitset.
    pub words: Range<usize>,
}

/// The problem as the search sees it.
pub(crate) struct SearchData {
    /// Words of a row bitset.
    pub n_words: usize,
    /// Features kept (see the module documentation).
    pub n_features: usize,
    /// The problem's index of each kept feature.
    pub original_feature: Vec<usize>,
    /// Kept feature f's rows with value 1: words `f * n_words .. (f + 1) * n_words`.
    columns: Vec<u64>,
    /// The row groups, in class order.
    pub groups: Vec<Group>,
    /// Number of classes.
    pub n_classes: usize,
    /// Penalty per branch node.
    pub penalty: f64,
    /// The fewest rows a leaf of the search may hold: `max(1, min_leaf_size)` (a leaf with
    /// no row is never needed: the split above it can be dropped at no loss).
    pub min_leaf: usize,
    /// Every row.
    pub all: Vec<u64>,
    /// Whether all weights are 1 (then weighted counts are row counts).
    pub unit_weights: bool,
}

impl SearchData {
    /// The search's view of `problem`.
    pub fn new(problem: &TreeSearchProblem) -> Self {
        let n = problem.n_rows();
        // Group the rows by (class, weight), classes in order.
        let mut keys: Vec<(usize, u64)> = (0..n)
            .map(|r| (problem.labels()[r], problem.weight(r).to_bits()))
            .collect();
        keys.sort_unstable();
        keys.dedup();
        let group_of: HashMap<(usize, u64), usize> =
            keys.iter().enumerate().map(|(g, &k)| (k, g)).collect();
        let mut members: Vec<Vec<usize>> = vec![Vec::new(); keys.len()];
        for r in 0..n {
            let key = (problem.labels()[r], problem.weight(r).to_bits());
            members[group_of[&key]].push(r);
        }
        let mut groups = Vec::with_capacity(keys.len());
        let mut position = vec![0usize; n];
        let mut next_word = 0;
        for (&(class, weight), rows) in keys.iter().zip(&members) {
            let words = rows.len().div_ceil(64);
            for (i, &r) in rows.iter().enumerate() {
                position[r] = next_word * 64 + i;
            }
            groups.push(Group {
                class,
                weight: f64::from_bits(weight),
                words: next_word..next_word + words,
            });
            next_word += words;
        }
        let n_words = next_word;
        let mut all = vec![0u64; n_words];
        for &p in &position {
            all[p / 64] |= 1 << (p % 64);
        }

        let mut columns = Vec::new();
        let mut original_feature = Vec::new();
        let mut seen: HashMap<Vec<u64>, usize> = HashMap::new();
        for f in 0..problem.n_features() {
            let mut column = vec![0u64; n_words];
            let source = problem.column(f);
            for (r, &p) in position.iter().enumerate() {
                if source[r / 64] >> (r % 64) & 1 == 1 {
                    column[p / 64] |= 1 << (p % 64);
                }
            }
            let ones: u32 = column.iter().map(|w| w.count_ones()).sum();
            if ones == 0 || ones as usize == n {
                continue;
            }
            // One key for a column and its complement: the one without the first row.
            let first = position[0];
            let canonical: Vec<u64> = if column[first / 64] >> (first % 64) & 1 == 1 {
                column.iter().zip(&all).map(|(c, a)| !c & a).collect()
            } else {
                column.clone()
            };
            if seen.insert(canonical, f).is_some() {
                continue;
            }
            original_feature.push(f);
            columns.extend_from_slice(&column);
        }
        SearchData {
            n_words,
            n_features: original_feature.len(),
            original_feature,
            columns,
            groups,
            n_classes: problem.n_classes(),
            penalty: problem.branch_penalty(),
            min_leaf: problem.min_leaf_size().max(1),
            all,
            unit_weights: problem
                .weights()
                .is_none_or(|w| w.iter().all(|&x| x == 1.0)),
        }
    }

    /// Kept feature f's rows with value 1.
    #[inline]
    pub fn column(&self, f: usize) -> &[u64] {
        &self.columns[f * self.n_words..(f + 1) * self.n_words]
    }

    /// Splits `rows` on feature f into (value 0, value 1).
    pub fn split(&self, rows: &Rows, f: usize, zero: &mut Vec<u64>, one: &mut Vec<u64>) {
        let column = self.column(f);
        zero.clear();
        one.clear();
        zero.extend(rows.iter().zip(column).map(|(r, c)| r & !c));
        one.extend(rows.iter().zip(column).map(|(r, c)| r & c));
    }

    /// The number of rows of a set.
    pub fn count(rows: &Rows) -> usize {
        rows.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// The weight of each class in `rows` (into `weights`, one per class); the row count.
    pub fn class_weights(&self, rows: &Rows, weights: &mut [f64]) -> usize {
        weights.iter_mut().for_each(|w| *w = 0.0);
        let mut count = 0;
        for g in &self.groups {
            let c: usize = rows[g.words.clone()]
                .iter()
                .map(|w| w.count_ones() as usize)
                .sum();
            count += c;
            weights[g.class] += g.weight * c as f64;
        }
        count
    }

    /// The best leaf of `rows`: its cost (infinite when the set is smaller than a leaf may
    /// be) and class (the heaviest, the lowest index on ties).
    pub fn leaf(&self, rows: &Rows) -> (f64, usize) {
        let mut weights = [0.0f64; 16];
        let mut heap;
        let weights: &mut [f64] = if self.n_classes <= 16 {
            &mut weights[..self.n_classes]
        } else {
            heap = vec![0.0; self.n_classes];
            &mut heap
        };
        let count = self.class_weights(rows, weights);
        let (class, cost) = leaf_of(weights);
        if count < self.min_leaf {
            (f64::INFINITY, class)
        } else {
            (cost, class)
        }
    }

    /// How `new` differs from `old`: the weight of the rows of `old` it lacks, the number of
    /// rows it lacks, and the number of rows it adds.
    pub fn difference(&self, old: &Rows, new: &Rows) -> Difference {
        let mut difference = Difference::default();
        for g in &self.groups {
            let mut gone = 0u32;
            for w in g.words.clone() {
                gone += (old[w] & !new[w]).count_ones();
                difference.added += (new[w] & !old[w]).count_ones() as usize;
            }
            difference.removed_weight += g.weight * gone as f64;
            difference.removed += gone as usize;
        }
        difference
    }
}

/// How one row set differs from another ([`SearchData::difference`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Difference {
    /// The weight of the rows removed.
    pub removed_weight: f64,
    /// The rows removed.
    pub removed: usize,
    /// The rows added.
    pub added: usize,
}

/// The class a leaf with these class weights predicts (the heaviest, lowest index on ties)
/// and the weight it misclassifies.
#[inline]
pub(crate) fn leaf_of(weights: &[f64]) -> (usize, f64) {
    let mut best = 0;
    let mut total = 0.0;
    for (k, &w) in weights.iter().enumerate() {
        total += w;
        if w > weights[best] {
            best = k;
        }
    }
    (best, total - weights[best])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_and_duplicate_features() {
        // Feature 1 is feature 0's complement, feature 2 a copy of 0, feature 3 constant.
        let rows: Vec<Vec<bool>> = (0..70)
            .map(|r| vec![r % 2 == 0, r % 2 == 1, r % 2 == 0, true, r % 3 == 0])
            .collect();
        let labels: Vec<usize> = (0..70).map(|r| usize::from(r >= 30)).collect();
        let problem = TreeSearchProblem::from_rows(&rows, labels, 2, 2).unwrap();
        let data = SearchData::new(&problem);
        assert_eq!(data.original_feature, vec![0, 4]);
        assert_eq!(data.groups.len(), 2);
        assert_eq!(data.n_words, 2);
        assert_eq!(SearchData::count(&data.all), 70);
        let (cost, class) = data.leaf(&data.all);
        assert_eq!((cost, class), (30.0, 1));
        let (mut zero, mut one) = (Vec::new(), Vec::new());
        data.split(&data.all, 0, &mut zero, &mut one);
        assert_eq!(SearchData::count(&zero) + SearchData::count(&one), 70);
        let d = data.difference(&data.all, &one);
        assert_eq!((d.removed_weight, d.removed, d.added), (35.0, 35, 0));
        assert_eq!(data.difference(&one, &data.all).added, 35);
    }
}
