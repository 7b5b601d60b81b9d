//! Property tests: round trips under random valid model sets, the fast codec
//! equal to the reference, and decoders that never panic.

mod common;

use common::*;
use golden::mpc::{
    compress, compress_traced, decompress, decompress_prefix, fast::Kernel, ByteRule, ModelSet,
    MpcCodec, Selection,
};
use proptest::prelude::*;

/// The codec of `set` on every kernel (one this CPU lacks runs as the
/// scalar one).
fn all_kernels(set: &ModelSet) -> [MpcCodec; 3] {
    [Kernel::Avx512, Kernel::Avx2, Kernel::Scalar].map(|k| MpcCodec::with_kernel(set, k))
}

/// A random acyclic predictor: bytes are visited in a random order and may
/// only use an earlier-visited byte as base.
fn predictor_strategy() -> impl Strategy<Value = golden::mpc::Predictor> {
    let order = Just((0u8..32).collect::<Vec<u8>>()).prop_shuffle();
    let picks = proptest::collection::vec((0.0f64..1.0, any::<u8>(), -7i8..=7), 32);
    let reorder = prop_oneof![
        1 => Just((0u16..256).map(|v| v as u8).collect::<Vec<u8>>()),
        3 => Just((0u16..256).map(|v| v as u8).collect::<Vec<u8>>()).prop_shuffle(),
    ];
    (order, picks, reorder).prop_map(|(order, picks, reorder)| {
        let mut bytes = [ByteRule::Root; 32];
        for (pos, &i) in order.iter().enumerate() {
            let (p_root, pick, shift) = picks[pos];
            if pos > 0 && p_root > 0.15 {
                let base = order[pick as usize % pos];
                bytes[i as usize] = ByteRule::Base { base, shift };
            }
        }
        let mut r = [0u8; 256];
        r.copy_from_slice(&reorder);
        predictor("random", bytes, r)
    })
}

fn set_strategy() -> impl Strategy<Value = ModelSet> {
    (
        proptest::collection::vec(predictor_strategy(), 1..5),
        any::<bool>(),
        any::<bool>(),
        prop_oneof![Just(Selection::ZeroRun), Just(Selection::Exact)],
    )
        .prop_map(|(p, z, s, sel)| set_of(p, z, s, sel))
}

/// Random blocks biased toward compressible ones: random bytes, small
/// word deltas, repeated words, sparse bytes, all zero.
fn block_strategy() -> impl Strategy<Value = [u8; 32]> {
    prop_oneof![
        any::<[u8; 32]>(),
        (any::<u32>(), proptest::collection::vec(-64i32..64, 8)).prop_map(|(base, d)| {
            let mut b = [0u8; 32];
            for w in 0..8 {
                b[4 * w..4 * w + 4].copy_from_slice(&base.wrapping_add(d[w] as u32).to_le_bytes());
            }
            b
        }),
        any::<[u8; 4]>().prop_map(|w| std::array::from_fn(|i| w[i % 4])),
        proptest::collection::vec((0usize..32, any::<u8>()), 0..6).prop_map(|v| {
            let mut b = [0u8; 32];
            for (i, x) in v {
                b[i] = x;
            }
            b
        }),
        Just([0u8; 32]),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn round_trip_and_fast_equals_reference(set in set_strategy(), blocks in proptest::collection::vec(block_strategy(), 1..8)) {
        // every kernel this CPU runs (the scalar one always)
        let codecs = all_kernels(&set);
        for b in &blocks {
            let t = compress_traced(b, &set);
            let c = t.output;
            prop_assert!(c.len <= set.max_bits());
            prop_assert_eq!(decompress(c.as_bytes(), c.len as usize, &set), Ok(*b));
            for codec in &codecs {
                let k = codec.kernel();
                prop_assert_eq!(codec.compress(b), c, "{:?}: fast compress differs on {:02x?}", k, b);
                for (i, cand) in t.candidates.iter().enumerate() {
                    prop_assert_eq!(codec.predictor_symbols(i, b), cand.symbols);
                }
                prop_assert_eq!(codec.decompress(c.as_bytes(), c.len as usize), Ok(*b));
            }
            // exact never loses to zero-run
            let mut other = set.clone();
            other.selection = match set.selection { Selection::ZeroRun => Selection::Exact, Selection::Exact => Selection::ZeroRun };
            let c2 = compress(b, &other);
            let (zr, ex) = if set.selection == Selection::Exact { (c2, c) } else { (c, c2) };
            prop_assert!(ex.len <= zr.len);
        }
    }

    #[test]
    fn decoders_never_panic_and_agree(set in set_strategy(), bytes in proptest::collection::vec(any::<u8>(), 0..40), len in 0usize..330) {
        let r = decompress(&bytes, len, &set);
        let p = decompress_prefix(&bytes, len, &set);
        for codec in all_kernels(&set) {
            prop_assert_eq!(codec.decompress(&bytes, len), r.clone());
            prop_assert_eq!(codec.decompress_prefix(&bytes, len), p.clone());
            // the same bits at an odd offset inside a longer buffer
            let mut shifted = vec![0xa5u8; bytes.len() + 2];
            for i in 0..bytes.len() * 8 {
                let bit = (bytes[i / 8] >> (7 - i % 8)) & 1;
                let at = i + 5;
                shifted[at / 8] = (shifted[at / 8] & !(0x80 >> (at % 8))) | (bit << (7 - at % 8));
            }
            prop_assert_eq!(codec.decompress_at(&shifted, 5, len.min(bytes.len() * 8)), p.clone());
        }
        if let Ok(block) = r {
            prop_assert_eq!(p, Ok((block, len)));
        }
    }

    #[test]
    fn corrupted_blocks_error_or_decode_without_panic(set in set_strategy(), b in block_strategy(), flip in any::<prop::sample::Index>()) {
        let c = compress(&b, &set);
        let mut bytes = c.bytes;
        let bit = flip.index(c.len as usize);
        bytes[bit / 8] ^= 0x80 >> (bit % 8);
        let r = decompress(&bytes, c.len as usize, &set);
        for codec in all_kernels(&set) {
            prop_assert_eq!(codec.decompress(&bytes, c.len as usize), r.clone());
        }
    }
}

/// A start position at or past the end of the bits (up to `usize::MAX`)
/// is the empty input, with the reference's error, on every kernel.
#[test]
fn positions_past_the_end_read_nothing() {
    let set =
        ModelSet::load(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../models/default"))
            .expect("models/default");
    let want = decompress_prefix(&[], 10, &set);
    assert!(want.is_err());
    for codec in all_kernels(&set) {
        for pos in [32, 33, 1000, usize::MAX - 1, usize::MAX] {
            assert_eq!(codec.decompress_at(&[0xff; 4], pos, 10), want, "pos {pos}");
        }
    }
}
