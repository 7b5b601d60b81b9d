//! `cosim_bdi`: co-simulate the MAG-aware BDI units against the golden model.
//!
//! `cargo run --release -p testbench --bin cosim_bdi -- --block 128 --mag 32
//!  --base 4 [--mode signed] --sim both --blocks 1000`

use std::process::ExitCode;

use anyhow::Result;
use clap::{Parser, ValueEnum};
use golden::magbdi::{DeltaMode, Params};
use testbench::bdi::{run, BdiConfig};
use testbench::stream_unit::{self, StreamArgs};
use testbench::Unit;

#[derive(Clone, Copy, Debug, ValueEnum)]
enum UnitArg {
    Compressor,
    Decompressor,
    Loopback,
    All,
}

#[derive(Parser)]
#[command(
    name = "cosim_bdi",
    version,
    about = "Co-simulate the MAG-aware BDI units (Icarus, Verilator) against golden::magbdi"
)]
struct Cli {
    #[arg(long, default_value_t = 128)]
    block: usize,
    #[arg(long, default_value_t = 32)]
    mag: usize,
    #[arg(long, default_value_t = 4)]
    base: usize,
    #[arg(long, default_value = "unsigned")]
    mode: DeltaMode,
    #[arg(long, value_enum, default_value = "all")]
    unit: UnitArg,
    #[command(flatten)]
    common: StreamArgs,
}

fn main() -> ExitCode {
    stream_unit::exit_code("cosim_bdi", real_main())
}

fn real_main() -> Result<bool> {
    let cli = Cli::parse();
    let c = &cli.common;
    let sims = c.sims()?;
    let corpus = c.corpus();
    let cfg = BdiConfig {
        params: Params::new(cli.block, cli.mag, cli.base, cli.mode),
        sims,
        units: match cli.unit {
            UnitArg::Compressor => vec![Unit::Compressor],
            UnitArg::Decompressor => vec![Unit::Decompressor],
            UnitArg::Loopback => vec![Unit::Loopback],
            UnitArg::All => Unit::ALL.to_vec(),
        },
        blocks: c.blocks,
        seed: c.seed,
        corpus,
        stall: c.stall,
        resets: c.resets,
        build: c.build.clone(),
    };
    let reports = run(&cfg)?;
    println!(
        "cosim_bdi: block {} MAG {} base {} {} seed {} ({} vectors per unit)",
        cli.block, cli.mag, cli.base, cli.mode, c.seed, cfg.blocks
    );
    Ok(stream_unit::print_reports("cosim_bdi", &reports))
}
