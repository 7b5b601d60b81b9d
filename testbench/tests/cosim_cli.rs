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
    let config = hdl::mpc::MpcConfig::load(&models().join("example"), Default::default())
        .expect("the example set loads");
    hdl::family::write_units(&config, &rtl, &hdl::mpc::UNITS, "cosim_cli test")
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
    // without params.json nothing says which set the units are of: refused
    std::fs::remove_file(rtl.join("params.json")).expect("remove params.json");
    let (out, err) = run(COSIM, &args, &build);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("no params.json"), "{err}");
    assert!(err.contains(rtl.to_str().expect("utf-8 path")), "{err}");
}

#[test]
fn block_counts_above_the_limit_are_refused_before_anything_is_allocated() {
    let example = models().join("example");
    let m = example.to_str().expect("utf-8 path");
    let limit = testbench::stream_unit::MAX_BLOCKS.to_string();
    let over = (testbench::stream_unit::MAX_BLOCKS + 1).to_string();
    for n in [
        "18446744073709551615",
        "18446744073709551616000",
        "1000000000000",
        over.as_str(),
    ] {
        assert_refused(
            COSIM,
            &[
                "--model",
                m,
                "--sim",
                "icarus",
                "--no-corpus",
                "--blocks",
                n,
            ],
            &["--blocks", &limit, "per unit", "--seed"],
        );
        for family in ["magbdi", "dpc"] {
            assert_refused(
                COSIM,
                &[family, "--sim", "icarus", "--no-corpus", "--blocks", n],
                &["--blocks", &limit],
            );
        }
        assert_refused(
            COSIM,
            &["mutate", "--design", "dpc", "--no-corpus", "--blocks", n],
            &["--blocks", &limit],
        );
    }
    // the limit itself parses
    assert_eq!(
        testbench::stream_unit::block_count(&limit),
        Ok(testbench::stream_unit::MAX_BLOCKS)
    );
    assert_eq!(testbench::stream_unit::block_count("0010"), Ok(10));
}

#[test]
fn a_corpus_file_shorter_than_a_block_is_warned_about_and_skipped() {
    let dir = scratch("short-corpus");
    let corpus = dir.join("corpus");
    std::fs::create_dir_all(corpus.join("int32")).expect("mkdir");
    let data: Vec<u8> = (0..64 * 32u32)
        .flat_map(|i| (i / 7).to_le_bytes())
        .collect();
    std::fs::write(corpus.join("int32/a.bin"), &data).expect("write");
    std::fs::write(corpus.join("int32/tiny.bin"), [1u8; 20]).expect("write");
    std::fs::write(corpus.join("empty.bin"), []).expect("write");
    let mut tags = testbench::vectors::Tags::new();
    let set = golden::mpc::ModelSet::load(&models().join("example")).expect("example set");
    let v = testbench::vectors::compressor_vectors(
        &set,
        &testbench::vectors::GenConfig {
            blocks: 3000,
            seed: 1,
            corpus: Some(corpus.clone()),
        },
        &mut tags,
    )
    .expect("vectors");
    let id = tags.id("corpus/int32");
    assert!(v.iter().filter(|x| x.tag == id).count() > 1000);
    let classes = testbench::vectors::usable_corpus(&corpus, 32).expect("usable");
    assert_eq!(classes.len(), 1, "{classes:?}");
    assert_eq!(classes[0].1, [corpus.join("int32/a.bin")]);
    // the binary says so (and runs, where Icarus is installed)
    if !testbench::stream_unit::icarus_or_skip() {
        return;
    }
    let c = corpus.to_str().expect("utf-8 path");
    let (out, err) = run(
        COSIM,
        &[
            "dpc",
            "--sim",
            "icarus",
            "--unit",
            "compressor",
            "--blocks",
            "60",
            "--corpus",
            c,
        ],
        &dir.join("build"),
    );
    assert!(out.status.success(), "{err}");
    for f in ["tiny.bin", "empty.bin"] {
        assert!(
            err.lines().any(|l| l.starts_with("cosim: warning: ")
                && l.contains(f)
                && l.contains("shorter than one 128-byte block; skipped")),
            "no warning about {f}: {err}"
        );
    }
    // a corpus with no whole block at all is an error that says so
    let bad = dir.join("bad");
    std::fs::create_dir_all(&bad).expect("mkdir");
    std::fs::write(bad.join("x.bin"), [1u8; 31]).expect("write");
    let (out, err) = run(
        COSIM,
        &[
            "--model",
            models().join("example").to_str().expect("utf-8"),
            "--sim",
            "icarus",
            "--unit",
            "compressor",
            "--blocks",
            "50",
            "--corpus",
            bad.to_str().expect("utf-8"),
        ],
        &dir.join("build2"),
    );
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("holds a whole 32-byte block"), "{err}");
}

#[test]
fn progress_is_printed_as_plain_lines_when_stderr_is_not_a_terminal() {
    if !testbench::stream_unit::icarus_or_skip() {
        return;
    }
    let dir = scratch("plain-progress");
    let example = models().join("example");
    let out = Command::new(COSIM)
        .args(["--model", example.to_str().expect("utf-8 path")])
        .args(["--sim", "icarus", "--unit", "compressor", "--blocks", "200"])
        .args(["--no-corpus", "--build"])
        .arg(dir.join("build"))
        .env(datafiles::progress::INTERVAL_ENV, "0")
        .output()
        .expect("cosim runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.lines()
            .any(|l| l.starts_with("cosim icarus compressor: ") && l.contains("/200 blocks (")),
        "no plain progress line: {err}"
    );
    assert!(!err.contains('\r') && !err.contains('\u{1b}'), "{err:?}");
}

#[test]
fn bad_slot_options_are_refused_before_generating() {
    let example = models().join("example");
    let m = example.to_str().expect("utf-8 path");
    for (extra, needle) in [
        (
            &["--program-slots", "2", "--slot-form", "nope"][..],
            "--slot-form",
        ),
        (
            &["--program-slots", "2", "--slot-form", "full"][..],
            "--program-slots",
        ),
        (&["--program-slots", "9"][..], "--program-slots"),
        (
            &["--program-slots", "1", "--slot-images", "trained,bogus"][..],
            "--slot-images",
        ),
        (
            &["--program-slots", "1", "--reprogram-every", "0"][..],
            "--reprogram-every",
        ),
    ] {
        let mut args = vec![
            "--model",
            m,
            "--sim",
            "icarus",
            "--no-corpus",
            "--blocks",
            "1",
        ];
        args.extend_from_slice(extra);
        assert_refused(COSIM, &args, &[needle]);
    }
}
