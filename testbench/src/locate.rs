//! Locating a mismatch: rerun the failing block alone with a VCD dump, read
//! the pipeline registers (and the named stage logic) by name and compare
//! them with the golden trace, stage by stage; rerun the failing shard with
//! a VCD window around the failure; write GTKWave save files that group the
//! signals by stage. The name-to-trace mapping is in docs/hw/cosim.md.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use golden::mpc::select::{self, Choice};
use golden::mpc::{
    reference, CustomModels, ModelKind, ModelSet, BLOCK_BYTES, MAX_BLOCK_BYTES, PLANES, SYMBOLS,
};

use crate::compare::{self, Expect, Inputs};
use crate::output;
use crate::rtl::Rtl;
use crate::schedule::Schedule;
use crate::sim::{self, RunFiles, RunOptions, SimError};
use crate::vcd::{bits_to_hex, Vcd};
use crate::vectors::{self, Block, CompVector, DecompVector};
use crate::{Simulator, Unit};

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
    Output(#[from] output::OutputError),
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

// ---- probes ---------------------------------------------------------------

/// How a probe's expected value is checked.
#[derive(Clone, Debug)]
enum Check {
    /// Equal to these bits (`width` chars, MSB first; shorter/longer
    /// registers are compared on the low bits).
    Bits(String),
    /// `s2_codes`/`s2_code_lens` slots concatenated = these payload bits.
    Payload(String),
    /// Symbols 0..index equal these, later symbols zero, with the register
    /// `index` (a sibling) naming how many are decoded; `used` the bits
    /// consumed by those codes per prefix length.
    SymbolPrefix {
        symbols: [u16; SYMBOLS],
        index_reg: String,
    },
    /// `used` register: header bits + the lengths of the codes covering the
    /// first `index` symbols (`None`: index not on a code boundary).
    UsedPrefix {
        used_by_index: Vec<Option<u64>>,
        index_reg: String,
    },
}

/// One named signal to compare.
#[derive(Clone, Debug)]
struct Probe {
    /// Stage whose register it is, or whose logic computes it.
    stage: usize,
    /// Stage logic (sampled while the stage's inputs hold the block) rather
    /// than a pipeline register.
    logic: bool,
    name: String,
    check: Check,
    /// The golden trace field it equals.
    meaning: String,
}

fn reg(stage: usize, name: &str, bits: String, meaning: &str) -> Probe {
    Probe {
        stage,
        logic: false,
        name: name.to_string(),
        check: Check::Bits(bits),
        meaning: meaning.to_string(),
    }
}

fn logic(stage: usize, name: &str, bits: String, meaning: &str) -> Probe {
    Probe {
        stage,
        logic: true,
        name: name.to_string(),
        check: Check::Bits(bits),
        meaning: meaning.to_string(),
    }
}

/// Probes of the compressor for `block`.
fn compressor_probes(block: &Block, set: &ModelSet) -> Vec<Probe> {
    let t = reference::compress_traced(block, set);
    let h = set.header_bits();
    let w = set.max_bits();
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
    let best = match select::choose(&plain, block, &scores) {
        Choice::Predictor(i) => i,
        _ => 0,
    };
    let mut v = Vec::new();
    for (i, c) in t.candidates.iter().enumerate() {
        let f = |x: &str| format!("candidates[{i}].{x}");
        v.push(logic(
            1,
            &format!("pred_p{i}"),
            block_bits(&c.pred),
            &f("pred"),
        ));
        v.push(logic(
            1,
            &format!("residue_p{i}"),
            block_bits(&c.residue),
            &f("residue"),
        ));
        v.push(logic(
            1,
            &format!("planes_p{i}"),
            plane_bits(&c.planes),
            &f("planes"),
        ));
        v.push(logic(
            1,
            &format!("xored_p{i}"),
            plane_bits(&c.xored),
            &f("xored"),
        ));
        v.push(logic(
            1,
            &format!("symbols_p{i}"),
            symbol_bits(&c.symbols),
            &f("symbols"),
        ));
        v.push(logic(
            1,
            &format!("zero_mask_p{i}"),
            number_bits(c.score.zero_mask as u64, 16),
            &f("score.zero_mask"),
        ));
        v.push(logic(
            1,
            &format!("longest_zero_run_p{i}"),
            number_bits(c.score.longest_zero_run as u64, 5),
            &f("score.longest_zero_run"),
        ));
        v.push(logic(
            1,
            &format!("zero_count_p{i}"),
            number_bits(c.score.zero_count as u64, 5),
            &f("score.zero_count"),
        ));
        v.push(logic(
            1,
            &format!("cand_p{i}_code_bits"),
            number_bits(c.score.code_bits as u64, 9),
            &f("score.code_bits"),
        ));
        v.push(reg(
            1,
            &format!("s1_symbols_p{i}"),
            symbol_bits(&c.symbols),
            &f("symbols"),
        ));
    }
    let zb = number_bits(t.is_zero_block as u64, 1);
    let sw = number_bits(t.is_same_words as u64, 1);
    v.push(logic(1, "is_zero_block", zb.clone(), "is_zero_block"));
    v.push(logic(1, "is_same_words", sw.clone(), "is_same_words"));
    v.push(reg(1, "s1_is_zero_block", zb, "is_zero_block"));
    v.push(reg(1, "s1_is_same_words", sw, "is_same_words"));
    if !t.candidates.is_empty() {
        v.push(logic(
            1,
            "best_predictor",
            number_bits(best as u64, 32),
            "best predictor index (select::choose without custom models)",
        ));
    }
    v.push(reg(
        1,
        "s1_choice_id",
        number_bits(choice_id as u64, h),
        "model ID of select::choose (before the raw check)",
    ));
    v.push(reg(1, "s1_block", block_bits(block), "block"));
    if let Choice::Predictor(i) = choice {
        let c = &t.candidates[i];
        let m = format!("candidates[{i}].symbols (the chosen predictor)");
        v.push(reg(1, "s1_symbols", symbol_bits(&c.symbols), &m));
        v.push(reg(2, "s2_symbols", symbol_bits(&c.symbols), &m));
        v.push(logic(
            2,
            "enc_code_bits",
            number_bits(c.score.code_bits as u64, 9),
            &format!("candidates[{i}].score.code_bits"),
        ));
    }
    v.push(reg(
        2,
        "s2_selected_id",
        number_bits(t.selected_id as u64, h),
        "selected_id",
    ));
    let out_bits = t.output.bit_string();
    v.push(Probe {
        stage: 2,
        logic: false,
        name: "s2_codes".to_string(),
        check: Check::Payload(out_bits[h as usize..].to_string()),
        meaning: "codes (slots concatenated by s2_code_lens = the payload of output)".to_string(),
    });
    v.push(reg(
        3,
        "s3_bits",
        bus_bits(&t.output.bytes, w),
        "output bits (left-aligned)",
    ));
    v.push(reg(
        3,
        "s3_len",
        number_bits(t.output.len as u64, 9),
        "output.len",
    ));
    v.push(reg(
        3,
        "s3_model",
        number_bits(t.output.model as u64, h),
        "output.model",
    ));
    v
}

/// Probes of the decompressor for `len` bits of `bits`.
fn decompressor_probes(
    bits: &[u8; MAX_BLOCK_BYTES],
    len: usize,
    set: &ModelSet,
) -> (Vec<Probe>, Vec<String>) {
    let h = set.header_bits();
    let width = set.max_bits() as usize;
    let header = compare::header_field(bits, set);
    let mut v = vec![logic(
        1,
        "header_id",
        number_bits(header as u64, h),
        "model_id (the header field)",
    )];
    let mut notes = Vec::new();
    match reference::decompress_traced(&bits[..width.div_ceil(8)], len, set) {
        Err(e) => {
            notes.push(format!(
                "golden rejects the input ({e}); only the error flag and the zero block of stage 4 are compared"
            ));
            v.push(reg(
                4,
                "s4_error",
                "1".to_string(),
                "decompress returns Err",
            ));
            v.push(reg(4, "s4_block", "0".repeat(256), "all zero on errors"));
        }
        Ok(t) => {
            let id = number_bits(t.model_id as u64, h);
            for k in 1..=3 {
                v.push(reg(k, &format!("s{k}_model_id"), id.clone(), "model_id"));
            }
            v.push(reg(4, "s4_model", id, "model_id"));
            for k in 1..=4 {
                v.push(reg(
                    k,
                    &format!("s{k}_error"),
                    "0".to_string(),
                    "decompress returns Ok",
                ));
            }
            v.push(reg(1, "s1_len", number_bits(len as u64, 9), "len"));
            if let Some(ModelKind::Predictor(p)) = set.kind_of(t.model_id) {
                // symbols and bits used after each code
                let mut used_by_index = vec![None; SYMBOLS + 1];
                let mut m = 0usize;
                let mut used = h as u64;
                used_by_index[0] = Some(used);
                for c in &t.codes {
                    m += c.symbols();
                    used += c.bit_len() as u64;
                    if m <= SYMBOLS {
                        used_by_index[m] = Some(used);
                    }
                }
                for k in 1..=2 {
                    v.push(Probe {
                        stage: k,
                        logic: false,
                        name: format!("s{k}_symbols"),
                        check: Check::SymbolPrefix {
                            symbols: t.symbols,
                            index_reg: format!("s{k}_sym_index"),
                        },
                        meaning: "symbols (the ones decoded so far)".to_string(),
                    });
                }
                v.push(Probe {
                    stage: 1,
                    logic: false,
                    name: "s1_used".to_string(),
                    check: Check::UsedPrefix {
                        used_by_index,
                        index_reg: "s1_sym_index".to_string(),
                    },
                    meaning: "header + lengths of the codes decoded so far".to_string(),
                });
                v.push(reg(2, "s2_xored", plane_bits(&t.xored), "xored"));
                v.push(reg(2, "s2_planes", plane_bits(&t.planes), "planes"));
                v.push(logic(
                    3,
                    &format!("inv_residue_p{p}"),
                    block_bits(&t.residue),
                    "residue",
                ));
                v.push(reg(3, "s3_residue", block_bits(&t.residue), "residue"));
                v.push(logic(
                    4,
                    &format!("restored_p{p}"),
                    block_bits(&t.block),
                    "block",
                ));
            } else if set.kind_of(t.model_id) == Some(ModelKind::Raw) {
                v.push(reg(
                    3,
                    "s3_residue",
                    block_bits(&t.block),
                    "block (raw payload)",
                ));
            }
            v.push(reg(4, "s4_block", block_bits(&t.block), "block"));
        }
    }
    (v, notes)
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

/// Clock period and the time `scope`'s `s1_valid` first rises after reset.
fn timing(vcd: &Vcd, scope: &[&str]) -> Option<(u64, u64)> {
    let clk = vcd.find(&["mpc_tb"], "clk")?;
    let rises = vcd.rises(clk, "1");
    let period = rises.windows(2).map(|w| w[1] - w[0]).min()?;
    let v = vcd.find(scope, "s1_valid")?;
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

/// Check `probes` of the design in `scope` against the VCD.
fn check_scope(
    vcd: &Vcd,
    scope: &[&str],
    label: &str,
    order_base: usize,
    probes: &[Probe],
    loc: &mut Location,
) {
    let Some((period, t1)) = timing(vcd, scope) else {
        loc.notes.push(format!(
            "{label}: no clk or s1_valid rise in the VCD; stage signals not compared"
        ));
        return;
    };
    let value = |name: &str, stage: usize, logic: bool| -> Option<String> {
        let var = vcd.find(scope, name)?;
        let edge = t1 + (stage as u64 - 1) * period;
        let t = if logic {
            edge - period / 2
        } else {
            edge + period / 2
        };
        vcd.value_at(var, t)
    };
    for p in probes {
        let Some(got) = value(&p.name, p.stage, p.logic) else {
            continue;
        };
        if !p.logic {
            let valid = value(&format!("s{}_valid", p.stage), p.stage, false);
            if valid.as_deref() != Some("1") {
                loc.notes.push(format!(
                    "{label}: s{}_valid is not 1 when {} should hold the block",
                    p.stage, p.name
                ));
            }
        }
        let stage = format!(
            "{label} stage {} {}",
            p.stage,
            if p.logic { "logic" } else { "register" }
        );
        loc.compared.push(format!("{label}.{}", p.name));
        let (ok, expected, actual) = match &p.check {
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
            Check::Payload(want) => {
                let lens = value("s2_code_lens", p.stage, false).unwrap_or_default();
                let sw = got.len() / SYMBOLS;
                let lw = lens.len() / SYMBOLS;
                let mut payload = String::new();
                let mut good = sw > 0 && lw > 0;
                for m in 0..SYMBOLS {
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
                let idx = value(index_reg, p.stage, false)
                    .and_then(|s| u64::from_str_radix(&s, 2).ok())
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
                let idx = value(index_reg, p.stage, false)
                    .and_then(|s| u64::from_str_radix(&s, 2).ok())
                    .unwrap_or(0) as usize;
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
                order: order_base + 2 * p.stage + (!p.logic) as usize,
                stage,
                signal: p.name.clone(),
                meaning: p.meaning.clone(),
                expected,
                actual,
            });
        }
    }
}

// ---- GTKWave save files ------------------------------------------------------------

/// A `.gtkw` that opens `vcd` with the testbench handshake signals and each
/// unit's signals grouped by stage (`s<k>_*`, then the rest).
pub fn write_gtkw(vcd_path: &Path, vcd: &Vcd, out: &Path) -> Result<(), LocateError> {
    let mut s = String::new();
    let abs = vcd_path
        .canonicalize()
        .unwrap_or_else(|_| vcd_path.to_path_buf());
    let _ = writeln!(s, "[dumpfile] \"{}\"", abs.display());
    let _ = writeln!(s, "[timestart] 0\n[size] 1600 1000\n[sst_expanded] 1");
    let _ = writeln!(s, "@800200\n-testbench");
    for name in [
        "clk",
        "rst",
        "in_valid",
        "in_ready",
        "out_valid",
        "out_ready",
        "cyc",
        "n_out",
    ] {
        if let Some(v) = vcd.find(&["mpc_tb"], name) {
            let _ = writeln!(s, "@{}\n{}", if v.width == 1 { 28 } else { 22 }, v.path());
        }
    }
    let _ = writeln!(s, "@1000200\n-testbench");
    for unit in ["dut", "comp", "dec"] {
        let vars: Vec<_> = vcd
            .vars
            .iter()
            .filter(|v| v.scope.last().is_some_and(|s| s == unit))
            .collect();
        if vars.is_empty() {
            continue;
        }
        let stages = (1..=8).filter(|k| vars.iter().any(|v| v.name.starts_with(&format!("s{k}_"))));
        for k in stages {
            let g = format!("{unit} stage {k}");
            let _ = writeln!(s, "@800200\n-{g}");
            for v in vars
                .iter()
                .filter(|v| v.name.starts_with(&format!("s{k}_")))
            {
                let _ = writeln!(s, "@{}\n{}", if v.width == 1 { 28 } else { 22 }, v.path());
            }
            let _ = writeln!(s, "@1000200\n-{g}");
        }
        let g = format!("{unit} ports");
        let _ = writeln!(s, "@800200\n-{g}");
        for v in vars
            .iter()
            .filter(|v| v.name.starts_with("in_") || v.name.starts_with("out_"))
        {
            let _ = writeln!(s, "@{}\n{}", if v.width == 1 { 28 } else { 22 }, v.path());
        }
        let _ = writeln!(s, "@1000200\n-{g}");
    }
    std::fs::write(out, s).map_err(|source| LocateError::Io {
        path: out.to_path_buf(),
        source,
    })
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
    let b = sim::build(sim, unit, rtl, build_dir, true)?;
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
    let out = output::read(&files.out, unit, width)?;
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
    match failing {
        Failing::Comp(v) => {
            let probes = compressor_probes(&v.block, set);
            let scope: &[&str] = if unit == Unit::Loopback {
                &["mpc_tb", "comp"]
            } else {
                &["mpc_tb", "dut"]
            };
            check_scope(&vcd, scope, "compressor", 0, &probes, &mut loc);
            if unit == Unit::Loopback {
                let c = codec.compress(&v.block);
                let (probes, notes) = decompressor_probes(&c.bytes, c.len as usize, set);
                loc.notes.extend(notes);
                check_scope(
                    &vcd,
                    &["mpc_tb", "dec"],
                    "decompressor",
                    100,
                    &probes,
                    &mut loc,
                );
            }
        }
        Failing::Decomp(v) => {
            let (probes, notes) = decompressor_probes(&v.bits, v.len as usize, set);
            loc.notes.extend(notes);
            check_scope(
                &vcd,
                &["mpc_tb", "dut"],
                "decompressor",
                0,
                &probes,
                &mut loc,
            );
        }
    }
    loc.diffs.sort_by_key(|d| d.order);
    loc.first_stage = loc.diffs.first().map(|d| d.stage.clone());
    let g = out_dir.join("isolated.gtkw");
    write_gtkw(&vcd_path, &vcd, &g)?;
    loc.gtkw.push(g);
    if let Some(ctx) = context {
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
            &b,
            &wfiles,
            ctx.n,
            &RunOptions {
                timeout_cycles: 100_000,
                vcd: Some((wvcd.clone(), from, Some(to))),
            },
            None,
        )?;
        if let Ok(text) = std::fs::read_to_string(&wvcd) {
            if let Ok(wv) = Vcd::parse(&text) {
                let g = out_dir.join("window.gtkw");
                write_gtkw(&wvcd, &wv, &g)?;
                loc.gtkw.push(g);
            }
            loc.window_vcd = Some(wvcd);
            loc.notes.push(format!(
                "window VCD covers shard cycles {from}..{to} (the block was accepted in cycle {}, delivered in {})",
                ctx.cycle.saturating_sub(ctx.latency),
                ctx.cycle
            ));
        }
    }
    let report = out_dir.join("report.txt");
    std::fs::write(&report, loc.to_string()).map_err(|source| LocateError::Io {
        path: report,
        source,
    })?;
    Ok(loc)
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
    }
}
