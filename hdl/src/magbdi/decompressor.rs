//! `bdi_decompressor`: the MAG-aware BDI decompressor (docs/hw/mag-bdi.md).
//!
//! The base and the bitmask sit at the same place for every size; only the
//! delta fields move. Per delta width the fields are cut from `in_data` and
//! zero- or sign-extended; a one-hot select by `in_enc` (`sel<i>`, or
//! `sel_d<width>` for sizes sharing a width) picks them (`ext<j>`, as wide
//! as the widest field), and one prefix adder per value, one bit wider
//! than the widest field (`add_*`, all values lanes of one word, `sums`),
//! adds the base's low bits where the bitmask bit is set: the paper's
//! vector add. Above the widest field, the sum is
//! the base's high part, that plus one (`base_hi_plus1`) or, for a
//! negative signed field, minus one (`base_hi_minus1`), chosen by the
//! adder's carry and the field's sign. `in_enc` past the raw code, or
//! non-zero padding after the deltas of the chosen size, is an error
//! (`out_error`, `out_block` zero). Registers: `s1_block`, `s1_error`.

use golden::magbdi::{DeltaMode, Table};

use super::{check_stages, onehot_select, sub_lanes};
use crate::circuits::{eq_const, k, sub_prefix, wire};
use crate::ir::{Expr, IrError, Module};
use crate::mpc::probes::Probes;
use crate::stream::StreamUnit;
use crate::unit::{Mirror, UnitDescription, When};

pub const MODULE: &str = "bdi_decompressor";

/// Build the decompressor for a size table.
pub fn build(table: &Table) -> Result<Module, IrError> {
    Ok(build_described(table)?.0)
}

/// Build `bdi_decompressor` at the default depth with its description.
pub fn build_described(table: &Table) -> Result<(Module, UnitDescription), IrError> {
    build_staged(table, super::LATENCY)
}

/// Build `bdi_decompressor` with `stages` pipeline stages and its
/// description.
pub fn build_staged(table: &Table, stages: usize) -> Result<(Module, UnitDescription), IrError> {
    check_stages(MODULE, stages, super::MAX_DECOMPRESSOR_STAGES)?;
    let p = &table.params;
    let n = p.values() as u32;
    let w = 8 * p.base_bytes as u32;
    let bus = 8 * p.block_bytes as u32;
    let e = table.encoding_bits();
    let mut u = StreamUnit::begin(MODULE)?;
    let in_enc = u.input("in_enc", e)?;
    let in_data = u.input("in_data", bus)?;
    let mut u = u.outputs()?;
    let out_block = u.output("out_block", bus)?;
    let out_error = u.output("out_error", 1)?;
    u.stage(
        1,
        "delta fields per size, select by the encoding, vector add, output register",
    )?;
    let m = &mut u.m;

    // the bit string of the stored bytes, MSB first: stream bit t is bit
    // 7 - t%8 of byte t/8
    // (only the bytes of the largest size; the raw path takes the bus)
    let used = table.sizes.iter().map(|s| s.bytes).max().unwrap_or(1) as u32;
    let bytes: Vec<Expr> = (0..used)
        .map(|j| in_data.slice(8 * j + 7, 8 * j))
        .collect::<Result<_, _>>()?;
    let stream = wire(m, "stream", Expr::concat(bytes)?)?;
    let sw = 8 * used;
    // stream bits [t, t+len) as an expression
    let bits = |t: u32, len: u32| stream.slice(sw - 1 - t, sw - t - len);
    let base = wire(m, "base", bits(0, w)?)?;
    let mask = wire(m, "mask", bits(w, n)?)?;

    let mut sel = Vec::new();
    let mut pad_ok = Vec::new();
    // sizes sharing a delta width share the field layout: one field
    // select per width (`widths`: the width and its sizes)
    let mut widths: Vec<(u32, Vec<usize>)> = Vec::new();
    // the widest delta field: the fields, extended to it, are added to the
    // base's low bits; above it the sum is the base's high part, plus the
    // carry (minus the sign of a signed field)
    let dmax = table.sizes.iter().map(|s| s.delta_bits).max().unwrap_or(1);
    let mut exts: Vec<Vec<Expr>> = vec![Vec::new(); n as usize];
    for (i, s) in table.sizes.iter().enumerate() {
        let d = s.delta_bits;
        sel.push(wire(m, &format!("sel{i}"), eq_const(&in_enc, i as u128)?)?);
        let pad = 8 * s.bytes as u32 - s.used_bits as u32;
        pad_ok.push(if pad == 0 {
            Expr::bool(true)
        } else {
            bits(s.used_bits as u32, pad)?.reduce_or().not()
        });
        if let Some((_, members)) = widths.iter_mut().find(|(w, _)| *w == d) {
            members.push(i);
            continue;
        }
        widths.push((d, vec![i]));
        for j in 0..n {
            let f = bits(w + n + j * d, d)?;
            let x = if d == dmax {
                f
            } else {
                match p.mode {
                    DeltaMode::Unsigned => f.zext(dmax)?,
                    DeltaMode::Signed => {
                        Expr::concat([f.bit(d - 1)?.repeat(dmax - d)?, f.clone()])?
                    }
                }
            };
            exts[j as usize].push(x);
        }
    }
    let width_sel = widths
        .iter()
        .map(|(d, members)| match members.as_slice() {
            [only] => Ok(sel[*only].clone()),
            _ => {
                let any = members
                    .iter()
                    .skip(1)
                    .try_fold(sel[members[0]].clone(), |a, &i| a.or(&sel[i]))?;
                wire(m, &format!("sel_d{d}"), any)
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    let raw = wire(m, "sel_raw", eq_const(&in_enc, table.raw_code() as u128)?)?;
    let known = sel.iter().try_fold(raw.clone(), |a, s| a.or(s))?;
    let pad_good = onehot_select(&sel, &pad_ok)?;
    let error = wire(
        m,
        "error",
        known.not().or(&raw.not().and(&pad_good.not())?)?,
    )?;
    // the base's high part, and plus and minus one (shared by every value)
    let h = w - dmax;
    let base_lo = base.slice(dmax - 1, 0)?;
    let base_hi = base.slice(w - 1, dmax)?;
    let one = k(1, h)?;
    let inc = sub_prefix(m, "base_inc", &base_hi.not(), &one)?.not();
    let hi_plus = wire(m, "base_hi_plus1", inc)?;
    let hi_minus = match p.mode {
        DeltaMode::Signed => {
            let dec = sub_prefix(m, "base_dec", &base_hi, &one)?;
            Some(wire(m, "base_hi_minus1", dec)?)
        }
        DeltaMode::Unsigned => None,
    };
    let exts = (0..n)
        .map(|j| {
            wire(
                m,
                &format!("ext{j}"),
                onehot_select(&width_sel, &exts[j as usize])?,
            )
        })
        .collect::<Result<Vec<_>, _>>()?;
    // base_lo + ext = ~(~base_lo - ext), one bit wider for the carry: one
    // prefix subtractor per value, all of them lanes of one word
    let lane = dmax + 1;
    let sums = sub_lanes(
        m,
        "add",
        &base_lo.zext(lane)?.not().repeat(n)?,
        &Expr::concat(
            exts.iter()
                .rev()
                .map(|x| x.zext(lane))
                .collect::<Result<Vec<_>, _>>()?,
        )?,
        lane,
    )?;
    let sums = wire(m, "sums", sums.not())?;
    let mut vals = Vec::with_capacity(n as usize);
    for (j, ext) in (0..n).zip(exts) {
        let low = sums.slice(lane * j + dmax, lane * j)?;
        let carry = low.bit(dmax)?;
        let (high, ext_hi) = match &hi_minus {
            None => (Expr::mux(&carry, &hi_plus, &base_hi)?, k(0, h)?),
            Some(minus) => {
                let sign = ext.bit(dmax - 1)?;
                (
                    Expr::mux(
                        &sign,
                        &Expr::mux(&carry, &base_hi, minus)?,
                        &Expr::mux(&carry, &hi_plus, &base_hi)?,
                    )?,
                    sign.repeat(h)?,
                )
            }
        };
        let plus = Expr::concat([high, low.slice(dmax - 1, 0)?])?;
        let ext = Expr::concat([ext_hi, ext])?;
        vals.push(Expr::mux(&mask.bit(n - 1 - j)?, &plus, &ext)?);
    }
    let decoded = wire(m, "decoded", Expr::concat(vals.into_iter().rev())?)?;
    let block = Expr::mux(&raw, &in_data, &decoded)?;
    let block = block.and(&error.not().repeat(bus)?)?;

    let mut u = u.pipeline(stages)?;
    let s1_block = u.reg(1, "block", block)?;
    let s1_error = u.reg(1, "error", error)?;
    let mut probes = Probes::default();
    for (name, mirror, when) in [
        ("base", Mirror::Base, When::Always),
        ("mask", Mirror::Mask, When::Always),
        ("error", Mirror::Error, When::Always),
        ("decoded", Mirror::Block, When::NotRaw),
    ] {
        probes.record(&u.m, 1, name, mirror, when, None)?;
    }
    probes.record_reg(&u.m, 1, "block", Mirror::Block, When::Always, None)?;
    probes.record_reg(&u.m, 1, "error", Mirror::Error, When::Always, None)?;
    u.drive(&out_block, s1_block)?;
    u.drive(&out_error, s1_error)?;
    u.finish(probes.list)
}
