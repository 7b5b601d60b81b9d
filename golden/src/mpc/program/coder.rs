//! A model set plus a slot image: the programmed unit's coder
//! (`docs/spec/program-slots.md`, "Model IDs and coding").

use super::{set_tag, ImageError, SlotImage};
use crate::mpc::model::ModelSet;
use crate::mpc::reference;
use crate::mpc::{CompressedBlock, DecodeError, MpcCodec, BLOCK_BYTES};

/// The hard-wired predictors of a model set plus the loaded slots of an
/// image.
///
/// Model IDs: the set's custom models, its hard-wired predictors, the
/// loaded slots in slot order (an unloaded slot takes no ID), then the raw
/// escape; the header has `max(1, ceil(log2 N))` bits for the N IDs. With
/// no slot loaded (K = 0 or the reset value) the unit is the hard-wired
/// set, bit for bit. Selection is the set's rule over all predictors in
/// model-ID order, ties to the lowest ID: a hard-wired predictor wins
/// every tie against a slot.
#[derive(Clone, Debug)]
pub struct ProgrammedSet {
    /// The hard-wired predictors followed by the loaded slots.
    expanded: ModelSet,
    /// Per slot of the image: its model ID, or `None` when unloaded.
    slot_ids: Vec<Option<u32>>,
}

impl ProgrammedSet {
    /// `set` programmed with `image`; refused when the image was made for
    /// another hard-wired set or gives more than 256 model IDs.
    pub fn new(set: &ModelSet, image: &SlotImage) -> Result<ProgrammedSet, ImageError> {
        if image.hard_wired as usize != set.predictors.len() {
            return Err(ImageError::HardWired {
                image: image.hard_wired,
                set: set.predictors.len(),
            });
        }
        let tag = set_tag(set);
        if image.set_tag != tag {
            return Err(ImageError::SetTag {
                image: image.set_tag,
                set: tag,
            });
        }
        let ids = set.id_count() + image.loaded();
        if ids > 256 {
            return Err(ImageError::TooManyIds {
                ids,
                k: image.slots.len(),
            });
        }
        let mut expanded = set.clone();
        let mut slot_ids = Vec::with_capacity(image.slots.len());
        for (j, s) in image.slots.iter().enumerate() {
            slot_ids.push(s.as_ref().map(|s| {
                expanded
                    .predictors
                    .push(s.predictor(&format!("slot{j}"), &set.predictors));
                expanded.predictor_id(expanded.predictors.len() - 1)
            }));
        }
        Ok(ProgrammedSet { expanded, slot_ids })
    }

    /// The set with the loaded slots as predictors after the hard-wired
    /// ones: the same model IDs, header and coding as the programmed unit.
    pub fn expanded(&self) -> &ModelSet {
        &self.expanded
    }

    /// Number of slots (K), loaded or not.
    pub fn slots(&self) -> usize {
        self.slot_ids.len()
    }

    /// The model ID of slot `j`, `None` when it is unloaded (or past K).
    pub fn slot_id(&self, j: usize) -> Option<u32> {
        self.slot_ids.get(j).copied().flatten()
    }

    /// Model IDs of the unit (raw included).
    pub fn id_count(&self) -> usize {
        self.expanded.id_count()
    }

    /// Header bits.
    pub fn header_bits(&self) -> u32 {
        self.expanded.header_bits()
    }

    /// A fast codec with identical output.
    pub fn fast_codec(&self) -> MpcCodec {
        MpcCodec::new(&self.expanded)
    }

    /// Compress one block (reference path).
    pub fn compress(&self, block: &[u8; BLOCK_BYTES]) -> CompressedBlock {
        reference::compress(block, &self.expanded)
    }

    /// Decode one block of exactly `len` bits (reference path).
    pub fn decompress(&self, bytes: &[u8], len: usize) -> Result<[u8; BLOCK_BYTES], DecodeError> {
        reference::decompress(bytes, len, &self.expanded)
    }
}
