//! Testbench mechanics against a hand-written stand-in compressor
//! (tests/fixtures/standin_compressor.v: a 3-stage ready-chain pipeline that
//! always sends the raw escape): stalls, backpressure, mid-stream resets and
//! ordering must match the ideal-pipeline model cycle for cycle, and each
//! deliberate fault of the stand-in must be caught.
//!
//! Skipped (with an install hint) for a simulator that is not installed.

use std::path::{Path, PathBuf};

use golden::bits::BitWriter;
use golden::mpc::{CompressedBlock, ModelSet, MAX_BLOCK_BYTES};
use testbench::compare::{self, Expect, Inputs, MpcOutput, Shard, Verdict};
use testbench::rtl::{Params, Rtl};
use testbench::schedule::{self, Schedule, ScheduleConfig};
use testbench::sim::{self, RunFiles, RunOptions};
use testbench::vectors::{self, GenConfig, Tags};
use testbench::{Simulator, Unit};

fn example() -> ModelSet {
    ModelSet::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../models/example"))
        .expect("models/example")
}

fn raw(set: &ModelSet, block: &[u8; 32]) -> CompressedBlock {
    let mut w = BitWriter::<MAX_BLOCK_BYTES>::new();
    w.put(set.raw_id(), set.header_bits());
    for &b in block {
        w.put(b as u32, 8);
    }
    let (bytes, len) = w.finish();
    CompressedBlock {
        model: set.raw_id(),
        len: len as u32,
        bytes,
    }
}

/// Run the stand-in with fault `bug` on `n` blocks; returns the output, the
/// verdict and the ideal model's deliveries.
fn run_standin(
    s: Simulator,
    bug: u32,
    n: usize,
) -> Option<(MpcOutput, Verdict, schedule::ModelRun)> {
    if !testbench::stream_unit::simulator_or_skip(s, &format!("the {s} stand-in test")) {
        return None;
    }
    let set = example();
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("standin")
        .join(format!("{}-bug{bug}", s.name()));
    std::fs::create_dir_all(&dir).expect("mkdir");
    let fixture = include_str!("fixtures/standin_compressor.v").replace(
        "parameter integer BUG = 0",
        &format!("parameter integer BUG = {bug}"),
    );
    let dut = dir.join("standin_compressor.v");
    std::fs::write(&dut, fixture).expect("write fixture");
    let rtl = Rtl {
        dir: dir.clone(),
        files: vec![dut],
        params: Params::of(&set),
        slots: None,
    };
    let mut tags = Tags::new();
    let v = vectors::compressor_vectors(
        &set,
        &GenConfig {
            blocks: n,
            seed: 77,
            corpus: None,
        },
        &mut tags,
    )
    .expect("vectors");
    let expected: Vec<Expect> = v
        .iter()
        .map(|x| Expect::Comp(raw(&set, &x.block)))
        .collect();
    let sched = Schedule::generate(
        &ScheduleConfig {
            stall: 0.3,
            resets: 3,
            seed: 5,
        },
        n,
        3,
    );
    let files = RunFiles::new(&dir);
    vectors::write_comp(&files.vectors, &v).expect("vectors file");
    sched.write(&files.schedule).expect("schedule file");
    let b = sim::build(
        s,
        Unit::Compressor,
        &rtl,
        &dir.join("build"),
        false,
        sim::CxxOpt::Quick,
    )
    .expect("build");
    let run = sim::run(
        &b,
        &files,
        n,
        &RunOptions {
            timeout_cycles: 2000,
            vcd: None,
            plusargs: Vec::new(),
            stages: 3,
        },
        None,
    );
    let out = match run {
        Ok(_) => compare::read_records(&files.out, Unit::Compressor, &rtl.params).expect("output"),
        Err(e) => panic!("{e}"),
    };
    let model = schedule::model_run(&sched, 3, n as u64, 1 << 40);
    let verdict = compare::compare(
        &Shard {
            index: 0,
            offset: 0,
            inputs: Inputs::Comp(&v),
            expected: &expected,
            model: Some(&model),
        },
        &out,
        &tags,
        3,
    );
    Some((out, verdict, model))
}

fn mechanics(s: Simulator) {
    let Some((out, v, model)) = run_standin(s, 0, 1500) else {
        return;
    };
    assert!(v.ok(), "{:?} {:?}", v.problems, v.mismatches.first());
    assert_eq!(v.checked, 1500);
    assert_eq!(out.resets.len(), 3, "three mid-stream resets");
    assert!(
        out.resets.iter().any(|r| r.dropped > 0),
        "a reset dropped blocks"
    );
    assert_eq!(out.resets, model.resets);
    assert_eq!(out.done.map(|d| d.0), Some(model.cycles));
    let cycles: Vec<u64> = out.records.iter().map(|r| r.cycle).collect();
    let want: Vec<u64> = model.deliveries.iter().map(|d| d.cycle).collect();
    assert_eq!(cycles, want, "delivery cycles equal the ideal pipeline's");
    assert!(
        out.records.iter().any(|r| r.latency > 3),
        "backpressure happened"
    );
}

fn faults(s: Simulator) {
    // 1: blocks overwritten under backpressure
    if let Some((_, v, _)) = run_standin(s, 1, 800) {
        assert!(!v.ok());
        assert!(v.mismatch_count > 0 || !v.problems.is_empty());
    } else {
        return;
    }
    // 2: a stale block survives a reset
    let (_, v, _) = run_standin(s, 2, 800).expect("installed");
    assert!(!v.ok(), "stale block after reset not caught");
    // 3: output changes while stalled
    let (out, v, _) = run_standin(s, 3, 800).expect("installed");
    assert!(
        out.protocol.iter().any(|p| p.code == 2),
        "{:?}",
        out.protocol
    );
    assert!(v.problems.iter().any(|p| p.contains("protocol violation")));
}

#[test]
fn standin_mechanics_icarus() {
    mechanics(Simulator::Icarus);
}

#[test]
fn standin_mechanics_verilator() {
    mechanics(Simulator::Verilator);
}

#[test]
fn standin_faults_are_caught_icarus() {
    faults(Simulator::Icarus);
}

#[test]
fn standin_faults_are_caught_verilator() {
    faults(Simulator::Verilator);
}
