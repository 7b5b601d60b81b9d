//! `cosim prove magbdi` and `cosim prove dpc` on real units of small
//! geometries (a 32-byte block with a 16-byte MAG; 8- and 4-byte DPC
//! blocks of 1-byte segments and 2-byte sectors), so that they fit the
//! test run:
//! the round trips and depth variants are proven, and a decompressor
//! broken by hand (one adder of its carry or count logic made an AND or
//! an OR in the generated Verilog) fails with a counterexample block,
//! written as a corpus file that co-simulation replays; the DPC one with
//! its masked round trips taken by cases of the mask.

use std::path::{Path, PathBuf};

use golden::dpc::DpcParams;
use golden::magbdi::{DeltaMode, Params};
use testbench::prove::dpc::{prove_dpc, DpcProve};
use testbench::prove::magbdi::{prove_magbdi, BdiProve};
use testbench::prove::{Outcome, UnitsReport};

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
    hdl::prereq::available(&["yosys", "yosys-abc"], test, "install Yosys (make setup)")
}

fn bdi(dir: &Path, rtl: Option<PathBuf>) -> BdiProve {
    BdiProve {
        params: Params::new(32, 16, 4, DeltaMode::Unsigned),
        compressor_stages: 1,
        control: rtl.is_none(),
        rtl,
        build: dir.join("build"),
        seconds: 300,
        round_trip: true,
        depths: true,
    }
}

/// The depth variants run on the generated units only (the broken ones
/// are checked for their round trips).
fn dpc(dir: &Path, rtl: Option<PathBuf>) -> DpcProve {
    DpcProve {
        params: DpcParams::new(8, 1, 2).expect("a DPC geometry"),
        decompressor_stages: 2,
        depths: rtl.is_none(),
        control: rtl.is_none(),
        rtl,
        build: dir.join("build"),
        seconds: 300,
        whole_seconds: 300,
        round_trip: true,
        only: Vec::new(),
    }
}

/// The checks that failed with a counterexample.
fn failed(report: &UnitsReport) -> Vec<&str> {
    report
        .checks
        .iter()
        .filter(|c| matches!(c.outcome, Outcome::Counterexample(_)))
        .map(|c| c.name.as_str())
        .collect()
}

/// Replace the one line of `file` that starts with `start` by `edit` of it.
fn break_line(file: &Path, start: &str, edit: impl Fn(&str) -> String) {
    let text = std::fs::read_to_string(file).expect("read the unit");
    let lines: Vec<&str> = text.lines().filter(|l| l.starts_with(start)).collect();
    assert_eq!(lines.len(), 1, "the line to break: {start}");
    let broken = edit(lines[0]);
    assert_ne!(broken, lines[0]);
    std::fs::write(file, text.replace(lines[0], &broken)).expect("write the broken unit");
}

#[test]
fn the_small_bdi_and_dpc_units_are_proven() {
    if !tools("the_small_bdi_and_dpc_units_are_proven") {
        return;
    }
    let dir = scratch("bdi-proven");
    let r = prove_magbdi(&bdi(&dir, None), &|_| {}).expect("the BDI proof runs");
    assert!(r.proven(), "{}", r.render());
    // the round trip, the depth variant, and the stages and handshake of
    // both units and of the variant
    assert_eq!(r.checks.len(), 8, "{}", r.render());
    assert!(r
        .checks
        .iter()
        .any(|c| c.name == "bdi_compressor handshake (variant, 2 stages)"));
    assert_eq!(r.last_line(), "proven");
    let dir = scratch("dpc-proven");
    let r = prove_dpc(&dpc(&dir, None), &|_| {}).expect("the DPC proof runs");
    assert!(r.proven(), "{}", r.render());
    // three round trips, two depth variants, the stages and handshake of
    // the five units and of the two variants
    assert_eq!(r.checks.len(), 19, "{}", r.render());
    assert!(r
        .checks
        .iter()
        .any(|c| c.name == "dpc_truc_decompressor stages (variant, 3 stages)"));
}

#[test]
fn a_hand_broken_bdi_decompressor_fails_with_a_counterexample_block() {
    if !tools("a_hand_broken_bdi_decompressor_fails_with_a_counterexample_block") {
        return;
    }
    let dir = scratch("bdi-broken");
    let rtl = dir.join("rtl");
    let mut cfg = bdi(&dir, None);
    cfg.round_trip = false;
    cfg.depths = false;
    // generate the units (no check asked for) and break the decompressor's
    // adder of base and delta: a carry generate made an AND
    let gen = prove_magbdi(&cfg, &|_| {}).expect("generate");
    std::fs::rename(&gen.rtl_dir, &rtl).expect("move the units");
    break_line(
        &rtl.join("bdi_decompressor.v"),
        "    assign add_g4 = add_g2 | (",
        |l| l.replacen("add_g2 | (", "add_g2 & (", 1),
    );
    let mut cfg = bdi(&dir, Some(rtl.clone()));
    cfg.depths = false;
    let r = prove_magbdi(&cfg, &|_| {}).expect("the proof runs");
    assert!(!r.proven());
    assert_eq!(failed(&r), vec!["round trip"], "{}", r.render());
    assert!(r.last_line().starts_with("FAILED"), "{}", r.last_line());
    let c = &r.counterexamples[0];
    assert_eq!(c.block.len(), 32);
    assert_eq!(c.mask, None);
    assert_eq!(std::fs::read(&c.corpus).expect("corpus file"), c.block);
    assert!(c
        .replay
        .contains("cosim magbdi --block 32 --mag 16 --base 4 --mode unsigned"));
    assert!(c.replay.contains("--unit loopback --corpus"));
    // the golden model restores the block: the loss is the broken unit's
    let codec = golden::magbdi::MagBdi::new(cfg.params).expect("codec");
    let x = codec.encode(&c.block);
    assert_eq!(codec.decode(x.encoding, &x.data).expect("decodes"), c.block);
}

#[test]
fn a_hand_broken_dpc_decompressor_fails_with_blocks_and_masks_by_cases() {
    if !tools("a_hand_broken_dpc_decompressor_fails_with_blocks_and_masks_by_cases") {
        return;
    }
    let dir = scratch("dpc-broken");
    let rtl = dir.join("rtl");
    // a 4-byte block of two sectors: four masks, so four cases a miter
    let small = DpcParams::new(4, 1, 2).expect("a DPC geometry");
    let mut cfg = dpc(&dir, None);
    cfg.params = small;
    cfg.round_trip = false;
    cfg.depths = false;
    let gen = prove_dpc(&cfg, &|_| {}).expect("generate");
    std::fs::rename(&gen.rtl_dir, &rtl).expect("move the units");
    // the plain decompressor's count of uniform groups in the left half
    // of its first unpacking level: an adder made an OR
    break_line(
        &rtl.join("dpc_decompressor.v"),
        "    assign upl_count = ",
        |l| l.replace(" + ", " | "),
    );
    // the DF-MAN and DF-TRUC miters by cases of the mask (no time for the
    // whole ones)
    let mut cfg = dpc(&dir, Some(rtl));
    cfg.params = small;
    cfg.whole_seconds = 0;
    let r = prove_dpc(&cfg, &|_| {}).expect("the proof runs");
    assert!(!r.proven());
    assert!(r.last_line().starts_with("FAILED"), "{}", r.last_line());
    // the plain decompressor decodes the plain and the DF-MAN packets;
    // the DF-TRUC pair does not use it
    let names: Vec<&str> = r.checks.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names.len(), 1 + 4 + 4, "{names:?}");
    assert_eq!(names[1], "round trip DF-MAN, mask 0x0");
    assert_eq!(names[8], "round trip DF-TRUC, mask 0x3");
    let failed = failed(&r);
    assert_eq!(failed[0], "round trip plain", "{}", r.render());
    assert!(failed.len() > 1, "{}", r.render());
    assert!(
        failed[1..]
            .iter()
            .all(|f| f.starts_with("round trip DF-MAN, mask ")),
        "{}",
        r.render()
    );
    assert_eq!(r.notes.len(), 2, "{:?}", r.notes);
    assert_eq!(r.counterexamples.len(), failed.len());
    let plain = &r.counterexamples[0];
    assert_eq!(plain.mask, None);
    for c in &r.counterexamples {
        assert_eq!(c.block.len(), 4);
        assert_eq!(std::fs::read(&c.corpus).expect("corpus file"), c.block);
        assert!(c
            .replay
            .contains("cosim dpc --block 4 --segment 1 --sector 2"));
        if let Some(m) = c.mask {
            assert_eq!(c.check, format!("round trip DF-MAN, mask {m:#x}"));
        }
    }
    // the golden model restores the block
    let d = golden::dpc::Dpc::new(small);
    let pk = d.encode(&plain.block).expect("encodes");
    assert_eq!(d.decode(&pk.bytes, pk.len).expect("decodes"), plain.block);
}
