//! The FO4 delay of a liberty: the delay of its weakest inverter driving
//! four copies of itself, measured with OpenSTA on a generated inverter
//! chain (docs/hw/synthesis.md, "FO4").
//!
//! The chain has [`CHAIN_STAGES`] inverters; each drives the next one and
//! three more copies whose outputs are left open, so every stage sees four
//! inverter inputs. The chain input gets a [`INPUT_SLEW_NS`] edge; the slew
//! settles within two or three stages to the chain's own (self-consistent)
//! FO4 slew, so the delay of stage [`MEASURED_STAGE`] depends on the
//! library alone. OpenSTA times that stage for a rising and a falling
//! output; FO4 is the mean of the two.
//!
//! Results are cached per liberty file by the SHA-256 of its bytes.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use crate::liberty::Liberty;
use crate::SynthError;

/// Inverters in the chain.
pub const CHAIN_STAGES: usize = 11;
/// The stage whose delay is reported (1-based, well past the settling stages).
pub const MEASURED_STAGE: usize = 6;
/// Transition time of the edge at the chain input.
pub const INPUT_SLEW_NS: f64 = 0.1;

/// One FO4 measurement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fo4 {
    pub liberty: String,
    pub liberty_sha256: String,
    /// The inverter (the library's weakest: smallest input capacitance).
    pub inverter: String,
    pub chain_stages: usize,
    pub measured_stage: usize,
    /// Load on the measured stage's output: four inverter inputs (pF).
    pub load_pf: f64,
    /// Delay of the measured stage with a rising output (ns).
    pub rise_ns: f64,
    /// Delay of the measured stage with a falling output (ns).
    pub fall_ns: f64,
    /// (rise + fall) / 2: the FO4 delay (ns).
    pub fo4_ns: f64,
    /// Transition time at the measured stage's input for the rising output
    /// (a falling input edge) and for the falling output (ns).
    pub input_slew_for_rise_ns: f64,
    pub input_slew_for_fall_ns: f64,
    /// Delay of the stages before and after the measured one (rise + fall) / 2:
    /// equal to `fo4_ns` when the slew has settled.
    pub neighbours_ns: [f64; 2],
}

impl Fo4 {
    /// Mean transition time of the measured stage's input (ns): the slew of
    /// a signal driven by an FO4-loaded inverter.
    pub fn slew_ns(&self) -> f64 {
        (self.input_slew_for_rise_ns + self.input_slew_for_fall_ns) / 2.0
    }
}

/// Verilog of the chain: module `fo4_chain (a, y)`, stage `k` is `u<k>`
/// driving net `n<k>`, its three extra loads are `l<k>_1..3`.
pub fn chain_verilog(inverter: &str, input: &str, output: &str, stages: usize) -> String {
    let mut v = String::from("module fo4_chain (a, y);\n  input a;\n  output y;\n");
    for k in 1..=stages {
        let _ = writeln!(v, "  wire n{k};");
    }
    let mut prev = "a".to_string();
    for k in 1..=stages {
        let _ = writeln!(v, "  {inverter} u{k} (.{input}({prev}), .{output}(n{k}));");
        for j in 1..=3 {
            let _ = writeln!(v, "  {inverter} l{k}_{j} (.{input}(n{k}), .{output}());");
        }
        prev = format!("n{k}");
    }
    let _ = writeln!(v, "  assign y = n{stages};\nendmodule");
    v
}

/// The OpenSTA script: for stages `MEASURED_STAGE - 1 ..= MEASURED_STAGE + 1`,
/// the path rising and the path falling through the stage's output.
fn chain_tcl(lib: &Path) -> String {
    let mut s = format!(
        "set_cmd_units -time ns -capacitance pF\nread_liberty {}\nread_verilog chain.v\nlink_design fo4_chain\n\
         set_input_transition {INPUT_SLEW_NS} [get_ports a]\nset_load 0 [get_ports y]\n",
        lib.display()
    );
    for k in MEASURED_STAGE - 1..=MEASURED_STAGE + 1 {
        for edge in ["rise", "fall"] {
            let _ = writeln!(
                s,
                "puts \"@@ u{k} {edge}\"\nreport_checks -{edge}_through [get_pins u{k}/Y] -unconstrained -fields {{slew cap}} -digits 5"
            );
        }
    }
    s
}

/// One stage's delay and input slew, and its load, from a path report with
/// the fields `Cap Slew Delay Time`: the line of `u<k>/Y` and the one before.
fn stage_arc(sec: &str, k: usize) -> Option<(f64, f64, f64)> {
    let pin = format!("u{k}/Y");
    let lines: Vec<&str> = sec.lines().collect();
    let i = lines
        .iter()
        .position(|l| l.split_whitespace().any(|t| t == pin))?;
    let nums = |l: &str| -> Vec<f64> {
        l.split_whitespace()
            .map_while(|t| t.parse::<f64>().ok())
            .collect()
    };
    let here = nums(lines[i]);
    let before = nums(lines.get(i.checked_sub(1)?)?);
    // here: cap slew delay time; before: [cap] slew delay time
    let (cap, delay) = (*here.first()?, *here.get(2)?);
    let slew_in = if before.len() >= 4 {
        before[1]
    } else {
        *before.first()?
    };
    Some((delay, slew_in, cap))
}

/// Measure the FO4 delay of `lib` with OpenSTA in `dir` (chain.v, fo4.tcl, fo4.log).
pub fn measure(lib: &Liberty, dir: &Path) -> Result<Fo4, SynthError> {
    let (inv, a, y) = lib.weakest_inverter()?;
    std::fs::create_dir_all(dir).map_err(|source| SynthError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let v = dir.join("chain.v");
    std::fs::write(&v, chain_verilog(inv, &a.name, &y.name, CHAIN_STAGES))
        .map_err(|source| SynthError::Io { path: v, source })?;
    let libpath = std::fs::canonicalize(&lib.path).unwrap_or_else(|_| lib.path.clone());
    let text = crate::flow::run_sta(dir, "fo4.tcl", &chain_tcl(&libpath))?;
    let log = dir.join("fo4.tcl.log");
    let bad = |what: String| SynthError::Failed {
        tool: "sta",
        log: log.clone(),
        tail: format!("FO4 chain: {what}"),
    };
    let arc = |k: usize, edge: &str| {
        stage_arc(crate::flow::section(&text, &format!("u{k} {edge}")), k)
            .filter(|(d, s, c)| *d > 0.0 && *s > 0.0 && *c > 0.0)
            .ok_or_else(|| {
                bad(format!(
                    "no positive delay, slew and load of u{k}/Y ({edge})"
                ))
            })
    };
    let m = MEASURED_STAGE;
    let (rise, slew_r, load) = arc(m, "rise")?;
    let (fall, slew_f, _) = arc(m, "fall")?;
    let mean =
        |k: usize| -> Result<f64, SynthError> { Ok((arc(k, "rise")?.0 + arc(k, "fall")?.0) / 2.0) };
    Ok(Fo4 {
        liberty: lib.path.display().to_string(),
        liberty_sha256: lib.sha256.clone(),
        inverter: inv.to_string(),
        chain_stages: CHAIN_STAGES,
        measured_stage: m,
        load_pf: load,
        rise_ns: rise,
        fall_ns: fall,
        fo4_ns: (rise + fall) / 2.0,
        input_slew_for_rise_ns: slew_r,
        input_slew_for_fall_ns: slew_f,
        neighbours_ns: [mean(m - 1)?, mean(m + 1)?],
    })
}

/// Serialises measurements within this process (two units synthesised in
/// parallel share one cache entry).
static CACHE_LOCK: Mutex<()> = Mutex::new(());

/// Where the measurement of `lib` is cached under `cache`.
pub fn cache_path(lib: &Liberty, cache: &Path) -> PathBuf {
    cache.join(format!(
        "fo4-{}.json",
        &lib.sha256[..16.min(lib.sha256.len())]
    ))
}

/// The FO4 delay of `lib`: read from `cache` when it was measured for a
/// file with the same SHA-256, measured (in `cache/fo4-<hash>/`) and cached
/// otherwise. The flag says whether it came from the cache.
pub fn measure_cached(lib: &Liberty, cache: &Path) -> Result<(Fo4, bool), SynthError> {
    let _guard = CACHE_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let file = cache_path(lib, cache);
    if let Some(f) = std::fs::read_to_string(&file)
        .ok()
        .and_then(|t| serde_json::from_str::<Fo4>(&t).ok())
        .filter(|f| f.liberty_sha256 == lib.sha256 && f.fo4_ns > 0.0)
    {
        return Ok((f, true));
    }
    let stem = file.with_extension("");
    let f = measure(lib, &stem)?;
    let json = serde_json::to_string_pretty(&f).map_err(|e| SynthError::Netlist {
        path: file.clone(),
        problem: e.to_string(),
    })?;
    // Another process may be writing the same entry: write aside, then rename.
    let tmp = file.with_extension(format!("json.{}", std::process::id()));
    std::fs::write(&tmp, json).map_err(|source| SynthError::Io {
        path: tmp.clone(),
        source,
    })?;
    std::fs::rename(&tmp, &file).map_err(|source| SynthError::Io {
        path: file.clone(),
        source,
    })?;
    Ok((f, false))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chain_has_four_loads_per_stage() {
        let v = chain_verilog("INVX1", "A", "Y", 3);
        assert_eq!(v.matches("INVX1 ").count(), 12);
        assert!(v.contains("INVX1 u2 (.A(n1), .Y(n2));"));
        assert_eq!(v.matches(".A(n2)").count(), 4);
        assert!(v.contains("assign y = n3;"));
    }

    #[test]
    fn stage_arc_reads_delay_input_slew_and_load() {
        let sec = "   0.03730    0.09076    0.09359    0.48871 v u5/Y (INVX1)\n   0.03729    0.10511    0.10477    0.59348 ^ u6/Y (INVX1)\n";
        assert_eq!(stage_arc(sec, 6), Some((0.10477, 0.09076, 0.03729)));
        assert_eq!(stage_arc(sec, 7), None);
    }
}
