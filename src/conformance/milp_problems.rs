//! Small LPs and MILPs with known optima, hard instances for time limits, and a reader of
//! free MPS, for the MILP conformance suite ([`super::milp`]) and any test that needs a
//! ready-made MILP. Optima were found by hand or by enumeration (`tests/conformance_milp.rs`
//! re-checks the enumerable ones).
//!
//! Depends on the core's MILP type only.

use crate::milp::{MilpProblem, Sense};
use std::collections::HashMap;

pub const INF: f64 = f64::INFINITY;

/// A problem with a known optimal objective and, where it is unique, the optimal point.
pub struct Known {
    pub problem: MilpProblem,
    pub objective: f64,
    pub solution: Option<Vec<f64>>,
}

/// An LP with an equality row, a range row and one-sided rows:
/// max 3x + 2y + z  s.t.  x + y + z = 10,  2 <= x - y <= 4,  y <= 3,  z >= 1,
/// x, y >= 0, 0 <= z <= 10. Optimum 25.5 at (6.5, 2.5, 1), unique.
pub fn lp_equality_and_ranges() -> Known {
    let mut p = MilpProblem::new("lp_equality_and_ranges");
    let x = p.add_column("x", 0.0, INF, 3.0, false);
    let y = p.add_column("y", 0.0, INF, 2.0, false);
    let z = p.add_column("z", 0.0, 10.0, 1.0, false);
    p.add_row("total", 10.0, 10.0, vec![(x, 1.0), (y, 1.0), (z, 1.0)]);
    p.add_row("spread", 2.0, 4.0, vec![(x, 1.0), (y, -1.0)]);
    p.add_row("y_cap", -INF, 3.0, vec![(y, 1.0)]);
    p.add_row("z_min", 1.0, INF, vec![(z, 1.0)]);
    p.sense = Sense::Maximize;
    Known {
        problem: p,
        objective: 25.5,
        solution: Some(vec![6.5, 2.5, 1.0]),
    }
}

pub const KNAPSACK_WEIGHTS: [f64; 12] = [
    23.0, 31.0, 29.0, 44.0, 53.0, 38.0, 63.0, 85.0, 89.0, 82.0, 17.0, 41.0,
];
pub const KNAPSACK_VALUES: [f64; 12] = [
    92.0, 57.0, 49.0, 68.0, 60.0, 43.0, 67.0, 84.0, 87.0, 72.0, 31.0, 50.0,
];

/// A 0-1 knapsack with `capacity`, the items above.
pub fn knapsack_with(capacity: f64) -> MilpProblem {
    let mut p = MilpProblem::new(format!("knapsack_{capacity}"));
    let items: Vec<usize> = KNAPSACK_VALUES
        .iter()
        .enumerate()
        .map(|(j, &v)| p.add_binary(format!("item{j}"), v))
        .collect();
    p.add_row(
        "capacity",
        -INF,
        capacity,
        items.iter().map(|&j| (j, KNAPSACK_WEIGHTS[j])).collect(),
    );
    p.sense = Sense::Maximize;
    p
}

/// The best value of the knapsack with `capacity`, by enumerating the 4096 subsets.
pub fn knapsack_by_enumeration(capacity: f64) -> f64 {
    (0u32..1 << 12)
        .filter(|mask| {
            (0..12)
                .filter(|j| mask >> j & 1 == 1)
                .map(|j| KNAPSACK_WEIGHTS[j])
                .sum::<f64>()
                <= capacity
        })
        .map(|mask| {
            (0..12)
                .filter(|j| mask >> j & 1 == 1)
                .map(|j| KNAPSACK_VALUES[j])
                .sum::<f64>()
        })
        .fold(0.0, f64::max)
}

/// The knapsack with capacity 165: optimum 309 with items 0, 1, 2, 3 and 5 (unique).
pub fn knapsack() -> Known {
    let mut solution = vec![0.0; 12];
    for j in [0, 1, 2, 3, 5] {
        solution[j] = 1.0;
    }
    Known {
        problem: knapsack_with(165.0),
        objective: 309.0,
        solution: Some(solution),
    }
}

/// The cost matrix of [`assignment`].
pub const ASSIGNMENT_COSTS: [[f64; 4]; 4] = [
    [9.0, 2.0, 7.0, 8.0],
    [6.0, 4.0, 3.0, 7.0],
    [5.0, 8.0, 1.0, 8.0],
    [7.0, 6.0, 9.0, 4.0],
];

/// A 4x4 assignment with binary variables `x[i][j]` (column 4i + j): optimum 13 with
/// 0 -> 1, 1 -> 0, 2 -> 2, 3 -> 3 (unique among the 24 permutations).
pub fn assignment() -> Known {
    let mut p = MilpProblem::new("assignment");
    for (i, row) in ASSIGNMENT_COSTS.iter().enumerate() {
        for (j, &c) in row.iter().enumerate() {
            p.add_binary(format!("x[{i},{j}]"), c);
        }
    }
    for i in 0..4 {
        p.add_row(
            format!("worker[{i}]"),
            1.0,
            1.0,
            (0..4).map(|j| (4 * i + j, 1.0)).collect(),
        );
        p.add_row(
            format!("task[{i}]"),
            1.0,
            1.0,
            (0..4).map(|k| (4 * k + i, 1.0)).collect(),
        );
    }
    let mut solution = vec![0.0; 16];
    for (i, j) in [(0, 1), (1, 0), (2, 2), (3, 3)] {
        solution[4 * i + j] = 1.0;
    }
    Known {
        problem: p,
        objective: 13.0,
        solution: Some(solution),
    }
}

/// A balanced transportation LP: supplies 30 and 20, demands 10, 25 and 15, costs
/// [[2, 3, 1], [5, 4, 8]], equality rows. Optimum 130: the second source sends all 20 to
/// the second demand (its smallest extra cost), the first covers the rest (unique).
pub fn transportation() -> Known {
    let costs = [[2.0, 3.0, 1.0], [5.0, 4.0, 8.0]];
    let supplies = [30.0, 20.0];
    let demands = [10.0, 25.0, 15.0];
    let mut p = MilpProblem::new("transportation");
    for (i, row) in costs.iter().enumerate() {
        for (j, &c) in row.iter().enumerate() {
            p.add_column(format!("ship[{i},{j}]"), 0.0, INF, c, false);
        }
    }
    for (i, &s) in supplies.iter().enumerate() {
        p.add_row(
            format!("supply[{i}]"),
            s,
            s,
            (0..3).map(|j| (3 * i + j, 1.0)).collect(),
        );
    }
    for (j, &d) in demands.iter().enumerate() {
        p.add_row(
            format!("demand[{j}]"),
            d,
            d,
            (0..2).map(|i| (3 * i + j, 1.0)).collect(),
        );
    }
    Known {
        problem: p,
        objective: 130.0,
        solution: Some(vec![10.0, 5.0, 15.0, 0.0, 20.0, 0.0]),
    }
}

/// A MILP with negative (and fractional) bounds, a free continuous and a free integer
/// column: min x + y + 2z + w  s.t.  y - x >= -2.5,  y + x >= -1.5,  2z - y >= -7.3,
/// x integer in [-5.5, 5], y free, z free integer, w in [-3, -1].
/// x + y >= -1.5 and z >= -4 everywhere; both are reached only at (0, -1.5, -4, -3):
/// optimum -12.5.
pub fn negative_and_free() -> Known {
    let mut p = MilpProblem::new("negative_and_free");
    let x = p.add_column("x", -5.5, 5.0, 1.0, true);
    let y = p.add_column("y", -INF, INF, 1.0, false);
    let z = p.add_column("z", -INF, INF, 2.0, true);
    let w = p.add_column("w", -3.0, -1.0, 1.0, false);
    p.add_row("a", -2.5, INF, vec![(y, 1.0), (x, -1.0)]);
    p.add_row("b", -1.5, INF, vec![(y, 1.0), (x, 1.0)]);
    p.add_row("c", -7.3, INF, vec![(z, 2.0), (y, -1.0)]);
    let _ = w;
    Known {
        problem: p,
        objective: -12.5,
        solution: Some(vec![0.0, -1.5, -4.0, -3.0]),
    }
}

/// Maximization with an objective offset: max 10 + 3a + 2b + c  s.t.  a + b <= 4.5,
/// a + c <= 3, a integer in [0, 2.3], b integer >= 0, c in [0, 1.5]. Optimum 21 at
/// (2, 2, 1) (unique).
pub fn maximize_with_offset() -> Known {
    let mut p = MilpProblem::new("maximize_with_offset");
    let a = p.add_column("a", 0.0, 2.3, 3.0, true);
    let b = p.add_column("b", 0.0, INF, 2.0, true);
    let c = p.add_column("c", 0.0, 1.5, 1.0, false);
    p.add_row("ab", -INF, 4.5, vec![(a, 1.0), (b, 1.0)]);
    p.add_row("ac", -INF, 3.0, vec![(a, 1.0), (c, 1.0)]);
    p.sense = Sense::Maximize;
    p.objective_offset = 10.0;
    Known {
        problem: p,
        objective: 21.0,
        solution: Some(vec![2.0, 2.0, 1.0]),
    }
}

/// Every problem above with a known optimum.
pub fn all_known() -> Vec<Known> {
    vec![
        lp_equality_and_ranges(),
        knapsack(),
        assignment(),
        transportation(),
        negative_and_free(),
        maximize_with_offset(),
    ]
}

/// An infeasible LP: x + y >= 3 with x, y in [0, 1].
pub fn infeasible_lp() -> MilpProblem {
    let mut p = MilpProblem::new("infeasible_lp");
    let x = p.add_column("x", 0.0, 1.0, 1.0, false);
    let y = p.add_column("y", 0.0, 1.0, 1.0, false);
    p.add_row("too_much", 3.0, INF, vec![(x, 1.0), (y, 1.0)]);
    p
}

/// A MILP whose LP relaxation is feasible but which has no integer point:
/// 2x + 2y = 3 with x, y integer in [0, 5].
pub fn infeasible_mip() -> MilpProblem {
    let mut p = MilpProblem::new("infeasible_mip");
    let x = p.add_column("x", 0.0, 5.0, 1.0, true);
    let y = p.add_column("y", 0.0, 5.0, 1.0, true);
    p.add_row("odd", 3.0, 3.0, vec![(x, 2.0), (y, 2.0)]);
    p
}

/// An unbounded LP: max x + y  s.t.  x - y <= 1,  x, y >= 0.
pub fn unbounded_lp() -> MilpProblem {
    let mut p = MilpProblem::new("unbounded_lp");
    let x = p.add_column("x", 0.0, INF, 1.0, false);
    let y = p.add_column("y", 0.0, INF, 1.0, false);
    p.add_row("diff", -INF, 1.0, vec![(x, 1.0), (y, -1.0)]);
    p.sense = Sense::Maximize;
    p
}

/// An unbounded MILP: the same with x integer.
pub fn unbounded_mip() -> MilpProblem {
    let mut p = unbounded_lp();
    p.name = "unbounded_mip".into();
    p.columns[0].integer = true;
    p
}

/// SplitMix64: a tiny reproducible generator, so that instances do not depend on `rand`.
pub struct SplitMix(pub u64);

impl SplitMix {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// An integer in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}

/// A market split instance (Cornuejols and Dawande) in its optimization form: binaries
/// x_j, and for each of `m` rows, sum_j a_ij x_j + s+_i - s-_i = d_i with a_ij uniform in
/// [0, 99] and d_i = floor(sum_j a_ij / 2); minimize sum_i (s+_i + s-_i). Its LP bound is 0
/// at every node, so branch-and-bound cannot close the gap: with m = 5, n = 40 no solver
/// proves optimality in seconds. Returns the problem and a feasible MIP start (x = 0,
/// s+ = d), of objective sum_i d_i.
pub fn market_split(m: usize, n: usize, seed: u64) -> (MilpProblem, Vec<f64>) {
    let mut rng = SplitMix(seed);
    let mut p = MilpProblem::new(format!("market_split_{m}x{n}_{seed}"));
    let x: Vec<usize> = (0..n).map(|j| p.add_binary(format!("x{j}"), 0.0)).collect();
    let mut start = vec![0.0; n];
    for i in 0..m {
        let a: Vec<f64> = (0..n).map(|_| rng.below(100) as f64).collect();
        let d = (a.iter().sum::<f64>() / 2.0).floor();
        let plus = p.add_column(format!("over{i}"), 0.0, INF, 1.0, false);
        let minus = p.add_column(format!("under{i}"), 0.0, INF, 1.0, false);
        let mut coefficients: Vec<(usize, f64)> = x.iter().zip(&a).map(|(&j, &v)| (j, v)).collect();
        coefficients.push((plus, 1.0));
        coefficients.push((minus, -1.0));
        p.add_row(format!("split{i}"), d, d, coefficients);
        start.push(d);
        start.push(0.0);
    }
    (p, start)
}

/// Reads a free-format MPS file as glassbox writes it (and as most tools do): `NAME`,
/// `OBJSENSE` (`MAX` / `MIN`, on the same line or the next), `ROWS` (the first `N` row is
/// the objective, others are free rows), `COLUMNS` with `MARKER` `INTORG` / `INTEND`,
/// `RHS` (on the objective row: minus the offset), `RANGES`, `BOUNDS` (`UP LO FX FR MI PL
/// BV`), `ENDATA`. Panics on anything else: it is a test helper.
pub fn parse_mps(text: &str) -> MilpProblem {
    let mut p = MilpProblem::default();
    let mut section = String::new();
    let mut objective: Option<String> = None;
    let mut row_index: HashMap<String, usize> = HashMap::new();
    let mut row_kind: Vec<char> = Vec::new();
    let mut rhs: Vec<f64> = Vec::new();
    let mut column_index: HashMap<String, usize> = HashMap::new();
    let mut integer = false;
    let mut ranges: Vec<Option<f64>> = Vec::new();
    for line in text.lines() {
        if line.trim().is_empty() || line.starts_with('*') {
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        if !line.starts_with(' ') {
            section = fields[0].to_string();
            match section.as_str() {
                "NAME" => p.name = fields.get(1).unwrap_or(&"").to_string(),
                "OBJSENSE" if fields.len() > 1 => {
                    p.sense = sense(fields[1]);
                }
                "ROWS" | "COLUMNS" | "RHS" | "RANGES" | "BOUNDS" | "ENDATA" | "OBJSENSE" => {}
                other => panic!("unknown MPS section {other}"),
            }
            continue;
        }
        match section.as_str() {
            "OBJSENSE" => p.sense = sense(fields[0]),
            "ROWS" => {
                let kind = fields[0].chars().next().unwrap();
                if kind == 'N' && objective.is_none() {
                    objective = Some(fields[1].to_string());
                    continue;
                }
                row_index.insert(fields[1].to_string(), p.rows.len());
                row_kind.push(kind);
                rhs.push(0.0);
                ranges.push(None);
                p.add_row(fields[1], -INF, INF, vec![]);
            }
            "COLUMNS" => {
                if fields.get(1) == Some(&"'MARKER'") {
                    integer = fields[2] == "'INTORG'";
                    continue;
                }
                let j = *column_index
                    .entry(fields[0].to_string())
                    .or_insert_with(|| p.add_column(fields[0], 0.0, INF, 0.0, integer));
                for pair in fields[1..].chunks(2) {
                    let value: f64 = pair[1].parse().unwrap();
                    if Some(pair[0]) == objective.as_deref() {
                        p.columns[j].cost = value;
                    } else {
                        p.rows[row_index[pair[0]]].coefficients.push((j, value));
                    }
                }
            }
            "RHS" => {
                for pair in fields[1..].chunks(2) {
                    let value: f64 = pair[1].parse().unwrap();
                    if Some(pair[0]) == objective.as_deref() {
                        p.objective_offset = -value;
                    } else {
                        rhs[row_index[pair[0]]] = value;
                    }
                }
            }
            "RANGES" => {
                for pair in fields[1..].chunks(2) {
                    ranges[row_index[pair[0]]] = Some(pair[1].parse().unwrap());
                }
            }
            "BOUNDS" => {
                let j = column_index[fields[2]];
                let value = || fields[3].parse::<f64>().unwrap();
                let c = &mut p.columns[j];
                match fields[0] {
                    "UP" => c.upper = value(),
                    "LO" => c.lower = value(),
                    "FX" => {
                        c.lower = value();
                        c.upper = value();
                    }
                    "FR" => {
                        c.lower = -INF;
                        c.upper = INF;
                    }
                    "MI" => c.lower = -INF,
                    "PL" => c.upper = INF,
                    "BV" => {
                        c.lower = 0.0;
                        c.upper = 1.0;
                        c.integer = true;
                    }
                    other => panic!("unknown bound type {other}"),
                }
            }
            other => panic!("data in section {other}: {line}"),
        }
    }
    for (i, row) in p.rows.iter_mut().enumerate() {
        let b = rhs[i];
        let (lower, upper) = match (row_kind[i], ranges[i]) {
            ('E', None) => (b, b),
            ('E', Some(r)) if r >= 0.0 => (b, b + r),
            ('E', Some(r)) => (b + r, b),
            ('L', None) => (-INF, b),
            ('L', Some(r)) => (b - r.abs(), b),
            ('G', None) => (b, INF),
            ('G', Some(r)) => (b, b + r.abs()),
            ('N', _) => (-INF, INF),
            (kind, _) => panic!("unknown row type {kind}"),
        };
        row.lower = lower;
        row.upper = upper;
    }
    p
}

fn sense(word: &str) -> Sense {
    match word {
        "MAX" | "MAXIMIZE" => Sense::Maximize,
        "MIN" | "MINIMIZE" => Sense::Minimize,
        other => panic!("unknown objective sense {other}"),
    }
}
