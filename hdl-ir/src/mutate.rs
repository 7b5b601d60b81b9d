//! Single mutations of a module, for mutation testing of the testbenches
//! (docs/hw/cosim.md, "Mutation testing").
//!
//! [`enumerate`] lists every place one of the [`Operator`]s applies:
//! every node of every driver's expression and every register enable.
//! [`apply`] returns a copy of the module with one mutation in it;
//! [`schema`] returns one module that holds many mutations at once, each
//! behind a comparison with a new input (`mutant == k` selects mutation
//! `k`, 1-based; 0 is the original unit), so that one simulator build
//! serves a whole batch of mutants.
//!
//! A mutation is named by the signal whose driver it changes, the path from
//! the root of that driver's expression to the node (child indices), and
//! the operator. Mutated nodes are built directly, without the constant
//! folding of the [`Expr`] constructors, so a mutant is never folded back
//! into the original.

use std::sync::Arc;

use crate::bits::Bits;
use crate::error::IrError;
use crate::expr::{BinOp, Expr, ExprKind, ReduceOp};
use crate::module::{Driver, Module};

/// What a mutation does to its node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Operator {
    /// One binary operator for another of the same result width: `&`, `|`
    /// and `^` among themselves, `+` and `-`.
    Swap { from: BinOp, to: BinOp },
    /// A comparison moved across its boundary or negated: `<` and `<=`,
    /// `>` and `>=`, `==` and `!=`.
    Boundary { from: BinOp, to: BinOp },
    /// One operand of `&`, `|` or `^` replaced by the identity of the
    /// operator (all ones for `&`, zero otherwise): the term is dropped.
    DropTerm { rhs: bool },
    /// A constant operand one more (`up`) or one less, modulo its width.
    Constant { up: bool },
    /// A part select moved one bit up or down: `x[h:l]` to `x[h+1:l+1]`.
    ShiftSelect { up: bool },
    /// The two arms of `c ? a : b` swapped.
    SwapArms,
    /// `~x` replaced by `x`.
    DropNot,
    /// `&x` and `|x` swapped.
    SwapReduce,
    /// A register's enable tied high (loads every cycle).
    EnableHigh,
    /// A register's reset value inverted (every bit).
    ResetValue,
}

impl Operator {
    /// A short name for reports (`swap`, `boundary`, ...).
    pub fn family(self) -> &'static str {
        match self {
            Operator::Swap { .. } => "swap",
            Operator::Boundary { .. } => "boundary",
            Operator::DropTerm { .. } => "drop-term",
            Operator::Constant { .. } => "constant",
            Operator::ShiftSelect { .. } => "shift-select",
            Operator::SwapArms => "swap-arms",
            Operator::DropNot => "drop-not",
            Operator::SwapReduce => "swap-reduce",
            Operator::EnableHigh => "enable-high",
            Operator::ResetValue => "reset-value",
        }
    }

    /// Every family, in report order.
    pub const FAMILIES: [&'static str; 10] = [
        "swap",
        "boundary",
        "drop-term",
        "constant",
        "shift-select",
        "swap-arms",
        "drop-not",
        "swap-reduce",
        "enable-high",
        "reset-value",
    ];
}

/// Where in a driver a mutation applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Site {
    /// The value expression (`assign` or a register's next value).
    Value,
    /// A register's enable expression.
    Enable,
    /// A register's reset value.
    Reset,
}

/// One single mutation of a module.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Mutation {
    /// Position in [`enumerate`]'s list (stable while the module is).
    pub id: usize,
    /// The signal whose driver changes.
    pub signal: String,
    /// Declaration index of that signal.
    pub(crate) index: usize,
    pub site: Site,
    /// Child indices from the root of the expression to the node.
    pub path: Vec<u16>,
    pub op: Operator,
    /// The title of the section the signal is declared in (for pipelines:
    /// the stage), if any.
    pub section: Option<String>,
    /// The node before and after, as Verilog (shortened).
    pub text: String,
}

/// The children of a node, in path order.
fn children(e: &Expr) -> Vec<&Expr> {
    match &e.kind {
        ExprKind::Const(_) | ExprKind::Ref(_) => Vec::new(),
        ExprKind::Slice { arg, .. }
        | ExprKind::Repeat { arg, .. }
        | ExprKind::Not(arg)
        | ExprKind::Reduce { arg, .. } => vec![arg],
        ExprKind::Concat(parts) => parts.iter().collect(),
        ExprKind::Binary { lhs, rhs, .. } => vec![lhs, rhs],
        ExprKind::Mux { cond, then, els } => vec![cond, then, els],
    }
}

/// A node with its children replaced (same kind, same width).
fn with_children(e: &Expr, kids: Vec<Expr>) -> Expr {
    let mut k = kids.into_iter();
    let mut next = || Arc::new(k.next().unwrap_or_else(|| Expr::bool(false)));
    let kind = match &e.kind {
        ExprKind::Const(_) | ExprKind::Ref(_) => e.kind.clone(),
        ExprKind::Slice { hi, lo, .. } => ExprKind::Slice {
            arg: next(),
            hi: *hi,
            lo: *lo,
        },
        ExprKind::Repeat { count, .. } => ExprKind::Repeat {
            arg: next(),
            count: *count,
        },
        ExprKind::Not(_) => ExprKind::Not(next()),
        ExprKind::Reduce { op, .. } => ExprKind::Reduce {
            op: *op,
            arg: next(),
        },
        ExprKind::Concat(parts) => {
            ExprKind::Concat((0..parts.len()).map(|_| next().as_ref().clone()).collect())
        }
        ExprKind::Binary { op, .. } => ExprKind::Binary {
            op: *op,
            lhs: next(),
            rhs: next(),
        },
        ExprKind::Mux { .. } => ExprKind::Mux {
            cond: next(),
            then: next(),
            els: next(),
        },
    };
    Expr {
        width: e.width,
        kind,
    }
}

fn swaps(op: BinOp) -> &'static [BinOp] {
    match op {
        BinOp::And => &[BinOp::Or, BinOp::Xor],
        BinOp::Or => &[BinOp::And, BinOp::Xor],
        BinOp::Xor => &[BinOp::Or, BinOp::And],
        BinOp::Add => &[BinOp::Sub],
        BinOp::Sub => &[BinOp::Add],
        _ => &[],
    }
}

fn boundary(op: BinOp) -> Option<BinOp> {
    match op {
        BinOp::Lt => Some(BinOp::Le),
        BinOp::Le => Some(BinOp::Lt),
        BinOp::Gt => Some(BinOp::Ge),
        BinOp::Ge => Some(BinOp::Gt),
        BinOp::Eq => Some(BinOp::Ne),
        BinOp::Ne => Some(BinOp::Eq),
        _ => None,
    }
}

/// The operators that apply to node `e` whose parent is `parent`.
fn operators(e: &Expr, parent: Option<&Expr>) -> Vec<Operator> {
    let mut ops = Vec::new();
    match &e.kind {
        ExprKind::Binary { op, .. } => {
            for &to in swaps(*op) {
                ops.push(Operator::Swap { from: *op, to });
            }
            if let Some(to) = boundary(*op) {
                ops.push(Operator::Boundary { from: *op, to });
            }
            if matches!(op, BinOp::And | BinOp::Or | BinOp::Xor) {
                ops.push(Operator::DropTerm { rhs: false });
                ops.push(Operator::DropTerm { rhs: true });
            }
        }
        ExprKind::Const(_) => {
            // constants that are operands or mux arms (not padding inside
            // a concatenation or a repeat)
            let operand = parent
                .is_some_and(|p| matches!(p.kind, ExprKind::Binary { .. } | ExprKind::Mux { .. }));
            if operand {
                ops.push(Operator::Constant { up: true });
                if e.width > 1 {
                    ops.push(Operator::Constant { up: false });
                }
            }
        }
        ExprKind::Slice { arg, hi, lo } => {
            if hi + 1 < arg.width {
                ops.push(Operator::ShiftSelect { up: true });
            }
            if *lo > 0 {
                ops.push(Operator::ShiftSelect { up: false });
            }
        }
        ExprKind::Mux { .. } => ops.push(Operator::SwapArms),
        ExprKind::Not(_) => ops.push(Operator::DropNot),
        ExprKind::Reduce {
            op: ReduceOp::And | ReduceOp::Or,
            ..
        } => ops.push(Operator::SwapReduce),
        _ => {}
    }
    ops
}

/// The node `e` with `op` applied (its children as given in `e`).
fn mutated(e: &Expr, op: Operator) -> Result<Expr, IrError> {
    let bad = || IrError::Mutation {
        detail: format!(
            "operator {op:?} does not apply to `{}`",
            crate::error::brief(e)
        ),
    };
    let kind = match (&e.kind, op) {
        (ExprKind::Binary { lhs, rhs, .. }, Operator::Swap { to, .. })
        | (ExprKind::Binary { lhs, rhs, .. }, Operator::Boundary { to, .. }) => ExprKind::Binary {
            op: to,
            lhs: lhs.clone(),
            rhs: rhs.clone(),
        },
        (ExprKind::Binary { op: bop, lhs, rhs }, Operator::DropTerm { rhs: drop_rhs }) => {
            let w = lhs.width;
            let identity = if *bop == BinOp::And {
                Bits::ones(w)?
            } else {
                Bits::zero(w)?
            };
            let id = Arc::new(Expr::bits(identity));
            let (l, r) = if drop_rhs {
                (lhs.clone(), id)
            } else {
                (id, rhs.clone())
            };
            ExprKind::Binary {
                op: *bop,
                lhs: l,
                rhs: r,
            }
        }
        (ExprKind::Const(c), Operator::Constant { up }) => {
            let one = Bits::from_u128(1, c.width())?;
            ExprKind::Const(if up { c.add(&one) } else { c.sub(&one) })
        }
        (ExprKind::Slice { arg, hi, lo }, Operator::ShiftSelect { up }) => {
            let (h, l) = if up {
                (hi + 1, lo + 1)
            } else {
                (hi.wrapping_sub(1), lo.wrapping_sub(1))
            };
            if h >= arg.width || l > h {
                return Err(bad());
            }
            ExprKind::Slice {
                arg: arg.clone(),
                hi: h,
                lo: l,
            }
        }
        (ExprKind::Mux { cond, then, els }, Operator::SwapArms) => ExprKind::Mux {
            cond: cond.clone(),
            then: els.clone(),
            els: then.clone(),
        },
        (ExprKind::Not(arg), Operator::DropNot) => return Ok(arg.as_ref().clone()),
        (ExprKind::Reduce { op: rop, arg }, Operator::SwapReduce) => ExprKind::Reduce {
            op: if *rop == ReduceOp::And {
                ReduceOp::Or
            } else {
                ReduceOp::And
            },
            arg: arg.clone(),
        },
        _ => return Err(bad()),
    };
    Ok(Expr {
        width: e.width,
        kind,
    })
}

fn short(text: String) -> String {
    const MAX: usize = 60;
    if text.chars().count() <= MAX {
        text
    } else {
        let t: String = text.chars().take(MAX - 3).collect();
        format!("{t}...")
    }
}

fn walk(
    e: &Expr,
    parent: Option<&Expr>,
    path: &mut Vec<u16>,
    found: &mut dyn FnMut(&Expr, &[u16], Operator),
) {
    for op in operators(e, parent) {
        found(e, path, op);
    }
    for (i, c) in children(e).into_iter().enumerate() {
        path.push(i as u16);
        walk(c, Some(e), path, found);
        path.pop();
    }
}

/// The names of the signals `named` accepts and of every signal whose
/// driver (value, register next value or enable) reads one of them
/// directly: the signals a feature adds and those it feeds one step on
/// (for a mutation scope such as the logic of the programmable slots).
pub fn named_and_readers(
    m: &Module,
    named: &dyn Fn(&str) -> bool,
) -> std::collections::BTreeSet<String> {
    let hit: Vec<bool> = m.decls.iter().map(|d| named(&d.name)).collect();
    let mut out = std::collections::BTreeSet::new();
    for (i, d) in m.decls.iter().enumerate() {
        let mut reads = false;
        let mut look = |e: &Expr| {
            e.visit_refs(&mut |s, _, _| reads |= hit.get(s.index).copied().unwrap_or(false))
        };
        match &m.drivers[i] {
            Some(Driver::Assign(e)) => look(e),
            Some(Driver::Reg { next, enable }) => {
                look(next);
                if let Some(en) = enable {
                    look(en);
                }
            }
            _ => {}
        }
        if hit[i] || reads {
            out.insert(d.name.to_string());
        }
    }
    out
}

/// Every single mutation of `m`, in declaration order, then path order.
pub fn enumerate(m: &Module) -> Vec<Mutation> {
    let mut out = Vec::new();
    for (index, d) in m.drivers.iter().enumerate() {
        let Some(d) = d else { continue };
        let name = m.decls[index].name.to_string();
        let section = m
            .section_of(index)
            .and_then(|s| m.sections.get(s))
            .map(|(_, t)| t.clone());
        let mut enables = Vec::new();
        let mut add = |site: Site, e: &Expr, path: &[u16], op: Operator| {
            let after = mutated(e, op)
                .map(|x| crate::error::brief(&x))
                .unwrap_or_default();
            out.push(Mutation {
                id: 0,
                signal: name.clone(),
                index,
                site,
                path: path.to_vec(),
                op,
                section: section.clone(),
                text: short(format!("{name}: `{}` -> `{after}`", crate::error::brief(e))),
            });
        };
        match d {
            Driver::Assign(e) => walk(e, None, &mut Vec::new(), &mut |x, p, op| {
                add(Site::Value, x, p, op)
            }),
            Driver::Reg { next, enable } => {
                walk(next, None, &mut Vec::new(), &mut |x, p, op| {
                    add(Site::Value, x, p, op)
                });
                if let Some(en) = enable {
                    walk(en, None, &mut Vec::new(), &mut |x, p, op| {
                        add(Site::Enable, x, p, op)
                    });
                    enables.push(Mutation {
                        id: 0,
                        signal: name.clone(),
                        index,
                        site: Site::Enable,
                        path: Vec::new(),
                        op: Operator::EnableHigh,
                        section: section.clone(),
                        text: format!(
                            "{name}: enable `{}` -> `1'b1`",
                            short(crate::error::brief(en))
                        ),
                    });
                }
                if let Some(v) = &m.decls[index].reset {
                    enables.push(Mutation {
                        id: 0,
                        signal: name.clone(),
                        index,
                        site: Site::Reset,
                        path: Vec::new(),
                        op: Operator::ResetValue,
                        section: section.clone(),
                        text: format!(
                            "{name}: reset value `{}` -> `{}`",
                            crate::error::brief(Expr::bits(v.clone())),
                            crate::error::brief(Expr::bits(v.not()))
                        ),
                    });
                }
            }
            Driver::Instance { .. } => {}
        }
        out.append(&mut enables);
    }
    for (i, m) in out.iter_mut().enumerate() {
        m.id = i;
    }
    out
}

/// What [`rebuild`] applies at each node (given the node with its
/// children rebuilt, and its path).
type Wrap<'a> = dyn FnMut(Expr, &[u16]) -> Result<Expr, IrError> + 'a;

/// Rebuild `e` with `wrap(node, path)` applied bottom-up at every node.
fn rebuild(e: &Expr, path: &mut Vec<u16>, wrap: &mut Wrap<'_>) -> Result<Expr, IrError> {
    let kids = children(e);
    let node = if kids.is_empty() {
        e.clone()
    } else {
        let mut new = Vec::with_capacity(kids.len());
        for (i, c) in kids.into_iter().enumerate() {
            path.push(i as u16);
            new.push(rebuild(c, path, wrap)?);
            path.pop();
        }
        with_children(e, new)
    };
    wrap(node, path)
}

fn check_target(m: &Module, mu: &Mutation) -> Result<(), IrError> {
    let ok = m.decls.get(mu.index).is_some_and(|d| *d.name == *mu.signal);
    if ok {
        Ok(())
    } else {
        Err(IrError::Mutation {
            detail: format!(
                "module `{}` has no signal `{}` at declaration {}",
                m.name, mu.signal, mu.index
            ),
        })
    }
}

/// Apply `muts` (all of one driver site) to `e`: each node on a mutation's
/// path becomes `select(k) ? mutated : node`, where `select(k)` is given.
fn apply_site(
    e: &Expr,
    muts: &[(usize, &Mutation)],
    select: &dyn Fn(usize) -> Option<Expr>,
) -> Result<Expr, IrError> {
    let mut wrap = |node: Expr, path: &[u16]| -> Result<Expr, IrError> {
        let mut out = node.clone();
        for (k, mu) in muts.iter().filter(|(_, mu)| mu.path == path) {
            // the mutated node is built on the rebuilt node, whose children
            // hold the other mutations (inactive while this one is)
            let m = mutated(&node, mu.op)?;
            out = match select(*k) {
                None => m,
                Some(cond) => Expr {
                    width: node.width,
                    kind: ExprKind::Mux {
                        cond: Arc::new(cond),
                        then: Arc::new(m),
                        els: Arc::new(out),
                    },
                },
            };
        }
        Ok(out)
    };
    rebuild(e, &mut Vec::new(), &mut wrap)
}

fn apply_all(
    m: &Module,
    muts: &[&Mutation],
    select: &dyn Fn(usize) -> Option<Expr>,
) -> Result<Module, IrError> {
    let mut out = m.clone();
    for mu in muts {
        check_target(m, mu)?;
    }
    for (index, d) in m.drivers.iter().enumerate() {
        let mine: Vec<(usize, &Mutation)> = muts
            .iter()
            .enumerate()
            .filter(|(_, mu)| mu.index == index)
            .map(|(k, mu)| (k, *mu))
            .collect();
        if mine.is_empty() {
            continue;
        }
        let of = |site: Site| -> Vec<(usize, &Mutation)> {
            mine.iter()
                .filter(|(_, mu)| {
                    mu.site == site && !matches!(mu.op, Operator::EnableHigh | Operator::ResetValue)
                })
                .copied()
                .collect()
        };
        let new = match d {
            Some(Driver::Assign(e)) => Driver::Assign(apply_site(e, &of(Site::Value), select)?),
            Some(Driver::Reg { next, enable }) => {
                let next = apply_site(next, &of(Site::Value), select)?;
                let enable = match enable {
                    Some(en) => {
                        let mut en = apply_site(en, &of(Site::Enable), select)?;
                        for (k, _) in mine.iter().filter(|(_, mu)| mu.op == Operator::EnableHigh) {
                            en = match select(*k) {
                                None => Expr::bool(true),
                                Some(cond) => Expr {
                                    width: 1,
                                    kind: ExprKind::Binary {
                                        op: BinOp::Or,
                                        lhs: Arc::new(en),
                                        rhs: Arc::new(cond),
                                    },
                                },
                            };
                        }
                        Some(en)
                    }
                    None => None,
                };
                let resets: Vec<usize> = mine
                    .iter()
                    .filter(|(_, mu)| mu.op == Operator::ResetValue)
                    .map(|(k, _)| *k)
                    .collect();
                match (&m.decls[index].reset, resets.is_empty()) {
                    (Some(v), false) => {
                        // the reset moves into the data path: no reset, and
                        // `rst ? (mutated ? ~v : v) : next` loaded when
                        // `rst | enable`
                        let rst = m.reset_signal().ok_or_else(|| IrError::Mutation {
                            detail: format!(
                                "register `{}` has a reset value but module `{}` no reset input",
                                m.decls[index].name, m.name
                            ),
                        })?;
                        let rst = Expr::from(&rst);
                        let mut value = Expr::bits(v.clone());
                        for k in resets {
                            let flipped = Expr::bits(v.not());
                            value = match select(k) {
                                None => flipped,
                                Some(cond) => Expr {
                                    width: value.width,
                                    kind: ExprKind::Mux {
                                        cond: Arc::new(cond),
                                        then: Arc::new(flipped),
                                        els: Arc::new(value),
                                    },
                                },
                            };
                        }
                        let next = Expr {
                            width: next.width,
                            kind: ExprKind::Mux {
                                cond: Arc::new(rst.clone()),
                                then: Arc::new(value),
                                els: Arc::new(next),
                            },
                        };
                        let enable = enable.map(|en| Expr {
                            width: 1,
                            kind: ExprKind::Binary {
                                op: BinOp::Or,
                                lhs: Arc::new(rst),
                                rhs: Arc::new(en),
                            },
                        });
                        out.decls[index].reset = None;
                        Driver::Reg { next, enable }
                    }
                    _ => Driver::Reg { next, enable },
                }
            }
            _ => {
                return Err(IrError::Mutation {
                    detail: format!(
                        "signal `{}` has no expression to mutate",
                        m.decls[index].name
                    ),
                })
            }
        };
        out.drivers[index] = Some(new);
    }
    Ok(out)
}

/// A copy of `m` with the single mutation `mu`.
pub fn apply(m: &Module, mu: &Mutation) -> Result<Module, IrError> {
    apply_all(m, &[mu], &|_| None)
}

/// One module holding every mutation of `muts` behind a new input
/// `select` of `width` bits: mutation `muts[k]` is active when
/// `select == k + 1`; with `select == 0` the module computes exactly what
/// `m` computes.
pub fn schema(m: &Module, muts: &[Mutation], select: &str, width: u32) -> Result<Module, IrError> {
    if (muts.len() as u128) >= (1u128 << width.min(127)) {
        return Err(IrError::Mutation {
            detail: format!("{} mutations do not fit a {width}-bit select", muts.len()),
        });
    }
    let mut out = m.clone();
    let sel = Arc::new(Expr::from(&out.input(select, width)?));
    let conds = (0..muts.len())
        .map(|k| {
            Ok(Expr {
                width: 1,
                kind: ExprKind::Binary {
                    op: BinOp::Eq,
                    lhs: sel.clone(),
                    rhs: Arc::new(Expr::constant(k as u128 + 1, width)?),
                },
            })
        })
        .collect::<Result<Vec<Expr>, IrError>>()?;
    let refs: Vec<&Mutation> = muts.iter().collect();
    apply_all(&out, &refs, &|k| conds.get(k).cloned())
}
