//! The `train` binary refuses set and group names that are not safe file
//! names (the rule of the model-file loader) before it reads the corpus.

use std::path::Path;
use std::process::Command;

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
