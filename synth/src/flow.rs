//! Running Yosys and OpenSTA on one generated unit and collecting numbers.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use serde::Serialize;

use crate::liberty::Liberty;
use crate::netlist::{stage_of, Depth, Netlist};
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
    /// OpenSTA on the mapped netlist.
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
}

/// Which unit, for the stage -> block mapping.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnitKind {
    Compressor,
    Decompressor,
    /// Anything else: stages only.
    Other,
}

impl UnitKind {
    /// Block of the logic feeding stage `n`'s registers.
    fn stage_block(self, n: u32) -> String {
        match (self, n) {
            (UnitKind::Compressor, 1) => "selector (score, select, one-hot mux)".into(),
            (UnitKind::Compressor, 2) => "encoder (classify, codes, raw check)".into(),
            (UnitKind::Compressor, 3) => "pack (merge tree, header)".into(),
            (UnitKind::Decompressor, 1 | 2) => "decoder (16 decode steps, checks)".into(),
            (UnitKind::Decompressor, 3) => "inverse transform (+ select)".into(),
            (UnitKind::Decompressor, 4) => "restoration (adders + select)".into(),
            _ => format!("stage {n}"),
        }
    }

    /// Wires kept in the block run, and the block of the logic driving them.
    fn boundaries(self) -> &'static [(&'static str, &'static str)] {
        match self {
            UnitKind::Compressor => &[("symbols_p", "predictors (pred, residue, planes, xor)")],
            _ => &[],
        }
    }
}

/// A register whose logic is pipeline control rather than datapath.
fn is_control(reg: &str) -> bool {
    reg.ends_with("_valid") || reg.ends_with("_enable")
}

fn stage_label(reg: Option<&str>) -> String {
    match reg {
        Some(r) if is_control(r) => "control".into(),
        Some(r) => stage_of(r).map_or("other".into(), |n| format!("stage {n}")),
        None => "other".into(),
    }
}

fn port_label(p: &str) -> String {
    if p.ends_with("ready") {
        "control".into()
    } else {
        "outputs".into()
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
    /// 2-input gates on the longest path, ABC area script.
    pub levels_gates_area: u32,
    /// 2-input gates on the longest path, ABC delay script (`-D 1`).
    pub levels_gates_delay: u32,
    /// OpenSTA: latest data arrival at this stage's flop inputs (ns).
    pub sta_arrival_ns: Option<f64>,
}

/// One row of the per-block table.
#[derive(Debug, Clone, Serialize)]
pub struct BlockRow {
    pub block: String,
    pub comb_nand2: f64,
    pub flops: usize,
    pub flop_nand2: f64,
}

/// OpenSTA results.
#[derive(Debug, Clone, Serialize, Default)]
pub struct Timing {
    pub reg_to_reg_ns: Option<f64>,
    pub reg_to_reg_start: String,
    pub reg_to_reg_end: String,
    pub worst_ns: Option<f64>,
    pub worst_start: String,
    pub worst_end: String,
    pub setup_ns: Option<f64>,
    pub report: String,
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
    top: &str,
    kind: UnitKind,
    lib: &Liberty,
    dir: &Path,
    opts: Options,
) -> Result<UnitReport, SynthError> {
    let t0 = Instant::now();
    std::fs::create_dir_all(dir).map_err(|source| SynthError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let v = abs(verilog);
    let l = abs(&lib.path);
    let buf = lib
        .areas
        .iter()
        .filter(|(c, _)| c.to_ascii_uppercase().starts_with("BUF"))
        .min_by(|a, b| a.1.total_cmp(b.1))
        .map(|(c, _)| c.clone());
    let mut s = String::new();
    let _ = writeln!(s, "read_liberty -lib {l}\nread_verilog {v}\nhierarchy -check -top {top}\nproc\ntee -q -o rtl_stat.txt stat -width\nsynth -flatten -top {top}\ndesign -save gen");
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
    if opts.sta {
        let _ = writeln!(s, "splitnets -ports\nopt_clean");
        if let Some(b) = &buf {
            let _ = writeln!(s, "insbuf -buf {b} A Y");
        }
        let _ = writeln!(s, "write_verilog -noattr -noexpr mapped_sta.v");
    }
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
    let nl = Netlist::load(&dir.join("mapped.json"), top)?;
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
    let by_stage = nl.attribute(&cell_area, &stage_label, &|_| None, &port_label);
    let depth_cells = nl.depths(&stage_label, &port_label);
    let (depth_ga, depth_gd) = if opts.depth {
        let a = Netlist::load(&dir.join("gates_area.json"), top)?;
        let d = Netlist::load(&dir.join("gates_delay.json"), top)?;
        (
            a.depths(&stage_label, &port_label),
            d.depths(&stage_label, &port_label),
        )
    } else {
        Default::default()
    };
    let mut flops_by_stage: BTreeMap<String, (usize, f64, Vec<String>)> = BTreeMap::new();
    for c in nl.cells.iter().filter(|c| c.is_flop()) {
        let reg = nl.flop_register(c);
        let e = flops_by_stage
            .entry(stage_label(reg.as_deref()))
            .or_default();
        e.0 += 1;
        e.1 += cell_area(c);
        e.2.push(c.name.trim_start_matches('\\').to_string());
    }
    let timing = if opts.sta {
        Some(sta(dir, top, &l, &nl, &flops_by_stage)?)
    } else {
        None
    };
    let mut labels: Vec<&String> = by_stage.keys().chain(flops_by_stage.keys()).collect();
    labels.sort();
    labels.dedup();
    let stages = labels
        .into_iter()
        .map(|lab| {
            let f = flops_by_stage.get(lab);
            StageRow {
                stage: lab.clone(),
                flops: f.map_or(0, |f| f.0),
                flop_nand2: f.map_or(0.0, |f| f.1) / nand2,
                comb_nand2: (by_stage.get(lab).map_or(0.0, |x| x.0) - f.map_or(0.0, |f| f.1))
                    / nand2,
                levels_cells: depth_cells.get(lab).map_or(0, |d| d.levels),
                levels_gates_area: depth_ga.get(lab).map_or(0, |d| d.levels),
                levels_gates_delay: depth_gd.get(lab).map_or(0, |d| d.levels),
                sta_arrival_ns: timing.as_ref().and_then(|t| stage_arrival(&t.report, lab)),
            }
        })
        .collect();
    let longest_path = depth_cells.values().max_by_key(|d| d.levels).cloned();

    // Per block.
    let (blocks, blocks_run_nand2) = if opts.blocks {
        blocks(verilog, top, kind, lib, dir, &nl, opts.abc)?
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
        seconds: t0.elapsed().as_secs_f64(),
    })
}

fn blocks(
    verilog: &Path,
    top: &str,
    kind: UnitKind,
    lib: &Liberty,
    dir: &Path,
    flat: &Netlist,
    abc: AbcScript,
) -> Result<(Vec<BlockRow>, Option<f64>), SynthError> {
    let nand2 = lib.nand2.1;
    let bounds = kind.boundaries();
    let block_of_reg = |reg: Option<&str>| -> String {
        match reg {
            Some(r) if is_control(r) => "pipeline control".into(),
            Some(r) => stage_of(r).map_or("other".into(), |n| kind.stage_block(n)),
            None => "other".into(),
        }
    };
    let boundary = |w: &str| -> Option<String> {
        bounds
            .iter()
            .find(|(p, _)| w.starts_with(p))
            .map(|(_, b)| b.to_string())
    };
    let port = |p: &str| -> String {
        if p.ends_with("ready") {
            "pipeline control".into()
        } else {
            "outputs".into()
        }
    };
    let (nl, total) = if bounds.is_empty() {
        (flat.clone(), None)
    } else {
        let l = abs(&lib.path);
        let keep: String = bounds.iter().map(|(p, _)| format!(" w:{p}*")).collect();
        let s = format!(
            "read_liberty -lib {l}\nread_verilog {}\nhierarchy -check -top {top}\nsetattr -set keep 1{keep}\nsynth -flatten -top {top}\n\
             dfflibmap -liberty {l}\nabc -liberty {l}{}\nopt_clean\nwrite_json blocks.json\n",
            abs(verilog),
            abc.yosys_args()
        );
        yosys(dir, "blocks.ys", &s)?;
        let nl = Netlist::load(&dir.join("blocks.json"), top)?;
        let t: f64 = nl
            .cells
            .iter()
            .map(|c| lib.area(&c.kind).unwrap_or(0.0))
            .sum();
        (nl, Some(t / nand2))
    };
    let area = |c: &crate::netlist::Cell| lib.area(&c.kind).unwrap_or(0.0);
    let attr = nl.attribute(&area, &block_of_reg, &boundary, &port);
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

/// OpenSTA on `mapped_sta.v`: worst register-to-register path, worst path
/// overall, and the latest arrival at each stage's flops.
fn sta(
    dir: &Path,
    top: &str,
    lib: &str,
    nl: &Netlist,
    flops: &BTreeMap<String, (usize, f64, Vec<String>)>,
) -> Result<Timing, SynthError> {
    let _ = nl;
    let mut s = format!(
        "read_liberty {lib}\nread_verilog mapped_sta.v\nlink_design {top}\n\
         create_clock -name clk -period 100 [get_ports clk]\n\
         set_input_delay 0 -clock clk [delete_from_list [all_inputs] [get_ports clk]]\n\
         set_output_delay 0 -clock clk [all_outputs]\n\
         puts \"@@ reg2reg\"\nreport_checks -path_delay max -from [all_registers -clock_pins] -to [all_registers -data_pins] -digits 3\n\
         puts \"@@ worst\"\nreport_checks -path_delay max -digits 3\n"
    );
    for (label, (_, _, names)) in flops {
        let pins: String = names.iter().map(|n| format!(" {n}/D")).collect();
        let _ = writeln!(s, "puts \"@@ {label}\"\nreport_checks -path_delay max -to [get_pins {{{pins} }}] -digits 3");
    }
    let sp = dir.join("sta.tcl");
    std::fs::write(&sp, &s).map_err(|source| SynthError::Io {
        path: sp.clone(),
        source,
    })?;
    let out = Command::new("sta")
        .arg("-no_splash")
        .arg("-exit")
        .arg("sta.tcl")
        .current_dir(dir)
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
    let log = dir.join("sta.log");
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
    let r2r = section(&text, "reg2reg");
    let worst = section(&text, "worst");
    Ok(Timing {
        reg_to_reg_ns: arrival(r2r),
        reg_to_reg_start: point(r2r, "Startpoint:"),
        reg_to_reg_end: point(r2r, "Endpoint:"),
        worst_ns: arrival(worst),
        worst_start: point(worst, "Startpoint:"),
        worst_end: point(worst, "Endpoint:"),
        setup_ns: r2r
            .lines()
            .find(|l| l.contains("library setup time"))
            .and_then(|l| l.split_whitespace().next())
            .and_then(|v| v.parse::<f64>().ok())
            .map(|v| -v),
        report: text,
    })
}

fn section<'a>(text: &'a str, label: &str) -> &'a str {
    let tag = format!("@@ {label}\n");
    match text.find(&tag) {
        Some(i) => {
            let rest = &text[i + tag.len()..];
            &rest[..rest.find("@@ ").unwrap_or(rest.len())]
        }
        None => "",
    }
}

fn arrival(sec: &str) -> Option<f64> {
    sec.lines()
        .find(|l| l.contains("data arrival time"))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|v| v.parse().ok())
}

fn point(sec: &str, key: &str) -> String {
    sec.lines()
        .find_map(|l| l.trim().strip_prefix(key))
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

fn stage_arrival(report: &str, label: &str) -> Option<f64> {
    arrival(section(report, label))
}
