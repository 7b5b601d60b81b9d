//! The pipeline-control proof (`testbench::prove::control`) on generated
//! units: the MPC units of `models/example` are proven (the MAG-aware BDI
//! and DPC units' control in `prove_bdi_dpc.rs`); a decompressor
//! whose stage enable lets a full stage be copied fails the handshake with
//! a stall schedule, and a register moved to another stage's enable fails
//! the stage check.

use std::path::{Path, PathBuf};

use testbench::prove::control::{self, ControlReport};
use testbench::prove::Outcome;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn scratch(name: &str) -> PathBuf {
    let d = root().join("target/prove-test").join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch directory");
    d
}

fn tools(test: &str) -> bool {
    hdl::prereq::available(&["yosys"], test, "install Yosys (make setup)")
}

/// The MPC units of `models/example` at their default depths.
fn mpc_units(dir: &Path) -> PathBuf {
    let rtl = dir.join("rtl");
    testbench::rtl::generate(&root().join("models/example"), &rtl).expect("generate the units");
    rtl
}

fn prove(file: &Path, module: &str, work: &Path) -> ControlReport {
    control::prove_control(file, module, work, 600).expect("the control proof runs")
}

fn assert_proven(r: &ControlReport) {
    for c in &r.checks {
        assert_eq!(c.outcome, Outcome::Proven, "{}: {:?}", c.name, c.outcome);
    }
    assert_eq!(r.checks.len(), 2, "the stage check and the handshake");
}

#[test]
fn the_example_units_deliver_every_block_once_in_order() {
    if !tools("the_example_units_deliver_every_block_once_in_order") {
        return;
    }
    let dir = scratch("control-example");
    let rtl = mpc_units(&dir);
    let c = prove(
        &rtl.join("mpc_compressor.v"),
        "mpc_compressor",
        &dir.join("work"),
    );
    assert_proven(&c);
    assert_eq!(c.stages, 3);
    let d = prove(
        &rtl.join("mpc_decompressor.v"),
        "mpc_decompressor",
        &dir.join("work"),
    );
    assert_proven(&d);
    assert_eq!(d.stages, 4);
    assert!(d.registers.iter().all(|&n| n > 0));
}

/// The line of the example decompressor that the test breaks.
const ENABLE_LINE: &str = "    assign s2_enable = ~s2_valid | s3_enable;";

/// One run on a decompressor broken twice: the enable above, which lets
/// stage 2 take a new block while stage 3 holds (a full stage 2 copied
/// into stage 3 and kept), and the stage-2 block's registers moved under
/// `s1_enable`. The handshake fails with a schedule from a reset, the
/// stage check names a moved register.
#[test]
fn a_broken_enable_and_a_moved_register_fail_with_a_schedule_and_a_named_register() {
    if !tools("a_broken_enable_and_a_moved_register_fail_with_a_schedule_and_a_named_register") {
        return;
    }
    let dir = scratch("control-broken");
    let rtl = mpc_units(&dir);
    let file = rtl.join("mpc_decompressor.v");
    let text = std::fs::read_to_string(&file).expect("read");
    assert_eq!(text.matches(ENABLE_LINE).count(), 1, "the enable to break");
    let mut broken = text.replace(ENABLE_LINE, "    assign s2_enable = ~s2_valid | out_ready;");
    // the stage-2 block moves the decoded symbols under stage 1's enable
    let marker = "    // stage 2: codes 6..11\n    always @(posedge clk) begin\n        if (s2_enable) begin";
    assert_eq!(broken.matches(marker).count(), 1, "the stage-2 block");
    broken = broken.replace(marker, &marker.replace("s2_enable", "s1_enable"));
    std::fs::write(&file, broken).expect("write");
    let r = prove(&file, "mpc_decompressor", &dir.join("work"));
    assert!(!r.proven());
    match &r.checks[0].outcome {
        Outcome::Violated(why) => assert!(why.contains("stage-1 register `s2_"), "{why}"),
        other => panic!("expected the stage check to fail: {other:?}"),
    }
    assert!(
        matches!(r.checks[1].outcome, Outcome::Counterexample(_)),
        "{:?}",
        r.checks[1].outcome
    );
    let (path, sched) = r.schedule.clone().expect("a schedule");
    assert!(path.exists());
    assert!(sched.cycles.iter().any(|c| c.rst), "it starts from a reset");
    assert!(
        r.failing.iter().any(|f| f == "ok_occupancy"),
        "{:?}",
        r.failing
    );
}
