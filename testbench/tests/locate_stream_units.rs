//! The stage locator of the MAG-aware BDI and DPC units: every stage probe
//! a unit publishes agrees with the golden per-stage trace on the unit as
//! generated (read in the IR evaluator, no simulator needed), and a
//! deliberately broken stage-1 register is located at that stage and
//! signal from a VCD of an Icarus run (skipped without Icarus).

use std::collections::BTreeSet;
use std::path::PathBuf;

use golden::dpc::{DpcParams, Mode};
use golden::magbdi::{DeltaMode, MagBdi, Params};
use hdl::ir::mutate::{self, Operator, Site};
use hdl::ir::{Bits, Sim};
use hdl::unit::ProbeKind;
use testbench::locate::stream::{
    locate_dpc, locate_magbdi, locate_stream, LocateDirs, StreamFailing, StreamUnit,
};
use testbench::locate::{compare_probes, stage_valid, Location, Sampler};
use testbench::stream_unit::{self, LeBus, StreamTarget};
use testbench::Simulator;

/// A bus as the evaluator's value.
fn bits_of(bus: &LeBus, lo: usize, width: usize) -> Bits {
    let words: Vec<u64> = (0..width.div_ceil(64))
        .map(|k| bus.uint(lo + 64 * k, (width - 64 * k).min(64)))
        .collect();
    Bits::from_words(&words, width as u32).expect("width")
}

fn text_of(v: &Bits) -> String {
    (0..v.width())
        .rev()
        .map(|i| if v.bit(i) { '1' } else { '0' })
        .collect()
}

/// Run `input` through `target`'s module in the IR evaluator and compare
/// its probes with `unit`'s golden trace, as the locator does with a VCD:
/// stage-k logic after k-1 edges, stage-k registers after k edges.
fn compare_in_ir(target: &StreamTarget, unit: &StreamUnit, input: &LeBus) -> Location {
    let desc = &target.desc;
    let mut sim = Sim::new(&target.module).expect("sim");
    sim.set_u128("rst", 1).expect("rst");
    sim.set_u128("in_valid", 0).expect("in_valid");
    sim.set_u128("out_ready", 1).expect("out_ready");
    sim.step();
    sim.set_u128("rst", 0).expect("rst");
    let mut lo = 0;
    for (name, width) in &target.inputs {
        sim.set(name, &bits_of(input, lo, *width)).expect("input");
        lo += width;
    }
    sim.set_u128("in_valid", 1).expect("in_valid");
    let mut names: BTreeSet<String> = desc.probes.iter().map(|p| p.name.clone()).collect();
    names.extend(desc.probes.iter().filter_map(|p| p.with.clone()));
    names.extend(
        desc.stages
            .iter()
            .filter_map(|s| stage_valid(desc, s.stage)),
    );
    let mut snapshots = Vec::new();
    for edge in 0..=desc.latency {
        let snap: std::collections::BTreeMap<String, String> = names
            .iter()
            .map(|n| (n.clone(), text_of(&sim.get(n).expect("signal"))))
            .collect();
        snapshots.push(snap);
        sim.step();
        if edge == 0 {
            sim.set_u128("in_valid", 0).expect("in_valid");
        }
    }
    let value = |name: &str, stage: usize, logic: bool| {
        let at = if logic { stage - 1 } else { stage };
        snapshots[at].get(name).cloned().unwrap_or_default()
    };
    let valid = |stage: usize| {
        stage_valid(desc, stage).map(|f| {
            let v = value(&f, stage, false);
            (f, v)
        })
    };
    let golden = unit.golden(input).expect("golden trace");
    let mut loc = Location::default();
    compare_probes(
        &desc.module,
        0,
        &desc.probes,
        &|p| golden.check(p),
        &Sampler {
            value: &value,
            valid: &valid,
        },
        &mut loc,
    )
    .expect("every probe has a golden value");
    loc.diffs.sort_by_key(|d| d.order);
    loc.first_stage = loc.diffs.first().map(|d| d.stage.clone());
    loc
}

fn bdi_targets(n: usize) -> Vec<(StreamTarget, StreamUnit)> {
    let mut out = Vec::new();
    for params in [
        Params::PAPER,
        Params::new(128, 16, 4, DeltaMode::Signed),
        Params::new(64, 16, 2, DeltaMode::Unsigned),
    ] {
        for (unit, tb_unit) in [
            (hdl::Side::Compressor, testbench::Unit::Compressor),
            (hdl::Side::Decompressor, testbench::Unit::Decompressor),
        ] {
            let t = testbench::magbdi::target(params, tb_unit, n, 5, None).expect("target");
            out.push((t, StreamUnit::MagBdi { params, unit }));
        }
    }
    out
}

fn dpc_targets(n: usize) -> Vec<(StreamTarget, StreamUnit)> {
    let mut out = Vec::new();
    for params in [
        DpcParams::default(),
        DpcParams::new(64, 2, 16).expect("params"),
    ] {
        for unit in hdl::dpc::DpcUnit::ALL {
            let t = testbench::dpc::target(params, unit, n, 7, None).expect("target");
            out.push((t, StreamUnit::Dpc { params, unit }));
        }
    }
    out
}

#[test]
fn every_probe_agrees_with_the_golden_trace_on_the_generated_units() {
    for (target, unit) in bdi_targets(120).into_iter().chain(dpc_targets(120)) {
        let desc = &target.desc;
        assert!(
            desc.probes.iter().any(|p| p.kind == ProbeKind::Register)
                && desc.probes.iter().any(|p| p.kind == ProbeKind::Logic),
            "{}: register and logic probes",
            target.label
        );
        for s in &desc.stages {
            assert!(
                desc.probes.iter().any(|p| p.stage == s.stage),
                "{}: stage {} has a probe",
                target.label,
                s.stage
            );
        }
        let mut compared = BTreeSet::new();
        for (k, v) in target.vectors.iter().enumerate() {
            let loc = compare_in_ir(&target, &unit, v);
            assert!(
                loc.diffs.is_empty(),
                "{} vector {k} ({}):\n{loc}",
                target.label,
                v.hex()
            );
            compared.extend(loc.compared);
        }
        // every probe is compared on some vector (its `when` is reachable)
        for p in &desc.probes {
            assert!(
                compared.contains(&format!("{}.{}", desc.module, p.name)),
                "{}: probe {} ({}) never compared",
                target.label,
                p.name,
                p.mirrors
            );
        }
    }
}

/// `target` with its first swap-arms mutation of register `reg`'s next
/// value.
fn break_register(target: &mut StreamTarget, reg: &str) {
    let m = mutate::enumerate(&target.module)
        .into_iter()
        .find(|m| m.signal == reg && m.site == Site::Value && m.op == Operator::SwapArms)
        .unwrap_or_else(|| panic!("{}: no swap-arms mutation of {reg}", target.label));
    target.module = mutate::apply(&target.module, &m).expect("mutant");
}

fn locate_dir(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("locate-stream")
        .join(name)
}

/// Locate `input` on `target` as generated (no stage differs, the output
/// matches) and with register `reg` broken by swapping the arms of its
/// mux (located at `reg`, stage 1).
fn located_at(target: StreamTarget, unit: StreamUnit, input: LeBus, reg: &str) {
    located_by(target, unit, input, reg, |t| break_register(t, reg));
}

/// [`located_at`], with `reg` broken by `breaks`.
fn located_by(
    target: StreamTarget,
    unit: StreamUnit,
    input: LeBus,
    reg: &str,
    breaks: impl FnOnce(&mut StreamTarget),
) {
    let module = target.desc.module.clone();
    let run = |t: &StreamTarget, name: &str| {
        let dir = locate_dir(&format!("{module}-{name}"));
        let f = StreamFailing {
            target: t,
            unit,
            rtl: None,
            input: input.clone(),
            index: 0,
        };
        locate_stream(Simulator::Icarus, &f, &dir.join("build"), &dir.join("out"))
            .expect("the locator runs")
    };
    let good = run(&target, "generated");
    assert!(good.isolated_ok && good.diffs.is_empty(), "{good}");
    assert!(!good.compared.is_empty(), "{good}");
    let mut broken = target;
    breaks(&mut broken);
    let loc = run(&broken, reg);
    let text = loc.to_string();
    assert!(!loc.isolated_ok, "{text}");
    assert_eq!(
        loc.first_stage.as_deref(),
        Some(format!("{module} stage 1 register").as_str()),
        "{text}"
    );
    assert_eq!(loc.diffs[0].signal, reg, "{text}");
    assert!(text.contains(&format!("first differing stage: {module} stage 1 register")));
    assert!(loc.isolated_vcd.is_file(), "{text}");
    let gtkw = std::fs::read_to_string(&loc.gtkw[0]).expect("gtkw");
    assert!(gtkw.contains(&format!("dut.{reg}")), "{gtkw}");
    assert!(gtkw.contains("-dut stage 1:"), "{gtkw}");
    assert!(loc.dir.join("report.txt").is_file());
    println!("{module}: {reg} broken:\n{text}");
}

#[test]
fn a_broken_bdi_decompressor_register_is_located() {
    if !stream_unit::icarus_or_skip() {
        return;
    }
    let params = Params::PAPER;
    let codec = MagBdi::new(params).expect("params");
    let target = testbench::magbdi::target(params, testbench::Unit::Decompressor, 1, 1, None)
        .expect("target");
    // a block with small deltas: stored in a compressed size
    let block: Vec<u8> = (0..params.block_bytes)
        .map(|i| if i % 4 == 0 { (i / 4) as u8 + 1 } else { 0 })
        .collect();
    let e = codec.encode(&block);
    assert_ne!(e.encoding, codec.table().raw_code());
    let mut input = LeBus::new();
    let mut data = e.data.clone();
    data.resize(params.block_bytes, 0);
    input.put_bytes(&data);
    input.put_uint(e.encoding as u64, codec.table().encoding_bits() as usize);
    let unit = StreamUnit::MagBdi {
        params,
        unit: hdl::Side::Decompressor,
    };
    located_at(target, unit, input, "s1_block");
}

#[test]
fn a_broken_dpc_decompressor_register_is_located() {
    if !stream_unit::icarus_or_skip() {
        return;
    }
    let params = DpcParams::default();
    let mode = Mode::Plain;
    let unit = hdl::dpc::DpcUnit::Decompressor(mode);
    let target = testbench::dpc::target(params, unit, 1, 1, None).expect("target");
    // a block of small values: a packet shorter than the block
    let block: Vec<u8> = (0..params.block_bytes())
        .map(|i| if i % 4 == 0 { (i / 4) as u8 } else { 0 })
        .collect();
    let pk = golden::dpc::Dpc::new(params)
        .encode(&block)
        .expect("encodes");
    let w = hdl::dpc::packet_width(&params, mode) as usize;
    let l = hdl::dpc::len_width(&params, mode) as usize;
    let mut input = LeBus::new();
    input.put_left_aligned(&pk.bytes, pk.len, w);
    input.put_uint(pk.len as u64, l);
    // the length check (`expected_len != in_len`) made `==`: a packet of
    // the right length is refused in stage 1
    let unit = StreamUnit::Dpc { params, unit };
    located_by(target, unit, input, "s1_error", |t| {
        let m = mutate::enumerate(&t.module)
            .into_iter()
            .find(|m| {
                m.signal == "s1_error"
                    && m.site == Site::Value
                    && matches!(m.op, Operator::Boundary { .. })
            })
            .unwrap_or_else(|| panic!("{}: no boundary mutation of s1_error", t.label));
        t.module = mutate::apply(&t.module, &m).expect("mutant");
    });
}

/// What `cosim magbdi` and `cosim dpc` call on a mismatch, on generated
/// units and a vector they get right: nothing differs; the loopback is
/// located on its compressor, then on its decompressor.
#[test]
fn the_cosim_locators_find_no_difference_on_the_generated_units() {
    if !stream_unit::icarus_or_skip() {
        return;
    }
    let root = locate_dir("cosim-path");
    let params = Params::new(64, 16, 2, DeltaMode::Unsigned);
    let bdi = root.join("bdi");
    let paths = hdl::magbdi::write_units(params, &bdi, &hdl::magbdi::UNITS, "test").expect("units");
    let rtl: Vec<PathBuf> = paths
        .into_iter()
        .filter(|p| p.extension().is_some_and(|x| x == "v"))
        .collect();
    let mut input = LeBus::new();
    input.put_bytes(&(0..64u8).map(|i| i / 3).collect::<Vec<_>>());
    let dirs = LocateDirs {
        root: &bdi,
        name: "loopback",
    };
    let loc = locate_magbdi(
        Simulator::Icarus,
        params,
        testbench::Unit::Loopback,
        &rtl,
        &input,
        3,
        &dirs,
    )
    .expect("located");
    assert!(loc.first_stage.is_none() && loc.isolated_ok, "{loc}");
    assert!(
        loc.notes[0].starts_with("loopback: no compressor stage differs"),
        "{loc}"
    );
    assert!(
        loc.compared
            .iter()
            .any(|c| c == "bdi_decompressor.s1_block"),
        "{loc}"
    );
    assert!(loc
        .dir
        .ends_with("cosim/loopback/mismatch-icarus-3/decompressor"));

    let p = DpcParams::default();
    let dpc = root.join("dpc");
    let paths = hdl::family::write_units(&p, &dpc, &hdl::dpc::UNITS, "test").expect("units");
    let rtl: Vec<PathBuf> = paths
        .into_iter()
        .filter(|p| p.extension().is_some_and(|x| x == "v"))
        .collect();
    let unit = hdl::dpc::DpcUnit::Compressor(Mode::Truc);
    let mut input = LeBus::new();
    input.put_bytes(&vec![7u8; p.block_bytes()]);
    input.put_uint(0b0110, p.sectors());
    let dirs = LocateDirs {
        root: &dpc,
        name: unit.module_name(),
    };
    let loc = locate_dpc(Simulator::Icarus, p, unit, &rtl, &input, 0, &dirs).expect("located");
    assert!(loc.first_stage.is_none() && loc.isolated_ok, "{loc}");
    assert!(
        loc.compared
            .iter()
            .any(|c| c == "dpc_truc_compressor.s2_bits"),
        "{loc}"
    );
}
