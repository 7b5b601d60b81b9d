//! Co-simulation of the DPC units (`hdl::dpc`, docs/hw/dpc.md): the plain,
//! DF-TRUC and DF-MAN compressors and the plain (also DF-MAN) and DF-TRUC
//! decompressors, against `golden::dpc` on Icarus and Verilator. What is
//! particular to the family is here: the vectors, the port layout of the
//! vector and output buses (`tb/dpc_tb.sv`) and the golden check; the run
//! is the shared one of every unit ([`stream_unit::run_unit`]: the driver
//! `tb/stream_driver.svh`, the seeded stall/backpressure/reset schedule,
//! the one record parser and the checks of every run).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use golden::dpc::{Dpc, DpcParams, Mode};
use hdl::dpc::{len_width, packet_width, DpcUnit as Unit};

use crate::rng::Rng;
use crate::schedule::ScheduleConfig;
use crate::sim::CxxOpt;
use crate::stream_unit::{self, LeBus, StreamError, StreamReport, StreamTarget, TbSpec, UnitRun};
use crate::Simulator;

/// The testbench.
pub const TB_SOURCE: &str = include_str!("../tb/dpc_tb.sv");

/// Why a DPC co-simulation could not run.
#[derive(Debug, thiserror::Error)]
pub enum DpcSimError {
    #[error(transparent)]
    Gen(#[from] hdl::GenError),
    #[error(transparent)]
    Stream(#[from] StreamError),
    #[error(transparent)]
    Vectors(#[from] crate::vectors::VectorError),
    #[error(transparent)]
    Units(#[from] hdl::unit::UnitsError),
}

/// One co-simulation run.
#[derive(Clone, Debug)]
pub struct DpcConfig {
    pub params: DpcParams,
    pub sims: Vec<Simulator>,
    pub units: Vec<Unit>,
    /// Vectors per unit.
    pub blocks: usize,
    pub seed: u64,
    pub corpus: Option<PathBuf>,
    pub stall: f64,
    pub resets: usize,
    /// Root of the work directories (`<build>/dpc-<B>-<S>-<T>/`, with
    /// `-d<N>` for decompressors of a depth other than the default).
    pub build: PathBuf,
    /// Pipeline stages of the decompressors (`gen dpc
    /// --decompressor-stages`).
    pub decompressor_stages: usize,
}

/// `dpc-<block>-<segment>-<sector>`, as `gen --unit dpc` names it.
pub fn config_name(p: &DpcParams) -> String {
    format!(
        "dpc-{}-{}-{}",
        p.block_bytes(),
        p.segment_bytes(),
        p.sector_bytes()
    )
}

/// The testbench define that selects `u`.
pub fn define(u: Unit) -> String {
    u.module_name().to_ascii_uppercase()
}

/// Parse a unit name (`compressor`, `truc-compressor`, `man-compressor`,
/// `decompressor`, `truc-decompressor`, or the module name).
pub fn parse_unit(s: &str) -> Option<Unit> {
    let s = s.trim().to_ascii_lowercase().replace('-', "_");
    let s = s.strip_prefix("dpc_").unwrap_or(&s);
    Some(match s {
        "compressor" | "plain_compressor" => Unit::Compressor(Mode::Plain),
        "truc_compressor" => Unit::Compressor(Mode::Truc),
        "man_compressor" => Unit::Compressor(Mode::Man),
        "decompressor" | "plain_decompressor" => Unit::Decompressor(Mode::Plain),
        "truc_decompressor" => Unit::Decompressor(Mode::Truc),
        _ => return None,
    })
}

/// A test block and where it comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TestBlock {
    /// `corner`, `random`, or `corpus:<class>`.
    pub category: String,
    pub block: Vec<u8>,
}

/// Corner cases: zeros, ones, the segment index, a byte ramp, checker
/// patterns, one and two uniform groups (raw fallback by one bit; the
/// shortest coded payload), all groups but one uniform, sector-structured
/// blocks (each sector zeros/ones/random, so the critical mask decides),
/// sign-extended small negative integers.
fn corner_blocks(p: &DpcParams, rng: &mut Rng) -> Vec<Vec<u8>> {
    let b = p.block_bytes();
    let s = p.segment_bytes();
    let t = p.sector_bytes();
    let k = p.sectors();
    let rand = |rng: &mut Rng| {
        let mut x = vec![0u8; b];
        rng.fill(&mut x);
        x
    };
    // Keep `uniform` top bits of every segment uniform (0) and the rest random.
    let top_uniform = |rng: &mut Rng, uniform: usize| {
        let mut x = rand(rng);
        for seg in x.chunks_mut(s) {
            let mut v = seg.iter().rev().fold(0u64, |a, &y| (a << 8) | y as u64);
            let w = 8 * s;
            if uniform >= w {
                v = 0;
            } else {
                v &= u64::MAX >> (64 - (w - uniform));
            }
            for (i, y) in seg.iter_mut().enumerate() {
                *y = (v >> (8 * i)) as u8;
            }
        }
        x
    };
    let mut v = vec![
        vec![0u8; b],
        vec![0xff; b],
        (0..b)
            .map(|i| if i % s == 0 { (i / s) as u8 } else { 0 })
            .collect(),
        (0..b).map(|i| i as u8).collect(),
        (0..b)
            .map(|i| if i % 2 == 0 { 0x55 } else { 0xaa })
            .collect(),
        (0..b)
            .map(|i| if (i / s).is_multiple_of(2) { 0 } else { 0xff })
            .collect(),
        top_uniform(rng, 1),
        top_uniform(rng, 2),
        top_uniform(rng, 3),
        top_uniform(rng, 8 * s - 1),
        rand(rng),
    ];
    // Small negative integers (sign-extended).
    v.push(
        (0..b / s)
            .flat_map(|_| {
                let x = (rng.below(200) as i64 + 1).wrapping_neg() as u64;
                x.to_le_bytes()[..s].to_vec()
            })
            .collect(),
    );
    // Sector-structured: sector j zeros, ones or random; one sector random
    // among zeros (every position).
    for _ in 0..4 {
        let mut x = Vec::with_capacity(b);
        for _ in 0..k {
            let f = rng.below(3);
            for _ in 0..t {
                x.push(match f {
                    0 => 0,
                    1 => 0xff,
                    _ => rng.next_u8(),
                });
            }
        }
        v.push(x);
    }
    for j in 0..k {
        let mut x = vec![0u8; b];
        rng.fill(&mut x[j * t..(j + 1) * t]);
        v.push(x);
    }
    v
}

/// A random structured block.
fn random_block(p: &DpcParams, rng: &mut Rng) -> Vec<u8> {
    let b = p.block_bytes();
    let s = p.segment_bytes();
    let t = p.sector_bytes();
    let w = 8 * s;
    let wmask = if w == 64 { u64::MAX } else { (1u64 << w) - 1 };
    let segs = |f: &mut dyn FnMut(&mut Rng, usize) -> u64, rng: &mut Rng| -> Vec<u8> {
        (0..b / s)
            .flat_map(|j| (f(rng, j) & wmask).to_le_bytes()[..s].to_vec())
            .collect()
    };
    match rng.below(7) {
        0 => {
            let mut x = vec![0u8; b];
            rng.fill(&mut x);
            x
        }
        1 => {
            // a few varying bit planes, the others constant 0 or 1
            let vary = rng.next_u64() & rng.next_u64() & wmask;
            let set = rng.next_u64() & !vary & wmask;
            segs(&mut |r, _| (r.next_u64() & vary) | set, rng)
        }
        2 => {
            // small unsigned integers
            let bits = 1 + rng.below(w as u64 - 1);
            segs(&mut |r, _| r.next_u64() >> (64 - bits), rng)
        }
        3 => {
            // small signed integers around a base
            let base = rng.next_u64();
            segs(
                &mut |r, _| base.wrapping_add(r.below(64)).wrapping_sub(32),
                rng,
            )
        }
        4 => {
            // sector-structured
            let mut x = Vec::with_capacity(b);
            for _ in 0..p.sectors() {
                let f = rng.below(4);
                let fill = rng.next_u8();
                for _ in 0..t {
                    x.push(match f {
                        0 => 0,
                        1 => 0xff,
                        2 => fill,
                        _ => rng.next_u8(),
                    });
                }
            }
            x
        }
        5 => {
            // exactly `u` uniform bit planes (around the coded/raw boundary)
            let u = rng.below(5) as usize;
            let mut planes: Vec<usize> = (0..w).collect();
            rng.shuffle(&mut planes);
            let uni = &planes[..u];
            let ones = rng.next_u64();
            segs(
                &mut |r, j| {
                    let mut v = r.next_u64();
                    for &i in uni {
                        v = (v & !(1 << i)) | (ones & (1 << i));
                    }
                    // keep the other planes non-uniform: segment 0 and 1 differ there
                    if j < 2 {
                        for &i in &planes[u..] {
                            v = (v & !(1 << i)) | ((j as u64) << i);
                        }
                    }
                    v
                },
                rng,
            )
        }
        _ => {
            // one value repeated with a few random segments
            let v0 = rng.next_u64();
            segs(
                &mut |r, _| if r.chance(0.1) { r.next_u64() } else { v0 },
                rng,
            )
        }
    }
}

/// Test blocks: the corner cases, then corpus blocks from every class (a
/// third of the rest, spread evenly over the classes, when a corpus is
/// given), then random structured blocks; shuffled.
pub fn blocks(
    p: &DpcParams,
    n: usize,
    seed: u64,
    corpus: Option<&Path>,
) -> Result<Vec<TestBlock>, crate::vectors::VectorError> {
    let mut rng = Rng::new(seed);
    let tag = |c: &str, v: Vec<Vec<u8>>| {
        v.into_iter()
            .map(|block| TestBlock {
                category: c.to_string(),
                block,
            })
            .collect::<Vec<_>>()
    };
    let mut out = tag("corner", corner_blocks(p, &mut rng));
    out.truncate(n);
    if let Some(dir) = corpus {
        let want = n.saturating_sub(out.len()) / 3;
        let classes = crate::vectors::usable_corpus(dir, p.block_bytes())?.len();
        if want > 0 {
            let per = want.div_ceil(classes);
            for (name, bl) in crate::vectors::corpus_samples(dir, p.block_bytes(), per, &mut rng)? {
                out.extend(tag(&format!("corpus:{name}"), bl));
            }
        }
    }
    out.truncate(n);
    while out.len() < n {
        out.push(TestBlock {
            category: "random".into(),
            block: random_block(p, &mut rng),
        });
    }
    rng.shuffle(&mut out);
    Ok(out)
}

/// What a unit should output for one vector.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Expect {
    /// Packet (MSB-first bytes, zero beyond `len`, padded to the bus), its
    /// length, and DF-MAN's flag.
    Packet {
        bits: Vec<u8>,
        len: u64,
        manipulated: Option<bool>,
    },
    /// Decompressor: error, block (zero on error), mask (DF-TRUC; zero on error).
    Block {
        error: bool,
        block: Vec<u8>,
        mask: u64,
    },
}

/// One vector: its bus, the expectation and a description for reports.
struct Vector {
    bus: LeBus,
    expect: Expect,
    what: String,
}

/// The MSB-first bytes of a `w`-bit bus holding `len` bits of `bits`
/// (zero beyond `len`): what the golden decoder sees.
fn bus_view(bits: &[u8], len: usize, w: usize) -> Vec<u8> {
    let mut b = LeBus::new();
    b.put_left_aligned(bits, len, w);
    b.left_aligned(0, w)
}

/// Vectors of `unit` for `blocks`: masks `i mod 2^K` for the first
/// `4 * 2^K` vectors (every mask), random after; decompressor packets are
/// the golden packets (DF-MAN or plain for the plain decompressor) as
/// they are (40 %), with garbage past their length (10 %), length -1 / +1,
/// one flipped bit, a random shorter length or a length beyond the bus,
/// random bits with a random length (`garbage`) (10 % each).
fn vectors(
    p: &DpcParams,
    unit: Unit,
    blocks: &[TestBlock],
    seed: u64,
    seen: &mut BTreeMap<String, usize>,
) -> Vec<Vector> {
    let d = Dpc::new(*p);
    let mut rng = Rng::new(seed);
    let full = p.full_mask();
    let nmasks = full as usize + 1;
    let mut out = Vec::with_capacity(blocks.len());
    let mut classes = std::collections::BTreeSet::new();
    let mut count = |k: String| *seen.entry(k).or_default() += 1;
    for (i, tb) in blocks.iter().enumerate() {
        count(tb.category.split(':').next().unwrap_or("").to_string());
        if let Some(class) = tb.category.strip_prefix("corpus:") {
            classes.insert(class.to_string());
        }
        let b = &tb.block;
        let mask = if i < 4 * nmasks {
            (i % nmasks) as u32
        } else {
            rng.next_u32() & full
        };
        match unit {
            Unit::Compressor(mode) => {
                let mut bus = LeBus::new();
                bus.put_bytes(b);
                if mode != Mode::Plain {
                    bus.put_uint(mask as u64, p.sectors());
                    count(format!("mask{mask:x}"));
                }
                // Infallible for a block of the right size and a mask within `full`.
                let Ok(expect) = expect_of(p, &d, unit, &bus) else {
                    continue;
                };
                let coded = d.trace(mode, b, mask).is_ok_and(|t| t.compressed);
                count(if coded { "coded" } else { "raw" }.into());
                if matches!(
                    expect,
                    Expect::Packet {
                        manipulated: Some(true),
                        ..
                    }
                ) {
                    count("manipulated".into());
                }
                out.push(Vector {
                    bus,
                    expect,
                    what: format!(
                        "{} block, mask {mask:#x}, input {}",
                        tb.category,
                        golden_hex(b)
                    ),
                });
            }
            Unit::Decompressor(mode) => {
                let truc = mode == Mode::Truc;
                let w = packet_width(p, mode) as usize;
                let l = len_width(p, mode) as usize;
                let pk = if truc {
                    d.encode_truc(b, mask)
                } else if i % 2 == 0 {
                    d.encode_man(b, mask).map(|r| r.packet)
                } else {
                    d.encode(b)
                };
                let Ok(pk) = pk else { continue };
                let mut bits = pk.bytes.clone();
                bits.resize(w.div_ceil(8), 0);
                let mut len = pk.len;
                let flip = |bits: &mut Vec<u8>, at: usize| {
                    if let Some(x) = bits.get_mut(at / 8) {
                        *x ^= 0x80 >> (at % 8);
                    }
                };
                let (kind, bus_len) = match rng.below(10) {
                    0..=3 => ("valid", len),
                    4 => {
                        // garbage past the length (ignored)
                        for at in len..w {
                            if rng.chance(0.5) {
                                flip(&mut bits, at);
                            }
                        }
                        ("garbage-tail", w)
                    }
                    5 => {
                        len = len.saturating_sub(1);
                        ("len-1", len)
                    }
                    6 => {
                        len += 1;
                        ("len+1", len.min(w))
                    }
                    7 => {
                        let at = rng.below(len.max(1) as u64) as usize;
                        flip(&mut bits, at);
                        ("bit-flip", len)
                    }
                    8 => match rng.below(3) {
                        0 => {
                            len = rng.below(len.max(1) as u64) as usize;
                            ("short", len)
                        }
                        _ => {
                            len = w + 1 + rng.below(((1u64 << l) - 1 - w as u64).max(1)) as usize;
                            ("len>bus", w)
                        }
                    },
                    _ => {
                        rng.fill(&mut bits);
                        len = rng.below(w as u64 + 1) as usize;
                        ("garbage", w)
                    }
                };
                // The bus holds `bus_len` bits of `bits`; the golden model
                // reads the same bus.
                let view = bus_view(&bits, bus_len, w);
                let mut bus = LeBus::new();
                bus.put_left_aligned(&view, w, w);
                bus.put_uint(len as u64, l);
                count(kind.into());
                let Ok(expect) = expect_of(p, &d, unit, &bus) else {
                    continue;
                };
                count(
                    if matches!(expect, Expect::Block { error: true, .. }) {
                        "error"
                    } else {
                        "decoded"
                    }
                    .into(),
                );
                out.push(Vector {
                    bus,
                    expect,
                    what: format!(
                        "{kind} packet of {} from a {} block (mask {mask:#x}), in_len {len}, in_bits {}",
                        if truc { "DF-TRUC" } else if i % 2 == 0 { "DF-MAN" } else { "DPC" },
                        tb.category,
                        golden_hex(&view)
                    ),
                });
            }
        }
    }
    if !classes.is_empty() {
        seen.insert("corpus-classes".into(), classes.len());
    }
    out
}

fn golden_hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Width of the testbench's `out_all` for `unit`.
fn out_width(p: &DpcParams, unit: Unit) -> usize {
    match unit {
        Unit::Compressor(mode) => {
            packet_width(p, mode) as usize
                + len_width(p, mode) as usize
                + usize::from(mode == Mode::Man)
        }
        Unit::Decompressor(mode) => {
            8 * p.block_bytes() + 1 + if mode == Mode::Truc { p.sectors() } else { 0 }
        }
    }
}

/// Decode the testbench's output bus of `unit` into an [`Expect`].
fn got(p: &DpcParams, unit: Unit, o: &LeBus) -> Expect {
    match unit {
        Unit::Compressor(mode) => {
            let w = packet_width(p, mode) as usize;
            let l = len_width(p, mode) as usize;
            Expect::Packet {
                bits: o.left_aligned(0, w),
                len: o.uint(w, l),
                manipulated: (mode == Mode::Man).then(|| o.bit(w + l)),
            }
        }
        Unit::Decompressor(mode) => {
            let bw = 8 * p.block_bytes();
            Expect::Block {
                error: o.bit(bw),
                block: o.bytes(0, p.block_bytes()),
                mask: if mode == Mode::Truc {
                    o.uint(bw + 1, p.sectors())
                } else {
                    0
                },
            }
        }
    }
}

/// Which fields of a result differ (for the report).
fn diff(g: &Expect, w: &Expect) -> String {
    match (g, w) {
        (
            Expect::Packet {
                bits: gb,
                len: gl,
                manipulated: gm,
            },
            Expect::Packet {
                bits: wb,
                len: wl,
                manipulated: wm,
            },
        ) => {
            let first = gb
                .iter()
                .zip(wb)
                .position(|(a, b)| a != b)
                .map(|i| {
                    let x = gb[i] ^ wb[i];
                    8 * i + x.leading_zeros() as usize
                });
            format!(
                "out_len {gl} (golden {wl}), out_manipulated {gm:?} (golden {wm:?}), first differing packet bit {first:?}; out_bits {} golden {}",
                golden_hex(gb),
                golden_hex(wb)
            )
        }
        (
            Expect::Block {
                error: ge,
                block: gb,
                mask: gm,
            },
            Expect::Block {
                error: we,
                block: wb,
                mask: wm,
            },
        ) => format!(
            "out_error {ge} (golden {we}), out_mask {gm:#x} (golden {wm:#x}), first differing byte {:?}; out_block {} golden {}",
            gb.iter().zip(wb).position(|(a, b)| a != b),
            golden_hex(gb),
            golden_hex(wb)
        ),
        _ => "kind".into(),
    }
}

/// What the golden model gives `unit` for the vector bus `input` (a
/// compressor's `Err`: the model refuses the input).
fn expect_of(p: &DpcParams, d: &Dpc, unit: Unit, input: &LeBus) -> Result<Expect, String> {
    let bb = p.block_bytes();
    match unit {
        Unit::Compressor(mode) => {
            let w = packet_width(p, mode) as usize;
            let b = input.bytes(0, bb);
            let mask = input.uint(8 * bb, p.sectors()) as u32;
            let (pk, manipulated) = match mode {
                Mode::Plain => (d.encode(&b), None),
                Mode::Truc => (d.encode_truc(&b, mask), None),
                Mode::Man => match d.encode_man(&b, mask) {
                    Ok(r) => (Ok(r.packet), Some(r.manipulated)),
                    Err(e) => (Err(e), None),
                },
            };
            let pk = pk.map_err(|e| e.to_string())?;
            Ok(Expect::Packet {
                bits: bus_view(&pk.bytes, pk.len, w),
                len: pk.len as u64,
                manipulated,
            })
        }
        Unit::Decompressor(mode) => {
            let w = packet_width(p, mode) as usize;
            let l = len_width(p, mode) as usize;
            let view = input.left_aligned(0, w);
            let len = input.uint(w, l) as usize;
            let got = if mode == Mode::Truc {
                d.decode_truc(&view, len).map(|(b, m)| (b, m as u64))
            } else {
                d.decode(&view, len).map(|b| (b, 0))
            };
            Ok(match got {
                Ok((block, mask)) => Expect::Block {
                    error: false,
                    block,
                    mask,
                },
                Err(_) => Expect::Block {
                    error: true,
                    block: vec![0; bb],
                    mask: 0,
                },
            })
        }
    }
}

/// The DUT's data inputs of `unit`, in vector-bus order (least significant
/// first): name and width.
pub fn input_ports(p: &DpcParams, unit: Unit) -> Vec<(String, usize)> {
    match unit {
        Unit::Compressor(Mode::Plain) => vec![("in_block".to_string(), 8 * p.block_bytes())],
        Unit::Compressor(_) => vec![
            ("in_block".to_string(), 8 * p.block_bytes()),
            ("in_mask".to_string(), p.sectors()),
        ],
        Unit::Decompressor(mode) => vec![
            ("in_bits".to_string(), packet_width(p, mode) as usize),
            ("in_len".to_string(), len_width(p, mode) as usize),
        ],
    }
}

/// Unit `unit` as a [`StreamTarget`] on `n` vectors (mutation testing).
pub fn target(
    p: DpcParams,
    unit: Unit,
    n: usize,
    seed: u64,
    corpus: Option<&Path>,
) -> Result<StreamTarget, DpcSimError> {
    target_staged(
        p,
        unit,
        hdl::dpc::DECOMPRESSOR_LATENCY as usize,
        n,
        seed,
        corpus,
    )
}

/// [`target`] with decompressors of `decompressor_stages` stages.
pub fn target_staged(
    p: DpcParams,
    unit: Unit,
    decompressor_stages: usize,
    n: usize,
    seed: u64,
    corpus: Option<&Path>,
) -> Result<StreamTarget, DpcSimError> {
    let staged = hdl::dpc::Staged::new(p, decompressor_stages).map_err(hdl::GenError::from)?;
    let (module, desc) = hdl::Family::build(&staged, unit.into())?;
    let ui = Unit::ALL.iter().position(|&u| u == unit).unwrap_or(0) as u64;
    let tbs = blocks(&p, n, seed ^ (ui + 1).wrapping_mul(0x9e37), corpus)?;
    let mut seen = BTreeMap::new();
    let vecs = vectors(&p, unit, &tbs, seed.wrapping_add(77 + ui), &mut seen);
    let mode = match unit {
        Unit::Compressor(m) | Unit::Decompressor(m) => m,
    };
    let d = Dpc::new(p);
    Ok(StreamTarget {
        label: format!("{} ({})", desc.module, config_name(&p)),
        module,
        desc,
        top: "dpc_tb",
        tb_file: "dpc_tb.sv",
        tb_source: TB_SOURCE,
        define: define(unit),
        params: tb_params(&p, mode),
        out_width: out_width(&p, unit),
        inputs: input_ports(&p, unit),
        vectors: vecs.into_iter().map(|v| v.bus).collect(),
        coverage: stream_unit::coverage_line(&seen),
        check: Box::new(move |input, o| {
            let want = expect_of(&p, &d, unit, input)
                .map_err(|e| format!("the golden model refuses the input: {e}"))?;
            let g = got(&p, unit, o);
            if g == want {
                Ok(())
            } else {
                Err(diff(&g, &want))
            }
        }),
    })
}

/// The testbench parameters of a unit in `mode`.
fn tb_params(p: &DpcParams, mode: Mode) -> Vec<(&'static str, u64)> {
    vec![
        ("B", 8 * p.block_bytes() as u64),
        ("P", packet_width(p, mode) as u64),
        ("L", len_width(p, mode) as u64),
        ("K", p.sectors() as u64),
    ]
}

/// Generate the units and co-simulate every requested unit on every simulator.
pub fn run(cfg: &DpcConfig) -> Result<Vec<StreamReport>, DpcSimError> {
    let p = cfg.params;
    let staged = hdl::dpc::Staged::new(p, cfg.decompressor_stages).map_err(hdl::GenError::from)?;
    let mut dir = config_name(&p);
    if cfg.decompressor_stages != hdl::dpc::DECOMPRESSOR_LATENCY as usize {
        dir.push_str(&format!("-d{}", cfg.decompressor_stages));
    }
    let root = cfg.build.join(dir);
    let cmdline = hdl::unit_dir::this_command();
    let paths = hdl::family::write_units(&staged, &root, &hdl::dpc::UNITS, &cmdline)?;
    let params_json = root.join("params.json");
    let described = hdl::unit::read_units(&params_json)?;
    let rtl: Vec<PathBuf> = paths
        .into_iter()
        .filter(|x| x.extension().is_some_and(|e| e == "v"))
        .collect();
    let mut reports = Vec::new();
    for (ui, &unit) in cfg.units.iter().enumerate() {
        let name = unit.module_name();
        let tbs = blocks(
            &p,
            cfg.blocks,
            cfg.seed ^ (ui as u64 + 1).wrapping_mul(0x9e37),
            cfg.corpus.as_deref(),
        )?;
        let mut seen = BTreeMap::new();
        let vecs = vectors(
            &p,
            unit,
            &tbs,
            cfg.seed.wrapping_add(77 + ui as u64),
            &mut seen,
        );
        let coverage = stream_unit::coverage_line(&seen);
        let st = hdl::unit::find(&described, name, &params_json)?.latency;
        let buses: Vec<LeBus> = vecs.iter().map(|v| v.bus.clone()).collect();
        let mode = match unit {
            Unit::Compressor(m) | Unit::Decompressor(m) => m,
        };
        let def = define(unit);
        let u = UnitRun {
            root: &root,
            name,
            spec: TbSpec {
                top: "dpc_tb",
                tb_file: "dpc_tb.sv",
                tb_source: TB_SOURCE,
                defines: vec![&def],
                params: tb_params(&p, mode),
                rtl: &rtl,
                trace: false,
                cxx: CxxOpt::for_vectors(vecs.len()),
            },
            sims: &cfg.sims,
            vectors: &buses,
            schedule: ScheduleConfig {
                stall: cfg.stall,
                resets: cfg.resets,
                seed: cfg.seed.wrapping_mul(31).wrapping_add(ui as u64),
            },
            stages: st,
            out_width: out_width(&p, unit),
            coverage,
        };
        let mut found = stream_unit::run_unit(&u, |idx, o| {
            let Some(v) = vecs.get(idx) else {
                return Err(format!("{name}: output index {idx} out of range"));
            };
            let g = got(&p, unit, o);
            if g == v.expect {
                Ok(())
            } else {
                Err(format!(
                    "{name} vector {idx} ({}): {}",
                    v.what,
                    diff(&g, &v.expect)
                ))
            }
        })?;
        let dirs = crate::locate::stream::LocateDirs { root: &root, name };
        for r in &mut found {
            crate::locate::stream::add_location(r, &buses, |sim, idx, input| {
                crate::locate::stream::locate_dpc(sim, p, unit, &rtl, input, idx, &dirs)
            });
        }
        reports.extend(found);
    }
    Ok(reports)
}
