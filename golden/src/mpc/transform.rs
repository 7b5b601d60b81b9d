//! Spec stages 1..4, written literally after `docs/spec/mpc.md`: prediction,
//! residues, bit-planes, XOR with the upper plane, and the per-model reorder
//! into 16 symbols, plus their inverses. Slow and obvious on purpose; the
//! table-driven [`super::fast`] codec is tested against these.

use bitvec::prelude::*;

use super::model::{ByteRule, Predictor};
use super::{BLOCK_BYTES, PLANES, STREAM_BITS, SYMBOLS};

/// The 256-bit transformed stream, bit 0 first.
pub type Stream = BitArr!(for STREAM_BITS, in u64, Msb0);

/// Stage 1a: each byte's prediction from the original block.
pub fn predictions(block: &[u8; BLOCK_BYTES], p: &Predictor) -> [u8; BLOCK_BYTES] {
    std::array::from_fn(|i| p.bytes[i].predict(block))
}

/// Stage 1b: residue = value - prediction (mod 256).
pub fn residues(block: &[u8; BLOCK_BYTES], pred: &[u8; BLOCK_BYTES]) -> [u8; BLOCK_BYTES] {
    std::array::from_fn(|i| block[i].wrapping_sub(pred[i]))
}

/// Stage 2a: bit-plane `p` holds bit `p` of every residue; its bit `j` is
/// residue `j`.
pub fn planes(res: &[u8; BLOCK_BYTES]) -> [u32; PLANES] {
    std::array::from_fn(|p| {
        (0..BLOCK_BYTES).fold(0u32, |acc, j| acc | ((((res[j] >> p) & 1) as u32) << j))
    })
}

/// Stage 2b: every plane XOR the plane above it; the top plane is kept.
pub fn xor_planes(planes: &[u32; PLANES]) -> [u32; PLANES] {
    std::array::from_fn(|p| {
        if p == PLANES - 1 {
            planes[p]
        } else {
            planes[p] ^ planes[p + 1]
        }
    })
}

/// Natural stream index of plane `p`, column `j`: the top plane first.
#[inline]
pub fn natural_index(p: usize, j: usize) -> usize {
    32 * (PLANES - 1 - p) + j
}

/// Stage 3: natural stream, then `out[o] = natural[reorder[o]]`.
pub fn reorder(xored: &[u32; PLANES], reorder: &[u8; STREAM_BITS]) -> Stream {
    let mut natural = Stream::ZERO;
    for (p, plane) in xored.iter().enumerate() {
        for j in 0..BLOCK_BYTES {
            natural.set(natural_index(p, j), (plane >> j) & 1 == 1);
        }
    }
    let mut out = Stream::ZERO;
    for o in 0..STREAM_BITS {
        out.set(o, natural[reorder[o] as usize]);
    }
    out
}

/// Stage 4: 16 symbols of 16 bits; the symbol's first stream bit is its MSB.
pub fn symbols(stream: &Stream) -> [u16; SYMBOLS] {
    std::array::from_fn(|m| stream[16 * m..16 * m + 16].load_be::<u16>())
}

/// Inverse of stage 4.
pub fn stream_from_symbols(symbols: &[u16; SYMBOLS]) -> Stream {
    let mut s = Stream::ZERO;
    for (m, &v) in symbols.iter().enumerate() {
        s[16 * m..16 * m + 16].store_be::<u16>(v);
    }
    s
}

/// Inverse of stage 3: back to the XORed planes.
pub fn unreorder(stream: &Stream, reorder: &[u8; STREAM_BITS]) -> [u32; PLANES] {
    let mut natural = Stream::ZERO;
    for o in 0..STREAM_BITS {
        natural.set(reorder[o] as usize, stream[o]);
    }
    std::array::from_fn(|p| {
        (0..BLOCK_BYTES).fold(0u32, |acc, j| {
            acc | ((natural[natural_index(p, j)] as u32) << j)
        })
    })
}

/// Inverse of stage 2b: from the top plane down.
pub fn unxor_planes(xored: &[u32; PLANES]) -> [u32; PLANES] {
    let mut planes = [0u32; PLANES];
    planes[PLANES - 1] = xored[PLANES - 1];
    for p in (0..PLANES - 1).rev() {
        planes[p] = xored[p] ^ planes[p + 1];
    }
    planes
}

/// Inverse of stage 2a.
pub fn residues_from_planes(planes: &[u32; PLANES]) -> [u8; BLOCK_BYTES] {
    std::array::from_fn(|j| {
        (0..PLANES).fold(0u8, |acc, p| acc | ((((planes[p] >> j) & 1) as u8) << p))
    })
}

/// Inverse of stage 1: restore bytes along the base trees (roots first, then
/// each byte once its base is known).
pub fn restore(res: &[u8; BLOCK_BYTES], p: &Predictor) -> [u8; BLOCK_BYTES] {
    let mut out = [0u8; BLOCK_BYTES];
    for &i in &restore_order(p) {
        out[i] = res[i].wrapping_add(p.bytes[i].predict(&out));
    }
    out
}

/// Byte positions ordered by depth in the base trees (roots first, ties by
/// position): every byte comes after its base.
pub fn restore_order(p: &Predictor) -> [usize; BLOCK_BYTES] {
    let depth = |mut i: usize| {
        let mut d = 0;
        while let ByteRule::Base { base, .. } = p.bytes[i] {
            i = base as usize;
            d += 1;
        }
        d
    };
    let mut order: [usize; BLOCK_BYTES] = std::array::from_fn(|i| i);
    order.sort_by_key(|&i| (depth(i), i));
    order
}
