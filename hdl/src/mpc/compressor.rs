//! The 3-stage MPC compressor (docs/hw/mpc-compressor.md).
//!
//! * Stage 1 — predict, transform, score and select: every predictor's
//!   residues, Gray-coded bit-planes and reorder (wires only, hard-wired
//!   from the model file), its zero-symbol mask and score, the custom-model
//!   tests, and the selection rule. Registers: `s1_choice_id`,
//!   `s1_symbols` (the chosen predictor's symbols), `s1_block`.
//! * Stage 2 — codes: the Table-1 code of each symbol position (left-aligned
//!   in a 17-bit slot, zero runs emitted at their first symbol; same-words
//!   and zero-block payloads use the same slots), slots side by side in
//!   pairs, and the raw check, by counting code classes
//!   ([`saves_at_most_16`]): a raw block's bytes replace the pairs.
//!   Registers: `s2_pairs`, `s2_pair_lens`, `s2_model` (the model ID after
//!   the raw check).
//! * Stage 3 — pack: a tree of variable shifters concatenates the 8 pairs
//!   behind the header; the payload length is the sum of the pair lengths.
//!   Registers: `s3_bits`, `s3_len`, `s3_model`.

use golden::mpc::{ByteRule, ModelSet, Predictor, Selection, BLOCK_BYTES, STREAM_BITS, SYMBOLS};

use super::probes::{Probes, When};
use super::slots::{
    self, library_reorder, stride_prediction, BenesPlan, ConfigBlock, ConfigOutputs, ConfigPorts,
    Ids, RouteClass, SlotSpec,
};
use super::table1::{self, ALL_ZERO_LEN, LEN_BITS, RUN_LEN, SLOT, SYMBOL_BITS, ZERO_LEN};
use super::COMPRESSOR_STAGES;
use crate::circuits::{
    bits_for, block_of, byte, eq_const, k, onehot_mux, onehot_to_binary, shr_var, sub_prefix_gray,
    sum, wire,
};
use crate::ir::{Expr, IrError, Module};
use crate::stream::StreamUnit;
use crate::unit::UnitDescription;
use crate::unit::{CandidateField, Mirror};

/// Width of the `len` ports.
pub const LEN_WIDTH: u32 = 9;
/// Width of the length of two code slots side by side (at most 34).
const PAIR_LEN_BITS: u32 = 6;

/// Symbol `m` ([`SYMBOL_BITS`] bits) of a 256-bit symbol bus (symbol 0 in
/// the MSBs).
pub fn symbol(bus: &Expr, m: usize) -> Result<Expr, IrError> {
    let hi = STREAM_BITS as u32 - 1 - SYMBOL_BITS * m as u32;
    bus.slice(hi, hi + 1 - SYMBOL_BITS)
}

/// Predictor `pr`'s prediction of `block` (wires and constant shifts).
fn prediction(pr: &Predictor, block: &Expr) -> Result<Expr, IrError> {
    let mut preds = Vec::with_capacity(32);
    for rule in pr.bytes.iter() {
        preds.push(match *rule {
            ByteRule::Root => k(0, 8)?,
            ByteRule::Base { base, shift } => {
                let b = byte(block, base as usize)?;
                if shift >= 0 {
                    b.shl(shift as u32)
                } else {
                    b.shr((-shift) as u32)
                }
            }
        });
    }
    block_of(preds)
}

/// Byte-wise `block - pred` (32 8-bit subtractors, each a prefix tree) and
/// the byte-wise Gray code of it (`r ^ (r >> 1)`, one mux on each carry:
/// [`sub_prefix_gray`]).
fn residues(
    m: &mut Module,
    name: &str,
    block: &Expr,
    pred: &Expr,
) -> Result<(Expr, Expr), IrError> {
    sub_prefix_gray(m, name, block, pred, 8)
}

/// The bit-planes of a residue block: plane q, column j at bit 32q + j.
fn planes_of(residue: &Expr) -> Result<Expr, IrError> {
    let mut plane_bits = Vec::with_capacity(STREAM_BITS);
    for q in (0..8u32).rev() {
        for j in (0..32u32).rev() {
            plane_bits.push(residue.bit(8 * j + q)?);
        }
    }
    Expr::concat(plane_bits)
}

/// Predictor `pr`'s reorder of the XORed planes: stream bit o (bus bit
/// 255-o) = natural[reorder[o]] (wires).
fn reordered(pr: &Predictor, xored: &Expr) -> Result<Expr, IrError> {
    let mut stream = Vec::with_capacity(STREAM_BITS);
    for &n in pr.reorder.iter() {
        let n = n as u32;
        let (q, j) = (7 - n / 32, n % 32);
        stream.push(xored.bit(32 * q + j)?);
    }
    Expr::concat(stream)
}

/// Stage-1 logic of one predictor: prediction, residues, planes, XOR and
/// reorder. Returns the 256-bit symbol bus.
fn transform(
    m: &mut Module,
    probes: &mut Probes,
    p: usize,
    pr: &Predictor,
    block: &Expr,
) -> Result<Expr, IrError> {
    let field = |f: &str| format!("candidates[{p}].{f}");
    let pred = probes.wire(
        m,
        1,
        &format!("pred_p{p}"),
        prediction(pr, block)?,
        &field("pred"),
        When::Always,
    )?;
    let (diff, gray) = residues(m, &format!("residue_p{p}"), block, &pred)?;
    let residue = probes.wire(
        m,
        1,
        &format!("residue_p{p}"),
        diff,
        &field("residue"),
        When::Always,
    )?;
    // a probe only: the symbols are taken from the Gray code below
    let planes = probes.wire(
        m,
        1,
        &format!("planes_p{p}"),
        planes_of(&residue)?,
        &field("planes"),
        When::Always,
    )?;
    if let Some(sig) = planes.as_signal().cloned() {
        m.mark_unused(&sig, 255, 0)?;
    }
    let xored = probes.wire(
        m,
        1,
        &format!("xored_p{p}"),
        // the XOR of each plane with the one above, per column the Gray
        // code of the residue byte (computed with the subtraction)
        planes_of(&gray)?,
        &field("xored"),
        When::Always,
    )?;
    probes.wire(
        m,
        1,
        &format!("symbols_p{p}"),
        reordered(pr, &xored)?,
        &field("symbols"),
        When::Always,
    )
}

/// The chosen predictor's symbols computed again from the block (the
/// 4-stage compressor's stage 2): the prediction and the reorder are
/// one-hot selects by `onehot`, between them one set of subtractors and
/// XORs.
fn chosen_transform(
    m: &mut Module,
    set: &ModelSet,
    onehot: &[Expr],
    block: &Expr,
) -> Result<Expr, IrError> {
    let preds: Vec<Expr> = set
        .predictors
        .iter()
        .map(|pr| prediction(pr, block))
        .collect::<Result<_, _>>()?;
    let pred = wire(m, "chosen_pred", onehot_mux(onehot, &preds)?)?;
    let gray = residues(m, "chosen_residue", block, &pred)?.1;
    let xored = wire(m, "chosen_xored", planes_of(&gray)?)?;
    let streams: Vec<Expr> = set
        .predictors
        .iter()
        .map(|pr| reordered(pr, &xored))
        .collect::<Result<_, _>>()?;
    onehot_mux(onehot, &streams)
}

/// The zero-run score of one predictor's symbols, in the two forms the
/// selection compares fast: `runs[k-1]` is high when some run of at least
/// `k` zero symbols exists (a thermometer: the longest run is the number of
/// high flags), and the binary zero count.
struct ZeroRunKey {
    runs: Vec<Expr>,
    /// `counts[k-1]`: at least `k` zero symbols.
    counts: Vec<Expr>,
}

/// Batcher's odd-even merge sort of 1-bit values, ones first: a
/// comparator is an OR (to the lower place) and an AND (to the higher).
/// For a power-of-two count n, log2(n)(log2(n)+1)/2 comparator levels
/// (10 for 16). Bit `k` of the result is set when at least `k + 1` inputs
/// are.
///
/// The comparators run level by level (each as early as its inputs
/// allow); every level is a named wire `<name><level>`, so the Verilog
/// states each comparator once.
fn sort_ones_first(m: &mut Module, name: &str, bits: &[Expr]) -> Result<Vec<Expr>, IrError> {
    fn merge(lo: usize, n: usize, r: usize, pairs: &mut Vec<(usize, usize)>) {
        let step = 2 * r;
        if step < n {
            merge(lo, n, step, pairs);
            merge(lo + r, n, step, pairs);
            let mut i = lo + r;
            while i + r < lo + n {
                pairs.push((i, i + r));
                i += step;
            }
        } else {
            pairs.push((lo, lo + r));
        }
    }
    fn sort(lo: usize, n: usize, pairs: &mut Vec<(usize, usize)>) {
        if n > 1 {
            let half = n / 2;
            sort(lo, half, pairs);
            sort(lo + half, half, pairs);
            merge(lo, n, 1, pairs);
        }
    }
    let n = bits.len().next_power_of_two();
    let mut v: Vec<Expr> = bits.to_vec();
    v.resize(n, Expr::bool(false));
    let mut pairs = Vec::new();
    sort(0, n, &mut pairs);
    // level of each comparator: one past the last level that touched
    // either of its places
    let mut depth = vec![0usize; n];
    let mut levels: Vec<Vec<(usize, usize)>> = Vec::new();
    for (i, j) in pairs {
        let l = depth[i].max(depth[j]);
        depth[i] = l + 1;
        depth[j] = l + 1;
        if levels.len() <= l {
            levels.push(Vec::new());
        }
        levels[l].push((i, j));
    }
    for (l, level) in levels.iter().enumerate() {
        for &(i, j) in level {
            let (a, b) = (v[i].clone(), v[j].clone());
            v[i] = a.or(&b)?;
            v[j] = a.and(&b)?;
        }
        let bus = wire(
            m,
            &format!("{name}{}", l + 1),
            Expr::concat(v.iter().rev().cloned())?,
        )?;
        v = (0..n as u32)
            .map(|b| bus.bit(b))
            .collect::<Result<_, _>>()?;
    }
    v.truncate(bits.len());
    Ok(v)
}

/// Zero mask, longest run, zero count of one predictor's symbols. The run
/// flags come from a doubling ladder: `c_k` has a set bit where a run of
/// at least `k` zero symbols ends, `c_{a+b} = c_a & (c_b >> a)`, so every
/// flag is at most five ANDs deep.
fn zero_run_key(
    m: &mut Module,
    probes: &mut Probes,
    p: usize,
    symbols: &Expr,
) -> Result<ZeroRunKey, IrError> {
    let field = |f: &str| format!("candidates[{p}].score.{f}");
    let zero: Vec<Expr> = (0..SYMBOLS)
        .map(|s| Ok(symbol(symbols, s)?.reduce_or().not()))
        .collect::<Result<_, IrError>>()?;
    let mask = probes.wire(
        m,
        1,
        &format!("zero_mask_p{p}"),
        Expr::concat(zero.iter().rev().cloned())?,
        &field("zero_mask"),
        When::Always,
    )?;
    // ends[k]: bit i set where a run of >= k zeros ends at symbol i
    let mut ends: Vec<Expr> = vec![k(0, SYMBOLS as u32)?, mask.clone()];
    for len in 2..=SYMBOLS {
        let a = len.next_power_of_two() / 2;
        let b = len - a;
        let e = ends[a].and(&ends[b].shr(a as u32))?;
        ends.push(wire(m, &format!("zero_ends{len}_p{p}"), e)?);
    }
    let flags: Vec<Expr> = (1..=SYMBOLS)
        .rev()
        .map(|len| ends[len].reduce_or())
        .collect();
    // bit k-1: a run of at least k zero symbols exists
    let thermometer = probes.wire(
        m,
        1,
        &format!("zero_runs_p{p}"),
        Expr::concat(flags)?,
        &field("longest_zero_run.thermometer"),
        When::Always,
    )?;
    let runs: Vec<Expr> = (0..SYMBOLS as u32)
        .map(|b| thermometer.bit(b))
        .collect::<Result<_, _>>()?;
    let bits: Vec<Expr> = (0..SYMBOLS as u32)
        .map(|i| mask.bit(i))
        .collect::<Result<_, _>>()?;
    // the zero count as a thermometer too: the mask bits sorted, ones first
    let sorted = sort_ones_first(m, &format!("zero_sort_p{p}_l"), &bits)?;
    let count_thermometer = probes.wire(
        m,
        1,
        &format!("zero_counts_p{p}"),
        Expr::concat(sorted.into_iter().rev())?,
        &field("zero_count.thermometer"),
        When::Always,
    )?;
    let counts: Vec<Expr> = (0..SYMBOLS as u32)
        .map(|b| count_thermometer.bit(b))
        .collect::<Result<_, _>>()?;
    Ok(ZeroRunKey { runs, counts })
}

/// The scores the selection compares, per predictor.
enum Keys {
    /// One predictor: nothing to compare.
    None,
    ZeroRun(Vec<ZeroRunKey>),
    /// Code bits.
    Exact(Vec<Expr>),
    /// Code bits in [`SCORE_PARTS`] partial sums, per predictor.
    ExactParts(Vec<Vec<Expr>>),
}

impl Keys {
    /// The same scores through stage-1 registers
    /// (`s1_zero_runs_p<p>`, `s1_zero_counts_p<p>` or `s1_code_bits_p<p>`).
    fn registered(self, u: &mut StreamUnit) -> Result<Keys, IrError> {
        let bus =
            |u: &mut StreamUnit, name: String, flags: &[Expr]| -> Result<Vec<Expr>, IrError> {
                let r = u.reg(1, &name, Expr::concat(flags.iter().rev().cloned())?)?;
                (0..flags.len() as u32).map(|b| r.bit(b)).collect()
            };
        Ok(match self {
            Keys::None => Keys::None,
            Keys::ZeroRun(keys) => Keys::ZeroRun(
                keys.iter()
                    .enumerate()
                    .map(|(p, key)| {
                        Ok(ZeroRunKey {
                            runs: bus(u, format!("zero_runs_p{p}"), &key.runs)?,
                            counts: bus(u, format!("zero_counts_p{p}"), &key.counts)?,
                        })
                    })
                    .collect::<Result<_, IrError>>()?,
            ),
            Keys::Exact(keys) => Keys::Exact(
                keys.into_iter()
                    .enumerate()
                    .map(|(p, key)| u.reg(1, &format!("code_bits_p{p}"), key))
                    .collect::<Result<_, _>>()?,
            ),
            Keys::ExactParts(keys) => Keys::ExactParts(
                keys.into_iter()
                    .enumerate()
                    .map(|(p, parts)| registered_parts(u, 1, &format!("code_bits_p{p}"), parts))
                    .collect::<Result<_, _>>()?,
            ),
        })
    }
}

/// Whether zero-run key `a` beats `b`: a longer longest run, or the same
/// longest run and more zeros. Both compare as thermometers: `a` is
/// longer (has more) when some flag is set in `a` and clear in `b`.
fn zero_run_better(a: &ZeroRunKey, b: &ZeroRunKey) -> Result<Expr, IrError> {
    let longer = |x: &ZeroRunKey, y: &ZeroRunKey| -> Result<Expr, IrError> {
        let terms: Vec<Expr> = x
            .runs
            .iter()
            .zip(&y.runs)
            .map(|(fx, fy)| fx.and(&fy.not()))
            .collect::<Result<_, _>>()?;
        Ok(Expr::concat(terms)?.reduce_or())
    };
    let a_longer = longer(a, b)?;
    let same = a_longer.or(&longer(b, a)?)?.not();
    let more = |x: &[Expr], y: &[Expr]| -> Result<Expr, IrError> {
        let terms: Vec<Expr> = x
            .iter()
            .zip(y)
            .map(|(fx, fy)| fx.and(&fy.not()))
            .collect::<Result<_, _>>()?;
        Ok(Expr::concat(terms)?.reduce_or())
    };
    a_longer.or(&same.and(&more(&a.counts, &b.counts)?)?)
}

/// Encoded payload length of predictor `p`'s symbols (9 bits), a stage-1
/// probe.
fn code_bits(
    m: &mut Module,
    probes: &mut Probes,
    p: usize,
    symbols: &Expr,
) -> Result<Expr, IrError> {
    let name = format!("cand_p{p}");
    let (lens, _) = symbol_codes(m, &name, symbols, false)?;
    let total = sum(&lens, LEN_WIDTH)?;
    probes.wire(
        m,
        1,
        &format!("{name}_code_bits"),
        total,
        &format!("candidates[{p}].score.code_bits"),
        When::Always,
    )
}

/// Partial sums of a code length: each of [`SCORE_PARTS`] sums the code
/// lengths of [`SYMBOLS`]` / SCORE_PARTS` consecutive symbol positions.
pub const SCORE_PARTS: usize = 4;
/// Width of one partial sum (at most 4 x 17 = 68).
const PART_BITS: u32 = 7;

/// [`code_bits`] as [`SCORE_PARTS`] partial sums (no probe: the stage
/// that adds them names the total).
fn code_bit_parts(m: &mut Module, name: &str, symbols: &Expr) -> Result<Vec<Expr>, IrError> {
    let (lens, _) = symbol_codes(m, name, symbols, false)?;
    lens.chunks(SYMBOLS / SCORE_PARTS)
        .map(|c| sum(c, PART_BITS))
        .collect()
}

/// `parts` through registers `s<stage>_<name>_q<i>`.
fn registered_parts(
    u: &mut StreamUnit,
    stage: usize,
    name: &str,
    parts: Vec<Expr>,
) -> Result<Vec<Expr>, IrError> {
    parts
        .into_iter()
        .enumerate()
        .map(|(i, e)| u.reg(stage, &format!("{name}_q{i}"), e))
        .collect()
}

/// The code length from its partial sums.
fn parts_total(parts: &[Expr]) -> Result<Expr, IrError> {
    sum(parts, LEN_WIDTH)
}

/// Per symbol position: the code length and (if `with_codes`) the
/// left-aligned code.
fn symbol_codes(
    m: &mut Module,
    name: &str,
    symbols: &Expr,
    with_codes: bool,
) -> Result<(Vec<Expr>, Vec<Expr>), IrError> {
    let (lens, codes, _) = symbol_codes_classes(m, name, symbols, with_codes)?;
    Ok((lens, codes))
}

/// Per symbol: zero, coded in 7 or 8 bits (single 1, two 1s), coded in
/// 12 bits (a zero half). What [`saves_at_most_16`] reads.
struct CodeClasses {
    zero: Vec<Expr>,
    short: Vec<Expr>,
    half: Vec<Expr>,
}

/// [`symbol_codes`], and the symbols' [`CodeClasses`].
fn symbol_codes_classes(
    m: &mut Module,
    name: &str,
    symbols: &Expr,
    with_codes: bool,
) -> Result<(Vec<Expr>, Vec<Expr>, CodeClasses), IrError> {
    let mut classes = Vec::with_capacity(SYMBOLS);
    for s in 0..SYMBOLS {
        classes.push(table1::classify(
            m,
            &format!("{name}_sym{s}"),
            &symbol(symbols, s)?,
            with_codes,
        )?);
    }
    let zero: Vec<Expr> = classes.iter().map(|c| c.zero.clone()).collect();
    let mut short = Vec::with_capacity(SYMBOLS);
    let mut half = Vec::with_capacity(SYMBOLS);
    for c in &classes {
        let sp = c.single.or(&c.pair)?;
        short.push(sp.clone());
        half.push(c.zero.or(&sp)?.not().and(&c.front.or(&c.back)?)?);
    }
    let facts = CodeClasses {
        zero: zero.clone(),
        short,
        half,
    };
    let runs = table1::zero_runs(m, name, &zero)?;
    let mut lens = Vec::with_capacity(SYMBOLS);
    let mut codes = Vec::with_capacity(SYMBOLS);
    for (s, c) in classes.iter().enumerate() {
        let sym = symbol(symbols, s)?;
        let zlen = table1::zero_len(&runs, s)?;
        let len = Expr::mux(&c.zero, &zlen, &table1::nonzero_len(c)?)?;
        lens.push(wire(m, &format!("{name}_len{s}"), len)?);
        if !with_codes {
            continue;
        }
        // zero-symbol codes: one zero, a run, or (symbol 0, all zero) run
        // 15 + one zero
        let run = table1::run_length(&zero, s)?;
        let run_code = Expr::concat([k(0b010, 3)?, run.slice(3, 0)?, k(0, SLOT - RUN_LEN)?])?;
        let full = Expr::concat([
            k(0b010_1111_0011, ALL_ZERO_LEN)?,
            k(0, SLOT - ALL_ZERO_LEN)?,
        ])?;
        let one = Expr::concat([k(0b0011, ZERO_LEN)?, k(0, SLOT - ZERO_LEN)?])?;
        let all = if s == 0 {
            runs.all.clone()
        } else {
            Expr::bool(false)
        };
        let zcode = table1::priority(&[(runs.single[s].clone(), one), (all, full)], run_code)?;
        let zcode = Expr::mux(&runs.start[s], &zcode, &k(0, SLOT)?)?;
        let code = Expr::mux(&c.zero, &zcode, &table1::nonzero_code(c, &sym)?)?;
        codes.push(wire(m, &format!("{name}_code{s}"), code)?);
    }
    Ok((lens, codes, facts))
}

/// `at_least(bits, cap)[k-1]`: at least `k` of `bits` are set, for
/// `k = 1..=cap` (a thermometer saturating at `cap`), by a tree of merges
/// `t[k] = a[k] | b[k] | OR(a[i] & b[k-i])`.
fn at_least(bits: &[Expr], cap: usize) -> Result<Vec<Expr>, IrError> {
    if bits.len() == 1 {
        let mut t = vec![bits[0].clone()];
        t.resize(cap, Expr::bool(false));
        return Ok(t);
    }
    let (lo, hi) = bits.split_at(bits.len() / 2);
    let (a, b) = (at_least(lo, cap)?, at_least(hi, cap)?);
    (1..=cap)
        .map(|k| {
            let mut t = a[k - 1].or(&b[k - 1])?;
            for i in 1..k {
                t = t.or(&a[i - 1].and(&b[k - i - 1])?)?;
            }
            Ok(t)
        })
        .collect()
}

/// Whether 16 symbols of these classes take 256 code bits or more, i.e.
/// save at most 16 bits against 16 default codes (272 bits). A code saves
/// 17 - its length: 5 (12-bit codes), 9 or 10 (two 1s, single 1), 13 (one
/// zero); two or more zero symbols save at least 26 (a run of two: 27, two
/// single zeros: 26). So the codes save at most 16 exactly when there is
/// one zero symbol and every other symbol is a default code, or no zero
/// symbol and at most three 12-bit codes, or no zero symbol, one 7- or
/// 8-bit code and at most one 12-bit code. Counting to four is shallower
/// than adding the 16 lengths.
fn saves_at_most_16(c: &CodeClasses) -> Result<Expr, IrError> {
    let z = at_least(&c.zero, 2)?;
    let s = at_least(&c.short, 2)?;
    let h = at_least(&c.half, 4)?;
    let (z0, z1) = (z[0].not(), z[0].and(&z[1].not())?);
    let (s0, s1) = (s[0].not(), s[0].and(&s[1].not())?);
    let one_zero = z1.and(&s0)?.and(&h[0].not())?;
    let few_halves = s0.and(&h[3].not())?;
    let one_short = s1.and(&h[1].not())?;
    one_zero.or(&z0.and(&few_halves.or(&one_short)?)?)
}

/// Select the best predictor, as a linear scan in model order that replaces
/// the best only on a strictly better key would (ties keep the lowest ID),
/// but with every pair compared at once: predictor `p` is chosen when it
/// beats every lower one and no higher one beats it. `beats[p][q]` says
/// whether predictor `p`'s key beats predictor `q`'s. Returns the one-hot
/// choice (`select_p<p>`) and its binary index.
fn select_best(m: &mut Module, beats: &[Vec<Expr>]) -> Result<(Vec<Expr>, Expr), IrError> {
    let n = beats.len();
    let iw = bits_for(n.saturating_sub(1) as u64);
    let mut onehot = Vec::with_capacity(n);
    for (p, row) in beats.iter().enumerate() {
        let mut win = Expr::bool(true);
        for (q, other) in beats.iter().enumerate() {
            if q < p {
                win = win.and(&row[q])?;
            } else if q > p {
                win = win.and(&other[p].not())?;
            }
        }
        onehot.push(wire(m, &format!("select_p{p}"), win)?);
    }
    let index = onehot_to_binary(&onehot, iw)?;
    Ok((onehot, index))
}

/// `beats[p][q] = better(key p, key q)` for every ordered pair `p != q`.
fn all_pairs<K>(
    keys: &[K],
    better: impl Fn(&K, &K) -> Result<Expr, IrError>,
) -> Result<Vec<Vec<Expr>>, IrError> {
    keys.iter()
        .enumerate()
        .map(|(p, a)| {
            keys.iter()
                .enumerate()
                .map(|(q, b)| {
                    if p == q {
                        Ok(Expr::bool(false))
                    } else {
                        better(a, b)
                    }
                })
                .collect()
        })
        .collect()
}

/// Build `mpc_compressor` for a model set.
pub fn build(set: &ModelSet) -> Result<Module, IrError> {
    Ok(build_described(set)?.0)
}

/// Build `mpc_compressor` for a model set, with its description (stage probes
/// included).
pub fn build_described(set: &ModelSet) -> Result<(Module, UnitDescription), IrError> {
    build_staged(set, super::COMPRESSOR_LATENCY as usize)
}

/// Build `mpc_compressor` with `stages` pipeline stages
/// ([`COMPRESSOR_STAGES`]): 3, or 4 with the selection and the chosen
/// predictor's transform in a stage of their own.
pub fn build_staged(set: &ModelSet, stages: usize) -> Result<(Module, UnitDescription), IrError> {
    super::check_stages("compressor pipeline stages", stages, &COMPRESSOR_STAGES)?;
    let h = set.header_bits();
    let mut u = StreamUnit::begin("mpc_compressor")?;
    let in_block = u.input("in_block", 8 * BLOCK_BYTES as u32)?;
    let mut u = u.outputs()?;
    let out_bits = u.output("out_bits", set.max_bits())?;
    let out_len = u.output("out_len", LEN_WIDTH)?;
    let out_model = u.output("out_model", h)?;
    let mut c = Compressor {
        set,
        u: u.pipeline(stages)?,
        probes: Probes::default(),
        h,
        split: stages == 4,
        slots: None,
        score_parts: false,
    };
    let scored = c.score_stage(&in_block)?;
    let selected = c.select(scored, &in_block)?;
    let coded = c.code_stage(&selected)?;
    let [bits, len, model] = c.pack_stage(selected.stage + 2, coded)?;
    c.u.drive(&out_bits, bits)?;
    c.u.drive(&out_len, len)?;
    c.u.drive(&out_model, model)?;
    c.u.finish(c.probes.list)
}

/// The compressor being built: its unit, its probes, and what every stage
/// needs to know of the model set.
struct Compressor<'a> {
    set: &'a ModelSet,
    u: StreamUnit,
    probes: Probes,
    /// Header (model ID) bits.
    h: u32,
    /// Whether the selection has a stage of its own (4 stages).
    split: bool,
    /// The programmable slots' configuration, for a unit with slots.
    slots: Option<ConfigBlock>,
    /// Whether stage 1 hands on exact scores as partial sums
    /// ([`Keys::ExactParts`]: the 5-stage compressor with slots).
    score_parts: bool,
}

/// What stage 1 computes: every predictor's symbols, the custom-model
/// tests and the predictors' scores.
struct Scored {
    symbols: Vec<Expr>,
    is_zero_block: Expr,
    is_same_words: Expr,
    keys: Keys,
}

/// The selection's registers (`s<stage>_choice_id`, `s<stage>_symbols`,
/// `s<stage>_block`) and their stage.
struct Selected {
    stage: usize,
    choice_id: Expr,
    symbols: Expr,
    block: Expr,
}

/// The code stage's registers: the slot pairs, their lengths and the
/// model ID after the raw check.
struct Coded {
    pairs: Expr,
    pair_lens: Expr,
    model: Expr,
}

impl Compressor<'_> {
    /// A named wire of stage `stage`, recorded as a probe.
    fn probe_wire(
        &mut self,
        stage: usize,
        name: &str,
        e: Expr,
        mirrors: &str,
        when: When,
    ) -> Result<Expr, IrError> {
        self.probes
            .wire(&mut self.u.m, stage, name, e, mirrors, when)
    }

    /// The register `s<stage>_<name>`, recorded as a probe.
    fn probe_reg(
        &mut self,
        stage: usize,
        name: &str,
        next: Expr,
        mirrors: &str,
        when: When,
    ) -> Result<Expr, IrError> {
        self.probes.reg(
            &mut self.u.m,
            &self.u.pipe,
            stage,
            name,
            next,
            mirrors,
            when,
        )
    }

    /// Stage 1: every predictor's transform and score, and the custom-model
    /// tests.
    fn score_stage(&mut self, in_block: &Expr) -> Result<Scored, IrError> {
        let set = self.set;
        self.u.stage(
            1,
            if self.split {
                "predict, transform, score"
            } else {
                "predict, transform, score, select"
            },
        )?;
        // with one predictor there is nothing to score under zero-run
        // selection, nor under exact selection without same-words (the only
        // model its code length competes with): the 4-stage compressor then
        // transforms only in stage 2
        let unscored = set.predictors.len() == 1
            && (set.selection == Selection::ZeroRun || !set.custom.same_words)
            && self.slots.is_none();
        let symbols: Vec<Expr> = if self.split && unscored {
            Vec::new()
        } else {
            set.predictors
                .iter()
                .enumerate()
                .map(|(p, pr)| transform(&mut self.u.m, &mut self.probes, p, pr, in_block))
                .collect::<Result<_, _>>()?
        };
        let (is_zero_block, is_same_words) = self.custom_tests(in_block)?;
        let (m, probes) = (&mut self.u.m, &mut self.probes);
        let keys = match set.selection {
            // a single predictor is always the one chosen: no score needed
            _ if unscored => Keys::None,
            Selection::ZeroRun => Keys::ZeroRun(
                symbols
                    .iter()
                    .enumerate()
                    .map(|(p, s)| zero_run_key(m, probes, p, s))
                    .collect::<Result<_, _>>()?,
            ),
            Selection::Exact if self.score_parts => Keys::ExactParts(
                symbols
                    .iter()
                    .enumerate()
                    .map(|(p, s)| code_bit_parts(m, &format!("cand_p{p}"), s))
                    .collect::<Result<_, _>>()?,
            ),
            Selection::Exact => Keys::Exact(
                symbols
                    .iter()
                    .enumerate()
                    .map(|(p, s)| code_bits(m, probes, p, s))
                    .collect::<Result<_, _>>()?,
            ),
        };
        Ok(Scored {
            symbols,
            is_zero_block,
            is_same_words,
            keys,
        })
    }

    /// The custom-model tests, only for the custom models the set has
    /// (constant false otherwise): zero block, same words.
    fn custom_tests(&mut self, in_block: &Expr) -> Result<(Expr, Expr), IrError> {
        let custom = &self.set.custom;
        let is_zero_block = if custom.zero_block {
            let e = in_block.reduce_or().not();
            self.probe_wire(1, "is_zero_block", e, "is_zero_block", When::Always)?
        } else {
            Expr::bool(false)
        };
        let is_same_words = if custom.same_words {
            let word0 = in_block.slice(31, 0)?;
            let mut same = Expr::bool(true);
            for w in 1..8u32 {
                same = same.and(&in_block.slice(32 * w + 31, 32 * w)?.cmp_eq(&word0)?)?;
            }
            self.probe_wire(1, "is_same_words", same, "is_same_words", When::Always)?
        } else {
            Expr::bool(false)
        };
        Ok((is_zero_block, is_same_words))
    }

    /// The selection (stage 1, or stage 2 of the 4-stage compressor, which
    /// registers the scores and the tests first): the best predictor, the
    /// chosen symbols and the model ID, registered.
    fn select(&mut self, scored: Scored, in_block: &Expr) -> Result<Selected, IrError> {
        let Scored {
            symbols,
            mut is_zero_block,
            mut is_same_words,
            mut keys,
        } = scored;
        let (stage, block) = if self.split {
            let custom = &self.set.custom;
            keys = keys.registered(&mut self.u)?;
            if custom.zero_block {
                is_zero_block = self.u.reg(1, "is_zero_block", is_zero_block)?;
            }
            if custom.same_words {
                is_same_words = self.u.reg(1, "is_same_words", is_same_words)?;
            }
            let b = self.probe_reg(1, "block", in_block.clone(), "block", When::Always)?;
            self.u
                .stage(2, "select, the chosen predictor's transform")?;
            (2, b)
        } else {
            (1, in_block.clone())
        };
        let m = &mut self.u.m;
        let (onehot, best, same_words_wins) = choose(m, keys)?;
        let best = self.probe_wire(
            stage,
            "best_predictor",
            best,
            "best_predictor",
            When::Always,
        )?;
        let m = &mut self.u.m;
        let chosen = if self.split {
            chosen_transform(m, self.set, &onehot, &block)?
        } else {
            onehot_mux(&onehot, &symbols)?
        };
        let chosen = wire(m, "chosen_symbols", chosen)?;
        let choice =
            self.choice_id(&best, &is_same_words.and(&same_words_wins)?, &is_zero_block)?;
        Ok(Selected {
            stage,
            choice_id: self.probe_reg(stage, "choice_id", choice, "choice_id", When::Always)?,
            symbols: self.probe_reg(stage, "symbols", chosen, "chosen.symbols", When::Predictor)?,
            block: self.probe_reg(stage, "block", block, "block", When::Always)?,
        })
    }

    /// The model ID chosen: the best predictor's, unless same-words wins
    /// (`same_words`) or the block is all zero (`zero_block`).
    fn choice_id(
        &self,
        best: &Expr,
        same_words: &Expr,
        zero_block: &Expr,
    ) -> Result<Expr, IrError> {
        let (set, h) = (self.set, self.h);
        let iw = h.max(best.width());
        let pred_id = best.zext(iw)?.add(&k(set.predictor_id(0) as u128, iw)?)?;
        self.custom_override(pred_id.trunc(h)?, same_words, zero_block)
    }

    /// `choice`, unless same-words wins (`same_words`) or the block is all
    /// zero (`zero_block`): their IDs.
    fn custom_override(
        &self,
        mut choice: Expr,
        same_words: &Expr,
        zero_block: &Expr,
    ) -> Result<Expr, IrError> {
        let (set, h) = (self.set, self.h);
        if let Some(id) = set.same_words_id() {
            choice = Expr::mux(same_words, &k(id as u128, h)?, &choice)?;
        }
        if let Some(id) = set.zero_block_id() {
            choice = Expr::mux(zero_block, &k(id as u128, h)?, &choice)?;
        }
        Ok(choice)
    }

    /// The code stage: the Table-1 code and length of each symbol position
    /// (or the same-words bytes), slots side by side in pairs, and the raw
    /// check that puts the block's bytes in the pairs instead; registered.
    fn code_stage(&mut self, sel: &Selected) -> Result<Coded, IrError> {
        let (set, h, cs) = (self.set, self.h, sel.stage + 1);
        self.u.stage(cs, "codes, lengths, raw check, slot pairs")?;
        let m = &mut self.u.m;
        let (lens, codes, facts) = symbol_codes_classes(m, "enc", &sel.symbols, true)?;
        // without custom models every choice is a predictor (a comparison
        // with ID 0 would be constant)
        let is_pred = if set.predictor_id(0) == 0 {
            Expr::bool(true)
        } else {
            sel.choice_id.cmp_ge(&k(set.predictor_id(0) as u128, h)?)?
        };
        let is_pred = wire(m, "choice_is_predictor", is_pred)?;
        let is_same = match set.same_words_id() {
            Some(id) => eq_const(&sel.choice_id, id as u128)?,
            None => Expr::bool(false),
        };
        let slots = slots(&lens, &codes, &is_pred, &is_same, &sel.block)?;
        let (mut pairs, mut pair_lens) = slot_pairs(m, &slots)?;
        // the raw check: a predictor's codes of 256 bits or more go raw, the
        // block's bytes in the pairs instead (32 bits each, in order)
        let to_raw = wire(m, "to_raw", is_pred.and(&saves_at_most_16(&facts)?)?)?;
        let code_bits = sum(&pair_lens, LEN_WIDTH)?;
        let probe = self.probe_wire(
            cs,
            "enc_code_bits",
            code_bits,
            "chosen.score.code_bits",
            When::Predictor,
        )?;
        // (a probe for the locator only: the raw check counts classes)
        if let Some(sig) = probe.as_signal().cloned() {
            self.u.m.mark_unused(&sig, LEN_WIDTH - 1, 0)?;
        }
        for (i, (pair, len)) in pairs.iter_mut().zip(pair_lens.iter_mut()).enumerate() {
            let raw = Expr::concat(
                (4 * i..4 * i + 4)
                    .map(|j| byte(&sel.block, j))
                    .chain([k(0, 2 * SLOT - 32)])
                    .collect::<Result<Vec<_>, _>>()?,
            )?;
            *pair = Expr::mux(&to_raw, &raw, pair)?;
            *len = Expr::mux(&to_raw, &k(32, PAIR_LEN_BITS)?, len)?;
        }
        let raw_id = match &self.slots {
            Some(cfg) => cfg.raw_id.clone(),
            None => k(set.raw_id() as u128, h)?,
        };
        let selected = Expr::mux(&to_raw, &raw_id, &sel.choice_id)?;
        let pairs = self.u.reg(cs, "pairs", Expr::concat(pairs)?)?;
        let pair_lens = self.u.reg(cs, "pair_lens", Expr::concat(pair_lens)?)?;
        self.probes.record_reg(
            &self.u.m,
            cs,
            "pairs",
            "output.payload.pairs",
            When::NotRaw,
            Some("pair_lens"),
        )?;
        let model = self.probe_reg(cs, "model", selected, "selected_id", When::Always)?;
        Ok(Coded {
            pairs,
            pair_lens,
            model,
        })
    }

    /// The pack stage: the pairs concatenated behind the header by a tree
    /// of variable shifters, the total length; registered
    /// (`s<ps>_bits`, `s<ps>_len`, `s<ps>_model`).
    fn pack_stage(&mut self, ps: usize, coded: Coded) -> Result<[Expr; 3], IrError> {
        self.u.stage(ps, "pack the pairs behind the header")?;
        let pair_width = 2 * SLOT;
        let level: Vec<(Expr, Expr)> = (0..SYMBOLS / 2)
            .map(|i| {
                let n = (SYMBOLS / 2 - i) as u32;
                let hi = pair_width * n - 1;
                let lhi = PAIR_LEN_BITS * n - 1;
                Ok((
                    coded.pairs.slice(hi, hi + 1 - pair_width)?,
                    coded.pair_lens.slice(lhi, lhi + 1 - PAIR_LEN_BITS)?,
                ))
            })
            .collect::<Result<_, IrError>>()?;
        let pair_len_list: Vec<Expr> = level.iter().map(|(_, l)| l.clone()).collect();
        // the payload length: the codes', 32 (same-words), 0 (zero block) or
        // 256 (raw: eight pairs of 32)
        let payload_len = sum(&pair_len_list, LEN_WIDTH)?;
        let payload = pack_pairs(&mut self.u.m, level)?;
        let mut bits = Expr::concat([coded.model.clone(), payload])?;
        let total_len = match &self.slots {
            None => payload_len.add(&k(self.h as u128, LEN_WIDTH)?)?,
            Some(cfg) => {
                // a header of h(L) < H bits: the block moves up by H - h(L)
                let excess = &cfg.header_excess;
                for b in 0..excess.width() {
                    bits = Expr::mux(&excess.bit(b)?, &bits.shl(1 << b), &bits)?;
                }
                payload_len.add(&cfg.header_bits.zext(LEN_WIDTH)?)?
            }
        };
        Ok([
            self.probe_reg(ps, "bits", bits, "output.bits", When::Always)?,
            self.probe_reg(ps, "len", total_len, "output.len", When::Always)?,
            self.probe_reg(ps, "model", coded.model, "output.model", When::Always)?,
        ])
    }
}

/// Benes levels of a slot's 256-bit reorder in stage 1; the others open
/// stage 2, before the slot's score.
pub const SLOT_STAGE1_LEVELS: usize = 8;

/// Build `mpc_compressor` with the programmable slots `spec` (at least one;
/// `docs/hw/program-slots.md`): [`slots::SLOT_COMPRESSOR_STAGES`] stages,
/// the configuration port, `out_epoch`, and the model IDs, raw ID and
/// header width of the active image.
///
/// * Stage 1: the hard-wired predictors' transforms and scores (as the
///   4-stage compressor), and per slot its stride prediction, residues,
///   XORed planes and the first [`SLOT_STAGE1_LEVELS`] levels of its
///   Benes network (the whole reorder for the column and library
///   classes), registered (`s1_slot_lanes_s<j>` / `s1_slot_symbols_s<j>`).
/// * Stage 2: the rest of each slot's reorder and its score; the best
///   hard-wired predictor by the registered scores and its transform
///   again; a loaded slot wins when its score beats the best hard-wired
///   one and every other loaded slot's by the set's rule (ties to the
///   lowest model ID).
/// * Stages 3 and 4: codes and pack, with the raw ID `C + P + L` and the
///   header of `h(L)` bits (the block shifted up by `H - h(L)`).
pub fn build_slots(set: &ModelSet, spec: SlotSpec) -> Result<(Module, UnitDescription), IrError> {
    build_slots_staged(set, spec, slots::SLOT_COMPRESSOR_STAGES)
}

/// [`build_slots`] with `stages` pipeline stages
/// ([`slots::SLOT_COMPRESSOR_STAGE_RANGE`]). With 5, stage 2 finishes the
/// slots' reorders and scores them and selects the best hard-wired
/// predictor, and stage 3 chooses among that predictor and the slots
/// (exact scores cross stage 1 as [`SCORE_PARTS`] partial sums);
/// `docs/hw/program-slots.md`.
pub fn build_slots_staged(
    set: &ModelSet,
    spec: SlotSpec,
    stages: usize,
) -> Result<(Module, UnitDescription), IrError> {
    super::check_stages(
        "compressor pipeline stages with slots",
        stages,
        &slots::SLOT_COMPRESSOR_STAGE_RANGE,
    )?;
    if spec.k() == 0 {
        return build_staged(set, stages.min(*COMPRESSOR_STAGES.end()));
    }
    let ids = Ids {
        custom: set.predictor_id(0) as usize,
        p: set.predictors.len(),
        k: spec.k(),
    };
    let h = ids.max_header_bits();
    let mut u = StreamUnit::begin("mpc_compressor")?;
    let in_block = u.input("in_block", 8 * BLOCK_BYTES as u32)?;
    let ports = ConfigPorts::declare(&mut u)?;
    let mut u = u.outputs()?;
    let out_bits = u.output("out_bits", h + STREAM_BITS as u32)?;
    let out_len = u.output("out_len", LEN_WIDTH)?;
    let out_model = u.output("out_model", h)?;
    let out_epoch = u.output("out_epoch", slots::EPOCH_BITS)?;
    let cfg_out = ConfigOutputs::declare(&mut u)?;
    let cfg = ConfigBlock::new(&mut u.m, spec, ids, &ports)?;
    let mut unit = u.pipeline_held(stages, &cfg.hold())?;
    cfg.connect(&mut unit, &cfg_out)?;
    let epoch = cfg.epoch.clone();
    let mut c = Compressor {
        set,
        u: unit,
        probes: Probes::default(),
        h,
        split: true,
        slots: Some(cfg),
        score_parts: stages == 5 && set.selection == Selection::Exact,
    };
    let scored = c.score_stage(&in_block)?;
    let lanes = c.slot_stage1(&in_block)?;
    let selected = if stages == 5 {
        c.select_slots_split(scored, lanes, &in_block)?
    } else {
        c.select_slots(scored, lanes, &in_block)?
    };
    let coded = c.code_stage(&selected)?;
    let [bits, len, model] = c.pack_stage(selected.stage + 2, coded)?;
    c.u.drive(&out_bits, bits)?;
    c.u.drive(&out_len, len)?;
    c.u.drive(&out_model, model)?;
    c.u.drive(&out_epoch, epoch)?;
    c.u.finish(c.probes.list)
}

impl Compressor<'_> {
    /// The configuration block (a unit with slots).
    fn cfg(&self) -> Result<&ConfigBlock, IrError> {
        self.slots.as_ref().ok_or(IrError::ParameterOutOfRange {
            what: "programmable slots of this compressor".to_string(),
            value: 0,
            min: 1,
            max: slots::MAX_SLOTS as u64,
        })
    }

    /// Stage 1 of every slot: prediction, residues, XORed planes, and the
    /// reorder up to its stage-1 part, registered. Returns the registered
    /// lanes of each slot.
    fn slot_stage1(&mut self, in_block: &Expr) -> Result<Vec<Expr>, IrError> {
        let cfg = self.cfg()?;
        let class = cfg.spec().route_class();
        let slots = cfg.slots.clone();
        let bytes: Vec<Expr> = (0..BLOCK_BYTES)
            .map(|i| byte(in_block, i))
            .collect::<Result<_, _>>()?;
        let library: Vec<[u8; STREAM_BITS]> =
            self.set.predictors.iter().map(|p| p.reorder).collect();
        let mut out = Vec::with_capacity(slots.len());
        for (j, slot) in slots.iter().enumerate() {
            let m = &mut self.u.m;
            let preds = (0..BLOCK_BYTES)
                .map(|i| {
                    stride_prediction(
                        m,
                        &format!("slot_pred_s{j}_b{i}"),
                        &bytes,
                        i,
                        &slot.cand[i],
                        &slot.kcode[i],
                    )
                })
                .collect::<Result<Vec<_>, _>>()?;
            let pred = wire(m, &format!("slot_pred_s{j}"), block_of(preds)?)?;
            let gray = residues(m, &format!("slot_residue_s{j}"), in_block, &pred)?.1;
            let xored = wire(m, &format!("slot_xored_s{j}"), planes_of(&gray)?)?;
            for (name, field) in [
                ("slot_pred", CandidateField::Pred),
                ("slot_xored", CandidateField::Xored),
            ] {
                self.probes.record(
                    m,
                    1,
                    &format!("{name}_s{j}"),
                    Mirror::Slot { slot: j, field },
                    When::Always,
                    None,
                )?;
            }
            let (name, bus) = match class {
                RouteClass::Bits => {
                    // x[n]: natural bit n
                    let x: Vec<Expr> = (0..STREAM_BITS as u32)
                        .map(|n| xored.bit(32 * (7 - n / 32) + n % 32))
                        .collect::<Result<_, _>>()?;
                    let plan = BenesPlan::new(STREAM_BITS)?;
                    let lanes = plan.run(
                        m,
                        &format!("slot_benes_s{j}"),
                        &slot.settings()?,
                        x,
                        0..SLOT_STAGE1_LEVELS.min(plan.depth()),
                    )?;
                    ("slot_lanes", Expr::concat(lanes.into_iter().rev())?)
                }
                RouteClass::Columns => {
                    // x[c]: column c, top plane first
                    let x: Vec<Expr> = (0..BLOCK_BYTES as u32)
                        .map(|c| {
                            Expr::concat(
                                (0..8u32)
                                    .rev()
                                    .map(|q| xored.bit(32 * q + c))
                                    .collect::<Result<Vec<_>, _>>()?,
                            )
                        })
                        .collect::<Result<_, _>>()?;
                    let plan = BenesPlan::new(BLOCK_BYTES)?;
                    let lanes = plan.run(
                        m,
                        &format!("slot_benes_s{j}"),
                        &slot.settings()?,
                        x,
                        0..plan.depth(),
                    )?;
                    let y = plan.outputs(&lanes);
                    ("slot_symbols", Expr::concat(y)?)
                }
                RouteClass::Library => (
                    "slot_symbols",
                    library_reorder(&slot.route, &library, &xored)?,
                ),
            };
            out.push(self.u.reg(1, &format!("{name}_s{j}"), bus)?);
            // the reorder's first levels only (`slot_lanes`) mirror no
            // trace field; the whole reorder is the slot's symbols
            if name == "slot_symbols" {
                self.probes.record_reg(
                    &self.u.m,
                    1,
                    &format!("{name}_s{j}"),
                    Mirror::Slot {
                        slot: j,
                        field: CandidateField::Symbols,
                    },
                    When::Always,
                    None,
                )?;
            }
        }
        Ok(out)
    }

    /// Stage 2 with slots: the rest of each slot's reorder, its score, the
    /// best hard-wired predictor and its transform, and the choice among
    /// them; registered as [`Compressor::select`] does.
    fn select_slots(
        &mut self,
        scored: Scored,
        lanes: Vec<Expr>,
        in_block: &Expr,
    ) -> Result<Selected, IrError> {
        let SlotInputs {
            keys,
            is_zero_block,
            is_same_words,
            block,
        } = self.slot_inputs(scored, in_block)?;
        self.u.stage(
            2,
            "select among the predictors and the slots, the chosen transform",
        )?;
        let slots = self.cfg()?.slots.clone();
        let p = self.set.predictors.len();
        let slot_symbols = self.slot_symbols(&lanes)?;
        // the slots' scores (no probes: the stage probes follow the
        // hard-wired candidates)
        let mut scratch = Probes::default();
        let m = &mut self.u.m;
        let slot_keys = match &keys {
            Keys::None => Keys::None,
            Keys::ZeroRun(_) => Keys::ZeroRun(
                slot_symbols
                    .iter()
                    .enumerate()
                    .map(|(j, s)| zero_run_key(m, &mut scratch, p + j, s))
                    .collect::<Result<_, _>>()?,
            ),
            Keys::Exact(_) | Keys::ExactParts(_) => Keys::Exact(
                slot_symbols
                    .iter()
                    .enumerate()
                    .map(|(j, s)| code_bits(m, &mut scratch, p + j, s))
                    .collect::<Result<_, _>>()?,
            ),
        };
        // the best hard-wired predictor and its score
        let flags: Vec<Expr> = slots.iter().map(|s| s.flag.clone()).collect();
        let (onehot, best, slot_win, best_key_short) = match (keys, slot_keys) {
            (Keys::ZeroRun(hw), Keys::ZeroRun(sk)) => {
                let beats = all_pairs(&hw, zero_run_better)?;
                let (onehot, best) = select_best(m, &beats)?;
                let best_key = chosen_zero_run_key(&onehot, &hw)?;
                let wins = slot_wins(m, &best_key, &sk, &flags, zero_run_better)?;
                (onehot, best, wins, None)
            }
            (Keys::Exact(hw), Keys::Exact(sk)) => {
                let beats = all_pairs(&hw, |a, b| a.cmp_lt(b))?;
                let (onehot, best) = select_best(m, &beats)?;
                let best_key = wire(m, "best_code_bits", onehot_mux(&onehot, &hw)?)?;
                self.probes.record(
                    m,
                    2,
                    "best_code_bits",
                    Mirror::BestHardWired(CandidateField::CodeBits),
                    When::Always,
                    None,
                )?;
                let (wins, short) = exact_slot_wins(m, best_key, &sk, &flags)?;
                (onehot, best, wins, Some(short))
            }
            _ => {
                return Err(IrError::ParameterOutOfRange {
                    what: "scored hard-wired predictors of a compressor with slots".to_string(),
                    value: 0,
                    min: 1,
                    max: p as u64,
                })
            }
        };
        self.adopt_slot_scores(scratch, 2);
        self.slot_choice(
            2,
            SlotChoice {
                onehot,
                best,
                wins: slot_win,
                symbols: slot_symbols,
                short: best_key_short,
            },
            SlotCustom {
                is_zero_block,
                is_same_words,
                block,
            },
        )
    }

    /// The slots' score probes that [`zero_run_key`] and [`code_bits`]
    /// recorded in `scratch` (as candidates after the hard-wired ones, in
    /// stage 1), as probes of slot `j` in stage `stage`; a slot's model ID
    /// depends on the image, so its probes name the slot, not a
    /// candidate index.
    fn adopt_slot_scores(&mut self, scratch: Probes, stage: usize) {
        let p = self.set.predictors.len();
        for mut probe in scratch.list {
            if let Mirror::Candidate { index, field } = probe.mirrors {
                if index >= p {
                    probe.mirrors = Mirror::Slot {
                        slot: index - p,
                        field,
                    };
                    probe.stage = stage;
                    self.probes.list.push(probe);
                }
            }
        }
    }

    /// The registered custom-model tests of stage `stage` of a compressor
    /// with slots (`s<stage>_is_zero_block`, `s<stage>_is_same_words`).
    fn custom_probes(&mut self, stage: usize) -> Result<(), IrError> {
        let custom = self.set.custom;
        for (has, name, mirrors) in [
            (custom.zero_block, "is_zero_block", Mirror::IsZeroBlock),
            (custom.same_words, "is_same_words", Mirror::IsSameWords),
        ] {
            if has {
                self.probes
                    .record_reg(&self.u.m, stage, name, mirrors, When::Always, None)?;
            }
        }
        Ok(())
    }

    /// The stage-2 registers of the 5-stage compressor with `k` slots: the
    /// best hard-wired predictor and its score, each slot's symbols and
    /// score (exact scores cross as partial sums, which mirror no trace
    /// field), the custom-model tests.
    fn split_stage2_probes(&mut self, k: usize) -> Result<(), IrError> {
        let exact = self.set.selection == Selection::Exact;
        let mut list: Vec<(String, Mirror)> =
            vec![("best_predictor".to_string(), Mirror::BestPredictor)];
        let runs = CandidateField::LongestZeroRunThermometer;
        let counts = CandidateField::ZeroCountThermometer;
        if exact {
            list.push((
                "best_code_bits".to_string(),
                Mirror::BestHardWired(CandidateField::CodeBits),
            ));
        } else {
            list.push(("best_zero_runs".to_string(), Mirror::BestHardWired(runs)));
            list.push((
                "best_zero_counts".to_string(),
                Mirror::BestHardWired(counts),
            ));
        }
        for j in 0..k {
            let slot = |field| Mirror::Slot { slot: j, field };
            list.push((format!("slot_symbols_s{j}"), slot(CandidateField::Symbols)));
            if !exact {
                list.push((format!("slot_s{j}_zero_runs"), slot(runs)));
                list.push((format!("slot_s{j}_zero_counts"), slot(counts)));
            }
        }
        for (name, mirrors) in list {
            self.probes
                .record_reg(&self.u.m, 2, &name, mirrors, When::Always, None)?;
        }
        self.custom_probes(2)
    }

    /// Each slot's symbols in its select stage: the rest of its reorder
    /// after the stage-1 registers `lanes` (`slot_symbols_s<j>`).
    fn slot_symbols(&mut self, lanes: &[Expr]) -> Result<Vec<Expr>, IrError> {
        let cfg = self.cfg()?;
        let class = cfg.spec().route_class();
        let slots = cfg.slots.clone();
        let mut out = Vec::with_capacity(slots.len());
        for (j, (slot, reg)) in slots.iter().zip(lanes).enumerate() {
            let m = &mut self.u.m;
            let symbols = match class {
                RouteClass::Bits => {
                    let plan = BenesPlan::new(STREAM_BITS)?;
                    let x: Vec<Expr> = (0..STREAM_BITS as u32)
                        .map(|q| reg.bit(q))
                        .collect::<Result<_, _>>()?;
                    let lanes = plan.run(
                        m,
                        &format!("slot_benes_s{j}"),
                        &slot.settings()?,
                        x,
                        SLOT_STAGE1_LEVELS.min(plan.depth())..plan.depth(),
                    )?;
                    Expr::concat(plan.outputs(&lanes))?
                }
                _ => reg.clone(),
            };
            out.push(wire(m, &format!("slot_symbols_s{j}"), symbols)?);
            self.probes.record(
                m,
                2,
                &format!("slot_symbols_s{j}"),
                Mirror::Slot {
                    slot: j,
                    field: CandidateField::Symbols,
                },
                When::Always,
                None,
            )?;
        }
        Ok(out)
    }

    /// The stage-1 registers the selection of a compressor with slots
    /// reads: the hard-wired predictors' scores, the custom-model tests
    /// and the block (`s1_block`).
    fn slot_inputs(&mut self, scored: Scored, in_block: &Expr) -> Result<SlotInputs, IrError> {
        let Scored {
            symbols: _,
            mut is_zero_block,
            mut is_same_words,
            keys,
        } = scored;
        let custom = self.set.custom;
        let keys = keys.registered(&mut self.u)?;
        if custom.zero_block {
            is_zero_block = self.u.reg(1, "is_zero_block", is_zero_block)?;
        }
        if custom.same_words {
            is_same_words = self.u.reg(1, "is_same_words", is_same_words)?;
        }
        // the registered scores and custom-model tests
        let fields: &[(&str, CandidateField)] = match &keys {
            Keys::ZeroRun(_) => &[
                ("zero_runs", CandidateField::LongestZeroRunThermometer),
                ("zero_counts", CandidateField::ZeroCountThermometer),
            ],
            Keys::Exact(_) => &[("code_bits", CandidateField::CodeBits)],
            Keys::None | Keys::ExactParts(_) => &[],
        };
        for q in 0..self.set.predictors.len() {
            for &(name, field) in fields {
                self.probes.record_reg(
                    &self.u.m,
                    1,
                    &format!("{name}_p{q}"),
                    Mirror::Candidate { index: q, field },
                    When::Always,
                    None,
                )?;
            }
        }
        self.custom_probes(1)?;
        let block = self.probe_reg(1, "block", in_block.clone(), "block", When::Always)?;
        Ok(SlotInputs {
            keys,
            is_zero_block,
            is_same_words,
            block,
        })
    }

    /// The choice of a compressor with slots, registered in stage `stage`
    /// (`s<stage>_choice_id`, `s<stage>_symbols`, `s<stage>_block`): the
    /// winning slot's symbols and ID, else the best hard-wired predictor's
    /// transform (`chosen_hw_symbols`, recomputed from the block) and ID,
    /// then the custom models.
    fn slot_choice(
        &mut self,
        stage: usize,
        choice: SlotChoice,
        custom: SlotCustom,
    ) -> Result<Selected, IrError> {
        let SlotChoice {
            onehot,
            best,
            wins,
            symbols,
            short,
        } = choice;
        let slots = self.cfg()?.slots.clone();
        let m = &mut self.u.m;
        let hw_chosen = chosen_transform(m, self.set, &onehot, &custom.block)?;
        let hw_chosen = wire(m, "chosen_hw_symbols", hw_chosen)?;
        let mut chosen = hw_chosen;
        for (w, sym) in wins.iter().zip(&symbols) {
            chosen = Expr::mux(w, sym, &chosen)?;
        }
        let chosen = wire(m, "chosen_symbols", chosen)?;
        for (name, mirrors, when) in [
            (
                "chosen_pred",
                Mirror::BestHardWired(CandidateField::Pred),
                When::Always,
            ),
            (
                "chosen_xored",
                Mirror::BestHardWired(CandidateField::Xored),
                When::Always,
            ),
            (
                "chosen_hw_symbols",
                Mirror::BestHardWired(CandidateField::Symbols),
                When::Always,
            ),
            (
                "chosen_symbols",
                Mirror::Chosen(CandidateField::Symbols),
                When::Predictor,
            ),
        ] {
            self.probes.record(m, stage, name, mirrors, when, None)?;
        }
        let iw = self.h.max(best.width());
        let mut pred_id = best
            .zext(iw)?
            .add(&k(self.set.predictor_id(0) as u128, iw)?)?
            .trunc(self.h)?;
        for (w, slot) in wins.iter().zip(&slots) {
            pred_id = Expr::mux(w, &slot.id, &pred_id)?;
        }
        let same_wins = short.unwrap_or(Expr::bool(true));
        let choice = self.custom_override(
            pred_id,
            &custom.is_same_words.and(&same_wins)?,
            &custom.is_zero_block,
        )?;
        Ok(Selected {
            stage,
            choice_id: self.probe_reg(stage, "choice_id", choice, "choice_id", When::Always)?,
            symbols: self.probe_reg(stage, "symbols", chosen, "chosen.symbols", When::Predictor)?,
            block: self.probe_reg(stage, "block", custom.block, "block", When::Always)?,
        })
    }

    /// Stages 2 and 3 of the 5-stage compressor with slots. Stage 2: the
    /// rest of each slot's reorder and its score (exact: as partial sums),
    /// and the best hard-wired predictor by the stage-1 scores; registered
    /// (`s2_best_onehot`, `s2_best_predictor`, `s2_best_code_bits` or
    /// `s2_best_zero_runs` / `s2_best_zero_counts`, `s2_slot_symbols_s<j>`
    /// and the slots' scores). Stage 3: which loaded slot beats that
    /// predictor and every other loaded slot (the rule of
    /// [`Compressor::select_slots`]), the predictor's transform again from
    /// the block, the choice; registered as [`Compressor::select`] does.
    fn select_slots_split(
        &mut self,
        scored: Scored,
        lanes: Vec<Expr>,
        in_block: &Expr,
    ) -> Result<Selected, IrError> {
        let SlotInputs {
            keys,
            mut is_zero_block,
            mut is_same_words,
            block,
        } = self.slot_inputs(scored, in_block)?;
        let custom = self.set.custom;
        self.u.stage(
            2,
            "the slots' reorders and scores, the best hard-wired predictor",
        )?;
        let slots = self.cfg()?.slots.clone();
        let p = self.set.predictors.len();
        let slot_symbols = self.slot_symbols(&lanes)?;
        let flags: Vec<Expr> = slots.iter().map(|s| s.flag.clone()).collect();
        let mut scratch = Probes::default();
        // stage 2: the hard-wired selection, the slots' scores
        let m = &mut self.u.m;
        let (onehot, best, keys) = match keys {
            Keys::ExactParts(hw) => {
                let totals: Vec<Expr> = hw
                    .iter()
                    .enumerate()
                    .map(|(q, parts)| wire(m, &format!("cand_p{q}_code_bits"), parts_total(parts)?))
                    .collect::<Result<_, _>>()?;
                let beats = all_pairs(&totals, |a, b| a.cmp_lt(b))?;
                let (onehot, best) = select_best(m, &beats)?;
                let best_key = wire(m, "best_code_bits", onehot_mux(&onehot, &totals)?)?;
                for q in 0..totals.len() {
                    self.probes.record(
                        m,
                        2,
                        &format!("cand_p{q}_code_bits"),
                        Mirror::Candidate {
                            index: q,
                            field: CandidateField::CodeBits,
                        },
                        When::Always,
                        None,
                    )?;
                }
                self.probes.record(
                    m,
                    2,
                    "best_code_bits",
                    Mirror::BestHardWired(CandidateField::CodeBits),
                    When::Always,
                    None,
                )?;
                let slot_parts: Vec<Vec<Expr>> = slot_symbols
                    .iter()
                    .enumerate()
                    .map(|(j, s)| code_bit_parts(m, &format!("cand_p{}", p + j), s))
                    .collect::<Result<_, _>>()?;
                let u = &mut self.u;
                let best_key = u.reg(2, "best_code_bits", best_key)?;
                let slots = slot_parts
                    .into_iter()
                    .enumerate()
                    .map(|(j, parts)| {
                        registered_parts(u, 2, &format!("slot_code_bits_s{j}"), parts)
                    })
                    .collect::<Result<Vec<_>, IrError>>()?;
                (
                    onehot,
                    best,
                    SplitKeys::Exact {
                        best: best_key,
                        slots,
                    },
                )
            }
            Keys::ZeroRun(hw) => {
                let beats = all_pairs(&hw, zero_run_better)?;
                let (onehot, best) = select_best(m, &beats)?;
                let best_key = chosen_zero_run_key(&onehot, &hw)?;
                let slot_keys: Vec<ZeroRunKey> = slot_symbols
                    .iter()
                    .enumerate()
                    .map(|(j, s)| zero_run_key(m, &mut scratch, p + j, s))
                    .collect::<Result<_, _>>()?;
                let u = &mut self.u;
                let best_key = registered_zero_run_key(u, "best", best_key)?;
                let slots = slot_keys
                    .into_iter()
                    .enumerate()
                    .map(|(j, key)| registered_zero_run_key(u, &format!("slot_s{j}"), key))
                    .collect::<Result<Vec<_>, IrError>>()?;
                (
                    onehot,
                    best,
                    SplitKeys::ZeroRun {
                        best: best_key,
                        slots,
                    },
                )
            }
            _ => {
                return Err(IrError::ParameterOutOfRange {
                    what: "scored hard-wired predictors of a compressor with slots".to_string(),
                    value: 0,
                    min: 1,
                    max: p as u64,
                })
            }
        };
        let u = &mut self.u;
        let onehot_reg = u.reg(
            2,
            "best_onehot",
            Expr::concat(onehot.iter().rev().cloned())?,
        )?;
        let onehot: Vec<Expr> = (0..onehot.len() as u32)
            .map(|b| onehot_reg.bit(b))
            .collect::<Result<_, _>>()?;
        let best = u.reg(2, "best_predictor", best)?;
        let slot_symbols: Vec<Expr> = slot_symbols
            .into_iter()
            .enumerate()
            .map(|(j, s)| u.reg(2, &format!("slot_symbols_s{j}"), s))
            .collect::<Result<_, _>>()?;
        if custom.zero_block {
            is_zero_block = u.reg(2, "is_zero_block", is_zero_block)?;
        }
        if custom.same_words {
            is_same_words = u.reg(2, "is_same_words", is_same_words)?;
        }
        let block = self.probe_reg(2, "block", block, "block", When::Always)?;
        self.adopt_slot_scores(scratch, 2);
        self.split_stage2_probes(slot_symbols.len())?;
        // stage 3: the choice
        self.u.stage(
            3,
            "select among the best hard-wired predictor and the slots, the chosen transform",
        )?;
        let m = &mut self.u.m;
        let (slot_win, best_key_short) = match keys {
            SplitKeys::Exact {
                best: best_key,
                slots: parts,
            } => {
                let sk: Vec<Expr> = parts
                    .iter()
                    .enumerate()
                    .map(|(j, parts)| wire(m, &format!("slot_code_bits_s{j}"), parts_total(parts)?))
                    .collect::<Result<_, _>>()?;
                for j in 0..sk.len() {
                    self.probes.record(
                        m,
                        3,
                        &format!("slot_code_bits_s{j}"),
                        Mirror::Slot {
                            slot: j,
                            field: CandidateField::CodeBits,
                        },
                        When::Always,
                        None,
                    )?;
                }
                let (wins, short) = exact_slot_wins(m, best_key, &sk, &flags)?;
                (wins, Some(short))
            }
            SplitKeys::ZeroRun {
                best: best_key,
                slots: sk,
            } => {
                let wins = slot_wins(m, &best_key, &sk, &flags, zero_run_better)?;
                (wins, None)
            }
        };
        self.slot_choice(
            3,
            SlotChoice {
                onehot,
                best,
                wins: slot_win,
                symbols: slot_symbols,
                short: best_key_short,
            },
            SlotCustom {
                is_zero_block,
                is_same_words,
                block,
            },
        )
    }
}

/// What [`Compressor::slot_inputs`] gives: the stage-1 scores through
/// their registers, the custom-model tests and the registered block.
struct SlotInputs {
    keys: Keys,
    is_zero_block: Expr,
    is_same_words: Expr,
    block: Expr,
}

/// The custom-model tests and the block of the choice stage.
struct SlotCustom {
    is_zero_block: Expr,
    is_same_words: Expr,
    block: Expr,
}

/// The selection a compressor with slots has made before its choice: the
/// best hard-wired predictor (one-hot and binary), which slot wins
/// (`slot_win_s<j>`), the slots' symbols, and under exact selection whether
/// the chosen candidate codes in at least 32 bits (same-words wins ties).
struct SlotChoice {
    onehot: Vec<Expr>,
    best: Expr,
    wins: Vec<Expr>,
    symbols: Vec<Expr>,
    short: Option<Expr>,
}

/// The zero-run key (runs and counts) of the predictor `onehot` selects
/// among `keys`.
fn chosen_zero_run_key(onehot: &[Expr], keys: &[ZeroRunKey]) -> Result<ZeroRunKey, IrError> {
    let pick = |f: &dyn Fn(&ZeroRunKey) -> &Vec<Expr>| -> Result<Vec<Expr>, IrError> {
        let buses: Vec<Expr> = keys
            .iter()
            .map(|key| Expr::concat(f(key).iter().rev().cloned()))
            .collect::<Result<_, _>>()?;
        let bus = onehot_mux(onehot, &buses)?;
        (0..bus.width()).map(|b| bus.bit(b)).collect()
    };
    Ok(ZeroRunKey {
        runs: pick(&|k: &ZeroRunKey| &k.runs)?,
        counts: pick(&|k: &ZeroRunKey| &k.counts)?,
    })
}

/// Exact selection with slots: which slot wins against `best` (the best
/// hard-wired predictor's code bits) and each other, and whether the
/// chosen candidate's code length is at least 32 bits (for same-words).
fn exact_slot_wins(
    m: &mut Module,
    best: Expr,
    keys: &[Expr],
    flags: &[Expr],
) -> Result<(Vec<Expr>, Expr), IrError> {
    let wins = slot_wins(m, &best, keys, flags, |a, b| a.cmp_lt(b))?;
    // the chosen candidate's code length, for same-words
    let mut key = best;
    for (w, sk) in wins.iter().zip(keys) {
        key = Expr::mux(w, sk, &key)?;
    }
    Ok((wins, k(32, LEN_WIDTH)?.cmp_le(&key)?))
}

/// The scores stage 2 of the 5-stage compressor with slots registers: the
/// best hard-wired predictor's and each slot's (exact: as partial sums).
enum SplitKeys {
    Exact {
        best: Expr,
        slots: Vec<Vec<Expr>>,
    },
    ZeroRun {
        best: ZeroRunKey,
        slots: Vec<ZeroRunKey>,
    },
}

/// A zero-run key through registers `s2_<name>_zero_runs` and
/// `s2_<name>_zero_counts`.
fn registered_zero_run_key(
    u: &mut StreamUnit,
    name: &str,
    key: ZeroRunKey,
) -> Result<ZeroRunKey, IrError> {
    let bus = |u: &mut StreamUnit, n: String, flags: &[Expr]| -> Result<Vec<Expr>, IrError> {
        let r = u.reg(2, &n, Expr::concat(flags.iter().rev().cloned())?)?;
        (0..flags.len() as u32).map(|b| r.bit(b)).collect()
    };
    Ok(ZeroRunKey {
        runs: bus(u, format!("{name}_zero_runs"), &key.runs)?,
        counts: bus(u, format!("{name}_zero_counts"), &key.counts)?,
    })
}

/// Which slot wins (`slot_win_s<j>`, at most one): a loaded slot whose key
/// beats `best` (the best hard-wired predictor's), every lower loaded
/// slot's, and is beaten by no higher loaded slot's (`better(a, b)`: `a`
/// strictly better than `b`; ties to the lowest model ID).
fn slot_wins<K>(
    m: &mut Module,
    best: &K,
    keys: &[K],
    flags: &[Expr],
    better: impl Fn(&K, &K) -> Result<Expr, IrError>,
) -> Result<Vec<Expr>, IrError> {
    let mut wins = Vec::with_capacity(keys.len());
    for (j, key) in keys.iter().enumerate() {
        let mut win = flags[j].and(&better(key, best)?)?;
        for (q, other) in keys.iter().enumerate() {
            if q < j {
                win = win.and(&flags[q].not().or(&better(key, other)?)?)?;
            } else if q > j {
                win = win.and(&flags[q].and(&better(other, key)?)?.not())?;
            }
        }
        wins.push(wire(m, &format!("slot_win_s{j}"), win)?);
    }
    Ok(wins)
}

/// The selection among the predictors' scores: the one-hot choice, its
/// binary index, and whether same-words (when the set has it) wins
/// against the chosen predictor.
fn choose(m: &mut Module, keys: Keys) -> Result<(Vec<Expr>, Expr, Expr), IrError> {
    let keys = match keys {
        Keys::ExactParts(parts) => Keys::Exact(
            parts
                .iter()
                .map(|p| parts_total(p))
                .collect::<Result<_, _>>()?,
        ),
        keys => keys,
    };
    Ok(match keys {
        Keys::None => (vec![Expr::bool(true)], k(0, 1)?, Expr::bool(true)),
        Keys::ZeroRun(keys) => {
            let beats = all_pairs(&keys, zero_run_better)?;
            let (onehot, best) = select_best(m, &beats)?;
            (onehot, best, Expr::bool(true))
        }
        Keys::ExactParts(_) => unreachable!("partial sums were added above"),
        Keys::Exact(keys) => {
            let beats = all_pairs(&keys, |a, b| a.cmp_lt(b))?;
            let (onehot, best) = select_best(m, &beats)?;
            // same-words (32 bits, lower ID) wins ties: it wins unless the
            // chosen predictor codes in fewer than 32 bits
            let best_short: Vec<Expr> = keys
                .iter()
                .zip(&onehot)
                .map(|(b, sel)| sel.and(&k(32, LEN_WIDTH)?.cmp_le(b)?))
                .collect::<Result<_, _>>()?;
            (onehot, best, Expr::concat(best_short)?.reduce_or())
        }
    })
}

/// Per symbol position, the code slot and its length: the predictor's
/// code (`is_pred`), the same-words bytes 0..3 in slots 0 and 1 (byte 2s
/// first; `is_same`), else empty.
fn slots(
    lens: &[Expr],
    codes: &[Expr],
    is_pred: &Expr,
    is_same: &Expr,
    block: &Expr,
) -> Result<Vec<(Expr, Expr)>, IrError> {
    let mut slots = Vec::with_capacity(SYMBOLS);
    for s in 0..SYMBOLS {
        let (chunk, chunk_sel) = if s < 2 {
            (
                Expr::concat([byte(block, 2 * s)?, byte(block, 2 * s + 1)?, k(0, 1)?])?,
                is_same.clone(),
            )
        } else {
            (k(0, SLOT)?, Expr::bool(false))
        };
        let code = table1::priority(
            &[
                (is_pred.clone(), codes[s].clone()),
                (chunk_sel.clone(), chunk),
            ],
            k(0, SLOT)?,
        )?;
        let len = table1::priority(
            &[
                (is_pred.clone(), lens[s].clone()),
                (chunk_sel, k(SYMBOL_BITS as u128, LEN_BITS)?),
            ],
            k(0, LEN_BITS)?,
        )?;
        slots.push((code, len));
    }
    Ok(slots)
}

/// The first level of the packing tree: slots `2i` and `2i+1` side by
/// side (`pack1_<i>`), and the pairs' lengths.
fn slot_pairs(m: &mut Module, slots: &[(Expr, Expr)]) -> Result<(Vec<Expr>, Vec<Expr>), IrError> {
    let mut pairs = Vec::with_capacity(SYMBOLS / 2);
    let mut pair_lens = Vec::with_capacity(SYMBOLS / 2);
    for (i, pair) in slots.chunks(2).enumerate() {
        let ((a, la), (b, lb)) = (&pair[0], &pair[1]);
        let b_ext = Expr::concat([b.clone(), k(0, SLOT)?])?;
        let shifted = shr_var(m, &format!("pack1_{i}"), &b_ext, la)?;
        pairs.push(Expr::concat([a.clone(), k(0, SLOT)?])?.or(&shifted)?);
        pair_lens.push(la.zext(PAIR_LEN_BITS)?.add(&lb.zext(PAIR_LEN_BITS)?)?);
    }
    Ok((pairs, pair_lens))
}

/// The pairs `(field, length)` concatenated into the payload (its top 256
/// bits) by a tree of two-field merges (`pack<depth>_<i>`).
fn pack_pairs(m: &mut Module, mut level: Vec<(Expr, Expr)>) -> Result<Expr, IrError> {
    let mut depth = 1;
    while level.len() > 1 {
        depth += 1;
        let mut next = Vec::with_capacity(level.len() / 2);
        for (i, pair) in level.chunks(2).enumerate() {
            let ((a, la), (b, lb)) = (&pair[0], &pair[1]);
            let wa = a.width();
            let wb = b.width();
            let last = level.len() == 2;
            let name = format!("pack{depth}_{i}");
            // Payloads never exceed 256 bits, so the last merge keeps only
            // the top 256 bits of {a, 0} | ({b, 0} >> la).
            let out_w = if last { STREAM_BITS as u32 } else { wa + wb };
            let b_ext = Expr::concat([b.clone(), k(0, out_w - wb)?])?;
            let shifted = shr_var(m, &name, &b_ext, la)?;
            let merged = Expr::concat([a.clone(), k(0, out_w - wa)?])?.or(&shifted)?;
            let lw = bits_for(((wa + wb) as u64).min(511));
            let len = la
                .zext(lw.max(la.width()))?
                .add(&lb.zext(lw.max(la.width()))?)?;
            if last {
                next.push((merged, len));
            } else if i % 2 == 1 {
                // a right-hand field: its length shifts nothing (the total
                // is summed on its own)
                next.push((wire(m, &name, merged)?, len));
            } else {
                next.push((
                    wire(m, &name, merged)?,
                    wire(m, &format!("{name}_len"), len)?,
                ));
            }
        }
        level = next;
    }
    level
        .pop()
        .map(|(payload, _)| payload)
        .ok_or(IrError::EmptyConcat)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Bits, Sim};

    /// The 256-bit symbol bus of `syms` (symbol 0 in the top bits).
    fn bus(syms: &[u16; SYMBOLS]) -> Result<Bits, IrError> {
        let mut words = [0u64; 4];
        for (m, &v) in syms.iter().enumerate() {
            let lo = 240 - 16 * m;
            words[lo / 64] |= (v as u64) << (lo % 64);
        }
        Bits::from_words(&words, 256)
    }

    /// The raw check by code classes agrees with the golden code length
    /// (`>= 256` bits) on symbol sets of every mix of classes near the
    /// boundary, each class at varying positions.
    #[test]
    fn raw_check_by_classes_is_the_code_length_check() -> Result<(), Box<dyn std::error::Error>> {
        let mut m = Module::new("raw_check")?;
        let symbols = m.input("symbols", 256)?;
        let raw = m.output("raw", 1)?;
        let (_, _, facts) = symbol_codes_classes(&mut m, "t", &symbols.expr(), false)?;
        let check = saves_at_most_16(&facts)?;
        m.assign(&raw, check)?;
        let mut sim = Sim::new(&m)?;
        // a default code, a 12-bit code of each half, a single 1, two 1s,
        // a zero symbol (17, 12, 12, 7, 8, 4 bits on their own)
        let kinds: [u16; 6] = [0x8421, 0x0011, 0x1100, 0x0100, 0x0180, 0x0000];
        let mut seed = 1u64;
        let (mut checked, mut raws) = (0, 0);
        // counts of each non-default kind, the rest default
        for halves in 0..=5usize {
            for singles in 0..=2usize {
                for pairs in 0..=2usize {
                    for zeros in 0..=3usize {
                        let n = halves + singles + pairs + zeros;
                        if n > SYMBOLS {
                            continue;
                        }
                        for _ in 0..8 {
                            let mut syms = [kinds[0]; SYMBOLS];
                            let mut free: Vec<usize> = (0..SYMBOLS).collect();
                            let mut place = |v: u16, count: usize| {
                                for _ in 0..count {
                                    seed = seed
                                        .wrapping_mul(6364136223846793005)
                                        .wrapping_add(1442695040888963407);
                                    let i = (seed >> 33) as usize % free.len();
                                    syms[free.swap_remove(i)] = v;
                                }
                            };
                            let half = kinds[1 + (checked & 1)];
                            place(half, halves);
                            place(kinds[3], singles);
                            place(kinds[4], pairs);
                            place(kinds[5], zeros);
                            sim.set("symbols", &bus(&syms)?)?;
                            let want = golden::mpc::table1::encoded_len(&syms) >= 256;
                            let got = sim.get_u128("raw")? == 1;
                            assert_eq!(got, want, "symbols {syms:04x?}");
                            checked += 1;
                            raws += usize::from(want);
                        }
                    }
                }
            }
        }
        assert!(raws > 50 && checked - raws > 50, "{raws} raw of {checked}");
        Ok(())
    }
}
