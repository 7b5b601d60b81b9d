//! The register image of a slot image: the writes on a unit's configuration
//! port (`docs/hw/program-slots.md` section 2) that load an image, and the
//! register contents a simulator holds after them.
//!
//! * [`image_writes`]: `EPOCH`, then per slot `SLOT_FLAG`, the 8
//!   `SLOT_RULES` words and the `SLOT_ROUTE` words (an unloaded slot: all
//!   zero), then `COMMIT = 1`.
//! * [`route_words`]: the `SLOT_ROUTE` words of a slot: the Benes settings
//!   ([`super::benes::route`]) of its 256-bit reorder (partition classes),
//!   of its column order (`stride-cols`), or its library index
//!   (`stride-lib`). The any-base forms (`full`, `any-part`) have no RTL and
//!   are refused.
//! * [`SlotRegisters`]: the registers of K slots and the epoch as the
//!   hardware stores them; [`SlotRegisters::predictors`] gives the
//!   predictors they hold. It gives predictors, not an image: a Benes
//!   setting holds the permutation, from which the image's column order and
//!   mask are not recovered (any pair giving the permutation codes alike).

use super::benes::{self, BenesError};
use super::{
    column_major, rules_depth, BaseClass, Form, ImageError, ProgrammedSet, ReorderClass, Slot,
    SlotImage, SlotReorder, STRIDES,
};
use crate::mpc::model::{ByteRule, ModelSet, Predictor};
use crate::mpc::{BLOCK_BYTES, STREAM_BITS};

/// The `COMMIT` register: a write with bit 0 set makes the shadow image
/// active between blocks.
pub const COMMIT: u16 = 0x000;
/// The `EPOCH` register: bits `[7:0]`, the epoch of the shadow image.
pub const EPOCH: u16 = 0x001;
/// Address bits on the configuration port.
pub const ADDR_BITS: u32 = 12;
/// Data bits of one register word.
pub const DATA_BITS: u32 = 32;
/// Bits of an epoch.
pub const EPOCH_BITS: u32 = 8;
/// Most slots the address map has groups for (groups 1..=15).
pub const MAX_REGISTER_SLOTS: usize = 15;
/// `SLOT_RULES` words per slot (4 rule bytes each).
pub const RULES_WORDS: usize = BLOCK_BYTES / 4;
/// Offset of `SLOT_FLAG` in a slot's group.
pub const FLAG_OFFSET: u16 = 0;
/// Offset of `SLOT_RULES[0]` in a slot's group.
pub const RULES_OFFSET: u16 = 1;
/// Offset of `SLOT_ROUTE[0]` in a slot's group.
pub const ROUTE_OFFSET: u16 = 1 + RULES_WORDS as u16;
/// The bits of a rule byte the hardware stores: the candidate `[6:4]` and
/// `k + 7` `[3:0]`.
pub const RULE_BYTE_MASK: u8 = 0x7f;

/// First address of slot `s`'s group: `0x100 + 0x100 s`.
pub const fn group_base(s: usize) -> u16 {
    0x100 + 0x100 * s as u16
}

/// Address of `SLOT_FLAG` of slot `s`.
pub const fn slot_flag(s: usize) -> u16 {
    group_base(s) + FLAG_OFFSET
}

/// Address of `SLOT_RULES[w]` of slot `s` (`w` < 8).
pub const fn slot_rules(s: usize, w: usize) -> u16 {
    group_base(s) + RULES_OFFSET + w as u16
}

/// Address of `SLOT_ROUTE[w]` of slot `s`.
pub const fn slot_route(s: usize, w: usize) -> u16 {
    group_base(s) + ROUTE_OFFSET + w as u16
}

/// One write on the configuration port.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RegisterWrite {
    pub addr: u16,
    pub value: u32,
}

/// Why an image or register contents have no register image or predictor.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegisterError {
    #[error("form {form}: any-base forms are not built in RTL and have no register map")]
    AnyBaseForm { form: &'static str },
    #[error(
        "slots: K = {k} is more than the {MAX_REGISTER_SLOTS} slot groups of the register map"
    )]
    TooManySlots { k: usize },
    #[error(
        "slot {slot}: form {form} reorders with {class}, the slot holds another reorder class"
    )]
    ReorderClass {
        slot: usize,
        form: &'static str,
        class: &'static str,
    },
    #[error("slot {slot} route: {source}")]
    Route {
        slot: usize,
        #[source]
        source: BenesError,
    },
    #[error(transparent)]
    Image(#[from] ImageError),
    #[error("slot {slot} byte {byte}: candidate {candidate} is not 0 (root) or 1..=5")]
    Candidate {
        slot: usize,
        byte: usize,
        candidate: u8,
    },
    #[error("slot {slot} byte {byte}: stride candidate {candidate} reaches before byte 0")]
    StrideBeforeStart {
        slot: usize,
        byte: usize,
        candidate: u8,
    },
    #[error("slot {slot} byte {byte}: k + 7 = {code} is not 0..=14")]
    Shift { slot: usize, byte: usize, code: u8 },
    #[error("slot {slot} library: index {found} is past the last entry {last}")]
    Library {
        slot: usize,
        found: u32,
        last: usize,
    },
    #[error("slot {slot} rules: base chain depth {depth} is more than form {form} allows ({max})")]
    Depth {
        slot: usize,
        depth: usize,
        form: &'static str,
        max: usize,
    },
}

/// `SLOT_ROUTE` words of a form's reorder class (60 for a Benes network on
/// 256 bits, 5 on 32 columns, 1 for a library index); `None` for the
/// any-base forms, which have no register map.
pub fn route_word_count(form: Form) -> Option<usize> {
    if form.base == BaseClass::Any {
        return None;
    }
    Some(match form.reorder {
        ReorderClass::Partition | ReorderClass::ColumnsPartition | ReorderClass::Any => {
            benes::settings_bits(STREAM_BITS).div_ceil(32)
        }
        ReorderClass::Columns => benes::settings_bits(BLOCK_BYTES).div_ceil(32),
        ReorderClass::Library => 1,
    })
}

/// Settings bits of a form's reorder network (1920, 144), or for a library
/// the bits of its index, `ceil(log2(P + 1))` for `P` hard-wired
/// predictors; `None` for the any-base forms.
pub fn route_bits(form: Form, hard_wired: usize) -> Option<usize> {
    if form.base == BaseClass::Any {
        return None;
    }
    Some(match form.reorder {
        ReorderClass::Partition | ReorderClass::ColumnsPartition | ReorderClass::Any => {
            benes::settings_bits(STREAM_BITS)
        }
        ReorderClass::Columns => benes::settings_bits(BLOCK_BYTES),
        ReorderClass::Library => {
            let entries = hard_wired + 1;
            (usize::BITS - (entries - 1).leading_zeros()).max(1) as usize
        }
    })
}

/// Settings packed into words: bit `c` in word `c / 32`, bit `c % 32`.
fn pack(settings: &[bool]) -> Vec<u32> {
    let mut w = vec![0u32; settings.len().div_ceil(32)];
    for (c, &b) in settings.iter().enumerate() {
        if b {
            w[c / 32] |= 1 << (c % 32);
        }
    }
    w
}

/// Words unpacked into `bits` settings.
fn unpack(words: &[u32], bits: usize) -> Vec<bool> {
    (0..bits)
        .map(|c| (words[c / 32] >> (c % 32)) & 1 == 1)
        .collect()
}

/// The `SLOT_ROUTE` words of the loaded slot `slot` of form `form` in a
/// set with hard-wired predictors `hard_wired` (errors name slot 0;
/// [`image_writes`] names the slot).
pub fn route_words(
    form: Form,
    slot: &Slot,
    hard_wired: &[Predictor],
) -> Result<Vec<u32>, RegisterError> {
    slot_route_words(form, 0, slot, hard_wired)
}

fn slot_route_words(
    form: Form,
    index: usize,
    slot: &Slot,
    hard_wired: &[Predictor],
) -> Result<Vec<u32>, RegisterError> {
    if form.base == BaseClass::Any {
        return Err(RegisterError::AnyBaseForm { form: form.name });
    }
    let class = |class| RegisterError::ReorderClass {
        slot: index,
        form: form.name,
        class,
    };
    let route = |p: &[u8]| {
        benes::route(p).map_err(|source| RegisterError::Route {
            slot: index,
            source,
        })
    };
    match (form.reorder, &slot.reorder) {
        (ReorderClass::Partition, SlotReorder::Partition(_))
        | (ReorderClass::ColumnsPartition, SlotReorder::ColumnsPartition(..)) => {
            let p = slot.predictor("", hard_wired);
            Ok(pack(&route(&p.reorder)?))
        }
        (ReorderClass::Columns, SlotReorder::Columns(c)) => Ok(pack(&route(c)?)),
        (ReorderClass::Library, SlotReorder::Library(l)) => Ok(vec![*l as u32]),
        (ReorderClass::Partition, _) => Err(class("a partition")),
        (ReorderClass::ColumnsPartition, _) => Err(class("a column order and a partition")),
        (ReorderClass::Columns, _) => Err(class("a column order")),
        (ReorderClass::Library, _) => Err(class("a library index")),
        (ReorderClass::Any, _) => Err(RegisterError::AnyBaseForm { form: form.name }),
    }
}

/// The 8 `SLOT_RULES` words of a loaded slot: rule byte `4w + b` in bits
/// `[8b+7 : 8b]` of word `w`, the image's encoding (high nibble the stride
/// candidate, low nibble `k + 7`).
fn rules_words(slot: &Slot) -> [u32; RULES_WORDS] {
    let byte = |i: usize| -> u32 {
        match slot.rules[i] {
            ByteRule::Root => 7,
            ByteRule::Base { base, shift } => {
                let c = super::stride_candidate(i, base as usize).unwrap_or(0);
                ((c as u32) << 4) | (shift + 7) as u32
            }
        }
    };
    std::array::from_fn(|w| (0..4).map(|b| byte(4 * w + b) << (8 * b)).sum())
}

/// The writes that load `image` (made for `set`) with epoch `epoch`:
/// `EPOCH`, then for each slot `SLOT_FLAG`, `SLOT_RULES[0..8]` and
/// `SLOT_ROUTE[..]` (all zero for an unloaded slot), then `COMMIT = 1`.
/// Refused for an image the set does not accept ([`ProgrammedSet::new`]),
/// an any-base form, or more slots than the map has groups.
pub fn image_writes(
    set: &ModelSet,
    image: &SlotImage,
    epoch: u8,
) -> Result<Vec<RegisterWrite>, RegisterError> {
    let form = image.form;
    let Some(route_count) = route_word_count(form) else {
        return Err(RegisterError::AnyBaseForm { form: form.name });
    };
    let k = image.slots.len();
    if k > MAX_REGISTER_SLOTS {
        return Err(RegisterError::TooManySlots { k });
    }
    ProgrammedSet::new(set, image)?;
    let mut out = Vec::with_capacity(2 + k * (1 + RULES_WORDS + route_count));
    out.push(RegisterWrite {
        addr: EPOCH,
        value: epoch as u32,
    });
    for (s, slot) in image.slots.iter().enumerate() {
        let (flag, rules, route) = match slot {
            None => (0, [0; RULES_WORDS], vec![0; route_count]),
            Some(slot) => (
                1,
                rules_words(slot),
                slot_route_words(form, s, slot, &set.predictors)?,
            ),
        };
        out.push(RegisterWrite {
            addr: slot_flag(s),
            value: flag,
        });
        for (w, &value) in rules.iter().enumerate() {
            out.push(RegisterWrite {
                addr: slot_rules(s, w),
                value,
            });
        }
        for (w, &value) in route.iter().enumerate() {
            out.push(RegisterWrite {
                addr: slot_route(s, w),
                value,
            });
        }
    }
    out.push(RegisterWrite {
        addr: COMMIT,
        value: 1,
    });
    Ok(out)
}

/// The registers of one slot as the hardware stores them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SlotRegister {
    pub loaded: bool,
    /// Rule byte `i` (candidate `[6:4]`, `k + 7` `[3:0]`).
    pub rules: [u8; BLOCK_BYTES],
    /// The `SLOT_ROUTE` words (the bits past the form's settings are not
    /// stored: 0).
    pub route: Vec<u32>,
}

/// The register contents of K slots and the epoch (one copy: the shadow
/// or the active registers), at the reset value when new. A simulator
/// applies each write with [`SlotRegisters::write`] to its shadow copy and,
/// when it returns `true` (a commit), copies it to the active one between
/// blocks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SlotRegisters {
    pub form: Form,
    /// Hard-wired predictors of the unit (the library's size).
    pub hard_wired: usize,
    pub epoch: u8,
    pub slots: Vec<SlotRegister>,
}

impl SlotRegisters {
    /// The reset value of a unit with `k` slots of `form` and `hard_wired`
    /// hard-wired predictors: nothing loaded, epoch 0.
    pub fn new(form: Form, k: usize, hard_wired: usize) -> Result<SlotRegisters, RegisterError> {
        let Some(words) = route_word_count(form) else {
            return Err(RegisterError::AnyBaseForm { form: form.name });
        };
        if k > MAX_REGISTER_SLOTS {
            return Err(RegisterError::TooManySlots { k });
        }
        Ok(SlotRegisters {
            form,
            hard_wired,
            epoch: 0,
            slots: vec![
                SlotRegister {
                    loaded: false,
                    rules: [0; BLOCK_BYTES],
                    route: vec![0; words],
                };
                k
            ],
        })
    }

    /// Apply one write; a write to an address that names no register
    /// changes nothing. Returns whether it was a commit (`COMMIT` with bit
    /// 0 set).
    pub fn write(&mut self, w: RegisterWrite) -> bool {
        let addr = w.addr as usize & ((1 << ADDR_BITS) - 1);
        if addr != w.addr as usize {
            return false;
        }
        let (group, offset) = (addr >> 8, (addr & 0xff) as u16);
        if group == 0 {
            match w.addr {
                COMMIT => return w.value & 1 == 1,
                EPOCH => self.epoch = w.value as u8,
                _ => {}
            }
            return false;
        }
        let bits = route_bits(self.form, self.hard_wired).unwrap_or(0);
        let Some(slot) = self.slots.get_mut(group - 1) else {
            return false;
        };
        if offset == FLAG_OFFSET {
            slot.loaded = w.value & 1 == 1;
        } else if (RULES_OFFSET..ROUTE_OFFSET).contains(&offset) {
            let word = (offset - RULES_OFFSET) as usize;
            for b in 0..4 {
                slot.rules[4 * word + b] = (w.value >> (8 * b)) as u8 & RULE_BYTE_MASK;
            }
        } else if let Some(word) = (offset as usize)
            .checked_sub(ROUTE_OFFSET as usize)
            .filter(|&word| word < slot.route.len())
        {
            // the bits of this word that hold settings
            let held = bits.saturating_sub(32 * word).min(32);
            let mask = if held == 32 {
                u32::MAX
            } else {
                (1u32 << held) - 1
            };
            slot.route[word] = w.value & mask;
        }
        false
    }

    /// The registers after `writes` from the reset value, with the number
    /// of commits among them.
    pub fn from_writes(
        form: Form,
        k: usize,
        hard_wired: usize,
        writes: &[RegisterWrite],
    ) -> Result<(SlotRegisters, usize), RegisterError> {
        let mut r = SlotRegisters::new(form, k, hard_wired)?;
        let commits = writes.iter().filter(|&&w| r.write(w)).count();
        Ok((r, commits))
    }

    /// The predictor each slot holds (`None`: unloaded), named `slot{s}`
    /// as [`ProgrammedSet`] names them, with `set`'s hard-wired predictors
    /// as the library. Refused where the registers hold a rule or a
    /// library index no image gives (the units' behaviour is unspecified
    /// there).
    pub fn predictors(&self, set: &ModelSet) -> Result<Vec<Option<Predictor>>, RegisterError> {
        self.slots
            .iter()
            .enumerate()
            .map(|(s, r)| r.loaded.then(|| self.predictor(set, s, r)).transpose())
            .collect()
    }

    fn predictor(
        &self,
        set: &ModelSet,
        s: usize,
        r: &SlotRegister,
    ) -> Result<Predictor, RegisterError> {
        let mut bytes = [ByteRule::Root; BLOCK_BYTES];
        for (i, (rule, &v)) in bytes.iter_mut().zip(&r.rules).enumerate() {
            let (candidate, code) = (v >> 4, v & 15);
            if code > 14 {
                return Err(RegisterError::Shift {
                    slot: s,
                    byte: i,
                    code,
                });
            }
            if candidate == 0 {
                continue;
            }
            let stride = *STRIDES
                .get(candidate as usize - 1)
                .ok_or(RegisterError::Candidate {
                    slot: s,
                    byte: i,
                    candidate,
                })?;
            let base = i
                .checked_sub(stride as usize)
                .ok_or(RegisterError::StrideBeforeStart {
                    slot: s,
                    byte: i,
                    candidate,
                })?;
            *rule = ByteRule::Base {
                base: base as u8,
                shift: code as i8 - 7,
            };
        }
        // stride bases point to lower bytes: no cycle, only a depth
        let depth = rules_depth(&bytes).unwrap_or(usize::MAX);
        if depth > self.form.max_depth {
            return Err(RegisterError::Depth {
                slot: s,
                depth,
                form: self.form.name,
                max: self.form.max_depth,
            });
        }
        let identity = || -> [u8; STREAM_BITS] { std::array::from_fn(|o| o as u8) };
        let reorder: [u8; STREAM_BITS] = match self.form.reorder {
            ReorderClass::Library => {
                let l = r.route[0];
                match l as usize {
                    0 => identity(),
                    j if j <= set.predictors.len() => set.predictors[j - 1].reorder,
                    _ => {
                        return Err(RegisterError::Library {
                            slot: s,
                            found: l,
                            last: set.predictors.len(),
                        })
                    }
                }
            }
            ReorderClass::Columns => {
                let bits = benes::settings_bits(BLOCK_BYTES);
                let cols: Vec<u8> = (0..BLOCK_BYTES as u8).collect();
                let c = benes::apply(&unpack(&r.route, bits), &cols);
                let mut columns = [0u8; BLOCK_BYTES];
                columns.copy_from_slice(&c);
                column_major(&columns)
            }
            _ => {
                let bits = benes::settings_bits(STREAM_BITS);
                let y = benes::apply(&unpack(&r.route, bits), &identity());
                let mut reorder = [0u8; STREAM_BITS];
                reorder.copy_from_slice(&y);
                reorder
            }
        };
        Ok(Predictor {
            name: format!("slot{s}"),
            bytes,
            reorder,
        })
    }
}
