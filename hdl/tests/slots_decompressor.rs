//! The MPC decompressor with programmable slots, evaluated by the IR's own
//! simulator (`Sim`) against the golden programmed set
//! (`golden::mpc::program::ProgrammedSet`): images trained by
//! `train_slots` and random valid images of the stride forms, loaded
//! through the configuration port with the register writes of
//! `golden::mpc::program::registers::image_writes`; blocks of the corpus
//! and random blocks, their corrupted variants, blocks of another epoch,
//! and header values past the raw escape.

use golden::mpc::program::registers::{image_writes, RegisterWrite};
use golden::mpc::program::{
    rules_depth, train_slots, Form, OnlineOptions, ProgrammedSet, Slot, SlotImage, STRIDES,
};
use golden::mpc::{ByteRule, ModelSet, MpcCodec};
use hdl::ir::Sim;
use hdl::mpc::decompressor;
use hdl::mpc::SlotSpec;

mod common;
use common::{bits_block, default_set, form, lcg, left_aligned, shaped_block, Shape};

/// Blocks of every corpus file: `per_file` evenly spaced ones (none, a
/// recorded skip, without the corpus).
fn corpus_sample(per_file: usize) -> Vec<[u8; 32]> {
    common::corpus("the corpus blocks of the slot decompressor", per_file, 0)
}

/// Random blocks of a few shapes (noise, word deltas, sparse, repeats).
fn random_blocks(n: usize, seed: &mut u64) -> Vec<[u8; 32]> {
    use Shape::*;
    let shapes = [Noise, WordDeltas, Sparse, Repeats];
    let mut v = vec![[0u8; 32], [0xff; 32]];
    v.extend((0..n).map(|i| shaped_block(shapes[i % shapes.len()], seed)));
    v
}

/// A random valid image of `form` with every one of its `k` slots loaded.
fn random_image(set: &ModelSet, form: Form, k: usize, seed: &mut u64) -> SlotImage {
    let mut image = SlotImage::empty(set, form, k);
    for slot in image.slots.iter_mut() {
        let mut rules = [ByteRule::Root; 32];
        let mut depth = [0usize; 32];
        // a chain as deep as the form allows (bytes 1..=depth on the byte
        // before, ratio 1), so that every restoration level counts
        for i in 1..=form.max_depth {
            rules[i] = ByteRule::Base {
                base: (i - 1) as u8,
                shift: 0,
            };
            depth[i] = i;
        }
        for i in form.max_depth + 1..32 {
            let options: Vec<usize> = STRIDES
                .iter()
                .map(|&s| s as usize)
                .filter(|&s| s <= i && depth[i - s] < form.max_depth)
                .collect();
            if options.is_empty() || lcg(seed).is_multiple_of(5) {
                continue;
            }
            let s = options[(lcg(seed) % options.len() as u64) as usize];
            let m = form.max_shift as u64;
            let shift = (lcg(seed) % (2 * m + 1)) as i8 - form.max_shift;
            rules[i] = ByteRule::Base {
                base: (i - s) as u8,
                shift,
            };
            depth[i] = depth[i - s] + 1;
        }
        let reorder = common::random_reorder(set, form, seed);
        *slot = Some(Slot { rules, reorder });
    }
    let image = SlotImage::load(&image.to_bytes()).expect("a random image is valid");
    for slot in image.slots.iter().flatten() {
        assert_eq!(rules_depth(&slot.rules), Ok(form.max_depth));
    }
    image
}

/// A decompressor with slots in the IR simulator.
struct Unit {
    sim: Sim,
    /// Width of `in_bits`.
    w: u32,
    stages: usize,
}

impl Unit {
    fn new(set: &ModelSet, spec: SlotSpec) -> Unit {
        Unit::staged(set, spec, decompressor::slot_default_stages(&spec))
    }

    fn staged(set: &ModelSet, spec: SlotSpec, stages: usize) -> Unit {
        let (dec, desc) = decompressor::build_slots(set, spec, stages).expect("decompressor");
        assert_eq!(desc.latency, stages);
        dec.emit(&[])
            .expect("decompressor passes the generation-time lint");
        let p = set.predictors.len();
        let ids = hdl::mpc::slots::Ids {
            custom: set.id_count() - p - 1,
            p,
            k: spec.k(),
        };
        let w = ids.max_header_bits() + 256;
        let mut sim = Sim::new(&dec).expect("sim");
        for (name, v) in [
            ("rst", 1),
            ("in_valid", 0),
            ("out_ready", 1),
            ("cfg_we", 0),
            ("cfg_addr", 0),
            ("cfg_wdata", 0),
            ("in_len", 0),
            ("in_epoch", 0),
        ] {
            sim.set_u128(name, v).expect(name);
        }
        sim.step();
        sim.set_u128("rst", 0).expect("rst");
        Unit { sim, w, stages }
    }

    /// Replay `writes` on the configuration port, then wait for the
    /// commit to take effect.
    fn program(&mut self, writes: &[RegisterWrite]) {
        let sim = &mut self.sim;
        sim.set_u128("in_valid", 0).expect("valid");
        for wr in writes {
            sim.set_u128("cfg_we", 1).expect("we");
            sim.set_u128("cfg_addr", wr.addr as u128).expect("addr");
            sim.set_u128("cfg_wdata", wr.value as u128).expect("wdata");
            sim.step();
        }
        sim.set_u128("cfg_we", 0).expect("we");
        for _ in 0..=self.stages + 2 {
            if sim.get_u128("cfg_pending").expect("pending") == 0 {
                break;
            }
            sim.step();
        }
        assert_eq!(sim.get_u128("cfg_pending").expect("pending"), 0);
        assert_eq!(sim.get_u128("in_ready").expect("ready"), 1);
    }

    /// Decode `inputs` (bytes, length in bits, epoch) back to back; the
    /// outputs (error, block, model) in order.
    fn decode(&mut self, inputs: &[Input]) -> Vec<(bool, [u8; 32], u32)> {
        let sim = &mut self.sim;
        let mut out = Vec::with_capacity(inputs.len());
        let mut t = 0;
        while out.len() < inputs.len() {
            assert!(t < inputs.len() + 4 * self.stages, "outputs stall");
            match inputs.get(t) {
                Some((bytes, len, epoch)) => {
                    let bits = left_aligned(bytes, (*len).min(self.w as usize), self.w);
                    sim.set("in_bits", &bits).expect("in_bits");
                    sim.set_u128("in_len", *len as u128).expect("in_len");
                    sim.set_u128("in_epoch", *epoch as u128).expect("in_epoch");
                    sim.set_u128("in_valid", 1).expect("valid");
                    assert_eq!(sim.get_u128("in_ready").expect("ready"), 1);
                }
                None => sim.set_u128("in_valid", 0).expect("valid"),
            }
            sim.step();
            t += 1;
            if sim.get_u128("out_valid").expect("valid") == 1 {
                out.push((
                    sim.get_u128("out_error").expect("error") == 1,
                    bits_block(&sim.get("out_block").expect("block")),
                    sim.get_u128("out_model").expect("model") as u32,
                ));
            }
        }
        sim.set_u128("in_valid", 0).expect("valid");
        // the last output was read in the cycle it left: drain the rest
        for _ in 0..self.stages {
            sim.step();
        }
        out
    }
}

/// The compressed `blocks` under `ps` with corrupted variants (a flipped
/// bit, a longer and a shorter length), and the golden result of each
/// (`Ok((block, model))` or an error), all of epoch `epoch`.
type Expected = Result<([u8; 32], u32), String>;

/// A decoder input: the bytes, the length in bits, the epoch.
type Input = (Vec<u8>, usize, u8);

fn coded_inputs(
    ps: &ProgrammedSet,
    blocks: &[[u8; 32]],
    epoch: u8,
    w: u32,
    seed: &mut u64,
) -> (Vec<Input>, Vec<Expected>) {
    let mut inputs = Vec::new();
    for (i, b) in blocks.iter().enumerate() {
        let c = ps.compress(b);
        let len = c.len as usize;
        inputs.push((c.bytes.to_vec(), len, epoch));
        // every third block also corrupted: a flipped bit, a longer or a
        // shorter length in turn
        match i % 9 {
            0 => {
                let mut bad = c.bytes.to_vec();
                let bit = (lcg(seed) % len as u64) as usize;
                bad[bit / 8] ^= 0x80 >> (bit % 8);
                inputs.push((bad, len, epoch));
            }
            3 => inputs.push((
                c.bytes.to_vec(),
                (len + 1 + (lcg(seed) % 5) as usize).min(w as usize + 3),
                epoch,
            )),
            6 => inputs.push((
                c.bytes.to_vec(),
                len.saturating_sub(1 + (lcg(seed) % 5) as usize),
                epoch,
            )),
            _ => {}
        }
    }
    let expected = inputs
        .iter()
        .map(|(bytes, len, _)| golden_decode(ps, bytes, *len))
        .collect();
    (inputs, expected)
}

/// What the golden programmed set makes of `len` bits of `bytes` (the bits
/// past `len` are zero on the bus).
fn golden_decode(ps: &ProgrammedSet, bytes: &[u8], len: usize) -> Expected {
    let mut masked = bytes.to_vec();
    for k in len..masked.len() * 8 {
        masked[k / 8] &= !(0x80 >> (k % 8));
    }
    let h = ps.header_bits() as usize;
    let model = (0..h.min(len)).fold(0u32, |a, k| {
        (a << 1) | ((masked[k / 8] >> (7 - k % 8)) & 1) as u32
    });
    ps.decompress(&masked, len)
        .map(|b| (b, model))
        .map_err(|e| e.to_string())
}

fn check(what: &str, got: &[(bool, [u8; 32], u32)], expected: &[Expected]) -> usize {
    assert_eq!(got.len(), expected.len());
    let mut errors = 0;
    for (i, ((err, block, model), exp)) in got.iter().zip(expected).enumerate() {
        match exp {
            Ok((b, m)) => assert!(
                !err && block == b && model == m,
                "{what}: input {i}: expected model {m} {b:02x?}, RTL error={err} model {model} {block:02x?}"
            ),
            Err(e) => {
                errors += 1;
                assert!(
                    *err && *block == [0; 32],
                    "{what}: input {i}: golden error {e}, RTL error={err} {block:02x?}"
                );
            }
        }
    }
    errors
}

/// Program `image` with `epoch` and decode `blocks` coded with it (and
/// their corrupted variants), blocks of another epoch and header values
/// past the raw escape.
fn check_image(unit: &mut Unit, set: &ModelSet, image: &SlotImage, epoch: u8, blocks: &[[u8; 32]]) {
    let what = format!("{} K={} epoch {epoch}", image.form.name, image.slots.len());
    let ps = ProgrammedSet::new(set, image).expect("the image fits the set");
    unit.program(&image_writes(set, image, epoch).expect("register writes"));
    let mut seed = 5 + epoch as u64;
    let (inputs, expected) = coded_inputs(&ps, blocks, epoch, unit.w, &mut seed);
    let got = unit.decode(&inputs);
    assert!(
        check(&what, &got, &expected) > 0,
        "{what}: some inputs are errors"
    );
    // every model ID decodes: the slots are used by the coded blocks
    let used: std::collections::BTreeSet<u32> = expected
        .iter()
        .filter_map(|e| e.as_ref().ok().map(|(_, m)| *m))
        .collect();
    for j in 0..image.slots.len() {
        if let Some(id) = ps.slot_id(j) {
            assert!(
                used.contains(&id),
                "{what}: slot {j} (ID {id}) codes no block"
            );
        }
    }
    // another epoch: refused, never decoded
    let other: Vec<Input> = inputs
        .iter()
        .step_by(13)
        .take(10)
        .map(|(b, l, e)| (b.clone(), *l, e.wrapping_add(1 + (*l % 3) as u8)))
        .collect();
    let got = unit.decode(&other);
    for (i, (err, block, _)) in got.iter().enumerate() {
        assert!(
            *err && *block == [0; 32],
            "{what}: block {i} of another epoch: error={err} {block:02x?}"
        );
    }
    // header values past the raw escape (when the header has room)
    let h = ps.header_bits();
    let raw = ps.id_count() as u32 - 1;
    let mut bad = Vec::new();
    for id in raw + 1..1 << h {
        let mut bytes = vec![0u8; 34];
        bytes[0] = (id << (8 - h)) as u8;
        for len in [h as usize + 32 * (id as usize % 2), h as usize + 256] {
            bad.push((bytes.clone(), len, epoch));
        }
    }
    let expected: Vec<Expected> = bad
        .iter()
        .map(|(b, l, _)| golden_decode(&ps, b, *l))
        .collect();
    assert!(expected.iter().all(Result::is_err), "{what}: IDs past raw");
    let got = unit.decode(&bad);
    check(&format!("{what}, IDs past raw"), &got, &expected);
}

/// One unit of `form` with `k` slots: a trained image, then a random one
/// with every slot loaded.
fn check_form(name: &str, k: usize) {
    let set = default_set();
    let form = form(name);
    let spec = SlotSpec::new(k, form).expect("slot spec");
    let mut unit = Unit::new(&set, spec);
    let corpus = corpus_sample(12);
    let mut seed = 11 + k as u64;
    // a quarter of the training blocks, and random ones
    let mut blocks: Vec<[u8; 32]> = corpus.iter().step_by(4).copied().collect();
    blocks.extend(random_blocks(16, &mut seed));
    let trained = train_slots(&set, &corpus, &OnlineOptions::new(form, k)).expect("trained");
    if trained.loaded() > 0 {
        check_image(&mut unit, &set, &trained, 1, &blocks);
    }
    let random = random_image(&set, form, k, &mut seed);
    // blocks the random slots win: their own prediction of random residues
    let ps = ProgrammedSet::new(&set, &random).expect("random image fits");
    let mut own = blocks.clone();
    own.extend(slot_friendly_blocks(&ps, &set, k, &mut seed));
    check_image(&mut unit, &set, &random, 2, &own);
}

/// Blocks that slot `j` of `ps` codes short: restored from small residues
/// by its own predictor, so that every slot wins some blocks.
fn slot_friendly_blocks(
    ps: &ProgrammedSet,
    set: &ModelSet,
    k: usize,
    seed: &mut u64,
) -> Vec<[u8; 32]> {
    let expanded = ps.expanded();
    let p = set.predictors.len();
    let mut out = Vec::new();
    for j in 0..k {
        let pr = &expanded.predictors[p + j];
        for _ in 0..8 {
            let residue: [u8; 32] = std::array::from_fn(|i| {
                if i <= 8 || lcg(seed).is_multiple_of(3) {
                    (lcg(seed) % 4) as u8
                } else {
                    0
                }
            });
            let mut block = [0u8; 32];
            for &i in &golden::mpc::transform::restore_order(pr) {
                let pred = pr.bytes[i].predict(&block);
                block[i] = residue[i].wrapping_add(pred);
            }
            out.push(block);
        }
    }
    out
}

#[test]
fn stride_colpart_one_slot_decodes_like_golden() {
    check_form("stride-colpart", 1);
}

#[test]
fn stride_colpart_two_slots_decode_like_golden() {
    check_form("stride-colpart", 2);
}

#[test]
fn stride_lib_decodes_like_golden() {
    check_form("stride-lib", 1);
    check_form("stride-lib", 2);
}

#[test]
fn stride_cols_decodes_like_golden() {
    check_form("stride-cols", 1);
    check_form("stride-cols", 2);
}

/// Deeper units: the hard-wired part at 5 stages (the last codes with the
/// inverse transforms, the length checks in the restoration stage) and at
/// 8 (one stage of inverse transforms alone).
#[test]
fn other_depths_decode_like_golden() {
    let set = default_set();
    let spec = SlotSpec::new(2, form("stride-colpart")).expect("slot spec");
    let mut seed = 17;
    let image = random_image(&set, spec.form(), 2, &mut seed);
    let ps = ProgrammedSet::new(&set, &image).expect("random image fits");
    let mut blocks = corpus_sample(2);
    blocks.extend(random_blocks(12, &mut seed));
    blocks.extend(slot_friendly_blocks(&ps, &set, 2, &mut seed));
    let range = decompressor::slot_stages(&spec);
    for stages in [range.start() + 1, *range.end()] {
        let mut unit = Unit::staged(&set, spec, stages);
        check_image(&mut unit, &set, &image, 3, &blocks);
    }
}

/// The form with chains of up to 8 bases: eight restoration levels.
#[test]
fn stride_colpart_d8_decodes_like_golden() {
    check_form("stride-colpart-d8", 1);
}

/// At the reset value (nothing loaded, epoch 0) a unit with slots decodes
/// like the hard-wired set; a block of another epoch is refused.
#[test]
fn reset_value_decodes_like_the_hard_wired_set() {
    let set = default_set();
    let spec = SlotSpec::new(2, form("stride-colpart")).expect("slot spec");
    let mut unit = Unit::new(&set, spec);
    let image = SlotImage::empty(&set, spec.form(), 2);
    let ps = ProgrammedSet::new(&set, &image).expect("empty image");
    assert_eq!(ps.header_bits(), set.header_bits());
    let codec = MpcCodec::new(&set);
    let mut seed = 3;
    let mut blocks = corpus_sample(3);
    blocks.extend(random_blocks(16, &mut seed));
    for b in &blocks {
        let (c, h) = (codec.compress(b), ps.compress(b));
        assert_eq!((&c.bytes[..], c.len), (&h.bytes[..], h.len));
    }
    let (inputs, expected) = coded_inputs(&ps, &blocks, 0, unit.w, &mut seed);
    let got = unit.decode(&inputs);
    assert!(check("reset value", &got, &expected) > 0);
    let other: Vec<Input> = inputs
        .iter()
        .step_by(13)
        .map(|(b, l, _)| (b.clone(), *l, 1))
        .collect();
    for (err, block, _) in unit.decode(&other) {
        assert!(err && block == [0; 32], "epoch 1 at the reset value");
    }
}

/// Depths outside the slot unit's range are refused; the range starts
/// past the hard-wired unit's by the slot restoration stages.
#[test]
fn slot_depths_outside_their_range_are_refused() {
    let set = default_set();
    for name in ["stride-colpart", "stride-colpart-d8"] {
        let spec = SlotSpec::new(1, form(name)).expect("slot spec");
        let range = decompressor::slot_stages(&spec);
        assert!(range.contains(&decompressor::slot_default_stages(&spec)));
        assert!(*range.start() > *hdl::mpc::DECOMPRESSOR_STAGES.start());
        for stages in [range.start() - 1, range.end() + 1] {
            assert!(decompressor::build_slots(&set, spec, stages).is_err());
        }
    }
}
