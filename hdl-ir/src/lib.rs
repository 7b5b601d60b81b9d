//! A small typed IR for generating synthesizable Verilog-2005.
//!
//! * [`Module`] — builder for ports, wires, registers, assigns, instances.
//! * [`Signal`] — handle to a declared signal (name + width).
//! * [`Expr`] — width-checked expressions; see the width rules there.
//! * [`Bits`] — fixed-width bit vectors (constants, evaluator values).
//! * [`Module::check`] / [`Module::emit`] — lint, then print Verilog.
//! * [`Sim`] — cycle-based evaluator for unit tests.
//! * [`mutate`] — single mutations of a module, one at a time or all
//!   behind a select input, for mutation testing.
//!
//! See `docs/hw/verilog-ir.md` for conventions.

mod bits;
mod check;
pub mod comb;
mod emit;
mod error;
mod eval;
mod expr;
mod flat;
mod ident;
mod module;
pub mod mutate;
mod signal;

pub use bits::{Bits, MAX_WIDTH};
pub use emit::{write_files, VerilogFile};
pub use error::{IrError, Problem};
pub use eval::Sim;
pub use expr::{BinOp, Expr, ReduceOp, LINE_LIMIT};
pub use ident::{is_keyword, validate_identifier, MAX_IDENT_LEN};
pub use module::Module;
pub use signal::{Reset, Signal, SignalKind};

#[cfg(test)]
mod tests;
