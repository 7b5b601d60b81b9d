//! `params.json`: what a testbench or the synthesis flow needs to know about
//! a directory of generated units, one schema for every family
//! (docs/hw/mpc-interface.md, mag-bdi.md, dpc.md). The family's own keys
//! come first, tagged by `"unit"` (`"mpc"`, `"bdi"` or `"dpc"`); `units`,
//! the description of every generated unit, is common.
//!
//! Written pretty-printed by [`ParamsFile::to_json`]; read by [`read`],
//! strictly: an unknown or a missing key is an error naming it.

use std::path::Path;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize};

use crate::unit::{read_params_text, UnitDescription, UnitsError};

/// A `params.json`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ParamsFile {
    /// The family's keys, with the `"unit"` tag.
    #[serde(flatten)]
    pub family: FamilyParams,
    /// The generated units: ports, latency, stages and their registers,
    /// and the stage probes a co-simulation compares with the golden trace
    /// (docs/hw/cosim.md).
    pub units: Vec<UnitDescription>,
}

/// The family-specific keys of a `params.json`, tagged by `"unit"`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "unit")]
pub enum FamilyParams {
    #[serde(rename = "mpc")]
    Mpc(MpcKeys),
    #[serde(rename = "bdi")]
    MagBdi(MagBdiKeys),
    #[serde(rename = "dpc")]
    Dpc(DpcKeys),
}

impl FamilyParams {
    /// The `"unit"` tag.
    pub fn tag(&self) -> &'static str {
        match self {
            FamilyParams::Mpc(_) => "mpc",
            FamilyParams::MagBdi(_) => "bdi",
            FamilyParams::Dpc(_) => "dpc",
        }
    }
}

/// The MPC units' keys: the identity of the model set they were generated
/// from and the numbers of their interface.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MpcKeys {
    pub model_set: String,
    /// SHA-256 of the model file (hex), as in the Verilog headers.
    pub model_sha256: String,
    pub header_bits: u32,
    pub max_bits: u32,
    pub len_bits: u32,
    /// The name of every model ID, in ID order.
    pub model_ids: Vec<String>,
    /// The programmable slots' configuration port and register map
    /// (docs/hw/program-slots.md); absent for units without slots.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slots: Option<SlotsKeys>,
}

/// The `"slots"` key of an MPC `params.json`: what a driver or a simulator
/// needs to program the units' slots (docs/hw/program-slots.md sections 1,
/// 2 and 5). Written by [`crate::mpc::regmap::keys`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SlotsKeys {
    /// Slots in the units (K, at least 1).
    pub k: usize,
    /// The slot form's name (`docs/spec/program-slots.md` section 1).
    pub form: String,
    /// The slot form's image field value.
    pub form_id: u8,
    /// Width of `cfg_addr`.
    pub addr_bits: u32,
    /// Width of `cfg_wdata` (one register word).
    pub data_bits: u32,
    /// Width of `cfg_epoch`, `out_epoch` and `in_epoch`.
    pub epoch_bits: u32,
    /// Header bits `h(L)` of a block with `L` loaded slots, for
    /// `L = 0..=K` (the `out_model` width is the last).
    pub header_bits_loaded: Vec<u32>,
    /// Address of slot 0's register group: slot `s`'s group starts at
    /// `group_base + group_stride * s`.
    pub group_base: u32,
    /// Addresses between the groups of two consecutive slots.
    pub group_stride: u32,
    /// How the `SLOT_ROUTE` words reorder: `"benes-256"` (Benes network
    /// on the 256 stream bits), `"benes-32"` (on the 32 byte columns) or
    /// `"library"` (the library index).
    pub route_class: String,
    /// The bits of the `SLOT_ROUTE` words that are stored (switch settings,
    /// or the library index's bits), from bit 0 of word 0 on.
    pub route_bits: usize,
    /// The registers: global ones at an address, per-slot ones at an
    /// offset in each slot's group.
    pub registers: Vec<RegisterKeys>,
}

/// One register (or run of `words` consecutive registers) of
/// [`SlotsKeys::registers`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegisterKeys {
    /// `COMMIT`, `EPOCH`, `SLOT_FLAG`, `SLOT_RULES` or `SLOT_ROUTE`.
    pub name: String,
    /// `"global"`: `offset` is the address; `"slot"`: `offset` is the
    /// offset in each slot's group.
    pub scope: String,
    pub offset: u32,
    /// The address of word `w` (of slot `s`) as a formula in `s` and `w`.
    pub address_formula: String,
    /// Consecutive words (word `w` at `offset + w`).
    pub words: usize,
    /// The fields of each word.
    pub fields: Vec<FieldKeys>,
}

/// A field of a register word: `count` fields of `bits` bits, the first at
/// bit `lsb`, each next one `stride` bits higher.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FieldKeys {
    pub name: String,
    pub lsb: u32,
    pub bits: u32,
    pub count: u32,
    pub stride: u32,
}

/// The MAG-aware BDI units' keys.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MagBdiKeys {
    pub block_bytes: usize,
    pub mag_bytes: usize,
    pub base_bytes: usize,
    /// `"unsigned"` or `"signed"`.
    pub mode: String,
    pub encoding_bits: u32,
    pub raw_code: u32,
    /// Encoding `i` is `sizes[i]`.
    pub sizes: Vec<SizeEntry>,
}

/// One compressed size of [`MagBdiKeys::sizes`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SizeEntry {
    pub bytes: usize,
    pub delta_bits: u32,
}

/// The DPC units' keys.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DpcKeys {
    pub block_bytes: usize,
    pub segment_bytes: usize,
    pub sector_bytes: usize,
    pub groups: usize,
    pub segments: usize,
    pub sectors: usize,
    pub max_bits: usize,
    pub max_truc_bits: usize,
    pub len_bits: u32,
    pub truc_len_bits: u32,
}

impl ParamsFile {
    /// The text of the file: pretty-printed JSON with a final newline.
    pub fn to_json(&self) -> Result<String, serde_json::Error> {
        let mut text = serde_json::to_string_pretty(self)?;
        text.push('\n');
        Ok(text)
    }

    /// Parse the text of a `params.json`, strictly.
    pub fn parse(text: &str) -> Result<ParamsFile, serde_json::Error> {
        serde_json::from_str(text)
    }

    /// The description of module `module`, if the file has one.
    pub fn unit(&self, module: &str) -> Option<&UnitDescription> {
        self.units.iter().find(|u| u.module == module)
    }
}

/// Strict: `units` and the family keys are read separately (serde's
/// `deny_unknown_fields` does not combine with a flattened field), each
/// refusing unknown and missing keys.
impl<'de> Deserialize<'de> for ParamsFile {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<ParamsFile, D::Error> {
        let mut map = serde_json::Map::<String, serde_json::Value>::deserialize(d)?;
        let units = map
            .remove("units")
            .ok_or_else(|| D::Error::missing_field("units"))?;
        let units = Vec::<UnitDescription>::deserialize(units)
            .map_err(|e| D::Error::custom(format_args!("units: {e}")))?;
        let family =
            FamilyParams::deserialize(serde_json::Value::Object(map)).map_err(D::Error::custom)?;
        Ok(ParamsFile { family, units })
    }
}

/// The `params.json` at `path`, refused when larger than
/// [`crate::unit::MAX_PARAMS_BYTES`], not JSON, or not of this schema (the
/// message names the key).
pub fn read(path: &Path) -> Result<ParamsFile, UnitsError> {
    let text = read_params_text(path)?;
    ParamsFile::parse(&text).map_err(|e| UnitsError::Parse {
        path: path.to_path_buf(),
        message: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_slots_key_is_absent_without_slots_and_read_strictly() {
        let keys = MpcKeys {
            model_set: "s".to_string(),
            model_sha256: "0".repeat(64),
            header_bits: 3,
            max_bits: 259,
            len_bits: 9,
            model_ids: vec!["raw".to_string()],
            slots: None,
        };
        let file = ParamsFile {
            family: FamilyParams::Mpc(keys.clone()),
            units: vec![],
        };
        let text = file.to_json().expect("json");
        assert!(!text.contains("slots"), "{text}");
        assert_eq!(ParamsFile::parse(&text).expect("reads back"), file);
        let set = golden::mpc::ModelSet::parse(
            include_str!("../../models/example/model.toml"),
            "example",
        )
        .expect("models/example is valid");
        let form = golden::mpc::program::Form::by_name("stride-lib").expect("form");
        let with = ParamsFile {
            family: FamilyParams::Mpc(MpcKeys {
                slots: Some(crate::mpc::regmap::keys(&set, 1, form)),
                ..keys
            }),
            units: vec![],
        };
        let text = with.to_json().expect("json");
        assert!(text.contains("\"slots\": {"), "{text}");
        assert_eq!(ParamsFile::parse(&text).expect("reads back"), with);
        // an unknown key inside `slots` or a register is refused, naming it
        for (from, to) in [
            ("\"route_bits\"", "\"route_bitz\""),
            ("\"address_formula\"", "\"address\""),
        ] {
            let e = ParamsFile::parse(&text.replacen(from, to, 1)).expect_err("unknown key");
            assert!(e.to_string().contains(&to[1..to.len() - 1]), "{e}");
        }
    }
}
