//! Compiling a testbench on the shared stream driver
//! (`tb/stream_driver.svh`) with the generated units on Icarus or
//! Verilator (builds reused while their sources are unchanged:
//! [`crate::cache`]), and running the result on vector/schedule files.
//! [`build_tb`] compiles any of the testbenches (`tb/mpc_tb.sv`,
//! `tb/bdi_tb.sv`, `tb/dpc_tb.sv`); [`build`] is the MPC one.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use crate::rtl::Rtl;
use crate::{Simulator, Unit};

/// The MPC testbench (written into every build directory).
pub const TB_SOURCE: &str = include_str!("../tb/mpc_tb.sv");
/// Its file name.
pub const TB_FILE: &str = "mpc_tb.sv";
/// The MPC testbench of units with programmable slots (the configuration
/// writer; epochs on the buses).
pub const SLOTS_TB_SOURCE: &str = include_str!("../tb/mpc_slots_tb.sv");
/// Its file name.
pub const SLOTS_TB_FILE: &str = "mpc_slots_tb.sv";
/// The shared testbench driver, `include`d by every testbench.
pub const DRIVER_SOURCE: &str = include_str!("../tb/stream_driver.svh");
/// Its file name (the testbenches' `include`).
pub const DRIVER_FILE: &str = "stream_driver.svh";

/// Simulator problems.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    #[error("`{tool}` is not installed (not on PATH); install it with: {hint}")]
    Missing {
        tool: &'static str,
        hint: &'static str,
    },
    #[error("{sim} compile of the {what} testbench failed (log: {log}):\n{tail}")]
    Compile {
        sim: Simulator,
        what: String,
        log: PathBuf,
        tail: String,
    },
    #[error("{sim} run in {dir} failed ({status}):\n{tail}")]
    Run {
        sim: Simulator,
        dir: PathBuf,
        status: String,
        tail: String,
    },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> SimError + '_ {
    move |source| SimError::Io {
        path: path.to_path_buf(),
        source,
    }
}

pub use hdl::prereq::on_path;

/// How to install a simulator.
pub fn install_hint(sim: Simulator) -> &'static str {
    match sim {
        Simulator::Icarus => "sudo apt-get install iverilog",
        Simulator::Verilator => "sudo apt-get install verilator (5.x; also needs make and g++)",
    }
}

/// `Ok` when the simulator's tools are installed.
pub fn check_installed(sim: Simulator) -> Result<(), SimError> {
    let tools: &[&'static str] = match sim {
        Simulator::Icarus => &["iverilog", "vvp"],
        Simulator::Verilator => &["verilator", "make", "g++"],
    };
    for &tool in tools {
        if !on_path(tool) {
            return Err(SimError::Missing {
                tool,
                hint: install_hint(sim),
            });
        }
    }
    Ok(())
}

/// How the C++ of a Verilator build is compiled (Icarus has no such step).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CxxOpt {
    /// Verilator's own flags (`-Os`): for long runs.
    Optimised,
    /// `-O0`: compiles in about half the time and simulates about four
    /// times slower; for short runs.
    Quick,
}

impl CxxOpt {
    /// Up to this many vectors per unit, [`CxxOpt::for_vectors`] picks
    /// [`CxxOpt::Quick`]: there the compile time saved exceeds the
    /// simulation time lost.
    pub const QUICK_MAX_VECTORS: usize = 100_000;

    /// The faster choice for a run of `n` vectors.
    pub fn for_vectors(n: usize) -> CxxOpt {
        if n <= Self::QUICK_MAX_VECTORS {
            CxxOpt::Quick
        } else {
            CxxOpt::Optimised
        }
    }

    /// Suffix of a Verilator build directory, so that both kinds of build
    /// of a unit stay cached side by side (none for Icarus).
    pub fn dir_suffix(self, sim: Simulator) -> &'static str {
        match (sim, self) {
            (Simulator::Verilator, CxxOpt::Quick) => "-quick",
            _ => "",
        }
    }
}

/// A testbench to compile: `tb_source` (module `top`, which includes
/// [`DRIVER_FILE`]) with its defines and integer parameters, over `rtl`.
#[derive(Clone, Debug)]
pub struct TbSpec<'a> {
    pub top: &'a str,
    pub tb_file: &'a str,
    pub tb_source: &'a str,
    /// The unit define first (named in compile errors), then any others.
    pub defines: Vec<&'a str>,
    pub params: Vec<(&'static str, u64)>,
    pub rtl: &'a [PathBuf],
    /// Compile with VCD support (`TB_TRACE`).
    pub trace: bool,
    pub cxx: CxxOpt,
}

/// A compiled testbench.
#[derive(Clone, Debug)]
pub struct Build {
    pub sim: Simulator,
    /// Compiled with VCD support.
    pub trace: bool,
    /// `sim.vvp` (Icarus) or the Verilator executable.
    pub exe: PathBuf,
    pub dir: PathBuf,
    /// Taken from the cache.
    pub cached: bool,
    /// Compile time (0 when cached).
    pub seconds: f64,
}

impl Build {
    /// The command that runs the build (plusargs still to add).
    pub fn command_line(&self) -> Vec<String> {
        match self.sim {
            Simulator::Icarus => vec!["vvp".into(), "-n".into(), self.exe.display().to_string()],
            Simulator::Verilator => vec![self.exe.display().to_string()],
        }
    }
}

fn tail(text: &str, lines: usize) -> String {
    let v: Vec<&str> = text.lines().collect();
    v[v.len().saturating_sub(lines)..].join("\n")
}

/// Compile the testbench `spec` into `dir`, reusing an earlier build there
/// when nothing changed ([`crate::cache`]). Verilator builds go through
/// `ccache` when it is installed: the Verilator runtime then compiles once
/// for all builds.
pub fn build_tb(sim: Simulator, spec: &TbSpec<'_>, dir: &Path) -> Result<Build, SimError> {
    check_installed(sim)?;
    std::fs::create_dir_all(dir).map_err(io_err(dir))?;
    let dir = dir.canonicalize().map_err(io_err(dir))?;
    let tb = dir.join(spec.tb_file);
    std::fs::write(&tb, spec.tb_source).map_err(io_err(&tb))?;
    let inc = dir.join(DRIVER_FILE);
    std::fs::write(&inc, DRIVER_SOURCE).map_err(io_err(&inc))?;
    let mut sources = vec![tb.clone(), inc.clone()];
    for f in spec.rtl {
        sources.push(f.canonicalize().map_err(io_err(f))?);
    }
    // the include is found through -I; only the top file and the units
    // are compiled by name
    let files: Vec<&PathBuf> = sources.iter().filter(|f| **f != inc).collect();
    let defines: Vec<String> = spec.defines.iter().map(|d| format!("-D{d}")).collect();
    let include = format!("-I{}", dir.display());
    let (mut cmd, exe) = match sim {
        Simulator::Icarus => {
            let exe = dir.join("sim.vvp");
            let mut c = Command::new("iverilog");
            c.args(["-g2012", "-s", spec.top, &include]).args(&defines);
            for (k, v) in &spec.params {
                c.arg(format!("-P{}.{k}={v}", spec.top));
            }
            if spec.trace {
                c.arg("-DTB_TRACE");
            }
            c.arg("-o").arg(&exe);
            (c, exe)
        }
        Simulator::Verilator => {
            let obj = dir.join("obj");
            let exe = obj.join("sim");
            let jobs = std::thread::available_parallelism().map_or(1, |n| n.get());
            let mut c = Command::new("verilator");
            c.args(["--binary", "--timing", "-O3", "--x-assign", "fast"])
                .args([
                    "--x-initial",
                    "fast",
                    "-Wno-fatal",
                    "-Wno-lint",
                    "-Wno-style",
                ])
                .args(["--top-module", spec.top])
                .arg(&include)
                .args(&defines)
                .args(spec.params.iter().map(|(k, v)| format!("-G{k}={v}")))
                .arg("-j")
                .arg(jobs.to_string())
                .arg("--Mdir")
                .arg(&obj)
                .args(["-o", "sim"]);
            if spec.cxx == CxxOpt::Quick {
                for v in ["OPT_FAST=-O0", "OPT_SLOW=-O0", "OPT_GLOBAL=-O0"] {
                    c.args(["-MAKEFLAGS", v]);
                }
            }
            if on_path("ccache") {
                c.args(["-MAKEFLAGS", "OBJCACHE=ccache"]);
            }
            if spec.trace {
                c.args(["--trace", "--trace-max-width", "0", "-DTB_TRACE"]);
            }
            (c, exe)
        }
    };
    cmd.args(&files).current_dir(&dir);
    let key = crate::cache::BuildKey::new(sim, &cmd, &sources)
        .map_err(|(path, source)| SimError::Io { path, source })?;
    if key.is_built(&dir, &exe) {
        return Ok(Build {
            sim,
            trace: spec.trace,
            exe,
            dir,
            cached: true,
            seconds: 0.0,
        });
    }
    crate::cache::BuildKey::forget(&dir);
    let t0 = Instant::now();
    let out = cmd.output().map_err(io_err(&dir))?;
    let log_text = format!(
        "{:?}\n{}{}",
        cmd,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let log = dir.join("build.log");
    std::fs::write(&log, &log_text).map_err(io_err(&log))?;
    if !out.status.success() || !exe.is_file() {
        return Err(SimError::Compile {
            sim,
            what: format!("{} {}", spec.top, spec.defines.join(" ")),
            log,
            tail: tail(&log_text, 30),
        });
    }
    key.record(&dir).map_err(io_err(&dir))?;
    Ok(Build {
        sim,
        trace: spec.trace,
        exe,
        dir,
        cached: false,
        seconds: t0.elapsed().as_secs_f64(),
    })
}

/// Compile the MPC testbench for `unit` with the units of `rtl` into `dir`
/// (see [`build_tb`]): `tb/mpc_tb.sv`, or for units with programmable
/// slots `tb/mpc_slots_tb.sv`.
pub fn build(
    sim: Simulator,
    unit: Unit,
    rtl: &Rtl,
    dir: &Path,
    trace: bool,
    cxx: CxxOpt,
) -> Result<Build, SimError> {
    let (top, tb_file, tb_source) = if rtl.slots.is_some() {
        ("mpc_slots_tb", SLOTS_TB_FILE, SLOTS_TB_SOURCE)
    } else {
        ("mpc_tb", TB_FILE, TB_SOURCE)
    };
    let spec = TbSpec {
        top,
        tb_file,
        tb_source,
        defines: vec![unit.define()],
        params: vec![
            ("H", rtl.params.header_bits as u64),
            ("W", rtl.params.max_bits as u64),
        ],
        rtl: &rtl.files,
        trace,
        cxx,
    };
    build_tb(sim, &spec, dir)
}

/// Settings of one run.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Cycles without an output before the testbench gives up.
    pub timeout_cycles: u64,
    /// Dump a VCD (needs a `trace` build): file, first and end cycle
    /// (`None`: to the end).
    pub vcd: Option<(PathBuf, u64, Option<u64>)>,
    /// More plusargs (`+name=value`).
    pub plusargs: Vec<String>,
    /// The unit's pipeline depth: turns on the testbench's handshake rules
    /// 4-6 ([`crate::records::Protocol`]; 0: off).
    pub stages: usize,
}

/// The files of one run in `dir`.
pub struct RunFiles {
    pub dir: PathBuf,
    pub vectors: PathBuf,
    pub schedule: PathBuf,
    pub out: PathBuf,
}

impl RunFiles {
    pub fn new(dir: &Path) -> RunFiles {
        RunFiles {
            dir: dir.to_path_buf(),
            vectors: dir.join("vectors.hex"),
            schedule: dir.join("schedule.hex"),
            out: dir.join("out.txt"),
        }
    }
}

/// Run a build on `n` vectors; `progress` follows the delivered outputs.
/// Returns the wall time in seconds.
pub fn run(
    b: &Build,
    files: &RunFiles,
    n: usize,
    opt: &RunOptions,
    progress: Option<&AtomicU64>,
) -> Result<f64, SimError> {
    run_command(b.sim, &b.command_line(), files, n, opt, progress)
}

/// Run the testbench command `line` ([`Build::command_line`]) of
/// simulator `sim` on `n` vectors: the one way every co-simulation runs
/// its simulator. The records go to `files.out` (read them with
/// [`crate::records::read`]), the simulator's own output to `sim.log` in
/// `files.dir`. Returns the wall time in seconds.
pub fn run_command(
    sim: Simulator,
    line: &[String],
    files: &RunFiles,
    n: usize,
    opt: &RunOptions,
    progress: Option<&AtomicU64>,
) -> Result<f64, SimError> {
    let dir = &files.dir;
    let abs = |p: &Path| p.canonicalize().map_err(io_err(p));
    let Some((exe, args)) = line.split_first() else {
        return Err(SimError::Run {
            sim,
            dir: dir.clone(),
            status: "no command to run".to_string(),
            tail: String::new(),
        });
    };
    let mut cmd = Command::new(exe);
    cmd.args(args);
    let _ = std::fs::remove_file(&files.out);
    let out_name = files.out.file_name().ok_or_else(|| SimError::Io {
        path: files.out.clone(),
        source: std::io::Error::other("the record file has no file name"),
    })?;
    let out_dir = match files.out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    cmd.arg(format!("+vectors={}", abs(&files.vectors)?.display()))
        .arg(format!("+schedule={}", abs(&files.schedule)?.display()))
        .arg(format!("+out={}", abs(out_dir)?.join(out_name).display()))
        .arg(format!("+n={n}"))
        .arg(format!("+timeout={}", opt.timeout_cycles.max(100)))
        .arg(format!("+progress={}", 1024))
        .arg(format!("+stages={}", opt.stages))
        .args(&opt.plusargs);
    if let Some((vcd, from, to)) = &opt.vcd {
        let vcd = if vcd.is_absolute() {
            vcd.clone()
        } else {
            std::env::current_dir().map_err(io_err(vcd))?.join(vcd)
        };
        cmd.arg(format!("+vcd={}", vcd.display()))
            .arg(format!("+vcd_from={from}"));
        if let Some(to) = to {
            cmd.arg(format!("+vcd_to={to}"));
        }
    }
    cmd.current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let t0 = Instant::now();
    let mut child = cmd.spawn().map_err(io_err(dir))?;
    let stderr = child.stderr.take();
    let err_thread = std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(e) = stderr {
            for line in BufReader::new(e).lines().map_while(Result::ok) {
                s.push_str(&line);
                s.push('\n');
            }
        }
        s
    });
    let mut text = String::new();
    if let Some(out) = child.stdout.take() {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            if let Some(k) = line.strip_prefix("progress ") {
                if let (Some(p), Ok(k)) = (progress, k.trim().parse::<u64>()) {
                    p.store(k, Ordering::Relaxed);
                }
                continue;
            }
            text.push_str(&line);
            text.push('\n');
        }
    }
    let status = child.wait().map_err(io_err(dir))?;
    text.push_str(&err_thread.join().unwrap_or_default());
    let log = dir.join("sim.log");
    std::fs::write(&log, &text).map_err(io_err(&log))?;
    if !status.success() || !files.out.is_file() {
        return Err(SimError::Run {
            sim,
            dir: dir.clone(),
            status: status.to_string(),
            tail: tail(&text, 30),
        });
    }
    if let Some(p) = progress {
        p.store(n as u64, Ordering::Relaxed);
    }
    Ok(t0.elapsed().as_secs_f64())
}
