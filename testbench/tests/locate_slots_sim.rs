//! The stage locator of MPC units with programmable slots on Icarus
//! (skipped without it): a block rerun alone on the units as generated,
//! with its image programmed before it, shows no differing stage; with one
//! stage register deliberately broken (a bit of its next value flipped in
//! the generated Verilog), the locator names that stage and register: a
//! slot's path (the registered symbols of a library slot) and a
//! hard-wired path (the registered choice), the latter through a
//! co-simulation run that finds the mismatch and locates it.

use std::path::{Path, PathBuf};

use golden::mpc::program::{Form, ProgrammedSet, SlotImage};
use golden::mpc::ModelSet;
use testbench::locate::slots::{locate_slots, ActiveImage, SlotFailing};
use testbench::rng::Rng;
use testbench::rtl::{self, Rtl};
use testbench::run::{self, Config};
use testbench::slots::{directed_block, random_image, ImageKind, SlotOptions, SlotUnit};
use testbench::vectors::CompVector;
use testbench::{Simulator, Unit};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn work(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("locate-slots")
        .join(name)
}

fn unit() -> SlotUnit {
    SlotUnit {
        k: 1,
        form: Form::by_name("stride-lib").expect("form"),
    }
}

/// The units of `models/example` with one `stride-lib` slot, generated
/// once per test into `dir`.
fn generated(dir: &Path) -> Rtl {
    let _ = std::fs::remove_dir_all(dir);
    rtl::generate_units(&root().join("models/example"), dir, Some(unit())).expect("generates")
}

/// A copy of the units in `rtl` where register `reg` of `file` loads its
/// next value with bit `bit` flipped (a patch of the register's
/// non-blocking assignment in the generated text).
fn broken(rtl: &Rtl, file: &str, reg: &str, bit: u32, dir: &Path) -> Rtl {
    let units = hdl::unit::read_units(&rtl.dir.join("params.json")).expect("params.json");
    let width = units
        .iter()
        .flat_map(|u| &u.probes)
        .find(|p| p.name == reg)
        .map(|p| p.width)
        .expect("the register is a published probe");
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).expect("mkdir");
    for e in std::fs::read_dir(&rtl.dir).expect("rtl dir") {
        let path = e.expect("entry").path();
        if path.is_file() {
            std::fs::copy(&path, dir.join(path.file_name().expect("name"))).expect("copy");
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
    let set = ModelSet::load(&root().join("models/example")).expect("set");
    rtl::load_units(dir, &set, &root().join("models/example"), Some(unit())).expect("loads")
}

/// A random image of the unit that loads its slot, and a block the
/// programmed set codes with the slot.
fn image_and_block(set: &ModelSet) -> (SlotImage, [u8; 32]) {
    let mut rng = Rng::new(41);
    loop {
        let image = random_image(set, unit(), &mut rng).expect("image");
        let Some(slot) = image.slots[0].clone() else {
            continue;
        };
        let ps = ProgrammedSet::new(set, &image).expect("programmed set");
        for _ in 0..50 {
            let block = directed_block(&slot, &set.predictors, &mut rng);
            if Some(ps.compress(&block).model) == ps.slot_id(0) {
                return (image, block);
            }
        }
    }
}

#[test]
fn a_broken_slot_register_is_located_at_its_stage_and_the_generated_unit_shows_none() {
    if !testbench::stream_unit::icarus_or_skip() {
        return;
    }
    let set = ModelSet::load(&root().join("models/example")).expect("set");
    let base = work("slot-path");
    let good = generated(&base.join("rtl"));
    let (image, block) = image_and_block(&set);
    let failing = SlotFailing::Comp(CompVector { block, tag: 0 });
    let active = ActiveImage {
        name: "random",
        image: &image,
        epoch: 7,
    };
    let locate = |rtl: &Rtl, name: &str| {
        locate_slots(
            Simulator::Icarus,
            Unit::Compressor,
            rtl,
            &set,
            &base.join(name).join("build"),
            &base.join(name).join("out"),
            failing,
            active,
            None,
        )
        .expect("the locator runs")
    };
    // both cases on two threads (each its own build)
    let reg = "s1_slot_symbols_s0";
    let bad = broken(&good, "mpc_compressor.v", reg, 0, &base.join("broken"));
    let (ok, loc) = std::thread::scope(|s| {
        let a = s.spawn(|| locate(&good, "generated"));
        let b = s.spawn(|| locate(&bad, reg));
        (a.join().expect("generated"), b.join().expect("broken"))
    });
    assert!(ok.isolated_ok && ok.diffs.is_empty(), "{ok}");
    assert!(
        ok.compared
            .iter()
            .any(|c| c == "compressor.slot_symbols_s0"),
        "the slot's probes are compared: {ok}"
    );
    let text = loc.to_string();
    assert!(!loc.isolated_ok, "{text}");
    assert_eq!(
        loc.first_stage.as_deref(),
        Some("compressor stage 1 register"),
        "{text}"
    );
    assert_eq!(loc.diffs[0].signal, reg, "{text}");
    assert_eq!(loc.diffs[0].meaning, "slots[0].symbols", "{text}");
    assert!(text.contains("image random (epoch 7)"), "{text}");
    let gtkw = std::fs::read_to_string(&loc.gtkw[0]).expect("gtkw");
    assert!(gtkw.contains(&format!("mpc_slots_tb.dut.{reg}")), "{gtkw}");
    assert!(loc.dir.join("report.txt").is_file());
    println!("{reg} broken:\n{text}");
}

#[test]
fn a_co_simulation_locates_a_broken_hard_wired_register_of_a_slot_unit() {
    if !testbench::stream_unit::icarus_or_skip() {
        return;
    }
    let base = work("hard-wired-path");
    let good = generated(&base.join("rtl"));
    let reg = "s2_choice_id";
    let bad = broken(&good, "mpc_compressor.v", reg, 0, &base.join("broken"));
    let mut cfg = Config::new(&root().join("models/example"));
    cfg.build = base.join("build");
    cfg.sims = vec![Simulator::Icarus];
    cfg.rtl = Some(bad.dir.clone());
    cfg.units = vec![Unit::Compressor];
    cfg.blocks = 16;
    // the run's build traced: the locator's rerun reuses it
    cfg.vcd = true;
    cfg.corpus = None;
    cfg.program_slots = Some(unit());
    cfg.slot_options = SlotOptions {
        images: vec![ImageKind::Random],
        reprogram_every: 8,
    };
    let reports = run::run(&cfg).expect("co-simulation runs");
    let r = &reports[0];
    let text = r.render();
    assert!(!r.verdict.ok(), "{text}");
    let loc = r
        .location
        .as_ref()
        .unwrap_or_else(|| panic!("located:\n{text}"));
    assert_eq!(
        loc.first_stage.as_deref(),
        Some("compressor stage 2 register"),
        "{text}"
    );
    assert_eq!(loc.diffs[0].signal, reg, "{text}");
    assert!(
        text.contains("first differing stage: compressor stage 2 register"),
        "{text}"
    );
    assert!(loc.window_vcd.is_some(), "{text}");
    println!("{text}");
}
