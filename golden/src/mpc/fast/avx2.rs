//! AVX2 kernels of the fast codec (x86-64, chosen at run time when the CPU
//! has AVX2; identical results to [`super::scalar`], checked by tests).
//!
//! Prediction is a 32-byte gather (two in-lane byte shuffles of the low and
//! high halves broadcast to both lanes) and a per-byte shift done as a
//! 16-bit multiply by `2^(8 + k)` keeping the high byte. The reorder is the
//! predictor's Beneš network, one register wide. Restoration repeats
//! "residue + prediction of the current estimate" once per tree level.

use std::arch::x86_64::*;

use super::super::{BLOCK_BYTES, SYMBOLS};
use super::benes::{distance, Masks, GROUP_STAGES, STAGES};
use super::tables::PredictorTables;

/// One predictor's constants in the order the instructions use them.
#[derive(Clone, Copy)]
pub(crate) struct Vectors {
    /// Byte j reads low-half byte `idx_lo[j]` (0x80 = none: a high-half
    /// base or a root).
    idx_lo: [u8; 32],
    /// Byte j reads high-half byte `idx_hi[j]` (0x80 = none).
    idx_hi: [u8; 32],
    /// Multipliers of bytes 0..7 and 16..23 (the order of unpack-low).
    mul_lo: [u16; 16],
    /// Multipliers of bytes 8..15 and 24..31 (unpack-high).
    mul_hi: [u16; 16],
    /// Beneš masks; stages of distance 64 and 128 mark both bits of a pair.
    forward: Masks,
    inverse: Masks,
}

/// Stage masks with both members of each 64/128-distance pair marked.
fn symmetric(m: &Masks) -> Masks {
    let mut out = *m;
    for (s, stage) in out.iter_mut().enumerate() {
        let d = distance(s);
        if d >= 64 {
            let dw = d / 64;
            for w in 0..4 {
                if w & dw != 0 {
                    stage[w] = stage[w - dw];
                }
            }
        }
    }
    out
}

impl Vectors {
    pub(crate) fn new(t: &PredictorTables) -> Self {
        let mut v = Vectors {
            idx_lo: [0x80; 32],
            idx_hi: [0x80; 32],
            mul_lo: [0; 16],
            mul_hi: [0; 16],
            forward: symmetric(&t.forward),
            inverse: symmetric(&t.inverse),
        };
        for j in 0..BLOCK_BYTES {
            let b = t.pred_base[j];
            if b < 16 {
                v.idx_lo[j] = b;
            } else if (b as usize) < BLOCK_BYTES {
                v.idx_hi[j] = b - 16;
            }
            let (lane, k) = (j / 16, j % 16);
            if k < 8 {
                v.mul_lo[8 * lane + k] = t.pred_mul[j];
            } else {
                v.mul_hi[8 * lane + k - 8] = t.pred_mul[j];
            }
        }
        v
    }
}

macro_rules! loader {
    ($name:ident, $t:ty, $n:literal) => {
        #[inline]
        #[target_feature(enable = "avx2")]
        fn $name(v: &[$t; $n]) -> __m256i {
            // SAFETY: the array holds exactly 32 readable bytes; unaligned
            // load.
            unsafe { _mm256_loadu_si256(v.as_ptr() as *const __m256i) }
        }
    };
}
loader!(load_u8, u8, 32);
loader!(load_u16, u16, 16);
loader!(load_u64, u64, 4);

/// The prediction of every byte of `x`.
#[inline]
#[target_feature(enable = "avx2")]
fn predict(x: __m256i, v: &Vectors) -> __m256i {
    let lo = _mm256_permute4x64_epi64::<0x44>(x);
    let hi = _mm256_permute4x64_epi64::<0xee>(x);
    let y = _mm256_or_si256(
        _mm256_shuffle_epi8(lo, load_u8(&v.idx_lo)),
        _mm256_shuffle_epi8(hi, load_u8(&v.idx_hi)),
    );
    let z = _mm256_setzero_si256();
    let a = _mm256_mullo_epi16(_mm256_unpacklo_epi8(y, z), load_u16(&v.mul_lo));
    let b = _mm256_mullo_epi16(_mm256_unpackhi_epi8(y, z), load_u16(&v.mul_hi));
    _mm256_packus_epi16(_mm256_srli_epi16::<8>(a), _mm256_srli_epi16::<8>(b))
}

/// One delta swap at distance `D` < 64 (within 64-bit words).
#[inline]
#[target_feature(enable = "avx2")]
fn swap_in_words<const D: i32>(x: __m256i, m: &[u64; 4]) -> __m256i {
    let t = _mm256_and_si256(_mm256_xor_si256(_mm256_srli_epi64::<D>(x), x), load_u64(m));
    _mm256_xor_si256(x, _mm256_xor_si256(t, _mm256_slli_epi64::<D>(t)))
}

/// One delta swap between whole words (`P` permutes each word to its
/// partner; the mask marks both members).
#[inline]
#[target_feature(enable = "avx2")]
fn swap_words<const P: i32>(x: __m256i, m: &[u64; 4]) -> __m256i {
    let t = _mm256_and_si256(
        _mm256_xor_si256(_mm256_permute4x64_epi64::<P>(x), x),
        load_u64(m),
    );
    _mm256_xor_si256(x, t)
}

/// Stages `0..GROUP_STAGES` of a network (distances 1, 2, ..., 128, ...,
/// 16).
#[inline]
#[target_feature(enable = "avx2")]
fn benes_groups(m: &Masks, mut x: __m256i) -> __m256i {
    const _: () = assert!(STAGES == 15 && GROUP_STAGES == 11);
    x = swap_in_words::<1>(x, &m[0]);
    x = swap_in_words::<2>(x, &m[1]);
    x = swap_in_words::<4>(x, &m[2]);
    x = swap_in_words::<8>(x, &m[3]);
    x = swap_in_words::<16>(x, &m[4]);
    x = swap_in_words::<32>(x, &m[5]);
    x = swap_words::<0xb1>(x, &m[6]);
    x = swap_words::<0x4e>(x, &m[7]);
    x = swap_words::<0xb1>(x, &m[8]);
    x = swap_in_words::<32>(x, &m[9]);
    swap_in_words::<16>(x, &m[10])
}

/// Stages `GROUP_STAGES..` (distances 8, 4, 2, 1: inside 16-bit groups).
#[inline]
#[target_feature(enable = "avx2")]
fn benes_tail(m: &Masks, mut x: __m256i) -> __m256i {
    x = swap_in_words::<8>(x, &m[11]);
    x = swap_in_words::<4>(x, &m[12]);
    x = swap_in_words::<2>(x, &m[13]);
    swap_in_words::<1>(x, &m[14])
}

/// Stages 1-4 up to the order of bits inside each symbol: the symbols with
/// their bits not yet in place (finish with [`finish`]) and their zero mask
/// (bit m set when symbol m is zero).
#[inline]
#[target_feature(enable = "avx2")]
pub(crate) fn grouped(v: &Vectors, block: &[u8; BLOCK_BYTES]) -> ([u16; SYMBOLS], u16) {
    let x = load_u8(block);
    let r = _mm256_sub_epi8(x, predict(x, v));
    let g = _mm256_xor_si256(
        r,
        _mm256_and_si256(_mm256_srli_epi16::<1>(r), _mm256_set1_epi8(0x7f)),
    );
    let s = benes_groups(&v.forward, g);
    let z = _mm256_cmpeq_epi16(s, _mm256_setzero_si256());
    let mm = _mm256_movemask_epi8(_mm256_packs_epi16(z, z)) as u32;
    let mut out = [0u16; SYMBOLS];
    // SAFETY: 32 writable bytes; unaligned store.
    unsafe { _mm256_storeu_si256(out.as_mut_ptr() as *mut __m256i, s) };
    (out, ((mm & 0xff) | ((mm >> 8) & 0xff00)) as u16)
}

/// The symbols from [`grouped`]'s output.
#[inline]
#[target_feature(enable = "avx2")]
pub(crate) fn finish(v: &Vectors, grouped: &[u16; SYMBOLS]) -> [u16; SYMBOLS] {
    let s = benes_tail(&v.forward, load_u16(grouped));
    let mut out = [0u16; SYMBOLS];
    // SAFETY: 32 writable bytes; unaligned store.
    unsafe { _mm256_storeu_si256(out.as_mut_ptr() as *mut __m256i, s) };
    out
}

/// Stages 4-1 inverted: symbols -> block. Inverse Gray code, then `depth`
/// rounds of "residue + prediction" (round d makes every byte of depth
/// <= d exact).
#[inline]
#[target_feature(enable = "avx2")]
pub(crate) fn restore(v: &Vectors, depth: usize, symbols: &[u16; SYMBOLS]) -> [u8; BLOCK_BYTES] {
    let mut r = benes_tail(&v.inverse, benes_groups(&v.inverse, load_u16(symbols)));
    r = _mm256_xor_si256(
        r,
        _mm256_and_si256(_mm256_srli_epi16::<1>(r), _mm256_set1_epi8(0x7f)),
    );
    r = _mm256_xor_si256(
        r,
        _mm256_and_si256(_mm256_srli_epi16::<2>(r), _mm256_set1_epi8(0x3f)),
    );
    r = _mm256_xor_si256(
        r,
        _mm256_and_si256(_mm256_srli_epi16::<4>(r), _mm256_set1_epi8(0x0f)),
    );
    let mut out = r;
    for _ in 0..depth {
        out = _mm256_add_epi8(r, predict(out, v));
    }
    let mut bytes = [0u8; BLOCK_BYTES];
    // SAFETY: 32 writable bytes; unaligned store.
    unsafe { _mm256_storeu_si256(bytes.as_mut_ptr() as *mut __m256i, out) };
    bytes
}
