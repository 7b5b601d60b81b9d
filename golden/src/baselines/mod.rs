//! Golden models of the baseline block compressors the MPC paper compares
//! against (Jin et al. 2022, section 4, Fig. 5), one module each, all behind
//! the [`BlockCodec`] trait; [`MpcBlockCodec`] adapts the MPC codec to it.
//! The formats are specified in `docs/spec/baselines.md`.
//!
//! Common rules: a compressed block is a bit string, MSB first from byte 0
//! (as in `crate::bits`); each block is coded with no state shared with any
//! other block (random access); no block ever grows beyond its raw size plus
//! a small flag (1 bit for FPC, C-Pack, BPC and SC2, the 4-bit encoding tag
//! for BDI, the model-ID header for MPC); every decoder returns
//! `Result` and never panics on arbitrary input.

pub mod bdi;
pub mod bpc;
pub mod cpack;
pub mod fpc;
pub mod sc2;

use crate::bits::BitReader;
use crate::mpc::{MpcCodec, BLOCK_BYTES};

pub use bdi::Bdi;
pub use bpc::Bpc;
pub use cpack::CPack;
pub use fpc::Fpc;
pub use sc2::Sc2;

/// One compressed block: `len` bits, MSB first from `bytes[0]`; bits past
/// `len` are zero and `bytes.len() == len.div_ceil(8)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Compressed {
    pub bytes: Vec<u8>,
    pub len: usize,
}

impl Compressed {
    /// Size rounded up to whole bytes.
    pub fn byte_len(&self) -> usize {
        self.len.div_ceil(8)
    }
}

/// Why a compressed block could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error("{codec}: truncated at bit {at} of {len}")]
    Truncated {
        codec: &'static str,
        at: usize,
        len: usize,
    },
    #[error("{codec}: {len} bits declared but only {have} bytes given")]
    ShortBuffer {
        codec: &'static str,
        len: usize,
        have: usize,
    },
    #[error("{codec}: invalid code {code:#x} at bit {at}")]
    BadCode {
        codec: &'static str,
        code: u32,
        at: usize,
    },
    #[error("{codec}: {what} at bit {at}")]
    Invalid {
        codec: &'static str,
        what: String,
        at: usize,
    },
    #[error("{codec}: {extra} bits left over after a complete {used}-bit block")]
    TrailingBits {
        codec: &'static str,
        used: usize,
        extra: usize,
    },
    #[error("{codec}: block of {got} bytes, this codec takes {want}-byte blocks")]
    BlockSize {
        codec: &'static str,
        got: usize,
        want: usize,
    },
    #[error("MPC: {0}")]
    Mpc(#[from] crate::mpc::DecodeError),
}

/// Why a codec could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("{codec}: unsupported block size {bytes} bytes ({supported})")]
    BlockSize {
        codec: &'static str,
        bytes: usize,
        supported: &'static str,
    },
    #[error("{0}")]
    Other(String),
}

/// A block compressor with random access: every block on its own.
pub trait BlockCodec: Send + Sync {
    /// Short name for reports (`BDI`, `FPC`, ...).
    fn name(&self) -> &str;
    /// Bytes in one block.
    fn block_bytes(&self) -> usize;
    /// Compress one block of exactly `block_bytes()` bytes. A block of
    /// another size is a caller bug (panics with the sizes).
    fn compress(&self, block: &[u8]) -> Compressed;
    /// Decode `len` bits from `bits` back into one block.
    fn decompress(&self, bits: &[u8], len: usize) -> Result<Vec<u8>, DecodeError>;
    /// Worst-case compressed size in bits (raw plus the flag).
    fn max_bits(&self) -> usize;
}

/// Growable MSB-first bit writer.
#[derive(Clone, Debug, Default)]
pub struct VecBitWriter {
    bytes: Vec<u8>,
    len: usize,
}

impl VecBitWriter {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Append the low `width` (<= 64) bits of `value`, MSB first.
    pub fn put(&mut self, value: u64, width: u32) {
        debug_assert!(width <= 64);
        let v = if width >= 64 {
            value
        } else {
            value & ((1u64 << width) - 1)
        };
        // fill the partial last byte, then whole bytes, then a partial one
        let mut rem = width;
        while rem > 0 {
            let used = (self.len % 8) as u32;
            if used == 0 {
                self.bytes.push(0);
            }
            let free = 8 - used;
            let take = free.min(rem);
            let field = ((v >> (rem - take)) & ((1u64 << take) - 1)) as u8;
            if let Some(last) = self.bytes.last_mut() {
                *last |= field << (free - take);
            }
            self.len += take as usize;
            rem -= take;
        }
    }

    pub fn put_bytes(&mut self, data: &[u8]) {
        if self.len.is_multiple_of(8) {
            self.bytes.extend_from_slice(data);
            self.len += 8 * data.len();
            return;
        }
        for &b in data {
            self.put(b as u64, 8);
        }
    }

    pub fn finish(self) -> Compressed {
        Compressed {
            bytes: self.bytes,
            len: self.len,
        }
    }
}

/// MSB-first bit reader that reports errors with the codec's name.
pub(crate) struct Reader<'a> {
    inner: BitReader<'a>,
    codec: &'static str,
    len: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(
        codec: &'static str,
        bits: &'a [u8],
        len: usize,
    ) -> Result<Self, DecodeError> {
        if len.div_ceil(8) > bits.len() {
            return Err(DecodeError::ShortBuffer {
                codec,
                len,
                have: bits.len(),
            });
        }
        Ok(Reader {
            inner: BitReader::new(bits, len),
            codec,
            len,
        })
    }

    pub(crate) fn pos(&self) -> usize {
        self.inner.position()
    }

    /// Read `width` (<= 64) bits.
    pub(crate) fn get(&mut self, width: u32) -> Result<u64, DecodeError> {
        let at = self.pos();
        let err = DecodeError::Truncated {
            codec: self.codec,
            at,
            len: self.len,
        };
        if width <= 32 {
            return self.inner.get(width).map(u64::from).ok_or(err);
        }
        let hi = self.inner.get(width - 32).ok_or(err.clone())?;
        let lo = self.inner.get(32).ok_or(err)?;
        Ok(((hi as u64) << 32) | lo as u64)
    }

    pub(crate) fn bytes(&mut self, n: usize) -> Result<Vec<u8>, DecodeError> {
        (0..n).map(|_| self.get(8).map(|b| b as u8)).collect()
    }

    /// Error unless every bit was used.
    pub(crate) fn finish(&self) -> Result<(), DecodeError> {
        let extra = self.inner.remaining();
        if extra != 0 {
            return Err(DecodeError::TrailingBits {
                codec: self.codec,
                used: self.pos(),
                extra,
            });
        }
        Ok(())
    }
}

/// Store a block uncompressed behind a 1-bit flag `0`.
pub(crate) fn raw_with_flag(block: &[u8]) -> Compressed {
    let mut w = VecBitWriter::new();
    w.put(0, 1);
    w.put_bytes(block);
    w.finish()
}

/// Choose between a coded stream (flag `1` + stream) and the raw block
/// (flag `0` + bytes): whichever is shorter, raw on a tie.
pub(crate) fn flagged(block: &[u8], stream: Option<VecBitWriter>) -> Compressed {
    match stream {
        Some(s) if s.len() < block.len() * 8 => {
            let mut w = VecBitWriter::new();
            w.put(1, 1);
            let c = s.finish();
            // Append the stream bit by bit (blocks are small).
            let mut r = BitReader::new(&c.bytes, c.len);
            while let Some(b) = r.get(1) {
                w.put(b as u64, 1);
            }
            w.finish()
        }
        _ => raw_with_flag(block),
    }
}

/// Read the 1-bit flag; `Some(block)` when the block is stored raw.
pub(crate) fn read_flag(
    r: &mut Reader<'_>,
    block_bytes: usize,
) -> Result<Option<Vec<u8>>, DecodeError> {
    if r.get(1)? == 0 {
        let b = r.bytes(block_bytes)?;
        r.finish()?;
        Ok(Some(b))
    } else {
        Ok(None)
    }
}

/// Little-endian 32-bit words of a block.
pub(crate) fn words32(block: &[u8]) -> Vec<u32> {
    block
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

pub(crate) fn from_words32(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

pub(crate) fn check_len(codec: &'static str, block: &[u8], want: usize) {
    assert_eq!(
        block.len(),
        want,
        "{codec}: block of {} bytes, codec takes {want}",
        block.len()
    );
}

/// Block sizes (bytes) the word-based baselines accept.
pub const BLOCK_SIZES: [usize; 2] = [32, 128];

/// `bytes` if it is one of [`BLOCK_SIZES`], else the configuration error.
pub(crate) fn check_block_size(codec: &'static str, bytes: usize) -> Result<usize, ConfigError> {
    if BLOCK_SIZES.contains(&bytes) {
        Ok(bytes)
    } else {
        Err(ConfigError::BlockSize {
            codec,
            bytes,
            supported: "32 or 128",
        })
    }
}

/// Whether the 32-bit word `w` is a sign-extended `bits`-bit value.
pub(crate) fn sext_fits(w: u32, bits: u32) -> bool {
    let lim = 1i32 << (bits - 1);
    (-lim..lim).contains(&(w as i32))
}

/// Sign-extend the low `bits` bits of `v` to 32 bits.
pub(crate) fn sext32(v: u64, bits: u32) -> u32 {
    let sh = 32 - bits;
    (((v as u32) << sh) as i32 >> sh) as u32
}

/// Adapter: MPC (`MpcCodec`, 32-byte blocks) as a [`BlockCodec`].
pub struct MpcBlockCodec {
    name: String,
    codec: MpcCodec,
}

impl MpcBlockCodec {
    pub fn new(name: impl Into<String>, codec: MpcCodec) -> Self {
        MpcBlockCodec {
            name: name.into(),
            codec,
        }
    }
}

impl BlockCodec for MpcBlockCodec {
    fn name(&self) -> &str {
        &self.name
    }

    fn block_bytes(&self) -> usize {
        BLOCK_BYTES
    }

    fn compress(&self, block: &[u8]) -> Compressed {
        let b: &[u8; BLOCK_BYTES] = block
            .try_into()
            .unwrap_or_else(|_| panic!("MPC: block of {} bytes, codec takes 32", block.len()));
        let c = self.codec.compress(b);
        Compressed {
            bytes: c.as_bytes().to_vec(),
            len: c.len as usize,
        }
    }

    fn decompress(&self, bits: &[u8], len: usize) -> Result<Vec<u8>, DecodeError> {
        if len.div_ceil(8) > bits.len() {
            return Err(DecodeError::ShortBuffer {
                codec: "MPC",
                len,
                have: bits.len(),
            });
        }
        Ok(self.codec.decompress(bits, len)?.to_vec())
    }

    fn max_bits(&self) -> usize {
        self.codec.model_set().max_bits() as usize
    }
}

#[cfg(test)]
mod tests {
    use super::VecBitWriter;
    use crate::bits::BitWriter;

    /// Fields of every width at every alignment, and byte runs, pack as
    /// `bits::BitWriter` packs them (64-bit fields as two 32-bit halves).
    #[test]
    fn vec_bit_writer_packs_like_bit_writer() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..200 {
            let mut v = VecBitWriter::new();
            let mut w = BitWriter::<512>::new();
            while w.len() < 3000 {
                let (x, width) = (next(), (next() % 65) as u32);
                if next() % 8 == 0 {
                    let bytes = x.to_be_bytes();
                    v.put_bytes(&bytes);
                    for b in bytes {
                        w.put(b as u32, 8);
                    }
                    continue;
                }
                v.put(x, width);
                if width > 32 {
                    w.put((x >> 32) as u32, width - 32);
                    w.put(x as u32, 32);
                } else {
                    w.put(x as u32, width);
                }
            }
            let (want, len) = w.finish();
            let got = v.finish();
            assert_eq!(got.len, len);
            assert_eq!(got.bytes, want[..len.div_ceil(8)].to_vec());
        }
    }
}
