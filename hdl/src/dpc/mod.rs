//! Generators of the Dual Pattern Compression units:
//! compressors for plain DPC, DF-TRUC and DF-MAN, decompressors for plain
//! DPC (which also decodes DF-MAN) and DF-TRUC. Interface and structure:
//! `docs/hw/dpc.md`; format: `docs/spec/dpc.md`.

pub mod compressor;
pub mod decompressor;
pub mod packing;

use golden::dpc::{DpcParams, Mode};

use crate::circuits::bits_for;
use crate::family::{Family, GenError, Unit};
use crate::ir::{IrError, Module};
use crate::params::{DpcKeys, FamilyParams};
use crate::unit::UnitDescription;

/// Pipeline latency of every DPC unit at its default depth (edges from
/// input to output).
pub const COMPRESSOR_LATENCY: u32 = 2;
pub const DECOMPRESSOR_LATENCY: u32 = 2;

/// The deepest decompressor `gen dpc --decompressor-stages` builds.
pub const MAX_DECOMPRESSOR_STAGES: usize = 3;

/// `stages` of a DPC decompressor within its range (2 to
/// [`MAX_DECOMPRESSOR_STAGES`]).
pub(crate) fn check_decompressor_stages(stages: usize) -> Result<(), IrError> {
    let min = DECOMPRESSOR_LATENCY as usize;
    if (min..=MAX_DECOMPRESSOR_STAGES).contains(&stages) {
        Ok(())
    } else {
        Err(IrError::ParameterOutOfRange {
            what: "pipeline stages of a DPC decompressor".to_string(),
            value: stages as u64,
            min: min as u64,
            max: MAX_DECOMPRESSOR_STAGES as u64,
        })
    }
}

/// A DPC unit: a compressor of a mode, or a decompressor (`Mode::Plain`,
/// which also decodes DF-MAN, or `Mode::Truc`). The DPC part of
/// [`Unit::Dpc`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DpcUnit {
    Compressor(Mode),
    Decompressor(Mode),
}

impl DpcUnit {
    /// Every DPC unit, in the order of `params.json`.
    pub const ALL: [DpcUnit; 5] = [
        DpcUnit::Compressor(Mode::Plain),
        DpcUnit::Compressor(Mode::Truc),
        DpcUnit::Compressor(Mode::Man),
        DpcUnit::Decompressor(Mode::Plain),
        DpcUnit::Decompressor(Mode::Truc),
    ];

    /// The DPC mode of the unit.
    pub fn mode(self) -> Mode {
        match self {
            DpcUnit::Compressor(m) | DpcUnit::Decompressor(m) => m,
        }
    }

    /// The Verilog module name.
    pub fn module_name(self) -> &'static str {
        Unit::Dpc(self).module_name()
    }
}

impl From<DpcUnit> for Unit {
    fn from(u: DpcUnit) -> Unit {
        Unit::Dpc(u)
    }
}

/// The DPC units, in the order of `params.json`.
pub const UNITS: [Unit; 5] = [
    Unit::Dpc(DpcUnit::ALL[0]),
    Unit::Dpc(DpcUnit::ALL[1]),
    Unit::Dpc(DpcUnit::ALL[2]),
    Unit::Dpc(DpcUnit::ALL[3]),
    Unit::Dpc(DpcUnit::ALL[4]),
];

/// Packet bus width: the mask (DF-TRUC), C and the raw block.
pub fn packet_width(p: &DpcParams, mode: Mode) -> u32 {
    let kp = if mode == Mode::Truc { p.sectors() } else { 0 };
    (kp + p.max_bits()) as u32
}

/// Width of the `*_len` ports.
pub fn len_width(p: &DpcParams, mode: Mode) -> u32 {
    bits_for(packet_width(p, mode) as u64)
}

impl Family for DpcParams {
    const NAME: &'static str = "DPC";
    const UNITS: &'static [Unit] = &UNITS;

    fn build(&self, unit: Unit) -> Result<(Module, UnitDescription), GenError> {
        Ok(match unit {
            Unit::Dpc(DpcUnit::Compressor(mode)) => compressor::build_described(self, mode)?,
            Unit::Dpc(DpcUnit::Decompressor(mode)) => {
                decompressor::build_described(self, mode == Mode::Truc)?
            }
            other => return Err(Self::other_family(other)),
        })
    }

    fn header_lines(&self) -> Vec<String> {
        let p = self;
        vec![
            format!(
                "DPC: {}-byte block, {}-byte segments ({} groups of {} bits), {}-byte sectors ({}-bit critical mask)",
                p.block_bytes(),
                p.segment_bytes(),
                p.groups(),
                p.segments(),
                p.sector_bytes(),
                p.sectors()
            ),
            "Format: docs/spec/dpc.md; interface: docs/hw/dpc.md".to_string(),
        ]
    }

    fn params(&self) -> FamilyParams {
        let p = self;
        FamilyParams::Dpc(DpcKeys {
            block_bytes: p.block_bytes(),
            segment_bytes: p.segment_bytes(),
            sector_bytes: p.sector_bytes(),
            groups: p.groups(),
            segments: p.segments(),
            sectors: p.sectors(),
            max_bits: p.max_bits(),
            max_truc_bits: p.max_truc_bits(),
            len_bits: len_width(p, Mode::Plain),
            truc_len_bits: len_width(p, Mode::Truc),
        })
    }
}

/// A DPC geometry with the pipeline depth of its decompressors: what
/// `gen dpc --decompressor-stages N` generates ([`DpcParams`] alone is
/// the default depth).
#[derive(Clone, Copy, Debug)]
pub struct Staged {
    pub params: DpcParams,
    /// Stages of both decompressors (the compressors keep theirs).
    pub decompressor_stages: usize,
}

impl Staged {
    /// The geometry at a decompressor depth, checked against its range.
    pub fn new(params: DpcParams, decompressor_stages: usize) -> Result<Staged, IrError> {
        check_decompressor_stages(decompressor_stages)?;
        Ok(Staged {
            params,
            decompressor_stages,
        })
    }
}

impl Family for Staged {
    const NAME: &'static str = <DpcParams as Family>::NAME;
    const UNITS: &'static [Unit] = &UNITS;

    fn build(&self, unit: Unit) -> Result<(Module, UnitDescription), GenError> {
        Ok(match unit {
            Unit::Dpc(DpcUnit::Decompressor(mode)) => decompressor::build_staged(
                &self.params,
                mode == Mode::Truc,
                self.decompressor_stages,
            )?,
            other => self.params.build(other)?,
        })
    }

    fn header_lines(&self) -> Vec<String> {
        let mut lines = self.params.header_lines();
        if self.decompressor_stages != DECOMPRESSOR_LATENCY as usize {
            lines.push(format!(
                "Pipeline stages: decompressors {}",
                self.decompressor_stages
            ));
        }
        lines
    }

    fn params(&self) -> FamilyParams {
        self.params.params()
    }
}
