//! Label-free training of K predictors (docs/spec/training.md, "Training
//! without labels"): the training blocks are clustered by the predictor
//! that codes them shortest, and every predictor is retrained on its
//! cluster, until the total coded size stops improving.
//!
//! 1. Start from one predictor trained on every block.
//! 2. Until there are K: split the cluster with the most coded bits. A new
//!    predictor is trained on the half of its blocks that its predictor
//!    codes longest (ties by block order); the cluster's blocks then go to
//!    whichever of the two codes them shorter, and both are retrained.
//! 3. Rounds: every block goes to the predictor that codes it shortest
//!    (ties to the lower index); every predictor is retrained on its
//!    blocks; a cluster left with fewer than [`MIN_CLUSTER`] blocks is
//!    re-seeded by splitting the largest one. Stop when a round improves
//!    the total by less than 0.1%, or after `rounds` rounds, and keep the
//!    best predictors seen.
//!
//! Lengths are those of the golden codec with a one-predictor set (no
//! custom models: the zero-block and same-words blocks are left out of
//! training, as for labelled training). Everything is deterministic: same
//! blocks and options, same predictors.

use rayon::prelude::*;

use super::{even_sample, train_predictor, TrainError, TrainOptions, TrainedPredictor};
use datafiles::corpus::{is_custom_block, Block};
use golden::mpc::model::{CustomModels, ModelSet, Predictor, Provenance, Selection};
use golden::mpc::MpcCodec;

/// Fewest blocks a cluster keeps through a round.
pub const MIN_CLUSTER: usize = 64;

/// Options of the clustering.
#[derive(Clone, Debug)]
pub struct ClusterOptions {
    /// Predictors to train (1 to 64).
    pub k: usize,
    /// Most refinement rounds after the K predictors exist.
    pub rounds: usize,
    /// Most blocks clustered (an evenly spaced sample of the training
    /// blocks); the final predictors are trained on their share of every
    /// training block.
    pub sample: usize,
}

impl Default for ClusterOptions {
    fn default() -> Self {
        ClusterOptions {
            k: 5,
            rounds: 6,
            sample: 1 << 18,
        }
    }
}

/// One step of the clustering, for the report and the progress bar.
#[derive(Clone, Debug, PartialEq)]
pub struct ClusterStep {
    /// `split` (a cluster was split) or `round`.
    pub kind: &'static str,
    pub predictors: usize,
    /// Coded bits of the clustered sample, each block with its best
    /// predictor.
    pub bits: u64,
    pub blocks: usize,
}

/// Per block, the coded length under each predictor.
fn lengths(blocks: &[Block], predictors: &[Predictor]) -> Vec<Vec<u32>> {
    let codecs: Vec<MpcCodec> = predictors
        .iter()
        .map(|p| {
            MpcCodec::new(&ModelSet {
                name: "cluster".into(),
                selection: Selection::Exact,
                custom: CustomModels {
                    zero_block: false,
                    same_words: false,
                },
                predictors: vec![p.clone()],
                provenance: Provenance::default(),
            })
        })
        .collect();
    blocks
        .par_iter()
        .map(|b| codecs.iter().map(|c| c.compress(b).len).collect())
        .collect()
}

/// Index of the shortest length (the lowest index among equals).
fn best(lens: &[u32]) -> usize {
    let mut at = 0;
    for (i, &l) in lens.iter().enumerate() {
        if l < lens[at] {
            at = i;
        }
    }
    at
}

fn pick(blocks: &[Block], idx: &[usize]) -> Vec<Block> {
    idx.iter().map(|&i| blocks[i]).collect()
}

/// Train `opts.k` predictors named `{prefix}{i}` from `blocks` without
/// labels. `progress` sees every step.
pub fn train_clustered(
    prefix: &str,
    blocks: &[Block],
    opts: &TrainOptions,
    copts: &ClusterOptions,
    mut progress: impl FnMut(&ClusterStep),
) -> Result<(Vec<TrainedPredictor>, Vec<ClusterStep>), TrainError> {
    if !(1..=64).contains(&copts.k) {
        return Err(TrainError::GroupSpec {
            spec: copts.k.to_string(),
            problem: "the number of predictors must be 1 to 64".into(),
        });
    }
    let useful: Vec<Block> = blocks
        .iter()
        .filter(|b| !is_custom_block(b))
        .copied()
        .collect();
    let sample = even_sample(&useful, copts.sample.max(1));
    let name = |i: usize| format!("{prefix}{i}");
    let mut steps = Vec::new();
    let mut record = |kind, predictors: usize, bits: u64, steps: &mut Vec<ClusterStep>| {
        let s = ClusterStep {
            kind,
            predictors,
            bits,
            blocks: sample.len(),
        };
        progress(&s);
        steps.push(s);
    };

    let mut preds = vec![train_predictor(&name(0), &sample, opts)?.predictor];
    let mut assign = vec![0usize; sample.len()];
    let mut lens = lengths(&sample, &preds);
    // 2: split the cluster with the most bits until there are K
    while preds.len() < copts.k {
        split_largest(&sample, &mut preds, &mut assign, &mut lens, opts, &name)?;
        let bits = assign.iter().zip(&lens).map(|(&a, l)| l[a] as u64).sum();
        record("split", preds.len(), bits, &mut steps);
    }
    // 3: rounds of assignment and retraining
    let total = |lens: &[Vec<u32>]| -> u64 { lens.iter().map(|l| l[best(l)] as u64).sum() };
    let mut best_bits = total(&lens);
    let mut best_preds = preds.clone();
    for _ in 0..copts.rounds {
        for (a, l) in assign.iter_mut().zip(&lens) {
            *a = best(l);
        }
        // re-seed clusters that emptied out
        for i in 0..preds.len() {
            if assign.iter().filter(|&&a| a == i).count() < MIN_CLUSTER && preds.len() > 1 {
                reseed(&sample, &mut preds, &mut assign, &lens, i, opts, &name)?;
            }
        }
        for (i, p) in preds.iter_mut().enumerate() {
            let idx: Vec<usize> = (0..sample.len()).filter(|&j| assign[j] == i).collect();
            if let Ok(t) = train_predictor(&name(i), &pick(&sample, &idx), opts) {
                *p = t.predictor;
            }
        }
        lens = lengths(&sample, &preds);
        let bits = total(&lens);
        record("round", preds.len(), bits, &mut steps);
        let gain = best_bits.saturating_sub(bits);
        if bits < best_bits {
            best_bits = bits;
            best_preds = preds.clone();
        }
        if (gain as f64) < 0.001 * best_bits as f64 {
            break;
        }
    }
    // final predictors: each trained on its share of every training block
    let all = lengths(&useful, &best_preds);
    let mut out = Vec::with_capacity(best_preds.len());
    for (i, p) in best_preds.iter().enumerate() {
        let mine: Vec<Block> = useful
            .iter()
            .zip(&all)
            .filter(|(_, l)| best(l) == i)
            .map(|(b, _)| *b)
            .collect();
        let t = match train_predictor(&name(i), &mine, opts) {
            Ok(t) => t,
            // a predictor that no training block prefers keeps its form
            Err(TrainError::EmptyGroup { .. }) => {
                train_predictor(&name(i), &sample, opts).map(|mut t| {
                    t.predictor = p.clone();
                    t.train_blocks = 0;
                    t
                })?
            }
            Err(e) => return Err(e),
        };
        out.push(t);
    }
    Ok((out, steps))
}

/// Split the cluster with the most coded bits (step 2).
fn split_largest(
    sample: &[Block],
    preds: &mut Vec<Predictor>,
    assign: &mut [usize],
    lens: &mut Vec<Vec<u32>>,
    opts: &TrainOptions,
    name: &dyn Fn(usize) -> String,
) -> Result<(), TrainError> {
    let mut bits = vec![0u64; preds.len()];
    for (&a, l) in assign.iter().zip(lens.iter()) {
        bits[a] += l[a] as u64;
    }
    let c = best_rev(&bits);
    // the half of cluster c its predictor codes longest
    let mut members: Vec<usize> = (0..sample.len()).filter(|&j| assign[j] == c).collect();
    members.sort_by_key(|&j| (std::cmp::Reverse(lens[j][c]), j));
    let worst = &members[..members.len().div_ceil(2)];
    let new = preds.len();
    let t = train_predictor(&name(new), &pick(sample, worst), opts)?;
    preds.push(t.predictor);
    *lens = lengths(sample, preds);
    // the cluster's blocks to the better of the two, both retrained
    for &j in &members {
        if lens[j][new] < lens[j][c] {
            assign[j] = new;
        }
    }
    for i in [c, new] {
        let idx: Vec<usize> = (0..sample.len()).filter(|&j| assign[j] == i).collect();
        if let Ok(t) = train_predictor(&name(i), &pick(sample, &idx), opts) {
            preds[i] = t.predictor;
        }
    }
    *lens = lengths(sample, preds);
    Ok(())
}

/// Replace predictor `i` by one trained on the longest-coded half of the
/// cluster with the most bits, and give it those blocks.
fn reseed(
    sample: &[Block],
    preds: &mut [Predictor],
    assign: &mut [usize],
    lens: &[Vec<u32>],
    i: usize,
    opts: &TrainOptions,
    name: &dyn Fn(usize) -> String,
) -> Result<(), TrainError> {
    let mut bits = vec![0u64; preds.len()];
    for (&a, l) in assign.iter().zip(lens) {
        bits[a] += l[a] as u64;
    }
    bits[i] = 0;
    let c = best_rev(&bits);
    let mut members: Vec<usize> = (0..sample.len()).filter(|&j| assign[j] == c).collect();
    if members.len() < 2 * MIN_CLUSTER {
        return Ok(());
    }
    members.sort_by_key(|&j| (std::cmp::Reverse(lens[j][c]), j));
    let worst = &members[..members.len() / 2];
    preds[i] = train_predictor(&name(i), &pick(sample, worst), opts)?.predictor;
    for &j in worst {
        assign[j] = i;
    }
    Ok(())
}

/// Index of the largest value (the lowest index among equals).
fn best_rev(v: &[u64]) -> usize {
    let mut at = 0;
    for (i, &x) in v.iter().enumerate() {
        if x > v[at] {
            at = i;
        }
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Blocks of two kinds no single predictor codes well: 32 copies of
    /// one slowly varying byte, and four little-endian 64-bit counters.
    fn two_kinds(n: usize) -> (Vec<Block>, Vec<usize>) {
        let mut x = 0x1234_5678_9abc_def1u64;
        let mut blocks = Vec::new();
        let mut kind = Vec::new();
        for i in 0..n {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let mut b = [0u8; 32];
            if (x >> 60) & 1 == 0 {
                // byte ramps: b[j] = base + j
                let base = (x >> 8) as u8;
                for (j, v) in b.iter_mut().enumerate() {
                    *v = base.wrapping_add(j as u8);
                }
                kind.push(0);
            } else {
                // four 64-bit values close to each other
                let v0 = (x >> 20) & 0xffff_ffff;
                for w in 0..4 {
                    let v = v0 + w as u64 * ((x >> 5) & 7) + i as u64 % 3;
                    b[8 * w..8 * w + 8].copy_from_slice(&v.to_le_bytes());
                }
                kind.push(1);
            }
            blocks.push(b);
        }
        (blocks, kind)
    }

    #[test]
    fn two_clusters_are_found_and_beat_one_predictor() {
        let (blocks, kind) = two_kinds(6000);
        let opts = TrainOptions::default();
        let one = ClusterOptions {
            k: 1,
            ..ClusterOptions::default()
        };
        let two = ClusterOptions {
            k: 2,
            ..ClusterOptions::default()
        };
        let (p1, _) = train_clustered("c", &blocks, &opts, &one, |_| {}).expect("k=1");
        let (p2, steps) = train_clustered("c", &blocks, &opts, &two, |_| {}).expect("k=2");
        assert_eq!((p1.len(), p2.len()), (1, 2));
        let preds: Vec<Predictor> = p2.iter().map(|t| t.predictor.clone()).collect();
        let lens = lengths(&blocks, &preds);
        // every block of a kind prefers the same predictor, the kinds differ
        let pref: Vec<usize> = lens.iter().map(|l| best(l)).collect();
        let of = |k: usize| {
            let v: Vec<usize> = (0..blocks.len())
                .filter(|&j| kind[j] == k)
                .map(|j| pref[j])
                .collect();
            let zeros = v.iter().filter(|&&p| p == 0).count();
            (zeros * 100 / v.len(), v.len())
        };
        let (a, _) = of(0);
        let (b, _) = of(1);
        assert!(
            (a >= 95 && b <= 5) || (a <= 5 && b >= 95),
            "kinds not separated: {a}% / {b}% of the blocks prefer predictor 0"
        );
        let bits1: u64 = lengths(&blocks, &[p1[0].predictor.clone()])
            .iter()
            .map(|l| l[0] as u64)
            .sum();
        let bits2: u64 = lens.iter().map(|l| l[best(l)] as u64).sum();
        assert!(bits2 < bits1, "two predictors {bits2} bits, one {bits1}");
        assert!(steps.iter().any(|s| s.kind == "split"));
    }

    #[test]
    fn clustering_is_deterministic() {
        let (blocks, _) = two_kinds(3000);
        let opts = TrainOptions::default();
        let c = ClusterOptions {
            k: 3,
            ..ClusterOptions::default()
        };
        let (a, sa) = train_clustered("c", &blocks, &opts, &c, |_| {}).expect("a");
        let (b, sb) = train_clustered("c", &blocks, &opts, &c, |_| {}).expect("b");
        let pa: Vec<_> = a.iter().map(|t| t.predictor.clone()).collect();
        let pb: Vec<_> = b.iter().map(|t| t.predictor.clone()).collect();
        assert_eq!(pa, pb);
        assert_eq!(sa, sb);
    }

    #[test]
    fn k_out_of_range_is_an_error() {
        let (blocks, _) = two_kinds(100);
        for k in [0, 65] {
            let c = ClusterOptions {
                k,
                ..ClusterOptions::default()
            };
            assert!(train_clustered("c", &blocks, &TrainOptions::default(), &c, |_| {}).is_err());
        }
    }
}
