//! Bit-exact reference models of the GPU memory compressors this project
//! generates hardware for. The RTL in `hdl` is checked against these.

pub mod baselines;
pub mod bits;
pub mod blocks;
pub mod dpc;
pub mod hash;
pub mod magbdi;
pub mod mpc;
pub mod npy;
