//! `cosim`: co-simulate the generated MPC units against the golden model.
//!
//! `cargo run --release -p testbench --bin cosim -- --model models/example
//!  --sim both --unit all --blocks 10000`

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Parser, ValueEnum};
use testbench::run::{self, Config};
use testbench::stream_unit::{at_least_one, error_text, probability};
use testbench::{rtl, sim, Simulator, Unit};

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
    name = "cosim",
    version,
    about = "Co-simulate the generated MPC compressor/decompressor (Icarus, Verilator) against the golden model"
)]
struct Cli {
    /// Model-set directory.
    #[arg(long, short, default_value = "models/example")]
    model: PathBuf,
    /// Simulator(s).
    #[arg(long, value_enum, default_value = "both")]
    sim: SimArg,
    /// Unit(s): loopback feeds the compressor into the decompressor.
    #[arg(long, value_enum, default_value = "all")]
    unit: UnitArg,
    /// Vectors per unit (at least 1).
    #[arg(long, short, default_value_t = 10_000, value_parser = at_least_one)]
    blocks: usize,
    /// Seed of every random choice (vectors, stalls, resets).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Dump a VCD of every shard's whole run (large).
    #[arg(long)]
    vcd: bool,
    /// Corpus: a directory with MANIFEST.tsv, a directory of .bin/.npy files
    /// (a subdirectory per class, or none), or one file [default:
    /// ../shared/corpus when present].
    #[arg(long)]
    corpus: Option<PathBuf>,
    /// Use no corpus blocks (random and constructed vectors only).
    #[arg(long, conflicts_with = "corpus")]
    no_corpus: bool,
    /// Use already generated units in this directory (files.f, params.json).
    #[arg(long)]
    rtl: Option<PathBuf>,
    /// Root of the work directories.
    #[arg(long, default_value = "build")]
    build: PathBuf,
    /// Stall probability of the random schedule segments, in [0, 1] (0: full
    /// rate, no stalls).
    #[arg(long, default_value_t = 0.2, value_parser = probability)]
    stall: f64,
    /// Reset pulses per shard.
    #[arg(long, default_value_t = 2)]
    resets: usize,
    /// Parallel simulator processes per unit (at least 1) [default: number of
    /// cores].
    #[arg(long, short, value_parser = at_least_one)]
    jobs: Option<usize>,
    /// Do not check handshake timing against an ideal ready-chain pipeline.
    #[arg(long)]
    no_timing_check: bool,
    /// Do not rerun the first mismatch with a VCD to find the failing stage.
    #[arg(long)]
    no_locate: bool,
    /// Compare against this model set instead (to check that the checker
    /// catches a wrong model).
    #[arg(long)]
    expect_model: Option<PathBuf>,
    /// Skip (with an install hint) a simulator that is not installed instead of failing.
    #[arg(long)]
    skip_missing: bool,
}

fn main() -> ExitCode {
    match real_main() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("cosim: error: {}", error_text(&e));
            ExitCode::from(2)
        }
    }
}

fn real_main() -> Result<bool> {
    let cli = Cli::parse();
    // The inputs first, before the simulators: the model set, and the RTL
    // given with --rtl must come from that set.
    let set = rtl::load_set(&cli.model)?;
    if let Some(dir) = &cli.rtl {
        rtl::load(dir, &set, &cli.model)?;
    }
    if let Some(m) = &cli.expect_model {
        rtl::load_set(m)?;
    }
    let mut sims = match cli.sim {
        SimArg::Icarus => vec![Simulator::Icarus],
        SimArg::Verilator => vec![Simulator::Verilator],
        SimArg::Both => Simulator::ALL.to_vec(),
    };
    let mut missing = Vec::new();
    sims.retain(|&s| match sim::check_installed(s) {
        Ok(()) => true,
        Err(e) => {
            missing.push(e.to_string());
            false
        }
    });
    for m in &missing {
        eprintln!("cosim: {m}");
    }
    if !missing.is_empty() && !cli.skip_missing {
        anyhow::bail!("simulator missing (use --skip-missing to run the others)");
    }
    if sims.is_empty() {
        eprintln!("cosim: no simulator available; nothing checked");
        return Ok(false);
    }
    let units = match cli.unit {
        UnitArg::Compressor => vec![Unit::Compressor],
        UnitArg::Decompressor => vec![Unit::Decompressor],
        UnitArg::Loopback => vec![Unit::Loopback],
        UnitArg::All => Unit::ALL.to_vec(),
    };
    let corpus = if cli.no_corpus {
        None
    } else {
        match cli.corpus {
            Some(c) => Some(c),
            None => {
                let d = PathBuf::from("../shared/corpus");
                if d.is_dir() {
                    Some(d)
                } else {
                    eprintln!(
                        "cosim: no corpus at ../shared/corpus; random and constructed vectors only"
                    );
                    None
                }
            }
        }
    };
    let mut cfg = Config::new(&cli.model);
    cfg.rtl = cli.rtl;
    cfg.build = cli.build;
    cfg.sims = sims;
    cfg.units = units;
    cfg.blocks = cli.blocks;
    cfg.seed = cli.seed;
    cfg.corpus = corpus;
    cfg.stall = cli.stall;
    cfg.resets = cli.resets;
    if let Some(j) = cli.jobs {
        cfg.jobs = j;
    }
    cfg.vcd = cli.vcd;
    cfg.check_timing = !cli.no_timing_check;
    cfg.locate = !cli.no_locate;
    cfg.expect_model = cli.expect_model;
    cfg.progress = true;
    let reports =
        run::run(&cfg).with_context(|| format!("co-simulating {}", cli.model.display()))?;
    let mut ok = true;
    println!(
        "cosim: model {} seed {} ({} vectors per unit)",
        cfg.model.display(),
        cfg.seed,
        cfg.blocks
    );
    for r in &reports {
        print!("{}", r.render());
        ok &= r.verdict.ok();
    }
    println!(
        "cosim: {}",
        if ok {
            "all units match the golden model"
        } else {
            "MISMATCHES (see above)"
        }
    );
    Ok(ok)
}
