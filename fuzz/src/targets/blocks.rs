//! `block-decoders`: every block decoder on random bit strings and on
//! damaged valid blocks.
//!
//! Decoders: MPC (reference codec and the fast codec with the scalar and,
//! where the CPU has it, the AVX2 kernel) for every shipped model set; BDI,
//! FPC, C-Pack, BPC and SC2 at 32- and 128-byte blocks; MAG-aware BDI and
//! DPC (plain and DF-TRUC) at several geometries, signed mode included.
//!
//! An input is `[len: u32 LE][bits]`; its tag names the decoder. Inputs
//! are random bit strings of random lengths, or a valid compressed block
//! (of a corpus or synthetic block) with bit flips, truncation, extension
//! or a buffer shorter than its length.
//!
//! Oracle: no panic; the MPC reference and both fast kernels agree (same
//! block and bit count, or all fail), also when the block starts at a bit
//! offset; a decoded block re-compresses and decodes to itself (and the
//! fast compressor matches the reference).

use std::path::{Path, PathBuf};

use golden::baselines::sc2::{Sc2, DEFAULT_MAX_LEN};
use golden::baselines::{Bdi, BlockCodec, Bpc, CPack, Fpc};
use golden::dpc::{Dpc, DpcParams};
use golden::magbdi::{DeltaMode, MagBdi, Params};
use golden::mpc::fast::Kernel;
use golden::mpc::{reference, ModelSet, MpcCodec, BLOCK_BYTES};

use super::samples::Samples;
use crate::rng::{fnv1a, Rng};
use crate::{Finding, FuzzError, Input, Paths, Target};

/// MAG-aware BDI geometries: block, MAG, base bytes, delta mode.
const MAG_GEOMETRIES: [(usize, usize, usize, DeltaMode); 5] = [
    (128, 32, 4, DeltaMode::Unsigned),
    (128, 16, 4, DeltaMode::Signed),
    (64, 16, 8, DeltaMode::Signed),
    (32, 8, 2, DeltaMode::Unsigned),
    (256, 64, 8, DeltaMode::Signed),
];

/// DPC geometries: block, segment, sector bytes (the first two also as
/// DF-TRUC).
const DPC_GEOMETRIES: [(usize, usize, usize); 4] =
    [(128, 4, 32), (64, 2, 16), (32, 8, 8), (256, 8, 32)];

/// The MPC decoders of one model set.
struct MpcDecoders {
    set: ModelSet,
    scalar: MpcCodec,
    avx2: Option<MpcCodec>,
}

enum Kind {
    Mpc(Box<MpcDecoders>),
    Codec(Box<dyn BlockCodec>),
    DpcTruc(Dpc),
}

struct Decoder {
    tag: String,
    block_bytes: usize,
    max_bits: usize,
    kind: Kind,
}

pub struct BlockDecoders {
    decoders: Vec<Decoder>,
    samples: Samples,
}

/// SC2 needs a value table; this one is trained on a fixed, skewed word
/// stream so that replays see the same codec.
fn sc2(block: usize) -> Result<Sc2, FuzzError> {
    let mut rng = Rng::new(0x5C2);
    let frequent: Vec<u32> = (0..200).map(|_| rng.next_u32()).collect();
    let words: Vec<u32> = (0..20_000)
        .map(|_| match rng.below(10) {
            0..=3 => 0,
            4..=6 => rng.below(64) as u32,
            7 | 8 => *rng.pick(&frequent),
            _ => rng.next_u32(),
        })
        .collect();
    Sc2::train(block, words, 256, DEFAULT_MAX_LEN)
        .map_err(|e| FuzzError::Setup(format!("SC2: {e}")))
}

/// The model sets whose decoders are fuzzed: every directory of `models`
/// with a `model.toml` (every shipped set), by name.
pub(crate) fn model_sets(models: &Path) -> Result<Vec<(String, PathBuf)>, FuzzError> {
    let setup =
        |e: std::io::Error| FuzzError::Setup(format!("model sets in {}: {e}", models.display()));
    let mut sets = Vec::new();
    for e in std::fs::read_dir(models).map_err(setup)? {
        let dir = e.map_err(setup)?.path();
        if dir.join("model.toml").is_file() {
            let name = dir.file_name().map(|n| n.to_string_lossy().into_owned());
            sets.push((name.unwrap_or_default(), dir));
        }
    }
    sets.sort();
    Ok(sets)
}

impl BlockDecoders {
    pub fn new(paths: &Paths, seed: u64) -> Result<Self, FuzzError> {
        let mut decoders = Vec::new();
        for (name, dir) in model_sets(&paths.models)? {
            let set = ModelSet::load(&dir)
                .map_err(|e| FuzzError::Setup(format!("model set {name}: {e}")))?;
            let avx2 = Kernel::Avx2
                .available()
                .then(|| MpcCodec::with_kernel(&set, Kernel::Avx2));
            decoders.push(Decoder {
                tag: format!("mpc-{name}"),
                block_bytes: BLOCK_BYTES,
                max_bits: set.max_bits() as usize,
                kind: Kind::Mpc(Box::new(MpcDecoders {
                    scalar: MpcCodec::with_kernel(&set, Kernel::Scalar),
                    avx2,
                    set,
                })),
            });
        }
        if decoders.is_empty() {
            return Err(FuzzError::Setup(format!(
                "no MPC model set under {}",
                paths.models.display()
            )));
        }
        let cfg = |e: golden::baselines::ConfigError| FuzzError::Setup(e.to_string());
        for bb in [32usize, 128] {
            let codecs: Vec<(&str, Box<dyn BlockCodec>)> = vec![
                ("bdi", Box::new(Bdi::new(bb).map_err(cfg)?)),
                ("fpc", Box::new(Fpc::new(bb).map_err(cfg)?)),
                ("cpack", Box::new(CPack::new(bb).map_err(cfg)?)),
                ("bpc", Box::new(Bpc::new(bb).map_err(cfg)?)),
                ("sc2", Box::new(sc2(bb)?)),
            ];
            for (n, c) in codecs {
                decoders.push(Decoder {
                    tag: format!("{n}-{bb}"),
                    block_bytes: bb,
                    max_bits: c.max_bits(),
                    kind: Kind::Codec(c),
                });
            }
        }
        for (b, m, k, mode) in MAG_GEOMETRIES {
            let c = MagBdi::new(Params::new(b, m, k, mode))
                .map_err(|e| FuzzError::Setup(e.to_string()))?;
            decoders.push(Decoder {
                tag: format!("magbdi-{b}-{m}-{k}-{mode}"),
                block_bytes: b,
                max_bits: c.max_bits(),
                kind: Kind::Codec(Box::new(c)),
            });
        }
        for (i, (b, s, k)) in DPC_GEOMETRIES.into_iter().enumerate() {
            let p = DpcParams::new(b, s, k).map_err(|e| FuzzError::Setup(e.to_string()))?;
            decoders.push(Decoder {
                tag: format!("dpc-{b}-{s}-{k}"),
                block_bytes: b,
                max_bits: p.max_bits(),
                kind: Kind::Codec(Box::new(Dpc::new(p))),
            });
            if i < 2 {
                decoders.push(Decoder {
                    tag: format!("dpctruc-{b}-{s}-{k}"),
                    block_bytes: b,
                    max_bits: p.max_truc_bits(),
                    kind: Kind::DpcTruc(Dpc::new(p)),
                });
            }
        }
        Ok(BlockDecoders {
            decoders,
            samples: Samples::load(paths.corpus.as_deref(), seed),
        })
    }

    /// Every decoder's tag.
    pub fn tags(&self) -> Vec<&str> {
        self.decoders.iter().map(|d| d.tag.as_str()).collect()
    }

    fn encode(d: &Decoder, block: &[u8], rng: &mut Rng) -> Option<(Vec<u8>, usize)> {
        match &d.kind {
            Kind::Mpc(m) => {
                let b: &[u8; BLOCK_BYTES] = block.try_into().ok()?;
                let c = reference::compress(b, &m.set);
                Some((c.as_bytes().to_vec(), c.len as usize))
            }
            Kind::Codec(c) => {
                let e = c.compress(block);
                Some((e.bytes, e.len))
            }
            Kind::DpcTruc(dpc) => {
                let mask = rng.below(dpc.params().full_mask() as u64 + 1) as u32;
                let e = dpc.encode_truc(block, mask).ok()?;
                Some((e.bytes, e.len))
            }
        }
    }
}

/// `[len: u32 LE][bits]` of a block-decoder input.
pub fn split_input(data: &[u8]) -> (usize, &[u8]) {
    let len = data
        .get(..4)
        .and_then(|s| s.try_into().ok())
        .map(u32::from_le_bytes)
        .unwrap_or(0);
    (len as usize, data.get(4..).unwrap_or(&[]))
}

pub fn join_input(len: usize, bits: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(4 + bits.len());
    v.extend_from_slice(&(len as u32).to_le_bytes());
    v.extend_from_slice(bits);
    v
}

/// `bits` moved `off` bits later (zeros before), one byte longer.
fn shifted(bits: &[u8], off: usize) -> Vec<u8> {
    let mut out = vec![0u8; bits.len() + 2];
    for i in 0..bits.len() * 8 {
        if bits[i / 8] >> (7 - i % 8) & 1 == 1 {
            let j = i + off;
            out[j / 8] |= 1 << (7 - j % 8);
        }
    }
    out
}

type Prefix = Result<([u8; BLOCK_BYTES], usize), golden::mpc::DecodeError>;

fn same_outcome<T: PartialEq, E>(a: &Result<T, E>, b: &Result<T, E>) -> bool {
    match (a, b) {
        (Ok(x), Ok(y)) => x == y,
        (Err(_), Err(_)) => true,
        _ => false,
    }
}

fn show<T, E: std::fmt::Display>(r: &Result<T, E>) -> String {
    match r {
        Ok(_) => "ok".into(),
        Err(e) => format!("error: {e}"),
    }
}

fn check_mpc(
    set: &ModelSet,
    scalar: &MpcCodec,
    avx2: Option<&MpcCodec>,
    len: usize,
    bits: &[u8],
    off: usize,
) -> Result<(), Finding> {
    let r = reference::decompress(bits, len, set);
    let mut fast = vec![("scalar", scalar)];
    if let Some(a) = avx2 {
        fast.push(("avx2", a));
    }
    for (name, c) in &fast {
        let f = c.decompress(bits, len);
        if !same_outcome(&r, &f) {
            return Err(Finding::new(
                "mpc-kernels-disagree",
                format!(
                    "decompress of {len} bits: reference {}, {name} {}",
                    show(&r),
                    show(&f)
                ),
            ));
        }
    }
    let rp: Prefix = reference::decompress_prefix(bits, len, set);
    for (name, c) in &fast {
        let f = c.decompress_prefix(bits, len);
        if !same_outcome(&rp, &f) {
            return Err(Finding::new(
                "mpc-kernels-disagree",
                format!(
                    "decompress_prefix of at most {len} bits: reference {}, {name} {}",
                    show(&rp),
                    show(&f)
                ),
            ));
        }
        if len <= 8 * bits.len() {
            let src = shifted(bits, off);
            let g = c.decompress_at(&src, off, len);
            if !same_outcome(&rp, &g) {
                return Err(Finding::new(
                    "mpc-offset-disagrees",
                    format!(
                        "{name} decompress_at bit {off}: {}, at bit 0: {}",
                        show(&g),
                        show(&rp)
                    ),
                ));
            }
        }
    }
    if let Ok(block) = r {
        let c = reference::compress(&block, set);
        match reference::decompress(c.as_bytes(), c.len as usize, set) {
            Ok(b2) if b2 == block => {}
            other => {
                return Err(Finding::new(
                    "reencode-mismatch",
                    format!(
                        "a decoded block re-compressed to {} bits decodes to {}",
                        c.len,
                        match other {
                            Ok(_) => "another block".to_string(),
                            Err(e) => format!("an error: {e}"),
                        }
                    ),
                ))
            }
        }
        for (name, f) in &fast {
            if f.compress(&block) != c {
                return Err(Finding::new(
                    "mpc-kernels-disagree",
                    format!("{name} compress differs from the reference on a decoded block"),
                ));
            }
        }
    }
    Ok(())
}

fn check_codec(
    c: &dyn BlockCodec,
    bb: usize,
    max_bits: usize,
    len: usize,
    bits: &[u8],
) -> Result<(), Finding> {
    let Ok(block) = c.decompress(bits, len) else {
        return Ok(());
    };
    if block.len() != bb {
        return Err(Finding::new(
            "decoded-size",
            format!(
                "{len} bits decode to {} bytes, blocks are {bb}",
                block.len()
            ),
        ));
    }
    let e = c.compress(&block);
    if e.len > max_bits || e.bytes.len() != e.len.div_ceil(8) {
        return Err(Finding::new(
            "reencode-size",
            format!(
                "re-compressed block of {} bits in {} bytes (max {max_bits} bits)",
                e.len,
                e.bytes.len()
            ),
        ));
    }
    match c.decompress(&e.bytes, e.len) {
        Ok(b2) if b2 == block => Ok(()),
        other => Err(Finding::new(
            "reencode-mismatch",
            format!(
                "a decoded block re-compressed to {} bits {}",
                e.len,
                match other {
                    Ok(_) => "decodes to another block".to_string(),
                    Err(err) => format!("does not decode: {err}"),
                }
            ),
        )),
    }
}

fn check_truc(dpc: &Dpc, len: usize, bits: &[u8]) -> Result<(), Finding> {
    let Ok((block, mask)) = dpc.decode_truc(bits, len) else {
        return Ok(());
    };
    let e = match dpc.encode_truc(&block, mask) {
        Ok(e) => e,
        Err(err) => {
            return Err(Finding::new(
                "reencode-mismatch",
                format!("DF-TRUC decodes mask {mask:#x} that its encoder refuses: {err}"),
            ))
        }
    };
    match dpc.decode_truc(&e.bytes, e.len) {
        Ok((b2, m2)) if b2 == block && m2 == mask => Ok(()),
        _ => Err(Finding::new(
            "reencode-mismatch",
            format!(
                "a decoded DF-TRUC block re-compressed to {} bits does not decode to itself",
                e.len
            ),
        )),
    }
}

impl Target for BlockDecoders {
    fn next_input(&mut self, rng: &mut Rng) -> Input {
        let di = rng.index(self.decoders.len());
        let d = &self.decoders[di];
        let mut note = String::new();
        let valid = if rng.chance(2, 3) {
            let block = self.samples.block(rng, d.block_bytes);
            Self::encode(d, &block, rng)
        } else {
            None
        };
        let (bits, len) = match valid {
            Some((mut bytes, mut len)) => {
                match rng.below(7) {
                    0 => note.push_str("valid block"),
                    1 | 2 => {
                        let k = rng.small(3);
                        for _ in 0..k {
                            let i = rng.index(len.max(1));
                            if let Some(b) = bytes.get_mut(i / 8) {
                                *b ^= 1 << (7 - i % 8);
                            }
                        }
                        note = format!("valid block, {k} bit flips");
                    }
                    3 => {
                        let k = (rng.small(16) as usize).min(len);
                        len -= k;
                        if rng.bool() {
                            bytes.truncate(len.div_ceil(8));
                        }
                        note = format!("valid block cut by {k} bits");
                    }
                    4 => {
                        let k = rng.small(16) as usize;
                        bytes.resize(len.div_ceil(8), 0);
                        for i in len..len + k {
                            if bytes.len() <= i / 8 {
                                bytes.push(0);
                            }
                            if rng.bool() {
                                bytes[i / 8] |= 1 << (7 - i % 8);
                            }
                        }
                        len += k;
                        note = format!("valid block extended by {k} bits");
                    }
                    5 => {
                        let k = rng.index(bytes.len() + 1);
                        bytes.truncate(k);
                        note = format!("valid block, buffer cut to {k} bytes");
                    }
                    _ => {
                        len = rng.below(d.max_bits as u64 + 9) as usize;
                        note = format!("valid block, length set to {len}");
                    }
                }
                (bytes, len)
            }
            None => {
                let n = rng.index(d.max_bits / 8 + 9);
                let bytes = rng.bytes(n);
                let len = match rng.below(4) {
                    0 => 8 * n,
                    1 => rng.index(8 * n + 17),
                    2 => d.max_bits,
                    _ => rng.index(d.max_bits + 1),
                };
                note = format!("random {n} bytes, {len} bits");
                (bytes, len)
            }
        };
        Input {
            tag: d.tag.clone(),
            data: join_input(len, &bits),
            note,
        }
    }

    fn check(&self, input: &Input) -> Result<(), Finding> {
        let Some(d) = self.decoders.iter().find(|d| d.tag == input.tag) else {
            return Err(Finding::new(
                "unreadable-input",
                format!(
                    "no decoder `{}` (known: {})",
                    input.tag,
                    self.tags().join(", ")
                ),
            ));
        };
        let (len, bits) = split_input(&input.data);
        match &d.kind {
            Kind::Mpc(m) => {
                let off = 1 + (fnv1a(&input.data) % 15) as usize;
                check_mpc(&m.set, &m.scalar, m.avx2.as_ref(), len, bits, off)
            }
            Kind::Codec(c) => check_codec(c.as_ref(), d.block_bytes, d.max_bits, len, bits),
            Kind::DpcTruc(dpc) => check_truc(dpc, len, bits),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use golden::baselines::{Compressed, DecodeError};

    /// A codec whose encoder drops the low bit of every byte, and whose
    /// decoder returns `n` bytes.
    struct Lossy(usize);

    impl BlockCodec for Lossy {
        fn name(&self) -> &str {
            "lossy"
        }
        fn block_bytes(&self) -> usize {
            4
        }
        fn compress(&self, block: &[u8]) -> Compressed {
            Compressed {
                bytes: block.iter().map(|b| b & 0xfe).collect(),
                len: 32,
            }
        }
        fn decompress(&self, bits: &[u8], len: usize) -> Result<Vec<u8>, DecodeError> {
            if len != 32 || bits.len() < 4 {
                return Err(DecodeError::ShortBuffer {
                    codec: "lossy",
                    len,
                    have: bits.len(),
                });
            }
            Ok(bits[..self.0].to_vec())
        }
        fn max_bits(&self) -> usize {
            32
        }
    }

    #[test]
    fn codec_oracle_catches_wrong_sizes_and_lossy_round_trips() {
        let even = [2u8, 4, 6, 8];
        assert_eq!(check_codec(&Lossy(4), 4, 32, 32, &even), Ok(()));
        assert_eq!(
            check_codec(&Lossy(4), 4, 32, 7, &even),
            Ok(()),
            "errors are fine"
        );
        let f = check_codec(&Lossy(4), 4, 32, 32, &[3, 4, 6, 8]).expect_err("lossy");
        assert_eq!(f.class, "reencode-mismatch");
        let f = check_codec(&Lossy(3), 4, 32, 32, &even).expect_err("3 bytes for 4");
        assert_eq!(f.class, "decoded-size");
    }

    #[test]
    fn valid_blocks_of_every_decoder_pass_and_shift_moves_bits() {
        assert_eq!(shifted(&[0b1010_0000], 3), vec![0b0001_0100, 0, 0]);
        assert_eq!(split_input(&join_input(9, &[1, 2])), (9, &[1u8, 2][..]));
        let paths = Paths::default_for_workspace();
        let t = BlockDecoders::new(&paths, 1).expect("target");
        assert!(t.tags().contains(&"magbdi-128-16-4-signed"));
        let mut rng = Rng::new(4);
        for d in &t.decoders {
            for _ in 0..20 {
                let block = t.samples.block(&mut rng, d.block_bytes);
                let (bytes, len) = BlockDecoders::encode(d, &block, &mut rng).expect("encodes");
                let input = Input {
                    tag: d.tag.clone(),
                    data: join_input(len, &bytes),
                    note: String::new(),
                };
                assert_eq!(t.check(&input), Ok(()), "{}", d.tag);
            }
        }
    }
}
