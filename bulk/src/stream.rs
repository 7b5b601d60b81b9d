//! Streaming compression and decompression with bounded memory, and random
//! access to single blocks.
//!
//! Memory: three windows of `window` chunks each (the one being coded, the
//! one being written and the one being read, the last two on the calling
//! thread overlapped with the first through `rayon::join`), plus the chunk
//! index (16 bytes a chunk). With 64 KiB chunks and a window of 32 chunks
//! that is about 12 MiB whatever the input size.
//!
//! Hostile input: every buffer a reader fills from a container grows only
//! as bytes arrive or blocks decode, within the limits of
//! [`format::MAX_CHUNK_BYTES`](super::format::MAX_CHUNK_BYTES) and
//! [`MAX_WINDOW_BYTES`]; no allocation is sized by a number read from the
//! container alone (`docs/spec/container.md`, "Resource bounds").
//!
//! Parallelism: the chunks of a window are coded with `par_iter` on the
//! current rayon pool (work stealing) and written in order. Writing and
//! reading run beside the coding through `rayon::join`: called inside the
//! pool (as the CLI does, with `pool.install`), on the calling thread,
//! which then helps code; called from outside, on a pool thread.

use std::io::{ErrorKind, Read, Seek, SeekFrom, Write};

use rayon::prelude::*;

use super::bits::{EXTRACT_MAX, EXTRACT_PAD};
use super::chunk::{decode_chunk, len_width, ChunkEncoder, ChunkPos, StoredChunk};
use super::codec::BulkCodec;
use super::engine::Engine;
use super::format::{
    crc32, index_bytes, index_count, parse_index, Frame, Header, IndexEntry, Trailer, FRAME_BYTES,
    HEADER_BYTES, INDEX_HEAD_BYTES, INDEX_MARKER, MAX_BLOCK_BYTES, MAX_CHUNK_BYTES, MAX_GROUP_LOG2,
    TRAILER_BYTES,
};
use super::BulkError;

/// Default blocks per chunk (64 KiB of 32-byte blocks).
pub const DEFAULT_CHUNK_BLOCKS: u32 = 2048;
/// Default chunks per window.
pub const DEFAULT_WINDOW: usize = 32;
/// Chunks per window of the GPU engine unless told: 1024 (64 MiB of
/// 32-byte blocks in 64 KiB chunks), enough threads to fill a large GPU.
pub const GPU_WINDOW: usize = 1024;
/// Most chunks per window.
pub const MAX_WINDOW: usize = 4096;
/// Most bytes of input (compress) or output (decompress) in one window;
/// three windows are in flight. Decompression lowers its window to fit
/// the container's chunk size.
pub const MAX_WINDOW_BYTES: u64 = 256 << 20;

/// Check that the bulk layer can write and read back what `codec`
/// produces: the writer refuses what the reader cannot read.
pub fn check_limits(codec: &dyn BulkCodec) -> Result<(), BulkError> {
    let (bb, max) = (codec.block_bytes(), codec.max_bits());
    if bb == 0 || bb > MAX_BLOCK_BYTES as usize || max > 8 * EXTRACT_MAX || max == 0 {
        return Err(BulkError::Config(format!(
            "{}: blocks of {bb} bytes coded in up to {max} bits; containers hold blocks of 1 to \
             {MAX_BLOCK_BYTES} bytes coded in 1 to {} bits",
            codec.algo(),
            8 * EXTRACT_MAX
        )));
    }
    Ok(())
}

/// Check `window` chunks per window for `chunk_bytes`-byte chunks.
fn check_window(window: usize, chunk_bytes: u64) -> Result<(), BulkError> {
    if !(1..=MAX_WINDOW).contains(&window) {
        return Err(BulkError::Config(format!(
            "window of {window} chunks (1..={MAX_WINDOW})"
        )));
    }
    if window as u64 * chunk_bytes > MAX_WINDOW_BYTES {
        return Err(BulkError::Config(format!(
            "a window of {window} chunks of {chunk_bytes} bytes holds {} bytes, more than \
             {MAX_WINDOW_BYTES}; use a smaller window or smaller chunks",
            window as u64 * chunk_bytes
        )));
    }
    Ok(())
}

#[derive(Clone, Debug)]
pub struct CompressOptions {
    pub chunk_blocks: u32,
    /// Self-delimiting codecs (MPC): blocks per field of the chunks' group
    /// length table (a power of two, 1 to 256), or 0 for no table (a
    /// version-1 container). `None`: [`DEFAULT_GROUP_BLOCKS`]. Codecs with
    /// a length per block take only `None`.
    pub group_blocks: Option<u32>,
    pub engine: Engine,
    /// Chunks coded per window (bounded memory).
    pub window: usize,
    /// Input length, when known (stored in the header).
    pub original_len: Option<u64>,
}

impl Default for CompressOptions {
    fn default() -> Self {
        CompressOptions {
            chunk_blocks: DEFAULT_CHUNK_BLOCKS,
            group_blocks: None,
            engine: Engine::Parallel,
            window: DEFAULT_WINDOW,
            original_len: None,
        }
    }
}

/// What a compression or decompression did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    pub original_len: u64,
    pub container_len: u64,
    pub chunks: u64,
    /// Sum of the compressed bits of all chunks (length tables included).
    pub payload_bits: u64,
}

impl Summary {
    /// Original bits over payload bits (container overhead excluded).
    pub fn ratio(&self) -> f64 {
        (self.original_len * 8) as f64 / self.payload_bits.max(1) as f64
    }
}

struct Counting<W> {
    inner: W,
    pos: u64,
}

impl<W: Write> Counting<W> {
    fn put(&mut self, b: &[u8]) -> Result<(), BulkError> {
        self.inner.write_all(b)?;
        self.pos += b.len() as u64;
        Ok(())
    }
}

/// Read until `buf` is full or the input ends; returns the bytes read.
fn fill<R: Read>(input: &mut R, buf: &mut [u8]) -> Result<usize, BulkError> {
    let mut n = 0;
    while n < buf.len() {
        match input.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(n)
}

/// Blocks per group length-table field in containers of self-delimiting
/// codecs unless told: the table costs one field per 32 blocks (about 0.25%
/// of an MPC container) and lets a chunk be decoded 32 blocks per thread.
pub const DEFAULT_GROUP_BLOCKS: u32 = 32;

/// The header `opts` give for `codec`, or why they cannot.
pub fn header_for(codec: &dyn BulkCodec, opts: &CompressOptions) -> Result<Header, BulkError> {
    let sd = codec.self_delimiting();
    let group_log2 = match (sd, opts.group_blocks) {
        (false, None) => None,
        (false, Some(g)) => {
            return Err(BulkError::Config(format!(
                "--block-groups {g}: `{}` stores a length per block; group length tables are for \
                 self-delimiting codecs (mpc)",
                codec.algo()
            )))
        }
        (true, Some(0)) => None,
        (true, g) => {
            let g = g.unwrap_or(DEFAULT_GROUP_BLOCKS);
            if !g.is_power_of_two() || g > 1 << MAX_GROUP_LOG2 {
                return Err(BulkError::Config(format!(
                    "--block-groups {g}: a power of two from 1 to {}, or 0 for no group table",
                    1 << MAX_GROUP_LOG2
                )));
            }
            Some(g.trailing_zeros() as u8)
        }
    };
    Ok(Header {
        algo: codec.algo().to_string(),
        identity: codec.identity(),
        block_bytes: codec.block_bytes() as u32,
        chunk_blocks: opts.chunk_blocks,
        original_len: opts.original_len,
        self_delimiting: sd,
        len_width: table_width(codec, group_log2),
        group_log2,
    })
}

/// Width of the length-table fields for `codec` with groups of
/// `2^group_log2` blocks (self-delimiting codecs: 0 without groups).
pub fn table_width(codec: &dyn BulkCodec, group_log2: Option<u8>) -> u8 {
    match (codec.self_delimiting(), group_log2) {
        (true, None) => 0,
        (true, Some(g)) => len_width(codec.max_bits() << g),
        (false, _) => len_width(codec.max_bits()),
    }
}

/// A device that codes whole windows of chunks (the GPU engine): the
/// stream loops below read, check, order and write; the device codes.
pub trait WindowCoder: Sync {
    /// Compress `data` (whole blocks of the header's size) cut into chunks
    /// of `header.chunk_blocks` blocks: chunk k's stored bytes go to
    /// `stored[k]` (replacing its contents) and its bit count to `bits[k]`,
    /// exactly as [`ChunkEncoder::encode`] would produce them.
    fn compress_window(
        &self,
        header: &Header,
        data: &[u8],
        stored: &mut [Vec<u8>],
        bits: &mut [u32],
    ) -> Result<(), BulkError>;
    /// Decode the chunks of a window. A chunk that decodes is left in its
    /// `out` with `decoded` set; one the device finds malformed is left
    /// with `decoded` false, and the caller decodes it on the CPU (which
    /// names the error exactly).
    fn decompress_window(
        &self,
        header: &Header,
        chunks: &mut [WindowChunk<'_>],
    ) -> Result<(), BulkError>;
    /// Largest window the device takes, in input bytes.
    fn max_window_bytes(&self) -> u64;
}

/// One chunk of a window for [`WindowCoder::decompress_window`].
pub struct WindowChunk<'a> {
    /// Stored bytes followed by [`EXTRACT_PAD`] zeros.
    pub padded: &'a [u8],
    pub bits: u32,
    pub blocks: u32,
    /// Decoded blocks (`blocks x block bytes`) when `decoded`.
    pub out: &'a mut Vec<u8>,
    pub decoded: bool,
}

/// One coded chunk of a window.
#[derive(Default)]
struct CodedChunk {
    enc: ChunkEncoder,
    /// Stored bytes when a [`WindowCoder`] coded the chunk.
    device: Vec<u8>,
    on_device: bool,
    bits: u32,
    blocks: u32,
    /// The frame's checksum (computed where the chunk is coded, on the
    /// pool, not by the writer).
    crc: u32,
}

impl CodedChunk {
    fn stored(&self) -> &[u8] {
        if self.on_device {
            &self.device
        } else {
            self.enc.sink.bytes()
        }
    }

    /// Compute the checksum of the chunk's frame as chunk number `chunk`.
    fn seal(&mut self, chunk: u64) {
        let stored = self.stored();
        self.crc = Frame {
            chunk: chunk as u32,
            stored: stored.len() as u32,
            bits: self.bits,
            blocks: self.blocks,
            crc: 0,
        }
        .compute_crc(stored);
    }
}

/// Write coded chunks in order: frame (with the checksum computed by
/// [`CodedChunk::seal`]) and payload, recording their index entries.
fn write_chunks<W: Write>(
    out: &mut Counting<W>,
    index: &mut Vec<IndexEntry>,
    sum: &mut Summary,
    chunks: &[CodedChunk],
) -> Result<(), BulkError> {
    for c in chunks {
        let stored = c.stored();
        let frame = Frame {
            chunk: index.len() as u32,
            stored: stored.len() as u32,
            bits: c.bits,
            blocks: c.blocks,
            crc: c.crc,
        };
        index.push(IndexEntry {
            offset: out.pos,
            stored: frame.stored,
            crc: frame.crc,
        });
        out.put(&frame.to_bytes())?;
        out.put(stored)?;
        sum.payload_bits += c.bits as u64;
    }
    if index.len() as u64 >= INDEX_MARKER as u64 {
        return Err(BulkError::Config(
            "input too large for 32-bit chunk numbers; use larger chunks".into(),
        ));
    }
    Ok(())
}

/// Compress `input` into a container written to `out`. `progress` is
/// called with the input bytes coded after each window (the writing runs
/// one window behind).
pub fn compress<R: Read + Send, W: Write + Send>(
    codec: &dyn BulkCodec,
    input: R,
    out: W,
    opts: &CompressOptions,
    progress: &dyn Fn(u64),
) -> Result<Summary, BulkError> {
    compress_with(codec, input, out, opts, None, progress)
}

fn need_device(device: Option<&dyn WindowCoder>) -> Result<&dyn WindowCoder, BulkError> {
    device.ok_or_else(|| {
        BulkError::Config("the GPU engine was chosen but no GPU device was given".into())
    })
}

/// [`compress`] with a device for [`Engine::Gpu`].
pub fn compress_with<R: Read + Send, W: Write + Send>(
    codec: &dyn BulkCodec,
    input: R,
    out: W,
    opts: &CompressOptions,
    device: Option<&dyn WindowCoder>,
    progress: &dyn Fn(u64),
) -> Result<Summary, BulkError> {
    let mut scratch = CompressScratch::default();
    compress_reusing(codec, input, out, opts, device, &mut scratch, progress)
}

/// The buffers of the compress stream loop: two input windows and two
/// windows of coded chunks (their stored bytes). A stream reuses them from
/// window to window; [`compress_reusing`] reuses them from stream to
/// stream as well, so that a caller compressing many streams neither
/// allocates nor first-touches (page faults, zeroing) fresh memory for
/// each. They hold what the largest window used needs, until dropped.
#[derive(Default)]
pub struct CompressScratch {
    cur: Vec<u8>,
    next: Vec<u8>,
    coding: Vec<CodedChunk>,
    done: Vec<CodedChunk>,
}

impl CompressScratch {
    /// Make room for windows of `win` input bytes and `window` chunks.
    fn reserve(&mut self, win: usize, window: usize) {
        for b in [&mut self.cur, &mut self.next] {
            if b.len() < win {
                // zeroed pages from the allocator, touched only as read
                *b = vec![0u8; win];
            }
        }
        for c in [&mut self.coding, &mut self.done] {
            if c.len() < window {
                c.resize_with(window, CodedChunk::default);
            }
        }
    }
}

/// [`compress_with`] with the stream loop's buffers taken from `scratch`
/// and left there for the next stream (the container is the same).
pub fn compress_reusing<R: Read + Send, W: Write + Send>(
    codec: &dyn BulkCodec,
    mut input: R,
    out: W,
    opts: &CompressOptions,
    device: Option<&dyn WindowCoder>,
    scratch: &mut CompressScratch,
    progress: &dyn Fn(u64),
) -> Result<Summary, BulkError> {
    check_limits(codec)?;
    let chunk_bytes = codec.block_bytes() as u64 * opts.chunk_blocks as u64;
    if opts.chunk_blocks == 0 || chunk_bytes > MAX_CHUNK_BYTES {
        return Err(BulkError::Config(format!(
            "chunks of {} blocks of {} bytes: a chunk holds at least one block and at most \
             {MAX_CHUNK_BYTES} bytes",
            opts.chunk_blocks,
            codec.block_bytes()
        )));
    }
    check_window(opts.window, chunk_bytes)?;
    let mut window = opts.window;
    if opts.engine == Engine::Gpu {
        let d = need_device(device)?;
        window = window.min((d.max_window_bytes() / chunk_bytes).max(1) as usize);
    }
    let header = header_for(codec, opts)?;
    let width = header.len_width;
    let group = header.group_blocks();
    // a chunk's bit count travels as 32 bits
    let worst = opts.chunk_blocks as u64 * (codec.max_bits() as u64 + width as u64);
    if worst > u32::MAX as u64 {
        return Err(BulkError::Config(format!(
            "chunks of {} blocks could need {worst} bits, more than a chunk frame counts (2^32 - 1); use fewer blocks per chunk",
            opts.chunk_blocks
        )));
    }
    let bb = codec.block_bytes();
    let cb = bb * opts.chunk_blocks as usize;
    let win = cb * window;
    let mut out = Counting { inner: out, pos: 0 };
    out.put(&header.to_bytes())?;
    // Three windows in flight: `cur` is coded by the pool while the
    // calling thread writes the coded chunks of the previous window
    // (`done`) and reads the next one into `next`.
    scratch.reserve(win, window);
    let CompressScratch {
        cur,
        next,
        coding,
        done,
    } = scratch;
    let (mut cur, mut next) = (&mut cur[..win], &mut next[..win]);
    let (mut coding, mut done) = (&mut coding[..window], &mut done[..window]);
    let mut n_done = 0usize;
    let mut index: Vec<IndexEntry> = Vec::new();
    let mut sum = Summary::default();
    let mut n_cur = fill(&mut input, cur)?;
    // chunks coded before the current window: the first one's number
    let mut first_chunk = 0u64;
    loop {
        let padded = n_cur.div_ceil(bb) * bb;
        cur[n_cur..padded].fill(0);
        let nchunks = padded.div_ceil(cb);
        let data = &cur[..padded];
        let chunks = &mut coding[..nchunks];
        let more = n_cur == win;
        let engine = opts.engine;
        let hdr = &header;
        let mut work = || -> Result<(), BulkError> {
            let code = |(i, (c, d)): (usize, (&mut CodedChunk, &[u8]))| {
                c.bits = c.enc.encode(codec, d, width, group);
                c.blocks = (d.len() / bb) as u32;
                c.on_device = false;
                c.seal(first_chunk + i as u64);
            };
            match engine {
                Engine::Parallel => chunks
                    .par_iter_mut()
                    .zip(data.par_chunks(cb))
                    .enumerate()
                    .for_each(code),
                Engine::Single => chunks
                    .iter_mut()
                    .zip(data.chunks(cb))
                    .enumerate()
                    .for_each(code),
                Engine::Gpu => {
                    let mut stored: Vec<Vec<u8>> = chunks
                        .iter_mut()
                        .map(|c| std::mem::take(&mut c.device))
                        .collect();
                    let mut bits = vec![0u32; chunks.len()];
                    let r = if data.is_empty() {
                        Ok(())
                    } else {
                        need_device(device)?.compress_window(hdr, data, &mut stored, &mut bits)
                    };
                    for ((c, s), (b, d)) in chunks
                        .iter_mut()
                        .zip(stored)
                        .zip(bits.into_iter().zip(data.chunks(cb)))
                    {
                        c.device = s;
                        c.bits = b;
                        c.blocks = (d.len() / bb) as u32;
                        c.on_device = true;
                    }
                    r?;
                    chunks
                        .par_iter_mut()
                        .enumerate()
                        .for_each(|(i, c)| c.seal(first_chunk + i as u64));
                }
            }
            Ok(())
        };
        let mut io = || -> Result<usize, BulkError> {
            write_chunks(&mut out, &mut index, &mut sum, &done[..n_done])?;
            if more {
                fill(&mut input, next)
            } else {
                Ok(0)
            }
        };
        let n_next = match engine {
            Engine::Parallel | Engine::Gpu => {
                let (r, w) = rayon::join(io, work);
                w?;
                r?
            }
            Engine::Single => {
                work()?;
                io()?
            }
        };
        if n_cur == 0 {
            break;
        }
        sum.original_len += n_cur as u64;
        progress(sum.original_len);
        std::mem::swap(&mut coding, &mut done);
        n_done = nchunks;
        first_chunk += nchunks as u64;
        std::mem::swap(&mut cur, &mut next);
        n_cur = n_next;
    }
    if let Some(l) = opts.original_len {
        if l != sum.original_len {
            return Err(BulkError::Config(format!(
                "input changed while compressing: expected {l} bytes, read {}",
                sum.original_len
            )));
        }
    }
    let index_offset = out.pos;
    out.put(&index_bytes(&index, sum.original_len))?;
    let trailer = Trailer {
        index_offset,
        chunk_count: index.len() as u64,
        original_len: sum.original_len,
    };
    out.put(&trailer.to_bytes())?;
    out.inner.flush()?;
    sum.container_len = out.pos;
    sum.chunks = index.len() as u64;
    Ok(sum)
}

/// Check that `codec` can decode a container with `header`, in this
/// order: algorithm, block size, identity (model set), packing, length-field
/// width. The block size comes before the identity, which for codecs
/// without a model file is derived from it: a container of another block
/// size is reported as such, not as another model set.
pub fn check_codec(header: &Header, codec: &dyn BulkCodec) -> Result<(), BulkError> {
    check_limits(codec)?;
    let algo = codec.algo();
    if header.algo != algo {
        return Err(BulkError::AlgoMismatch {
            container: header.algo.clone(),
            codec: algo.to_string(),
        });
    }
    if header.block_bytes as usize != codec.block_bytes() {
        return Err(BulkError::HeaderCodec(format!(
            "block size {} bytes, but the `{algo}` codec given codes {}-byte blocks",
            header.block_bytes,
            codec.block_bytes()
        )));
    }
    if header.identity != codec.identity() {
        return Err(BulkError::IdentityMismatch {
            algo: header.algo.clone(),
            container: hex::encode(header.identity),
            codec: hex::encode(codec.identity()),
        });
    }
    if header.group_log2.is_some_and(|g| g > MAX_GROUP_LOG2) {
        return Err(BulkError::HeaderCorrupt(format!(
            "group size 2^{} blocks (g at most {MAX_GROUP_LOG2})",
            header.group_log2.unwrap_or(0)
        )));
    }
    let sd = codec.self_delimiting();
    if header.self_delimiting != sd {
        return Err(BulkError::HeaderCodec(format!(
            "flag bit 0 is {}, but `{algo}` blocks {} (bit {})",
            u8::from(header.self_delimiting),
            if sd {
                "are self-delimiting"
            } else {
                "need a length per block"
            },
            u8::from(sd)
        )));
    }
    let width = table_width(codec, header.group_log2);
    if header.len_width != width {
        let max = codec.max_bits();
        let why = match (header.group_log2, sd) {
            (Some(g), _) => format!(
                "`{algo}` with groups of {} blocks needs {width}, the bits needed for {} x {max} = {}",
                1u32 << g,
                1u32 << g,
                max << g
            ),
            (None, false) => format!(
                "`{algo}` needs {width}, the bits needed for its largest block, {max}"
            ),
            (None, true) => "self-delimiting blocks without a group table take 0".to_string(),
        };
        return Err(BulkError::HeaderCodec(format!(
            "length-field width {}, but {why}",
            header.len_width
        )));
    }
    Ok(())
}

/// Read the header of a container.
pub fn read_header<R: Read>(input: &mut R) -> Result<Header, BulkError> {
    let mut b = [0u8; HEADER_BYTES];
    let n = fill(input, &mut b)?;
    Header::parse(&b[..n])
}

/// Largest stored chunk a header allows.
fn max_stored(h: &Header, codec: &dyn BulkCodec) -> u64 {
    let blocks = h.chunk_blocks as u64;
    (blocks * (codec.max_bits() as u64 + h.len_width as u64)).div_ceil(8)
}

/// Check the frame read for chunk `k` on its own terms and against the
/// header: sequence number, block count, stored bytes and bit count. Both
/// the streaming reader and random access run it.
fn check_frame(h: &Header, codec: &dyn BulkCodec, k: u64, f: &Frame) -> Result<(), BulkError> {
    let bad = |what: String| Err(BulkError::ChunkCorrupt { chunk: k, what });
    if f.chunk as u64 != k {
        return bad(format!("frame carries sequence number {}", f.chunk));
    }
    if f.blocks == 0 || f.blocks > h.chunk_blocks {
        return bad(format!(
            "frame says {} blocks; chunks hold 1 to {}",
            f.blocks, h.chunk_blocks
        ));
    }
    if f.stored as u64 != (f.bits as u64).div_ceil(8) {
        return bad(format!(
            "frame says {} stored bytes for {} bits",
            f.stored, f.bits
        ));
    }
    if f.stored as u64 > max_stored(h, codec) {
        return bad(format!(
            "frame says {} stored bytes; chunks of {} blocks take at most {}",
            f.stored,
            h.chunk_blocks,
            max_stored(h, codec)
        ));
    }
    // every block takes at least one bit, or its length field; every
    // group its field
    let min_bits = if h.self_delimiting {
        f.blocks as u64
            + h.len_width as u64 * (f.blocks as u64).div_ceil(h.group_blocks().max(1) as u64)
    } else {
        (h.len_width as u64).max(1) * f.blocks as u64
    };
    if (f.bits as u64) < min_bits {
        return bad(format!(
            "frame says {} blocks in {} bits (at least {min_bits} needed)",
            f.blocks, f.bits
        ));
    }
    Ok(())
}

/// Check the bits of the last stored byte of chunk `k` past the frame's
/// bit count: writers set them to 0, and a reader refuses any other value
/// (so that every container has one spelling). `stored` is the frame's
/// stored bytes.
fn check_padding(k: u64, f: &Frame, stored: &[u8]) -> Result<(), BulkError> {
    let used = f.bits % 8;
    if used == 0 {
        return Ok(());
    }
    let last = stored.get(f.bits as usize / 8).copied().unwrap_or(0);
    if last & (0xffu8 >> used) != 0 {
        return Err(BulkError::ChunkCorrupt {
            chunk: k,
            what: format!(
                "nonzero padding bits after bit {} (the frame's bit count)",
                f.bits
            ),
        });
    }
    Ok(())
}

/// Read the `stored` bytes of chunk `k` into `buf` followed by
/// [`EXTRACT_PAD`] zeros. `buf` grows as bytes arrive, never ahead of
/// them; `pos` advances by the bytes read.
fn read_stored<R: Read>(
    input: &mut R,
    k: u64,
    stored: usize,
    buf: &mut Vec<u8>,
    pos: &mut u64,
) -> Result<(), BulkError> {
    buf.clear();
    let got = input.take(stored as u64).read_to_end(buf)?;
    *pos += got as u64;
    if got < stored {
        return Err(BulkError::ChunkTruncated {
            chunk: k,
            what: format!("{stored} stored bytes expected, {got} found"),
        });
    }
    buf.resize(stored + EXTRACT_PAD, 0);
    Ok(())
}

#[derive(Default)]
struct Slot {
    frame: Option<Frame>,
    offset: u64,
    first_block: u64,
    buf: Vec<u8>,
    out: Vec<u8>,
}

struct FrameReader<'c, R> {
    input: R,
    header: Header,
    codec: &'c dyn BulkCodec,
    pos: u64,
    next_chunk: u64,
    next_block: u64,
    last_blocks: u32,
    frames: Vec<IndexEntry>,
    /// `(index entries, original length)` once the index is reached.
    end: Option<(Vec<IndexEntry>, u64, u64)>,
}

impl<R: Read> FrameReader<'_, R> {
    fn read_exact_or(
        &mut self,
        buf: &mut [u8],
        what: &dyn Fn() -> BulkError,
    ) -> Result<(), BulkError> {
        let n = fill(&mut self.input, buf)?;
        self.pos += n as u64;
        if n < buf.len() {
            return Err(what());
        }
        Ok(())
    }

    /// Fill `slots` with the next chunks; returns how many were read.
    fn read_window(&mut self, slots: &mut [Slot]) -> Result<usize, BulkError> {
        let mut n = 0;
        while n < slots.len() && self.end.is_none() {
            let k = self.next_chunk;
            let offset = self.pos;
            let mut fb = [0u8; FRAME_BYTES];
            let trunc = || BulkError::ChunkTruncated {
                chunk: k,
                what: "the frame (or the chunk index) is missing".into(),
            };
            self.read_exact_or(&mut fb[..4], &trunc)?;
            if u32::from_le_bytes([fb[0], fb[1], fb[2], fb[3]]) == INDEX_MARKER {
                self.read_index(offset, &fb[..4])?;
                break;
            }
            self.read_exact_or(&mut fb[4..], &trunc)?;
            let frame = Frame::parse(&fb);
            let bad = |what: String| BulkError::ChunkCorrupt { chunk: k, what };
            check_frame(&self.header, self.codec, k, &frame)?;
            if k > 0 && self.last_blocks != self.header.chunk_blocks {
                return Err(BulkError::ChunkCorrupt {
                    chunk: k - 1,
                    what: format!(
                        "holds {} blocks but is not the last chunk",
                        self.last_blocks
                    ),
                });
            }
            let slot = &mut slots[n];
            let stored = frame.stored as usize;
            read_stored(&mut self.input, k, stored, &mut slot.buf, &mut self.pos)?;
            // checked here, before the next frame is parsed, so that a
            // corrupt length field is reported against its own chunk
            if frame.compute_crc(&slot.buf[..stored]) != frame.crc {
                return Err(bad("checksum mismatch".into()));
            }
            check_padding(k, &frame, &slot.buf[..stored])?;
            slot.frame = Some(frame);
            slot.offset = offset;
            slot.first_block = self.next_block;
            self.frames.push(IndexEntry {
                offset,
                stored: frame.stored,
                crc: frame.crc,
            });
            self.next_chunk += 1;
            self.next_block += frame.blocks as u64;
            self.last_blocks = frame.blocks;
            n += 1;
        }
        Ok(n)
    }

    fn read_index(&mut self, offset: u64, marker: &[u8]) -> Result<(), BulkError> {
        let mut head = [0u8; INDEX_HEAD_BYTES];
        head[..4].copy_from_slice(marker);
        let trunc = || BulkError::Truncated("in the chunk index".into());
        self.read_exact_or(&mut head[4..], &trunc)?;
        let count = index_count(&head);
        if count != self.next_chunk {
            return Err(BulkError::IndexCorrupt(format!(
                "lists {count} chunks, the container holds {}",
                self.next_chunk
            )));
        }
        let mut body = vec![0u8; count as usize * 16 + 4];
        self.read_exact_or(&mut body, &trunc)?;
        let (entries, original_len) = parse_index(&head, &body)?;
        for (k, (a, b)) in entries.iter().zip(&self.frames).enumerate() {
            if a != b {
                return Err(BulkError::IndexCorrupt(format!(
                    "entry {k} does not match chunk {k}"
                )));
            }
        }
        self.end = Some((entries, original_len, offset));
        Ok(())
    }
}

fn decode_slot(
    codec: &dyn BulkCodec,
    header: &Header,
    chunk: u64,
    slot: &mut Slot,
) -> Result<(), BulkError> {
    let Some(frame) = slot.frame else {
        return Ok(());
    };
    decode_chunk(
        codec,
        header.len_width,
        header.group_blocks(),
        &StoredChunk {
            padded: &slot.buf,
            bits: frame.bits as usize,
            blocks: frame.blocks as usize,
        },
        ChunkPos {
            chunk,
            first_block: slot.first_block,
        },
        &mut slot.out,
    )
}

/// Decompress a container from `input` (read front to back: works on
/// pipes) into `out`. `window` chunks are decoded at a time.
pub fn decompress<R: Read + Send, W: Write + Send>(
    codec: &dyn BulkCodec,
    input: R,
    out: W,
    engine: Engine,
    window: usize,
    progress: &dyn Fn(u64),
) -> Result<Summary, BulkError> {
    decompress_with(codec, input, out, engine, window, None, progress)
}

/// [`decompress`] with a device for [`Engine::Gpu`].
pub fn decompress_with<R: Read + Send, W: Write + Send>(
    codec: &dyn BulkCodec,
    input: R,
    out: W,
    engine: Engine,
    window: usize,
    device: Option<&dyn WindowCoder>,
    progress: &dyn Fn(u64),
) -> Result<Summary, BulkError> {
    let mut scratch = DecompressScratch::default();
    decompress_reusing(
        codec,
        input,
        out,
        engine,
        window,
        device,
        &mut scratch,
        progress,
    )
}

/// The buffers of the decompress stream loop: three windows of chunks
/// (their stored bytes and decoded blocks), kept from window to window
/// and, through [`decompress_reusing`], from stream to stream, like
/// [`CompressScratch`].
#[derive(Default)]
pub struct DecompressScratch {
    cur: Vec<Slot>,
    next: Vec<Slot>,
    done: Vec<Slot>,
    pending: Vec<u8>,
}

/// [`decompress_with`] with the stream loop's buffers taken from `scratch`
/// and left there for the next stream (the output is the same).
#[allow(clippy::too_many_arguments)]
pub fn decompress_reusing<R: Read + Send, W: Write + Send>(
    codec: &dyn BulkCodec,
    mut input: R,
    mut out: W,
    engine: Engine,
    window: usize,
    device: Option<&dyn WindowCoder>,
    scratch: &mut DecompressScratch,
    progress: &dyn Fn(u64),
) -> Result<Summary, BulkError> {
    let header = read_header(&mut input)?;
    check_codec(&header, codec)?;
    check_window(window, 1)?;
    // the chunk size comes from the container: fit the window to it
    let mut limit = MAX_WINDOW_BYTES;
    if engine == Engine::Gpu {
        limit = limit.min(need_device(device)?.max_window_bytes());
    }
    let window = window.min((limit / header.chunk_bytes()).max(1) as usize);
    let mut rd = FrameReader {
        input,
        header: header.clone(),
        codec,
        pos: HEADER_BYTES as u64,
        next_chunk: 0,
        next_block: 0,
        last_blocks: header.chunk_blocks,
        frames: Vec::new(),
        end: None,
    };
    // Three windows in flight: `cur` is decoded by the pool while the
    // calling thread writes the decoded chunks of the previous window
    // (`done`) and reads and checks the next one into `next`.
    let DecompressScratch {
        cur,
        next,
        done,
        pending,
    } = scratch;
    for s in [&mut *cur, &mut *next, &mut *done] {
        if s.len() < window {
            s.resize_with(window, Slot::default);
        }
        for slot in s.iter_mut() {
            slot.frame = None;
        }
    }
    let (mut cur, mut next, mut done) =
        (&mut cur[..window], &mut next[..window], &mut done[..window]);
    let mut n_done = 0usize;
    // the last decoded chunk is held back: the final one is cut to the
    // original length
    pending.clear();
    let mut have_pending = false;
    let mut written = 0u64;
    let mut sum = Summary::default();
    let mut n_cur = rd.read_window(cur)?;
    let mut first_chunk = 0u64;
    loop {
        let hdr = &header;
        let slots = &mut cur[..n_cur];
        let mut work = || -> Result<(), BulkError> {
            let decode =
                |(i, s): (usize, &mut Slot)| decode_slot(codec, hdr, first_chunk + i as u64, s);
            match engine {
                Engine::Parallel => slots.par_iter_mut().enumerate().try_for_each(decode),
                Engine::Single => slots.iter_mut().enumerate().try_for_each(decode),
                Engine::Gpu => {
                    let mut chunks: Vec<WindowChunk<'_>> = slots
                        .iter_mut()
                        .filter_map(|s| {
                            let f = s.frame?;
                            Some(WindowChunk {
                                padded: &s.buf,
                                bits: f.bits,
                                blocks: f.blocks,
                                out: &mut s.out,
                                decoded: false,
                            })
                        })
                        .collect();
                    need_device(device)?.decompress_window(hdr, &mut chunks)?;
                    let ok: Vec<bool> = chunks.iter().map(|c| c.decoded).collect();
                    drop(chunks);
                    // what the device found malformed is decoded (and named) on the CPU
                    let mut k = 0;
                    slots.iter_mut().enumerate().try_for_each(|(i, s)| {
                        if s.frame.is_none() {
                            return Ok(());
                        }
                        k += 1;
                        if ok[k - 1] {
                            Ok(())
                        } else {
                            decode((i, s))
                        }
                    })
                }
            }
        };
        let reading = rd.end.is_none();
        let mut io = || -> Result<usize, BulkError> {
            for s in done[..n_done].iter_mut() {
                if have_pending {
                    out.write_all(pending)?;
                    written += pending.len() as u64;
                }
                std::mem::swap(pending, &mut s.out);
                have_pending = true;
                if let Some(f) = s.frame.take() {
                    sum.payload_bits += f.bits as u64;
                }
            }
            if reading {
                rd.read_window(next)
            } else {
                Ok(0)
            }
        };
        // a decoding error of this window is reported before a reading
        // error of the next
        let n_next = match engine {
            Engine::Parallel | Engine::Gpu => {
                let (r, d) = rayon::join(io, work);
                d?;
                r?
            }
            Engine::Single => {
                work()?;
                io()?
            }
        };
        progress(written);
        if n_cur == 0 && n_done == 0 {
            break;
        }
        first_chunk += n_cur as u64;
        // rotate: decoded -> done, read -> cur, written -> next
        std::mem::swap(&mut done, &mut cur);
        std::mem::swap(&mut cur, &mut next);
        n_done = n_cur;
        n_cur = n_next;
    }
    let Some((_, original_len, index_offset)) = rd.end.take() else {
        return Err(BulkError::Truncated("chunk index missing".into()));
    };
    let bb = header.block_bytes as u64;
    let total = rd.next_block * bb;
    if original_len > total || total - original_len >= bb {
        return Err(BulkError::IndexCorrupt(format!(
            "original length {original_len} does not fit {} blocks",
            rd.next_block
        )));
    }
    if let Some(h) = header.original_len {
        if h != original_len {
            return Err(BulkError::IndexCorrupt(format!(
                "original length {original_len}, header says {h}"
            )));
        }
    }
    if have_pending {
        let keep = (original_len - written) as usize;
        out.write_all(&pending[..keep])?;
        written += keep as u64;
    }
    out.flush()?;
    let mut tb = [0u8; TRAILER_BYTES];
    rd.read_exact_or(&mut tb, &|| {
        BulkError::Truncated("the trailer is missing".into())
    })?;
    let trailer = Trailer::parse(&tb)?;
    if trailer.index_offset != index_offset
        || trailer.chunk_count != rd.next_chunk
        || trailer.original_len != original_len
    {
        return Err(BulkError::IndexCorrupt(
            "trailer disagrees with the index".into(),
        ));
    }
    let mut extra = [0u8; 1];
    if fill(&mut rd.input, &mut extra)? != 0 {
        return Err(BulkError::Config("data after the container trailer".into()));
    }
    progress(written);
    sum.original_len = written;
    sum.container_len = rd.pos;
    sum.chunks = rd.next_chunk;
    Ok(sum)
}

/// Random access to the blocks of a container through its chunk index.
/// A chunk is checked exactly as the streaming reader checks it (frame,
/// block count, checksum, every block decoding, no bits left over) before
/// any of its blocks is returned; the last chunk read is kept decoded.
pub struct BlockReader<R> {
    input: R,
    pub header: Header,
    pub entries: Vec<IndexEntry>,
    pub original_len: u64,
    buf: Vec<u8>,
    /// The chunk held decoded in `decoded`.
    chunk: Option<u64>,
    decoded: Vec<u8>,
}

fn truncated(what: &str) -> impl Fn(std::io::Error) -> BulkError + '_ {
    move |e| {
        if e.kind() == ErrorKind::UnexpectedEof {
            BulkError::Truncated(what.to_string())
        } else {
            BulkError::Io(e)
        }
    }
}

impl<R: Read + Seek> BlockReader<R> {
    /// Read the header, trailer and index; check the index is consistent.
    /// Memory: the index (16 bytes a chunk, bounded by the file size).
    pub fn open(mut input: R) -> Result<Self, BulkError> {
        input.seek(SeekFrom::Start(0))?;
        let header = read_header(&mut input)?;
        let size = input.seek(SeekFrom::End(0))?;
        let min = (HEADER_BYTES + INDEX_HEAD_BYTES + 4 + TRAILER_BYTES) as u64;
        if size < min {
            return Err(BulkError::Truncated(format!(
                "{size} bytes, too short for a container"
            )));
        }
        input.seek(SeekFrom::Start(size - TRAILER_BYTES as u64))?;
        let mut tb = [0u8; TRAILER_BYTES];
        input
            .read_exact(&mut tb)
            .map_err(truncated("the trailer"))?;
        let t = Trailer::parse(&tb)?;
        let index_len = t
            .chunk_count
            .checked_mul(16)
            .and_then(|x| x.checked_add((INDEX_HEAD_BYTES + 4) as u64));
        if index_len.and_then(|l| l.checked_add(t.index_offset))
            != Some(size - TRAILER_BYTES as u64)
            || t.index_offset < HEADER_BYTES as u64
        {
            return Err(BulkError::IndexCorrupt(
                "trailer points outside the container".into(),
            ));
        }
        input.seek(SeekFrom::Start(t.index_offset))?;
        let mut head = [0u8; INDEX_HEAD_BYTES];
        input
            .read_exact(&mut head)
            .map_err(truncated("in the chunk index"))?;
        if index_count(&head) != t.chunk_count {
            return Err(BulkError::IndexCorrupt(format!(
                "lists {} chunks, the trailer says {}",
                index_count(&head),
                t.chunk_count
            )));
        }
        // bounded by the file size (checked above)
        let mut body = vec![0u8; t.chunk_count as usize * 16 + 4];
        input
            .read_exact(&mut body)
            .map_err(truncated("in the chunk index"))?;
        let (entries, original_len) = parse_index(&head, &body)?;
        if original_len != t.original_len || header.original_len.is_some_and(|l| l != original_len)
        {
            return Err(BulkError::IndexCorrupt("original lengths disagree".into()));
        }
        let mut at = HEADER_BYTES as u64;
        for (k, e) in entries.iter().enumerate() {
            if e.offset != at {
                return Err(BulkError::IndexCorrupt(format!(
                    "chunk {k} at offset {}, expected {at}",
                    e.offset
                )));
            }
            at += FRAME_BYTES as u64 + e.stored as u64;
        }
        if at != t.index_offset {
            return Err(BulkError::IndexCorrupt(
                "chunks do not end at the index".into(),
            ));
        }
        let blocks = original_len.div_ceil(header.block_bytes as u64);
        if blocks.div_ceil(header.chunk_blocks as u64) != entries.len() as u64 {
            return Err(BulkError::IndexCorrupt(format!(
                "{} chunks for {original_len} bytes in chunks of {} blocks",
                entries.len(),
                header.chunk_blocks
            )));
        }
        Ok(BlockReader {
            input,
            header,
            entries,
            original_len,
            buf: Vec::new(),
            chunk: None,
            decoded: Vec::new(),
        })
    }

    /// Blocks in the container (the last may be partial).
    pub fn blocks(&self) -> u64 {
        self.original_len.div_ceil(self.header.block_bytes as u64)
    }

    /// Read, check and decode chunk `k` into `self.decoded`.
    fn load_chunk(&mut self, codec: &dyn BulkCodec, k: u64) -> Result<(), BulkError> {
        if self.chunk == Some(k) {
            return Ok(());
        }
        self.chunk = None;
        let cbk = self.header.chunk_blocks as u64;
        let e = self.entries[k as usize];
        self.input.seek(SeekFrom::Start(e.offset))?;
        let mut fb = [0u8; FRAME_BYTES];
        self.input
            .read_exact(&mut fb)
            .map_err(|_| BulkError::ChunkTruncated {
                chunk: k,
                what: "the frame is missing".into(),
            })?;
        let frame = Frame::parse(&fb);
        let bad = |what: String| BulkError::ChunkCorrupt { chunk: k, what };
        if frame.stored != e.stored || frame.crc != e.crc {
            return Err(bad("frame does not match the chunk index".into()));
        }
        check_frame(&self.header, codec, k, &frame)?;
        let expected = cbk.min(self.blocks() - k * cbk);
        if frame.blocks as u64 != expected {
            return Err(bad(format!(
                "holds {} blocks; the header and index say {expected}",
                frame.blocks
            )));
        }
        let mut pos = 0;
        read_stored(
            &mut self.input,
            k,
            frame.stored as usize,
            &mut self.buf,
            &mut pos,
        )?;
        let stored = frame.stored as usize;
        if crc32(&[&frame.head_bytes(), &self.buf[..stored]]) != frame.crc {
            return Err(bad("checksum mismatch".into()));
        }
        check_padding(k, &frame, &self.buf[..stored])?;
        decode_chunk(
            codec,
            self.header.len_width,
            self.header.group_blocks(),
            &StoredChunk {
                padded: &self.buf,
                bits: frame.bits as usize,
                blocks: frame.blocks as usize,
            },
            ChunkPos {
                chunk: k,
                first_block: k * cbk,
            },
            &mut self.decoded,
        )?;
        self.chunk = Some(k);
        Ok(())
    }

    /// Block `i`, truncated to the original length for the last block.
    pub fn read_block(&mut self, codec: &dyn BulkCodec, i: u64) -> Result<Vec<u8>, BulkError> {
        check_codec(&self.header, codec)?;
        if i >= self.blocks() {
            return Err(BulkError::BlockOutOfRange {
                block: i,
                blocks: self.blocks(),
            });
        }
        let cbk = self.header.chunk_blocks as u64;
        let k = i / cbk;
        self.load_chunk(codec, k)?;
        let bb = self.header.block_bytes as u64;
        let at = ((i - k * cbk) * bb) as usize;
        let end = ((i + 1) * bb).min(self.original_len);
        Ok(self.decoded[at..at + (end - i * bb) as usize].to_vec())
    }
}
