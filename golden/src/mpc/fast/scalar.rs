//! Portable kernels of the fast codec (any target; the reference for the
//! SIMD kernels, which must give identical results).

use super::super::{BLOCK_BYTES, SYMBOLS};
use super::benes::{self, GROUP_STAGES, STAGES};
use super::tables::{from_lanes, lanes, Bits256, PredictorTables};

/// Stages 1-4 up to the order of bits inside each symbol: the symbols with
/// their bits not yet in place (finish with [`finish`]) and their zero mask
/// (bit m set when symbol m is zero).
pub(crate) fn grouped(t: &PredictorTables, block: &[u8; BLOCK_BYTES]) -> ([u16; SYMBOLS], u16) {
    let mut ext = [0u8; BLOCK_BYTES + 1];
    ext[..BLOCK_BYTES].copy_from_slice(block);
    const H: u64 = 0x8080_8080_8080_8080;
    let mut gray = [0u64; 4];
    for (c, (xb, g)) in block.chunks_exact(8).zip(gray.iter_mut()).enumerate() {
        let mut y = 0u64;
        for k in 0..8 {
            let j = 8 * c + k;
            let v = ext[t.pred_base[j] as usize] as u32;
            let pred = ((v * t.pred_mul[j] as u32) >> 8) & 0xff;
            y |= (pred as u64) << (8 * k);
        }
        let mut a = [0u8; 8];
        a.copy_from_slice(xb);
        let x = u64::from_le_bytes(a);
        // byte-wise wrapping x - y, then the per-byte Gray code
        let r = ((x | H) - (y & !H)) ^ ((x ^ !y) & H);
        *g = r ^ ((r >> 1) & 0x7f7f_7f7f_7f7f_7f7f);
    }
    let s = lanes(&benes::apply_stages(&t.forward, 0..GROUP_STAGES, gray));
    let mut zero_mask = 0u16;
    for (m, &v) in s.iter().enumerate() {
        zero_mask |= ((v == 0) as u16) << m;
    }
    (s, zero_mask)
}

/// The symbols from [`grouped`]'s output.
pub(crate) fn finish(t: &PredictorTables, grouped: &[u16; SYMBOLS]) -> [u16; SYMBOLS] {
    lanes(&benes::apply_stages(
        &t.forward,
        GROUP_STAGES..STAGES,
        from_lanes(grouped),
    ))
}

/// Stages 4-1 inverted: symbols -> block, restoring every byte after its
/// base.
pub(crate) fn restore(t: &PredictorTables, symbols: &[u16; SYMBOLS]) -> [u8; BLOCK_BYTES] {
    let gray: Bits256 = benes::apply(&t.inverse, from_lanes(symbols));
    let mut out = [0u8; BLOCK_BYTES];
    for &j in &t.order {
        let mut r = (gray[j / 8] >> (8 * (j % 8))) as u8;
        r ^= r >> 1;
        r ^= r >> 2;
        r ^= r >> 4;
        let pred = match t.rules[j] {
            None => 0,
            Some((b, k)) => super::super::model::shift_byte(out[b as usize], k),
        };
        out[j] = r.wrapping_add(pred);
    }
    out
}
