//! Training and the split on files: bad input, determinism, and the shipped
//! model sets against `models/example` on the real corpus.

use std::path::{Path, PathBuf};

use datafiles::corpus::{AppRole, Corpus, CorpusError, Manifest, Split, SplitMix64};
use golden::mpc::{CustomModels, Selection};
use golden::mpc::{ModelSet, MpcCodec};
use modeling::train::eval::tally;
use modeling::train::{train_set, Group, SetSpec, TrainError, TrainOptions};
use sha2::{Digest, Sha256};

const HEADER: &str =
    "file\tclass\tdomain\tbytes\tzero_block_fraction_32B\tsha256_16\tsource\tlicence\n";

/// A scratch directory removed when the test ends.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> Self {
        let d = std::env::temp_dir().join(format!("golden-train-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        TempDir(d)
    }
}

impl std::ops::Deref for TempDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A small corpus: `apps` files of the given classes with word-like data.
fn write_corpus(dir: &Path, apps: &[(&str, &str)]) {
    let mut manifest = HEADER.to_string();
    for (k, (file, class)) in apps.iter().enumerate() {
        let mut r = SplitMix64(k as u64 + 1);
        let mut data = Vec::new();
        for _ in 0..2000 {
            let w0 = r.below(1 << (8 + 4 * k as u32)) as u32;
            for _ in 0..8 {
                data.extend_from_slice(&(w0 + r.below(32) as u32).to_le_bytes());
            }
        }
        let path = dir.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &data).unwrap();
        let sha = hex::encode(&Sha256::digest(&data)[..8]);
        manifest.push_str(&format!(
            "{file}\t{class}\ttest\t{}\t0.000\t{sha}\tsynthetic\tMIT\n",
            data.len()
        ));
    }
    std::fs::write(dir.join("MANIFEST.tsv"), manifest).unwrap();
}

fn spec(groups: Vec<Group>) -> SetSpec {
    SetSpec {
        name: "t".into(),
        groups,
        selection: Selection::ZeroRun,
        custom: CustomModels {
            zero_block: true,
            same_words: true,
        },
        date: "2026-01-01".into(),
        seed: 1,
        cluster: None,
    }
}

fn small_opts() -> TrainOptions {
    TrainOptions {
        reorder_sample: 4096,
        ..TrainOptions::default()
    }
}

#[test]
fn training_twice_gives_identical_toml_that_loads_back() {
    let dir = TempDir::new("det");
    write_corpus(
        &dir,
        &[
            ("a/a.bin", "int32"),
            ("a/b.bin", "int32"),
            ("a/c.bin", "int32"),
            ("a/d.bin", "int32"),
            ("b/e.bin", "int16"),
            ("m/f.bin", "mixed"),
        ],
    );
    let run = || {
        let corpus = Corpus::load(&dir).unwrap();
        let split = Split::paper(&corpus, 1);
        let groups = vec![Group::new("i32", &["int32"]), Group::new("i16", &["int16"])];
        let (set, _) = train_set(&corpus, &split, &spec(groups), &small_opts(), |_| {}).unwrap();
        set.to_toml().expect("serialises")
    };
    let (a, b) = (run(), run());
    assert_eq!(a, b);
    let back = ModelSet::parse(&a, "det").unwrap();
    assert_eq!(back.predictors.len(), 2);
    assert_eq!(back.provenance.tool, "train");
    assert!(back.provenance.notes.contains("seed 1"));
    assert!(back.provenance.corpus.contains("a/a.bin"));
    // The split: mixed is evaluation-only, one int32 app of four is unseen,
    // the single int16 app keeps training.
    let corpus = Corpus::load(&dir).unwrap();
    let split = Split::paper(&corpus, 1);
    let roles: Vec<AppRole> = split.apps.iter().map(|s| s.role).collect();
    assert_eq!(roles[5], AppRole::Evaluation);
    assert_eq!(roles[4], AppRole::Seen);
    assert_eq!(roles.iter().filter(|r| **r == AppRole::Unseen).count(), 1);
    for s in &split.apps {
        let n = corpus.apps[s.app].blocks.len();
        assert_eq!(s.train.len() + s.test.len(), n);
        if s.role == AppRole::Seen {
            assert_eq!(s.train.len(), n * 4 / 5);
        }
    }
    // Another seed, another block split.
    let other = Split::paper(&corpus, 2);
    assert_ne!(other.apps[0].train, split.apps[0].train);
}

#[test]
fn missing_dir_manifest_and_empty_corpus_are_clear_errors() {
    let missing = std::env::temp_dir().join("golden-train-no-such-dir");
    let e = Corpus::load(&missing).unwrap_err();
    assert!(matches!(e, CorpusError::NoDir(_)), "{e}");

    let dir = TempDir::new("nomanifest");
    let e = Corpus::load(&dir).unwrap_err();
    assert!(e.to_string().contains("MANIFEST.tsv"), "{e}");

    std::fs::write(dir.join("MANIFEST.tsv"), HEADER).unwrap();
    let e = Corpus::load(&dir).unwrap_err();
    assert!(matches!(e, CorpusError::Empty(_)), "{e}");
    assert!(e.to_string().contains("empty"), "{e}");
}

#[test]
fn bad_manifest_lines_name_line_and_column() {
    let p = Path::new("M.tsv");
    let e = Manifest::parse(&format!("{HEADER}a.bin\tint32\tx\n"), p).unwrap_err();
    assert!(e.to_string().starts_with("M.tsv:2:4:"), "{e}");
    let row = "a.bin\tint33\tx\t64\t0.0\t0123456789abcdef\ts\tl\n";
    let e = Manifest::parse(&format!("{HEADER}{row}"), p).unwrap_err();
    assert!(
        e.to_string().starts_with("M.tsv:2:2:") && e.to_string().contains("int33"),
        "{e}"
    );
    let row = "a.bin\tint32\tx\tlots\t0.0\t0123456789abcdef\ts\tl\n";
    let e = Manifest::parse(&format!("{HEADER}{row}"), p).unwrap_err();
    assert!(e.to_string().starts_with("M.tsv:2:4:"), "{e}");
    let row = "a.bin\tint32\tx\t64\t0.0\txyz\ts\tl\n";
    let e = Manifest::parse(&format!("{HEADER}{row}"), p).unwrap_err();
    assert!(e.to_string().starts_with("M.tsv:2:6:"), "{e}");
    let e = Manifest::parse("file\tklass\n", p).unwrap_err();
    assert!(e.to_string().starts_with("M.tsv:1:2:"), "{e}");
}

#[test]
fn wrong_size_or_hash_is_reported() {
    let dir = TempDir::new("size");
    write_corpus(&dir, &[("a.bin", "int32")]);
    let text = std::fs::read_to_string(dir.join("MANIFEST.tsv")).unwrap();
    std::fs::write(
        dir.join("MANIFEST.tsv"),
        text.replace("\t64000\t", "\t64032\t"),
    )
    .unwrap();
    let e = Corpus::load(&dir).unwrap_err();
    assert!(matches!(e, CorpusError::Size { .. }), "{e}");
    std::fs::write(dir.join("a.bin"), vec![0u8; 64000]).unwrap();
    std::fs::write(dir.join("MANIFEST.tsv"), text).unwrap();
    let e = Corpus::load(&dir).unwrap_err();
    assert!(matches!(e, CorpusError::Hash { .. }), "{e}");
}

#[test]
fn a_group_without_blocks_is_a_clear_error() {
    let dir = TempDir::new("nogroup");
    write_corpus(&dir, &[("a.bin", "int32")]);
    let corpus = Corpus::load(&dir).unwrap();
    let split = Split::paper(&corpus, 1);
    let e = train_set(
        &corpus,
        &split,
        &spec(vec![Group::new("floats", &["fp64"])]),
        &small_opts(),
        |_| {},
    )
    .unwrap_err();
    assert!(matches!(e, TrainError::EmptyGroup { .. }), "{e}");
    assert!(
        e.to_string().contains("floats") && e.to_string().contains("fp64"),
        "{e}"
    );
    assert!(modeling::train::parse_groups("x=mixed").is_err());
    assert!(modeling::train::parse_groups("x=int9").is_err());
    assert!(modeling::train::parse_groups("").is_err());
}

// ---- the real corpus --------------------------------------------------------

fn corpus_dir() -> PathBuf {
    let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus");
    assert!(
        d.join("MANIFEST.tsv").is_file(),
        "corpus not found at {} (expected ../shared/corpus next to the repository, as in CI)",
        d.display()
    );
    d
}

fn models_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../models")
}

/// Every shipped set: each directory of `models/` with a `model.toml`,
/// found by listing the directory; sorted by name.
fn shipped_sets() -> Vec<(String, PathBuf)> {
    let mut sets: Vec<(String, PathBuf)> = std::fs::read_dir(models_dir())
        .expect("models/")
        .map(|e| e.expect("models/ entry").path())
        .filter(|d| d.join("model.toml").is_file())
        .map(|d| {
            (
                d.file_name()
                    .expect("a name")
                    .to_string_lossy()
                    .into_owned(),
                d,
            )
        })
        .collect();
    sets.sort();
    sets
}

/// Every shipped set but the hand-written `example` was written by
/// `train` with both custom models, and its report is beside it.
#[test]
fn shipped_sets_load_and_are_trained() {
    let mut hand_written = Vec::new();
    let mut trained = 0;
    for (name, dir) in shipped_sets() {
        let set = ModelSet::load(&dir).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(set.name, name, "models/{name} names another set");
        if set.provenance.tool != "train" {
            hand_written.push(name);
            continue;
        }
        trained += 1;
        assert!(set.custom.zero_block && set.custom.same_words, "{name}");
        assert!(dir.join("report.md").is_file(), "{name}: no report.md");
    }
    assert_eq!(hand_written, ["example"], "sets not written by train");
    assert!(trained > 0, "no trained set found in models/");
    let d = ModelSet::load(&models_dir().join("default")).unwrap();
    assert_eq!(d.predictors.len(), 5);
    assert_eq!(d.header_bits(), 3);
    assert_eq!(d.selection, Selection::ZeroRun);
}

#[test]
fn default_beats_example_on_held_out_blocks() {
    let corpus = Corpus::load(&corpus_dir()).unwrap();
    let split = Split::paper(&corpus, 1);
    // Every 8th test block of every application (seen, unseen, evaluation).
    let blocks: Vec<_> = (0..corpus.apps.len())
        .flat_map(|a| {
            split
                .app_test_blocks(&corpus, a)
                .step_by(8)
                .copied()
                .collect::<Vec<_>>()
        })
        .collect();
    let ratio = |name: &str| {
        let set = ModelSet::load(&models_dir().join(name)).unwrap();
        tally(&MpcCodec::new(&set), &blocks)
            .ratio()
            .expect("the corpus has test blocks")
    };
    let (d, e) = (ratio("default"), ratio("example"));
    assert!(d > e * 1.05, "default {d:.3} vs example {e:.3}");
}

#[test]
fn label_free_training_is_deterministic_and_never_trains_on_mixed() {
    let dir = TempDir::new("cluster");
    write_corpus(
        &dir,
        &[
            ("a/a.bin", "int32"),
            ("a/b.bin", "int32"),
            ("b/e.bin", "int16"),
            ("b/g.bin", "int16"),
            ("m/f.bin", "mixed"),
        ],
    );
    let run = || {
        let corpus = Corpus::load(&dir).unwrap();
        let split = Split::paper(&corpus, 1);
        let mut s = spec(Vec::new());
        s.cluster = Some(modeling::train::cluster::ClusterOptions {
            k: 3,
            rounds: 3,
            sample: 5000,
        });
        let mut steps = 0;
        let (set, _) = train_set(&corpus, &split, &s, &small_opts(), |_| steps += 1).unwrap();
        (set.to_toml().expect("serialises"), steps)
    };
    let ((a, na), (b, nb)) = (run(), run());
    assert_eq!(a, b);
    assert_eq!(na, nb);
    assert!(na >= 2, "progress saw {na} steps");
    let back = ModelSet::parse(&a, "cluster").unwrap();
    assert_eq!(back.predictors.len(), 3);
    assert!(back.provenance.notes.contains("found without labels"));
    assert!(
        !back.provenance.corpus.contains("m/f.bin"),
        "{}",
        back.provenance.corpus
    );
    assert!(!back.provenance.classes.contains(&"mixed".to_string()));
}
