//! Programmable predictor slots (`docs/spec/program-slots.md`): a unit with
//! the hard-wired predictors of its model set plus K slots, each slot a
//! predictor given as data in a configuration image.
//!
//! * [`Form`]: what a slot may express (base candidates, shift range,
//!   reorder class, depth bound), one of [`FORMS`].
//! * [`SlotImage`]: the configuration image; [`SlotImage::load`] parses and
//!   validates it (never panics, bounded memory), [`SlotImage::to_bytes`]
//!   writes it.
//! * [`ProgrammedSet`]: a model set plus an image, coding and decoding
//!   blocks bit-exactly as the spec says.
//! * [`train`]: the run-time trainer of K slots from a sample of one
//!   application's data.

pub mod benes;
pub mod coder;
pub mod registers;
pub mod train;

pub use coder::ProgrammedSet;
pub use registers::{image_writes, RegisterError, RegisterWrite, SlotRegisters};
pub use train::{online_protocol, train_slots, OnlineOptions, OnlineResult};

use super::model::{ByteRule, ModelSet, Predictor, Selection};
use super::{BLOCK_BYTES, STREAM_BITS};

/// Magic bytes at the start of an image: `MPCS`.
pub const MAGIC: [u8; 4] = *b"MPCS";
/// Image format version.
pub const VERSION: u8 = 1;
/// Most slots an image may hold.
pub const MAX_SLOTS: usize = 64;
/// Bytes before the first slot record.
pub const HEADER_BYTES: usize = 12;
/// Bytes of the trailing checksum.
pub const CHECKSUM_BYTES: usize = 4;
/// Element sizes of the stride base candidates: candidate `c` (1..=5) of
/// byte `i` is byte `i - STRIDES[c - 1]`.
pub const STRIDES: [u8; 5] = [1, 2, 4, 8, 16];
/// Value of an any-base rule's base field that makes the byte a root.
pub const ROOT_BASE: u8 = 0xff;

/// Which bases a slot's byte may use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BaseClass {
    /// Any other byte of the block (a 32:1 byte mux per byte), or root.
    Any,
    /// Root, or the same byte of the previous 1-, 2-, 4-, 8- or 16-byte
    /// element (a 6:1 byte mux per byte, one input the constant 0).
    Strides,
}

/// Which reorders a slot may use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReorderClass {
    /// Any permutation of the 256 stream bits.
    Any,
    /// A stable partition of the natural stream by a 256-bit mask: the
    /// bits whose mask bit is set first, then the others, each part in
    /// natural order.
    Partition,
    /// Column-major: the 32 byte columns in a given order, each column's
    /// eight bits top plane first (a symbol holds two columns).
    Columns,
    /// Column-major in a given column order, then a stable partition of
    /// that stream by a 256-bit mask over its positions.
    ColumnsPartition,
    /// One of a library: the identity, then each hard-wired predictor's
    /// reorder in model order.
    Library,
}

/// A slot form: what one slot may express.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Form {
    /// The form field of the image.
    pub id: u8,
    /// The name on the command line.
    pub name: &'static str,
    pub base: BaseClass,
    /// Shifts `k` allowed: `-max_shift..=max_shift`.
    pub max_shift: i8,
    pub reorder: ReorderClass,
    /// Longest base chain (31: any forest).
    pub max_depth: usize,
}

/// Every slot form, indexed by its form field.
pub const FORMS: [Form; 8] = [
    Form {
        id: 0,
        name: "full",
        base: BaseClass::Any,
        max_shift: 7,
        reorder: ReorderClass::Any,
        max_depth: 31,
    },
    Form {
        id: 1,
        name: "any-part",
        base: BaseClass::Any,
        max_shift: 7,
        reorder: ReorderClass::Partition,
        max_depth: 31,
    },
    Form {
        id: 2,
        name: "stride-part",
        base: BaseClass::Strides,
        max_shift: 7,
        reorder: ReorderClass::Partition,
        max_depth: 4,
    },
    Form {
        id: 3,
        name: "stride-k0-part",
        base: BaseClass::Strides,
        max_shift: 0,
        reorder: ReorderClass::Partition,
        max_depth: 4,
    },
    Form {
        id: 4,
        name: "stride-cols",
        base: BaseClass::Strides,
        max_shift: 7,
        reorder: ReorderClass::Columns,
        max_depth: 4,
    },
    Form {
        id: 5,
        name: "stride-lib",
        base: BaseClass::Strides,
        max_shift: 7,
        reorder: ReorderClass::Library,
        max_depth: 4,
    },
    Form {
        id: 6,
        name: "stride-colpart",
        base: BaseClass::Strides,
        max_shift: 7,
        reorder: ReorderClass::ColumnsPartition,
        max_depth: 4,
    },
    Form {
        id: 7,
        name: "stride-colpart-d8",
        base: BaseClass::Strides,
        max_shift: 7,
        reorder: ReorderClass::ColumnsPartition,
        max_depth: 8,
    },
];

impl Form {
    /// The form with command-line name `name`.
    pub fn by_name(name: &str) -> Option<Form> {
        FORMS.iter().copied().find(|f| f.name == name)
    }

    /// The form with image field value `id`.
    pub fn by_id(id: u8) -> Option<Form> {
        FORMS.get(id as usize).copied()
    }

    /// Bytes of the byte rules of one slot record.
    pub fn rule_bytes(&self) -> usize {
        match self.base {
            BaseClass::Any => 2 * BLOCK_BYTES,
            BaseClass::Strides => BLOCK_BYTES,
        }
    }

    /// Bytes of the reorder field of one slot record.
    pub fn reorder_bytes(&self) -> usize {
        match self.reorder {
            ReorderClass::Any => STREAM_BITS,
            ReorderClass::Partition => STREAM_BITS / 8,
            ReorderClass::Columns => BLOCK_BYTES,
            ReorderClass::ColumnsPartition => BLOCK_BYTES + STREAM_BITS / 8,
            ReorderClass::Library => 1,
        }
    }

    /// Bytes of one slot record (flag, rules, reorder).
    pub fn record_bytes(&self) -> usize {
        1 + self.rule_bytes() + self.reorder_bytes()
    }

    /// Bytes of an image with `k` slots.
    pub fn image_bytes(&self, k: usize) -> usize {
        HEADER_BYTES + k * self.record_bytes() + CHECKSUM_BYTES
    }

    /// Whether the form can express `rule` at byte position `i`.
    pub fn allows_rule(&self, i: usize, rule: ByteRule) -> bool {
        match rule {
            ByteRule::Root => true,
            ByteRule::Base { base, shift } => {
                if shift.unsigned_abs() > self.max_shift.unsigned_abs() || base as usize == i {
                    return false;
                }
                match self.base {
                    BaseClass::Any => (base as usize) < BLOCK_BYTES,
                    BaseClass::Strides => stride_candidate(i, base as usize).is_some(),
                }
            }
        }
    }
}

/// The stride candidate (1..=5) that names base `base` for byte `i`.
pub fn stride_candidate(i: usize, base: usize) -> Option<u8> {
    let d = i.checked_sub(base)?;
    STRIDES
        .iter()
        .position(|&s| s as usize == d)
        .map(|c| c as u8 + 1)
}

/// How a loaded slot reorders its stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SlotReorder {
    /// `reorder[o]` is the natural index at stream position `o`.
    Any(Box<[u8; STREAM_BITS]>),
    /// Mask bit `n` (bit `n % 8` of byte `n / 8`) set: natural bit `n` goes
    /// to the front part.
    Partition([u8; STREAM_BITS / 8]),
    /// `columns[c]` is the byte column at column position `c`: stream
    /// position `o` holds plane `7 - o % 8` of column `columns[o / 8]`.
    Columns([u8; BLOCK_BYTES]),
    /// A column order, then a mask over the positions of the column-major
    /// stream (mask bit `o` set: column-major position `o` goes to the front
    /// part).
    ColumnsPartition([u8; BLOCK_BYTES], [u8; STREAM_BITS / 8]),
    /// Library entry: 0 the identity, `1 + j` hard-wired predictor `j`'s.
    Library(u8),
}

/// One loaded slot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Slot {
    pub rules: [ByteRule; BLOCK_BYTES],
    pub reorder: SlotReorder,
}

/// The configuration image: a form, the fingerprint of the hard-wired set
/// it is made for, and K slots (`None`: unloaded: no model ID, never
/// selected).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SlotImage {
    pub form: Form,
    /// Hard-wired predictors of the set the image is made for.
    pub hard_wired: u8,
    /// [`set_tag`] of that set.
    pub set_tag: u32,
    pub slots: Vec<Option<Slot>>,
}

/// Why an image was refused. Every variant names the field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ImageError {
    #[error("image of {len} bytes is shorter than its {min}-byte header and checksum")]
    TooShort { len: usize, min: usize },
    #[error("magic: expected \"MPCS\" (4d 50 43 53), found {found:02x?}")]
    Magic { found: [u8; 4] },
    #[error("version: {found} is not supported (this loader reads version {VERSION})")]
    Version { found: u8 },
    #[error("form: {found} is not a slot form (0..={})", FORMS.len() - 1)]
    Form { found: u8 },
    #[error("slots: K = {found} is more than the {MAX_SLOTS} an image may hold")]
    TooManySlots { found: usize },
    #[error("size: an image of form {form} with {k} slots is {expected} bytes, found {found}")]
    Size {
        form: &'static str,
        k: usize,
        expected: usize,
        found: usize,
    },
    #[error(
        "checksum: CRC-32 of the image is {computed:08x}, the checksum field says {stored:08x}"
    )]
    Checksum { stored: u32, computed: u32 },
    #[error("slot {slot} flag: {found} is neither 0 (unloaded) nor 1 (loaded)")]
    Flag { slot: usize, found: u8 },
    #[error("slot {slot}: unloaded, but its byte {offset} is {found:#04x} (an unloaded record is all zero)")]
    UnloadedNotZero {
        slot: usize,
        offset: usize,
        found: u8,
    },
    #[error("slot {slot} byte {byte} base: {found} is neither a byte position 0..=31 other than {byte} nor 0xff (root)")]
    Base { slot: usize, byte: usize, found: u8 },
    #[error("slot {slot} byte {byte} shift: {found} is outside -{max}..={max} of form {form}")]
    Shift {
        slot: usize,
        byte: usize,
        found: i8,
        max: i8,
        form: &'static str,
    },
    #[error("slot {slot} byte {byte} shift: a root has shift 0, found {found}")]
    RootShift { slot: usize, byte: usize, found: i8 },
    #[error("slot {slot} byte {byte} candidate: {found} is not 0 (root) or 1..=5 (stride 1, 2, 4, 8, 16)")]
    Candidate { slot: usize, byte: usize, found: u8 },
    #[error("slot {slot} byte {byte} candidate: stride {stride} reaches before byte 0")]
    StrideBeforeStart {
        slot: usize,
        byte: usize,
        stride: u8,
    },
    #[error("slot {slot} byte {byte}: its base chain is a cycle")]
    Cycle { slot: usize, byte: usize },
    #[error("slot {slot} depth: {found} is more than the {max} of form {form}")]
    Depth {
        slot: usize,
        found: usize,
        max: usize,
        form: &'static str,
    },
    #[error("slot {slot} reorder: position {position} names {value}, which an earlier position already names (not a permutation)")]
    Reorder {
        slot: usize,
        position: usize,
        value: usize,
    },
    #[error("slot {slot} columns: position {position} names {value}, which is not a column 0..=31 or is named twice")]
    Columns {
        slot: usize,
        position: usize,
        value: u8,
    },
    #[error("slot {slot} library: index {found} is past the library's last entry {last} (identity + {last} hard-wired reorders)")]
    Library { slot: usize, found: u8, last: u8 },
    #[error("hard-wired: the image is made for a set of {image} hard-wired predictors, this set has {set}")]
    HardWired { image: u8, set: usize },
    #[error("set tag: the image is made for the hard-wired set with tag {image:08x}, this set's tag is {set:08x}")]
    SetTag { image: u32, set: u32 },
    #[error("slots: {ids} model IDs with {k} slots; a unit has at most 256")]
    TooManyIds { ids: usize, k: usize },
    #[error("slot {slot}: form {form} cannot express byte {byte}'s rule {rule}")]
    NotExpressible {
        slot: usize,
        byte: usize,
        rule: String,
        form: &'static str,
    },
}

/// CRC-32 (IEEE 802.3: reflected, polynomial 0xedb88320, initial value and
/// final XOR 0xffffffff), the image checksum.
pub fn crc32(data: &[u8]) -> u32 {
    let mut c = 0xffff_ffffu32;
    for &b in data {
        c ^= b as u32;
        for _ in 0..8 {
            c = if c & 1 == 1 {
                (c >> 1) ^ 0xedb8_8320
            } else {
                c >> 1
            };
        }
    }
    !c
}

/// The hard-wired set's fingerprint: CRC-32 of its selection (0 zero-run,
/// 1 exact), custom models (bit 0 zero-block, bit 1 same-words), predictor
/// count, then per predictor 32 x (base or 0xff, shift as a byte) and the
/// 256 reorder bytes.
pub fn set_tag(set: &ModelSet) -> u32 {
    let mut v = vec![
        match set.selection {
            Selection::ZeroRun => 0,
            Selection::Exact => 1,
        },
        set.custom.zero_block as u8 | (set.custom.same_words as u8) << 1,
        set.predictors.len() as u8,
    ];
    for p in &set.predictors {
        for r in &p.bytes {
            match *r {
                ByteRule::Root => v.extend([ROOT_BASE, 0]),
                ByteRule::Base { base, shift } => v.extend([base, shift as u8]),
            }
        }
        v.extend(p.reorder.iter());
    }
    crc32(&v)
}

/// The permutation of a partition mask: the natural indices whose mask bit
/// is set, ascending, then the others, ascending.
pub fn partition_reorder(mask: &[u8; STREAM_BITS / 8]) -> [u8; STREAM_BITS] {
    let set = |n: usize| (mask[n / 8] >> (n % 8)) & 1 == 1;
    let mut out = [0u8; STREAM_BITS];
    let order = (0..STREAM_BITS)
        .filter(|&n| set(n))
        .chain((0..STREAM_BITS).filter(|&n| !set(n)));
    for (o, n) in order.enumerate() {
        out[o] = n as u8;
    }
    out
}

/// The column-major permutation of a column order: stream position `o`
/// holds plane `7 - o % 8` of column `cols[o / 8]`, natural index
/// `32 * (o % 8) + cols[o / 8]`.
pub fn column_major(cols: &[u8; BLOCK_BYTES]) -> [u8; STREAM_BITS] {
    std::array::from_fn(|o| (32 * (o % 8)) as u8 + cols[o / 8])
}

/// Longest base chain of `rules`, or the first byte on a cycle.
pub fn rules_depth(rules: &[ByteRule; BLOCK_BYTES]) -> Result<usize, usize> {
    let mut max = 0;
    for i in 0..BLOCK_BYTES {
        let (mut cur, mut d) = (i, 0);
        while let ByteRule::Base { base, .. } = rules[cur] {
            cur = base as usize;
            d += 1;
            if d > BLOCK_BYTES {
                return Err(i);
            }
        }
        max = max.max(d);
    }
    Ok(max)
}

impl Slot {
    /// The slot as a predictor of a set whose hard-wired predictors are
    /// `hard_wired` (the library entries).
    pub fn predictor(&self, name: &str, hard_wired: &[Predictor]) -> Predictor {
        let reorder: [u8; STREAM_BITS] = match &self.reorder {
            SlotReorder::Any(r) => **r,
            SlotReorder::Partition(m) => partition_reorder(m),
            SlotReorder::Columns(c) => column_major(c),
            SlotReorder::ColumnsPartition(c, m) => {
                let (base, part) = (column_major(c), partition_reorder(m));
                std::array::from_fn(|o| base[part[o] as usize])
            }
            SlotReorder::Library(0) => std::array::from_fn(|o| o as u8),
            SlotReorder::Library(l) => hard_wired
                .get(*l as usize - 1)
                .map_or_else(|| std::array::from_fn(|o| o as u8), |p| p.reorder),
        };
        Predictor {
            name: name.to_string(),
            bytes: self.rules,
            reorder,
        }
    }

    /// `p` in form `form` (for a set with hard-wired predictors
    /// `hard_wired`), if the form can express it.
    pub fn from_predictor(p: &Predictor, form: Form, hard_wired: &[Predictor]) -> Option<Slot> {
        if p.bytes
            .iter()
            .enumerate()
            .any(|(i, r)| !form.allows_rule(i, *r))
        {
            return None;
        }
        if rules_depth(&p.bytes).ok()? > form.max_depth {
            return None;
        }
        let reorder = match form.reorder {
            ReorderClass::Any => SlotReorder::Any(Box::new(p.reorder)),
            ReorderClass::Partition => {
                // front part: the natural bits before the first descent
                let mut mask = [0u8; STREAM_BITS / 8];
                let cut = (1..STREAM_BITS)
                    .find(|&o| p.reorder[o] < p.reorder[o - 1])
                    .unwrap_or(STREAM_BITS);
                for &n in &p.reorder[..cut] {
                    mask[n as usize / 8] |= 1 << (n % 8);
                }
                let s = Slot {
                    rules: p.bytes,
                    reorder: SlotReorder::Partition(mask),
                };
                if s.predictor("", hard_wired).reorder != p.reorder {
                    return None;
                }
                s.reorder
            }
            ReorderClass::Columns => {
                let cols: [u8; BLOCK_BYTES] = std::array::from_fn(|c| p.reorder[8 * c] % 32);
                let s = Slot {
                    rules: p.bytes,
                    reorder: SlotReorder::Columns(cols),
                };
                if cols.iter().any(|&c| c as usize >= BLOCK_BYTES)
                    || s.predictor("", hard_wired).reorder != p.reorder
                {
                    return None;
                }
                s.reorder
            }
            ReorderClass::ColumnsPartition => {
                // the plain column-major orders (empty mask)
                let cols: [u8; BLOCK_BYTES] = std::array::from_fn(|c| p.reorder[8 * c] % 32);
                let s = Slot {
                    rules: p.bytes,
                    reorder: SlotReorder::ColumnsPartition(cols, [0; STREAM_BITS / 8]),
                };
                if s.predictor("", hard_wired).reorder != p.reorder {
                    return None;
                }
                s.reorder
            }
            ReorderClass::Library => {
                let identity = p.reorder_is_identity();
                let l = if identity {
                    0
                } else {
                    1 + hard_wired.iter().position(|h| h.reorder == p.reorder)?
                };
                SlotReorder::Library(u8::try_from(l).ok()?)
            }
        };
        Some(Slot {
            rules: p.bytes,
            reorder,
        })
    }
}

impl SlotImage {
    /// The reset value: `k` unloaded slots of form `form` for `set`.
    pub fn empty(set: &ModelSet, form: Form, k: usize) -> SlotImage {
        SlotImage {
            form,
            hard_wired: set.predictors.len() as u8,
            set_tag: set_tag(set),
            slots: vec![None; k],
        }
    }

    /// Slots that hold a predictor.
    pub fn loaded(&self) -> usize {
        self.slots.iter().filter(|s| s.is_some()).count()
    }

    /// The image as bytes (`docs/spec/program-slots.md`, "The image").
    pub fn to_bytes(&self) -> Vec<u8> {
        let f = self.form;
        let mut v = Vec::with_capacity(f.image_bytes(self.slots.len()));
        v.extend(MAGIC);
        v.extend([VERSION, f.id, self.slots.len() as u8, self.hard_wired]);
        v.extend(self.set_tag.to_le_bytes());
        for s in &self.slots {
            let start = v.len();
            v.resize(start + f.record_bytes(), 0);
            let Some(s) = s else { continue };
            let rec = &mut v[start..];
            rec[0] = 1;
            for (i, r) in s.rules.iter().enumerate() {
                match (f.base, *r) {
                    (BaseClass::Any, ByteRule::Root) => rec[1 + 2 * i] = ROOT_BASE,
                    (BaseClass::Any, ByteRule::Base { base, shift }) => {
                        rec[1 + 2 * i] = base;
                        rec[2 + 2 * i] = shift as u8;
                    }
                    (BaseClass::Strides, ByteRule::Root) => rec[1 + i] = 7,
                    (BaseClass::Strides, ByteRule::Base { base, shift }) => {
                        let c = stride_candidate(i, base as usize).unwrap_or(0);
                        rec[1 + i] = (c << 4) | (shift + 7) as u8;
                    }
                }
            }
            let ro = 1 + f.rule_bytes();
            match &s.reorder {
                SlotReorder::Any(r) => rec[ro..ro + STREAM_BITS].copy_from_slice(&r[..]),
                SlotReorder::Partition(m) => rec[ro..ro + STREAM_BITS / 8].copy_from_slice(m),
                SlotReorder::Columns(c) => rec[ro..ro + BLOCK_BYTES].copy_from_slice(c),
                SlotReorder::ColumnsPartition(c, m) => {
                    rec[ro..ro + BLOCK_BYTES].copy_from_slice(c);
                    rec[ro + BLOCK_BYTES..ro + BLOCK_BYTES + STREAM_BITS / 8].copy_from_slice(m);
                }
                SlotReorder::Library(l) => rec[ro] = *l,
            }
        }
        let c = crc32(&v);
        v.extend(c.to_le_bytes());
        v
    }

    /// Parse and validate an image. Never panics; memory is bounded by
    /// [`MAX_SLOTS`] records whatever the input.
    pub fn load(bytes: &[u8]) -> Result<SlotImage, ImageError> {
        let min = HEADER_BYTES + CHECKSUM_BYTES;
        if bytes.len() < min {
            return Err(ImageError::TooShort {
                len: bytes.len(),
                min,
            });
        }
        let magic = [bytes[0], bytes[1], bytes[2], bytes[3]];
        if magic != MAGIC {
            return Err(ImageError::Magic { found: magic });
        }
        if bytes[4] != VERSION {
            return Err(ImageError::Version { found: bytes[4] });
        }
        let form = Form::by_id(bytes[5]).ok_or(ImageError::Form { found: bytes[5] })?;
        let k = bytes[6] as usize;
        if k > MAX_SLOTS {
            return Err(ImageError::TooManySlots { found: k });
        }
        let expected = form.image_bytes(k);
        if bytes.len() != expected {
            return Err(ImageError::Size {
                form: form.name,
                k,
                expected,
                found: bytes.len(),
            });
        }
        let body = &bytes[..expected - CHECKSUM_BYTES];
        let stored = u32::from_le_bytes([
            bytes[expected - 4],
            bytes[expected - 3],
            bytes[expected - 2],
            bytes[expected - 1],
        ]);
        let computed = crc32(body);
        if stored != computed {
            return Err(ImageError::Checksum { stored, computed });
        }
        let hard_wired = bytes[7];
        let set_tag = u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]);
        let mut slots = Vec::with_capacity(k);
        for (slot, rec) in body[HEADER_BYTES..]
            .chunks_exact(form.record_bytes())
            .enumerate()
        {
            slots.push(parse_record(slot, rec, form, hard_wired)?);
        }
        Ok(SlotImage {
            form,
            hard_wired,
            set_tag,
            slots,
        })
    }
}

/// One slot record (already the right length).
fn parse_record(
    slot: usize,
    rec: &[u8],
    form: Form,
    hard_wired: u8,
) -> Result<Option<Slot>, ImageError> {
    match rec[0] {
        0 => {
            return match rec.iter().enumerate().find(|(_, &b)| b != 0) {
                Some((offset, &found)) => Err(ImageError::UnloadedNotZero {
                    slot,
                    offset,
                    found,
                }),
                None => Ok(None),
            }
        }
        1 => {}
        found => return Err(ImageError::Flag { slot, found }),
    }
    let mut rules = [ByteRule::Root; BLOCK_BYTES];
    for (byte, rule) in rules.iter_mut().enumerate() {
        let (base, shift) = match form.base {
            BaseClass::Any => {
                let (b, s) = (rec[1 + 2 * byte], rec[2 + 2 * byte] as i8);
                if b == ROOT_BASE {
                    if s != 0 {
                        return Err(ImageError::RootShift {
                            slot,
                            byte,
                            found: s,
                        });
                    }
                    continue;
                }
                if b as usize >= BLOCK_BYTES || b as usize == byte {
                    return Err(ImageError::Base {
                        slot,
                        byte,
                        found: b,
                    });
                }
                (b, s)
            }
            BaseClass::Strides => {
                let v = rec[1 + byte];
                let (c, s) = (v >> 4, (v & 15) as i8 - 7);
                if c as usize > STRIDES.len() {
                    return Err(ImageError::Candidate {
                        slot,
                        byte,
                        found: c,
                    });
                }
                if c == 0 {
                    if s != 0 {
                        return Err(ImageError::RootShift {
                            slot,
                            byte,
                            found: s,
                        });
                    }
                    continue;
                }
                let stride = STRIDES[c as usize - 1];
                let Some(b) = byte.checked_sub(stride as usize) else {
                    return Err(ImageError::StrideBeforeStart { slot, byte, stride });
                };
                (b as u8, s)
            }
        };
        if shift.unsigned_abs() > form.max_shift.unsigned_abs() {
            return Err(ImageError::Shift {
                slot,
                byte,
                found: shift,
                max: form.max_shift,
                form: form.name,
            });
        }
        *rule = ByteRule::Base { base, shift };
    }
    match rules_depth(&rules) {
        Err(byte) => return Err(ImageError::Cycle { slot, byte }),
        Ok(d) if d > form.max_depth => {
            return Err(ImageError::Depth {
                slot,
                found: d,
                max: form.max_depth,
                form: form.name,
            })
        }
        Ok(_) => {}
    }
    let ro = &rec[1 + form.rule_bytes()..];
    let reorder = match form.reorder {
        ReorderClass::Any => {
            let mut seen = [false; STREAM_BITS];
            let mut r = Box::new([0u8; STREAM_BITS]);
            for (position, (&v, out)) in ro.iter().zip(r.iter_mut()).enumerate() {
                if std::mem::replace(&mut seen[v as usize], true) {
                    return Err(ImageError::Reorder {
                        slot,
                        position,
                        value: v as usize,
                    });
                }
                *out = v;
            }
            SlotReorder::Any(r)
        }
        ReorderClass::Partition => {
            let mut m = [0u8; STREAM_BITS / 8];
            m.copy_from_slice(&ro[..STREAM_BITS / 8]);
            SlotReorder::Partition(m)
        }
        ReorderClass::Columns => SlotReorder::Columns(parse_columns(slot, ro)?),
        ReorderClass::ColumnsPartition => {
            let c = parse_columns(slot, ro)?;
            let mut m = [0u8; STREAM_BITS / 8];
            m.copy_from_slice(&ro[BLOCK_BYTES..BLOCK_BYTES + STREAM_BITS / 8]);
            SlotReorder::ColumnsPartition(c, m)
        }
        ReorderClass::Library => {
            if ro[0] > hard_wired {
                return Err(ImageError::Library {
                    slot,
                    found: ro[0],
                    last: hard_wired,
                });
            }
            SlotReorder::Library(ro[0])
        }
    };
    Ok(Some(Slot { rules, reorder }))
}

/// A column order field: a permutation of 0..=31.
fn parse_columns(slot: usize, ro: &[u8]) -> Result<[u8; BLOCK_BYTES], ImageError> {
    let mut seen = [false; BLOCK_BYTES];
    let mut c = [0u8; BLOCK_BYTES];
    for (position, (&v, out)) in ro.iter().zip(c.iter_mut()).enumerate() {
        if v as usize >= BLOCK_BYTES || std::mem::replace(&mut seen[v as usize], true) {
            return Err(ImageError::Columns {
                slot,
                position,
                value: v,
            });
        }
        *out = v;
    }
    Ok(c)
}
