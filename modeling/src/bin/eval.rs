//! `eval`: MPC against the baseline compressors (BDI, FPC, C-Pack, BPC,
//! SC2) on the corpus test blocks, with LZ4/zstd for context. Writes a
//! Markdown report, JSON and a PNG bar chart (docs/eval).

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::Parser;

use datafiles::atomic::{write_atomic, wrote};
use datafiles::corpus::{Corpus, Split};
use golden::baselines::{Bdi, Bpc, CPack, Fpc, MpcBlockCodec, Sc2};
use golden::mpc::program::{Form, FORMS};
use golden::mpc::{ModelSet, MpcCodec};
use modeling::eval::{
    evaluate, evaluate_online, report, Algo, Column, Lz4Block, Programmed, DEFAULT_FORM,
};
use modeling::plot::{write_bar_chart, BarChart, BarGroup};

/// The paper's Fig. 5 averages (Jin et al. 2022), 32-byte blocks.
const PAPER: [(&str, f64); 6] = [
    ("MPC", 2.26),
    ("C-Pack", 1.71),
    ("BDI", 1.67),
    ("SC2", 1.56),
    ("FPC", 1.50),
    ("BPC", 0.79),
];

#[derive(Parser, Debug)]
#[command(
    name = "eval",
    about = "Compare MPC model sets with BDI, FPC, C-Pack, BPC and SC2 on a corpus",
    long_about = "Compression ratios (sum of original bits / sum of compressed bits) per \
        application, class, integer/floating point, seen/unseen (the paper split, same seed \
        as training) and overall, bit-exact and byte-rounded, for every baseline and MPC \
        under each --models set; win counts; whole-buffer LZ4/zstd for context. Every block \
        is decompressed and compared unless --no-verify. Writes OUT/NAME.md, OUT/NAME.json \
        and OUT/NAME.png. A group without blocks (e.g. no unseen application) shows `—` \
        (JSON null); in the paper mode a corpus without a trainable (non mixed/workload) \
        application is refused.\n\n\
        Held-out mode (--held-out, and always for a corpus without MANIFEST.tsv): the corpus \
        was never trained on, so every block of every file is evaluated (the files of \
        trainable classes count as unseen, mixed/workload as themselves) and SC2's value \
        table comes from the training blocks of --sc2-corpus (the corpus the model sets \
        were trained on, paper split with --seed). The report says which mode was used.\n\n\
        Online protocol (--online K; docs/spec/program-slots.md): per application, K slots of \
        --form are trained on its first quarter of 32-byte blocks in file order for each \
        --models set, giving a column `MPC programmed:SET` beside `MPC:SET`; then every \
        column, baselines included, is measured on the same blocks, the remaining three \
        quarters of each file (the roles and SC2's training blocks stay the mode's)."
)]
struct Cli {
    /// Corpus: a directory with MANIFEST.tsv, or unlabelled data (a
    /// directory of .bin/.npy files without a manifest, or one file), which
    /// is evaluated in the held-out mode.
    #[arg(long)]
    corpus: PathBuf,
    /// Evaluate every block of --corpus as data never trained on (see
    /// above) instead of the paper split's test blocks.
    #[arg(long)]
    held_out: bool,
    /// The corpus SC2's value table trains on (its paper-split training
    /// blocks): required in the held-out mode, default --corpus otherwise.
    #[arg(long)]
    sc2_corpus: Option<PathBuf>,
    /// MPC model-set directory (or model.toml); repeat for several sets.
    #[arg(long)]
    models: Vec<PathBuf>,
    /// Block size in bytes: 32 (the paper's) or 128 (MPC then codes four
    /// 32-byte blocks).
    #[arg(long, default_value_t = 32)]
    block: usize,
    /// Output directory for the report, JSON and chart (without it nothing
    /// is written; the shipped reports are in docs/eval and name the
    /// command that wrote them).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Output file stem; default mpc-vs-baselines (plus -128 for 128-byte blocks).
    #[arg(long)]
    name: Option<String>,
    /// Split seed; must match the seed the model sets trained with.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// SC2 value-frequency table size.
    #[arg(long, default_value_t = golden::baselines::sc2::DEFAULT_TABLE)]
    sc2_table: usize,
    /// SC2 longest code in bits.
    #[arg(long, default_value_t = golden::baselines::sc2::DEFAULT_MAX_LEN)]
    sc2_max_len: u32,
    /// zstd level for the whole-buffer context column.
    #[arg(long, default_value_t = 3)]
    zstd_level: i32,
    /// Skip the decompress-and-compare check of every block.
    #[arg(long)]
    no_verify: bool,
    /// The command line to print in the report (default: reconstructed).
    #[arg(long)]
    command: Option<String>,
    /// The online protocol with K programmable slots per model set (see
    /// above): adds the `MPC programmed:SET` columns and measures every
    /// column on the last three quarters of each file.
    #[arg(long, value_name = "K")]
    online: Option<usize>,
    /// Slot form of --online (full, any-part, stride-part, stride-k0-part,
    /// stride-cols, stride-lib, stride-colpart, stride-colpart-d8).
    #[arg(long, requires = "online", default_value = DEFAULT_FORM)]
    form: String,
}

/// The slot form named `name`, or an error listing the forms.
fn form(name: &str) -> Result<Form> {
    Form::by_name(name).with_context(|| {
        format!(
            "--form {name:?} is not a slot form; the forms are {}",
            FORMS.iter().map(|f| f.name).collect::<Vec<_>>().join(", ")
        )
    })
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    if cli.block != 32 && cli.block != 128 {
        bail!("--block {}: only 32 or 128 bytes are supported", cli.block);
    }
    let slot_form = match cli.online {
        Some(_) if cli.models.is_empty() => bail!(
            "--online programs MPC model sets: give at least one --models set (e.g. --models \
             models/default)"
        ),
        Some(_) => Some(form(&cli.form)?),
        None => None,
    };
    let start = Instant::now();
    let corpus = Corpus::open(&cli.corpus)
        .with_context(|| format!("loading corpus {}", cli.corpus.display()))?;
    corpus.warn_skipped("eval");
    let held_out = cli.held_out || corpus.unlabelled();
    if !held_out && !corpus.apps.iter().any(|a| a.entry.trainable()) {
        bail!(
            "corpus {}: no trainable application (all {} files are of the evaluation-only \
             classes {}); eval reports MPC and SC2 on the paper split (seen/unseen test \
             blocks, SC2 trained on the training blocks), which needs files of the classes \
             int8..fp64 (or pass --held-out with --sc2-corpus to evaluate every block of a \
             corpus never trained on)",
            cli.corpus.display(),
            corpus.apps.len(),
            datafiles::corpus::EVALUATION_ONLY_CLASSES.join("/")
        );
    }
    let split = if held_out {
        Split::held_out(&corpus, cli.seed)
    } else {
        Split::paper(&corpus, cli.seed)
    };
    // SC2 trains on the paper split's training blocks of its corpus: the
    // evaluated one in the paper mode, the model sets' training corpus in
    // the held-out mode.
    let sc2_source = match (&cli.sc2_corpus, held_out) {
        (Some(p), _) if !held_out && p == &cli.corpus => None,
        (Some(p), _) => Some(p.clone()),
        (None, false) => None,
        (None, true) => bail!(
            "corpus {}: {}; SC2's value table must come from the corpus the model sets were \
             trained on: pass --sc2-corpus DIR (e.g. --sc2-corpus ../shared/corpus)",
            cli.corpus.display(),
            if cli.held_out {
                "--held-out evaluates every block and trains nothing on it"
            } else {
                "it has no MANIFEST.tsv, so it is evaluated held out (every block, nothing \
                 trained on it)"
            }
        ),
    };
    let sc2_corpus_owned = match &sc2_source {
        Some(p) => {
            let c =
                Corpus::open(p).with_context(|| format!("loading SC2 corpus {}", p.display()))?;
            c.warn_skipped("eval");
            Some(c)
        }
        None => None,
    };
    let (sc2_corpus, sc2_split) = match &sc2_corpus_owned {
        Some(c) => (c, Split::paper(c, cli.seed)),
        None => (&corpus, split.clone()),
    };
    let load_s = start.elapsed().as_secs_f64();

    let paper = |n: &str| PAPER.iter().find(|p| p.0 == n).map(|p| p.1);
    let mut algos: Vec<Algo> = Vec::new();
    let mut sets = Vec::new();
    let mut programmed = Vec::new();
    for m in &cli.models {
        let set =
            ModelSet::load(m).with_context(|| format!("loading model set {}", m.display()))?;
        let dir = if m.is_dir() {
            m.as_path()
        } else {
            m.parent().unwrap_or(m)
        };
        let label = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| m.display().to_string());
        sets.push(format!("`MPC:{label}` = {}", m.display()));
        if let (Some(k), Some(f)) = (cli.online, slot_form) {
            let name = format!("MPC programmed:{label}");
            let mut p = Programmed::new(name, set.clone(), f, k)
                .with_context(|| format!("--online {k} on {}", m.display()))?;
            p.base = Some(format!("MPC:{label}"));
            programmed.push(p);
        }
        algos.push(Algo {
            name: format!("MPC:{label}"),
            codec: Box::new(MpcBlockCodec::new(
                format!("MPC:{label}"),
                MpcCodec::new(&set),
            )),
            paper: paper("MPC"),
            context: false,
        });
    }
    let b = cli.block;
    algos.push(Algo {
        name: "BDI".into(),
        codec: Box::new(Bdi::new(b)?),
        paper: paper("BDI"),
        context: false,
    });
    algos.push(Algo {
        name: "FPC".into(),
        codec: Box::new(Fpc::new(b)?),
        paper: paper("FPC"),
        context: false,
    });
    algos.push(Algo {
        name: "C-Pack".into(),
        codec: Box::new(CPack::new(b)?),
        paper: paper("C-Pack"),
        context: false,
    });
    algos.push(Algo {
        name: "BPC".into(),
        codec: Box::new(Bpc::new(b)?),
        paper: paper("BPC"),
        context: false,
    });
    let t_sc2 = Instant::now();
    let trainable = Split::trainable_classes(sc2_corpus);
    let train = sc2_split.train_blocks(sc2_corpus, &trainable);
    if train.is_empty() {
        bail!(
            "corpus {}: the paper split leaves no training block (every trainable file is \
             unseen or too small to give one: a file of n 32-byte blocks trains floor(0.8 n)); \
             SC2 cannot be trained",
            sc2_source.as_ref().unwrap_or(&cli.corpus).display()
        );
    }
    let sc2 = Sc2::train_blocks(
        b,
        train.iter().map(|x| &x[..]),
        cli.sc2_table,
        cli.sc2_max_len,
    )?;
    let sc2_note =
        format!(
        "SC2 table: {} values + escape (escape code {} bits) from {} training blocks ({} words) \
         of {}, codes at most {} bits",
        sc2.table_len(),
        sc2.escape_len(),
        train.len(),
        train.len() * 8,
        match &sc2_source {
            Some(p) => format!("the corpus `{}` (paper split, seed {})", p.display(), cli.seed),
            None => "the evaluated corpus (paper split)".to_string(),
        },
        cli.sc2_max_len
    );
    drop(sc2_corpus_owned);
    drop(train);
    let sc2_s = t_sc2.elapsed().as_secs_f64();
    algos.push(Algo {
        name: "SC2".into(),
        codec: Box::new(sc2),
        paper: paper("SC2"),
        context: false,
    });
    algos.push(Algo {
        name: "LZ4/block".into(),
        codec: Box::new(Lz4Block::new(b)),
        paper: None,
        context: true,
    });

    let total: u64 = (0..corpus.apps.len())
        .map(|i| {
            let n = corpus.apps[i].blocks.len();
            if cli.online.is_some() {
                ((n - n / 4) / (b / 32)) as u64
            } else if b == 32 {
                split.apps[i].test.len() as u64
            } else {
                (corpus.apps[i].blocks.len() / 4) as u64
            }
        })
        .sum();
    if total == 0 {
        bail!(
            "corpus {}: no file holds a whole {b}-byte block; nothing to evaluate",
            cli.corpus.display()
        );
    }
    let pb = datafiles::progress::bar(total, "blocks", "eval: evaluating");
    let t_eval = Instant::now();
    let e = if cli.online.is_some() {
        // the programmed columns follow the fixed MPC sets
        let n_sets = cli.models.len();
        let mut columns: Vec<Column> = Vec::with_capacity(algos.len() + programmed.len());
        let mut fixed = algos.into_iter();
        columns.extend(fixed.by_ref().take(n_sets).map(Column::Fixed));
        columns.extend(
            programmed
                .into_iter()
                .map(|p| Column::Programmed(Box::new(p))),
        );
        columns.extend(fixed.map(Column::Fixed));
        evaluate_online(
            &corpus,
            &split,
            &columns,
            b,
            !cli.no_verify,
            cli.zstd_level,
            &|n| pb.inc(n),
        )?
    } else {
        evaluate(
            &corpus,
            &split,
            &algos,
            b,
            !cli.no_verify,
            cli.zstd_level,
            &|n| pb.inc(n),
        )?
    };
    pb.finish_and_clear();
    let eval_s = t_eval.elapsed().as_secs_f64();
    let total_s = start.elapsed().as_secs_f64();
    let threads = rayon::current_num_threads();

    let body = report::markdown(&e);
    let groups = e.groups();
    // Console summary: the first table.
    print!(
        "{}",
        report::console_summary(&e, &groups[..groups.len().min(6)])
    );
    println!(
        "{} blocks, {} algorithms, verify {}, {threads} threads: load {load_s:.1} s, SC2 {sc2_s:.1} s, \
         evaluation {eval_s:.1} s, total {total_s:.1} s",
        total,
        e.algos.len(),
        !cli.no_verify
    );

    if let Some(out) = &cli.out {
        std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
        let stem = cli.name.clone().unwrap_or_else(|| {
            if b == 32 {
                "mpc-vs-baselines".into()
            } else {
                format!("mpc-vs-baselines-{b}")
            }
        });
        let command = cli.command.clone().unwrap_or_else(|| {
            let args: Vec<String> = std::env::args_os()
                .skip(1)
                .map(|a| a.to_string_lossy().into_owned())
                .collect();
            format!(
                "cargo run --release -p modeling --bin eval -- {}",
                args.join(" ")
            )
        });
        let mut mode = if held_out {
            format!(
                "**Mode: held out.** `{}` is treated as data never trained on: every block of \
                 every file is evaluated (files of trainable classes are reported as unseen, \
                 `mixed`/`workload` as themselves), and no block of it trained SC2",
                cli.corpus.display()
            )
        } else {
            "**Mode: paper split.** The seen applications' 20 % test blocks and every block of \
             the unseen, `mixed` and `workload` files are evaluated (split seed as training)"
                .to_string()
        };
        if let (Some(k), Some(f)) = (cli.online, slot_form) {
            mode = format!(
                "{mode}.\n\n**Online protocol (`--online {k} --form {}`, \
                 docs/spec/program-slots.md).** Not the blocks the mode names: every column, baselines included, is measured on the \
                 same blocks, the last three quarters of each file in file order (of its n \
                 32-byte blocks, blocks floor(n/4) to n-1). Per application and model set, {k} \
                 slot{} of form {} are trained on the first quarter (the first floor(n/4) \
                 blocks, which no column measures), giving the `MPC programmed` columns. {}",
                f.name,
                if k == 1 { "" } else { "s" },
                f.name,
                if held_out {
                    "No block of the corpus trained the model sets or SC2"
                } else {
                    "Roles and SC2's training blocks are the paper split's, so in the seen \
                     applications the measured blocks include blocks the model sets and SC2 \
                     trained on"
                }
            );
        }
        let mut md = format!(
            "# MPC vs baseline compressors, {b}-byte blocks\n\nGenerated by `eval` \
             (modeling/src/bin/eval.rs; formats in docs/spec/baselines.md). Reproduce:\n\n```\n\
             {command}\n```\n\n{mode}.\n\nModel sets: {}. {sc2_note}. Every block was {}.\n\n",
            sets.join(", "),
            if cli.no_verify {
                "not decompressed (--no-verify)"
            } else {
                "decompressed and compared with the original"
            }
        );
        if b == 32 && !held_out && cli.online.is_none() {
            md.push_str("## Against the paper (Jin et al. 2022, Fig. 5)\n\n");
            md.push_str(&report::paper_table(&e, &groups));
            md.push_str(
                "\n**Our corpus is not the paper's.** The paper measured LLC-to-DRAM traffic of \
                 GPGPU-Sim runs of GPU applications; we use 22 single-type files of real data \
                 plus 6 mixed/workload memory images (MANIFEST.tsv). Our baselines are written \
                 from the original papers' encoding tables (docs/spec/baselines.md), each with a \
                 raw fallback so no block grows by more than its flag; the paper's BPC figure \
                 below 1 implies it had none at 32 B. Treat the paper's column as context, \
                 not a target.\n\n## Results\n\n",
            );
        } else {
            md.push_str("## Results\n\n");
        }
        md.push_str(&body);
        let md_path = out.join(format!("{stem}.md"));
        write_atomic(&md_path, md.as_bytes())?;
        let json_path = out.join(format!("{stem}.json"));
        // no run times in the files: the same command writes the same bytes
        let json = serde_json::json!({
            "evaluation": &e,
            "groups": &groups,
            "wins": e.wins(),
        });
        write_atomic(&json_path, serde_json::to_string_pretty(&json)?.as_bytes())?;
        // One bar per summary group that has blocks: an empty group
        // (e.g. no unseen application) has no ratio to draw.
        let pick = |name: &str| {
            groups
                .iter()
                .find(|g| g.name.starts_with(name) && !g.is_empty())
        };
        let (series, gs): (Vec<&str>, Vec<_>) = [
            ("overall (seen + unseen)", "overall"),
            ("integer", "integer"),
            ("floating point", "floating"),
            ("unseen", "unseen"),
        ]
        .iter()
        .filter_map(|&(label, n)| pick(n).map(|g| (label, g)))
        .unzip();
        let bars: Vec<BarGroup> = e
            .algos
            .iter()
            .enumerate()
            .map(|(k, a)| BarGroup {
                label: a.clone(),
                values: gs
                    .iter()
                    .map(|g| g.totals[k].ratio().unwrap_or(0.0))
                    .collect(),
                marker: if b == 32 { e.paper[k] } else { None },
            })
            .collect();
        let png_path = out.join(format!("{stem}.png"));
        write_bar_chart(
            &png_path,
            &BarChart {
                title: &format!("Compression ratio, {b}-byte blocks (bit-exact)"),
                x_desc: "algorithm",
                y_desc: "compression ratio (original / compressed bits)",
                series: &series,
                groups: &bars,
                marker_name: "paper, Fig. 5 (overall)",
            },
        )?;
        for p in [&md_path, &json_path, &png_path] {
            wrote(p);
        }
    }
    Ok(())
}
