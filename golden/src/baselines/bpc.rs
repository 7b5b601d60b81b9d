//! Bit-Plane Compression (Kim, Sullivan, Choukse and Erez, ISCA 2016,
//! Fig. 4 transform and Table 2 symbol codes), for 32- and 128-byte blocks
//! (`docs/spec/baselines.md`, BPC).
//!
//! Transform: the block's `n` little-endian 32-bit words (as signed
//! integers); the first is the base, the `m = n - 1` deltas
//! `w[i] - w[i-1]` are 33-bit two's complement values. DBP plane `p`
//! (p = 0..=32) is bit `p` of every delta, an `m`-bit symbol (delta 1 in
//! its most significant bit). DBX[32] = DBP[32], DBX[p] = DBP[p] ^ DBP[p+1].
//!
//! Format: a 1-bit flag (`0`: raw block follows), the base word code, then
//! the 33 DBX symbols from plane 32 down to plane 0:
//!
//! | code | meaning | bits |
//! |---|---|---|
//! | 01 | one zero DBX symbol | 2 |
//! | 001 + 5 bits | run of 2..=33 zero DBX symbols (run - 2) | 8 |
//! | 00000 | DBX all ones | 5 |
//! | 00001 | DBX != 0 but DBP == 0 (so DBX = DBP[p+1]) | 5 |
//! | 00010 + pos | two consecutive ones, the first at `pos` | 5 + P |
//! | 00011 + pos | a single one at `pos` | 5 + P |
//! | 1 + m bits | uncompressed DBX | 1 + m |
//!
//! `pos` counts from the symbol's most significant bit, `P = ceil(log2 m)`
//! bits (3 for 32-byte blocks, 5 for 128-byte blocks).
//! Base word: `000` zero, `001` + 4-bit, `010` + 8-bit, `011` + 16-bit
//! sign-extended, `1` + 32 raw bits.

use super::{
    check_len, flagged, from_words32, read_flag, words32, BlockCodec, Compressed, ConfigError,
    DecodeError, Reader, VecBitWriter,
};

const NAME: &str = "BPC";
/// Planes of a 33-bit delta.
pub const PLANES: usize = 33;

#[derive(Clone, Debug)]
pub struct Bpc {
    block: usize,
    /// Deltas per block (symbol width).
    m: u32,
    /// Position field width.
    pos_bits: u32,
}

impl Bpc {
    pub fn new(block_bytes: usize) -> Result<Bpc, ConfigError> {
        let block_bytes = super::check_block_size(NAME, block_bytes)?;
        let m = (block_bytes / 4 - 1) as u32;
        Ok(Bpc {
            block: block_bytes,
            m,
            pos_bits: 32 - (m - 1).leading_zeros(),
        })
    }

    fn all_ones(&self) -> u64 {
        (1u64 << self.m) - 1
    }

    /// DBP planes 0..=32 of a block.
    pub fn dbp(&self, words: &[u32]) -> [u64; PLANES] {
        let mut dbp = [0u64; PLANES];
        for i in 1..words.len() {
            let d = (words[i] as i32 as i64) - (words[i - 1] as i32 as i64);
            let bit = self.m as usize - i; // delta 1 in the MSB of the symbol
            for (p, plane) in dbp.iter_mut().enumerate() {
                *plane |= (((d >> p) & 1) as u64) << bit;
            }
        }
        dbp
    }
}

impl BlockCodec for Bpc {
    fn name(&self) -> &str {
        NAME
    }

    fn block_bytes(&self) -> usize {
        self.block
    }

    fn max_bits(&self) -> usize {
        1 + 8 * self.block
    }

    fn compress(&self, block: &[u8]) -> Compressed {
        check_len(NAME, block, self.block);
        let words = words32(block);
        let mut w = VecBitWriter::new();
        let base = words[0];
        if base == 0 {
            w.put(0b000, 3);
        } else if super::sext_fits(base, 4) {
            w.put(0b001, 3);
            w.put(base as u64 & 0xf, 4);
        } else if super::sext_fits(base, 8) {
            w.put(0b010, 3);
            w.put(base as u64 & 0xff, 8);
        } else if super::sext_fits(base, 16) {
            w.put(0b011, 3);
            w.put(base as u64 & 0xffff, 16);
        } else {
            w.put(1, 1);
            w.put(base as u64, 32);
        }
        let dbp = self.dbp(&words);
        let dbx = |p: usize| {
            if p == PLANES - 1 {
                dbp[p]
            } else {
                dbp[p] ^ dbp[p + 1]
            }
        };
        let mut p = PLANES as isize - 1;
        while p >= 0 {
            let x = dbx(p as usize);
            if x == 0 {
                let mut run = 1;
                while p - run >= 0 && dbx((p - run) as usize) == 0 {
                    run += 1;
                }
                if run == 1 {
                    w.put(0b01, 2);
                } else {
                    w.put(0b001, 3);
                    w.put(run as u64 - 2, 5);
                }
                p -= run;
                continue;
            }
            if x == self.all_ones() {
                w.put(0b00000, 5);
            } else if dbp[p as usize] == 0 {
                w.put(0b00001, 5);
            } else if x.count_ones() == 2 && (x & (x >> 1)) != 0 {
                w.put(0b00010, 5);
                w.put((x.leading_zeros() - (64 - self.m)) as u64, self.pos_bits);
            } else if x.count_ones() == 1 {
                w.put(0b00011, 5);
                w.put((x.leading_zeros() - (64 - self.m)) as u64, self.pos_bits);
            } else {
                w.put(1, 1);
                w.put(x, self.m);
            }
            p -= 1;
        }
        flagged(block, Some(w))
    }

    fn decompress(&self, bits: &[u8], len: usize) -> Result<Vec<u8>, DecodeError> {
        let mut r = Reader::new(NAME, bits, len)?;
        if let Some(raw) = read_flag(&mut r, self.block)? {
            return Ok(raw);
        }
        let base = if r.get(1)? == 1 {
            r.get(32)? as u32
        } else {
            match r.get(2)? {
                0 => 0,
                1 => super::sext32(r.get(4)?, 4),
                2 => super::sext32(r.get(8)?, 8),
                _ => super::sext32(r.get(16)?, 16),
            }
        };
        let mut dbp = [0u64; PLANES];
        let mut p = PLANES as isize - 1;
        let upper = |dbp: &[u64; PLANES], p: isize| {
            if p as usize == PLANES - 1 {
                0
            } else {
                dbp[p as usize + 1]
            }
        };
        while p >= 0 {
            let at = r.pos();
            let x;
            if r.get(1)? == 1 {
                x = r.get(self.m)?;
            } else if r.get(1)? == 1 {
                x = 0;
            } else if r.get(1)? == 1 {
                let run = r.get(5)? as isize + 2;
                if run > p + 1 {
                    return Err(DecodeError::Invalid {
                        codec: NAME,
                        what: format!("zero run of {run} planes overflows at plane {p}"),
                        at,
                    });
                }
                for _ in 0..run {
                    dbp[p as usize] = upper(&dbp, p);
                    p -= 1;
                }
                continue;
            } else {
                let pos_of = |r: &mut Reader<'_>| -> Result<u32, DecodeError> {
                    let at = r.pos();
                    let pos = r.get(self.pos_bits)? as u32;
                    if pos >= self.m {
                        return Err(DecodeError::Invalid {
                            codec: NAME,
                            what: format!("position {pos} >= symbol width {}", self.m),
                            at,
                        });
                    }
                    Ok(pos)
                };
                match r.get(2)? {
                    0b00 => x = self.all_ones(),
                    0b01 => {
                        // DBP[p] == 0, so DBX[p] = DBP[p+1].
                        dbp[p as usize] = 0;
                        p -= 1;
                        continue;
                    }
                    0b10 => {
                        let pos = pos_of(&mut r)?;
                        if pos + 1 >= self.m {
                            return Err(DecodeError::Invalid {
                                codec: NAME,
                                what: format!("two-ones position {pos} at the last bit"),
                                at,
                            });
                        }
                        x = 0b11 << (self.m - 2 - pos);
                    }
                    _ => {
                        let pos = pos_of(&mut r)?;
                        x = 1 << (self.m - 1 - pos);
                    }
                }
            }
            dbp[p as usize] = x ^ upper(&dbp, p);
            p -= 1;
        }
        r.finish()?;
        let mut words = vec![base; self.block / 4];
        for i in 1..words.len() {
            let bit = self.m as usize - i;
            let mut d: i64 = 0;
            for (pl, plane) in dbp.iter().enumerate() {
                d |= (((plane >> bit) & 1) as i64) << pl;
            }
            // Sign-extend the 33-bit delta.
            d = (d << 31) >> 31;
            words[i] = (words[i - 1] as i64).wrapping_add(d) as u32;
        }
        Ok(from_words32(&words))
    }
}
