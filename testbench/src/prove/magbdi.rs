//! Proving the generated MAG-aware BDI units (docs/hw/formal.md, "MAG-aware
//! BDI"), on their combinational views as the MPC proof builds them:
//!
//! * Round trip: for every block `x`, the decompressor's `out_block` on the
//!   compressor's `{out_enc, out_data}` (wired as the loopback
//!   co-simulation wires them: `out_enc` to `in_enc`, `out_data` to
//!   `in_data`) is `x`, with `out_error` 0.
//! * Depth variant: the compressor of the other depth (2 stages against 1,
//!   or 1 against 2) computes the same `out_enc` and `out_data` on every
//!   block.
//!
//! A round-trip counterexample is written as a corpus file of one block
//! that `cosim magbdi --unit loopback --corpus FILE` replays.

use std::path::{Path, PathBuf};

use golden::magbdi::{Params, Table};

use super::units::{self, UnitsReport, TIES};
use super::{Check, Outcome, ProveError};

/// What to prove.
#[derive(Clone, Debug)]
pub struct BdiProve {
    pub params: Params,
    /// Stages of the compressor under proof (1 or 2).
    pub compressor_stages: usize,
    /// Units to prove instead of generating them (their `.v` files).
    pub rtl: Option<PathBuf>,
    /// Root of the work directories (`<build>/bdi-.../prove`).
    pub build: PathBuf,
    /// ABC's time per check, in seconds.
    pub seconds: u32,
    /// Prove the round trips.
    pub round_trip: bool,
    /// Prove the depth variants.
    pub depths: bool,
    /// Prove each unit's pipeline control (and the depth variant's).
    pub control: bool,
}

const COMP: &str = "bdi_compressor";
const DEC: &str = "bdi_decompressor";

/// The configuration in the words of `cosim magbdi`'s options.
fn options(cfg: &BdiProve) -> String {
    let p = &cfg.params;
    format!(
        "--block {} --mag {} --base {} --mode {} --compressor-stages {}",
        p.block_bytes, p.mag_bytes, p.base_bytes, p.mode, cfg.compressor_stages
    )
}

/// The miters of the round trip and of the depth variant.
fn wrappers(block_bits: usize, enc_bits: u32) -> String {
    let b1 = block_bits - 1;
    let e1 = enc_bits - 1;
    format!(
        "// Miters of the combinational views, for the proof of the MAG-aware\n\
         // BDI units: not design files.\n\
         module round_trip(input [{b1}:0] x, output bad);\n\
         \x20 wire [{e1}:0] enc; wire [{b1}:0] d; wire [{b1}:0] y; wire e;\n\
         \x20 {COMP} comp({TIES}, .in_block(x), .out_enc(enc), .out_data(d));\n\
         \x20 {DEC} dec({TIES}, .in_enc(enc), .in_data(d), .out_block(y), .out_error(e));\n\
         \x20 assign bad = (y != x) | e;\n\
         endmodule\n\
         module depth_compressor(input [{b1}:0] x, output bad);\n\
         \x20 wire [{e1}:0] ea, eb; wire [{b1}:0] da, db;\n\
         \x20 unit_a a({TIES}, .in_block(x), .out_enc(ea), .out_data(da));\n\
         \x20 unit_b b({TIES}, .in_block(x), .out_enc(eb), .out_data(db));\n\
         \x20 assign bad = (ea != eb) | (da != db);\n\
         endmodule\n"
    )
}

fn generate(cfg: &BdiProve, stages: usize, dir: &Path) -> Result<Vec<PathBuf>, ProveError> {
    let stages = hdl::magbdi::Stages {
        compressor: stages,
        decompressor: hdl::magbdi::LATENCY,
    };
    let paths = hdl::magbdi::write_units_staged(
        cfg.params,
        stages,
        dir,
        &hdl::magbdi::UNITS,
        &format!("cosim prove magbdi {}", options(cfg)),
    )
    .map_err(|e| ProveError::Generate {
        what: format!("MAG-aware BDI units ({})", options(cfg)),
        model: dir.to_path_buf(),
        message: e.to_string(),
    })?;
    Ok(paths
        .into_iter()
        .filter(|p| p.extension().is_some_and(|x| x == "v"))
        .collect())
}

/// Prove the MAG-aware BDI units ([`BdiProve`]); `progress` gets a line as
/// each check starts.
pub fn prove_magbdi(cfg: &BdiProve, progress: &dyn Fn(&str)) -> Result<UnitsReport, ProveError> {
    let p = cfg.params;
    let table = Table::new(p).map_err(|e| ProveError::Generate {
        what: format!("MAG-aware BDI units ({})", options(cfg)),
        model: PathBuf::new(),
        message: e.to_string(),
    })?;
    let mut name = hdl::magbdi::config_name(&p);
    name.push_str(&format!("-c{}", cfg.compressor_stages));
    let work = units::work_dir(
        &cfg.build.join(&name).join("prove"),
        &wrappers(8 * p.block_bytes, table.encoding_bits()),
    )?;
    let (rtl_dir, generated) = match &cfg.rtl {
        Some(d) => (d.clone(), None),
        None => {
            progress("generating the units");
            let d = work.join("rtl");
            let f = generate(cfg, cfg.compressor_stages, &d)?;
            (d, Some(f))
        }
    };
    let files = units::unit_files(&rtl_dir, generated.as_deref(), &[COMP, DEC])?;
    let mut report = UnitsReport {
        design: "magbdi".into(),
        config: format!(
            "block {} MAG {} base {} {}, compressor stages {}",
            p.block_bytes, p.mag_bytes, p.base_bytes, p.mode, cfg.compressor_stages
        ),
        rtl_dir,
        work: work.clone(),
        checks: Vec::new(),
        notes: Vec::new(),
        counterexamples: Vec::new(),
        partial: false,
        control_schedules: Vec::new(),
    };
    if cfg.control {
        let pairs = [(COMP, files[0].as_path()), (DEC, files[1].as_path())];
        units::control(&mut report, &pairs, &work, cfg.seconds, None, progress)?;
    }
    if cfg.round_trip {
        progress("round trip: the whole miter");
        let (outcome, seconds) = units::miter(&work, &files, "round_trip", cfg.seconds)?;
        if let Outcome::Counterexample(ports) = &outcome {
            let block = units::bytes_of(ports, "x", p.block_bytes);
            let opts = options(cfg);
            report.counterexamples.push(units::write_counterexample(
                &work,
                "round_trip",
                "round trip",
                block,
                None,
                |corpus| {
                    format!(
                        "cosim magbdi {opts} --unit loopback --corpus {} --blocks 1000 \
                         (co-simulates the generated units, not --rtl)",
                        corpus.display()
                    )
                },
            )?);
        }
        report.checks.push(Check {
            name: "round trip".into(),
            statement: "for all x: decompress(compress(x)) = x, out_error 0".into(),
            outcome,
            seconds,
        });
    }
    if cfg.depths || cfg.control {
        let other = if cfg.compressor_stages == 1 { 2 } else { 1 };
        progress(&format!("depth variant: the {other}-stage compressor"));
        let dir = work.join(format!("depth-c{other}"));
        let variant = generate(cfg, other, &dir)?;
        let variant = units::unit_files(&dir, Some(&variant), &[COMP])?;
        if cfg.control {
            units::control(
                &mut report,
                &[(COMP, variant[0].as_path())],
                &dir,
                cfg.seconds,
                Some(&format!("variant, {other} stages")),
                progress,
            )?;
        }
        if !cfg.depths {
            return Ok(report);
        }
        let (outcome, seconds) = units::depth(
            &work,
            &files[0],
            &variant[0],
            COMP,
            "compressor",
            &format!("depth_compressor_{other}"),
            cfg.seconds,
        )?;
        report.checks.push(Check {
            name: format!("compressor {other} stages"),
            statement: format!(
                "the {other}-stage compressor's view equals the view of the compressor under proof \
                 ({} stage{}) on every block: out_enc, out_data",
                cfg.compressor_stages,
                if cfg.compressor_stages == 1 { "" } else { "s" }
            ),
            outcome,
            seconds,
        });
    }
    Ok(report)
}

/// `cosim prove magbdi ...`: prove, print the report and, last, `cosim
/// prove: proven` or what failed or stayed undecided; whether everything
/// was proven.
pub fn run_cli(cfg: &BdiProve) -> anyhow::Result<bool> {
    let report = prove_magbdi(cfg, &|what| eprintln!("cosim prove: {what}..."))?;
    print!("{}", report.render());
    println!("cosim prove: {}", report.last_line());
    Ok(report.proven())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wrappers_wire_the_loopback_and_the_depth_miter() {
        let v = wrappers(256, 2);
        assert!(v.contains("module round_trip(input [255:0] x, output bad);"));
        assert!(v.contains(".in_enc(enc), .in_data(d)"));
        assert!(v.contains("wire [1:0] enc;"));
        assert!(v.contains("module depth_compressor("));
        assert!(v.contains("assign bad = (y != x) | e;"));
    }
}
