//! Bit-exact reference models of the GPU memory compressors this project
//! generates hardware for. The RTL in `hdl` is checked against these.

pub mod baselines;
pub mod bits;
pub mod blocks;
pub mod bulk;
pub mod corpus;
pub mod dpc;
pub mod eval;
pub mod hash;
pub mod magbdi;
pub mod mpc;
pub mod npy;
pub mod plot;
pub mod progress;
pub mod train;
