//! Synthesis flow for the generated MPC units (docs/hw/synthesis.md):
//! Yosys mapping to a standard-cell liberty, NAND2-equivalent area per
//! stage and block, logic depth, and OpenSTA timing of a buffered and
//! sized netlist against a clock, in ns and in FO4 delays of the library.

pub mod flow;
pub mod fo4;
pub mod liberty;
pub mod netlist;
pub mod power;
pub mod report;

use std::path::PathBuf;

/// Why the flow failed.
#[derive(Debug, thiserror::Error)]
pub enum SynthError {
    #[error("{tool} is not installed or not runnable ({problem}); install it: {hint}", hint = flow::INSTALL_HINT)]
    Tool { tool: &'static str, problem: String },
    #[error("no standard-cell liberty: {0}; run `make setup` (unpacks qflow-tech-osu018) or pass --liberty / set MPC_LIBERTY")]
    NoLiberty(String),
    #[error("{tool} failed; see {log}:\n{tail}")]
    Failed {
        tool: &'static str,
        log: PathBuf,
        tail: String,
    },
    #[error("cannot access {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("liberty {path}: {problem}")]
    Liberty { path: PathBuf, problem: String },
    #[error("power run of {path}: {problem}")]
    Stimulus { path: PathBuf, problem: String },
    #[error("netlist {path}: {problem}")]
    Netlist { path: PathBuf, problem: String },
    #[error(transparent)]
    Gen(#[from] hdl::GenError),
    #[error("internal generator error: {0}")]
    Ir(#[from] hdl::ir::IrError),
}

/// Sum of the widths of the registers a module declares: the number of
/// flip-flops synthesis must keep.
pub fn register_bits(module: &hdl::ir::Module) -> u64 {
    module
        .signals()
        .iter()
        .filter(|s| matches!(module.kind(s), Ok(hdl::ir::SignalKind::Reg)))
        .map(|s| u64::from(s.width()))
        .sum()
}
