//! Co-simulation of the MAG-aware BDI units (`hdl::magbdi`, docs/hw/mag-bdi.md)
//! against `golden::magbdi` on Icarus and Verilator. What is particular to
//! the family is here: the vectors, the port layout of the vector and
//! output buses (`tb/bdi_tb.sv`) and the golden check; the run is the
//! shared one of every unit ([`stream_unit::run_unit`]: the driver
//! `tb/stream_driver.svh`, the seeded stall/backpressure/reset schedule,
//! the one record parser and the checks of every run).

use std::path::{Path, PathBuf};

use golden::magbdi::{MagBdi, Params};

use crate::rng::Rng;
use crate::schedule::ScheduleConfig;
use crate::sim::CxxOpt;
use crate::stream_unit::{self, LeBus, StreamError, StreamReport, StreamTarget, TbSpec, UnitRun};
use crate::{Simulator, Unit};

/// The testbench.
pub const TB_SOURCE: &str = include_str!("../tb/bdi_tb.sv");

/// Why a BDI co-simulation could not run.
#[derive(Debug, thiserror::Error)]
pub enum MagBdiSimError {
    #[error(transparent)]
    Gen(#[from] hdl::GenError),
    #[error(transparent)]
    Stream(#[from] StreamError),
    #[error(transparent)]
    Vectors(#[from] crate::vectors::VectorError),
    #[error(transparent)]
    Params(#[from] golden::magbdi::MagBdiError),
    #[error(transparent)]
    Units(#[from] hdl::unit::UnitsError),
    #[error("mutation testing covers the compressor and the decompressor, not the loopback")]
    Loopback,
}

/// One co-simulation run.
#[derive(Clone, Debug)]
pub struct MagBdiConfig {
    pub params: Params,
    /// Pipeline stages of the compressor (`hdl::magbdi::Stages`).
    pub compressor_stages: usize,
    pub sims: Vec<Simulator>,
    pub units: Vec<Unit>,
    pub blocks: usize,
    pub seed: u64,
    pub corpus: Option<PathBuf>,
    pub stall: f64,
    pub resets: usize,
    /// Root of the work directories (`<build>/<config name>/`).
    pub build: PathBuf,
}

/// The compressor's default depth (the decompressor has one).
pub const DEFAULT_STAGES: usize = hdl::magbdi::LATENCY;

/// Test blocks: corner cases (zeros, ones, every value equal to the base,
/// deltas exactly at and one past each width's limit, on both bases, both
/// signs; every position of the first value the zero base cannot cover, for
/// every delta width), then corpus runs (half of the rest, when a corpus is given), then
/// random structured blocks; shuffled.
pub fn blocks(
    codec: &MagBdi,
    n: usize,
    seed: u64,
    corpus: Option<&Path>,
) -> Result<Vec<Vec<u8>>, crate::vectors::VectorError> {
    let p = *codec.params();
    let bb = p.block_bytes;
    let k = p.base_bytes;
    let nv = p.values();
    let wmask = if k == 8 {
        u64::MAX
    } else {
        (1u64 << (8 * k)) - 1
    };
    let words = |w: &[u64]| -> Vec<u8> {
        w.iter()
            .flat_map(|x| x.to_le_bytes()[..k].to_vec())
            .collect()
    };
    let mut rng = Rng::new(seed);
    let mut corner = vec![vec![0u8; bb], vec![0xff; bb]];
    for base in [
        0x8000_0000_0000_0000u64 >> (64 - 8 * k),
        0x1234_5678_9abc_def0 & wmask,
        5,
    ] {
        corner.push(words(&vec![base; nv]));
        for s in &codec.table().sizes {
            let d = s.delta_bits;
            for off in [
                (1u64 << d) - 1,
                1u64 << d,
                (1u64 << (d - 1)) - 1,
                1u64 << (d - 1),
                (1u64 << (d - 1)).wrapping_neg(),
                (1u64 << (d - 1)).wrapping_neg().wrapping_sub(1),
                u64::MAX,
            ] {
                let at = rng.below(nv as u64) as usize;
                let mut w = vec![base; nv];
                w[at] = base.wrapping_add(off) & wmask;
                corner.push(words(&w));
                let mut z = vec![0u64; nv];
                z[at] = off & wmask;
                z[(at + 1) % nv] = base;
                corner.push(words(&z));
            }
        }
    }
    // every position j of the first value the zero base cannot cover, for
    // every delta width: values before j fit the zero base (signed: from
    // the negative and the positive part, alternately; the one just
    // before j at one of its limits), value j is the base (one past one of
    // the zero base's limits for even j), the values after j fit the base's
    // delta field or the zero base, the last of them at one of the field's
    // limits; then the same block with one value after j one past it. A
    // signed field has two limits, `2^(d-1) - 1` and `-2^(d-1)`; an unsigned
    // one has `2^d - 1` and 0 (nothing lies one past 0 that would fit)
    let signed = p.mode == golden::magbdi::DeltaMode::Signed;
    let top = 1u64 << (8 * k - 1);
    let mut widths: Vec<u32> = codec.table().sizes.iter().map(|s| s.delta_bits).collect();
    widths.dedup();
    // (low, high) ends of a d-bit field, modulo 2^(8k); `fit` draws from it
    let ends = |d: u32| -> (u64, u64) {
        if signed {
            (
                (1u64 << (d - 1)).wrapping_neg() & wmask,
                (1u64 << (d - 1)) - 1,
            )
        } else {
            (0, (1u64 << d) - 1)
        }
    };
    let fit = |rng: &mut Rng, d: u32| -> u64 {
        let (lo, hi) = ends(d);
        lo.wrapping_add(rng.below(hi.wrapping_sub(lo).wrapping_add(1) & wmask)) & wmask
    };
    // from the negative part of a signed field, or from its other part
    let fit_side = |rng: &mut Rng, d: u32, neg: bool| -> u64 {
        let (lo, hi) = ends(d);
        if signed && neg {
            lo.wrapping_add(rng.below(1u64 << (d - 1))) & wmask
        } else if signed {
            rng.below(hi + 1)
        } else {
            fit(rng, d)
        }
    };
    // the limit and the value one past it: the high end, or (signed only)
    // the low end, by `neg`
    let limit = |d: u32, neg: bool| -> (u64, u64) {
        let (lo, hi) = ends(d);
        if neg && signed {
            (lo, lo.wrapping_sub(1) & wmask)
        } else {
            (hi, hi + 1)
        }
    };
    for &d in &widths {
        for j in 0..nv {
            let neg = (j / 2) % 2 == 1;
            let base = if j % 2 == 0 {
                limit(d, neg).1
            } else {
                (rng.next_u64() | top) & wmask
            };
            let mut w: Vec<u64> = (0..nv)
                .map(|i| match i.cmp(&j) {
                    std::cmp::Ordering::Less => fit_side(&mut rng, d, (i + j) % 2 == 0),
                    std::cmp::Ordering::Equal => base,
                    std::cmp::Ordering::Greater if rng.chance(0.5) => fit(&mut rng, d),
                    std::cmp::Ordering::Greater => base.wrapping_add(fit(&mut rng, d)) & wmask,
                })
                .collect();
            if j > 0 {
                // the low end for odd j: the last position (nv is even)
                // has no other block with a negative value before it
                w[j - 1] = limit(d, j % 2 == 1).0;
            }
            if j + 1 < nv {
                let (at_limit, past) = limit(d, rng.chance(0.5));
                w[nv - 1] = base.wrapping_add(at_limit) & wmask;
                corner.push(words(&w));
                let at = j + 1 + rng.below((nv - j - 1) as u64) as usize;
                w[at] = base.wrapping_add(past) & wmask;
            }
            corner.push(words(&w));
        }
    }
    // every position i > 0 of a base-relative value at each limit of the
    // field and one past it, value 0 the base, the others fitting the zero
    // base: the unit fits, or fails at exactly i
    for &d in &widths {
        for i in 1..nv {
            for neg in if signed {
                &[false, true][..]
            } else {
                &[false][..]
            } {
                let (at_limit, past) = limit(d, *neg);
                let base = (rng.next_u64() | top) & !(top >> 1) & wmask;
                let mut w: Vec<u64> = (0..nv).map(|x| fit_side(&mut rng, d, x % 2 == 1)).collect();
                w[0] = base;
                for delta in [at_limit, past] {
                    w[i] = base.wrapping_add(delta) & wmask;
                    corner.push(words(&w));
                }
            }
        }
    }
    // corners take at most half of the run (drawn at random when they are
    // more), so a short run still holds pairs, corpus and random blocks
    if corner.len() > n / 2 {
        rng.shuffle(&mut corner);
        corner.truncate(n / 2);
    }
    let mut out: Vec<Vec<u8>> = corner;
    // two values the zero base cannot cover, at j < k, every value between
    // them fitting it: the base must come from j, not k (up to three fifths
    // of the vectors left, pairs drawn at random when they are more)
    let mut pairs: Vec<(u32, usize, usize)> = widths
        .iter()
        .flat_map(|&d| (0..nv).flat_map(move |j| (j + 1..nv).map(move |k| (d, j, k))))
        .collect();
    rng.shuffle(&mut pairs);
    pairs.truncate(n.saturating_sub(out.len()) * 3 / 5);
    for (d, j, k) in pairs {
        // the top bit set, the next one clear: base + delta does not wrap,
        // and the base fits no field narrower than the value. Its low d+1
        // bits clear and a non-zero delta at k: value k has a bit value j
        // lacks, so a select that takes k, ORs both or takes neither gives
        // another base
        let base = (rng.next_u64() | top) & !(top >> 1) & !((1u64 << (d + 1)) - 1) & wmask;
        let delta = loop {
            let x = fit(&mut rng, d);
            if x != 0 {
                break x;
            }
        };
        let w: Vec<u64> = (0..nv)
            .map(|i| {
                if i == j {
                    base
                } else if i == k {
                    base.wrapping_add(delta) & wmask
                } else if i < k || rng.chance(0.5) {
                    fit(&mut rng, d)
                } else {
                    base.wrapping_add(fit(&mut rng, d)) & wmask
                }
            })
            .collect();
        out.push(words(&w));
    }
    let mut files: Vec<Vec<u8>> = Vec::new();
    if let Some(dir) = corpus {
        for (_, paths) in crate::vectors::usable_corpus(dir, bb)? {
            for p in paths {
                let d = crate::vectors::corpus_data(&p)?;
                if d.len() >= bb {
                    files.push(d);
                }
            }
        }
    }
    let corpus_n = if files.is_empty() {
        0
    } else {
        n.saturating_sub(out.len()) / 2
    };
    let corpus_end = out.len() + corpus_n;
    while out.len() < corpus_end {
        let f = &files[rng.below(files.len() as u64) as usize];
        let nb = f.len() / bb;
        let start = rng.below(nb as u64) as usize;
        let run = 1 + rng.below(16) as usize;
        for i in start..(start + run).min(nb) {
            out.push(f[i * bb..(i + 1) * bb].to_vec());
        }
    }
    out.truncate(n);
    while out.len() < n {
        let base = rng.next_u64() & wmask;
        let kind = rng.below(6);
        let w: Vec<u64> = (0..nv)
            .map(|j| {
                let r = rng.next_u64();
                match kind {
                    0 => base.wrapping_add(r % (1 << (r % 30))) & wmask,
                    1 => base.wrapping_sub(r % 500) & wmask,
                    2 if j % 3 == 0 => r % 2000,
                    2 => base.wrapping_add(r % 2000) & wmask,
                    3 => r % (1 << rng.below(24)),
                    4 => base,
                    _ => r & wmask,
                }
            })
            .collect();
        out.push(words(&w));
    }
    rng.shuffle(&mut out);
    Ok(out)
}

/// Expected output of one vector.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Expect {
    Comp { enc: u32, data: Vec<u8> },
    Block { error: bool, block: Vec<u8> },
}

/// Width of the testbench's `out_all` (`e` encoding bits, `bb` block bytes):
/// `{out_enc, out_data}` for the compressor, `{out_block, out_error}` else.
fn out_width(unit: Unit, e: u32, bb: usize) -> usize {
    match unit {
        Unit::Compressor => e as usize + 8 * bb,
        _ => 8 * bb + 1,
    }
}

/// Decode the testbench's `out_all` of `unit` into an [`Expect`].
fn got(unit: Unit, e: u32, bb: usize, o: &LeBus) -> Expect {
    match unit {
        Unit::Compressor => Expect::Comp {
            enc: o.uint(8 * bb, e as usize) as u32,
            data: o.bytes(0, bb),
        },
        _ => Expect::Block {
            error: o.bit(0),
            block: o.bytes(1, bb),
        },
    }
}

/// The input vector buses of `unit` for `blocks` (counting what they cover
/// in `seen`): the blocks themselves for the compressor and the loopback;
/// for the decompressor, each block's golden encoding as it is (40 %),
/// with garbage past its stored size (20 %), with one flipped bit (20 %),
/// or a random encoding and data (20 %).
pub fn unit_vectors(
    codec: &MagBdi,
    unit: Unit,
    blocks: &[Vec<u8>],
    seed: u64,
    seen: &mut std::collections::BTreeMap<String, usize>,
) -> Vec<LeBus> {
    let bb = codec.params().block_bytes;
    let e = codec.table().encoding_bits();
    let mut rng = Rng::new(seed.wrapping_add(77));
    let mut out = Vec::with_capacity(blocks.len());
    for b in blocks {
        let mut bus = LeBus::new();
        match unit {
            Unit::Compressor | Unit::Loopback => {
                *seen
                    .entry(format!("enc{}", codec.encode(b).encoding))
                    .or_default() += 1;
                bus.put_bytes(b);
            }
            Unit::Decompressor => {
                let x = codec.encode(b);
                let mut enc = x.encoding;
                let mut data = x.data.clone();
                data.resize(bb, 0);
                match rng.below(10) {
                    0..=3 => {}
                    4..=5 => {
                        // garbage past the stored size (not fetched)
                        for v in data.iter_mut().skip(x.data.len()) {
                            *v = rng.next_u8();
                        }
                    }
                    6..=7 => {
                        let bit = rng.below(8 * bb as u64) as usize;
                        data[bit / 8] ^= 1 << (bit % 8);
                    }
                    _ => {
                        enc = rng.below(1 << e) as u32;
                        rng.fill(&mut data);
                        if rng.chance(0.5) {
                            data.iter_mut().skip(bb / 4).for_each(|v| *v = 0);
                        }
                    }
                }
                let ok = codec.decode(enc, &data).is_ok();
                *seen
                    .entry(if ok {
                        format!("enc{enc}")
                    } else {
                        "error".into()
                    })
                    .or_default() += 1;
                bus.put_bytes(&data);
                bus.put_uint(enc as u64, e as usize);
            }
        }
        out.push(bus);
    }
    out
}

/// The DUT's data inputs of `unit`, in vector-bus order (least significant
/// first): name and width.
pub fn input_ports(codec: &MagBdi, unit: Unit) -> Vec<(String, usize)> {
    let bw = 8 * codec.params().block_bytes;
    match unit {
        Unit::Decompressor => vec![
            ("in_data".to_string(), bw),
            ("in_enc".to_string(), codec.table().encoding_bits() as usize),
        ],
        _ => vec![("in_block".to_string(), bw)],
    }
}

/// What the golden model gives `unit` for the vector bus `input`.
fn expect_of(codec: &MagBdi, unit: Unit, input: &LeBus) -> Expect {
    let bb = codec.params().block_bytes;
    let block = input.bytes(0, bb);
    match unit {
        Unit::Compressor => {
            let x = codec.encode(&block);
            let mut data = x.data;
            data.resize(bb, 0);
            Expect::Comp {
                enc: x.encoding,
                data,
            }
        }
        Unit::Loopback => Expect::Block {
            error: false,
            block,
        },
        Unit::Decompressor => {
            let enc = input.uint(8 * bb, codec.table().encoding_bits() as usize) as u32;
            match codec.decode(enc, &block) {
                Ok(block) => Expect::Block {
                    error: false,
                    block,
                },
                Err(_) => Expect::Block {
                    error: true,
                    block: vec![0; bb],
                },
            }
        }
    }
}

/// Unit `unit` at the default depth as a [`StreamTarget`] on `n` vectors
/// (mutation testing).
pub fn target(
    params: Params,
    unit: Unit,
    n: usize,
    seed: u64,
    corpus: Option<&Path>,
) -> Result<StreamTarget, MagBdiSimError> {
    target_staged(params, DEFAULT_STAGES, unit, n, seed, corpus)
}

/// [`target`] with a compressor of `compressor_stages` pipeline stages.
pub fn target_staged(
    params: Params,
    compressor_stages: usize,
    unit: Unit,
    n: usize,
    seed: u64,
    corpus: Option<&Path>,
) -> Result<StreamTarget, MagBdiSimError> {
    let codec = MagBdi::new(params)?;
    let (module, desc) = match unit {
        Unit::Compressor => hdl::magbdi::compressor::build_staged(codec.table(), compressor_stages),
        Unit::Decompressor => hdl::magbdi::decompressor::build_described(codec.table()),
        Unit::Loopback => return Err(MagBdiSimError::Loopback),
    }
    .map_err(hdl::GenError::from)?;
    let blocks = blocks(&codec, n, seed ^ unit as u64, corpus)?;
    let mut seen = std::collections::BTreeMap::new();
    let vectors = unit_vectors(&codec, unit, &blocks, seed, &mut seen);
    let e = codec.table().encoding_bits();
    let bb = params.block_bytes;
    Ok(StreamTarget {
        label: format!("{} ({})", desc.module, hdl::magbdi::config_name(&params)),
        module,
        desc,
        top: "bdi_tb",
        tb_file: "bdi_tb.sv",
        tb_source: TB_SOURCE,
        define: unit.define().to_string(),
        params: vec![("E", e as u64), ("B", 8 * bb as u64)],
        out_width: out_width(unit, e, bb),
        inputs: input_ports(&codec, unit),
        vectors,
        coverage: stream_unit::coverage_line(&seen),
        check: Box::new(move |input, o| {
            let want = expect_of(&codec, unit, input);
            let g = got(unit, e, bb, o);
            if g == want {
                Ok(())
            } else {
                Err(format!("got {g:02x?}, golden {want:02x?}"))
            }
        }),
    })
}

/// Generate the units and co-simulate every requested unit on every simulator.
pub fn run(cfg: &MagBdiConfig) -> Result<Vec<StreamReport>, MagBdiSimError> {
    let codec = MagBdi::new(cfg.params)?;
    let table = codec.table().clone();
    let name = hdl::magbdi::config_name(&cfg.params);
    let root = cfg.build.join(&name);
    let cmdline = hdl::unit_dir::this_command();
    let stages = hdl::magbdi::Stages::new(cfg.compressor_stages, hdl::magbdi::LATENCY)
        .map_err(hdl::GenError::from)?;
    let paths =
        hdl::magbdi::write_units_staged(cfg.params, stages, &root, &hdl::magbdi::UNITS, &cmdline)?;
    let params_json = root.join("params.json");
    let described = hdl::unit::read_units(&params_json)?;
    let latency = |side: hdl::Side| {
        let module = hdl::Unit::MagBdi(side).module_name();
        hdl::unit::find(&described, module, &params_json).map(|d| d.latency)
    };
    let (comp_latency, decomp_latency) = (
        latency(hdl::Side::Compressor)?,
        latency(hdl::Side::Decompressor)?,
    );
    let rtl: Vec<PathBuf> = paths
        .into_iter()
        .filter(|p| p.extension().is_some_and(|x| x == "v"))
        .collect();
    let bb = cfg.params.block_bytes;
    let bw = 8 * bb as u32;
    let e = table.encoding_bits();
    let block_hex = |b: &[u8]| {
        let mut bus = LeBus::new();
        bus.put_bytes(b);
        bus.hex()
    };
    let mut reports = Vec::new();
    for &unit in &cfg.units {
        // vectors and expectations
        let blocks = blocks(
            &codec,
            cfg.blocks,
            cfg.seed ^ unit as u64,
            cfg.corpus.as_deref(),
        )?;
        let mut seen = std::collections::BTreeMap::<String, usize>::new();
        let buses = unit_vectors(&codec, unit, &blocks, cfg.seed, &mut seen);
        let expect: Vec<Expect> = buses.iter().map(|b| expect_of(&codec, unit, b)).collect();
        let coverage = stream_unit::coverage_line(&seen);
        let stages = match unit {
            Unit::Loopback => comp_latency + decomp_latency,
            Unit::Compressor => comp_latency,
            Unit::Decompressor => decomp_latency,
        };
        let u = UnitRun {
            root: &root,
            name: unit.name(),
            spec: TbSpec {
                top: "bdi_tb",
                tb_file: "bdi_tb.sv",
                tb_source: TB_SOURCE,
                defines: vec![unit.define()],
                params: vec![("E", e as u64), ("B", bw as u64)],
                rtl: &rtl,
                trace: false,
                cxx: CxxOpt::for_vectors(blocks.len()),
            },
            sims: &cfg.sims,
            vectors: &buses,
            schedule: ScheduleConfig {
                stall: cfg.stall,
                resets: cfg.resets,
                seed: cfg.seed.wrapping_mul(31).wrapping_add(unit as u64),
            },
            stages,
            out_width: out_width(unit, e, bb),
            coverage,
        };
        let mut found = stream_unit::run_unit(&u, |idx, o| {
            let g = got(unit, e, bb, o);
            let want = expect.get(idx);
            if want == Some(&g) {
                Ok(())
            } else {
                let input = blocks.get(idx).map(|b| block_hex(b)).unwrap_or_default();
                Err(format!(
                    "{unit} vector {idx} (input block {input}): got {g:02x?}, golden {want:02x?}"
                ))
            }
        })?;
        let dirs = crate::locate::stream::LocateDirs {
            root: &root,
            name: unit.name(),
        };
        for r in &mut found {
            crate::locate::stream::add_location(r, &buses, |sim, idx, input| {
                crate::locate::stream::locate_magbdi(sim, cfg.params, unit, &rtl, input, idx, &dirs)
            });
        }
        reports.extend(found);
    }
    Ok(reports)
}

#[cfg(test)]
mod tests {
    use super::*;
    use golden::magbdi::DeltaMode;

    /// For every delta width `d`: every position of the first value the zero
    /// base cannot cover, and (among values the zero base cannot cover) a
    /// delta from the base at each end of the field and one past each end;
    /// in signed mode, every position before the first uncovered value
    /// holding a negative value the zero base covers; every position after
    /// the first as the only base-relative value one past each limit.
    fn walk_covers(params: Params) {
        let codec = MagBdi::new(params).expect("params");
        let k = params.base_bytes as u32;
        let w = 8 * k;
        let mask = if w == 64 { u64::MAX } else { (1u64 << w) - 1 };
        let signed = params.mode == DeltaMode::Signed;
        let set = blocks(&codec, 8000, 7, None).expect("blocks");
        let mut widths: Vec<u32> = codec.table().sizes.iter().map(|s| s.delta_bits).collect();
        widths.dedup();
        for d in widths {
            let (lo, hi) = if signed {
                (
                    (1u64 << (d - 1)).wrapping_neg() & mask,
                    (1u64 << (d - 1)) - 1,
                )
            } else {
                (0, (1u64 << d) - 1)
            };
            let mut firsts = vec![false; params.values()];
            // value i is the only base-relative value that does not fit,
            // one past the high (0) or the low (1) limit
            let mut only_past = vec![[false; 2]; params.values()];
            // value i fits the zero base by its negative side (signed
            // fields) and lies before the first value it cannot cover
            let mut negative_before = vec![!signed; params.values() - 1];
            // at lo, at hi, one below lo, one above hi
            let mut ends = [false; 4];
            for b in &set {
                let vals = codec.values(b);
                let Some(j) = vals.iter().position(|&v| !codec.fits(v, d)) else {
                    continue;
                };
                firsts[j] = true;
                let misfits: Vec<usize> = (j + 1..vals.len())
                    .filter(|&i| {
                        !codec.fits(vals[i], d) && !codec.fits(vals[i].wrapping_sub(vals[j]), d)
                    })
                    .collect();
                if let [i] = misfits[..] {
                    let delta = vals[i].wrapping_sub(vals[j]) & mask;
                    only_past[i][0] |= delta == (hi + 1) & mask;
                    only_past[i][1] |= delta == lo.wrapping_sub(1) & mask;
                }
                for (i, &v) in vals[..j].iter().enumerate() {
                    negative_before[i] |= v >= lo && v != 0;
                }
                for &v in &vals[j + 1..] {
                    if codec.fits(v, d) {
                        continue;
                    }
                    let delta = v.wrapping_sub(vals[j]) & mask;
                    for (e, x) in [lo, hi, lo.wrapping_sub(1) & mask, (hi + 1) & mask]
                        .into_iter()
                        .enumerate()
                    {
                        ends[e] |= delta == x;
                    }
                }
            }
            assert!(
                firsts.iter().all(|&f| f),
                "d={d}: first uncovered at {firsts:?}"
            );
            for (i, past) in only_past.iter().enumerate().skip(1) {
                assert!(
                    past[0],
                    "d={d}: value {i} never the only one past the high limit"
                );
                assert!(
                    past[1] || !signed,
                    "d={d}: value {i} never the only one past the low limit"
                );
            }
            assert!(
                negative_before.iter().all(|&f| f),
                "d={d}: negative values before the first uncovered one at {negative_before:?}"
            );
            // an unsigned field's low end is a zero delta, and one below it
            // is the widest delta of all; only the high end has a neighbour
            let needed: &[usize] = if signed { &[0, 1, 2, 3] } else { &[1, 3] };
            for &e in needed {
                assert!(ends[e], "d={d}: no delta at end {e} ({ends:?})");
            }
        }
    }

    /// Every pair `j < k` at every delta width `d`: a block whose first
    /// value the zero base cannot cover is `j`, the next one `k`, with
    /// value `k` fitting the base's field and having a bit value `j` lacks.
    fn pairs_cover(params: Params, n: usize) {
        let codec = MagBdi::new(params).expect("params");
        let nv = params.values();
        let set = blocks(&codec, n, 3, None).expect("blocks");
        let mut widths: Vec<u32> = codec.table().sizes.iter().map(|s| s.delta_bits).collect();
        widths.dedup();
        for d in widths {
            let mut seen = vec![vec![false; nv]; nv];
            for b in &set {
                let vals = codec.values(b);
                let mut out = (0..nv).filter(|&i| !codec.fits(vals[i], d));
                let (Some(j), Some(k)) = (out.next(), out.next()) else {
                    continue;
                };
                let (a, c) = (vals[j], vals[k]);
                let u = codec.unit(b, d);
                seen[j][k] |= u.fits && c & !a != 0;
            }
            for (j, row) in seen.iter().enumerate() {
                for (k, &hit) in row.iter().enumerate().skip(j + 1) {
                    assert!(hit, "d={d}: no pair ({j}, {k})");
                }
            }
        }
    }

    #[test]
    fn pairs_of_uncovered_values_reach_every_two_positions() {
        pairs_cover(Params::new(128, 32, 4, DeltaMode::Unsigned), 4000);
        pairs_cover(Params::new(128, 16, 4, DeltaMode::Signed), 8000);
    }

    #[test]
    fn the_walk_reaches_every_first_uncovered_value_and_both_ends_of_every_field() {
        walk_covers(Params::new(128, 32, 4, DeltaMode::Unsigned));
        walk_covers(Params::new(128, 16, 4, DeltaMode::Signed));
        walk_covers(Params::new(64, 16, 8, DeltaMode::Signed));
    }
}
