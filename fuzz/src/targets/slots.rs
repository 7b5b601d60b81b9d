//! `slot-image`: configuration images of programmable predictor slots
//! (`docs/spec/program-slots.md`) through `SlotImage::load` and, when one
//! loads, through the programmed coder.
//!
//! An input is an image; its tag `slots-<set>` names the shipped model set
//! (`models/<set>`) it programs. Seeds, for every shipped set and every
//! slot form, written by the golden writer (`SlotImage::to_bytes`): slots
//! trained on a small sample of corpus or synthetic data (`train_slots`,
//! K = 1, 2 or 4), the set's hard-wired predictors that the form can
//! express, and the reset value.
//!
//! Mutations, in three layers:
//! * on the image: a slot replaced by or added as a random valid slot of
//!   the form, unloaded, swapped, duplicated or dropped; up to 64 slots;
//!   every slot converted to another form; the image rebound to another
//!   set (its P and set tag), or programmed onto another set as it is;
//! * on the bytes: the header fields (magic, version, form, K, P, set
//!   tag; after a new form or K the records are resized to match most of
//!   the time), per record the flag, rule bytes, base chains and cycles,
//!   reorder bytes (swaps that keep a permutation, repeats, values out of
//!   range) and the library index, whole records zeroed, copied or
//!   swapped; byte flips, truncation, extension;
//! * the checksum recomputed (most of the time, so that the field checks
//!   behind it are reached), left stale or set at random.
//!
//! Oracle (besides the harness's panic, memory and time limits): a
//! refused image has an error message; an image that loads writes back
//! to the same bytes; every loaded slot keeps to its form (rules, depth,
//! reorder class, library index) and its reorder is a permutation;
//! `ProgrammedSet::new` refuses exactly the images made for another set
//! (P, set tag) or with more than 256 model IDs, and gives the loaded
//! slots the IDs and header width of the spec; a programmed set codes
//! blocks (zeros, a ramp, repeated words, random bytes and, per loaded
//! slot, a block that the slot predicts with few residues): the reference
//! decodes each to itself, the fast codec (scalar and AVX2 kernels)
//! compresses to the same bits and decodes them, with no slot loaded the
//! coding is the hard-wired set's, and a damaged block decodes alike with
//! the reference and both kernels.

use std::path::PathBuf;

use golden::mpc::fast::Kernel;
use golden::mpc::model::{ByteRule, ModelSet, Predictor};
use golden::mpc::program::{
    crc32, set_tag, train_slots, BaseClass, Form, ImageError, OnlineOptions, ProgrammedSet,
    ReorderClass, Slot, SlotImage, SlotReorder, CHECKSUM_BYTES, FORMS, HEADER_BYTES, MAX_SLOTS,
    ROOT_BASE, STRIDES, VERSION,
};
use golden::mpc::{reference, CompressedBlock, MpcCodec, BLOCK_BYTES, STREAM_BITS};

use super::blocks::model_sets;
use super::samples::Samples;
use crate::rng::{fnv1a, Rng};
use crate::{Finding, FuzzError, Input, Paths, Target};

/// Tag of an input: `slots-<set>`.
pub const TAG_PREFIX: &str = "slots-";

/// Blocks of the sample a trained seed's slots are fitted on.
const TRAIN_BLOCKS: usize = 384;
/// Slot counts of the trained seeds (one per set and form, in turn).
const TRAIN_K: [usize; 3] = [1, 2, 4];
/// Loaded slots that get a block of their own in the oracle.
const SLOT_BLOCKS: usize = 4;

/// A shipped model set an image can program.
struct Set {
    name: String,
    set: ModelSet,
    tag: u32,
}

/// A seed image and the set it was made for.
struct Seed {
    set: usize,
    image: SlotImage,
    what: String,
}

pub struct SlotImages {
    sets: Vec<Set>,
    /// Made on the first input (a replay needs none).
    seeds: Vec<Seed>,
    corpus: Option<PathBuf>,
    seed: u64,
}

impl SlotImages {
    pub fn new(paths: &Paths, seed: u64) -> Result<Self, FuzzError> {
        let mut sets = Vec::new();
        for (name, dir) in model_sets(&paths.models)? {
            let set = ModelSet::load(&dir)
                .map_err(|e| FuzzError::Setup(format!("model set {name}: {e}")))?;
            let tag = set_tag(&set);
            sets.push(Set { name, set, tag });
        }
        if sets.is_empty() {
            return Err(FuzzError::Setup(format!(
                "no MPC model set under {}",
                paths.models.display()
            )));
        }
        Ok(SlotImages {
            sets,
            seeds: Vec::new(),
            corpus: paths.corpus.clone(),
            seed,
        })
    }

    /// The seed images (made once): per set and form, trained slots, the
    /// hard-wired predictors the form expresses, and the reset value.
    fn seeds(&mut self) -> &[Seed] {
        if self.seeds.is_empty() {
            self.seeds = self.make_seeds();
        }
        &self.seeds
    }

    fn make_seeds(&self) -> Vec<Seed> {
        let samples = Samples::load(self.corpus.as_deref(), self.seed);
        let mut rng = Rng::new(self.seed ^ 0x534c_4f54_5345_4544);
        let mut seeds = Vec::new();
        for (si, s) in self.sets.iter().enumerate() {
            for (fi, form) in FORMS.iter().enumerate() {
                let k = TRAIN_K[(si + fi) % TRAIN_K.len()];
                let data = samples.data(&mut rng, TRAIN_BLOCKS * BLOCK_BYTES);
                let blocks: Vec<[u8; BLOCK_BYTES]> = data
                    .chunks_exact(BLOCK_BYTES)
                    .filter_map(|c| c.try_into().ok())
                    .collect();
                let mut opts = OnlineOptions::new(*form, k);
                opts.sample = TRAIN_BLOCKS;
                opts.fit_sample = 128;
                opts.rounds = 1;
                // the trainer refuses only K over 64 or over 256 model IDs,
                // which no shipped set reaches with K <= 4
                if let Ok(image) = train_slots(&s.set, &blocks, &opts) {
                    seeds.push(Seed {
                        set: si,
                        what: format!(
                            "{}: {k} {} slots trained, {} loaded",
                            s.name,
                            form.name,
                            image.loaded()
                        ),
                        image,
                    });
                }
                let mut image = SlotImage::empty(&s.set, *form, 0);
                image.slots = s
                    .set
                    .predictors
                    .iter()
                    .filter_map(|p| Slot::from_predictor(p, *form, &s.set.predictors))
                    .map(Some)
                    .take(MAX_SLOTS)
                    .collect();
                if !image.slots.is_empty() {
                    if image.slots.len() < MAX_SLOTS {
                        // an unloaded slot between loaded ones
                        image.slots.insert(image.slots.len() / 2, None);
                    }
                    seeds.push(Seed {
                        set: si,
                        what: format!(
                            "{}: {} hard-wired predictors as {} slots",
                            s.name,
                            image.loaded(),
                            form.name
                        ),
                        image,
                    });
                }
                let k = [0, 3][fi % 2];
                seeds.push(Seed {
                    set: si,
                    what: format!("{}: reset value of {k} {} slots", s.name, form.name),
                    image: SlotImage::empty(&s.set, *form, k),
                });
            }
        }
        seeds
    }

    /// Every input tag (one per shipped set).
    pub fn tags(&self) -> Vec<String> {
        self.sets
            .iter()
            .map(|s| format!("{TAG_PREFIX}{}", s.name))
            .collect()
    }

    /// A mutation that keeps the image valid for its form (the set it is
    /// made for may change).
    fn image_op(
        &self,
        rng: &mut Rng,
        image: &mut SlotImage,
        set: &mut usize,
        ops: &mut Vec<String>,
    ) {
        let k = image.slots.len();
        let p = self.sets[*set].set.predictors.len();
        match rng.below(12) {
            0..=3 => {
                let s = random_slot(rng, image.form, p);
                if k > 0 && rng.chance(2, 3) {
                    let j = rng.index(k);
                    image.slots[j] = Some(s);
                    ops.push(format!("slot {j} random"));
                } else if k < MAX_SLOTS {
                    image.slots.push(Some(s));
                    ops.push(format!("random slot {k} added"));
                }
            }
            4 if k > 0 => {
                let j = rng.index(k);
                image.slots[j] = None;
                ops.push(format!("slot {j} unloaded"));
            }
            5 if k > 1 => {
                let (i, j) = (rng.index(k), rng.index(k));
                image.slots.swap(i, j);
                ops.push(format!("slots {i} and {j} swapped"));
            }
            6 if k > 0 && k < MAX_SLOTS => {
                let j = rng.index(k);
                let s = image.slots[j].clone();
                image.slots.push(s);
                ops.push(format!("slot {j} repeated as slot {k}"));
            }
            7 if k > 0 => {
                let j = rng.index(k);
                image.slots.remove(j);
                ops.push(format!("slot {j} removed"));
            }
            8 => {
                let n = rng.range(k as u64, MAX_SLOTS as u64) as usize;
                while image.slots.len() < n {
                    let s = rng.chance(3, 4).then(|| random_slot(rng, image.form, p));
                    image.slots.push(s);
                }
                ops.push(format!("{n} slots"));
            }
            9 => {
                // every slot as a predictor, in another form where it can
                let form = *rng.pick(&FORMS);
                let hw = &self.sets[*set].set.predictors;
                for s in image.slots.iter_mut() {
                    *s = s
                        .as_ref()
                        .and_then(|x| Slot::from_predictor(&x.predictor("", hw), form, hw));
                }
                ops.push(format!("form {} -> {}", image.form.name, form.name));
                image.form = form;
            }
            _ => {
                let other = rng.index(self.sets.len());
                if rng.bool() {
                    ops.push(format!("programmed onto {}", self.sets[other].name));
                } else {
                    image.hard_wired = self.sets[other].set.predictors.len() as u8;
                    image.set_tag = self.sets[other].tag;
                    ops.push(format!("rebound to {}", self.sets[other].name));
                }
                *set = other;
            }
        }
    }
}

/// A random slot of `form`, valid for a set of `p` hard-wired predictors.
pub fn random_slot(rng: &mut Rng, form: Form, p: usize) -> Slot {
    let mut rules = [ByteRule::Root; BLOCK_BYTES];
    let roots = rng.below(5);
    let max = form.max_shift.unsigned_abs() as u64;
    for i in 0..BLOCK_BYTES {
        if rng.below(4) < roots {
            continue;
        }
        let shift = if max == 0 || rng.chance(2, 3) {
            0
        } else {
            rng.range(0, 2 * max) as i8 - max as i8
        };
        let base = match form.base {
            BaseClass::Strides => {
                let cands: Vec<usize> = STRIDES
                    .iter()
                    .filter_map(|&s| i.checked_sub(s as usize))
                    .collect();
                if cands.is_empty() {
                    continue;
                }
                *rng.pick(&cands)
            }
            BaseClass::Any => {
                let b = rng.index(BLOCK_BYTES);
                // no cycle: the chain from the base must not reach byte i
                if chain_reaches(&rules, b, i) {
                    continue;
                }
                b
            }
        };
        rules[i] = ByteRule::Base {
            base: base as u8,
            shift,
        };
        match chain_depth(&rules) {
            Some(d) if d <= form.max_depth => {}
            _ => rules[i] = ByteRule::Root,
        }
    }
    let mut mask = [0u8; STREAM_BITS / 8];
    match rng.below(4) {
        0 => {}
        1 => mask.fill(0xff),
        2 => {
            for _ in 0..rng.small(40) {
                let n = rng.index(STREAM_BITS);
                mask[n / 8] |= 1 << (n % 8);
            }
        }
        _ => rng.fill(&mut mask),
    }
    let reorder = match form.reorder {
        ReorderClass::Any => {
            let mut r: Box<[u8; STREAM_BITS]> = Box::new(std::array::from_fn(|o| o as u8));
            if rng.chance(3, 4) {
                shuffle(rng, &mut r[..]);
            }
            SlotReorder::Any(r)
        }
        ReorderClass::Partition => SlotReorder::Partition(mask),
        ReorderClass::Columns => SlotReorder::Columns(columns(rng)),
        ReorderClass::ColumnsPartition => SlotReorder::ColumnsPartition(columns(rng), mask),
        ReorderClass::Library => SlotReorder::Library(rng.index(p + 1) as u8),
    };
    Slot { rules, reorder }
}

/// Whether the base chain from byte `from` reaches byte `to` (a chain
/// longer than a block counts as reaching it).
fn chain_reaches(rules: &[ByteRule; BLOCK_BYTES], from: usize, to: usize) -> bool {
    let mut cur = from;
    for _ in 0..=BLOCK_BYTES {
        if cur == to {
            return true;
        }
        match rules[cur] {
            ByteRule::Root => return false,
            ByteRule::Base { base, .. } => cur = base as usize,
        }
    }
    true
}

/// Longest base chain (edges), `None` on a cycle or a base outside the
/// block.
pub fn chain_depth(rules: &[ByteRule; BLOCK_BYTES]) -> Option<usize> {
    let mut max = 0;
    for i in 0..BLOCK_BYTES {
        let (mut cur, mut d) = (i, 0);
        while let ByteRule::Base { base, .. } = *rules.get(cur)? {
            cur = base as usize;
            d += 1;
            if d > BLOCK_BYTES {
                return None;
            }
        }
        max = max.max(d);
    }
    Some(max)
}

fn shuffle(rng: &mut Rng, v: &mut [u8]) {
    for i in (1..v.len()).rev() {
        let j = rng.index(i + 1);
        v.swap(i, j);
    }
}

/// A column order: the identity, reversed, or shuffled.
fn columns(rng: &mut Rng) -> [u8; BLOCK_BYTES] {
    let mut c: [u8; BLOCK_BYTES] = std::array::from_fn(|i| i as u8);
    match rng.below(4) {
        0 => {}
        1 => c.reverse(),
        _ => shuffle(rng, &mut c),
    }
    c
}

/// Edge values of a byte field.
const EDGES: [u8; 10] = [0, 1, 7, 8, 14, 15, 31, 32, 0x80, 0xff];

/// A mutation of the image's bytes, read leniently (the form field picks
/// the record size when it names a form).
fn byte_op(rng: &mut Rng, b: &mut Vec<u8>, sets: &[Set], ops: &mut Vec<String>) {
    let min = HEADER_BYTES + CHECKSUM_BYTES;
    if b.len() < min {
        generic_op(rng, b, ops);
        return;
    }
    let form = Form::by_id(b[5]).unwrap_or(FORMS[0]);
    let r = form.record_bytes();
    let body = b.len() - CHECKSUM_BYTES;
    let nrec = (body - HEADER_BYTES) / r;
    let rec = |j: usize| HEADER_BYTES + j * r;
    match rng.below(18) {
        0 => {
            if rng.bool() {
                let i = rng.index(4);
                b[i] = rng.next_u32() as u8;
                ops.push(format!("magic byte {i} = {:#04x}", b[i]));
            } else {
                let m = *rng.pick(&[*b"MPCZ", *b"SCPM", [0; 4], *b"mpcs"]);
                b[..4].copy_from_slice(&m);
                ops.push(format!("magic {m:02x?}"));
            }
        }
        1 => {
            b[4] = *rng.pick(&[0, VERSION + 1, 0x80, 0xff]);
            ops.push(format!("version {}", b[4]));
        }
        2 => {
            let id = if rng.chance(7, 8) {
                rng.index(FORMS.len()) as u8
            } else {
                *rng.pick(&[FORMS.len() as u8, 0x7f, 0xff])
            };
            b[5] = id;
            match Form::by_id(id) {
                Some(f) if rng.chance(3, 4) => {
                    let r2 = f.record_bytes();
                    let mut out = b[..HEADER_BYTES].to_vec();
                    for j in 0..nrec {
                        let mut x = b[rec(j)..rec(j) + r].to_vec();
                        x.resize(r2, 0);
                        out.extend(x);
                    }
                    out.extend_from_slice(&b[body..]);
                    *b = out;
                    ops.push(format!("form {} (records resized)", f.name));
                }
                _ => ops.push(format!("form field {id}")),
            }
        }
        3 => {
            let k = b[6] as usize;
            let nk = match rng.below(6) {
                0 => k + 1,
                1 => k.saturating_sub(1),
                2 => 0,
                3 => MAX_SLOTS,
                4 => *rng.pick(&[MAX_SLOTS + 1, 0xff]),
                _ => rng.index(MAX_SLOTS + 1),
            };
            b[6] = nk.min(0xff) as u8;
            if nk <= MAX_SLOTS && rng.chance(3, 4) {
                let mut recs: Vec<Vec<u8>> =
                    (0..nrec).map(|j| b[rec(j)..rec(j) + r].to_vec()).collect();
                while recs.len() > nk {
                    recs.pop();
                }
                while recs.len() < nk {
                    let x = if !recs.is_empty() && rng.bool() {
                        recs[rng.index(recs.len())].clone()
                    } else {
                        vec![0; r]
                    };
                    recs.push(x);
                }
                let mut out = b[..HEADER_BYTES].to_vec();
                out.extend(recs.concat());
                out.extend_from_slice(&b[body..]);
                *b = out;
                ops.push(format!("K {nk} (records to match)"));
            } else {
                ops.push(format!("K field {nk}"));
            }
        }
        4 => {
            let p = b[7];
            b[7] = match rng.below(4) {
                0 => p.wrapping_add(1),
                1 => p.wrapping_sub(1),
                2 => *rng.pick(&[0, 0xff]),
                _ => rng.pick(sets).set.predictors.len() as u8,
            };
            ops.push(format!("P {}", b[7]));
        }
        5 => {
            let t = match rng.below(3) {
                0 => rng.next_u32(),
                1 => rng.pick(sets).tag,
                _ => u32::from_le_bytes([b[8], b[9], b[10], b[11]]) ^ (1 << rng.below(32)),
            };
            b[8..12].copy_from_slice(&t.to_le_bytes());
            ops.push(format!("set tag {t:08x}"));
        }
        6 | 7 if nrec > 0 => {
            let j = rng.index(nrec);
            b[rec(j)] = *rng.pick(&[0, 1, 2, 0xff]);
            ops.push(format!("slot {j} flag {}", b[rec(j)]));
        }
        8..=10 if nrec > 0 => {
            let j = rng.index(nrec);
            let i = rng.index(BLOCK_BYTES);
            match form.base {
                BaseClass::Any => {
                    let at = rec(j) + 1 + 2 * i;
                    if rng.bool() {
                        b[at] = match rng.below(4) {
                            0 => rng.index(BLOCK_BYTES) as u8,
                            1 => i as u8,
                            2 => *rng.pick(&[BLOCK_BYTES as u8, ROOT_BASE, 0x80]),
                            _ => rng.next_u32() as u8,
                        };
                    }
                    if rng.bool() {
                        b[at + 1] = match rng.below(3) {
                            0 => (rng.range(0, 14) as i8 - 7) as u8,
                            1 => *rng.pick(&[8u8, (-8i8) as u8, 0x80, 0x7f]),
                            _ => 0,
                        };
                    }
                    ops.push(format!(
                        "slot {j} byte {i} base {} shift {}",
                        b[at],
                        b[at + 1] as i8
                    ));
                }
                BaseClass::Strides => {
                    let at = rec(j) + 1 + i;
                    let c = if rng.chance(3, 4) {
                        rng.range(0, 5) as u8
                    } else {
                        rng.range(6, 15) as u8
                    };
                    let s = if rng.chance(3, 4) {
                        rng.range(0, 14) as u8
                    } else {
                        15
                    };
                    b[at] = c << 4 | s;
                    ops.push(format!("slot {j} byte {i} candidate {c} shift nibble {s}"));
                }
            }
        }
        11 if nrec > 0 => {
            let j = rng.index(nrec);
            b[rec(j)] = 1;
            match form.base {
                BaseClass::Any => {
                    // a chain through distinct bytes, closed to a cycle or
                    // not
                    let n = rng.range(2, BLOCK_BYTES as u64) as usize;
                    let mut order: Vec<u8> = (0..BLOCK_BYTES as u8).collect();
                    shuffle(rng, &mut order);
                    let cycle = rng.bool();
                    for w in 0..n {
                        let i = order[w] as usize;
                        let at = rec(j) + 1 + 2 * i;
                        let next = if w + 1 < n {
                            order[w + 1]
                        } else if cycle {
                            order[0]
                        } else {
                            b[at] = ROOT_BASE;
                            b[at + 1] = 0;
                            continue;
                        };
                        b[at] = next;
                        b[at + 1] = 0;
                    }
                    ops.push(format!("slot {j}: chain of {n} bytes, cycle {cycle}"));
                }
                BaseClass::Strides => {
                    // byte i from i - 1 from i - 2 ...: a chain of n edges
                    let n = rng.range(2, 12) as usize;
                    let top = rng.range(n as u64, BLOCK_BYTES as u64 - 1) as usize;
                    for i in top + 1 - n..=top {
                        b[rec(j) + 1 + i] = 1 << 4 | 7;
                    }
                    ops.push(format!(
                        "slot {j}: stride-1 chain of {n} ending at byte {top}"
                    ));
                }
            }
        }
        12 | 13 if nrec > 0 => {
            let j = rng.index(nrec);
            let ro = rec(j) + 1 + form.rule_bytes();
            let len = form.reorder_bytes();
            match form.reorder {
                ReorderClass::Library => {
                    let (p, any) = (b[7], rng.next_u32() as u8);
                    b[ro] = *rng.pick(&[0, p, p.wrapping_add(1), 0xff, any]);
                    ops.push(format!("slot {j} library {}", b[ro]));
                }
                ReorderClass::Partition => {
                    let i = rng.index(len);
                    b[ro + i] = rng.next_u32() as u8;
                    ops.push(format!("slot {j} mask byte {i}"));
                }
                _ => {
                    // the permutation part: the reorder or the column order
                    let plen = match form.reorder {
                        ReorderClass::Any => STREAM_BITS,
                        _ => BLOCK_BYTES,
                    };
                    let (x, y) = (rng.index(plen), rng.index(plen));
                    match rng.below(4) {
                        0 | 1 => {
                            b.swap(ro + x, ro + y);
                            ops.push(format!("slot {j} reorder {x} and {y} swapped"));
                        }
                        2 => {
                            b[ro + x] = b[ro + y];
                            ops.push(format!("slot {j} reorder {x} = reorder {y}"));
                        }
                        _ if len > plen => {
                            let i = plen + rng.index(len - plen);
                            b[ro + i] = rng.next_u32() as u8;
                            ops.push(format!("slot {j} mask byte {}", i - plen));
                        }
                        _ => {
                            b[ro + x] = *rng.pick(&EDGES);
                            ops.push(format!("slot {j} reorder {x} = {}", b[ro + x]));
                        }
                    }
                }
            }
        }
        14 if nrec > 0 => {
            let (i, j) = (rng.index(nrec), rng.index(nrec));
            match rng.below(3) {
                0 => {
                    b[rec(j)..rec(j) + r].fill(0);
                    ops.push(format!("slot {j} record zeroed"));
                }
                1 => {
                    b.copy_within(rec(i)..rec(i) + r, rec(j));
                    ops.push(format!("slot {i} record copied to slot {j}"));
                }
                _ => {
                    let x = b[rec(i)..rec(i) + r].to_vec();
                    b.copy_within(rec(j)..rec(j) + r, rec(i));
                    b[rec(j)..rec(j) + r].copy_from_slice(&x);
                    ops.push(format!("slot records {i} and {j} swapped"));
                }
            }
        }
        _ => generic_op(rng, b, ops),
    }
}

/// Byte flips, truncation, extension, an inserted byte.
fn generic_op(rng: &mut Rng, b: &mut Vec<u8>, ops: &mut Vec<String>) {
    match rng.below(4) {
        0 | 1 if !b.is_empty() => {
            let k = rng.small(4);
            for _ in 0..k {
                let i = rng.index(b.len());
                b[i] ^= 1 << rng.below(8);
            }
            ops.push(format!("{k} bit flips"));
        }
        2 => {
            let at = rng.index(b.len() + 1);
            b.truncate(at);
            ops.push(format!("cut to {at} bytes"));
        }
        _ => {
            let n = rng.small(64) as usize;
            let at = rng.index(b.len() + 1);
            let x = rng.bytes(n);
            b.splice(at..at, x);
            ops.push(format!("{n} bytes inserted at {at}"));
        }
    }
}

/// The image checksum over everything before the last four bytes.
fn fix_checksum(b: &mut [u8]) {
    if let Some(n) = b.len().checked_sub(CHECKSUM_BYTES) {
        let c = crc32(&b[..n]);
        b[n..].copy_from_slice(&c.to_le_bytes());
    }
}

/// Smaller images for minimisation: each slot record dropped (K one
/// less), the checksum recomputed.
pub fn smaller(data: &[u8]) -> Vec<Vec<u8>> {
    let mut v = Vec::new();
    let Some(body) = data.len().checked_sub(CHECKSUM_BYTES) else {
        return v;
    };
    let Some(form) = data.get(5).and_then(|&id| Form::by_id(id)) else {
        return v;
    };
    let r = form.record_bytes();
    let n = body.saturating_sub(HEADER_BYTES) / r;
    for j in (0..n).rev() {
        let at = HEADER_BYTES + j * r;
        let mut c = data.to_vec();
        c.drain(at..at + r);
        c[6] = c[6].saturating_sub(1);
        fix_checksum(&mut c);
        v.push(c);
    }
    v
}

/// The name of an error's variant (the field it names).
pub fn error_kind(e: &ImageError) -> &'static str {
    match e {
        ImageError::TooShort { .. } => "too-short",
        ImageError::Magic { .. } => "magic",
        ImageError::Version { .. } => "version",
        ImageError::Form { .. } => "form",
        ImageError::TooManySlots { .. } => "too-many-slots",
        ImageError::Size { .. } => "size",
        ImageError::Checksum { .. } => "checksum",
        ImageError::Flag { .. } => "flag",
        ImageError::UnloadedNotZero { .. } => "unloaded-not-zero",
        ImageError::Base { .. } => "base",
        ImageError::Shift { .. } => "shift",
        ImageError::RootShift { .. } => "root-shift",
        ImageError::Candidate { .. } => "candidate",
        ImageError::StrideBeforeStart { .. } => "stride-before-start",
        ImageError::Cycle { .. } => "cycle",
        ImageError::Depth { .. } => "depth",
        ImageError::Reorder { .. } => "reorder",
        ImageError::Columns { .. } => "columns",
        ImageError::Library { .. } => "library",
        ImageError::HardWired { .. } => "hard-wired",
        ImageError::SetTag { .. } => "set-tag",
        ImageError::TooManyIds { .. } => "too-many-ids",
        ImageError::NotExpressible { .. } => "not-expressible",
    }
}

// ---- oracle ---------------------------------------------------------------------

/// Why slot `j` of a loaded image breaks its form, if it does: `p` is
/// the image's P (the library's last entry), `hard_wired` the predictors
/// of the set the slot is read with.
pub fn slot_breaks_form(
    j: usize,
    s: &Slot,
    form: Form,
    p: usize,
    hard_wired: &[Predictor],
) -> Option<String> {
    for (i, r) in s.rules.iter().enumerate() {
        if let ByteRule::Base { base, shift } = *r {
            let b = base as usize;
            let base_ok = match form.base {
                BaseClass::Any => b < BLOCK_BYTES && b != i,
                BaseClass::Strides => STRIDES
                    .iter()
                    .any(|&st| i.checked_sub(st as usize) == Some(b)),
            };
            if !base_ok || shift.unsigned_abs() > form.max_shift.unsigned_abs() {
                return Some(format!(
                    "slot {j} byte {i}: rule {r} outside form {}",
                    form.name
                ));
            }
        }
    }
    match chain_depth(&s.rules) {
        None => return Some(format!("slot {j}: its bases have a cycle")),
        Some(d) if d > form.max_depth => {
            return Some(format!(
                "slot {j}: depth {d} over the {} of form {}",
                form.max_depth, form.name
            ))
        }
        Some(_) => {}
    }
    let class_ok = matches!(
        (&s.reorder, form.reorder),
        (SlotReorder::Any(_), ReorderClass::Any)
            | (SlotReorder::Partition(_), ReorderClass::Partition)
            | (SlotReorder::Columns(_), ReorderClass::Columns)
            | (
                SlotReorder::ColumnsPartition(..),
                ReorderClass::ColumnsPartition
            )
            | (SlotReorder::Library(_), ReorderClass::Library)
    );
    if !class_ok {
        return Some(format!(
            "slot {j}: reorder of another class than form {}",
            form.name
        ));
    }
    if let SlotReorder::Library(l) = s.reorder {
        if l as usize > p {
            return Some(format!(
                "slot {j}: library index {l} past the image's {p} hard-wired reorders"
            ));
        }
    }
    let p = s.predictor("slot", hard_wired);
    let mut seen = [false; STREAM_BITS];
    if let Some(o) = p
        .reorder
        .iter()
        .position(|&n| std::mem::replace(&mut seen[n as usize], true))
    {
        return Some(format!(
            "slot {j}: reorder position {o} repeats a stream bit"
        ));
    }
    None
}

/// A block that `p` predicts: roots from `rng`, every other byte its
/// prediction plus (now and then) a small residue.
fn block_for(p: &Predictor, rng: &mut Rng) -> [u8; BLOCK_BYTES] {
    let mut b = [0u8; BLOCK_BYTES];
    let mut done = [false; BLOCK_BYTES];
    let noisy = rng.chance(1, 2);
    for _ in 0..=BLOCK_BYTES {
        for i in 0..BLOCK_BYTES {
            if done[i] {
                continue;
            }
            let ready = match p.bytes[i] {
                ByteRule::Root => true,
                ByteRule::Base { base, .. } => done.get(base as usize) == Some(&true),
            };
            if ready {
                let res = if noisy && rng.chance(1, 4) {
                    rng.below(4) as u8
                } else {
                    0
                };
                b[i] = match p.bytes[i] {
                    ByteRule::Root => rng.next_u32() as u8,
                    r => r.predict(&b),
                }
                .wrapping_add(res);
                done[i] = true;
            }
        }
    }
    b
}

fn same_outcome<T: PartialEq, E>(a: &Result<T, E>, b: &Result<T, E>) -> bool {
    match (a, b) {
        (Ok(x), Ok(y)) => x == y,
        (Err(_), Err(_)) => true,
        _ => false,
    }
}

fn show<T, E: std::fmt::Display>(r: &Result<T, E>) -> String {
    match r {
        Ok(_) => "ok".into(),
        Err(e) => format!("error: {e}"),
    }
}

impl SlotImages {
    fn set_of(&self, tag: &str) -> Option<&Set> {
        let name = tag.strip_prefix(TAG_PREFIX)?;
        self.sets.iter().find(|s| s.name == name)
    }

    /// Programming `set` with `image` succeeds exactly when the spec says.
    fn program(&self, set: &Set, image: &SlotImage) -> Result<Option<ProgrammedSet>, Finding> {
        let p = set.set.predictors.len();
        let ids = set.set.id_count() + image.loaded();
        let expected = if image.hard_wired as usize != p {
            Some("hard-wired")
        } else if image.set_tag != set.tag {
            Some("set-tag")
        } else if ids > 256 {
            Some("too-many-ids")
        } else {
            None
        };
        match (ProgrammedSet::new(&set.set, image), expected) {
            (Ok(ps), None) => Ok(Some(ps)),
            (Err(e), Some(k)) if error_kind(&e) == k => Ok(None),
            (r, k) => Err(Finding::new(
                "program-refusal-wrong",
                format!(
                    "programming {} (P = {p}, tag {:08x}) with an image for P = {}, tag {:08x}, {} loaded slots: {}, expected {}",
                    set.name,
                    set.tag,
                    image.hard_wired,
                    image.set_tag,
                    image.loaded(),
                    show(&r),
                    k.map_or("success".to_string(), |k| format!("a {k} error"))
                ),
            )),
        }
    }

    fn check_ids(&self, set: &Set, image: &SlotImage, ps: &ProgrammedSet) -> Result<(), Finding> {
        let first = set.set.id_count() as u32 - 1; // custom + P: the raw ID comes last
        let mut next = first;
        for (j, s) in image.slots.iter().enumerate() {
            let want = s.as_ref().map(|_| {
                next += 1;
                next - 1
            });
            if ps.slot_id(j) != want {
                return Err(Finding::new(
                    "slot-ids",
                    format!(
                        "slot {j} has model ID {:?}, expected {want:?}",
                        ps.slot_id(j)
                    ),
                ));
            }
        }
        let n = set.set.id_count() + image.loaded();
        let h = (n.max(2) - 1).ilog2() + 1;
        if ps.id_count() != n || ps.header_bits() != h {
            return Err(Finding::new(
                "slot-ids",
                format!(
                    "{} model IDs and a {}-bit header, expected {n} and {h}",
                    ps.id_count(),
                    ps.header_bits()
                ),
            ));
        }
        Ok(())
    }

    /// Code, decode and damage blocks with the programmed set.
    fn code_blocks(
        &self,
        set: &Set,
        image: &SlotImage,
        ps: &ProgrammedSet,
        data: &[u8],
    ) -> Result<(), Finding> {
        let mut rng = Rng::new(fnv1a(data));
        let expanded = ps.expanded();
        let p = set.set.predictors.len();
        let mut blocks = vec![[0u8; BLOCK_BYTES]];
        blocks.push(std::array::from_fn(|i| i as u8));
        blocks.push(std::array::from_fn(|i| [0x78, 0x56, 0x34, 0x12][i % 4]));
        let mut rnd = [0u8; BLOCK_BYTES];
        rng.fill(&mut rnd);
        blocks.push(rnd);
        let slots = &expanded.predictors[p.min(expanded.predictors.len())..];
        if !slots.is_empty() {
            for _ in 0..SLOT_BLOCKS.min(slots.len()) {
                let s = &slots[rng.index(slots.len())];
                blocks.push(block_for(s, &mut rng));
            }
        }
        let scalar = MpcCodec::with_kernel(expanded, Kernel::Scalar);
        let avx2 = Kernel::Avx2
            .available()
            .then(|| MpcCodec::with_kernel(expanded, Kernel::Avx2));
        let mut fast = vec![("scalar", &scalar)];
        if let Some(a) = &avx2 {
            fast.push(("avx2", a));
        }
        let mut damaged: Option<CompressedBlock> = None;
        for (n, b) in blocks.iter().enumerate() {
            let c = ps.compress(b);
            if c.len > expanded.max_bits() {
                return Err(Finding::new(
                    "wrong-round-trip",
                    format!(
                        "block {n} compresses to {} bits, over the {}",
                        c.len,
                        expanded.max_bits()
                    ),
                ));
            }
            match ps.decompress(c.as_bytes(), c.len as usize) {
                Ok(d) if &d == b => {}
                other => {
                    return Err(Finding::new(
                        "wrong-round-trip",
                        format!(
                            "block {n} compressed with model {} to {} bits decodes to {}",
                            c.model,
                            c.len,
                            match other {
                                Ok(_) => "another block".to_string(),
                                Err(e) => format!("an error: {e}"),
                            }
                        ),
                    ))
                }
            }
            if image.loaded() == 0 && reference::compress(b, &set.set) != c {
                return Err(Finding::new(
                    "reset-not-hard-wired",
                    format!("with no slot loaded, block {n} codes otherwise than with the hard-wired set"),
                ));
            }
            for (name, f) in &fast {
                if f.compress(b) != c {
                    return Err(Finding::new(
                        "fast-differs",
                        format!("{name} compress of block {n} differs from the reference"),
                    ));
                }
                match f.decompress(c.as_bytes(), c.len as usize) {
                    Ok(d) if &d == b => {}
                    other => {
                        return Err(Finding::new(
                            "fast-differs",
                            format!(
                                "{name} decompress of block {n}: {}, expected the block",
                                show(&other)
                            ),
                        ))
                    }
                }
            }
            if n >= 4 || damaged.is_none() {
                damaged = Some(c);
            }
        }
        if let Some(mut c) = damaged {
            if c.len > 0 {
                let i = rng.index(c.len as usize);
                c.bytes[i / 8] ^= 1 << (7 - i % 8);
            }
            let len = match rng.below(3) {
                0 => c.len as usize,
                1 => (c.len as usize).saturating_sub(rng.small(8) as usize),
                _ => rng.index(expanded.max_bits() as usize + 1),
            };
            let bits = &c.bytes[..len.div_ceil(8).min(c.bytes.len())];
            let r = ps.decompress(bits, len);
            for (name, f) in &fast {
                let g = f.decompress(bits, len);
                if !same_outcome(&r, &g) {
                    return Err(Finding::new(
                        "fast-differs",
                        format!(
                            "a damaged block of {len} bits: reference {}, {name} {}",
                            show(&r),
                            show(&g)
                        ),
                    ));
                }
            }
            if let Ok(block) = r {
                let c2 = ps.compress(&block);
                if ps.decompress(c2.as_bytes(), c2.len as usize).as_ref() != Ok(&block) {
                    return Err(Finding::new(
                        "wrong-round-trip",
                        "a block decoded from damaged bits does not re-compress to itself",
                    ));
                }
            }
        }
        Ok(())
    }
}

impl Target for SlotImages {
    fn next_input(&mut self, rng: &mut Rng) -> Input {
        let seeds = self.seeds();
        let seed = &seeds[rng.index(seeds.len())];
        let mut set = seed.set;
        let mut image = seed.image.clone();
        let mut ops = vec![seed.what.clone()];
        if rng.chance(2, 3) {
            for _ in 0..rng.small(4) {
                self.image_op(rng, &mut image, &mut set, &mut ops);
            }
        }
        let mut data = image.to_bytes();
        if rng.chance(3, 4) {
            for _ in 0..rng.small(3) {
                byte_op(rng, &mut data, &self.sets, &mut ops);
            }
            match rng.below(10) {
                0 => ops.push("checksum stale".into()),
                1 => {
                    if let Some(n) = data.len().checked_sub(CHECKSUM_BYTES) {
                        let x = rng.next_u32().to_le_bytes();
                        data[n..].copy_from_slice(&x);
                        ops.push("checksum random".into());
                    }
                }
                _ => fix_checksum(&mut data),
            }
        }
        Input {
            tag: format!("{TAG_PREFIX}{}", self.sets[set].name),
            data,
            note: ops.join("; "),
        }
    }

    fn check(&self, input: &Input) -> Result<(), Finding> {
        let Some(set) = self.set_of(&input.tag) else {
            return Err(Finding::new(
                "unreadable-input",
                format!(
                    "no model set for tag `{}` (known: {})",
                    input.tag,
                    self.tags().join(", ")
                ),
            ));
        };
        let image = match SlotImage::load(&input.data) {
            Ok(i) => i,
            Err(e) => {
                if e.to_string().trim().is_empty() {
                    return Err(Finding::new(
                        "empty-error",
                        "the loader fails with no message",
                    ));
                }
                return Ok(());
            }
        };
        if image.to_bytes() != input.data {
            return Err(Finding::new(
                "rewrite-differs",
                "an image that loads writes back to other bytes",
            ));
        }
        if image.slots.len() > MAX_SLOTS {
            return Err(Finding::new(
                "too-many-slots-accepted",
                format!("{} slots loaded", image.slots.len()),
            ));
        }
        let hw = &set.set.predictors;
        for (j, s) in image.slots.iter().enumerate() {
            if let Some(why) = s
                .as_ref()
                .and_then(|s| slot_breaks_form(j, s, image.form, image.hard_wired as usize, hw))
            {
                return Err(Finding::new("invalid-slot-accepted", why));
            }
        }
        let Some(ps) = self.program(set, &image)? else {
            return Ok(());
        };
        self.check_ids(set, &image, &ps)?;
        self.code_blocks(set, &image, &ps, &input.data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn target() -> SlotImages {
        let mut paths = Paths::default_for_workspace();
        paths.corpus = None;
        SlotImages::new(&paths, 1).expect("target")
    }

    #[test]
    fn seeds_pass_the_oracle_and_inputs_are_deterministic() {
        let mut t = target();
        let n = t.seeds().len();
        assert!(n >= 2 * FORMS.len() * t.sets.len(), "{n} seeds");
        for s in &t.seeds {
            let input = Input {
                tag: format!("{TAG_PREFIX}{}", t.sets[s.set].name),
                data: s.image.to_bytes(),
                note: String::new(),
            };
            assert_eq!(t.check(&input), Ok(()), "{}", s.what);
        }
        assert!(
            t.seeds
                .iter()
                .any(|s| s.image.loaded() > 0 && s.what.contains("trained")),
            "some trained seed loads a slot"
        );
        let (mut a, mut b) = (Rng::new(5), Rng::new(5));
        for _ in 0..40 {
            assert_eq!(t.next_input(&mut a), t.next_input(&mut b));
        }
    }

    /// Inputs run with no finding, and the mutations reach past the
    /// checksum: images that load and are coded with loaded slots, and
    /// refusals by the field checks of the records.
    #[test]
    fn generated_inputs_pass_and_reach_the_field_checks() {
        let mut t = target();
        let mut rng = Rng::new(11);
        let mut kinds: BTreeMap<&str, usize> = BTreeMap::new();
        let mut coded_with_slots = 0;
        let n = 600;
        for _ in 0..n {
            let input = t.next_input(&mut rng);
            assert_eq!(t.check(&input), Ok(()), "{}", input.note);
            match SlotImage::load(&input.data) {
                Ok(img) => {
                    *kinds.entry("loaded").or_default() += 1;
                    let set = t.set_of(&input.tag).expect("set");
                    if img.loaded() > 0 && ProgrammedSet::new(&set.set, &img).is_ok() {
                        coded_with_slots += 1;
                    }
                }
                Err(e) => *kinds.entry(error_kind(&e)).or_default() += 1,
            }
        }
        let record_checks = [
            "flag",
            "unloaded-not-zero",
            "base",
            "shift",
            "root-shift",
            "candidate",
            "stride-before-start",
            "cycle",
            "depth",
            "reorder",
            "columns",
            "library",
        ];
        let reached: Vec<&str> = record_checks
            .iter()
            .copied()
            .filter(|k| kinds.contains_key(k))
            .collect();
        assert!(reached.len() >= 9, "record checks reached: {kinds:?}");
        assert!(
            kinds.get("loaded").copied().unwrap_or(0) >= n / 5,
            "{kinds:?}"
        );
        assert!(
            coded_with_slots >= n / 10,
            "{coded_with_slots} of {n}: {kinds:?}"
        );
        assert!(
            kinds.contains_key("checksum") && kinds.contains_key("size"),
            "{kinds:?}"
        );
    }

    #[test]
    fn the_form_oracle_catches_what_a_form_forbids() {
        let t = target();
        let hw = &t.sets[0].set.predictors;
        let part = |rules| Slot {
            rules,
            reorder: SlotReorder::Partition([0; STREAM_BITS / 8]),
        };
        let roots = [ByteRule::Root; BLOCK_BYTES];
        let (stride_part, any_part) = (FORMS[2], FORMS[1]);
        assert_eq!(
            slot_breaks_form(0, &part(roots), stride_part, hw.len(), hw),
            None
        );
        let mut r = roots;
        r[5] = ByteRule::Base { base: 2, shift: 0 };
        let why = slot_breaks_form(0, &part(r), stride_part, hw.len(), hw).expect("stride 3");
        assert!(why.contains("outside form"), "{why}");
        assert_eq!(slot_breaks_form(0, &part(r), any_part, hw.len(), hw), None);
        let mut r = roots;
        r[1] = ByteRule::Base { base: 2, shift: 0 };
        r[2] = ByteRule::Base { base: 1, shift: 0 };
        let why = slot_breaks_form(0, &part(r), any_part, hw.len(), hw).expect("cycle");
        assert!(why.contains("cycle"), "{why}");
        let mut r = roots;
        r[3] = ByteRule::Base { base: 2, shift: 8 };
        assert!(
            slot_breaks_form(0, &part(r), any_part, hw.len(), hw).is_some(),
            "shift 8"
        );
        let mut r = roots;
        for (i, x) in r.iter_mut().enumerate().take(8).skip(1) {
            *x = ByteRule::Base {
                base: i as u8 - 1,
                shift: 0,
            };
        }
        let why = slot_breaks_form(0, &part(r), stride_part, hw.len(), hw).expect("depth 7 > 4");
        assert!(why.contains("depth 7"), "{why}");
        let colpart = Slot {
            rules: r,
            reorder: SlotReorder::ColumnsPartition(
                std::array::from_fn(|c| c as u8),
                [0; STREAM_BITS / 8],
            ),
        };
        assert_eq!(
            slot_breaks_form(0, &colpart, FORMS[7], hw.len(), hw),
            None,
            "depth 7 <= 8"
        );
        assert!(
            slot_breaks_form(0, &colpart, FORMS[6], hw.len(), hw).is_some(),
            "depth 7 > 4"
        );
        let lib = Slot {
            rules: roots,
            reorder: SlotReorder::Library(hw.len() as u8 + 1),
        };
        let why = slot_breaks_form(0, &lib, FORMS[5], hw.len(), hw).expect("library");
        assert!(why.contains("library index"), "{why}");
        let why = slot_breaks_form(0, &lib, stride_part, hw.len(), hw).expect("class");
        assert!(why.contains("another class"), "{why}");
    }

    #[test]
    fn smaller_images_drop_one_record_and_still_load() {
        let t = target();
        let set = &t.sets[0].set;
        let mut rng = Rng::new(6);
        let mut img = SlotImage::empty(set, FORMS[4], 0);
        for _ in 0..3 {
            img.slots
                .push(Some(random_slot(&mut rng, FORMS[4], set.predictors.len())));
        }
        let c = smaller(&img.to_bytes());
        assert_eq!(c.len(), 3);
        for (n, x) in c.iter().enumerate() {
            let back = SlotImage::load(x).expect("loads");
            let mut want = img.clone();
            want.slots.remove(2 - n);
            assert_eq!(back, want);
        }
        assert!(smaller(&[1, 2, 3]).is_empty());
    }

    #[test]
    fn random_slots_keep_their_form_and_load() {
        let t = target();
        let mut rng = Rng::new(8);
        for set in &t.sets {
            for form in FORMS {
                let mut img = SlotImage::empty(&set.set, form, 0);
                for _ in 0..6 {
                    img.slots
                        .push(Some(random_slot(&mut rng, form, set.set.predictors.len())));
                }
                let back = SlotImage::load(&img.to_bytes()).expect(form.name);
                assert_eq!(back, img, "{}", form.name);
            }
        }
    }

    #[test]
    fn a_block_made_for_a_slot_is_coded_by_it() {
        let t = target();
        let set = t
            .sets
            .iter()
            .find(|s| s.name == "default")
            .expect("default set");
        let mut rng = Rng::new(2);
        let mut won = 0;
        for _ in 0..20 {
            let mut img = SlotImage::empty(&set.set, FORMS[0], 0);
            img.slots.push(Some(random_slot(
                &mut rng,
                FORMS[0],
                set.set.predictors.len(),
            )));
            let ps = ProgrammedSet::new(&set.set, &img).expect("programs");
            let p = ps.expanded().predictors.last().expect("slot").clone();
            let b = block_for(&p, &mut rng);
            if Some(ps.compress(&b).model) == ps.slot_id(0) {
                won += 1;
            }
        }
        assert!(won >= 5, "the slot codes {won} of 20 blocks made for it");
    }
}
