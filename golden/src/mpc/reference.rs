//! The reference MPC codec: `docs/spec/mpc.md` step by step, with traces.

use crate::bits::{BitReader, BitWriter};

use super::model::{ModelKind, ModelSet};
use super::select::{self, CandidateScore};
use super::table1::{self, Code};
use super::trace::{CompressTrace, DecompressTrace, PredictorTrace};
use super::transform;
use super::{CompressedBlock, DecodeError, BLOCK_BYTES, MAX_BLOCK_BYTES, PLANES, SYMBOLS};

/// Compress one block (reference path).
pub fn compress(block: &[u8; BLOCK_BYTES], set: &ModelSet) -> CompressedBlock {
    compress_traced(block, set).output
}

/// Run one predictor through stages 1..4.
pub fn trace_predictor(block: &[u8; BLOCK_BYTES], p: &super::Predictor) -> PredictorTrace {
    let pred = transform::predictions(block, p);
    let residue = transform::residues(block, &pred);
    let planes = transform::planes(&residue);
    let xored = transform::xor_planes(&planes);
    let stream = transform::reorder(&xored, &p.reorder);
    let symbols = transform::symbols(&stream);
    PredictorTrace {
        pred,
        residue,
        planes,
        xored,
        symbols,
        score: CandidateScore::of(&symbols),
    }
}

/// Compress one block and keep every intermediate value.
pub fn compress_traced(block: &[u8; BLOCK_BYTES], set: &ModelSet) -> CompressTrace {
    let candidates: Vec<PredictorTrace> = set
        .predictors
        .iter()
        .map(|p| trace_predictor(block, p))
        .collect();
    let scores: Vec<CandidateScore> = candidates.iter().map(|c| c.score).collect();
    let selected_id = select::select(set, block, &scores);
    let mut w = BitWriter::<MAX_BLOCK_BYTES>::new();
    w.put(selected_id, set.header_bits());
    let mut codes = Vec::new();
    match set.kind_of(selected_id) {
        Some(ModelKind::ZeroBlock) => {}
        Some(ModelKind::SameWords) => {
            for &b in &block[0..4] {
                w.put(b as u32, 8);
            }
        }
        Some(ModelKind::Predictor(i)) => {
            table1::encode_symbols(&candidates[i].symbols, |c| codes.push(c));
            for c in &codes {
                let (bits, len) = c.bits();
                w.put(bits, len);
            }
        }
        Some(ModelKind::Raw) | None => {
            for &b in block {
                w.put(b as u32, 8);
            }
        }
    }
    let (bytes, len) = w.finish();
    CompressTrace {
        block: *block,
        is_zero_block: select::is_zero_block(block),
        is_same_words: select::is_same_words(block),
        candidates,
        selected_id,
        codes,
        output: CompressedBlock {
            model: selected_id,
            len: len as u32,
            bytes,
        },
    }
}

/// Read the model-ID header.
pub(crate) fn read_header(
    r: &mut BitReader<'_>,
    set: &ModelSet,
    len: usize,
) -> Result<(u32, ModelKind), DecodeError> {
    let h = set.header_bits();
    let id = r.get(h).ok_or(DecodeError::Truncated {
        at: 0,
        needed: h as usize,
        len,
    })?;
    let kind = set.kind_of(id).ok_or(DecodeError::BadModelId {
        id,
        max: set.raw_id(),
    })?;
    Ok((id, kind))
}

fn need(r: &mut BitReader<'_>, width: u32, len: usize) -> Result<u32, DecodeError> {
    let at = r.position();
    let remaining = r.remaining();
    r.get(width).ok_or_else(|| DecodeError::Truncated {
        at,
        needed: width as usize - remaining,
        len,
    })
}

/// Read Table-1 codes until 16 symbols are complete.
pub(crate) fn decode_symbols(
    r: &mut BitReader<'_>,
    len: usize,
    on_code: impl FnMut(Code),
) -> Result<[u16; SYMBOLS], DecodeError> {
    decode_symbols_with(r, len, on_code, true)
}

/// `decode_symbols`; `peek` enables the one-peek fast path used whenever
/// the longest code fits in the remaining bits (tests compare both paths).
fn decode_symbols_with(
    r: &mut BitReader<'_>,
    len: usize,
    mut on_code: impl FnMut(Code),
    peek: bool,
) -> Result<[u16; SYMBOLS], DecodeError> {
    let mut symbols = [0u16; SYMBOLS];
    let mut m = 0;
    while m < SYMBOLS {
        let at = r.position();
        let code = if peek && r.remaining() >= 17 {
            // Fast path: the longest code fits, decode from one peek.
            let w = r.peek32();
            let (code, used) = if w >> 31 == 1 {
                (Code::Default((w >> 15) as u16), 17)
            } else if w >> 30 == 0b01 {
                let f = (w >> 25) & 0xf;
                if (w >> 29) & 1 == 0 {
                    if f < 2 {
                        return Err(DecodeError::BadRunLength {
                            symbol: m,
                            run: f,
                            at,
                        });
                    }
                    (Code::ZeroRun(f as u8), 7)
                } else {
                    (Code::SingleOne(f as u8), 7)
                }
            } else {
                match (w >> 28) & 0b11 {
                    0b00 => {
                        let q = (w >> 24) & 0xf;
                        if q == 15 {
                            return Err(DecodeError::BadPairPosition { symbol: m, at });
                        }
                        (Code::TwoOnes(q as u8), 8)
                    }
                    0b01 => (Code::FrontHalfZero((w >> 20) as u8), 12),
                    0b10 => (Code::BackHalfZero((w >> 20) as u8), 12),
                    _ => (Code::Zero, 4),
                }
            };
            r.skip(used);
            code
        } else if need(r, 1, len)? == 1 {
            Code::Default(need(r, 16, len)? as u16)
        } else if need(r, 1, len)? == 1 {
            // 01x
            if need(r, 1, len)? == 0 {
                let run = need(r, 4, len)?;
                if run < 2 {
                    return Err(DecodeError::BadRunLength { symbol: m, run, at });
                }
                Code::ZeroRun(run as u8)
            } else {
                Code::SingleOne(need(r, 4, len)? as u8)
            }
        } else {
            // 00xx
            match need(r, 2, len)? {
                0b00 => {
                    let q = need(r, 4, len)?;
                    if q == 15 {
                        return Err(DecodeError::BadPairPosition { symbol: m, at });
                    }
                    Code::TwoOnes(q as u8)
                }
                0b01 => Code::FrontHalfZero(need(r, 8, len)? as u8),
                0b10 => Code::BackHalfZero(need(r, 8, len)? as u8),
                _ => Code::Zero,
            }
        };
        let n = code.symbols();
        if m + n > SYMBOLS {
            return Err(DecodeError::RunOverflow {
                symbol: m,
                run: n as u32,
                at,
            });
        }
        if n == 1 {
            symbols[m] = code.symbol_value();
        }
        m += n;
        on_code(code);
    }
    Ok(symbols)
}

/// Decode one block from the start of `bytes`, reading at most `avail` bits;
/// returns the block and the number of bits it used.
pub fn decompress_prefix(
    bytes: &[u8],
    avail: usize,
    set: &ModelSet,
) -> Result<([u8; BLOCK_BYTES], usize), DecodeError> {
    decompress_traced_prefix(bytes, avail, set).map(|t| (t.block, t.used))
}

/// Decode one block of exactly `len` bits.
pub fn decompress(
    bytes: &[u8],
    len: usize,
    set: &ModelSet,
) -> Result<[u8; BLOCK_BYTES], DecodeError> {
    decompress_traced(bytes, len, set).map(|t| t.block)
}

/// Check that `len` bits are present and within the set's maximum.
pub(crate) fn check_length(bytes: &[u8], len: usize, set: &ModelSet) -> Result<(), DecodeError> {
    let max = set.max_bits() as usize;
    if len > max {
        return Err(DecodeError::TooLong { len, max });
    }
    if bytes.len() * 8 < len {
        return Err(DecodeError::Truncated {
            at: bytes.len() * 8,
            needed: len - bytes.len() * 8,
            len,
        });
    }
    Ok(())
}

/// Decode one block of exactly `len` bits, keeping every stage.
pub fn decompress_traced(
    bytes: &[u8],
    len: usize,
    set: &ModelSet,
) -> Result<DecompressTrace, DecodeError> {
    check_length(bytes, len, set)?;
    let t = decompress_traced_prefix(bytes, len, set)?;
    if t.used != len {
        return Err(DecodeError::TrailingBits {
            used: t.used,
            extra: len - t.used,
        });
    }
    Ok(t)
}

fn decompress_traced_prefix(
    bytes: &[u8],
    avail: usize,
    set: &ModelSet,
) -> Result<DecompressTrace, DecodeError> {
    let len = avail.min(bytes.len() * 8);
    let mut r = BitReader::new(bytes, len);
    let (model_id, kind) = read_header(&mut r, set, len)?;
    let mut t = DecompressTrace {
        model_id,
        codes: Vec::new(),
        symbols: [0; SYMBOLS],
        xored: [0; PLANES],
        planes: [0; PLANES],
        residue: [0; BLOCK_BYTES],
        block: [0; BLOCK_BYTES],
        used: 0,
    };
    match kind {
        ModelKind::ZeroBlock => {}
        ModelKind::SameWords => {
            let mut word = [0u8; 4];
            for b in &mut word {
                *b = need(&mut r, 8, len)? as u8;
            }
            for w in t.block.chunks_exact_mut(4) {
                w.copy_from_slice(&word);
            }
        }
        ModelKind::Raw => {
            for b in t.block.iter_mut() {
                *b = need(&mut r, 8, len)? as u8;
            }
        }
        ModelKind::Predictor(i) => {
            let p = &set.predictors[i];
            let mut codes = Vec::new();
            t.symbols = decode_symbols(&mut r, len, |c| codes.push(c))?;
            t.codes = codes;
            let stream = transform::stream_from_symbols(&t.symbols);
            t.xored = transform::unreorder(&stream, &p.reorder);
            t.planes = transform::unxor_planes(&t.xored);
            t.residue = transform::residues_from_planes(&t.planes);
            t.block = transform::restore(&t.residue, p);
        }
    }
    t.used = r.position();
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The one-peek fast path decodes exactly like field-by-field reading,
    /// errors included, on pseudo-random bit strings.
    #[test]
    fn peek_and_field_by_field_decoding_agree() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..20_000 {
            let n = (next() % 34) as usize;
            // bias toward zeros so that valid blocks occur
            let bytes: Vec<u8> = (0..n).map(|_| (next() & next() & next()) as u8).collect();
            let len = (next() as usize) % (n * 8 + 1);
            let decode = |peek: bool| {
                let mut r = BitReader::new(&bytes, len);
                let mut codes = Vec::new();
                let res = decode_symbols_with(&mut r, len, |c| codes.push(c), peek);
                // the reader position is observable only after success
                let pos = res.is_ok().then(|| r.position());
                (res, codes, pos)
            };
            assert_eq!(decode(true), decode(false), "bytes {bytes:02x?} len {len}");
        }
    }
}
