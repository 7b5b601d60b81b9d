//! Running Yosys and OpenSTA on one generated unit and collecting numbers.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use serde::Serialize;

use crate::liberty::Liberty;
use hdl::unit::{CandidateField, Direction, Mirror, PortRole, ProbeKind, UnitDescription};

use crate::netlist::{Depth, Netlist};
use crate::SynthError;

/// What to install when a tool is missing.
pub const INSTALL_HINT: &str = "sudo apt-get install yosys opensta (or `make setup`, which also \
     unpacks the OSU 0.18 um liberty from qflow-tech-osu018)";

/// Where `.ci/install-tools` unpacks the OSU 0.18 um library.
pub const LIBERTY_CANDIDATES: &[&str] = &[
    "/usr/local/share/osu018/osu018_stdcells.lib",
    "/usr/local/share/osu018/usr/share/qflow/tech/osu018/osu018_stdcells.lib",
    "/usr/share/qflow/tech/osu018/osu018_stdcells.lib",
];

/// Find the liberty: `explicit`, then `$MPC_LIBERTY`, then the install places.
pub fn find_liberty(explicit: Option<&Path>) -> Result<PathBuf, SynthError> {
    if let Some(p) = explicit {
        return if p.is_file() {
            Ok(p.to_path_buf())
        } else {
            Err(SynthError::NoLiberty(format!(
                "{} does not exist",
                p.display()
            )))
        };
    }
    if let Some(p) = std::env::var_os("MPC_LIBERTY") {
        let p = PathBuf::from(p);
        if p.is_file() {
            return Ok(p);
        }
        return Err(SynthError::NoLiberty(format!(
            "MPC_LIBERTY={} does not exist",
            p.display()
        )));
    }
    LIBERTY_CANDIDATES
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
        .ok_or_else(|| {
            SynthError::NoLiberty(format!("none of {} exists", LIBERTY_CANDIDATES.join(", ")))
        })
}

/// Is `tool` runnable (`tool -V` / `-version` exits)?
pub fn have_tool(tool: &str) -> bool {
    let flag = if tool == "sta" { "-version" } else { "-V" };
    Command::new(tool)
        .arg(flag)
        .stdin(std::process::Stdio::null())
        .output()
        .is_ok()
}

/// Which analyses to run.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Depth runs (generic 2-input gates, area and delay ABC scripts).
    pub depth: bool,
    /// Timing: a second mapping with buffering and sizing, the FO4 delay of
    /// the library and OpenSTA with a clock on the mapped netlist.
    pub sta: bool,
    /// Per-block attribution (a second run with block boundaries kept).
    pub blocks: bool,
    /// ABC script of the technology mapping.
    pub abc: AbcScript,
}

impl Options {
    pub const FULL: Options = Options {
        depth: true,
        sta: true,
        blocks: true,
        abc: AbcScript::Default,
    };
    pub const AREA_ONLY: Options = Options {
        depth: false,
        sta: false,
        blocks: false,
        abc: AbcScript::Default,
    };
}

/// The ABC script `abc -liberty` maps with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AbcScript {
    /// Yosys' default: `strash; &get -n; &fraig -x; &put; scorr; dc2;
    /// dretime; strash; &get -n; &dch -f; &nf; &put`.
    Default,
    /// The default without SAT sweeping (`&fraig -x`, `scorr`), for the area
    /// mapping and the depth and block runs alike: for units
    /// whose candidate equivalences random simulation cannot refute (DF-MAN
    /// selects its zero-filled copy under a condition random patterns almost
    /// never meet), where the sweep runs for tens of minutes.
    NoSweep,
}

impl AbcScript {
    /// Arguments after `abc -liberty LIB`.
    pub fn yosys_args(self) -> &'static str {
        match self {
            AbcScript::Default => "",
            // `{D}` is Yosys' delay target (`-D n`, or nothing)
            AbcScript::NoSweep => {
                " -script +strash;dc2;dretime;strash;&get,-n;&dch,-f;&nf,{D};&put"
            }
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            AbcScript::Default => "default",
            AbcScript::NoSweep => "no-sweep",
        }
    }

    /// The ABC script of the timing mapping (`abc -liberty LIB -constr
    /// abc.constr -script +...`): the same mapping (`&nf` with no delay
    /// target maps for the best delay it finds, then recovers area off the
    /// critical paths), then `buffer -p -N 4` (buffer trees so that no net
    /// drives more than four pins, the load an FO4 delay is defined at;
    /// primary inputs -- ports and flop outputs -- included), `upsize`
    /// and `dnsize` (gate sizing against ABC's own timing of the liberty),
    /// `stime -p` (ABC's estimate of the critical path, in the log).
    pub fn timing_script(self) -> &'static str {
        match self {
            AbcScript::Default => {
                "strash; &get -n; &fraig -x; &put; scorr; dc2; dretime; strash; &get -n; &dch -f; &nf; &put; \
                 buffer -p -N 4; upsize; dnsize; stime -p"
            }
            AbcScript::NoSweep => {
                "strash; dc2; dretime; strash; &get -n; &dch -f; &nf; &put; buffer -p -N 4; upsize; dnsize; \
                 stime -p"
            }
        }
    }
}

/// The clock period OpenSTA is given; the minimum period is derived from
/// the slack against it (period - slack), so its value does not matter.
pub const STA_CLOCK_NS: f64 = 10.0;

/// The block of the logic feeding stage `n`'s registers: the stage's title
/// in the unit description (the comment opening the stage in the Verilog).
fn stage_block(unit: &UnitDescription, n: usize) -> String {
    unit.stages
        .iter()
        .find(|s| s.stage == n)
        .map_or_else(|| format!("stage {n}"), |s| s.title.clone())
}

/// Wires kept in the block run, and the block of the logic driving them:
/// the stage-1 logic probes that mirror a predictor's symbols
/// (`candidates[i].symbols`) end the predictors' logic.
fn boundaries(unit: &UnitDescription) -> Vec<(String, String)> {
    unit.probes
        .iter()
        .filter(|p| {
            p.kind == ProbeKind::Logic
                && matches!(
                    p.mirrors,
                    Mirror::Candidate {
                        field: CandidateField::Symbols,
                        ..
                    }
                )
        })
        .map(|p| {
            (
                p.name.clone(),
                "predictors (pred, residue, planes, xor)".to_string(),
            )
        })
        .collect()
}

/// A group of flip-flops and of the logic and paths ending at them: a
/// pipeline stage's data registers, the pipeline control (valid flags,
/// load enables and the `ready` output they drive), the other outputs, the
/// other flops. Ordered as the timing report lists them: stages by number,
/// then control, other, outputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Group {
    Stage(usize),
    Control,
    Other,
    Outputs,
    /// Logic that reaches no flop and no output.
    Unattributed,
}

impl std::fmt::Display for Group {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Group::Stage(n) => write!(f, "stage {n}"),
            Group::Control => f.write_str("control"),
            Group::Other => f.write_str("other"),
            Group::Outputs => f.write_str("outputs"),
            Group::Unattributed => f.write_str("unattributed"),
        }
    }
}

/// The group of a flop's register: [`Group::Control`] for the pipeline's
/// valid flags and enables, [`Group::Stage`] for a stage's data register
/// (both from the unit description), else [`Group::Other`].
pub(crate) fn stage_group(unit: &UnitDescription, reg: Option<&str>) -> Group {
    match reg {
        Some(r) if unit.is_control(r) => Group::Control,
        Some(r) => unit.stage_of_register(r).map_or(Group::Other, Group::Stage),
        None => Group::Other,
    }
}

/// Whether output port `p` is pipeline control (the handshake's `ready`,
/// driven by the first stage's load enable) rather than an output of the
/// last stage, from the ports of the unit description.
fn is_control_port(unit: &UnitDescription, p: &str) -> bool {
    unit.port(p)
        .is_some_and(|d| d.dir == Direction::Output && d.role() == PortRole::Ready)
}

/// The group of output port `p`.
pub(crate) fn port_group(unit: &UnitDescription, p: &str) -> Group {
    if is_control_port(unit, p) {
        Group::Control
    } else {
        Group::Outputs
    }
}

/// One row of the per-stage table.
#[derive(Debug, Clone, Serialize, Default)]
pub struct StageRow {
    pub stage: String,
    pub flops: usize,
    pub flop_nand2: f64,
    pub comb_nand2: f64,
    /// Cells on the longest path in the liberty netlist (area mapping).
    pub levels_cells: u32,
    /// 2-input gates on the longest path, ABC area script (`None`: the
    /// depth runs were not made, as with `--area-only`).
    pub levels_gates_area: Option<u32>,
    /// 2-input gates on the longest path, ABC delay script (`-D 1`;
    /// `None`: not measured).
    pub levels_gates_delay: Option<u32>,
}

/// One row of the per-block table.
#[derive(Debug, Clone, Serialize)]
pub struct BlockRow {
    pub block: String,
    pub comb_nand2: f64,
    pub flops: usize,
    pub flop_nand2: f64,
}

/// The worst path into one group of endpoints (a pipeline stage's
/// registers, the control registers, the output ports, or all of them).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct TimedPath {
    /// `stage N`, `control`, `outputs`, `all`, `reg-to-reg`.
    pub group: String,
    /// Start register bit (`s1_symbols[17] (ff_646)`) or input port (`in_block[241] (input)`).
    pub start: String,
    /// End register bit or output port, named the same way.
    pub end: String,
    /// Data arrival at the end (ns; inputs start at the clock edge).
    pub arrival_ns: f64,
    /// Setup time of the end flop (ns; `None` at an output port).
    pub setup_ns: Option<f64>,
    /// Smallest clock period this path meets: arrival + setup (ns).
    pub period_ns: f64,
    /// `period_ns` in FO4 delays of the library.
    pub period_fo4: f64,
}

/// Timing of the buffered and sized netlist (docs/hw/synthesis.md, "Timing").
#[derive(Debug, Clone, Serialize)]
pub struct Timing {
    /// The ABC script of the timing mapping.
    pub abc_script: String,
    /// ABC's constraints: driver of its inputs, load of its outputs.
    pub abc_driving_cell: String,
    pub abc_load_ff: f64,
    /// ABC's own estimate of the critical path (`stime -p`), ns.
    pub abc_delay_ns: Option<f64>,
    /// Area of the timing-mapped netlist (liberty units) and in NAND2-eq.
    pub area: f64,
    pub nand2_eq: f64,
    pub cells: usize,
    pub flops: usize,
    /// Clock port, the cell driving every other input, the load on every output.
    pub clock_port: String,
    pub input_driver: String,
    pub output_load_pf: f64,
    pub clock_transition_ns: f64,
    pub fo4: crate::fo4::Fo4,
    /// Minimum clock period of the unit (worst over every path) in ns and FO4.
    pub period_ns: f64,
    pub period_fo4: f64,
    /// The path that sets it.
    pub critical: TimedPath,
    /// The worst path between two flip-flops of the unit.
    pub reg_to_reg: Option<TimedPath>,
    /// The worst path into each stage's registers, the control registers
    /// and the output ports.
    pub stages: Vec<TimedPath>,
    /// OpenSTA's full output.
    pub sta_log: String,
}

/// Everything measured on one unit.
#[derive(Debug, Clone, Serialize)]
pub struct UnitReport {
    pub top: String,
    pub verilog: String,
    pub liberty: String,
    pub nand2_cell: String,
    pub nand2_area: f64,
    pub area: f64,
    pub nand2_eq: f64,
    pub flops: usize,
    /// Flip-flop bits after elaboration (`proc`), before optimisation
    /// merges duplicate flops and removes constant ones.
    pub rtl_flop_bits: u64,
    pub flop_nand2: f64,
    pub comb_nand2: f64,
    pub cells: usize,
    pub cells_by_type: BTreeMap<String, usize>,
    /// `stat -tech cmos` after `dffunmap` (flops counted as 16 transistors
    /// and their enables as 12-transistor muxes).
    pub transistors: Option<u64>,
    pub transistors_div4: Option<f64>,
    pub stages: Vec<StageRow>,
    pub blocks: Vec<BlockRow>,
    /// Total NAND2-eq of the block run (with kept boundaries), to compare
    /// with `nand2_eq`.
    pub blocks_run_nand2: Option<f64>,
    pub longest_path: Option<Depth>,
    pub timing: Option<Timing>,
    /// Power from a gate-level run (`unit_synth --power`; docs/hw/synthesis.md, "Power").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub power: Option<crate::power::Power>,
    pub seconds: f64,
}

fn yosys(dir: &Path, script_name: &str, script: &str) -> Result<(), SynthError> {
    let sp = dir.join(script_name);
    std::fs::write(&sp, script).map_err(|source| SynthError::Io {
        path: sp.clone(),
        source,
    })?;
    let log = dir.join(format!("{script_name}.log"));
    let out = Command::new("yosys")
        .arg("-q")
        .arg("-l")
        .arg(format!("{script_name}.log"))
        .arg("-s")
        .arg(script_name)
        .current_dir(dir)
        .output()
        .map_err(|e| SynthError::Tool {
            tool: "yosys",
            problem: e.to_string(),
        })?;
    if !out.status.success() {
        let tail: String = String::from_utf8_lossy(&out.stderr)
            .lines()
            .rev()
            .take(10)
            .collect::<Vec<_>>()
            .join("\n");
        return Err(SynthError::Failed {
            tool: "yosys",
            log,
            tail,
        });
    }
    Ok(())
}

fn read(path: &Path) -> Result<String, SynthError> {
    std::fs::read_to_string(path).map_err(|source| SynthError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// "Estimated number of transistors:     216672" -> 216672.
fn parse_transistors(text: &str) -> Option<u64> {
    text.lines()
        .find(|l| l.contains("Estimated number of transistors"))
        .and_then(|l| l.split(':').nth(1))
        .and_then(|v| v.trim().trim_end_matches('+').parse().ok())
}

/// `stat -width` lines `$dff_256   2` -> sum of width x count.
fn parse_dff_bits(text: &str) -> u64 {
    text.lines()
        .filter_map(|l| {
            let mut it = l.split_whitespace();
            let cell = it.next()?;
            let n: u64 = it.next()?.parse().ok()?;
            let w: u64 = cell
                .strip_prefix('$')?
                .rsplit_once('_')
                .and_then(|(k, w)| k.contains("dff").then_some(w))?
                .parse()
                .ok()?;
            Some(w * n)
        })
        .sum()
}

fn abs(p: &Path) -> String {
    std::fs::canonicalize(p)
        .unwrap_or_else(|_| p.to_path_buf())
        .display()
        .to_string()
}

/// Synthesise `verilog` (module `top`) into `dir` and measure it.
pub fn run_unit(
    verilog: &Path,
    unit: &UnitDescription,
    lib: &Liberty,
    dir: &Path,
    opts: Options,
) -> Result<UnitReport, SynthError> {
    let top = unit.module.as_str();
    let stage_label = |reg: Option<&str>| stage_group(unit, reg);
    let port_label = |p: &str| port_group(unit, p);
    let t0 = Instant::now();
    std::fs::create_dir_all(dir).map_err(|source| SynthError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let v = abs(verilog);
    let l = abs(&lib.path);
    let mut s = String::new();
    let _ = writeln!(s, "read_liberty -lib {l}\nread_verilog {v}\nhierarchy -check -top {top}\nproc\ntee -q -o rtl_stat.txt stat -width\nsynth -flatten -top {top}\ndesign -save gen");
    if opts.sta {
        // The generic netlist, for the timing mapping (timing.ys).
        let _ = writeln!(s, "write_rtlil gen.il");
    }
    let _ = writeln!(
        s,
        "dffunmap\ntee -q -o cmos.txt stat -tech cmos\ndesign -load gen"
    );
    let _ = writeln!(
        s,
        "dfflibmap -liberty {l}\nabc -liberty {l}{}\nopt_clean\nrename -enumerate -pattern ff_% t:DFF*",
        opts.abc.yosys_args()
    );
    let _ = writeln!(
        s,
        "tee -q -o area.txt stat -liberty {l}\nwrite_json mapped.json"
    );
    if opts.depth {
        for (name, d) in [("gates_area", ""), ("gates_delay", " -D 1")] {
            let _ = writeln!(
                s,
                "design -load gen\nabc -g AND,NAND,OR,NOR,XOR,XNOR{d}{}\nopt_clean\nwrite_json {name}.json",
                opts.abc.yosys_args()
            );
        }
    }
    yosys(dir, "synth.ys", &s)?;

    let nand2 = lib.nand2.1;
    let nl = Netlist::load(&dir.join("mapped.json"), unit)?;
    let mut unknown = Vec::new();
    let mut cells_by_type = BTreeMap::new();
    let (mut area, mut flop_area) = (0.0, 0.0);
    for c in &nl.cells {
        *cells_by_type.entry(c.kind.clone()).or_insert(0usize) += 1;
        match lib.area(&c.kind) {
            Some(a) => {
                area += a;
                if c.is_flop() {
                    flop_area += a;
                }
            }
            None => unknown.push(c.kind.clone()),
        }
    }
    if let Some(k) = unknown.first() {
        return Err(SynthError::Netlist {
            path: dir.join("mapped.json"),
            problem: format!("cell type {k} is not in the liberty (unmapped logic?)"),
        });
    }
    let cell_area = |c: &crate::netlist::Cell| lib.area(&c.kind).unwrap_or(0.0);
    let flops = nl.flop_count();
    let rtl_flop_bits = parse_dff_bits(&read(&dir.join("rtl_stat.txt"))?);
    let transistors = parse_transistors(&read(&dir.join("cmos.txt"))?);

    // Per stage: attribution and depth on the flat mapped netlist.
    let by_stage = nl.attribute(
        &cell_area,
        &stage_label,
        &|_| None,
        &port_label,
        Group::Unattributed,
    );
    let depth_cells = nl.depths(&stage_label, &port_label);
    let (depth_ga, depth_gd) = if opts.depth {
        let a = Netlist::load(&dir.join("gates_area.json"), unit)?;
        let d = Netlist::load(&dir.join("gates_delay.json"), unit)?;
        (
            a.depths(&stage_label, &port_label),
            d.depths(&stage_label, &port_label),
        )
    } else {
        Default::default()
    };
    let mut flops_by_stage: BTreeMap<Group, (usize, f64)> = BTreeMap::new();
    for c in nl.cells.iter().filter(|c| c.is_flop()) {
        let reg = nl.flop_register(c);
        let e = flops_by_stage
            .entry(stage_label(reg.as_deref()))
            .or_default();
        e.0 += 1;
        e.1 += cell_area(c);
    }
    let timing = if opts.sta {
        Some(timing(unit, lib, dir, &nl, opts.abc)?)
    } else {
        None
    };
    // The rows in the order of their labels' text, as report.json lists them.
    let mut labels: Vec<Group> = by_stage
        .keys()
        .chain(flops_by_stage.keys())
        .copied()
        .collect();
    labels.sort_by_key(|g| g.to_string());
    labels.dedup();
    let stages = labels
        .iter()
        .map(|lab| {
            let f = flops_by_stage.get(lab);
            StageRow {
                stage: lab.to_string(),
                flops: f.map_or(0, |f| f.0),
                flop_nand2: f.map_or(0.0, |f| f.1) / nand2,
                comb_nand2: (by_stage.get(lab).map_or(0.0, |x| x.0) - f.map_or(0.0, |f| f.1))
                    / nand2,
                levels_cells: depth_cells.get(lab).map_or(0, |d| d.levels),
                levels_gates_area: opts
                    .depth
                    .then(|| depth_ga.get(lab).map_or(0, |d| d.levels)),
                levels_gates_delay: opts
                    .depth
                    .then(|| depth_gd.get(lab).map_or(0, |d| d.levels)),
            }
        })
        .collect();
    let longest_path = depth_cells.values().max_by_key(|d| d.levels).cloned();

    // Per block.
    let (blocks, blocks_run_nand2) = if opts.blocks {
        blocks(verilog, unit, lib, dir, &nl, opts.abc)?
    } else {
        (Vec::new(), None)
    };

    Ok(UnitReport {
        top: top.to_string(),
        verilog: verilog.display().to_string(),
        liberty: lib.path.display().to_string(),
        nand2_cell: lib.nand2.0.clone(),
        nand2_area: nand2,
        area,
        nand2_eq: area / nand2,
        flops,
        rtl_flop_bits,
        flop_nand2: flop_area / nand2,
        comb_nand2: (area - flop_area) / nand2,
        cells: nl.cells.len(),
        cells_by_type,
        transistors,
        transistors_div4: transistors.map(|t| t as f64 / 4.0),
        stages,
        blocks,
        blocks_run_nand2,
        longest_path,
        timing,
        power: None,
        seconds: t0.elapsed().as_secs_f64(),
    })
}

fn blocks(
    verilog: &Path,
    unit: &UnitDescription,
    lib: &Liberty,
    dir: &Path,
    flat: &Netlist,
    abc: AbcScript,
) -> Result<(Vec<BlockRow>, Option<f64>), SynthError> {
    let nand2 = lib.nand2.1;
    let top = unit.module.as_str();
    let bounds = boundaries(unit);
    let block_of_reg = |reg: Option<&str>| -> String {
        match reg {
            Some(r) if unit.is_control(r) => "pipeline control".into(),
            Some(r) => unit
                .stage_of_register(r)
                .map_or("other".into(), |n| stage_block(unit, n)),
            None => "other".into(),
        }
    };
    let boundary = |w: &str| -> Option<String> {
        bounds
            .iter()
            .find(|(p, _)| {
                w.strip_prefix(p.as_str())
                    .is_some_and(|t| t.is_empty() || t.starts_with('[') || t.starts_with(' '))
            })
            .map(|(_, b)| b.to_string())
    };
    let port = |p: &str| -> String {
        if is_control_port(unit, p) {
            "pipeline control".into()
        } else {
            "outputs".into()
        }
    };
    let (nl, total) = if bounds.is_empty() {
        (flat.clone(), None)
    } else {
        let l = abs(&lib.path);
        let keep: String = bounds.iter().map(|(p, _)| format!(" w:{p}")).collect();
        let s = format!(
            "read_liberty -lib {l}\nread_verilog {}\nhierarchy -check -top {top}\nsetattr -set keep 1{keep}\nsynth -flatten -top {top}\n\
             dfflibmap -liberty {l}\nabc -liberty {l}{}\nopt_clean\nwrite_json blocks.json\n",
            abs(verilog),
            abc.yosys_args()
        );
        yosys(dir, "blocks.ys", &s)?;
        let nl = Netlist::load(&dir.join("blocks.json"), unit)?;
        let t: f64 = nl
            .cells
            .iter()
            .map(|c| lib.area(&c.kind).unwrap_or(0.0))
            .sum();
        (nl, Some(t / nand2))
    };
    let area = |c: &crate::netlist::Cell| lib.area(&c.kind).unwrap_or(0.0);
    let attr = nl.attribute(
        &area,
        &block_of_reg,
        &boundary,
        &port,
        "unattributed".to_string(),
    );
    let mut flops: BTreeMap<String, (usize, f64)> = BTreeMap::new();
    for c in nl.cells.iter().filter(|c| c.is_flop()) {
        let e = flops
            .entry(block_of_reg(nl.flop_register(c).as_deref()))
            .or_default();
        e.0 += 1;
        e.1 += area(c);
    }
    let rows = attr
        .iter()
        .map(|(b, (a, _))| {
            let f = flops.get(b).copied().unwrap_or_default();
            BlockRow {
                block: b.clone(),
                comb_nand2: (a - f.1) / nand2,
                flops: f.0,
                flop_nand2: f.1 / nand2,
            }
        })
        .collect();
    Ok((rows, total))
}

/// Run OpenSTA on `script` (written to `dir/<name>`); its output goes to
/// `dir/<name>.log` and is returned.
pub(crate) fn run_sta(dir: &Path, name: &str, script: &str) -> Result<String, SynthError> {
    let sp = dir.join(name);
    std::fs::write(&sp, script).map_err(|source| SynthError::Io {
        path: sp.clone(),
        source,
    })?;
    let out = Command::new("sta")
        .arg("-no_splash")
        .arg("-exit")
        .arg(name)
        .current_dir(dir)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| SynthError::Tool {
            tool: "sta",
            problem: e.to_string(),
        })?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let log = dir.join(format!("{name}.log"));
    std::fs::write(&log, &text).map_err(|source| SynthError::Io {
        path: log.clone(),
        source,
    })?;
    if !out.status.success() || text.contains("Error:") {
        let tail = text
            .lines()
            .filter(|l| l.contains("Error"))
            .take(5)
            .collect::<Vec<_>>()
            .join("\n");
        return Err(SynthError::Failed {
            tool: "sta",
            log,
            tail,
        });
    }
    Ok(text)
}

/// The smallest buffer of the library (by area), for `insbuf`.
fn smallest_buffer(lib: &Liberty) -> Option<String> {
    lib.areas
        .iter()
        .filter(|(c, _)| c.to_ascii_uppercase().starts_with("BUF"))
        .min_by(|a, b| a.1.total_cmp(b.1))
        .map(|(c, _)| c.clone())
}

/// `a; b -x` -> `+a;b,-x` (Yosys passes `+` scripts to ABC with commas as blanks).
fn yosys_script(script: &str) -> String {
    let mut s = String::from("+");
    for (i, cmd) in script.split(';').map(str::trim).enumerate() {
        if i > 0 {
            s.push(';');
        }
        s.push_str(&cmd.split_whitespace().collect::<Vec<_>>().join(","));
    }
    s
}

/// ABC's `stime -p` summary, `... Delay =  8014.29 ps ...` -> 8.01429 ns.
fn parse_abc_delay(log: &str) -> Option<f64> {
    log.lines()
        .rev()
        .find(|l| l.contains("WireLoad") && l.contains("Delay ="))
        .and_then(|l| l.split("Delay =").nth(1))
        .and_then(|r| r.split_whitespace().next())
        .and_then(|v| v.parse::<f64>().ok())
        .map(|ps| ps / 1000.0)
}

/// The timing mapping (`timing.ys`: the generic netlist mapped again with
/// buffering and sizing), the FO4 delay of the library, and OpenSTA with a
/// clock on the result (`timed_sta.v`, `sta.tcl`). The netlist OpenSTA
/// reads is also written as `timed_sta.json`, with the same instance names
/// (`rename -enumerate`), for the power run ([`crate::power`]).
fn timing(
    unit: &UnitDescription,
    lib: &Liberty,
    dir: &Path,
    area_nl: &Netlist,
    abc: AbcScript,
) -> Result<Timing, SynthError> {
    let top = unit.module.as_str();
    let l = abs(&lib.path);
    let mut kinds: BTreeMap<&str, usize> = BTreeMap::new();
    for c in area_nl.cells.iter().filter(|c| c.is_flop()) {
        *kinds.entry(c.kind.as_str()).or_default() += 1;
    }
    let flop = kinds
        .iter()
        .max_by_key(|(_, n)| **n)
        .map(|(k, _)| k.to_string())
        .ok_or_else(|| SynthError::Netlist {
            path: dir.join("mapped.json"),
            problem: "no flip-flops: no clock to time the unit against".into(),
        })?;
    let (data, outs) = lib.flop_pins(&flop)?;
    let load_pf = lib.cap_pf(
        data.iter()
            .filter_map(|p| p.capacitance)
            .fold(0.0, f64::max),
    )?;
    let q = outs[0].name.clone();
    let inv = lib.weakest_inverter()?.0.to_string();
    let (fo4, _) = crate::fo4::measure_cached(lib, dir.parent().unwrap_or(dir))?;

    let load_ff = load_pf * 1000.0;
    let cp = dir.join("abc.constr");
    std::fs::write(
        &cp,
        format!("set_driving_cell {inv}\nset_load {load_ff:.4}\n"),
    )
    .map_err(|source| SynthError::Io {
        path: cp.clone(),
        source,
    })?;
    let flop_sel: String = kinds.keys().map(|k| format!(" t:{k}")).collect();
    let insbuf = smallest_buffer(lib).map_or(String::new(), |b| format!("insbuf -buf {b} A Y\n"));
    let script = abc.timing_script();
    let ys = format!(
        "read_liberty -lib {l}\nread_rtlil gen.il\ndfflibmap -liberty {l}\n\
         abc -liberty {l} -constr abc.constr -script {}\nopt_clean\n\
         rename -enumerate -pattern ff_%{flop_sel}\ntee -q -o timing_area.txt stat -liberty {l}\n\
         write_json timed.json\nsplitnets -ports\nopt_clean -purge\n{insbuf}rename -enumerate\nwrite_verilog -noattr -noexpr timed_sta.v\nwrite_json timed_sta.json\n",
        yosys_script(script)
    );
    yosys(dir, "timing.ys", &ys)?;
    let abc_delay_ns = parse_abc_delay(&read(&dir.join("timing.ys.log"))?);

    let path = dir.join("timed.json");
    let nl = Netlist::load(&path, unit)?;
    let mut area = 0.0;
    for c in &nl.cells {
        area += lib.area(&c.kind).ok_or_else(|| SynthError::Netlist {
            path: path.clone(),
            problem: format!(
                "cell type {} is not in the liberty (unmapped logic?)",
                c.kind
            ),
        })?;
    }
    let clock = nl.clock_port().ok_or_else(|| SynthError::Netlist {
        path: path.clone(),
        problem: "no input port reaches every flip-flop: cannot find the clock".into(),
    })?;
    // Endpoints per group, and the register bit of every flop.
    let mut groups: BTreeMap<Group, Vec<String>> = BTreeMap::new();
    let mut names: BTreeMap<String, String> = BTreeMap::new();
    for c in nl.cells.iter().filter(|c| c.is_flop()) {
        let cell = c.name.trim_start_matches('\\').to_string();
        let (data, _) = lib.flop_pins(&c.kind)?;
        let e = groups
            .entry(stage_group(unit, nl.flop_register(c).as_deref()))
            .or_default();
        e.extend(data.iter().map(|p| format!("{cell}/{}", p.name)));
        let bit = nl.flop_bit(c).unwrap_or_else(|| "?".into());
        names.insert(cell.clone(), format!("{bit} ({cell})"));
    }

    let slew = fo4.slew_ns();
    let mut s = format!(
        "set_cmd_units -time ns -capacitance pF\nread_liberty {l}\nread_verilog timed_sta.v\nlink_design {top}\n\
         create_clock -name clk -period {STA_CLOCK_NS} [get_ports {{{clock}}}]\n\
         set_clock_transition {slew:.4} [get_clocks clk]\n\
         set data_inputs [delete_from_list [all_inputs] [get_ports {{{clock}}}]]\n\
         set_input_delay 0 -clock clk $data_inputs\n\
         set_driving_cell -lib_cell {flop} -pin {q} $data_inputs\n\
         set_output_delay 0 -clock clk [all_outputs]\nset_load {load_pf:.5} [all_outputs]\n\
         puts \"@@ all\"\nreport_checks -path_delay max -digits 4\n\
         puts \"@@ reg-to-reg\"\nreport_checks -path_delay max -from [all_registers -clock_pins] -to [all_registers -data_pins] -digits 4\n"
    );
    // Stages by number, then control, other, outputs (the order of `Group`).
    let mut labels: Vec<Group> = groups.keys().copied().collect();
    labels.push(Group::Outputs);
    labels.sort();
    labels.dedup();
    for group in &labels {
        let label = group.to_string();
        let to = match groups.get(group) {
            Some(pins) => format!("[get_pins {{{}}}]", pins.join(" ")),
            None => "[all_outputs]".into(),
        };
        let _ = writeln!(
            s,
            "puts \"@@ {label}\"\nreport_checks -path_delay max -to {to} -digits 4"
        );
    }
    let text = run_sta(dir, "sta.tcl", &s)?;
    let fo4_ns = fo4.fo4_ns;
    let path_of = |label: &str| parse_path(section(&text, label), label, &names, fo4_ns);
    let critical = path_of("all").ok_or_else(|| SynthError::Failed {
        tool: "sta",
        log: dir.join("sta.tcl.log"),
        tail: "no constrained path: the clock reaches no flip-flop".into(),
    })?;
    let stages = labels
        .iter()
        .filter_map(|g| path_of(&g.to_string()))
        .collect();
    Ok(Timing {
        abc_script: script.split_whitespace().collect::<Vec<_>>().join(" "),
        abc_driving_cell: inv,
        abc_load_ff: load_ff,
        abc_delay_ns,
        area,
        nand2_eq: area / lib.nand2.1,
        cells: nl.cells.len(),
        flops: nl.flop_count(),
        clock_port: clock,
        input_driver: format!("{flop}/{q}"),
        output_load_pf: load_pf,
        clock_transition_ns: slew,
        period_ns: critical.period_ns,
        period_fo4: critical.period_fo4,
        critical,
        reg_to_reg: path_of("reg-to-reg"),
        stages,
        fo4,
        sta_log: dir.join("sta.tcl.log").display().to_string(),
    })
}

/// The text OpenSTA printed after `puts "@@ <label>"`, up to the next label.
pub(crate) fn section<'a>(text: &'a str, label: &str) -> &'a str {
    let tag = format!("@@ {label}\n");
    match text.find(&tag) {
        Some(i) => {
            let rest = &text[i + tag.len()..];
            &rest[..rest.find("@@ ").unwrap_or(rest.len())]
        }
        None => "",
    }
}

/// First number of the first line containing `key`.
fn value_before(sec: &str, key: &str) -> Option<f64> {
    sec.lines()
        .find(|l| l.contains(key))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|v| v.parse().ok())
}

/// `Startpoint: ff_12 (rising edge-triggered flip-flop clocked by clk)` ->
/// the register bit of `ff_12`; a port keeps its name, marked `(input)` or `(output)`.
fn point(sec: &str, key: &str, names: &BTreeMap<String, String>) -> Option<String> {
    let rest = sec.lines().find_map(|l| l.trim().strip_prefix(key))?.trim();
    let name = rest.split_whitespace().next()?;
    Some(match names.get(name) {
        Some(n) => n.clone(),
        None if rest.contains("input port") => format!("{name} (input)"),
        None if rest.contains("output port") => format!("{name} (output)"),
        None => name.to_string(),
    })
}

/// One `report_checks` path: start, end, arrival, setup and, from the slack
/// against `STA_CLOCK_NS`, the period the path needs.
fn parse_path(
    sec: &str,
    group: &str,
    names: &BTreeMap<String, String>,
    fo4_ns: f64,
) -> Option<TimedPath> {
    let slack = sec
        .lines()
        .find(|l| l.contains("slack ("))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|v| v.parse::<f64>().ok())?;
    let period_ns = STA_CLOCK_NS - slack;
    Some(TimedPath {
        group: group.to_string(),
        start: point(sec, "Startpoint:", names)?,
        end: point(sec, "Endpoint:", names)?,
        arrival_ns: value_before(sec, "data arrival time")?,
        setup_ns: value_before(sec, "library setup time").map(|v| -v),
        period_ns,
        period_fo4: period_ns / fo4_ns,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const REPORT: &str = "@@ stage 1\nStartpoint: in_block[241] (input port clocked by clk)\n\
Endpoint: ff_646 (rising edge-triggered flip-flop clocked by clk)\nPath Group: clk\n\n\
  Delay    Time   Description\n------\n   0.0000    0.0000   clock clk (rise edge)\n\
   0.0740    8.1780 ^ _42864_/Y (AOI21X1)\n   0.0000    8.1780 ^ ff_646/D (DFFPOSX1)\n\
             8.1780   data arrival time\n\n  10.0000   10.0000   clock clk (rise edge)\n\
  -0.1850    9.8150   library setup time\n             9.8150   data required time\n\
             1.6370   slack (MET)\n\n\n@@ outputs\nStartpoint: ff_9 (rising edge-triggered flip-flop clocked by clk)\n\
Endpoint: out_len[3] (output port clocked by clk)\n   0.3000    0.3000 ^ out_len[3] (out)\n\
             0.3000   data arrival time\n   0.0000   10.0000   output external delay\n\
             9.7000   slack (MET)\n@@ control\nNo paths found.\n";

    #[test]
    fn parses_paths_and_names_registers() {
        let names: BTreeMap<String, String> = [
            ("ff_646".to_string(), "s1_symbols[17] (ff_646)".to_string()),
            ("ff_9".to_string(), "s3_len[3] (ff_9)".to_string()),
        ]
        .into();
        let p = parse_path(section(REPORT, "stage 1"), "stage 1", &names, 0.1).unwrap();
        assert_eq!(p.start, "in_block[241] (input)");
        assert_eq!(p.end, "s1_symbols[17] (ff_646)");
        assert_eq!(p.arrival_ns, 8.178);
        assert_eq!(p.setup_ns, Some(0.185));
        assert!((p.period_ns - 8.363).abs() < 1e-9);
        assert!((p.period_fo4 - 83.63).abs() < 1e-6);
        let o = parse_path(section(REPORT, "outputs"), "outputs", &names, 0.1).unwrap();
        assert_eq!(o.start, "s3_len[3] (ff_9)");
        assert_eq!(o.end, "out_len[3] (output)");
        assert_eq!(o.setup_ns, None);
        assert!((o.period_ns - 0.3).abs() < 1e-9);
        assert_eq!(
            parse_path(section(REPORT, "control"), "control", &names, 0.1),
            None
        );
        assert_eq!(
            parse_path(section(REPORT, "stage 2"), "stage 2", &names, 0.1),
            None
        );
    }

    #[test]
    fn abc_scripts_and_delay() {
        assert_eq!(
            yosys_script("strash; &get -n; &nf; buffer -p"),
            "+strash;&get,-n;&nf;buffer,-p"
        );
        for a in [AbcScript::Default, AbcScript::NoSweep] {
            let s = yosys_script(a.timing_script());
            assert!(!s.contains(' '), "{s}");
            assert!(s.ends_with("buffer,-p,-N,4;upsize;dnsize;stime,-p"), "{s}");
        }
        let log = "ABC: WireLoad = \"none\"  Gates =  25477 ( 13.3 %)   Cap = 37.2 ff (  0.3 %)   Area =   783144.00 ( 98.9 %)   Delay =  8014.29 ps  (  8.9 %)\n";
        assert_eq!(parse_abc_delay(log), Some(8.01429));
        assert_eq!(parse_abc_delay("nothing"), None);
    }

    /// The groups of flops and output ports come from the unit
    /// description: its stages, control signals and port directions.
    #[test]
    fn flops_and_ports_are_grouped_by_the_description() {
        use hdl::unit::{PortDesc, StageDesc};
        let port = |name: &str, dir| PortDesc {
            name: name.to_string(),
            dir,
            width: 1,
        };
        let unit = UnitDescription {
            module: "u".into(),
            latency: 2,
            ports: vec![
                port("clk", Direction::Input),
                port("in_valid", Direction::Input),
                port("in_ready", Direction::Output),
                port("out_valid", Direction::Output),
                port("out_ready", Direction::Input),
                port("buf_ready", Direction::Output),
            ],
            control: vec!["s1_valid".into(), "s2_valid".into()],
            stages: vec![
                StageDesc {
                    stage: 1,
                    title: "stage 1: a".into(),
                    registers: vec!["s1_x".into()],
                },
                StageDesc {
                    stage: 2,
                    title: "stage 2: b".into(),
                    registers: vec!["s2_y".into()],
                },
            ],
            probes: Vec::new(),
        };
        assert_eq!(stage_group(&unit, Some("s2_y")), Group::Stage(2));
        assert_eq!(stage_group(&unit, Some("s1_valid")), Group::Control);
        assert_eq!(stage_group(&unit, Some("s3_z")), Group::Other);
        assert_eq!(stage_group(&unit, None), Group::Other);
        assert_eq!(port_group(&unit, "in_ready"), Group::Control);
        assert_eq!(port_group(&unit, "out_valid"), Group::Outputs);
        // a data output whose name ends in "ready" is an output, not control
        assert_eq!(port_group(&unit, "buf_ready"), Group::Outputs);
        assert_eq!(stage_block(&unit, 2), "stage 2: b");
    }

    #[test]
    fn groups_sort_by_stage_number_and_print_as_before() {
        let mut v = [
            Group::Outputs,
            Group::Stage(10),
            Group::Control,
            Group::Stage(2),
            Group::Other,
            Group::Stage(1),
        ];
        v.sort();
        let text: Vec<String> = v.iter().map(Group::to_string).collect();
        assert_eq!(
            text,
            ["stage 1", "stage 2", "stage 10", "control", "other", "outputs"]
        );
        assert_eq!(Group::Unattributed.to_string(), "unattributed");
    }
}
