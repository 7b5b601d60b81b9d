//! A lenient model of a bulk container (`docs/spec/container.md`) and its
//! structure-aware mutations.
//!
//! Every byte of a container is covered by a CRC, so flipping bytes at
//! random almost never gets past the checksums. Here a container is split
//! into its parts (header, frames with their stored bytes, index head,
//! entries, index CRC, trailer); mutations change fields and whole parts,
//! then fix-ups recompute the CRCs and the layout fields (index entries,
//! counts, offsets), each most of the time but not always, so both the
//! checksum paths and the code behind them are reached. A few mutations
//! work on the final bytes (truncation at part boundaries, trailing bytes,
//! byte flips).

use bulk::format::{
    crc32, FRAME_BYTES, HEADER_BYTES, INDEX_ENTRY_BYTES, INDEX_HEAD_BYTES, INDEX_MARKER,
    TRAILER_BYTES, UNKNOWN_LEN,
};

use crate::rng::Rng;

// ---- little-endian field access (out of range: read 0, write nothing) ----

pub fn get_u16(b: &[u8], at: usize) -> u16 {
    b.get(at..at + 2)
        .map(|s| u16::from_le_bytes([s[0], s[1]]))
        .unwrap_or(0)
}

pub fn get_u32(b: &[u8], at: usize) -> u32 {
    b.get(at..at + 4)
        .and_then(|s| s.try_into().ok())
        .map(u32::from_le_bytes)
        .unwrap_or(0)
}

pub fn get_u64(b: &[u8], at: usize) -> u64 {
    b.get(at..at + 8)
        .and_then(|s| s.try_into().ok())
        .map(u64::from_le_bytes)
        .unwrap_or(0)
}

pub fn put_u16(b: &mut [u8], at: usize, v: u16) {
    if let Some(s) = b.get_mut(at..at + 2) {
        s.copy_from_slice(&v.to_le_bytes());
    }
}

pub fn put_u32(b: &mut [u8], at: usize, v: u32) {
    if let Some(s) = b.get_mut(at..at + 4) {
        s.copy_from_slice(&v.to_le_bytes());
    }
}

pub fn put_u64(b: &mut [u8], at: usize, v: u64) {
    if let Some(s) = b.get_mut(at..at + 8) {
        s.copy_from_slice(&v.to_le_bytes());
    }
}

/// Header field offsets.
pub mod hdr {
    pub const VERSION: usize = 8;
    pub const FLAGS: usize = 10;
    pub const ALGO: usize = 12;
    pub const IDENTITY: usize = 28;
    pub const BLOCK_BYTES: usize = 60;
    pub const CHUNK_BLOCKS: usize = 64;
    pub const ORIGINAL_LEN: usize = 68;
    pub const LEN_WIDTH: usize = 76;
    pub const RESERVED: usize = 77;
    pub const CRC: usize = 80;
}

/// Frame field offsets.
pub mod frm {
    pub const SEQ: usize = 0;
    pub const STORED: usize = 4;
    pub const BITS: usize = 8;
    pub const BLOCKS: usize = 12;
    pub const CRC: usize = 16;
}

/// One chunk: its 20-byte frame and the stored bytes that follow.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chunk {
    pub frame: [u8; FRAME_BYTES],
    pub stored: Vec<u8>,
}

impl Chunk {
    pub fn field(&self, at: usize) -> u32 {
        get_u32(&self.frame, at)
    }

    pub fn set(&mut self, at: usize, v: u32) {
        put_u32(&mut self.frame, at, v);
    }

    /// Recompute the frame CRC over its first 16 bytes and the stored bytes.
    pub fn fix_crc(&mut self) {
        let crc = crc32(&[&self.frame[..16], &self.stored]);
        self.set(frm::CRC, crc);
    }
}

/// A container split into its parts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Parts {
    pub header: Vec<u8>,
    pub chunks: Vec<Chunk>,
    pub index_head: [u8; INDEX_HEAD_BYTES],
    pub entries: Vec<[u8; INDEX_ENTRY_BYTES]>,
    pub index_crc: [u8; 4],
    pub trailer: [u8; TRAILER_BYTES],
}

/// Where the parts of a serialised container start.
#[derive(Clone, Debug, Default)]
pub struct Layout {
    pub frames: Vec<usize>,
    pub payloads: Vec<usize>,
    pub index: usize,
    pub entries: usize,
    pub index_crc: usize,
    pub trailer: usize,
    pub end: usize,
}

impl Parts {
    /// Split a container whose frames, index and trailer follow each other
    /// as the format says (the checksums are not checked). `None` when the
    /// bytes do not have that shape.
    pub fn parse(b: &[u8]) -> Option<Parts> {
        let header = b.get(..HEADER_BYTES)?.to_vec();
        let mut pos = HEADER_BYTES;
        let mut chunks = Vec::new();
        loop {
            let seq = b.get(pos..pos + 4)?;
            if get_u32(seq, 0) == INDEX_MARKER {
                break;
            }
            let frame: [u8; FRAME_BYTES] = b.get(pos..pos + FRAME_BYTES)?.try_into().ok()?;
            let s = get_u32(&frame, frm::STORED) as usize;
            let start = pos + FRAME_BYTES;
            let stored = b.get(start..start.checked_add(s)?)?.to_vec();
            pos = start + s;
            chunks.push(Chunk { frame, stored });
        }
        let index_head: [u8; INDEX_HEAD_BYTES] =
            b.get(pos..pos + INDEX_HEAD_BYTES)?.try_into().ok()?;
        pos += INDEX_HEAD_BYTES;
        let count = get_u64(&index_head, 4);
        let need = (count as u128) * INDEX_ENTRY_BYTES as u128 + 4 + TRAILER_BYTES as u128;
        if need != (b.len() - pos) as u128 {
            return None;
        }
        let mut entries = Vec::with_capacity(count as usize);
        for _ in 0..count {
            entries.push(b.get(pos..pos + INDEX_ENTRY_BYTES)?.try_into().ok()?);
            pos += INDEX_ENTRY_BYTES;
        }
        let index_crc: [u8; 4] = b.get(pos..pos + 4)?.try_into().ok()?;
        pos += 4;
        let trailer: [u8; TRAILER_BYTES] = b.get(pos..pos + TRAILER_BYTES)?.try_into().ok()?;
        Some(Parts {
            header,
            chunks,
            index_head,
            entries,
            index_crc,
            trailer,
        })
    }

    pub fn to_bytes(&self) -> (Vec<u8>, Layout) {
        let mut out = Vec::with_capacity(
            self.header.len()
                + self
                    .chunks
                    .iter()
                    .map(|c| FRAME_BYTES + c.stored.len())
                    .sum::<usize>()
                + INDEX_HEAD_BYTES
                + self.entries.len() * INDEX_ENTRY_BYTES
                + 4
                + TRAILER_BYTES,
        );
        let mut lay = Layout::default();
        out.extend_from_slice(&self.header);
        for c in &self.chunks {
            lay.frames.push(out.len());
            out.extend_from_slice(&c.frame);
            lay.payloads.push(out.len());
            out.extend_from_slice(&c.stored);
        }
        lay.index = out.len();
        out.extend_from_slice(&self.index_head);
        lay.entries = out.len();
        for e in &self.entries {
            out.extend_from_slice(e);
        }
        lay.index_crc = out.len();
        out.extend_from_slice(&self.index_crc);
        lay.trailer = out.len();
        out.extend_from_slice(&self.trailer);
        lay.end = out.len();
        (out, lay)
    }

    pub fn block_bytes(&self) -> u32 {
        get_u32(&self.header, hdr::BLOCK_BYTES)
    }

    pub fn chunk_blocks(&self) -> u32 {
        get_u32(&self.header, hdr::CHUNK_BLOCKS)
    }

    /// The original length the index holds.
    pub fn original_len(&self) -> u64 {
        get_u64(&self.index_head, 12)
    }

    pub fn fix_header_crc(&mut self) {
        if self.header.len() >= HEADER_BYTES {
            let crc = crc32(&[&self.header[..hdr::CRC]]);
            put_u32(&mut self.header, hdr::CRC, crc);
        }
    }

    pub fn fix_frame_crcs(&mut self) {
        for c in &mut self.chunks {
            c.fix_crc();
        }
    }

    /// Sequence numbers 0, 1, ... in file order.
    pub fn renumber(&mut self) {
        for (k, c) in self.chunks.iter_mut().enumerate() {
            c.set(frm::SEQ, k as u32);
        }
    }

    /// Index entries, chunk counts and the index offset as the frames are
    /// laid out (the original lengths are left as they are).
    pub fn sync_layout(&mut self) {
        let mut at = self.header.len() as u64;
        self.entries.clear();
        for c in &self.chunks {
            let mut e = [0u8; INDEX_ENTRY_BYTES];
            put_u64(&mut e, 0, at);
            put_u32(&mut e, 8, c.field(frm::STORED));
            put_u32(&mut e, 12, c.field(frm::CRC));
            self.entries.push(e);
            at += (FRAME_BYTES + c.stored.len()) as u64;
        }
        put_u64(&mut self.index_head, 4, self.entries.len() as u64);
        put_u64(&mut self.trailer, 0, at);
        put_u64(&mut self.trailer, 8, self.entries.len() as u64);
    }

    pub fn fix_index_crc(&mut self) {
        let mut h = Vec::with_capacity(INDEX_HEAD_BYTES + self.entries.len() * 16);
        h.extend_from_slice(&self.index_head);
        for e in &self.entries {
            h.extend_from_slice(e);
        }
        self.index_crc = crc32(&[&h]).to_le_bytes();
    }

    pub fn fix_trailer_crc(&mut self) {
        let crc = crc32(&[&self.trailer[..24]]);
        put_u32(&mut self.trailer, 24, crc);
    }

    /// Every checksum and layout field made consistent again.
    pub fn fix_all(&mut self) {
        self.fix_header_crc();
        self.fix_frame_crcs();
        self.sync_layout();
        self.fix_index_crc();
        self.fix_trailer_crc();
    }

    /// Set the original length in the header (when it holds one, or when
    /// `header_known`), the index and the trailer.
    pub fn set_original_len(&mut self, len: u64, header: Option<bool>) {
        let known = get_u64(&self.header, hdr::ORIGINAL_LEN) != UNKNOWN_LEN;
        match header {
            Some(true) => put_u64(&mut self.header, hdr::ORIGINAL_LEN, len),
            Some(false) => put_u64(&mut self.header, hdr::ORIGINAL_LEN, UNKNOWN_LEN),
            None if known => put_u64(&mut self.header, hdr::ORIGINAL_LEN, len),
            None => {}
        }
        put_u64(&mut self.index_head, 12, len);
        put_u64(&mut self.trailer, 16, len);
    }
}

// ---- interesting values -------------------------------------------------------

const EDGE_U32: [u32; 12] = [
    0,
    1,
    2,
    0xff,
    0x100,
    0xffff,
    0x1_0000,
    0x7fff_ffff,
    0x8000_0000,
    0xffff_fffe,
    u32::MAX,
    0x0800_0000,
];

const EDGE_U64: [u64; 14] = [
    0,
    1,
    u32::MAX as u64,
    1 << 32,
    1 << 40,
    1 << 59,
    1 << 60,
    (1 << 60) + 1,
    u64::MAX / 16,
    u64::MAX / 16 + 1,
    i64::MAX as u64,
    1 << 63,
    u64::MAX - 1,
    u64::MAX,
];

/// A new value for a 32-bit field holding `cur`; `ctx` are values that
/// mean something in this container (block counts, sizes).
pub fn u32_value(rng: &mut Rng, cur: u32, ctx: &[u32]) -> u32 {
    match rng.below(12) {
        0 => cur.wrapping_add(1),
        1 => cur.wrapping_sub(1),
        2 => cur.wrapping_add(rng.range(2, 64) as u32),
        3 => cur.wrapping_sub(rng.range(2, 64) as u32),
        4 | 5 => *rng.pick(&EDGE_U32),
        6 => cur ^ (1 << rng.below(32)),
        7 => cur.wrapping_mul(2),
        8 => cur / 2,
        9 | 10 if !ctx.is_empty() => {
            let v = *rng.pick(ctx);
            match rng.below(3) {
                0 => v,
                1 => v.wrapping_add(1),
                _ => v.wrapping_sub(1),
            }
        }
        _ => rng.next_u32(),
    }
}

/// A new value for a 64-bit field holding `cur`.
pub fn u64_value(rng: &mut Rng, cur: u64, ctx: &[u64]) -> u64 {
    match rng.below(12) {
        0 => cur.wrapping_add(1),
        1 => cur.wrapping_sub(1),
        2 => cur.wrapping_add(rng.range(2, 4096)),
        3 => cur.wrapping_sub(rng.range(2, 4096)),
        4 | 5 => *rng.pick(&EDGE_U64),
        6 => cur ^ (1 << rng.below(64)),
        7 => cur.wrapping_mul(2),
        8 => cur / 2,
        9 | 10 if !ctx.is_empty() => {
            let v = *rng.pick(ctx);
            match rng.below(3) {
                0 => v,
                1 => v.wrapping_add(1),
                _ => v.wrapping_sub(1),
            }
        }
        _ => rng.next_u64(),
    }
}

// ---- mutation -----------------------------------------------------------------

/// The containers a mutation may draw from: the seed, the same data
/// compressed with another chunk size, and a container of another
/// algorithm.
pub struct Sources<'a> {
    pub seed: &'a Parts,
    pub sibling: &'a Parts,
    pub foreign: &'a Parts,
}

/// A mutated container and the list of what was done to it.
pub struct Mutated {
    pub bytes: Vec<u8>,
    pub ops: Vec<String>,
}

/// Values that mean something in `p`: block counts, sizes, lengths.
fn ctx32(p: &Parts, s: &Sources<'_>) -> Vec<u32> {
    let mut v = vec![
        p.chunk_blocks(),
        p.block_bytes(),
        s.sibling.chunk_blocks(),
        p.chunks.len() as u32,
    ];
    for c in p.chunks.iter().take(4) {
        v.push(c.field(frm::BLOCKS));
        v.push(c.field(frm::STORED));
        v.push(c.field(frm::BITS));
    }
    v
}

fn ctx64(p: &Parts) -> Vec<u64> {
    let bb = p.block_bytes().max(1) as u64;
    let len = p.original_len();
    let blocks = len.div_ceil(bb);
    vec![
        len,
        blocks.wrapping_mul(bb),
        blocks.saturating_sub(1).wrapping_mul(bb),
        blocks.wrapping_add(1).wrapping_mul(bb),
        p.chunks.len() as u64,
        (p.chunk_blocks() as u64).wrapping_mul(bb),
        UNKNOWN_LEN,
    ]
}

fn header_op(rng: &mut Rng, p: &mut Parts, s: &Sources<'_>, ops: &mut Vec<String>) {
    let c32 = ctx32(p, s);
    match rng.below(12) {
        0 => {
            let v = u32_value(rng, p.block_bytes(), &[32, 64, 128, 256, 512, 1024, 33, 31]);
            put_u32(&mut p.header, hdr::BLOCK_BYTES, v);
            ops.push(format!("header.block_bytes={v}"));
        }
        1 | 2 => {
            let v = if rng.chance(1, 3) {
                *rng.pick(&[u32::MAX, u32::MAX - 1, 1 << 31, 1 << 24, 1 << 20])
            } else {
                u32_value(rng, p.chunk_blocks(), &c32)
            };
            put_u32(&mut p.header, hdr::CHUNK_BLOCKS, v);
            ops.push(format!("header.chunk_blocks={v}"));
        }
        3 => {
            let cur = get_u64(&p.header, hdr::ORIGINAL_LEN);
            let v = u64_value(rng, cur, &ctx64(p));
            put_u64(&mut p.header, hdr::ORIGINAL_LEN, v);
            ops.push(format!("header.original_len={v}"));
        }
        4 => {
            let v = match rng.below(4) {
                0 => rng.below(41) as u8,
                1 => p.header[hdr::LEN_WIDTH].wrapping_add(1),
                2 => p.header[hdr::LEN_WIDTH].wrapping_sub(1),
                _ => rng.next_u32() as u8,
            };
            p.header[hdr::LEN_WIDTH] = v;
            ops.push(format!("header.len_width={v}"));
        }
        5 => {
            let cur = get_u16(&p.header, hdr::FLAGS);
            let v = match rng.below(3) {
                0 => cur ^ 1,
                1 => cur | (1 << rng.below(16)),
                _ => rng.next_u32() as u16,
            };
            put_u16(&mut p.header, hdr::FLAGS, v);
            ops.push(format!("header.flags={v:#x}"));
        }
        6 => {
            let names: [&[u8]; 10] = [
                b"mpc",
                b"bdi",
                b"fpc",
                b"cpack",
                b"bpc",
                b"magbdi",
                b"dpc",
                b"",
                b"abcdefghijklmnop",
                b"\xff\xfe",
            ];
            let n = *rng.pick(&names);
            p.header[hdr::ALGO..hdr::IDENTITY].fill(0);
            p.header[hdr::ALGO..hdr::ALGO + n.len()].copy_from_slice(n);
            ops.push(format!("header.algo={:?}", String::from_utf8_lossy(n)));
        }
        7 => {
            let v = *rng.pick(&[0u16, 2, u16::MAX]);
            put_u16(&mut p.header, hdr::VERSION, v);
            ops.push(format!("header.version={v}"));
        }
        8 => {
            let i = hdr::IDENTITY + rng.index(32);
            p.header[i] ^= 1 << rng.below(8);
            ops.push(format!("header.identity byte {}", i - hdr::IDENTITY));
        }
        9 => {
            let i = hdr::RESERVED + rng.index(3);
            p.header[i] = rng.next_u32() as u8 | 1;
            ops.push(format!("header.reserved byte {}", i - hdr::RESERVED));
        }
        10 => {
            let i = rng.index(8);
            p.header[i] ^= 1 << rng.below(8);
            ops.push(format!("header.magic byte {i}"));
        }
        _ => {
            p.header = s.sibling.header.clone();
            ops.push(format!(
                "header from the same data at {} blocks a chunk",
                s.sibling.chunk_blocks()
            ));
        }
    }
}

fn frame_op(rng: &mut Rng, p: &mut Parts, s: &Sources<'_>, ops: &mut Vec<String>) {
    if p.chunks.is_empty() {
        return;
    }
    let k = if rng.bool() {
        0
    } else {
        rng.index(p.chunks.len())
    };
    let c32 = ctx32(p, s);
    let (at, name) = *rng.pick(&[
        (frm::SEQ, "sequence"),
        (frm::STORED, "stored"),
        (frm::BITS, "bits"),
        (frm::BLOCKS, "blocks"),
        (frm::BLOCKS, "blocks"),
        (frm::CRC, "crc"),
    ]);
    let cur = p.chunks[k].field(at);
    let v = if at == frm::BLOCKS && rng.chance(1, 3) {
        *rng.pick(&[p.chunk_blocks(), u32::MAX, 1 << 31, 0, 1])
    } else if at == frm::STORED && rng.chance(1, 3) {
        *rng.pick(&[u32::MAX, 1 << 31, 1 << 28, 1 << 24, 0])
    } else if at == frm::SEQ && rng.chance(1, 3) {
        INDEX_MARKER
    } else {
        u32_value(rng, cur, &c32)
    };
    p.chunks[k].set(at, v);
    ops.push(format!("frame[{k}].{name}={v}"));
}

fn payload_op(rng: &mut Rng, p: &mut Parts, ops: &mut Vec<String>) {
    if p.chunks.is_empty() {
        return;
    }
    let k = rng.index(p.chunks.len());
    let n = p.chunks.len();
    let c = &mut p.chunks[k];
    let len = c.stored.len();
    match rng.below(7) {
        0 | 1 => {
            let flips = rng.small(4);
            for _ in 0..flips {
                if len > 0 {
                    let i = rng.index(len);
                    c.stored[i] ^= 1 << rng.below(8);
                }
            }
            ops.push(format!("chunk[{k}] {flips} bit flips"));
        }
        2 => {
            let new = rng.index(len + 1);
            c.stored.truncate(new);
            ops.push(format!("chunk[{k}] stored bytes cut to {new} (frame kept)"));
        }
        3 => {
            let new = rng.index(len + 1);
            c.stored.truncate(new);
            c.set(frm::STORED, new as u32);
            let bits = c.field(frm::BITS).min(8 * new as u32);
            c.set(frm::BITS, bits);
            ops.push(format!("chunk[{k}] cut to {new} bytes, {bits} bits"));
        }
        4 => {
            let extra = rng.small(40) as usize;
            let b = rng.bytes(extra);
            c.stored.extend_from_slice(&b);
            let adjust = rng.bool();
            if adjust {
                c.set(frm::STORED, c.stored.len() as u32);
                if rng.bool() {
                    c.set(frm::BITS, 8 * c.stored.len() as u32);
                }
            }
            ops.push(format!(
                "chunk[{k}] {extra} bytes appended (frame {})",
                if adjust { "adjusted" } else { "kept" }
            ));
        }
        5 => {
            let j = rng.index(n);
            let other = p.chunks[j].clone();
            let c = &mut p.chunks[k];
            c.stored = other.stored.clone();
            if rng.bool() {
                c.set(frm::STORED, other.field(frm::STORED));
                c.set(frm::BITS, other.field(frm::BITS));
                c.set(frm::BLOCKS, other.field(frm::BLOCKS));
            }
            ops.push(format!("chunk[{k}] payload of chunk {j}"));
        }
        _ => {
            c.stored.fill(0);
            ops.push(format!("chunk[{k}] payload zeroed"));
        }
    }
}

fn list_op(rng: &mut Rng, p: &mut Parts, ops: &mut Vec<String>) {
    let n = p.chunks.len();
    if n == 0 {
        return;
    }
    let k = rng.index(n);
    match rng.below(6) {
        0 | 1 => {
            p.chunks.remove(k);
            ops.push(format!("chunk {k} dropped"));
        }
        2 => {
            let c = p.chunks[k].clone();
            p.chunks.insert(k, c);
            ops.push(format!("chunk {k} duplicated"));
        }
        3 => {
            let j = rng.index(n);
            p.chunks.swap(k, j);
            ops.push(format!("chunks {k} and {j} swapped"));
        }
        4 => {
            p.chunks.truncate(k);
            ops.push(format!("chunks from {k} dropped"));
        }
        _ => {
            p.chunks.clear();
            ops.push("all chunks dropped".into());
        }
    }
}

fn splice_op(rng: &mut Rng, p: &mut Parts, s: &Sources<'_>, ops: &mut Vec<String>) {
    match rng.below(6) {
        0 => {
            p.header = s.sibling.header.clone();
            ops.push(format!(
                "header from the same data at {} blocks a chunk",
                s.sibling.chunk_blocks()
            ));
        }
        1 | 2 if !s.sibling.chunks.is_empty() => {
            let j = rng.index(s.sibling.chunks.len());
            let c = s.sibling.chunks[j].clone();
            if p.chunks.is_empty() || rng.chance(1, 4) {
                let k = rng.index(p.chunks.len() + 1);
                p.chunks.insert(k, c);
                ops.push(format!("chunk {j} of the sibling inserted at {k}"));
            } else {
                let k = if rng.bool() {
                    j.min(p.chunks.len() - 1)
                } else {
                    rng.index(p.chunks.len())
                };
                p.chunks[k] = c;
                ops.push(format!("chunk {k} replaced by chunk {j} of the sibling"));
            }
        }
        3 => {
            p.chunks = s.sibling.chunks.clone();
            ops.push(format!(
                "all chunks from the same data at {} blocks a chunk",
                s.sibling.chunk_blocks()
            ));
        }
        4 => {
            p.header = s.foreign.header.clone();
            ops.push("header of another algorithm".into());
        }
        _ if !s.foreign.chunks.is_empty() => {
            let j = rng.index(s.foreign.chunks.len());
            let c = s.foreign.chunks[j].clone();
            if p.chunks.is_empty() {
                p.chunks.push(c);
            } else {
                let k = rng.index(p.chunks.len());
                p.chunks[k] = c;
            }
            ops.push(format!("a chunk of another algorithm (its chunk {j})"));
        }
        _ => {}
    }
}

fn length_op(rng: &mut Rng, p: &mut Parts, ops: &mut Vec<String>) {
    let cur = p.original_len();
    let v = u64_value(rng, cur, &ctx64(p));
    let header = match rng.below(4) {
        0 => Some(true),
        1 => Some(false),
        _ => None,
    };
    p.set_original_len(v, header);
    ops.push(format!(
        "original length {v} everywhere (header {header:?})"
    ));
}

/// Header chunk size and one frame's block count set to the same value.
fn chunk_size_op(rng: &mut Rng, p: &mut Parts, ops: &mut Vec<String>) {
    let v = *rng.pick(&[u32::MAX, u32::MAX - 1, 1 << 31, 1 << 27, 1 << 22, 1 << 20]);
    put_u32(&mut p.header, hdr::CHUNK_BLOCKS, v);
    if !p.chunks.is_empty() {
        let k = rng.index(p.chunks.len());
        let b = if rng.chance(3, 4) {
            v
        } else {
            rng.range(1, v as u64) as u32
        };
        p.chunks[k].set(frm::BLOCKS, b);
        ops.push(format!("header.chunk_blocks={v}, frame[{k}].blocks={b}"));
    } else {
        ops.push(format!("header.chunk_blocks={v}"));
    }
}

fn index_op(rng: &mut Rng, p: &mut Parts, s: &Sources<'_>, ops: &mut Vec<String>) {
    match rng.below(10) {
        0 | 1 => {
            let cur = get_u64(&p.index_head, 4);
            let v = u64_value(rng, cur, &[p.chunks.len() as u64]);
            put_u64(&mut p.index_head, 4, v);
            ops.push(format!("index.count={v}"));
        }
        2 => {
            let cur = get_u64(&p.index_head, 12);
            let v = u64_value(rng, cur, &ctx64(p));
            put_u64(&mut p.index_head, 12, v);
            ops.push(format!("index.original_len={v}"));
        }
        3 => {
            let v = u32_value(rng, INDEX_MARKER, &[]);
            put_u32(&mut p.index_head, 0, v);
            ops.push(format!("index.marker={v:#x}"));
        }
        4 | 5 if !p.entries.is_empty() => {
            let k = rng.index(p.entries.len());
            let e = &mut p.entries[k];
            match rng.below(3) {
                0 => {
                    let v = u64_value(rng, get_u64(e, 0), &[HEADER_BYTES as u64]);
                    put_u64(e, 0, v);
                    ops.push(format!("index.entry[{k}].offset={v}"));
                }
                1 => {
                    let v = u32_value(rng, get_u32(e, 8), &[]);
                    put_u32(e, 8, v);
                    ops.push(format!("index.entry[{k}].stored={v}"));
                }
                _ => {
                    let v = u32_value(rng, get_u32(e, 12), &[]);
                    put_u32(e, 12, v);
                    ops.push(format!("index.entry[{k}].crc={v}"));
                }
            }
        }
        6 if !p.entries.is_empty() => {
            let k = rng.index(p.entries.len());
            if rng.bool() {
                p.entries.remove(k);
                ops.push(format!("index.entry[{k}] dropped"));
            } else {
                let e = p.entries[k];
                p.entries.insert(k, e);
                ops.push(format!("index.entry[{k}] duplicated"));
            }
            if rng.bool() {
                put_u64(&mut p.index_head, 4, p.entries.len() as u64);
                ops.push("index.count adjusted".into());
            }
        }
        7 => {
            let (at, name) = *rng.pick(&[
                (0, "index_offset"),
                (8, "chunk_count"),
                (16, "original_len"),
            ]);
            let cur = get_u64(&p.trailer, at);
            let v = u64_value(rng, cur, &ctx64(p));
            put_u64(&mut p.trailer, at, v);
            ops.push(format!("trailer.{name}={v}"));
        }
        8 => {
            let i = 28 + rng.index(4);
            p.trailer[i] ^= 1 << rng.below(8);
            ops.push(format!("trailer magic byte {}", i - 28));
        }
        _ => {
            p.index_head = s.sibling.index_head;
            p.entries = s.sibling.entries.clone();
            p.index_crc = s.sibling.index_crc;
            p.trailer = s.sibling.trailer;
            ops.push("index and trailer of the sibling".into());
        }
    }
}

/// Cut points at every kind of boundary of a serialised container.
fn cut_points(rng: &mut Rng, lay: &Layout) -> usize {
    let mut v = vec![
        0,
        8,
        rng.range(1, HEADER_BYTES as u64 - 1) as usize,
        HEADER_BYTES,
    ];
    if !lay.frames.is_empty() {
        let k = rng.index(lay.frames.len());
        let f = lay.frames[k];
        let pl = lay.payloads[k];
        let next = lay.frames.get(k + 1).copied().unwrap_or(lay.index);
        v.extend([
            f,
            f + 4,
            f + rng.range(1, FRAME_BYTES as u64 - 1) as usize,
            pl,
        ]);
        if next > pl {
            v.push(pl + rng.index(next - pl));
        }
    }
    v.extend([
        lay.index,
        lay.index + 4,
        lay.index + rng.range(1, INDEX_HEAD_BYTES as u64 - 1) as usize,
        lay.entries,
        lay.index_crc,
        lay.trailer,
        lay.trailer + rng.range(1, TRAILER_BYTES as u64 - 1) as usize,
        lay.end.saturating_sub(1),
    ]);
    if lay.index_crc > lay.entries {
        v.push(lay.entries + rng.index(lay.index_crc - lay.entries));
    }
    let at = *rng.pick(&v);
    at.min(lay.end)
}

fn bytes_op(rng: &mut Rng, b: &mut Vec<u8>, lay: &Layout, ops: &mut Vec<String>) {
    match rng.below(6) {
        0..=2 => {
            let at = cut_points(rng, lay);
            b.truncate(at);
            ops.push(format!("cut at byte {at}"));
        }
        3 => {
            let n = match rng.below(3) {
                0 => 1,
                1 => TRAILER_BYTES,
                _ => rng.small(64) as usize,
            };
            let extra = if n == TRAILER_BYTES && b.len() >= TRAILER_BYTES {
                b[b.len() - TRAILER_BYTES..].to_vec()
            } else {
                rng.bytes(n)
            };
            b.extend_from_slice(&extra);
            ops.push(format!("{n} trailing bytes"));
        }
        4 => {
            let n = rng.small(4);
            for _ in 0..n {
                if !b.is_empty() {
                    let i = rng.index(b.len());
                    b[i] ^= 1 << rng.below(8);
                }
            }
            ops.push(format!("{n} raw bit flips"));
        }
        _ => {
            let at = cut_points(rng, lay).min(b.len());
            if rng.bool() {
                let n = rng.small(8) as usize;
                let ins = rng.bytes(n);
                b.splice(at..at, ins);
                ops.push(format!("{n} bytes inserted at {at}"));
            } else {
                let n = (rng.small(8) as usize).min(b.len() - at);
                b.drain(at..at + n);
                ops.push(format!("{n} bytes deleted at {at}"));
            }
        }
    }
}

/// Mutate `s.seed`: a few structural mutations, fix-ups (each usually
/// applied), field mutations of the index and trailer, the checksums, and
/// sometimes a mutation of the final bytes.
pub fn mutate(rng: &mut Rng, s: &Sources<'_>) -> Mutated {
    let mut p = s.seed.clone();
    let mut ops = Vec::new();
    let n = rng.small(5);
    let mut late = 0;
    for _ in 0..n {
        match rng.below(20) {
            0..=3 => header_op(rng, &mut p, s, &mut ops),
            4..=7 => frame_op(rng, &mut p, s, &mut ops),
            8..=10 => payload_op(rng, &mut p, &mut ops),
            11 | 12 => list_op(rng, &mut p, &mut ops),
            13 | 14 => splice_op(rng, &mut p, s, &mut ops),
            15 => length_op(rng, &mut p, &mut ops),
            16 => chunk_size_op(rng, &mut p, &mut ops),
            _ => late += 1,
        }
    }
    // frame checksums over the mutated frames and payloads
    match rng.below(20) {
        0 => ops.push("frame CRCs not fixed".into()),
        1 if !p.chunks.is_empty() => {
            let skip = rng.index(p.chunks.len());
            for (k, c) in p.chunks.iter_mut().enumerate() {
                if k != skip {
                    c.fix_crc();
                }
            }
            ops.push(format!("frame CRCs fixed but chunk {skip}'s"));
        }
        _ => p.fix_frame_crcs(),
    }
    if rng.chance(1, 4) {
        p.renumber();
        ops.push("sequence numbers renumbered".into());
    }
    if rng.chance(17, 20) {
        p.sync_layout();
    } else {
        ops.push("index layout not synced".into());
    }
    for _ in 0..late {
        index_op(rng, &mut p, s, &mut ops);
    }
    if rng.chance(23, 25) {
        p.fix_header_crc();
    } else {
        ops.push("header CRC not fixed".into());
    }
    if rng.chance(23, 25) {
        p.fix_index_crc();
    } else {
        ops.push("index CRC not fixed".into());
    }
    if rng.chance(23, 25) {
        p.fix_trailer_crc();
    } else {
        ops.push("trailer CRC not fixed".into());
    }
    let (mut bytes, lay) = p.to_bytes();
    if rng.chance(1, 4) {
        for _ in 0..rng.small(2) {
            bytes_op(rng, &mut bytes, &lay, &mut ops);
        }
    }
    Mutated { bytes, ops }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny() -> Parts {
        let mut header = vec![0u8; HEADER_BYTES];
        header[..8].copy_from_slice(&bulk::format::MAGIC);
        let mut p = Parts {
            header,
            chunks: vec![
                Chunk {
                    frame: [0; FRAME_BYTES],
                    stored: vec![1, 2, 3],
                },
                Chunk {
                    frame: [0; FRAME_BYTES],
                    stored: vec![4],
                },
            ],
            index_head: [0; INDEX_HEAD_BYTES],
            entries: Vec::new(),
            index_crc: [0; 4],
            trailer: [0; TRAILER_BYTES],
        };
        put_u32(&mut p.index_head, 0, INDEX_MARKER);
        p.trailer[28..].copy_from_slice(&bulk::format::TRAILER_MAGIC);
        for c in &mut p.chunks {
            c.set(frm::STORED, c.stored.len() as u32);
        }
        p.renumber();
        p.fix_all();
        p
    }

    #[test]
    fn parse_inverts_to_bytes_and_layout_is_consistent() {
        let p = tiny();
        let (b, lay) = p.to_bytes();
        assert_eq!(Parts::parse(&b), Some(p.clone()));
        assert_eq!(lay.frames, vec![84, 84 + 23]);
        assert_eq!(get_u64(&b, lay.trailer), lay.index as u64);
        assert_eq!(get_u64(&p.entries[1], 0), 84 + 23);
        // a cut container has no parts
        assert_eq!(Parts::parse(&b[..b.len() - 1]), None);
    }

    #[test]
    fn mutations_change_the_container_and_stay_deterministic() {
        let p = tiny();
        let s = Sources {
            seed: &p,
            sibling: &p,
            foreign: &p,
        };
        let (orig, _) = p.to_bytes();
        let mut a = Rng::new(3);
        let mut b = Rng::new(3);
        let mut changed = 0;
        for _ in 0..200 {
            let x = mutate(&mut a, &s);
            let y = mutate(&mut b, &s);
            assert_eq!(x.bytes, y.bytes);
            changed += (x.bytes != orig) as u32;
        }
        assert!(
            changed > 150,
            "only {changed} of 200 mutations changed bytes"
        );
    }
}
