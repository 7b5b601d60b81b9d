//! `cosim_bdi`: co-simulate the MAG-aware BDI units against the golden model.
//!
//! `cargo run --release -p testbench --bin cosim_bdi -- --block 128 --mag 32
//!  --base 4 [--mode signed] --sim both --blocks 1000`

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::{Parser, ValueEnum};
use golden::magbdi::{DeltaMode, Params};
use testbench::bdi::{run, BdiConfig};
use testbench::{sim, Simulator, Unit};

#[derive(Clone, Copy, Debug, ValueEnum)]
enum SimArg {
    Icarus,
    Verilator,
    Both,
}

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
    #[arg(long, value_enum, default_value = "both")]
    sim: SimArg,
    #[arg(long, value_enum, default_value = "all")]
    unit: UnitArg,
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
    #[arg(long, default_value_t = 0.2)]
    stall: f64,
    #[arg(long, default_value_t = 2)]
    resets: usize,
}

fn main() -> ExitCode {
    match real_main() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("cosim_bdi: error: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn real_main() -> Result<bool> {
    let cli = Cli::parse();
    let sims: Vec<Simulator> = match cli.sim {
        SimArg::Icarus => vec![Simulator::Icarus],
        SimArg::Verilator => vec![Simulator::Verilator],
        SimArg::Both => Simulator::ALL.to_vec(),
    };
    for &s in &sims {
        sim::check_installed(s)?;
    }
    let corpus = if cli.no_corpus {
        None
    } else {
        cli.corpus
            .or_else(|| Some(PathBuf::from("../shared/corpus")).filter(|d| d.is_dir()))
    };
    let cfg = BdiConfig {
        params: Params::new(cli.block, cli.mag, cli.base, cli.mode),
        sims,
        units: match cli.unit {
            UnitArg::Compressor => vec![Unit::Compressor],
            UnitArg::Decompressor => vec![Unit::Decompressor],
            UnitArg::Loopback => vec![Unit::Loopback],
            UnitArg::All => Unit::ALL.to_vec(),
        },
        blocks: cli.blocks.max(1),
        seed: cli.seed,
        corpus,
        stall: cli.stall,
        resets: cli.resets,
        build: cli.build,
    };
    let reports = run(&cfg)?;
    println!(
        "cosim_bdi: block {} MAG {} base {} {} seed {} ({} vectors per unit)",
        cli.block, cli.mag, cli.base, cli.mode, cli.seed, cfg.blocks
    );
    let mut ok = true;
    for r in &reports {
        print!("{}", r.render());
        ok &= r.ok();
    }
    println!(
        "cosim_bdi: {}",
        if ok {
            "all units match the golden model"
        } else {
            "MISMATCHES (see above)"
        }
    );
    Ok(ok)
}
