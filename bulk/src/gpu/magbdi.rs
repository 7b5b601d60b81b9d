//! MAG-aware BDI (`docs/spec/mag-bdi.md`) on the GPU: the kernels of
//! `wgsl/magbdi_{compress,decompress}.wgsl`, bit-exact with
//! [`golden::magbdi::MagBdi`] (`BlockCodec` form: encoding, then the stored
//! bytes). Any block size and MAG the golden [`Table`] accepts, both delta
//! modes; 4-byte bases only (the bulk codec's geometry). The size table
//! travels in `tables` as (bytes, delta bits, used bits) per encoding.

use super::uniform::MagBdiUniform;
use super::GpuAlgo;
use crate::BulkError;
use golden::magbdi::{DeltaMode, Params, Table};

/// The GPU kernels for `p`; invalid parameters and bases other than 4
/// bytes are refused.
pub fn algo(p: &Params) -> Result<GpuAlgo, BulkError> {
    let table = Table::new(*p).map_err(|e| BulkError::Config(e.to_string()))?;
    if p.base_bytes != 4 {
        return Err(BulkError::Config(format!(
            "magbdi on the GPU: {}-byte base; the GPU kernels code 4-byte bases only",
            p.base_bytes
        )));
    }
    let word = |x: usize| {
        u32::try_from(x).map_err(|_| BulkError::Config(format!("magbdi on the GPU: {x} too large")))
    };
    let vals = word(p.values())?;
    let ebits = table.encoding_bits();
    let mut tables = Vec::with_capacity(3 * table.sizes.len());
    for s in &table.sizes {
        tables.extend([word(s.bytes)?, s.delta_bits, word(s.used_bits)?]);
    }
    let slot_words = word((ebits as usize + 8 * p.block_bytes).div_ceil(32))?;
    Ok(GpuAlgo {
        name: "magbdi",
        source: include_str!("wgsl/magbdi_compress.wgsl").to_string(),
        decompress: include_str!("wgsl/magbdi_decompress.wgsl").to_string(),
        params: GpuAlgo::params_of(&MagBdiUniform {
            n: 0,
            vals,
            ebits,
            sizes: table.raw_code(),
            signed_mode: u32::from(p.mode == DeltaMode::Signed),
            slot_words,
            pad6: 0,
            pad7: 0,
        }),
        tables,
        block_words: vals,
        slot_words,
    })
}
