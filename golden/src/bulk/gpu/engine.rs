//! The GPU engine: windows of chunks compressed and decompressed by one
//! algorithm's kernels, with the chunk packing on the device.
//!
//! Per compressed window: upload the blocks; `compress` (one thread per
//! block: code into a slot, length); `chunk_scan` (one workgroup per chunk:
//! block offsets, chunk bits); `window_scan` (chunk byte offsets);
//! `scatter` (one thread per block: its code and its group's table field
//! ORed into the window's output at their places); download the chunk bit
//! counts, then exactly the window's payload bytes. Per decompressed
//! window: the host reads the chunks' length tables into decoding segments
//! (one block, one group, or a whole chunk without a table), uploads the
//! payloads and segments, runs `decompress` (one thread per segment) and
//! downloads the blocks and the segment statuses. Device buffers are
//! allocated on the first window and reused (grown only if a later window
//! is larger); the model-set tables are uploaded once.

use std::sync::Mutex;

use rayon::prelude::*;
use std::time::Instant;

use super::device::Gpu;
use super::kernel::GpuAlgo;
use crate::bulk::format::Header;
use crate::bulk::{BulkError, WindowChunk, WindowCoder};

const PACK: &str = include_str!("wgsl/pack.wgsl");
const SCATTER: &str = include_str!("wgsl/scatter.wgsl");
const WINDOW_SCAN: &str = include_str!("wgsl/window_scan.wgsl");

/// Time spent per phase (seconds, wall clock on the host) and bytes moved.
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
    if kind == Kind::Storage && bytes > gpu.max_binding() {
        return Err(BulkError::Gpu(format!(
            "{label}: {bytes} bytes exceed the adapter's largest storage binding ({}); use a smaller --window",
            gpu.max_binding()
        )));
    }
    let buf = match kind {
        Kind::Storage => gpu.storage(label, bytes),
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

#[derive(Default)]
struct Buffers {
    input: Option<Buf>,
    slots: Option<Buf>,
    lens: Option<Buf>,
    offs: Option<Buf>,
    chunk_bits: Option<Buf>,
    chunk_byte: Option<Buf>,
    out: Option<Buf>,
    small_rb: Option<Buf>,
    out_rb: Option<Buf>,
    payload: Option<Buf>,
    segs: Option<Buf>,
    blocks: Option<Buf>,
    status: Option<Buf>,
    blocks_rb: Option<Buf>,
    status_rb: Option<Buf>,
    up: Option<Buf>,
    host: Vec<u8>,
    seg_words: Vec<u32>,
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
    comp_params: wgpu::Buffer,
    dec_params: wgpu::Buffer,
    pack_params: wgpu::Buffer,
    scan_params: wgpu::Buffer,
    max_bits: usize,
    bufs: Mutex<Buffers>,
    stats: Mutex<GpuStats>,
}

fn words_le(bytes: &[u8]) -> impl Iterator<Item = u32> + '_ {
    bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
}

impl GpuEngine {
    /// Compile `algo`'s kernels on `gpu` and upload its tables. `max_bits`
    /// is the codec's widest block.
    pub fn new(gpu: Gpu, algo: GpuAlgo, max_bits: usize) -> Result<GpuEngine, BulkError> {
        let compress = gpu.pipeline(algo.name, &algo.compress_source(), "compress")?;
        let decompress = gpu.pipeline(algo.name, &algo.decompress_source(), "decompress")?;
        let chunk_scan = gpu.pipeline("pack", PACK, "chunk_scan")?;
        let window_scan = gpu.pipeline("window_scan", WINDOW_SCAN, "window_scan")?;
        let scatter = gpu.pipeline("scatter", SCATTER, "scatter")?;
        let tables = gpu.storage_init("tables", &algo.tables);
        let comp_params = gpu.uniform("compress params", &[0; 16]);
        let dec_params = gpu.uniform("decompress params", &[0; 16]);
        let pack_params = gpu.uniform("pack params", &[0; 8]);
        let scan_params = gpu.uniform("scan params", &[0; 4]);
        if algo.block_words == 0 || algo.params.len() > 15 {
            return Err(BulkError::Gpu(format!(
                "{}: bad kernel description",
                algo.name
            )));
        }
        Ok(GpuEngine {
            gpu,
            algo,
            compress,
            decompress,
            chunk_scan,
            window_scan,
            scatter,
            tables,
            comp_params,
            dec_params,
            pack_params,
            scan_params,
            max_bits,
            bufs: Mutex::new(Buffers::default()),
            stats: Mutex::new(GpuStats::default()),
        })
    }

    /// The algorithm's name.
    pub fn algo(&self) -> &str {
        self.algo.name
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
        let mut p = vec![n];
        p.extend_from_slice(&self.algo.params);
        p.resize(16, 0);
        self.gpu
            .queue
            .write_buffer(buf, 0, bytemuck::cast_slice(&p));
    }

    fn block_bytes(&self) -> usize {
        4 * self.algo.block_words as usize
    }

    fn record(&self, f: impl FnOnce(&mut GpuStats)) {
        if let Ok(mut s) = self.stats.lock() {
            f(&mut s);
        }
    }

    fn lock(&self) -> Result<std::sync::MutexGuard<'_, Buffers>, BulkError> {
        self.bufs
            .lock()
            .map_err(|_| BulkError::Gpu("device buffers poisoned by an earlier failure".into()))
    }
}

impl WindowCoder for GpuEngine {
    fn max_window_bytes(&self) -> u64 {
        // the slots are the largest buffer: slot_words per block
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
        let gpu = &self.gpu;
        let bb = self.block_bytes();
        if header.block_bytes as usize != bb || !data.len().is_multiple_of(bb) {
            return Err(BulkError::Gpu(format!(
                "{}: window of {} bytes is not whole {bb}-byte blocks",
                self.algo.name,
                data.len()
            )));
        }
        let n = data.len() / bb;
        let cb = header.chunk_blocks as usize;
        let chunks = n.div_ceil(cb);
        if chunks != stored.len() || chunks != bits.len() {
            return Err(BulkError::Gpu("window chunk count mismatch".into()));
        }
        let width = header.len_width as u64;
        let group = header.group_blocks() as u64;
        let sw = self.algo.slot_words as u64;
        // worst case of one chunk's payload, in bytes, plus a word of slack
        let chunk_max = (cb as u64 * (self.max_bits as u64 + width)).div_ceil(8) + 4;
        let out_bytes = chunks as u64 * chunk_max + 8;
        let mut b = self.lock()?;
        ensure(gpu, &mut b.input, "input", data.len() as u64, Kind::Storage)?;
        ensure(gpu, &mut b.slots, "slots", 4 * sw * n as u64, Kind::Storage)?;
        ensure(gpu, &mut b.lens, "lens", 4 * n as u64, Kind::Storage)?;
        ensure(gpu, &mut b.offs, "offs", 4 * n as u64, Kind::Storage)?;
        ensure(
            gpu,
            &mut b.chunk_bits,
            "chunk bits",
            4 * chunks as u64,
            Kind::Storage,
        )?;
        ensure(
            gpu,
            &mut b.chunk_byte,
            "chunk bytes",
            4 * (chunks as u64 + 1),
            Kind::Storage,
        )?;
        ensure(gpu, &mut b.out, "packed", out_bytes, Kind::Storage)?;
        ensure(
            gpu,
            &mut b.small_rb,
            "chunk readback",
            8 * (chunks as u64 + 1),
            Kind::Readback,
        )?;
        ensure(
            gpu,
            &mut b.out_rb,
            "packed readback",
            out_bytes,
            Kind::Readback,
        )?;
        if out_bytes * 8 > u32::MAX as u64 {
            return Err(BulkError::Gpu(format!(
                "window of {} bytes: its bit positions would not fit 32 bits; use a smaller --window",
                data.len()
            )));
        }

        ensure(gpu, &mut b.up, "upload", data.len() as u64, Kind::Upload)?;
        // upload: the window into the mapped staging buffer (in parallel),
        // then to the device
        let t = Instant::now();
        let pieces: Vec<(usize, &[u8])> = data
            .chunks(1 << 20)
            .enumerate()
            .map(|(i, p)| (i << 20, p))
            .collect();
        gpu.stage(get(&b.up), data.len() as u64, &pieces)?;
        let mut enc = gpu.device.create_command_encoder(&Default::default());
        enc.copy_buffer_to_buffer(
            get(&b.up),
            0,
            get(&b.input),
            0,
            (data.len() as u64).next_multiple_of(4),
        );
        self.params(&self.comp_params, n as u32);
        let pack = [
            n as u32,
            cb as u32,
            chunks as u32,
            sw as u32,
            group as u32,
            width as u32,
            0,
            0,
        ];
        gpu.queue
            .write_buffer(&self.pack_params, 0, bytemuck::cast_slice(&pack));
        gpu.queue.write_buffer(
            &self.scan_params,
            0,
            bytemuck::cast_slice(&[chunks as u32, 0, 0, 0]),
        );
        gpu.submit_wait(enc)?;
        let t_up = t.elapsed().as_secs_f64();

        // kernels
        let t = Instant::now();
        let mut enc = gpu.device.create_command_encoder(&Default::default());
        let g = gpu.bind(
            &self.compress,
            &[
                &self.comp_params,
                &self.tables,
                get(&b.input),
                get(&b.slots),
                get(&b.lens),
            ],
        );
        Gpu::dispatch(&mut enc, &self.compress, &g, n as u64);
        let g = gpu.bind(
            &self.chunk_scan,
            &[
                &self.pack_params,
                get(&b.lens),
                get(&b.offs),
                get(&b.chunk_bits),
            ],
        );
        Gpu::dispatch_groups(&mut enc, &self.chunk_scan, &g, chunks as u64);
        let g = gpu.bind(
            &self.window_scan,
            &[&self.scan_params, get(&b.chunk_bits), get(&b.chunk_byte)],
        );
        Gpu::dispatch_groups(&mut enc, &self.window_scan, &g, 1);
        enc.clear_buffer(get(&b.out), 0, None);
        let g = gpu.bind(
            &self.scatter,
            &[
                &self.pack_params,
                get(&b.lens),
                get(&b.offs),
                get(&b.chunk_bits),
                get(&b.slots),
                get(&b.chunk_byte),
                get(&b.out),
            ],
        );
        Gpu::dispatch(&mut enc, &self.scatter, &g, n as u64);
        enc.copy_buffer_to_buffer(
            get(&b.chunk_bits),
            0,
            get(&b.small_rb),
            0,
            4 * chunks as u64,
        );
        enc.copy_buffer_to_buffer(
            get(&b.chunk_byte),
            0,
            get(&b.small_rb),
            4 * chunks as u64,
            4 * (chunks as u64 + 1),
        );
        gpu.submit_wait(enc)?;
        let t_kernel = t.elapsed().as_secs_f64();

        // download
        let t = Instant::now();
        let off = 4 * chunks;
        let mut small = std::mem::take(&mut b.host);
        gpu.read_mapped(get(&b.small_rb), 8 * chunks as u64 + 4, &mut small)?;
        let cbits: Vec<u32> = words_le(&small[..4 * chunks]).collect();
        let cbyte: Vec<u32> = words_le(&small[off..off + 4 * (chunks + 1)]).collect();
        b.host = small;
        let total = cbyte[chunks] as u64;
        let mut enc = gpu.device.create_command_encoder(&Default::default());
        let copy = total.next_multiple_of(4).max(4);
        enc.copy_buffer_to_buffer(get(&b.out), 0, get(&b.out_rb), 0, copy);
        gpu.submit_wait(enc)?;
        // the chunks are copied out of the mapped buffer in parallel
        gpu.with_mapped(get(&b.out_rb), total, |packed| {
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
        let t_down = t.elapsed().as_secs_f64();
        self.record(|s| {
            s.upload_s += t_up;
            s.kernel_s += t_kernel;
            s.download_s += t_down;
            s.bytes_up += data.len() as u64;
            s.bytes_down += total + 8 * chunks as u64;
            s.windows += 1;
        });
        Ok(())
    }

    fn decompress_window(
        &self,
        header: &Header,
        chunks: &mut [WindowChunk<'_>],
    ) -> Result<(), BulkError> {
        let gpu = &self.gpu;
        let bb = self.block_bytes();
        let width = header.len_width as usize;
        let group = header.group_blocks();
        let max = self.max_bits;
        let mut b = self.lock()?;
        let mut segs = std::mem::take(&mut b.seg_words);
        segs.clear();
        // the chunks' stored bytes, back to back in the device payload
        let mut pieces: Vec<(usize, &[u8])> = Vec::with_capacity(chunks.len());
        let mut payload_len = 0usize;
        // per chunk: first block in the window, first segment, segments
        let mut plan: Vec<Option<(usize, usize, usize)>> = Vec::with_capacity(chunks.len());
        let mut nblocks = 0usize;
        for c in chunks.iter() {
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
                                crate::bulk::bits::read_field(c.padded, j * width, width as u32)
                                    as usize;
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
        // zeros after the last chunk: the bit reader peeks a few bytes ahead
        let payload_bytes = (payload_len + 8).next_multiple_of(4) as u64;
        let nsegs = segs.len() / 4;
        if nsegs == 0 {
            b.seg_words = segs;
            return Ok(());
        }
        let out_bytes = (nblocks * bb) as u64;
        ensure(gpu, &mut b.payload, "payload", payload_bytes, Kind::Storage)?;
        ensure(gpu, &mut b.up, "upload", payload_bytes, Kind::Upload)?;
        ensure(
            gpu,
            &mut b.segs,
            "segments",
            4 * segs.len() as u64,
            Kind::Storage,
        )?;
        ensure(gpu, &mut b.blocks, "blocks", out_bytes, Kind::Storage)?;
        ensure(
            gpu,
            &mut b.status,
            "status",
            4 * nsegs as u64,
            Kind::Storage,
        )?;
        ensure(
            gpu,
            &mut b.blocks_rb,
            "blocks readback",
            out_bytes,
            Kind::Readback,
        )?;
        ensure(
            gpu,
            &mut b.status_rb,
            "status readback",
            4 * nsegs as u64,
            Kind::Readback,
        )?;

        let t = Instant::now();
        gpu.stage(get(&b.up), payload_bytes, &pieces)?;
        let mut enc = gpu.device.create_command_encoder(&Default::default());
        enc.copy_buffer_to_buffer(get(&b.up), 0, get(&b.payload), 0, payload_bytes);
        gpu.queue
            .write_buffer(get(&b.segs), 0, bytemuck::cast_slice(&segs));
        self.params(&self.dec_params, nsegs as u32);
        gpu.submit_wait(enc)?;
        let t_up = t.elapsed().as_secs_f64();

        let t = Instant::now();
        let mut enc = gpu.device.create_command_encoder(&Default::default());
        let g = gpu.bind(
            &self.decompress,
            &[
                &self.dec_params,
                &self.tables,
                get(&b.payload),
                get(&b.segs),
                get(&b.blocks),
                get(&b.status),
            ],
        );
        Gpu::dispatch(&mut enc, &self.decompress, &g, nsegs as u64);
        enc.copy_buffer_to_buffer(
            get(&b.status),
            0,
            get(&b.status_rb),
            0,
            (4 * nsegs as u64).next_multiple_of(4),
        );
        enc.copy_buffer_to_buffer(
            get(&b.blocks),
            0,
            get(&b.blocks_rb),
            0,
            out_bytes.next_multiple_of(4).max(4),
        );
        gpu.submit_wait(enc)?;
        let t_kernel = t.elapsed().as_secs_f64();

        let t = Instant::now();
        let mut st = Vec::new();
        gpu.read_mapped(get(&b.status_rb), 4 * nsegs as u64, &mut st)?;
        let status: Vec<u32> = words_le(&st).collect();
        // the decoded blocks go straight from the mapped buffer to the
        // chunks, in parallel
        gpu.with_mapped(get(&b.blocks_rb), out_bytes, |view| {
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
        let t_down = t.elapsed().as_secs_f64();
        b.seg_words = segs;
        self.record(|s| {
            s.upload_s += t_up;
            s.kernel_s += t_kernel;
            s.download_s += t_down;
            s.bytes_up += payload_bytes;
            s.bytes_down += out_bytes + 4 * nsegs as u64;
            s.windows += 1;
        });
        Ok(())
    }
}
