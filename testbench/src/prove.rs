//! Proving the generated MPC units lossless (docs/hw/formal.md): for every
//! 256-bit block, the decompressor's output on the compressor's output is
//! the block, with no error and the compressor's model ID; and the units
//! of other pipeline depths compute the same functions as the default
//! ones.
//!
//! Everything is decided on the units' combinational views, built by Yosys
//! from the Verilog files themselves (so a directory of edited files is
//! proven as it is): every flip-flop becomes a wire driven by its next
//! value (enables dropped, a synchronous or asynchronous reset kept as the
//! multiplexer it is, the reset input tied low), the view the
//! [`hdl::ir::comb::transparent`] argument gives a balanced pipeline.
//!
//! * Round trip: the compressor's view wired into the decompressor's view
//!   as the loopback co-simulation wires them (`out_bits` to `in_bits`,
//!   `out_len` to `in_len`), and a miter that is 1 when the decompressor's
//!   block differs from the input, its error is raised or its model ID
//!   differs from the compressor's. ABC's `iprove` decides it (unsat:
//!   proven; sat: a counterexample block; otherwise undecided). When the
//!   whole miter is not decided within its time, the proof goes on by
//!   parts ([`Lemma`]), whose composition is argued in docs/hw/formal.md.
//! * Depth variants: the views of the 4-stage compressor and of the 5- to
//!   8-stage decompressors against those of the units under proof, each
//!   pair in one miter (`bad` when any output differs) decided by
//!   `iprove`.
//!
//! A counterexample of the round trip is a block: it is printed, written as
//! a compressor vector file (`vectors::write_comp`, one 64-digit block a
//! line, the format `cosim mutate` runs its counterexamples from) and as a
//! 32-byte corpus file that `cosim mpc --unit loopback --corpus FILE`
//! replays.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use golden::mpc::{ModelSet, BLOCK_BYTES};

use crate::rtl::{self, Rtl};
use crate::vectors::{self, CompVector};

mod coding;
pub mod control;
mod decode;
mod shifts;
mod units;

pub mod dpc;
pub mod magbdi;
pub use units::{UnitCounterexample, UnitsReport};

/// Problems that stop a proof (a failed or undecided proof is a result).
#[derive(Debug, thiserror::Error)]
pub enum ProveError {
    #[error(transparent)]
    Rtl(#[from] rtl::RtlError),
    #[error(transparent)]
    Vector(#[from] vectors::VectorError),
    #[error("`{tool}` could not be run ({source}); it comes with Yosys (make setup)")]
    Tool {
        tool: &'static str,
        #[source]
        source: std::io::Error,
    },
    #[error("`{tool}` failed in {dir}: {tail}")]
    Failed {
        tool: &'static str,
        dir: PathBuf,
        tail: String,
    },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: unexpected counterexample line `{line}`")]
    Counterexample { path: PathBuf, line: String },
    #[error("generating the {what} of {model}: {message}")]
    Generate {
        what: String,
        model: PathBuf,
        message: String,
    },
    #[error("{dir}: {what}")]
    Units { dir: PathBuf, what: String },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ProveError + '_ {
    move |source| ProveError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn write(path: &Path, text: &str) -> Result<(), ProveError> {
    std::fs::write(path, text).map_err(io(path))
}

/// What one check concluded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    Proven,
    /// Input port values (bits, least significant first) on which the
    /// property fails.
    Counterexample(BTreeMap<String, Vec<bool>>),
    /// The solver gave up within its limits (what it said, or why).
    Undecided(String),
    /// The property does not hold, for the reason given (a structural
    /// check, which has no input to show).
    Violated(String),
}

/// One check with its result and time.
#[derive(Clone, Debug)]
pub struct Check {
    /// Short name (`round trip`, `decompressor 6 stages`, `lemma coding`).
    pub name: String,
    /// What it states.
    pub statement: String,
    pub outcome: Outcome,
    pub seconds: f64,
}

/// Which parts of the MPC proof to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Parts {
    pub round_trip: bool,
    pub depths: bool,
    /// The pipeline control of each unit ([`control`]).
    pub control: bool,
}

/// What to prove.
#[derive(Clone, Debug)]
pub struct MpcProve {
    pub model: PathBuf,
    /// Units to prove instead of those generated from `model`.
    pub rtl: Option<PathBuf>,
    /// Root of the work directories (`<build>/<set>/prove`).
    pub build: PathBuf,
    /// ABC's time per check, in seconds.
    pub seconds: u32,
    /// ABC's time for the whole round-trip miter before the proof goes on
    /// by parts, in seconds.
    pub whole_seconds: u32,
    pub parts: Parts,
    /// When not empty: only the round trip's parts of these names (stems
    /// as `coding_decode1`, `lemma_select`, `shift_compose_4`), without
    /// the whole miter and the depth variants.
    pub only: Vec<String>,
}

/// The result of `cosim prove mpc`.
#[derive(Clone, Debug)]
pub struct MpcReport {
    pub set: String,
    pub rtl_dir: PathBuf,
    pub work: PathBuf,
    pub checks: Vec<Check>,
    /// The vector files of the round trip's counterexample: the
    /// compressor vector file and the 32-byte corpus file.
    pub counterexample: Option<(PathBuf, PathBuf, [u8; BLOCK_BYTES])>,
    /// How the checks came about (a whole check replaced by its parts).
    pub notes: Vec<String>,
    /// Only some parts were asked for: all of them proven is not a proof
    /// of the round trip.
    pub partial: bool,
    /// The stall and reset schedules of failed control checks, with the
    /// unit they fail (`compressor`, `decompressor`) and its directory.
    pub control_schedules: Vec<(String, PathBuf, control::ControlReport)>,
}

impl MpcReport {
    /// Every check proven.
    pub fn proven(&self) -> bool {
        !self.checks.is_empty() && self.checks.iter().all(|c| c.outcome == Outcome::Proven)
    }

    /// The last line: `proven`, or what failed or stayed undecided.
    pub fn last_line(&self) -> String {
        if self.proven() {
            return if self.partial {
                "proven (only the parts asked for)".to_string()
            } else {
                "proven".to_string()
            };
        }
        let failed: Vec<&str> = self
            .checks
            .iter()
            .filter(|c| matches!(c.outcome, Outcome::Counterexample(_) | Outcome::Violated(_)))
            .map(|c| c.name.as_str())
            .collect();
        let undecided: Vec<&str> = self
            .checks
            .iter()
            .filter(|c| matches!(c.outcome, Outcome::Undecided(_)))
            .map(|c| c.name.as_str())
            .collect();
        let mut parts = Vec::new();
        if !failed.is_empty() {
            parts.push(format!("FAILED: {}", failed.join(", ")));
        }
        if !undecided.is_empty() {
            parts.push(format!("undecided: {}", undecided.join(", ")));
        }
        if parts.is_empty() {
            "nothing proven".to_string()
        } else {
            parts.join("; ")
        }
    }

    /// The report as text (without the last line).
    pub fn render(&self, model: &Path) -> String {
        let mut s = format!(
            "cosim prove mpc: model set {} ({}), units in {}\n",
            self.set,
            model.display(),
            self.rtl_dir.display()
        );
        for n in &self.notes {
            let _ = writeln!(s, "  {n}");
        }
        for c in &self.checks {
            let what = match &c.outcome {
                Outcome::Proven => "proven".to_string(),
                Outcome::Counterexample(_) => "FAILED (counterexample)".to_string(),
                Outcome::Undecided(why) => format!("undecided ({})", one_line(why)),
                Outcome::Violated(why) => format!("FAILED ({})", one_line(why)),
            };
            let _ = writeln!(s, "  {:<52} {:>8.1} s  {}", c.name, c.seconds, what);
            let _ = writeln!(s, "      {}", c.statement);
        }
        if let Some((hex, bin, block)) = &self.counterexample {
            let _ = writeln!(
                s,
                "  counterexample block (32 bytes, byte 0 first): {}",
                crate::hex::bytes_hex(block)
            );
            let _ = writeln!(s, "  vector file: {}", hex.display());
            let _ = writeln!(
                s,
                "  replay: cosim mpc --model {} --rtl {} --unit loopback --corpus {} --blocks 1000",
                model.display(),
                self.rtl_dir.display(),
                bin.display()
            );
        }
        for (unit, dir, r) in &self.control_schedules {
            let Some((path, sched)) = &r.schedule else {
                continue;
            };
            let _ = writeln!(
                s,
                "  counterexample schedule of the {unit} (from a reset; at its last cycle these fail: {}):",
                r.failing.join(", ")
            );
            for line in control::schedule_table(sched).lines() {
                let _ = writeln!(s, "    {line}");
            }
            let _ = writeln!(
                s,
                "  replay: cosim mpc --model {} --rtl {} --unit {unit} --schedule {} --blocks 100",
                model.display(),
                dir.display(),
                path.display()
            );
        }
        let _ = writeln!(s, "  work files: {}", self.work.display());
        s
    }
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

// ---- tools -------------------------------------------------------------------

fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(8)..].join("\n")
}

/// Run `tool` in `dir` with its output in `out`, stopping it after
/// `limit`: the output, or `None` when it was stopped.
fn run_limited(
    tool: &'static str,
    args: &[&str],
    dir: &Path,
    out: &Path,
    limit: Duration,
) -> Result<Option<String>, ProveError> {
    let file = std::fs::File::create(out).map_err(io(out))?;
    let err = file.try_clone().map_err(io(out))?;
    let mut child = Command::new(tool)
        .args(args)
        .current_dir(dir)
        .stdout(file)
        .stderr(err)
        .spawn()
        .map_err(|source| ProveError::Tool { tool, source })?;
    let t0 = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().map_err(io(out))? {
            break status;
        }
        if t0.elapsed() >= limit {
            let _ = child.kill();
            let _ = child.wait();
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let text = std::fs::read_to_string(out).map_err(io(out))?;
    if !status.success() {
        return Err(ProveError::Failed {
            tool,
            dir: dir.to_path_buf(),
            tail: tail(&text),
        });
    }
    Ok(Some(text))
}

/// Run a Yosys script file in `dir` (its log in `<script>.log`).
fn yosys(dir: &Path, script: &str) -> Result<(), ProveError> {
    let log = dir.join(format!("{script}.log"));
    run_limited(
        "yosys",
        &["-q", "-s", script],
        dir,
        &log,
        Duration::from_secs(24 * 3600),
    )?;
    Ok(())
}

/// The Yosys techmap that makes every flip-flop transparent: the output
/// is the next value (enable dropped); a synchronous or asynchronous reset
/// stays the multiplexer it is (Yosys folds a constant multiplexer in
/// front of a register into a synchronous reset of any signal, not only
/// `rst`). Any other storage cell is refused after the map.
pub const TRANSPARENT_MAP: &str = r#"// Flip-flops made transparent, for the combinational views of the proof.
(* techmap_celltype = "$dff $dffe" *)
module _90_transparent_ff (CLK, EN, D, Q);
  parameter WIDTH = 1;
  parameter CLK_POLARITY = 1'b1;
  parameter EN_POLARITY = 1'b1;
  input CLK, EN;
  input [WIDTH-1:0] D;
  output [WIDTH-1:0] Q;
  assign Q = D;
endmodule

(* techmap_celltype = "$sdff $sdffe $sdffce" *)
module _90_transparent_sff (CLK, EN, SRST, D, Q);
  parameter WIDTH = 1;
  parameter CLK_POLARITY = 1'b1;
  parameter EN_POLARITY = 1'b1;
  parameter SRST_POLARITY = 1'b1;
  parameter SRST_VALUE = 0;
  input CLK, EN, SRST;
  input [WIDTH-1:0] D;
  output [WIDTH-1:0] Q;
  assign Q = (SRST == SRST_POLARITY) ? SRST_VALUE : D;
endmodule

(* techmap_celltype = "$adff $adffe" *)
module _90_transparent_aff (CLK, EN, ARST, D, Q);
  parameter WIDTH = 1;
  parameter CLK_POLARITY = 1'b1;
  parameter EN_POLARITY = 1'b1;
  parameter ARST_POLARITY = 1'b1;
  parameter ARST_VALUE = 0;
  input CLK, EN, ARST;
  input [WIDTH-1:0] D;
  output [WIDTH-1:0] Q;
  assign Q = (ARST == ARST_POLARITY) ? ARST_VALUE : D;
endmodule
"#;

/// Yosys commands that read `files`, cut the wires in `cuts`
/// (`module/wire`: an input in place of the wire's driver), expose those in
/// `exposed` as outputs, make every flip-flop transparent and read the
/// wrapper `top_file`; the design is then flattened and mapped to AIGER
/// `<stem>.aig` with its port map `<stem>.map`. Cuts and exposures come
/// right after the map, before any `opt_clean`, where every reader of a
/// named wire reads it by that name.
fn view_script(
    files: &[PathBuf],
    cuts: &[String],
    exposed: &[String],
    top_file: &str,
    top: &str,
    stem: &str,
) -> String {
    let mut s = String::new();
    for f in files {
        let _ = writeln!(s, "read_verilog {}", f.display());
    }
    if !files.is_empty() {
        s.push_str("hierarchy\nproc\nopt_dff\ntechmap -map transparent.v\n");
        s.push_str("select -assert-none t:$*ff* t:$dlatch* t:$sr t:$mem*\n");
    }
    // cuts on the transparent netlist, before any `opt_clean`: each named
    // wire is still read by its name; a register's output and its next
    // value are two names of one net there, so a cut names both
    if !exposed.is_empty() {
        let _ = writeln!(s, "expose {}", exposed.join(" "));
    }
    if !cuts.is_empty() {
        let _ = writeln!(s, "expose -input {}", cuts.join(" "));
    }

    let _ = writeln!(s, "read_verilog {top_file}");
    let _ = writeln!(s, "hierarchy -top {top}");
    if files.is_empty() {
        s.push_str("proc\n");
    }
    s.push_str("flatten\nopt_clean\ncheck -assert\ntechmap\nopt -fast\naigmap\n");
    let _ = writeln!(s, "write_aiger -map {stem}.map {stem}.aig");
    s
}

/// Decide the single-output miter `<stem>.aig` in `dir` with ABC's
/// `iprove` (the output is 1 where the property fails).
fn iprove(dir: &Path, stem: &str, seconds: u32) -> Result<Outcome, ProveError> {
    let cex = format!("{stem}.cex");
    let _ = std::fs::remove_file(dir.join(&cex));
    let script = format!("read {stem}.aig; strash; iprove; write_cex -n {cex}");
    let out = dir.join(format!("{stem}.abc.txt"));
    let Some(said) = run_limited(
        "yosys-abc",
        &["-c", &script],
        dir,
        &out,
        Duration::from_secs(u64::from(seconds)),
    )?
    else {
        return Ok(Outcome::Undecided(format!(
            "ABC iprove gave no answer within {seconds} s"
        )));
    };
    if said.contains("UNSATISFIABLE") {
        return Ok(Outcome::Proven);
    }
    if said.contains("SATISFIABLE") {
        let map_path = dir.join(format!("{stem}.map"));
        let map = std::fs::read_to_string(&map_path).map_err(io(&map_path))?;
        let cex_path = dir.join(&cex);
        let text = std::fs::read_to_string(&cex_path).map_err(io(&cex_path))?;
        return Ok(Outcome::Counterexample(parse_cex(&map, &text, &cex_path)?));
    }
    Ok(Outcome::Undecided(tail(&said)))
}

/// AIGER input index -> (port, bit), and each input port's width, from a
/// Yosys AIGER map (`input <index> <bit> <port>`).
type InputMap = (BTreeMap<usize, (String, usize)>, BTreeMap<String, usize>);

fn input_map(map: &str, path: &Path) -> Result<InputMap, ProveError> {
    let mut inputs = BTreeMap::new();
    let mut widths: BTreeMap<String, usize> = BTreeMap::new();
    for line in map.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if let ["input", i, bit, port] = f[..] {
            let (Ok(i), Ok(bit)) = (i.parse::<usize>(), bit.parse::<usize>()) else {
                return Err(ProveError::Counterexample {
                    path: path.to_path_buf(),
                    line: line.to_string(),
                });
            };
            let w = widths.entry(port.to_string()).or_insert(0);
            *w = (*w).max(bit + 1);
            inputs.insert(i, (port.to_string(), bit));
        }
    }
    Ok((inputs, widths))
}

fn set_bit(
    values: &mut BTreeMap<String, Vec<bool>>,
    inputs: &BTreeMap<usize, (String, usize)>,
    i: usize,
    v: bool,
) -> bool {
    let Some((port, bit)) = inputs.get(&i) else {
        return false;
    };
    if let Some(b) = values.get_mut(port).and_then(|p| p.get_mut(*bit)) {
        *b = v;
    }
    true
}

/// The input port values of an ABC `write_cex -n` file (`pi12@0=1`
/// lines; `#` comments; inputs it leaves out are 0).
pub fn parse_cex(
    map: &str,
    text: &str,
    path: &Path,
) -> Result<BTreeMap<String, Vec<bool>>, ProveError> {
    let (inputs, widths) = input_map(map, path)?;
    let bad = |line: &str| ProveError::Counterexample {
        path: path.to_path_buf(),
        line: line.to_string(),
    };
    let mut values: BTreeMap<String, Vec<bool>> = widths
        .iter()
        .map(|(p, &w)| (p.clone(), vec![false; w]))
        .collect();
    let mut any = false;
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (name, v) = line.split_once('=').ok_or_else(|| bad(line))?;
        let idx = name
            .strip_prefix("pi")
            .and_then(|r| r.split('@').next())
            .and_then(|r| r.parse::<usize>().ok())
            .ok_or_else(|| bad(line))?;
        let v = match v {
            "0" => false,
            "1" => true,
            _ => return Err(bad(line)),
        };
        if !set_bit(&mut values, &inputs, idx, v) {
            return Err(bad(line));
        }
        any = true;
    }
    if !any {
        return Err(bad("(no input values)"));
    }
    Ok(values)
}

/// The input port values of ABC `cec`'s `Input pattern:` line (the
/// answer of `cec` on two views, as `cosim mutate` runs it).
pub fn parse_pattern(
    map: &str,
    said: &str,
    path: &Path,
) -> Result<BTreeMap<String, Vec<bool>>, ProveError> {
    let (inputs, widths) = input_map(map, path)?;
    let bad = |line: &str| ProveError::Counterexample {
        path: path.to_path_buf(),
        line: line.to_string(),
    };
    let mut values: BTreeMap<String, Vec<bool>> = widths
        .iter()
        .map(|(p, &w)| (p.clone(), vec![false; w]))
        .collect();
    let line = said
        .lines()
        .find(|l| l.trim_start().starts_with("Input pattern:"))
        .ok_or_else(|| bad("(no `Input pattern:` line)"))?;
    for item in line.trim_start()["Input pattern:".len()..].split_whitespace() {
        let (idx, val) = item
            .strip_prefix("pi")
            .and_then(|r| r.split_once('='))
            .ok_or_else(|| bad(item))?;
        let i: usize = idx.parse().map_err(|_| bad(item))?;
        if !set_bit(&mut values, &inputs, i, val == "1") {
            return Err(bad(item));
        }
    }
    Ok(values)
}

/// The 32-byte block of a counterexample's port `x` (bit 0 of byte 0
/// first, as the units' `in_block`).
pub fn block_of(ports: &BTreeMap<String, Vec<bool>>, port: &str) -> [u8; BLOCK_BYTES] {
    let mut b = [0u8; BLOCK_BYTES];
    if let Some(bits) = ports.get(port) {
        for (i, &v) in bits.iter().enumerate().take(BLOCK_BYTES * 8) {
            if v {
                b[i / 8] |= 1 << (i % 8);
            }
        }
    }
    b
}

// ---- the MPC units -------------------------------------------------------------

/// The numbers of the units that the wrappers need.
#[derive(Clone, Debug)]
struct Shape {
    /// `W`: compressed-bit bus width.
    max_bits: u32,
    /// `H`: model-ID bits.
    header_bits: u32,
    /// The model IDs of the predictors, in predictor order.
    predictors: Vec<u32>,
}

impl Shape {
    fn of(set: &ModelSet) -> Shape {
        Shape {
            max_bits: set.max_bits(),
            header_bits: set.header_bits(),
            predictors: (0..set.predictors.len())
                .map(|i| set.predictor_id(i))
                .collect(),
        }
    }

    fn is_predictor(&self, sig: &str) -> String {
        if self.predictors.is_empty() {
            return "1'b0".to_string();
        }
        let h = self.header_bits;
        self.predictors
            .iter()
            .map(|p| format!("({sig} == {h}'d{p})"))
            .collect::<Vec<_>>()
            .join(" | ")
    }
}

const TIES: &str =
    ".clk(1'b0), .rst(1'b0), .in_valid(1'b1), .in_ready(), .out_valid(), .out_ready(1'b1)";

/// The wrappers of every check, in one Verilog file.
fn wrappers(s: &Shape) -> String {
    let w = s.max_bits;
    let h = s.header_bits;
    let pred_c = s.is_predictor("c_model");
    let mut v = String::from(
        "// Miters and wrappers of the combinational views, for the proof of the\n\
         // MPC units: not design files.\n",
    );
    // the whole round trip; and the part of it the proof takes whole when
    // the compressor's model is not a predictor
    for (name, cond) in [
        ("round_trip", "1'b1".to_string()),
        ("round_trip_other", format!("~({pred_c})")),
    ] {
        let _ = write!(
            v,
            "module {name}(input [255:0] x, output bad);\n\
             \x20 wire [{w1}:0] c_bits; wire [8:0] c_len; wire [{h1}:0] c_model;\n\
             \x20 wire [255:0] y; wire e; wire [{h1}:0] m;\n\
             \x20 mpc_compressor comp({TIES}, .in_block(x), .out_bits(c_bits), .out_len(c_len), .out_model(c_model));\n\
             \x20 mpc_decompressor dec({TIES}, .in_bits(c_bits), .in_len(c_len), .out_block(y), .out_error(e), .out_model(m));\n\
             \x20 assign bad = ({cond}) & ((y != x) | e | (m != c_model));\n\
             endmodule\n",
            w1 = w - 1,
            h1 = h - 1,
        );
    }
    // the selection lemma
    let mut sel = String::new();
    let mut conns = String::new();
    let mut terms = Vec::new();
    for (i, p) in s.predictors.iter().enumerate() {
        let _ = write!(sel, " wire [255:0] sp{i};");
        let _ = write!(conns, ", .symbols_p{i}(sp{i})");
        terms.push(format!("((k == {h}'d{p}) & (s != sp{i}))"));
    }
    if terms.is_empty() {
        terms.push("1'b0".to_string());
    }
    let _ = write!(
        v,
        "module lemma_select(input [255:0] x, output bad);\n\
         \x20 wire [{h1}:0] k; wire [255:0] s;{sel}\n\
         \x20 mpc_compressor comp({TIES}, .in_block(x), .out_bits(), .out_len(), .out_model(), .s1_choice_id(k), .s1_symbols(s){conns});\n\
         \x20 assign bad = {};\n\
         endmodule\n",
        terms.join(" | "),
        h1 = h - 1,
    );
    // the restoration lemma of each predictor
    for (i, p) in s.predictors.iter().enumerate() {
        let _ = write!(
            v,
            "module lemma_restore{i}(input [255:0] x, input [{w1}:0] bits, input [8:0] len, output bad);\n\
             \x20 wire [255:0] s; wire [255:0] y; wire e; wire [{h1}:0] m;\n\
             \x20 mpc_compressor comp({TIES}, .in_block(x), .out_bits(), .out_len(), .out_model(), .symbols_p{i}(s));\n\
             \x20 mpc_decompressor dec({TIES}, .in_bits(bits), .in_len(len), .out_block(y), .out_error(e), .out_model(m), .dec15_symbols(s), .s2_model_id({h}'d{p}), .s4_error_d(1'b0), .s4_error(1'b0));\n\
             \x20 assign bad = (y != x) | e | (m != {h}'d{p});\n\
             endmodule\n",
            w1 = w - 1,
            h1 = h - 1,
        );
    }
    // the miters of the depth variants: the unit under proof against
    // the variant, on the same inputs
    let _ = write!(
        v,
        "module depth_compressor(input [255:0] x, output bad);\n\
         \x20 wire [{w1}:0] ba, bb; wire [8:0] la, lb; wire [{h1}:0] ma, mb;\n\
         \x20 unit_a a({TIES}, .in_block(x), .out_bits(ba), .out_len(la), .out_model(ma));\n\
         \x20 unit_b b({TIES}, .in_block(x), .out_bits(bb), .out_len(lb), .out_model(mb));\n\
         \x20 assign bad = (ba != bb) | (la != lb) | (ma != mb);\n\
         endmodule\n\
         module depth_decompressor(input [{w1}:0] bits, input [8:0] len, output bad);\n\
         \x20 wire [255:0] ya, yb; wire ea, eb; wire [{h1}:0] ma, mb;\n\
         \x20 unit_a a({TIES}, .in_bits(bits), .in_len(len), .out_block(ya), .out_error(ea), .out_model(ma));\n\
         \x20 unit_b b({TIES}, .in_bits(bits), .in_len(len), .out_block(yb), .out_error(eb), .out_model(mb));\n\
         \x20 assign bad = (ya != yb) | (ea != eb) | (ma != mb);\n\
         endmodule\n",
        w1 = w - 1,
        h1 = h - 1,
    );
    v
}

/// One part of the round-trip proof.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lemma {
    /// For every block, the chosen predictor's symbols are that
    /// predictor's candidate symbols.
    Select,
    /// Predictor `i`'s candidate symbols, given to the decompressor's
    /// inverse transform and restoration with the model ID, restore the
    /// block, with no error.
    Restore(usize),
    /// The round trip of every block whose model is not a predictor (the
    /// custom models, raw), whole.
    Other,
}

impl Lemma {
    fn stem(self) -> String {
        match self {
            Lemma::Select => "lemma_select".into(),
            Lemma::Restore(i) => format!("lemma_restore{i}"),
            Lemma::Other => "round_trip_other".into(),
        }
    }

    fn name(self) -> String {
        match self {
            Lemma::Select => "lemma selection".into(),
            Lemma::Restore(i) => format!("lemma restoration p{i}"),
            Lemma::Other => "round trip, other models".into(),
        }
    }

    fn statement(self) -> String {
        match self {
            Lemma::Select => "for all x: chosen predictor p means chosen symbols = candidate symbols of p".into(),
            Lemma::Restore(i) => format!("for all x (and any stream): candidate symbols of p{i} through the inverse transform and restoration give x, no error, model p{i}"),
            Lemma::Other => "for all x whose compressed model is not a predictor: decompress(compress(x)) = x, no error, same model".into(),
        }
    }

    /// Cuts (`module/wire` made inputs) and exposed wires of its view.
    fn cuts(self, shape: &Shape) -> (Vec<String>, Vec<String>) {
        let c = |w: &str| format!("mpc_compressor/w:{w}");
        let d = |w: &str| format!("mpc_decompressor/w:{w}");
        match self {
            Lemma::Select => {
                let mut e = vec![c("s1_choice_id"), c("s1_symbols")];
                e.extend((0..shape.predictors.len()).map(|i| c(&format!("symbols_p{i}"))));
                (Vec::new(), e)
            }
            Lemma::Restore(i) => (
                vec![
                    d("dec15_symbols"),
                    d("s2_model_id"),
                    d("s4_error_d"),
                    d("s4_error"),
                ],
                vec![c(&format!("symbols_p{i}"))],
            ),
            Lemma::Other => (Vec::new(), Vec::new()),
        }
    }
}

/// The Verilog files of a unit (by module name) among `files`.
fn unit_file(files: &[PathBuf], module: &str, dir: &Path) -> Result<PathBuf, ProveError> {
    for f in files {
        let text = std::fs::read_to_string(f).map_err(io(f))?;
        if text.contains(&format!("module {module}")) {
            return Ok(f.clone());
        }
    }
    Err(ProveError::Units {
        dir: dir.to_path_buf(),
        what: format!("no Verilog file defines `{module}`"),
    })
}

fn absolute(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

/// Generate the MPC units of `model` at the given depths into `dir`.
fn generate_depth(
    model: &Path,
    dir: &Path,
    compressor: usize,
    decompressor: usize,
) -> Result<(), ProveError> {
    let gen_err = |message: String| ProveError::Generate {
        what: format!("units of {compressor}/{decompressor} stages"),
        model: model.to_path_buf(),
        message,
    };
    let options = hdl::mpc::Options::with_stages(compressor, decompressor)
        .map_err(|e| gen_err(e.to_string()))?;
    let config = hdl::mpc::MpcConfig::load(model, options).map_err(|e| gen_err(e.to_string()))?;
    hdl::family::write_units(
        &config,
        dir,
        &hdl::mpc::UNITS,
        &format!(
            "cosim prove mpc --model {} (depth variant)",
            model.display()
        ),
    )
    .map_err(|e| gen_err(e.to_string()))?;
    Ok(())
}

/// Yosys commands for the miter of a depth variant: the unit under proof
/// (`under`, renamed `unit_a`) and the variant (`variant`, renamed
/// `unit_b`), both made transparent, in the wrapper `depth_<unit>`.
fn depth_script(under: &Path, variant: &Path, module: &str, unit: &str, stem: &str) -> String {
    format!(
        "read_verilog {}\nrename {module} unit_a\nread_verilog {}\nrename {module} unit_b\n\
         hierarchy\nproc\nopt_dff\ntechmap -map transparent.v\n\
         select -assert-none t:$*ff* t:$dlatch* t:$sr t:$mem*\n\
         read_verilog wrappers.v\nhierarchy -top depth_{unit}\n\
         flatten\nopt_clean\ncheck -assert\ntechmap\nopt -fast\naigmap\n\
         write_aiger -map {stem}.map {stem}.aig\n",
        under.display(),
        variant.display()
    )
}

/// Prove the MPC units of a model set ([`MpcProve`]); `progress` gets a
/// line as each check starts.
pub fn prove_mpc(cfg: &MpcProve, progress: &dyn Fn(&str)) -> Result<MpcReport, ProveError> {
    let set = rtl::load_set(&cfg.model)?;
    let work = cfg.build.join(&set.name).join("prove");
    std::fs::create_dir_all(&work).map_err(io(&work))?;
    let work = absolute(&work);
    let units: Rtl = match &cfg.rtl {
        Some(d) => rtl::load(d, &set, &cfg.model)?,
        None => {
            progress("generating the units");
            rtl::generate(&cfg.model, &work.join("rtl"))?
        }
    };
    let files: Vec<PathBuf> = units.files.iter().map(|f| absolute(f)).collect();
    let comp_file = unit_file(&files, "mpc_compressor", &units.dir)?;
    let dec_file = unit_file(&files, "mpc_decompressor", &units.dir)?;
    let shape = Shape::of(&set);
    write(&work.join("transparent.v"), TRANSPARENT_MAP)?;
    write(&work.join("wrappers.v"), &wrappers(&shape))?;
    let mut report = MpcReport {
        set: set.name.clone(),
        rtl_dir: units.dir.clone(),
        work: work.clone(),
        checks: Vec::new(),
        counterexample: None,
        notes: Vec::new(),
        partial: !cfg.only.is_empty(),
        control_schedules: Vec::new(),
    };
    if cfg.parts.control && cfg.only.is_empty() {
        for (unit, file) in [("compressor", &comp_file), ("decompressor", &dec_file)] {
            progress(&format!("pipeline control: the {unit}"));
            let r = control::prove_control(
                file,
                &format!("mpc_{unit}"),
                &work.join("control"),
                cfg.seconds,
            )?;
            report.checks.extend(r.checks.iter().cloned());
            if r.schedule.is_some() {
                report
                    .control_schedules
                    .push((unit.to_string(), units.dir.clone(), r));
            }
        }
    }
    let both = [comp_file.clone(), dec_file.clone()];
    let wanted = |stem: &str| cfg.only.is_empty() || cfg.only.iter().any(|o| o == stem);
    if !cfg.only.is_empty() {
        let mut known: Vec<String> = vec![Lemma::Other.stem(), Lemma::Select.stem()];
        known.extend((0..shape.predictors.len()).map(|i| Lemma::Restore(i).stem()));
        known.extend(coding::parts(&shape).into_iter().map(|p| p.stem));
        known.extend(shifts::lemmas().into_iter().map(|p| p.stem));
        if let Some(o) = cfg.only.iter().find(|o| !known.contains(o)) {
            return Err(ProveError::Units {
                dir: units.dir.clone(),
                what: format!("no part `{o}` (parts: {})", known.join(", ")),
            });
        }
        report
            .notes
            .push(format!("only the parts asked for: {}", cfg.only.join(", ")));
    }
    let whole = if cfg.parts.round_trip && cfg.only.is_empty() {
        progress("round trip: building the miter");
        let t0 = Instant::now();
        let stem = "round_trip";
        write(
            &work.join(format!("{stem}.ys")),
            &view_script(&both, &[], &[], "wrappers.v", stem, stem),
        )?;
        yosys(&work, &format!("{stem}.ys"))?;
        progress("round trip: ABC iprove on the whole miter");
        Some((iprove(&work, stem, cfg.whole_seconds)?, t0))
    } else {
        None
    };
    let statement =
        "for all x: decompress(compress(x)) = x, no error, the compressor's model ID".to_string();
    match whole {
        None if cfg.only.is_empty() => {}
        None | Some((Outcome::Undecided(_), _)) => {
            if let Some((Outcome::Undecided(why), t0)) = &whole {
                // the whole check is replaced by its parts: the round trip
                // is proven only when every part is
                report.notes.push(format!(
                    "round trip ({statement}): not decided whole in {:.1} s ({}); by parts:",
                    t0.elapsed().as_secs_f64(),
                    one_line(why)
                ));
            }
            let mut lemmas = vec![Lemma::Other, Lemma::Select];
            lemmas.extend((0..shape.predictors.len()).map(Lemma::Restore));
            for l in lemmas.into_iter().filter(|l| wanted(&l.stem())) {
                progress(&format!("round trip by parts: {}", l.name()));
                let t0 = Instant::now();
                let stem = l.stem();
                let (cuts, exposed) = l.cuts(&shape);
                write(
                    &work.join(format!("{stem}.ys")),
                    &view_script(&both, &cuts, &exposed, "wrappers.v", &stem, &stem),
                )?;
                yosys(&work, &format!("{stem}.ys"))?;
                let outcome = iprove(&work, &stem, cfg.seconds)?;
                if let (Lemma::Other, Outcome::Counterexample(ports)) = (l, &outcome) {
                    report.counterexample = Some(write_counterexample(&work, ports)?);
                }
                report.checks.push(Check {
                    name: l.name(),
                    statement: l.statement(),
                    outcome,
                    seconds: t0.elapsed().as_secs_f64(),
                });
            }
            // the coding part (predictor models only), by its parts, and
            // the shift lemmas its composition uses
            let coding = if shape.predictors.is_empty() {
                Vec::new()
            } else {
                let mut p = coding::parts(&shape);
                p.extend(shifts::lemmas());
                p
            };
            for p in coding.into_iter().filter(|p| wanted(&p.stem)) {
                progress(&format!("round trip by parts: {}", p.name));
                let t0 = Instant::now();
                let top_file = format!("{}.v", p.stem);
                write(&work.join(&top_file), &p.wrapper)?;
                let files: &[PathBuf] = match p.units {
                    coding::Units::None => &[],
                    coding::Units::Compressor => &both[..1],
                    coding::Units::Decompressor => &both[1..],
                    coding::Units::Both => &both,
                };
                write(
                    &work.join(format!("{}.ys", p.stem)),
                    &view_script(files, &p.cuts, &p.exposed, &top_file, &p.stem, &p.stem),
                )?;
                yosys(&work, &format!("{}.ys", p.stem))?;
                let outcome = iprove(&work, &p.stem, cfg.seconds)?;
                report.checks.push(Check {
                    name: p.name,
                    statement: p.statement,
                    outcome,
                    seconds: t0.elapsed().as_secs_f64(),
                });
            }
        }
        Some((outcome, t0)) => {
            if let Outcome::Counterexample(ports) = &outcome {
                report.counterexample = Some(write_counterexample(&work, ports)?);
            }
            report.checks.push(Check {
                name: "round trip".into(),
                statement,
                outcome,
                seconds: t0.elapsed().as_secs_f64(),
            });
        }
    }
    // the depth variants: their views against the units under proof, and
    // each variant's own pipeline control
    if (cfg.parts.depths || cfg.parts.control) && cfg.only.is_empty() {
        let variants: Vec<(&str, usize, usize)> = std::iter::once(("compressor", 4, 4))
            .chain((5..=8).map(|d| ("decompressor", 3, d)))
            .collect();
        for (unit, c, d) in variants {
            let stages = if unit == "compressor" { c } else { d };
            progress(&format!("depth variants: the {stages}-stage {unit}"));
            let t0 = Instant::now();
            let dir = work.join(format!("depth-{c}-{d}"));
            generate_depth(&cfg.model, &dir, c, d)?;
            let module = format!("mpc_{unit}");
            let file = absolute(&unit_file(
                &[dir.join("mpc_compressor.v"), dir.join("mpc_decompressor.v")],
                &module,
                &dir,
            )?);
            if cfg.parts.control {
                // the variant's own pipeline control
                let r = control::prove_control(&file, &module, &dir.join("control"), cfg.seconds)?;
                report.checks.extend(r.checks.iter().map(|k| Check {
                    name: format!("{} (variant {c}/{d})", k.name),
                    ..k.clone()
                }));
                if r.schedule.is_some() {
                    report
                        .control_schedules
                        .push((unit.to_string(), dir.clone(), r));
                }
            }
            if !cfg.parts.depths {
                continue;
            }
            let stem = format!("depth_{unit}_{stages}");
            let under = if unit == "compressor" {
                &comp_file
            } else {
                &dec_file
            };
            write(
                &work.join(format!("{stem}.ys")),
                &depth_script(under, &file, &module, unit, &stem),
            )?;
            yosys(&work, &format!("{stem}.ys"))?;
            let outcome = iprove(&work, &stem, cfg.seconds)?;
            report.checks.push(Check {
                name: format!("{unit} {stages} stages"),
                statement: format!(
                    "the {stages}-stage {unit}'s view equals the view of the {unit} under proof on every input"
                ),
                outcome,
                seconds: t0.elapsed().as_secs_f64(),
            });
        }
    }
    Ok(report)
}

/// Write a round-trip counterexample (port `x`) as a compressor vector
/// file and a 32-byte corpus file in `work`.
fn write_counterexample(
    work: &Path,
    ports: &BTreeMap<String, Vec<bool>>,
) -> Result<(PathBuf, PathBuf, [u8; BLOCK_BYTES]), ProveError> {
    let block = block_of(ports, "x");
    let hex = work.join("counterexample.hex");
    vectors::write_comp(&hex, &[CompVector { block, tag: 0 }])?;
    let bin = work.join("counterexample.bin");
    std::fs::write(&bin, block).map_err(io(&bin))?;
    Ok((hex, bin, block))
}

/// `cosim prove DESIGN ...`: prove, print the report and, last, `cosim
/// prove: proven` or what failed or stayed undecided; whether everything
/// asked for was proven.
pub fn run_cli(design: &str, cfg: &MpcProve) -> anyhow::Result<bool> {
    if design != "mpc" {
        anyhow::bail!("cosim prove: `{design}` is not a design with a proof (mpc, magbdi, dpc)");
    }
    let report = prove_mpc(cfg, &|what| eprintln!("cosim prove: {what}..."))?;
    print!("{}", report.render(&cfg.model));
    println!("cosim prove: {}", report.last_line());
    Ok(report.proven())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_cex_files_map_back_to_ports() {
        let map = "input 0 0 clk\ninput 1 0 x\ninput 2 1 x\ninput 3 0 y\noutput 0 0 bad\n";
        let text = "# FALSIFYING OUTPUTS: po0\n# COUNTEREXAMPLE LENGTH: 1\npi000@0=0\npi001@0=1\npi002@0=0\npi003@0=1\n";
        let v = parse_cex(map, text, Path::new("c")).expect("parses");
        assert_eq!(v["x"], vec![true, false]);
        assert_eq!(v["y"], vec![true]);
        for bad in ["pi009@0=1\n", "q1=1\n", "pi001@0=2\n", "# nothing\n"] {
            assert!(parse_cex(map, bad, Path::new("c")).is_err(), "{bad}");
        }
    }

    #[test]
    fn cec_patterns_map_back_to_ports() {
        let map = "input 0 0 b\ninput 1 1 b\ninput 2 0 a\n";
        let v = parse_pattern(map, "Input pattern:  pi2=1 pi1=1\n", Path::new("p")).expect("ok");
        assert_eq!(v["b"], vec![false, true]);
        assert_eq!(v["a"], vec![true]);
        assert!(parse_pattern(map, "nothing\n", Path::new("p")).is_err());
    }

    #[test]
    fn a_block_comes_from_port_x_least_significant_bit_first() {
        let mut ports = BTreeMap::new();
        let mut bits = vec![false; 256];
        bits[0] = true;
        bits[9] = true;
        bits[255] = true;
        ports.insert("x".to_string(), bits);
        let b = block_of(&ports, "x");
        assert_eq!(b[0], 1);
        assert_eq!(b[1], 2);
        assert_eq!(b[31], 0x80);
        assert_eq!(b[2..31].iter().filter(|&&x| x != 0).count(), 0);
    }

    #[test]
    fn the_last_line_says_proven_only_when_every_check_is() {
        let check = |name: &str, outcome| Check {
            name: name.into(),
            statement: String::new(),
            outcome,
            seconds: 0.0,
        };
        let mut r = MpcReport {
            set: "s".into(),
            rtl_dir: PathBuf::new(),
            work: PathBuf::new(),
            checks: vec![],
            counterexample: None,
            notes: vec![],
            partial: false,
            control_schedules: vec![],
        };
        assert!(!r.proven());
        r.checks.push(check("a", Outcome::Proven));
        assert_eq!(r.last_line(), "proven");
        r.checks
            .push(check("b", Outcome::Undecided("limit".into())));
        assert_eq!(r.last_line(), "undecided: b");
        r.checks
            .push(check("c", Outcome::Counterexample(BTreeMap::new())));
        assert_eq!(r.last_line(), "FAILED: c; undecided: b");
        assert!(!r.proven());
        r.checks
            .push(check("d", Outcome::Violated("a register".into())));
        assert_eq!(r.last_line(), "FAILED: c, d; undecided: b");
    }

    #[test]
    fn wrappers_name_every_predictor() {
        let s = Shape {
            max_bits: 259,
            header_bits: 3,
            predictors: vec![2, 3, 4],
        };
        let v = wrappers(&s);
        for m in [
            "module round_trip(",
            "module round_trip_other(",
            "module lemma_select(",
            "module lemma_restore2(",
            "module depth_compressor(",
            "module depth_decompressor(",
        ] {
            assert!(v.contains(m), "{m}");
        }
        assert!(v.contains("(c_model == 3'd4)"));
        assert!(!v.contains("lemma_restore3("));
    }
}
