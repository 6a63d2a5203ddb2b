//! The best objective of each split's starts in a run's results lines, for the tests that
//! compare two backends on the same config (`tests/gradient_backend.rs` and, with the
//! `torch` feature, `tests/torch_backend.rs`). The cross-validated choice's line is left
//! out: its folds are solved by each backend, so it may keep CART's tree on one backend and
//! the optimized tree on the other, where the best objectives agree.

#![allow(dead_code)]

use std::collections::BTreeMap;

/// Per split, in split order: the lowest objective of the lines that are not the choice's.
pub fn best_objectives(records: &[serde_json::Value]) -> Vec<(u64, f64)> {
    let mut best = BTreeMap::<u64, f64>::new();
    for r in records {
        let choice = r["origin"]
            .as_str()
            .is_some_and(|o| o.starts_with("selection"));
        if let (false, Some(objective)) = (choice, r["objective"].as_f64()) {
            let split = best
                .entry(r["split"].as_u64().unwrap())
                .or_insert(f64::INFINITY);
            *split = split.min(objective);
        }
    }
    best.into_iter().collect()
}
