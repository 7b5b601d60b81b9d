//! The generated MAG-aware BDI units, evaluated by the IR's own simulator
//! (`Sim`) against the golden model (`golden::magbdi`): corner cases,
//! deltas at each width's limit, structured and random blocks, corpus
//! blocks, for several block/MAG/base/mode configurations; the decompressor
//! also on corrupted inputs (bad encodings, non-zero padding). The emitted
//! Verilog is linted with Verilator -Wall, Icarus -g2005 and yosys when
//! they are installed.

use std::path::Path;
use std::process::Command;

use golden::magbdi::{DeltaMode, MagBdi, Params, Table};
use hdl::family::{generate, header};
use hdl::ir::{Bits, Sim};
use hdl::magbdi::{compressor, decompressor, write_units, UNITS};
use hdl::GenError;

fn to_bits(b: &[u8]) -> Bits {
    let words: Vec<u64> = b
        .chunks(8)
        .map(|c| {
            let mut w = [0u8; 8];
            w[..c.len()].copy_from_slice(c);
            u64::from_le_bytes(w)
        })
        .collect();
    Bits::from_words(&words, 8 * b.len() as u32).expect("width")
}

fn from_bits(v: &Bits, n: usize) -> Vec<u8> {
    v.words()
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .take(n)
        .collect()
}

fn lcg(seed: &mut u64) -> u64 {
    *seed = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    *seed >> 11
}

fn words_to_block(words: &[u64], k: usize) -> Vec<u8> {
    words
        .iter()
        .flat_map(|w| w.to_le_bytes()[..k].to_vec())
        .collect()
}

/// Corner cases, deltas at each width's limit, structured, random, corpus.
fn test_blocks(p: &Params, table: &Table, n_random: usize) -> Vec<Vec<u8>> {
    let bb = p.block_bytes;
    let k = p.base_bytes;
    let n = p.values();
    let wmask = if k == 8 {
        u64::MAX
    } else {
        (1u64 << (8 * k)) - 1
    };
    let mut v = vec![vec![0u8; bb], vec![0xff; bb]];
    let mut seed = 11u64;
    // every delta width once (sizes sharing one behave alike)
    let mut widths: Vec<u32> = table.sizes.iter().map(|s| s.delta_bits).collect();
    widths.dedup();
    for base in [0x8000_0000u64, 0x1234_5678, 0x7fff_fff0, 5] {
        let base = base & wmask;
        v.push(words_to_block(&vec![base; n], k));
        for &d in &widths {
            for off in [
                (1u64 << d) - 1,
                1u64 << d,
                (1u64 << (d - 1)) - 1,
                1u64 << (d - 1),
                (1u64 << (d - 1)).wrapping_neg(),
                (1u64 << (d - 1)).wrapping_neg().wrapping_sub(1),
                u64::MAX,
            ] {
                let mut w = vec![base; n];
                let at = (lcg(&mut seed) as usize) % n;
                w[at] = base.wrapping_add(off) & wmask;
                v.push(words_to_block(&w, k));
                // the same offset on the zero base, next to large values
                let mut z = vec![0u64; n];
                z[at] = off & wmask;
                z[(at + 1) % n] = base;
                v.push(words_to_block(&z, k));
            }
        }
    }
    for i in 0..n_random {
        let base = lcg(&mut seed) & wmask;
        let words: Vec<u64> = (0..n)
            .map(|j| {
                let r = lcg(&mut seed);
                match i % 5 {
                    0 => base.wrapping_add(r % (1 << (r % 30))) & wmask,
                    1 => base.wrapping_sub(r % 500) & wmask,
                    2 if j % 3 == 0 => r % 2000,
                    2 => base.wrapping_add(r % 2000) & wmask,
                    3 => r % (1 << (i % 40)),
                    _ => r & wmask,
                }
            })
            .collect();
        v.push(words_to_block(&words, k));
    }
    // four corpus blocks of every corpus file (a recorded skip, or a
    // failure under MPCGEN_REQUIRE_TOOLS=1, without the corpus)
    v.extend(hdl::prereq::corpus_blocks(
        "the corpus blocks of the MAG-aware BDI IR simulation",
        bb,
        |n| (1..=4).map(|j| n / 5 * j).collect(),
    ));
    v
}

fn check(p: Params, n_random: usize) {
    let table = Table::new(p).expect("params");
    check_blocks(p, &test_blocks(&p, &table, n_random));
}

/// The compressor with `stages` pipeline stages against golden on
/// `blocks`, one block per cycle (the output `stages` cycles later).
fn check_compressor(p: Params, blocks: &[Vec<u8>], stages: usize) {
    let codec = MagBdi::new(p).expect("params");
    let bb = p.block_bytes;
    let one = Bits::from_u128(1, 1).unwrap();
    let zero = Bits::from_u128(0, 1).unwrap();
    let (comp, desc) = compressor::build_staged(codec.table(), stages).expect("compressor builds");
    assert_eq!(desc.latency, stages);
    comp.emit(&[])
        .expect("compressor passes the generation-time lint");
    let mut sim = Sim::new(&comp).expect("sim");
    sim.set("rst", &one).unwrap();
    sim.step();
    sim.set("rst", &zero).unwrap();
    sim.set("out_ready", &one).unwrap();
    let mut seen = std::collections::BTreeSet::new();
    for t in 0..blocks.len() + stages - 1 {
        match blocks.get(t) {
            Some(b) => {
                sim.set("in_block", &to_bits(b)).unwrap();
                sim.set("in_valid", &one).unwrap();
            }
            None => sim.set("in_valid", &zero).unwrap(),
        }
        sim.step();
        let Some(b) = (t + 1).checked_sub(stages).and_then(|i| blocks.get(i)) else {
            assert_eq!(sim.get_u128("out_valid").unwrap(), 0, "{p:?}: early output");
            continue;
        };
        let exp = codec.encode(b);
        seen.insert(exp.encoding);
        assert_eq!(sim.get_u128("out_valid").unwrap(), 1);
        let enc = sim.get_u128("out_enc").unwrap() as u32;
        let data = from_bits(&sim.get("out_data").unwrap(), bb);
        let mut want = exp.data.clone();
        want.resize(bb, 0);
        assert!(
            enc == exp.encoding && data == want,
            "{p:?} ({stages} stages) block {b:02x?}: RTL enc {enc} data {data:02x?}, golden enc {} data {:02x?}",
            exp.encoding,
            exp.data
        );
    }
    assert!(seen.len() >= 2, "{p:?}: only encodings {seen:?} exercised");
}

/// The compressor and decompressor against golden on `blocks`.
fn check_blocks(p: Params, blocks: &[Vec<u8>]) {
    let codec = MagBdi::new(p).expect("params");
    let table = codec.table().clone();
    let bb = p.block_bytes;
    let one = Bits::from_u128(1, 1).unwrap();
    let zero = Bits::from_u128(0, 1).unwrap();
    check_compressor(p, blocks, 1);
    // decompressor: golden outputs, garbage past the size, corrupted inputs
    let dec = decompressor::build(&table).expect("decompressor builds");
    dec.emit(&[])
        .expect("decompressor passes the generation-time lint");
    let mut sim = Sim::new(&dec).expect("sim");
    sim.set("rst", &one).unwrap();
    sim.step();
    sim.set("rst", &zero).unwrap();
    sim.set("in_valid", &one).unwrap();
    sim.set("out_ready", &one).unwrap();
    let e_max = 1u32 << table.encoding_bits();
    let mut seed = 5u64;
    let mut errors = 0;
    for (i, b) in blocks.iter().enumerate() {
        let exp = codec.encode(b);
        let mut data = exp.data.clone();
        data.resize(bb, 0);
        let mut enc = exp.encoding;
        match i % 4 {
            1 => {
                for x in data.iter_mut().skip(exp.data.len()) {
                    *x = lcg(&mut seed) as u8;
                }
            }
            2 => {
                let bit = (lcg(&mut seed) as usize) % (8 * bb);
                data[bit / 8] ^= 1 << (bit % 8);
            }
            3 => {
                enc = (lcg(&mut seed) as u32) % e_max;
                data.iter_mut().for_each(|x| *x = lcg(&mut seed) as u8);
                if i % 8 == 3 {
                    data.iter_mut().skip(bb / 2).for_each(|x| *x = 0);
                }
            }
            _ => {}
        }
        sim.set_u128("in_enc", enc as u128).unwrap();
        sim.set("in_data", &to_bits(&data)).unwrap();
        sim.step();
        let err = sim.get_u128("out_error").unwrap();
        let out = from_bits(&sim.get("out_block").unwrap(), bb);
        match codec.decode(enc, &data) {
            Ok(want) => assert!(
                err == 0 && out == want,
                "{p:?} enc {enc} data {data:02x?}: RTL err {err} {out:02x?}, golden {want:02x?}"
            ),
            Err(e) => {
                errors += 1;
                assert!(
                    err == 1 && out.iter().all(|&x| x == 0),
                    "{p:?} enc {enc} data {data:02x?}: golden {e}, RTL err {err}"
                )
            }
        }
    }
    let _ = errors;
    // A larger size with the delta width of the chosen one: the same
    // fields, more (zero) padding; golden decodes it to the same block.
    let mut aliased = 0;
    for b in blocks {
        let exp = codec.encode(b);
        let Some(chosen) = table.sizes.get(exp.encoding as usize) else {
            continue;
        };
        let Some(alias) = table
            .sizes
            .iter()
            .rposition(|s| s.delta_bits == chosen.delta_bits)
            .filter(|&a| a != exp.encoding as usize)
        else {
            continue;
        };
        let mut data = exp.data.clone();
        data.resize(bb, 0);
        let want = codec.decode(alias as u32, &data).expect("alias decodes");
        assert_eq!(&want, b);
        sim.set_u128("in_enc", alias as u128).unwrap();
        sim.set("in_data", &to_bits(&data)).unwrap();
        sim.step();
        assert_eq!(sim.get_u128("out_error").unwrap(), 0, "{p:?} alias {alias}");
        assert_eq!(from_bits(&sim.get("out_block").unwrap(), bb), want);
        aliased += 1;
    }
    let shared = table
        .sizes
        .windows(2)
        .any(|w| w[0].delta_bits == w[1].delta_bits);
    assert!(
        !shared || aliased > 0,
        "{p:?}: no shared-width encoding decoded"
    );
}

#[test]
fn paper_configurations_match_golden() {
    for mag in [16, 32, 64] {
        for mode in [DeltaMode::Unsigned, DeltaMode::Signed] {
            check(Params::new(128, mag, 4, mode), 200);
        }
    }
}

#[test]
fn other_configurations_match_golden() {
    for (b, m, k, mode) in [
        (128, 32, 8, DeltaMode::Unsigned),
        (128, 32, 2, DeltaMode::Signed),
        (32, 8, 4, DeltaMode::Unsigned),
        (64, 16, 2, DeltaMode::Unsigned),
        (256, 64, 4, DeltaMode::Signed),
    ] {
        check(Params::new(b, m, k, mode), 60);
    }
}

#[test]
fn small_mag_configurations_match_golden() {
    // 1-byte MAGs: at 32/1/2 sizes share delta widths (one compressor unit
    // per width, a decompressor field select per width); 64/1/8 has 54
    // widths (the priority select as an adder). About 80 of the test
    // blocks (corner cases for every width, random, corpus) keep it short.
    for (b, m, k, mode) in [
        (32, 1, 2, DeltaMode::Unsigned),
        (64, 1, 8, DeltaMode::Signed),
    ] {
        let p = Params::new(b, m, k, mode);
        let table = Table::new(p).expect("params");
        let all = test_blocks(&p, &table, 40);
        let stride = (all.len() / 80).max(1);
        let blocks: Vec<Vec<u8>> = all.into_iter().step_by(stride).collect();
        check_blocks(p, &blocks);
    }
}

#[test]
fn two_stage_compressor_matches_golden() {
    // three compressor units with signed deltas
    let p = Params::new(128, 32, 4, DeltaMode::Signed);
    let table = Table::new(p).expect("params");
    check_compressor(p, &test_blocks(&p, &table, 60), 2);
}

#[test]
fn depths_out_of_range_are_refused() {
    let table = Table::new(Params::new(128, 32, 4, DeltaMode::Unsigned)).expect("params");
    for stages in [0, hdl::magbdi::MAX_COMPRESSOR_STAGES + 1] {
        let e = compressor::build_staged(&table, stages).unwrap_err();
        assert!(
            e.to_string()
                .contains("pipeline stages of `bdi_compressor`"),
            "{e}"
        );
    }
    let e =
        decompressor::build_staged(&table, hdl::magbdi::MAX_DECOMPRESSOR_STAGES + 1).unwrap_err();
    assert!(
        e.to_string()
            .contains("pipeline stages of `bdi_decompressor`"),
        "{e}"
    );
}

#[test]
fn no_delta_width_is_refused_before_writing() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("bdi_nofit");
    let _ = std::fs::remove_dir_all(&dir);
    let e = write_units(
        Params::new(16, 8, 8, DeltaMode::Unsigned),
        &dir,
        &UNITS,
        "test",
    )
    .unwrap_err();
    assert!(matches!(e, GenError::Params(_)), "{e}");
    assert!(e.to_string().contains("no delta width fits"), "{e}");
    assert!(!dir.exists(), "nothing may be written");
}

/// `tool` is on PATH; a note (or a failure under MPCGEN_REQUIRE_TOOLS=1)
/// when it is not.
fn on_path(tool: &str) -> bool {
    hdl::prereq::available(
        &[tool],
        "the tool checks of the generated BDI units",
        "apt-get install verilator iverilog yosys",
    )
}

fn run(cmd: &mut Command) -> (bool, String) {
    match cmd.output() {
        Ok(out) => (
            out.status.success(),
            format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
        ),
        Err(e) => (false, format!("could not run {cmd:?}: {e}")),
    }
}

#[test]
fn emitted_verilog_is_lint_clean() {
    for (mag, mode) in [
        (16, DeltaMode::Unsigned),
        (32, DeltaMode::Signed),
        (64, DeltaMode::Unsigned),
    ] {
        let table = Table::new(Params::new(128, mag, 4, mode)).unwrap();
        let header = header(&table, "bdi_sim test");
        let (files, _) = generate(&table, &UNITS, &header).expect("generate");
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("bdi_lint_{mag}_{mode}"));
        let paths = hdl::ir::write_files(&dir, &files).expect("write");
        assert!(files[0].text.contains("MAG-aware BDI: block 128 B"));
        for path in &paths {
            let name = path.display().to_string();
            let top = path.file_stem().unwrap().to_string_lossy().to_string();
            if on_path("verilator") {
                let (ok, text) =
                    run(Command::new("verilator").args(["--lint-only", "-Wall", &name]));
                assert!(
                    ok && text.trim().is_empty(),
                    "verilator -Wall {name}:\n{text}"
                );
            }
            if on_path("iverilog") {
                let (ok, text) =
                    run(Command::new("iverilog").args(["-g2005", "-o", "/dev/null", &name]));
                assert!(ok && text.trim().is_empty(), "iverilog {name}:\n{text}");
            }
            if on_path("yosys") {
                let script =
                    format!("read_verilog {name}; hierarchy -top {top}; proc; check -assert");
                let (ok, text) = run(Command::new("yosys").args(["-q", "-p", &script]));
                assert!(ok, "yosys {name}:\n{text}");
            }
        }
    }
}
