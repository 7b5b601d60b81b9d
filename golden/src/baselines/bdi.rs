//! Base-Delta-Immediate compression (Pekhimenko et al., PACT 2012), Table 2
//! encodings, for 32- and 128-byte blocks (`docs/spec/baselines.md`, BDI).
//!
//! Format: a 4-bit encoding tag, then
//! * `0` zeros: nothing;
//! * `1` repeated values: the 8-byte value;
//! * `2..=7` base `k` / delta `d` ([`ENCODINGS`]): the explicit base
//!   (`8k` bits), one selector bit per value (`0` = implicit zero base,
//!   `1` = explicit base), then every value's signed delta (`8d` bits);
//! * `15` uncompressed: the raw block.
//!
//! Values are little-endian `k`-byte words; deltas are two's complement
//! modulo `2^(8k)` and must fit a signed `d`-byte field. The explicit base
//! is the first value that does not fit the zero base (or 0 when all do).

use super::{check_len, BlockCodec, Compressed, ConfigError, DecodeError, Reader, VecBitWriter};

const NAME: &str = "BDI";
/// Encoding tag width.
pub const TAG_BITS: u32 = 4;
pub const TAG_ZEROS: u64 = 0;
pub const TAG_REPEATED: u64 = 1;
pub const TAG_RAW: u64 = 15;
/// (tag, base bytes k, delta bytes d) in the paper's Table 2 order.
pub const ENCODINGS: [(u64, usize, usize); 6] = [
    (2, 8, 1),
    (3, 8, 2),
    (4, 8, 4),
    (5, 4, 1),
    (6, 4, 2),
    (7, 2, 1),
];

/// The BDI codec for one block size.
#[derive(Clone, Debug)]
pub struct Bdi {
    block: usize,
}

impl Bdi {
    pub fn new(block_bytes: usize) -> Result<Bdi, ConfigError> {
        let block_bytes = super::check_block_size(NAME, block_bytes)?;
        Ok(Bdi { block: block_bytes })
    }
}

fn value(block: &[u8], k: usize, i: usize) -> u64 {
    let mut b = [0u8; 8];
    b[..k].copy_from_slice(&block[i * k..i * k + k]);
    u64::from_le_bytes(b)
}

fn mask(bytes: usize) -> u64 {
    if bytes == 8 {
        u64::MAX
    } else {
        (1u64 << (8 * bytes)) - 1
    }
}

/// Does `v` (a `k`-byte value, modulo 2^(8k)) fit a signed `d`-byte field?
fn fits(v: u64, k: usize, d: usize) -> bool {
    let m = mask(k);
    let v = v & m;
    let half = 1u64 << (8 * d - 1);
    // v in [-half, half) modulo 2^(8k).
    v < half || v > m - half
}

/// Sign-extend the low `d` bytes of `v` to `k` bytes.
fn sext(v: u64, k: usize, d: usize) -> u64 {
    let sh = 64 - 8 * d as u32;
    ((((v << sh) as i64) >> sh) as u64) & mask(k)
}

/// Bits of base-delta encoding (k, d), or None when some value fits neither
/// base. Returns (bits, base, selectors, deltas).
fn try_base_delta(block: &[u8], k: usize, d: usize) -> Option<(u64, Vec<bool>, Vec<u64>)> {
    let n = block.len() / k;
    let m = mask(k);
    let mut base = None;
    let mut sel = Vec::with_capacity(n);
    let mut deltas = Vec::with_capacity(n);
    for i in 0..n {
        let v = value(block, k, i);
        if fits(v, k, d) {
            sel.push(false);
            deltas.push(v & mask(d));
            continue;
        }
        let b = *base.get_or_insert(v);
        let delta = v.wrapping_sub(b) & m;
        if !fits(delta, k, d) {
            return None;
        }
        sel.push(true);
        deltas.push(delta & mask(d));
    }
    Some((base.unwrap_or(0), sel, deltas))
}

/// (bits, tag, k, d, base, selectors, deltas) of a base-delta encoding.
type Candidate = (usize, u64, usize, usize, u64, Vec<bool>, Vec<u64>);

fn base_delta_bits(n: usize, k: usize, d: usize) -> usize {
    TAG_BITS as usize + 8 * k + n + n * 8 * d
}

impl BlockCodec for Bdi {
    fn name(&self) -> &str {
        NAME
    }

    fn block_bytes(&self) -> usize {
        self.block
    }

    fn max_bits(&self) -> usize {
        TAG_BITS as usize + 8 * self.block
    }

    fn compress(&self, block: &[u8]) -> Compressed {
        check_len(NAME, block, self.block);
        let mut w = VecBitWriter::new();
        if block.iter().all(|&b| b == 0) {
            w.put(TAG_ZEROS, TAG_BITS);
            return w.finish();
        }
        let first = value(block, 8, 0);
        if (0..self.block / 8).all(|i| value(block, 8, i) == first) {
            w.put(TAG_REPEATED, TAG_BITS);
            w.put(first, 64);
            return w.finish();
        }
        let mut best: Option<Candidate> = None;
        for &(tag, k, d) in &ENCODINGS {
            let bits = base_delta_bits(self.block / k, k, d);
            if best.as_ref().is_some_and(|b| b.0 <= bits) || bits >= self.max_bits() {
                continue;
            }
            if let Some((base, sel, deltas)) = try_base_delta(block, k, d) {
                best = Some((bits, tag, k, d, base, sel, deltas));
            }
        }
        match best {
            Some((_, tag, k, d, base, sel, deltas)) => {
                w.put(tag, TAG_BITS);
                w.put(base, 8 * k as u32);
                for s in &sel {
                    w.put(*s as u64, 1);
                }
                for x in &deltas {
                    w.put(*x, 8 * d as u32);
                }
            }
            None => {
                w.put(TAG_RAW, TAG_BITS);
                w.put_bytes(block);
            }
        }
        w.finish()
    }

    fn decompress(&self, bits: &[u8], len: usize) -> Result<Vec<u8>, DecodeError> {
        let mut r = Reader::new(NAME, bits, len)?;
        let tag = r.get(TAG_BITS)?;
        let out = match tag {
            TAG_ZEROS => vec![0u8; self.block],
            TAG_REPEATED => {
                let v = r.get(64)?;
                (0..self.block / 8).flat_map(|_| v.to_le_bytes()).collect()
            }
            TAG_RAW => r.bytes(self.block)?,
            _ => {
                let &(_, k, d) =
                    ENCODINGS
                        .iter()
                        .find(|e| e.0 == tag)
                        .ok_or(DecodeError::BadCode {
                            codec: NAME,
                            code: tag as u32,
                            at: 0,
                        })?;
                let n = self.block / k;
                let base = r.get(8 * k as u32)?;
                let sel: Vec<u64> = (0..n).map(|_| r.get(1)).collect::<Result<_, _>>()?;
                let mut out = Vec::with_capacity(self.block);
                for s in sel {
                    let delta = sext(r.get(8 * d as u32)?, k, d);
                    let v = if s == 1 {
                        base.wrapping_add(delta) & mask(k)
                    } else {
                        delta
                    };
                    out.extend_from_slice(&v.to_le_bytes()[..k]);
                }
                out
            }
        };
        r.finish()?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fits_signed_ranges() {
        assert!(fits(127, 8, 1));
        assert!(!fits(128, 8, 1));
        assert!(fits(u64::MAX, 8, 1)); // -1
        assert!(fits(u64::MAX - 127, 8, 1)); // -128
        assert!(!fits(u64::MAX - 128, 8, 1)); // -129
        assert!(fits(0xffff_ff80, 4, 1)); // -128 as 4-byte
        assert!(!fits(0xffff_ff7f, 4, 1));
        assert!(fits(0x7fff_ffff, 8, 4));
        assert!(fits(0xffff, 2, 2));
        assert_eq!(sext(0x80, 4, 1), 0xffff_ff80);
    }
}
