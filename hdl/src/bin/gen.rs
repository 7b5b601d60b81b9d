//! `gen`: write the Verilog of the MPC compressor and decompressor for a
//! model set. `cargo run --bin gen -- --model models/example`

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
}

#[derive(Parser)]
#[command(
    name = "gen",
    version,
    about = "Generate MPC compressor/decompressor Verilog from a model set"
)]
struct Cli {
    /// Model-set directory (holding model.toml) or model file.
    #[arg(long, short)]
    model: PathBuf,
    /// Output directory [default: build/<model-set name>].
    #[arg(long, short)]
    out: Option<PathBuf>,
    /// Which unit to generate.
    #[arg(long, value_enum, default_value = "all")]
    unit: UnitArg,
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    let set = ModelSet::load(&cli.model)?;
    let out = cli
        .out
        .unwrap_or_else(|| PathBuf::from("build").join(&set.name));
    let units: Vec<Unit> = match cli.unit {
        UnitArg::Compressor => vec![Unit::Compressor],
        UnitArg::Decompressor => vec![Unit::Decompressor],
        UnitArg::All => Unit::ALL.to_vec(),
    };
    let command_line = std::env::args().collect::<Vec<_>>().join(" ");
    let paths = write_units(&cli.model, &out, &units, &command_line)
        .with_context(|| format!("generating {} into {}", cli.model.display(), out.display()))?;
    for p in &paths {
        let size = std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
        println!("wrote {} ({} bytes)", p.display(), size);
    }
    Ok(())
}
