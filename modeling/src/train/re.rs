//! Ratio entropy (paper section 2.3): `RE(i, j)` is the Shannon entropy of
//! the quantised log-ratio `floor(log2(d[i] / d[j]))` over the training
//! blocks.
//!
//! Zero bytes (docs/spec/training.md, "Ratio entropy"): the quotient is
//! undefined when either byte is 0, yet zeros are the most common byte of
//! memory data. A zero byte counts as **1/2** (half the smallest nonzero
//! value): the ratio is computed as `floor(log2(a' / b'))` with
//! `x' = 2x` for `x > 0` and `x' = 1` for `x = 0`. Then 0 next to 0 is ratio
//! 1 (the same symbol as equal values: predicted exactly with k = 0), and a
//! nonzero byte next to an always-zero one spreads over the bins by its own
//! magnitude, so a zero base is rated by how unpredictable the byte is.
//! Two alternatives were tried and rejected: skipping pairs with a zero
//! leaves an always-zero byte without samples, and giving each zero case
//! its own symbol makes *any* byte look predictable from an always-zero
//! byte (the pair is then always "nonzero/zero": entropy near 0), which
//! built trees that hang busy bytes under constant ones.
//! Symbols: `q + 9` for `q = floor(log2(a'/b'))` in `-9..=8`.

use rayon::prelude::*;

use datafiles::corpus::{entropy_of, Block};
use golden::mpc::BLOCK_BYTES;

/// Number of RE symbols (`q` in -9..=8).
pub const RE_BINS: usize = 18;

/// The RE symbol of the pair `(a, b)` = (value at i, value at j).
pub fn re_bin(a: u8, b: u8) -> u8 {
    // x' = 2x, or 1 for x = 0 (zero counts as 1/2).
    let a = if a == 0 { 1 } else { 2 * a as u32 };
    let b = if b == 0 { 1 } else { 2 * b as u32 };
    // floor(log2(a / b)) exactly: e = msb(a) - msb(b), then one less when
    // a < b * 2^e.
    let la = 31 - a.leading_zeros() as i32;
    let lb = 31 - b.leading_zeros() as i32;
    let e = la - lb;
    let ge = if e >= 0 { a >= b << e } else { a << (-e) >= b };
    let q = if ge { e } else { e - 1 };
    (q + 9) as u8
}

/// The 64 KiB lookup table `re_bin(a, b)` at `256 * a + b`.
fn bin_table() -> Vec<u8> {
    (0..65536u32)
        .map(|x| re_bin((x >> 8) as u8, x as u8))
        .collect()
}

/// RE matrix and per-position byte entropy of a block set.
#[derive(Clone, Debug, PartialEq)]
pub struct ReStats {
    /// `re[i][j]` = RE(i, j) in bits (0 on the diagonal).
    pub re: [[f64; BLOCK_BYTES]; BLOCK_BYTES],
    /// Shannon entropy of the byte value at each position (bits).
    pub byte_entropy: [f64; BLOCK_BYTES],
    /// Blocks measured.
    pub blocks: usize,
}

/// Measure RE over `blocks` (in parallel; the result does not depend on the
/// thread count: integer histograms are summed, then converted).
pub fn ratio_entropy(blocks: &[Block]) -> ReStats {
    let table = bin_table();
    const CHUNK: usize = 16384;
    let zero = || vec![0u64; BLOCK_BYTES * BLOCK_BYTES * RE_BINS + BLOCK_BYTES * 256];
    let counts = blocks
        .par_chunks(CHUNK)
        .map(|chunk| {
            let mut c = vec![0u32; BLOCK_BYTES * BLOCK_BYTES * RE_BINS];
            let mut h = vec![0u32; BLOCK_BYTES * 256];
            for b in chunk {
                for i in 0..BLOCK_BYTES {
                    h[i * 256 + b[i] as usize] += 1;
                    let row = &table[(b[i] as usize) << 8..][..256];
                    let base = i * BLOCK_BYTES * RE_BINS;
                    for j in 0..BLOCK_BYTES {
                        c[base + j * RE_BINS + row[b[j] as usize] as usize] += 1;
                    }
                }
            }
            let mut out = zero();
            for (o, v) in out.iter_mut().zip(c.iter().chain(h.iter())) {
                *o = *v as u64;
            }
            out
        })
        .reduce(zero, |mut a, b| {
            for (x, y) in a.iter_mut().zip(&b) {
                *x += y;
            }
            a
        });
    let mut re = [[0.0; BLOCK_BYTES]; BLOCK_BYTES];
    for (i, row) in re.iter_mut().enumerate() {
        for (j, v) in row.iter_mut().enumerate() {
            if i != j {
                let at = (i * BLOCK_BYTES + j) * RE_BINS;
                *v = entropy_of(&counts[at..at + RE_BINS]);
            }
        }
    }
    let hoff = BLOCK_BYTES * BLOCK_BYTES * RE_BINS;
    let byte_entropy =
        std::array::from_fn(|i| entropy_of(&counts[hoff + i * 256..hoff + (i + 1) * 256]));
    ReStats {
        re,
        byte_entropy,
        blocks: blocks.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_are_floor_log2_of_the_ratio() {
        let v = |x: u32| if x == 0 { 0.5 } else { x as f64 };
        for a in 0..=255u32 {
            for b in 0..=255u32 {
                let q = (v(a) / v(b)).log2().floor() as i32;
                assert_eq!(re_bin(a as u8, b as u8) as i32, q + 9, "{a}/{b}");
            }
        }
        assert_eq!(re_bin(0, 0), re_bin(7, 7));
        assert_eq!(re_bin(255, 0), 17);
        assert_eq!(re_bin(0, 255), 0);
    }
}
