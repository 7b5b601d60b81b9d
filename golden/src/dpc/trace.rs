//! Per-stage traces of the DPC units: the values the RTL's stage logic and
//! registers hold for one input (docs/hw/dpc.md), so that a co-simulation
//! mismatch can be located stage by stage and signal by signal
//! (docs/hw/cosim.md).

use super::{Dpc, DpcError, DpcTrace, Mode};
use crate::baselines::{Compressed, DecodeError};

/// One copy a DF-MAN compressor analyses (stage 1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CopyTrace {
    /// The copy's bytes (`block_bytes`).
    pub data: Vec<u8>,
    /// Bit `i`: group `i` is uniform (ES).
    pub es: u64,
    /// Bit `i`: group `i` is all ones.
    pub ones: u64,
    /// The payload bits it codes to: the coded length when that is shorter
    /// than the raw bytes, else the raw bits.
    pub len: usize,
}

/// The compression of one block by one mode's compressor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompressStages {
    // stage 1
    /// The bytes coded, zero-extended to `block_bytes`: the block, the
    /// critical sectors packed to the front (DF-TRUC), or the chosen copy
    /// (DF-MAN).
    pub data: Vec<u8>,
    /// The analysis of the coded segments (ES, patterns, lengths, C).
    pub coded: DpcTrace,
    /// The critical-sector mask (DF-TRUC and DF-MAN; 0 for plain DPC).
    pub mask: u32,
    /// The number of critical sectors (set mask bits).
    pub npc: u32,
    /// DF-MAN: the original and the zero-filled copy.
    pub copies: Option<[CopyTrace; 2]>,
    /// DF-MAN: the zero-filled copy is coded (it is strictly shorter).
    pub manipulated: bool,
    // stage 2
    /// The bits of the raw payload (`8 n S`).
    pub raw_len: usize,
    /// The packet.
    pub packet: Compressed,
}

/// The decompression of one input by the plain (also DF-MAN) or the
/// DF-TRUC decompressor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecompressStages {
    // stage 1: the header fields as the input holds them, whether or not
    // the input is a valid packet
    /// The mask field (DF-TRUC; 0 for the plain decompressor).
    pub mask_field: u32,
    /// Its set bits.
    pub npc: u32,
    /// The segments the payload codes.
    pub segments: usize,
    /// The flag C.
    pub flag: bool,
    /// The ES field (bit `i`: `ES[i]`).
    pub es: u64,
    /// The bits of the raw payload of `segments` segments.
    pub raw_len: usize,
    /// The packet length the header implies: the mask, C and the coded
    /// payload (ES and ED) or the raw bytes.
    pub expected_len: usize,
    /// The payload bytes decoded (`8 segments S` bits: the critical sectors
    /// packed for DF-TRUC), or why the golden decoder rejects the input.
    pub data: Result<Vec<u8>, DecodeError>,
    // stage 2
    /// The decoded block and mask, or why the input is rejected.
    pub result: Result<(Vec<u8>, u32), DecodeError>,
}

impl DecompressStages {
    /// The block the decompressor delivers (all zero on an error).
    pub fn block(&self, block_bytes: usize) -> Vec<u8> {
        self.result
            .as_ref()
            .map_or_else(|_| vec![0; block_bytes], |(b, _)| b.clone())
    }

    /// The mask it delivers (0 on an error).
    pub fn mask(&self) -> u32 {
        self.result.as_ref().map_or(0, |(_, m)| *m)
    }
}

/// Bit `t` of an MSB-first bit string (0 past its end).
fn bit(bits: &[u8], t: usize) -> bool {
    bits.get(t / 8).is_some_and(|b| (b >> (7 - t % 8)) & 1 == 1)
}

impl Dpc {
    /// The payload bits a trace codes to (coded if shorter, else raw).
    fn payload_bits(t: &DpcTrace) -> usize {
        if t.compressed {
            t.coded_bits
        } else {
            8 * t.data.len()
        }
    }

    /// What the compressor of `mode` computes for `block` and `mask` (the
    /// mask is ignored by plain DPC, as by its RTL, which has no mask
    /// input).
    pub fn compress_traced(
        &self,
        mode: Mode,
        block: &[u8],
        mask: u32,
    ) -> Result<CompressStages, DpcError> {
        let mask = if mode == Mode::Plain { 0 } else { mask };
        self.check_block(block)?;
        self.check_mask(mask)?;
        let b = self.p.block;
        let copy = |data: Vec<u8>| {
            let t = self.analyse(&data);
            CopyTrace {
                es: t.es,
                ones: t.ones,
                len: Dpc::payload_bits(&t),
                data,
            }
        };
        let (coded, copies, manipulated, packet) = match mode {
            Mode::Plain => (self.analyse(block), None, false, self.encode(block)?),
            Mode::Truc => (
                self.analyse(&self.critical_bytes(block, mask)),
                None,
                false,
                self.encode_truc(block, mask)?,
            ),
            Mode::Man => {
                let r = self.encode_man(block, mask)?;
                let copies = [copy(block.to_vec()), copy(self.manipulated(block, mask))];
                (
                    self.trace(Mode::Man, block, mask)?,
                    Some(copies),
                    r.manipulated,
                    r.packet,
                )
            }
        };
        let mut data = coded.data.clone();
        data.resize(b, 0);
        Ok(CompressStages {
            data,
            raw_len: 8 * coded.data.len(),
            coded,
            mask,
            npc: mask.count_ones(),
            copies,
            manipulated,
            packet,
        })
    }

    /// What the decompressor (`Mode::Truc`: the DF-TRUC one; otherwise the
    /// plain one, which also decodes DF-MAN) computes for `len` bits of the
    /// MSB-first bus `bits` (bits past the slice are 0).
    pub fn decompress_traced(&self, mode: Mode, bits: &[u8], len: usize) -> DecompressStages {
        let truc = mode == Mode::Truc;
        let kp = if truc { self.p.sectors() } else { 0 };
        let w = self.p.groups();
        let mask_field = (0..kp).fold(0u32, |m, k| m | (bit(bits, k) as u32) << k);
        let npc = mask_field.count_ones();
        let segments = if truc {
            npc as usize * self.p.sector_segments()
        } else {
            self.p.segments()
        };
        let flag = bit(bits, kp);
        let es = (0..w).fold(0u64, |e, i| e | (bit(bits, kp + 1 + i) as u64) << i);
        let raw_len = 8 * segments * self.p.segment;
        let uniform = es.count_ones() as usize;
        let coded_len = w + uniform + (w - uniform) * segments;
        let expected_len = kp + 1 + if flag { coded_len } else { raw_len };
        let result = if truc {
            self.decode_truc(bits, len)
        } else {
            self.decode(bits, len).map(|b| (b, 0))
        };
        let data = result.clone().map(|(block, m)| {
            if truc {
                self.critical_bytes(&block, m)
            } else {
                block
            }
        });
        DecompressStages {
            mask_field,
            npc,
            segments,
            flag,
            es,
            raw_len,
            expected_len,
            data,
            result,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::DpcParams;
    use super::*;

    fn blocks(p: &DpcParams) -> Vec<Vec<u8>> {
        let bb = p.block_bytes();
        let mut s = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
        let mut out = vec![vec![0u8; bb], vec![0xff; bb]];
        for k in 0..30 {
            let keep = [0x00u8, 0x01, 0x0f, 0x3f, 0xff][k % 5];
            out.push((0..bb).map(|_| next() as u8 & keep).collect());
        }
        out
    }

    #[test]
    fn the_stage_traces_agree_with_the_codec() {
        for p in [
            DpcParams::default(),
            DpcParams::new(64, 2, 16).expect("params"),
        ] {
            let d = Dpc::new(p);
            for (k, b) in blocks(&p).iter().enumerate() {
                let mask = (k as u32 * 5 + 3) & p.full_mask();
                for mode in Mode::ALL {
                    let t = d.compress_traced(mode, b, mask).expect("trace");
                    let len = t.packet.len;
                    assert_eq!(len, d.packet_bits(mode, b, mask).expect("len"));
                    assert_eq!(t.coded, d.trace(mode, b, mask).expect("trace"));
                    let dm = if mode == Mode::Truc {
                        Mode::Truc
                    } else {
                        Mode::Plain
                    };
                    let r = d.decompress_traced(dm, &t.packet.bytes, len);
                    assert_eq!(r.expected_len, len, "{mode:?} block {k}");
                    assert_eq!(r.flag, t.coded.compressed);
                    assert_eq!(r.segments, t.coded.n);
                    assert_eq!(r.raw_len, t.raw_len);
                    if t.coded.compressed {
                        assert_eq!(r.es, t.coded.es);
                    }
                    let want = match mode {
                        Mode::Plain => b.clone(),
                        Mode::Truc => d.decode_truc(&t.packet.bytes, len).expect("decode").0,
                        Mode::Man => d.decode(&t.packet.bytes, len).expect("decode"),
                    };
                    assert_eq!(r.block(p.block_bytes()), want);
                    assert_eq!(r.data.as_deref().ok(), Some(&t.data[..t.coded.data.len()]));
                    if let Some([o, m]) = &t.copies {
                        assert_eq!(t.manipulated, m.len < o.len);
                        assert_eq!(&o.data, b);
                    }
                    // one bit too long: rejected, zero block and mask
                    let bad = d.decompress_traced(dm, &t.packet.bytes, len + 1);
                    assert!(bad.result.is_err());
                    assert_eq!(bad.mask(), 0);
                    assert_eq!(bad.expected_len, len);
                }
            }
        }
    }
}
