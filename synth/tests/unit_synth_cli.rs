//! `unit_synth` on a small gen output (a one-predictor compressor, area
//! only): the table's header comes before its rows, figures the run did
//! not measure read `–` (as in `synth`'s reports), every file written is
//! named, and a progress line goes to stderr when it is not a terminal
//! (`synth`'s per-stage table shows unmeasured depths the same way: the
//! unit tests of `synth::report`).
//! Without yosys or the liberty it prints how to install them and passes,
//! unless MPCGEN_REQUIRE_TOOLS=1 (then it fails).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use golden::mpc::ModelSet;
use hdl::mpc::MpcConfig;
use hdl::{Side, Unit};
use synth::report::NOT_MEASURED;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

#[test]
fn area_only_rows_follow_the_header_and_show_what_was_not_measured() {
    let Some(_lib) = common::tools_and_liberty(&["yosys"]) else {
        return;
    };
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("unit_synth_cli");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("set")).expect("mkdir");
    let mut set = ModelSet::load(&root().join("models/example")).expect("example set");
    set.predictors.truncate(1);
    set.name = "unit-synth-1p".into();
    std::fs::write(
        dir.join("set/model.toml"),
        set.to_toml().expect("serialise"),
    )
    .expect("write");
    let rtl = dir.join("rtl");
    let config = MpcConfig::load(&dir.join("set"), Default::default()).expect("set loads");
    hdl::family::write_units(&config, &rtl, &[Unit::Mpc(Side::Compressor)], "test").expect("gen");

    let out = Command::new(env!("CARGO_BIN_EXE_unit_synth"))
        .arg("--rtl")
        .arg(&rtl)
        .arg("--area-only")
        .env(datafiles::progress::INTERVAL_ENV, "0")
        .output()
        .expect("unit_synth runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    let header = lines
        .iter()
        .position(|l| l.starts_with("| unit |"))
        .unwrap_or_else(|| panic!("no header: {stdout}"));
    let row = lines
        .iter()
        .position(|l| l.starts_with("| mpc_compressor |"))
        .unwrap_or_else(|| panic!("no row: {stdout}"));
    assert!(header < row, "the row comes before the header: {stdout}");
    let cells: Vec<&str> = lines[row].split('|').map(str::trim).collect();
    // timing-mapped area, levels, period (ns), period (FO4)
    for k in [3, 8, 9, 10] {
        assert_eq!(cells[k], NOT_MEASURED, "column {k} of {}", lines[row]);
    }
    for f in ["report.md", "report.json"] {
        let p = rtl.join("synth").join(f);
        assert!(
            stdout.contains(&format!("wrote {}", p.display())),
            "{stdout}"
        );
    }
    assert!(
        stderr
            .lines()
            .any(|l| l.starts_with("unit_synth: mpc_compressor (1/1): running for")),
        "no progress line: {stderr}"
    );

    // the JSON report says the same: no gate depths were measured
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(rtl.join("synth/report.json")).expect("report.json"),
    )
    .expect("JSON");
    let stages = json["units"][0]["stages"].as_array().expect("stages");
    assert!(!stages.is_empty());
    for st in stages {
        assert!(
            st["levels_gates_area"].is_null() && st["levels_gates_delay"].is_null(),
            "{st}"
        );
    }
}
