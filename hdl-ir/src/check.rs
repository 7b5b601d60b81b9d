//! Generation-time lint: undriven signals, unread bits, combinational loops.
//!
//! The rules mirror what `verilator --lint-only -Wall` reports as
//! UNDRIVEN, UNUSEDSIGNAL and UNOPTFLAT, so a module that passes
//! [`Module::check`] emits lint-clean Verilog. Loops are found at signal
//! granularity across the flattened hierarchy, which is stricter than
//! bit granularity: feed bits of a wire back into itself through a
//! separate wire instead.

use super::bits::Bits;
use super::error::{IrError, Problem};
use super::flat::Flat;
use super::module::{Driver, Module};
use super::signal::SignalKind;

impl Module {
    /// All problems found, in declaration order (empty when clean).
    pub fn problems(&self) -> Vec<Problem> {
        let mut problems = Vec::new();
        for (i, d) in self.decls.iter().enumerate() {
            if d.kind != SignalKind::Input && self.drivers[i].is_none() {
                problems.push(Problem::Undriven {
                    signal: d.name.to_string(),
                });
            }
        }
        let used = self.used_bits();
        for (d, u) in self.decls.iter().zip(&used) {
            let mut u = u.clone();
            for &(hi, lo) in &d.unused {
                u.set_range(hi, lo);
            }
            let ranges = u.not().set_ranges();
            if !ranges.is_empty() {
                problems.push(Problem::Unused {
                    signal: d.name.to_string(),
                    ranges,
                });
            }
        }
        if let Err(path) = Flat::build(self).comb_order() {
            problems.push(Problem::CombinationalLoop { path });
        }
        problems
    }

    /// `Ok(())` when [`problems`](Module::problems) is empty, otherwise
    /// [`IrError::Check`] listing them.
    pub fn check(&self) -> Result<(), IrError> {
        let problems = self.problems();
        if problems.is_empty() {
            Ok(())
        } else {
            Err(IrError::Check {
                module: self.name.clone(),
                problems,
            })
        }
    }

    /// Bits of each signal that something reads.
    pub(crate) fn used_bits(&self) -> Vec<Bits> {
        let mut used: Vec<Bits> = self.decls.iter().map(|d| Bits::zeros(d.width)).collect();
        let mark = |e: &super::expr::Expr, used: &mut Vec<Bits>| {
            e.visit_refs(&mut |s, hi, lo| used[s.index].set_range(hi, lo));
        };
        let mut any_reg = false;
        let mut any_reset = false;
        for (i, d) in self.decls.iter().enumerate() {
            if d.kind == SignalKind::Output {
                used[i].set_range(d.width - 1, 0);
            }
            if d.kind == SignalKind::Reg {
                any_reg = true;
                any_reset |= d.reset.is_some();
            }
            match &self.drivers[i] {
                Some(Driver::Assign(e)) => mark(e, &mut used),
                Some(Driver::Reg { next, enable }) => {
                    mark(next, &mut used);
                    if let Some(en) = enable {
                        mark(en, &mut used);
                    }
                }
                Some(Driver::Instance { .. }) | None => {}
            }
        }
        for inst in &self.instances {
            for (port, conn) in &inst.conns {
                if inst.module.decls[*port].kind == SignalKind::Input {
                    mark(conn, &mut used);
                }
            }
        }
        if let (true, Some(c)) = (any_reg, self.clock) {
            used[c].set_range(0, 0);
        }
        if let (true, Some(r)) = (any_reset, self.reset) {
            used[r].set_range(0, 0);
        }
        used
    }
}
