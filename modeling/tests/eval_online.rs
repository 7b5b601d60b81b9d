//! `eval --online K`: the programmed MPC column beside the baselines,
//! every column measured on the same blocks (each file's last three
//! quarters), and without `--online` the same report as before the option
//! existed.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use datafiles::corpus::{App, Block, Corpus, ManifestEntry, Split};
use golden::baselines::{Bdi, BlockCodec, MpcBlockCodec};
use golden::mpc::program::{
    online_protocol, train_slots, Form, OnlineOptions, ProgrammedSet, FORMS,
};
use golden::mpc::{ModelSet, MpcCodec};
use modeling::eval::{
    evaluate_online, online_eval_blocks, report, Algo, Column, Programmed, ProgrammedInfo,
    DEFAULT_FORM,
};
use sha2::{Digest, Sha256};

const EVAL: &str = env!("CARGO_BIN_EXE_eval");

fn default_set() -> ModelSet {
    ModelSet::parse(include_str!("../../models/default/model.toml"), "default")
        .expect("models/default is valid")
}

fn stride_colpart() -> Form {
    Form::by_name(DEFAULT_FORM).expect("the default form exists")
}

/// int32 words with a per-word stride the hard-wired set does not know
/// (slots of the default form code them shorter).
fn stride_blocks(n: u32) -> Vec<Block> {
    (0..n)
        .map(|i| {
            let mut b = [0u8; 32];
            for w in 0..8u32 {
                let v = (i * 8 + w) * 0x0101 + ((i * 7 + w * 3) % 5);
                b[4 * w as usize..4 * w as usize + 4].copy_from_slice(&v.to_le_bytes());
            }
            b
        })
        .collect()
}

/// Bytes that change along the file: small words first, noise later (the
/// first quarter differs from the rest).
fn drifting_blocks(n: u32) -> Vec<Block> {
    let mut x = 0x2545_f491u32;
    (0..n)
        .map(|i| {
            let mut b = [0u8; 32];
            for w in 0..8 {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                let v = if i < n / 3 { x % 300 } else { x };
                b[4 * w..4 * w + 4].copy_from_slice(&v.to_le_bytes());
            }
            b
        })
        .collect()
}

fn app(file: &str, class: &str, blocks: Vec<Block>) -> App {
    App {
        entry: ManifestEntry {
            file: file.into(),
            class: class.into(),
            domain: "test".into(),
            bytes: 32 * blocks.len() as u64,
            zero_block_fraction: 0.0,
            sha256_16: String::new(),
            source: "synthetic".into(),
            licence: "CC0".into(),
            line: 0,
        },
        blocks,
    }
}

fn mpc(name: &str, set: &ModelSet) -> Algo {
    Algo {
        name: name.into(),
        codec: Box::new(MpcBlockCodec::new(name, MpcCodec::new(set))),
        paper: Some(2.26),
        context: false,
    }
}

fn bdi() -> Algo {
    Algo {
        name: "BDI".into(),
        codec: Box::new(Bdi::new(32).unwrap()),
        paper: Some(1.67),
        context: false,
    }
}

fn bits_of(codec: &dyn BlockCodec, blocks: &[Block]) -> u64 {
    blocks.iter().map(|b| codec.compress(b).len as u64).sum()
}

#[test]
fn the_programmed_column_is_measured_on_the_blocks_of_the_others() {
    let set = default_set();
    let corpus = Corpus::from_apps(vec![
        app("int32/stride.bin", "int32", stride_blocks(1203)),
        app("mixed/drift.bin", "mixed", drifting_blocks(402)),
    ]);
    let split = Split::paper(&corpus, 1);
    let columns = vec![
        Column::Fixed(mpc("MPC:default", &set)),
        Column::Programmed(Box::new(Programmed {
            base: Some("MPC:default".into()),
            ..Programmed::new("MPC programmed:default", set.clone(), stride_colpart(), 2).unwrap()
        })),
        Column::Fixed(bdi()),
    ];
    let e = evaluate_online(&corpus, &split, &columns, 32, true, 3, &|_| {}).unwrap();
    assert_eq!(
        e.algos,
        ["MPC:default", "MPC programmed:default", "BDI"].map(String::from)
    );
    assert_eq!(e.paper, [Some(2.26), None, Some(1.67)]);
    assert_eq!(
        e.online,
        Some(vec![ProgrammedInfo {
            name: "MPC programmed:default".into(),
            base: Some("MPC:default".into()),
            k: 2,
            form: "stride-colpart".into(),
        }])
    );
    assert!(e.block_set.contains("floor(n/4) to n-1"), "{}", e.block_set);
    let bdi = Bdi::new(32).unwrap();
    let opts = OnlineOptions::new(stride_colpart(), 2);
    for (a, r) in corpus.apps.iter().zip(&e.apps) {
        let n = a.blocks.len();
        let (sample, rest) = a.blocks.split_at(n / 4);
        // the same blocks, the last three quarters in file order, for
        // every column
        for t in &r.totals {
            assert_eq!(t.blocks, (n - n / 4) as u64, "{}", r.file);
            assert_eq!(t.original_bits, 256 * rest.len() as u64, "{}", r.file);
        }
        assert_eq!(r.eval_bytes, 32 * rest.len() as u64);
        let mpc_block = MpcBlockCodec::new("hw", MpcCodec::new(&set));
        assert_eq!(r.totals[0].bits, bits_of(&mpc_block, rest), "{}", r.file);
        assert_eq!(r.totals[2].bits, bits_of(&bdi, rest), "{}", r.file);
        // the programmed column: slots trained on the first quarter only
        let image = train_slots(&set, sample, &opts).unwrap();
        let unit = ProgrammedSet::new(&set, &image).unwrap();
        let prog = MpcBlockCodec::new("prog", unit.fast_codec());
        assert_eq!(r.totals[1].bits, bits_of(&prog, rest), "{}", r.file);
        // as `mpc ratio --online` codes the same file
        let o = online_protocol(&set, &a.blocks, &opts).unwrap();
        assert_eq!(
            (r.totals[0].bits, r.totals[1].bits),
            (o.hard_wired_bits, o.programmed_bits),
            "{}",
            r.file
        );
        let online = r.online.as_ref().unwrap();
        assert_eq!(online.sample_blocks, (n / 4) as u64);
        assert_eq!(online.slots_loaded, [image.loaded()]);
    }
    // on the stride file the slots pay: fewer bits than the set alone, and
    // the class's and the overall ratio say so
    let s = &e.apps[0];
    assert!(e.apps[0].online.as_ref().unwrap().slots_loaded[0] > 0);
    assert!(s.totals[1].bits < s.totals[0].bits, "{:?}", s.totals);
    let groups = e.groups();
    let g = |n: &str| groups.iter().find(|g| g.name.starts_with(n)).unwrap();
    for name in ["overall", "class int32", "integer"] {
        let t = &g(name).totals;
        assert!(t[1].ratio() > t[0].ratio(), "{name}: {t:?}");
    }
    assert_eq!(g("mixed").blocks(), (402 - 402 / 4) as u64);
    let md = report::markdown(&e);
    assert!(
        md.contains("| group | apps | blocks | MPC:default | MPC programmed:default | BDI |"),
        "{md}"
    );
    assert!(md.contains("### Online protocol\n"), "{md}");
    let ov = &g("overall").totals;
    let gain = 100.0 * (ov[1].ratio().unwrap() / ov[0].ratio().unwrap() - 1.0);
    assert!(
        md.contains(&format!(
            "| overall (seen + unseen) | 903 | {:.3} | {:.3} | {gain:+.2}% |",
            ov[0].ratio().unwrap(),
            ov[1].ratio().unwrap()
        )),
        "{md}"
    );
    assert!(
        md.contains(&format!(
            "| int32/stride.bin | 300 | 903 | {} of 2 |",
            e.apps[0].online.as_ref().unwrap().slots_loaded[0]
        )),
        "{md}"
    );
}

#[test]
fn online_blocks_at_128_bytes_are_whole_groups_after_the_sample() {
    let blocks = stride_blocks(203);
    let corpus = Corpus::from_apps(vec![app("int32/s.bin", "int32", blocks.clone())]);
    // 203 blocks: the sample is blocks 0..50, the rest 153 blocks, 38
    // whole 128-byte groups from block 50
    let data = online_eval_blocks(&corpus, 0, 128);
    let want: Vec<u8> = blocks[50..50 + 38 * 4].iter().flatten().copied().collect();
    assert_eq!(data, want);
    let split = Split::paper(&corpus, 1);
    let set = default_set();
    let columns = vec![
        Column::Programmed(Box::new(
            Programmed::new("P", set, stride_colpart(), 1).unwrap(),
        )),
        Column::Fixed(Algo {
            name: "BDI".into(),
            codec: Box::new(Bdi::new(128).unwrap()),
            paper: None,
            context: false,
        }),
    ];
    let e = evaluate_online(&corpus, &split, &columns, 128, true, 3, &|_| {}).unwrap();
    for t in &e.apps[0].totals {
        assert_eq!((t.blocks, t.original_bits), (38, 38 * 1024));
    }
}

#[test]
fn too_many_slots_are_refused_before_any_block_is_read() {
    let err = Programmed::new("P", default_set(), FORMS[0], 300)
        .err()
        .expect("300 slots do not fit");
    let msg = err.to_string();
    assert!(msg.starts_with("P: "), "{msg}");
}

// ---- the binary ----

/// A scratch directory removed when the test ends.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> Self {
        let d = std::env::temp_dir().join(format!("eval-online-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        TempDir(d)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A corpus with MANIFEST.tsv under `dir`: a stride int32 file, a
/// drifting fp32 one and a mixed one.
fn corpus_dir(dir: &Path) -> PathBuf {
    let root = dir.join("corpus");
    let mut manifest = String::from(
        "file\tclass\tdomain\tbytes\tzero_block_fraction_32B\tsha256_16\tsource\tlicence\n",
    );
    let files: [(&str, &str, Vec<Block>); 3] = [
        ("int32/stride.bin", "int32", stride_blocks(800)),
        ("fp32/drift.bin", "fp32", drifting_blocks(300)),
        ("mixed/m.bin", "mixed", drifting_blocks(97)),
    ];
    for (file, class, blocks) in &files {
        let data: Vec<u8> = blocks.iter().flatten().copied().collect();
        let path = root.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &data).unwrap();
        let sha = hex::encode(&Sha256::digest(&data)[..8]);
        manifest += &format!(
            "{file}\t{class}\ttest\t{}\t0.000\t{sha}\tsynthetic\tCC0\n",
            data.len()
        );
    }
    std::fs::write(root.join("MANIFEST.tsv"), manifest).unwrap();
    root
}

/// `eval ARGS` from the crate directory (so `../models/default` names the
/// shipped set and the report does not depend on where the tree is).
fn eval(args: &[&str]) -> (Output, String) {
    let out = Command::new(EVAL)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (out, stderr)
}

fn run_to(dir: &Path, corpus: &Path, extra: &[&str]) -> (String, String) {
    let out_dir = dir.join("out");
    let _ = std::fs::remove_dir_all(&out_dir);
    let mut args = vec![
        "--corpus",
        corpus.to_str().unwrap(),
        "--models",
        "../models/default",
        "--out",
        out_dir.to_str().unwrap(),
        "--name",
        "r",
        "--command",
        "eval on the test corpus",
    ];
    args.extend_from_slice(extra);
    let (out, stderr) = eval(&args);
    assert!(out.status.success(), "eval {extra:?} failed:\n{stderr}");
    let read = |f: &str| std::fs::read_to_string(out_dir.join(f)).unwrap();
    (read("r.md"), read("r.json"))
}

#[test]
fn eval_online_adds_the_column_and_without_it_writes_what_it_wrote_before() {
    let t = TempDir::new("cli");
    let corpus = corpus_dir(&t.0);

    // without --online: the bytes eval wrote before the option existed
    let (md, json) = run_to(&t.0, &corpus, &[]);
    assert_eq!(md, include_str!("data/eval-without-online.md"));
    assert_eq!(json, include_str!("data/eval-without-online.json"));
    assert!(!md.contains("programmed") && !json.contains("\"online\""));

    let (md, json) = run_to(&t.0, &corpus, &["--online", "2"]);
    assert!(
        md.contains("**Online protocol (`--online 2 --form stride-colpart`"),
        "{md}"
    );
    assert!(
        md.contains("| group | apps | blocks | MPC:default | MPC programmed:default | BDI |"),
        "{md}"
    );
    // the paper comparison is over other blocks: left out
    assert!(!md.contains("Against the paper"), "{md}");
    // every column on the last three quarters: 600 + 225 + 73 blocks
    assert!(md.contains("| all applications | 3 | 898 |"), "{md}");
    assert!(
        md.contains("| int32/stride.bin | int32 | seen | 600 |"),
        "{md}"
    );
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["evaluation"]["online"][0]["k"], 2);
    assert_eq!(v["evaluation"]["apps"][0]["online"]["sample_blocks"], 200);
    // the slots pay on the stride file
    let totals = &v["evaluation"]["apps"][0]["totals"];
    assert!(
        totals[1]["bits"].as_u64().unwrap() < totals[0]["bits"].as_u64().unwrap(),
        "{totals}"
    );

    // another form is named in the report; a bad one or a bad use is refused
    let (md, _) = run_to(&t.0, &corpus, &["--online", "1", "--form", "stride-lib"]);
    assert!(md.contains("`--online 1 --form stride-lib`"), "{md}");
    let c = corpus.to_str().unwrap();
    for (args, needle) in [
        (
            vec![
                "--corpus",
                c,
                "--models",
                "../models/default",
                "--online",
                "2",
                "--form",
                "nope",
            ],
            "the forms are full, any-part",
        ),
        (
            vec!["--corpus", c, "--online", "2"],
            "give at least one --models",
        ),
        (
            vec![
                "--corpus",
                c,
                "--models",
                "../models/default",
                "--form",
                "full",
            ],
            "--online",
        ),
        (
            vec![
                "--corpus",
                c,
                "--models",
                "../models/default",
                "--online",
                "300",
            ],
            "--online 300",
        ),
    ] {
        let (out, stderr) = eval(&args);
        assert!(!out.status.success(), "{args:?} succeeded");
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}
