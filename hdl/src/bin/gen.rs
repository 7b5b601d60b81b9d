//! `gen`: write the Verilog of the MPC compressor and decompressor for a
//! model set. `cargo run --bin gen -- --model models/example`
//! MAG-aware BDI (docs/hw/mag-bdi.md):
//! `cargo run --bin gen -- --unit bdi --block 128 --mag 32 --base 4 [--mode signed]`
//! DPC (docs/hw/dpc.md): `cargo run --bin gen -- --unit dpc [--block 128 --segment 4 --sector 32]`

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Parser, ValueEnum};
use golden::mpc::ModelSet;
use hdl::mpc::{write_units, Unit};

#[derive(Clone, Copy, Debug, ValueEnum)]
enum UnitArg {
    Compressor,
    Decompressor,
    All,
    /// MAG-aware BDI compressor + decompressor (--block, --mag, --base, --mode).
    Bdi,
    /// DPC compressors (plain, DF-TRUC, DF-MAN) + decompressors (--block,
    /// --segment, --sector).
    Dpc,
}

#[derive(Parser)]
#[command(
    name = "gen",
    version,
    about = "Generate MPC compressor/decompressor Verilog from a model set"
)]
struct Cli {
    /// Model-set directory (holding model.toml) or model file (MPC units).
    #[arg(long, short)]
    model: Option<PathBuf>,
    /// Output directory [default: build/<model-set name>].
    #[arg(long, short)]
    out: Option<PathBuf>,
    /// Which unit to generate.
    #[arg(long, value_enum, default_value = "all")]
    unit: UnitArg,
    /// --unit bdi: block size in bytes.
    #[arg(long, default_value_t = 128)]
    block: usize,
    /// --unit bdi: memory access granularity in bytes.
    #[arg(long, default_value_t = 32)]
    mag: usize,
    /// --unit bdi: base (value) size in bytes.
    #[arg(long, default_value_t = 4)]
    base: usize,
    /// --unit bdi: delta mode, `unsigned` (leading zeros) or `signed`.
    #[arg(long, default_value = "unsigned")]
    mode: golden::magbdi::DeltaMode,
    /// --unit dpc: segment size in bytes (the block size is --block).
    #[arg(long, default_value_t = golden::dpc::SEGMENT_BYTES)]
    segment: usize,
    /// --unit dpc: critical-sector size in bytes.
    #[arg(long, default_value_t = golden::dpc::SECTOR_BYTES)]
    sector: usize,
}

/// `--unit dpc`: the five DPC units into build/dpc-<block>-<segment>-<sector>.
fn gen_dpc(cli: &Cli, command_line: &str) -> Result<()> {
    let p = golden::dpc::DpcParams::new(cli.block, cli.segment, cli.sector)?;
    let out = cli.out.clone().unwrap_or_else(|| {
        PathBuf::from("build").join(format!("dpc-{}-{}-{}", cli.block, cli.segment, cli.sector))
    });
    let paths = hdl::dpc::write_units(&p, &out, &hdl::dpc::Unit::ALL, command_line)
        .with_context(|| format!("generating DPC into {}", out.display()))?;
    for p in &paths {
        let size = std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
        println!("wrote {} ({} bytes)", p.display(), size);
    }
    Ok(())
}

/// `--unit bdi`: validate the parameters (Eq. 1) and write both units.
fn gen_bdi(cli: &Cli, command_line: &str) -> Result<()> {
    let p = golden::magbdi::Params::new(cli.block, cli.mag, cli.base, cli.mode);
    let out = cli
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("build").join(hdl::bdi::config_name(&p)));
    let paths = hdl::bdi::write_units(p, &out, &hdl::bdi::Unit::ALL, command_line)
        .with_context(|| format!("generating MAG-aware BDI into {}", out.display()))?;
    for p in &paths {
        let size = std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
        println!("wrote {} ({} bytes)", p.display(), size);
    }
    Ok(())
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    if let UnitArg::Bdi = cli.unit {
        return gen_bdi(&cli, &hdl::output::this_command());
    }
    if let UnitArg::Dpc = cli.unit {
        return gen_dpc(&cli, &hdl::output::this_command());
    }
    let model = cli
        .model
        .clone()
        .context("--model is required for the MPC units")?;
    let set = ModelSet::load(&model)?;
    let out = cli
        .out
        .unwrap_or_else(|| PathBuf::from("build").join(&set.name));
    let units: Vec<Unit> = match cli.unit {
        UnitArg::Compressor => vec![Unit::Compressor],
        UnitArg::Decompressor => vec![Unit::Decompressor],
        UnitArg::All => Unit::ALL.to_vec(),
        UnitArg::Bdi | UnitArg::Dpc => unreachable!("handled above"),
    };
    let command_line = hdl::output::this_command();
    let paths = write_units(&model, &out, &units, &command_line)
        .with_context(|| format!("generating {} into {}", model.display(), out.display()))?;
    for p in &paths {
        let size = std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
        println!("wrote {} ({} bytes)", p.display(), size);
    }
    Ok(())
}
