//! `cosim_dpc`: co-simulate the DPC units (plain, DF-TRUC and DF-MAN
//! compressors; plain and DF-TRUC decompressors) against `golden::dpc`.
//!
//! `cargo run --release -p testbench --bin cosim_dpc -- [--block 128
//!  --segment 4 --sector 32] --sim both --unit all --blocks 1000`

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{anyhow, Result};
use clap::{Parser, ValueEnum};
use golden::dpc::DpcParams;
use testbench::dpc::{parse_unit, run, DpcConfig};
use testbench::{sim, Simulator};

#[derive(Clone, Copy, Debug, ValueEnum)]
enum SimArg {
    Icarus,
    Verilator,
    Both,
}

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
    #[arg(long, value_enum, default_value = "both")]
    sim: SimArg,
    /// `all` or a comma-separated list of compressor, truc-compressor,
    /// man-compressor, decompressor, truc-decompressor.
    #[arg(long, default_value = "all")]
    unit: String,
    /// Vectors per unit.
    #[arg(long, short, default_value_t = 1000)]
    blocks: usize,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Corpus directory [default: ../shared/corpus when present].
    #[arg(long)]
    corpus: Option<PathBuf>,
    #[arg(long, conflicts_with = "corpus")]
    no_corpus: bool,
    #[arg(long, default_value = "build")]
    build: PathBuf,
    /// Stall probability of the random schedule segments.
    #[arg(long, default_value_t = 0.2)]
    stall: f64,
    /// Mid-stream reset pulses.
    #[arg(long, default_value_t = 2)]
    resets: usize,
}

fn main() -> ExitCode {
    match real_main() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("cosim_dpc: error: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn real_main() -> Result<bool> {
    let cli = Cli::parse();
    let params = DpcParams::new(cli.block, cli.segment, cli.sector)?;
    let sims: Vec<Simulator> = match cli.sim {
        SimArg::Icarus => vec![Simulator::Icarus],
        SimArg::Verilator => vec![Simulator::Verilator],
        SimArg::Both => Simulator::ALL.to_vec(),
    };
    for &s in &sims {
        sim::check_installed(s)?;
    }
    let units = if cli.unit.trim() == "all" {
        hdl::dpc::Unit::ALL.to_vec()
    } else {
        cli.unit
            .split(',')
            .map(|u| parse_unit(u).ok_or_else(|| anyhow!("unknown DPC unit `{u}` (compressor, truc-compressor, man-compressor, decompressor, truc-decompressor, all)")))
            .collect::<Result<Vec<_>>>()?
    };
    if !(0.0..1.0).contains(&cli.stall) {
        return Err(anyhow!("--stall {} is not in [0, 1)", cli.stall));
    }
    let corpus = if cli.no_corpus {
        None
    } else {
        cli.corpus
            .or_else(|| Some(PathBuf::from("../shared/corpus")).filter(|d| d.is_dir()))
    };
    let cfg = DpcConfig {
        params,
        sims,
        units,
        blocks: cli.blocks.max(1),
        seed: cli.seed,
        corpus,
        stall: cli.stall,
        resets: cli.resets,
        build: cli.build,
    };
    let reports = run(&cfg)?;
    println!(
        "cosim_dpc: block {} segment {} sector {} seed {} ({} vectors per unit, stall {}, {} resets)",
        cli.block, cli.segment, cli.sector, cli.seed, cfg.blocks, cfg.stall, cfg.resets
    );
    let mut ok = true;
    for r in &reports {
        print!("{}", r.render());
        ok &= r.ok();
    }
    println!(
        "cosim_dpc: {}",
        if ok {
            "all units match the golden model"
        } else {
            "MISMATCHES (see above)"
        }
    );
    Ok(ok)
}
