//! Every geometry the golden models accept generates, checked by the IR's
//! generation-time lint (undriven, unread bits, loops: what Verilator
//! `-Wall` reports); every geometry they refuse is refused by the generator
//! with the golden model's message before anything is written. A
//! systematic sample of the parameter space, small to the largest blocks.

use std::path::Path;

use golden::dpc::{DpcParams, MAX_BLOCK_BYTES as DPC_MAX_BLOCK};
use golden::magbdi::{DeltaMode, Params, Table, BASE_SIZES, MAX_BLOCK_BYTES as BDI_MAX_BLOCK};

/// Most tokens on one emitted line, with a margin below what Verilator
/// accepts (it refuses lines of more than 40,000 preprocessor tokens).
/// The text of a statement should grow with the logic it describes, not
/// with its square.
const MAX_LINE_TOKENS: usize = 30_000;

/// Verilog tokens of a line, roughly: words (identifiers, numbers, sized
/// literals) and single punctuation characters.
fn tokens(line: &str) -> usize {
    let mut count = 0;
    let mut in_word = false;
    for c in line.chars() {
        let word = c.is_ascii_alphanumeric() || c == '_' || c == '\'';
        if (word && !in_word) || (!word && !c.is_whitespace()) {
            count += 1;
        }
        in_word = word;
    }
    count
}

fn check_files(what: &str, files: &[hdl::ir::VerilogFile]) {
    for f in files {
        let most = f.text.lines().map(tokens).max().unwrap_or(0);
        assert!(
            most <= MAX_LINE_TOKENS,
            "{what}: {} has a line of {most} tokens",
            f.file_name
        );
    }
}

fn divisors_below(n: usize) -> Vec<usize> {
    (1..n).filter(|&d| n.is_multiple_of(d)).collect()
}

/// MAG-aware BDI: (block, MAG) pairs for one base size.
fn bdi_sample(k: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    // every block of up to 8 values, every MAG
    for b in (2 * k..=8 * k).step_by(k) {
        for m in divisors_below(b) {
            out.push((b, m));
        }
    }
    // around 32 values (where the first-miss select changes form) and an
    // odd count: the smallest MAG (most sizes, sizes sharing a delta
    // width), an odd one and the largest
    for n in [31, 32, 33, 100] {
        let b = n * k;
        for m in [1, 3, b / 2] {
            if b.is_multiple_of(m) {
                out.push((b, m));
            }
        }
    }
    // the largest block with the smallest MAG: the most values and sizes
    out.push((BDI_MAX_BLOCK, 1));
    out.sort();
    out.dedup();
    out
}

#[test]
fn bdi_every_accepted_geometry_generates() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("geometry_bdi_refused");
    let (mut generated, mut refused) = (0, 0);
    for k in BASE_SIZES {
        for (i, (b, m)) in bdi_sample(k).into_iter().enumerate() {
            let mode = if i % 2 == 0 {
                DeltaMode::Unsigned
            } else {
                DeltaMode::Signed
            };
            let p = Params::new(b, m, k, mode);
            let what = format!("MAG-aware BDI block {b} MAG {m} base {k} {mode}");
            match Table::new(p) {
                Ok(table) => {
                    let header = hdl::family::header(&table, "test");
                    let (files, _) = hdl::family::generate(&table, &hdl::magbdi::UNITS, &header)
                        .unwrap_or_else(|e| panic!("{what}: {e}"));
                    check_files(&what, &files);
                    generated += 1;
                }
                Err(golden_err) => {
                    let _ = std::fs::remove_dir_all(&dir);
                    let e = hdl::magbdi::write_units(p, &dir, &hdl::magbdi::UNITS, "test")
                        .expect_err(&what);
                    assert_eq!(e.to_string(), golden_err.to_string(), "{what}");
                    assert!(!dir.exists(), "{what}: nothing may be written");
                    refused += 1;
                }
            }
        }
    }
    assert!(
        generated > 100 && refused > 2,
        "{generated} generated, {refused} refused"
    );
}

/// DPC: (block, segment, sector) triples, including refused ones.
fn dpc_sample() -> Vec<(usize, usize, usize)> {
    let mut out = Vec::new();
    for s in [1, 2, 4, 8] {
        // one segment per sector, odd sector sizes, 1 to 32 sectors and one
        // too many
        for t in [s, 3 * s, 40] {
            for sectors in [1, 2, 3, 32, 33] {
                out.push((sectors * t, s, t));
            }
        }
        // the largest block (the most segments for 1-byte segments), and
        // one beyond the largest with few enough sectors
        out.push((DPC_MAX_BLOCK, s, 32));
        out.push((2 * DPC_MAX_BLOCK, s, 64));
    }
    // a large block of an odd number of segments and sectors
    out.push((504, 4, 168));
    out.sort();
    out.dedup();
    out
}

#[test]
fn dpc_every_accepted_geometry_generates() {
    let (mut generated, mut refused) = (0, 0);
    for (b, s, t) in dpc_sample() {
        let what = format!("DPC block {b} segment {s} sector {t}");
        match DpcParams::new(b, s, t) {
            Ok(p) => {
                let header = hdl::family::header(&p, "test");
                let (files, _) = hdl::family::generate(&p, &hdl::dpc::UNITS, &header)
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
                check_files(&what, &files);
                // the decompressors at every other depth
                for d in
                    hdl::dpc::DECOMPRESSOR_LATENCY as usize + 1..=hdl::dpc::MAX_DECOMPRESSOR_STAGES
                {
                    let staged = hdl::dpc::Staged::new(p, d).unwrap_or_else(|e| panic!("{e}"));
                    let units = [hdl::dpc::UNITS[3], hdl::dpc::UNITS[4]];
                    let header = hdl::family::header(&staged, "test");
                    let (files, _) = hdl::family::generate(&staged, &units, &header)
                        .unwrap_or_else(|e| panic!("{what}, decompressors of {d} stages: {e}"));
                    check_files(&format!("{what}, decompressors of {d} stages"), &files);
                }
                generated += 1;
            }
            // (the generator takes validated `DpcParams`: `gen` prints this)
            Err(e) => {
                assert!(e.to_string().starts_with("DPC: "), "{what}: {e}");
                refused += 1;
            }
        }
    }
    assert!(
        generated > 40 && refused > 10,
        "{generated} generated, {refused} refused"
    );
}
