//! Expected outputs from the golden model and the block-by-block comparison
//! of a simulation against them (plus the handshake-timing and reset
//! bookkeeping checks against [`crate::schedule::model_run`]).

use std::collections::BTreeMap;

use golden::mpc::{CompressedBlock, DecodeError, ModelSet, MpcCodec};

use crate::hex;
use crate::output::{Fields, SimOutput};
use crate::schedule::ModelRun;
use crate::vectors::{Block, CompVector, DecompVector, Tags};

/// What the unit must deliver for one vector.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expect {
    Comp(CompressedBlock),
    /// Decompressor/loopback: the block or the golden error, and `out_model`
    /// (`None`: not compared, as when `out_error` is set).
    Block {
        result: Result<Block, DecodeError>,
        model: Option<u32>,
    },
}

/// The unit's inputs (for messages and tags).
#[derive(Clone, Copy, Debug)]
pub enum Inputs<'a> {
    Comp(&'a [CompVector]),
    Decomp(&'a [DecompVector]),
}

impl Inputs<'_> {
    pub fn len(&self) -> usize {
        match self {
            Inputs::Comp(v) => v.len(),
            Inputs::Decomp(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn tag(&self, i: usize) -> u16 {
        match self {
            Inputs::Comp(v) => v[i].tag,
            Inputs::Decomp(v) => v[i].tag,
        }
    }

    /// The input as text: the block's bytes in memory order, or the length
    /// and the bytes of the compressed bits.
    pub fn describe(&self, i: usize) -> String {
        match self {
            Inputs::Comp(v) => format!(
                "block {} (in_block = 0x{})",
                hex::bytes_hex(&v[i].block),
                hex::block_hex(&v[i].block)
            ),
            Inputs::Decomp(v) => format!(
                "len {} bits {} (bytes MSB first; bits at and past len may be garbage)",
                v[i].len,
                hex::bytes_hex(&v[i].bits)
            ),
        }
    }
}

/// The header field of `bits` (the first `H` bits): the decompressor's
/// `out_model`, which docs/hw/mpc-interface.md makes meaningful only when
/// `out_error` is 0.
pub fn header_field(bits: &[u8], set: &ModelSet) -> u32 {
    let h = set.header_bits() as usize;
    let mut id = 0u32;
    for k in 0..h {
        id = (id << 1) | ((bits[k / 8] >> (7 - k % 8)) & 1) as u32;
    }
    id
}

/// Run `f` over `items` on all cores, keeping the order.
fn par_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    if items.len() < 4096 || threads == 1 {
        return items.iter().map(f).collect();
    }
    let chunk = items.len().div_ceil(threads);
    let f = &f;
    std::thread::scope(|s| {
        let handles: Vec<_> = items
            .chunks(chunk)
            .map(|c| s.spawn(move || c.iter().map(f).collect::<Vec<R>>()))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_default())
            .collect()
    })
}

/// Expected compressor outputs (fast golden codec).
pub fn expect_compressor(codec: &MpcCodec, v: &[CompVector]) -> Vec<Expect> {
    par_map(v, |x| Expect::Comp(codec.compress(&x.block)))
}

/// Expected decompressor outputs.
pub fn expect_decompressor(codec: &MpcCodec, v: &[DecompVector]) -> Vec<Expect> {
    let set = codec.model_set();
    let width = set.max_bits() as usize;
    par_map(v, |x| {
        let result = codec.decompress(&x.bits[..width.div_ceil(8)], x.len as usize);
        let model = result.is_ok().then(|| header_field(&x.bits, set));
        Expect::Block { result, model }
    })
}

/// Expected loopback outputs: the input block, and the compressor's model.
pub fn expect_loopback(codec: &MpcCodec, v: &[CompVector]) -> Vec<Expect> {
    par_map(v, |x| Expect::Block {
        result: Ok(x.block),
        model: Some(codec.compress(&x.block).model),
    })
}

fn describe_expect(e: &Expect) -> String {
    match e {
        Expect::Comp(c) => format!(
            "len {} model {} bits {}",
            c.len,
            c.model,
            hex::bytes_hex(c.as_bytes())
        ),
        Expect::Block { result, model } => {
            let m = model.map_or("(any)".to_string(), |m| m.to_string());
            match result {
                Ok(b) => format!("error 0 model {m} block {}", hex::bytes_hex(b)),
                Err(e) => format!("error 1 model {m} block all zero (golden: {e})"),
            }
        }
    }
}

fn describe_fields(f: &Fields) -> String {
    match f {
        Fields::Comp { len, model, bits } => {
            let n = (*len as usize).div_ceil(8).min(bits.len());
            let mut s = format!(
                "len {len} model {model} bits {}",
                hex::bytes_hex(&bits[..n])
            );
            if bits[n..].iter().any(|&b| b != 0) {
                s.push_str(&format!(" (nonzero past len: {})", hex::bytes_hex(bits)));
            }
            s
        }
        Fields::Block {
            error,
            model,
            block,
        } => format!(
            "error {} model {model} block {}",
            *error as u8,
            hex::bytes_hex(block)
        ),
    }
}

/// Which fields differ (empty when equal).
fn diff(e: &Expect, f: &Fields) -> Vec<String> {
    let mut d = Vec::new();
    match (e, f) {
        (Expect::Comp(c), Fields::Comp { len, model, bits }) => {
            if *len != c.len {
                d.push(format!("out_len {len} != {}", c.len));
            }
            if *model != c.model {
                d.push(format!("out_model {model} != {}", c.model));
            }
            if *bits != c.bytes {
                let k = (0..8 * bits.len())
                    .find(|&k| (bits[k / 8] ^ c.bytes[k / 8]) & (0x80 >> (k % 8)) != 0)
                    .unwrap_or(0);
                d.push(format!("out_bits differ from compressed bit {k}"));
            }
        }
        (
            Expect::Block { result, model: m },
            Fields::Block {
                error,
                model,
                block,
            },
        ) => {
            if *error != result.is_err() {
                d.push(format!(
                    "out_error {} != {}",
                    *error as u8,
                    result.is_err() as u8
                ));
            }
            let want = result.as_ref().map_or([0u8; 32], |b| *b);
            if *block != want {
                let i = (0..32).find(|&i| block[i] != want[i]).unwrap_or(0);
                d.push(format!("out_block differs from byte {i}"));
            }
            if let Some(m) = m {
                if model != m {
                    d.push(format!("out_model {model} != {m}"));
                }
            }
        }
        _ => d.push("record type does not match the unit".to_string()),
    }
    d
}

/// One output that differs from the golden model.
#[derive(Clone, Debug)]
pub struct Mismatch {
    /// Vector index (in the whole run).
    pub idx: u64,
    /// Index within its shard, and the shard.
    pub shard: usize,
    pub shard_idx: u64,
    pub tag: String,
    pub input: String,
    pub expected: String,
    pub actual: String,
    pub what: String,
    /// Cycle the output was delivered in (shard-local), and its latency.
    pub cycle: u64,
    pub latency: u64,
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "block {} ({}; shard {} index {}, delivered in cycle {} after {} cycles): {}",
            self.idx, self.tag, self.shard, self.shard_idx, self.cycle, self.latency, self.what
        )?;
        writeln!(f, "    input    : {}", self.input)?;
        writeln!(f, "    expected : {}", self.expected)?;
        write!(f, "    actual   : {}", self.actual)
    }
}

/// Counts per category: (passed, total).
pub type TagCounts = BTreeMap<String, (u64, u64)>;

/// The outcome of comparing one or more simulations.
#[derive(Clone, Debug, Default)]
pub struct Verdict {
    /// Vectors whose output was compared.
    pub checked: u64,
    pub passed: u64,
    pub per_tag: TagCounts,
    /// The first mismatches (at most [`MAX_REPORTED`]).
    pub mismatches: Vec<Mismatch>,
    pub mismatch_count: u64,
    /// Missing/extra outputs, protocol violations, timing and reset
    /// bookkeeping differences, simulator errors.
    pub problems: Vec<String>,
    /// Reset pulses and the blocks they dropped (and that were re-sent).
    pub resets: u64,
    pub dropped: u64,
    /// Simulated cycles.
    pub cycles: u64,
}

/// Mismatches kept with full detail.
pub const MAX_REPORTED: usize = 20;

impl Verdict {
    pub fn ok(&self) -> bool {
        self.mismatch_count == 0 && self.problems.is_empty()
    }

    pub fn merge(&mut self, o: Verdict) {
        self.checked += o.checked;
        self.passed += o.passed;
        for (k, (p, t)) in o.per_tag {
            let e = self.per_tag.entry(k).or_default();
            e.0 += p;
            e.1 += t;
        }
        for m in o.mismatches {
            if self.mismatches.len() < MAX_REPORTED {
                self.mismatches.push(m);
            }
        }
        self.mismatch_count += o.mismatch_count;
        self.problems.extend(o.problems);
        self.resets += o.resets;
        self.dropped += o.dropped;
        self.cycles += o.cycles;
    }
}

/// What one shard was.
pub struct Shard<'a> {
    pub index: usize,
    /// Index of its first vector in the whole run.
    pub offset: u64,
    pub inputs: Inputs<'a>,
    pub expected: &'a [Expect],
    /// The ideal-pipeline model of the shard's schedule (`None`: skip the
    /// timing checks).
    pub model: Option<&'a ModelRun>,
}

/// Compare one shard's simulation output.
pub fn compare(shard: &Shard<'_>, out: &SimOutput, tags: &Tags, stages: usize) -> Verdict {
    let mut v = Verdict::default();
    let n = shard.inputs.len() as u64;
    if out.done.is_none() && out.errors.is_empty() {
        v.problems.push(format!(
            "shard {}: the simulation ended without its final `D` record",
            shard.index
        ));
    }
    for e in &out.errors {
        v.problems
            .push(format!("shard {}: simulation stopped: {e}", shard.index));
    }
    for p in out.protocol.iter().take(5) {
        v.problems.push(format!(
            "shard {}: protocol violation in cycle {}: {}",
            shard.index,
            p.cycle,
            p.describe()
        ));
    }
    if out.protocol.len() > 5 {
        v.problems.push(format!(
            "shard {}: {} protocol violations in all",
            shard.index,
            out.protocol.len()
        ));
    }
    v.resets = out.resets.len() as u64;
    v.dropped = out.resets.iter().map(|r| r.dropped).sum();
    v.cycles = out.done.map_or(0, |d| d.0);
    for r in &out.resets {
        if r.dropped > stages as u64 {
            v.problems.push(format!(
                "shard {}: reset in cycle {} found {} blocks in flight, more than the {stages} pipeline stages hold",
                shard.index, r.cycle, r.dropped
            ));
        }
    }
    for (k, rec) in out.records.iter().enumerate() {
        if rec.idx != k as u64 {
            v.problems.push(format!(
                "shard {}: output record {k} has index {} (testbench bookkeeping)",
                shard.index, rec.idx
            ));
            break;
        }
        if rec.idx >= n {
            v.problems.push(format!(
                "shard {}: {} outputs for {n} inputs (extra outputs)",
                shard.index,
                out.records.len()
            ));
            break;
        }
        let i = rec.idx as usize;
        let tag = tags.name(shard.inputs.tag(i)).to_string();
        let e = &shard.expected[i];
        let what = match &rec.fields {
            Ok(f) => diff(e, f),
            Err(msg) => vec![format!("unreadable output: {msg}")],
        };
        let counts = v.per_tag.entry(tag.clone()).or_default();
        counts.1 += 1;
        v.checked += 1;
        if what.is_empty() {
            counts.0 += 1;
            v.passed += 1;
            continue;
        }
        v.mismatch_count += 1;
        if v.mismatches.len() < MAX_REPORTED {
            v.mismatches.push(Mismatch {
                idx: shard.offset + rec.idx,
                shard: shard.index,
                shard_idx: rec.idx,
                tag,
                input: shard.inputs.describe(i),
                expected: describe_expect(e),
                actual: rec
                    .fields
                    .as_ref()
                    .map_or_else(|m| m.clone(), describe_fields),
                what: what.join(", "),
                cycle: rec.cycle,
                latency: rec.latency,
            });
        }
    }
    if (out.records.len() as u64) < n {
        v.problems.push(format!(
            "shard {}: only {} of {n} outputs delivered (first missing: block {})",
            shard.index,
            out.records.len(),
            shard.offset + out.records.len() as u64
        ));
    }
    if let Some(m) = shard.model {
        timing(shard.index, m, out, stages, &mut v);
    }
    v
}

/// Handshake timing and reset bookkeeping against the ideal pipeline.
fn timing(shard: usize, m: &ModelRun, out: &SimOutput, stages: usize, v: &mut Verdict) {
    if out.resets != m.resets {
        v.problems.push(format!(
            "shard {shard}: reset bookkeeping differs from an ideal {stages}-stage pipeline: testbench {:?}, model {:?}",
            out.resets, m.resets
        ));
    }
    for (rec, d) in out.records.iter().zip(&m.deliveries) {
        if rec.cycle != d.cycle || rec.latency != d.latency {
            v.problems.push(format!(
                "shard {shard}: block {} delivered in cycle {} after {} cycles; an ideal {stages}-stage ready-chain pipeline (docs/hw/mpc-interface.md) delivers it in cycle {} after {}",
                rec.idx, rec.cycle, rec.latency, d.cycle, d.latency
            ));
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::Record;
    use std::path::Path;

    fn example() -> ModelSet {
        ModelSet::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../models/example"))
            .expect("example")
    }

    #[test]
    fn header_field_is_the_first_h_bits() {
        let set = example(); // h = 3
        assert_eq!(header_field(&[0b0100_0000], &set), 2);
        assert_eq!(header_field(&[0b1110_0000], &set), 7);
    }

    #[test]
    fn compare_names_the_block_and_fields() {
        let set = example();
        let codec = MpcCodec::new(&set);
        let mut tags = Tags::new();
        let t = tags.id("corner/x");
        let v: Vec<CompVector> = (0..3u8)
            .map(|i| CompVector {
                block: [i; 32],
                tag: t,
            })
            .collect();
        let exp = expect_compressor(&codec, &v);
        let mut recs: Vec<Record> = exp
            .iter()
            .enumerate()
            .map(|(i, e)| {
                let Expect::Comp(c) = e else { unreachable!() };
                Record {
                    idx: i as u64,
                    cycle: 3 + i as u64,
                    latency: 3,
                    fields: Ok(Fields::Comp {
                        len: c.len,
                        model: c.model,
                        bits: c.bytes,
                    }),
                }
            })
            .collect();
        let out = SimOutput {
            records: recs.clone(),
            done: Some((10, 3)),
            ..Default::default()
        };
        let shard = Shard {
            index: 0,
            offset: 100,
            inputs: Inputs::Comp(&v),
            expected: &exp,
            model: None,
        };
        let ok = compare(&shard, &out, &tags, 3);
        assert!(ok.ok(), "{:?}", ok.problems);
        assert_eq!(ok.per_tag["corner/x"], (3, 3));
        if let Ok(Fields::Comp { bits, .. }) = &mut recs[1].fields {
            bits[0] ^= 0x01;
        }
        recs.pop();
        let bad = compare(
            &shard,
            &SimOutput {
                records: recs,
                ..Default::default()
            },
            &tags,
            3,
        );
        assert!(!bad.ok());
        assert_eq!(bad.mismatch_count, 1);
        assert_eq!(bad.mismatches[0].idx, 101);
        assert!(bad.mismatches[0]
            .what
            .contains("out_bits differ from compressed bit 7"));
        assert!(
            bad.problems.iter().any(|p| p.contains("only 2 of 3")),
            "{:?}",
            bad.problems
        );
    }
}
