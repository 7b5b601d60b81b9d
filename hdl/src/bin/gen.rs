//! `gen`: write the Verilog of generated units, one subcommand per family:
//!
//! * MPC, for a model set: `gen mpc --model models/example [--unit compressor]`
//!   (also without the subcommand: `gen --model models/example`);
//! * MAG-aware BDI (docs/hw/mag-bdi.md):
//!   `gen magbdi --block 128 --mag 32 --base 4 [--mode signed]`
//!   (also `gen --unit magbdi ...`, or `--unit bdi`);
//! * DPC (docs/hw/dpc.md): `gen dpc [--block 128 --segment 4 --sector 32]`
//!   (also `gen --unit dpc ...`).

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::error::ErrorKind;
use clap::parser::ValueSource;
use clap::{ArgMatches, Args, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};
use hdl::family::write_units;
use hdl::mpc::{MpcConfig, Options, SlotSpec};
use hdl::{Side, Unit};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum UnitArg {
    Compressor,
    Decompressor,
    All,
    /// MAG-aware BDI compressor + decompressor (--block, --mag, --base, --mode).
    #[value(alias = "bdi")]
    Magbdi,
    /// DPC compressors (plain, DF-TRUC, DF-MAN) + decompressors (--block,
    /// --segment, --sector).
    Dpc,
}

#[derive(Parser)]
#[command(
    name = "gen",
    version,
    about = "Generate the Verilog of the MPC (from a model set), MAG-aware BDI and DPC units",
    args_conflicts_with_subcommands = true
)]
struct Cli {
    #[command(subcommand)]
    family: Option<Family>,
    #[command(flatten)]
    flat: Flat,
}

#[derive(Subcommand)]
enum Family {
    /// The MPC compressor and decompressor of a model set.
    Mpc(MpcArgs),
    /// The MAG-aware BDI compressor and decompressor.
    Magbdi(MagBdiArgs),
    /// The DPC compressors (plain, DF-TRUC, DF-MAN) and decompressors.
    Dpc(DpcArgs),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum MpcUnit {
    Compressor,
    Decompressor,
    All,
}

#[derive(Args)]
struct MpcArgs {
    /// Model-set directory (holding model.toml) or model file.
    #[arg(long, short)]
    model: PathBuf,
    /// Output directory [default: build/<model-set name>].
    #[arg(long, short)]
    out: Option<PathBuf>,
    /// Which unit to generate.
    #[arg(long, value_enum, default_value = "all")]
    unit: MpcUnit,
    /// Pipeline stages of the compressor (3 or 4): 4 puts the selection in
    /// a stage of its own, for a shorter clock period (not with --unit
    /// decompressor) [default: 3; with slots 4 or 5, default 4: 5 gives
    /// the slots' scores and the choice a stage each, for the exact
    /// selection rule].
    #[arg(long)]
    compressor_stages: Option<usize>,
    /// Pipeline stages of the decompressor (4 to 8): more stages, a
    /// shorter clock period (not with --unit compressor) [default: 4; with
    /// slots 4 to 8 plus the form's restoration stages, by default 4 plus
    /// them].
    #[arg(long)]
    decompressor_stages: Option<usize>,
    /// Programmable predictor slots (0 to 4) beside the hard-wired
    /// predictors, loaded at run time through the configuration port
    /// (docs/hw/program-slots.md) [default: 0].
    #[arg(long, value_name = "K")]
    program_slots: Option<usize>,
    /// The form of the slots (stride-part, stride-k0-part, stride-cols,
    /// stride-lib, stride-colpart, stride-colpart-d8) [default:
    /// stride-colpart].
    #[arg(long, value_name = "FORM", requires = "program_slots")]
    slot_form: Option<String>,
}

#[derive(Args)]
struct MagBdiArgs {
    /// Output directory [default: build/bdi-<block>-<mag>-<base>[-signed]].
    #[arg(long, short)]
    out: Option<PathBuf>,
    /// Block size in bytes.
    #[arg(long, default_value_t = 128)]
    block: usize,
    /// Memory access granularity in bytes.
    #[arg(long, default_value_t = 32)]
    mag: usize,
    /// Base (value) size in bytes.
    #[arg(long, default_value_t = 4)]
    base: usize,
    /// Delta mode, `unsigned` (leading zeros) or `signed`.
    #[arg(long, default_value = "unsigned")]
    mode: golden::magbdi::DeltaMode,
    /// Pipeline stages of the compressor (1 or 2): 2 registers the bases
    /// between their selection and the fit checks, for a shorter clock
    /// period [default: 1, the paper's 1-cycle compression].
    #[arg(long)]
    compressor_stages: Option<usize>,
}

#[derive(Args)]
struct DpcArgs {
    /// Output directory [default: build/dpc-<block>-<segment>-<sector>].
    #[arg(long, short)]
    out: Option<PathBuf>,
    /// Block size in bytes.
    #[arg(long, default_value_t = 128)]
    block: usize,
    /// Segment size in bytes.
    #[arg(long, default_value_t = golden::dpc::SEGMENT_BYTES)]
    segment: usize,
    /// Critical-sector size in bytes.
    #[arg(long, default_value_t = golden::dpc::SECTOR_BYTES)]
    sector: usize,
    /// Pipeline stages of both decompressors (2 or 3): 3 gives the
    /// unpacker's levels a stage of their own, for a shorter clock period
    /// [default: 2, the thesis' pipeline].
    #[arg(long)]
    decompressor_stages: Option<usize>,
}

/// The form without a subcommand: `--unit` picks the family. The options
/// of one family conflict with another's, and one given with a `--unit`
/// it does not apply to is refused ([`refuse_inapplicable`]).
#[derive(Args)]
struct Flat {
    /// Model-set directory (holding model.toml) or model file (MPC units).
    #[arg(long, short, conflicts_with_all = NOT_MPC)]
    model: Option<PathBuf>,
    /// Output directory [default: build/<model-set name>,
    /// build/bdi-<block>-<mag>-<base>[-signed] or
    /// build/dpc-<block>-<segment>-<sector>].
    #[arg(long, short)]
    out: Option<PathBuf>,
    /// Which unit to generate.
    #[arg(long, value_enum, default_value = "all")]
    unit: UnitArg,
    /// MPC: pipeline stages of the compressor (3 or 4; 4 or 5 with slots)
    /// [default: 3; 4 with slots].
    #[arg(long, conflicts_with_all = NOT_MPC)]
    compressor_stages: Option<usize>,
    /// MPC: pipeline stages of the decompressor (4 to 8; more with slots)
    /// [default: 4].
    #[arg(long, conflicts_with_all = NOT_MPC)]
    decompressor_stages: Option<usize>,
    /// MPC: programmable predictor slots (0 to 4) [default: 0].
    #[arg(long, value_name = "K", conflicts_with_all = NOT_MPC)]
    program_slots: Option<usize>,
    /// MPC: the form of the slots [default: stride-colpart].
    #[arg(long, value_name = "FORM", conflicts_with_all = NOT_MPC, requires = "program_slots")]
    slot_form: Option<String>,
    /// --unit magbdi or dpc: block size in bytes.
    #[arg(long, default_value_t = 128)]
    block: usize,
    /// --unit magbdi: memory access granularity in bytes.
    #[arg(long, conflicts_with_all = DPC_ONLY, default_value_t = 32)]
    mag: usize,
    /// --unit magbdi: base (value) size in bytes.
    #[arg(long, conflicts_with_all = DPC_ONLY, default_value_t = 4)]
    base: usize,
    /// --unit magbdi: delta mode, `unsigned` (leading zeros) or `signed`.
    #[arg(long, conflicts_with_all = DPC_ONLY, default_value = "unsigned")]
    mode: golden::magbdi::DeltaMode,
    /// --unit dpc: segment size in bytes (the block size is --block).
    #[arg(long, default_value_t = golden::dpc::SEGMENT_BYTES)]
    segment: usize,
    /// --unit dpc: critical-sector size in bytes.
    #[arg(long, default_value_t = golden::dpc::SECTOR_BYTES)]
    sector: usize,
}

/// The flat form's options that do not apply to the MPC units (each
/// conflicts with every MPC option).
const NOT_MPC: [&str; 6] = ["block", "mag", "base", "mode", "segment", "sector"];
/// The flat form's options of the DPC units only (each conflicts with every
/// MAG-aware BDI option).
const DPC_ONLY: [&str; 2] = ["segment", "sector"];

/// The units an option of the flat form applies to, or `None` when it
/// applies to `unit`.
fn flat_option_scope(id: &str, unit: UnitArg) -> Option<&'static str> {
    use UnitArg::{All, Compressor, Decompressor, Dpc, Magbdi};
    let (applies, scope) = match id {
        "model" | "program_slots" | "slot_form" => (
            matches!(unit, Compressor | Decompressor | All),
            "the MPC units (--unit compressor, decompressor or all)",
        ),
        "compressor_stages" => (matches!(unit, Compressor | All), "--unit compressor or all"),
        "decompressor_stages" => (
            matches!(unit, Decompressor | All),
            "--unit decompressor or all",
        ),
        "block" => (matches!(unit, Magbdi | Dpc), "--unit magbdi or dpc"),
        "mag" | "base" | "mode" => (unit == Magbdi, "--unit magbdi"),
        "segment" | "sector" => (unit == Dpc, "--unit dpc"),
        _ => (true, ""),
    };
    (!applies).then_some(scope)
}

/// The units an option of `gen mpc` applies to, or `None` when it applies
/// to `unit`.
fn mpc_option_scope(id: &str, unit: MpcUnit) -> Option<&'static str> {
    match id {
        "compressor_stages" if unit == MpcUnit::Decompressor => Some("--unit compressor or all"),
        "decompressor_stages" if unit == MpcUnit::Compressor => Some("--unit decompressor or all"),
        _ => None,
    }
}

/// The options whose scope [`flat_option_scope`] and [`mpc_option_scope`]
/// know.
const SCOPED_OPTIONS: [&str; 11] = [
    "model",
    "program_slots",
    "slot_form",
    "compressor_stages",
    "decompressor_stages",
    "block",
    "mag",
    "base",
    "mode",
    "segment",
    "sector",
];

/// Refuse, as a conflict, an option given on the command line that does
/// not apply to the `--unit` chosen (`unit`, the value's name):
/// `scope(id)` names the units it applies to when it does not.
fn refuse_inapplicable(
    m: &ArgMatches,
    unit: &str,
    scope: impl Fn(&str) -> Option<&'static str>,
) -> Result<(), clap::Error> {
    let given = |id: &str| {
        m.try_contains_id(id).unwrap_or(false)
            && m.value_source(id) == Some(ValueSource::CommandLine)
    };
    for id in SCOPED_OPTIONS {
        if !given(id) {
            continue;
        }
        if let Some(scope) = scope(id) {
            let unit = if given("unit") {
                format!("'--unit {unit}'")
            } else {
                format!("'--unit {unit}' (the default)")
            };
            return Err(Cli::command().error(
                ErrorKind::ArgumentConflict,
                format!(
                    "the argument '--{}' cannot be used with {unit}: it applies to {scope}",
                    id.replace('_', "-")
                ),
            ));
        }
    }
    Ok(())
}

/// The value name of a `--unit` value.
fn value_name(v: impl ValueEnum) -> String {
    v.to_possible_value()
        .map_or_else(String::new, |p| p.get_name().to_string())
}

impl Flat {
    /// The subcommand this form stands for.
    fn family(self) -> Result<Family> {
        let Flat {
            model,
            out,
            unit,
            compressor_stages,
            decompressor_stages,
            program_slots,
            slot_form,
            block,
            mag,
            base,
            mode,
            segment,
            sector,
        } = self;
        let mpc_unit = match unit {
            UnitArg::Compressor => Some(MpcUnit::Compressor),
            UnitArg::Decompressor => Some(MpcUnit::Decompressor),
            UnitArg::All => Some(MpcUnit::All),
            UnitArg::Magbdi | UnitArg::Dpc => None,
        };
        if let Some(unit) = mpc_unit {
            return Ok(Family::Mpc(MpcArgs {
                model: model.context("--model is required for the MPC units")?,
                out,
                unit,
                compressor_stages,
                decompressor_stages,
                program_slots,
                slot_form,
            }));
        }
        Ok(match unit {
            UnitArg::Dpc => Family::Dpc(DpcArgs {
                out,
                block,
                segment,
                sector,
                decompressor_stages: None,
            }),
            _ => Family::Magbdi(MagBdiArgs {
                out,
                block,
                mag,
                base,
                mode,
                compressor_stages: None,
            }),
        })
    }
}

/// The five DPC units into build/dpc-<block>-<segment>-<sector>.
fn gen_dpc(a: DpcArgs, command_line: &str) -> Result<Vec<PathBuf>> {
    let p = golden::dpc::DpcParams::new(a.block, a.segment, a.sector)?;
    let out = a.out.unwrap_or_else(|| {
        PathBuf::from("build").join(format!("dpc-{}-{}-{}", a.block, a.segment, a.sector))
    });
    let stages = a
        .decompressor_stages
        .unwrap_or(hdl::dpc::DECOMPRESSOR_LATENCY as usize);
    let staged = hdl::dpc::Staged::new(p, stages)?;
    write_units(&staged, &out, &hdl::dpc::UNITS, command_line)
        .with_context(|| format!("generating DPC into {}", out.display()))
}

/// Validate the MAG-aware BDI parameters (Eq. 1) and write both units.
fn gen_magbdi(a: MagBdiArgs, command_line: &str) -> Result<Vec<PathBuf>> {
    let p = golden::magbdi::Params::new(a.block, a.mag, a.base, a.mode);
    let out = a
        .out
        .unwrap_or_else(|| PathBuf::from("build").join(hdl::magbdi::config_name(&p)));
    let stages = hdl::magbdi::Stages::new(
        a.compressor_stages.unwrap_or(hdl::magbdi::LATENCY),
        hdl::magbdi::LATENCY,
    )?;
    hdl::magbdi::write_units_staged(p, stages, &out, &hdl::magbdi::UNITS, command_line)
        .with_context(|| format!("generating MAG-aware BDI into {}", out.display()))
}

/// The MPC units of a model set into build/<set name>.
fn gen_mpc(a: MpcArgs, command_line: &str) -> Result<Vec<PathBuf>> {
    let k = a.program_slots.unwrap_or(0);
    let form = match &a.slot_form {
        Some(name) => SlotSpec::parse_form(name)?,
        None => SlotSpec::parse_form(hdl::mpc::slots::DEFAULT_FORM)?,
    };
    let slots = SlotSpec::new(k, form)?;
    let opts = if k == 0 {
        Options::with_stages(
            a.compressor_stages
                .unwrap_or(hdl::mpc::COMPRESSOR_LATENCY as usize),
            a.decompressor_stages
                .unwrap_or(hdl::mpc::DECOMPRESSOR_LATENCY as usize),
        )?
    } else {
        Options::with_slots(slots, a.compressor_stages, a.decompressor_stages)?
    };
    let config = MpcConfig::load(&a.model, opts)?;
    let out = a
        .out
        .unwrap_or_else(|| PathBuf::from("build").join(&config.set.name));
    let units: Vec<Unit> = match a.unit {
        MpcUnit::Compressor => vec![Unit::Mpc(Side::Compressor)],
        MpcUnit::Decompressor => vec![Unit::Mpc(Side::Decompressor)],
        MpcUnit::All => hdl::mpc::UNITS.to_vec(),
    };
    write_units(&config, &out, &units, command_line)
        .with_context(|| format!("generating {} into {}", a.model.display(), out.display()))
}

/// The parsed command line, with options that do not apply to the chosen
/// unit refused (clap's usage error, exit status 2).
fn parse() -> Cli {
    let matches = Cli::command().get_matches();
    let checked = Cli::from_arg_matches(&matches).and_then(|cli| {
        match &cli.family {
            None => refuse_inapplicable(&matches, &value_name(cli.flat.unit), |id| {
                flat_option_scope(id, cli.flat.unit)
            })?,
            Some(Family::Mpc(a)) => {
                if let Some(m) = matches.subcommand_matches("mpc") {
                    refuse_inapplicable(m, &value_name(a.unit), |id| mpc_option_scope(id, a.unit))?
                }
            }
            Some(_) => {}
        }
        Ok(cli)
    });
    checked.unwrap_or_else(|e| e.exit())
}

/// Print one `wrote PATH (N bytes)` line per written file. A closed
/// standard output (`gen ... | head -1`) ends the listing quietly: the
/// files are written by then.
fn list_written(paths: &[PathBuf]) -> Result<()> {
    let mut out = std::io::stdout().lock();
    let listed = paths
        .iter()
        .try_for_each(|p| {
            let size = std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
            writeln!(out, "wrote {} ({} bytes)", p.display(), size)
        })
        .and_then(|()| out.flush());
    match listed {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(e).context("writing to standard output")
        }
        _ => Ok(()),
    }
}

fn main() -> Result<()> {
    let cli = parse();
    let command_line = hdl::unit_dir::this_command();
    let family = match cli.family {
        Some(f) => f,
        None => cli.flat.family()?,
    };
    let paths = match family {
        Family::Mpc(a) => gen_mpc(a, &command_line)?,
        Family::Magbdi(a) => gen_magbdi(a, &command_line)?,
        Family::Dpc(a) => gen_dpc(a, &command_line)?,
    };
    list_written(&paths)
}
