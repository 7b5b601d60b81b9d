//! The pipeline control of a generated unit (docs/hw/formal.md, "Pipeline
//! control"): for every stall, backpressure and reset pattern, each block
//! the unit accepts leaves it exactly once, in order, with the data its
//! combinational view computes for it.
//!
//! Two checks, each on the unit's Verilog as Yosys reads it:
//!
//! * **Stages** (structural, on the netlist after `proc; opt_dff -nosdff`):
//!   the unit has valid flags `s1_valid .. sL_valid` and load enables
//!   `s1_enable .. sL_enable`; every other register is a data register
//!   of exactly one stage `k`, a plain enabled flip-flop whose enable is
//!   `s<k>_enable` (no reset, no other writer); its next value reads only
//!   the registers of stage `k - 1` and that stage's valid flag (the unit's
//!   data inputs and `in_valid` for stage 1); the data outputs read only
//!   the registers of stage `L` and its valid flag; and the control (valid
//!   flags, enables, `in_ready`, `out_valid`) reads no data.
//! * **Handshake** (sequential, Yosys `sat -tempinduct` on the unit's
//!   control in a wrapper): a tag pipeline loads under the unit's own
//!   enables (tag of stage 1 from the count of accepted blocks, tag of
//!   stage `k` from stage `k - 1`'s), and after any reset: the number of
//!   valid flags set is the number of blocks accepted less the number
//!   delivered; a stage's tag, when its flag is set, is the number
//!   delivered plus the number of valid stages after it (so the block
//!   offered at the output is the next in order); `out_valid` is stage
//!   `L`'s flag; `in_ready` is `s1_enable`; and with `out_ready` high every
//!   stage moves and the unit accepts.
//!
//! Why the two give the property is in docs/hw/formal.md.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{io, one_line, run_limited, tail, write, Check, Outcome, ProveError};
use crate::schedule::{Cycle, Schedule};

/// The most stages a unit may have here.
pub const MAX_STAGES: usize = 16;

/// What the control proof of one unit found.
#[derive(Clone, Debug)]
pub struct ControlReport {
    pub module: String,
    /// Pipeline stages (valid flags).
    pub stages: usize,
    /// Data registers per stage (flip-flop cells of stage `k` at `k - 1`).
    pub registers: Vec<usize>,
    pub checks: Vec<Check>,
    /// A failed handshake's stimulus as a schedule file (`cosim mpc
    /// --schedule` replays it), with the cycles it spans.
    pub schedule: Option<(PathBuf, Schedule)>,
    /// The handshake's assertions that fail at the counterexample's last
    /// cycle (`ok_occupancy`, `ok_order`, ...).
    pub failing: Vec<String>,
}

impl ControlReport {
    pub fn proven(&self) -> bool {
        !self.checks.is_empty() && self.checks.iter().all(|c| c.outcome == Outcome::Proven)
    }
}

// the categories a bit of the netlist can depend on, as a mask
const DATA_IN: u64 = 1;
const IN_VALID: u64 = 1 << 1;
const OUT_READY: u64 = 1 << 2;
const RST: u64 = 1 << 3;
const CLK: u64 = 1 << 4;
const UNDRIVEN: u64 = 1 << 5;
fn data_of(k: usize) -> u64 {
    1 << (8 + k)
}
fn valid_of(k: usize) -> u64 {
    1 << (8 + MAX_STAGES + 1 + k)
}
fn all_valid(stages: usize) -> u64 {
    (1..=stages).map(valid_of).fold(0, |a, b| a | b)
}

/// The names of what a mask holds, for messages.
fn describe(mask: u64, stages: usize) -> String {
    let mut v = Vec::new();
    for (bit, name) in [
        (DATA_IN, "a data input"),
        (IN_VALID, "in_valid"),
        (OUT_READY, "out_ready"),
        (RST, "rst"),
        (CLK, "clk"),
        (UNDRIVEN, "an undriven wire"),
    ] {
        if mask & bit != 0 {
            v.push(name.to_string());
        }
    }
    for k in 1..=stages {
        if mask & data_of(k) != 0 {
            v.push(format!("stage-{k} registers"));
        }
        if mask & valid_of(k) != 0 {
            v.push(format!("s{k}_valid"));
        }
    }
    v.join(", ")
}

/// One bit of the netlist: a net number or a constant.
fn bit_id(v: &Value) -> Option<u64> {
    v.as_u64()
}

fn bits(v: Option<&Value>) -> Vec<Option<u64>> {
    v.and_then(Value::as_array)
        .map(|a| a.iter().map(bit_id).collect())
        .unwrap_or_default()
}

fn param_is_one(cell: &Value, name: &str) -> bool {
    match cell.get("parameters").and_then(|p| p.get(name)) {
        Some(Value::String(s)) => s.trim_start_matches('0') == "1",
        Some(Value::Number(n)) => n.as_u64() == Some(1),
        _ => false,
    }
}

const FLIP_FLOPS: &[&str] = &[
    "$dff", "$dffe", "$sdff", "$sdffe", "$sdffce", "$adff", "$adffe", "$aldff", "$aldffe",
    "$dffsr", "$dffsre", "$ff",
];

fn is_storage(ty: &str) -> bool {
    FLIP_FLOPS.contains(&ty)
        || ty.starts_with("$dlatch")
        || ty.starts_with("$adlatch")
        || ty.starts_with("$mem")
        || ty == "$sr"
}

/// The structure the stage check found.
struct Structure {
    stages: usize,
    registers: Vec<usize>,
    /// Input ports (name, width) other than the handshake and clock/reset.
    data_inputs: Vec<(String, usize)>,
    /// Output ports other than the handshake.
    data_outputs: Vec<String>,
}

impl Structure {
    /// What the header tells: the data ports (all but the clock, reset
    /// and handshake), before the netlist counts the registers.
    fn of_header(ports: &[Port], stages: usize) -> Structure {
        let ours = [
            "clk",
            "rst",
            "in_valid",
            "in_ready",
            "out_valid",
            "out_ready",
        ];
        let data = |input: bool| {
            ports
                .iter()
                .filter(move |(n, i, _)| *i == input && !ours.contains(&n.as_str()))
        };
        Structure {
            stages,
            registers: Vec::new(),
            data_inputs: data(true).map(|(n, _, w)| (n.clone(), *w)).collect(),
            data_outputs: data(false).map(|(n, _, _)| n.clone()).collect(),
        }
    }
}

/// The stage check on a Yosys JSON netlist of `module`: the structure, or
/// why the unit is not a balanced pipeline.
fn check_stages(json: &Value, module: &str) -> Result<Structure, String> {
    let m = json
        .get("modules")
        .and_then(|ms| ms.get(module))
        .ok_or_else(|| format!("the netlist has no module `{module}`"))?;
    let empty = serde_json::Map::new();
    let ports = m.get("ports").and_then(Value::as_object).unwrap_or(&empty);
    let cells = m.get("cells").and_then(Value::as_object).unwrap_or(&empty);
    let nets = m
        .get("netnames")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let net_bit = |name: &str| -> Option<u64> {
        let b = bits(nets.get(name).and_then(|n| n.get("bits")));
        match b.as_slice() {
            [Some(x)] => Some(*x),
            _ => None,
        }
    };
    let mut stages = 0;
    while stages < MAX_STAGES && net_bit(&format!("s{}_enable", stages + 1)).is_some() {
        stages += 1;
    }
    if stages == 0 {
        return Err("no stage enable `s1_enable` (one 1-bit wire per stage)".into());
    }
    let mut enable_stage: HashMap<u64, usize> = HashMap::new();
    let mut valid_bit = Vec::new();
    for k in 1..=stages {
        let e = net_bit(&format!("s{k}_enable")).ok_or("enable")?;
        enable_stage.insert(e, k);
        let v = net_bit(&format!("s{k}_valid"))
            .ok_or_else(|| format!("stage {k} has an enable but no 1-bit `s{k}_valid`"))?;
        valid_bit.push(v);
    }
    // who drives each bit
    #[derive(Clone, Copy)]
    enum Driver {
        Port(u64),
        Cell(usize),
        Reg(u64),
    }
    let mut driver: HashMap<u64, Driver> = HashMap::new();
    let mut data_inputs = Vec::new();
    let mut data_outputs = Vec::new();
    let mut control_outputs = Vec::new();
    for (name, p) in ports {
        let dir = p.get("direction").and_then(Value::as_str).unwrap_or("");
        let pb = bits(p.get("bits"));
        match dir {
            "input" => {
                let cat = match name.as_str() {
                    "clk" => CLK,
                    "rst" => RST,
                    "in_valid" => IN_VALID,
                    "out_ready" => OUT_READY,
                    _ => {
                        data_inputs.push((name.clone(), pb.len()));
                        DATA_IN
                    }
                };
                for b in pb.into_iter().flatten() {
                    driver.insert(b, Driver::Port(cat));
                }
            }
            "output" => match name.as_str() {
                "in_ready" | "out_valid" => control_outputs.push((name.clone(), pb)),
                _ => data_outputs.push(name.clone()),
            },
            _ => return Err(format!("port `{name}` is {dir}: only inputs and outputs")),
        }
    }
    // the register name of a bit, for messages
    let mut bit_name: HashMap<u64, String> = HashMap::new();
    for (name, n) in nets {
        if n.get("hide_name").and_then(Value::as_u64) == Some(1) {
            continue;
        }
        for (i, b) in bits(n.get("bits")).into_iter().enumerate() {
            if let Some(b) = b {
                bit_name.entry(b).or_insert_with(|| format!("{name}[{i}]"));
            }
        }
    }
    let name_of = |b: u64| {
        bit_name
            .get(&b)
            .cloned()
            .unwrap_or_else(|| format!("net {b}"))
    };

    let cell_list: Vec<(&String, &Value)> = cells.iter().collect();
    // flip-flops: (cell index, stage or 0 for a valid flag's)
    let mut regs: Vec<(usize, usize)> = Vec::new();
    let mut registers = vec![0usize; stages];
    for (ci, (cname, c)) in cell_list.iter().enumerate() {
        let ty = c.get("type").and_then(Value::as_str).unwrap_or("");
        let conns = c.get("connections");
        if !ty.starts_with('$') {
            return Err(format!(
                "cell `{cname}` is an instance of `{ty}`: the unit must be flat"
            ));
        }
        if is_storage(ty) {
            let q = bits(conns.and_then(|x| x.get("Q")));
            let first = q
                .first()
                .copied()
                .flatten()
                .ok_or("register without output")?;
            let is_valid = q.len() == 1 && valid_bit.contains(&first);
            if is_valid {
                let k = valid_bit.iter().position(|&v| v == first).unwrap_or(0) + 1;
                driver.insert(first, Driver::Reg(valid_of(k)));
                regs.push((ci, 0));
                continue;
            }
            let what = name_of(first);
            if ty != "$dffe" {
                return Err(format!(
                    "register `{what}` is a `{ty}`: a data register must be a plain enabled flip-flop (no reset, no latch or memory)"
                ));
            }
            if !param_is_one(c, "EN_POLARITY") || !param_is_one(c, "CLK_POLARITY") {
                return Err(format!(
                    "register `{what}` loads on a falling clock or a low enable"
                ));
            }
            let clk = bits(conns.and_then(|x| x.get("CLK")));
            if clk.len() != 1
                || clk[0].map(|b| matches!(driver.get(&b), Some(Driver::Port(CLK)))) != Some(true)
            {
                return Err(format!("register `{what}` is not clocked by `clk`"));
            }
            let en = bits(conns.and_then(|x| x.get("EN")));
            let k = match en.as_slice() {
                [Some(e)] => enable_stage.get(e).copied(),
                _ => None,
            }
            .ok_or_else(|| {
                format!("register `{what}` does not load under one stage's `s<k>_enable`")
            })?;
            registers[k - 1] += 1;
            for b in q.into_iter().flatten() {
                driver.insert(b, Driver::Reg(data_of(k)));
            }
            regs.push((ci, k));
            continue;
        }
        let dirs = c.get("port_directions").and_then(Value::as_object);
        let Some(dirs) = dirs else {
            return Err(format!("cell `{cname}` ({ty}) has no port directions"));
        };
        for (port, d) in dirs {
            if d.as_str() == Some("output") {
                for b in bits(conns.and_then(|x| x.get(port))).into_iter().flatten() {
                    driver.insert(b, Driver::Cell(ci));
                }
            }
        }
    }
    // the mask of a cell's outputs: every input it reads (iteratively)
    let cell_inputs = |ci: usize| -> Vec<u64> {
        let c = cell_list[ci].1;
        let mut v = Vec::new();
        if let (Some(dirs), Some(conns)) = (
            c.get("port_directions").and_then(Value::as_object),
            c.get("connections"),
        ) {
            for (port, d) in dirs {
                if d.as_str() == Some("input") {
                    v.extend(bits(conns.get(port)).into_iter().flatten());
                }
            }
        }
        v
    };
    let mut cell_mask: Vec<Option<u64>> = vec![None; cell_list.len()];
    let mut on_stack = vec![false; cell_list.len()];
    let mut mask_of = |start: u64| -> Result<u64, String> {
        let first = match driver.get(&start) {
            None => return Ok(UNDRIVEN),
            Some(Driver::Port(c)) | Some(Driver::Reg(c)) => return Ok(*c),
            Some(Driver::Cell(ci)) => *ci,
        };
        if let Some(m) = cell_mask[first] {
            return Ok(m);
        }
        // depth first over cells, each cell's inputs before the cell
        struct Frame {
            cell: usize,
            pending: Vec<u64>,
            acc: u64,
        }
        on_stack[first] = true;
        let mut stack = vec![Frame {
            cell: first,
            pending: cell_inputs(first),
            acc: 0,
        }];
        while !stack.is_empty() {
            let top = stack.len() - 1;
            let Some(b) = stack[top].pending.pop() else {
                let done = stack.pop().map(|f| (f.cell, f.acc)).unwrap_or((first, 0));
                cell_mask[done.0] = Some(done.1);
                on_stack[done.0] = false;
                if let Some(parent) = stack.last_mut() {
                    parent.acc |= done.1;
                }
                continue;
            };
            match driver.get(&b) {
                None => stack[top].acc |= UNDRIVEN,
                Some(Driver::Port(c)) | Some(Driver::Reg(c)) => stack[top].acc |= *c,
                Some(Driver::Cell(child)) => {
                    let child = *child;
                    if let Some(m) = cell_mask[child] {
                        stack[top].acc |= m;
                    } else if on_stack[child] {
                        return Err(format!("a combinational loop through {}", name_of(b)));
                    } else {
                        on_stack[child] = true;
                        stack.push(Frame {
                            cell: child,
                            pending: cell_inputs(child),
                            acc: 0,
                        });
                    }
                }
            }
        }
        Ok(cell_mask[first].unwrap_or(0))
    };
    let mask_all = |mask_of: &mut dyn FnMut(u64) -> Result<u64, String>,
                    bs: &[Option<u64>]|
     -> Result<u64, String> {
        let mut m = 0;
        for b in bs.iter().flatten() {
            m |= mask_of(*b)?;
        }
        Ok(m)
    };
    let control = all_valid(stages) | IN_VALID | OUT_READY | RST;
    for &(ci, k) in &regs {
        let c = cell_list[ci].1;
        let conns = c.get("connections");
        let q = bits(conns.and_then(|x| x.get("Q")));
        let what = q
            .first()
            .copied()
            .flatten()
            .map(&name_of)
            .unwrap_or_default();
        let mut read = 0;
        for port in ["D", "EN", "SRST", "ARST", "SET", "CLR", "AD", "ALOAD"] {
            if port == "EN" && k != 0 {
                continue; // the stage enable itself, checked above
            }
            read |= mask_all(&mut mask_of, &bits(conns.and_then(|x| x.get(port))))?;
        }
        let allowed = if k == 0 {
            control
        } else if k == 1 {
            DATA_IN | IN_VALID
        } else {
            data_of(k - 1) | valid_of(k - 1)
        };
        if read & !allowed != 0 {
            return Err(if k == 0 {
                format!(
                    "valid flag `{what}` reads {}: the control must read only valid flags, in_valid, out_ready and rst",
                    describe(read & !allowed, stages)
                )
            } else {
                format!(
                    "stage-{k} register `{what}` reads {}: a stage-{k} register may read only {}",
                    describe(read & !allowed, stages),
                    describe(allowed, stages)
                )
            });
        }
    }
    for k in 1..=stages {
        let e = net_bit(&format!("s{k}_enable")).ok_or("enable")?;
        let read = mask_of(e)?;
        if read & !control != 0 {
            return Err(format!(
                "s{k}_enable reads {}: the control must read only valid flags, in_valid, out_ready and rst",
                describe(read & !control, stages)
            ));
        }
    }
    for (name, pb) in &control_outputs {
        let read = mask_all(&mut mask_of, pb)?;
        if read & !control != 0 {
            return Err(format!(
                "{name} reads {}: the control must read only valid flags, in_valid, out_ready and rst",
                describe(read & !control, stages)
            ));
        }
    }
    for name in &data_outputs {
        let pb = bits(ports.get(name).and_then(|p| p.get("bits")));
        let read = mask_all(&mut mask_of, &pb)?;
        let allowed = data_of(stages) | valid_of(stages);
        if read & !allowed != 0 {
            return Err(format!(
                "output `{name}` reads {}: the outputs may read only the last stage's registers",
                describe(read & !allowed, stages)
            ));
        }
    }
    if let Some(k) = registers.iter().position(|&n| n == 0) {
        return Err(format!("stage {} has no data register", k + 1));
    }
    Ok(Structure {
        stages,
        registers,
        data_inputs,
        data_outputs,
    })
}

/// The wrapper of the handshake check: the unit (its valid flags and
/// enables exposed), the tag pipeline, the counters and the assertions.
fn handshake_wrapper(module: &str, s: &Structure) -> String {
    let l = s.stages;
    let t = usize::BITS as usize - l.leading_zeros() as usize + 1;
    let mut v = format!(
        "// The handshake check of `{module}`: not a design file.\n\
         module control_check(input clk, input rst, input in_valid, input out_ready"
    );
    for (name, w) in &s.data_inputs {
        let _ = write!(v, ", input [{}:0] {name}", w - 1);
    }
    let _ = write!(
        v,
        ");\n  wire in_ready, out_valid;\n  wire [{l}:1] v, e;\n  {module} u(.clk(clk), .rst(rst), .in_valid(in_valid), .in_ready(in_ready), .out_valid(out_valid), .out_ready(out_ready)"
    );
    for (name, _) in &s.data_inputs {
        let _ = write!(v, ", .{name}({name})");
    }
    for name in &s.data_outputs {
        let _ = write!(v, ", .{name}()");
    }
    for k in 1..=l {
        let _ = write!(v, ", .s{k}_valid(v[{k}]), .s{k}_enable(e[{k}])");
    }
    let _ = writeln!(v, ");");
    let _ = writeln!(v, "  reg seen_rst;\n  reg [{t1}:0] acc, del;", t1 = t - 1);
    for k in 1..=l {
        let _ = writeln!(v, "  reg [{}:0] t{k};", t - 1);
    }
    let _ = writeln!(
        v,
        "  always @(posedge clk) begin\n    seen_rst <= seen_rst | rst;\n    if (rst) begin\n      acc <= 0;\n      del <= 0;\n    end else begin\n      acc <= acc + (in_valid & in_ready);\n      del <= del + (out_valid & out_ready);\n    end\n    if (e[1]) t1 <= acc;"
    );
    for k in 2..=l {
        let _ = writeln!(v, "    if (e[{k}]) t{k} <= t{};", k - 1);
    }
    let _ = writeln!(v, "  end");
    // valid flags after stage k, summed in the tag width
    let after = |k: usize| -> String {
        let mut terms = vec!["del".to_string()];
        terms.extend(((k + 1)..=l).map(|j| format!("{{{}'d0, v[{j}]}}", t - 1)));
        terms.join(" + ")
    };
    let occupancy: Vec<String> = (1..=l)
        .map(|j| format!("{{{}'d0, v[{j}]}}", t - 1))
        .collect();
    let _ = writeln!(
        v,
        "  wire [{t1}:0] occupancy = {};\n  wire ok_occupancy = occupancy == acc - del;",
        occupancy.join(" + "),
        t1 = t - 1
    );
    let order: Vec<String> = (1..=l)
        .map(|k| format!("(~v[{k}] | (t{k} == {}))", after(k)))
        .collect();
    let _ = writeln!(v, "  wire ok_order = {};", order.join(" & "));
    let _ = writeln!(v, "  wire ok_out_valid = out_valid == v[{l}];");
    let _ = writeln!(v, "  wire ok_in_ready = in_ready == e[1];");
    let _ = writeln!(v, "  wire ok_progress = ~out_ready | (&e);");
    let _ = writeln!(
        v,
        "  always @* begin\n    if (seen_rst) begin\n      assert(ok_occupancy);\n      assert(ok_order);\n      assert(ok_out_valid);\n      assert(ok_in_ready);\n      assert(ok_progress);\n    end\n  end\nendmodule"
    );
    v
}

const OK_SIGNALS: [&str; 5] = [
    "ok_occupancy",
    "ok_order",
    "ok_out_valid",
    "ok_in_ready",
    "ok_progress",
];

/// The counterexample table Yosys `sat` prints last: per step, the values
/// of the shown signals.
fn sat_model(text: &str) -> BTreeMap<usize, BTreeMap<String, u64>> {
    let mut steps: BTreeMap<usize, BTreeMap<String, u64>> = BTreeMap::new();
    // the last table follows the last "FAIL!"
    let Some(at) = text.rfind("FAIL!") else {
        return steps;
    };
    for line in text[at..].lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() >= 3 {
            if let (Ok(step), Some(name), Ok(val)) = (
                f[0].parse::<usize>(),
                f[1].strip_prefix('\\'),
                f[2].parse::<u64>(),
            ) {
                steps.entry(step).or_default().insert(name.to_string(), val);
            }
        }
    }
    steps
}

/// A port: name, input (or output), width.
type Port = (String, bool, usize);

/// The ports of `module` in a Verilog file as the generator writes its
/// header (`input wire [W-1:0] name,` a line), and its number of stages
/// (the wires `s<k>_enable`).
fn header(text: &str, module: &str) -> Option<(Vec<Port>, usize)> {
    let at = text.find(&format!("module {module} ("))?;
    let end = at + text[at..].find(");")?;
    let mut ports = Vec::new();
    for line in text[at..end].lines().skip(1) {
        let f: Vec<&str> = line
            .trim()
            .trim_end_matches(',')
            .split_whitespace()
            .collect();
        let (input, rest) = match f.first() {
            Some(&"input") => (true, &f[1..]),
            Some(&"output") => (false, &f[1..]),
            _ => continue,
        };
        let rest: Vec<&str> = rest
            .iter()
            .copied()
            .filter(|w| *w != "wire" && *w != "reg")
            .collect();
        let (width, name) = match rest.as_slice() {
            [name] => (1, *name),
            [range, name] => {
                let r = range.strip_prefix('[')?.strip_suffix(":0]")?;
                (r.parse::<usize>().ok()? + 1, *name)
            }
            _ => return None,
        };
        ports.push((name.to_string(), input, width));
    }
    let mut stages = 0;
    while stages < MAX_STAGES && text.contains(&format!(" s{}_enable", stages + 1)) {
        stages += 1;
    }
    Some((ports, stages))
}

/// Prove the pipeline control of `module` (in `file`), with its work files
/// in `work`; `seconds` bounds the Yosys run (the netlist for the stage
/// check, then the sequential check).
pub fn prove_control(
    file: &Path,
    module: &str,
    work: &Path,
    seconds: u32,
) -> Result<ControlReport, ProveError> {
    std::fs::create_dir_all(work).map_err(io(work))?;
    let mut report = ControlReport {
        module: module.to_string(),
        stages: 0,
        registers: Vec::new(),
        checks: Vec::new(),
        schedule: None,
        failing: Vec::new(),
    };
    let text = std::fs::read_to_string(file).map_err(io(file))?;
    let units_err = |what: String| ProveError::Units {
        dir: file.parent().unwrap_or(Path::new(".")).to_path_buf(),
        what,
    };
    let (ports, stages) = header(&text, module).ok_or_else(|| {
        units_err(format!(
            "{}: no header of `{module}` with one port a line",
            file.display()
        ))
    })?;
    if stages == 0 {
        return Err(units_err(format!(
            "{}: `{module}` has no stage enable `s1_enable`",
            file.display()
        )));
    }
    drop(text);
    let shape = Structure::of_header(&ports, stages);
    // one Yosys run: the netlist for the stage check, then the handshake
    let t0 = Instant::now();
    let stem = format!("{module}_control");
    write(
        &work.join(format!("{stem}.sv")),
        &handshake_wrapper(module, &shape),
    )?;
    let exposed: Vec<String> = (1..=stages)
        .flat_map(|k| {
            [
                format!("{module}/s{k}_valid"),
                format!("{module}/s{k}_enable"),
            ]
        })
        .collect();
    let shows: String = OK_SIGNALS.iter().map(|s| format!(" -show {s}")).collect();
    // long enough for the induction and for a counterexample through
    // every stage several times
    let max_steps = 4 * stages + 8;
    let json_path = work.join(format!("{stem}.json"));
    let _ = std::fs::remove_file(&json_path);
    write(
        &work.join(format!("{stem}.ys")),
        &format!(
            "read_verilog {}\nhierarchy -top {module}\nproc\nflatten\nopt_dff -nosdff\nopt_clean\n\
             write_json {stem}.json\nexpose {}\n\
             read_verilog -formal {stem}.sv\nhierarchy -top control_check\nproc\nflatten\nopt_clean\n\
             sat -tempinduct -prove-asserts -set-init seen_rst 0 -maxsteps {max_steps} -show-inputs{shows}\n",
            file.display(),
            exposed.join(" ")
        ),
    )?;
    let log = work.join(format!("{stem}.log"));
    let said = run_limited(
        "yosys",
        &["-s", &format!("{stem}.ys")],
        work,
        &log,
        Duration::from_secs(u64::from(seconds)),
    );
    let said = match said {
        Ok(s) => s,
        // a failed proof may end Yosys with an error: its log tells
        Err(ProveError::Failed { .. }) => Some(std::fs::read_to_string(&log).map_err(io(&log))?),
        Err(e) => return Err(e),
    };
    let seconds_taken = t0.elapsed().as_secs_f64();

    // the stage structure, from the netlist Yosys wrote before the proof
    let stage_statement = "every register but the valid flags loads under one stage's s<k>_enable alone and reads only stage k-1 (the data inputs for stage 1); the outputs read only the last stage; the control reads no data".to_string();
    let structure = match std::fs::read_to_string(&json_path) {
        Ok(t) => serde_json::from_str::<Value>(&t)
            .map_err(|e| format!("{}: {e}", json_path.display()))
            .and_then(|json| check_stages(&json, module)),
        Err(_) if said.is_none() => Err(String::new()),
        Err(e) => {
            return Err(ProveError::Io {
                path: json_path,
                source: e,
            })
        }
    };
    match structure {
        Ok(s) => {
            report.checks.push(Check {
                name: format!("{module} stages"),
                statement: format!(
                    "{} stages ({} data flip-flop cells): {stage_statement}",
                    s.stages,
                    s.registers
                        .iter()
                        .map(usize::to_string)
                        .collect::<Vec<_>>()
                        .join(" + ")
                ),
                outcome: if s.stages == stages {
                    Outcome::Proven
                } else {
                    Outcome::Violated(format!(
                        "the netlist has {} stage enables, the header's wires {stages}",
                        s.stages
                    ))
                },
                seconds: seconds_taken,
            });
            report.registers = s.registers;
        }
        Err(why) if why.is_empty() => report.checks.push(Check {
            name: format!("{module} stages"),
            statement: stage_statement,
            outcome: Outcome::Undecided(format!("Yosys did not finish within {seconds} s")),
            seconds: seconds_taken,
        }),
        Err(why) => report.checks.push(Check {
            name: format!("{module} stages"),
            statement: stage_statement,
            outcome: Outcome::Violated(why),
            seconds: seconds_taken,
        }),
    }
    report.stages = stages;

    // the handshake, by temporal induction
    let statement = "after any reset, under every stall, backpressure and reset pattern: valid flags set = blocks accepted - blocks delivered; a valid stage's tag = delivered + valid stages after it (delivery in order, each block once); out_valid = the last stage's flag; in_ready = s1_enable; out_ready high moves every stage".to_string();
    let outcome = match said {
        None => Outcome::Undecided(format!("Yosys sat gave no answer within {seconds} s")),
        Some(text) if text.contains("Induction step proven: SUCCESS!") => Outcome::Proven,
        Some(text) if text.contains("model found for base case: FAIL!") => {
            let model = sat_model(&text);
            let mut sched = Schedule::default();
            let last = model.keys().next_back().copied().unwrap_or(0);
            for (step, vals) in &model {
                let get = |n: &str| vals.get(n).copied().unwrap_or(0) == 1;
                sched.cycles.push(Cycle {
                    valid: get("in_valid"),
                    ready: get("out_ready"),
                    rst: get("rst"),
                });
                if *step == last {
                    report.failing = OK_SIGNALS
                        .iter()
                        .filter(|s| vals.get(**s) == Some(&0))
                        .map(|s| s.to_string())
                        .collect();
                }
            }
            let mut ports: BTreeMap<String, Vec<bool>> = BTreeMap::new();
            for c in &sched.cycles {
                ports.entry("rst".into()).or_default().push(c.rst);
                ports.entry("in_valid".into()).or_default().push(c.valid);
                ports.entry("out_ready".into()).or_default().push(c.ready);
            }
            let path = work.join(format!("{module}_counterexample.sched"));
            sched.write(&path).map_err(|e| units_err(e.to_string()))?;
            report.schedule = Some((path, sched));
            Outcome::Counterexample(ports)
        }
        Some(text) if text.contains("Reached maximum number of time steps") => Outcome::Undecided(
            format!("neither proven nor refuted within {max_steps} steps of induction"),
        ),
        Some(text) => Outcome::Undecided(one_line(&tail(&text))),
    };
    report.checks.push(Check {
        name: format!("{module} handshake"),
        statement,
        outcome,
        seconds: seconds_taken,
    });
    Ok(report)
}

/// The schedule as a table of cycles, for the report.
pub fn schedule_table(s: &Schedule) -> String {
    let row = |f: &dyn Fn(&Cycle) -> bool| -> String {
        s.cycles
            .iter()
            .map(|c| if f(c) { '1' } else { '0' })
            .collect()
    };
    format!(
        "cycle      {}\nrst        {}\nin_valid   {}\nout_ready  {}\n",
        (0..s.cycles.len())
            .map(|c| char::from(b'0' + (c % 10) as u8))
            .collect::<String>(),
        row(&|c| c.rst),
        row(&|c| c.valid),
        row(&|c| c.ready)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = "module dpc_man_compressor (
    input  wire          clk,
    input  wire          rst,
    input  wire          in_valid,
    output wire          in_ready,
    input  wire [1023:0] in_block,
    input  wire [3:0]    in_mask,
    output wire          out_valid,
    input  wire          out_ready,
    output wire [10:0]   out_len,
    output wire          out_manipulated
);
    wire          s2_enable;
    wire          s1_enable;
";

    #[test]
    fn the_header_gives_ports_and_stages() {
        let (ports, stages) = header(HEADER, "dpc_man_compressor").expect("a header");
        assert_eq!(stages, 2);
        assert_eq!(ports.len(), 10);
        assert_eq!(ports[4], ("in_block".to_string(), true, 1024));
        assert_eq!(ports[8], ("out_len".to_string(), false, 11));
        assert_eq!(ports[9], ("out_manipulated".to_string(), false, 1));
        assert!(header(HEADER, "other").is_none());
    }

    #[test]
    fn the_wrapper_checks_every_stage() {
        let (ports, stages) = header(HEADER, "dpc_man_compressor").expect("a header");
        let s = Structure::of_header(&ports, stages);
        assert_eq!(s.data_outputs, ["out_len", "out_manipulated"]);
        let w = handshake_wrapper("dpc_man_compressor", &s);
        assert!(w.contains("input [3:0] in_mask"));
        assert!(w.contains(".s2_valid(v[2]), .s2_enable(e[2])"));
        assert!(w.contains("(~v[1] | (t1 == del + {2'd0, v[2]}))"));
        assert!(w.contains("if (e[2]) t2 <= t1;"));
        for ok in OK_SIGNALS {
            assert!(w.contains(&format!("assert({ok});")), "{ok}");
        }
    }

    #[test]
    fn the_model_table_is_read_per_step() {
        let text = "... FAIL!\n  Time Signal Name  Dec Hex Bin\n  init \\acc 5 5 0101\n     1 \\in_valid 1 1 1\n     1 \\rst 1 1 1\n     2 \\in_valid 0 0 0\n     2 \\ok_order 0 0 0\n";
        let m = sat_model(text);
        assert_eq!(m.len(), 2);
        assert_eq!(m[&1]["rst"], 1);
        assert_eq!(m[&2]["ok_order"], 0);
    }
}
