//! The thesis' baseline binarization (section 4.5): one decision stump per feature, with the
//! log-loss (entropy) impurity, gives a threshold `t_j`; the feature becomes
//! `1{x_j >= t_j}`.

/// The entropy impurity (log-loss of predicting the node's class frequency) of a node with
/// `pos` positives among `n`, times `n`.
fn weighted_log_loss(pos: f64, n: f64) -> f64 {
    if n <= 0.0 || pos <= 0.0 || pos >= n {
        return 0.0;
    }
    let q = pos / n;
    -n * (q * q.ln() + (1.0 - q) * (1.0 - q).ln())
}

/// The threshold of the best stump on one feature (`values`, labels `positive`), midway
/// between the two consecutive distinct values it splits; `None` for a constant feature.
/// Ties go to the smallest threshold.
pub fn stump_threshold(values: &[f64], positive: &[bool]) -> Option<f64> {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    let n = values.len() as f64;
    let total_pos = positive.iter().filter(|&&p| p).count() as f64;
    let (mut left_n, mut left_pos) = (0.0, 0.0);
    let mut best: Option<(f64, f64)> = None;
    for w in 0..order.len().saturating_sub(1) {
        let i = order[w];
        left_n += 1.0;
        if positive[i] {
            left_pos += 1.0;
        }
        let (v, next) = (values[i], values[order[w + 1]]);
        if next <= v {
            continue;
        }
        let impurity = weighted_log_loss(left_pos, left_n)
            + weighted_log_loss(total_pos - left_pos, n - left_n);
        if best.is_none_or(|(b, _)| impurity < b - 1e-12) {
            best = Some((impurity, 0.5 * (v + next)));
        }
    }
    best.map(|(_, t)| t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_separating_threshold() {
        let values = [0.1, 0.25, 0.125, 0.875, 0.75, 0.2];
        let positive = [false, false, false, true, true, false];
        assert_eq!(stump_threshold(&values, &positive), Some(0.5));
        assert_eq!(stump_threshold(&[1.0, 1.0], &[true, false]), None);
    }

    #[test]
    fn prefers_the_purer_split() {
        // Impurities: 2.5 -> 3 H(2/3) = 1.91, 3.5 -> 3.30, 4.5 -> 4 ln 2 = 2.77.
        let values = [1.0, 2.0, 3.0, 4.0, 5.0];
        let positive = [false, false, true, true, false];
        assert_eq!(stump_threshold(&values, &positive), Some(2.5));
    }
}
