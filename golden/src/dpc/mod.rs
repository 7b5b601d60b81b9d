//! Dual Pattern Compression (DPC) with critical-sector data filtering
//! (DF-TRUC, DF-MAN): the bit-exact reference model (the thesis "Data
//! filtering ...", sections 3.4.1.2 and 3.4.1.3). The format
//! is specified in `docs/spec/dpc.md`.
//!
//! A block of `B` bytes is cut into `N = B / S` segments of `S` bytes
//! (little-endian integers of `W = 8 S` bits). Group `i` (bit plane `i`) is
//! bit `i` of every segment. A group that is all zeros or all ones is coded
//! as its one bit; any other group is sent as its `N` bits.
//!
//! Packet (MSB first, as everywhere in `golden`):
//!
//! ```text
//! plain / DF-MAN : C | payload
//! DF-TRUC        : M[0] .. M[K-1] | C | payload     (M = critical-sector mask)
//! payload, C = 1 : ES[0] .. ES[W-1] | ED(group 0) .. ED(group W-1)
//!                  ED(group i) = 1 bit (the pattern) if ES[i] else the group's n bits
//! payload, C = 0 : the n * S data bytes as they are (raw fallback)
//! ```
//!
//! `n` is the number of segments coded: `N` for plain DPC and DF-MAN, the
//! segments of the critical sectors only (in address order) for DF-TRUC.
//! C = 1 exactly when the coded payload is strictly shorter than the raw
//! bytes.

use crate::baselines::{BlockCodec, Compressed, DecodeError, Reader, VecBitWriter};

#[cfg(test)]
mod tests;
pub mod trace;

const NAME: &str = "DPC";

/// The thesis's configuration: 128-byte blocks, 4-byte segments, 32-byte
/// sectors (a 4-bit critical mask).
pub const BLOCK_BYTES: usize = 128;
pub const SEGMENT_BYTES: usize = 4;
pub const SECTOR_BYTES: usize = 32;
/// Largest block: 32 sectors of the thesis's 32 bytes (the RTL's packet
/// bus is `8 B + 1` bits, plus the mask for DF-TRUC).
pub const MAX_BLOCK_BYTES: usize = 1024;

/// Bad parameters or inputs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DpcError {
    #[error("DPC: segment size {0} bytes is not supported (1, 2, 4 or 8)")]
    SegmentSize(usize),
    #[error(
        "DPC: sector size {sector} bytes is not a positive multiple of the {segment}-byte segment"
    )]
    SectorSize { sector: usize, segment: usize },
    #[error("DPC: block size {block} bytes is not a multiple of the {sector}-byte sector")]
    BlockSize { block: usize, sector: usize },
    #[error("DPC: {sectors} sectors per block; 1 to 32 are supported")]
    SectorCount { sectors: usize },
    #[error("DPC: block size {block} bytes is above the {MAX_BLOCK_BYTES}-byte maximum")]
    BlockTooLarge { block: usize },
    #[error("DPC: block of {got} bytes, this codec takes {want}-byte blocks")]
    InputSize { got: usize, want: usize },
    #[error("DPC: critical mask {mask:#x} has bits beyond the {sectors} sectors")]
    Mask { mask: u32, sectors: usize },
}

/// Block, segment and sector sizes in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DpcParams {
    block: usize,
    segment: usize,
    sector: usize,
}

impl Default for DpcParams {
    fn default() -> Self {
        DpcParams {
            block: BLOCK_BYTES,
            segment: SEGMENT_BYTES,
            sector: SECTOR_BYTES,
        }
    }
}

impl DpcParams {
    /// Segments of 1, 2, 4 or 8 bytes; a sector a multiple of the segment;
    /// a block 1 to 32 sectors and at most [`MAX_BLOCK_BYTES`].
    pub fn new(block: usize, segment: usize, sector: usize) -> Result<DpcParams, DpcError> {
        if ![1, 2, 4, 8].contains(&segment) {
            return Err(DpcError::SegmentSize(segment));
        }
        if sector == 0 || !sector.is_multiple_of(segment) {
            return Err(DpcError::SectorSize { sector, segment });
        }
        if block == 0 || !block.is_multiple_of(sector) {
            return Err(DpcError::BlockSize { block, sector });
        }
        let sectors = block / sector;
        if !(1..=32).contains(&sectors) {
            return Err(DpcError::SectorCount { sectors });
        }
        if block > MAX_BLOCK_BYTES {
            return Err(DpcError::BlockTooLarge { block });
        }
        Ok(DpcParams {
            block,
            segment,
            sector,
        })
    }

    pub fn block_bytes(&self) -> usize {
        self.block
    }
    pub fn segment_bytes(&self) -> usize {
        self.segment
    }
    pub fn sector_bytes(&self) -> usize {
        self.sector
    }
    /// `N`: segments per block.
    pub fn segments(&self) -> usize {
        self.block / self.segment
    }
    /// `W`: groups (bit planes) = bits per segment.
    pub fn groups(&self) -> usize {
        8 * self.segment
    }
    /// `K`: sectors per block = bits of the critical mask.
    pub fn sectors(&self) -> usize {
        self.block / self.sector
    }
    /// Segments per sector.
    pub fn sector_segments(&self) -> usize {
        self.sector / self.segment
    }
    /// The mask with every sector critical.
    pub fn full_mask(&self) -> u32 {
        if self.sectors() == 32 {
            u32::MAX
        } else {
            (1u32 << self.sectors()) - 1
        }
    }
    /// Longest plain/DF-MAN packet: the flag plus the raw block.
    pub fn max_bits(&self) -> usize {
        1 + 8 * self.block
    }
    /// Longest DF-TRUC packet: the mask, the flag and the raw block.
    pub fn max_truc_bits(&self) -> usize {
        self.sectors() + self.max_bits()
    }
}

/// The filtering mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Plain DPC on the whole block (no mask).
    Plain,
    /// DF-TRUC: only the critical sectors are coded; the mask travels.
    Truc,
    /// DF-MAN: non-critical sectors zeroed, the better of original and
    /// manipulated block coded with plain DPC.
    Man,
}

impl Mode {
    pub const ALL: [Mode; 3] = [Mode::Plain, Mode::Truc, Mode::Man];

    pub fn name(self) -> &'static str {
        match self {
            Mode::Plain => "DPC",
            Mode::Truc => "DF-TRUC",
            Mode::Man => "DF-MAN",
        }
    }
}

/// What the encoder computed for the coded segments: the stage values the
/// RTL is compared against.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DpcTrace {
    /// The coded bytes (`n * S`): the block, the critical sectors packed in
    /// address order (DF-TRUC), or the chosen copy (DF-MAN).
    pub data: Vec<u8>,
    /// Segments coded.
    pub n: usize,
    /// Bit `i`: group `i` is all zeros or all ones (ES).
    pub es: u64,
    /// Bit `i`: bit `i` of every coded segment is 1 (the pattern bit when
    /// `es` bit `i` is set; 1 for an empty group).
    pub ones: u64,
    /// Coded payload length in bits (ES + ED, without C or the mask).
    pub coded_bits: usize,
    /// C: the coded payload is strictly shorter than the raw bytes.
    pub compressed: bool,
}

/// A DF-MAN result: the packet and which copy it codes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ManResult {
    pub packet: Compressed,
    /// The zero-filled copy was coded (it was strictly shorter).
    pub manipulated: bool,
}

/// The DPC codec for one set of parameters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Dpc {
    p: DpcParams,
}

/// Segment `j` of `data` as a little-endian integer.
fn segment(data: &[u8], s: usize, j: usize) -> u64 {
    data[j * s..(j + 1) * s]
        .iter()
        .rev()
        .fold(0u64, |acc, &b| (acc << 8) | b as u64)
}

impl Dpc {
    pub fn new(p: DpcParams) -> Dpc {
        Dpc { p }
    }

    pub fn params(&self) -> &DpcParams {
        &self.p
    }

    fn check_block(&self, block: &[u8]) -> Result<(), DpcError> {
        if block.len() != self.p.block {
            return Err(DpcError::InputSize {
                got: block.len(),
                want: self.p.block,
            });
        }
        Ok(())
    }

    fn check_mask(&self, mask: u32) -> Result<(), DpcError> {
        if mask & !self.p.full_mask() != 0 {
            return Err(DpcError::Mask {
                mask,
                sectors: self.p.sectors(),
            });
        }
        Ok(())
    }

    /// The critical sectors of `block`, in address order (DF-TRUC input).
    pub fn critical_bytes(&self, block: &[u8], mask: u32) -> Vec<u8> {
        block
            .chunks(self.p.sector)
            .enumerate()
            .filter(|(k, _)| mask >> k & 1 == 1)
            .flat_map(|(_, c)| c.iter().copied())
            .collect()
    }

    /// `block` with the non-critical sectors zeroed (DF-MAN's copy).
    pub fn manipulated(&self, block: &[u8], mask: u32) -> Vec<u8> {
        let mut out = block.to_vec();
        for (k, c) in out.chunks_mut(self.p.sector).enumerate() {
            if mask >> k & 1 == 0 {
                c.fill(0);
            }
        }
        out
    }

    /// ES, patterns and lengths for coding `data` (a whole number of
    /// segments, possibly none).
    pub fn analyse(&self, data: &[u8]) -> DpcTrace {
        let s = self.p.segment;
        let w = self.p.groups();
        let n = data.len() / s;
        let mask = if w == 64 { u64::MAX } else { (1u64 << w) - 1 };
        let (mut and, mut or) = (mask, 0u64);
        for j in 0..n {
            let v = segment(data, s, j);
            and &= v;
            or |= v;
        }
        let es = (and | !or) & mask;
        let k = es.count_ones() as usize;
        let coded_bits = w + k + (w - k) * n;
        DpcTrace {
            data: data.to_vec(),
            n,
            es,
            ones: and,
            coded_bits,
            compressed: coded_bits < 8 * data.len(),
        }
    }

    /// Append C and the payload for `data` to `out`.
    fn put_payload(&self, data: &[u8], out: &mut VecBitWriter) -> DpcTrace {
        let t = self.analyse(data);
        if !t.compressed {
            out.put(0, 1);
            out.put_bytes(data);
            return t;
        }
        out.put(1, 1);
        let w = self.p.groups();
        for i in 0..w {
            out.put(t.es >> i & 1, 1);
        }
        let segs: Vec<u64> = (0..t.n).map(|j| segment(data, self.p.segment, j)).collect();
        for i in 0..w {
            if t.es >> i & 1 == 1 {
                out.put(t.ones >> i & 1, 1);
            } else {
                for v in &segs {
                    out.put(v >> i & 1, 1);
                }
            }
        }
        t
    }

    /// Read C and a payload of `nbytes` data bytes.
    fn get_payload(&self, r: &mut Reader<'_>, nbytes: usize) -> Result<Vec<u8>, DecodeError> {
        if r.get(1)? == 0 {
            return r.bytes(nbytes);
        }
        let s = self.p.segment;
        let w = self.p.groups();
        let n = nbytes / s;
        let es = r.get(w as u32)?;
        // `get` returns the first bit read as the MSB: ES[0] is bit w-1.
        let mut segs = vec![0u64; n];
        for i in 0..w {
            if es >> (w - 1 - i) & 1 == 1 {
                if r.get(1)? == 1 {
                    for v in segs.iter_mut() {
                        *v |= 1 << i;
                    }
                }
            } else {
                for v in segs.iter_mut() {
                    *v |= r.get(1)? << i;
                }
            }
        }
        Ok(segs
            .iter()
            .flat_map(|v| v.to_le_bytes().into_iter().take(s))
            .collect())
    }

    /// Plain DPC packet of one block.
    pub fn encode(&self, block: &[u8]) -> Result<Compressed, DpcError> {
        self.check_block(block)?;
        let mut w = VecBitWriter::new();
        self.put_payload(block, &mut w);
        Ok(w.finish())
    }

    /// Decode a plain DPC (or DF-MAN) packet of `len` bits.
    pub fn decode(&self, bits: &[u8], len: usize) -> Result<Vec<u8>, DecodeError> {
        let mut r = Reader::new(NAME, bits, len)?;
        let out = self.get_payload(&mut r, self.p.block)?;
        r.finish()?;
        Ok(out)
    }

    /// DF-TRUC packet: the mask (sector 0 first), then C and the payload of
    /// the critical sectors only.
    pub fn encode_truc(&self, block: &[u8], mask: u32) -> Result<Compressed, DpcError> {
        self.check_block(block)?;
        self.check_mask(mask)?;
        let mut w = VecBitWriter::new();
        for k in 0..self.p.sectors() {
            w.put((mask >> k & 1) as u64, 1);
        }
        self.put_payload(&self.critical_bytes(block, mask), &mut w);
        Ok(w.finish())
    }

    /// Decode a DF-TRUC packet: the block with the critical sectors
    /// restored and the others zero, and the mask.
    pub fn decode_truc(&self, bits: &[u8], len: usize) -> Result<(Vec<u8>, u32), DecodeError> {
        let mut r = Reader::new("DPC/DF-TRUC", bits, len)?;
        let mut mask = 0u32;
        for k in 0..self.p.sectors() {
            mask |= (r.get(1)? as u32) << k;
        }
        let crit = self.get_payload(&mut r, mask.count_ones() as usize * self.p.sector)?;
        r.finish()?;
        let mut out = vec![0u8; self.p.block];
        let mut src = crit.chunks(self.p.sector);
        for (k, c) in out.chunks_mut(self.p.sector).enumerate() {
            if mask >> k & 1 == 1 {
                // `crit` holds exactly one chunk per set mask bit.
                if let Some(d) = src.next() {
                    c.copy_from_slice(d);
                }
            }
        }
        Ok((out, mask))
    }

    /// DF-MAN packet: plain DPC of the original block or of the copy with
    /// the non-critical sectors zeroed, whichever is strictly shorter
    /// (the original on a tie). Decode with [`Dpc::decode`].
    pub fn encode_man(&self, block: &[u8], mask: u32) -> Result<ManResult, DpcError> {
        self.check_block(block)?;
        self.check_mask(mask)?;
        let orig = self.encode(block)?;
        let man = self.encode(&self.manipulated(block, mask))?;
        Ok(if man.len < orig.len {
            ManResult {
                packet: man,
                manipulated: true,
            }
        } else {
            ManResult {
                packet: orig,
                manipulated: false,
            }
        })
    }

    /// Packet length in bits for `mode` without building it (the same as
    /// the encoders' `len`).
    pub fn packet_bits(&self, mode: Mode, block: &[u8], mask: u32) -> Result<usize, DpcError> {
        self.check_block(block)?;
        self.check_mask(mask)?;
        let len = |t: &DpcTrace| {
            1 + if t.compressed {
                t.coded_bits
            } else {
                8 * t.data.len()
            }
        };
        Ok(match mode {
            Mode::Plain => len(&self.analyse(block)),
            Mode::Truc => self.p.sectors() + len(&self.analyse(&self.critical_bytes(block, mask))),
            Mode::Man => {
                len(&self.analyse(block)).min(len(&self.analyse(&self.manipulated(block, mask))))
            }
        })
    }

    /// The trace of what `mode` codes for `block` and `mask`.
    pub fn trace(&self, mode: Mode, block: &[u8], mask: u32) -> Result<DpcTrace, DpcError> {
        self.check_block(block)?;
        self.check_mask(mask)?;
        Ok(match mode {
            Mode::Plain => self.analyse(block),
            Mode::Truc => self.analyse(&self.critical_bytes(block, mask)),
            Mode::Man => {
                let o = self.analyse(block);
                let m = self.analyse(&self.manipulated(block, mask));
                let l = |t: &DpcTrace| {
                    if t.compressed {
                        t.coded_bits
                    } else {
                        8 * t.data.len()
                    }
                };
                if l(&m) < l(&o) {
                    m
                } else {
                    o
                }
            }
        })
    }
}

impl BlockCodec for Dpc {
    fn name(&self) -> &str {
        NAME
    }

    fn block_bytes(&self) -> usize {
        self.p.block
    }

    fn compress(&self, block: &[u8]) -> Compressed {
        self.encode(block)
            .unwrap_or_else(|e| panic!("{e} (caller bug: BlockCodec::compress)"))
    }

    fn decompress(&self, bits: &[u8], len: usize) -> Result<Vec<u8>, DecodeError> {
        self.decode(bits, len)
    }

    fn max_bits(&self) -> usize {
        self.p.max_bits()
    }
}
