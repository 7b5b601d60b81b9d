//! The tools around the golden models: corpus loading ([`corpus`]),
//! training of MPC model sets ([`train`]), evaluation against the baselines
//! ([`eval`]), PNG charts ([`plot`]) and the progress bar every
//! long-running command shows ([`progress`]). The binaries `train`, `eval`,
//! `curve`, `magbdi` and `dpc_eval` are built on them.

pub mod corpus;
pub mod eval;
pub mod plot;
pub mod progress;
pub mod train;
