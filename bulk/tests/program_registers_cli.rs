//! `mpc program --registers FILE` (docs/hw/program-slots.md section 5): the
//! register writes of the image it trains, as `ADDRESS VALUE` hex lines
//! ending with the COMMIT write, equal to `image_writes` of the image it
//! writes beside them; the epoch option; the output rules.

use std::path::Path;

use golden::mpc::program::registers::{RegisterWrite, SlotRegisters, COMMIT, EPOCH};
use golden::mpc::program::{image_writes, ProgrammedSet, SlotImage};
use golden::mpc::ModelSet;

mod common;
use common::{data, mpc, root};

/// The writes of a registers file, checking the line format.
fn parse(text: &str) -> Vec<RegisterWrite> {
    text.lines()
        .map(|l| {
            let (a, v) = l.split_once(' ').unwrap_or_else(|| panic!("line {l:?}"));
            assert!(a.starts_with("0x") && a.len() == 5, "address {a:?}");
            assert!(v.starts_with("0x") && v.len() == 10, "value {v:?}");
            RegisterWrite {
                addr: u16::from_str_radix(&a[2..], 16).expect("hex address"),
                value: u32::from_str_radix(&v[2..], 16).expect("hex value"),
            }
        })
        .collect()
}

fn program(file: &Path, form: &str, extra: &[&std::ffi::OsStr]) -> std::process::Output {
    mpc()
        .args(["program", "--model", "models/default", "--form", form])
        .args(["--slots", "2", "--sample-bytes", "32768"])
        .args(extra)
        .arg(file)
        .output()
        .expect("mpc runs")
}

#[test]
fn registers_are_the_writes_of_the_image() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = data(dir.path(), 1024);
    let set = ModelSet::load(&root().join("models/default")).expect("set");
    for form in ["stride-colpart", "stride-lib", "stride-cols"] {
        let img = dir.path().join(format!("{form}.img"));
        let regs = dir.path().join(format!("{form}.regs"));
        let out = program(
            &file,
            form,
            &[
                "--output".as_ref(),
                img.as_os_str(),
                "--registers".as_ref(),
                regs.as_os_str(),
                "--epoch".as_ref(),
                "7".as_ref(),
            ],
        );
        assert!(
            out.status.success(),
            "{form}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let msg = String::from_utf8_lossy(&out.stderr);
        assert!(msg.contains("register writes, epoch 7"), "{msg}");
        let image = SlotImage::load(&std::fs::read(&img).expect("image")).expect("loads");
        let text = std::fs::read_to_string(&regs).expect("registers written");
        let writes = parse(&text);
        assert_eq!(
            writes,
            image_writes(&set, &image, 7).expect("writes"),
            "{form}"
        );
        assert_eq!(
            writes[0],
            RegisterWrite {
                addr: EPOCH,
                value: 7
            }
        );
        assert_eq!(
            writes.last(),
            Some(&RegisterWrite {
                addr: COMMIT,
                value: 1
            })
        );
        // the registers hold the predictors the image codes with
        let (r, commits) = SlotRegisters::from_writes(image.form, 2, set.predictors.len(), &writes)
            .expect("registers");
        assert_eq!(commits, 1);
        let unit = ProgrammedSet::new(&set, &image).expect("fits");
        let p = set.predictors.len();
        let held: Vec<_> = r
            .predictors(&set)
            .expect("predictors")
            .into_iter()
            .flatten()
            .collect();
        assert_eq!(held[..], unit.expanded().predictors[p..], "{form}");
    }
}

#[test]
fn registers_alone_default_epoch_and_the_output_rules() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = data(dir.path(), 1024);
    let regs = dir.path().join("slots.regs");
    let run = |extra: &[&std::ffi::OsStr]| {
        program(
            &file,
            "stride-colpart",
            &[&["--registers".as_ref(), regs.as_os_str()], extra].concat(),
        )
    };
    let out = run(&[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let first = std::fs::read_to_string(&regs).expect("registers written");
    let writes = parse(&first);
    // epoch 1 by default; 2 + 2 x (1 + 8 + 60) writes
    assert_eq!(
        writes[0],
        RegisterWrite {
            addr: EPOCH,
            value: 1
        }
    );
    assert_eq!(writes.len(), 2 + 2 * 69);
    assert!(first.ends_with("0x000 0x00000001\n"), "{first}");
    // an existing file needs --force and is left as it was
    let again = run(&["--epoch".as_ref(), "2".as_ref()]);
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("--force"));
    assert_eq!(std::fs::read_to_string(&regs).expect("kept"), first);
    let forced = run(&["--force".as_ref(), "--epoch".as_ref(), "2".as_ref()]);
    assert!(forced.status.success());
    let second = parse(&std::fs::read_to_string(&regs).expect("rewritten"));
    assert_eq!(
        second[0],
        RegisterWrite {
            addr: EPOCH,
            value: 2
        }
    );
    assert_eq!(second[1..], writes[1..]);
    // nothing to write; --epoch without --registers; a bad epoch
    let none = program(&file, "stride-colpart", &[]);
    assert!(!none.status.success());
    let img = dir.path().join("x.img");
    let epoch_alone = program(
        &file,
        "stride-colpart",
        &[
            "--output".as_ref(),
            img.as_os_str(),
            "--epoch".as_ref(),
            "3".as_ref(),
        ],
    );
    assert!(!epoch_alone.status.success());
    assert!(!img.exists());
    let bad = run(&["--force".as_ref(), "--epoch".as_ref(), "256".as_ref()]);
    assert!(!bad.status.success());
    // the any-base forms have no register map; nothing is written
    let full = dir.path().join("full.regs");
    let out = program(&file, "full", &["--registers".as_ref(), full.as_os_str()]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("no register map"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!full.exists());
    // the same file for both outputs is refused
    let same = program(
        &file,
        "stride-colpart",
        &[
            "--output".as_ref(),
            regs.as_os_str(),
            "--registers".as_ref(),
            regs.as_os_str(),
            "--force".as_ref(),
        ],
    );
    assert!(!same.status.success());
}
