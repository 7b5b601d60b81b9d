//! `bdi_compressor`: the MAG-aware BDI compressor (docs/hw/mag-bdi.md).
//!
//! Per delta width `d_i` of the size table, one compressor unit `cu<i>`
//! (the paper's Fig. 9; `i` the smallest size of that width), all in
//! parallel on the input block:
//! `cu<i>_zfit` (bit j: value j fits the zero base), `cu<i>_base` (the first
//! value that does not), `cu<i>_delta<j>` (value minus base),
//! `cu<i>_fits`, and `cu<i>_data` (the compressed bytes of this size).
//! The priority select takes the smallest fitting size, else raw; the
//! encoding and the bytes are registered (`s1_enc`, `s1_data`).

use golden::magbdi::Table;

use super::fits;
use crate::circuits::{first_set, k, onehot_mux, wire};
use crate::ir::{Expr, IrError, Module};
use crate::mpc::probes::Probes;
use crate::stream::StreamUnit;
use crate::unit::{Mirror, SizeField, UnitDescription, When};

pub const MODULE: &str = "bdi_compressor";

/// Build the compressor for a size table.
pub fn build(table: &Table) -> Result<Module, IrError> {
    Ok(build_described(table)?.0)
}

/// Build `bdi_compressor` with its description.
pub fn build_described(table: &Table) -> Result<(Module, UnitDescription), IrError> {
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
    u.stage(
        1,
        "one compressor unit per delta width, the smallest size that fits, output register",
    )?;
    let m = &mut u.m;

    let vals: Vec<Expr> = (0..n as u32)
        .map(|j| in_block.slice(w * j + w - 1, w * j))
        .collect::<Result<_, _>>()?;
    let mut probes = Probes::default();
    let mut fit_flags = Vec::new();
    let mut datas = Vec::new();
    let mut codes = Vec::new();
    for (i, s) in table.sizes.iter().enumerate() {
        let d = s.delta_bits;
        // A larger size with the delta width of a smaller one fits exactly
        // when the smaller one does, so it is never chosen: no unit.
        if table.sizes[..i].iter().any(|t| t.delta_bits == d) {
            continue;
        }
        codes.push(i as u128);
        let cu = format!("cu{i}");
        // step 1: zero base
        let zfit: Vec<Expr> = vals
            .iter()
            .map(|v| fits(v, d, p.mode))
            .collect::<Result<_, _>>()?;
        let zfit = wire(
            m,
            &format!("{cu}_zfit"),
            Expr::concat(zfit.iter().rev().cloned())?,
        )?;
        // first value the zero base cannot cover (one-hot), and the base
        let (first, _) = first_set(m, &format!("{cu}_first"), &zfit.not())?;
        let base = wire(m, &format!("{cu}_base"), onehot_mux(&first, &vals)?)?;
        // step 2: deltas to the non-zero base
        let mut ok = Vec::with_capacity(n);
        let mut fields = Vec::with_capacity(n);
        for (j, v) in vals.iter().enumerate() {
            let delta = wire(m, &format!("{cu}_delta{j}"), v.sub(&base)?)?;
            let z = zfit.bit(j as u32)?;
            ok.push(z.or(&fits(&delta, d, p.mode)?)?);
            fields.push(Expr::mux(&z, &v.slice(d - 1, 0)?, &delta.slice(d - 1, 0)?)?);
        }
        let ok = Expr::concat(ok.into_iter().rev())?;
        let f = wire(m, &format!("{cu}_fits"), ok.reduce_and())?;
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
        let data = wire(m, &format!("{cu}_data"), data)?;
        for (signal, field) in [
            ("zfit", SizeField::ZeroFit),
            ("base", SizeField::Base),
            ("fits", SizeField::Fits),
            ("data", SizeField::Data),
        ] {
            let mirror = Mirror::Size { index: i, field };
            probes.record(m, 1, &format!("{cu}_{signal}"), mirror, When::Always, None)?;
        }
        fit_flags.push(f);
        datas.push(data);
    }
    // priority select: smallest fitting size, else raw
    let fit_vec = Expr::concat(fit_flags.iter().rev().cloned())?;
    let (mut sel, none) = first_set(m, "first_fit", &fit_vec)?;
    sel.push(none);
    codes.push(table.raw_code() as u128);
    let codes: Vec<Expr> = codes
        .into_iter()
        .map(|c| k(c, e))
        .collect::<Result<_, _>>()?;
    datas.push(in_block.clone());
    let enc = wire(m, "enc", onehot_mux(&sel, &codes)?)?;
    let data = wire(m, "data", onehot_mux(&sel, &datas)?)?;

    let mut u = u.pipeline(super::LATENCY)?;
    let s1_enc = u.reg(1, "enc", enc)?;
    let s1_data = u.reg(1, "data", data)?;
    for (name, mirror) in [("enc", Mirror::Encoding), ("data", Mirror::Data)] {
        probes.record(&u.m, 1, name, mirror, When::Always, None)?;
        probes.record_reg(&u.m, 1, name, mirror, When::Always, None)?;
    }
    u.drive(&out_enc, s1_enc)?;
    u.drive(&out_data, s1_data)?;
    u.finish(probes.list)
}
