//! `mpc program` and `mpc ratio --online K` (docs/spec/program-slots.md).

use golden::mpc::program::{Form, ProgrammedSet, SlotImage};
use golden::mpc::ModelSet;

mod common;
use common::{data, mpc, root};

/// The number after `"key":` in `json`, after `from`.
fn number_after(json: &str, from: &str, key: &str) -> f64 {
    let start = json
        .find(from)
        .unwrap_or_else(|| panic!("{from} in {json}"));
    let rest = &json[start..];
    let k = format!("\"{key}\":");
    let at = rest.find(&k).unwrap_or_else(|| panic!("{key} in {rest}")) + k.len();
    let end = rest[at..]
        .find(|c: char| c != '.' && c != '-' && !c.is_ascii_digit())
        .unwrap_or(rest.len() - at);
    rest[at..at + end].parse().expect("a number")
}

#[test]
fn program_writes_an_image_that_loads_and_fits_the_set() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = data(dir.path(), 2048);
    let img = dir.path().join("slots.img");
    let run = |extra: &[&str]| {
        mpc()
            .args([
                "program",
                "--model",
                "models/default",
                "--form",
                "stride-part",
            ])
            .args(["--slots", "2", "--sample-bytes", "32768", "--output"])
            .arg(&img)
            .args(extra)
            .arg(&file)
            .output()
            .expect("mpc runs")
    };
    let out = run(&[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let msg = String::from_utf8_lossy(&out.stderr);
    assert!(msg.contains("s per MiB"), "{msg}");
    let bytes = std::fs::read(&img).expect("image written");
    let form = Form::by_name("stride-part").expect("form");
    assert_eq!(bytes.len(), form.image_bytes(2));
    let image = SlotImage::load(&bytes).expect("the image loads");
    assert!(image.loaded() >= 1, "this data needs a slot");
    let set = ModelSet::load(&root().join("models/default")).expect("set");
    ProgrammedSet::new(&set, &image).expect("the image fits models/default");
    // an existing output needs --force; the spread sample writes too
    let again = run(&[]);
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("--force"));
    assert!(run(&["--force", "--spread"]).status.success());
    assert!(SlotImage::load(&std::fs::read(&img).expect("image")).is_ok());
    // a form that does not exist is named with the list of forms
    let bad = mpc()
        .args([
            "program",
            "--model",
            "models/default",
            "--form",
            "nope",
            "--slots",
            "1",
        ])
        .arg("--output")
        .arg(dir.path().join("x.img"))
        .arg(&file)
        .output()
        .expect("mpc runs");
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("stride-colpart"));
}

#[test]
fn ratio_online_prints_both_ratios_per_file_and_overall() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = data(dir.path(), 2048);
    let out = mpc()
        .args([
            "ratio",
            "--model",
            "models/default",
            "--online",
            "2",
            "--form",
            "stride-colpart",
        ])
        .args(["--json", "--verify"])
        .arg(&file)
        .output()
        .expect("mpc runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json = String::from_utf8_lossy(&out.stdout).to_string();
    assert_eq!(json.lines().count(), 1, "one object: {json}");
    let hw = number_after(&json, "\"overall\"", "hard_wired");
    let pr = number_after(&json, "\"overall\"", "programmed");
    assert!(hw > 1.0 && pr > hw, "hard-wired {hw}, programmed {pr}");
    assert_eq!(number_after(&json, "\"files\"", "train_blocks"), 512.0);
    assert_eq!(number_after(&json, "\"files\"", "test_blocks"), 1536.0);
    // the text form has the same overall figures
    let text = mpc()
        .args([
            "ratio",
            "--model",
            "models/default",
            "--online",
            "2",
            "--form",
            "stride-colpart",
        ])
        .arg(&file)
        .output()
        .expect("mpc runs");
    let t = String::from_utf8_lossy(&text.stdout);
    let last = t.lines().last().unwrap_or("");
    assert!(last.contains("overall"), "{t}");
    assert!(
        last.contains(&format!("{hw:.3}")) && last.contains(&format!("{pr:.3}")),
        "{t}"
    );
    // more slots than an image holds
    let bad = mpc()
        .args(["ratio", "--model", "models/default", "--online", "65"])
        .arg(&file)
        .output()
        .expect("mpc runs");
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("K = 65"));
}
