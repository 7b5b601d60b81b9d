//! `bdi_compressor`: the MAG-aware BDI compressor (docs/hw/mag-bdi.md).
//!
//! Per delta width `d_i` of the size table, one compressor unit `cu<i>`
//! (the paper's Fig. 9; `i` the smallest size of that width), all in
//! parallel on the input block:
//! `cu<i>_zfit` (bit j: value j fits the zero base), the first value that
//! does not as `cu<i>_base` (a tree of 2:1 muxes, `cu<i>_pick*`, each
//! choosing its lower half when a value there misses the zero base), per
//! value a fit check against the base that needs no full-width
//! subtraction (the borrow of the low `d` bits, `cu<i>_borrow`; equality
//! of the high bits with the base's and its neighbours', `cu<i>_eq`,
//! `cu<i>_up`, `cu<i>_down`, word operations on the whole block), the low
//! `d` bits of each delta and their borrow from one prefix subtractor per
//! value, all values lanes of one word (`cu<i>_sub_*`, `cu<i>_diff`), the
//! stored fields (`cu<i>_deltas`, the zero base's where that fits),
//! `cu<i>_fits` and `cu<i>_data` (the compressed bytes of this size). A
//! prefix-OR select takes the smallest fitting size, else raw; the
//! encoding and the bytes are registered. With two stages the block, the
//! zero-base checks and the bases are registered between the base
//! selection and the rest (`s1_block`, `s1_cu<i>_zfit`, `s1_cu<i>_base`).

use golden::magbdi::{DeltaMode, Table};

use super::{check_stages, first_one, first_uncovered, fits, onehot_select, sub_lanes};
use crate::circuits::{k, wire};
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

/// Bit `j`: whether value `j` of `block` (`n` values of `w` bits) fits a
/// `d`-bit delta field to the base `b`, without a `w`-bit subtraction,
/// given `borrows` (bit `j`: the borrow of value `j`'s low bits minus the
/// base's, `vl - bl`, from the caller's prefix subtractor). With `v =
/// vh:vl` and `b = bh:bl` split at bit `d`, the unsigned delta fits
/// exactly when `vh - bh - borrow == 0` (mod `2^(w-d)`): `vh == bh`
/// without a borrow, `vh == bh + 1` with one. A signed delta fits exactly
/// when `delta + 2^(d-1)` fits unsigned, i.e. the unsigned check against
/// `b' = b - 2^(d-1)`, whose low bits are `bl` with bit `d-1` inverted
/// (the borrow is that of `vl - b'l`) and whose high bits are `bh` (bit
/// `d-1` of `b` set) or `bh - 1`. Each equality is one XOR per bit, a
/// local term and an OR tree: `vh == bh + 1` exactly when bit 0 differs
/// and, above it, bit `i` differs exactly when `bh[i-1] & !vh[i-1]` (the
/// carry of `bh + !vh + 1` into an all-ones sum); `vh == bh - 1` likewise
/// with the roles of `vh` and `bh` swapped. The XORs and local terms are
/// word operations on the whole block against the base in every value's
/// place (the local terms shifted up one bit), so each value adds only its
/// OR reductions and one bit of each term. Bit `j` of `<name>_eq`,
/// `<name>_up` and `<name>_down`: `vh == bh`, `bh + 1`, `bh - 1` for value
/// `j`.
#[allow(clippy::too_many_arguments)]
fn fit_to_base(
    m: &mut Module,
    name: &str,
    block: &Expr,
    b: &Expr,
    borrows: &Expr,
    n: u32,
    d: u32,
    mode: DeltaMode,
) -> Result<Expr, IrError> {
    let w = b.width();
    let bw = block.width();
    let bases = b.repeat(n)?;
    let x = block.xor(&bases)?;
    // the local terms `y[i-1] & !z[i-1]`, at bit `i` of every value
    let up1 = |y: &Expr, z: &Expr| -> Result<Expr, IrError> {
        let t = y.and(&z.not())?;
        Expr::concat([t.slice(bw - 2, 0)?, k(0, 1)?])
    };
    // bit j: the OR over value j's bits `lo..w` of `e`
    let any = |e: &Expr, lo: u32| -> Result<Expr, IrError> {
        let ors = (0..n)
            .rev()
            .map(|j| Ok(e.slice(w * j + w - 1, w * j + lo)?.reduce_or()))
            .collect::<Result<Vec<_>, IrError>>()?;
        Expr::concat(ors)
    };
    let bit_d = Expr::concat(
        (0..n)
            .rev()
            .map(|j| x.bit(w * j + d))
            .collect::<Result<Vec<_>, _>>()?,
    )?;
    let eq = wire(m, &format!("{name}_eq"), any(&x, d)?.not())?;
    // `vh == y + 1` for (y, z) = (bh, vh), `vh == bh - 1` for (vh, bh)
    let plus_one = |y: &Expr, z: &Expr| -> Result<Expr, IrError> {
        if w - d == 1 {
            return Ok(bit_d.clone());
        }
        bit_d.and(&any(&x.xor(&up1(y, z)?)?, d + 1)?.not())
    };
    let up = wire(m, &format!("{name}_up"), plus_one(&bases, block)?)?;
    let pick = |sel: &Expr, one: &Expr, zero: &Expr| -> Result<Expr, IrError> {
        sel.and(one)?.or(&sel.not().and(zero)?)
    };
    if mode == DeltaMode::Signed {
        let down = wire(m, &format!("{name}_down"), plus_one(block, &bases)?)?;
        Expr::mux(
            &b.bit(d - 1)?,
            &pick(borrows, &up, &eq)?,
            &pick(borrows, &eq, &down)?,
        )
    } else {
        pick(borrows, &up, &eq)
    }
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
        // the low bits of every value minus the base's (`b'`'s when
        // signed), one bit wider for the borrow: one prefix subtractor per
        // value, all of them lanes of one word
        let lane = d + 1;
        let offset = |x: Expr| -> Result<Expr, IrError> {
            if p.mode == DeltaMode::Signed {
                x.xor(&k(1u128 << (d - 1), d)?)
            } else {
                Ok(x)
            }
        };
        let lows = vals
            .iter()
            .rev()
            .map(|v| v.slice(d - 1, 0)?.zext(lane))
            .collect::<Result<Vec<_>, _>>()?;
        let diffs = sub_lanes(
            &mut u.m,
            &format!("{cu}_sub"),
            &Expr::concat(lows)?,
            &offset(base.slice(d - 1, 0)?)?
                .zext(lane)?
                .repeat(n as u32)?,
            lane,
        )?;
        let diffs = wire(&mut u.m, &format!("{cu}_diff"), diffs)?;
        let borrows = Expr::concat(
            (0..n as u32)
                .rev()
                .map(|j| diffs.bit(lane * j + d))
                .collect::<Result<Vec<_>, _>>()?,
        )?;
        let borrows = wire(&mut u.m, &format!("{cu}_borrow"), borrows)?;
        let fit = fit_to_base(&mut u.m, &cu, &block, base, &borrows, n as u32, d, p.mode)?;
        let ok = zfit.or(&fit)?;
        let mut fields = Vec::with_capacity(n);
        for (j, v) in vals.iter().enumerate() {
            let low = diffs.slice(lane * j as u32 + d - 1, lane * j as u32)?;
            let z = zfit.bit(j as u32)?;
            fields.push(Expr::mux(&z, &v.slice(d - 1, 0)?, &offset(low)?)?);
        }
        let f = wire(&mut u.m, &format!("{cu}_fits"), ok.reduce_and())?;
        // the compressed bit string, MSB first: base, bitmask (value 0
        // first), deltas (value 0 first), zero padding to 8 * bytes bits
        let mut parts = vec![base.clone()];
        parts.extend(
            (0..n as u32)
                .map(|j| zfit.bit(j).map(|b| b.not()))
                .collect::<Result<Vec<_>, _>>()?,
        );
        // (one wire, so that the byte selects below land on a name)
        parts.push(wire(
            &mut u.m,
            &format!("{cu}_deltas"),
            Expr::concat(fields)?,
        )?);
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
