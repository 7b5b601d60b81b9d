//! Plain DPC (`docs/spec/dpc.md`) on the GPU: the kernels of
//! `wgsl/dpc_{compress,decompress}.wgsl`, bit-exact with [`golden::dpc::Dpc`]
//! (`BlockCodec` form). Any block size [`DpcParams`] accepts; 4-byte
//! segments only (the bulk codec's geometry). The sector size does not
//! change plain DPC packets and is not needed.

use super::uniform::DpcUniform;
use super::GpuAlgo;
use crate::BulkError;
use golden::dpc::DpcParams;

/// The GPU kernels for `p`; other than 4-byte segments are refused.
pub fn algo(p: &DpcParams) -> Result<GpuAlgo, BulkError> {
    if p.segment_bytes() != 4 {
        return Err(BulkError::Config(format!(
            "dpc on the GPU: {}-byte segments; the GPU kernels code 4-byte segments only",
            p.segment_bytes()
        )));
    }
    let segs = u32::try_from(p.segments())
        .map_err(|_| BulkError::Config(format!("dpc on the GPU: {} segments", p.segments())))?;
    let slot_words = (1 + 8 * p.block_bytes()).div_ceil(32) as u32;
    Ok(GpuAlgo {
        name: "dpc",
        source: include_str!("wgsl/dpc_compress.wgsl").to_string(),
        decompress: include_str!("wgsl/dpc_decompress.wgsl").to_string(),
        params: GpuAlgo::params_of(&DpcUniform {
            n: 0,
            segs,
            slot_words,
            pad3: 0,
        }),
        tables: vec![0],
        block_words: segs,
        slot_words,
    })
}
