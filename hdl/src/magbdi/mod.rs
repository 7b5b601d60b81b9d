//! Generators of the MAG-aware BDI compressor and decompressor RTL
//! (docs/hw/mag-bdi.md) from a [`golden::magbdi::Params`].
//!
//! * [`compressor`]: one compressor unit per delta width of Eq. 1 in
//!   parallel (mux-tree base select, per-value fit checks without a
//!   full-width subtraction), the one-hot select of the smallest size that
//!   fits (else raw) and a registered output; one block per cycle, latency
//!   1 by default, 2 with the base selection in a stage of its own.
//! * [`decompressor`]: field extraction per size, a select by the encoding,
//!   and one vector add (prefix adders on the fields' bits, the base's
//!   high part plus or minus one above them) with the bitmask; latency 1.

pub mod compressor;
pub mod decompressor;

use std::path::{Path, PathBuf};

use golden::magbdi::{Params, Table};

use crate::circuits::{k, wire};
use crate::family::{Family, GenError, Side, Unit};
use crate::ir::{Expr, IrError, Module};
use crate::params::{FamilyParams, MagBdiKeys, SizeEntry};
use crate::unit::UnitDescription;

/// The MAG-aware BDI units, in the order of `params.json`.
pub const UNITS: [Unit; 2] = [
    Unit::MagBdi(Side::Compressor),
    Unit::MagBdi(Side::Decompressor),
];

/// Pipeline latency of both units at the default depth (registered
/// outputs): the paper's 1-cycle compression and decompression.
pub const LATENCY: usize = 1;

/// The deepest pipeline of the compressor (stage 1: the zero-base checks
/// and the base of every compressor unit; stage 2: the rest).
pub const MAX_COMPRESSOR_STAGES: usize = 2;

/// The deepest pipeline of the decompressor: one stage (its field select
/// and prefix adders meet the MPC units' clock in one).
pub const MAX_DECOMPRESSOR_STAGES: usize = 1;

/// The default output directory name: `bdi-<block>-<mag>-<base>[-signed]`
/// (`bdi-128-32-4` for 128-byte blocks, a 32-byte MAG and 4-byte bases).
pub fn config_name(p: &Params) -> String {
    format!(
        "bdi-{}-{}-{}{}",
        p.block_bytes,
        p.mag_bytes,
        p.base_bytes,
        if p.mode == golden::magbdi::DeltaMode::Signed {
            "-signed"
        } else {
            ""
        }
    )
}

impl Family for Table {
    const NAME: &'static str = "MAG-aware BDI";
    const UNITS: &'static [Unit] = &UNITS;

    fn build(&self, unit: Unit) -> Result<(Module, UnitDescription), GenError> {
        Ok(match unit {
            Unit::MagBdi(Side::Compressor) => compressor::build_described(self)?,
            Unit::MagBdi(Side::Decompressor) => decompressor::build_described(self)?,
            other => return Err(Self::other_family(other)),
        })
    }

    fn header_lines(&self) -> Vec<String> {
        let p = &self.params;
        let sizes: Vec<String> = self
            .sizes
            .iter()
            .enumerate()
            .map(|(i, s)| format!("{i}={}B/{}b", s.bytes, s.delta_bits))
            .collect();
        vec![
            format!(
                "MAG-aware BDI: block {} B, MAG {} B, base {} B, {} deltas, {}-bit encoding",
                p.block_bytes,
                p.mag_bytes,
                p.base_bytes,
                p.mode,
                self.encoding_bits()
            ),
            format!(
                "Encodings (size/delta width, Eq. 1): {}, {}=raw",
                sizes.join(", "),
                self.raw_code()
            ),
        ]
    }

    fn params(&self) -> FamilyParams {
        let p = &self.params;
        FamilyParams::MagBdi(MagBdiKeys {
            block_bytes: p.block_bytes,
            mag_bytes: p.mag_bytes,
            base_bytes: p.base_bytes,
            mode: p.mode.to_string(),
            encoding_bits: self.encoding_bits(),
            raw_code: self.raw_code(),
            sizes: self
                .sizes
                .iter()
                .map(|s| SizeEntry {
                    bytes: s.bytes,
                    delta_bits: s.delta_bits,
                })
                .collect(),
        })
    }
}

/// Validate `params`, generate `units` into `out_dir` (with `files.f` and
/// `params.json`), and return the written paths. Bad parameters (e.g. no
/// delta width fits) fail before anything is written.
pub fn write_units(
    params: Params,
    out_dir: &Path,
    units: &[Unit],
    command_line: &str,
) -> Result<Vec<PathBuf>, GenError> {
    crate::family::write_units(&Table::new(params)?, out_dir, units, command_line)
}

/// The pipeline depths of both units (the decompressor's one stage, kept
/// here so that both units are described alike).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stages {
    /// Stages of `bdi_compressor` (1 to [`MAX_COMPRESSOR_STAGES`]).
    pub compressor: usize,
    /// Stages of `bdi_decompressor` (1 to [`MAX_DECOMPRESSOR_STAGES`]).
    pub decompressor: usize,
}

impl Default for Stages {
    fn default() -> Stages {
        Stages {
            compressor: LATENCY,
            decompressor: LATENCY,
        }
    }
}

impl Stages {
    /// Both depths, checked against their ranges.
    pub fn new(compressor: usize, decompressor: usize) -> Result<Stages, IrError> {
        check_stages(compressor::MODULE, compressor, MAX_COMPRESSOR_STAGES)?;
        check_stages(decompressor::MODULE, decompressor, MAX_DECOMPRESSOR_STAGES)?;
        Ok(Stages {
            compressor,
            decompressor,
        })
    }
}

/// `stages` of `module` within 1..=`max`.
pub(crate) fn check_stages(module: &str, stages: usize, max: usize) -> Result<(), IrError> {
    if (1..=max).contains(&stages) {
        Ok(())
    } else {
        Err(IrError::ParameterOutOfRange {
            what: format!("pipeline stages of `{module}`"),
            value: stages as u64,
            min: 1,
            max: max as u64,
        })
    }
}

/// A size table with the pipeline depths of its units: what `gen magbdi`
/// generates ([`Table`] alone is the default depth).
#[derive(Clone, Debug)]
pub struct Staged {
    pub table: Table,
    pub stages: Stages,
}

impl Family for Staged {
    const NAME: &'static str = <Table as Family>::NAME;
    const UNITS: &'static [Unit] = &UNITS;

    fn build(&self, unit: Unit) -> Result<(Module, UnitDescription), GenError> {
        Ok(match unit {
            Unit::MagBdi(Side::Compressor) => {
                compressor::build_staged(&self.table, self.stages.compressor)?
            }
            Unit::MagBdi(Side::Decompressor) => {
                decompressor::build_staged(&self.table, self.stages.decompressor)?
            }
            other => return Err(Self::other_family(other)),
        })
    }

    fn header_lines(&self) -> Vec<String> {
        let mut lines = self.table.header_lines();
        if self.stages != Stages::default() {
            lines.push(format!(
                "Pipeline stages: compressor {}, decompressor {}",
                self.stages.compressor, self.stages.decompressor
            ));
        }
        lines
    }

    fn params(&self) -> FamilyParams {
        self.table.params()
    }
}

/// [`write_units`] at the pipeline depths `stages`.
pub fn write_units_staged(
    params: Params,
    stages: Stages,
    out_dir: &Path,
    units: &[Unit],
    command_line: &str,
) -> Result<Vec<PathBuf>, GenError> {
    let staged = Staged {
        table: Table::new(params)?,
        stages: Stages::new(stages.compressor, stages.decompressor)?,
    };
    crate::family::write_units(&staged, out_dir, units, command_line)
}

/// Inclusive prefix OR of `flags` (bit `j`: the OR of bits `0..=j`) as a
/// Kogge-Stone tree: ceil(log2 n) levels of 2-input ORs, each level the
/// named wire `<name>_or<span>`.
pub(crate) fn prefix_or(m: &mut Module, name: &str, flags: &Expr) -> Result<Expr, IrError> {
    let n = flags.width();
    let mut cur = flags.clone();
    let mut span = 1u32;
    while span < n {
        let bits = (0..n)
            .map(|j| {
                if j >= span {
                    cur.bit(j)?.or(&cur.bit(j - span)?)
                } else {
                    cur.bit(j)
                }
            })
            .collect::<Result<Vec<_>, _>>()?;
        span *= 2;
        cur = wire(
            m,
            &format!("{name}_or{span}"),
            Expr::concat(bits.into_iter().rev())?,
        )?;
    }
    Ok(cur)
}

/// The one-hot of the lowest set bit of `flags` (bit `j`: flag `j` set and
/// none below it, from the [`prefix_or`] of the flags but the last) and
/// whether no flag is set.
pub(crate) fn first_one(
    m: &mut Module,
    name: &str,
    flags: &Expr,
) -> Result<(Vec<Expr>, Expr), IrError> {
    let n = flags.width();
    let top = flags.bit(n - 1)?;
    if n == 1 {
        return Ok((vec![top.clone()], top.not()));
    }
    let below = prefix_or(m, name, &flags.slice(n - 2, 0)?)?;
    let first = (0..n)
        .map(|j| {
            let f = flags.bit(j)?;
            if j == 0 {
                Ok(f)
            } else {
                f.and(&below.bit(j - 1)?.not())
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok((first, below.bit(n - 2)?.or(&top)?.not()))
}

/// The first of `values` (of one width) whose bit of `covered` is clear,
/// zero when every bit is set, as a balanced tree of 2:1 muxes: a node
/// takes its lower half's pick when a bit of that half is clear (a NAND
/// over `covered`, ready before the values reach the node), else its upper
/// half's; only the last value is masked by its bit (it is reached only
/// when every other bit is set). Each level is the named wire
/// `<name>_pick<level>`.
pub(crate) fn first_uncovered(
    m: &mut Module,
    name: &str,
    covered: &Expr,
    values: &[Expr],
) -> Result<Expr, IrError> {
    let n = values.len();
    let width = values.first().map_or(1, Expr::width);
    let mut level: Vec<Expr> = values.to_vec();
    if let Some(last) = level.last_mut() {
        *last = last.and(&covered.bit(n as u32 - 1)?.not().repeat(width)?)?;
    }
    // nodes of this level cover `span` values each
    let mut span = 1usize;
    let mut depth = 0;
    while level.len() > 1 {
        let next = level
            .chunks(2)
            .enumerate()
            .map(|(k, pair)| match pair {
                [lo, hi] => {
                    let first = (2 * k * span) as u32;
                    let sel = covered
                        .slice(first + span as u32 - 1, first)?
                        .reduce_and()
                        .not();
                    Expr::mux(&sel, lo, hi)
                }
                _ => Ok(pair[0].clone()),
            })
            .collect::<Result<Vec<_>, _>>()?;
        span *= 2;
        depth += 1;
        level = if next.len() > 1 {
            let all = wire(
                m,
                &format!("{name}_pick{depth}"),
                Expr::concat(next.iter().rev().cloned())?,
            )?;
            (0..next.len() as u32)
                .map(|i| all.slice(width * i + width - 1, width * i))
                .collect::<Result<_, _>>()?
        } else {
            next
        };
    }
    Ok(level.remove(0))
}

/// `a - b` lane by lane (lanes of `lane` bits from bit 0 up; the width a
/// multiple of `lane`), each lane a Kogge-Stone prefix subtractor: the
/// gates of [`crate::circuits::sub_prefix`], built from word operations.
/// Each level shifts the generate and propagate words up by its span (a
/// select and a concatenation) and clears (generate) or sets (propagate)
/// the low span bits of every lane with a constant mask, so the number of
/// expressions grows with log2(`lane`) only, not with the lanes or the
/// bits. Each level is the named wire pair `<name>_g<span>`,
/// `<name>_p<span>`.
pub(crate) fn sub_lanes(
    m: &mut Module,
    name: &str,
    a: &Expr,
    b: &Expr,
    lane: u32,
) -> Result<Expr, IrError> {
    let w = a.width();
    if lane == 0 || lane > 127 || !w.is_multiple_of(lane) {
        return Err(IrError::ParameterOutOfRange {
            what: format!("subtractor lane width (at most 127, dividing the operand width {w})"),
            value: lane as u64,
            min: 1,
            max: w.min(127) as u64,
        });
    }
    let lanes = w / lane;
    let nb = b.not();
    // (the XOR refuses operands of different widths)
    let prop = a.xor(&nb)?;
    // `x` shifted up by `s` (< `lane`) bits within every lane, the low `s`
    // bits of each lane set (`ones`) or clear
    let shift = |x: &Expr, s: u32, ones: bool| -> Result<Expr, IrError> {
        let up = Expr::concat([x.slice(w - 1 - s, 0)?, k(0, s)?])?;
        let low = (1u128 << s) - 1;
        if ones {
            up.or(&k(low, lane)?.repeat(lanes)?)
        } else {
            up.and(&k(((1u128 << lane) - 1) & !low, lane)?.repeat(lanes)?)
        }
    };
    let (mut g, mut p) = (a.and(&nb)?, prop.clone());
    let mut span = 1u32;
    while span < lane {
        let next_g = g.or(&p.and(&shift(&g, span, false)?)?)?;
        let next_p = p.and(&shift(&p, span, true)?)?;
        span *= 2;
        g = wire(m, &format!("{name}_g{span}"), next_g)?;
        p = wire(m, &format!("{name}_p{span}"), next_p)?;
    }
    // the carry into bit i: the carry in (1) through the bits below i of
    // its lane (the top lane's top bit carries into nothing)
    let carry = if lane == 1 {
        Expr::ones(w)?
    } else {
        if span > 1 {
            for sig in [g.as_signal(), p.as_signal()].into_iter().flatten() {
                let sig = sig.clone();
                m.mark_unused(&sig, w - 1, w - 1)?;
            }
        }
        shift(&g.or(&p)?, 1, true)?
    };
    prop.xor(&carry)
}

/// The OR of `terms` (of one width) as a balanced tree.
pub(crate) fn or_tree(terms: Vec<Expr>, width: u32) -> Result<Expr, IrError> {
    let mut level = terms;
    if level.is_empty() {
        return k(0, width);
    }
    while level.len() > 1 {
        level = level
            .chunks(2)
            .map(|p| p.iter().skip(1).try_fold(p[0].clone(), |a, b| a.or(b)))
            .collect::<Result<_, _>>()?;
    }
    Ok(level.remove(0))
}

/// The OR of `values[i]` where the one-hot `select[i]` is high, as an AND
/// per value and a balanced OR tree.
pub(crate) fn onehot_select(select: &[Expr], values: &[Expr]) -> Result<Expr, IrError> {
    let width = values.first().map_or(1, Expr::width);
    let terms = select
        .iter()
        .zip(values)
        .map(|(s, v)| v.and(&s.repeat(width)?))
        .collect::<Result<Vec<_>, _>>()?;
    or_tree(terms, width)
}

/// Whether the `w`-bit expression `v` fits a `d`-bit delta field: unsigned,
/// the top `w-d` bits are zero; signed, the top `w-d+1` bits are all equal.
pub(crate) fn fits(v: &Expr, d: u32, mode: golden::magbdi::DeltaMode) -> Result<Expr, IrError> {
    let w = v.width();
    match mode {
        golden::magbdi::DeltaMode::Unsigned => Ok(v.slice(w - 1, d)?.reduce_or().not()),
        golden::magbdi::DeltaMode::Signed => {
            let top = v.slice(w - 1, d - 1)?;
            Ok(top.reduce_or().not().or(&top.reduce_and())?)
        }
    }
}
