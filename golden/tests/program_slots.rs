//! Programmable predictor slots (`docs/spec/program-slots.md`): the image
//! loader's refusals, the equivalence of slots loaded with hard-wired
//! predictors, K = 0 and the reset value, the run-time trainer, and round
//! trips on corpus blocks.

mod common;
#[path = "common/skip.rs"]
mod skip;

use golden::mpc::model::{ByteRule, ModelSet, Predictor};
use golden::mpc::program::{
    column_major, crc32, partition_reorder, set_tag, train_slots, Form, ImageError, OnlineOptions,
    ProgrammedSet, ReorderClass, Slot, SlotImage, SlotReorder, FORMS, HEADER_BYTES,
};
use golden::mpc::{compress, decompress, MpcCodec, BLOCK_BYTES};

fn default_set() -> ModelSet {
    ModelSet::parse(include_str!("../../models/default/model.toml"), "default")
        .expect("models/default is valid")
}

/// Deterministic blocks of many kinds: int32 ramps and noise, small
/// int16s, bytes, zeros, same words, floats, random.
fn synthetic_blocks(n: usize) -> Vec<[u8; BLOCK_BYTES]> {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut rnd = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    (0..n)
        .map(|i| {
            let mut b = [0u8; BLOCK_BYTES];
            let r = rnd();
            match i % 8 {
                0 => {
                    for w in 0..8 {
                        let v = (1000 * i as u32) + (w as u32) * 3 + (r as u32 & 3);
                        b[4 * w..4 * w + 4].copy_from_slice(&v.to_le_bytes());
                    }
                }
                1 => {
                    for h in 0..16 {
                        let v = ((r >> (h % 8)) as i16 & 0x3f) - 20;
                        b[2 * h..2 * h + 2].copy_from_slice(&v.to_le_bytes());
                    }
                }
                2 => {}
                3 => {
                    for w in 0..8 {
                        b[4 * w..4 * w + 4].copy_from_slice(&(r as u32).to_le_bytes());
                    }
                }
                4 => {
                    for w in 0..8 {
                        let f = 1.0f32 + (w as f32) * 0.001 + (r % 7) as f32 * 0.01;
                        b[4 * w..4 * w + 4].copy_from_slice(&f.to_le_bytes());
                    }
                }
                5 => {
                    for (k, v) in b.iter_mut().enumerate() {
                        *v = (rnd() >> (k % 8)) as u8;
                    }
                }
                6 => {
                    for (k, v) in b.iter_mut().enumerate() {
                        *v = (k as u8).wrapping_mul(3).wrapping_add(r as u8 & 1);
                    }
                }
                _ => {
                    for q in 0..4 {
                        let v = (r >> (16 * q)) & 0xff;
                        b[8 * q..8 * q + 8].copy_from_slice(&v.to_le_bytes());
                    }
                }
            }
            b
        })
        .collect()
}

/// The set with its first `j` predictors only.
fn first(set: &ModelSet, j: usize) -> ModelSet {
    let mut s = set.clone();
    s.predictors.truncate(j);
    s
}

/// Image of form `form` for `hw` whose slots are `slots`.
fn image_of(hw: &ModelSet, form: Form, slots: &[Predictor]) -> SlotImage {
    let mut img = SlotImage::empty(hw, form, slots.len());
    for (dst, p) in img.slots.iter_mut().zip(slots) {
        *dst = Some(
            Slot::from_predictor(p, form, &hw.predictors)
                .unwrap_or_else(|| panic!("form {} cannot express {}", form.name, p.name)),
        );
    }
    img
}

/// `unit` and `set` code every block bit-identically, and both decode.
fn assert_same_coding(unit: &ProgrammedSet, set: &ModelSet, blocks: &[[u8; BLOCK_BYTES]]) {
    assert_eq!(unit.header_bits(), set.header_bits());
    let fast = unit.fast_codec();
    for (i, b) in blocks.iter().enumerate() {
        let want = compress(b, set);
        let got = unit.compress(b);
        assert_eq!(got, want, "block {i}: programmed reference coder");
        assert_eq!(fast.compress(b), want, "block {i}: programmed fast coder");
        let d = unit
            .decompress(got.as_bytes(), got.len as usize)
            .expect("decodes");
        assert_eq!(&d, b, "block {i} round trip");
    }
}

#[test]
fn slots_loaded_with_hard_wired_predictors_code_identically() {
    let set = default_set();
    let blocks = synthetic_blocks(400);
    let full = Form::by_name("full").expect("form");
    // the last 5 - j predictors of models/default move into slots: same
    // IDs, same header, so the same bits
    for j in 1..set.predictors.len() {
        let hw = first(&set, j);
        let img = image_of(&hw, full, &set.predictors[j..]);
        let bytes = img.to_bytes();
        let back = SlotImage::load(&bytes).expect("image loads");
        assert_eq!(back, img);
        let unit = ProgrammedSet::new(&hw, &back).expect("image fits the set");
        assert_same_coding(&unit, &set, &blocks);
    }
    // the stride forms: a set of one hard-wired predictor and two stride
    // predictors whose reorders the form's class holds
    for form in FORMS.iter().filter(|f| f.name != "full") {
        let strides = |k: i8, reorder: [u8; 256], name: &str| Predictor {
            name: name.into(),
            bytes: std::array::from_fn(|i| match i {
                16.. => ByteRule::Base {
                    base: (i - 16) as u8,
                    shift: 0,
                },
                8.. => ByteRule::Base {
                    base: (i - 8) as u8,
                    shift: k,
                },
                4.. => ByteRule::Base {
                    base: (i - 4) as u8,
                    shift: 0,
                },
                2.. => ByteRule::Base {
                    base: (i - 2) as u8,
                    shift: -k,
                },
                _ => ByteRule::Root,
            }),
            reorder,
        };
        let k = form.max_shift.min(1);
        let identity: [u8; 256] = std::array::from_fn(|o| o as u8);
        let cols: [u8; 32] = std::array::from_fn(|c| (31 - c) as u8);
        let mask: [u8; 32] = std::array::from_fn(|i| if i % 4 == 0 { 0xa5 } else { 0 });
        let (r1, r2) = match form.reorder {
            ReorderClass::Any => unreachable!("full is tested above"),
            ReorderClass::Partition => (partition_reorder(&mask), identity),
            ReorderClass::Columns | ReorderClass::ColumnsPartition => (
                column_major(&cols),
                column_major(&identity[..32].try_into().expect("32")),
            ),
            ReorderClass::Library => (set.predictors[0].reorder, identity),
        };
        let hand = ModelSet {
            predictors: vec![
                set.predictors[0].clone(),
                strides(k, r1, "s1"),
                strides(0, r2, "s2"),
            ],
            ..set.clone()
        };
        let hw = first(&hand, 1);
        let img = image_of(&hw, *form, &hand.predictors[1..]);
        let back = SlotImage::load(&img.to_bytes()).expect("image loads");
        let unit = ProgrammedSet::new(&hw, &back).expect("fits");
        assert_same_coding(&unit, &hand, &blocks);
    }
}

#[test]
fn the_checksum_is_ieee_crc32() {
    assert_eq!(crc32(b"123456789"), 0xcbf4_3926);
    assert_eq!(crc32(b""), 0);
}

#[test]
fn k_zero_is_the_hard_wired_unit() {
    let set = default_set();
    let img = SlotImage::empty(&set, FORMS[2], 0);
    let bytes = img.to_bytes();
    assert_eq!(bytes.len(), HEADER_BYTES + 4);
    let unit = ProgrammedSet::new(&set, &SlotImage::load(&bytes).expect("loads")).expect("fits");
    assert_eq!(unit.id_count(), set.id_count());
    assert_same_coding(&unit, &set, &synthetic_blocks(200));
}

#[test]
fn unloaded_slots_take_no_model_id() {
    let set = default_set();
    let blocks = synthetic_blocks(200);
    // the reset value: K slots, none loaded, is the hard-wired unit
    let img = SlotImage::empty(&set, FORMS[0], 3);
    let unit = ProgrammedSet::new(&set, &img).expect("fits");
    assert_eq!(unit.slots(), 3);
    assert_eq!(
        (0..3).map(|j| unit.slot_id(j)).collect::<Vec<_>>(),
        [None; 3]
    );
    assert_same_coding(&unit, &set, &blocks);
    // slot 1 of 3 loaded: it takes ID 7, raw moves to 8, a 4-bit header
    let mut img = img;
    img.slots[1] = Slot::from_predictor(&set.predictors[2], FORMS[0], &set.predictors);
    let unit = ProgrammedSet::new(&set, &img).expect("fits");
    assert_eq!(unit.slot_id(1), Some(7));
    assert_eq!(unit.id_count(), 9);
    assert_eq!(unit.header_bits(), 4);
    let fast = unit.fast_codec();
    for b in &blocks {
        let c = unit.compress(b);
        let h = compress(b, &set);
        // a copy of hard-wired predictor 2 loses every tie to it: the same
        // choice, raw moved past the slot, one more header bit
        let want = if h.model == set.raw_id() { 8 } else { h.model };
        assert_eq!(c.model, want);
        assert_eq!(c.len, h.len + 1);
        assert_eq!(fast.compress(b), c);
        assert_eq!(unit.decompress(c.as_bytes(), c.len as usize), Ok(*b));
    }
    // header 1001 (ID 9) is past the raw escape: refused
    assert!(unit.decompress(&[0b1001_0000, 0, 0, 0, 0], 40).is_err());
}

/// `bytes` with its checksum recomputed.
fn resealed(mut bytes: Vec<u8>) -> Vec<u8> {
    let n = bytes.len() - 4;
    let c = crc32(&bytes[..n]);
    bytes[n..].copy_from_slice(&c.to_le_bytes());
    bytes
}

/// The image with byte `at` set to `v`, resealed.
fn poke(bytes: &[u8], at: usize, v: u8) -> Vec<u8> {
    let mut b = bytes.to_vec();
    b[at] = v;
    resealed(b)
}

/// An image of `k` loaded slots of `form` for models/default: a depth-3
/// stride tree (bytes from 4, 8 and 16 bytes back) with the class's
/// simplest reorder, the last slot's first byte based on the next byte.
fn loaded_image(form: &str, k: usize) -> (ModelSet, SlotImage) {
    let set = default_set();
    let form = Form::by_name(form).expect("form");
    let rules: [ByteRule; 32] = std::array::from_fn(|i| match i {
        16.. => ByteRule::Base {
            base: (i - 16) as u8,
            shift: 0,
        },
        8.. => ByteRule::Base {
            base: (i - 8) as u8,
            shift: 0,
        },
        4.. => ByteRule::Base {
            base: (i - 4) as u8,
            shift: form.max_shift.min(1),
        },
        _ => ByteRule::Root,
    });
    let reorder = match form.reorder {
        ReorderClass::Any => SlotReorder::Any(Box::new(std::array::from_fn(|o| o as u8))),
        ReorderClass::Partition => SlotReorder::Partition([0x0f; 32]),
        ReorderClass::Columns => SlotReorder::Columns(std::array::from_fn(|c| c as u8)),
        ReorderClass::ColumnsPartition => {
            SlotReorder::ColumnsPartition(std::array::from_fn(|c| (31 - c) as u8), [0x33; 32])
        }
        ReorderClass::Library => SlotReorder::Library(2),
    };
    let mut img = SlotImage::empty(&set, form, k);
    for s in img.slots.iter_mut() {
        *s = Some(Slot {
            rules,
            reorder: reorder.clone(),
        });
    }
    let back = SlotImage::load(&img.to_bytes()).expect("a valid image");
    assert_eq!(back, img);
    (set, img)
}

#[test]
fn every_malformed_image_is_refused_naming_its_field() {
    let (set, img) = loaded_image("full", 2);
    let good = img.to_bytes();
    let rec = HEADER_BYTES; // slot 0 record
    let load = SlotImage::load;
    assert!(matches!(
        load(&good[..10]),
        Err(ImageError::TooShort { len: 10, .. })
    ));
    assert!(matches!(
        load(&poke(&good, 0, b'X')),
        Err(ImageError::Magic { .. })
    ));
    assert_eq!(
        load(&poke(&good, 4, 2)),
        Err(ImageError::Version { found: 2 })
    );
    assert_eq!(
        load(&poke(&good, 5, 99)),
        Err(ImageError::Form { found: 99 })
    );
    assert_eq!(
        load(&poke(&good, 6, 65)),
        Err(ImageError::TooManySlots { found: 65 })
    );
    assert!(matches!(
        load(&poke(&good, 6, 3)),
        Err(ImageError::Size { k: 3, .. })
    ));
    let mut flipped = good.clone();
    flipped[rec + 5] ^= 1;
    assert!(matches!(load(&flipped), Err(ImageError::Checksum { .. })));
    assert_eq!(
        load(&poke(&good, rec, 2)),
        Err(ImageError::Flag { slot: 0, found: 2 })
    );
    // an unloaded record with a stray byte
    let mut e = SlotImage::empty(&set, FORMS[0], 1).to_bytes();
    e[rec + 7] = 1;
    assert_eq!(
        load(&resealed(e)),
        Err(ImageError::UnloadedNotZero {
            slot: 0,
            offset: 7,
            found: 1
        })
    );
    // full form: base field of byte 3 (offset 1 + 2*3), shift field
    assert_eq!(
        load(&poke(&good, rec + 7, 40)),
        Err(ImageError::Base {
            slot: 0,
            byte: 3,
            found: 40
        })
    );
    assert_eq!(
        load(&poke(&good, rec + 7, 3)),
        Err(ImageError::Base {
            slot: 0,
            byte: 3,
            found: 3
        })
    );
    let mut b = good.clone();
    b[rec + 7] = 0;
    b[rec + 8] = 9;
    assert!(matches!(
        load(&resealed(b)),
        Err(ImageError::Shift {
            slot: 0,
            byte: 3,
            found: 9,
            ..
        })
    ));
    let mut b = good.clone();
    b[rec + 7] = 0xff;
    b[rec + 8] = 1;
    assert_eq!(
        load(&resealed(b)),
        Err(ImageError::RootShift {
            slot: 0,
            byte: 3,
            found: 1
        })
    );
    // a two-byte cycle: byte 0 <- 1, byte 1 <- 0
    let mut b = good.clone();
    b[rec + 1..rec + 5].copy_from_slice(&[1, 0, 0, 0]);
    assert!(matches!(
        load(&resealed(b)),
        Err(ImageError::Cycle { slot: 0, .. })
    ));
    // reorder: position 1 repeats position 0's value
    let ro = rec + 1 + 64;
    let mut b = good.clone();
    b[ro + 1] = b[ro];
    assert!(matches!(
        load(&resealed(b)),
        Err(ImageError::Reorder {
            slot: 0,
            position: 1,
            ..
        })
    ));

    // stride forms: candidate, stride before byte 0, depth, columns, library
    let (_, simg) = loaded_image("stride-cols", 1);
    let sgood = simg.to_bytes();
    assert_eq!(
        load(&poke(&sgood, rec + 1 + 20, 0x67)),
        Err(ImageError::Candidate {
            slot: 0,
            byte: 20,
            found: 6
        })
    );
    assert_eq!(
        load(&poke(&sgood, rec + 1 + 3, 0x47)),
        Err(ImageError::StrideBeforeStart {
            slot: 0,
            byte: 3,
            stride: 8
        })
    );
    assert!(matches!(
        load(&poke(&sgood, rec + 1 + 3, 0x1f)),
        Err(ImageError::Shift { found: 8, .. })
    ));
    // every byte based on the one before: depth 31
    let mut b = sgood.clone();
    b[rec + 1] = 0x07;
    for i in 1..32 {
        b[rec + 1 + i] = 0x17;
    }
    assert!(matches!(
        load(&resealed(b)),
        Err(ImageError::Depth {
            slot: 0,
            found: 31,
            max: 4,
            ..
        })
    ));
    let mut b = sgood.clone();
    b[rec + 33 + 5] = 32;
    assert_eq!(
        load(&resealed(b)),
        Err(ImageError::Columns {
            slot: 0,
            position: 5,
            value: 32
        })
    );
    let (_, limg) = loaded_image("stride-lib", 1);
    let lgood = limg.to_bytes();
    assert_eq!(
        load(&poke(&lgood, rec + 33, 6)),
        Err(ImageError::Library {
            slot: 0,
            found: 6,
            last: 5
        })
    );

    // pairing with a set
    let ok = load(&good).expect("the good image loads");
    assert!(ProgrammedSet::new(&set, &ok).is_ok());
    assert_eq!(
        ProgrammedSet::new(&first(&set, 4), &ok).err(),
        Some(ImageError::HardWired { image: 5, set: 4 })
    );
    let mut other = set.clone();
    other.predictors[0].reorder.swap(0, 1);
    assert!(matches!(
        ProgrammedSet::new(&other, &ok),
        Err(ImageError::SetTag { .. })
    ));
    let mut big = set.clone();
    while big.predictors.len() < 200 {
        big.predictors.push(set.predictors[0].clone());
    }
    let mut bimg = SlotImage::empty(&big, FORMS[0], 60);
    for s in bimg.slots.iter_mut() {
        *s = Slot::from_predictor(&set.predictors[0], FORMS[0], &big.predictors);
    }
    assert_eq!(
        ProgrammedSet::new(&big, &bimg).err(),
        Some(ImageError::TooManyIds { ids: 263, k: 60 })
    );
    assert_ne!(set_tag(&set), set_tag(&other));
}

#[test]
fn loader_never_panics_on_mangled_images() {
    let (_, img) = loaded_image("stride-colpart", 2);
    let good = img.to_bytes();
    let mut x = 12345u64;
    for round in 0..3000 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let mut b = good.clone();
        let at = (x >> 33) as usize % b.len();
        b[at] = (x >> 17) as u8;
        let b = if round % 2 == 0 { resealed(b) } else { b };
        let cut = if round % 7 == 0 {
            (x >> 40) as usize % b.len()
        } else {
            b.len()
        };
        if let Ok(i) = SlotImage::load(&b[..cut]) {
            // whatever loads writes back to the same bytes
            assert_eq!(i.to_bytes(), &b[..cut]);
        }
    }
}

#[test]
fn trainer_is_deterministic_and_slots_pay_for_themselves() {
    let set = default_set();
    // int32 data with a per-word stride the hard-wired set does not know
    let blocks: Vec<[u8; BLOCK_BYTES]> = (0..4000u32)
        .map(|i| {
            let mut b = [0u8; BLOCK_BYTES];
            for w in 0..8u32 {
                let v = (i * 8 + w) * 0x0101 + ((i * 7 + w * 3) % 5);
                b[4 * w as usize..4 * w as usize + 4].copy_from_slice(&v.to_le_bytes());
            }
            b
        })
        .collect();
    // trained on every other block, measured on the rest
    let train: Vec<[u8; BLOCK_BYTES]> = blocks.iter().step_by(2).copied().collect();
    let hw_codec = MpcCodec::new(&set);
    for form in FORMS {
        let opts = OnlineOptions::new(form, 2);
        let a = train_slots(&set, &train, &opts).expect("trains");
        let b = train_slots(&set, &train, &opts).expect("trains");
        assert_eq!(
            a.to_bytes(),
            b.to_bytes(),
            "form {}: deterministic",
            form.name
        );
        let unit = ProgrammedSet::new(&set, &a).expect("fits");
        let fast = unit.fast_codec();
        let (mut hw, mut pr) = (0u64, 0u64);
        for b in blocks.iter().skip(1).step_by(2) {
            hw += hw_codec.compress(b).len as u64;
            let c = fast.compress(b);
            pr += c.len as u64;
        }
        // never more than the one header bit the slots add; the forms whose
        // reorder can gather the zero bits of a new base tree gain
        let n = (blocks.len() / 2) as u64;
        assert!(
            pr <= hw + n,
            "form {}: {pr} bits with slots, {hw} without",
            form.name
        );
        if matches!(
            form.reorder,
            ReorderClass::Any | ReorderClass::Partition | ReorderClass::ColumnsPartition
        ) {
            assert!(
                pr < hw,
                "form {}: {pr} bits with slots, {hw} without",
                form.name
            );
        }
    }
}

#[test]
fn programmed_units_round_trip_corpus_blocks() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus");
    if !dir.is_dir() {
        skip::skip(
            skip::REQUIRE_TOOLS,
            "programmed_units_round_trip_corpus_blocks",
            &format!("no shared corpus at {}", dir.display()),
        );
        return;
    }
    let set = default_set();
    let files = common::corpus_bin_files();
    let form = Form::by_name("stride-colpart").expect("form");
    for f in files.iter().step_by(4) {
        let blocks = golden::blocks::read_blocks::<BLOCK_BYTES>(f, true).expect("corpus file");
        let n = blocks.len();
        // four pieces of 256 blocks spread over the file
        let sample: Vec<[u8; BLOCK_BYTES]> = (0..4)
            .flat_map(|p| blocks[p * n / 4..(p * n / 4 + 256).min(n)].to_vec())
            .collect();
        let img = train_slots(&set, &sample[..256], &OnlineOptions::new(form, 2)).expect("trains");
        let unit = ProgrammedSet::new(&set, &img).expect("fits");
        let fast = unit.fast_codec();
        for (i, b) in sample.iter().enumerate() {
            let c = unit.compress(b);
            assert_eq!(fast.compress(b), c, "{}: block {i}", f.display());
            let d = decompress(c.as_bytes(), c.len as usize, unit.expanded())
                .unwrap_or_else(|e| panic!("{}: block {i}: {e}", f.display()));
            assert_eq!(&d, b, "{}: block {i}", f.display());
        }
    }
}
