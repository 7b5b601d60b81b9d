//! A small cycle-based evaluator of the IR, for unit tests without a
//! Verilog simulator.
//!
//! The hierarchy is flattened; combinational signals are evaluated in
//! dependency order; [`Sim::step`] models one rising edge of the (single)
//! clock for every register at every level. Inputs and registers start at
//! zero (real hardware powers up unknown: reset what must be reset).

use std::collections::HashMap;

use super::bits::Bits;
use super::error::{brief, IrError, Problem};
use super::expr::{fold_binary, fold_reduce, Expr, ExprKind};
use super::flat::{Flat, FlatDriver};
use super::module::Module;

/// Evaluates an expression given the values of all (flat) signals.
pub(crate) fn eval(e: &Expr, vals: &[Bits]) -> Bits {
    match &e.kind {
        ExprKind::Const(b) => b.clone(),
        ExprKind::Ref(s) => vals[s.index].clone(),
        ExprKind::Slice { arg, hi, lo } => match &arg.kind {
            ExprKind::Ref(s) => vals[s.index].slice(*hi, *lo),
            _ => eval(arg, vals).slice(*hi, *lo),
        },
        ExprKind::Concat(parts) => {
            let v: Vec<Bits> = parts.iter().map(|p| eval(p, vals)).collect();
            Bits::concat(&v)
        }
        ExprKind::Repeat { arg, count } => eval(arg, vals).repeat(*count),
        ExprKind::Not(a) => eval(a, vals).not(),
        ExprKind::Binary { op, lhs, rhs } => fold_binary(*op, &eval(lhs, vals), &eval(rhs, vals)),
        ExprKind::Reduce { op, arg } => fold_reduce(*op, &eval(arg, vals)),
        ExprKind::Mux { cond, then, els } => {
            if eval(cond, vals).bit(0) {
                eval(then, vals)
            } else {
                eval(els, vals)
            }
        }
    }
}

/// Simulation state of a module hierarchy.
#[derive(Debug, Clone)]
pub struct Sim {
    flat: Flat,
    values: Vec<Bits>,
    order: Vec<usize>,
    by_name: HashMap<String, usize>,
    dirty: bool,
    cycles: u64,
}

impl Sim {
    /// Prepares `top` (and its instances) for evaluation. Fails with
    /// [`IrError::Check`] if a signal is undriven or there is a
    /// combinational loop; unread bits are fine here.
    pub fn new(top: &Module) -> Result<Sim, IrError> {
        let flat = Flat::build(top);
        let mut problems: Vec<Problem> = flat
            .sigs
            .iter()
            .filter(|s| {
                matches!(
                    s.driver,
                    FlatDriver::Undriven | FlatDriver::Reg { next: None, .. }
                )
            })
            .map(|s| Problem::Undriven {
                signal: s.name.to_string(),
            })
            .collect();
        let order = match flat.comb_order() {
            Ok(o) => o,
            Err(path) => {
                problems.push(Problem::CombinationalLoop { path });
                Vec::new()
            }
        };
        if !problems.is_empty() {
            return Err(IrError::Check {
                module: top.name().to_string(),
                problems,
            });
        }
        let values = flat.sigs.iter().map(|s| Bits::zeros(s.width)).collect();
        let by_name = flat
            .sigs
            .iter()
            .enumerate()
            .map(|(i, s)| (s.name.to_string(), i))
            .collect();
        Ok(Sim {
            flat,
            values,
            order,
            by_name,
            dirty: true,
            cycles: 0,
        })
    }

    fn lookup(&self, name: &str) -> Result<usize, IrError> {
        self.by_name
            .get(name)
            .copied()
            .ok_or_else(|| IrError::UnknownSignal {
                name: name.to_string(),
            })
    }

    /// Sets a top-level input.
    pub fn set(&mut self, name: &str, value: &Bits) -> Result<(), IrError> {
        let i = self.lookup(name)?;
        let s = &self.flat.sigs[i];
        if !matches!(s.driver, FlatDriver::Input) {
            return Err(IrError::NotAnInput {
                name: name.to_string(),
            });
        }
        if s.width != value.width() {
            return Err(IrError::WidthMismatch {
                context: "Sim::set".to_string(),
                left: name.to_string(),
                left_width: s.width,
                right: brief(value),
                right_width: value.width(),
            });
        }
        self.values[i] = value.clone();
        self.dirty = true;
        Ok(())
    }

    /// Sets a top-level input from an integer (which must fit its width).
    pub fn set_u128(&mut self, name: &str, value: u128) -> Result<(), IrError> {
        let i = self.lookup(name)?;
        let b = Bits::from_u128(value, self.flat.sigs[i].width)?;
        self.set(name, &b)
    }

    /// The current value of any signal, by hierarchical name
    /// (`sum`, `u_add.sum`), after settling combinational logic.
    pub fn get(&mut self, name: &str) -> Result<Bits, IrError> {
        let i = self.lookup(name)?;
        self.settle();
        Ok(self.values[i].clone())
    }

    /// [`get`](Sim::get) as an integer; an error for signals wider than 128
    /// bits.
    pub fn get_u128(&mut self, name: &str) -> Result<u128, IrError> {
        let b = self.get(name)?;
        match b.to_u128() {
            Some(v) if b.width() <= 128 => Ok(v),
            _ => Err(IrError::ValueTooWide {
                name: name.to_string(),
                width: b.width(),
                target: "u128",
            }),
        }
    }

    /// One rising clock edge: every register loads its reset value (reset
    /// high), its next value (enable high or absent), or keeps its value.
    pub fn step(&mut self) {
        self.settle();
        let mut updates = Vec::new();
        for (i, s) in self.flat.sigs.iter().enumerate() {
            if let FlatDriver::Reg {
                next: Some(next),
                enable,
                reset,
            } = &s.driver
            {
                if let Some((r, v)) = reset {
                    if self.values[*r].bit(0) {
                        updates.push((i, v.clone()));
                        continue;
                    }
                }
                let en = match enable {
                    None => true,
                    Some(e) => eval(e, &self.values).bit(0),
                };
                if en {
                    updates.push((i, eval(next, &self.values)));
                }
            }
        }
        for (i, v) in updates {
            self.values[i] = v;
        }
        self.cycles += 1;
        self.dirty = true;
        self.settle();
    }

    /// Rising edges so far.
    pub fn cycles(&self) -> u64 {
        self.cycles
    }

    /// All hierarchical signal names, in flattening order.
    pub fn signal_names(&self) -> Vec<&str> {
        self.flat.sigs.iter().map(|s| &*s.name).collect()
    }

    fn settle(&mut self) {
        if !self.dirty {
            return;
        }
        for &i in &self.order {
            if let FlatDriver::Comb(e) = &self.flat.sigs[i].driver {
                self.values[i] = eval(e, &self.values);
            }
        }
        self.dirty = false;
    }
}
