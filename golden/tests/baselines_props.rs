//! Property tests of the baselines: round trips on random and structured
//! blocks at 32 and 128 bytes, size bounds, and decoders that never panic
//! on arbitrary or corrupted input.

use std::path::PathBuf;

use golden::baselines::{Bdi, BlockCodec, Bpc, CPack, Fpc, MpcBlockCodec, Sc2};
use golden::mpc::{ModelSet, MpcCodec};
use proptest::prelude::*;

fn sc2(block: usize) -> Sc2 {
    // A table from structured synthetic data: small ints and a few
    // repeated words, so tests exercise short codes and escapes.
    let words = (0..4000u32).map(|i| match i % 7 {
        0 | 1 => 0,
        2 => i % 16,
        3 => 0x3f80_0000,
        4 => i % 300,
        _ => i.wrapping_mul(2_654_435_761),
    });
    Sc2::train(block, words, 256, 12).expect("valid SC2 configuration")
}

fn codecs(block: usize) -> Vec<Box<dyn BlockCodec>> {
    let mut v: Vec<Box<dyn BlockCodec>> = vec![
        Box::new(Bdi::new(block).unwrap()),
        Box::new(Fpc::new(block).unwrap()),
        Box::new(CPack::new(block).unwrap()),
        Box::new(Bpc::new(block).unwrap()),
        Box::new(sc2(block)),
    ];
    if block == 32 {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../models/example");
        let set = ModelSet::load(&dir).expect("models/example loads");
        v.push(Box::new(MpcBlockCodec::new("MPC", MpcCodec::new(&set))));
    }
    v
}

/// Blocks with structure: each 32-bit word drawn from a pattern family.
fn structured(words: usize) -> impl Strategy<Value = Vec<u8>> {
    let word = prop_oneof![
        Just(0u32),
        (0u32..16),
        any::<i8>().prop_map(|x| x as i32 as u32),
        any::<i16>().prop_map(|x| x as i32 as u32),
        any::<u16>().prop_map(|x| (x as u32) << 16),
        any::<u8>().prop_map(|x| u32::from_le_bytes([x; 4])),
        any::<u32>(),
        (0u32..4).prop_map(|x| 0x3f80_0000 + x),
    ];
    let progression = (any::<u32>(), -300i32..300).prop_map(move |(b, d)| {
        (0..words as u32)
            .map(|i| b.wrapping_add((d as u32).wrapping_mul(i)))
            .collect::<Vec<_>>()
    });
    prop_oneof![
        proptest::collection::vec(word, words),
        progression,
        (
            any::<u64>(),
            proptest::collection::vec(-200i64..200, words / 2)
        )
            .prop_map(|(b, ds)| ds
                .iter()
                .flat_map(|&d| {
                    let v = b.wrapping_add(d as u64);
                    [v as u32, (v >> 32) as u32]
                })
                .collect()),
    ]
    .prop_map(|ws| ws.iter().flat_map(|w| w.to_le_bytes()).collect())
}

fn round_trip(block: &[u8]) {
    for c in codecs(block.len()) {
        let z = c.compress(block);
        assert!(
            z.len <= c.max_bits(),
            "{}: {} > {}",
            c.name(),
            z.len,
            c.max_bits()
        );
        assert_eq!(z.bytes.len(), z.len.div_ceil(8), "{}", c.name());
        let d = c.decompress(&z.bytes, z.len);
        assert_eq!(d.as_deref(), Ok(block), "{} round trip", c.name());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn random_blocks_round_trip_32(block in proptest::collection::vec(any::<u8>(), 32)) {
        round_trip(&block);
    }

    #[test]
    fn structured_blocks_round_trip_32(block in structured(8)) {
        round_trip(&block);
    }

    #[test]
    fn structured_blocks_round_trip_128(block in structured(32)) {
        round_trip(&block);
    }

    #[test]
    fn random_blocks_round_trip_128(block in proptest::collection::vec(any::<u8>(), 128)) {
        round_trip(&block);
    }

    #[test]
    fn decoders_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..40), len in 0usize..330) {
        for c in codecs(32) {
            let _ = c.decompress(&bytes, len);
        }
    }

    #[test]
    fn corrupted_blocks_never_panic(block in structured(8), flip in 0usize..300, cut in 0usize..8) {
        for c in codecs(32) {
            let z = c.compress(&block);
            let mut bytes = z.bytes.clone();
            if z.len > 0 {
                let i = flip % z.len;
                bytes[i / 8] ^= 0x80 >> (i % 8);
            }
            if let Ok(d) = c.decompress(&bytes, z.len) {
                prop_assert_eq!(d.len(), 32);
            }
            let short = z.len.saturating_sub(cut);
            let _ = c.decompress(&z.bytes, short);
        }
    }
}

#[test]
fn decoders_reject_short_buffers() {
    for c in codecs(32) {
        assert!(c.decompress(&[0xff], 100).is_err(), "{}", c.name());
    }
}
