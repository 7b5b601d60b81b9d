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

use golden::mpc::{ModelSet, MpcCodec, BLOCK_BYTES, MAX_BLOCK_BYTES};
use hdl::ir::mutate::{self, Mutation, Site};
use hdl::ir::Module;
use hdl::unit::UnitDescription;

use crate::compare::{self, Expect, Shard};
use crate::equiv::{self, EquivError, Verdict};
use crate::records::Protocol;
use crate::rng::Rng;
use crate::rtl::{self, Params};
use crate::run::{RunError, UnitVectors};
use crate::schedule::{self, Schedule, ScheduleConfig};
use crate::sim::{self, CxxOpt, RunFiles, RunOptions, TbSpec};
use crate::slots::{self as slot, Plan, SlotExpect, SlotOptions, SlotUnit, SlotVectors};
use crate::stream_unit::{self, LeBus, SimRun, StreamTarget};
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
        unit: String,
        #[source]
        source: hdl::ir::IrError,
    },
    #[error("mutation testing covers the compressor and the decompressor, not the {0}")]
    Unit(Unit),
    #[error(
        "the {unit} schema of batch {batch} fails with no mutant selected (select 0): {problem}"
    )]
    Baseline {
        unit: String,
        batch: usize,
        problem: String,
    },
    #[error("the {unit} has {count} single mutations (ids 0..{count}); there is no {id}")]
    NoSuchMutant {
        unit: String,
        id: usize,
        count: usize,
    },
    #[error(transparent)]
    MagBdi(#[from] crate::magbdi::MagBdiSimError),
    #[error(transparent)]
    Dpc(#[from] crate::dpc::DpcSimError),
    #[error(transparent)]
    Stream(#[from] crate::stream_unit::StreamError),
    #[error(transparent)]
    Equiv(#[from] EquivError),
    #[error(transparent)]
    Slots(#[from] slot::SlotsError),
    #[error("{0}")]
    Slot(String),
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

/// The unit under test.
#[derive(Clone, Debug)]
pub enum Design {
    /// The MPC compressor or decompressor of a model set.
    Mpc { model: PathBuf, unit: Unit },
    /// The MPC compressor or decompressor of a model set with programmable
    /// slots, programmed as `cosim mpc --program-slots` programs them.
    MpcSlots {
        model: PathBuf,
        unit: Unit,
        slots: SlotUnit,
        options: SlotOptions,
        /// Pipeline stages of the compressor
        /// ([`hdl::mpc::slots::SLOT_COMPRESSOR_STAGE_RANGE`]; `gen
        /// --program-slots K --compressor-stages N`); the decompressor
        /// ignores it.
        compressor_stages: usize,
    },
    /// The MAG-aware BDI compressor or decompressor.
    MagBdi {
        params: golden::magbdi::Params,
        unit: Unit,
    },
    /// One of the five DPC units.
    Dpc {
        params: golden::dpc::DpcParams,
        unit: hdl::dpc::DpcUnit,
        /// Pipeline stages of the decompressors (`gen dpc
        /// --decompressor-stages`); the compressors ignore it.
        decompressor_stages: usize,
    },
}

impl Design {
    /// The work directory's name under the build root (the model set, the
    /// BDI or DPC configuration), as `cosim` names it.
    pub fn config_dir(&self) -> Result<String, MutateError> {
        Ok(match self {
            Design::Mpc { model, .. } => rtl::load_set(model).map_err(RunError::from)?.name,
            Design::MpcSlots {
                model,
                unit,
                slots,
                compressor_stages,
                ..
            } => {
                let dir = slots.dir_name(&rtl::load_set(model).map_err(RunError::from)?);
                match unit {
                    // a compressor of another depth: a directory of its own
                    Unit::Compressor
                        if *compressor_stages != hdl::mpc::slots::SLOT_COMPRESSOR_STAGES =>
                    {
                        format!("{dir}-c{compressor_stages}")
                    }
                    _ => dir,
                }
            }
            Design::MagBdi { params, .. } => hdl::magbdi::config_name(params),
            Design::Dpc {
                params,
                unit,
                decompressor_stages,
            } => {
                let dir = crate::dpc::config_name(params);
                match unit {
                    // a decompressor of another depth: a directory of its own
                    hdl::dpc::DpcUnit::Decompressor(_)
                        if *decompressor_stages != hdl::dpc::DECOMPRESSOR_LATENCY as usize =>
                    {
                        format!("{dir}-d{decompressor_stages}")
                    }
                    _ => dir,
                }
            }
        })
    }

    /// The unit's short name (`compressor`, `dpc_truc_decompressor`).
    pub fn unit_name(&self) -> &'static str {
        match self {
            Design::Mpc { unit, .. }
            | Design::MpcSlots { unit, .. }
            | Design::MagBdi { unit, .. } => unit.name(),
            Design::Dpc { unit, .. } => unit.module_name(),
        }
    }
}

/// What to run.
#[derive(Clone, Debug)]
pub struct MutateConfig {
    pub design: Design,
    pub build: PathBuf,
    pub sim: Simulator,
    /// Vectors per mutant run.
    pub blocks: usize,
    pub seed: u64,
    pub corpus: Option<PathBuf>,
    /// At most this many mutants, drawn at random with `seed` (`None`:
    /// every one).
    pub sample: Option<usize>,
    /// Only the mutations with these ids (before sampling; `None`: all).
    pub only: Option<Vec<usize>>,
    /// Only the control mutations ([`is_control`]; before sampling).
    pub control_only: bool,
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
    /// Which mutations are drawn from (before sampling).
    pub scope: Scope,
}

/// Which mutations a run draws from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Scope {
    /// Every single mutation.
    #[default]
    All,
    /// The logic of the programmable slots ([`slot_logic`]).
    Slots,
}

/// Whether a signal name belongs to the programmable slots: the generator
/// names their logic `cfg_*` (configuration port decode, shadow and active
/// registers, commit and load), `*slot*` (slot predictions, residues,
/// planes, Benes levels, symbols, scores, wins, the decompressor's slot
/// rules and restoration) and `*epoch*` (epoch output and check).
pub fn is_slot_name(name: &str) -> bool {
    name.starts_with("cfg_") || name.contains("slot") || name.contains("epoch")
}

/// The signals of the slot logic of a unit: those [`is_slot_name`]
/// accepts and every signal whose driver (value, next value, enable) reads
/// one of them directly (the selection among predictors and slots, the
/// model IDs and header widths of the loaded image, the pipeline's hold
/// while a commit waits).
pub fn slot_logic(m: &Module) -> std::collections::BTreeSet<String> {
    mutate::named_and_readers(m, &is_slot_name)
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
    /// The first handshake rule the testbench saw broken, if any.
    pub rule: Option<Protocol>,
    /// The killing vector's input port values (bits least significant
    /// first), when a differing output killed it.
    pub input: Option<BTreeMap<String, Vec<bool>>>,
}

/// Where a kill points a user: what a mutation-free unit would have shown
/// differently first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Located {
    /// A handshake rule of the testbench (tb/stream_driver.svh), in a cycle.
    Rule(Protocol),
    /// The first pipeline stage whose registers (or, after the last stage,
    /// outputs) differ from the unit as generated when the killing vector
    /// flows through alone, and the first such signal (IR evaluation).
    Stage { stage: usize, signal: String },
    /// Neither: the vector alone flows through unchanged (the fault needs
    /// a stall, a reset or another vector), or the kill was not by a
    /// differing output.
    Nowhere(String),
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
    /// For a kill (in simulation or by a counterexample), where it points.
    pub located: Option<Located>,
}

/// The pipeline stage a section title names (`stage 2: ...`).
pub fn stage_number(section: &str) -> Option<usize> {
    section
        .strip_prefix("stage ")?
        .split(':')
        .next()?
        .trim()
        .parse()
        .ok()
}

/// A control mutation: of the pipeline control (a signal outside every
/// stage: valid flags, ready, load enables), or of a register's enable or
/// reset value.
pub fn is_control(m: &Mutation) -> bool {
    m.section.as_deref().and_then(stage_number).is_none() || m.site != Site::Value
}

impl MutantResult {
    /// Whether the kill points at the mutated stage: a data-path mutant's
    /// first differing stage is its own; a control mutant ([`is_control`])
    /// broke a named handshake rule.
    pub fn located_at_its_stage(&self) -> bool {
        let own = self.mutation.section.as_deref().and_then(stage_number);
        match (&self.located, own) {
            (Some(Located::Stage { stage, .. }), Some(s)) => *stage == s,
            // the pipeline control's own signal (a valid flag) differs
            (Some(Located::Stage { signal, .. }), None) => *signal == self.mutation.signal,
            (Some(Located::Rule(_)), _) => is_control(&self.mutation),
            _ => false,
        }
    }
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
    /// The formal check gave up within its limits (what it said).
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
    /// The unit and its model set or configuration.
    pub unit: String,
    pub sim: Simulator,
    /// Single mutations of the unit.
    pub enumerated: usize,
    /// Only its control mutations were drawn from.
    pub control_only: bool,
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
            "### {} on {}: {} of {} {}mutants killed in simulation ({} enumerated, {} vectors per run, {} builds, {:.0} s, of which {:.0} s building and {:.0} s in formal checks)\n",
            self.unit,
            self.sim,
            self.killed(),
            self.results.len(),
            if self.control_only { "control " } else { "" },
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
        #[derive(Default)]
        struct Row {
            mutants: usize,
            killed: usize,
            cex: usize,
            equivalent: usize,
            located: usize,
            to_kill: Vec<u64>,
        }
        let table = |s: &mut String, title: &str, key: &dyn Fn(&MutantResult) -> String| {
            let mut rows: BTreeMap<String, Row> = BTreeMap::new();
            for r in &self.results {
                let e = rows.entry(key(r)).or_default();
                e.mutants += 1;
                if let Some(k) = &r.kill {
                    e.killed += 1;
                    if let Some(v) = k.vectors {
                        e.to_kill.push(v);
                    }
                }
                match &r.closure {
                    Some(Closure::CounterexampleKilled(_)) => e.cex += 1,
                    Some(Closure::Equivalent) => e.equivalent += 1,
                    _ => {}
                }
                e.located += usize::from(r.located_at_its_stage());
            }
            let _ = writeln!(
                s,
                "| {title} | mutants | killed | killed by counterexample | equivalent | open | kills located at the mutated stage | vectors to kill (median / max) |\n|---|---|---|---|---|---|---|---|"
            );
            for (k, mut e) in rows {
                e.to_kill.sort_unstable();
                let v = &e.to_kill;
                let vk = if v.is_empty() {
                    "-".to_string()
                } else {
                    format!("{} / {}", v[v.len() / 2], v[v.len() - 1])
                };
                let _ = writeln!(
                    s,
                    "| {k} | {} | {} | {} | {} | {} | {} of {} | {vk} |",
                    e.mutants,
                    e.killed,
                    e.cex,
                    e.equivalent,
                    e.mutants - e.killed - e.cex - e.equivalent,
                    e.located,
                    e.killed + e.cex
                );
            }
            s.push('\n');
        };
        table(&mut s, "stage", &|r| stage_of(&r.mutation).to_string());
        table(&mut s, "operator", &|r| r.mutation.op.family().to_string());
        // kills that do not point at their stage
        let astray: Vec<&MutantResult> = self
            .results
            .iter()
            .filter(|r| r.located.is_some() && !r.located_at_its_stage())
            .collect();
        if !astray.is_empty() {
            let _ = writeln!(
                s,
                "Kills not located at the mutated stage ({}):\n",
                astray.len()
            );
            for r in astray {
                let at = match &r.located {
                    Some(Located::Rule(p)) => format!(
                        "handshake rule {} in cycle {}: {}",
                        p.code,
                        p.cycle,
                        p.describe()
                    ),
                    Some(Located::Stage { stage, signal }) => {
                        format!("stage {stage} (first differing signal `{signal}`)")
                    }
                    Some(Located::Nowhere(why)) => format!("nowhere: {why}"),
                    None => String::new(),
                };
                let _ = writeln!(
                    s,
                    "- #{} {} [{}] {} — {at}",
                    r.mutation.id,
                    r.mutation.op.family(),
                    stage_of(&r.mutation),
                    r.mutation.text
                );
            }
            s.push('\n');
        }
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
                    Some(Closure::Undecided(said)) => {
                        let last = said.lines().last().unwrap_or("");
                        format!("OPEN: undecided: {last}")
                    }
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

    /// The input port values of vector `i` (bits least significant first).
    fn ports(&self, i: usize, max_bits: u32) -> BTreeMap<String, Vec<bool>> {
        let mut out = BTreeMap::new();
        match self {
            UnitVectors::Comp(v) => {
                let mut b = LeBus::new();
                if let Some(x) = v.get(i) {
                    b.put_bytes(&x.block);
                }
                out.insert("in_block".to_string(), bits_of(&b, 0, BLOCK_BYTES * 8));
            }
            UnitVectors::Decomp(v) => {
                let w = max_bits as usize;
                let mut b = LeBus::new();
                if let Some(x) = v.get(i) {
                    b.put_left_aligned(&x.bits, w, w);
                    b.put_uint(u64::from(x.len), vectors::LEN_WIDTH as usize);
                }
                out.insert("in_bits".to_string(), bits_of(&b, 0, w));
                out.insert(
                    "in_len".to_string(),
                    bits_of(&b, w, vectors::LEN_WIDTH as usize),
                );
            }
        }
        out
    }
}

/// `w` bits of `b` from `lo`, least significant first.
fn bits_of(b: &LeBus, lo: usize, w: usize) -> Vec<bool> {
    (lo..lo + w).map(|i| b.bit(i)).collect()
}

/// The vectors of one run.
enum Vecs {
    Mpc {
        vectors: UnitVectors,
        tags: Tags,
    },
    Stream(Vec<LeBus>),
    /// A unit with slots: the vectors, what each must give, the plan of
    /// images and configuration writes (one shard).
    Slots {
        vectors: SlotVectors,
        expected: Vec<SlotExpect>,
        plan: Box<Plan>,
        tags: Tags,
    },
    /// Counterexamples of a unit with slots, collected as port values
    /// (made into [`Vecs::Slots`] by [`Bench::slot_counterexamples`]).
    SlotPorts(Vec<BTreeMap<String, Vec<bool>>>),
}

impl Vecs {
    fn len(&self) -> usize {
        match self {
            Vecs::Mpc { vectors, .. } => vectors.len(),
            Vecs::Stream(v) => v.len(),
            Vecs::Slots { vectors, .. } => vectors.len(),
            Vecs::SlotPorts(v) => v.len(),
        }
    }
}

/// How the unit under test runs.
enum Kind<'a> {
    Mpc {
        unit: Unit,
        codec: Box<MpcCodec>,
        params: Params,
    },
    Stream(&'a StreamTarget),
    /// An MPC unit with programmable slots.
    Slots {
        unit: Unit,
        set: Box<ModelSet>,
        slots: SlotUnit,
        params: Params,
    },
}

/// What one unit's mutants run on.
struct Bench<'a> {
    cfg: &'a MutateConfig,
    module: &'a hdl::ir::Module,
    desc: &'a UnitDescription,
    /// The unit and its model set or configuration.
    label: String,
    kind: Kind<'a>,
}

/// Kills (`None`: survived) of a list of mutants on one set of vectors.
struct Simulated {
    kills: Vec<Option<Kill>>,
    batches: usize,
    build_seconds: f64,
}

impl Bench<'_> {
    fn ir_err(&self) -> impl Fn(hdl::ir::IrError) -> MutateError + '_ {
        move |source| MutateError::Ir {
            unit: self.label.clone(),
            source,
        }
    }

    /// The input port values of vector `i`.
    fn ports(&self, vecs: &Vecs, i: usize) -> BTreeMap<String, Vec<bool>> {
        match (vecs, &self.kind) {
            (Vecs::Mpc { vectors, .. }, Kind::Mpc { params, .. }) => {
                vectors.ports(i, params.max_bits)
            }
            (Vecs::Stream(v), Kind::Stream(t)) => {
                let mut out = BTreeMap::new();
                let mut lo = 0;
                for (name, w) in &t.inputs {
                    let bits = v.get(i).map(|b| bits_of(b, lo, *w)).unwrap_or_default();
                    out.insert(name.clone(), bits);
                    lo += w;
                }
                out
            }
            (Vecs::Slots { vectors, .. }, Kind::Slots { params, .. }) => {
                slot_ports(vectors, i, params.max_bits)
            }
            _ => BTreeMap::new(),
        }
    }

    /// No vectors yet, of this bench's kind.
    fn no_vectors(&self) -> Vecs {
        match &self.kind {
            Kind::Mpc { unit, .. } => {
                let vectors = match unit {
                    Unit::Compressor => UnitVectors::Comp(Vec::new()),
                    _ => UnitVectors::Decomp(Vec::new()),
                };
                Vecs::Mpc {
                    vectors,
                    tags: Tags::new(),
                }
            }
            Kind::Stream(_) => Vecs::Stream(Vec::new()),
            Kind::Slots { .. } => Vecs::SlotPorts(Vec::new()),
        }
    }

    /// The counterexamples of a unit with slots as a run: each vector
    /// after its own configuration ([`slot::counterexample_run`]); `Err`:
    /// the index of a counterexample whose configuration the hardware's
    /// behaviour is not specified for, and why.
    fn slot_counterexamples(&self, vecs: Vecs) -> Result<Vecs, (usize, String)> {
        match (vecs, &self.kind) {
            (
                Vecs::SlotPorts(ports),
                Kind::Slots {
                    unit,
                    set,
                    slots,
                    params,
                },
            ) => {
                let mut tags = Tags::new();
                let (plan, vectors, expected) = slot::counterexample_run(
                    *unit,
                    set,
                    *slots,
                    &ports,
                    params.max_bits,
                    &mut tags,
                )?;
                Ok(Vecs::Slots {
                    vectors,
                    expected,
                    plan: Box::new(plan),
                    tags,
                })
            }
            (v, _) => Ok(v),
        }
    }

    /// Run the counterexamples `cexes` (result index, input port values)
    /// as vectors against their mutants (on a new schema build under
    /// `dir`); a mutant that fails is closed as killed by its
    /// counterexample. The build seconds and batches it took.
    fn replay(
        &self,
        results: &mut [MutantResult],
        cexes: &[(usize, BTreeMap<String, Vec<bool>>)],
        dir: &Path,
    ) -> Result<(f64, usize), MutateError> {
        if cexes.is_empty() {
            return Ok((0.0, 0));
        }
        let mut vecs = self.no_vectors();
        for (_, ports) in cexes {
            self.push(&mut vecs, ports);
        }
        let muts: Vec<Mutation> = cexes
            .iter()
            .map(|&(i, _)| results[i].mutation.clone())
            .collect();
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        let vecs = match self.slot_counterexamples(vecs) {
            Ok(v) => v,
            Err((i, why)) => {
                return Err(MutateError::Slot(format!(
                    "the counterexample of mutant {} holds a configuration the hardware's behaviour is not specified for (the views assume valid ones): {why}",
                    muts.get(i).map_or(0, |m| m.id)
                )))
            }
        };
        let again = self.simulate(&muts, &vecs, dir)?;
        for (&(i, _), kill) in cexes.iter().zip(again.kills) {
            if let Some(k) = kill {
                results[i].closure = Some(Closure::CounterexampleKilled(k));
            }
        }
        Ok((again.build_seconds, again.batches))
    }

    /// Append a counterexample's port values as a vector.
    fn push(&self, vecs: &mut Vecs, ports: &BTreeMap<String, Vec<bool>>) {
        match (vecs, &self.kind) {
            (Vecs::Mpc { vectors, tags }, Kind::Mpc { params, .. }) => {
                let tag = tags.id("counterexample");
                vectors.push(ports, params.max_bits, tag);
            }
            (Vecs::Stream(v), Kind::Stream(t)) => v.push(t.bus_of(ports)),
            (Vecs::SlotPorts(v), Kind::Slots { .. }) => v.push(ports.clone()),
            _ => {}
        }
    }

    /// Run `muts` on `vecs` (with one random schedule of stalls,
    /// backpressure and resets), in schema batches under `root`.
    fn simulate(
        &self,
        muts: &[Mutation],
        vecs: &Vecs,
        root: &Path,
    ) -> Result<Simulated, MutateError> {
        let cfg = self.cfg;
        let vec_path = root.join("vectors.hex");
        let expected: Vec<Expect> = match (vecs, &self.kind) {
            (Vecs::Mpc { vectors, .. }, Kind::Mpc { codec, params, .. }) => match vectors {
                UnitVectors::Comp(v) => {
                    vectors::write_comp(&vec_path, v).map_err(RunError::from)?;
                    compare::expect_compressor(codec, v)
                }
                UnitVectors::Decomp(v) => {
                    vectors::write_decomp(&vec_path, v, params.max_bits).map_err(RunError::from)?;
                    compare::expect_decompressor(codec, v)
                }
            },
            (Vecs::Stream(v), Kind::Stream(_)) => {
                let text: String = v.iter().map(|b| b.hex() + "\n").collect();
                std::fs::write(&vec_path, text).map_err(io(&vec_path))?;
                Vec::new()
            }
            (Vecs::Slots { vectors, plan, .. }, Kind::Slots { params, .. }) => {
                vectors.write(&vec_path, 0..vectors.len(), params.max_bits)?;
                if let Some(shard) = plan.shards.first() {
                    shard.write_cfg(&root.join("shard0.cfg"))?;
                }
                Vec::new()
            }
            _ => Vec::new(),
        };
        let cfg_path = root.join("shard0.cfg");
        let n = vecs.len();
        let stages = self.desc.latency;
        let sched = self.schedule(n);
        let sched_path = root.join("schedule.hex");
        sched.write(&sched_path).map_err(RunError::from)?;
        let model = schedule::model_run(&sched, stages, n as u64, u64::MAX / 2);

        // batch after batch, in order
        let mut kills: Vec<Option<Kill>> = Vec::with_capacity(muts.len());
        let mut build_seconds = 0.0;
        let batch = cfg.batch.max(1);
        let batches: Vec<std::ops::Range<usize>> = (0..muts.len().div_ceil(batch))
            .map(|b| b * batch..((b + 1) * batch).min(muts.len()))
            .collect();
        let header = vec![
            format!(
                "Mutation schema of {} (mpcgen testbench {}): not a design file.",
                self.label,
                env!("CARGO_PKG_VERSION")
            ),
            "Input `mutant` selects one single mutation (0: the unit as generated).".to_string(),
        ];
        // a pipeline of at most a few stages: a mutant that stops delivering
        // is given up on soon (units with slots: after the configuration
        // writes of an image, which hold the input, too)
        let timeout = match vecs {
            // after a reset the writer replays every write due so far
            Vecs::Slots { plan, .. } => {
                let writes: usize = plan.shards.iter().map(|s| s.writes.len()).sum();
                64 * stages as u64 + 2048 + writes as u64
            }
            _ => 64 * stages as u64 + 256,
        };
        let pb = datafiles::progress::bar(
            muts.len() as u64,
            "mutants",
            &format!("cosim mutate {}", self.label),
        );
        for (bi, range) in batches.iter().enumerate() {
            let dir = root.join(format!("batch{bi}"));
            std::fs::create_dir_all(&dir).map_err(io(&dir))?;
            let schema = mutate::schema(self.module, &muts[range.clone()], "mutant", SELECT_WIDTH)
                .map_err(self.ir_err())?;
            let text = schema.emit(&header).map_err(self.ir_err())?;
            let vfile = dir.join(format!("{}.v", self.desc.module));
            std::fs::write(&vfile, text).map_err(io(&vfile))?;
            let rtl_files = vec![vfile];
            // one build serves every run of the batch
            let cxx = CxxOpt::for_vectors(n * range.len());
            let spec = match &self.kind {
                Kind::Mpc { unit, params, .. } => TbSpec {
                    top: "mpc_tb",
                    tb_file: sim::TB_FILE,
                    tb_source: sim::TB_SOURCE,
                    defines: vec![unit.define(), "MUTANTS"],
                    params: vec![
                        ("H", u64::from(params.header_bits)),
                        ("W", u64::from(params.max_bits)),
                    ],
                    rtl: &rtl_files,
                    trace: false,
                    cxx,
                },
                Kind::Slots { unit, params, .. } => TbSpec {
                    top: "mpc_slots_tb",
                    tb_file: sim::SLOTS_TB_FILE,
                    tb_source: sim::SLOTS_TB_SOURCE,
                    defines: vec![unit.define(), "MUTANTS"],
                    params: vec![
                        ("H", u64::from(params.header_bits)),
                        ("W", u64::from(params.max_bits)),
                    ],
                    rtl: &rtl_files,
                    trace: false,
                    cxx,
                },
                Kind::Stream(t) => TbSpec {
                    top: t.top,
                    tb_file: t.tb_file,
                    tb_source: t.tb_source,
                    defines: vec![&t.define, "MUTANTS"],
                    params: t.params.clone(),
                    rtl: &rtl_files,
                    trace: false,
                    cxx,
                },
            };
            let b = sim::build_tb(cfg.sim, &spec, &dir.join(format!("sim-{}", cfg.sim.name())))
                .map_err(RunError::from)?;
            build_seconds += b.seconds;
            let check = |k: usize| -> Result<Option<Kill>, MutateError> {
                let rdir = dir.join(format!("run{k}"));
                std::fs::create_dir_all(&rdir).map_err(io(&rdir))?;
                let kill = match (vecs, &self.kind) {
                    (Vecs::Mpc { vectors, tags }, Kind::Mpc { unit, params, .. }) => {
                        let files = RunFiles {
                            dir: rdir.clone(),
                            vectors: vec_path.clone(),
                            schedule: sched_path.clone(),
                            out: rdir.join("out.txt"),
                        };
                        let opt = RunOptions {
                            timeout_cycles: timeout,
                            vcd: None,
                            plusargs: vec![format!("+mutant={k}")],
                            stages,
                        };
                        let res = sim::run(&b, &files, n, &opt, None);
                        let mut out =
                            compare::read_records(&files.out, *unit, params).unwrap_or_default();
                        if let Err(e) = res {
                            out.errors.push(e.to_string());
                        }
                        let shard = Shard {
                            index: 0,
                            offset: 0,
                            inputs: vectors.inputs(0..n),
                            expected: &expected,
                            model: Some(&model),
                        };
                        let v = compare::compare(&shard, &out, tags, stages);
                        if v.ok() {
                            None
                        } else {
                            let first = v.mismatches.first();
                            let how = match (v.problems.first(), first) {
                                (_, Some(m)) => format!("vector {}: {}", m.idx, m.what),
                                (Some(p), None) => p.clone(),
                                (None, None) => "failed".to_string(),
                            };
                            Some(Kill {
                                vectors: first.map(|m| m.idx + 1),
                                how,
                                rule: out.protocol.first().copied(),
                                input: first.map(|m| self.ports(vecs, m.idx as usize)),
                            })
                        }
                    }
                    (
                        Vecs::Slots {
                            vectors,
                            expected,
                            plan,
                            tags,
                        },
                        Kind::Slots { unit, params, .. },
                    ) => {
                        let files = RunFiles {
                            dir: rdir.clone(),
                            vectors: vec_path.clone(),
                            schedule: sched_path.clone(),
                            out: rdir.join("out.txt"),
                        };
                        // the handshake rules of an ideal pipeline are off:
                        // a commit's drain holds in_ready low on purpose
                        let opt = RunOptions {
                            timeout_cycles: timeout,
                            vcd: None,
                            plusargs: vec![
                                format!("+mutant={k}"),
                                format!("+cfg={}", cfg_path.display()),
                            ],
                            stages: 0,
                        };
                        let res = sim::run(&b, &files, n, &opt, None);
                        let mut out =
                            slot::read_records(&files.out, *unit, params).unwrap_or_default();
                        if let Err(e) = res {
                            out.errors.push(e.to_string());
                        }
                        let shard = slot::SlotShard {
                            index: 0,
                            offset: 0,
                            plan: &plan.shards[0],
                            images: &plan.images,
                            vectors,
                            first: 0,
                            expected,
                        };
                        let v = slot::compare(&shard, &out, tags, stages);
                        if v.ok() {
                            None
                        } else {
                            let first = v.mismatches.first();
                            let how = match (v.problems.first(), first) {
                                (_, Some(m)) => format!("vector {}: {}", m.idx, m.what),
                                (Some(p), None) => p.clone(),
                                (None, None) => "failed".to_string(),
                            };
                            Some(Kill {
                                vectors: first.map(|m| m.idx + 1),
                                how,
                                rule: out.protocol.first().copied(),
                                input: first.map(|m| self.ports(vecs, m.idx as usize)),
                            })
                        }
                    }
                    (Vecs::Stream(v), Kind::Stream(t)) => {
                        let r = SimRun {
                            sim: cfg.sim,
                            unit: &t.desc.module,
                            cmd: b.command_line(),
                            cached: b.cached,
                            dir: &rdir,
                            vectors: &vec_path,
                            schedule_path: &sched_path,
                            schedule: &sched,
                            stages,
                            n,
                            out_width: t.out_width,
                            coverage: String::new(),
                            started: Instant::now(),
                            timeout,
                            plusargs: vec![format!("+mutant={k}")],
                            progress: false,
                        };
                        // a run that cannot finish is a kill too
                        let report =
                            match stream_unit::run_and_check(&r, |idx, o| match v.get(idx) {
                                Some(input) => {
                                    (t.check)(input, o).map_err(|e| format!("vector {idx}: {e}"))
                                }
                                None => Err(format!("output index {idx} out of range")),
                            }) {
                                Ok(rep) => rep,
                                Err(e) => {
                                    let _ = std::fs::remove_dir_all(&rdir);
                                    return Ok(Some(Kill {
                                        vectors: None,
                                        how: e.to_string(),
                                        rule: None,
                                        input: None,
                                    }));
                                }
                            };
                        if report.ok() {
                            None
                        } else {
                            let first = report.first_mismatch;
                            let how = first
                                .and_then(|i| {
                                    report
                                        .problems
                                        .iter()
                                        .find(|p| p.starts_with(&format!("vector {i}:")))
                                })
                                .or(report.problems.first())
                                .cloned()
                                .unwrap_or_else(|| "failed".to_string());
                            Some(Kill {
                                vectors: first.map(|i| i as u64 + 1),
                                how,
                                rule: report.protocol.first().copied(),
                                input: first.map(|i| self.ports(vecs, i)),
                            })
                        }
                    }
                    _ => None,
                };
                let _ = std::fs::remove_dir_all(&rdir);
                Ok(kill)
            };
            // select 0 first: the schema must be the unit as generated
            if let Some(k) = check(0)? {
                return Err(MutateError::Baseline {
                    unit: self.label.clone(),
                    batch: bi,
                    problem: k.how,
                });
            }
            let found: Vec<Outcome> = crate::work_queue(range.len(), cfg.jobs, |i| {
                let r = check(i + 1);
                pb.inc(1);
                r
            });
            for r in found {
                kills.push(r?);
            }
        }
        pb.finish_and_clear();
        Ok(Simulated {
            kills,
            batches: batches.len(),
            build_seconds,
        })
    }

    /// The stall, backpressure and reset schedule of a run of `n` vectors.
    fn schedule(&self, n: usize) -> Schedule {
        Schedule::generate(
            &ScheduleConfig {
                stall: self.cfg.stall,
                resets: self.cfg.resets,
                seed: Rng::fork(self.cfg.seed, 7).next_u64(),
            },
            n,
            self.desc.latency,
        )
    }

    /// Where a kill points ([`Located`]): the handshake rule it broke;
    /// else the first stage where the killing vector, flowing alone,
    /// differs ([`first_difference`]); else, for a kill of the run on
    /// `vecs` (`replay`), the first stage register holding a valid vector
    /// that differs when the run is replayed ([`replay_difference`]).
    fn locate(&self, mu: &Mutation, kill: &Kill, vecs: &Vecs, replay: bool) -> Located {
        if let Some(p) = kill.rule {
            return Located::Rule(p);
        }
        let Some(ports) = &kill.input else {
            return Located::Nowhere(kill.how.clone());
        };
        if let (Vecs::Slots { plan, .. }, Some(k)) = (vecs, kill.vectors) {
            // the killing vector alone, after the writes of its image
            let writes = slot_writes_before(plan, k.saturating_sub(1) as usize);
            return match first_difference_programmed(self.module, mu, self.desc, ports, &writes) {
                Ok(l) => l,
                Err(e) => Located::Nowhere(format!("IR evaluation: {e}")),
            };
        }
        let alone = match first_difference(self.module, mu, self.desc, ports) {
            Ok(l) => l,
            Err(e) => return Located::Nowhere(format!("IR evaluation: {e}")),
        };
        match (&alone, kill.vectors) {
            (Located::Nowhere(_), Some(k)) if replay => {
                let n = vecs.len();
                let sched = self.schedule(n);
                let ports_of = |i: usize| self.ports(vecs, i);
                match replay_difference(self.module, mu, self.desc, &sched, n, k, &ports_of) {
                    Ok(Some(l)) => l,
                    Ok(None) => alone,
                    Err(e) => Located::Nowhere(format!("IR evaluation: {e}")),
                }
            }
            _ => alone,
        }
    }
}

/// Port bits (least significant first) as a `width`-bit IR value.
fn bits(v: &[bool], width: u32) -> Result<hdl::ir::Bits, hdl::ir::IrError> {
    let mut words = vec![0u64; (width as usize).div_ceil(64)];
    for (i, &b) in v.iter().enumerate().take(width as usize) {
        if b {
            words[i / 64] |= 1 << (i % 64);
        }
    }
    hdl::ir::Bits::from_words(&words, width)
}

/// Let the vector `ports` flow alone through the unit as generated and
/// through the mutant (IR evaluation: reset, one input, then one edge per
/// stage with `out_ready` high): the first stage whose registers differ
/// after its edge, or the outputs after the last.
pub fn first_difference(
    m: &hdl::ir::Module,
    mu: &Mutation,
    desc: &UnitDescription,
    ports: &BTreeMap<String, Vec<bool>>,
) -> Result<Located, hdl::ir::IrError> {
    first_difference_programmed(m, mu, desc, ports, &[])
}

/// [`first_difference`] for a unit with programmable slots: after the
/// reset, the configuration writes `writes` (`addr`, `value`) one per
/// cycle on the configuration port, then edges until the commit has taken
/// effect (`cfg_pending` low, at most the pipeline depth and two), in both
/// the unit as generated and the mutant; then the vector.
pub fn first_difference_programmed(
    m: &hdl::ir::Module,
    mu: &Mutation,
    desc: &UnitDescription,
    ports: &BTreeMap<String, Vec<bool>>,
    writes: &[(u16, u32)],
) -> Result<Located, hdl::ir::IrError> {
    use hdl::ir::Sim;
    let mutant = mutate::apply(m, mu)?;
    let mut sims = [Sim::new(m)?, Sim::new(&mutant)?];
    for sim in &mut sims {
        sim.set_u128("rst", 1)?;
        sim.set_u128("in_valid", 0)?;
        sim.set_u128("out_ready", 1)?;
        sim.step();
        sim.set_u128("rst", 0)?;
        if !writes.is_empty() {
            for &(addr, value) in writes {
                sim.set_u128("cfg_we", 1)?;
                sim.set_u128("cfg_addr", u128::from(addr))?;
                sim.set_u128("cfg_wdata", u128::from(value))?;
                sim.step();
            }
            sim.set_u128("cfg_we", 0)?;
            for _ in 0..desc.latency + 2 {
                if sim.get("cfg_pending")?.is_zero() {
                    break;
                }
                sim.step();
            }
        }
        for p in &desc.ports {
            if let Some(v) = ports.get(&p.name) {
                sim.set(&p.name, &bits(v, p.width)?)?;
            }
        }
        sim.set_u128("in_valid", 1)?;
    }
    for st in &desc.stages {
        for sim in &mut sims {
            sim.step();
            sim.set_u128("in_valid", 0)?;
        }
        let names = crate::locate::stage_valid(desc, st.stage)
            .into_iter()
            .chain(st.registers.clone());
        for name in names {
            let [a, b] = &mut sims;
            if a.get(&name)? != b.get(&name)? {
                return Ok(Located::Stage {
                    stage: st.stage,
                    signal: name,
                });
            }
        }
    }
    for p in &desc.ports {
        if p.dir == hdl::unit::Direction::Output {
            let [a, b] = &mut sims;
            if a.get(&p.name)? != b.get(&p.name)? {
                return Ok(Located::Stage {
                    stage: desc.latency,
                    signal: p.name.clone(),
                });
            }
        }
    }
    Ok(Located::Nowhere(
        "the vector alone flows through unchanged".to_string(),
    ))
}

/// The input port values of vector `i` of a unit with slots (bits least
/// significant first): the compressor's `in_block`; the decompressor's
/// `in_bits`, `in_len` and `in_epoch`.
fn slot_ports(vectors: &SlotVectors, i: usize, max_bits: u32) -> BTreeMap<String, Vec<bool>> {
    let mut out = BTreeMap::new();
    match vectors {
        SlotVectors::Comp(v) => {
            let mut b = LeBus::new();
            if let Some(x) = v.get(i) {
                b.put_bytes(&x.block);
            }
            out.insert("in_block".to_string(), bits_of(&b, 0, BLOCK_BYTES * 8));
        }
        SlotVectors::Decomp(v) => {
            let w = max_bits as usize;
            let len = vectors::LEN_WIDTH as usize;
            let mut b = LeBus::new();
            if let Some(x) = v.get(i) {
                b.put_left_aligned(&x.v.bits, w, w);
                b.put_uint(u64::from(x.v.len), len);
                b.put_uint(u64::from(x.epoch), slot::EPOCH_WIDTH);
            }
            out.insert("in_bits".to_string(), bits_of(&b, 0, w));
            out.insert("in_len".to_string(), bits_of(&b, w, len));
            out.insert(
                "in_epoch".to_string(),
                bits_of(&b, w + len, slot::EPOCH_WIDTH),
            );
        }
    }
    out
}

/// The configuration writes a one-shard slot run has issued before its
/// vector `i` (`addr`, `value`), in order: the image and epoch `i` is
/// coded with are the last ones committed.
fn slot_writes_before(plan: &Plan, i: usize) -> Vec<(u16, u32)> {
    plan.shards
        .first()
        .map(|s| {
            s.writes
                .iter()
                .filter(|w| w.before <= i)
                .map(|w| (w.addr, w.value))
                .collect()
        })
        .unwrap_or_default()
}

/// Replay a run in the IR evaluator: the unit as generated and the mutant
/// side by side, driven cycle by cycle as the testbench drives them
/// ([`schedule::Driver`]: the schedule's resets, offers and backpressure,
/// the unit's `in_ready`),
/// vectors from `ports_of`, until `upto` vectors have been delivered.
/// After every edge, each stage's valid flag and, while the unit's flag
/// is set, its registers from the unit description are compared: the
/// first that differs, or `None`. This finds faults a vector alone cannot
/// show, such as a stage register that loads while its stage is stalled.
pub fn replay_difference(
    m: &hdl::ir::Module,
    mu: &Mutation,
    desc: &UnitDescription,
    sched: &Schedule,
    n: usize,
    upto: u64,
    ports_of: &dyn Fn(usize) -> BTreeMap<String, Vec<bool>>,
) -> Result<Option<Located>, hdl::ir::IrError> {
    use hdl::ir::Sim;
    let mutant = mutate::apply(m, mu)?;
    let mut sims = [Sim::new(m)?, Sim::new(&mutant)?];
    let widths: BTreeMap<&str, u32> = desc
        .ports
        .iter()
        .map(|p| (p.name.as_str(), p.width))
        .collect();
    let offer = |sims: &mut [Sim; 2], i: usize| -> Result<(), hdl::ir::IrError> {
        for (name, v) in ports_of(i) {
            if let Some(&w) = widths.get(name.as_str()) {
                let b = bits(&v, w)?;
                for sim in sims.iter_mut() {
                    sim.set(&name, &b)?;
                }
            }
        }
        Ok(())
    };
    // the boot reset
    for sim in &mut sims {
        sim.set_u128("rst", 1)?;
        sim.set_u128("in_valid", 0)?;
        sim.set_u128("out_ready", 0)?;
        sim.step();
    }
    let mut drv = schedule::Driver::new(sched, n as u64);
    let mut in_ready = false;
    let max_cycles = sched.cycles.len() as u64 + 64 * (n as u64 + 16);
    for c in 0..max_cycles {
        if drv.drive(c, in_ready) {
            offer(&mut sims, drv.offered as usize)?;
        }
        for sim in &mut sims {
            sim.set_u128("rst", u128::from(drv.rst))?;
            sim.set_u128("in_valid", u128::from(drv.in_valid))?;
            sim.set_u128("out_ready", u128::from(drv.out_ready))?;
        }
        in_ready = !sims[0].get("in_ready")?.is_zero();
        let out_valid = !sims[0].get("out_valid")?.is_zero();
        drv.edge(out_valid, in_ready);
        for sim in &mut sims {
            sim.step();
        }
        for st in &desc.stages {
            let [a, b] = &mut sims;
            // a stage without a described valid flag: its registers always
            if let Some(flag) = crate::locate::stage_valid(desc, st.stage) {
                let held = a.get(&flag)?;
                if held != b.get(&flag)? {
                    return Ok(Some(Located::Stage {
                        stage: st.stage,
                        signal: flag,
                    }));
                }
                if held.is_zero() {
                    continue;
                }
            }
            for name in &st.registers {
                if a.get(name)? != b.get(name)? {
                    return Ok(Some(Located::Stage {
                        stage: st.stage,
                        signal: name.clone(),
                    }));
                }
            }
        }
        if drv.n_out >= upto {
            break;
        }
    }
    Ok(None)
}

/// An MPC unit of a model set in the IR: the set, a label, the module and
/// its description.
fn mpc_unit_of(
    model: &Path,
    unit: Unit,
) -> Result<(ModelSet, String, Module, UnitDescription), MutateError> {
    let set = rtl::load_set(model).map_err(RunError::from)?;
    let label = format!("the MPC {unit} of model set {}", set.name);
    let ir_err = |source| MutateError::Ir {
        unit: label.clone(),
        source,
    };
    let (module, desc) = match unit {
        Unit::Compressor => hdl::mpc::compressor::build_described(&set).map_err(ir_err)?,
        Unit::Decompressor => hdl::mpc::decompressor::build_described(&set).map_err(ir_err)?,
        Unit::Loopback => return Err(MutateError::Unit(unit)),
    };
    Ok((set, label, module, desc))
}

/// An MPC unit with programmable slots in the IR (a compressor of
/// `compressor_stages` stages, the decompressor at the default depth of
/// `gen --program-slots`): the set, a label, the module and its
/// description.
fn mpc_slot_unit_of(
    model: &Path,
    unit: Unit,
    slots: SlotUnit,
    compressor_stages: usize,
) -> Result<(ModelSet, String, Module, UnitDescription), MutateError> {
    let set = rtl::load_set(model).map_err(RunError::from)?;
    let depth = match unit {
        Unit::Compressor if compressor_stages != hdl::mpc::slots::SLOT_COMPRESSOR_STAGES => {
            format!(" ({compressor_stages} stages)")
        }
        _ => String::new(),
    };
    let label = format!(
        "the MPC {unit}{depth} of model set {} with {} {} slot{}",
        set.name,
        slots.k,
        slots.form.name,
        if slots.k == 1 { "" } else { "s" }
    );
    let spec = hdl::mpc::SlotSpec::new(slots.k, slots.form)
        .map_err(|e| MutateError::Slot(format!("{label}: {e}")))?;
    let ir_err = |source| MutateError::Ir {
        unit: label.clone(),
        source,
    };
    let (module, desc) = match unit {
        Unit::Compressor => hdl::mpc::compressor::build_slots_staged(&set, spec, compressor_stages)
            .map_err(ir_err)?,
        Unit::Decompressor => hdl::mpc::decompressor::build_slots(
            &set,
            spec,
            hdl::mpc::decompressor::slot_default_stages(&spec),
        )
        .map_err(ir_err)?,
        Unit::Loopback => return Err(MutateError::Unit(unit)),
    };
    Ok((set, label, module, desc))
}

/// Every single mutation of the unit of `design`, with the unit's label
/// (what `cosim mutate --list` prints).
pub fn mutations(design: &Design) -> Result<(String, Vec<Mutation>), MutateError> {
    mutations_in(design, Scope::All)
}

/// The single mutations of `design`'s unit in `scope`, with the unit's
/// label.
pub fn mutations_in(design: &Design, scope: Scope) -> Result<(String, Vec<Mutation>), MutateError> {
    let (label, module) = match design {
        Design::Mpc { model, unit } => {
            let (_, label, module, _) = mpc_unit_of(model, *unit)?;
            (label, module)
        }
        Design::MpcSlots {
            model,
            unit,
            slots,
            compressor_stages,
            ..
        } => {
            let (_, label, module, _) = mpc_slot_unit_of(model, *unit, *slots, *compressor_stages)?;
            (label, module)
        }
        Design::MagBdi { params, unit } => {
            let t = crate::magbdi::target(*params, *unit, 1, 1, None)?;
            (t.label, t.module)
        }
        Design::Dpc {
            params,
            unit,
            decompressor_stages,
        } => {
            let t = crate::dpc::target_staged(*params, *unit, *decompressor_stages, 1, 1, None)?;
            (t.label, t.module)
        }
    };
    let mut all = mutate::enumerate(&module);
    if scope == Scope::Slots {
        let keep = slot_logic(&module);
        all.retain(|m| keep.contains(&m.signal));
    }
    Ok((label, all))
}

/// Run the mutation test of one unit.
pub fn run(cfg: &MutateConfig) -> Result<MutateReport, MutateError> {
    let t0 = Instant::now();
    let config_dir = cfg.design.config_dir()?;
    let root = cfg
        .build
        .join(&config_dir)
        .join("mutate")
        .join(cfg.design.unit_name());
    std::fs::create_dir_all(&root).map_err(io(&root))?;
    let root = root.canonicalize().map_err(io(&root))?;
    let gen = GenConfig {
        blocks: cfg.blocks,
        seed: cfg.seed,
        corpus: cfg.corpus.clone(),
    };
    // the unit in the IR, its description, how it runs, its vectors
    let stream: Option<StreamTarget> = match &cfg.design {
        Design::Mpc { .. } | Design::MpcSlots { .. } => None,
        Design::MagBdi { params, unit } => Some(crate::magbdi::target(
            *params,
            *unit,
            cfg.blocks,
            cfg.seed,
            cfg.corpus.as_deref(),
        )?),
        Design::Dpc {
            params,
            unit,
            decompressor_stages,
        } => Some(crate::dpc::target_staged(
            *params,
            *unit,
            *decompressor_stages,
            cfg.blocks,
            cfg.seed,
            cfg.corpus.as_deref(),
        )?),
    };
    let mpc_unit;
    let (module, desc, kind, vecs) = match (&cfg.design, &stream) {
        (Design::Mpc { model, unit }, _) => {
            let (set, label, module, desc) = mpc_unit_of(model, *unit)?;
            let codec = MpcCodec::new(&set);
            let mut tags = Tags::new();
            let vectors = match unit {
                Unit::Compressor => UnitVectors::Comp(
                    vectors::compressor_vectors(&set, &gen, &mut tags).map_err(RunError::from)?,
                ),
                _ => UnitVectors::Decomp(
                    vectors::decompressor_vectors(&codec, &gen, &mut tags)
                        .map_err(RunError::from)?,
                ),
            };
            mpc_unit = label;
            (
                module,
                desc,
                Kind::Mpc {
                    unit: *unit,
                    codec: Box::new(codec),
                    params: Params::of(&set),
                },
                Vecs::Mpc { vectors, tags },
            )
        }
        (
            Design::MpcSlots {
                model,
                unit,
                slots,
                options,
                compressor_stages,
            },
            _,
        ) => {
            let (set, label, module, desc) =
                mpc_slot_unit_of(model, *unit, *slots, *compressor_stages)?;
            // the plan of `cosim mpc --program-slots` for one shard
            let images = Plan::images(&set, *slots, options, cfg.seed, cfg.corpus.as_deref())?;
            let plan = Plan::cycling(&set, *slots, images, &[cfg.blocks], options.reprogram_every)?;
            let mut tags = Tags::new();
            let (vectors, expected) = slot::unit_vectors(*unit, &set, &plan, &gen, &mut tags)?;
            let h = slots.header_bits(&set);
            let params = Params {
                header_bits: h,
                max_bits: h + 8 * BLOCK_BYTES as u32,
                compressor_latency: desc.latency,
                decompressor_latency: desc.latency,
            };
            mpc_unit = label;
            (
                module,
                desc,
                Kind::Slots {
                    unit: *unit,
                    set: Box::new(set),
                    slots: *slots,
                    params,
                },
                Vecs::Slots {
                    vectors,
                    expected,
                    plan: Box::new(plan),
                    tags,
                },
            )
        }
        (_, Some(t)) => {
            mpc_unit = t.label.clone();
            (
                t.module.clone(),
                t.desc.clone(),
                Kind::Stream(t),
                Vecs::Stream(t.vectors.clone()),
            )
        }
        (_, None) => return Err(MutateError::Unit(Unit::Loopback)),
    };
    let label = mpc_unit;
    let mut all = mutate::enumerate(&module);
    let enumerated = all.len();
    if let Some(ids) = &cfg.only {
        if let Some(&bad) = ids.iter().find(|&&i| i >= enumerated) {
            return Err(MutateError::NoSuchMutant {
                unit: label,
                id: bad,
                count: enumerated,
            });
        }
        all.retain(|m| ids.contains(&m.id));
    }
    if cfg.control_only {
        all.retain(is_control);
    }
    if cfg.scope == Scope::Slots {
        let keep = slot_logic(&module);
        all.retain(|m| keep.contains(&m.signal));
    }
    let muts = choose(all, cfg.sample, cfg.seed);
    let bench = Bench {
        cfg,
        module: &module,
        desc: &desc,
        label: label.clone(),
        kind,
    };
    let first = bench.simulate(&muts, &vecs, &root)?;
    let mut build_seconds = first.build_seconds;
    let mut batches = first.batches;
    let mut results: Vec<MutantResult> = muts
        .into_iter()
        .zip(first.kills)
        .map(|(mutation, kill)| MutantResult {
            mutation,
            kill,
            closure: None,
            located: None,
        })
        .collect();

    let mut prove_seconds = 0.0;
    if cfg.prove {
        // survivors: decide each formally; counterexamples become vectors
        let mut open: Vec<usize> = (0..results.len())
            .filter(|&i| results[i].kill.is_none())
            .collect();
        // units with slots: the shadow configuration registers are inputs
        // of the views, which compare outputs only under valid contents
        let valid = |m: &mut Module| match &bench.kind {
            Kind::Slots { set, slots, .. } => {
                slot::valid_configuration(m, *slots, set.predictors.len())
            }
            _ => Ok(hdl::ir::Expr::bool(true)),
        };
        let mut view = match &bench.kind {
            Kind::Slots { slots, .. } => equiv::View {
                cuts: slot::configuration_registers(*slots),
                assume: Some(&valid),
                skip_one_step: false,
            },
            _ => equiv::View::default(),
        };
        if let Kind::Slots { .. } = &bench.kind {
            // the one-step check first: equivalent, or an input on which
            // the mutant's first registers differ, whose configuration and
            // data run as a counterexample (with directed blocks of that
            // configuration); the full views only for what is left
            let open_muts: Vec<Mutation> =
                open.iter().map(|&i| results[i].mutation.clone()).collect();
            let steps = equiv::one_step_all(
                &module,
                &open_muts,
                &root.join("equiv"),
                cfg.prove_seconds.min(60),
                cfg.jobs,
                &view,
            )?;
            let mut hints: Vec<(usize, BTreeMap<String, Vec<bool>>)> = Vec::new();
            for (&i, (step, seconds)) in open.iter().zip(steps) {
                prove_seconds += seconds;
                match step {
                    equiv::OneStep::Equivalent => results[i].closure = Some(Closure::Equivalent),
                    equiv::OneStep::Differs(Some(ports)) => {
                        hints.push((i, slot::shadow_of_active(&ports)))
                    }
                    _ => {}
                }
            }
            let (b, n) = bench.replay(&mut results, &hints, &root.join("one-step"))?;
            build_seconds += b;
            batches += n;
            open.retain(|&i| !results[i].closed());
            view.skip_one_step = true;
            // then the views at a few fixed valid configurations: SAT on
            // the data path alone gives an input that tells the mutant
            // apart there, run with that configuration
            if let (false, Kind::Slots { set, slots, .. }) = (open.is_empty(), &bench.kind) {
                let pins = slot::pinned_configurations(set, *slots, cfg.seed)?;
                let open_muts: Vec<Mutation> =
                    open.iter().map(|&i| results[i].mutation.clone()).collect();
                let found = equiv::pinned_counterexamples(
                    &module,
                    &open_muts,
                    &root.join("equiv"),
                    cfg.prove_seconds,
                    cfg.jobs,
                    &view,
                    &pins,
                )?;
                let mut cexes: Vec<(usize, BTreeMap<String, Vec<bool>>)> = Vec::new();
                for (&i, (ports, seconds)) in open.iter().zip(found) {
                    prove_seconds += seconds;
                    if let Some(p) = ports {
                        cexes.push((i, p));
                    }
                }
                let (b, n) = bench.replay(&mut results, &cexes, &root.join("pinned"))?;
                build_seconds += b;
                batches += n;
                open.retain(|&i| !results[i].closed());
            }
        }
        let open_muts: Vec<Mutation> = open.iter().map(|&i| results[i].mutation.clone()).collect();
        let decided = equiv::decide_all_with(
            &module,
            &desc,
            &open_muts,
            &root.join("equiv"),
            cfg.prove_seconds,
            cfg.jobs,
            &view,
        )?;
        let mut cexes: Vec<(usize, BTreeMap<String, Vec<bool>>)> = Vec::new();
        for (&i, d) in open.iter().zip(decided) {
            prove_seconds += d.seconds;
            results[i].closure = Some(match d.verdict {
                Verdict::Equivalent => Closure::Equivalent,
                Verdict::OutOfScope(why) => Closure::OutOfScope(why),
                Verdict::Undecided(said) => Closure::Undecided(said),
                Verdict::Counterexample(ports) => {
                    cexes.push((i, ports));
                    Closure::CounterexampleSurvived
                }
            });
        }
        let (b, n) = bench.replay(&mut results, &cexes, &root.join("counterexamples"))?;
        build_seconds += b;
        batches += n;
    }
    // where each kill points
    let located: Vec<Option<Located>> = crate::work_queue(results.len(), cfg.jobs, |i| {
        let r = &results[i];
        let kill = match (&r.kill, &r.closure) {
            (Some(k), _) | (None, Some(Closure::CounterexampleKilled(k))) => k,
            _ => return None,
        };
        Some(bench.locate(&r.mutation, kill, &vecs, r.kill.is_some()))
    });
    for (r, l) in results.iter_mut().zip(located) {
        r.located = l;
    }
    Ok(MutateReport {
        unit: label,
        sim: cfg.sim,
        enumerated,
        control_only: cfg.control_only,
        vectors: vecs.len(),
        results,
        batches,
        build_seconds,
        prove_seconds,
        seconds: t0.elapsed().as_secs_f64(),
    })
}
