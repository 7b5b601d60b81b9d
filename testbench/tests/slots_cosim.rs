//! Co-simulation of MPC units with programmable slots (`models/example`
//! with `--program-slots 2 --slot-form stride-colpart`: compressor and
//! decompressor on both simulators; `--program-slots 1 --slot-form
//! stride-lib`: compressor and decompressor on Icarus) on Icarus (a few
//! dozen blocks: it runs these units at a few blocks per second) and
//! Verilator (3000 blocks); `make cosim-slots` runs every stride form,
//! the loopback included, on both:
//! images trained on corpus blocks and random valid images, programmed
//! mid-stream every few hundred blocks under random stalls, backpressure
//! and resets, after a first run of blocks at the reset value; the golden
//! model codes each block with the image (and epoch) the schedule gives
//! it. On Verilator also the epoch rule (blocks coded with image A and
//! epoch 1, given to a decompressor programmed with image B and epoch 2,
//! are all refused) and the stream protocol with random words in every
//! slot register.
//!
//! A simulator that is not installed is skipped with an install hint, by
//! the workspace's strict-skip rule (`MPCGEN_REQUIRE_TOOLS=1` makes it a
//! failure).

use std::path::PathBuf;

use golden::mpc::program::Form;
use golden::mpc::ModelSet;
use testbench::rtl::Rtl;
use testbench::run::{self, Config, UnitReport};
use testbench::slots::{ImageKind, NamedImage, Plan, SlotOptions, SlotUnit};
use testbench::{Simulator, Unit};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn installed(s: Simulator) -> bool {
    testbench::stream_unit::simulator_or_skip(s, &format!("the {s} co-simulation of slot units"))
}

fn unit(k: usize, form: &str) -> SlotUnit {
    SlotUnit {
        k,
        form: Form::by_name(form).expect("a slot form"),
    }
}

fn config(s: Simulator, slots: SlotUnit, blocks: usize, every: usize) -> Config {
    let mut cfg = Config::new(&root().join("models/example"));
    cfg.build = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "slots-{}-{}",
        s.name(),
        slots.form.name
    ));
    cfg.sims = vec![s];
    cfg.corpus = testbench::stream_unit::test_corpus();
    cfg.blocks = blocks;
    cfg.seed = 2026;
    cfg.program_slots = Some(slots);
    cfg.slot_options = SlotOptions {
        images: vec![ImageKind::Trained, ImageKind::Random],
        reprogram_every: every,
    };
    cfg
}

fn check(reports: &[UnitReport], blocks: usize) {
    let mut ok = true;
    for r in reports {
        println!("{}", r.render());
        ok &= r.verdict.ok();
        assert_eq!(r.verdict.checked, blocks as u64, "{} {}", r.sim, r.unit);
        assert!(r.verdict.resets > 0, "mid-stream resets happened");
    }
    assert!(ok, "mismatches (see the reports above)");
}

/// `units`, images cycling every `every` blocks; each image, the reset
/// value included, codes some blocks; with `full`, slot model IDs are
/// chosen and the decompressor met wrong epochs and malformed inputs.
fn cycling(
    s: Simulator,
    slots: SlotUnit,
    units: &[Unit],
    blocks: usize,
    every: usize,
    full: bool,
) -> Config {
    let mut cfg = config(s, slots, blocks, every);
    cfg.units = units.to_vec();
    let reports = run::run(&cfg).expect("co-simulation runs");
    assert_eq!(reports.len(), units.len());
    check(&reports, blocks);
    for r in &reports {
        let seen = |k: &str| r.coverage.iter().any(|(c, n)| c.starts_with(k) && *n > 0);
        for image in ["image reset value", "image trained", "image random 1"] {
            assert!(seen(image), "{} {}: no block of {image}", r.sim, r.unit);
        }
        if !full {
            continue;
        }
        assert!(seen("model slot"), "{} {}: no slot chosen", r.sim, r.unit);
        if r.unit == Unit::Decompressor {
            assert!(seen("error wrong epoch"), "{:?}", r.coverage);
            assert!(r
                .verdict
                .per_tag
                .keys()
                .any(|k| k.starts_with("malformed/")));
        }
    }
    cfg
}

/// The model set of `cfg`, its units with `slots`, and the images of the
/// plans.
fn prepared(cfg: &Config, slots: SlotUnit) -> (ModelSet, Rtl, Vec<NamedImage>) {
    let set = testbench::rtl::load_set(&cfg.model).expect("model set");
    let rtl = run::prepare_rtl(cfg, &set).expect("units");
    let images = Plan::images(
        &set,
        slots,
        &cfg.slot_options,
        cfg.seed,
        cfg.corpus.as_deref(),
    )
    .expect("images");
    (set, rtl, images)
}

/// The epoch rule and invalid register contents, on the units of `cfg`.
fn rule_and_invalid_registers(cfg: &Config, slots: SlotUnit) {
    let (set, rtl, images) = prepared(cfg, slots);
    assert_eq!(rtl.slots, Some(slots));

    // blocks of image A (epoch 1) into a decompressor holding image B
    // (epoch 2): every one refused
    let mut rule = cfg.clone();
    rule.blocks = 1000;
    let reports = run::run_slots(&rule, &set, &rtl, &[Unit::Decompressor], &|lens| {
        Plan::epoch_rule(&set, slots, images.clone(), lens)
    })
    .expect("co-simulation runs");
    check(&reports, rule.blocks);
    let refused = reports[0]
        .coverage
        .iter()
        .find(|(c, _)| c == "error wrong epoch")
        .map_or(0, |(_, n)| *n);
    assert!(
        refused >= rule.blocks as u64 / 2 - 2,
        "{refused} blocks of the old image refused: {:?}",
        reports[0].coverage
    );

    // random words in every slot register: one block out per block in, in
    // order, the handshake rules and the epochs; then a valid image again
    let mut noise = cfg.clone();
    noise.blocks = 1200;
    let reports = run::run_slots(
        &noise,
        &set,
        &rtl,
        &[Unit::Compressor, Unit::Decompressor],
        &|lens| Plan::invalid_registers(&set, slots, images.clone(), lens, noise.seed),
    )
    .expect("co-simulation runs");
    check(&reports, noise.blocks);
    for r in &reports {
        assert!(r
            .coverage
            .iter()
            .any(|(c, n)| c == "invalid registers" && *n > 0));
    }
}

const BOTH: [Unit; 2] = [Unit::Compressor, Unit::Decompressor];

/// A golden model that follows another plan than the writes is caught,
/// each mismatch naming the block, the image, its epoch and the field:
/// images swapped (the units code with what was written), then one epoch
/// changed.
fn wrong_plan_is_caught(cfg: &Config, slots: SlotUnit) {
    let (set, rtl, images) = prepared(cfg, slots);
    let mut wrong = cfg.clone();
    wrong.blocks = 1000;
    for swap in [true, false] {
        let reports = run::run_slots(&wrong, &set, &rtl, &[Unit::Compressor], &|lens| {
            let mut p = Plan::cycling(&set, slots, images.clone(), lens, 200)?;
            if swap {
                // golden codes with image 2 where image 1 was written
                p.images.swap(1, 2);
            } else {
                // the second segment of shard 0 claims the next epoch
                p.shards[0].segments[1].epoch += 1;
            }
            Ok(p)
        })
        .expect("co-simulation runs");
        let r = &reports[0];
        let text = r.render();
        println!("{text}");
        assert!(!r.verdict.ok());
        let m = r.verdict.mismatches.first().expect("a mismatch");
        assert!(
            text.contains(&format!("block {} (", m.idx)),
            "names the block"
        );
        let field = if swap { "out_" } else { "out_epoch " };
        assert!(
            m.what.starts_with("image ") && m.what.contains("(epoch ") && m.what.contains(field),
            "{}",
            m.what
        );
    }
}

#[test]
fn colpart_slots_match_golden_on_verilator() {
    if !installed(Simulator::Verilator) {
        return;
    }
    let slots = unit(2, "stride-colpart");
    let cfg = cycling(Simulator::Verilator, slots, &BOTH, 3000, 400, true);
    rule_and_invalid_registers(&cfg, slots);
    wrong_plan_is_caught(&cfg, slots);
}

#[test]
fn colpart_slots_match_golden_on_icarus() {
    if installed(Simulator::Icarus) {
        cycling(
            Simulator::Icarus,
            unit(2, "stride-colpart"),
            &BOTH,
            40,
            12,
            false,
        );
    }
}

#[test]
fn library_slot_matches_golden_on_icarus() {
    if installed(Simulator::Icarus) {
        cycling(
            Simulator::Icarus,
            unit(1, "stride-lib"),
            &BOTH,
            60,
            18,
            false,
        );
    }
}
