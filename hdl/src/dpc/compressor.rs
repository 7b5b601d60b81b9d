//! The DPC compressor for one mode (plain, DF-TRUC, DF-MAN): two pipeline
//! stages. Stage 1 filters the block (DF-TRUC: critical sectors packed to
//! the front; DF-MAN: original or zero-filled copy, whichever codes
//! shorter) and computes the encoding status (ES) and pattern bits of
//! every bit-plane group; stage 2 packs the groups (a tree of
//! variable-length merges), picks coded or raw and forms the packet.

use golden::dpc::{DpcParams, Mode};

use super::{len_width, DpcUnit};
use crate::circuits::{bits_for, k, sum, wire};
use crate::circuits::{compact, lookup, pack, Field};
use crate::ir::{Expr, IrError, Module};
use crate::mpc::probes::Probes;
use crate::stream::StreamUnit;
use crate::unit::{CopyField, DfManCopy, Mirror, StageProbe, UnitDescription, When};

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
    let b = p.block_bytes() as u32;
    let ks = p.sectors() as u32;
    let kp = if mode == Mode::Truc { ks } else { 0 };
    let mut u = StreamUnit::begin(DpcUnit::Compressor(mode).module_name())?;
    let in_block = u.input("in_block", 8 * b)?;
    let in_mask = match mode {
        Mode::Plain => None,
        _ => Some(u.input("in_mask", ks)?),
    };
    let mut u = u.outputs()?;
    let out_bits = u.output("out_bits", kp + 1 + 8 * b)?;
    let out_len = u.output("out_len", len_width(p, mode))?;
    let out_manip = match mode {
        Mode::Man => Some(u.output("out_manipulated", 1)?),
        _ => None,
    };
    let mut u = u.pipeline(super::COMPRESSOR_LATENCY as usize)?;

    u.stage(1, "filter, ES and patterns")?;
    let s1 = filter_stage(&mut u, p, mode, &in_block, in_mask.as_ref())?;

    u.stage(2, "pack, choose coded or raw")?;
    let (s2_bits, s2_len) = pack_stage(&mut u, p, mode, &s1)?;
    u.drive(&out_bits, s2_bits)?;
    u.drive(&out_len, s2_len)?;
    if let (Some(o), Some(pick)) = (out_manip, s1.extra) {
        let r = u.reg(2, "manipulated", pick)?;
        u.drive(&o, r)?;
    }
    let probes = stage_probes(&u.m, mode)?;
    u.finish(probes)
}

/// The stage probes of the compressor of `mode`: each stage's logic
/// wires, then its registers (docs/hw/cosim.md).
fn stage_probes(m: &Module, mode: Mode) -> Result<Vec<StageProbe>, IrError> {
    let copy = |copy, field| Mirror::Copy { copy, field };
    let (orig, man) = (DfManCopy::Original, DfManCopy::ZeroFilled);
    let mut list = match mode {
        Mode::Plain => vec![(1, "grp_es", Mirror::Es), (1, "grp_ones", Mirror::Ones)],
        Mode::Truc => vec![
            (1, "compacted", Mirror::Data),
            (1, "npc", Mirror::Npc),
            (1, "grp_es", Mirror::Es),
            (1, "grp_ones", Mirror::Ones),
        ],
        Mode::Man => vec![
            (1, "manip", copy(man, CopyField::Data)),
            (1, "orig_es", copy(orig, CopyField::Es)),
            (1, "orig_ones", copy(orig, CopyField::Ones)),
            (1, "man_es", copy(man, CopyField::Es)),
            (1, "man_ones", copy(man, CopyField::Ones)),
            (1, "orig_len", copy(orig, CopyField::Len)),
            (1, "man_len", copy(man, CopyField::Len)),
            (1, "pick_man", Mirror::Manipulated),
        ],
    };
    list.extend([
        (1, "s1_data", Mirror::Data),
        (1, "s1_es", Mirror::Es),
        (1, "s1_ones", Mirror::Ones),
    ]);
    match mode {
        Mode::Plain => {}
        Mode::Truc => list.extend([
            (1, "s1_npc", Mirror::Npc),
            (1, "s1_mask", Mirror::Mask),
            (2, "seg_count", Mirror::Segments),
            (2, "raw_len", Mirror::RawLen),
        ]),
        Mode::Man => list.push((1, "s1_manipulated", Mirror::Manipulated)),
    }
    list.extend([
        (2, "coded_len", Mirror::CodedLen),
        (2, "compressed", Mirror::Compressed),
        (2, "s2_bits", Mirror::OutputBits),
        (2, "s2_len", Mirror::OutputLen),
    ]);
    if mode == Mode::Man {
        list.push((2, "s2_manipulated", Mirror::Manipulated));
    }
    let mut probes = Probes::default();
    for (stage, name, mirror) in list {
        probes.record(m, stage, name, mirror, When::Always, None)?;
    }
    Ok(probes.list)
}

/// The stage-1 registers: the filtered block, its ES and all-ones bits,
/// the mode's extra (DF-TRUC: `npc`, DF-MAN: `manipulated`) and the mask
/// (DF-TRUC).
struct Filtered {
    data: Expr,
    es: Expr,
    ones: Expr,
    extra: Option<Expr>,
    mask: Option<Expr>,
}

/// Stage 1: the filtered block of `mode` (plain: the block; DF-TRUC: the
/// critical sectors packed to the front; DF-MAN: the original or the
/// zero-filled copy, whichever codes shorter), its ES and all-ones bits,
/// registered.
fn filter_stage(
    u: &mut StreamUnit,
    p: &DpcParams,
    mode: Mode,
    blk: &Expr,
    in_mask: Option<&Expr>,
) -> Result<Filtered, IrError> {
    let ks = p.sectors() as u32;
    let sec_w = 8 * p.sector_bytes() as u32;
    let m = &mut u.m;
    let mask_bits: Vec<Expr> = match in_mask {
        Some(mk) => (0..ks).map(|i| mk.bit(i)).collect::<Result<_, _>>()?,
        None => vec![],
    };
    let sectors: Vec<Expr> = (0..ks)
        .map(|i| blk.slice(sec_w * (i + 1) - 1, sec_w * i))
        .collect::<Result<_, _>>()?;
    let (data, es, ones, extra) = match mode {
        Mode::Plain => {
            let (es, ones) = status(m, "grp", blk, None, p)?;
            (blk.clone(), es, ones, None)
        }
        Mode::Truc => {
            let compacted = compact(m, &mask_bits, &sectors)?;
            let compacted = wire(m, "compacted", compacted)?;
            let cw = bits_for(ks as u64);
            let npc = wire(m, "npc", sum(&mask_bits, cw)?)?;
            let g = p.sector_segments();
            let valid: Vec<Expr> = (0..p.segments())
                .map(|j| npc.cmp_gt(&k((j / g) as u128, cw)?))
                .collect::<Result<_, _>>()?;
            let (es, ones) = status(m, "grp", &compacted, Some(&valid), p)?;
            (compacted, es, ones, Some(("npc", npc)))
        }
        Mode::Man => {
            let zeroed: Vec<Expr> = sectors
                .iter()
                .zip(&mask_bits)
                .map(|(s, c)| s.and(&c.repeat(sec_w)?))
                .collect::<Result<_, _>>()?;
            let manip = wire(m, "manip", Expr::concat(zeroed.into_iter().rev())?)?;
            let (es_o, ones_o) = status(m, "orig", blk, None, p)?;
            let (es_m, ones_m) = status(m, "man", &manip, None, p)?;
            let len_o = wire(m, "orig_len", full_lengths(&es_o, p)?)?;
            let len_m = wire(m, "man_len", full_lengths(&es_m, p)?)?;
            let pick = wire(m, "pick_man", len_m.cmp_lt(&len_o)?)?;
            (
                Expr::mux(&pick, &manip, blk)?,
                Expr::mux(&pick, &es_m, &es_o)?,
                Expr::mux(&pick, &ones_m, &ones_o)?,
                Some(("manipulated", pick)),
            )
        }
    };
    let data = u.reg(1, "data", data)?;
    let es = u.reg(1, "es", es)?;
    let ones = u.reg(1, "ones", ones)?;
    let extra = match extra {
        Some((name, e)) => Some(u.reg(1, name, e)?),
        None => None,
    };
    let mask = match in_mask {
        Some(mk) if mode == Mode::Truc => Some(u.reg(1, "mask", mk.clone())?),
        _ => None,
    };
    Ok(Filtered {
        data,
        es,
        ones,
        extra,
        mask,
    })
}

/// Stage 2: each group's field (its pattern bit when ES is set, else its
/// bit from every segment), packed behind ES; the packet (mask, C, coded
/// or raw) and its length, registered (`s2_bits`, `s2_len`).
fn pack_stage(
    u: &mut StreamUnit,
    p: &DpcParams,
    mode: Mode,
    s1: &Filtered,
) -> Result<(Expr, Expr), IrError> {
    let (b, w, n) = (
        p.block_bytes() as u32,
        p.groups() as u32,
        p.segments() as u32,
    );
    let ks = p.sectors() as u32;
    let kp = if mode == Mode::Truc { ks } else { 0 };
    let lw = len_width(p, mode);
    let m = &mut u.m;
    let nw = bits_for(n as u64);
    let clw = bits_for((w + w * n) as u64);
    let (nlen, raw_len) = match (mode, &s1.extra) {
        (Mode::Truc, Some(npc)) => {
            let g = p.sector_segments() as u64;
            let ns: Vec<u64> = (0..=ks as u64).map(|c| c * g).collect();
            let raws: Vec<u64> = (0..=ks as u64)
                .map(|c| 8 * c * p.sector_bytes() as u64)
                .collect();
            (
                wire(m, "seg_count", lookup(npc, &ns, nw)?)?,
                wire(m, "raw_len", lookup(npc, &raws, clw)?)?,
            )
        }
        _ => (k(n as u128, nw)?, k(8 * b as u128, clw)?),
    };
    let ed = pack(m, "pk", group_fields(p, s1, &nlen)?)?;
    // ES + ED can be W bits longer than the raw block; a packet that long
    // is never coded (raw wins), so the last W bits of ED are never sent.
    if let Some(sig) = ed.data.as_signal().cloned() {
        m.mark_unused(&sig, w - 1, 0)?;
    }
    let es_seq = Expr::concat(
        (0..w)
            .map(|i| s1.es.bit(i))
            .collect::<Result<Vec<_>, _>>()?,
    )?;
    // the top 8B bits of ES|ED (ES alone for one segment: never coded)
    let coded = if n > 1 {
        Expr::concat([es_seq, ed.data.slice(w * n - 1, w)?])?
    } else {
        es_seq
    };
    let coded_len = wire(m, "coded_len", ed.len.zext(clw)?.add(&k(w as u128, clw)?)?)?;
    let compressed = wire(m, "compressed", coded_len.cmp_lt(&raw_len)?)?;
    let raw = Expr::concat(
        (0..b)
            .map(|t| s1.data.slice(8 * t + 7, 8 * t))
            .collect::<Result<Vec<_>, _>>()?,
    )?;
    let body = Expr::mux(
        &compressed,
        &Expr::concat([Expr::bool(true), coded])?,
        &Expr::concat([Expr::bool(false), raw])?,
    )?;
    let packet = match &s1.mask {
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
    Ok((u.reg(2, "bits", packet)?, u.reg(2, "len", len)?))
}

/// The packer's field of each bit-plane group: the pattern bit (1 bit)
/// where ES is set, else the group's bit of each of the `nlen` segments.
fn group_fields(p: &DpcParams, s1: &Filtered, nlen: &Expr) -> Result<Vec<Field>, IrError> {
    let (w, n) = (p.groups() as u32, p.segments() as u32);
    let nw = bits_for(n as u64);
    let sw = 8 * p.segment_bytes() as u32;
    (0..w)
        .map(|i| {
            let group = Expr::concat(
                (0..n)
                    .map(|j| s1.data.bit(sw * j + i))
                    .collect::<Result<Vec<_>, _>>()?,
            )?;
            let es_i = s1.es.bit(i)?;
            let pat = if n > 1 {
                Expr::concat([s1.ones.bit(i)?, k(0, n - 1)?])?
            } else {
                s1.ones.bit(i)?
            };
            Ok(Field {
                data: Expr::mux(&es_i, &pat, &group)?,
                len: Expr::mux(&es_i, &k(1, nw)?, nlen)?,
                max: n as u64,
            })
        })
        .collect()
}
