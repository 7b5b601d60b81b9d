use proptest::prelude::*;

use super::*;

fn widths(block: usize, mag: usize, base: usize) -> Vec<(usize, u32)> {
    Table::new(Params::new(block, mag, base, DeltaMode::Unsigned))
        .expect("valid")
        .sizes
        .iter()
        .map(|s| (s.bytes, s.delta_bits))
        .collect()
}

#[test]
fn eq1_table_iii_and_the_paper_mags() {
    // Table III: 128-byte block, 32-byte MAG, 4-byte base.
    assert_eq!(widths(128, 32, 4), vec![(32, 6), (64, 14), (96, 22)]);
    // Section VI-G: 16-byte MAG gives 2..26 bits, 64-byte MAG one 14-bit unit.
    let w16: Vec<u32> = widths(128, 16, 4).iter().map(|s| s.1).collect();
    assert_eq!(w16, vec![2, 6, 10, 14, 18, 22, 26]);
    assert_eq!(widths(128, 64, 4), vec![(64, 14)]);
    // encoding bits: 3 sizes + raw = 2 bits; 7 + raw = 3; 1 + raw = 1.
    let t = |m| Table::new(Params::new(128, m, 4, DeltaMode::Unsigned)).unwrap();
    assert_eq!(t(32).encoding_bits(), 2);
    assert_eq!(t(16).encoding_bits(), 3);
    assert_eq!(t(64).encoding_bits(), 1);
    assert_eq!(t(32).raw_code(), 3);
}

#[test]
fn eq1_other_block_mag_base_combinations() {
    // 8-byte base on 128 bytes: 16 deltas, header 64 + 16 = 80 bits.
    assert_eq!(widths(128, 32, 8), vec![(32, 11), (64, 27), (96, 43)]);
    // 2-byte base: 64 deltas, header 16 + 64 = 80 bits.
    assert_eq!(widths(128, 32, 2), vec![(32, 2), (64, 6), (96, 10)]);
    // 32-byte blocks, 8-byte MAG, 4-byte base: header 40 bits.
    assert_eq!(widths(32, 8, 4), vec![(8, 3), (16, 11), (24, 19)]);
    // 64-byte blocks, 16-byte MAG, 4-byte base: header 48.
    assert_eq!(widths(64, 16, 4), vec![(16, 5), (32, 13), (48, 21)]);
    // 256-byte blocks, 32-byte MAG: header 96 bits, 64 deltas.
    assert_eq!(
        widths(256, 32, 4),
        vec![
            (32, 2),
            (64, 6),
            (96, 10),
            (128, 14),
            (160, 18),
            (192, 22),
            (224, 26)
        ]
    );
    // a size whose header does not fit is left out, larger ones stay:
    // 128 B, 8 B MAG, 4 B base: 8 B = 64 bits < 64-bit header + 1 bit/delta.
    let w8 = widths(128, 8, 4);
    assert_eq!(w8[0], (16, 2));
    assert_eq!(eq1(128, 4, 8), None);
    assert_eq!(eq1_all(128, 8, 4)[0], (8, None));
    // every width fills its size: header + n*d <= 8c < header + n*(d+1)
    for (block, mag, base) in [(128, 16, 4), (128, 32, 8), (64, 8, 2), (256, 64, 4)] {
        let t = Table::new(Params::new(block, mag, base, DeltaMode::Unsigned)).unwrap();
        let n = block / base;
        for s in &t.sizes {
            assert!(s.used_bits <= 8 * s.bytes);
            assert!(s.used_bits + n > 8 * s.bytes);
            assert!((s.delta_bits as usize) < 8 * base);
        }
    }
}

#[test]
fn no_delta_width_fits_is_a_clear_error() {
    // 16-byte block, 8-byte MAG, 8-byte base: header 66 bits > 64.
    let e = Table::new(Params::new(16, 8, 8, DeltaMode::Unsigned)).unwrap_err();
    assert!(
        matches!(e, MagBdiError::NoDeltaWidth { header: 66, .. }),
        "{e}"
    );
    assert!(e.to_string().contains("no delta width fits"), "{e}");
    // 32-byte block, 16-byte MAG, 8-byte base: 64+4 header, 128-bit size: 15 bits
    // fits; but 8-byte MAG on 16-byte 4-byte-base blocks: header 36, size 64: 7 bits.
    assert!(Table::new(Params::new(32, 16, 8, DeltaMode::Unsigned)).is_ok());
    assert!(Table::new(Params::new(16, 8, 4, DeltaMode::Unsigned)).is_ok());
    // 8-byte block of two 4-byte values, 4-byte MAG: header 34 > 32.
    assert!(matches!(
        Table::new(Params::new(8, 4, 4, DeltaMode::Signed)),
        Err(MagBdiError::NoDeltaWidth { .. })
    ));
}

#[test]
fn bad_parameters_are_rejected() {
    let p = |b, m, k| Table::new(Params::new(b, m, k, DeltaMode::Unsigned));
    assert_eq!(p(128, 32, 3), Err(MagBdiError::Base(3)));
    assert!(matches!(p(130, 32, 4), Err(MagBdiError::Block { .. })));
    assert!(matches!(p(1024, 32, 4), Err(MagBdiError::Block { .. })));
    assert!(matches!(p(128, 128, 4), Err(MagBdiError::Mag { .. })));
    assert!(matches!(p(128, 0, 4), Err(MagBdiError::Mag { .. })));
    assert!(matches!(p(128, 48, 4), Err(MagBdiError::Mag { .. })));
    assert!("both".parse::<DeltaMode>().is_err());
    assert_eq!("signed".parse::<DeltaMode>(), Ok(DeltaMode::Signed));
}

fn block_of(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

#[test]
fn worked_example_of_the_spec() {
    // docs/spec/mag-bdi.md: 32 words 0x1000_0000 + 3*i, except words 1 and 5
    // which are small (7 and 60).
    let mut w: Vec<u32> = (0..32).map(|i| 0x1000_0000 + 3 * i).collect();
    w[1] = 7;
    w[5] = 60;
    let c = MagBdi::new(Params::PAPER).unwrap();
    let e = c.encode(&block_of(&w));
    // 6-bit deltas: 3*31 = 93 > 63 fails; 14-bit deltas fit.
    assert_eq!(e.encoding, 1);
    assert_eq!(e.data.len(), 64);
    assert_eq!(&e.data[..4], &[0x10, 0x00, 0x00, 0x00]);
    // bitmask: every word but 1 and 5 uses the non-zero base: 1011_1011 1111...
    assert_eq!(&e.data[4..8], &[0xbb, 0xff, 0xff, 0xff]);
    // deltas: 0, 7, 6, 9 as 14-bit fields: 00000000000000 00000000000111 ...
    assert_eq!(&e.data[8..12], &[0x00, 0x00, 0x00, 0x70]);
    assert_eq!(c.decode(e.encoding, &e.data).unwrap(), block_of(&w));
    // signed: the same block, same choice
    let s = MagBdi::new(Params {
        mode: DeltaMode::Signed,
        ..Params::PAPER
    })
    .unwrap();
    assert_eq!(s.encode(&block_of(&w)).encoding, 1);
    // the padding is zero: used bits 64 + 32*14 = 512 = 64 bytes exactly
    assert_eq!(c.table().sizes[1].used_bits, 512);
}

#[test]
fn corner_cases() {
    let c = MagBdi::new(Params::PAPER).unwrap();
    let s = MagBdi::new(Params {
        mode: DeltaMode::Signed,
        ..Params::PAPER
    })
    .unwrap();
    // zeros and every word equal to the base compress to 32 bytes
    assert_eq!(c.encode(&[0u8; 128]).encoding, 0);
    let same = block_of(&[0xdead_beef; 32]);
    let e = c.encode(&same);
    assert_eq!(e.encoding, 0);
    assert_eq!(
        &e.data[..8],
        &[0xde, 0xad, 0xbe, 0xef, 0xff, 0xff, 0xff, 0xff]
    );
    assert!(e.data[8..].iter().all(|&b| b == 0));
    // deltas exactly at each width's limit, and one past it
    for (code, d) in [(0u32, 6u32), (1, 14), (2, 22)] {
        let base = 0x8000_0000u32;
        let mut w = vec![base; 32];
        w[7] = base + (1 << d) - 1;
        assert_eq!(c.encode(&block_of(&w)).encoding, code, "unsigned limit {d}");
        w[7] = base + (1 << d);
        assert_eq!(
            c.encode(&block_of(&w)).encoding,
            code + 1,
            "unsigned over {d}"
        );
        // a value below the base needs leading ones: unsigned cannot
        w[7] = base - 1;
        assert_eq!(c.encode(&block_of(&w)).encoding, 3, "unsigned negative");
        // signed: [-2^(d-1), 2^(d-1))
        w[7] = base.wrapping_sub(1 << (d - 1));
        assert_eq!(s.encode(&block_of(&w)).encoding, code, "signed low {d}");
        w[7] = base + (1 << (d - 1)) - 1;
        assert_eq!(s.encode(&block_of(&w)).encoding, code, "signed high {d}");
        w[7] = base + (1 << (d - 1));
        assert_eq!(
            s.encode(&block_of(&w)).encoding,
            code + 1,
            "signed over {d}"
        );
        // zero base: small values
        let mut z = vec![0u32; 32];
        z[3] = (1 << d) - 1;
        z[4] = (1 << d) - 2;
        assert_eq!(c.encode(&block_of(&z)).encoding, code);
        z[4] = 0;
        z[3] = u32::MAX; // -1: signed zero base, unsigned non-zero base
        assert_eq!(s.encode(&block_of(&z)).encoding, 0);
        assert_eq!(c.encode(&block_of(&z)).encoding, 0);
    }
    // random data is raw
    let raw: Vec<u8> = (0..128u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    let e = c.encode(&raw);
    assert_eq!(e.encoding, 3);
    assert_eq!(e.data, raw);
    // the non-zero base is the first value the zero base cannot cover
    let mut w = vec![5u32; 32];
    w[9] = 0x7000_0000;
    w[10] = 0x7000_0010;
    let u = c.unit(&block_of(&w), 6);
    assert!(u.fits);
    assert_eq!(u.base, 0x7000_0000);
    assert_eq!(u.mask.iter().filter(|&&m| m).count(), 2);
    assert_eq!(u.deltas[10], 0x10);
}

#[test]
fn decoder_errors() {
    let c = MagBdi::new(Params::new(128, 64, 4, DeltaMode::Unsigned)).unwrap();
    // codes: 0 = 64 B, 1 = raw; 1 encoding bit, nothing unused
    assert!(c.decode(2, &[0; 128]).is_err());
    assert!(c.decode(0, &[0; 63]).is_err());
    assert!(c.decode(1, &[0; 127]).is_err());
    // 64 + 32*14 = 512: no padding at 64 B; at MAG 32 size 32 B: 64+192=256, none.
    let m16 = MagBdi::new(Params::new(128, 16, 4, DeltaMode::Unsigned)).unwrap();
    assert!(m16.table().sizes.iter().all(|s| s.used_bits == 8 * s.bytes));
    // a configuration with padding: 128 B, 32 B MAG, 8-byte base: 80 + 16*11 = 256: none;
    // 64 B blocks / 16 B MAG / 4 B base: 48 + 16*5 = 128: none. 2-byte base, 128/32: 80+64*2 = 208 < 256.
    let p = MagBdi::new(Params::new(128, 32, 2, DeltaMode::Unsigned)).unwrap();
    let mut d = vec![0u8; 32];
    assert!(p.decode(0, &d).is_ok());
    d[31] = 1;
    assert!(matches!(p.decode(0, &d), Err(DecodeError::Invalid { .. })));
    // through BlockCodec: wrong lengths
    let b = c.compress(&[0u8; 128]);
    assert!(c.decompress(&b.bytes, b.len - 1).is_err());
    assert!(c.decompress(&b.bytes, b.len + 1).is_err());
    assert!(c.decompress(&b.bytes[..4], b.len).is_err());
}

fn configs() -> Vec<MagBdi> {
    let mut v = Vec::new();
    for mode in [DeltaMode::Unsigned, DeltaMode::Signed] {
        for (b, m, k) in [
            (128, 16, 4),
            (128, 32, 4),
            (128, 64, 4),
            (128, 32, 8),
            (128, 32, 2),
            (32, 8, 4),
        ] {
            v.push(MagBdi::new(Params::new(b, m, k, mode)).unwrap());
        }
    }
    v
}

fn structured(seed: u64, len: usize, kind: u8) -> Vec<u8> {
    let mut s = seed;
    let mut next = || {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        s >> 16
    };
    let base = next() as u32;
    (0..len / 4)
        .flat_map(|i| {
            let r = next();
            let w = match kind % 4 {
                0 => base.wrapping_add((r % (1 << (r % 24))) as u32),
                1 => base.wrapping_sub((r % 300) as u32),
                2 => {
                    if i % 3 == 0 {
                        (r % 1000) as u32
                    } else {
                        base.wrapping_add((r % 1000) as u32)
                    }
                }
                _ => r as u32,
            };
            w.to_le_bytes()
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn round_trip(seed in any::<u64>(), kind in any::<u8>(), raw in proptest::collection::vec(any::<u8>(), 128)) {
        for c in configs() {
            let n = c.block_bytes();
            let block = if kind % 5 == 4 { raw[..n].to_vec() } else { structured(seed, n, kind) };
            let e = c.encode(&block);
            prop_assert_eq!(e.data.len(), c.table().size_of(e.encoding).unwrap());
            prop_assert_eq!(&c.decode(e.encoding, &e.data).unwrap(), &block);
            let b = c.compress(&block);
            prop_assert_eq!(c.decompress(&b.bytes, b.len).unwrap(), block.clone());
            // smallest size that fits wins: no smaller unit fits
            for s in &c.table().sizes[..(e.encoding as usize).min(c.table().sizes.len())] {
                prop_assert!(!c.unit(&block, s.delta_bits).fits);
            }
        }
    }

    #[test]
    fn arbitrary_input_never_panics(code in 0u32..10, data in proptest::collection::vec(any::<u8>(), 0..140), len in 0usize..1200) {
        for c in configs() {
            let _ = c.decode(code, &data);
            let _ = c.decompress(&data, len);
            if let Ok(b) = c.decode(code, &data) {
                prop_assert_eq!(b.len(), c.block_bytes());
            }
        }
    }
}
