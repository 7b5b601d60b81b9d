//! The programmable predictor slots of the MPC units
//! (`docs/hw/program-slots.md`): what a unit's slots are ([`SlotSpec`]),
//! the configuration port with its shadow and active registers and the
//! commit that switches between them ([`ConfigBlock`]), the Benes networks
//! of the slot reorders ([`benes`], [`benes_inverse`], [`BenesPlan`]) and
//! the stride prediction of a slot byte ([`stride_prediction`]).
//!
//! The compressor and the decompressor build the same [`ConfigBlock`]:
//! declare its ports with [`ConfigPorts::declare`] (after the data inputs)
//! and [`ConfigOutputs::declare`] (after the data outputs), its registers
//! with [`ConfigBlock::new`] before the pipeline control, build the
//! pipeline with [`crate::stream::StreamOutputs::pipeline_held`] and
//! [`ConfigBlock::hold`], and finish with [`ConfigBlock::connect`]. The
//! active registers change only while no stage holds a block, so every
//! stage reads them directly: a block sees one image from its first stage
//! to its last.

use golden::mpc::program::{BaseClass, Form, ReorderClass, STRIDES};
use golden::mpc::{BLOCK_BYTES, STREAM_BITS};

use crate::circuits::{bits_for, eq_const, k, lookup, onehot_mux, popcount, wire};
use crate::ir::{Expr, IrError, Module, Reset};
use crate::stream::{OutPort, StreamInputs, StreamOutputs, StreamUnit};

/// Most programmable slots a unit is built with.
pub const MAX_SLOTS: usize = 4;
/// The slot form of `gen --program-slots` without `--slot-form`.
pub const DEFAULT_FORM: &str = "stride-colpart";
/// Compressor pipeline stages of a unit with slots by default (the slot
/// reorder and scoring take a stage more than the hard-wired predictors).
pub const SLOT_COMPRESSOR_STAGES: usize = 4;
/// Compressor pipeline stages a unit with slots may have: 5 gives the
/// slots' scores and the choice a stage each (for the exact selection
/// rule, whose code lengths take longer than zero-run scores).
pub const SLOT_COMPRESSOR_STAGE_RANGE: std::ops::RangeInclusive<usize> = 4..=5;

/// Width of `cfg_addr`.
pub const ADDR_BITS: u32 = 12;
/// Width of `cfg_wdata`.
pub const DATA_BITS: u32 = 32;
/// Width of the epochs (`cfg_epoch`, `out_epoch`, `in_epoch`).
pub const EPOCH_BITS: u32 = 8;
/// Address of `COMMIT`.
pub const REG_COMMIT: u32 = 0x000;
/// Address of `EPOCH`.
pub const REG_EPOCH: u32 = 0x001;
/// Word of `SLOT_FLAG` in a slot's group.
pub const SLOT_FLAG: u32 = 0;
/// First word of `SLOT_RULES` in a slot's group.
pub const SLOT_RULES: u32 = 1;
/// Words of `SLOT_RULES`.
pub const RULE_WORDS: u32 = 8;
/// First word of `SLOT_ROUTE` in a slot's group.
pub const SLOT_ROUTE: u32 = 9;
/// Bits of a candidate as stored (`[6:4]` of a rule byte).
pub const CAND_BITS: u32 = 3;
/// Bits of `k + 7` as stored (`[3:0]` of a rule byte).
pub const KCODE_BITS: u32 = 4;
/// Stored bits of a rule byte.
const RULE_BITS: u32 = CAND_BITS + KCODE_BITS;

/// The word address of word `word` of slot `s`'s group.
pub fn slot_address(s: usize, word: u32) -> u32 {
    0x100 * (1 + s as u32) + word
}

/// Why a slot configuration cannot be built.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SlotError {
    #[error("--program-slots {0}: a unit is built with 0 to {MAX_SLOTS} programmable slots")]
    Count(usize),
    #[error("--slot-form {0}: not a slot form (stride-part, stride-k0-part, stride-cols, stride-lib, stride-colpart, stride-colpart-d8)")]
    UnknownForm(String),
    #[error("--slot-form {0}: the any-base forms (full, any-part) are not built in RTL (their 32:1 base multiplexers and restoration chains are above the area budget); use a stride form")]
    AnyBase(&'static str),
    #[error("--compressor-stages {stages}: the compressor of these units is built with {}", depths(*min, *max))]
    CompressorStages {
        stages: usize,
        min: usize,
        max: usize,
    },
    #[error("--decompressor-stages {stages}: the decompressor of these units is built with {} (with slots: 4 to 8 plus the form's restoration stages)", depths(*min, *max))]
    DecompressorStages {
        stages: usize,
        min: usize,
        max: usize,
    },
}

/// `N stages` or `N to M stages`.
fn depths(min: usize, max: usize) -> String {
    if min == max {
        format!("{min} stages")
    } else {
        format!("{min} to {max} stages")
    }
}

/// How the hardware reorders a slot's stream, by the form's reorder class.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RouteClass {
    /// A Benes network on the 256 stream bits (partition; column order +
    /// partition).
    Bits,
    /// A Benes network on the 32 byte columns (column order).
    Columns,
    /// A `(P + 1):1` multiplexer per stream bit (library).
    Library,
}

/// The programmable slots of a unit: how many (`k`, 0 for none) and their
/// form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlotSpec {
    k: usize,
    form: Form,
}

impl Default for SlotSpec {
    fn default() -> SlotSpec {
        SlotSpec::none()
    }
}

impl SlotSpec {
    /// No slots: the hard-wired unit.
    pub fn none() -> SlotSpec {
        SlotSpec {
            k: 0,
            form: default_form(),
        }
    }

    /// `k` slots (0..=[`MAX_SLOTS`]) of `form`; the any-base forms are
    /// refused.
    pub fn new(k: usize, form: Form) -> Result<SlotSpec, SlotError> {
        if k > MAX_SLOTS {
            return Err(SlotError::Count(k));
        }
        if form.base == BaseClass::Any || form.reorder == ReorderClass::Any {
            return Err(SlotError::AnyBase(form.name));
        }
        Ok(SlotSpec { k, form })
    }

    /// The form named `name` on the command line, if the RTL builds it.
    pub fn parse_form(name: &str) -> Result<Form, SlotError> {
        let form = Form::by_name(name).ok_or_else(|| SlotError::UnknownForm(name.to_string()))?;
        SlotSpec::new(0, form).map(|s| s.form)
    }

    /// The number of slots.
    pub fn k(&self) -> usize {
        self.k
    }

    /// The slots' form.
    pub fn form(&self) -> Form {
        self.form
    }

    /// How the slots reorder their streams.
    pub fn route_class(&self) -> RouteClass {
        match self.form.reorder {
            ReorderClass::Columns => RouteClass::Columns,
            ReorderClass::Library => RouteClass::Library,
            _ => RouteClass::Bits,
        }
    }

    /// Bits of a slot's switch settings for `p` hard-wired predictors.
    pub fn route_bits(&self, p: usize) -> u32 {
        match self.route_class() {
            RouteClass::Bits => BenesPlan::settings_of(STREAM_BITS) as u32,
            RouteClass::Columns => BenesPlan::settings_of(BLOCK_BYTES) as u32,
            RouteClass::Library => bits_for(p as u64),
        }
    }

    /// `SLOT_ROUTE` words of a slot for `p` hard-wired predictors.
    pub fn route_words(&self, p: usize) -> u32 {
        self.route_bits(p).div_ceil(DATA_BITS)
    }
}

/// The form of `--slot-form`'s default.
fn default_form() -> Form {
    Form::by_name(DEFAULT_FORM).unwrap_or(golden::mpc::program::FORMS[6])
}

/// The model-ID arithmetic of a unit with `custom` custom models, `p`
/// hard-wired predictors and `k` slots.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ids {
    pub custom: usize,
    pub p: usize,
    pub k: usize,
}

impl Ids {
    /// The header width with `l` loaded slots:
    /// `max(1, ceil(log2(custom + p + l + 1)))`.
    pub fn header_bits(&self, l: usize) -> u32 {
        let n = self.custom + self.p + l + 1;
        let mut h = 1;
        while (1usize << h) < n {
            h += 1;
        }
        h
    }

    /// `H`: the header width with every slot loaded (the width of the
    /// model ports).
    pub fn max_header_bits(&self) -> u32 {
        self.header_bits(self.k)
    }

    /// The first slot's model ID (`custom + p`).
    pub fn first_slot_id(&self) -> usize {
        self.custom + self.p
    }
}

/// The configuration inputs `cfg_we`, `cfg_addr`, `cfg_wdata`.
pub struct ConfigPorts {
    pub we: Expr,
    pub addr: Expr,
    pub wdata: Expr,
}

impl ConfigPorts {
    /// Declares the configuration inputs (after the unit's data inputs).
    pub fn declare(u: &mut StreamInputs) -> Result<ConfigPorts, IrError> {
        Ok(ConfigPorts {
            we: u.input("cfg_we", 1)?,
            addr: u.input("cfg_addr", ADDR_BITS)?,
            wdata: u.input("cfg_wdata", DATA_BITS)?,
        })
    }
}

/// The configuration outputs `cfg_pending`, `cfg_epoch`.
pub struct ConfigOutputs {
    pending: OutPort,
    epoch: OutPort,
}

impl ConfigOutputs {
    /// Declares the configuration outputs (after the unit's data outputs).
    pub fn declare(u: &mut StreamOutputs) -> Result<ConfigOutputs, IrError> {
        Ok(ConfigOutputs {
            pending: u.output("cfg_pending", 1)?,
            epoch: u.output("cfg_epoch", EPOCH_BITS)?,
        })
    }
}

/// The active values of one slot, typed.
#[derive(Clone, Debug)]
pub struct ActiveSlot {
    /// 1: the slot is loaded.
    pub flag: Expr,
    /// Per byte: the stride candidate (3 bits: 0 root, 1..5 strides 1, 2,
    /// 4, 8, 16).
    pub cand: Vec<Expr>,
    /// Per byte: `k + 7` (4 bits).
    pub kcode: Vec<Expr>,
    /// The switch settings (setting `c` at bit `c`), or the library index.
    pub route: Expr,
    /// The slot's model ID (`custom + p` plus the loaded slots before it),
    /// `H` bits.
    pub id: Expr,
}

impl ActiveSlot {
    /// The switch settings, one 1-bit expression each, setting 0 first.
    pub fn settings(&self) -> Result<Vec<Expr>, IrError> {
        (0..self.route.width()).map(|c| self.route.bit(c)).collect()
    }
}

/// A shadow/active register pair.
struct Pair {
    shadow: crate::ir::Signal,
    active: crate::ir::Signal,
}

/// The configuration registers of a unit with slots: shadow and active
/// copies of every register of the map, the pending commit, and the typed
/// active values the coder reads.
pub struct ConfigBlock {
    spec: SlotSpec,
    ids: Ids,
    pending: crate::ir::Signal,
    /// A write to `COMMIT` with bit 0 set.
    commit: Expr,
    pairs: Vec<Pair>,
    /// The active values of each slot.
    pub slots: Vec<ActiveSlot>,
    /// The active epoch (8 bits).
    pub epoch: Expr,
    /// `L`: the loaded slots of the active image.
    pub loaded: Expr,
    /// The raw escape's model ID, `custom + p + L` (`H` bits).
    pub raw_id: Expr,
    /// `h(L)`, the header width of the active image.
    pub header_bits: Expr,
    /// `H - h(L)`: how far a header of `H` bits is too wide.
    pub header_excess: Expr,
}

impl ConfigBlock {
    /// Declares the registers of the map for `spec` with the model IDs of
    /// `ids` (section `configuration registers`), the shadow copies written
    /// from `ports`. The active copies and the pending commit get their
    /// next values in [`ConfigBlock::connect`], once the pipeline exists.
    pub fn new(
        m: &mut Module,
        spec: SlotSpec,
        ids: Ids,
        ports: &ConfigPorts,
    ) -> Result<ConfigBlock, IrError> {
        let resume = m.current_section().map(str::to_string);
        m.section("configuration registers: shadow copies, active copies, commit")?;
        let group = wire(m, "cfg_group", ports.addr.slice(ADDR_BITS - 1, 8)?)?;
        let word = wire(m, "cfg_word", ports.addr.slice(7, 0)?)?;
        let global = wire(m, "cfg_write_global", ports.we.and(&eq_const(&group, 0)?)?)?;
        let commit = wire(
            m,
            "cfg_write_commit",
            global
                .and(&eq_const(&word, REG_COMMIT as u128)?)?
                .and(&ports.wdata.bit(0)?)?,
        )?;
        let mut pairs = Vec::new();
        let pair = |m: &mut Module,
                    pairs: &mut Vec<Pair>,
                    name: &str,
                    width: u32|
         -> Result<usize, IrError> {
            let reset = || -> Result<Reset, IrError> {
                Ok(Reset::Bits(crate::ir::Bits::from_u128(0, width)?))
            };
            let shadow = m.reg(&format!("cfg_shadow_{name}"), width, reset()?)?;
            let active = m.reg(&format!("cfg_active_{name}"), width, reset()?)?;
            pairs.push(Pair { shadow, active });
            Ok(pairs.len() - 1)
        };
        // the epoch
        let e = pair(m, &mut pairs, "epoch", EPOCH_BITS)?;
        let epoch_we = global.and(&eq_const(&word, REG_EPOCH as u128)?)?;
        m.reg_next(
            &pairs[e].shadow,
            ports.wdata.slice(EPOCH_BITS - 1, 0)?,
            Some(epoch_we),
        )?;
        let p = ids.p;
        let route_bits = spec.route_bits(p);
        let route_words = spec.route_words(p);
        // word hits shared by the slots' groups
        let words = SLOT_ROUTE + route_words;
        let hits: Vec<Expr> = (0..words)
            .map(|w| eq_const(&word, w as u128))
            .collect::<Result<_, _>>()?;
        let hits = wire(m, "cfg_word_hits", Expr::concat(hits.into_iter().rev())?)?;
        let hit = |w: u32| hits.bit(w);
        let mut raw_slots = Vec::with_capacity(spec.k);
        for s in 0..spec.k {
            let we = wire(
                m,
                &format!("cfg_write_s{s}"),
                ports.we.and(&eq_const(&group, 1 + s as u128)?)?,
            )?;
            let f = pair(m, &mut pairs, &format!("s{s}_flag"), 1)?;
            m.reg_next(
                &pairs[f].shadow,
                ports.wdata.bit(0)?,
                Some(we.and(&hit(SLOT_FLAG)?)?),
            )?;
            // rules: byte i at bits [7i+6 : 7i], candidate above k + 7
            let r = pair(
                m,
                &mut pairs,
                &format!("s{s}_rules"),
                RULE_BITS * BLOCK_BYTES as u32,
            )?;
            let cur = pairs[r].shadow.expr();
            let mut next = Vec::with_capacity(BLOCK_BYTES);
            for i in 0..BLOCK_BYTES as u32 {
                let (w, b) = (i / 4, i % 4);
                let new = ports.wdata.slice(8 * b + 6, 8 * b)?;
                let old = cur.slice(RULE_BITS * i + RULE_BITS - 1, RULE_BITS * i)?;
                next.push(Expr::mux(&hit(SLOT_RULES + w)?, &new, &old)?);
            }
            m.reg_next(
                &pairs[r].shadow,
                Expr::concat(next.into_iter().rev())?,
                Some(we.clone()),
            )?;
            // route: settings bit c in word c / 32, bit c % 32
            let t = pair(m, &mut pairs, &format!("s{s}_route"), route_bits)?;
            let cur = pairs[t].shadow.expr();
            let mut next = Vec::with_capacity(route_words as usize);
            for w in 0..route_words {
                let lo = DATA_BITS * w;
                let hi = (lo + DATA_BITS).min(route_bits) - 1;
                let new = ports.wdata.slice(hi - lo, 0)?;
                next.push(Expr::mux(&hit(SLOT_ROUTE + w)?, &new, &cur.slice(hi, lo)?)?);
            }
            m.reg_next(
                &pairs[t].shadow,
                Expr::concat(next.into_iter().rev())?,
                Some(we),
            )?;
            raw_slots.push((f, r, t));
        }
        // the data bits no register reads: above the epoch without slots;
        // bits 15, 23, 31 (bit 7 of rule bytes 1..3) when no route word
        // is 32 bits wide
        if let Some(sig) = ports.wdata.as_signal().cloned() {
            if spec.k == 0 {
                m.mark_unused(&sig, DATA_BITS - 1, EPOCH_BITS)?;
            } else {
                for b in [15u32, 23, 31] {
                    if b >= route_bits {
                        m.mark_unused(&sig, b, b)?;
                    }
                }
            }
        }
        let pending = m.reg("cfg_commit_pending", 1, Reset::Value(0))?;
        // typed active values
        let flags: Vec<Expr> = raw_slots
            .iter()
            .map(|&(f, _, _)| pairs[f].active.expr())
            .collect();
        let h = ids.max_header_bits();
        let mut slots = Vec::with_capacity(spec.k);
        for (s, &(f, r, t)) in raw_slots.iter().enumerate() {
            let rules = pairs[r].active.expr();
            let cand = (0..BLOCK_BYTES as u32)
                .map(|i| rules.slice(RULE_BITS * i + RULE_BITS - 1, RULE_BITS * i + KCODE_BITS))
                .collect::<Result<_, _>>()?;
            let kcode = (0..BLOCK_BYTES as u32)
                .map(|i| rules.slice(RULE_BITS * i + KCODE_BITS - 1, RULE_BITS * i))
                .collect::<Result<_, _>>()?;
            let before = popcount(&flags[..s])?;
            let id = if s == 0 {
                k(ids.first_slot_id() as u128, h)?
            } else {
                before
                    .zext(h.max(before.width()))?
                    .add(&k(ids.first_slot_id() as u128, h.max(before.width()))?)?
                    .trunc(h)?
            };
            // byte 0 has no stride base: its rule is never read
            m.mark_unused(&pairs[r].active, RULE_BITS - 1, 0)?;
            slots.push(ActiveSlot {
                flag: pairs[f].active.expr(),
                cand,
                kcode,
                route: pairs[t].active.expr(),
                id,
            });
        }
        // (expressions, not wires: a unit uses those it needs)
        let loaded = if spec.k == 0 {
            k(0, 1)?
        } else {
            popcount(&flags)?
        };
        let iw = h.max(loaded.width());
        let raw_id = loaded
            .zext(iw)?
            .add(&k(ids.first_slot_id() as u128, iw)?)?
            .trunc(h)?;
        let hw = bits_for(h as u64);
        let table: Vec<u64> = (0..=spec.k).map(|l| ids.header_bits(l) as u64).collect();
        let header_bits = lookup(&loaded, &table, hw)?;
        let excess: Vec<u64> = table.iter().map(|&t| h as u64 - t).collect();
        let header_excess = lookup(&loaded, &excess, bits_for(h as u64 - table[0]))?;
        let epoch = pairs[e].active.expr();
        if let Some(title) = resume {
            m.section(&title)?;
        }
        Ok(ConfigBlock {
            spec,
            ids,
            pending,
            commit,
            pairs,
            slots,
            epoch,
            loaded,
            raw_id,
            header_bits,
            header_excess,
        })
    }

    /// The slot specification.
    pub fn spec(&self) -> SlotSpec {
        self.spec
    }

    /// The model-ID arithmetic.
    pub fn ids(&self) -> Ids {
        self.ids
    }

    /// What holds the input while a commit waits: the pending flag.
    pub fn hold(&self) -> Expr {
        self.pending.expr()
    }

    /// Gives the active registers and the pending flag their next values
    /// (the active copies load their shadows in a cycle where a commit is
    /// pending and no stage of `u` holds a block; the pending flag falls
    /// then, and rises the cycle after a write to `COMMIT` with bit 0 set)
    /// and drives `cfg_pending` and `cfg_epoch`.
    pub fn connect(&self, u: &mut StreamUnit, outputs: &ConfigOutputs) -> Result<(), IrError> {
        let resume = u.m.current_section().map(str::to_string);
        u.m.section("configuration commit: the active image loads between blocks")?;
        let busy = Expr::concat(u.pipe.valid.iter().map(|v| v.expr()))?.reduce_or();
        let load = wire(&mut u.m, "cfg_load", self.pending.expr().and(&busy.not())?)?;
        for p in &self.pairs {
            u.m.reg_next(&p.active, p.shadow.expr(), Some(load.clone()))?;
        }
        let commit = self.commit.clone();
        u.m.reg_next(
            &self.pending,
            commit.or(&self.pending.expr().and(&load.not())?)?,
            None,
        )?;
        u.drive(&outputs.pending, self.pending.expr())?;
        u.drive(&outputs.epoch, self.epoch.clone())?;
        if let Some(title) = resume {
            u.m.section(&title)?;
        }
        Ok(())
    }
}

/// The Benes network `B(N)` (`docs/hw/program-slots.md` section 2) laid
/// out level by level: values live in `N` lanes; every level is `N / 2`
/// switches, each exchanging the values of two lanes when its setting is
/// 1; the recursion only renames lanes: input lane `i` holds `x[i]`, and
/// `y[o]` is in lane [`BenesPlan::out_lane`]`(o)` after the last level.
#[derive(Clone, Debug)]
pub struct BenesPlan {
    n: usize,
    /// Per level: (setting index, first lane, second lane) per switch; the
    /// first lane receives the switch's first output.
    levels: Vec<Vec<(usize, usize, usize)>>,
    out_lanes: Vec<usize>,
}

impl BenesPlan {
    /// The plan of `B(n)`; `n` a power of two, at least 2.
    pub fn new(n: usize) -> Result<BenesPlan, IrError> {
        if n < 2 || !n.is_power_of_two() {
            return Err(IrError::ParameterOutOfRange {
                what: "Benes network inputs (a power of two)".to_string(),
                value: n as u64,
                min: 2,
                max: 1 << 16,
            });
        }
        let depth = 2 * n.trailing_zeros() as usize - 1;
        let mut levels = vec![Vec::with_capacity(n / 2); depth];
        let lanes: Vec<usize> = (0..n).collect();
        let out_lanes = Self::build(&lanes, 0, 0, &mut levels);
        Ok(BenesPlan {
            n,
            levels,
            out_lanes,
        })
    }

    /// Settings bits of `B(n)`: `(2 log2(n) - 1) n / 2`.
    pub fn settings_of(n: usize) -> usize {
        (2 * n.trailing_zeros() as usize).saturating_sub(1) * n / 2
    }

    /// The sub-network on `lanes` (its inputs in order) with settings from
    /// `setting` and its first level at `level`; its outputs' lanes.
    fn build(
        lanes: &[usize],
        setting: usize,
        level: usize,
        levels: &mut [Vec<(usize, usize, usize)>],
    ) -> Vec<usize> {
        let n = lanes.len();
        if n == 2 {
            levels[level].push((setting, lanes[0], lanes[1]));
            return lanes.to_vec();
        }
        let half = n / 2;
        let sub = Self::settings_of(half);
        let sub_depth = 2 * half.trailing_zeros() as usize - 1;
        for i in 0..half {
            levels[level].push((setting + i, lanes[2 * i], lanes[2 * i + 1]));
        }
        let upper: Vec<usize> = (0..half).map(|i| lanes[2 * i]).collect();
        let lower: Vec<usize> = (0..half).map(|i| lanes[2 * i + 1]).collect();
        let up = Self::build(&upper, setting + half, level + 1, levels);
        let low = Self::build(&lower, setting + half + sub, level + 1, levels);
        let out_level = level + sub_depth + 1;
        let out_setting = setting + half + 2 * sub;
        let mut out = Vec::with_capacity(n);
        for j in 0..half {
            levels[out_level].push((out_setting + j, up[j], low[j]));
            out.push(up[j]);
            out.push(low[j]);
        }
        out
    }

    /// Inputs (and outputs) of the network.
    pub fn inputs(&self) -> usize {
        self.n
    }

    /// Switch levels: `2 log2(n) - 1`.
    pub fn depth(&self) -> usize {
        self.levels.len()
    }

    /// The lane that holds output `o` after the last level.
    pub fn out_lane(&self, o: usize) -> usize {
        self.out_lanes[o]
    }

    /// Levels `levels` (in order) applied to the lane values `lanes`, each
    /// level a named wire `<name>_l<level>` (lane 0 in the low bits).
    pub fn run(
        &self,
        m: &mut Module,
        name: &str,
        settings: &[Expr],
        lanes: Vec<Expr>,
        levels: std::ops::Range<usize>,
    ) -> Result<Vec<Expr>, IrError> {
        self.run_levels(m, name, settings, lanes, levels.collect())
    }

    /// Levels `levels` in reverse order (the inverse of [`BenesPlan::run`]
    /// over the same range).
    pub fn run_inverse(
        &self,
        m: &mut Module,
        name: &str,
        settings: &[Expr],
        lanes: Vec<Expr>,
        levels: std::ops::Range<usize>,
    ) -> Result<Vec<Expr>, IrError> {
        self.run_levels(m, name, settings, lanes, levels.rev().collect())
    }

    fn run_levels(
        &self,
        m: &mut Module,
        name: &str,
        settings: &[Expr],
        mut lanes: Vec<Expr>,
        order: Vec<usize>,
    ) -> Result<Vec<Expr>, IrError> {
        if lanes.len() != self.n || settings.len() != Self::settings_of(self.n) {
            return Err(IrError::ParameterOutOfRange {
                what: format!(
                    "`{name}`: inputs (settings {} of {})",
                    settings.len(),
                    Self::settings_of(self.n)
                ),
                value: lanes.len() as u64,
                min: self.n as u64,
                max: self.n as u64,
            });
        }
        let w = lanes.first().map_or(1, Expr::width);
        for l in order {
            let level = self.levels.get(l).ok_or(IrError::ParameterOutOfRange {
                what: format!("`{name}`: Benes level"),
                value: l as u64,
                min: 0,
                max: self.levels.len() as u64 - 1,
            })?;
            let mut next = lanes.clone();
            for &(c, a, b) in level {
                let sw = &settings[c];
                next[a] = Expr::mux(sw, &lanes[b], &lanes[a])?;
                next[b] = Expr::mux(sw, &lanes[a], &lanes[b])?;
            }
            let bus = wire(
                m,
                &format!("{name}_l{l}"),
                Expr::concat(next.into_iter().rev())?,
            )?;
            lanes = (0..self.n as u32)
                .map(|q| bus.slice(w * q + w - 1, w * q))
                .collect::<Result<_, _>>()?;
        }
        Ok(lanes)
    }

    /// The outputs `y` from the lane values after the last level.
    pub fn outputs(&self, lanes: &[Expr]) -> Vec<Expr> {
        self.out_lanes.iter().map(|&q| lanes[q].clone()).collect()
    }

    /// The lane values that hold the outputs `y` (the inverse's start).
    pub fn lanes_of_outputs(&self, y: &[Expr]) -> Vec<Expr> {
        let mut lanes = y.to_vec();
        for (o, &q) in self.out_lanes.iter().enumerate() {
            lanes[q] = y[o].clone();
        }
        lanes
    }
}

/// `B(N)` forward: `y` from `x = inputs` (elements of any one width) with
/// the switch settings `settings` (1 bit each, in the order of the
/// definition). Every level is a named wire `<name>_l<level>`.
pub fn benes(
    m: &mut Module,
    name: &str,
    settings: &[Expr],
    inputs: &[Expr],
) -> Result<Vec<Expr>, IrError> {
    let plan = BenesPlan::new(inputs.len())?;
    let lanes = plan.run(m, name, settings, inputs.to_vec(), 0..plan.depth())?;
    Ok(plan.outputs(&lanes))
}

/// `B(N)` inverse: `x` from `y = inputs`, the levels in reverse order.
pub fn benes_inverse(
    m: &mut Module,
    name: &str,
    settings: &[Expr],
    inputs: &[Expr],
) -> Result<Vec<Expr>, IrError> {
    let plan = BenesPlan::new(inputs.len())?;
    let lanes = plan.lanes_of_outputs(inputs);
    plan.run_inverse(m, name, settings, lanes, 0..plan.depth())
}

/// The stride prediction of byte `i` of a slot: the base byte by the
/// candidate `cand` (3 bits: 0 the constant 0; `c` in 1..=5 byte
/// `i - STRIDES[c - 1]` of `bytes`, 0 where that is before byte 0; 6, 7
/// give 0), shifted by `kcode` = `k + 7` (4 bits: left `k` for `k > 0`,
/// right `-k` for `k < 0`, as the prediction of `docs/spec/mpc.md`;
/// `kcode = 15` shifts left by 8, giving 0). The base is the wire
/// `<name>_base`. Only the bytes `i - s` of `bytes` are read.
pub fn stride_prediction(
    m: &mut Module,
    name: &str,
    bytes: &[Expr],
    i: usize,
    cand: &Expr,
    kcode: &Expr,
) -> Result<Expr, IrError> {
    let mut sel = Vec::new();
    let mut vals = Vec::new();
    for (c, &s) in STRIDES.iter().enumerate() {
        if let Some(b) = i.checked_sub(s as usize) {
            let byte = bytes.get(b).ok_or(IrError::ParameterOutOfRange {
                what: format!("`{name}`: base byte"),
                value: b as u64,
                min: 0,
                max: bytes.len().saturating_sub(1) as u64,
            })?;
            sel.push(eq_const(cand, c as u128 + 1)?);
            vals.push(byte.clone());
        }
    }
    let base = if sel.is_empty() {
        k(0, 8)?
    } else {
        wire(m, &format!("{name}_base"), onehot_mux(&sel, &vals)?)?
    };
    if base.as_const().is_some() {
        return Ok(base);
    }
    // left: (base << 1) << kcode[2:0] when kcode[3]; right: base >>
    // ~kcode[2:0] otherwise
    let mut left = base.shl(1);
    let mut right = base.clone();
    for b in 0..3u32 {
        let bit = kcode.bit(b)?;
        left = Expr::mux(&bit, &left.shl(1 << b), &left)?;
        right = Expr::mux(&bit, &right, &right.shr(1 << b))?;
    }
    Expr::mux(&kcode.bit(3)?, &left, &right)
}

/// The 256-bit stream of a slot with library reorder index `index`:
/// entry 0 the natural order, entry `1 + j` the reorder `library[j]`
/// (`reorder[o]` the natural index at stream position `o`); an index past
/// the library gives the natural order. Stream bit `o` is bus bit `255 - o`;
/// natural index `n` is bit `32 (7 - n / 32) + n % 32` of `xored`.
pub fn library_reorder(
    index: &Expr,
    library: &[[u8; STREAM_BITS]],
    xored: &Expr,
) -> Result<Expr, IrError> {
    let natural = |n: usize| -> Result<Expr, IrError> {
        let n = n as u32;
        xored.bit(32 * (7 - n / 32) + n % 32)
    };
    let sel: Vec<Expr> = (0..library.len())
        .map(|j| eq_const(index, j as u128 + 1))
        .collect::<Result<_, _>>()?;
    let none = if sel.is_empty() {
        Expr::bool(true)
    } else {
        Expr::concat(sel.clone())?.reduce_or().not()
    };
    let mut stream = Vec::with_capacity(STREAM_BITS);
    for o in 0..STREAM_BITS {
        let mut bit = none.and(&natural(o)?)?;
        for (j, r) in library.iter().enumerate() {
            bit = bit.or(&sel[j].and(&natural(r[o] as usize)?)?)?;
        }
        stream.push(bit);
    }
    Expr::concat(stream)
}
