//! The DPC compressor for one mode (plain, DF-TRUC, DF-MAN): two pipeline
//! stages. Stage 1 filters the block (DF-TRUC: critical sectors packed to
//! the front; DF-MAN: original or zero-filled copy, whichever codes
//! shorter) and computes the encoding status (ES) and pattern bits of
//! every bit-plane group; stage 2 packs the groups (a tree of
//! variable-length merges), picks coded or raw and forms the packet.

use golden::dpc::{DpcParams, Mode};

use super::packing;
use super::{len_width, DpcUnit};
use crate::circuits::{bits_for, k, popcount, sum, wire};
use crate::circuits::{compact, lookup};
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

/// The DF-TRUC packer's merge levels done in stage 1 (behind the sector
/// compaction and ES, which leave stage 1 the shorter), the others in
/// stage 2.
pub const TRUC_STAGE1_LEVELS: usize = 2;

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

/// The number of ES bits set of the status `es` (wire `<name>_es_count`)
/// and the effective length of the block (coded `W + W·n − count·(n−1)`,
/// or raw when that is not shorter; wire `<name>_len`).
fn full_lengths(
    m: &mut Module,
    name: &str,
    es: &Expr,
    p: &DpcParams,
) -> Result<(Expr, Expr), IrError> {
    let (w, n) = (p.groups() as u64, p.segments() as u64);
    let lw = bits_for(w + w * n);
    let bits: Vec<Expr> = (0..w as u32).map(|i| es.bit(i)).collect::<Result<_, _>>()?;
    let count = wire(m, &format!("{name}_es_count"), popcount(&bits)?)?;
    let coded = packing::coded_len(&count, w, n, lw)?;
    let raw = k(8 * p.block_bytes() as u128, lw)?;
    let len = wire(
        m,
        &format!("{name}_len"),
        Expr::mux(&coded.cmp_lt(&raw)?, &coded, &raw)?,
    )?;
    Ok((count, len))
}

/// Whether the zero-filled copy, `man` ES bits set against `orig` in the
/// original, codes strictly shorter than the original (both capped at the
/// raw length): it has more ES bits set (`n > 1`: the coded length falls
/// with the count) and codes shorter than raw, i.e. its count reaches the
/// smallest one whose coded length is below raw. The same as comparing
/// the capped lengths, without the length arithmetic on the path.
fn man_shorter(orig: &Expr, man: &Expr, p: &DpcParams) -> Result<Expr, IrError> {
    let (w, n) = (p.groups() as u64, p.segments() as u64);
    let raw = 8 * p.block_bytes() as u64;
    let first_below_raw = (0..=w).find(|&e| w + w * n - e * (n - 1) < raw);
    match first_below_raw {
        Some(t) if n > 1 => man
            .cmp_gt(orig)?
            .and(&man.cmp_ge(&k(t as u128, man.width())?)?),
        _ => Ok(Expr::bool(false)),
    }
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
    // (DF-MAN registers the original block and zero-fills in stage 2)
    list.push(match mode {
        Mode::Man => (1, "s1_data", copy(orig, CopyField::Data)),
        _ => (1, "s1_data", Mirror::Data),
    });
    match mode {
        Mode::Plain => list.extend([(1, "s1_es", Mirror::Es), (1, "s1_ones", Mirror::Ones)]),
        // (DF-TRUC's patterns are in its packed fields)
        Mode::Truc => list.push((1, "s1_es", Mirror::Es)),
        Mode::Man => list.extend([
            (1, "s1_orig_es", copy(orig, CopyField::Es)),
            (1, "s1_orig_ones", copy(orig, CopyField::Ones)),
            (1, "s1_man_es", copy(man, CopyField::Es)),
            (1, "s1_man_ones", copy(man, CopyField::Ones)),
        ]),
    }
    match mode {
        Mode::Plain => {}
        Mode::Truc => list.extend([
            (1, "s1_npc", Mirror::Npc),
            (1, "s1_mask", Mirror::Mask),
            (2, "seg_count", Mirror::Segments),
            (2, "raw_len", Mirror::RawLen),
        ]),
        Mode::Man => list.extend([
            (1, "s1_manipulated", Mirror::Manipulated),
            (1, "s1_mask", Mirror::Mask),
            (2, "data", Mirror::Data),
            (2, "es", Mirror::Es),
            (2, "ones", Mirror::Ones),
        ]),
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

/// The stage-1 registers: the filtered block (DF-MAN: the original block
/// and its mask, the copy is zero-filled in stage 2), its ES and all-ones
/// bits, the number of ES bits set (plain, DF-MAN), the mode's extra
/// (DF-TRUC: `npc`, DF-MAN: `manipulated`) and the mask (DF-TRUC).
/// DF-TRUC's stage-1 packer output: the parts, their counts of ES bits
/// clear (none with one segment) and their runs of groups (first, count).
type Packed = (Expr, Option<Expr>, Vec<(usize, usize)>);

#[derive(Clone)]
struct Filtered {
    data: Expr,
    es: Expr,
    ones: Expr,
    /// DF-MAN: the zero-filled copy's ES and all-ones bits (`es`, `ones`:
    /// the original's), picked in stage 2.
    man: Option<(Expr, Expr)>,
    count: Option<Expr>,
    extra: Option<Expr>,
    mask: Option<Expr>,
    /// DF-TRUC: the packer's parts after its stage-1 levels (register
    /// `s1_packed`, first part most significant), their counts of ES bits
    /// clear (register `s1_part_clear`, the same order) and their runs of
    /// groups.
    packed: Option<Packed>,
    /// DF-TRUC: `seg_count − 1` of the critical-sector count (register
    /// `s1_seg_count_m1`; a constant with one segment), for stage 2's
    /// shifts.
    nm1: Option<Expr>,
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
    let mut packed = None;
    let mut man = None;
    let mut nm1_s1 = None;
    let (data, es, ones, count, extra) = match mode {
        Mode::Plain => {
            let (es, ones) = status(m, "grp", blk, None, p)?;
            let bits: Vec<Expr> = (0..es.width())
                .map(|i| es.bit(i))
                .collect::<Result<_, _>>()?;
            let count = popcount(&bits)?;
            (blk.clone(), es, ones, Some(count), None)
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
            // the first packer levels
            let n = p.segments() as u32;
            let nm1 = packing::seg_count_m1(m, "seg_count_m1", &npc, p, bits_for(n as u64))?;
            let parts = field_data(p, &compacted, &es, &ones)?
                .into_iter()
                .enumerate()
                .map(|(i, data)| packing::Part {
                    data,
                    first: i,
                    groups: 1,
                })
                .collect();
            let es_bits: Vec<Expr> = (0..es.width())
                .map(|i| es.bit(i))
                .collect::<Result<_, _>>()?;
            let parts = packing::pack_var_levels(
                m,
                "pk",
                parts,
                &es_bits,
                None,
                &nm1,
                n,
                0,
                TRUC_STAGE1_LEVELS,
            )?;
            // each part's count of ES bits clear, for stage 2's shifts and
            // length (all but the last part's, which is never on a left
            // side and is counted in stage 2; none with one segment: no
            // shifts, never coded)
            let counted = if n > 1 { parts.len() - 1 } else { 0 };
            let counts: Vec<Expr> = parts[..counted]
                .iter()
                .map(|p| packing::clear_count(&es_bits[p.first..p.first + p.groups]))
                .collect::<Result<_, _>>()?;
            packed = Some((
                Expr::concat(parts.iter().map(|p| p.data.clone()))?,
                (!counts.is_empty())
                    .then(|| Expr::concat(counts))
                    .transpose()?,
                parts.iter().map(|p| (p.first, p.groups)).collect(),
            ));
            nm1_s1 = Some(nm1);
            (compacted, es, ones, None, Some(("npc", npc)))
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
            let (count_o, len_o) = full_lengths(m, "orig", &es_o, p)?;
            let (count_m, len_m) = full_lengths(m, "man", &es_m, p)?;
            // the lengths are published for the probes; the pick compares
            // the counts
            for len in [&len_o, &len_m] {
                if let Some(sig) = len.as_signal().cloned() {
                    m.mark_unused(&sig, sig.width() - 1, 0)?;
                }
            }
            let pick = wire(m, "pick_man", man_shorter(&count_o, &count_m, p)?)?;
            // the original block and both copies' ES and all-ones bits are
            // registered; stage 2 zero-fills and picks
            man = Some((es_m, ones_m));
            (
                blk.clone(),
                es_o,
                ones_o,
                Some(Expr::mux(&pick, &count_m, &count_o)?),
                Some(("manipulated", pick)),
            )
        }
    };
    let data = u.reg(1, "data", data)?;
    let (es, ones) = match mode {
        Mode::Plain => (u.reg(1, "es", es)?, u.reg(1, "ones", ones)?),
        Mode::Truc => (u.reg(1, "es", es)?, ones),
        Mode::Man => (u.reg(1, "orig_es", es)?, u.reg(1, "orig_ones", ones)?),
    };
    let man = match man {
        Some((es_m, ones_m)) => Some((u.reg(1, "man_es", es_m)?, u.reg(1, "man_ones", ones_m)?)),
        None => None,
    };
    let count = match count {
        Some(c) => Some(u.reg(1, "es_count", c)?),
        None => None,
    };
    let extra = match extra {
        Some((name, e)) => Some(u.reg(1, name, e)?),
        None => None,
    };
    let mask = match in_mask {
        Some(mk) => Some(u.reg(1, "mask", mk.clone())?),
        _ => None,
    };
    let packed = match packed {
        Some((e, c, runs)) => {
            let c = match c {
                Some(c) => Some(u.reg(1, "part_clear", c)?),
                None => None,
            };
            Some((u.reg(1, "packed", e)?, c, runs))
        }
        None => None,
    };
    let nm1 = match nm1_s1 {
        Some(x) if x.as_const().is_none() => Some(u.reg(1, "seg_count_m1", x)?),
        other => other,
    };
    Ok(Filtered {
        data,
        es,
        ones,
        man,
        count,
        extra,
        mask,
        packed,
        nm1,
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
    let zero_filled;
    let s1 = match (mode, &s1.extra, &s1.mask) {
        (Mode::Man, Some(pick), Some(mk)) => {
            // DF-MAN: the non-critical sectors zeroed where the copy won
            let sec_w = 8 * p.sector_bytes() as u32;
            let keep: Vec<Expr> = (0..ks)
                .map(|c| pick.not().or(&mk.bit(c)?)?.repeat(sec_w))
                .collect::<Result<_, _>>()?;
            let data = s1.data.and(&Expr::concat(keep.into_iter().rev())?)?;
            let (es_m, ones_m) = s1.man.clone().ok_or(IrError::EmptyConcat)?;
            zero_filled = Filtered {
                data: wire(m, "data", data)?,
                es: wire(m, "es", Expr::mux(pick, &es_m, &s1.es)?)?,
                ones: wire(m, "ones", Expr::mux(pick, &ones_m, &s1.ones)?)?,
                mask: None,
                ..s1.clone()
            };
            &zero_filled
        }
        _ => s1,
    };
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
    let es_bits: Vec<Expr> = (0..w).map(|i| s1.es.bit(i)).collect::<Result<_, _>>()?;
    let sector_bits = 8 * p.sector_bytes() as u64;
    let mut truc_clear = None;
    let (ed, coded_len, compressed) = if let (Mode::Truc, Some(npc), Some((packed, clear, runs))) =
        (mode, &s1.extra, &s1.packed)
    {
        // the packer's last levels on the stage-1 parts (fields of 1 or
        // `seg_count` bits: the shifts from the counts of ES bits clear
        // times `seg_count - 1`)
        if let Some(sig) = nlen.as_signal().cloned() {
            // (a probe: the lengths come from the counts)
            m.mark_unused(&sig, sig.width() - 1, 0)?;
        }
        // (registered in stage 1, so that the shifts' products start at a
        // register)
        let nm1 = s1.nm1.clone().ok_or(IrError::EmptyConcat)?;
        let (mut top, mut ctop) = (packed.width(), clear.as_ref().map_or(0, Expr::width));
        let mut parts = Vec::new();
        let mut counts = Vec::new();
        for &(first, groups) in runs {
            let wd = groups as u32 * n;
            parts.push(packing::Part {
                data: packed.slice(top - 1, top - wd)?,
                first,
                groups,
            });
            top -= wd;
            if let Some(clear) = clear.as_ref().filter(|_| ctop > 0) {
                let cw = bits_for(groups as u64);
                counts.push((first, groups, clear.slice(ctop - 1, ctop - cw)?));
                ctop -= cw;
            }
        }
        let mut parts = packing::pack_var_levels(
            m,
            "pk",
            parts,
            &es_bits,
            Some(&counts),
            &nm1,
            n,
            TRUC_STAGE1_LEVELS,
            usize::MAX,
        )?;
        let ed = parts.pop().map(|p| p.data).ok_or(IrError::EmptyConcat)?;
        // the length, and coded shorter than raw (per critical-sector
        // count, a threshold), from the ES count
        // (the ES count for the `coded_len` probe)
        let count = wire(m, "es_count", popcount(&es_bits)?)?;
        let len = packing::truc_coded_len(&count, npc, p, clw)?;
        // the number of ES bits clear: the parts' registered counts, and
        // the parts without one counted here (a sum of a few small counts,
        // not a popcount of every ES bit)
        let mut clear_terms: Vec<Expr> = counts.iter().map(|(_, _, c)| c.clone()).collect();
        for &(first, groups) in runs {
            if !counts.iter().any(|(f, _, _)| *f == first) {
                clear_terms.push(packing::clear_count(&es_bits[first..first + groups])?);
            }
        }
        let clear = wire(m, "es_clear", sum(&clear_terms, bits_for(w as u64))?)?;
        let g = p.sector_segments() as u64;
        let cw = npc.width();
        let mut terms = Vec::new();
        for c in 0..=ks as u64 {
            let coded = |e: u64| w as u64 + e + (w as u64 - e) * c * g;
            if let Some(t) = packing::first_below(w as u64, c * sector_bits, coded) {
                // (at least `t` ES bits set: at most `W − t` clear)
                terms.push(
                    npc.cmp_eq(&k(c as u128, cw)?)?
                        .and(&clear.cmp_le(&k(w as u128 - t as u128, clear.width())?)?)?,
                );
            }
        }
        let compressed = match terms.len() {
            0 => Expr::bool(false),
            _ => Expr::concat(terms)?.reduce_or(),
        };
        truc_clear = Some(clear);
        (ed, len, compressed)
    } else {
        // every field is 1 or n bits: the packer, and the length and the
        // choice from the ES count of stage 1
        let data = field_data(p, &s1.data, &s1.es, &s1.ones)?;
        let ed = packing::pack_fixed(m, "pk", data, &es_bits, n)?;
        let count = s1.count.clone().ok_or(IrError::EmptyConcat)?;
        let (wu, nu) = (w as u64, n as u64);
        let coded = |e: u64| wu + wu * nu - e * (nu - 1);
        let compressed = match packing::first_below(wu, 8 * b as u64, coded) {
            Some(t) => count.cmp_ge(&k(t as u128, count.width())?)?,
            None => Expr::bool(false),
        };
        (ed, packing::coded_len(&count, wu, nu, clw)?, compressed)
    };
    // ES + ED can be W bits longer than the raw block; a packet that long
    // is never coded (raw wins), so the last W bits of ED are never sent.
    if let Some(sig) = ed.as_signal().cloned() {
        m.mark_unused(&sig, w - 1, 0)?;
    }
    let es_seq = Expr::concat(
        (0..w)
            .map(|i| s1.es.bit(i))
            .collect::<Result<Vec<_>, _>>()?,
    )?;
    // the top 8B bits of ES|ED (ES alone for one segment: never coded)
    let coded = if n > 1 {
        Expr::concat([es_seq, ed.slice(w * n - 1, w)?])?
    } else {
        es_seq
    };
    let coded_len = wire(m, "coded_len", coded_len)?;
    // (the same as `coded_len < raw_len`, from the count)
    if clw > lw {
        // the lengths' top bits are read by the probes only (the packet
        // is never longer than the length port holds)
        for len in [&coded_len, &raw_len] {
            if let Some(sig) = len.as_signal().cloned() {
                m.mark_unused(&sig, clw - 1, lw)?;
            }
        }
    }
    if compressed.as_const().is_some() {
        // never coded (one segment): the length is published for the
        // probes only
        for len in [&coded_len, &raw_len] {
            if let Some(sig) = len.as_signal().cloned() {
                m.mark_unused(&sig, sig.width() - 1, 0)?;
            }
        }
    }
    let compressed = wire(m, "compressed", compressed)?;
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
    let len = match (&truc_clear, &s1.extra) {
        (Some(clear), Some(npc)) => {
            // DF-TRUC: per critical-sector count `c` the packet's length,
            // coded `(mask bits) + 1 + W + E + (W − E)·g·c` with `W − E` =
            // `J` ES bits clear, `(mask bits) + 1 + 2W − J + J·g·c`, or raw,
            // one-hot selected
            // (`coded_len` and `raw_len` are published for the probes)
            for l in [&coded_len, &raw_len] {
                if let Some(sig) = l.as_signal().cloned() {
                    m.mark_unused(&sig, sig.width() - 1, 0)?;
                }
            }
            let xw = lw.max(clw);
            let j = clear.zext(xw)?;
            let g = p.sector_segments() as u64;
            let (wu, kp1) = (w as u64, kp as u64 + 1);
            let modx = |v: u64| (v % (1u64 << xw)) as u128;
            let mut sel = Vec::new();
            let mut vals = Vec::new();
            for c in 0..=ks as u64 {
                let f = c * g;
                let kc = k(modx(kp1 + 2 * wu), xw)?;
                // (the product a shift, or one sum of two, beside the
                // subtraction)
                let coded = kc.sub(&j)?.add(&packing::mul_const(&j, f, xw)?)?;
                let raw = k(modx(kp1 + c * sector_bits), xw)?;
                sel.push(npc.cmp_eq(&k(c as u128, npc.width())?)?);
                vals.push(Expr::mux(&compressed, &coded, &raw)?);
            }
            crate::circuits::onehot_mux(&sel, &vals)?.trunc(lw)?
        }
        _ => Expr::mux(&compressed, &coded_len, &raw_len)?
            .zext(lw.max(clw))?
            .add(&k(kp as u128 + 1, lw.max(clw))?)?
            .trunc(lw)?,
    };
    Ok((u.reg(2, "bits", packet)?, u.reg(2, "len", len)?))
}

/// The packer's field of each bit-plane group of `data` (status `es`,
/// all-ones `ones`): the pattern bit followed by zeros where ES is set
/// (length 1), else the group's bit of every segment (MSB first).
fn field_data(p: &DpcParams, data: &Expr, es: &Expr, ones: &Expr) -> Result<Vec<Expr>, IrError> {
    let (w, n) = (p.groups() as u32, p.segments() as u32);
    let sw = 8 * p.segment_bytes() as u32;
    (0..w)
        .map(|i| {
            let group = Expr::concat(
                (0..n)
                    .map(|j| data.bit(sw * j + i))
                    .collect::<Result<Vec<_>, _>>()?,
            )?;
            let pat = if n > 1 {
                Expr::concat([ones.bit(i)?, k(0, n - 1)?])?
            } else {
                ones.bit(i)?
            };
            Expr::mux(&es.bit(i)?, &pat, &group)
        })
        .collect()
}
