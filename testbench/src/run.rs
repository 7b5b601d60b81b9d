//! A whole co-simulation: RTL, vectors, expected values, shards run in
//! parallel on each simulator, comparison, and locating the first mismatch.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use golden::mpc::{ModelSet, MpcCodec};
use indicatif::ProgressBar;

use crate::compare::{self, Expect, Inputs, Shard, Verdict};
use crate::locate::{self, Failing, Location};
use crate::records;
use crate::rng::Rng;
use crate::rtl::{self, Rtl};
use crate::schedule::{self, Schedule, ScheduleConfig};
use crate::sim::{self, CxxOpt, RunFiles, RunOptions};
use crate::slots::{self, Plan, SlotOptions, SlotUnit};
use crate::vectors::{self, CompVector, DecompVector, GenConfig, Tags};
use crate::{Simulator, Unit};

/// Co-simulation problems.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Rtl(#[from] rtl::RtlError),
    #[error(transparent)]
    Vectors(#[from] vectors::VectorError),
    #[error(transparent)]
    Schedule(#[from] schedule::ScheduleError),
    #[error(transparent)]
    Sim(#[from] sim::SimError),
    #[error(transparent)]
    Output(#[from] records::OutputError),
    /// The unit descriptions that group a full-run dump's save file.
    #[error(transparent)]
    Units(#[from] locate::LocateError),
    #[error(transparent)]
    Slots(#[from] slots::SlotsError),
    #[error("--expect-model is not supported for units with programmable slots")]
    ExpectModelWithSlots,
    #[error("cannot create {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// What to run.
#[derive(Clone, Debug)]
pub struct Config {
    /// Model-set directory.
    pub model: PathBuf,
    /// Use the units already in this directory instead of generating them.
    pub rtl: Option<PathBuf>,
    /// Root of the work directories (`<build>/<set name>/...`).
    pub build: PathBuf,
    pub sims: Vec<Simulator>,
    pub units: Vec<Unit>,
    /// Vectors per unit.
    pub blocks: usize,
    pub seed: u64,
    pub corpus: Option<PathBuf>,
    /// Stall probability of the random schedule segments (0: none).
    pub stall: f64,
    /// Reset pulses per shard.
    pub resets: usize,
    /// Every shard's stall and reset schedule, instead of random ones
    /// (`stall` and `resets` unused).
    pub schedule: Option<Schedule>,
    /// Parallel simulator processes (shards) per unit.
    pub jobs: usize,
    /// Dump a VCD of every shard's whole run.
    pub vcd: bool,
    /// Check handshake timing against an ideal ready-chain pipeline.
    pub check_timing: bool,
    /// Locate the first mismatch (stage compare, window VCD).
    pub locate: bool,
    /// Compare against this model set instead of `model` (checks the
    /// checker: a wrong set must be caught).
    pub expect_model: Option<PathBuf>,
    /// Show progress bars.
    pub progress: bool,
    /// Generate units with these programmable slots (`None`: as
    /// `params.json` of `rtl` says, or none).
    pub program_slots: Option<SlotUnit>,
    /// How units with slots are programmed.
    pub slot_options: SlotOptions,
}

impl Config {
    /// Defaults for a model set: both simulators, every unit, 2000 blocks.
    pub fn new(model: &Path) -> Config {
        Config {
            model: model.to_path_buf(),
            rtl: None,
            build: PathBuf::from("build"),
            sims: Simulator::ALL.to_vec(),
            units: Unit::ALL.to_vec(),
            blocks: 2000,
            seed: 1,
            corpus: None,
            stall: 0.2,
            resets: 2,
            schedule: None,
            jobs: std::thread::available_parallelism().map_or(1, |n| n.get()),
            vcd: false,
            check_timing: true,
            locate: true,
            expect_model: None,
            progress: false,
            program_slots: None,
            slot_options: SlotOptions::default(),
        }
    }
}

/// The result of one unit on one simulator.
#[derive(Debug)]
pub struct UnitReport {
    pub sim: Simulator,
    pub unit: Unit,
    pub blocks: usize,
    pub shards: usize,
    pub verdict: Verdict,
    /// Simulation wall time (all shards, in parallel).
    pub sim_seconds: f64,
    /// Compile time (0 when the build was cached).
    pub build_seconds: f64,
    pub build_cached: bool,
    pub location: Option<Location>,
    /// Locating failed (the mismatch stands; this says why no stage report).
    pub locate_error: Option<String>,
    /// What the golden model makes of the vectors: model IDs chosen (or
    /// decoded) and decode-error kinds, with counts.
    pub coverage: Vec<(String, u64)>,
}

impl UnitReport {
    pub fn blocks_per_second(&self) -> f64 {
        if self.sim_seconds > 0.0 {
            self.verdict.checked as f64 / self.sim_seconds
        } else {
            0.0
        }
    }

    /// A human-readable account.
    pub fn render(&self) -> String {
        let v = &self.verdict;
        let mut s = format!(
            "{} {}: {} ({} of {} blocks match; {} shards, {} cycles, {} resets dropped {} in-flight blocks that were re-sent; {:.1} s, {:.0} blocks/s; build {})\n",
            self.sim,
            self.unit,
            if v.ok() { "PASS" } else { "FAIL" },
            v.passed,
            self.blocks,
            self.shards,
            v.cycles,
            v.resets,
            v.dropped,
            self.sim_seconds,
            self.blocks_per_second(),
            if self.build_cached {
                "cached".to_string()
            } else {
                format!("{:.1} s", self.build_seconds)
            }
        );
        for (tag, (p, t)) in &v.per_tag {
            s.push_str(&format!("    {tag:<34} {p:>8} / {t:<8}\n"));
        }
        if !self.coverage.is_empty() {
            let c: Vec<String> = self
                .coverage
                .iter()
                .map(|(k, n)| format!("{k} {n}"))
                .collect();
            s.push_str(&format!("  golden outcomes: {}\n", c.join(", ")));
        }
        for p in &v.problems {
            s.push_str(&format!("  problem: {p}\n"));
        }
        if v.mismatch_count > 0 {
            s.push_str(&format!(
                "  {} mismatching blocks; the first {}:\n",
                v.mismatch_count,
                v.mismatches.len().min(5)
            ));
            for m in v.mismatches.iter().take(5) {
                s.push_str(&format!("  {m}\n"));
            }
        }
        if let Some(l) = &self.location {
            s.push_str(&format!(
                "  located block {}:\n  {}",
                v.mismatches.first().map_or(0, |m| m.idx),
                l.to_string().replace('\n', "\n  ")
            ));
            s.push('\n');
        }
        if let Some(e) = &self.locate_error {
            s.push_str(&format!("  could not locate the mismatch: {e}\n"));
        }
        s
    }
}

fn mkdir(p: &Path) -> Result<(), RunError> {
    std::fs::create_dir_all(p).map_err(|source| RunError::Io {
        path: p.to_path_buf(),
        source,
    })
}

/// The vectors of one unit (split into shards here, run against mutants
/// in [`crate::mutate`]).
pub(crate) enum UnitVectors {
    Comp(Vec<CompVector>),
    Decomp(Vec<DecompVector>),
}

impl UnitVectors {
    pub(crate) fn len(&self) -> usize {
        match self {
            UnitVectors::Comp(v) => v.len(),
            UnitVectors::Decomp(v) => v.len(),
        }
    }

    pub(crate) fn inputs(&self, r: std::ops::Range<usize>) -> Inputs<'_> {
        match self {
            UnitVectors::Comp(v) => Inputs::Comp(&v[r]),
            UnitVectors::Decomp(v) => Inputs::Decomp(&v[r]),
        }
    }

    fn failing(&self, i: usize) -> Failing {
        match self {
            UnitVectors::Comp(v) => Failing::Comp(v[i]),
            UnitVectors::Decomp(v) => Failing::Decomp(v[i]),
        }
    }
}

/// Golden outcomes of a unit's vectors: the model ID chosen (or decoded)
/// and the decode-error kinds.
fn coverage(expected: &[Expect], set: &ModelSet) -> Vec<(String, u64)> {
    let mut m: std::collections::BTreeMap<String, u64> = std::collections::BTreeMap::new();
    for e in expected {
        let k = match e {
            Expect::Comp(c) => format!("model {}", set.id_name(c.model)),
            Expect::Block {
                result: Ok(_),
                model: Some(id),
            } => format!("model {}", set.id_name(*id)),
            Expect::Block { result: Ok(_), .. } => "ok".to_string(),
            Expect::Block { result: Err(e), .. } => {
                let d = format!("{e:?}");
                let name = d.split([' ', '{', '(']).next().unwrap_or("").to_string();
                format!("error {name}")
            }
        };
        *m.entry(k).or_default() += 1;
    }
    m.into_iter().collect()
}

/// A GTKWave save file next to a full-run dump of `unit`, grouped by the
/// stages of the unit descriptions (best effort: a dump that cannot be
/// read gets none).
fn gtkw_for_dump(vcd: &Path, unit: Unit, units: &locate::MpcUnits) {
    use std::io::Read;
    let mut head = Vec::new();
    if let Ok(f) = std::fs::File::open(vcd) {
        let _ = f.take(8 << 20).read_to_end(&mut head);
    }
    if let Ok(v) = crate::vcd::Vcd::parse_header(&String::from_utf8_lossy(&head)) {
        let _ = locate::write_stage_gtkw(
            vcd,
            &v,
            "mpc_tb",
            &locate::mpc_gtkw_units(unit, units),
            &vcd.with_extension("gtkw"),
        );
    }
}

/// Run the shards `runs` (of `lens` vectors, with options `opts`) of one
/// unit on one build in parallel, with a progress bar when `progress`.
/// Returns each shard's result and the wall time of them all.
#[allow(clippy::too_many_arguments)]
pub(crate) fn simulate_shards(
    progress: bool,
    sim_kind: Simulator,
    unit: Unit,
    b: &sim::Build,
    runs: &[RunFiles],
    lens: &[usize],
    opts: &[RunOptions],
    rdir: &Path,
) -> (Vec<Result<f64, sim::SimError>>, f64) {
    let n: usize = lens.iter().sum();
    let counters: Vec<AtomicU64> = lens.iter().map(|_| AtomicU64::new(0)).collect();
    let bar = if progress {
        datafiles::progress::bar(n as u64, "blocks", &format!("cosim {sim_kind} {unit}"))
    } else {
        ProgressBar::hidden()
    };
    let t0 = Instant::now();
    let done = AtomicU64::new(0);
    let results: Vec<Result<f64, sim::SimError>> = std::thread::scope(|s| {
        let handles: Vec<_> = runs
            .iter()
            .zip(lens)
            .zip(&counters)
            .zip(opts)
            .map(|(((files, &len), c), opt)| {
                let done = &done;
                s.spawn(move || {
                    let res = sim::run(b, files, len, opt, Some(c));
                    done.fetch_add(1, Ordering::Relaxed);
                    res
                })
            })
            .collect();
        while done.load(Ordering::Relaxed) < handles.len() as u64 {
            bar.set_position(counters.iter().map(|c| c.load(Ordering::Relaxed)).sum());
            std::thread::sleep(Duration::from_millis(100));
        }
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    Err(sim::SimError::Run {
                        sim: sim_kind,
                        dir: rdir.to_path_buf(),
                        status: "runner thread panicked".to_string(),
                        tail: String::new(),
                    })
                })
            })
            .collect()
    });
    bar.finish_and_clear();
    (results, t0.elapsed().as_secs_f64())
}

/// Generate (or load) the RTL of the configuration.
pub fn prepare_rtl(cfg: &Config, set: &ModelSet) -> Result<Rtl, RunError> {
    Ok(match (&cfg.rtl, cfg.program_slots) {
        (Some(dir), slots) => rtl::load_units(dir, set, &cfg.model, slots)?,
        (None, None) => rtl::generate(&cfg.model, &cfg.build.join(&set.name))?,
        (None, Some(u)) => {
            rtl::generate_units(&cfg.model, &cfg.build.join(u.dir_name(set)), Some(u))?
        }
    })
}

/// The work directory of a run's units: `<build>/<set name>`, or for
/// units with slots `<build>/<set name>-slots<K>-<form>`.
fn work_root(cfg: &Config, set: &ModelSet, rtl: &Rtl) -> PathBuf {
    match rtl.slots {
        None => cfg.build.join(&set.name),
        Some(u) => cfg.build.join(u.dir_name(set)),
    }
}

/// Run the configuration; one report per (unit, simulator).
pub fn run(cfg: &Config) -> Result<Vec<UnitReport>, RunError> {
    let set = rtl::load_set(&cfg.model)?;
    let expect_set = match &cfg.expect_model {
        Some(p) => rtl::load_set(p)?,
        None => set.clone(),
    };
    let rtl = prepare_rtl(cfg, &set)?;
    if let Some(u) = rtl.slots {
        if cfg.expect_model.is_some() {
            return Err(RunError::ExpectModelWithSlots);
        }
        let images = Plan::images(&set, u, &cfg.slot_options, cfg.seed, cfg.corpus.as_deref())?;
        let every = cfg.slot_options.reprogram_every;
        return run_slots(cfg, &set, &rtl, &cfg.units, &|lens: &[usize]| {
            Plan::cycling(&set, u, images.clone(), lens, every)
        });
    }
    let codec = MpcCodec::new(&expect_set);
    let gen_codec = MpcCodec::new(&set);
    let root = work_root(cfg, &set, &rtl);
    // the stages of the GTKWave save files of full-run dumps
    let gtkw_units = if cfg.vcd {
        Some(locate::mpc_unit_descriptions(&rtl, &set)?)
    } else {
        None
    };
    let mut reports = Vec::new();
    for &unit in &cfg.units {
        let mut tags = Tags::new();
        let gen = GenConfig {
            blocks: cfg.blocks,
            seed: cfg.seed,
            corpus: cfg.corpus.clone(),
        };
        let vecs = match unit {
            Unit::Compressor | Unit::Loopback => {
                UnitVectors::Comp(vectors::compressor_vectors(&set, &gen, &mut tags)?)
            }
            Unit::Decompressor => {
                UnitVectors::Decomp(vectors::decompressor_vectors(&gen_codec, &gen, &mut tags)?)
            }
        };
        let expected: Vec<Expect> = match (&vecs, unit) {
            (UnitVectors::Comp(v), Unit::Compressor) => compare::expect_compressor(&codec, v),
            (UnitVectors::Comp(v), _) => compare::expect_loopback(&codec, v),
            (UnitVectors::Decomp(v), _) => compare::expect_decompressor(&codec, v),
        };
        // shards: contiguous slices, one schedule each
        let n = vecs.len();
        let shards = cfg.jobs.clamp(1, n.div_ceil(500).max(1));
        let per = n.div_ceil(shards.max(1)).max(1);
        let ranges: Vec<std::ops::Range<usize>> = (0..shards)
            .map(|k| (k * per).min(n)..((k + 1) * per).min(n))
            .filter(|r| !r.is_empty())
            .collect();
        let vdir = root.join("cosim").join(unit.name());
        mkdir(&vdir)?;
        let stages = unit.stages(&rtl.params);
        let mut schedules = Vec::new();
        let mut models = Vec::new();
        for (k, r) in ranges.iter().enumerate() {
            let files = shard_files(&vdir, k);
            match &vecs {
                UnitVectors::Comp(v) => vectors::write_comp(&files.vectors, &v[r.clone()])?,
                UnitVectors::Decomp(v) => {
                    vectors::write_decomp(&files.vectors, &v[r.clone()], rtl.params.max_bits)?
                }
            }
            let s = shard_schedule(cfg, k, r.len(), stages);
            s.write(&files.schedule)?;
            models.push(
                cfg.check_timing
                    .then(|| schedule::model_run(&s, stages, r.len() as u64, u64::MAX / 2)),
            );
            schedules.push(files);
        }
        for &sim_kind in &cfg.sims {
            let (b, sdir) = build_unit(cfg, &root, sim_kind, unit, &rtl, n)?;
            let rdir = sdir.join(format!("run-{}", unit.name()));
            let runs: Vec<RunFiles> = (0..ranges.len())
                .map(|k| {
                    let d = rdir.join(format!("shard{k}"));
                    mkdir(&d)?;
                    Ok(RunFiles {
                        dir: d.clone(),
                        vectors: schedules[k].vectors.clone(),
                        schedule: schedules[k].schedule.clone(),
                        out: d.join("out.txt"),
                    })
                })
                .collect::<Result<_, RunError>>()?;
            let opts: Vec<RunOptions> = runs
                .iter()
                .map(|files| RunOptions {
                    timeout_cycles: 20_000,
                    vcd: cfg.vcd.then(|| (files.dir.join("full.vcd"), 0, None)),
                    plusargs: Vec::new(),
                    stages,
                })
                .collect();
            let lens: Vec<usize> = ranges.iter().map(|r| r.len()).collect();
            let (results, sim_seconds) =
                simulate_shards(cfg.progress, sim_kind, unit, &b, &runs, &lens, &opts, &rdir);
            if let Some(units) = &gtkw_units {
                for files in &runs {
                    gtkw_for_dump(&files.dir.join("full.vcd"), unit, units);
                }
            }
            let mut verdict = Verdict::default();
            let mut first_fail: Option<(usize, compare::Mismatch)> = None;
            for (k, res) in results.into_iter().enumerate() {
                let r = ranges[k].clone();
                let shard_out = match res {
                    Ok(_) => compare::read_records(&runs[k].out, unit, &rtl.params)?,
                    Err(e) => {
                        // a crashed simulator: whatever it wrote, plus the error
                        let mut o = compare::read_records(&runs[k].out, unit, &rtl.params)
                            .unwrap_or_default();
                        o.errors.push(e.to_string());
                        o
                    }
                };
                let shard = Shard {
                    index: k,
                    offset: r.start as u64,
                    inputs: vecs.inputs(r.clone()),
                    expected: &expected[r.clone()],
                    model: models[k].as_ref(),
                };
                let v = compare::compare(&shard, &shard_out, &tags, stages);
                if first_fail.is_none() {
                    if let Some(m) = v.mismatches.first() {
                        first_fail = Some((k, m.clone()));
                    }
                }
                verdict.merge(v);
            }
            let mut report = UnitReport {
                sim: sim_kind,
                unit,
                blocks: n,
                shards: ranges.len(),
                verdict,
                sim_seconds,
                build_seconds: b.seconds,
                build_cached: b.cached,
                location: None,
                locate_error: None,
                coverage: coverage(&expected, &expect_set),
            };
            if cfg.locate {
                if let Some((k, m)) = first_fail {
                    let ctx = locate::Context {
                        files: &runs[k],
                        n: ranges[k].len(),
                        cycle: m.cycle,
                        latency: m.latency,
                    };
                    match locate::locate(
                        sim_kind,
                        unit,
                        &rtl,
                        &expect_set,
                        &sdir.join(format!("{}-trace", unit.name())),
                        &sdir.join(format!("mismatch-{}-{}", unit.name(), m.idx)),
                        vecs.failing(m.idx as usize),
                        Some(ctx),
                    ) {
                        Ok(l) => report.location = Some(l),
                        Err(e) => report.locate_error = Some(e.to_string()),
                    }
                }
            }
            reports.push(report);
        }
    }
    Ok(reports)
}

/// The files of shard `k` of a unit's vectors in `vdir`.
fn shard_files(vdir: &Path, k: usize) -> RunFiles {
    RunFiles {
        dir: vdir.to_path_buf(),
        vectors: vdir.join(format!("shard{k}.vec")),
        schedule: vdir.join(format!("shard{k}.sched")),
        out: vdir.join(format!("shard{k}.out")),
    }
}

/// The stall and reset schedule of shard `k` (`len` blocks): the one
/// given, or a random one.
fn shard_schedule(cfg: &Config, k: usize, len: usize, stages: usize) -> Schedule {
    if let Some(s) = &cfg.schedule {
        return s.clone();
    }
    Schedule::generate(
        &ScheduleConfig {
            stall: cfg.stall,
            resets: cfg.resets,
            seed: Rng::fork(cfg.seed, 100 + k as u64).next_u64(),
        },
        len,
        stages,
    )
}

/// `unit` built for `sim_kind` under `root` (for `n` blocks of vectors),
/// and the folder of that simulator's builds and runs.
fn build_unit(
    cfg: &Config,
    root: &Path,
    sim_kind: Simulator,
    unit: Unit,
    rtl: &Rtl,
    n: usize,
) -> Result<(sim::Build, PathBuf), RunError> {
    let sdir = root.join(format!("sim-{}", sim_kind.name()));
    let cxx = CxxOpt::for_vectors(n);
    let bdir = sdir.join(format!(
        "{}{}{}",
        unit.name(),
        if cfg.vcd { "-trace" } else { "" },
        cxx.dir_suffix(sim_kind)
    ));
    let b = sim::build(sim_kind, unit, rtl, &bdir, cfg.vcd, cxx)?;
    Ok((b, sdir))
}

/// Shards of a unit's `n` vectors: `jobs` of them, at least 500 vectors
/// each (one when there are fewer).
fn shard_count(jobs: usize, n: usize) -> usize {
    jobs.clamp(1, n.div_ceil(500).max(1))
}

/// Co-simulate `units` of units with programmable slots (`rtl.slots`):
/// `plan` gives, for the shards' lengths, the images and epochs of every
/// block and the configuration writes that load them
/// ([`slots::Plan`]). The golden model follows the plan
/// ([`slots::unit_vectors`]); the checks are those of every run without
/// the ideal-pipeline timing (a commit's drain is the unit's own timing).
/// The first mismatching block is located
/// ([`locate::slots::locate_first_mismatch`]): rerun alone with its image
/// programmed, its stage probes compared with the golden trace of the
/// programmed set.
pub fn run_slots(
    cfg: &Config,
    set: &ModelSet,
    rtl: &Rtl,
    units: &[Unit],
    plan: &dyn Fn(&[usize]) -> Result<Plan, slots::SlotsError>,
) -> Result<Vec<UnitReport>, RunError> {
    let root = work_root(cfg, set, rtl);
    let mut reports = Vec::new();
    for &unit in units {
        let n = cfg.blocks;
        let ranges = slots::shard_ranges(n, shard_count(cfg.jobs, n));
        let lens: Vec<usize> = ranges.iter().map(|r| r.len()).collect();
        let plan = plan(&lens)?;
        let mut tags = Tags::new();
        let gen = GenConfig {
            blocks: n,
            seed: cfg.seed,
            corpus: cfg.corpus.clone(),
        };
        let (vecs, expected) = slots::unit_vectors(unit, set, &plan, &gen, &mut tags)?;
        let vdir = root.join("cosim").join(unit.name());
        mkdir(&vdir)?;
        let stages = unit.stages(&rtl.params);
        let mut inputs = Vec::new();
        for (k, r) in ranges.iter().enumerate() {
            let files = shard_files(&vdir, k);
            vecs.write(&files.vectors, r.clone(), rtl.params.max_bits)?;
            shard_schedule(cfg, k, r.len(), stages).write(&files.schedule)?;
            let cfg_file = vdir.join(format!("shard{k}.cfg"));
            plan.shards[k].write_cfg(&cfg_file)?;
            let cfg_file = cfg_file.canonicalize().map_err(|source| RunError::Io {
                path: cfg_file.clone(),
                source,
            })?;
            inputs.push((files, cfg_file));
        }
        for &sim_kind in &cfg.sims {
            let (b, sdir) = build_unit(cfg, &root, sim_kind, unit, rtl, n)?;
            let rdir = sdir.join(format!("run-{}", unit.name()));
            let mut runs = Vec::new();
            let mut opts = Vec::new();
            for (k, (files, cfg_file)) in inputs.iter().enumerate() {
                let d = rdir.join(format!("shard{k}"));
                mkdir(&d)?;
                let mut plusargs = vec![format!("+cfg={}", cfg_file.display())];
                if unit == Unit::Loopback {
                    // both ends of the link switch with nothing in flight
                    plusargs.push("+cfg_drain=1".to_string());
                }
                opts.push(RunOptions {
                    timeout_cycles: 20_000,
                    vcd: cfg.vcd.then(|| (d.join("full.vcd"), 0, None)),
                    plusargs,
                    stages: 0,
                });
                runs.push(RunFiles {
                    dir: d.clone(),
                    vectors: files.vectors.clone(),
                    schedule: files.schedule.clone(),
                    out: d.join("out.txt"),
                });
            }
            let (results, sim_seconds) =
                simulate_shards(cfg.progress, sim_kind, unit, &b, &runs, &lens, &opts, &rdir);
            let mut verdict = Verdict::default();
            let mut first_fail = None;
            for (k, res) in results.into_iter().enumerate() {
                let out = match res {
                    Ok(_) => slots::read_records(&runs[k].out, unit, &rtl.params)?,
                    Err(e) => {
                        let mut o = slots::read_records(&runs[k].out, unit, &rtl.params)
                            .unwrap_or_default();
                        o.errors.push(e.to_string());
                        o
                    }
                };
                let r = ranges[k].clone();
                let shard = slots::SlotShard {
                    index: k,
                    offset: r.start as u64,
                    plan: &plan.shards[k],
                    images: &plan.images,
                    vectors: &vecs,
                    first: r.start,
                    expected: &expected[r],
                };
                let v = slots::compare(&shard, &out, &tags, stages);
                if first_fail.is_none() {
                    first_fail = v.mismatches.first().map(|m| (k, m.clone()));
                }
                verdict.merge(v);
            }
            let mut report = UnitReport {
                sim: sim_kind,
                unit,
                blocks: n,
                shards: ranges.len(),
                verdict,
                sim_seconds,
                build_seconds: b.seconds,
                build_cached: b.cached,
                location: None,
                locate_error: None,
                coverage: slots::coverage(&plan, &expected, set),
            };
            if let (true, Some((k, m))) = (cfg.locate, first_fail) {
                match locate::slots::locate_first_mismatch(
                    sim_kind,
                    unit,
                    rtl,
                    set,
                    &sdir,
                    &plan,
                    &vecs,
                    (k, ranges[k].clone()),
                    &m,
                    &runs[k],
                    &inputs[k].1,
                ) {
                    Ok(l) => report.location = Some(l),
                    Err(e) => report.locate_error = Some(e.to_string()),
                }
            }
            reports.push(report);
        }
    }
    Ok(reports)
}
