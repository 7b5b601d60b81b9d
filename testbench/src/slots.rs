//! Co-simulation of MPC units with programmable slots
//! (docs/hw/program-slots.md; docs/hw/cosim.md, "Units with programmable
//! slots").
//!
//! Each shard of a run has a *plan*: the image and epoch that code each of
//! its blocks ([`Segment`]s), and the configuration writes that load them
//! ([`CfgWrite`]: "before block n, write this word"), which the testbench
//! `tb/mpc_slots_tb.sv` issues on the units' `cfg_*` port while it holds
//! `in_valid` low. The golden model follows the plan: block k is coded (or
//! decoded) by `ProgrammedSet::new(set, image)` of the segment holding k,
//! the compressor's `out_epoch` must be that segment's epoch, and a
//! decompressor input whose `in_epoch` is not the active epoch must give
//! `out_error` and an all-zero block.
//!
//! Images: the reset value (nothing loaded; epoch 0), images trained on
//! corpus blocks ([`trained_image`]), random valid images of the unit's
//! form ([`random_image`]), and, for the stream-integrity check, random
//! words in every slot register ([`Plan::invalid_registers`]: no image;
//! only the stream protocol and the epochs are checked).
//!
//! A reset clears the units' registers; the testbench then writes again
//! every write the plan has for the blocks up to the next one it offers,
//! so a block's image never depends on where the resets fall.

use std::io::Write;
use std::path::{Path, PathBuf};

use golden::mpc::program::registers::{self, RegisterWrite};
use golden::mpc::program::{
    self as program, BaseClass, Form, OnlineOptions, ProgrammedSet, ReorderClass, Slot, SlotImage,
    SlotReorder, STRIDES,
};
use golden::mpc::{ByteRule, ModelSet, MpcCodec, BLOCK_BYTES, STREAM_BITS};

use crate::compare::{self, Expect, Fields};
use crate::records::{self, OutputError, SimOutput};
use crate::rng::Rng;
use crate::rtl::Params;
use crate::stream_unit::LeBus;
use crate::vectors::{self, CompVector, DecompVector, GenConfig, Tags};
use crate::verdict::{self, Diff, Judged, RunShape, Verdict};
use crate::Unit;

/// Bits of an epoch (`out_epoch`, `in_epoch`, `EPOCH`).
pub const EPOCH_WIDTH: usize = 8;

/// Slot problems.
#[derive(Debug, thiserror::Error)]
pub enum SlotsError {
    #[error("slot image {name}: {source}")]
    Image {
        name: String,
        #[source]
        source: program::ImageError,
    },
    #[error("slot image {name}: its register writes: {source}")]
    Registers {
        name: String,
        #[source]
        source: registers::RegisterError,
    },
    #[error(transparent)]
    Vectors(#[from] vectors::VectorError),
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("--slot-images: `{0}` is not an image kind (trained, random, random:N, directed, directed:N)")]
    Kind(String),
    #[error("--slot-images: `{0}`: the count must be a number from 1 to 256")]
    Count(String),
    #[error(
        "--slot-images: no image kind given (trained, random, random:N, directed, directed:N)"
    )]
    NoKinds,
    #[error("the shadow register values of a configuration: {0}")]
    Shadow(String),
}

/// The programmable slots of a pair of units (`params.json` key `slots`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlotUnit {
    /// Slots (K, at least 1).
    pub k: usize,
    pub form: Form,
}

impl SlotUnit {
    /// `H` of units with these slots on `set`: the header width with every
    /// slot loaded.
    pub fn header_bits(&self, set: &ModelSet) -> u32 {
        program::train::header_bits(set.id_count() + self.k)
    }

    /// A directory name for the work files of these units of `set`.
    pub fn dir_name(&self, set: &ModelSet) -> String {
        format!("{}-slots{}-{}", set.name, self.k, self.form.name)
    }
}

/// Kinds of valid images a run programs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImageKind {
    /// Trained ([`program::train_slots`]) on corpus blocks.
    Trained,
    /// Two random valid images of the unit's form ([`random_image`]).
    Random,
    /// This many random valid images (`random:N`), whose segments take
    /// directed blocks ([`directed_block`]) as directed images' do.
    Randoms(usize),
    /// This many directed images ([`directed_image`]; `directed`: 4,
    /// `directed:N`), each with blocks built from its slots' predictors
    /// ([`directed_block`]) in the segments it codes.
    Directed(usize),
}

/// Directed images of a bare `directed`.
pub const DIRECTED_IMAGES: usize = 4;

impl ImageKind {
    /// `trained,random:6,directed` (a comma-separated list; `random` and
    /// `directed` take an optional count `:N`, N at least 1).
    pub fn parse_list(s: &str) -> Result<Vec<ImageKind>, SlotsError> {
        let mut v = Vec::new();
        for w in s.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            let (name, count) = match w.split_once(':') {
                Some((n, c)) => {
                    let c = c
                        .trim()
                        .parse::<usize>()
                        .ok()
                        .filter(|&c| (1..=256).contains(&c))
                        .ok_or_else(|| SlotsError::Count(w.to_string()))?;
                    (n.trim(), Some(c))
                }
                None => (w, None),
            };
            let k = match (name, count) {
                ("trained", None) => ImageKind::Trained,
                ("random", None) => ImageKind::Random,
                ("random", Some(c)) => ImageKind::Randoms(c),
                ("directed", c) => ImageKind::Directed(c.unwrap_or(DIRECTED_IMAGES)),
                _ => return Err(SlotsError::Kind(w.to_string())),
            };
            if !v.contains(&k) {
                v.push(k);
            }
        }
        if v.is_empty() {
            return Err(SlotsError::NoKinds);
        }
        Ok(v)
    }
}

/// How a run with slots programs the units.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SlotOptions {
    pub images: Vec<ImageKind>,
    /// Blocks between two programmings of a shard (at least 1).
    pub reprogram_every: usize,
}

impl Default for SlotOptions {
    fn default() -> SlotOptions {
        SlotOptions {
            images: vec![ImageKind::Trained, ImageKind::Random],
            reprogram_every: 500,
        }
    }
}

/// What the slot registers hold in a segment.
#[derive(Clone)]
pub enum Programmed {
    /// A valid image (the reset value included) and its golden coder.
    Image {
        image: SlotImage,
        codec: std::sync::Arc<MpcCodec>,
    },
    /// Random words in every slot register: no image; only the stream
    /// protocol and the epochs are specified (docs/hw/program-slots.md
    /// section 6).
    Invalid,
    /// Register contents given word by word (a formal counterexample's
    /// configuration), valid for the hardware
    /// ([`registers::SlotRegisters::predictors`] accepts them), with the
    /// golden coder of the predictors they hold.
    Registers {
        writes: Vec<RegisterWrite>,
        codec: std::sync::Arc<MpcCodec>,
    },
}

/// One of a run's images.
#[derive(Clone)]
pub struct NamedImage {
    pub name: String,
    pub programmed: Programmed,
    /// The segments it codes take blocks built from its slots'
    /// predictors ([`directed_block`]) besides the run's own.
    pub directed: bool,
}

impl NamedImage {
    fn codec(&self) -> Option<&MpcCodec> {
        match &self.programmed {
            Programmed::Image { codec, .. } | Programmed::Registers { codec, .. } => Some(codec),
            Programmed::Invalid => None,
        }
    }
}

/// Blocks from `start` to the next segment's start are coded with image
/// `image` (an index into [`Plan::images`]) and epoch `epoch`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    pub start: usize,
    pub image: usize,
    pub epoch: u8,
    /// Decompressor inputs of this segment are coded with the image and
    /// epoch of this earlier segment (`None`: its own, with some inputs
    /// given a wrong epoch).
    pub coded_as: Option<usize>,
}

/// One configuration write, due once the driver has accepted `before`
/// blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CfgWrite {
    pub before: usize,
    pub addr: u16,
    pub value: u32,
}

/// The segments and writes of one shard.
#[derive(Clone, Debug, Default)]
pub struct ShardPlan {
    pub segments: Vec<Segment>,
    pub writes: Vec<CfgWrite>,
}

impl ShardPlan {
    /// The segment holding block `i` (shard-local).
    pub fn segment_of(&self, i: usize) -> usize {
        self.segments
            .partition_point(|s| s.start <= i)
            .saturating_sub(1)
    }

    /// Write the configuration file the testbench reads (`+cfg=`): one
    /// write per line, `before addr value` in hex.
    pub fn write_cfg(&self, path: &Path) -> Result<(), SlotsError> {
        let io = |source| SlotsError::Write {
            path: path.to_path_buf(),
            source,
        };
        let mut w = std::io::BufWriter::new(std::fs::File::create(path).map_err(io)?);
        for c in &self.writes {
            writeln!(w, "{:x} {:03x} {:08x}", c.before, c.addr, c.value).map_err(io)?;
        }
        w.flush().map_err(io)
    }
}

/// The images of a run and the plan of each shard.
#[derive(Clone)]
pub struct Plan {
    pub unit: SlotUnit,
    /// Image 0 is the reset value.
    pub images: Vec<NamedImage>,
    pub shards: Vec<ShardPlan>,
}

/// The writes that load a valid image with `epoch` (ending with `COMMIT`).
fn writes_of(
    set: &ModelSet,
    img: &NamedImage,
    epoch: u8,
) -> Result<Vec<RegisterWrite>, SlotsError> {
    match &img.programmed {
        Programmed::Image { image, .. } => {
            registers::image_writes(set, image, epoch).map_err(|source| SlotsError::Registers {
                name: img.name.clone(),
                source,
            })
        }
        Programmed::Registers { writes, .. } => Ok(writes.clone()),
        Programmed::Invalid => Ok(Vec::new()),
    }
}

/// Random words in every register of every slot, then `EPOCH` and
/// `COMMIT`.
fn invalid_writes(set: &ModelSet, unit: SlotUnit, epoch: u8, rng: &mut Rng) -> Vec<RegisterWrite> {
    let route = registers::route_word_count(unit.form).unwrap_or(0);
    let _ = set;
    let mut v = Vec::new();
    for s in 0..unit.k {
        // loaded (bit 0 set) in most slots, so that the words are used
        let flag = rng.next_u32() | u32::from(rng.chance(0.8));
        v.push(RegisterWrite {
            addr: registers::slot_flag(s),
            value: flag,
        });
        for w in 0..registers::RULES_WORDS {
            v.push(RegisterWrite {
                addr: registers::slot_rules(s, w),
                value: rng.next_u32(),
            });
        }
        for w in 0..route {
            v.push(RegisterWrite {
                addr: registers::slot_route(s, w),
                value: rng.next_u32(),
            });
        }
    }
    v.push(RegisterWrite {
        addr: registers::EPOCH,
        value: u32::from(epoch) | (rng.next_u32() & !0xff),
    });
    v.push(RegisterWrite {
        addr: registers::COMMIT,
        value: 1 | (rng.next_u32() & !1),
    });
    v
}

/// A named valid image with its golden coder.
pub fn named(set: &ModelSet, name: &str, image: SlotImage) -> Result<NamedImage, SlotsError> {
    let p = ProgrammedSet::new(set, &image).map_err(|source| SlotsError::Image {
        name: name.to_string(),
        source,
    })?;
    Ok(NamedImage {
        name: name.to_string(),
        programmed: Programmed::Image {
            image,
            codec: std::sync::Arc::new(p.fast_codec()),
        },
        directed: false,
    })
}

/// A random valid image of `unit`'s form for `set`: per slot (loaded with
/// probability 0.85) random stride rules within the form's depth bound and
/// shift range, and a random reorder of the form's class (masks of random
/// density, random column orders, a random library index); passed through
/// [`SlotImage::load`], so it is one the loader accepts.
pub fn random_image(
    set: &ModelSet,
    unit: SlotUnit,
    rng: &mut Rng,
) -> Result<SlotImage, SlotsError> {
    let form = unit.form;
    let mut image = SlotImage::empty(set, form, unit.k);
    for slot in image.slots.iter_mut() {
        if !rng.chance(0.85) {
            continue;
        }
        *slot = Some(random_slot(set, form, rng));
    }
    SlotImage::load(&image.to_bytes()).map_err(|source| SlotsError::Image {
        name: "random".to_string(),
        source,
    })
}

fn random_slot(set: &ModelSet, form: Form, rng: &mut Rng) -> Slot {
    let mut rules = [ByteRule::Root; BLOCK_BYTES];
    let mut depth = [0usize; BLOCK_BYTES];
    let root_p = rng.unit() * 0.5;
    for i in 0..BLOCK_BYTES {
        if rng.chance(root_p) {
            continue;
        }
        let max = form.max_shift.unsigned_abs() as u64;
        let shift = (rng.below(2 * max + 1) as i64 - max as i64) as i8;
        let base = match form.base {
            BaseClass::Strides => {
                let ok: Vec<usize> = STRIDES
                    .iter()
                    .filter_map(|&s| i.checked_sub(s as usize))
                    .filter(|&b| depth[b] < form.max_depth)
                    .collect();
                if ok.is_empty() {
                    continue;
                }
                ok[rng.below(ok.len() as u64) as usize]
            }
            BaseClass::Any => {
                let ok: Vec<usize> = (0..i).filter(|&b| depth[b] < form.max_depth).collect();
                if ok.is_empty() {
                    continue;
                }
                ok[rng.below(ok.len() as u64) as usize]
            }
        };
        depth[i] = depth[base] + 1;
        rules[i] = ByteRule::Base {
            base: base as u8,
            shift,
        };
    }
    let mut mask = [0u8; STREAM_BITS / 8];
    let density = rng.unit();
    for m in mask.iter_mut() {
        for b in 0..8 {
            if rng.chance(density) {
                *m |= 1 << b;
            }
        }
    }
    let mut cols: [u8; BLOCK_BYTES] = std::array::from_fn(|c| c as u8);
    rng.shuffle(&mut cols);
    let reorder = match form.reorder {
        ReorderClass::Any => {
            let mut r: [u8; STREAM_BITS] = std::array::from_fn(|o| o as u8);
            rng.shuffle(&mut r);
            SlotReorder::Any(Box::new(r))
        }
        ReorderClass::Partition => SlotReorder::Partition(mask),
        ReorderClass::Columns => SlotReorder::Columns(cols),
        ReorderClass::ColumnsPartition => SlotReorder::ColumnsPartition(cols, mask),
        ReorderClass::Library => {
            SlotReorder::Library(rng.below(set.predictors.len() as u64 + 1) as u8)
        }
    };
    Slot { rules, reorder }
}

/// Directed image `d` of `unit`'s form for `set`: every slot loaded; in
/// slot `j`, byte `i` takes shift code `(a i + d + 5j) mod (2m + 1) - m`
/// (`m` the form's largest shift; `a` is 1 for the first `2m + 1` images
/// and the next integer coprime with `2m + 1` for each further `2m + 1`
/// ([`directed_multiplier`]): over each `2m + 1` images every byte takes
/// every shift code, in another relation to its neighbours' codes and
/// candidates) and the `(i + d + j + 2r)`-th of the stride candidates the
/// form's depth bound allows (`r = d / (2m + 1)`, the round; a root only
/// where none does); the reorder
/// is random (masks of density one half, a random column order, library
/// index `(d + j) mod (hard-wired + 1)`), so that the permutation
/// networks' switches take both settings. Passed through
/// [`SlotImage::load`].
pub fn directed_image(
    set: &ModelSet,
    unit: SlotUnit,
    d: usize,
    rng: &mut Rng,
) -> Result<SlotImage, SlotsError> {
    let form = unit.form;
    let mut image = SlotImage::empty(set, form, unit.k);
    for (j, slot) in image.slots.iter_mut().enumerate() {
        let mut rules = [ByteRule::Root; BLOCK_BYTES];
        let mut depth = [0usize; BLOCK_BYTES];
        let max = form.max_shift.unsigned_abs() as usize;
        let a = directed_multiplier(d, 2 * max + 1);
        // later rounds also move the candidates against the shift codes
        let turn = 2 * (d / (2 * max + 1));
        for i in 0..BLOCK_BYTES {
            let shift = ((a * i + d + 5 * j) % (2 * max + 1)) as i64 - max as i64;
            let ok: Vec<usize> = match form.base {
                BaseClass::Strides => STRIDES
                    .iter()
                    .filter_map(|&s| i.checked_sub(s as usize))
                    .filter(|&b| depth[b] < form.max_depth)
                    .collect(),
                BaseClass::Any => (0..i).filter(|&b| depth[b] < form.max_depth).collect(),
            };
            if ok.is_empty() {
                continue;
            }
            let base = ok[(i + d + j + turn) % ok.len()];
            depth[i] = depth[base] + 1;
            rules[i] = ByteRule::Base {
                base: base as u8,
                shift: shift as i8,
            };
        }
        let mut mask = [0u8; STREAM_BITS / 8];
        for m in mask.iter_mut() {
            *m = rng.next_u32() as u8;
        }
        let mut cols: [u8; BLOCK_BYTES] = std::array::from_fn(|c| c as u8);
        rng.shuffle(&mut cols);
        let reorder = match form.reorder {
            ReorderClass::Any => {
                let mut r: [u8; STREAM_BITS] = std::array::from_fn(|o| o as u8);
                rng.shuffle(&mut r);
                SlotReorder::Any(Box::new(r))
            }
            ReorderClass::Partition => SlotReorder::Partition(mask),
            ReorderClass::Columns => SlotReorder::Columns(cols),
            ReorderClass::ColumnsPartition => SlotReorder::ColumnsPartition(cols, mask),
            ReorderClass::Library => {
                SlotReorder::Library(((d + j) % (set.predictors.len() + 1)) as u8)
            }
        };
        *slot = Some(Slot { rules, reorder });
    }
    SlotImage::load(&image.to_bytes()).map_err(|source| SlotsError::Image {
        name: format!("directed {}", d + 1),
        source,
    })
}

/// The multiplier of the byte index in the shift codes of directed image
/// `d` ([`directed_image`]) of a form with `codes` shift codes: 1 for
/// images `0..codes`, then, for each further `codes` images, the next
/// integer coprime with `codes` (2, 4, 7, 8, ... for 15), so that each
/// round of `codes` images still gives every byte every code while the
/// codes of neighbouring bytes (and their candidates) meet in other
/// combinations.
pub fn directed_multiplier(d: usize, codes: usize) -> usize {
    fn gcd(a: usize, b: usize) -> usize {
        if b == 0 {
            a
        } else {
            gcd(b, a % b)
        }
    }
    let round = d / codes.max(1);
    (1..)
        .filter(|&a| gcd(a, codes) == 1)
        .nth(round)
        .unwrap_or(1)
}

/// A block that `slot`'s predictor (of a set with hard-wired predictors
/// `hard_wired`) codes with few non-zero residues, so that the slot tends
/// to win the selection: random root bytes (zero one time in four),
/// residue zero elsewhere but at about one byte in eight (a random
/// non-zero byte), restored through the predictor
/// ([`golden::mpc::transform::restore`]).
pub fn directed_block(
    slot: &Slot,
    hard_wired: &[golden::mpc::Predictor],
    rng: &mut Rng,
) -> [u8; BLOCK_BYTES] {
    directed_block_of_predictor(&slot.predictor("directed", hard_wired), rng)
}

/// [`directed_block`] of predictor `p`.
pub fn directed_block_of_predictor(p: &golden::mpc::Predictor, rng: &mut Rng) -> [u8; BLOCK_BYTES] {
    let mut res = [0u8; BLOCK_BYTES];
    for (i, r) in res.iter_mut().enumerate() {
        let root = matches!(p.bytes[i], ByteRule::Root);
        if (root && !rng.chance(0.25)) || (!root && rng.chance(0.125)) {
            *r = 1 + rng.below(255) as u8;
        }
    }
    golden::mpc::transform::restore(&res, p)
}

/// A directed block ([`directed_block`]) of one of `image`'s loaded slots,
/// drawn at random, with the slot's index; `None` when none is loaded.
pub fn directed_block_of(
    set: &ModelSet,
    image: &NamedImage,
    rng: &mut Rng,
) -> Option<([u8; BLOCK_BYTES], usize)> {
    let Programmed::Image { image, .. } = &image.programmed else {
        return None;
    };
    let loaded: Vec<(usize, &Slot)> = image
        .slots
        .iter()
        .enumerate()
        .filter_map(|(j, s)| s.as_ref().map(|s| (j, s)))
        .collect();
    if loaded.is_empty() {
        return None;
    }
    let (j, slot) = loaded[rng.below(loaded.len() as u64) as usize];
    Some((directed_block(slot, &set.predictors, rng), j))
}

/// Of the blocks a directed image codes, the share replaced by its
/// directed blocks.
pub const DIRECTED_SHARE: f64 = 0.6;

/// An image trained ([`program::train_slots`], deterministic) on the corpus
/// blocks among `count` compressor vectors of the seed (on every one of
/// them without a corpus).
pub fn trained_image(
    set: &ModelSet,
    unit: SlotUnit,
    gen: &GenConfig,
) -> Result<SlotImage, SlotsError> {
    let mut tags = Tags::new();
    let v = vectors::compressor_vectors(set, gen, &mut tags)?;
    let corpus: Vec<[u8; BLOCK_BYTES]> = v
        .iter()
        .filter(|c| tags.name(c.tag).starts_with("corpus/"))
        .map(|c| c.block)
        .collect();
    let sample: Vec<[u8; BLOCK_BYTES]> = if corpus.is_empty() {
        v.iter().map(|c| c.block).collect()
    } else {
        corpus
    };
    program::train_slots(set, &sample, &OnlineOptions::new(unit.form, unit.k)).map_err(|source| {
        SlotsError::Image {
            name: "trained".to_string(),
            source,
        }
    })
}

/// Blocks of corpus vectors the trained image is trained on.
pub const TRAIN_VECTORS: usize = 4096;

impl Plan {
    /// The images of `opts` for `set` (after the reset value), in the order
    /// a shard cycles through them: those of each kind in the order given
    /// (by default the trained image, then two random ones).
    pub fn images(
        set: &ModelSet,
        unit: SlotUnit,
        opts: &SlotOptions,
        seed: u64,
        corpus: Option<&Path>,
    ) -> Result<Vec<NamedImage>, SlotsError> {
        let mut v = vec![named(
            set,
            "reset value",
            SlotImage::empty(set, unit.form, unit.k),
        )?];
        let mut rng = Rng::fork(seed, 300);
        for kind in &opts.images {
            match kind {
                ImageKind::Trained => {
                    let gen = GenConfig {
                        blocks: TRAIN_VECTORS,
                        seed: Rng::fork(seed, 301).next_u64(),
                        corpus: corpus.map(Path::to_path_buf),
                    };
                    v.push(named(set, "trained", trained_image(set, unit, &gen)?)?);
                }
                ImageKind::Random | ImageKind::Randoms(_) => {
                    let n = match kind {
                        ImageKind::Randoms(n) => *n,
                        _ => 2,
                    };
                    for j in 1..=n {
                        let img = random_image(set, unit, &mut rng)?;
                        let mut named = named(set, &format!("random {j}"), img)?;
                        // `random:N` images take directed blocks too: their
                        // roots and depths vary where directed images' do not
                        named.directed = matches!(kind, ImageKind::Randoms(_));
                        v.push(named);
                    }
                }
                ImageKind::Directed(n) => {
                    let mut drng = Rng::fork(seed, 302);
                    for d in 0..*n {
                        let img = directed_image(set, unit, d, &mut drng)?;
                        let mut named = named(set, &format!("directed {}", d + 1), img)?;
                        named.directed = true;
                        v.push(named);
                    }
                }
            }
        }
        Ok(v)
    }

    /// The plan of a run whose shards have `lens` blocks: each shard codes
    /// its first blocks with the reset value (shards of odd number program
    /// an image before their first block instead), then programs the
    /// images in turn, one every `every` blocks, each with the next epoch
    /// (1, 2, ..., 255, 1, ...).
    pub fn cycling(
        set: &ModelSet,
        unit: SlotUnit,
        images: Vec<NamedImage>,
        lens: &[usize],
        every: usize,
    ) -> Result<Plan, SlotsError> {
        let every = every.max(1);
        let mut shards = Vec::new();
        for (k, &n) in lens.iter().enumerate() {
            let mut p = ShardPlan::default();
            let mut epoch = 0u8;
            let mut start = if k % 2 == 1 {
                0
            } else {
                p.segments.push(Segment {
                    start: 0,
                    image: 0,
                    epoch: 0,
                    coded_as: None,
                });
                (every / 4).clamp(1, n.div_ceil(8).max(1))
            };
            let mut next = 1 + k % (images.len() - 1).max(1);
            while start < n && images.len() > 1 {
                epoch = if epoch == 255 { 1 } else { epoch + 1 };
                p.push(set, start, next, epoch, &images, None)?;
                next = 1 + next % (images.len() - 1);
                start += every;
            }
            if p.segments.is_empty() {
                p.segments.push(Segment {
                    start: 0,
                    image: 0,
                    epoch: 0,
                    coded_as: None,
                });
            }
            shards.push(p);
        }
        Ok(Plan {
            unit,
            images,
            shards,
        })
    }
}

impl Plan {
    /// The epoch rule's plan (decompressor): each shard programs image 1
    /// of `images` with epoch 1 before its first block and image 2 with
    /// epoch 2 halfway; the inputs of the second half are blocks coded
    /// with image 1 and given with epoch 1, so every one of them must be
    /// refused (`out_error`), never decoded with image 2.
    pub fn epoch_rule(
        set: &ModelSet,
        unit: SlotUnit,
        images: Vec<NamedImage>,
        lens: &[usize],
    ) -> Result<Plan, SlotsError> {
        let mut shards = Vec::new();
        for &n in lens {
            let mut p = ShardPlan::default();
            p.push(set, 0, 1, 1, &images, None)?;
            p.push(set, n / 2, 2, 2, &images, Some(0))?;
            shards.push(p);
        }
        Ok(Plan {
            unit,
            images,
            shards,
        })
    }

    /// The stream-integrity plan: each shard starts at the reset value,
    /// then random words go into every slot register twice (epochs 1 and
    /// 2; only the protocol and the epochs are checked), then a valid
    /// image (`images[1]`, epoch 3) is programmed and checked in full.
    /// The invalid contents are image `images.len()` of the plan.
    pub fn invalid_registers(
        set: &ModelSet,
        unit: SlotUnit,
        mut images: Vec<NamedImage>,
        lens: &[usize],
        seed: u64,
    ) -> Result<Plan, SlotsError> {
        let invalid = images.len();
        images.push(NamedImage {
            name: "random register words".to_string(),
            programmed: Programmed::Invalid,
            directed: false,
        });
        let mut rng = Rng::fork(seed, 600);
        let mut shards = Vec::new();
        for &n in lens {
            let mut p = ShardPlan::default();
            p.segments.push(Segment {
                start: 0,
                image: 0,
                epoch: 0,
                coded_as: None,
            });
            p.push_invalid(set, unit, n / 8, invalid, 1, &mut rng);
            p.push_invalid(set, unit, 3 * n / 8, invalid, 2, &mut rng);
            p.push(set, 5 * n / 8, 1, 3, &images, None)?;
            shards.push(p);
        }
        Ok(Plan {
            unit,
            images,
            shards,
        })
    }
}

impl ShardPlan {
    /// Program `images[image]` with `epoch` before block `start`.
    pub fn push(
        &mut self,
        set: &ModelSet,
        start: usize,
        image: usize,
        epoch: u8,
        images: &[NamedImage],
        coded_as: Option<usize>,
    ) -> Result<(), SlotsError> {
        let writes = writes_of(set, &images[image], epoch)?;
        self.push_writes(writes, start, image, epoch, coded_as);
        Ok(())
    }

    /// Random words in every slot register with `epoch` before block
    /// `start` ([`Programmed::Invalid`] image `image`).
    pub fn push_invalid(
        &mut self,
        set: &ModelSet,
        unit: SlotUnit,
        start: usize,
        image: usize,
        epoch: u8,
        rng: &mut Rng,
    ) {
        let writes = invalid_writes(set, unit, epoch, rng);
        self.push_writes(writes, start, image, epoch, None);
    }

    /// `writes` before block `start`, and the segment they open.
    fn push_writes(
        &mut self,
        writes: Vec<RegisterWrite>,
        start: usize,
        image: usize,
        epoch: u8,
        coded_as: Option<usize>,
    ) {
        for w in writes {
            self.writes.push(CfgWrite {
                before: start,
                addr: w.addr,
                value: w.value,
            });
        }
        self.segments.push(Segment {
            start,
            image,
            epoch,
            coded_as,
        });
    }
}

// ---- formal views and counterexamples of mutants -------------------------------

/// The shadow configuration registers of units with these slots, as the
/// generator names them (`hdl::mpc::slots::ConfigBlock`):
/// `cfg_shadow_epoch` and, per slot `j`, `cfg_shadow_s<j>_flag`,
/// `cfg_shadow_s<j>_rules` (rule byte `i` at bits `[7i+6:7i]`: the
/// candidate above `k + 7`) and `cfg_shadow_s<j>_route`. The combinational
/// views of a mutant take them as free inputs: every active register
/// (`cfg_active_*`, the decompressor's model IDs and header flags of the
/// loaded slots among them) loads a function of them, only while no block
/// is in flight, so in the view, where registers pass their next value
/// through, the active image is the shadow one and every derived register
/// agrees with it.
pub fn configuration_registers(unit: SlotUnit) -> Vec<String> {
    let mut v = vec!["cfg_shadow_epoch".to_string()];
    for j in 0..unit.k {
        for what in ["flag", "rules", "route"] {
            v.push(format!("cfg_shadow_s{j}_{what}"));
        }
    }
    v
}

/// Whether the active registers of view `m` (wires there) hold register
/// contents the hardware's behaviour is specified for (docs/hw/program-slots.md
/// section 6; [`registers_codec`] accepts them): in every loaded slot,
/// every rule byte has `k + 7 <= 14` and a candidate 0 (root) or one of
/// 1..=5 whose stride does not reach before byte 0, no base chain is
/// longer than the form's depth bound (the decompressor restores that many
/// levels), and a library index is at most the number of hard-wired
/// predictors. An unloaded slot may hold anything.
pub fn valid_configuration(
    m: &mut hdl::ir::Module,
    unit: SlotUnit,
    hard_wired: usize,
) -> Result<hdl::ir::Expr, hdl::ir::IrError> {
    use hdl::ir::Expr;
    let sig = |m: &hdl::ir::Module, name: &str| {
        m.signal(name)
            .map(|s| s.expr())
            .ok_or_else(|| hdl::ir::IrError::Mutation {
                detail: format!("the view has no `{name}`"),
            })
    };
    let mut all = Expr::bool(true);
    for j in 0..unit.k {
        let flag = sig(m, &format!("cfg_active_s{j}_flag"))?;
        let rules = sig(m, &format!("cfg_active_s{j}_rules"))?;
        let mut ok = Expr::bool(true);
        for i in 0..BLOCK_BYTES as u32 {
            let code = rules.slice(7 * i + 3, 7 * i)?;
            let cand = rules.slice(7 * i + 6, 7 * i + 4)?;
            ok = ok.and(&code.cmp_le(&Expr::constant(14, 4)?)?)?;
            // the largest candidate whose stride reaches no further back
            // than byte 0
            let reach = STRIDES.iter().take_while(|&&st| st as u32 <= i).count() as u128;
            ok = ok.and(&cand.cmp_le(&Expr::constant(reach, 3)?)?)?;
        }
        let name = format!("valid_s{j}_depth");
        ok = ok.and(&depth_within(m, &name, &rules, unit.form.max_depth)?)?;
        if unit.form.reorder == ReorderClass::Library {
            let route = sig(m, &format!("cfg_active_s{j}_route"))?;
            let last = Expr::constant(hard_wired as u128, route.width())?;
            ok = ok.and(&route.cmp_le(&last)?)?;
        }
        all = all.and(&flag.not().or(&ok)?)?;
    }
    Ok(all)
}

/// Whether no base chain of the rules `rules` (rule byte `i` at bits
/// `[7i+6:7i]`, candidate above `k + 7`) is longer than `max` edges: byte
/// `i` has a chain of at most `d` edges when it is a root or its base
/// (`i - s`, `s` the stride of its candidate) has one of at most `d - 1`.
/// Candidates past 5 or reaching before byte 0 count as no chain at all
/// (other conditions refuse them). The bounds per byte of each `d` are
/// wires `<name><d>` of `m` (bit `i`: byte `i`), so the condition stays
/// linear in `max`.
fn depth_within(
    m: &mut hdl::ir::Module,
    name: &str,
    rules: &hdl::ir::Expr,
    max: usize,
) -> Result<hdl::ir::Expr, hdl::ir::IrError> {
    use hdl::ir::Expr;
    let cand = |i: usize| rules.slice(7 * i as u32 + 6, 7 * i as u32 + 4);
    let level = |m: &mut hdl::ir::Module, d: usize, bits: Vec<Expr>| {
        let w = m.wire(&format!("{name}{d}"), BLOCK_BYTES as u32)?;
        m.assign(&w, Expr::concat(bits.into_iter().rev())?)?;
        (0..BLOCK_BYTES as u32)
            .map(|i| w.expr().bit(i))
            .collect::<Result<Vec<Expr>, _>>()
    };
    let root: Vec<Expr> = (0..BLOCK_BYTES)
        .map(|i| cand(i)?.cmp_eq(&Expr::constant(0, 3)?))
        .collect::<Result<_, _>>()?;
    // within[i]: byte i's chain has at most d edges, for d = 0, 1, ...
    let mut within = level(m, 0, root.clone())?;
    for d in 1..=max.min(BLOCK_BYTES) {
        let mut next = Vec::with_capacity(BLOCK_BYTES);
        for (i, r) in root.iter().enumerate() {
            let mut w = r.clone();
            for (c, &s) in STRIDES.iter().enumerate() {
                if let Some(b) = i.checked_sub(s as usize) {
                    let is_c = cand(i)?.cmp_eq(&Expr::constant(c as u128 + 1, 3)?)?;
                    w = w.or(&is_c.and(&within[b])?)?;
                }
            }
            next.push(w);
        }
        within = level(m, d, next)?;
    }
    within
        .iter()
        .try_fold(Expr::bool(true), |acc, w| acc.and(w))
}

/// The register writes that give the shadow (then active) registers the
/// values of `ports` (a counterexample's inputs, bits least significant first;
/// missing bits 0): `EPOCH`, every slot's `SLOT_FLAG`, `SLOT_RULES` and
/// `SLOT_ROUTE` words, `COMMIT`; with the epoch.
pub fn configuration_writes(
    unit: SlotUnit,
    hard_wired: usize,
    ports: &std::collections::BTreeMap<String, Vec<bool>>,
) -> (Vec<RegisterWrite>, u8) {
    let word = |name: &str, lo: usize, width: usize| -> u32 {
        let v = ports.get(name);
        (0..width).fold(0u32, |acc, b| {
            let bit = v.and_then(|v| v.get(lo + b)).copied().unwrap_or(false);
            acc | (u32::from(bit) << b)
        })
    };
    let epoch = word("cfg_shadow_epoch", 0, EPOCH_WIDTH) as u8;
    let mut w = vec![RegisterWrite {
        addr: registers::EPOCH,
        value: u32::from(epoch),
    }];
    let route_bits = registers::route_bits(unit.form, hard_wired).unwrap_or(0);
    for j in 0..unit.k {
        w.push(RegisterWrite {
            addr: registers::slot_flag(j),
            value: word(&format!("cfg_shadow_s{j}_flag"), 0, 1),
        });
        let rules = format!("cfg_shadow_s{j}_rules");
        for r in 0..registers::RULES_WORDS {
            let value = (0..4).fold(0u32, |acc, b| {
                acc | (word(&rules, 7 * (4 * r + b), 7) << (8 * b))
            });
            w.push(RegisterWrite {
                addr: registers::slot_rules(j, r),
                value,
            });
        }
        let route = format!("cfg_shadow_s{j}_route");
        for r in 0..route_bits.div_ceil(32) {
            let width = (route_bits - 32 * r).min(32);
            w.push(RegisterWrite {
                addr: registers::slot_route(j, r),
                value: word(&route, 32 * r, width),
            });
        }
    }
    w.push(RegisterWrite {
        addr: registers::COMMIT,
        value: 1,
    });
    (w, epoch)
}

/// The golden coder of register contents: `set`'s hard-wired predictors
/// and the loaded slots' predictors after them; refused (with why) when
/// the hardware's behaviour is not specified for them: a rule or library
/// index no image gives ([`registers::SlotRegisters::predictors`]) or a
/// base chain longer than the form's depth bound.
pub fn registers_codec(
    set: &ModelSet,
    unit: SlotUnit,
    writes: &[RegisterWrite],
) -> Result<MpcCodec, String> {
    registers_coder(set, unit, writes).map(|(c, _)| c)
}

/// [`registers_codec`] and the predictors of the loaded slots.
fn registers_coder(
    set: &ModelSet,
    unit: SlotUnit,
    writes: &[RegisterWrite],
) -> Result<(MpcCodec, Vec<golden::mpc::Predictor>), String> {
    let (regs, _) =
        registers::SlotRegisters::from_writes(unit.form, unit.k, set.predictors.len(), writes)
            .map_err(|e| e.to_string())?;
    let preds: Vec<golden::mpc::Predictor> = regs
        .predictors(set)
        .map_err(|e| e.to_string())?
        .into_iter()
        .flatten()
        .collect();
    // a chain deeper than the form's bound is not restored by the
    // decompressor (docs/hw/program-slots.md section 6): `predictors`
    // refuses it; checked again here, with the cycle case, for the message
    for p in &preds {
        match program::rules_depth(&p.bytes) {
            Ok(d) if d <= unit.form.max_depth => {}
            Ok(d) => {
                return Err(format!(
                    "{} depth: a base chain of {d} is more than the {} of form {}",
                    p.name, unit.form.max_depth, unit.form.name
                ))
            }
            Err(byte) => return Err(format!("{} byte {byte}: its base chain is a cycle", p.name)),
        }
    }
    let mut expanded = set.clone();
    expanded.predictors.extend(preds.iter().cloned());
    Ok((MpcCodec::new(&expanded), preds))
}

/// Configurations the views of a mutant are compared at with their
/// configuration fixed ([`crate::equiv::pinned_counterexamples`]): two
/// directed images ([`directed_image`] 0 and 7, every slot loaded, the
/// stride candidates and shift codes spread over the bytes), a random
/// valid image, two images of deep chains ([`deep_rules`]: stride 1, and
/// the strides in turn) and one per offset of stride-1 chains between
/// roots ([`chain_rules`]: every byte at every position of a chain), drawn
/// with `seed`, as the shadow registers' values
/// ([`configuration_registers`]), epoch 1.
pub fn pinned_configurations(
    set: &ModelSet,
    unit: SlotUnit,
    seed: u64,
) -> Result<Vec<std::collections::BTreeMap<String, hdl::ir::Bits>>, SlotsError> {
    let mut rng = Rng::fork(seed, 900);
    let chains = unit.form.max_depth + 1;
    let mut images = vec![
        directed_image(set, unit, 0, &mut rng)?,
        directed_image(set, unit, 7, &mut rng)?,
        random_image(set, unit, &mut rng)?,
    ];
    for _ in 0..2 + chains {
        images.push(random_image(set, unit, &mut rng)?);
    }
    images
        .iter()
        .enumerate()
        .map(|(n, image)| {
            let regs_err = |source| SlotsError::Registers {
                name: "pinned configuration".to_string(),
                source,
            };
            let writes = registers::image_writes(set, image, 1).map_err(regs_err)?;
            let (mut regs, _) = registers::SlotRegisters::from_writes(
                unit.form,
                unit.k,
                set.predictors.len(),
                &writes,
            )
            .map_err(regs_err)?;
            if n >= 3 {
                // the random image's reorder, deep chains in every slot
                for r in regs.slots.iter_mut() {
                    r.loaded = true;
                    r.rules = match n {
                        3 | 4 => deep_rules(unit.form.max_depth, n == 4),
                        _ => chain_rules(unit.form.max_depth, n - 5),
                    };
                }
            }
            shadow_values(&regs, unit)
        })
        .collect()
}

/// Rule bytes (candidate, `k + 7` = 7) of stride-1 chains of `max` edges
/// between roots: byte `i` is a root where `(i + offset) mod (max + 1)` is
/// 0 (and byte 0), else its base is byte `i - 1`.
pub fn chain_rules(max: usize, offset: usize) -> [u8; BLOCK_BYTES] {
    std::array::from_fn(|i| {
        if i == 0 || (i + offset).is_multiple_of(max + 1) {
            0x07
        } else {
            0x17
        }
    })
}

/// Rule bytes (candidate, `k + 7` = 7) whose base chains are as long as
/// `max` allows: byte `i` takes the first candidate, in the order 1..=5
/// (or, with `turn`, from `i mod 5 + 1` on, wrapping), whose base has a
/// chain shorter than `max`, else it is a root. So every restoration
/// level has bytes whose value is final there and bytes it passes on.
pub fn deep_rules(max: usize, turn: bool) -> [u8; BLOCK_BYTES] {
    let mut chains = [0usize; BLOCK_BYTES];
    let mut rules = [0x07u8; BLOCK_BYTES];
    for i in 0..BLOCK_BYTES {
        let first = if turn { i % STRIDES.len() } else { 0 };
        let pick = (0..STRIDES.len())
            .map(|t| (first + t) % STRIDES.len())
            .find(|&c| (STRIDES[c] as usize) <= i && chains[i - STRIDES[c] as usize] < max);
        if let Some(c) = pick {
            chains[i] = chains[i - STRIDES[c] as usize] + 1;
            rules[i] = ((c as u8 + 1) << 4) | 7;
        }
    }
    rules
}

/// The shadow registers' values ([`configuration_registers`]) that hold
/// `regs`.
pub fn shadow_values(
    regs: &registers::SlotRegisters,
    unit: SlotUnit,
) -> Result<std::collections::BTreeMap<String, hdl::ir::Bits>, SlotsError> {
    let bits = |v: &[bool]| {
        let mut words = vec![0u64; v.len().div_ceil(64)];
        for (i, &b) in v.iter().enumerate() {
            words[i / 64] |= u64::from(b) << (i % 64);
        }
        hdl::ir::Bits::from_words(&words, v.len() as u32)
            .map_err(|e| SlotsError::Shadow(e.to_string()))
    };
    let of = |v: u64, w: usize| (0..w).map(|b| v >> b & 1 == 1).collect::<Vec<bool>>();
    let route_bits = registers::route_bits(unit.form, regs.hard_wired).unwrap_or(0);
    let mut out = std::collections::BTreeMap::new();
    out.insert(
        "cfg_shadow_epoch".to_string(),
        bits(&of(u64::from(regs.epoch), EPOCH_WIDTH))?,
    );
    for (j, r) in regs.slots.iter().enumerate().take(unit.k) {
        out.insert(format!("cfg_shadow_s{j}_flag"), bits(&[r.loaded])?);
        let rules: Vec<bool> = r.rules.iter().flat_map(|&x| of(u64::from(x), 7)).collect();
        out.insert(format!("cfg_shadow_s{j}_rules"), bits(&rules)?);
        if route_bits > 0 {
            let route: Vec<bool> = (0..route_bits)
                .map(|b| r.route.get(b / 32).is_some_and(|w| w >> (b % 32) & 1 == 1))
                .collect();
            out.insert(format!("cfg_shadow_s{j}_route"), bits(&route)?);
        }
    }
    Ok(out)
}

/// A one-step view's input values with the active configuration
/// registers (`cfg_active_epoch`, `cfg_active_s<j>_flag`, `_rules`,
/// `_route`) named as the shadow ones they copy (`cfg_shadow_*`), as
/// [`configuration_writes`] reads them, and the data inputs (`in_*`);
/// the other registers are left out.
pub fn shadow_of_active(
    ports: &std::collections::BTreeMap<String, Vec<bool>>,
) -> std::collections::BTreeMap<String, Vec<bool>> {
    let mut out = std::collections::BTreeMap::new();
    for (name, v) in ports {
        if let Some(rest) = name.strip_prefix("cfg_active_") {
            let copied = rest == "epoch"
                || rest.strip_prefix('s').is_some_and(|r| {
                    r.split_once('_').is_some_and(|(j, what)| {
                        j.parse::<usize>().is_ok() && matches!(what, "flag" | "rules" | "route")
                    })
                });
            if copied {
                out.insert(format!("cfg_shadow_{rest}"), v.clone());
            }
        } else if name.starts_with("in_") {
            out.insert(name.clone(), v.clone());
        }
    }
    out
}

/// Directed blocks ([`directed_block`]) run after each counterexample,
/// under its configuration.
pub const COUNTEREXAMPLE_DIRECTED: usize = 48;

/// A run of counterexamples: for each of `cexes`, its configuration
/// (programmed before its vectors, [`configuration_writes`]), then a
/// vector of its data inputs (`in_block`; `in_bits`, `in_len`,
/// `in_epoch`; `width` the decompressor's `W`) and
/// [`COUNTEREXAMPLE_DIRECTED`] directed blocks of the slots it loads
/// (coded, for the decompressor). One shard. A configuration the hardware's
/// behaviour is not specified for is refused with its index and why.
pub fn counterexample_run(
    unit: Unit,
    set: &ModelSet,
    slots: SlotUnit,
    cexes: &[std::collections::BTreeMap<String, Vec<bool>>],
    width: u32,
    tags: &mut Tags,
) -> Result<(Plan, SlotVectors, Vec<SlotExpect>), (usize, String)> {
    let bus = |ports: &std::collections::BTreeMap<String, Vec<bool>>, names: &[(&str, usize)]| {
        let mut b = LeBus::new();
        for &(name, w) in names {
            let v = ports.get(name);
            for i in 0..w {
                b.put_bit(v.and_then(|v| v.get(i)).copied().unwrap_or(false));
            }
        }
        b
    };
    let tag = tags.id("counterexample");
    let empty = named(
        set,
        "reset value",
        SlotImage::empty(set, slots.form, slots.k),
    )
    .map_err(|e| (0, e.to_string()))?;
    let mut images = vec![empty];
    let mut shard = ShardPlan::default();
    let mut comp = Vec::new();
    let mut decomp = Vec::new();
    let mut expected = Vec::new();
    let directed_tag = tags.id("counterexample/directed");
    let mut rng = Rng::new(0x6365_7820);
    for (i, ports) in cexes.iter().enumerate() {
        let (writes, epoch) = configuration_writes(slots, set.predictors.len(), ports);
        let (codec, preds) = registers_coder(set, slots, &writes).map_err(|why| (i, why))?;
        let start = expected.len();
        // the counterexample's own data, then directed blocks of its
        // configuration's slots
        let mut blocks: Vec<Option<[u8; BLOCK_BYTES]>> = vec![None];
        if !preds.is_empty() {
            for _ in 0..COUNTEREXAMPLE_DIRECTED {
                let p = &preds[rng.below(preds.len() as u64) as usize];
                blocks.push(Some(directed_block_of_predictor(p, &mut rng)));
            }
        }
        for own in blocks {
            let e = match unit {
                Unit::Decompressor => {
                    let (v, given) = match own {
                        None => {
                            let w = width as usize;
                            let b = bus(
                                ports,
                                &[
                                    ("in_bits", w),
                                    ("in_len", vectors::LEN_WIDTH as usize),
                                    ("in_epoch", EPOCH_WIDTH),
                                ],
                            );
                            let mut bits = [0u8; golden::mpc::MAX_BLOCK_BYTES];
                            let la = b.left_aligned(0, w);
                            bits[..la.len()].copy_from_slice(&la);
                            let v = DecompVector {
                                bits,
                                len: b.uint(w, vectors::LEN_WIDTH as usize) as u16,
                                tag,
                            };
                            (
                                v,
                                b.uint(w + vectors::LEN_WIDTH as usize, EPOCH_WIDTH) as u8,
                            )
                        }
                        Some(block) => {
                            let c = codec.compress(&block);
                            let v = DecompVector {
                                bits: c.bytes,
                                len: c.len as u16,
                                tag: directed_tag,
                            };
                            (v, epoch)
                        }
                    };
                    decomp.push(SlotDecompVector { v, epoch: given });
                    if given != epoch {
                        SlotExpect::WrongEpoch { given }
                    } else {
                        let s = codec.model_set();
                        let mw = s.max_bits() as usize;
                        let result = codec.decompress(&v.bits[..mw.div_ceil(8)], v.len as usize);
                        let model = result.is_ok().then(|| compare::header_field(&v.bits, s));
                        SlotExpect::Exact {
                            expect: Expect::Block { result, model },
                            epoch: None,
                        }
                    }
                }
                _ => {
                    let (block, t) = match own {
                        None => {
                            let b = bus(ports, &[("in_block", BLOCK_BYTES * 8)]);
                            let mut block = [0u8; BLOCK_BYTES];
                            block.copy_from_slice(&b.bytes(0, BLOCK_BYTES));
                            (block, tag)
                        }
                        Some(block) => (block, directed_tag),
                    };
                    comp.push(CompVector { block, tag: t });
                    SlotExpect::Exact {
                        expect: Expect::Comp(codec.compress(&block)),
                        epoch: Some(epoch),
                    }
                }
            };
            expected.push(e);
        }
        images.push(NamedImage {
            name: format!("counterexample {i}"),
            programmed: Programmed::Registers {
                writes: writes.clone(),
                codec: std::sync::Arc::new(codec),
            },
            directed: false,
        });
        shard.push_writes(writes, start, i + 1, epoch, None);
    }
    let vectors = match unit {
        Unit::Decompressor => SlotVectors::Decomp(decomp),
        _ => SlotVectors::Comp(comp),
    };
    Ok((
        Plan {
            unit: slots,
            images,
            shards: vec![shard],
        },
        vectors,
        expected,
    ))
}

// ---- expected outputs --------------------------------------------------------

/// What a slot unit must deliver for one vector.
#[derive(Clone, Debug)]
pub enum SlotExpect {
    /// The golden output of the active image; the compressor's `out_epoch`.
    Exact { expect: Expect, epoch: Option<u8> },
    /// A decompressor input whose epoch is not the active one: `out_error`
    /// 1 and an all-zero block.
    WrongEpoch { given: u8 },
    /// Invalid register contents: only the compressor's `out_epoch` (and
    /// the stream protocol).
    Unspecified { epoch: Option<u8> },
}

/// A decompressor input of a slot unit: the compressed block and the epoch
/// it is given with (`in_epoch`).
#[derive(Clone, Copy, Debug)]
pub struct SlotDecompVector {
    pub v: DecompVector,
    pub epoch: u8,
}

/// The inputs of one unit of a slot run.
pub enum SlotVectors {
    Comp(Vec<CompVector>),
    Decomp(Vec<SlotDecompVector>),
}

impl SlotVectors {
    pub fn len(&self) -> usize {
        match self {
            SlotVectors::Comp(v) => v.len(),
            SlotVectors::Decomp(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn tag(&self, i: usize) -> u16 {
        match self {
            SlotVectors::Comp(v) => v[i].tag,
            SlotVectors::Decomp(v) => v[i].v.tag,
        }
    }

    fn describe(&self, i: usize) -> String {
        match self {
            SlotVectors::Comp(v) => compare::Inputs::Comp(&v[i..=i]).describe(0),
            SlotVectors::Decomp(v) => format!(
                "in_epoch {} {}",
                v[i].epoch,
                compare::Inputs::Decomp(std::slice::from_ref(&v[i].v)).describe(0)
            ),
        }
    }

    /// Write shard `r`'s vector file (the decompressor's bus is
    /// `{in_epoch, in_len, in_bits}`).
    pub fn write(
        &self,
        path: &Path,
        r: std::ops::Range<usize>,
        width: u32,
    ) -> Result<(), SlotsError> {
        match self {
            SlotVectors::Comp(v) => Ok(vectors::write_comp(path, &v[r])?),
            SlotVectors::Decomp(v) => {
                let io = |source| SlotsError::Write {
                    path: path.to_path_buf(),
                    source,
                };
                let mut w = std::io::BufWriter::new(std::fs::File::create(path).map_err(io)?);
                for d in &v[r] {
                    let mut bus = vectors::decomp_bus(&d.v, width);
                    bus.put_uint(u64::from(d.epoch), EPOCH_WIDTH);
                    writeln!(w, "{}", bus.hex()).map_err(io)?;
                }
                w.flush().map_err(io)
            }
        }
    }
}

/// Per image, the decompressor inputs of its segments: the image's valid
/// and malformed blocks ([`vectors::decompressor_vectors`] on its coder;
/// for a directed image, a share of them replaced by its directed blocks,
/// coded), in the order the segments take them.
struct Pools {
    pools: Vec<std::vec::IntoIter<DecompVector>>,
}

impl Pools {
    fn new(
        set: &ModelSet,
        plan: &Plan,
        gen: &GenConfig,
        tags: &mut Tags,
    ) -> Result<Pools, SlotsError> {
        let mut need = vec![0usize; plan.images.len()];
        for (shard, &n) in plan.shards.iter().zip(&shard_lens(plan, gen.blocks)) {
            for (j, s) in shard.segments.iter().enumerate() {
                let end = shard.segments.get(j + 1).map_or(n, |x| x.start);
                let from = s.coded_as.map_or(s.image, |c| shard.segments[c].image);
                need[from] += end.saturating_sub(s.start);
            }
        }
        let mut pools = Vec::new();
        for (i, img) in plan.images.iter().enumerate() {
            // an invalid image's inputs: those of the reset value
            let codec = img.codec().or_else(|| plan.images[0].codec());
            let v = match (codec, need[i]) {
                (Some(c), n) if n > 0 => vectors::decompressor_vectors(
                    c,
                    &GenConfig {
                        blocks: n,
                        seed: Rng::fork(gen.seed, 400 + i as u64).next_u64(),
                        corpus: gen.corpus.clone(),
                    },
                    tags,
                )?,
                _ => Vec::new(),
            };
            // a directed image's inputs: its directed blocks, coded, for
            // a share of them
            let mut v = v;
            if let (true, Some(c)) = (img.directed, img.codec()) {
                let mut rng = Rng::fork(gen.seed, 700 + i as u64);
                for d in v.iter_mut() {
                    if !rng.chance(DIRECTED_SHARE) {
                        continue;
                    }
                    if let Some((b, j)) = directed_block_of(set, img, &mut rng) {
                        let cb = c.compress(&b);
                        *d = DecompVector {
                            bits: cb.bytes,
                            len: cb.len as u16,
                            tag: tags.id(&format!("directed/slot{j}")),
                        };
                    }
                }
            }
            pools.push(v.into_iter());
        }
        Ok(Pools { pools })
    }

    fn take(&mut self, image: usize) -> DecompVector {
        self.pools[image].next().unwrap_or(DecompVector {
            bits: [0; golden::mpc::MAX_BLOCK_BYTES],
            len: 0,
            tag: 0,
        })
    }
}

/// The block counts of the shards of a run of `n` vectors split as the
/// plan's shards are ([`shard_ranges`]).
fn shard_lens(plan: &Plan, n: usize) -> Vec<usize> {
    shard_ranges(n, plan.shards.len())
        .iter()
        .map(|r| r.len())
        .collect()
}

/// `n` vectors in `shards` contiguous ranges (the last ones may be
/// shorter).
pub fn shard_ranges(n: usize, shards: usize) -> Vec<std::ops::Range<usize>> {
    let shards = shards.max(1);
    let per = n.div_ceil(shards).max(1);
    (0..shards)
        .map(|k| (k * per).min(n)..((k + 1) * per).min(n))
        .collect()
}

/// The inputs of `unit` for a run of `gen.blocks` vectors under `plan`,
/// and what the unit must deliver for each.
pub fn unit_vectors(
    unit: Unit,
    set: &ModelSet,
    plan: &Plan,
    gen: &GenConfig,
    tags: &mut Tags,
) -> Result<(SlotVectors, Vec<SlotExpect>), SlotsError> {
    let ranges = shard_ranges(gen.blocks, plan.shards.len());
    let wrong_tag = tags.id("wrong-epoch");
    match unit {
        Unit::Compressor | Unit::Loopback => {
            let mut v = vectors::compressor_vectors(set, gen, tags)?;
            let mut exp = Vec::with_capacity(v.len());
            let mut rng = Rng::fork(gen.seed, 700);
            for (shard, r) in plan.shards.iter().zip(&ranges) {
                for i in r.clone() {
                    let seg = shard.segments[shard.segment_of(i - r.start)];
                    let img = &plan.images[seg.image];
                    if img.directed && rng.chance(DIRECTED_SHARE) {
                        if let Some((b, j)) = directed_block_of(set, img, &mut rng) {
                            v[i].block = b;
                            v[i].tag = tags.id(&format!("directed/slot{j}"));
                        }
                    }
                    let block = v[i].block;
                    exp.push(match (img.codec(), unit) {
                        (Some(c), Unit::Compressor) => SlotExpect::Exact {
                            expect: Expect::Comp(c.compress(&block)),
                            epoch: Some(seg.epoch),
                        },
                        (Some(c), _) => SlotExpect::Exact {
                            expect: Expect::Block {
                                result: Ok(block),
                                model: Some(c.compress(&block).model),
                            },
                            epoch: None,
                        },
                        (None, Unit::Compressor) => SlotExpect::Unspecified {
                            epoch: Some(seg.epoch),
                        },
                        (None, _) => SlotExpect::Unspecified { epoch: None },
                    });
                }
            }
            Ok((SlotVectors::Comp(v), exp))
        }
        Unit::Decompressor => {
            let mut pools = Pools::new(set, plan, gen, tags)?;
            let mut rng = Rng::fork(gen.seed, 500);
            let mut v = Vec::with_capacity(gen.blocks);
            let mut exp = Vec::with_capacity(gen.blocks);
            for (shard, r) in plan.shards.iter().zip(&ranges) {
                for i in 0..r.len() {
                    let j = shard.segment_of(i);
                    let seg = shard.segments[j];
                    let (from, mut epoch) = match seg.coded_as {
                        Some(c) => (shard.segments[c].image, shard.segments[c].epoch),
                        None => (seg.image, seg.epoch),
                    };
                    let mut d = pools.take(from);
                    if seg.coded_as.is_none() && rng.chance(0.05) {
                        // a block coded with another image: the previous
                        // segment's epoch, or any other
                        epoch = match j.checked_sub(1).map(|p| shard.segments[p].epoch) {
                            Some(e) if e != seg.epoch => e,
                            _ => seg.epoch ^ (1 + rng.below(255) as u8),
                        };
                        d.tag = wrong_tag;
                    }
                    let e = if epoch != seg.epoch {
                        SlotExpect::WrongEpoch { given: epoch }
                    } else {
                        match plan.images[seg.image].codec() {
                            Some(c) => {
                                let s = c.model_set();
                                let w = s.max_bits() as usize;
                                let result = c.decompress(&d.bits[..w.div_ceil(8)], d.len as usize);
                                let model =
                                    result.is_ok().then(|| compare::header_field(&d.bits, s));
                                SlotExpect::Exact {
                                    expect: Expect::Block { result, model },
                                    epoch: None,
                                }
                            }
                            None => SlotExpect::Unspecified { epoch: None },
                        }
                    };
                    v.push(SlotDecompVector { v: d, epoch });
                    exp.push(e);
                }
            }
            Ok((SlotVectors::Decomp(v), exp))
        }
    }
}

/// What the golden model makes of a run's vectors, with counts: blocks
/// per image, model IDs chosen or decoded (slot IDs named `slotJ`), wrong
/// epochs, decode errors and blocks under invalid registers.
pub fn coverage(plan: &Plan, expected: &[SlotExpect], _set: &ModelSet) -> Vec<(String, u64)> {
    let mut m: std::collections::BTreeMap<String, u64> = std::collections::BTreeMap::new();
    let ranges = shard_ranges(expected.len(), plan.shards.len());
    for (shard, r) in plan.shards.iter().zip(ranges) {
        for i in r.clone() {
            let seg = shard.segments[shard.segment_of(i - r.start)];
            let img = &plan.images[seg.image];
            *m.entry(format!("image {}", img.name)).or_default() += 1;
            let id = match &expected[i] {
                SlotExpect::Exact {
                    expect: Expect::Comp(c),
                    ..
                } => Some(c.model),
                SlotExpect::Exact {
                    expect:
                        Expect::Block {
                            result: Ok(_),
                            model: Some(id),
                        },
                    ..
                } => Some(*id),
                SlotExpect::Exact {
                    expect: Expect::Block { result: Err(_), .. },
                    ..
                } => {
                    *m.entry("error decode".to_string()).or_default() += 1;
                    None
                }
                SlotExpect::Exact { .. } => None,
                SlotExpect::WrongEpoch { .. } => {
                    *m.entry("error wrong epoch".to_string()).or_default() += 1;
                    None
                }
                SlotExpect::Unspecified { .. } => {
                    *m.entry("invalid registers".to_string()).or_default() += 1;
                    None
                }
            };
            if let (Some(id), Some(c)) = (id, img.codec()) {
                *m.entry(format!("model {}", c.model_set().id_name(id)))
                    .or_default() += 1;
            }
        }
    }
    m.into_iter().collect()
}

// ---- records and comparison ----------------------------------------------------

/// Width of the slot testbench's `out_all` for `unit`: the compressor's
/// bus has `out_epoch` above `{out_bits, out_len, out_model}`.
pub fn out_width(unit: Unit, params: &Params) -> usize {
    compare::out_width(unit, params)
        + match unit {
            Unit::Compressor => EPOCH_WIDTH,
            _ => 0,
        }
}

/// The fields of one output record: the MPC fields and the compressor's
/// `out_epoch`.
pub type SlotFields = (Fields, Option<u8>);

/// Read a slot unit's record file.
pub fn read_records(
    path: &Path,
    unit: Unit,
    params: &Params,
) -> Result<SimOutput<SlotFields>, OutputError> {
    let base = compare::out_width(unit, params);
    Ok(
        records::read(path, out_width(unit, params))?.decode(|b: &LeBus| {
            let epoch = (unit == Unit::Compressor).then(|| b.uint(base, EPOCH_WIDTH) as u8);
            Ok((compare::fields_of(unit, b, params), epoch))
        }),
    )
}

/// One shard of a slot run to check.
pub struct SlotShard<'a> {
    pub index: usize,
    pub offset: u64,
    pub plan: &'a ShardPlan,
    pub images: &'a [NamedImage],
    pub vectors: &'a SlotVectors,
    /// Index of the shard's first vector in `vectors` and `expected`.
    pub first: usize,
    pub expected: &'a [SlotExpect],
}

/// Compare one shard: the checks of every run ([`verdict::check_run`],
/// without the ideal-pipeline timing: a commit's drain is the unit's own)
/// and, per output, the golden check of its segment's image; a mismatch
/// names the block, the image and its epoch, and the fields.
pub fn compare(
    shard: &SlotShard<'_>,
    out: &SimOutput<SlotFields>,
    tags: &Tags,
    stages: usize,
) -> Verdict {
    let s = RunShape {
        shard: Some(shard.index),
        offset: shard.offset,
        n: shard.expected.len() as u64,
        stages,
        model: None,
    };
    verdict::check_run(&s, out, |i, rec| {
        let g = shard.first + i;
        let seg = shard.plan.segments[shard.plan.segment_of(i)];
        let image = format!(
            "image {} (epoch {})",
            shard.images[seg.image].name, seg.epoch
        );
        let e = &shard.expected[i];
        let (what, expected) = match &rec.fields {
            Err(msg) => (vec![format!("unreadable output: {msg}")], describe(e)),
            Ok((f, epoch)) => (diff(e, f, *epoch), describe(e)),
        };
        Judged {
            tag: Some(tags.name(shard.vectors.tag(g)).to_string()),
            diff: (!what.is_empty()).then(|| Diff {
                what: format!("{image}: {}", what.join(", ")),
                input: shard.vectors.describe(g),
                expected,
                actual: rec.fields.as_ref().map_or_else(
                    |m| m.clone(),
                    |(f, ep)| {
                        let mut s = compare::describe_fields(f);
                        if let Some(ep) = ep {
                            s.push_str(&format!(" epoch {ep}"));
                        }
                        s
                    },
                ),
            }),
        }
    })
}

fn describe(e: &SlotExpect) -> String {
    match e {
        SlotExpect::Exact { expect, epoch } => {
            let mut s = compare::describe_expect(expect);
            if let Some(ep) = epoch {
                s.push_str(&format!(" epoch {ep}"));
            }
            s
        }
        SlotExpect::WrongEpoch { given } => {
            format!("error 1 block all zero (in_epoch {given} is not the active epoch)")
        }
        SlotExpect::Unspecified { epoch: Some(ep) } => {
            format!("any output (invalid registers), epoch {ep}")
        }
        SlotExpect::Unspecified { epoch: None } => "any output (invalid registers)".to_string(),
    }
}

fn diff(e: &SlotExpect, f: &Fields, epoch: Option<u8>) -> Vec<String> {
    let mut d = Vec::new();
    let want_epoch = match e {
        SlotExpect::Exact { expect, epoch } => {
            d = compare::diff(expect, f);
            *epoch
        }
        SlotExpect::WrongEpoch { .. } => {
            if let Fields::Block { error, block, .. } = f {
                if !*error {
                    d.push("out_error 0 != 1 (wrong epoch)".to_string());
                }
                if block.iter().any(|&b| b != 0) {
                    d.push("out_block is not all zero (wrong epoch)".to_string());
                }
            }
            None
        }
        SlotExpect::Unspecified { epoch } => *epoch,
    };
    if let (Some(w), Some(g)) = (want_epoch, epoch) {
        if w != g {
            d.push(format!("out_epoch {g} != {w}"));
        }
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    fn example() -> ModelSet {
        ModelSet::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../models/example"))
            .expect("models/example")
    }

    #[test]
    fn random_images_are_valid_for_every_built_form() {
        let set = example();
        for name in [
            "stride-part",
            "stride-k0-part",
            "stride-cols",
            "stride-lib",
            "stride-colpart",
            "stride-colpart-d8",
        ] {
            let form = Form::by_name(name).expect("form");
            let unit = SlotUnit { k: 3, form };
            let mut rng = Rng::new(7);
            let mut loaded = 0;
            for _ in 0..20 {
                let img = random_image(&set, unit, &mut rng).expect("valid");
                loaded += img.loaded();
                let w = registers::image_writes(&set, &img, 3).expect("writes");
                assert_eq!(w.last().map(|w| w.addr), Some(registers::COMMIT));
            }
            assert!(loaded > 20, "{name}: {loaded} slots loaded in 20 images");
        }
    }

    /// The depth condition of the views' validity assumption says what
    /// the golden model's chain depth says, for random stride rules.
    #[test]
    fn the_depth_condition_agrees_with_the_chain_depth() {
        let mut m = hdl::ir::Module::new("depth").expect("module");
        let rules = m.input("rules", 7 * BLOCK_BYTES as u32).expect("input");
        let out = m.output("shallow", 1).expect("output");
        let within = depth_within(&mut m, "depth", &rules.expr(), 4).expect("condition");
        m.assign(&out, within).expect("assign");
        let mut sim = hdl::ir::Sim::new(&m).expect("evaluator");
        let mut rng = Rng::new(9);
        let (mut yes, mut no) = (0, 0);
        for _ in 0..400 {
            let mut bytes = [ByteRule::Root; BLOCK_BYTES];
            let mut word = 0u128;
            let mut hi = 0u128;
            let roots = rng.below(4);
            for (i, b) in bytes.iter_mut().enumerate() {
                let reach = STRIDES.iter().take_while(|&&st| st as usize <= i).count() as u64;
                let c = if rng.below(4) < roots || reach == 0 {
                    0
                } else {
                    1 + rng.below(reach)
                };
                if c > 0 {
                    *b = ByteRule::Base {
                        base: (i - STRIDES[c as usize - 1] as usize) as u8,
                        shift: 0,
                    };
                }
                let v = u128::from(c as u8) << 4 | 7;
                let at = 7 * i;
                if at < 128 {
                    word |= v << at;
                    if at + 7 > 128 {
                        hi |= v >> (128 - at);
                    }
                } else {
                    hi |= v << (at - 128);
                }
            }
            let words = [
                word as u64,
                (word >> 64) as u64,
                hi as u64,
                (hi >> 64) as u64,
            ];
            let bits = hdl::ir::Bits::from_words(&words, 7 * BLOCK_BYTES as u32).expect("bits");
            sim.set("rules", &bits).expect("set");
            let want = program::rules_depth(&bytes).expect("no cycle") <= 4;
            assert_eq!(sim.get_u128("shallow").expect("get") == 1, want);
            if want {
                yes += 1;
            } else {
                no += 1;
            }
        }
        assert!(yes > 40 && no > 40, "{yes} within, {no} deeper");
        let chains = (0..5).map(|o| (chain_rules(4, o), 12));
        for (rules, most) in [(deep_rules(4, false), 8), (deep_rules(4, true), 8)]
            .into_iter()
            .chain(chains)
        {
            let bytes: [ByteRule; BLOCK_BYTES] = std::array::from_fn(|i| match rules[i] >> 4 {
                0 => ByteRule::Root,
                c => ByteRule::Base {
                    base: (i - STRIDES[c as usize - 1] as usize) as u8,
                    shift: 0,
                },
            });
            assert_eq!(program::rules_depth(&bytes), Ok(4), "{rules:?}");
            let roots = bytes.iter().filter(|b| matches!(b, ByteRule::Root)).count();
            assert!(roots < most, "{rules:?}: {roots} roots");
        }
    }

    #[test]
    fn image_kinds_take_counts() {
        let v = ImageKind::parse_list("trained, random:6,directed,random").expect("parses");
        assert_eq!(
            v,
            [
                ImageKind::Trained,
                ImageKind::Randoms(6),
                ImageKind::Directed(DIRECTED_IMAGES),
                ImageKind::Random
            ]
        );
        assert_eq!(
            ImageKind::parse_list("directed:9").expect("parses"),
            [ImageKind::Directed(9)]
        );
        for bad in [
            "random:0",
            "random:x",
            "trained:2",
            "directed:1000",
            "other",
            "",
        ] {
            assert!(ImageKind::parse_list(bad).is_err(), "{bad}");
        }
    }

    /// Directed images load every slot, and over `2m + 1` of them every
    /// byte with a base in each takes every shift code; their blocks are won by a
    /// slot most of the time, and the plan puts them in the directed
    /// images' segments only.
    #[test]
    fn directed_images_take_every_shift_code_and_their_blocks_choose_the_slot() {
        let set = example();
        let form = Form::by_name("stride-colpart").expect("form");
        let unit = SlotUnit { k: 2, form };
        let mut rng = Rng::new(3);
        let codes = 2 * form.max_shift.unsigned_abs() as usize + 1;
        let mut seen = vec![std::collections::BTreeSet::new(); BLOCK_BYTES];
        let mut based = [0usize; BLOCK_BYTES];
        let (mut won, mut blocks) = (0, 0);
        for d in 0..codes {
            let img = directed_image(&set, unit, d, &mut rng).expect("valid");
            assert_eq!(img.loaded(), 2);
            let slot = img.slots[0].as_ref().expect("loaded");
            for (i, r) in slot.rules.iter().enumerate() {
                if let ByteRule::Base { shift, .. } = r {
                    seen[i].insert(*shift);
                    based[i] += 1;
                }
            }
            let p = ProgrammedSet::new(&set, &img).expect("programmed");
            let named = NamedImage {
                name: "d".to_string(),
                programmed: Programmed::Image {
                    image: img.clone(),
                    codec: std::sync::Arc::new(p.fast_codec()),
                },
                directed: true,
            };
            let slot_ids: Vec<u32> = (0..2).filter_map(|j| p.slot_id(j)).collect();
            for _ in 0..20 {
                let (b, j) = directed_block_of(&set, &named, &mut rng).expect("a block");
                assert!(j < 2);
                blocks += 1;
                won += usize::from(slot_ids.contains(&p.compress(&b).model));
            }
        }
        // a byte with a base in every image takes every code
        let always = (0..BLOCK_BYTES).filter(|&i| based[i] == codes).count();
        assert!(
            always > BLOCK_BYTES / 2,
            "{always} bytes always with a base"
        );
        for (i, s) in seen.iter().enumerate() {
            assert!(based[i] < codes || s.len() == codes, "byte {i}: {s:?}");
        }
        assert!(
            2 * won > blocks,
            "a slot won {won} of {blocks} directed blocks"
        );
        // in a plan, directed blocks only where a directed image codes
        let opts = SlotOptions {
            images: vec![ImageKind::Random, ImageKind::Directed(2)],
            reprogram_every: 40,
        };
        let images = Plan::images(&set, unit, &opts, 5, None).expect("images");
        assert_eq!(images.iter().filter(|i| i.directed).count(), 2);
        let plan = Plan::cycling(&set, unit, images, &[400], 40).expect("plan");
        let gen = GenConfig {
            blocks: 400,
            seed: 9,
            corpus: None,
        };
        let mut tags = Tags::new();
        let (v, _) = unit_vectors(Unit::Compressor, &set, &plan, &gen, &mut tags).expect("vectors");
        let SlotVectors::Comp(v) = v else {
            panic!("compressor vectors")
        };
        let shard = &plan.shards[0];
        let mut directed = 0;
        for (i, c) in v.iter().enumerate() {
            if tags.name(c.tag).starts_with("directed/") {
                directed += 1;
                let seg = shard.segments[shard.segment_of(i)];
                assert!(plan.images[seg.image].directed, "block {i}");
            }
        }
        assert!(directed > 60, "{directed} directed blocks");
    }

    #[test]
    fn the_plan_programs_every_image_and_the_reset_value_first() {
        let set = example();
        let unit = SlotUnit {
            k: 2,
            form: Form::by_name("stride-colpart").expect("form"),
        };
        let opts = SlotOptions {
            images: vec![ImageKind::Random],
            reprogram_every: 100,
        };
        let images = Plan::images(&set, unit, &opts, 5, None).expect("images");
        assert_eq!(images.len(), 3);
        let plan = Plan::cycling(&set, unit, images, &[450, 450], 100).expect("plan");
        let s0 = &plan.shards[0];
        assert_eq!((s0.segments[0].image, s0.segments[0].epoch), (0, 0));
        assert_eq!(s0.segments[1].start, 25);
        assert_eq!(s0.segment_of(24), 0);
        assert_eq!(s0.segment_of(25), 1);
        let epochs: Vec<u8> = s0.segments.iter().map(|s| s.epoch).collect();
        assert_eq!(epochs, [0, 1, 2, 3, 4, 5]);
        let used: std::collections::BTreeSet<usize> = s0.segments.iter().map(|s| s.image).collect();
        assert_eq!(used.len(), 3, "{:?}", s0.segments);
        // the odd shard programs before its first block
        assert_eq!(plan.shards[1].segments[0].start, 0);
        assert_ne!(plan.shards[1].segments[0].image, 0);
        assert!(s0.writes.iter().all(|w| w.before >= 25));
        assert!(s0.writes.windows(2).all(|w| w[0].before <= w[1].before));
    }

    #[test]
    fn a_wrong_epoch_expects_an_error_and_a_wrong_out_epoch_is_named() {
        let e = SlotExpect::WrongEpoch { given: 3 };
        let ok = Fields::Block {
            error: true,
            model: 5,
            block: [0; 32],
        };
        assert!(diff(&e, &ok, None).is_empty());
        let bad = Fields::Block {
            error: false,
            model: 1,
            block: [1; 32],
        };
        let d = diff(&e, &bad, None);
        assert_eq!(d.len(), 2, "{d:?}");
        let u = SlotExpect::Unspecified { epoch: Some(4) };
        let f = Fields::Comp {
            len: 3,
            model: 1,
            bits: [0; golden::mpc::MAX_BLOCK_BYTES],
        };
        assert!(diff(&u, &f, Some(4)).is_empty());
        assert_eq!(diff(&u, &f, Some(5)), ["out_epoch 5 != 4"]);
    }
}
