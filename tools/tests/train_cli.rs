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

    let corpus = tools::corpus::Corpus::open(&data).expect("open");
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
