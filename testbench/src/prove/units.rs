//! What the proofs of the MAG-aware BDI and DPC units share
//! (docs/hw/formal.md, "MAG-aware BDI" and "DPC"): the work directory, a
//! check of one miter module built from unit files and a wrapper, a
//! depth-variant check, the counterexample files and the report (its
//! verdict and check lines are those of the MPC report).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use super::{
    absolute, depth_script, io, iprove, unit_file, view_script, write, yosys, Check, MpcReport,
    Outcome, ProveError, TRANSPARENT_MAP,
};

/// The inputs of one unit's pins that the views tie (clock and reset
/// low, the handshake always open).
pub(super) const TIES: &str =
    ".clk(1'b0), .rst(1'b0), .in_valid(1'b1), .in_ready(), .out_valid(), .out_ready(1'b1)";

/// A round-trip counterexample, written as files the co-simulation
/// replays.
#[derive(Clone, Debug)]
pub struct UnitCounterexample {
    /// The check it falsifies.
    pub check: String,
    /// The input block (byte 0 first, as the units' `in_block` bit 0 up).
    pub block: Vec<u8>,
    /// The critical-sector mask (DPC DF-TRUC and DF-MAN), bit `k` =
    /// sector `k`.
    pub mask: Option<u32>,
    /// The block as a corpus file (`--corpus FILE`).
    pub corpus: PathBuf,
    /// The block in hex and the mask, as text.
    pub text: PathBuf,
    /// The co-simulation command that replays the block.
    pub replay: String,
}

/// The result of `cosim prove magbdi` or `cosim prove dpc`.
#[derive(Clone, Debug)]
pub struct UnitsReport {
    /// `magbdi` or `dpc`.
    pub design: String,
    /// The configuration, in words.
    pub config: String,
    pub rtl_dir: PathBuf,
    pub work: PathBuf,
    pub checks: Vec<Check>,
    pub notes: Vec<String>,
    pub counterexamples: Vec<UnitCounterexample>,
    /// Only some checks were asked for: all of them proven is not a
    /// proof of the units.
    pub partial: bool,
    /// Failed pipeline-control checks with their stall and reset schedule.
    pub control_schedules: Vec<super::control::ControlReport>,
}

impl UnitsReport {
    /// The checks in the MPC report's form, for its verdict and lines.
    fn as_mpc(&self) -> MpcReport {
        MpcReport {
            set: self.config.clone(),
            rtl_dir: self.rtl_dir.clone(),
            work: self.work.clone(),
            checks: self.checks.clone(),
            counterexample: None,
            notes: self.notes.clone(),
            partial: self.partial,
            control_schedules: Vec::new(),
        }
    }

    /// Every check proven.
    pub fn proven(&self) -> bool {
        self.as_mpc().proven()
    }

    /// The last line: `proven`, or what failed or stayed undecided.
    pub fn last_line(&self) -> String {
        self.as_mpc().last_line()
    }

    /// The report as text (without the last line).
    pub fn render(&self) -> String {
        let mut s = format!(
            "cosim prove {}: {}, units in {}\n",
            self.design,
            self.config,
            self.rtl_dir.display()
        );
        // the notes and check lines as the MPC report writes them (its
        // first line names the model set, its last the work files)
        let body = self.as_mpc().render(Path::new(""));
        let lines: Vec<&str> = body.lines().collect();
        for l in lines.iter().skip(1).take(lines.len().saturating_sub(2)) {
            let _ = writeln!(s, "{l}");
        }
        for r in &self.control_schedules {
            let Some((path, sched)) = &r.schedule else {
                continue;
            };
            let _ = writeln!(
                s,
                "  counterexample schedule of {} (from a reset; at its last cycle these fail: {}):",
                r.module,
                r.failing.join(", ")
            );
            for line in super::control::schedule_table(sched).lines() {
                let _ = writeln!(s, "    {line}");
            }
            let _ = writeln!(s, "    schedule file: {}", path.display());
        }
        for c in &self.counterexamples {
            let _ = writeln!(
                s,
                "  counterexample of `{}`: block ({} bytes, byte 0 first) {}",
                c.check,
                c.block.len(),
                crate::hex::bytes_hex(&c.block)
            );
            if let Some(m) = c.mask {
                let _ = writeln!(s, "    mask {m:#x} (bit k = sector k)");
            }
            let _ = writeln!(s, "    corpus file: {}", c.corpus.display());
            let _ = writeln!(s, "    replay: {}", c.replay);
        }
        let _ = writeln!(s, "  work files: {}", self.work.display());
        s
    }
}

/// Create the work directory with the transparent map and the wrappers.
pub(super) fn work_dir(dir: &Path, wrappers: &str) -> Result<PathBuf, ProveError> {
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let work = absolute(dir);
    write(&work.join("transparent.v"), TRANSPARENT_MAP)?;
    write(&work.join("wrappers.v"), wrappers)?;
    Ok(work)
}

/// The Verilog files of `modules` among the `.v` files of `dir` (or of
/// the generated `files`).
pub(super) fn unit_files(
    dir: &Path,
    files: Option<&[PathBuf]>,
    modules: &[&str],
) -> Result<Vec<PathBuf>, ProveError> {
    let all: Vec<PathBuf> = match files {
        Some(f) => f.to_vec(),
        None => {
            let mut v = Vec::new();
            for e in std::fs::read_dir(dir).map_err(io(dir))? {
                let p = e.map_err(io(dir))?.path();
                if p.extension().is_some_and(|x| x == "v") {
                    v.push(p);
                }
            }
            v.sort();
            v
        }
    };
    let all: Vec<PathBuf> = all.iter().map(|f| absolute(f)).collect();
    modules
        .iter()
        .map(|m| unit_file(&all, m, dir))
        .collect::<Result<Vec<_>, _>>()
}

/// Decide the miter module `top` of `wrappers.v` over the units in
/// `files` (each made transparent).
pub(super) fn miter(
    work: &Path,
    files: &[PathBuf],
    top: &str,
    seconds: u32,
) -> Result<(Outcome, f64), ProveError> {
    let t0 = Instant::now();
    write(
        &work.join(format!("{top}.ys")),
        &view_script(files, &[], &[], "wrappers.v", top, top),
    )?;
    yosys(work, &format!("{top}.ys"))?;
    let outcome = iprove(work, top, seconds)?;
    Ok((outcome, t0.elapsed().as_secs_f64()))
}

/// Yosys commands that read `files` once, make them transparent and save
/// the design, then for each miter module of `tops` (in `top_file`) load
/// it, flatten and write `<top>.aig` with its map, as [`view_script`]
/// does for one.
fn cases_script(files: &[PathBuf], top_file: &str, tops: &[String]) -> String {
    let mut s = view_script(files, &[], &[], top_file, "TOP", "STEM");
    // the part before the wrapper is read: the units, made transparent
    let cut = s
        .find(&format!("read_verilog {top_file}"))
        .unwrap_or(s.len());
    s.truncate(cut);
    s.push_str("design -save units\n");
    for t in tops {
        let _ = write!(
            s,
            "design -load units\nread_verilog {top_file}\nhierarchy -top {t}\n\
             flatten\nopt_clean\ncheck -assert\ntechmap\nopt -fast\naigmap\n\
             write_aiger -map {t}.map {t}.aig\n"
        );
    }
    s
}

/// Decide the miter modules `tops` of `top_file` (written beside the
/// wrappers) over the units in `files`, the views built in one Yosys run:
/// each outcome with its ABC time (the Yosys run's time spread evenly).
pub(super) fn miters(
    work: &Path,
    files: &[PathBuf],
    top_file: &str,
    stem: &str,
    tops: &[String],
    seconds: u32,
) -> Result<Vec<(Outcome, f64)>, ProveError> {
    let t0 = Instant::now();
    write(
        &work.join(format!("{stem}.ys")),
        &cases_script(files, top_file, tops),
    )?;
    yosys(work, &format!("{stem}.ys"))?;
    let each = t0.elapsed().as_secs_f64() / tops.len().max(1) as f64;
    tops.iter()
        .map(|t| {
            let t1 = Instant::now();
            let o = iprove(work, t, seconds)?;
            Ok((o, each + t1.elapsed().as_secs_f64()))
        })
        .collect()
}

/// Decide the depth miter `depth_<unit>` of `wrappers.v`: `module` of
/// `under` (as `unit_a`) against `module` of `variant` (as `unit_b`).
pub(super) fn depth(
    work: &Path,
    under: &Path,
    variant: &Path,
    module: &str,
    unit: &str,
    stem: &str,
    seconds: u32,
) -> Result<(Outcome, f64), ProveError> {
    let t0 = Instant::now();
    write(
        &work.join(format!("{stem}.ys")),
        &depth_script(under, variant, module, unit, stem),
    )?;
    yosys(work, &format!("{stem}.ys"))?;
    let outcome = iprove(work, stem, seconds)?;
    Ok((outcome, t0.elapsed().as_secs_f64()))
}

/// The value of port `port` (least significant bit first) as bytes,
/// bit 0 of byte 0 first.
pub(super) fn bytes_of(ports: &BTreeMap<String, Vec<bool>>, port: &str, n: usize) -> Vec<u8> {
    let mut b = vec![0u8; n];
    if let Some(bits) = ports.get(port) {
        for (i, &v) in bits.iter().enumerate().take(8 * n) {
            if v {
                b[i / 8] |= 1 << (i % 8);
            }
        }
    }
    b
}

/// The value of a port of at most 32 bits.
pub(super) fn uint_of(ports: &BTreeMap<String, Vec<bool>>, port: &str) -> u32 {
    ports.get(port).map_or(0, |bits| {
        bits.iter()
            .take(32)
            .enumerate()
            .filter(|(_, &v)| v)
            .fold(0, |a, (i, _)| a | (1 << i))
    })
}

/// Write a counterexample's block as the corpus file
/// `counterexample_<stem>.bin` and its text `counterexample_<stem>.txt`.
pub(super) fn write_counterexample(
    work: &Path,
    stem: &str,
    check: &str,
    block: Vec<u8>,
    mask: Option<u32>,
    replay: impl FnOnce(&Path) -> String,
) -> Result<UnitCounterexample, ProveError> {
    let corpus = work.join(format!("counterexample_{stem}.bin"));
    std::fs::write(&corpus, &block).map_err(io(&corpus))?;
    let text = work.join(format!("counterexample_{stem}.txt"));
    let mut t = format!(
        "# {check}: input block, byte 0 first\n{}\n",
        crate::hex::bytes_hex(&block)
    );
    if let Some(m) = mask {
        let _ = writeln!(t, "# in_mask (bit k = sector k)\n{m:#x}");
    }
    write(&text, &t)?;
    let replay = replay(&corpus);
    Ok(UnitCounterexample {
        check: check.to_string(),
        block,
        mask,
        corpus,
        text,
        replay,
    })
}

/// The pipeline-control checks ([`super::control`]) of each unit in
/// `units` (module, file), added to `report`; `label` names a depth
/// variant in the check names.
pub(super) fn control(
    report: &mut UnitsReport,
    units: &[(&str, &Path)],
    work: &Path,
    seconds: u32,
    label: Option<&str>,
    progress: &dyn Fn(&str),
) -> Result<(), ProveError> {
    for (module, file) in units {
        progress(&format!("pipeline control: {module}"));
        let r = super::control::prove_control(file, module, &work.join("control"), seconds)?;
        report.checks.extend(r.checks.iter().map(|c| Check {
            name: match label {
                Some(l) => format!("{} ({l})", c.name),
                None => c.name.clone(),
            },
            ..c.clone()
        }));
        if r.schedule.is_some() {
            report.control_schedules.push(r);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_become_bytes_and_masks_bit_0_first() {
        let mut ports = BTreeMap::new();
        let mut x = vec![false; 24];
        x[0] = true;
        x[9] = true;
        x[23] = true;
        ports.insert("x".to_string(), x);
        ports.insert("m".to_string(), vec![false, true, true, false]);
        assert_eq!(bytes_of(&ports, "x", 3), vec![1, 2, 0x80]);
        assert_eq!(bytes_of(&ports, "y", 2), vec![0, 0]);
        assert_eq!(uint_of(&ports, "m"), 6);
        assert_eq!(uint_of(&ports, "y"), 0);
    }

    #[test]
    fn the_report_keeps_the_mpc_verdict() {
        let mut r = UnitsReport {
            design: "dpc".into(),
            config: "c".into(),
            rtl_dir: PathBuf::from("r"),
            work: PathBuf::from("w"),
            checks: vec![Check {
                name: "round trip plain".into(),
                statement: "s".into(),
                outcome: Outcome::Proven,
                seconds: 1.0,
            }],
            notes: vec![],
            counterexamples: vec![],
            partial: false,
            control_schedules: vec![],
        };
        assert!(r.proven());
        assert_eq!(r.last_line(), "proven");
        let text = r.render();
        assert!(
            text.starts_with("cosim prove dpc: c, units in r\n"),
            "{text}"
        );
        assert!(text.contains("round trip plain"), "{text}");
        assert!(text.ends_with("  work files: w\n"), "{text}");
        r.checks.push(Check {
            name: "round trip truc".into(),
            statement: "s".into(),
            outcome: Outcome::Undecided("limit".into()),
            seconds: 1.0,
        });
        assert!(!r.proven());
        assert_eq!(r.last_line(), "undecided: round trip truc");
    }
}
