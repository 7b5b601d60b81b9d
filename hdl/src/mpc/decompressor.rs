//! The MPC decompressor (docs/hw/mpc-decompressor.md), four pipeline
//! stages by default (4 to 8 with [`build_staged`]).
//!
//! * Stages 1 to N-1 decode the codes as [`decode_plan`] says (by default
//!   codes 0..5, 6..11 and 12..15): stage 1 reads the header, every decode
//!   stage finds its code starts as one-hot offset chains, decodes each
//!   code from its start, writes its symbol into the slot the symbol count
//!   names, and shifts the stream by the end of its last code. Registers
//!   of a decode stage k: `s<k>_model_id`, `s<k>_error`, `s<k>_symbols`,
//!   and until the checks `s<k>_sym_index` (the count, binary),
//!   `s<k>_used`, `s<k>_consumed`, `s<k>_len`, and `s<k>_stream` while
//!   codes remain; stage 1's stream is also the raw and same-words payload
//!   (`s<k>_payload` after it).
//! * Stage N-1 also inverts the transform: per predictor (wires and XORs)
//!   inverse reorder, inverse XOR, planes to residues; the chosen model's
//!   residues (or the payload bytes) are registered in `s<N-1>_residue`.
//! * Stage N makes the length checks of the last codes (unless they were
//!   made in stage N-1) and restores the block along each predictor's base
//!   trees (adders); the custom models and the output mux: `s<N>_block`,
//!   `s<N>_error`, `s<N>_model`.

use golden::mpc::{ByteRule, ModelSet, Predictor, SYMBOLS};

use super::compressor::LEN_WIDTH;
use super::probes::{Probes, When};
use super::table1::priority;
use super::{DECOMPRESSOR_LATENCY, DECOMPRESSOR_STAGES};
use crate::circuits::{
    bits_for, block_of, byte, eq_const, k, onehot_mux, onehot_to_binary, shl_var_top, wire,
    Pipeline,
};
use crate::ir::{Expr, IrError, Module};
use crate::unit::UnitDescription;

/// Decoder state between decode steps.
#[derive(Clone)]
struct State {
    /// The undecoded payload, its next code at the top (a non-predictor
    /// model's payload is never shifted).
    stream: Expr,
    symbols: Expr,
    index: Expr,
    used: Expr,
    error: Expr,
}

/// A decode stage of at least this many codes finds its even-numbered
/// code starts two codes at a time ([`decode_stage`]).
const PAIRED_FROM: usize = 6;

/// Code lengths of Table 1, in the order the length flags of [`lengths`]
/// use.
const CODE_LENS: [u32; 5] = [17, 7, 4, 8, 12];

/// Which of the five code lengths a code starting with the four bits
/// `top4` (first bit at bit 3) has: `1` 17; `01x` 7; `0011` 4; `0000` 8;
/// `0001`, `0010` 12. One-hot, in [`CODE_LENS`] order.
fn lengths(top4: &Expr) -> Result<Vec<Expr>, IrError> {
    let b3 = top4.bit(3)?;
    let b2 = top4.bit(2)?;
    let low = top4.slice(1, 0)?;
    let z = b3.not().and(&b2.not())?;
    Ok(vec![
        b3.clone(),
        b3.not().and(&b2)?,
        z.and(&eq_const(&low, 0b11)?)?,
        z.and(&eq_const(&low, 0b00)?)?,
        z.and(&low.bit(1)?.xor(&low.bit(0)?)?)?,
    ])
}

/// What one code (its 17-bit head) says: the symbol value, how many
/// symbols it stands for, and whether it is malformed (its length is read
/// by [`lengths`]).
struct Code {
    value: Expr,
    /// One-hot over 0..=15 (0: never set).
    count: Vec<Expr>,
    invalid: Expr,
}

/// Decode the code at the top of `head` (docs/spec/mpc.md section 4).
fn decode(m: &mut Module, name: &str, head: &Expr) -> Result<Code, IrError> {
    let head = wire(m, &format!("{name}_head"), head.clone())?;
    let is_default = head.bit(16)?;
    let top3 = head.slice(16, 14)?;
    let top4 = head.slice(16, 13)?;
    let is_run = eq_const(&top3, 0b010)?;
    let is_single = eq_const(&top3, 0b011)?;
    let is_pair = eq_const(&top4, 0b0000)?;
    let is_front = eq_const(&top4, 0b0001)?;
    let f4 = head.slice(13, 10)?; // run length / single position
    let q_pair = head.slice(12, 9)?;
    let half = head.slice(12, 5)?;
    // symbols the code stands for, one-hot over 1..=15 (bit c-1: c
    // symbols): a run's length field, else 1 (a run of none is malformed,
    // flagged below, and counts nothing)
    let count: Vec<Expr> = (1..16u128)
        .map(|c| {
            let run = is_run.and(&eq_const(&f4, c)?)?;
            Ok(if c == 1 { run.or(&is_run.not())? } else { run })
        })
        .collect::<Result<_, IrError>>()?;
    let count = wire(
        m,
        &format!("{name}_count"),
        Expr::concat(count.into_iter().rev())?,
    )?;
    let count = std::iter::once(Ok(Expr::bool(false)))
        .chain((0..15).map(|c| count.bit(c)))
        .collect::<Result<_, _>>()?;
    let mut single_bits = Vec::with_capacity(16);
    let mut pair_bits = Vec::with_capacity(16);
    for b in (0..16u32).rev() {
        // value bit b is position q = 15 - b
        let q = 15 - b;
        single_bits.push(eq_const(&f4, q as u128)?);
        // two ones at q0, q0+1 set bit b when q0 == q or q0 == q - 1
        let mut hit = if q <= 14 {
            eq_const(&q_pair, q as u128)?
        } else {
            Expr::bool(false)
        };
        if q >= 1 {
            hit = hit.or(&eq_const(&q_pair, (q - 1) as u128)?)?;
        }
        pair_bits.push(hit);
    }
    let value = priority(
        &[
            (is_default, head.slice(15, 0)?),
            (is_single, Expr::concat(single_bits)?),
            (is_pair.clone(), Expr::concat(pair_bits)?),
            (is_front, half.zext(16)?),
            (
                eq_const(&top4, 0b0010)?,
                Expr::concat([half.clone(), k(0, 8)?])?,
            ),
        ],
        k(0, 16)?,
    )?;
    let value = wire(m, &format!("{name}_value"), value)?;
    let invalid = is_run
        .and(&f4.cmp_lt(&k(2, 4)?)?)?
        .or(&is_pair.and(&eq_const(&q_pair, 15)?)?)?;
    Ok(Code {
        value,
        count,
        invalid,
    })
}

/// `w` bits of `stream` from bit `j` on (bit 0 is the top bit), zeros past
/// its end.
fn bits_at(stream: &Expr, j: u32, w: u32) -> Result<Expr, IrError> {
    let ws = stream.width();
    if j >= ws {
        return k(0, w);
    }
    let hi = ws - 1 - j;
    if hi + 1 >= w {
        stream.slice(hi, hi + 1 - w)
    } else {
        Expr::concat([stream.slice(hi, 0)?, k(0, w - hi - 1)?])
    }
}

/// What a decode stage hands on.
struct Decoded {
    state: State,
    /// Bits taken by the stage's codes that count (those of a predictor
    /// model before the 16th symbol).
    consumed: Expr,
}

/// Decode `n` codes, numbered from `first`, from the top of `st.stream`.
///
/// The code lengths are read at every place a code of this stage can
/// start (`dec<n>_lens`: the five length flags at each offset), and the
/// start of each code is a one-hot vector over its possible offsets
/// (`dec<n>_at`, offsets `4i..=17i` for the `i`-th code of the stage),
/// each one AND-OR deep on the one before. So the starts are found in
/// `n` short steps; each code's 17-bit head is then picked by its one-hot
/// start and decoded off that chain. The stream handed on is shifted by
/// the end of the last code in one barrel shifter, keeping its top `keep`
/// bits (none after the last codes); with `hold`, a non-predictor model's
/// stream stays where it is.
fn decode_stage(
    m: &mut Module,
    first: usize,
    n: usize,
    st: &State,
    is_pred: &Expr,
    keep: u32,
    hold: bool,
) -> Result<Decoded, IrError> {
    let stream = &st.stream;
    // length flags at each offset a code of the stage can start
    let max_start = 17 * (n as u32 - 1);
    let mut lens_at: Vec<Vec<Expr>> = Vec::with_capacity(max_start as usize + 1);
    for j in 0..=max_start {
        lens_at.push(lengths(&bits_at(stream, j, 4)?)?);
    }
    // pair[o]: (distance, flag) -- the two codes from offset o together
    // take `distance` bits -- at every offset an even-numbered code of the
    // stage can start (two AND-OR levels on the length flags, off the
    // chain)
    // chain); each offset's flags are a named wire `dec<first>_pair<o>`
    // (bit i: the i-th smallest distance)
    let mut pairs: std::collections::BTreeMap<u32, Vec<(u32, Expr)>> = Default::default();
    let mut pair_at = |m: &mut Module, o: u32| -> Result<Vec<(u32, Expr)>, IrError> {
        if let Some(p) = pairs.get(&o) {
            return Ok(p.clone());
        }
        let mut by_dist: Vec<(u32, Expr)> = Vec::new();
        for (l1, f1) in CODE_LENS.iter().zip(&lens_at[o as usize]) {
            for (l2, f2) in CODE_LENS.iter().zip(&lens_at[(o + l1) as usize]) {
                let term = f1.and(f2)?;
                let d = l1 + l2;
                match by_dist.iter_mut().find(|(e, _)| *e == d) {
                    Some((_, acc)) => *acc = acc.or(&term)?,
                    None => by_dist.push((d, term)),
                }
            }
        }
        by_dist.sort_by_key(|(d, _)| *d);
        let bus = wire(
            m,
            &format!("dec{first}_pair{o}"),
            Expr::concat(by_dist.iter().rev().map(|(_, f)| f.clone()))?,
        )?;
        let wired: Vec<(u32, Expr)> = by_dist
            .iter()
            .enumerate()
            .map(|(i, (d, _))| Ok((*d, bus.bit(i as u32)?)))
            .collect::<Result<_, IrError>>()?;
        pairs.insert(o, wired.clone());
        Ok(wired)
    };
    // starts[i]: (first offset, one-hot over offsets first..). In a stage
    // of six or more codes an even code's start comes from the start two
    // codes before by the pair lengths, an odd one's from the start just
    // before by the single lengths: the chain to the `i`-th start is about
    // i/2 steps deep. With fewer codes every start comes from the one
    // before (the wider pair steps measured no faster there).
    let paired = n >= PAIRED_FROM;
    let mut starts: Vec<(u32, Vec<Expr>)> = vec![(0, vec![Expr::bool(true)])];
    for i in 0..n {
        let two = paired && i % 2 == 1;
        let (lo, flags) = if two { &starts[i - 1] } else { &starts[i] };
        let (lo, hi) = (*lo, lo + flags.len() as u32 - 1);
        let (nlo, nhi) = if two {
            (lo + 8, hi + 34)
        } else {
            (lo + 4, hi + 17)
        };
        let mut next: Vec<Option<Expr>> = vec![None; (nhi - nlo + 1) as usize];
        for (o, f) in flags.iter().enumerate() {
            let at = lo + o as u32;
            let steps: Vec<(u32, Expr)> = if two {
                pair_at(m, at)?
            } else {
                CODE_LENS
                    .iter()
                    .copied()
                    .zip(lens_at[at as usize].iter().cloned())
                    .collect()
            };
            for (l, t) in steps {
                let term = f.and(&t)?;
                let slot = &mut next[(at + l - nlo) as usize];
                *slot = Some(match slot.take() {
                    Some(acc) => acc.or(&term)?,
                    None => term,
                });
            }
        }
        let next: Vec<Expr> = next
            .into_iter()
            .map(|t| t.unwrap_or_else(|| Expr::bool(false)))
            .collect();
        // one named bus per code: bit o is offset nlo + o
        let name = if i + 1 < n {
            format!("dec{}_at", first + i + 1)
        } else {
            format!("dec{}_end", first + i)
        };
        let bus = wire(m, &name, Expr::concat(next.iter().rev().cloned())?)?;
        let flags = (0..next.len() as u32)
            .map(|b| bus.bit(b))
            .collect::<Result<_, _>>()?;
        starts.push((nlo, flags));
    }
    // binary offset of each start (and of the end)
    let pw = LEN_WIDTH;
    let offset_of = |(lo, flags): &(u32, Vec<Expr>)| -> Result<Expr, IrError> {
        let vals: Vec<Expr> = (0..flags.len() as u32)
            .map(|o| k((lo + o) as u128, pw))
            .collect::<Result<_, _>>()?;
        onehot_mux(flags, &vals)
    };

    let mut symbols = st.symbols.clone();
    // the symbol count, one-hot over 0..=16 (16: all symbols decoded)
    let mut index: Vec<Expr> = (0..16u128)
        .map(|j| eq_const(&st.index, j))
        .chain([st.index.cmp_ge(&k(16, 5)?)])
        .collect::<Result<_, _>>()?;
    let mut error = st.error.clone();
    let mut actives = Vec::with_capacity(n);
    for (i, (lo, flags)) in starts.iter().take(n).enumerate() {
        let c = first + i;
        let heads: Vec<Expr> = (0..flags.len() as u32)
            .map(|o| bits_at(stream, lo + o, 17))
            .collect::<Result<_, _>>()?;
        let code = decode(m, &format!("dec{c}"), &onehot_mux(flags, &heads)?)?;
        let active = wire(m, &format!("dec{c}_active"), is_pred.and(&index[16].not())?)?;
        // the next count: this one moved on by the code's symbols, all at
        // or past 16 in one place; past 16 is an overflow
        let mut next: Vec<Option<Expr>> = vec![None; 17];
        let mut overflow: Option<Expr> = None;
        // every code before this one stood for at least one symbol (a run
        // of none is malformed and flagged), so the count is at least `c`
        // here: counts below `c`, and a code of no symbols, can only follow
        // an error and are left out
        for (from, f) in index.iter().take(16).enumerate().skip(c) {
            for (cnt, g) in code.count.iter().enumerate().skip(1) {
                let term = f.and(g)?;
                let to = from + cnt;
                let slot = if to > 16 {
                    &mut overflow
                } else {
                    &mut next[to.min(16)]
                };
                *slot = Some(match slot.take() {
                    Some(acc) => acc.or(&term)?,
                    None => term,
                });
            }
        }
        next[16] = Some(match next[16].take() {
            Some(acc) => acc.or(&index[16])?,
            None => index[16].clone(),
        });
        let next: Vec<Expr> = next
            .into_iter()
            .map(|t| t.unwrap_or_else(|| Expr::bool(false)))
            .collect();
        let overflow = overflow.unwrap_or_else(|| Expr::bool(false));
        let bad = wire(
            m,
            &format!("dec{c}_bad"),
            active.and(&code.invalid.or(&overflow)?)?,
        )?;
        // write the value into symbol slot `index`
        let mut slots = Vec::with_capacity(SYMBOLS);
        // (slots below `c` are written by earlier codes only)
        for (s, at) in index.iter().take(SYMBOLS).enumerate() {
            let hi = 255 - 16 * s as u32;
            let old = symbols.slice(hi, hi - 15)?;
            if s < c {
                slots.push(old);
                continue;
            }
            let here = is_pred.and(at)?;
            slots.push(old.or(&code.value.and(&here.repeat(16)?)?)?);
        }
        symbols = wire(m, &format!("dec{c}_symbols"), Expr::concat(slots)?)?;
        // (a non-predictor model moves the count too: nothing reads it)
        // the count after this code is at least c + 1 (bit o of the bus:
        // count c + 1 + o)
        index = if i + 1 < n {
            let bus = wire(
                m,
                &format!("dec{c}_index"),
                Expr::concat(next.iter().skip(c + 1).rev().cloned())?,
            )?;
            (0..=c)
                .map(|_| Ok(Expr::bool(false)))
                .chain((0..(16 - c) as u32).map(|o| bus.bit(o)))
                .collect::<Result<_, _>>()?
        } else {
            next
        };
        error = wire(m, &format!("dec{c}_error"), error.or(&bad)?)?;
        actives.push(active);
    }
    // the count in binary for the stage register
    let index = onehot_to_binary(&index, 5)?;
    // the bits consumed end where the last counting code ends
    let mut sel = Vec::with_capacity(n + 1);
    let mut ends = Vec::with_capacity(n + 1);
    for (i, start) in starts.iter().enumerate() {
        let after_counting = if i == 0 {
            Expr::bool(true)
        } else {
            actives[i - 1].clone()
        };
        let stops = match actives.get(i) {
            Some(a) => a.not(),
            None => Expr::bool(true),
        };
        sel.push(after_counting.and(&stops)?);
        ends.push(offset_of(start)?);
    }
    let consumed = wire(
        m,
        &format!("dec{}_consumed", first + n - 1),
        onehot_mux(&sel, &ends)?,
    )?;
    let next_stream = if keep == 0 {
        k(0, 1)?
    } else if hold {
        // stage 1: the stream is also the raw and same-words payload, so a
        // non-predictor model's stays where it is
        let aw = bits_for(17 * n as u64);
        let end = ends[n].slice(aw - 1, 0)?;
        let amount = wire(
            m,
            &format!("dec{}_shift", first + n - 1),
            end.and(&is_pred.repeat(aw)?)?,
        )?;
        let name = format!("dec{}_stream", first + n - 1);
        let shifted = shl_var_top(m, &name, stream, &amount, keep)?;
        wire(m, &name, shifted)?
    } else {
        // the end lies in lo..=17n: a constant shift by lo (wires), then a
        // barrel shifter for the rest
        let (lo, flags) = &starts[n];
        let rest = 17 * n as u32 - lo;
        let aw = bits_for(rest as u64);
        let vals: Vec<Expr> = (0..flags.len() as u32)
            .map(|o| k(o as u128, aw))
            .collect::<Result<_, _>>()?;
        let amount = wire(
            m,
            &format!("dec{}_shift", first + n - 1),
            onehot_mux(flags, &vals)?,
        )?;
        let ws = stream.width();
        let pre = Expr::concat([stream.slice(ws - 1 - lo, 0)?, k(0, *lo)?])?;
        let name = format!("dec{}_stream", first + n - 1);
        let shifted = shl_var_top(m, &name, &pre, &amount, keep)?;
        wire(m, &name, shifted)?
    };
    Ok(Decoded {
        state: State {
            stream: next_stream,
            symbols,
            index,
            used: st.used.clone(),
            error,
        },
        consumed,
    })
}

/// The checks after the last code: a predictor's codes stand for exactly
/// 16 symbols, and the bits used (`used`: header and codes) are `len`;
/// zero-block, same-words and raw (`kinds`, in that order) take H, H+32
/// and H+256 bits.
fn length_checks(
    h: u32,
    used: &Expr,
    index: &Expr,
    len: &Expr,
    is_pred: &Expr,
    kinds: [&Expr; 3],
) -> Result<Expr, IrError> {
    let [zero, same, raw] = kinds;
    let expected_len = priority(
        &[
            (zero.clone(), k(h as u128, LEN_WIDTH)?),
            (same.clone(), k(h as u128 + 32, LEN_WIDTH)?),
            (raw.clone(), k(h as u128 + 256, LEN_WIDTH)?),
        ],
        used.clone(),
    )?;
    let incomplete = is_pred.and(&index.cmp_ne(&k(16, 5)?)?)?;
    incomplete.or(&expected_len.cmp_ne(len)?)
}

/// How many codes each stage of a `stages`-stage decompressor decodes
/// (stages 1 to `stages - 1`; the inverse transform is in stage
/// `stages - 1`, after that stage's codes if it has any). The length checks
/// are made in the stage after the last codes.
pub fn decode_plan(stages: usize) -> Vec<usize> {
    match stages {
        4 => vec![6, 6, 4],
        5 => vec![5, 5, 4, 2],
        _ => {
            // evenly over stages 1..stages-2, the earlier stages taking the
            // remainder; nothing decoded in the inverse-transform stage
            let d = stages - 2;
            let mut plan: Vec<usize> = (0..d)
                .map(|i| SYMBOLS / d + usize::from(i < SYMBOLS % d))
                .collect();
            plan.push(0);
            plan
        }
    }
}

/// Stage-3 inverse transform of one predictor: symbols -> residues.
#[allow(clippy::too_many_arguments)]
fn inverse_transform(
    m: &mut Module,
    probes: &mut Probes,
    stage: usize,
    p: usize,
    id: u32,
    pr: &Predictor,
    symbols: &Expr,
) -> Result<Expr, IrError> {
    let when = When::Model(id);
    // natural index n comes from stream position o where reorder[o] = n
    let mut position = [0u32; 256];
    for (o, &n) in pr.reorder.iter().enumerate() {
        position[n as usize] = o as u32;
    }
    let mut xbits = Vec::with_capacity(256);
    for q in (0..8u32).rev() {
        for j in (0..32u32).rev() {
            let n = 32 * (7 - q) + j;
            xbits.push(symbols.bit(255 - position[n as usize])?);
        }
    }
    let xored = probes.wire(
        m,
        stage,
        &format!("inv_xored_p{p}"),
        Expr::concat(xbits)?,
        "xored",
        when,
    )?;
    // planes from the top: Pq = Xq ^ X(q+1) ^ ... ^ X7, as a log-depth
    // suffix XOR (three XOR levels, not a chain of seven): after the level
    // with span s, acc[q] holds Xq ^ ... ^ X(min(q+2s-1, 7))
    let mut acc: Vec<Expr> = (0..8u32)
        .map(|q| xored.slice(32 * q + 31, 32 * q))
        .collect::<Result<_, _>>()?;
    for span in [1usize, 2, 4] {
        let prev = acc.clone();
        for q in 0..8 - span {
            acc[q] = prev[q].xor(&prev[q + span])?;
        }
    }
    let mut planes: Vec<Expr> = vec![k(0, 32)?; 8];
    planes[7] = acc[7].clone();
    for q in (0..7u32).rev() {
        planes[q as usize] = probes.wire(
            m,
            stage,
            &format!("inv_plane{q}_p{p}"),
            acc[q as usize].clone(),
            &format!("planes[{q}]"),
            when,
        )?;
    }
    let mut bytes = Vec::with_capacity(32);
    for j in 0..32u32 {
        let bits: Vec<Expr> = (0..8)
            .rev()
            .map(|q| planes[q].bit(j))
            .collect::<Result<_, _>>()?;
        bytes.push(Expr::concat(bits)?);
    }
    probes.wire(
        m,
        stage,
        &format!("inv_residue_p{p}"),
        block_of(bytes)?,
        "residue",
        when,
    )
}

/// Stage-4 restoration of one predictor's block from its residues.
fn restore(
    m: &mut Module,
    probes: &mut Probes,
    stage: usize,
    p: usize,
    id: u32,
    pr: &Predictor,
    residue: &Expr,
) -> Result<Expr, IrError> {
    let order = golden::mpc::transform::restore_order(pr);
    let is_base: Vec<bool> = (0..32)
        .map(|j| {
            pr.bytes
                .iter()
                .any(|r| matches!(r, ByteRule::Base { base, .. } if *base as usize == j))
        })
        .collect();
    let mut out: Vec<Option<Expr>> = vec![None; 32];
    for &j in &order {
        let r = byte(residue, j)?;
        let v = match pr.bytes[j] {
            ByteRule::Root => r,
            ByteRule::Base { base, shift } => {
                let b = out[base as usize].clone().ok_or(IrError::EmptyConcat)?;
                let pred = if shift >= 0 {
                    b.shl(shift as u32)
                } else {
                    b.shr((-shift) as u32)
                };
                r.add(&pred)?
            }
        };
        // bases get a named wire so their value is computed once
        out[j] = Some(if is_base[j] {
            wire(m, &format!("restored_p{p}_b{j}"), v)?
        } else {
            v
        });
    }
    let bytes: Vec<Expr> = out
        .into_iter()
        .map(|b| b.ok_or(IrError::EmptyConcat))
        .collect::<Result<_, _>>()?;
    probes.wire(
        m,
        stage,
        &format!("restored_p{p}"),
        block_of(bytes)?,
        "block",
        When::Model(id),
    )
}

/// Build `mpc_decompressor` for a model set.
pub fn build(set: &ModelSet) -> Result<Module, IrError> {
    Ok(build_described(set)?.0)
}

/// Build `mpc_decompressor` for a model set, with its description (stage probes
/// included), at the default depth.
pub fn build_described(set: &ModelSet) -> Result<(Module, UnitDescription), IrError> {
    build_staged(set, DECOMPRESSOR_LATENCY as usize)
}

/// Build `mpc_decompressor` with `stages` pipeline stages
/// ([`DECOMPRESSOR_STAGES`]): the codes are decoded over the first
/// stages as [`decode_plan`] says, then come the inverse transform and
/// the restoration, one stage each.
pub fn build_staged(set: &ModelSet, stages: usize) -> Result<(Module, UnitDescription), IrError> {
    super::check_stages("decompressor pipeline stages", stages, &DECOMPRESSOR_STAGES)?;
    let mut probes = Probes::default();
    let h = set.header_bits();
    let wbits = set.max_bits();
    let mut m = Module::new("mpc_decompressor")?;
    m.clock("clk")?;
    m.reset("rst")?;
    let in_valid = m.input("in_valid", 1)?.expr();
    let in_ready = m.output("in_ready", 1)?;
    let in_bits = m.input("in_bits", wbits)?.expr();
    let in_len = m.input("in_len", LEN_WIDTH)?.expr();
    let out_valid = m.output("out_valid", 1)?;
    let out_ready = m.input("out_ready", 1)?.expr();
    let out_block = m.output("out_block", 256)?;
    let out_error = m.output("out_error", 1)?;
    let out_model = m.output("out_model", h)?;
    let pipe = Pipeline::new(&mut m, stages, &in_valid, &out_ready)?;
    m.assign(&in_ready, pipe.enable[0].clone())?;
    m.assign(&out_valid, pipe.valid[stages - 1].expr())?;

    // model-ID decode helpers on any stage's id register
    let kind_flags = |m: &mut Module,
                      id: &Expr,
                      stage: usize|
     -> Result<(Vec<Expr>, Expr, Expr, Expr), IrError> {
        let preds: Vec<Expr> = (0..set.predictors.len())
            .map(|p| {
                wire(
                    m,
                    &format!("s{stage}_is_p{p}"),
                    eq_const(id, set.predictor_id(p) as u128)?,
                )
            })
            .collect::<Result<_, _>>()?;
        let flag = |id_of: Option<u32>| -> Result<Expr, IrError> {
            match id_of {
                Some(v) => eq_const(id, v as u128),
                None => Ok(Expr::bool(false)),
            }
        };
        let zero = flag(set.zero_block_id())?;
        let same = flag(set.same_words_id())?;
        let raw = flag(Some(set.raw_id()))?;
        Ok((preds, zero, same, raw))
    };

    let plan = decode_plan(stages);
    let inv = stages - 1;
    let first_title = |s: usize, from: usize, to: usize, checks: bool| -> String {
        let mut t = if s == 1 {
            "header, ".to_string()
        } else {
            String::new()
        };
        if to > from {
            t.push_str(&format!("codes {from}..{}", to - 1));
        }
        if checks {
            t.push_str(", length checks");
        }
        if s == inv {
            t.push_str(if t.is_empty() { "" } else { ", " });
            t.push_str("inverse transforms, residue select");
        }
        t
    };
    let checks_at = plan.iter().rposition(|&c| c > 0).map_or(1, |i| i + 2);
    pipe.stage(&mut m, 1, &first_title(1, 0, plan[0], checks_at == 1))?;
    let id = probes.wire(
        &mut m,
        1,
        "header_id",
        in_bits.slice(wbits - 1, wbits - h)?,
        "header",
        When::Always,
    )?;
    let bad_id = if (1u64 << h) > set.id_count() as u64 {
        id.cmp_gt(&k(set.raw_id() as u128, h)?)?
    } else {
        Expr::bool(false)
    };
    let too_long = in_len.cmp_gt(&k(wbits as u128, LEN_WIDTH)?)?;
    let mut st = State {
        stream: in_bits.slice(wbits - h - 1, 0)?,
        symbols: k(0, 256)?,
        index: k(0, 5)?,
        used: k(h as u128, LEN_WIDTH)?,
        error: bad_id.or(&too_long)?,
    };
    // what each stage receives from the one before
    let mut model_id = id;
    let mut len = in_len;
    let mut payload = st.stream.clone();
    let mut code = 0usize;
    let mut inv_flags = None;
    for s in 1..=inv {
        if s > 1 {
            let to = code + plan[s - 1];
            pipe.stage(&mut m, s, &first_title(s, code, to, checks_at == s))?;
        }
        let (preds, zero, same, raw) = kind_flags(&mut m, &model_id, s - 1)?;
        let n = plan[s - 1];
        let any_pred = preds
            .iter()
            .skip(1)
            .try_fold(preds[0].clone(), |a, b| a.or(b))?;
        // a stage with no codes and no checks has no use for it
        let is_pred = if n > 0 || s == checks_at {
            wire(&mut m, &format!("s{}_is_predictor", s - 1), any_pred)?
        } else {
            any_pred
        };
        let mut consumed = k(0, LEN_WIDTH)?;
        if n > 0 {
            let remaining = SYMBOLS - code - n;
            // stage 1's stream is also the payload of raw and same-words
            let keep = if s == 1 {
                st.stream.width()
            } else {
                (17 * remaining as u32).min(st.stream.width())
            };
            let d = decode_stage(&mut m, code, n, &st, &is_pred, keep, s == 1)?;
            st = d.state;
            consumed = d.consumed;
            code += n;
        }
        if s == checks_at {
            let bad = length_checks(h, &st.used, &st.index, &len, &is_pred, [&zero, &same, &raw])?;
            st.error = wire(&mut m, &format!("s{s}_error_d"), st.error.or(&bad)?)?;
        }
        if s == inv {
            inv_flags = Some((preds, same, raw, consumed));
            break;
        }
        // registers into stage s + 1
        let decoding = code < SYMBOLS;
        let with = decoding.then_some("sym_index");
        let r_model = pipe.reg(&mut m, s, "model_id", model_id)?;
        let r_error = pipe.reg(&mut m, s, "error", st.error.clone())?;
        let r_symbols = pipe.reg(&mut m, s, "symbols", st.symbols.clone())?;
        let r_payload = if s == 1 {
            pipe.reg(&mut m, s, "stream", st.stream.clone())?
        } else {
            pipe.reg(&mut m, s, "payload", payload.clone())?
        };
        if s < checks_at {
            let r_stream = if !decoding {
                st.stream.clone()
            } else if s == 1 {
                r_payload.clone()
            } else {
                pipe.reg(&mut m, s, "stream", st.stream.clone())?
            };
            // bits used before this stage's codes, and the bits they took
            let r_used = if s == 1 {
                st.used.clone()
            } else {
                pipe.reg(&mut m, s, "used", st.used.clone())?
            };
            let r_consumed = pipe.reg(&mut m, s, "consumed", consumed)?;
            let r_index = pipe.reg(&mut m, s, "sym_index", st.index.clone())?;
            let r_len = pipe.reg(&mut m, s, "len", len.clone())?;
            probes.record_reg(&m, s, "len", "len", When::Always, None)?;
            st = State {
                stream: r_stream,
                symbols: r_symbols,
                index: r_index.clone(),
                used: wire(&mut m, &format!("s{s}_used_next"), r_used.add(&r_consumed)?)?,
                error: r_error,
            };
            len = r_len;
        } else {
            st.symbols = r_symbols;
            st.error = r_error;
        }
        for (name, mirrors, when, w) in [
            ("model_id", "model_id", When::Accepted, None),
            ("error", "error", When::Accepted, None),
            ("symbols", "symbols", When::Predictor, with),
        ] {
            probes.record_reg(&m, s, name, mirrors, when, w)?;
        }
        model_id = r_model;
        payload = r_payload;
    }

    let (preds2, same2, raw2, consumed) = inv_flags.ok_or(IrError::EmptyConcat)?;
    let s2_symbols = st.symbols.clone();
    let s2_payload = payload;
    let s2_error = st.error.clone();
    let s2_model_id = model_id;
    let residues: Vec<Expr> = set
        .predictors
        .iter()
        .enumerate()
        .map(|(p, pr)| {
            inverse_transform(
                &mut m,
                &mut probes,
                inv,
                p,
                set.predictor_id(p),
                pr,
                &s2_symbols,
            )
        })
        .collect::<Result<_, _>>()?;
    // payload bytes: byte j = payload[255-8j : 248-8j]
    let payload_bytes: Vec<Expr> = (0..32u32)
        .map(|j| s2_payload.slice(255 - 8 * j, 248 - 8 * j))
        .collect::<Result<_, _>>()?;
    let payload_block = wire(&mut m, "payload_block", block_of(payload_bytes)?)?;
    let mut sel = preds2.clone();
    let mut vals = residues;
    sel.push(raw2.or(&same2)?);
    vals.push(payload_block);
    let residue = onehot_mux(&sel, &vals)?;
    let s3_residue = pipe.reg(&mut m, inv, "residue", residue)?;
    let s3_model_id = pipe.reg(&mut m, inv, "model_id", s2_model_id)?;
    let s3_error = pipe.reg(&mut m, inv, "error", s2_error)?;
    // the checks of the last codes come one stage later
    let check_in = if checks_at > inv {
        let used = pipe.reg(&mut m, inv, "used", st.used.clone())?;
        let consumed = pipe.reg(&mut m, inv, "consumed", consumed)?;
        let index = pipe.reg(&mut m, inv, "sym_index", st.index.clone())?;
        let len = pipe.reg(&mut m, inv, "len", len.clone())?;
        probes.record_reg(&m, inv, "len", "len", When::Always, None)?;
        Some((used, consumed, index, len))
    } else {
        None
    };
    for (name, mirrors, when) in [
        ("residue", "residue", When::Predictor),
        // raw: the payload bytes are the block
        ("residue", "block", When::Model(set.raw_id())),
        ("model_id", "model_id", When::Accepted),
        ("error", "error", When::Accepted),
    ] {
        probes.record_reg(&m, inv, name, mirrors, when, None)?;
    }

    pipe.stage(&mut m, stages, "restoration, custom models, output")?;
    let (preds3, zero3, same3, raw3) = kind_flags(&mut m, &s3_model_id, inv)?;
    let s3_error = match check_in {
        Some((used, consumed, index, len)) => {
            let is_pred = wire(
                &mut m,
                &format!("s{inv}_is_predictor"),
                preds3
                    .iter()
                    .skip(1)
                    .try_fold(preds3[0].clone(), |a, b| a.or(b))?,
            )?;
            let used = wire(&mut m, &format!("s{inv}_used_next"), used.add(&consumed)?)?;
            let bad = length_checks(h, &used, &index, &len, &is_pred, [&zero3, &same3, &raw3])?;
            wire(&mut m, &format!("s{stages}_error_d"), s3_error.or(&bad)?)?
        }
        None => s3_error,
    };
    let mut sel = Vec::new();
    let mut vals = Vec::new();
    for (p, pr) in set.predictors.iter().enumerate() {
        sel.push(preds3[p].clone());
        vals.push(restore(
            &mut m,
            &mut probes,
            stages,
            p,
            set.predictor_id(p),
            pr,
            &s3_residue,
        )?);
    }
    sel.push(raw3);
    vals.push(s3_residue.clone());
    sel.push(same3);
    vals.push(s3_residue.slice(31, 0)?.repeat(8)?);
    let ok = s3_error.not();
    let block = onehot_mux(&sel, &vals)?.and(&ok.repeat(256)?)?;
    let s4_block = pipe.reg(&mut m, stages, "block", block)?;
    let s4_error = pipe.reg(&mut m, stages, "error", s3_error)?;
    let s4_model = pipe.reg(&mut m, stages, "model", s3_model_id)?;
    for (name, mirrors, when) in [
        // all zero when the golden model rejects the input
        ("block", "block", When::Always),
        ("error", "error", When::Always),
        ("model", "model_id", When::Accepted),
    ] {
        probes.record_reg(&m, stages, name, mirrors, when, None)?;
    }
    m.assign(&out_block, s4_block)?;
    m.assign(&out_error, s4_error)?;
    m.assign(&out_model, s4_model)?;
    let unit = pipe.describe(&m, probes.list);
    Ok((m, unit))
}
