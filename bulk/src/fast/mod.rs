//! Bulk implementations of MAG-aware BDI and DPC: the same bit strings as
//! the golden models (`golden::magbdi`, `golden::dpc`), and the same decode
//! errors, without allocating per block.
//!
//! * Values are read as little-endian machine words straight from the
//!   block; fit checks are ORs of whole words compared once per delta
//!   width (MAG-aware BDI) and an AND / OR over every segment gives all bit
//!   planes' patterns at once (DPC).
//! * DPC's bit planes come from a 32 x 32 bit-matrix transposition per 32
//!   segments (and the same transposition restores the segments).
//! * Fields are packed MSB first into a 64-bit register stored eight bytes
//!   at a time ([`Bits`]) and read back with unaligned 8-byte loads
//!   ([`peek`], [`get64`]).
//!
//! `tests/fast_codecs.rs` checks them block by block against the golden
//! models (bits, lengths, decoded bytes and error messages).

pub mod dpc;
pub mod magbdi;

pub use dpc::FastDpc;
pub use magbdi::FastMagBdi;

/// Bytes a [`Bits`] writer may touch past its last bit (its stores are
/// eight bytes wide).
pub const BITS_SLACK: usize = 8;

/// MSB-first bit writer with a 64-bit register stored eight bytes at a
/// time. Bits before the start position in its byte are kept; the buffer
/// must hold [`BITS_SLACK`] bytes past the last bit written.
pub struct Bits<'a> {
    buf: &'a mut [u8],
    /// Byte the register's first bit belongs to.
    byte: usize,
    /// Pending bits, left-aligned (bits below the top `fill` are zero).
    acc: u64,
    fill: u32,
}

impl<'a> Bits<'a> {
    /// A writer whose first bit goes to bit `bit` of `buf`.
    #[inline]
    pub fn new(buf: &'a mut [u8], bit: usize) -> Self {
        let (byte, fill) = (bit / 8, (bit % 8) as u32);
        let acc = if fill == 0 {
            0
        } else {
            ((buf[byte] as u64) >> (8 - fill) << (64 - fill)) & !(u64::MAX >> fill)
        };
        Bits {
            buf,
            byte,
            acc,
            fill,
        }
    }

    /// Append the low `width` (0..=64) bits of `value`; bits of `value`
    /// above `width` must be zero.
    #[inline]
    pub fn put(&mut self, value: u64, width: u32) {
        debug_assert!(width <= 64 && (width == 64 || value >> width == 0));
        if width == 0 {
            return;
        }
        let v = value << (64 - width);
        self.acc |= v >> self.fill;
        let f = self.fill + width;
        if f >= 64 {
            self.store();
            self.byte += 8;
            // the bits of `v` that did not fit (none when fill was 0)
            self.acc = (v << 1) << (63 - self.fill);
            self.fill = f - 64;
        } else {
            self.fill = f;
        }
    }

    /// Append `nbits` zero bits.
    #[inline]
    pub fn zeros(&mut self, mut nbits: usize) {
        while nbits > 0 {
            let w = nbits.min(64);
            self.put(0, w as u32);
            nbits -= w;
        }
    }

    /// Append `bytes` as they are (8 bits each, byte 0 first).
    #[inline]
    pub fn bytes(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for c in &mut words {
            let mut a = [0u8; 8];
            a.copy_from_slice(c);
            self.put(u64::from_be_bytes(a), 64);
        }
        for &b in words.remainder() {
            self.put(b as u64, 8);
        }
    }

    #[inline]
    fn store(&mut self) {
        self.buf[self.byte..self.byte + 8].copy_from_slice(&self.acc.to_be_bytes());
    }

    /// Store the pending bits and return the bit position after the last.
    #[inline]
    pub fn finish(mut self) -> usize {
        self.store();
        8 * self.byte + self.fill as usize
    }
}

/// The error for an output buffer that is not one block long (a caller's
/// mistake; the golden models return a fresh block instead).
fn out_len(got: usize, want: usize) -> golden::baselines::DecodeError {
    golden::baselines::DecodeError::Invalid {
        codec: "bulk",
        what: format!("output buffer of {got} bytes for {want}-byte blocks"),
        at: 0,
    }
}

/// The eight bytes of `buf` from byte `at` as a big-endian word (zeros
/// past the end of `buf`).
#[inline]
fn load_be(buf: &[u8], at: usize) -> u64 {
    match buf.get(at..at + 8) {
        Some(s) => {
            let mut a = [0u8; 8];
            a.copy_from_slice(s);
            u64::from_be_bytes(a)
        }
        None => {
            let mut a = [0u8; 8];
            if let Some(s) = buf.get(at..) {
                a[..s.len()].copy_from_slice(s);
            }
            u64::from_be_bytes(a)
        }
    }
}

/// `width` (1..=57) bits at bit `pos` of `buf`, MSB first (zeros past
/// its end).
#[inline]
pub fn peek(buf: &[u8], pos: usize, width: u32) -> u64 {
    debug_assert!((1..=57).contains(&width));
    (load_be(buf, pos / 8) << (pos % 8)) >> (64 - width)
}

/// The 64 bits at bit `pos` of `buf`, MSB first (zeros past its end).
#[inline]
pub fn get64(buf: &[u8], pos: usize) -> u64 {
    let at = pos / 8;
    let sh = (pos % 8) as u32;
    let hi = load_be(buf, at);
    if sh == 0 {
        hi
    } else {
        let next = buf.get(at + 8).copied().unwrap_or(0) as u64;
        (hi << sh) | (next >> (8 - sh))
    }
}

/// `width` (1..=64) bits at bit `pos` of `buf`.
#[inline]
pub fn get(buf: &[u8], pos: usize, width: u32) -> u64 {
    if width <= 57 {
        peek(buf, pos, width)
    } else {
        get64(buf, pos) >> (64 - width)
    }
}

/// One stage of [`transpose32`]: swap the `J`-bit blocks off the diagonal
/// (rows `k` and `k + J` of every run of `2 J` rows).
#[inline(always)]
fn stage<const J: usize>(a: &mut [u32; 32], m: u32) {
    for c in a.chunks_exact_mut(2 * J) {
        let (lo, hi) = c.split_at_mut(J);
        for (x, y) in lo.iter_mut().zip(hi.iter_mut()) {
            let t = (*x ^ (*y >> J)) & m;
            *x ^= t;
            *y ^= t << J;
        }
    }
}

/// Transpose a 32 x 32 bit matrix in place: afterwards bit `31 - j` of
/// word `k` is what bit `31 - k` of word `j` was. Its own inverse.
#[inline]
pub fn transpose32(a: &mut [u32; 32]) {
    stage::<16>(a, 0x0000_ffff);
    stage::<8>(a, 0x00ff_00ff);
    stage::<4>(a, 0x0f0f_0f0f);
    stage::<2>(a, 0x3333_3333);
    stage::<1>(a, 0x5555_5555);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transpose32_moves_every_bit() {
        let mut x = 0x9e37_79b9u32;
        let mut a = [0u32; 32];
        for w in a.iter_mut() {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            *w = x;
        }
        let orig = a;
        transpose32(&mut a);
        for (j, row) in orig.iter().enumerate() {
            for (k, col) in a.iter().enumerate() {
                assert_eq!(col >> (31 - j) & 1, row >> (31 - k) & 1, "{j} {k}");
            }
        }
        transpose32(&mut a);
        assert_eq!(a, orig);
    }

    #[test]
    fn writer_and_readers_agree() {
        let fields: Vec<(u64, u32)> = (0..300u64)
            .map(|i| {
                let w = (1 + (i * 7) % 64) as u32;
                let v = i.wrapping_mul(0x9e37_79b9_7f4a_7c15);
                (if w == 64 { v } else { v & ((1 << w) - 1) }, w)
            })
            .collect();
        for start in 0..16 {
            let mut buf = vec![0xffu8; 4000];
            let mut b = Bits::new(&mut buf, start);
            for &(v, w) in &fields {
                b.put(v, w);
            }
            let end = b.finish();
            let total: usize = fields.iter().map(|f| f.1 as usize).sum();
            assert_eq!(end, start + total);
            // bits before the start are kept
            if start > 0 {
                assert_eq!(get(&buf, 0, start as u32), (1u64 << start) - 1);
            }
            let mut pos = start;
            for &(v, w) in &fields {
                assert_eq!(get(&buf, pos, w), v, "start {start} pos {pos} width {w}");
                pos += w as usize;
            }
        }
    }
}
