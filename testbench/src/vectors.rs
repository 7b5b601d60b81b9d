//! Input vectors for the co-simulation: corpus blocks of every class,
//! random and structured random blocks, corner cases, blocks whose symbols
//! hit each Table-1 pattern (built with golden's inverse transforms), and
//! for the decompressor valid and malformed compressed blocks.
//!
//! Every vector carries a tag (its category, e.g. `corpus/int32`,
//! `table1/single-one`, `malformed/bad-run-length`) for the per-category
//! counts of the report. All randomness comes from one seed.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use golden::bits::BitWriter;
use golden::mpc::table1::{self, Code};
use golden::mpc::{transform, ModelSet, MpcCodec, Predictor, BLOCK_BYTES, MAX_BLOCK_BYTES};

use crate::hex;
use crate::rng::Rng;
use crate::stream_unit::LeBus;

/// A 32-byte block.
pub type Block = [u8; BLOCK_BYTES];

/// Vector-generation and vector-file problems.
#[derive(Debug, thiserror::Error)]
pub enum VectorError {
    #[error("cannot read corpus {path}: {source}")]
    Corpus {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    CorpusFiles(#[from] datafiles::corpus::CorpusError),
    #[error(transparent)]
    CorpusData(#[from] golden::npy::DataError),
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}:{line}: {problem}")]
    Parse {
        path: PathBuf,
        line: usize,
        problem: String,
    },
}

/// Category names, interned.
#[derive(Clone, Debug, Default)]
pub struct Tags {
    names: Vec<String>,
    index: HashMap<String, u16>,
}

impl Tags {
    pub fn new() -> Tags {
        Tags::default()
    }

    /// The id of `name`, added if new.
    pub fn id(&mut self, name: &str) -> u16 {
        if let Some(&i) = self.index.get(name) {
            return i;
        }
        let i = self.names.len() as u16;
        self.names.push(name.to_string());
        self.index.insert(name.to_string(), i);
        i
    }

    pub fn name(&self, id: u16) -> &str {
        self.names.get(id as usize).map_or("?", |s| s.as_str())
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

/// One compressor (or loopback) input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CompVector {
    pub block: Block,
    pub tag: u16,
}

/// One decompressor input: `len` bits of `bits` (MSB first); bits past `len`
/// may be garbage (the unit must ignore them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DecompVector {
    pub bits: [u8; MAX_BLOCK_BYTES],
    pub len: u16,
    pub tag: u16,
}

/// How many vectors, from what.
#[derive(Clone, Debug)]
pub struct GenConfig {
    pub blocks: usize,
    pub seed: u64,
    /// Corpus ([`corpus_classes`]: manifest, class subdirectories, plain
    /// `.bin`/`.npy` files or one file); `None`: random blocks instead.
    pub corpus: Option<PathBuf>,
}

// ---- corpus --------------------------------------------------------------

/// The corpus files of each class, classes sorted
/// ([`datafiles::corpus::files_by_class`]: `MANIFEST.tsv` when present, else
/// class subdirectories, files directly in the directory or a single file
/// being `unlabelled`). Raw `.bin` and `.npy` files alike.
pub fn corpus_classes(dir: &Path) -> Result<Vec<(String, Vec<PathBuf>)>, VectorError> {
    Ok(datafiles::corpus::files_by_class(dir)?)
}

/// [`corpus_classes`] less the files without a whole `block_bytes`-byte
/// block: each is skipped with a warning on stderr (`cosim: warning: FILE:
/// N bytes of data, shorter than one B-byte block; skipped`, once per
/// file and process), as `train` does; a class left without files is left
/// out. An error when no file holds a whole block.
pub fn usable_corpus(
    dir: &Path,
    block_bytes: usize,
) -> Result<Vec<(String, Vec<PathBuf>)>, VectorError> {
    static WARNED: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());
    let (classes, short) = datafiles::corpus::usable_files_by_class(dir, block_bytes)?;
    let mut warned = match WARNED.lock() {
        Ok(w) => w,
        Err(poisoned) => poisoned.into_inner(),
    };
    for s in short {
        if !warned.contains(&s.path) {
            eprintln!("cosim: warning: {s}");
            warned.push(s.path);
        }
    }
    Ok(classes)
}

/// The data of one corpus file: its bytes, or a `.npy` array's bytes in C
/// order ([`golden::npy::read_data`]).
pub fn corpus_data(path: &Path) -> Result<Vec<u8>, VectorError> {
    Ok(golden::npy::read_data(path)?)
}

/// A class name and blocks drawn from its files.
pub type ClassBlocks = (String, Vec<Vec<u8>>);

/// Per class, `per_class` blocks of `block_bytes` bytes, each from a random
/// whole block of a random file of the class (files without a whole block
/// are skipped with a warning, [`usable_corpus`]; a class without any is
/// left out). Classes sorted by name.
pub fn corpus_samples(
    dir: &Path,
    block_bytes: usize,
    per_class: usize,
    rng: &mut Rng,
) -> Result<Vec<ClassBlocks>, VectorError> {
    let mut out = Vec::new();
    for (class, paths) in usable_corpus(dir, block_bytes)? {
        let mut files = Vec::with_capacity(paths.len());
        for p in &paths {
            let d = corpus_data(p)?;
            if d.len() >= block_bytes {
                files.push(d);
            }
        }
        if files.is_empty() {
            continue;
        }
        let mut blocks = Vec::with_capacity(per_class);
        while blocks.len() < per_class {
            let f = &files[rng.below(files.len() as u64) as usize];
            let i = rng.below((f.len() / block_bytes) as u64) as usize;
            blocks.push(f[i * block_bytes..(i + 1) * block_bytes].to_vec());
        }
        out.push((class, blocks));
    }
    Ok(out)
}

/// `count` blocks of one class: runs of up to 256 consecutive blocks from
/// random offsets of random files of the class.
fn corpus_blocks(
    files: &[PathBuf],
    count: usize,
    rng: &mut Rng,
    out: &mut Vec<Block>,
) -> Result<(), VectorError> {
    let mut data: Vec<Option<Vec<u8>>> = vec![None; files.len()];
    let mut left = count;
    let mut attempts = 0;
    while left > 0 && attempts < 10_000 {
        attempts += 1;
        let k = rng.below(files.len() as u64) as usize;
        if data[k].is_none() {
            data[k] = Some(corpus_data(&files[k])?);
        }
        let d = data[k].as_deref().unwrap_or_default();
        let n_blocks = (d.len() / BLOCK_BYTES) as u64;
        if n_blocks == 0 {
            continue;
        }
        let run = (rng.range(1, 256) as usize)
            .min(left)
            .min(n_blocks as usize);
        let start = rng.below(n_blocks - run as u64 + 1) as usize;
        for c in d[start * BLOCK_BYTES..(start + run) * BLOCK_BYTES].chunks_exact(BLOCK_BYTES) {
            let mut b = [0u8; BLOCK_BYTES];
            b.copy_from_slice(c);
            out.push(b);
        }
        left -= run;
    }
    Ok(())
}

// ---- corner cases ----------------------------------------------------------

fn words(w: [u32; 8]) -> Block {
    let mut b = [0u8; BLOCK_BYTES];
    for (i, v) in w.iter().enumerate() {
        b[4 * i..4 * i + 4].copy_from_slice(&v.to_le_bytes());
    }
    b
}

/// Hand-picked blocks (most important first).
pub fn corner_blocks(rng: &mut Rng) -> Vec<(&'static str, Block)> {
    let mut v: Vec<(&'static str, Block)> = vec![
        ("corner/all-zero", [0; 32]),
        ("corner/all-ones", [0xff; 32]),
        ("corner/same-words", words([0x1234_5678; 8])),
        ("corner/same-words", words([0x8000_0000; 8])),
        ("corner/same-words", words([1; 8])),
        ("corner/same-words", [0x5a; 32]),
        ("corner/same-words", [0x80; 32]),
        ("corner/same-words", [0x01; 32]),
        ("corner/same-halfword-pairs", words([0xaaaa_5555; 8])),
        (
            "corner/alternating-words",
            words([0, u32::MAX, 0, u32::MAX, 0, u32::MAX, 0, u32::MAX]),
        ),
        (
            "corner/alternating-bytes",
            std::array::from_fn(|i| if i % 2 == 0 { 0 } else { 0xff }),
        ),
        ("corner/ramp", std::array::from_fn(|i| i as u8)),
        ("corner/ramp", std::array::from_fn(|i| 31 - i as u8)),
        (
            "corner/ramp",
            std::array::from_fn(|i| (i as u8).wrapping_mul(8)),
        ),
        (
            "corner/int32-ramp",
            words(std::array::from_fn(|i| 1000 + i as u32)),
        ),
        (
            "corner/int32-ramp",
            words(std::array::from_fn(|i| (i as u32).wrapping_sub(4))),
        ),
        (
            "corner/spec-example",
            words([1000, 1001, 1003, 998, 1000, 1010, 999, 1002]),
        ),
        (
            "corner/max-delta",
            std::array::from_fn(|i| if i % 4 == 0 { 0x80 } else { 0x7f }),
        ),
    ];
    // almost same-words: one byte differs
    for i in 0..32 {
        let mut b = words([0xdead_beef; 8]);
        b[i] ^= 1 << (i % 8);
        v.push(("corner/almost-same-words", b));
    }
    // a single 1 bit at every position
    for k in 0..256 {
        let mut b = [0u8; 32];
        b[k / 8] = 1 << (k % 8);
        v.push(("corner/single-bit", b));
    }
    // a single nonzero byte at every position
    for i in 0..32 {
        let mut b = [0u8; 32];
        b[i] = rng.range(1, 255) as u8;
        v.push(("corner/single-byte", b));
    }
    // a single zero byte in a block of ones
    for i in 0..32 {
        let mut b = [0xff; 32];
        b[i] = 0;
        v.push(("corner/single-zero-byte", b));
    }
    v
}

// ---- Table-1 patterns --------------------------------------------------------

/// Code kinds the pattern generator aims at (indices of
/// `table1::CODE_KIND_NAMES`).
const KINDS: usize = 7;

fn symbol_of_kind(kind: usize, rng: &mut Rng) -> u16 {
    loop {
        let s = match kind {
            0 | 1 => 0,
            2 => 1u16 << rng.below(16),
            3 => 3u16 << rng.below(15),
            4 => rng.next_u32() as u16 & 0x00ff,
            5 => rng.next_u32() as u16 & 0xff00,
            _ => rng.next_u32() as u16,
        };
        let ok = match kind {
            0 | 1 => true,
            2 | 3 => true,
            _ => s != 0 && table1::code_for_nonzero(s).kind_index() == kind,
        };
        if ok {
            return s;
        }
    }
}

/// The block whose symbols under predictor `p` are `symbols` (golden's
/// inverse transforms).
pub fn block_from_symbols(p: &Predictor, symbols: &[u16; 16]) -> Block {
    let stream = transform::stream_from_symbols(symbols);
    let xored = transform::unreorder(&stream, &p.reorder);
    let planes = transform::unxor_planes(&xored);
    let res = transform::residues_from_planes(&planes);
    transform::restore(&res, p)
}

/// Symbol sets that exercise Table 1: every code kind with every position,
/// zero runs of every length at every start, and payload sizes around the
/// 256-bit raw threshold; then random mixes. `count` sets in all.
pub fn table1_symbol_sets(count: usize, rng: &mut Rng) -> Vec<(&'static str, [u16; 16])> {
    let mut v: Vec<(&'static str, [u16; 16])> = Vec::new();
    // one kind everywhere, positions rotating
    for rot in 0..16u32 {
        v.push((
            "table1/single-one",
            std::array::from_fn(|m| 1u16 << ((m as u32 + rot) % 16)),
        ));
        v.push((
            "table1/two-ones",
            std::array::from_fn(|m| 3u16 << ((m as u32 + rot) % 15)),
        ));
    }
    for kind in [4usize, 5, 6] {
        for _ in 0..8 {
            let name = [
                "",
                "",
                "",
                "",
                "table1/front-half-zero",
                "table1/back-half-zero",
                "table1/default",
            ][kind];
            v.push((name, std::array::from_fn(|_| symbol_of_kind(kind, rng))));
        }
    }
    // zero runs of every length at several starts, other symbols nonzero
    for len in 1..=16usize {
        for start in [0usize, 1, 16 - len, (16 - len) / 2] {
            if start + len > 16 {
                continue;
            }
            let mut s: [u16; 16] =
                std::array::from_fn(|_| symbol_of_kind(2 + rng.below(5) as usize, rng));
            for x in &mut s[start..start + len] {
                *x = 0;
            }
            v.push(("table1/zero-run", s));
        }
    }
    // payloads just below and at/above the 256-bit raw threshold (sums of
    // 16 code lengths can be 254 or 257 but never 255 or 256)
    for target in [250u32, 252, 253, 254, 257, 258, 259, 262] {
        let mut found = 0;
        let mut tries = 0;
        while found < 6 && tries < 200_000 {
            tries += 1;
            let defaults = rng.range(11, 15) as usize;
            let mut s: [u16; 16] = std::array::from_fn(|m| {
                if m < defaults {
                    symbol_of_kind(6, rng)
                } else {
                    symbol_of_kind(rng.below(KINDS as u64) as usize, rng)
                }
            });
            rng.shuffle(&mut s);
            if table1::encoded_len(&s) == target {
                v.push(("table1/near-raw-threshold", s));
                found += 1;
            }
        }
    }
    // random mixes
    while v.len() < count {
        let pz = rng.unit() * 0.7;
        let s: [u16; 16] = std::array::from_fn(|_| {
            if rng.chance(pz) {
                0
            } else {
                symbol_of_kind(2 + rng.below(5) as usize, rng)
            }
        });
        v.push(("table1/mix", s));
    }
    v.truncate(count);
    v
}

// ---- random blocks -------------------------------------------------------------

fn random_block(kind: u64, rng: &mut Rng) -> (&'static str, Block) {
    let mut b = [0u8; BLOCK_BYTES];
    match kind {
        0 => {
            rng.fill(&mut b);
            ("random/uniform", b)
        }
        1 => {
            // sparse: a few bits set
            for _ in 0..rng.range(1, 12) {
                let k = rng.below(256) as usize;
                b[k / 8] |= 1 << (k % 8);
            }
            ("random/sparse", b)
        }
        2 => {
            // small-delta integers of a random width
            let width = [1usize, 2, 4, 8][rng.below(4) as usize];
            let mut base = rng.next_u64();
            let spread = 1u64 << rng.range(0, 12);
            for chunk in b.chunks_mut(width) {
                let bytes = base.to_le_bytes();
                chunk.copy_from_slice(&bytes[..width]);
                base = base
                    .wrapping_add(rng.below(2 * spread))
                    .wrapping_sub(spread);
            }
            ("random/small-delta", b)
        }
        3 => {
            // repeated word with noise in a few bytes
            let w = rng.next_u32();
            b = words([w; 8]);
            for _ in 0..rng.range(1, 3) {
                let i = rng.below(32) as usize;
                b[i] = rng.next_u8();
            }
            ("random/noisy-same-words", b)
        }
        4 => {
            // bytes from a tiny alphabet
            let a = [rng.next_u8(), rng.next_u8(), 0, 0xff];
            for x in &mut b {
                *x = a[rng.below(4) as usize];
            }
            ("random/small-alphabet", b)
        }
        _ => {
            // fp32-like: same exponent, random mantissa
            let e = rng.next_u32() & 0xff80_0000;
            b = words(std::array::from_fn(|_| e | (rng.next_u32() & 0x007f_ffff)));
            ("random/fp32-like", b)
        }
    }
}

// ---- generators ------------------------------------------------------------------

/// Compressor (and loopback) inputs: corner cases first, then Table-1
/// patterns (10 %), corpus blocks (55 %, split evenly over the classes) and
/// random blocks; shuffled.
pub fn compressor_vectors(
    set: &ModelSet,
    cfg: &GenConfig,
    tags: &mut Tags,
) -> Result<Vec<CompVector>, VectorError> {
    let n = cfg.blocks;
    let mut rng = Rng::fork(cfg.seed, 1);
    let mut v: Vec<CompVector> = Vec::with_capacity(n);
    for (name, block) in corner_blocks(&mut rng) {
        if v.len() >= n {
            break;
        }
        v.push(CompVector {
            block,
            tag: tags.id(name),
        });
    }
    if !set.predictors.is_empty() {
        let t1 = (n / 10).min(n - v.len());
        let sets = table1_symbol_sets(t1, &mut rng);
        for (k, (name, s)) in sets.iter().enumerate() {
            let p = &set.predictors[k % set.predictors.len()];
            v.push(CompVector {
                block: block_from_symbols(p, s),
                tag: tags.id(name),
            });
        }
    }
    if let Some(dir) = &cfg.corpus {
        let classes = usable_corpus(dir, BLOCK_BYTES)?;
        let total = (n * 55 / 100).min(n - v.len());
        let per = total / classes.len();
        for (ci, (class, files)) in classes.iter().enumerate() {
            let want = if ci + 1 == classes.len() {
                total - per * (classes.len() - 1)
            } else {
                per
            };
            let mut blocks = Vec::with_capacity(want);
            corpus_blocks(files, want, &mut rng, &mut blocks)?;
            let tag = tags.id(&format!("corpus/{class}"));
            v.extend(blocks.into_iter().map(|block| CompVector { block, tag }));
        }
    }
    while v.len() < n {
        let (name, block) = random_block(rng.below(6), &mut rng);
        v.push(CompVector {
            block,
            tag: tags.id(name),
        });
    }
    rng.shuffle(&mut v);
    Ok(v)
}

/// Random garbage after bit `len` (up to `width` bits).
fn fill_after(bits: &mut [u8; MAX_BLOCK_BYTES], len: usize, width: usize, rng: &mut Rng) {
    for k in len..width {
        if rng.chance(0.5) {
            bits[k / 8] |= 0x80 >> (k % 8);
        }
    }
}

/// Keep the first `len` bits only.
fn clear_after(bits: &mut [u8; MAX_BLOCK_BYTES], len: usize) {
    for k in len..8 * MAX_BLOCK_BYTES {
        bits[k / 8] &= !(0x80 >> (k % 8));
    }
}

/// A random valid code (and the symbols it stands for), never running past
/// `room` symbols.
fn random_code(room: usize, rng: &mut Rng) -> Code {
    loop {
        let c = match rng.below(7) {
            0 => Code::Zero,
            1 => Code::ZeroRun(rng.range(2, 15) as u8),
            _ => table1::code_for_nonzero(symbol_of_kind(2 + rng.below(5) as usize, rng)),
        };
        if c.symbols() <= room {
            return c;
        }
    }
}

/// Malformed-input kinds of the decompressor vectors.
pub const MALFORMED_KINDS: [&str; 10] = [
    "malformed/bad-model-id",
    "malformed/truncated",
    "malformed/trailing-bits",
    "malformed/too-long",
    "malformed/bad-run-length",
    "malformed/bad-pair-position",
    "malformed/run-overflow",
    "malformed/short-header",
    "malformed/garbage",
    "malformed/garbage-valid-header",
];

/// One malformed input of `kind`; `round` (how many of this kind came
/// before) walks the bad code of the bad-run-length and bad-pair-position
/// kinds through symbols 0..15 and the overflowing run through 2..15,
/// alternately after single-symbol codes and after random codes.
fn malformed(
    kind: usize,
    round: usize,
    set: &ModelSet,
    codec: &MpcCodec,
    pool: &[CompVector],
    rng: &mut Rng,
) -> Option<DecompVector> {
    let h = set.header_bits();
    let width = set.max_bits() as usize;
    let ids = set.id_count() as u32;
    let pick = |rng: &mut Rng| pool[rng.below(pool.len() as u64) as usize].block;
    let mut w = BitWriter::<MAX_BLOCK_BYTES>::new();
    let (mut bits, len) = match kind {
        0 => {
            if ids >= 1 << h {
                return None;
            }
            w.put(rng.range(ids as u64, (1 << h) - 1) as u32, h);
            let (mut b, _) = w.finish();
            fill_after(&mut b, h as usize, width, rng);
            (b, rng.range(h as u64, width as u64) as usize)
        }
        1 => {
            let c = codec.compress(&pick(rng));
            if c.len as usize <= h as usize {
                return None;
            }
            let len = rng.range(h as u64, c.len as u64 - 1) as usize;
            let mut b = c.bytes;
            if rng.chance(0.5) {
                clear_after(&mut b, len);
                fill_after(&mut b, len, width, rng);
            }
            (b, len)
        }
        2 => {
            let c = codec.compress(&pick(rng));
            if c.len as usize >= width {
                return None;
            }
            let mut b = c.bytes;
            fill_after(&mut b, c.len as usize, width, rng);
            (b, rng.range(c.len as u64 + 1, width as u64) as usize)
        }
        3 => {
            let c = codec.compress(&pick(rng));
            let mut b = c.bytes;
            fill_after(&mut b, c.len as usize, width, rng);
            (b, rng.range(width as u64 + 1, 511) as usize)
        }
        4..=6 => {
            if set.predictors.is_empty() {
                return None;
            }
            let p = rng.below(set.predictors.len() as u64) as usize;
            w.put(set.predictor_id(p), h);
            // the bad code's symbol: every position in turn, first after
            // single-symbol codes only (so the bad code is also the code of
            // that number: the decoder checks each code slot), then after
            // random codes
            let (first, span) = if kind == 6 { (2, 14) } else { (0, 16) };
            let prefix = first + round % span;
            let single = (round / span).is_multiple_of(2);
            let mut m = 0usize;
            while m < prefix {
                let mut c = random_code(if single { 1 } else { prefix - m }, rng);
                // room left for the rest of the prefix as one-zero codes
                // (4 bits each) and the bad code (at most 8 bits)
                let rest = (prefix - m - c.symbols()) * 4 + 8;
                if w.len() + c.bits().1 as usize + rest > width {
                    c = Code::Zero;
                }
                let (b, l) = c.bits();
                w.put(b, l);
                m += c.symbols();
            }
            match kind {
                4 => w.put((0b010 << 4) | rng.below(2) as u32, 7),
                5 => w.put(0b0000_1111, 8),
                _ => {
                    // a run from symbol m past symbol 15
                    let left = 16 - m;
                    let run = rng.range(left as u64 + 1, 15) as u32;
                    w.put((0b010 << 4) | run, 7);
                }
            }
            let used = w.len();
            let (mut b, _) = w.finish();
            fill_after(&mut b, used, width, rng);
            // the exact length in the first two walks, so that the bad code
            // is the only error (another would hide a missing check)
            let len = if round >= 2 * span {
                rng.range(used as u64, width as u64) as usize
            } else {
                used
            };
            (b, len)
        }
        7 => {
            let mut b = [0u8; MAX_BLOCK_BYTES];
            rng.fill(&mut b);
            (b, rng.below(h as u64) as usize)
        }
        8 => {
            let mut b = [0u8; MAX_BLOCK_BYTES];
            rng.fill(&mut b);
            (b, rng.below(512) as usize)
        }
        _ => {
            let mut b = [0u8; MAX_BLOCK_BYTES];
            rng.fill(&mut b);
            let id = rng.below(ids as u64) as u32;
            // overwrite the header bits with a valid model ID
            for k in 0..h as usize {
                let bit = (id >> (h as usize - 1 - k)) & 1 == 1;
                b[k / 8] &= !(0x80 >> (k % 8));
                if bit {
                    b[k / 8] |= 0x80 >> (k % 8);
                }
            }
            (b, rng.range(h as u64, width as u64) as usize)
        }
    };
    clear_after(&mut bits, width);
    Some(DecompVector {
        bits,
        len: len as u16,
        tag: 0,
    })
}

/// Decompressor inputs: 70 % valid compressed blocks (from a compressor
/// vector mix; half of them with garbage after `len`), 30 % malformed inputs
/// of every kind in [`MALFORMED_KINDS`]; shuffled.
pub fn decompressor_vectors(
    codec: &MpcCodec,
    cfg: &GenConfig,
    tags: &mut Tags,
) -> Result<Vec<DecompVector>, VectorError> {
    let set = codec.model_set();
    let n = cfg.blocks;
    let width = set.max_bits() as usize;
    let valid_n = n - n * 3 / 10;
    let pool = compressor_vectors(
        set,
        &GenConfig {
            blocks: valid_n.max(1),
            seed: cfg.seed ^ 0x5eed,
            corpus: cfg.corpus.clone(),
        },
        tags,
    )?;
    let mut rng = Rng::fork(cfg.seed, 2);
    let mut v: Vec<DecompVector> = Vec::with_capacity(n);
    for cv in pool.iter().take(valid_n) {
        let c = codec.compress(&cv.block);
        let mut bits = c.bytes;
        if rng.chance(0.5) {
            fill_after(&mut bits, c.len as usize, width, &mut rng);
        }
        v.push(DecompVector {
            bits,
            len: c.len as u16,
            tag: cv.tag,
        });
    }
    let mut k = 0usize;
    let mut misses = 0;
    while v.len() < n && misses < 1000 {
        let (kind, round) = (k % MALFORMED_KINDS.len(), k / MALFORMED_KINDS.len());
        k += 1;
        match malformed(kind, round, set, codec, &pool, &mut rng) {
            Some(mut d) => {
                d.tag = tags.id(MALFORMED_KINDS[kind]);
                v.push(d);
            }
            None => misses += 1,
        }
    }
    while v.len() < n {
        // model sets where no malformed kind applies: more valid blocks
        let cv = pool[v.len() % pool.len()];
        let c = codec.compress(&cv.block);
        v.push(DecompVector {
            bits: c.bytes,
            len: c.len as u16,
            tag: cv.tag,
        });
    }
    rng.shuffle(&mut v);
    Ok(v)
}

// ---- vector files ----------------------------------------------------------------

fn writer(path: &Path) -> Result<BufWriter<File>, VectorError> {
    File::create(path)
        .map(|f| BufWriter::with_capacity(1 << 20, f))
        .map_err(|source| VectorError::Write {
            path: path.to_path_buf(),
            source,
        })
}

fn write_all(path: &Path, w: &mut BufWriter<File>, bytes: &[u8]) -> Result<(), VectorError> {
    w.write_all(bytes).map_err(|source| VectorError::Write {
        path: path.to_path_buf(),
        source,
    })
}

/// Write compressor vectors: one 64-digit block per line.
pub fn write_comp(path: &Path, v: &[CompVector]) -> Result<(), VectorError> {
    let mut w = writer(path)?;
    let mut line = Vec::with_capacity(66);
    for cv in v {
        line.clear();
        hex::push_block(&mut line, &cv.block);
        line.push(b'\n');
        write_all(path, &mut w, &line)?;
    }
    w.flush().map_err(|source| VectorError::Write {
        path: path.to_path_buf(),
        source,
    })
}

/// Width of the decompressor's `in_len` port.
pub const LEN_WIDTH: u32 = hdl::mpc::compressor::LEN_WIDTH;

/// The decompressor's input bus `{in_len, in_bits}` of a vector: the
/// left-aligned `width`-bit `in_bits` below the 9-bit `in_len`.
pub fn decomp_bus(dv: &DecompVector, width: u32) -> LeBus {
    let mut bus = LeBus::new();
    bus.put_left_aligned(&dv.bits, width as usize, width as usize);
    bus.put_uint(u64::from(dv.len), LEN_WIDTH as usize);
    bus
}

/// Write decompressor vectors: one `{in_len, in_bits}` bus per line
/// ([`decomp_bus`]), `ceil((width + 9) / 4)` hex digits.
pub fn write_decomp(path: &Path, v: &[DecompVector], width: u32) -> Result<(), VectorError> {
    let mut w = writer(path)?;
    for dv in v {
        let mut line = decomp_bus(dv, width).hex();
        line.push('\n');
        write_all(path, &mut w, line.as_bytes())?;
    }
    w.flush().map_err(|source| VectorError::Write {
        path: path.to_path_buf(),
        source,
    })
}

fn lines(path: &Path) -> Result<Vec<String>, VectorError> {
    let text = std::fs::read_to_string(path).map_err(|source| VectorError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(text.lines().map(str::to_string).collect())
}

/// Read a compressor vector file back (tags are 0).
pub fn read_comp(path: &Path) -> Result<Vec<CompVector>, VectorError> {
    lines(path)?
        .iter()
        .enumerate()
        .map(|(i, l)| {
            hex::parse_block(l.trim().as_bytes())
                .map(|block| CompVector { block, tag: 0 })
                .map_err(|e| VectorError::Parse {
                    path: path.to_path_buf(),
                    line: i + 1,
                    problem: e.to_string(),
                })
        })
        .collect()
}

/// Read a decompressor vector file back (tags are 0).
pub fn read_decomp(path: &Path, width: u32) -> Result<Vec<DecompVector>, VectorError> {
    let bus_width = (width + LEN_WIDTH) as usize;
    lines(path)?
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let bus = LeBus::parse(l.trim(), bus_width).ok_or_else(|| VectorError::Parse {
                path: path.to_path_buf(),
                line: i + 1,
                problem: format!("not a {bus_width}-bit hex value"),
            })?;
            let mut bits = [0u8; MAX_BLOCK_BYTES];
            for (d, s) in bits.iter_mut().zip(bus.left_aligned(0, width as usize)) {
                *d = s;
            }
            Ok(DecompVector {
                bits,
                len: bus.uint(width as usize, LEN_WIDTH as usize) as u16,
                tag: 0,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use golden::mpc::{reference, DecodeError};

    fn example() -> ModelSet {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../models/example");
        ModelSet::load(&dir).expect("models/example loads")
    }

    #[test]
    fn table1_blocks_have_the_requested_symbols() {
        let set = example();
        let codec = MpcCodec::new(&set);
        let mut rng = Rng::new(3);
        let sets = table1_symbol_sets(400, &mut rng);
        assert_eq!(sets.len(), 400);
        let mut kinds = [0usize; 7];
        for (k, (_, s)) in sets.iter().enumerate() {
            let pi = k % set.predictors.len();
            let b = block_from_symbols(&set.predictors[pi], s);
            assert_eq!(&codec.predictor_symbols(pi, &b), s);
            table1::encode_symbols(s, |c| kinds[c.kind_index()] += 1);
        }
        assert!(
            kinds.iter().all(|&n| n > 0),
            "every code kind is hit: {kinds:?}"
        );
        for bits in [254, 257] {
            assert!(
                sets.iter().any(|(_, s)| table1::encoded_len(s) == bits),
                "a {bits}-bit payload"
            );
        }
    }

    #[test]
    fn compressor_vectors_are_seeded_and_tagged() {
        let set = example();
        let cfg = GenConfig {
            blocks: 2000,
            seed: 9,
            corpus: None,
        };
        let mut t1 = Tags::new();
        let a = compressor_vectors(&set, &cfg, &mut t1).expect("vectors");
        let mut t2 = Tags::new();
        let b = compressor_vectors(&set, &cfg, &mut t2).expect("vectors");
        assert_eq!(a.len(), 2000);
        assert_eq!(a, b);
        let names: Vec<&str> = (0..t1.len()).map(|i| t1.name(i as u16)).collect();
        for want in ["corner/all-zero", "table1/mix", "random/uniform"] {
            assert!(names.contains(&want), "{want} in {names:?}");
        }
        // both custom models and the raw escape are hit
        let codec = MpcCodec::new(&set);
        let mut ids = vec![0usize; set.id_count()];
        for v in &a {
            ids[codec.compress(&v.block).model as usize] += 1;
        }
        assert!(ids.iter().all(|&n| n > 0), "every model ID: {ids:?}");
    }

    #[test]
    fn corpus_vectors_cover_every_class() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus");
        assert!(
            dir.is_dir(),
            "corpus {} missing: this test needs the shared corpus beside the repository",
            dir.display()
        );
        let set = example();
        let mut tags = Tags::new();
        let v = compressor_vectors(
            &set,
            &GenConfig {
                blocks: 3000,
                seed: 1,
                corpus: Some(dir.clone()),
            },
            &mut tags,
        )
        .expect("vectors");
        let classes = corpus_classes(&dir).expect("classes");
        for (c, _) in &classes {
            let id = tags.id(&format!("corpus/{c}"));
            assert!(v.iter().any(|x| x.tag == id), "class {c}");
        }
    }

    /// A `.npy` version 1.0 file of `data` as a 1-D array of `descr`.
    fn npy(descr: &str, item: usize, data: &[u8]) -> Vec<u8> {
        let mut dict = format!(
            "{{'descr': '{descr}', 'fortran_order': False, 'shape': ({},), }}",
            data.len() / item
        );
        while (10 + dict.len() + 1) % 64 != 0 {
            dict.push(' ');
        }
        dict.push('\n');
        let mut f = b"\x93NUMPY\x01\x00".to_vec();
        f.extend_from_slice(&(dict.len() as u16).to_le_bytes());
        f.extend_from_slice(dict.as_bytes());
        f.extend_from_slice(data);
        f
    }

    #[test]
    fn corpus_without_manifest_reads_npy_and_plain_files() {
        let dir = std::env::temp_dir().join(format!("tb-npy-corpus-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("fp32")).unwrap();
        // Distinct block contents per file, so every sample names its file.
        let a: Vec<u8> = (0..64 * 32).map(|i| (i / 32) as u8).collect();
        let b: Vec<u8> = (0..32 * 32).map(|i| 0x80 | (i / 32) as u8).collect();
        std::fs::write(dir.join("dump.bin"), &a).unwrap();
        std::fs::write(dir.join("fp32/w.npy"), npy("<f4", 4, &b)).unwrap();
        let classes = corpus_classes(&dir).expect("classes");
        let names: Vec<&str> = classes.iter().map(|c| c.0.as_str()).collect();
        assert_eq!(names, ["fp32", "unlabelled"]);
        assert_eq!(corpus_data(&dir.join("fp32/w.npy")).unwrap(), b);
        let got = corpus_samples(&dir, 32, 50, &mut Rng::new(3)).expect("samples");
        assert_eq!(got.len(), 2);
        for (class, blocks) in &got {
            assert_eq!(blocks.len(), 50);
            let src = if class == "fp32" { &b } else { &a };
            for bl in blocks {
                assert!(src.chunks_exact(32).any(|c| c == &bl[..]), "{class}");
            }
        }
        // MPC vectors tag them by class.
        let mut tags = Tags::new();
        let v = compressor_vectors(
            &example(),
            &GenConfig {
                blocks: 2000,
                seed: 1,
                corpus: Some(dir.clone()),
            },
            &mut tags,
        )
        .expect("vectors");
        for c in ["corpus/fp32", "corpus/unlabelled"] {
            let id = tags.id(c);
            assert!(v.iter().any(|x| x.tag == id), "{c}");
        }
        // A bad .npy is an error naming it, not a silent skip.
        std::fs::write(dir.join("fp32/bad.npy"), b"\x93NUMPY\x01\x00\xff").unwrap();
        let e = corpus_samples(&dir, 32, 1, &mut Rng::new(1)).unwrap_err();
        assert!(e.to_string().contains("bad.npy"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn malformed_vectors_are_rejected_by_golden() {
        let set = example();
        let codec = MpcCodec::new(&set);
        let mut tags = Tags::new();
        let v = decompressor_vectors(
            &codec,
            &GenConfig {
                blocks: 3000,
                seed: 5,
                corpus: None,
            },
            &mut tags,
        )
        .expect("vectors");
        assert_eq!(v.len(), 3000);
        let mut bad = 0;
        // the symbol each bad code sits at: run length, pair position, overflow
        let mut at: [std::collections::BTreeSet<usize>; 3] = Default::default();
        for d in &v {
            let name = tags.name(d.tag);
            let r = reference::decompress(&d.bits, d.len as usize, &set);
            match (name, &r) {
                ("malformed/bad-run-length", Err(DecodeError::BadRunLength { symbol, .. })) => {
                    at[0].insert(*symbol);
                }
                (
                    "malformed/bad-pair-position",
                    Err(DecodeError::BadPairPosition { symbol, .. }),
                ) => {
                    at[1].insert(*symbol);
                }
                ("malformed/run-overflow", Err(DecodeError::RunOverflow { symbol, .. })) => {
                    at[2].insert(*symbol);
                }
                _ => {}
            }
            if name.starts_with("malformed/") && !name.starts_with("malformed/garbage") {
                assert!(r.is_err(), "{name} len {} accepted", d.len);
            }
            if !name.starts_with("malformed/") {
                assert!(r.is_ok(), "{name}: {r:?}");
            }
            bad += r.is_err() as usize;
        }
        assert!(bad >= 800, "{bad} errors");
        // every decoder check at every symbol it can fire at
        assert_eq!(at[0], (0..16).collect(), "bad run lengths at");
        assert_eq!(at[1], (0..16).collect(), "bad pair positions at");
        assert_eq!(at[2], (2..16).collect(), "overflowing runs at");
        for k in MALFORMED_KINDS {
            let id = tags.id(k);
            assert!(v.iter().any(|x| x.tag == id), "{k}");
        }
    }

    #[test]
    fn vector_files_round_trip() {
        let set = example();
        let codec = MpcCodec::new(&set);
        let mut tags = Tags::new();
        let cfg = GenConfig {
            blocks: 300,
            seed: 2,
            corpus: None,
        };
        let dir = std::env::temp_dir().join(format!("tb-vector-files-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("mkdir");
        let c = compressor_vectors(&set, &cfg, &mut tags).expect("c");
        write_comp(&dir.join("c.hex"), &c).expect("write");
        let back = read_comp(&dir.join("c.hex")).expect("read");
        assert!(back.iter().zip(&c).all(|(a, b)| a.block == b.block));
        let d = decompressor_vectors(&codec, &cfg, &mut tags).expect("d");
        let w = set.max_bits();
        write_decomp(&dir.join("d.hex"), &d, w).expect("write");
        let back = read_decomp(&dir.join("d.hex"), w).expect("read");
        assert!(back
            .iter()
            .zip(&d)
            .all(|(a, b)| a.bits == b.bits && a.len == b.len));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
