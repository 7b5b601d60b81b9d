//! `mpc` with the GPU engine, on whatever adapter exists (llvmpipe in CI;
//! `MPCGEN_REQUIRE_GPU=1` makes a missing one a failure): containers equal
//! the CPU engines' for every GPU codec, decode on either engine; `auto`
//! never picks a software adapter; adapter errors name what was found.
//! (`calibrate --gpu` skips software adapters; it is not run here for time.)
#![cfg(feature = "gpu")]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use bulk::gpu::device::test_gpu;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn mpc(args: &[&str], dir: &Path) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_mpc"));
    c.args(args)
        .current_dir(root())
        .env("MPCGEN_CALIBRATION", dir.join("calibration.toml"));
    c.env_remove("RUST_BACKTRACE");
    c.output().expect("run mpc")
}

fn ok(o: &Output, what: &str) {
    assert!(
        o.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// A corpus file, cut to `bytes` (an odd length: the last block is partial).
fn sample(dir: &Path, bytes: usize) -> PathBuf {
    let corpus = root().join("../shared/corpus");
    let files =
        datafiles::corpus::data_files_of(&corpus).expect("the dev corpus in ../shared/corpus");
    let mut data = Vec::new();
    for f in files.iter().step_by(5) {
        data.extend(
            std::fs::read(f)
                .expect("corpus file")
                .into_iter()
                .take(bytes / 4),
        );
        if data.len() >= bytes {
            break;
        }
    }
    data.truncate(bytes);
    let p = dir.join("sample.bin");
    std::fs::write(&p, &data).expect("write sample");
    p
}

#[test]
fn gpu_and_cpu_containers_are_identical_and_cross_decode() {
    if test_gpu().is_none() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let input = sample(dir.path(), 1_500_001);
    let inp = input.to_str().expect("utf-8 path");
    // mpc twice: with the group length table (version 2, the default) and
    // without it (version 1, decoded on the GPU one chunk per segment)
    for (name, algo, extra) in [
        ("mpc", "mpc", &[][..]),
        ("mpc-v1", "mpc", &["--block-groups", "0"][..]),
        ("magbdi", "magbdi", &[][..]),
        ("dpc", "dpc", &[][..]),
    ] {
        let cpu = dir.path().join(format!("{name}.cpu.gmcz"));
        let gpu = dir.path().join(format!("{name}.gpu.gmcz"));
        let (c, g) = (cpu.to_str().expect("path"), gpu.to_str().expect("path"));
        ok(
            &mpc(
                &[
                    &["compress", "-q", "-a", algo, "--engine", "parallel"][..],
                    extra,
                    &[inp, "-o", c],
                ]
                .concat(),
                dir.path(),
            ),
            "cpu compress",
        );
        // small windows: several windows, the last one partial
        ok(
            &mpc(
                &[
                    &[
                        "compress", "-q", "-a", algo, "--engine", "gpu", "--window", "3",
                    ][..],
                    extra,
                    &[inp, "-o", g],
                ]
                .concat(),
                dir.path(),
            ),
            "gpu compress",
        );
        assert!(
            std::fs::read(&cpu).expect("cpu") == std::fs::read(&gpu).expect("gpu"),
            "{name}: containers differ"
        );
        for (from, engine) in [(c, "gpu"), (g, "parallel")] {
            let out = dir.path().join(format!("{name}.{engine}.out"));
            ok(
                &mpc(
                    &[
                        "decompress",
                        "-q",
                        "--engine",
                        engine,
                        from,
                        "-o",
                        out.to_str().expect("path"),
                    ],
                    dir.path(),
                ),
                "decompress",
            );
            assert!(
                std::fs::read(&out).expect("out") == std::fs::read(&input).expect("in"),
                "{name} via {engine}"
            );
        }
    }
}

#[test]
fn auto_never_picks_a_software_adapter() {
    let Some(gpu) = test_gpu() else { return };
    if !gpu.adapter.is_software() {
        return; // a real GPU is present: nothing to check here
    }
    let dir = tempfile::tempdir().expect("tempdir");
    // a calibration that says "GPU from 0 bytes"
    std::fs::write(
        dir.path().join("calibration.toml"),
        "[magbdi]\ncompress_threshold = 0\ndecompress_threshold = 0\nthreads = 2\ncompress_single_mb_s = 1.0\n\
         compress_parallel_mb_s = 1.0\ndecompress_single_mb_s = 1.0\ndecompress_parallel_mb_s = 1.0\n\
         gpu_compress_threshold = 0\ngpu_decompress_threshold = 0\n",
    )
    .expect("calibration");
    let input = sample(dir.path(), 100_000);
    let out = dir.path().join("a.gmcz");
    let o = mpc(
        &[
            "compress",
            "-a",
            "magbdi",
            input.to_str().expect("path"),
            "-o",
            out.to_str().expect("path"),
        ],
        dir.path(),
    );
    ok(&o, "auto compress");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("Parallel engine") && !err.contains("GPU engine on"),
        "{err}"
    );
}

#[test]
fn adapter_errors_list_the_adapters_found() {
    let dir = tempfile::tempdir().expect("tempdir");
    let input = sample(dir.path(), 10_000);
    let o = mpc(
        &[
            "compress",
            "-a",
            "magbdi",
            "--engine",
            "gpu",
            "--gpu-adapter",
            "no-such-gpu",
            input.to_str().expect("path"),
        ],
        dir.path(),
    );
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("no-such-gpu") && err.contains("adapters found"),
        "{err}"
    );
    assert!(
        !dir.path().join("sample.bin.gmcz").exists(),
        "a failed command left its output"
    );
    let o = mpc(
        &[
            "compress",
            "--engine",
            "gpu",
            "-a",
            "fpc",
            input.to_str().expect("path"),
        ],
        dir.path(),
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("no GPU kernels for `fpc`"));
}
