//! Helpers shared by the integration tests.
#![allow(dead_code)]

use golden::mpc::transform;
use golden::mpc::{ByteRule, CustomModels, ModelSet, Predictor, Provenance, Selection};

pub fn identity() -> [u8; 256] {
    std::array::from_fn(|i| i as u8)
}

pub fn predictor(name: &str, bytes: [ByteRule; 32], reorder: [u8; 256]) -> Predictor {
    Predictor {
        name: name.to_string(),
        bytes,
        reorder,
    }
}

pub fn all_root() -> Predictor {
    predictor("all-root", [ByteRule::Root; 32], identity())
}

pub fn set_of(
    predictors: Vec<Predictor>,
    zero_block: bool,
    same_words: bool,
    selection: Selection,
) -> ModelSet {
    ModelSet {
        name: "test".to_string(),
        selection,
        custom: CustomModels {
            zero_block,
            same_words,
        },
        predictors,
        provenance: Provenance::default(),
    }
}

/// The block whose all-root, identity-reorder transform gives `symbols`.
pub fn block_for_symbols(symbols: &[u16; 16]) -> [u8; 32] {
    let stream = transform::stream_from_symbols(symbols);
    let xored = transform::unreorder(&stream, &identity());
    transform::residues_from_planes(&transform::unxor_planes(&xored))
}

pub fn example_set() -> ModelSet {
    ModelSet::parse(
        include_str!("../../../models/example/model.toml"),
        "example",
    )
    .expect("example set is valid")
}

pub fn bits_of(s: &str) -> String {
    s.chars().filter(|c| *c == '0' || *c == '1').collect()
}

/// Every `.bin` file below the shared corpus (`../shared/corpus` beside
/// the repository), sorted; a test that needs the corpus fails without it.
pub fn corpus_bin_files() -> Vec<std::path::PathBuf> {
    fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        let rd = std::fs::read_dir(dir).unwrap_or_else(|e| {
            panic!(
                "corpus directory {} unreadable ({e}); this test needs the shared corpus",
                dir.display()
            )
        });
        for e in rd {
            let p = e.expect("corpus entry").path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "bin") {
                out.push(p);
            }
        }
    }
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus");
    let mut out = Vec::new();
    walk(&dir, &mut out);
    out.sort();
    out
}

/// A version-1.0 `.npy` file with header text `dict` (padded as NumPy pads
/// it) and `data`.
pub fn npy_v1(dict: &str, data: &[u8]) -> Vec<u8> {
    let mut text = dict.to_string();
    while !(10 + text.len() + 1).is_multiple_of(64) {
        text.push(' ');
    }
    text.push('\n');
    let mut v = golden::npy::MAGIC.to_vec();
    v.extend_from_slice(&[1, 0]);
    v.extend_from_slice(&(text.len() as u16).to_le_bytes());
    v.extend_from_slice(text.as_bytes());
    v.extend_from_slice(data);
    v
}
