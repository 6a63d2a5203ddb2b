//! How many shards, and how big. The engine deals *chains* to shards (chain `i` to shard
//! `i mod n + 1`, see [`crate::experiment::engine::Shard`]): a chain is a split's warm path
//! (every cell of the path, in order, since each starts from the previous one's solutions),
//! or one cell on one split without a path. So a chain is the smallest piece of work, there
//! are at most as many useful shards as chains, and a shard's work is the sum of its chains.
//!
//! A task fits its time limit when its shard's cell-splits, at the estimated seconds per
//! cell-split, take at most [`FILL`] of the time the task has before it is told to stop
//! (its time limit less `stop_before_limit`). The estimate comes from `[cluster]
//! seconds_per_cell`, or is measured by `glassbox status` on a run (a pilot run, or the
//! shards done so far). A task that does not fit is not lost: it stops at its limit with
//! every finished cell-split on disk and requeues itself, and the next attempt resumes. The
//! estimate counts one chain at a time per task (with IPOPT or CBC, a process solves one
//! problem at a time whatever its threads).
//!
//! Depends on nothing else of glassbox.

/// The share of a task's time that its estimated work may fill (the rest absorbs the
/// estimate's error and the start-up: reading the data, loading the engine).
pub const FILL: f64 = 0.8;

/// Cell-splits of each shard when chains of `chain_lengths` are dealt to `shards` shards as
/// the engine deals them.
pub fn shard_units(chain_lengths: &[usize], shards: usize) -> Vec<usize> {
    let mut units = vec![0; shards];
    if shards == 0 {
        return units;
    }
    for (i, len) in chain_lengths.iter().enumerate() {
        units[i % shards] += len;
    }
    units
}

/// The fewest shards whose largest one needs at most [`FILL`] of `task_seconds` at
/// `seconds_per_unit`; none when even one chain per shard does not fit (a chain is not
/// split: the tasks will then stop at their limit and requeue themselves to go on).
pub fn fewest_shards(
    chain_lengths: &[usize],
    seconds_per_unit: f64,
    task_seconds: f64,
) -> Option<usize> {
    let budget = FILL * task_seconds;
    (1..=chain_lengths.len()).find(|&n| {
        let largest = shard_units(chain_lengths, n).into_iter().max().unwrap_or(0);
        largest as f64 * seconds_per_unit <= budget
    })
}

/// A readable account of the sizing: the shards' sizes and, with an estimate, the time the
/// largest needs against the task's time.
pub fn describe(
    shard_units: &[usize],
    seconds_per_unit: Option<(f64, &str)>,
    task_seconds: Option<u64>,
) -> String {
    let largest = shard_units.iter().copied().max().unwrap_or(0);
    let smallest = shard_units.iter().copied().min().unwrap_or(0);
    let total: usize = shard_units.iter().sum();
    let sizes = if largest == smallest {
        format!("{largest}")
    } else {
        format!("{smallest} to {largest}")
    };
    let mut text = format!(
        "{} shards of {sizes} cell-splits ({total} in all)",
        shard_units.len()
    );
    if let Some((spu, source)) = seconds_per_unit {
        let need = largest as f64 * spu;
        text.push_str(&format!(
            "; at {spu:.3} s per cell-split ({source}) the largest needs about {}",
            duration(need)
        ));
        if let Some(limit) = task_seconds {
            let fits = need <= FILL * limit as f64;
            text.push_str(&format!(
                " of the task's {} ({})",
                duration(limit as f64),
                if fits {
                    "fits"
                } else {
                    "does not fit: the task will stop at its limit and requeue itself to go on; \
                     more shards, or a longer [cluster] time, avoid the wait"
                }
            ));
        }
    }
    text
}

/// Seconds as `1h02m`, `3m05s` or `12s`.
pub fn duration(seconds: f64) -> String {
    if !seconds.is_finite() {
        return "?".into();
    }
    let s = seconds.max(0.0).round() as u64;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, s % 3600 / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chains_are_dealt_as_the_engine_deals_them() {
        // 5 chains of 3, 1, 2, 2, 4 cell-splits on 2 shards: chains 0, 2, 4 and 1, 3.
        assert_eq!(shard_units(&[3, 1, 2, 2, 4], 2), vec![9, 3]);
        assert_eq!(shard_units(&[3, 1, 2, 2, 4], 5), vec![3, 1, 2, 2, 4]);
    }

    #[test]
    fn the_fewest_shards_that_fit_their_time_are_chosen() {
        // 8 chains of 10 cell-splits at 1 s each: 80 s in all.
        let chains = [10; 8];
        // 100 s per task, 80 s usable: one shard.
        assert_eq!(fewest_shards(&chains, 1.0, 100.0), Some(1));
        // 50 s per task, 40 s usable: 2 shards of 40 s.
        assert_eq!(fewest_shards(&chains, 1.0, 50.0), Some(2));
        // 30 s: 24 s usable, 3 shards have 30, 30, 20: 4 shards.
        assert_eq!(fewest_shards(&chains, 1.0, 30.0), Some(4));
        // A chain alone needs more than the task has: no number of shards fits.
        assert_eq!(fewest_shards(&chains, 1.0, 10.0), None);
    }

    #[test]
    fn the_account_says_whether_the_largest_shard_fits() {
        let text = describe(&[9, 3], Some((2.0, "measured")), Some(60));
        assert!(
            text.contains("2 shards of 3 to 9 cell-splits (12 in all)"),
            "{text}"
        );
        assert!(
            text.contains("needs about 18s of the task's 1m00s (fits)"),
            "{text}"
        );
        let text = describe(&[9, 9], Some((10.0, "measured")), Some(60));
        assert!(text.contains("does not fit"), "{text}");
        assert_eq!(duration(3725.0), "1h02m");
    }
}
