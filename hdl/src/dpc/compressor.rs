//! The DPC compressor for one mode (plain, DF-TRUC, DF-MAN): two pipeline
//! stages. Stage 1 filters the block (DF-TRUC: critical sectors packed to
//! the front; DF-MAN: original or zero-filled copy, whichever codes
//! shorter) and computes the encoding status (ES) and pattern bits of
//! every bit-plane group; stage 2 packs the groups (a tree of
//! variable-length merges), picks coded or raw and forms the packet.

use golden::dpc::{DpcParams, Mode};

use super::{len_width, module_name, Unit};
use crate::circuits::{bits_for, k, sum, wire, Pipeline};
use crate::circuits::{compact, lookup, pack, Field};
use crate::ir::{Expr, IrError, Module};
use crate::unit::UnitDescription;

/// Segments of a data bus (segment 0 least significant).
fn segments(data: &Expr, p: &DpcParams) -> Result<Vec<Expr>, IrError> {
    let sw = 8 * p.segment_bytes() as u32;
    (0..p.segments() as u32)
        .map(|j| data.slice(sw * (j + 1) - 1, sw * j))
        .collect()
}

/// (ES, all-ones) of the segments of `data`, with segment `j` taking part
/// only where `valid[j]` (None: all).
fn status(
    m: &mut Module,
    name: &str,
    data: &Expr,
    valid: Option<&[Expr]>,
    p: &DpcParams,
) -> Result<(Expr, Expr), IrError> {
    let sw = 8 * p.segment_bytes() as u32;
    let segs = segments(data, p)?;
    let mut and = Expr::ones(sw)?;
    let mut or = k(0, sw)?;
    for (j, s) in segs.iter().enumerate() {
        let a = match valid {
            Some(v) => s.or(&v[j].not().repeat(sw)?)?,
            None => s.clone(),
        };
        and = and.and(&a)?;
        or = or.or(s)?;
    }
    let ones = wire(m, &format!("{name}_ones"), and)?;
    let es = wire(m, &format!("{name}_es"), ones.or(&or.not())?)?;
    Ok((es, ones))
}

/// Coded payload length (ES + ED) and the effective length (coded, or raw
/// when that is not shorter) of a full block with status `es`.
fn full_lengths(es: &Expr, p: &DpcParams) -> Result<Expr, IrError> {
    let (w, n) = (p.groups() as u32, p.segments() as u64);
    let lw = bits_for(w as u64 + w as u64 * n);
    let lens: Vec<Expr> = (0..w)
        .map(|i| Expr::mux(&es.bit(i)?, &k(1, lw)?, &k(n as u128, lw)?))
        .collect::<Result<_, _>>()?;
    let coded = sum(&lens, lw)?.add(&k(w as u128, lw)?)?;
    let raw = k(8 * p.block_bytes() as u128, lw)?;
    Expr::mux(&coded.cmp_lt(&raw)?, &coded, &raw)
}

pub fn build(p: &DpcParams, mode: Mode) -> Result<Module, IrError> {
    Ok(build_described(p, mode)?.0)
}

/// Build the compressor of `mode` with its description.
pub fn build_described(p: &DpcParams, mode: Mode) -> Result<(Module, UnitDescription), IrError> {
    let unit = Unit::Compressor(mode);
    let mut m = Module::new(module_name(unit))?;
    let (b, w, n) = (
        p.block_bytes() as u32,
        p.groups() as u32,
        p.segments() as u32,
    );
    let ks = p.sectors() as u32;
    let sec_w = 8 * p.sector_bytes() as u32;
    let truc = mode == Mode::Truc;
    let kp = if truc { ks } else { 0 };
    let outw = kp + 1 + 8 * b;
    let lw = len_width(p, mode);

    m.clock("clk")?;
    m.reset("rst")?;
    let in_valid = m.input("in_valid", 1)?;
    let in_ready = m.output("in_ready", 1)?;
    let in_block = m.input("in_block", 8 * b)?;
    let in_mask = if mode == Mode::Plain {
        None
    } else {
        Some(m.input("in_mask", ks)?)
    };
    let out_valid = m.output("out_valid", 1)?;
    let out_ready = m.input("out_ready", 1)?;
    let out_bits = m.output("out_bits", outw)?;
    let out_len = m.output("out_len", lw)?;
    let out_manip = if mode == Mode::Man {
        Some(m.output("out_manipulated", 1)?)
    } else {
        None
    };

    let pl = Pipeline::new(
        &mut m,
        super::COMPRESSOR_LATENCY as usize,
        &in_valid.expr(),
        &out_ready.expr(),
    )?;
    m.assign(&in_ready, pl.enable[0].clone())?;
    m.assign(&out_valid, pl.valid[1].expr())?;

    pl.stage(&mut m, 1, "filter, ES and patterns")?;
    let blk = in_block.expr();
    let mask_bits: Vec<Expr> = match &in_mask {
        Some(mk) => (0..ks)
            .map(|i| mk.expr().bit(i))
            .collect::<Result<_, _>>()?,
        None => vec![],
    };
    let sectors: Vec<Expr> = (0..ks)
        .map(|i| blk.slice(sec_w * (i + 1) - 1, sec_w * i))
        .collect::<Result<_, _>>()?;
    let cw = bits_for(ks as u64);
    let (data, es, ones, extra) = match mode {
        Mode::Plain => {
            let (es, ones) = status(&mut m, "grp", &blk, None, p)?;
            (blk.clone(), es, ones, vec![])
        }
        Mode::Truc => {
            let compacted = compact(&mut m, &mask_bits, &sectors)?;
            let compacted = wire(&mut m, "compacted", compacted)?;
            let npc = wire(&mut m, "npc", sum(&mask_bits, cw)?)?;
            let g = p.sector_segments();
            let valid: Vec<Expr> = (0..n as usize)
                .map(|j| npc.cmp_gt(&k((j / g) as u128, cw)?))
                .collect::<Result<_, _>>()?;
            let (es, ones) = status(&mut m, "grp", &compacted, Some(&valid), p)?;
            (compacted, es, ones, vec![("npc", npc)])
        }
        Mode::Man => {
            let zeroed: Vec<Expr> = sectors
                .iter()
                .zip(&mask_bits)
                .map(|(s, c)| s.and(&c.repeat(sec_w)?))
                .collect::<Result<_, _>>()?;
            let manip = wire(&mut m, "manip", Expr::concat(zeroed.into_iter().rev())?)?;
            let (es_o, ones_o) = status(&mut m, "orig", &blk, None, p)?;
            let (es_m, ones_m) = status(&mut m, "man", &manip, None, p)?;
            let len_o = wire(&mut m, "orig_len", full_lengths(&es_o, p)?)?;
            let len_m = wire(&mut m, "man_len", full_lengths(&es_m, p)?)?;
            let pick = wire(&mut m, "pick_man", len_m.cmp_lt(&len_o)?)?;
            (
                Expr::mux(&pick, &manip, &blk)?,
                Expr::mux(&pick, &es_m, &es_o)?,
                Expr::mux(&pick, &ones_m, &ones_o)?,
                vec![("manipulated", pick)],
            )
        }
    };
    let s1_data = pl.reg(&mut m, 1, "data", data)?;
    let s1_es = pl.reg(&mut m, 1, "es", es)?;
    let s1_ones = pl.reg(&mut m, 1, "ones", ones)?;
    let mut s1_extra = Vec::new();
    for (name, e) in extra {
        s1_extra.push(pl.reg(&mut m, 1, name, e)?);
    }
    let s1_mask = match &in_mask {
        Some(mk) if truc => Some(pl.reg(&mut m, 1, "mask", mk.expr())?),
        _ => None,
    };

    pl.stage(&mut m, 2, "pack, choose coded or raw")?;
    let nw = bits_for(n as u64);
    let codedw = w + w * n;
    let clw = bits_for(codedw as u64);
    let (nlen, raw_len) = if truc {
        let g = p.sector_segments() as u64;
        let npc = &s1_extra[0];
        let ns: Vec<u64> = (0..=ks as u64).map(|c| c * g).collect();
        let raws: Vec<u64> = (0..=ks as u64)
            .map(|c| 8 * c * p.sector_bytes() as u64)
            .collect();
        (
            wire(&mut m, "seg_count", lookup(npc, &ns, nw)?)?,
            wire(&mut m, "raw_len", lookup(npc, &raws, clw)?)?,
        )
    } else {
        (k(n as u128, nw)?, k(8 * b as u128, clw)?)
    };
    let sw = 8 * p.segment_bytes() as u32;
    let mut fields = Vec::new();
    for i in 0..w {
        let group = Expr::concat(
            (0..n)
                .map(|j| s1_data.bit(sw * j + i))
                .collect::<Result<Vec<_>, _>>()?,
        )?;
        let es_i = s1_es.bit(i)?;
        let pat = if n > 1 {
            Expr::concat([s1_ones.bit(i)?, k(0, n - 1)?])?
        } else {
            s1_ones.bit(i)?
        };
        fields.push(Field {
            data: Expr::mux(&es_i, &pat, &group)?,
            len: Expr::mux(&es_i, &k(1, nw)?, &nlen)?,
            max: n as u64,
        });
    }
    let ed = pack(&mut m, "pk", fields)?;
    // ES + ED can be W bits longer than the raw block; a packet that long
    // is never coded (raw wins), so the last W bits of ED are never sent.
    if let Some(sig) = ed.data.as_signal().cloned() {
        m.mark_unused(&sig, w - 1, 0)?;
    }
    let es_seq = Expr::concat(
        (0..w)
            .map(|i| s1_es.bit(i))
            .collect::<Result<Vec<_>, _>>()?,
    )?;
    // the top 8B bits of ES|ED (ES alone for one segment: never coded)
    let coded = if n > 1 {
        Expr::concat([es_seq, ed.data.slice(w * n - 1, w)?])?
    } else {
        es_seq
    };
    let coded_len = wire(
        &mut m,
        "coded_len",
        ed.len.zext(clw)?.add(&k(w as u128, clw)?)?,
    )?;
    let compressed = wire(&mut m, "compressed", coded_len.cmp_lt(&raw_len)?)?;
    let raw = Expr::concat(
        (0..b)
            .map(|t| s1_data.slice(8 * t + 7, 8 * t))
            .collect::<Result<Vec<_>, _>>()?,
    )?;
    let body = Expr::mux(
        &compressed,
        &Expr::concat([Expr::bool(true), coded])?,
        &Expr::concat([Expr::bool(false), raw])?,
    )?;
    let packet = match &s1_mask {
        Some(mk) => {
            let mut parts: Vec<Expr> = (0..ks).map(|i| mk.bit(i)).collect::<Result<_, _>>()?;
            parts.push(body);
            Expr::concat(parts)?
        }
        None => body,
    };
    let len = Expr::mux(&compressed, &coded_len, &raw_len)?
        .zext(lw.max(clw))?
        .add(&k(kp as u128 + 1, lw.max(clw))?)?
        .trunc(lw)?;
    let s2_bits = pl.reg(&mut m, 2, "bits", packet)?;
    let s2_len = pl.reg(&mut m, 2, "len", len)?;
    m.assign(&out_bits, s2_bits)?;
    m.assign(&out_len, s2_len)?;
    if let Some(o) = out_manip {
        let r = pl.reg(&mut m, 2, "manipulated", s1_extra[0].clone())?;
        m.assign(&o, r)?;
    }
    let unit = pl.describe(&m, Vec::new());
    Ok((m, unit))
}
