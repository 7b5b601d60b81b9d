//! What the codecs, the testbench, synthesis and the modeling tools share
//! about files, without the plotting and training code: the corpus of
//! memory data files ([`corpus`]: the manifest, application classes,
//! training splits, the data files of a path), the progress display every
//! long-running command shows ([`progress`]), and files written whole or
//! not at all ([`atomic`]).

pub mod atomic;
pub mod corpus;
pub mod progress;
