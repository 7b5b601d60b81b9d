//! Compression ratios of a model set on the split's test sets, measured with
//! the golden [`MpcCodec`]: ratio = sum of original bits / sum of compressed
//! bits (header included).

use rayon::prelude::*;

use datafiles::corpus::{AppRole, Block, Corpus, Split};
use golden::mpc::{ModelSet, MpcCodec, BLOCK_BYTES};

/// Original and compressed bits of a block set, and model-ID use.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    pub blocks: u64,
    pub orig_bits: u64,
    pub comp_bits: u64,
    /// Blocks per model ID.
    pub model_use: Vec<u64>,
}

impl Tally {
    /// Original over compressed bits; `None` for an empty set (no blocks).
    pub fn ratio(&self) -> Option<f64> {
        crate::eval::ratio_of(self.orig_bits, self.comp_bits, self.blocks)
    }

    pub fn add(&mut self, o: &Tally) {
        self.blocks += o.blocks;
        self.orig_bits += o.orig_bits;
        self.comp_bits += o.comp_bits;
        if self.model_use.len() < o.model_use.len() {
            self.model_use.resize(o.model_use.len(), 0);
        }
        for (a, b) in self.model_use.iter_mut().zip(&o.model_use) {
            *a += b;
        }
    }
}

/// Compress `blocks` with `codec` (in parallel) and tally.
pub fn tally<'a>(codec: &MpcCodec, blocks: impl IntoIterator<Item = &'a Block>) -> Tally {
    let v: Vec<&Block> = blocks.into_iter().collect();
    let ids = codec.model_set().id_count();
    v.par_chunks(8192)
        .map(|chunk| {
            let mut t = Tally {
                model_use: vec![0; ids],
                ..Tally::default()
            };
            for b in chunk {
                let c = codec.compress(b);
                t.blocks += 1;
                t.orig_bits += 8 * BLOCK_BYTES as u64;
                t.comp_bits += c.len as u64;
                if let Some(u) = t.model_use.get_mut(c.model as usize) {
                    *u += 1;
                }
            }
            t
        })
        .reduce(Tally::default, |mut a, b| {
            a.add(&b);
            a
        })
}

/// The test-set tally of every application (corpus order).
pub fn evaluate(
    set: &ModelSet,
    corpus: &Corpus,
    split: &Split,
    mut progress: impl FnMut(usize),
) -> Vec<Tally> {
    let codec = MpcCodec::new(set);
    (0..corpus.apps.len())
        .map(|a| {
            progress(a);
            tally(&codec, split.app_test_blocks(corpus, a))
        })
        .collect()
}

/// Integer classes (for the paper's integer figure).
pub const INT_CLASSES: [&str; 4] = ["int8", "int16", "int32", "int64"];
/// Floating-point classes.
pub const FP_CLASSES: [&str; 4] = ["fp16", "bf16", "fp32", "fp64"];

/// The paper's aggregates from per-application tallies.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    pub seen: Tally,
    pub unseen: Tally,
    /// Seen + unseen.
    pub overall: Tally,
    pub int: Tally,
    pub fp: Tally,
    /// mixed + workload files.
    pub evaluation: Tally,
}

impl Summary {
    pub fn of(corpus: &Corpus, split: &Split, tallies: &[Tally]) -> Summary {
        let mut s = Summary::default();
        for (a, t) in tallies.iter().enumerate() {
            let class = corpus.apps[a].entry.class.as_str();
            match split.apps[a].role {
                AppRole::Seen => s.seen.add(t),
                AppRole::Unseen => s.unseen.add(t),
                AppRole::Evaluation => {
                    s.evaluation.add(t);
                    continue;
                }
            }
            s.overall.add(t);
            if INT_CLASSES.contains(&class) {
                s.int.add(t);
            }
            if FP_CLASSES.contains(&class) {
                s.fp.add(t);
            }
        }
        s
    }

    /// Seen + unseen tally of the applications of `classes`.
    pub fn classes(corpus: &Corpus, split: &Split, tallies: &[Tally], classes: &[String]) -> Tally {
        let mut t = Tally::default();
        for (a, x) in tallies.iter().enumerate() {
            if split.apps[a].role != AppRole::Evaluation
                && classes.contains(&corpus.apps[a].entry.class)
            {
                t.add(x);
            }
        }
        t
    }
}
