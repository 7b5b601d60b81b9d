//! Helpers shared by the tests of `mpc program`.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The `mpc` binary, run from the repository root.
pub fn mpc() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_mpc"));
    c.current_dir(root());
    c
}

/// int32 data the hard-wired set codes poorly: words 0x0101 apart with a
/// little noise, `blocks` 32-byte blocks, written to `dir/app.bin`.
pub fn data(dir: &Path, blocks: u32) -> PathBuf {
    let mut v = Vec::new();
    for i in 0..blocks {
        for w in 0..8u32 {
            let x = (i * 8 + w) * 0x0101 + ((i * 7 + w * 3) % 5);
            v.extend_from_slice(&x.to_le_bytes());
        }
    }
    let p = dir.join("app.bin");
    std::fs::write(&p, v).expect("write data");
    p
}
