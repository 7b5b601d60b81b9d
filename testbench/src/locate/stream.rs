//! Locating a mismatch of a MAG-aware BDI or DPC unit: rerun the failing
//! input alone with a VCD dump, read the stage probes of the unit's
//! description (`params.json` `units[].probes`) and compare them with the
//! golden model's per-stage trace (`golden::magbdi::trace`,
//! `golden::dpc::trace`), stage by stage; write a GTKWave save file that
//! groups the signals by the description's stages (docs/hw/cosim.md).

use std::path::{Path, PathBuf};

use golden::dpc::trace::{CompressStages, DecompressStages};
use golden::dpc::{Dpc, DpcParams};
use golden::magbdi::trace::{CompressTrace, DecompressTrace};
use golden::magbdi::MagBdi;
use hdl::unit::{CopyField, DfManCopy, Mirror, SizeField, StageProbe, When};

use super::{
    bytes_bits, check_scope, flag_bits, left_aligned_bits, not_in_trace, number_bits,
    write_stage_gtkw, Check, GtkwUnit, LocateError, Location,
};
use crate::schedule::Schedule;
use crate::sim::{self, CxxOpt, TbSpec};
use crate::stream_unit::{self, LeBus, SimRun, StreamReport, StreamTarget};
use crate::vcd::Vcd;
use crate::Simulator;

/// A MAG-aware BDI or DPC unit with its configuration: which golden
/// per-stage trace its probes are compared with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamUnit {
    MagBdi {
        params: golden::magbdi::Params,
        unit: hdl::Side,
    },
    Dpc {
        params: DpcParams,
        unit: hdl::dpc::DpcUnit,
    },
}

/// The golden per-stage trace of one input of a stream unit.
#[derive(Clone, Debug)]
pub enum StreamGolden {
    BdiCompressor(CompressTrace),
    BdiDecompressor {
        trace: DecompressTrace,
        block_bytes: usize,
    },
    DpcCompressor(CompressStages),
    DpcDecompressor {
        trace: DecompressStages,
        block_bytes: usize,
    },
}

impl StreamUnit {
    /// The unit's name in reports (its module name).
    pub fn module(&self) -> &'static str {
        match self {
            StreamUnit::MagBdi { unit, .. } => hdl::Unit::MagBdi(*unit).module_name(),
            StreamUnit::Dpc { unit, .. } => unit.module_name(),
        }
    }

    /// The golden trace of the input vector bus `input` (laid out as the
    /// unit's testbench takes it: docs/hw/cosim.md).
    pub fn golden(&self, input: &LeBus) -> Result<StreamGolden, LocateError> {
        let refused = |message: String| LocateError::Golden {
            unit: self.module().to_string(),
            message,
        };
        Ok(match *self {
            StreamUnit::MagBdi { params, unit } => {
                let codec = MagBdi::new(params).map_err(|e| refused(e.to_string()))?;
                let bb = params.block_bytes;
                let bytes = input.bytes(0, bb);
                match unit {
                    hdl::Side::Compressor => {
                        StreamGolden::BdiCompressor(codec.compress_traced(&bytes))
                    }
                    hdl::Side::Decompressor => {
                        let e = codec.table().encoding_bits() as usize;
                        let enc = input.uint(8 * bb, e) as u32;
                        StreamGolden::BdiDecompressor {
                            trace: codec.decompress_traced(enc, &bytes),
                            block_bytes: bb,
                        }
                    }
                }
            }
            StreamUnit::Dpc { params, unit } => {
                let d = Dpc::new(params);
                let bb = params.block_bytes();
                match unit {
                    hdl::dpc::DpcUnit::Compressor(mode) => {
                        let block = input.bytes(0, bb);
                        let mask = input.uint(8 * bb, params.sectors()) as u32;
                        StreamGolden::DpcCompressor(
                            d.compress_traced(mode, &block, mask)
                                .map_err(|e| refused(e.to_string()))?,
                        )
                    }
                    hdl::dpc::DpcUnit::Decompressor(mode) => {
                        let w = hdl::dpc::packet_width(&params, mode) as usize;
                        let l = hdl::dpc::len_width(&params, mode) as usize;
                        let view = input.left_aligned(0, w);
                        let len = input.uint(w, l) as usize;
                        StreamGolden::DpcDecompressor {
                            trace: d.decompress_traced(mode, &view, len),
                            block_bytes: bb,
                        }
                    }
                }
            }
        })
    }
}

/// `when` of a probe of a stream unit: whether it is compared for this
/// input (`accepted`: the golden decoder accepts it; `not_raw`: the output,
/// or the decoded input, is not stored raw), or why it cannot be.
fn applies(when: When, accepted: bool, not_raw: bool) -> Result<bool, String> {
    match when {
        When::Always => Ok(true),
        When::Accepted => Ok(accepted),
        When::NotRaw => Ok(accepted && not_raw),
        When::Predictor
        | When::Model(_)
        | When::Slot
        | When::HardWired
        | When::NotSlot
        | When::Raw => Err(format!(
            "`when: {when:?}` names MPC models; a MAG-aware BDI or DPC probe is compared `always`, `accepted` or `not_raw`"
        )),
    }
}

fn bits(s: String) -> Result<Option<Check>, String> {
    Ok(Some(Check::Bits(s)))
}

fn flag(b: bool, w: u32) -> Result<Option<Check>, String> {
    bits(number_bits(b as u64, w))
}

fn number(v: usize, w: u32) -> Result<Option<Check>, String> {
    bits(number_bits(v as u64, w))
}

impl StreamGolden {
    /// The check of probe `p` on this input: `Ok(None)` when the probe is
    /// not compared for it (its `when`), `Err` when the trace has no value
    /// for the field it mirrors.
    pub fn check(&self, p: &StageProbe) -> Result<Option<Check>, String> {
        let w = p.width;
        match self {
            StreamGolden::BdiCompressor(t) => {
                // the compressor accepts every block
                if !applies(p.when, true, t.encoding as usize != t.sizes.len())? {
                    return Ok(None);
                }
                match p.mirrors {
                    Mirror::Size { index, field } => {
                        let s = t.sizes.get(index).ok_or_else(|| {
                            format!(
                                "no size {index} in the golden trace ({} sizes)",
                                t.sizes.len()
                            )
                        })?;
                        match field {
                            SizeField::ZeroFit => bits(flag_bits(&s.zero_fit)),
                            SizeField::Base => bits(number_bits(s.base, w)),
                            SizeField::Fits => flag(s.fits, w),
                            SizeField::Data => bits(bytes_bits(&s.data)),
                        }
                    }
                    Mirror::Encoding => number(t.encoding as usize, w),
                    Mirror::Data => bits(bytes_bits(&t.data)),
                    other => Err(not_in_trace(other, "MAG-aware BDI compressor")),
                }
            }
            StreamGolden::BdiDecompressor {
                trace: t,
                block_bytes,
            } => {
                if !applies(p.when, t.result.is_ok(), !t.raw)? {
                    return Ok(None);
                }
                match p.mirrors {
                    Mirror::Base => bits(number_bits(t.base, w)),
                    // the stored bitmask, value 0 first (at the MSB)
                    Mirror::Mask => {
                        bits(t.mask.iter().map(|&m| if m { '1' } else { '0' }).collect())
                    }
                    Mirror::Error => flag(t.result.is_err(), w),
                    Mirror::Block => bits(bytes_bits(&t.block(*block_bytes))),
                    other => Err(not_in_trace(other, "MAG-aware BDI decompressor")),
                }
            }
            StreamGolden::DpcCompressor(t) => {
                if !applies(p.when, true, t.coded.compressed)? {
                    return Ok(None);
                }
                match p.mirrors {
                    Mirror::Data => bits(bytes_bits(&t.data)),
                    Mirror::Es => bits(number_bits(t.coded.es, w)),
                    Mirror::Ones => bits(number_bits(t.coded.ones, w)),
                    Mirror::Npc => number(t.npc as usize, w),
                    Mirror::Mask => number(t.mask as usize, w),
                    Mirror::Manipulated => flag(t.manipulated, w),
                    Mirror::Copy { copy, field } => {
                        let copies = t.copies.as_ref().ok_or_else(|| {
                            format!(
                                "`{}` has no golden value: only DF-MAN codes two copies",
                                p.mirrors
                            )
                        })?;
                        let c = match copy {
                            DfManCopy::Original => &copies[0],
                            DfManCopy::ZeroFilled => &copies[1],
                        };
                        match field {
                            CopyField::Data => bits(bytes_bits(&c.data)),
                            CopyField::Es => bits(number_bits(c.es, w)),
                            CopyField::Ones => bits(number_bits(c.ones, w)),
                            CopyField::Len => number(c.len, w),
                        }
                    }
                    Mirror::Segments => number(t.coded.n, w),
                    Mirror::RawLen => number(t.raw_len, w),
                    Mirror::CodedLen => number(t.coded.coded_bits, w),
                    Mirror::Compressed => flag(t.coded.compressed, w),
                    Mirror::OutputBits => bits(left_aligned_bits(&t.packet.bytes, t.packet.len, w)),
                    Mirror::OutputLen => number(t.packet.len, w),
                    other => Err(not_in_trace(other, "DPC compressor")),
                }
            }
            StreamGolden::DpcDecompressor {
                trace: t,
                block_bytes,
            } => {
                if !applies(p.when, t.result.is_ok(), t.flag)? {
                    return Ok(None);
                }
                match p.mirrors {
                    Mirror::Flag => flag(t.flag, w),
                    Mirror::Es => bits(number_bits(t.es, w)),
                    Mirror::Npc => number(t.npc as usize, w),
                    Mirror::Segments => number(t.segments, w),
                    Mirror::RawLen => number(t.raw_len, w),
                    Mirror::ExpectedLen => number(t.expected_len, w),
                    // the payload bytes decoded; the register's bytes past
                    // them are not defined by the packet
                    Mirror::Data => match &t.data {
                        Ok(d) => Ok(Some(Check::LowBits(bytes_bits(d)))),
                        Err(e) => Err(format!(
                            "`data` has no golden value when the input is rejected ({e}; when: {:?})",
                            p.when
                        )),
                    },
                    Mirror::Error => flag(t.result.is_err(), w),
                    Mirror::Block => bits(bytes_bits(&t.block(*block_bytes))),
                    Mirror::Mask => number(t.mask() as usize, w),
                    other => Err(not_in_trace(other, "DPC decompressor")),
                }
            }
        }
    }
}

/// A failing input of a MAG-aware BDI or DPC unit.
pub struct StreamFailing<'a> {
    /// The unit as the co-simulation ran it: its module and description
    /// (with the probes), its testbench, and the check of its output.
    pub target: &'a StreamTarget,
    /// Which golden per-stage trace its probes mirror.
    pub unit: StreamUnit,
    /// The Verilog that ran (`None`: the target's module, emitted again).
    pub rtl: Option<&'a [PathBuf]>,
    /// The failing input vector bus and its index in the run.
    pub input: LeBus,
    pub index: usize,
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> LocateError + '_ {
    move |source| LocateError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Rerun the failing input alone (no stalls, no reset) with a VCD dump on
/// `sim` (compiled in `build_dir`), compare the unit's probes with the
/// golden trace stage by stage, and write `isolated.vcd`, `isolated.gtkw`
/// and `report.txt` into `out_dir`.
pub fn locate_stream(
    sim: Simulator,
    f: &StreamFailing<'_>,
    build_dir: &Path,
    out_dir: &Path,
) -> Result<Location, LocateError> {
    let t = f.target;
    let label = t.desc.module.clone();
    std::fs::create_dir_all(build_dir).map_err(io(build_dir))?;
    let rtl: Vec<PathBuf> = match f.rtl {
        Some(files) => files.to_vec(),
        None => {
            let header = vec![format!(
                "{} as co-simulated ({}), emitted by the stage locator.",
                label, t.label
            )];
            let text = t.module.emit(&header).map_err(|e| LocateError::Golden {
                unit: label.clone(),
                message: format!("cannot emit its Verilog: {e}"),
            })?;
            let v = build_dir.join(format!("{label}.v"));
            std::fs::write(&v, text).map_err(io(&v))?;
            vec![v]
        }
    };
    let spec = TbSpec {
        top: t.top,
        tb_file: t.tb_file,
        tb_source: t.tb_source,
        defines: vec![&t.define],
        params: t.params.clone(),
        rtl: &rtl,
        trace: true,
        // a run of one vector: the quick C++ build
        cxx: CxxOpt::Quick,
    };
    let b = sim::build_tb(sim, &spec, &build_dir.join(format!("sim-{}", sim.name())))?;
    std::fs::create_dir_all(out_dir).map_err(io(out_dir))?;
    let out_dir = out_dir.canonicalize().map_err(io(out_dir))?;
    let iso = out_dir.join("isolated");
    std::fs::create_dir_all(&iso).map_err(io(&iso))?;
    let vectors = iso.join("vectors.hex");
    std::fs::write(&vectors, f.input.hex() + "\n").map_err(io(&vectors))?;
    let schedule = Schedule::free();
    let sched_path = iso.join("schedule.hex");
    std::fs::write(&sched_path, schedule.to_text()).map_err(io(&sched_path))?;
    let vcd_path = out_dir.join("isolated.vcd");
    let run = SimRun {
        sim,
        unit: &label,
        cmd: b.command_line(),
        cached: b.cached,
        dir: &iso,
        vectors: &vectors,
        schedule_path: &sched_path,
        schedule: &schedule,
        stages: t.desc.latency,
        n: 1,
        out_width: t.out_width,
        coverage: String::new(),
        started: std::time::Instant::now(),
        timeout: 1000,
        plusargs: vec![
            format!("+vcd={}", vcd_path.display()),
            "+vcd_from=0".to_string(),
        ],
        progress: false,
    };
    let report = stream_unit::run_and_check(&run, |_, o| (t.check)(&f.input, o))?;
    let mut loc = Location {
        dir: out_dir.clone(),
        isolated_vcd: vcd_path.clone(),
        isolated_ok: report.ok(),
        ..Default::default()
    };
    loc.notes.push(format!(
        "{label} vector {} (input {}) rerun alone on {}",
        f.index,
        f.input.hex(),
        sim.name()
    ));
    let text = std::fs::read_to_string(&vcd_path).map_err(io(&vcd_path))?;
    let vcd = Vcd::parse(&text).map_err(|source| LocateError::Vcd {
        path: vcd_path.clone(),
        source,
    })?;
    let golden = f.unit.golden(&f.input)?;
    check_scope(
        &vcd,
        &vcd_path,
        t.top,
        &[t.top, "dut"],
        &label,
        0,
        &t.desc,
        &|p| golden.check(p),
        &mut loc,
    )?;
    loc.diffs.sort_by_key(|d| d.order);
    loc.first_stage = loc.diffs.first().map(|d| d.stage.clone());
    let g = out_dir.join("isolated.gtkw");
    write_stage_gtkw(
        &vcd_path,
        &vcd,
        t.top,
        &[GtkwUnit {
            scope: "dut",
            unit: &t.desc,
        }],
        &g,
    )?;
    loc.gtkw.push(g);
    let report = out_dir.join("report.txt");
    std::fs::write(&report, loc.to_string()).map_err(io(&report))?;
    Ok(loc)
}

/// Where a located mismatch of a stream unit goes: `<root>/sim-<sim>/
/// <name>-trace` (the traced build) and `<root>/cosim/<name>/mismatch-
/// <sim>-<index>` (VCD, GTKWave save file, report).
pub struct LocateDirs<'a> {
    /// The configuration's work directory.
    pub root: &'a Path,
    /// The unit's name in directories (as the co-simulation names it).
    pub name: &'a str,
}

impl LocateDirs<'_> {
    fn build(&self, sim: Simulator) -> PathBuf {
        self.root
            .join(format!("sim-{}", sim.name()))
            .join(format!("{}-trace", self.name))
    }

    fn out(&self, sim: Simulator, index: usize) -> PathBuf {
        self.root
            .join("cosim")
            .join(self.name)
            .join(format!("mismatch-{}-{index}", sim.name()))
    }
}

/// Locate input `input` (vector `index` of the run) of the MAG-aware BDI
/// `unit` co-simulated from the Verilog `rtl`. The loopback is located on
/// its compressor, and when no compressor stage differs, on its
/// decompressor with the golden encoding of the block as input.
pub fn locate_magbdi(
    sim: Simulator,
    params: golden::magbdi::Params,
    unit: crate::Unit,
    rtl: &[PathBuf],
    input: &LeBus,
    index: usize,
    dirs: &LocateDirs<'_>,
) -> Result<Location, LocateError> {
    let refused = |message: String| LocateError::Golden {
        unit: format!("MAG-aware BDI {unit}"),
        message,
    };
    let one = |side: hdl::Side, input: LeBus, tag: &str| {
        let tb_unit = match side {
            hdl::Side::Compressor => crate::Unit::Compressor,
            hdl::Side::Decompressor => crate::Unit::Decompressor,
        };
        let target = crate::magbdi::target(params, tb_unit, 1, 0, None)
            .map_err(|e| refused(e.to_string()))?;
        let f = StreamFailing {
            target: &target,
            unit: StreamUnit::MagBdi { params, unit: side },
            rtl: Some(rtl),
            input,
            index,
        };
        let out = dirs.out(sim, index).join(tag);
        locate_stream(sim, &f, &dirs.build(sim), &out)
    };
    match unit {
        crate::Unit::Compressor => one(hdl::Side::Compressor, input.clone(), ""),
        crate::Unit::Decompressor => one(hdl::Side::Decompressor, input.clone(), ""),
        crate::Unit::Loopback => {
            let comp = one(hdl::Side::Compressor, input.clone(), "compressor")?;
            if comp.first_stage.is_some() {
                return Ok(comp);
            }
            let codec = MagBdi::new(params).map_err(|e| refused(e.to_string()))?;
            let bb = params.block_bytes;
            let e = codec.encode(&input.bytes(0, bb));
            let mut data = e.data;
            data.resize(bb, 0);
            let mut bus = LeBus::new();
            bus.put_bytes(&data);
            bus.put_uint(e.encoding as u64, codec.table().encoding_bits() as usize);
            let mut dec = one(hdl::Side::Decompressor, bus, "decompressor")?;
            dec.notes.insert(
                0,
                format!(
                    "loopback: no compressor stage differs ({} signals compared, {}); the decompressor is located on the golden encoding",
                    comp.compared.len(),
                    comp.dir.display()
                ),
            );
            Ok(dec)
        }
    }
}

/// Locate input `input` (vector `index` of the run) of the DPC `unit`
/// co-simulated from the Verilog `rtl`.
pub fn locate_dpc(
    sim: Simulator,
    params: DpcParams,
    unit: hdl::dpc::DpcUnit,
    rtl: &[PathBuf],
    input: &LeBus,
    index: usize,
    dirs: &LocateDirs<'_>,
) -> Result<Location, LocateError> {
    let target = crate::dpc::target(params, unit, 1, 0, None).map_err(|e| LocateError::Golden {
        unit: unit.module_name().to_string(),
        message: e.to_string(),
    })?;
    let f = StreamFailing {
        target: &target,
        unit: StreamUnit::Dpc { params, unit },
        rtl: Some(rtl),
        input: input.clone(),
        index,
    };
    locate_stream(sim, &f, &dirs.build(sim), &dirs.out(sim, index))
}

/// On the first mismatch of `report` (a run of `vectors`), locate that
/// vector alone with `locate(sim, index, input)` and add what the locator
/// found to the report's problems: the first differing stage and signal
/// and the report, VCD and GTKWave files, or why it could not locate.
pub fn add_location(
    report: &mut StreamReport,
    vectors: &[LeBus],
    locate: impl FnOnce(Simulator, usize, &LeBus) -> Result<Location, LocateError>,
) {
    let Some(index) = report.first_mismatch else {
        return;
    };
    let Some(input) = vectors.get(index) else {
        return;
    };
    let line = match locate(report.sim, index, input) {
        Ok(loc) => {
            let verdict = match (&loc.first_stage, loc.diffs.first()) {
                (Some(stage), Some(d)) => format!(
                    "first differing stage: {stage}, signal {} (golden {})",
                    d.signal, d.meaning
                ),
                _ if loc.isolated_ok => "the vector alone gives the golden output: the failure depends on its neighbours, stalls or resets".to_string(),
                _ => format!(
                    "no compared stage signal differs ({} compared)",
                    loc.compared.len()
                ),
            };
            let gtkw = loc
                .gtkw
                .first()
                .map(|g| format!(", gtkwave -a {}", g.display()))
                .unwrap_or_default();
            format!(
                "stage locator, vector {index} alone: {verdict}; {}{gtkw}",
                loc.dir.join("report.txt").display()
            )
        }
        Err(e) => format!("stage locator, vector {index}: could not locate the mismatch: {e}"),
    };
    // after the first mismatch's own line
    report.problems.insert(report.problems.len().min(1), line);
}

#[cfg(test)]
mod tests {
    use super::super::StageDiff;
    use super::*;

    fn report(first_mismatch: Option<usize>) -> StreamReport {
        StreamReport {
            sim: Simulator::Icarus,
            unit: "dpc_compressor".to_string(),
            vectors: 3,
            matched: 2,
            coverage: String::new(),
            problems: vec!["dpc_compressor vector 1: out_len differs".to_string()],
            seconds: 0.0,
            sim_seconds: 0.0,
            cycles: 0,
            cached_build: false,
            first_mismatch,
            protocol: Vec::new(),
            verdict: Default::default(),
        }
    }

    #[test]
    fn the_location_follows_the_first_mismatch_in_the_report() {
        let vectors: Vec<LeBus> = (0..3)
            .map(|k| {
                let mut b = LeBus::new();
                b.put_uint(k, 8);
                b
            })
            .collect();
        let mut r = report(Some(1));
        add_location(&mut r, &vectors, |sim, index, input| {
            assert_eq!((sim, index, input.uint(0, 8)), (Simulator::Icarus, 1, 1));
            Ok(Location {
                dir: PathBuf::from("out"),
                first_stage: Some("dpc_compressor stage 1 register".to_string()),
                diffs: vec![StageDiff {
                    order: 3,
                    stage: "dpc_compressor stage 1 register".to_string(),
                    signal: "s1_es".to_string(),
                    meaning: "es".to_string(),
                    expected: "1".to_string(),
                    actual: "0".to_string(),
                }],
                gtkw: vec![PathBuf::from("out/isolated.gtkw")],
                ..Default::default()
            })
        });
        assert_eq!(r.problems.len(), 2);
        assert!(r.problems[0].contains("out_len differs"));
        assert_eq!(
            r.problems[1],
            "stage locator, vector 1 alone: first differing stage: dpc_compressor stage 1 register, signal s1_es (golden es); out/report.txt, gtkwave -a out/isolated.gtkw"
        );

        let mut r = report(Some(2));
        add_location(&mut r, &vectors, |_, _, _| {
            Err(LocateError::Golden {
                unit: "dpc_compressor".to_string(),
                message: "no".to_string(),
            })
        });
        assert!(
            r.problems[1].contains("vector 2: could not locate the mismatch: dpc_compressor: no"),
            "{:?}",
            r.problems
        );

        // nothing to locate: the report is left as it is
        let mut r = report(None);
        add_location(&mut r, &vectors, |_, _, _| panic!("not called"));
        assert_eq!(r.problems.len(), 1);
    }
}
