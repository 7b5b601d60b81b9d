//! Measuring the GPU engine: end-to-end throughput with the
//! upload / kernel / download split, the device-only kernel rate, the
//! host<->device copy bandwidth, and the input size from which the GPU
//! engine beats the CPU pool (`calibrate --gpu`).

use std::io::Cursor;
use std::sync::Mutex;
use std::time::Instant;

use rayon::prelude::*;

use super::device::Gpu;
use super::engine::{GpuEngine, GpuStats, ResidentBlocks, ResidentChunks};
use crate::codec::BulkCodec;
use crate::engine::{Engine, NEVER};
use crate::format::Header;
use crate::stream::{
    compress_reusing, compress_with, decompress_reusing, decompress_with, header_for,
    CompressOptions, CompressScratch, DecompressScratch, GPU_WINDOW,
};
use crate::{BulkError, WindowChunk, WindowCoder};

/// One codec on the GPU engine.
#[derive(Clone, Debug, Default)]
pub struct GpuBenchRow {
    pub name: String,
    pub original: u64,
    pub compressed: u64,
    /// Buffer sets in flight in the pipelined passes.
    pub in_flight: usize,
    /// End to end (input in host memory to container in host memory), MB/s
    /// wall clock, best pass, pipelined (`in_flight` buffer sets).
    pub compress_mb_s: f64,
    pub decompress_mb_s: f64,
    /// The same with one buffer set (upload, kernels, download one after
    /// the other).
    pub serial_compress_mb_s: f64,
    pub serial_decompress_mb_s: f64,
    /// Phase times of the best serial pass.
    pub compress_stats: GpuStats,
    pub decompress_stats: GpuStats,
    /// Device-resident rates, MB/s (best pass): the input's whole blocks
    /// already in device memory compressed into chunks kept there
    /// ([`GpuEngine::compress_resident`]), and those chunks decompressed
    /// into device memory.
    pub resident_compress_mb_s: f64,
    pub resident_decompress_mb_s: f64,
}

impl GpuBenchRow {
    /// Input MB over the kernel phase alone (device-only rate).
    pub fn kernel_rates(&self) -> (f64, f64) {
        let mb = self.original as f64 / 1e6;
        (
            mb / self.compress_stats.kernel_s,
            mb / self.decompress_stats.kernel_s,
        )
    }
}

/// Compress `input` on the GPU engine into `out` (cleared first), the
/// stream loop's buffers taken from and left in `scratch`.
pub fn gpu_compress(
    codec: &dyn BulkCodec,
    dev: &GpuEngine,
    input: &[u8],
    window: usize,
    out: &mut Vec<u8>,
    scratch: &mut CompressScratch,
) -> Result<(), BulkError> {
    out.clear();
    let opts = CompressOptions {
        engine: Engine::Gpu,
        window,
        original_len: Some(input.len() as u64),
        ..CompressOptions::default()
    };
    compress_reusing(
        codec,
        Cursor::new(input),
        out,
        &opts,
        Some(dev),
        scratch,
        &|_| {},
    )?;
    Ok(())
}

/// Decompress `packed` on the GPU engine into `out` (cleared first), the
/// stream loop's buffers taken from and left in `scratch`.
pub fn gpu_decompress(
    codec: &dyn BulkCodec,
    dev: &GpuEngine,
    packed: &[u8],
    window: usize,
    out: &mut Vec<u8>,
    scratch: &mut DecompressScratch,
) -> Result<(), BulkError> {
    out.clear();
    decompress_reusing(
        codec,
        Cursor::new(packed),
        out,
        Engine::Gpu,
        window,
        Some(dev),
        scratch,
        &|_| {},
    )?;
    Ok(())
}

/// Best wall time in seconds of `reps` runs (at least one) of `f`.
fn best_secs(reps: usize, f: &mut dyn FnMut() -> Result<(), BulkError>) -> Result<f64, BulkError> {
    let mut best = f64::MAX;
    for _ in 0..reps.max(1) {
        let t = Instant::now();
        f()?;
        best = best.min(t.elapsed().as_secs_f64());
    }
    Ok(best)
}

/// Best wall time of `reps` runs of `f` and the engine's stats of that run.
fn best_of(
    dev: &GpuEngine,
    reps: usize,
    mut f: impl FnMut() -> Result<(), BulkError>,
) -> Result<(f64, GpuStats), BulkError> {
    let mut best = (f64::MAX, GpuStats::default());
    for _ in 0..reps.max(1) {
        dev.reset_stats();
        let t = Instant::now();
        f()?;
        let s = t.elapsed().as_secs_f64();
        if s < best.0 {
            best = (s, dev.stats());
        }
    }
    Ok(best)
}

/// Time `codec` on `dev` over `data` (one stream) in windows of `window`
/// input bytes, best of `reps` passes each way, with one buffer set (the phase split) and with the engine's
/// buffer sets in flight (pipelined), inside `pool` (whose threads read and
/// write beside the device). The container must equal `cpu_container`
/// (the CPU engines' output for the same data) and decode back to `data`;
/// both are checked outside the timed spans.
pub fn run(
    codec: &dyn BulkCodec,
    dev: &GpuEngine,
    data: &[u8],
    cpu_container: &[u8],
    reps: usize,
    window: usize,
    pool: &rayon::ThreadPool,
) -> Result<GpuBenchRow, BulkError> {
    let in_flight = dev.in_flight();
    let mut row = GpuBenchRow {
        name: format!("{} (gpu)", codec.algo()),
        original: data.len() as u64,
        in_flight,
        ..GpuBenchRow::default()
    };
    let mb = data.len() as f64 / 1e6;
    let mut packed = Vec::with_capacity(cpu_container.len() + 1024);
    let mut out = Vec::with_capacity(data.len());
    let mut scratch = CompressScratch::default();
    let mut compress =
        || pool.install(|| gpu_compress(codec, dev, data, window, &mut packed, &mut scratch));
    dev.set_in_flight(1)?;
    let serial = best_of(dev, reps, &mut compress);
    dev.set_in_flight(in_flight)?;
    let (s, st) = serial?;
    (row.serial_compress_mb_s, row.compress_stats) = (mb / s, st);
    row.compress_mb_s = mb / best_of(dev, reps, &mut compress)?.0;
    row.compressed = packed.len() as u64;
    if packed != cpu_container {
        return Err(BulkError::Gpu(format!(
            "{}: the GPU container differs from the CPU engines' ({} vs {} bytes)",
            codec.algo(),
            packed.len(),
            cpu_container.len()
        )));
    }
    let mut slots = DecompressScratch::default();
    let mut decompress =
        || pool.install(|| gpu_decompress(codec, dev, &packed, window, &mut out, &mut slots));
    dev.set_in_flight(1)?;
    let serial = best_of(dev, reps, &mut decompress);
    dev.set_in_flight(in_flight)?;
    let (s, st) = serial?;
    (row.serial_decompress_mb_s, row.decompress_stats) = (mb / s, st);
    row.decompress_mb_s = mb / best_of(dev, reps, &mut decompress)?.0;
    if out != data {
        return Err(BulkError::Gpu(format!(
            "{}: GPU round trip differs",
            codec.algo()
        )));
    }
    (row.resident_compress_mb_s, row.resident_decompress_mb_s) =
        resident_rates(codec, dev, data, reps)?;
    Ok(row)
}

/// Compress and decompress rates (MB/s, best of `reps`) of `data`'s whole
/// blocks with data and chunks resident in device memory, the container
/// options the host path uses; the round trip is checked.
pub fn resident_rates(
    codec: &dyn BulkCodec,
    dev: &GpuEngine,
    data: &[u8],
    reps: usize,
) -> Result<(f64, f64), BulkError> {
    let bb = codec.block_bytes().max(1);
    let whole = &data[..data.len() / bb * bb];
    if whole.is_empty() {
        return Ok((0.0, 0.0));
    }
    let header = header_for(codec, &CompressOptions::default())?;
    let input = dev.upload_blocks(whole)?;
    let mut chunks = ResidentChunks::new();
    let mut back = ResidentBlocks::new();
    let time = |f: &mut dyn FnMut() -> Result<(), BulkError>| best_secs(reps, f);
    let c = time(&mut || dev.compress_resident(&header, &input, &mut chunks))?;
    let d = time(&mut || dev.decompress_resident(&chunks, &mut back))?;
    if dev.download_blocks(&back)? != whole {
        return Err(BulkError::Gpu(format!(
            "{}: device-resident round trip differs",
            codec.algo()
        )));
    }
    let mb = whole.len() as f64 / 1e6;
    Ok((mb / c, mb / d))
}

/// Render GPU rows: end-to-end rates (pipelined and serial), kernel-only
/// rates and the phase split.
pub fn render(rows: &[GpuBenchRow]) -> String {
    let mut s = format!(
        "{:<14} {:>7} | {:>9} {:>9} | {:>9} {:>9} | {:>10} {:>10} | {:>10} {:>10} | {:>18} | {:>18}\n",
        "codec",
        "ratio",
        "c MB/s",
        "d MB/s",
        "c serial",
        "d serial",
        "c kernel",
        "d kernel",
        "c resident",
        "d resident",
        "c up/kern/down %",
        "d up/kern/down %"
    );
    let split = |st: &GpuStats| {
        let t = (st.upload_s + st.kernel_s + st.download_s).max(1e-12);
        format!(
            "{:.0}/{:.0}/{:.0}",
            100.0 * st.upload_s / t,
            100.0 * st.kernel_s / t,
            100.0 * st.download_s / t
        )
    };
    for r in rows {
        let (kc, kd) = r.kernel_rates();
        s += &format!(
            "{:<14} {:>7.3} | {:>9.1} {:>9.1} | {:>9.1} {:>9.1} | {:>10.1} {:>10.1} | {:>10.1} {:>10.1} | {:>18} | {:>18}\n",
            r.name,
            r.original as f64 / r.compressed.max(1) as f64,
            r.compress_mb_s,
            r.decompress_mb_s,
            r.serial_compress_mb_s,
            r.serial_decompress_mb_s,
            kc,
            kd,
            r.resident_compress_mb_s,
            r.resident_decompress_mb_s,
            split(&r.compress_stats),
            split(&r.decompress_stats)
        );
    }
    let k = rows.first().map_or(2, |r| r.in_flight);
    s += &format!(
        "MB/s: end to end, input and output in host memory (wall clock), {k} buffer sets in flight \
         (upload, kernels and download of successive parts overlapped); serial: one buffer set, \
         the phases one after the other; kernel: input MB over the kernel phase of the serial pass \
         (device packing included); resident: input and chunks in device memory (no host copies: \
         compress_resident, decompress_resident, device planning included); up/kern/down: share of the serial pass's device time spent \
         uploading, in kernels, downloading\n"
    );
    s
}

/// Host-to-device and device-to-host copy bandwidth in GB/s, `bytes` at a
/// time through the paths the engine uses (host memory copied in parallel
/// into a mapped staging buffer, then copied by the device; and back),
/// best of `reps`.
pub fn copy_bandwidth(gpu: &Gpu, bytes: usize, reps: usize) -> Result<(f64, f64), BulkError> {
    use rayon::prelude::*;
    let host: Vec<u8> = (0..bytes).map(|i| (i * 7) as u8).collect();
    let dev = gpu.storage("copy test", bytes as u64);
    let up_staging = gpu.upload_staging("copy test upload", bytes as u64);
    let staging = gpu.readback("copy test readback", bytes as u64);
    let len4 = (bytes as u64).next_multiple_of(4);
    let mut up = f64::MAX;
    let mut down = f64::MAX;
    let mut back = vec![0u8; bytes];
    for _ in 0..reps.max(1) {
        let t = Instant::now();
        let pieces: Vec<(usize, &[u8])> = host
            .chunks(1 << 20)
            .enumerate()
            .map(|(i, p)| (i << 20, p))
            .collect();
        gpu.stage(&up_staging, bytes as u64, &pieces)?;
        let mut enc = gpu.device.create_command_encoder(&Default::default());
        enc.copy_buffer_to_buffer(&up_staging, 0, &dev, 0, len4);
        gpu.submit_wait(enc)?;
        up = up.min(t.elapsed().as_secs_f64());
        let t = Instant::now();
        let mut enc = gpu.device.create_command_encoder(&Default::default());
        enc.copy_buffer_to_buffer(&dev, 0, &staging, 0, len4);
        gpu.submit_wait(enc)?;
        gpu.with_mapped(&staging, bytes as u64, |v| {
            back.par_chunks_mut(1 << 20)
                .zip(v.par_chunks(1 << 20))
                .for_each(|(d, s)| d.copy_from_slice(s))
        })?;
        down = down.min(t.elapsed().as_secs_f64());
    }
    if back != host {
        return Err(BulkError::Gpu(
            "copy test: the data came back different".into(),
        ));
    }
    Ok((bytes as f64 / 1e9 / up, bytes as f64 / 1e9 / down))
}

/// The engine's host path without kernels ([`GpuEngine::transfer_window`]
/// over a stream in windows) beside plain copies of the same bytes.
#[derive(Clone, Debug, Default)]
pub struct TransferRow {
    pub bytes: u64,
    pub window_bytes: u64,
    pub part_bytes: u64,
    pub in_flight: usize,
    /// Stream MB over the wall time, best pass, each byte up and back:
    /// the engine's buffer sets in flight, and one set (serial).
    pub mb_s: f64,
    pub serial_mb_s: f64,
    /// Phase times of the best serial pass (upload: staging and the copy
    /// to the device; kernel: nothing, the wait; download: the copy back
    /// and out of the mapped buffer).
    pub stats: GpuStats,
    /// Plain copies of the same bytes (at most [`PLAIN_COPY_MAX`]) in one
    /// piece each way, GB/s ([`copy_bandwidth`]).
    pub copy_up_gb_s: f64,
    pub copy_down_gb_s: f64,
    /// The same transfers as the window coder of a compress stream
    /// ([`compress_with`] with each chunk stored as its own bytes): the
    /// stream loop's reading, checksums and writing included, MB/s.
    pub stream_mb_s: f64,
    /// The same stream loop with the chunks' bytes copied on the host
    /// instead (no device): the stream loop's own cost, MB/s.
    pub loop_mb_s: f64,
}

/// [`GpuEngine::transfer_window`] as a compressing [`WindowCoder`]: each
/// chunk's bytes come back from the device as its stored bytes, so that
/// the stream loop around the engine is timed with no kernel in it. Its
/// containers are for timing only (nothing decodes them). Without
/// `device` the bytes are copied on the host instead.
struct Echo<'a> {
    dev: &'a GpuEngine,
    device: bool,
    scratch: Mutex<Vec<u8>>,
}

impl WindowCoder for Echo<'_> {
    fn max_window_bytes(&self) -> u64 {
        self.dev.max_window_bytes()
    }

    fn compress_window(
        &self,
        header: &Header,
        data: &[u8],
        stored: &mut [Vec<u8>],
        bits: &mut [u32],
    ) -> Result<(), BulkError> {
        let mut back = self
            .scratch
            .lock()
            .map_err(|_| BulkError::Gpu("transfer scratch poisoned".into()))?;
        let from: &[u8] = if self.device {
            back.resize(data.len(), 0);
            self.dev.transfer_window(data, &mut back)?;
            &back
        } else {
            data
        };
        let cb = header.chunk_bytes().max(1) as usize;
        stored
            .par_iter_mut()
            .zip(bits.par_iter_mut())
            .zip(from.par_chunks(cb))
            .for_each(|((s, b), c)| {
                s.clear();
                s.extend_from_slice(c);
                *b = 8 * c.len() as u32;
            });
        Ok(())
    }

    fn decompress_window(&self, _: &Header, _: &mut [WindowChunk<'_>]) -> Result<(), BulkError> {
        Err(BulkError::Gpu("the transfer timing does not decode".into()))
    }
}

/// Largest plain copy [`transfer_rates`] times.
pub const PLAIN_COPY_MAX: usize = 256 << 20;

impl TransferRow {
    /// Plain copies of the same bytes up and back, MB/s of the stream.
    pub fn copy_mb_s(&self) -> f64 {
        1e3 / (1.0 / self.copy_up_gb_s + 1.0 / self.copy_down_gb_s)
    }
}

/// Time [`GpuEngine::transfer_window`] over `data` in windows of
/// `window_bytes` (best of `reps` passes, with the engine's buffer sets in
/// flight and with one), check that the bytes came back, and time plain
/// copies of the same bytes in the same call.
pub fn transfer_rates(
    codec: &dyn BulkCodec,
    dev: &GpuEngine,
    data: &[u8],
    window_bytes: usize,
    reps: usize,
    pool: &rayon::ThreadPool,
) -> Result<TransferRow, BulkError> {
    let window = window_bytes.max(1);
    let in_flight = dev.in_flight();
    let mut out = vec![0u8; data.len()];
    let mut pass = || {
        pool.install(|| {
            data.chunks(window)
                .zip(out.chunks_mut(window))
                .try_for_each(|(d, o)| dev.transfer_window(d, o))
        })
    };
    dev.set_in_flight(1)?;
    let serial = best_of(dev, reps, &mut pass);
    dev.set_in_flight(in_flight)?;
    let (s, stats) = serial?;
    let (p, _) = best_of(dev, reps, &mut pass)?;
    if out != data {
        return Err(BulkError::Gpu(
            "transfers: the data came back different".into(),
        ));
    }
    drop(out);
    // the same through the stream loop, in the codec's chunks
    let chunk = header_for(codec, &CompressOptions::default())?
        .chunk_bytes()
        .max(1) as usize;
    let opts = CompressOptions {
        engine: Engine::Gpu,
        window: (window / chunk).clamp(1, crate::stream::MAX_WINDOW),
        original_len: Some(data.len() as u64),
        ..CompressOptions::default()
    };
    let mut packed = Vec::with_capacity(data.len() + data.len() / 64 + 4096);
    let mut buffers = CompressScratch::default();
    let mut stream = |device: bool| {
        let echo = Echo {
            dev,
            device,
            scratch: Mutex::new(Vec::new()),
        };
        best_secs(reps, &mut || {
            packed.clear();
            pool.install(|| {
                compress_reusing(
                    codec,
                    Cursor::new(data),
                    &mut packed,
                    &opts,
                    Some(&echo),
                    &mut buffers,
                    &|_| {},
                )
            })
            .map(|_| ())
        })
    };
    let st = stream(true)?;
    let lt = stream(false)?;
    drop(packed);
    let plain = data.len().clamp(4, PLAIN_COPY_MAX);
    let (up, down) = pool.install(|| copy_bandwidth(&dev.gpu, plain, reps))?;
    let mb = data.len() as f64 / 1e6;
    Ok(TransferRow {
        bytes: data.len() as u64,
        window_bytes: window.min(data.len()) as u64,
        part_bytes: dev.part_bytes() as u64,
        in_flight,
        mb_s: mb / p,
        serial_mb_s: mb / s,
        stats,
        copy_up_gb_s: up,
        copy_down_gb_s: down,
        stream_mb_s: mb / st,
        loop_mb_s: mb / lt,
    })
}

/// Render a [`TransferRow`]: the engine's transfers against the plain
/// copies, and the end-to-end rows' rates against the host-to-device copy.
pub fn render_transfers(t: &TransferRow, rows: &[GpuBenchRow]) -> String {
    let st = &t.stats;
    let sum = (st.upload_s + st.kernel_s + st.download_s).max(1e-12);
    let plain = t.copy_mb_s();
    let mut s = format!(
        "transfers only ({} MiB stream in {} MiB windows, {} MiB parts; each byte up and back, \
         no kernels): {:.1} MB/s with {} buffer sets, {:.1} MB/s serial (up/wait/down {:.0}/{:.0}/{:.0} %); \
         plain copies of the same bytes: host->device {:.2} GB/s, device->host {:.2} GB/s, \
         up and back {:.1} MB/s; the engine's transfers at {:.0}% of the plain copies; \
         as a compress stream's window coder (reading, checksums, writing): {:.1} MB/s; \
         the same stream loop with host copies instead of the device: {:.1} MB/s\n",
        t.bytes >> 20,
        t.window_bytes >> 20,
        t.part_bytes >> 20,
        t.mb_s,
        t.in_flight,
        t.serial_mb_s,
        100.0 * st.upload_s / sum,
        100.0 * st.kernel_s / sum,
        100.0 * st.download_s / sum,
        t.copy_up_gb_s,
        t.copy_down_gb_s,
        plain,
        100.0 * t.mb_s / plain.max(1e-12),
        t.stream_mb_s,
        t.loop_mb_s,
    );
    let h2d = 1e3 * t.copy_up_gb_s;
    for r in rows {
        s += &format!(
            "  {:<14} end to end at {:.1}% / {:.1}% of the host->device copy (compress / decompress)\n",
            r.name,
            100.0 * r.compress_mb_s / h2d.max(1e-12),
            100.0 * r.decompress_mb_s / h2d.max(1e-12),
        );
    }
    s
}

/// Per size: (bytes, CPU pool compress s, GPU compress s, CPU pool
/// decompress s, GPU decompress s).
pub type GpuCalibrationRow = (usize, f64, f64, f64, f64);

/// Sizes tried by [`calibrate`]: 1 MiB to 256 MiB by powers of four.
pub fn gpu_calibration_sizes() -> Vec<usize> {
    (10..=14).map(|k| 1usize << (2 * k)).collect()
}

/// Measure the CPU pool and the GPU engine on prefixes of `sample`
/// (repeated to each size), best of `reps`, transfers included; the
/// thresholds are the smallest sizes from which the GPU engine is at least
/// 10% faster at that size and every larger one ([`NEVER`] if it never is).
pub fn calibrate(
    codec: &dyn BulkCodec,
    dev: &GpuEngine,
    sample: &[u8],
    sizes: &[usize],
    reps: usize,
    pool: &rayon::ThreadPool,
) -> Result<(u64, u64, Vec<GpuCalibrationRow>), BulkError> {
    if sample.is_empty() {
        return Err(BulkError::Config("calibration needs sample data".into()));
    }
    let time = |f: &mut dyn FnMut() -> Result<(), BulkError>| best_secs(reps, f);
    let mut rows = Vec::new();
    for &size in sizes {
        let data: Vec<u8> = sample.iter().copied().cycle().take(size).collect();
        let mut packed = Vec::new();
        let mut out = Vec::new();
        let opts = CompressOptions {
            engine: Engine::Parallel,
            original_len: Some(size as u64),
            ..CompressOptions::default()
        };
        let cc = time(&mut || {
            packed.clear();
            pool.install(|| {
                compress_with(codec, Cursor::new(&data), &mut packed, &opts, None, &|_| {})
            })
            .map(|_| ())
        })?;
        // fresh buffers each pass, as the CPU engine's: a one-stream run
        let gc = time(&mut || {
            pool.install(|| {
                let mut fresh = CompressScratch::default();
                gpu_compress(codec, dev, &data, GPU_WINDOW, &mut out, &mut fresh)
            })
        })?;
        let cd = time(&mut || {
            let mut sink = Vec::with_capacity(size);
            pool.install(|| {
                decompress_with(
                    codec,
                    Cursor::new(&packed),
                    &mut sink,
                    Engine::Parallel,
                    32,
                    None,
                    &|_| {},
                )
            })
            .map(|_| ())
        })?;
        let gd = time(&mut || {
            pool.install(|| {
                let mut fresh = DecompressScratch::default();
                gpu_decompress(codec, dev, &packed, GPU_WINDOW, &mut out, &mut fresh)
            })
        })?;
        if out != data {
            return Err(BulkError::Gpu(format!(
                "{}: GPU round trip differs at {size} bytes",
                codec.algo()
            )));
        }
        rows.push((size, cc, gc, cd, gd));
    }
    let threshold = |pick: fn(&GpuCalibrationRow) -> (f64, f64)| -> u64 {
        let mut t = NEVER;
        for row in rows.iter().rev() {
            let (cpu, gpu) = pick(row);
            if gpu < 0.9 * cpu {
                t = row.0 as u64;
            } else {
                break;
            }
        }
        t
    };
    let c = threshold(|r| (r.1, r.2));
    let d = threshold(|r| (r.3, r.4));
    Ok((c, d, rows))
}
