//! The MPC units of every kind of model set the format allows, through
//! `verilator --lint-only -Wall`: each custom model present or absent,
//! zero-run and exact selection, one predictor and several; the compressor
//! at both depths (the 4-stage one registers the custom-model flags and
//! the scores between its stages 1 and 2), the decompressor at its default
//! depth. The shipped sets have both custom models; a set without them once
//! generated a constant comparison (`s1_choice_id >= 0`), and a
//! one-predictor exact-selection set without same-words a score nothing
//! read.
//!
//! Missing tools are reported and skipped, or fail the test under
//! `MPCGEN_REQUIRE_TOOLS=1` (`hdl::tools`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use golden::mpc::{ModelSet, Selection};
use hdl::mpc::{generate, header_lines, Options, Unit};

const INSTALL_HINT: &str = "install with: apt-get install verilator";

/// One unit of one set to generate and lint.
struct Job {
    label: String,
    set: ModelSet,
    unit: Unit,
    opts: Options,
}

/// The set of `text`, cut to its first `predictors` predictors, with the
/// given custom models and selection.
fn variant(
    text: &str,
    predictors: usize,
    zero_block: bool,
    same_words: bool,
    selection: Selection,
) -> ModelSet {
    let mut set = ModelSet::parse(text, "variant").expect("shipped set loads");
    set.predictors.truncate(predictors);
    set.custom.zero_block = zero_block;
    set.custom.same_words = same_words;
    set.selection = selection;
    set
}

fn jobs() -> Vec<Job> {
    // two predictors are enough for a selection among them (and cost
    // less to lint than three)
    let bases = [
        ("2p", 2, include_str!("../../models/example/model.toml")),
        ("1p", 1, include_str!("../../models/int32/model.toml")),
    ];
    let mut jobs = Vec::new();
    for (base, predictors, text) in bases {
        for zero_block in [false, true] {
            for same_words in [false, true] {
                for (sel, selection) in [("zr", Selection::ZeroRun), ("ex", Selection::Exact)] {
                    let set = variant(text, predictors, zero_block, same_words, selection);
                    let name = format!("{base}-z{}-s{}-{sel}", zero_block as u8, same_words as u8);
                    for stages in hdl::mpc::COMPRESSOR_STAGES {
                        jobs.push(Job {
                            label: format!("{name}-c{stages}"),
                            set: set.clone(),
                            unit: Unit::Compressor,
                            opts: Options::with_stages(stages, 4).expect("depths"),
                        });
                    }
                    // the decompressor does not depend on the selection rule
                    if selection == Selection::ZeroRun {
                        jobs.push(Job {
                            label: format!("{name}-d"),
                            set: set.clone(),
                            unit: Unit::Decompressor,
                            opts: Options::default(),
                        });
                    }
                }
            }
        }
    }
    jobs
}

/// Output and error of `cmd`, or why it did not run; `None` when it
/// succeeded and printed nothing.
fn complaint(cmd: &mut Command) -> Option<String> {
    match cmd.output() {
        Ok(o) if o.status.success() && o.stdout.is_empty() && o.stderr.is_empty() => None,
        Ok(o) => Some(format!(
            "{:?}: {}{}",
            o.status,
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )),
        Err(e) => Some(format!("could not run {cmd:?}: {e}")),
    }
}

/// Generate, write and lint one job: the problem found, if any.
fn check(job: &Job, root: &Path) -> Option<String> {
    let header = header_lines(&job.set, "variant", "-", "mpc_variants_lint");
    let files = match generate(&job.set, &[job.unit], &job.opts, &header) {
        Ok((files, _)) => files,
        Err(e) => return Some(format!("{}: generating: {e}", job.label)),
    };
    let dir = root.join(&job.label);
    let paths: Vec<PathBuf> = match hdl::ir::write_files(&dir, &files) {
        Ok(p) => p,
        Err(e) => return Some(format!("{}: writing {}: {e}", job.label, dir.display())),
    };
    complaint(
        Command::new("verilator")
            .args(["--lint-only", "-Wall"])
            .args(&paths),
    )
    .map(|c| format!("{}: verilator --lint-only -Wall: {c}", job.label))
}

#[test]
fn every_custom_model_and_selection_variant_is_lint_clean() {
    if !hdl::tools::available(
        &["verilator"],
        "every_custom_model_and_selection_variant_is_lint_clean",
        INSTALL_HINT,
    ) {
        return;
    }
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mpc_variants_lint");
    let _ = std::fs::remove_dir_all(&root);
    let jobs = jobs();
    let next = AtomicUsize::new(0);
    let problems = Mutex::new(Vec::new());
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get().min(4));
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| {
                while let Some(job) = jobs.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let found = check(job, &root);
                    problems
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .extend(found);
                }
            });
        }
    });
    let problems = problems.into_inner().unwrap_or_else(|e| e.into_inner());
    assert!(
        problems.is_empty(),
        "{} of {} units:\n{}",
        problems.len(),
        jobs.len(),
        problems.join("\n")
    );
}
