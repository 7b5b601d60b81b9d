//! Packing and unpacking of the bit-plane groups' fields when every field
//! is either one bit (its group's ES bit set) or `n` bits (the group), `n`
//! a constant (plain DPC and DF-MAN): the length of `m` fields of which
//! `e` have ES set is `m·n − e·(n−1)`, so a merge places its right field
//! at the constant offset `m·n` and moves it back by `e·(n−1)`, a shifter
//! on the bits of `e` (one 2:1 mux level per bit of the count, `log2(m)+1`
//! levels) instead of one on every bit of the length. The counts are
//! popcounts of the ES bits, beside the data path.

use crate::circuits::{bits_for, k, popcount, shl_var_top, shr_var, sum, wire};
use crate::ir::{Expr, IrError, Module};

/// `e · c` for the constant `c`, `width` bits (a sum of shifted copies).
pub fn mul_const(e: &Expr, c: u64, width: u32) -> Result<Expr, IrError> {
    let terms: Vec<Expr> = (0..64)
        .filter(|i| (c >> i) & 1 == 1 && *i < width)
        .map(|i| Ok(e.zext(width)?.shl(i)))
        .collect::<Result<_, IrError>>()?;
    sum(&terms, width)
}

/// Coded length `W + Σ len` of `groups` fields of which `es_count` have ES
/// set (length 1) and the others `n` bits: `W + W·n − es_count·(n−1)`,
/// `width` bits.
pub fn coded_len(es_count: &Expr, groups: u64, n: u64, width: u32) -> Result<Expr, IrError> {
    let e = es_count.zext(width)?;
    k((groups + groups * n) as u128, width)?
        .sub(&mul_const(&e, n, width)?)?
        .add(&e)
}

/// The number of set bits of `es` (width `bits_for(es.len())`).
fn count(es: &[Expr]) -> Result<Expr, IrError> {
    popcount(es)
}

/// Concatenate the MSB-aligned fields `fields` (each `n` bits; field `i`
/// is its first bit followed by zeros where `es[i]` is set, length 1, else
/// `n` bits long) into one MSB-aligned stream of `fields.len()·n` bits
/// (zero beyond the packed length): a balanced tree of merges, each the
/// left part ORed with the right part shifted towards the MSB by
/// `e·(n−1)` from the constant offset (`e`: ES bits set in the left part).
pub fn pack_fixed(
    m: &mut Module,
    name: &str,
    fields: Vec<Expr>,
    es: &[Expr],
    n: u32,
) -> Result<Expr, IrError> {
    // (data, first group, groups)
    let mut level: Vec<(Expr, usize, usize)> = fields
        .into_iter()
        .enumerate()
        .map(|(i, f)| (f, i, 1))
        .collect();
    let mut depth = 0;
    while level.len() > 1 {
        let mut next = Vec::with_capacity(level.len().div_ceil(2));
        for (idx, pair) in level.chunks(2).enumerate() {
            if pair.len() == 1 {
                next.push(pair[0].clone());
                continue;
            }
            let ((a, alo, acnt), (b, _, bcnt)) = (&pair[0], &pair[1]);
            let stem = format!("{name}{depth}_{idx}");
            let (wa, wb) = (a.width(), b.width());
            let mut cur = Expr::concat([k(0, wa)?, b.clone()])?;
            if n > 1 {
                let e = wire(m, &format!("{stem}_count"), count(&es[*alo..alo + acnt])?)?;
                let levels = e.width();
                for t in 0..levels {
                    cur = Expr::mux(&e.bit(t)?, &cur.shl((1u32 << t) * (n - 1)), &cur)?;
                    if t + 1 < levels {
                        cur = wire(m, &format!("{stem}_b{t}"), cur)?;
                    }
                }
            }
            let data = Expr::concat([a.clone(), k(0, wb)?])?.or(&cur)?;
            next.push((wire(m, &format!("{stem}_data"), data)?, *alo, acnt + bcnt));
        }
        level = next;
        depth += 1;
    }
    level.pop().map(|(d, _, _)| d).ok_or(IrError::EmptyConcat)
}

/// The inverse of [`pack_fixed`]: `stream` (MSB-aligned, `es.len()·n`
/// bits) holds the fields back to back; return each field's `n` bits (the
/// bits after a one-bit field are the next fields'). The right half of
/// each node is the stream shifted towards the LSB by `e·(n−1)` (`e`: ES
/// bits set in the left half), read from the constant offset of the left
/// half's `n`-bit fields; each shifter level keeps only the bits later
/// levels read.
pub fn unpack_fixed(
    m: &mut Module,
    name: &str,
    stream: &Expr,
    es: &[Expr],
    n: u32,
) -> Result<Vec<Expr>, IrError> {
    let cnt = es.len();
    let sw = stream.width();
    if cnt == 1 {
        return Ok(vec![stream.slice(sw - 1, sw - n)?]);
    }
    let mid = cnt.div_ceil(2);
    let left = stream.slice(sw - 1, sw - mid as u32 * n)?;
    let right_w = (cnt - mid) as u32 * n;
    let right = if n > 1 {
        let e = count(&es[..mid])?;
        let levels = e.width();
        // need[t]: the low bits of the value before level t that later
        // levels read
        let mut need = vec![right_w; levels as usize + 1];
        for t in (0..levels).rev() {
            need[t as usize] = need[t as usize + 1] + (1u32 << t) * (n - 1);
        }
        let mut cur = if need[0] > sw {
            stream.zext(need[0])?
        } else {
            stream.slice(need[0] - 1, 0)?
        };
        for t in 0..levels {
            let keep = need[t as usize + 1];
            let shifted = cur.shr((1u32 << t) * (n - 1)).slice(keep - 1, 0)?;
            let same = cur.slice(keep - 1, 0)?;
            cur = wire(
                m,
                &format!("{name}_r{t}"),
                Expr::mux(&e.bit(t)?, &shifted, &same)?,
            )?;
        }
        cur
    } else {
        stream.slice(right_w - 1, 0)?
    };
    let mut out = unpack_fixed(m, &format!("{name}l"), &left, &es[..mid], n)?;
    out.extend(unpack_fixed(m, &format!("{name}r"), &right, &es[mid..], n)?);
    Ok(out)
}

/// `a · b` of two small unsigned values, `width` bits (a sum of the
/// partial products, one per bit of `a`).
pub fn mul_var(a: &Expr, b: &Expr, width: u32) -> Result<Expr, IrError> {
    let bw = b.resize(width)?;
    let terms: Vec<Expr> = (0..a.width().min(width))
        .map(|t| Expr::mux(&a.bit(t)?, &bw.shl(t), &k(0, width)?))
        .collect::<Result<_, _>>()?;
    sum(&terms, width)
}

/// The number of groups of `es` whose ES bit is clear.
pub fn clear_count(es: &[Expr]) -> Result<Expr, IrError> {
    let clear: Vec<Expr> = es.iter().map(Expr::not).collect();
    popcount(&clear)
}

/// [`pack_fixed`] for fields of a variable length `nlen` (`nm1` =
/// `nlen − 1`, `nlen` at most `n`, the fields' width; `nm1` is read only
/// where some field has ES clear, so `nlen = 0` may give any `nm1`): a
/// merge places its right part at the offset of an all-ES left part (its
/// group count) and moves it towards the LSB by `j·(nlen−1)` (`j`: ES bits
/// clear in the left part), a product of two counts computed beside the
/// data path.
pub fn pack_var(
    m: &mut Module,
    name: &str,
    fields: Vec<Expr>,
    es: &[Expr],
    nm1: &Expr,
    n: u32,
) -> Result<Expr, IrError> {
    let parts = fields
        .into_iter()
        .enumerate()
        .map(|(i, f)| Part {
            data: f,
            first: i,
            groups: 1,
        })
        .collect();
    let mut parts = pack_var_levels(m, name, parts, es, None, nm1, n, 0, usize::MAX)?;
    parts.pop().map(|p| p.data).ok_or(IrError::EmptyConcat)
}

/// A packed run of fields: its MSB-aligned data (`groups·n` bits), its
/// first group and its number of groups.
#[derive(Clone)]
pub struct Part {
    pub data: Expr,
    pub first: usize,
    pub groups: usize,
}

/// The merge levels `depth..depth + levels` of [`pack_var`] (at most
/// until one part is left) on `parts`, adjacent runs of groups, `es` the
/// ES bits of every group; the levels' wires are `<name><level>_<idx>_*`.
/// `counts`: the numbers of ES bits clear of runs of groups (first,
/// groups, count) that the left parts are unions of, summed instead of
/// counting `es` again.
#[allow(clippy::too_many_arguments)]
pub fn pack_var_levels(
    m: &mut Module,
    name: &str,
    parts: Vec<Part>,
    es: &[Expr],
    counts: Option<&[(usize, usize, Expr)]>,
    nm1: &Expr,
    n: u32,
    depth: usize,
    levels: usize,
) -> Result<Vec<Part>, IrError> {
    let mut level = parts;
    let mut depth = depth;
    let mut done = 0;
    while level.len() > 1 && done < levels {
        let mut next = Vec::with_capacity(level.len().div_ceil(2));
        for (idx, pair) in level.chunks(2).enumerate() {
            if pair.len() == 1 {
                next.push(pair[0].clone());
                continue;
            }
            let (a, b) = (&pair[0], &pair[1]);
            let stem = format!("{name}{depth}_{idx}");
            let (wa, wb) = (a.data.width(), b.data.width());
            let ac = a.groups as u32;
            // b right after an all-ES left part (`ac` bits), then moved
            let mut cur = if wa > ac {
                Expr::concat([k(0, ac)?, b.data.clone(), k(0, wa - ac)?])?
            } else {
                Expr::concat([k(0, ac)?, b.data.clone()])?
            };
            if n > 1 {
                let j = match counts {
                    Some(runs) => {
                        let end = a.first + a.groups;
                        let terms: Vec<Expr> = runs
                            .iter()
                            .filter(|(f, g, _)| *f >= a.first && f + g <= end)
                            .map(|(_, _, c)| c.clone())
                            .collect();
                        sum(&terms, bits_for(a.groups as u64))?
                    }
                    None => clear_count(&es[a.first..a.first + a.groups])?,
                };
                let j = wire(m, &format!("{stem}_clear"), j)?;
                let aw = bits_for(a.groups as u64 * (n as u64 - 1));
                let amount = wire(m, &format!("{stem}_shift"), mul_var(&j, nm1, aw)?)?;
                cur = shr_var(m, &format!("{stem}_b"), &cur, &amount)?;
            }
            let data = Expr::concat([a.data.clone(), k(0, wb)?])?.or(&cur)?;
            next.push(Part {
                data: wire(m, &format!("{stem}_data"), data)?,
                first: a.first,
                groups: a.groups + b.groups,
            });
        }
        level = next;
        depth += 1;
        done += 1;
    }
    Ok(level)
}

/// The inverse of [`pack_var`]: each node's right half is the stream read
/// from the offset of an all-ES left half, moved towards the MSB by
/// `j·(nlen−1)` (`j`: ES bits clear in the left half).
pub fn unpack_var(
    m: &mut Module,
    name: &str,
    stream: &Expr,
    es: &[Expr],
    nm1: &Expr,
    n: u32,
) -> Result<Vec<Expr>, IrError> {
    let cnt = es.len();
    let sw = stream.width();
    if cnt == 1 {
        return Ok(vec![stream.slice(sw - 1, sw - n)?]);
    }
    let mid = cnt.div_ceil(2);
    let left = stream.slice(sw - 1, sw - mid as u32 * n)?;
    let right_w = (cnt - mid) as u32 * n;
    let from = stream.shl(mid as u32);
    let right = if n > 1 {
        let j = clear_count(&es[..mid])?;
        let aw = bits_for(mid as u64 * (n as u64 - 1));
        let amount = wire(m, &format!("{name}_shift"), mul_var(&j, nm1, aw)?)?;
        let sh = shl_var_top(m, &format!("{name}_r"), &from, &amount, right_w)?;
        wire(m, &format!("{name}_r"), sh)?
    } else {
        from.slice(sw - 1, sw - right_w)?
    };
    let mut out = unpack_var(m, &format!("{name}l"), &left, &es[..mid], nm1, n)?;
    out.extend(unpack_var(
        m,
        &format!("{name}r"),
        &right,
        &es[mid..],
        nm1,
        n,
    )?);
    Ok(out)
}

/// `seg_count − 1` of the DF-TRUC fields from the critical-sector count
/// `npc` (0 where no sector is critical: every group then has ES set),
/// `width` bits; the constant 0 with one segment per block (no shift).
pub fn seg_count_m1(
    m: &mut Module,
    name: &str,
    npc: &Expr,
    p: &golden::dpc::DpcParams,
    width: u32,
) -> Result<Expr, IrError> {
    if p.segments() == 1 {
        return k(0, width);
    }
    let g = p.sector_segments() as u64;
    let table: Vec<u64> = (0..=p.sectors() as u64)
        .map(|c| (c * g).max(1) - 1)
        .collect();
    wire(m, name, crate::circuits::lookup(npc, &table, width)?)
}

/// The smallest ES count `e` in `0..=groups` whose coded length
/// `coded(e)` is below `raw` (the coded length falls as the count grows,
/// so "coded shorter than raw" is "count at least this"); `None` if none.
pub fn first_below(groups: u64, raw: u64, coded: impl Fn(u64) -> u64) -> Option<u64> {
    (0..=groups).find(|&e| coded(e) < raw)
}

/// DF-TRUC's coded length `W + e + (W − e)·g·c` for the ES count `count`
/// and the critical-sector count `npc` = c (`g` segments per sector), a
/// constant minus a multiple of the count per value of `npc`, one-hot
/// selected; `width` bits.
pub fn truc_coded_len(
    count: &Expr,
    npc: &Expr,
    p: &golden::dpc::DpcParams,
    width: u32,
) -> Result<Expr, IrError> {
    let (w, g) = (p.groups() as u64, p.sector_segments() as u64);
    let e = count.zext(width)?;
    let mut sel = Vec::new();
    let mut vals = Vec::new();
    for c in 0..=p.sectors() as u64 {
        sel.push(npc.cmp_eq(&k(c as u128, npc.width())?)?);
        vals.push(k((w + w * g * c) as u128, width)?.add(&e)?.sub(&mul_const(
            &e,
            g * c,
            width,
        )?)?);
    }
    crate::circuits::onehot_mux(&sel, &vals)
}

/// A run of groups whose fields are still packed in one stream: the
/// stream (MSB-aligned, `groups·n` bits), its first group, its number of
/// groups and the stem of its unpacker's wire names.
#[derive(Clone)]
pub struct Sub {
    pub data: Expr,
    pub first: usize,
    pub groups: usize,
    pub name: String,
}

/// How a node of the unpacker finds its right half: every field 1 or `n`
/// bits (plain DPC), or 1 or `g·c` bits (DF-TRUC: `g` segments per sector,
/// `cm1` = c − 1, clamped at 0; `cm1_max` its largest value).
pub enum Lengths<'a> {
    Fixed,
    Sectors { g: u32, cm1: &'a Expr, cm1_max: u64 },
}

/// The top `keep` bits of `x` shifted towards the MSB by the sum of the
/// `stages`' shifts whose select bit is set (each stage one 2:1 mux level,
/// a named wire `<name><t>` holding only the bits later stages read).
fn shl_stages_top(
    m: &mut Module,
    name: &str,
    x: &Expr,
    stages: &[(Expr, u32)],
    keep: u32,
) -> Result<Expr, IrError> {
    let total: u32 = stages.iter().map(|(_, s)| s).sum();
    let w = x.width() + total;
    // zeros below, so that no stage runs out of bits
    let x = if total > 0 {
        Expr::concat([x.clone(), k(0, total)?])?
    } else {
        x.clone()
    };
    // lo[t]: the lowest bit read of the value before stage t
    let mut lo = vec![w - keep; stages.len() + 1];
    for t in (0..stages.len()).rev() {
        lo[t] = lo[t + 1] - stages[t].1;
    }
    let mut cur = x.slice(w - 1, lo[0])?;
    for (t, (sel, shift)) in stages.iter().enumerate() {
        let cw = cur.width();
        let ow = cw - shift;
        let next = Expr::mux(sel, &cur.slice(ow - 1, 0)?, &cur.slice(cw - 1, *shift)?)?;
        let prev = cur.as_signal().cloned();
        if let Some(sig) = prev {
            if *shift > ow {
                // bits neither the shifted nor the kept value reads
                m.mark_unused(&sig, shift - 1, ow)?;
            }
        }
        cur = if t + 1 < stages.len() {
            wire(m, &format!("{name}{t}"), next)?
        } else {
            next
        };
    }
    Ok(cur)
}

/// The shift selects of one unpacker node, computed from the ES bits of
/// its left half (and the sector count): for fields of 1 or `n` bits the
/// count of ES bits set (`first`); for DF-TRUC's the count `j` of ES bits
/// clear (`first`, none with one segment a sector: it shifts by
/// `j·(g−1)` = 0) and `j·(c−1)` (`second`, none where `c` is at most 1).
#[derive(Clone)]
pub struct NodeSelects {
    pub first: Option<Expr>,
    pub second: Option<Expr>,
}

/// The shift selects of the nodes of an unpacker, by the node's wire
/// stem: computed one stage ahead and registered, so that a stage of the
/// unpacker starts with its mux levels.
pub type Selects = std::collections::BTreeMap<String, NodeSelects>;

/// The selects of the node `name` whose left half is the groups
/// `first..first + mid` (wires `<name>_count`, or `<name>_clear` and
/// `<name>_jc`).
fn node_selects(
    m: &mut Module,
    name: &str,
    es: &[Expr],
    first: usize,
    mid: usize,
    lengths: &Lengths,
) -> Result<NodeSelects, IrError> {
    Ok(match lengths {
        Lengths::Fixed => NodeSelects {
            first: Some(wire(
                m,
                &format!("{name}_count"),
                count(&es[first..first + mid])?,
            )?),
            second: None,
        },
        Lengths::Sectors { g, cm1, cm1_max } => {
            let j = wire(
                m,
                &format!("{name}_clear"),
                clear_count(&es[first..first + mid])?,
            )?;
            let second = if *cm1_max > 0 {
                let jw = bits_for(mid as u64 * cm1_max);
                Some(wire(m, &format!("{name}_jc"), mul_var(&j, cm1, jw)?)?)
            } else {
                None
            };
            NodeSelects {
                first: (*g > 1).then_some(j),
                second,
            }
        }
    })
}

/// The selects of every node [`unpack_split`] visits on `runs` (their
/// data unread) down `levels` levels, where `n > 1` (one segment has no
/// shifts).
pub fn unpack_selects(
    m: &mut Module,
    runs: &[Sub],
    es: &[Expr],
    n: u32,
    lengths: &Lengths,
    levels: usize,
) -> Result<Selects, IrError> {
    #[allow(clippy::too_many_arguments)]
    fn walk(
        m: &mut Module,
        first: usize,
        groups: usize,
        name: &str,
        es: &[Expr],
        lengths: &Lengths,
        levels: usize,
        out: &mut Selects,
    ) -> Result<(), IrError> {
        if groups == 1 || levels == 0 {
            return Ok(());
        }
        let mid = groups.div_ceil(2);
        let sel = node_selects(m, name, es, first, mid, lengths)?;
        out.insert(name.to_string(), sel);
        walk(
            m,
            first,
            mid,
            &format!("{name}l"),
            es,
            lengths,
            levels - 1,
            out,
        )?;
        walk(
            m,
            first + mid,
            groups - mid,
            &format!("{name}r"),
            es,
            lengths,
            levels - 1,
            out,
        )
    }
    let mut out = Selects::new();
    if n > 1 {
        for r in runs {
            walk(m, r.first, r.groups, &r.name, es, lengths, levels, &mut out)?;
        }
    }
    Ok(out)
}

/// `selects` as one bus (every node's first, then second select, in the
/// map's order) and back: [`selects_from_bus`] slices a register of it.
pub fn selects_bus(selects: &Selects) -> Result<Option<Expr>, IrError> {
    let parts: Vec<Expr> = selects
        .values()
        .flat_map(|s| s.first.clone().into_iter().chain(s.second.clone()))
        .collect();
    if parts.is_empty() {
        Ok(None)
    } else {
        Expr::concat(parts).map(Some)
    }
}

/// The selects of the shape of `like` read from `bus` (a register of
/// [`selects_bus`] of it).
pub fn selects_from_bus(like: &Selects, bus: &Expr) -> Result<Selects, IrError> {
    let mut top = bus.width();
    let mut take = |w: u32| -> Result<Expr, IrError> {
        let e = bus.slice(top - 1, top - w)?;
        top -= w;
        Ok(e)
    };
    let mut out = Selects::new();
    for (name, s) in like {
        let first = match &s.first {
            Some(x) => Some(take(x.width())?),
            None => None,
        };
        let second = match &s.second {
            Some(x) => Some(take(x.width())?),
            None => None,
        };
        out.insert(name.clone(), NodeSelects { first, second });
    }
    Ok(out)
}

/// Unpack `sub` down `levels` levels of the tree (each node splitting
/// its groups at half, rounded up): the runs left (a run of one group is
/// its field, its first `n` bits). `es`: every group's ES bit. With
/// `pre` every node shifts by its selects there (computed a stage
/// before; a node missing is an error), else by selects computed here
/// from `es` and `lengths`.
pub fn unpack_split(
    m: &mut Module,
    sub: Sub,
    es: &[Expr],
    n: u32,
    lengths: &Lengths,
    levels: usize,
    pre: Option<&Selects>,
) -> Result<Vec<Sub>, IrError> {
    if sub.groups == 1 || levels == 0 {
        return Ok(vec![sub]);
    }
    let (cnt, first, name) = (sub.groups, sub.first, sub.name.as_str());
    let stream = &sub.data;
    let sw = stream.width();
    let mid = cnt.div_ceil(2);
    let left = stream.slice(sw - 1, sw - mid as u32 * n)?;
    let right_w = (cnt - mid) as u32 * n;
    let right = if n == 1 {
        stream.slice(right_w - 1, 0)?
    } else {
        let sel = match pre {
            Some(pre) => pre
                .get(name)
                .cloned()
                .ok_or_else(|| IrError::InvalidIdentifier {
                    name: name.to_string(),
                    reason: "no shift selects were registered for this unpacker node".to_string(),
                })?,
            None => node_selects(m, name, es, first, mid, lengths)?,
        };
        match lengths {
            Lengths::Fixed => {
                let e = sel.first.ok_or(IrError::EmptyConcat)?;
                let levels = e.width();
                let mut need = vec![right_w; levels as usize + 1];
                for t in (0..levels).rev() {
                    need[t as usize] = need[t as usize + 1] + (1u32 << t) * (n - 1);
                }
                let mut cur = if need[0] > sw {
                    stream.zext(need[0])?
                } else {
                    stream.slice(need[0] - 1, 0)?
                };
                for t in 0..levels {
                    let keep = need[t as usize + 1];
                    let shifted = cur.shr((1u32 << t) * (n - 1)).slice(keep - 1, 0)?;
                    let same = cur.slice(keep - 1, 0)?;
                    cur = wire(
                        m,
                        &format!("{name}_r{t}"),
                        Expr::mux(&e.bit(t)?, &shifted, &same)?,
                    )?;
                }
                cur
            }
            Lengths::Sectors { g, .. } => {
                // left length = mid + j·(g·c − 1) = mid + j·(g − 1) + g·j·(c − 1)
                let mut stages: Vec<(Expr, u32)> = Vec::new();
                if let (true, Some(j)) = (*g > 1, &sel.first) {
                    for t in 0..j.width() {
                        stages.push((j.bit(t)?, (1u32 << t) * (g - 1)));
                    }
                }
                if let Some(jc) = &sel.second {
                    for t in 0..jc.width() {
                        stages.push((jc.bit(t)?, (1u32 << t) * g));
                    }
                }
                let from = stream.shl(mid as u32);
                let sh = shl_stages_top(m, &format!("{name}_r"), &from, &stages, right_w)?;
                wire(m, &format!("{name}_r"), sh)?
            }
        }
    };
    let l = Sub {
        data: left,
        first,
        groups: mid,
        name: format!("{name}l"),
    };
    let r = Sub {
        data: right,
        first: first + mid,
        groups: cnt - mid,
        name: format!("{name}r"),
    };
    let mut out = unpack_split(m, l, es, n, lengths, levels - 1, pre)?;
    out.extend(unpack_split(m, r, es, n, lengths, levels - 1, pre)?);
    Ok(out)
}
