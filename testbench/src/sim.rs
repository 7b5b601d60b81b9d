//! Compiling `tb/mpc_tb.sv` with the generated units on Icarus or
//! Verilator (builds reused while their sources are unchanged:
//! [`crate::cache`]), and running the result on vector/schedule files.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use crate::rtl::Rtl;
use crate::{Simulator, Unit};

/// The testbench template (written into every build directory).
pub const TB_SOURCE: &str = include_str!("../tb/mpc_tb.sv");
/// Its file name.
pub const TB_FILE: &str = "mpc_tb.sv";

/// Simulator problems.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    #[error("`{tool}` is not installed (not on PATH); install it with: {hint}")]
    Missing {
        tool: &'static str,
        hint: &'static str,
    },
    #[error("{sim} compile of the {unit} testbench failed (log: {log}):\n{tail}")]
    Compile {
        sim: Simulator,
        unit: Unit,
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

pub use hdl::tools::on_path;

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

/// A compiled testbench.
#[derive(Clone, Debug)]
pub struct Build {
    pub sim: Simulator,
    pub unit: Unit,
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

fn tail(text: &str, lines: usize) -> String {
    let v: Vec<&str> = text.lines().collect();
    v[v.len().saturating_sub(lines)..].join("\n")
}

/// Compile the testbench for `unit` with the units of `rtl` into `dir`
/// (reusing an earlier build there when nothing changed).
pub fn build(
    sim: Simulator,
    unit: Unit,
    rtl: &Rtl,
    dir: &Path,
    trace: bool,
) -> Result<Build, SimError> {
    check_installed(sim)?;
    std::fs::create_dir_all(dir).map_err(io_err(dir))?;
    let dir = dir.canonicalize().map_err(io_err(dir))?;
    let tb = dir.join(TB_FILE);
    std::fs::write(&tb, TB_SOURCE).map_err(io_err(&tb))?;
    let mut files = vec![tb.clone()];
    for f in &rtl.files {
        files.push(f.canonicalize().map_err(io_err(f))?);
    }
    let h = rtl.params.header_bits;
    let w = rtl.params.max_bits;
    let jobs = std::thread::available_parallelism().map_or(1, |n| n.get());
    let (mut cmd, exe) = match sim {
        Simulator::Icarus => {
            let exe = dir.join("sim.vvp");
            let mut c = Command::new("iverilog");
            c.args(["-g2012", "-s", "mpc_tb"])
                .arg(format!("-D{}", unit.define()))
                .arg(format!("-Pmpc_tb.H={h}"))
                .arg(format!("-Pmpc_tb.W={w}"))
                .arg("-o")
                .arg(&exe);
            if trace {
                c.arg("-DTB_TRACE");
            }
            (c, exe)
        }
        Simulator::Verilator => {
            let obj = dir.join("obj");
            let exe = obj.join("sim");
            let mut c = Command::new("verilator");
            c.args(["--binary", "--timing", "-O3", "--x-assign", "fast"])
                .args([
                    "--x-initial",
                    "fast",
                    "-Wno-fatal",
                    "-Wno-lint",
                    "-Wno-style",
                ])
                .args(["--top-module", "mpc_tb"])
                .arg(format!("-D{}", unit.define()))
                .arg(format!("-GH={h}"))
                .arg(format!("-GW={w}"))
                .arg("-j")
                .arg(jobs.to_string())
                .arg("--Mdir")
                .arg(&obj)
                .args(["-o", "sim"]);
            if trace {
                c.args(["--trace", "--trace-max-width", "0", "-DTB_TRACE"]);
            }
            (c, exe)
        }
    };
    cmd.args(&files).current_dir(&dir);
    let key = crate::cache::BuildKey::new(sim, &cmd, &files)
        .map_err(|(path, source)| SimError::Io { path, source })?;
    if key.is_built(&dir, &exe) {
        return Ok(Build {
            sim,
            unit,
            trace,
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
            unit,
            log,
            tail: tail(&log_text, 30),
        });
    }
    key.record(&dir).map_err(io_err(&dir))?;
    Ok(Build {
        sim,
        unit,
        trace,
        exe,
        dir,
        cached: false,
        seconds: t0.elapsed().as_secs_f64(),
    })
}

/// Settings of one run.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Cycles without an output before the testbench gives up.
    pub timeout_cycles: u64,
    /// Dump a VCD (needs a `trace` build): file, first and end cycle
    /// (`None`: to the end).
    pub vcd: Option<(PathBuf, u64, Option<u64>)>,
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
    let dir = &files.dir;
    let abs = |p: &Path| p.canonicalize().map_err(io_err(p));
    let mut cmd = match b.sim {
        Simulator::Icarus => {
            let mut c = Command::new("vvp");
            c.arg("-n").arg(&b.exe);
            c
        }
        Simulator::Verilator => Command::new(&b.exe),
    };
    let _ = std::fs::remove_file(&files.out);
    cmd.arg(format!("+vectors={}", abs(&files.vectors)?.display()))
        .arg(format!("+schedule={}", abs(&files.schedule)?.display()))
        .arg(format!("+out={}", abs(dir)?.join("out.txt").display()))
        .arg(format!("+n={n}"))
        .arg(format!("+timeout={}", opt.timeout_cycles.max(100)))
        .arg(format!("+progress={}", 1024));
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
            sim: b.sim,
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
