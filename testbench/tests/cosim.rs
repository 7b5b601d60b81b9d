//! Co-simulation of the units generated for `models/example` on Icarus and
//! Verilator: a few thousand blocks per unit (corpus of every class when
//! `../shared/corpus` exists, random, corner cases, Table-1 patterns,
//! malformed inputs), with stalls, backpressure and mid-stream resets; and a
//! check that a wrong model set is caught and located.
//!
//! A simulator that is not installed is skipped with an install hint (CI
//! installs both).

use std::path::{Path, PathBuf};

use testbench::run::{self, Config};
use testbench::{sim, Simulator, Unit};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn corpus() -> Option<PathBuf> {
    let d = root().join("../shared/corpus");
    if d.is_dir() {
        Some(d)
    } else {
        println!(
            "no corpus at {}; random and constructed vectors only",
            d.display()
        );
        None
    }
}

fn config(s: Simulator, name: &str) -> Config {
    let mut cfg = Config::new(&root().join("models/example"));
    cfg.build = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    cfg.sims = vec![s];
    cfg.corpus = corpus();
    cfg
}

fn installed(s: Simulator) -> bool {
    match sim::check_installed(s) {
        Ok(()) => true,
        Err(e) => {
            println!("skipping the {s} co-simulation: {e}");
            false
        }
    }
}

fn cosim_all_units(s: Simulator, blocks: usize) {
    if !installed(s) {
        return;
    }
    let mut cfg = config(s, &format!("cosim-{}", s.name()));
    cfg.blocks = blocks;
    cfg.seed = 2026;
    let reports = run::run(&cfg).expect("co-simulation runs");
    assert_eq!(reports.len(), 3);
    let mut ok = true;
    for r in &reports {
        println!("{}", r.render());
        ok &= r.verdict.ok();
        assert_eq!(r.verdict.checked, blocks as u64);
        assert!(r.verdict.resets > 0, "mid-stream resets happened");
    }
    assert!(ok, "mismatches (see the report above)");
    // malformed inputs reached the decompressor
    let d = reports
        .iter()
        .find(|r| r.unit == Unit::Decompressor)
        .expect("decompressor report");
    assert!(d
        .verdict
        .per_tag
        .keys()
        .any(|k| k.starts_with("malformed/")));
}

#[test]
fn example_units_match_golden_on_icarus() {
    cosim_all_units(Simulator::Icarus, 2000);
}

#[test]
fn example_units_match_golden_on_verilator() {
    cosim_all_units(Simulator::Verilator, 5000);
}

/// `models/example` with one base pointer of `byte-stride` changed.
fn wrong_set(dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(root().join("models/example/model.toml")).expect("read");
    let from = "bytes = [\"root\", \"0\", \"0\", \"0\"";
    assert!(text.contains(from));
    let text = text.replacen(from, "bytes = [\"root\", \"0\", \"1\", \"0\"", 1);
    let d = dir.join("wrong-model");
    std::fs::create_dir_all(&d).expect("mkdir");
    std::fs::write(d.join("model.toml"), text).expect("write");
    d
}

#[test]
fn wrong_model_set_is_caught_and_located() {
    let Some(&s) = Simulator::ALL.iter().find(|&&s| installed(s)) else {
        return;
    };
    let mut cfg = config(s, &format!("wrong-{}", s.name()));
    cfg.expect_model = Some(wrong_set(&cfg.build));
    cfg.units = vec![Unit::Compressor];
    cfg.blocks = 600;
    cfg.corpus = None;
    let reports = run::run(&cfg).expect("co-simulation runs");
    let r = &reports[0];
    let text = r.render();
    println!("{text}");
    assert!(!r.verdict.ok());
    let m = r.verdict.mismatches.first().expect("a mismatch");
    assert!(
        text.contains(&format!("block {} (", m.idx)),
        "names the block"
    );
    assert!(text.contains("input    : block"), "prints the input");
    let loc = r.location.as_ref().expect("located");
    let stage = loc.first_stage.as_deref().expect("a differing stage");
    assert!(stage.starts_with("compressor stage 1"), "{stage}");
    // byte-stride is predictor 2: its prediction differs first
    assert!(loc.diffs.iter().any(|d| d.signal == "pred_p2"), "{loc}");
    assert!(loc.isolated_vcd.is_file());
    assert!(loc.window_vcd.as_ref().is_some_and(|w| w.is_file()));
    assert!(loc.gtkw.iter().all(|g| g.is_file()));
    let gtkw = std::fs::read_to_string(&loc.gtkw[0]).expect("gtkw");
    assert!(gtkw.contains("-dut stage 1") && gtkw.contains("s1_symbols"));
}
