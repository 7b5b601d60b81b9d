//! `unit_synth --power` refuses what it cannot measure before any
//! synthesis starts: power without the timing flow, a clock period that is
//! not positive, a corpus that does not exist. (The power flow itself runs
//! in `small_unit.rs`.)

mod common;

use std::path::Path;
use std::process::{Command, Output};

fn unit_synth(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_unit_synth"))
        .args(args)
        .output()
        .expect("unit_synth runs")
}

fn refused(out: &Output, words: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "accepted: {err}");
    assert!(err.contains(words), "`{words}` not in: {err}");
}

#[test]
fn power_needs_timing_and_a_positive_clock() {
    refused(
        &unit_synth(&["--rtl", "x", "--power", "--area-only"]),
        "cannot be used with",
    );
    for bad in ["0", "-1", "fast", "inf"] {
        refused(
            &unit_synth(&["--rtl", "x", "--power", &format!("--clock-ns={bad}")]),
            "not a positive clock period",
        );
    }
    refused(
        &unit_synth(&["--rtl", "x", "--power", "--power-blocks", "0"]),
        "power-blocks",
    );
    refused(
        &unit_synth(&["--rtl", "x", "--power", "--stimulus", "sometimes"]),
        "sometimes",
    );
}

#[test]
fn a_missing_corpus_is_an_error_not_random_blocks() {
    if common::tools_and_liberty(&["yosys", "sta", "iverilog"]).is_none() {
        return;
    }
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("power_cli");
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(dir.join("files.f"), "u.v\n").expect("write");
    let corpus = dir.join("no-such-corpus");
    let out = unit_synth(&[
        "--rtl",
        &dir.display().to_string(),
        "--power",
        "--corpus",
        &corpus.display().to_string(),
    ]);
    refused(&out, "no-such-corpus: no such file or directory");
}
