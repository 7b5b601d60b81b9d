//! `cosim_dpc`: co-simulate the DPC units (plain, DF-TRUC and DF-MAN
//! compressors; plain and DF-TRUC decompressors) against `golden::dpc`.
//!
//! `cargo run --release -p testbench --bin cosim_dpc -- [--block 128
//!  --segment 4 --sector 32] --sim both --unit all --blocks 1000`

use std::process::ExitCode;

use anyhow::{anyhow, Result};
use clap::Parser;
use golden::dpc::DpcParams;
use testbench::dpc::{parse_unit, run, DpcConfig};
use testbench::stream_unit::{self, StreamArgs};

#[derive(Parser)]
#[command(
    name = "cosim_dpc",
    version,
    about = "Co-simulate the DPC units (Icarus, Verilator) against golden::dpc"
)]
struct Cli {
    #[arg(long, default_value_t = 128)]
    block: usize,
    #[arg(long, default_value_t = 4)]
    segment: usize,
    #[arg(long, default_value_t = 32)]
    sector: usize,
    /// `all` or a comma-separated list of compressor, truc-compressor,
    /// man-compressor, decompressor, truc-decompressor.
    #[arg(long, default_value = "all")]
    unit: String,
    #[command(flatten)]
    common: StreamArgs,
}

fn main() -> ExitCode {
    stream_unit::exit_code("cosim_dpc", real_main())
}

fn real_main() -> Result<bool> {
    let cli = Cli::parse();
    let params = DpcParams::new(cli.block, cli.segment, cli.sector)?;
    let c = &cli.common;
    let sims = c.sims()?;
    let units = if cli.unit.trim() == "all" {
        hdl::dpc::Unit::ALL.to_vec()
    } else {
        cli.unit
            .split(',')
            .map(|u| parse_unit(u).ok_or_else(|| anyhow!("unknown DPC unit `{u}` (compressor, truc-compressor, man-compressor, decompressor, truc-decompressor, all)")))
            .collect::<Result<Vec<_>>>()?
    };
    let corpus = c.corpus();
    let cfg = DpcConfig {
        params,
        sims,
        units,
        blocks: c.blocks,
        seed: c.seed,
        corpus,
        stall: c.stall,
        resets: c.resets,
        build: c.build.clone(),
    };
    let reports = run(&cfg)?;
    println!(
        "cosim_dpc: block {} segment {} sector {} seed {} ({} vectors per unit, stall {}, {} resets)",
        cli.block, cli.segment, cli.sector, c.seed, cfg.blocks, cfg.stall, cfg.resets
    );
    Ok(stream_unit::print_reports("cosim_dpc", &reports))
}
