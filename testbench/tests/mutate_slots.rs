//! Mutation testing of units with programmable slots (`cosim mutate
//! --program-slots K --scope slots`): the scope rule, the combinational
//! view whose shadow configuration registers are inputs and whose outputs
//! count only under valid register contents, and the configuration of a
//! counterexample turned back into register writes.

use std::collections::BTreeMap;
use std::path::Path;

use golden::mpc::program::registers::{self, SlotRegisters};
use golden::mpc::program::{Form, ProgrammedSet, STRIDES};
use golden::mpc::{ModelSet, BLOCK_BYTES};
use testbench::mutate;
use testbench::rng::Rng;
use testbench::slots::{self, SlotUnit};

fn example() -> ModelSet {
    ModelSet::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../models/example"))
        .expect("models/example")
}

/// The shadow registers' values after `regs` (bits least significant
/// first), as a counterexample names them.
fn ports_of(regs: &SlotRegisters, unit: SlotUnit) -> BTreeMap<String, Vec<bool>> {
    let bits = |v: u64, w: usize| (0..w).map(|b| v >> b & 1 == 1).collect::<Vec<bool>>();
    let mut p = BTreeMap::new();
    p.insert(
        "cfg_shadow_epoch".to_string(),
        bits(u64::from(regs.epoch), 8),
    );
    let route_bits = registers::route_bits(unit.form, regs.hard_wired).expect("route bits");
    for (j, s) in regs.slots.iter().enumerate() {
        p.insert(format!("cfg_shadow_s{j}_flag"), vec![s.loaded]);
        let rules: Vec<bool> = s
            .rules
            .iter()
            .flat_map(|&r| bits(u64::from(r), 7))
            .collect();
        p.insert(format!("cfg_shadow_s{j}_rules"), rules);
        let route: Vec<bool> = (0..route_bits)
            .map(|b| s.route[b / 32] >> (b % 32) & 1 == 1)
            .collect();
        p.insert(format!("cfg_shadow_s{j}_route"), route);
    }
    p
}

fn to_bits(v: &[bool], width: u32) -> hdl::ir::Bits {
    let mut words = vec![0u64; (width as usize).div_ceil(64)];
    for (i, &b) in v.iter().enumerate().take(width as usize) {
        if b {
            words[i / 64] |= 1 << (i % 64);
        }
    }
    hdl::ir::Bits::from_words(&words, width).expect("bits")
}

/// The scope keeps the configuration registers, the commit and the slot
/// data path and leaves the hard-wired predictors' own logic out.
#[test]
fn the_slot_scope_holds_the_configuration_and_the_slot_data_path() {
    let set = example();
    let form = Form::by_name("stride-colpart").expect("form");
    let spec = hdl::mpc::SlotSpec::new(1, form).expect("spec");
    let (module, _) = hdl::mpc::compressor::build_slots(&set, spec).expect("unit builds");
    let keep = mutate::slot_logic(&module);
    for name in [
        "cfg_commit_pending",
        "cfg_load",
        "cfg_shadow_s0_rules",
        "cfg_active_s0_route",
        "slot_pred_s0",
        "slot_symbols_s0",
        "in_ready",
    ] {
        assert!(keep.contains(name), "{name} is slot logic");
    }
    for name in ["residue_p0", "enc_code0", "out_valid"] {
        assert!(!keep.contains(name), "{name} is not slot logic");
    }
    assert!(keep.iter().any(|n| n.starts_with("slot_benes_s0_l")));
}

/// The view of a slot compressor with its shadow registers as inputs
/// computes what the golden model of the programmed set computes, for
/// random valid images and blocks; register contents the hardware's
/// behaviour is not specified for (a shift code of 15 in a loaded slot)
/// zero every output, and the same contents in an unloaded slot do not.
/// A configuration read back from such inputs gives the same registers
/// and the same coder.
#[test]
fn the_view_codes_as_the_golden_model_under_valid_configurations_only() {
    let set = example();
    let form = Form::by_name("stride-colpart").expect("form");
    let unit = SlotUnit { k: 1, form };
    let spec = hdl::mpc::SlotSpec::new(1, form).expect("spec");
    let (module, _) = hdl::mpc::compressor::build_slots(&set, spec).expect("unit builds");
    let mut inputs = slots::configuration_registers(unit);
    inputs.extend(hdl::ir::comb::mixed_registers(&module, &inputs));
    let valid = |m: &mut hdl::ir::Module| slots::valid_configuration(m, unit, set.predictors.len());
    let outputs: Vec<String> = ["out_bits", "out_len", "out_model", "out_epoch"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let view =
        hdl::ir::comb::transparent_cut(&module, &outputs, &inputs, Some(&valid)).expect("the view");
    let mut sim = hdl::ir::Sim::new(&view).expect("evaluator");
    let widths: BTreeMap<String, u32> = module
        .signals()
        .iter()
        .map(|s| (s.name().to_string(), s.width()))
        .collect();
    let mut rng = Rng::new(11);
    let set_ports = |sim: &mut hdl::ir::Sim, ports: &BTreeMap<String, Vec<bool>>| {
        for (name, v) in ports {
            sim.set(name, &to_bits(v, widths[name])).expect("input");
        }
    };
    for round in 0..4 {
        let image = slots::random_image(&set, unit, &mut rng).expect("image");
        let writes = registers::image_writes(&set, &image, 3 + round).expect("writes");
        let (regs, commits) =
            SlotRegisters::from_writes(form, 1, set.predictors.len(), &writes).expect("regs");
        assert_eq!(commits, 1);
        let ports = ports_of(&regs, unit);
        // read back: the same registers, the same coder
        let (back, epoch) = slots::configuration_writes(unit, set.predictors.len(), &ports);
        assert_eq!(epoch, 3 + round);
        let (again, _) =
            SlotRegisters::from_writes(form, 1, set.predictors.len(), &back).expect("regs");
        assert_eq!(again, regs);
        let codec = slots::registers_codec(&set, unit, &back).expect("valid registers");
        let golden = ProgrammedSet::new(&set, &image)
            .expect("programmed")
            .fast_codec();
        set_ports(&mut sim, &ports);
        for _ in 0..6 {
            let mut block = [0u8; BLOCK_BYTES];
            // structured blocks, so that predictors win sometimes
            let step = rng.below(4) as u8;
            let base = rng.below(256) as u8;
            for (i, b) in block.iter_mut().enumerate() {
                *b = base.wrapping_add(step.wrapping_mul(i as u8));
                if rng.chance(0.1) {
                    *b ^= 1 << rng.below(8);
                }
            }
            let want = golden.compress(&block);
            assert_eq!(codec.compress(&block), want);
            let mut ports = BTreeMap::new();
            ports.insert(
                "in_block".to_string(),
                (0..8 * BLOCK_BYTES)
                    .map(|b| block[b / 8] >> (b % 8) & 1 == 1)
                    .collect::<Vec<bool>>(),
            );
            set_ports(&mut sim, &ports);
            assert_eq!(sim.get_u128("out_len").expect("len"), u128::from(want.len));
            assert_eq!(
                sim.get_u128("out_model").expect("model"),
                want.model as u128
            );
            assert_eq!(
                sim.get_u128("out_epoch").expect("epoch"),
                u128::from(3 + round)
            );
        }
        // a shift code of 15 in byte 5 of the slot
        let mut bad = regs.clone();
        bad.slots[0].rules[5] = (bad.slots[0].rules[5] & 0x70) | 15;
        for loaded in [true, false] {
            bad.slots[0].loaded = loaded;
            set_ports(&mut sim, &ports_of(&bad, unit));
            let len = sim.get_u128("out_len").expect("len");
            assert_eq!(len == 0, loaded, "loaded {loaded}: out_len {len}");
            let (w, _) =
                slots::configuration_writes(unit, set.predictors.len(), &ports_of(&bad, unit));
            assert_eq!(slots::registers_codec(&set, unit, &w).is_err(), loaded);
        }
    }
}

/// A one-step counterexample names the active registers: read as the
/// shadow ones, they give the same configuration; its run programs that
/// configuration, then the counterexample's own block and directed blocks
/// of the loaded slot, each expected as the golden coder of those
/// registers codes it, most of them won by the slot.
#[test]
fn a_one_step_counterexample_runs_with_directed_blocks_of_its_configuration() {
    let set = example();
    let form = Form::by_name("stride-colpart").expect("form");
    let unit = SlotUnit { k: 1, form };
    let mut rng = Rng::new(5);
    let image = slots::directed_image(&set, unit, 3, &mut rng).expect("image");
    let writes = registers::image_writes(&set, &image, 9).expect("writes");
    let (regs, _) =
        SlotRegisters::from_writes(form, 1, set.predictors.len(), &writes).expect("regs");
    let mut active: BTreeMap<String, Vec<bool>> = ports_of(&regs, unit)
        .into_iter()
        .map(|(k, v)| (k.replace("cfg_shadow_", "cfg_active_"), v))
        .collect();
    active.insert("in_block".to_string(), vec![true; 8 * BLOCK_BYTES]);
    active.insert("slot_pred_s0".to_string(), vec![true; 8]);
    active.insert("cfg_active_raw_id".to_string(), vec![true; 3]);
    let shadow = slots::shadow_of_active(&active);
    assert!(!shadow.contains_key("slot_pred_s0"));
    assert!(!shadow.contains_key("cfg_shadow_raw_id"));
    assert_eq!(shadow, {
        let mut p = ports_of(&regs, unit);
        p.insert("in_block".to_string(), vec![true; 8 * BLOCK_BYTES]);
        p
    });
    let mut tags = testbench::vectors::Tags::new();
    let (plan, vectors, expected) = slots::counterexample_run(
        testbench::Unit::Compressor,
        &set,
        unit,
        &[shadow.clone(), shadow],
        0,
        &mut tags,
    )
    .expect("valid configuration");
    let per = 1 + slots::COUNTEREXAMPLE_DIRECTED;
    assert_eq!(vectors.len(), 2 * per);
    assert_eq!(expected.len(), 2 * per);
    let starts: Vec<usize> = plan.shards[0].segments.iter().map(|s| s.start).collect();
    assert_eq!(starts, [0, per]);
    let golden = ProgrammedSet::new(&set, &image).expect("programmed");
    let slot_id = golden.slot_id(0).expect("slot 0 loaded");
    let slots::SlotVectors::Comp(v) = &vectors else {
        panic!("compressor vectors")
    };
    assert_eq!(v[0].block, [0xff; BLOCK_BYTES]);
    let mut won = 0;
    for (i, (c, e)) in v.iter().zip(&expected).enumerate() {
        let want = golden.compress(&c.block);
        match e {
            slots::SlotExpect::Exact {
                expect: testbench::compare::Expect::Comp(got),
                epoch: Some(9),
            } => assert_eq!(*got, want, "vector {i}"),
            other => panic!("vector {i}: {other:?}"),
        }
        won += usize::from(i % per != 0 && want.model == slot_id);
    }
    assert!(
        2 * won > 2 * slots::COUNTEREXAMPLE_DIRECTED,
        "{won} won by the slot"
    );
}

/// Slot mutants of a decompressor with one `stride-lib` slot on Icarus,
/// on the plan of `cosim mpc --program-slots` (reset value, then images
/// every 16 blocks): the epoch check inverted, the commit's load that
/// ignores the blocks in flight, and the epoch register loading the wrong
/// bits of `cfg_wdata` must all be killed (the schema at select 0 must
/// match the golden model, or the run errors).
#[test]
fn slot_logic_mutants_are_killed_on_the_slot_testbench() {
    if !testbench::stream_unit::icarus_or_skip() {
        return;
    }
    let model = Path::new(env!("CARGO_MANIFEST_DIR")).join("../models/example");
    let form = Form::by_name("stride-lib").expect("form");
    let slots = SlotUnit { k: 1, form };
    let design = mutate::Design::MpcSlots {
        model,
        unit: testbench::Unit::Decompressor,
        slots,
        options: slots::SlotOptions {
            images: vec![slots::ImageKind::Random],
            reprogram_every: 16,
        },
        compressor_stages: hdl::mpc::slots::SLOT_COMPRESSOR_STAGES,
    };
    let (_, all) = mutate::mutations_in(&design, mutate::Scope::Slots).expect("mutations");
    let pick = |signal: &str, family: &str, text: &str| {
        all.iter()
            .find(|m| m.signal == signal && m.op.family() == family && m.text.contains(text))
            .map(|m| m.id)
            .unwrap_or_else(|| panic!("no {family} mutant of {signal} ({text})"))
    };
    let only = vec![
        pick("cfg_shadow_epoch", "shift-select", "cfg_wdata[8:1]"),
        pick("cfg_load", "drop-not", ""),
        pick("epoch_mismatch", "boundary", ""),
    ];
    let cfg = mutate::MutateConfig {
        design,
        build: std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("mutate-slots"),
        sim: testbench::Simulator::Icarus,
        blocks: 48,
        seed: 2,
        corpus: None,
        sample: None,
        only: Some(only.clone()),
        control_only: false,
        batch: 8,
        jobs: 2,
        stall: 0.2,
        resets: 1,
        prove: true,
        prove_seconds: 60,
        scope: mutate::Scope::Slots,
    };
    let report = mutate::run(&cfg).expect("mutation run");
    let text = report.render();
    let ids: Vec<usize> = report.results.iter().map(|r| r.mutation.id).collect();
    assert_eq!(ids.len(), only.len(), "{text}");
    for r in &report.results {
        assert!(r.kill.is_some(), "survived: {}\n{text}", r.mutation.text);
    }
    assert!(text.contains("No survivors."), "{text}");
}

/// A base chain longer than the form's depth bound is register contents
/// the hardware's behaviour is not specified for (docs/hw/program-slots.md
/// section 6): the decompressor restores only that many levels. The golden
/// registers give a predictor for it all the same, so a counterexample
/// holding one once ran against an expectation the unit as generated
/// cannot meet (a chain of 7 in a `stride-colpart` slot: `out_block`
/// differed from byte 29). Such contents are no valid configuration: the
/// decompressor's view zeroes its outputs there, the counterexample run
/// refuses them, and a chain of exactly the bound decodes as the golden
/// model does.
#[test]
fn a_base_chain_deeper_than_the_form_bound_is_no_valid_configuration() {
    let set = example();
    let form = Form::by_name("stride-colpart").expect("form");
    let unit = SlotUnit { k: 1, form };
    let spec = hdl::mpc::SlotSpec::new(1, form).expect("spec");
    let stages = hdl::mpc::decompressor::slot_default_stages(&spec);
    let (module, _) = hdl::mpc::decompressor::build_slots(&set, spec, stages).expect("unit builds");
    let mut inputs = slots::configuration_registers(unit);
    inputs.extend(hdl::ir::comb::mixed_registers(&module, &inputs));
    let valid = |m: &mut hdl::ir::Module| slots::valid_configuration(m, unit, set.predictors.len());
    let outputs: Vec<String> = ["out_block", "out_error", "out_model"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let assumed =
        hdl::ir::comb::transparent_cut(&module, &outputs, &inputs, Some(&valid)).expect("view");
    let plain = hdl::ir::comb::transparent_cut(&module, &outputs, &inputs, None).expect("view");
    let widths: BTreeMap<String, u32> = module
        .signals()
        .iter()
        .map(|s| (s.name().to_string(), s.width()))
        .collect();
    let w = widths["in_bits"];
    let mut rng = Rng::new(3);
    let image = slots::random_image(&set, unit, &mut rng).expect("image");
    let writes = registers::image_writes(&set, &image, 6).expect("writes");
    let (mut regs, _) =
        SlotRegisters::from_writes(form, 1, set.predictors.len(), &writes).expect("regs");
    regs.slots[0].loaded = true;
    // bytes 1..=depth take byte i - 1 as base (shift 0): a chain of
    // `depth` edges at byte `depth`; every other byte the longest stride
    // whose base has a chain shorter than the bound (else a root), so
    // that the slot predicts most bytes
    let chain = |regs: &mut SlotRegisters, depth: usize| {
        let mut chains = [0usize; BLOCK_BYTES];
        for (i, r) in regs.slots[0].rules.iter_mut().enumerate() {
            let (c, d) = if (1..=depth).contains(&i) {
                (1, chains[i - 1] + 1)
            } else {
                STRIDES
                    .iter()
                    .enumerate()
                    .rev()
                    .find(|&(_, &s)| s as usize <= i && chains[i - s as usize] < form.max_depth)
                    .map_or((0, 0), |(c, &s)| (c as u8 + 1, chains[i - s as usize] + 1))
            };
            chains[i] = d;
            *r = c << 4 | 7;
        }
    };
    // decode blocks won by the slot through a view; out_block as bytes
    let decode = |view: &hdl::ir::Module, regs: &SlotRegisters, seed: u64| {
        // the golden predictor of the rules, also past the form's depth
        // bound (which `predictors` refuses): read as the form of the same
        // register map with a depth bound of 8
        let mut deeper = regs.clone();
        deeper.form = Form::by_name("stride-colpart-d8").expect("form");
        let preds: Vec<golden::mpc::Predictor> = deeper
            .predictors(&set)
            .expect("registers give predictors")
            .into_iter()
            .flatten()
            .collect();
        let mut expanded = set.clone();
        expanded.predictors.extend(preds.iter().cloned());
        let codec = golden::mpc::MpcCodec::new(&expanded);
        let slot_id = expanded.predictor_id(expanded.predictors.len() - 1);
        let mut sim = hdl::ir::Sim::new(view).expect("evaluator");
        let mut ports = ports_of(regs, unit);
        ports.insert(
            "in_epoch".to_string(),
            (0..8).map(|b| 6 >> b & 1 == 1).collect(),
        );
        let mut rng = Rng::new(seed);
        let mut out = Vec::new();
        for _ in 0..8 {
            let block = slots::directed_block_of_predictor(&preds[0], &mut rng);
            let c = codec.compress(&block);
            let mut bus = testbench::stream_unit::LeBus::new();
            bus.put_left_aligned(&c.bytes, w as usize, w as usize);
            ports.insert(
                "in_bits".to_string(),
                (0..w as usize).map(|i| bus.bit(i)).collect(),
            );
            ports.insert(
                "in_len".to_string(),
                (0..widths["in_len"]).map(|b| c.len >> b & 1 == 1).collect(),
            );
            for (name, v) in &ports {
                sim.set(name, &to_bits(v, widths[name])).expect("input");
            }
            let ob = sim.get("out_block").expect("out_block");
            let got: Vec<u8> = (0..BLOCK_BYTES as u32)
                .map(|i| (0..8).fold(0u8, |a, k| a | u8::from(ob.bit(8 * i + k)) << k))
                .collect();
            let error = sim.get_u128("out_error").expect("out_error");
            out.push((block, got, error, c.model == slot_id));
        }
        out
    };
    let bound = form.max_depth;
    // a chain of the bound: valid, decoded as the golden model does
    chain(&mut regs, bound);
    let (wr, _) = slots::configuration_writes(unit, set.predictors.len(), &ports_of(&regs, unit));
    slots::registers_codec(&set, unit, &wr).expect("a chain of the bound is valid");
    let mut won = 0;
    for (block, got, error, slot) in decode(&assumed, &regs, 1) {
        assert_eq!((got.as_slice(), error), (block.as_slice(), 0));
        won += usize::from(slot);
    }
    assert!(won > 4, "the slot codes {won} of 8 blocks");
    // one edge more: refused, zero under the assumption, and the unit as
    // generated does not restore it
    chain(&mut regs, bound + 1);
    let ports = ports_of(&regs, unit);
    let (wr, _) = slots::configuration_writes(unit, set.predictors.len(), &ports);
    let Err(why) = slots::registers_codec(&set, unit, &wr) else {
        panic!("a chain past the bound is refused")
    };
    assert!(why.contains("depth"), "{why}");
    let mut tags = testbench::vectors::Tags::new();
    let refused = slots::counterexample_run(
        testbench::Unit::Decompressor,
        &set,
        unit,
        &[ports],
        w,
        &mut tags,
    );
    assert!(matches!(refused, Err((0, _))), "the run refuses it");
    for (_, got, error, _) in decode(&assumed, &regs, 1) {
        assert_eq!((got, error), (vec![0u8; BLOCK_BYTES], 0));
    }
    let wrong = decode(&plain, &regs, 1)
        .iter()
        .filter(|(block, got, _, _)| got.as_slice() != block.as_slice())
        .count();
    assert!(wrong > 0, "the unit restores a chain past its bound");
}

/// `cosim mutate --program-slots K --compressor-stages N` mutates the
/// compressor `gen --program-slots K --compressor-stages N` builds, in a
/// work directory of its own (the decompressor's is unchanged), and
/// refuses the option where it does not apply or the depth is not built.
#[test]
fn the_slot_compressor_depth_is_chosen_and_refused_where_it_does_not_apply() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../models/example");
    let form = Form::by_name("stride-colpart").expect("form");
    let slots = SlotUnit { k: 1, form };
    let design = |unit, compressor_stages| mutate::Design::MpcSlots {
        model: root.clone(),
        unit,
        slots,
        options: slots::SlotOptions {
            images: vec![slots::ImageKind::Random],
            reprogram_every: 16,
        },
        compressor_stages,
    };
    let dir = |unit, n| design(unit, n).config_dir().expect("config dir");
    use testbench::Unit::{Compressor, Decompressor};
    assert_eq!(dir(Compressor, 4), "example-slots1-stride-colpart");
    assert_eq!(dir(Compressor, 5), "example-slots1-stride-colpart-c5");
    assert_eq!(dir(Decompressor, 5), dir(Decompressor, 4));

    // the mutations are those of the generator's unit of that depth
    let set = ModelSet::load(&root).expect("models/example");
    let spec = hdl::mpc::SlotSpec::new(1, form).expect("spec");
    let expected = |n: usize| -> Vec<(usize, String)> {
        let (module, _) =
            hdl::mpc::compressor::build_slots_staged(&set, spec, n).expect("slot compressor");
        let keep = mutate::slot_logic(&module);
        hdl::ir::mutate::enumerate(&module)
            .into_iter()
            .filter(|m| keep.contains(&m.signal))
            .map(|m| (m.id, m.text))
            .collect()
    };
    let listed = |n: usize| -> (String, Vec<(usize, String)>) {
        let (label, all) =
            mutate::mutations_in(&design(Compressor, n), mutate::Scope::Slots).expect("mutations");
        (label, all.into_iter().map(|m| (m.id, m.text)).collect())
    };
    let (label4, four) = listed(4);
    let (label5, five) = listed(5);
    assert!(!label4.contains("stages"), "{label4}");
    assert!(label5.contains("compressor (5 stages)"), "{label5}");
    assert_eq!(four, expected(4));
    assert_eq!(five, expected(5));
    assert_ne!(four, five, "the 5-stage compressor is another unit");

    // the binary: --list names the depth and lists the same mutations
    let cosim = env!("CARGO_BIN_EXE_cosim");
    let build = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mutate-slots-depth");
    let run = |extra: &[&str]| {
        let m = root.to_str().expect("utf-8 path");
        let out = std::process::Command::new(cosim)
            .args(["mutate", "--model", m, "--no-corpus"])
            .args(extra)
            .arg("--build")
            .arg(&build)
            .output()
            .expect("cosim runs");
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        (out.status.code(), text, err)
    };
    let (code, text, err) = run(&[
        "--program-slots",
        "1",
        "--unit",
        "compressor",
        "--compressor-stages",
        "5",
        "--scope",
        "slots",
        "--list",
    ]);
    assert_eq!(code, Some(0), "{err}");
    let first = text.lines().next().unwrap_or_default();
    assert_eq!(
        first,
        format!("# {label5}: {} single mutations", five.len()),
        "{err}"
    );
    let ids: Vec<usize> = text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            l.split('\t')
                .next()
                .unwrap_or_default()
                .parse()
                .expect("id")
        })
        .collect();
    assert_eq!(ids, five.iter().map(|m| m.0).collect::<Vec<_>>());

    // refused, with exit status 2 and a message naming the option
    for (extra, needle) in [
        (
            &[
                "--program-slots",
                "1",
                "--unit",
                "decompressor",
                "--compressor-stages",
                "5",
            ][..],
            "--unit compressor or all",
        ),
        (
            &[
                "--program-slots",
                "1",
                "--unit",
                "compressor",
                "--compressor-stages",
                "3",
            ][..],
            "built with 4 to 5 stages",
        ),
        (
            &[
                "--program-slots",
                "1",
                "--unit",
                "compressor",
                "--compressor-stages",
                "6",
            ][..],
            "built with 4 to 5 stages",
        ),
        (
            &["--program-slots", "0", "--compressor-stages", "5"][..],
            "applies to units with slots",
        ),
    ] {
        let (code, _, err) = run(extra);
        assert_eq!(code, Some(2), "{extra:?}: {err}");
        assert!(err.contains("--compressor-stages"), "{extra:?}: {err}");
        assert!(err.contains(needle), "{extra:?}: no {needle:?} in {err}");
    }
}

/// The second round of directed images (`directed:30` for a form of 15
/// shift codes) gives every byte every shift code again, with its
/// neighbours' codes and candidates in other combinations: a byte of a
/// `stride-colpart` slot at shift code 2 or 3 (`k = -5, -4`) beside a byte
/// below whose candidate's high bit differs from that code's low bit,
/// which the first round never gives for bytes 12, 24 and 26 (the
/// compressor's mutants reading the one for the other in the shift of
/// byte 24 or 26 survived those), and the second does.
#[test]
fn a_second_round_of_directed_images_meets_the_neighbours_in_other_combinations() {
    let set = example();
    let form = Form::by_name("stride-colpart").expect("form");
    let unit = SlotUnit { k: 1, form };
    let codes = 2 * form.max_shift.unsigned_abs() as usize + 1;
    assert_eq!(codes, 15);
    assert_eq!(
        (0..5 * codes)
            .step_by(codes)
            .map(|d| slots::directed_multiplier(d, codes))
            .collect::<Vec<_>>(),
        [1, 2, 4, 7, 8]
    );
    let mut rng = Rng::new(5);
    // (shift code, candidate) of every byte, per image
    let rules = |d: usize, rng: &mut Rng| -> Vec<Option<(u8, u8)>> {
        let img = slots::directed_image(&set, unit, d, rng).expect("valid");
        let slot = img.slots[0].as_ref().expect("loaded");
        slot.rules
            .iter()
            .enumerate()
            .map(|(i, r)| match r {
                golden::mpc::ByteRule::Base { base, shift } => {
                    let stride = (i - *base as usize) as u8;
                    let c = STRIDES.iter().position(|&s| s == stride).expect("a stride");
                    Some(((*shift + 7) as u8, c as u8 + 1))
                }
                golden::mpc::ByteRule::Root => None,
            })
            .collect()
    };
    let meets = |r: &[Option<(u8, u8)>], i: usize| match (r[i - 1], r[i]) {
        (Some((_, c)), Some((k, _))) => (k == 2 || k == 3) && (c >> 2 & 1) != (k & 1),
        _ => false,
    };
    let first: Vec<_> = (0..codes).map(|d| rules(d, &mut rng)).collect();
    let second: Vec<_> = (codes..2 * codes).map(|d| rules(d, &mut rng)).collect();
    for i in [12, 24, 26] {
        assert!(!first.iter().any(|r| meets(r, i)), "byte {i}");
        assert!(second.iter().any(|r| meets(r, i)), "byte {i}");
    }
    // each round gives every byte with a base in all its images every code
    for round in [&first, &second] {
        for i in 0..BLOCK_BYTES {
            let seen: std::collections::BTreeSet<u8> =
                round.iter().filter_map(|r| r[i].map(|x| x.0)).collect();
            if round.iter().all(|r| r[i].is_some()) {
                assert_eq!(seen.len(), codes, "byte {i}: {seen:?}");
            }
        }
    }
}
