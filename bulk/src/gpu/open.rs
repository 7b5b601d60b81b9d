//! Opening the GPU engine for a bulk codec.

use super::{Gpu, GpuEngine};
use crate::{BulkCodec, BulkError, GpuKind};

/// Which form of the MPC kernels an engine runs (both give the same
/// output; `docs/bulk-codec.md`, "MPC kernels").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MpcKernels {
    /// The engine's choice: the specialised kernels on a software adapter
    /// (llvmpipe runs them about 5x faster than the generic ones), the
    /// generic ones on a GPU (an NVIDIA H200 ran their kernel phases 1.7x /
    /// 1.3x faster, compress / decompress).
    #[default]
    Auto,
    /// Specialised for the model set, tables in a uniform array (model
    /// sets of at most 14 predictors).
    Specialised,
    /// The generic kernels, tables in a storage buffer.
    Generic,
}

/// The GPU engine for `codec` on the adapter `pick` (see [`Gpu::open`]).
/// Codecs without GPU kernels (the baselines) are refused with the list of
/// those that have them.
pub fn open_engine(codec: &dyn BulkCodec, pick: Option<&str>) -> Result<GpuEngine, BulkError> {
    open_engine_with(codec, pick, MpcKernels::Auto)
}

/// [`open_engine`] with the form of the MPC kernels given (ignored for
/// the other codecs); [`MpcKernels::Specialised`] is refused for a model
/// set whose tables do not fit a uniform array.
pub fn open_engine_with(
    codec: &dyn BulkCodec,
    pick: Option<&str>,
    kernels: MpcKernels,
) -> Result<GpuEngine, BulkError> {
    // a codec without kernels is refused before an adapter is opened
    if matches!(codec.gpu_kind(), GpuKind::None) {
        return Err(no_kernels(codec));
    }
    let gpu = Gpu::open(pick)?;
    let algo = match codec.gpu_kind() {
        GpuKind::Mpc(set) => match kernels {
            MpcKernels::Auto => super::mpc::algo_with(
                set,
                gpu.adapter.is_software() && super::mpc::fits_uniform(set),
            )?,
            MpcKernels::Generic => super::mpc::algo_with(set, false)?,
            MpcKernels::Specialised => {
                if !super::mpc::fits_uniform(set) {
                    return Err(BulkError::Config(format!(
                        "mpc model set `{}`: {} predictors do not fit the specialised kernels' uniform tables (at most 14)",
                        set.name,
                        set.predictors.len()
                    )));
                }
                super::mpc::algo_with(set, true)?
            }
        },
        GpuKind::MagBdi(p) => super::magbdi::algo(&p)?,
        GpuKind::Dpc(p) => super::dpc::algo(&p)?,
        GpuKind::None => return Err(no_kernels(codec)),
    };
    GpuEngine::new(gpu, algo, codec.max_bits())
}

fn no_kernels(codec: &dyn BulkCodec) -> BulkError {
    BulkError::Gpu(format!(
        "no GPU kernels for `{}` (the GPU engine codes mpc, magbdi and dpc); use --engine parallel",
        codec.algo()
    ))
}
