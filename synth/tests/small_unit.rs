//! Runs the synthesis flow on a small unit (a compressor with one predictor)
//! and checks the report is plausible: nonzero area, the flop count equals
//! the register bits the generator declared, the report parses back.
//! Without yosys or the liberty it prints how to install them and passes.

use std::path::{Path, PathBuf};

use golden::mpc::ModelSet;
use hdl::mpc::{compressor, Unit};
use synth::flow::{self, AbcScript, Options, UnitKind};
use synth::liberty::Liberty;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

#[test]
fn one_predictor_compressor_synthesises() {
    if !flow::have_tool("yosys") {
        eprintln!("SKIPPED: yosys not found: {}", flow::INSTALL_HINT);
        return;
    }
    let lib = match flow::find_liberty(None) {
        Ok(p) => Liberty::load(&p).expect("liberty parses"),
        Err(e) => {
            eprintln!("SKIPPED: {e}");
            return;
        }
    };
    let mut set = ModelSet::load(&root().join("models/example")).expect("example model set");
    set.predictors.truncate(1);
    set.name = "synth-test-1p".into();
    let module = compressor::build(&set).expect("compressor builds");
    let reg_bits = synth::register_bits(&module);

    let dir = root().join("target/synth-test");
    let files = hdl::mpc::generate(&set, &[Unit::Compressor], &["synth test".to_string()])
        .expect("generate");
    hdl::ir::write_files(&dir, &files).expect("write RTL");
    let v = dir.join("mpc_compressor.v");
    let opts = Options {
        depth: true,
        sta: flow::have_tool("sta"),
        blocks: true,
        abc: AbcScript::Default,
    };
    let r = flow::run_unit(
        &v,
        "mpc_compressor",
        UnitKind::Compressor,
        &lib,
        &dir.join("synth"),
        opts,
    )
    .expect("flow runs");

    assert!(
        r.area > 0.0 && r.nand2_eq > 100.0,
        "implausible area {}",
        r.nand2_eq
    );
    // Elaboration keeps one flop per declared register bit; optimisation
    // may then merge duplicate flops and drop constant ones, never add.
    assert_eq!(
        r.rtl_flop_bits, reg_bits,
        "flops at elaboration vs register bits declared"
    );
    assert!(
        r.flops as u64 <= reg_bits && r.flops as u64 + 16 >= reg_bits,
        "flops {} vs {reg_bits}",
        r.flops
    );
    assert!((r.flop_nand2 + r.comb_nand2 - r.nand2_eq).abs() < 1e-6);
    assert!(r.comb_nand2 > 0.0);
    let t4 = r.transistors_div4.expect("stat -tech cmos parsed");
    assert!(
        t4 > 0.5 * r.nand2_eq && t4 < 3.0 * r.nand2_eq,
        "T/4 {t4} vs {}",
        r.nand2_eq
    );
    // Every stage has flops and the stage areas add up to the total.
    for s in ["stage 1", "stage 2", "stage 3"] {
        let row = r.stages.iter().find(|x| x.stage == s).expect("stage row");
        assert!(
            row.flops > 0 && row.comb_nand2 > 0.0 && row.levels_cells > 0,
            "{s}: {row:?}"
        );
        assert!(row.levels_gates_delay > 0);
    }
    let sum: f64 = r.stages.iter().map(|x| x.flop_nand2 + x.comb_nand2).sum();
    assert!(
        (sum - r.nand2_eq).abs() < 1.0,
        "stages sum {sum} vs {}",
        r.nand2_eq
    );
    assert!(r
        .blocks
        .iter()
        .any(|b| b.block.starts_with("predictors") && b.comb_nand2 > 0.0));
    if let Some(t) = &r.timing {
        assert!(
            t.reg_to_reg_ns.is_some_and(|d| d > 0.0),
            "no reg-to-reg delay"
        );
    } else {
        eprintln!(
            "note: OpenSTA not found, timing not checked: {}",
            flow::INSTALL_HINT
        );
    }
    // The JSON report round-trips.
    let json = serde_json::to_string(&r).expect("serialise");
    let back: serde_json::Value = serde_json::from_str(&json).expect("parse");
    assert_eq!(back["rtl_flop_bits"].as_u64(), Some(reg_bits));
    let md = synth::report::unit_markdown(&r, None);
    assert!(md.contains("NAND2-equivalent gates"));
    // The mapping without SAT sweeping gives the same flops, a comparable
    // logic area, and depth runs (which pass Yosys' delay target through
    // the custom script).
    let quick = flow::run_unit(
        &v,
        "mpc_compressor",
        UnitKind::Compressor,
        &lib,
        &dir.join("synth-no-sweep"),
        Options {
            abc: AbcScript::NoSweep,
            depth: true,
            ..Options::AREA_ONLY
        },
    )
    .expect("no-sweep flow runs");
    assert_eq!(quick.flops, r.flops);
    assert!(
        quick.comb_nand2 > 0.7 * r.comb_nand2 && quick.comb_nand2 < 1.5 * r.comb_nand2,
        "no-sweep logic {} vs default {}",
        quick.comb_nand2,
        r.comb_nand2
    );
    for s in ["stage 1", "stage 2", "stage 3"] {
        let row = quick
            .stages
            .iter()
            .find(|x| x.stage == s)
            .expect("stage row");
        assert!(row.levels_gates_delay > 0, "{s}: {row:?}");
    }
}
