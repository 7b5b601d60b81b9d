//! The run-time trainer of K slots (`docs/spec/program-slots.md`,
//! "Training at run time") and the online protocol of the evaluation.
//!
//! From a sample of one application's blocks (all-zero and same-words
//! blocks left out: the custom models take them), on an evenly spaced
//! subsample:
//!
//! 1. every block's hard-wired winner under the set's selection rule
//!    (zero-run: largest (longest zero run, zero count); exact: fewest
//!    bits; ties to the lower model ID) and its Table-1 bits, at most the
//!    raw 256;
//! 2. K times: a new slot is fitted to the half of the blocks whose current
//!    coded length (hard-wired or an earlier slot, whichever the selection
//!    picks) is longest, then one refinement round;
//! 3. up to `rounds` refinement rounds: every block goes to the candidate
//!    the selection rule picks among the hard-wired predictors and the
//!    slots (slots after the hard-wired ones in model-ID order), every slot
//!    that wins at least [`MIN_MEMBERS`] blocks is fitted again to them;
//!    stop when a round gains less than 0.1%, keep the best slots seen;
//! 4. from the last slot to the first, a slot whose removal does not make
//!    the sample's coded size larger is left unloaded, and all are when
//!    the hard-wired set alone codes it no larger. The size counts every
//!    block's header (custom blocks too): the header widens with the
//!    loaded slots.
//!
//! Fitting a slot to blocks: per byte, in position order, the base and
//! shift of the form that minimise the Gray-code ones of the residue
//! (`r ^ (r >> 1)`, the ones the byte puts into the XORed planes), summed
//! over an evenly spaced subsample; a byte stays a root unless the best
//! choice is at least 1% cheaper than sending it, and a choice that would
//! close a cycle or pass the form's depth bound is skipped. A form with
//! shifts is fitted twice, with its shifts and with shift 0 only, and the
//! slot that codes the subsample shorter is kept (shift 0 on a tie). The
//! reorder of each: any permutation by greedy joint zeros (as the offline
//! trainer), a column order by greedy joint zeros of the columns over
//! (block, plane) pairs, or the library entry that codes the subsample
//! shortest. Deterministic: no randomness, every tie broken by position.

use super::{
    BaseClass, Form, ImageError, ReorderClass, Slot, SlotImage, SlotReorder, MAX_SLOTS, STRIDES,
};
use crate::mpc::model::{shift_byte, ByteRule, CustomModels, ModelSet, Predictor, Selection};
use crate::mpc::select::{is_same_words, is_zero_block, CandidateScore};
use crate::mpc::{table1, MpcCodec, BLOCK_BYTES, PLANES, STREAM_BITS, SYMBOLS};

/// Fewest blocks a slot is refitted on in a refinement round.
pub const MIN_MEMBERS: usize = 64;

/// Options of the run-time trainer.
#[derive(Clone, Copy, Debug)]
pub struct OnlineOptions {
    pub form: Form,
    /// Slots to train (K).
    pub k: usize,
    /// Most blocks the clustering sees (evenly spaced over the sample).
    pub sample: usize,
    /// Most blocks one slot is fitted on (evenly spaced over its blocks).
    pub fit_sample: usize,
    /// Most refinement rounds after the K slots exist.
    pub rounds: usize,
}

impl OnlineOptions {
    pub fn new(form: Form, k: usize) -> OnlineOptions {
        OnlineOptions {
            form,
            k,
            sample: 8192,
            // an any-base fit weighs 31 bases per byte: a smaller subsample
            // keeps it within the time budget
            fit_sample: match form.base {
                BaseClass::Any => 512,
                BaseClass::Strides => 2048,
            },
            rounds: 3,
        }
    }
}

/// `max` blocks evenly spaced over `blocks` (all when there are fewer).
fn even<T: Copy>(blocks: &[T], max: usize) -> Vec<T> {
    let n = blocks.len();
    if n <= max {
        return blocks.to_vec();
    }
    (0..max).map(|k| blocks[k * n / max]).collect()
}

/// Gray-code ones of every residue value.
const GRAY_ONES: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut r = 0;
    while r < 256 {
        t[r] = ((r ^ (r >> 1)) as u8).count_ones() as u8;
        r += 1;
    }
    t
};

/// A codec of `p` alone (no custom models, exact selection).
fn single(p: &Predictor) -> MpcCodec {
    MpcCodec::new(&ModelSet {
        name: "slot".into(),
        selection: Selection::Exact,
        custom: CustomModels {
            zero_block: false,
            same_words: false,
        },
        predictors: vec![p.clone()],
        provenance: Default::default(),
    })
}

/// Table-1 bits of every block under predictor `i` of `codec`, at most 256.
fn lengths(codec: &MpcCodec, i: usize, blocks: &[[u8; BLOCK_BYTES]]) -> Vec<u32> {
    blocks
        .iter()
        .map(|b| table1::encoded_len(&codec.predictor_symbols(i, b)).min(STREAM_BITS as u32))
        .collect()
}

/// Per byte rules of `form` fitted to `blocks`.
fn fit_rules(form: Form, blocks: &[[u8; BLOCK_BYTES]]) -> [ByteRule; BLOCK_BYTES] {
    let ks: Vec<i8> = (-form.max_shift..=form.max_shift).collect();
    let nk = ks.len();
    // candidate bases per byte
    let bases: Vec<Vec<usize>> = (0..BLOCK_BYTES)
        .map(|i| match form.base {
            BaseClass::Any => (0..BLOCK_BYTES).filter(|&j| j != i).collect(),
            BaseClass::Strides => STRIDES
                .iter()
                .filter_map(|&s| i.checked_sub(s as usize))
                .collect(),
        })
        .collect();
    let mut root_cost = [0u64; BLOCK_BYTES];
    // cost[i][b * nk + k] for bases[i][b]
    let mut cost: Vec<Vec<u64>> = bases.iter().map(|b| vec![0u64; b.len() * nk]).collect();
    let mut shifted = vec![0u8; BLOCK_BYTES * nk];
    for d in blocks {
        for (j, &v) in d.iter().enumerate() {
            for (ki, &k) in ks.iter().enumerate() {
                shifted[j * nk + ki] = shift_byte(v, k);
            }
        }
        for i in 0..BLOCK_BYTES {
            root_cost[i] += GRAY_ONES[d[i] as usize] as u64;
            let c = &mut cost[i];
            for (bi, &j) in bases[i].iter().enumerate() {
                let sh = &shifted[j * nk..(j + 1) * nk];
                let out = &mut c[bi * nk..(bi + 1) * nk];
                for (o, &s) in out.iter_mut().zip(sh) {
                    *o += GRAY_ONES[d[i].wrapping_sub(s) as usize] as u64;
                }
            }
        }
    }
    let mut rules = [ByteRule::Root; BLOCK_BYTES];
    for i in 0..BLOCK_BYTES {
        // (cost, |k|, k < 0, base) ascending
        let mut opts: Vec<(u64, u8, bool, usize, i8)> = Vec::new();
        for (bi, &j) in bases[i].iter().enumerate() {
            for (ki, &k) in ks.iter().enumerate() {
                opts.push((cost[i][bi * nk + ki], k.unsigned_abs(), k < 0, j, k));
            }
        }
        opts.sort_unstable();
        for &(c, _, _, j, k) in &opts {
            if c * 100 >= root_cost[i] * 99 {
                break;
            }
            // the chain from j must not reach i (i is still a root, so a
            // chain through it ends there)
            let mut cur = j;
            while let ByteRule::Base { base, .. } = rules[cur] {
                cur = base as usize;
            }
            if cur == i {
                continue;
            }
            // bytes already based on i get deeper too: bound the whole forest
            let mut trial = rules;
            trial[i] = ByteRule::Base {
                base: j as u8,
                shift: k,
            };
            match super::rules_depth(&trial) {
                Ok(td) if td <= form.max_depth => {
                    rules = trial;
                    break;
                }
                _ => continue,
            }
        }
    }
    rules
}

/// XORed natural stream of `d` under `rules` as four words (natural index
/// n at word n / 64, bit n % 64).
fn natural(d: &[u8; BLOCK_BYTES], rules: &[ByteRule; BLOCK_BYTES]) -> [u64; 4] {
    let mut s = [0u64; 4];
    for j in 0..BLOCK_BYTES {
        let r = d[j].wrapping_sub(rules[j].predict(d));
        let g = r ^ (r >> 1);
        for p in 0..PLANES {
            if (g >> p) & 1 == 1 {
                let n = 32 * (PLANES - 1 - p) + j;
                s[n / 64] |= 1 << (n % 64);
            }
        }
    }
    s
}

fn and_count(a: &[u64], b: &[u64]) -> u64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x & y).count_ones() as u64)
        .sum()
}

/// Greedy selection of `groups` groups of `per` items from zero bitsets
/// (`sets[c]` over `words` words, `valid` the mask of real samples): each
/// group starts with the free item most often zero, then adds the item
/// that keeps the group all-zero most often (ties: more often zero alone,
/// then the lower index). Returns the groups with their all-zero counts.
fn greedy_groups(
    sets: &[Vec<u64>],
    valid: &[u64],
    groups: usize,
    per: usize,
) -> Vec<(Vec<u8>, u64)> {
    let marginal: Vec<u64> = sets.iter().map(|s| and_count(s, valid)).collect();
    let mut free = vec![true; sets.len()];
    let mut out = Vec::with_capacity(groups);
    for _ in 0..groups {
        let mut mask = valid.to_vec();
        let mut items = Vec::with_capacity(per);
        for _ in 0..per {
            let mut best: Option<(u64, u64, usize)> = None;
            for c in (0..sets.len()).filter(|&c| free[c]) {
                let j = and_count(&mask, &sets[c]);
                let better = match best {
                    None => true,
                    Some((bj, bm, _)) => j > bj || (j == bj && marginal[c] > bm),
                };
                if better {
                    best = Some((j, marginal[c], c));
                }
            }
            let Some((_, _, c)) = best else { break };
            free[c] = false;
            items.push(c as u8);
            for (m, z) in mask.iter_mut().zip(&sets[c]) {
                *m &= z;
            }
        }
        let zeros = mask.iter().map(|w| w.count_ones() as u64).sum();
        out.push((items, zeros));
    }
    out
}

fn valid_mask(n: usize) -> Vec<u64> {
    let mut v = vec![u64::MAX; n.div_ceil(64)];
    if !n.is_multiple_of(64) {
        if let Some(l) = v.last_mut() {
            *l = (1u64 << (n % 64)) - 1;
        }
    }
    v
}

/// Any permutation: greedy joint-zero symbols, sorted by all-zero count.
fn fit_any_reorder(
    blocks: &[[u8; BLOCK_BYTES]],
    rules: &[ByteRule; BLOCK_BYTES],
) -> [u8; STREAM_BITS] {
    let words = blocks.len().div_ceil(64);
    let mut sets = vec![vec![0u64; words]; STREAM_BITS];
    for (s, d) in blocks.iter().enumerate() {
        let st = natural(d, rules);
        for (n, set) in sets.iter_mut().enumerate() {
            if (st[n / 64] >> (n % 64)) & 1 == 0 {
                set[s / 64] |= 1 << (s % 64);
            }
        }
    }
    let mut g = greedy_groups(&sets, &valid_mask(blocks.len()), SYMBOLS, 16);
    // most often zero first; stable keeps formation order on ties
    g.sort_by_key(|x| std::cmp::Reverse(x.1));
    let mut out = [0u8; STREAM_BITS];
    for (o, &v) in g.iter().flat_map(|x| x.0.iter()).enumerate() {
        out[o] = v;
    }
    out
}

/// A column order: pairs of columns (one symbol) by greedy joint zeros of
/// whole residues, sorted by all-zero count.
fn fit_columns(blocks: &[[u8; BLOCK_BYTES]], rules: &[ByteRule; BLOCK_BYTES]) -> [u8; BLOCK_BYTES] {
    let words = blocks.len().div_ceil(64);
    let mut sets = vec![vec![0u64; words]; BLOCK_BYTES];
    for (s, d) in blocks.iter().enumerate() {
        for (c, set) in sets.iter_mut().enumerate() {
            if d[c] == rules[c].predict(d) {
                set[s / 64] |= 1 << (s % 64);
            }
        }
    }
    let mut g = greedy_groups(&sets, &valid_mask(blocks.len()), BLOCK_BYTES / 2, 2);
    g.sort_by_key(|x| std::cmp::Reverse(x.1));
    let mut out = [0u8; BLOCK_BYTES];
    for (o, &v) in g.iter().flat_map(|x| x.0.iter()).enumerate() {
        out[o] = v;
    }
    out
}

/// Zero-frequency thresholds tried for a partition mask, in 1/1000.
const PARTITION_THRESHOLDS: [u64; 7] = [500, 700, 800, 900, 950, 990, 999];

/// A partition mask over the positions of the stream `base` (natural index
/// per position): the positions zero in at least a threshold share of the
/// blocks, the threshold of [`PARTITION_THRESHOLDS`] (or, with `cols`, no
/// mask at all) that codes the blocks shortest (ties: the earlier one).
fn fit_partition(
    blocks: &[[u8; BLOCK_BYTES]],
    rules: &[ByteRule; BLOCK_BYTES],
    cols: Option<[u8; BLOCK_BYTES]>,
) -> [u8; STREAM_BITS / 8] {
    let base: [u8; STREAM_BITS] = match &cols {
        Some(c) => super::column_major(c),
        None => std::array::from_fn(|o| o as u8),
    };
    let mut zeros = [0u64; STREAM_BITS];
    for d in blocks {
        let st = natural(d, rules);
        for (o, z) in zeros.iter_mut().enumerate() {
            let n = base[o] as usize;
            *z += 1 - ((st[n / 64] >> (n % 64)) & 1);
        }
    }
    let total = blocks.len().max(1) as u64;
    let mut best: Option<(u64, [u8; STREAM_BITS / 8])> = None;
    let none = cols.map(|_| 1001);
    for t in none.into_iter().chain(PARTITION_THRESHOLDS) {
        let mut m = [0u8; STREAM_BITS / 8];
        for (n, &z) in zeros.iter().enumerate() {
            if z * 1000 >= t * total {
                m[n / 8] |= 1 << (n % 8);
            }
        }
        let slot = Slot {
            rules: *rules,
            reorder: match cols {
                Some(c) => SlotReorder::ColumnsPartition(c, m),
                None => SlotReorder::Partition(m),
            },
        };
        let c = single(&slot.predictor("", &[]));
        let bits: u64 = lengths(&c, 0, blocks).iter().map(|&x| x as u64).sum();
        if best.is_none_or(|(b, _)| bits < b) {
            best = Some((bits, m));
        }
    }
    best.map_or([0u8; STREAM_BITS / 8], |b| b.1)
}

/// Fit one slot of `form` to `blocks`.
fn fit(form: Form, hard_wired: &[Predictor], blocks: &[[u8; BLOCK_BYTES]], max: usize) -> Slot {
    let s = even(blocks, max);
    let with_shifts = fit_with(form, hard_wired, &s, fit_rules(form, &s));
    if form.max_shift == 0 {
        return with_shifts;
    }
    // the Gray-ones cost can prefer a shift where the exact (k = 0)
    // prediction of the same base gives more whole zero residues: fit the
    // k = 0 rules too and keep the slot that codes the blocks shorter
    // (ties: k = 0)
    let k0 = Form {
        max_shift: 0,
        ..form
    };
    let without = fit_with(form, hard_wired, &s, fit_rules(k0, &s));
    let bits = |slot: &Slot| -> u64 {
        let c = single(&slot.predictor("", hard_wired));
        lengths(&c, 0, &s).iter().map(|&x| x as u64).sum()
    };
    if bits(&with_shifts) < bits(&without) {
        with_shifts
    } else {
        without
    }
}

/// The reorder of `form` fitted to `s` under `rules`.
fn fit_with(
    form: Form,
    hard_wired: &[Predictor],
    s: &[[u8; BLOCK_BYTES]],
    rules: [ByteRule; BLOCK_BYTES],
) -> Slot {
    let reorder = match form.reorder {
        ReorderClass::Any => SlotReorder::Any(Box::new(fit_any_reorder(s, &rules))),
        ReorderClass::Partition => SlotReorder::Partition(fit_partition(s, &rules, None)),
        ReorderClass::ColumnsPartition => {
            let c = fit_columns(s, &rules);
            SlotReorder::ColumnsPartition(c, fit_partition(s, &rules, Some(c)))
        }
        ReorderClass::Columns => SlotReorder::Columns(fit_columns(s, &rules)),
        ReorderClass::Library => {
            let mut best = (u64::MAX, 0u8);
            for l in 0..=hard_wired.len().min(255) {
                let slot = Slot {
                    rules,
                    reorder: SlotReorder::Library(l as u8),
                };
                let c = single(&slot.predictor("", hard_wired));
                let bits: u64 = lengths(&c, 0, s).iter().map(|&x| x as u64).sum();
                if bits < best.0 {
                    best = (bits, l as u8);
                }
            }
            SlotReorder::Library(best.1)
        }
    };
    Slot { rules, reorder }
}

/// Train `opts.k` slots of `opts.form` for `set` from `blocks` (one
/// application's sample). Slots the data cannot fill (no block other than
/// all-zero and same-words ones) stay unloaded.
pub fn train_slots(
    set: &ModelSet,
    blocks: &[[u8; BLOCK_BYTES]],
    opts: &OnlineOptions,
) -> Result<SlotImage, ImageError> {
    if opts.k > MAX_SLOTS {
        return Err(ImageError::TooManySlots { found: opts.k });
    }
    let ids = set.id_count() + opts.k;
    if ids > 256 {
        return Err(ImageError::TooManyIds { ids, k: opts.k });
    }
    let mut image = SlotImage::empty(set, opts.form, opts.k);
    let useful: Vec<[u8; BLOCK_BYTES]> = blocks
        .iter()
        .filter(|b| !is_zero_block(b) && !is_same_words(b))
        .copied()
        .collect();
    let sample = even(&useful, opts.sample);
    let n = sample.len();
    if n == 0 || opts.k == 0 {
        return Ok(image);
    }
    let hw = MpcCodec::new(set);
    let exact = set.selection == Selection::Exact;
    // the hard-wired winner of every block under the set's selection rule
    let mut hw_sc = scores(&hw, 0, &sample);
    for i in 1..set.predictors.len() {
        for (w, c) in hw_sc.iter_mut().zip(scores(&hw, i, &sample)) {
            if beats(c, *w, exact) {
                *w = c;
            }
        }
    }
    // per block: the winning slot (None: hard-wired) and its coded bits
    let assign = |sc: &[Option<Vec<Sc>>]| -> (Vec<Option<usize>>, Vec<u32>, u64) {
        let mut owner = vec![None; n];
        let mut cur = hw_sc.clone();
        for (j, l) in sc.iter().enumerate() {
            let Some(l) = l else { continue };
            for b in 0..n {
                if beats(l[b], cur[b], exact) {
                    cur[b] = l[b];
                    owner[b] = Some(j);
                }
            }
        }
        let bits: Vec<u32> = cur.iter().map(|c| c.bits).collect();
        let total = bits.iter().map(|&x| x as u64).sum();
        (owner, bits, total)
    };
    let hw_list = &set.predictors;
    let slot_scores = |s: &Slot| scores(&single(&s.predictor("", hw_list)), 0, &sample);
    let mut slots: Vec<Slot> = Vec::new();
    let mut sc: Vec<Option<Vec<Sc>>> = Vec::new();
    // one refinement round; returns the new total
    let refine = |slots: &mut Vec<Slot>, sc: &mut Vec<Option<Vec<Sc>>>| -> u64 {
        let (owner, _, _) = assign(sc);
        for j in 0..slots.len() {
            let members: Vec<[u8; BLOCK_BYTES]> = (0..n)
                .filter(|&b| owner[b] == Some(j))
                .map(|b| sample[b])
                .collect();
            if members.len() >= MIN_MEMBERS {
                slots[j] = fit(opts.form, hw_list, &members, opts.fit_sample);
                sc[j] = Some(slot_scores(&slots[j]));
            }
        }
        assign(sc).2
    };
    for _ in 0..opts.k {
        let (_, cur, _) = assign(&sc);
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&a, &b| cur[b].cmp(&cur[a]).then(a.cmp(&b)));
        let seed: Vec<[u8; BLOCK_BYTES]> =
            order[..n.div_ceil(2)].iter().map(|&b| sample[b]).collect();
        let s = fit(opts.form, hw_list, &seed, opts.fit_sample);
        sc.push(Some(slot_scores(&s)));
        slots.push(s);
        refine(&mut slots, &mut sc);
    }
    let mut best = (assign(&sc).2, slots.clone(), sc.clone());
    for _ in 0..opts.rounds {
        let total = refine(&mut slots, &mut sc);
        let gain = best.0.saturating_sub(total);
        if total < best.0 {
            best = (total, slots.clone(), sc.clone());
        }
        if gain * 1000 < best.0 {
            break;
        }
    }
    // a slot whose removal does not make the sample's coded size larger
    // stays unloaded (under the zero-run rule a slot can win blocks it
    // codes longer); the size counts the header of every block, custom
    // blocks included, whose width grows with the loaded slots
    let (_, slots, mut sc) = best;
    let (all, useful_n) = (blocks.len() as u128, useful.len() as u128);
    let size = |sc: &[Option<Vec<Sc>>]| -> u128 {
        let loaded = sc.iter().filter(|l| l.is_some()).count();
        let h = header_bits(set.id_count() + loaded) as u128;
        // payload scaled from the sample to the useful blocks, times n
        assign(sc).2 as u128 * useful_n + h * all * n as u128
    };
    let mut total = size(&sc);
    for j in (0..sc.len()).rev() {
        let kept = sc[j].take();
        let without = size(&sc);
        if without <= total {
            total = without;
        } else {
            sc[j] = kept;
        }
    }
    let none: Vec<Option<Vec<Sc>>> = vec![None; sc.len()];
    if size(&none) <= total {
        sc = none;
    }
    for ((dst, s), l) in image.slots.iter_mut().zip(slots).zip(&sc) {
        if l.is_some() {
            *dst = Some(s);
        }
    }
    Ok(image)
}

/// Header bits of a unit with `ids` model IDs: `max(1, ceil(log2 ids))`.
pub fn header_bits(ids: usize) -> u32 {
    (usize::BITS - ids.saturating_sub(1).leading_zeros()).max(1)
}

/// What selection sees of one predictor for one block.
#[derive(Clone, Copy, Debug)]
struct Sc {
    /// The zero-run key: longest run, then zero count.
    key: (u8, u8),
    /// Coded bits, at most the raw 256.
    bits: u32,
}

/// Whether `c`, of a higher model ID, wins over `cur` (ties: `cur`).
fn beats(c: Sc, cur: Sc, exact: bool) -> bool {
    if exact {
        c.bits < cur.bits
    } else {
        c.key > cur.key
    }
}

/// The selection view of every block under predictor `i` of `codec`.
fn scores(codec: &MpcCodec, i: usize, blocks: &[[u8; BLOCK_BYTES]]) -> Vec<Sc> {
    blocks
        .iter()
        .map(|b| {
            let s = CandidateScore::of(&codec.predictor_symbols(i, b));
            Sc {
                key: s.zero_run_key(),
                bits: s.code_bits.min(STREAM_BITS as u32),
            }
        })
        .collect()
}

/// What the online protocol measured on one file.
#[derive(Clone, Debug)]
pub struct OnlineResult {
    /// Blocks of the first quarter (the training sample).
    pub train_blocks: usize,
    /// Blocks of the remaining three quarters (coded).
    pub test_blocks: usize,
    /// Compressed bits of the test blocks with the hard-wired set alone.
    pub hard_wired_bits: u64,
    /// Compressed bits with the hard-wired set plus the trained slots.
    pub programmed_bits: u64,
    pub image: SlotImage,
    /// Wall-clock seconds of the training alone (one thread).
    pub train_seconds: f64,
}

impl OnlineResult {
    /// Original bits of the test blocks.
    pub fn original_bits(&self) -> u64 {
        self.test_blocks as u64 * 8 * BLOCK_BYTES as u64
    }
}

/// The online protocol: train the slots on the first quarter of `blocks`
/// (`floor(n / 4)` blocks), code the rest with the hard-wired set alone and
/// with the programmed unit.
pub fn online_protocol(
    set: &ModelSet,
    blocks: &[[u8; BLOCK_BYTES]],
    opts: &OnlineOptions,
) -> Result<OnlineResult, ImageError> {
    let q = blocks.len() / 4;
    let (train, test) = blocks.split_at(q);
    let t = std::time::Instant::now();
    let image = train_slots(set, train, opts)?;
    let train_seconds = t.elapsed().as_secs_f64();
    let unit = super::ProgrammedSet::new(set, &image)?;
    let hw = MpcCodec::new(set);
    let prog = unit.fast_codec();
    let (mut h, mut p) = (0u64, 0u64);
    for b in test {
        h += hw.compress(b).len as u64;
        p += prog.compress(b).len as u64;
    }
    Ok(OnlineResult {
        train_blocks: q,
        test_blocks: test.len(),
        hard_wired_bits: h,
        programmed_bits: p,
        image,
        train_seconds,
    })
}
