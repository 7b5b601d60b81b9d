//! Mutation testing end to end on Icarus (`cosim mutate`): the schema with
//! no mutant selected must match the golden model (the run errors
//! otherwise), and register enables tied high (the unit loads while it
//! should hold) must all be killed by the stalls of the schedule, in the
//! compressor and the decompressor.

use std::path::{Path, PathBuf};

use golden::mpc::ModelSet;
use hdl::ir::mutate::Site;
use testbench::mutate::{self, Closure, Design, Located, MutateConfig};
use testbench::{Simulator, Unit};

fn check(unit: Unit) {
    if !testbench::stream_unit::icarus_or_skip() {
        return;
    }
    let model = Path::new(env!("CARGO_MANIFEST_DIR")).join("../models/example");
    let set = ModelSet::load(&model).expect("models/example");
    let module = match unit {
        Unit::Compressor => hdl::mpc::compressor::build(&set),
        _ => hdl::mpc::decompressor::build(&set),
    }
    .expect("unit builds");
    let all = hdl::ir::mutate::enumerate(&module);
    let enables: Vec<usize> = all
        .iter()
        .filter(|m| m.op.family() == "enable-high")
        .map(|m| m.id)
        .collect();
    assert!(enables.len() >= 3, "{} enable mutations", enables.len());
    // the first, the last and one in the middle
    let only = vec![
        enables[0],
        enables[enables.len() / 2],
        enables[enables.len() - 1],
    ];
    let cfg = MutateConfig {
        design: Design::Mpc { model, unit },
        build: PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("mutate"),
        sim: Simulator::Icarus,
        blocks: 60,
        seed: 3,
        corpus: None,
        sample: None,
        only: Some(only.clone()),
        control_only: false,
        batch: 2,
        jobs: 2,
        stall: 0.3,
        resets: 1,
        prove: true,
        prove_seconds: 30,
        scope: mutate::Scope::All,
    };
    let report = mutate::run(&cfg).expect("mutation run");
    assert_eq!(report.enumerated, all.len());
    assert_eq!(report.batches, 2, "three mutants in batches of two");
    let ids: Vec<usize> = report.results.iter().map(|r| r.mutation.id).collect();
    assert_eq!(ids, only);
    let text = report.render();
    for r in &report.results {
        assert!(
            r.kill.is_some(),
            "{unit}: enable tied high survived: {}\n{text}",
            r.mutation.text
        );
        assert!(text.contains(mutate::stage_of(&r.mutation)), "{text}");
    }
    assert!(text.contains("No survivors."), "{text}");
}

#[test]
fn compressor_enables_tied_high_are_killed() {
    check(Unit::Compressor);
}

#[test]
fn decompressor_enables_tied_high_are_killed() {
    check(Unit::Decompressor);
}

#[test]
fn loopback_and_unknown_ids_are_refused() {
    let model = Path::new(env!("CARGO_MANIFEST_DIR")).join("../models/example");
    let mut cfg = MutateConfig {
        design: Design::Mpc {
            model: model.clone(),
            unit: Unit::Loopback,
        },
        build: PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("mutate-refused"),
        sim: Simulator::Icarus,
        blocks: 10,
        seed: 1,
        corpus: None,
        sample: None,
        only: None,
        control_only: false,
        batch: 1,
        jobs: 1,
        stall: 0.0,
        resets: 0,
        prove: false,
        prove_seconds: 1,
        scope: mutate::Scope::All,
    };
    let e = mutate::run(&cfg).expect_err("loopback is refused");
    assert!(e.to_string().contains("loopback"), "{e}");
    cfg.design = Design::Mpc {
        model,
        unit: Unit::Compressor,
    };
    cfg.only = Some(vec![usize::MAX]);
    let e = mutate::run(&cfg).expect_err("an unknown id is refused");
    assert!(e.to_string().contains("there is no"), "{e}");
}

/// Survivors are closed formally: on 20 vectors, the dropped error terms
/// of the decompressor's last code and of its final error flag mostly
/// survive the simulation; each must then be killed by its counterexample
/// vector or proven equivalent, and both outcomes must occur.
#[test]
fn survivors_are_killed_by_counterexamples_or_proven_equivalent() {
    if !testbench::stream_unit::icarus_or_skip() {
        return;
    }
    let model = Path::new(env!("CARGO_MANIFEST_DIR")).join("../models/example");
    let set = ModelSet::load(&model).expect("models/example");
    let module = hdl::mpc::decompressor::build(&set).expect("unit builds");
    let only: Vec<usize> = hdl::ir::mutate::enumerate(&module)
        .iter()
        // the terms at the top of the sixteenth code's error flag
        // (`active & (invalid | overflow)`; an overflow also leaves the
        // count short of 16, so dropping it is equivalent) and of the
        // length checks (`s3_error | incomplete | wrong length`)
        .filter(|m| {
            m.op.family() == "drop-term"
                && m.path.len() <= 1
                && (m.signal == "dec15_bad" || m.signal == "s4_error_d")
        })
        .map(|m| m.id)
        .collect();
    assert!(only.len() >= 3, "{only:?}");
    let cfg = MutateConfig {
        design: Design::Mpc {
            model,
            unit: Unit::Decompressor,
        },
        build: PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("mutate-prove"),
        sim: Simulator::Icarus,
        blocks: 20,
        seed: 1,
        corpus: None,
        sample: None,
        only: Some(only),
        control_only: false,
        batch: 64,
        jobs: 2,
        stall: 0.2,
        resets: 0,
        prove: true,
        prove_seconds: 60,
        scope: mutate::Scope::All,
    };
    let report = mutate::run(&cfg).expect("mutation run");
    let text = report.render();
    assert!(report.open().next().is_none(), "open survivors:\n{text}");
    let closures: Vec<&Closure> = report
        .results
        .iter()
        .filter_map(|r| r.closure.as_ref())
        .collect();
    assert!(
        closures
            .iter()
            .any(|c| matches!(c, Closure::CounterexampleKilled(_))),
        "{text}"
    );
    assert!(closures.contains(&&Closure::Equivalent), "{text}");
    assert!(text.contains("killed by its counterexample"), "{text}");
}

/// The MAG-aware BDI compressor through the stream testbench: every
/// mutation of the pipeline control (the stage valid flag, its reset value
/// and the load enable, which drive `out_valid` and `in_ready`) is killed
/// and located by a named handshake rule of the testbench's monitor, and so
/// is the output register's enable tied high; mutations of that register's
/// data path are killed and located at their stage by the first differing
/// register.
#[test]
fn magbdi_control_faults_name_a_handshake_rule_and_data_faults_their_stage() {
    if !testbench::stream_unit::icarus_or_skip() {
        return;
    }
    let params = golden::magbdi::Params::new(128, 32, 4, golden::magbdi::DeltaMode::Unsigned);
    let table = golden::magbdi::MagBdi::new(params)
        .expect("BDI params")
        .table()
        .clone();
    let module = hdl::magbdi::compressor::build(&table).expect("unit builds");
    let all = hdl::ir::mutate::enumerate(&module);
    let control: Vec<usize> = all
        .iter()
        .filter(|m| {
            m.section
                .as_deref()
                .is_some_and(|s| s.starts_with("pipeline control"))
        })
        .map(|m| m.id)
        .collect();
    let data: Vec<usize> = all
        .iter()
        .filter(|m| m.signal == "s1_enc")
        .map(|m| m.id)
        .take(4)
        .collect();
    assert!(control.len() >= 3, "{control:?}");
    assert!(!data.is_empty());
    let cfg = MutateConfig {
        design: Design::MagBdi {
            params,
            unit: Unit::Compressor,
        },
        build: PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("mutate-magbdi"),
        sim: Simulator::Icarus,
        blocks: 200,
        seed: 1,
        corpus: None,
        sample: None,
        only: Some(control.iter().chain(&data).copied().collect()),
        control_only: false,
        batch: 64,
        jobs: 2,
        stall: 0.3,
        resets: 2,
        prove: false,
        prove_seconds: 1,
        scope: mutate::Scope::All,
    };
    let report = mutate::run(&cfg).expect("mutation run");
    let text = report.render();
    for r in &report.results {
        assert!(r.kill.is_some(), "survived: {}\n{text}", r.mutation.text);
        if control.contains(&r.mutation.id) || r.mutation.site != Site::Value {
            assert!(
                matches!(r.located, Some(Located::Rule(_))),
                "{} not located by a handshake rule: {:?}\n{text}",
                r.mutation.text,
                r.located
            );
        }
        assert!(r.located_at_its_stage(), "{:?}\n{text}", r.located);
    }
}

/// The sequential check of control mutants: the BDI decompressor's error
/// register loading every cycle is equivalent (every encoding of 128/32/4
/// is used and no size has padding, so the error is always 0); the valid
/// flag set by a reset is not (a run from reset tells it apart).
#[test]
fn control_mutants_are_decided_by_temporal_induction() {
    if !hdl::prereq::available(
        &["yosys"],
        "the sequential equivalence check",
        "make setup installs Yosys",
    ) {
        return;
    }
    let params = golden::magbdi::Params::PAPER;
    let t = testbench::magbdi::target(params, Unit::Decompressor, 1, 1, None).expect("target");
    let all = hdl::ir::mutate::enumerate(&t.module);
    let pick = |signal: &str, family: &str| {
        all.iter()
            .find(|m| m.signal == signal && m.op.family() == family)
            .cloned()
            .unwrap_or_else(|| panic!("no {family} mutant of {signal}"))
    };
    let muts = vec![
        pick("s1_error", "enable-high"),
        pick("s1_valid", "reset-value"),
    ];
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("mutate-sequential");
    let _ = std::fs::remove_dir_all(&dir);
    // (a limit for a failing check only: the induction takes about a
    // minute alone, longer on a loaded machine)
    let d = testbench::equiv::decide_all(&t.module, &t.desc, &muts, &dir, 600, 2).expect("decide");
    assert_eq!(
        d[0].verdict,
        testbench::equiv::Verdict::Equivalent,
        "{:?}",
        d[0]
    );
    match &d[1].verdict {
        testbench::equiv::Verdict::Undecided(why) => {
            assert!(why.contains("not equivalent"), "{why}")
        }
        v => panic!("s1_valid set by a reset: {v:?}"),
    }
}

/// A mutant of a probe wire no output reads (the compressor's `planes_p<p>`,
/// kept for the locator) cannot change an output: it is decided equivalent
/// without a solver, while a mutant of the symbols the selection reads
/// reaches outputs and is left to the solver.
#[test]
fn mutants_of_signals_no_output_reads_are_equivalent() {
    let model = Path::new(env!("CARGO_MANIFEST_DIR")).join("../models/example");
    let set = ModelSet::load(&model).expect("models/example");
    let (module, desc) = hdl::mpc::compressor::build_described(&set).expect("unit builds");
    let all = hdl::ir::mutate::enumerate(&module);
    let probe = all
        .iter()
        .find(|m| m.signal.starts_with("planes_p"))
        .cloned()
        .expect("a mutant of a plane probe");
    assert!(hdl::ir::comb::reached_outputs(&module, &probe).is_empty());
    let used = all
        .iter()
        .find(|m| m.signal.starts_with("xored_p"))
        .expect("a mutant of an XORed-planes wire");
    assert!(!hdl::ir::comb::reached_outputs(&module, used).is_empty());
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("mutate-no-output");
    let _ = std::fs::remove_dir_all(&dir);
    let d = testbench::equiv::decide_all(&module, &desc, &[probe], &dir, 10, 1).expect("decide");
    assert_eq!(
        d[0].verdict,
        testbench::equiv::Verdict::Equivalent,
        "{:?}",
        d[0]
    );
}
