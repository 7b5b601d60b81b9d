//! `fuzz`: structure-aware mutation fuzzing of the container reader, the
//! model loader, the block decoders and the programmable-slot image loader
//! (`fuzz/README.md`).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use clap::{Args, Parser, Subcommand};

use mpcgen_fuzz::alloc::CountingAlloc;
use mpcgen_fuzz::harness::{self, Settings, WorkerJob};
use mpcgen_fuzz::targets::{CORPUS_TARGETS, SELFTESTS, TARGETS};
use mpcgen_fuzz::{check_corpus, default_corpus_from_env, Paths};

/// `println!` that ignores a closed stdout (`fuzz ... | head`).
macro_rules! say {
    ($($t:tt)*) => {{
        let _ = writeln!(std::io::stdout(), $($t)*);
    }};
}

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

#[derive(Parser)]
#[command(
    name = "fuzz",
    about = "Structure-aware mutation fuzzer: container-stream, container-random, model-loader, block-decoders, slot-image",
    args_conflicts_with_subcommands = true
)]
struct Cli {
    #[command(subcommand)]
    cmd: Option<Cmd>,
    /// Target to run: container-stream, container-random, model-loader,
    /// block-decoders, slot-image, or `all` (each in turn)
    target: Option<String>,
    /// Seconds per target
    #[arg(long, default_value_t = 60.0)]
    seconds: f64,
    /// Seed of the input generator (the same seed gives the same inputs)
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Go on after a finding (to count them) instead of ending the target
    #[arg(long)]
    keep_going: bool,
    #[command(flatten)]
    common: Common,
}

#[derive(Args, Clone)]
struct Common {
    /// Peak memory one input may use, in MiB (4x this is refused outright)
    #[arg(long, default_value_t = 64, global = true)]
    max_peak_mib: u64,
    /// Wall time one input may take, in milliseconds
    #[arg(long, default_value_t = 2000, global = true)]
    max_input_ms: u64,
    /// Where findings are saved
    #[arg(long, global = true)]
    findings: Option<PathBuf>,
    /// The model sets (default: the workspace's models/)
    #[arg(long, global = true)]
    models: Option<PathBuf>,
    /// The corpus seeds are cut from: a directory (or file) with at least
    /// one readable data file, else an error. Default: ../shared/corpus
    /// beside the workspace when usable; without it, synthetic data only
    /// and a recorded skip (an error under MPCGEN_REQUIRE_TOOLS=1)
    #[arg(long, global = true, value_name = "DIR")]
    corpus: Option<PathBuf>,
    /// No corpus: seeds from synthetic data only
    #[arg(long, global = true, conflicts_with = "corpus")]
    no_corpus: bool,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run input files (or every .bin file of directories) through a
    /// target's oracle and limits; fails if any gives a finding
    Replay {
        target: String,
        #[arg(required = true)]
        paths: Vec<PathBuf>,
    },
    /// Shrink an input while it gives the same class of finding
    Minimize {
        target: String,
        file: PathBuf,
        /// Output file (default: FILE with `.min.bin`)
        #[arg(short, long)]
        out: Option<PathBuf>,
        /// Seconds to spend at most
        #[arg(long, default_value_t = 120)]
        budget_secs: u64,
    },
    #[command(name = "__worker", hide = true)]
    Worker {
        target: String,
        #[arg(long)]
        seconds: f64,
        #[arg(long)]
        seed: u64,
        #[arg(long)]
        state: PathBuf,
        #[arg(long)]
        keep_going: bool,
        #[arg(long)]
        known: Vec<String>,
        #[arg(long)]
        replay: Option<PathBuf>,
    },
}

/// The run's settings; `corpus_needed`: whether the targets run cut
/// seeds from the corpus (replay, minimisation and the harness's self
/// tests do not; without `--corpus` they run without one).
fn settings(c: &Common, corpus_needed: bool) -> Result<Settings> {
    if c.max_peak_mib == 0 || c.max_peak_mib > 1 << 20 {
        bail!(
            "--max-peak-mib {}: must be between 1 and {}",
            c.max_peak_mib,
            1u64 << 20
        );
    }
    if c.max_input_ms == 0 {
        bail!("--max-input-ms 0: must be at least 1");
    }
    let mut paths = Paths::default_for_workspace();
    if let Some(m) = &c.models {
        paths.models = m.clone();
    }
    paths.corpus = match &c.corpus {
        Some(k) => {
            check_corpus(k)?;
            Some(k.clone())
        }
        None if corpus_needed && !c.no_corpus => {
            default_corpus_from_env(&Paths::workspace_corpus())?
        }
        None => None,
    };
    Ok(Settings {
        paths,
        findings: c
            .findings
            .clone()
            .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("findings")),
        max_peak_mib: c.max_peak_mib,
        max_input_ms: c.max_input_ms,
    })
}

fn check_target(t: &str) -> Result<()> {
    if TARGETS.contains(&t) || SELFTESTS.contains(&t) {
        Ok(())
    } else {
        bail!("unknown target `{t}` (known: {}, all)", TARGETS.join(", "))
    }
}

/// Whether `fuzz TARGET` (or `all`) cuts seeds from the corpus.
fn needs_corpus(target: Option<&str>) -> bool {
    match target {
        Some("all") => true,
        Some(t) => CORPUS_TARGETS.contains(&t),
        None => false,
    }
}

fn run(cli: Cli) -> Result<ExitCode> {
    let worker = matches!(cli.cmd, Some(Cmd::Worker { .. }));
    let needed = cli.cmd.is_none() && needs_corpus(cli.target.as_deref());
    let s = settings(&cli.common, needed || worker)?;
    match cli.cmd {
        Some(Cmd::Worker {
            target,
            seconds,
            seed,
            state,
            keep_going,
            known,
            replay,
        }) => {
            let job = WorkerJob {
                target,
                seconds,
                seed,
                keep_going,
                state,
                known,
                replay,
            };
            let code = harness::worker(&job, &s);
            Ok(ExitCode::from(code as u8))
        }
        Some(Cmd::Replay { target, paths }) => {
            check_target(&target)?;
            let files = harness::collect_inputs(&paths)?;
            if files.is_empty() {
                bail!("no .bin input files under the paths given");
            }
            let mut failed = 0;
            for f in &files {
                match harness::replay_file(&target, f, &s)? {
                    None => say!("pass  {}", f.display()),
                    Some(x) => {
                        failed += 1;
                        say!("FAIL  {}: {}", f.display(), x.line());
                    }
                }
            }
            say!("{target}: {} inputs, {failed} failed", files.len());
            Ok(if failed > 0 {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            })
        }
        Some(Cmd::Minimize {
            target,
            file,
            out,
            budget_secs,
        }) => {
            check_target(&target)?;
            let out = out.unwrap_or_else(|| file.with_extension("min.bin"));
            let (f, before, after) =
                harness::minimize(&target, &file, &out, Duration::from_secs(budget_secs), &s)?;
            say!("{}", f.line());
            say!("{before} -> {after} bytes: {}", out.display());
            Ok(ExitCode::SUCCESS)
        }
        None => {
            let Some(target) = cli.target else {
                bail!("name a target (container-stream, container-random, model-loader, block-decoders, slot-image or all)");
            };
            if !(cli.seconds.is_finite() && cli.seconds > 0.0) {
                bail!("--seconds {}: must be a positive number", cli.seconds);
            }
            let list: Vec<&str> = if target == "all" {
                TARGETS.to_vec()
            } else {
                check_target(&target)?;
                vec![target.as_str()]
            };
            let mut total = 0;
            for t in list {
                let r = harness::run_target(t, cli.seconds, cli.seed, cli.keep_going, &s)
                    .with_context(|| format!("target {t}"))?;
                say!(
                    "{}: {} inputs in {:.1} s ({:.0} inputs/s), {} findings{}",
                    r.target,
                    r.runs,
                    r.seconds,
                    r.per_second(),
                    r.findings,
                    if r.workers > 1 {
                        format!(" ({} worker processes)", r.workers)
                    } else {
                        String::new()
                    }
                );
                for (class, c) in &r.classes {
                    say!("  {class}  x{}", c.count);
                    say!("    {}", c.line);
                    if let Some(p) = &c.saved {
                        say!("    saved {p}");
                    }
                }
                total += r.findings;
            }
            Ok(if total > 0 {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            })
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("fuzz: {e:#}");
            ExitCode::from(2)
        }
    }
}
