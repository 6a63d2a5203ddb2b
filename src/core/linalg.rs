//! Dense products of the NLP evaluations that give the same bits as nalgebra's and run faster.
//!
//! The solvers' iterates depend on every rounding of the derivatives, so a faster product
//! that rounds differently would change results (a local solver's path can end in another
//! basin). These do the same floating-point operations in the same order as the nalgebra
//! code they replace, and only run them faster:
//! - [`tr_mul`] and [`tr_mul_vector`]: `a^T b` as nalgebra's `tr_mul`, one `dot` per entry
//!   (eight running sums over blocks of eight rows, combined as nalgebra combines them, then
//!   the remaining rows). Release builds target the baseline x86-64, where nalgebra's sums
//!   run two to a register and each entry's wait on its own additions; the AVX2 and AVX-512
//!   kernels, chosen at run time by what the CPU has, hold an entry's eight sums in one or
//!   two registers and compute four or eight entries together. Each lane does what
//!   nalgebra's sum does (a product, then an addition: Rust never fuses them into an FMA),
//!   so every kernel rounds alike. S-ORRT's Hessian is mostly such products (its
//!   Gauss-Newton part G^T diag(v) G); benches/README "Evaluations" has the timings.
//! - [`column_sums`]: each column's sum in row order from 0.0 as nalgebra's `sum`, four
//!   columns at a time so that their additions overlap.
//!
//! Each is checked against nalgebra bit for bit (unit tests below, every kernel the machine
//! has).
//!
//! Depends on nalgebra only.

use nalgebra::{DMatrix, DVector};
use std::sync::OnceLock;

/// Column `j` of a (column-major) matrix as a slice.
pub fn column(m: &DMatrix<f64>, j: usize) -> &[f64] {
    let n = m.nrows();
    &m.as_slice()[j * n..(j + 1) * n]
}

/// Column `j` of a (column-major) matrix as a mutable slice.
pub fn column_mut(m: &mut DMatrix<f64>, j: usize) -> &mut [f64] {
    let n = m.nrows();
    &mut m.as_mut_slice()[j * n..(j + 1) * n]
}

/// Each column's sum, added in row order from 0.0 as nalgebra's `sum` adds (so the same
/// bit for bit), four columns at a time: one column's additions wait on each other, four
/// columns' overlap.
pub fn column_sums(m: &DMatrix<f64>) -> Vec<f64> {
    let n = m.nrows();
    let mut sums = vec![0.0; m.ncols()];
    if n == 0 {
        return sums;
    }
    for (block, out) in m.as_slice().chunks(4 * n).zip(sums.chunks_mut(4)) {
        if let [c0, c1, c2, c3] = *block.chunks(n).collect::<Vec<_>>() {
            let mut acc = [0.0; 4];
            for i in 0..n {
                acc[0] += c0[i];
                acc[1] += c1[i];
                acc[2] += c2[i];
                acc[3] += c3[i];
            }
            out.copy_from_slice(&acc);
        } else {
            for (o, c) in out.iter_mut().zip(block.chunks(n)) {
                *o = c.iter().fold(0.0, |a, b| a + b);
            }
        }
    }
    sums
}

/// `a^T b` (a: N x m, b: N x k), bit for bit `a.tr_mul(b)`.
pub fn tr_mul(a: &DMatrix<f64>, b: &DMatrix<f64>) -> DMatrix<f64> {
    assert_eq!(
        a.nrows(),
        b.nrows(),
        "tr_mul: a has {} rows, b {}",
        a.nrows(),
        b.nrows()
    );
    let mut out = DMatrix::zeros(a.ncols(), b.ncols());
    products(a.nrows(), a.as_slice(), b.as_slice(), out.as_mut_slice());
    out
}

/// `a^T v` (a: N x m, v: N values), bit for bit `a.tr_mul(&v)`.
pub fn tr_mul_vector(a: &DMatrix<f64>, v: &[f64]) -> DVector<f64> {
    assert_eq!(
        a.nrows(),
        v.len(),
        "tr_mul_vector: a has {} rows, v {}",
        a.nrows(),
        v.len()
    );
    let mut out = DVector::zeros(a.ncols());
    products(a.nrows(), a.as_slice(), v, out.as_mut_slice());
    out
}

/// The instruction sets the products are compiled for.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kernel {
    Baseline,
    #[cfg(target_arch = "x86_64")]
    Avx2,
    #[cfg(target_arch = "x86_64")]
    Avx512,
}

/// The widest kernel this CPU runs, detected once.
fn kernel() -> Kernel {
    static KERNEL: OnceLock<Kernel> = OnceLock::new();
    *KERNEL.get_or_init(|| {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512f") {
                return Kernel::Avx512;
            }
            if std::arch::is_x86_feature_detected!("avx2") {
                return Kernel::Avx2;
            }
        }
        Kernel::Baseline
    })
}

/// out (m x k, column-major) = a^T b for a (rows x m) and b (rows x k), column-major slices.
fn products(rows: usize, a: &[f64], b: &[f64], out: &mut [f64]) {
    products_with(kernel(), rows, a, b, out)
}

fn products_with(kernel: Kernel, rows: usize, a: &[f64], b: &[f64], out: &mut [f64]) {
    match kernel {
        Kernel::Baseline => products_body(rows, a, b, out),
        // SAFETY: `kernel()` chose these only where the CPU has the instruction set, and the
        // tests call them only where it has.
        #[cfg(target_arch = "x86_64")]
        Kernel::Avx2 => unsafe { products_avx2(rows, a, b, out) },
        #[cfg(target_arch = "x86_64")]
        Kernel::Avx512 => unsafe { products_avx512(rows, a, b, out) },
    }
}

/// How many entries of a column of the product the vector kernels compute together: one
/// entry's running sums wait on each other (an addition's latency per block of rows), these
/// entries' overlap. AVX2's 16 registers hold four entries' sums (two registers each) beside
/// the loads, AVX-512's 32 hold eight.
#[cfg(target_arch = "x86_64")]
const AVX2_ENTRIES: usize = 4;
#[cfg(target_arch = "x86_64")]
const AVX512_ENTRIES: usize = 8;

/// The AVX2 kernel: each entry's eight running sums in two 4-lane registers.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn products_avx2(rows: usize, a: &[f64], b: &[f64], out: &mut [f64]) {
    use std::arch::x86_64::*;
    blocked::<AVX2_ENTRIES>(rows, a, b, out, |a_i, b_js, blocks| {
        let mut lo = [_mm256_setzero_pd(); AVX2_ENTRIES];
        let mut hi = [_mm256_setzero_pd(); AVX2_ENTRIES];
        for c in 0..blocks {
            // SAFETY: c < blocks = rows / 8, and every slice holds `rows` values.
            let x_lo = _mm256_loadu_pd(a_i.as_ptr().add(8 * c));
            let x_hi = _mm256_loadu_pd(a_i.as_ptr().add(8 * c + 4));
            for q in 0..AVX2_ENTRIES {
                let y_lo = _mm256_loadu_pd(b_js[q].as_ptr().add(8 * c));
                let y_hi = _mm256_loadu_pd(b_js[q].as_ptr().add(8 * c + 4));
                lo[q] = _mm256_add_pd(lo[q], _mm256_mul_pd(x_lo, y_lo));
                hi[q] = _mm256_add_pd(hi[q], _mm256_mul_pd(x_hi, y_hi));
            }
        }
        let mut sums = [[0.0; 8]; AVX2_ENTRIES];
        for q in 0..AVX2_ENTRIES {
            _mm256_storeu_pd(sums[q].as_mut_ptr(), lo[q]);
            _mm256_storeu_pd(sums[q].as_mut_ptr().add(4), hi[q]);
        }
        sums
    })
}

/// The AVX-512 kernel: each entry's eight running sums in one 8-lane register.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn products_avx512(rows: usize, a: &[f64], b: &[f64], out: &mut [f64]) {
    use std::arch::x86_64::*;
    blocked::<AVX512_ENTRIES>(rows, a, b, out, |a_i, b_js, blocks| {
        let mut acc = [_mm512_setzero_pd(); AVX512_ENTRIES];
        for c in 0..blocks {
            // SAFETY: as in `products_avx2`.
            let x = _mm512_loadu_pd(a_i.as_ptr().add(8 * c));
            for q in 0..AVX512_ENTRIES {
                let y = _mm512_loadu_pd(b_js[q].as_ptr().add(8 * c));
                acc[q] = _mm512_add_pd(acc[q], _mm512_mul_pd(x, y));
            }
        }
        let mut sums = [[0.0; 8]; AVX512_ENTRIES];
        for q in 0..AVX512_ENTRIES {
            _mm512_storeu_pd(sums[q].as_mut_ptr(), acc[q]);
        }
        sums
    })
}

/// out = a^T b with `E` entries of a column of out at a time: `sums` gives their eight
/// running sums over the rows' whole blocks of eight (lane k: rows 8c + k), which
/// [`finish`] combines as [`dot`] does; the last columns of b go through [`dot`].
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn blocked<const E: usize>(
    rows: usize,
    a: &[f64],
    b: &[f64],
    out: &mut [f64],
    sums: impl Fn(&[f64], [&[f64]; E], usize) -> [[f64; 8]; E],
) {
    if rows == 0 {
        out.fill(0.0);
        return;
    }
    let m = a.len() / rows;
    let columns: Vec<&[f64]> = b.chunks_exact(rows).collect();
    let blocks = rows / 8;
    for (i, a_i) in a.chunks_exact(rows).enumerate() {
        let mut groups = columns.chunks_exact(E);
        for (g, group) in groups.by_ref().enumerate() {
            let b_js: [&[f64]; E] = std::array::from_fn(|q| group[q]);
            for (q, lanes) in sums(a_i, b_js, blocks).iter().enumerate() {
                out[(g * E + q) * m + i] = finish(lanes, a_i, b_js[q]);
            }
        }
        let first = columns.len() / E * E;
        for (r, b_j) in groups.remainder().iter().enumerate() {
            out[(first + r) * m + i] = dot(a_i, b_j);
        }
    }
}

/// [`dot`]'s end: the eight running sums `lanes` combined, then the rows after the last
/// whole block of eight.
#[inline(always)]
fn finish(lanes: &[f64; 8], a: &[f64], b: &[f64]) -> f64 {
    let mut res = 0.0;
    res += lanes[0] + lanes[4];
    res += lanes[1] + lanes[5];
    res += lanes[2] + lanes[6];
    res += lanes[3] + lanes[7];
    let done = a.len() / 8 * 8;
    for (x, y) in a[done..].iter().zip(&b[done..]) {
        res += x * y;
    }
    res
}

#[inline(always)]
fn products_body(rows: usize, a: &[f64], b: &[f64], out: &mut [f64]) {
    if rows == 0 {
        out.fill(0.0);
        return;
    }
    let m = a.len() / rows;
    for (j, b_j) in b.chunks_exact(rows).enumerate() {
        for (i, a_i) in a.chunks_exact(rows).enumerate() {
            out[j * m + i] = dot(a_i, b_j);
        }
    }
}

/// nalgebra's `dot` for contiguous vectors of equal length: eight running sums over blocks
/// of eight rows, combined as (s0 + s4), (s1 + s5), (s2 + s6), (s3 + s7) into a sum from
/// 0.0, then the remaining rows one by one.
#[inline(always)]
fn dot(a: &[f64], b: &[f64]) -> f64 {
    let mut acc = [0.0f64; 8];
    let blocks = a.chunks_exact(8).zip(b.chunks_exact(8));
    for (x, y) in blocks {
        for k in 0..8 {
            acc[k] += x[k] * y[k];
        }
    }
    finish(&acc, a, b)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values of mixed signs and magnitudes, so that another order of the additions would
    /// round differently.
    fn mixed(rows: usize, cols: usize, salt: usize) -> DMatrix<f64> {
        DMatrix::from_fn(rows, cols, |i, j| {
            let v = ((i * 7919 + j * 104_729 + salt * 31) % 1000) as f64 / 7.0;
            if (i + j + salt).is_multiple_of(3) {
                -v * 1e-3
            } else {
                v * 1e5
            }
        })
    }

    fn kernels() -> Vec<Kernel> {
        let mut all = vec![Kernel::Baseline];
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx2") {
                all.push(Kernel::Avx2);
            }
            if std::arch::is_x86_feature_detected!("avx512f") {
                all.push(Kernel::Avx512);
            }
        }
        all
    }

    #[test]
    fn products_equal_nalgebras_bit_for_bit_on_every_kernel() {
        for kernel in kernels() {
            for (rows, m, k) in [
                (0, 2, 3),
                (1, 1, 1),
                (7, 3, 2),
                (8, 2, 2),
                (9, 4, 5),
                (16, 3, 8),
                (40, 2, 17),
                (379, 14, 14),
            ] {
                let a = mixed(rows, m, 1);
                let b = mixed(rows, k, 2);
                let mut out = DMatrix::zeros(m, k);
                products_with(kernel, rows, a.as_slice(), b.as_slice(), out.as_mut_slice());
                let expected = a.tr_mul(&b);
                for (got, want) in out.iter().zip(expected.iter()) {
                    assert_eq!(
                        got.to_bits(),
                        want.to_bits(),
                        "{kernel:?}, {rows} x {m} x {k}"
                    );
                }
            }
        }
        let a = mixed(131, 6, 3);
        let v = mixed(131, 1, 4);
        let want = a.tr_mul(&v);
        let got = tr_mul_vector(&a, v.as_slice());
        assert!(got
            .iter()
            .zip(want.iter())
            .all(|(g, w)| g.to_bits() == w.to_bits()));
        let got = tr_mul(&a, &v);
        assert!(got
            .iter()
            .zip(want.iter())
            .all(|(g, w)| g.to_bits() == w.to_bits()));
    }

    /// Summing the same values in another order rounds differently: the tests above would
    /// see a change of order.
    #[test]
    fn the_order_of_the_additions_shows_in_the_bits() {
        let a = mixed(379, 1, 5);
        let b = mixed(379, 1, 6);
        let sequential = a.iter().zip(b.iter()).fold(0.0, |s, (x, y)| s + x * y);
        assert_ne!(
            sequential.to_bits(),
            dot(a.as_slice(), b.as_slice()).to_bits()
        );
        let m = mixed(576, 1, 9);
        let reversed = m.iter().rev().fold(0.0, |a, b| a + b);
        assert_ne!(reversed.to_bits(), column_sums(&m)[0].to_bits());
    }

    #[test]
    fn column_sums_equal_nalgebras_bit_for_bit() {
        for (rows, cols) in [(0, 3), (1, 1), (7, 4), (131, 5), (576, 9), (33, 16)] {
            let m = mixed(rows, cols, 8);
            let sums = column_sums(&m);
            assert_eq!(sums.len(), cols);
            for (j, s) in sums.iter().enumerate() {
                assert_eq!(
                    s.to_bits(),
                    m.column(j).sum().to_bits(),
                    "{rows} x {cols}, column {j}"
                );
            }
        }
    }
}
