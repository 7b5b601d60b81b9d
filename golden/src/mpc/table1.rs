//! The shared residue encoder's code table (paper Table 1) as specified in
//! `docs/spec/mpc.md`, section "Table-1 encoder".
//!
//! Within a 16-bit symbol, position `q` = 0 is the first bit of the symbol in
//! the stream and the most significant bit of its `u16` value.

use super::SYMBOLS;

/// Longest zero run one run code can carry.
pub const MAX_RUN: u8 = 15;

/// One Table-1 code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Code {
    /// One zero symbol: `0011`.
    Zero,
    /// 2..=15 zero symbols: `010` + run length (4 bits).
    ZeroRun(u8),
    /// Exactly one 1 at position q: `011` + q (4 bits).
    SingleOne(u8),
    /// Exactly two 1s at positions q and q+1 (q <= 14): `0000` + q (4 bits).
    TwoOnes(u8),
    /// First 8 bits zero: `0001` + the last 8 bits.
    FrontHalfZero(u8),
    /// Last 8 bits zero: `0010` + the first 8 bits.
    BackHalfZero(u8),
    /// Anything else: `1` + the 16 bits.
    Default(u16),
}

/// Code kind names in the order of `Code::kind_index` (for statistics).
pub const CODE_KIND_NAMES: [&str; 7] = [
    "zero",
    "zero-run",
    "single-one",
    "two-ones",
    "front-half-zero",
    "back-half-zero",
    "default",
];

impl Code {
    /// `(bits, length)`: the code's bits right-aligned in `bits`, sent MSB
    /// first.
    #[inline]
    pub fn bits(self) -> (u32, u32) {
        match self {
            Code::Zero => (0b0011, 4),
            Code::ZeroRun(n) => ((0b010 << 4) | n as u32, 7),
            Code::SingleOne(q) => ((0b011 << 4) | q as u32, 7),
            Code::TwoOnes(q) => (q as u32, 8),
            Code::FrontHalfZero(p) => ((0b0001 << 8) | p as u32, 12),
            Code::BackHalfZero(p) => ((0b0010 << 8) | p as u32, 12),
            Code::Default(s) => ((1 << 16) | s as u32, 17),
        }
    }

    /// Length in bits.
    #[inline]
    pub fn bit_len(self) -> u32 {
        self.bits().1
    }

    /// Number of symbols this code stands for.
    #[inline]
    pub fn symbols(self) -> usize {
        match self {
            Code::ZeroRun(n) => n as usize,
            _ => 1,
        }
    }

    /// Index into `CODE_KIND_NAMES`.
    pub fn kind_index(self) -> usize {
        match self {
            Code::Zero => 0,
            Code::ZeroRun(_) => 1,
            Code::SingleOne(_) => 2,
            Code::TwoOnes(_) => 3,
            Code::FrontHalfZero(_) => 4,
            Code::BackHalfZero(_) => 5,
            Code::Default(_) => 6,
        }
    }

    /// The symbol value of a single-symbol code (zero for runs).
    pub fn symbol_value(self) -> u16 {
        match self {
            Code::Zero | Code::ZeroRun(_) => 0,
            Code::SingleOne(q) => 1 << (15 - q),
            Code::TwoOnes(q) => 0b11 << (14 - q),
            Code::FrontHalfZero(p) => p as u16,
            Code::BackHalfZero(p) => (p as u16) << 8,
            Code::Default(s) => s,
        }
    }
}

/// The shortest code for one nonzero symbol (zero symbols are handled by
/// `encode_symbols`, which merges them into runs).
#[inline]
pub fn code_for_nonzero(s: u16) -> Code {
    debug_assert!(s != 0);
    if s.count_ones() == 1 {
        return Code::SingleOne(s.leading_zeros() as u8);
    }
    let tz = s.trailing_zeros();
    if s >> tz == 0b11 {
        return Code::TwoOnes((14 - tz) as u8);
    }
    if s & 0xff00 == 0 {
        return Code::FrontHalfZero(s as u8);
    }
    if s & 0x00ff == 0 {
        return Code::BackHalfZero((s >> 8) as u8);
    }
    Code::Default(s)
}

/// Length in bits of the code of one nonzero symbol.
#[inline]
pub fn nonzero_len(s: u16) -> u32 {
    if s.count_ones() == 1 {
        7
    } else if s >> s.trailing_zeros() == 0b11 {
        8
    } else if s & 0xff00 == 0 || s & 0x00ff == 0 {
        12
    } else {
        17
    }
}

/// Codes for a run of `n` zero symbols: greedy runs of 15, a remainder of
/// one becomes `Zero`.
pub fn zero_run_codes(mut n: usize, out: &mut impl FnMut(Code)) {
    while n > 0 {
        if n >= 2 {
            let c = n.min(MAX_RUN as usize);
            out(Code::ZeroRun(c as u8));
            n -= c;
        } else {
            out(Code::Zero);
            n -= 1;
        }
    }
}

/// Length in bits of the codes for a run of `n` zero symbols.
#[inline]
pub fn zero_run_len(n: usize) -> u32 {
    let full = (n / MAX_RUN as usize) as u32;
    let rest = n % MAX_RUN as usize;
    full * 7
        + match rest {
            0 => 0,
            1 => 4,
            _ => 7,
        }
}

/// Encode 16 symbols into codes, in stream order.
pub fn encode_symbols(symbols: &[u16; SYMBOLS], mut out: impl FnMut(Code)) {
    let mut i = 0;
    while i < SYMBOLS {
        if symbols[i] == 0 {
            let start = i;
            while i < SYMBOLS && symbols[i] == 0 {
                i += 1;
            }
            zero_run_codes(i - start, &mut out);
        } else {
            out(code_for_nonzero(symbols[i]));
            i += 1;
        }
    }
}

/// Total code length of 16 symbols in bits (without the header).
#[inline]
pub fn encoded_len(symbols: &[u16; SYMBOLS]) -> u32 {
    let mut total = 0;
    let mut run = 0usize;
    for &s in symbols {
        if s == 0 {
            run += 1;
        } else {
            total += zero_run_len(run) + nonzero_len(s);
            run = 0;
        }
    }
    total + zero_run_len(run)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_pattern_has_the_table_code() {
        assert_eq!(code_for_nonzero(0x8000), Code::SingleOne(0));
        assert_eq!(code_for_nonzero(0x0001), Code::SingleOne(15));
        assert_eq!(code_for_nonzero(0xC000), Code::TwoOnes(0));
        assert_eq!(code_for_nonzero(0x0003), Code::TwoOnes(14));
        assert_eq!(code_for_nonzero(0x0180), Code::TwoOnes(7));
        assert_eq!(code_for_nonzero(0x00A5), Code::FrontHalfZero(0xA5));
        assert_eq!(code_for_nonzero(0xA500), Code::BackHalfZero(0xA5));
        assert_eq!(code_for_nonzero(0xA001), Code::Default(0xA001));
        assert_eq!(code_for_nonzero(0x0005), Code::FrontHalfZero(0x05));
        assert_eq!(Code::Zero.bits(), (0b0011, 4));
        assert_eq!(Code::ZeroRun(9).bits(), (0b010_1001, 7));
        assert_eq!(Code::SingleOne(3).bits(), (0b011_0011, 7));
        assert_eq!(Code::TwoOnes(14).bits(), (0b0000_1110, 8));
        assert_eq!(Code::FrontHalfZero(0xA5).bits(), (0b0001_1010_0101, 12));
        assert_eq!(Code::BackHalfZero(0x5A).bits(), (0b0010_0101_1010, 12));
        assert_eq!(Code::Default(0xBEEF).bits(), (0x1BEEF, 17));
    }

    #[test]
    fn symbol_values_round_trip_through_codes() {
        for s in 1..=u16::MAX {
            let c = code_for_nonzero(s);
            assert_eq!(c.symbol_value(), s);
            assert_eq!(c.bit_len(), nonzero_len(s));
        }
    }

    #[test]
    fn zero_runs_split_greedily() {
        let mut v = Vec::new();
        zero_run_codes(16, &mut |c| v.push(c));
        assert_eq!(v, vec![Code::ZeroRun(15), Code::Zero]);
        v.clear();
        zero_run_codes(15, &mut |c| v.push(c));
        assert_eq!(v, vec![Code::ZeroRun(15)]);
        v.clear();
        zero_run_codes(2, &mut |c| v.push(c));
        assert_eq!(v, vec![Code::ZeroRun(2)]);
        assert_eq!(zero_run_len(16), 11);
        assert_eq!(zero_run_len(1), 4);
        assert_eq!(zero_run_len(0), 0);
    }
}
