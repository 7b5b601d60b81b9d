//! Training on synthetic data with a known best answer.

use datafiles::corpus::{Block, SplitMix64};
use golden::mpc::model::ByteRule;
use golden::mpc::{ModelSet, MpcCodec};
use modeling::train::reorder::natural_stream;
use modeling::train::{is_permutation, train_predictor, TrainOptions};

fn rng_blocks(n: usize, seed: u64, mut f: impl FnMut(&mut SplitMix64) -> Block) -> Vec<Block> {
    let mut r = SplitMix64(seed);
    (0..n).map(|_| f(&mut r)).collect()
}

/// Eight little-endian words w0 + small deltas, w0 random.
fn small_delta_words(r: &mut SplitMix64) -> Block {
    let w0 = r.next_u64() as u32;
    let mut b = [0u8; 32];
    for w in 0..8 {
        let d = r.below(16) as u32;
        let v = w0.wrapping_add(d);
        b[4 * w..4 * w + 4].copy_from_slice(&v.to_le_bytes());
    }
    b
}

#[test]
fn small_deltas_give_word_stride_bases_in_the_same_lane() {
    let blocks = rng_blocks(20000, 7, small_delta_words);
    let t = train_predictor("words", &blocks, &TrainOptions::default()).unwrap();
    let p = &t.predictor;
    // Upper bytes (lanes 1..3) of words 1..7: a base in the same lane, ratio 1.
    for w in 1..8 {
        for lane in 1..4 {
            let i = 4 * w + lane;
            match p.bytes[i] {
                ByteRule::Base { base, shift } => {
                    assert_eq!(
                        base as usize % 4,
                        lane,
                        "byte {i}: base {base} in another lane"
                    );
                    assert_eq!(shift, 0, "byte {i}: ratio 2^{shift}, expected 1");
                }
                ByteRule::Root => panic!("byte {i} is a root; expected a word-stride base"),
            }
        }
    }
    assert!(is_permutation(&p.reorder));
}

#[test]
fn constant_ratio_pair_gets_that_shift() {
    // byte 5 = byte 1 << 2 (byte 1 < 64, so nothing is truncated); the rest
    // is noise.
    let blocks = rng_blocks(20000, 11, |r| {
        let mut b = [0u8; 32];
        for v in b.iter_mut() {
            *v = r.next_u64() as u8;
        }
        b[1] = (r.below(63) + 1) as u8;
        b[5] = b[1] << 2;
        b
    });
    let t = train_predictor("ratio", &blocks, &TrainOptions::default()).unwrap();
    let (r5, r1) = (t.predictor.bytes[5], t.predictor.bytes[1]);
    assert!(
        r5 == ByteRule::Base { base: 1, shift: 2 } || r1 == ByteRule::Base { base: 5, shift: -2 },
        "expected byte 5 <- byte 1 (k=2) or byte 1 <- byte 5 (k=-2), got {r5:?} / {r1:?}"
    );
    // The RE of the pair is the lowest of byte 5's row.
    let row = &t.stats.re[5];
    let best = (0..32)
        .filter(|&j| j != 5)
        .min_by(|&a, &b| row[a].total_cmp(&row[b]))
        .unwrap();
    assert_eq!(best, 1);
}

#[test]
fn always_zero_bits_become_whole_adjacent_zero_symbols() {
    // Bytes 0..15 random, bytes 16..31 zero: under any prediction from the
    // zero bytes' own tree their 128 XORed bits are always zero. (Bytes 0..15
    // are noise so their residues are noise too.)
    let blocks = rng_blocks(8000, 3, |r| {
        let mut b = [0u8; 32];
        for v in b.iter_mut().take(16) {
            *v = r.next_u64() as u8;
        }
        b
    });
    let t = train_predictor("half", &blocks, &TrainOptions::default()).unwrap();
    let p = &t.predictor;
    let mut ever_one = [0u64; 4];
    for b in &blocks {
        let s = natural_stream(b, p);
        for k in 0..4 {
            ever_one[k] |= s[k];
        }
    }
    let always_zero = |n: u8| (ever_one[n as usize / 64] >> (n % 64)) & 1 == 0;
    let n_zero_bits = (0..=255u8).filter(|&n| always_zero(n)).count();
    assert!(n_zero_bits >= 128, "only {n_zero_bits} always-zero bits");
    let zero_syms: Vec<usize> = (0..16)
        .filter(|&m| {
            p.reorder[16 * m..16 * m + 16]
                .iter()
                .all(|&n| always_zero(n))
        })
        .collect();
    assert_eq!(
        zero_syms.len(),
        n_zero_bits / 16,
        "zero bits not packed into whole symbols"
    );
    // Adjacent: one run.
    assert_eq!(
        zero_syms.last().unwrap() - zero_syms[0] + 1,
        zero_syms.len(),
        "zero symbols not adjacent: {zero_syms:?}"
    );
    // And the codec turns them into one run code: the block is far below raw.
    let set = ModelSet {
        name: "t".into(),
        selection: golden::mpc::Selection::ZeroRun,
        custom: golden::mpc::CustomModels {
            zero_block: true,
            same_words: true,
        },
        predictors: vec![p.clone()],
        provenance: Default::default(),
    };
    let codec = MpcCodec::new(&set);
    let c = codec.compress(&blocks[0]);
    assert!(c.len < 256, "{} bits", c.len);
}

#[test]
fn a_depth_limit_is_respected() {
    let blocks = rng_blocks(5000, 5, small_delta_words);
    for d in 1..4 {
        let o = TrainOptions {
            max_depth: Some(d),
            ..TrainOptions::default()
        };
        let t = train_predictor("d", &blocks, &o).unwrap();
        assert!(
            t.predictor.depth() <= d,
            "depth {} > {d}",
            t.predictor.depth()
        );
    }
    let o = TrainOptions {
        max_depth: Some(0),
        ..TrainOptions::default()
    };
    assert!(train_predictor("d", &blocks, &o).is_err());
}
