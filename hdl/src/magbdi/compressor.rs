//! `bdi_compressor`: the MAG-aware BDI compressor (docs/hw/mag-bdi.md).
//!
//! Per delta width `d_i` of the size table, one compressor unit `cu<i>`
//! (the paper's Fig. 9; `i` the smallest size of that width), all in
//! parallel on the input block:
//! `cu<i>_zfit` (bit j: value j fits the zero base), the first value that
//! does not as `cu<i>_base` (a tree of 2:1 muxes, `cu<i>_pick*`, each
//! choosing its lower half when a value there misses the zero base), per
//! value a fit check against the base that needs no full-width
//! subtraction (a comparator tree on the low `d` bits, equality checks of
//! the high bits against the base's and its neighbours'), the low bits of
//! the delta from a `d`-bit prefix subtractor (`cu<i>_low<j>`),
//! `cu<i>_fits` and `cu<i>_data` (the compressed bytes of this size). A
//! prefix-OR select takes the smallest fitting size, else raw; the
//! encoding and the bytes are registered. With two stages the block, the
//! zero-base checks and the bases are registered between the base
//! selection and the rest (`s1_block`, `s1_cu<i>_zfit`, `s1_cu<i>_base`).

use golden::magbdi::{DeltaMode, Table};

use super::{check_stages, first_one, first_uncovered, fits, onehot_select};
use crate::circuits::{k, sub_prefix, wire};
use crate::ir::{Expr, IrError, Module};
use crate::mpc::probes::Probes;
use crate::stream::StreamUnit;
use crate::unit::{Mirror, SizeField, UnitDescription, When};

pub const MODULE: &str = "bdi_compressor";

/// Build the compressor for a size table (default depth).
pub fn build(table: &Table) -> Result<Module, IrError> {
    Ok(build_described(table)?.0)
}

/// Build `bdi_compressor` at the default depth with its description.
pub fn build_described(table: &Table) -> Result<(Module, UnitDescription), IrError> {
    build_staged(table, super::LATENCY)
}

/// Whether `v` (a `w`-bit value) fits a `d`-bit delta field to the base
/// `b`, and the low `d` bits of the delta `v - b`, without a `w`-bit
/// subtraction. With `v = vh:vl` and `b = bh:bl` split at bit `d`, the
/// unsigned delta fits exactly when `vh - bh - borrow == 0` (mod
/// `2^(w-d)`), `borrow` the borrow of `vl - bl`: `vh == bh` without a
/// borrow, `vh == bh + 1` with one. A signed delta fits exactly when
/// `delta + 2^(d-1)` fits unsigned, i.e. the unsigned check against
/// `b' = b - 2^(d-1)`, whose low bits are `bl` with bit `d-1` inverted and
/// whose high bits are `bh` (bit `d-1` of `b` set) or `bh - 1`. Each
/// equality is one XOR per bit, a local term and an AND tree: `vh == bh +
/// 1` exactly when bit 0 differs and, above it, bit `i` differs exactly
/// when `bh[i-1] & !vh[i-1]` (the carry of `bh + !vh + 1` into an all-ones
/// sum); `vh == bh - 1` likewise with the roles of `vh` and `bh` swapped.
fn fit_to_base(
    m: &mut Module,
    name: &str,
    v: &Expr,
    b: &Expr,
    d: u32,
    mode: DeltaMode,
) -> Result<(Expr, Expr), IrError> {
    let w = v.width();
    let signed = mode == DeltaMode::Signed;
    let low_of = |x: &Expr| x.slice(d - 1, 0);
    // the low operand of the base: b' (signed) or b
    let bl = if signed && d > 1 {
        Expr::concat([b.bit(d - 1)?.not(), b.slice(d - 2, 0)?])?
    } else if signed {
        b.bit(0)?.not()
    } else {
        low_of(b)?
    };
    let diff = sub_prefix(m, name, &low_of(v)?, &bl)?;
    // the borrow out of the low bits from a comparator tree of its own
    // (shallower than the subtractor's carries, which give the field)
    let (borrow, _) = less_equal(&low_of(v)?, &bl, 0, d)?;
    let low = if signed && d > 1 {
        Expr::concat([diff.bit(d - 1)?.not(), diff.slice(d - 2, 0)?])?
    } else if signed {
        diff.bit(0)?.not()
    } else {
        diff.slice(d - 1, 0)?
    };
    let (vh, bh) = (v.slice(w - 1, d)?, b.slice(w - 1, d)?);
    let h = w - d;
    let x = vh.xor(&bh)?;
    let eq = x.reduce_or().not();
    // `vh == y + 1` for (y, z) = (bh, vh), `vh == bh - 1` for (vh, bh)
    let plus_one = |y: &Expr, z: &Expr| -> Result<Expr, IrError> {
        if h == 1 {
            return x.bit(0);
        }
        let carry = y.slice(h - 2, 0)?.and(&z.slice(h - 2, 0)?.not())?;
        let wrong = x.slice(h - 1, 1)?.xor(&carry)?;
        x.bit(0)?.and(&wrong.reduce_or().not())
    };
    let up = plus_one(&bh, &vh)?;
    let fit = if signed {
        let down = plus_one(&vh, &bh)?;
        Expr::mux(
            &b.bit(d - 1)?,
            &Expr::mux(&borrow, &up, &eq)?,
            &Expr::mux(&borrow, &eq, &down)?,
        )?
    } else {
        Expr::mux(&borrow, &up, &eq)?
    };
    Ok((fit, low))
}

/// Whether `a < b` and whether `a == b` on bits `lo..hi`, as a balanced
/// tree: the upper half decides unless it is equal.
fn less_equal(a: &Expr, b: &Expr, lo: u32, hi: u32) -> Result<(Expr, Expr), IrError> {
    if hi - lo == 1 {
        let (x, y) = (a.bit(lo)?, b.bit(lo)?);
        return Ok((x.not().and(&y)?, x.xor(&y)?.not()));
    }
    let mid = lo + (hi - lo) / 2;
    let (lt_lo, eq_lo) = less_equal(a, b, lo, mid)?;
    let (lt_hi, eq_hi) = less_equal(a, b, mid, hi)?;
    Ok((lt_hi.or(&eq_hi.and(&lt_lo)?)?, eq_hi.and(&eq_lo)?))
}

/// Build `bdi_compressor` with `stages` pipeline stages (1 or 2) and its
/// description.
pub fn build_staged(table: &Table, stages: usize) -> Result<(Module, UnitDescription), IrError> {
    check_stages(MODULE, stages, super::MAX_COMPRESSOR_STAGES)?;
    let p = &table.params;
    let n = p.values();
    let w = 8 * p.base_bytes as u32;
    let bus = 8 * p.block_bytes as u32;
    let e = table.encoding_bits();
    let mut u = StreamUnit::begin(MODULE)?;
    let in_block = u.input("in_block", bus)?;
    let mut u = u.outputs()?;
    let out_enc = u.output("out_enc", e)?;
    let out_data = u.output("out_data", bus)?;
    let mut u = u.pipeline(stages)?;
    u.stage(
        1,
        if stages == 1 {
            "one compressor unit per delta width, the smallest size that fits, output register"
        } else {
            "zero-base checks and the base of every compressor unit"
        },
    )?;
    let values_of = |block: &Expr| -> Result<Vec<Expr>, IrError> {
        (0..n as u32)
            .map(|j| block.slice(w * j + w - 1, w * j))
            .collect()
    };
    // one unit per delta width: a larger size with the width of a smaller
    // one fits exactly when the smaller one does, so it is never chosen
    let units: Vec<(usize, u32)> = table
        .sizes
        .iter()
        .enumerate()
        .filter(|(i, s)| {
            !table.sizes[..*i]
                .iter()
                .any(|t| t.delta_bits == s.delta_bits)
        })
        .map(|(i, s)| (i, s.delta_bits))
        .collect();
    let mut probes = Probes::default();
    let record = |probes: &mut Probes, m: &Module, stage, i: usize, signal, field| {
        let mirror = Mirror::Size { index: i, field };
        probes.record(
            m,
            stage,
            &format!("cu{i}_{signal}"),
            mirror,
            When::Always,
            None,
        )
    };

    // zero base, and the first value it cannot cover as the base
    let vals = values_of(&in_block)?;
    let mut fronts = Vec::with_capacity(units.len());
    for &(i, d) in &units {
        let cu = format!("cu{i}");
        let zfit: Vec<Expr> = vals
            .iter()
            .map(|v| fits(v, d, p.mode))
            .collect::<Result<_, _>>()?;
        let zfit = wire(
            &mut u.m,
            &format!("{cu}_zfit"),
            Expr::concat(zfit.into_iter().rev())?,
        )?;
        let base = first_uncovered(&mut u.m, &cu, &zfit, &vals)?;
        let base = wire(&mut u.m, &format!("{cu}_base"), base)?;
        record(&mut probes, &u.m, 1, i, "zfit", SizeField::ZeroFit)?;
        record(&mut probes, &u.m, 1, i, "base", SizeField::Base)?;
        fronts.push((zfit, base));
    }
    let (block, last) = if stages == 1 {
        (in_block, 1)
    } else {
        let block = u.reg(1, "block", in_block)?;
        for (&(i, _), (zfit, base)) in units.iter().zip(fronts.iter_mut()) {
            *zfit = u.reg(1, &format!("cu{i}_zfit"), zfit.clone())?;
            *base = u.reg(1, &format!("cu{i}_base"), base.clone())?;
        }
        u.stage(
            2,
            "deltas and fit checks, the smallest size that fits, output register",
        )?;
        (block, 2)
    };

    let vals = values_of(&block)?;
    let mut fit_flags = Vec::with_capacity(units.len());
    let mut datas = Vec::with_capacity(units.len() + 1);
    for (&(i, d), (zfit, base)) in units.iter().zip(&fronts) {
        let s = &table.sizes[i];
        let cu = format!("cu{i}");
        let mut ok = Vec::with_capacity(n);
        let mut fields = Vec::with_capacity(n);
        for (j, v) in vals.iter().enumerate() {
            let (fit, low) = fit_to_base(&mut u.m, &format!("{cu}_low{j}"), v, base, d, p.mode)?;
            let z = zfit.bit(j as u32)?;
            ok.push(z.or(&fit)?);
            fields.push(Expr::mux(&z, &v.slice(d - 1, 0)?, &low)?);
        }
        let ok = Expr::concat(ok.into_iter().rev())?;
        let f = wire(&mut u.m, &format!("{cu}_fits"), ok.reduce_and())?;
        // the compressed bit string, MSB first: base, bitmask (value 0
        // first), deltas (value 0 first), zero padding to 8 * bytes bits
        let mut parts = vec![base.clone()];
        parts.extend(
            (0..n as u32)
                .map(|j| zfit.bit(j).map(|b| b.not()))
                .collect::<Result<Vec<_>, _>>()?,
        );
        parts.extend(fields);
        let pad = 8 * s.bytes as u32 - s.used_bits as u32;
        if pad > 0 {
            parts.push(k(0, pad)?);
        }
        let stream = Expr::concat(parts)?;
        let c = 8 * s.bytes as u32;
        // byte j (memory order) = stream bits [c-1-8j : c-8-8j]
        let mut bytes: Vec<Expr> = (0..s.bytes as u32)
            .map(|j| stream.slice(c - 1 - 8 * j, c - 8 - 8 * j))
            .collect::<Result<_, _>>()?;
        bytes.reverse();
        let mut data = Expr::concat(bytes)?;
        if c < bus {
            data = data.zext(bus)?;
        }
        let data = wire(&mut u.m, &format!("{cu}_data"), data)?;
        record(&mut probes, &u.m, last, i, "fits", SizeField::Fits)?;
        record(&mut probes, &u.m, last, i, "data", SizeField::Data)?;
        fit_flags.push(f);
        datas.push(data);
    }
    // the smallest fitting size, else raw
    let fit_vec = Expr::concat(fit_flags.iter().rev().cloned())?;
    let (mut sel, none) = first_one(&mut u.m, "first_fit", &fit_vec)?;
    sel.push(none);
    let codes: Vec<Expr> = units
        .iter()
        .map(|&(i, _)| i as u128)
        .chain([table.raw_code() as u128])
        .map(|c| k(c, e))
        .collect::<Result<_, _>>()?;
    datas.push(block);
    let enc = wire(&mut u.m, "enc", onehot_select(&sel, &codes)?)?;
    let data = wire(&mut u.m, "data", onehot_select(&sel, &datas)?)?;

    let reg_enc = u.reg(last, "enc", enc)?;
    let reg_data = u.reg(last, "data", data)?;
    for (name, mirror) in [("enc", Mirror::Encoding), ("data", Mirror::Data)] {
        probes.record(&u.m, last, name, mirror, When::Always, None)?;
        probes.record_reg(&u.m, last, name, mirror, When::Always, None)?;
    }
    u.drive(&out_enc, reg_enc)?;
    u.drive(&out_data, reg_data)?;
    u.finish(probes.list)
}
