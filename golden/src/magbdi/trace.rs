//! Per-stage traces of MAG-aware BDI: the values the RTL's stage logic and
//! registers hold for one block (docs/hw/mag-bdi.md), so that a
//! co-simulation mismatch can be located signal by signal
//! (docs/hw/cosim.md). Both units are one stage.

use super::{MagBdi, Size};
use crate::baselines::{DecodeError, VecBitWriter};

/// One compressor unit: what the RTL's `cu<i>_*` wires hold for the size
/// with encoding `i`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SizeTrace {
    /// Entry `j`: value `j` fits the zero base.
    pub zero_fit: Vec<bool>,
    /// The first value the zero base does not cover (0 when there is none).
    pub base: u64,
    /// Every value fits one of the two bases.
    pub fits: bool,
    /// The size's bytes (base, bitmask, deltas cut to the delta width,
    /// zero padding) whether or not the values fit.
    pub data: Vec<u8>,
}

/// The compression of one block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompressTrace {
    /// One entry per size of the table (encoding `i` is `sizes[i]`).
    pub sizes: Vec<SizeTrace>,
    /// The chosen encoding (the raw code when no size fits).
    pub encoding: u32,
    /// The stored bytes, `block_bytes` long: the chosen size's bytes and
    /// zeros after them, or the block (raw).
    pub data: Vec<u8>,
}

/// The decompression of one input: the fields read from the stored bytes
/// (whatever the encoding) and the outcome.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecompressTrace {
    /// The first base-size field of the stored bytes, read MSB first.
    pub base: u64,
    /// Entry `j`: bitmask bit `j` (value `j` uses the non-zero base).
    pub mask: Vec<bool>,
    /// The encoding is the raw code.
    pub raw: bool,
    /// The decoded block, or why the golden decoder rejects the input.
    pub result: Result<Vec<u8>, DecodeError>,
}

impl DecompressTrace {
    /// The block the decompressor delivers: the decoded one, or all zero
    /// on an error.
    pub fn block(&self, block_bytes: usize) -> Vec<u8> {
        self.result.clone().unwrap_or_else(|_| vec![0; block_bytes])
    }
}

/// Bit `t` of an MSB-first bit string (0 past its end).
fn stream_bit(data: &[u8], t: usize) -> bool {
    data.get(t / 8).is_some_and(|b| (b >> (7 - t % 8)) & 1 == 1)
}

impl MagBdi {
    /// The bytes of size `s` for one unit's result (as `encode` writes
    /// them when the size fits).
    fn size_bytes(&self, u: &super::UnitResult, s: &Size) -> Vec<u8> {
        let mut w = VecBitWriter::new();
        w.put(u.base, self.value_bits());
        for &m in &u.mask {
            w.put(m as u64, 1);
        }
        for &x in &u.deltas {
            w.put(x, s.delta_bits);
        }
        let mut data = w.finish().bytes;
        data.resize(s.bytes, 0);
        data
    }

    /// [`MagBdi::encode`] with every compressor unit's values
    /// (`block_bytes` long; another length panics, as `encode`).
    pub fn compress_traced(&self, block: &[u8]) -> CompressTrace {
        let e = self.encode(block);
        let sizes = self
            .table
            .sizes
            .iter()
            .map(|s| {
                let u = self.unit(block, s.delta_bits);
                SizeTrace {
                    zero_fit: u.mask.iter().map(|m| !m).collect(),
                    base: u.base,
                    fits: u.fits,
                    data: self.size_bytes(&u, s),
                }
            })
            .collect();
        let mut data = e.data;
        data.resize(self.table.params.block_bytes, 0);
        CompressTrace {
            sizes,
            encoding: e.encoding,
            data,
        }
    }

    /// [`MagBdi::decode`] with the fields it reads from the stored bytes.
    pub fn decompress_traced(&self, encoding: u32, data: &[u8]) -> DecompressTrace {
        let w = self.value_bits() as usize;
        let n = self.table.params.values();
        let base = (0..w).fold(0u64, |acc, t| (acc << 1) | stream_bit(data, t) as u64);
        let mask = (0..n).map(|j| stream_bit(data, w + j)).collect();
        DecompressTrace {
            base,
            mask,
            raw: encoding == self.table.raw_code(),
            result: self.decode(encoding, data),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{DeltaMode, Params};
    use super::*;

    fn blocks(bb: usize) -> Vec<Vec<u8>> {
        let mut s = 0x1234_5678_9abc_def0u64;
        let mut next = move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
        let mut out = vec![vec![0u8; bb], vec![0xff; bb]];
        for k in 0..40 {
            let keep = [0x00u8, 0x01, 0x0f, 0x3f, 0xff][k % 5];
            out.push((0..bb).map(|_| next() as u8 & keep).collect());
            let mut b: Vec<u8> = (0..bb).map(|_| next() as u8 & 0x03).collect();
            b[(next() as usize) % bb] = next() as u8;
            out.push(b);
        }
        out
    }

    #[test]
    fn the_traces_agree_with_the_codec() {
        for params in [
            Params::PAPER,
            Params::new(128, 16, 4, DeltaMode::Signed),
            Params::new(64, 16, 2, DeltaMode::Unsigned),
        ] {
            let c = MagBdi::new(params).expect("params");
            for b in blocks(params.block_bytes) {
                let t = c.compress_traced(&b);
                let e = c.encode(&b);
                assert_eq!(t.encoding, e.encoding);
                assert_eq!(&t.data[..e.data.len()], &e.data[..]);
                assert!(t.data[e.data.len()..].iter().all(|&x| x == 0));
                // the chosen size is the first that fits, and its bytes are
                // the stored ones
                let first = t.sizes.iter().position(|s| s.fits);
                match first {
                    Some(i) => {
                        assert_eq!(i as u32, e.encoding);
                        assert_eq!(t.sizes[i].data, e.data);
                    }
                    None => assert_eq!(e.encoding, c.table().raw_code()),
                }
                let d = c.decompress_traced(e.encoding, &t.data);
                assert_eq!(d.result.as_deref(), Ok(&b[..]));
                assert_eq!(d.raw, e.encoding == c.table().raw_code());
                if let Some(i) = first {
                    assert_eq!(d.base, t.sizes[i].base);
                    assert_eq!(
                        d.mask,
                        t.sizes[i].zero_fit.iter().map(|z| !z).collect::<Vec<_>>()
                    );
                }
                let bad = c.decompress_traced(c.table().raw_code() + 1, &t.data);
                assert!(bad.result.is_err());
                assert_eq!(bad.block(params.block_bytes), vec![0; params.block_bytes]);
            }
        }
    }
}
