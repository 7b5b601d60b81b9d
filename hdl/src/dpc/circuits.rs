//! DPC-specific circuits: the variable-length packer and unpacker trees,
//! sector compaction and expansion, and bit-plane reductions.

use crate::ir::{Expr, IrError, Module};
use crate::mpc::circuits::{bits_for, k, onehot_mux, popcount, shr_var, sum, wire};

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
