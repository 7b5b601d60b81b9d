//! Table-driven MPC codec with output identical to [`super::reference`].
//!
//! Forward: residues are Gray-coded per byte (`g = r ^ (r >> 1)` is the XOR
//! of each plane with the plane above, column by column) and transposed with
//! 8x8 bit-matrix transposes into the XORed planes, held as four `u64`
//! ("layout L": plane p, byte j at word j/8, bit 8*p + j%8 — exactly what
//! the transposes produce). Whether symbol m
//! is zero is one masked test of layout L (the mask holds the 16 natural
//! bits `reorder[16m..16m+15]`), so the zero-run selector never permutes;
//! only the chosen predictor (or all, under `exact`) is permuted, with 64
//! nibble tables of 16 entries of 256 bits (32 KiB a predictor).
//! Inverse: stream nibbles -> Gray-coded residue bytes by the same
//! construction, then inverse Gray code and restoration along the trees.

use crate::bits::{BitReader, BitWriter};

use super::model::{ByteRule, ModelKind, ModelSet, Selection};
use super::reference::{check_length, decode_symbols, read_header};
use super::select::{self, CandidateScore, Choice};
use super::table1::{self, Code};
use super::transform;
use super::{
    CompressedBlock, DecodeError, Predictor, BLOCK_BYTES, MAX_BLOCK_BYTES, PLANES, STREAM_BITS,
    SYMBOLS,
};

type Bits256 = [u64; 4];
type NibbleTables = Box<[[Bits256; 16]; 64]>;

fn stream_bit(o: usize) -> Bits256 {
    let mut v = [0u64; 4];
    v[o / 64] = 1u64 << (63 - o % 64);
    v
}

/// Layout-L position of plane p, column j.
fn layout_l(p: usize, j: usize) -> (usize, u32) {
    (j / 8, (8 * p + j % 8) as u32)
}

fn residue_bit(j: usize, p: usize) -> Bits256 {
    let mut v = [0u64; 4];
    v[j / 8] = 1u64 << (8 * (j % 8) + p);
    v
}

fn xor_into(acc: &mut Bits256, v: &Bits256) {
    for k in 0..4 {
        acc[k] ^= v[k];
    }
}

fn nibble_tables(single: impl Fn(usize, usize) -> Bits256) -> NibbleTables {
    let mut t: NibbleTables = Box::new([[[0; 4]; 16]; 64]);
    for (n, table) in t.iter_mut().enumerate() {
        for (v, entry) in table.iter_mut().enumerate() {
            for b in 0..4 {
                if (v >> b) & 1 == 1 {
                    xor_into(entry, &single(n, b));
                }
            }
        }
    }
    t
}

/// Transpose an 8x8 bit matrix: byte k bit p <-> byte p bit k.
#[inline]
fn transpose8(mut x: u64) -> u64 {
    let t = (x ^ (x >> 7)) & 0x00aa_00aa_00aa_00aa;
    x ^= t ^ (t << 7);
    let t = (x ^ (x >> 14)) & 0x0000_cccc_0000_cccc;
    x ^= t ^ (t << 14);
    let t = (x ^ (x >> 28)) & 0x0000_0000_f0f0_f0f0;
    x ^= t ^ (t << 28);
    x
}

struct PredictorTables {
    /// `(base, shift)` per byte; roots have `None`.
    rules: [Option<(u8, i8)>; BLOCK_BYTES],
    /// Branch-free prediction: `((ext[base] << left) & 0xff) >> right` where
    /// `ext` is the block followed by a zero byte (index 32, used by roots).
    pred_base: [u8; BLOCK_BYTES],
    /// `(left, right)` shift of each byte's prediction.
    pred_shift: [(u8, u8); BLOCK_BYTES],
    /// Restore order: every byte after its base.
    order: [usize; BLOCK_BYTES],
    /// Symbol m is zero iff layout-L planes AND `zero_masks[m]` is zero.
    zero_masks: [Bits256; SYMBOLS],
    /// Layout-L nibble -> reordered stream bits (MSB-first u64s).
    forward: NibbleTables,
    /// Stream nibble -> Gray-coded residue bytes (byte j at bits 8*(j%8) of
    /// word j/8).
    inverse: NibbleTables,
}

impl PredictorTables {
    fn new(p: &Predictor) -> Self {
        // natural index -> reordered position
        let mut position = [0usize; STREAM_BITS];
        for (o, &n) in p.reorder.iter().enumerate() {
            position[n as usize] = o;
        }
        let natural_of_l = |w: usize, bit: usize| {
            let (p, j) = (bit / 8, 8 * w + bit % 8);
            transform::natural_index(p, j)
        };
        let forward = nibble_tables(|n, b| {
            let bit = 4 * (n % 16) + b;
            stream_bit(position[natural_of_l(n / 16, bit)])
        });
        let mut zero_masks = [[0u64; 4]; SYMBOLS];
        for (o, &n) in p.reorder.iter().enumerate() {
            let n = n as usize;
            let (w, bit) = layout_l(PLANES - 1 - n / 32, n % 32);
            zero_masks[o / 16][w] |= 1u64 << bit;
        }
        // inverse: stream nibble n covers stream bits 4n..4n+3; bit b of the
        // nibble value is stream bit 4n + 3 - b.
        let inverse = nibble_tables(|n, b| {
            let natural = p.reorder[4 * n + 3 - b] as usize;
            let (plane, j) = (PLANES - 1 - natural / 32, natural % 32);
            residue_bit(j, plane)
        });
        let rules = std::array::from_fn(|i| match p.bytes[i] {
            ByteRule::Root => None,
            ByteRule::Base { base, shift } => Some((base, shift)),
        });
        let mut pred_base = [BLOCK_BYTES as u8; BLOCK_BYTES];
        let mut pred_shift = [(0u8, 0u8); BLOCK_BYTES];
        for (j, r) in rules.iter().enumerate() {
            if let Some((b, k)) = *r {
                pred_base[j] = b;
                if k > 0 {
                    pred_shift[j] = (k as u8, 0);
                } else if k < 0 {
                    pred_shift[j] = (0, (-k) as u8);
                }
            }
        }
        PredictorTables {
            rules,
            pred_base,
            pred_shift,
            order: transform::restore_order(p),
            zero_masks,
            forward,
            inverse,
        }
    }

    /// Stages 1-2: the XORed planes in layout L.
    #[inline]
    fn planes(&self, block: &[u8; BLOCK_BYTES]) -> Bits256 {
        let mut ext = [0u8; BLOCK_BYTES + 1];
        ext[..BLOCK_BYTES].copy_from_slice(block);
        // Gather each base (roots read the zero byte at index 32) and shift
        // it, assembling the predictions in a register (byte stores followed
        // by a wide load would stall store forwarding), then subtract
        // byte-wise, Gray-code and transpose, one 8-byte chunk at a time.
        const H: u64 = 0x8080_8080_8080_8080;
        let mut out = [0u64; 4];
        for (c, (xb, o)) in block.chunks_exact(8).zip(out.iter_mut()).enumerate() {
            let mut y = 0u64;
            for k in 0..8 {
                let j = 8 * c + k;
                let v = ext[self.pred_base[j] as usize] as u32;
                let (left, right) = self.pred_shift[j];
                y |= ((((v << left) & 0xff) >> right) as u64) << (8 * k);
            }
            let x = u64::from_le_bytes(xb.try_into().unwrap_or([0; 8]));
            // byte-wise wrapping x - y
            let r = ((x | H) - (y & !H)) ^ ((x ^ !y) & H);
            *o = transpose8(r ^ ((r >> 1) & 0x7f7f_7f7f_7f7f_7f7f));
        }
        out
    }

    #[inline]
    fn zero_mask(&self, l: &Bits256) -> u16 {
        let mut m = 0u16;
        for (s, mask) in self.zero_masks.iter().enumerate() {
            if (l[0] & mask[0]) | (l[1] & mask[1]) | (l[2] & mask[2]) | (l[3] & mask[3]) == 0 {
                m |= 1 << s;
            }
        }
        m
    }

    /// Stages 3-4 from layout L.
    #[inline]
    fn symbols_of(&self, l: &Bits256) -> [u16; SYMBOLS] {
        let mut acc = [0u64; 4];
        for (w, &word) in l.iter().enumerate() {
            if word == 0 {
                continue;
            }
            let tables = &self.forward[16 * w..16 * w + 16];
            for (n, table) in tables.iter().enumerate() {
                xor_into(&mut acc, &table[((word >> (4 * n)) & 0xf) as usize]);
            }
        }
        std::array::from_fn(|m| (acc[m / 4] >> (48 - 16 * (m % 4))) as u16)
    }

    #[inline]
    fn symbols(&self, block: &[u8; BLOCK_BYTES]) -> [u16; SYMBOLS] {
        self.symbols_of(&self.planes(block))
    }

    #[inline]
    fn restore(&self, symbols: &[u16; SYMBOLS]) -> [u8; BLOCK_BYTES] {
        let mut acc = [0u64; 4];
        for (m, &s) in symbols.iter().enumerate() {
            if s == 0 {
                continue;
            }
            for k in 0..4 {
                let nib = ((s >> (12 - 4 * k)) & 0xf) as usize;
                if nib != 0 {
                    xor_into(&mut acc, &self.inverse[4 * m + k][nib]);
                }
            }
        }
        let mut out = [0u8; BLOCK_BYTES];
        for &j in &self.order {
            let mut r = (acc[j / 8] >> (8 * (j % 8))) as u8;
            r ^= r >> 1;
            r ^= r >> 2;
            r ^= r >> 4;
            let pred = match self.rules[j] {
                None => 0,
                Some((b, k)) => super::model::shift_byte(out[b as usize], k),
            };
            out[j] = r.wrapping_add(pred);
        }
        out
    }
}

/// A model set prepared for fast compression and decompression.
pub struct MpcCodec {
    set: ModelSet,
    tables: Vec<PredictorTables>,
}

impl MpcCodec {
    pub fn new(set: &ModelSet) -> Self {
        MpcCodec {
            set: set.clone(),
            tables: set.predictors.iter().map(PredictorTables::new).collect(),
        }
    }

    pub fn model_set(&self) -> &ModelSet {
        &self.set
    }

    /// The 16 transformed symbols of predictor `i` for `block`.
    pub fn predictor_symbols(&self, i: usize, block: &[u8; BLOCK_BYTES]) -> [u16; SYMBOLS] {
        self.tables[i].symbols(block)
    }

    /// Compress one block; identical to [`super::compress`].
    pub fn compress(&self, block: &[u8; BLOCK_BYTES]) -> CompressedBlock {
        let set = &self.set;
        let mut w = BitWriter::<MAX_BLOCK_BYTES>::new();
        let emit_raw = |w: &mut BitWriter<MAX_BLOCK_BYTES>, id: u32, bytes: &[u8]| {
            w.put(id, set.header_bits());
            for word in bytes.chunks_exact(4) {
                w.put(u32::from_be_bytes([word[0], word[1], word[2], word[3]]), 32);
            }
        };
        let model;
        if set.custom.zero_block && select::is_zero_block(block) {
            model = 0;
            emit_raw(&mut w, model, &[]);
        } else {
            // Scores on the stack for the usual few predictors.
            const STACK: usize = 16;
            let mut stack = [CandidateScore::default(); STACK];
            let mut heap = Vec::new();
            let scores: &mut [CandidateScore] = if self.tables.len() <= STACK {
                &mut stack[..self.tables.len()]
            } else {
                heap.resize(self.tables.len(), CandidateScore::default());
                &mut heap
            };
            let mut chosen_symbols = None;
            let mut planes_stack = [[0u64; 4]; STACK];
            let mut planes_heap = Vec::new();
            let all_planes: &mut [Bits256] = if self.tables.len() <= STACK {
                &mut planes_stack[..self.tables.len()]
            } else {
                planes_heap.resize(self.tables.len(), [0u64; 4]);
                &mut planes_heap
            };
            for ((s, t), planes) in scores
                .iter_mut()
                .zip(&self.tables)
                .zip(all_planes.iter_mut())
            {
                *planes = t.planes(block);
                let planes = &*planes;
                *s = match set.selection {
                    // zero-run reads only the zero mask: no permutation here
                    Selection::ZeroRun => {
                        let zero_mask = t.zero_mask(planes);
                        CandidateScore {
                            zero_mask,
                            longest_zero_run: select::longest_run_of_ones(zero_mask),
                            zero_count: zero_mask.count_ones() as u8,
                            code_bits: 0,
                        }
                    }
                    Selection::Exact => CandidateScore::of(&t.symbols_of(planes)),
                };
            }
            let choice = select::choose(set, block, scores);
            let bits = match choice {
                Choice::Predictor(i) => {
                    let sy = self.tables[i].symbols_of(&all_planes[i]);
                    let bits = table1::encoded_len(&sy);
                    chosen_symbols = Some(sy);
                    bits
                }
                _ => 0,
            };
            model = select::finish(set, choice, bits);
            match (set.kind_of(model), chosen_symbols) {
                (Some(ModelKind::Predictor(_)), Some(sy)) => {
                    w.put(model, set.header_bits());
                    table1::encode_symbols(&sy, |c: Code| {
                        let (bits, len) = c.bits();
                        w.put(bits, len);
                    });
                }
                (Some(ModelKind::SameWords), _) => emit_raw(&mut w, model, &block[0..4]),
                _ => emit_raw(&mut w, model, block),
            }
        }
        let (bytes, len) = w.finish();
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

    /// Decode one block from the start of `bytes` (at most `avail` bits).
    pub fn decompress_prefix(
        &self,
        bytes: &[u8],
        avail: usize,
    ) -> Result<([u8; BLOCK_BYTES], usize), DecodeError> {
        let len = avail.min(bytes.len() * 8);
        let mut r = BitReader::new(bytes, len);
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
                out = self.tables[i].restore(&symbols);
            }
        }
        Ok((out, r.position()))
    }
}
