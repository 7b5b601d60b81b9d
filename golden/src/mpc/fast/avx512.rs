//! AVX-512 kernels of the fast codec (x86-64 CPUs with AVX-512 VBMI and
//! BITALG, chosen at run time; identical results to [`super::scalar`],
//! checked by tests).
//!
//! The whole reorder (all 15 stages of the Beneš network of [`super::avx2`])
//! is four byte gathers and four bit shuffles: for each 64 output bits, a
//! byte permutation (`vpermb`) puts in byte b of a 512-bit register the
//! source byte holding output bit b, and a bit shuffle (`vpshufbitqmb`)
//! picks from each 64-bit word the eight bits its eight outputs need.
//! Prediction gathers the 32 bases with one masked byte permutation (roots
//! read zero) and shifts them with a 16-bit multiply by `2^(8 + k)`.
//!
//! The AVX-512 intrinsics and `#[target_feature]` names are stable since
//! Rust 1.89.

use std::arch::x86_64::*;

use super::super::{BLOCK_BYTES, STREAM_BITS, SYMBOLS};
use super::tables::PredictorTables;

/// A permutation of 256 bits (`out[o] = in[src[o]]`) as byte and bit
/// indices.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Shuffle {
    /// `bytes[g][b]`: the byte holding output bit `64 g + b`.
    bytes: [[u8; 64]; 4],
    /// `bits[g][b]`: that bit's index in 64-bit word `b / 8` of the
    /// gathered register (byte `b % 8` of the word, then the bit).
    bits: [[u8; 64]; 4],
}

impl Shuffle {
    fn new(src: &[u16; STREAM_BITS]) -> Self {
        let mut s = Shuffle {
            bytes: [[0; 64]; 4],
            bits: [[0; 64]; 4],
        };
        for (o, &from) in src.iter().enumerate() {
            let (g, b, from) = (o / 64, o % 64, from as usize);
            s.bytes[g][b] = (from / 8) as u8;
            s.bits[g][b] = (8 * (b % 8) + from % 8) as u8;
        }
        s
    }
}

/// One predictor's constants.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
pub(crate) struct Vectors {
    /// Multiplier of each byte's base (`2^(8 + k)`).
    mul: [u16; BLOCK_BYTES],
    /// Base byte of each byte (roots: any).
    base: [u8; BLOCK_BYTES],
    /// Bit j set when byte j has a base.
    has_base: u32,
    forward: Shuffle,
    inverse: Shuffle,
}

impl Vectors {
    pub(crate) fn new(t: &PredictorTables) -> Self {
        let mut v = Vectors {
            mul: t.pred_mul,
            base: [0; BLOCK_BYTES],
            has_base: 0,
            forward: Shuffle::new(&t.fwd_src),
            inverse: Shuffle::new(&t.inv_src),
        };
        for (j, r) in t.rules.iter().enumerate() {
            if let Some((b, _)) = *r {
                v.base[j] = b;
                v.has_base |= 1 << j;
            }
        }
        v
    }
}

#[inline]
#[target_feature(enable = "avx2")]
fn load256<T>(v: &[T]) -> __m256i {
    debug_assert!(std::mem::size_of_val(v) >= 32);
    // SAFETY: the callers pass 32 readable bytes; unaligned load.
    unsafe { _mm256_loadu_si256(v.as_ptr() as *const __m256i) }
}

#[inline]
#[target_feature(enable = "avx512f")]
fn load512(v: &[u8; 64]) -> __m512i {
    // SAFETY: 64 readable bytes; unaligned load.
    unsafe { _mm512_loadu_si512(v.as_ptr() as *const __m512i) }
}

/// The prediction of every byte of `x`.
#[inline]
#[target_feature(enable = "avx2,avx512f,avx512bw,avx512vl,avx512vbmi")]
fn predict(x: __m256i, v: &Vectors) -> __m256i {
    let y = _mm256_maskz_permutexvar_epi8(v.has_base, load256(&v.base), x);
    // SAFETY: `mul` is 64 readable bytes; unaligned load.
    let mul = unsafe { _mm512_loadu_si512(v.mul.as_ptr() as *const __m512i) };
    let p = _mm512_srli_epi16::<8>(_mm512_mullo_epi16(_mm512_cvtepu8_epi16(y), mul));
    _mm512_cvtepi16_epi8(p)
}

/// The permutation `s` of the 256 bits of `x`, as four little-endian words.
#[inline]
#[target_feature(enable = "avx2,avx512f,avx512bw,avx512vbmi,avx512bitalg")]
fn permute(s: &Shuffle, x: __m256i) -> [u64; 4] {
    let src = _mm512_castsi256_si512(x);
    std::array::from_fn(|g| {
        let gathered = _mm512_permutexvar_epi8(load512(&s.bytes[g]), src);
        _mm512_bitshuffle_epi64_mask(gathered, load512(&s.bits[g]))
    })
}

/// Per-byte Gray code of the residues: each plane XOR the plane above.
#[inline]
#[target_feature(enable = "avx2")]
fn gray(r: __m256i) -> __m256i {
    _mm256_xor_si256(
        r,
        _mm256_and_si256(_mm256_srli_epi16::<1>(r), _mm256_set1_epi8(0x7f)),
    )
}

/// Stages 1-4: the symbols (bits in place: nothing left for
/// [`super::avx2::finish`] to do) and their zero mask (bit m set when
/// symbol m is zero).
#[inline]
#[target_feature(enable = "avx2,avx512f,avx512bw,avx512vl,avx512vbmi,avx512bitalg")]
pub(crate) fn symbols(v: &Vectors, block: &[u8; BLOCK_BYTES]) -> ([u16; SYMBOLS], u16) {
    let x = load256(block);
    let g = gray(_mm256_sub_epi8(x, predict(x, v)));
    let w = permute(&v.forward, g);
    let s = _mm256_set_epi64x(w[3] as i64, w[2] as i64, w[1] as i64, w[0] as i64);
    let zero = _mm256_cmpeq_epi16_mask(s, _mm256_setzero_si256());
    let mut out = [0u16; SYMBOLS];
    // SAFETY: 32 writable bytes; unaligned store.
    unsafe { _mm256_storeu_si256(out.as_mut_ptr() as *mut __m256i, s) };
    (out, zero)
}

/// Stages 4-1 inverted: symbols -> block. Inverse Gray code, then `depth`
/// rounds of "residue + prediction" (round d makes every byte of depth
/// <= d exact).
#[inline]
#[target_feature(enable = "avx2,avx512f,avx512bw,avx512vl,avx512vbmi,avx512bitalg")]
pub(crate) fn restore(v: &Vectors, depth: usize, symbols: &[u16; SYMBOLS]) -> [u8; BLOCK_BYTES] {
    let w = permute(&v.inverse, load256(symbols));
    let mut r = _mm256_set_epi64x(w[3] as i64, w[2] as i64, w[1] as i64, w[0] as i64);
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
