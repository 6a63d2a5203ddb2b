//! Small MILPs that the MILP backends' unit tests share (the integration tests' conformance
//! suite has its own, in `tests/common/milp_problems.rs`).

use glassbox_core::milp::{MilpProblem, Sense};

const INF: f64 = f64::INFINITY;

/// max 5a + 4b + 3c  s.t. 2a + 3b + c <= 5, 4a + b + 2c <= 11, 3a + 4b + 2c <= 8,
/// a, b, c integer in [0, 10]: optimum 13 at (2, 0, 1).
pub(crate) fn small_mip() -> MilpProblem {
    let mut p = MilpProblem::new("small_mip");
    let a = p.add_column("a", 0.0, 10.0, 5.0, true);
    let b = p.add_column("b", 0.0, 10.0, 4.0, true);
    let c = p.add_column("c", 0.0, 10.0, 3.0, true);
    p.add_row("r1", -INF, 5.0, vec![(a, 2.0), (b, 3.0), (c, 1.0)]);
    p.add_row("r2", -INF, 11.0, vec![(a, 4.0), (b, 1.0), (c, 2.0)]);
    p.add_row("r3", -INF, 8.0, vec![(a, 3.0), (b, 4.0), (c, 2.0)]);
    p.sense = Sense::Maximize;
    p
}

/// [`small_mip`] with continuous columns.
pub(crate) fn small_lp() -> MilpProblem {
    let mut p = small_mip();
    for c in &mut p.columns {
        c.integer = false;
    }
    p
}

/// 2 (x1 + ... + xn) = n over binaries: for an odd `n`, no integer solution, which the
/// LP relaxation does not see.
pub(crate) fn parity(n: usize) -> MilpProblem {
    let mut p = MilpProblem::new("parity");
    let cols: Vec<usize> = (0..n).map(|j| p.add_binary(format!("x{j}"), 1.0)).collect();
    p.add_row(
        "odd",
        n as f64,
        n as f64,
        cols.iter().map(|&j| (j, 2.0)).collect(),
    );
    p
}
