//! Plain DPC for the bulk layer: the packets of [`golden::dpc::Dpc`]
//! (`C`, then the ES bits and the groups, or the raw bytes) and its decode
//! errors, without allocating per block.
//!
//! One AND and one OR over every segment give all groups' patterns (ES)
//! and the packet length before anything is written. The groups sent in
//! full are bit planes: a 32 x 32 bit-matrix transposition of each run of
//! 32 segments (each 32-bit half of 8-byte segments) gives every plane's
//! bits for those segments as one word, MSB = the first segment, so each
//! group goes out as whole words; decoding gathers the words and runs the
//! same transposition back.

use golden::baselines::DecodeError;
use golden::dpc::DpcParams;

use super::{get, get64, peek, transpose32, Bits, BITS_SLACK};

const NAME: &str = "DPC";

/// Most plane words a block has: `W` groups of `n` bits, `W * n = 8 B`
/// bits, at most 8 x 1024 / 32.
const MAX_PLANE_WORDS: usize = 8 * golden::dpc::MAX_BLOCK_BYTES / 32;

/// Plain DPC of one set of parameters, coded without allocation.
#[derive(Clone, Copy, Debug)]
pub struct FastDpc {
    p: DpcParams,
    /// Segment bytes.
    s: usize,
    /// Groups (bits per segment).
    w: usize,
    /// Segments per block.
    n: usize,
    /// Runs of 32 segments.
    runs: usize,
}

#[inline]
fn low(bits: usize) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// Segment `j` of `block` (little-endian, `S` bytes).
#[inline(always)]
fn seg<const S: usize>(block: &[u8], j: usize) -> u64 {
    let mut a = [0u8; 8];
    a[..S].copy_from_slice(&block[S * j..S * j + S]);
    u64::from_le_bytes(a)
}

impl FastDpc {
    pub fn new(p: DpcParams) -> FastDpc {
        let n = p.segments();
        FastDpc {
            p,
            s: p.segment_bytes(),
            w: p.groups(),
            n,
            runs: n.div_ceil(32),
        }
    }

    pub fn params(&self) -> &DpcParams {
        &self.p
    }

    /// Longest packet in bits: the flag and the raw block.
    pub fn max_bits(&self) -> usize {
        self.p.max_bits()
    }

    /// Bytes [`compress_into`](Self::compress_into) may touch from the
    /// byte of its first bit.
    pub fn write_room(&self) -> usize {
        self.max_bits() / 8 + 1 + BITS_SLACK
    }

    /// Segments in run `r` (32 but in the last).
    #[inline]
    fn run_len(&self, r: usize) -> usize {
        (self.n - 32 * r).min(32)
    }

    fn write<const S: usize>(&self, block: &[u8], b: &mut Bits<'_>) {
        let (w, n) = (self.w, self.n);
        let wm = low(w);
        let (mut and, mut or) = (wm, 0u64);
        for c in block.chunks_exact(S) {
            let mut a = [0u8; 8];
            a[..S].copy_from_slice(c);
            let v = u64::from_le_bytes(a);
            and &= v;
            or |= v;
        }
        let es = (and | !or) & wm;
        let k = es.count_ones() as usize;
        let coded = w + k + (w - k) * n;
        if coded >= 8 * block.len() {
            b.put(0, 1);
            b.bytes(block);
            return;
        }
        b.put(1, 1);
        // ES[0] first
        b.put(es.reverse_bits() >> (64 - w), w as u32);
        if self.runs == 1 && w <= 32 {
            // one transposition: plane i is word 31 - i
            let mut a = [0u32; 32];
            for (x, c) in a.iter_mut().zip(block.chunks_exact(S)) {
                let mut b = [0u8; 4];
                b[..S].copy_from_slice(c);
                *x = u32::from_le_bytes(b);
            }
            transpose32(&mut a);
            for i in 0..w {
                if es >> i & 1 == 1 {
                    b.put(and >> i & 1, 1);
                } else {
                    b.put((a[31 - i] >> (32 - n)) as u64, n as u32);
                }
            }
            return;
        }
        let runs = self.runs;
        let mut planes = [0u32; MAX_PLANE_WORDS];
        if k < w {
            for r in 0..runs {
                let len = self.run_len(r);
                for h in 0..w.div_ceil(32) {
                    let mut a = [0u32; 32];
                    for (j, x) in a.iter_mut().enumerate().take(len) {
                        *x = (seg::<S>(block, 32 * r + j) >> (32 * h)) as u32;
                    }
                    transpose32(&mut a);
                    for il in 0..(w - 32 * h).min(32) {
                        planes[(32 * h + il) * runs + r] = a[31 - il];
                    }
                }
            }
        }
        for i in 0..w {
            if es >> i & 1 == 1 {
                b.put(and >> i & 1, 1);
            } else {
                for r in 0..runs {
                    let len = self.run_len(r);
                    b.put((planes[i * runs + r] >> (32 - len)) as u64, len as u32);
                }
            }
        }
    }

    /// Write the packet of `block` (`block_bytes` long) at bit `bit` of
    /// `buf`, which holds [`write_room`](Self::write_room) bytes from byte
    /// `bit / 8`; returns the bits written.
    pub fn compress_into(&self, block: &[u8], buf: &mut [u8], bit: usize) -> usize {
        assert_eq!(
            block.len(),
            self.p.block_bytes(),
            "{NAME}: block of {} bytes, codec takes {}",
            block.len(),
            self.p.block_bytes()
        );
        let mut b = Bits::new(buf, bit);
        match self.s {
            1 => self.write::<1>(block, &mut b),
            2 => self.write::<2>(block, &mut b),
            4 => self.write::<4>(block, &mut b),
            _ => self.write::<8>(block, &mut b),
        }
        b.finish() - bit
    }

    /// The packet of `block` and its length in bits (a fresh buffer: for
    /// tests and one-off use).
    pub fn compress(&self, block: &[u8]) -> (Vec<u8>, usize) {
        let mut buf = vec![0u8; self.write_room()];
        let len = self.compress_into(block, &mut buf, 0);
        buf.truncate(len.div_ceil(8));
        (buf, len)
    }

    fn read<const S: usize>(&self, bits: &[u8], es: u64, out: &mut [u8]) {
        let (w, runs) = (self.w, self.runs);
        if runs == 1 && w <= 32 {
            let n = self.n;
            let mut a = [0u32; 32];
            let mut at = 1 + w;
            for i in 0..w {
                a[31 - i] = if es >> i & 1 == 1 {
                    at += 1;
                    0u32.wrapping_sub(peek(bits, at - 1, 1) as u32)
                } else {
                    at += n;
                    (peek(bits, at - n, n as u32) << (32 - n)) as u32
                };
            }
            transpose32(&mut a);
            for (o, x) in out.chunks_exact_mut(S).zip(a.iter()) {
                o.copy_from_slice(&x.to_le_bytes()[..S]);
            }
            return;
        }
        let mut planes = [0u32; MAX_PLANE_WORDS];
        let mut at = 1 + w;
        for i in 0..w {
            if es >> i & 1 == 1 {
                let word = 0u32.wrapping_sub(peek(bits, at, 1) as u32);
                at += 1;
                for r in 0..runs {
                    planes[i * runs + r] = word;
                }
            } else {
                for r in 0..runs {
                    let len = self.run_len(r);
                    planes[i * runs + r] = (peek(bits, at, len as u32) << (32 - len)) as u32;
                    at += len;
                }
            }
        }
        for r in 0..runs {
            let len = self.run_len(r);
            let mut segs = [0u64; 32];
            for h in 0..w.div_ceil(32) {
                let mut a = [0u32; 32];
                for il in 0..(w - 32 * h).min(32) {
                    a[31 - il] = planes[(32 * h + il) * runs + r];
                }
                transpose32(&mut a);
                for (sg, &x) in segs.iter_mut().zip(a.iter()).take(len) {
                    *sg |= (x as u64) << (32 * h);
                }
            }
            for (j, sg) in segs.iter().enumerate().take(len) {
                let o = S * (32 * r + j);
                out[o..o + S].copy_from_slice(&sg.to_le_bytes()[..S]);
            }
        }
    }

    /// Decode a packet of exactly `len` bits into `out` (`block_bytes`
    /// long), with the golden model's errors.
    pub fn decompress_into(
        &self,
        bits: &[u8],
        len: usize,
        out: &mut [u8],
    ) -> Result<(), DecodeError> {
        if len.div_ceil(8) > bits.len() {
            return Err(DecodeError::ShortBuffer {
                codec: NAME,
                len,
                have: bits.len(),
            });
        }
        if len == 0 {
            return Err(DecodeError::Truncated {
                codec: NAME,
                at: 0,
                len,
            });
        }
        let bb = self.p.block_bytes();
        if out.len() != bb {
            return Err(super::out_len(out.len(), bb));
        }
        let total_check = |total: usize, short_at: usize| {
            if len < total {
                Err(DecodeError::Truncated {
                    codec: NAME,
                    at: short_at,
                    len,
                })
            } else if len > total {
                Err(DecodeError::TrailingBits {
                    codec: NAME,
                    used: total,
                    extra: len - total,
                })
            } else {
                Ok(())
            }
        };
        if peek(bits, 0, 1) == 0 {
            // the raw block: the first byte that is not all there
            total_check(1 + 8 * bb, 1 + 8 * ((len - 1) / 8))?;
            let mut words = out.chunks_exact_mut(8);
            let mut at = 1;
            for o in &mut words {
                o.copy_from_slice(&get64(bits, at).to_be_bytes());
                at += 64;
            }
            for o in words.into_remainder() {
                *o = peek(bits, at, 8) as u8;
                at += 8;
            }
            return Ok(());
        }
        let w = self.w;
        if len < 1 + w {
            return Err(DecodeError::Truncated {
                codec: NAME,
                at: 1,
                len,
            });
        }
        let es = get(bits, 1, w as u32).reverse_bits() >> (64 - w);
        let k = es.count_ones() as usize;
        // the groups are read a bit at a time: a short packet ends at `len`
        total_check(1 + w + k + (w - k) * self.n, len)?;
        match self.s {
            1 => self.read::<1>(bits, es, out),
            2 => self.read::<2>(bits, es, out),
            4 => self.read::<4>(bits, es, out),
            _ => self.read::<8>(bits, es, out),
        }
        Ok(())
    }
}
