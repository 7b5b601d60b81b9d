//! Analysis of a flat Yosys netlist (`write_json`): cell attribution to
//! pipeline stages / blocks by forward cone propagation, and logic depth.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use hdl::unit::UnitDescription;
use serde_json::Value;

use crate::SynthError;

/// One cell of the netlist, with its pins reduced to bit ids.
#[derive(Debug, Clone)]
pub struct Cell {
    pub name: String,
    pub kind: String,
    pub inputs: Vec<usize>,
    pub outputs: Vec<usize>,
}

impl Cell {
    /// A flip-flop (liberty `DFF*`, Yosys `$_DFF*`, `$_SDFF*`, `$_DFFE*`...).
    pub fn is_flop(&self) -> bool {
        let k = self.kind.to_ascii_uppercase();
        k.contains("DFF") || k.contains("LATCH")
    }
}

/// A flat netlist: cells, named nets and ports. Bit ids are Yosys's;
/// constants are mapped to ids 0 and 1 (Yosys's own ids start at 2).
#[derive(Debug, Clone, Default)]
pub struct Netlist {
    pub cells: Vec<Cell>,
    /// bit id -> public names `name[i]` (without `[i]` for 1-bit nets).
    pub bit_names: HashMap<usize, Vec<String>>,
    pub input_bits: Vec<usize>,
    /// (port name, bit) of every input port bit (`name` or `name[i]`).
    pub input_ports: Vec<(String, usize)>,
    /// (port name, bit) of every output port bit.
    pub output_bits: Vec<(String, usize)>,
    /// The registers the unit description names (its stages' data
    /// registers and its pipeline control): a flop whose output has several
    /// names is named by one of these first.
    pub described: HashSet<String>,
}

fn bit_id(v: &Value) -> Option<usize> {
    match v {
        Value::Number(n) => n.as_u64().map(|x| x as usize),
        Value::String(s) if s == "1" => Some(1),
        Value::String(_) => Some(0),
        _ => None,
    }
}

fn bits_of(v: Option<&Value>) -> Vec<usize> {
    v.and_then(Value::as_array)
        .map(|a| a.iter().filter_map(bit_id).collect())
        .unwrap_or_default()
}

impl Netlist {
    /// The netlist of `unit`'s module in the Yosys JSON file `path`, its
    /// flops named by the registers `unit` describes where they can be.
    pub fn load(path: &Path, unit: &UnitDescription) -> Result<Netlist, SynthError> {
        let top = unit.module.as_str();
        let text = std::fs::read_to_string(path).map_err(|source| SynthError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let bad = |problem: String| SynthError::Netlist {
            path: path.to_path_buf(),
            problem,
        };
        let json: Value = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
        let module = json
            .get("modules")
            .and_then(|m| m.get(top))
            .ok_or_else(|| bad(format!("no module `{top}`")))?;
        let mut nl = Netlist {
            described: described_registers(unit),
            ..Netlist::default()
        };
        if let Some(ports) = module.get("ports").and_then(Value::as_object) {
            for (name, p) in ports {
                let bits = bits_of(p.get("bits"));
                match p.get("direction").and_then(Value::as_str) {
                    Some("input") => {
                        let single = bits.len() == 1;
                        for (i, &b) in bits.iter().enumerate() {
                            let full = if single {
                                name.clone()
                            } else {
                                format!("{name}[{i}]")
                            };
                            nl.input_ports.push((full, b));
                        }
                        nl.input_bits.extend(bits)
                    }
                    Some("output") => nl
                        .output_bits
                        .extend(bits.into_iter().map(|b| (name.clone(), b))),
                    _ => {}
                }
            }
        }
        if let Some(cells) = module.get("cells").and_then(Value::as_object) {
            for (name, c) in cells {
                let kind = c
                    .get("type")
                    .and_then(Value::as_str)
                    .unwrap_or("?")
                    .to_string();
                let dirs = c.get("port_directions").and_then(Value::as_object);
                let conns = c.get("connections").and_then(Value::as_object);
                let (mut inputs, mut outputs) = (Vec::new(), Vec::new());
                if let (Some(dirs), Some(conns)) = (dirs, conns) {
                    for (pin, bits) in conns {
                        let bits = bits_of(Some(bits));
                        match dirs.get(pin).and_then(Value::as_str) {
                            Some("output") => outputs.extend(bits),
                            _ => inputs.extend(bits),
                        }
                    }
                }
                nl.cells.push(Cell {
                    name: name.clone(),
                    kind,
                    inputs,
                    outputs,
                });
            }
        }
        if let Some(nets) = module.get("netnames").and_then(Value::as_object) {
            for (name, n) in nets {
                if n.get("hide_name").and_then(Value::as_u64) == Some(1) {
                    continue;
                }
                let bits = bits_of(n.get("bits"));
                let single = bits.len() == 1;
                for (i, b) in bits.into_iter().enumerate() {
                    if b < 2 {
                        continue;
                    }
                    let full = if single {
                        name.clone()
                    } else {
                        format!("{name}[{i}]")
                    };
                    nl.bit_names.entry(b).or_default().push(full);
                }
            }
        }
        Ok(nl)
    }

    /// Name of a net bit without its `[i]` index, for every name of `bit`.
    fn base_names(&self, bit: usize) -> impl Iterator<Item = &str> {
        self.bit_names
            .get(&bit)
            .into_iter()
            .flatten()
            .map(|n| n.split('[').next().unwrap_or(n))
    }

    /// The register (base name) a flop's output drives, if it has a name,
    /// preferring a register the unit description names.
    pub fn flop_register(&self, cell: &Cell) -> Option<String> {
        cell.outputs
            .iter()
            .flat_map(|&b| self.base_names(b))
            .find(|n| self.described.contains(*n))
            .or_else(|| cell.outputs.iter().flat_map(|&b| self.base_names(b)).next())
            .map(str::to_string)
    }

    /// The register bit (`name[i]`) a flop's output drives, preferring a
    /// register the unit description names.
    pub fn flop_bit(&self, cell: &Cell) -> Option<String> {
        let names = || {
            cell.outputs
                .iter()
                .flat_map(|b| self.bit_names.get(b).into_iter().flatten())
        };
        names()
            .find(|n| self.described.contains(n.split('[').next().unwrap_or(n)))
            .or_else(|| names().next())
            .cloned()
    }

    /// The input port bit that reaches a pin of every flip-flop directly:
    /// the clock. `None` without flops or without such a port.
    pub fn clock_port(&self) -> Option<String> {
        let flops: Vec<&Cell> = self.cells.iter().filter(|c| c.is_flop()).collect();
        if flops.is_empty() {
            return None;
        }
        self.input_ports
            .iter()
            .find(|(_, b)| flops.iter().all(|f| f.inputs.contains(b)))
            .map(|(n, _)| n.clone())
    }

    /// Combinational cells in topological order (drivers first).
    fn comb_topo(&self) -> Vec<usize> {
        let mut driver: HashMap<usize, usize> = HashMap::new();
        for (i, c) in self.cells.iter().enumerate() {
            if !c.is_flop() {
                for &b in &c.outputs {
                    driver.insert(b, i);
                }
            }
        }
        let n = self.cells.len();
        let mut indeg = vec![0usize; n];
        let mut succ: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (i, c) in self.cells.iter().enumerate() {
            if c.is_flop() {
                continue;
            }
            for b in &c.inputs {
                if let Some(&d) = driver.get(b) {
                    succ[d].push(i);
                    indeg[i] += 1;
                }
            }
        }
        let mut order: Vec<usize> = (0..n)
            .filter(|&i| !self.cells[i].is_flop() && indeg[i] == 0)
            .collect();
        let mut k = 0;
        while k < order.len() {
            let i = order[k];
            k += 1;
            for &s in &succ[i] {
                indeg[s] -= 1;
                if indeg[s] == 0 {
                    order.push(s);
                }
            }
        }
        order
    }

    /// Attribute every cell to labels. `flop_label` gives the label of a
    /// flip-flop (from its register name); `boundary` gives a label for a
    /// named net bit that ends a block (a kept wire), `port_label` one for an
    /// output port. A combinational cell gets the labels of everything its
    /// output reaches before a flop, a boundary or a port; its area is split
    /// evenly between them. Returns label -> (area, cells); cells reaching
    /// nothing go to `unattributed`.
    pub fn attribute<L: Ord + Clone>(
        &self,
        area: &dyn Fn(&Cell) -> f64,
        flop_label: &dyn Fn(Option<&str>) -> L,
        boundary: &dyn Fn(&str) -> Option<L>,
        port_label: &dyn Fn(&str) -> L,
        unattributed: L,
    ) -> BTreeMap<L, (f64, f64)> {
        let mut labels: Vec<L> = Vec::new();
        let intern = |s: L, labels: &mut Vec<L>| -> usize {
            if let Some(i) = labels.iter().position(|l| *l == s) {
                i
            } else {
                labels.push(s);
                labels.len() - 1
            }
        };
        // Per bit: consumers, boundary label, port label.
        let mut consumers: HashMap<usize, Vec<usize>> = HashMap::new();
        for (i, c) in self.cells.iter().enumerate() {
            for &b in &c.inputs {
                consumers.entry(b).or_default().push(i);
            }
        }
        let mut fixed: HashMap<usize, u128> = HashMap::new();
        for (&b, names) in &self.bit_names {
            for n in names {
                let base = n.split('[').next().unwrap_or(n);
                if let Some(l) = boundary(base) {
                    let id = intern(l, &mut labels);
                    *fixed.entry(b).or_default() |= 1u128 << id.min(127);
                    break;
                }
            }
        }
        let mut port_bits: HashMap<usize, u128> = HashMap::new();
        for (p, b) in &self.output_bits {
            let id = intern(port_label(p), &mut labels);
            *port_bits.entry(*b).or_default() |= 1u128 << id.min(127);
        }
        let mut cell_set = vec![0u128; self.cells.len()];
        let mut flop_names: Vec<Option<String>> = vec![None; self.cells.len()];
        for (i, c) in self.cells.iter().enumerate() {
            if c.is_flop() {
                flop_names[i] = self.flop_register(c);
                let id = intern(flop_label(flop_names[i].as_deref()), &mut labels);
                cell_set[i] = 1u128 << id.min(127);
            }
        }
        let order = self.comb_topo();
        for &i in order.iter().rev() {
            let mut set = 0u128;
            for &b in &self.cells[i].outputs {
                if let Some(&f) = fixed.get(&b) {
                    set |= f;
                    continue;
                }
                set |= port_bits.get(&b).copied().unwrap_or(0);
                for &c in consumers.get(&b).into_iter().flatten() {
                    set |= cell_set[c];
                }
            }
            cell_set[i] = set;
        }
        let mut out: BTreeMap<L, (f64, f64)> = BTreeMap::new();
        for (i, c) in self.cells.iter().enumerate() {
            let set = cell_set[i];
            let a = area(c);
            let n = set.count_ones();
            if n == 0 {
                let e = out.entry(unattributed.clone()).or_default();
                e.0 += a;
                e.1 += 1.0;
                continue;
            }
            for (id, l) in labels.iter().enumerate() {
                if set & (1u128 << id.min(127)) != 0 {
                    let e = out.entry(l.clone()).or_default();
                    e.0 += a / n as f64;
                    e.1 += 1.0 / n as f64;
                }
            }
        }
        out
    }

    /// Logic depth (cells on the longest combinational path) ending at each
    /// flop input and output port, grouped by `flop_label` / `port_label`:
    /// label -> (depth, start net, end net).
    pub fn depths<L: Ord + Clone>(
        &self,
        flop_label: &dyn Fn(Option<&str>) -> L,
        port_label: &dyn Fn(&str) -> L,
    ) -> BTreeMap<L, Depth> {
        let mut driver: HashMap<usize, usize> = HashMap::new();
        for (i, c) in self.cells.iter().enumerate() {
            for &b in &c.outputs {
                driver.insert(b, i);
            }
        }
        let n = self.cells.len();
        let mut level = vec![0u32; n];
        let mut from: Vec<Option<usize>> = vec![None; n];
        for &i in &self.comb_topo() {
            let mut best = (0u32, None);
            for b in &self.cells[i].inputs {
                if let Some(&d) = driver.get(b) {
                    if !self.cells[d].is_flop() && level[d] > best.0 {
                        best = (level[d], Some(d));
                    }
                }
            }
            level[i] = best.0 + 1;
            from[i] = best.1;
        }
        let start_name = |mut i: usize| -> String {
            while let Some(p) = from[i] {
                i = p;
            }
            // The start is an input of cell i that is a flop output or port.
            for b in &self.cells[i].inputs {
                let comb_driven = driver.get(b).is_some_and(|&d| !self.cells[d].is_flop());
                if !comb_driven {
                    if let Some(nm) = self.bit_names.get(b).and_then(|v| v.first()) {
                        return nm.clone();
                    }
                }
            }
            "?".to_string()
        };
        let mut out: BTreeMap<L, Depth> = BTreeMap::new();
        let mut visit = |label: L, b: usize, end: String| {
            let lv = driver
                .get(&b)
                .filter(|&&d| !self.cells[d].is_flop())
                .map(|&d| (level[d], d));
            let e = out.entry(label).or_default();
            if let Some((lv, d)) = lv {
                if lv > e.levels {
                    e.levels = lv;
                    e.start = start_name(d);
                    e.end = end;
                }
            }
        };
        for c in self.cells.iter().filter(|c| c.is_flop()) {
            let reg = self.flop_register(c);
            let label = flop_label(reg.as_deref());
            for &b in &c.inputs {
                visit(label.clone(), b, reg.clone().unwrap_or_default());
            }
        }
        for (p, b) in &self.output_bits {
            visit(port_label(p), *b, p.clone());
        }
        out
    }

    /// Number of flip-flop cells.
    pub fn flop_count(&self) -> usize {
        self.cells.iter().filter(|c| c.is_flop()).count()
    }
}

/// Longest combinational path to one group of endpoints.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Depth {
    pub levels: u32,
    pub start: String,
    pub end: String,
}

/// The registers of `unit` by name: every stage's data registers and the
/// pipeline control (valid flags, load enables).
fn described_registers(unit: &UnitDescription) -> HashSet<String> {
    unit.stages
        .iter()
        .flat_map(|s| &s.registers)
        .chain(&unit.control)
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flop(outputs: Vec<usize>) -> Cell {
        Cell {
            name: "ff_0".into(),
            kind: "DFF_X1".into(),
            inputs: vec![2],
            outputs,
        }
    }

    /// A flop whose output net has several names is named by the one the
    /// unit description lists, whatever its spelling; without one, by its
    /// first name.
    #[test]
    fn flops_are_named_by_their_described_register() {
        let mut nl = Netlist {
            described: ["s2_sum", "held", "s1_valid"]
                .map(String::from)
                .into_iter()
                .collect(),
            ..Netlist::default()
        };
        nl.bit_names
            .insert(5, vec!["out_data[3]".into(), "s2_sum[3]".into()]);
        nl.bit_names.insert(6, vec!["aux".into(), "held".into()]);
        nl.bit_names.insert(7, vec!["s9_wire".into(), "tmp".into()]);
        assert_eq!(nl.flop_register(&flop(vec![5])).as_deref(), Some("s2_sum"));
        assert_eq!(nl.flop_bit(&flop(vec![5])).as_deref(), Some("s2_sum[3]"));
        assert_eq!(nl.flop_register(&flop(vec![6])).as_deref(), Some("held"));
        assert_eq!(nl.flop_register(&flop(vec![7])).as_deref(), Some("s9_wire"));
        assert_eq!(nl.flop_register(&flop(vec![8])), None);
    }

    /// The described registers are the stages' registers and the control.
    #[test]
    fn described_registers_come_from_the_stages_and_control() {
        let unit = UnitDescription {
            module: "m".into(),
            latency: 1,
            ports: Vec::new(),
            control: vec!["s1_valid".into(), "s1_enable".into()],
            stages: vec![hdl::unit::StageDesc {
                stage: 1,
                title: "sum".into(),
                registers: vec!["s1_sum".into()],
            }],
            probes: Vec::new(),
        };
        let got = described_registers(&unit);
        let mut got: Vec<_> = got.into_iter().collect();
        got.sort();
        assert_eq!(got, ["s1_enable", "s1_sum", "s1_valid"]);
    }
}
