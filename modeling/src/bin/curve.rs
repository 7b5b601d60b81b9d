//! `curve`: compression ratio against area for MPC model sets of different
//! sizes (the predictor count K) and selection rules. Ratios are measured
//! here with the golden codec on the paper split of `--corpus`; areas come
//! from the synthesis reports `unit_synth` wrote for each set's RTL. Writes
//! a Markdown table and a PNG chart (`make curve` runs the whole study).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::Parser;

use datafiles::atomic::{write_atomic, wrote};
use datafiles::corpus::{Corpus, Split};
use golden::mpc::{ModelSet, Selection};
use modeling::plot::{write_line_chart, Line, LineChart};
use modeling::train::eval::{evaluate, Summary};

#[derive(Parser)]
#[command(
    name = "curve",
    about = "Ratio against area of MPC model sets: unseen and mixed + workload ratios on the \
             paper split, compressor and decompressor NAND2-eq from unit_synth reports",
    long_about = "For every --set DIR (a trained model set): the ratio of its golden codec on the \
        unseen applications and on the mixed + workload files of --corpus (paper split, --seed), \
        and the NAND2-eq of mpc_compressor and mpc_decompressor from \
        RTL/<set directory name>/synth/report-<abc>.json (unit_synth --area-only; a set \
        synthesised for its compressor only takes the decompressor area of a set whose \
        decompressor Verilog is identical). Sets are \
        grouped by selection rule and sorted by predictor count. --reference names a set drawn \
        as a single labelled point. Writes OUT.md and OUT.png."
)]
struct Cli {
    /// Corpus the sets were trained on (MANIFEST.tsv).
    #[arg(long)]
    corpus: PathBuf,
    /// Trained model-set directories.
    #[arg(long = "set", required = true)]
    sets: Vec<PathBuf>,
    /// A reference set (e.g. models/default), drawn as its own point.
    #[arg(long)]
    reference: Option<PathBuf>,
    /// Root of the generated RTL: RTL/<set directory name>/synth/.
    #[arg(long)]
    rtl: PathBuf,
    /// The ABC script the reports were made with: `default` (report.json)
    /// or `no-sweep` (report-no-sweep.json); a report of the compressor
    /// alone (`unit_synth --unit mpc_compressor`) is read too.
    #[arg(long, default_value = "no-sweep")]
    abc: String,
    /// Split seed (the seed the sets were trained with).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Output path without extension: OUT.md, OUT.png.
    #[arg(long)]
    out: PathBuf,
}

struct Point {
    label: String,
    k: usize,
    selection: Selection,
    unseen: f64,
    mixed: f64,
    comp: f64,
    decomp: f64,
}

/// The set's RTL directory, `RTL/<set directory name>`.
fn rtl_dir(rtl: &Path, set_dir: &Path) -> Result<PathBuf> {
    let name = set_dir
        .file_name()
        .with_context(|| format!("{}: no directory name", set_dir.display()))?;
    Ok(rtl.join(name))
}

/// A generated unit's Verilog without its comment lines (the header names
/// the model file): equal texts are the same circuit.
fn verilog_body(path: &Path) -> Result<String> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    Ok(text
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n"))
}

/// Compressor and decompressor NAND2-eq from the set's unit_synth report;
/// the decompressor may be missing (synthesised for the compressor only).
fn area(rtl: &Path, set_dir: &Path, abc: &str) -> Result<(f64, Option<f64>)> {
    let suffix = if abc == "default" {
        String::new()
    } else {
        format!("-{abc}")
    };
    let dir = rtl_dir(rtl, set_dir)?.join("synth");
    let both = dir.join(format!("report{suffix}.json"));
    let comp = dir.join(format!("report-mpc_compressor{suffix}.json"));
    let path = if both.is_file() { both } else { comp };
    let text = std::fs::read_to_string(&path).with_context(|| {
        format!(
            "reading {} (run gen and unit_synth --area-only for this set)",
            path.display()
        )
    })?;
    let json: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
    let units = json["units"]
        .as_array()
        .with_context(|| format!("{}: no `units` array", path.display()))?;
    let get = |top: &str| -> Result<f64> {
        units
            .iter()
            .find(|u| u["top"] == top)
            .and_then(|u| u["nand2_eq"].as_f64())
            .with_context(|| format!("{}: no nand2_eq for {top}", path.display()))
    };
    Ok((get("mpc_compressor")?, get("mpc_decompressor").ok()))
}

/// This command line as `curve ARGS`.
fn command_line() -> String {
    let args: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    format!("curve {}", args.join(" "))
}

fn rule(s: Selection) -> &'static str {
    match s {
        Selection::ZeroRun => "zero-run",
        Selection::Exact => "exact",
    }
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    let corpus = Corpus::load(&cli.corpus)
        .with_context(|| format!("loading corpus {}", cli.corpus.display()))?;
    corpus.warn_skipped("curve");
    let split = Split::paper(&corpus, cli.seed);
    let all: Vec<&PathBuf> = cli.sets.iter().chain(&cli.reference).collect();
    let pb = datafiles::progress::bar(all.len() as u64, "sets", "curve: evaluating");
    let mut points = Vec::new();
    let mut missing = Vec::new();
    for dir in &all {
        pb.set_message(format!("curve: evaluating {}", dir.display()));
        let set =
            ModelSet::load(dir).with_context(|| format!("loading model set {}", dir.display()))?;
        let tallies = evaluate(&set, &corpus, &split, |_| {});
        let s = Summary::of(&corpus, &split, &tallies);
        let (Some(unseen), Some(mixed)) = (s.unseen.ratio(), s.evaluation.ratio()) else {
            bail!(
                "corpus {}: the split has no unseen application or no mixed/workload file",
                cli.corpus.display()
            );
        };
        let (comp, decomp) = area(&cli.rtl, dir, &cli.abc)?;
        if decomp.is_none() {
            missing.push(points.len());
        }
        points.push(Point {
            label: set.name.clone(),
            k: set.predictors.len(),
            selection: set.selection,
            unseen,
            mixed,
            comp,
            decomp: decomp.unwrap_or(f64::NAN),
        });
        pb.inc(1);
    }
    pb.finish_and_clear();
    // A set synthesised for its compressor only takes the decompressor area
    // of a set whose decompressor Verilog is the same circuit (the
    // selection rule changes only the compressor).
    for &i in &missing {
        let want = verilog_body(&rtl_dir(&cli.rtl, all[i])?.join("mpc_decompressor.v"))?;
        let mut found = None;
        for (j, p) in points.iter().enumerate() {
            if p.decomp.is_nan() {
                continue;
            }
            let body = verilog_body(&rtl_dir(&cli.rtl, all[j])?.join("mpc_decompressor.v"))?;
            if body == want {
                found = Some(p.decomp);
                break;
            }
        }
        points[i].decomp = found.with_context(|| {
            format!(
                "{}: no decompressor area in its report and no other set with the same \
                 decompressor Verilog",
                all[i].display()
            )
        })?;
    }
    let reference = cli.reference.as_ref().and_then(|_| points.pop());
    let mut by_rule: BTreeMap<&str, Vec<&Point>> = BTreeMap::new();
    for p in &points {
        by_rule.entry(rule(p.selection)).or_default().push(p);
    }
    for v in by_rule.values_mut() {
        v.sort_by_key(|p| p.k);
    }

    let pct = |v: f64, r: Option<f64>| {
        r.map_or(String::new(), |r| {
            format!(" ({:+.1}%)", 100.0 * (v / r - 1.0))
        })
    };
    let command = command_line();
    let mut md = format!(
        "# MPC ratio against area\n\nWritten by `curve` (modeling/src/bin/curve.rs; discussion in \
         docs/eval/label-free.md):\n\n```\n{command}\n```\n\nRatios: golden codec, paper split \
         (seed {}) of `{}`; percentages against the reference set. Area: NAND2-eq from the \
         `unit_synth` reports (ABC script `{}`).\n\n\
         | selection | K | set | unseen ratio | mixed + workload | compressor NAND2-eq | decompressor NAND2-eq |\n\
         |---|---:|---|---:|---:|---:|---:|\n",
        cli.seed,
        cli.corpus.display(),
        cli.abc
    );
    let rows = reference.iter().chain(by_rule.values().flatten().copied());
    for p in rows {
        md += &format!(
            "| {} | {} | `{}` | {:.3}{} | {:.3}{} | {:.0} | {:.0} |\n",
            rule(p.selection),
            p.k,
            p.label,
            p.unseen,
            pct(p.unseen, reference.as_ref().map(|r| r.unseen)),
            p.mixed,
            pct(p.mixed, reference.as_ref().map(|r| r.mixed)),
            p.comp,
            p.decomp
        );
    }
    if let Some(d) = cli.out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(d).with_context(|| format!("creating {}", d.display()))?;
    }
    let md_path = PathBuf::from(format!("{}.md", cli.out.display()));
    write_atomic(&md_path, md.as_bytes())?;

    let mut lines: Vec<Line> = Vec::new();
    for (r, pts) in &by_rule {
        lines.push(Line {
            name: format!("{r} selection, compressor"),
            points: pts.iter().map(|p| (p.comp, p.unseen)).collect(),
            labels: pts.iter().map(|p| format!(" K={}", p.k)).collect(),
        });
        lines.push(Line {
            name: format!("{r} selection, decompressor"),
            points: pts.iter().map(|p| (p.decomp, p.unseen)).collect(),
            labels: pts.iter().map(|p| format!(" K={}", p.k)).collect(),
        });
    }
    if let Some(r) = &reference {
        lines.push(Line {
            name: format!("{} (compressor, decompressor)", r.label),
            points: vec![(r.comp, r.unseen), (r.decomp, r.unseen)],
            labels: vec![format!(" {}", r.label), format!(" {}", r.label)],
        });
    }
    let png_path = PathBuf::from(format!("{}.png", cli.out.display()));
    write_line_chart(
        &png_path,
        &LineChart {
            title: "MPC: ratio on unseen applications against unit area",
            x_desc: "area (NAND2-equivalent gates, OSU 0.18 um)",
            y_desc: "compression ratio, unseen applications",
            lines: &lines,
        },
    )?;
    print!("{md}");
    wrote(&md_path);
    wrote(&png_path);
    Ok(())
}
