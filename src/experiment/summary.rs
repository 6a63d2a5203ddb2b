//! The readable summaries of a one-setting run (one row per split, its selected start,
//! then the means): classification, regression and risk-score tables, the MILP statistics
//! and the solve-time line; and the statistics they share with the engine's summary.
//!
//! Depends on the results records only.

use super::SolveRecord;

/// Mean and sample standard deviation.
pub fn mean_std(values: &[f64]) -> (f64, f64) {
    let n = values.len() as f64;
    if values.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    let mean = values.iter().sum::<f64>() / n;
    let var = if values.len() > 1 {
        values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)
    } else {
        0.0
    };
    (mean, var.sqrt())
}

/// Median (NaN for none).
pub fn median(values: &[f64]) -> f64 {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| !x.is_nan()).collect();
    crate::metrics::median_in_place(&mut v).unwrap_or(f64::NAN)
}

/// The last line of a run's summary: how many solves, their mean and median seconds per
/// start, and how many ended in each status. Takes (seconds, status) per solve.
pub fn solves_line<'a>(solves: impl Iterator<Item = (f64, &'a str)>) -> String {
    let mut secs = Vec::new();
    let mut counts = std::collections::BTreeMap::new();
    for (s, status) in solves {
        secs.push(s);
        *counts.entry(status).or_insert(0usize) += 1;
    }
    if secs.is_empty() {
        return "no solves\n".to_string();
    }
    format!(
        "{} solves: mean {:.3} s, median {:.3} s per start; statuses: {}\n",
        secs.len(),
        mean_std(&secs).0,
        median(&secs),
        counts
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// The readable summary of a run: one row per split (its selected start), then the means.
pub fn summary_table(records: &[SolveRecord]) -> String {
    use std::fmt::Write as _;
    if records.iter().any(|r| r.regression.is_some()) {
        return regression_table(records);
    }
    if records.iter().any(|r| r.risk_score.is_some()) {
        return risk_score_table(records);
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:>5} {:>10} {:>9} {:>9} {:>8} {:>8} {:>12} {:>22}",
        "split",
        "objective",
        "train_acc",
        "test_acc",
        "delta_L",
        "delta_G",
        "sec/start",
        "status (selected)"
    );
    let splits: std::collections::BTreeSet<usize> = records.iter().map(|r| r.split).collect();
    let mut tests = Vec::new();
    let mut trains = Vec::new();
    let mut dls = Vec::new();
    let mut dgs = Vec::new();
    for s in &splits {
        let of_split: Vec<&SolveRecord> = records.iter().filter(|r| r.split == *s).collect();
        let secs: Vec<f64> = of_split
            .iter()
            .filter(|r| !r.is_selection())
            .map(|r| r.solve_seconds)
            .collect();
        let Some(sel) = of_split.iter().find(|r| r.selected) else {
            let _ = writeln!(out, "{s:>5} no start returned a solution");
            continue;
        };
        tests.push(sel.test_accuracy);
        trains.push(sel.train_accuracy);
        dls.push(sel.delta_local);
        dgs.push(sel.delta_global);
        let _ = writeln!(
            out,
            "{:>5} {:>10.5} {:>9.3} {:>9.3} {:>8.1} {:>8.1} {:>12.3} {:>22}",
            s,
            sel.objective.unwrap_or(f64::NAN),
            sel.train_accuracy,
            sel.test_accuracy,
            sel.delta_local,
            sel.delta_global,
            secs.iter().sum::<f64>() / secs.len() as f64,
            sel.status
        );
    }
    let (test_mean, test_std) = mean_std(&tests);
    if tests.is_empty() {
        let _ = writeln!(out, "no split has a solution to average");
    } else {
        let _ = writeln!(
        out,
        "mean over {} splits: test accuracy {:.4} (sd {:.4}), train accuracy {:.4}, delta_L {:.1}%, delta_G {:.1}%",
        tests.len(),
        test_mean,
        test_std,
        mean_std(&trains).0,
        mean_std(&dls).0,
        mean_std(&dgs).0
    );
    }
    out.push_str(&solves_line(
        records
            .iter()
            .filter(|r| !r.is_selection())
            .map(|r| (r.solve_seconds, r.status.as_str())),
    ));
    out.push_str(&choice_line(records));
    out.push_str(&milp_stats_lines(records));
    out
}

/// The summary's line on the cross-validated choice (S-ORCT's `selection_folds`): on how
/// many splits it kept the greedy tree, the optimized one and (`selection_polished`) the
/// one optimized from the greedy start, and the folds' mean seconds per split; empty where
/// there was no choice.
fn choice_line(records: &[SolveRecord]) -> String {
    let choices: Vec<&SolveRecord> = records.iter().filter(|r| r.is_selection()).collect();
    if choices.is_empty() {
        return String::new();
    }
    let kept = |what: fn(&str) -> bool| {
        choices
            .iter()
            .filter(|r| r.origin.as_deref().is_some_and(what))
            .count()
    };
    let optimized = kept(|o| o == "selection (optimized)");
    // "selection (cart optimized)": the tree the multistart optimized from CART's start.
    let polished = kept(|o| o != "selection (optimized)" && o.ends_with(" optimized)"));
    let polished_note = match polished {
        0 => String::new(),
        n => format!(", the one optimized from the greedy start on {n}"),
    };
    let seconds: Vec<f64> = choices.iter().map(|r| r.solve_seconds).collect();
    format!(
        "cross-validated choice on {} splits: the optimized tree kept on {optimized}\
         {polished_note}, the greedy tree on {}; its folds took {:.3} s per split (mean)\n",
        choices.len(),
        choices.len() - optimized - polished,
        mean_std(&seconds).0
    )
}

/// The readable summary of a regression run: one row per split (its selected start), then
/// the means.
fn regression_table(records: &[SolveRecord]) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:>5} {:>10} {:>9} {:>9} {:>10} {:>8} {:>8} {:>12} {:>22}",
        "split",
        "objective",
        "train_r2",
        "test_r2",
        "test_mse",
        "delta_L",
        "delta_G",
        "sec/start",
        "status (selected)"
    );
    let splits: std::collections::BTreeSet<usize> = records.iter().map(|r| r.split).collect();
    let (mut tests, mut trains, mut mses, mut dls, mut dgs) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut bounds = None;
    for s in &splits {
        let of_split: Vec<&SolveRecord> = records.iter().filter(|r| r.split == *s).collect();
        let secs: Vec<f64> = of_split
            .iter()
            .filter(|r| !r.is_selection())
            .map(|r| r.solve_seconds)
            .collect();
        let Some(sel) = of_split.iter().find(|r| r.selected) else {
            let _ = writeln!(out, "{s:>5} no start returned a solution");
            continue;
        };
        let Some(m) = &sel.regression else { continue };
        tests.push(m.test_r2);
        trains.push(m.train_r2);
        mses.push(m.test_mse);
        dls.push(sel.delta_local);
        dgs.push(sel.delta_global);
        if bounds.is_none() {
            bounds = m.lambda_local_bound.zip(m.lambda_global_bound);
        }
        let _ = writeln!(
            out,
            "{:>5} {:>10.5} {:>9.4} {:>9.4} {:>10.4} {:>8.1} {:>8.1} {:>12.3} {:>22}",
            s,
            sel.objective.unwrap_or(f64::NAN),
            m.train_r2,
            m.test_r2,
            m.test_mse,
            sel.delta_local,
            sel.delta_global,
            secs.iter().sum::<f64>() / secs.len() as f64,
            sel.status
        );
    }
    let (test_mean, test_std) = mean_std(&tests);
    if tests.is_empty() {
        let _ = writeln!(out, "no split has a solution to average");
    } else {
        let _ = writeln!(
            out,
            "mean over {} splits: test R2 {:.4} (sd {:.4}), train R2 {:.4}, test MSE {:.4}, delta_L {:.1}%, delta_G {:.1}%",
            tests.len(),
            test_mean,
            test_std,
            mean_std(&trains).0,
            mean_std(&mses).0,
            mean_std(&dls).0,
            mean_std(&dgs).0
        );
    }
    if let Some((local, global)) = bounds {
        let _ = writeln!(
            out,
            "lambda bounds of the sparsest tree (first split): lambda_L {local:.6}, lambda_G {global:.6}"
        );
    }
    out.push_str(&solves_line(
        records
            .iter()
            .filter(|r| !r.is_selection())
            .map(|r| (r.solve_seconds, r.status.as_str())),
    ));
    out.push_str(&choice_line(records));
    out
}

/// The readable summary of a risk-score run: one row per split, then the means.
fn risk_score_table(records: &[SolveRecord]) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:>5} {:>10} {:>10} {:>9} {:>9} {:>8} {:>5} {:>8} {:>9} {:>22}",
        "split",
        "objective",
        "warm_obj",
        "train_auc",
        "test_auc",
        "test_acc",
        "rules",
        "gap",
        "seconds",
        "status"
    );
    let (mut aucs, mut accs, mut train_aucs) = (Vec::new(), Vec::new(), Vec::new());
    for r in records {
        let Some(m) = &r.risk_score else { continue };
        let _ = writeln!(
            out,
            "{:>5} {:>10.4} {:>10.4} {:>9.4} {:>9.4} {:>8.4} {:>5} {:>8.4} {:>9.2} {:>22}",
            r.split,
            r.objective.unwrap_or(f64::NAN),
            m.warm_start_objective.unwrap_or(f64::NAN),
            m.train_auc,
            m.test_auc,
            r.test_accuracy,
            m.rules_used,
            r.milp.as_ref().and_then(|s| s.mip_gap).unwrap_or(f64::NAN),
            r.solve_seconds + m.warm_start_seconds,
            r.status
        );
        if r.selected {
            aucs.push(m.test_auc);
            accs.push(r.test_accuracy);
            train_aucs.push(m.train_auc);
        }
    }
    let (auc, auc_sd) = mean_std(&aucs);
    let _ = writeln!(
        out,
        "mean over {} splits: test AUC {:.4} (sd {:.4}), train AUC {:.4}, test accuracy {:.4}",
        aucs.len(),
        auc,
        auc_sd,
        mean_std(&train_aucs).0,
        mean_std(&accs).0
    );
    out.push_str(&solves_line(
        records.iter().map(|r| (r.solve_seconds, r.status.as_str())),
    ));
    out
}

/// One line per MILP solve of `records` with its incumbent, dual bound, gap and nodes (empty
/// when no record has MILP statistics), for the run's summary; a solve of the formulation's
/// tree-search statement (`dp`) is labelled "tree search", not "MILP".
fn milp_stats_lines(records: &[SolveRecord]) -> String {
    use std::fmt::Write as _;
    let show = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.6}"));
    let mut out = String::new();
    for r in records {
        let Some(m) = &r.milp else { continue };
        let tolerance = m.integrality_tolerance.map_or(String::new(), |t| {
            format!(", integrality tolerance {t:.1e}")
        });
        let _ = writeln!(
            out,
            "split {} {}: status {}, incumbent {}, dual bound {}, gap {}, nodes {}{tolerance}",
            r.split,
            if m.tree_search { "tree search" } else { "MILP" },
            r.status,
            show(r.objective),
            show(m.dual_bound),
            show(m.mip_gap),
            m.nodes.map_or("-".to_string(), |n| n.to_string())
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_solves_print_no_nan() {
        assert_eq!(solves_line(std::iter::empty()), "no solves\n");
        let line = solves_line([(1.0, "optimal"), (3.0, "optimal")].into_iter());
        assert_eq!(
            line,
            "2 solves: mean 2.000 s, median 2.000 s per start; statuses: optimal 2\n"
        );
    }
}
