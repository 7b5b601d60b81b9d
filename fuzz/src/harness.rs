//! The run loop and its limits, findings, and the supervising process.
//!
//! A target runs in a worker process (the same binary, hidden `__worker`
//! command) so that inputs which abort the process (an allocation over
//! the hard cap, a stack overflow) or hang (the watchdog ends the worker)
//! are reported like any other finding. Before each input the worker
//! writes it to a state file; when the worker dies, the supervisor reads
//! the input back from there, saves it with a description taken from the
//! worker's stderr, and (with `--keep-going`) starts a new worker with
//! another seed for the time that is left.
//!
//! Per input the worker checks: no panic (`catch_unwind`, the panic hook
//! records where), peak live bytes at most `--max-peak-mib` (the counting
//! allocator; four times that is refused outright), wall time at most
//! `--max-input-ms` (a watchdog thread).

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::alloc;
use crate::rng::{fnv1a, Rng};
use crate::targets;
use crate::{Finding, FuzzError, Input, Paths, Target};

/// First word of the stderr line the watchdog writes before ending a worker.
pub const TIMEOUT_TAG: &str = "fuzz-timeout:";
/// Exit status of a worker ended by the watchdog.
pub const EXIT_TIMEOUT: i32 = 86;
/// Exit status of a worker that could not start.
pub const EXIT_SETUP: i32 = 2;

/// Limits and places shared by every run.
#[derive(Clone, Debug)]
pub struct Settings {
    pub paths: Paths,
    pub findings: PathBuf,
    pub max_peak_mib: u64,
    pub max_input_ms: u64,
}

impl Settings {
    pub fn soft_bytes(&self) -> u64 {
        self.max_peak_mib << 20
    }

    /// Allocations taking an input over this are refused.
    pub fn hard_bytes(&self) -> u64 {
        4 * self.soft_bytes()
    }
}

// ---- panics ---------------------------------------------------------------------

static PANIC: Mutex<Option<(String, String)>> = Mutex::new(None);

/// Record the first panic of an input (message, `file:line`) instead of
/// printing it.
pub fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let msg = if let Some(s) = info.payload().downcast_ref::<&str>() {
            s.to_string()
        } else if let Some(s) = info.payload().downcast_ref::<String>() {
            s.clone()
        } else {
            "non-string panic payload".to_string()
        };
        let loc = info
            .location()
            .map(|l| format!("{}:{}", l.file(), l.line()))
            .unwrap_or_else(|| "unknown location".into());
        if let Ok(mut p) = PANIC.lock() {
            if p.is_none() {
                *p = Some((msg, loc));
            }
        }
    }));
}

fn take_panic() -> Option<(String, String)> {
    PANIC.lock().ok().and_then(|mut p| p.take())
}

/// `golden/src/x.rs:12` from an absolute or registry path.
fn short_location(loc: &str) -> String {
    match loc.rfind("golden/src/") {
        Some(i) => loc[i..].to_string(),
        None => loc.rsplit("/src/").next().unwrap_or(loc).to_string(),
    }
}

// ---- watchdog -------------------------------------------------------------------

static INPUT_START_MS: AtomicU64 = AtomicU64::new(0);

fn clock() -> &'static Instant {
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now)
}

fn now_ms() -> u64 {
    clock().elapsed().as_millis() as u64 + 1
}

/// End the process when one input runs over `limit_ms` (call stack
/// captures for the memory limit left out).
fn start_watchdog(limit_ms: u64) {
    let _ = clock();
    std::thread::spawn(move || loop {
        std::thread::sleep(Duration::from_millis(20));
        let s = INPUT_START_MS.load(Relaxed);
        if s == 0 {
            continue;
        }
        let ran = now_ms().saturating_sub(s + alloc::capture_micros() / 1000);
        // a call stack being captured gets 10 s more
        if ran > limit_ms && (!alloc::capturing_now() || ran > limit_ms + 10_000) {
            let mut e = std::io::stderr().lock();
            let _ = writeln!(
                e,
                "{TIMEOUT_TAG} one input ran over {ran} ms, the limit is {limit_ms} ms"
            );
            let _ = e.flush();
            std::process::exit(EXIT_TIMEOUT);
        }
    });
}

// ---- state file -----------------------------------------------------------------

const STATE_MAGIC: &[u8; 4] = b"FZS1";

/// The input being run and the counts so far, rewritten before each input.
pub struct StateFile {
    file: File,
}

/// What a state file holds.
#[derive(Debug, Default)]
pub struct State {
    pub runs: u64,
    pub findings: u64,
    pub input: Option<Input>,
}

impl StateFile {
    pub fn create(path: &Path) -> std::io::Result<StateFile> {
        Ok(StateFile {
            file: File::create(path)?,
        })
    }

    pub fn write(&self, runs: u64, findings: u64, input: &Input) -> std::io::Result<()> {
        let mut b = Vec::with_capacity(64 + input.tag.len() + input.note.len() + input.data.len());
        b.extend_from_slice(STATE_MAGIC);
        b.extend_from_slice(&runs.to_le_bytes());
        b.extend_from_slice(&findings.to_le_bytes());
        for part in [input.tag.as_bytes(), input.note.as_bytes(), &input.data] {
            b.extend_from_slice(&(part.len() as u64).to_le_bytes());
            b.extend_from_slice(part);
        }
        self.file.write_all_at(&b, 0)
    }

    pub fn read(path: &Path) -> State {
        let Ok(b) = std::fs::read(path) else {
            return State::default();
        };
        if b.get(..4) != Some(&STATE_MAGIC[..]) {
            return State::default();
        }
        let u64_at = |at: usize| -> Option<u64> {
            b.get(at..at + 8)
                .and_then(|s| s.try_into().ok())
                .map(u64::from_le_bytes)
        };
        let runs = u64_at(4).unwrap_or(0);
        let findings = u64_at(12).unwrap_or(0);
        let mut at = 20;
        let mut parts: Vec<Vec<u8>> = Vec::new();
        for _ in 0..3 {
            let Some(n) = u64_at(at) else { break };
            let start = at + 8;
            let Some(p) = usize::try_from(n)
                .ok()
                .and_then(|n| b.get(start..start.checked_add(n)?))
            else {
                break;
            };
            parts.push(p.to_vec());
            at = start + p.len();
        }
        let input = (parts.len() == 3).then(|| Input {
            tag: String::from_utf8_lossy(&parts[0]).into_owned(),
            note: String::from_utf8_lossy(&parts[1]).into_owned(),
            data: std::mem::take(&mut parts[2]),
        });
        State {
            runs,
            findings,
            input,
        }
    }
}

// ---- findings -------------------------------------------------------------------

/// File name of an input: `<tag>--<hash>.bin`; the tag is read back from
/// the name on replay.
pub fn input_file_name(input: &Input) -> String {
    format!("{}--{:016x}.bin", input.tag, fnv1a(&input.data))
}

/// The tag part of an input file name (`bdi--anything.bin` -> `bdi`).
pub fn tag_of(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_str()?;
    let (tag, _) = name.rsplit_once("--")?;
    (!tag.is_empty()).then(|| tag.to_string())
}

/// Save `input` under `dir/target/` with a one-line description next to it
/// (`.txt`); returns the input's path.
pub fn save_finding(
    dir: &Path,
    target: &str,
    input: &Input,
    f: &Finding,
) -> std::io::Result<PathBuf> {
    let d = dir.join(target);
    std::fs::create_dir_all(&d)?;
    let p = d.join(input_file_name(input));
    std::fs::write(&p, &input.data)?;
    let mut line = f.line();
    if !input.note.is_empty() {
        line.push_str(&format!(
            " [input: {}]",
            input.note.replace(['\n', '\r'], " ")
        ));
    }
    line.push('\n');
    std::fs::write(p.with_extension("txt"), line)?;
    Ok(p)
}

/// What a worker prints on stdout, one JSON object a line.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "kebab-case")]
pub enum Event {
    /// The first input of a finding class (saved unless known before).
    Finding {
        class: String,
        line: String,
        saved: Option<String>,
    },
    /// The end of a worker's run.
    Done {
        runs: u64,
        findings: u64,
        counts: BTreeMap<String, u64>,
    },
}

/// One class of findings in a target's report.
#[derive(Clone, Debug, Default)]
pub struct ClassReport {
    pub count: u64,
    pub line: String,
    pub saved: Option<String>,
}

/// What running one target did.
#[derive(Clone, Debug, Default)]
pub struct TargetReport {
    pub target: String,
    pub runs: u64,
    pub seconds: f64,
    pub findings: u64,
    pub classes: BTreeMap<String, ClassReport>,
    pub workers: u32,
}

impl TargetReport {
    pub fn per_second(&self) -> f64 {
        self.runs as f64 / self.seconds.max(1e-9)
    }
}

// ---- one input ------------------------------------------------------------------

/// Run one input under every limit; the finding, if any.
pub fn run_one(target: &dyn Target, input: &Input, s: &Settings) -> Option<Finding> {
    let _ = take_panic();
    alloc::begin_input(s.soft_bytes(), s.hard_bytes());
    INPUT_START_MS.store(now_ms(), Relaxed);
    let t = Instant::now();
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| target.check(input)));
    let elapsed = t.elapsed();
    INPUT_START_MS.store(0, Relaxed);
    let mem = alloc::end_input();
    let ms = (elapsed.as_micros() as u64).saturating_sub(alloc::capture_micros()) / 1000;
    match r {
        Err(_) => {
            let (msg, loc) = take_panic().unwrap_or_else(|| ("unknown".into(), "unknown".into()));
            let loc = short_location(&loc);
            return Some(Finding::new(
                format!("panic@{loc}"),
                format!("panicked: {msg}"),
            ));
        }
        Ok(Err(f)) => return Some(f),
        Ok(Ok(())) => {}
    }
    if let Some((site, what)) = mem.refused {
        return Some(Finding::new(
            format!("memory@{}", alloc::site_function(&site)),
            format!("allocation refused (the failure was handled): {what}"),
        ));
    }
    if mem.peak > s.soft_bytes() {
        let site = mem.site.unwrap_or_else(|| "unknown site".into());
        return Some(Finding::new(
            format!("memory@{}", alloc::site_function(&site)),
            format!(
                "peak {:.1} MiB during one input, over the {} MiB limit; went over at {site}",
                mem.peak as f64 / (1u64 << 20) as f64,
                s.max_peak_mib
            ),
        ));
    }
    if ms > s.max_input_ms {
        return Some(Finding::new(
            "timeout",
            format!("one input ran {ms} ms, the limit is {} ms", s.max_input_ms),
        ));
    }
    None
}

// ---- worker ---------------------------------------------------------------------

/// What a worker is asked to do.
#[derive(Clone, Debug)]
pub struct WorkerJob {
    pub target: String,
    pub seconds: f64,
    pub seed: u64,
    pub keep_going: bool,
    pub state: PathBuf,
    /// Classes saved before (by earlier workers of this run): not saved again.
    pub known: Vec<String>,
    /// Run this one file instead of generated inputs.
    pub replay: Option<PathBuf>,
}

fn emit(e: &Event) {
    if let Ok(s) = serde_json::to_string(e) {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{s}");
        let _ = out.flush();
    }
}

/// Read an input file: the tag comes from the file name.
pub fn read_input(path: &Path) -> Result<Input, FuzzError> {
    let name = path.display().to_string();
    let tag = tag_of(path).ok_or_else(|| FuzzError::BadInput {
        name: name.clone(),
        what: "file name is not `<tag>--<name>.bin`".into(),
    })?;
    let data = std::fs::read(path).map_err(|e| FuzzError::BadInput {
        name,
        what: e.to_string(),
    })?;
    Ok(Input {
        tag,
        data,
        note: String::new(),
    })
}

/// The worker process: returns its exit status (0: no finding, 1:
/// findings, [`EXIT_SETUP`]: could not start).
pub fn worker(job: &WorkerJob, s: &Settings) -> i32 {
    install_panic_hook();
    let mut target = match targets::build(&job.target, &s.paths, job.seed) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("fuzz: {e}");
            return EXIT_SETUP;
        }
    };
    let state = match StateFile::create(&job.state) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("fuzz: state file {}: {e}", job.state.display());
            return EXIT_SETUP;
        }
    };
    start_watchdog(s.max_input_ms);
    let mut counts: BTreeMap<String, u64> = BTreeMap::new();
    let mut runs = 0u64;
    let mut findings = 0u64;
    let counts_file = counts_path(&job.state);
    let mut on_finding = |input: &Input, f: Finding, save: bool| {
        let first = !counts.contains_key(&f.class);
        *counts.entry(f.class.clone()).or_default() += 1;
        // kept on disk for the supervisor in case a later input ends this
        // process
        if let Ok(j) = serde_json::to_vec(&counts) {
            let _ = std::fs::write(&counts_file, j);
        }
        if first {
            let saved = if save && !job.known.contains(&f.class) {
                match save_finding(&s.findings, &job.target, input, &f) {
                    Ok(p) => Some(p.display().to_string()),
                    Err(e) => {
                        eprintln!("fuzz: cannot save a finding: {e}");
                        None
                    }
                }
            } else {
                None
            };
            emit(&Event::Finding {
                class: f.class.clone(),
                line: f.line(),
                saved,
            });
        }
    };
    if let Some(path) = &job.replay {
        let input = match read_input(path) {
            Ok(i) => i,
            Err(e) => {
                eprintln!("fuzz: {e}");
                return EXIT_SETUP;
            }
        };
        if let Err(e) = state.write(0, 0, &input) {
            eprintln!("fuzz: state file: {e}");
        }
        runs = 1;
        if let Some(f) = run_one(target.as_ref(), &input, s) {
            findings = 1;
            on_finding(&input, f, false);
        }
    } else {
        let mut rng = Rng::new(job.seed);
        let deadline = Instant::now() + Duration::from_secs_f64(job.seconds);
        while Instant::now() < deadline {
            let input = target.next_input(&mut rng);
            if let Err(e) = state.write(runs, findings, &input) {
                eprintln!("fuzz: state file: {e}");
                return EXIT_SETUP;
            }
            let f = run_one(target.as_ref(), &input, s);
            runs += 1;
            if let Some(f) = f {
                findings += 1;
                on_finding(&input, f, true);
                if !job.keep_going {
                    break;
                }
            }
        }
    }
    emit(&Event::Done {
        runs,
        findings,
        counts,
    });
    (findings > 0) as i32
}

// ---- supervisor -----------------------------------------------------------------

/// How a worker ended.
fn describe_status(st: &ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (st.code(), st.signal()) {
        (Some(c), _) => format!("exit status {c}"),
        (None, Some(6)) => "abort (SIGABRT)".into(),
        (None, Some(11)) => "segmentation fault (SIGSEGV)".into(),
        (None, Some(9)) => "killed (SIGKILL, out of memory?)".into(),
        (None, Some(s)) => format!("signal {s}"),
        _ => "unknown status".into(),
    }
}

/// The finding for a worker that died on an input.
pub fn classify_crash(st: &ExitStatus, stderr: &str) -> Finding {
    if let Some(l) = stderr.lines().find(|l| l.starts_with(alloc::REFUSED_TAG)) {
        let rest = l[alloc::REFUSED_TAG.len()..].trim();
        let site = rest
            .split_once(" at ")
            .map(|x| x.1)
            .unwrap_or("unknown site");
        return Finding::new(
            format!("memory@{}", alloc::site_function(site)),
            format!("allocation refused: {rest}"),
        );
    }
    if let Some(l) = stderr.lines().find(|l| l.starts_with(TIMEOUT_TAG)) {
        return Finding::new("timeout", l[TIMEOUT_TAG.len()..].trim().to_string());
    }
    if let Some(l) = stderr
        .lines()
        .find(|l| l.contains("has overflowed its stack"))
    {
        return Finding::new("stack-overflow", l.trim().to_string());
    }
    let last = stderr
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    Finding::new(
        format!("crash({})", describe_status(st)),
        format!("the process died: {last}"),
    )
}

/// Options every worker gets from the supervisor.
fn worker_command(job: &WorkerJob, s: &Settings) -> Result<Command, FuzzError> {
    let exe = std::env::current_exe()
        .map_err(|e| FuzzError::Setup(format!("cannot find this program: {e}")))?;
    let mut c = Command::new(exe);
    c.arg("__worker")
        .arg(&job.target)
        .arg("--seconds")
        .arg(format!("{}", job.seconds))
        .arg("--seed")
        .arg(job.seed.to_string())
        .arg("--state")
        .arg(&job.state)
        .arg("--max-peak-mib")
        .arg(s.max_peak_mib.to_string())
        .arg("--max-input-ms")
        .arg(s.max_input_ms.to_string())
        .arg("--findings")
        .arg(&s.findings)
        .arg("--models")
        .arg(&s.paths.models);
    match &s.paths.corpus {
        Some(k) => c.arg("--corpus").arg(k),
        None => c.arg("--no-corpus"),
    };
    if job.keep_going {
        c.arg("--keep-going");
    }
    for k in &job.known {
        c.arg("--known").arg(k);
    }
    if let Some(r) = &job.replay {
        c.arg("--replay").arg(r);
    }
    // the out-of-memory report of a refused allocation without a backtrace
    c.env("RUST_BACKTRACE", "0").stdin(Stdio::null());
    Ok(c)
}

/// What one worker process did.
struct WorkerOutcome {
    events: Vec<Event>,
    status: ExitStatus,
    stderr: String,
    done: Option<(u64, u64, BTreeMap<String, u64>)>,
}

fn run_worker(job: &WorkerJob, s: &Settings) -> Result<WorkerOutcome, FuzzError> {
    let out = worker_command(job, s)?
        .output()
        .map_err(|e| FuzzError::Setup(format!("cannot start a worker: {e}")))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let events: Vec<Event> = stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let done = events.iter().find_map(|e| match e {
        Event::Done {
            runs,
            findings,
            counts,
        } => Some((*runs, *findings, counts.clone())),
        _ => None,
    });
    Ok(WorkerOutcome {
        events,
        status: out.status,
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        done,
    })
}

/// Where a worker keeps its finding counts (next to its state file).
fn counts_path(state: &Path) -> PathBuf {
    state.with_extension("counts")
}

fn state_path(s: &Settings, target: &str) -> Result<PathBuf, FuzzError> {
    std::fs::create_dir_all(&s.findings)
        .map_err(|e| FuzzError::Setup(format!("{}: {e}", s.findings.display())))?;
    Ok(s.findings
        .join(format!(".state-{target}-{}", std::process::id())))
}

/// Run `target` for `seconds` in worker processes.
pub fn run_target(
    target: &str,
    seconds: f64,
    seed: u64,
    keep_going: bool,
    s: &Settings,
) -> Result<TargetReport, FuzzError> {
    let state = state_path(s, target)?;
    let mut rep = TargetReport {
        target: target.to_string(),
        ..TargetReport::default()
    };
    let start = Instant::now();
    let mut attempt = 0u64;
    loop {
        let left = seconds - start.elapsed().as_secs_f64();
        if attempt > 0 && left < 0.05 {
            break;
        }
        let job = WorkerJob {
            target: target.to_string(),
            seconds: left.max(0.0),
            seed: seed.wrapping_add(attempt.wrapping_mul(0x9E37_79B9_7F4A_7C15)),
            keep_going,
            state: state.clone(),
            known: rep.classes.keys().cloned().collect(),
            replay: None,
        };
        let _ = std::fs::remove_file(counts_path(&state));
        let out = run_worker(&job, s)?;
        rep.workers += 1;
        for e in &out.events {
            if let Event::Finding { class, line, saved } = e {
                let c = rep.classes.entry(class.clone()).or_default();
                if c.line.is_empty() {
                    c.line = line.clone();
                }
                if c.saved.is_none() {
                    c.saved = saved.clone();
                }
            }
        }
        if let Some((runs, findings, counts)) = out.done {
            rep.runs += runs;
            rep.findings += findings;
            for (k, n) in counts {
                rep.classes.entry(k).or_default().count += n;
            }
            break;
        }
        if out.status.code() == Some(EXIT_SETUP) {
            let _ = std::fs::remove_file(&state);
            return Err(FuzzError::Setup(format!(
                "worker for {target} could not start: {}",
                out.stderr.trim()
            )));
        }
        // the worker died on an input: its counts from the files it kept
        let counts: BTreeMap<String, u64> = std::fs::read(counts_path(&state))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        for (k, n) in counts {
            rep.classes.entry(k).or_default().count += n;
        }
        let st = StateFile::read(&state);
        let f = classify_crash(&out.status, &out.stderr);
        rep.runs += st.runs + 1;
        rep.findings += st.findings + 1;
        let known = rep.classes.contains_key(&f.class);
        let c = rep.classes.entry(f.class.clone()).or_default();
        c.count += 1;
        if !known {
            c.line = f.line();
            if let Some(input) = &st.input {
                match save_finding(&s.findings, target, input, &f) {
                    Ok(p) => c.saved = Some(p.display().to_string()),
                    Err(e) => eprintln!("fuzz: cannot save a finding: {e}"),
                }
            }
        }
        if !keep_going {
            break;
        }
        attempt += 1;
    }
    let _ = std::fs::remove_file(&state);
    let _ = std::fs::remove_file(counts_path(&state));
    rep.seconds = start.elapsed().as_secs_f64();
    Ok(rep)
}

/// Run one input file through `target`'s oracle and limits in a worker;
/// the finding, if any.
pub fn replay_file(target: &str, file: &Path, s: &Settings) -> Result<Option<Finding>, FuzzError> {
    read_input(file)?;
    let state = state_path(s, target)?;
    let job = WorkerJob {
        target: target.to_string(),
        seconds: 0.0,
        seed: 1,
        keep_going: false,
        state: state.clone(),
        known: Vec::new(),
        replay: Some(file.to_path_buf()),
    };
    let out = run_worker(&job, s)?;
    let _ = std::fs::remove_file(&state);
    let _ = std::fs::remove_file(counts_path(&state));
    if out.status.code() == Some(EXIT_SETUP) {
        return Err(FuzzError::Setup(out.stderr.trim().to_string()));
    }
    if out.done.is_some() {
        let f = out.events.iter().find_map(|e| match e {
            Event::Finding { class, line, .. } => Some(Finding {
                class: class.clone(),
                detail: line
                    .strip_prefix(&format!("{class}: "))
                    .unwrap_or(line)
                    .to_string(),
            }),
            _ => None,
        });
        return Ok(f);
    }
    Ok(Some(classify_crash(&out.status, &out.stderr)))
}

/// Input files under `paths` (`.bin` files of directories, files as given).
pub fn collect_inputs(paths: &[PathBuf]) -> Result<Vec<PathBuf>, FuzzError> {
    let mut v = Vec::new();
    for p in paths {
        if p.is_dir() {
            let rd = std::fs::read_dir(p)
                .map_err(|e| FuzzError::Setup(format!("{}: {e}", p.display())))?;
            let mut files: Vec<PathBuf> = rd
                .filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|f| f.extension().is_some_and(|x| x == "bin"))
                .collect();
            files.sort();
            v.extend(files);
        } else if p.is_file() {
            v.push(p.clone());
        } else {
            return Err(FuzzError::Setup(format!(
                "{}: no such file or directory",
                p.display()
            )));
        }
    }
    Ok(v)
}

// ---- minimisation ---------------------------------------------------------------

/// Smaller inputs to try in place of `data` for `target`, largest steps
/// first.
fn candidates(target: &str, data: &[u8]) -> Vec<Vec<u8>> {
    let mut v: Vec<Vec<u8>> = Vec::new();
    if target.starts_with("container") {
        if let Some(p) = crate::container::Parts::parse(data) {
            use crate::container::{frm, get_u64, hdr};
            use bulk::format::UNKNOWN_LEN;
            let bb = p.block_bytes() as u64;
            for k in (0..p.chunks.len()).rev() {
                // drop chunk k as is; with the index and checksums made
                // consistent again; and with the original length shortened
                // by its blocks and everything renumbered and re-checksummed
                let mut q = p.clone();
                let removed = q.chunks.remove(k);
                v.push(q.to_bytes().0);
                q.sync_layout();
                q.fix_index_crc();
                q.fix_trailer_crc();
                v.push(q.to_bytes().0);
                let cut = (removed.field(frm::BLOCKS) as u64).saturating_mul(bb);
                let known = get_u64(&q.header, hdr::ORIGINAL_LEN) != UNKNOWN_LEN;
                q.set_original_len(q.original_len().saturating_sub(cut), Some(known));
                q.renumber();
                q.fix_all();
                v.push(q.to_bytes().0);
            }
        }
    }
    if target == "block-decoders" {
        let (len, bits) = targets::blocks::split_input(data);
        for cut in [bits.len() / 2, len.div_ceil(8)] {
            if cut < bits.len() {
                v.push(targets::blocks::join_input(len, &bits[..cut]));
            }
        }
        return v;
    }
    if target == "slot-image" {
        v.extend(targets::slots::smaller(data));
    }
    if target == "model-loader" {
        if let Ok(text) = std::str::from_utf8(data) {
            let lines: Vec<&str> = text.lines().collect();
            for i in (0..lines.len()).rev() {
                let mut l = lines.clone();
                l.remove(i);
                v.push((l.join("\n") + "\n").into_bytes());
            }
            // long lines: keep the first and last part
            for (i, l) in lines.iter().enumerate() {
                if l.len() > 256 {
                    let keep = l.len() / 4;
                    let a = (0..=keep)
                        .rev()
                        .find(|&j| l.is_char_boundary(j))
                        .unwrap_or(0);
                    let b = (l.len() - keep..=l.len())
                        .find(|&j| l.is_char_boundary(j))
                        .unwrap_or(l.len());
                    let mut ls: Vec<String> = lines.iter().map(|x| x.to_string()).collect();
                    ls[i] = format!("{}{}", &l[..a], &l[b..]);
                    v.push((ls.join("\n") + "\n").into_bytes());
                }
            }
        }
    }
    // byte ranges, halves down to 1/16th
    let n = data.len();
    let mut size = n / 2;
    while size >= (n / 16).max(1) && size > 0 {
        let mut at = 0;
        while at < n {
            let end = (at + size).min(n);
            let mut c = data[..at].to_vec();
            c.extend_from_slice(&data[end..]);
            v.push(c);
            at = end;
        }
        size /= 2;
    }
    v
}

/// Shrink the input in `file` while it keeps giving a finding of the same
/// class; writes the smallest to `out`. Returns the class and the sizes
/// before and after.
pub fn minimize(
    target: &str,
    file: &Path,
    out: &Path,
    budget: Duration,
    s: &Settings,
) -> Result<(Finding, usize, usize), FuzzError> {
    let input = read_input(file)?;
    let Some(f0) = replay_file(target, file, s)? else {
        return Err(FuzzError::BadInput {
            name: file.display().to_string(),
            what: "gives no finding; nothing to minimise".into(),
        });
    };
    let before = input.data.len();
    let mut best = input.data.clone();
    let start = Instant::now();
    let tmp_dir = s.findings.join(format!(".min-{}", std::process::id()));
    std::fs::create_dir_all(&tmp_dir)
        .map_err(|e| FuzzError::Setup(format!("{}: {e}", tmp_dir.display())))?;
    let tmp = tmp_dir.join(format!("{}--candidate.bin", input.tag));
    'outer: loop {
        let mut improved = false;
        for c in candidates(target, &best) {
            if start.elapsed() > budget {
                break 'outer;
            }
            if c.len() >= best.len() {
                continue;
            }
            std::fs::write(&tmp, &c)
                .map_err(|e| FuzzError::Setup(format!("{}: {e}", tmp.display())))?;
            if let Some(f) = replay_file(target, &tmp, s)? {
                if f.class == f0.class {
                    best = c;
                    improved = true;
                    break;
                }
            }
        }
        if !improved {
            break;
        }
    }
    let _ = std::fs::remove_dir_all(&tmp_dir);
    std::fs::write(out, &best).map_err(|e| FuzzError::Setup(format!("{}: {e}", out.display())))?;
    Ok((f0, before, best.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_file_round_trips_the_current_input() {
        let dir = std::env::temp_dir().join(format!("fuzz-state-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let p = dir.join("state");
        let f = StateFile::create(&p).expect("create");
        let long = Input {
            tag: "bdi".into(),
            data: vec![7; 1000],
            note: "a; b".into(),
        };
        let short = Input {
            tag: "mpc".into(),
            data: vec![1, 2, 3],
            note: String::new(),
        };
        f.write(5, 1, &long).expect("write");
        f.write(6, 2, &short).expect("write");
        let st = StateFile::read(&p);
        assert_eq!((st.runs, st.findings), (6, 2));
        assert_eq!(st.input, Some(short));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn file_names_carry_the_tag() {
        let i = Input {
            tag: "magbdi-128-16-4-signed".into(),
            data: vec![1],
            note: String::new(),
        };
        let n = input_file_name(&i);
        assert_eq!(
            tag_of(Path::new(&n)).as_deref(),
            Some("magbdi-128-16-4-signed")
        );
        assert_eq!(tag_of(Path::new("bdi--x.bin")).as_deref(), Some("bdi"));
        assert_eq!(tag_of(Path::new("nothing.bin")), None);
    }

    #[test]
    fn crashes_are_classified_from_stderr() {
        use std::os::unix::process::ExitStatusExt;
        let st = ExitStatus::from_raw(6);
        let f = classify_crash(
            &st,
            "fuzz-alloc-refused: 137438953440 bytes with 100 bytes live for this input, over the 268435456-byte cap, at bulk::stream::decode_slot (bulk/src/stream.rs:440:5)\nmemory allocation of 137438953440 bytes failed\n",
        );
        assert_eq!(f.class, "memory@bulk::stream::decode_slot");
        let f = classify_crash(
            &ExitStatus::from_raw(EXIT_TIMEOUT << 8),
            "fuzz-timeout: one input ran over 2100 ms, the limit is 2000 ms\n",
        );
        assert_eq!(f.class, "timeout");
        let f = classify_crash(&ExitStatus::from_raw(11), "boom\n");
        assert_eq!(f.class, "crash(segmentation fault (SIGSEGV))");
    }
}
