//! The specialized depth-2 kernel (MurTree's Algorithm 4): the optimal trees of depth at
//! most 2 with at most 1, 2 and 3 branch nodes of a row set, all at once, from frequency
//! counts gathered in one pass over the data.
//!
//! For every pair of features (i, j), i <= j, and every row group (class and weight) it
//! counts the rows that have both features; with the counts of each feature alone and the
//! group totals this gives the rows of all four cells (i, j) in {0, 1}^2, so the
//! misclassified weight of every leaf of every depth-2 tree is known without touching the
//! data again. The best one-split subtree of each side of each root follows in one sweep
//! over the pairs, and the best trees with 1, 2 and 3 branch nodes from those.
//!
//! The counting is done on bitsets: the row set's bits of every feature are first packed
//! into a compact bitset per feature (`pext` where the CPU has BMI2), then each pair count
//! is a popcount of an AND over `rows / 64` words.
//!
//! Depends on [`super::data`] only.

use super::data::{leaf_of, Rows, SearchData};
use std::ops::Range;

/// No feature: a leaf.
pub(crate) const NONE: u32 = u32::MAX;

/// A tree of depth at most 2 found by the kernel: a root split (or [`NONE`] for a single
/// leaf) whose children are leaves or single splits ([`NONE`] for a leaf).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct SmallTree {
    /// Misclassified weight + penalty * branch nodes.
    pub cost: f64,
    /// The root's feature, or [`NONE`].
    pub root: u32,
    /// The feature of the zero child, or [`NONE`] for a leaf.
    pub zero: u32,
    /// The feature of the one child, or [`NONE`] for a leaf.
    pub one: u32,
}

impl SmallTree {
    /// Becomes the tree of `cost` with root `root` and children `zero` and `one` if that is
    /// strictly better (so a tree found earlier wins a tie).
    fn keep_if_better(&mut self, cost: f64, root: u32, zero: u32, one: u32) {
        if cost < self.cost {
            *self = SmallTree {
                cost,
                root,
                zero,
                one,
            };
        }
    }

    fn leaf(cost: f64) -> Self {
        SmallTree {
            cost,
            root: NONE,
            zero: NONE,
            one: NONE,
        }
    }

    /// Its branch nodes.
    pub fn branch_nodes(&self) -> u32 {
        if self.root == NONE {
            return 0;
        }
        1 + u32::from(self.zero != NONE) + u32::from(self.one != NONE)
    }
}

/// The kernel's answer for one row set.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Depth2Trees {
    /// The best tree of depth <= 1 (at most one branch node).
    pub one: SmallTree,
    /// The best tree of depth <= 2 with at most two branch nodes.
    pub two: SmallTree,
    /// The best tree of depth <= 2 with at most three branch nodes.
    pub three: SmallTree,
}

/// Scratch space of the kernel, kept between calls.
pub(crate) struct Depth2Kernel {
    /// Compact bitsets, `words` per feature.
    compact: Vec<u64>,
    words: usize,
    /// Each group's words in a compact bitset.
    group_words: Vec<Range<usize>>,
    /// Each group's rows in the row set.
    group_totals: Vec<u32>,
    /// The nonzero words of the row set: (word index, mask, compact bit position).
    gather: Vec<(usize, u64, usize)>,
    /// The features that split the row set, without repeats (see `select_active`); their
    /// compact bitsets are the first ones of `compact`, in this order.
    active: Vec<u32>,
    /// Column hashes of the active features, to find repeats.
    seen: std::collections::HashMap<u64, usize>,
    /// Pair counts: `counts[g * pairs + pair]` for pairs (i, j), i <= j, of active features,
    /// row by row (group-major, so that a sweep over j reads contiguous counts).
    pairs: usize,
    counts: Vec<u32>,
    /// Per feature: the best one-split subtree of its zero side and of its one side (cost,
    /// feature of the split).
    best_zero: Vec<(f64, u32)>,
    best_one: Vec<(f64, u32)>,
    /// Class weights of the four cells of a pair, `4 * classes`.
    cell_weights: Vec<f64>,
    bmi2: bool,
}

impl Depth2Kernel {
    /// A kernel; detects the CPU's `pext` and `popcnt`.
    pub fn new() -> Self {
        #[cfg(target_arch = "x86_64")]
        let bmi2 = std::is_x86_feature_detected!("bmi2") && std::is_x86_feature_detected!("popcnt");
        #[cfg(not(target_arch = "x86_64"))]
        let bmi2 = false;
        Depth2Kernel {
            compact: Vec::new(),
            words: 0,
            group_words: Vec::new(),
            group_totals: Vec::new(),
            gather: Vec::new(),
            active: Vec::new(),
            seen: std::collections::HashMap::new(),
            pairs: 0,
            counts: Vec::new(),
            best_zero: Vec::new(),
            best_one: Vec::new(),
            cell_weights: Vec::new(),
            bmi2,
        }
    }

    /// The best trees of depth <= 2 of `rows` (which must hold at least one row).
    pub fn solve(&mut self, data: &SearchData, rows: &Rows) -> Depth2Trees {
        #[cfg(target_arch = "x86_64")]
        if self.bmi2 {
            // SAFETY: the CPU has BMI2 and POPCNT (checked in `new`).
            unsafe { self.count_bmi2(data, rows) };
            return self.trees(data);
        }
        self.count_portable(data, rows);
        self.trees(data)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "bmi2,popcnt")]
    unsafe fn count_bmi2(&mut self, data: &SearchData, rows: &Rows) {
        // The closure inherits this function's target features.
        self.count(data, rows, |value, mask| {
            std::arch::x86_64::_pext_u64(value, mask)
        });
    }

    fn count_portable(&mut self, data: &SearchData, rows: &Rows) {
        self.count(data, rows, pext_portable);
    }

    /// Packs the row set's bits of every feature and counts every pair.
    #[inline(always)]
    fn count(&mut self, data: &SearchData, rows: &Rows, pext: impl Fn(u64, u64) -> u64) {
        let groups = data.groups.len();
        let f = data.n_features;
        self.group_words.clear();
        self.group_totals.clear();
        self.gather.clear();
        let mut words = 0;
        for g in &data.groups {
            let start = words * 64;
            let mut bit = start;
            for w in g.words.clone() {
                let mask = rows[w];
                if mask != 0 {
                    self.gather.push((w, mask, bit));
                    bit += mask.count_ones() as usize;
                }
            }
            self.group_totals.push((bit - start) as u32);
            let used = (bit - start).div_ceil(64);
            self.group_words.push(words..words + used);
            words += used;
        }
        self.words = words;
        self.compact.clear();
        self.compact.resize(f * words, 0);
        for feature in 0..f {
            let column = data.column(feature);
            let out = &mut self.compact[feature * words..(feature + 1) * words];
            for &(w, mask, bit) in &self.gather {
                let packed = pext(column[w], mask);
                let (word, offset) = (bit / 64, bit % 64);
                out[word] |= packed << offset;
                if offset != 0 && offset + mask.count_ones() as usize > 64 {
                    out[word + 1] |= packed >> (64 - offset);
                }
            }
        }
        self.select_active(f, words);
        let f = self.active.len();
        let pairs = f * (f + 1) / 2;
        self.pairs = pairs;
        self.counts.clear();
        self.counts.resize(pairs * groups, 0);
        let and_count = |a: &[u64], b: &[u64]| -> u32 {
            a.iter().zip(b).map(|(x, y)| (x & y).count_ones()).sum()
        };
        let mut pair = 0;
        if groups == 2 {
            // Two groups (two classes without weights): both counts in one pass.
            let (r0, r1) = (self.group_words[0].clone(), self.group_words[1].clone());
            let (c0, c1) = self.counts.split_at_mut(pairs);
            for i in 0..f {
                let ci = &self.compact[i * words..(i + 1) * words];
                let (ci0, ci1) = (&ci[r0.clone()], &ci[r1.clone()]);
                for j in i..f {
                    let cj = &self.compact[j * words..(j + 1) * words];
                    c0[pair] = and_count(ci0, &cj[r0.clone()]);
                    c1[pair] = and_count(ci1, &cj[r1.clone()]);
                    pair += 1;
                }
            }
            return;
        }
        for i in 0..f {
            let ci = &self.compact[i * words..(i + 1) * words];
            for j in i..f {
                let cj = &self.compact[j * words..(j + 1) * words];
                for (g, range) in self.group_words.iter().enumerate() {
                    self.counts[g * pairs + pair] =
                        and_count(&ci[range.clone()], &cj[range.clone()]);
                }
                pair += 1;
            }
        }
    }

    /// The feature at a position of `active` ([`NONE`] stays [`NONE`]).
    fn feature_at(&self, position: u32) -> u32 {
        if position == NONE {
            NONE
        } else {
            self.active[position as usize]
        }
    }

    /// Keeps the features that split the row set, one of each class of features that split
    /// it the same way (equal or complementary on its rows), and packs their compact
    /// bitsets first: deep in the tree most features are constant or repeat one another on
    /// the few rows left, and the pair sweep is quadratic in the features.
    #[inline(always)]
    fn select_active(&mut self, f: usize, words: usize) {
        let total: u32 = self.group_totals.iter().sum();
        // The first row of the set (in compact positions), to choose between a column and
        // its complement.
        let first = self
            .group_words
            .iter()
            .zip(&self.group_totals)
            .find(|(_, &t)| t > 0)
            .map(|(r, _)| r.start);
        self.active.clear();
        self.seen.clear();
        for feature in 0..f {
            let column = &self.compact[feature * words..(feature + 1) * words];
            let ones: u32 = column.iter().map(|w| w.count_ones()).sum();
            if ones == 0 || ones == total {
                continue;
            }
            // Hash the column, complemented when it holds the first row.
            let flip = first.is_some_and(|w| column[w] & 1 == 1);
            let mut hash = 0u64;
            for (g, range) in self.group_words.iter().enumerate() {
                let t = self.group_totals[g] as usize;
                for (i, w) in range.clone().enumerate() {
                    let mut word = column[w];
                    if flip {
                        word = !word & valid_bits(t, i);
                    }
                    hash = (hash.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
                }
            }
            let kept = self.active.len();
            match self.seen.entry(hash) {
                std::collections::hash_map::Entry::Occupied(e) => {
                    let other = self.active[*e.get()] as usize;
                    if self.same_split(feature, other, words) {
                        continue;
                    }
                }
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert(kept);
                }
            }
            self.active.push(feature as u32);
            if kept != feature {
                self.compact
                    .copy_within(feature * words..(feature + 1) * words, kept * words);
            }
        }
    }

    /// Whether two compact columns split the row set the same way (equal or complementary).
    fn same_split(&self, a: usize, b: usize, words: usize) -> bool {
        let ca = &self.compact[a * words..(a + 1) * words];
        // `b` is an active feature: its column was moved to its place in `active`.
        let position = self
            .active
            .iter()
            .position(|&x| x as usize == b)
            .expect("active");
        let cb = &self.compact[position * words..(position + 1) * words];
        let equal = ca == cb;
        let complement = self.group_words.iter().enumerate().all(|(g, range)| {
            let t = self.group_totals[g] as usize;
            range
                .clone()
                .enumerate()
                .all(|(i, w)| ca[w] == !cb[w] & valid_bits(t, i))
        });
        equal || complement
    }

    /// The best trees from the counts of [`Self::count`].
    fn trees(&mut self, data: &SearchData) -> Depth2Trees {
        let f = self.active.len();
        let groups = data.groups.len();
        let k = data.n_classes;
        let penalty = data.penalty;
        let min_leaf = data.min_leaf as u32;
        self.best_zero.clear();
        self.best_zero.resize(f, (f64::INFINITY, NONE));
        self.best_one.clear();
        self.best_one.resize(f, (f64::INFINITY, NONE));
        self.cell_weights.clear();
        self.cell_weights.resize(4 * k, 0.0);
        // The start of feature i's row of pairs in `counts`.
        let row_start = |i: usize| i * f - i * (i.saturating_sub(1)) / 2;
        let total: u32 = self.group_totals.iter().sum();
        let leaf_cost = {
            let w = &mut self.cell_weights[..k];
            w.iter_mut().for_each(|x| *x = 0.0);
            for (g, group) in data.groups.iter().enumerate() {
                w[group.class] += group.weight * self.group_totals[g] as f64;
            }
            let cost = leaf_of(w).1;
            if total < min_leaf {
                f64::INFINITY
            } else {
                cost
            }
        };
        let two_classes_unit = k == 2
            && data.unit_weights
            && groups == 2
            && data.groups[0].class == 0
            && data.groups[1].class == 1;

        // Sweep the pairs i < j: the best one-split subtree of each side of each root.
        if two_classes_unit && min_leaf == 1 {
            self.sweep_two_classes(f, penalty);
        } else {
            for i in 0..f {
                let di = row_start(i);
                for j in i + 1..f {
                    let dj = row_start(j);
                    let pij = row_start(i) + (j - i);
                    let [l11, l10, l01, l00] = self.cell_costs(data, pij, di, dj, min_leaf);
                    // Root i: its zero side split on j has cells (0,0) and (0,1).
                    update(&mut self.best_zero[i], penalty + l00 + l01, j);
                    update(&mut self.best_one[i], penalty + l10 + l11, j);
                    // Root j: its zero side split on i has cells (0,0) and (1,0).
                    update(&mut self.best_zero[j], penalty + l00 + l10, i);
                    update(&mut self.best_one[j], penalty + l01 + l11, i);
                }
            }
        }

        // The sides of each root as leaves, then the best trees by size (a larger tree
        // replaces a smaller one only when strictly better).
        let mut one = SmallTree::leaf(leaf_cost);
        let mut side_leaves = Vec::with_capacity(f);
        for i in 0..f {
            let (zero_leaf, one_leaf) = self.side_leaves(data, row_start(i), min_leaf);
            side_leaves.push((zero_leaf, one_leaf));
            let cost = penalty + zero_leaf + one_leaf;
            one.keep_if_better(cost, self.active[i], NONE, NONE);
        }
        let mut two = one;
        for (i, &(zero_leaf, one_leaf)) in side_leaves.iter().enumerate() {
            let (zero_split, zero_feature) = self.best_zero[i];
            let zero_feature = self.feature_at(zero_feature);
            let (one_split, one_feature) = self.best_one[i];
            let one_feature = self.feature_at(one_feature);
            let cost = penalty + zero_split + one_leaf;
            two.keep_if_better(cost, self.active[i], zero_feature, NONE);
            let cost = penalty + zero_leaf + one_split;
            two.keep_if_better(cost, self.active[i], NONE, one_feature);
        }
        let mut three = two;
        for i in 0..f {
            let (zero_split, zero_feature) = self.best_zero[i];
            let zero_feature = self.feature_at(zero_feature);
            let (one_split, one_feature) = self.best_one[i];
            let one_feature = self.feature_at(one_feature);
            let cost = penalty + zero_split + one_split;
            three.keep_if_better(cost, self.active[i], zero_feature, one_feature);
        }
        Depth2Trees { one, two, three }
    }

    /// The sweep of [`Self::trees`] for two classes, unit weights and leaves of any size
    /// (the common case), in whole numbers and over contiguous counts. Here a cell with no
    /// row costs 0 (an empty leaf is allowed): a split with an empty side is never better
    /// than a leaf, and the trees are compared smallest first, so it never wins.
    fn sweep_two_classes(&mut self, f: usize, penalty: f64) {
        let pairs = self.pairs;
        let (c0, c1) = self.counts.split_at(pairs);
        let (t0, t1) = (self.group_totals[0], self.group_totals[1]);
        let row_start = |i: usize| i * f - i * (i.saturating_sub(1)) / 2;
        let diag0: Vec<u32> = (0..f).map(|j| c0[row_start(j)]).collect();
        let diag1: Vec<u32> = (0..f).map(|j| c1[row_start(j)]).collect();
        let mut zero_cost = vec![u32::MAX; f];
        let mut zero_with = vec![NONE; f];
        let mut one_cost = vec![u32::MAX; f];
        let mut one_with = vec![NONE; f];
        let mut zero_i = vec![0u32; f];
        let mut one_i = vec![0u32; f];
        for i in 0..f {
            let base = row_start(i) - i;
            let (bi0, bi1) = (diag0[i], diag1[i]);
            // Costs for root j (vectorizable), and root i's candidates into scratch.
            for j in i + 1..f {
                let (a0, a1) = (c0[base + j], c1[base + j]);
                let (bj0, bj1) = (diag0[j], diag1[j]);
                let l11 = a0.min(a1);
                let l10 = (bi0 - a0).min(bi1 - a1);
                let l01 = (bj0 - a0).min(bj1 - a1);
                let l00 = (t0 + a0 - bi0 - bj0).min(t1 + a1 - bi1 - bj1);
                zero_i[j] = l00 + l01;
                one_i[j] = l10 + l11;
                let zj = l00 + l10;
                if zj < zero_cost[j] {
                    zero_cost[j] = zj;
                    zero_with[j] = i as u32;
                }
                let oj = l01 + l11;
                if oj < one_cost[j] {
                    one_cost[j] = oj;
                    one_with[j] = i as u32;
                }
            }
            for j in i + 1..f {
                if zero_i[j] < zero_cost[i] {
                    zero_cost[i] = zero_i[j];
                    zero_with[i] = j as u32;
                }
                if one_i[j] < one_cost[i] {
                    one_cost[i] = one_i[j];
                    one_with[i] = j as u32;
                }
            }
        }
        let cost = |c: u32| {
            if c == u32::MAX {
                f64::INFINITY
            } else {
                penalty + c as f64
            }
        };
        for i in 0..f {
            self.best_zero[i] = (cost(zero_cost[i]), zero_with[i]);
            self.best_one[i] = (cost(one_cost[i]), one_with[i]);
        }
    }

    /// The leaf costs of the cells (1,1), (1,0), (0,1), (0,0) of the pair at `pij` (pair
    /// counts of i alone at `di`, of j alone at `dj`), any weights and classes.
    fn cell_costs(
        &mut self,
        data: &SearchData,
        pij: usize,
        di: usize,
        dj: usize,
        min_leaf: u32,
    ) -> [f64; 4] {
        let k = data.n_classes;
        self.cell_weights.iter_mut().for_each(|x| *x = 0.0);
        let mut rows = [0u32; 4];
        for (g, group) in data.groups.iter().enumerate() {
            let a = self.counts[g * self.pairs + pij];
            let bi = self.counts[g * self.pairs + di];
            let bj = self.counts[g * self.pairs + dj];
            let t = self.group_totals[g];
            let cells = [a, bi - a, bj - a, t + a - bi - bj];
            for (c, &n) in cells.iter().enumerate() {
                rows[c] += n;
                self.cell_weights[c * k + group.class] += group.weight * n as f64;
            }
        }
        let mut out = [0.0; 4];
        for c in 0..4 {
            out[c] = if rows[c] < min_leaf {
                f64::INFINITY
            } else {
                leaf_of(&self.cell_weights[c * k..(c + 1) * k]).1
            };
        }
        out
    }

    /// The leaf costs of the zero and one sides of feature i (its counts at `di`).
    fn side_leaves(&mut self, data: &SearchData, di: usize, min_leaf: u32) -> (f64, f64) {
        let k = data.n_classes;
        self.cell_weights.iter_mut().for_each(|x| *x = 0.0);
        let mut rows = [0u32; 2];
        for (g, group) in data.groups.iter().enumerate() {
            let ones = self.counts[g * self.pairs + di];
            let zeros = self.group_totals[g] - ones;
            rows[0] += zeros;
            rows[1] += ones;
            self.cell_weights[group.class] += group.weight * zeros as f64;
            self.cell_weights[k + group.class] += group.weight * ones as f64;
        }
        let cost = |c: usize, w: &[f64]| {
            if rows[c] < min_leaf {
                f64::INFINITY
            } else {
                leaf_of(&w[c * k..(c + 1) * k]).1
            }
        };
        (cost(0, &self.cell_weights), cost(1, &self.cell_weights))
    }
}

/// The valid bits of word `i` of a group with `total` rows in a compact bitset.
#[inline(always)]
fn valid_bits(total: usize, i: usize) -> u64 {
    let left = total.saturating_sub(i * 64);
    if left >= 64 {
        u64::MAX
    } else {
        (1u64 << left) - 1
    }
}

/// Keeps the cheaper of `best` and (`cost`, `feature`); the earlier on ties.
#[inline(always)]
fn update(best: &mut (f64, u32), cost: f64, feature: usize) {
    if cost < best.0 {
        *best = (cost, feature as u32);
    }
}

/// `pext` without BMI2: the bits of `value` at the set bits of `mask`, packed low.
fn pext_portable(value: u64, mut mask: u64) -> u64 {
    let mut out = 0u64;
    let mut bit = 0;
    while mask != 0 {
        let low = mask.trailing_zeros();
        out |= ((value >> low) & 1) << bit;
        bit += 1;
        mask &= mask - 1;
    }
    out
}

/// The best tree of depth <= 1 of `rows` (at most one branch node), without the pair
/// counts: one popcount pass per feature.
pub(crate) fn depth_one(data: &SearchData, rows: &Rows) -> SmallTree {
    let k = data.n_classes;
    let group_rows: Vec<u32> = data
        .groups
        .iter()
        .map(|g| g.words.clone().map(|w| rows[w].count_ones()).sum())
        .collect();
    let mut total = vec![0.0; k];
    let count = data.class_weights(rows, &mut total);
    let mut best = SmallTree::leaf(if count < data.min_leaf {
        f64::INFINITY
    } else {
        leaf_of(&total).1
    });
    let mut ones = vec![0.0; k];
    let mut zeros = vec![0.0; k];
    for f in 0..data.n_features {
        let column = data.column(f);
        ones.iter_mut().for_each(|x| *x = 0.0);
        zeros.iter_mut().for_each(|x| *x = 0.0);
        let mut n_ones = 0usize;
        for (g, group) in data.groups.iter().enumerate() {
            let c: u32 = group
                .words
                .clone()
                .map(|w| (rows[w] & column[w]).count_ones())
                .sum();
            n_ones += c as usize;
            // Weights from whole counts on each side, as the kernel computes them.
            ones[group.class] += group.weight * c as f64;
            zeros[group.class] += group.weight * (group_rows[g] - c) as f64;
        }
        let n_zeros = count - n_ones;
        if n_ones < data.min_leaf || n_zeros < data.min_leaf {
            continue;
        }
        let cost = data.penalty + leaf_of(&zeros).1 + leaf_of(&ones).1;
        if cost < best.cost {
            best = SmallTree {
                cost,
                root: f as u32,
                zero: NONE,
                one: NONE,
            };
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn portable_pext_packs_the_masked_bits() {
        assert_eq!(pext_portable(0b1011_0110, 0b1111_0000), 0b1011);
        assert_eq!(pext_portable(u64::MAX, 0b1010_1010), 0b1111);
        assert_eq!(pext_portable(0, u64::MAX), 0);
        assert_eq!(pext_portable(1 << 63, 1 << 63), 1);
    }
}
