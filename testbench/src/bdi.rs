//! Co-simulation of the MAG-aware BDI units (`hdl::bdi`, docs/hw/mag-bdi.md)
//! against `golden::magbdi` on Icarus and Verilator, with the shared
//! harness pieces: the seeded stall/backpressure/reset [`Schedule`], the
//! ideal-pipeline timing model [`schedule::model_run`], the testbench
//! driver (`tb/bdi_tb.sv`: the driver of `tb/mpc_tb.sv` with the BDI ports),
//! the record format and the protocol checks. Verilator builds are cached
//! by a hash of the simulator version, the command and every source.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use golden::magbdi::{MagBdi, Params};

use crate::rng::Rng;
use crate::schedule::{self, Schedule, ScheduleConfig};
use crate::sim::check_installed;
use crate::{Simulator, Unit};

/// The testbench template.
pub const TB_SOURCE: &str = include_str!("../tb/bdi_tb.sv");

/// Why a BDI co-simulation could not run.
#[derive(Debug, thiserror::Error)]
pub enum BdiSimError {
    #[error(transparent)]
    Gen(#[from] hdl::bdi::GenError),
    #[error(transparent)]
    Sim(#[from] crate::sim::SimError),
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
    #[error(transparent)]
    Params(#[from] golden::magbdi::MagBdiError),
}

fn io(what: impl std::fmt::Display) -> impl FnOnce(std::io::Error) -> BdiSimError {
    let what = what.to_string();
    move |source| BdiSimError::Io { what, source }
}

/// One co-simulation run.
#[derive(Clone, Debug)]
pub struct BdiConfig {
    pub params: Params,
    pub sims: Vec<Simulator>,
    pub units: Vec<Unit>,
    pub blocks: usize,
    pub seed: u64,
    pub corpus: Option<PathBuf>,
    pub stall: f64,
    pub resets: usize,
    /// Root of the work directories (`<build>/<config name>/`).
    pub build: PathBuf,
}

/// The result of one unit on one simulator.
#[derive(Clone, Debug)]
pub struct BdiReport {
    pub sim: Simulator,
    pub unit: Unit,
    pub vectors: usize,
    pub matched: usize,
    /// Encodings seen (compressor/loopback) or errors expected (decompressor).
    pub coverage: String,
    pub problems: Vec<String>,
    pub seconds: f64,
    pub cached_build: bool,
}

impl BdiReport {
    pub fn ok(&self) -> bool {
        self.problems.is_empty() && self.matched == self.vectors
    }

    pub fn render(&self) -> String {
        let mut s = format!(
            "  {:9} {:12} {}/{} match ({}), {:.1} s{}\n",
            self.sim.name(),
            self.unit.name(),
            self.matched,
            self.vectors,
            self.coverage,
            self.seconds,
            if self.cached_build {
                ", cached build"
            } else {
                ""
            }
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

/// Test blocks: corner cases (zeros, ones, every value equal to the base,
/// deltas exactly at and one past each width's limit, on both bases, both
/// signs), then corpus runs (half of the rest, when a corpus is given), then
/// random structured blocks; shuffled.
pub fn blocks(codec: &MagBdi, n: usize, seed: u64, corpus: Option<&Path>) -> Vec<Vec<u8>> {
    let p = *codec.params();
    let bb = p.block_bytes;
    let k = p.base_bytes;
    let nv = p.values();
    let wmask = if k == 8 {
        u64::MAX
    } else {
        (1u64 << (8 * k)) - 1
    };
    let words = |w: &[u64]| -> Vec<u8> {
        w.iter()
            .flat_map(|x| x.to_le_bytes()[..k].to_vec())
            .collect()
    };
    let mut rng = Rng::new(seed);
    let mut corner = vec![vec![0u8; bb], vec![0xff; bb]];
    for base in [
        0x8000_0000_0000_0000u64 >> (64 - 8 * k),
        0x1234_5678_9abc_def0 & wmask,
        5,
    ] {
        corner.push(words(&vec![base; nv]));
        for s in &codec.table().sizes {
            let d = s.delta_bits;
            for off in [
                (1u64 << d) - 1,
                1u64 << d,
                (1u64 << (d - 1)) - 1,
                1u64 << (d - 1),
                (1u64 << (d - 1)).wrapping_neg(),
                (1u64 << (d - 1)).wrapping_neg().wrapping_sub(1),
                u64::MAX,
            ] {
                let at = rng.below(nv as u64) as usize;
                let mut w = vec![base; nv];
                w[at] = base.wrapping_add(off) & wmask;
                corner.push(words(&w));
                let mut z = vec![0u64; nv];
                z[at] = off & wmask;
                z[(at + 1) % nv] = base;
                corner.push(words(&z));
            }
        }
    }
    let mut out: Vec<Vec<u8>> = corner.into_iter().take(n).collect();
    let mut files: Vec<Vec<u8>> = Vec::new();
    if let Some(dir) = corpus {
        if let Ok(classes) = std::fs::read_dir(dir) {
            let mut paths: Vec<PathBuf> = classes
                .filter_map(|e| e.ok())
                .flat_map(|d| {
                    std::fs::read_dir(d.path())
                        .into_iter()
                        .flatten()
                        .filter_map(|e| e.ok())
                        .map(|e| e.path())
                })
                .filter(|p| p.extension().is_some_and(|x| x == "bin"))
                .collect();
            paths.sort();
            files = paths.iter().filter_map(|p| std::fs::read(p).ok()).collect();
            files.retain(|f| f.len() >= bb);
        }
    }
    let corpus_n = if files.is_empty() {
        0
    } else {
        n.saturating_sub(out.len()) / 2
    };
    let corpus_end = out.len() + corpus_n;
    while out.len() < corpus_end {
        let f = &files[rng.below(files.len() as u64) as usize];
        let nb = f.len() / bb;
        let start = rng.below(nb as u64) as usize;
        let run = 1 + rng.below(16) as usize;
        for i in start..(start + run).min(nb) {
            out.push(f[i * bb..(i + 1) * bb].to_vec());
        }
    }
    out.truncate(n);
    while out.len() < n {
        let base = rng.next_u64() & wmask;
        let kind = rng.below(6);
        let w: Vec<u64> = (0..nv)
            .map(|j| {
                let r = rng.next_u64();
                match kind {
                    0 => base.wrapping_add(r % (1 << (r % 30))) & wmask,
                    1 => base.wrapping_sub(r % 500) & wmask,
                    2 if j % 3 == 0 => r % 2000,
                    2 => base.wrapping_add(r % 2000) & wmask,
                    3 => r % (1 << rng.below(24)),
                    4 => base,
                    _ => r & wmask,
                }
            })
            .collect();
        out.push(words(&w));
    }
    rng.shuffle(&mut out);
    out
}

/// Hex of a little-endian bus of `width` bits (byte i at bits 8i+7..8i).
fn bus_hex(bytes: &[u8], width: u32) -> String {
    let digits = (width as usize).div_ceil(4);
    let mut s = String::with_capacity(digits);
    for d in (0..digits).rev() {
        let mut v = 0u8;
        for b in 0..4 {
            let bit = 4 * d + b;
            if bit < width as usize
                && bit / 8 < bytes.len()
                && (bytes[bit / 8] >> (bit % 8)) & 1 == 1
            {
                v |= 1 << b;
            }
        }
        s.push(char::from_digit(v as u32, 16).unwrap_or('0'));
    }
    s
}

/// Parse hex into a little-endian byte vector of `nbytes`; `None` on x/z.
fn parse_hex(text: &str, nbytes: usize) -> Option<Vec<u8>> {
    let mut out = vec![0u8; nbytes];
    for (d, c) in text.bytes().rev().enumerate() {
        let v = (c as char).to_digit(16)? as u8;
        for b in 0..4 {
            let bit = 4 * d + b;
            if (v >> b) & 1 == 1 {
                *out.get_mut(bit / 8)? |= 1 << (bit % 8);
            }
        }
    }
    Some(out)
}

/// Expected output of one vector.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Expect {
    Comp { enc: u32, data: Vec<u8> },
    Block { error: bool, block: Vec<u8> },
}

fn fnv64(data: &[u8], mut h: u64) -> u64 {
    for &b in data {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

fn run_tool(cmd: &mut Command, sim: Simulator, step: &'static str) -> Result<String, BdiSimError> {
    let out = cmd.output().map_err(io(format!("running {cmd:?}")))?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if !out.status.success() {
        let lines: Vec<&str> = text.lines().collect();
        return Err(BdiSimError::Tool {
            sim,
            step,
            tail: lines[lines.len().saturating_sub(30)..].join("\n"),
        });
    }
    Ok(text)
}

/// Compile (or reuse) the testbench of `unit`; returns the command prefix and whether it was cached.
fn build(
    sim: Simulator,
    unit: Unit,
    rtl: &[PathBuf],
    e: u32,
    b: u32,
    dir: &Path,
) -> Result<(Vec<String>, bool), BdiSimError> {
    check_installed(sim)?;
    std::fs::create_dir_all(dir).map_err(io(dir.display()))?;
    let dir = dir.canonicalize().map_err(io(dir.display()))?;
    let tb = dir.join("bdi_tb.sv");
    std::fs::write(&tb, TB_SOURCE).map_err(io(tb.display()))?;
    let mut files = vec![tb.display().to_string()];
    let mut key = 0xcbf2_9ce4_8422_2325u64;
    key = fnv64(TB_SOURCE.as_bytes(), key);
    for f in rtl {
        files.push(
            f.canonicalize()
                .map_err(io(f.display()))?
                .display()
                .to_string(),
        );
        key = fnv64(&std::fs::read(f).map_err(io(f.display()))?, key);
    }
    let define = format!("-D{}", unit.define());
    match sim {
        Simulator::Icarus => {
            let exe = dir.join("sim.vvp");
            run_tool(
                Command::new("iverilog")
                    .args(["-g2012", "-s", "bdi_tb", &define])
                    .arg(format!("-Pbdi_tb.E={e}"))
                    .arg(format!("-Pbdi_tb.B={b}"))
                    .arg("-o")
                    .arg(&exe)
                    .args(&files),
                sim,
                "compile",
            )?;
            Ok((
                vec!["vvp".into(), "-n".into(), exe.display().to_string()],
                false,
            ))
        }
        Simulator::Verilator => {
            let obj = dir.join("obj");
            let exe = obj.join("sim");
            let args: Vec<String> = [
                "--binary",
                "--timing",
                "-O3",
                "--x-assign",
                "fast",
                "--x-initial",
                "fast",
                "-Wno-fatal",
                "-Wno-lint",
                "-Wno-style",
                "--top-module",
                "bdi_tb",
            ]
            .iter()
            .map(|s| s.to_string())
            .chain([define, format!("-GE={e}"), format!("-GB={b}")])
            .collect();
            let version = Command::new("verilator")
                .arg("--version")
                .output()
                .map(|o| o.stdout)
                .unwrap_or_default();
            key = fnv64(&version, key);
            key = fnv64(args.join(" ").as_bytes(), key);
            let stamp = dir.join("build.stamp");
            let want = format!("{key:016x}\n");
            if exe.is_file() && std::fs::read_to_string(&stamp).ok().as_deref() == Some(&want) {
                return Ok((vec![exe.display().to_string()], true));
            }
            let jobs = std::thread::available_parallelism().map_or(1, |n| n.get());
            run_tool(
                Command::new("verilator")
                    .args(&args)
                    .arg("-j")
                    .arg(jobs.to_string())
                    .arg("--Mdir")
                    .arg(&obj)
                    .args(["-o", "sim"])
                    .args(&files)
                    .current_dir(&dir),
                sim,
                "compile",
            )?;
            std::fs::write(&stamp, want).map_err(io(stamp.display()))?;
            Ok((vec![exe.display().to_string()], false))
        }
    }
}

/// Generate the units and co-simulate every requested unit on every simulator.
pub fn run(cfg: &BdiConfig) -> Result<Vec<BdiReport>, BdiSimError> {
    let codec = MagBdi::new(cfg.params)?;
    let table = codec.table().clone();
    let name = hdl::bdi::config_name(&cfg.params);
    let root = cfg.build.join(&name);
    let cmdline = std::env::args().collect::<Vec<_>>().join(" ");
    let paths = hdl::bdi::write_units(cfg.params, &root, &hdl::bdi::Unit::ALL, &cmdline)?;
    let rtl: Vec<PathBuf> = paths
        .into_iter()
        .filter(|p| p.extension().is_some_and(|x| x == "v"))
        .collect();
    let bb = cfg.params.block_bytes;
    let bw = 8 * bb as u32;
    let e = table.encoding_bits();
    let mut reports = Vec::new();
    for &unit in &cfg.units {
        // vectors and expectations
        let blocks = blocks(
            &codec,
            cfg.blocks,
            cfg.seed ^ unit as u64,
            cfg.corpus.as_deref(),
        );
        let mut vec_text = String::new();
        let mut expect = Vec::with_capacity(blocks.len());
        let mut rng = Rng::new(cfg.seed.wrapping_add(77));
        let mut seen = std::collections::BTreeMap::<String, usize>::new();
        for b in &blocks {
            match unit {
                Unit::Compressor => {
                    let x = codec.encode(b);
                    let mut data = x.data.clone();
                    data.resize(bb, 0);
                    *seen.entry(format!("enc{}", x.encoding)).or_default() += 1;
                    vec_text.push_str(&bus_hex(b, bw));
                    expect.push(Expect::Comp {
                        enc: x.encoding,
                        data,
                    });
                }
                Unit::Loopback => {
                    *seen
                        .entry(format!("enc{}", codec.encode(b).encoding))
                        .or_default() += 1;
                    vec_text.push_str(&bus_hex(b, bw));
                    expect.push(Expect::Block {
                        error: false,
                        block: b.clone(),
                    });
                }
                Unit::Decompressor => {
                    let x = codec.encode(b);
                    let mut enc = x.encoding;
                    let mut data = x.data.clone();
                    data.resize(bb, 0);
                    match rng.below(10) {
                        0..=3 => {}
                        4..=5 => {
                            // garbage past the stored size (not fetched)
                            for v in data.iter_mut().skip(x.data.len()) {
                                *v = rng.next_u8();
                            }
                        }
                        6..=7 => {
                            let bit = rng.below(8 * bb as u64) as usize;
                            data[bit / 8] ^= 1 << (bit % 8);
                        }
                        _ => {
                            enc = rng.below(1 << e) as u32;
                            rng.fill(&mut data);
                            if rng.chance(0.5) {
                                data.iter_mut().skip(bb / 4).for_each(|v| *v = 0);
                            }
                        }
                    }
                    let r = codec.decode(enc, &data);
                    *seen
                        .entry(if r.is_ok() {
                            format!("enc{enc}")
                        } else {
                            "error".into()
                        })
                        .or_default() += 1;
                    let mut full = data.clone();
                    full.extend((0..e.div_ceil(8)).map(|i| (enc >> (8 * i)) as u8));
                    vec_text.push_str(&bus_hex(&full, bw + e));
                    expect.push(match r {
                        Ok(block) => Expect::Block {
                            error: false,
                            block,
                        },
                        Err(_) => Expect::Block {
                            error: true,
                            block: vec![0; bb],
                        },
                    });
                }
            }
            vec_text.push('\n');
        }
        let coverage = seen
            .iter()
            .map(|(k, v)| format!("{k}:{v}"))
            .collect::<Vec<_>>()
            .join(" ");
        let stages = match unit {
            Unit::Loopback => 2 * hdl::bdi::LATENCY,
            _ => hdl::bdi::LATENCY,
        };
        let sched = Schedule::generate(
            &ScheduleConfig {
                stall: cfg.stall,
                resets: cfg.resets,
                seed: cfg.seed.wrapping_mul(31).wrapping_add(unit as u64),
            },
            blocks.len(),
            stages,
        );
        let ideal = schedule::model_run(&sched, stages, blocks.len() as u64, u64::MAX / 2);
        let work = root.join("cosim").join(unit.name());
        std::fs::create_dir_all(&work).map_err(io(work.display()))?;
        let vec_path = work.join("vectors.hex");
        let sched_path = work.join("schedule.hex");
        std::fs::write(&vec_path, &vec_text).map_err(io(vec_path.display()))?;
        std::fs::write(&sched_path, sched.to_text()).map_err(io(sched_path.display()))?;
        for &sim in &cfg.sims {
            let t0 = std::time::Instant::now();
            let dir = root.join(format!("sim-{}", sim.name())).join(unit.name());
            let (cmd, cached) = build(sim, unit, &rtl, e, bw, &dir)?;
            let out_path = dir.join("out.txt");
            let _ = std::fs::remove_file(&out_path);
            let abs = |p: &Path| p.canonicalize().map_err(io(p.display()));
            let mut c = Command::new(&cmd[0]);
            c.args(&cmd[1..])
                .arg(format!("+vectors={}", abs(&vec_path)?.display()))
                .arg(format!("+schedule={}", abs(&sched_path)?.display()))
                .arg(format!(
                    "+out={}",
                    dir.canonicalize()
                        .map_err(io(dir.display()))?
                        .join("out.txt")
                        .display()
                ))
                .arg(format!("+n={}", blocks.len()))
                .arg("+timeout=20000")
                .current_dir(&dir);
            let log = run_tool(&mut c, sim, "run")?;
            std::fs::write(dir.join("sim.log"), &log).map_err(io("sim.log"))?;
            let text = std::fs::read_to_string(&out_path).map_err(io(out_path.display()))?;
            let mut problems = Vec::new();
            let mut matched = 0;
            let mut delivered = Vec::new();
            let mut resets = Vec::new();
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
                        let got = match unit {
                            Unit::Compressor => num(4)
                                .zip(f.get(5).and_then(|d| parse_hex(d, bb)))
                                .map(|(enc, data)| Expect::Comp {
                                    enc: enc as u32,
                                    data,
                                }),
                            _ => num(4).zip(f.get(5).and_then(|d| parse_hex(d, bb))).map(
                                |(err, block)| Expect::Block {
                                    error: err != 0,
                                    block,
                                },
                            ),
                        };
                        let want = expect.get(idx as usize);
                        if got.is_some() && got.as_ref() == want {
                            matched += 1;
                        } else if problems.len() < 50 {
                            let input = blocks
                                .get(idx as usize)
                                .map(|b| bus_hex(b, bw))
                                .unwrap_or_default();
                            problems.push(format!(
                                "{unit} vector {idx} (input block {input}): got {got:02x?}, golden {want:02x?}"
                            ));
                        }
                    }
                    Some("R") => resets.push((num(1), num(2), num(3))),
                    Some("P") => problems.push(format!("protocol violation: {line}")),
                    Some("E") => problems.push(format!("run stopped: {line}")),
                    _ => {}
                }
            }
            // order, count and timing against the ideal pipeline
            if delivered.len() != blocks.len() {
                problems.push(format!(
                    "{} outputs for {} vectors",
                    delivered.len(),
                    blocks.len()
                ));
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
                            stages, d.cycle, d.latency
                        ));
                        break;
                    }
                }
            }
            let want_resets: Vec<_> = ideal
                .resets
                .iter()
                .map(|r| (Some(r.cycle), Some(r.first), Some(r.dropped)))
                .collect();
            if resets != want_resets {
                problems.push(format!("resets {resets:?}, ideal {want_resets:?}"));
            }
            reports.push(BdiReport {
                sim,
                unit,
                vectors: blocks.len(),
                matched,
                coverage: coverage.clone(),
                problems,
                seconds: t0.elapsed().as_secs_f64(),
                cached_build: cached,
            });
        }
    }
    Ok(reports)
}
