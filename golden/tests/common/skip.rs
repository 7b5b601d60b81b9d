//! The one rule for a test whose prerequisite (a tool, the shared corpus,
//! a GPU adapter) is missing. This file uses nothing but `std` and is
//! compiled, through `#[path]`, into every crate that has such tests:
//! `hdl::prereq` (and through it the `testbench` and `synth` tests), the GPU
//! engine's `test_gpu`, the fuzzer and the training tests. It has no crate
//! of its own so that `golden` and `bulk` need no new dependency.
//!
//! * Strict mode: the prerequisite's variable (`MPCGEN_REQUIRE_TOOLS` for
//!   tools and the corpus, `MPCGEN_REQUIRE_GPU` for the GPU adapter) set
//!   to exactly `1`. Any other value, or none, is not strict. In strict
//!   mode [`skip`] panics: the test fails.
//! * Otherwise [`skip`] prints `SKIPPED ...` on stderr and, when
//!   `MPCGEN_SKIP_LOG` names a file, appends one line
//!   `CRATE TEST: REASON` to it (`make test` sets it and prints the lines
//!   at the end). The file is opened in append mode and each line is one
//!   `write`, so test threads and processes running at once do not mix
//!   their lines.
#![allow(dead_code)]

use std::io::Write;
use std::path::Path;

/// Strict for external tools (simulators, Yosys, OpenSTA) and the corpus.
pub const REQUIRE_TOOLS: &str = "MPCGEN_REQUIRE_TOOLS";
/// Strict for the GPU adapter of the GPU engine's tests.
pub const REQUIRE_GPU: &str = "MPCGEN_REQUIRE_GPU";
/// The file every skip appends its line to.
pub const SKIP_LOG: &str = "MPCGEN_SKIP_LOG";

/// Whether `var` asks for strict mode: it is set to exactly `1`.
pub fn strict(var: &str) -> bool {
    std::env::var_os(var).is_some_and(|v| v == "1")
}

/// `test` cannot run (or runs in part) because of `reason`: a panic when
/// `strict_var` is `1`, else a note on stderr and a line in the skip log.
/// `test` describes what is left out; the log names the running test by
/// its libtest name when there is one.
pub fn skip(strict_var: &str, test: &str, reason: &str) {
    let log = std::env::var_os(SKIP_LOG).filter(|p| !p.is_empty());
    skip_with(
        strict(strict_var),
        log.as_deref().map(Path::new),
        strict_var,
        test,
        reason,
    );
}

/// [`skip`] with the mode and the log given instead of read from the
/// environment.
pub fn skip_with(strict: bool, log: Option<&Path>, strict_var: &str, test: &str, reason: &str) {
    let reason = one_line(reason);
    assert!(!strict, "{strict_var}=1 and {test} cannot run: {reason}");
    eprintln!("SKIPPED {test}: {reason}");
    if let Some(log) = log {
        let line = format!("{} {}: {reason}\n", crate_name(), test_name(test));
        if let Err(e) = append(log, &line) {
            panic!(
                "{test} is skipped ({reason}) and the skip cannot be recorded in {} \
                 ({SKIP_LOG}): {e}",
                log.display()
            );
        }
    }
}

/// `line` appended to `log` in one `write` (O_APPEND).
fn append(log: &Path, line: &str) -> std::io::Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(log)?;
    let n = f.write(line.as_bytes())?;
    if n == line.len() {
        Ok(())
    } else {
        Err(std::io::Error::new(
            std::io::ErrorKind::WriteZero,
            format!("{n} of {} bytes written", line.len()),
        ))
    }
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The package under test: `CARGO_PKG_NAME` as `cargo test` and
/// `cargo run` set it, else the executable's name without cargo's hash.
fn crate_name() -> String {
    if let Some(n) = std::env::var_os("CARGO_PKG_NAME").filter(|n| !n.is_empty()) {
        return n.to_string_lossy().into_owned();
    }
    exe_stem().unwrap_or_else(|| "?".into())
}

/// The running test as libtest names it (its thread's name), prefixed by
/// the integration-test target; `test` outside a test thread.
fn test_name(test: &str) -> String {
    let thread = std::thread::current();
    match thread.name() {
        Some(n) if n != "main" => match exe_stem() {
            Some(target) if target.replace('-', "_") != crate_name().replace('-', "_") => {
                format!("{target}::{n}")
            }
            _ => n.to_string(),
        },
        _ => one_line(test),
    }
}

/// The executable's file name without cargo's `-<hash>` suffix.
fn exe_stem() -> Option<String> {
    let exe = std::env::current_exe().ok()?;
    let stem = exe.file_stem()?.to_string_lossy().into_owned();
    Some(match stem.rsplit_once('-') {
        Some((name, hash)) if hash.len() == 16 && hash.chars().all(|c| c.is_ascii_hexdigit()) => {
            name.to_string()
        }
        _ => stem,
    })
}
