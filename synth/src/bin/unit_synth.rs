//! `unit_synth`: the synthesis flow (docs/hw/synthesis.md) on any directory
//! written by `gen` (MAG-aware BDI, DPC, ...): every module listed in its
//! `files.f` is synthesised (area, flops, cells, and the minimum clock
//! period of the buffered and sized netlist in ns and FO4 unless
//! `--area-only`; `--full` adds logic depth and the block breakdown) and
//! summarised in `<rtl>/synth/report.md` and `report.json`. The table's
//! header is printed first and each unit's row when it is done (a unit
//! takes minutes: a progress line on stderr meanwhile); `–` marks a figure
//! the run did not measure. `--power` adds each unit's power at its
//! minimum period (or `--clock-ns`) from a gate-level run of corpus blocks
//! (docs/hw/synthesis.md, "Power").

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Parser;
use datafiles::atomic::{write_atomic, wrote};
use synth::flow::{self, AbcScript, Options};
use synth::liberty::Liberty;
use synth::power::{self, PowerConfig, Stimulus};
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
    /// Power from a gate-level Icarus run of the timing-mapped netlist
    /// (needs the timing flow and iverilog).
    #[arg(long, conflicts_with = "area_only")]
    power: bool,
    /// Blocks the power run feeds each unit.
    #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    power_blocks: u64,
    /// Clock period of the power figures (ns; default: each unit's minimum period).
    #[arg(long, value_parser = positive_ns)]
    clock_ns: Option<f64>,
    /// Blocks of the power run: corpus (default), random or zeros.
    #[arg(long, value_enum, default_value = "corpus")]
    stimulus: StimulusArg,
    /// Corpus of the power run (default ../shared/corpus; without one,
    /// random blocks, as the report says).
    #[arg(long)]
    corpus: Option<PathBuf>,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum StimulusArg {
    Corpus,
    Random,
    Zeros,
}

fn positive_ns(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(x) if x.is_finite() && x > 0.0 => Ok(x),
        _ => Err(format!("`{s}` is not a positive clock period in ns")),
    }
}

/// The blocks of the power run.
fn stimulus(cli: &Cli) -> Result<Stimulus> {
    Ok(match cli.stimulus {
        StimulusArg::Zeros => Stimulus::Zeros,
        StimulusArg::Random => Stimulus::Random,
        StimulusArg::Corpus => match &cli.corpus {
            Some(c) if c.exists() => Stimulus::Corpus(c.clone()),
            Some(c) => bail!("--corpus {}: no such file or directory", c.display()),
            None => {
                let c = PathBuf::from("../shared/corpus");
                if c.exists() {
                    Stimulus::Corpus(c)
                } else {
                    eprintln!("unit_synth: no corpus at ../shared/corpus (pass --corpus): the power run uses random blocks");
                    Stimulus::Random
                }
            }
        },
    })
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
    if cli.power && !flow::have_tool("iverilog") {
        bail!("iverilog not found (the power run simulates the netlist): sudo apt-get install iverilog");
    }
    let power_cfg = if cli.power {
        Some(PowerConfig {
            blocks: cli.power_blocks as usize,
            clock_ns: cli.clock_ns,
            ..PowerConfig::new(stimulus(&cli)?)
        })
    } else {
        None
    };
    opts.abc = match cli.abc {
        Abc::Default => AbcScript::Default,
        Abc::NoSweep => AbcScript::NoSweep,
    };
    let out = cli.rtl.join("synth");
    let suffix = match opts.abc {
        AbcScript::Default => String::new(),
        other => format!("-{}", other.name()),
    };
    let header = if power_cfg.is_some() {
        "| unit | NAND2-eq (area-mapped) | NAND2-eq (timing-mapped) | flops | flop NAND2-eq | logic NAND2-eq | cells | levels (2-in gates, ABC delay) | period (ns) | period (FO4) | power (mW) | pJ per block |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"
    } else {
        "| unit | NAND2-eq (area-mapped) | NAND2-eq (timing-mapped) | flops | flop NAND2-eq | logic NAND2-eq | cells | levels (2-in gates, ABC delay) | period (ns) | period (FO4) |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"
    };
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
        } else if power_cfg.is_some() {
            "area, timing and power"
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
        let dir = out.join(format!("{top}{suffix}"));
        let r = flow::run_unit(&v, unit, &lib, &dir, opts);
        spinner.finish_and_clear();
        let mut r = r.with_context(|| format!("synthesising {}", v.display()))?;
        if let (Some(cfg), Some(t)) = (&power_cfg, &r.timing) {
            let spinner = datafiles::progress::spinner(&format!(
                "unit_synth: {top} power ({} blocks, gate-level Icarus)",
                cfg.blocks
            ));
            let p = power::run(unit, &described, &cli.rtl, &lib, &dir, t, cfg);
            spinner.finish_and_clear();
            r.power = Some(p.with_context(|| format!("power of {top}"))?);
        }
        let t = r.timing.as_ref();
        let pw = r.power.as_ref().map_or(String::new(), |p| {
            format!(" {:.3} | {:.2} |", p.total_mw, p.pj_per_block)
        });
        let line = format!(
            "| {top} | {:.0} | {} | {} | {:.0} | {:.0} | {} | {} | {} | {} |{pw}",
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
        if let Some(p) = &r.power {
            md.push_str(&report::power_markdown(p));
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
