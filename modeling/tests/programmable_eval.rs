//! `programmable_eval` on hand-made runs: roles from the set's notes, the
//! gains and the target check of the summary, the exact-selection section
//! and both charts.

use std::path::Path;
use std::process::Command;

use golden::mpc::program::FORMS;

/// One run's JSON: an unseen file and a mixed file with the given bits.
fn run_json(unseen: (u64, u64), mixed: (u64, u64)) -> String {
    let file = |name: &str, (hw, pr): (u64, u64)| {
        format!(
            "{{\"file\":\"c/{name}\",\"blocks\":4,\"train_blocks\":1,\"test_blocks\":3,\
             \"slots_loaded\":1,\"hard_wired\":1.0,\"programmed\":1.0,\"hard_wired_bits\":{hw},\
             \"programmed_bits\":{pr},\"original_bits\":76800,\"train_seconds\":0.001}}"
        )
    };
    format!(
        "{{\"model\":\"default\",\"form\":\"x\",\"k\":1,\"files\":[{},{}],\
         \"overall\":{{\"hard_wired\":1.0,\"programmed\":1.0}},\"train_seconds_per_mib\":0.1}}",
        file("int32/eso-fits-i32.bin", unseen),
        file("mixed/postgres-pgbench-memory.bin", mixed)
    )
}

#[test]
fn report_sums_roles_and_checks_the_targets() {
    let dir = tempfile::tempdir().expect("tempdir");
    for f in FORMS.iter() {
        // `full` gains 20% on both files; every other form loses 1% on
        // the mixed file
        let j = if f.name == "full" {
            run_json((60000, 50000), (60000, 50000))
        } else {
            run_json((60000, 50000), (60000, 60606))
        };
        std::fs::write(dir.path().join(format!("{}-1.json", f.name)), j).expect("write");
    }
    std::fs::write(
        dir.path().join("exact-stride-colpart-1.json"),
        run_json((59000, 40000), (58000, 45000)),
    )
    .expect("write");
    let out = dir.path().join("report");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let st = Command::new(env!("CARGO_BIN_EXE_programmable_eval"))
        .current_dir(&root)
        .args(["--model", "models/default", "--ks", "1", "--dir"])
        .arg(dir.path())
        .arg("--out")
        .arg(&out)
        .output()
        .expect("runs");
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    let md = std::fs::read_to_string(out.with_extension("md")).expect("report");
    let row = |form: &str| {
        md.lines()
            .find(|l| l.starts_with(&format!("| {form} | 1 |")))
            .unwrap_or_else(|| panic!("no row for {form}:\n{md}"))
            .to_string()
    };
    let full = row("full");
    assert!(full.contains("+20.00%"), "{full}");
    assert!(full.ends_with("| met |"), "{full}");
    let lib = row("stride-lib");
    assert!(lib.contains("-1.00%"), "{lib}");
    assert!(lib.ends_with("| not met |"), "{lib}");
    // the exact section: against the zero-run hard-wired bits
    assert!(md.contains("## With the exact selection rule"), "{md}");
    let ex = md
        .lines()
        .filter(|l| l.starts_with("| stride-colpart | 1 |"))
        .nth(1)
        .expect("exact row");
    assert!(ex.contains("+50.00%"), "{ex}");
    assert!(out.with_extension("png").is_file());
    assert!(dir.path().join("report-training.png").is_file());
}

#[test]
fn a_missing_run_is_an_error_naming_the_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let st = Command::new(env!("CARGO_BIN_EXE_programmable_eval"))
        .current_dir(&root)
        .args(["--model", "models/default", "--ks", "1", "--dir"])
        .arg(dir.path())
        .arg("--out")
        .arg(dir.path().join("r"))
        .output()
        .expect("runs");
    assert!(!st.status.success());
    assert!(String::from_utf8_lossy(&st.stderr).contains("full-1.json"));
}
