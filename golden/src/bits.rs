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

/// Bytes a [`SliceWriter`] may touch past its last bit (its stores are
/// eight bytes wide).
pub const SLICE_WRITER_SLACK: usize = 8;

/// Writes fields MSB first into a byte slice from any bit position with
/// 8-byte stores: `put` only shifts into a 64-bit register, `flush` stores
/// it. The caller flushes at least every 56 bits; the slice must hold
/// [`SLICE_WRITER_SLACK`] bytes past the last bit written. Bits before the
/// start position in its byte are kept; after the last bit written the
/// last store leaves zeros up to its own end (8 bytes from where it began).
#[derive(Debug)]
pub struct SliceWriter<'a> {
    buf: &'a mut [u8],
    /// Byte that the register's oldest bit belongs to.
    byte: usize,
    /// Pending bits, right-aligned (bits above `fill` are stale).
    acc: u64,
    fill: u32,
}

impl<'a> SliceWriter<'a> {
    /// A writer whose first bit goes to bit `bit` of `buf`.
    #[inline]
    pub fn new(buf: &'a mut [u8], bit: usize) -> Self {
        let (byte, fill) = (bit / 8, (bit % 8) as u32);
        let acc = if fill == 0 {
            0
        } else {
            (buf[byte] >> (8 - fill)) as u64
        };
        SliceWriter {
            buf,
            byte,
            acc,
            fill,
        }
    }

    /// Append the `width` (0..=56) low bits of `value` (higher bits of
    /// `value` must be zero). Call [`flush`](Self::flush) before more than
    /// 56 bits are pending.
    #[inline]
    pub fn put(&mut self, value: u64, width: u32) {
        debug_assert!(width <= 56 && self.fill + width <= 63 && value >> width == 0);
        self.acc = (self.acc << width) | value;
        self.fill += width;
    }

    /// Store the pending whole bytes (and the partial one).
    #[inline]
    pub fn flush(&mut self) {
        let v = (self.acc << 1) << (63 - self.fill);
        self.buf[self.byte..self.byte + 8].copy_from_slice(&v.to_be_bytes());
        let n = self.fill / 8;
        self.byte += n as usize;
        self.fill -= 8 * n;
    }

    /// Bit position of the next bit.
    #[inline]
    pub fn position(&self) -> usize {
        8 * self.byte + self.fill as usize
    }

    /// Flush and return the bit position after the last bit.
    #[inline]
    pub fn finish(mut self) -> usize {
        self.flush();
        self.position()
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
    fn slice_writer_matches_bit_writer_from_any_offset() {
        let fields = [
            (0b101u64, 3u32),
            (0x1ff, 9),
            (0, 0),
            (0b0011, 4),
            (0x1beef, 17),
            (1, 1),
        ];
        for start in 0..16 {
            let mut w = BitWriter::<16>::new();
            w.put(0xffff >> (16 - start.max(1)), start as u32);
            for &(v, n) in &fields {
                w.put(v as u32, n);
            }
            let (want, want_len) = w.finish();
            let mut buf = [0u8; 16 + SLICE_WRITER_SLACK];
            buf[0] = 0xff;
            buf[1] = if start > 8 { 0xff } else { 0 };
            let mut s = SliceWriter::new(&mut buf, start);
            for (k, &(v, n)) in fields.iter().enumerate() {
                s.put(v, n);
                if k % 2 == 1 {
                    s.flush();
                }
            }
            assert_eq!(s.finish(), want_len, "start {start}");
            let keep = |b: &[u8]| b[..want_len.div_ceil(8)].to_vec();
            // bits before `start` are the 1s written first
            assert_eq!(keep(&buf), keep(&want), "start {start}");
        }
    }

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
