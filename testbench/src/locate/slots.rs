//! Locating a mismatch of MPC units with programmable slots: rerun the
//! failing block alone on the slot testbench (`mpc_slots_tb`) with the
//! image that coded it programmed before it (the register writes of
//! [`golden::mpc::program::registers::image_writes`], with the block's
//! epoch), dump a VCD, and compare the stage probes the generator
//! publishes with the golden trace of the programmed set (the hard-wired
//! predictors followed by the image's loaded slots); optionally rerun the
//! failing shard with a VCD window; write GTKWave save files and a report.

use std::path::Path;
use std::sync::Arc;

use golden::mpc::program::{registers, ProgrammedSet, SlotImage};
use golden::mpc::{ModelSet, MAX_BLOCK_BYTES};

use super::{
    check_scope, mpc_gtkw_units, mpc_unit_descriptions, write_stage_gtkw, Context, LocateError,
    Location, ProbeGolden,
};
use crate::compare;
use crate::rtl::Rtl;
use crate::schedule::Schedule;
use crate::sim::{self, RunFiles, RunOptions};
use crate::slots::{
    CfgWrite, NamedImage, Programmed, Segment, ShardPlan, SlotDecompVector, SlotExpect, SlotShard,
    SlotVectors,
};
use crate::vcd::Vcd;
use crate::vectors::{CompVector, Tags};
use crate::{Simulator, Unit};

/// The testbench module of units with slots (the VCD's top scope).
pub const SLOTS_TB: &str = "mpc_slots_tb";

/// The failing vector of a slot run.
#[derive(Clone, Copy, Debug)]
pub enum SlotFailing {
    Comp(CompVector),
    Decomp(SlotDecompVector),
}

/// The image that was active when the failing block was coded.
#[derive(Clone, Copy, Debug)]
pub struct ActiveImage<'a> {
    /// Its name in the run (`trained`, `random 1`, ...).
    pub name: &'a str,
    pub image: &'a SlotImage,
    pub epoch: u8,
}

/// The failing shard, for the window VCD: its files, the configuration
/// file it ran with, and where the failure happened.
pub struct ShardWindow<'a> {
    pub context: Context<'a>,
    pub cfg: &'a Path,
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> LocateError + '_ {
    move |source| LocateError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// The configuration plusargs of a slot run of `unit` with the writes in
/// `cfg`: in the loopback, both ends switch with nothing in flight.
fn cfg_plusargs(unit: Unit, cfg: &Path) -> Vec<String> {
    let mut v = vec![format!("+cfg={}", cfg.display())];
    if unit == Unit::Loopback {
        v.push("+cfg_drain=1".to_string());
    }
    v
}

/// Rerun the failing vector alone with `image` programmed before it, with
/// a VCD, and compare its stages with the golden trace of the programmed
/// set; then (with `context`) rerun the original shard with a VCD window.
#[allow(clippy::too_many_arguments)]
pub fn locate_slots(
    sim: Simulator,
    unit: Unit,
    rtl: &Rtl,
    set: &ModelSet,
    build_dir: &Path,
    out_dir: &Path,
    failing: SlotFailing,
    image: ActiveImage<'_>,
    context: Option<ShardWindow<'_>>,
) -> Result<Location, LocateError> {
    let label = unit.name();
    let golden_err = |message: String| LocateError::Golden {
        unit: label.to_string(),
        message,
    };
    let ps = ProgrammedSet::new(set, image.image)
        .map_err(|e| golden_err(format!("image {}: {e}", image.name)))?;
    let writes = registers::image_writes(set, image.image, image.epoch)
        .map_err(|e| golden_err(format!("image {}: {e}", image.name)))?;
    let b = sim::build(sim, unit, rtl, build_dir, true, sim::CxxOpt::Quick)?;
    std::fs::create_dir_all(out_dir).map_err(io(out_dir))?;
    let out_dir = out_dir.canonicalize().map_err(io(out_dir))?;
    let iso = out_dir.join("isolated");
    std::fs::create_dir_all(&iso).map_err(io(&iso))?;
    let files = RunFiles::new(&iso);
    let vectors = match failing {
        SlotFailing::Comp(v) => SlotVectors::Comp(vec![v]),
        SlotFailing::Decomp(v) => SlotVectors::Decomp(vec![v]),
    };
    vectors.write(&files.vectors, 0..1, rtl.params.max_bits)?;
    Schedule::free().write(&files.schedule)?;
    // every write of the image before the block
    let plan = ShardPlan {
        segments: vec![Segment {
            start: 0,
            image: 0,
            epoch: image.epoch,
            coded_as: None,
        }],
        writes: writes
            .iter()
            .map(|w| CfgWrite {
                before: 0,
                addr: w.addr,
                value: w.value,
            })
            .collect(),
    };
    let cfg = iso.join("isolated.cfg");
    plan.write_cfg(&cfg)?;
    let vcd_path = out_dir.join("isolated.vcd");
    sim::run(
        &b,
        &files,
        1,
        &RunOptions {
            timeout_cycles: 2000,
            vcd: Some((vcd_path.clone(), 0, None)),
            plusargs: cfg_plusargs(unit, &cfg),
            stages: 0,
        },
        None,
    )?;
    let mut loc = Location {
        dir: out_dir.clone(),
        isolated_vcd: vcd_path.clone(),
        ..Default::default()
    };
    loc.notes.push(format!(
        "rerun alone with image {} (epoch {}) programmed before it: {} register writes",
        image.name,
        image.epoch,
        writes.len()
    ));
    // does the block alone pass?
    let codec = Arc::new(ps.fast_codec());
    let expected = match failing {
        SlotFailing::Comp(v) => {
            let e = if unit == Unit::Compressor {
                compare::expect_compressor(&codec, &[v])
            } else {
                compare::expect_loopback(&codec, &[v])
            };
            let epoch = (unit == Unit::Compressor).then_some(image.epoch);
            e.into_iter()
                .map(|expect| SlotExpect::Exact { expect, epoch })
                .collect::<Vec<_>>()
        }
        SlotFailing::Decomp(v) if v.epoch == image.epoch => {
            compare::expect_decompressor(&codec, &[v.v])
                .into_iter()
                .map(|expect| SlotExpect::Exact {
                    expect,
                    epoch: None,
                })
                .collect()
        }
        SlotFailing::Decomp(v) => vec![SlotExpect::WrongEpoch { given: v.epoch }],
    };
    let images = [NamedImage {
        name: image.name.to_string(),
        programmed: Programmed::Image {
            image: image.image.clone(),
            codec,
        },
        directed: false,
    }];
    let out = crate::slots::read_records(&files.out, unit, &rtl.params)?;
    let verdict = crate::slots::compare(
        &SlotShard {
            index: 0,
            offset: 0,
            plan: &plan,
            images: &images,
            vectors: &vectors,
            first: 0,
            expected: &expected,
        },
        &out,
        &Tags::new(),
        unit.stages(&rtl.params),
    );
    loc.isolated_ok = verdict.ok();
    let text = std::fs::read_to_string(&vcd_path).map_err(io(&vcd_path))?;
    let vcd = Vcd::parse(&text).map_err(|source| LocateError::Vcd {
        path: vcd_path.clone(),
        source,
    })?;
    let units = mpc_unit_descriptions(rtl, set)?;
    loc.notes.extend(units.note.clone());
    let p = set.predictors.len();
    let compare_decomp = |bits: &[u8; MAX_BLOCK_BYTES],
                          len: usize,
                          epoch_ok: bool,
                          scope: &str,
                          order_base: usize,
                          loc: &mut Location|
     -> Result<(), LocateError> {
        let g = ProbeGolden::programmed_decompressor(bits, len, epoch_ok, &ps, p);
        if let Some(why) = g.refusal() {
            loc.notes.push(format!(
                "golden refuses the decompressor input ({why}); only the decompressor probes compared for every input are compared"
            ));
        }
        check_scope(
            &vcd,
            &vcd_path,
            SLOTS_TB,
            &[SLOTS_TB, scope],
            "decompressor",
            order_base,
            &units.decompressor,
            &|probe| g.check(probe),
            loc,
        )
    };
    match failing {
        SlotFailing::Comp(v) => {
            let scope = if unit == Unit::Loopback {
                "comp"
            } else {
                "dut"
            };
            let g = ProbeGolden::programmed_compressor(&v.block, &ps, p);
            check_scope(
                &vcd,
                &vcd_path,
                SLOTS_TB,
                &[SLOTS_TB, scope],
                "compressor",
                0,
                &units.compressor,
                &|probe| g.check(probe),
                &mut loc,
            )?;
            if unit == Unit::Loopback {
                let c = ps.compress(&v.block);
                compare_decomp(&c.bytes, c.len as usize, true, "dec", 100, &mut loc)?;
            }
        }
        SlotFailing::Decomp(v) => {
            compare_decomp(
                &v.v.bits,
                v.v.len as usize,
                v.epoch == image.epoch,
                "dut",
                0,
                &mut loc,
            )?;
        }
    }
    loc.diffs.sort_by_key(|d| d.order);
    loc.first_stage = loc.diffs.first().map(|d| d.stage.clone());
    let gtkw_units = mpc_gtkw_units(unit, &units);
    let g = out_dir.join("isolated.gtkw");
    write_stage_gtkw(&vcd_path, &vcd, SLOTS_TB, &gtkw_units, &g)?;
    loc.gtkw.push(g);
    if let Some(ShardWindow { context: ctx, cfg }) = context {
        super::window_rerun(
            &b,
            &ctx,
            &out_dir,
            (SLOTS_TB, &gtkw_units),
            cfg_plusargs(unit, cfg),
            20_000,
            &mut loc,
        )?;
    }
    super::write_report(&out_dir, &loc)?;
    Ok(loc)
}

/// Locate the first mismatch `m` of a slot run (shard `k` of `plan`, whose
/// vectors start at `first` in `vectors`, ran from `files` with the
/// configuration file `cfg`): the failing vector, rerun alone with the
/// image of its segment programmed with the segment's epoch
/// ([`locate_slots`]); the traced build goes to `<sdir>/<unit>-trace`,
/// the VCDs, save files and report to `<sdir>/mismatch-<unit>-<idx>/`.
#[allow(clippy::too_many_arguments)]
pub fn locate_first_mismatch(
    sim: Simulator,
    unit: Unit,
    rtl: &Rtl,
    set: &ModelSet,
    sdir: &Path,
    plan: &crate::slots::Plan,
    vectors: &SlotVectors,
    shard: (usize, std::ops::Range<usize>),
    m: &crate::verdict::Mismatch,
    files: &RunFiles,
    cfg: &Path,
) -> Result<Location, LocateError> {
    let (k, range) = shard;
    let i = m.idx as usize;
    let no = |message: String| LocateError::Golden {
        unit: unit.name().to_string(),
        message,
    };
    let failing = match vectors {
        SlotVectors::Comp(v) => v.get(i).copied().map(SlotFailing::Comp),
        SlotVectors::Decomp(v) => v.get(i).copied().map(SlotFailing::Decomp),
    }
    .ok_or_else(|| no(format!("no vector {i} in the run")))?;
    let sp = plan
        .shards
        .get(k)
        .ok_or_else(|| no(format!("no shard {k} in the plan")))?;
    let seg = sp.segments[sp.segment_of(i.saturating_sub(range.start))];
    let img = &plan.images[seg.image];
    let Programmed::Image { image, .. } = &img.programmed else {
        return Err(no(format!(
            "block {i} was coded under `{}`, which is no image: no golden trace to compare the stages with",
            img.name
        )));
    };
    locate_slots(
        sim,
        unit,
        rtl,
        set,
        &sdir.join(format!("{}-trace", unit.name())),
        &sdir.join(format!("mismatch-{}-{}", unit.name(), m.idx)),
        failing,
        ActiveImage {
            name: &img.name,
            image,
            epoch: seg.epoch,
        },
        Some(ShardWindow {
            context: Context {
                files,
                n: range.len(),
                cycle: m.cycle,
                latency: m.latency,
            },
            cfg,
        }),
    )
}
