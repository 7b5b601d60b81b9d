//! The tools around the golden models: corpus loading ([`corpus`]),
//! training of MPC model sets ([`train`]), evaluation against the baselines
//! ([`eval`]), PNG charts ([`plot`]), the progress display every
//! long-running command shows ([`progress`]) and the files they write
//! ([`output`]: whole or not at all, each one named). The binaries `train`, `eval`,
//! `curve`, `magbdi` and `dpc_eval` are built on them.

pub mod corpus;
pub mod eval;
pub mod output;
pub mod plot;
pub mod progress;
pub mod train;
