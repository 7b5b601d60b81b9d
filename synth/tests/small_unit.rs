//! Runs the synthesis flow on a small unit (a compressor with one predictor)
//! and checks the report is plausible: nonzero area, the flop count equals
//! the register bits the generator declared, the timing figures of the
//! buffered and sized netlist are consistent, the power from a gate-level
//! run of corpus blocks is consistent and falls with the activity, the
//! report parses back.
//! Without yosys, OpenSTA, Icarus or the liberty it prints how to install
//! them and passes, unless MPCGEN_REQUIRE_TOOLS=1 (then it fails).

mod common;

use std::path::{Path, PathBuf};

use golden::mpc::ModelSet;
use hdl::mpc::{compressor, MpcConfig};
use hdl::{Side, Unit};
use synth::flow::{self, AbcScript, Options};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

#[test]
fn one_predictor_compressor_synthesises() {
    let Some(lib) = common::tools_and_liberty(&["yosys"]) else {
        return;
    };
    let mut set = ModelSet::load(&root().join("models/example")).expect("example model set");
    set.predictors.truncate(1);
    set.name = "synth-test-1p".into();
    let module = compressor::build(&set).expect("compressor builds");
    let reg_bits = synth::register_bits(&module);

    let dir = root().join("target/synth-test");
    let config = MpcConfig {
        set,
        sha256: String::new(),
        model_file: String::new(),
        options: Default::default(),
    };
    let (files, described) = hdl::family::generate(
        &config,
        &[Unit::Mpc(Side::Compressor)],
        &["synth test".to_string()],
    )
    .expect("generate");
    hdl::ir::write_files(&dir, &files).expect("write RTL");
    let v = dir.join("mpc_compressor.v");
    let opts = Options {
        depth: true,
        sta: common::have("sta"),
        blocks: true,
        abc: AbcScript::Default,
    };
    // the default mapping and the one without SAT sweeping (checked at the
    // end) run side by side
    let (r, quick) = std::thread::scope(|s| {
        let no_sweep = s.spawn(|| {
            flow::run_unit(
                &v,
                &described[0],
                &lib,
                &dir.join("synth-no-sweep"),
                Options {
                    abc: AbcScript::NoSweep,
                    depth: true,
                    ..Options::AREA_ONLY
                },
            )
        });
        let r = flow::run_unit(&v, &described[0], &lib, &dir.join("synth"), opts);
        (r, no_sweep.join())
    });
    let mut r = r.expect("flow runs");
    let quick = quick
        .expect("no-sweep flow thread")
        .expect("no-sweep flow runs");

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
        assert!(row.levels_gates_delay.is_some_and(|l| l > 0));
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
        check_timing(&r, t);
        if common::have("iverilog") {
            let t0 = std::time::Instant::now();
            r.power = Some(check_power(&dir, &described, &lib, t));
            eprintln!("power runs: {:.1} s", t0.elapsed().as_secs_f64());
        }
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
    if let Some(p) = &r.power {
        assert!(
            md.contains("### Power") && md.contains("pJ per block"),
            "{md}"
        );
        for k in [
            "clock_ns",
            "total_mw",
            "dynamic_mw",
            "leakage_mw",
            "pj_per_block",
        ] {
            assert!(back["power"][k].as_f64().is_some_and(|x| x > 0.0), "{k}");
        }
        assert_eq!(
            back["power"]["activity_source"].as_str(),
            Some(p.activity_source.as_str())
        );
    }
    if r.timing.is_some() {
        assert!(md.contains("minimum clock period") && md.contains("Timing per pipeline stage"));
        assert!(back["timing"]["period_fo4"]
            .as_f64()
            .is_some_and(|x| x > 0.0));
    }
    // The mapping without SAT sweeping gives the same flops, a comparable
    // logic area, and depth runs (which pass Yosys' delay target through
    // the custom script).
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
        assert!(
            row.levels_gates_delay.is_some_and(|l| l > 0),
            "{s}: {row:?}"
        );
    }
}

/// The timing figures exist, are positive and consistent.
fn check_timing(r: &flow::UnitReport, t: &flow::Timing) {
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * a.abs().max(1.0);
    assert!(t.fo4.fo4_ns > 0.0, "FO4 {}", t.fo4.fo4_ns);
    assert!(t.period_ns > 0.0 && t.period_fo4 > 0.0, "{t:?}");
    assert!(close(t.period_fo4, t.period_ns / t.fo4.fo4_ns));
    assert_eq!(t.clock_port, "clk");
    // The buffered and sized netlist: same flops, a comparable area.
    assert_eq!(t.flops, r.flops);
    assert!(
        t.nand2_eq > 0.9 * r.nand2_eq && t.nand2_eq < 1.5 * r.nand2_eq,
        "timing-mapped {} vs area-mapped {}",
        t.nand2_eq,
        r.nand2_eq
    );
    // Every stage has a worst path from a named start to one of its registers,
    // no longer than the period; the period is the worst of all groups.
    for n in 1..=3 {
        let g = format!("stage {n}");
        let p = t
            .stages
            .iter()
            .find(|p| p.group == g)
            .unwrap_or_else(|| panic!("no timing of {g}: {:?}", t.stages));
        assert!(p.period_ns > 0.0 && p.arrival_ns > 0.0, "{p:?}");
        assert!(
            p.period_ns <= t.period_ns + 1e-9,
            "{p:?} vs {}",
            t.period_ns
        );
        assert!(close(p.period_fo4, p.period_ns / t.fo4.fo4_ns), "{p:?}");
        let setup = p.setup_ns.expect("a flop endpoint has a setup time");
        assert!(
            setup > 0.0 && (p.arrival_ns + setup - p.period_ns).abs() < 2e-4,
            "{p:?}"
        );
        assert!(
            p.end.starts_with(&format!("s{n}_")),
            "{g} ends at {} (a stage-{n} register)",
            p.end
        );
        assert!(!p.start.is_empty() && !p.start.starts_with('?'), "{p:?}");
    }
    let worst = t.stages.iter().map(|p| p.period_ns).fold(0.0, f64::max);
    assert!(
        (worst - t.period_ns).abs() < 2e-4,
        "worst group {worst} vs {}",
        t.period_ns
    );
    assert!(close(t.critical.period_ns, t.period_ns));
    if let Some(rr) = &t.reg_to_reg {
        assert!(
            rr.period_ns > 0.0 && rr.period_ns <= t.period_ns + 1e-9,
            "{rr:?}"
        );
    }
    // ABC's own timing of the same netlist agrees with OpenSTA's roughly.
    let abc = t.abc_delay_ns.expect("ABC stime estimate in the log");
    assert!(
        abc > 0.5 * t.critical.arrival_ns && abc < 2.0 * t.critical.arrival_ns,
        "ABC {abc} ns vs OpenSTA {} ns",
        t.critical.arrival_ns
    );
}

/// Power of the unit from corpus blocks and from all-zero blocks: the
/// figures add up, the energy per block follows from the power, the clock
/// and the throughput, every stage has a share, and the zero blocks (less
/// activity) give less dynamic power.
fn check_power(
    dir: &Path,
    described: &[hdl::unit::UnitDescription],
    lib: &synth::liberty::Liberty,
    t: &flow::Timing,
) -> synth::power::Power {
    use synth::power::{self, PowerConfig, Stimulus};
    let corpus = root().join("../shared/corpus");
    let stimulus = if corpus.exists() {
        Stimulus::Corpus(corpus)
    } else {
        Stimulus::Random
    };
    let synth_dir = dir.join("synth");
    let run = |s: Stimulus| {
        let cfg = PowerConfig {
            blocks: 100,
            ..PowerConfig::new(s)
        };
        power::run(&described[0], described, dir, lib, &synth_dir, t, &cfg).expect("power run")
    };
    let p = run(stimulus.clone());
    let close = |a: f64, b: f64, tol: f64| (a - b).abs() <= tol * a.abs().max(b.abs()).max(1e-12);
    assert!(close(p.clock_ns, t.period_ns, 1e-12), "{p:?}");
    assert!(p.dynamic_mw > 0.0 && p.leakage_mw > 0.0, "{p:?}");
    assert!(
        close(p.total_mw, p.dynamic_mw + p.leakage_mw, 1e-9),
        "{p:?}"
    );
    assert!(
        close(p.dynamic_mw, p.internal_mw + p.switching_mw, 1e-9),
        "{p:?}"
    );
    assert_eq!(p.blocks, 100);
    // back to back: one block per cycle after the pipeline fills
    assert!(
        p.cycles >= 100 && p.cycles <= 100 + 3 + 1,
        "{} cycles",
        p.cycles
    );
    assert!(close(
        p.pj_per_block,
        p.total_mw * p.clock_ns * p.cycles as f64 / p.blocks as f64,
        1e-9
    ));
    assert!(p.pj_per_block > 0.9 * p.total_mw * p.clock_ns);
    assert!(
        p.mean_toggle_rate > 0.0 && p.mean_toggle_rate < 2.0,
        "{p:?}"
    );
    assert!(p.mean_duty > 0.0 && p.mean_duty < 1.0, "{p:?}");
    assert!(
        p.activity_source.starts_with("gate-level Icarus"),
        "{}",
        p.activity_source
    );
    match stimulus {
        Stimulus::Corpus(_) => assert!(
            p.activity_source.contains("corpus blocks"),
            "{}",
            p.activity_source
        ),
        _ => assert!(
            p.activity_source.contains("random blocks"),
            "{}",
            p.activity_source
        ),
    }
    assert!(p.check.contains("equal the RTL"), "{}", p.check);
    // OpenSTA at one activity on every pin equals the per-instance
    // interpolation at that activity: the powers are linear in activity
    let (sta, ours) = p.uniform_check_mw;
    assert!(
        close(sta, ours, 1e-3),
        "OpenSTA {sta} mW vs interpolated {ours} mW"
    );
    // every stage has a share; the shares add up to the total
    for s in ["stage 1", "stage 2", "stage 3"] {
        let row = p
            .stages
            .iter()
            .find(|x| x.stage == s)
            .unwrap_or_else(|| panic!("{s}: {:?}", p.stages));
        assert!(row.dynamic_mw > 0.0 && row.leakage_mw > 0.0, "{row:?}");
    }
    let sum: f64 = p.stages.iter().map(|x| x.total_mw).sum();
    assert!(
        close(sum, p.total_mw, 1e-6),
        "stages {sum} vs {}",
        p.total_mw
    );
    // all-zero blocks: less activity, less dynamic power, the same leakage
    let z = run(Stimulus::Zeros);
    assert!(
        z.mean_toggle_rate < p.mean_toggle_rate,
        "{} vs {}",
        z.mean_toggle_rate,
        p.mean_toggle_rate
    );
    assert!(
        z.dynamic_mw < p.dynamic_mw,
        "zeros {} mW vs {} mW",
        z.dynamic_mw,
        p.dynamic_mw
    );
    assert!(z.switching_mw < p.switching_mw);
    assert!(close(z.leakage_mw, p.leakage_mw, 1e-9));
    assert!(
        z.activity_source.contains("all-zero blocks"),
        "{}",
        z.activity_source
    );
    p
}
