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
        let (m, p) = compressor::build_probed(&set).expect("compressor");
        check_unit(&set.name, &m, &p.list, COMPRESSOR_LATENCY as usize);
        let (m, p) = decompressor::build_probed(&set).expect("decompressor");
        check_unit(&set.name, &m, &p.list, DECOMPRESSOR_LATENCY as usize);
        let published = hdl::mpc::stage_probes(&set).expect("probes");
        assert_eq!(published.decompressor, p.list);
        sets += 1;
    }
    assert!(sets >= 5, "model sets found: {sets}");
}
