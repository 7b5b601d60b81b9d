//! The stage locator of MPC units with programmable slots: every stage
//! probe a unit with slots publishes agrees with the golden trace of its
//! programmed set (the hard-wired predictors plus the loaded slots of the
//! active image) on the units as generated, read in the IR evaluator with
//! images loaded through the configuration port (the reset value, random
//! valid images with some slots unloaded); each probe is compared on some
//! input. A register of the slot decode and one of the hard-wired decode,
//! broken, are located at their stage and signal.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use golden::mpc::program::{registers, Form, ProgrammedSet, SlotImage};
use golden::mpc::{ModelSet, MpcCodec, BLOCK_BYTES, MAX_BLOCK_BYTES};
use hdl::ir::{Bits, Module, Sim};
use hdl::mpc::SlotSpec;
use hdl::unit::{Mirror, ProbeKind, UnitDescription, When};
use testbench::locate::{
    compare_probes, left_aligned_bits, stage_valid, Location, ProbeGolden, Sampler,
};
use testbench::rng::Rng;
use testbench::slots::{directed_block, directed_block_of_predictor, random_image, SlotUnit};
use testbench::vectors::{self, GenConfig, Tags};

fn root() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn set(name: &str) -> ModelSet {
    ModelSet::load(&root().join("models").join(name)).expect("model set")
}

/// An MSB-first bit string as the evaluator's value.
fn bits_of(text: &str) -> Bits {
    let w = text.len();
    let mut words = vec![0u64; w.div_ceil(64).max(1)];
    for (k, c) in text.bytes().rev().enumerate() {
        if c == b'1' {
            words[k / 64] |= 1 << (k % 64);
        }
    }
    Bits::from_words(&words, w as u32).expect("width")
}

fn text_of(v: &Bits) -> String {
    (0..v.width())
        .rev()
        .map(|i| if v.bit(i) { '1' } else { '0' })
        .collect()
}

/// A unit with slots in the IR evaluator.
struct Dut {
    sim: Sim,
    desc: UnitDescription,
    names: BTreeSet<String>,
}

impl Dut {
    fn new(module: &Module, desc: UnitDescription) -> Dut {
        let mut sim = Sim::new(module).expect("sim");
        for (name, v) in [
            ("rst", 1),
            ("in_valid", 0),
            ("out_ready", 1),
            ("cfg_we", 0),
            ("cfg_addr", 0),
            ("cfg_wdata", 0),
        ] {
            sim.set_u128(name, v).expect(name);
        }
        sim.step();
        sim.set_u128("rst", 0).expect("rst");
        let mut names: BTreeSet<String> = desc.probes.iter().map(|p| p.name.clone()).collect();
        names.extend(desc.probes.iter().filter_map(|p| p.with.clone()));
        names.extend(
            desc.stages
                .iter()
                .filter_map(|s| stage_valid(&desc, s.stage)),
        );
        Dut { sim, desc, names }
    }

    /// Replay `writes` on the configuration port and wait for the commit.
    fn program(&mut self, writes: &[registers::RegisterWrite]) {
        let sim = &mut self.sim;
        for w in writes {
            sim.set_u128("cfg_we", 1).expect("we");
            sim.set_u128("cfg_addr", w.addr as u128).expect("addr");
            sim.set_u128("cfg_wdata", w.value as u128).expect("wdata");
            sim.step();
        }
        sim.set_u128("cfg_we", 0).expect("we");
        for _ in 0..=self.desc.latency + 2 {
            if sim.get_u128("cfg_pending").expect("pending") == 0 {
                break;
            }
            sim.step();
        }
        assert_eq!(sim.get_u128("in_ready").expect("ready"), 1, "committed");
    }

    /// Run one input alone (`inputs`: port and MSB-first value) and compare
    /// the probes with `golden`, as the locator does with a VCD: stage-k
    /// logic after k-1 edges, stage-k registers after k edges.
    fn compare(&mut self, inputs: &[(&str, String)], golden: &ProbeGolden) -> Location {
        let sim = &mut self.sim;
        for (name, v) in inputs {
            sim.set(name, &bits_of(v)).expect("input");
        }
        sim.set_u128("in_valid", 1).expect("in_valid");
        let mut snapshots: Vec<BTreeMap<String, String>> = Vec::new();
        for edge in 0..=self.desc.latency {
            snapshots.push(
                self.names
                    .iter()
                    .map(|n| (n.clone(), text_of(&sim.get(n).expect("signal"))))
                    .collect(),
            );
            sim.step();
            if edge == 0 {
                sim.set_u128("in_valid", 0).expect("in_valid");
            }
        }
        let desc = &self.desc;
        let value = |name: &str, stage: usize, logic: bool| {
            let at = if logic { stage - 1 } else { stage };
            snapshots[at].get(name).cloned().unwrap_or_default()
        };
        let valid = |stage: usize| {
            stage_valid(desc, stage).map(|f| {
                let v = value(&f, stage, false);
                (f, v)
            })
        };
        let mut loc = Location::default();
        compare_probes(
            &desc.module,
            0,
            &desc.probes,
            &|p| golden.check(p),
            &Sampler {
                value: &value,
                valid: &valid,
            },
            &mut loc,
        )
        .expect("every probe has a golden value");
        loc.diffs.sort_by_key(|d| d.order);
        loc
    }
}

/// The images of a check: the reset value and `n` random valid images.
fn images(set: &ModelSet, unit: SlotUnit, n: usize, seed: u64) -> Vec<SlotImage> {
    let mut rng = Rng::new(seed);
    let mut v = vec![SlotImage::empty(set, unit.form, unit.k)];
    for _ in 0..n {
        v.push(random_image(set, unit, &mut rng).expect("random image"));
    }
    v
}

/// Blocks for image `image`: `n` compressor vectors of the seed,
/// directed blocks of its loaded slots (which their slot wins, two each)
/// and, with `hard_wired` (the image's coder), a block each hard-wired
/// predictor wins.
fn blocks(
    set: &ModelSet,
    image: &SlotImage,
    n: usize,
    seed: u64,
    hard_wired: Option<&MpcCodec>,
) -> Vec<[u8; BLOCK_BYTES]> {
    let mut tags = Tags::new();
    let gen = GenConfig {
        blocks: n,
        seed,
        corpus: None,
    };
    let mut v: Vec<[u8; BLOCK_BYTES]> = vectors::compressor_vectors(set, &gen, &mut tags)
        .expect("vectors")
        .into_iter()
        .map(|c| c.block)
        .collect();
    let mut rng = Rng::new(seed ^ 0x5107);
    for slot in image.slots.iter().flatten() {
        for _ in 0..2 {
            v.push(directed_block(slot, &set.predictors, &mut rng));
        }
    }
    if let Some(codec) = hard_wired {
        // a block each hard-wired predictor wins (the first of its directed
        // blocks that the programmed set codes with it)
        for (i, p) in set.predictors.iter().enumerate() {
            let id = set.predictor_id(i);
            if let Some(b) = (0..500)
                .map(|_| directed_block_of_predictor(p, &mut rng))
                .find(|b| codec.compress(b).model == id)
            {
                v.push(b);
            }
        }
    }
    v
}

/// Every probe of `desc` is compared on some input.
fn all_compared(label: &str, desc: &UnitDescription, compared: &BTreeSet<String>) {
    for p in &desc.probes {
        assert!(
            compared.contains(&format!("{}.{}", desc.module, p.name)),
            "{label}: probe {} ({}, when {:?}) never compared",
            p.name,
            p.mirrors,
            p.when
        );
    }
}

/// The probes of both units of `set` with `k` slots of `form` at a
/// compressor depth of `stages` agree with the golden trace of the
/// programmed set.
fn check(set_name: &str, k: usize, form: &str, stages: usize, per_image: usize) {
    let set = set(set_name);
    let label = format!("{set_name} K={k} {form} {stages}-stage");
    let f = Form::by_name(form).expect("form");
    let spec = SlotSpec::new(k, f).expect("spec");
    let unit = SlotUnit { k, form: f };
    let p = set.predictors.len();
    let imgs = images(&set, unit, 2, 17 + k as u64);
    let (cm, cdesc) =
        hdl::mpc::compressor::build_slots_staged(&set, spec, stages).expect("compressor");
    let dstages = hdl::mpc::decompressor::slot_default_stages(&spec);
    let (dm, ddesc) =
        hdl::mpc::decompressor::build_slots(&set, spec, dstages).expect("decompressor");
    for d in [&cdesc, &ddesc] {
        assert!(
            d.probes.iter().any(|p| p.kind == ProbeKind::Register)
                && d.probes.iter().any(|p| p.kind == ProbeKind::Logic),
            "{label} {}: register and logic probes",
            d.module
        );
        for s in &d.stages {
            assert!(
                d.probes.iter().any(|p| p.stage == s.stage),
                "{label} {}: stage {} has a probe",
                d.module,
                s.stage
            );
        }
    }
    assert!(
        cdesc
            .probes
            .iter()
            .any(|p| matches!(p.mirrors, Mirror::Slot { .. })),
        "{label}: the compressor has probes of its slots"
    );
    assert!(
        ddesc.probes.iter().any(|p| p.when == When::Slot),
        "{label}: the decompressor has probes of its slot path"
    );
    let width = ddesc
        .ports
        .iter()
        .find(|q| q.name == "in_bits")
        .expect("in_bits")
        .width;
    let mut comp = Dut::new(&cm, cdesc);
    let mut dec = Dut::new(&dm, ddesc);

    let (mut c_seen, mut d_seen) = (BTreeSet::new(), BTreeSet::new());
    for (n, image) in imgs.iter().enumerate() {
        let epoch = n as u8 + 1;
        let ps = ProgrammedSet::new(&set, image).expect("programmed set");
        let writes = registers::image_writes(&set, image, epoch).expect("writes");
        comp.program(&writes);
        dec.program(&writes);
        let codec = ps.fast_codec();
        let hard_wired = (n == 1).then_some(&codec);
        for (i, b) in blocks(&set, image, per_image, 100 + n as u64, hard_wired)
            .iter()
            .enumerate()
        {
            let g = ProbeGolden::programmed_compressor(b, &ps, p);
            let bus: String = b.iter().rev().map(|x| format!("{x:08b}")).collect();
            let loc = comp.compare(&[("in_block", bus)], &g);

            assert!(loc.diffs.is_empty(), "{label} image {n} block {i}:\n{loc}");
            c_seen.extend(loc.compared);
            // the decompressor on the block as coded, and with a wrong epoch
            let c = codec.compress(b);
            let wrong = i % 4 == 1;
            for given in [epoch].into_iter().chain(wrong.then_some(epoch + 100)) {
                let g = ProbeGolden::programmed_decompressor(
                    &c.bytes,
                    c.len as usize,
                    given == epoch,
                    &ps,
                    p,
                );
                let loc = dec.compare(
                    &[
                        (
                            "in_bits",
                            left_aligned_bits(&c.bytes, width as usize, width),
                        ),
                        ("in_len", format!("{:09b}", c.len)),
                        ("in_epoch", format!("{given:08b}")),
                    ],
                    &g,
                );
                assert!(
                    loc.diffs.is_empty(),
                    "{label} image {n} block {i} decompressed (epoch {given}):\n{loc}"
                );
                d_seen.extend(loc.compared);
            }
        }
        // malformed inputs of the image's coder
        let mut tags = Tags::new();
        let gen = GenConfig {
            blocks: per_image,
            seed: 300 + n as u64,
            corpus: None,
        };
        for (i, v) in vectors::decompressor_vectors(&codec, &gen, &mut tags)
            .expect("vectors")
            .iter()
            .enumerate()
        {
            let bytes: [u8; MAX_BLOCK_BYTES] = v.bits;
            let g = ProbeGolden::programmed_decompressor(&bytes, v.len as usize, true, &ps, p);
            let loc = dec.compare(
                &[
                    ("in_bits", left_aligned_bits(&bytes, width as usize, width)),
                    ("in_len", format!("{:09b}", v.len)),
                    ("in_epoch", format!("{epoch:08b}")),
                ],
                &g,
            );
            assert!(
                loc.diffs.is_empty(),
                "{label} image {n} decompressor vector {i} (len {}):\n{loc}",
                v.len
            );
            d_seen.extend(loc.compared);
        }
    }
    all_compared(&label, &comp.desc, &c_seen);
    all_compared(&label, &dec.desc, &d_seen);
}

#[test]
fn the_probes_of_a_zero_run_unit_with_one_slot_agree_with_the_programmed_golden_trace() {
    check("example", 1, "stride-colpart", 4, 8);
}

#[test]
fn the_probes_of_the_recommended_unit_agree_with_the_programmed_golden_trace() {
    check("default-exact", 2, "stride-colpart", 5, 8);
}

#[test]
fn the_probes_of_library_slots_agree_with_the_programmed_golden_trace() {
    check("example", 2, "stride-lib", 4, 8);
}

#[test]
fn the_probes_of_column_slots_on_the_5_stage_zero_run_unit_agree_with_the_programmed_golden_trace()
{
    check("default", 1, "stride-cols", 5, 8);
}

/// The decompressor with one `stride-colpart` slot of `models/example`,
/// with a stage register broken (each mutation of its next value in turn,
/// up to the first that changes the probes on `input`): the first
/// differing probe is that register, in its stage.
#[test]
fn a_broken_register_of_the_slot_decode_or_the_hard_wired_decode_is_located_at_its_stage() {
    use hdl::ir::mutate::{self, Site};
    let set = set("example");
    let f = Form::by_name("stride-colpart").expect("form");
    let spec = SlotSpec::new(1, f).expect("spec");
    let unit = SlotUnit { k: 1, form: f };
    let stages = hdl::mpc::decompressor::slot_default_stages(&spec);
    let (dm, ddesc) =
        hdl::mpc::decompressor::build_slots(&set, spec, stages).expect("decompressor");
    let width = ddesc
        .ports
        .iter()
        .find(|q| q.name == "in_bits")
        .expect("in_bits")
        .width;
    // an image that loads the slot, a block it codes with the slot and one
    // it codes with a hard-wired predictor
    let mut rng = Rng::new(5);
    let (image, slot_block, hw_block) = loop {
        let image = random_image(&set, unit, &mut rng).expect("image");
        let Some(slot) = image.slots[0].clone() else {
            continue;
        };
        let ps = ProgrammedSet::new(&set, &image).expect("programmed set");
        let slot_block = (0..50)
            .map(|_| directed_block(&slot, &set.predictors, &mut rng))
            .find(|b| Some(ps.compress(b).model) == ps.slot_id(0));
        let hw_block = (0..50)
            .map(|_| directed_block_of_predictor(&set.predictors[0], &mut rng))
            .find(|b| ps.compress(b).model == set.predictor_id(0));
        if let (Some(s), Some(h)) = (slot_block, hw_block) {
            break (image, s, h);
        }
    };
    let ps = ProgrammedSet::new(&set, &image).expect("programmed set");
    let writes = registers::image_writes(&set, &image, 3).expect("writes");
    let p = set.predictors.len();
    let run = |m: &Module, block: &[u8; BLOCK_BYTES]| {
        let mut dec = Dut::new(m, ddesc.clone());
        dec.program(&writes);
        let c = ps.compress(block);
        let g = ProbeGolden::programmed_decompressor(&c.bytes, c.len as usize, true, &ps, p);
        dec.compare(
            &[
                (
                    "in_bits",
                    left_aligned_bits(&c.bytes, width as usize, width),
                ),
                ("in_len", format!("{:09b}", c.len)),
                ("in_epoch", format!("{:08b}", 3)),
            ],
            &g,
        )
    };
    for (block, reg, stage, meaning) in [
        (&slot_block, "s4_block", 4, "residue"),
        (&hw_block, "s3_residue", 3, "residue"),
    ] {
        let good = run(&dm, block);
        assert!(good.diffs.is_empty(), "{reg}: generated:\n{good}");
        let mutations: Vec<_> = mutate::enumerate(&dm)
            .into_iter()
            .filter(|m| m.signal == reg && m.site == Site::Value)
            .take(12)
            .collect();
        let loc = mutations
            .iter()
            .map(|mu| run(&mutate::apply(&dm, mu).expect("mutant"), block))
            .find(|loc| !loc.diffs.is_empty())
            .unwrap_or_else(|| panic!("{reg}: no mutation of its next value changes a probe"));
        assert_eq!(loc.diffs[0].signal, reg, "{loc}");
        assert_eq!(
            loc.diffs[0].stage,
            format!("mpc_decompressor stage {stage} register"),
            "{loc}"
        );
        assert_eq!(loc.diffs[0].meaning, meaning, "{loc}");
    }
}

/// `cosim mutate` on a unit with slots locates a kill by letting the
/// killing vector flow alone after the writes of its image, in the unit
/// as generated and the mutant: a mutant of a slot's stage-1 register is
/// located at that stage and register.
#[test]
fn a_kill_of_a_slot_unit_mutant_is_located_at_the_mutated_stage() {
    use hdl::ir::mutate::{self, Site};
    use testbench::mutate::{first_difference_programmed, Located};
    let set = set("example");
    let f = Form::by_name("stride-lib").expect("form");
    let spec = SlotSpec::new(1, f).expect("spec");
    let unit = SlotUnit { k: 1, form: f };
    let (cm, cdesc) = hdl::mpc::compressor::build_slots_staged(&set, spec, 4).expect("compressor");
    let mut rng = Rng::new(9);
    let (image, block) = loop {
        let image = random_image(&set, unit, &mut rng).expect("image");
        if let Some(slot) = image.slots[0].clone() {
            break (image, directed_block(&slot, &set.predictors, &mut rng));
        }
    };
    let writes: Vec<(u16, u32)> = registers::image_writes(&set, &image, 2)
        .expect("writes")
        .iter()
        .map(|w| (w.addr, w.value))
        .collect();
    let mut ports = BTreeMap::new();
    ports.insert(
        "in_block".to_string(),
        (0..256)
            .map(|i| (block[i / 8] >> (i % 8)) & 1 == 1)
            .collect(),
    );
    let reg = "s1_slot_symbols_s0";
    let located: Vec<Located> = mutate::enumerate(&cm)
        .into_iter()
        .filter(|m| m.signal == reg && m.site == Site::Value)
        .take(6)
        .map(|mu| first_difference_programmed(&cm, &mu, &cdesc, &ports, &writes).expect("IR"))
        .collect();
    assert!(!located.is_empty(), "mutations of {reg}");
    assert!(
        located.iter().any(|l| *l
            == Located::Stage {
                stage: 1,
                signal: reg.to_string()
            }),
        "{located:?}"
    );
    for l in &located {
        assert!(
            matches!(l, Located::Stage { stage: 1, signal } if signal == reg)
                || matches!(l, Located::Nowhere(_)),
            "{l:?}"
        );
    }
}
