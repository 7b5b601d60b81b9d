//! AVX-512 kernels of the fast codec (x86-64 CPUs with AVX-512 VBMI and
//! BITALG, chosen at run time; identical results to [`super::scalar`],
//! checked by tests).
//!
//! The whole reorder (all 15 stages of the Beneš network of [`super::avx2`])
//! is four byte gathers and four bit shuffles: for each 64 output bits, a
//! byte permutation (`vpermb`) puts in byte b of a 512-bit register the
//! source byte holding output bit b, and a bit shuffle (`vpshufbitqmb`)
//! picks from each 64-bit word the eight bits its eight outputs need.
//! Prediction works on 16-bit lanes, byte j of the block in the high byte
//! of lane j (the low byte zero): one masked byte permutation gathers the
//! bases (roots read zero), one `vpmultishiftqb` takes from each lane the
//! eight bits at offset `8 - k`, which is the base shifted by k either way.
//! Restoration stays in that form for all its rounds (two permutations, a
//! multishift and a masked add each). The Table-1 code of every symbol is
//! computed for all 16 lanes at once ([`codes`]).
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
    /// Byte `2j + 1`: the base of byte j in a block of 32 bytes.
    gather: [u8; 64],
    /// Byte `2j + 1`: the base of byte j in the 16-bit form (`2 base + 1`).
    gather16: [u8; 64],
    /// Byte `2j + 1`: offset of the shifted base in its 64-bit word
    /// (`16 (j % 4) + 8 - k`).
    ctrl: [u8; 64],
    forward: Shuffle,
    inverse: Shuffle,
    /// Bit `2j + 1` set when byte j has a base.
    has_base: u64,
}

/// The odd bytes (the high bytes of the 16-bit lanes).
const ODD: u64 = 0xaaaa_aaaa_aaaa_aaaa;

/// Byte `2j + 1` reads byte j (block -> 16-bit form).
const SPREAD: [u8; 64] = {
    let mut t = [0u8; 64];
    let mut j = 0;
    while j < 32 {
        t[2 * j + 1] = j as u8;
        j += 1;
    }
    t
};

/// Byte j reads byte `2j + 1` (16-bit form -> block, in the low half).
const COMPACT: [u8; 64] = {
    let mut t = [0u8; 64];
    let mut j = 0;
    while j < 32 {
        t[j] = (2 * j + 1) as u8;
        j += 1;
    }
    t
};

impl Vectors {
    pub(crate) fn new(t: &PredictorTables) -> Self {
        let mut v = Vectors {
            gather: [0; 64],
            gather16: [0; 64],
            ctrl: [0; 64],
            forward: Shuffle::new(&t.fwd_src),
            inverse: Shuffle::new(&t.inv_src),
            has_base: 0,
        };
        for (j, r) in t.rules.iter().enumerate() {
            let k = match *r {
                Some((b, k)) => {
                    v.gather[2 * j + 1] = b;
                    v.gather16[2 * j + 1] = 2 * b + 1;
                    v.has_base |= 1 << (2 * j + 1);
                    k as i32
                }
                None => 0,
            };
            // bits [8 - k, 16 - k) of the lane `base << 8` are
            // `shift_byte(base, k)`; the bits below the lane's high byte
            // and those of the next lane's low byte (or, past bit 63, of
            // the first lane's: the offset wraps) are zero
            v.ctrl[2 * j + 1] = ((16 * (j % 4)) as i32 + 8 - k).rem_euclid(64) as u8;
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
    let g =
        _mm512_maskz_permutexvar_epi8(v.has_base, load512(&v.gather), _mm512_castsi256_si512(x));
    let p = _mm512_multishift_epi64_epi8(load512(&v.ctrl), g);
    _mm512_castsi512_si256(_mm512_permutexvar_epi8(load512(&COMPACT), p))
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
    // the residues in the 16-bit form, then the rounds in that form
    let r16 = _mm512_maskz_permutexvar_epi8(ODD, load512(&SPREAD), _mm512_castsi256_si512(r));
    let (gather, ctrl) = (load512(&v.gather16), load512(&v.ctrl));
    let mut out = r16;
    for _ in 0..depth {
        let g = _mm512_maskz_permutexvar_epi8(v.has_base, gather, out);
        out = _mm512_maskz_add_epi8(ODD, r16, _mm512_multishift_epi64_epi8(ctrl, g));
    }
    let out = _mm512_castsi512_si256(_mm512_permutexvar_epi8(load512(&COMPACT), out));
    let mut bytes = [0u8; BLOCK_BYTES];
    // SAFETY: 32 writable bytes; unaligned store.
    unsafe { _mm256_storeu_si256(bytes.as_mut_ptr() as *mut __m256i, out) };
    bytes
}

/// The Table-1 field of every symbol (bit m of `zero_mask` set iff symbol
/// m is zero), as [`super::emit::put_symbols`] writes them: a nonzero
/// symbol's code, a run's codes on the zero symbol that starts it, nothing
/// on the other zero symbols. Returns the fields' bits and lengths.
#[inline]
#[target_feature(enable = "avx2,avx512f,avx512bw,avx512vl,avx512cd,avx512vpopcntdq")]
pub(crate) fn codes(symbols: &[u16; SYMBOLS], zero_mask: u16) -> ([u32; SYMBOLS], [u32; SYMBOLS]) {
    let c = _mm512_set1_epi32;
    let s = _mm512_cvtepu16_epi32(load256(symbols));
    let ones = _mm512_popcnt_epi32(s);
    let lead = _mm512_sub_epi32(_mm512_lzcnt_epi32(s), c(16));
    // the nonzero codes in the order of the spec's priority, last wins
    let mut val = _mm512_or_si512(s, c(1 << 16));
    let mut len = c(17);
    let front = _mm512_testn_epi32_mask(s, c(0x00ff));
    val = _mm512_mask_mov_epi32(
        val,
        front,
        _mm512_or_si512(_mm512_srli_epi32::<8>(s), c(0x200)),
    );
    len = _mm512_mask_mov_epi32(len, front, c(12));
    let back = _mm512_testn_epi32_mask(s, c(0xff00));
    val = _mm512_mask_mov_epi32(val, back, _mm512_or_si512(s, c(0x100)));
    len = _mm512_mask_mov_epi32(len, back, c(12));
    // two adjacent ones: 0b11 shifted to the symbol's leading one
    let two = _mm512_cmpeq_epi32_mask(s, _mm512_srlv_epi32(c(0xc000), lead));
    val = _mm512_mask_mov_epi32(val, two, lead);
    len = _mm512_mask_mov_epi32(len, two, c(8));
    let one = _mm512_cmpeq_epi32_mask(ones, c(1));
    val = _mm512_mask_mov_epi32(val, one, _mm512_or_si512(lead, c(0x30)));
    len = _mm512_mask_mov_epi32(len, one, c(7));
    // zero symbols: the run length from each lane (the zero symbols up to
    // the next nonzero one, or the end: bit 16 of `!zero_mask` is set)
    let zm = zero_mask as u32;
    let after = _mm512_srlv_epi32(
        c(!zm as i32),
        _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
    );
    let lowest = _mm512_and_si512(after, _mm512_sub_epi32(_mm512_setzero_si512(), after));
    let run = _mm512_sub_epi32(c(31), _mm512_lzcnt_epi32(lowest));
    let starts = (zm & !(zm << 1)) as u16;
    let run_val = _mm512_mask_mov_epi32(
        _mm512_or_si512(run, c(0x20)),
        _mm512_cmpeq_epi32_mask(run, c(1)),
        c(0b0011),
    );
    let run_val = _mm512_mask_mov_epi32(run_val, _mm512_cmpeq_epi32_mask(run, c(16)), c(0x2f3));
    let run_len = _mm512_mask_mov_epi32(c(7), _mm512_cmpeq_epi32_mask(run, c(1)), c(4));
    let run_len = _mm512_mask_mov_epi32(run_len, _mm512_cmpeq_epi32_mask(run, c(16)), c(11));
    val = _mm512_mask_mov_epi32(val, zero_mask, _mm512_maskz_mov_epi32(starts, run_val));
    len = _mm512_mask_mov_epi32(len, zero_mask, _mm512_maskz_mov_epi32(starts, run_len));
    let (mut vals, mut lens) = ([0u32; SYMBOLS], [0u32; SYMBOLS]);
    // SAFETY: 64 writable bytes each; unaligned stores.
    unsafe {
        _mm512_storeu_si512(vals.as_mut_ptr() as *mut __m512i, val);
        _mm512_storeu_si512(lens.as_mut_ptr() as *mut __m512i, len);
    }
    (vals, lens)
}

/// [`super::best_zero_run`] of the first `n` of `masks` (the others zero),
/// all lanes at once: the longest run of ones by binary search on
/// "positions starting a run of at least L ones" (`R(a + b) = R(a) &
/// (R(b) >> a)`), the count by popcount.
#[inline]
#[target_feature(enable = "avx2,avx512f,avx512bw,avx512vl,avx512bitalg")]
pub(crate) fn best_zero_run(masks: &[u16; 32], n: usize) -> usize {
    // SAFETY: 64 readable bytes; unaligned load.
    let x = unsafe { _mm512_loadu_si512(masks.as_ptr() as *const __m512i) };
    let r2 = _mm512_and_si512(x, _mm512_srli_epi16::<1>(x));
    let r4 = _mm512_and_si512(r2, _mm512_srli_epi16::<2>(r2));
    let r8 = _mm512_and_si512(r4, _mm512_srli_epi16::<4>(r4));
    let mut starts = _mm512_set1_epi16(-1);
    let mut len = _mm512_setzero_si512();
    for (r, step) in [(r8, 8), (r4, 4), (r2, 2), (x, 1)] {
        let longer = _mm512_and_si512(starts, _mm512_srlv_epi16(r, len));
        let found = _mm512_test_epi16_mask(longer, longer);
        starts = _mm512_mask_mov_epi16(starts, found, longer);
        len = _mm512_mask_add_epi16(len, found, len, _mm512_set1_epi16(step));
    }
    // all 16 (the search stops at 15)
    let full = _mm512_cmpeq_epi16_mask(x, _mm512_set1_epi16(-1));
    len = _mm512_mask_mov_epi16(len, full, _mm512_set1_epi16(16));
    let key = _mm512_or_si512(_mm512_slli_epi16::<8>(len), _mm512_popcnt_epi16(x));
    let mut keys = [0u16; 32];
    // SAFETY: 64 writable bytes; unaligned store.
    unsafe { _mm512_storeu_si512(keys.as_mut_ptr() as *mut __m512i, key) };
    let mut best = 0;
    for i in 1..n.min(32) {
        if keys[i] > keys[best] {
            best = i;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::super::emit::nonzero_code;
    use super::super::Kernel;
    use super::*;

    /// The keys and the first best equal the portable selection's.
    #[test]
    fn best_zero_run_equals_the_portable_one() {
        if !Kernel::Avx512.available() {
            return;
        }
        // every mask against the all-zero mask and against its neighbour
        for m in 0..=u16::MAX {
            for pair in [
                [0, m],
                [m, 0],
                [m, m.wrapping_add(1)],
                [m.rotate_left(3), m],
            ] {
                let mut masks = [0u16; 32];
                masks[..2].copy_from_slice(&pair);
                let want = super::super::best_zero_run(pair.iter().copied());
                // SAFETY: the CPU has the kernel's features (checked above).
                assert_eq!(
                    unsafe { best_zero_run(&masks, 2) },
                    want,
                    "masks {pair:04x?}"
                );
            }
        }
        let mut masks = [0u16; 32];
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..2000 {
            let n = 1 + (seed % 32) as usize;
            for m in masks.iter_mut().take(n) {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                *m = (seed >> 20) as u16 & (seed >> 40) as u16;
            }
            let want = super::super::best_zero_run(masks[..n].iter().copied());
            // SAFETY: as above.
            assert_eq!(unsafe { best_zero_run(&masks, n) }, want, "{n} masks");
        }
    }

    /// Every nonzero symbol's code and every zero mask's run codes equal
    /// the portable emitter's.
    #[test]
    fn codes_equal_the_portable_ones() {
        if !Kernel::Avx512.available() {
            return;
        }
        for base in (1..=u16::MAX).step_by(16) {
            let symbols: [u16; SYMBOLS] = std::array::from_fn(|m| base.saturating_add(m as u16));
            let zero_mask = 0;
            // SAFETY: the CPU has the kernel's features (checked above).
            let (vals, lens) = unsafe { codes(&symbols, zero_mask) };
            for m in 0..SYMBOLS {
                let (b, l) = nonzero_code(symbols[m]);
                assert_eq!(
                    (vals[m] as u64, lens[m]),
                    (b, l),
                    "symbol {:#06x}",
                    symbols[m]
                );
            }
        }
        for zero_mask in 0..=u16::MAX {
            let symbols: [u16; SYMBOLS] =
                std::array::from_fn(|m| if (zero_mask >> m) & 1 == 1 { 0 } else { 0x1234 });
            // SAFETY: as above.
            let (vals, lens) = unsafe { codes(&symbols, zero_mask) };
            let zm = zero_mask as u32;
            for m in 0..SYMBOLS {
                let want = if (zm >> m) & 1 == 0 {
                    nonzero_code(0x1234)
                } else if m == 0 || (zm >> (m - 1)) & 1 == 0 {
                    super::super::emit::run_code((!zm >> m).trailing_zeros())
                } else {
                    (0, 0)
                };
                assert_eq!(
                    (vals[m] as u64, lens[m]),
                    want,
                    "mask {zero_mask:#06x} lane {m}"
                );
            }
        }
    }
}
