//! The DPC decompressor, plain (also decodes DF-MAN packets) or DF-TRUC:
//! two pipeline stages. Stage 1 reads the mask (DF-TRUC), C and the
//! encoding status, splits the encoded data into groups (a tree of
//! variable shifts, the inverse of the compressor's packer), rebuilds the
//! segments (or takes the raw bytes) and checks the length; stage 2 puts
//! the critical sectors back in place (DF-TRUC) and zeroes the block on an
//! error.

use golden::dpc::{DpcParams, Mode};

use super::{len_width, module_name, Unit};
use crate::circuits::{bits_for, k, sum, wire, Pipeline};
use crate::circuits::{expand, lookup, unpack};
use crate::ir::{Expr, IrError, Module};
use crate::unit::UnitDescription;

pub fn build(p: &DpcParams, truc: bool) -> Result<Module, IrError> {
    Ok(build_described(p, truc)?.0)
}

/// Build the decompressor with its description.
pub fn build_described(p: &DpcParams, truc: bool) -> Result<(Module, UnitDescription), IrError> {
    let mode = if truc { Mode::Truc } else { Mode::Plain };
    let mut m = Module::new(module_name(Unit::Decompressor(mode)))?;
    let (b, w, n) = (
        p.block_bytes() as u32,
        p.groups() as u32,
        p.segments() as u32,
    );
    let ks = p.sectors() as u32;
    let sec_w = 8 * p.sector_bytes() as u32;
    let kp = if truc { ks } else { 0 };
    let inw = kp + 1 + 8 * b;
    let lw = len_width(p, mode);

    m.clock("clk")?;
    m.reset("rst")?;
    let in_valid = m.input("in_valid", 1)?;
    let in_ready = m.output("in_ready", 1)?;
    let in_bits = m.input("in_bits", inw)?;
    let in_len = m.input("in_len", lw)?;
    let out_valid = m.output("out_valid", 1)?;
    let out_ready = m.input("out_ready", 1)?;
    let out_block = m.output("out_block", 8 * b)?;
    let out_error = m.output("out_error", 1)?;
    let out_mask = if truc {
        Some(m.output("out_mask", ks)?)
    } else {
        None
    };

    let pl = Pipeline::new(
        &mut m,
        super::DECOMPRESSOR_LATENCY as usize,
        &in_valid.expr(),
        &out_ready.expr(),
    )?;
    m.assign(&in_ready, pl.enable[0].clone())?;
    m.assign(&out_valid, pl.valid[1].expr())?;

    pl.stage(&mut m, 1, "parse, unpack, check the length")?;
    let bits = in_bits.expr();
    let top = inw - 1;
    let mask_bits: Vec<Expr> = (0..kp)
        .map(|i| bits.bit(top - i))
        .collect::<Result<_, _>>()?;
    let c = wire(&mut m, "flag", bits.bit(top - kp)?)?;
    let es: Vec<Expr> = (0..w)
        .map(|i| bits.bit(top - kp - 1 - i))
        .collect::<Result<_, _>>()?;
    let es = (0..w)
        .map(|i| wire(&mut m, &format!("es{i}"), es[i as usize].clone()))
        .collect::<Result<Vec<_>, _>>()?;
    if n == 1 {
        // One segment: every group's ED is one bit, whatever its ES bit says.
        for e in &es {
            if let Some(sig) = e.as_signal().cloned() {
                m.mark_unused(&sig, 0, 0)?;
            }
        }
    }
    let nw = bits_for(n as u64);
    let codedw = w + w * n;
    let xw = bits_for((kp + 1 + codedw) as u64).max(lw);
    let (nlen, raw_len) = if truc {
        let cw = bits_for(ks as u64);
        let npc = wire(&mut m, "npc", sum(&mask_bits, cw)?)?;
        let g = p.sector_segments() as u64;
        let ns: Vec<u64> = (0..=ks as u64).map(|c| c * g).collect();
        let raws: Vec<u64> = (0..=ks as u64)
            .map(|c| 8 * c * p.sector_bytes() as u64)
            .collect();
        (
            wire(&mut m, "seg_count", lookup(&npc, &ns, nw)?)?,
            wire(&mut m, "raw_len", lookup(&npc, &raws, xw)?)?,
        )
    } else {
        (k(n as u128, nw)?, k(8 * b as u128, xw)?)
    };
    let lens: Vec<Expr> = es
        .iter()
        .map(|e| Expr::mux(e, &k(1, nw)?, &nlen))
        .collect::<Result<_, _>>()?;
    // The encoded data: everything after ES, padded to W groups of N bits.
    // (One segment: ES fills the bus after C, no ED fits; such a packet
    // is always longer than the bus and an error.)
    let ed_w = 8 * b - w;
    let fields = if ed_w > 0 {
        let ed = Expr::concat([bits.slice(ed_w - 1, 0)?, k(0, w * n - ed_w)?])?;
        unpack(&mut m, "up", &ed, &lens, n)?
    } else {
        vec![k(0, n)?; w as usize]
    };
    let sw = 8 * p.segment_bytes() as u32;
    let mut segs = Vec::new();
    for j in 0..n {
        let seg: Vec<Expr> = (0..sw)
            .rev()
            .map(|i| {
                let f = &fields[i as usize];
                Expr::mux(&es[i as usize], &f.bit(n - 1)?, &f.bit(n - 1 - j)?)
            })
            .collect::<Result<_, _>>()?;
        segs.push(Expr::concat(seg)?);
    }
    let coded_block = wire(&mut m, "coded_block", Expr::concat(segs.into_iter().rev())?)?;
    let raw_block = Expr::concat(
        (0..b)
            .rev()
            .map(|t| bits.slice(8 * b - 1 - 8 * t, 8 * b - 8 - 8 * t))
            .collect::<Result<Vec<_>, _>>()?,
    )?;
    let block = Expr::mux(&c, &coded_block, &raw_block)?;
    let ed_len = sum(&lens, xw)?;
    let coded_len = ed_len.add(&k(w as u128, xw)?)?;
    let expected = wire(
        &mut m,
        "expected_len",
        Expr::mux(&c, &coded_len, &raw_len)?.add(&k(kp as u128 + 1, xw)?)?,
    )?;
    let error = expected.cmp_ne(&in_len.expr().zext(xw)?)?;
    let s1_block = pl.reg(&mut m, 1, "block", block)?;
    let s1_error = pl.reg(&mut m, 1, "error", error)?;
    let s1_mask = if truc {
        Some(pl.reg(
            &mut m,
            1,
            "mask",
            Expr::concat(mask_bits.iter().rev().cloned())?,
        )?)
    } else {
        None
    };

    pl.stage(&mut m, 2, "sectors back in place, zero on error")?;
    let ok = s1_error.not();
    let (block, mask) = match &s1_mask {
        Some(mk) => {
            let mb: Vec<Expr> = (0..ks).map(|i| mk.bit(i)).collect::<Result<_, _>>()?;
            let slots: Vec<Expr> = (0..ks)
                .map(|i| s1_block.slice(sec_w * (i + 1) - 1, sec_w * i))
                .collect::<Result<_, _>>()?;
            (expand(&mb, &slots)?, Some(mk.and(&ok.repeat(ks)?)?))
        }
        None => (s1_block.clone(), None),
    };
    let s2_block = pl.reg(&mut m, 2, "block", block.and(&ok.repeat(8 * b)?)?)?;
    let s2_error = pl.reg(&mut m, 2, "error", s1_error)?;
    m.assign(&out_block, s2_block)?;
    m.assign(&out_error, s2_error)?;
    if let (Some(o), Some(mk)) = (out_mask, mask) {
        let r = pl.reg(&mut m, 2, "mask", mk)?;
        m.assign(&o, r)?;
    }
    let unit = pl.describe(&m, Vec::new());
    Ok((m, unit))
}
