//! `programmable_eval`: the report of the online protocol for programmable
//! predictor slots (`docs/spec/program-slots.md`). Reads the JSON objects
//! `mpc ratio --online K --form F --json` printed for every form and K
//! (`DIR/FORM-K.json`, `make programmable-eval` writes them), the roles
//! of the applications from the hard-wired set's provenance notes, and
//! writes `OUT.md` and `OUT.png`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Result};
use clap::Parser;
use datafiles::atomic::{write_atomic, wrote};
use golden::mpc::program::FORMS;
use golden::mpc::ModelSet;
use modeling::online::{class_of, read_run, roles, sum, FileRow, Run};
use modeling::plot::{write_bar_chart, BarChart, BarGroup};

#[derive(Parser)]
#[command(
    name = "programmable_eval",
    about = "Report of the online protocol of programmable MPC slots: per form and K, overall, \
             unseen, mixed + workload and per-file ratios against the hard-wired set alone"
)]
struct Cli {
    /// The hard-wired model set (its notes give each application's role).
    #[arg(long)]
    model: PathBuf,
    /// Directory of FORM-K.json files (`mpc ratio --online K --form FORM --json`).
    #[arg(long)]
    dir: PathBuf,
    /// Slot counts measured.
    #[arg(long, value_delimiter = ',', default_value = "1,2,4")]
    ks: Vec<usize>,
    /// Output path without extension: OUT.md, OUT.png.
    #[arg(long)]
    out: PathBuf,
}

/// Which files a row of the per-class table sums.
type Pick<'a> = Box<dyn Fn(&FileRow) -> bool + 'a>;

fn main() -> Result<()> {
    let cli = Cli::parse();
    let set = ModelSet::load(&cli.model)?;
    let role = roles(&set);
    if role.is_empty() {
        bail!(
            "{}: its provenance notes list no roles (`Roles: ...`)",
            cli.model.display()
        );
    }
    let mut runs: BTreeMap<(usize, usize), Run> = BTreeMap::new();
    for (fi, f) in FORMS.iter().enumerate() {
        for &k in &cli.ks {
            let p = cli.dir.join(format!("{}-{k}.json", f.name));
            runs.insert((fi, k), read_run(&p)?);
        }
    }
    let is = |r: &FileRow, want: &str| role.get(&r.key).map(String::as_str) == Some(want);
    let mut md = String::new();
    md.push_str(
        "# Programmable slots: the online protocol on the dev corpus\n\n\
         Written by `make programmable-eval` (`modeling/src/bin/programmable_eval.rs` over the \
         JSON of `mpc ratio --model models/default --online K --form F --json` on every corpus \
         file, release build). Protocol (`docs/spec/program-slots.md`): per file, K slots are \
         trained on its first quarter; the remaining three quarters are coded with \
         `models/default` alone (*hard-wired*) and with `models/default` plus the slots \
         (*programmed*). Ratios are original bits over compressed bits of those three \
         quarters. *Unseen* are the applications `models/default` was not trained on (roles \
         in its `model.toml` notes); *mixed + workload* the evaluation-only files. Targets: \
         programmed at least 10% above hard-wired on unseen and on mixed + workload, and no \
         file more than 0.5% below.\n\n",
    );
    // summary
    md.push_str("## Summary by form and K\n\n");
    md.push_str(
        "| form | K | overall hw | overall prog | gain | unseen gain | mixed+workload gain | \
         worst file | train s/MiB | targets |\n|---|---:|---:|---:|---:|---:|---:|---|---:|---|\n",
    );
    let mut best_ratio: Option<(f64, usize, usize)> = None;
    let mut meets: Vec<(usize, usize)> = Vec::new();
    for ((fi, k), run) in &runs {
        let all = sum(&run.files);
        let unseen = sum(run.files.iter().filter(|r| is(r, "unseen")));
        let eval = sum(run.files.iter().filter(|r| is(r, "evaluation")));
        let worst = run
            .files
            .iter()
            .map(|r| {
                let g = 100.0 * (r.hw as f64 / r.pr.max(1) as f64 - 1.0);
                (g, r.key.clone())
            })
            .min_by(|a, b| a.0.total_cmp(&b.0))
            .unwrap_or((0.0, String::new()));
        let tb: u64 = run.files.iter().map(|r| r.train_blocks * 32).sum();
        let ts: f64 = run.files.iter().map(|r| r.train_s).sum();
        let per_mib = ts / (tb.max(1) as f64 / (1 << 20) as f64);
        let ok = unseen.gain() >= 10.0 && eval.gain() >= 10.0 && worst.0 >= -0.5;
        if ok {
            meets.push((*fi, *k));
        }
        if best_ratio.is_none_or(|b| all.pr_ratio() > b.0) {
            best_ratio = Some((all.pr_ratio(), *fi, *k));
        }
        md.push_str(&format!(
            "| {} | {k} | {:.3} | {:.3} | {:+.2}% | {:+.2}% | {:+.2}% | {:+.2}% `{}` | {:.3} | {} |\n",
            FORMS[*fi].name,
            all.hw_ratio(),
            all.pr_ratio(),
            all.gain(),
            unseen.gain(),
            eval.gain(),
            worst.0,
            worst.1,
            per_mib,
            if ok { "met" } else { "not met" }
        ));
    }
    md.push_str(
        "\n*gain*: programmed ratio over hard-wired ratio, minus 1. *worst file*: the file \
         whose programmed ratio is lowest against its hard-wired ratio. *train s/MiB*: the \
         training time summed over all files over the MiB of first quarters, one thread per \
         file, two files at a time on the 2-core machine.\n\n",
    );
    // recommendation
    let (_, bf, bk) = best_ratio.unwrap_or((0.0, 0, 0));
    md.push_str("## Recommendation\n\n");
    md.push_str(&format!(
        "With `models/default` (zero-run selection): highest overall ratio **{}** with \
         K = {bk}. ",
        FORMS[bf].name
    ));
    if meets.is_empty() {
        md.push_str(
            "No form and K meets all three targets on this corpus with the zero-run set \
             (the exact selection rule does: last section).\n\n",
        );
    } else {
        md.push_str(&format!(
            "Forms and K that meet all three targets: {}.\n\n",
            meets
                .iter()
                .map(|(f, k)| format!("{} K={k}", FORMS[*f].name))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    md.push_str(include_str!("programmable_eval_text.md"));
    // the exact selection rule: DIR/exact-FORM-K.json, runs of the same
    // protocol with the exact-selection set, against the set above alone
    let mut exact_rows = String::new();
    // (column name, rows with the programmed bits of that run), and the
    // exact set alone
    let mut exact_cols: Vec<(String, Vec<FileRow>)> = Vec::new();
    let mut exact_alone: Option<Vec<FileRow>> = None;
    for (fi, f) in FORMS.iter().enumerate() {
        for &k in &cli.ks {
            let p = cli.dir.join(format!("exact-{}-{k}.json", f.name));
            if !p.exists() {
                continue;
            }
            let ex = read_run(&p)?;
            let Some(base) = runs.get(&(fi, k)) else {
                continue;
            };
            // programmed bits of the exact runs against the zero-run set's
            // hard-wired bits, file by file (the same test blocks)
            let mut rows_alone = Vec::new();
            let mut rows_prog = Vec::new();
            for (b, e) in base.files.iter().zip(&ex.files) {
                if b.key != e.key || b.orig != e.orig {
                    bail!("{}: its files differ from the zero-run runs'", p.display());
                }
                rows_alone.push(FileRow {
                    pr: e.hw,
                    ..b.clone()
                });
                rows_prog.push(FileRow {
                    pr: e.pr,
                    ..b.clone()
                });
            }
            let g = |rows: &[FileRow], pick: &dyn Fn(&FileRow) -> bool| {
                sum(rows.iter().filter(|r| pick(r))).gain()
            };
            let worst = rows_prog
                .iter()
                .map(|r| {
                    (
                        100.0 * (r.hw as f64 / r.pr.max(1) as f64 - 1.0),
                        r.key.clone(),
                    )
                })
                .min_by(|a, b| a.0.total_cmp(&b.0))
                .unwrap_or((0.0, String::new()));
            let (u, m) = (
                g(&rows_prog, &|r| is(r, "unseen")),
                g(&rows_prog, &|r| is(r, "evaluation")),
            );
            let alone = |pick: &dyn Fn(&FileRow) -> bool| g(&rows_alone, pick);
            exact_cols.push((format!("{} K={k}", f.name), rows_prog.clone()));
            exact_alone.get_or_insert_with(|| rows_alone.clone());
            exact_rows.push_str(&format!(
                "| {} | {k} | {:+.2}% / {:+.2}% | {:+.2}% / {u:+.2}% | {:+.2}% / {m:+.2}% | \
                 {:+.2}% `{}` | {} |\n",
                f.name,
                alone(&|_| true),
                g(&rows_prog, &|_| true),
                alone(&|r| is(r, "unseen")),
                alone(&|r| is(r, "evaluation")),
                worst.0,
                worst.1,
                if u >= 10.0 && m >= 10.0 && worst.0 >= -0.5 {
                    "met"
                } else {
                    "not met"
                }
            ));
        }
    }
    if !exact_rows.is_empty() {
        md.push_str(
            "## With the exact selection rule\n\n\
             The same protocol with `models/default-exact` (the same five groups trained \
             with selection `exact`) as the hard-wired set (`make programmable-eval` runs \
             it for `PROG_EXACT_FORMS`), every gain against **`models/default` alone** on \
             the same blocks: the exact set alone, then programmed. Exact selection picks \
             the shortest code, so a slot can no longer win a block by a longer zero run \
             while coding it longer.\n\n\
             | form | K | overall (alone / programmed) | unseen (alone / programmed) | \
             mixed+workload (alone / programmed) | worst file (programmed) | targets |\n\
             |---|---:|---:|---:|---:|---|---|\n",
        );
        md.push_str(&exact_rows);
        md.push('\n');
    }
    // per class and per file for every form at K = the largest
    let kmax = cli.ks.iter().copied().max().unwrap_or(1);
    md.push_str(&format!("\n## Per class, K = {kmax}\n\nProgrammed ratio (gain over hard-wired) per form.\n\n| class | hard-wired |"));
    for f in FORMS.iter() {
        md.push_str(&format!(" {} |", f.name));
    }
    md.push_str("\n|---|---:|");
    md.push_str(&"---:|".repeat(FORMS.len()));
    md.push('\n');
    let mut classes: Vec<String> = runs
        .values()
        .next()
        .map(|r| {
            r.files
                .iter()
                .map(|f| class_of(&f.key).to_string())
                .collect()
        })
        .unwrap_or_default();
    classes.sort();
    classes.dedup();
    let groups: Vec<(String, Pick)> = classes
        .iter()
        .map(|c| {
            let c2 = c.clone();
            (
                c.clone(),
                Box::new(move |r: &FileRow| class_of(&r.key) == c2) as Pick,
            )
        })
        .chain([
            (
                "**unseen**".to_string(),
                Box::new(|r: &FileRow| is(r, "unseen")) as Pick,
            ),
            (
                "**mixed + workload**".to_string(),
                Box::new(|r: &FileRow| is(r, "evaluation")),
            ),
            ("**all**".to_string(), Box::new(|_: &FileRow| true)),
        ])
        .collect();
    for (name, pick) in &groups {
        let first = runs
            .get(&(0, kmax))
            .map(|r| sum(r.files.iter().filter(|f| pick(f))));
        md.push_str(&format!(
            "| {name} | {:.3} |",
            first.map_or(0.0, |s| s.hw_ratio())
        ));
        for fi in 0..FORMS.len() {
            if let Some(r) = runs.get(&(fi, kmax)) {
                let s = sum(r.files.iter().filter(|f| pick(f)));
                md.push_str(&format!(" {:.3} ({:+.1}%) |", s.pr_ratio(), s.gain()));
            }
        }
        md.push('\n');
    }
    md.push_str(&format!(
        "\n## Per file, K = {kmax}\n\n| file | role | hard-wired |"
    ));
    for f in FORMS.iter() {
        md.push_str(&format!(" {} |", f.name));
    }
    md.push_str("\n|---|---|---:|");
    md.push_str(&"---:|".repeat(FORMS.len()));
    md.push('\n');
    if let Some(r0) = runs.get(&(0, kmax)) {
        for (i, f0) in r0.files.iter().enumerate() {
            let hw = f0.orig as f64 / f0.hw.max(1) as f64;
            md.push_str(&format!(
                "| `{}` | {} | {hw:.3} |",
                f0.key,
                role.get(&f0.key).map(String::as_str).unwrap_or("-")
            ));
            for fi in 0..FORMS.len() {
                if let Some(f) = runs.get(&(fi, kmax)).and_then(|r| r.files.get(i)) {
                    let p = f.orig as f64 / f.pr.max(1) as f64;
                    md.push_str(&format!(" {p:.3} ({:+.1}%) |", 100.0 * (p / hw - 1.0)));
                }
            }
            md.push('\n');
        }
    }
    // charts: ratio, and training time, by form and K
    let series: Vec<String> = cli.ks.iter().map(|k| format!("K = {k}")).collect();
    let series_refs: Vec<&str> = series.iter().map(String::as_str).collect();
    let short = |name: &str| name.replace("stride-", "s-");
    let mut ratio_groups = Vec::new();
    let mut time_groups = Vec::new();
    for (fi, f) in FORMS.iter().enumerate() {
        let (mut values, mut times, mut marker) = (Vec::new(), Vec::new(), None);
        for &k in &cli.ks {
            if let Some(r) = runs.get(&(fi, k)) {
                let s = sum(&r.files);
                values.push(s.pr_ratio());
                marker = Some(s.hw_ratio());
                let tb: u64 = r.files.iter().map(|x| x.train_blocks * 32).sum();
                let ts: f64 = r.files.iter().map(|x| x.train_s).sum();
                times.push(ts / (tb.max(1) as f64 / (1 << 20) as f64));
            }
        }
        ratio_groups.push(BarGroup {
            label: short(f.name),
            values,
            marker,
        });
        time_groups.push(BarGroup {
            label: short(f.name),
            values: times,
            marker: Some(1.0),
        });
    }
    let png = cli.out.with_extension("png");
    write_bar_chart(
        &png,
        &BarChart {
            title: "Online protocol: overall ratio of models/default + K slots, by slot form",
            x_desc: "slot form (s- = stride-)",
            y_desc: "compression ratio of the last three quarters",
            series: &series_refs,
            groups: &ratio_groups,
            marker_name: "models/default alone",
        },
    )?;
    wrote(&png);
    let stem = cli
        .out
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let time_png = cli.out.with_file_name(format!("{stem}-training.png"));
    write_bar_chart(
        &time_png,
        &BarChart {
            title: "Run-time training of K slots: seconds per MiB of sample (one core)",
            x_desc: "slot form (s- = stride-)",
            y_desc: "training seconds per MiB of sample",
            series: &series_refs,
            groups: &time_groups,
            marker_name: "target: 1 s per MiB",
        },
    )?;
    wrote(&time_png);
    let mdp = cli.out.with_extension("md");
    if let Some(alone) = &exact_alone {
        md.push_str(
            "\n## Per file with the exact selection rule\n\nRatio (gain over `models/default` \
             alone) of `models/default-exact` alone and programmed.\n\n| file | role | \
             `models/default` | `default-exact` alone |",
        );
        for (c, _) in &exact_cols {
            md.push_str(&format!(" {c} |"));
        }
        md.push_str("\n|---|---|---:|---:|");
        md.push_str(&"---:|".repeat(exact_cols.len()));
        md.push('\n');
        let cell = |r: &FileRow| {
            let (h, p) = (
                r.orig as f64 / r.hw.max(1) as f64,
                r.orig as f64 / r.pr.max(1) as f64,
            );
            format!(" {p:.3} ({:+.1}%) |", 100.0 * (p / h - 1.0))
        };
        for (i, a) in alone.iter().enumerate() {
            md.push_str(&format!(
                "| `{}` | {} | {:.3} |{}",
                a.key,
                role.get(&a.key).map(String::as_str).unwrap_or("-"),
                a.orig as f64 / a.hw.max(1) as f64,
                cell(a)
            ));
            for (_, rows) in &exact_cols {
                if let Some(r) = rows.get(i) {
                    md.push_str(&cell(r));
                }
            }
            md.push('\n');
        }
        let picks: [(&str, Pick); 3] = [
            ("**unseen**", Box::new(|r: &FileRow| is(r, "unseen"))),
            (
                "**mixed + workload**",
                Box::new(|r: &FileRow| is(r, "evaluation")),
            ),
            ("**all**", Box::new(|_: &FileRow| true)),
        ];
        for (label, pick) in picks {
            let sa = sum(alone.iter().filter(|r| pick(r)));
            md.push_str(&format!(
                "| {label} | | {:.3} | {:.3} ({:+.1}%) |",
                sa.hw_ratio(),
                sa.pr_ratio(),
                sa.gain()
            ));
            for (_, rows) in &exact_cols {
                let sp = sum(rows.iter().filter(|r| pick(r)));
                md.push_str(&format!(" {:.3} ({:+.1}%) |", sp.pr_ratio(), sp.gain()));
            }
            md.push('\n');
        }
    }
    let name = |p: &Path| {
        p.file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    md.push_str(&format!(
        "\n![ratio by form and K]({})\n\n![training time by form and K]({})\n",
        name(&png),
        name(&time_png)
    ));
    write_atomic(&mdp, md.as_bytes())?;
    wrote(&mdp);
    Ok(())
}
