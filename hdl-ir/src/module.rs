//! The [`Module`] builder: declarations, drivers and instances.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::bits::{check_width, Bits};
use super::error::{brief, IrError};
use super::expr::Expr;
use super::ident::validate_identifier;
use super::signal::{Reset, Signal, SignalKind};

static NEXT_TAG: AtomicU64 = AtomicU64::new(1);

/// A fresh identity for a module (or a flattened netlist).
pub(crate) fn fresh_tag() -> u64 {
    NEXT_TAG.fetch_add(1, Ordering::Relaxed)
}

/// One declared signal.
#[derive(Debug, Clone)]
pub(crate) struct Decl {
    pub name: Arc<str>,
    pub width: u32,
    pub kind: SignalKind,
    /// Reset value of a register with a reset.
    pub reset: Option<Bits>,
    /// Bit ranges `(hi, lo)` marked as deliberately unused.
    pub unused: Vec<(u32, u32)>,
}

/// What drives a wire, output or register.
#[derive(Debug, Clone)]
pub(crate) enum Driver {
    /// `assign name = expr;`
    Assign(Expr),
    /// Register update on the clock edge, when `enable` (if any) is high.
    Reg { next: Expr, enable: Option<Expr> },
    /// Output `port` (a signal index of the child) of instance `instance`.
    Instance { instance: usize, port: usize },
}

/// One instance of another module.
#[derive(Debug, Clone)]
pub(crate) struct Instance {
    pub name: String,
    pub module: Arc<Module>,
    /// One connection per child port, in the child's port order. Outputs
    /// are whole-signal references to a wire or output of the parent.
    pub conns: Vec<(usize, Expr)>,
}

/// A Verilog module under construction.
///
/// Signals are declared with [`input`](Module::input),
/// [`output`](Module::output), [`wire`](Module::wire) and
/// [`reg`](Module::reg); each returns a [`Signal`] handle. Wires and outputs
/// are driven once with [`assign`](Module::assign) (or by an instance
/// output), registers once with [`reg_next`](Module::reg_next). Every step
/// checks names, ownership and widths and returns an [`IrError`] instead of
/// panicking; on error the module is left unchanged.
#[derive(Debug, Clone)]
pub struct Module {
    pub(crate) name: String,
    pub(crate) tag: u64,
    pub(crate) decls: Vec<Decl>,
    pub(crate) drivers: Vec<Option<Driver>>,
    pub(crate) instances: Vec<Instance>,
    pub(crate) clock: Option<usize>,
    pub(crate) reset: Option<usize>,
    pub(crate) names: BTreeSet<String>,
    /// Section titles, each with the number of declarations before it:
    /// the emitter opens the declarations, assigns and registers of a
    /// section with a `// title` comment.
    pub(crate) sections: Vec<(usize, String)>,
}

impl Module {
    /// A new, empty module. The name must be a valid identifier; it is
    /// also the file name stem (`<name>.v`) the emitter proposes.
    pub fn new(name: &str) -> Result<Module, IrError> {
        validate_identifier(name)?;
        Ok(Module {
            name: name.to_string(),
            tag: fresh_tag(),
            decls: Vec::new(),
            drivers: Vec::new(),
            instances: Vec::new(),
            clock: None,
            reset: None,
            names: BTreeSet::new(),
            sections: Vec::new(),
        })
    }

    /// The module name.
    pub fn name(&self) -> &str {
        &self.name
    }

    // ----- declarations -----

    /// Declares an input port.
    pub fn input(&mut self, name: &str, width: u32) -> Result<Signal, IrError> {
        self.declare(name, width, SignalKind::Input, None)
    }

    /// Declares an output port; drive it with [`assign`](Module::assign)
    /// or an instance output.
    pub fn output(&mut self, name: &str, width: u32) -> Result<Signal, IrError> {
        self.declare(name, width, SignalKind::Output, None)
    }

    /// Declares an internal wire; drive it with [`assign`](Module::assign)
    /// or an instance output.
    pub fn wire(&mut self, name: &str, width: u32) -> Result<Signal, IrError> {
        self.declare(name, width, SignalKind::Wire, None)
    }

    /// Declares the clock input (1 bit). Registers update on its rising edge.
    pub fn clock(&mut self, name: &str) -> Result<Signal, IrError> {
        if let Some(c) = self.clock {
            return Err(IrError::ClockOrResetRedeclared {
                module: self.name.clone(),
                what: "clock",
                existing: self.decls[c].name.to_string(),
            });
        }
        let s = self.input(name, 1)?;
        self.clock = Some(s.index);
        Ok(s)
    }

    /// Declares the reset input (1 bit, synchronous, active high).
    pub fn reset(&mut self, name: &str) -> Result<Signal, IrError> {
        if let Some(r) = self.reset {
            return Err(IrError::ClockOrResetRedeclared {
                module: self.name.clone(),
                what: "reset",
                existing: self.decls[r].name.to_string(),
            });
        }
        let s = self.input(name, 1)?;
        self.reset = Some(s.index);
        Ok(s)
    }

    /// Declares a register clocked by the module clock. With
    /// [`Reset::Value`]/[`Reset::Bits`] it loads that value while the reset
    /// input is high (the clock, and the reset if needed, must be declared
    /// first). Give it its next value with [`reg_next`](Module::reg_next).
    pub fn reg(&mut self, name: &str, width: u32, reset: Reset) -> Result<Signal, IrError> {
        if self.clock.is_none() {
            return Err(IrError::MissingClockOrReset {
                module: self.name.clone(),
                signal: name.to_string(),
                what: "clock",
            });
        }
        let value = match reset {
            Reset::None => None,
            Reset::Value(v) => {
                check_width(|| format!("register `{name}`"), u64::from(width))?;
                Some(Bits::from_u128(v, width)?)
            }
            Reset::Bits(b) => {
                if b.width() != width {
                    return Err(IrError::WidthMismatch {
                        context: "register reset value".to_string(),
                        left: name.to_string(),
                        left_width: width,
                        right: brief(&b),
                        right_width: b.width(),
                    });
                }
                Some(b)
            }
        };
        if value.is_some() && self.reset.is_none() {
            return Err(IrError::MissingClockOrReset {
                module: self.name.clone(),
                signal: name.to_string(),
                what: "reset",
            });
        }
        self.declare(name, width, SignalKind::Reg, value)
    }

    fn declare(
        &mut self,
        name: &str,
        width: u32,
        kind: SignalKind,
        reset: Option<Bits>,
    ) -> Result<Signal, IrError> {
        validate_identifier(name)?;
        check_width(|| format!("signal `{name}`"), u64::from(width))?;
        self.claim_name(name)?;
        let name: Arc<str> = Arc::from(name);
        let index = self.decls.len();
        self.decls.push(Decl {
            name: name.clone(),
            width,
            kind,
            reset,
            unused: Vec::new(),
        });
        self.drivers.push(None);
        Ok(Signal {
            module: self.tag,
            index,
            width,
            name,
        })
    }

    fn claim_name(&mut self, name: &str) -> Result<(), IrError> {
        if !self.names.insert(name.to_string()) {
            return Err(IrError::DuplicateName {
                module: self.name.clone(),
                name: name.to_string(),
            });
        }
        Ok(())
    }

    // ----- drivers -----

    /// `assign target = value;` for a wire or output. The widths must be
    /// equal: zero-extend or truncate explicitly.
    pub fn assign(&mut self, target: &Signal, value: impl Into<Expr>) -> Result<(), IrError> {
        let value = value.into();
        self.check_signal(target)?;
        self.check_expr(&value)?;
        let kind = self.decls[target.index].kind;
        if !matches!(kind, SignalKind::Wire | SignalKind::Output) {
            return Err(self.not_assignable(target, "assign to"));
        }
        if value.width() != target.width {
            return Err(IrError::WidthMismatch {
                context: "assign".to_string(),
                left: target.name.to_string(),
                left_width: target.width,
                right: brief(&value),
                right_width: value.width(),
            });
        }
        self.check_undriven(target)?;
        self.drivers[target.index] = Some(Driver::Assign(value));
        Ok(())
    }

    /// Sets the value `reg` takes on each rising clock edge (when
    /// `enable`, a 1-bit expression, is high; always if `None`). Reset, if
    /// the register has one, takes priority over the enable.
    pub fn reg_next(
        &mut self,
        reg: &Signal,
        next: impl Into<Expr>,
        enable: Option<Expr>,
    ) -> Result<(), IrError> {
        let next = next.into();
        self.check_signal(reg)?;
        self.check_expr(&next)?;
        if self.decls[reg.index].kind != SignalKind::Reg {
            return Err(self.not_assignable(reg, "set the next value of"));
        }
        if next.width() != reg.width {
            return Err(IrError::WidthMismatch {
                context: "register next value".to_string(),
                left: reg.name.to_string(),
                left_width: reg.width,
                right: brief(&next),
                right_width: next.width(),
            });
        }
        if let Some(en) = &enable {
            self.check_expr(en)?;
            if en.width() != 1 {
                return Err(IrError::NotOneBit {
                    context: format!("enable of register `{}`", reg.name),
                    expr: brief(en),
                    width: en.width(),
                });
            }
        }
        self.check_undriven(reg)?;
        self.drivers[reg.index] = Some(Driver::Reg { next, enable });
        Ok(())
    }

    /// Instantiates `child` as `name`, connecting every child port by name.
    /// Inputs take any expression of this module of the port's width;
    /// outputs must go to a whole wire or output of this module (which
    /// the instance then drives).
    pub fn instance(
        &mut self,
        name: &str,
        child: &Module,
        connections: &[(&str, Expr)],
    ) -> Result<(), IrError> {
        validate_identifier(name)?;
        if self.names.contains(name) {
            return Err(IrError::DuplicateName {
                module: self.name.clone(),
                name: name.to_string(),
            });
        }
        if child.name == self.name {
            return Err(IrError::ModuleNameClash {
                name: child.name.clone(),
            });
        }
        let bad = |port: &str, problem: &'static str| IrError::BadConnection {
            instance: name.to_string(),
            child: child.name.clone(),
            port: port.to_string(),
            problem,
        };
        let ports: Vec<usize> = child.port_indices().collect();
        let mut conns: Vec<Option<Expr>> = vec![None; ports.len()];
        let mut outputs: Vec<(usize, usize)> = Vec::new(); // (parent signal, child port)
        for (port_name, expr) in connections {
            let Some(pos) = ports
                .iter()
                .position(|&p| &*child.decls[p].name == *port_name)
            else {
                return Err(IrError::UnknownPort {
                    instance: name.to_string(),
                    child: child.name.clone(),
                    port: port_name.to_string(),
                });
            };
            if conns[pos].is_some() {
                return Err(bad(port_name, "connected twice"));
            }
            self.check_expr(expr)?;
            let decl = &child.decls[ports[pos]];
            if expr.width() != decl.width {
                return Err(IrError::WidthMismatch {
                    context: format!("connection of instance `{name}`"),
                    left: format!("{}.{}", name, decl.name),
                    left_width: decl.width,
                    right: brief(expr),
                    right_width: expr.width(),
                });
            }
            if decl.kind == SignalKind::Output {
                let Some(target) = expr.as_signal() else {
                    return Err(bad(
                        port_name,
                        "an output and must connect to a whole wire or output",
                    ));
                };
                if !matches!(
                    self.decls[target.index].kind,
                    SignalKind::Wire | SignalKind::Output
                ) {
                    return Err(self.not_assignable(target, "connect an instance output to"));
                }
                self.check_undriven(target)?;
                if outputs.iter().any(|&(s, _)| s == target.index) {
                    return Err(IrError::MultiplyDriven {
                        module: self.name.clone(),
                        signal: target.name.to_string(),
                        existing: format!("another output of instance `{name}`"),
                    });
                }
                outputs.push((target.index, ports[pos]));
            }
            conns[pos] = Some(expr.clone());
        }
        let mut full = Vec::with_capacity(ports.len());
        for (pos, c) in conns.into_iter().enumerate() {
            match c {
                Some(e) => full.push((ports[pos], e)),
                None => return Err(bad(&child.decls[ports[pos]].name, "not connected")),
            }
        }
        self.claim_name(name)?;
        let instance = self.instances.len();
        for (sig, port) in outputs {
            self.drivers[sig] = Some(Driver::Instance { instance, port });
        }
        self.instances.push(Instance {
            name: name.to_string(),
            module: Arc::new(child.clone()),
            conns: full,
        });
        Ok(())
    }

    /// Starts a section (a pipeline stage, say): the signals declared from
    /// now on belong to it, and the emitter opens its declarations, its
    /// assigns and its registers with the comment `// title`. A title is
    /// one line.
    pub fn section(&mut self, title: &str) -> Result<(), IrError> {
        if title.contains('\n') || title.contains('\r') {
            return Err(IrError::MultiLineTitle {
                module: self.name.clone(),
                title: title.to_string(),
            });
        }
        self.sections.push((self.decls.len(), title.to_string()));
        Ok(())
    }

    /// The title of the section `signal` was declared in, if any.
    pub fn section_title(&self, signal: &Signal) -> Option<&str> {
        self.section_of(signal.index)
            .and_then(|s| self.sections.get(s))
            .map(|(_, t)| t.as_str())
    }

    /// The title of the section open now (the last one started), if any.
    pub fn current_section(&self) -> Option<&str> {
        self.sections.last().map(|(_, t)| t.as_str())
    }

    /// The section signal `index` (a declaration index) belongs to.
    pub(crate) fn section_of(&self, index: usize) -> Option<usize> {
        self.sections.iter().rposition(|(start, _)| *start <= index)
    }

    /// Marks bits `hi..=lo` of `signal` as deliberately unread. The checks
    /// then accept them, and the emitter wraps the declaration in
    /// `/* verilator lint_off UNUSEDSIGNAL */ ... lint_on`.
    pub fn mark_unused(&mut self, signal: &Signal, hi: u32, lo: u32) -> Result<(), IrError> {
        self.check_signal(signal)?;
        if lo > hi || hi >= signal.width {
            return Err(IrError::SelectOutOfRange {
                expr: signal.name.to_string(),
                width: signal.width,
                hi,
                lo,
            });
        }
        self.decls[signal.index].unused.push((hi, lo));
        Ok(())
    }

    // ----- queries -----

    /// The signal called `name`, if declared.
    pub fn signal(&self, name: &str) -> Option<Signal> {
        self.decls
            .iter()
            .position(|d| &*d.name == name)
            .map(|i| self.handle(i))
    }

    /// All signals, in declaration order.
    pub fn signals(&self) -> Vec<Signal> {
        (0..self.decls.len()).map(|i| self.handle(i)).collect()
    }

    /// The ports (inputs and outputs), in declaration order.
    pub fn ports(&self) -> Vec<Signal> {
        self.port_indices().map(|i| self.handle(i)).collect()
    }

    /// The kind of a signal of this module.
    pub fn kind(&self, signal: &Signal) -> Result<SignalKind, IrError> {
        self.check_signal(signal)?;
        Ok(self.decls[signal.index].kind)
    }

    /// The clock input, if declared.
    pub fn clock_signal(&self) -> Option<Signal> {
        self.clock.map(|i| self.handle(i))
    }

    /// The reset input, if declared.
    pub fn reset_signal(&self) -> Option<Signal> {
        self.reset.map(|i| self.handle(i))
    }

    /// Instance names, in order.
    pub fn instance_names(&self) -> Vec<&str> {
        self.instances.iter().map(|i| i.name.as_str()).collect()
    }

    // ----- internals -----

    pub(crate) fn port_indices(&self) -> impl Iterator<Item = usize> + '_ {
        self.decls
            .iter()
            .enumerate()
            .filter(|(_, d)| matches!(d.kind, SignalKind::Input | SignalKind::Output))
            .map(|(i, _)| i)
    }

    pub(crate) fn handle(&self, index: usize) -> Signal {
        let d = &self.decls[index];
        Signal {
            module: self.tag,
            index,
            width: d.width,
            name: d.name.clone(),
        }
    }

    fn check_signal(&self, s: &Signal) -> Result<(), IrError> {
        let ok = s.module == self.tag
            && self
                .decls
                .get(s.index)
                .is_some_and(|d| d.name == s.name && d.width == s.width);
        if ok {
            Ok(())
        } else {
            Err(IrError::ForeignSignal {
                signal: s.name.to_string(),
                module: self.name.clone(),
            })
        }
    }

    fn check_expr(&self, e: &Expr) -> Result<(), IrError> {
        let mut result = Ok(());
        e.visit_refs(&mut |s, _, _| {
            if result.is_ok() {
                result = self.check_signal(s);
            }
        });
        result
    }

    fn check_undriven(&self, s: &Signal) -> Result<(), IrError> {
        match &self.drivers[s.index] {
            None => Ok(()),
            Some(d) => Err(IrError::MultiplyDriven {
                module: self.name.clone(),
                signal: s.name.to_string(),
                existing: match d {
                    Driver::Assign(_) => "an assign".to_string(),
                    Driver::Reg { .. } => "a register update".to_string(),
                    Driver::Instance { instance, port } => {
                        let inst = &self.instances[*instance];
                        format!(
                            "output `{}` of instance `{}`",
                            inst.module.decls[*port].name, inst.name
                        )
                    }
                },
            }),
        }
    }

    fn not_assignable(&self, s: &Signal, action: &'static str) -> IrError {
        IrError::NotAssignable {
            module: self.name.clone(),
            signal: s.name.to_string(),
            kind: self.decls[s.index].kind.describe().to_string(),
            action,
        }
    }
}
