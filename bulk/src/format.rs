//! Byte layout of the container (`docs/spec/container.md`). All integers
//! are little-endian; checksums are CRC-32 (IEEE, as zlib/gzip).

use super::BulkError;

/// `\x89GMC\r\n\x1a\n`: high bit, name, and line-ending/EOF traps as in PNG.
pub const MAGIC: [u8; 8] = *b"\x89GMC\r\n\x1a\n";
/// Newest format version written and read (version 1 files are read too).
pub const VERSION: u16 = 2;
/// Version written when no version-2 feature is used.
pub const VERSION_1: u16 = 1;
pub const HEADER_BYTES: usize = 84;
/// Header flag: blocks are self-delimiting, chunks have no length table.
pub const FLAG_SELF_DELIMITING: u16 = 1;
/// Header flag (version 2): self-delimiting chunks start with a group
/// length table, one field per group of `2^group_log2` blocks.
pub const FLAG_GROUP_TABLE: u16 = 2;
/// Largest `group_log2` (groups of at most 256 blocks).
pub const MAX_GROUP_LOG2: u8 = 8;
pub const FRAME_BYTES: usize = 20;
/// Sequence-number value that starts the index section instead of a chunk.
pub const INDEX_MARKER: u32 = u32::MAX;
pub const INDEX_HEAD_BYTES: usize = 20;
pub const INDEX_ENTRY_BYTES: usize = 16;
pub const TRAILER_BYTES: usize = 32;
pub const TRAILER_MAGIC: [u8; 4] = *b"GMCE";
/// Original length field value when unknown at write time (stdin).
pub const UNKNOWN_LEN: u64 = u64::MAX;
/// Largest block a container may hold, in bytes (the largest any codec of
/// the bulk layer accepts: 1024-byte DPC blocks).
pub const MAX_BLOCK_BYTES: u32 = 1024;
/// Largest chunk (blocks per chunk times block size) a container may hold:
/// 16 MiB. Bounds what one chunk costs a reader whatever its header says.
pub const MAX_CHUNK_BYTES: u64 = 16 << 20;

// Callers check lengths first; a short slice reads as zeros, never panics.
fn u16_at(b: &[u8], at: usize) -> u16 {
    let v = b.get(at..at + 2).and_then(|s| s.try_into().ok());
    u16::from_le_bytes(v.unwrap_or([0; 2]))
}
fn u32_at(b: &[u8], at: usize) -> u32 {
    let v = b.get(at..at + 4).and_then(|s| s.try_into().ok());
    u32::from_le_bytes(v.unwrap_or([0; 4]))
}
fn u64_at(b: &[u8], at: usize) -> u64 {
    let v = b.get(at..at + 8).and_then(|s| s.try_into().ok());
    u64::from_le_bytes(v.unwrap_or([0; 8]))
}

pub fn crc32(parts: &[&[u8]]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    for p in parts {
        h.update(p);
    }
    h.finalize()
}

/// The fixed 84-byte container header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    pub algo: String,
    pub identity: [u8; 32],
    pub block_bytes: u32,
    pub chunk_blocks: u32,
    /// `None` when the input length was unknown at write time (the trailer
    /// and index always hold it).
    pub original_len: Option<u64>,
    pub self_delimiting: bool,
    /// Width in bits of one entry of a chunk's length table (0 when
    /// self-delimiting without a group table).
    pub len_width: u8,
    /// Self-delimiting blocks with a group length table (version 2): log2
    /// of the blocks per group.
    pub group_log2: Option<u8>,
}

impl Header {
    pub fn to_bytes(&self) -> [u8; HEADER_BYTES] {
        let mut b = [0u8; HEADER_BYTES];
        b[0..8].copy_from_slice(&MAGIC);
        let version = if self.group_log2.is_some() {
            VERSION
        } else {
            VERSION_1
        };
        b[8..10].copy_from_slice(&version.to_le_bytes());
        let mut flags = if self.self_delimiting {
            FLAG_SELF_DELIMITING
        } else {
            0
        };
        if self.group_log2.is_some() {
            flags |= FLAG_GROUP_TABLE;
        }
        b[10..12].copy_from_slice(&flags.to_le_bytes());
        let name = self.algo.as_bytes();
        let n = name.len().min(16);
        b[12..12 + n].copy_from_slice(&name[..n]);
        b[28..60].copy_from_slice(&self.identity);
        b[60..64].copy_from_slice(&self.block_bytes.to_le_bytes());
        b[64..68].copy_from_slice(&self.chunk_blocks.to_le_bytes());
        b[68..76].copy_from_slice(&self.original_len.unwrap_or(UNKNOWN_LEN).to_le_bytes());
        b[76] = self.len_width;
        b[77] = self.group_log2.unwrap_or(0);
        let crc = crc32(&[&b[..80]]);
        b[80..84].copy_from_slice(&crc.to_le_bytes());
        b
    }

    /// Parse and check the first [`HEADER_BYTES`] of `b` on their own
    /// terms (`docs/spec/container.md`, "Header"). Every header accepted
    /// here is written back byte for byte by [`to_bytes`](Self::to_bytes).
    pub fn parse(b: &[u8]) -> Result<Header, BulkError> {
        if b.len() < 8 || b[0..8] != MAGIC {
            return Err(BulkError::NotContainer);
        }
        if b.len() < HEADER_BYTES {
            return Err(BulkError::Truncated(format!(
                "{} bytes, shorter than the {HEADER_BYTES}-byte header",
                b.len()
            )));
        }
        let version = u16_at(b, 8);
        if version != VERSION && version != VERSION_1 {
            return Err(BulkError::Version {
                found: version,
                supported: VERSION,
            });
        }
        if crc32(&[&b[..80]]) != u32_at(b, 80) {
            return Err(BulkError::HeaderCorrupt("checksum mismatch".into()));
        }
        let flags = u16_at(b, 10);
        let name = &b[12..28];
        let name_end = name.iter().position(|&c| c == 0).unwrap_or(16);
        if name[name_end..].iter().any(|&c| c != 0) {
            return Err(BulkError::HeaderCorrupt(
                "nonzero bytes after the NUL that ends the algorithm name".into(),
            ));
        }
        let letters = &name[..name_end];
        if letters.is_empty() || !letters.iter().all(|c| c.is_ascii_alphanumeric()) {
            return Err(BulkError::HeaderCorrupt(format!(
                "algorithm name {:?} is not ASCII letters and digits",
                String::from_utf8_lossy(letters)
            )));
        }
        let algo = String::from_utf8_lossy(letters).into_owned();
        let mut identity = [0u8; 32];
        identity.copy_from_slice(&b[28..60]);
        let len = u64_at(b, 68);
        let h = Header {
            algo,
            identity,
            block_bytes: u32_at(b, 60),
            chunk_blocks: u32_at(b, 64),
            original_len: (len != UNKNOWN_LEN).then_some(len),
            self_delimiting: flags & FLAG_SELF_DELIMITING != 0,
            len_width: b[76],
            group_log2: (flags & FLAG_GROUP_TABLE != 0).then_some(b[77]),
        };
        let known = if version == VERSION_1 {
            FLAG_SELF_DELIMITING
        } else {
            FLAG_SELF_DELIMITING | FLAG_GROUP_TABLE
        };
        if flags & !known != 0 {
            return Err(BulkError::HeaderCorrupt(format!(
                "unknown flags {flags:#06x} for format version {version} (known: {known:#06x})"
            )));
        }
        let want_version = if h.group_log2.is_some() {
            VERSION
        } else {
            VERSION_1
        };
        if version != want_version {
            // (version 1 with flag bit 1 is refused above as an unknown flag)
            return Err(BulkError::HeaderCorrupt(format!(
                "format version {version} without flag bit 1 (group length table); such headers \
                 are version {want_version}"
            )));
        }
        if let Some(g) = h.group_log2 {
            if !h.self_delimiting {
                return Err(BulkError::HeaderCorrupt(
                    "flag bit 1 (group length table) without flag bit 0 (self-delimiting blocks)"
                        .into(),
                ));
            }
            if g > MAX_GROUP_LOG2 {
                return Err(BulkError::HeaderCorrupt(format!(
                    "group size 2^{g} blocks (g at most {MAX_GROUP_LOG2})"
                )));
            }
            if h.len_width == 0 || h.len_width > 32 {
                return Err(BulkError::HeaderCorrupt(format!(
                    "length-field width {} with a group length table (1..=32)",
                    h.len_width
                )));
            }
        } else if b[77] != 0 {
            return Err(BulkError::HeaderCorrupt("reserved byte 77 is not 0".into()));
        }
        if h.block_bytes == 0 || h.block_bytes > MAX_BLOCK_BYTES {
            return Err(BulkError::HeaderCorrupt(format!(
                "block size {} bytes (1..={MAX_BLOCK_BYTES})",
                h.block_bytes
            )));
        }
        if h.chunk_blocks == 0 || h.chunk_bytes() > MAX_CHUNK_BYTES {
            return Err(BulkError::HeaderCorrupt(format!(
                "{} blocks a chunk of {}-byte blocks (chunks hold at least one block and at most \
                 {MAX_CHUNK_BYTES} bytes)",
                h.chunk_blocks, h.block_bytes
            )));
        }
        if h.len_width > 32 || (h.self_delimiting && h.group_log2.is_none() && h.len_width != 0) {
            return Err(BulkError::HeaderCorrupt(format!(
                "length-field width {} {}",
                h.len_width,
                if h.self_delimiting {
                    "with self-delimiting blocks (must be 0)"
                } else {
                    "(at most 32)"
                }
            )));
        }
        if b[78..80] != [0, 0] {
            return Err(BulkError::HeaderCorrupt(
                "reserved bytes 78..80 are not 0".into(),
            ));
        }
        Ok(h)
    }

    /// Blocks per group of the group length table (1: a length per block).
    pub fn group_blocks(&self) -> usize {
        match (self.group_log2, self.self_delimiting) {
            (Some(g), _) => 1 << g,
            (None, false) => 1,
            (None, true) => 0,
        }
    }

    pub fn chunk_bytes(&self) -> u64 {
        self.block_bytes as u64 * self.chunk_blocks as u64
    }
}

/// The 20-byte frame before each chunk's stored bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frame {
    /// Sequence number (0, 1, ...).
    pub chunk: u32,
    /// Stored bytes that follow the frame.
    pub stored: u32,
    /// Bits used in them (length table plus payload).
    pub bits: u32,
    /// Blocks in the chunk.
    pub blocks: u32,
    /// CRC-32 of the first 16 frame bytes and the stored bytes.
    pub crc: u32,
}

impl Frame {
    pub fn head_bytes(&self) -> [u8; 16] {
        let mut b = [0u8; 16];
        b[0..4].copy_from_slice(&self.chunk.to_le_bytes());
        b[4..8].copy_from_slice(&self.stored.to_le_bytes());
        b[8..12].copy_from_slice(&self.bits.to_le_bytes());
        b[12..16].copy_from_slice(&self.blocks.to_le_bytes());
        b
    }

    pub fn compute_crc(&self, stored: &[u8]) -> u32 {
        crc32(&[&self.head_bytes(), stored])
    }

    pub fn to_bytes(&self) -> [u8; FRAME_BYTES] {
        let mut b = [0u8; FRAME_BYTES];
        b[..16].copy_from_slice(&self.head_bytes());
        b[16..20].copy_from_slice(&self.crc.to_le_bytes());
        b
    }

    pub fn parse(b: &[u8; FRAME_BYTES]) -> Frame {
        Frame {
            chunk: u32_at(b, 0),
            stored: u32_at(b, 4),
            bits: u32_at(b, 8),
            blocks: u32_at(b, 12),
            crc: u32_at(b, 16),
        }
    }
}

/// One chunk-index entry: where chunk k's frame starts, its stored size and
/// its CRC (the frame's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IndexEntry {
    pub offset: u64,
    pub stored: u32,
    pub crc: u32,
}

/// Index section: marker u32, chunk count u64, original length u64,
/// entries, CRC-32 of all of it.
pub fn index_bytes(entries: &[IndexEntry], original_len: u64) -> Vec<u8> {
    let mut b = Vec::with_capacity(INDEX_HEAD_BYTES + entries.len() * INDEX_ENTRY_BYTES + 4);
    b.extend_from_slice(&INDEX_MARKER.to_le_bytes());
    b.extend_from_slice(&(entries.len() as u64).to_le_bytes());
    b.extend_from_slice(&original_len.to_le_bytes());
    for e in entries {
        b.extend_from_slice(&e.offset.to_le_bytes());
        b.extend_from_slice(&e.stored.to_le_bytes());
        b.extend_from_slice(&e.crc.to_le_bytes());
    }
    let crc = crc32(&[&b]);
    b.extend_from_slice(&crc.to_le_bytes());
    b
}

/// Parse index entries (`body` is everything after the 20-byte index head
/// up to and including the CRC; `head` the 20 bytes). Any slice lengths are
/// accepted: wrong ones are errors, never panics.
pub fn parse_index(head: &[u8], body: &[u8]) -> Result<(Vec<IndexEntry>, u64), BulkError> {
    if head.len() != INDEX_HEAD_BYTES {
        return Err(BulkError::IndexCorrupt(format!(
            "index head of {} bytes, not {INDEX_HEAD_BYTES}",
            head.len()
        )));
    }
    if u32_at(head, 0) != INDEX_MARKER {
        return Err(BulkError::IndexCorrupt("no index marker".into()));
    }
    let count = u64_at(head, 4);
    let original_len = u64_at(head, 12);
    let want = count
        .checked_mul(INDEX_ENTRY_BYTES as u64)
        .and_then(|n| n.checked_add(4));
    if want != Some(body.len() as u64) {
        return Err(BulkError::IndexCorrupt(format!(
            "{} bytes for {count} entries",
            body.len()
        )));
    }
    let (entries, crc) = body.split_at(body.len() - 4);
    if crc32(&[head, entries]) != u32_at(crc, 0) {
        return Err(BulkError::IndexCorrupt("checksum mismatch".into()));
    }
    let v = entries
        .chunks_exact(INDEX_ENTRY_BYTES)
        .map(|e| IndexEntry {
            offset: u64_at(e, 0),
            stored: u32_at(e, 8),
            crc: u32_at(e, 12),
        })
        .collect();
    Ok((v, original_len))
}

/// Index entry count held by an index head (20 bytes).
pub fn index_count(head: &[u8; INDEX_HEAD_BYTES]) -> u64 {
    u64_at(head, 4)
}

/// The fixed 32-byte trailer at the very end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Trailer {
    pub index_offset: u64,
    pub chunk_count: u64,
    pub original_len: u64,
}

impl Trailer {
    pub fn to_bytes(&self) -> [u8; TRAILER_BYTES] {
        let mut b = [0u8; TRAILER_BYTES];
        b[0..8].copy_from_slice(&self.index_offset.to_le_bytes());
        b[8..16].copy_from_slice(&self.chunk_count.to_le_bytes());
        b[16..24].copy_from_slice(&self.original_len.to_le_bytes());
        let crc = crc32(&[&b[..24]]);
        b[24..28].copy_from_slice(&crc.to_le_bytes());
        b[28..32].copy_from_slice(&TRAILER_MAGIC);
        b
    }

    pub fn parse(b: &[u8; TRAILER_BYTES]) -> Result<Trailer, BulkError> {
        if b[28..32] != TRAILER_MAGIC {
            return Err(BulkError::Truncated(
                "no trailer at the end of the container (cut short?)".into(),
            ));
        }
        if crc32(&[&b[..24]]) != u32_at(b, 24) {
            return Err(BulkError::IndexCorrupt("trailer checksum mismatch".into()));
        }
        Ok(Trailer {
            index_offset: u64_at(b, 0),
            chunk_count: u64_at(b, 8),
            original_len: u64_at(b, 16),
        })
    }
}
