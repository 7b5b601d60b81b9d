//! The MAG-aware BDI units co-simulated on Icarus (short: CI budget) with
//! stalls and resets, against golden::magbdi; skipped without Icarus.

use std::path::PathBuf;

use golden::magbdi::{DeltaMode, Params};
use testbench::magbdi::{run, MagBdiConfig};
use testbench::{stream_unit, Simulator, Unit};

#[test]
fn bdi_units_match_golden_on_icarus() {
    if !stream_unit::icarus_or_skip() {
        return;
    }
    let cfg = MagBdiConfig {
        params: Params::new(128, 16, 4, DeltaMode::Signed),
        compressor_stages: testbench::magbdi::DEFAULT_STAGES,
        sims: vec![Simulator::Icarus],
        units: Unit::ALL.to_vec(),
        blocks: 150,
        seed: 3,
        corpus: stream_unit::test_corpus(),
        stall: 0.3,
        resets: 2,
        build: PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bdi-cosim"),
    };
    let reports = run(&cfg).expect("co-simulation runs");
    assert_eq!(reports.len(), 3);
    for r in &reports {
        assert!(r.ok(), "{}", r.render());
    }
}

/// The two-stage compressor, alone and in the loopback, with stalls and
/// resets.
#[test]
fn two_stage_compressor_matches_golden_on_icarus() {
    if !stream_unit::icarus_or_skip() {
        return;
    }
    let cfg = MagBdiConfig {
        params: Params::new(128, 32, 4, DeltaMode::Unsigned),
        compressor_stages: 2,
        sims: vec![Simulator::Icarus],
        units: vec![Unit::Compressor, Unit::Loopback],
        blocks: 120,
        seed: 5,
        corpus: stream_unit::test_corpus(),
        stall: 0.3,
        resets: 2,
        build: PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bdi-cosim-2"),
    };
    let reports = run(&cfg).expect("co-simulation runs");
    assert_eq!(reports.len(), 2);
    for r in &reports {
        assert!(r.ok(), "{}", r.render());
    }
    let params_json = cfg
        .build
        .join(hdl::magbdi::config_name(&cfg.params))
        .join("params.json");
    let units = hdl::unit::read_units(&params_json).expect("params.json");
    let latency = |module| {
        hdl::unit::find(&units, module, &params_json)
            .expect("unit described")
            .latency
    };
    assert_eq!(latency(hdl::magbdi::compressor::MODULE), 2);
    assert_eq!(latency(hdl::magbdi::decompressor::MODULE), 1);
}

/// A run of no vectors goes through the simulator and the record parser,
/// and is reported as not a pass.
#[test]
fn a_run_of_no_vectors_is_not_a_pass() {
    if !stream_unit::icarus_or_skip() {
        return;
    }
    let cfg = MagBdiConfig {
        params: Params::new(128, 32, 4, DeltaMode::Unsigned),
        compressor_stages: testbench::magbdi::DEFAULT_STAGES,
        sims: vec![Simulator::Icarus],
        units: vec![Unit::Compressor],
        blocks: 0,
        seed: 1,
        corpus: None,
        stall: 0.2,
        resets: 0,
        build: PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bdi-cosim-empty"),
    };
    let reports = run(&cfg).expect("co-simulation runs");
    assert_eq!(reports.len(), 1);
    let r = &reports[0];
    assert_eq!((r.vectors, r.matched), (0, 0));
    assert!(!r.ok(), "{}", r.render());
    assert!(
        r.problems.iter().any(|p| p.contains("checked nothing")),
        "{}",
        r.render()
    );
}
