//! The `gen` binary on geometries at the edges of what the specifications
//! allow: it generates them in a few seconds at most, or refuses them with
//! the specification's reason and a non-zero exit, writing nothing.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Far above what any geometry takes now (under 2 s unoptimised); the
/// 512-byte, 1-byte-MAG, 2-byte-base MAG-aware BDI units once took minutes.
const DEADLINE: Duration = Duration::from_secs(60);

fn out_dir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("gen_cli_{name}"));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// Runs `gen args --out dir`, killing it after [`DEADLINE`].
fn gen(args: &[&str], dir: &Path) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_gen"))
        .args(args)
        .arg("--out")
        .arg(dir)
        .env("RUST_BACKTRACE", "0")
        .env("RUST_LIB_BACKTRACE", "0")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("gen starts");
    let start = Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if start.elapsed() > DEADLINE {
            let _ = child.kill();
            let _ = child.wait();
            panic!("gen {args:?} ran longer than {DEADLINE:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("output")
}

fn written(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

fn assert_generated(args: &[&str], name: &str, files: &[&str]) {
    let dir = out_dir(name);
    let o = gen(args, &dir);
    assert!(
        o.status.success(),
        "gen {args:?} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(written(&dir), files, "gen {args:?}");
}

fn assert_refused(args: &[&str], name: &str, reason: &str) {
    let dir = out_dir(name);
    let o = gen(args, &dir);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "gen {args:?} succeeded");
    assert!(err.contains(reason), "gen {args:?}: {err}");
    assert!(!err.contains("panicked"), "gen {args:?}: {err}");
    assert!(!dir.exists(), "gen {args:?} wrote {:?}", written(&dir));
}

const BDI_FILES: [&str; 4] = [
    "bdi_compressor.v",
    "bdi_decompressor.v",
    "files.f",
    "params.json",
];
const DPC_FILES: [&str; 7] = [
    "dpc_compressor.v",
    "dpc_decompressor.v",
    "dpc_man_compressor.v",
    "dpc_truc_compressor.v",
    "dpc_truc_decompressor.v",
    "files.f",
    "params.json",
];

#[test]
fn bdi_largest_block_smallest_mag_generates() {
    for base in ["2", "8"] {
        assert_generated(
            &[
                "--unit", "bdi", "--block", "512", "--mag", "1", "--base", base,
            ],
            &format!("bdi_512_1_{base}"),
            &BDI_FILES,
        );
    }
}

#[test]
fn bdi_without_delta_width_is_refused() {
    assert_refused(
        &[
            "--unit", "bdi", "--block", "16", "--mag", "8", "--base", "8",
        ],
        "bdi_nofit",
        "no delta width fits",
    );
}

#[test]
fn dpc_largest_and_one_segment_blocks_generate() {
    assert_generated(
        &["--unit", "dpc", "--block", "1024"],
        "dpc_1024",
        &DPC_FILES,
    );
    assert_generated(
        &[
            "--unit",
            "dpc",
            "--block",
            "8",
            "--segment",
            "8",
            "--sector",
            "8",
        ],
        "dpc_8_8_8",
        &DPC_FILES,
    );
}

#[test]
fn dpc_block_above_the_largest_is_refused() {
    assert_refused(
        &["--unit", "dpc", "--block", "2048", "--sector", "64"],
        "dpc_2048",
        "DPC: block size 2048 bytes is above the 1024-byte maximum",
    );
}

/// The Verilog of `dir` without its `// ` comment lines (the header names
/// the command), file by file, and `params.json`.
fn bodies(dir: &Path) -> Vec<(String, String)> {
    written(dir)
        .into_iter()
        .filter(|n| n.ends_with(".v") || n == "params.json" || n == "files.f")
        .map(|n| {
            let text = std::fs::read_to_string(dir.join(&n)).expect("read");
            let body: String = text
                .lines()
                .filter(|l| !l.starts_with("// "))
                .map(|l| format!("{l}\n"))
                .collect();
            (n, body)
        })
        .collect()
}

#[test]
fn subcommands_and_the_flat_form_generate_the_same_units() {
    let models = Path::new(env!("CARGO_MANIFEST_DIR")).join("../models/example");
    let m = models.to_str().expect("utf-8 path");
    let pairs: [(&[&str], &[&str], &str); 3] = [
        (&["--model", m], &["mpc", "--model", m], "mpc"),
        (
            &["--unit", "bdi", "--block", "64", "--mag", "16"],
            &["magbdi", "--block", "64", "--mag", "16"],
            "magbdi",
        ),
        (
            &["--unit", "dpc", "--block", "64"],
            &["dpc", "--block", "64"],
            "dpc",
        ),
    ];
    for (flat, sub, name) in pairs {
        let (a, b) = (
            out_dir(&format!("{name}_flat")),
            out_dir(&format!("{name}_sub")),
        );
        for (args, dir) in [(flat, &a), (sub, &b)] {
            let o = gen(args, dir);
            assert!(
                o.status.success(),
                "gen {args:?}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
        let (x, y) = (bodies(&a), bodies(&b));
        assert!(x.len() >= 3, "{name}: {x:?}");
        assert_eq!(x, y, "{name}");
    }
    // a flat option with a subcommand is refused, writing nothing
    let dir = out_dir("mixed");
    let o = gen(&["--unit", "dpc", "mpc", "--model", m], &dir);
    assert!(!o.status.success());
    assert!(written(&dir).is_empty());
}

fn models(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../models")
        .join(name)
        .display()
        .to_string()
}

#[test]
fn mpc_pipeline_depths_outside_their_ranges_are_refused() {
    let model = models("example");
    assert_refused(
        &["--model", &model, "--decompressor-stages", "9"],
        "mpc_d9",
        "the decompressor is built with 4 to 8 stages",
    );
    assert_refused(
        &["mpc", "--model", &model, "--compressor-stages", "2"],
        "mpc_c2",
        "the compressor is built with 3 or 4 stages",
    );
}

#[test]
fn mpc_deeper_pipelines_are_described_and_recorded() {
    let model = models("example");
    let dir = out_dir("mpc_c4_d6");
    let args = [
        "--model",
        &model,
        "--compressor-stages",
        "4",
        "--decompressor-stages",
        "6",
    ];
    let o = gen(&args, &dir);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let units = hdl::unit::read_units(&dir.join("params.json")).expect("params.json");
    let latency = |m: &str| units.iter().find(|u| u.module == m).map(|u| u.latency);
    assert_eq!(latency("mpc_compressor"), Some(4));
    assert_eq!(latency("mpc_decompressor"), Some(6));
    for (file, flag) in [
        ("mpc_compressor.v", "--compressor-stages 4"),
        ("mpc_decompressor.v", "--decompressor-stages 6"),
    ] {
        let text = std::fs::read_to_string(dir.join(file)).expect("verilog");
        let command = text
            .lines()
            .find(|l| l.starts_with("// Command:"))
            .expect("header names the command");
        assert!(command.contains(flag), "{file}: {command}");
    }
}

/// Runs `gen args` in `cwd` with every argument as given (no `--out`
/// added), standard output and error captured.
fn gen_os(args: &[std::ffi::OsString], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gen"))
        .args(args)
        .current_dir(cwd)
        .env("RUST_BACKTRACE", "0")
        .output()
        .expect("gen runs")
}

fn os(args: &[&str]) -> Vec<std::ffi::OsString> {
    args.iter().map(|a| a.into()).collect()
}

#[test]
fn paths_that_are_not_utf8_are_read_and_written() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let root = out_dir("not_utf8");
    let set = root.join(OsStr::from_bytes(b"set-\xff"));
    std::fs::create_dir_all(&set).expect("mkdir");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../models/example/model.toml"),
        set.join("model.toml"),
    )
    .expect("copy the example set");
    let out = |name: &[u8]| root.join(OsStr::from_bytes(name));
    let runs: [(Vec<std::ffi::OsString>, PathBuf, &[&str]); 3] = [
        (
            vec!["--model".into(), set.clone().into_os_string()],
            out(b"mpc-\xfe"),
            &[
                "files.f",
                "mpc_compressor.v",
                "mpc_decompressor.v",
                "params.json",
            ],
        ),
        (
            os(&["magbdi", "--block", "64", "--mag", "16"]),
            out(b"bdi-\xfe"),
            &BDI_FILES,
        ),
        (
            os(&["--unit", "dpc", "--block", "64"]),
            out(b"dpc-\xfe"),
            &DPC_FILES,
        ),
    ];
    for (mut args, dir, files) in runs {
        args.extend(["--out".into(), dir.clone().into_os_string()]);
        let o = gen_os(&args, &root);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "gen {args:?}: {err}");
        assert_eq!(written(&dir), files, "gen {args:?}");
        let listed = String::from_utf8_lossy(&o.stdout);
        assert_eq!(listed.lines().count(), files.len(), "{listed}");
    }
    // a model path that is not UTF-8 and does not exist: an error naming it
    let o = gen_os(
        &[
            "--model".into(),
            root.join(OsStr::from_bytes(b"missing-\xff"))
                .into_os_string(),
        ],
        &root,
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("cannot read model file"), "{err}");
    assert!(err.contains("missing-"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn a_closed_standard_output_ends_gen_quietly() {
    let dir = out_dir("closed_stdout");
    let mut child = Command::new(env!("CARGO_BIN_EXE_gen"))
        .args(["dpc", "--block", "64", "--out"])
        .arg(&dir)
        .env("RUST_BACKTRACE", "0")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("gen starts");
    // the reading end closes before gen prints anything (`gen | head -0`)
    drop(child.stdout.take());
    let o = child.wait_with_output().expect("gen ends");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{:?}: {err}", o.status);
    assert!(err.is_empty(), "{err}");
    assert_eq!(written(&dir), DPC_FILES, "the units are still written");
}

#[test]
fn options_that_do_not_apply_are_refused() {
    let model = models("example");
    let m = model.as_str();
    let cases: [(&[&str], &str); 11] = [
        (
            &["--model", m, "--unit", "magbdi"],
            "the argument '--model' cannot be used with '--unit magbdi'",
        ),
        (
            &["--model", m, "--unit", "dpc"],
            "the argument '--model' cannot be used with '--unit dpc'",
        ),
        (
            &["--unit", "magbdi", "--compressor-stages", "4"],
            "the argument '--compressor-stages' cannot be used with '--unit magbdi'",
        ),
        (
            &["--unit", "dpc", "--decompressor-stages", "6"],
            "the argument '--decompressor-stages' cannot be used with '--unit dpc'",
        ),
        (
            &["--unit", "bdi", "--segment", "8"],
            "the argument '--segment' cannot be used with '--unit magbdi': it applies to --unit dpc",
        ),
        (
            &["--unit", "dpc", "--mag", "16"],
            "the argument '--mag' cannot be used with '--unit dpc': it applies to --unit magbdi",
        ),
        (
            &["--block", "64"],
            "the argument '--block' cannot be used with '--unit all' (the default)",
        ),
        (
            &["--model", m, "--unit", "decompressor", "--compressor-stages", "4"],
            "the argument '--compressor-stages' cannot be used with '--unit decompressor'",
        ),
        (
            &["mpc", "--model", m, "--unit", "compressor", "--decompressor-stages", "5"],
            "the argument '--decompressor-stages' cannot be used with '--unit compressor'",
        ),
        (&["--model", m, "--mag", "16"], "cannot be used with '--mag <MAG>'"),
        (
            &["--unit", "bdi", "--base", "2", "--sector", "16"],
            "cannot be used with '--sector <SECTOR>'",
        ),
    ];
    for (i, (args, reason)) in cases.iter().enumerate() {
        assert_refused(args, &format!("conflict_{i}"), reason);
        let o = gen(args, &out_dir(&format!("conflict_{i}")));
        assert_eq!(o.status.code(), Some(2), "gen {args:?}: a usage error");
    }
    // what applies is still taken
    assert_generated(
        &[
            "--model",
            m,
            "--unit",
            "compressor",
            "--compressor-stages",
            "4",
        ],
        "applies_c4",
        &["files.f", "mpc_compressor.v", "params.json"],
    );
    assert_generated(
        &[
            "--unit",
            "dpc",
            "--block",
            "64",
            "--segment",
            "8",
            "--sector",
            "16",
        ],
        "applies_dpc",
        &DPC_FILES,
    );
}

#[test]
fn default_output_directories_are_the_ones_help_names() {
    let root = out_dir("default_dirs");
    std::fs::create_dir_all(&root).expect("mkdir");
    for (args, dir) in [
        (
            &["magbdi", "--block", "64", "--mag", "16"][..],
            "bdi-64-16-4",
        ),
        (
            &[
                "--unit", "bdi", "--block", "64", "--mag", "16", "--base", "2", "--mode", "signed",
            ],
            "bdi-64-16-2-signed",
        ),
        (&["dpc", "--block", "64", "--segment", "8"], "dpc-64-8-32"),
    ] {
        let o = gen_os(&os(args), &root);
        assert!(
            o.status.success(),
            "gen {args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(
            root.join("build").join(dir).join("params.json").is_file(),
            "gen {args:?} did not write build/{dir}: {:?}",
            written(&root.join("build"))
        );
    }
    for (sub, pattern) in [
        ("magbdi", "build/bdi-<block>-<mag>-<base>[-signed]"),
        ("dpc", "build/dpc-<block>-<segment>-<sector>"),
    ] {
        let o = gen_os(&os(&[sub, "--help"]), &root);
        let help = String::from_utf8_lossy(&o.stdout);
        assert!(help.contains(pattern), "gen {sub} --help: {help}");
    }
}
