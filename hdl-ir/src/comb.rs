//! The combinational view of a pipelined unit's data path, for proving a
//! data-path mutant equivalent to the original (docs/hw/cosim.md, "Proving
//! a survivor equivalent").
//!
//! [`transparent`] turns every register into a wire driven by its next
//! value: the pipeline with every stage passing straight through. For a
//! *balanced* pipeline this view computes, for one input vector, what the
//! pipeline delivers for that vector some cycles later. [`data_path_scope`]
//! says when that argument holds for a mutation: it names the outputs the
//! mutation can reach and refuses the mutation when
//!
//! * it changes a register enable, or a signal any enable depends on (the
//!   schedule itself would change: control, not data);
//! * an output it reaches is not balanced: every signal in the output's
//!   cone must lie at one register depth, counted from the inputs through
//!   register next values (so each stage's registers hold values of one
//!   vector, never of two);
//! * two registers at the same depth of those cones load under different
//!   enables (a stage's registers move together);
//! * the cone has a loop through registers (a register that holds or
//!   counts) or an instance.
//!
//! Under these conditions the control of the original and the mutant is
//! identical cycle by cycle, and every reached output, whenever it is
//! valid, equals the view's output for the vector it carries. So the
//! mutant is equivalent exactly when the two views are combinationally
//! equivalent on the reached outputs, and a distinguishing input of the
//! views is a vector that kills the mutant.

use std::collections::BTreeSet;

use crate::bits::Bits;
use crate::error::IrError;
use crate::expr::Expr;
use crate::module::{Decl, Driver, Module};
use crate::mutate::{Mutation, Site};
use crate::signal::SignalKind;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Depth {
    /// Constants only: fits any depth.
    Free,
    At(u32),
    /// Reads two depths, or lies on a loop, or comes from an instance.
    Mixed,
}

fn meet(a: Depth, b: Depth) -> Depth {
    match (a, b) {
        (Depth::Free, x) | (x, Depth::Free) => x,
        (Depth::At(x), Depth::At(y)) if x == y => a,
        _ => Depth::Mixed,
    }
}

fn value_expr(d: &Option<Driver>) -> Option<&Expr> {
    match d {
        Some(Driver::Assign(e)) | Some(Driver::Reg { next: e, .. }) => Some(e),
        _ => None,
    }
}

fn refs_of(e: &Expr) -> Vec<usize> {
    let mut v = Vec::new();
    e.visit_refs(&mut |s, _, _| v.push(s.index));
    v
}

/// Register depth of every signal (inputs 0; a register one more than what
/// its next value reads; a cut register fits any depth: it holds one value
/// while a vector flows through).
fn depths(m: &Module, cuts: &BTreeSet<usize>) -> Vec<Depth> {
    let n = m.decls.len();
    let mut memo: Vec<Option<Depth>> = vec![None; n];
    let mut on_stack = vec![false; n];
    // explicit stack: (signal, whether its reads were pushed)
    for root in 0..n {
        if memo[root].is_some() {
            continue;
        }
        let mut stack = vec![(root, false)];
        while let Some((i, expanded)) = stack.pop() {
            if expanded {
                on_stack[i] = false;
            }
            if memo[i].is_some() {
                continue;
            }
            if cuts.contains(&i) {
                memo[i] = Some(Depth::Free);
                continue;
            }
            let reads = match (&m.decls[i].kind, &m.drivers[i]) {
                (SignalKind::Input, _) => {
                    memo[i] = Some(Depth::At(0));
                    continue;
                }
                (_, Some(Driver::Instance { .. })) | (_, None) => {
                    memo[i] = Some(Depth::Mixed);
                    continue;
                }
                (_, d) => value_expr(d).map(refs_of).unwrap_or_default(),
            };
            if !expanded {
                if on_stack[i] {
                    // a loop (through registers: combinational loops are
                    // refused when the module is checked)
                    memo[i] = Some(Depth::Mixed);
                    continue;
                }
                on_stack[i] = true;
                stack.push((i, true));
                stack.extend(
                    reads
                        .into_iter()
                        .filter(|&r| memo[r].is_none())
                        .map(|r| (r, false)),
                );
                continue;
            }
            let d = reads.iter().fold(Depth::Free, |acc, &r| {
                meet(acc, memo[r].unwrap_or(Depth::Mixed))
            });
            let d = match (&m.decls[i].kind, d) {
                (SignalKind::Reg, Depth::At(k)) => Depth::At(k + 1),
                (_, d) => d,
            };
            memo[i] = Some(d);
        }
    }
    memo.into_iter()
        .map(|d| d.unwrap_or(Depth::Mixed))
        .collect()
}

/// Signals read, through values and register next values, by `from`
/// (included).
fn cone(m: &Module, from: &[usize], with_enables: bool) -> BTreeSet<usize> {
    cone_cut(m, from, with_enables, &BTreeSet::new())
}

/// [`cone`], not entering the cut registers (they are in it, what they
/// read is not, unless another path reads it).
fn cone_cut(
    m: &Module,
    from: &[usize],
    with_enables: bool,
    cuts: &BTreeSet<usize>,
) -> BTreeSet<usize> {
    let mut seen = BTreeSet::new();
    let mut todo: Vec<usize> = from.to_vec();
    while let Some(i) = todo.pop() {
        if !seen.insert(i) {
            continue;
        }
        if cuts.contains(&i) {
            continue;
        }
        if let Some(e) = value_expr(&m.drivers[i]) {
            todo.extend(refs_of(e));
        }
        if with_enables {
            if let Some(Driver::Reg {
                enable: Some(en), ..
            }) = &m.drivers[i]
            {
                todo.extend(refs_of(en));
            }
        }
    }
    seen
}

fn name(d: &Decl) -> String {
    d.name.to_string()
}

/// Every output whose cone, through values, register next values and
/// enables, holds the signal mutation `mu` changes: the only outputs the
/// mutant can change, whatever the mutation.
pub fn reached_outputs(m: &Module, mu: &Mutation) -> Vec<String> {
    (0..m.decls.len())
        .filter(|&o| m.decls[o].kind == SignalKind::Output)
        .filter(|&o| cone(m, &[o], true).contains(&mu.index))
        .map(|o| name(&m.decls[o]))
        .collect()
}

/// The outputs mutation `mu` of `m` can reach, when its equivalence can be
/// decided on the [`transparent`] view; otherwise why not.
pub fn data_path_scope(m: &Module, mu: &Mutation) -> Result<Vec<String>, String> {
    data_path_scope_cut(m, mu, &[])
}

/// The indices of the registers named in `cuts`, or the first name that is
/// not a register of `m`.
fn cut_indices(m: &Module, cuts: &[String]) -> Result<BTreeSet<usize>, String> {
    cuts.iter()
        .map(|c| {
            m.decls
                .iter()
                .position(|d| *d.name == **c && d.kind == SignalKind::Reg)
                .ok_or_else(|| c.clone())
        })
        .collect()
}

/// [`data_path_scope`] for the view of [`transparent_cut`], where the
/// registers `cuts` are free inputs: registers that every register reading
/// them samples only while no vector is in flight (the shadow
/// configuration of a unit with programmable slots, which its active
/// copies load between blocks), so every vector sees one value of each
/// from its first stage to its last. They and what reads only them fit
/// any depth, their own drivers are not part of the argument, and a
/// mutation in their cone (what they load, and when) is refused: it
/// changes what the cut registers hold.
pub fn data_path_scope_cut(
    m: &Module,
    mu: &Mutation,
    cuts: &[String],
) -> Result<Vec<String>, String> {
    let cuts = cut_indices(m, cuts).map_err(|c| format!("`{c}` is not a register"))?;
    if !cuts.is_empty() {
        let cut_list: Vec<usize> = cuts.iter().copied().collect();
        let feeding = cone(m, &cut_list, true);
        if feeding.contains(&mu.index) {
            return Err(format!(
                "`{}` feeds the configuration registers the view takes as inputs (sequential)",
                mu.signal
            ));
        }
    }
    match mu.site {
        Site::Enable => return Err("it changes a register enable (control)".into()),
        Site::Reset => return Err("it changes a reset value (sequential)".into()),
        Site::Value => {}
    }
    let enables: Vec<usize> = m
        .drivers
        .iter()
        .filter_map(|d| match d {
            Some(Driver::Reg {
                enable: Some(en), ..
            }) => Some(refs_of(en)),
            _ => None,
        })
        .flatten()
        .collect();
    if cone_cut(m, &enables, true, &cuts).contains(&mu.index) {
        return Err(format!("`{}` feeds a register enable (control)", mu.signal));
    }
    let outputs: Vec<usize> = (0..m.decls.len())
        .filter(|&i| m.decls[i].kind == SignalKind::Output)
        .collect();
    let reached: Vec<usize> = outputs
        .iter()
        .copied()
        .filter(|&o| cone_cut(m, &[o], false, &cuts).contains(&mu.index))
        .collect();
    if reached.is_empty() {
        return Err(format!("`{}` reaches no output", mu.signal));
    }
    let depth = depths(m, &cuts);
    let mut stage_enable: Vec<(u32, Option<&Expr>)> = Vec::new();
    for &o in &reached {
        for i in cone_cut(m, &[o], false, &cuts) {
            if cuts.contains(&i) {
                continue;
            }
            if depth[i] == Depth::Mixed {
                return Err(format!(
                    "output `{}` reads `{}`, which mixes pipeline depths or lies on a loop",
                    name(&m.decls[o]),
                    name(&m.decls[i])
                ));
            }
            if let (Depth::At(k), Some(Driver::Reg { enable, .. })) = (depth[i], &m.drivers[i]) {
                match stage_enable.iter().find(|(d, _)| *d == k) {
                    Some((_, e)) if *e != enable.as_ref() => {
                        return Err(format!(
                            "registers at depth {k} (`{}` among them) load under different enables",
                            name(&m.decls[i])
                        ))
                    }
                    Some(_) => {}
                    None => stage_enable.push((k, enable.as_ref())),
                }
            }
        }
    }
    Ok(reached.into_iter().map(|o| name(&m.decls[o])).collect())
}

/// The registers of `m` that lie on a loop through registers or read
/// several pipeline depths (with the registers `cuts` fitting any depth):
/// no output [`data_path_scope_cut`] accepts reads them, and a view
/// ([`transparent_cut`]) takes them as inputs rather than as wires (a
/// register that holds its own value would be a combinational loop).
pub fn mixed_registers(m: &Module, cuts: &[String]) -> Vec<String> {
    let cut_set = cut_indices(m, cuts).unwrap_or_default();
    let depth = depths(m, &cut_set);
    (0..m.decls.len())
        .filter(|&i| {
            m.decls[i].kind == SignalKind::Reg && !cut_set.contains(&i) && depth[i] == Depth::Mixed
        })
        .map(|i| name(&m.decls[i]))
        .collect()
}

/// What a mutation of `mu`'s signal reaches before the next registers:
/// the registers whose next value or enable reads it through wires only,
/// and the outputs it drives through wires only (names, from `m`).
pub fn first_registers(m: &Module, mu: &Mutation) -> (Vec<String>, Vec<String>) {
    let n = m.decls.len();
    let mut through = vec![false; n];
    // a mutated register changes its next value: what reads its output
    // reads the state, which the view takes as an input
    through[mu.index] = m.decls[mu.index].kind != SignalKind::Reg;
    // wires in declaration order may read later ones: iterate to a fixpoint
    loop {
        let mut grew = false;
        for i in 0..n {
            if through[i] || m.decls[i].kind == SignalKind::Reg {
                continue;
            }
            if let Some(Driver::Assign(e)) = &m.drivers[i] {
                if refs_of(e).iter().any(|&r| through[r]) {
                    through[i] = true;
                    grew = true;
                }
            }
        }
        if !grew {
            break;
        }
    }
    let mut regs = Vec::new();
    for i in 0..n {
        if let Some(Driver::Reg { next, enable }) = &m.drivers[i] {
            let reads = refs_of(next).iter().any(|&r| through[r] && r != i)
                || enable
                    .as_ref()
                    .is_some_and(|e| refs_of(e).iter().any(|&r| through[r] && r != i));
            if reads || i == mu.index {
                regs.push(name(&m.decls[i]));
            }
        }
    }
    let outputs = (0..n)
        .filter(|&i| through[i] && m.decls[i].kind == SignalKind::Output)
        .map(|i| name(&m.decls[i]))
        .collect();
    (regs, outputs)
}

/// The one-step view of `m` for the registers `regs` and outputs `outputs`
/// ([`first_registers`] of a mutation, taken from the unit as generated):
/// every register an input; as outputs, `outputs` and, per register of
/// `regs`, its next value (`view_next_<reg>`) and its enable
/// (`view_enable_<reg>`, when it has one), each forced to zero where
/// `assume` is false. When the views of the unit and of a value mutant
/// are equivalent, the mutant's registers load what the unit's load from
/// every state and input, and its outputs are the unit's: no run tells
/// them apart (under the assumption). A difference proves nothing (the
/// state may be unreachable).
pub fn next_state_view(
    m: &Module,
    regs: &[String],
    outputs: &[String],
    assume: Option<Assume<'_>>,
) -> Result<Module, IrError> {
    let mut out = m.clone();
    let mut nexts = Vec::new();
    for r in regs {
        let i = m
            .decls
            .iter()
            .position(|d| *d.name == **r && d.kind == SignalKind::Reg)
            .ok_or_else(|| IrError::Mutation {
                detail: format!("`{r}` is not a register of `{}`", m.name),
            })?;
        if let Some(Driver::Reg { next, enable }) = &m.drivers[i] {
            nexts.push((r.clone(), next.clone(), enable.clone()));
        }
    }
    for i in 0..out.decls.len() {
        match out.decls[i].kind {
            SignalKind::Reg => {
                out.decls[i].kind = SignalKind::Input;
                out.decls[i].reset = None;
                out.drivers[i] = None;
            }
            SignalKind::Output if !outputs.iter().any(|o| **o == *out.decls[i].name) => {
                out.decls[i].kind = SignalKind::Wire;
            }
            _ => {}
        }
    }
    for (r, next, enable) in nexts {
        let s = out.output(&format!("view_next_{r}"), next.width())?;
        out.assign(&s, next)?;
        if let Some(en) = enable {
            let s = out.output(&format!("view_enable_{r}"), en.width())?;
            out.assign(&s, en)?;
        }
    }
    for d in out.decls.iter_mut() {
        if d.kind != SignalKind::Output {
            d.unused = vec![(d.width - 1, 0)];
        }
    }
    if let Some(assume) = assume {
        gate_outputs(&mut out, assume)?;
    }
    Ok(out)
}

/// Every output of `out` forced to zero where `assume` is false.
fn gate_outputs(out: &mut Module, assume: Assume<'_>) -> Result<(), IrError> {
    let first = out.decls.len();
    let value = assume(out)?;
    if value.width() != 1 {
        return Err(IrError::Mutation {
            detail: format!("an assumption of a view is 1 bit, not {}", value.width()),
        });
    }
    let w = out.wire(ASSUMPTION_WIRE, 1)?;
    out.assign(&w, value)?;
    let holds = w.expr();
    for d in &mut out.decls[first..] {
        d.unused = vec![(d.width - 1, 0)];
    }
    for i in 0..out.decls.len() {
        if out.decls[i].kind != SignalKind::Output {
            continue;
        }
        out.drivers[i] = match out.drivers[i].take() {
            Some(Driver::Assign(e)) => {
                let zero = Expr::zero(e.width())?;
                Some(Driver::Assign(Expr::mux(&holds, &e, &zero)?))
            }
            other => other,
        };
    }
    Ok(())
}

/// `m` with every register turned into a wire driven by its next value
/// (enables and reset values dropped) and only `outputs` left as outputs
/// (the others become wires). The clock and reset stay as inputs; every
/// signal is exempt from the unused-bit check.
pub fn transparent(m: &Module, outputs: &[String]) -> Result<Module, IrError> {
    transparent_cut(m, outputs, &[], None)
}

/// An assumption of a view: a 1-bit expression built on the view's signals
/// (the cut registers are its inputs by then). It may declare wires of its
/// own in the view (for terms it reads more than once, so that the view
/// stays linear in their number); they are exempt from the unused-bit
/// check, as every signal of a view.
pub type Assume<'a> = &'a dyn Fn(&mut Module) -> Result<Expr, IrError>;

/// The wire of a view that holds its assumption.
pub const ASSUMPTION_WIRE: &str = "view_assumption";

/// [`transparent`] with the registers `cuts` turned into inputs of the view
/// (see [`data_path_scope_cut`]) and, with `assume`, every kept output
/// forced to zero where the assumption is false: two such views are
/// equivalent exactly when the units agree on every input where the
/// assumption holds (for the slot units: every valid configuration).
pub fn transparent_cut(
    m: &Module,
    outputs: &[String],
    cuts: &[String],
    assume: Option<Assume<'_>>,
) -> Result<Module, IrError> {
    let cut_set = cut_indices(m, cuts).map_err(|c| IrError::Mutation {
        detail: format!("`{c}` is not a register of `{}`", m.name),
    })?;
    let mut out = m.clone();
    for o in outputs {
        match m.signal(o) {
            Some(s) if m.decls[s.index].kind == SignalKind::Output => {}
            _ => {
                return Err(IrError::Mutation {
                    detail: format!("`{o}` is not an output of `{}`", m.name),
                })
            }
        }
    }
    for i in 0..out.decls.len() {
        match out.decls[i].kind {
            SignalKind::Reg if cut_set.contains(&i) => {
                out.decls[i].kind = SignalKind::Input;
                out.decls[i].reset = None;
                out.drivers[i] = None;
            }
            SignalKind::Reg => {
                out.decls[i].kind = SignalKind::Wire;
                out.decls[i].reset = None;
                if let Some(Driver::Reg { next, .. }) = out.drivers[i].take() {
                    out.drivers[i] = Some(Driver::Assign(next));
                }
            }
            SignalKind::Output if !outputs.iter().any(|o| **o == *out.decls[i].name) => {
                out.decls[i].kind = SignalKind::Wire;
            }
            _ => {}
        }
    }
    // the clock, the reset, the enables' inputs and what only the dropped
    // outputs or the mutated node read are left unread: the view is an
    // input to the equivalence checker, not a design, so no signal must be
    // read in full
    for d in out.decls.iter_mut() {
        if d.kind != SignalKind::Output {
            d.unused = vec![(d.width - 1, 0)];
        }
    }
    if let Some(assume) = assume {
        gate_outputs(&mut out, assume)?;
    }
    Ok(out)
}

/// View `m` with the inputs of `values` fixed to those constants (they
/// become wires): the equivalence checker then compares the view only at
/// those values, a much smaller problem where they are the settings of a
/// wide multiplexer or network (a unit's configuration). An error names
/// a value that is not an input of `m` or whose width differs.
pub fn pin_inputs(
    m: &Module,
    values: &std::collections::BTreeMap<String, Bits>,
) -> Result<Module, IrError> {
    let mut out = m.clone();
    for (name, v) in values {
        let s = m.signal(name).ok_or_else(|| IrError::Mutation {
            detail: format!("`{name}` is not a signal of `{}`", m.name),
        })?;
        let d = &mut out.decls[s.index];
        if d.kind != SignalKind::Input {
            return Err(IrError::Mutation {
                detail: format!("`{name}` is not an input of `{}`", m.name),
            });
        }
        if v.width() != d.width {
            return Err(IrError::Mutation {
                detail: format!("`{name}` has {} bits, not {}", d.width, v.width()),
            });
        }
        d.kind = SignalKind::Wire;
        d.unused = vec![(d.width - 1, 0)];
        out.drivers[s.index] = Some(Driver::Assign(Expr::bits(v.clone())));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::Sim;
    use crate::mutate::enumerate;
    use crate::signal::Reset;

    /// A configuration register pair (`shadow` written from `w` under `we`,
    /// `active` loading it under `load`) and a one-stage data path
    /// `y = s1`, `s1 = a + active` under `en`.
    fn configured() -> Result<Module, IrError> {
        let mut m = Module::new("configured")?;
        m.clock("clk")?;
        let a = m.input("a", 4)?;
        let w = m.input("w", 4)?;
        let we = m.input("we", 1)?;
        let load = m.input("load", 1)?;
        let en = m.input("en", 1)?;
        let y = m.output("y", 4)?;
        let shadow = m.reg("shadow", 4, Reset::None)?;
        m.reg_next(&shadow, w.expr(), Some(we.expr()))?;
        let active = m.reg("active", 4, Reset::None)?;
        m.reg_next(&active, shadow.expr(), Some(load.expr()))?;
        let s1 = m.reg("s1", 4, Reset::None)?;
        m.reg_next(&s1, a.expr().add(&active.expr())?, Some(en.expr()))?;
        m.assign(&y, s1.expr())?;
        Ok(m)
    }

    #[test]
    fn cut_registers_are_inputs_of_the_view_under_an_assumption() -> Result<(), IrError> {
        let m = configured()?;
        let muts = enumerate(&m);
        let add = muts
            .iter()
            .find(|mu| mu.signal == "s1" && mu.op.family() == "swap")
            .expect("a swap of the adder");
        // the active register loads under another enable than the stage:
        // refused without the cut, accepted with the shadow cut
        assert!(data_path_scope(&m, add).is_err());
        let cuts = vec!["shadow".to_string()];
        assert_eq!(
            data_path_scope_cut(&m, add, &cuts),
            Ok(vec!["y".to_string()])
        );
        // a mutation of what the shadow loads is refused
        let write = muts
            .iter()
            .find(|mu| mu.signal == "shadow" && mu.site == crate::mutate::Site::Value);
        if let Some(write) = write {
            assert!(data_path_scope_cut(&m, write, &cuts).is_err());
        }
        assert!(data_path_scope_cut(&m, add, &["y".to_string()]).is_err());
        // the view: y = a + shadow, zero where shadow is 3
        let not3 = |v: &mut Module| -> Result<Expr, IrError> {
            let s = v.signal("shadow").ok_or(IrError::Mutation {
                detail: "no shadow".to_string(),
            })?;
            s.expr().cmp_ne(&Expr::constant(3, 4)?)
        };
        let view = transparent_cut(&m, &["y".to_string()], &cuts, Some(&not3))?;
        // pinned at shadow 5: y = a + 5, and `shadow` is no input any more
        let mut pins = std::collections::BTreeMap::new();
        pins.insert("shadow".to_string(), Bits::from_u128(5, 4)?);
        let pinned = pin_inputs(&view, &pins)?;
        assert!(pin_inputs(&view, &{
            let mut p = pins.clone();
            p.insert("y".to_string(), Bits::from_u128(1, 4)?);
            p
        })
        .is_err());
        assert!(!pinned.ports().iter().any(|p| &*p.name == "shadow"));
        let mut ps = Sim::new(&pinned)?;
        for a in [0u128, 6, 15] {
            ps.set_u128("a", a)?;
            assert_eq!(ps.get_u128("y")?, (a + 5) & 15);
        }
        let mut sim = Sim::new(&view)?;
        for (a, s) in [(1u128, 2u128), (7, 9), (5, 3)] {
            sim.set_u128("a", a)?;
            sim.set_u128("shadow", s)?;
            let want = if s == 3 { 0 } else { (a + s) & 15 };
            assert_eq!(sim.get_u128("y")?, want, "a {a} shadow {s}");
        }
        // the one-step view: every register an input, s1's next value out
        let (regs, outs) = first_registers(&m, add);
        assert_eq!(regs, vec!["s1".to_string()]);
        assert!(outs.is_empty());
        let step = next_state_view(&m, &regs, &outs, None)?;
        let mut sim = Sim::new(&step)?;
        sim.set_u128("a", 6)?;
        sim.set_u128("active", 5)?;
        sim.set_u128("en", 1)?;
        assert_eq!(sim.get_u128("view_next_s1")?, 11);
        assert_eq!(sim.get_u128("view_enable_s1")?, 1);
        assert_eq!(mixed_registers(&m, &cuts), Vec::<String>::new());
        Ok(())
    }
}
