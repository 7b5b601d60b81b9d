//! Generators of the MPC compressor and decompressor RTL from a model set
//! (docs/hw/mpc-interface.md, mpc-compressor.md, mpc-decompressor.md).

pub mod compressor;
pub mod decompressor;
pub mod probes;
pub mod regmap;
pub mod slots;
pub mod table1;

use std::path::Path;

use golden::mpc::{model, ModelSet};

use crate::family::{Family, GenError, Side, Unit};
use crate::ir::{IrError, Module};
use crate::params::{FamilyParams, MpcKeys};
use crate::unit::UnitDescription;
use probes::StageProbes;
pub use slots::{SlotError, SlotSpec};

/// The MPC units, in the order of `params.json`.
pub const UNITS: [Unit; 2] = [Unit::Mpc(Side::Compressor), Unit::Mpc(Side::Decompressor)];

/// How the units are built: the compressor has 3 (the default) or 4
/// stages, the decompressor 4 (the default) to 8; the programmable slots
/// ([`SlotSpec`], none by default; a compressor with slots has
/// [`slots::SLOT_COMPRESSOR_STAGES`] stages).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    compressor_stages: usize,
    decompressor_stages: usize,
    slots: SlotSpec,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            compressor_stages: COMPRESSOR_LATENCY as usize,
            decompressor_stages: DECOMPRESSOR_LATENCY as usize,
            slots: SlotSpec::none(),
        }
    }
}

impl Options {
    /// Options with a compressor of `compressor` and a decompressor of
    /// `decompressor` pipeline stages ([`COMPRESSOR_STAGES`],
    /// [`DECOMPRESSOR_STAGES`]).
    pub fn with_stages(compressor: usize, decompressor: usize) -> Result<Options, GenError> {
        if !COMPRESSOR_STAGES.contains(&compressor) {
            return Err(GenError::CompressorStages(compressor));
        }
        if !DECOMPRESSOR_STAGES.contains(&decompressor) {
            return Err(GenError::DecompressorStages(decompressor));
        }
        Ok(Options {
            compressor_stages: compressor,
            decompressor_stages: decompressor,
            slots: SlotSpec::none(),
        })
    }

    /// Options of units with the programmable slots `slots`: with slots, a
    /// compressor of [`slots::SLOT_COMPRESSOR_STAGES`] stages and a
    /// decompressor of [`decompressor::slot_stages`] stages; without, the
    /// depths of [`Options::with_stages`]. `None`: the default depth.
    pub fn with_slots(
        slots: SlotSpec,
        compressor: Option<usize>,
        decompressor: Option<usize>,
    ) -> Result<Options, SlotError> {
        let (c_range, c_default, d_range, d_default) = if slots.k() == 0 {
            (
                COMPRESSOR_STAGES,
                COMPRESSOR_LATENCY as usize,
                DECOMPRESSOR_STAGES,
                DECOMPRESSOR_LATENCY as usize,
            )
        } else {
            (
                slots::SLOT_COMPRESSOR_STAGE_RANGE,
                slots::SLOT_COMPRESSOR_STAGES,
                decompressor::slot_stages(&slots),
                decompressor::slot_default_stages(&slots),
            )
        };
        let compressor = compressor.unwrap_or(c_default);
        if !c_range.contains(&compressor) {
            return Err(SlotError::CompressorStages {
                stages: compressor,
                min: *c_range.start(),
                max: *c_range.end(),
            });
        }
        let decompressor = decompressor.unwrap_or(d_default);
        if !d_range.contains(&decompressor) {
            return Err(SlotError::DecompressorStages {
                stages: decompressor,
                min: *d_range.start(),
                max: *d_range.end(),
            });
        }
        Ok(Options {
            compressor_stages: compressor,
            decompressor_stages: decompressor,
            slots,
        })
    }

    /// The programmable slots.
    pub fn slots(&self) -> SlotSpec {
        self.slots
    }

    /// Options with a decompressor of `stages` pipeline stages and the
    /// default compressor.
    pub fn with_decompressor_stages(stages: usize) -> Result<Options, GenError> {
        Options::with_stages(COMPRESSOR_LATENCY as usize, stages)
    }

    pub fn compressor_stages(&self) -> usize {
        self.compressor_stages
    }

    pub fn decompressor_stages(&self) -> usize {
        self.decompressor_stages
    }
}

/// Pipeline latency of the compressor at the default depth (edges from
/// input to output).
pub const COMPRESSOR_LATENCY: u32 = 3;
/// `Ok` when `stages` lies in `range`, else the generator's error naming
/// `what`.
pub(crate) fn check_stages(
    what: &str,
    stages: usize,
    range: &std::ops::RangeInclusive<usize>,
) -> Result<(), IrError> {
    if range.contains(&stages) {
        return Ok(());
    }
    Err(IrError::ParameterOutOfRange {
        what: what.to_string(),
        value: stages as u64,
        min: *range.start() as u64,
        max: *range.end() as u64,
    })
}

/// The compressor depths `gen --compressor-stages` accepts.
pub const COMPRESSOR_STAGES: std::ops::RangeInclusive<usize> = 3..=4;
/// Pipeline latency of the decompressor at the default depth.
pub const DECOMPRESSOR_LATENCY: u32 = 4;
/// The decompressor depths `gen --decompressor-stages` accepts.
pub const DECOMPRESSOR_STAGES: std::ops::RangeInclusive<usize> = 4..=8;

/// The stage probes the generators emit for a model set (default depths).
pub fn stage_probes(set: &ModelSet) -> Result<StageProbes, IrError> {
    Ok(StageProbes {
        compressor: compressor::build_described(set)?.1.probes,
        decompressor: decompressor::build_described(set)?.1.probes,
    })
}

/// What the MPC units are generated from: a model set with the SHA-256
/// and path of its model file (for the headers and `params.json`), and the
/// pipeline depths.
#[derive(Clone, Debug)]
pub struct MpcConfig {
    pub set: ModelSet,
    /// SHA-256 of the model file (hex).
    pub sha256: String,
    /// The model file as the headers name it.
    pub model_file: String,
    pub options: Options,
}

impl MpcConfig {
    /// Load the model set in `model` (a directory holding `model.toml`, or
    /// the model file itself).
    pub fn load(model: &Path, options: Options) -> Result<MpcConfig, GenError> {
        let (set, sha256) = ModelSet::load_with_sha256(model)?;
        let model_file = if model.is_dir() {
            model.join(model::MODEL_FILE)
        } else {
            model.to_path_buf()
        };
        Ok(MpcConfig {
            set,
            sha256,
            model_file: model_file.display().to_string(),
            options,
        })
    }
}

impl Family for MpcConfig {
    const NAME: &'static str = "MPC";
    const UNITS: &'static [Unit] = &UNITS;

    fn build(&self, unit: Unit) -> Result<(Module, UnitDescription), GenError> {
        let (set, opts) = (&self.set, &self.options);
        Ok(match unit {
            Unit::Mpc(Side::Compressor) if opts.slots.k() > 0 => {
                compressor::build_slots_staged(set, opts.slots, opts.compressor_stages)?
            }
            Unit::Mpc(Side::Compressor) => compressor::build_staged(set, opts.compressor_stages)?,
            Unit::Mpc(Side::Decompressor) if opts.slots.k() > 0 => {
                decompressor::build_slots(set, opts.slots, opts.decompressor_stages)?
            }
            Unit::Mpc(Side::Decompressor) => {
                decompressor::build_staged(set, opts.decompressor_stages)?
            }
            other => return Err(Self::other_family(other)),
        })
    }

    fn header_lines(&self) -> Vec<String> {
        let set = &self.set;
        let mut lines = vec![
            format!(
                "Model set: {} ({} predictors, selection {}, {}-bit header)",
                set.name,
                set.predictors.len(),
                set.selection,
                set.header_bits()
            ),
            format!("Model file: {}", self.model_file),
            format!("Model SHA-256: {}", self.sha256),
        ];
        let slots = self.options.slots;
        if slots.k() > 0 {
            let ids = slots::Ids {
                custom: set.predictor_id(0) as usize,
                p: set.predictors.len(),
                k: slots.k(),
            };
            lines.push(format!(
                "Programmable slots: {} of form {} (header {} to {} bits with 0 to {} loaded)",
                slots.k(),
                slots.form().name,
                ids.header_bits(0),
                ids.max_header_bits(),
                slots.k()
            ));
        }
        lines
    }

    fn params(&self) -> FamilyParams {
        let set = &self.set;
        FamilyParams::Mpc(MpcKeys {
            model_set: set.name.clone(),
            model_sha256: self.sha256.clone(),
            header_bits: set.header_bits(),
            max_bits: set.max_bits(),
            len_bits: compressor::LEN_WIDTH,
            model_ids: (0..set.id_count() as u32).map(|i| set.id_name(i)).collect(),
            slots: regmap::optional_keys(
                set,
                self.options.slots().k(),
                self.options.slots().form(),
            ),
        })
    }
}
