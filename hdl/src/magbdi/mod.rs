//! Generators of the MAG-aware BDI compressor and decompressor RTL
//! (docs/hw/mag-bdi.md) from a [`golden::magbdi::Params`].
//!
//! * [`compressor`]: one compressor unit per delta width of Eq. 1 in
//!   parallel, the priority select (smallest size first, else raw) and a
//!   registered output; one block per cycle, latency 1.
//! * [`decompressor`]: field extraction per size, a select by the encoding,
//!   and one vector add with the bitmask; latency 1.

pub mod compressor;
pub mod decompressor;

use std::path::{Path, PathBuf};

use golden::magbdi::{Params, Table};

use crate::family::{Family, GenError, Side, Unit};
use crate::ir::{IrError, Module};
use crate::params::{FamilyParams, MagBdiKeys, SizeEntry};
use crate::unit::UnitDescription;

/// The MAG-aware BDI units, in the order of `params.json`.
pub const UNITS: [Unit; 2] = [
    Unit::MagBdi(Side::Compressor),
    Unit::MagBdi(Side::Decompressor),
];

/// Pipeline latency of both units (registered outputs).
pub const LATENCY: usize = 1;

/// The default output directory name: `bdi-<block>-<mag>-<base>[-signed]`
/// (`bdi-128-32-4` for 128-byte blocks, a 32-byte MAG and 4-byte bases).
pub fn config_name(p: &Params) -> String {
    format!(
        "bdi-{}-{}-{}{}",
        p.block_bytes,
        p.mag_bytes,
        p.base_bytes,
        if p.mode == golden::magbdi::DeltaMode::Signed {
            "-signed"
        } else {
            ""
        }
    )
}

impl Family for Table {
    const NAME: &'static str = "MAG-aware BDI";
    const UNITS: &'static [Unit] = &UNITS;

    fn build(&self, unit: Unit) -> Result<(Module, UnitDescription), GenError> {
        Ok(match unit {
            Unit::MagBdi(Side::Compressor) => compressor::build_described(self)?,
            Unit::MagBdi(Side::Decompressor) => decompressor::build_described(self)?,
            other => return Err(Self::other_family(other)),
        })
    }

    fn header_lines(&self) -> Vec<String> {
        let p = &self.params;
        let sizes: Vec<String> = self
            .sizes
            .iter()
            .enumerate()
            .map(|(i, s)| format!("{i}={}B/{}b", s.bytes, s.delta_bits))
            .collect();
        vec![
            format!(
                "MAG-aware BDI: block {} B, MAG {} B, base {} B, {} deltas, {}-bit encoding",
                p.block_bytes,
                p.mag_bytes,
                p.base_bytes,
                p.mode,
                self.encoding_bits()
            ),
            format!(
                "Encodings (size/delta width, Eq. 1): {}, {}=raw",
                sizes.join(", "),
                self.raw_code()
            ),
        ]
    }

    fn params(&self) -> FamilyParams {
        let p = &self.params;
        FamilyParams::MagBdi(MagBdiKeys {
            block_bytes: p.block_bytes,
            mag_bytes: p.mag_bytes,
            base_bytes: p.base_bytes,
            mode: p.mode.to_string(),
            encoding_bits: self.encoding_bits(),
            raw_code: self.raw_code(),
            sizes: self
                .sizes
                .iter()
                .map(|s| SizeEntry {
                    bytes: s.bytes,
                    delta_bits: s.delta_bits,
                })
                .collect(),
        })
    }
}

/// Validate `params`, generate `units` into `out_dir` (with `files.f` and
/// `params.json`), and return the written paths. Bad parameters (e.g. no
/// delta width fits) fail before anything is written.
pub fn write_units(
    params: Params,
    out_dir: &Path,
    units: &[Unit],
    command_line: &str,
) -> Result<Vec<PathBuf>, GenError> {
    crate::family::write_units(&Table::new(params)?, out_dir, units, command_line)
}

/// Whether the `w`-bit expression `v` fits a `d`-bit delta field: unsigned,
/// the top `w-d` bits are zero; signed, the top `w-d+1` bits are all equal.
pub(crate) fn fits(
    v: &crate::ir::Expr,
    d: u32,
    mode: golden::magbdi::DeltaMode,
) -> Result<crate::ir::Expr, IrError> {
    let w = v.width();
    match mode {
        golden::magbdi::DeltaMode::Unsigned => Ok(v.slice(w - 1, d)?.reduce_or().not()),
        golden::magbdi::DeltaMode::Signed => {
            let top = v.slice(w - 1, d - 1)?;
            Ok(top.reduce_or().not().or(&top.reduce_and())?)
        }
    }
}
