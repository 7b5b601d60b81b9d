//! Hand-worked vectors for every pattern of the baselines' encoding tables
//! (docs/spec/baselines.md).

use golden::baselines::{Bdi, BlockCodec, Bpc, CPack, Compressed, Fpc, Sc2};

fn bits(c: &Compressed) -> String {
    (0..c.len)
        .map(|i| {
            if (c.bytes[i / 8] >> (7 - i % 8)) & 1 == 1 {
                '1'
            } else {
                '0'
            }
        })
        .collect()
}

fn b(v: u64, w: usize) -> String {
    format!("{v:0w$b}")
}

fn from_u64(vals: &[u64]) -> Vec<u8> {
    vals.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn from_u32(vals: &[u32]) -> Vec<u8> {
    vals.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn from_u16(vals: &[u16]) -> Vec<u8> {
    vals.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn check(codec: &dyn BlockCodec, block: &[u8], expect: &str) {
    let c = codec.compress(block);
    assert_eq!(bits(&c), expect, "{} bits of {block:02x?}", codec.name());
    assert_eq!(c.bytes.len(), c.len.div_ceil(8));
    assert_eq!(codec.decompress(&c.bytes, c.len).unwrap(), block);
}

/// (tag, length) of a BDI block, checking the round trip.
fn bdi_tag(codec: &Bdi, block: &[u8]) -> (u64, usize) {
    let c = codec.compress(block);
    assert_eq!(codec.decompress(&c.bytes, c.len).unwrap(), block);
    (u64::from(c.bytes[0] >> 4), c.len)
}

#[test]
fn bdi_table2_patterns_32b() {
    let bdi = Bdi::new(32).unwrap();
    check(&bdi, &[0u8; 32], "0000");
    let v = 0x0123_4567_89ab_cdefu64;
    check(&bdi, &from_u64(&[v; 4]), &format!("0001{}", b(v, 64)));
    // Base8-delta1 with the implicit zero base: 5 and -3 are immediates.
    let big = 0x12_3456_7890u64;
    let block = from_u64(&[5, (-3i64) as u64, big, big + 7]);
    check(
        &bdi,
        &block,
        &format!(
            "0010{}0011{}{}{}{}",
            b(big, 64),
            b(5, 8),
            b(0xfd, 8),
            b(0, 8),
            b(7, 8)
        ),
    );
    // Base4-delta1: pointers 4 apart.
    let p: Vec<u32> = (0..8).map(|i| 0x1000_0000 + 4 * i).collect();
    let mut expect = format!("0101{}11111111", b(0x1000_0000, 32));
    for i in 0..8 {
        expect += &b(4 * i, 8);
    }
    check(&bdi, &from_u32(&p), &expect);
    // Base8-delta2, base8-delta4, base4-delta2, base2-delta1, raw.
    let base = 0x7777_0000_1234_0000u64;
    let d2: Vec<u64> = (0..4).map(|i| base + 1000 * i).collect();
    assert_eq!(bdi_tag(&bdi, &from_u64(&d2)), (3, 4 + 64 + 4 + 64));
    let d4: Vec<u64> = (0..4).map(|i| base + 100_000 * i).collect();
    assert_eq!(bdi_tag(&bdi, &from_u64(&d4)), (4, 4 + 64 + 4 + 128));
    let b4d2: Vec<u32> = (0..8).map(|i| 0x1000_0000 + 1000 * i).collect();
    assert_eq!(bdi_tag(&bdi, &from_u32(&b4d2)), (6, 4 + 32 + 8 + 128));
    let b2d1: Vec<u16> = (0..16).map(|i| 0x4000 + i).collect();
    assert_eq!(bdi_tag(&bdi, &from_u16(&b2d1)), (7, 4 + 16 + 16 + 128));
    let raw: Vec<u8> = (0..32u32).map(|i| (i * 97 + 13) as u8 ^ 0x5a).collect();
    assert_eq!(bdi_tag(&bdi, &raw), (15, 4 + 256));
}

#[test]
fn bdi_128b_and_bad_tags() {
    let bdi = Bdi::new(128).unwrap();
    let p: Vec<u32> = (0..32).map(|i| 0x2000_0000 + 2 * i).collect();
    assert_eq!(bdi_tag(&bdi, &from_u32(&p)), (5, 4 + 32 + 32 + 32 * 8));
    let q: Vec<u64> = (0..16).map(|i| 0x2000_0000_0000 + 3 * i).collect();
    assert_eq!(bdi_tag(&bdi, &from_u64(&q)), (2, 4 + 64 + 16 + 16 * 8));
    assert_eq!(bdi.compress(&[0u8; 128]).len, 4);
    assert!(Bdi::new(64).is_err());
    for tag in 8..15u8 {
        assert!(Bdi::new(32).unwrap().decompress(&[tag << 4], 4).is_err());
    }
}

#[test]
fn fpc_table1_patterns() {
    let fpc = Fpc::new(32).unwrap();
    check(&fpc, &[0u8; 32], "1000111");
    let words = [
        0x0000_0003u32,
        0xffff_ff80,
        0x0000_7fff,
        0xabcd_0000,
        0xff80_007f,
        0x5a5a_5a5a,
        0x1234_5678,
        0,
    ];
    let expect = [
        "1".to_string(),
        format!("001{}", b(3, 4)),
        format!("010{}", b(0x80, 8)),
        format!("011{}", b(0x7fff, 16)),
        format!("100{}", b(0xabcd, 16)),
        format!("101{}{}", b(0x80, 8), b(0x7f, 8)),
        format!("110{}", b(0x5a, 8)),
        format!("111{}", b(0x1234_5678, 32)),
        "000000".to_string(),
    ]
    .concat();
    assert_eq!(expect.len(), 128);
    check(&fpc, &from_u32(&words), &expect);
    // Zero runs are split at 8 words (128-byte block of zeros: 4 runs).
    let fpc128 = Fpc::new(128).unwrap();
    check(&fpc128, &[0u8; 128], &format!("1{}", "000111".repeat(4)));
    // Incompressible words: raw with a 0 flag, never longer than 257 bits.
    let raw = from_u32(&[0x1234_5678; 8]);
    let c = fpc.compress(&raw);
    assert_eq!(c.len, 257);
    assert!(bits(&c).starts_with('0'));
}

#[test]
fn cpack_table1_patterns() {
    let cp = CPack::new(32).unwrap();
    let words = [
        0u32,
        0x1234_5678,
        0x1234_5678,
        0x1234_56ab,
        0x1234_abcd,
        0x0000_00ff,
        0xdead_beef,
        0,
    ];
    let expect = [
        "1".to_string(),
        "00".into(),
        format!("01{}", b(0x1234_5678, 32)),
        "100000".into(),
        format!("11100000{}", b(0xab, 8)),
        format!("11000000{}", b(0xabcd, 16)),
        format!("1101{}", b(0xff, 8)),
        format!("01{}", b(0xdead_beef, 32)),
        "00".into(),
    ]
    .concat();
    // mmmx matched entry 0 (index 0000) and was pushed as entry 1; mmxx
    // matched entry 0 too.
    assert_eq!(expect.len(), 131);
    check(&cp, &from_u32(&words), &expect);
    // A dictionary index past the filled entries is an error.
    let bad = "1100001".to_string() + &"0".repeat(14);
    let mut bytes = vec![0u8; 3];
    for (i, ch) in bad.chars().enumerate() {
        if ch == '1' {
            bytes[i / 8] |= 0x80 >> (i % 8);
        }
    }
    assert!(cp.decompress(&bytes, bad.len()).is_err());
}

#[test]
fn bpc_table2_patterns() {
    let bpc = Bpc::new(32).unwrap();
    // All words equal: base + one run of 33 zero DBX planes.
    check(
        &bpc,
        &from_u32(&[0x1234_5678; 8]),
        &format!("11{}001{}", b(0x1234_5678, 32), b(31, 5)),
    );
    // Deltas all 1: DBP0 all ones, so DBX 32..1 zero (run 32), DBX0 all ones.
    check(
        &bpc,
        &from_u32(&[0, 1, 2, 3, 4, 5, 6, 7]),
        &format!("1000001{}00000", b(30, 5)),
    );
    // One delta of 5 at the last position: single ones and DBP == 0.
    check(
        &bpc,
        &from_u32(&[0, 0, 0, 0, 0, 0, 0, 5]),
        &format!("1000001{}{}{}{}", b(28, 5), "00011110", "00001", "00011110"),
    );
    // Two consecutive ones at position 0.
    check(
        &bpc,
        &from_u32(&[0, 1, 2, 2, 2, 2, 2, 2]),
        &format!("1000001{}00010000", b(30, 5)),
    );
    // Uncompressed DBX, and one zero plane alone (01).
    check(
        &bpc,
        &from_u32(&[0, 1, 1, 2, 2, 3, 3, 3]),
        &format!("1000001{}11010100", b(30, 5)),
    );
    check(
        &bpc,
        &from_u32(&[0, 3, 3, 3, 3, 3, 3, 3]),
        &format!("1000001{}0001100001", b(29, 5)),
    );
    // Negative delta: every plane has the bit, DBX32 single one then zeros;
    // base 5 as a 4-bit sign-extended value.
    check(
        &bpc,
        &from_u32(&[5, 4, 4, 4, 4, 4, 4, 4]),
        &format!("1001{}00011000001{}", b(5, 4), b(30, 5)),
    );
}

#[test]
fn sc2_canonical_codes() {
    // Weights: 0 x8, 1 x4, 2 x2, escape (others) x2 -> lengths 1, 2, 3, 3.
    let mut words = vec![0u32; 8];
    words.extend([1, 1, 1, 1, 2, 2, 9, 10]);
    let sc2 = Sc2::train(32, words, 3, 16).unwrap();
    assert_eq!(sc2.table_len(), 3);
    assert_eq!(sc2.escape_len(), 3);
    check(
        &sc2,
        &from_u32(&[0, 0, 1, 2, 7, 0, 0, 0]),
        &format!("10010110111{}000", b(7, 32)),
    );
}

#[test]
fn sc2_length_limit_holds() {
    // Fibonacci weights force a deep tree; the limit must hold and decode.
    let mut fib = vec![1u64, 1];
    while fib.len() < 40 {
        let n = fib[fib.len() - 1] + fib[fib.len() - 2];
        fib.push(n);
    }
    let l = golden::baselines::sc2::huffman_lengths(&fib);
    assert!(l.iter().max().copied().unwrap_or(0) > 16);
    let l = golden::baselines::sc2::limited_lengths(&fib, 16);
    assert!(l.iter().all(|&x| x <= 16));
    let kraft: f64 = l.iter().map(|&x| 0.5f64.powi(x as i32)).sum();
    assert!(kraft <= 1.0 + 1e-12);
}
