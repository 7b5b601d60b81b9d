//! `magbdi`: MAG-aware BDI tables and evaluation (docs/spec/mag-bdi.md,
//! docs/eval/mag-bdi.md).
//!
//! * `magbdi table [--block 128] [--base 4] [--mag 16 --mag 32 ...]`:
//!   Eq. 1's delta widths and the encoding bits.
//! * `magbdi eval --corpus ../shared/corpus [--out build/eval/mag-bdi]`:
//!   raw and effective compression ratio of MAG-aware BDI (MAG 16/32/64,
//!   unsigned and signed) next to classic BDI, FPC and C-Pack on 128-byte
//!   blocks of every corpus application; the size distribution (Fig. 12)
//!   and per-application ratios as PNG plots, a Markdown and a JSON report
//!   (the shipped docs/eval/mag-bdi.md names the command that wrote it).
//!   An application without a whole 128-byte block is listed as such and
//!   left out of every average; a corpus with none at all is an error.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand};
use datafiles::atomic::{write_atomic, wrote};
use datafiles::corpus::Manifest;
use golden::baselines::{Bdi, BlockCodec, CPack, Fpc};
use golden::magbdi::{eq1_all, DeltaMode, MagBdi, Params, Table};
use modeling::plot::{write_bar_chart, BarChart, BarGroup};
use rayon::prelude::*;

#[derive(Parser)]
#[command(
    name = "magbdi",
    version,
    about = "MAG-aware BDI: Eq. 1 tables and evaluation"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Print Eq. 1's delta widths.
    Table {
        #[arg(long, default_value_t = 128)]
        block: usize,
        #[arg(long, default_value_t = 4)]
        base: usize,
        #[arg(long, default_values_t = [16, 32, 64])]
        mag: Vec<usize>,
    },
    /// Evaluate on the corpus (any classes; files without a whole 128-byte
    /// block are listed and left out of the averages).
    Eval {
        #[arg(long, default_value = "../shared/corpus")]
        corpus: PathBuf,
        /// Output prefix: writes PREFIX.md, PREFIX.json, PREFIX-*.png
        /// (the shipped report is docs/eval/mag-bdi).
        #[arg(long, default_value = "build/eval/mag-bdi")]
        out: PathBuf,
        /// Blocks per application (evenly spaced; 0 = every block).
        #[arg(long, default_value_t = 0)]
        blocks: usize,
    },
}

const BLOCK: usize = 128;
const MAGS: [usize; 3] = [16, 32, 64];

/// One algorithm: its codec and how many leading bits of its output are
/// metadata (kept by the memory controller, not stored with the block).
struct Algo {
    name: String,
    codec: Box<dyn BlockCodec>,
    meta_bits: usize,
    /// For MAG-aware BDI, its MAG and the codec (sizes come from the encoding).
    mag: Option<(usize, MagBdi)>,
}

/// Stored bytes of one block (capped at the block: raw).
fn stored_bytes(a: &Algo, block: &[u8]) -> usize {
    if let Some((_, m)) = &a.mag {
        return m.compressed_bytes(block);
    }
    let c = a.codec.compress(block);
    // at least one byte: BDI's zero-block encoding stores nothing but its
    // tag, and a memory controller still reads one burst for it
    (c.len.saturating_sub(a.meta_bits))
        .div_ceil(8)
        .clamp(1, BLOCK)
}

fn effective(bytes: usize, mag: usize) -> usize {
    (bytes.div_ceil(mag) * mag).min(BLOCK)
}

fn algos() -> Result<Vec<Algo>> {
    let mut v = vec![
        Algo {
            name: "BDI".into(),
            codec: Box::new(Bdi::new(BLOCK)?),
            meta_bits: 4,
            mag: None,
        },
        Algo {
            name: "FPC".into(),
            codec: Box::new(Fpc::new(BLOCK)?),
            meta_bits: 1,
            mag: None,
        },
        Algo {
            name: "C-Pack".into(),
            codec: Box::new(CPack::new(BLOCK)?),
            meta_bits: 1,
            mag: None,
        },
    ];
    for mode in [DeltaMode::Unsigned, DeltaMode::Signed] {
        for mag in MAGS {
            let m = MagBdi::new(Params::new(BLOCK, mag, 4, mode))?;
            v.push(Algo {
                name: m.name().to_string(),
                codec: Box::new(m.clone()),
                meta_bits: m.table().encoding_bits() as usize,
                mag: Some((mag, m)),
            });
        }
    }
    Ok(v)
}

/// Per application and algorithm: raw stored bytes, effective bytes per
/// MAG, and the histogram of effective sizes at each MAG (bucket = size / MAG).
#[derive(Clone, Default, serde::Serialize)]
struct Stat {
    blocks: u64,
    raw_bytes: u64,
    eff_bytes: [u64; 3],
    hist: [Vec<u64>; 3],
}

/// Geometric mean; `None` for no values.
fn gm(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    Some((xs.iter().map(|x| x.ln()).sum::<f64>() / xs.len() as f64).exp())
}

/// `128 x blocks / bytes`, `None` when there are no blocks.
fn ratio(blocks: u64, bytes: u64) -> Option<f64> {
    (blocks > 0 && bytes > 0).then(|| (BLOCK as u64 * blocks) as f64 / bytes as f64)
}

/// A ratio cell with three decimals, `—` when there is none.
fn r3(v: Option<f64>) -> String {
    v.map_or_else(|| "—".to_string(), |v| format!("{v:.3}"))
}

/// Percentages of a histogram, `None` for an empty one.
fn percentages(h: &[u64]) -> Option<Vec<f64>> {
    let t: u64 = h.iter().sum();
    (t > 0).then(|| h.iter().map(|&x| 100.0 * x as f64 / t as f64).collect())
}

fn main() -> Result<()> {
    match Cli::parse().cmd {
        Cmd::Table { block, base, mag } => {
            for m in mag {
                println!("block {block} B, MAG {m} B, base {base} B:");
                for (c, d) in eq1_all(block, m, base) {
                    match d {
                        Some(d) => println!("  {c:4} B: {d:2}-bit deltas"),
                        None => println!("  {c:4} B: no delta fits (header too large)"),
                    }
                }
                match Table::new(Params::new(block, m, base, DeltaMode::Unsigned)) {
                    Ok(t) => println!(
                        "  encoding bits: {} ({} sizes + raw)",
                        t.encoding_bits(),
                        t.sizes.len()
                    ),
                    Err(e) => println!("  {e}"),
                }
            }
            Ok(())
        }
        Cmd::Eval {
            corpus,
            out,
            blocks,
        } => eval(&corpus, &out, blocks),
    }
}

fn eval(corpus: &std::path::Path, out: &std::path::Path, per_app: usize) -> Result<()> {
    let manifest =
        Manifest::load(corpus).with_context(|| format!("loading corpus {}", corpus.display()))?;
    let algos = algos()?;
    let mut apps: Vec<(String, String, Vec<Stat>)> = Vec::new();
    for e in &manifest.entries {
        let data =
            std::fs::read(corpus.join(&e.file)).with_context(|| format!("reading {}", e.file))?;
        let n = data.len() / BLOCK;
        let pick: Vec<usize> = if per_app == 0 || n <= per_app {
            (0..n).collect()
        } else {
            (0..per_app).map(|i| i * n / per_app).collect()
        };
        let stats: Vec<Stat> = algos
            .par_iter()
            .map(|a| {
                let mut s = Stat {
                    hist: std::array::from_fn(|m| vec![0; BLOCK / MAGS[m]]),
                    ..Stat::default()
                };
                for &i in &pick {
                    let b = &data[i * BLOCK..(i + 1) * BLOCK];
                    let bytes = stored_bytes(a, b);
                    s.blocks += 1;
                    s.raw_bytes += bytes as u64;
                    for (m, &mag) in MAGS.iter().enumerate() {
                        let eb = effective(bytes, mag);
                        s.eff_bytes[m] += eb as u64;
                        s.hist[m][eb / mag - 1] += 1;
                    }
                }
                s
            })
            .collect();
        let name = e
            .file
            .rsplit('/')
            .next()
            .unwrap_or(&e.file)
            .trim_end_matches(".bin")
            .to_string();
        if pick.is_empty() {
            eprintln!(
                "{name}: no whole {BLOCK}-byte block ({} bytes); left out of the averages",
                data.len()
            );
        } else {
            eprintln!("{name}: {} blocks", pick.len());
        }
        apps.push((name, e.class.clone(), stats));
    }
    // Only applications with blocks have ratios; the others are listed as
    // such and left out of every average.
    let has_blocks = |s: &[Stat]| s.first().is_some_and(|x| x.blocks > 0);
    let measured: Vec<&(String, String, Vec<Stat>)> =
        apps.iter().filter(|(_, _, s)| has_blocks(s)).collect();
    if measured.is_empty() {
        bail!(
            "corpus {}: none of its {} files holds a whole {BLOCK}-byte block; nothing to evaluate",
            corpus.display(),
            apps.len()
        );
    }
    let left_out = apps.len() - measured.len();
    // summary
    let mut md = String::new();
    writeln!(md, "# MAG-aware BDI on the corpus (128-byte blocks)\n")?;
    writeln!(
        md,
        "Generated by `magbdi eval` (modeling/src/bin/magbdi.rs). Reproduce:\n\n```\n{}\n```\n\n{} applications, {}{}. Stored size: MAG-aware BDI = the encoding's size (base + bitmask + deltas + padding, a multiple of the MAG; the 1-3 encoding bits are metadata); BDI, FPC, C-Pack = the golden baseline's bits minus its tag/flag (metadata: 4-bit BDI encoding, 1-bit raw flag), rounded up to bytes, at least 1 and at most 128. Effective size = stored size rounded up to a multiple of the MAG (at most 128). Ratio = 128 × blocks / Σ size; **GM** = geometric mean over applications of the per-application ratio (the paper's average), **all** = over all blocks together.\n",
        command_line(),
        measured.len(),
        if per_app == 0 {
            "every 128-byte block of each".to_string()
        } else {
            format!("up to {per_app} evenly spaced 128-byte blocks each")
        },
        if left_out == 0 {
            String::new()
        } else {
            format!(
                "; {left_out} more without a whole 128-byte block, listed below but left out \
                 of every average"
            )
        }
    )?;
    let mut json = BTreeMap::new();
    writeln!(md, "## Raw and effective ratios\n")?;
    writeln!(md, "| algorithm | raw GM | raw all | eff. 16 B GM | eff. 32 B GM | eff. 64 B GM | eff. 16 B all | eff. 32 B all | eff. 64 B all |")?;
    writeln!(md, "|---|---|---|---|---|---|---|---|---|")?;
    let mut summary: Vec<(String, Option<f64>, [Option<f64>; 3])> = Vec::new();
    for (ai, a) in algos.iter().enumerate() {
        let raw: Vec<f64> = measured
            .iter()
            .filter_map(|(_, _, s)| ratio(s[ai].blocks, s[ai].raw_bytes))
            .collect();
        let tot = |f: &dyn Fn(&Stat) -> u64| -> Option<f64> {
            let b: u64 = measured.iter().map(|(_, _, s)| s[ai].blocks).sum();
            let x: u64 = measured.iter().map(|(_, _, s)| f(&s[ai])).sum();
            ratio(b, x)
        };
        let eff_gm: [Option<f64>; 3] = std::array::from_fn(|m| {
            gm(&measured
                .iter()
                .filter_map(|(_, _, s)| ratio(s[ai].blocks, s[ai].eff_bytes[m]))
                .collect::<Vec<_>>())
        });
        let eff_all: [Option<f64>; 3] = std::array::from_fn(|m| tot(&|s| s.eff_bytes[m]));
        let own = |m: usize| match &a.mag {
            Some((mag, _)) if *mag != MAGS[m] => "(n/a)".to_string(),
            _ => String::new(),
        };
        writeln!(
            md,
            "| {} | {} | {} | {}{} | {}{} | {}{} | {} | {} | {} |",
            a.name,
            r3(gm(&raw)),
            r3(tot(&|s| s.raw_bytes)),
            r3(eff_gm[0]),
            own(0),
            r3(eff_gm[1]),
            own(1),
            r3(eff_gm[2]),
            own(2),
            r3(eff_all[0]),
            r3(eff_all[1]),
            r3(eff_all[2])
        )?;
        json.insert(
            a.name.clone(),
            serde_json::json!({"raw_gm": gm(&raw), "raw_all": tot(&|s| s.raw_bytes),
                "eff_gm": eff_gm, "eff_all": eff_all, "mags": MAGS}),
        );
        summary.push((a.name.clone(), gm(&raw), eff_gm));
    }
    writeln!(md, "\n(n/a): a MAG-aware BDI configuration evaluated at a MAG other than its own (shown for completeness; its sizes are multiples of its own MAG).\n")?;
    // paper comparison at each MAG
    let get = |n: &str, m: usize| summary.iter().find(|s| s.0 == n).and_then(|s| s.2[m]);
    writeln!(
        md,
        "## Against the paper (effective ratio, GM over applications)\n"
    )?;
    writeln!(md, "| MAG | BDI | FPC | C-Pack | MAG-BDI (unsigned) | MAG-BDI (signed) | gain over BDI | paper BDI | paper MAG-BDI |")?;
    writeln!(md, "|---|---|---|---|---|---|---|---|---|")?;
    let paper = [(1.57, 2.41), (1.37, 1.85), (1.27, 1.41)];
    let mut groups = Vec::new();
    for (m, &mag) in MAGS.iter().enumerate() {
        let b = get("BDI", m);
        let f = get("FPC", m);
        let c = get("C-Pack", m);
        let u = get(&format!("MAG-BDI-{mag}"), m);
        let sg = get(&format!("MAG-BDI-{mag}s"), m);
        let gain = match (u, b) {
            (Some(u), Some(b)) => format!("{:+.1} %", 100.0 * (u / b - 1.0)),
            _ => "—".to_string(),
        };
        writeln!(
            md,
            "| {mag} B | {} | {} | {} | {} | {} | {gain} | {} | {} |",
            r3(b),
            r3(f),
            r3(c),
            r3(u),
            r3(sg),
            paper[m].0,
            paper[m].1
        )?;
        groups.push(BarGroup {
            label: format!("MAG {mag}B"),
            values: [b, f, c, u, sg].iter().map(|v| v.unwrap_or(0.0)).collect(),
            marker: Some(paper[m].1),
        });
    }
    let png = |s: &str| PathBuf::from(format!("{}-{s}.png", out.display()));
    if let Some(d) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(d).with_context(|| format!("creating {}", d.display()))?;
    }
    write_bar_chart(
        &png("summary"),
        &BarChart {
            title:
                "Effective compression ratio, 128-byte blocks (geometric mean over applications)",
            x_desc: "memory access granularity (MAG)",
            y_desc: "effective ratio (original / MAG-rounded bytes)",
            series: &["BDI", "FPC", "C-Pack", "MAG-BDI", "MAG-BDI signed"],
            groups: &groups,
            marker_name: "paper, MAG-aware BDI",
        },
    )?;
    // per application at MAG 32
    writeln!(md, "\n## Per application, MAG 32 B (raw / effective)\n")?;
    let idx = |n: &str| algos.iter().position(|a| a.name == n).unwrap_or(0);
    let cols = ["BDI", "FPC", "C-Pack", "MAG-BDI-32", "MAG-BDI-32s"];
    writeln!(md, "| application | class | {} |", cols.join(" | "))?;
    writeln!(md, "|---|---|{}", "---|".repeat(cols.len()))?;
    let mut app_groups = Vec::new();
    for (name, class, s) in &apps {
        let mut row = format!("| {name} | {class} |");
        if !has_blocks(s) {
            write!(row, " no blocks |{}", " — |".repeat(cols.len() - 1))?;
            writeln!(md, "{row}")?;
            continue;
        }
        let mut vals = Vec::new();
        for c in cols {
            let st = &s[idx(c)];
            let raw = ratio(st.blocks, st.raw_bytes);
            let eff = ratio(st.blocks, st.eff_bytes[1]);
            let two = |v: Option<f64>| v.map_or_else(|| "—".to_string(), |v| format!("{v:.2}"));
            write!(row, " {} / {} |", two(raw), two(eff))?;
            vals.push(eff.unwrap_or(0.0));
        }
        writeln!(md, "{row}")?;
        app_groups.push(BarGroup {
            label: name.chars().take(14).collect(),
            values: vals,
            marker: None,
        });
    }
    write_bar_chart(
        &png("apps"),
        &BarChart {
            title: "Effective compression ratio per application, MAG 32 B, 128-byte blocks",
            x_desc: "application",
            y_desc: "effective ratio (original / MAG-rounded bytes)",
            series: &cols,
            groups: &app_groups,
            marker_name: "",
        },
    )?;
    // distribution of effective sizes (Fig. 12) at MAG 32, over all blocks
    writeln!(
        md,
        "\n## Distribution of effective sizes (Fig. 12), MAG 32 B, all blocks\n"
    )?;
    writeln!(
        md,
        "| algorithm | 32 B | 64 B | 96 B | 128 B (uncompressed or no gain) |"
    )?;
    writeln!(md, "|---|---|---|---|---|")?;
    let mut dist_groups: Vec<BarGroup> = (1..=4)
        .map(|j| BarGroup {
            label: format!("{} B", 32 * j),
            values: Vec::new(),
            marker: None,
        })
        .collect();
    let share_cells = |h: &[u64]| -> (String, Vec<f64>) {
        match percentages(h) {
            Some(p) => (
                p.iter()
                    .map(|x| format!("{x:.1} %"))
                    .collect::<Vec<_>>()
                    .join(" | "),
                p,
            ),
            None => (vec!["—"; h.len()].join(" | "), vec![0.0; h.len()]),
        }
    };
    for c in cols {
        let ai = idx(c);
        let mut h = [0u64; 4];
        for (_, _, s) in &measured {
            for (j, x) in s[ai].hist[1].iter().enumerate() {
                h[j] += x;
            }
        }
        let (cells, pct) = share_cells(&h);
        writeln!(md, "| {c} | {cells} |")?;
        for (j, g) in dist_groups.iter_mut().enumerate() {
            g.values.push(pct[j]);
        }
    }
    write_bar_chart(
        &png("sizes"),
        &BarChart {
            title: "Distribution of effective compressed sizes, MAG 32 B, 128-byte blocks",
            x_desc: "effective compressed size",
            y_desc: "share of blocks (%)",
            series: &cols,
            groups: &dist_groups,
            marker_name: "",
        },
    )?;
    // MAG 16 distribution for MAG-BDI-16
    writeln!(
        md,
        "\nMAG 16 B, MAG-BDI-16 (unsigned / signed), share of blocks per effective size:\n"
    )?;
    writeln!(
        md,
        "| size | {} |",
        (1..=8)
            .map(|j| format!("{} B", 16 * j))
            .collect::<Vec<_>>()
            .join(" | ")
    )?;
    writeln!(md, "|---|{}", "---|".repeat(8))?;
    for c in ["BDI", "MAG-BDI-16", "MAG-BDI-16s"] {
        let ai = idx(c);
        let mut h = [0u64; 8];
        for (_, _, s) in &measured {
            for (j, x) in s[ai].hist[0].iter().enumerate() {
                h[j] += x;
            }
        }
        writeln!(md, "| {c} | {} |", share_cells(&h).0)?;
    }
    let apps_json: Vec<_> = apps
        .iter()
        .map(|(n, c, s)| {
            let per: BTreeMap<_, _> = algos
                .iter()
                .zip(s)
                .map(|(a, st)| (a.name.clone(), st.clone()))
                .collect();
            serde_json::json!({"app": n, "class": c, "stats": per})
        })
        .collect();
    let j = serde_json::json!({"block_bytes": BLOCK, "blocks_per_app": per_app, "summary": json, "apps": apps_json});
    let md_path = PathBuf::from(format!("{}.md", out.display()));
    write_atomic(&md_path, md.as_bytes())?;
    let json_path = PathBuf::from(format!("{}.json", out.display()));
    write_atomic(&json_path, serde_json::to_string_pretty(&j)?.as_bytes())?;
    print!("{md}");
    for p in [
        md_path,
        json_path,
        png("summary"),
        png("apps"),
        png("sizes"),
    ] {
        wrote(&p);
    }
    Ok(())
}

/// The command line that reproduces this run, as the report shows it.
fn command_line() -> String {
    format!(
        "cargo run --release -p modeling --bin magbdi -- {}",
        std::env::args_os()
            .skip(1)
            .map(|a| a.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(" ")
    )
}
