//! Typed Verilog IR and, later, the generators of the compressor and
//! decompressor RTL.
//!
//! The [`ir`] module is a small typed intermediate representation that
//! emits lint-clean Verilog-2005 (see `docs/decisions/0001-own-verilog-ir.md`).

pub mod bdi;
pub mod dpc;
pub mod ir;
pub mod mpc;
pub mod output;
pub mod tools;
