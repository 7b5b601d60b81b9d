//! The circuits every generator (MPC, MAG-aware BDI, DPC) builds on: named
//! wires, constants, adder trees, popcount, one-hot muxes and priority
//! selects, barrel shifters, variable-length packers and unpackers, sector
//! compaction and expansion, and the valid/ready pipeline with its stage
//! registers.

use crate::ir::{Expr, IrError, Module, Reset, Signal, SignalKind};
use crate::unit::{Direction, PortDesc, StageDesc, StageProbe, UnitDescription};

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

/// The `width`-bit binary index of the set bit of the one-hot `onehot`
/// (bit `b` is the OR of the flags whose index has bit `b` set).
pub fn onehot_to_binary(onehot: &[Expr], width: u32) -> Result<Expr, IrError> {
    let bits = (0..width)
        .rev()
        .map(|b| {
            let terms: Vec<Expr> = onehot
                .iter()
                .enumerate()
                .filter(|(i, _)| (i >> b) & 1 == 1)
                .map(|(_, f)| f.clone())
                .collect();
            Ok(if terms.is_empty() {
                Expr::bool(false)
            } else {
                Expr::concat(terms)?.reduce_or()
            })
        })
        .collect::<Result<Vec<Expr>, IrError>>()?;
    Expr::concat(bits)
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
    /// The names of the load enables, first stage first.
    enable_names: Vec<String>,
    /// The data registers made by [`Pipeline::reg`]: (stage, register).
    registers: std::cell::RefCell<Vec<(usize, Signal)>>,
}

impl Pipeline {
    pub fn new(
        m: &mut Module,
        stages: usize,
        in_valid: &Expr,
        out_ready: &Expr,
    ) -> Result<Pipeline, IrError> {
        let resume = m.current_section().map(str::to_string);
        m.section("pipeline control: stage valid flags and load enables")?;
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
        if let Some(title) = resume {
            m.section(&title)?;
        }
        Ok(Pipeline {
            valid,
            enable,
            enable_names: (1..=stages).map(|i| format!("s{i}_enable")).collect(),
            registers: Default::default(),
        })
    }

    /// The name of stage `stage`'s register `name`: `s<stage>_<name>`.
    pub fn reg_name(stage: usize, name: &str) -> String {
        format!("s{stage}_{name}")
    }

    /// Opens stage `stage` (1-based): the signals declared from here on
    /// are its logic, and the Verilog opens them with the comment
    /// `// stage <stage>: <what>`.
    pub fn stage(&self, m: &mut Module, stage: usize, what: &str) -> Result<(), IrError> {
        Self::open_stage(m, stage, what)
    }

    /// [`Pipeline::stage`] before (or without) the pipeline control.
    pub fn open_stage(m: &mut Module, stage: usize, what: &str) -> Result<(), IrError> {
        m.section(&format!("stage {stage}: {what}"))
    }

    /// The data register `s<stage>_<name>` of stage `stage` (1-based),
    /// loading `next` when the stage is enabled.
    pub fn reg(
        &self,
        m: &mut Module,
        stage: usize,
        name: &str,
        next: Expr,
    ) -> Result<Expr, IrError> {
        let r = m.reg(&Self::reg_name(stage, name), next.width(), Reset::None)?;
        m.reg_next(&r, next, Some(self.enable[stage - 1].clone()))?;
        self.registers.borrow_mut().push((stage, r.clone()));
        Ok(r.expr())
    }

    /// The typed description of the unit `m` built on this pipeline
    /// (ports, latency, stages and their registers, `probes`).
    pub fn describe(&self, m: &Module, probes: Vec<StageProbe>) -> UnitDescription {
        let registers = self.registers.borrow();
        let stages = (1..=self.valid.len())
            .map(|n| {
                let regs: Vec<&Signal> = registers
                    .iter()
                    .filter(|(s, _)| *s == n)
                    .map(|(_, r)| r)
                    .collect();
                StageDesc {
                    stage: n,
                    title: regs
                        .first()
                        .and_then(|r| m.section_title(r))
                        .unwrap_or_default()
                        .to_string(),
                    registers: regs.iter().map(|r| r.name().to_string()).collect(),
                }
            })
            .collect();
        UnitDescription {
            module: m.name().to_string(),
            latency: self.valid.len(),
            ports: m
                .ports()
                .iter()
                .map(|p| PortDesc {
                    name: p.name().to_string(),
                    dir: match m.kind(p) {
                        Ok(SignalKind::Input) => Direction::Input,
                        _ => Direction::Output,
                    },
                    width: p.width(),
                })
                .collect(),
            control: self
                .valid
                .iter()
                .map(|v| v.name().to_string())
                .chain(self.enable_names.iter().cloned())
                .collect(),
            stages,
            probes,
        }
    }
}

/// `a - b` modulo 2^w with the borrow chain written as a Kogge-Stone
/// prefix tree (log2(w) AND-OR levels): `a + !b + 1`, generate
/// `a & !b`, propagate `a ^ !b`, the carry into bit `i` is
/// `G[i-1:0] | P[i-1:0]` (the carry-in is 1). Yosys maps a plain `-` to a
/// Brent-Kung tree that ABC's mapping turns into a longer chain; this form
/// keeps a shallower tree through mapping.
pub fn sub_prefix(m: &mut Module, name: &str, a: &Expr, b: &Expr) -> Result<Expr, IrError> {
    Ok(sub_prefix_gray(m, name, a, b, a.width())?.0)
}

/// Lane-wise [`sub_prefix`] of `a` and `b` (lanes of `lane` bits from bit
/// 0 up; the width a multiple of `lane`), and the lane-wise Gray code of
/// the difference `d` (`d ^ (d >> 1)` in each lane), each Gray bit one mux
/// on its carry: with `u = t[i] ^ t[i+1]`, bit `i` is
/// `c[i] ? u ^ k[i] : u ^ g[i]`, where `t`, `g` and `k = !(g | t)` are the
/// propagate, generate and kill bits, because the carry out of bit `i`
/// differs from the carry into it exactly when bit `i` kills an incoming
/// carry or generates a new one. So the Gray code costs no XOR level after
/// the sum. The carries into every bit are the named wire `<name>_carry`.
pub fn sub_prefix_gray(
    m: &mut Module,
    name: &str,
    a: &Expr,
    b: &Expr,
    lane: u32,
) -> Result<(Expr, Expr), IrError> {
    let w = a.width();
    let nb = b.not();
    // (the XOR refuses operands of different widths)
    let prop = a.xor(&nb)?;
    let gen = a.and(&nb)?;
    if lane == 0 || !w.is_multiple_of(lane) {
        // (a lane must divide the width: say which widths would)
        return Err(IrError::ParameterOutOfRange {
            what: format!("subtractor lane width (must divide the operand width {w})"),
            value: lane as u64,
            min: 1,
            max: w as u64,
        });
    }
    // (g[i], p[i]) spans bits i-span+1..=i of its lane after each level;
    // each level is a named wire pair `<name>_g<2span>`, `<name>_p<2span>`
    let mut g: Vec<Expr> = (0..w).map(|i| gen.bit(i)).collect::<Result<_, _>>()?;
    let mut p: Vec<Expr> = (0..w).map(|i| prop.bit(i)).collect::<Result<_, _>>()?;
    let mut span = 1u32;
    while span < lane {
        let (pg, pp) = (g.clone(), p.clone());
        for i in 0..w {
            if i % lane >= span {
                let j = (i - span) as usize;
                g[i as usize] = pg[i as usize].or(&pp[i as usize].and(&pg[j])?)?;
                p[i as usize] = pp[i as usize].and(&pp[j])?;
            }
        }
        span *= 2;
        let gw = wire(
            m,
            &format!("{name}_g{span}"),
            Expr::concat(g.iter().rev().cloned())?,
        )?;
        let pw = wire(
            m,
            &format!("{name}_p{span}"),
            Expr::concat(p.iter().rev().cloned())?,
        )?;
        if span >= lane {
            // the carries read every bit of a lane but its top one
            for sig in [gw.as_signal(), pw.as_signal()].into_iter().flatten() {
                let sig = sig.clone();
                for top in (lane - 1..w).step_by(lane as usize) {
                    m.mark_unused(&sig, top, top)?;
                }
            }
        }
        g = (0..w).map(|i| gw.bit(i)).collect::<Result<_, _>>()?;
        p = (0..w).map(|i| pw.bit(i)).collect::<Result<_, _>>()?;
    }
    let mut carries = Vec::with_capacity(w as usize);
    for i in 0..w as usize {
        carries.push(if (i as u32).is_multiple_of(lane) {
            Expr::bool(true)
        } else {
            g[i - 1].or(&p[i - 1])?
        });
    }
    let carry = wire(
        m,
        &format!("{name}_carry"),
        Expr::concat(carries.into_iter().rev())?,
    )?;
    let diff = prop.xor(&carry)?;
    let mut gray = Vec::with_capacity(w as usize);
    for i in (0..w).rev() {
        let c = carry.bit(i)?;
        gray.push(if (i + 1) % lane == 0 {
            diff.bit(i)?
        } else {
            let u = prop.bit(i)?.xor(&prop.bit(i + 1)?)?;
            let kill = gen.bit(i)?.or(&prop.bit(i)?)?.not();
            Expr::mux(&c, &u.xor(&kill)?, &u.xor(&gen.bit(i)?)?)?
        });
    }
    Ok((diff, Expr::concat(gray)?))
}

/// Byte `j` of a 256-bit block bus (byte j at `[8j+7:8j]`).
pub fn byte(block: &Expr, j: usize) -> Result<Expr, IrError> {
    block.slice(8 * j as u32 + 7, 8 * j as u32)
}

/// A 256-bit block bus from 32 byte expressions (byte 0 least significant).
pub fn block_of(bytes: Vec<Expr>) -> Result<Expr, IrError> {
    Expr::concat(bytes.into_iter().rev())
}

/// The top `keep` bits of `x` shifted left by the variable `amount` (zero
/// fill): a barrel shifter, one mux stage per bit of `amount`. A named
/// stage holds only the bits later stages read: bit `i` after the stage for
/// amount bit `b` feeds bits `i` and `i + 2^(b+1)` of the next.
pub fn shl_var_top(
    m: &mut Module,
    name: &str,
    x: &Expr,
    amount: &Expr,
    keep: u32,
) -> Result<Expr, IrError> {
    let w = x.width();
    let stages = amount.width();
    // need[b]: the lowest bit read of the value after stage b (a stage
    // whose shift is the whole width or more only zeroes: no move)
    let mut need = vec![0u32; stages as usize];
    let mut lo = w.saturating_sub(keep);
    for b in (0..stages).rev() {
        need[b as usize] = lo;
        if let Some(shift) = 1u32.checked_shl(b).filter(|&s| s < w) {
            lo = lo.saturating_sub(shift);
        }
    }
    let mut cur = x.clone();
    for b in 0..stages {
        let shift = 1u32 << b;
        if shift >= w {
            let rest = amount.slice(amount.width() - 1, b)?.reduce_or();
            cur = Expr::mux(&rest, &k(0, w)?, &cur)?;
            break;
        }
        cur = Expr::mux(&amount.bit(b)?, &cur.shl(shift), &cur)?;
        if b + 1 < stages && (shift << 1) < w {
            let lo = need[b as usize];
            let kept = wire(m, &format!("{name}_sh{b}"), cur.slice(w - 1, lo)?)?;
            cur = if lo == 0 {
                kept
            } else {
                // bits below `lo` are never read: zeros stand in for them
                Expr::concat([kept, k(0, lo)?])?
            };
        }
    }
    cur.slice(w - 1, w - keep)
}

/// One variable-length field: `data` MSB-aligned (bits at and beyond `len`
/// are zero), `len` its length, `max` the largest `len` can be.
#[derive(Clone)]
pub struct Field {
    pub data: Expr,
    pub len: Expr,
    pub max: u64,
}

/// Concatenate `fields` in order into one MSB-aligned field (a balanced
/// tree of two-field merges: the right field is shifted right by the left
/// field's length and ORed in).
pub fn pack(m: &mut Module, name: &str, fields: Vec<Field>) -> Result<Field, IrError> {
    let mut level = fields;
    let mut depth = 0;
    while level.len() > 1 {
        let mut next = Vec::with_capacity(level.len().div_ceil(2));
        for (idx, pair) in level.chunks(2).enumerate() {
            if pair.len() == 1 {
                next.push(pair[0].clone());
                continue;
            }
            let (a, b) = (&pair[0], &pair[1]);
            let (wa, wb) = (a.data.width(), b.data.width());
            let stem = format!("{name}{depth}_{idx}");
            let b_wide = Expr::concat([b.data.clone(), k(0, wa)?])?;
            let b_sh = shr_var(m, &format!("{stem}_b"), &b_wide, &a.len)?;
            let data = Expr::concat([a.data.clone(), k(0, wb)?])?.or(&b_sh)?;
            let max = a.max + b.max;
            let lw = bits_for(max);
            let len = a.len.zext(lw)?.add(&b.len.zext(lw)?)?;
            next.push(Field {
                data: wire(m, &format!("{stem}_data"), data)?,
                len: wire(m, &format!("{stem}_len"), len)?,
                max,
            });
        }
        level = next;
        depth += 1;
    }
    level.pop().ok_or(IrError::EmptyConcat)
}

/// The inverse of [`pack`]: `stream` (MSB-aligned, `lens.len() * width`
/// bits) holds fields of lengths `lens` back to back; return each field's
/// first `width` bits.
pub fn unpack(
    m: &mut Module,
    name: &str,
    stream: &Expr,
    lens: &[Expr],
    width: u32,
) -> Result<Vec<Expr>, IrError> {
    let n = lens.len();
    if n == 1 {
        return Ok(vec![
            stream.slice(stream.width() - 1, stream.width() - width)?
        ]);
    }
    let mid = n.div_ceil(2);
    let max_left = lens[..mid]
        .iter()
        .map(|l| (1u64 << l.width()) - 1)
        .sum::<u64>();
    let left_len = wire(
        m,
        &format!("{name}_len"),
        sum(&lens[..mid], bits_for(max_left))?,
    )?;
    let sw = stream.width();
    let left = stream.slice(sw - 1, sw - mid as u32 * width)?;
    let right_w = (n - mid) as u32 * width;
    let sh = shl_var_top(m, &format!("{name}_r"), stream, &left_len, right_w)?;
    let right = wire(m, &format!("{name}_r"), sh)?;
    let mut out = unpack(m, &format!("{name}l"), &left, &lens[..mid], width)?;
    out.extend(unpack(m, &format!("{name}r"), &right, &lens[mid..], width)?);
    Ok(out)
}

/// Per sector `kk`, the number of set mask bits below it (`bits_for(K)`
/// wide).
pub fn prefix_counts(mask: &[Expr]) -> Result<Vec<Expr>, IrError> {
    let w = bits_for(mask.len() as u64);
    (0..mask.len())
        .map(|kk| {
            if kk == 0 {
                k(0, w)
            } else {
                popcount(&mask[..kk])?.zext(w)
            }
        })
        .collect()
}

/// Critical sectors packed to the front in address order, zeros after
/// (`sectors[kk]` is sector `kk`; slot 0 is the least significant).
pub fn compact(m: &mut Module, mask: &[Expr], sectors: &[Expr]) -> Result<Expr, IrError> {
    let pre = prefix_counts(mask)?;
    let mut slots = Vec::new();
    for c in 0..sectors.len() {
        let sel: Vec<Expr> = (c..sectors.len())
            .map(|kk| mask[kk].and(&pre[kk].cmp_eq(&k(c as u128, pre[kk].width())?)?))
            .collect::<Result<_, _>>()?;
        let slot = onehot_mux(&sel, &sectors[c..])?;
        slots.push(wire(m, &format!("slot{c}"), slot)?);
    }
    Expr::concat(slots.into_iter().rev())
}

/// The inverse of [`compact`]: sector `kk` of the result is slot
/// (set mask bits below `kk`) if `mask[kk]`, else zero.
pub fn expand(mask: &[Expr], slots: &[Expr]) -> Result<Expr, IrError> {
    let pre = prefix_counts(mask)?;
    let mut out = Vec::new();
    for kk in 0..slots.len() {
        let sel: Vec<Expr> = (0..=kk)
            .map(|c| mask[kk].and(&pre[kk].cmp_eq(&k(c as u128, pre[kk].width())?)?))
            .collect::<Result<_, _>>()?;
        out.push(onehot_mux(&sel, &slots[..=kk])?);
    }
    Expr::concat(out.into_iter().rev())
}

/// `table[v]` for the small unsigned `sel` (a constant lookup).
pub fn lookup(sel: &Expr, table: &[u64], width: u32) -> Result<Expr, IrError> {
    let s: Vec<Expr> = (0..table.len())
        .map(|v| sel.cmp_eq(&k(v as u128, sel.width())?))
        .collect::<Result<_, _>>()?;
    let vals: Vec<Expr> = table
        .iter()
        .map(|&v| k(v as u128, width))
        .collect::<Result<_, _>>()?;
    onehot_mux(&s, &vals)
}

/// Up to this many flags, [`first_set`] writes the priority chain out per
/// flag (`flag_j & ~flag_0 & ... & ~flag_{j-1}`); its text grows with the
/// square of the count, so longer vectors use one adder instead.
pub const PRIORITY_CHAIN_MAX: u32 = 32;

/// The one-hot of the lowest set bit of `flags` (bit `j` = flag `j`), one
/// expression per bit, and whether no bit is set. Up to
/// [`PRIORITY_CHAIN_MAX`] flags as a chain of ANDs; beyond, as the wire
/// `name = flags & (~flags + 1)` (the carry of the increment runs through
/// the low zero flags and stops at the first set one).
pub fn first_set(m: &mut Module, name: &str, flags: &Expr) -> Result<(Vec<Expr>, Expr), IrError> {
    let n = flags.width();
    if n <= PRIORITY_CHAIN_MAX {
        let mut first = Vec::with_capacity(n as usize);
        let mut none_before = Expr::bool(true);
        for j in 0..n {
            let f = flags.bit(j)?;
            first.push(f.and(&none_before)?);
            none_before = none_before.and(&f.not())?;
        }
        return Ok((first, none_before));
    }
    let inc = flags.not().add(&k(1, n)?)?;
    let onehot = wire(m, name, flags.and(&inc)?)?;
    let first = (0..n).map(|j| onehot.bit(j)).collect::<Result<_, _>>()?;
    Ok((first, flags.reduce_or().not()))
}
