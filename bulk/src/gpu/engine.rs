//! The GPU engine: windows of chunks compressed and decompressed by one
//! algorithm's kernels, with the chunk packing on the device.
//!
//! A window is cut into parts of whole chunks (about [`PART_BYTES`] of
//! input each by default), and the parts go through a pipeline of
//! [`GpuEngine::in_flight`] buffer sets: while the device copies and codes
//! part p, the host fills the mapped upload buffer of part p+1 and copies
//! the results of part p-1 out of its mapped readback buffer. Each part is
//! one submission, and maps one upload and one readback buffer once each:
//!
//! * compress: upload the blocks; `compress` (one thread per block: code
//!   into a slot, length); `chunk_scan` (one workgroup per chunk: block
//!   offsets, chunk bits); `window_scan` (chunk byte offsets); `scatter`
//!   (one thread per block: its code and its group's table field ORed into
//!   the part's output at their places); download the chunk bit counts and
//!   byte offsets and the packed output (its worst-case size, so that no
//!   second round trip waits for the actual size; the host copies only the
//!   actual bytes out of the mapped buffer), all into one readback buffer.
//! * decompress: the host reads the chunks' length tables into decoding
//!   segments (one block, one group, or a whole chunk without a table);
//!   upload the payloads and segments (staged in one buffer); `decompress`
//!   (one thread per segment); download the segment statuses and the
//!   blocks (into one buffer).
//!
//! [`GpuEngine::transfer_window`] runs the same parts and waits with the
//! copies alone (no kernel): the bench's measure of the host path.
//!
//! With one set in flight the phases are separated by waits and timed one
//! by one (upload, kernels, download): the bench's split. Device buffers
//! are allocated on first use and reused (grown only if a later part is
//! larger); the model-set tables are uploaded once.

use std::collections::VecDeque;
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use rayon::prelude::*;
use std::time::Instant;

use super::device::Gpu;
use super::kernel::{GpuAlgo, PARAMS_BYTES};
use super::uniform::{PackUniform, ScanUniform};
use crate::format::Header;
use crate::{BulkError, WindowChunk, WindowCoder};

mod resident;
pub use resident::{ResidentBlocks, ResidentChunks};

const PACK: &str = include_str!("wgsl/pack.wgsl");
const SCATTER: &str = include_str!("wgsl/scatter.wgsl");
const WINDOW_SCAN: &str = include_str!("wgsl/window_scan.wgsl");

/// Input bytes per part of a window by default (a part is at least one
/// chunk): the unit of the upload / kernels / download pipeline.
pub const PART_BYTES: usize = 8 << 20;
/// Most buffer sets in flight.
pub const MAX_IN_FLIGHT: usize = 4;

/// Time spent per phase (seconds, wall clock on the host) and bytes moved.
/// With one buffer set in flight the phases follow each other and are
/// timed exactly. With more they overlap, and the figures are the host's
/// view: upload = filling the mapped upload buffers, kernel = waiting for
/// the device (its copies and kernels), download = copying the results out
/// of the mapped readback buffers.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GpuStats {
    /// Host to device copies (inputs, payloads, segments).
    pub upload_s: f64,
    /// Kernels (and the small copies between them).
    pub kernel_s: f64,
    /// Device to host copies and mapping.
    pub download_s: f64,
    pub bytes_up: u64,
    pub bytes_down: u64,
    pub windows: u64,
}

struct Buf {
    buf: wgpu::Buffer,
    cap: u64,
}

/// Kinds of reused buffers.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Storage,
    Readback,
    Upload,
    /// A storage buffer bound only in ranges (resident blocks): limited by
    /// the largest buffer, not the largest binding.
    Resident,
}

/// A buffer reused across windows, replaced by a larger one when needed.
fn ensure(
    gpu: &Gpu,
    slot: &mut Option<Buf>,
    label: &str,
    bytes: u64,
    kind: Kind,
) -> Result<(), BulkError> {
    let bytes = bytes.max(4).next_multiple_of(4);
    if slot.as_ref().is_some_and(|b| b.cap >= bytes) {
        return Ok(());
    }
    if kind == Kind::Resident && bytes > gpu.limits.max_buffer_size {
        return Err(BulkError::Gpu(format!(
            "{label}: {bytes} bytes exceed the adapter's largest buffer ({})",
            gpu.limits.max_buffer_size
        )));
    }
    if kind == Kind::Storage && bytes > gpu.max_binding() {
        return Err(BulkError::Gpu(format!(
            "{label}: {bytes} bytes exceed the adapter's largest storage binding ({}); use a smaller --window",
            gpu.max_binding()
        )));
    }
    let buf = match kind {
        Kind::Storage | Kind::Resident => gpu.storage(label, bytes),
        Kind::Readback => gpu.readback(label, bytes),
        Kind::Upload => gpu.upload_staging(label, bytes),
    };
    *slot = Some(Buf { buf, cap: bytes });
    Ok(())
}

fn get(b: &Option<Buf>) -> &wgpu::Buffer {
    match b {
        Some(b) => &b.buf,
        None => unreachable!("buffer allocated by ensure()"),
    }
}

/// One buffer set: everything one part in flight uses.
struct Buffers {
    comp_params: wgpu::Buffer,
    dec_params: wgpu::Buffer,
    pack_params: wgpu::Buffer,
    scan_params: wgpu::Buffer,
    input: Option<Buf>,
    slots: Option<Buf>,
    lens: Option<Buf>,
    offs: Option<Buf>,
    chunk_bits: Option<Buf>,
    chunk_byte: Option<Buf>,
    out: Option<Buf>,
    /// Compress readback: chunk bit counts and byte offsets, then the
    /// packed output (one mapping per part).
    out_rb: Option<Buf>,
    payload: Option<Buf>,
    segs: Option<Buf>,
    blocks: Option<Buf>,
    status: Option<Buf>,
    /// Decompress readback: segment statuses, then the blocks (one
    /// mapping per part).
    blocks_rb: Option<Buf>,
    up: Option<Buf>,
}

impl Buffers {
    fn new(gpu: &Gpu) -> Buffers {
        Buffers {
            comp_params: gpu.uniform("compress params", &[0; PARAMS_BYTES]),
            dec_params: gpu.uniform("decompress params", &[0; PARAMS_BYTES]),
            pack_params: gpu.uniform("pack params", bytemuck::bytes_of(&PackUniform::default())),
            scan_params: gpu.uniform("scan params", bytemuck::bytes_of(&ScanUniform::default())),
            input: None,
            slots: None,
            lens: None,
            offs: None,
            chunk_bits: None,
            chunk_byte: None,
            out: None,
            out_rb: None,
            payload: None,
            segs: None,
            blocks: None,
            status: None,
            blocks_rb: None,
            up: None,
        }
    }
}

/// The buffers of one compress pass (uniforms: compress, pack, scan).
struct CompressBinds<'a> {
    params: [&'a wgpu::Buffer; 3],
    input: wgpu::BufferBinding<'a>,
    slots: &'a wgpu::Buffer,
    lens: &'a wgpu::Buffer,
    offs: &'a wgpu::Buffer,
    chunk_bits: &'a wgpu::Buffer,
    chunk_byte: &'a wgpu::Buffer,
    out: &'a wgpu::Buffer,
}

/// One algorithm on one device.
pub struct GpuEngine {
    pub gpu: Gpu,
    algo: GpuAlgo,
    compress: wgpu::ComputePipeline,
    decompress: wgpu::ComputePipeline,
    chunk_scan: wgpu::ComputePipeline,
    window_scan: wgpu::ComputePipeline,
    scatter: wgpu::ComputePipeline,
    tables: wgpu::Buffer,
    max_bits: usize,
    in_flight: AtomicUsize,
    part_bytes: AtomicUsize,
    sets: Mutex<Vec<Buffers>>,
    stats: Mutex<GpuStats>,
    resident: Mutex<resident::ResidentScratch>,
}

fn words_le(bytes: &[u8]) -> impl Iterator<Item = u32> + '_ {
    bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
}

/// Phase times of one part.
#[derive(Default)]
struct Times {
    up: f64,
    kernel: f64,
    down: f64,
}

/// A compressed part submitted to the device.
struct CompressPart {
    chunks: Range<usize>,
    submission: wgpu::SubmissionIndex,
    /// Bytes of the readback buffer holding the packed output, after the
    /// chunk bit counts and byte offsets (at `packed_at`).
    packed_at: u64,
    out_bytes: u64,
    times: Times,
    bytes_up: u64,
}

/// A decompressed part submitted to the device (or not: `submission` is
/// `None` when no chunk of it could go there).
struct DecompressPart {
    chunks: Range<usize>,
    submission: Option<wgpu::SubmissionIndex>,
    /// Per chunk of the part: first block in the part, first segment,
    /// segments; `None` when the host already found it malformed.
    plan: Vec<Option<(usize, usize, usize)>>,
    nsegs: usize,
    out_bytes: u64,
    /// Where the blocks start in the readback buffer, after the segment
    /// statuses.
    blocks_at: u64,
    times: Times,
    bytes_up: u64,
}

/// A part of a transfers-only window submitted to the device.
struct EchoPart {
    range: Range<usize>,
    submission: wgpu::SubmissionIndex,
    times: Times,
}

/// Cut `chunks` chunks of `chunk_input_bytes` each into parts of about
/// `part_bytes` (at least one chunk each).
fn parts(chunks: usize, chunk_input_bytes: usize, part_bytes: usize) -> Vec<Range<usize>> {
    let per = (part_bytes / chunk_input_bytes.max(1)).max(1);
    (0..chunks)
        .step_by(per)
        .map(|a| a..(a + per).min(chunks))
        .collect()
}

impl GpuEngine {
    /// Compile `algo`'s kernels on `gpu` and upload its tables. `max_bits`
    /// is the codec's widest block. Two buffer sets are in flight.
    pub fn new(gpu: Gpu, algo: GpuAlgo, max_bits: usize) -> Result<GpuEngine, BulkError> {
        if algo.block_words == 0 || 4 * (1 + algo.params.len()) > PARAMS_BYTES {
            return Err(BulkError::Gpu(format!(
                "{}: bad kernel description",
                algo.name
            )));
        }
        let compress = gpu.pipeline(algo.name, &algo.compress_source(), "compress")?;
        let decompress = gpu.pipeline(algo.name, &algo.decompress_source(), "decompress")?;
        let chunk_scan = gpu.pipeline("pack", PACK, "chunk_scan")?;
        let window_scan = gpu.pipeline("window_scan", WINDOW_SCAN, "window_scan")?;
        let scatter = gpu.pipeline("scatter", SCATTER, "scatter")?;
        let tables = algo.tables_buffer(&gpu);
        let resident = Mutex::new(resident::ResidentScratch::new(&gpu));
        Ok(GpuEngine {
            gpu,
            algo,
            compress,
            decompress,
            chunk_scan,
            window_scan,
            scatter,
            tables,
            max_bits,
            in_flight: AtomicUsize::new(2),
            part_bytes: AtomicUsize::new(PART_BYTES),
            sets: Mutex::new(Vec::new()),
            stats: Mutex::new(GpuStats::default()),
            resident,
        })
    }

    /// The algorithm's name.
    pub fn algo(&self) -> &str {
        self.algo.name
    }

    /// Buffer sets in flight (1: the phases one after the other, each
    /// timed).
    pub fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::Relaxed)
    }

    /// Set the buffer sets in flight, 1 to [`MAX_IN_FLIGHT`].
    pub fn set_in_flight(&self, n: usize) -> Result<(), BulkError> {
        if !(1..=MAX_IN_FLIGHT).contains(&n) {
            return Err(BulkError::Config(format!(
                "GPU buffer sets in flight: {n} (1 to {MAX_IN_FLIGHT})"
            )));
        }
        self.in_flight.store(n, Ordering::Relaxed);
        Ok(())
    }

    /// Input bytes per part of a window (rounded to whole chunks, at least
    /// one): smaller parts start the pipeline sooner, larger ones cost less
    /// per submission.
    pub fn set_part_bytes(&self, bytes: usize) {
        self.part_bytes.store(bytes.max(1), Ordering::Relaxed);
    }

    /// Input bytes per part of a window.
    pub fn part_bytes(&self) -> usize {
        self.part_bytes.load(Ordering::Relaxed)
    }

    /// Phase times and bytes since the engine was made or last reset.
    pub fn stats(&self) -> GpuStats {
        self.stats.lock().map(|s| s.clone()).unwrap_or_default()
    }

    pub fn reset_stats(&self) {
        if let Ok(mut s) = self.stats.lock() {
            *s = GpuStats::default();
        }
    }

    fn params(&self, buf: &wgpu::Buffer, n: u32) {
        self.gpu.queue.write_buffer(buf, 0, &self.algo.uniform(n));
    }

    fn block_bytes(&self) -> usize {
        4 * self.algo.block_words as usize
    }

    fn record(&self, t: &Times, up: u64, down: u64) {
        if let Ok(mut s) = self.stats.lock() {
            s.upload_s += t.up;
            s.kernel_s += t.kernel;
            s.download_s += t.down;
            s.bytes_up += up;
            s.bytes_down += down;
        }
    }

    fn count_window(&self) {
        if let Ok(mut s) = self.stats.lock() {
            s.windows += 1;
        }
    }

    /// The buffer sets, at least `n` of them.
    /// One window's parts through the buffer sets: part p is submitted on
    /// set p % k (k the sets in flight, at most one per part), a set is
    /// reused once its previous part is finished, and the parts are
    /// finished in order; `ctx` is what both steps read or write (the
    /// output, or the chunks both the submission and the finish use).
    fn run_parts<C: ?Sized, R, P>(
        &self,
        parts: Vec<R>,
        ctx: &mut C,
        mut submit: impl FnMut(&mut Buffers, &mut C, R, bool) -> Result<P, BulkError>,
        mut finish: impl FnMut(&mut Buffers, &mut C, P) -> Result<(), BulkError>,
    ) -> Result<(), BulkError> {
        let k = self
            .in_flight()
            .clamp(1, MAX_IN_FLIGHT)
            .min(parts.len())
            .max(1);
        let serial = k == 1;
        let mut sets = self.lock(k)?;
        let mut pending: VecDeque<(usize, P)> = VecDeque::with_capacity(k);
        for (p, r) in parts.into_iter().enumerate() {
            if pending.len() == k {
                if let Some((s, done)) = pending.pop_front() {
                    finish(&mut sets[s], ctx, done)?;
                }
            }
            let set = p % k;
            let part = submit(&mut sets[set], ctx, r, serial)?;
            pending.push_back((set, part));
        }
        while let Some((s, done)) = pending.pop_front() {
            finish(&mut sets[s], ctx, done)?;
        }
        self.count_window();
        Ok(())
    }

    fn lock(&self, n: usize) -> Result<std::sync::MutexGuard<'_, Vec<Buffers>>, BulkError> {
        let mut sets = self
            .sets
            .lock()
            .map_err(|_| BulkError::Gpu("device buffers poisoned by an earlier failure".into()))?;
        while sets.len() < n {
            sets.push(Buffers::new(&self.gpu));
        }
        Ok(sets)
    }

    /// Submit upload, kernels and download as one submission, or
    /// (`serial`) one by one, each waited for and timed into `times`.
    fn submit(
        &self,
        encs: [wgpu::CommandEncoder; 3],
        serial: bool,
        times: &mut Times,
    ) -> Result<wgpu::SubmissionIndex, BulkError> {
        let gpu = &self.gpu;
        let [up, kernels, down] = encs;
        if !serial {
            return Ok(gpu
                .queue
                .submit([up.finish(), kernels.finish(), down.finish()]));
        }
        let t = Instant::now();
        gpu.wait(gpu.queue.submit([up.finish()]))?;
        times.up += t.elapsed().as_secs_f64();
        let t = Instant::now();
        gpu.wait(gpu.queue.submit([kernels.finish()]))?;
        times.kernel += t.elapsed().as_secs_f64();
        let t = Instant::now();
        let idx = gpu.queue.submit([down.finish()]);
        gpu.wait(idx.clone())?;
        times.down += t.elapsed().as_secs_f64();
        Ok(idx)
    }

    /// Write the uniforms of a compress pass over `n` blocks in `chunks`
    /// chunks (compress kernel, packing, window scan).
    fn write_compress_params(
        &self,
        bufs: [&wgpu::Buffer; 3],
        header: &Header,
        n: usize,
        chunks: usize,
    ) {
        let [comp, pack_buf, scan_buf] = bufs;
        self.params(comp, n as u32);
        let pack = PackUniform {
            n: n as u32,
            chunk_blocks: header.chunk_blocks,
            chunks: chunks as u32,
            slot_words: self.algo.slot_words,
            group: header.group_blocks() as u32,
            width: header.len_width as u32,
            pad6: 0,
            pad7: 0,
        };
        self.gpu
            .queue
            .write_buffer(pack_buf, 0, bytemuck::bytes_of(&pack));
        let scan = ScanUniform {
            chunks: chunks as u32,
            pad1: 0,
            pad2: 0,
            pad3: 0,
        };
        self.gpu
            .queue
            .write_buffer(scan_buf, 0, bytemuck::bytes_of(&scan));
    }

    /// Record the compress pass over `n` blocks in `chunks` chunks: the
    /// algorithm's kernel, the chunk scan, the window scan, clearing `out`
    /// (`out_bytes`) and the scatter.
    fn encode_compress(
        &self,
        k: &mut wgpu::CommandEncoder,
        b: &CompressBinds<'_>,
        n: usize,
        chunks: usize,
        out_bytes: u64,
    ) {
        let gpu = &self.gpu;
        let [comp, pack, scan] = b.params;
        let g = gpu.bind_resources(
            &self.compress,
            &[
                comp.as_entire_binding(),
                self.tables.as_entire_binding(),
                wgpu::BindingResource::Buffer(b.input.clone()),
                b.slots.as_entire_binding(),
                b.lens.as_entire_binding(),
            ],
        );
        Gpu::dispatch(k, &self.compress, &g, n as u64);
        let g = gpu.bind(&self.chunk_scan, &[pack, b.lens, b.offs, b.chunk_bits]);
        Gpu::dispatch_groups(k, &self.chunk_scan, &g, chunks as u64);
        let g = gpu.bind(&self.window_scan, &[scan, b.chunk_bits, b.chunk_byte]);
        Gpu::dispatch_groups(k, &self.window_scan, &g, 1);
        k.clear_buffer(b.out, 0, Some(out_bytes));
        let g = gpu.bind(
            &self.scatter,
            &[
                pack,
                b.lens,
                b.offs,
                b.chunk_bits,
                b.slots,
                b.chunk_byte,
                b.out,
            ],
        );
        Gpu::dispatch(k, &self.scatter, &g, n as u64);
    }

    /// Stage and submit one part of a compressed window.
    fn submit_compress(
        &self,
        b: &mut Buffers,
        header: &Header,
        data: &[u8],
        chunks: Range<usize>,
        serial: bool,
    ) -> Result<CompressPart, BulkError> {
        let gpu = &self.gpu;
        let bb = self.block_bytes();
        let cb = header.chunk_blocks as usize;
        let nch = chunks.len();
        let nc = nch as u64;
        let n = data.len() / bb;
        let width = header.len_width as u64;
        let sw = self.algo.slot_words as u64;
        // worst case of one chunk's payload, in bytes, plus a word of slack
        let chunk_max = (cb as u64 * (self.max_bits as u64 + width)).div_ceil(8) + 4;
        let out_bytes = (nc * chunk_max + 8).next_multiple_of(4);
        if out_bytes * 8 > u32::MAX as u64 {
            return Err(BulkError::Gpu(format!(
                "{nch} chunks of {cb} blocks: their bit positions would not fit 32 bits; use smaller chunks"
            )));
        }
        ensure(gpu, &mut b.input, "input", data.len() as u64, Kind::Storage)?;
        ensure(gpu, &mut b.slots, "slots", 4 * sw * n as u64, Kind::Storage)?;
        ensure(gpu, &mut b.lens, "lens", 4 * n as u64, Kind::Storage)?;
        ensure(gpu, &mut b.offs, "offs", 4 * n as u64, Kind::Storage)?;
        ensure(gpu, &mut b.chunk_bits, "chunk bits", 4 * nc, Kind::Storage)?;
        let cbytes = 4 * (nc + 1);
        ensure(gpu, &mut b.chunk_byte, "chunk bytes", cbytes, Kind::Storage)?;
        ensure(gpu, &mut b.out, "packed", out_bytes, Kind::Storage)?;
        // the chunk bit counts and byte offsets, then the packed output,
        // in one readback buffer mapped once
        let packed_at = 8 * (nc + 1);
        ensure(
            gpu,
            &mut b.out_rb,
            "packed readback",
            packed_at + out_bytes,
            Kind::Readback,
        )?;
        ensure(gpu, &mut b.up, "upload", data.len() as u64, Kind::Upload)?;

        let mut times = Times::default();
        // the part into the mapped upload buffer, in parallel pieces
        let t = Instant::now();
        let pieces: Vec<(usize, &[u8])> = data
            .chunks(1 << 20)
            .enumerate()
            .map(|(i, p)| (i << 20, p))
            .collect();
        gpu.stage(get(&b.up), data.len() as u64, &pieces)?;
        times.up += t.elapsed().as_secs_f64();

        let mut up = gpu.device.create_command_encoder(&Default::default());
        let len4 = (data.len() as u64).next_multiple_of(4);
        up.copy_buffer_to_buffer(get(&b.up), 0, get(&b.input), 0, len4);
        self.write_compress_params(
            [&b.comp_params, &b.pack_params, &b.scan_params],
            header,
            n,
            nch,
        );
        let mut k = gpu.device.create_command_encoder(&Default::default());
        self.encode_compress(
            &mut k,
            &CompressBinds {
                params: [&b.comp_params, &b.pack_params, &b.scan_params],
                input: get(&b.input).as_entire_buffer_binding(),
                slots: get(&b.slots),
                lens: get(&b.lens),
                offs: get(&b.offs),
                chunk_bits: get(&b.chunk_bits),
                chunk_byte: get(&b.chunk_byte),
                out: get(&b.out),
            },
            n,
            nch,
            out_bytes,
        );

        let mut down = gpu.device.create_command_encoder(&Default::default());
        down.copy_buffer_to_buffer(get(&b.chunk_bits), 0, get(&b.out_rb), 0, 4 * nc);
        down.copy_buffer_to_buffer(get(&b.chunk_byte), 0, get(&b.out_rb), 4 * nc, cbytes);
        down.copy_buffer_to_buffer(get(&b.out), 0, get(&b.out_rb), packed_at, out_bytes);
        let submission = self.submit([up, k, down], serial, &mut times)?;
        Ok(CompressPart {
            chunks,
            submission,
            packed_at,
            out_bytes,
            times,
            bytes_up: data.len() as u64,
        })
    }

    /// Wait for a compressed part and copy its chunks out.
    fn finish_compress(
        &self,
        b: &mut Buffers,
        mut part: CompressPart,
        stored: &mut [Vec<u8>],
        bits: &mut [u32],
    ) -> Result<(), BulkError> {
        let gpu = &self.gpu;
        let t = Instant::now();
        gpu.wait(part.submission.clone())?;
        part.times.kernel += t.elapsed().as_secs_f64();
        let t = Instant::now();
        let nch = part.chunks.len();
        let off = 4 * nch;
        let stored = &mut stored[part.chunks.clone()];
        let bits = &mut bits[part.chunks.clone()];
        let at = part.packed_at as usize;
        let mut total = 0u64;
        // one mapping: the chunk bit counts and byte offsets, then the
        // chunks, copied out in parallel
        gpu.with_mapped(get(&b.out_rb), part.packed_at + part.out_bytes, |view| {
            let cbits: Vec<u32> = words_le(&view[..off]).collect();
            let cbyte: Vec<u32> = words_le(&view[off..off + 4 * (nch + 1)]).collect();
            total = cbyte[nch] as u64;
            let packed = &view[at..];
            stored
                .par_iter_mut()
                .zip(bits.par_iter_mut())
                .enumerate()
                .try_for_each(|(k, (s, bk))| {
                    let lo = cbyte[k] as usize;
                    let hi = lo + (cbits[k] as usize).div_ceil(8);
                    s.clear();
                    s.extend_from_slice(packed.get(lo..hi).ok_or_else(|| {
                        BulkError::Gpu(format!("chunk {k}: device offsets out of range"))
                    })?);
                    *bk = cbits[k];
                    Ok::<(), BulkError>(())
                })
        })??;
        part.times.down += t.elapsed().as_secs_f64();
        self.record(&part.times, part.bytes_up, total + 8 * nch as u64);
        Ok(())
    }

    /// Plan, stage and submit one part of a decompressed window.
    fn submit_decompress(
        &self,
        b: &mut Buffers,
        header: &Header,
        chunks: &[WindowChunk<'_>],
        range: Range<usize>,
        serial: bool,
    ) -> Result<DecompressPart, BulkError> {
        let gpu = &self.gpu;
        let bb = self.block_bytes();
        let width = header.len_width as usize;
        let group = header.group_blocks();
        let max = self.max_bits;
        let mut segs: Vec<u32> = Vec::new();
        // the chunks' stored bytes, back to back in the device payload
        let mut pieces: Vec<(usize, &[u8])> = Vec::with_capacity(range.len());
        let mut payload_len = 0usize;
        let mut plan = Vec::with_capacity(range.len());
        let mut nblocks = 0usize;
        for c in &chunks[range.clone()] {
            let blocks = c.blocks as usize;
            let cbits = c.bits as usize;
            let base = payload_len * 8;
            let stored = cbits.div_ceil(8);
            if c.padded.len() < stored || base + cbits > u32::MAX as usize {
                plan.push(None);
                continue;
            }
            let first_seg = segs.len() / 4;
            let mut ok = true;
            match group {
                0 => segs.extend([base as u32, cbits as u32, nblocks as u32, blocks as u32]),
                g => {
                    let fields = blocks.div_ceil(g);
                    let table = fields * width;
                    if table > cbits {
                        ok = false;
                    } else {
                        let mut at = table;
                        for j in 0..fields {
                            let len =
                                crate::bits::read_field(c.padded, j * width, width as u32) as usize;
                            let count = g.min(blocks - j * g);
                            if len > count * max || at + len > cbits {
                                ok = false;
                                break;
                            }
                            segs.extend([
                                (base + at) as u32,
                                len as u32,
                                (nblocks + j * g) as u32,
                                count as u32,
                            ]);
                            at += len;
                        }
                        ok &= at == cbits;
                    }
                }
            }
            if !ok {
                segs.truncate(first_seg * 4);
                plan.push(None);
                continue;
            }
            plan.push(Some((nblocks, first_seg, segs.len() / 4 - first_seg)));
            pieces.push((payload_len, &c.padded[..stored]));
            payload_len += stored;
            nblocks += blocks;
        }
        let nsegs = segs.len() / 4;
        let out_bytes = (nblocks * bb) as u64;
        let mut part = DecompressPart {
            chunks: range,
            submission: None,
            plan,
            nsegs,
            out_bytes,
            blocks_at: 0,
            times: Times::default(),
            bytes_up: 0,
        };
        if nsegs == 0 {
            return Ok(part);
        }
        // zeros after the last chunk: the bit reader peeks a few bytes ahead
        let payload_bytes = (payload_len + 8).next_multiple_of(4) as u64;
        let ns = nsegs as u64;
        // payload and segments staged in one upload buffer (one mapping),
        // statuses and blocks read back through one buffer (one mapping)
        let blocks_at = (4 * ns).next_multiple_of(8);
        let out4 = out_bytes.next_multiple_of(4).max(4);
        ensure(gpu, &mut b.payload, "payload", payload_bytes, Kind::Storage)?;
        ensure(
            gpu,
            &mut b.up,
            "upload",
            payload_bytes + 16 * ns,
            Kind::Upload,
        )?;
        ensure(gpu, &mut b.segs, "segments", 16 * ns, Kind::Storage)?;
        ensure(gpu, &mut b.blocks, "blocks", out_bytes, Kind::Storage)?;
        ensure(gpu, &mut b.status, "status", 4 * ns, Kind::Storage)?;
        ensure(
            gpu,
            &mut b.blocks_rb,
            "blocks readback",
            blocks_at + out4,
            Kind::Readback,
        )?;

        let t = Instant::now();
        pieces.push((payload_bytes as usize, bytemuck::cast_slice(&segs)));
        gpu.stage(get(&b.up), payload_bytes + 16 * ns, &pieces)?;
        part.times.up += t.elapsed().as_secs_f64();
        let mut up = gpu.device.create_command_encoder(&Default::default());
        up.copy_buffer_to_buffer(get(&b.up), 0, get(&b.payload), 0, payload_bytes);
        up.copy_buffer_to_buffer(get(&b.up), payload_bytes, get(&b.segs), 0, 16 * ns);
        self.params(&b.dec_params, nsegs as u32);

        let mut k = gpu.device.create_command_encoder(&Default::default());
        let g = gpu.bind(
            &self.decompress,
            &[
                &b.dec_params,
                &self.tables,
                get(&b.payload),
                get(&b.segs),
                get(&b.blocks),
                get(&b.status),
            ],
        );
        Gpu::dispatch(&mut k, &self.decompress, &g, ns);

        let mut down = gpu.device.create_command_encoder(&Default::default());
        down.copy_buffer_to_buffer(get(&b.status), 0, get(&b.blocks_rb), 0, 4 * ns);
        down.copy_buffer_to_buffer(get(&b.blocks), 0, get(&b.blocks_rb), blocks_at, out4);
        part.blocks_at = blocks_at;
        part.submission = Some(self.submit([up, k, down], serial, &mut part.times)?);
        part.bytes_up = payload_bytes + 16 * ns;
        Ok(part)
    }

    /// Wait for a decompressed part and copy its blocks out.
    fn finish_decompress(
        &self,
        b: &mut Buffers,
        mut part: DecompressPart,
        chunks: &mut [WindowChunk<'_>],
    ) -> Result<(), BulkError> {
        let gpu = &self.gpu;
        let chunks = &mut chunks[part.chunks.clone()];
        let Some(sub) = part.submission.take() else {
            // nothing went to the device: every chunk is the CPU's
            for c in chunks.iter_mut() {
                c.decoded = false;
            }
            return Ok(());
        };
        let t = Instant::now();
        gpu.wait(sub)?;
        part.times.kernel += t.elapsed().as_secs_f64();
        let t = Instant::now();
        let bb = self.block_bytes();
        let plan = &part.plan;
        let at = part.blocks_at as usize;
        let nsegs = part.nsegs;
        // one mapping: the segment statuses, then the decoded blocks, which
        // go straight from the mapped buffer to the chunks, in parallel
        gpu.with_mapped(get(&b.blocks_rb), part.blocks_at + part.out_bytes, |all| {
            let status: Vec<u32> = words_le(&all[..4 * nsegs]).collect();
            let view = &all[at..];
            chunks
                .par_iter_mut()
                .zip(plan.par_iter())
                .for_each(|(c, p)| {
                    let Some((first, s0, ns)) = *p else {
                        c.decoded = false;
                        return;
                    };
                    if status[s0..s0 + ns].iter().any(|&s| s != 0) {
                        c.decoded = false;
                        return;
                    }
                    let lo = first * bb;
                    c.out.clear();
                    c.out
                        .extend_from_slice(&view[lo..lo + c.blocks as usize * bb]);
                    c.decoded = true;
                })
        })?;
        part.times.down += t.elapsed().as_secs_f64();
        let down = part.out_bytes + 4 * part.nsegs as u64;
        self.record(&part.times, part.bytes_up, down);
        Ok(())
    }

    /// The host path of a window without its kernels: `data` cut into
    /// parts of the engine's part size, each staged into its set's mapped
    /// upload buffer, copied by the device into its input buffer and from
    /// there into its readback buffer, and copied out of that (mapped) into
    /// `out` (as long as `data`), with the engine's buffer sets in flight
    /// and the same waits as [`WindowCoder::compress_window`]. What it
    /// costs beyond a plain copy of the same bytes is the host path's
    /// overhead (mappings, submissions, waits, pipeline fill and drain).
    pub fn transfer_window(&self, data: &[u8], out: &mut [u8]) -> Result<(), BulkError> {
        if data.len() != out.len() {
            return Err(BulkError::Gpu(format!(
                "transfer of {} bytes into {} bytes",
                data.len(),
                out.len()
            )));
        }
        let part = self.part_bytes.load(Ordering::Relaxed).next_multiple_of(4);
        let ranges: Vec<Range<usize>> = (0..data.len())
            .step_by(part)
            .map(|a| a..(a + part).min(data.len()))
            .collect();
        self.run_parts(
            ranges,
            out,
            |b, _, r, serial| self.submit_echo(b, data, r, serial),
            |b, out, done| self.finish_echo(b, done, out),
        )
    }

    /// Stage and submit one part of [`transfer_window`](Self::transfer_window).
    fn submit_echo(
        &self,
        b: &mut Buffers,
        data: &[u8],
        range: Range<usize>,
        serial: bool,
    ) -> Result<EchoPart, BulkError> {
        let gpu = &self.gpu;
        let data = &data[range.clone()];
        let len = data.len() as u64;
        let len4 = len.next_multiple_of(4).max(4);
        ensure(gpu, &mut b.input, "input", len, Kind::Storage)?;
        ensure(gpu, &mut b.up, "upload", len, Kind::Upload)?;
        ensure(gpu, &mut b.out_rb, "packed readback", len, Kind::Readback)?;
        let mut times = Times::default();
        let t = Instant::now();
        let pieces: Vec<(usize, &[u8])> = data
            .chunks(1 << 20)
            .enumerate()
            .map(|(i, p)| (i << 20, p))
            .collect();
        gpu.stage(get(&b.up), len, &pieces)?;
        times.up += t.elapsed().as_secs_f64();
        let mut up = gpu.device.create_command_encoder(&Default::default());
        up.copy_buffer_to_buffer(get(&b.up), 0, get(&b.input), 0, len4);
        let k = gpu.device.create_command_encoder(&Default::default());
        let mut down = gpu.device.create_command_encoder(&Default::default());
        down.copy_buffer_to_buffer(get(&b.input), 0, get(&b.out_rb), 0, len4);
        let submission = self.submit([up, k, down], serial, &mut times)?;
        Ok(EchoPart {
            range,
            submission,
            times,
        })
    }

    /// Wait for a part of [`transfer_window`](Self::transfer_window) and
    /// copy it out, in parallel pieces.
    fn finish_echo(
        &self,
        b: &mut Buffers,
        mut part: EchoPart,
        out: &mut [u8],
    ) -> Result<(), BulkError> {
        let gpu = &self.gpu;
        let t = Instant::now();
        gpu.wait(part.submission.clone())?;
        part.times.kernel += t.elapsed().as_secs_f64();
        let t = Instant::now();
        let out = &mut out[part.range.clone()];
        let len = out.len() as u64;
        gpu.with_mapped(get(&b.out_rb), len, |view| {
            out.par_chunks_mut(1 << 20)
                .zip(view.par_chunks(1 << 20))
                .for_each(|(d, s)| d.copy_from_slice(s))
        })?;
        part.times.down += t.elapsed().as_secs_f64();
        self.record(&part.times, len, len);
        Ok(())
    }
}

impl WindowCoder for GpuEngine {
    fn max_window_bytes(&self) -> u64 {
        // a window is cut into parts of about PART_BYTES, so its size is
        // bounded only by host memory; a part is at least one chunk, whose
        // slots (the largest buffer: slot_words per block) must fit one
        // storage binding (the chunk size is capped far below that)
        let bb = self.block_bytes() as u64;
        let per_block = 4 * self.algo.slot_words as u64;
        let by_slots = self.gpu.max_binding() / per_block.max(1) * bb;
        by_slots.min(self.gpu.max_binding() / 2)
    }

    fn compress_window(
        &self,
        header: &Header,
        data: &[u8],
        stored: &mut [Vec<u8>],
        bits: &mut [u32],
    ) -> Result<(), BulkError> {
        let bb = self.block_bytes();
        if header.block_bytes as usize != bb || !data.len().is_multiple_of(bb) {
            return Err(BulkError::Gpu(format!(
                "{}: window of {} bytes is not whole {bb}-byte blocks",
                self.algo.name,
                data.len()
            )));
        }
        let chunk_in = header.chunk_blocks as usize * bb;
        let chunks = data.len().div_ceil(chunk_in.max(1));
        if chunks != stored.len() || chunks != bits.len() {
            return Err(BulkError::Gpu("window chunk count mismatch".into()));
        }
        let parts = parts(chunks, chunk_in, self.part_bytes.load(Ordering::Relaxed));
        self.run_parts(
            parts,
            &mut (stored, bits),
            |b, _, r, serial| {
                let lo = r.start * chunk_in;
                let hi = (r.end * chunk_in).min(data.len());
                self.submit_compress(b, header, &data[lo..hi], r, serial)
            },
            |b, (stored, bits), done| self.finish_compress(b, done, stored, bits),
        )
    }

    fn decompress_window(
        &self,
        header: &Header,
        chunks: &mut [WindowChunk<'_>],
    ) -> Result<(), BulkError> {
        let chunk_in = header.chunk_blocks as usize * self.block_bytes();
        let parts = parts(
            chunks.len(),
            chunk_in,
            self.part_bytes.load(Ordering::Relaxed),
        );
        self.run_parts(
            parts,
            chunks,
            |b, chunks, r, serial| self.submit_decompress(b, header, chunks, r, serial),
            |b, chunks, done| self.finish_decompress(b, done, chunks),
        )
    }
}
