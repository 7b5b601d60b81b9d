//! Expected outputs from the golden model and the block-by-block comparison
//! of a simulation against them (plus the handshake-timing and reset
//! bookkeeping checks against [`crate::schedule::model_run`]).

use std::path::Path;

use golden::mpc::{CompressedBlock, DecodeError, ModelSet, MpcCodec, BLOCK_BYTES, MAX_BLOCK_BYTES};

use crate::hex;
use crate::records::{self, OutputError, Record, SimOutput};
use crate::rtl::Params;
use crate::schedule::ModelRun;
use crate::stream_unit::LeBus;
use crate::vectors::{Block, CompVector, DecompVector, Tags, LEN_WIDTH};
use crate::verdict::{self, Diff, Judged, RunShape};
pub use crate::verdict::{Mismatch, TagCounts, Verdict, MAX_REPORTED};
use crate::Unit;

/// The MPC unit's output fields of one record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fields {
    /// Compressor: `out_len`, `out_model`, `out_bits` (MSB-first bytes).
    Comp {
        len: u32,
        model: u32,
        bits: [u8; MAX_BLOCK_BYTES],
    },
    /// Decompressor and loopback: `out_error`, `out_model`, `out_block`.
    Block {
        error: bool,
        model: u32,
        block: Block,
    },
}

/// An MPC run's records, their buses decoded into [`Fields`].
pub type MpcOutput = SimOutput<Fields>;
/// One output record of an MPC unit.
pub type MpcRecord = Record<Fields>;

/// Width of the testbench's `out_all` bus for `unit`.
pub fn out_width(unit: Unit, params: &Params) -> usize {
    let h = params.header_bits as usize;
    match unit {
        Unit::Compressor => params.max_bits as usize + LEN_WIDTH as usize + h,
        Unit::Decompressor | Unit::Loopback => 8 * BLOCK_BYTES + 1 + h,
    }
}

/// The fields of an `out_all` bus of `unit` ([`out_width`] bits): `{out_bits,
/// out_len, out_model}` (compressor) or `{out_block, out_error, out_model}`.
pub fn fields_of(unit: Unit, bus: &LeBus, params: &Params) -> Fields {
    let h = params.header_bits as usize;
    let model = bus.uint(0, h) as u32;
    match unit {
        Unit::Compressor => {
            let mut bits = [0u8; MAX_BLOCK_BYTES];
            let w = params.max_bits as usize;
            for (d, s) in bits
                .iter_mut()
                .zip(bus.left_aligned(h + LEN_WIDTH as usize, w))
            {
                *d = s;
            }
            Fields::Comp {
                len: bus.uint(h, LEN_WIDTH as usize) as u32,
                model,
                bits,
            }
        }
        Unit::Decompressor | Unit::Loopback => {
            let mut block = [0u8; BLOCK_BYTES];
            block.copy_from_slice(&bus.bytes(h + 1, BLOCK_BYTES));
            Fields::Block {
                error: bus.bit(h),
                model,
                block,
            }
        }
    }
}

/// Read an MPC unit's record file ([`records::read`]) into [`Fields`].
pub fn read_records(path: &Path, unit: Unit, params: &Params) -> Result<MpcOutput, OutputError> {
    Ok(records::read(path, out_width(unit, params))?.decode(|b| Ok(fields_of(unit, b, params))))
}

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

pub(crate) fn describe_expect(e: &Expect) -> String {
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

pub(crate) fn describe_fields(f: &Fields) -> String {
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
pub(crate) fn diff(e: &Expect, f: &Fields) -> Vec<String> {
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

/// Compare one shard's simulation output: the checks of every run
/// ([`verdict::check_run`]) with the MPC golden check of each output.
pub fn compare(shard: &Shard<'_>, out: &MpcOutput, tags: &Tags, stages: usize) -> Verdict {
    let s = RunShape {
        shard: Some(shard.index),
        offset: shard.offset,
        n: shard.inputs.len() as u64,
        stages,
        model: shard.model,
    };
    verdict::check_run(&s, out, |i, rec| {
        let e = &shard.expected[i];
        let what = match &rec.fields {
            Ok(f) => diff(e, f),
            Err(msg) => vec![format!("unreadable output: {msg}")],
        };
        Judged {
            tag: Some(tags.name(shard.inputs.tag(i)).to_string()),
            diff: (!what.is_empty()).then(|| Diff {
                what: what.join(", "),
                input: shard.inputs.describe(i),
                expected: describe_expect(e),
                actual: rec
                    .fields
                    .as_ref()
                    .map_or_else(|m| m.clone(), describe_fields),
            }),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
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
        let mut recs: Vec<MpcRecord> = exp
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
    fn params() -> Params {
        Params {
            header_bits: 2,
            max_bits: 258,
            compressor_latency: 3,
            decompressor_latency: 4,
        }
    }

    #[test]
    fn mpc_fields_of_both_buses() {
        let p = params();
        // {out_bits = 1 then zeros, out_len = 5, out_model = 2}: 269 bits
        let mut bus = LeBus::new();
        bus.put_uint(2, 2);
        bus.put_uint(5, 9);
        bus.put_left_aligned(&[0x80], 1, 258);
        assert_eq!(bus.width(), out_width(Unit::Compressor, &p));
        let text = format!("O 0 3 3 {}\nO 1 4 3 {}\nD 5 2\n", bus.hex(), "x".repeat(68));
        let o = records::parse(
            text.as_bytes(),
            Path::new("t"),
            out_width(Unit::Compressor, &p),
        )
        .expect("parse")
        .decode(|b| Ok(fields_of(Unit::Compressor, b, &p)));
        let Ok(Fields::Comp { len, model, bits }) = o.records[0].fields else {
            panic!("fields {:?}", o.records[0].fields);
        };
        assert_eq!((len, model, bits[0], bits[1]), (5, 2, 0x80, 0));
        assert!(o.records[1].fields.is_err());
        // {out_block = byte 0 is 0xa5, out_error = 1, out_model = 0}
        let mut bus = LeBus::new();
        bus.put_uint(0, 2);
        bus.put_bit(true);
        let mut block = [0u8; 32];
        block[0] = 0xa5;
        bus.put_bytes(&block);
        assert_eq!(bus.width(), out_width(Unit::Decompressor, &p));
        assert_eq!(
            fields_of(Unit::Decompressor, &bus, &p),
            Fields::Block {
                error: true,
                model: 0,
                block
            }
        );
    }
}
