//! Data to build seeds from: pieces of the dev corpus (when present) and
//! synthetic blocks (zeros, repeated words, small integers, floats,
//! random bytes).

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use crate::rng::Rng;

/// Bytes read from each corpus piece.
const PIECE_BYTES: usize = 16 << 10;
/// Pieces read from each corpus file.
const PIECES_PER_FILE: usize = 4;

pub struct Samples {
    pieces: Vec<Vec<u8>>,
}

impl Samples {
    /// Pieces of every data file of `corpus` at offsets drawn from `seed`;
    /// none without a corpus, or when it holds no data file (the command
    /// line refuses such a corpus before: [`crate::check_corpus`]).
    pub fn load(corpus: Option<&Path>, seed: u64) -> Samples {
        let mut rng = Rng::new(seed ^ 0x5a4d_504c_4553);
        let mut pieces = Vec::new();
        let files = corpus.and_then(|c| datafiles::corpus::data_files_of(c).ok());
        for f in files.unwrap_or_default() {
            let Ok(mut file) = File::open(&f) else {
                continue;
            };
            let Ok(len) = file.metadata().map(|m| m.len()) else {
                continue;
            };
            if len == 0 {
                continue;
            }
            for _ in 0..PIECES_PER_FILE {
                let n = (PIECE_BYTES as u64).min(len) as usize;
                let at = rng.below(len - n as u64 + 1);
                let mut buf = vec![0u8; n];
                if file.seek(SeekFrom::Start(at)).is_ok() && file.read_exact(&mut buf).is_ok() {
                    pieces.push(buf);
                }
            }
        }
        Samples { pieces }
    }

    /// Whether corpus pieces were found.
    pub fn has_corpus(&self) -> bool {
        !self.pieces.is_empty()
    }

    /// `len` bytes: a corpus piece (most of the time, when there is a
    /// corpus) or synthetic data.
    pub fn data(&self, rng: &mut Rng, len: usize) -> Vec<u8> {
        if self.has_corpus() && rng.chance(3, 4) {
            let mut out = Vec::with_capacity(len);
            while out.len() < len {
                let p = rng.pick(&self.pieces);
                let at = rng.index(p.len());
                let take = (p.len() - at).min(len - out.len());
                out.extend_from_slice(&p[at..at + take]);
            }
            return out;
        }
        let mut out = Vec::with_capacity(len + 64);
        while out.len() < len {
            out.extend_from_slice(&synthetic_block(rng, 32));
        }
        out.truncate(len);
        out
    }

    /// One block of `bytes` bytes.
    pub fn block(&self, rng: &mut Rng, bytes: usize) -> Vec<u8> {
        if self.has_corpus() && rng.chance(1, 2) {
            let p = rng.pick(&self.pieces);
            let at = rng.index((p.len() / bytes).max(1)) * bytes;
            let mut b = p[at.min(p.len())..].to_vec();
            b.resize(bytes, 0);
            b.truncate(bytes);
            return b;
        }
        synthetic_block(rng, bytes)
    }
}

/// Blocks that reach every encoding: zeros, one repeated word, small
/// integers of each width, floats, a single non-zero byte, all ones,
/// random bytes.
pub fn synthetic_block(rng: &mut Rng, bytes: usize) -> Vec<u8> {
    let mut b = vec![0u8; bytes];
    match rng.below(9) {
        0 => {}
        1 => {
            let w = rng.next_u32().to_le_bytes();
            for (i, x) in b.iter_mut().enumerate() {
                *x = w[i % 4];
            }
        }
        2 => {
            let w = rng.range(1, 8) as usize;
            let base = rng.next_u64();
            let bits = rng.below(12);
            let step = rng.below(1 << bits);
            for (i, c) in b.chunks_mut(w).enumerate() {
                let v = base.wrapping_add(step.wrapping_mul(i as u64)).to_le_bytes();
                let n = c.len();
                c.copy_from_slice(&v[..n]);
            }
        }
        3 => {
            let x0 = (rng.next_u32() as f32) / 1e6;
            for (i, c) in b.chunks_mut(4).enumerate() {
                let v = (x0 + i as f32 * 0.25).to_le_bytes();
                let n = c.len();
                c.copy_from_slice(&v[..n]);
            }
        }
        4 => {
            let x0 = rng.next_u32() as f64 / 7.0;
            for (i, c) in b.chunks_mut(8).enumerate() {
                let v = (x0 * (1.0 + i as f64 / 64.0)).to_le_bytes();
                let n = c.len();
                c.copy_from_slice(&v[..n]);
            }
        }
        5 => {
            let i = rng.index(bytes.max(1));
            if let Some(x) = b.get_mut(i) {
                *x = rng.next_u32() as u8 | 1;
            }
        }
        6 => b.fill(0xff),
        7 => {
            // small signed values in 32-bit words
            for c in b.chunks_mut(4) {
                let v = (rng.below(256) as i32 - 128).to_le_bytes();
                let n = c.len();
                c.copy_from_slice(&v[..n]);
            }
        }
        _ => rng.fill(&mut b),
    }
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn synthetic_data_has_the_requested_size_without_a_corpus() {
        let s = Samples::load(Some(Path::new("/nonexistent-corpus")), 1);
        assert!(!s.has_corpus());
        let mut rng = Rng::new(1);
        for len in [0usize, 1, 31, 32, 33, 1000] {
            assert_eq!(s.data(&mut rng, len).len(), len);
        }
        for bytes in [8usize, 32, 128] {
            for _ in 0..50 {
                assert_eq!(s.block(&mut rng, bytes).len(), bytes);
            }
        }
    }
}
