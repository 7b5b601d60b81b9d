//! Frequent Pattern Compression (Alameldeen and Wood, UW-Madison CS TR-1500,
//! 2004, Table 1), per block of 32-bit words (`docs/spec/baselines.md`, FPC).
//!
//! Format: a 1-bit flag (`0`: the raw block follows), then per word (or run
//! of zero words) a 3-bit prefix and its data:
//!
//! | prefix | pattern | data bits |
//! |---|---|---|
//! | 000 | run of 1..8 zero words | 3 (run - 1) |
//! | 001 | 4-bit sign-extended | 4 |
//! | 010 | one byte sign-extended | 8 |
//! | 011 | halfword sign-extended | 16 |
//! | 100 | halfword padded with a zero halfword (low half zero) | 16 |
//! | 101 | two halfwords, each a sign-extended byte | 16 |
//! | 110 | word of four repeated bytes | 8 |
//! | 111 | uncompressed word | 32 |

use super::{
    check_len, flagged, from_words32, read_flag, words32, BlockCodec, Compressed, ConfigError,
    DecodeError, Reader, VecBitWriter,
};

const NAME: &str = "FPC";
pub const PREFIX_BITS: u32 = 3;
/// Longest zero run one code holds.
pub const MAX_ZERO_RUN: usize = 8;

#[derive(Clone, Debug)]
pub struct Fpc {
    block: usize,
}

impl Fpc {
    pub fn new(block_bytes: usize) -> Result<Fpc, ConfigError> {
        let block_bytes = super::check_block_size(NAME, block_bytes)?;
        Ok(Fpc { block: block_bytes })
    }
}

fn sext16_fits8(h: u16) -> bool {
    (-128..128).contains(&(h as i16))
}

/// The (prefix, data, data width) of one nonzero word: the shortest
/// pattern, lower prefix on a tie.
pub fn pattern(w: u32) -> (u64, u64, u32) {
    let b = w.to_le_bytes();
    if super::sext_fits(w, 4) {
        (0b001, (w & 0xf) as u64, 4)
    } else if super::sext_fits(w, 8) {
        (0b010, (w & 0xff) as u64, 8)
    } else if b.iter().all(|&x| x == b[0]) {
        (0b110, b[0] as u64, 8)
    } else if super::sext_fits(w, 16) {
        (0b011, (w & 0xffff) as u64, 16)
    } else if w & 0xffff == 0 {
        (0b100, (w >> 16) as u64, 16)
    } else if sext16_fits8(w as u16) && sext16_fits8((w >> 16) as u16) {
        (0b101, (((w >> 16) & 0xff) << 8 | (w & 0xff)) as u64, 16)
    } else {
        (0b111, w as u64, 32)
    }
}

impl BlockCodec for Fpc {
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
        let mut i = 0;
        while i < words.len() {
            if words[i] == 0 {
                let run = words[i..]
                    .iter()
                    .take(MAX_ZERO_RUN)
                    .take_while(|&&x| x == 0)
                    .count();
                w.put(0b000, PREFIX_BITS);
                w.put(run as u64 - 1, 3);
                i += run;
            } else {
                let (p, data, width) = pattern(words[i]);
                w.put(p, PREFIX_BITS);
                w.put(data, width);
                i += 1;
            }
        }
        flagged(block, Some(w))
    }

    fn decompress(&self, bits: &[u8], len: usize) -> Result<Vec<u8>, DecodeError> {
        let mut r = Reader::new(NAME, bits, len)?;
        if let Some(raw) = read_flag(&mut r, self.block)? {
            return Ok(raw);
        }
        let n = self.block / 4;
        let mut words = Vec::with_capacity(n);
        while words.len() < n {
            let at = r.pos();
            let p = r.get(PREFIX_BITS)?;
            match p {
                0b000 => {
                    let run = r.get(3)? as usize + 1;
                    if words.len() + run > n {
                        return Err(DecodeError::Invalid {
                            codec: NAME,
                            what: format!("zero run of {run} words overflows the block"),
                            at,
                        });
                    }
                    words.extend(std::iter::repeat_n(0, run));
                }
                0b001 => words.push(super::sext32(r.get(4)?, 4)),
                0b010 => words.push(super::sext32(r.get(8)?, 8)),
                0b011 => words.push(super::sext32(r.get(16)?, 16)),
                0b100 => words.push((r.get(16)? as u32) << 16),
                0b101 => {
                    let v = r.get(16)?;
                    let hi = super::sext32(v >> 8, 8) & 0xffff;
                    let lo = super::sext32(v & 0xff, 8) & 0xffff;
                    words.push(hi << 16 | lo);
                }
                0b110 => words.push((r.get(8)? as u32).wrapping_mul(0x0101_0101)),
                _ => words.push(r.get(32)? as u32),
            }
        }
        r.finish()?;
        Ok(from_words32(&words))
    }
}
