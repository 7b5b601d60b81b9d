//! The stage probes published in `params.json` are signals the generated
//! units really have: for every model set in `models/`, each probe names a
//! register (register probes) or a wire (logic probes) of its unit with the
//! published width, declared in the emitted Verilog; every pipeline stage of
//! both units has register probes, and every `with` sibling exists.

use std::path::Path;

use golden::mpc::ModelSet;
use hdl::ir::SignalKind;
use hdl::mpc::probes::{ProbeKind, StageProbe};
use hdl::mpc::{compressor, decompressor, COMPRESSOR_LATENCY, DECOMPRESSOR_LATENCY};
use hdl::unit::{Direction, UnitDescription};

/// A unit description says what the module has: its name, every port with
/// its direction and width, `latency` stages each opened by a section
/// `stage N: ...` whose registers are `s<N>_*` registers of the module, and
/// the valid flags and enables of every stage.
fn check_description(m: &hdl::ir::Module, d: &UnitDescription, latency: usize) {
    assert_eq!(d.module, m.name());
    assert_eq!(d.latency, latency, "{}", d.module);
    let ports = m.ports();
    assert_eq!(d.ports.len(), ports.len(), "{}", d.module);
    for (pd, ps) in d.ports.iter().zip(&ports) {
        assert_eq!(pd.name, ps.name());
        assert_eq!(pd.width, ps.width());
        let kind = m.kind(ps).expect("own port");
        let dir = if kind == SignalKind::Input {
            Direction::Input
        } else {
            Direction::Output
        };
        assert_eq!(pd.dir, dir, "{} port {}", d.module, pd.name);
    }
    assert_eq!(d.stages.len(), latency, "{}", d.module);
    for (i, st) in d.stages.iter().enumerate() {
        let n = i + 1;
        assert_eq!(st.stage, n);
        assert!(
            st.title.starts_with(&format!("stage {n}: ")),
            "{}: stage {n} titled `{}`",
            d.module,
            st.title
        );
        assert!(
            !st.registers.is_empty(),
            "{}: stage {n} has no register",
            d.module
        );
        for r in &st.registers {
            let sig = m
                .signal(r)
                .unwrap_or_else(|| panic!("{}: no {r}", d.module));
            assert_eq!(m.kind(&sig).expect("own"), SignalKind::Reg, "{r}");
            assert!(
                r.starts_with(&format!("s{n}_")),
                "{}: {r} in stage {n}",
                d.module
            );
            assert_eq!(d.stage_of_register(r), Some(n));
        }
        for c in [format!("s{n}_valid"), format!("s{n}_enable")] {
            assert!(d.is_control(&c), "{}: {c}", d.module);
            assert!(m.signal(&c).is_some(), "{}: no {c}", d.module);
        }
    }
}

#[test]
fn magbdi_and_dpc_units_describe_themselves() {
    use golden::magbdi::{DeltaMode, Params, Table};
    for (mag, mode) in [(32, DeltaMode::Unsigned), (16, DeltaMode::Signed)] {
        let table = Table::new(Params {
            block_bytes: 128,
            mag_bytes: mag,
            base_bytes: 4,
            mode,
        })
        .expect("table");
        let (m, d) = hdl::magbdi::compressor::build_described(&table).expect("compressor");
        check_description(&m, &d, hdl::magbdi::LATENCY);
        let (m, d) = hdl::magbdi::decompressor::build_described(&table).expect("decompressor");
        check_description(&m, &d, hdl::magbdi::LATENCY);
    }
    let p = golden::dpc::DpcParams::default();
    for u in hdl::dpc::UNITS {
        let (m, d) = hdl::Family::build(&p, u).expect("dpc unit");
        check_description(&m, &d, 2);
        assert_eq!(d.module, u.module_name());
    }
}

fn check_unit(set_name: &str, m: &hdl::ir::Module, probes: &[StageProbe], stages: usize) {
    let verilog: String = m
        .emit_hierarchy(&[])
        .expect("emits")
        .iter()
        .map(|f| f.text.clone())
        .collect();
    for p in probes {
        let what = format!("{set_name} {}: probe {} ({})", m.name(), p.name, p.mirrors);
        let sig = m
            .signal(&p.name)
            .unwrap_or_else(|| panic!("{what}: no such signal"));
        assert_eq!(sig.width(), p.width, "{what}: width");
        let kind = m.kind(&sig).expect("own signal");
        match p.kind {
            ProbeKind::Register => assert_eq!(kind, SignalKind::Reg, "{what}: not a register"),
            ProbeKind::Logic => assert_eq!(kind, SignalKind::Wire, "{what}: not a wire"),
        }
        assert!((1..=stages).contains(&p.stage), "{what}: stage {}", p.stage);
        let range = format!("[{}:0]", p.width - 1);
        let declared = verilog.lines().map(str::trim).any(|l| {
            let mut t = l.split_whitespace();
            let ty = t.next();
            let mut rest: Vec<&str> = t.collect();
            let name_ok = rest.pop() == Some(&format!("{};", p.name));
            let range_ok = if p.width == 1 {
                rest.is_empty()
            } else {
                rest == [range.as_str()]
            };
            matches!(ty, Some("reg" | "wire")) && name_ok && range_ok
        });
        assert!(declared, "{what}: not declared in the Verilog");
        if let Some(w) = &p.with {
            assert!(m.signal(w).is_some(), "{what}: no sibling {w}");
        }
    }
    for k in 1..=stages {
        assert!(
            probes
                .iter()
                .any(|p| p.stage == k && p.kind == ProbeKind::Register),
            "{set_name} {}: no register probe in stage {k}",
            m.name()
        );
    }
}

#[test]
fn every_published_probe_exists_in_the_rtl() {
    let models = Path::new(env!("CARGO_MANIFEST_DIR")).join("../models");
    let mut sets = 0;
    for e in std::fs::read_dir(&models).expect("models/") {
        let dir = e.expect("entry").path();
        if !dir.join("model.toml").is_file() {
            continue;
        }
        let set = ModelSet::load(&dir).expect("model set loads");
        let (m, d) = compressor::build_described(&set).expect("compressor");
        check_unit(&set.name, &m, &d.probes, COMPRESSOR_LATENCY as usize);
        check_description(&m, &d, COMPRESSOR_LATENCY as usize);
        let (m, d) = decompressor::build_described(&set).expect("decompressor");
        check_unit(&set.name, &m, &d.probes, DECOMPRESSOR_LATENCY as usize);
        check_description(&m, &d, DECOMPRESSOR_LATENCY as usize);
        let published = hdl::mpc::stage_probes(&set).expect("probes");
        assert_eq!(published.decompressor, d.probes);
        sets += 1;
    }
    assert!(sets >= 5, "model sets found: {sets}");
}

/// Units with programmable slots: for every form `gen` builds, K = 1 to
/// the most slots, both compressor depths (a zero-run set; an exact-rule
/// set at fewer points), each published probe is a register or wire of its
/// unit with its width, every stage has a register probe, every slot has
/// probes of its path in the compressor, and the decompressor has probes
/// of the slot decode; for two configurations, each probe is declared in
/// the emitted Verilog.
#[test]
fn every_published_probe_of_a_unit_with_slots_exists_in_the_rtl() {
    use golden::mpc::program::FORMS;
    use hdl::mpc::slots::{SlotSpec, MAX_SLOTS, SLOT_COMPRESSOR_STAGE_RANGE};
    use hdl::unit::{Mirror, When};
    let models = Path::new(env!("CARGO_MANIFEST_DIR")).join("../models");
    let example = ModelSet::load(&models.join("example")).expect("models/example");
    let exact = ModelSet::load(&models.join("default-exact")).expect("models/default-exact");
    let forms: Vec<_> = FORMS
        .iter()
        .filter(|f| SlotSpec::new(1, **f).is_ok())
        .collect();
    assert!(forms.len() >= 6, "forms built: {}", forms.len());
    let mut configs = Vec::new();
    for f in &forms {
        for k in 1..=MAX_SLOTS {
            for c in SLOT_COMPRESSOR_STAGE_RANGE {
                configs.push((&example, **f, k, c, false));
            }
        }
    }
    let colpart = golden::mpc::program::Form::by_name("stride-colpart").expect("form");
    let lib = golden::mpc::program::Form::by_name("stride-lib").expect("form");
    configs.push((&exact, colpart, 2, 5, true));
    configs.push((&exact, lib, 1, 4, false));
    configs.push((&example, colpart, 1, 4, true));
    for (set, form, k, c, emit) in configs {
        let spec = SlotSpec::new(k, form).expect("spec");
        let name = format!("{} K={k} {} {c}-stage", set.name, form.name);
        let (m, d) = compressor::build_slots_staged(set, spec, c).expect("compressor");
        check_description(&m, &d, c);
        for j in 0..k {
            assert!(
                d.probes
                    .iter()
                    .any(|p| matches!(p.mirrors, Mirror::Slot { slot, .. } if slot == j)),
                "{name}: slot {j} has probes"
            );
        }
        if emit {
            check_unit(&name, &m, &d.probes, c);
        } else {
            check_signals(&name, &m, &d.probes, c);
        }
        let stages = decompressor::slot_default_stages(&spec);
        let (m, d) = decompressor::build_slots(set, spec, stages).expect("decompressor");
        check_description(&m, &d, stages);
        assert!(
            d.probes.iter().any(|p| p.when == When::Slot),
            "{name}: decompressor probes of the slot decode"
        );
        if emit {
            check_unit(&name, &m, &d.probes, stages);
        } else {
            check_signals(&name, &m, &d.probes, stages);
        }
    }
}

/// [`check_unit`] without the emitted Verilog: each probe is a register or
/// wire of the module with its width, in a stage of the unit, its sibling
/// exists, and every stage has a register probe.
fn check_signals(set_name: &str, m: &hdl::ir::Module, probes: &[StageProbe], stages: usize) {
    for p in probes {
        let what = format!("{set_name} {}: probe {} ({})", m.name(), p.name, p.mirrors);
        let sig = m
            .signal(&p.name)
            .unwrap_or_else(|| panic!("{what}: no such signal"));
        assert_eq!(sig.width(), p.width, "{what}: width");
        let kind = m.kind(&sig).expect("own signal");
        match p.kind {
            ProbeKind::Register => assert_eq!(kind, SignalKind::Reg, "{what}: not a register"),
            ProbeKind::Logic => assert_eq!(kind, SignalKind::Wire, "{what}: not a wire"),
        }
        assert!((1..=stages).contains(&p.stage), "{what}: stage {}", p.stage);
        if let Some(w) = &p.with {
            assert!(m.signal(w).is_some(), "{what}: no sibling {w}");
        }
    }
    for k in 1..=stages {
        assert!(
            probes
                .iter()
                .any(|p| p.stage == k && p.kind == ProbeKind::Register),
            "{set_name} {}: no register probe in stage {k}",
            m.name()
        );
    }
}
