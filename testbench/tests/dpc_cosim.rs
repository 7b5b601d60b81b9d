//! The five DPC units co-simulated on Icarus (short: CI budget) with
//! stalls, backpressure and mid-stream resets, against golden::dpc;
//! skipped without Icarus.

use std::path::PathBuf;

use golden::dpc::DpcParams;
use testbench::dpc::{run, DpcConfig};
use testbench::{stream_unit, Simulator};

#[test]
fn dpc_units_match_golden_on_icarus() {
    if !stream_unit::icarus_or_skip() {
        return;
    }
    let cfg = DpcConfig {
        params: DpcParams::default(),
        sims: vec![Simulator::Icarus],
        units: hdl::dpc::DpcUnit::ALL.to_vec(),
        blocks: 120,
        seed: 3,
        corpus: stream_unit::test_corpus(),
        stall: 0.3,
        resets: 2,
        build: PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("dpc-cosim"),
        decompressor_stages: 2,
    };
    let reports = run(&cfg).expect("co-simulation runs");
    assert_eq!(reports.len(), 5);
    for r in &reports {
        assert!(r.ok(), "{}", r.render());
    }
}

#[test]
fn three_stage_dpc_decompressors_match_golden_on_icarus() {
    if !stream_unit::icarus_or_skip() {
        return;
    }
    use golden::dpc::Mode;
    let cfg = DpcConfig {
        params: DpcParams::default(),
        sims: vec![Simulator::Icarus],
        units: vec![
            hdl::dpc::DpcUnit::Decompressor(Mode::Plain),
            hdl::dpc::DpcUnit::Decompressor(Mode::Truc),
        ],
        blocks: 80,
        seed: 5,
        corpus: stream_unit::test_corpus(),
        stall: 0.3,
        resets: 2,
        build: PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("dpc-cosim"),
        decompressor_stages: 3,
    };
    let reports = run(&cfg).expect("co-simulation runs");
    assert_eq!(reports.len(), 2);
    for r in &reports {
        assert!(r.ok(), "{}", r.render());
    }
    // (the units of this depth in a directory of their own)
    assert!(cfg
        .build
        .join("dpc-128-4-32-d3")
        .join("params.json")
        .is_file());
}

#[test]
fn dpc_bus_fields_round_trip() {
    use testbench::stream_unit::LeBus;
    let mut b = LeBus::new();
    b.put_bytes(&[0x12, 0x34]);
    b.put_left_aligned(&[0b1010_0000], 3, 5);
    b.put_uint(5, 3);
    assert_eq!(b.width(), 24);
    assert_eq!(b.bytes(0, 2), vec![0x12, 0x34]);
    assert_eq!(b.left_aligned(16, 5), vec![0b1010_0000]);
    assert_eq!(b.uint(21, 3), 5);
    let back = LeBus::parse(&b.hex(), 24).expect("hex");
    assert_eq!(back, b);
    assert!(LeBus::parse("x1", 8).is_none());
}
