//! The generated MPC units, evaluated by the IR's own simulator (`Sim`),
//! against the golden model: random, structured, corner-case and corpus
//! blocks, for several model sets. The real simulators (Icarus, Verilator)
//! are exercised by the `testbench` crate; this test keeps generator bugs
//! out of that loop and runs without any tool installed.

use std::path::PathBuf;

use golden::mpc::{
    decompress, ByteRule, CustomModels, ModelSet, MpcCodec, Predictor, Provenance, Selection,
};
use hdl::ir::{Bits, Sim};
use hdl::mpc::{compressor, decompressor};

mod common;
use common::{
    bits_block, block_bits, lcg, left_aligned, repeating_words, repo, shaped_block, Shape,
};

fn test_blocks(n_random: usize) -> Vec<[u8; 32]> {
    let mut seed = 7u64;
    use Shape::*;
    let shapes = [Noise, WordDeltas, Sparse, Repeats];
    let mut v = vec![[0u8; 32], [0xff; 32], repeating_words()];
    v.extend((0..n_random).map(|i| shaped_block(shapes[i % shapes.len()], &mut seed)));
    // two corpus blocks of every corpus file (a recorded skip, or a
    // failure under MPCGEN_REQUIRE_TOOLS=1, without the corpus)
    for c in hdl::prereq::corpus_blocks("the corpus blocks of the MPC IR simulation", 32, |n| {
        vec![n / 3, n / 3 * 2]
    }) {
        v.push(c.try_into().expect("32-byte block"));
    }
    v
}

fn random_set(seed: &mut u64, n: usize, selection: Selection) -> ModelSet {
    let predictors = (0..n)
        .map(|i| {
            let mut order: Vec<usize> = (0..32).collect();
            for a in (1..32).rev() {
                order.swap(a, (lcg(seed) % (a as u64 + 1)) as usize);
            }
            let mut bytes = [ByteRule::Root; 32];
            for (pos, &j) in order.iter().enumerate().skip(1) {
                if !lcg(seed).is_multiple_of(8) {
                    let base = order[(lcg(seed) % pos as u64) as usize] as u8;
                    let shift = (lcg(seed) % 15) as i8 - 7;
                    bytes[j] = ByteRule::Base { base, shift };
                }
            }
            let mut reorder: [u8; 256] = std::array::from_fn(|o| o as u8);
            for a in (1..256).rev() {
                reorder.swap(a, (lcg(seed) % (a as u64 + 1)) as usize);
            }
            Predictor {
                name: format!("r{i}"),
                bytes,
                reorder,
            }
        })
        .collect();
    ModelSet {
        name: "random".into(),
        selection,
        custom: CustomModels {
            zero_block: lcg(seed).is_multiple_of(2),
            same_words: lcg(seed).is_multiple_of(2),
        },
        predictors,
        provenance: Provenance::default(),
    }
}

fn check_set(set: &ModelSet, blocks: &[[u8; 32]]) {
    check_compressor(set, blocks, hdl::mpc::COMPRESSOR_LATENCY as usize);
    check_decompressor(set, blocks, hdl::mpc::DECOMPRESSOR_LATENCY as usize);
}

/// A compressor of `stages` pipeline stages against the golden codec on
/// `blocks`.
fn check_compressor(set: &ModelSet, blocks: &[[u8; 32]], stages: usize) {
    let codec = MpcCodec::new(set);
    let w = set.max_bits();
    let (comp, desc) = compressor::build_staged(set, stages).expect("compressor builds");
    assert_eq!(desc.latency, stages);
    comp.emit(&[])
        .expect("compressor passes the generation-time lint");
    let mut sim = Sim::new(&comp).expect("sim");
    let one = Bits::from_u128(1, 1).expect("1");
    let zero = Bits::from_u128(0, 1).expect("0");
    sim.set("rst", &one).expect("rst");
    sim.step();
    sim.set("rst", &zero).expect("rst");
    sim.set("in_valid", &one).expect("valid");
    sim.set("out_ready", &one).expect("ready");
    for t in 0..blocks.len() + stages {
        let b = blocks.get(t).copied().unwrap_or([0; 32]);
        sim.set("in_block", &block_bits(&b)).expect("in_block");
        sim.step();
        if t + 1 >= stages {
            let i = t + 1 - stages;
            let Some(src) = blocks.get(i) else { continue };
            let exp = codec.compress(src);
            assert_eq!(sim.get_u128("out_valid").expect("valid"), 1);
            let len = sim.get_u128("out_len").expect("len") as u32;
            let model = sim.get_u128("out_model").expect("model") as u32;
            let bits = sim.get("out_bits").expect("bits");
            let exp_bits = left_aligned(&exp.bytes, exp.len as usize, w);
            assert!(
                len == exp.len && model == exp.model && bits == exp_bits,
                "set {} block {i} {src:02x?}: RTL len {len} model {model}, golden len {} model {}",
                set.name,
                exp.len,
                exp.model
            );
        }
    }
}

/// A decompressor of `stages` pipeline stages against the golden decoder
/// on the compressed `blocks` and corrupted variants of them.
fn check_decompressor(set: &ModelSet, blocks: &[[u8; 32]], stages: usize) {
    let codec = MpcCodec::new(set);
    let w = set.max_bits();
    let one = Bits::from_u128(1, 1).expect("1");
    let zero = Bits::from_u128(0, 1).expect("0");
    // golden outputs and corrupted variants
    let mut inputs: Vec<(Vec<u8>, usize)> = Vec::new();
    let mut seed = 99u64;
    for b in blocks {
        let c = codec.compress(b);
        inputs.push((c.bytes.to_vec(), c.len as usize));
        let mut bad = c.bytes.to_vec();
        let bit = (lcg(&mut seed) % c.len as u64) as usize;
        bad[bit / 8] ^= 0x80 >> (bit % 8);
        inputs.push((bad, c.len as usize));
        inputs.push((
            c.bytes.to_vec(),
            (c.len as usize + 1 + (lcg(&mut seed) % 5) as usize).min(w as usize + 3),
        ));
        inputs.push((
            c.bytes.to_vec(),
            (c.len as usize).saturating_sub(1 + (lcg(&mut seed) % 5) as usize),
        ));
    }
    let (dec, desc) = decompressor::build_staged(set, stages).expect("decompressor builds");
    assert_eq!(desc.latency, stages);
    dec.emit(&[])
        .expect("decompressor passes the generation-time lint");
    let mut sim = Sim::new(&dec).expect("sim");
    sim.set("rst", &one).expect("rst");
    sim.step();
    sim.set("rst", &zero).expect("rst");
    sim.set("in_valid", &one).expect("valid");
    sim.set("out_ready", &one).expect("ready");
    let mut errors = 0;
    for t in 0..inputs.len() + stages {
        let (bytes, len) = inputs.get(t).cloned().unwrap_or((vec![0; 33], 0));
        sim.set("in_bits", &left_aligned(&bytes, len.min(w as usize), w))
            .expect("in_bits");
        sim.set("in_len", &Bits::from_u128(len as u128, 9).expect("len"))
            .expect("in_len");
        sim.step();
        if t + 1 >= stages {
            let i = t + 1 - stages;
            let Some((bytes, len)) = inputs.get(i) else {
                continue;
            };
            // bits past `len` are zero on the bus: the golden model sees the same
            let mut masked = bytes.clone();
            for k in 0..masked.len() * 8 {
                if k >= *len {
                    masked[k / 8] &= !(0x80 >> (k % 8));
                }
            }
            let exp = decompress(&masked, *len, set);
            let err = sim.get_u128("out_error").expect("error") == 1;
            let block = bits_block(&sim.get("out_block").expect("block"));
            match exp {
                Ok(b) => assert!(
                    !err && block == b,
                    "set {} input {i} (len {len}): expected {b:02x?}, RTL error={err} {block:02x?}",
                    set.name
                ),
                Err(e) => {
                    errors += 1;
                    assert!(
                        err && block == [0; 32],
                        "set {} input {i} (len {len}): golden error {e}, RTL error={err}",
                        set.name
                    )
                }
            }
        }
    }
    assert!(errors > 0, "corrupted inputs must produce some errors");
}

#[test]
fn example_set_matches_golden() {
    let set = ModelSet::load(&repo().join("models/example")).expect("example set");
    check_set(&set, &test_blocks(150));
}

#[test]
fn random_sets_match_golden() {
    let mut seed = 12345u64;
    let blocks = test_blocks(60);
    for (n, sel) in [
        (1, Selection::ZeroRun),
        (3, Selection::Exact),
        (2, Selection::ZeroRun),
        (4, Selection::Exact),
    ] {
        let set = random_set(&mut seed, n, sel);
        check_set(&set, &blocks);
    }
}

/// Every shipped model set: each directory of `models/` with a
/// `model.toml`, found by listing the directory (a new set is covered
/// without naming it here).
fn shipped_sets() -> Vec<ModelSet> {
    let models = repo().join("models");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&models)
        .unwrap_or_else(|e| panic!("{}: {e}", models.display()))
        .map(|e| e.expect("models/ entry").path())
        .filter(|d| d.join("model.toml").is_file())
        .collect();
    dirs.sort();
    let sets: Vec<ModelSet> = dirs
        .iter()
        .map(|d| ModelSet::load(d).unwrap_or_else(|e| panic!("{}: {e}", d.display())))
        .collect();
    assert!(
        sets.iter().any(|s| s.name == "default") && sets.len() >= 2,
        "the shipped sets were not found in {}",
        models.display()
    );
    sets
}

#[test]
fn shipped_sets_match_golden() {
    let blocks = test_blocks(40);
    for set in shipped_sets() {
        check_set(&set, &blocks);
    }
}

/// Shipped sets checked at every depth; the others at the default depths
/// only, unless [`EVERY_DEPTH_VAR`] is `1` (`make every-depth`).
const EVERY_DEPTH_SETS: [&str; 2] = ["default", "example"];
const EVERY_DEPTH_VAR: &str = "MPCGEN_EVERY_DEPTH";

/// The shipped sets the depth tests check: those of [`EVERY_DEPTH_SETS`],
/// or all of them when [`EVERY_DEPTH_VAR`] is `1`.
fn every_depth_sets() -> Vec<ModelSet> {
    let all = std::env::var(EVERY_DEPTH_VAR).is_ok_and(|v| v == "1");
    let sets: Vec<ModelSet> = shipped_sets()
        .into_iter()
        .filter(|s| all || EVERY_DEPTH_SETS.contains(&s.name.as_str()))
        .collect();
    assert!(
        sets.len() >= EVERY_DEPTH_SETS.len(),
        "the sets {EVERY_DEPTH_SETS:?} are shipped"
    );
    sets
}

/// Every compressor depth but the default (which the test above covers),
/// for the sets of [`every_depth_sets`] and a random set without the
/// shipped sets' custom models, on a quarter of that test's blocks.
#[test]
fn shipped_sets_match_golden_at_every_compressor_depth() {
    let blocks: Vec<[u8; 32]> = test_blocks(40).into_iter().step_by(4).collect();
    let mut seed = 777u64;
    let mut sets = every_depth_sets();
    sets.push(random_set(&mut seed, 3, Selection::Exact));
    let depths =
        hdl::mpc::COMPRESSOR_STAGES.filter(|&d| d != hdl::mpc::COMPRESSOR_LATENCY as usize);
    for stages in depths {
        for set in &sets {
            check_compressor(set, &blocks, stages);
        }
    }
}

/// Every decompressor depth but the default, for the sets of
/// [`every_depth_sets`], on a quarter of the blocks of
/// [`shipped_sets_match_golden`].
#[test]
fn shipped_sets_match_golden_at_every_decompressor_depth() {
    let blocks: Vec<[u8; 32]> = test_blocks(40).into_iter().step_by(4).collect();
    let sets = every_depth_sets();
    let depths =
        hdl::mpc::DECOMPRESSOR_STAGES.filter(|&d| d != hdl::mpc::DECOMPRESSOR_LATENCY as usize);
    for stages in depths {
        for set in &sets {
            check_decompressor(set, &blocks, stages);
        }
    }
}

/// The sets whose compressor leaves out logic the shipped sets have, at
/// both depths: no custom model (every choice is a predictor), and one
/// predictor under exact selection without same-words (no score).
#[test]
fn sets_without_custom_models_match_golden() {
    let blocks = test_blocks(12);
    for (name, zero_block, selection) in [
        ("int32", false, Selection::ZeroRun),
        ("int32", false, Selection::Exact),
        ("int32", true, Selection::Exact),
        ("example", false, Selection::ZeroRun),
        ("example", false, Selection::Exact),
    ] {
        let mut set = ModelSet::load(&repo().join("models").join(name)).expect("set");
        set.custom = CustomModels {
            zero_block,
            same_words: false,
        };
        set.selection = selection;
        for stages in hdl::mpc::COMPRESSOR_STAGES {
            check_compressor(&set, &blocks, stages);
        }
    }
}

#[test]
fn compressor_depth_outside_its_range_is_refused() {
    let set = ModelSet::load(&repo().join("models/example")).expect("example set");
    for stages in [0, 2, 5] {
        let e = compressor::build_staged(&set, stages).expect_err("refused");
        assert!(e.to_string().contains("3..=4"), "{e}");
        let e = hdl::mpc::Options::with_stages(stages, 4).expect_err("refused");
        assert!(e.to_string().contains("3 or 4"), "{e}");
    }
}

#[test]
fn decompressor_depth_outside_its_range_is_refused() {
    let set = ModelSet::load(&repo().join("models/example")).expect("example set");
    for stages in [0, 3, 9] {
        let e = decompressor::build_staged(&set, stages).expect_err("refused");
        assert!(e.to_string().contains("4..=8"), "{e}");
        let e = hdl::mpc::Options::with_decompressor_stages(stages).expect_err("refused");
        assert!(e.to_string().contains("4 to 8"), "{e}");
    }
}
