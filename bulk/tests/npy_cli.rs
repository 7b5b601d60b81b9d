//! `.npy` arrays through the `mpc` tools: `compress` codes the array's
//! bytes in C order (streamed after the header, or reordered when the file
//! is in Fortran order) and `decompress` gives those bytes back; `ratio`
//! and `bench` read arrays as they read raw dumps.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

#[path = "../../golden/tests/common/mod.rs"]
mod common;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../golden/tests/data/npy")
        .join(name)
}

fn mpc(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mpc"))
        .args(args)
        .current_dir(dir)
        .env_remove("RUST_BACKTRACE")
        .env("MPCGEN_CALIBRATION", dir.join("none.toml"))
        .output()
        .expect("run mpc")
}

fn ok(o: &Output, what: &str) -> String {
    assert!(
        o.status.success(),
        "{what}: {}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn compress_codes_the_array_bytes_and_decompress_returns_them() {
    let d = tempfile::tempdir().expect("tempdir");
    let model = Path::new(env!("CARGO_MANIFEST_DIR")).join("../models/default");
    let m = model.to_str().expect("path");
    for name in ["f4_2d", "f8_fortran_2d", "u2_fortran_3d", "i2_be_3d", "v2"] {
        let input = d.path().join(format!("{name}.npy"));
        std::fs::copy(data(&format!("{name}.npy")), &input).expect("copy");
        let expect = std::fs::read(data(&format!("{name}.expect"))).expect("expect");
        for algo in ["mpc", "dpc"] {
            let packed = d.path().join(format!("{name}.{algo}.gmcz"));
            let out = d.path().join(format!("{name}.{algo}.out"));
            let (i, p, o) = (
                input.to_str().expect("path"),
                packed.to_str().expect("path"),
                out.to_str().expect("path"),
            );
            let c = ["compress", "-q", "-m", m, "-a", algo, i, "-o", p];
            ok(&mpc(&c, d.path()), "compress");
            let x = ["decompress", "-q", "-m", m, p, "-o", o];
            ok(&mpc(&x, d.path()), "decompress");
            assert_eq!(std::fs::read(&out).expect("out"), expect, "{name}, {algo}");
            let info = ok(&mpc(&["info", p], d.path()), "info");
            assert!(
                info.contains(&format!("{}", expect.len())),
                "{name}: info does not give the array's {} bytes:\n{info}",
                expect.len()
            );
        }
    }
}

#[test]
fn ratio_and_bench_read_arrays() {
    let d = tempfile::tempdir().expect("tempdir");
    // 4 KiB of an array (whole 32-byte blocks) and the same bytes raw
    let raw: Vec<u8> = (0..4096u32).map(|i| (i % 251) as u8).collect();
    let npy = common::npy_v1(
        "{'descr': '<u2', 'fortran_order': False, 'shape': (2048,), }",
        &raw,
    );
    std::fs::write(d.path().join("a.npy"), &npy).expect("write");
    std::fs::write(d.path().join("a.bin"), &raw).expect("write");
    let model = Path::new(env!("CARGO_MANIFEST_DIR")).join("../models/default");
    let m = model.to_str().expect("path");
    let ratio = |f: &str| {
        let s = ok(&mpc(&["ratio", "--model", m, f], d.path()), "ratio");
        s.lines()
            .find(|l| l.contains(f))
            .unwrap_or_else(|| panic!("no line for {f}:\n{s}"))
            .replace(f, "")
    };
    assert_eq!(ratio("a.npy"), ratio("a.bin"));
    let b = ok(
        &mpc(&["bench", "--algos", "mpc", "-m", m, "."], d.path()),
        "bench",
    );
    assert!(b.starts_with("2 files, 0.0 MB"), "{b}");
    // a broken array is an error naming the file
    std::fs::write(d.path().join("bad.npy"), &npy[..npy.len() - 3]).expect("write");
    let o = mpc(&["ratio", "--model", m, "bad.npy"], d.path());
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("bad.npy: .npy shape [2048]"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}
