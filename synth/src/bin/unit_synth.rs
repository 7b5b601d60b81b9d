//! `unit_synth`: the synthesis flow (docs/hw/synthesis.md) on any directory
//! written by `gen` (MAG-aware BDI, DPC, ...): every module listed in its
//! `files.f` is synthesised (area, flops, cells; `--full` adds logic depth
//! and OpenSTA) and summarised in `<rtl>/synth/report.md`.

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Parser;
use synth::flow::{self, AbcScript, Options, UnitKind};
use synth::liberty::Liberty;

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
    /// Depth and STA runs too (slower).
    #[arg(long)]
    full: bool,
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
        Options::AREA_ONLY
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
    let mut md = format!(
        "# Synthesis report: {}\n\nLiberty `{}`; NAND2-eq unit `{}`; ABC script `{}`. Flow: docs/hw/synthesis.md.\n\n\
         | unit | NAND2-eq total | flops | flop NAND2-eq | logic NAND2-eq | cells | levels (2-in gates, ABC delay) | STA arrival (ns) |\n|---|---:|---:|---:|---:|---:|---:|---:|\n",
        cli.rtl.display(),
        lib.path.display(),
        lib.nand2.0,
        opts.abc.name()
    );
    for top in &units {
        let kind = if top.contains("decompressor") {
            UnitKind::Decompressor
        } else {
            UnitKind::Compressor
        };
        let v = cli.rtl.join(format!("{top}.v"));
        let r = flow::run_unit(
            &v,
            top,
            kind,
            &lib,
            &out.join(format!("{top}{suffix}")),
            opts,
        )
        .with_context(|| format!("synthesising {}", v.display()))?;
        let line = format!(
            "| {top} | {:.0} | {} | {:.0} | {:.0} | {} | {} | {} |",
            r.nand2_eq,
            r.flops,
            r.flop_nand2,
            r.comb_nand2,
            r.cells,
            r.stages
                .iter()
                .map(|s| s.levels_gates_delay)
                .max()
                .filter(|&l| l > 0)
                .map_or("-".into(), |l| l.to_string()),
            r.stages
                .iter()
                .filter_map(|s| s.sta_arrival_ns)
                .reduce(f64::max)
                .map_or("-".into(), |x| format!("{x:.2}"))
        );
        println!("{line}");
        let _ = writeln!(md, "{line}");
    }
    std::fs::create_dir_all(&out)?;
    let name = if cli.units.is_empty() {
        format!("report{suffix}.md")
    } else {
        format!("report-{}{suffix}.md", cli.units.join("-"))
    };
    std::fs::write(out.join(&name), &md)?;
    println!("wrote {}", out.join(&name).display());
    Ok(())
}
