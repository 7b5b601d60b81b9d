//! The DPC decompressor, plain (also decodes DF-MAN packets) or DF-TRUC:
//! two pipeline stages. Stage 1 reads the mask (DF-TRUC), C and the
//! encoding status, checks the length and runs the first levels of the
//! unpacker (a tree of variable shifts, the inverse of the compressor's
//! packer), registering the partly split stream or the raw bytes; stage 2
//! splits the rest into groups, rebuilds the segments (or takes the raw
//! bytes), puts the critical sectors back in place (DF-TRUC) and zeroes
//! the block on an error.

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

/// The unpacker levels done in stage 1 (behind the parse and the counts
/// of ES bits), the others in stage 2.
pub const STAGE1_LEVELS: usize = 2;

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

    u.stage(1, "parse, check the length, first unpacker levels")?;
    let s1 = parse_stage(&mut u, p, mode, &in_bits, &in_len)?;

    u.stage(2, "unpack, segments, sectors back in place, zero on error")?;
    let block = decode_stage(&mut u.m, p, &s1)?;
    let ok = s1.error.not();
    let (block, mask) = match &s1.mask {
        Some(mk) => {
            let sec_w = 8 * p.sector_bytes() as u32;
            let mb: Vec<Expr> = (0..ks).map(|i| mk.bit(i)).collect::<Result<_, _>>()?;
            let slots: Vec<Expr> = (0..ks)
                .map(|i| block.slice(sec_w * (i + 1) - 1, sec_w * i))
                .collect::<Result<_, _>>()?;
            (expand(&mb, &slots)?, Some(mk.and(&ok.repeat(ks)?)?))
        }
        None => (block, None),
    };
    let s2_block = u.reg(2, "block", block.and(&ok.repeat(8 * b)?)?)?;
    let s2_error = u.reg(2, "error", s1.error)?;
    u.drive(&out_block, s2_block)?;
    u.drive(&out_error, s2_error)?;
    if let (Some(o), Some(mk)) = (out_mask, mask) {
        let r = u.reg(2, "mask", mk)?;
        u.drive(&o, r)?;
    }
    let probes = stage_probes(&u.m, truc, p.segments() > 1)?;
    u.finish(probes)
}

/// The stage probes of the decompressor (`truc`: the DF-TRUC one; `es`:
/// the ES bits are registered, more than one segment): each stage's
/// logic wires, then its registers (docs/hw/cosim.md).
fn stage_probes(m: &Module, truc: bool, es: bool) -> Result<Vec<StageProbe>, IrError> {
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
        (1, "s1_flag", Mirror::Flag, When::Always),
    ]);
    if es {
        list.push((1, "s1_es", Mirror::Es, When::Always));
    }
    list.push((1, "s1_error", Mirror::Error, When::Always));
    if truc {
        list.push((1, "s1_mask", Mirror::Mask, When::Accepted));
    }
    list.extend([
        (2, "decoded", Mirror::Data, When::Accepted),
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

/// The stage-1 registers: the stream after the first unpacker levels
/// (its runs of groups in `runs`, first most significant) or, for a raw
/// packet, the raw block; C, the ES bits (more than one segment), the
/// length error and the mask (DF-TRUC).
struct Parsed {
    stream: Expr,
    runs: Vec<packing::Sub>,
    flag: Expr,
    es: Option<Expr>,
    error: Expr,
    mask: Option<Expr>,
}

/// `c − 1` of the critical-sector count `npc` (0 for none), as the
/// DF-TRUC unpacker reads it; a constant where it is always 0.
fn sector_count_m1(m: &mut Module, name: &str, npc: &Expr, ks: u32) -> Result<Expr, IrError> {
    let width = bits_for(ks.saturating_sub(1) as u64);
    if ks <= 1 {
        return k(0, width);
    }
    let table: Vec<u64> = (0..=ks as u64).map(|c| c.saturating_sub(1)).collect();
    wire(m, name, lookup(npc, &table, width)?)
}

/// Stage 1: the mask (DF-TRUC), C and ES of the packet `bits`, the
/// length check against `len`, and the encoded data through the first
/// unpacker levels (or the raw bytes), registered.
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
    let ed_w = 8 * b - w;
    // The encoded data: everything after ES, padded to W groups of N bits.
    // (One segment: ES fills the bus after C, no ED fits; such a packet
    // is always longer than the bus and an error.)
    let ed = if ed_w > 0 {
        Expr::concat([bits.slice(ed_w - 1, 0)?, k(0, w * n - ed_w)?])?
    } else {
        k(0, w * n)?
    };
    let root = packing::Sub {
        data: ed,
        first: 0,
        groups: w as usize,
        name: "up".to_string(),
    };
    let (runs, coded_len, raw_len) = if truc {
        let cw = bits_for(ks as u64);
        let npc = wire(m, "npc", sum(&mask_bits, cw)?)?;
        let g = p.sector_segments() as u64;
        let ns: Vec<u64> = (0..=ks as u64).map(|c| c * g).collect();
        let raws: Vec<u64> = (0..=ks as u64)
            .map(|c| 8 * c * p.sector_bytes() as u64)
            .collect();
        let seg_count = wire(m, "seg_count", lookup(&npc, &ns, nw)?)?;
        if let Some(sig) = seg_count.as_signal().cloned() {
            // (a probe: the lengths come from the counts)
            m.mark_unused(&sig, sig.width() - 1, 0)?;
        }
        let raw_len = wire(m, "raw_len", lookup(&npc, &raws, xw)?)?;
        let cm1 = sector_count_m1(m, "sector_count_m1", &npc, ks)?;
        let lengths = packing::Lengths::Sectors {
            g: g as u32,
            cm1: &cm1,
            cm1_max: ks.saturating_sub(1) as u64,
        };
        let runs = packing::unpack_split(m, root, &es, n, &lengths, STAGE1_LEVELS)?;
        let count = popcount(&es)?;
        let coded = packing::truc_coded_len(&count, &npc, p, xw)?;
        (runs, coded, raw_len)
    } else {
        let runs = packing::unpack_split(m, root, &es, n, &packing::Lengths::Fixed, STAGE1_LEVELS)?;
        // every field 1 or n bits: the length from the ES count
        let count = wire(m, "es_count", popcount(&es)?)?;
        let coded = packing::coded_len(&count, w as u64, n as u64, xw)?;
        (runs, coded, k(8 * b as u128, xw)?)
    };
    let raw_block = Expr::concat(
        (0..b)
            .rev()
            .map(|t| bits.slice(8 * b - 1 - 8 * t, 8 * b - 8 - 8 * t))
            .collect::<Result<Vec<_>, _>>()?,
    )?;
    let split = Expr::concat(runs.iter().map(|r| r.data.clone()))?;
    let expected = wire(
        m,
        "expected_len",
        Expr::mux(&c, &coded_len, &raw_len)?.add(&k(kp as u128 + 1, xw)?)?,
    )?;
    let error = expected.cmp_ne(&len.zext(xw)?)?;
    let stream = u.reg(1, "stream", Expr::mux(&c, &split, &raw_block)?)?;
    let flag = u.reg(1, "flag", c)?;
    let es = if n > 1 {
        Some(u.reg(1, "es", Expr::concat(es.iter().rev().cloned())?)?)
    } else {
        None
    };
    let error = u.reg(1, "error", error)?;
    let mask = if truc {
        Some(u.reg(1, "mask", Expr::concat(mask_bits.iter().rev().cloned())?)?)
    } else {
        None
    };
    Ok(Parsed {
        stream,
        runs,
        flag,
        es,
        error,
        mask,
    })
}

/// Stage 2's decoding: the rest of the unpacker on the registered runs,
/// the segments rebuilt from the groups' fields (segment `j` taking bit
/// `j` of each field, or the pattern bit where ES is set), or the raw
/// block (wire `decoded`).
fn decode_stage(m: &mut Module, p: &DpcParams, s1: &Parsed) -> Result<Expr, IrError> {
    let (w, n) = (p.groups() as u32, p.segments() as u32);
    let ks = p.sectors() as u32;
    let coded = match &s1.es {
        Some(es_reg) => {
            let es: Vec<Expr> = (0..w).map(|i| es_reg.bit(i)).collect::<Result<_, _>>()?;
            let cm1;
            let lengths = match &s1.mask {
                Some(mk) => {
                    let bits: Vec<Expr> = (0..ks).map(|i| mk.bit(i)).collect::<Result<_, _>>()?;
                    let npc = sum(&bits, bits_for(ks as u64))?;
                    cm1 = sector_count_m1(m, "mask_count_m1", &npc, ks)?;
                    packing::Lengths::Sectors {
                        g: p.sector_segments() as u32,
                        cm1: &cm1,
                        cm1_max: ks.saturating_sub(1) as u64,
                    }
                }
                None => packing::Lengths::Fixed,
            };
            let mut top = s1.stream.width();
            let mut fields = Vec::with_capacity(w as usize);
            for r in &s1.runs {
                let wd = r.groups as u32 * n;
                let sub = packing::Sub {
                    data: s1.stream.slice(top - 1, top - wd)?,
                    ..r.clone()
                };
                top -= wd;
                for f in packing::unpack_split(m, sub, &es, n, &lengths, usize::MAX)? {
                    fields.push(f.data);
                }
            }
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
            wire(m, "coded_block", Expr::concat(segs.into_iter().rev())?)?
        }
        // one segment: no encoded data fits, every coded packet is an error
        None => k(0, s1.stream.width())?,
    };
    wire(m, "decoded", Expr::mux(&s1.flag, &coded, &s1.stream)?)
}
