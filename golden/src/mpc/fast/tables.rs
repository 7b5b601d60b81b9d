//! Per-predictor tables of the fast codec, built once from a [`Predictor`].
//!
//! Two 256-bit layouts (little-endian `[u64; 4]`: bit i is bit `i % 64` of
//! word `i / 64`):
//! * layout R, the Gray-coded residues as bytes: bit `8j + p` is plane p of
//!   byte j (spec stages 1-2: residue, then XOR with the plane above);
//! * layout S, the symbols as 16-bit lanes: stream bit o (after the reorder
//!   of stage 3) is bit `16 * (o / 16) + 15 - o % 16`, so lane m is symbol m
//!   with its first bit in the MSB.
//!
//! The reorder from R to S and back is a Beneš network per predictor.

use super::super::model::ByteRule;
use super::super::{transform, Predictor, BLOCK_BYTES, STREAM_BITS};
use super::benes::{self, Masks};

/// 256 bits as four little-endian `u64` words.
pub(crate) type Bits256 = [u64; 4];

/// Layout-S index of stream bit `o`.
fn lane_index(o: usize) -> usize {
    16 * (o / 16) + 15 - o % 16
}

/// Layout-R index of natural-stream bit `n` (plane `7 - n / 32`, column
/// `n % 32`).
fn residue_index(n: usize) -> usize {
    8 * (n % 32) + 7 - n / 32
}

pub(crate) struct PredictorTables {
    /// `(base, shift)` per byte; roots have `None`.
    pub rules: [Option<(u8, i8)>; BLOCK_BYTES],
    /// Restore order: every byte after its base.
    pub order: [usize; BLOCK_BYTES],
    /// Longest chain of bases (0 when every byte is a root).
    pub depth: usize,
    /// Base byte of each byte; roots read index 32 (a zero byte).
    pub pred_base: [u8; BLOCK_BYTES],
    /// Prediction of byte j = bits 8..15 of `base * pred_mul[j]`:
    /// `pred_mul = 2^(8 + k)` covers both shift directions.
    pub pred_mul: [u16; BLOCK_BYTES],
    /// Layout R -> layout S.
    pub forward: Masks,
    /// Layout S -> layout R.
    pub inverse: Masks,
    /// Layout-R index of layout-S bit s (the permutation `forward` routes).
    pub fwd_src: [u16; STREAM_BITS],
    /// Layout-S index of layout-R bit r (the permutation `inverse` routes).
    pub inv_src: [u16; STREAM_BITS],
}

impl PredictorTables {
    /// Tables of a predictor that satisfies the model-file invariants
    /// (`docs/spec/model-format.md`, enforced by the loader): the reorder
    /// is a permutation, bases form trees, shifts are within -7..=7.
    pub fn new(p: &Predictor) -> Self {
        debug_assert!(
            {
                let mut seen = [false; STREAM_BITS];
                p.reorder
                    .iter()
                    .all(|&n| !std::mem::replace(&mut seen[n as usize], true))
            },
            "predictor {}: reorder is not a permutation",
            p.name
        );
        let mut fwd_src = [0u16; STREAM_BITS];
        let mut inv_src = [0u16; STREAM_BITS];
        for (o, &n) in p.reorder.iter().enumerate() {
            let (s, r) = (lane_index(o), residue_index(n as usize));
            fwd_src[s] = r as u16;
            inv_src[r] = s as u16;
        }
        let rules = std::array::from_fn(|i| match p.bytes[i] {
            ByteRule::Root => None,
            ByteRule::Base { base, shift } => Some((base, shift)),
        });
        let mut pred_base = [BLOCK_BYTES as u8; BLOCK_BYTES];
        let mut pred_mul = [1u16 << 8; BLOCK_BYTES];
        for (j, r) in rules.iter().enumerate() {
            if let Some((b, k)) = *r {
                debug_assert!((-7..=7).contains(&k), "predictor {}: shift {k}", p.name);
                pred_base[j] = b;
                pred_mul[j] = 1u16 << (8 + k as i32);
            }
        }
        // a chain longer than the block would be a cycle (bounded anyway)
        let depth_of = |mut i: usize| {
            let mut d = 0;
            while let ByteRule::Base { base, .. } = p.bytes[i] {
                i = base as usize;
                d += 1;
                debug_assert!(d <= BLOCK_BYTES, "predictor {}: bases form a cycle", p.name);
                if d > BLOCK_BYTES {
                    break;
                }
            }
            d
        };
        PredictorTables {
            rules,
            order: transform::restore_order(p),
            depth: (0..BLOCK_BYTES).map(depth_of).max().unwrap_or(0),
            pred_base,
            pred_mul,
            forward: benes::route(&fwd_src),
            inverse: benes::route(&inv_src),
            fwd_src,
            inv_src,
        }
    }
}

/// Symbols of a layout-S value.
#[inline]
pub(crate) fn lanes(s: &Bits256) -> [u16; 16] {
    std::array::from_fn(|m| (s[m / 4] >> (16 * (m % 4))) as u16)
}

/// Layout-S value of 16 symbols.
#[inline]
pub(crate) fn from_lanes(symbols: &[u16; 16]) -> Bits256 {
    std::array::from_fn(|w| {
        (0..4).fold(0u64, |acc, k| acc | (symbols[4 * w + k] as u64) << (16 * k))
    })
}
