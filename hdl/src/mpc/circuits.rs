//! Small reusable circuits built on the IR: named wires, constants, adder
//! trees, muxes, barrel shifters and the valid/ready pipeline control.

use crate::ir::{Expr, IrError, Module, Reset, Signal};

/// A sized constant.
pub fn k(value: u128, width: u32) -> Result<Expr, IrError> {
    Expr::constant(value, width)
}

/// Declare a wire `name` driven by `e` and return it as an expression, so
/// that later uses share the logic instead of copying the expression tree.
pub fn wire(m: &mut Module, name: &str, e: Expr) -> Result<Expr, IrError> {
    let s = m.wire(name, e.width())?;
    m.assign(&s, e)?;
    Ok(s.expr())
}

/// Bits needed to hold `n` (at least 1).
pub fn bits_for(n: u64) -> u32 {
    (64 - n.leading_zeros()).max(1)
}

/// Sum of expressions, zero-extended to `width`, as a balanced adder tree.
pub fn sum(terms: &[Expr], width: u32) -> Result<Expr, IrError> {
    let mut level: Vec<Expr> = terms
        .iter()
        .map(|t| t.zext(width))
        .collect::<Result<_, _>>()?;
    if level.is_empty() {
        return k(0, width);
    }
    while level.len() > 1 {
        let mut next = Vec::with_capacity(level.len().div_ceil(2));
        for pair in level.chunks(2) {
            next.push(if pair.len() == 2 {
                pair[0].add(&pair[1])?
            } else {
                pair[0].clone()
            });
        }
        level = next;
    }
    Ok(level.remove(0))
}

/// Number of set bits among 1-bit expressions.
pub fn popcount(bits: &[Expr]) -> Result<Expr, IrError> {
    sum(bits, bits_for(bits.len() as u64))
}

/// OR of `values[i]` where `select[i]` (1 bit each) is high: a one-hot mux.
pub fn onehot_mux(select: &[Expr], values: &[Expr]) -> Result<Expr, IrError> {
    let width = values.first().map_or(1, Expr::width);
    let mut acc: Option<Expr> = None;
    for (s, v) in select.iter().zip(values) {
        let term = v.and(&s.repeat(width)?)?;
        acc = Some(match acc {
            None => term,
            Some(a) => a.or(&term)?,
        });
    }
    acc.map_or_else(|| k(0, width), Ok)
}

/// `e == value` for a constant.
pub fn eq_const(e: &Expr, value: u128) -> Result<Expr, IrError> {
    e.cmp_eq(&k(value, e.width())?)
}

/// Logical right shift of `x` by the variable amount `amount`, zero fill
/// (a barrel shifter: one mux stage per bit of `amount`).
pub fn shr_var(m: &mut Module, name: &str, x: &Expr, amount: &Expr) -> Result<Expr, IrError> {
    let mut cur = x.clone();
    for b in 0..amount.width() {
        let shift = 1u32 << b;
        if shift >= x.width() {
            // Any set bit at or above this one clears everything.
            let rest = amount.slice(amount.width() - 1, b)?.reduce_or();
            cur = Expr::mux(&rest, &k(0, x.width())?, &cur)?;
            break;
        }
        cur = Expr::mux(&amount.bit(b)?, &cur.shr(shift), &cur)?;
        // name every stage but the last (the caller names or slices it)
        if b + 1 < amount.width() && (shift << 1) < x.width() {
            cur = wire(m, &format!("{name}_sh{b}"), cur)?;
        }
    }
    Ok(cur)
}

/// The valid/ready control of an `n`-stage pipeline: registers
/// `s<i>_valid` and wires `s<i>_enable` (stage i loads when it is empty or
/// its content moves on). Returns the enables, first stage first.
pub struct Pipeline {
    pub valid: Vec<Signal>,
    pub enable: Vec<Expr>,
}

impl Pipeline {
    pub fn new(
        m: &mut Module,
        stages: usize,
        in_valid: &Expr,
        out_ready: &Expr,
    ) -> Result<Pipeline, IrError> {
        let valid: Vec<Signal> = (1..=stages)
            .map(|i| m.reg(&format!("s{i}_valid"), 1, Reset::Value(0)))
            .collect::<Result<_, _>>()?;
        let mut enable = vec![Expr::bool(false); stages];
        let mut downstream = out_ready.clone();
        for i in (0..stages).rev() {
            enable[i] = wire(
                m,
                &format!("s{}_enable", i + 1),
                valid[i].expr().not().or(&downstream)?,
            )?;
            downstream = enable[i].clone();
        }
        for i in 0..stages {
            let next = if i == 0 {
                in_valid.clone()
            } else {
                valid[i - 1].expr()
            };
            m.reg_next(&valid[i], next, Some(enable[i].clone()))?;
        }
        Ok(Pipeline { valid, enable })
    }

    /// A data register of stage `stage` (1-based) loading `next` when the
    /// stage is enabled.
    pub fn reg(
        &self,
        m: &mut Module,
        stage: usize,
        name: &str,
        next: Expr,
    ) -> Result<Expr, IrError> {
        let r = m.reg(name, next.width(), Reset::None)?;
        m.reg_next(&r, next, Some(self.enable[stage - 1].clone()))?;
        Ok(r.expr())
    }
}

/// Byte `j` of a 256-bit block bus (byte j at `[8j+7:8j]`).
pub fn byte(block: &Expr, j: usize) -> Result<Expr, IrError> {
    block.slice(8 * j as u32 + 7, 8 * j as u32)
}

/// A 256-bit block bus from 32 byte expressions (byte 0 least significant).
pub fn block_of(bytes: Vec<Expr>) -> Result<Expr, IrError> {
    Expr::concat(bytes.into_iter().rev())
}
