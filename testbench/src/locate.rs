//! Locating a mismatch: rerun the failing block alone with a VCD dump, read
//! the stage probes the generator published (pipeline registers and named
//! stage logic, `params.json`) by name and compare them with the golden
//! trace, stage by stage; rerun the failing shard with a VCD window around
//! the failure; write GTKWave save files that group the signals by the
//! stages of the unit descriptions. The MAG-aware BDI and DPC units are
//! located the same way by [`stream`]. The probes and the trace fields they
//! mirror are in docs/hw/cosim.md.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use golden::mpc::select::{self, Choice};
use golden::mpc::{
    reference, CustomModels, ModelKind, ModelSet, BLOCK_BYTES, MAX_BLOCK_BYTES, PLANES, SYMBOLS,
};
use hdl::circuits::Pipeline;
use hdl::unit::{CandidateField, Mirror, ProbeKind, StageProbe, UnitDescription, When};

use crate::compare::{self, Expect, Inputs};
use crate::rtl::Rtl;
use crate::schedule::Schedule;
use crate::sim::{self, RunFiles, RunOptions, SimError};
use crate::vcd::{bits_to_hex, Vcd};
use crate::vectors::{self, Block, CompVector, DecompVector};
use crate::{Simulator, Unit};

pub mod slots;
pub mod stream;

/// Locating problems.
#[derive(Debug, thiserror::Error)]
pub enum LocateError {
    #[error(transparent)]
    Sim(#[from] SimError),
    #[error(transparent)]
    Vectors(#[from] vectors::VectorError),
    #[error(transparent)]
    Schedule(#[from] crate::schedule::ScheduleError),
    #[error(transparent)]
    Output(#[from] crate::records::OutputError),
    #[error("{path}: {source}")]
    Vcd {
        path: PathBuf,
        #[source]
        source: crate::vcd::VcdError,
    },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A signal the locator compares (a stage probe, its sibling, a stage
    /// valid flag) is not in the RTL.
    #[error("the {unit} has no signal `{signal}` ({needed_for}) in {}", vcd.display())]
    MissingSignal {
        unit: String,
        signal: String,
        needed_for: String,
        vcd: PathBuf,
    },
    #[error("{unit} probe `{probe}`: {problem}")]
    Probe {
        unit: String,
        probe: String,
        problem: String,
    },
    #[error("the stage probes of {set} cannot be built: {message}")]
    Probes { set: String, message: String },
    #[error(transparent)]
    Stream(#[from] crate::stream_unit::StreamError),
    #[error(transparent)]
    Slots(#[from] crate::slots::SlotsError),
    /// The golden model refuses the failing input, or the unit cannot be
    /// emitted again.
    #[error("{unit}: {message}")]
    Golden { unit: String, message: String },
}

// ---- bit strings (MSB first) of the trace fields --------------------------------

/// A block bus: byte `i` at `[8i+7:8i]`.
pub fn block_bits(b: &[u8; BLOCK_BYTES]) -> String {
    b.iter().rev().map(|x| format!("{x:08b}")).collect()
}

/// Planes: plane `p` at `[32p+31:32p]`, column `j` at bit `32p+j`.
pub fn plane_bits(p: &[u32; PLANES]) -> String {
    p.iter().rev().map(|x| format!("{x:032b}")).collect()
}

/// Symbols: symbol 0 in `[255:240]`, its first bit the MSB.
pub fn symbol_bits(s: &[u16; SYMBOLS]) -> String {
    s.iter().map(|x| format!("{x:016b}")).collect()
}

/// An unsigned number in `width` bits.
pub fn number_bits(v: u64, width: u32) -> String {
    (0..width)
        .rev()
        .map(|i| {
            if i < 64 && (v >> i) & 1 == 1 {
                '1'
            } else {
                '0'
            }
        })
        .collect()
}

/// A left-aligned compressed-bit bus of `width` bits.
pub fn bus_bits(bytes: &[u8; MAX_BLOCK_BYTES], width: u32) -> String {
    (0..width as usize)
        .map(|k| {
            if (bytes[k / 8] >> (7 - k % 8)) & 1 == 1 {
                '1'
            } else {
                '0'
            }
        })
        .collect()
}

/// Bytes in the block layout (byte `i` at `[8i+7:8i]`), any length.
pub fn bytes_bits(b: &[u8]) -> String {
    b.iter().rev().map(|x| format!("{x:08b}")).collect()
}

/// Flags as a number: entry `j` at bit `j`.
pub fn flag_bits(flags: &[bool]) -> String {
    flags
        .iter()
        .rev()
        .map(|&f| if f { '1' } else { '0' })
        .collect()
}

/// The first `len` bits of an MSB-first bit string left-aligned in a
/// `width`-bit bus (bit string bit 0 at the bus MSB), zero below.
pub fn left_aligned_bits(bytes: &[u8], len: usize, width: u32) -> String {
    (0..width as usize)
        .map(|k| {
            if k < len
                && bytes
                    .get(k / 8)
                    .is_some_and(|b| (b >> (7 - k % 8)) & 1 == 1)
            {
                '1'
            } else {
                '0'
            }
        })
        .collect()
}

// ---- probes ---------------------------------------------------------------

/// How a probe's expected value is checked.
#[derive(Clone, Debug)]
pub enum Check {
    /// Equal to these bits (MSB first; shorter/longer registers are
    /// compared on the low bits).
    Bits(String),
    /// The low bits of the signal equal these (MSB first); the bits above
    /// are not compared (a register only partly defined for this input).
    LowBits(String),
    /// The code slots of the probe, each cut to its length in the sibling
    /// slot-length register and concatenated, = these payload bits.
    /// The register holds `fields` equal fields, each left-aligned, and
    /// the register `lens_reg` their lengths: together they spell `bits`.
    Payload {
        bits: String,
        lens_reg: String,
        fields: usize,
    },
    /// Symbols 0..index equal these, later symbols zero, with the sibling
    /// register `index_reg` naming how many are decoded.
    SymbolPrefix {
        symbols: [u16; SYMBOLS],
        index_reg: String,
    },
    /// Header bits + the lengths of the codes covering the first `index`
    /// symbols (`None`: index not on a code boundary).
    UsedPrefix {
        used_by_index: Vec<Option<u64>>,
        index_reg: String,
    },
}

/// The slots of a unit with programmable slots, for its golden trace:
/// the programmed set codes as the model set whose predictors are the
/// hard-wired ones followed by the loaded slots
/// ([`golden::mpc::program::ProgrammedSet::expanded`]).
#[derive(Clone, Debug)]
pub struct SlotContext {
    /// Hard-wired predictors (candidates `0..p` of the trace).
    pub p: usize,
    /// Per slot of the unit: its candidate index in the trace, `None`
    /// while the active image does not load it.
    pub candidates: Vec<Option<usize>>,
}

impl SlotContext {
    /// The context of `ps` (a model set with `p` hard-wired predictors
    /// programmed with an image).
    pub fn of(ps: &golden::mpc::program::ProgrammedSet, p: usize) -> SlotContext {
        let mut next = p;
        let candidates = (0..ps.slots())
            .map(|j| {
                ps.slot_id(j).map(|_| {
                    next += 1;
                    next - 1
                })
            })
            .collect();
        SlotContext { p, candidates }
    }

    /// The candidate of slot `j`: `Ok(None)` when unloaded, `Err` past K.
    fn candidate(&self, j: usize) -> Result<Option<usize>, String> {
        self.candidates
            .get(j)
            .copied()
            .ok_or_else(|| format!("no slot {j} (the unit has {})", self.candidates.len()))
    }

    /// Whether candidate `i` is a slot.
    fn is_slot(&self, i: usize) -> bool {
        i >= self.p
    }
}

/// What the golden model says about the compressed block.
struct CompGolden {
    t: golden::mpc::trace::CompressTrace,
    choice: Choice,
    choice_id: u32,
    /// The choice of the selection rule without the custom models (and,
    /// with slots, among the hard-wired predictors alone).
    best: usize,
    slots: Option<SlotContext>,
}

impl CompGolden {
    fn new(block: &Block, set: &ModelSet, slots: Option<SlotContext>) -> CompGolden {
        let t = reference::compress_traced(block, set);
        let scores: Vec<_> = t.candidates.iter().map(|c| c.score).collect();
        let choice = select::choose(set, block, &scores);
        let choice_id = match choice {
            Choice::ZeroBlock => set.zero_block_id().unwrap_or(0),
            Choice::SameWords => set.same_words_id().unwrap_or(0),
            Choice::Predictor(i) => set.predictor_id(i),
        };
        let mut plain = set.clone();
        plain.custom = CustomModels {
            zero_block: false,
            same_words: false,
        };
        let hard_wired = slots.as_ref().map_or(scores.len(), |c| c.p);
        plain.predictors.truncate(hard_wired);
        let best = match select::choose(&plain, block, &scores[..hard_wired.min(scores.len())]) {
            Choice::Predictor(i) => i,
            _ => 0,
        };
        CompGolden {
            t,
            choice,
            choice_id,
            best,
            slots,
        }
    }

    /// The check of probe `p` on this block: `Ok(None)` when the probe is
    /// not compared for this block (its `when`), `Err` when the locator does
    /// not know the trace field it mirrors.
    fn check(&self, p: &StageProbe, set: &ModelSet) -> Result<Option<Check>, String> {
        let chosen = match self.choice {
            Choice::Predictor(i) => Some(i),
            _ => None,
        };
        let slot_chosen = match (&self.slots, chosen) {
            (Some(c), Some(i)) => c.is_slot(i),
            _ => false,
        };
        let applies = match p.when {
            When::Always | When::Accepted => true,
            When::Predictor => chosen.is_some(),
            When::Model(id) => self.choice_id == id,
            When::NotRaw => self.t.output.model != set.raw_id(),
            When::Slot => slot_chosen,
            When::HardWired => chosen.is_some() && !slot_chosen,
            When::NotSlot => !slot_chosen,
            When::Raw => self.t.output.model == set.raw_id(),
        };
        if !applies {
            return Ok(None);
        }
        let w = p.width;
        let t = &self.t;
        let bits = |s: String| Ok(Some(Check::Bits(s)));
        let candidate = |i: usize, field: CandidateField| -> Result<Option<Check>, String> {
            let c = t
                .candidates
                .get(i)
                .ok_or_else(|| format!("no candidate {i} in the golden trace"))?;
            match field {
                CandidateField::Pred => bits(block_bits(&c.pred)),
                CandidateField::Residue => bits(block_bits(&c.residue)),
                CandidateField::Planes => bits(plane_bits(&c.planes)),
                CandidateField::Xored => bits(plane_bits(&c.xored)),
                CandidateField::Symbols => bits(symbol_bits(&c.symbols)),
                CandidateField::ZeroMask => bits(number_bits(c.score.zero_mask as u64, w)),
                CandidateField::LongestZeroRun => {
                    bits(number_bits(c.score.longest_zero_run as u64, w))
                }
                // bit k-1 set when the value is at least k
                CandidateField::LongestZeroRunThermometer => {
                    bits(number_bits((1u64 << c.score.longest_zero_run) - 1, w))
                }
                CandidateField::ZeroCountThermometer => {
                    bits(number_bits((1u64 << c.score.zero_count) - 1, w))
                }
                CandidateField::ZeroCount => bits(number_bits(c.score.zero_count as u64, w)),
                CandidateField::CodeBits => bits(number_bits(c.score.code_bits as u64, w)),
            }
        };
        let h = set.header_bits();
        match p.mirrors {
            Mirror::Candidate { index, field } => candidate(index, field),
            Mirror::Chosen(field) => {
                let i = chosen.ok_or_else(|| {
                    format!(
                        "`{}` has no golden value when no predictor is chosen (when: predictor)",
                        p.mirrors
                    )
                })?;
                candidate(i, field)
            }
            Mirror::Slot { slot, field } => {
                let c = self
                    .slots
                    .as_ref()
                    .ok_or_else(|| format!("`{}`: the unit has no slots", p.mirrors))?;
                match c.candidate(slot)? {
                    Some(i) => candidate(i, field),
                    None => Ok(None),
                }
            }
            Mirror::BestHardWired(field) => candidate(self.best, field),
            Mirror::IsZeroBlock => bits(number_bits(t.is_zero_block as u64, w)),
            Mirror::IsSameWords => bits(number_bits(t.is_same_words as u64, w)),
            Mirror::BestPredictor => bits(number_bits(self.best as u64, w)),
            Mirror::ChoiceId => bits(number_bits(self.choice_id as u64, w)),
            Mirror::Block => bits(block_bits(&t.block)),
            Mirror::SelectedId => bits(number_bits(t.selected_id as u64, w)),
            Mirror::OutputPayload | Mirror::OutputPayloadPairs => Ok(Some(Check::Payload {
                bits: t.output.bit_string()[h as usize..].to_string(),
                lens_reg: p
                    .with
                    .clone()
                    .ok_or("`output.payload` needs the slot lengths (`with`)")?,
                fields: if p.mirrors == Mirror::OutputPayloadPairs {
                    SYMBOLS / 2
                } else {
                    SYMBOLS
                },
            })),
            Mirror::OutputBits => bits(bus_bits(&t.output.bytes, w)),
            Mirror::OutputLen => bits(number_bits(t.output.len as u64, w)),
            Mirror::OutputModel => bits(number_bits(t.output.model as u64, w)),
            other => Err(not_in_trace(other, "MPC compressor")),
        }
    }
}

/// The problem of a probe mirroring a field the unit's golden trace lacks.
pub(crate) fn not_in_trace(m: Mirror, trace: &str) -> String {
    format!("`{m}` is not a field of the {trace}'s golden trace (docs/hw/cosim.md)")
}

/// What the golden model says about a compressed input.
struct DecompGolden {
    header: u32,
    len: usize,
    result: Result<golden::mpc::trace::DecompressTrace, golden::mpc::DecodeError>,
    /// Units with slots: the hard-wired predictors, and whether the input
    /// comes with the active image's epoch (else the unit refuses it).
    slots: Option<(usize, bool)>,
}

impl DecompGolden {
    fn new(
        bits: &[u8; MAX_BLOCK_BYTES],
        len: usize,
        set: &ModelSet,
        slots: Option<(usize, bool)>,
    ) -> DecompGolden {
        let width = set.max_bits() as usize;
        DecompGolden {
            header: compare::header_field(bits, set),
            len,
            result: reference::decompress_traced(&bits[..width.div_ceil(8)], len, set),
            slots,
        }
    }

    /// The golden decode, `None` when the input is refused.
    fn accepted(&self) -> Option<&golden::mpc::trace::DecompressTrace> {
        match self.slots {
            Some((_, false)) => None,
            _ => self.result.as_ref().ok(),
        }
    }

    /// As [`CompGolden::check`].
    fn check(&self, p: &StageProbe, set: &ModelSet) -> Result<Option<Check>, String> {
        let ok = self.accepted();
        let predictor = |t: &golden::mpc::trace::DecompressTrace| match set.kind_of(t.model_id) {
            Some(ModelKind::Predictor(i)) => Some(i),
            _ => None,
        };
        let hard_wired = self.slots.map_or(usize::MAX, |(p, _)| p);
        let slot = ok.and_then(predictor).is_some_and(|i| i >= hard_wired);
        let applies = match p.when {
            When::Always => true,
            When::Accepted => ok.is_some(),
            When::Predictor => ok.and_then(predictor).is_some(),
            When::Model(id) => ok.is_some_and(|t| t.model_id == id),
            When::NotRaw => ok.is_some_and(|t| t.model_id != set.raw_id()),
            When::Slot => slot,
            When::HardWired => ok.and_then(predictor).is_some_and(|i| i < hard_wired),
            When::NotSlot => !slot,
            When::Raw => ok.is_some_and(|t| t.model_id == set.raw_id()),
        };
        if !applies {
            return Ok(None);
        }
        let w = p.width;
        let bits = |s: String| Ok(Some(Check::Bits(s)));
        // fields with a value whether or not the golden model accepts
        match p.mirrors {
            Mirror::Header => return bits(number_bits(self.header as u64, w)),
            Mirror::Error => return bits(number_bits(ok.is_none() as u64, w)),
            Mirror::Len => return bits(number_bits(self.len as u64, w)),
            Mirror::Block => {
                return bits(ok.map_or_else(|| "0".repeat(256), |t| block_bits(&t.block)));
            }
            _ => {}
        }
        let t = ok.ok_or_else(|| {
            format!(
                "`{}` has no golden value when the input is rejected (when: {:?})",
                p.mirrors, p.when
            )
        })?;
        let h = set.header_bits() as u64;
        match (p.mirrors, &p.with) {
            (Mirror::ModelId, _) => bits(number_bits(t.model_id as u64, w)),
            (Mirror::Symbols, None) => bits(symbol_bits(&t.symbols)),
            (Mirror::Symbols, Some(index)) => Ok(Some(Check::SymbolPrefix {
                symbols: t.symbols,
                index_reg: index.clone(),
            })),
            (Mirror::Used, None) => bits(number_bits(t.used as u64, w)),
            (Mirror::Used, Some(index)) => {
                // bits used after each code, by the number of symbols decoded
                let mut used_by_index = vec![None; SYMBOLS + 1];
                let mut m = 0usize;
                let mut used = h;
                used_by_index[0] = Some(used);
                for c in &t.codes {
                    m += c.symbols();
                    used += c.bit_len() as u64;
                    if m <= SYMBOLS {
                        used_by_index[m] = Some(used);
                    }
                }
                Ok(Some(Check::UsedPrefix {
                    used_by_index,
                    index_reg: index.clone(),
                }))
            }
            (Mirror::Xored, _) => bits(plane_bits(&t.xored)),
            (Mirror::Planes, _) => bits(plane_bits(&t.planes)),
            (Mirror::Residue, _) => bits(block_bits(&t.residue)),
            (Mirror::Plane(q), _) => {
                let plane = t
                    .planes
                    .get(q)
                    .ok_or_else(|| format!("no plane {q} in the golden trace ({PLANES} planes)"))?;
                bits(number_bits(*plane as u64, w))
            }
            (other, _) => Err(not_in_trace(other, "MPC decompressor")),
        }
    }
}

/// The golden side of one unit's comparison.
enum Golden {
    Comp(CompGolden),
    Decomp(DecompGolden),
}

impl Golden {
    fn check(&self, p: &StageProbe, set: &ModelSet) -> Result<Option<Check>, String> {
        match self {
            Golden::Comp(g) => g.check(p, set),
            Golden::Decomp(g) => g.check(p, set),
        }
    }
}

/// The golden values of an MPC unit's stage probes for one input: the
/// per-stage trace of the golden model of the unit (for a unit with
/// programmable slots, of its programmed set: the hard-wired predictors
/// plus the loaded slots of the active image).
pub struct ProbeGolden {
    golden: Golden,
    set: ModelSet,
}

impl ProbeGolden {
    /// The compressor of `set` on `block`.
    pub fn compressor(block: &Block, set: &ModelSet) -> ProbeGolden {
        ProbeGolden {
            golden: Golden::Comp(CompGolden::new(block, set, None)),
            set: set.clone(),
        }
    }

    /// The decompressor of `set` on `len` bits of `bits`.
    pub fn decompressor(bits: &[u8; MAX_BLOCK_BYTES], len: usize, set: &ModelSet) -> ProbeGolden {
        ProbeGolden {
            golden: Golden::Decomp(DecompGolden::new(bits, len, set, None)),
            set: set.clone(),
        }
    }

    /// The compressor of a unit with slots, programmed as `ps` (of a set
    /// with `p` hard-wired predictors), on `block`.
    pub fn programmed_compressor(
        block: &Block,
        ps: &golden::mpc::program::ProgrammedSet,
        p: usize,
    ) -> ProbeGolden {
        let set = ps.expanded().clone();
        ProbeGolden {
            golden: Golden::Comp(CompGolden::new(block, &set, Some(SlotContext::of(ps, p)))),
            set,
        }
    }

    /// The decompressor of a unit with slots, programmed as `ps`, on
    /// `len` bits of `bits` given with the active image's epoch
    /// (`epoch_ok`) or another (refused: only the probes compared for
    /// every input are).
    pub fn programmed_decompressor(
        bits: &[u8; MAX_BLOCK_BYTES],
        len: usize,
        epoch_ok: bool,
        ps: &golden::mpc::program::ProgrammedSet,
        p: usize,
    ) -> ProbeGolden {
        let set = ps.expanded().clone();
        ProbeGolden {
            golden: Golden::Decomp(DecompGolden::new(bits, len, &set, Some((p, epoch_ok)))),
            set,
        }
    }

    /// The check of probe `p` (`Ok(None)`: not compared for this input;
    /// `Err`: the trace has no such field).
    pub fn check(&self, p: &StageProbe) -> Result<Option<Check>, String> {
        self.golden.check(p, &self.set)
    }

    /// Why the golden model refuses the decompressor input, if it does.
    pub fn refusal(&self) -> Option<String> {
        match &self.golden {
            Golden::Decomp(g @ DecompGolden { result: Err(e), .. }) if g.accepted().is_none() => {
                Some(e.to_string())
            }
            Golden::Decomp(g) if g.accepted().is_none() => {
                Some("the input's epoch is not the active image's".to_string())
            }
            _ => None,
        }
    }
}

// ---- reading the VCD ------------------------------------------------------------

/// A probe that differs.
#[derive(Clone, Debug)]
pub struct StageDiff {
    /// Pipeline order over the whole design (loopback: decompressor stages
    /// follow the compressor's).
    pub order: usize,
    /// e.g. `compressor stage 1 register`.
    pub stage: String,
    pub signal: String,
    pub meaning: String,
    pub expected: String,
    pub actual: String,
}

/// The outcome of locating one mismatch.
#[derive(Clone, Debug, Default)]
pub struct Location {
    pub dir: PathBuf,
    pub isolated_vcd: PathBuf,
    pub window_vcd: Option<PathBuf>,
    pub gtkw: Vec<PathBuf>,
    /// The block alone gives the golden output.
    pub isolated_ok: bool,
    /// The first differing stage (e.g. `compressor stage 2`), if any.
    pub first_stage: Option<String>,
    pub diffs: Vec<StageDiff>,
    /// Probes found and compared.
    pub compared: Vec<String>,
    pub notes: Vec<String>,
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.first_stage {
            Some(s) => writeln!(f, "first differing stage: {s}")?,
            None if self.isolated_ok => writeln!(
                f,
                "the block alone gives the golden output: the failure depends on its neighbours, stalls or resets (see the window VCD)"
            )?,
            None => writeln!(
                f,
                "no compared stage signal differs ({} compared); the difference arises after the last compared signal",
                self.compared.len()
            )?,
        }
        for d in self.diffs.iter().take(12) {
            writeln!(f, "    {} ({} = golden {})", d.signal, d.stage, d.meaning)?;
            writeln!(f, "        expected {}", d.expected)?;
            writeln!(f, "        actual   {}", d.actual)?;
        }
        if self.diffs.len() > 12 {
            writeln!(
                f,
                "    ... {} more differing signals",
                self.diffs.len() - 12
            )?;
        }
        for n in &self.notes {
            writeln!(f, "    note: {n}")?;
        }
        writeln!(f, "    isolated VCD : {}", self.isolated_vcd.display())?;
        if let Some(w) = &self.window_vcd {
            writeln!(f, "    window VCD   : {}", w.display())?;
        }
        for g in &self.gtkw {
            writeln!(f, "    GTKWave      : gtkwave -a {}", g.display())?;
        }
        Ok(())
    }
}

/// Clock period (from `clk` of the testbench `tb`) and the time `scope`'s
/// stage-1 valid flag `valid1` first rises after reset.
fn timing(vcd: &Vcd, tb: &str, scope: &[&str], valid1: &str) -> Option<(u64, u64)> {
    let clk = vcd.find(&[tb], "clk")?;
    let rises = vcd.rises(clk, "1");
    let period = rises.windows(2).map(|w| w[1] - w[0]).min()?;
    let v = vcd.find(scope, valid1)?;
    let t1 = *vcd.rises(v, "1").first()?;
    Some((period, t1))
}

fn compare_bits(want: &str, got: &str) -> bool {
    // compare on the common low bits; any extra high bits must be zero
    let n = want.len().min(got.len());
    let (wh, wl) = want.split_at(want.len() - n);
    let (gh, gl) = got.split_at(got.len() - n);
    wl == gl && wh.chars().all(|c| c == '0') && gh.chars().all(|c| c == '0')
}

/// The valid flag of stage `stage` of `unit`: the pipeline's flag of that
/// stage (`Pipeline::reg_name(stage, "valid")`), which the description
/// must list among its control signals.
pub fn stage_valid(unit: &UnitDescription, stage: usize) -> Option<String> {
    let name = Pipeline::reg_name(stage, "valid");
    unit.is_control(&name).then_some(name)
}

/// The signals of a unit a comparison reads, by name: `value(name, stage,
/// logic)` is the value of `name` (MSB first, `x` where unknown) when stage
/// `stage`'s logic computes the block (`logic`) or when its registers hold
/// it; `valid(stage)` the stage's valid flag then, with its name (`None`
/// when it has none).
pub struct Sampler<'a> {
    pub value: &'a dyn Fn(&str, usize, bool) -> String,
    pub valid: &'a dyn Fn(usize) -> Option<(String, String)>,
}

/// Compare the probes of one unit (`label`, e.g. `compressor` or
/// `dpc_man_compressor`) with their golden values (`expect`: `Ok(None)`
/// when a probe is not compared for this input, `Err` when the golden trace
/// has no such field) on the values `sample` reads; each differing probe
/// is added to `loc.diffs` (in pipeline order, from `order_base`).
pub fn compare_probes(
    label: &str,
    order_base: usize,
    probes: &[StageProbe],
    expect: &dyn Fn(&StageProbe) -> Result<Option<Check>, String>,
    sample: &Sampler<'_>,
    loc: &mut Location,
) -> Result<(), LocateError> {
    let value = sample.value;
    for p in probes {
        let check = expect(p).map_err(|problem| LocateError::Probe {
            unit: label.to_string(),
            probe: p.name.clone(),
            problem,
        })?;
        let Some(check) = check else { continue };
        let logic = p.kind == ProbeKind::Logic;
        let got = value(&p.name, p.stage, logic);
        if !logic {
            if let Some((flag, v)) = (sample.valid)(p.stage) {
                if v != "1" {
                    loc.notes.push(format!(
                        "{label}: {flag} is not 1 when {} should hold the block",
                        p.name
                    ));
                }
            }
        }
        let stage = format!(
            "{label} stage {} {}",
            p.stage,
            if logic { "logic" } else { "register" }
        );
        loc.compared.push(format!("{label}.{}", p.name));
        let (ok, expected, actual) = match &check {
            Check::Bits(want) => {
                // show the expected value in the register's width
                let shown = if want.len() > got.len()
                    && want[..want.len() - got.len()].chars().all(|c| c == '0')
                {
                    &want[want.len() - got.len()..]
                } else {
                    want.as_str()
                };
                (
                    compare_bits(want, &got),
                    bits_to_hex(shown),
                    bits_to_hex(&got),
                )
            }
            Check::LowBits(want) => {
                let n = want.len().min(got.len());
                let low = &got[got.len() - n..];
                (
                    want.len() <= got.len() && low == want,
                    format!("{} (low {} bits)", bits_to_hex(want), want.len()),
                    format!("{} (low {} bits)", bits_to_hex(low), n),
                )
            }
            Check::Payload {
                bits: want,
                lens_reg,
                fields,
            } => {
                let lens = value(lens_reg, p.stage, logic);
                let sw = got.len() / fields;
                let lw = lens.len() / fields;
                let mut payload = String::new();
                let mut good = sw > 0 && lw > 0;
                for m in 0..*fields {
                    if !good {
                        break;
                    }
                    let l = u64::from_str_radix(&lens[lw * m..lw * (m + 1)], 2);
                    match l {
                        Ok(l) if (l as usize) <= sw => {
                            payload.push_str(&got[sw * m..sw * m + l as usize])
                        }
                        _ => good = false,
                    }
                }
                (
                    good && payload == *want,
                    format!("payload {want} ({} bits)", want.len()),
                    format!("payload {payload} ({} bits)", payload.len()),
                )
            }
            Check::SymbolPrefix { symbols, index_reg } => {
                let idx = u64::from_str_radix(&value(index_reg, p.stage, logic), 2)
                    .unwrap_or(SYMBOLS as u64)
                    .min(SYMBOLS as u64) as usize;
                let mut want = *symbols;
                for s in &mut want[idx..] {
                    *s = 0;
                }
                let want = symbol_bits(&want);
                (
                    compare_bits(&want, &got),
                    format!("{} (first {idx} symbols)", bits_to_hex(&want)),
                    bits_to_hex(&got),
                )
            }
            Check::UsedPrefix {
                used_by_index,
                index_reg,
            } => {
                let idx =
                    u64::from_str_radix(&value(index_reg, p.stage, logic), 2).unwrap_or(0) as usize;
                let got_n = u64::from_str_radix(&got, 2).ok();
                match used_by_index.get(idx).copied().flatten() {
                    Some(want) => (
                        got_n == Some(want),
                        format!("{want} (after {idx} symbols)"),
                        got_n.map_or(got.clone(), |g| g.to_string()),
                    ),
                    None => (
                        false,
                        format!("a code boundary (index {idx} is inside a zero run)"),
                        got_n.map_or(got.clone(), |g| g.to_string()),
                    ),
                }
            }
        };
        if !ok {
            loc.diffs.push(StageDiff {
                order: order_base + 2 * p.stage + (!logic) as usize,
                stage,
                signal: p.name.clone(),
                meaning: p.mirrors.to_string(),
                expected,
                actual,
            });
        }
    }
    Ok(())
}

/// Check the probes of `unit` (the design in `scope` of the VCD, under
/// the testbench `tb`) against the VCD. Every probe, its sibling and the
/// valid flags of the stages must be in the VCD: a missing one is an
/// error naming the signal and the unit.
#[allow(clippy::too_many_arguments)]
pub(crate) fn check_scope(
    vcd: &Vcd,
    vcd_path: &Path,
    tb: &str,
    scope: &[&str],
    label: &str,
    order_base: usize,
    unit: &UnitDescription,
    expect: &dyn Fn(&StageProbe) -> Result<Option<Check>, String>,
    loc: &mut Location,
) -> Result<(), LocateError> {
    let find = |signal: &str, needed_for: String| {
        vcd.find(scope, signal)
            .ok_or_else(|| LocateError::MissingSignal {
                unit: label.to_string(),
                signal: signal.to_string(),
                needed_for,
                vcd: vcd_path.to_path_buf(),
            })
    };
    let valid_of = |stage: usize| {
        stage_valid(unit, stage).ok_or_else(|| LocateError::Probe {
            unit: label.to_string(),
            probe: format!("stage {stage}"),
            problem: format!(
                "the unit description lists no valid flag `{}` among its control signals",
                Pipeline::reg_name(stage, "valid")
            ),
        })
    };
    for s in &unit.stages {
        find(
            &valid_of(s.stage)?,
            format!("the valid flag of stage {}", s.stage),
        )?;
    }
    // every claimed signal must exist, whether or not this block compares it
    for p in &unit.probes {
        if !unit.stages.iter().any(|s| s.stage == p.stage) {
            return Err(LocateError::Probe {
                unit: label.to_string(),
                probe: p.name.clone(),
                problem: format!(
                    "stage {} is not a stage of the unit ({} stages)",
                    p.stage,
                    unit.stages.len()
                ),
            });
        }
        let what = format!("stage-{} probe of golden {}", p.stage, p.mirrors);
        let var = find(&p.name, what.clone())?;
        if var.width != p.width {
            return Err(LocateError::Probe {
                unit: label.to_string(),
                probe: p.name.clone(),
                problem: format!(
                    "{} bits in the VCD but {} bits in the generator's probe list",
                    var.width, p.width
                ),
            });
        }
        if let Some(w) = &p.with {
            find(w, format!("needed to compare `{}`", p.name))?;
        }
        if p.kind == ProbeKind::Register {
            find(
                &valid_of(p.stage)?,
                format!("the valid flag of stage {}", p.stage),
            )?;
        }
    }
    let valid1 = valid_of(1)?;
    find(&valid1, "the valid flag of stage 1".to_string())?;
    let Some((period, t1)) = timing(vcd, tb, scope, &valid1) else {
        loc.notes.push(format!(
            "{label}: no clk or {valid1} rise in the VCD; stage signals not compared"
        ));
        return Ok(());
    };
    let value = |name: &str, stage: usize, logic: bool| -> String {
        let Some(var) = vcd.find(scope, name) else {
            return String::new();
        };
        let edge = t1 + (stage as u64).saturating_sub(1) * period;
        let t = if logic {
            edge.saturating_sub(period / 2)
        } else {
            edge + period / 2
        };
        // no value yet: unknown
        vcd.value_at(var, t)
            .unwrap_or_else(|| "x".repeat(var.width as usize))
    };
    let valid = |stage: usize| {
        stage_valid(unit, stage).map(|flag| {
            let v = value(&flag, stage, false);
            (flag, v)
        })
    };
    compare_probes(
        label,
        order_base,
        &unit.probes,
        expect,
        &Sampler {
            value: &value,
            valid: &valid,
        },
        loc,
    )
}

// ---- GTKWave save files ------------------------------------------------------------

/// One unit of a GTKWave save file: the VCD scope it is in (`dut`,
/// `comp`, `dec`) and its description.
pub struct GtkwUnit<'a> {
    pub scope: &'a str,
    pub unit: &'a UnitDescription,
}

fn gtkw_trace(s: &mut String, v: &crate::vcd::Var) {
    let _ = writeln!(s, "@{}\n{}", if v.width == 1 { 28 } else { 22 }, v.path());
}

fn gtkw_group(s: &mut String, title: &str, vars: &[&crate::vcd::Var]) {
    if vars.is_empty() {
        return;
    }
    let _ = writeln!(s, "@800200\n-{title}");
    for v in vars {
        gtkw_trace(s, v);
    }
    let _ = writeln!(s, "@1000200\n-{title}");
}

/// A `.gtkw` that opens `vcd` with the handshake signals of the testbench
/// `tb`, then each unit's signals grouped by the stages of its description
/// (each stage: its valid flag and enable, its data registers, the probe
/// wires of its logic), then its ports.
pub fn write_stage_gtkw(
    vcd_path: &Path,
    vcd: &Vcd,
    tb: &str,
    units: &[GtkwUnit<'_>],
    out: &Path,
) -> Result<(), LocateError> {
    let mut s = String::new();
    let abs = vcd_path
        .canonicalize()
        .unwrap_or_else(|_| vcd_path.to_path_buf());
    let _ = writeln!(s, "[dumpfile] \"{}\"", abs.display());
    let _ = writeln!(s, "[timestart] 0\n[size] 1600 1000\n[sst_expanded] 1");
    let handshake: Vec<_> = [
        "clk",
        "rst",
        "in_valid",
        "in_ready",
        "out_valid",
        "out_ready",
        "cyc",
        "n_out",
    ]
    .iter()
    .filter_map(|name| vcd.find(&[tb], name))
    .collect();
    gtkw_group(&mut s, "testbench", &handshake);
    for u in units {
        let scope = [tb, u.scope];
        let d = u.unit;
        for st in &d.stages {
            let k = st.stage;
            let control = [
                Pipeline::reg_name(k, "valid"),
                Pipeline::reg_name(k, "enable"),
            ];
            let names = control
                .iter()
                .filter(|c| d.is_control(c))
                .chain(st.registers.iter())
                .chain(
                    d.probes
                        .iter()
                        .filter(|p| p.stage == k && p.kind == ProbeKind::Logic)
                        .map(|p| &p.name),
                );
            let vars: Vec<_> = names.filter_map(|n| vcd.find(&scope, n)).collect();
            gtkw_group(&mut s, &format!("{} {}", u.scope, st.title), &vars);
        }
        let ports: Vec<_> = d
            .ports
            .iter()
            .filter_map(|p| vcd.find(&scope, &p.name))
            .collect();
        gtkw_group(&mut s, &format!("{} ports", u.scope), &ports);
    }
    std::fs::write(out, s).map_err(|source| LocateError::Io {
        path: out.to_path_buf(),
        source,
    })
}

/// The units of the MPC testbench (`mpc_tb`) that runs `unit`, each in
/// its VCD scope: `dut` for one unit, `comp` and `dec` for the loopback.
pub fn mpc_gtkw_units(unit: Unit, units: &MpcUnits) -> Vec<GtkwUnit<'_>> {
    match unit {
        Unit::Compressor => vec![GtkwUnit {
            scope: "dut",
            unit: &units.compressor,
        }],
        Unit::Decompressor => vec![GtkwUnit {
            scope: "dut",
            unit: &units.decompressor,
        }],
        Unit::Loopback => vec![
            GtkwUnit {
                scope: "comp",
                unit: &units.compressor,
            },
            GtkwUnit {
                scope: "dec",
                unit: &units.decompressor,
            },
        ],
    }
}

// ---- the locate procedure --------------------------------------------------------------

/// The failing vector.
#[derive(Clone, Copy, Debug)]
pub enum Failing {
    Comp(CompVector),
    Decomp(DecompVector),
}

/// Where the failure happened in its original run (for the window VCD).
pub struct Context<'a> {
    pub files: &'a RunFiles,
    pub n: usize,
    /// Shard-local cycle the failing output was delivered in, and its latency.
    pub cycle: u64,
    pub latency: u64,
}

/// The descriptions of both MPC units, and how they were found.
#[derive(Clone, Debug)]
pub struct MpcUnits {
    pub compressor: UnitDescription,
    pub decompressor: UnitDescription,
    /// Set when the RTL directory's `params.json` does not describe both
    /// units and the generator's descriptions are used instead.
    pub note: Option<String>,
}

/// The descriptions of both MPC units (compressor, decompressor): the
/// `units` of the RTL directory's `params.json` when it describes both,
/// else (with a note) the generator's for the model set at the RTL's
/// pipeline depths.
pub fn mpc_unit_descriptions(rtl: &Rtl, set: &ModelSet) -> Result<MpcUnits, LocateError> {
    let path = rtl.dir.join("params.json");
    let comp = hdl::Unit::Mpc(hdl::Side::Compressor).module_name();
    let decomp = hdl::Unit::Mpc(hdl::Side::Decompressor).module_name();
    if let Ok(units) = hdl::unit::read_units(&path) {
        let find = |m: &str| units.iter().find(|u| u.module == m).cloned();
        if let (Some(compressor), Some(decompressor)) = (find(comp), find(decomp)) {
            return Ok(MpcUnits {
                compressor,
                decompressor,
                note: None,
            });
        }
    }
    let note = format!(
        "{} has no stage probe list (params.json `units` describing both units); comparing the probes the generator emits for model set {}",
        rtl.dir.display(),
        set.name
    );
    let err = |e: hdl::ir::IrError| LocateError::Probes {
        set: set.name.clone(),
        message: e.to_string(),
    };
    Ok(MpcUnits {
        compressor: hdl::mpc::compressor::build_staged(set, rtl.params.compressor_latency)
            .map_err(err)?
            .1,
        decompressor: hdl::mpc::decompressor::build_staged(set, rtl.params.decompressor_latency)
            .map_err(err)?
            .1,
        note: Some(note),
    })
}

/// Rerun the failing vector alone with a VCD and compare its stages; then
/// (with `context`) rerun the original shard with a VCD window.
#[allow(clippy::too_many_arguments)]
pub fn locate(
    sim: Simulator,
    unit: Unit,
    rtl: &Rtl,
    set: &ModelSet,
    build_dir: &Path,
    out_dir: &Path,
    failing: Failing,
    context: Option<Context<'_>>,
) -> Result<Location, LocateError> {
    // the replay is a few blocks long: the quick C++ build
    let b = sim::build(sim, unit, rtl, build_dir, true, sim::CxxOpt::Quick)?;
    std::fs::create_dir_all(out_dir).map_err(|source| LocateError::Io {
        path: out_dir.to_path_buf(),
        source,
    })?;
    let out_dir = out_dir.canonicalize().map_err(|source| LocateError::Io {
        path: out_dir.to_path_buf(),
        source,
    })?;
    let iso = out_dir.join("isolated");
    std::fs::create_dir_all(&iso).map_err(|source| LocateError::Io {
        path: iso.clone(),
        source,
    })?;
    let files = RunFiles::new(&iso);
    let width = set.max_bits();
    match failing {
        Failing::Comp(v) => vectors::write_comp(&files.vectors, &[v])?,
        Failing::Decomp(v) => vectors::write_decomp(&files.vectors, &[v], width)?,
    }
    Schedule::free().write(&files.schedule)?;
    let vcd_path = out_dir.join("isolated.vcd");
    sim::run(
        &b,
        &files,
        1,
        &RunOptions {
            timeout_cycles: 1000,
            vcd: Some((vcd_path.clone(), 0, None)),
            plusargs: Vec::new(),
            stages: 0,
        },
        None,
    )?;
    let mut loc = Location {
        dir: out_dir.clone(),
        isolated_vcd: vcd_path.clone(),
        ..Default::default()
    };
    // does the block alone pass?
    let codec = golden::mpc::MpcCodec::new(set);
    let out = compare::read_records(&files.out, unit, &rtl.params)?;
    let (inputs_c, inputs_d);
    let (inputs, expected): (Inputs<'_>, Vec<Expect>) = match (failing, unit) {
        (Failing::Comp(v), Unit::Compressor) => {
            inputs_c = [v];
            (
                Inputs::Comp(&inputs_c),
                compare::expect_compressor(&codec, &inputs_c),
            )
        }
        (Failing::Comp(v), _) => {
            inputs_c = [v];
            (
                Inputs::Comp(&inputs_c),
                compare::expect_loopback(&codec, &inputs_c),
            )
        }
        (Failing::Decomp(v), _) => {
            inputs_d = [v];
            (
                Inputs::Decomp(&inputs_d),
                compare::expect_decompressor(&codec, &inputs_d),
            )
        }
    };
    let tags = crate::vectors::Tags::new();
    let verdict = compare::compare(
        &compare::Shard {
            index: 0,
            offset: 0,
            inputs,
            expected: &expected,
            model: None,
        },
        &out,
        &tags,
        unit.stages(&rtl.params),
    );
    loc.isolated_ok = verdict.ok();
    let text = std::fs::read_to_string(&vcd_path).map_err(|source| LocateError::Io {
        path: vcd_path.clone(),
        source,
    })?;
    let vcd = Vcd::parse(&text).map_err(|source| LocateError::Vcd {
        path: vcd_path.clone(),
        source,
    })?;
    let units = mpc_unit_descriptions(rtl, set)?;
    loc.notes.extend(units.note.clone());
    let (comp_unit, decomp_unit) = (&units.compressor, &units.decompressor);
    let decomp = |bits: &[u8; MAX_BLOCK_BYTES],
                  len: usize,
                  scope: &[&str],
                  order_base: usize,
                  loc: &mut Location|
     -> Result<(), LocateError> {
        let g = Golden::Decomp(DecompGolden::new(bits, len, set, None));
        if let Golden::Decomp(DecompGolden { result: Err(e), .. }) = &g {
            loc.notes.push(format!(
                "golden rejects the decompressor input ({e}); only the decompressor probes compared for every input (header, error flag, block) are compared"
            ));
        }
        check_scope(
            &vcd,
            &vcd_path,
            "mpc_tb",
            scope,
            "decompressor",
            order_base,
            decomp_unit,
            &|p| g.check(p, set),
            loc,
        )
    };
    match failing {
        Failing::Comp(v) => {
            let scope = if unit == Unit::Loopback {
                "comp"
            } else {
                "dut"
            };
            let g = Golden::Comp(CompGolden::new(&v.block, set, None));
            check_scope(
                &vcd,
                &vcd_path,
                "mpc_tb",
                &["mpc_tb", scope],
                "compressor",
                0,
                comp_unit,
                &|p| g.check(p, set),
                &mut loc,
            )?;
            if unit == Unit::Loopback {
                let c = codec.compress(&v.block);
                decomp(&c.bytes, c.len as usize, &["mpc_tb", "dec"], 100, &mut loc)?;
            }
        }
        Failing::Decomp(v) => {
            decomp(&v.bits, v.len as usize, &["mpc_tb", "dut"], 0, &mut loc)?;
        }
    }
    loc.diffs.sort_by_key(|d| d.order);
    loc.first_stage = loc.diffs.first().map(|d| d.stage.clone());
    let g = out_dir.join("isolated.gtkw");
    let gtkw_units = mpc_gtkw_units(unit, &units);
    write_stage_gtkw(&vcd_path, &vcd, "mpc_tb", &gtkw_units, &g)?;
    loc.gtkw.push(g);
    if let Some(ctx) = context {
        window_rerun(
            &b,
            &ctx,
            &out_dir,
            ("mpc_tb", &gtkw_units),
            Vec::new(),
            100_000,
            &mut loc,
        )?;
    }
    write_report(&out_dir, &loc)?;
    Ok(loc)
}

/// Rerun the failing shard of `ctx` on the traced build `b` with a VCD
/// window from 16 cycles before the block was accepted to 16 cycles after
/// it was delivered (`<out_dir>/window.vcd`), with its save file
/// (`window.gtkw`: the testbench `tb` and `units`), noted in `loc`.
pub(crate) fn window_rerun(
    b: &sim::Build,
    ctx: &Context<'_>,
    out_dir: &Path,
    (tb, units): (&str, &[GtkwUnit<'_>]),
    plusargs: Vec<String>,
    timeout_cycles: u64,
    loc: &mut Location,
) -> Result<(), LocateError> {
    let from = (ctx.cycle.saturating_sub(ctx.latency)).saturating_sub(16);
    let to = ctx.cycle + 16;
    let wdir = out_dir.join("window");
    std::fs::create_dir_all(&wdir).map_err(|source| LocateError::Io {
        path: wdir.clone(),
        source,
    })?;
    let wfiles = RunFiles {
        dir: wdir.clone(),
        vectors: ctx.files.vectors.clone(),
        schedule: ctx.files.schedule.clone(),
        out: wdir.join("out.txt"),
    };
    let wvcd = out_dir.join("window.vcd");
    sim::run(
        b,
        &wfiles,
        ctx.n,
        &RunOptions {
            timeout_cycles,
            vcd: Some((wvcd.clone(), from, Some(to))),
            plusargs,
            stages: 0,
        },
        None,
    )?;
    if let Ok(text) = std::fs::read_to_string(&wvcd) {
        if let Ok(wv) = Vcd::parse(&text) {
            let g = out_dir.join("window.gtkw");
            write_stage_gtkw(&wvcd, &wv, tb, units, &g)?;
            loc.gtkw.push(g);
        }
        loc.window_vcd = Some(wvcd);
        loc.notes.push(format!(
            "window VCD covers shard cycles {from}..{to} (the block was accepted in cycle {}, delivered in {})",
            ctx.cycle.saturating_sub(ctx.latency),
            ctx.cycle
        ));
    }
    Ok(())
}

/// `loc` as `<out_dir>/report.txt`.
pub(crate) fn write_report(out_dir: &Path, loc: &Location) -> Result<(), LocateError> {
    let report = out_dir.join("report.txt");
    std::fs::write(&report, loc.to_string()).map_err(|source| LocateError::Io {
        path: report,
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bit_layouts_match_the_rtl_conventions() {
        let mut b = [0u8; 32];
        b[0] = 0x01;
        b[31] = 0x80;
        let s = block_bits(&b);
        assert_eq!(s.len(), 256);
        assert_eq!(&s[..1], "1"); // byte 31 bit 7 is bit 255
        assert_eq!(&s[255..], "1"); // byte 0 bit 0 is bit 0
        let mut p = [0u32; 8];
        p[7] = 1 << 31;
        p[0] = 1;
        let s = plane_bits(&p);
        assert!(s.starts_with('1') && s.ends_with('1'));
        let mut sy = [0u16; 16];
        sy[0] = 0x8000;
        let s = symbol_bits(&sy);
        assert!(s.starts_with('1') && s[1..].chars().all(|c| c == '0'));
        assert_eq!(number_bits(5, 4), "0101");
        let mut bytes = [0u8; 33];
        bytes[0] = 0x40;
        assert_eq!(&bus_bits(&bytes, 259)[..3], "010");
        assert!(compare_bits("0011", "11"));
        assert!(!compare_bits("0111", "11"));
        assert_eq!(bytes_bits(&[0x01, 0x80]), "1000000000000001");
        assert_eq!(flag_bits(&[true, false, false]), "001");
        assert_eq!(left_aligned_bits(&[0xff], 3, 5), "11100");
    }

    fn probe(name: &str, stage: usize, kind: ProbeKind, mirrors: Mirror) -> StageProbe {
        StageProbe {
            name: name.to_string(),
            stage,
            kind,
            width: 4,
            mirrors,
            when: When::Always,
            with: None,
        }
    }

    fn two_stages() -> UnitDescription {
        UnitDescription {
            module: "u".to_string(),
            latency: 2,
            ports: vec![hdl::unit::PortDesc {
                name: "in_x".to_string(),
                dir: hdl::unit::Direction::Input,
                width: 4,
            }],
            control: ["s1_valid", "s2_valid", "s1_enable", "s2_enable"]
                .map(String::from)
                .to_vec(),
            stages: vec![
                hdl::unit::StageDesc {
                    stage: 1,
                    title: "stage 1: first".to_string(),
                    registers: vec!["s1_a".to_string()],
                },
                hdl::unit::StageDesc {
                    stage: 2,
                    title: "stage 2: second".to_string(),
                    registers: vec!["s2_b".to_string()],
                },
            ],
            probes: vec![
                probe("w", 2, ProbeKind::Logic, Mirror::Data),
                probe("s2_b", 2, ProbeKind::Register, Mirror::Block),
            ],
        }
    }

    #[test]
    fn probes_compare_on_their_checks_in_pipeline_order() {
        let unit = two_stages();
        let value = |name: &str, _: usize, _: bool| match name {
            "w" => "x101".to_string(),
            "s2_b" => "0110".to_string(),
            _ => "1".to_string(),
        };
        let valid = |k: usize| stage_valid(&unit, k).map(|f| (f, "1".to_string()));
        let sample = Sampler {
            value: &value,
            valid: &valid,
        };
        let mut loc = Location::default();
        // `w` is right on its low 3 bits (the top one undefined); `s2_b` differs
        let expect = |p: &StageProbe| {
            Ok(Some(match p.mirrors {
                Mirror::Data => Check::LowBits("101".to_string()),
                _ => Check::Bits("0111".to_string()),
            }))
        };
        compare_probes("u", 0, &unit.probes, &expect, &sample, &mut loc).expect("compared");
        assert_eq!(loc.compared, ["u.w", "u.s2_b"]);
        assert_eq!(loc.diffs.len(), 1, "{loc}");
        assert_eq!(loc.diffs[0].signal, "s2_b");
        assert_eq!(loc.diffs[0].stage, "u stage 2 register");
        assert_eq!(loc.diffs[0].meaning, "block");
        // a trace without the field: an error naming the probe and the unit
        let missing = |p: &StageProbe| Err(not_in_trace(p.mirrors, "test"));
        let e = compare_probes("u", 0, &unit.probes, &missing, &sample, &mut loc)
            .expect_err("no such field");
        assert!(
            e.to_string().contains("u probe `w`: `data` is not a field"),
            "{e}"
        );
        assert_eq!(stage_valid(&unit, 3), None);
    }

    #[test]
    fn the_gtkwave_file_groups_signals_by_the_described_stages() {
        let text = "$scope module x_tb $end
$var wire 1 ! clk $end
$scope module dut $end
$var reg 1 \" s1_valid $end
$var reg 1 # s2_valid $end
$var wire 1 $ s2_enable $end
$var reg 4 % s1_a [3:0] $end
$var reg 4 & s2_b [3:0] $end
$var wire 4 ' w [3:0] $end
$var wire 4 ( in_x [3:0] $end
$var wire 4 ) other [3:0] $end
$upscope $end
$upscope $end
$enddefinitions $end
#0
0!
";
        let vcd = Vcd::parse(text).expect("vcd");
        let unit = two_stages();
        let dir = std::env::temp_dir().join(format!("locate-gtkw-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let out = dir.join("t.gtkw");
        write_stage_gtkw(
            &dir.join("t.vcd"),
            &vcd,
            "x_tb",
            &[GtkwUnit {
                scope: "dut",
                unit: &unit,
            }],
            &out,
        )
        .expect("written");
        let g = std::fs::read_to_string(&out).expect("read");
        let _ = std::fs::remove_dir_all(&dir);
        let lines: Vec<&str> = g.lines().filter(|l| !l.starts_with('@')).collect();
        let from = lines
            .iter()
            .position(|l| *l == "-dut stage 1: first")
            .expect("stage 1 group");
        assert_eq!(
            lines[from..],
            [
                "-dut stage 1: first",
                "x_tb.dut.s1_valid",
                "x_tb.dut.s1_a[3:0]",
                "-dut stage 1: first",
                "-dut stage 2: second",
                "x_tb.dut.s2_valid",
                "x_tb.dut.s2_enable",
                "x_tb.dut.s2_b[3:0]",
                "x_tb.dut.w[3:0]",
                "-dut stage 2: second",
                "-dut ports",
                "x_tb.dut.in_x[3:0]",
                "-dut ports",
            ]
        );
        assert!(
            lines.contains(&"-testbench") && lines.contains(&"x_tb.clk"),
            "{g}"
        );
    }
}
