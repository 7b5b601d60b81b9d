//! MSB-first bit packing for chunk payloads (same bit order as
//! `golden::bits`): an append-only sink and an extractor that re-aligns the
//! bits of one block found at any bit offset.

use golden::bits::{SliceWriter, SLICE_WRITER_SLACK};

/// Growable MSB-first bit sink; reused across chunks (`clear` keeps the
/// buffer, whose stale bytes are overwritten as bits are appended).
#[derive(Clone, Debug, Default)]
pub struct BitSink {
    /// Bytes `..bits.div_ceil(8)` hold the bits; later bytes are scratch.
    buf: Vec<u8>,
    bits: usize,
    /// Length of the byte string after [`finish`](Self::finish).
    end: usize,
}

impl BitSink {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn with_capacity(bytes: usize) -> Self {
        BitSink {
            buf: vec![0; bytes],
            ..Self::default()
        }
    }

    pub fn clear(&mut self) {
        self.bits = 0;
        self.end = 0;
    }

    /// Bits written so far.
    pub fn bit_len(&self) -> usize {
        self.bits
    }

    /// The buffer, with at least `bytes` bytes from the current byte on.
    #[inline]
    fn room(&mut self, bytes: usize) -> &mut [u8] {
        let need = self.bits / 8 + bytes;
        if self.buf.len() < need {
            let grown = need.max(2 * self.buf.len()).max(4096);
            self.buf.resize(grown, 0);
        }
        &mut self.buf
    }

    /// Append the low `width` (<= 32) bits of `value`, MSB first.
    #[inline]
    pub fn put(&mut self, value: u32, width: u32) {
        debug_assert!(width <= 32);
        let bits = self.bits;
        let mut w = SliceWriter::new(self.room(4 + SLICE_WRITER_SLACK), bits);
        w.put((value as u64) & ((1u64 << width) - 1), width);
        self.bits = w.finish();
    }

    /// Append the first `nbits` bits of `bytes` (MSB first from byte 0).
    #[inline]
    pub fn put_bits(&mut self, bytes: &[u8], nbits: usize) {
        debug_assert!(bytes.len() * 8 >= nbits);
        let bits = self.bits;
        let mut w = SliceWriter::new(self.room(nbits / 8 + 4 + SLICE_WRITER_SLACK), bits);
        let words = nbits / 32;
        for c in bytes[..4 * words].chunks_exact(4) {
            w.put(u32::from_be_bytes([c[0], c[1], c[2], c[3]]) as u64, 32);
            w.flush();
        }
        let rest = nbits - 32 * words;
        if rest > 0 {
            let mut tail = [0u8; 4];
            let n = rest.div_ceil(8);
            tail[..n].copy_from_slice(&bytes[4 * words..4 * words + n]);
            w.put(
                (u32::from_be_bytes(tail) >> (32 - rest)) as u64,
                rest as u32,
            );
        }
        self.bits = w.finish();
    }

    /// Let `write(buf, bit)` append bits at bit `bit` of `buf` (which has
    /// `room` bytes from byte `bit / 8` on); it returns the bits appended.
    #[inline]
    pub fn put_with(
        &mut self,
        room: usize,
        write: impl FnOnce(&mut [u8], usize) -> usize,
    ) -> usize {
        let bits = self.bits;
        let n = write(self.room(room), bits);
        self.bits += n;
        n
    }

    /// Clear the bits past the end in the last byte and return the bytes.
    pub fn finish(&mut self) -> &[u8] {
        self.end = self.bits.div_ceil(8);
        self.room(1);
        if !self.bits.is_multiple_of(8) {
            self.buf[self.end - 1] &= 0xffu8 << (8 - self.bits % 8);
        }
        &self.buf[..self.end]
    }

    /// The bytes after [`finish`](Self::finish).
    pub fn bytes(&self) -> &[u8] {
        &self.buf[..self.end]
    }
}

/// Bytes a source buffer must have past its last payload byte so that
/// [`extract`] can use unaligned 8-byte loads.
pub const EXTRACT_PAD: usize = 16;

/// Widest compressed block [`extract`] handles, in bytes: a raw block of
/// [`MAX_BLOCK_BYTES`](super::format::MAX_BLOCK_BYTES) plus its header
/// bits, rounded up to whole 8-byte words.
pub const EXTRACT_MAX: usize = 1040;

/// Copy `nbits` (<= 8 * EXTRACT_MAX) bits starting at bit `pos` of `src` into `dst`,
/// re-aligned to bit 0; bits past `nbits` are zero. `src` must hold
/// [`EXTRACT_PAD`] bytes past `(pos + nbits).div_ceil(8)`.
#[inline]
pub fn extract(src: &[u8], pos: usize, nbits: usize, dst: &mut [u8; EXTRACT_MAX]) {
    debug_assert!(nbits <= 8 * EXTRACT_MAX);
    let start = pos / 8;
    let sh = (pos % 8) as u32;
    let nbytes = nbits.div_ceil(8);
    let words = nbytes.div_ceil(8);
    for j in 0..words {
        let at = start + 8 * j;
        let hi = u64::from_be_bytes(src[at..at + 8].try_into().unwrap_or([0; 8]));
        let w = if sh == 0 {
            hi
        } else {
            (hi << sh) | (src[at + 8] >> (8 - sh)) as u64
        };
        dst[8 * j..8 * j + 8].copy_from_slice(&w.to_be_bytes());
    }
    for b in dst[nbytes..8 * words].iter_mut() {
        *b = 0;
    }
    if !nbits.is_multiple_of(8) {
        dst[nbytes - 1] &= 0xffu8 << (8 - nbits % 8);
    }
}

/// Read `width` (<= 32) bits at bit `pos` of `src` (which must hold
/// [`EXTRACT_PAD`] bytes of padding).
#[inline]
pub fn read_field(src: &[u8], pos: usize, width: u32) -> u32 {
    if width == 0 {
        return 0;
    }
    let at = pos / 8;
    let w = u64::from_be_bytes(src[at..at + 8].try_into().unwrap_or([0; 8]));
    ((w << (pos % 8)) >> (64 - width)) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sink_and_extract_round_trip() {
        let mut s = BitSink::new();
        let fields: Vec<(u32, u32)> = (0..200u32)
            .map(|i| (i.wrapping_mul(2_654_435_761), 1 + i % 32))
            .collect();
        for &(v, w) in &fields {
            s.put(v, w);
        }
        let total = s.bit_len();
        let mut buf = s.finish().to_vec();
        buf.resize(buf.len() + EXTRACT_PAD, 0);
        let mut pos = 0;
        for &(v, w) in &fields {
            let mask = if w == 32 { u32::MAX } else { (1 << w) - 1 };
            assert_eq!(read_field(&buf, pos, w), v & mask);
            let mut d = [0u8; EXTRACT_MAX];
            extract(&buf, pos, w as usize, &mut d);
            let got = u32::from_be_bytes([d[0], d[1], d[2], d[3]]) >> (32 - w);
            assert_eq!(got, v & mask);
            pos += w as usize;
        }
        assert_eq!(pos, total);
        // put_bits at odd alignment
        let mut s = BitSink::new();
        s.put(1, 3);
        let data: Vec<u8> = (0..33u8).map(|i| i.wrapping_mul(37)).collect();
        s.put_bits(&data, 261);
        let mut buf = s.finish().to_vec();
        buf.resize(buf.len() + EXTRACT_PAD, 0);
        let mut d = [0u8; EXTRACT_MAX];
        extract(&buf, 3, 261, &mut d);
        assert_eq!(&d[..32], &data[..32]);
        assert_eq!(d[32], data[32] & 0xf8);
    }
}
