//! A model set plus a slot image: the programmed unit's coder
//! (`docs/spec/program-slots.md`, "Coding").

use super::{set_tag, ImageError, SlotImage};
use crate::mpc::model::{ByteRule, ModelKind, ModelSet, Predictor};
use crate::mpc::reference::{self, trace_predictor};
use crate::mpc::select::{self, CandidateScore, Choice};
use crate::mpc::trace::PredictorTrace;
use crate::mpc::{
    table1, CompressedBlock, DecodeError, MpcCodec, BLOCK_BYTES, MAX_BLOCK_BYTES, STREAM_BITS,
};

/// Why a programmed unit could not decode a block.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProgrammedDecodeError {
    #[error("model ID {id} in the header names slot {slot}, which is not loaded")]
    UnloadedSlot { id: u32, slot: usize },
    #[error(transparent)]
    Decode(#[from] DecodeError),
}

/// The hard-wired predictors of a model set plus the K slots of an image.
///
/// Model IDs: the set's custom models, its hard-wired predictors, the K
/// slots in image order (loaded or not), then the raw escape; the header
/// has `max(1, ceil(log2 N))` bits for the N IDs.
#[derive(Clone, Debug)]
pub struct ProgrammedSet {
    /// The hard-wired predictors followed by one predictor per slot (an
    /// unloaded slot holds a placeholder that is never selected).
    expanded: ModelSet,
    hard_wired: usize,
    /// Per slot: loaded.
    loaded: Vec<bool>,
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
        let k = image.slots.len();
        let ids = set.id_count() + k;
        if ids > 256 {
            return Err(ImageError::TooManyIds { ids, k });
        }
        let mut expanded = set.clone();
        for (j, s) in image.slots.iter().enumerate() {
            let name = format!("slot{j}");
            expanded.predictors.push(match s {
                Some(s) => s.predictor(&name, &set.predictors),
                // never selected; a copy of the first hard-wired predictor
                // also loses every tie to it, so the plain codec of the
                // expanded set selects exactly as the programmed unit
                None => Predictor {
                    name,
                    ..set.predictors.first().cloned().unwrap_or(Predictor {
                        name: String::new(),
                        bytes: [ByteRule::Root; BLOCK_BYTES],
                        reorder: std::array::from_fn(|o| o as u8),
                    })
                },
            });
        }
        Ok(ProgrammedSet {
            expanded,
            hard_wired: set.predictors.len(),
            loaded: image.slots.iter().map(Option::is_some).collect(),
        })
    }

    /// The set with every slot as a predictor after the hard-wired ones
    /// (the same model IDs and header as the programmed unit).
    pub fn expanded(&self) -> &ModelSet {
        &self.expanded
    }

    /// Number of slots (K).
    pub fn slots(&self) -> usize {
        self.loaded.len()
    }

    /// Whether every slot is loaded.
    pub fn all_loaded(&self) -> bool {
        self.loaded.iter().all(|&l| l)
    }

    /// Model IDs of the unit (raw included).
    pub fn id_count(&self) -> usize {
        self.expanded.id_count()
    }

    /// Header bits.
    pub fn header_bits(&self) -> u32 {
        self.expanded.header_bits()
    }

    /// Whether predictor `i` of the expanded set may be selected.
    pub fn selectable(&self, i: usize) -> bool {
        i < self.hard_wired || self.loaded.get(i - self.hard_wired) == Some(&true)
    }

    /// The slot a model ID names, if any.
    fn slot_of(&self, id: u32) -> Option<usize> {
        match self.expanded.kind_of(id) {
            Some(ModelKind::Predictor(i)) if i >= self.hard_wired => Some(i - self.hard_wired),
            _ => None,
        }
    }

    /// A fast codec with identical output: the plain codec of the expanded
    /// set, in which an unloaded slot is a copy of the first hard-wired
    /// predictor (equal scores, higher ID: it never wins).
    pub fn fast_codec(&self) -> MpcCodec {
        MpcCodec::new(&self.expanded)
    }

    /// Compress one block (reference path): every selectable predictor
    /// transforms it, the set's selection rule picks among them in model-ID
    /// order, ties to the lowest ID.
    pub fn compress(&self, block: &[u8; BLOCK_BYTES]) -> CompressedBlock {
        let idx: Vec<usize> = (0..self.expanded.predictors.len())
            .filter(|&i| self.selectable(i))
            .collect();
        let traces: Vec<PredictorTrace> = idx
            .iter()
            .map(|&i| trace_predictor(block, &self.expanded.predictors[i]))
            .collect();
        let scores: Vec<CandidateScore> = traces.iter().map(|t| t.score).collect();
        let set = &self.expanded;
        if scores.is_empty() {
            return reference::compress(block, set);
        }
        let (choice, bits) = match select::choose(set, block, &scores) {
            Choice::Predictor(c) => (Choice::Predictor(idx[c]), scores[c].code_bits),
            other => (other, 0),
        };
        let id = select::finish(set, choice, bits);
        let mut w = crate::bits::BitWriter::<MAX_BLOCK_BYTES>::new();
        w.put(id, set.header_bits());
        match set.kind_of(id) {
            Some(ModelKind::ZeroBlock) => {}
            Some(ModelKind::SameWords) => {
                for &b in &block[0..4] {
                    w.put(b as u32, 8);
                }
            }
            Some(ModelKind::Predictor(i)) => {
                let c = idx.iter().position(|&x| x == i).unwrap_or(0);
                table1::encode_symbols(&traces[c].symbols, |code| {
                    let (b, l) = code.bits();
                    w.put(b, l);
                });
            }
            Some(ModelKind::Raw) | None => {
                for &b in block {
                    w.put(b as u32, 8);
                }
            }
        }
        let (bytes, len) = w.finish();
        CompressedBlock {
            model: id,
            len: len as u32,
            bytes,
        }
    }

    /// Decode one block of exactly `len` bits; a header naming an unloaded
    /// slot is refused.
    pub fn decompress(
        &self,
        bytes: &[u8],
        len: usize,
    ) -> Result<[u8; BLOCK_BYTES], ProgrammedDecodeError> {
        let h = self.header_bits() as usize;
        if len >= h && bytes.len() * 8 >= h {
            let id = (0..h).fold(0u32, |acc, i| {
                acc << 1 | ((bytes[i / 8] >> (7 - i % 8)) & 1) as u32
            });
            if let Some(slot) = self.slot_of(id) {
                if !self.loaded[slot] {
                    return Err(ProgrammedDecodeError::UnloadedSlot { id, slot });
                }
            }
        }
        Ok(reference::decompress(bytes, len, &self.expanded)?)
    }
}

/// Coded bits (header excluded) of `block` under predictor `p` alone, at
/// most the raw 256.
pub fn predictor_bits(block: &[u8; BLOCK_BYTES], p: &Predictor) -> u32 {
    table1::encoded_len(&trace_predictor(block, p).symbols).min(STREAM_BITS as u32)
}
