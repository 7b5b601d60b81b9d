//! `unit_synth`: the synthesis flow (docs/hw/synthesis.md) on any directory
//! written by `gen` (MAG-aware BDI, DPC, ...): every module listed in its
//! `files.f` is synthesised (area, flops, cells, and the minimum clock
//! period of the buffered and sized netlist in ns and FO4 unless
//! `--area-only`; `--full` adds logic depth and the block breakdown) and
//! summarised in `<rtl>/synth/report.md` and `report.json`. The table's
//! header is printed first and each unit's row when it is done (a unit
//! takes minutes: a progress line on stderr meanwhile); `–` marks a figure
//! the run did not measure.

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Parser;
use datafiles::atomic::{write_atomic, wrote};
use synth::flow::{self, AbcScript, Options};
use synth::liberty::Liberty;
use synth::report::{self, NOT_MEASURED};

#[derive(Parser)]
#[command(
    name = "unit_synth",
    about = "Synthesise the units of a gen output directory"
)]
struct Cli {
    /// Directory written by `gen` (holding files.f).
    #[arg(long)]
    rtl: PathBuf,
    #[arg(long)]
    liberty: Option<PathBuf>,
    /// Logic-depth runs and the block breakdown too (slower).
    #[arg(long, conflicts_with = "area_only")]
    full: bool,
    /// Area only: no timing mapping, no OpenSTA.
    #[arg(long)]
    area_only: bool,
    /// Only these modules (default: every module in files.f).
    #[arg(long = "unit")]
    units: Vec<String>,
    /// ABC mapping script: Yosys' default, or the same without SAT sweeping
    /// (`no-sweep`, for units where the sweep does not finish; see
    /// docs/hw/synthesis.md).
    #[arg(long, value_enum, default_value = "default")]
    abc: Abc,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum Abc {
    Default,
    NoSweep,
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    let list = cli.rtl.join("files.f");
    let files = std::fs::read_to_string(&list)
        .with_context(|| format!("reading {} (run gen first)", list.display()))?;
    let units: Vec<String> = files
        .lines()
        .map(str::trim)
        .filter(|l| l.ends_with(".v"))
        .map(|l| l.trim_end_matches(".v").to_string())
        .collect();
    if units.is_empty() {
        bail!("{} lists no Verilog files", list.display());
    }
    if let Some(bad) = cli.units.iter().find(|u| !units.contains(u)) {
        bail!(
            "--unit {bad}: not in {} (it lists {})",
            list.display(),
            units.join(", ")
        );
    }
    let units: Vec<String> = units
        .into_iter()
        .filter(|u| cli.units.is_empty() || cli.units.contains(u))
        .collect();
    let lib = Liberty::load(&flow::find_liberty(cli.liberty.as_deref())?)?;
    let mut opts = if cli.full {
        Options::FULL
    } else {
        Options {
            sta: !cli.area_only,
            ..Options::AREA_ONLY
        }
    };
    if !flow::have_tool("yosys") {
        bail!("yosys not found: {}", flow::INSTALL_HINT);
    }
    if opts.sta && !flow::have_tool("sta") {
        bail!(
            "OpenSTA (`sta`) not found: {} (or pass --area-only)",
            flow::INSTALL_HINT
        );
    }
    opts.abc = match cli.abc {
        Abc::Default => AbcScript::Default,
        Abc::NoSweep => AbcScript::NoSweep,
    };
    let out = cli.rtl.join("synth");
    let suffix = match opts.abc {
        AbcScript::Default => String::new(),
        other => format!("-{}", other.name()),
    };
    let header = "| unit | NAND2-eq (area-mapped) | NAND2-eq (timing-mapped) | flops | flop NAND2-eq | logic NAND2-eq | cells | levels (2-in gates, ABC delay) | period (ns) | period (FO4) |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
    let mut md = format!(
        "# Synthesis report: {}\n\nLiberty `{}`; NAND2-eq unit `{}`; ABC script `{}`. Flow: docs/hw/synthesis.md.\n\n{header}",
        cli.rtl.display(),
        lib.path.display(),
        lib.nand2.0,
        opts.abc.name()
    );
    eprintln!(
        "unit_synth: {} unit{} of {} ({}; one to a few minutes each)",
        units.len(),
        if units.len() == 1 { "" } else { "s" },
        cli.rtl.display(),
        if !opts.sta {
            "area only"
        } else if opts.depth {
            "area, timing and depth"
        } else {
            "area and timing"
        }
    );
    print!("{header}");
    let params_json = cli.rtl.join("params.json");
    let described = hdl::unit::read_units(&params_json)?;
    let mut reports = Vec::new();
    for (i, top) in units.iter().enumerate() {
        let unit = hdl::unit::find(&described, top, &params_json)?;
        let v = cli.rtl.join(format!("{top}.v"));
        let spinner =
            datafiles::progress::spinner(&format!("unit_synth: {top} ({}/{})", i + 1, units.len()));
        let r = flow::run_unit(&v, unit, &lib, &out.join(format!("{top}{suffix}")), opts);
        spinner.finish_and_clear();
        let r = r.with_context(|| format!("synthesising {}", v.display()))?;
        let t = r.timing.as_ref();
        let line = format!(
            "| {top} | {:.0} | {} | {} | {:.0} | {:.0} | {} | {} | {} | {} |",
            r.nand2_eq,
            t.map_or(NOT_MEASURED.into(), |t| format!("{:.0}", t.nand2_eq)),
            r.flops,
            r.flop_nand2,
            r.comb_nand2,
            r.cells,
            report::opt_count(r.stages.iter().filter_map(|s| s.levels_gates_delay).max()),
            t.map_or(NOT_MEASURED.into(), |t| format!("{:.2}", t.period_ns)),
            t.map_or(NOT_MEASURED.into(), |t| format!("{:.1}", t.period_fo4)),
        );
        println!("{line}");
        let _ = writeln!(md, "{line}");
        reports.push(r);
    }
    for r in &reports {
        if let Some(t) = &r.timing {
            let _ = write!(md, "\n## `{}`\n{}", r.top, report::timing_markdown(t));
        }
    }
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    let stem = if cli.units.is_empty() {
        format!("report{suffix}")
    } else {
        format!("report-{}{suffix}", cli.units.join("-"))
    };
    let json = serde_json::json!({
        "rtl": cli.rtl.display().to_string(),
        "liberty": lib.path.display().to_string(),
        "abc_script": opts.abc.name(),
        "units": reports,
    });
    for (ext, text) in [("md", md), ("json", serde_json::to_string_pretty(&json)?)] {
        let p = out.join(format!("{stem}.{ext}"));
        write_atomic(&p, text.as_bytes())?;
        wrote(&p);
    }
    Ok(())
}
