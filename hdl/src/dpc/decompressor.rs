//! The DPC decompressor, plain (also decodes DF-MAN packets) or DF-TRUC:
//! two pipeline stages. Stage 1 reads the mask (DF-TRUC), C and the
//! encoding status, splits the encoded data into groups (a tree of
//! variable shifts, the inverse of the compressor's packer), rebuilds the
//! segments (or takes the raw bytes) and checks the length; stage 2 puts
//! the critical sectors back in place (DF-TRUC) and zeroes the block on an
//! error.

use golden::dpc::{DpcParams, Mode};

use super::packing;
use super::{len_width, DpcUnit};
use crate::circuits::{bits_for, k, popcount, sum, wire};
use crate::circuits::{expand, lookup};
use crate::ir::{Expr, IrError, Module};
use crate::mpc::probes::Probes;
use crate::stream::StreamUnit;
use crate::unit::{Mirror, StageProbe, UnitDescription, When};

pub fn build(p: &DpcParams, truc: bool) -> Result<Module, IrError> {
    Ok(build_described(p, truc)?.0)
}

/// Build the decompressor with its description.
pub fn build_described(p: &DpcParams, truc: bool) -> Result<(Module, UnitDescription), IrError> {
    let mode = if truc { Mode::Truc } else { Mode::Plain };
    let b = p.block_bytes() as u32;
    let ks = p.sectors() as u32;
    let kp = if truc { ks } else { 0 };
    let mut u = StreamUnit::begin(DpcUnit::Decompressor(mode).module_name())?;
    let in_bits = u.input("in_bits", kp + 1 + 8 * b)?;
    let in_len = u.input("in_len", len_width(p, mode))?;
    let mut u = u.outputs()?;
    let out_block = u.output("out_block", 8 * b)?;
    let out_error = u.output("out_error", 1)?;
    let out_mask = if truc {
        Some(u.output("out_mask", ks)?)
    } else {
        None
    };
    let mut u = u.pipeline(super::DECOMPRESSOR_LATENCY as usize)?;

    u.stage(1, "parse, unpack, check the length")?;
    let s1 = parse_stage(&mut u, p, mode, &in_bits, &in_len)?;

    u.stage(2, "sectors back in place, zero on error")?;
    let ok = s1.error.not();
    let (block, mask) = match &s1.mask {
        Some(mk) => {
            let sec_w = 8 * p.sector_bytes() as u32;
            let mb: Vec<Expr> = (0..ks).map(|i| mk.bit(i)).collect::<Result<_, _>>()?;
            let slots: Vec<Expr> = (0..ks)
                .map(|i| s1.block.slice(sec_w * (i + 1) - 1, sec_w * i))
                .collect::<Result<_, _>>()?;
            (expand(&mb, &slots)?, Some(mk.and(&ok.repeat(ks)?)?))
        }
        None => (s1.block.clone(), None),
    };
    let s2_block = u.reg(2, "block", block.and(&ok.repeat(8 * b)?)?)?;
    let s2_error = u.reg(2, "error", s1.error)?;
    u.drive(&out_block, s2_block)?;
    u.drive(&out_error, s2_error)?;
    if let (Some(o), Some(mk)) = (out_mask, mask) {
        let r = u.reg(2, "mask", mk)?;
        u.drive(&o, r)?;
    }
    let probes = stage_probes(&u.m, truc)?;
    u.finish(probes)
}

/// The stage probes of the decompressor (`truc`: the DF-TRUC one): each
/// stage's logic wires, then its registers (docs/hw/cosim.md).
fn stage_probes(m: &Module, truc: bool) -> Result<Vec<StageProbe>, IrError> {
    let mut list = vec![(1, "flag", Mirror::Flag, When::Always)];
    if truc {
        list.extend([
            (1, "npc", Mirror::Npc, When::Always),
            (1, "seg_count", Mirror::Segments, When::Always),
            (1, "raw_len", Mirror::RawLen, When::Always),
        ]);
    }
    list.extend([
        (1, "expected_len", Mirror::ExpectedLen, When::Always),
        (1, "s1_block", Mirror::Data, When::Accepted),
        (1, "s1_error", Mirror::Error, When::Always),
    ]);
    if truc {
        list.push((1, "s1_mask", Mirror::Mask, When::Accepted));
    }
    list.extend([
        (2, "s2_block", Mirror::Block, When::Always),
        (2, "s2_error", Mirror::Error, When::Always),
    ]);
    if truc {
        list.push((2, "s2_mask", Mirror::Mask, When::Always));
    }
    let mut probes = Probes::default();
    for (stage, name, mirror, when) in list {
        probes.record(m, stage, name, mirror, when, None)?;
    }
    Ok(probes.list)
}

/// The stage-1 registers: the decoded (or raw) block, the length error,
/// and the mask (DF-TRUC).
struct Parsed {
    block: Expr,
    error: Expr,
    mask: Option<Expr>,
}

/// Stage 1: the mask (DF-TRUC), C and ES of the packet `bits`, the
/// encoded data unpacked into groups and the segments rebuilt from them
/// (or the raw bytes), and the length check against `len`, registered.
fn parse_stage(
    u: &mut StreamUnit,
    p: &DpcParams,
    mode: Mode,
    bits: &Expr,
    len: &Expr,
) -> Result<Parsed, IrError> {
    let (b, w, n) = (
        p.block_bytes() as u32,
        p.groups() as u32,
        p.segments() as u32,
    );
    let ks = p.sectors() as u32;
    let truc = mode == Mode::Truc;
    let kp = if truc { ks } else { 0 };
    let inw = kp + 1 + 8 * b;
    let lw = len_width(p, mode);
    let m = &mut u.m;
    let top = inw - 1;
    let mask_bits: Vec<Expr> = (0..kp)
        .map(|i| bits.bit(top - i))
        .collect::<Result<_, _>>()?;
    let c = wire(m, "flag", bits.bit(top - kp)?)?;
    let es: Vec<Expr> = (0..w)
        .map(|i| bits.bit(top - kp - 1 - i))
        .collect::<Result<_, _>>()?;
    let es = (0..w)
        .map(|i| wire(m, &format!("es{i}"), es[i as usize].clone()))
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
    let (nlen, raw_len, nm1) = if truc {
        let cw = bits_for(ks as u64);
        let npc = wire(m, "npc", sum(&mask_bits, cw)?)?;
        let g = p.sector_segments() as u64;
        let ns: Vec<u64> = (0..=ks as u64).map(|c| c * g).collect();
        let raws: Vec<u64> = (0..=ks as u64)
            .map(|c| 8 * c * p.sector_bytes() as u64)
            .collect();
        (
            wire(m, "seg_count", lookup(&npc, &ns, nw)?)?,
            wire(m, "raw_len", lookup(&npc, &raws, xw)?)?,
            Some(packing::seg_count_m1(m, &npc, p, nw)?),
        )
    } else {
        (k(n as u128, nw)?, k(8 * b as u128, xw)?, None)
    };
    let lens: Vec<Expr> = es
        .iter()
        .map(|e| Expr::mux(e, &k(1, nw)?, &nlen))
        .collect::<Result<_, _>>()?;
    let coded_block = coded_block(m, p, bits, &es, nm1.as_ref())?;
    let raw_block = Expr::concat(
        (0..b)
            .rev()
            .map(|t| bits.slice(8 * b - 1 - 8 * t, 8 * b - 8 - 8 * t))
            .collect::<Result<Vec<_>, _>>()?,
    )?;
    let block = Expr::mux(&c, &coded_block, &raw_block)?;
    let coded_len = if truc {
        sum(&lens, xw)?.add(&k(w as u128, xw)?)?
    } else {
        // every field 1 or n bits: the length from the ES count
        let count = wire(m, "es_count", popcount(&es)?)?;
        packing::coded_len(&count, w as u64, n as u64, xw)?
    };
    let expected = wire(
        m,
        "expected_len",
        Expr::mux(&c, &coded_len, &raw_len)?.add(&k(kp as u128 + 1, xw)?)?,
    )?;
    let error = expected.cmp_ne(&len.zext(xw)?)?;
    let block = u.reg(1, "block", block)?;
    let error = u.reg(1, "error", error)?;
    let mask = if truc {
        Some(u.reg(1, "mask", Expr::concat(mask_bits.iter().rev().cloned())?)?)
    } else {
        None
    };
    Ok(Parsed { block, error, mask })
}

/// The segments rebuilt from the encoded data of the packet `bits` (the
/// groups of status `es`, each field one bit or `n` bits, or with `nm1`
/// one bit or `nm1 + 1` bits, DF-TRUC): each group's field unpacked,
/// segment `j` taking bit `j` of each field, or the pattern bit where ES
/// is set.
fn coded_block(
    m: &mut Module,
    p: &DpcParams,
    bits: &Expr,
    es: &[Expr],
    nm1: Option<&Expr>,
) -> Result<Expr, IrError> {
    let (b, w, n) = (
        p.block_bytes() as u32,
        p.groups() as u32,
        p.segments() as u32,
    );
    // The encoded data: everything after ES, padded to W groups of N bits.
    // (One segment: ES fills the bus after C, no ED fits; such a packet
    // is always longer than the bus and an error.)
    let ed_w = 8 * b - w;
    let fields = if ed_w > 0 {
        let ed = Expr::concat([bits.slice(ed_w - 1, 0)?, k(0, w * n - ed_w)?])?;
        match nm1 {
            None => packing::unpack_fixed(m, "up", &ed, es, n)?,
            Some(nm1) => packing::unpack_var(m, "up", &ed, es, nm1, n)?,
        }
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
    wire(m, "coded_block", Expr::concat(segs.into_iter().rev())?)
}
