//! The block-codec abstraction of the bulk layer and the registry that
//! opens a codec by name.
//!
//! MPC is wired directly to [`MpcCodec`] (no allocation per block, and its
//! blocks are self-delimiting, so chunks need no length table). MAG-aware
//! BDI and DPC run their bulk implementations ([`crate::fast`]: the golden
//! models' bit strings without allocating per block). Any other
//! [`BlockCodec`] plugs in through [`DynBulk`]; new golden models are added
//! in [`open_codec`] by name.

use std::path::Path;

use sha2::{Digest, Sha256};

use super::bits::{extract, BitSink, EXTRACT_MAX};
use super::fast::{FastDpc, FastMagBdi};
use super::format::{Header, MAX_BLOCK_BYTES};
use super::stream::check_limits;
use super::BulkError;
use golden::baselines::{Bdi, BlockCodec, Bpc, CPack, Fpc};
use golden::dpc::DpcParams;
use golden::magbdi::{DeltaMode, Params as MagParams};
use golden::mpc::fast::{Kernel, WRITE_BYTES};
use golden::mpc::{model::file_sha256, ModelSet, MpcCodec, BLOCK_BYTES};

/// Which GPU kernels can run a codec (the GPU engine has kernels for MPC,
/// MAG-aware BDI and DPC).
#[derive(Clone, Copy, Debug)]
pub enum GpuKind<'a> {
    None,
    Mpc(&'a ModelSet),
    MagBdi(MagParams),
    Dpc(DpcParams),
}

/// What the bulk layer needs from a block codec.
pub trait BulkCodec: Send + Sync {
    /// The GPU kernels that code this codec's blocks, if any.
    fn gpu_kind(&self) -> GpuKind<'_> {
        GpuKind::None
    }
    /// Name stored in the container header (at most 16 ASCII bytes).
    fn algo(&self) -> &str;
    /// Bytes in one block.
    fn block_bytes(&self) -> usize;
    /// Widest compressed block in bits.
    fn max_bits(&self) -> usize;
    /// Identity stored in the container: SHA-256 of the model file for
    /// trained codecs, of `algo:block_bytes` for fixed ones.
    fn identity(&self) -> [u8; 32];
    /// Whether a block's length can be found by decoding it
    /// ([`decompress_prefix`](Self::decompress_prefix) works); such codecs
    /// need no per-block length table.
    fn self_delimiting(&self) -> bool {
        false
    }
    /// Append the compressed bits of `block` to `sink`; returns their count.
    fn compress_block(&self, block: &[u8], sink: &mut BitSink) -> usize;
    /// Decode exactly `len` bits into `out` (`block_bytes()` long).
    fn decompress_block(&self, bits: &[u8], len: usize, out: &mut [u8]) -> Result<(), String>;
    /// Decode one block from the start of at most `avail` bits; returns the
    /// bits used. Only for self-delimiting codecs.
    fn decompress_prefix(
        &self,
        _bits: &[u8],
        _avail: usize,
        _out: &mut [u8],
    ) -> Result<usize, String> {
        Err(format!("{}: not a self-delimiting codec", self.algo()))
    }
    /// [`decompress_prefix`](Self::decompress_prefix) of the block that
    /// starts at bit `at` of `padded` (which holds [`EXTRACT_PAD`](super::bits::EXTRACT_PAD) bytes
    /// past its payload). The default re-aligns the bits first; codecs that
    /// read at any bit offset override it.
    fn decompress_at(
        &self,
        padded: &[u8],
        at: usize,
        avail: usize,
        out: &mut [u8],
    ) -> Result<usize, String> {
        let mut tmp = [0u8; EXTRACT_MAX];
        let avail = avail.min(8 * EXTRACT_MAX);
        extract(padded, at, avail, &mut tmp);
        self.decompress_prefix(&tmp[..avail.div_ceil(8)], avail, out)
    }
}

/// MPC through its fast table-driven codec.
pub struct MpcBulk {
    codec: MpcCodec,
    identity: [u8; 32],
    max_bits: usize,
}

impl MpcBulk {
    /// Load the model set at `path` (directory or file); the identity is
    /// the SHA-256 of its model file.
    pub fn load(path: &Path) -> Result<Self, BulkError> {
        Self::load_with_kernel(path, Kernel::best())
    }

    /// [`load`](Self::load) with a given kernel (the scalar one where this
    /// CPU lacks it).
    pub fn load_with_kernel(path: &Path, kernel: Kernel) -> Result<Self, BulkError> {
        let set = ModelSet::load(path).map_err(|e| BulkError::Config(e.to_string()))?;
        let hash = file_sha256(path).map_err(|e| BulkError::Config(e.to_string()))?;
        let mut identity = [0u8; 32];
        hex::decode_to_slice(&hash, &mut identity)
            .map_err(|e| BulkError::Config(format!("model hash: {e}")))?;
        Ok(MpcBulk {
            codec: MpcCodec::with_kernel(&set, kernel),
            identity,
            max_bits: set.max_bits() as usize,
        })
    }

    pub fn new(set: &ModelSet, identity: [u8; 32]) -> Self {
        MpcBulk {
            codec: MpcCodec::new(set),
            identity,
            max_bits: set.max_bits() as usize,
        }
    }

    /// The kernel the codec runs.
    pub fn kernel(&self) -> Kernel {
        self.codec.kernel()
    }
}

impl BulkCodec for MpcBulk {
    fn gpu_kind(&self) -> GpuKind<'_> {
        GpuKind::Mpc(self.codec.model_set())
    }
    fn algo(&self) -> &str {
        "mpc"
    }
    fn block_bytes(&self) -> usize {
        BLOCK_BYTES
    }
    fn max_bits(&self) -> usize {
        self.max_bits
    }
    fn identity(&self) -> [u8; 32] {
        self.identity
    }
    fn self_delimiting(&self) -> bool {
        true
    }
    #[inline]
    fn compress_block(&self, block: &[u8], sink: &mut BitSink) -> usize {
        let b: &[u8; BLOCK_BYTES] = block
            .try_into()
            .unwrap_or_else(|_| panic!("MPC: block of {} bytes, codec takes 32", block.len()));
        sink.put_with(WRITE_BYTES, |buf, bit| {
            self.codec.compress_into(b, buf, bit).1
        })
    }
    fn decompress_block(&self, bits: &[u8], len: usize, out: &mut [u8]) -> Result<(), String> {
        let b = self
            .codec
            .decompress(bits, len)
            .map_err(|e| e.to_string())?;
        out.copy_from_slice(&b);
        Ok(())
    }
    #[inline]
    fn decompress_prefix(
        &self,
        bits: &[u8],
        avail: usize,
        out: &mut [u8],
    ) -> Result<usize, String> {
        self.decompress_at(bits, 0, avail, out)
    }
    #[inline]
    fn decompress_at(
        &self,
        padded: &[u8],
        at: usize,
        avail: usize,
        out: &mut [u8],
    ) -> Result<usize, String> {
        let (b, used) = self
            .codec
            .decompress_at(padded, at, avail)
            .map_err(|e| e.to_string())?;
        out.copy_from_slice(&b);
        Ok(used)
    }
}

/// Any [`BlockCodec`] (one `Vec` per block: the trait's cost, not ours).
pub struct DynBulk {
    algo: String,
    codec: Box<dyn BlockCodec>,
    identity: [u8; 32],
    gpu: GpuKind<'static>,
}

impl DynBulk {
    /// Wrap a codec without a model file; its identity is
    /// `SHA-256("golden-bulk:{algo}:{block_bytes}")`.
    pub fn new(algo: &str, codec: Box<dyn BlockCodec>) -> Self {
        let identity = fixed_identity(algo, codec.block_bytes());
        DynBulk {
            algo: algo.to_string(),
            codec,
            identity,
            gpu: GpuKind::None,
        }
    }

    /// The same, with GPU kernels.
    pub fn with_gpu(mut self, gpu: GpuKind<'static>) -> Self {
        self.gpu = gpu;
        self
    }
}

impl BulkCodec for DynBulk {
    fn gpu_kind(&self) -> GpuKind<'_> {
        self.gpu
    }
    fn algo(&self) -> &str {
        &self.algo
    }
    fn block_bytes(&self) -> usize {
        self.codec.block_bytes()
    }
    fn max_bits(&self) -> usize {
        self.codec.max_bits()
    }
    fn identity(&self) -> [u8; 32] {
        self.identity
    }
    fn compress_block(&self, block: &[u8], sink: &mut BitSink) -> usize {
        let c = self.codec.compress(block);
        sink.put_bits(&c.bytes, c.len);
        c.len
    }
    fn decompress_block(&self, bits: &[u8], len: usize, out: &mut [u8]) -> Result<(), String> {
        let b = self
            .codec
            .decompress(bits, len)
            .map_err(|e| e.to_string())?;
        if b.len() != out.len() {
            return Err(format!(
                "decoded {} bytes, blocks are {} bytes",
                b.len(),
                out.len()
            ));
        }
        out.copy_from_slice(&b);
        Ok(())
    }
}

/// The identity of a codec without a model file:
/// `SHA-256("golden-bulk:{algo}:{block_bytes}")`.
fn fixed_identity(algo: &str, block_bytes: usize) -> [u8; 32] {
    Sha256::digest(format!("golden-bulk:{algo}:{block_bytes}").as_bytes()).into()
}

/// MAG-aware BDI through its bulk implementation: the containers of the
/// golden model behind [`DynBulk`], bit for bit.
pub struct MagBdiBulk {
    codec: FastMagBdi,
    identity: [u8; 32],
}

impl MagBdiBulk {
    pub fn new(params: MagParams) -> Result<Self, BulkError> {
        let codec = FastMagBdi::new(params).map_err(|e| BulkError::Config(e.to_string()))?;
        Ok(MagBdiBulk {
            codec,
            identity: fixed_identity("magbdi", params.block_bytes),
        })
    }
}

impl BulkCodec for MagBdiBulk {
    fn gpu_kind(&self) -> GpuKind<'_> {
        GpuKind::MagBdi(*self.codec.params())
    }
    fn algo(&self) -> &str {
        "magbdi"
    }
    fn block_bytes(&self) -> usize {
        self.codec.params().block_bytes
    }
    fn max_bits(&self) -> usize {
        self.codec.max_bits()
    }
    fn identity(&self) -> [u8; 32] {
        self.identity
    }
    #[inline]
    fn compress_block(&self, block: &[u8], sink: &mut BitSink) -> usize {
        sink.put_with(self.codec.write_room(), |buf, bit| {
            self.codec.compress_into(block, buf, bit)
        })
    }
    #[inline]
    fn decompress_block(&self, bits: &[u8], len: usize, out: &mut [u8]) -> Result<(), String> {
        check_out(out, self.block_bytes())?;
        self.codec
            .decompress_into(bits, len, out)
            .map_err(|e| e.to_string())
    }
}

/// Plain DPC through its bulk implementation: the containers of the
/// golden model behind [`DynBulk`], bit for bit.
pub struct DpcBulk {
    codec: FastDpc,
    identity: [u8; 32],
}

impl DpcBulk {
    pub fn new(params: DpcParams) -> Self {
        DpcBulk {
            codec: FastDpc::new(params),
            identity: fixed_identity("dpc", params.block_bytes()),
        }
    }
}

impl BulkCodec for DpcBulk {
    fn gpu_kind(&self) -> GpuKind<'_> {
        GpuKind::Dpc(*self.codec.params())
    }
    fn algo(&self) -> &str {
        "dpc"
    }
    fn block_bytes(&self) -> usize {
        self.codec.params().block_bytes()
    }
    fn max_bits(&self) -> usize {
        self.codec.max_bits()
    }
    fn identity(&self) -> [u8; 32] {
        self.identity
    }
    #[inline]
    fn compress_block(&self, block: &[u8], sink: &mut BitSink) -> usize {
        sink.put_with(self.codec.write_room(), |buf, bit| {
            self.codec.compress_into(block, buf, bit)
        })
    }
    #[inline]
    fn decompress_block(&self, bits: &[u8], len: usize, out: &mut [u8]) -> Result<(), String> {
        check_out(out, self.block_bytes())?;
        self.codec
            .decompress_into(bits, len, out)
            .map_err(|e| e.to_string())
    }
}

/// The output buffer holds exactly one block (the message [`DynBulk`]
/// gives otherwise).
fn check_out(out: &[u8], block_bytes: usize) -> Result<(), String> {
    if out.len() != block_bytes {
        return Err(format!(
            "decoded {block_bytes} bytes, blocks are {} bytes",
            out.len()
        ));
    }
    Ok(())
}

/// Algorithms [`open_codec`] knows.
pub const ALGOS: &[&str] = &["mpc", "bdi", "fpc", "cpack", "bpc", "magbdi", "dpc"];

/// Open a codec by name. `model` is the model set (MPC); `block_bytes`
/// the block size (default: 32 for MPC and the word-based baselines, 128
/// for MAG-aware BDI and DPC, as in their papers). A codec whose blocks the
/// container cannot hold is refused here, so nothing is written that could
/// not be read back.
pub fn open_codec(
    algo: &str,
    model: Option<&Path>,
    block_bytes: Option<usize>,
) -> Result<Box<dyn BulkCodec>, BulkError> {
    let c = open_unchecked(algo, model, block_bytes).map_err(|e| match (e, block_bytes) {
        (BulkError::Config(why), Some(bb)) if algo != "mpc" => BulkError::Config(format!(
            "{algo} with --block-bytes {bb}: {why}{}",
            block_size_hint(algo)
        )),
        (e, _) => e,
    })?;
    check_limits(c.as_ref())?;
    Ok(c)
}

/// Open the codec a container header names: its algorithm at its block
/// size (`model`: the model set, for MPC). An algorithm this build does not
/// know, or a block size its codec does not code, is refused with an error
/// naming the header field ([`BulkError::HeaderCodec`]), never one about
/// command-line flags. The readers check the codec's identity, packing and
/// length-field width against the header.
pub fn open_codec_for(
    header: &Header,
    model: Option<&Path>,
) -> Result<Box<dyn BulkCodec>, BulkError> {
    let algo = header.algo.as_str();
    if !ALGOS.contains(&algo) {
        return Err(BulkError::HeaderCodec(format!(
            "algorithm `{algo}` is not one this build codes ({})",
            ALGOS.join(", ")
        )));
    }
    let bb = header.block_bytes as usize;
    let unsupported = || {
        BulkError::HeaderCodec(format!(
            "block size {bb} is not one `{algo}` codes ({})",
            size_list(algo)
        ))
    };
    if bb == 0 || bb > MAX_BLOCK_BYTES as usize {
        return Err(unsupported());
    }
    if algo == "mpc" {
        if bb != BLOCK_BYTES {
            return Err(unsupported());
        }
        return open_codec(algo, model, Some(bb));
    }
    match open_unchecked(algo, model, Some(bb)) {
        Ok(c) if check_limits(c.as_ref()).is_ok() => Ok(c),
        _ => Err(unsupported()),
    }
}

/// The block sizes `algo` takes, in words: `32 or 128`, `64 to 512 in
/// steps of 32`.
fn size_list(algo: &str) -> String {
    let sizes = block_sizes(algo);
    match sizes.as_slice() {
        [] => "none".to_string(),
        [a] => a.to_string(),
        [a, b] => format!("{a} or {b}"),
        [a, .., z] if sizes.windows(2).all(|w| w[1] - w[0] == 32) => {
            format!("{a} to {z} in steps of 32")
        }
        _ => sizes
            .iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// What the bulk layer fixes for `algo` and which block sizes it takes.
fn block_size_hint(algo: &str) -> String {
    let list = size_list(algo);
    let fixed = match algo {
        "magbdi" => " (the bulk codec uses a 32-byte memory access granularity and 4-byte base, as in the paper)",
        "dpc" => " (the bulk codec uses 4-byte segments and 32-byte sectors, as in the paper)",
        _ => "",
    };
    format!("; block sizes{fixed}: {list}")
}

/// Every block size `algo` takes in the bulk layer (MPC: 32), ascending.
pub fn block_sizes(algo: &str) -> Vec<usize> {
    if algo == "mpc" {
        return vec![BLOCK_BYTES];
    }
    (1..=MAX_BLOCK_BYTES as usize)
        .filter(|&bb| {
            open_unchecked(algo, None, Some(bb)).is_ok_and(|c| check_limits(c.as_ref()).is_ok())
        })
        .collect()
}

fn open_unchecked(
    algo: &str,
    model: Option<&Path>,
    block_bytes: Option<usize>,
) -> Result<Box<dyn BulkCodec>, BulkError> {
    let bb = block_bytes.unwrap_or(32);
    let cfg = |e: golden::baselines::ConfigError| BulkError::Config(e.to_string());
    Ok(match algo {
        "mpc" => {
            if bb != BLOCK_BYTES {
                return Err(BulkError::Config(format!(
                    "mpc: blocks are 32 bytes, not {bb}"
                )));
            }
            let model = model.ok_or_else(|| {
                BulkError::Config("mpc needs a model set (--model models/default)".into())
            })?;
            Box::new(MpcBulk::load(model)?)
        }
        "bdi" => Box::new(DynBulk::new(algo, Box::new(Bdi::new(bb).map_err(cfg)?))),
        "fpc" => Box::new(DynBulk::new(algo, Box::new(Fpc::new(bb).map_err(cfg)?))),
        "cpack" => Box::new(DynBulk::new(algo, Box::new(CPack::new(bb).map_err(cfg)?))),
        "bpc" => Box::new(DynBulk::new(algo, Box::new(Bpc::new(bb).map_err(cfg)?))),
        // MAG-aware BDI: the paper's 32-byte MAG, 4-byte base, unsigned
        // deltas; 128-byte blocks unless told.
        "magbdi" => {
            let bb = block_bytes.unwrap_or(128);
            let p = MagParams::new(bb, 32, 4, DeltaMode::Unsigned);
            Box::new(MagBdiBulk::new(p)?)
        }
        // DPC: 4-byte segments, 32-byte sectors; 128-byte blocks unless told.
        "dpc" => {
            let bb = block_bytes.unwrap_or(128);
            let p = DpcParams::new(bb, 4, 32).map_err(|e| BulkError::Config(e.to_string()))?;
            Box::new(DpcBulk::new(p))
        }
        _ => {
            return Err(BulkError::UnknownAlgo {
                algo: algo.to_string(),
                known: ALGOS.join(", "),
            })
        }
    })
}
