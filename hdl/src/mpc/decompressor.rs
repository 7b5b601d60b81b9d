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

use golden::mpc::program::{Form, ReorderClass};
use golden::mpc::{ByteRule, ModelSet, Predictor, BLOCK_BYTES, STREAM_BITS, SYMBOLS};

use super::compressor::{symbol, LEN_WIDTH};
use super::probes::{Mirror, Probes, StageProbe, When};
use super::slots::{self, ConfigBlock, ConfigOutputs, ConfigPorts, Ids, SlotSpec};
use super::table1::{
    priority, DEFAULT_LEN, HALF_LEN, PAIR_LEN, RUN_LEN, SINGLE_LEN, SLOT, SYMBOL_BITS, ZERO_LEN,
};
use super::{DECOMPRESSOR_LATENCY, DECOMPRESSOR_STAGES};
use crate::circuits::{
    bits_for, block_of, byte, eq_const, k, onehot_mux, onehot_to_binary, popcount, shl_var_top,
    wire,
};
use crate::ir::{Expr, IrError, Module, Reset};
use crate::stream::StreamUnit;
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
/// use (a run and a single 1 share `01x`, and so one length).
const CODE_LENS: [u32; 5] = [DEFAULT_LEN, SINGLE_LEN, ZERO_LEN, PAIR_LEN, HALF_LEN];
const _: () = assert!(RUN_LEN == SINGLE_LEN);

/// The shortest code.
const MIN_LEN: u32 = ZERO_LEN;

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
    let mut single_bits = Vec::with_capacity(SYMBOL_BITS as usize);
    let mut pair_bits = Vec::with_capacity(SYMBOL_BITS as usize);
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
            (is_front, half.zext(SYMBOL_BITS)?),
            (
                eq_const(&top4, 0b0010)?,
                Expr::concat([half.clone(), k(0, 8)?])?,
            ),
        ],
        k(0, SYMBOL_BITS)?,
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
/// bits (none after the last codes); with `hold` (stage 1), a
/// non-predictor model's stream stays where it is, and `hold` gives the
/// first code's start, one-hot from offset 0 (one flag, true, without
/// slots).
fn decode_stage(
    m: &mut Module,
    first: usize,
    n: usize,
    st: &State,
    is_pred: &Expr,
    keep: u32,
    hold: Option<&[Expr]>,
) -> Result<Decoded, IrError> {
    let one = [Expr::bool(true)];
    let init = hold.unwrap_or(&one);
    // length flags at each offset a code of the stage can start
    let max_start = SLOT * (n as u32 - 1) + init.len() as u32 - 1;
    let lens_at: Vec<Vec<Expr>> = (0..=max_start)
        .map(|j| lengths(&bits_at(&st.stream, j, 4)?))
        .collect::<Result<_, _>>()?;
    let starts = code_starts(m, first, n, &lens_at, init)?;
    let mut progress = Progress {
        symbols: st.symbols.clone(),
        // the symbol count, one-hot over 0..=16 (16: all symbols decoded)
        index: (0..SYMBOLS as u128)
            .map(|j| eq_const(&st.index, j))
            .chain([st.index.cmp_ge(&k(SYMBOLS as u128, 5)?)])
            .collect::<Result<_, _>>()?,
        error: st.error.clone(),
    };
    let mut actives = Vec::with_capacity(n);
    for (i, start) in starts.iter().take(n).enumerate() {
        let (next, active) = decode_code(
            m,
            first + i,
            i + 1 == n,
            &st.stream,
            start,
            is_pred,
            progress,
        )?;
        progress = next;
        actives.push(active);
    }
    // the count in binary for the stage register
    let index = onehot_to_binary(&progress.index, 5)?;
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
    let last = first + n - 1;
    let consumed = wire(m, &format!("dec{last}_consumed"), onehot_mux(&sel, &ends)?)?;
    let next_stream = if keep == 0 {
        k(0, 1)?
    } else if hold.is_some() {
        // stage 1: the stream is also the raw and same-words payload, so a
        // non-predictor model's stays where it is (after the header: by
        // the first code's start when that varies)
        let aw = bits_for((SLOT * n as u32) as u64 + init.len() as u64 - 1);
        let end = ends[n].slice(aw - 1, 0)?;
        let amount = if init.len() == 1 {
            end.and(&is_pred.repeat(aw)?)?
        } else {
            let offsets: Vec<Expr> = (0..init.len())
                .map(|o| k(o as u128, aw))
                .collect::<Result<_, _>>()?;
            Expr::mux(is_pred, &end, &onehot_mux(init, &offsets)?)?
        };
        let amount = wire(m, &format!("dec{last}_shift"), amount)?;
        let name = format!("dec{last}_stream");
        let shifted = shl_var_top(m, &name, &st.stream, &amount, keep)?;
        wire(m, &name, shifted)?
    } else {
        shift_past(m, last, &st.stream, &starts[n], SLOT * n as u32, keep)?
    };
    Ok(Decoded {
        state: State {
            stream: next_stream,
            symbols: progress.symbols,
            index,
            used: st.used.clone(),
            error: progress.error,
        },
        consumed,
    })
}

/// The start of a code: its first possible offset and a one-hot vector
/// over the offsets from there.
type Start = (u32, Vec<Expr>);

/// The binary offset (`LEN_WIDTH` bits) of a one-hot start.
fn offset_of((lo, flags): &Start) -> Result<Expr, IrError> {
    let vals: Vec<Expr> = (0..flags.len() as u32)
        .map(|o| k((lo + o) as u128, LEN_WIDTH))
        .collect::<Result<_, _>>()?;
    onehot_mux(flags, &vals)
}

/// `stream` shifted up past the end `end` of the last code (which lies
/// in `end.0..=max`): a constant shift by `end.0` (wires), then a barrel
/// shifter for the rest; the top `keep` bits (`dec<last>_stream`).
fn shift_past(
    m: &mut Module,
    last: usize,
    stream: &Expr,
    end: &Start,
    max: u32,
    keep: u32,
) -> Result<Expr, IrError> {
    let (lo, flags) = end;
    let aw = bits_for((max - lo) as u64);
    let vals: Vec<Expr> = (0..flags.len() as u32)
        .map(|o| k(o as u128, aw))
        .collect::<Result<_, _>>()?;
    let amount = wire(m, &format!("dec{last}_shift"), onehot_mux(flags, &vals)?)?;
    let ws = stream.width();
    let pre = Expr::concat([stream.slice(ws - 1 - lo, 0)?, k(0, *lo)?])?;
    let name = format!("dec{last}_stream");
    let shifted = shl_var_top(m, &name, &pre, &amount, keep)?;
    wire(m, &name, shifted)
}

/// The steps of two codes at once: at every offset an even-numbered code
/// of the stage can start, the distances the two codes from there can
/// take together, each with its flag (two AND-OR levels on the length
/// flags, off the chain). Each offset's flags are a named wire
/// `dec<first>_pair<o>` (bit i: the i-th smallest distance), made once.
struct PairSteps<'a> {
    first: usize,
    lens_at: &'a [Vec<Expr>],
    made: std::collections::BTreeMap<u32, Vec<(u32, Expr)>>,
}

impl PairSteps<'_> {
    fn at(&mut self, m: &mut Module, o: u32) -> Result<Vec<(u32, Expr)>, IrError> {
        if let Some(p) = self.made.get(&o) {
            return Ok(p.clone());
        }
        let mut by_dist: Vec<(u32, Expr)> = Vec::new();
        for (l1, f1) in CODE_LENS.iter().zip(&self.lens_at[o as usize]) {
            for (l2, f2) in CODE_LENS.iter().zip(&self.lens_at[(o + l1) as usize]) {
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
            &format!("dec{}_pair{o}", self.first),
            Expr::concat(by_dist.iter().rev().map(|(_, f)| f.clone()))?,
        )?;
        let wired: Vec<(u32, Expr)> = by_dist
            .iter()
            .enumerate()
            .map(|(i, (d, _))| Ok((*d, bus.bit(i as u32)?)))
            .collect::<Result<_, IrError>>()?;
        self.made.insert(o, wired.clone());
        Ok(wired)
    }
}

/// The starts of the `n` codes of a stage and the end of the last, from
/// the length flags `lens_at` at each offset and the first code's start
/// `init` (one-hot from offset 0; one flag, true, but in stage 1 of a
/// unit with slots). In a stage of six or more
/// codes an even code's start comes from the start two codes before by
/// the pair lengths ([`PairSteps`]), an odd one's from the start just
/// before by the single lengths: the chain to the `i`-th start is about
/// i/2 steps deep. With fewer codes every start comes from the one before
/// (the wider pair steps measured no faster there). One named bus per
/// code (`dec<c>_at`, the end `dec<last>_end`): bit o is offset lo + o.
fn code_starts(
    m: &mut Module,
    first: usize,
    n: usize,
    lens_at: &[Vec<Expr>],
    init: &[Expr],
) -> Result<Vec<Start>, IrError> {
    let paired = n >= PAIRED_FROM;
    let mut pairs = PairSteps {
        first,
        lens_at,
        made: Default::default(),
    };
    let mut starts: Vec<Start> = vec![(0, init.to_vec())];
    for i in 0..n {
        let two = paired && i % 2 == 1;
        let (lo, flags) = if two { &starts[i - 1] } else { &starts[i] };
        let (lo, hi) = (*lo, lo + flags.len() as u32 - 1);
        let (nlo, nhi) = if two {
            (lo + 2 * MIN_LEN, hi + 2 * SLOT)
        } else {
            (lo + MIN_LEN, hi + SLOT)
        };
        let mut next: Vec<Option<Expr>> = vec![None; (nhi - nlo + 1) as usize];
        for (o, f) in flags.iter().enumerate() {
            let at = lo + o as u32;
            let steps: Vec<(u32, Expr)> = if two {
                pairs.at(m, at)?
            } else {
                CODE_LENS
                    .iter()
                    .copied()
                    .zip(lens_at[at as usize].iter().cloned())
                    .collect()
            };
            for (l, t) in steps {
                or_into(&mut next[(at + l - nlo) as usize], f.and(&t)?)?;
            }
        }
        let next: Vec<Expr> = next
            .into_iter()
            .map(|t| t.unwrap_or_else(|| Expr::bool(false)))
            .collect();
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
    Ok(starts)
}

/// `slot |= term` (`term` when empty).
fn or_into(slot: &mut Option<Expr>, term: Expr) -> Result<(), IrError> {
    *slot = Some(match slot.take() {
        Some(acc) => acc.or(&term)?,
        None => term,
    });
    Ok(())
}

/// The decoded symbols so far, the symbol count (one-hot over 0..=16)
/// and the error flag, from one code to the next.
struct Progress {
    symbols: Expr,
    index: Vec<Expr>,
    error: Expr,
}

/// Decode code `c` (starting at `start` in `stream`; `last`: the stage's
/// last code): its symbol is written into the slot the count names, the
/// count moves on, a malformed code or an overflow sets the error. Also
/// returns whether the code counts (`dec<c>_active`: a predictor model
/// before the 16th symbol).
fn decode_code(
    m: &mut Module,
    c: usize,
    last: bool,
    stream: &Expr,
    start: &Start,
    is_pred: &Expr,
    progress: Progress,
) -> Result<(Progress, Expr), IrError> {
    let Progress {
        symbols,
        index,
        error,
    } = progress;
    let (lo, flags) = start;
    let heads: Vec<Expr> = (0..flags.len() as u32)
        .map(|o| bits_at(stream, lo + o, SLOT))
        .collect::<Result<_, _>>()?;
    let code = decode(m, &format!("dec{c}"), &onehot_mux(flags, &heads)?)?;
    let all_decoded = &index[SYMBOLS];
    let active = wire(
        m,
        &format!("dec{c}_active"),
        is_pred.and(&all_decoded.not())?,
    )?;
    let (next, overflow) = advance_count(&index, &code.count, c)?;
    let bad = wire(
        m,
        &format!("dec{c}_bad"),
        active.and(&code.invalid.or(&overflow)?)?,
    )?;
    // write the value into symbol slot `index`
    let mut slots = Vec::with_capacity(SYMBOLS);
    // (slots below `c` are written by earlier codes only)
    for (s, at) in index.iter().take(SYMBOLS).enumerate() {
        let old = symbol(&symbols, s)?;
        if s < c {
            slots.push(old);
            continue;
        }
        let here = is_pred.and(at)?;
        slots.push(old.or(&code.value.and(&here.repeat(SYMBOL_BITS)?)?)?);
    }
    let symbols = wire(m, &format!("dec{c}_symbols"), Expr::concat(slots)?)?;
    // (a non-predictor model moves the count too: nothing reads it)
    // the count after this code is at least c + 1 (bit o of the bus:
    // count c + 1 + o)
    let index = if last {
        next
    } else {
        let bus = wire(
            m,
            &format!("dec{c}_index"),
            Expr::concat(next.iter().skip(c + 1).rev().cloned())?,
        )?;
        (0..=c)
            .map(|_| Ok(Expr::bool(false)))
            .chain((0..(SYMBOLS - c) as u32).map(|o| bus.bit(o)))
            .collect::<Result<_, _>>()?
    };
    let error = wire(m, &format!("dec{c}_error"), error.or(&bad)?)?;
    Ok((
        Progress {
            symbols,
            index,
            error,
        },
        active,
    ))
}

/// The symbol count (one-hot over 0..=16) after code `c` of `count`
/// symbols (one-hot, bit 0 never set): every count at or past 16 in one
/// place, and whether it ran past 16 (an overflow).
fn advance_count(index: &[Expr], count: &[Expr], c: usize) -> Result<(Vec<Expr>, Expr), IrError> {
    let mut next: Vec<Option<Expr>> = vec![None; SYMBOLS + 1];
    let mut overflow: Option<Expr> = None;
    // every code before this one stood for at least one symbol (a run
    // of none is malformed and flagged), so the count is at least `c`
    // here: counts below `c`, and a code of no symbols, can only follow
    // an error and are left out
    for (from, f) in index.iter().take(SYMBOLS).enumerate().skip(c) {
        for (cnt, g) in count.iter().enumerate().skip(1) {
            let to = from + cnt;
            let slot = if to > SYMBOLS {
                &mut overflow
            } else {
                &mut next[to]
            };
            or_into(slot, f.and(g)?)?;
        }
    }
    or_into(&mut next[SYMBOLS], index[SYMBOLS].clone())?;
    let next = next
        .into_iter()
        .map(|t| t.unwrap_or_else(|| Expr::bool(false)))
        .collect();
    Ok((next, overflow.unwrap_or_else(|| Expr::bool(false))))
}

/// The checks after the last code: a predictor's codes stand for exactly
/// 16 symbols, and the bits used (`used`: header and codes) are `len`;
/// zero-block, same-words and raw (`kinds`, in that order) take the
/// lengths `lens` (H, H+32 and H+256 bits).
fn length_checks(
    lens: [Expr; 3],
    used: &Expr,
    index: &Expr,
    len: &Expr,
    is_pred: &Expr,
    kinds: [&Expr; 3],
) -> Result<Expr, IrError> {
    let [zero, same, raw] = kinds;
    let [zero_len, same_len, raw_len] = lens;
    let expected_len = priority(
        &[
            (zero.clone(), zero_len),
            (same.clone(), same_len),
            (raw.clone(), raw_len),
        ],
        used.clone(),
    )?;
    let incomplete = is_pred.and(&index.cmp_ne(&k(SYMBOLS as u128, 5)?)?)?;
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
    let mut position = [0u32; STREAM_BITS];
    for (o, &n) in pr.reorder.iter().enumerate() {
        position[n as usize] = o as u32;
    }
    let mut xbits = Vec::with_capacity(STREAM_BITS);
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
    let h = set.header_bits();
    let wbits = set.max_bits();
    let mut u = StreamUnit::begin("mpc_decompressor")?;
    let in_bits = u.input("in_bits", wbits)?;
    let in_len = u.input("in_len", LEN_WIDTH)?;
    let mut u = u.outputs()?;
    let out_block = u.output("out_block", 8 * BLOCK_BYTES as u32)?;
    let out_error = u.output("out_error", 1)?;
    let out_model = u.output("out_model", h)?;
    let plan = decode_plan(stages);
    let mut d = Decompressor {
        set,
        u: u.pipeline(stages)?,
        probes: Probes::default(),
        h,
        stages,
        inv: stages - 1,
        checks_at: plan.iter().rposition(|&c| c > 0).map_or(1, |i| i + 2),
        plan,
        base: stages,
        slots: None,
        slot_rules: None,
        header_starts: vec![Expr::bool(true)],
    };
    let [block, error, model] = d.datapath(&in_bits, &in_len)?;
    d.u.drive(&out_block, block)?;
    d.u.drive(&out_error, error)?;
    d.u.drive(&out_model, model)?;
    d.u.finish(d.probes.list)
}

/// The decompressor being built: its unit, its probes, and its stage
/// plan.
struct Decompressor<'a> {
    set: &'a ModelSet,
    u: StreamUnit,
    probes: Probes,
    /// Header (model ID) bits.
    h: u32,
    stages: usize,
    /// Codes decoded in each stage ([`decode_plan`]).
    plan: Vec<usize>,
    /// The inverse-transform stage (`stages - 1`).
    inv: usize,
    /// The stage that makes the length checks.
    checks_at: usize,
    /// The stage of the hard-wired restoration (`stages` without slots).
    base: usize,
    /// The slots' configuration (none: the hard-wired unit).
    slots: Option<SlotCtl>,
    /// The chosen slot's rules of the bytes the restoration levels compute
    /// ([`chosen_rules`]; all roots for other models), registered by the
    /// restoration stage.
    slot_rules: Option<Expr>,
    /// The first code's start in stage 1's stream, one-hot from offset 0
    /// (one flag, true, without slots; with slots the stream starts after
    /// the shortest header and the code after the loaded slots' header).
    header_starts: Vec<Expr>,
}

/// What a stage hands the next: the decoder state, the model ID, the
/// packet length and the payload passed on, and the codes decoded so far.
struct Carried {
    st: State,
    model_id: Expr,
    len: Expr,
    payload: Expr,
    code: usize,
}

/// The model kind a stage's model ID names: each predictor's flag
/// (`s<stage>_is_p<p>`), zero block, same words, raw.
struct Kinds {
    preds: Vec<Expr>,
    /// Each slot's flag (`s<stage>_is_slot<j>`; none without slots).
    slots: Vec<Expr>,
    zero: Expr,
    same: Expr,
    raw: Expr,
}

impl Kinds {
    /// Whether the model is a predictor: hard-wired or a loaded slot.
    fn any_pred(&self) -> Result<Expr, IrError> {
        self.preds
            .iter()
            .chain(&self.slots)
            .skip(1)
            .try_fold(self.preds[0].clone(), |a, b| a.or(b))
    }
}

/// The inverse-transform stage's registers, and the inputs of the length
/// checks when they come one stage later (used, consumed, count, length).
struct Inverted {
    residue: Expr,
    model_id: Expr,
    error: Expr,
    check_in: Option<[Expr; 4]>,
    /// Per slot, whether the block is that slot's (`s<inv>_slot_hit<j>`;
    /// none without slots): the restoration stage's selects start at
    /// registers, not at a comparison of the model ID.
    slot_hits: Vec<Expr>,
}

impl Decompressor<'_> {
    /// Every stage from the input bus and length to the output registers
    /// (block, error, model).
    fn datapath(&mut self, in_bits: &Expr, in_len: &Expr) -> Result<[Expr; 3], IrError> {
        let mut carried = self.header(in_bits, in_len)?;
        let mut s = 1;
        let (kinds, consumed) = loop {
            if s > 1 {
                let (from, to) = (carried.code, carried.code + self.plan[s - 1]);
                let title = self.title(s, from, to);
                self.u.stage(s, &title)?;
            }
            let (kinds, consumed) = self.decode_in(s, &mut carried)?;
            if s == self.inv {
                break (kinds, consumed);
            }
            self.register_decoded(s, &mut carried, consumed)?;
            s += 1;
        };
        let inverted = self.inverse_stage(carried, kinds, consumed)?;
        let regs = self.restore_stage(inverted)?;
        self.slot_stages(regs)
    }

    /// The title of decode stage `s` (codes `from..to`).
    fn title(&self, s: usize, from: usize, to: usize) -> String {
        let mut t = if s == 1 {
            "header, ".to_string()
        } else {
            String::new()
        };
        if to > from {
            t.push_str(&format!("codes {from}..{}", to - 1));
        }
        if s == self.checks_at {
            t.push_str(", length checks");
        }
        if s == self.inv {
            t.push_str(if t.is_empty() { "" } else { ", " });
            t.push_str("inverse transforms, residue select");
        }
        t
    }

    /// The model kind of the model ID `id` registered by stage `stage`
    /// (0: the header).
    fn kinds(&mut self, id: &Expr, stage: usize) -> Result<Kinds, IrError> {
        self.kinds_with(id, stage, None)
    }

    /// [`Decompressor::kinds`], the slot flags `hits` when given.
    fn kinds_with(
        &mut self,
        id: &Expr,
        stage: usize,
        hits: Option<Vec<Expr>>,
    ) -> Result<Kinds, IrError> {
        let set = self.set;
        let m = &mut self.u.m;
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
        let Some(ctl) = &self.slots else {
            return Ok(Kinds {
                preds,
                slots: Vec::new(),
                zero: flag(set.zero_block_id())?,
                same: flag(set.same_words_id())?,
                raw: flag(Some(set.raw_id()))?,
            });
        };
        // slot j: loaded, and the ID its place among the loaded slots gives
        let slots: Vec<Expr> = match hits {
            Some(hits) => hits,
            None => (0..ctl.flags.len())
                .map(|j| {
                    let hit = ctl.flags[j].and(&id.cmp_eq(&ctl.ids[j])?)?;
                    wire(m, &format!("s{stage}_is_slot{j}"), hit)
                })
                .collect::<Result<_, _>>()?,
        };
        Ok(Kinds {
            preds,
            slots,
            zero: flag(set.zero_block_id())?,
            same: flag(set.same_words_id())?,
            raw: id.cmp_eq(&ctl.raw_id)?,
        })
    }

    /// Stage 1's header: the model ID (a probe), its range check and the
    /// length check against the bus, and the decoder's starting state.
    fn header(&mut self, in_bits: &Expr, in_len: &Expr) -> Result<Carried, IrError> {
        let (set, h) = (self.set, self.h);
        let wbits = in_bits.width();
        let title = self.title(1, 0, self.plan[0]);
        self.u.stage(1, &title)?;
        if self.slots.is_some() {
            return self.slot_header(in_bits, in_len);
        }
        let id = self.probes.wire(
            &mut self.u.m,
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
        let st = State {
            stream: in_bits.slice(wbits - h - 1, 0)?,
            symbols: k(0, STREAM_BITS as u32)?,
            index: k(0, 5)?,
            used: k(h as u128, LEN_WIDTH)?,
            error: bad_id.or(&too_long)?,
        };
        Ok(Carried {
            payload: st.stream.clone(),
            st,
            model_id: id,
            len: in_len.clone(),
            code: 0,
        })
    }

    /// Stage 1's header in a unit with slots, whose header has `h(L)` bits
    /// (`H` with every slot loaded): the model ID is the top `h(L)` bits
    /// (`header_id`, `H` bits), checked against the raw escape of the loaded
    /// slots; the length against `h(L) + 256`; the epoch
    /// (`epoch_mismatch`). The stream starts after the shortest header
    /// `h(0)` and the first code after `h(L)`: its start is one-hot over
    /// the offsets `0..=H - h(0)` by the loaded slots' header width, so
    /// the input is never shifted before the code starts are found.
    fn slot_header(&mut self, in_bits: &Expr, in_len: &Expr) -> Result<Carried, IrError> {
        let h = self.h;
        let wbits = in_bits.width();
        let Some(ctl) = &self.slots else {
            return Err(IrError::EmptyConcat);
        };
        let m = &mut self.u.m;
        let flags: Vec<Expr> = ctl.header_is.iter().map(|(_, f)| f.clone()).collect();
        let ids: Vec<Expr> = ctl
            .header_is
            .iter()
            .map(|(hl, _)| in_bits.slice(wbits - 1, wbits - hl)?.zext(h))
            .collect::<Result<_, _>>()?;
        let id = self.probes.wire(
            m,
            1,
            "header_id",
            onehot_mux(&flags, &ids)?,
            "header",
            When::Always,
        )?;
        let bad_id = id.cmp_gt(&ctl.raw_id)?;
        let longs: Vec<Expr> = ctl
            .header_is
            .iter()
            .map(|(hl, _)| in_len.cmp_gt(&k((hl + STREAM_BITS as u32) as u128, LEN_WIDTH)?))
            .collect::<Result<_, _>>()?;
        let too_long = onehot_mux(&flags, &longs)?;
        let other_epoch = wire(m, "epoch_mismatch", ctl.in_epoch.cmp_ne(&ctl.epoch)?)?;
        let h0 = ctl.header_is.first().map_or(h, |(hl, _)| *hl);
        self.header_starts = (h0..=h)
            .map(|w| {
                ctl.header_is
                    .iter()
                    .find(|(hl, _)| *hl == w)
                    .map_or(Expr::bool(false), |(_, f)| f.clone())
            })
            .collect();
        let st = State {
            stream: in_bits.slice(wbits - h0 - 1, 0)?,
            symbols: k(0, STREAM_BITS as u32)?,
            index: k(0, 5)?,
            // the codes' bits count from the end of the shortest header
            used: k(h0 as u128, LEN_WIDTH)?,
            error: bad_id.or(&too_long)?.or(&other_epoch)?,
        };
        Ok(Carried {
            payload: st.stream.clone(),
            st,
            model_id: id,
            len: in_len.clone(),
            code: 0,
        })
    }

    /// The lengths of a zero-block, same-words and raw block: the header,
    /// plus 32 and 256 bits (with slots, the header of the loaded slots).
    fn custom_lens(&self) -> Result<[Expr; 3], IrError> {
        let lens = |hl: u32| -> Result<[Expr; 3], IrError> {
            Ok([
                k(hl as u128, LEN_WIDTH)?,
                k(hl as u128 + 32, LEN_WIDTH)?,
                k(hl as u128 + STREAM_BITS as u128, LEN_WIDTH)?,
            ])
        };
        let Some(ctl) = &self.slots else {
            return lens(self.h);
        };
        let flags: Vec<Expr> = ctl.header_is.iter().map(|(_, f)| f.clone()).collect();
        let per: Vec<[Expr; 3]> = ctl
            .header_is
            .iter()
            .map(|(hl, _)| lens(*hl))
            .collect::<Result<_, _>>()?;
        let pick = |i: usize| -> Result<Expr, IrError> {
            let vals: Vec<Expr> = per.iter().map(|l| l[i].clone()).collect();
            onehot_mux(&flags, &vals)
        };
        Ok([pick(0)?, pick(1)?, pick(2)?])
    }

    /// Stage `s`'s codes (as the plan says) and, in the stage that makes
    /// them, the length checks. Returns the model kind of the stage's
    /// model ID and the bits its codes took.
    fn decode_in(&mut self, s: usize, carried: &mut Carried) -> Result<(Kinds, Expr), IrError> {
        let kinds = self.kinds(&carried.model_id, s - 1)?;
        let n = self.plan[s - 1];
        let lens = if s == self.checks_at {
            Some(self.custom_lens()?)
        } else {
            None
        };
        let m = &mut self.u.m;
        let any_pred = kinds.any_pred()?;
        // a stage with no codes and no checks has no use for it
        let is_pred = if n > 0 || s == self.checks_at {
            wire(m, &format!("s{}_is_predictor", s - 1), any_pred)?
        } else {
            any_pred
        };
        let st = &mut carried.st;
        let mut consumed = k(0, LEN_WIDTH)?;
        if n > 0 {
            let remaining = SYMBOLS - carried.code - n;
            // stage 1's stream is also the payload of raw and same-words
            // (the top 256 bits: a unit with slots reads its stream from
            // after the shortest header)
            let keep = if s == 1 {
                st.stream.width().min(STREAM_BITS as u32)
            } else {
                (SLOT * remaining as u32).min(st.stream.width())
            };
            let hold = (s == 1).then_some(&self.header_starts[..]);
            let d = decode_stage(m, carried.code, n, st, &is_pred, keep, hold)?;
            *st = d.state;
            consumed = d.consumed;
            carried.code += n;
        }
        if let Some(lens) = lens {
            let kinds = [&kinds.zero, &kinds.same, &kinds.raw];
            let bad = length_checks(lens, &st.used, &st.index, &carried.len, &is_pred, kinds)?;
            st.error = wire(m, &format!("s{s}_error_d"), st.error.or(&bad)?)?;
        }
        Ok((kinds, consumed))
    }

    /// The registers of decode stage `s` into stage `s + 1`: model ID,
    /// error, symbols, the payload (stage 1: the stream), and until the
    /// checks the decoder's position (stream, used, consumed, count,
    /// length).
    fn register_decoded(
        &mut self,
        s: usize,
        carried: &mut Carried,
        consumed: Expr,
    ) -> Result<(), IrError> {
        let u = &mut self.u;
        let st = &mut carried.st;
        let decoding = carried.code < SYMBOLS;
        let with = decoding.then_some("sym_index");
        let r_model = u.reg(s, "model_id", carried.model_id.clone())?;
        let r_error = u.reg(s, "error", st.error.clone())?;
        let r_symbols = u.reg(s, "symbols", st.symbols.clone())?;
        let r_payload = if s == 1 {
            u.reg(s, "stream", st.stream.clone())?
        } else {
            u.reg(s, "payload", carried.payload.clone())?
        };
        if s < self.checks_at {
            let r_stream = if !decoding {
                st.stream.clone()
            } else if s == 1 {
                r_payload.clone()
            } else {
                u.reg(s, "stream", st.stream.clone())?
            };
            // bits used before this stage's codes, and the bits they took
            let r_used = if s == 1 {
                st.used.clone()
            } else {
                u.reg(s, "used", st.used.clone())?
            };
            let r_consumed = u.reg(s, "consumed", consumed)?;
            let r_index = u.reg(s, "sym_index", st.index.clone())?;
            let r_len = u.reg(s, "len", carried.len.clone())?;
            self.probes
                .record_reg(&u.m, s, "len", "len", When::Always, None)?;
            let used = r_used.add(&r_consumed)?;
            *st = State {
                stream: r_stream,
                symbols: r_symbols,
                index: r_index,
                used: wire(&mut u.m, &format!("s{s}_used_next"), used)?,
                error: r_error,
            };
            carried.len = r_len;
        } else {
            st.symbols = r_symbols;
            st.error = r_error;
        }
        for (name, mirrors, when, w) in [
            ("model_id", "model_id", When::Accepted, None),
            ("error", "error", When::Accepted, None),
            ("symbols", "symbols", When::Predictor, with),
        ] {
            self.probes.record_reg(&u.m, s, name, mirrors, when, w)?;
        }
        carried.model_id = r_model;
        carried.payload = r_payload;
        Ok(())
    }

    /// The inverse-transform stage (after its codes, if any): every
    /// predictor's inverse transform, the chosen model's residues (or the
    /// payload bytes), registered with the model ID and the error.
    fn inverse_stage(
        &mut self,
        carried: Carried,
        kinds: Kinds,
        consumed: Expr,
    ) -> Result<Inverted, IrError> {
        let (set, inv) = (self.set, self.inv);
        let Carried {
            st,
            model_id,
            len,
            payload,
            ..
        } = carried;
        let residues: Vec<Expr> = set
            .predictors
            .iter()
            .enumerate()
            .map(|(p, pr)| {
                let id = set.predictor_id(p);
                inverse_transform(&mut self.u.m, &mut self.probes, inv, p, id, pr, &st.symbols)
            })
            .collect::<Result<_, _>>()?;
        // payload bytes from the top: byte j = payload[255-8j : 248-8j]
        // of a 256-bit payload
        let pw = payload.width();
        let payload_bytes: Vec<Expr> = (0..32u32)
            .map(|j| payload.slice(pw - 1 - 8 * j, pw - 8 - 8 * j))
            .collect::<Result<_, _>>()?;
        let payload_block = wire(&mut self.u.m, "payload_block", block_of(payload_bytes)?)?;
        let hits = kinds.slots.clone();
        let mut sel = kinds.preds;
        let mut vals = residues;
        sel.push(kinds.raw.or(&kinds.same)?);
        vals.push(payload_block);
        if !kinds.slots.is_empty() {
            // a slot's symbols: its inverse transform is one stage later
            let any_slot = any_of(&kinds.slots)?;
            sel.push(wire(
                &mut self.u.m,
                &format!("s{}_is_any_slot", inv - 1),
                any_slot,
            )?);
            vals.push(st.symbols.clone());
        }
        let u = &mut self.u;
        let residue = u.reg(inv, "residue", onehot_mux(&sel, &vals)?)?;
        let model_id = u.reg(inv, "model_id", model_id)?;
        let error = u.reg(inv, "error", st.error)?;
        let slot_hits = hits
            .into_iter()
            .enumerate()
            .map(|(j, h)| u.reg(inv, &format!("slot_hit{j}"), h))
            .collect::<Result<_, _>>()?;
        // the checks of the last codes come one stage later
        let check_in = if self.checks_at > inv {
            let used = u.reg(inv, "used", st.used)?;
            let consumed = u.reg(inv, "consumed", consumed)?;
            let index = u.reg(inv, "sym_index", st.index)?;
            let len = u.reg(inv, "len", len)?;
            self.probes
                .record_reg(&u.m, inv, "len", "len", When::Always, None)?;
            Some([used, consumed, index, len])
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
            self.probes
                .record_reg(&u.m, inv, name, mirrors, when, None)?;
        }
        Ok(Inverted {
            residue,
            model_id,
            error,
            check_in,
            slot_hits,
        })
    }

    /// The slot restoration stages after the hard-wired restoration
    /// (`regs`: its block, error and model registers; the block holds the
    /// chosen slot's residues when a slot was decoded, else the output
    /// block, and the rules registered with it are all roots then): each
    /// stage computes its restoration levels and registers the residues
    /// and the restored bytes later levels read, and the rules of the
    /// bytes they compute (`s<k>_residue`, `s<k>_restored`,
    /// `s<k>_slot_rules`, `s<k>_error`, `s<k>_model`); the last registers
    /// the restored block (`s<N>_block`, `s<N>_error`, `s<N>_model`).
    fn slot_stages(&mut self, regs: [Expr; 3]) -> Result<[Expr; 3], IrError> {
        let (Some(ctl), Some(mut rules)) = (&self.slots, self.slot_rules.clone()) else {
            return Ok(regs);
        };
        let [block, mut error, mut model] = regs;
        let depth = ctl.form.max_depth;
        let plan = level_plan(depth, self.stages - self.base);
        // before the first level every byte is its residue
        let mut restored: Vec<Option<Expr>> = (0..BLOCK_BYTES)
            .map(|i| byte(&block, i).map(Some))
            .collect::<Result<_, _>>()?;
        let mut residue = restored.clone();
        // the bytes whose rules `rules` holds
        let mut held = level_reads(1..=depth, depth);
        for (i, levels) in plan.into_iter().enumerate() {
            let s = self.base + 1 + i;
            let last = s == self.stages;
            let mut title = format!(
                "slot restoration levels {}..{}",
                levels.start(),
                levels.end()
            );
            if last {
                title.push_str(", output");
            }
            self.u.stage(s, &title)?;
            let reads = level_reads(levels.clone(), depth);
            let these = split_rules(&rules, &held, &reads)?;
            let m = &mut self.u.m;
            restored = slot_levels(m, levels.clone(), depth, &residue, restored, &these)?;
            let u = &mut self.u;
            if last {
                let bytes: Vec<Expr> = restored
                    .into_iter()
                    .map(|b| b.ok_or(IrError::EmptyConcat))
                    .collect::<Result<_, _>>()?;
                let regs = [
                    u.reg(s, "block", block_of(bytes)?)?,
                    u.reg(s, "error", error)?,
                    u.reg(s, "model", model)?,
                ];
                for (name, mirrors, when) in [
                    ("block", Mirror::Block, When::Always),
                    ("error", Mirror::Error, When::Always),
                    ("model", Mirror::ModelId, When::Accepted),
                ] {
                    self.probes.record_reg(&u.m, s, name, mirrors, when, None)?;
                }
                return Ok(regs);
            }
            // the residues of the bytes later levels compute, and the
            // bytes they read, lowest byte in the low bits
            let later = level_reads(levels.end() + 1..=depth, depth);
            for (b, keep) in residue.iter_mut().zip(later) {
                if !keep {
                    *b = None;
                }
            }
            register_bytes(u, s, "residue", &mut residue)?;
            register_bytes(u, s, "restored", &mut restored)?;
            // the rules later levels read
            let next: Vec<Expr> = split_rules(&rules, &held, &later)?
                .into_iter()
                .flatten()
                .rev()
                .flat_map(|(c, kc)| [c, kc])
                .collect();
            rules = u.reg(s, "slot_rules", Expr::concat(next)?)?;
            held = later;
            error = u.reg(s, "error", error)?;
            model = u.reg(s, "model", model)?;
            for (name, mirrors, when) in [
                ("error", Mirror::Error, When::Always),
                ("model", Mirror::ModelId, When::Accepted),
            ] {
                self.probes.record_reg(&u.m, s, name, mirrors, when, None)?;
            }
        }
        Err(IrError::ParameterOutOfRange {
            what: "slot restoration stages".to_string(),
            value: 0,
            min: 1,
            max: self.stages as u64,
        })
    }

    /// The last stage: the length checks of the last codes (unless made
    /// before), each predictor's restoration, the custom models and the
    /// output mux, registered (`s<N>_block`, `s<N>_error`, `s<N>_model`).
    fn restore_stage(&mut self, inv: Inverted) -> Result<[Expr; 3], IrError> {
        let (set, stages) = (self.set, self.base);
        let title = if self.slots.is_some() {
            "restoration, custom models, slot inverse transform"
        } else {
            "restoration, custom models, output"
        };
        self.u.stage(stages, title)?;
        let hits = (!inv.slot_hits.is_empty()).then(|| inv.slot_hits.clone());
        let kinds = self.kinds_with(&inv.model_id, self.inv, hits)?;
        let lens = self.custom_lens()?;
        let m = &mut self.u.m;
        let error = match inv.check_in {
            Some([used, consumed, index, len]) => {
                let any_pred = kinds.any_pred()?;
                let is_pred = wire(m, &format!("s{}_is_predictor", self.inv), any_pred)?;
                let used = wire(m, &format!("s{}_used_next", self.inv), used.add(&consumed)?)?;
                let flags = [&kinds.zero, &kinds.same, &kinds.raw];
                let bad = length_checks(lens, &used, &index, &len, &is_pred, flags)?;
                wire(m, &format!("s{stages}_error_d"), inv.error.or(&bad)?)?
            }
            None => inv.error,
        };
        let mut sel = Vec::new();
        let mut vals = Vec::new();
        for (p, pr) in set.predictors.iter().enumerate() {
            sel.push(kinds.preds[p].clone());
            let id = set.predictor_id(p);
            vals.push(restore(
                m,
                &mut self.probes,
                stages,
                p,
                id,
                pr,
                &inv.residue,
            )?);
        }
        sel.push(kinds.raw);
        vals.push(inv.residue.clone());
        sel.push(kinds.same);
        vals.push(inv.residue.slice(31, 0)?.repeat(8)?);
        let mut slot_next = None;
        if let Some(ctl) = &self.slots {
            // the chosen slot's residues; its restoration levels follow,
            // with its rules of the bytes they compute (all roots for
            // other models: the levels then keep the block)
            let chosen = &kinds.slots;
            let any_slot = wire(m, &format!("s{}_is_any_slot", self.inv), any_of(chosen)?)?;
            sel.push(any_slot);
            vals.push(slot_inverse(m, ctl, set, chosen, &inv.residue)?);
            let mut names = vec![
                ("slot_xored".to_string(), Mirror::Xored),
                ("slot_residue".to_string(), Mirror::Residue),
            ];
            names.extend((0..8).map(|q| (format!("slot_plane{q}"), Mirror::Plane(q))));
            for (name, mirrors) in names {
                self.probes
                    .record(m, stages, &name, mirrors, When::Slot, None)?;
            }
            let reads = level_reads(1..=ctl.form.max_depth, ctl.form.max_depth);
            slot_next = Some(chosen_rules(m, "slot_rules", chosen, &ctl.rules, &reads)?);
        }
        let ok = error.not();
        let block = onehot_mux(&sel, &vals)?.and(&ok.repeat(8 * BLOCK_BYTES as u32)?)?;
        let u = &mut self.u;
        let regs = [
            u.reg(stages, "block", block)?,
            u.reg(stages, "error", error)?,
            u.reg(stages, "model", inv.model_id)?,
        ];
        if let Some(rules) = slot_next {
            self.slot_rules = Some(u.reg(stages, "slot_rules", rules)?);
        }
        for (name, mirrors, when) in [
            // all zero when the golden model rejects the input
            ("block", "block", When::Always),
            ("error", "error", When::Always),
            ("model", "model_id", When::Accepted),
        ] {
            self.probes
                .record_reg(&u.m, stages, name, mirrors, when, None)?;
        }
        Ok(regs)
    }
}

/// Build `mpc_decompressor` for a model set with the programmable slots
/// `spec` (`docs/hw/program-slots.md`) and `stages` pipeline stages
/// ([`slot_stages`]); without slots, [`build_staged`].
///
/// The decode of [`build_staged`] at `stages - R` stages (`R` the slot
/// restoration stages) starts its first code after the header of the
/// loaded slots; its inverse-transform stage passes a slot's symbols on,
/// and its restoration stage also makes the chosen slot's inverse
/// transform; the `R` stages after it make the slot's restoration levels.
pub fn build_slots(
    set: &ModelSet,
    spec: SlotSpec,
    stages: usize,
) -> Result<(Module, UnitDescription), IrError> {
    if spec.k() == 0 {
        return build_staged(set, stages);
    }
    super::check_stages("decompressor pipeline stages", stages, &slot_stages(&spec))?;
    let form = spec.form();
    let p = set.predictors.len();
    let ids = Ids {
        custom: set.id_count() - p - 1,
        p,
        k: spec.k(),
    };
    let h = ids.max_header_bits();
    let base = stages - slot_restore_stages(&form);
    let mut u = StreamUnit::begin("mpc_decompressor")?;
    let in_bits = u.input("in_bits", h + STREAM_BITS as u32)?;
    let in_len = u.input("in_len", LEN_WIDTH)?;
    let in_epoch = u.input("in_epoch", slots::EPOCH_BITS)?;
    let ports = ConfigPorts::declare(&mut u)?;
    let mut u = u.outputs()?;
    let out_block = u.output("out_block", 8 * BLOCK_BYTES as u32)?;
    let out_error = u.output("out_error", 1)?;
    let out_model = u.output("out_model", h)?;
    let cfg_out = ConfigOutputs::declare(&mut u)?;
    let cfg = ConfigBlock::new(&mut u.m, spec, ids, &ports)?;
    let mut u = u.pipeline_held(stages, &cfg.hold())?;
    cfg.connect(&mut u, &cfg_out)?;
    let derived = Derived::build(&mut u.m, ids)?;
    let ctl = SlotCtl {
        form,
        flags: cfg.slots.iter().map(|s| s.flag.clone()).collect(),
        rules: cfg
            .slots
            .iter()
            .map(|s| {
                s.cand
                    .iter()
                    .cloned()
                    .zip(s.kcode.iter().cloned())
                    .collect()
            })
            .collect(),
        routes: cfg
            .slots
            .iter()
            .map(|s| s.settings())
            .collect::<Result<_, _>>()?,
        ids: derived.ids,
        raw_id: derived.raw_id,
        header_is: derived.header_is,
        epoch: cfg.epoch.clone(),
        in_epoch,
    };
    let plan = decode_plan(base);
    let mut d = Decompressor {
        set,
        u,
        probes: Probes::default(),
        h,
        stages,
        inv: base - 1,
        checks_at: plan.iter().rposition(|&c| c > 0).map_or(1, |i| i + 2),
        plan,
        base,
        slots: Some(ctl),
        slot_rules: None,
        header_starts: Vec::new(),
    };
    let [block, error, model] = d.datapath(&in_bits, &in_len)?;
    d.u.drive(&out_block, block)?;
    d.u.drive(&out_error, error)?;
    d.u.drive(&out_model, model)?;
    let probes = slot_unit_probes(std::mem::take(&mut d.probes.list), set, d.inv, base);
    d.u.finish(probes)
}

/// The probes of a decompressor with slots: those its hard-wired decode
/// records, with the comparisons a slot changes restated (the raw escape's
/// model ID depends on the loaded slots; the inverse-transform stage `inv`
/// passes a slot's symbols on in `s<inv>_residue`; the restoration stage
/// `base` registers a slot's residues in `s<base>_block`, restored by the
/// stages after it), then the slot path's own.
fn slot_unit_probes(
    list: Vec<StageProbe>,
    set: &ModelSet,
    inv: usize,
    base: usize,
) -> Vec<StageProbe> {
    let raw = set.raw_id();
    let mut out = Vec::with_capacity(list.len() + 2);
    for mut p in list {
        if p.when == When::Model(raw) {
            p.when = When::Raw;
        }
        let reg = |s: usize, n: &str| p.name == crate::circuits::Pipeline::reg_name(s, n);
        if reg(inv, "residue") && p.mirrors == Mirror::Residue && p.when == When::Predictor {
            p.when = When::HardWired;
            let mut slot = p.clone();
            slot.mirrors = Mirror::Symbols;
            slot.when = When::Slot;
            out.push(p);
            out.push(slot);
            continue;
        }
        if reg(base, "block") && p.mirrors == Mirror::Block && p.when == When::Always {
            p.when = When::NotSlot;
            let mut slot = p.clone();
            slot.mirrors = Mirror::Residue;
            slot.when = When::Slot;
            out.push(p);
            out.push(slot);
            continue;
        }
        out.push(p);
    }
    out
}

/// What the decompressor derives from the loaded slots, in registers of
/// its own that load from the shadow copies in the cycle the active
/// registers do (`cfg_load`), so that no path of a stage starts at the
/// slot flags and runs through the sums: each slot's model ID
/// (`cfg_active_slot_id_s<j>`, slot 0's is the constant `C + P`), the raw
/// escape's (`cfg_active_raw_id`) and, one flag per header width the
/// loaded slots can give, whether it is `h(L)` (`cfg_active_header_is`,
/// bit `w` for the `w`-th width from `h(0)`; a constant when `K` slots
/// give one width only). Reset: nothing loaded.
struct Derived {
    ids: Vec<Expr>,
    raw_id: Expr,
    header_is: Vec<(u32, Expr)>,
}

impl Derived {
    fn build(m: &mut Module, ids: Ids) -> Result<Derived, IrError> {
        let named = |m: &Module, name: &str| -> Result<Expr, IrError> {
            m.signal(name)
                .map(|s| s.expr())
                .ok_or_else(|| IrError::UnknownSignal {
                    name: name.to_string(),
                })
        };
        let load = named(m, "cfg_load")?;
        let shadow: Vec<Expr> = (0..ids.k)
            .map(|j| named(m, &format!("cfg_shadow_s{j}_flag")))
            .collect::<Result<_, _>>()?;
        let h = ids.max_header_bits();
        let first = ids.first_slot_id() as u128;
        let resume = m.current_section().map(str::to_string);
        m.section("decompressor configuration: model IDs and header width of the loaded slots")?;
        // C + P + the shadow flags of `flags`
        let id_of = |flags: &[Expr]| -> Result<Expr, IrError> {
            let n = popcount(flags)?;
            let w = h.max(n.width());
            n.zext(w)?.add(&k(first, w)?)?.trunc(h)
        };
        let reg = |m: &mut Module, name: &str, w: u32, reset: u128, next: Expr| {
            let r = m.reg(name, w, Reset::Value(reset))?;
            m.reg_next(&r, next, Some(load.clone()))?;
            Ok::<Expr, IrError>(r.expr())
        };
        let mut slot_ids = vec![k(first, h)?];
        for j in 1..ids.k {
            let next = id_of(&shadow[..j])?;
            slot_ids.push(reg(m, &format!("cfg_active_slot_id_s{j}"), h, first, next)?);
        }
        let raw_id = reg(m, "cfg_active_raw_id", h, first, id_of(&shadow)?)?;
        // the header widths, and the loaded counts that give each
        let mut widths: Vec<(u32, Vec<usize>)> = Vec::new();
        for l in 0..=ids.k {
            let hl = ids.header_bits(l);
            match widths.iter_mut().find(|(w, _)| *w == hl) {
                Some((_, ls)) => ls.push(l),
                None => widths.push((hl, vec![l])),
            }
        }
        let header_is = if widths.len() == 1 {
            vec![(widths[0].0, Expr::bool(true))]
        } else {
            let loaded = popcount(&shadow)?;
            let next: Vec<Expr> = widths
                .iter()
                .map(|(_, ls)| {
                    let hits: Vec<Expr> = ls
                        .iter()
                        .map(|&l| eq_const(&loaded, l as u128))
                        .collect::<Result<_, _>>()?;
                    any_of(&hits)
                })
                .collect::<Result<_, _>>()?;
            let w = next.len() as u32;
            let bits = reg(
                m,
                "cfg_active_header_is",
                w,
                1,
                Expr::concat(next.into_iter().rev())?,
            )?;
            widths
                .iter()
                .enumerate()
                .map(|(i, (hl, _))| Ok((*hl, bits.bit(i as u32)?)))
                .collect::<Result<_, IrError>>()?
        };
        if let Some(title) = resume {
            m.section(&title)?;
        }
        Ok(Derived {
            ids: slot_ids,
            raw_id,
            header_is,
        })
    }
}

/// The decompressor depths of a unit with the slots `spec`: those of the
/// hard-wired unit ([`DECOMPRESSOR_STAGES`]) plus the slot restoration
/// stages (the form's depth bound, [`SLOT_LEVELS_PER_STAGE`] levels a
/// stage).
pub fn slot_stages(spec: &SlotSpec) -> std::ops::RangeInclusive<usize> {
    let r = slot_restore_stages(&spec.form());
    DECOMPRESSOR_STAGES.start() + r..=DECOMPRESSOR_STAGES.end() + r
}

/// The default decompressor depth of a unit with the slots `spec`: the
/// hard-wired default plus the slot restoration stages.
pub fn slot_default_stages(spec: &SlotSpec) -> usize {
    DECOMPRESSOR_LATENCY as usize + slot_restore_stages(&spec.form())
}

/// Restoration levels of a slot computed in one pipeline stage.
pub const SLOT_LEVELS_PER_STAGE: usize = 2;

/// The stages that restore a slot's block: its form's depth bound in
/// levels of [`SLOT_LEVELS_PER_STAGE`].
fn slot_restore_stages(form: &Form) -> usize {
    form.max_depth.div_ceil(SLOT_LEVELS_PER_STAGE)
}

/// What the decompressor reads of the active configuration of a unit with
/// slots, and the unit's epoch input.
struct SlotCtl {
    form: Form,
    /// Per slot: loaded.
    flags: Vec<Expr>,
    /// Per slot, per byte: the stride candidate (3 bits) and `k + 7` (4
    /// bits).
    rules: Vec<Vec<(Expr, Expr)>>,
    /// Per slot: the reorder's switch settings (bit `c`: setting `c`).
    routes: Vec<Vec<Expr>>,
    /// Per slot: its model ID when loaded (`H` bits).
    ids: Vec<Expr>,
    /// The raw escape's ID (`H` bits).
    raw_id: Expr,
    /// For each header width `h` the loaded slots can give: `h(L) == h`.
    header_is: Vec<(u32, Expr)>,
    /// The active epoch and the block's (`in_epoch`).
    epoch: Expr,
    in_epoch: Expr,
}

/// OR of 1-bit flags (false for none).
fn any_of(flags: &[Expr]) -> Result<Expr, IrError> {
    match flags.split_first() {
        Some((first, rest)) => rest.iter().try_fold(first.clone(), |a, b| a.or(b)),
        None => Ok(Expr::bool(false)),
    }
}

/// The chosen slot's settings: a one-hot mux of the slots' `values` (one
/// bus of settings bits per slot) by `chosen`, as the named wire `name`,
/// bit by bit (one slot: its settings, whatever the model: the output mux
/// takes the result only for a slot).
fn chosen_bits(
    m: &mut Module,
    name: &str,
    chosen: &[Expr],
    values: &[Vec<Expr>],
) -> Result<Vec<Expr>, IrError> {
    let buses: Vec<Expr> = values
        .iter()
        .map(|v| Expr::concat(v.iter().rev().cloned()))
        .collect::<Result<_, _>>()?;
    let bus = match buses.as_slice() {
        [only] => only.clone(),
        _ => wire(m, name, onehot_mux(chosen, &buses)?)?,
    };
    (0..bus.width()).map(|b| bus.bit(b)).collect()
}

/// The chosen slot's rules of the bytes `reads` names (a one-hot mux by
/// `chosen` of the slots' `rules`: all zero, all roots, when no slot is
/// chosen), as the named wire `name`: seven bits a byte, the lowest byte
/// in the low bits, the candidate above `k + 7` ([`split_rules`]).
fn chosen_rules(
    m: &mut Module,
    name: &str,
    chosen: &[Expr],
    rules: &[Vec<(Expr, Expr)>],
    reads: &[bool; BLOCK_BYTES],
) -> Result<Expr, IrError> {
    let buses: Vec<Expr> = rules
        .iter()
        .map(|r| {
            Expr::concat(
                r.iter()
                    .zip(reads)
                    .filter(|(_, &read)| read)
                    .rev()
                    .flat_map(|((c, kc), _)| [c.clone(), kc.clone()]),
            )
        })
        .collect::<Result<_, _>>()?;
    wire(m, name, onehot_mux(chosen, &buses)?)
}

/// The rules of the bytes `reads` names, from a bus of [`chosen_rules`]
/// that holds the bytes `held` names: per byte the candidate and `k + 7`.
fn split_rules(
    bus: &Expr,
    held: &[bool; BLOCK_BYTES],
    reads: &[bool; BLOCK_BYTES],
) -> Result<Vec<Option<(Expr, Expr)>>, IrError> {
    let mut at = 0;
    let mut out = Vec::with_capacity(BLOCK_BYTES);
    for (&h, &read) in held.iter().zip(reads) {
        let here = if h {
            let r = (
                bus.slice(7 * at + 6, 7 * at + 4)?,
                bus.slice(7 * at + 3, 7 * at)?,
            );
            at += 1;
            Some(r)
        } else {
            None
        };
        out.push(if read { here } else { None });
    }
    Ok(out)
}

/// The bytes whose rules the restoration levels `levels` (of `depth`)
/// read: those they compute.
fn level_reads(levels: std::ops::RangeInclusive<usize>, depth: usize) -> [bool; BLOCK_BYTES] {
    let mut reads = [false; BLOCK_BYTES];
    for t in levels {
        for (i, c) in computed(t, depth).iter().enumerate() {
            reads[i] |= c;
        }
    }
    reads
}

/// The inverse transform of the chosen slot (`chosen`: one flag per slot)
/// on its `symbols` (stream position `o` at bit `255 - o`): the inverse
/// reorder of the form's class with the chosen slot's settings
/// (`slot_route`; Benes classes: the network with its stages reversed,
/// `slot_xored`), the planes from the top (`slot_plane<q>`), the residues
/// (`slot_residue`).
fn slot_inverse(
    m: &mut Module,
    ctl: &SlotCtl,
    set: &ModelSet,
    chosen: &[Expr],
    symbols: &Expr,
) -> Result<Expr, IrError> {
    let settings = chosen_bits(m, "slot_route", chosen, &ctl.routes)?;
    let stream = |o: usize| symbols.bit(STREAM_BITS as u32 - 1 - o as u32);
    // natural[n]: natural bit n (docs/spec/mpc.md 3.3: n = 32 * (7 - p) + j)
    let natural: Vec<Expr> = match ctl.form.reorder {
        ReorderClass::Partition | ReorderClass::ColumnsPartition => {
            let y: Vec<Expr> = (0..STREAM_BITS).map(stream).collect::<Result<_, _>>()?;
            slots::benes_inverse(m, "slot_benes", &settings, &y)?
        }
        ReorderClass::Columns => {
            // column position q: stream bits 8q..8q+7, top plane first
            let y: Vec<Expr> = (0..BLOCK_BYTES as u32)
                .map(|q| symbols.slice(255 - 8 * q, 248 - 8 * q))
                .collect::<Result<_, _>>()?;
            let cols = slots::benes_inverse(m, "slot_benes", &settings, &y)?;
            // natural bit 32t + c is plane t from the top of column c
            (0..STREAM_BITS as u32)
                .map(|n| cols[(n % 32) as usize].bit(7 - n / 32))
                .collect::<Result<_, _>>()?
        }
        ReorderClass::Library => {
            // entry l: 0 the identity, 1 + j hard-wired predictor j's
            let index = Expr::concat(settings.iter().rev().cloned())?;
            let mut reorders: Vec<[u8; STREAM_BITS]> = vec![std::array::from_fn(|o| o as u8)];
            reorders.extend(set.predictors.iter().map(|p| p.reorder));
            let picks: Vec<Expr> = (0..reorders.len())
                .map(|l| eq_const(&index, l as u128))
                .collect::<Result<_, _>>()?;
            let mut positions = vec![[0usize; STREAM_BITS]; reorders.len()];
            for (l, r) in reorders.iter().enumerate() {
                for (o, &n) in r.iter().enumerate() {
                    positions[l][n as usize] = o;
                }
            }
            (0..STREAM_BITS)
                .map(|n| {
                    let from: Vec<Expr> = positions
                        .iter()
                        .map(|pos| stream(pos[n]))
                        .collect::<Result<_, _>>()?;
                    onehot_mux(&picks, &from)
                })
                .collect::<Result<_, _>>()?
        }
        ReorderClass::Any => {
            return Err(IrError::InvalidIdentifier {
                name: ctl.form.name.to_string(),
                reason: "slot forms with any reorder are not built in RTL".to_string(),
            })
        }
    };
    // the XORed planes: plane q (from the bottom) at bits 32q+31..32q
    let mut xbits = Vec::with_capacity(STREAM_BITS);
    for q in (0..8usize).rev() {
        for j in (0..32usize).rev() {
            xbits.push(natural[32 * (7 - q) + j].clone());
        }
    }
    let xored = wire(m, "slot_xored", Expr::concat(xbits)?)?;
    // planes from the top, as the hard-wired inverse transform
    let mut acc: Vec<Expr> = (0..8u32)
        .map(|q| xored.slice(32 * q + 31, 32 * q))
        .collect::<Result<_, _>>()?;
    for span in [1usize, 2, 4] {
        let prev = acc.clone();
        for q in 0..8 - span {
            acc[q] = prev[q].xor(&prev[q + span])?;
        }
    }
    let planes: Vec<Expr> = acc
        .into_iter()
        .enumerate()
        .map(|(q, e)| wire(m, &format!("slot_plane{q}"), e))
        .collect::<Result<_, _>>()?;
    let bytes: Vec<Expr> = (0..32u32)
        .map(|j| {
            Expr::concat(
                (0..8)
                    .rev()
                    .map(|q| planes[q].bit(j))
                    .collect::<Result<Vec<_>, _>>()?,
            )
        })
        .collect::<Result<_, _>>()?;
    wire(m, "slot_residue", block_of(bytes)?)
}

/// Whether the value of byte `b` after level `t` (of `depth`; 0: the
/// residues) is read: by the output after the last level; else a byte at
/// or below `t` is final and kept, and a byte above is read only as the
/// base of a byte level `t + 1` computes.
fn needed(t: usize, depth: usize) -> [bool; BLOCK_BYTES] {
    if t >= depth {
        return [true; BLOCK_BYTES];
    }
    let mut out: [bool; BLOCK_BYTES] = std::array::from_fn(|b| b <= t);
    for (i, c) in computed(t + 1, depth).iter().enumerate() {
        if *c {
            for s in golden::mpc::program::STRIDES {
                if let Some(b) = i.checked_sub(s as usize) {
                    out[b] = true;
                }
            }
        }
    }
    out
}

/// The bytes level `t` (of `depth`) computes: a byte whose base chain can
/// be `t` long (byte `i`'s is at most `i`: bytes below `t` are final) and
/// whose value is read after the level.
fn computed(t: usize, depth: usize) -> [bool; BLOCK_BYTES] {
    let read = needed(t, depth);
    std::array::from_fn(|i| i >= t && read[i])
}

/// Restoration levels `levels` (1-based, of `depth`) of the chosen slot,
/// from its residues and the bytes after the level before (`restored`;
/// `None`: a byte nothing reads any more): at level `t` every byte is its
/// residue plus the stride prediction from its base's value after level
/// `t - 1` (roots: the residue), so after level `t` every byte whose base
/// chain is at most `t` long has its final value. A level computes only
/// the bytes of [`computed`] (`slot_level<t>`: those bytes, the lowest in
/// the low bits) and keeps the final ones.
fn slot_levels(
    m: &mut Module,
    levels: std::ops::RangeInclusive<usize>,
    depth: usize,
    residue: &[Option<Expr>],
    mut restored: Vec<Option<Expr>>,
    rules: &[Option<(Expr, Expr)>],
) -> Result<Vec<Option<Expr>>, IrError> {
    for t in levels {
        let read = needed(t, depth);
        let todo = computed(t, depth);
        // bases the level reads (a byte nothing reads is never a base)
        let before: Vec<Expr> = restored
            .iter()
            .map(|b| b.clone().map_or_else(|| k(0, 8), Ok))
            .collect::<Result<_, _>>()?;
        let mut next: Vec<Option<Expr>> = vec![None; BLOCK_BYTES];
        for i in 0..BLOCK_BYTES {
            if todo[i] {
                let (cand, kcode) = rules[i].as_ref().ok_or(IrError::EmptyConcat)?;
                let name = format!("slot_level{t}_b{i}");
                let pred = slots::stride_prediction(m, &name, &before, i, cand, kcode)?;
                let r = residue[i].as_ref().ok_or(IrError::EmptyConcat)?;
                next[i] = Some(r.add(&pred)?);
            } else if read[i] {
                next[i] = restored[i].clone();
            }
        }
        let made: Vec<Expr> = (0..BLOCK_BYTES)
            .filter(|&i| todo[i])
            .filter_map(|i| next[i].clone())
            .collect();
        let bus = wire(
            m,
            &format!("slot_level{t}"),
            Expr::concat(made.into_iter().rev())?,
        )?;
        for (at, i) in (0..BLOCK_BYTES).filter(|&i| todo[i]).enumerate() {
            let at = at as u32;
            next[i] = Some(bus.slice(8 * at + 7, 8 * at)?);
        }
        restored = next;
    }
    Ok(restored)
}

/// Register the bytes of `bytes` that are there as `s<stage>_<name>` (the
/// lowest byte in the low bits) and read them back from the register.
fn register_bytes(
    u: &mut StreamUnit,
    stage: usize,
    name: &str,
    bytes: &mut [Option<Expr>],
) -> Result<(), IrError> {
    let kept: Vec<Expr> = bytes.iter().flatten().cloned().collect();
    let r = u.reg(stage, name, Expr::concat(kept.into_iter().rev())?)?;
    for (at, b) in bytes.iter_mut().filter(|b| b.is_some()).enumerate() {
        let at = at as u32;
        *b = Some(r.slice(8 * at + 7, 8 * at)?);
    }
    Ok(())
}

/// Restoration levels per stage of the slot restoration stages: the
/// form's depth bound spread evenly over `stages`, the earlier stages
/// taking the remainder.
fn level_plan(depth: usize, stages: usize) -> Vec<std::ops::RangeInclusive<usize>> {
    let mut plan = Vec::with_capacity(stages);
    let mut first = 1;
    for i in 0..stages {
        let n = depth / stages + usize::from(i < depth % stages);
        plan.push(first..=first + n - 1);
        first += n;
    }
    plan
}
