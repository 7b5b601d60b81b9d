//! The evaluation of MPC against the baseline compressors:
//! compression ratios per application, class, integer/floating point,
//! seen/unseen and overall, on the test blocks of the paper's split
//! (`datafiles::corpus::Split::paper`), plus whole-file LZ4/zstd for context.
//!
//! Ratio = sum of original bits / sum of compressed bits, over the blocks of
//! a group ("bit-exact"), and the same with every compressed block rounded
//! up to whole bytes ("byte-rounded"). A group without blocks has no ratio
//! (`None`; "—" in tables), never 0 or NaN.

use std::collections::BTreeMap;

use rayon::prelude::*;
use serde::Serialize;

use datafiles::corpus::{AppRole, Block, Corpus, Split};
use golden::baselines::{BlockCodec, Compressed, DecodeError, MpcBlockCodec, VecBitWriter};
use golden::mpc::program::{train_slots, Form, OnlineOptions, ProgrammedSet};
use golden::mpc::ModelSet;

pub mod report;

/// Why an evaluation failed.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    #[error("{algo}: block {block} of {app} does not round-trip: {reason}")]
    RoundTrip {
        algo: String,
        app: String,
        block: usize,
        reason: String,
    },
    #[error("block size {0} is not supported (32 or 128)")]
    BlockSize(usize),
    #[error("{algo}: blocks of {codec} bytes do not tile {block}-byte blocks")]
    Tiling {
        algo: String,
        codec: usize,
        block: usize,
    },
    #[error("{0}")]
    Compressor(String),
    #[error("{algo}: programming the slots for {app}: {reason}")]
    Program {
        algo: String,
        app: String,
        reason: String,
    },
}

/// Integer classes.
pub const INT_CLASSES: [&str; 4] = ["int8", "int16", "int32", "int64"];
/// Floating-point classes.
pub const FP_CLASSES: [&str; 4] = ["fp16", "bf16", "fp32", "fp64"];

/// Sizes summed over a set of blocks for one algorithm.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Totals {
    pub blocks: u64,
    pub original_bits: u64,
    /// Sum of bit-exact compressed sizes.
    pub bits: u64,
    /// Sum of compressed sizes rounded up to whole bytes, in bits.
    pub byte_bits: u64,
}

impl Totals {
    pub fn add(&mut self, o: &Totals) {
        self.blocks += o.blocks;
        self.original_bits += o.original_bits;
        self.bits += o.bits;
        self.byte_bits += o.byte_bits;
    }

    /// Bit-exact ratio; `None` for an empty set (no blocks: nothing to
    /// divide).
    pub fn ratio(&self) -> Option<f64> {
        ratio_of(self.original_bits, self.bits, self.blocks)
    }

    /// Byte-rounded ratio; `None` for an empty set.
    pub fn byte_ratio(&self) -> Option<f64> {
        ratio_of(self.original_bits, self.byte_bits, self.blocks)
    }
}

/// `original / compressed`, or `None` when the set is empty (no blocks or
/// nothing compressed): an empty group has no ratio, not a ratio of 0.
pub fn ratio_of(original: u64, compressed: u64, blocks: u64) -> Option<f64> {
    (blocks > 0 && compressed > 0).then(|| original as f64 / compressed as f64)
}

/// A ratio for a table cell: three decimals, or `—` for an empty group.
pub fn fmt_ratio(r: Option<f64>) -> String {
    r.map_or_else(|| EMPTY_CELL.to_string(), |v| format!("{v:.3}"))
}

/// What a table shows for a group without blocks.
pub const EMPTY_CELL: &str = "—";

/// One algorithm to evaluate.
pub struct Algo {
    /// Name in reports.
    pub name: String,
    pub codec: Box<dyn BlockCodec>,
    /// The paper's Fig. 5 average, where it has one.
    pub paper: Option<f64>,
    /// Context only (e.g. LZ4 per block): left out of the win count.
    pub context: bool,
}

/// One application's results.
#[derive(Clone, Debug, Serialize)]
pub struct AppResult {
    pub file: String,
    pub class: String,
    pub role: String,
    /// Per algorithm, in `Evaluation::algos` order.
    pub totals: Vec<Totals>,
    /// Whole-file sizes in bytes: raw, LZ4 (lz4_flex block format), zstd.
    pub file_bytes: u64,
    pub lz4_file_bytes: u64,
    pub zstd_file_bytes: u64,
    /// The same over the evaluated blocks concatenated in order.
    pub eval_bytes: u64,
    pub lz4_eval_bytes: u64,
    pub zstd_eval_bytes: u64,
    /// Online protocol only: the 32-byte blocks of the sample (the file's
    /// first quarter) and, per programmed column in column order, the
    /// slots the trainer loaded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub online: Option<AppOnline>,
}

/// One application's online-protocol sample and slots.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AppOnline {
    /// 32-byte blocks the slots were trained on: the first
    /// `floor(n / 4)` of the file's `n`.
    pub sample_blocks: u64,
    /// Per programmed column: slots loaded (of K).
    pub slots_loaded: Vec<usize>,
}

/// One programmed column of an online evaluation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ProgrammedInfo {
    /// The column's name.
    pub name: String,
    /// The column of the same model set alone, where there is one.
    pub base: Option<String>,
    /// Slots (K).
    pub k: usize,
    /// Slot form.
    pub form: String,
}

impl ProgrammedInfo {
    /// `NAME (K slots of form F)`, for reports.
    pub fn describe(&self) -> String {
        format!(
            "`{}` ({} slot{} of form {})",
            self.name,
            self.k,
            if self.k == 1 { "" } else { "s" },
            self.form
        )
    }
}

/// A whole evaluation.
#[derive(Clone, Debug, Serialize)]
pub struct Evaluation {
    pub block_bytes: usize,
    pub seed: u64,
    /// Which blocks were evaluated.
    pub block_set: String,
    pub algos: Vec<String>,
    pub paper: Vec<Option<f64>>,
    pub context: Vec<bool>,
    pub zstd_level: i32,
    pub apps: Vec<AppResult>,
    /// Set when the evaluation ran the online protocol
    /// ([`evaluate_online`]): its programmed columns, in column order;
    /// absent from the JSON otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub online: Option<Vec<ProgrammedInfo>>,
}

/// A named group of applications.
#[derive(Clone, Debug, Serialize)]
pub struct GroupResult {
    pub name: String,
    pub apps: usize,
    pub totals: Vec<Totals>,
    /// Whole-buffer LZ4 and zstd ratios over the group's evaluated blocks
    /// (`None`, JSON `null`, for a group without blocks).
    pub lz4_ratio: Option<f64>,
    pub zstd_ratio: Option<f64>,
}

impl GroupResult {
    /// Evaluated blocks in the group (the same for every algorithm).
    pub fn blocks(&self) -> u64 {
        self.totals.first().map_or(0, |t| t.blocks)
    }

    /// True when the group has no evaluated block (no application, or
    /// only applications without a whole block).
    pub fn is_empty(&self) -> bool {
        self.blocks() == 0
    }
}

impl Evaluation {
    /// Sum over the applications for which `pick` holds.
    pub fn group(&self, name: &str, pick: impl Fn(&AppResult) -> bool) -> GroupResult {
        let mut totals = vec![Totals::default(); self.algos.len()];
        let (mut raw, mut lz4, mut zstd, mut apps) = (0u64, 0u64, 0u64, 0usize);
        for a in self.apps.iter().filter(|a| pick(a)) {
            apps += 1;
            for (t, x) in totals.iter_mut().zip(&a.totals) {
                t.add(x);
            }
            raw += a.eval_bytes;
            lz4 += a.lz4_eval_bytes;
            zstd += a.zstd_eval_bytes;
        }
        let blocks = totals.first().map_or(0, |t| t.blocks);
        let r = |c: u64| ratio_of(raw, c, blocks);
        GroupResult {
            name: name.to_string(),
            apps,
            totals,
            lz4_ratio: r(lz4),
            zstd_ratio: r(zstd),
        }
    }

    /// The summary groups: overall (seen + unseen), seen, unseen, integer,
    /// floating point, mixed + workload, everything; then one per class.
    pub fn groups(&self) -> Vec<GroupResult> {
        let trainable = |a: &AppResult| a.role != AppRole::Evaluation.to_string();
        let mut g = vec![
            self.group("overall (seen + unseen)", trainable),
            self.group("seen", |a| a.role == AppRole::Seen.to_string()),
            self.group("unseen", |a| a.role == AppRole::Unseen.to_string()),
            self.group("integer (int8..int64)", |a| {
                INT_CLASSES.contains(&a.class.as_str())
            }),
            self.group("floating point (fp16..fp64)", |a| {
                FP_CLASSES.contains(&a.class.as_str())
            }),
            self.group("mixed + workload", |a| !trainable(a)),
            self.group("all applications", |_| true),
        ];
        let mut classes: Vec<&str> = Vec::new();
        for a in &self.apps {
            if !classes.contains(&a.class.as_str()) {
                classes.push(&a.class);
            }
        }
        for c in classes {
            g.push(self.group(&format!("class {c}"), |a| a.class == c));
        }
        g
    }

    /// Per algorithm, the number of applications on which it has the best
    /// bit-exact ratio among the non-context algorithms (ties count for
    /// every tied algorithm).
    pub fn wins(&self) -> Vec<usize> {
        let all: Vec<usize> = (0..self.algos.len())
            .filter(|&k| !self.context[k])
            .collect();
        self.wins_among(&all)
    }

    /// Wins per algorithm when only the algorithms `among` compete (zero
    /// for the others).
    pub fn wins_among(&self, among: &[usize]) -> Vec<usize> {
        let mut wins = vec![0; self.algos.len()];
        for a in &self.apps {
            let best = among
                .iter()
                .filter_map(|&k| a.totals[k].ratio())
                .fold(None, |m: Option<f64>, r| Some(m.map_or(r, |m| m.max(r))));
            let Some(best) = best else {
                // No evaluated block: nobody wins this application.
                continue;
            };
            for &k in among {
                if a.totals[k].ratio() == Some(best) {
                    wins[k] += 1;
                }
            }
        }
        wins
    }

    /// Applications with at least one evaluated block (those the win
    /// counts are over).
    pub fn apps_with_blocks(&self) -> usize {
        self.apps
            .iter()
            .filter(|a| a.totals.first().is_some_and(|t| t.blocks > 0))
            .count()
    }
}

/// The blocks of one application that an evaluation at `block_bytes`
/// takes: at 32 bytes the split's test blocks (every block of a
/// [`Split::held_out`] split); at 128 bytes every whole
/// 128-byte block of the file (the split is per 32-byte block, so the
/// seen applications' 128-byte blocks include blocks MPC and SC2 trained
/// on).
pub fn eval_blocks(corpus: &Corpus, split: &Split, app: usize, block_bytes: usize) -> Vec<u8> {
    let mut out = Vec::new();
    if block_bytes == 32 {
        for b in split.app_test_blocks(corpus, app) {
            out.extend_from_slice(b);
        }
    } else {
        let blocks = &corpus.apps[app].blocks;
        let per = block_bytes / 32;
        for g in blocks.chunks_exact(per) {
            for b in g {
                out.extend_from_slice(b);
            }
        }
    }
    out
}

/// Compressed size of `block` by `codec` (tiling a `block` longer than
/// the codec's block), checking the round trip when `verify`.
fn measure(codec: &dyn BlockCodec, block: &[u8], verify: bool) -> Result<Totals, String> {
    let mut t = Totals {
        blocks: 1,
        original_bits: 8 * block.len() as u64,
        ..Totals::default()
    };
    for piece in block.chunks(codec.block_bytes()) {
        let c = codec.compress(piece);
        if c.len > codec.max_bits() {
            return Err(format!(
                "{} bits exceed the {}-bit maximum",
                c.len,
                codec.max_bits()
            ));
        }
        if verify {
            match codec.decompress(&c.bytes, c.len) {
                Ok(d) if d == piece => {}
                Ok(_) => return Err("decoded block differs".into()),
                Err(e) => return Err(e.to_string()),
            }
        }
        t.bits += c.len as u64;
        t.byte_bits += 8 * c.byte_len() as u64;
    }
    Ok(t)
}

/// Run the evaluation. `on_blocks` is called with the number of blocks
/// done after each chunk (for a progress bar).
pub fn evaluate(
    corpus: &Corpus,
    split: &Split,
    algos: &[Algo],
    block_bytes: usize,
    verify: bool,
    zstd_level: i32,
    on_blocks: &(dyn Fn(u64) + Sync),
) -> Result<Evaluation, EvalError> {
    check_tiling(algos, block_bytes)?;
    let codecs: Vec<(&str, &dyn BlockCodec)> = algos
        .iter()
        .map(|a| (a.name.as_str(), a.codec.as_ref()))
        .collect();
    let mut apps = Vec::with_capacity(corpus.apps.len());
    for i in 0..corpus.apps.len() {
        let data = eval_blocks(corpus, split, i, block_bytes);
        apps.push(app_result(
            corpus,
            split,
            i,
            &data,
            &codecs,
            Settings {
                block_bytes,
                verify,
                zstd_level,
            },
            on_blocks,
        )?);
    }
    let block_set = if split.held_out {
        "every block of every file (held-out corpus: no block of it trained MPC or SC2)"
    } else if block_bytes == 32 {
        "test blocks of the paper split (seen: the 20 % held out; unseen, mixed, workload: all)"
    } else {
        "every whole 128-byte block of every file (includes blocks MPC and SC2 trained on, in seen applications)"
    };
    Ok(Evaluation {
        block_bytes,
        seed: split.seed,
        block_set: block_set.to_string(),
        algos: algos.iter().map(|a| a.name.clone()).collect(),
        paper: algos.iter().map(|a| a.paper).collect(),
        context: algos.iter().map(|a| a.context).collect(),
        zstd_level,
        apps,
        online: None,
    })
}

/// The slot form the online protocol uses when none is named: the one
/// `docs/spec/program-slots.md` recommends.
pub const DEFAULT_FORM: &str = "stride-colpart";

/// MPC programmed per application (the online protocol of
/// `docs/spec/program-slots.md`): a hard-wired model set plus K slots of a
/// form, trained on the application's first quarter of 32-byte blocks in
/// file order.
pub struct Programmed {
    /// Name in reports.
    pub name: String,
    /// The name of the column of `set` alone, if the evaluation has one
    /// (the report then shows the gain over it).
    pub base: Option<String>,
    pub set: ModelSet,
    pub opts: OnlineOptions,
}

impl Programmed {
    /// `k` slots of `form` on `set`; refused (naming the limit) when the
    /// set cannot take `k` slots.
    pub fn new(
        name: impl Into<String>,
        set: ModelSet,
        form: Form,
        k: usize,
    ) -> Result<Programmed, EvalError> {
        let name = name.into();
        let opts = OnlineOptions::new(form, k);
        // an empty sample trains nothing but checks K against the set
        train_slots(&set, &[], &opts).map_err(|e| EvalError::Program {
            algo: name.clone(),
            app: "any application".into(),
            reason: e.to_string(),
        })?;
        Ok(Programmed {
            name,
            base: None,
            set,
            opts,
        })
    }

    /// The codec programmed from `sample` (blocks of `app`) and the
    /// number of slots the trainer loaded.
    pub fn codec(&self, app: &str, sample: &[Block]) -> Result<(MpcBlockCodec, usize), EvalError> {
        let err = |e: golden::mpc::program::ImageError| EvalError::Program {
            algo: self.name.clone(),
            app: app.to_string(),
            reason: e.to_string(),
        };
        let image = train_slots(&self.set, sample, &self.opts).map_err(err)?;
        let unit = ProgrammedSet::new(&self.set, &image).map_err(err)?;
        Ok((
            MpcBlockCodec::new(self.name.clone(), unit.fast_codec()),
            image.loaded(),
        ))
    }
}

/// One column of an online evaluation.
pub enum Column {
    /// The same codec for every application.
    Fixed(Algo),
    /// A model set programmed per application from its first quarter.
    Programmed(Box<Programmed>),
}

impl Column {
    pub fn name(&self) -> &str {
        match self {
            Column::Fixed(a) => &a.name,
            Column::Programmed(p) => &p.name,
        }
    }
}

/// The online protocol's split of one application's 32-byte blocks: the
/// sample (the first `floor(n / 4)`, in file order) and the rest.
pub fn online_split(blocks: &[Block]) -> (&[Block], &[Block]) {
    blocks.split_at(blocks.len() / 4)
}

/// The blocks of one application that an online evaluation at
/// `block_bytes` takes: the 32-byte blocks after the sample
/// ([`online_split`]), in file order, as whole `block_bytes` groups from
/// the first of them.
pub fn online_eval_blocks(corpus: &Corpus, app: usize, block_bytes: usize) -> Vec<u8> {
    let (_, rest) = online_split(&corpus.apps[app].blocks);
    let per = (block_bytes / BLOCK).max(1);
    rest.chunks_exact(per)
        .flatten()
        .flatten()
        .copied()
        .collect()
}

/// Run the evaluation under the online protocol: per application, the
/// programmed columns' slots are trained on its first quarter of 32-byte
/// blocks in file order, and every column (fixed and programmed) is
/// measured on the same blocks, the rest of the file
/// ([`online_eval_blocks`]). The split gives the roles only.
pub fn evaluate_online(
    corpus: &Corpus,
    split: &Split,
    columns: &[Column],
    block_bytes: usize,
    verify: bool,
    zstd_level: i32,
    on_blocks: &(dyn Fn(u64) + Sync),
) -> Result<Evaluation, EvalError> {
    let fixed: Vec<&Algo> = columns
        .iter()
        .filter_map(|c| match c {
            Column::Fixed(a) => Some(a),
            Column::Programmed(_) => None,
        })
        .collect();
    check_tiling(fixed, block_bytes)?;
    // the programmed codecs of every application, trained in parallel
    let programmed: Vec<Vec<(MpcBlockCodec, usize)>> = corpus
        .apps
        .par_iter()
        .map(|app| {
            let (sample, _) = online_split(&app.blocks);
            columns
                .iter()
                .filter_map(|c| match c {
                    Column::Programmed(p) => Some(p.codec(&app.entry.file, sample)),
                    Column::Fixed(_) => None,
                })
                .collect::<Result<Vec<_>, _>>()
        })
        .collect::<Result<_, _>>()?;
    let mut apps = Vec::with_capacity(corpus.apps.len());
    for (i, prog) in programmed.iter().enumerate() {
        let mut next = prog.iter();
        let mut codecs: Vec<(&str, &dyn BlockCodec)> = Vec::with_capacity(columns.len());
        for c in columns {
            match c {
                Column::Fixed(a) => codecs.push((&a.name, a.codec.as_ref())),
                Column::Programmed(p) => {
                    if let Some((codec, _)) = next.next() {
                        codecs.push((&p.name, codec));
                    }
                }
            }
        }
        let data = online_eval_blocks(corpus, i, block_bytes);
        let mut r = app_result(
            corpus,
            split,
            i,
            &data,
            &codecs,
            Settings {
                block_bytes,
                verify,
                zstd_level,
            },
            on_blocks,
        )?;
        r.online = Some(AppOnline {
            sample_blocks: online_split(&corpus.apps[i].blocks).0.len() as u64,
            slots_loaded: prog.iter().map(|p| p.1).collect(),
        });
        apps.push(r);
    }
    let groups = if block_bytes == BLOCK {
        String::new()
    } else {
        format!(" as whole {block_bytes}-byte groups from the first of them")
    };
    let trained = if split.held_out {
        "no block of the corpus trained the model sets or SC2 (held out)".to_string()
    } else {
        "in the seen applications they include blocks the model sets and SC2 trained on \
         (paper split)"
            .to_string()
    };
    let online: Vec<ProgrammedInfo> = columns
        .iter()
        .filter_map(|c| match c {
            Column::Programmed(p) => Some(ProgrammedInfo {
                name: p.name.clone(),
                base: p.base.clone(),
                k: p.opts.k,
                form: p.opts.form.name.to_string(),
            }),
            Column::Fixed(_) => None,
        })
        .collect();
    let block_set = format!(
        "the online protocol's, the same for every column: of each file's n 32-byte blocks, \
         blocks floor(n/4) to n-1 in file order{groups}; the first floor(n/4) are the sample \
         the slots of {} were trained on, and no column measures them; {trained}",
        if online.is_empty() {
            "no column (none is programmed)".to_string()
        } else {
            online
                .iter()
                .map(ProgrammedInfo::describe)
                .collect::<Vec<_>>()
                .join(", ")
        }
    );
    Ok(Evaluation {
        block_bytes,
        seed: split.seed,
        block_set,
        algos: columns.iter().map(|c| c.name().to_string()).collect(),
        paper: columns
            .iter()
            .map(|c| match c {
                Column::Fixed(a) => a.paper,
                Column::Programmed(_) => None,
            })
            .collect(),
        context: columns
            .iter()
            .map(|c| match c {
                Column::Fixed(a) => a.context,
                Column::Programmed(_) => false,
            })
            .collect(),
        zstd_level,
        apps,
        online: Some(online),
    })
}

/// Bytes of a corpus block (the MPC block).
const BLOCK: usize = std::mem::size_of::<Block>();

/// Refuse a block size other than 32 or 128, and a codec whose blocks do
/// not tile it.
fn check_tiling<'a>(
    algos: impl IntoIterator<Item = &'a Algo>,
    block_bytes: usize,
) -> Result<(), EvalError> {
    if block_bytes != 32 && block_bytes != 128 {
        return Err(EvalError::BlockSize(block_bytes));
    }
    for a in algos {
        let cb = a.codec.block_bytes();
        if cb > block_bytes || !block_bytes.is_multiple_of(cb) {
            return Err(EvalError::Tiling {
                algo: a.name.clone(),
                codec: cb,
                block: block_bytes,
            });
        }
    }
    Ok(())
}

/// Blocks per parallel work item.
const CHUNK_BLOCKS: usize = 1024;

/// How blocks are measured.
#[derive(Clone, Copy)]
struct Settings {
    block_bytes: usize,
    verify: bool,
    zstd_level: i32,
}

/// One application's result over its evaluated blocks `data`, each
/// measured by every codec of `codecs` (name, codec) in order.
fn app_result(
    corpus: &Corpus,
    split: &Split,
    i: usize,
    data: &[u8],
    codecs: &[(&str, &dyn BlockCodec)],
    s: Settings,
    on_blocks: &(dyn Fn(u64) + Sync),
) -> Result<AppResult, EvalError> {
    let app = &corpus.apps[i];
    let file: Vec<u8> = app.blocks.iter().flatten().copied().collect();
    let ((lz4_file, zstd_file), (lz4_eval, zstd_eval)) = rayon::join(
        || general(&file, s.zstd_level),
        || general(data, s.zstd_level),
    );
    let (lz4_file, zstd_file, lz4_eval, zstd_eval) = (lz4_file, zstd_file?, lz4_eval, zstd_eval?);
    let name = &app.entry.file;
    let block_bytes = s.block_bytes;
    let totals = data
        .par_chunks(block_bytes * CHUNK_BLOCKS)
        .enumerate()
        .map(|(ci, chunk)| {
            let mut t = vec![Totals::default(); codecs.len()];
            for (bi, block) in chunk.chunks_exact(block_bytes).enumerate() {
                for (k, (algo, codec)) in codecs.iter().enumerate() {
                    let m = measure(*codec, block, s.verify).map_err(|reason| {
                        EvalError::RoundTrip {
                            algo: algo.to_string(),
                            app: name.clone(),
                            block: ci * CHUNK_BLOCKS + bi,
                            reason,
                        }
                    })?;
                    t[k].add(&m);
                }
            }
            on_blocks((chunk.len() / block_bytes) as u64);
            Ok(t)
        })
        .try_reduce(
            || vec![Totals::default(); codecs.len()],
            |mut a, b| {
                a.iter_mut().zip(&b).for_each(|(x, y)| x.add(y));
                Ok(a)
            },
        )?;
    Ok(AppResult {
        file: name.clone(),
        class: app.entry.class.clone(),
        role: split.apps[i].role.to_string(),
        totals,
        file_bytes: file.len() as u64,
        lz4_file_bytes: lz4_file,
        zstd_file_bytes: zstd_file,
        eval_bytes: data.len() as u64,
        lz4_eval_bytes: lz4_eval,
        zstd_eval_bytes: zstd_eval,
        online: None,
    })
}

/// Whole-buffer LZ4 and zstd sizes in bytes (0 for an empty buffer).
fn general(data: &[u8], level: i32) -> (u64, Result<u64, EvalError>) {
    if data.is_empty() {
        return (0, Ok(0));
    }
    let (lz4, zstd) = rayon::join(
        || lz4_flex::block::compress(data).len() as u64,
        || {
            zstd::bulk::compress(data, level)
                .map(|v| v.len() as u64)
                .map_err(|e| EvalError::Compressor(format!("zstd: {e}")))
        },
    );
    (lz4, zstd)
}

/// LZ4 (lz4_flex block format) on each block alone, as a random-access
/// [`BlockCodec`]: a 1-bit flag, then the LZ4 block or the raw bytes.
/// Context only: what LZ4 gives at the same granularity.
#[derive(Clone, Debug)]
pub struct Lz4Block {
    block: usize,
}

impl Lz4Block {
    pub fn new(block: usize) -> Lz4Block {
        Lz4Block { block }
    }
}

impl BlockCodec for Lz4Block {
    fn name(&self) -> &str {
        "LZ4/block"
    }

    fn block_bytes(&self) -> usize {
        self.block
    }

    fn max_bits(&self) -> usize {
        1 + 8 * self.block
    }

    fn compress(&self, block: &[u8]) -> Compressed {
        let c = lz4_flex::block::compress(block);
        let mut w = VecBitWriter::new();
        if c.len() < block.len() {
            w.put(1, 1);
            w.put_bytes(&c);
        } else {
            w.put(0, 1);
            w.put_bytes(block);
        }
        w.finish()
    }

    fn decompress(&self, bits: &[u8], len: usize) -> Result<Vec<u8>, DecodeError> {
        let bad = |what: String| DecodeError::Invalid {
            codec: "LZ4/block",
            what,
            at: 0,
        };
        if len == 0 || len % 8 != 1 || bits.len() < len.div_ceil(8) {
            return Err(bad(format!("length {len} is not 1 + whole bytes")));
        }
        let payload: Vec<u8> = (0..len / 8)
            .map(|i| (bits[i] << 1) | (bits[i + 1] >> 7))
            .collect();
        if bits[0] >> 7 == 0 {
            if payload.len() != self.block {
                return Err(bad(format!("raw block of {} bytes", payload.len())));
            }
            return Ok(payload);
        }
        let d =
            lz4_flex::block::decompress(&payload, self.block).map_err(|e| bad(e.to_string()))?;
        if d.len() != self.block {
            return Err(bad(format!("decoded {} bytes", d.len())));
        }
        Ok(d)
    }
}

/// Ratios of a set of groups as a map (for tests and JSON; `None` for an
/// empty group).
pub fn ratio_table(e: &Evaluation) -> BTreeMap<String, Vec<Option<f64>>> {
    e.groups()
        .into_iter()
        .map(|g| (g.name, g.totals.iter().map(Totals::ratio).collect()))
        .collect()
}
