//! The MPC compressor with programmable slots, evaluated by the IR
//! simulator (`Sim`) against the golden programmed set
//! (`ProgrammedSet::compress`): the unit is programmed through its
//! configuration port with the writes of `registers::image_writes`, then
//! codes corpus and random blocks; every output (`out_bits`, `out_len`,
//! `out_model`, `out_epoch`) is compared. Images: trained on a corpus
//! sample (`train_slots`) and random valid images, K = 1 and 2, forms
//! `stride-colpart`, `stride-lib` and `stride-cols`; at the reset value
//! the unit codes as the hard-wired set; a commit while blocks are in
//! flight leaves them coded with the image they were accepted under.

use golden::mpc::program::{
    image_writes, rules_depth, train_slots, Form, OnlineOptions, ProgrammedSet, RegisterWrite,
    Slot, SlotImage,
};
use golden::mpc::{ByteRule, CompressedBlock, ModelSet, MpcCodec};
use hdl::ir::{Bits, Module, Sim};
use hdl::mpc::compressor::{build_slots, build_slots_staged};
use hdl::mpc::slots::{self, SlotSpec};
use std::collections::VecDeque;

mod common;
use common::{
    block_bits, corpus, default_set, form, lcg, left_aligned, load, repeating_words, shaped_block,
    Shape,
};

/// Random and structured blocks.
fn random_blocks(n: usize, seed: &mut u64) -> Vec<[u8; 32]> {
    use Shape::*;
    let shapes = [Noise, WordDeltas, Sparse, HalfwordDeltas, Repeats];
    let mut v = vec![[0u8; 32], [0xff; 32], repeating_words()];
    v.extend((0..n).map(|i| shaped_block(shapes[i % shapes.len()], seed)));
    v
}

/// A random valid image of `k` slots of `form` for `set`: stride rules of
/// depth at most 4 (each byte's base a lower byte of smaller depth), and
/// a random reorder of the form's class; slot `unloaded` (if any) left
/// empty.
fn random_image(
    set: &ModelSet,
    form: Form,
    k: usize,
    unloaded: Option<usize>,
    seed: &mut u64,
) -> SlotImage {
    let mut image = SlotImage::empty(set, form, k);
    for (s, slot) in image.slots.iter_mut().enumerate() {
        if Some(s) == unloaded {
            continue;
        }
        let mut rules = [ByteRule::Root; 32];
        let mut depth = [0usize; 32];
        for i in 0..32usize {
            let c = lcg(seed) % 6;
            if c == 0 {
                continue;
            }
            let stride = golden::mpc::program::STRIDES[c as usize - 1] as usize;
            let Some(base) = i.checked_sub(stride) else {
                continue;
            };
            if depth[base] >= form.max_depth {
                continue;
            }
            depth[i] = depth[base] + 1;
            let max = form.max_shift as i64;
            let shift = (lcg(seed) % (2 * max as u64 + 1)) as i64 - max;
            rules[i] = ByteRule::Base {
                base: base as u8,
                shift: shift as i8,
            };
        }
        let reorder = common::random_reorder(set, form, seed);
        *slot = Some(Slot { rules, reorder });
    }
    image
}

/// A compressor with slots in the simulator, driven cycle by cycle.
struct Unit {
    sim: Sim,
    w: u32,
    one: Bits,
    zero: Bits,
}

/// What the unit is expected to put out for one accepted block.
struct Expect {
    block: [u8; 32],
    golden: CompressedBlock,
    epoch: u8,
}

impl Unit {
    fn new(m: &Module, w: u32) -> Unit {
        let mut u = Unit {
            sim: Sim::new(m).expect("sim"),
            w,
            one: Bits::from_u128(1, 1).expect("1"),
            zero: Bits::from_u128(0, 1).expect("0"),
        };
        u.sim.set("rst", &u.one).expect("rst");
        for port in ["in_valid", "out_ready", "cfg_we"] {
            u.sim.set(port, &u.zero).expect(port);
        }
        u.sim.set_u128("cfg_addr", 0).expect("addr");
        u.sim.set_u128("cfg_wdata", 0).expect("wdata");
        u.sim.set("in_block", &block_bits(&[0; 32])).expect("block");
        u.sim.step();
        u.sim.set("rst", &u.zero).expect("rst");
        u
    }

    /// One cycle: the inputs given, the handshakes read before the edge.
    /// Returns (accepted, output if one left).
    fn cycle(
        &mut self,
        block: Option<&[u8; 32]>,
        out_ready: bool,
        write: Option<RegisterWrite>,
    ) -> (bool, Option<(Bits, u128, u128, u128)>) {
        let s = &mut self.sim;
        let bit = |b: bool| if b { &self.one } else { &self.zero };
        s.set("in_valid", bit(block.is_some())).expect("valid");
        s.set("in_block", &block_bits(block.unwrap_or(&[0; 32])))
            .expect("block");
        s.set("out_ready", bit(out_ready)).expect("ready");
        s.set("cfg_we", bit(write.is_some())).expect("we");
        let wr = write.unwrap_or(RegisterWrite { addr: 0, value: 0 });
        s.set_u128("cfg_addr", wr.addr as u128).expect("addr");
        s.set_u128("cfg_wdata", wr.value as u128).expect("wdata");
        let accepted = block.is_some() && s.get_u128("in_ready").expect("in_ready") == 1;
        let out = if out_ready && s.get_u128("out_valid").expect("out_valid") == 1 {
            Some((
                s.get("out_bits").expect("bits"),
                s.get_u128("out_len").expect("len"),
                s.get_u128("out_model").expect("model"),
                s.get_u128("out_epoch").expect("epoch"),
            ))
        } else {
            None
        };
        s.step();
        (accepted, out)
    }

    /// The image's writes, one a cycle with no block offered, then cycles
    /// until the commit is done.
    fn program(&mut self, writes: &[RegisterWrite]) {
        for &w in writes {
            self.cycle(None, true, Some(w));
        }
        for _ in 0..16 {
            if self.sim.get_u128("cfg_pending").expect("pending") == 0 {
                return;
            }
            self.cycle(None, true, None);
        }
        panic!("the commit did not complete in 16 idle cycles");
    }

    fn check(&self, what: &str, exp: &Expect, out: (Bits, u128, u128, u128)) {
        let (bits, len, model, epoch) = out;
        let g = &exp.golden;
        let want = left_aligned(&g.bytes, g.len as usize, self.w);
        assert!(
            len == g.len as u128
                && model == g.model as u128
                && epoch == exp.epoch as u128
                && bits == want,
            "{what}: block {:02x?}: RTL len {len} model {model} epoch {epoch}, golden len {} model {} epoch {}",
            exp.block,
            g.len,
            g.model,
            exp.epoch
        );
    }

    /// Streams `blocks` with `out_ready` stalls (every `stall`-th cycle
    /// low, 0: never), comparing every output with `expect(block)`.
    fn stream(
        &mut self,
        what: &str,
        blocks: &[[u8; 32]],
        stall: u64,
        seed: &mut u64,
        expect: impl Fn(&[u8; 32]) -> Expect,
    ) {
        let mut queue = VecDeque::new();
        let mut next = 0;
        let mut seen = 0;
        let mut cycles = 0;
        while seen < blocks.len() {
            cycles += 1;
            assert!(cycles < 8 * blocks.len() + 64, "{what}: the unit stalls");
            let ready = stall == 0 || !lcg(seed).is_multiple_of(stall);
            let offer = (stall == 0 || lcg(seed) % stall != 1)
                .then(|| blocks.get(next))
                .flatten();
            let (accepted, out) = self.cycle(offer, ready, None);
            if accepted {
                queue.push_back(expect(&blocks[next]));
                next += 1;
            }
            if let Some(out) = out {
                let exp = queue.pop_front().expect("an output for an accepted block");
                self.check(what, &exp, out);
                seen += 1;
            }
        }
    }
}

/// Build the K-slot compressor of `form` for `set` with `stages` stages.
fn unit(set: &ModelSet, form: Form, k: usize, stages: usize) -> (Module, u32) {
    let spec = SlotSpec::new(k, form).expect("slot spec");
    let (m, desc) = if stages == slots::SLOT_COMPRESSOR_STAGES {
        build_slots(set, spec)
    } else {
        build_slots_staged(set, spec, stages)
    }
    .expect("compressor with slots builds");
    assert_eq!(desc.latency, stages);
    m.emit(&[]).expect("passes the generation-time lint");
    let w = m.signal("out_bits").expect("out_bits").width();
    (m, w)
}

/// Program `image` (epoch `epoch`) and compare `blocks` with the golden
/// programmed set, `out_ready` low about every `stall`-th cycle (0:
/// never). Returns how many blocks a slot coded.
fn check_image(
    set: &ModelSet,
    image: &SlotImage,
    epoch: u8,
    blocks: &[[u8; 32]],
    stall: u64,
    what: &str,
) -> usize {
    let stages = slots::SLOT_COMPRESSOR_STAGES;
    check_image_at(set, image, epoch, blocks, stall, what, stages)
}

/// [`check_image`] on the compressor of `stages` stages.
fn check_image_at(
    set: &ModelSet,
    image: &SlotImage,
    epoch: u8,
    blocks: &[[u8; 32]],
    stall: u64,
    what: &str,
    stages: usize,
) -> usize {
    let (m, w) = unit(set, image.form, image.slots.len(), stages);
    let ps = ProgrammedSet::new(set, image).expect("the set accepts the image");
    let mut u = Unit::new(&m, w);
    u.program(&image_writes(set, image, epoch).expect("register writes"));
    let mut seed = 5;
    u.stream(what, blocks, stall, &mut seed, |b| Expect {
        block: *b,
        golden: ps.compress(b),
        epoch,
    });
    let first = set.predictor_id(set.predictors.len());
    blocks
        .iter()
        .filter(|b| {
            let id = ps.compress(b).model;
            id >= first && id + 1 < ps.id_count() as u32
        })
        .count()
}

/// The image of the first `k` slots of `image`.
fn first_slots(image: &SlotImage, k: usize) -> SlotImage {
    let mut out = image.clone();
    out.slots.truncate(k);
    out
}

/// Random valid images of `name` with `k` slots (slot `unloaded` empty),
/// slot 0 (when loaded) with the rules of a hard-wired predictor the form
/// expresses, so that it wins blocks; under `out_ready` stalls. Returns
/// the blocks a slot coded.
fn check_random(name: &str, k: usize, unloaded: Option<usize>, seed: u64) -> usize {
    check_random_on(&default_set(), name, k, unloaded, seed)
}

/// [`check_random`] on the hard-wired set `set`.
fn check_random_on(
    set: &ModelSet,
    name: &str,
    k: usize,
    unloaded: Option<usize>,
    seed: u64,
) -> usize {
    let stages = slots::SLOT_COMPRESSOR_STAGES;
    check_random_on_at(set, name, k, unloaded, seed, stages)
}

/// [`check_random_on`] with the compressor of `stages` stages.
fn check_random_on_at(
    set: &ModelSet,
    name: &str,
    k: usize,
    unloaded: Option<usize>,
    seed: u64,
    stages: usize,
) -> usize {
    let set = set.clone();
    let mut seed = seed;
    let mut blocks = random_blocks(36, &mut seed);
    blocks.extend(corpus("random slot images in the compressor", 1, 17));
    let f = form(name);
    let mut image = random_image(&set, f, k, unloaded, &mut seed);
    let expressible = set.predictors.iter().find(|p| {
        p.bytes
            .iter()
            .enumerate()
            .all(|(i, &r)| f.allows_rule(i, r))
            && rules_depth(&p.bytes).is_ok_and(|d| d <= f.max_depth)
    });
    if let (Some(p), Some(Some(slot))) = (expressible, image.slots.first_mut()) {
        slot.rules = p.bytes;
    }
    let what = format!("random {name} K={k} on {}, {stages} stages", set.name);
    check_image_at(&set, &image, 3, &blocks, 5, &what, stages)
}

/// The 5-stage compressor (the slots' scores and the choice a stage
/// each): the exact rule with the Benes reorder and, with slot 0
/// unloaded, the zero-run rule with the column reorder.
#[test]
fn the_five_stage_compressor_codes_as_the_programmed_set() {
    let coded = check_random_on_at(&load("default-exact"), "stride-colpart", 2, None, 51, 5);
    assert!(coded > 0, "no block coded by a slot");
    check_random_on_at(&default_set(), "stride-cols", 2, Some(0), 52, 5);
}

#[test]
fn random_colpart_images_code_as_the_programmed_set() {
    let coded = check_random("stride-colpart", 2, None, 11);
    assert!(coded > 0, "no block coded by a slot");
}

/// `stride-lib` with slot 0 unloaded (slot 1 takes the first slot ID),
/// and `stride-cols` with one slot.
#[test]
fn random_lib_and_cols_images_code_as_the_programmed_set() {
    check_random("stride-lib", 2, Some(0), 21);
    check_random("stride-cols", 1, None, 31);
}

/// The exact selection rule (`models/default-exact`, the recommended
/// hard-wired set).
#[test]
fn random_images_under_exact_selection_code_as_the_programmed_set() {
    let coded = check_random_on(&load("default-exact"), "stride-colpart", 2, None, 41);
    assert!(coded > 0, "no block coded by a slot");
}

/// A set without custom models (no zero-block or same-words ID: the slots
/// follow the predictors at ID 5), and a set of one predictor
/// (`models/int32`, whose hard-wired unit has no score).
#[test]
fn random_images_on_small_sets_code_as_the_programmed_set() {
    let mut plain = load("default-exact");
    plain.custom.zero_block = false;
    plain.custom.same_words = false;
    check_random_on(&plain, "stride-lib", 2, None, 42);
    check_random_on(&load("int32"), "stride-lib", 1, None, 43);
}

/// The blocks of one corpus file (an application: `eso-fits-i16`, else the
/// first file), at most `max` of them from its start; empty after a
/// recorded skip without the corpus.
fn one_application(test: &str, max: usize) -> Vec<[u8; 32]> {
    let files = hdl::prereq::corpus_files(test);
    let Some(file) = files
        .iter()
        .find(|f| f.to_string_lossy().contains("eso-fits-i16"))
        .or(files.first())
    else {
        return Vec::new();
    };
    let bytes = std::fs::read(file).expect("a corpus file reads");
    bytes
        .chunks_exact(32)
        .take(max)
        .filter_map(|c| c.try_into().ok())
        .collect()
}

/// Images of `name` trained on one application's first blocks
/// (`train_slots`), K = 2 and its first slot alone (K = 1), coding blocks
/// of the same file and random blocks.
fn check_trained(name: &str) {
    let set = default_set();
    let data = one_application("trained slot images in the compressor", 4096);
    if data.len() < 1024 {
        return;
    }
    let train = &data[..data.len() / 2];
    let mut seed = 12;
    let mut blocks: Vec<[u8; 32]> = data.iter().step_by(data.len() / 40).copied().collect();
    blocks.extend(random_blocks(6, &mut seed));
    let image =
        train_slots(&set, train, &OnlineOptions::new(form(name), 2)).expect("training succeeds");
    let mut slot_coded = 0;
    for k in [1, 2] {
        let image = first_slots(&image, k);
        let what = format!("trained {name} K={k}");
        slot_coded += check_image(&set, &image, 7, &blocks, 0, &what);
    }
    assert!(
        slot_coded > 0,
        "{name}: no block coded by a slot: the test would not test slots"
    );
}

#[test]
fn trained_colpart_images_code_as_the_programmed_set() {
    check_trained("stride-colpart");
}

#[test]
fn trained_lib_images_code_as_the_programmed_set() {
    check_trained("stride-lib");
}

/// At the reset value (nothing loaded, epoch 0) a K = 2 unit codes every
/// block as the hard-wired set: same bits, length and model ID.
#[test]
fn reset_value_codes_as_the_hard_wired_set() {
    let set = default_set();
    let codec = MpcCodec::new(&set);
    let mut seed = 13;
    let mut blocks = random_blocks(40, &mut seed);
    blocks.extend(corpus("the slot compressor at reset", 1, 9));
    for name in ["stride-colpart", "stride-lib"] {
        let (m, w) = unit(&set, form(name), 2, slots::SLOT_COMPRESSOR_STAGES);
        let mut u = Unit::new(&m, w);
        assert_eq!(u.sim.get_u128("cfg_pending").expect("pending"), 0);
        assert_eq!(u.sim.get_u128("cfg_epoch").expect("epoch"), 0);
        u.stream(&format!("reset {name}"), &blocks, 0, &mut seed, |b| {
            Expect {
                block: *b,
                golden: codec.compress(b),
                epoch: 0,
            }
        });
    }
}

/// A commit written while blocks flow: the blocks accepted up to the cycle
/// of the `COMMIT` write are coded with the old image (and its epoch), the
/// later ones with the new; input is refused while the commit waits.
#[test]
fn a_commit_in_flight_keeps_each_block_on_its_image() {
    let set = default_set();
    // (stride-lib: few register writes; the commit is the same for
    // every form)
    let f = form("stride-lib");
    let mut seed = 14;
    let old = random_image(&set, f, 2, None, &mut seed);
    let new = random_image(&set, f, 2, Some(1), &mut seed);
    let (m, w) = unit(&set, f, 2, slots::SLOT_COMPRESSOR_STAGES);
    let ps = [
        ProgrammedSet::new(&set, &old).expect("old"),
        ProgrammedSet::new(&set, &new).expect("new"),
    ];
    let epochs = [40u8, 41];
    let mut u = Unit::new(&m, w);
    u.program(&image_writes(&set, &old, epochs[0]).expect("writes"));
    let mut writes = image_writes(&set, &new, epochs[1]).expect("writes");
    let commit = writes.pop().expect("the COMMIT write");
    let commit_at = writes.len() + 5;
    let blocks = random_blocks(commit_at + 20, &mut seed);
    let mut queue: VecDeque<Expect> = VecDeque::new();
    let (mut next, mut seen, mut image) = (0, 0, 0);
    let mut refused_while_pending = 0;
    for t in 0..2000 {
        if seen == blocks.len() {
            break;
        }
        // the new image's shadow writes from cycle 0, then the commit
        let write = if t == commit_at {
            Some(commit)
        } else {
            writes.get(t).copied()
        };
        let pending = u.sim.get_u128("cfg_pending").expect("pending") == 1;
        let ready = !lcg(&mut seed).is_multiple_of(4);
        let offer = blocks.get(next);
        let (accepted, out) = u.cycle(offer, ready, write);
        if pending {
            assert!(!accepted, "a block accepted while a commit is pending");
            refused_while_pending += usize::from(offer.is_some());
        }
        if accepted {
            let b = blocks[next];
            queue.push_back(Expect {
                block: b,
                golden: ps[image].compress(&b),
                epoch: epochs[image],
            });
            next += 1;
        }
        if t == commit_at {
            // blocks accepted after this cycle use the new image
            image = 1;
        }
        if let Some(out) = out {
            let exp = queue.pop_front().expect("an output for an accepted block");
            u.check(&format!("commit in flight, cycle {t}"), &exp, out);
            seen += 1;
        }
    }
    assert_eq!(seen, blocks.len(), "every block came out");
    assert!(refused_while_pending > 0, "the commit never held the input");
    assert_eq!(
        u.sim.get_u128("cfg_epoch").expect("epoch"),
        epochs[1] as u128
    );
}
