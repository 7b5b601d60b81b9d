//! `cosim`: co-simulate generated units against their golden models, one
//! subcommand per family (docs/hw/cosim.md):
//!
//! `cargo run --release -p testbench --bin cosim -- mpc --model models/example --sim both --unit all --blocks 10000`
//! `cargo run --release -p testbench --bin cosim -- magbdi --block 128 --mag 32 --base 4 [--mode signed] --sim both --blocks 1000`
//! `cargo run --release -p testbench --bin cosim -- dpc [--block 128 --segment 4 --sector 32] --sim both --unit all --blocks 1000`
//!
//! Without a subcommand, the arguments are those of `cosim mpc`.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{anyhow, Context, Result};
use clap::{Args, Parser, Subcommand, ValueEnum};
use golden::dpc::DpcParams;
use golden::magbdi::{DeltaMode, Params};
use hdl::ir::mutate::Mutation;
use testbench::dpc::{parse_unit, DpcConfig};
use testbench::magbdi::MagBdiConfig;
use testbench::mutate::MutateConfig;
use testbench::run::{self, Config};
use testbench::stream_unit::{self, at_least_one, block_count, probability, StreamArgs};
use testbench::{rtl, sim, Simulator, Unit};

#[derive(Clone, Copy, Debug, ValueEnum)]
enum SimArg {
    Icarus,
    Verilator,
    Both,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum UnitArg {
    Compressor,
    Decompressor,
    Loopback,
    All,
}

/// The units a `--unit` list names, in the order compressor,
/// decompressor, loopback, each once.
fn units_of(args: &[UnitArg]) -> Vec<Unit> {
    let named = |u: Unit| {
        args.iter().any(|a| {
            *a == UnitArg::All
                || matches!(
                    (a, u),
                    (UnitArg::Compressor, Unit::Compressor)
                        | (UnitArg::Decompressor, Unit::Decompressor)
                        | (UnitArg::Loopback, Unit::Loopback)
                )
        })
    };
    Unit::ALL.into_iter().filter(|&u| named(u)).collect()
}

#[derive(Parser)]
#[command(
    name = "cosim",
    version,
    about = "Co-simulate generated units (Icarus, Verilator) against their golden models",
    args_conflicts_with_subcommands = true
)]
struct Cli {
    #[command(subcommand)]
    family: Option<Family>,
    #[command(flatten)]
    mpc: MpcArgs,
}

#[derive(Subcommand)]
enum Family {
    /// The MPC compressor and decompressor of a model set (the default).
    Mpc(MpcArgs),
    /// The MAG-aware BDI compressor and decompressor.
    Magbdi(MagBdiArgs),
    /// The DPC units: plain, DF-TRUC and DF-MAN compressors, plain and
    /// DF-TRUC decompressors.
    Dpc(DpcArgs),
    /// Mutation testing of a generated unit (MPC, MAG-aware BDI, DPC):
    /// single faults, each co-simulated; which ones the checks miss, and
    /// each survivor proven equivalent or killed by a counterexample.
    Mutate(MutateArgs),
    /// Formal proof of the MPC, MAG-aware BDI or DPC units
    /// (docs/hw/formal.md): the round trip for every block (and mask), and
    /// the depth variants against the units under proof.
    Prove(ProveArgs),
}

#[derive(Args)]
struct ProveArgs {
    /// Which generator's units (mpc, magbdi, dpc).
    design: String,
    /// Model-set directory (mpc only) [default: models/example].
    #[arg(long, short)]
    model: Option<PathBuf>,
    /// Block bytes (magbdi, dpc) [default: 128].
    #[arg(long)]
    block: Option<usize>,
    /// MAG bytes (magbdi) [default: 32].
    #[arg(long)]
    mag: Option<usize>,
    /// Base bytes (magbdi) [default: 4].
    #[arg(long)]
    base: Option<usize>,
    /// Delta mode, unsigned or signed (magbdi) [default: unsigned].
    #[arg(long)]
    mode: Option<DeltaMode>,
    /// Pipeline stages of the compressor under proof, 1 or 2 (magbdi; the
    /// other depth is the depth variant) [default: 1].
    #[arg(long)]
    compressor_stages: Option<usize>,
    /// Segment bytes (dpc) [default: 4].
    #[arg(long)]
    segment: Option<usize>,
    /// Sector bytes (dpc) [default: 32].
    #[arg(long)]
    sector: Option<usize>,
    /// Pipeline stages of the decompressors under proof, 2 or 3 (dpc; the
    /// other depth is the depth variant) [default: 2].
    #[arg(long)]
    decompressor_stages: Option<usize>,
    /// Prove the units in this directory (files.f, params.json) instead of
    /// generating them.
    #[arg(long)]
    rtl: Option<PathBuf>,
    #[arg(long, default_value = "build")]
    build: PathBuf,
    /// ABC's time per check, in seconds; past it the check is undecided.
    #[arg(long, default_value_t = 900, value_parser = clap::value_parser!(u32).range(1..))]
    seconds: u32,
    /// ABC's time for the whole round-trip miter before the proof goes on
    /// by parts (mpc; dpc: the DF-MAN and DF-TRUC miters, then by cases of
    /// the mask), in seconds [default: 120 for mpc, --seconds for dpc].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    whole_seconds: Option<u32>,
    /// Only the round trip (no depth variants).
    #[arg(long, conflicts_with = "depths_only")]
    round_trip_only: bool,
    /// Only the depth variants (no round trip).
    #[arg(long, conflicts_with = "control_only")]
    depths_only: bool,
    /// Only the pipeline control of each unit (its stages and handshake).
    #[arg(long, conflicts_with_all = ["round_trip_only", "only"])]
    control_only: bool,
    /// Only these parts of the round trip by parts (comma-separated
    /// names: coding_decode1, lemma_select, shift_compose_4, ...; dpc:
    /// round_trip_plain, round_trip_man, round_trip_truc), without
    /// the whole miter and the depth variants; a check of parts, not a
    /// proof of the round trip.
    #[arg(long, value_delimiter = ',', conflicts_with = "depths_only")]
    only: Vec<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum DesignArg {
    Mpc,
    Magbdi,
    Dpc,
}

#[derive(Args)]
struct MutateArgs {
    /// Which generator's units.
    #[arg(long, value_enum, default_value = "mpc")]
    design: DesignArg,
    /// Model-set directory (MPC).
    #[arg(long, short, default_value = "models/default")]
    model: PathBuf,
    /// Block bytes (MAG-aware BDI, DPC).
    #[arg(long, default_value_t = 128)]
    block: usize,
    /// MAG bytes (MAG-aware BDI).
    #[arg(long, default_value_t = 32)]
    mag: usize,
    /// Base bytes (MAG-aware BDI).
    #[arg(long, default_value_t = 4)]
    base: usize,
    /// Delta mode (MAG-aware BDI).
    #[arg(long, default_value = "unsigned")]
    mode: DeltaMode,
    /// Segment bytes (DPC).
    #[arg(long, default_value_t = 4)]
    segment: usize,
    /// Sector bytes (DPC).
    #[arg(long, default_value_t = 32)]
    sector: usize,
    /// Simulator (one).
    #[arg(long, value_enum, default_value = "verilator")]
    sim: OneSim,
    /// `all` (or `both`), or a comma-separated list: compressor,
    /// decompressor (MPC, MAG-aware BDI); compressor, truc-compressor,
    /// man-compressor, decompressor, truc-decompressor (DPC).
    #[arg(long, default_value = "all")]
    unit: String,
    /// Vectors per mutant run (1 to 10,000,000).
    #[arg(long, short, default_value_t = 2000, value_parser = block_count)]
    blocks: usize,
    /// At most this many mutants per unit, drawn with the seed [default:
    /// every single mutation].
    #[arg(long, value_parser = at_least_one)]
    sample: Option<usize>,
    /// Only these mutation ids (comma-separated, as the report lists them).
    #[arg(long, value_delimiter = ',')]
    only: Option<Vec<usize>>,
    /// Print every mutation of the chosen units (id, operator, stage,
    /// signal, the node before and after; with `--control`, the control
    /// ones) and stop: no simulation.
    #[arg(long)]
    list: bool,
    /// Only the control mutations: of the pipeline control (valid flags,
    /// ready, load enables) and of every register's enable and reset value.
    #[arg(long)]
    control: bool,
    /// Mutants per schema build (at least 1).
    #[arg(long, default_value_t = 256, value_parser = at_least_one)]
    batch: usize,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Corpus [default: ../shared/corpus when present].
    #[arg(long)]
    corpus: Option<PathBuf>,
    #[arg(long, conflicts_with = "corpus")]
    no_corpus: bool,
    #[arg(long, default_value = "build")]
    build: PathBuf,
    #[arg(long, default_value_t = 0.2, value_parser = probability)]
    stall: f64,
    #[arg(long, default_value_t = 2)]
    resets: usize,
    /// Parallel simulator processes [default: number of cores].
    #[arg(long, short, value_parser = at_least_one)]
    jobs: Option<usize>,
    /// Write the report (Markdown) here [default:
    /// <build>/<set or configuration>/mutate/report.md, control-report.md
    /// with --control].
    #[arg(long)]
    report: Option<PathBuf>,
    /// Do not decide the survivors formally (Yosys and ABC): report them
    /// as open.
    #[arg(long)]
    no_prove: bool,
    /// Time per survivor for ABC, in seconds (at least 1): its own limit,
    /// then it is stopped and the survivor reported undecided.
    #[arg(long, default_value_t = 300, value_parser = clap::value_parser!(u32).range(1..))]
    prove_seconds: u32,
    /// MPC units with K programmable slots (0: none), programmed as `cosim
    /// mpc --program-slots` programs them.
    #[arg(long, value_name = "K")]
    program_slots: Option<usize>,
    /// Slot form of --program-slots (docs/hw/program-slots.md).
    #[arg(long, value_name = "F", default_value = "stride-colpart")]
    slot_form: String,
    /// Units with slots: pipeline stages of the compressor, as `gen
    /// --program-slots K --compressor-stages N` (4 or 5) [default: 4].
    #[arg(long, value_name = "N")]
    compressor_stages: Option<usize>,
    /// DPC: pipeline stages of the decompressors, as `gen dpc
    /// --decompressor-stages N` (2 or 3) [default: 2].
    #[arg(long, value_name = "N")]
    decompressor_stages: Option<usize>,
    /// Units with slots: the valid images programmed besides the reset
    /// value (trained; random, random:N; directed, directed:N: images whose
    /// segments take blocks built from their slots' predictors).
    #[arg(
        long,
        value_name = "LIST",
        default_value = "trained,random:4,directed:30"
    )]
    slot_images: String,
    /// Units with slots: blocks between two programmings (at least 1).
    #[arg(long, value_name = "N", default_value_t = 50, value_parser = at_least_one)]
    reprogram_every: usize,
    /// Which mutations: `all`, or `slots` (the logic of the programmable
    /// slots: signals named cfg_*, *slot*, *epoch* and those whose driver
    /// reads one of them).
    #[arg(long, value_name = "SCOPE", default_value = "all")]
    scope: String,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum OneSim {
    Icarus,
    Verilator,
}

#[derive(Args)]
struct MpcArgs {
    /// Model-set directory.
    #[arg(long, short, default_value = "models/example")]
    model: PathBuf,
    /// Simulator(s).
    #[arg(long, value_enum, default_value = "both")]
    sim: SimArg,
    /// Unit(s), one or a comma-separated list: loopback feeds the
    /// compressor into the decompressor.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "all")]
    unit: Vec<UnitArg>,
    /// Vectors per unit (1 to 10,000,000).
    #[arg(long, short, default_value_t = 10_000, value_parser = block_count)]
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
    /// Drive every shard with this stall and reset schedule (the file a
    /// failed `cosim prove` control check writes) instead of random ones;
    /// free cycles after its end.
    #[arg(long, conflicts_with_all = ["stall", "resets"])]
    schedule: Option<PathBuf>,
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
    /// Generate the units with K programmable slots (0: none, the plain
    /// units); with --rtl, the slots the units there must have [default:
    /// none].
    #[arg(long, value_name = "K")]
    program_slots: Option<usize>,
    /// Slot form of --program-slots (docs/hw/program-slots.md).
    #[arg(long, value_name = "F", default_value = "stride-colpart")]
    slot_form: String,
    /// Units with slots: the valid images programmed besides the reset
    /// value, a comma-separated list: trained (trained on corpus blocks);
    /// random (two random valid images of the form) or random:N (N of them,
    /// whose segments take blocks built from their slots' predictors);
    /// directed (4) or directed:N (images that spread the stride candidates
    /// and shift codes over the bytes, with blocks built from their slots'
    /// predictors). The default programs a trained image and two random
    /// ones.
    #[arg(long, value_name = "LIST", default_value = "trained,random")]
    slot_images: String,
    /// Units with slots: blocks between two programmings (at least 1).
    #[arg(long, value_name = "N", default_value_t = 500, value_parser = at_least_one)]
    reprogram_every: usize,
}

#[derive(Args)]
struct MagBdiArgs {
    #[arg(long, default_value_t = 128)]
    block: usize,
    #[arg(long, default_value_t = 32)]
    mag: usize,
    #[arg(long, default_value_t = 4)]
    base: usize,
    #[arg(long, default_value = "unsigned")]
    mode: DeltaMode,
    /// Pipeline stages of the compressor (1 or 2; `gen magbdi
    /// --compressor-stages`) [default: 1].
    #[arg(long)]
    compressor_stages: Option<usize>,
    /// Unit(s), one or a comma-separated list.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "all")]
    unit: Vec<UnitArg>,
    #[command(flatten)]
    common: StreamArgs,
}

#[derive(Args)]
struct DpcArgs {
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
    /// Pipeline stages of the decompressors (2 or 3; `gen dpc
    /// --decompressor-stages`) [default: 2].
    #[arg(long)]
    decompressor_stages: Option<usize>,
    #[command(flatten)]
    common: StreamArgs,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let (tool, res) = match cli.family {
        None => ("cosim", run_mpc(cli.mpc)),
        Some(Family::Mpc(a)) => ("cosim", run_mpc(a)),
        Some(Family::Magbdi(a)) => ("cosim magbdi", run_magbdi(a)),
        Some(Family::Dpc(a)) => ("cosim dpc", run_dpc(a)),
        Some(Family::Mutate(a)) => ("cosim mutate", run_mutate(a)),
        Some(Family::Prove(a)) => ("cosim prove", run_prove(a)),
    };
    stream_unit::exit_code(tool, res)
}

/// `cosim prove DESIGN`: each design's options, refused for the others.
fn run_prove(a: ProveArgs) -> Result<bool> {
    let parts = testbench::prove::Parts {
        round_trip: !a.depths_only && !a.control_only,
        depths: !a.round_trip_only && !a.control_only,
        control: !a.round_trip_only && !a.depths_only,
    };
    let given = |names: &[(&str, bool)]| -> Vec<String> {
        names
            .iter()
            .filter(|(_, g)| *g)
            .map(|(n, _)| format!("--{n}"))
            .collect()
    };
    let refuse = |design: &str, wrong: Vec<String>| -> Result<()> {
        if wrong.is_empty() {
            Ok(())
        } else {
            Err(anyhow!(
                "cosim prove {design}: {} not an option of this design",
                wrong.join(", ")
            ))
        }
    };
    let bdi = [
        ("mag", a.mag.is_some()),
        ("base", a.base.is_some()),
        ("mode", a.mode.is_some()),
        ("compressor-stages", a.compressor_stages.is_some()),
    ];
    let dpc = [
        ("segment", a.segment.is_some()),
        ("sector", a.sector.is_some()),
        ("decompressor-stages", a.decompressor_stages.is_some()),
    ];
    match a.design.as_str() {
        "magbdi" | "dpc" => {
            let mut wrong = given(&[
                ("model", a.model.is_some()),
                ("only", a.design == "magbdi" && !a.only.is_empty()),
            ]);
            wrong.extend(given(if a.design == "magbdi" { &dpc } else { &bdi }));
            refuse(&a.design, wrong)?;
            let block = a.block.unwrap_or(128);
            if a.design == "magbdi" {
                let stages = a
                    .compressor_stages
                    .unwrap_or(testbench::magbdi::DEFAULT_STAGES);
                if !(1..=hdl::magbdi::MAX_COMPRESSOR_STAGES).contains(&stages) {
                    anyhow::bail!("cosim prove magbdi: --compressor-stages {stages}: 1 or 2");
                }
                testbench::prove::magbdi::run_cli(&testbench::prove::magbdi::BdiProve {
                    params: Params::new(
                        block,
                        a.mag.unwrap_or(32),
                        a.base.unwrap_or(4),
                        a.mode.unwrap_or_default(),
                    ),
                    compressor_stages: stages,
                    rtl: a.rtl,
                    build: a.build,
                    seconds: a.seconds,
                    round_trip: parts.round_trip,
                    depths: parts.depths,
                    control: parts.control,
                })
            } else {
                let params = DpcParams::new(block, a.segment.unwrap_or(4), a.sector.unwrap_or(32))?;
                let stages = a
                    .decompressor_stages
                    .unwrap_or(hdl::dpc::DECOMPRESSOR_LATENCY as usize);
                if !(hdl::dpc::DECOMPRESSOR_LATENCY as usize..=hdl::dpc::MAX_DECOMPRESSOR_STAGES)
                    .contains(&stages)
                {
                    anyhow::bail!("cosim prove dpc: --decompressor-stages {stages}: 2 or 3");
                }
                testbench::prove::dpc::run_cli(&testbench::prove::dpc::DpcProve {
                    params,
                    decompressor_stages: stages,
                    rtl: a.rtl,
                    build: a.build,
                    seconds: a.seconds,
                    whole_seconds: a.whole_seconds.unwrap_or(a.seconds),
                    only: a.only,
                    round_trip: parts.round_trip,
                    depths: parts.depths,
                    control: parts.control,
                })
            }
        }
        design => {
            let mut wrong = given(&[("block", a.block.is_some())]);
            wrong.extend(given(&bdi));
            wrong.extend(given(&dpc));
            refuse(design, wrong)?;
            testbench::prove::run_cli(
                design,
                &testbench::prove::MpcProve {
                    model: a.model.unwrap_or_else(|| PathBuf::from("models/example")),
                    rtl: a.rtl,
                    build: a.build,
                    seconds: a.seconds,
                    whole_seconds: a.whole_seconds.unwrap_or(120),
                    parts,
                    only: a.only,
                },
            )
        }
    }
}

fn run_mpc(cli: MpcArgs) -> Result<bool> {
    // The inputs first, before the simulators: the model set, and the RTL
    // given with --rtl must come from that set.
    let set = rtl::load_set(&cli.model)?;
    let program_slots = match cli.program_slots {
        None | Some(0) => None,
        Some(k) => {
            let form = golden::mpc::program::Form::by_name(&cli.slot_form).ok_or_else(|| {
                anyhow!(
                    "--slot-form: `{}` is not a slot form ({})",
                    cli.slot_form,
                    golden::mpc::program::FORMS
                        .iter()
                        .map(|f| f.name)
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            })?;
            hdl::mpc::SlotSpec::new(k, form).map_err(|e| anyhow!("--program-slots: {e}"))?;
            Some(testbench::slots::SlotUnit { k, form })
        }
    };
    let slot_images = testbench::slots::ImageKind::parse_list(&cli.slot_images)?;
    if let Some(dir) = &cli.rtl {
        rtl::load_units(dir, &set, &cli.model, program_slots)?;
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
    let units = units_of(&cli.unit);
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
    if let Some(path) = &cli.schedule {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("--schedule: reading {}", path.display()))?;
        cfg.schedule = Some(
            testbench::schedule::Schedule::parse(&text)
                .with_context(|| format!("--schedule: {}", path.display()))?,
        );
    }
    if let Some(j) = cli.jobs {
        cfg.jobs = j;
    }
    cfg.vcd = cli.vcd;
    cfg.check_timing = !cli.no_timing_check;
    cfg.locate = !cli.no_locate;
    cfg.expect_model = cli.expect_model;
    cfg.progress = true;
    cfg.program_slots = program_slots;
    cfg.slot_options = testbench::slots::SlotOptions {
        images: slot_images,
        reprogram_every: cli.reprogram_every,
    };
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

fn run_magbdi(cli: MagBdiArgs) -> Result<bool> {
    let c = &cli.common;
    let sims = c.sims()?;
    let corpus = c.corpus();
    let cfg = MagBdiConfig {
        params: Params::new(cli.block, cli.mag, cli.base, cli.mode),
        compressor_stages: cli
            .compressor_stages
            .unwrap_or(testbench::magbdi::DEFAULT_STAGES),
        sims,
        units: units_of(&cli.unit),
        blocks: c.blocks,
        seed: c.seed,
        corpus,
        stall: c.stall,
        resets: c.resets,
        build: c.build.clone(),
    };
    let reports = testbench::magbdi::run(&cfg)?;
    println!(
        "cosim magbdi: block {} MAG {} base {} {}, compressor stages {}, seed {} ({} vectors per unit)",
        cli.block, cli.mag, cli.base, cli.mode, cfg.compressor_stages, c.seed, cfg.blocks
    );
    Ok(stream_unit::print_reports("cosim magbdi", &reports))
}

fn run_dpc(cli: DpcArgs) -> Result<bool> {
    let params = DpcParams::new(cli.block, cli.segment, cli.sector)?;
    let c = &cli.common;
    let sims = c.sims()?;
    let units = if cli.unit.trim() == "all" {
        hdl::dpc::DpcUnit::ALL.to_vec()
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
        decompressor_stages: cli
            .decompressor_stages
            .unwrap_or(hdl::dpc::DECOMPRESSOR_LATENCY as usize),
    };
    let reports = testbench::dpc::run(&cfg)?;
    println!(
        "cosim dpc: block {} segment {} sector {}, decompressor stages {}, seed {} ({} vectors per unit, stall {}, {} resets)",
        cli.block, cli.segment, cli.sector, cfg.decompressor_stages, c.seed, cfg.blocks, cfg.stall, cfg.resets
    );
    Ok(stream_unit::print_reports("cosim dpc", &reports))
}

fn run_mutate(cli: MutateArgs) -> Result<bool> {
    use testbench::mutate::Design;
    let sim = match cli.sim {
        OneSim::Icarus => Simulator::Icarus,
        OneSim::Verilator => Simulator::Verilator,
    };
    let corpus = if cli.no_corpus {
        None
    } else {
        cli.corpus
            .clone()
            .or_else(|| Some(PathBuf::from("../shared/corpus")).filter(|d| d.is_dir()))
    };
    let all = matches!(cli.unit.trim(), "all" | "both");
    let names: Vec<&str> = cli.unit.split(',').map(str::trim).collect();
    let two = |u: &str| match u {
        "compressor" => Ok(Unit::Compressor),
        "decompressor" => Ok(Unit::Decompressor),
        _ => Err(anyhow!(
            "unknown unit `{u}` (compressor, decompressor, all)"
        )),
    };
    let two_units = || -> Result<Vec<Unit>> {
        if all {
            Ok(vec![Unit::Compressor, Unit::Decompressor])
        } else {
            names.iter().map(|u| two(u)).collect()
        }
    };
    if matches!(cli.program_slots, Some(k) if k > 0) && !matches!(cli.design, DesignArg::Mpc) {
        return Err(anyhow!(
            "--program-slots applies to the MPC units (--design mpc)"
        ));
    }
    let scope = match cli.scope.trim() {
        "all" => testbench::mutate::Scope::All,
        "slots" => testbench::mutate::Scope::Slots,
        other => return Err(anyhow!("--scope: `{other}` is not a scope (all, slots)")),
    };
    if scope == testbench::mutate::Scope::Slots && !matches!(cli.program_slots, Some(k) if k > 0) {
        return Err(anyhow!(
            "--scope slots needs units with slots (--program-slots K)"
        ));
    }
    if let Some(n) = cli.compressor_stages {
        if !matches!(cli.program_slots, Some(k) if k > 0) {
            return Err(anyhow!(
                "--compressor-stages {n}: applies to units with slots (--program-slots K)"
            ));
        }
        if !all && !names.contains(&"compressor") {
            return Err(anyhow!(
                "--compressor-stages {n}: applies to the compressor (--unit compressor or all)"
            ));
        }
    }
    if let Some(n) = cli.decompressor_stages {
        if cli.design != DesignArg::Dpc {
            return Err(anyhow!(
                "--decompressor-stages {n}: applies to the DPC units (--design dpc)"
            ));
        }
    }
    let (designs, what): (Vec<Design>, String) = match cli.design {
        DesignArg::Mpc => {
            let set = rtl::load_set(&cli.model)?;
            let mut compressor_stages = hdl::mpc::slots::SLOT_COMPRESSOR_STAGES;
            let slots = match cli.program_slots {
                None | Some(0) => None,
                Some(k) => {
                    let form =
                        golden::mpc::program::Form::by_name(&cli.slot_form).ok_or_else(|| {
                            anyhow!("--slot-form: `{}` is not a slot form", cli.slot_form)
                        })?;
                    let spec = hdl::mpc::SlotSpec::new(k, form)
                        .map_err(|e| anyhow!("--program-slots: {e}"))?;
                    // the depths `gen --program-slots K` accepts
                    compressor_stages =
                        hdl::mpc::Options::with_slots(spec, cli.compressor_stages, None)?
                            .compressor_stages();
                    Some(testbench::slots::SlotUnit { k, form })
                }
            };
            let options = testbench::slots::SlotOptions {
                images: testbench::slots::ImageKind::parse_list(&cli.slot_images)?,
                reprogram_every: cli.reprogram_every,
            };
            let designs = two_units()?
                .into_iter()
                .map(|unit| match slots {
                    None => Design::Mpc {
                        model: cli.model.clone(),
                        unit,
                    },
                    Some(slots) => Design::MpcSlots {
                        model: cli.model.clone(),
                        unit,
                        slots,
                        options: options.clone(),
                        compressor_stages,
                    },
                })
                .collect();
            let with = match slots {
                None => String::new(),
                Some(u) if compressor_stages != hdl::mpc::slots::SLOT_COMPRESSOR_STAGES => {
                    format!(
                        ", {} {} slot(s), {compressor_stages}-stage compressor",
                        u.k, u.form.name
                    )
                }
                Some(u) => format!(", {} {} slot(s)", u.k, u.form.name),
            };
            (
                designs,
                format!("model set {} ({}){with}", set.name, cli.model.display()),
            )
        }
        DesignArg::Magbdi => {
            let params = Params::new(cli.block, cli.mag, cli.base, cli.mode);
            golden::magbdi::MagBdi::new(params)?;
            let designs = two_units()?
                .into_iter()
                .map(|unit| Design::MagBdi { params, unit })
                .collect();
            (
                designs,
                format!(
                    "MAG-aware BDI, block {} MAG {} base {} {}",
                    cli.block, cli.mag, cli.base, cli.mode
                ),
            )
        }
        DesignArg::Dpc => {
            let params = DpcParams::new(cli.block, cli.segment, cli.sector)?;
            let units = if all {
                hdl::dpc::DpcUnit::ALL.to_vec()
            } else {
                names
                    .iter()
                    .map(|u| parse_unit(u).ok_or_else(|| anyhow!("unknown DPC unit `{u}` (compressor, truc-compressor, man-compressor, decompressor, truc-decompressor, all)")))
                    .collect::<Result<Vec<_>>>()?
            };
            let decompressor_stages = cli
                .decompressor_stages
                .unwrap_or(hdl::dpc::DECOMPRESSOR_LATENCY as usize);
            // (checked here, before any work)
            hdl::dpc::Staged::new(params, decompressor_stages)
                .map_err(|e| anyhow!("--decompressor-stages: {e}"))?;
            let designs = units
                .into_iter()
                .map(|unit| Design::Dpc {
                    params,
                    unit,
                    decompressor_stages,
                })
                .collect();
            (
                designs,
                format!(
                    "DPC, block {} segment {} sector {}, decompressor stages {decompressor_stages}",
                    cli.block, cli.segment, cli.sector
                ),
            )
        }
    };
    if cli.list {
        let control = |m: &Mutation| testbench::mutate::is_control(m);
        for design in &designs {
            let (label, all) = testbench::mutate::mutations_in(design, scope)?;
            println!("# {label}: {} single mutations", all.len());
            println!("# id\toperator\tstage\tsignal\tbefore -> after");
            for m in all.iter().filter(|m| !cli.control || control(m)) {
                println!(
                    "{}\t{}\t{}\t{}\t{}",
                    m.id,
                    m.op.family(),
                    testbench::mutate::stage_of(m),
                    m.signal,
                    m.text
                );
            }
        }
        return Ok(true);
    }
    sim::check_installed(sim)?;
    let config_dir = match designs.first() {
        Some(d) => d.config_dir()?,
        None => return Err(anyhow!("no unit selected")),
    };
    let mut text = format!("## Mutation testing: {what}, seed {}\n\n", cli.seed);
    let mut all_killed = true;
    for design in designs {
        let unit = design.unit_name();
        let cfg = MutateConfig {
            design,
            build: cli.build.clone(),
            sim,
            blocks: cli.blocks,
            seed: cli.seed,
            corpus: corpus.clone(),
            sample: cli.sample,
            only: cli.only.clone(),
            control_only: cli.control,
            batch: cli.batch,
            jobs: cli
                .jobs
                .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())),
            stall: cli.stall,
            resets: cli.resets,
            prove: !cli.no_prove,
            prove_seconds: cli.prove_seconds,
            scope,
        };
        eprintln!("cosim mutate: {unit} on {sim}...");
        let report = testbench::mutate::run(&cfg)
            .with_context(|| format!("mutation testing the {unit} ({what})"))?;
        let r = report.render();
        print!("{r}");
        text.push_str(&r);
        text.push('\n');
        all_killed &= report.open().next().is_none();
    }
    let report = cli.report.clone().unwrap_or_else(|| {
        let name = if cli.control {
            "control-report.md"
        } else {
            "report.md"
        };
        cli.build.join(&config_dir).join("mutate").join(name)
    });
    std::fs::write(&report, &text).with_context(|| format!("writing {}", report.display()))?;
    println!("cosim mutate: report in {}", report.display());
    println!(
        "cosim mutate: {}",
        if all_killed {
            "every mutant killed or proven equivalent"
        } else {
            "OPEN SURVIVORS (see above)"
        }
    );
    Ok(all_killed)
}
