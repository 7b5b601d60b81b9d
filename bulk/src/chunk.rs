//! Packing the compressed blocks of one chunk (`docs/spec/container.md`,
//! "Chunk payload").
//!
//! * Self-delimiting codecs (MPC): the blocks' bit strings back to back,
//!   MSB first, no padding between blocks; block i is found by decoding
//!   blocks 0..i (each decode returns its length).
//! * Other codecs: a length table (one `len_width`-bit field per block)
//!   followed by the blocks' bit strings back to back; block i starts at
//!   the sum of the lengths before it.
//!
//! The chunk ends with zero bits up to a byte boundary; the readers refuse
//! a chunk whose padding bits are not all zero.

use super::bits::{extract, read_field, BitSink, EXTRACT_MAX, EXTRACT_PAD};
use super::codec::BulkCodec;
use super::BulkError;

/// Bits needed for a block length in `0..=max_bits`.
pub fn len_width(max_bits: usize) -> u8 {
    (usize::BITS - max_bits.leading_zeros()) as u8
}

/// Reusable buffers for encoding chunks.
#[derive(Default)]
pub struct ChunkEncoder {
    pub sink: BitSink,
    scratch: BitSink,
    lens: Vec<u32>,
}

impl ChunkEncoder {
    /// Encode `data` (a whole number of blocks); the stored bytes are in
    /// `self.sink.bytes()` afterwards. Returns the bits used. `group` is
    /// the blocks per length-table field: 0 for self-delimiting blocks
    /// without a table, 1 for a length per block, G for a group length
    /// table; `width` the field width.
    pub fn encode(&mut self, codec: &dyn BulkCodec, data: &[u8], width: u8, group: usize) -> u32 {
        let bb = codec.block_bytes();
        self.sink.clear();
        if group == 0 {
            for block in data.chunks_exact(bb) {
                codec.compress_block(block, &mut self.sink);
            }
        } else {
            self.scratch.clear();
            self.lens.clear();
            let mut acc = 0u32;
            for (i, block) in data.chunks_exact(bb).enumerate() {
                acc += codec.compress_block(block, &mut self.scratch) as u32;
                if (i + 1).is_multiple_of(group) {
                    self.lens.push(acc);
                    acc = 0;
                }
            }
            if !(data.len() / bb).is_multiple_of(group) {
                self.lens.push(acc);
            }
            for &l in &self.lens {
                self.sink.put(l, width as u32);
            }
            let n = self.scratch.bit_len();
            let payload = self.scratch.finish();
            self.sink.put_bits(payload, n);
        }
        let bits = self.sink.bit_len() as u32;
        self.sink.finish();
        bits
    }
}

/// Where a chunk's contents are checked: its sequence number and the global
/// index of its first block (for error messages).
#[derive(Clone, Copy, Debug)]
pub struct ChunkPos {
    pub chunk: u64,
    pub first_block: u64,
}

/// A chunk as read back: stored bytes followed by [`EXTRACT_PAD`] zeros.
pub struct StoredChunk<'a> {
    pub padded: &'a [u8],
    pub bits: usize,
    pub blocks: usize,
}

fn corrupt(pos: ChunkPos, what: String) -> BulkError {
    BulkError::ChunkCorrupt {
        chunk: pos.chunk,
        what,
    }
}

/// Decode every block of a chunk in order, calling `emit(block)` for each.
/// The blocks must use the whole payload exactly.
fn walk(
    codec: &dyn BulkCodec,
    width: u8,
    group: usize,
    c: &StoredChunk<'_>,
    pos: ChunkPos,
    mut emit: impl FnMut(&[u8]),
) -> Result<(), BulkError> {
    let bb = codec.block_bytes();
    let max = codec.max_bits();
    let mut tmp = [0u8; EXTRACT_MAX];
    let mut block = [0u8; EXTRACT_MAX];
    if bb > block.len() || max > 8 * EXTRACT_MAX {
        return Err(BulkError::Config(format!(
            "{}: blocks of {bb} bytes / {max} bits exceed the bulk layer's limits",
            codec.algo()
        )));
    }
    let out = &mut block[..bb];
    let block_err = |i: usize, msg: String| BulkError::Block {
        chunk: pos.chunk,
        block: pos.first_block + i as u64,
        msg,
    };
    if codec.self_delimiting() && group > 0 {
        let w = width as usize;
        let groups = c.blocks.div_ceil(group);
        let table = groups * w;
        if table > c.bits {
            return Err(corrupt(
                pos,
                format!(
                    "group length table of {table} bits exceeds the {} bits",
                    c.bits
                ),
            ));
        }
        let mut at = table;
        for j in 0..groups {
            let glen = read_field(c.padded, j * w, width as u32) as usize;
            let end = at + glen;
            if end > c.bits {
                return Err(corrupt(pos, format!("group {j} runs past the payload")));
            }
            for i in j * group..((j + 1) * group).min(c.blocks) {
                let avail = (end - at).min(max);
                if avail == 0 {
                    return Err(corrupt(
                        pos,
                        format!("group {j} of {glen} bits ends before block {i}"),
                    ));
                }
                let used = codec
                    .decompress_at(c.padded, at, avail, out)
                    .map_err(|m| block_err(i, m))?;
                if used == 0 {
                    return Err(block_err(i, "empty block".into()));
                }
                at += used;
                emit(out);
            }
            if at != end {
                return Err(corrupt(
                    pos,
                    format!("group {j}: the table says {glen} bits, its blocks use fewer"),
                ));
            }
        }
        if at != c.bits {
            return Err(corrupt(
                pos,
                format!("groups sum to {at} bits, the chunk holds {}", c.bits),
            ));
        }
    } else if codec.self_delimiting() {
        let mut at = 0usize;
        for i in 0..c.blocks {
            let avail = (c.bits - at).min(max);
            if avail == 0 {
                return Err(corrupt(
                    pos,
                    format!("payload of {} bits ends before block {i}", c.bits),
                ));
            }
            let used = codec
                .decompress_at(c.padded, at, avail, out)
                .map_err(|m| block_err(i, m))?;
            if used == 0 {
                return Err(block_err(i, "empty block".into()));
            }
            at += used;
            emit(out);
        }
        if at != c.bits {
            return Err(corrupt(
                pos,
                format!("{} bits left over after the last block", c.bits - at),
            ));
        }
    } else {
        let w = width as usize;
        let table = c.blocks * w;
        if table > c.bits {
            return Err(corrupt(
                pos,
                format!("length table of {table} bits exceeds the {} bits", c.bits),
            ));
        }
        let mut at = table;
        for i in 0..c.blocks {
            let len = read_field(c.padded, i * w, width as u32) as usize;
            if len > max {
                return Err(block_err(i, format!("length {len} exceeds {max} bits")));
            }
            if at + len > c.bits {
                return Err(corrupt(pos, format!("block {i} runs past the payload")));
            }
            extract(c.padded, at, len, &mut tmp);
            codec
                .decompress_block(&tmp[..len.div_ceil(8)], len, out)
                .map_err(|m| block_err(i, m))?;
            emit(out);
            at += len;
        }
        if at != c.bits {
            return Err(corrupt(
                pos,
                format!("lengths sum to {at} bits, the chunk holds {}", c.bits),
            ));
        }
    }
    Ok(())
}

/// Decode a whole chunk into `out` (cleared first; `blocks * block_bytes`
/// bytes afterwards). `out` grows only as blocks decode, so a frame that
/// claims many blocks costs memory only for the blocks its bits really
/// hold.
pub fn decode_chunk(
    codec: &dyn BulkCodec,
    width: u8,
    group: usize,
    c: &StoredChunk<'_>,
    pos: ChunkPos,
    out: &mut Vec<u8>,
) -> Result<(), BulkError> {
    out.clear();
    if c.blocks == 0 {
        return Ok(());
    }
    if c.padded.len() < c.bits.div_ceil(8) + EXTRACT_PAD {
        return Err(corrupt(
            pos,
            "stored bytes shorter than its bit count".into(),
        ));
    }
    walk(codec, width, group, c, pos, |b| out.extend_from_slice(b))
}
