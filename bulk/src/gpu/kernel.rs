//! The contract between the engine and one algorithm's kernels, and
//! direct runs of them on a batch of blocks (used by the tests and the
//! kernel-rate measurement).
//!
//! An algorithm supplies two WGSL sources (compiled as two modules, so
//! that each declares only its own bindings), with one entry point each,
//! `@workgroup_size(64)`, thread index `gid.x + gid.y * nwg.x * 64`:
//!
//! * `compress`, one thread per block, bindings
//!   0 `params: Params` (uniform: `n` blocks, then the algorithm's words;
//!   the built-in kernels' structs are in [`uniform`](super::uniform)),
//!   1 `tables: array<u32>` (read; or a uniform `array<vec4<u32>, N>`, see
//!   [`GpuAlgo::tables_uniform`]), 2 `input: array<u32>` (read: block i is
//!   words `i*block_words ..`, the block's bytes little-endian),
//!   3 `slots: array<u32>` (read_write: block i's code in words
//!   `i*slot_words ..`, written with [`BITS_WRITE`](super::BITS_WRITE)),
//!   4 `lens: array<u32>` (read_write: block i's code length in bits).
//! * `decompress`, one thread per segment (a run of consecutive blocks
//!   whose codes are back to back), bindings 0 `params` (`n` segments, then
//!   the algorithm's words), 1 `tables`, 2 `payload: array<u32>` (read; see
//!   [`BITS_READ`](super::BITS_READ)), 3 `segs: array<vec4<u32>>` (read:
//!   start bit, bits, first block, block count), 4 `out: array<u32>`
//!   (read_write: block i in words `i*block_words ..`), 5 `status:
//!   array<u32>` (read_write: 0 when the segment's blocks decode and use
//!   exactly its bits, otherwise nonzero).
//!
//! Every entry point uses every one of its bindings. A nonzero status only
//! says "this chunk is bad": the engine then decodes the chunk on the CPU,
//! which names the block and the error exactly as the CPU engines do.

use super::device::Gpu;
use super::uniform::Uniform;
use crate::BulkError;

/// Bytes of the `params` uniform buffer: `n` and at most 15 words.
pub const PARAMS_BYTES: usize = 64;

/// One algorithm's kernels and the data they need.
#[derive(Clone, Debug)]
pub struct GpuAlgo {
    /// Name for labels and messages (`mpc`, `magbdi`, `dpc`).
    pub name: &'static str,
    /// WGSL source of `compress` (without the bit-writer prelude).
    pub source: String,
    /// WGSL source of `decompress` (without the bit-reader prelude).
    pub decompress: String,
    /// Algorithm words of the uniform after `n` (at most 15). The built-in
    /// kernels make them from their [`Uniform`] struct with
    /// [`GpuAlgo::params_of`]; kernels defined elsewhere list their words.
    pub params: Vec<u32>,
    /// Contents of the `tables` binding (at least one word).
    pub tables: Vec<u32>,
    /// Words in one block (block bytes / 4).
    pub block_words: u32,
    /// Words in one compress slot (enough for the widest code).
    pub slot_words: u32,
}

impl GpuAlgo {
    /// The compress kernel's full source.
    pub fn compress_source(&self) -> String {
        format!("{}\n{}", super::BITS_WRITE, self.source)
    }

    /// The decompress kernel's full source.
    pub fn decompress_source(&self) -> String {
        format!("{}\n{}", super::BITS_READ, self.decompress)
    }

    /// Whether the kernels bind `tables` as a uniform array (`var<uniform>
    /// tables: array<vec4<u32>, N>`, N vectors holding exactly
    /// [`GpuAlgo::tables`]) rather than a storage array.
    pub fn tables_uniform(&self) -> bool {
        self.source.contains("var<uniform> tables")
    }

    /// The `tables` binding's buffer on `gpu`.
    pub fn tables_buffer(&self, gpu: &Gpu) -> wgpu::Buffer {
        if self.tables_uniform() {
            gpu.uniform("tables", bytemuck::cast_slice(&self.tables))
        } else {
            gpu.storage_init("tables", &self.tables)
        }
    }

    /// The [`GpuAlgo::params`] of a uniform struct whose first member is
    /// `n` (its value is not kept: each dispatch sets its own).
    pub fn params_of<U: Uniform>(u: &U) -> Vec<u32> {
        assert_eq!(
            U::FIELDS.first(),
            Some(&("n", 0)),
            "uniform without a leading n"
        );
        bytemuck::cast_slice::<U, u32>(std::slice::from_ref(u))[1..].to_vec()
    }

    /// The bytes of the `params` uniform of a dispatch over `n` blocks or
    /// segments.
    pub(crate) fn uniform(&self, n: u32) -> Vec<u8> {
        let mut b = Vec::with_capacity(PARAMS_BYTES);
        b.extend_from_slice(bytemuck::bytes_of(&n));
        b.extend_from_slice(bytemuck::cast_slice(&self.params));
        b
    }
}

/// A block's code as the compress kernel left it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Code {
    /// MSB-first bytes, zero-padded to a byte.
    pub bytes: Vec<u8>,
    pub bits: usize,
}

fn words_of(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks(4)
        .map(|c| {
            let mut w = [0u8; 4];
            w[..c.len()].copy_from_slice(c);
            u32::from_le_bytes(w)
        })
        .collect()
}

/// Run `algo`'s compress kernel on `blocks` (a whole number of blocks)
/// and return each block's code.
pub fn run_compress(gpu: &Gpu, algo: &GpuAlgo, blocks: &[u8]) -> Result<Vec<Code>, BulkError> {
    let bb = 4 * algo.block_words as usize;
    if bb == 0 || !blocks.len().is_multiple_of(bb) {
        return Err(BulkError::Config(format!(
            "{}: {} bytes is not a whole number of {bb}-byte blocks",
            algo.name,
            blocks.len()
        )));
    }
    let n = blocks.len() / bb;
    let pipe = gpu.pipeline(algo.name, &algo.compress_source(), "compress")?;
    let params = gpu.uniform("params", &algo.uniform(n as u32));
    let tables = algo.tables_buffer(gpu);
    let input = gpu.storage_init("input", &words_of(blocks));
    let sw = algo.slot_words as usize;
    let slots = gpu.storage("slots", 4 * (n * sw) as u64);
    let lens = gpu.storage("lens", 4 * n as u64);
    let group = gpu.bind(&pipe, &[&params, &tables, &input, &slots, &lens]);
    let mut enc = gpu.device.create_command_encoder(&Default::default());
    Gpu::dispatch(&mut enc, &pipe, &group, n as u64);
    gpu.submit_wait(enc)?;
    let lens = gpu.read_words(&lens, n)?;
    let slots = gpu.read_words(&slots, n * sw)?;
    let mut codes = Vec::with_capacity(n);
    for (i, &bits) in lens.iter().enumerate() {
        let bits = bits as usize;
        if bits > 32 * sw {
            return Err(BulkError::Gpu(format!(
                "{}: block {i}: code of {bits} bits exceeds its slot",
                algo.name
            )));
        }
        let bytes: Vec<u8> = slots[i * sw..(i + 1) * sw]
            .iter()
            .flat_map(|w| w.to_be_bytes())
            .take(bits.div_ceil(8))
            .collect();
        codes.push(Code { bytes, bits });
    }
    Ok(codes)
}

/// One decoding segment: consecutive blocks whose codes are back to back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    pub start_bit: u32,
    pub bits: u32,
    pub first_block: u32,
    pub blocks: u32,
}

/// Run `algo`'s decompress kernel: `payload` holds the codes, `segs` say
/// where; returns the decoded blocks (`blocks` of them) and each segment's
/// status.
pub fn run_decompress(
    gpu: &Gpu,
    algo: &GpuAlgo,
    payload: &[u8],
    segs: &[Segment],
    blocks: usize,
) -> Result<(Vec<u8>, Vec<u32>), BulkError> {
    let pipe = gpu.pipeline(algo.name, &algo.decompress_source(), "decompress")?;
    let params = gpu.uniform("params", &algo.uniform(segs.len() as u32));
    let tables = algo.tables_buffer(gpu);
    let mut padded = payload.to_vec();
    padded.resize(payload.len() + 8, 0);
    let pay = gpu.storage_init("payload", &words_of(&padded));
    let seg_words: Vec<u32> = segs
        .iter()
        .flat_map(|s| [s.start_bit, s.bits, s.first_block, s.blocks])
        .collect();
    let segb = gpu.storage_init("segs", &seg_words);
    let bw = algo.block_words as usize;
    let out = gpu.storage("out", 4 * (blocks * bw) as u64);
    let status = gpu.storage("status", 4 * segs.len() as u64);
    let group = gpu.bind(&pipe, &[&params, &tables, &pay, &segb, &out, &status]);
    let mut enc = gpu.device.create_command_encoder(&Default::default());
    Gpu::dispatch(&mut enc, &pipe, &group, segs.len() as u64);
    gpu.submit_wait(enc)?;
    let st = gpu.read_words(&status, segs.len())?;
    let o = gpu.read(&out, 4 * (blocks * bw) as u64)?;
    Ok((o, st))
}
