//! The `fuzz` binary: saved regression inputs, the harness's own limits
//! (panics, memory, time) on deliberately misbehaving targets, replay of a
//! valid container and a valid slot image, a short clean run of the
//! slot-image target, and errors on bad arguments.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use bulk::stream::compress;
use bulk::{open_codec, CompressOptions, Engine};

const TARGETS: [&str; 5] = [
    "container-stream",
    "container-random",
    "model-loader",
    "block-decoders",
    "slot-image",
];

fn scratch(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("fuzz-cli-{name}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch dir");
    d
}

fn fuzz(args: &[&str], findings: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fuzz"))
        .args(args)
        .arg("--findings")
        .arg(findings)
        .output()
        .expect("runs the fuzz binary")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Every file in `regressions/<target>/` through its target's oracle and
/// limits (each in its own process).
#[test]
fn regression_inputs_pass_their_oracles() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("regressions");
    let findings = scratch("regressions");
    let mut ran = 0;
    let mut failures = Vec::new();
    for t in TARGETS {
        let dir = root.join(t);
        let n = std::fs::read_dir(&dir)
            .map(|rd| {
                rd.filter_map(|e| e.ok())
                    .filter(|e| e.path().extension().is_some_and(|x| x == "bin"))
                    .count()
            })
            .unwrap_or(0);
        if n == 0 {
            continue;
        }
        ran += n;
        let dir_s = dir.display().to_string();
        let o = fuzz(&["replay", t, &dir_s], &findings);
        if !o.status.success() {
            failures.push(text(&o));
        }
    }
    assert!(ran > 0, "no regression inputs under {}", root.display());
    assert!(
        failures.is_empty(),
        "regression inputs give findings:\n{}",
        failures.join("\n")
    );
}

#[test]
fn panics_are_caught_reported_and_saved() {
    let f = scratch("panic");
    let o = fuzz(&["selftest-panic", "--seconds", "5"], &f);
    let out = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains("panic@") && out.contains("selftest panic"),
        "{out}"
    );
    let saved: Vec<_> = std::fs::read_dir(f.join("selftest-panic"))
        .expect("findings saved")
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .collect();
    assert!(saved
        .iter()
        .any(|p| p.extension().is_some_and(|x| x == "bin")));
    let desc = saved
        .iter()
        .find(|p| p.extension().is_some_and(|x| x == "txt"))
        .expect("description");
    let line = std::fs::read_to_string(desc).expect("readable");
    assert_eq!(line.lines().count(), 1, "{line}");
    assert!(line.starts_with("panic@"), "{line}");
}

#[test]
fn memory_over_the_limit_and_over_the_cap_are_findings() {
    // 32 MiB limit: a 48 MiB input goes over it (measured in the worker),
    // a 200 MiB one over the 128 MiB cap (refused; the worker dies and the
    // supervisor reports it, then goes on with a new worker)
    let f = scratch("memory");
    let o = fuzz(
        &[
            "selftest-memory",
            "--seconds",
            "6",
            "--max-peak-mib",
            "32",
            "--keep-going",
        ],
        &f,
    );
    let out = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("memory@"), "{out}");
    assert!(out.contains("over the 32 MiB limit"), "{out}");
    assert!(out.contains("allocation refused"), "{out}");
    assert!(out.contains("worker processes"), "{out}");
}

#[test]
fn inputs_over_the_time_limit_are_findings() {
    let f = scratch("time");
    let o = fuzz(
        &["selftest-time", "--seconds", "4", "--max-input-ms", "200"],
        &f,
    );
    let out = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("timeout"), "{out}");
    assert!(out.contains("limit is 200 ms"), "{out}");
}

#[test]
fn a_valid_container_replays_clean_on_both_container_targets() {
    let f = scratch("valid");
    let codec = open_codec("bdi", None, None).expect("bdi");
    let data: Vec<u8> = (0..1000u32).map(|i| (i % 7) as u8).collect();
    let opts = CompressOptions {
        chunk_blocks: 3,
        group_blocks: None,
        engine: Engine::Single,
        window: 2,
        original_len: Some(data.len() as u64),
    };
    let mut out = Vec::new();
    compress(codec.as_ref(), &data[..], &mut out, &opts, &|_| {}).expect("compress");
    let file = f.join("bdi--valid.bin");
    std::fs::write(&file, &out).expect("write");
    let file_s = file.display().to_string();
    for t in ["container-stream", "container-random"] {
        let o = fuzz(&["replay", t, &file_s], &f);
        assert!(o.status.success(), "{t}: {}", text(&o));
        assert!(text(&o).contains("pass"), "{}", text(&o));
    }
    // the same bytes under a tag no codec has: a finding, not a pass
    let bad = f.join("nosuchalgo--valid.bin");
    std::fs::write(&bad, &out).expect("write");
    let o = fuzz(
        &["replay", "container-random", &bad.display().to_string()],
        &f,
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("unreadable-input"), "{}", text(&o));
}

/// A slot image written by the golden writer replays clean under the tag
/// of the set it is made for; the same bytes under a tag naming no
/// shipped set are a finding.
#[test]
fn a_valid_slot_image_replays_clean() {
    use golden::mpc::program::{Form, Slot, SlotImage};
    use golden::mpc::ModelSet;
    let f = scratch("slot-image");
    let set = ModelSet::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../models/default"))
        .expect("shipped set");
    let form = Form::by_name("full").expect("form");
    let mut image = SlotImage::empty(&set, form, 3);
    image.slots[0] = Slot::from_predictor(&set.predictors[0], form, &set.predictors);
    image.slots[2] = Slot::from_predictor(&set.predictors[1], form, &set.predictors);
    assert_eq!(image.loaded(), 2);
    let file = f.join("slots-default--full-2-of-3.bin");
    std::fs::write(&file, image.to_bytes()).expect("write");
    let o = fuzz(&["replay", "slot-image", &file.display().to_string()], &f);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("pass"), "{}", text(&o));
    let bad = f.join("slots-nosuchset--full.bin");
    std::fs::write(&bad, image.to_bytes()).expect("write");
    let o = fuzz(&["replay", "slot-image", &bad.display().to_string()], &f);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("unreadable-input"), "{}", text(&o));
}

/// The slot-image target runs inputs under the harness's limits with no
/// finding.
#[test]
fn the_slot_image_target_runs_clean() {
    let f = scratch("slot-image-run");
    let o = fuzz(&["slot-image", "--seconds", "3", "--no-corpus"], &f);
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    let runs: u64 = out
        .split("slot-image: ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert!(runs >= 100, "{out}");
    assert!(out.contains(", 0 findings"), "{out}");
}

#[test]
fn bad_arguments_are_clear_errors() {
    let f = scratch("args");
    let o = fuzz(&["no-such-target", "--seconds", "1"], &f);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o).contains("unknown target `no-such-target`"),
        "{}",
        text(&o)
    );
    let o = fuzz(&["all", "--seconds", "0"], &f);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("--seconds 0"), "{}", text(&o));
    let o = fuzz(
        &["model-loader", "--seconds", "1", "--max-peak-mib", "0"],
        &f,
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("--max-peak-mib 0"), "{}", text(&o));
    let o = fuzz(&["replay", "model-loader", "/nonexistent/x--y.bin"], &f);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("/nonexistent/x--y.bin"), "{}", text(&o));
}

/// A corpus named on the command line must be usable: a missing
/// directory, one without a data file and one whose only file is empty
/// are errors before any target runs; `--corpus` with `--no-corpus` is
/// refused; a corpus with data runs.
#[test]
fn a_named_corpus_that_cannot_be_used_is_an_error() {
    let f = scratch("corpus");
    let empty = f.join("empty");
    std::fs::create_dir_all(&empty).expect("mkdir");
    let hollow = f.join("hollow");
    std::fs::create_dir_all(hollow.join("int32")).expect("mkdir");
    std::fs::write(hollow.join("int32/a.bin"), b"").expect("write");
    for dir in [f.join("missing"), empty, hollow] {
        let d = dir.display().to_string();
        for target in ["block-decoders", "all"] {
            let o = fuzz(&[target, "--seconds", "1", "--corpus", &d], &f);
            let out = text(&o);
            assert_eq!(o.status.code(), Some(2), "{target} --corpus {d}: {out}");
            assert!(out.contains(&d) && !out.contains("inputs in"), "{out}");
        }
    }
    let o = fuzz(
        &["all", "--seconds", "1", "--corpus", "x", "--no-corpus"],
        &f,
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let ok = f.join("ok");
    std::fs::create_dir_all(ok.join("int32")).expect("mkdir");
    let data: Vec<u8> = (0..4096u32).map(|i| (i / 3) as u8).collect();
    std::fs::write(ok.join("int32/a.bin"), data).expect("write");
    let d = ok.display().to_string();
    let o = fuzz(&["block-decoders", "--seconds", "1", "--corpus", &d], &f);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("block-decoders: "), "{}", text(&o));
}

/// A memory finding names the library function and source line that
/// allocated, so the build `make test` uses must carry enough debug
/// information for backtraces to resolve the workspace's frames.
#[test]
fn memory_findings_name_the_allocating_library_line() {
    let f = scratch("site");
    let model = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../models/default/model.toml"),
    )
    .expect("shipped model");
    // a 400 KB array of 200,000 integers: a few MiB once parsed
    let ones = vec!["1"; 200_000].join(",");
    let input = f.join("toml--big-array.bin");
    std::fs::write(&input, format!("{model}\n[extra]\nnote = [{ones}]\n")).expect("input");
    let o = fuzz(
        &[
            "replay",
            "model-loader",
            input.to_str().expect("utf-8 path"),
            "--max-peak-mib",
            "1",
        ],
        &f,
    );
    let out = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains("memory@golden::mpc::model::ModelSet::parse"),
        "{out}"
    );
    assert!(out.contains("(golden/src/mpc/model.rs:"), "{out}");
}
