//! Table-driven MPC codec with output identical to [`super::reference`].
//!
//! Forward: prediction, residues and the per-byte Gray code (the XOR of each
//! plane with the plane above, spec stage 2) are byte-parallel; the
//! transpose to planes and the reorder (stages 2-3) are one bit permutation
//! from residue bits to symbol bits, a Beneš network of 15 masked swaps per
//! predictor ([`benes`], layouts in [`tables`]). Table-1 codes are chosen
//! without branches and written through a 64-bit register
//! ([`crate::bits::SliceWriter`]).
//! Inverse: Table-1 decoding from 64-bit windows, the inverse network,
//! inverse Gray code and restoration along the trees.
//!
//! The byte-parallel steps run in one of three kernels with identical
//! results: [`Kernel::Avx512`] (x86-64 CPUs with AVX-512 VBMI and BITALG:
//! the whole reorder as byte gathers and bit shuffles instead of the
//! network), [`Kernel::Avx2`] (x86-64 CPUs with AVX2), both detected at run
//! time, or [`Kernel::Scalar`] (everywhere).

mod benes;
mod decode;
mod emit;
mod scalar;
mod tables;

#[cfg(target_arch = "x86_64")]
mod avx2;
// AVX-512 intrinsics: Rust 1.89 or later (the workspace's rust-version)
#[cfg(target_arch = "x86_64")]
mod avx512;

use crate::bits::{BitReader, SliceWriter};

use super::model::{ModelKind, ModelSet, Selection};
use super::reference::{check_length, decode_symbols, read_header};
use super::select::{self, CandidateScore, Choice};
use super::{CompressedBlock, DecodeError, BLOCK_BYTES, MAX_BLOCK_BYTES, SYMBOLS};
use tables::PredictorTables;

/// Which implementation runs the byte-parallel steps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kernel {
    /// Portable Rust.
    Scalar,
    /// x86-64 AVX2 with POPCNT, BMI1 and LZCNT (byte shuffles, 16-bit
    /// multiplies, the Beneš network one register wide).
    Avx2,
    /// [`Kernel::Avx2`] plus AVX-512 F, BW, VL, CD, VBMI, BITALG and
    /// VPOPCNTDQ: the reorder as four byte gathers (`vpermb`) and four bit
    /// shuffles (`vpshufbitqmb`), prediction as a byte gather and a
    /// multishift (`vpmultishiftqb`), the Table-1 codes of all 16 symbols
    /// at once.
    Avx512,
}

impl Kernel {
    /// The fastest kernel this CPU runs.
    pub fn best() -> Kernel {
        if Kernel::Avx512.available() {
            Kernel::Avx512
        } else if Kernel::Avx2.available() {
            Kernel::Avx2
        } else {
            Kernel::Scalar
        }
    }

    /// Whether this CPU can run the kernel.
    pub fn available(self) -> bool {
        match self {
            Kernel::Scalar => true,
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 => {
                std::is_x86_feature_detected!("avx2")
                    && std::is_x86_feature_detected!("popcnt")
                    && std::is_x86_feature_detected!("bmi1")
                    && std::is_x86_feature_detected!("lzcnt")
            }
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512 => {
                Kernel::Avx2.available()
                    && std::is_x86_feature_detected!("avx512f")
                    && std::is_x86_feature_detected!("avx512bw")
                    && std::is_x86_feature_detected!("avx512vl")
                    && std::is_x86_feature_detected!("avx512vbmi")
                    && std::is_x86_feature_detected!("avx512bitalg")
                    && std::is_x86_feature_detected!("avx512cd")
                    && std::is_x86_feature_detected!("avx512vpopcntdq")
            }
            #[cfg(not(target_arch = "x86_64"))]
            Kernel::Avx2 | Kernel::Avx512 => false,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Kernel::Scalar => "scalar",
            Kernel::Avx2 => "avx2",
            Kernel::Avx512 => "avx512",
        }
    }
}

/// Bytes [`MpcCodec::compress_into`] may touch from the byte holding its
/// first bit: the longest attempt (7 bits before it in that byte, an 8-bit
/// header, 16 default codes: 287 bits, so its last store ends by byte 43)
/// with room to spare.
pub const WRITE_BYTES: usize = 48;

/// Zero masks the zero-run selection scores at once (more predictors take
/// the portable loop).
const BEST_LANES: usize = 32;

/// The first predictor with the largest zero-run key (longest run of zero
/// symbols, then number of zero symbols), given the zero masks in order:
/// what [`select::choose`] picks under zero-run.
fn best_zero_run(masks: impl Iterator<Item = u16>) -> usize {
    let mut best = (0, 0u16);
    for (i, m) in masks.enumerate() {
        let key = (select::longest_run_of_ones(m) as u16) << 8 | m.count_ones() as u16;
        if i == 0 || key > best.1 {
            best = (i, key);
        }
    }
    best.0
}

/// A model set prepared for fast compression and decompression.
pub struct MpcCodec {
    set: ModelSet,
    header_bits: u32,
    /// Model kind of every header value (`None`: unused ID).
    kinds: Vec<Option<ModelKind>>,
    tables: Vec<PredictorTables>,
    kernel: Kernel,
    #[cfg(target_arch = "x86_64")]
    vectors: Vec<avx2::Vectors>,
    #[cfg(target_arch = "x86_64")]
    vectors512: Vec<avx512::Vectors>,
}

impl MpcCodec {
    /// The codec with the fastest kernel of this CPU.
    pub fn new(set: &ModelSet) -> Self {
        Self::with_kernel(set, Kernel::best())
    }

    /// The codec with `kernel`, or the scalar one where this CPU lacks it
    /// ([`kernel`](Self::kernel) tells which runs).
    pub fn with_kernel(set: &ModelSet, kernel: Kernel) -> Self {
        let tables: Vec<PredictorTables> =
            set.predictors.iter().map(PredictorTables::new).collect();
        let header_bits = set.header_bits();
        MpcCodec {
            set: set.clone(),
            header_bits,
            kinds: (0..1u32 << header_bits).map(|id| set.kind_of(id)).collect(),
            kernel: if kernel.available() {
                kernel
            } else {
                Kernel::Scalar
            },
            #[cfg(target_arch = "x86_64")]
            vectors: tables.iter().map(avx2::Vectors::new).collect(),
            #[cfg(target_arch = "x86_64")]
            vectors512: tables.iter().map(avx512::Vectors::new).collect(),
            tables,
        }
    }

    pub fn model_set(&self) -> &ModelSet {
        &self.set
    }

    /// The kernel in use.
    pub fn kernel(&self) -> Kernel {
        self.kernel
    }

    #[inline]
    fn restore(&self, i: usize, symbols: &[u16; SYMBOLS]) -> [u8; BLOCK_BYTES] {
        match self.kernel {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `Avx2` is only selected when the CPU has AVX2.
            Kernel::Avx2 => unsafe {
                avx2::restore(&self.vectors[i], self.tables[i].depth, symbols)
            },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `Avx512` is only selected when the CPU has its features.
            Kernel::Avx512 => unsafe {
                avx512::restore(&self.vectors512[i], self.tables[i].depth, symbols)
            },
            _ => scalar::restore(&self.tables[i], symbols),
        }
    }

    /// The 16 transformed symbols of predictor `i` for `block`.
    pub fn predictor_symbols(&self, i: usize, block: &[u8; BLOCK_BYTES]) -> [u16; SYMBOLS] {
        match self.kernel {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `Avx2` is only selected when the CPU has AVX2.
            Kernel::Avx2 => unsafe {
                avx2::finish(&self.vectors[i], &avx2::grouped(&self.vectors[i], block).0)
            },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `Avx512` is only selected when the CPU has its features.
            Kernel::Avx512 => unsafe { avx512::symbols(&self.vectors512[i], block).0 },
            _ => scalar::finish(&self.tables[i], &scalar::grouped(&self.tables[i], block).0),
        }
    }

    /// Compress one block into `buf` from bit `bit` on (earlier bits of that
    /// byte are kept); returns the model ID and the bits written, identical
    /// to [`super::compress`]. `buf` must hold [`WRITE_BYTES`] bytes from
    /// byte `bit / 8` on; bytes after the block's last bit may be
    /// overwritten.
    pub fn compress_into(
        &self,
        block: &[u8; BLOCK_BYTES],
        buf: &mut [u8],
        bit: usize,
    ) -> (u32, usize) {
        assert!(
            buf.len() >= bit / 8 + WRITE_BYTES,
            "MpcCodec::compress_into: {} bytes from byte {} needed, the buffer has {}",
            WRITE_BYTES,
            bit / 8,
            buf.len()
        );
        match self.kernel {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `Avx2` is only selected when the CPU has its features.
            Kernel::Avx2 => unsafe { self.compress_avx2(block, buf, bit) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `Avx512` is only selected when the CPU has its features.
            Kernel::Avx512 => unsafe { self.compress_avx512(block, buf, bit) },
            _ => self.compress_with(
                block,
                buf,
                bit,
                |i, b| scalar::grouped(&self.tables[i], b),
                |i, g| scalar::finish(&self.tables[i], g),
                emit::put_symbols,
                |masks, n| best_zero_run(masks[..n].iter().copied()),
            ),
        }
    }

    /// [`compress_into`](Self::compress_into) compiled for AVX2 and its
    /// companions (POPCNT, LZCNT, TZCNT) with the AVX2 kernel inlined.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,popcnt,bmi1,lzcnt")]
    fn compress_avx2(&self, block: &[u8; BLOCK_BYTES], buf: &mut [u8], bit: usize) -> (u32, usize) {
        self.compress_with(
            block,
            buf,
            bit,
            |i, b| avx2::grouped(&self.vectors[i], b),
            |i, g| avx2::finish(&self.vectors[i], g),
            emit::put_symbols,
            |masks, n| best_zero_run(masks[..n].iter().copied()),
        )
    }

    /// [`compress_into`](Self::compress_into) compiled for AVX-512 with the
    /// AVX-512 kernel inlined (its symbols are final: nothing to finish).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(
        enable = "avx2,popcnt,bmi1,lzcnt,avx512f,avx512bw,avx512vl,avx512vbmi,avx512bitalg"
    )]
    fn compress_avx512(
        &self,
        block: &[u8; BLOCK_BYTES],
        buf: &mut [u8],
        bit: usize,
    ) -> (u32, usize) {
        self.compress_with(
            block,
            buf,
            bit,
            |i, b| avx512::symbols(&self.vectors512[i], b),
            |_, s| *s,
            |w, s, zero_mask| {
                // SAFETY: this function runs only where the CPU has the
                // kernel's features.
                let (vals, lens) = unsafe { avx512::codes(s, zero_mask) };
                emit::put_fields(w, &vals, &lens)
            },
            |masks, n| avx512::best_zero_run(masks, n),
        )
    }

    /// The compressor, given the kernel's stages 1-4 (`grouped` then
    /// `finish`, see [`avx2::grouped`]).
    // the block, the output and the kernel's four steps
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn compress_with(
        &self,
        block: &[u8; BLOCK_BYTES],
        buf: &mut [u8],
        bit: usize,
        grouped: impl Fn(usize, &[u8; BLOCK_BYTES]) -> ([u16; SYMBOLS], u16),
        finish: impl Fn(usize, &[u16; SYMBOLS]) -> [u16; SYMBOLS],
        emit: impl Fn(&mut SliceWriter<'_>, &[u16; SYMBOLS], u16) -> u32,
        best: impl Fn(&[u16; BEST_LANES], usize) -> usize,
    ) -> (u32, usize) {
        let set = &self.set;
        let h = self.header_bits;
        let raw = |buf: &mut [u8], id: u32, bytes: &[u8]| {
            let mut w = SliceWriter::new(buf, bit);
            w.put(id as u64, h);
            for word in bytes.chunks_exact(4) {
                w.flush();
                w.put(
                    u32::from_be_bytes([word[0], word[1], word[2], word[3]]) as u64,
                    32,
                );
            }
            (id, w.finish() - bit)
        };
        if set.custom.zero_block && select::is_zero_block(block) {
            return raw(buf, 0, &[]);
        }
        const STACK: usize = 16;
        let n = self.tables.len();
        let mut scores_stack = [CandidateScore::default(); STACK];
        let mut symbols_stack = [[0u16; SYMBOLS]; STACK];
        let (mut scores_heap, mut symbols_heap) = (Vec::new(), Vec::new());
        let (scores, all_symbols): (&mut [CandidateScore], &mut [[u16; SYMBOLS]]) = if n <= STACK {
            (&mut scores_stack[..n], &mut symbols_stack[..n])
        } else {
            scores_heap.resize(n, CandidateScore::default());
            symbols_heap.resize(n, [0u16; SYMBOLS]);
            (&mut scores_heap, &mut symbols_heap)
        };
        // zero-run reads only the zero masks: their keys come after the loop
        let mut masks = [0u16; BEST_LANES];
        for (i, (score, symbols)) in scores.iter_mut().zip(all_symbols.iter_mut()).enumerate() {
            let (s, zero_mask) = grouped(i, block);
            *symbols = s;
            *score = match set.selection {
                Selection::ZeroRun => {
                    if let Some(m) = masks.get_mut(i) {
                        *m = zero_mask;
                    }
                    CandidateScore {
                        zero_mask,
                        ..CandidateScore::default()
                    }
                }
                Selection::Exact => {
                    *symbols = finish(i, symbols);
                    CandidateScore::of(symbols)
                }
            };
        }
        let choice = match set.selection {
            // `select::choose` under zero-run (the zero block is handled
            // above): same words, else the first predictor of the largest
            // key
            Selection::ZeroRun => {
                if set.custom.same_words && select::is_same_words(block) {
                    Choice::SameWords
                } else if n <= BEST_LANES {
                    Choice::Predictor(best(&masks, n))
                } else {
                    Choice::Predictor(best_zero_run(scores.iter().map(|s| s.zero_mask)))
                }
            }
            Selection::Exact => select::choose(set, block, scores),
        };
        match choice {
            Choice::ZeroBlock => raw(buf, 0, &[]),
            Choice::SameWords => raw(buf, set.same_words_id().unwrap_or(0), &block[0..4]),
            Choice::Predictor(i) => {
                let id = set.predictor_id(i);
                let mut w = SliceWriter::new(buf, bit);
                w.put(id as u64, h);
                w.flush();
                let symbols = match set.selection {
                    Selection::ZeroRun => finish(i, &all_symbols[i]),
                    Selection::Exact => all_symbols[i],
                };
                let bits = emit(&mut w, &symbols, scores[i].zero_mask);
                if select::finish(set, Choice::Predictor(i), bits) == id {
                    (id, w.position() - bit)
                } else {
                    raw(buf, set.raw_id(), block)
                }
            }
        }
    }

    /// Compress one block; identical to [`super::compress`].
    pub fn compress(&self, block: &[u8; BLOCK_BYTES]) -> CompressedBlock {
        let mut buf = [0u8; WRITE_BYTES];
        let (model, len) = self.compress_into(block, &mut buf, 0);
        let mut bytes = [0u8; MAX_BLOCK_BYTES];
        bytes.copy_from_slice(&buf[..MAX_BLOCK_BYTES]);
        // the stores may leave zeros or stale bits past `len`: clear them
        for (k, b) in bytes.iter_mut().enumerate() {
            let keep = len.saturating_sub(8 * k).min(8);
            *b &= !(0xffu16 >> keep) as u8;
        }
        CompressedBlock {
            model,
            len: len as u32,
            bytes,
        }
    }

    /// Decode one block of exactly `len` bits; identical to
    /// [`super::decompress`].
    pub fn decompress(&self, bytes: &[u8], len: usize) -> Result<[u8; BLOCK_BYTES], DecodeError> {
        check_length(bytes, len, &self.set)?;
        let (block, used) = self.decompress_prefix(bytes, len)?;
        if used != len {
            return Err(DecodeError::TrailingBits {
                used,
                extra: len - used,
            });
        }
        Ok(block)
    }

    /// Decode one block from the start of `bytes` (at most `avail` bits);
    /// identical to [`super::decompress_prefix`].
    pub fn decompress_prefix(
        &self,
        bytes: &[u8],
        avail: usize,
    ) -> Result<([u8; BLOCK_BYTES], usize), DecodeError> {
        self.decompress_at(bytes, 0, avail)
    }

    /// Decode one block that starts at bit `pos` of `src` and has at most
    /// `avail` bits; returns the block and the bits it used. Results and
    /// errors (bit positions relative to `pos`) are those of
    /// [`decompress_prefix`](Self::decompress_prefix) on the bits from `pos`.
    pub fn decompress_at(
        &self,
        src: &[u8],
        pos: usize,
        avail: usize,
    ) -> Result<([u8; BLOCK_BYTES], usize), DecodeError> {
        let total = src.len() * 8;
        if pos >= total {
            // nothing to read (and no position arithmetic near usize::MAX)
            return self.decode_careful(src, pos, 0);
        }
        let end = pos + avail.min(total - pos);
        let fast = match self.kernel {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `Avx2` is only selected when the CPU has its features.
            Kernel::Avx2 => unsafe { self.decode_avx2(src, pos, end) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `Avx512` is only selected when the CPU has its features.
            Kernel::Avx512 => unsafe { self.decode_avx512(src, pos, end) },
            _ => self.decode_fast(src, pos, end, |i, s| scalar::restore(&self.tables[i], s)),
        };
        match fast {
            Some((block, after)) => Ok((block, after - pos)),
            None => self.decode_careful(src, pos, end - pos),
        }
    }

    /// [`decode_fast`](Self::decode_fast) compiled for AVX2 with the AVX2
    /// kernel inlined.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,popcnt,bmi1,lzcnt")]
    fn decode_avx2(
        &self,
        src: &[u8],
        pos: usize,
        end: usize,
    ) -> Option<([u8; BLOCK_BYTES], usize)> {
        self.decode_fast(src, pos, end, |i, s| {
            avx2::restore(&self.vectors[i], self.tables[i].depth, s)
        })
    }

    /// [`decode_fast`](Self::decode_fast) compiled for AVX-512 with the
    /// AVX-512 kernel inlined.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(
        enable = "avx2,popcnt,bmi1,lzcnt,avx512f,avx512bw,avx512vl,avx512vbmi,avx512bitalg"
    )]
    fn decode_avx512(
        &self,
        src: &[u8],
        pos: usize,
        end: usize,
    ) -> Option<([u8; BLOCK_BYTES], usize)> {
        self.decode_fast(src, pos, end, |i, s| {
            avx512::restore(&self.vectors512[i], self.tables[i].depth, s)
        })
    }

    /// The happy path, given the kernel's inverse stages: `None` on
    /// anything the careful decoder must explain.
    #[inline(always)]
    fn decode_fast(
        &self,
        src: &[u8],
        pos: usize,
        end: usize,
        restore: impl Fn(usize, &[u16; SYMBOLS]) -> [u8; BLOCK_BYTES],
    ) -> Option<([u8; BLOCK_BYTES], usize)> {
        let h = self.header_bits;
        let id = decode::peek32(src, pos) >> (32 - h);
        let pos = pos + h as usize;
        let kind = (*self.kinds.get(id as usize)?)?;
        let words = |n: usize| {
            let mut out = [0u8; BLOCK_BYTES];
            for (k, w) in out[..n].chunks_exact_mut(4).enumerate() {
                w.copy_from_slice(&decode::peek32(src, pos + 32 * k).to_be_bytes());
            }
            out
        };
        let (block, after) = match kind {
            ModelKind::ZeroBlock => ([0u8; BLOCK_BYTES], pos),
            ModelKind::SameWords => {
                let w = decode::peek32(src, pos).to_be_bytes();
                (std::array::from_fn(|i| w[i % 4]), pos + 32)
            }
            ModelKind::Raw => (words(BLOCK_BYTES), pos + 8 * BLOCK_BYTES),
            ModelKind::Predictor(i) => {
                let (symbols, after) = decode::symbols(src, pos, end)?;
                (restore(i, &symbols), after)
            }
        };
        (after <= end).then_some((block, after))
    }

    /// Field-by-field decoding of the `avail` bits from `pos`, for exact
    /// errors.
    fn decode_careful(
        &self,
        src: &[u8],
        pos: usize,
        avail: usize,
    ) -> Result<([u8; BLOCK_BYTES], usize), DecodeError> {
        // re-align the block to bit 0 (it never needs more than the maximum)
        let mut tmp = [0u8; MAX_BLOCK_BYTES + 4];
        let len = avail.min(8 * tmp.len());
        for (k, b) in tmp.iter_mut().enumerate().take(len.div_ceil(8)) {
            *b = (decode::peek32(src, pos + 8 * k) >> 24) as u8;
        }
        let mut r = BitReader::new(&tmp, len);
        let (_, kind) = read_header(&mut r, &self.set, len)?;
        let mut out = [0u8; BLOCK_BYTES];
        let read_bytes = |r: &mut BitReader<'_>, dst: &mut [u8]| -> Result<(), DecodeError> {
            for b in dst.iter_mut() {
                let at = r.position();
                let remaining = r.remaining();
                *b = r.get(8).ok_or_else(|| DecodeError::Truncated {
                    at,
                    needed: 8 - remaining,
                    len,
                })? as u8;
            }
            Ok(())
        };
        match kind {
            ModelKind::ZeroBlock => {}
            ModelKind::SameWords => {
                let mut word = [0u8; 4];
                read_bytes(&mut r, &mut word)?;
                for w in out.chunks_exact_mut(4) {
                    w.copy_from_slice(&word);
                }
            }
            ModelKind::Raw => read_bytes(&mut r, &mut out)?,
            ModelKind::Predictor(i) => {
                let symbols = decode_symbols(&mut r, len, |_| {})?;
                out = self.restore(i, &symbols);
            }
        }
        Ok((out, r.position()))
    }
}
