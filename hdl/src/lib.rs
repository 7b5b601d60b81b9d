//! The generators of the compressor and decompressor RTL: MPC (`mpc`),
//! MAG-aware BDI (`magbdi`) and DPC (`dpc`), built on the typed Verilog IR of
//! the `hdl-ir` crate (re-exported as [`ir`]; see
//! `docs/decisions/0001-own-verilog-ir.md`).

pub use hdl_ir as ir;

pub use family::{Family, GenError, Side, Unit};

pub mod circuits;
pub mod dpc;
pub mod family;
pub mod magbdi;
pub mod mpc;
pub mod params;
pub mod prereq;
pub mod stream;
pub mod unit;
pub mod unit_dir;
