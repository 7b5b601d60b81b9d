//! MAG-aware BDI for the bulk layer: the bit strings of
//! [`golden::magbdi::MagBdi`]'s `BlockCodec` (the encoding, then the
//! stored bytes) and its decode errors, without allocating per block.
//!
//! A value fits a `d`-bit field when `t(v) >> s == 0`, with `t(v) = v` and
//! `s = d` for unsigned deltas and `t(v) = v ^ (sign of v)` and `s = d - 1`
//! for signed ones. The OR of `t` over the block tells at once every delta
//! width the zero base covers alone; only the narrower widths are checked
//! one by one (first value outside the zero base = the base, OR of `t` of
//! the other values' deltas), smallest first, so the first that fits is the
//! smallest encoding.

use golden::baselines::DecodeError;
use golden::magbdi::{DeltaMode, MagBdiError, Params, Table};

use super::{get, get64, out_len, peek, Bits, BITS_SLACK};

const NAME: &str = "MAG-BDI";

/// One delta width of the size table (the first size that has it).
#[derive(Clone, Copy, Debug)]
struct Width {
    /// Encoding (index in the golden size table).
    code: u32,
    /// Delta width in bits.
    d: u32,
    /// Fit threshold: `t(v) >> s == 0`.
    s: u32,
    /// Compressed bytes.
    bytes: usize,
}

/// MAG-aware BDI of one configuration, coded without allocation.
#[derive(Clone, Debug)]
pub struct FastMagBdi {
    table: Table,
    widths: Vec<Width>,
    /// Encoding bits.
    e: u32,
    raw: u32,
    signed: bool,
}

/// The mask of the low `bits` bits.
#[inline]
fn low(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// Value `i` of `block` (little-endian, `K` bytes).
#[inline(always)]
fn val<const K: usize>(block: &[u8], i: usize) -> u64 {
    let mut a = [0u8; 8];
    a[..K].copy_from_slice(&block[K * i..K * i + K]);
    u64::from_le_bytes(a)
}

/// `t(v)`: `v` (unsigned) or `v` XOR its sign spread over the `K`-byte
/// word (signed), so that `v` fits `s + 1`-bit signed / `s`-bit unsigned
/// fields exactly when `t(v) >> s == 0`.
#[inline(always)]
fn t<const K: usize>(v: u64, signed: bool) -> u64 {
    if signed {
        let sh = 64 - 8 * K as u32;
        let sign = (((v << sh) as i64) >> 63) as u64;
        (v ^ sign) & low(8 * K as u32)
    } else {
        v
    }
}

impl FastMagBdi {
    /// The codec of `params` (the same errors as [`golden::magbdi::MagBdi::new`]).
    pub fn new(params: Params) -> Result<FastMagBdi, MagBdiError> {
        let table = Table::new(params)?;
        let signed = params.mode == DeltaMode::Signed;
        let mut widths: Vec<Width> = Vec::new();
        for (i, s) in table.sizes.iter().enumerate() {
            if widths.last().is_some_and(|w| w.d == s.delta_bits) {
                continue;
            }
            widths.push(Width {
                code: i as u32,
                d: s.delta_bits,
                s: if signed {
                    s.delta_bits - 1
                } else {
                    s.delta_bits
                },
                bytes: s.bytes,
            });
        }
        Ok(FastMagBdi {
            e: table.encoding_bits(),
            raw: table.raw_code(),
            table,
            widths,
            signed,
        })
    }

    pub fn params(&self) -> &Params {
        &self.table.params
    }

    pub fn table(&self) -> &Table {
        &self.table
    }

    /// Longest compressed block in bits: the encoding and the raw block.
    pub fn max_bits(&self) -> usize {
        self.e as usize + 8 * self.table.params.block_bytes
    }

    /// Bytes [`compress_into`](Self::compress_into) may touch from the
    /// byte of its first bit.
    pub fn write_room(&self) -> usize {
        self.max_bits() / 8 + 1 + BITS_SLACK
    }

    /// The encoding `block` gets and, for a compressed one, the base and
    /// the delta width's entry.
    #[inline]
    fn choose<const K: usize>(&self, block: &[u8]) -> Option<(Width, u64)> {
        if K == 8 {
            self.choose64::<K>(block)
        } else {
            self.choose32::<K>(block)
        }
    }

    fn write<const K: usize>(&self, block: &[u8], b: &mut Bits<'_>) {
        let Some((w, base)) = self.choose::<K>(block) else {
            b.put(self.raw as u64, self.e);
            b.bytes(block);
            return;
        };
        let n = block.len() / K;
        let signed = self.signed;
        let m = low(8 * K as u32);
        b.put(w.code as u64, self.e);
        b.put(base, 8 * K as u32);
        // the bitmask, 64 values a field
        let mut i = 0;
        while i < n {
            let c = (n - i).min(64);
            let mut word = 0u64;
            for j in i..i + c {
                let out = t::<K>(val::<K>(block, j), signed) >> w.s != 0;
                word = (word << 1) | out as u64;
            }
            b.put(word, c as u32);
            i += c;
        }
        let dm = low(w.d);
        for j in 0..n {
            let v = val::<K>(block, j);
            let out = t::<K>(v, signed) >> w.s != 0;
            let delta = if out { v.wrapping_sub(base) & m } else { v };
            b.put(delta & dm, w.d);
        }
        let used = 8 * K + n + n * w.d as usize;
        b.zeros(8 * w.bytes - used);
    }

    /// Write the compressed bits of `block` (`block_bytes` long) at bit
    /// `bit` of `buf`, which holds [`write_room`](Self::write_room) bytes
    /// from byte `bit / 8`; returns the bits written.
    pub fn compress_into(&self, block: &[u8], buf: &mut [u8], bit: usize) -> usize {
        assert_eq!(
            block.len(),
            self.table.params.block_bytes,
            "{NAME}: block of {} bytes, codec takes {}",
            block.len(),
            self.table.params.block_bytes
        );
        let mut b = Bits::new(buf, bit);
        match self.table.params.base_bytes {
            2 => self.write::<2>(block, &mut b),
            4 => self.write::<4>(block, &mut b),
            _ => self.write::<8>(block, &mut b),
        }
        b.finish() - bit
    }

    /// The compressed bits of `block` and their count (a fresh buffer:
    /// for tests and one-off use).
    pub fn compress(&self, block: &[u8]) -> (Vec<u8>, usize) {
        let mut buf = vec![0u8; self.write_room()];
        let len = self.compress_into(block, &mut buf, 0);
        buf.truncate(len.div_ceil(8));
        (buf, len)
    }

    fn read<const K: usize>(
        &self,
        bits: &[u8],
        w: usize,
        out: &mut [u8],
    ) -> Result<(), DecodeError> {
        let s = &self.table.sizes[w];
        let n = self.table.params.values();
        let d = s.delta_bits;
        let wb = 8 * K as u32;
        let m = low(wb);
        let e = self.e as usize;
        let base = get(bits, e, wb);
        let mut mask_at = e + 8 * K;
        let mut at = mask_at + n;
        let mut i = 0;
        while i < n {
            // 64 bitmask bits at a time, left-aligned
            let c = (n - i).min(64);
            let mask = get(bits, mask_at, c as u32) << (64 - c);
            for j in 0..c {
                let raw = get(bits, at, d);
                at += d as usize;
                let delta = if self.signed {
                    let sh = 64 - d;
                    (((raw << sh) as i64) >> sh) as u64
                } else {
                    raw
                };
                let sel = 0u64.wrapping_sub((mask << j) >> 63);
                let v = (base & sel).wrapping_add(delta) & m;
                let o = K * (i + j);
                out[o..o + K].copy_from_slice(&v.to_le_bytes()[..K]);
            }
            mask_at += c;
            i += c;
        }
        // zero padding up to the size's bytes
        let end = e + 8 * s.bytes;
        let mut p = at;
        while p < end {
            let c = (end - p).min(57);
            if peek(bits, p, c as u32) != 0 {
                return Err(DecodeError::Invalid {
                    codec: NAME,
                    what: "non-zero padding after the deltas".into(),
                    at: s.used_bits,
                });
            }
            p += c;
        }
        Ok(())
    }

    /// Decode exactly `len` bits of `bits` into `out` (`block_bytes`
    /// long), with the golden model's errors.
    pub fn decompress_into(
        &self,
        bits: &[u8],
        len: usize,
        out: &mut [u8],
    ) -> Result<(), DecodeError> {
        if len.div_ceil(8) > bits.len() {
            return Err(DecodeError::ShortBuffer {
                codec: NAME,
                len,
                have: bits.len(),
            });
        }
        let bb = self.table.params.block_bytes;
        if out.len() != bb {
            return Err(out_len(out.len(), bb));
        }
        let e = self.e as usize;
        if len < e {
            return Err(DecodeError::Truncated {
                codec: NAME,
                at: 0,
                len,
            });
        }
        let code = peek(bits, 0, self.e) as u32;
        let bytes = self.table.size_of(code).ok_or(DecodeError::BadCode {
            codec: NAME,
            code,
            at: 0,
        })?;
        let total = e + 8 * bytes;
        if len < total {
            return Err(DecodeError::Truncated {
                codec: NAME,
                at: e + 8 * ((len - e) / 8),
                len,
            });
        }
        if len > total {
            return Err(DecodeError::TrailingBits {
                codec: NAME,
                used: total,
                extra: len - total,
            });
        }
        if code == self.raw {
            let mut words = out.chunks_exact_mut(8);
            let mut at = e;
            for o in &mut words {
                o.copy_from_slice(&get64(bits, at).to_be_bytes());
                at += 64;
            }
            for o in words.into_remainder() {
                *o = peek(bits, at, 8) as u8;
                at += 8;
            }
            return Ok(());
        }
        match self.table.params.base_bytes {
            2 => self.read::<2>(bits, code as usize, out),
            4 => self.read::<4>(bits, code as usize, out),
            _ => self.read::<8>(bits, code as usize, out),
        }
    }
}

/// `choose32` (values of 2 or 4 bytes in `u32` lanes) and `choose64`
/// (8-byte values): the smallest delta width that fits and its base.
macro_rules! choose_impl {
    ($name:ident, $t:ty) => {
        impl FastMagBdi {
            fn $name<const K: usize>(&self, block: &[u8]) -> Option<(Width, u64)> {
                const LANE: u32 = <$t>::BITS;
                let n = block.len() / K;
                let bits = 8 * K as u32;
                let m = low(bits) as $t;
                let sh = LANE - bits;
                let signed = self.signed;
                // the value and t(v) in the lane
                let get = |i: usize| val::<K>(block, i) as $t;
                let t = |v: $t| -> $t {
                    if signed {
                        let sp = ((v << sh) >> (LANE - 1)).wrapping_neg();
                        (v ^ sp) & m
                    } else {
                        v
                    }
                };
                let mut all: $t = 0;
                for i in 0..n {
                    all |= t(get(i));
                }
                let need = LANE - all.leading_zeros();
                for w in &self.widths {
                    if w.s >= need {
                        // the zero base covers every value
                        return Some((*w, 0));
                    }
                    // the first value outside the zero base is the base
                    let mut first = n - 1;
                    for i in 0..n {
                        if t(get(i)) >> w.s != 0 {
                            first = i;
                            break;
                        }
                    }
                    let base = get(first);
                    // OR of t(delta) over the values outside the zero
                    // base, 16 values at a time until one does not fit
                    let mut acc: $t = 0;
                    let mut i = first;
                    while i < n && acc >> w.s == 0 {
                        let end = (i + 16).min(n);
                        for j in i..end {
                            let v = get(j);
                            let out = ((t(v) >> w.s != 0) as $t).wrapping_neg();
                            acc |= t(v.wrapping_sub(base) & m) & out;
                        }
                        i = end;
                    }
                    if acc >> w.s == 0 {
                        return Some((*w, base as u64));
                    }
                }
                None
            }
        }
    };
}

choose_impl!(choose32, u32);
choose_impl!(choose64, u64);
