//! Shared pieces of the co-simulations of single-stream units (one
//! valid/ready input bus, one valid/ready output bus) other than the MPC
//! model sets: little-endian bus vectors,
//! running the simulator and checking its records against the golden
//! expectations and the ideal-pipeline timing model
//! ([`schedule::model_run`]).
//!
//! Used by [`crate::magbdi`] and [`crate::dpc`], and by their binaries
//! (`cosim magbdi`, `cosim dpc`: [`StreamArgs`]) and tests ([`icarus_or_skip`],
//! [`test_corpus`]).

use std::fmt::Write as _;

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::output::Protocol;
use crate::schedule::{self, Schedule};
pub use crate::sim::TbSpec;
use crate::sim::{check_installed, SimError};
use crate::Simulator;

/// Why a stream-unit co-simulation could not run.
#[derive(Debug, thiserror::Error)]
pub enum StreamError {
    #[error(transparent)]
    Sim(#[from] SimError),
    #[error("{what}: {source}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{sim} {step} failed:\n{tail}")]
    Tool {
        sim: Simulator,
        step: &'static str,
        tail: String,
    },
}

/// Map an I/O error to [`StreamError::Io`] with what was being done.
pub fn io(what: impl std::fmt::Display) -> impl FnOnce(std::io::Error) -> StreamError {
    let what = what.to_string();
    move |source| StreamError::Io { what, source }
}

/// Run a tool; its output, or the last 30 lines of it on failure.
pub fn run_tool(
    cmd: &mut Command,
    sim: Simulator,
    step: &'static str,
) -> Result<String, StreamError> {
    let out = cmd.output().map_err(io(format!("running {cmd:?}")))?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if !out.status.success() {
        let lines: Vec<&str> = text.lines().collect();
        return Err(StreamError::Tool {
            sim,
            step,
            tail: lines[lines.len().saturating_sub(30)..].join("\n"),
        });
    }
    Ok(text)
}

/// A bus value built from fields, least significant first (as the
/// testbenches concatenate `{last, ..., first}`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LeBus {
    bytes: Vec<u8>,
    width: usize,
}

impl LeBus {
    pub fn new() -> LeBus {
        LeBus::default()
    }

    pub fn width(&self) -> usize {
        self.width
    }

    pub fn bit(&self, i: usize) -> bool {
        i < self.width
            && self
                .bytes
                .get(i / 8)
                .is_some_and(|b| (b >> (i % 8)) & 1 == 1)
    }

    pub fn put_bit(&mut self, v: bool) {
        if self.width.is_multiple_of(8) {
            self.bytes.push(0);
        }
        if v {
            if let Some(b) = self.bytes.last_mut() {
                *b |= 1 << (self.width % 8);
            }
        }
        self.width += 1;
    }

    /// `w` bits of `v`, LSB first.
    pub fn put_uint(&mut self, v: u64, w: usize) {
        for i in 0..w {
            self.put_bit(i < 64 && (v >> i) & 1 == 1);
        }
    }

    /// Bytes as a little-endian field (byte `i` at bits `8i+7..8i`).
    pub fn put_bytes(&mut self, b: &[u8]) {
        for &x in b {
            self.put_uint(x as u64, 8);
        }
    }

    /// A `w`-bit field holding the first `len` bits of the MSB-first bit
    /// string `bits` left-aligned (bit string bit 0 at the field's MSB),
    /// zero below.
    pub fn put_left_aligned(&mut self, bits: &[u8], len: usize, w: usize) {
        // bus bit j (appended LSB first) holds bit-string bit w-1-j
        for j in 0..w {
            let k = w - 1 - j;
            self.put_bit(k < len && bits.get(k / 8).is_some_and(|b| (b >> (7 - k % 8)) & 1 == 1));
        }
    }

    /// `w` bits from `lo` as an integer.
    pub fn uint(&self, lo: usize, w: usize) -> u64 {
        (0..w.min(64)).fold(0, |acc, i| acc | (self.bit(lo + i) as u64) << i)
    }

    /// `n` bytes from bit `lo` (little-endian field).
    pub fn bytes(&self, lo: usize, n: usize) -> Vec<u8> {
        (0..n).map(|i| self.uint(lo + 8 * i, 8) as u8).collect()
    }

    /// The `w`-bit field at `lo` read left-aligned: an MSB-first bit string
    /// of `w` bits (field MSB first), as bytes.
    pub fn left_aligned(&self, lo: usize, w: usize) -> Vec<u8> {
        let mut out = vec![0u8; w.div_ceil(8)];
        for k in 0..w {
            if self.bit(lo + w - 1 - k) {
                out[k / 8] |= 0x80 >> (k % 8);
            }
        }
        out
    }

    /// Hex, most significant digit first, `ceil(width / 4)` digits.
    pub fn hex(&self) -> String {
        let digits = self.width.div_ceil(4);
        (0..digits)
            .rev()
            .map(|d| {
                let v = self.uint(4 * d, 4.min(self.width - 4 * d));
                char::from_digit(v as u32, 16).unwrap_or('0')
            })
            .collect()
    }

    /// Parse hex of a `width`-bit bus; `None` on x/z or other characters.
    pub fn parse(text: &str, width: usize) -> Option<LeBus> {
        let mut out = LeBus {
            bytes: vec![0u8; width.div_ceil(8)],
            width,
        };
        for (d, c) in text.bytes().rev().enumerate() {
            let v = (c as char).to_digit(16)?;
            for b in 0..4 {
                let bit = 4 * d + b;
                if (v >> b) & 1 == 1 {
                    if bit >= width {
                        return None;
                    }
                    out.bytes[bit / 8] |= 1 << (bit % 8);
                }
            }
        }
        Some(out)
    }
}

/// Checks one output bus against the golden model's result for an input
/// bus: `Err(what differs)`.
pub type StreamCheck = Box<dyn Fn(&LeBus, &LeBus) -> Result<(), String> + Send + Sync>;

/// One stream unit with its testbench and vectors, checked against its
/// golden model from the input bus alone, so that any vector (a formal
/// counterexample too) can be run: what mutation testing runs
/// ([`crate::mutate`]).
pub struct StreamTarget {
    /// The unit and its configuration, for reports.
    pub label: String,
    pub module: hdl::ir::Module,
    pub desc: hdl::unit::UnitDescription,
    pub top: &'static str,
    pub tb_file: &'static str,
    pub tb_source: &'static str,
    /// The testbench's unit define.
    pub define: String,
    pub params: Vec<(&'static str, u64)>,
    /// Width of the testbench's `out_all`.
    pub out_width: usize,
    /// The DUT's data inputs in vector-bus order (least significant
    /// first): name and width.
    pub inputs: Vec<(String, usize)>,
    pub vectors: Vec<LeBus>,
    /// What the vectors cover.
    pub coverage: String,
    /// `check(input, output)`.
    pub check: StreamCheck,
}

impl StreamTarget {
    /// The vector bus of input port values (bits least significant first;
    /// a missing port or bit is 0), as [`StreamTarget::inputs`] lays it out.
    pub fn bus_of(&self, ports: &std::collections::BTreeMap<String, Vec<bool>>) -> LeBus {
        let mut b = LeBus::new();
        for (name, width) in &self.inputs {
            let v = ports.get(name);
            for i in 0..*width {
                b.put_bit(v.and_then(|v| v.get(i)).copied().unwrap_or(false));
            }
        }
        b
    }
}

/// The result of one unit on one simulator.
#[derive(Clone, Debug)]
pub struct StreamReport {
    pub sim: Simulator,
    pub unit: String,
    pub vectors: usize,
    pub matched: usize,
    /// What the vectors covered (categories, outcomes).
    pub coverage: String,
    pub problems: Vec<String>,
    /// Compile (or cache check) plus simulation.
    pub seconds: f64,
    /// Simulation only.
    pub sim_seconds: f64,
    /// Clock cycles simulated (the testbench's `D` record).
    pub cycles: u64,
    pub cached_build: bool,
    /// The first output whose value differs from the golden model.
    pub first_mismatch: Option<usize>,
    /// The handshake rules the testbench saw broken, in order.
    pub protocol: Vec<Protocol>,
}

impl StreamReport {
    pub fn ok(&self) -> bool {
        self.problems.is_empty() && self.matched == self.vectors
    }

    pub fn render(&self) -> String {
        let mut s = format!(
            "  {:9} {:22} {}/{} match, {} cycles, {:.1} s ({:.0} vectors/s simulated){}\n    {}\n",
            self.sim.name(),
            self.unit,
            self.matched,
            self.vectors,
            self.cycles,
            self.seconds,
            self.vectors as f64 / self.sim_seconds.max(1e-9),
            if self.cached_build {
                ", cached build"
            } else {
                ""
            },
            self.coverage,
        );
        for p in self.problems.iter().take(10) {
            let _ = writeln!(s, "    MISMATCH: {p}");
        }
        if self.problems.len() > 10 {
            let _ = writeln!(s, "    ... {} more", self.problems.len() - 10);
        }
        s
    }
}

/// One simulator run of a compiled testbench.
#[derive(Clone, Debug)]
pub struct SimRun<'a> {
    pub sim: Simulator,
    pub unit: &'a str,
    /// Command from [`build`] and whether it was cached.
    pub cmd: Vec<String>,
    pub cached: bool,
    /// The simulator's working directory (`out.txt`, `sim.log`).
    pub dir: &'a Path,
    pub vectors: &'a Path,
    pub schedule_path: &'a Path,
    pub schedule: &'a Schedule,
    /// Pipeline stages between the testbench's input and output.
    pub stages: usize,
    pub n: usize,
    /// Width of the testbench's `out_all`.
    pub out_width: usize,
    pub coverage: String,
    pub started: std::time::Instant,
    /// Cycles without an output before the testbench gives up.
    pub timeout: u64,
    /// More plusargs (`+name=value`).
    pub plusargs: Vec<String>,
    /// Show a progress spinner while the simulator runs (off where many
    /// runs go at once and have a progress display of their own, as in
    /// mutation testing).
    pub progress: bool,
}

/// Run the simulator; check every `O` record with `check(index, output)`
/// (`Err(description)` on a mismatch), the order, count and timing of the
/// outputs and the resets against the ideal pipeline, and the protocol
/// records.
pub fn run_and_check(
    r: &SimRun<'_>,
    mut check: impl FnMut(usize, &LeBus) -> Result<(), String>,
) -> Result<StreamReport, StreamError> {
    let ideal = schedule::model_run(r.schedule, r.stages, r.n as u64, u64::MAX / 2);
    let dir = r.dir.canonicalize().map_err(io(r.dir.display()))?;
    let out_path = dir.join("out.txt");
    let _ = std::fs::remove_file(&out_path);
    let abs = |p: &Path| p.canonicalize().map_err(io(p.display()));
    let mut c = Command::new(&r.cmd[0]);
    c.args(&r.cmd[1..])
        .arg(format!("+vectors={}", abs(r.vectors)?.display()))
        .arg(format!("+schedule={}", abs(r.schedule_path)?.display()))
        .arg(format!("+out={}", out_path.display()))
        .arg(format!("+n={}", r.n))
        .arg(format!("+timeout={}", r.timeout))
        .arg(format!("+stages={}", r.stages))
        .args(&r.plusargs)
        .current_dir(&dir);
    let t_sim = std::time::Instant::now();
    let spinner = r.progress.then(|| {
        datafiles::progress::spinner(&format!("cosim {} {}: {} vectors", r.sim, r.unit, r.n))
    });
    let log = run_tool(&mut c, r.sim, "run");
    if let Some(s) = spinner {
        s.finish_and_clear();
    }
    let log = log?;
    let sim_seconds = t_sim.elapsed().as_secs_f64();
    std::fs::write(dir.join("sim.log"), &log).map_err(io("sim.log"))?;
    let text = std::fs::read_to_string(&out_path).map_err(io(out_path.display()))?;
    let mut problems = Vec::new();
    let mut matched = 0;
    let mut delivered = Vec::new();
    let mut resets = Vec::new();
    let mut cycles = 0;
    let mut first_mismatch = None;
    let mut protocol = Vec::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let num = |i: usize| f.get(i).and_then(|x| u64::from_str_radix(x, 16).ok());
        match f.first().copied() {
            Some("O") => {
                let (Some(idx), Some(cyc), Some(lat)) = (num(1), num(2), num(3)) else {
                    problems.push(format!("bad record `{line}`"));
                    continue;
                };
                delivered.push((idx, cyc, lat));
                let res = match f.get(4).and_then(|h| LeBus::parse(h, r.out_width)) {
                    Some(bus) => check(idx as usize, &bus),
                    None => Err(format!(
                        "{} vector {idx}: output not a {}-bit hex value (x/z?): {}",
                        r.unit,
                        r.out_width,
                        f.get(4).copied().unwrap_or("")
                    )),
                };
                match res {
                    Ok(()) => matched += 1,
                    Err(p) => {
                        first_mismatch = first_mismatch.or(Some(idx as usize));
                        if problems.len() < 50 {
                            problems.push(p);
                        }
                    }
                }
            }
            Some("R") => resets.push((num(1), num(2), num(3))),
            Some("P") => match (num(1), num(2)) {
                (Some(cycle), Some(code)) => {
                    let p = Protocol {
                        cycle,
                        code: code as u32,
                    };
                    if protocol.len() < 5 {
                        problems.push(format!(
                            "handshake rule {code} broken in cycle {cycle}: {}",
                            p.describe()
                        ));
                    }
                    protocol.push(p);
                }
                _ => problems.push(format!("bad record `{line}`")),
            },
            Some("E") => problems.push(format!("run stopped: {line}")),
            Some("D") => cycles = num(1).unwrap_or(0),
            _ => {}
        }
    }
    if protocol.len() > 5 {
        problems.push(format!("{} handshake violations in all", protocol.len()));
    }
    if delivered.len() != r.n {
        problems.push(format!("{} outputs for {} vectors", delivered.len(), r.n));
    }
    for (k, &(idx, cyc, lat)) in delivered.iter().enumerate() {
        if idx != k as u64 {
            problems.push(format!("output {k} carries index {idx}"));
            break;
        }
        if let Some(d) = ideal.deliveries.get(k) {
            if d.cycle != cyc || d.latency != lat {
                problems.push(format!(
                    "output {k} at cycle {cyc} latency {lat}; ideal {}-stage pipeline: cycle {} latency {}",
                    r.stages, d.cycle, d.latency
                ));
                break;
            }
        }
    }
    let want_resets: Vec<_> = ideal
        .resets
        .iter()
        .map(|e| (Some(e.cycle), Some(e.first), Some(e.dropped)))
        .collect();
    if resets != want_resets {
        problems.push(format!("resets {resets:?}, ideal {want_resets:?}"));
    }
    Ok(StreamReport {
        sim: r.sim,
        unit: r.unit.to_string(),
        vectors: r.n,
        matched,
        coverage: r.coverage.clone(),
        problems,
        seconds: r.started.elapsed().as_secs_f64(),
        sim_seconds,
        cycles,
        cached_build: r.cached,
        first_mismatch,
        protocol,
    })
}

/// Which simulators a co-simulation binary runs.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum SimArg {
    Icarus,
    Verilator,
    Both,
}

/// The command-line options the stream-unit co-simulation binaries share
/// (`#[command(flatten)]`ed into their own).
#[derive(Clone, Debug, clap::Args)]
pub struct StreamArgs {
    #[arg(long, value_enum, default_value = "both")]
    pub sim: SimArg,
    /// Vectors per unit (1 to 10,000,000).
    #[arg(long, short, default_value_t = 1000, value_parser = block_count)]
    pub blocks: usize,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Corpus: a directory with MANIFEST.tsv, a directory of .bin/.npy files
    /// (a subdirectory per class, or none), or one file [default:
    /// ../shared/corpus when present].
    #[arg(long)]
    pub corpus: Option<PathBuf>,
    #[arg(long, conflicts_with = "corpus")]
    pub no_corpus: bool,
    #[arg(long, default_value = "build")]
    pub build: PathBuf,
    /// Stall probability of the random schedule segments, in [0, 1].
    #[arg(long, default_value_t = 0.2, value_parser = probability)]
    pub stall: f64,
    /// Mid-stream reset pulses.
    #[arg(long, default_value_t = 2)]
    pub resets: usize,
}

impl StreamArgs {
    /// The selected simulators, each checked to be installed.
    pub fn sims(&self) -> Result<Vec<Simulator>, SimError> {
        let sims = match self.sim {
            SimArg::Icarus => vec![Simulator::Icarus],
            SimArg::Verilator => vec![Simulator::Verilator],
            SimArg::Both => Simulator::ALL.to_vec(),
        };
        for &s in &sims {
            check_installed(s)?;
        }
        Ok(sims)
    }

    /// The corpus: `--corpus`, none with `--no-corpus`, else
    /// `../shared/corpus` when it is a directory.
    pub fn corpus(&self) -> Option<PathBuf> {
        if self.no_corpus {
            None
        } else {
            self.corpus
                .clone()
                .or_else(|| Some(PathBuf::from("../shared/corpus")).filter(|d| d.is_dir()))
        }
    }
}

/// A coverage summary `key:count ...` (keys sorted).
pub fn coverage_line(seen: &std::collections::BTreeMap<String, usize>) -> String {
    seen.iter()
        .map(|(k, v)| format!("{k}:{v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// For the binaries: print every report and a verdict line prefixed with
/// `tool`; whether all passed.
pub fn print_reports(tool: &str, reports: &[StreamReport]) -> bool {
    let mut ok = true;
    for r in reports {
        print!("{}", r.render());
        ok &= r.ok();
    }
    println!(
        "{tool}: {}",
        if ok {
            "all units match the golden model"
        } else {
            "MISMATCHES (see above)"
        }
    );
    ok
}

/// For the binaries: the exit code of a run (0 all passed, 1 mismatches,
/// 2 error, printed prefixed with `tool`).
pub fn exit_code(tool: &str, res: anyhow::Result<bool>) -> std::process::ExitCode {
    match res {
        Ok(true) => std::process::ExitCode::SUCCESS,
        Ok(false) => std::process::ExitCode::FAILURE,
        Err(e) => {
            eprintln!("{tool}: error: {}", error_text(&e));
            std::process::ExitCode::from(2)
        }
    }
}

/// An error and its causes on one line, `outer: inner: ...`, each cause
/// said once: a cause whose text already ends the line so far (an error
/// that prints its source in its own message) is left out.
pub fn error_text(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if out.ends_with(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
}

/// The most vectors a co-simulation runs per unit (`--blocks`). Every
/// vector, its golden expectation, its line in the simulator's input file
/// and the simulator's output record are kept for the whole run (an MPC
/// compressor run: about 250 bytes of memory and 150 bytes of disk per
/// vector, 2.5 GB and 1.5 GB at this limit), so a run needs memory and
/// disk in proportion to its vectors: more than this is refused rather
/// than left to exhaust them. For more coverage, run several seeds.
pub const MAX_BLOCKS: usize = 10_000_000;

/// Command-line parser of a vector count (`--blocks`): from 1 to
/// [`MAX_BLOCKS`].
pub fn block_count(s: &str) -> Result<usize, String> {
    let t = s.trim();
    if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
        // a whole number, maybe too large for usize: compare as text first
        let digits = t.trim_start_matches('0');
        let max = MAX_BLOCKS.to_string();
        if digits.len() > max.len() || (digits.len() == max.len() && digits > max.as_str()) {
            return Err(format!(
                "{t} vectors is more than one run takes: at most {MAX_BLOCKS} per unit (every \
                 vector, its expected output and the simulator's files are kept for the whole \
                 run, about 250 bytes of memory and 150 bytes of disk per vector); run several \
                 seeds (--seed) for more"
            ));
        }
    }
    at_least_one(s)
}

/// Command-line parser of a count that must be at least 1 (`--jobs`,
/// `--batch`).
pub fn at_least_one(s: &str) -> Result<usize, String> {
    let n: usize = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a whole number"))?;
    if n == 0 {
        return Err("must be at least 1".to_string());
    }
    Ok(n)
}

/// Command-line parser of a probability: a number in [0, 1] (`--stall`).
pub fn probability(s: &str) -> Result<f64, String> {
    let p: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a number"))?;
    if !(0.0..=1.0).contains(&p) {
        return Err(format!("{p} is not a probability in [0, 1]"));
    }
    Ok(p)
}

/// For the integration tests: whether Icarus is installed; when it is not,
/// says so and returns false, or fails the test under
/// `MPCGEN_REQUIRE_TOOLS=1` ([`hdl::prereq`]).
pub fn icarus_or_skip() -> bool {
    simulator_or_skip(Simulator::Icarus, "this co-simulation test")
}

/// Whether simulator `s` is installed, for test `test`; see
/// [`icarus_or_skip`].
pub fn simulator_or_skip(s: Simulator, test: &str) -> bool {
    match check_installed(s) {
        Ok(()) => true,
        Err(e) => {
            hdl::prereq::missing(&e.to_string(), test, crate::sim::install_hint(s));
            false
        }
    }
}

/// For the integration tests: the workspace's shared corpus
/// (`../../shared/corpus` from this crate), when present; when it is not,
/// says so (the test runs without corpus vectors), or fails the test under
/// `MPCGEN_REQUIRE_TOOLS=1`.
pub fn test_corpus() -> Option<PathBuf> {
    let corpus = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus");
    if corpus.is_dir() {
        return Some(corpus);
    }
    hdl::prereq::missing(
        &format!("no corpus at {}", corpus.display()),
        "the corpus vectors of this co-simulation test",
        "place the shared corpus beside the repository",
    );
    None
}
