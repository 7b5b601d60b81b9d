//! The register image of a slot image (`docs/hw/program-slots.md` section
//! 2): for images trained on corpus files and random images of every stride
//! form and K = 1, 2, 4, the writes of `image_writes` loaded into
//! `SlotRegisters` hold exactly the predictors `ProgrammedSet` codes with;
//! the writes stay in the map, end with the one COMMIT, and leave unloaded
//! slots at zero; refusals name what is wrong.

mod common;
#[path = "common/rng.rs"]
mod rng;
#[path = "common/skip.rs"]
mod skip;

use std::io::Read;

use golden::mpc::model::{ByteRule, ModelSet, Predictor};
use golden::mpc::program::registers::{
    group_base, route_word_count, route_words, slot_flag, slot_route, slot_rules, RegisterError,
    RegisterWrite, SlotRegisters, COMMIT, EPOCH, ROUTE_OFFSET, RULES_WORDS,
};
use golden::mpc::program::{
    image_writes, train_slots, BaseClass, Form, OnlineOptions, ProgrammedSet, ReorderClass, Slot,
    SlotImage, SlotReorder, FORMS, STRIDES,
};
use golden::mpc::BLOCK_BYTES;
use rng::XorShift;

fn default_set() -> ModelSet {
    ModelSet::parse(include_str!("../../models/default/model.toml"), "default")
        .expect("models/default is valid")
}

fn stride_forms() -> Vec<Form> {
    FORMS
        .iter()
        .copied()
        .filter(|f| f.base == BaseClass::Strides)
        .collect()
}

/// A random slot of `form` for a set with `p` hard-wired predictors:
/// stride rules within the depth bound, a random mask, column order or
/// library index.
fn random_slot(r: &mut XorShift, form: Form, p: usize) -> Slot {
    let mut rules = [ByteRule::Root; BLOCK_BYTES];
    let mut depth = [0usize; BLOCK_BYTES];
    for i in 0..BLOCK_BYTES {
        let c = r.below(STRIDES.len() + 1);
        if c == 0 {
            continue;
        }
        let Some(base) = i.checked_sub(STRIDES[c - 1] as usize) else {
            continue;
        };
        if depth[base] + 1 > form.max_depth {
            continue;
        }
        depth[i] = depth[base] + 1;
        let m = form.max_shift as i64;
        let shift = (r.below((2 * m + 1) as usize) as i64 - m) as i8;
        rules[i] = ByteRule::Base {
            base: base as u8,
            shift,
        };
    }
    let mut cols: [u8; BLOCK_BYTES] = std::array::from_fn(|c| c as u8);
    for i in (1..BLOCK_BYTES).rev() {
        cols.swap(i, r.below(i + 1));
    }
    let mask: [u8; 32] = std::array::from_fn(|_| r.next() as u8);
    let reorder = match form.reorder {
        ReorderClass::Partition => SlotReorder::Partition(mask),
        ReorderClass::Columns => SlotReorder::Columns(cols),
        ReorderClass::ColumnsPartition => SlotReorder::ColumnsPartition(cols, mask),
        ReorderClass::Library => SlotReorder::Library(r.below(p + 1) as u8),
        ReorderClass::Any => unreachable!("stride forms only"),
    };
    Slot { rules, reorder }
}

/// The first 64 KiB of `path` as blocks.
fn first_64k(path: &std::path::Path) -> Vec<[u8; BLOCK_BYTES]> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(64 * 1024).read_to_end(&mut bytes))
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    bytes
        .chunks_exact(BLOCK_BYTES)
        .map(|c| c.try_into().expect("32 bytes"))
        .collect()
}

/// Everything the register image of `image` must satisfy.
fn check_image(set: &ModelSet, image: &SlotImage, epoch: u8, what: &str) {
    let form = image.form;
    let k = image.slots.len();
    let writes = image_writes(set, image, epoch).unwrap_or_else(|e| panic!("{what}: {e}"));
    let words = route_word_count(form).expect("a stride form");
    assert_eq!(writes.len(), 2 + k * (1 + RULES_WORDS + words), "{what}");
    assert_eq!(
        writes[0],
        RegisterWrite {
            addr: EPOCH,
            value: epoch as u32
        },
        "{what}"
    );
    assert_eq!(
        writes.last(),
        Some(&RegisterWrite {
            addr: COMMIT,
            value: 1
        }),
        "{what}"
    );
    assert_eq!(
        writes.iter().filter(|w| w.addr == COMMIT).count(),
        1,
        "{what}: one commit"
    );
    for w in &writes[1..writes.len() - 1] {
        assert!(w.addr < 0x1000, "{what}: {:#x} past 12 bits", w.addr);
        let s = (w.addr as usize >> 8)
            .checked_sub(1)
            .unwrap_or_else(|| panic!("{what}: {:#x} is not a slot register", w.addr));
        assert!(s < k, "{what}: {:#x} names slot {s} of {k}", w.addr);
        let offset = (w.addr - group_base(s)) as usize;
        assert!(
            offset < ROUTE_OFFSET as usize + words,
            "{what}: {:#x} past the slot's registers",
            w.addr
        );
        if image.slots[s].is_none() {
            assert_eq!(w.value, 0, "{what}: unloaded slot {s} at {:#x}", w.addr);
        }
    }
    // every register of every slot written once, in map order
    let expected: Vec<u16> = std::iter::once(EPOCH)
        .chain((0..k).flat_map(|s| {
            std::iter::once(slot_flag(s))
                .chain((0..RULES_WORDS).map(move |w| slot_rules(s, w)))
                .chain((0..words).map(move |w| slot_route(s, w)))
        }))
        .chain(std::iter::once(COMMIT))
        .collect();
    let addrs: Vec<u16> = writes.iter().map(|w| w.addr).collect();
    assert_eq!(addrs, expected, "{what}");

    let (regs, commits) = SlotRegisters::from_writes(form, k, set.predictors.len(), &writes)
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(commits, 1, "{what}");
    assert_eq!(regs.epoch, epoch, "{what}");
    let got = regs
        .predictors(set)
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    let unit = ProgrammedSet::new(set, image).expect("the set accepts the image");
    let p = set.predictors.len();
    let mut loaded = 0;
    for (s, (g, slot)) in got.iter().zip(&image.slots).enumerate() {
        match (g, slot) {
            (None, None) => {}
            (Some(g), Some(_)) => {
                let want: &Predictor = &unit.expanded().predictors[p + loaded];
                assert_eq!(g.bytes, want.bytes, "{what}: slot {s} rules");
                assert_eq!(g.reorder, want.reorder, "{what}: slot {s} reorder");
                assert_eq!(g, want, "{what}: slot {s}");
                loaded += 1;
            }
            _ => panic!("{what}: slot {s}: loaded {} in the registers", g.is_some()),
        }
    }
    assert_eq!(loaded, image.loaded(), "{what}");
}

#[test]
fn trained_images_round_trip_through_the_registers() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus");
    if !dir.is_dir() {
        skip::skip(
            skip::REQUIRE_TOOLS,
            "trained_images_round_trip_through_the_registers",
            &format!("no shared corpus at {}", dir.display()),
        );
        return;
    }
    let files = common::corpus_bin_files();
    let pick = |kind: &str| {
        files
            .iter()
            .find(|f| f.parent().is_some_and(|d| d.ends_with(kind)))
            .unwrap_or_else(|| panic!("no {kind} file in the corpus"))
            .clone()
    };
    let set = default_set();
    let mut loaded_any = 0;
    for f in [pick("int32"), pick("fp32")] {
        let blocks = first_64k(&f);
        for form in stride_forms() {
            for k in [1, 2, 4] {
                let image = train_slots(&set, &blocks, &OnlineOptions::new(form, k))
                    .unwrap_or_else(|e| panic!("{}: {e}", f.display()));
                loaded_any += image.loaded();
                let what = format!("{} {} K={k}", f.display(), form.name);
                check_image(&set, &image, k as u8 * 3 + 1, &what);
            }
        }
    }
    assert!(loaded_any > 0, "the trainer loaded no slot at all");
}

#[test]
fn random_images_round_trip_through_the_registers() {
    let set = default_set();
    let p = set.predictors.len();
    let mut r = XorShift(0x5eed_0f5e_ed5e_ed01);
    for form in stride_forms() {
        for k in [1, 2, 4] {
            for round in 0..8 {
                let mut image = SlotImage::empty(&set, form, k);
                for s in image.slots.iter_mut() {
                    // about one slot in four unloaded
                    if r.below(4) != 0 {
                        *s = Some(random_slot(&mut r, form, p));
                    }
                }
                // valid as an image
                let image = SlotImage::load(&image.to_bytes()).expect("a valid image");
                let what = format!("random {} K={k} round {round}", form.name);
                check_image(&set, &image, r.next() as u8, &what);
            }
        }
    }
}

#[test]
fn the_reset_value_and_an_empty_image_hold_nothing() {
    let set = default_set();
    for form in stride_forms() {
        let regs = SlotRegisters::new(form, 4, set.predictors.len()).expect("registers");
        assert_eq!(regs.epoch, 0);
        assert_eq!(regs.predictors(&set).expect("predictors"), vec![None; 4]);
        let image = SlotImage::empty(&set, form, 4);
        check_image(&set, &image, 0, &format!("empty {}", form.name));
        let writes = image_writes(&set, &image, 9).expect("writes");
        assert!(writes[1..writes.len() - 1].iter().all(|w| w.value == 0));
    }
}

#[test]
fn route_words_by_class() {
    let set = default_set();
    let hw = &set.predictors;
    let identity_rules = [ByteRule::Root; BLOCK_BYTES];
    let slot = |reorder| Slot {
        rules: identity_rules,
        reorder,
    };
    let form = |n| Form::by_name(n).expect("form");
    // identity reorders route to all-zero settings
    let w = route_words(
        form("stride-part"),
        &slot(SlotReorder::Partition([0; 32])),
        hw,
    )
    .expect("routes");
    assert_eq!(w, vec![0; 60]);
    let id: [u8; 32] = std::array::from_fn(|c| c as u8);
    let w = route_words(form("stride-cols"), &slot(SlotReorder::Columns(id)), hw).expect("routes");
    assert_eq!(w, vec![0; 5]);
    // two columns exchanged: some setting set, and no bit past the 144
    let mut c = id;
    c.swap(0, 1);
    let w = route_words(form("stride-cols"), &slot(SlotReorder::Columns(c)), hw).expect("routes");
    assert_ne!(w, vec![0; 5]);
    assert_eq!(w[4] >> 16, 0);
    let w = route_words(form("stride-lib"), &slot(SlotReorder::Library(3)), hw).expect("index");
    assert_eq!(w, vec![3]);
    // a slot of another class, and the any-base forms
    assert!(matches!(
        route_words(form("stride-lib"), &slot(SlotReorder::Columns(id)), hw),
        Err(RegisterError::ReorderClass { .. })
    ));
    for name in ["full", "any-part"] {
        let e = route_words(form(name), &slot(SlotReorder::Partition([0; 32])), hw)
            .expect_err("no RTL");
        assert_eq!(
            e,
            RegisterError::AnyBaseForm {
                form: form(name).name
            }
        );
        let image = SlotImage::empty(&set, form(name), 1);
        assert!(matches!(
            image_writes(&set, &image, 1),
            Err(RegisterError::AnyBaseForm { .. })
        ));
        assert!(SlotRegisters::new(form(name), 1, hw.len()).is_err());
    }
}

#[test]
fn refusals_and_unmapped_writes() {
    let set = default_set();
    let form = Form::by_name("stride-colpart").expect("form");
    // an image made for another set
    let mut other = set.clone();
    other.predictors.pop();
    let image = SlotImage::empty(&other, form, 2);
    let e = image_writes(&set, &image, 1).expect_err("another set");
    assert!(e.to_string().contains("hard-wired"), "{e}");
    // more slots than the map has groups
    let image = SlotImage::empty(&set, form, 16);
    assert_eq!(
        image_writes(&set, &image, 1),
        Err(RegisterError::TooManySlots { k: 16 })
    );
    // unmapped addresses change nothing; COMMIT needs bit 0
    let mut regs = SlotRegisters::new(form, 2, set.predictors.len()).expect("registers");
    let reset = regs.clone();
    for addr in [
        0x002u16,
        0x0ff,
        0x100 + 69,
        0x1ff,
        0x300,
        0x301,
        0xfff,
        0x1001,
    ] {
        assert!(!regs.write(RegisterWrite {
            addr,
            value: u32::MAX
        }));
    }
    assert_eq!(regs, reset);
    assert!(!regs.write(RegisterWrite {
        addr: COMMIT,
        value: 2
    }));
    assert!(regs.write(RegisterWrite {
        addr: COMMIT,
        value: 3
    }));
    // the hardware keeps 7 bits of a rule byte and the settings bits only
    regs.write(RegisterWrite {
        addr: slot_rules(1, 0),
        value: 0xffff_ff97,
    });
    assert_eq!(regs.slots[1].rules[..4], [0x17, 0x7f, 0x7f, 0x7f]);
    let cols = Form::by_name("stride-cols").expect("form");
    let mut regs = SlotRegisters::new(cols, 1, set.predictors.len()).expect("registers");
    regs.write(RegisterWrite {
        addr: slot_route(0, 4),
        value: u32::MAX,
    });
    assert_eq!(regs.slots[0].route[4], 0xffff);
    // contents no image gives are refused, naming the byte
    regs.write(RegisterWrite {
        addr: slot_flag(0),
        value: 1,
    });
    regs.write(RegisterWrite {
        addr: slot_rules(0, 0),
        value: 0x17,
    });
    assert_eq!(
        regs.predictors(&set),
        Err(RegisterError::StrideBeforeStart {
            slot: 0,
            byte: 0,
            candidate: 1
        })
    );
    regs.write(RegisterWrite {
        addr: slot_rules(0, 0),
        value: 0x6700,
    });
    assert!(matches!(
        regs.predictors(&set),
        Err(RegisterError::Candidate { byte: 1, .. })
    ));
    // a base chain deeper than the form's bound (4) is refused: bytes 1..=5
    // each based on the byte before
    regs.write(RegisterWrite {
        addr: slot_rules(0, 0),
        value: 0x1717_1700,
    });
    regs.write(RegisterWrite {
        addr: slot_rules(0, 1),
        value: 0x0000_1717,
    });
    assert_eq!(
        regs.predictors(&set),
        Err(RegisterError::Depth {
            slot: 0,
            depth: 5,
            form: "stride-cols",
            max: 4
        })
    );
    // bytes 1..=4 only: depth 4, accepted
    regs.write(RegisterWrite {
        addr: slot_rules(0, 1),
        value: 0x0000_0017,
    });
    assert!(regs.predictors(&set).is_ok());
}
