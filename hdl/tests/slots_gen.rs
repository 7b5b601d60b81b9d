//! `gen --program-slots K [--slot-form F]`: the files it writes, the
//! ports and depths of the units with slots, the option checks (usage
//! errors with exit status 2, refused values with an error naming the
//! option), and the compressors with slots through
//! `verilator --lint-only -Wall` (a missing `verilator` is reported and
//! skipped, or fails the test under `MPCGEN_REQUIRE_TOOLS=1`).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use golden::mpc::ModelSet;
use hdl::mpc::{compressor, slots, Options, SlotSpec};

mod common;
use common::{form, repo};

fn out_dir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("slots_gen_{name}"));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// `gen args --out dir` from the repository root.
fn gen(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gen"))
        .current_dir(repo())
        .args(args)
        .arg("--out")
        .arg(dir)
        .env("RUST_BACKTRACE", "0")
        .env("RUST_LIB_BACKTRACE", "0")
        .output()
        .expect("gen runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn program_slots_writes_both_units_and_the_c_header() {
    let dir = out_dir("k2");
    let o = gen(&["--model", "models/default", "--program-slots", "2"], &dir);
    assert!(o.status.success(), "{}", stderr(&o));
    for f in [
        "mpc_compressor.v",
        "mpc_decompressor.v",
        "params.json",
        "mpc_slots.h",
    ] {
        assert!(dir.join(f).is_file(), "{f} written");
    }
    let v = std::fs::read_to_string(dir.join("mpc_compressor.v")).expect("compressor");
    for port in [
        "input  wire         cfg_we",
        "input  wire [11:0]  cfg_addr",
        "input  wire [31:0]  cfg_wdata",
        "output wire [7:0]   out_epoch",
        "output wire         cfg_pending",
        "output wire [7:0]   cfg_epoch",
        // H = 4 for models/default with two slots: 260-bit out_bits
        "output wire [259:0] out_bits",
        "output wire [3:0]   out_model",
    ] {
        assert!(v.contains(port), "`{port}` in mpc_compressor.v");
    }
    assert!(v.contains("Programmable slots: 2 of form stride-colpart"));
    let h = std::fs::read_to_string(dir.join("mpc_slots.h")).expect("header");
    assert!(h.contains("MPC_SLOTS_K"), "{h}");
}

#[test]
fn slot_options_are_checked() {
    let dir = out_dir("refused");
    let m = ["--model", "models/default"];
    let with = |extra: &[&str]| -> Output {
        let args: Vec<&str> = m.iter().chain(extra).copied().collect();
        gen(&args, &dir)
    };
    // usage errors: exit status 2
    let o = with(&["--slot-form", "stride-lib"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--program-slots"), "{}", stderr(&o));
    let o = gen(&["--unit", "magbdi", "--program-slots", "2"], &dir);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    // refused values, each named
    for (extra, says) in [
        (
            &["--program-slots", "2", "--slot-form", "full"][..],
            "--slot-form full",
        ),
        (
            &["--program-slots", "1", "--slot-form", "any-part"][..],
            "--slot-form any-part",
        ),
        (
            &["--program-slots", "1", "--slot-form", "zigzag"][..],
            "--slot-form zigzag",
        ),
        (&["--program-slots", "5"][..], "--program-slots 5"),
        (
            &["--program-slots", "2", "--compressor-stages", "3"][..],
            "--compressor-stages 3",
        ),
        (
            &["--program-slots", "2", "--decompressor-stages", "4"][..],
            "--decompressor-stages 4",
        ),
    ] {
        let o = with(extra);
        assert_eq!(o.status.code(), Some(1), "{extra:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(says), "{extra:?}: {}", stderr(&o));
        assert!(!dir.join("mpc_compressor.v").exists(), "{extra:?} wrote");
    }
}

#[test]
fn options_with_slots_take_the_slot_depths() {
    let spec = SlotSpec::new(2, form("stride-colpart")).expect("spec");
    let o = Options::with_slots(spec, None, None).expect("defaults");
    assert_eq!(o.compressor_stages(), slots::SLOT_COMPRESSOR_STAGES);
    assert_eq!(
        o.decompressor_stages(),
        hdl::mpc::decompressor::slot_default_stages(&spec)
    );
    assert_eq!(o.slots(), spec);
    assert!(Options::with_slots(spec, Some(3), None).is_err());
    let five = Options::with_slots(spec, Some(5), None).expect("5 stages");
    assert_eq!(five.compressor_stages(), 5);
    assert!(Options::with_slots(spec, Some(6), None).is_err());
    // without slots: the hard-wired depths
    let none = SlotSpec::none();
    let o = Options::with_slots(none, Some(3), Some(8)).expect("hard-wired");
    assert_eq!((o.compressor_stages(), o.decompressor_stages()), (3, 8));
    assert!(Options::with_slots(none, Some(4), Some(9)).is_err());
    assert_eq!(Options::default().slots().k(), 0);
    assert!(SlotSpec::new(1, form("full")).is_err());
    assert!(SlotSpec::new(5, form("stride-lib")).is_err());
}

/// The compressor of `spec` at `stages` stages through Verilator; the
/// problem, if any.
fn lint(set: &ModelSet, spec: SlotSpec, stages: usize, root: &Path) -> Option<String> {
    let label = format!("{}_{}_K{}_{stages}", set.name, spec.form().name, spec.k());
    match compressor::build_slots_staged(set, spec, stages) {
        Ok((m, _)) => common::verilator_lint(&label, "mpc_compressor", &m, root),
        Err(e) => Some(format!("{label}: {e}")),
    }
}

#[test]
fn slot_compressors_are_lint_clean() {
    if !hdl::prereq::available(
        &["verilator"],
        "slot_compressors_are_lint_clean",
        "install with: apt-get install verilator",
    ) {
        return;
    }
    let set = common::default_set();
    let models = Path::new(env!("CARGO_MANIFEST_DIR")).join("../models");
    let exact = ModelSet::load(&models.join("default-exact")).expect("models/default-exact");
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("slots_compressor_lint");
    let _ = std::fs::remove_dir_all(&root);
    // (the generation-time check, which mirrors Verilator's rules, runs on
    // every form in the simulation tests; Verilator takes seconds a unit)
    let jobs = [
        (&set, "stride-colpart", 1, 4),
        (&set, "stride-lib", 2, 4),
        (&set, "stride-cols", 1, 4),
        (&exact, "stride-colpart", 1, 5),
    ];
    let problems = common::problems_in_parallel(&jobs, |&(set, name, k, stages)| {
        lint(
            set,
            SlotSpec::new(k, form(name)).expect("spec"),
            stages,
            &root,
        )
    });
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
