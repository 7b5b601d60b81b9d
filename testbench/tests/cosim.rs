//! Co-simulation of the units generated for `models/example` on Icarus and
//! Verilator: a few thousand blocks per unit (corpus of every class when
//! `../shared/corpus` exists, random, corner cases, Table-1 patterns,
//! malformed inputs), with stalls, backpressure and mid-stream resets; a
//! check that a wrong model set is caught and located; and, for every stage
//! of both units, that a flipped bit in one of its registers is located at
//! that stage and register, and that a claimed probe the RTL lacks is an
//! error.
//!
//! A simulator that is not installed is skipped with an install hint (CI
//! installs both).

use std::path::{Path, PathBuf};

use testbench::run::{self, Config};
use testbench::{Simulator, Unit};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn corpus() -> Option<PathBuf> {
    testbench::stream_unit::test_corpus()
}

fn config(s: Simulator, name: &str) -> Config {
    let mut cfg = Config::new(&root().join("models/example"));
    cfg.build = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    cfg.sims = vec![s];
    cfg.corpus = corpus();
    cfg
}

fn installed(s: Simulator) -> bool {
    testbench::stream_unit::simulator_or_skip(s, &format!("the {s} co-simulation"))
}

fn cosim_all_units(s: Simulator, blocks: usize) {
    if !installed(s) {
        return;
    }
    let mut cfg = config(s, &format!("cosim-{}", s.name()));
    cfg.blocks = blocks;
    cfg.seed = 2026;
    let reports = run::run(&cfg).expect("co-simulation runs");
    assert_eq!(reports.len(), 3);
    let mut ok = true;
    for r in &reports {
        println!("{}", r.render());
        ok &= r.verdict.ok();
        assert_eq!(r.verdict.checked, blocks as u64);
        assert!(r.verdict.resets > 0, "mid-stream resets happened");
    }
    assert!(ok, "mismatches (see the report above)");
    // malformed inputs reached the decompressor
    let d = reports
        .iter()
        .find(|r| r.unit == Unit::Decompressor)
        .expect("decompressor report");
    assert!(d
        .verdict
        .per_tag
        .keys()
        .any(|k| k.starts_with("malformed/")));
}

#[test]
fn example_units_match_golden_on_icarus() {
    cosim_all_units(Simulator::Icarus, 200);
}

#[test]
fn example_units_match_golden_on_verilator() {
    cosim_all_units(Simulator::Verilator, 5000);
}

/// `models/example` with one base pointer of `byte-stride` changed.
fn wrong_set(dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(root().join("models/example/model.toml")).expect("read");
    let from = "bytes = [\"root\", \"0\", \"0\", \"0\"";
    assert!(text.contains(from));
    let text = text.replacen(from, "bytes = [\"root\", \"0\", \"1\", \"0\"", 1);
    let d = dir.join("wrong-model");
    std::fs::create_dir_all(&d).expect("mkdir");
    std::fs::write(d.join("model.toml"), text).expect("write");
    d
}

#[test]
fn wrong_model_set_is_caught_and_located() {
    let Some(&s) = Simulator::ALL.iter().find(|&&s| installed(s)) else {
        return;
    };
    let mut cfg = config(s, &format!("wrong-{}", s.name()));
    cfg.expect_model = Some(wrong_set(&cfg.build));
    cfg.units = vec![Unit::Compressor];
    cfg.blocks = 300;
    cfg.corpus = None;
    let reports = run::run(&cfg).expect("co-simulation runs");
    let r = &reports[0];
    let text = r.render();
    println!("{text}");
    assert!(!r.verdict.ok());
    let m = r.verdict.mismatches.first().expect("a mismatch");
    assert!(
        text.contains(&format!("block {} (", m.idx)),
        "names the block"
    );
    assert!(text.contains("input    : block"), "prints the input");
    let loc = r.location.as_ref().expect("located");
    let stage = loc.first_stage.as_deref().expect("a differing stage");
    assert!(stage.starts_with("compressor stage 1"), "{stage}");
    // byte-stride is predictor 2: its prediction differs first
    assert!(loc.diffs.iter().any(|d| d.signal == "pred_p2"), "{loc}");
    assert!(loc.isolated_vcd.is_file());
    assert!(loc.window_vcd.as_ref().is_some_and(|w| w.is_file()));
    assert!(loc.gtkw.iter().all(|g| g.is_file()));
    let gtkw = std::fs::read_to_string(&loc.gtkw[0]).expect("gtkw");
    assert!(gtkw.contains("-dut stage 1") && gtkw.contains("s1_symbols"));
}

/// A copy of the units in `rtl` where the register `reg` of `file` loads
/// its next value with bit `bit` flipped (a patch of the generated text:
/// the register's one-line non-blocking assignment).
fn break_register(rtl: &testbench::rtl::Rtl, file: &str, reg: &str, bit: u32, dir: &Path) {
    let units = hdl::unit::read_units(&rtl.dir.join("params.json")).expect("params.json");
    let width = units
        .iter()
        .flat_map(|u| &u.probes)
        .find(|p| p.name == reg)
        .map(|p| p.width)
        .expect("the register is a published probe");
    std::fs::create_dir_all(dir).expect("mkdir");
    for e in std::fs::read_dir(&rtl.dir).expect("rtl dir") {
        let path = e.expect("entry").path();
        if path.is_file() {
            let name = path.file_name().expect("name");
            std::fs::copy(&path, dir.join(name)).expect("copy");
        }
    }
    let path = dir.join(file);
    let text = std::fs::read_to_string(&path).expect("read");
    let head = format!("{reg} <= ");
    let lines: Vec<&str> = text.lines().collect();
    let starts: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i].trim_start().starts_with(&head))
        .collect();
    assert_eq!(starts.len(), 1, "one assignment of {reg} in {file}");
    let start = starts[0];
    // the statement may span lines up to its `;`
    let end = (start..lines.len())
        .find(|&i| lines[i].trim_end().ends_with(';'))
        .expect("end of the assignment");
    let stmt = lines[start..=end].join("\n");
    let expr = &stmt.trim_start()[head.len()..stmt.trim_start().len() - 1];
    let indent = &lines[start][..lines[start].len() - lines[start].trim_start().len()];
    let patched = format!("{indent}{head}({expr}) ^ ({width}'d1 << {bit});");
    let mut out: Vec<String> = lines[..start].iter().map(|l| l.to_string()).collect();
    out.push(patched);
    out.extend(lines[end + 1..].iter().map(|l| l.to_string()));
    std::fs::write(&path, out.join("\n") + "\n").expect("write");
}

/// For every pipeline stage of both units, a flipped bit in one register of
/// that stage is caught, and the locator names that stage's register as the
/// first difference.
#[test]
fn a_broken_stage_of_either_unit_is_located() {
    let Some(&s) = Simulator::ALL.iter().find(|&&s| installed(s)) else {
        return;
    };
    let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("broken-{}", s.name()));
    let _ = std::fs::remove_dir_all(&base);
    let rtl = testbench::rtl::generate(&root().join("models/example"), &base.join("rtl"))
        .expect("generates");
    // (unit, file, register, bit, stage)
    let cases = [
        (Unit::Compressor, "s1_choice_id", 0, 1),
        (Unit::Compressor, "s2_model", 0, 2),
        (Unit::Compressor, "s3_len", 0, 3),
        (Unit::Decompressor, "s1_len", 0, 1),
        (Unit::Decompressor, "s2_symbols", 0, 2),
        // the top bit: same-words blocks use only the low word
        (Unit::Decompressor, "s3_residue", 255, 3),
        (Unit::Decompressor, "s4_block", 0, 4),
    ];
    // the cases on two threads (each its own build directory)
    let case = |(unit, reg, bit, stage): (Unit, &str, u32, usize)| {
        let file = match unit {
            Unit::Compressor => "mpc_compressor.v",
            _ => "mpc_decompressor.v",
        };
        let dir = base.join(reg);
        break_register(&rtl, file, reg, bit, &dir.join("rtl"));
        let mut cfg = config(s, &format!("broken-{}/{reg}", s.name()));
        cfg.rtl = Some(dir.join("rtl"));
        cfg.units = vec![unit];
        cfg.blocks = 40;
        cfg.corpus = None;
        let reports = run::run(&cfg).expect("co-simulation runs");
        let r = &reports[0];
        let text = r.render();
        assert!(!r.verdict.ok(), "{reg} flipped is caught:\n{text}");
        let loc = r
            .location
            .as_ref()
            .unwrap_or_else(|| panic!("{reg}: located:\n{text}"));
        let want = format!("{unit} stage {stage} register");
        assert_eq!(loc.first_stage.as_deref(), Some(want.as_str()), "{text}");
        let first = &loc.diffs[0];
        assert_eq!(first.signal, reg, "{text}");
        assert!(first.signal.starts_with(&format!("s{stage}_")));
        println!(
            "{reg} bit {bit}: located at {} {}",
            first.stage, first.signal
        );
    };
    let case = &case;
    std::thread::scope(|scope| {
        let (even, odd): (Vec<_>, Vec<_>) = cases.iter().enumerate().partition(|(i, _)| i % 2 == 0);
        let workers: Vec<_> = [even, odd]
            .into_iter()
            .map(|half| scope.spawn(move || half.into_iter().for_each(|(_, &c)| case(c))))
            .collect();
        for w in workers {
            if let Err(e) = w.join() {
                std::panic::resume_unwind(e);
            }
        }
    });
    // a probe the RTL does not have is an error naming it and the unit
    let dir = base.join("s4_block").join("rtl");
    let pj = dir.join("params.json");
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&pj).expect("read")).expect("JSON");
    v["units"][1]["probes"]
        .as_array_mut()
        .expect("decompressor probes")
        .push(
            serde_json::json!({"name": "s2_xored", "stage": 2, "kind": "register",
                                 "width": 256, "mirrors": "xored", "when": "predictor"}),
        );
    std::fs::write(&pj, v.to_string()).expect("write");
    let mut cfg = config(s, &format!("broken-{}/missing-probe", s.name()));
    cfg.rtl = Some(dir);
    cfg.units = vec![Unit::Decompressor];
    cfg.blocks = 40;
    cfg.corpus = None;
    let reports = run::run(&cfg).expect("co-simulation runs");
    let r = &reports[0];
    assert!(!r.verdict.ok() && r.location.is_none(), "{}", r.render());
    let e = r.locate_error.as_deref().expect("a locate error");
    assert!(
        e.contains("decompressor") && e.contains("`s2_xored`"),
        "{e}"
    );
}
