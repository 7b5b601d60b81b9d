//! The evaluation tools (`eval`, `train`, `magbdi eval`, `dpc_eval`) on
//! small corpora with empty groups (no unseen application, no
//! mixed/workload file, a file without a whole 128-byte block) or with
//! nothing useful at all: empty groups are reported as such, never as 0,
//! NaN or inf, and a corpus with nothing to report is an error with a
//! non-zero exit. Also what they write: only where told (`magbdi eval`
//! under build/eval by default), every file named on stdout, and the same
//! bytes for the same command.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use sha2::{Digest, Sha256};

const HEADER: &str =
    "file\tclass\tdomain\tbytes\tzero_block_fraction_32B\tsha256_16\tsource\tlicence\n";

/// A scratch directory removed when the test ends.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> Self {
        let d = std::env::temp_dir().join(format!("golden-empty-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        TempDir(d)
    }
}

impl std::ops::Deref for TempDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `bytes` bytes of word-like data (small deltas on a base, some zero
/// words) that every compressor can do something with.
fn data(seed: u32, bytes: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(2_654_435_761) | 1;
    let mut out = Vec::with_capacity(bytes);
    while out.len() < bytes {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        let w = if x.is_multiple_of(5) {
            0
        } else {
            (seed << 12) + (x % 64)
        };
        out.extend_from_slice(&w.to_le_bytes());
    }
    out.truncate(bytes);
    out
}

/// Write `files` (path, class, size in bytes) and their MANIFEST.tsv under
/// `dir/corpus`; returns the corpus directory.
fn corpus(dir: &Path, files: &[(&str, &str, usize)]) -> PathBuf {
    let root = dir.join("corpus");
    let mut manifest = HEADER.to_string();
    for (k, (file, class, size)) in files.iter().enumerate() {
        let d = data(k as u32 + 1, *size);
        let path = root.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &d).unwrap();
        let sha = hex::encode(&Sha256::digest(&d)[..8]);
        manifest += &format!("{file}\t{class}\ttest\t{size}\t0.000\t{sha}\tsynthetic\tCC0\n");
    }
    std::fs::write(root.join("MANIFEST.tsv"), manifest).unwrap();
    root
}

fn models() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../models/default")
}

fn run(bin: &str, args: &[&str]) -> (Output, String, String) {
    let out = Command::new(bin).args(args).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (out, stdout, stderr)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// No cell or word of `text` is a NaN, an infinity or a ratio of 0 (three
/// decimals, as ratios are printed; a saving of 0.00 % can be real).
fn assert_no_bogus_numbers(what: &str, text: &str) {
    for token in text.split(|c: char| c.is_whitespace() || "|,:()[]{}\"".contains(c)) {
        let t = token.trim_end_matches('%');
        let lower = t.to_ascii_lowercase();
        assert!(
            !matches!(
                lower.as_str(),
                "nan" | "inf" | "-inf" | "+inf" | "infinity" | "-nan"
            ),
            "{what}: `{token}` in\n{text}"
        );
        assert!(
            !matches!(t, "0.000" | "-0.000"),
            "{what}: a zero figure `{token}` in\n{text}"
        );
    }
}

fn assert_failed(what: &str, out: &Output, stderr: &str, needle: &str) {
    assert!(!out.status.success(), "{what} succeeded; stderr:\n{stderr}");
    assert!(
        stderr.contains(needle),
        "{what}: stderr does not say `{needle}`:\n{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{what} panicked:\n{stderr}");
}

const EVAL: &str = env!("CARGO_BIN_EXE_eval");
const TRAIN: &str = env!("CARGO_BIN_EXE_train");
const MAGBDI: &str = env!("CARGO_BIN_EXE_magbdi");
const DPC_EVAL: &str = env!("CARGO_BIN_EXE_dpc_eval");

#[test]
fn eval_refuses_a_corpus_of_evaluation_classes_only() {
    let t = TempDir::new("eval-evalonly");
    let c = corpus(
        &t,
        &[
            ("mixed/m.bin", "mixed", 1280),
            ("workload/w.bin", "workload", 1280),
        ],
    );
    let out_dir = t.join("out");
    let (out, _, stderr) = run(
        EVAL,
        &[
            "--corpus",
            s(&c),
            "--models",
            s(&models()),
            "--out",
            s(&out_dir),
        ],
    );
    assert_failed("eval", &out, &stderr, "no trainable application");
    assert!(stderr.contains("mixed/workload"), "{stderr}");
    assert!(!out_dir.exists(), "eval wrote a report for nothing");
}

#[test]
fn eval_refuses_a_missing_corpus_and_a_manifest_without_files() {
    let t = TempDir::new("eval-nofiles");
    let missing = t.join("no-such-corpus");
    let (out, _, stderr) = run(EVAL, &["--corpus", s(&missing)]);
    assert_failed("eval (missing corpus)", &out, &stderr, "does not exist");

    let empty = t.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let (out, _, stderr) = run(EVAL, &["--corpus", s(&empty)]);
    assert_failed("eval (no manifest)", &out, &stderr, "MANIFEST.tsv");

    std::fs::write(empty.join("MANIFEST.tsv"), HEADER).unwrap();
    let (out, _, stderr) = run(EVAL, &["--corpus", s(&empty)]);
    assert_failed("eval (no files)", &out, &stderr, "corpus is empty");
}

#[test]
fn eval_reports_empty_groups_as_such() {
    // Two trainable applications: none is unseen (every 4th is), and there
    // is no mixed/workload file, so both of those groups are empty.
    let t = TempDir::new("eval-groups");
    let c = corpus(
        &t,
        &[("int32/a.bin", "int32", 1280), ("fp32/b.bin", "fp32", 1280)],
    );
    let out_dir = t.join("out");
    let (out, stdout, stderr) = run(
        EVAL,
        &[
            "--corpus",
            s(&c),
            "--models",
            s(&models()),
            "--out",
            s(&out_dir),
            "--name",
            "r",
        ],
    );
    assert!(out.status.success(), "eval failed:\n{stderr}");
    let unseen = stdout
        .lines()
        .find(|l| l.starts_with("unseen"))
        .unwrap_or_else(|| panic!("no unseen line in\n{stdout}"));
    assert!(unseen.contains("no blocks"), "{unseen}");
    assert_no_bogus_numbers("eval stdout", &stdout);

    let md = std::fs::read_to_string(out_dir.join("r.md")).unwrap();
    assert_no_bogus_numbers("eval report", &md);
    let row = md
        .lines()
        .find(|l| l.starts_with("| mixed + workload | 0 | 0 |"))
        .unwrap_or_else(|| panic!("no empty mixed + workload row in\n{md}"));
    assert!(row.contains("| — |"), "{row}");

    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("r.json")).unwrap()).unwrap();
    let groups = json["groups"].as_array().unwrap();
    let unseen = groups
        .iter()
        .find(|g| g["name"] == "unseen")
        .expect("unseen group in the JSON");
    assert_eq!(unseen["apps"], 0);
    assert!(unseen["lz4_ratio"].is_null(), "{unseen}");
    assert!(unseen["zstd_ratio"].is_null(), "{unseen}");
    let overall = groups
        .iter()
        .find(|g| g["name"] == "overall (seen + unseen)")
        .unwrap();
    assert!(overall["zstd_ratio"].as_f64().unwrap() > 0.0);
    assert!(out_dir.join("r.png").is_file());
}

/// A corpus never trained on: held out (automatically without a manifest,
/// or with `--held-out`), every block is evaluated and SC2's table comes
/// from `--sc2-corpus`, which the held-out mode requires.
#[test]
fn eval_held_out_scores_every_block_and_trains_sc2_elsewhere() {
    let t = TempDir::new("eval-heldout");
    let train = corpus(
        &t,
        &[
            ("int32/a.bin", "int32", 12_800),
            ("fp32/b.bin", "fp32", 12_800),
        ],
    );
    // Unlabelled: a directory of files without MANIFEST.tsv; 1280 and 640
    // bytes are 40 and 20 blocks, all of them evaluated.
    let raw = t.join("raw");
    std::fs::create_dir_all(raw.join("sub")).unwrap();
    std::fs::write(raw.join("x.bin"), data(7, 1280)).unwrap();
    std::fs::write(raw.join("sub/y.bin"), data(8, 640)).unwrap();

    let (out, _, stderr) = run(EVAL, &["--corpus", s(&raw), "--models", s(&models())]);
    assert_failed(
        "eval (held out, no --sc2-corpus)",
        &out,
        &stderr,
        "--sc2-corpus",
    );
    assert!(stderr.contains("no MANIFEST.tsv"), "{stderr}");

    let out_dir = t.join("out");
    let args = |c: &Path, extra: &[&'static str]| {
        let mut v: Vec<String> = [
            "--corpus",
            s(c),
            "--models",
            s(&models()),
            "--sc2-corpus",
            s(&train),
            "--out",
            s(&out_dir),
        ]
        .iter()
        .map(|x| x.to_string())
        .collect();
        v.extend(extra.iter().map(|x| x.to_string()));
        v
    };
    let a = args(&raw, &["--name", "raw"]);
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let (out, stdout, stderr) = run(EVAL, &a);
    assert!(out.status.success(), "eval (held out) failed:\n{stderr}");
    assert!(stdout.contains("60 blocks"), "{stdout}");
    let md = std::fs::read_to_string(out_dir.join("raw.md")).unwrap();
    assert!(md.contains("**Mode: held out.**"), "{md}");
    assert!(md.contains("every block of every file"), "{md}");
    assert!(
        md.contains("from 640 training blocks (5120 words) of the corpus"),
        "{md}"
    );
    assert!(!md.contains("Against the paper"), "{md}");
    assert_no_bogus_numbers("held-out report", &md);
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("raw.json")).unwrap()).unwrap();
    let apps = json["evaluation"]["apps"].as_array().unwrap();
    assert_eq!(apps.len(), 2);
    for a in apps {
        assert_eq!(a["role"], "unseen", "{a}");
        assert_eq!(a["class"], "unlabelled", "{a}");
    }

    // A labelled corpus: the paper split scores 20 % of the seen
    // applications' blocks; --held-out scores all of them.
    let a = args(&train, &["--name", "paper"]);
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let (out, stdout, stderr) = run(EVAL, &a);
    assert!(out.status.success(), "eval (paper) failed:\n{stderr}");
    assert!(stdout.contains("160 blocks"), "{stdout}");
    let md = std::fs::read_to_string(out_dir.join("paper.md")).unwrap();
    assert!(md.contains("**Mode: paper split.**"), "{md}");
    let a = args(&train, &["--name", "all", "--held-out"]);
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let (out, stdout, stderr) = run(EVAL, &a);
    assert!(out.status.success(), "eval --held-out failed:\n{stderr}");
    assert!(stdout.contains("800 blocks"), "{stdout}");
}

#[test]
fn train_refuses_a_corpus_of_evaluation_classes_only() {
    let t = TempDir::new("train-evalonly");
    let c = corpus(
        &t,
        &[
            ("mixed/m.bin", "mixed", 1280),
            ("workload/w.bin", "workload", 1280),
        ],
    );
    let out_dir = t.join("set");
    let (out, _, stderr) = run(TRAIN, &["--corpus", s(&c), "--out", s(&out_dir)]);
    assert_failed("train", &out, &stderr, "no trainable application");
    assert!(!out_dir.exists(), "train wrote a model set from nothing");

    let (out, _, stderr) = run(
        TRAIN,
        &["--corpus", s(&t.join("none")), "--out", s(&out_dir)],
    );
    assert_failed("train (missing corpus)", &out, &stderr, "does not exist");
}

#[test]
fn train_reports_empty_test_sets_as_such() {
    let t = TempDir::new("train-groups");
    let c = corpus(
        &t,
        &[("int32/a.bin", "int32", 3200), ("fp32/b.bin", "fp32", 3200)],
    );
    let out_dir = t.join("set");
    let (out, _, stderr) = run(
        TRAIN,
        &[
            "--corpus",
            s(&c),
            "--out",
            s(&out_dir),
            "--groups",
            "int32,fp32",
            "--depth-sweep",
            "2",
        ],
    );
    assert!(out.status.success(), "train failed:\n{stderr}");
    assert!(stderr.contains("unseen: no blocks"), "{stderr}");
    assert!(stderr.contains("mixed/workload: no blocks"), "{stderr}");
    let summary = stderr
        .lines()
        .find(|l| l.contains("report.md:"))
        .unwrap_or_else(|| panic!("no summary line in\n{stderr}"));
    assert_no_bogus_numbers("train summary", summary);
    let md = std::fs::read_to_string(out_dir.join("report.md")).unwrap();
    assert_no_bogus_numbers("train report", &md);
    assert!(md.contains("| unseen | 0 | — |"), "{md}");
    let sweep = md
        .split("## Compression ratio vs tree depth")
        .nth(1)
        .unwrap_or_else(|| panic!("no depth sweep in\n{md}"))
        .lines()
        .find(|l| l.starts_with("| 2 |"))
        .unwrap_or_else(|| panic!("no depth-2 row in\n{md}"));
    assert!(sweep.contains("| — |"), "{sweep}");
}

#[test]
fn magbdi_eval_lists_a_file_without_blocks_and_averages_the_rest() {
    let t = TempDir::new("magbdi-short");
    let c = corpus(
        &t,
        &[
            ("int32/a.bin", "int32", 2048),
            ("mixed/short.bin", "mixed", 64),
        ],
    );
    let prefix = t.join("out/mag");
    let (out, stdout, stderr) = run(MAGBDI, &["eval", "--corpus", s(&c), "--out", s(&prefix)]);
    assert!(out.status.success(), "magbdi eval failed:\n{stderr}");
    assert!(
        stderr.contains("short: no whole 128-byte block"),
        "{stderr}"
    );
    let md = std::fs::read_to_string(t.join("out/mag.md")).unwrap();
    assert!(stdout.starts_with(&md), "{stdout}");
    assert_no_bogus_numbers("magbdi report", &md);
    assert!(md.contains("| short | mixed | no blocks |"), "{md}");
    assert!(
        md.contains("; 1 more without a whole 128-byte block, listed below but left out"),
        "{md}"
    );
    let json = std::fs::read_to_string(t.join("out/mag.json")).unwrap();
    let j: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert!(j["summary"]["BDI"]["raw_gm"].as_f64().unwrap() > 1.0);
}

#[test]
fn magbdi_eval_refuses_a_corpus_without_a_whole_block() {
    let t = TempDir::new("magbdi-none");
    let c = corpus(&t, &[("int32/a.bin", "int32", 96)]);
    let prefix = t.join("out/mag");
    let (out, _, stderr) = run(MAGBDI, &["eval", "--corpus", s(&c), "--out", s(&prefix)]);
    assert_failed("magbdi eval", &out, &stderr, "no whole 128-byte block");
    assert!(stderr.contains("nothing to evaluate"), "{stderr}");
    assert!(!t.join("out/mag.md").exists());
}

#[test]
fn dpc_eval_on_evaluation_classes_reports_them_and_blanks_the_rest() {
    // DPC and MAG-BDI train nothing: mixed/workload files are real data
    // to report on; the trainable groups are empty.
    let t = TempDir::new("dpc-evalonly");
    let c = corpus(
        &t,
        &[
            ("mixed/m.bin", "mixed", 1024),
            ("workload/w.bin", "workload", 1024),
            ("workload/short.bin", "workload", 64),
        ],
    );
    let out_dir = t.join("out");
    let (out, stdout, stderr) = run(
        DPC_EVAL,
        &[
            "--corpus",
            s(&c),
            "--models",
            s(&models()),
            "--out",
            s(&out_dir),
        ],
    );
    assert!(out.status.success(), "dpc_eval failed:\n{stderr}");
    assert_no_bogus_numbers("dpc_eval stdout", &stdout);
    let md = std::fs::read_to_string(out_dir.join("dpc.md")).unwrap();
    assert_no_bogus_numbers("dpc_eval report", &md);
    let seen = md
        .lines()
        .find(|l| l.starts_with("| seen | 0 | 0 |"))
        .unwrap_or_else(|| panic!("no empty seen row in\n{md}"));
    assert!(seen.ends_with("| — |"), "{seen}");
    assert!(md.contains("| mixed + workload | 3 | 16 |"), "{md}");
    let json = std::fs::read_to_string(out_dir.join("dpc.json")).unwrap();
    let j: serde_json::Value = serde_json::from_str(&json).unwrap();
    let seen = j["ratios"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["group"] == "seen")
        .unwrap();
    assert!(seen["ratio"][0].is_null(), "{seen}");
    assert!(!json.to_ascii_lowercase().contains("nan"));
}

#[test]
fn dpc_eval_refuses_a_corpus_without_a_whole_block() {
    let t = TempDir::new("dpc-none");
    let c = corpus(
        &t,
        &[("int32/a.bin", "int32", 96), ("mixed/m.bin", "mixed", 32)],
    );
    let out_dir = t.join("out");
    let (out, _, stderr) = run(
        DPC_EVAL,
        &[
            "--corpus",
            s(&c),
            "--models",
            s(&models()),
            "--out",
            s(&out_dir),
        ],
    );
    assert_failed(
        "dpc_eval",
        &out,
        &stderr,
        "no file holds a whole 128-byte block",
    );
    assert!(!out_dir.exists());
}

/// The `wrote PATH` lines of a tool's standard output.
fn wrote_lines(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .filter_map(|l| l.strip_prefix("wrote "))
        .map(str::to_string)
        .collect()
}

#[test]
fn magbdi_eval_writes_under_build_by_default_and_names_every_file() {
    let t = TempDir::new("magbdi-default-out");
    let c = corpus(&t, &[("int32/a.bin", "int32", 4096)]);
    let work = t.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let out = Command::new(MAGBDI)
        .args(["eval", "--corpus", s(&c)])
        .current_dir(&work)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!work.join("docs").exists(), "wrote into docs/");
    let want: Vec<String> = ["md", "json", "summary.png", "apps.png", "sizes.png"]
        .iter()
        .map(|e| {
            let sep = if e.ends_with("png") { "-" } else { "." };
            format!("build/eval/mag-bdi{sep}{e}")
        })
        .collect();
    assert_eq!(wrote_lines(&stdout), want, "{stdout}");
    for f in &want {
        assert!(work.join(f).is_file(), "{f}");
    }
    // every block by default, and the report names the command that wrote it
    let md = std::fs::read_to_string(work.join("build/eval/mag-bdi.md")).unwrap();
    assert!(md.contains("every 128-byte block of each"), "{md}");
    assert!(
        md.contains(&format!(
            "cargo run --release -p modeling --bin magbdi -- eval --corpus {}\n",
            s(&c)
        )),
        "{md}"
    );
    // nothing is left beside the files but the files
    let mut names: Vec<String> = std::fs::read_dir(work.join("build/eval"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names.len(), 5, "{names:?}");
}

#[test]
fn dpc_eval_names_every_file_and_the_command_that_wrote_it() {
    let t = TempDir::new("dpc-outputs");
    let c = corpus(&t, &[("int32/a.bin", "int32", 4096)]);
    let out_dir = t.join("out");
    let (out, stdout, stderr) = run(
        DPC_EVAL,
        &[
            "--corpus",
            s(&c),
            "--models",
            s(&models()),
            "--out",
            s(&out_dir),
        ],
    );
    assert!(out.status.success(), "{stderr}");
    let want: Vec<String> = ["dpc.md", "dpc.json", "dpc-filtering.png"]
        .iter()
        .map(|f| out_dir.join(f).display().to_string())
        .collect();
    assert_eq!(wrote_lines(&stdout), want, "{stdout}");
    let md = std::fs::read_to_string(out_dir.join("dpc.md")).unwrap();
    assert!(
        md.contains(&format!(
            "cargo run --release -p modeling --bin dpc_eval -- --corpus {} --models {} --out {}\n",
            s(&c),
            s(&models()),
            s(&out_dir)
        )),
        "{md}"
    );
    // the same command writes the same bytes (no run times in the files)
    let first: Vec<Vec<u8>> = ["dpc.md", "dpc.json"]
        .iter()
        .map(|f| std::fs::read(out_dir.join(f)).unwrap())
        .collect();
    let (out, _, stderr) = run(
        DPC_EVAL,
        &[
            "--corpus",
            s(&c),
            "--models",
            s(&models()),
            "--out",
            s(&out_dir),
        ],
    );
    assert!(out.status.success(), "{stderr}");
    for (f, a) in ["dpc.md", "dpc.json"].iter().zip(first) {
        assert_eq!(std::fs::read(out_dir.join(f)).unwrap(), a, "{f}");
    }
}

#[test]
fn eval_writes_the_same_bytes_for_the_same_command() {
    let t = TempDir::new("eval-repeat");
    let c = corpus(
        &t,
        &[
            ("int32/a.bin", "int32", 8192),
            ("int32/b.bin", "int32", 8192),
        ],
    );
    let out_dir = t.join("out");
    let set = models();
    let args = ["--corpus", s(&c), "--models", s(&set), "--out", s(&out_dir)];
    let mut runs = Vec::new();
    for _ in 0..2 {
        let (out, stdout, stderr) = run(EVAL, &args);
        assert!(out.status.success(), "{stderr}");
        assert_eq!(wrote_lines(&stdout).len(), 3, "{stdout}");
        runs.push(
            ["mpc-vs-baselines.md", "mpc-vs-baselines.json"]
                .iter()
                .map(|f| std::fs::read(out_dir.join(f)).unwrap())
                .collect::<Vec<_>>(),
        );
    }
    assert!(runs[0] == runs[1], "eval wrote different bytes on a rerun");
}
