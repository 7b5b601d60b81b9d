//! Mutation testing of the generated MPC units (docs/hw/cosim.md,
//! "Mutation testing"): does the co-simulation notice a single fault?
//!
//! The unit is built in the IR ([`hdl::mpc`]), its single mutations are
//! enumerated ([`hdl::ir::mutate::enumerate`]; all of them, or a sample),
//! and batches of them become mutation schemas
//! ([`hdl::ir::mutate::schema`]): one Verilog unit per batch with an extra
//! input `mutant`, compiled once with `tb/mpc_tb.sv` (define `MUTANTS`) and
//! run once per mutant with `+mutant=K`, on the vectors, schedule, golden
//! expectations and checks of `cosim mpc`. A mutant is killed when the run
//! fails any check (a differing output, a missing or extra output, a
//! protocol, timing or reset record, a timeout). Select 0 of every batch
//! must pass: it is the unit as generated.
//!
//! Survivors are then decided formally ([`crate::equiv`]): proven
//! equivalent, or given a counterexample input that runs as a vector
//! against them (on a new schema build), or reported open with the reason.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use golden::mpc::{MpcCodec, BLOCK_BYTES, MAX_BLOCK_BYTES};
use hdl::ir::mutate::{self, Mutation};

use crate::compare::{self, Expect, Inputs, Shard};
use crate::equiv::{self, EquivError, Verdict};
use crate::rng::Rng;
use crate::rtl::{self, Params};
use crate::run::{RunError, UnitVectors};
use crate::schedule::{self, Schedule, ScheduleConfig};
use crate::sim::{self, CxxOpt, RunFiles, RunOptions, TbSpec};
use crate::stream_unit::LeBus;
use crate::vectors::{self, CompVector, DecompVector, GenConfig, Tags};
use crate::{Simulator, Unit};

/// Width of the `mutant` select input.
pub const SELECT_WIDTH: u32 = 16;

/// Mutation-testing problems (the mutants' own failures are results, not
/// errors).
#[derive(Debug, thiserror::Error)]
pub enum MutateError {
    #[error(transparent)]
    Run(#[from] RunError),
    #[error("building the {unit} in the IR: {source}")]
    Ir {
        unit: Unit,
        #[source]
        source: hdl::ir::IrError,
    },
    #[error("mutation testing covers the compressor and the decompressor, not the {0}")]
    Unit(Unit),
    #[error(
        "the {unit} schema of batch {batch} fails with no mutant selected (select 0): {problem}"
    )]
    Baseline {
        unit: Unit,
        batch: usize,
        problem: String,
    },
    #[error("the {unit} has {count} single mutations (ids 0..{count}); there is no {id}")]
    NoSuchMutant { unit: Unit, id: usize, count: usize },
    #[error(transparent)]
    Equiv(#[from] EquivError),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> MutateError + '_ {
    move |source| MutateError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// What to run.
#[derive(Clone, Debug)]
pub struct MutateConfig {
    pub model: PathBuf,
    pub build: PathBuf,
    pub sim: Simulator,
    pub unit: Unit,
    /// Vectors per mutant run.
    pub blocks: usize,
    pub seed: u64,
    pub corpus: Option<PathBuf>,
    /// At most this many mutants, drawn at random with `seed` (`None`:
    /// every one).
    pub sample: Option<usize>,
    /// Only the mutations with these ids (before sampling; `None`: all).
    pub only: Option<Vec<usize>>,
    /// Mutants per schema (one simulator build each).
    pub batch: usize,
    /// Parallel simulator processes.
    pub jobs: usize,
    pub stall: f64,
    pub resets: usize,
    /// Decide every survivor formally ([`equiv`]), and run the
    /// counterexamples as new vectors.
    pub prove: bool,
    /// ABC's time limit per survivor, in seconds.
    pub prove_seconds: u32,
}

/// How a mutant was killed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Kill {
    /// Vectors up to and including the first differing output (`None` when
    /// the run failed another check first: a protocol, timing or reset
    /// record, a missing output, a timeout).
    pub vectors: Option<u64>,
    /// The first failed check.
    pub how: String,
}

/// One mutant's result.
#[derive(Clone, Debug)]
pub struct MutantResult {
    pub mutation: Mutation,
    /// `None`: the mutant survived every check of the simulation.
    pub kill: Option<Kill>,
    /// For a survivor, what the formal check and its counterexample did
    /// (`None`: not checked).
    pub closure: Option<Closure>,
}

/// How a survivor of the simulation was closed, or why it was not.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Closure {
    /// Proven equivalent to the unit: no vector can kill it.
    Equivalent,
    /// The formal check's counterexample, run as a vector, killed it.
    CounterexampleKilled(Kill),
    /// The counterexample did not kill it in simulation (the formal and
    /// the simulated units disagree: a defect to report).
    CounterexampleSurvived,
    /// The combinational check does not apply (why).
    OutOfScope(String),
    /// ABC gave up within its time limit (what it said).
    Undecided(String),
}

impl MutantResult {
    /// Killed in simulation, by a counterexample, or proven equivalent.
    pub fn closed(&self) -> bool {
        self.kill.is_some()
            || matches!(
                self.closure,
                Some(Closure::Equivalent) | Some(Closure::CounterexampleKilled(_))
            )
    }
}

/// One mutant run: killed (how) or not, or why it could not run.
type Outcome = Result<Option<Kill>, MutateError>;

/// The result of one unit.
#[derive(Clone, Debug)]
pub struct MutateReport {
    pub unit: Unit,
    pub sim: Simulator,
    /// Single mutations of the unit.
    pub enumerated: usize,
    pub vectors: usize,
    pub results: Vec<MutantResult>,
    pub batches: usize,
    pub build_seconds: f64,
    /// Time spent in the formal checks (summed over threads).
    pub prove_seconds: f64,
    pub seconds: f64,
}

/// The stage name of a mutation for reports.
pub fn stage_of(m: &Mutation) -> &str {
    m.section.as_deref().unwrap_or("ports and control")
}

impl MutateReport {
    pub fn killed(&self) -> usize {
        self.results.iter().filter(|r| r.kill.is_some()).count()
    }

    /// Survivors of the simulation.
    pub fn survivors(&self) -> impl Iterator<Item = &MutantResult> {
        self.results.iter().filter(|r| r.kill.is_none())
    }

    /// Mutants neither killed nor proven equivalent.
    pub fn open(&self) -> impl Iterator<Item = &MutantResult> {
        self.results.iter().filter(|r| !r.closed())
    }

    fn count(&self, f: impl Fn(&Closure) -> bool) -> usize {
        self.results
            .iter()
            .filter(|r| r.closure.as_ref().is_some_and(&f))
            .count()
    }

    /// Markdown: totals, a table per stage and per operator, and the
    /// survivors with what closed them.
    pub fn render(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "### {} on {}: {} of {} mutants killed in simulation ({} enumerated, {} vectors per run, {} builds, {:.0} s, of which {:.0} s building and {:.0} s in formal checks)\n",
            self.unit,
            self.sim,
            self.killed(),
            self.results.len(),
            self.enumerated,
            self.vectors,
            self.batches,
            self.seconds,
            self.build_seconds,
            self.prove_seconds
        );
        let survivors: Vec<&MutantResult> = self.survivors().collect();
        if survivors.iter().any(|r| r.closure.is_some()) {
            let _ = writeln!(
                s,
                "Survivors: {} killed by a counterexample vector, {} proven equivalent, {} out of the formal check's scope, {} undecided, {} not killed by their counterexample; {} open in all.\n",
                self.count(|c| matches!(c, Closure::CounterexampleKilled(_))),
                self.count(|c| *c == Closure::Equivalent),
                self.count(|c| matches!(c, Closure::OutOfScope(_))),
                self.count(|c| matches!(c, Closure::Undecided(_))),
                self.count(|c| *c == Closure::CounterexampleSurvived),
                self.open().count()
            );
        }
        let table = |s: &mut String, title: &str, key: &dyn Fn(&MutantResult) -> String| {
            // mutants, killed in simulation, closed afterwards, vectors to kill
            let mut rows: BTreeMap<String, (usize, usize, usize, usize, Vec<u64>)> =
                BTreeMap::new();
            for r in &self.results {
                let e = rows.entry(key(r)).or_default();
                e.0 += 1;
                if let Some(k) = &r.kill {
                    e.1 += 1;
                    if let Some(v) = k.vectors {
                        e.4.push(v);
                    }
                }
                match &r.closure {
                    Some(Closure::CounterexampleKilled(_)) => e.2 += 1,
                    Some(Closure::Equivalent) => e.3 += 1,
                    _ => {}
                }
            }
            let _ = writeln!(
                s,
                "| {title} | mutants | killed | killed by counterexample | equivalent | open | vectors to kill (median / max) |\n|---|---|---|---|---|---|---|"
            );
            for (k, (n, killed, cex, eq, mut v)) in rows {
                v.sort_unstable();
                let vk = if v.is_empty() {
                    "-".to_string()
                } else {
                    format!("{} / {}", v[v.len() / 2], v[v.len() - 1])
                };
                let _ = writeln!(
                    s,
                    "| {k} | {n} | {killed} | {cex} | {eq} | {} | {vk} |",
                    n - killed - cex - eq
                );
            }
            s.push('\n');
        };
        table(&mut s, "stage", &|r| stage_of(&r.mutation).to_string());
        table(&mut s, "operator", &|r| r.mutation.op.family().to_string());
        if survivors.is_empty() {
            s.push_str("No survivors.\n");
        } else {
            let _ = writeln!(s, "Survivors of the simulation ({}):\n", survivors.len());
            for r in survivors {
                let what = match &r.closure {
                    None => "not checked".to_string(),
                    Some(Closure::Equivalent) => "proven equivalent".to_string(),
                    Some(Closure::CounterexampleKilled(k)) => {
                        format!("killed by its counterexample ({})", k.how)
                    }
                    Some(Closure::CounterexampleSurvived) => {
                        "OPEN: its counterexample did not kill it in simulation".to_string()
                    }
                    Some(Closure::OutOfScope(why)) => format!("OPEN: not decidable here: {why}"),
                    Some(Closure::Undecided(_)) => "OPEN: ABC gave up".to_string(),
                };
                let _ = writeln!(
                    s,
                    "- #{} {} [{}] {} — {what}",
                    r.mutation.id,
                    r.mutation.op.family(),
                    stage_of(&r.mutation),
                    r.mutation.text
                );
            }
        }
        s
    }
}

/// The mutants of a run: every single mutation, or `sample` of them drawn
/// with `seed`, in enumeration order.
pub fn choose(all: Vec<Mutation>, sample: Option<usize>, seed: u64) -> Vec<Mutation> {
    match sample {
        Some(n) if n < all.len() => {
            let mut idx: Vec<usize> = (0..all.len()).collect();
            Rng::new(seed ^ 0x6d75_7461_6e74).shuffle(&mut idx);
            let mut keep: Vec<usize> = idx.into_iter().take(n).collect();
            keep.sort_unstable();
            let mut all: Vec<Option<Mutation>> = all.into_iter().map(Some).collect();
            keep.into_iter().filter_map(|i| all[i].take()).collect()
        }
        _ => all,
    }
}

impl UnitVectors {
    /// Append the vector of a counterexample's port values (`in_block`;
    /// `in_bits` and `in_len`).
    fn push(&mut self, ports: &BTreeMap<String, Vec<bool>>, max_bits: u32, tag: u16) {
        let bus = |names: &[(&str, usize)]| {
            let mut b = LeBus::new();
            for &(name, width) in names {
                let v = ports.get(name);
                for i in 0..width {
                    b.put_bit(v.and_then(|v| v.get(i)).copied().unwrap_or(false));
                }
            }
            b
        };
        match self {
            UnitVectors::Comp(v) => {
                let b = bus(&[("in_block", BLOCK_BYTES * 8)]);
                let mut block = [0u8; BLOCK_BYTES];
                block.copy_from_slice(&b.bytes(0, BLOCK_BYTES));
                v.push(CompVector { block, tag });
            }
            UnitVectors::Decomp(v) => {
                let w = max_bits as usize;
                let b = bus(&[("in_bits", w), ("in_len", vectors::LEN_WIDTH as usize)]);
                let mut bits = [0u8; MAX_BLOCK_BYTES];
                let la = b.left_aligned(0, w);
                bits[..la.len()].copy_from_slice(&la);
                v.push(DecompVector {
                    bits,
                    len: b.uint(w, vectors::LEN_WIDTH as usize) as u16,
                    tag,
                });
            }
        }
    }
}

/// What one unit's mutants run on.
struct Bench<'a> {
    cfg: &'a MutateConfig,
    module: &'a hdl::ir::Module,
    /// The unit's Verilog file name.
    file: String,
    stages: usize,
    codec: &'a MpcCodec,
    params: &'a Params,
    set_name: &'a str,
}

/// Kills (`None`: survived) of a list of mutants on one set of vectors.
struct Simulated {
    kills: Vec<Option<Kill>>,
    batches: usize,
    build_seconds: f64,
}

impl Bench<'_> {
    /// Run `muts` on `vectors` (with one random schedule of stalls,
    /// backpressure and resets), in schema batches under `root`.
    fn simulate(
        &self,
        muts: &[Mutation],
        vectors: &UnitVectors,
        tags: &Tags,
        root: &Path,
    ) -> Result<Simulated, MutateError> {
        let cfg = self.cfg;
        let params = self.params;
        let vec_path = root.join("vectors.hex");
        let (inputs, expected): (Inputs<'_>, Vec<Expect>) = match vectors {
            UnitVectors::Comp(v) => {
                vectors::write_comp(&vec_path, v).map_err(RunError::from)?;
                (Inputs::Comp(v), compare::expect_compressor(self.codec, v))
            }
            UnitVectors::Decomp(v) => {
                vectors::write_decomp(&vec_path, v, params.max_bits).map_err(RunError::from)?;
                (
                    Inputs::Decomp(v),
                    compare::expect_decompressor(self.codec, v),
                )
            }
        };
        let n = expected.len();
        let stages = self.stages;
        let sched = Schedule::generate(
            &ScheduleConfig {
                stall: cfg.stall,
                resets: cfg.resets,
                seed: Rng::fork(cfg.seed, 7).next_u64(),
            },
            n,
            stages,
        );
        let sched_path = root.join("schedule.hex");
        sched.write(&sched_path).map_err(RunError::from)?;
        let model = schedule::model_run(&sched, stages, n as u64, u64::MAX / 2);
        let shard = Shard {
            index: 0,
            offset: 0,
            inputs,
            expected: &expected,
            model: Some(&model),
        };

        // batch after batch, in order
        let mut kills: Vec<Option<Kill>> = Vec::with_capacity(muts.len());
        let mut build_seconds = 0.0;
        let batch = cfg.batch.max(1);
        let batches: Vec<std::ops::Range<usize>> = (0..muts.len().div_ceil(batch))
            .map(|b| b * batch..((b + 1) * batch).min(muts.len()))
            .collect();
        let header = vec![
            format!(
                "Mutation schema of the {} of model set {} (mpcgen testbench {}): not a design file.",
                cfg.unit,
                self.set_name,
                env!("CARGO_PKG_VERSION")
            ),
            "Input `mutant` selects one single mutation (0: the unit as generated).".to_string(),
        ];
        let ir_err = |source| MutateError::Ir {
            unit: cfg.unit,
            source,
        };
        for (bi, range) in batches.iter().enumerate() {
            let dir = root.join(format!("batch{bi}"));
            std::fs::create_dir_all(&dir).map_err(io(&dir))?;
            let schema = mutate::schema(self.module, &muts[range.clone()], "mutant", SELECT_WIDTH)
                .map_err(ir_err)?;
            let text = schema.emit(&header).map_err(ir_err)?;
            let vfile = dir.join(&self.file);
            std::fs::write(&vfile, text).map_err(io(&vfile))?;
            let rtl_files = vec![vfile];
            let spec = TbSpec {
                top: "mpc_tb",
                tb_file: sim::TB_FILE,
                tb_source: sim::TB_SOURCE,
                defines: vec![cfg.unit.define(), "MUTANTS"],
                params: vec![
                    ("H", u64::from(params.header_bits)),
                    ("W", u64::from(params.max_bits)),
                ],
                rtl: &rtl_files,
                trace: false,
                // one build serves every run of the batch
                cxx: CxxOpt::for_vectors(n * range.len()),
            };
            let b = sim::build_tb(cfg.sim, &spec, &dir.join(format!("sim-{}", cfg.sim.name())))
                .map_err(RunError::from)?;
            build_seconds += b.seconds;
            // select 0 first: the schema must be the unit as generated
            let check = |k: usize| -> Result<Option<Kill>, MutateError> {
                let rdir = dir.join(format!("run{k}"));
                std::fs::create_dir_all(&rdir).map_err(io(&rdir))?;
                let files = RunFiles {
                    dir: rdir.clone(),
                    vectors: vec_path.clone(),
                    schedule: sched_path.clone(),
                    out: rdir.join("out.txt"),
                };
                let opt = RunOptions {
                    // a pipeline of at most a few stages: a mutant that stops
                    // delivering is given up on soon
                    timeout_cycles: 64 * stages as u64 + 256,
                    vcd: None,
                    plusargs: vec![format!("+mutant={k}")],
                };
                let res = sim::run(&b, &files, n, &opt, None);
                let mut out = crate::output::read(&files.out, cfg.unit, params).unwrap_or_default();
                if let Err(e) = res {
                    out.errors.push(e.to_string());
                }
                let v = compare::compare(&shard, &out, tags, stages);
                let _ = std::fs::remove_dir_all(&rdir);
                if v.ok() {
                    return Ok(None);
                }
                let first_mismatch = v.mismatches.first();
                let how = match (v.problems.first(), first_mismatch) {
                    (_, Some(m)) => format!("vector {}: {}", m.idx, m.what),
                    (Some(p), None) => p.clone(),
                    (None, None) => "failed".to_string(),
                };
                Ok(Some(Kill {
                    vectors: first_mismatch.map(|m| m.idx + 1),
                    how,
                }))
            };
            if let Some(k) = check(0)? {
                return Err(MutateError::Baseline {
                    unit: cfg.unit,
                    batch: bi,
                    problem: k.how,
                });
            }
            let found: Vec<Outcome> = crate::work_queue(range.len(), cfg.jobs, |i| check(i + 1));
            for r in found {
                kills.push(r?);
            }
        }
        Ok(Simulated {
            kills,
            batches: batches.len(),
            build_seconds,
        })
    }
}

/// Run the mutation test of one unit.
pub fn run(cfg: &MutateConfig) -> Result<MutateReport, MutateError> {
    let t0 = Instant::now();
    let set = rtl::load_set(&cfg.model).map_err(RunError::from)?;
    let ir_err = |source| MutateError::Ir {
        unit: cfg.unit,
        source,
    };
    let (module, desc) = match cfg.unit {
        Unit::Compressor => hdl::mpc::compressor::build_described(&set).map_err(ir_err)?,
        Unit::Decompressor => hdl::mpc::decompressor::build_described(&set).map_err(ir_err)?,
        Unit::Loopback => return Err(MutateError::Unit(cfg.unit)),
    };
    let mut all = mutate::enumerate(&module);
    let enumerated = all.len();
    if let Some(ids) = &cfg.only {
        if let Some(&bad) = ids.iter().find(|&&i| i >= enumerated) {
            return Err(MutateError::NoSuchMutant {
                unit: cfg.unit,
                id: bad,
                count: enumerated,
            });
        }
        all.retain(|m| ids.contains(&m.id));
    }
    let muts = choose(all, cfg.sample, cfg.seed);

    // vectors and expectations as `cosim mpc` makes them
    let codec = MpcCodec::new(&set);
    let mut tags = Tags::new();
    let gen = GenConfig {
        blocks: cfg.blocks,
        seed: cfg.seed,
        corpus: cfg.corpus.clone(),
    };
    let root = cfg
        .build
        .join(&set.name)
        .join("mutate")
        .join(cfg.unit.name());
    std::fs::create_dir_all(&root).map_err(io(&root))?;
    let root = root.canonicalize().map_err(io(&root))?;
    let params = Params::of(&set);
    let vectors = match cfg.unit {
        Unit::Compressor => UnitVectors::Comp(
            vectors::compressor_vectors(&set, &gen, &mut tags).map_err(RunError::from)?,
        ),
        _ => UnitVectors::Decomp(
            vectors::decompressor_vectors(&codec, &gen, &mut tags).map_err(RunError::from)?,
        ),
    };
    let bench = Bench {
        cfg,
        module: &module,
        file: format!("{}.v", desc.module),
        stages: desc.latency,
        codec: &codec,
        params: &params,
        set_name: &set.name,
    };
    let first = bench.simulate(&muts, &vectors, &tags, &root)?;
    let mut build_seconds = first.build_seconds;
    let mut batches = first.batches;
    let mut results: Vec<MutantResult> = muts
        .into_iter()
        .zip(first.kills)
        .map(|(mutation, kill)| MutantResult {
            mutation,
            kill,
            closure: None,
        })
        .collect();

    let mut prove_seconds = 0.0;
    if cfg.prove {
        // survivors: decide each formally; counterexamples become vectors
        let open: Vec<usize> = (0..results.len())
            .filter(|&i| results[i].kill.is_none())
            .collect();
        let open_muts: Vec<Mutation> = open.iter().map(|&i| results[i].mutation.clone()).collect();
        let decided = equiv::decide_all(
            &module,
            &open_muts,
            &root.join("equiv"),
            cfg.prove_seconds,
            cfg.jobs,
        )?;
        let mut cex_tags = Tags::new();
        let cex_tag = cex_tags.id("counterexample");
        let mut cex_vectors = match &vectors {
            UnitVectors::Comp(_) => UnitVectors::Comp(Vec::new()),
            UnitVectors::Decomp(_) => UnitVectors::Decomp(Vec::new()),
        };
        let mut with_cex: Vec<usize> = Vec::new();
        for (&i, d) in open.iter().zip(decided) {
            prove_seconds += d.seconds;
            results[i].closure = Some(match d.verdict {
                Verdict::Equivalent => Closure::Equivalent,
                Verdict::OutOfScope(why) => Closure::OutOfScope(why),
                Verdict::Undecided(said) => Closure::Undecided(said),
                Verdict::Counterexample(ports) => {
                    cex_vectors.push(&ports, params.max_bits, cex_tag);
                    with_cex.push(i);
                    Closure::CounterexampleSurvived
                }
            });
        }
        if !with_cex.is_empty() {
            let muts: Vec<Mutation> = with_cex
                .iter()
                .map(|&i| results[i].mutation.clone())
                .collect();
            let dir = root.join("counterexamples");
            std::fs::create_dir_all(&dir).map_err(io(&dir))?;
            let again = bench.simulate(&muts, &cex_vectors, &cex_tags, &dir)?;
            build_seconds += again.build_seconds;
            batches += again.batches;
            for (&i, kill) in with_cex.iter().zip(again.kills) {
                if let Some(k) = kill {
                    results[i].closure = Some(Closure::CounterexampleKilled(k));
                }
            }
        }
    }
    Ok(MutateReport {
        unit: cfg.unit,
        sim: cfg.sim,
        enumerated,
        vectors: vectors.len(),
        results,
        batches,
        build_seconds,
        prove_seconds,
        seconds: t0.elapsed().as_secs_f64(),
    })
}
