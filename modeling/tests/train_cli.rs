//! The `train` binary refuses set and group names that are not safe file
//! names (the rule of the model-file loader) before it reads the corpus.

use std::path::Path;
use std::process::Command;

#[path = "../../golden/tests/common/mod.rs"]
mod common;

#[test]
fn unsafe_set_and_group_names_are_refused_before_reading_the_corpus() {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR")).join("train_cli");
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).expect("mkdir");
    let corpus = tmp.join("no-corpus");
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_train"))
            .arg("--corpus")
            .arg(&corpus)
            .args(args)
            .output()
            .expect("train runs");
        assert!(!out.status.success(), "{args:?} succeeded");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let out = tmp.join("out");
    let out_s = out.to_str().expect("utf-8 path");
    let err = run(&["--out", out_s, "--name", "../evil"]);
    assert!(
        err.contains("\"../evil\"") && err.contains("--name"),
        "{err}"
    );
    assert!(err.contains("not allowed"), "{err}");
    let err = run(&["--out", out_s, "--groups", "a/b=int32"]);
    assert!(err.contains("\"a/b\"") && err.contains("--groups"), "{err}");
    let dotted = tmp.join(".hidden");
    let err = run(&["--out", dotted.to_str().expect("utf-8 path")]);
    assert!(
        err.contains("\".hidden\"") && err.contains("--out"),
        "{err}"
    );
    assert!(!out.exists() && !dotted.exists(), "nothing is written");
}

/// Blocks of two kinds, `n` of them, as bytes.
fn two_kinds(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    let mut v = Vec::with_capacity(32 * n);
    for i in 0..n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        if i % 2 == 0 {
            let base = (x >> 8) as u8;
            v.extend((0..32u8).map(|j| base.wrapping_add(j)));
        } else {
            let v0 = (x >> 20) & 0xffff_ffff;
            for w in 0..4u64 {
                v.extend_from_slice(&(v0 + w * ((x >> 5) & 7)).to_le_bytes());
            }
        }
    }
    v
}

#[test]
fn unlabelled_directories_and_single_files_train_with_predictors() {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR")).join("train_cli_unlabelled");
    let _ = std::fs::remove_dir_all(&tmp);
    let data = tmp.join("data");
    std::fs::create_dir_all(data.join("sub")).expect("mkdir");
    // raw dumps and a .npy array (with 5 bytes past the last whole block)
    for (k, f) in ["a.bin", "b.bin", "sub/c.bin"].iter().enumerate() {
        std::fs::write(data.join(f), two_kinds(3000, k as u64 + 3)).expect("write");
    }
    let mut arr = two_kinds(3000, 9);
    arr.extend_from_slice(&[1, 2, 3, 4, 5]);
    let npy = common::npy_v1(
        &format!(
            "{{'descr': '|u1', 'fortran_order': False, 'shape': ({},), }}",
            arr.len()
        ),
        &arr,
    );
    std::fs::write(data.join("sub/d.npy"), &npy).expect("write");
    std::fs::write(data.join("notes.txt"), b"not data").expect("write");

    let corpus = datafiles::corpus::Corpus::open(&data).expect("open");
    assert!(corpus.unlabelled());
    let files: Vec<&str> = corpus.apps.iter().map(|a| a.entry.file.as_str()).collect();
    assert_eq!(files, ["a.bin", "b.bin", "sub/c.bin", "sub/d.npy"]);
    assert_eq!(
        corpus.apps[3].blocks.len(),
        3000,
        "the partial block is left out"
    );

    let train = |corpus: &Path, out: &Path, extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_train"))
            .arg("--corpus")
            .arg(corpus)
            .arg("--out")
            .arg(out)
            .args(["--cluster-sample", "4000"])
            .args(extra)
            .env_remove("RUST_BACKTRACE")
            .output()
            .expect("train runs")
    };
    // type groups need labels
    let o = Command::new(env!("CARGO_BIN_EXE_train"))
        .arg("--corpus")
        .arg(&data)
        .arg("--out")
        .arg(tmp.join("grouped"))
        .output()
        .expect("train runs");
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("no MANIFEST.tsv") && err.contains("--predictors"),
        "{err}"
    );
    assert!(!tmp.join("grouped").exists());
    // a directory, and one file
    for (corpus, out) in [
        (data.clone(), tmp.join("dir2")),
        (data.join("a.bin"), tmp.join("file2")),
    ] {
        let o = train(&corpus, &out, &["--predictors", "2"]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let set = golden::mpc::ModelSet::load(&out).expect("set loads");
        assert_eq!(set.predictors.len(), 2);
        assert!(out.join("report.md").exists());
    }
    // no data files at all
    let empty = tmp.join("empty");
    std::fs::create_dir_all(&empty).expect("mkdir");
    let o = train(&empty, &tmp.join("e"), &["--predictors", "2"]);
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("no .bin or .npy data files"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// A directory of two-kind dumps for `--predictors` training.
fn unlabelled_dir(dir: &Path) {
    std::fs::create_dir_all(dir).expect("mkdir");
    for (k, f) in ["a.bin", "b.bin"].iter().enumerate() {
        std::fs::write(dir.join(f), two_kinds(2000, k as u64 + 11)).expect("write");
    }
}

fn train_predictors(corpus: &Path, out: &Path, k: u32, extra: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_train"))
        .arg("--corpus")
        .arg(corpus)
        .arg("--out")
        .arg(out)
        .args(["--cluster-sample", "2000", "--predictors", &k.to_string()])
        .args(extra)
        .output()
        .expect("train runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn a_file_shorter_than_one_block_is_warned_about_and_skipped() {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR")).join("train_cli_short_file");
    let _ = std::fs::remove_dir_all(&tmp);
    let data = tmp.join("data");
    unlabelled_dir(&data);
    std::fs::write(data.join("tiny.bin"), [7u8; 5]).expect("write");
    std::fs::write(data.join("empty.bin"), []).expect("write");
    let out = tmp.join("set");
    let o = train_predictors(&data, &out, 2, &["--no-report"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    for (f, n) in [("tiny.bin", "5 bytes"), ("empty.bin", "0 bytes")] {
        assert!(
            err.lines().any(|l| l.starts_with("train: warning: ")
                && l.contains(f)
                && l.contains(n)
                && l.contains("shorter than one 32-byte block; skipped")),
            "no warning about {f}: {err}"
        );
    }
    assert!(golden::mpc::ModelSet::load(&out).is_ok());
    // the library: the same files skipped, the others loaded
    let corpus = datafiles::corpus::Corpus::open(&data).expect("open");
    let apps: Vec<&str> = corpus.apps.iter().map(|a| a.entry.file.as_str()).collect();
    assert_eq!(apps, ["a.bin", "b.bin"]);
    assert_eq!(corpus.skipped.len(), 2);
    // nothing but short files: an error that says so
    let short = tmp.join("short");
    std::fs::create_dir_all(&short).expect("mkdir");
    std::fs::write(short.join("x.bin"), [1u8; 31]).expect("write");
    let o = train_predictors(&short, &tmp.join("none"), 1, &[]);
    assert!(!o.status.success());
    assert!(
        text(&o.stderr).contains("holds a whole 32-byte block"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn retraining_with_fewer_predictors_removes_the_old_heatmaps_only() {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR")).join("train_cli_retrain");
    let _ = std::fs::remove_dir_all(&tmp);
    let data = tmp.join("data");
    unlabelled_dir(&data);
    let out = tmp.join("set");
    let o = train_predictors(&data, &out, 3, &[]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let stdout = text(&o.stdout);
    for f in [
        "model.toml",
        "report.md",
        "re-p0.png",
        "re-p1.png",
        "re-p2.png",
    ] {
        assert!(out.join(f).is_file(), "{f} missing");
        assert!(
            stdout
                .lines()
                .any(|l| l == format!("wrote {}", out.join(f).display())),
            "no `wrote` line for {f}: {stdout}"
        );
    }
    // a file of the user's, named like a heatmap of no predictor of the set
    std::fs::write(out.join("re-mine.png"), b"mine").expect("write");
    std::fs::write(out.join("notes.txt"), b"mine").expect("write");
    let o = train_predictors(&data, &out, 1, &[]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let mut names: Vec<String> = std::fs::read_dir(&out)
        .expect("list")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "model.toml",
            "notes.txt",
            "re-mine.png",
            "re-p0.png",
            "report.md"
        ]
    );
    assert!(
        text(&o.stdout).contains(&format!("removed {}", out.join("re-p2.png").display())),
        "{}",
        text(&o.stdout)
    );
    // --no-report: the report of the replaced set goes too
    let o = train_predictors(&data, &out, 1, &["--no-report"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(!out.join("report.md").exists());
    assert!(out.join("notes.txt").exists() && out.join("re-mine.png").exists());
}

#[test]
fn a_model_file_train_did_not_write_is_never_replaced() {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR")).join("train_cli_hand_made");
    let _ = std::fs::remove_dir_all(&tmp);
    let data = tmp.join("data");
    unlabelled_dir(&data);
    let out = tmp.join("example");
    std::fs::create_dir_all(&out).expect("mkdir");
    let hand =
        std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("../models/example/model.toml"))
            .expect("models/example");
    std::fs::write(out.join("model.toml"), &hand).expect("write");
    let o = train_predictors(&data, &out, 1, &[]);
    assert!(!o.status.success());
    assert!(
        text(&o.stderr).contains("was not written by train"),
        "{}",
        text(&o.stderr)
    );
    assert_eq!(std::fs::read(out.join("model.toml")).expect("read"), hand);
    assert_eq!(std::fs::read_dir(&out).expect("list").count(), 1);
}

#[test]
fn max_depth_is_four_for_type_groups_and_unbounded_with_predictors() {
    // the help says so, `unbounded` parses and 0 is refused with the rule
    let o = Command::new(env!("CARGO_BIN_EXE_train"))
        .arg("--help")
        .output()
        .expect("train runs");
    let help = text(&o.stdout);
    assert!(
        help.contains("default: 4 for the type") && help.contains("unbounded with --predictors"),
        "{help}"
    );
    let o = Command::new(env!("CARGO_BIN_EXE_train"))
        .args(["--corpus", "x", "--out", "y", "--max-depth", "0"])
        .output()
        .expect("train runs");
    assert!(!o.status.success());
    assert!(
        text(&o.stderr).contains("at least 1"),
        "{}",
        text(&o.stderr)
    );
    // an unlabelled run with a bound: every tree within it
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR")).join("train_cli_depth");
    let _ = std::fs::remove_dir_all(&tmp);
    let data = tmp.join("data");
    unlabelled_dir(&data);
    for (arg, bound) in [("2", Some(2)), ("unbounded", None)] {
        let out = tmp.join(format!("set-{arg}"));
        let o = train_predictors(&data, &out, 2, &["--no-report", "--max-depth", arg]);
        assert!(o.status.success(), "{}", text(&o.stderr));
        let set = golden::mpc::ModelSet::load(&out).expect("loads");
        if let Some(b) = bound {
            assert!(set.predictors.iter().all(|p| p.depth() <= b));
        }
    }
}

#[test]
fn progress_is_printed_as_plain_lines_when_stderr_is_not_a_terminal() {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR")).join("train_cli_progress");
    let _ = std::fs::remove_dir_all(&tmp);
    let data = tmp.join("data");
    unlabelled_dir(&data);
    let o = Command::new(env!("CARGO_BIN_EXE_train"))
        .arg("--corpus")
        .arg(&data)
        .arg("--out")
        .arg(tmp.join("set"))
        .args(["--cluster-sample", "2000", "--predictors", "2"])
        .env(datafiles::progress::INTERVAL_ENV, "0")
        .output()
        .expect("train runs");
    assert!(o.status.success(), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(
        err.lines()
            .any(|l| l.starts_with("train: ") && l.contains(" steps (") && l.contains("%)")),
        "no plain progress line: {err}"
    );
    assert!(!err.contains('\r') && !err.contains('\u{1b}'), "{err:?}");
}
