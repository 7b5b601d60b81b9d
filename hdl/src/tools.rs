//! External tools (simulators, Yosys, OpenSTA) as test prerequisites.
//!
//! Tests that need a tool call [`available`]: without the tool the test
//! prints how to install it and returns early, unless the environment sets
//! `MPCGEN_REQUIRE_TOOLS=1` (CI does), in which case a missing tool fails
//! the test: a broken install cannot pass by skipping. The shared corpus
//! (`../shared/corpus`) is treated the same way.

/// True when `tool` is an executable on `PATH`.
pub fn on_path(tool: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(tool).is_file()))
}

/// `MPCGEN_REQUIRE_TOOLS=1`: a missing prerequisite fails the test.
pub fn strict() -> bool {
    std::env::var("MPCGEN_REQUIRE_TOOLS").is_ok_and(|v| v == "1")
}

/// Report that `what` (e.g. "iverilog not on PATH") stops the test `test`:
/// a panic in strict mode, else a note on stderr (the caller then returns).
pub fn missing(what: &str, test: &str, hint: &str) {
    assert!(
        !strict(),
        "MPCGEN_REQUIRE_TOOLS=1 and {what}, which {test} needs ({hint})"
    );
    eprintln!("SKIPPED {test}: {what} ({hint})");
}

/// Whether every tool in `tools` is on `PATH`; when one is not, reports it
/// with [`missing`] (a panic in strict mode) and returns false.
pub fn available(tools: &[&str], test: &str, hint: &str) -> bool {
    match tools.iter().find(|t| !on_path(t)) {
        None => true,
        Some(t) => {
            missing(&format!("`{t}` is not on PATH"), test, hint);
            false
        }
    }
}
