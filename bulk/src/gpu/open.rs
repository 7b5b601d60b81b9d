//! Opening the GPU engine for a bulk codec.

use super::{Gpu, GpuEngine};
use crate::{BulkCodec, BulkError, GpuKind};

/// The GPU engine for `codec` on the adapter `pick` (see [`Gpu::open`]).
/// Codecs without GPU kernels (the baselines) are refused with the list of
/// those that have them.
pub fn open_engine(codec: &dyn BulkCodec, pick: Option<&str>) -> Result<GpuEngine, BulkError> {
    let algo = match codec.gpu_kind() {
        GpuKind::Mpc(set) => super::mpc::algo(set)?,
        GpuKind::MagBdi(p) => super::magbdi::algo(&p)?,
        GpuKind::Dpc(p) => super::dpc::algo(&p)?,
        GpuKind::None => {
            return Err(BulkError::Gpu(format!(
                "no GPU kernels for `{}` (the GPU engine codes mpc, magbdi and dpc); use --engine parallel",
                codec.algo()
            )))
        }
    };
    GpuEngine::new(Gpu::open(pick)?, algo, codec.max_bits())
}
