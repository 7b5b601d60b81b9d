//! Power of a synthesised unit from the switching activity of a real run
//! (docs/hw/synthesis.md, "Power").
//!
//! 1. **Stimulus**: a stream of corpus blocks (runs of consecutive blocks,
//!    one run per corpus class), or all-zero blocks. A compressor takes
//!    them as its input blocks; a decompressor takes the output of its
//!    compressor's RTL for the same blocks, so that it sees the encodings a
//!    memory controller would hand it.
//! 2. **Gate-level run**: the timing-mapped netlist (`timed_sta.json`, the
//!    netlist OpenSTA times) is written as simulatable Verilog with one net
//!    per netlist bit (`n<bit>`) and simulated on Icarus beside the unit's
//!    RTL, fed back to back (a new block whenever the unit is ready, the
//!    output always taken). The testbench compares the gate-level outputs
//!    with the RTL's on every cycle and dumps a VCD of the netlist's nets.
//! 3. **Activity**: per net, transitions per clock cycle (the value at the
//!    end of each time step, so zero-delay ordering glitches do not count)
//!    and the fraction of time at 1.
//! 4. **Power**: OpenSTA evaluates the liberty's power tables for every
//!    instance at activity 0 and 1 (`set_power_activity -global`); an
//!    instance's power is linear in the activity of its pins, so its power
//!    at the measured toggle rate of its output is interpolated between the
//!    two (OpenSTA 2.0.17's per-pin annotation, `set_power_activity -pins`,
//!    does not reach its power calculation).

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde::Serialize;
use serde_json::Value;

use hdl::unit::{Direction, PortRole, UnitDescription};

use crate::flow::{self, Timing};
use crate::liberty::Liberty;
use crate::SynthError;

/// What drives the unit's data inputs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stimulus {
    /// Blocks of the corpus at this path (file, directory of `.bin`/`.npy`
    /// files, or a corpus with `MANIFEST.tsv`).
    Corpus(PathBuf),
    /// Seeded random blocks (no corpus).
    Random,
    /// All-zero blocks: the least activity the data can cause.
    Zeros,
}

/// How to measure one unit's power.
#[derive(Debug, Clone)]
pub struct PowerConfig {
    pub stimulus: Stimulus,
    /// Blocks fed to the unit.
    pub blocks: usize,
    pub seed: u64,
    /// Clock period (ns); `None`: the unit's minimum period from the timing run.
    pub clock_ns: Option<f64>,
}

impl PowerConfig {
    /// 200 blocks of `stimulus` at the unit's minimum period.
    pub fn new(stimulus: Stimulus) -> PowerConfig {
        PowerConfig {
            stimulus,
            blocks: 200,
            seed: 1,
            clock_ns: None,
        }
    }
}

/// Power of one group of cells (a pipeline stage's registers and the logic
/// feeding them, the control, the outputs).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct StagePower {
    pub stage: String,
    pub dynamic_mw: f64,
    pub leakage_mw: f64,
    pub total_mw: f64,
    pub pj_per_block: f64,
}

/// Power of one unit at one clock (report.json's `power`).
#[derive(Debug, Clone, Serialize)]
pub struct Power {
    /// Clock period the power is for (ns), and where it comes from.
    pub clock_ns: f64,
    pub clock_source: String,
    pub total_mw: f64,
    /// Internal plus switching power.
    pub dynamic_mw: f64,
    pub internal_mw: f64,
    pub switching_mw: f64,
    pub leakage_mw: f64,
    /// Energy per block at the measured throughput: total power times the
    /// clock period times cycles per block (one block per cycle when fed
    /// back to back, plus the pipeline's fill spread over the run).
    pub pj_per_block: f64,
    /// Blocks per cycle over the measured window.
    pub blocks_per_cycle: f64,
    /// Where the activity comes from (simulator, blocks, files).
    pub activity_source: String,
    /// Blocks delivered and cycles simulated in the measured window.
    pub blocks: usize,
    pub cycles: u64,
    /// Mean toggle rate (transitions per cycle) and fraction of time at 1
    /// over the netlist's nets.
    pub mean_toggle_rate: f64,
    pub mean_duty: f64,
    pub nets: usize,
    pub cells: usize,
    /// The check that the activity comes from a working run.
    pub check: String,
    /// OpenSTA's total at [`PROBE_ACTIVITY`] on every pin and this flow's
    /// interpolated total at that same activity (mW): they agree when the
    /// instance powers are linear in activity.
    pub uniform_check_mw: (f64, f64),
    pub stages: Vec<StagePower>,
    /// Work directory (netlist, testbench, VCD, OpenSTA scripts and logs).
    pub dir: String,
    pub seconds: f64,
}

// ---- stimulus ----------------------------------------------------------------

/// A small seeded generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next() % n
        }
    }
}

/// `n` blocks of `bytes` bytes and a description of where they come from.
/// From a corpus: classes in name order, from each a run of consecutive
/// blocks (about `n / classes`) at a seeded offset of a seeded file.
pub fn blocks(
    stimulus: &Stimulus,
    n: usize,
    bytes: usize,
    seed: u64,
) -> Result<(Vec<Vec<u8>>, String), SynthError> {
    let mut rng = Rng::new(seed);
    match stimulus {
        Stimulus::Zeros => Ok((vec![vec![0; bytes]; n], format!("{n} all-zero blocks"))),
        Stimulus::Random => {
            let v = (0..n)
                .map(|_| (0..bytes).map(|_| rng.next() as u8).collect())
                .collect();
            Ok((v, format!("{n} random blocks (seed {seed})")))
        }
        Stimulus::Corpus(path) => {
            let bad = |problem: String| SynthError::Stimulus {
                path: path.clone(),
                problem,
            };
            let (classes, _short) = datafiles::corpus::usable_files_by_class(path, bytes)
                .map_err(|e| bad(e.to_string()))?;
            let per = n.div_ceil(classes.len().max(1));
            let mut out = Vec::with_capacity(n);
            let mut used = Vec::new();
            for (class, files) in &classes {
                if out.len() >= n {
                    break;
                }
                let f = &files[rng.below(files.len() as u64) as usize];
                let data = golden::npy::read_data(f).map_err(|e| bad(e.to_string()))?;
                let have = data.len() / bytes;
                if have == 0 {
                    continue;
                }
                let run = per.min(n - out.len()).min(have);
                let start = rng.below((have - run) as u64 + 1) as usize;
                out.extend(
                    data[start * bytes..(start + run) * bytes]
                        .chunks_exact(bytes)
                        .map(<[u8]>::to_vec),
                );
                let name = f
                    .file_name()
                    .map_or(f.display().to_string(), |x| x.to_string_lossy().into());
                used.push(format!("{class}/{name}@{start}+{run}"));
            }
            // Fewer blocks than asked (short files): go round again.
            let have = out.len();
            if have == 0 {
                return Err(bad("no whole block in any file".into()));
            }
            for i in have..n {
                out.push(out[i % have].clone());
            }
            Ok((
                out,
                format!(
                    "{n} corpus blocks from {} ({})",
                    path.display(),
                    used.join(", ")
                ),
            ))
        }
    }
}

// ---- the netlist as simulatable Verilog ---------------------------------------

/// A connection of a cell pin or port bit: a net bit or a constant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bit {
    Net(usize),
    Const(bool),
}

impl Bit {
    fn of(v: &Value) -> Option<Bit> {
        match v {
            Value::Number(n) => n.as_u64().map(|x| Bit::Net(x as usize)),
            Value::String(s) if s == "1" => Some(Bit::Const(true)),
            Value::String(_) => Some(Bit::Const(false)),
            _ => None,
        }
    }
    fn verilog(self) -> String {
        match self {
            Bit::Net(b) => format!("n{b}"),
            Bit::Const(true) => "1'b1".into(),
            Bit::Const(false) => "1'b0".into(),
        }
    }
}

/// One instance of the timing-mapped netlist.
#[derive(Debug, Clone)]
pub struct GateCell {
    pub name: String,
    pub kind: String,
    /// Pin name, direction is output, connection.
    pins: Vec<(String, bool, Bit)>,
}

impl GateCell {
    /// The net bits its output pins drive.
    pub fn output_nets(&self) -> impl Iterator<Item = usize> + '_ {
        self.pins.iter().filter_map(|(_, out, b)| match (out, b) {
            (true, Bit::Net(n)) => Some(*n),
            _ => None,
        })
    }
}

/// The timing-mapped netlist: cells and the bits of every port bit.
#[derive(Debug, Clone, Default)]
pub struct GateNetlist {
    pub cells: Vec<GateCell>,
    /// Port (original name) -> bit index -> connection.
    ports: BTreeMap<String, BTreeMap<usize, Bit>>,
    nets: Vec<usize>,
}

/// `in_block[12]` -> (`in_block`, 12); `clk` -> (`clk`, 0).
fn split_port(name: &str) -> (String, usize) {
    if let Some((base, rest)) = name.split_once('[') {
        if let Some(i) = rest.strip_suffix(']').and_then(|i| i.parse().ok()) {
            return (base.to_string(), i);
        }
    }
    (name.to_string(), 0)
}

impl GateNetlist {
    /// Module `top` of the Yosys JSON file `path` (ports split per bit, as
    /// `splitnets -ports` leaves them, or whole).
    pub fn load(path: &Path, top: &str) -> Result<GateNetlist, SynthError> {
        let bad = |problem: String| SynthError::Netlist {
            path: path.to_path_buf(),
            problem,
        };
        let text = std::fs::read_to_string(path).map_err(|source| SynthError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let json: Value = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
        let m = json
            .get("modules")
            .and_then(|m| m.get(top))
            .ok_or_else(|| bad(format!("no module `{top}`")))?;
        let mut nl = GateNetlist::default();
        let mut nets = std::collections::BTreeSet::new();
        for (name, p) in m
            .get("ports")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            let bits: Vec<Bit> = p
                .get("bits")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Bit::of)
                .collect();
            let (base, first) = if bits.len() == 1 {
                split_port(name)
            } else {
                (name.clone(), 0)
            };
            let e = nl.ports.entry(base).or_default();
            for (i, b) in bits.into_iter().enumerate() {
                if let Bit::Net(n) = b {
                    nets.insert(n);
                }
                e.insert(first + i, b);
            }
        }
        for (name, c) in m
            .get("cells")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            let kind = c
                .get("type")
                .and_then(Value::as_str)
                .ok_or_else(|| bad(format!("cell {name} has no type")))?
                .to_string();
            let dirs = c.get("port_directions").and_then(Value::as_object);
            let mut pins = Vec::new();
            for (pin, v) in c
                .get("connections")
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
            {
                let bits: Vec<Bit> = v
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Bit::of)
                    .collect();
                let [b] = bits[..] else {
                    return Err(bad(format!(
                        "cell {name} pin {pin}: {} bits (a liberty cell pin has one)",
                        bits.len()
                    )));
                };
                if let Bit::Net(n) = b {
                    nets.insert(n);
                }
                let out = dirs
                    .and_then(|d| d.get(pin))
                    .and_then(Value::as_str)
                    .is_some_and(|d| d == "output");
                pins.push((pin.clone(), out, b));
            }
            nl.cells.push(GateCell {
                name: name.trim_start_matches('\\').to_string(),
                kind,
                pins,
            });
        }
        nl.nets = nets.into_iter().collect();
        Ok(nl)
    }

    /// Verilog module `module` with the ports of `unit` (whole vectors),
    /// one wire `n<bit>` per net bit, the cells by instance name.
    pub fn verilog(&self, unit: &UnitDescription, module: &str) -> Result<String, String> {
        let mut s = String::new();
        let names: Vec<&str> = unit.ports.iter().map(|p| p.name.as_str()).collect();
        let _ = writeln!(
            s,
            "// Timing-mapped netlist of {} for simulation: one wire per net bit.\n\
             module {module}({});",
            unit.module,
            names.join(", ")
        );
        for p in &unit.ports {
            let dir = match p.dir {
                Direction::Input => "input",
                Direction::Output => "output",
            };
            let range = if p.width > 1 {
                format!(" [{}:0]", p.width - 1)
            } else {
                String::new()
            };
            let _ = writeln!(s, "  {dir} wire{range} {};", p.name);
        }
        for n in &self.nets {
            let _ = writeln!(s, "  wire n{n};");
        }
        for p in &unit.ports {
            let bits = self.ports.get(&p.name);
            for i in 0..p.width as usize {
                let port_bit = if p.width > 1 {
                    format!("{}[{i}]", p.name)
                } else {
                    p.name.clone()
                };
                let b = bits.and_then(|b| b.get(&i)).copied();
                match (p.dir, b) {
                    (Direction::Input, Some(Bit::Net(n))) => {
                        let _ = writeln!(s, "  assign n{n} = {port_bit};");
                    }
                    (Direction::Input, _) => {}
                    (Direction::Output, Some(b)) => {
                        let _ = writeln!(s, "  assign {port_bit} = {};", b.verilog());
                    }
                    (Direction::Output, None) => {
                        return Err(format!("output {port_bit} is not in the netlist"));
                    }
                }
            }
        }
        for c in &self.cells {
            let conns: Vec<String> = c
                .pins
                .iter()
                .map(|(p, _, b)| format!(".{p}({})", b.verilog()))
                .collect();
            let _ = writeln!(s, "  {} \\{} ({});", c.kind, c.name, conns.join(", "));
        }
        s.push_str("endmodule\n");
        Ok(s)
    }
}

// ---- testbench ---------------------------------------------------------------

/// The data ports of `unit` in `dir` (inputs or outputs), name and width.
fn data_ports(unit: &UnitDescription, dir: Direction) -> Vec<(String, usize)> {
    unit.ports
        .iter()
        .filter(|p| p.dir == dir && p.role() == PortRole::Data)
        .map(|p| (p.name.clone(), p.width as usize))
        .collect()
}

/// Does `unit` have the stream interface (clk, rst, in/out valid and ready)
/// and no configuration port (units with programmable slots need their
/// programming protocol, which this run does not drive)?
fn check_stream(unit: &UnitDescription) -> Result<(), String> {
    if let Some(p) = unit.ports.iter().find(|p| p.name.starts_with("cfg_")) {
        return Err(format!(
            "{} has the configuration port {} (programmable slots): the power run drives \
             hard-wired units only",
            unit.module, p.name
        ));
    }
    for (name, dir) in [
        ("clk", Direction::Input),
        ("rst", Direction::Input),
        ("in_valid", Direction::Input),
        ("in_ready", Direction::Output),
        ("out_valid", Direction::Output),
        ("out_ready", Direction::Input),
    ] {
        if !unit
            .port(name)
            .is_some_and(|p| p.dir == dir && p.width == 1)
        {
            return Err(format!(
                "{} has no 1-bit {name} {} (not a stream unit)",
                unit.module,
                if dir == Direction::Input {
                    "input"
                } else {
                    "output"
                }
            ));
        }
    }
    Ok(())
}

/// The vector bus of one block for `src`'s data inputs, as a hex string
/// (most significant digit first): `in_block` gets the block (byte `i` at
/// bits `8i+7..8i`), any other data input seeded random bits.
fn vector_hex(src: &UnitDescription, block: &[u8], rng: &mut Rng) -> (String, usize) {
    let mut bits: Vec<bool> = Vec::new();
    for (name, w) in data_ports(src, Direction::Input) {
        for i in 0..w {
            let v = if name == "in_block" {
                block.get(i / 8).is_some_and(|b| (b >> (i % 8)) & 1 == 1)
            } else {
                rng.next() & 1 == 1
            };
            bits.push(v);
        }
    }
    let w = bits.len();
    let digits = w.div_ceil(4).max(1);
    let mut s = String::with_capacity(digits);
    for d in (0..digits).rev() {
        let mut x = 0u8;
        for k in 0..4 {
            if bits.get(4 * d + k).copied().unwrap_or(false) {
                x |= 1 << k;
            }
        }
        s.push(char::from_digit(x as u32, 16).unwrap_or('0'));
    }
    (s, w)
}

/// The testbench: vectors into `src` (the unit itself, or its
/// compressor's RTL feeding it), the RTL and the gate-level netlist side
/// by side, compared every cycle; a VCD of the netlist's nets from the
/// first cycle after reset to the last output.
fn testbench(
    unit: &UnitDescription,
    gl_module: &str,
    source: Option<&UnitDescription>,
    vw: usize,
    n: usize,
) -> String {
    let top = &unit.module;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "`timescale 1ns/1ps\n// Power run of {top}: RTL and timing-mapped netlist side by side.\n\
         module power_tb;\n  localparam VW = {vw};\n  localparam N = {n};\n\
         reg clk = 1'b0;\n  reg rst = 1'b1;\n  reg [VW-1:0] vecs [0:N-1];\n\
         integer nin = 0, nout = 0, cyc = 0, bad = 0, boot = 0;\n\
         reg [8*1024-1:0] vec_name, vcd_name;\n\
         wire [VW-1:0] vec = vecs[nin < N ? nin : N-1];\n\
         wire src_valid = !rst && nin < N;\n  wire src_ready;\n  always #5 clk = ~clk;"
    );
    // wires of the DUT (ref and gate level)
    for (pfx, _) in [("r", ()), ("g", ())] {
        let _ = writeln!(s, "  wire {pfx}_in_ready, {pfx}_out_valid;");
        for (name, w) in data_ports(unit, Direction::Output) {
            let _ = writeln!(s, "  wire [{}:0] {pfx}_{name};", w - 1);
        }
    }
    let ins = data_ports(unit, Direction::Input);
    for (name, w) in &ins {
        let _ = writeln!(s, "  wire [{}:0] d_{name};", w - 1);
    }
    let _ = writeln!(s, "  wire d_in_valid;");
    let slice = |s: &mut String, ports: &[(String, usize)], prefix: &str| {
        let mut lo = 0;
        for (name, w) in ports {
            let _ = writeln!(s, "  assign {prefix}{name} = vec[{}:{lo}];", lo + w - 1);
            lo += w;
        }
    };
    match source {
        None => {
            slice(&mut s, &ins, "d_");
            let _ = writeln!(
                s,
                "  assign d_in_valid = src_valid;\n  assign src_ready = r_in_ready;"
            );
        }
        Some(src) => {
            let src_ins = data_ports(src, Direction::Input);
            for (name, w) in &src_ins {
                let _ = writeln!(s, "  wire [{}:0] s_{name};", w - 1);
            }
            slice(&mut s, &src_ins, "s_");
            let mut conns = vec![
                ".clk(clk)".to_string(),
                ".rst(rst)".into(),
                ".in_valid(src_valid)".into(),
                ".in_ready(src_ready)".into(),
                ".out_valid(d_in_valid)".into(),
                ".out_ready(r_in_ready)".into(),
            ];
            conns.extend(src_ins.iter().map(|(p, _)| format!(".{p}(s_{p})")));
            for (name, w) in data_ports(src, Direction::Output) {
                let feeds = name
                    .strip_prefix("out_")
                    .map(|x| format!("in_{x}"))
                    .filter(|x| ins.iter().any(|(p, _)| p == x));
                match feeds {
                    Some(x) => conns.push(format!(".{name}(d_{x})")),
                    None => {
                        let _ = writeln!(s, "  wire [{}:0] s_{name};", w - 1);
                        conns.push(format!(".{name}(s_{name})"));
                    }
                }
            }
            let _ = writeln!(s, "  {} src ({});", src.module, conns.join(", "));
        }
    }
    for (pfx, module, inst) in [("r", top.as_str(), "rtl"), ("g", gl_module, "gl")] {
        let mut conns = vec![
            ".clk(clk)".to_string(),
            ".rst(rst)".into(),
            ".in_valid(d_in_valid)".into(),
            format!(".in_ready({pfx}_in_ready)"),
            format!(".out_valid({pfx}_out_valid)"),
            ".out_ready(1'b1)".into(),
        ];
        conns.extend(ins.iter().map(|(p, _)| format!(".{p}(d_{p})")));
        conns.extend(
            data_ports(unit, Direction::Output)
                .iter()
                .map(|(p, _)| format!(".{p}({pfx}_{p})")),
        );
        let _ = writeln!(s, "  {module} {inst} ({});", conns.join(", "));
    }
    let outs: Vec<String> = data_ports(unit, Direction::Output)
        .iter()
        .map(|(p, _)| p.clone())
        .collect();
    let cat = |pfx: &str| {
        outs.iter()
            .map(|p| format!("{pfx}_{p}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let _ = writeln!(
        s,
        "  initial begin\n    if (!$value$plusargs(\"vectors=%s\", vec_name)) begin $display(\"POWER-ERROR no +vectors\"); $finish; end\n\
         if (!$value$plusargs(\"vcd=%s\", vcd_name)) vcd_name = 0;\n    $readmemh(vec_name, vecs);\n  end\n\
         // Handshakes at the rising edge; the dump starts with the first cycle after reset.\n\
         always @(posedge clk) begin\n    if (rst) begin\n      boot = boot + 1;\n      if (boot == 4) begin\n        rst <= 1'b0;\n\
         if (vcd_name != 0) begin $dumpfile(vcd_name); $dumpvars(1, power_tb.gl); end\n      end\n    end else begin\n\
         cyc = cyc + 1;\n      if (src_valid && src_ready) nin = nin + 1;\n      if (r_out_valid) nout = nout + 1;\n\
         if (nout == N) begin\n        $display(\"POWER cycles %0d outputs %0d inputs %0d mismatches %0d\", cyc, nout, nin, bad);\n        $finish;\n      end\n\
         if (cyc > 8 * N + 1000) begin\n        $display(\"POWER-ERROR timeout after %0d cycles: %0d of %0d outputs\", cyc, nout, N);\n        $finish;\n      end\n    end\n  end\n\
         // Gate level against RTL in the middle of every cycle after reset.\n\
         always @(negedge clk) if (!rst) begin\n\
         if (g_in_ready !== r_in_ready || g_out_valid !== r_out_valid || (r_out_valid && {{{}}} !== {{{}}})) begin\n\
         bad = bad + 1;\n      if (bad <= 5) $display(\"POWER-MISMATCH cycle %0d: in_ready %b/%b out_valid %b/%b\", cyc, g_in_ready, r_in_ready, g_out_valid, r_out_valid);\n    end\n  end\nendmodule",
        cat("g"),
        cat("r")
    );
    s
}

// ---- activity from the VCD -----------------------------------------------------

/// Per-net activity over the dumped window.
#[derive(Debug, Clone, Default)]
pub struct Activity {
    /// Net bit -> (transitions, time at 1 in VCD units).
    pub nets: HashMap<usize, (u64, u64)>,
    /// First and last time stamp of the dump (VCD units).
    pub start: u64,
    pub end: u64,
}

impl Activity {
    /// Transitions per cycle and fraction of time at 1 of `net` over
    /// `cycles` cycles (0 and 0 for a net not in the dump).
    pub fn rate(&self, net: usize, cycles: u64) -> (f64, f64) {
        let span = self.end.saturating_sub(self.start).max(1) as f64;
        self.nets.get(&net).map_or((0.0, 0.0), |&(t, h)| {
            (t as f64 / cycles.max(1) as f64, h as f64 / span)
        })
    }
}

/// Count the 0/1 transitions of the 1-bit variables named `n<bit>` in a
/// VCD (any scope). A value is taken at the end of each time step: changes
/// and changes back within one step are no transition. `x` and `z` are no
/// transition either way.
pub fn read_vcd(path: &Path, end_time: Option<u64>) -> Result<Activity, SynthError> {
    let io = |source| SynthError::Io {
        path: path.to_path_buf(),
        source,
    };
    let f = std::fs::File::open(path).map_err(io)?;
    let mut ids: HashMap<String, Vec<usize>> = HashMap::new();
    let mut lines = BufReader::new(f).lines();
    // header
    for line in lines.by_ref() {
        let line = line.map_err(io)?;
        let t: Vec<&str> = line.split_whitespace().collect();
        if t.first() == Some(&"$var") && t.len() >= 5 && t[2] == "1" {
            if let Some(b) = t[4].strip_prefix('n').and_then(|x| x.parse::<usize>().ok()) {
                ids.entry(t[3].to_string()).or_default().push(b);
            }
        }
        if line.contains("$enddefinitions") {
            break;
        }
    }
    // id -> (committed value, value now, transitions, high time, since)
    #[derive(Clone, Copy)]
    struct St {
        val: u8,
        now: u8,
        toggles: u64,
        high: u64,
        since: u64,
    }
    let idx: HashMap<&str, usize> = ids
        .keys()
        .enumerate()
        .map(|(i, k)| (k.as_str(), i))
        .collect();
    let keys: Vec<&String> = ids.keys().collect();
    let mut st = vec![
        St {
            val: b'x',
            now: b'x',
            toggles: 0,
            high: 0,
            since: 0,
        };
        keys.len()
    ];
    let mut changed: Vec<usize> = Vec::new();
    let (mut time, mut start, mut started) = (0u64, 0u64, false);
    let commit = |st: &mut [St], changed: &mut Vec<usize>, at: u64, counting: bool| {
        for &i in changed.iter() {
            let s = &mut st[i];
            if s.now != s.val {
                if s.val == b'1' {
                    s.high += at - s.since;
                }
                if counting && matches!((s.val, s.now), (b'0', b'1') | (b'1', b'0')) {
                    s.toggles += 1;
                }
                s.val = s.now;
                s.since = at;
            }
        }
        changed.clear();
    };
    for line in lines {
        let line = line.map_err(io)?;
        let t = line.trim();
        if let Some(ts) = t.strip_prefix('#') {
            let next: u64 = ts.parse().map_err(|_| SynthError::Netlist {
                path: path.to_path_buf(),
                problem: format!("bad time stamp `{t}`"),
            })?;
            if end_time.is_some_and(|e| next > e) {
                break;
            }
            // the values of the first time stamp are the initial state
            commit(&mut st, &mut changed, time, started);
            if !started {
                start = next;
            }
            started = true;
            time = next;
            continue;
        }
        let Some(c) = t.bytes().next() else { continue };
        if matches!(c, b'0' | b'1' | b'x' | b'X' | b'z' | b'Z') && t.len() > 1 {
            if let Some(&i) = idx.get(&t[1..]) {
                st[i].now = c.to_ascii_lowercase();
                changed.push(i);
            }
        }
    }
    commit(&mut st, &mut changed, time, true);
    let mut nets = HashMap::new();
    for (i, k) in keys.iter().enumerate() {
        let mut high = st[i].high;
        if st[i].val == b'1' {
            high += time - st[i].since;
        }
        for &b in &ids[*k] {
            nets.insert(b, (st[i].toggles, high));
        }
    }
    Ok(Activity {
        nets,
        start,
        end: time,
    })
}

// ---- OpenSTA -------------------------------------------------------------------

/// Internal, switching and leakage power (W) of every instance at one
/// global activity.
type InstancePower = HashMap<String, [f64; 3]>;

/// Rows `internal switching leakage total name` of `report_power -instances`.
fn parse_instances(sec: &str) -> InstancePower {
    let mut m = HashMap::new();
    for l in sec.lines() {
        let t: Vec<&str> = l.split_whitespace().collect();
        if t.len() != 5 {
            continue;
        }
        let v: Vec<f64> = t[..4].iter().filter_map(|x| x.parse().ok()).collect();
        if let [i, s, k, _] = v[..] {
            m.insert(t[4].trim_start_matches('\\').to_string(), [i, s, k]);
        }
    }
    m
}

/// `Total  a b c d ...` of `report_power` -> [internal, switching, leakage].
fn parse_total(sec: &str) -> Option<[f64; 3]> {
    let l = sec.lines().find(|l| l.trim_start().starts_with("Total"))?;
    let v: Vec<f64> = l
        .split_whitespace()
        .skip(1)
        .filter_map(|x| x.parse().ok())
        .collect();
    match v[..] {
        [i, s, k, ..] => Some([i, s, k]),
        _ => None,
    }
}

/// Per-instance power at global activity 0 and 1, and the design totals at
/// activity `probe`, at clock period `clock_ns` under the timing run's
/// constraints. The result is kept (`power.tcl.log`, `power.tcl.key`) for
/// later runs of the same netlist, script and liberty.
fn sta_power(
    unit: &UnitDescription,
    lib: &Liberty,
    synth_dir: &Path,
    t: &Timing,
    clock_ns: f64,
    probe: f64,
) -> Result<(InstancePower, InstancePower, [f64; 3]), SynthError> {
    let l = std::fs::canonicalize(&lib.path)
        .unwrap_or_else(|_| lib.path.clone())
        .display()
        .to_string();
    let (cell, pin) = t
        .input_driver
        .split_once('/')
        .unwrap_or((&t.input_driver, "Q"));
    let clock = &t.clock_port;
    let s = format!(
        "read_liberty {l}\nread_verilog timed_sta.v\nlink_design {top}\n\
         create_clock -name clk -period {clock_ns} [get_ports {{{clock}}}]\n\
         set_clock_transition {slew:.4} [get_clocks clk]\n\
         set data_inputs [delete_from_list [all_inputs] [get_ports {{{clock}}}]]\n\
         set_input_delay 0 -clock clk $data_inputs\n\
         set_driving_cell -lib_cell {cell} -pin {pin} $data_inputs\n\
         set_output_delay 0 -clock clk [all_outputs]\nset_load {load:.5} [all_outputs]\n\
         set_power_activity -global -activity 0 -duty 0.5\n\
         puts \"@@ a0\"\nreport_power -digits 8 -instances [get_cells *]\n\
         set_power_activity -global -activity 1 -duty 0.5\n\
         puts \"@@ a1\"\nreport_power -digits 8 -instances [get_cells *]\n\
         set_power_activity -global -activity {probe:.6} -duty 0.5\n\
         puts \"@@ probe\"\nreport_power -digits 8\nputs \"@@ end\"\n",
        top = unit.module,
        slew = t.clock_transition_ns,
        load = t.output_load_pf,
    );
    let key = content_key(&s, &[synth_dir.join("timed_sta.v"), lib.path.clone()])?;
    let log = synth_dir.join("power.tcl.log");
    let text = if up_to_date(&synth_dir.join("power.tcl.key"), &key, &log) {
        std::fs::read_to_string(&log).map_err(io_err(&log))?
    } else {
        let _ = std::fs::remove_file(synth_dir.join("power.tcl.key"));
        let text = flow::run_sta(synth_dir, "power.tcl", &s)?;
        write(&synth_dir.join("power.tcl.key"), &key)?;
        text
    };
    let a0 = parse_instances(flow::section(&text, "a0"));
    let a1 = parse_instances(flow::section(&text, "a1"));
    let probe_total = parse_total(flow::section(&text, "probe"));
    let fail = |what: &str| SynthError::Failed {
        tool: "sta",
        log: synth_dir.join("power.tcl.log"),
        tail: what.to_string(),
    };
    if a0.is_empty() || a1.len() != a0.len() {
        return Err(fail("no per-instance power report"));
    }
    Ok((a0, a1, probe_total.ok_or_else(|| fail("no power total"))?))
}

// ---- everything together --------------------------------------------------------

/// The activity on every pin at which OpenSTA's own total is compared with
/// the interpolated one ([`Power::uniform_check_mw`]).
pub const PROBE_ACTIVITY: f64 = 0.25;

/// SHA-256 (hex) of `text` and the contents of `files`: what a kept result
/// was made from.
fn content_key(text: &str, files: &[PathBuf]) -> Result<String, SynthError> {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    h.update(text.as_bytes());
    for f in files {
        h.update(std::fs::read(f).map_err(io_err(f))?);
        h.update([0u8]);
    }
    Ok(hex::encode(h.finalize()))
}

/// Is `result` there and made from what `key` hashes (recorded in `key_file`)?
fn up_to_date(key_file: &Path, key: &str, result: &Path) -> bool {
    result.is_file() && std::fs::read_to_string(key_file).is_ok_and(|k| k == key)
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> SynthError + '_ {
    move |source| SynthError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn write(path: &Path, text: &str) -> Result<(), SynthError> {
    std::fs::write(path, text).map_err(io_err(path))
}

/// The cell models of the liberty as Verilog (`read_liberty` without
/// `-lib` turns each cell's function and flip-flop group into a module).
fn cell_models(lib: &Liberty, dir: &Path) -> Result<PathBuf, SynthError> {
    let out = dir.join("cells.v");
    let l = std::fs::canonicalize(&lib.path).unwrap_or_else(|_| lib.path.clone());
    let o = Command::new("yosys")
        .arg("-q")
        .arg("-p")
        .arg(format!(
            "read_liberty -ignore_miss_func {}; write_verilog -noattr cells.v",
            l.display()
        ))
        .current_dir(dir)
        .output()
        .map_err(|e| SynthError::Tool {
            tool: "yosys",
            problem: e.to_string(),
        })?;
    if !o.status.success() || !out.is_file() {
        return Err(SynthError::Failed {
            tool: "yosys",
            log: out,
            tail: String::from_utf8_lossy(&o.stderr).into_owned(),
        });
    }
    Ok(out)
}

fn run_tool(dir: &Path, tool: &'static str, args: &[String]) -> Result<String, SynthError> {
    let o = Command::new(tool)
        .args(args)
        .current_dir(dir)
        .output()
        .map_err(|e| SynthError::Tool {
            tool,
            problem: e.to_string(),
        })?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let log = dir.join(format!("{tool}.log"));
    write(&log, &text)?;
    if !o.status.success() {
        let tail: Vec<&str> = text.lines().rev().take(10).collect();
        return Err(SynthError::Failed {
            tool,
            log,
            tail: tail.into_iter().rev().collect::<Vec<_>>().join("\n"),
        });
    }
    Ok(text)
}

/// `POWER cycles C outputs O inputs I mismatches M` -> (C, O, I, M).
fn parse_summary(text: &str) -> Option<(u64, u64, u64, u64)> {
    let l = text.lines().find(|l| l.starts_with("POWER cycles"))?;
    let v: Vec<u64> = l
        .split_whitespace()
        .filter_map(|x| x.parse().ok())
        .collect();
    match v[..] {
        [c, o, i, m] => Some((c, o, i, m)),
        _ => None,
    }
}

/// A checked gate-level run.
#[derive(Debug, Clone)]
pub struct GateRun {
    /// Activity of every net of the window.
    pub activity: Activity,
    /// The netlist simulated.
    pub netlist: GateNetlist,
    /// Simulator, blocks and their files.
    pub source: String,
    /// Cycles of the window and blocks delivered in it.
    pub cycles: u64,
    pub outputs: u64,
    /// What was checked.
    pub check: String,
}

/// The gate-level run of `unit` (its synthesis in `synth_dir`, its RTL
/// in `rtl_dir`) on `cfg`'s blocks.
pub fn activity(
    unit: &UnitDescription,
    described: &[UnitDescription],
    rtl_dir: &Path,
    lib: &Liberty,
    synth_dir: &Path,
    cfg: &PowerConfig,
) -> Result<GateRun, SynthError> {
    let bad = |problem: String| SynthError::Stimulus {
        path: rtl_dir.to_path_buf(),
        problem,
    };
    check_stream(unit).map_err(bad)?;
    if cfg.blocks == 0 {
        return Err(bad("no blocks to simulate".into()));
    }
    let is_decomp = unit.module.contains("decompressor");
    let source = if is_decomp {
        let name = unit.module.replace("decompressor", "compressor");
        let src = described.iter().find(|u| u.module == name).ok_or_else(|| {
            bad(format!(
                "{} is fed by {name}'s output, which {} does not describe",
                unit.module,
                rtl_dir.join("params.json").display()
            ))
        })?;
        check_stream(src).map_err(bad)?;
        Some(src)
    } else {
        None
    };
    let feeder = source.unwrap_or(unit);
    let block_bits = feeder
        .port("in_block")
        .map(|p| p.width as usize)
        .ok_or_else(|| bad(format!("{} has no in_block input", feeder.module)))?;
    let dir = synth_dir.join("power");
    std::fs::create_dir_all(&dir).map_err(io_err(&dir))?;
    let (blocks, described_blocks) =
        blocks(&cfg.stimulus, cfg.blocks, block_bits.div_ceil(8), cfg.seed)?;
    let mut rng = Rng::new(cfg.seed ^ 0x5eed);
    let mut text = String::new();
    let mut vw = 0;
    for b in &blocks {
        let (h, w) = vector_hex(feeder, b, &mut rng);
        vw = w;
        text.push_str(&h);
        text.push('\n');
    }
    write(&dir.join("vectors.hex"), &text)?;
    let nl = GateNetlist::load(&synth_dir.join("timed_sta.json"), &unit.module)?;
    let gl = format!("{}_gl", unit.module);
    write(
        &dir.join("gl.v"),
        &nl.verilog(unit, &gl)
            .map_err(|p| bad(format!("{}: {p}", unit.module)))?,
    )?;
    write(
        &dir.join("power_tb.v"),
        &testbench(unit, &gl, source, vw, blocks.len()),
    )?;
    let cells = cell_models(lib, &dir)?;
    let mut args: Vec<String> = [
        "-g2005",
        "-o",
        "sim.vvp",
        "-s",
        "power_tb",
        "power_tb.v",
        "gl.v",
    ]
    .map(String::from)
    .to_vec();
    args.push(cells.display().to_string());
    for u in std::iter::once(unit).chain(source) {
        let v = rtl_dir.join(format!("{}.v", u.module));
        args.push(
            std::fs::canonicalize(&v)
                .map_err(io_err(&v))?
                .display()
                .to_string(),
        );
    }
    // the build depends on its sources only (the vectors are read at run
    // time): a second run of the same unit (other blocks) reuses it
    let mut sources = vec![dir.join("power_tb.v"), dir.join("gl.v")];
    sources.extend(args[7..].iter().map(PathBuf::from));
    let key = content_key(&args.join(" "), &sources)?;
    if !up_to_date(&dir.join("sim.key"), &key, &dir.join("sim.vvp")) {
        run_tool(&dir, "iverilog", &args)?;
        write(&dir.join("sim.key"), &key)?;
    }
    let vcd = dir.join("activity.vcd");
    let out = run_tool(
        &dir,
        "vvp",
        &[
            "-n".into(),
            "sim.vvp".into(),
            "+vectors=vectors.hex".into(),
            "+vcd=activity.vcd".into(),
        ],
    )?;
    let problem = |p: String| SynthError::Failed {
        tool: "vvp",
        log: dir.join("vvp.log"),
        tail: p,
    };
    let (cycles, outputs, _inputs, mismatches) = parse_summary(&out).ok_or_else(|| {
        problem(
            out.lines()
                .filter(|l| l.starts_with("POWER"))
                .collect::<Vec<_>>()
                .join("\n"),
        )
    })?;
    if mismatches > 0 {
        return Err(problem(format!(
            "the gate-level netlist differs from the RTL in {mismatches} cycles:\n{}",
            out.lines()
                .filter(|l| l.starts_with("POWER-MISMATCH"))
                .collect::<Vec<_>>()
                .join("\n")
        )));
    }
    let act = read_vcd(&vcd, None)?;
    let check = format!(
        "gate-level outputs equal the RTL's in all {cycles} cycles ({outputs} outputs{})",
        source.map_or(String::new(), |s| format!(
            ", fed by the RTL of {}",
            s.module
        ))
    );
    let src = format!(
        "gate-level Icarus (zero-delay), {described_blocks}{}",
        source.map_or(String::new(), |s| format!(" through {}", s.module))
    );
    let _ = std::fs::remove_file(&vcd);
    Ok(GateRun {
        activity: act,
        netlist: nl,
        source: src,
        cycles,
        outputs,
        check,
    })
}

/// The netlist OpenSTA reads (`timed_sta.json`) with each flip-flop's
/// output named by its register bit as in `timed.json` (the same flop
/// names, `ff_N`; `opt_clean -purge` dropped the register names from the
/// former), so that its cells are attributed to stages as the area is.
fn stage_netlist(
    synth_dir: &Path,
    unit: &UnitDescription,
) -> Result<crate::netlist::Netlist, SynthError> {
    let mut nl = crate::netlist::Netlist::load(&synth_dir.join("timed_sta.json"), unit)?;
    let named = crate::netlist::Netlist::load(&synth_dir.join("timed.json"), unit)?;
    let bits: HashMap<&str, String> = named
        .cells
        .iter()
        .filter(|c| c.is_flop())
        .filter_map(|c| Some((c.name.trim_start_matches('\\'), named.flop_bit(c)?)))
        .collect();
    let mut add = Vec::new();
    for c in nl.cells.iter().filter(|c| c.is_flop()) {
        if let (Some(bit), Some(&out)) =
            (bits.get(c.name.trim_start_matches('\\')), c.outputs.first())
        {
            add.push((out, bit.clone()));
        }
    }
    for (out, bit) in add {
        nl.bit_names.entry(out).or_default().insert(0, bit);
    }
    Ok(nl)
}

/// The power of `unit`, synthesised with timing into `synth_dir` (its
/// `timed_sta.json` and `timed_sta.v`), from a run of `cfg`'s blocks.
pub fn run(
    unit: &UnitDescription,
    described: &[UnitDescription],
    rtl_dir: &Path,
    lib: &Liberty,
    synth_dir: &Path,
    timing: &Timing,
    cfg: &PowerConfig,
) -> Result<Power, SynthError> {
    let t0 = std::time::Instant::now();
    let GateRun {
        activity: act,
        netlist: nl,
        source,
        cycles,
        outputs,
        check,
    } = activity(unit, described, rtl_dir, lib, synth_dir, cfg)?;
    let (clock_ns, clock_source) = match cfg.clock_ns {
        Some(c) => (c, "given".to_string()),
        None => (
            timing.period_ns,
            "the unit's minimum period (timing run)".to_string(),
        ),
    };
    let rates: HashMap<usize, (f64, f64)> =
        nl.nets.iter().map(|&n| (n, act.rate(n, cycles))).collect();
    let nets = rates.len();
    let mean_toggle_rate = rates.values().map(|r| r.0).sum::<f64>() / nets.max(1) as f64;
    let mean_duty = rates.values().map(|r| r.1).sum::<f64>() / nets.max(1) as f64;
    let (a0, a1, probe) = sta_power(unit, lib, synth_dir, timing, clock_ns, PROBE_ACTIVITY)?;
    // per instance: power at its output's toggle rate
    let mut per_cell: HashMap<String, [f64; 3]> = HashMap::new();
    let mut uniform = 0.0;
    for c in &nl.cells {
        let (Some(p0), Some(p1)) = (a0.get(&c.name), a1.get(&c.name)) else {
            return Err(SynthError::Failed {
                tool: "sta",
                log: synth_dir.join("power.tcl.log"),
                tail: format!("no power of instance {}", c.name),
            });
        };
        let outs: Vec<f64> = c
            .output_nets()
            .map(|n| rates.get(&n).map_or(0.0, |r| r.0))
            .collect();
        let a = outs.iter().sum::<f64>() / outs.len().max(1) as f64;
        let at = |a: f64| -> [f64; 3] { std::array::from_fn(|k| p0[k] + a * (p1[k] - p0[k])) };
        uniform += at(PROBE_ACTIVITY).iter().sum::<f64>();
        per_cell.insert(c.name.clone(), at(a));
    }
    let sum = |k: usize| per_cell.values().map(|p| p[k]).sum::<f64>() * 1e3;
    let (internal_mw, switching_mw, leakage_mw) = (sum(0), sum(1), sum(2));
    let dynamic_mw = internal_mw + switching_mw;
    let total_mw = dynamic_mw + leakage_mw;
    let cycles_per_block = cycles as f64 / outputs.max(1) as f64;
    let pj = |mw: f64| mw * clock_ns * cycles_per_block;
    // per stage, as the area is attributed
    let gnl = stage_netlist(synth_dir, unit)?;
    let cell_power = |c: &crate::netlist::Cell| per_cell.get(c.name.trim_start_matches('\\'));
    let dyn_f = |c: &crate::netlist::Cell| cell_power(c).map_or(0.0, |p| p[0] + p[1]);
    let leak_f = |c: &crate::netlist::Cell| cell_power(c).map_or(0.0, |p| p[2]);
    let stage_label = |reg: Option<&str>| flow::stage_group(unit, reg);
    let port_label = |p: &str| flow::port_group(unit, p);
    let by_dyn = gnl.attribute(
        &dyn_f,
        &stage_label,
        &|_| None,
        &port_label,
        flow::Group::Unattributed,
    );
    let by_leak = gnl.attribute(
        &leak_f,
        &stage_label,
        &|_| None,
        &port_label,
        flow::Group::Unattributed,
    );
    let stages = by_dyn
        .iter()
        .map(|(g, (d, _))| {
            let k = by_leak.get(g).map_or(0.0, |x| x.0);
            let (d, k) = (d * 1e3, k * 1e3);
            StagePower {
                stage: g.to_string(),
                dynamic_mw: d,
                leakage_mw: k,
                total_mw: d + k,
                pj_per_block: pj(d + k),
            }
        })
        .collect();
    Ok(Power {
        clock_ns,
        clock_source,
        total_mw,
        dynamic_mw,
        internal_mw,
        switching_mw,
        leakage_mw,
        pj_per_block: pj(total_mw),
        blocks_per_cycle: outputs as f64 / cycles.max(1) as f64,
        activity_source: source,
        blocks: outputs as usize,
        cycles,
        mean_toggle_rate,
        mean_duty,
        nets,
        cells: nl.cells.len(),
        check,
        uniform_check_mw: (probe.iter().sum::<f64>() * 1e3, uniform * 1e3),
        stages,
        dir: synth_dir.join("power").display().to_string(),
        seconds: t0.elapsed().as_secs_f64(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vcd_transitions_are_counted_at_the_end_of_each_step() {
        let dir = std::env::temp_dir().join(format!("power-vcd-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("a.vcd");
        std::fs::write(
            &p,
            "$timescale 1ps $end\n$scope module gl $end\n$var wire 1 ! n5 $end\n$var wire 1 \" n7 $end\n\
             $var wire 4 # in_block $end\n$var wire 1 $ clk $end\n$upscope $end\n$enddefinitions $end\n\
             #0\n$dumpvars\n0!\nx\"\nb0000 #\n$end\n#10\n1!\n0\"\n#20\n0!\n1!\n#30\n0!\n1\"\n#40\n",
        )
        .unwrap();
        let a = read_vcd(&p, None).unwrap();
        // n5: 0 -> 1 (10) -> [0,1 in one step: stays 1] -> 0 (30): two transitions
        assert_eq!(a.nets[&5].0, 2);
        // high from 10 to 30
        assert_eq!(a.nets[&5].1, 20);
        // n7: x -> 0 is no transition, 0 -> 1 at 30 is one; high 30..40
        assert_eq!(a.nets[&7], (1, 10));
        assert_eq!((a.start, a.end), (0, 40));
        let (r, d) = a.rate(5, 4);
        assert!((r - 0.5).abs() < 1e-12 && (d - 0.5).abs() < 1e-12);
        assert_eq!(a.rate(99, 4), (0.0, 0.0));
        assert!(!a.nets.contains_key(&0));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn instance_rows_and_totals_parse() {
        let text = "     Internal    Switching      Leakage        Total\n\
                    1.0e-06 2.0e-06 3.0e-11 3.00003e-06 _21937_\n 4e-7 0 1e-11 4.0001e-07 ff_3\n";
        let m = parse_instances(text);
        assert_eq!(m["_21937_"], [1e-6, 2e-6, 3e-11]);
        assert_eq!(m["ff_3"], [4e-7, 0.0, 1e-11]);
        assert_eq!(m.len(), 2);
        let t = "Sequential 1 2 3 6 50%\nTotal 9.35e-02 1.98e-02 1.32e-06 1.13e-01 100.0%\n";
        assert_eq!(parse_total(t), Some([9.35e-2, 1.98e-2, 1.32e-6]));
        assert_eq!(parse_total("nothing"), None);
        assert_eq!(
            parse_summary("x\nPOWER cycles 203 outputs 200 inputs 200 mismatches 0\n"),
            Some((203, 200, 200, 0))
        );
        assert_eq!(parse_summary("POWER-ERROR timeout"), None);
    }

    #[test]
    fn vectors_put_the_block_first_byte_lowest() {
        let unit: UnitDescription = serde_json::from_value(serde_json::json!({
            "module": "u", "latency": 1,
            "ports": [
                {"name": "clk", "dir": "input", "width": 1},
                {"name": "in_block", "dir": "input", "width": 16},
                {"name": "in_mask", "dir": "input", "width": 2}
            ],
            "control": [], "stages": [], "probes": []
        }))
        .unwrap();
        let mut rng = Rng::new(3);
        let (h, w) = vector_hex(&unit, &[0x34, 0x12], &mut rng);
        assert_eq!(w, 18);
        assert_eq!(h.len(), 5);
        // the low four digits are the block, little-endian
        assert_eq!(&h[1..], "1234");
        assert!(u8::from_str_radix(&h[..1], 16).unwrap() < 4);
        assert_eq!(split_port("in_block[12]"), ("in_block".to_string(), 12));
        assert_eq!(split_port("clk"), ("clk".to_string(), 0));
    }

    fn stream_unit(module: &str, data: &[(&str, &str, u32)]) -> UnitDescription {
        let mut ports = vec![
            serde_json::json!({"name": "clk", "dir": "input", "width": 1}),
            serde_json::json!({"name": "rst", "dir": "input", "width": 1}),
            serde_json::json!({"name": "in_valid", "dir": "input", "width": 1}),
            serde_json::json!({"name": "in_ready", "dir": "output", "width": 1}),
            serde_json::json!({"name": "out_valid", "dir": "output", "width": 1}),
            serde_json::json!({"name": "out_ready", "dir": "input", "width": 1}),
        ];
        for (name, dir, width) in data {
            ports.push(serde_json::json!({"name": name, "dir": dir, "width": width}));
        }
        serde_json::from_value(serde_json::json!({
            "module": module, "latency": 1, "ports": ports,
            "control": [], "stages": [], "probes": []
        }))
        .unwrap()
    }

    /// A compressor takes the vectors; a decompressor takes its
    /// compressor's outputs, `out_X` into `in_X`, and the compressor's
    /// other outputs are left to wires of their own.
    #[test]
    fn testbench_feeds_a_decompressor_from_its_compressor() {
        let comp = stream_unit(
            "x_compressor",
            &[
                ("in_block", "input", 16),
                ("out_bits", "output", 17),
                ("out_len", "output", 5),
                ("out_model", "output", 2),
            ],
        );
        let decomp = stream_unit(
            "x_decompressor",
            &[
                ("in_bits", "input", 17),
                ("in_len", "input", 5),
                ("out_block", "output", 16),
                ("out_error", "output", 1),
            ],
        );
        assert!(check_stream(&comp).is_ok() && check_stream(&decomp).is_ok());
        let tb = testbench(&comp, "x_compressor_gl", None, 16, 4);
        assert!(tb.contains("assign d_in_block = vec[15:0];"), "{tb}");
        assert!(tb.contains("x_compressor rtl (") && tb.contains("x_compressor_gl gl ("));
        assert!(tb.contains(
            "{g_out_bits, g_out_len, g_out_model} !== {r_out_bits, r_out_len, r_out_model}"
        ));
        let tb = testbench(&decomp, "x_decompressor_gl", Some(&comp), 16, 4);
        assert!(tb.contains("assign s_in_block = vec[15:0];"), "{tb}");
        assert!(tb.contains(".out_bits(d_in_bits)") && tb.contains(".out_len(d_in_len)"));
        assert!(tb.contains(".out_model(s_out_model)") && tb.contains(".out_ready(r_in_ready)"));
        assert!(tb.contains("$dumpvars(1, power_tb.gl)"));
        let bare = stream_unit("y", &[]);
        let mut no_ready = bare.clone();
        no_ready.ports.retain(|p| p.name != "in_ready");
        assert!(check_stream(&no_ready).unwrap_err().contains("in_ready"));
        let slots = stream_unit("z", &[("cfg_we", "input", 1)]);
        assert!(check_stream(&slots).unwrap_err().contains("cfg_we"));
    }

    #[test]
    fn corpus_runs_are_consecutive_and_zero_blocks_are_zero() {
        let dir = std::env::temp_dir().join(format!("power-corpus-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("a")).unwrap();
        std::fs::create_dir_all(dir.join("b")).unwrap();
        std::fs::write(dir.join("a/x.bin"), (0..64u8).collect::<Vec<_>>()).unwrap();
        std::fs::write(dir.join("b/y.bin"), vec![7u8; 40]).unwrap();
        let (v, what) = blocks(&Stimulus::Corpus(dir.clone()), 6, 8, 1).unwrap();
        assert_eq!(v.len(), 6);
        // class a: three consecutive 8-byte blocks of 0..64
        assert_eq!(v[1][0], v[0][0] + 8);
        assert_eq!(v[2][0], v[1][0] + 8);
        assert!(v[3..].iter().all(|b| b == &vec![7u8; 8]));
        assert!(
            what.contains("a/x.bin") && what.contains("b/y.bin"),
            "{what}"
        );
        let (z, _) = blocks(&Stimulus::Zeros, 3, 8, 1).unwrap();
        assert!(z.iter().all(|b| b.iter().all(|&x| x == 0)));
        let (r, _) = blocks(&Stimulus::Random, 3, 8, 1).unwrap();
        assert!(r.iter().any(|b| b.iter().any(|&x| x != 0)));
        assert!(blocks(&Stimulus::Corpus(dir.join("none")), 3, 8, 1).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
