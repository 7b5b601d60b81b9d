//! Fixed-width bit vectors for constants and for the evaluator.
//!
//! Stored as little-endian `u64` words; bits above the width are always zero.

use std::fmt;

use super::error::IrError;

/// Widest signal or expression the IR accepts.
pub const MAX_WIDTH: u32 = 65536;

/// Checks `width` against `1..=MAX_WIDTH`.
pub(crate) fn check_width(what: impl FnOnce() -> String, width: u64) -> Result<u32, IrError> {
    if width == 0 || width > u64::from(MAX_WIDTH) {
        return Err(IrError::WidthOutOfRange {
            what: what(),
            width,
            max: MAX_WIDTH,
        });
    }
    // In range, so it fits u32.
    Ok(width as u32)
}

fn words_for(width: u32) -> usize {
    width.div_ceil(64) as usize
}

/// An unsigned bit vector of a fixed width (1..=[`MAX_WIDTH`] bits).
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Bits {
    width: u32,
    words: Vec<u64>,
}

impl Bits {
    /// All-zero vector.
    pub fn zero(width: u32) -> Result<Bits, IrError> {
        check_width(|| "bit vector".to_string(), u64::from(width))?;
        Ok(Bits::zeros(width))
    }

    /// All-ones vector.
    pub fn ones(width: u32) -> Result<Bits, IrError> {
        Ok(Bits::zero(width)?.not())
    }

    /// `value` as a `width`-bit vector; an error when it does not fit.
    pub fn from_u128(value: u128, width: u32) -> Result<Bits, IrError> {
        check_width(|| "bit vector".to_string(), u64::from(width))?;
        if width < 128 && value >> width != 0 {
            return Err(IrError::ConstTooWide {
                value: format!("{value:#x}"),
                width,
            });
        }
        let mut b = Bits::zeros(width);
        b.words[0] = value as u64;
        if b.words.len() > 1 {
            b.words[1] = (value >> 64) as u64;
        }
        Ok(b)
    }

    /// A vector from little-endian 64-bit words (word 0 holds bits 63..0).
    /// Missing words are zero; set bits at or above `width` are an error.
    pub fn from_words(words: &[u64], width: u32) -> Result<Bits, IrError> {
        check_width(|| "bit vector".to_string(), u64::from(width))?;
        let mut b = Bits::zeros(width);
        for (i, &w) in words.iter().enumerate() {
            if i < b.words.len() {
                b.words[i] = w;
            } else if w != 0 {
                return Err(IrError::ConstTooWide {
                    value: "word vector".to_string(),
                    width,
                });
            }
        }
        let before = b.words.clone();
        b.mask_top();
        if b.words != before {
            return Err(IrError::ConstTooWide {
                value: "word vector".to_string(),
                width,
            });
        }
        Ok(b)
    }

    /// Width in bits.
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Little-endian 64-bit words; bits above the width are zero.
    pub fn words(&self) -> &[u64] {
        &self.words
    }

    /// The value as `u128`, or `None` if a bit at or above 128 is set.
    pub fn to_u128(&self) -> Option<u128> {
        if self.words.iter().skip(2).any(|&w| w != 0) {
            return None;
        }
        let lo = u128::from(self.words[0]);
        let hi = u128::from(self.words.get(1).copied().unwrap_or(0));
        Some(lo | (hi << 64))
    }

    /// Bit `i` (false beyond the width).
    pub fn bit(&self, i: u32) -> bool {
        if i >= self.width {
            return false;
        }
        (self.words[(i / 64) as usize] >> (i % 64)) & 1 == 1
    }

    /// True when every bit is zero.
    pub fn is_zero(&self) -> bool {
        self.words.iter().all(|&w| w == 0)
    }

    /// True when every bit is one.
    pub fn is_ones(&self) -> bool {
        (0..self.width).all(|i| self.bit(i))
    }

    // ----- crate-internal operations; callers guarantee widths -----

    /// Zero vector of any width (0 allowed internally).
    pub(crate) fn zeros(width: u32) -> Bits {
        Bits {
            width,
            words: vec![0; words_for(width).max(1)],
        }
    }

    pub(crate) fn from_bool(b: bool) -> Bits {
        let mut r = Bits::zeros(1);
        r.words[0] = u64::from(b);
        r
    }

    fn mask_top(&mut self) {
        let n = words_for(self.width);
        for w in self.words.iter_mut().skip(n) {
            *w = 0;
        }
        let rem = self.width % 64;
        if rem != 0 {
            if let Some(w) = self.words.get_mut(n - 1) {
                *w &= (1u64 << rem) - 1;
            }
        }
    }

    pub(crate) fn set_bit(&mut self, i: u32, v: bool) {
        if i >= self.width {
            return;
        }
        let w = &mut self.words[(i / 64) as usize];
        if v {
            *w |= 1 << (i % 64);
        } else {
            *w &= !(1 << (i % 64));
        }
    }

    /// Word `k` of `self >> shift` (bits beyond the width read as zero).
    fn shifted_word(&self, shift: u32, k: usize) -> u64 {
        let bit = u64::from(shift) + 64 * k as u64;
        let wi = (bit / 64) as usize;
        let off = (bit % 64) as u32;
        let lo = self.words.get(wi).copied().unwrap_or(0);
        if off == 0 {
            lo
        } else {
            let hi = self.words.get(wi + 1).copied().unwrap_or(0);
            (lo >> off) | (hi << (64 - off))
        }
    }

    /// Bits `hi..=lo`.
    pub(crate) fn slice(&self, hi: u32, lo: u32) -> Bits {
        let width = hi - lo + 1;
        let mut r = Bits::zeros(width);
        for k in 0..r.words.len() {
            r.words[k] = self.shifted_word(lo, k);
        }
        r.mask_top();
        r
    }

    /// ORs `src` into `self` starting at bit `pos`.
    fn or_at(&mut self, src: &Bits, pos: u32) {
        let wi = (pos / 64) as usize;
        let off = pos % 64;
        for (k, &w) in src.words.iter().enumerate() {
            if let Some(d) = self.words.get_mut(wi + k) {
                *d |= w << off;
            }
            if off != 0 {
                if let Some(d) = self.words.get_mut(wi + k + 1) {
                    *d |= w >> (64 - off);
                }
            }
        }
        self.mask_top();
    }

    /// Concatenation, most significant part first (as in Verilog).
    pub(crate) fn concat<'a>(parts: impl IntoIterator<Item = &'a Bits>) -> Bits {
        let parts: Vec<&Bits> = parts.into_iter().collect();
        let width = parts.iter().map(|p| p.width).sum();
        let mut r = Bits::zeros(width);
        let mut pos = 0;
        for p in parts.iter().rev() {
            r.or_at(p, pos);
            pos += p.width;
        }
        r
    }

    pub(crate) fn repeat(&self, count: u32) -> Bits {
        let copies: Vec<&Bits> = (0..count).map(|_| self).collect();
        Bits::concat(copies)
    }

    pub(crate) fn not(&self) -> Bits {
        let mut r = self.clone();
        for w in &mut r.words {
            *w = !*w;
        }
        r.mask_top();
        r
    }

    fn zip(&self, o: &Bits, f: impl Fn(u64, u64) -> u64) -> Bits {
        debug_assert_eq!(self.width, o.width);
        let mut r = self.clone();
        for (d, s) in r.words.iter_mut().zip(&o.words) {
            *d = f(*d, *s);
        }
        r.mask_top();
        r
    }

    pub(crate) fn and(&self, o: &Bits) -> Bits {
        self.zip(o, |a, b| a & b)
    }

    pub(crate) fn or(&self, o: &Bits) -> Bits {
        self.zip(o, |a, b| a | b)
    }

    pub(crate) fn xor(&self, o: &Bits) -> Bits {
        self.zip(o, |a, b| a ^ b)
    }

    /// Sum modulo 2^width.
    pub(crate) fn add(&self, o: &Bits) -> Bits {
        debug_assert_eq!(self.width, o.width);
        let mut r = self.clone();
        let mut carry = false;
        for (d, s) in r.words.iter_mut().zip(&o.words) {
            let (x, c1) = d.overflowing_add(*s);
            let (y, c2) = x.overflowing_add(u64::from(carry));
            *d = y;
            carry = c1 || c2;
        }
        r.mask_top();
        r
    }

    /// Difference modulo 2^width.
    pub(crate) fn sub(&self, o: &Bits) -> Bits {
        debug_assert_eq!(self.width, o.width);
        let mut r = self.clone();
        let mut borrow = false;
        for (d, s) in r.words.iter_mut().zip(&o.words) {
            let (x, b1) = d.overflowing_sub(*s);
            let (y, b2) = x.overflowing_sub(u64::from(borrow));
            *d = y;
            borrow = b1 || b2;
        }
        r.mask_top();
        r
    }

    /// Unsigned `self < o`.
    pub(crate) fn lt(&self, o: &Bits) -> bool {
        debug_assert_eq!(self.width, o.width);
        for (a, b) in self.words.iter().zip(&o.words).rev() {
            if a != b {
                return a < b;
            }
        }
        false
    }

    pub(crate) fn reduce_and(&self) -> bool {
        self.not().is_zero()
    }

    pub(crate) fn reduce_or(&self) -> bool {
        !self.is_zero()
    }

    pub(crate) fn reduce_xor(&self) -> bool {
        self.words.iter().map(|w| w.count_ones()).sum::<u32>() % 2 == 1
    }

    /// Ranges `(hi, lo)` of set bits, most significant first.
    pub(crate) fn set_ranges(&self) -> Vec<(u32, u32)> {
        let mut out = Vec::new();
        let mut i = self.width;
        while i > 0 {
            i -= 1;
            if self.bit(i) {
                let hi = i;
                while i > 0 && self.bit(i - 1) {
                    i -= 1;
                }
                out.push((hi, i));
            }
        }
        out
    }

    /// Sets bits `hi..=lo`.
    pub(crate) fn set_range(&mut self, hi: u32, lo: u32) {
        for i in lo..=hi {
            self.set_bit(i, true);
        }
    }

    /// Lower-case hex digits; `full` pads to `ceil(width/4)` digits,
    /// otherwise leading zeros are dropped (at least one digit).
    pub(crate) fn hex_digits(&self, full: bool) -> String {
        let n = self.width.div_ceil(4);
        let mut s = String::with_capacity(n as usize);
        for d in (0..n).rev() {
            let nib = self.shifted_word(d * 4, 0) & 0xf;
            s.push(char::from_digit(nib as u32, 16).unwrap_or('0'));
        }
        if full {
            s
        } else {
            let t = s.trim_start_matches('0');
            if t.is_empty() {
                "0".to_string()
            } else {
                t.to_string()
            }
        }
    }

    /// Verilog sized literal: `1'b0`/`1'b1` for one bit, otherwise
    /// `W'h...` (all digits up to 64 bits, leading zeros dropped above).
    pub(crate) fn verilog_literal(&self) -> String {
        if self.width == 1 {
            format!("1'b{}", u8::from(self.bit(0)))
        } else {
            format!("{}'h{}", self.width, self.hex_digits(self.width <= 64))
        }
    }
}

impl fmt::Debug for Bits {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}'h{}", self.width, self.hex_digits(true))
    }
}

impl fmt::Display for Bits {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.verilog_literal())
    }
}

impl fmt::LowerHex for Bits {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.hex_digits(true))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(v: u128, w: u32) -> Bits {
        Bits::from_u128(v, w).expect("fits")
    }

    #[test]
    fn construction_checks() {
        assert!(Bits::zero(0).is_err());
        assert!(Bits::zero(MAX_WIDTH + 1).is_err());
        assert!(Bits::zero(MAX_WIDTH).is_ok());
        assert!(matches!(
            Bits::from_u128(256, 8),
            Err(IrError::ConstTooWide { width: 8, .. })
        ));
        assert_eq!(b(255, 8).to_u128(), Some(255));
        assert_eq!(
            Bits::from_words(&[1, 2], 70).map(|x| x.to_u128()),
            Ok(Some(1 | (2 << 64)))
        );
        assert!(Bits::from_words(&[0, 1 << 6], 70).is_err());
        assert!(Bits::from_words(&[0, 0, 1], 70).is_err());
    }

    #[test]
    fn wide_slice_concat() {
        let a = b(0xdead_beef, 32);
        let c = Bits::concat([&a, &a, &a, &a, &a]);
        assert_eq!(c.width(), 160);
        assert_eq!(c.slice(159, 128).to_u128(), Some(0xdead_beef));
        assert_eq!(c.slice(71, 40).to_u128(), Some(0xefde_adbe));
        assert_eq!(a.repeat(3).slice(95, 64), a);
    }

    #[test]
    fn arithmetic_wraps() {
        assert_eq!(b(250, 8).add(&b(10, 8)), b(4, 8));
        assert_eq!(b(3, 8).sub(&b(5, 8)), b(254, 8));
        let ones = Bits::ones(200).expect("ok");
        let one = Bits::from_u128(1, 200).expect("ok");
        assert!(ones.add(&one).is_zero());
        assert_eq!(Bits::zeros(200).sub(&one), ones);
        assert!(b(3, 130).lt(&b(1 << 100, 130)));
        assert!(!b(1 << 100, 130).lt(&b(3, 130)));
    }

    #[test]
    fn reductions_and_ranges() {
        assert!(b(0xff, 8).reduce_and());
        assert!(!b(0x7f, 8).reduce_and());
        assert!(b(0b0111, 4).reduce_xor());
        assert_eq!(b(0b1100_1110, 8).set_ranges(), vec![(7, 6), (3, 1)]);
    }

    #[test]
    fn literals() {
        assert_eq!(b(0x3f, 8).to_string(), "8'h3f");
        assert_eq!(b(0x5, 7).to_string(), "7'h05");
        assert_eq!(b(1, 1).to_string(), "1'b1");
        assert_eq!(Bits::zeros(100).verilog_literal(), "100'h0");
        assert_eq!(b(0xabc, 100).verilog_literal(), "100'habc");
    }
}
