//! Multi-Prediction Compression (MPC) for 32-byte blocks: the bit-exact
//! reference model of `docs/spec/mpc.md`.
//!
//! * [`model`]: model sets and their file format.
//! * [`transform`]: prediction, residues, bit-planes, XOR, reorder (spec
//!   stages 1..4), written literally after the spec.
//! * [`table1`]: the shared Table-1 residue encoder.
//! * [`reference`]: `compress`/`decompress` with a per-stage [`trace`] whose
//!   names the RTL pipeline registers reuse.
//! * [`fast`]: a table-driven codec with identical output, for bulk use.
//! * [`program`]: programmable predictor slots loaded from an image.

pub mod fast;
pub mod model;
pub mod program;
pub mod reference;
pub mod select;
pub mod table1;
pub mod trace;
pub mod transform;

pub use fast::MpcCodec;
pub use model::{
    ByteRule, CustomModels, ModelError, ModelKind, ModelSet, Predictor, Provenance, Selection,
};
pub use reference::{compress, compress_traced, decompress, decompress_prefix, decompress_traced};

/// Bytes in an MPC block.
pub const BLOCK_BYTES: usize = 32;
/// Bits in a block, and in the transformed stream.
pub const STREAM_BITS: usize = 256;
/// 16-bit symbols in the transformed stream.
pub const SYMBOLS: usize = 16;
/// Bit-planes (one per residue bit).
pub const PLANES: usize = 8;
/// Widest possible compressed block in bytes (8-bit header + 256 bits).
pub const MAX_BLOCK_BYTES: usize = 33;

/// One compressed block: `len` bits, MSB first from `bytes[0]`, and the model
/// ID in its header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CompressedBlock {
    pub model: u32,
    /// Length in bits.
    pub len: u32,
    /// The bits; bits past `len` are zero.
    pub bytes: [u8; MAX_BLOCK_BYTES],
}

impl CompressedBlock {
    /// The bytes that hold the `len` bits (the last one zero-padded).
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..(self.len as usize).div_ceil(8)]
    }

    /// Bit `i` of the block (0 = first).
    pub fn bit(&self, i: usize) -> bool {
        (self.bytes[i / 8] >> (7 - i % 8)) & 1 == 1
    }

    /// The bits as a string of `0`/`1` (for messages and vector files).
    pub fn bit_string(&self) -> String {
        (0..self.len as usize)
            .map(|i| if self.bit(i) { '1' } else { '0' })
            .collect()
    }
}

/// Why a compressed block could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error(
        "compressed block of {len} bits is longer than the {max}-bit maximum of this model set"
    )]
    TooLong { len: usize, max: usize },
    #[error("truncated: {needed} more bits needed at bit {at}, but the block has {len} bits")]
    Truncated {
        at: usize,
        needed: usize,
        len: usize,
    },
    #[error("model ID {id} in the header is not used by this model set (IDs 0..={max})")]
    BadModelId { id: u32, max: u32 },
    #[error("symbol {symbol}: zero-run code with run length {run} (valid 2..=15) at bit {at}")]
    BadRunLength { symbol: usize, run: u32, at: usize },
    #[error("symbol {symbol}: two-ones code with start position 15 (valid 0..=14) at bit {at}")]
    BadPairPosition { symbol: usize, at: usize },
    #[error("symbol {symbol}: zero run of {run} symbols overflows the 16 symbols of a block, at bit {at}")]
    RunOverflow { symbol: usize, run: u32, at: usize },
    #[error("{extra} bits left over after a complete {used}-bit block")]
    TrailingBits { used: usize, extra: usize },
}
