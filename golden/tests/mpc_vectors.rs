//! Hand-worked vectors from docs/spec/mpc.md: each Table-1 pattern, run
//! splitting, both custom models, the raw fallback, both selection rules.

mod common;

use common::*;
use golden::mpc::select::{select, CandidateScore};
use golden::mpc::{compress, compress_traced, decompress, DecodeError, MpcCodec, Selection};

/// Compress `symbols` with the single all-root predictor (header `0`, raw
/// `1`) and compare with the hand-written bit string.
fn check_symbols(symbols: [u16; 16], expected: &str) {
    let set = set_of(vec![all_root()], false, false, Selection::ZeroRun);
    let block = block_for_symbols(&symbols);
    let c = compress(&block, &set);
    assert_eq!(c.bit_string(), bits_of(expected), "symbols {symbols:04x?}");
    assert_eq!(MpcCodec::new(&set).compress(&block), c);
    assert_eq!(decompress(c.as_bytes(), c.len as usize, &set), Ok(block));
}

fn syms(first: &[u16]) -> [u16; 16] {
    let mut s = [0u16; 16];
    s[..first.len()].copy_from_slice(first);
    s
}

#[test]
fn single_one() {
    check_symbols(syms(&[0x8000]), "0 011_0000 010_1111");
    check_symbols(syms(&[0x0001]), "0 011_1111 010_1111");
}

#[test]
fn two_consecutive_ones() {
    check_symbols(syms(&[0x0003]), "0 0000_1110 010_1111");
    check_symbols(syms(&[0x0180]), "0 0000_0111 010_1111");
}

#[test]
fn front_and_back_half_zero() {
    check_symbols(syms(&[0x00a5]), "0 0001_10100101 010_1111");
    check_symbols(syms(&[0xa500]), "0 0010_10100101 010_1111");
}

#[test]
fn default_code() {
    check_symbols(syms(&[0xa001]), "0 1_1010000000000001 010_1111");
}

#[test]
fn single_zero_and_runs() {
    check_symbols(
        syms(&[0x8000, 0, 0x8000]),
        "0 011_0000 0011 011_0000 010_1101",
    );
    // last symbol nonzero: a run of 15 then the symbol
    let mut s = [0u16; 16];
    s[15] = 0x4000;
    check_symbols(s, "0 010_1111 011_0001");
}

#[test]
fn run_of_sixteen_splits_into_fifteen_and_one() {
    // No custom models: the all-zero block goes through the predictor.
    check_symbols([0; 16], "0 010_1111 0011");
}

#[test]
fn raw_fallback_when_not_smaller() {
    // 16 default codes = 272 bits >= 256: stored raw, header `1`.
    let block = block_for_symbols(&[0xa001; 16]);
    let set = set_of(vec![all_root()], false, false, Selection::ZeroRun);
    let c = compress(&block, &set);
    assert_eq!(c.model, 1);
    assert_eq!(c.len, 257);
    let expected: String = std::iter::once("1".to_string())
        .chain(block.iter().map(|b| format!("{b:08b}")))
        .collect();
    assert_eq!(c.bit_string(), expected);
    assert_eq!(decompress(c.as_bytes(), 257, &set), Ok(block));
}

#[test]
fn custom_models() {
    let set = example_set();
    let c = compress(&[0u8; 32], &set);
    assert_eq!((c.model, c.bit_string()), (0, "000".to_string()));
    let mut b = [0u8; 32];
    for w in b.chunks_exact_mut(4) {
        w.copy_from_slice(&[0x78, 0x56, 0x34, 0x12]);
    }
    let c = compress(&b, &set);
    assert_eq!(c.model, 1);
    assert_eq!(
        c.bit_string(),
        bits_of("001 01111000 01010110 00110100 00010010")
    );
    assert_eq!(decompress(c.as_bytes(), 35, &set), Ok(b));
}

#[test]
fn worked_example_from_spec() {
    let set = example_set();
    let block: [u8; 32] = hex32("e8030000e9030000eb030000e6030000e8030000f2030000e7030000ea030000");
    let t = compress_traced(&block, &set);
    assert_eq!(t.candidates[0].residue[12], 0xfe);
    assert_eq!(
        t.candidates[0].xored,
        [0x10101010, 0x10100102, 0x00100001, 0x00100001, 0x00000001, 0, 0, 0x01001001]
    );
    assert_eq!(
        t.candidates[0].symbols,
        [
            0x8008, 0x0080, 0, 0, 0, 0, 0x8000, 0, 0x8000, 0x0800, 0x8000, 0x0800, 0x4080, 0x0808,
            0x0808, 0x0808
        ]
    );
    assert_eq!(t.selected_id, 2);
    assert_eq!(
        t.output.bit_string(),
        bits_of(
            "010 11000000000001000 0111000 0100100 0110000 0011 0110000 0110100 0110000 0110100 \
             10100000010000000 10000100000001000 10000100000001000 10000100000001000"
        )
    );
    assert_eq!(
        t.output.as_bytes(),
        &[
            0x58, 0x00, 0x87, 0x09, 0x18, 0x1b, 0x06, 0x8c, 0x1a, 0x50, 0x20, 0x21, 0x01, 0x10,
            0x80, 0x88, 0x40, 0x40
        ]
    );
}

fn hex32(s: &str) -> [u8; 32] {
    std::array::from_fn(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).expect("hex"))
}

fn score(run: u8, count: u8, bits: u32) -> CandidateScore {
    CandidateScore {
        zero_mask: 0,
        longest_zero_run: run,
        zero_count: count,
        code_bits: bits,
    }
}

#[test]
fn zero_run_rule() {
    let set = set_of(
        vec![all_root(), all_root(), all_root()],
        false,
        false,
        Selection::ZeroRun,
    );
    let b = [1u8; 32];
    // longest run wins even when larger
    assert_eq!(
        select(
            &set,
            &b,
            &[score(4, 5, 138), score(6, 6, 200), score(5, 9, 100)]
        ),
        1
    );
    // equal runs: zero count breaks the tie
    assert_eq!(
        select(
            &set,
            &b,
            &[score(4, 5, 138), score(4, 6, 200), score(4, 5, 100)]
        ),
        1
    );
    // full tie: lowest ID
    assert_eq!(
        select(
            &set,
            &b,
            &[score(4, 5, 138), score(4, 5, 100), score(4, 5, 90)]
        ),
        0
    );
    // chosen payload not smaller than raw: raw escape (ID 3)
    assert_eq!(
        select(
            &set,
            &b,
            &[score(9, 9, 256), score(4, 5, 100), score(4, 5, 90)]
        ),
        3
    );
    assert_eq!(
        select(
            &set,
            &b,
            &[score(9, 9, 255), score(4, 5, 100), score(4, 5, 90)]
        ),
        0
    );
}

#[test]
fn exact_rule() {
    let set = set_of(vec![all_root(), all_root()], true, true, Selection::Exact);
    let b: [u8; 32] = std::array::from_fn(|i| i as u8);
    assert_eq!(select(&set, &b, &[score(9, 9, 138), score(1, 1, 120)]), 3);
    assert_eq!(
        select(&set, &b, &[score(9, 9, 120), score(1, 1, 120)]),
        2,
        "ties go to the lower ID"
    );
    assert_eq!(
        select(&set, &b, &[score(9, 9, 256), score(1, 1, 300)]),
        4,
        "raw"
    );
    // same-words block: same-words (32 bits) competes by size
    let sw = [7u8; 32];
    assert_eq!(select(&set, &sw, &[score(9, 9, 31), score(1, 1, 40)]), 2);
    assert_eq!(select(&set, &sw, &[score(9, 9, 32), score(1, 1, 40)]), 1);
    // zero block always the zero model
    assert_eq!(
        select(&set, &[0u8; 32], &[score(16, 16, 0), score(16, 16, 0)]),
        0
    );
    // zero-run rule takes same-words before any predictor
    let zr = set_of(vec![all_root(), all_root()], true, true, Selection::ZeroRun);
    assert_eq!(select(&zr, &sw, &[score(9, 9, 20), score(1, 1, 40)]), 1);
}

#[test]
fn decoder_rejects_invalid_codes() {
    let set = set_of(vec![all_root()], false, false, Selection::ZeroRun);
    let pack = |s: &str| -> (Vec<u8>, usize) {
        let b = bits_of(s);
        let mut v = vec![0u8; b.len().div_ceil(8)];
        for (i, c) in b.chars().enumerate() {
            if c == '1' {
                v[i / 8] |= 0x80 >> (i % 8);
            }
        }
        (v, b.len())
    };
    let (v, n) = pack("0 010_0001");
    assert!(matches!(
        decompress(&v, n, &set),
        Err(DecodeError::BadRunLength { run: 1, .. })
    ));
    let (v, n) = pack("0 0000_1111");
    assert!(matches!(
        decompress(&v, n, &set),
        Err(DecodeError::BadPairPosition { .. })
    ));
    let (v, n) = pack("0 010_1111 010_0010");
    assert!(matches!(
        decompress(&v, n, &set),
        Err(DecodeError::RunOverflow {
            symbol: 15,
            run: 2,
            ..
        })
    ));
    let (v, n) = pack("0 010_1111");
    assert!(matches!(
        decompress(&v, n, &set),
        Err(DecodeError::Truncated { .. })
    ));
    let (v, n) = pack("0 010_1111 0011 1");
    assert!(matches!(
        decompress(&v, n, &set),
        Err(DecodeError::TrailingBits { used: 12, extra: 1 })
    ));
    // non-canonical but valid: a default code for a single-1 symbol
    let (v, n) = pack("0 1_1000000000000000 010_1111");
    assert_eq!(
        decompress(&v, n, &set),
        Ok(block_for_symbols(&syms(&[0x8000])))
    );
    // unused header value: example set has 6 IDs in 3 bits
    let ex = example_set();
    let (v, n) = pack("111");
    assert_eq!(
        decompress(&v, n, &ex),
        Err(DecodeError::BadModelId { id: 7, max: 5 })
    );
    assert!(matches!(
        decompress(&[0u8; 40], 300, &ex),
        Err(DecodeError::TooLong { .. })
    ));
}
