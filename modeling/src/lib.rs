//! Modeling on the corpus: training of MPC model sets ([`train`]),
//! evaluation against the baselines ([`eval`]), the online protocol's
//! runs of programmable slots ([`online`]) and PNG charts ([`plot`]).
//! The corpus itself, the progress display and whole-file writes are in
//! the `datafiles` crate. The binaries `train`, `eval`, `curve`, `magbdi`
//! and `dpc_eval` are built on them.

pub mod eval;
pub mod online;
pub mod plot;
pub mod train;
