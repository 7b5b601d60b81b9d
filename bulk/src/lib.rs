//! Bulk codec: whole files (memory traces of many gigabytes, model weights,
//! ...) compressed block by block with any golden block codec, in the
//! chunked container of `docs/spec/container.md`; design in
//! `docs/bulk-codec.md`.
//!
//! * [`codec`]: the [`BulkCodec`] abstraction over block codecs and the
//!   registry that opens one by name (`mpc`, `bdi`, `fpc`, ...).
//! * [`format`]: header, chunk frames, chunk index and trailer.
//! * [`fast`]: MAG-aware BDI and DPC coded without allocating per block
//!   (the golden models' bit strings).
//! * [`chunk`]: packing the variable-length compressed blocks of a chunk.
//! * [`stream`]: streaming compress/decompress with bounded memory on a
//!   work-stealing pool with ordered output, and random access to blocks.
//! * [`engine`]: single-threaded vs parallel dispatch by input size, with
//!   the threshold measured by [`engine::calibrate`] and stored in a file.
//! * [`bench`]: side-by-side throughput against lz4 and zstd.

pub mod bench;
pub mod bits;
pub mod chunk;
pub mod codec;
pub mod engine;
pub mod fast;
pub mod format;
#[cfg(feature = "gpu")]
pub mod gpu;
pub mod stream;

pub use codec::{open_codec, open_codec_for, BulkCodec, GpuKind, MpcBulk, ALGOS};
pub use engine::{Calibration, Engine};
pub use stream::{
    compress, compress_with, decompress, decompress_with, BlockReader, CompressOptions, Summary,
    WindowChunk, WindowCoder,
};

/// Why a bulk operation failed. Every error about the contents of a
/// container names the chunk (and block) where it was found.
#[derive(Debug, thiserror::Error)]
pub enum BulkError {
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
    #[error("not a bulk container (bad magic number)")]
    NotContainer,
    #[error(
        "container format version {found} is not supported (this build reads versions 1 to {supported})"
    )]
    Version { found: u16, supported: u16 },
    #[error("container header is corrupt: {0}")]
    HeaderCorrupt(String),
    /// The header names a codec this build cannot open (unknown algorithm,
    /// a block size the codec does not code), or one that differs from the
    /// codec given (block size, packing, length-field width).
    #[error("header: {0}")]
    HeaderCodec(String),
    #[error("container was written by algorithm `{container}`, but the codec given is `{codec}`")]
    AlgoMismatch { container: String, codec: String },
    #[error(
        "model-set hash mismatch for `{algo}`: the container was compressed with \
         sha256 {container}, the codec given has sha256 {codec} (wrong --model?)"
    )]
    IdentityMismatch {
        algo: String,
        container: String,
        codec: String,
    },
    #[error("chunk {chunk}: {what}")]
    ChunkCorrupt { chunk: u64, what: String },
    #[error("container truncated in chunk {chunk}: {what}")]
    ChunkTruncated { chunk: u64, what: String },
    #[error("chunk {chunk}, block {block}: does not decode: {msg}")]
    Block { chunk: u64, block: u64, msg: String },
    #[error("chunk index is corrupt: {0}")]
    IndexCorrupt(String),
    #[error("container truncated: {0}")]
    Truncated(String),
    #[error("block {block} is out of range (the container holds {blocks} blocks)")]
    BlockOutOfRange { block: u64, blocks: u64 },
    #[error("unknown algorithm `{algo}` (known: {known})")]
    UnknownAlgo { algo: String, known: String },
    #[error("algorithm `{algo}` is not available: {why}")]
    Unavailable { algo: String, why: String },
    #[error("{0}")]
    Config(String),
    #[error("GPU engine: {0}")]
    Gpu(String),
    #[error("calibration file {path}: {what}")]
    Calibration { path: String, what: String },
}
