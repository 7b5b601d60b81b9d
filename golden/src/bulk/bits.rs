//! MSB-first bit packing for chunk payloads (same bit order as
//! `crate::bits`): an append-only sink and an extractor that re-aligns the
//! bits of one block found at any bit offset.

/// Growable MSB-first bit sink; reused across chunks (`clear` keeps the
/// allocation).
#[derive(Clone, Debug, Default)]
pub struct BitSink {
    buf: Vec<u8>,
    acc: u64,
    /// Bits pending in the low end of `acc` (< 8 between calls).
    pending: u32,
    bits: usize,
}

impl BitSink {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn with_capacity(bytes: usize) -> Self {
        BitSink {
            buf: Vec::with_capacity(bytes),
            ..Self::default()
        }
    }

    pub fn clear(&mut self) {
        self.buf.clear();
        self.acc = 0;
        self.pending = 0;
        self.bits = 0;
    }

    /// Bits written so far.
    pub fn bit_len(&self) -> usize {
        self.bits
    }

    /// Append the low `width` (<= 32) bits of `value`, MSB first.
    #[inline]
    pub fn put(&mut self, value: u32, width: u32) {
        debug_assert!(width <= 32);
        if width == 0 {
            return;
        }
        let v = (value as u64) & ((1u64 << width) - 1);
        self.acc = (self.acc << width) | v;
        self.pending += width;
        self.bits += width as usize;
        if self.pending >= 32 {
            self.pending -= 32;
            let word = (self.acc >> self.pending) as u32;
            self.buf.extend_from_slice(&word.to_be_bytes());
        }
        while self.pending >= 8 {
            self.pending -= 8;
            self.buf.push((self.acc >> self.pending) as u8);
        }
    }

    /// Append the first `nbits` bits of `bytes` (MSB first from byte 0).
    #[inline]
    pub fn put_bits(&mut self, bytes: &[u8], nbits: usize) {
        debug_assert!(bytes.len() * 8 >= nbits);
        if self.pending == 0 && nbits.is_multiple_of(8) {
            self.buf.extend_from_slice(&bytes[..nbits / 8]);
            self.bits += nbits;
            return;
        }
        let words = nbits / 32;
        for w in bytes[..4 * words].chunks_exact(4) {
            self.put(u32::from_be_bytes([w[0], w[1], w[2], w[3]]), 32);
        }
        let mut rest = nbits - 32 * words;
        let mut i = 4 * words;
        while rest >= 8 {
            self.put(bytes[i] as u32, 8);
            i += 1;
            rest -= 8;
        }
        if rest > 0 {
            self.put((bytes[i] >> (8 - rest)) as u32, rest as u32);
        }
    }

    /// Flush the last partial byte (zero-padded) and return the bytes.
    pub fn finish(&mut self) -> &[u8] {
        if self.pending > 0 {
            self.buf.push((self.acc << (8 - self.pending)) as u8);
            self.pending = 0;
        }
        &self.buf
    }

    /// The bytes after [`finish`](Self::finish).
    pub fn bytes(&self) -> &[u8] {
        &self.buf
    }
}

/// Bytes a source buffer must have past its last payload byte so that
/// [`extract`] can use unaligned 8-byte loads.
pub const EXTRACT_PAD: usize = 16;

/// Widest block [`extract`] handles, in bytes.
pub const EXTRACT_MAX: usize = 528;

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
