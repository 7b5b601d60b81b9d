//! The DPC decompressor, plain (also decodes DF-MAN packets) or DF-TRUC:
//! two pipeline stages by default (three with [`build_staged`], a middle
//! stage running more unpacker levels). Stage 1 reads the mask (DF-TRUC), C and the
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
/// of ES bits) at the default depth, the others in stage 2.
pub const STAGE1_LEVELS: usize = 2;

/// The unpacker levels of each stage before the last at a depth of
/// `stages` (the last stage does the rest): two in stage 1 at two
/// stages; one in stage 1 and two in stage 2 at three, so that the first
/// level's shifts (the longest: counts of half the groups) have a stage
/// of their own behind the parse.
pub fn stage_levels(stages: usize) -> Vec<usize> {
    match stages {
        0..=2 => vec![STAGE1_LEVELS],
        _ => vec![1, 2],
    }
}

/// The stage that checks the packet's length: stage 1 at two stages;
/// stage 2 at three (stage 1 registers the length), where more than one
/// segment makes the check depend on the ES bits.
fn check_stage(p: &DpcParams, stages: usize) -> usize {
    if stages >= 3 && p.segments() > 1 {
        2
    } else {
        1
    }
}

/// Build the decompressor with its description (the default depth).
pub fn build_described(p: &DpcParams, truc: bool) -> Result<(Module, UnitDescription), IrError> {
    build_staged(p, truc, super::DECOMPRESSOR_LATENCY as usize)
}

/// Build the decompressor with `stages` pipeline stages (2 to
/// [`super::MAX_DECOMPRESSOR_STAGES`]) and its description: stage 1 parses
/// and runs the unpacker levels of [`stage_levels`], each middle stage
/// its levels, the last stage the rest; every stage but the last
/// registers the next stage's shift selects, and the length check is in
/// [`check_stage`].
pub fn build_staged(
    p: &DpcParams,
    truc: bool,
    stages: usize,
) -> Result<(Module, UnitDescription), IrError> {
    super::check_decompressor_stages(stages)?;
    let levels = stage_levels(stages);
    let checked = check_stage(p, stages);
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
    let mut u = u.pipeline(stages)?;
    // the levels of stage `s` (1-based), the last stage all that are left
    let levels_of = |s: usize| levels.get(s - 1).copied().unwrap_or(usize::MAX);

    u.stage(
        1,
        if checked == 1 {
            "parse, check the length, first unpacker levels"
        } else {
            "parse, first unpacker level"
        },
    )?;
    let mut s1 = parse_stage(
        &mut u,
        p,
        mode,
        &in_bits,
        &in_len,
        levels_of(1),
        levels_of(2),
        checked == 1,
    )?;
    for stage in 2..stages {
        u.stage(
            stage,
            if checked == stage {
                "check the length, unpacker levels"
            } else {
                "unpacker levels"
            },
        )?;
        s1 = unpack_stage(
            &mut u,
            p,
            mode,
            &s1,
            stage,
            levels_of(stage),
            levels_of(stage + 1),
        )?;
    }

    let last = stages;
    u.stage(
        last,
        "unpack, segments, sectors back in place, zero on error",
    )?;
    let block = decode_stage(&mut u.m, p, &s1)?;
    let error = s1.error.clone().ok_or(IrError::EmptyConcat)?;
    let ok = error.not();
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
    let out_b = u.reg(last, "block", block.and(&ok.repeat(8 * b)?)?)?;
    let out_e = u.reg(last, "error", error)?;
    u.drive(&out_block, out_b)?;
    u.drive(&out_error, out_e)?;
    if let (Some(o), Some(mk)) = (out_mask, mask) {
        let r = u.reg(last, "mask", mk)?;
        u.drive(&o, r)?;
    }
    // (stage 1 counts the critical sectors where it reads the count)
    let npc = truc && (checked == 1 || ks > 1);
    let probes = stage_probes(&u.m, truc, npc, p.segments() > 1, stages, checked)?;
    u.finish(probes)
}

/// The unpacker's field lengths for the ES bits of a packet with the
/// mask `mask` (DF-TRUC; the wire `<name>` holds `c − 1`), and that
/// wire.
fn sector_lengths(
    m: &mut Module,
    p: &DpcParams,
    name: &str,
    mask: Option<&Expr>,
) -> Result<Option<Expr>, IrError> {
    let ks = p.sectors() as u32;
    match mask {
        Some(mk) => {
            let bits: Vec<Expr> = (0..ks).map(|i| mk.bit(i)).collect::<Result<_, _>>()?;
            let npc = sum(&bits, bits_for(ks as u64))?;
            Ok(Some(sector_count_m1(m, name, &npc, ks)?))
        }
        None => Ok(None),
    }
}

/// [`packing::Lengths`] of the DF-TRUC sector count `cm1` (`c − 1`), or
/// fixed-length fields.
fn lengths_of<'a>(p: &DpcParams, cm1: Option<&'a Expr>) -> packing::Lengths<'a> {
    match cm1 {
        Some(cm1) => packing::Lengths::Sectors {
            g: p.sector_segments() as u32,
            cm1,
            cm1_max: (p.sectors() as u64).saturating_sub(1),
        },
        None => packing::Lengths::Fixed,
    }
}

/// The shift selects of the next stage's unpacker nodes (`next_levels`
/// levels down `runs`), computed here and registered (`s<stage>_shifts`).
#[allow(clippy::too_many_arguments)]
fn next_selects(
    u: &mut StreamUnit,
    stage: usize,
    runs: &[packing::Sub],
    es: &[Expr],
    n: u32,
    lengths: &packing::Lengths,
    next_levels: usize,
) -> Result<packing::Selects, IrError> {
    let sel = packing::unpack_selects(&mut u.m, runs, es, n, lengths, next_levels)?;
    match packing::selects_bus(&sel)? {
        Some(bus) => {
            let r = u.reg(stage, "shifts", bus)?;
            packing::selects_from_bus(&sel, &r)
        }
        None => Ok(sel),
    }
}

/// A middle stage (`stage`): `levels` more levels of the unpacker on the
/// registered runs with the registered selects (a raw packet's bytes pass
/// through), registered with C, the ES bits, the error (checked here
/// when stage 1 registered the length) and the mask, and the selects of
/// the next stage's `next_levels` levels.
#[allow(clippy::too_many_arguments)]
fn unpack_stage(
    u: &mut StreamUnit,
    p: &DpcParams,
    mode: Mode,
    prev: &Parsed,
    stage: usize,
    levels: usize,
    next_levels: usize,
) -> Result<Parsed, IrError> {
    let (w, n) = (p.groups() as u32, p.segments() as u32);
    let es: Vec<Expr> = match &prev.es {
        Some(es_reg) => (0..w).map(|i| es_reg.bit(i)).collect::<Result<_, _>>()?,
        None => vec![],
    };
    // this stage's nodes shift by the registered selects: the sector count
    // the lengths carry is not read (a constant stands in for it)
    let unread = k(0, bits_for((p.sectors() as u64).saturating_sub(1)))?;
    let lengths = lengths_of(p, prev.mask.as_ref().map(|_| &unread));
    let (stream, runs) = if prev.es.is_some() {
        let m = &mut u.m;
        let mut top = prev.stream.width();
        let mut runs = Vec::new();
        for r in &prev.runs {
            let wd = r.groups as u32 * n;
            let sub = packing::Sub {
                data: prev.stream.slice(top - 1, top - wd)?,
                ..r.clone()
            };
            top -= wd;
            runs.extend(packing::unpack_split(
                m,
                sub,
                &es,
                n,
                &lengths,
                levels,
                Some(&prev.selects),
            )?);
        }
        let split = Expr::concat(runs.iter().map(|r| r.data.clone()))?;
        (Expr::mux(&prev.flag, &split, &prev.stream)?, runs)
    } else {
        // one segment: nothing to unpack
        (prev.stream.clone(), prev.runs.clone())
    };
    let error = match (&prev.error, &prev.len) {
        (Some(e), _) => e.clone(),
        (None, Some(len)) => {
            let npc = match &prev.mask {
                Some(mk) => {
                    let bits: Vec<Expr> = (0..mk.width())
                        .map(|i| mk.bit(i))
                        .collect::<Result<_, _>>()?;
                    Some(sum(&bits, bits_for(p.sectors() as u64))?)
                }
                None => None,
            };
            let count = prev.count.clone().ok_or(IrError::EmptyConcat)?;
            length_error(&mut u.m, p, mode, &prev.flag, &count, npc.as_ref(), len)?
        }
        (None, None) => return Err(IrError::EmptyConcat),
    };
    let selects = if prev.es.is_some() && runs.iter().any(|r| r.groups > 1) {
        // the next stage's selects, from the registered mask's count
        let name = format!("mask{stage}_count_m1");
        let cm1 = sector_lengths(&mut u.m, p, &name, prev.mask.as_ref())?;
        let lengths = lengths_of(p, cm1.as_ref());
        next_selects(u, stage, &runs, &es, n, &lengths, next_levels)?
    } else {
        packing::Selects::new()
    };
    Ok(Parsed {
        stream: u.reg(stage, "stream", stream)?,
        runs,
        flag: u.reg(stage, "flag", prev.flag.clone())?,
        es: match &prev.es {
            Some(e) => Some(u.reg(stage, "es", e.clone())?),
            None => None,
        },
        error: Some(u.reg(stage, "error", error)?),
        len: None,
        count: None,
        mask: match &prev.mask {
            Some(mk) => Some(u.reg(stage, "mask", mk.clone())?),
            None => None,
        },
        selects,
    })
}

/// The stage probes of the decompressor (`truc`: the DF-TRUC one; `npc`:
/// stage 1 has the wire `npc`; `es`: the ES bits are registered, more
/// than one segment; `stages` deep, the length checked in stage
/// `checked`): each stage's logic wires, then its registers
/// (docs/hw/cosim.md).
fn stage_probes(
    m: &Module,
    truc: bool,
    npc: bool,
    es: bool,
    stages: usize,
    checked: usize,
) -> Result<Vec<StageProbe>, IrError> {
    let mut list: Vec<(usize, String, Mirror, When)> = Vec::new();
    let mut add = |s: usize, name: &str, mirror: Mirror, when: When| {
        list.push((s, name.to_string(), mirror, when))
    };
    add(1, "flag", Mirror::Flag, When::Always);
    if npc {
        add(1, "npc", Mirror::Npc, When::Always);
    }
    if truc {
        add(checked, "seg_count", Mirror::Segments, When::Always);
        add(checked, "raw_len", Mirror::RawLen, When::Always);
    }
    add(checked, "expected_len", Mirror::ExpectedLen, When::Always);
    for s in 1..stages {
        add(s, &format!("s{s}_flag"), Mirror::Flag, When::Always);
        if es {
            add(s, &format!("s{s}_es"), Mirror::Es, When::Always);
        }
        if s >= checked {
            add(s, &format!("s{s}_error"), Mirror::Error, When::Always);
        }
        if truc {
            add(s, &format!("s{s}_mask"), Mirror::Mask, When::Accepted);
        }
    }
    let l = stages;
    add(l, "decoded", Mirror::Data, When::Accepted);
    add(l, &format!("s{l}_block"), Mirror::Block, When::Always);
    add(l, &format!("s{l}_error"), Mirror::Error, When::Always);
    if truc {
        add(l, &format!("s{l}_mask"), Mirror::Mask, When::Always);
    }
    let mut probes = Probes::default();
    for (stage, name, mirror, when) in list {
        probes.record(m, stage, &name, mirror, when, None)?;
    }
    Ok(probes.list)
}

/// A stage's registers: the stream after the unpacker levels so far (its
/// runs of groups in `runs`, first most significant) or, for a raw
/// packet, the raw block; C, the ES bits (more than one segment), the
/// length error (or, before the stage that checks it, the length), the
/// mask (DF-TRUC) and the next stage's shift selects.
struct Parsed {
    stream: Expr,
    runs: Vec<packing::Sub>,
    flag: Expr,
    es: Option<Expr>,
    error: Option<Expr>,
    len: Option<Expr>,
    /// (with `len`) the number of ES bits set
    count: Option<Expr>,
    mask: Option<Expr>,
    selects: packing::Selects,
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

/// The length check of a packet with C `c`, `count` ES bits set and
/// (DF-TRUC) `npc` critical sectors against `len`: whether the length
/// differs from the one the fields imply.
///
/// The implied length is published as the wire `expected_len` (DF-TRUC
/// also `seg_count` and `raw_len`) for the stage probes, but the check
/// does not go through it: with `K = W + W·g·c + (mask bits) + 1` the
/// coded length is `K − count·(g·c − 1)` (plain DPC: `g·c` = `n`), so a
/// coded packet's length is right when `count·g·c = (K − len) + count`,
/// both sides modulo `2^x` like the length itself: the count shifted
/// (or one sum of two shifts) against the count added to a difference
/// computed from `len` alone, per critical-sector count; a raw packet's
/// length is compared with a constant.
#[allow(clippy::too_many_arguments)]
fn length_error(
    m: &mut Module,
    p: &DpcParams,
    mode: Mode,
    c: &Expr,
    count: &Expr,
    npc: Option<&Expr>,
    len: &Expr,
) -> Result<Expr, IrError> {
    let (b, w, n) = (
        p.block_bytes() as u64,
        p.groups() as u64,
        p.segments() as u64,
    );
    let ks = p.sectors() as u64;
    let truc = mode == Mode::Truc;
    let kp = if truc { ks } else { 0 };
    let lw = len_width(p, mode);
    let nw = bits_for(n);
    let xw = bits_for(kp + 1 + w + w * n).max(lw);
    let lx = len.zext(xw)?;
    let e = count.zext(xw)?;
    // (fields of `f` bits: coded length `W + W·f − count·(f − 1)`)
    // (`count·f = (K − len) + count`: a shift of the count, or one sum for
    // an `f` of two bits set, against one addition to a difference
    // computed from `len` alone)
    let coded_ok = |f: u64| -> Result<Expr, IrError> {
        let lhs = match f {
            0 => k(0, xw)?,
            _ => packing::mul_const(&e, f, xw)?,
        };
        let rhs = k(((kp + 1 + w + w * f) % (1u64 << xw)) as u128, xw)?
            .sub(&lx)?
            .add(&e)?;
        lhs.cmp_eq(&rhs)
    };
    let raw_ok = |raw: u64| -> Result<Expr, IrError> {
        lx.cmp_eq(&k(((raw + kp + 1) % (1u64 << xw)) as u128, xw)?)
    };
    let (coded_len, raw_len, ok) = if let (true, Some(npc)) = (truc, npc) {
        let g = p.sector_segments() as u64;
        let ns: Vec<u64> = (0..=ks).map(|c| c * g).collect();
        let raws: Vec<u64> = (0..=ks).map(|c| 8 * c * p.sector_bytes() as u64).collect();
        let seg_count = wire(m, "seg_count", lookup(npc, &ns, nw)?)?;
        if let Some(sig) = seg_count.as_signal().cloned() {
            // (a probe: the lengths come from the counts)
            m.mark_unused(&sig, sig.width() - 1, 0)?;
        }
        let raw_len = wire(m, "raw_len", lookup(npc, &raws, xw)?)?;
        let coded = packing::truc_coded_len(count, npc, p, xw)?;
        let mut sel = Vec::new();
        let mut oks = Vec::new();
        for cc in 0..=ks {
            sel.push(npc.cmp_eq(&k(cc as u128, npc.width())?)?);
            oks.push(Expr::mux(
                c,
                &coded_ok(cc * g)?,
                &raw_ok(raws[cc as usize])?,
            )?);
        }
        (coded, raw_len, crate::circuits::onehot_mux(&sel, &oks)?)
    } else {
        // (fields of one length: the implied length itself is compared,
        // the shorter path here)
        let coded = packing::coded_len(count, w, n, xw)?;
        let raw = k(8 * b as u128, xw)?;
        let expected = Expr::mux(c, &coded, &raw)?.add(&k(kp as u128 + 1, xw)?)?;
        (coded, raw, expected.cmp_eq(&lx)?)
    };
    let expected = wire(
        m,
        "expected_len",
        Expr::mux(c, &coded_len, &raw_len)?.add(&k(kp as u128 + 1, xw)?)?,
    )?;
    if let Some(sig) = expected.as_signal().cloned() {
        // (a probe: the check compares the count's product instead)
        m.mark_unused(&sig, sig.width() - 1, 0)?;
    }
    if let Some(sig) = raw_len.as_signal().cloned() {
        m.mark_unused(&sig, sig.width() - 1, 0)?;
    }
    Ok(ok.not())
}

/// Stage 1: the mask (DF-TRUC), C and ES of the packet `bits`, the
/// length check against `len` (`check`; else the length is registered),
/// and the encoded data through `levels` unpacker levels (or the raw
/// bytes), registered with the selects of the next stage's
/// `next_levels` levels.
#[allow(clippy::too_many_arguments)]
fn parse_stage(
    u: &mut StreamUnit,
    p: &DpcParams,
    mode: Mode,
    bits: &Expr,
    len: &Expr,
    levels: usize,
    next_levels: usize,
    check: bool,
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
    let top = inw - 1;
    let mask_bits: Vec<Expr> = (0..kp)
        .map(|i| bits.bit(top - i))
        .collect::<Result<_, _>>()?;
    let m = &mut u.m;
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
    // (the count is read here by the length check and, with more than
    // one sector, by the unpacker's lengths)
    let (npc, cm1) = if truc && (check || ks > 1) {
        let cw = bits_for(ks as u64);
        let npc = wire(m, "npc", sum(&mask_bits, cw)?)?;
        let cm1 = sector_count_m1(m, "sector_count_m1", &npc, ks)?;
        (Some(npc), Some(cm1))
    } else {
        (None, None)
    };
    let lengths = lengths_of(p, cm1.as_ref());
    let runs = packing::unpack_split(m, root, &es, n, &lengths, levels, None)?;
    let (error, len, count) = if check {
        let count = wire(m, "es_count", popcount(&es)?)?;
        let e = length_error(m, p, mode, &c, &count, npc.as_ref(), len)?;
        (Some(u.reg(1, "error", e)?), None, None)
    } else {
        // the check's count and length, for the next stage
        let count = popcount(&es)?;
        (
            None,
            Some(u.reg(1, "len", len.clone())?),
            Some(u.reg(1, "es_count", count)?),
        )
    };
    let selects = if n > 1 {
        next_selects(u, 1, &runs, &es, n, &lengths, next_levels)?
    } else {
        packing::Selects::new()
    };
    let raw_block = Expr::concat(
        (0..b)
            .rev()
            .map(|t| bits.slice(8 * b - 1 - 8 * t, 8 * b - 8 - 8 * t))
            .collect::<Result<Vec<_>, _>>()?,
    )?;
    let split = Expr::concat(runs.iter().map(|r| r.data.clone()))?;
    let stream = u.reg(1, "stream", Expr::mux(&c, &split, &raw_block)?)?;
    let flag = u.reg(1, "flag", c)?;
    let es = if n > 1 {
        Some(u.reg(1, "es", Expr::concat(es.iter().rev().cloned())?)?)
    } else {
        None
    };
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
        len,
        count,
        mask,
        selects,
    })
}

/// The last stage's decoding: the rest of the unpacker on the registered
/// runs with the registered selects, the segments rebuilt from the
/// groups' fields (segment `j` taking bit `j` of each field, or the
/// pattern bit where ES is set), or the raw block (wire `decoded`).
fn decode_stage(m: &mut Module, p: &DpcParams, s1: &Parsed) -> Result<Expr, IrError> {
    let (w, n) = (p.groups() as u32, p.segments() as u32);
    let coded = match &s1.es {
        Some(es_reg) => {
            let es: Vec<Expr> = (0..w).map(|i| es_reg.bit(i)).collect::<Result<_, _>>()?;
            // every node's selects are registered: the sector count the
            // lengths carry is not read (a constant stands in for it)
            let unread = k(0, bits_for((p.sectors() as u64).saturating_sub(1)))?;
            let lengths = lengths_of(p, s1.mask.as_ref().map(|_| &unread));
            let mut top = s1.stream.width();
            let mut fields = Vec::with_capacity(w as usize);
            for r in &s1.runs {
                let wd = r.groups as u32 * n;
                let sub = packing::Sub {
                    data: s1.stream.slice(top - 1, top - wd)?,
                    ..r.clone()
                };
                top -= wd;
                for f in
                    packing::unpack_split(m, sub, &es, n, &lengths, usize::MAX, Some(&s1.selects))?
                {
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
