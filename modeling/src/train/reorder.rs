//! Transformer reorder (paper section 3.2): place bits that are zero
//! together next to each other, so that whole 16-bit symbols are zero and
//! zero symbols form runs (docs/spec/training.md, "Reorder").
//!
//! Algorithm ("greedy joint-zero chaining"), on the XORed natural streams of
//! a sample of training blocks, each bit position held as a bitset over the
//! sample (bit `s` set when the bit is zero in block `s`):
//! 1. Symbols are filled one after the other. A symbol starts with the free
//!    bit that is zero most often. Then, 15 times, the free bit is added that
//!    keeps the symbol all-zero in the most blocks: the score of bit `c` is
//!    `|M & Z_c|` where `M` is the set of blocks in which every bit chosen so
//!    far for this symbol is zero (ties: more often zero on its own, then the
//!    lower natural index). This is the exact joint probability that the
//!    growing symbol is zero, not a pairwise approximation.
//! 2. Within a symbol the bits stay in the order chosen, so the rarely-zero
//!    bits end up in its back half (Table 1's front-half-zero code).
//! 3. Symbols are sorted by how often they are all-zero, most often first
//!    (stable): symbols that are zero together in the same blocks sit next
//!    to each other and form runs.

use datafiles::corpus::Block;
use golden::mpc::model::Predictor;
use golden::mpc::{BLOCK_BYTES, PLANES, STREAM_BITS, SYMBOLS};

/// The XORed natural stream of a block under `rules` as four u64 words
/// (natural index n at word n / 64, bit n % 64).
pub fn natural_stream(block: &Block, p: &Predictor) -> [u64; 4] {
    let mut s = [0u64; 4];
    for j in 0..BLOCK_BYTES {
        let r = block[j].wrapping_sub(p.bytes[j].predict(block));
        let g = r ^ (r >> 1);
        for pl in 0..PLANES {
            if (g >> pl) & 1 == 1 {
                let n = 32 * (PLANES - 1 - pl) + j;
                s[n / 64] |= 1 << (n % 64);
            }
        }
    }
    s
}

/// Per-bit zero bitsets over the sample.
struct ZeroSets {
    words: usize,
    /// `bits[n * words + w]`
    bits: Vec<u64>,
}

impl ZeroSets {
    fn new(blocks: &[Block], p: &Predictor) -> ZeroSets {
        let words = blocks.len().div_ceil(64);
        let mut bits = vec![0u64; STREAM_BITS * words];
        for (s, b) in blocks.iter().enumerate() {
            let st = natural_stream(b, p);
            for n in 0..STREAM_BITS {
                if (st[n / 64] >> (n % 64)) & 1 == 0 {
                    bits[n * words + s / 64] |= 1 << (s % 64);
                }
            }
        }
        ZeroSets { words, bits }
    }

    fn set(&self, n: usize) -> &[u64] {
        &self.bits[n * self.words..(n + 1) * self.words]
    }
}

fn and_count(a: &[u64], b: &[u64]) -> u64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x & y).count_ones() as u64)
        .sum()
}

/// The trained permutation (`reorder[o]` = natural index at stream position
/// `o`) for predictor `p` over `sample`. An empty sample gives the identity.
pub fn train_reorder(sample: &[Block], p: &Predictor) -> [u8; STREAM_BITS] {
    let mut identity = [0u8; STREAM_BITS];
    for (o, v) in identity.iter_mut().enumerate() {
        *v = o as u8;
    }
    if sample.is_empty() {
        return identity;
    }
    let z = ZeroSets::new(sample, p);
    let marginal: Vec<u64> = (0..STREAM_BITS)
        .map(|n| z.set(n).iter().map(|w| w.count_ones() as u64).sum())
        .collect();
    let mut free = [true; STREAM_BITS];
    // (symbol bits, all-zero count, formation index)
    let mut syms: Vec<(Vec<u8>, u64, usize)> = Vec::with_capacity(SYMBOLS);
    for m in 0..SYMBOLS {
        let mut mask: Vec<u64> = vec![u64::MAX; z.words];
        let tail = sample.len() % 64;
        if tail != 0 {
            if let Some(last) = mask.last_mut() {
                *last = (1u64 << tail) - 1;
            }
        }
        let mut bits = Vec::with_capacity(16);
        for _ in 0..16 {
            let mut best: Option<(u64, u64, usize)> = None;
            for c in (0..STREAM_BITS).filter(|&c| free[c]) {
                let score = (and_count(&mask, z.set(c)), marginal[c], c);
                let better = match best {
                    None => true,
                    Some((j, mg, bc)) => {
                        score.0 > j || (score.0 == j && (score.1 > mg || (score.1 == mg && c < bc)))
                    }
                };
                if better {
                    best = Some(score);
                }
            }
            let Some((_, _, c)) = best else { break };
            free[c] = false;
            bits.push(c as u8);
            for (mw, zw) in mask.iter_mut().zip(z.set(c)) {
                *mw &= zw;
            }
        }
        let zeros = mask.iter().map(|w| w.count_ones() as u64).sum();
        syms.push((bits, zeros, m));
    }
    syms.sort_by(|a, b| b.1.cmp(&a.1).then(a.2.cmp(&b.2)));
    let mut out = [0u8; STREAM_BITS];
    for (o, v) in syms.iter().flat_map(|s| s.0.iter()).enumerate() {
        out[o] = *v;
    }
    out
}
