use super::*;
use proptest::prelude::*;

fn counting_block() -> Vec<u8> {
    // The spec's worked example: segment j = j (32-bit little-endian).
    (0u32..32).flat_map(|j| j.to_le_bytes()).collect()
}

fn bits_of(c: &Compressed) -> String {
    (0..c.len)
        .map(|i| {
            if c.bytes[i / 8] >> (7 - i % 8) & 1 == 1 {
                '1'
            } else {
                '0'
            }
        })
        .collect()
}

#[test]
fn worked_example_plain() {
    let d = Dpc::default();
    let b = counting_block();
    let t = d.analyse(&b);
    // Groups 0..4 mixed, 5..31 all zero.
    assert_eq!(t.es, !0x1fu64 & 0xffff_ffff);
    assert_eq!(t.ones, 0);
    assert_eq!(t.coded_bits, 32 + 27 + 5 * 32);
    let c = d.encode(&b).unwrap();
    assert_eq!(c.len, 1 + 32 + 27 + 5 * 32);
    let s = bits_of(&c);
    assert_eq!(&s[..1], "1");
    assert_eq!(&s[1..33], "00000111111111111111111111111111");
    // Group 0 (bit 0 of segments 0..31) = 0101..., group 1 = 0011..., ...
    assert_eq!(&s[33..65], "01".repeat(16));
    assert_eq!(&s[65..97], "0011".repeat(8));
    assert_eq!(&s[97..129], "00001111".repeat(4));
    assert_eq!(&s[129..161], "0000000011111111".repeat(2));
    assert_eq!(
        &s[161..193],
        format!("{}{}", "0".repeat(16), "1".repeat(16))
    );
    assert_eq!(&s[193..], "0".repeat(27));
    assert_eq!(
        hex::encode(&c.bytes),
        "83ffffffaaaaaaaa9999999987878787807f807f80007fff80000000"
    );
    assert_eq!(d.decode(&c.bytes, c.len).unwrap(), b);
}

#[test]
fn worked_example_truc_and_man() {
    let d = Dpc::default();
    let b = counting_block();
    // "1000": only sector 0 (segments 0..7 = 0..7) is critical.
    let c = d.encode_truc(&b, 0b0001).unwrap();
    assert_eq!(c.len, 4 + 1 + 32 + 29 + 3 * 8);
    let s = bits_of(&c);
    assert_eq!(&s[..5], "10001");
    assert_eq!(&s[5..37], format!("000{}", "1".repeat(29)));
    assert_eq!(&s[37..61], "010101010011001100001111");
    assert_eq!(&s[61..], "0".repeat(29));
    let (out, mask) = d.decode_truc(&c.bytes, c.len).unwrap();
    assert_eq!(mask, 1);
    assert_eq!(&out[..32], &b[..32]);
    assert!(out[32..].iter().all(|&x| x == 0));

    // DF-MAN: zeros in sectors 1..3 leave groups 0..2 mixed (32 bits
    // each): 1 + 32 + 29 + 96 = 158 < 220 bits of the original.
    let m = d.encode_man(&b, 0b0001).unwrap();
    assert!(m.manipulated);
    assert_eq!(m.packet.len, 158);
    assert_eq!(d.packet_bits(Mode::Man, &b, 1).unwrap(), 158);
    let out = d.decode(&m.packet.bytes, m.packet.len).unwrap();
    assert_eq!(&out[..32], &b[..32]);
}

#[test]
fn man_keeps_the_original_when_zeros_hurt() {
    let d = Dpc::default();
    let b = vec![0xffu8; 128];
    let m = d.encode_man(&b, 0b0001).unwrap();
    assert!(!m.manipulated);
    assert_eq!(m.packet.len, 1 + 32 + 32);
    // The manipulated copy has every group mixed: raw.
    assert_eq!(d.encode(&d.manipulated(&b, 1)).unwrap().len, 1025);
}

#[test]
fn raw_fallback_and_tie_rule() {
    let d = Dpc::default();
    // Exactly one uniform group (bit 31 always 0; segments 0 and 1 make
    // bits 0..30 mixed): 1+32+1+31*32 = 1026 bits > 1025: raw.
    let b: Vec<u8> = (0u32..32)
        .flat_map(|j| {
            match j {
                0 => 0,
                1 => 0x7fff_ffff,
                _ => j.wrapping_mul(0x9e37_79b9) & 0x7fff_ffff,
            }
            .to_le_bytes()
        })
        .collect();
    let t = d.analyse(&b);
    assert_eq!(t.es, 1 << 31);
    assert_eq!(t.coded_bits, 32 + 1 + 31 * 32);
    assert!(!t.compressed);
    let c = d.encode(&b).unwrap();
    assert_eq!(c.len, 1025);
    assert_eq!(c.bytes[0] >> 7, 0);
    assert_eq!(d.decode(&c.bytes, c.len).unwrap(), b);
    // Two uniform groups: 1 + 32 + 2 + 30*32 = 995 < 1025: coded.
    assert!(d.analyse(&[0u8; 128]).compressed);
    assert_eq!(d.encode(&[0u8; 128]).unwrap().len, 65);
}

#[test]
fn truc_full_and_empty_mask() {
    let d = Dpc::default();
    let b = counting_block();
    let full = d.encode_truc(&b, 0xf).unwrap();
    let plain = d.encode(&b).unwrap();
    assert_eq!(full.len, 4 + plain.len);
    // No critical sector: the mask and C = 0, no data.
    let e = d.encode_truc(&b, 0).unwrap();
    assert_eq!(e.len, 5);
    assert_eq!(d.decode_truc(&e.bytes, e.len).unwrap(), (vec![0u8; 128], 0));
    // Full mask: DF-MAN is plain DPC.
    assert_eq!(d.encode_man(&b, 0xf).unwrap().packet, plain);
}

#[test]
fn bad_parameters_and_inputs() {
    assert_eq!(DpcParams::new(128, 3, 32), Err(DpcError::SegmentSize(3)));
    assert!(matches!(
        DpcParams::new(128, 4, 6),
        Err(DpcError::SectorSize { .. })
    ));
    assert!(matches!(
        DpcParams::new(100, 4, 32),
        Err(DpcError::BlockSize { .. })
    ));
    assert!(matches!(
        DpcParams::new(128 * 9, 4, 32),
        Err(DpcError::SectorCount { sectors: 36 })
    ));
    // 32 sectors, but above the largest block.
    assert_eq!(
        DpcParams::new(2048, 4, 64),
        Err(DpcError::BlockTooLarge { block: 2048 })
    );
    assert!(DpcParams::new(1024, 4, 32).is_ok());
    // A one-segment block is a geometry too (it is never coded).
    assert!(DpcParams::new(8, 8, 8).is_ok());
    let d = Dpc::default();
    assert_eq!(
        d.encode(&[0u8; 32]),
        Err(DpcError::InputSize { got: 32, want: 128 })
    );
    assert!(matches!(
        d.encode_truc(&[0u8; 128], 0x10),
        Err(DpcError::Mask { mask: 0x10, .. })
    ));
    assert!(d.encode_man(&[0u8; 128], 0x1f).is_err());
    // Decoder errors.
    assert!(matches!(
        d.decode(&[0x80], 8),
        Err(DecodeError::Truncated { .. })
    ));
    assert!(matches!(
        d.decode(&[0x80], 9),
        Err(DecodeError::ShortBuffer { .. })
    ));
    let mut c = d.encode(&[0u8; 128]).unwrap();
    c.bytes.push(0);
    assert!(matches!(
        d.decode(&c.bytes, c.len + 1),
        Err(DecodeError::TrailingBits { .. })
    ));
}

#[test]
fn other_geometries() {
    for (b, s, k) in [
        (32, 4, 32),
        (64, 2, 16),
        (128, 1, 32),
        (256, 8, 32),
        (128, 4, 4),
    ] {
        let p = DpcParams::new(b, s, k).unwrap();
        let d = Dpc::new(p);
        let blk: Vec<u8> = (0..b).map(|i| (i * 7 % 13) as u8).collect();
        let c = d.encode(&blk).unwrap();
        assert_eq!(d.decode(&c.bytes, c.len).unwrap(), blk);
        let mask = 0b101 & p.full_mask();
        let t = d.encode_truc(&blk, mask).unwrap();
        let (out, m) = d.decode_truc(&t.bytes, t.len).unwrap();
        assert_eq!(m, mask);
        assert_eq!(out, d.manipulated(&blk, mask));
    }
}

fn block_strategy() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        proptest::collection::vec(any::<u8>(), 128),
        // Few distinct bits set: compressible.
        (
            any::<u32>(),
            any::<u32>(),
            proptest::collection::vec(any::<u32>(), 32)
        )
            .prop_map(|(keep, set, v)| v
                .iter()
                .flat_map(|x| (x & keep & 0x0f0f_00ff | set).to_le_bytes())
                .collect()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn plain_round_trip(b in block_strategy()) {
        let d = Dpc::default();
        let c = d.encode(&b).unwrap();
        prop_assert!(c.len <= d.params().max_bits());
        prop_assert_eq!(c.len, d.packet_bits(Mode::Plain, &b, 0xf).unwrap());
        prop_assert_eq!(d.decode(&c.bytes, c.len).unwrap(), b);
    }

    #[test]
    fn truc_restores_critical_sectors(b in block_strategy(), mask in 0u32..16) {
        let d = Dpc::default();
        let c = d.encode_truc(&b, mask).unwrap();
        prop_assert_eq!(c.len, d.packet_bits(Mode::Truc, &b, mask).unwrap());
        prop_assert!(c.len <= 4 + 1 + 32 * mask.count_ones() as usize * 8);
        let (out, m) = d.decode_truc(&c.bytes, c.len).unwrap();
        prop_assert_eq!(m, mask);
        for k in 0..4 {
            let r = 32 * k..32 * k + 32;
            if mask >> k & 1 == 1 {
                prop_assert_eq!(&out[r.clone()], &b[r]);
            } else {
                prop_assert!(out[r].iter().all(|&x| x == 0));
            }
        }
    }

    #[test]
    fn man_restores_critical_and_is_never_worse(b in block_strategy(), mask in 0u32..16) {
        let d = Dpc::default();
        let m = d.encode_man(&b, mask).unwrap();
        let plain = d.encode(&b).unwrap();
        prop_assert!(m.packet.len <= plain.len);
        prop_assert_eq!(m.packet.len, d.packet_bits(Mode::Man, &b, mask).unwrap());
        let out = d.decode(&m.packet.bytes, m.packet.len).unwrap();
        let want = if m.manipulated { d.manipulated(&b, mask) } else { b.clone() };
        prop_assert_eq!(out, want);
    }

    #[test]
    fn decoders_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..140), len in 0usize..1200) {
        let d = Dpc::default();
        let _ = d.decode(&bytes, len);
        let _ = d.decode_truc(&bytes, len);
        let small = Dpc::new(DpcParams::new(32, 8, 8).unwrap());
        let _ = small.decode(&bytes, len);
        let _ = small.decode_truc(&bytes, len);
    }
}
