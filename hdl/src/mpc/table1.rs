//! Table-1 symbol classification and codes in hardware
//! (docs/spec/mpc.md section 4). Codes are produced **left-aligned** in a
//! [`SLOT`]-bit slot (17 bits): the code's first bit is the slot's top bit.

use golden::mpc::{STREAM_BITS, SYMBOLS};

use crate::circuits::{eq_const, k, popcount, wire};
use crate::ir::{Expr, IrError, Module};

/// Bits of one symbol.
pub const SYMBOL_BITS: u32 = (STREAM_BITS / SYMBOLS) as u32;

/// The code lengths of Table 1 (golden `table1::Code::bit_len`): one zero
/// symbol `0011`.
pub const ZERO_LEN: u32 = 4;
/// A run of 2..=15 zero symbols: `010` and the run length.
pub const RUN_LEN: u32 = 7;
/// A single 1: `011` and its position.
pub const SINGLE_LEN: u32 = 7;
/// Two adjacent 1s: `0000` and the first one's position.
pub const PAIR_LEN: u32 = 8;
/// A zero half: `0001` or `0010` and the other half.
pub const HALF_LEN: u32 = 12;
/// Anything else: `1` and the symbol.
pub const DEFAULT_LEN: u32 = 1 + SYMBOL_BITS;
/// All symbols zero: a run of 15 and one zero.
pub const ALL_ZERO_LEN: u32 = RUN_LEN + ZERO_LEN;

/// Width of one code slot (the longest code).
pub const SLOT: u32 = DEFAULT_LEN;
/// Width of a code length.
pub const LEN_BITS: u32 = 5;

/// What a 16-bit symbol matches.
pub struct SymbolClass {
    pub zero: Expr,
    pub single: Expr,
    pub pair: Expr,
    pub front: Expr,
    pub back: Expr,
    /// Position of the single 1 (valid when `single`).
    pub q_single: Expr,
    /// Start position of the two 1s (valid when `pair`).
    pub q_pair: Expr,
}

/// Classify symbol `s` (16 bits, position q = bit 15-q); wires are named
/// `<name>_*`. Without `with_positions` the positions are left out (0),
/// for length-only use.
pub fn classify(
    m: &mut Module,
    name: &str,
    s: &Expr,
    with_positions: bool,
) -> Result<SymbolClass, IrError> {
    let zero = wire(m, &format!("{name}_zero"), s.reduce_or().not())?;
    let (_, many) = any_and_many(s)?;
    let single = wire(m, &format!("{name}_single"), zero.not().and(&many.not())?)?;
    let mut pair_hits = Vec::new();
    let mut q_pair_terms = Vec::new();
    let mut q_single_terms = Vec::new();
    for q in 0..16u32 {
        let bit = s.bit(15 - q)?;
        q_single_terms.push(k(q as u128, 4)?.and(&bit.repeat(4)?)?);
        if q <= 14 {
            let hit = eq_const(s, 3u128 << (14 - q))?;
            q_pair_terms.push(k(q as u128, 4)?.and(&hit.repeat(4)?)?);
            pair_hits.push(hit);
        }
    }
    let or_all = |v: Vec<Expr>| -> Result<Expr, IrError> {
        let mut it = v.into_iter();
        let first = it.next().ok_or(IrError::EmptyConcat)?;
        it.try_fold(first, |a, b| a.or(&b))
    };
    let pair = wire(m, &format!("{name}_pair"), or_all(pair_hits)?)?;
    let (q_single, q_pair) = if with_positions {
        (
            wire(m, &format!("{name}_q_single"), or_all(q_single_terms)?)?,
            wire(m, &format!("{name}_q_pair"), or_all(q_pair_terms)?)?,
        )
    } else {
        (k(0, 4)?, k(0, 4)?)
    };
    let front = wire(m, &format!("{name}_front"), eq_const(&s.slice(15, 8)?, 0)?)?;
    let back = wire(m, &format!("{name}_back"), eq_const(&s.slice(7, 0)?, 0)?)?;
    Ok(SymbolClass {
        zero,
        single,
        pair,
        front,
        back,
        q_single,
        q_pair,
    })
}

/// Whether `x` has a set bit, and whether it has two or more, as a
/// balanced tree (halves combine as `any = a1 | a2`,
/// `many = m1 | m2 | (a1 & a2)`): logarithmic depth, no subtractor.
pub fn any_and_many(x: &Expr) -> Result<(Expr, Expr), IrError> {
    let w = x.width();
    if w == 1 {
        return Ok((x.clone(), Expr::bool(false)));
    }
    let half = w / 2;
    let (a1, m1) = any_and_many(&x.slice(w - 1, half)?)?;
    let (a2, m2) = any_and_many(&x.slice(half - 1, 0)?)?;
    Ok((a1.or(&a2)?, m1.or(&m2)?.or(&a1.and(&a2)?)?))
}

/// Priority select: the first `(condition, value)` whose condition holds,
/// else `default`.
pub fn priority(cases: &[(Expr, Expr)], default: Expr) -> Result<Expr, IrError> {
    let mut acc = default;
    for (c, v) in cases.iter().rev() {
        acc = Expr::mux(c, v, &acc)?;
    }
    Ok(acc)
}

/// Code length of a nonzero symbol (5 bits).
pub fn nonzero_len(c: &SymbolClass) -> Result<Expr, IrError> {
    priority(
        &[
            (c.single.clone(), k(SINGLE_LEN as u128, LEN_BITS)?),
            (c.pair.clone(), k(PAIR_LEN as u128, LEN_BITS)?),
            (c.front.or(&c.back)?, k(HALF_LEN as u128, LEN_BITS)?),
        ],
        k(DEFAULT_LEN as u128, LEN_BITS)?,
    )
}

/// Left-aligned code of a nonzero symbol `s`.
pub fn nonzero_code(c: &SymbolClass, s: &Expr) -> Result<Expr, IrError> {
    let single = Expr::concat([k(0b011, 3)?, c.q_single.clone(), k(0, SLOT - SINGLE_LEN)?])?;
    let pair = Expr::concat([k(0b0000, 4)?, c.q_pair.clone(), k(0, SLOT - PAIR_LEN)?])?;
    let front = Expr::concat([k(0b0001, 4)?, s.slice(7, 0)?, k(0, SLOT - HALF_LEN)?])?;
    let back = Expr::concat([k(0b0010, 4)?, s.slice(15, 8)?, k(0, SLOT - HALF_LEN)?])?;
    let default = Expr::concat([k(1, 1)?, s.clone()])?;
    priority(
        &[
            (c.single.clone(), single),
            (c.pair.clone(), pair),
            (c.front.clone(), front),
            (c.back.clone(), back),
        ],
        default,
    )
}

/// Facts about the zero symbols of a block: `zero[m]` per symbol.
pub struct ZeroRuns {
    /// Symbol m starts a run of zeros.
    pub start: Vec<Expr>,
    /// Symbol m is the only zero of its run.
    pub single: Vec<Expr>,
    /// All symbols are zero.
    pub all: Expr,
}

pub fn zero_runs(m: &mut Module, name: &str, zero: &[Expr]) -> Result<ZeroRuns, IrError> {
    let n = zero.len();
    let mut start = Vec::with_capacity(n);
    let mut single = Vec::with_capacity(n);
    for i in 0..n {
        let s = if i == 0 {
            zero[0].clone()
        } else {
            zero[i].and(&zero[i - 1].not())?
        };
        let st = wire(m, &format!("{name}_run_start{i}"), s)?;
        let alone = if i + 1 == n {
            st.clone()
        } else {
            st.and(&zero[i + 1].not())?
        };
        single.push(alone);
        start.push(st);
    }
    let all = wire(
        m,
        &format!("{name}_all_zero"),
        Expr::concat(zero.iter().cloned())?.reduce_and(),
    )?;
    Ok(ZeroRuns { start, single, all })
}

/// Length of the run of zeros starting at symbol `i` (5 bits; counts
/// consecutive zero flags from `i`).
pub fn run_length(zero: &[Expr], i: usize) -> Result<Expr, IrError> {
    let mut terms = Vec::new();
    let mut acc = zero[i].clone();
    terms.push(acc.clone());
    for z in &zero[i + 1..] {
        acc = acc.and(z)?;
        terms.push(acc.clone());
    }
    let c = popcount(&terms)?;
    c.zext(LEN_BITS)
}

/// Length of the code emitted at a zero symbol `i` (0 if not a run start).
pub fn zero_len(r: &ZeroRuns, i: usize) -> Result<Expr, IrError> {
    let full = if i == 0 {
        r.all.clone()
    } else {
        Expr::bool(false)
    };
    let len = priority(
        &[
            (r.single[i].clone(), k(ZERO_LEN as u128, LEN_BITS)?),
            (full, k(ALL_ZERO_LEN as u128, LEN_BITS)?),
        ],
        k(RUN_LEN as u128, LEN_BITS)?,
    )?;
    Expr::mux(&r.start[i], &len, &k(0, LEN_BITS)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use golden::mpc::table1::Code;

    /// The code lengths are the golden model's.
    #[test]
    fn code_lengths_are_the_golden_ones() {
        assert_eq!(Code::Zero.bit_len(), ZERO_LEN);
        assert_eq!(Code::ZeroRun(2).bit_len(), RUN_LEN);
        assert_eq!(Code::SingleOne(0).bit_len(), SINGLE_LEN);
        assert_eq!(Code::TwoOnes(0).bit_len(), PAIR_LEN);
        assert_eq!(Code::FrontHalfZero(1).bit_len(), HALF_LEN);
        assert_eq!(Code::BackHalfZero(1).bit_len(), HALF_LEN);
        assert_eq!(Code::Default(0x8421).bit_len(), DEFAULT_LEN);
        let all_zero = golden::mpc::table1::zero_run_len(SYMBOLS);
        assert_eq!(all_zero, ALL_ZERO_LEN);
        assert_eq!(SLOT, 17);
        assert_eq!(SYMBOL_BITS, 16);
    }
}
