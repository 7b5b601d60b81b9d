//! The GPU engine of the bulk codec: WGSL compute kernels driven through
//! `wgpu` (Vulkan on Linux, Metal, DX12), bit-exact with the CPU engines.
//! Built with the cargo feature `gpu`; design and measurements in
//! `docs/bulk-codec.md` ("GPU engine").
//!
//! * [`device`]: adapter selection and the wgpu helpers.
//! * [`kernel`]: the per-algorithm kernel contract ([`GpuAlgo`]) and direct
//!   runs of one algorithm's kernels on a batch of blocks.
//! * [`engine`]: the window pipeline (upload, kernels, device-side chunk
//!   packing, download) behind [`crate::WindowCoder`], and the
//!   device-resident calls (blocks and chunks kept in device memory).
//! * [`mpc`], [`magbdi`], [`dpc`]: the kernels and tables of each codec;
//!   [`benes`]: the bit permutation network of the MPC kernels.
//! * [`uniform`]: the kernels' uniforms as Rust structs, checked against
//!   their WGSL structs.
//! * [`open`]: the engine for a bulk codec; [`bench`](mod@bench): its measurements.

pub mod bench;
pub mod benes;
pub mod device;
pub mod dpc;
pub mod engine;
pub mod kernel;
pub mod magbdi;
pub mod mpc;
pub mod open;
pub mod uniform;

pub use device::{adapters, AdapterDesc, Gpu};
pub use engine::{GpuEngine, GpuStats, ResidentBlocks, ResidentChunks};
pub use kernel::GpuAlgo;
pub use open::{open_engine, open_engine_with, MpcKernels};

/// WGSL bit writer prepended to every compress kernel.
pub const BITS_WRITE: &str = include_str!("wgsl/bits_write.wgsl");
/// WGSL bit reader prepended to every decompress kernel.
pub const BITS_READ: &str = include_str!("wgsl/bits_read.wgsl");
