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
