//! The co-simulation binaries refuse bad arguments and mismatched inputs
//! with one clear message and exit status 2, before any simulator runs.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

fn models() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../models")
}

fn scratch(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("cosim_cli")
        .join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("mkdir");
    d
}

fn run(exe: &str, args: &[&str], build: &Path) -> (Output, String) {
    let out = Command::new(exe)
        .args(args)
        .arg("--build")
        .arg(build)
        .output()
        .expect("binary runs");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    (out, err)
}

fn assert_refused(exe: &str, args: &[&str], needles: &[&str]) {
    // a directory of its own: the tests run in parallel
    static CALLS: AtomicUsize = AtomicUsize::new(0);
    let build = scratch(&format!(
        "refused-{}",
        CALLS.fetch_add(1, Ordering::Relaxed)
    ));
    let (out, err) = run(exe, args, &build);
    assert_eq!(out.status.code(), Some(2), "{exe} {args:?}: {err}");
    for n in needles {
        assert!(err.contains(n), "{exe} {args:?}: no {n:?} in {err}");
    }
}

const COSIM: &str = env!("CARGO_BIN_EXE_cosim");

#[test]
fn zero_blocks_and_zero_jobs_are_refused() {
    let example = models().join("example");
    let m = example.to_str().expect("utf-8 path");
    let base = ["--model", m, "--sim", "icarus", "--no-corpus"];
    let with = |extra: &[&'static str]| -> Vec<&str> {
        base.iter().copied().chain(extra.iter().copied()).collect()
    };
    assert_refused(
        COSIM,
        &with(&["--blocks", "0"]),
        &["--blocks", "at least 1"],
    );
    assert_refused(
        COSIM,
        &with(&["--blocks", "1", "--jobs", "0"]),
        &["--jobs", "at least 1"],
    );
    for family in ["magbdi", "dpc"] {
        assert_refused(
            COSIM,
            &[family, "--sim", "icarus", "--no-corpus", "--blocks", "0"],
            &["--blocks", "at least 1"],
        );
    }
    // the MPC arguments go with `mpc` or with no subcommand, not both
    assert_refused(
        COSIM,
        &with(&["--blocks", "1", "mpc"]),
        &["cannot be used with"],
    );
}

#[test]
fn stall_probabilities_outside_0_1_are_refused() {
    let example = models().join("example");
    let m = example.to_str().expect("utf-8 path");
    for stall in ["1.5", "-0.5", "NaN", "inf", "x"] {
        let flag = format!("--stall={stall}");
        assert_refused(
            COSIM,
            &[
                "--model",
                m,
                "--sim",
                "icarus",
                "--no-corpus",
                "--blocks",
                "1",
                &flag,
            ],
            &["--stall"],
        );
        for family in ["magbdi", "dpc"] {
            assert_refused(
                COSIM,
                &[
                    family,
                    "--sim",
                    "icarus",
                    "--no-corpus",
                    "--blocks",
                    "1",
                    &flag,
                ],
                &["--stall"],
            );
        }
    }
    assert_refused(
        COSIM,
        &[
            "dpc",
            "--sim",
            "icarus",
            "--no-corpus",
            "--blocks",
            "1",
            "--stall",
            "1.5",
        ],
        &["--stall", "[0, 1]"],
    );
    use testbench::stream_unit::{at_least_one, probability};
    assert_eq!(probability("0"), Ok(0.0));
    assert_eq!(probability("1"), Ok(1.0));
    assert_eq!(probability("0.25"), Ok(0.25));
    assert!(probability("1.0001").is_err());
    assert_eq!(at_least_one("1"), Ok(1));
    assert!(at_least_one("0").is_err());
    assert!(at_least_one("-1").is_err());
}

#[test]
fn a_missing_model_set_is_reported_once() {
    let build = scratch("missing");
    let missing = build.join("no-such-set");
    let (out, err) = run(
        COSIM,
        &[
            "--model",
            missing.to_str().expect("utf-8 path"),
            "--sim",
            "icarus",
            "--no-corpus",
            "--blocks",
            "1",
        ],
        &build,
    );
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("no-such-set"), "{err}");
    assert_eq!(
        err.matches("No such file or directory").count(),
        1,
        "the cause is said once: {err}"
    );
    assert_eq!(err.matches("no-such-set").count(), 1, "{err}");
}

#[test]
fn rtl_of_another_model_set_is_refused_before_simulating() {
    let build = scratch("wrong-rtl");
    let rtl = build.join("rtl-example");
    hdl::mpc::write_units(
        &models().join("example"),
        &rtl,
        &hdl::mpc::Unit::ALL,
        &Default::default(),
        "cosim_cli test",
    )
    .expect("generate the example units");
    let default = models().join("default");
    let args = [
        "--model",
        default.to_str().expect("utf-8 path"),
        "--rtl",
        rtl.to_str().expect("utf-8 path"),
        "--sim",
        "icarus",
        "--unit",
        "compressor",
        "--no-corpus",
        "--blocks",
        "20",
    ];
    let (out, err) = run(COSIM, &args, &build);
    assert_eq!(out.status.code(), Some(2), "{err}");
    let sha = golden::mpc::model::file_sha256(&models().join("example")).expect("hash");
    for needle in [
        "generated from model set example",
        sha.as_str(),
        "not from",
        "models/default",
        "params.json",
    ] {
        assert!(err.contains(needle), "no {needle:?} in {err}");
    }
    // without params.json the Verilog headers carry the same identity
    std::fs::remove_file(rtl.join("params.json")).expect("remove params.json");
    let (out, err) = run(COSIM, &args, &build);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("generated from model set example"), "{err}");
    assert!(err.contains("mpc_compressor.v"), "{err}");
}
