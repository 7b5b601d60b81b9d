//! Signals: named, fixed-width ports, wires and registers of one module.

use std::fmt;
use std::sync::Arc;

use super::bits::Bits;
use super::error::IrError;
use super::expr::Expr;

/// A handle to a declared signal. Cheap to clone; it remembers which module
/// declared it, so using it in another module is an error, not a silent bug.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Signal {
    pub(crate) module: u64,
    pub(crate) index: usize,
    pub(crate) width: u32,
    pub(crate) name: Arc<str>,
}

impl Signal {
    /// The Verilog name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Width in bits (1..=[`super::MAX_WIDTH`]).
    pub fn width(&self) -> u32 {
        self.width
    }

    /// The whole signal as an expression.
    pub fn expr(&self) -> Expr {
        Expr::from(self)
    }

    /// Constant part select `self[hi:lo]`.
    pub fn slice(&self, hi: u32, lo: u32) -> Result<Expr, IrError> {
        self.expr().slice(hi, lo)
    }

    /// Constant bit select `self[i]`.
    pub fn bit(&self, i: u32) -> Result<Expr, IrError> {
        self.expr().bit(i)
    }
}

impl fmt::Debug for Signal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}[{}]", self.name, self.width)
    }
}

/// What a signal is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SignalKind {
    /// Module input port.
    Input,
    /// Module output port (driven by an assign or an instance output).
    Output,
    /// Internal net (driven by an assign or an instance output).
    Wire,
    /// Clocked register, updated on `posedge` of the module clock.
    Reg,
}

impl SignalKind {
    pub(crate) fn describe(self) -> &'static str {
        match self {
            SignalKind::Input => "an input",
            SignalKind::Output => "an output",
            SignalKind::Wire => "a wire",
            SignalKind::Reg => "a register",
        }
    }
}

/// Reset behaviour of a register. Resets are synchronous and active high,
/// on the module's reset input (see [`super::Module::reset`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reset {
    /// No reset: the register powers up unknown (the evaluator uses 0).
    None,
    /// Reset to this value (must fit the register's width).
    Value(u128),
    /// Reset to this vector (for registers wider than 128 bits).
    Bits(Bits),
}
