//! One unit's co-simulation run on the shared path, for the units whose
//! output is checked as a bus (MAG-aware BDI, DPC, and mutation testing of
//! every family): the simulator run ([`crate::sim::run_command`]), the one
//! record parser ([`crate::records`]), the checks of every run
//! ([`crate::verdict::check_run`]: end of run, handshake rules, count and
//! order, delivery cycles and resets against the ideal pipeline
//! [`schedule::model_run`]) around the unit's golden check of each output
//! bus; its report ([`StreamReport`]). Also the bus of fields both sides
//! use ([`LeBus`]), the command-line options of `cosim magbdi` and `cosim
//! dpc` ([`StreamArgs`]) and the tests' prerequisites ([`icarus_or_skip`],
//! [`test_corpus`]).

use std::fmt::Write as _;

use std::path::{Path, PathBuf};

use crate::records::{self, OutputError, Protocol};
use crate::schedule::{self, Schedule, ScheduleConfig};
pub use crate::sim::TbSpec;
use crate::sim::{check_installed, RunFiles, RunOptions, SimError};
use crate::verdict::{self, Diff, Judged, RunShape, Verdict};
use crate::Simulator;

/// Why a stream-unit co-simulation could not run.
#[derive(Debug, thiserror::Error)]
pub enum StreamError {
    #[error(transparent)]
    Sim(#[from] SimError),
    #[error(transparent)]
    Output(#[from] OutputError),
    #[error("{what}: {source}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
}

/// Map an I/O error to [`StreamError::Io`] with what was being done.
pub fn io(what: impl std::fmt::Display) -> impl FnOnce(std::io::Error) -> StreamError {
    let what = what.to_string();
    move |source| StreamError::Io { what, source }
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
    /// The first differing outputs (the golden check's words), then the
    /// problems of the run ([`Verdict::problems`]).
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
    /// Every check of the run.
    pub verdict: Verdict,
}

impl StreamReport {
    /// The run's [`Verdict::ok`]: every vector checked and matching, no
    /// problem, and at least one vector.
    pub fn ok(&self) -> bool {
        self.verdict.ok() && self.matched == self.vectors
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
    /// Command from [`crate::sim::Build::command_line`] and whether the
    /// build was cached.
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

/// Run the simulator and check its records: every output bus with
/// `check(index, output)` (`Err(description)` on a mismatch), and the
/// checks of every run ([`verdict::check_run`]) against the ideal
/// pipeline of `r.stages` stages under `r.schedule`.
pub fn run_and_check(
    r: &SimRun<'_>,
    mut check: impl FnMut(usize, &LeBus) -> Result<(), String>,
) -> Result<StreamReport, StreamError> {
    let ideal = schedule::model_run(r.schedule, r.stages, r.n as u64, u64::MAX / 2);
    let files = RunFiles {
        dir: r.dir.to_path_buf(),
        vectors: r.vectors.to_path_buf(),
        schedule: r.schedule_path.to_path_buf(),
        out: r.dir.join("out.txt"),
    };
    let opt = RunOptions {
        timeout_cycles: r.timeout,
        vcd: None,
        plusargs: r.plusargs.clone(),
        stages: r.stages,
    };
    let spinner = r.progress.then(|| {
        datafiles::progress::spinner(&format!("cosim {} {}: {} vectors", r.sim, r.unit, r.n))
    });
    let ran = crate::sim::run_command(r.sim, &r.cmd, &files, r.n, &opt, None);
    if let Some(s) = spinner {
        s.finish_and_clear();
    }
    let sim_seconds = ran?;
    let out = records::read(&files.out, r.out_width)?;
    let shape = RunShape {
        shard: None,
        offset: 0,
        n: r.n as u64,
        stages: r.stages,
        model: Some(&ideal),
    };
    let verdict = verdict::check_run(&shape, &out, |i, rec| {
        let res = match &rec.fields {
            Ok(bus) => check(i, bus),
            Err(why) => Err(format!(
                "{} vector {i}: output not a {}-bit value: {why}",
                r.unit, r.out_width
            )),
        };
        Judged {
            tag: None,
            diff: res.err().map(|what| Diff {
                what,
                ..Diff::default()
            }),
        }
    });
    let mut problems: Vec<String> = verdict.mismatches.iter().map(|m| m.what.clone()).collect();
    if verdict.mismatch_count > verdict.mismatches.len() as u64 {
        problems.push(format!(
            "{} differing outputs in all",
            verdict.mismatch_count
        ));
    }
    problems.extend(verdict.problems.iter().cloned());
    Ok(StreamReport {
        sim: r.sim,
        unit: r.unit.to_string(),
        vectors: r.n,
        matched: verdict.passed as usize,
        coverage: r.coverage.clone(),
        problems,
        seconds: r.started.elapsed().as_secs_f64(),
        sim_seconds,
        cycles: verdict.cycles,
        cached_build: r.cached,
        first_mismatch: verdict.mismatches.first().map(|m| m.idx as usize),
        protocol: out.protocol,
        verdict,
    })
}

/// One unit of a family to co-simulate on the shared path: its testbench,
/// vectors and schedule (what [`run_unit`] takes).
pub struct UnitRun<'a> {
    /// The configuration's work directory (`<build>/<configuration>`).
    pub root: &'a Path,
    /// The unit's name in directories and reports.
    pub name: &'a str,
    /// The testbench (its `trace` off).
    pub spec: TbSpec<'a>,
    pub sims: &'a [Simulator],
    pub vectors: &'a [LeBus],
    pub schedule: ScheduleConfig,
    /// The unit's pipeline depth.
    pub stages: usize,
    /// Width of the testbench's `out_all`.
    pub out_width: usize,
    /// What the vectors cover, for the report.
    pub coverage: String,
}

/// Write a unit's vector and schedule files (`<root>/cosim/<name>/`),
/// build its testbench on each simulator (`<root>/sim-<sim>/<name>`) and
/// run and check it there ([`run_and_check`] with `check`): a report per
/// simulator.
pub fn run_unit(
    u: &UnitRun<'_>,
    check: impl Fn(usize, &LeBus) -> Result<(), String>,
) -> Result<Vec<StreamReport>, StreamError> {
    let sched = Schedule::generate(&u.schedule, u.vectors.len(), u.stages);
    let work = u.root.join("cosim").join(u.name);
    std::fs::create_dir_all(&work).map_err(io(work.display()))?;
    let vec_path = work.join("vectors.hex");
    let sched_path = work.join("schedule.hex");
    let text: String = u.vectors.iter().map(|b| b.hex() + "\n").collect();
    std::fs::write(&vec_path, text).map_err(io(vec_path.display()))?;
    std::fs::write(&sched_path, sched.to_text()).map_err(io(sched_path.display()))?;
    let mut reports = Vec::new();
    for &sim in u.sims {
        let started = std::time::Instant::now();
        let dir = u.root.join(format!("sim-{}", sim.name())).join(format!(
            "{}{}",
            u.name,
            u.spec.cxx.dir_suffix(sim)
        ));
        let b = crate::sim::build_tb(sim, &u.spec, &dir)?;
        let r = SimRun {
            sim,
            unit: u.name,
            cmd: b.command_line(),
            cached: b.cached,
            dir: &dir,
            vectors: &vec_path,
            schedule_path: &sched_path,
            schedule: &sched,
            stages: u.stages,
            n: u.vectors.len(),
            out_width: u.out_width,
            coverage: u.coverage.clone(),
            started,
            timeout: 20_000,
            plusargs: Vec::new(),
            progress: true,
        };
        reports.push(run_and_check(&r, &check)?);
    }
    Ok(reports)
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
