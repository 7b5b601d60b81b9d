//! The MPC decompressor with programmable slots through
//! `verilator --lint-only -Wall` (any output or a failing status fails),
//! on `models/default`: two `stride-colpart` slots at the default depth,
//! one `stride-lib` slot at the deepest, two `stride-colpart-d8` slots. A
//! missing `verilator` is reported and skipped, or fails the test under
//! `MPCGEN_REQUIRE_TOOLS=1` (`hdl::prereq`).

use std::path::Path;

use golden::mpc::ModelSet;
use hdl::mpc::{decompressor, SlotSpec};

mod common;

const TEST: &str = "slot_decompressors_are_lint_clean";

/// Write the unit of `spec` at `stages` stages and lint it; the problem,
/// if any.
fn lint(set: &ModelSet, spec: SlotSpec, stages: usize, root: &Path) -> Option<String> {
    let label = format!("{} K={} {stages} stages", spec.form().name, spec.k());
    let (m, desc) = match decompressor::build_slots(set, spec, stages) {
        Ok(u) => u,
        Err(e) => return Some(format!("{label}: {e}")),
    };
    if desc.latency != stages {
        return Some(format!("{label}: described {} stages", desc.latency));
    }
    common::verilator_lint(&label, "mpc_decompressor", &m, root)
}

#[test]
fn slot_decompressors_are_lint_clean() {
    if !hdl::prereq::available(
        &["verilator"],
        TEST,
        "install with: apt-get install verilator",
    ) {
        return;
    }
    let set = common::default_set();
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("slots_decompressor_lint");
    let _ = std::fs::remove_dir_all(&root);
    // (the generation-time check, which mirrors Verilator's rules, runs
    // on every form in the simulation tests; Verilator takes seconds a
    // unit)
    let spec = |k: usize, name: &str| SlotSpec::new(k, common::form(name)).expect("spec");
    let (colpart, lib, d8) = (
        spec(2, "stride-colpart"),
        spec(1, "stride-lib"),
        spec(2, "stride-colpart-d8"),
    );
    let jobs = [
        (colpart, decompressor::slot_default_stages(&colpart)),
        (lib, *decompressor::slot_stages(&lib).end()),
        (d8, decompressor::slot_default_stages(&d8)),
    ];
    let problems =
        common::problems_in_parallel(&jobs, |&(spec, stages)| lint(&set, spec, stages, &root));
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
