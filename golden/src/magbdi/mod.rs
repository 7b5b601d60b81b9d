//! MAG-aware Base-Delta-Immediate compression (Renz, Hartmer, Juurlink:
//! "MAG-aware BDI"), specified in `docs/spec/mag-bdi.md`.
//!
//! A block of `B` bytes is read as `n = B / k` little-endian `k`-byte
//! values (`k` = base size). For every multiple `c` of the memory access
//! granularity (MAG) below `B`, Eq. 1 of the paper gives the delta width
//!
//! ```text
//! d(c) = floor((8c - header) / n),   header = 8k + n   (base + bitmask)
//! ```
//!
//! so that base, bitmask and `n` deltas fill exactly `c` bytes (zero
//! padding after the deltas). Two bases: the implicit zero base and the
//! first value the zero base cannot cover. A value "fits" a `d`-bit delta
//! field when it has `k*8 - d` leading zeros ([`DeltaMode::Unsigned`], the
//! paper's main design) or is a sign-extended `d`-bit value
//! ([`DeltaMode::Signed`], leading zeros or ones). The smallest size that
//! fits wins, else the block is stored raw. The encoding (the index of the
//! chosen size, or the raw code = number of sizes) is the per-block metadata
//! a memory controller keeps in its metadata cache.

use crate::baselines::{BlockCodec, Compressed, ConfigError, DecodeError, Reader, VecBitWriter};

#[cfg(test)]
mod tests;
pub mod trace;

const NAME: &str = "MAG-BDI";

/// Largest supported block (a 4096-bit RTL bus).
pub const MAX_BLOCK_BYTES: usize = 512;
/// Supported base sizes in bytes.
pub const BASE_SIZES: [usize; 3] = [2, 4, 8];

/// How a delta field is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum DeltaMode {
    /// Leading zeros only: `0 <= delta < 2^d` (the paper's main design).
    #[default]
    Unsigned,
    /// Leading zeros or ones: `-2^(d-1) <= delta < 2^(d-1)`.
    Signed,
}

impl DeltaMode {
    pub fn name(self) -> &'static str {
        match self {
            DeltaMode::Unsigned => "unsigned",
            DeltaMode::Signed => "signed",
        }
    }
}

impl std::fmt::Display for DeltaMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for DeltaMode {
    type Err = MagBdiError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "unsigned" => Ok(DeltaMode::Unsigned),
            "signed" => Ok(DeltaMode::Signed),
            _ => Err(MagBdiError::Mode(s.to_string())),
        }
    }
}

/// Bad parameters.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MagBdiError {
    #[error("MAG-aware BDI: base size {0} bytes is not supported (2, 4 or 8)")]
    Base(usize),
    #[error("MAG-aware BDI: block size {block} bytes must be a multiple of the {base}-byte base, at least two values and at most {MAX_BLOCK_BYTES} bytes")]
    Block { block: usize, base: usize },
    #[error("MAG-aware BDI: MAG {mag} bytes must be at least 1 and a proper divisor of the {block}-byte block")]
    Mag { mag: usize, block: usize },
    #[error("MAG-aware BDI: no delta width fits: block {block} B, MAG {mag} B, base {base} B: the {header}-bit header (base + {n}-bit bitmask) leaves no room for {n} deltas of at least 1 bit in any multiple of the MAG below the block size (largest: {largest} bits); use a larger block, a smaller base or a smaller MAG")]
    NoDeltaWidth {
        block: usize,
        mag: usize,
        base: usize,
        header: usize,
        n: usize,
        largest: usize,
    },
    #[error("MAG-aware BDI: delta mode `{0}` is not `unsigned` or `signed`")]
    Mode(String),
}

impl From<MagBdiError> for ConfigError {
    fn from(e: MagBdiError) -> Self {
        ConfigError::Other(e.to_string())
    }
}

/// The parameters of one MAG-aware BDI configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Params {
    pub block_bytes: usize,
    pub mag_bytes: usize,
    pub base_bytes: usize,
    pub mode: DeltaMode,
}

impl Params {
    /// The paper's design: 128-byte blocks, 32-byte MAG, 4-byte base, unsigned.
    pub const PAPER: Params = Params {
        block_bytes: 128,
        mag_bytes: 32,
        base_bytes: 4,
        mode: DeltaMode::Unsigned,
    };

    pub fn new(block_bytes: usize, mag_bytes: usize, base_bytes: usize, mode: DeltaMode) -> Params {
        Params {
            block_bytes,
            mag_bytes,
            base_bytes,
            mode,
        }
    }

    /// Number of values (= deltas = bitmask bits).
    pub fn values(&self) -> usize {
        self.block_bytes / self.base_bytes
    }

    /// Header bits: the non-zero base plus the bitmask.
    pub fn header_bits(&self) -> usize {
        8 * self.base_bytes + self.values()
    }
}

/// One compressed size of the table: Eq. 1's delta width for `bytes`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Size {
    /// Compressed size in bytes (a multiple of the MAG).
    pub bytes: usize,
    /// Delta width in bits (Eq. 1).
    pub delta_bits: u32,
    /// Used bits: header + n * delta_bits (the rest of `8 * bytes` is zero padding).
    pub used_bits: usize,
}

/// The size table of a configuration (Eq. 1 applied to every multiple of
/// the MAG below the block size); sizes whose delta width would be below 1
/// bit are left out (reported by [`eq1_all`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Table {
    pub params: Params,
    /// Usable sizes, smallest first; encoding `i` is `sizes[i]`.
    pub sizes: Vec<Size>,
}

/// Eq. 1 for one compressed size in bytes: `Some(delta bits)` or `None`
/// when the header alone does not fit or fewer than 1 bit per delta remains.
pub fn eq1(block_bytes: usize, base_bytes: usize, comp_bytes: usize) -> Option<u32> {
    let n = block_bytes / base_bytes;
    let header = 8 * base_bytes + n;
    let avail = (8 * comp_bytes).checked_sub(header)?;
    let d = avail / n;
    (d >= 1).then_some(d as u32)
}

/// Eq. 1 for every multiple of the MAG below the block: (bytes, width or None).
pub fn eq1_all(
    block_bytes: usize,
    mag_bytes: usize,
    base_bytes: usize,
) -> Vec<(usize, Option<u32>)> {
    if mag_bytes == 0 || base_bytes == 0 {
        return Vec::new();
    }
    (1..)
        .map(|j| j * mag_bytes)
        .take_while(|&c| c < block_bytes)
        .map(|c| (c, eq1(block_bytes, base_bytes, c)))
        .collect()
}

impl Table {
    /// Validate the parameters and build the size table.
    pub fn new(params: Params) -> Result<Table, MagBdiError> {
        let Params {
            block_bytes: block,
            mag_bytes: mag,
            base_bytes: base,
            ..
        } = params;
        if !BASE_SIZES.contains(&base) {
            return Err(MagBdiError::Base(base));
        }
        if block == 0 || block % base != 0 || block / base < 2 || block > MAX_BLOCK_BYTES {
            return Err(MagBdiError::Block { block, base });
        }
        if mag == 0 || mag >= block || block % mag != 0 {
            return Err(MagBdiError::Mag { mag, block });
        }
        let n = params.values();
        let header = params.header_bits();
        let sizes: Vec<Size> = eq1_all(block, mag, base)
            .into_iter()
            .filter_map(|(bytes, d)| {
                d.map(|d| Size {
                    bytes,
                    delta_bits: d,
                    used_bits: header + n * d as usize,
                })
            })
            .collect();
        if sizes.is_empty() {
            return Err(MagBdiError::NoDeltaWidth {
                block,
                mag,
                base,
                header,
                n,
                largest: 8 * (block - mag),
            });
        }
        Ok(Table { params, sizes })
    }

    /// The raw (uncompressed) encoding: the number of sizes.
    pub fn raw_code(&self) -> u32 {
        self.sizes.len() as u32
    }

    /// Encoding (metadata) bits per block: enough for every size plus raw.
    pub fn encoding_bits(&self) -> u32 {
        let codes = self.sizes.len() as u64 + 1;
        (64 - (codes - 1).leading_zeros()).max(1)
    }

    /// Compressed size in bytes of encoding `code` (`block_bytes` for raw),
    /// `None` for an unused code.
    pub fn size_of(&self, code: u32) -> Option<usize> {
        if code == self.raw_code() {
            Some(self.params.block_bytes)
        } else {
            self.sizes.get(code as usize).map(|s| s.bytes)
        }
    }
}

/// A block compressed by MAG-aware BDI: the encoding (metadata) and the
/// `size_of(encoding)` bytes that go to memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Encoded {
    pub encoding: u32,
    pub data: Vec<u8>,
}

/// What one compressor unit (one delta width) found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnitResult {
    pub fits: bool,
    /// Bit `i` set: value `i` uses the non-zero base.
    pub mask: Vec<bool>,
    /// The non-zero base (0 when every value fits the zero base).
    pub base: u64,
    /// Each value's delta, truncated to the delta width.
    pub deltas: Vec<u64>,
}

/// The MAG-aware BDI codec of one configuration.
#[derive(Clone, Debug)]
pub struct MagBdi {
    table: Table,
    name: String,
}

fn word_mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

impl MagBdi {
    pub fn new(params: Params) -> Result<MagBdi, MagBdiError> {
        let table = Table::new(params)?;
        let name = format!(
            "MAG-BDI-{}{}",
            params.mag_bytes,
            if params.mode == DeltaMode::Signed {
                "s"
            } else {
                ""
            }
        );
        Ok(MagBdi { table, name })
    }

    pub fn table(&self) -> &Table {
        &self.table
    }

    pub fn params(&self) -> &Params {
        &self.table.params
    }

    fn value_bits(&self) -> u32 {
        8 * self.table.params.base_bytes as u32
    }

    /// The `n` little-endian values of a block.
    pub fn values(&self, block: &[u8]) -> Vec<u64> {
        let k = self.table.params.base_bytes;
        block
            .chunks_exact(k)
            .map(|c| {
                let mut b = [0u8; 8];
                b[..k].copy_from_slice(c);
                u64::from_le_bytes(b)
            })
            .collect()
    }

    /// Does the `k`-byte quantity `v` fit a `d`-bit delta field?
    pub fn fits(&self, v: u64, d: u32) -> bool {
        let w = self.value_bits();
        let v = v & word_mask(w);
        match self.table.params.mode {
            DeltaMode::Unsigned => v >> d == 0,
            DeltaMode::Signed => {
                // the top w-d+1 bits are all equal
                let top = v >> (d - 1);
                top == 0 || top == word_mask(w - d + 1)
            }
        }
    }

    /// The compressor unit for delta width `d` (the paper's Fig. 9).
    pub fn unit(&self, block: &[u8], d: u32) -> UnitResult {
        let vals = self.values(block);
        let w = self.value_bits();
        let first = vals.iter().copied().find(|&v| !self.fits(v, d));
        let base = first.unwrap_or(0);
        let mut fits = true;
        let mut mask = Vec::with_capacity(vals.len());
        let mut deltas = Vec::with_capacity(vals.len());
        for &v in &vals {
            let zero = self.fits(v, d);
            let delta = if zero {
                v
            } else {
                v.wrapping_sub(base) & word_mask(w)
            };
            fits &= zero || self.fits(delta, d);
            mask.push(!zero);
            deltas.push(delta & word_mask(d));
        }
        UnitResult {
            fits,
            mask,
            base,
            deltas,
        }
    }

    /// Compress one block (`block_bytes` long; another length panics).
    pub fn encode(&self, block: &[u8]) -> Encoded {
        let p = &self.table.params;
        assert_eq!(
            block.len(),
            p.block_bytes,
            "{NAME}: block of {} bytes, codec takes {}",
            block.len(),
            p.block_bytes
        );
        for (i, s) in self.table.sizes.iter().enumerate() {
            let u = self.unit(block, s.delta_bits);
            if !u.fits {
                continue;
            }
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
            return Encoded {
                encoding: i as u32,
                data,
            };
        }
        Encoded {
            encoding: self.table.raw_code(),
            data: block.to_vec(),
        }
    }

    /// Decode `data` (at least `size_of(encoding)` bytes; bytes past that are
    /// ignored, as a memory controller fetches only those) back to a block.
    /// Errors: unused encoding, too few bytes, non-zero padding.
    pub fn decode(&self, encoding: u32, data: &[u8]) -> Result<Vec<u8>, DecodeError> {
        let p = &self.table.params;
        if encoding == self.table.raw_code() {
            return data
                .get(..p.block_bytes)
                .map(<[u8]>::to_vec)
                .ok_or(DecodeError::ShortBuffer {
                    codec: NAME,
                    len: 8 * p.block_bytes,
                    have: data.len(),
                });
        }
        let s = *self
            .table
            .sizes
            .get(encoding as usize)
            .ok_or(DecodeError::BadCode {
                codec: NAME,
                code: encoding,
                at: 0,
            })?;
        let payload = data.get(..s.bytes).ok_or(DecodeError::ShortBuffer {
            codec: NAME,
            len: 8 * s.bytes,
            have: data.len(),
        })?;
        let mut r = Reader::new(NAME, payload, 8 * s.bytes)?;
        let w = self.value_bits();
        let n = p.values();
        let base = r.get(w)?;
        let mask: Vec<u64> = (0..n).map(|_| r.get(1)).collect::<Result<_, _>>()?;
        let mut out = Vec::with_capacity(p.block_bytes);
        for m in mask {
            let raw = r.get(s.delta_bits)?;
            let delta = match p.mode {
                DeltaMode::Unsigned => raw,
                DeltaMode::Signed => {
                    let sh = 64 - s.delta_bits;
                    (((raw << sh) as i64) >> sh) as u64
                }
            };
            let v = if m == 1 {
                base.wrapping_add(delta)
            } else {
                delta
            } & word_mask(w);
            out.extend_from_slice(&v.to_le_bytes()[..p.base_bytes]);
        }
        let pad = 8 * s.bytes - s.used_bits;
        let at = r.pos();
        for _ in 0..pad {
            if r.get(1)? != 0 {
                return Err(DecodeError::Invalid {
                    codec: NAME,
                    what: "non-zero padding after the deltas".into(),
                    at,
                });
            }
        }
        Ok(out)
    }

    /// Compressed size in bytes of `block` (what is stored and fetched).
    pub fn compressed_bytes(&self, block: &[u8]) -> usize {
        let e = self.encode(block);
        self.table
            .size_of(e.encoding)
            .unwrap_or(self.params().block_bytes)
    }
}

impl BlockCodec for MagBdi {
    fn name(&self) -> &str {
        &self.name
    }

    fn block_bytes(&self) -> usize {
        self.table.params.block_bytes
    }

    /// The encoding (`encoding_bits()` wide) followed by the stored bytes.
    fn compress(&self, block: &[u8]) -> Compressed {
        let e = self.encode(block);
        let mut w = VecBitWriter::new();
        w.put(e.encoding as u64, self.table.encoding_bits());
        w.put_bytes(&e.data);
        w.finish()
    }

    fn decompress(&self, bits: &[u8], len: usize) -> Result<Vec<u8>, DecodeError> {
        let mut r = Reader::new(NAME, bits, len)?;
        let e = self.table.encoding_bits();
        let code = r.get(e)? as u32;
        let bytes = self.table.size_of(code).ok_or(DecodeError::BadCode {
            codec: NAME,
            code,
            at: 0,
        })?;
        let data = r.bytes(bytes)?;
        r.finish()?;
        self.decode(code, &data)
    }

    fn max_bits(&self) -> usize {
        self.table.encoding_bits() as usize + 8 * self.table.params.block_bytes
    }
}
