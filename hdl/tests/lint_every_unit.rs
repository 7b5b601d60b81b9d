//! Every unit `gen` makes, at every depth it accepts, through
//! `verilator --lint-only -Wall` (any output or a failing status fails):
//!
//! * the MPC compressor at 3 and 4 stages and the decompressor at 4 to 8
//!   stages of `models/default` and `models/example`, and both units of
//!   every other shipped model set (found as `models/*/model.toml`) at
//!   their default depths (3 and 4 stages), or at every depth with
//!   `MPCGEN_EVERY_DEPTH=1` (`make every-depth`);
//! * both MAG-aware BDI units in the geometries of docs/hw/mag-bdi.md
//!   (128-byte blocks, 32- and 16-byte MAG, 4-byte bases), each with
//!   unsigned and signed deltas (one depth: latency 1);
//! * the five DPC units at the default geometry (docs/hw/dpc.md; one
//!   depth: latency 2);
//! * the MPC units of every kind of model set the format allows beyond
//!   the shipped ones: each custom model present or absent, zero-run and
//!   exact selection, one predictor and two; the compressor at both
//!   depths (the default depth only, unless `MPCGEN_EVERY_DEPTH=1`), the
//!   decompressor at its default depth. The shipped sets have
//!   both custom models; a set without them once generated a constant
//!   comparison (`s1_choice_id >= 0`), and a one-predictor
//!   exact-selection set without same-words a score nothing read.
//!
//! Units are generated through the library calls `gen` makes
//! (`hdl::family::header` and `generate`) and written under the test's
//! temporary directory. A unit whose Verilog, header comment aside, is
//! that of a unit already linted (the decompressors of two sets that
//! differ only in the selection rule) is not linted twice.
//!
//! Each unit is its own top module, so one Verilator run per unit; the
//! runs go one per core (at most 4) at a time. A missing `verilator` is
//! reported and skipped, or fails the test under `MPCGEN_REQUIRE_TOOLS=1`
//! (`hdl::prereq`).

use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use golden::dpc::DpcParams;
use golden::magbdi::{DeltaMode, Params, Table};
use golden::mpc::{ModelSet, Selection};
use hdl::ir::VerilogFile;
use hdl::unit::UnitDescription;

const INSTALL_HINT: &str = "install with: apt-get install verilator";
const COMMAND: &str = "lint_every_unit";

/// What to generate: one unit of one family at one depth.
enum Source {
    Mpc {
        set: Arc<ModelSet>,
        model_file: String,
        sha256: String,
        unit: hdl::Unit,
        opts: hdl::mpc::Options,
    },
    MagBdi {
        family: Arc<hdl::magbdi::Staged>,
        unit: hdl::Unit,
    },
    Dpc {
        family: hdl::dpc::Staged,
        unit: hdl::Unit,
    },
}

/// One unit to generate and lint.
struct Job {
    /// Unit, depth and configuration, for messages.
    label: String,
    /// Directory (under the test's root) its files are written to.
    dir: String,
    /// The top module.
    module: &'static str,
    /// Pipeline stages asked for.
    stages: usize,
    source: Source,
}

type Generated = (Vec<VerilogFile>, Vec<UnitDescription>);

impl Job {
    /// The unit's Verilog files (submodules first) and description, and
    /// the number of header lines at the top of each file.
    fn generate(&self) -> Result<(Generated, usize), String> {
        let (out, header) = match &self.source {
            Source::Mpc {
                set,
                model_file,
                sha256,
                unit,
                opts,
            } => {
                let config = hdl::mpc::MpcConfig {
                    set: ModelSet::clone(set),
                    sha256: sha256.clone(),
                    model_file: model_file.clone(),
                    options: *opts,
                };
                let header = hdl::family::header(&config, COMMAND);
                let out = hdl::family::generate(&config, &[*unit], &header);
                (out.map_err(|e| e.to_string()), header)
            }
            Source::MagBdi { family, unit } => {
                let header = hdl::family::header(&**family, COMMAND);
                let out = hdl::family::generate(&**family, &[*unit], &header);
                (out.map_err(|e| e.to_string()), header)
            }
            Source::Dpc { family, unit } => {
                let header = hdl::family::header(family, COMMAND);
                let out = hdl::family::generate(family, &[*unit], &header);
                (out.map_err(|e| e.to_string()), header)
            }
        };
        Ok((out?, header.len()))
    }
}

/// The shipped model-set directories: those of `models/*/model.toml`,
/// sorted by name.
fn shipped_sets() -> Vec<PathBuf> {
    let models = Path::new(env!("CARGO_MANIFEST_DIR")).join("../models");
    let entries =
        std::fs::read_dir(&models).unwrap_or_else(|e| panic!("reading {}: {e}", models.display()));
    let mut dirs: Vec<PathBuf> = entries
        .map(|e| e.unwrap_or_else(|e| panic!("reading {}: {e}", models.display())))
        .map(|e| e.path())
        .filter(|p| p.join(golden::mpc::model::MODEL_FILE).is_file())
        .collect();
    dirs.sort();
    assert!(
        !dirs.is_empty(),
        "no model set (*/model.toml) in {}",
        models.display()
    );
    dirs
}

/// Shipped sets linted at every depth; the others at the default depths
/// unless [`EVERY_DEPTH_VAR`] is `1` (`make every-depth`).
const EVERY_DEPTH_SETS: [&str; 2] = ["default", "example"];
const EVERY_DEPTH_VAR: &str = "MPCGEN_EVERY_DEPTH";

fn every_depth() -> bool {
    std::env::var(EVERY_DEPTH_VAR).is_ok_and(|v| v == "1")
}

fn mpc_jobs(jobs: &mut Vec<Job>) {
    use hdl::mpc::{Options, COMPRESSOR_STAGES, DECOMPRESSOR_STAGES};
    use hdl::{Side, Unit};
    for dir in shipped_sets() {
        let (set, sha256) = ModelSet::load_with_sha256(&dir)
            .unwrap_or_else(|e| panic!("loading {}: {e}", dir.display()));
        // as `gen --model models/<set>` names it in the header
        let model_file = format!(
            "models/{}/{}",
            dir.file_name().unwrap_or_default().to_string_lossy(),
            golden::mpc::model::MODEL_FILE
        );
        let set = Arc::new(set);
        let depths = COMPRESSOR_STAGES
            .map(|n| (Unit::Mpc(Side::Compressor), n, Options::with_stages(n, 4)))
            .chain(
                DECOMPRESSOR_STAGES
                    .map(|n| (Unit::Mpc(Side::Decompressor), n, Options::with_stages(3, n))),
            );
        let dir_name = dir.file_name().unwrap_or_default().to_string_lossy();
        let every_depth = every_depth() || EVERY_DEPTH_SETS.contains(&&*dir_name);
        let default = Options::default();
        for (unit, stages, opts) in depths {
            let opts = opts.unwrap_or_else(|e| panic!("{e}"));
            let default_stages = match unit.side() {
                Side::Compressor => default.compressor_stages(),
                Side::Decompressor => default.decompressor_stages(),
            };
            if !every_depth && stages != default_stages {
                continue;
            }
            let short = if unit.side() == Side::Compressor {
                "c"
            } else {
                "d"
            };
            jobs.push(Job {
                label: format!(
                    "{}, {stages} stages, model set `{}` ({model_file})",
                    unit.module_name(),
                    set.name
                ),
                dir: format!("mpc-{}-{short}{stages}", set.name),
                module: unit.module_name(),
                stages,
                source: Source::Mpc {
                    set: Arc::clone(&set),
                    model_file: model_file.clone(),
                    sha256: sha256.clone(),
                    unit,
                    opts,
                },
            });
        }
    }
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

fn mpc_variant_jobs(jobs: &mut Vec<Job>) {
    use hdl::mpc::{Options, COMPRESSOR_STAGES};
    use hdl::{Side, Unit};
    // two predictors are enough for a selection among them (and cost
    // less to lint than three)
    let bases = [
        ("2p", 2, include_str!("../../models/example/model.toml")),
        ("1p", 1, include_str!("../../models/int32/model.toml")),
    ];
    for (base, predictors, text) in bases {
        for zero_block in [false, true] {
            for same_words in [false, true] {
                for (sel, selection) in [("zr", Selection::ZeroRun), ("ex", Selection::Exact)] {
                    let set = variant(text, predictors, zero_block, same_words, selection);
                    let name = format!("{base}-z{}-s{}-{sel}", zero_block as u8, same_words as u8);
                    let set = Arc::new(set);
                    let mut push = |unit: Unit, stages: usize, opts: Options, short: &str| {
                        jobs.push(Job {
                            label: format!(
                                "{}, {stages} stages, variant {name} ({predictors} predictor(s), \
                                 zero-block {zero_block}, same-words {same_words}, {selection:?})",
                                unit.module_name()
                            ),
                            dir: format!("variant-{name}-{short}{stages}"),
                            module: unit.module_name(),
                            stages,
                            source: Source::Mpc {
                                set: Arc::clone(&set),
                                model_file: "variant".to_string(),
                                sha256: "-".to_string(),
                                unit,
                                opts,
                            },
                        });
                    };
                    for stages in COMPRESSOR_STAGES {
                        if !every_depth() && stages != Options::default().compressor_stages() {
                            continue;
                        }
                        let opts = Options::with_stages(stages, 4).expect("depths");
                        push(Unit::Mpc(Side::Compressor), stages, opts, "c");
                    }
                    // the decompressor does not depend on the selection rule
                    if selection == Selection::ZeroRun {
                        let opts = Options::default();
                        push(
                            Unit::Mpc(Side::Decompressor),
                            opts.decompressor_stages(),
                            opts,
                            "d",
                        );
                    }
                }
            }
        }
    }
}

/// Both units of 128/32/4 and 128/16/4 in both delta modes at the default
/// depth, and the two-stage compressor of 128/16/4 signed and 128/32/4
/// unsigned.
fn magbdi_jobs(jobs: &mut Vec<Job>) {
    use hdl::magbdi::{Staged, Stages, LATENCY};
    for (mag, mode, stages) in [
        (32, DeltaMode::Unsigned, LATENCY),
        (32, DeltaMode::Signed, LATENCY),
        (16, DeltaMode::Unsigned, LATENCY),
        (16, DeltaMode::Signed, LATENCY),
        (16, DeltaMode::Signed, 2),
        (32, DeltaMode::Unsigned, 2),
    ] {
        let params = Params::new(128, mag, 4, mode);
        let family = Arc::new(Staged {
            table: Table::new(params).unwrap_or_else(|e| panic!("MAG-aware BDI 128/{mag}/4: {e}")),
            stages: Stages::new(stages, LATENCY)
                .unwrap_or_else(|e| panic!("MAG-aware BDI compressor stages: {e}")),
        });
        let config = hdl::magbdi::config_name(&params);
        let units: &[hdl::Unit] = if stages == LATENCY {
            &hdl::magbdi::UNITS
        } else {
            &[hdl::Unit::MagBdi(hdl::Side::Compressor)]
        };
        for &unit in units {
            let stages = match unit.side() {
                hdl::Side::Compressor => stages,
                hdl::Side::Decompressor => LATENCY,
            };
            jobs.push(Job {
                label: format!(
                    "{}, {stages} stage(s), MAG-aware BDI block 128 B, MAG {mag} B, base 4 B, {mode} deltas",
                    unit.module_name(),
                ),
                dir: format!("{config}-{}-{stages}", unit.module_name()),
                module: unit.module_name(),
                stages,
                source: Source::MagBdi {
                    family: Arc::clone(&family),
                    unit,
                },
            });
        }
    }
}

fn dpc_jobs(jobs: &mut Vec<Job>) {
    use golden::dpc::{SECTOR_BYTES, SEGMENT_BYTES};
    let params = DpcParams::new(128, SEGMENT_BYTES, SECTOR_BYTES)
        .unwrap_or_else(|e| panic!("DPC default geometry: {e}"));
    let default = hdl::dpc::DECOMPRESSOR_LATENCY as usize;
    for depth in default..=hdl::dpc::MAX_DECOMPRESSOR_STAGES {
        let family = hdl::dpc::Staged::new(params, depth)
            .unwrap_or_else(|e| panic!("DPC decompressor stages: {e}"));
        for unit in hdl::dpc::UNITS {
            let stages = match unit.side() {
                hdl::Side::Compressor if depth == default => hdl::dpc::COMPRESSOR_LATENCY as usize,
                // the compressors have one depth
                hdl::Side::Compressor => continue,
                hdl::Side::Decompressor => depth,
            };
            let module = unit.module_name();
            jobs.push(Job {
                label: format!(
                    "{module}, {stages} stages, DPC block 128 B, segment {SEGMENT_BYTES} B, sector {SECTOR_BYTES} B"
                ),
                dir: format!("dpc-{module}-{stages}"),
                module,
                stages,
                source: Source::Dpc { family, unit },
            });
        }
    }
}

/// Every unit to lint, the largest first (the MPC sets with the most
/// predictors), so that the last runs are short ones.
fn jobs() -> Vec<Job> {
    let mut jobs = Vec::new();
    mpc_jobs(&mut jobs);
    mpc_variant_jobs(&mut jobs);
    magbdi_jobs(&mut jobs);
    dpc_jobs(&mut jobs);
    let weight = |j: &Job| match &j.source {
        Source::Mpc { set, .. } => set.predictors.len() + 1,
        _ => 0,
    };
    jobs.sort_by_key(|j| std::cmp::Reverse(weight(j)));
    jobs
}

/// The Verilog of `texts` without the first `header` lines of each (the
/// header comment, which names the model set and its file).
fn body<'a>(texts: impl IntoIterator<Item = &'a str>, header: usize) -> String {
    let mut out = String::new();
    for text in texts {
        let mut lines = text.split_inclusive('\n');
        let head: Vec<&str> = lines.by_ref().take(header).collect();
        assert!(
            head.iter().all(|l| l.starts_with("//")),
            "the first {header} lines of a generated file are not its header comment"
        );
        out.push('\0');
        out.extend(lines);
    }
    out
}

/// The hash of a [`body`].
fn hash(body: &str) -> u64 {
    let mut h = DefaultHasher::new();
    body.hash(&mut h);
    h.finish()
}

/// A unit linted: its label, its files and their header lines.
struct Linted {
    label: String,
    paths: Vec<PathBuf>,
    header: usize,
}

impl Linted {
    /// Whether its Verilog, header comments aside, is `body`.
    fn has_body(&self, expected: &str) -> bool {
        let texts: Result<Vec<String>, _> =
            self.paths.iter().map(std::fs::read_to_string).collect();
        texts.is_ok_and(|t| body(t.iter().map(String::as_str), self.header) == expected)
    }
}

/// The units linted, by the hash of their [`body`].
type Seen = Mutex<HashMap<u64, Vec<Linted>>>;

/// What became of one unit.
enum Outcome {
    Clean,
    SameAs(String),
    Problem(String),
}

/// Generate, write and lint one job.
fn check(job: &Job, root: &Path, seen: &Seen) -> Outcome {
    let ((files, described), header) = match job.generate() {
        Ok(g) => g,
        Err(e) => return Outcome::Problem(format!("{}: generating: {e}", job.label)),
    };
    match described.as_slice() {
        [d] if d.module == job.module && d.latency == job.stages => {}
        other => {
            let got: Vec<String> = other
                .iter()
                .map(|d| format!("{} ({} stages)", d.module, d.latency))
                .collect();
            return Outcome::Problem(format!(
                "{}: the generator described {}",
                job.label,
                got.join(", ")
            ));
        }
    }
    let dir = root.join(&job.dir);
    let paths = match hdl::ir::write_files(&dir, &files) {
        Ok(p) => p,
        Err(e) => {
            return Outcome::Problem(format!("{}: writing {}: {e}", job.label, dir.display()))
        }
    };
    let key = body(files.iter().map(|f| f.text.as_str()), header);
    {
        let mut seen = seen.lock().unwrap_or_else(|e| e.into_inner());
        let same = seen.entry(hash(&key)).or_default();
        if let Some(first) = same.iter().find(|l| l.has_body(&key)) {
            return Outcome::SameAs(first.label.clone());
        }
        same.push(Linted {
            label: job.label.clone(),
            paths: paths.clone(),
            header,
        });
    }
    let mut cmd = Command::new("verilator");
    cmd.args(["--lint-only", "-Wall", "--top-module", job.module])
        .args(&paths);
    match cmd.output() {
        Ok(o) if o.status.success() && o.stdout.is_empty() && o.stderr.is_empty() => Outcome::Clean,
        Ok(o) => Outcome::Problem(format!(
            "{}: verilator --lint-only -Wall ({}, {}):\n{}{}",
            job.label,
            dir.display(),
            o.status,
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )),
        Err(e) => Outcome::Problem(format!("{}: could not run {cmd:?}: {e}", job.label)),
    }
}

#[test]
fn every_unit_at_every_depth_is_lint_clean() {
    if !hdl::prereq::available(
        &["verilator"],
        "every_unit_at_every_depth_is_lint_clean",
        INSTALL_HINT,
    ) {
        return;
    }
    let start = Instant::now();
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("lint_every_unit");
    let _ = std::fs::remove_dir_all(&root);
    let jobs = jobs();
    let next = AtomicUsize::new(0);
    let seen = Seen::default();
    let outcomes = Mutex::new(Vec::new());
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get().min(4));
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| {
                while let Some(job) = jobs.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let outcome = check(job, &root, &seen);
                    outcomes
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push((job.label.as_str(), outcome));
                }
            });
        }
    });
    let outcomes = outcomes.into_inner().unwrap_or_else(|e| e.into_inner());
    let mut problems = Vec::new();
    let mut linted = 0;
    for (label, outcome) in &outcomes {
        match outcome {
            Outcome::Clean => linted += 1,
            Outcome::SameAs(first) => eprintln!("{label}: the Verilog of {first}"),
            Outcome::Problem(p) => problems.push(p.as_str()),
        }
    }
    eprintln!(
        "{linted} units linted clean, {} identical to one of them, of {} in {:.1} s ({workers} at a time)",
        outcomes.len() - linted - problems.len(),
        jobs.len(),
        start.elapsed().as_secs_f64()
    );
    assert!(
        problems.is_empty(),
        "{} of {} units:\n{}",
        problems.len(),
        jobs.len(),
        problems.join("\n")
    );
}
