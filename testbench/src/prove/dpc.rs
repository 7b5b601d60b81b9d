//! Proving the generated DPC units (docs/hw/formal.md, "DPC"), on their
//! combinational views as the MPC proof builds them. With `zf(x, M)` the
//! block `x` with its non-critical sectors (mask bit 0) zeroed:
//!
//! * Plain: for every block `x`, the plain decompressor's `out_block` on
//!   the plain compressor's `{out_bits, out_len}` is `x`, `out_error` 0.
//! * DF-MAN: for every block `x` and every mask `M`, the plain
//!   decompressor on the DF-MAN compressor's packet gives `zf(x, M)` when
//!   `out_manipulated` is 1 and `x` when it is 0, with `out_error` 0; so
//!   the critical sectors are `x`'s either way (docs/spec/dpc.md, DF-MAN).
//! * DF-TRUC: for every block `x` and every mask `M`, the DF-TRUC
//!   decompressor on the DF-TRUC compressor's packet gives `zf(x, M)` and
//!   `out_mask = M`, `out_error` 0: the critical sectors exactly,
//!   non-critical ones as zeros (docs/spec/dpc.md, DF-TRUC).
//! * Depth variants: the plain and DF-TRUC decompressors of the other
//!   depth (3 stages against 2, or 2 against 3) compute the same
//!   `out_block`, `out_error` (and `out_mask`) on every input, malformed
//!   packets and lengths included.
//!
//! The compressors' packets go to the decompressors as the loopback of
//! the golden model sends them: `out_bits` to `in_bits`, `out_len` to
//! `in_len`. A round-trip counterexample (a block and a mask) is written
//! as a corpus file of one block that `cosim dpc --corpus FILE` replays.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use golden::dpc::{DpcParams, Mode};
use hdl::dpc::{len_width, packet_width};

use super::units::{self, UnitsReport, TIES};
use super::{Check, Outcome, ProveError};

/// What to prove.
#[derive(Clone, Debug)]
pub struct DpcProve {
    pub params: DpcParams,
    /// Stages of the decompressors under proof (2 or 3).
    pub decompressor_stages: usize,
    /// Units to prove instead of generating them (their `.v` files).
    pub rtl: Option<PathBuf>,
    /// Root of the work directories (`<build>/dpc-.../prove`).
    pub build: PathBuf,
    /// ABC's time per check, in seconds.
    pub seconds: u32,
    /// ABC's time for a whole DF-MAN or DF-TRUC miter before the proof
    /// goes on by cases of the mask (at most [`MAX_SPLIT_SECTORS`] mask
    /// bits; with more, the whole miter gets `seconds`); 0: by cases at
    /// once.
    pub whole_seconds: u32,
    /// Prove the round trips.
    pub round_trip: bool,
    /// When not empty: only the round trips of these miters
    /// (`round_trip_plain`, `round_trip_man`, `round_trip_truc`), without
    /// the depth variants; not a proof of the units.
    pub only: Vec<String>,
    /// Prove the depth variants.
    pub depths: bool,
    /// Prove each unit's pipeline control (and each depth variant's).
    pub control: bool,
}

/// The most mask bits whose masks the proof takes one by one when a
/// whole masked miter is not decided (64 cases).
pub const MAX_SPLIT_SECTORS: usize = 6;

const COMP: &str = "dpc_compressor";
const TRUC_COMP: &str = "dpc_truc_compressor";
const MAN_COMP: &str = "dpc_man_compressor";
const DEC: &str = "dpc_decompressor";
const TRUC_DEC: &str = "dpc_truc_decompressor";

/// The configuration in the words of `cosim dpc`'s options.
fn options(cfg: &DpcProve) -> String {
    let p = &cfg.params;
    format!(
        "--block {} --segment {} --sector {} --decompressor-stages {}",
        p.block_bytes(),
        p.segment_bytes(),
        p.sector_bytes(),
        cfg.decompressor_stages
    )
}

/// One round trip: its miter module, name, units and statement.
struct Trip {
    top: &'static str,
    name: &'static str,
    units: [&'static str; 2],
    /// The module has a mask input `m`.
    mask: bool,
    statement: &'static str,
    /// The `cosim dpc --unit` list that replays its counterexample.
    replay_units: &'static str,
}

const TRIPS: [Trip; 3] = [
    Trip {
        top: "round_trip_plain",
        name: "round trip plain",
        units: [COMP, DEC],
        mask: false,
        statement: "for all x: decompress(compress(x)) = x, out_error 0",
        replay_units: "compressor,decompressor",
    },
    Trip {
        top: "round_trip_man",
        name: "round trip DF-MAN",
        units: [MAN_COMP, DEC],
        mask: true,
        statement:
            "for all x, M: decompress(man(x, M)) = (out_manipulated ? zf(x, M) : x), out_error 0 \
                    (the critical sectors of x either way)",
        replay_units: "man-compressor,decompressor",
    },
    Trip {
        top: "round_trip_truc",
        name: "round trip DF-TRUC",
        units: [TRUC_COMP, TRUC_DEC],
        mask: true,
        statement:
            "for all x, M: truc_decompress(truc(x, M)) = zf(x, M) (the critical sectors of x, \
                    zeros elsewhere), out_mask = M, out_error 0",
        replay_units: "truc-compressor,truc-decompressor",
    },
];

/// The miters of the round trips and of the depth variants.
fn wrappers(p: &DpcParams) -> String {
    let b1 = 8 * p.block_bytes() - 1;
    let k = p.sectors();
    let k1 = k - 1;
    let sector_bits = 8 * p.sector_bytes();
    let pw1 = packet_width(p, Mode::Plain) - 1;
    let lw1 = len_width(p, Mode::Plain) - 1;
    let tw1 = packet_width(p, Mode::Truc) - 1;
    let tl1 = len_width(p, Mode::Truc) - 1;
    // the mask spread over the block's bits: sector k = bits
    // [k*sector_bits, (k+1)*sector_bits)
    let spread = (0..k)
        .rev()
        .map(|i| format!("{{{sector_bits}{{m[{i}]}}}}"))
        .collect::<Vec<_>>()
        .join(", ");
    let mut v = String::from(
        "// Miters of the combinational views, for the proof of the DPC units:\n\
         // not design files.\n",
    );
    let _ = write!(
        v,
        "module round_trip_plain(input [{b1}:0] x, output bad);\n\
         \x20 wire [{pw1}:0] c_bits; wire [{lw1}:0] c_len; wire [{b1}:0] y; wire e;\n\
         \x20 {COMP} comp({TIES}, .in_block(x), .out_bits(c_bits), .out_len(c_len));\n\
         \x20 {DEC} dec({TIES}, .in_bits(c_bits), .in_len(c_len), .out_block(y), .out_error(e));\n\
         \x20 assign bad = (y != x) | e;\n\
         endmodule\n\
         module round_trip_man(input [{b1}:0] x, input [{k1}:0] m, output bad);\n\
         \x20 wire [{pw1}:0] c_bits; wire [{lw1}:0] c_len; wire man; wire [{b1}:0] y; wire e;\n\
         \x20 wire [{b1}:0] keep = {{{spread}}};\n\
         \x20 {MAN_COMP} comp({TIES}, .in_block(x), .in_mask(m), .out_bits(c_bits), .out_len(c_len), .out_manipulated(man));\n\
         \x20 {DEC} dec({TIES}, .in_bits(c_bits), .in_len(c_len), .out_block(y), .out_error(e));\n\
         \x20 assign bad = e | (y != (man ? (x & keep) : x)) | ((y & keep) != (x & keep));\n\
         endmodule\n\
         module round_trip_truc(input [{b1}:0] x, input [{k1}:0] m, output bad);\n\
         \x20 wire [{tw1}:0] c_bits; wire [{tl1}:0] c_len; wire [{b1}:0] y; wire e; wire [{k1}:0] om;\n\
         \x20 wire [{b1}:0] keep = {{{spread}}};\n\
         \x20 {TRUC_COMP} comp({TIES}, .in_block(x), .in_mask(m), .out_bits(c_bits), .out_len(c_len));\n\
         \x20 {TRUC_DEC} dec({TIES}, .in_bits(c_bits), .in_len(c_len), .out_block(y), .out_error(e), .out_mask(om));\n\
         \x20 assign bad = e | (y != (x & keep)) | (om != m);\n\
         endmodule\n\
         module depth_decompressor(input [{pw1}:0] bits, input [{lw1}:0] len, output bad);\n\
         \x20 wire [{b1}:0] ya, yb; wire ea, eb;\n\
         \x20 unit_a a({TIES}, .in_bits(bits), .in_len(len), .out_block(ya), .out_error(ea));\n\
         \x20 unit_b b({TIES}, .in_bits(bits), .in_len(len), .out_block(yb), .out_error(eb));\n\
         \x20 assign bad = (ya != yb) | (ea != eb);\n\
         endmodule\n\
         module depth_truc_decompressor(input [{tw1}:0] bits, input [{tl1}:0] len, output bad);\n\
         \x20 wire [{b1}:0] ya, yb; wire ea, eb; wire [{k1}:0] ma, mb;\n\
         \x20 unit_a a({TIES}, .in_bits(bits), .in_len(len), .out_block(ya), .out_error(ea), .out_mask(ma));\n\
         \x20 unit_b b({TIES}, .in_bits(bits), .in_len(len), .out_block(yb), .out_error(eb), .out_mask(mb));\n\
         \x20 assign bad = (ya != yb) | (ea != eb) | (ma != mb);\n\
         endmodule\n"
    );
    // the masked round trips for each mask, as cases of the proof
    if k <= MAX_SPLIT_SECTORS {
        for t in TRIPS.iter().filter(|t| t.mask) {
            for m in 0..1u32 << k {
                let _ = write!(
                    v,
                    "module {top}_m{m}(input [{b1}:0] x, output bad);\n\
                     \x20 {top} t(.x(x), .m({k}'d{m}), .bad(bad));\n\
                     endmodule\n",
                    top = t.top
                );
            }
        }
    }
    v
}

fn generate(cfg: &DpcProve, stages: usize, dir: &Path) -> Result<Vec<PathBuf>, ProveError> {
    let gen_err = |message: String| ProveError::Generate {
        what: format!("DPC units ({})", options(cfg)),
        model: dir.to_path_buf(),
        message,
    };
    let staged = hdl::dpc::Staged::new(cfg.params, stages).map_err(|e| gen_err(e.to_string()))?;
    let paths = hdl::family::write_units(
        &staged,
        dir,
        &hdl::dpc::UNITS,
        &format!("cosim prove dpc {}", options(cfg)),
    )
    .map_err(|e| gen_err(e.to_string()))?;
    Ok(paths
        .into_iter()
        .filter(|p| p.extension().is_some_and(|x| x == "v"))
        .collect())
}

/// Prove the DPC units ([`DpcProve`]); `progress` gets a line as each
/// check starts.
pub fn prove_dpc(cfg: &DpcProve, progress: &dyn Fn(&str)) -> Result<UnitsReport, ProveError> {
    let p = cfg.params;
    let mut name = crate::dpc::config_name(&p);
    name.push_str(&format!("-d{}", cfg.decompressor_stages));
    let work = units::work_dir(&cfg.build.join(&name).join("prove"), &wrappers(&p))?;
    let (rtl_dir, generated) = match &cfg.rtl {
        Some(d) => (d.clone(), None),
        None => {
            progress("generating the units");
            let d = work.join("rtl");
            let f = generate(cfg, cfg.decompressor_stages, &d)?;
            (d, Some(f))
        }
    };
    let mut report = UnitsReport {
        design: "dpc".into(),
        config: format!(
            "block {} segment {} sector {}, decompressor stages {}",
            p.block_bytes(),
            p.segment_bytes(),
            p.sector_bytes(),
            cfg.decompressor_stages
        ),
        rtl_dir: rtl_dir.clone(),
        work: work.clone(),
        checks: Vec::new(),
        notes: Vec::new(),
        counterexamples: Vec::new(),
        partial: !cfg.only.is_empty(),
        control_schedules: Vec::new(),
    };
    if let Some(o) = cfg.only.iter().find(|o| !TRIPS.iter().any(|t| t.top == *o)) {
        return Err(ProveError::Units {
            dir: work.clone(),
            what: format!(
                "no round trip `{o}` (round_trip_plain, round_trip_man, round_trip_truc)"
            ),
        });
    }
    if !cfg.only.is_empty() {
        report.notes.push(format!(
            "only the round trips asked for: {}",
            cfg.only.join(", ")
        ));
    }
    if cfg.control && cfg.only.is_empty() {
        let modules = [COMP, TRUC_COMP, MAN_COMP, DEC, TRUC_DEC];
        let files = units::unit_files(&rtl_dir, generated.as_deref(), &modules)?;
        let pairs: Vec<(&str, &Path)> = modules
            .iter()
            .copied()
            .zip(files.iter().map(PathBuf::as_path))
            .collect();
        units::control(&mut report, &pairs, &work, cfg.seconds, None, progress)?;
    }
    let wanted = |t: &&Trip| cfg.only.is_empty() || cfg.only.iter().any(|o| o == t.top);
    if cfg.round_trip {
        for t in TRIPS.iter().filter(wanted) {
            progress(&format!("{}: the whole miter", t.name));
            let files = units::unit_files(&rtl_dir, generated.as_deref(), &t.units)?;
            let split = t.mask && p.sectors() <= MAX_SPLIT_SECTORS;
            let limit = if split {
                cfg.whole_seconds
            } else {
                cfg.seconds
            };
            let (outcome, seconds) = if split && limit == 0 {
                (
                    Outcome::Undecided("no time given to the whole miter".into()),
                    0.0,
                )
            } else {
                units::miter(&work, &files, t.top, limit)?
            };
            let cases: Vec<(Option<u32>, Outcome, f64)> = match outcome {
                Outcome::Undecided(why) if split => {
                    // every value of the K-bit mask, one case each: together
                    // they are the statement for every mask
                    report.notes.push(format!(
                        "{} ({}): not decided whole in {seconds:.1} s ({}); by cases of the mask:",
                        t.name,
                        t.statement,
                        super::one_line(&why)
                    ));
                    progress(&format!("{}: by cases of the mask", t.name));
                    let tops: Vec<String> = (0..1u32 << p.sectors())
                        .map(|m| format!("{}_m{m}", t.top))
                        .collect();
                    let stem = format!("{}_cases", t.top);
                    units::miters(&work, &files, "wrappers.v", &stem, &tops, cfg.seconds)?
                        .into_iter()
                        .enumerate()
                        .map(|(m, (o, s))| (Some(m as u32), o, s))
                        .collect()
                }
                o => vec![(None, o, seconds)],
            };
            for (case, outcome, seconds) in cases {
                let (name, statement) = match case {
                    None => (t.name.to_string(), t.statement.to_string()),
                    Some(m) => (
                        format!("{}, mask {m:#x}", t.name),
                        format!("{}, for M = {m:#x}", t.statement),
                    ),
                };
                if let Outcome::Counterexample(ports) = &outcome {
                    let block = units::bytes_of(ports, "x", p.block_bytes());
                    let mask = case.or_else(|| t.mask.then(|| units::uint_of(ports, "m")));
                    let opts = options(cfg);
                    let stem = match case {
                        None => t.top.to_string(),
                        Some(m) => format!("{}_m{m}", t.top),
                    };
                    report.counterexamples.push(units::write_counterexample(
                        &work,
                        &stem,
                        &name,
                        block,
                        mask,
                        |corpus| {
                            format!(
                                "cosim dpc {opts} --unit {} --corpus {} --blocks 1000 \
                                 (co-simulates the generated units, not --rtl; each unit runs \
                                 the block under every mask)",
                                t.replay_units,
                                corpus.display()
                            )
                        },
                    )?);
                }
                report.checks.push(Check {
                    name,
                    statement,
                    outcome,
                    seconds,
                });
            }
        }
    }
    if (cfg.depths || cfg.control) && cfg.only.is_empty() {
        let other = if cfg.decompressor_stages == 2 { 3 } else { 2 };
        let dir = work.join(format!("depth-d{other}"));
        progress(&format!(
            "depth variants: generating the {other}-stage units"
        ));
        let variant = generate(cfg, other, &dir)?;
        for (module, unit) in [(DEC, "decompressor"), (TRUC_DEC, "truc_decompressor")] {
            progress(&format!("depth variants: the {other}-stage {module}"));
            let under = units::unit_files(&rtl_dir, generated.as_deref(), &[module])?;
            let var = units::unit_files(&dir, Some(&variant), &[module])?;
            if cfg.control {
                units::control(
                    &mut report,
                    &[(module, var[0].as_path())],
                    &dir,
                    cfg.seconds,
                    Some(&format!("variant, {other} stages")),
                    progress,
                )?;
            }
            if !cfg.depths {
                continue;
            }
            let (outcome, seconds) = units::depth(
                &work,
                &under[0],
                &var[0],
                module,
                unit,
                &format!("depth_{unit}_{other}"),
                cfg.seconds,
            )?;
            report.checks.push(Check {
                name: format!("{} {other} stages", unit.replace('_', " ")),
                statement: format!(
                    "the {other}-stage {module}'s view equals the view of the one under proof \
                     ({} stages) on every input (malformed packets included): out_block, \
                     out_error{}",
                    cfg.decompressor_stages,
                    if module == TRUC_DEC { ", out_mask" } else { "" }
                ),
                outcome,
                seconds,
            });
        }
    }
    Ok(report)
}

/// `cosim prove dpc ...`: prove, print the report and, last, `cosim
/// prove: proven` or what failed or stayed undecided; whether everything
/// was proven.
pub fn run_cli(cfg: &DpcProve) -> anyhow::Result<bool> {
    let report = prove_dpc(cfg, &|what| eprintln!("cosim prove: {what}..."))?;
    print!("{}", report.render());
    println!("cosim prove: {}", report.last_line());
    Ok(report.proven())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wrappers_spread_the_mask_over_its_sectors() {
        let p = DpcParams::new(16, 4, 4).expect("a geometry");
        let v = wrappers(&p);
        assert!(
            v.contains("wire [127:0] keep = {{32{m[3]}}, {32{m[2]}}, {32{m[1]}}, {32{m[0]}}};"),
            "{v}"
        );
        for m in [
            "module round_trip_plain(",
            "module round_trip_man(",
            "module round_trip_truc(",
            "module depth_decompressor(",
            "module depth_truc_decompressor(",
        ] {
            assert!(v.contains(m), "{m}");
        }
    }
}
