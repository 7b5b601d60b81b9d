//! `synth`: run the Yosys/OpenSTA flow on the generated MPC units.
//!
//! * `synth --model models/default` -> `build/<set>/synth/report.{md,json}`
//! * `synth --scaling` -> `build/scaling/report.{md,json}` (area vs number of
//!   predictors and selection rule, area-only runs)

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::Parser;
use datafiles::atomic::wrote;
use golden::mpc::model::Selection;
use golden::mpc::ModelSet;
use hdl::mpc::{MpcConfig, UNITS};
use hdl::Family;
use synth::flow::{self, Options, UnitReport};
use synth::liberty::Liberty;
use synth::report::unit_markdown;

/// Paper budget (NAND2-eq, UMC 28 nm): compressor, decompressor.
const BUDGET: [f64; 2] = [38_000.0, 68_000.0];

#[derive(Parser)]
#[command(
    about = "Synthesise the generated MPC compressor/decompressor and report area and timing"
)]
struct Cli {
    /// Model set directory (or model.toml).
    #[arg(long, default_value = "models/default")]
    model: PathBuf,
    /// Output root; RTL goes to <build>/<set>/, reports to <build>/<set>/synth/.
    #[arg(long, default_value = "build")]
    build: PathBuf,
    /// Liberty file (default: $MPC_LIBERTY, then where `make setup` puts OSU 0.18 um).
    #[arg(long)]
    liberty: Option<PathBuf>,
    /// Pipeline stages of the compressor (3 or 4).
    #[arg(long, default_value_t = hdl::mpc::COMPRESSOR_LATENCY as usize)]
    compressor_stages: usize,
    /// Pipeline stages of the decompressor (4 to 8). RTL and reports of
    /// depths other than the defaults go to <build>/<set>-c<C>-d<D>/.
    #[arg(long, default_value_t = hdl::mpc::DECOMPRESSOR_LATENCY as usize)]
    decompressor_stages: usize,
    /// Area only: no depth runs, no timing mapping or OpenSTA, no block breakdown.
    #[arg(long)]
    area_only: bool,
    /// Area-vs-models study instead: truncate/duplicate the predictors of --model.
    #[arg(long)]
    scaling: bool,
    /// Predictor counts for --scaling.
    #[arg(long, value_delimiter = ',', default_value = "1,3,5,7,9")]
    counts: Vec<usize>,
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    if !flow::have_tool("yosys") {
        bail!("yosys not found: {}", flow::INSTALL_HINT);
    }
    let lib = Liberty::load(&flow::find_liberty(cli.liberty.as_deref())?)?;
    if cli.scaling {
        return scaling(&cli, &lib);
    }
    let opts = if cli.area_only {
        Options::AREA_ONLY
    } else {
        Options::FULL
    };
    if opts.sta && !flow::have_tool("sta") {
        bail!(
            "OpenSTA (`sta`) not found: {} (or pass --area-only)",
            flow::INSTALL_HINT
        );
    }
    let gen_opts = hdl::mpc::Options::with_stages(cli.compressor_stages, cli.decompressor_stages)?;
    let config = MpcConfig::load(&cli.model, gen_opts)
        .with_context(|| format!("loading {}", cli.model.display()))?;
    let set = &config.set;
    let rtl = if gen_opts == hdl::mpc::Options::default() {
        cli.build.join(&set.name)
    } else {
        cli.build.join(format!(
            "{}-c{}-d{}",
            set.name,
            gen_opts.compressor_stages(),
            gen_opts.decompressor_stages()
        ))
    };
    let cmd = hdl::unit_dir::this_command();
    hdl::family::write_units(&config, &rtl, &UNITS, &cmd)?;
    let described = hdl::unit::read_units(&rtl.join("params.json"))?;
    let out = rtl.join("synth");
    let regs = [
        synth::register_bits(&config.build(UNITS[0])?.0),
        synth::register_bits(&config.build(UNITS[1])?.0),
    ];
    let spinner = datafiles::progress::spinner(&format!(
        "synth: {} and {} of `{}`",
        UNITS[0].module_name(),
        UNITS[1].module_name(),
        set.name
    ));
    let reports = run_units(&rtl, &out, &lib, opts, [true, true], &described);
    spinner.finish_and_clear();
    let reports = reports?;
    let mut md = format!(
        "# Synthesis report: model set `{}` ({} predictors, {} model IDs, selection {})\n\n\
         Liberty `{}` (library `{}`), NAND2-eq unit = `{}` ({} area units). Yosys `synth -flatten`, \
         `dfflibmap`, `abc -liberty` (area); timing on the same netlist mapped again with buffering and \
         sizing (ABC `buffer -p -N 4; upsize; dnsize`), OpenSTA with a clock, periods also in FO4 delays of \
         the library. Paper (UMC 28 nm): compressor 38K, decompressor 68K NAND2-eq, \
         3 and 4 cycles. Method and caveats: docs/hw/synthesis.md.\n\n",
        set.name,
        set.predictors.len(),
        set.id_count(),
        set.selection,
        lib.path.display(),
        lib.name,
        lib.nand2.0,
        lib.nand2.1
    );
    let mut json = Vec::new();
    for (i, r) in reports.iter().enumerate() {
        let Some(r) = r else { continue };
        md.push_str(&unit_markdown(r, Some(BUDGET[i])));
        md.push_str(&format!(
            "Register bits declared by the generator: {} ({} flops at elaboration{}; {} after optimisation).\n\n",
            regs[i],
            r.rtl_flop_bits,
            if regs[i] == r.rtl_flop_bits { ", equal" } else { ", DIFFERENT" },
            r.flops
        ));
        let latency = hdl::unit::find(&described, &r.top, &rtl.join("params.json"))?.latency;
        json.push(
            serde_json::json!({ "report": r, "register_bits": regs[i], "budget_nand2": BUDGET[i],
            "latency_cycles": latency }),
        );
    }
    let j = serde_json::json!({ "model_set": set.name, "predictors": set.predictors.len(),
        "model_ids": set.id_count(), "selection": set.selection.to_string(), "units": json });
    write(&out.join("report.md"), &md)?;
    write(&out.join("report.json"), &serde_json::to_string_pretty(&j)?)?;
    print!("{md}");
    wrote(&out.join("report.md"));
    wrote(&out.join("report.json"));
    Ok(())
}

fn write(p: &Path, text: &str) -> Result<()> {
    Ok(datafiles::atomic::write_atomic(p, text.as_bytes())?)
}

/// Synthesise the compressor and/or decompressor in `rtl` in parallel.
fn run_units(
    rtl: &Path,
    out: &Path,
    lib: &Liberty,
    opts: Options,
    which: [bool; 2],
    described: &[hdl::unit::UnitDescription],
) -> Result<[Option<UnitReport>; 2]> {
    let results: Vec<Result<Option<UnitReport>>> = std::thread::scope(|s| {
        let hs: Vec<_> = UNITS
            .iter()
            .enumerate()
            .map(|(i, u)| {
                let run = which[i];
                s.spawn(move || -> Result<Option<UnitReport>> {
                    if !run {
                        return Ok(None);
                    }
                    let top = u.module_name();
                    let unit = hdl::unit::find(described, top, &rtl.join("params.json"))?;
                    let v = rtl.join(format!("{top}.v"));
                    Ok(Some(flow::run_unit(&v, unit, lib, &out.join(top), opts)?))
                })
            })
            .collect();
        hs.into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("synthesis thread panicked")))
            })
            .collect()
    });
    let mut it = results.into_iter();
    let a = it.next().unwrap_or(Ok(None))?;
    let b = it.next().unwrap_or(Ok(None))?;
    Ok([a, b])
}

/// Area vs number of predictors (truncating/duplicating those of --model)
/// and selection rule.
fn scaling(cli: &Cli, lib: &Liberty) -> Result<()> {
    let base =
        ModelSet::load(&cli.model).with_context(|| format!("loading {}", cli.model.display()))?;
    if base.predictors.is_empty() {
        bail!("{} has no predictors", cli.model.display());
    }
    let root = cli.build.join("scaling");
    let mut rows = Vec::new();
    let mut json = Vec::new();
    for &n in &cli.counts {
        if n == 0 {
            bail!("--counts: 0 predictors is not a model set");
        }
        for sel in [Selection::ZeroRun, Selection::Exact] {
            let mut set = base.clone();
            set.selection = sel;
            set.predictors = (0..n)
                .map(|i| {
                    let mut p = base.predictors[i % base.predictors.len()].clone();
                    if i >= base.predictors.len() {
                        p.name = format!("{}-copy{}", p.name, i / base.predictors.len());
                    }
                    p
                })
                .collect();
            set.name = format!("scale-{}-{n}", sel);
            let dir = root.join(&set.name);
            let header = vec![format!(
                "Scaling study: {} predictors of {}, selection {sel}",
                n, base.name
            )];
            let config = MpcConfig {
                set,
                sha256: String::new(),
                model_file: String::new(),
                options: Default::default(),
            };
            let (files, described) = hdl::family::generate(&config, &UNITS, &header)?;
            let set = config.set;
            hdl::ir::write_files(&dir, &files)
                .with_context(|| format!("writing {}", dir.display()))?;
            // The decompressor does not depend on the selection rule: synthesise it once per count.
            let which = [true, sel == Selection::ZeroRun];
            let spinner = datafiles::progress::spinner(&format!("synth: {}", set.name));
            let r = run_units(
                &dir,
                &dir.join("synth"),
                lib,
                Options::AREA_ONLY,
                which,
                &described,
            );
            spinner.finish_and_clear();
            let r = r?;
            let c = r[0]
                .as_ref()
                .map(|r| (r.nand2_eq, r.flops, r.transistors_div4));
            let d = r[1]
                .as_ref()
                .map(|r| (r.nand2_eq, r.flops, r.transistors_div4));
            rows.push((n, set.id_count(), sel, c, d));
            json.push(serde_json::json!({"predictors": n, "model_ids": set.id_count(), "selection": sel.to_string(),
                "compressor": r[0], "decompressor": r[1]}));
        }
    }
    let mut md = format!(
        "# Area vs number of predictors and selection rule\n\nPredictors taken in order from `{}` \
         (repeated with new names beyond {}); zero-block and same-words custom models always on. Area-only runs \
         (`synth -flatten; dfflibmap; abc -liberty`), NAND2-eq of `{}`.\n\n\
         | predictors | model IDs | selection | compressor NAND2-eq | flops | comb | T/4 | decompressor NAND2-eq | flops | T/4 |\n\
         |---:|---:|---|---:|---:|---:|---:|---:|---:|---:|\n",
        cli.model.display(),
        base.predictors.len(),
        lib.nand2.0
    );
    for (n, ids, sel, c, d) in &rows {
        let comb = json
            .iter()
            .find(|j| j["predictors"] == *n && j["selection"] == sel.to_string())
            .and_then(|j| j["compressor"]["comb_nand2"].as_f64())
            .unwrap_or(0.0);
        let cs = c.map_or("– | – | – | –".to_string(), |(a, fl, t)| {
            format!("{a:.0} | {fl} | {comb:.0} | {:.0}", t.unwrap_or(0.0))
        });
        let ds = d.map_or("(as zero-run) | | ".to_string(), |(a, fl, t)| {
            format!("{a:.0} | {fl} | {:.0}", t.unwrap_or(0.0))
        });
        md.push_str(&format!("| {n} | {ids} | {sel} | {cs} | {ds} |\n"));
    }
    write(&root.join("report.md"), &md)?;
    write(
        &root.join("report.json"),
        &serde_json::to_string_pretty(&json)?,
    )?;
    print!("{md}");
    wrote(&root.join("report.md"));
    wrote(&root.join("report.json"));
    Ok(())
}
