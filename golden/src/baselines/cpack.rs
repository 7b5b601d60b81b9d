//! C-Pack (Chen, Yang, Dick, Shang and Lekatsas, IEEE TVLSI 18(8), 2010,
//! Table I pattern codes), per block of 32-bit words with a per-block
//! dictionary (`docs/spec/baselines.md`, C-Pack).
//!
//! Format: a 1-bit flag (`0`: the raw block follows), then per word:
//!
//! | code | pattern | bits |
//! |---|---|---|
//! | 00 | zzzz: zero word | 2 |
//! | 01 | xxxx: unmatched, 32 raw bits | 34 |
//! | 10 | mmmm: full dictionary match, 4-bit index | 6 |
//! | 1100 | mmxx: upper 2 bytes match, index + low 16 bits | 24 |
//! | 1101 | zzzx: upper 3 bytes zero, low 8 bits | 12 |
//! | 1110 | mmmx: upper 3 bytes match, index + low 8 bits | 16 |
//!
//! The dictionary starts empty for every block, holds 16 words (FIFO:
//! the oldest is replaced), and takes every word coded xxxx, mmxx or mmmx
//! after it is coded. Indices are always 4 bits.

use super::{
    check_len, flagged, from_words32, read_flag, words32, BlockCodec, Compressed, ConfigError,
    DecodeError, Reader, VecBitWriter,
};

const NAME: &str = "C-Pack";
pub const DICT_ENTRIES: usize = 16;
pub const INDEX_BITS: u32 = 4;

#[derive(Clone, Debug)]
pub struct CPack {
    block: usize,
}

impl CPack {
    pub fn new(block_bytes: usize) -> Result<CPack, ConfigError> {
        let block_bytes = super::check_block_size(NAME, block_bytes)?;
        Ok(CPack { block: block_bytes })
    }
}

/// A FIFO dictionary of up to 16 words.
#[derive(Default)]
struct Dict {
    entries: Vec<u32>,
    next: usize,
}

impl Dict {
    fn push(&mut self, w: u32) {
        if self.entries.len() < DICT_ENTRIES {
            self.entries.push(w);
        } else {
            self.entries[self.next] = w;
            self.next = (self.next + 1) % DICT_ENTRIES;
        }
    }

    /// Best match: (index, matching upper bytes 4/3/2), longest first, the
    /// lowest index on a tie.
    fn best(&self, w: u32) -> Option<(usize, u32)> {
        for (bytes, m) in [(4u32, 0xffff_ffffu32), (3, 0xffff_ff00), (2, 0xffff_0000)] {
            if let Some(i) = self.entries.iter().position(|&e| e & m == w & m) {
                return Some((i, bytes));
            }
        }
        None
    }
}

impl BlockCodec for CPack {
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
        let mut dict = Dict::default();
        let mut w = VecBitWriter::new();
        for word in words32(block) {
            if word == 0 {
                w.put(0b00, 2);
                continue;
            }
            let m = dict.best(word);
            match m {
                Some((i, 4)) => {
                    w.put(0b10, 2);
                    w.put(i as u64, INDEX_BITS);
                }
                _ if word & 0xffff_ff00 == 0 => {
                    w.put(0b1101, 4);
                    w.put(word as u64 & 0xff, 8);
                }
                Some((i, 3)) => {
                    w.put(0b1110, 4);
                    w.put(i as u64, INDEX_BITS);
                    w.put(word as u64 & 0xff, 8);
                    dict.push(word);
                }
                Some((i, _)) => {
                    w.put(0b1100, 4);
                    w.put(i as u64, INDEX_BITS);
                    w.put(word as u64 & 0xffff, 16);
                    dict.push(word);
                }
                None => {
                    w.put(0b01, 2);
                    w.put(word as u64, 32);
                    dict.push(word);
                }
            }
        }
        flagged(block, Some(w))
    }

    fn decompress(&self, bits: &[u8], len: usize) -> Result<Vec<u8>, DecodeError> {
        let mut r = Reader::new(NAME, bits, len)?;
        if let Some(raw) = read_flag(&mut r, self.block)? {
            return Ok(raw);
        }
        let mut dict = Dict::default();
        let n = self.block / 4;
        let mut words = Vec::with_capacity(n);
        let index = |r: &mut Reader<'_>, dict: &Dict| -> Result<u32, DecodeError> {
            let at = r.pos();
            let i = r.get(INDEX_BITS)? as usize;
            dict.entries
                .get(i)
                .copied()
                .ok_or_else(|| DecodeError::Invalid {
                    codec: NAME,
                    what: format!(
                        "dictionary index {i} but only {} entries",
                        dict.entries.len()
                    ),
                    at,
                })
        };
        while words.len() < n {
            let at = r.pos();
            match r.get(2)? {
                0b00 => words.push(0),
                0b01 => {
                    let v = r.get(32)? as u32;
                    dict.push(v);
                    words.push(v);
                }
                0b10 => words.push(index(&mut r, &dict)?),
                _ => match r.get(2)? {
                    0b00 => {
                        let e = index(&mut r, &dict)?;
                        let v = e & 0xffff_0000 | r.get(16)? as u32;
                        dict.push(v);
                        words.push(v);
                    }
                    0b01 => words.push(r.get(8)? as u32),
                    0b10 => {
                        let e = index(&mut r, &dict)?;
                        let v = e & 0xffff_ff00 | r.get(8)? as u32;
                        dict.push(v);
                        words.push(v);
                    }
                    c => {
                        return Err(DecodeError::BadCode {
                            codec: NAME,
                            code: 0b1100 | c as u32,
                            at,
                        })
                    }
                },
            }
        }
        r.finish()?;
        Ok(from_words32(&words))
    }
}
