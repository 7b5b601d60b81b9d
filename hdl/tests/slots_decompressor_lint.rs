//! The MPC decompressor with programmable slots through
//! `verilator --lint-only -Wall` (any output or a failing status fails),
//! on `models/default`: two `stride-colpart` slots at the default depth,
//! one `stride-lib` slot at the deepest, two `stride-colpart-d8` slots. A
//! missing `verilator` is reported and skipped, or fails the test under
//! `MPCGEN_REQUIRE_TOOLS=1` (`hdl::prereq`).

use std::path::{Path, PathBuf};
use std::process::Command;

use golden::mpc::program::Form;
use golden::mpc::ModelSet;
use hdl::mpc::{decompressor, SlotSpec};

const TEST: &str = "slot_decompressors_are_lint_clean";

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

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
    let files = match m.emit_hierarchy(&[]) {
        Ok(f) => f,
        Err(e) => return Some(format!("{label}: {e}")),
    };
    let dir = root.join(label.replace(' ', "_"));
    let paths = match hdl::ir::write_files(&dir, &files) {
        Ok(p) => p,
        Err(e) => return Some(format!("{label}: writing {}: {e}", dir.display())),
    };
    let out = Command::new("verilator")
        .args(["--lint-only", "-Wall", "--top-module", "mpc_decompressor"])
        .args(&paths)
        .output();
    match out {
        Ok(o) if o.status.success() && o.stdout.is_empty() && o.stderr.is_empty() => None,
        Ok(o) => Some(format!(
            "{label}: verilator ({}):\n{}{}",
            o.status,
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )),
        Err(e) => Some(format!("{label}: could not run verilator: {e}")),
    }
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
    let set = ModelSet::load(&repo().join("models/default")).expect("models/default");
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("slots_decompressor_lint");
    let _ = std::fs::remove_dir_all(&root);
    // (the generation-time check, which mirrors Verilator's rules, runs
    // on every form in the simulation tests; Verilator takes seconds a
    // unit)
    let spec =
        |k: usize, name: &str| SlotSpec::new(k, Form::by_name(name).expect("form")).expect("spec");
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
    let problems: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = jobs
            .chunks(jobs.len().div_ceil(2))
            .map(|chunk| {
                let (set, root) = (&set, &root);
                s.spawn(move || {
                    chunk
                        .iter()
                        .filter_map(|&(spec, stages)| lint(set, spec, stages, root))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("lint thread"))
            .collect()
    });
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
