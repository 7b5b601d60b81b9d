//! `programmable_hw`: compression gain of programmable slots against the
//! synthesised area of the units that hold them. Reads the online
//! protocol's runs (`DIR/FORM-K.json` for `models/default`,
//! `DIR/exact-FORM-K.json` for `models/default-exact`; `make
//! programmable-eval` writes them) and `unit_synth` reports of the units
//! `gen --program-slots K --slot-form FORM` wrote under
//! `SYNTH/SET/FORM-K/` (and `SYNTH/SET/hard-wired/`); writes `OUT.md` and
//! `OUT.png`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::Parser;
use datafiles::atomic::{write_atomic, wrote};
use golden::mpc::program::Form;
use golden::mpc::ModelSet;
use modeling::online::{read_run, roles, sum, FileRow, Run};
use modeling::plot::{write_line_chart, Line, LineChart};
use serde_json::Value;

#[derive(Parser)]
#[command(
    name = "programmable_hw",
    about = "Gain of programmable MPC slots (online protocol) against the synthesised \
             NAND2-eq and FO4 of the units that hold them"
)]
struct Cli {
    /// The hard-wired set every gain is measured against (its notes give
    /// each application's role).
    #[arg(long)]
    model: PathBuf,
    /// Directory of the online protocol's runs (FORM-K.json, exact-FORM-K.json).
    #[arg(long)]
    dir: PathBuf,
    /// Root of the synthesised units: SYNTH/SET/FORM-K/synth/report.json.
    #[arg(long)]
    synth: PathBuf,
    /// Output path without extension: OUT.md, OUT.png.
    #[arg(long)]
    out: PathBuf,
}

/// The paper's budgets, twice: compressor, decompressor NAND2-eq.
const BUDGET: (f64, f64) = (76_000.0, 136_000.0);
/// The per-stage timing target.
const FO4_TARGET: f64 = 45.0;

/// One synthesised unit.
#[derive(Clone, Debug, Default)]
struct Unit {
    nand2: f64,
    timed_nand2: Option<f64>,
    /// FO4 of each stage's worst path, first stage first.
    stage_fo4: Vec<f64>,
    flops: u64,
}

impl Unit {
    fn worst_fo4(&self) -> Option<f64> {
        self.stage_fo4.iter().copied().reduce(f64::max)
    }
}

/// Compressor and decompressor of one directory (the decompressor where
/// it was synthesised: `unit_synth --unit mpc_compressor` leaves it out).
struct Synth {
    comp: Unit,
    decomp: Option<Unit>,
}

fn read_unit(u: &Value) -> Unit {
    let timing = &u["timing"];
    let stage_fo4 = timing["stages"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter(|s| s["group"].as_str().is_some_and(|g| g.starts_with("stage ")))
                .filter_map(|s| s["period_fo4"].as_f64())
                .collect()
        })
        .unwrap_or_default();
    Unit {
        nand2: u["nand2_eq"].as_f64().unwrap_or(0.0),
        timed_nand2: timing["nand2_eq"].as_f64(),
        stage_fo4,
        flops: u["flops"].as_u64().unwrap_or(0),
    }
}

/// The units of `dir`'s reports: `synth/report.json` (else
/// `report-no-sweep.json`), and the reports of single units
/// (`report-mpc_compressor.json`, `report-mpc_decompressor.json`, which
/// `unit_synth --unit` writes) for units the first does not hold.
fn read_synth(dir: &Path) -> Result<Option<Synth>> {
    let synth = dir.join("synth");
    let whole = ["report.json", "report-no-sweep.json"]
        .iter()
        .map(|n| synth.join(n))
        .find(|p| p.is_file());
    let paths: Vec<PathBuf> = whole
        .into_iter()
        .chain(
            ["report-mpc_compressor.json", "report-mpc_decompressor.json"]
                .iter()
                .map(|n| synth.join(n))
                .filter(|p| p.is_file()),
        )
        .collect();
    let mut found: BTreeMap<String, Unit> = BTreeMap::new();
    for path in &paths {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let json: Value =
            serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
        let units = json["units"]
            .as_array()
            .with_context(|| format!("{}: no `units` array", path.display()))?;
        for u in units {
            if let Some(top) = u["top"].as_str() {
                found.entry(top.to_string()).or_insert_with(|| read_unit(u));
            }
        }
    }
    let Some(comp) = found.remove("mpc_compressor") else {
        return Ok(None);
    };
    Ok(Some(Synth {
        comp,
        decomp: found.remove("mpc_decompressor"),
    }))
}

/// One measured point: a set, a form and K, its gains and its units.
struct Point {
    set: String,
    form: Option<Form>,
    k: usize,
    overall: f64,
    unseen: f64,
    mixed_workload: f64,
    worst: (f64, String),
    synth: Synth,
}

fn fo4_cell(u: &Unit) -> String {
    match u.worst_fo4() {
        Some(w) => format!(
            "{w:.1} ({})",
            u.stage_fo4
                .iter()
                .map(|f| format!("{f:.1}"))
                .collect::<Vec<_>>()
                .join(" / ")
        ),
        None => "area only".to_string(),
    }
}

fn timed_cell(u: &Unit) -> String {
    u.timed_nand2
        .map(|t| format!("{t:.0}"))
        .unwrap_or_else(|| "-".to_string())
}

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
    let is = |r: &FileRow, want: &str| role.get(&r.key).map(String::as_str) == Some(want);
    // the hard-wired bits of `models/default` on every file: the same in
    // every zero-run run (the same test blocks)
    let mut base: Option<Run> = None;
    let mut points: Vec<Point> = Vec::new();
    let mut set_dirs: Vec<PathBuf> = std::fs::read_dir(&cli.synth)
        .with_context(|| format!("reading {}", cli.synth.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    set_dirs.sort();
    for set_dir in &set_dirs {
        let set_name = set_dir
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let prefix = if set_name.ends_with("-exact") {
            "exact-"
        } else {
            ""
        };
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(set_dir)?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_dir())
            .collect();
        dirs.sort();
        for dir in dirs {
            let name = dir
                .file_name()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let Some(synth) = read_synth(&dir)? else {
                eprintln!("{}: not synthesised yet, left out", dir.display());
                continue;
            };
            let (form, k) = if name == "hard-wired" {
                (None, 0)
            } else {
                let (f, k) = name
                    .rsplit_once('-')
                    .with_context(|| format!("{}: not FORM-K", dir.display()))?;
                let form =
                    Form::by_name(f).with_context(|| format!("{}: no form {f}", dir.display()))?;
                (Some(form), k.parse().context("K")?)
            };
            // ratios: the run of this form and K, or for the hard-wired
            // unit any run of the set (its hard-wired bits)
            let run_path = match form {
                Some(f) => cli.dir.join(format!("{prefix}{}-{k}.json", f.name)),
                None => cli.dir.join(format!("{prefix}stride-colpart-1.json")),
            };
            let run = read_run(&run_path)?;
            if base.is_none() {
                base = Some(read_run(&cli.dir.join("stride-colpart-1.json"))?);
            }
            let Some(b) = base.as_ref() else {
                continue;
            };
            let hw_of: BTreeMap<&str, u64> =
                b.files.iter().map(|r| (r.key.as_str(), r.hw)).collect();
            // the rows against models/default alone: hw from the base run,
            // programmed bits of this run (the set alone for hard-wired)
            let rows: Vec<FileRow> = run
                .files
                .iter()
                .map(|r| FileRow {
                    hw: hw_of.get(r.key.as_str()).copied().unwrap_or(r.hw),
                    pr: if form.is_some() { r.pr } else { r.hw },
                    ..r.clone()
                })
                .collect();
            let all = sum(&rows);
            let unseen = sum(rows.iter().filter(|r| is(r, "unseen")));
            let eval = sum(rows.iter().filter(|r| is(r, "evaluation")));
            let worst = rows
                .iter()
                .map(|r| {
                    (
                        100.0 * (r.hw as f64 / r.pr.max(1) as f64 - 1.0),
                        r.key.clone(),
                    )
                })
                .min_by(|a, b| a.0.total_cmp(&b.0))
                .unwrap_or((0.0, String::new()));
            points.push(Point {
                set: set_name.clone(),
                form,
                k,
                overall: all.gain(),
                unseen: unseen.gain(),
                mixed_workload: eval.gain(),
                worst,
                synth,
            });
        }
    }
    if points.is_empty() {
        bail!("{}: no synthesised unit found", cli.synth.display());
    }
    let mut md = String::new();
    md.push_str(
        "# Programmable slots: compression gain against hardware cost\n\n\
         Written by `make programmable-hw` (`modeling/src/bin/programmable_hw.rs`). Gains: the \
         online protocol of `docs/eval/programmable.md` (K slots trained on the first quarter \
         of each corpus file, the rest coded), every gain against **`models/default` alone** on \
         the same blocks. Area and timing: `unit_synth` (`docs/hw/synthesis.md`: OSU 0.18 um, \
         NAND2-eq, FO4 = the library's fanout-4 inverter delay) of the units `gen --model SET \
         --program-slots K --slot-form FORM` writes (`docs/hw/program-slots.md`). *FO4*: the \
         worst stage, then every stage; `area only` where the timing flow was not run. \
         Budget: at most twice the paper's (76K compressor / 136K decompressor NAND2-eq) and \
         45 FO4 per stage.\n\n",
    );
    md.push_str(
        "| set | form | K | compressor NAND2-eq | timing-mapped | FO4 | decompressor NAND2-eq | \
         timing-mapped | FO4 | flops (c / d) | gain overall | unseen | mixed + workload | worst \
         file | within budget |\n\
         |---|---|---:|---:|---:|---|---:|---:|---|---:|---:|---:|---:|---|---|\n",
    );
    for p in &points {
        let (c, d) = (&p.synth.comp, p.synth.decomp.as_ref());
        let comp_ok = c.nand2 <= BUDGET.0;
        let decomp_ok = d.map(|d| d.nand2 <= BUDGET.1);
        let time_ok = match (c.worst_fo4(), d.and_then(Unit::worst_fo4)) {
            (Some(a), Some(b)) => Some(a <= FO4_TARGET && b <= FO4_TARGET),
            _ => None,
        };
        let verdict = match (comp_ok, decomp_ok, time_ok) {
            (false, _, _) => "no (compressor area)",
            (true, Some(false), _) => "no (decompressor area)",
            (true, None, _) => "compressor area yes, decompressor not synthesised",
            (true, Some(true), Some(true)) => "yes",
            (true, Some(true), None) => "area yes, timing not run",
            (true, Some(true), Some(false)) => "area yes, timing no",
        };
        let dash = || "-".to_string();
        md.push_str(&format!(
            "| `{}` | {} | {} | {:.0} | {} | {} | {} | {} | {} | {} / {} | {:+.2}% | {:+.2}% | \
             {:+.2}% | {:+.2}% `{}` | {} |\n",
            p.set,
            p.form.map_or("hard-wired", |f| f.name),
            p.k,
            c.nand2,
            timed_cell(c),
            fo4_cell(c),
            d.map_or_else(dash, |d| format!("{:.0}", d.nand2)),
            d.map_or_else(dash, timed_cell),
            d.map_or_else(dash, fo4_cell),
            c.flops,
            d.map_or_else(dash, |d| d.flops.to_string()),
            p.overall,
            p.unseen,
            p.mixed_workload,
            p.worst.0,
            p.worst.1,
            verdict
        ));
    }
    // chart: gain against the compressor's area (the unit whose budget
    // binds), one line per set and form
    let mut lines: BTreeMap<String, Line> = BTreeMap::new();
    for p in points.iter().filter(|p| p.form.is_some()) {
        let name = format!("{} {}", p.set, p.form.map_or("hard-wired", |f| f.name));
        let l = lines.entry(name.clone()).or_insert_with(|| Line {
            name,
            points: Vec::new(),
            labels: Vec::new(),
        });
        l.points.push((p.synth.comp.nand2 / 1000.0, p.overall));
        l.labels.push(format!("K={}", p.k));
    }
    for p in points.iter().filter(|p| p.form.is_none()) {
        lines.insert(
            format!("{} hard-wired", p.set),
            Line {
                name: format!("{} hard-wired", p.set),
                points: vec![(p.synth.comp.nand2 / 1000.0, p.overall)],
                labels: vec![String::new()],
            },
        );
    }
    let lines: Vec<Line> = lines.into_values().collect();
    let png = cli.out.with_extension("png");
    write_line_chart(
        &png,
        &LineChart {
            title: "Programmable slots: overall gain over models/default against compressor area",
            x_desc: "compressor, thousand NAND2-eq (area-mapped)",
            y_desc: "gain over models/default alone (%)",
            lines: &lines,
        },
    )?;
    wrote(&png);
    md.push_str(&format!(
        "\n![gain against area]({})\n",
        png.file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    ));
    md.push_str(include_str!("programmable_hw_text.md"));
    let out_md = cli.out.with_extension("md");
    write_atomic(&out_md, md.as_bytes())?;
    wrote(&out_md);
    Ok(())
}
