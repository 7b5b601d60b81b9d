//! `train`: extract MPC prediction models (base trees, ratio factors,
//! transformer reorders) from a corpus of memory data and write a model-set
//! directory with `model.toml`, `report.md` and RE heatmaps.
//! See docs/spec/training.md.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{anyhow, bail, Context, Result};
use clap::{Parser, ValueEnum};
use golden::mpc::model::{check_name, CustomModels, Selection, MODEL_FILE};
use golden::mpc::ModelSet;
use indicatif::ProgressBar;
use tools::corpus::{Corpus, Split};
use tools::eval::fmt_ratio;
use tools::train::cluster::ClusterOptions;
use tools::train::eval::{evaluate, Summary, Tally};
use tools::train::report::{render, summary_line, Compared, ReportInput};
use tools::train::{
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
        OUT/model.toml, OUT/report.md and OUT/re-GROUP.png. Same input, same flags: \
        byte-identical model.toml."
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
    /// Longest base chain (decompressor latency); default unbounded.
    #[arg(long)]
    max_depth: Option<usize>,
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
    /// Skip evaluation and report.md (model.toml and heatmaps only).
    #[arg(long)]
    no_report: bool,
}

fn bar(len: u64, msg: &str) -> ProgressBar {
    tools::progress::bar(len, "steps", msg)
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
        max_depth: cli.max_depth,
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
    if cli.max_depth == Some(0) || cli.depth_sweep.contains(&0) {
        bail!("a max depth must be at least 1");
    }

    let spinner = ProgressBar::new_spinner();
    spinner.set_message(format!("loading corpus {}", cli.corpus.display()));
    spinner.enable_steady_tick(std::time::Duration::from_millis(120));
    let corpus = Corpus::open(&cli.corpus)
        .with_context(|| format!("loading corpus {}", cli.corpus.display()))?;
    if corpus.unlabelled() && cli.predictors.is_none() {
        spinner.finish_and_clear();
        bail!(
            "{} has no MANIFEST.tsv: its {} file(s) are unlabelled, and the type groups \
             (--preset, --groups) need labels; train with --predictors K",
            cli.corpus.display(),
            corpus.apps.len()
        );
    }
    spinner.set_message("splitting (entropy order, 80/20)");
    let split = Split::paper(&corpus, cli.seed);
    spinner.finish_and_clear();
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
    let pb = bar(steps, "training");
    let (set, trained) = train::train_set(&corpus, &split, &spec, &opts, |m| {
        pb.set_message(m.to_string());
        pb.inc(1);
    })?;
    pb.finish_and_clear();
    let t_train = t1.elapsed();

    // Round trip through the loader before anything is written.
    let text = set.to_toml()?;
    let header = format!(
        "# MPC model set `{name}`: TRAINED by `train` (docs/spec/training.md); do not edit by \
         hand, retrain.\n# Format: docs/spec/model-format.md. Report: report.md next to this \
         file.\n"
    );
    let text = format!("{header}{text}");
    let back = ModelSet::parse(&text, "generated model.toml")
        .context("internal error: the trained set does not load back")?;
    if back != set {
        bail!("internal error: the trained set changed on a load round trip");
    }
    std::fs::create_dir_all(&cli.out).with_context(|| format!("creating {}", cli.out.display()))?;
    let model_path = cli.out.join(MODEL_FILE);
    std::fs::write(&model_path, &text)
        .with_context(|| format!("writing {}", model_path.display()))?;
    let mut heatmaps = Vec::new();
    for t in &trained {
        let file = format!("re-{}.png", t.predictor.name);
        let path = cli.out.join(&file);
        heatmap::write_re_heatmap(&t.stats, 32, &t.predictor.name, &path)
            .with_context(|| format!("writing {}", path.display()))?;
        heatmaps.push(file);
    }
    eprintln!(
        "{}: {} predictors; load+split {:.1}s, training {:.1}s",
        model_path.display(),
        set.predictors.len(),
        t_load.as_secs_f64(),
        t_train.as_secs_f64()
    );
    if cli.no_report {
        return Ok(());
    }

    let t2 = Instant::now();
    let tallies = eval_tallies(&set, &corpus, &split, &name);
    let mut compared_sets = Vec::new();
    for c in &cli.compare {
        let s = ModelSet::load(c).with_context(|| format!("loading {}", c.display()))?;
        let t = eval_tallies(&s, &corpus, &split, &s.name);
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
        "cargo run --release -p tools --bin train -- {}",
        std::env::args().skip(1).collect::<Vec<_>>().join(" ")
    );
    let md = render(&ReportInput {
        set: &set,
        trained: &trained,
        corpus: &corpus,
        split: &split,
        tallies: &tallies,
        compared: &compared,
        command: &command,
        heatmaps: &heatmaps,
        extra: &extra,
    });
    let report_path = cli.out.join("report.md");
    std::fs::write(&report_path, md)
        .with_context(|| format!("writing {}", report_path.display()))?;
    let sum = Summary::of(&corpus, &split, &tallies);
    eprintln!(
        "{}: {} (evaluation {:.1}s)",
        report_path.display(),
        summary_line(&sum),
        t2.elapsed().as_secs_f64()
    );
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
        let t = eval_tallies(&set, corpus, split, &label);
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
