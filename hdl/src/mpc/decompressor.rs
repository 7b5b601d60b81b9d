//! The 4-stage MPC decompressor (docs/hw/mpc-decompressor.md).
//!
//! * Stage 1 — header and codes 0..7: the header is decoded, then eight
//!   decode steps each take the code at the head of the payload stream,
//!   write its symbol, and shift the stream left by the code length.
//!   Registers: `s1_model_id`, `s1_stream`, `s1_symbols`, `s1_sym_index`,
//!   `s1_used`, `s1_len`, `s1_error`.
//! * Stage 2 — codes 8..15 and the length checks. Registers: `s2_symbols`,
//!   `s2_payload` (raw/same-words payload), `s2_model_id`, `s2_error`.
//! * Stage 3 — inverse transform: per predictor (wires only) inverse
//!   reorder, inverse XOR, planes to residues; the chosen model's residues
//!   (or the raw payload bytes) are registered: `s3_residue`, `s3_model_id`,
//!   `s3_error`.
//! * Stage 4 — restoration along each predictor's base trees (adders), the
//!   custom models, and the output mux: `s4_block`, `s4_error`, `s4_model`.

use golden::mpc::{ByteRule, ModelSet, Predictor, SYMBOLS};

use super::compressor::LEN_WIDTH;
use super::probes::{Probes, When};
use super::table1::priority;
use crate::circuits::{block_of, byte, eq_const, k, onehot_mux, wire, Pipeline};
use crate::ir::{Expr, IrError, Module};
use crate::unit::UnitDescription;

/// Decoder state between steps.
#[derive(Clone)]
struct State {
    stream: Expr,
    symbols: Expr,
    index: Expr,
    used: Expr,
    error: Expr,
}

/// One decode step (docs/spec/mpc.md section 4), active while `active`
/// (a predictor model and fewer than 16 symbols decoded).
fn step(
    m: &mut Module,
    n: usize,
    st: &State,
    is_pred: &Expr,
    keep_bits: u32,
) -> Result<State, IrError> {
    let name = format!("dec{n}");
    let head = wire(m, &format!("{name}_head"), st.stream.slice(255, 239)?)?;
    let active = wire(
        m,
        &format!("{name}_active"),
        is_pred.and(&st.index.cmp_lt(&k(16, 5)?)?)?,
    )?;
    let is_default = head.bit(16)?;
    let top3 = head.slice(16, 14)?;
    let top4 = head.slice(16, 13)?;
    let is_run = eq_const(&top3, 0b010)?;
    let is_single = eq_const(&top3, 0b011)?;
    let is_zero = eq_const(&top4, 0b0011)?;
    let is_pair = eq_const(&top4, 0b0000)?;
    let is_front = eq_const(&top4, 0b0001)?;
    let f4 = head.slice(13, 10)?; // run length / single position
    let q_pair = head.slice(12, 9)?;
    let half = head.slice(12, 5)?;
    let len = priority(
        &[
            (is_default.clone(), k(17, 5)?),
            (is_run.or(&is_single)?, k(7, 5)?),
            (is_zero.clone(), k(4, 5)?),
            (is_pair.clone(), k(8, 5)?),
        ],
        k(12, 5)?,
    )?;
    let len = wire(m, &format!("{name}_len"), len)?;
    let count = wire(
        m,
        &format!("{name}_count"),
        Expr::mux(&is_run, &f4.zext(5)?, &k(1, 5)?)?,
    )?;
    // symbol values
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
            (is_default.clone(), head.slice(15, 0)?),
            (is_single.clone(), Expr::concat(single_bits)?),
            (is_pair.clone(), Expr::concat(pair_bits)?),
            (is_front.clone(), half.zext(16)?),
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
    let next_index = st.index.add(&count)?;
    let overflow = next_index.cmp_gt(&k(16, 5)?)?;
    let bad = wire(
        m,
        &format!("{name}_bad"),
        active.and(&invalid.or(&overflow)?)?,
    )?;
    // write the value into symbol slot `index`
    let mut slots = Vec::with_capacity(SYMBOLS);
    for s in 0..SYMBOLS {
        let hi = 255 - 16 * s as u32;
        let old = st.symbols.slice(hi, hi - 15)?;
        let here = active.and(&eq_const(&st.index, s as u128)?)?;
        slots.push(old.or(&value.and(&here.repeat(16)?)?)?);
    }
    let shifted = priority(
        &[
            (is_default, st.stream.shl(17)),
            (is_run.or(&is_single)?, st.stream.shl(7)),
            (is_zero, st.stream.shl(4)),
            (is_pair, st.stream.shl(8)),
        ],
        st.stream.shl(12),
    )?;
    Ok(State {
        // Later steps read at most 17 bits each from the top of the
        // stream, so only the top `keep_bits` are kept.
        stream: match keep_bits {
            0 => k(0, 256)?,
            256 => wire(
                m,
                &format!("{name}_stream"),
                Expr::mux(&active, &shifted, &st.stream)?,
            )?,
            kb => {
                let next = Expr::mux(&active, &shifted, &st.stream)?.slice(255, 256 - kb)?;
                Expr::concat([wire(m, &format!("{name}_stream"), next)?, k(0, 256 - kb)?])?
            }
        },
        symbols: wire(m, &format!("{name}_symbols"), Expr::concat(slots)?)?,
        index: wire(
            m,
            &format!("{name}_index"),
            Expr::mux(&active, &next_index, &st.index)?,
        )?,
        used: wire(
            m,
            &format!("{name}_used"),
            Expr::mux(&active, &st.used.add(&len.zext(LEN_WIDTH)?)?, &st.used)?,
        )?,
        error: wire(m, &format!("{name}_error"), st.error.or(&bad)?)?,
    })
}

/// Stage-3 inverse transform of one predictor: symbols -> residues.
fn inverse_transform(
    m: &mut Module,
    probes: &mut Probes,
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
        3,
        &format!("inv_xored_p{p}"),
        Expr::concat(xbits)?,
        "xored",
        when,
    )?;
    // planes from the top: P7 = X7, Pq = Xq ^ P(q+1)
    let mut planes: Vec<Expr> = vec![k(0, 32)?; 8];
    planes[7] = xored.slice(255, 224)?;
    for q in (0..7u32).rev() {
        let x = xored.slice(32 * q + 31, 32 * q)?;
        planes[q as usize] = probes.wire(
            m,
            3,
            &format!("inv_plane{q}_p{p}"),
            x.xor(&planes[q as usize + 1])?,
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
        3,
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
        4,
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
/// included).
pub fn build_described(set: &ModelSet) -> Result<(Module, UnitDescription), IrError> {
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
    let pipe = Pipeline::new(
        &mut m,
        super::DECOMPRESSOR_LATENCY as usize,
        &in_valid,
        &out_ready,
    )?;
    m.assign(&in_ready, pipe.enable[0].clone())?;
    m.assign(&out_valid, pipe.valid[3].expr())?;

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

    pipe.stage(&mut m, 1, "header, codes 0..7")?;
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
    let (preds0, _, _, _) = kind_flags(&mut m, &id, 0)?;
    let is_pred0 = wire(
        &mut m,
        "s0_is_predictor",
        preds0
            .iter()
            .skip(1)
            .try_fold(preds0[0].clone(), |a, b| a.or(b))?,
    )?;
    let mut st = State {
        stream: in_bits.slice(wbits - h - 1, 0)?,
        symbols: k(0, 256)?,
        index: k(0, 5)?,
        used: k(h as u128, LEN_WIDTH)?,
        error: bad_id.or(&too_long)?,
    };
    for n in 0..8 {
        st = step(&mut m, n, &st, &is_pred0, 256)?;
    }
    let s1_model_id = pipe.reg(&mut m, 1, "model_id", id)?;
    let s1_stream = pipe.reg(&mut m, 1, "stream", st.stream)?;
    let s1_symbols = pipe.reg(&mut m, 1, "symbols", st.symbols)?;
    let s1_sym_index = pipe.reg(&mut m, 1, "sym_index", st.index)?;
    let s1_used = pipe.reg(&mut m, 1, "used", st.used)?;
    let s1_len = pipe.reg(&mut m, 1, "len", in_len)?;
    let s1_error = pipe.reg(&mut m, 1, "error", st.error)?;
    for (name, mirrors, when, with) in [
        ("model_id", "model_id", When::Accepted, None),
        ("error", "error", When::Accepted, None),
        ("len", "len", When::Always, None),
        ("symbols", "symbols", When::Predictor, Some("sym_index")),
        ("used", "used", When::Predictor, Some("sym_index")),
    ] {
        probes.record_reg(&m, 1, name, mirrors, when, with)?;
    }

    pipe.stage(&mut m, 2, "codes 8..15, length checks")?;
    let (preds1, zero1, same1, raw1) = kind_flags(&mut m, &s1_model_id, 1)?;
    let is_pred1 = wire(
        &mut m,
        "s1_is_predictor",
        preds1
            .iter()
            .skip(1)
            .try_fold(preds1[0].clone(), |a, b| a.or(b))?,
    )?;
    let mut st = State {
        stream: s1_stream.clone(),
        symbols: s1_symbols,
        index: s1_sym_index,
        used: s1_used,
        error: s1_error,
    };
    for n in 8..16 {
        st = step(&mut m, n, &st, &is_pred1, (17 * (15 - n) as u32).min(256))?;
    }
    let expected_len = priority(
        &[
            (zero1, k(h as u128, LEN_WIDTH)?),
            (same1, k(h as u128 + 32, LEN_WIDTH)?),
            (raw1, k(h as u128 + 256, LEN_WIDTH)?),
        ],
        st.used.clone(),
    )?;
    let incomplete = is_pred1.and(&st.index.cmp_ne(&k(16, 5)?)?)?;
    let length_bad = expected_len.cmp_ne(&s1_len)?;
    let error2 = wire(
        &mut m,
        "s2_error_d",
        st.error.or(&incomplete)?.or(&length_bad)?,
    )?;
    let s2_symbols = pipe.reg(&mut m, 2, "symbols", st.symbols)?;
    let s2_payload = pipe.reg(&mut m, 2, "payload", s1_stream)?;
    let s2_model_id = pipe.reg(&mut m, 2, "model_id", s1_model_id)?;
    let s2_error = pipe.reg(&mut m, 2, "error", error2)?;
    for (name, mirrors, when) in [
        ("symbols", "symbols", When::Predictor),
        ("model_id", "model_id", When::Accepted),
        ("error", "error", When::Accepted),
    ] {
        probes.record_reg(&m, 2, name, mirrors, when, None)?;
    }

    pipe.stage(&mut m, 3, "inverse transforms, residue select")?;
    let (preds2, _, same2, raw2) = kind_flags(&mut m, &s2_model_id, 2)?;
    let residues: Vec<Expr> = set
        .predictors
        .iter()
        .enumerate()
        .map(|(p, pr)| {
            inverse_transform(&mut m, &mut probes, p, set.predictor_id(p), pr, &s2_symbols)
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
    let s3_residue = pipe.reg(&mut m, 3, "residue", residue)?;
    let s3_model_id = pipe.reg(&mut m, 3, "model_id", s2_model_id)?;
    let s3_error = pipe.reg(&mut m, 3, "error", s2_error)?;
    for (name, mirrors, when) in [
        ("residue", "residue", When::Predictor),
        // raw: the payload bytes are the block
        ("residue", "block", When::Model(set.raw_id())),
        ("model_id", "model_id", When::Accepted),
        ("error", "error", When::Accepted),
    ] {
        probes.record_reg(&m, 3, name, mirrors, when, None)?;
    }

    pipe.stage(&mut m, 4, "restoration, custom models, output")?;
    let (preds3, _, same3, raw3) = kind_flags(&mut m, &s3_model_id, 3)?;
    let mut sel = Vec::new();
    let mut vals = Vec::new();
    for (p, pr) in set.predictors.iter().enumerate() {
        sel.push(preds3[p].clone());
        vals.push(restore(
            &mut m,
            &mut probes,
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
    let s4_block = pipe.reg(&mut m, 4, "block", block)?;
    let s4_error = pipe.reg(&mut m, 4, "error", s3_error)?;
    let s4_model = pipe.reg(&mut m, 4, "model", s3_model_id)?;
    for (name, mirrors, when) in [
        // all zero when the golden model rejects the input
        ("block", "block", When::Always),
        ("error", "error", When::Always),
        ("model", "model_id", When::Accepted),
    ] {
        probes.record_reg(&m, 4, name, mirrors, when, None)?;
    }
    m.assign(&out_block, s4_block)?;
    m.assign(&out_error, s4_error)?;
    m.assign(&out_model, s4_model)?;
    let unit = pipe.describe(&m, probes.list);
    Ok((m, unit))
}
