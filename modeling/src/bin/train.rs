//! `train`: extract MPC prediction models (base trees, ratio factors,
//! transformer reorders) from a corpus of memory data and write a model-set
//! directory with `model.toml`, `report.md` and RE heatmaps.
//! See docs/spec/training.md.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{anyhow, bail, Context, Result};
use clap::{Parser, ValueEnum};
use datafiles::atomic::{write_atomic, wrote};
use datafiles::corpus::{Corpus, Split};
use golden::mpc::model::{check_name, CustomModels, Selection, MODEL_FILE};
use golden::mpc::ModelSet;
use indicatif::ProgressBar;
use modeling::eval::fmt_ratio;
use modeling::train::cluster::ClusterOptions;
use modeling::train::eval::{evaluate, Summary, Tally};
use modeling::train::report::{render, summary_line, Compared, ReportInput};
use modeling::train::{
    self, heatmap, EdgeWeight, Group, RootChoice, SetSpec, ShiftCost, TrainOptions,
};

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Preset {
    /// The paper's five groups: int8, int16, int32+int64, fp32, fp64.
    Default,
    /// The paper's five groups plus fp16 and bf16.
    Extended,
    /// One predictor trained on int32 only.
    Int32,
    /// One predictor trained on fp32 only.
    Fp32,
}

/// The depth limit of type-group sets (`--preset`, `--groups`) unless
/// `--max-depth` says otherwise: the decompressor restores one tree level
/// per step, so the depth bounds its restoration latency.
const GROUP_MAX_DEPTH: usize = 4;

/// A `--max-depth` value: a depth of at least 1, or no limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum DepthArg {
    Limit(usize),
    Unbounded,
}

fn depth_arg(s: &str) -> Result<DepthArg, String> {
    let s = s.trim();
    if s == "unbounded" {
        return Ok(DepthArg::Unbounded);
    }
    match s.parse::<usize>() {
        Ok(0) => Err("a max depth must be at least 1 (or `unbounded`)".to_string()),
        Ok(d) => Ok(DepthArg::Limit(d)),
        Err(_) => Err(format!(
            "`{s}` is neither a depth (a whole number from 1) nor `unbounded`"
        )),
    }
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum SelectionArg {
    ZeroRun,
    Exact,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum RootArg {
    Entropy,
    Centre,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum WeightArg {
    Mean,
    Min,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum CostArg {
    GrayOnes,
    Entropy,
}

#[derive(Parser)]
#[command(
    name = "train",
    version,
    about = "Train an MPC model set from a corpus (docs/spec/training.md)",
    long_about = "Train an MPC model set from a corpus (docs/spec/training.md).\n\n\
        Reads CORPUS/MANIFEST.tsv and its files (or, without one, CORPUS's .bin/.npy files \
        or the one file CORPUS as unlabelled data for --predictors), splits them by the paper's protocol \
        (entropy order, every 4th application unseen, 80/20 seeded block split of the rest; \
        mixed/workload evaluation-only), trains one predictor per group (ratio entropy -> \
        minimum spanning tree -> ratio factors -> greedy joint-zero reorder) and writes \
        OUT/model.toml, OUT/report.md and OUT/re-GROUP.png, printing each file it wrote. \
        Retraining into OUT replaces the heatmaps of the predictors the set no longer has \
        (those named in the model.toml it replaces), and a model.toml that train did not \
        write is never replaced. Same input, same flags: byte-identical files."
)]
struct Cli {
    /// Corpus: a directory holding MANIFEST.tsv (labelled), or a directory
    /// of .bin/.npy files or one data file without one (unlabelled: only
    /// --predictors trains on it; the split is by file).
    #[arg(long)]
    corpus: PathBuf,
    /// Output model-set directory (created).
    #[arg(long)]
    out: PathBuf,
    /// Set name (default: the last component of --out).
    #[arg(long)]
    name: Option<String>,
    /// Predefined groups.
    #[arg(long, value_enum, default_value = "default", conflicts_with = "groups")]
    preset: Preset,
    /// Groups as NAME=CLASS[+CLASS],... (a bare CLASS is its own group), e.g.
    /// "int8,int16,int32-64=int32+int64,fp32,fp64".
    #[arg(long)]
    groups: Option<String>,
    /// Train this many predictors (1 to 64) without labels: the training
    /// blocks of every trainable application are clustered by the predictor
    /// that codes them shortest (docs/spec/training.md, "Training without
    /// labels"); --preset and --groups do not apply.
    #[arg(long, conflicts_with = "groups",
          value_parser = clap::value_parser!(u32).range(1..=64))]
    predictors: Option<u32>,
    /// Most refinement rounds of the clustering (with --predictors).
    #[arg(long, default_value_t = 6, requires = "predictors",
          value_parser = clap::value_parser!(u32).range(0..=100))]
    cluster_rounds: u32,
    /// Most training blocks clustered, evenly spaced (with --predictors);
    /// the final predictors train on all their blocks.
    #[arg(long, default_value_t = 1 << 18, requires = "predictors",
          value_parser = clap::value_parser!(u64).range(1..=1 << 24))]
    cluster_sample: u64,
    /// Selection rule written into the set.
    #[arg(long, value_enum, default_value = "zero-run")]
    selection: SelectionArg,
    /// Leave out the zero-block custom model.
    #[arg(long)]
    no_zero_block: bool,
    /// Leave out the same-words custom model.
    #[arg(long)]
    no_same_words: bool,
    /// Seed of the 80/20 block split.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Provenance date (fixed default so reruns are byte-identical).
    #[arg(long, default_value = "2026-11-21")]
    date: String,
    /// Longest base chain (the decompressor restores one tree level per
    /// step): a depth from 1, or `unbounded` [default: 4 for the type
    /// groups of --preset and --groups, unbounded with --predictors].
    #[arg(long, value_parser = depth_arg)]
    max_depth: Option<DepthArg>,
    /// Root of each tree: lowest byte entropy, or the MST centre.
    #[arg(long, value_enum, default_value = "entropy")]
    root: RootArg,
    /// Undirected MST edge weight from RE(i,j) and RE(j,i).
    #[arg(long, value_enum, default_value = "mean")]
    edge_weight: WeightArg,
    /// What the ratio factor 2^k of an edge minimises.
    #[arg(long, value_enum, default_value = "gray-ones")]
    shift_cost: CostArg,
    /// Keep every MST edge, even where no ratio factor makes the base
    /// prediction cheaper than sending the byte (default: such bytes become
    /// roots, which lowers depth and never costs compression on training data).
    #[arg(long)]
    no_prune: bool,
    /// Keep the identity reorder (ablation of the trained transformer).
    #[arg(long)]
    identity_reorder: bool,
    /// Most training blocks per group for RE and ratio statistics.
    #[arg(long, default_value_t = 1 << 19)]
    stats_sample: usize,
    /// Most training blocks per group for the reorder statistics.
    #[arg(long, default_value_t = 1 << 16)]
    reorder_sample: usize,
    /// Model sets to evaluate next to the trained one (e.g. models/example).
    #[arg(long)]
    compare: Vec<PathBuf>,
    /// Also train with each of these max depths and tabulate the ratios,
    /// e.g. "1,2,3,4,6,8".
    #[arg(long, value_delimiter = ',')]
    depth_sweep: Vec<usize>,
    /// Skip evaluation and report.md (model.toml and heatmaps only; a
    /// report.md train wrote before is removed, as it describes another set).
    #[arg(long)]
    no_report: bool,
}

fn bar(len: u64, msg: &str) -> ProgressBar {
    datafiles::progress::bar(len, "steps", msg)
}

/// The depth limit the flags give: `--max-depth`, else 4 for type groups
/// and none for `--predictors`.
fn max_depth(cli: &Cli) -> Option<usize> {
    match cli.max_depth {
        Some(DepthArg::Limit(d)) => Some(d),
        Some(DepthArg::Unbounded) => None,
        None if cli.predictors.is_some() => None,
        None => Some(GROUP_MAX_DEPTH),
    }
}

/// The first line of every model.toml train writes (before the set name).
const TRAINED_MARK: &str = "# MPC model set `";
const TRAINED_BY: &str = "TRAINED by `train`";

/// The predictor names of the set train wrote into `out` before (its
/// model.toml), so that their heatmaps can be replaced; an error when
/// `out/model.toml` exists but train did not write it.
fn previous_predictors(out: &Path) -> Result<Vec<String>> {
    let path = out.join(MODEL_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    let first = text.lines().next().unwrap_or_default();
    if !(first.starts_with(TRAINED_MARK) && first.contains(TRAINED_BY)) {
        bail!(
            "{} exists and was not written by train (a hand-made or edited set); train does \
             not replace it: choose another --out, or move it away first",
            path.display()
        );
    }
    // A set that no longer loads (another version's format) leaves its
    // heatmaps in place: only names read from a loaded set are removed.
    Ok(ModelSet::parse(&text, &path.display().to_string())
        .map(|set| set.predictors.iter().map(|p| p.name.clone()).collect())
        .unwrap_or_default())
}

/// The heatmap file of predictor `name`.
fn heatmap_file(name: &str) -> String {
    format!("re-{name}.png")
}

fn options(cli: &Cli) -> TrainOptions {
    TrainOptions {
        edge_weight: match cli.edge_weight {
            WeightArg::Mean => EdgeWeight::Mean,
            WeightArg::Min => EdgeWeight::Min,
        },
        root: match cli.root {
            RootArg::Entropy => RootChoice::Entropy,
            RootArg::Centre => RootChoice::Centre,
        },
        shift_cost: match cli.shift_cost {
            CostArg::GrayOnes => ShiftCost::GrayOnes,
            CostArg::Entropy => ShiftCost::Entropy,
        },
        prune: !cli.no_prune,
        train_reorder: !cli.identity_reorder,
        max_depth: max_depth(cli),
        stats_sample: cli.stats_sample.max(1),
        reorder_sample: cli.reorder_sample.max(1),
    }
}

fn groups(cli: &Cli) -> Result<Vec<Group>> {
    if let Some(g) = &cli.groups {
        return Ok(train::parse_groups(g)?);
    }
    Ok(match cli.preset {
        Preset::Default => train::paper_groups(),
        Preset::Extended => train::extended_groups(),
        Preset::Int32 => vec![Group::new("int32", &["int32"])],
        Preset::Fp32 => vec![Group::new("fp32", &["fp32"])],
    })
}

fn eval_tallies(set: &ModelSet, corpus: &Corpus, split: &Split, label: &str) -> Vec<Tally> {
    let pb = bar(corpus.apps.len() as u64, label);
    let t = evaluate(set, corpus, split, |a| {
        pb.set_position(a as u64);
        pb.set_message(format!("{label} {}", corpus.apps[a].entry.file));
    });
    pb.finish_and_clear();
    t
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    let t0 = Instant::now();
    let groups = if cli.predictors.is_some() {
        Vec::new()
    } else {
        groups(&cli)?
    };
    let name = match &cli.name {
        Some(n) => n.clone(),
        None => cli
            .out
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .filter(|s| !s.is_empty())
            .context("cannot derive a set name from --out; pass --name")?,
    };
    // The names become a directory, file names and JSON strings: checked
    // before the corpus is read, with the rule of the model-file loader.
    check_name(&name).map_err(|problem| {
        anyhow!("set name {name:?} (--name, or the last part of --out): {problem}")
    })?;
    for g in &groups {
        check_name(&g.name)
            .map_err(|problem| anyhow!("group name {:?} (--groups): {problem}", g.name))?;
    }
    if cli.depth_sweep.contains(&0) {
        bail!("a max depth must be at least 1");
    }
    let previous = previous_predictors(&cli.out)?;

    let spinner =
        datafiles::progress::spinner(&format!("train: loading corpus {}", cli.corpus.display()));
    let corpus = Corpus::open(&cli.corpus)
        .with_context(|| format!("loading corpus {}", cli.corpus.display()));
    spinner.finish_and_clear();
    let corpus = corpus?;
    corpus.warn_skipped("train");
    if corpus.unlabelled() && cli.predictors.is_none() {
        bail!(
            "{} has no MANIFEST.tsv: its {} file(s) are unlabelled, and the type groups \
             (--preset, --groups) need labels; train with --predictors K",
            cli.corpus.display(),
            corpus.apps.len()
        );
    }
    let split = Split::paper(&corpus, cli.seed);
    let t_load = t0.elapsed();

    let opts = options(&cli);
    let spec = SetSpec {
        name: name.clone(),
        groups: groups.clone(),
        selection: match cli.selection {
            SelectionArg::ZeroRun => Selection::ZeroRun,
            SelectionArg::Exact => Selection::Exact,
        },
        custom: CustomModels {
            zero_block: !cli.no_zero_block,
            same_words: !cli.no_same_words,
        },
        date: cli.date.clone(),
        seed: cli.seed,
        cluster: cli.predictors.map(|k| ClusterOptions {
            k: k as usize,
            rounds: cli.cluster_rounds as usize,
            sample: cli.cluster_sample as usize,
        }),
    };
    let t1 = Instant::now();
    // clustering: K-1 splits and at most `rounds` rounds
    let steps = match cli.predictors {
        Some(k) => k as u64 - 1 + cli.cluster_rounds as u64,
        None => groups.len() as u64,
    };
    let pb = bar(steps, "train: training");
    let (set, trained) = train::train_set(&corpus, &split, &spec, &opts, |m| {
        pb.set_message(format!("train: {m}"));
        pb.inc(1);
    })?;
    pb.finish_and_clear();
    let t_train = t1.elapsed();

    // Round trip through the loader before anything is written.
    let text = set.to_toml()?;
    let header = format!(
        "{TRAINED_MARK}{name}`: {TRAINED_BY} (docs/spec/training.md); do not edit by \
         hand, retrain.\n# Format: docs/spec/model-format.md. Report: report.md next to this \
         file.\n"
    );
    let text = format!("{header}{text}");
    let back = ModelSet::parse(&text, "generated model.toml")
        .context("internal error: the trained set does not load back")?;
    if back != set {
        bail!("internal error: the trained set changed on a load round trip");
    }
    let mut heatmaps = Vec::new();
    for t in &trained {
        let png = heatmap::re_heatmap_png(&t.stats, 32, &t.predictor.name)
            .with_context(|| format!("drawing the heatmap of {}", t.predictor.name))?;
        heatmaps.push((heatmap_file(&t.predictor.name), png));
    }
    let model_path = cli.out.join(MODEL_FILE);
    eprintln!(
        "{}: {} predictors; load+split {:.1}s, training {:.1}s",
        model_path.display(),
        set.predictors.len(),
        t_load.as_secs_f64(),
        t_train.as_secs_f64()
    );

    // The report is made before anything is written: a failure leaves the
    // set in --out as it was.
    let report = if cli.no_report {
        None
    } else {
        let t2 = Instant::now();
        let tallies = eval_tallies(&set, &corpus, &split, &format!("train: evaluating {name}"));
        let mut compared_sets = Vec::new();
        for c in &cli.compare {
            let s = ModelSet::load(c).with_context(|| format!("loading {}", c.display()))?;
            let t = eval_tallies(
                &s,
                &corpus,
                &split,
                &format!("train: evaluating {}", s.name),
            );
            compared_sets.push((s.name.clone(), t));
        }
        let compared: Vec<Compared> = compared_sets
            .iter()
            .map(|(n, t)| Compared {
                name: n.clone(),
                tallies: t,
            })
            .collect();
        let extra = depth_sweep(&cli, &corpus, &split, &spec, &opts)?;
        let command = format!(
            "cargo run --release -p modeling --bin train -- {}",
            std::env::args_os()
                .skip(1)
                .map(|a| a.to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join(" ")
        );
        let heatmap_names: Vec<String> = heatmaps.iter().map(|(f, _)| f.clone()).collect();
        let md = render(&ReportInput {
            set: &set,
            trained: &trained,
            corpus: &corpus,
            split: &split,
            tallies: &tallies,
            compared: &compared,
            command: &command,
            heatmaps: &heatmap_names,
            extra: &extra,
        });
        let sum = Summary::of(&corpus, &split, &tallies);
        Some((md, summary_line(&sum), t2.elapsed().as_secs_f64()))
    };

    std::fs::create_dir_all(&cli.out).with_context(|| format!("creating {}", cli.out.display()))?;
    write_atomic(&model_path, text.as_bytes())?;
    wrote(&model_path);
    for (file, png) in &heatmaps {
        let path = cli.out.join(file);
        write_atomic(&path, png)?;
        wrote(&path);
    }
    // The heatmaps of predictors the replaced set had and this one has not.
    for old in &previous {
        if set.predictors.iter().any(|p| &p.name == old) {
            continue;
        }
        let path = cli.out.join(heatmap_file(old));
        match std::fs::remove_file(&path) {
            Ok(()) => println!(
                "removed {} (a predictor of the replaced set)",
                path.display()
            ),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e).with_context(|| format!("removing {}", path.display())),
        }
    }
    let report_path = cli.out.join("report.md");
    match report {
        Some((md, summary, seconds)) => {
            write_atomic(&report_path, md.as_bytes())?;
            wrote(&report_path);
            eprintln!(
                "{}: {summary} (evaluation {seconds:.1}s)",
                report_path.display()
            );
        }
        None => {
            // a report train wrote describes the replaced set
            let ours =
                std::fs::read_to_string(&report_path).is_ok_and(|t| t.starts_with("# Model set `"));
            if ours {
                std::fs::remove_file(&report_path)
                    .with_context(|| format!("removing {}", report_path.display()))?;
                println!(
                    "removed {} (it described the replaced set; --no-report)",
                    report_path.display()
                );
            }
        }
    }
    Ok(())
}

/// Retrain with each max depth of `--depth-sweep` and tabulate the ratios.
fn depth_sweep(
    cli: &Cli,
    corpus: &Corpus,
    split: &Split,
    spec: &SetSpec,
    opts: &TrainOptions,
) -> Result<String> {
    if cli.depth_sweep.is_empty() {
        return Ok(String::new());
    }
    let mut md = String::from(
        "## Compression ratio vs tree depth\n\nThe same training with the base chains bounded \
         (depth-bounded Prim from the same root; the decompressor restores one tree level \
         per step, so depth bounds its latency).\n\n\
         | max depth | actual depth (max over predictors) | seen | unseen | overall | mixed + workload |\n\
         |---:|---:|---:|---:|---:|---:|\n",
    );
    let mut depths: Vec<Option<usize>> = cli.depth_sweep.iter().map(|&d| Some(d)).collect();
    depths.push(None);
    for d in depths {
        let o = TrainOptions {
            max_depth: d,
            ..opts.clone()
        };
        let (set, _) = train::train_set(corpus, split, spec, &o, |_| {})?;
        let label = format!("depth {}", d.map_or("-".to_string(), |d| d.to_string()));
        let t = eval_tallies(&set, corpus, split, &format!("train: {label}"));
        let s = Summary::of(corpus, split, &t);
        let actual = set.predictors.iter().map(|p| p.depth()).max().unwrap_or(0);
        md.push_str(&format!(
            "| {} | {actual} | {} | {} | {} | {} |\n",
            d.map_or("unbounded".to_string(), |d| d.to_string()),
            fmt_ratio(s.seen.ratio()),
            fmt_ratio(s.unseen.ratio()),
            fmt_ratio(s.overall.ratio()),
            fmt_ratio(s.evaluation.ratio())
        ));
    }
    Ok(md)
}
