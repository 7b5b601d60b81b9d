//! Tool checks shared by the synthesis tests. Without yosys, OpenSTA or
//! the liberty a test prints how to install them and passes, unless
//! `MPCGEN_REQUIRE_TOOLS=1` is set: then a missing tool fails the test.

use synth::flow;
use synth::liberty::Liberty;

fn missing(what: &str) {
    hdl::prereq::missing(what, "this synthesis test", flow::INSTALL_HINT);
}

/// Is `tool` runnable? Fails the test in strict mode when it is not.
pub fn have(tool: &str) -> bool {
    if flow::have_tool(tool) {
        true
    } else {
        missing(&format!("{tool} not found"));
        false
    }
}

/// The liberty, when every tool in `tools` is runnable and the liberty is
/// found; `None` (after printing why) otherwise; a failure in strict mode.
pub fn tools_and_liberty(tools: &[&str]) -> Option<Liberty> {
    for t in tools {
        if !have(t) {
            return None;
        }
    }
    match flow::find_liberty(None) {
        Ok(p) => Some(Liberty::load(&p).expect("liberty parses")),
        Err(e) => {
            missing(&e.to_string());
            None
        }
    }
}
