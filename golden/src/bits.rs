//! MSB-first bit packing shared by the compressed formats: bit 0 of a
//! compressed block is the most significant bit of its byte 0.

/// Writes fields MSB first into a fixed byte buffer.
#[derive(Clone, Debug)]
pub struct BitWriter<const N: usize> {
    buf: [u8; N],
    len: usize,
}

impl<const N: usize> Default for BitWriter<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> BitWriter<N> {
    pub fn new() -> Self {
        BitWriter {
            buf: [0; N],
            len: 0,
        }
    }

    /// Number of bits written so far.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Append the low `width` (<= 32) bits of `value`, most significant
    /// first. Callers size `N` for the format's maximum; writing past it is a
    /// bug in the caller, reported by a panic with the sizes.
    #[inline]
    pub fn put(&mut self, value: u32, width: u32) {
        debug_assert!(
            width <= 32 && self.len + width as usize <= N * 8,
            "BitWriter overflow: {} + {} bits into {} bytes",
            self.len,
            width,
            N
        );
        if width == 0 {
            return;
        }
        let v = (value as u64) & ((1u64 << width) - 1);
        let byte = self.len / 8;
        let used = (self.len % 8) as u32;
        // Place the field in a 40-bit window that starts at the current byte.
        let total = used + width;
        let window = v << (40 - total);
        let nbytes = total.div_ceil(8) as usize;
        for (k, dst) in self.buf[byte..byte + nbytes].iter_mut().enumerate() {
            *dst |= (window >> (32 - 8 * k as u32)) as u8;
        }
        self.len += width as usize;
    }

    /// The buffer (bits past `len()` are zero) and the bit length.
    pub fn finish(self) -> ([u8; N], usize) {
        (self.buf, self.len)
    }
}

/// Reads fields MSB first from a byte slice limited to `len` bits.
#[derive(Clone, Debug)]
pub struct BitReader<'a> {
    bytes: &'a [u8],
    len: usize,
    pos: usize,
}

impl<'a> BitReader<'a> {
    /// A reader over the first `len` bits of `bytes` (`len` is clamped to the
    /// slice).
    pub fn new(bytes: &'a [u8], len: usize) -> Self {
        BitReader {
            bytes,
            len: len.min(bytes.len() * 8),
            pos: 0,
        }
    }

    pub fn position(&self) -> usize {
        self.pos
    }

    pub fn remaining(&self) -> usize {
        self.len - self.pos
    }

    /// The next 32 bits, first bit in the MSB, without consuming them; bits
    /// past the end of the slice read as 0 (callers check `remaining`).
    #[inline]
    pub fn peek32(&self) -> u32 {
        let byte = self.pos / 8;
        let off = (self.pos % 8) as u32;
        let mut window = 0u64;
        for k in 0..5 {
            window = (window << 8) | *self.bytes.get(byte + k).unwrap_or(&0) as u64;
        }
        ((window << off) >> 8) as u32
    }

    /// Consume `n` bits (at most `remaining()`).
    #[inline]
    pub fn skip(&mut self, n: usize) {
        self.pos = (self.pos + n).min(self.len);
    }

    /// Read `width` (<= 32) bits, or `None` when fewer remain.
    #[inline]
    pub fn get(&mut self, width: u32) -> Option<u32> {
        if width > 32 || self.remaining() < width as usize {
            return None;
        }
        if width == 0 {
            return Some(0);
        }
        let byte = self.pos / 8;
        let off = (self.pos % 8) as u32;
        // A 40-bit big-endian window starting at the current byte.
        let mut window = 0u64;
        for k in 0..5 {
            window = (window << 8) | *self.bytes.get(byte + k).unwrap_or(&0) as u64;
        }
        self.pos += width as usize;
        Some(((window >> (40 - off - width)) & ((1u64 << width) - 1)) as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_pack_msb_first_across_bytes() {
        let mut w = BitWriter::<4>::new();
        w.put(0b101, 3);
        w.put(0x1ff, 9);
        w.put(0b0011, 4);
        let (buf, len) = w.finish();
        assert_eq!(len, 16);
        assert_eq!(buf, [0b1011_1111, 0b1111_0011, 0, 0]);
        let mut r = BitReader::new(&buf, len);
        assert_eq!(r.get(3), Some(0b101));
        assert_eq!(r.get(9), Some(0x1ff));
        assert_eq!(r.get(4), Some(0b0011));
        assert_eq!(r.get(1), None);
    }
}
