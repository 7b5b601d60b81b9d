//! Measuring the GPU engine: end-to-end throughput with the
//! upload / kernel / download split, the device-only kernel rate, the
//! host<->device copy bandwidth, and the input size from which the GPU
//! engine beats the CPU pool (`calibrate --gpu`).

use std::io::Cursor;
use std::time::Instant;

use super::device::Gpu;
use super::engine::{GpuEngine, GpuStats, ResidentBlocks, ResidentChunks};
use crate::codec::BulkCodec;
use crate::engine::{Engine, NEVER};
use crate::stream::{compress_with, decompress_with, header_for, CompressOptions, GPU_WINDOW};
use crate::BulkError;

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

/// Compress `input` on the GPU engine into `out` (cleared first).
pub fn gpu_compress(
    codec: &dyn BulkCodec,
    dev: &GpuEngine,
    input: &[u8],
    window: usize,
    out: &mut Vec<u8>,
) -> Result<(), BulkError> {
    out.clear();
    let opts = CompressOptions {
        engine: Engine::Gpu,
        window,
        original_len: Some(input.len() as u64),
        ..CompressOptions::default()
    };
    compress_with(codec, Cursor::new(input), out, &opts, Some(dev), &|_| {})?;
    Ok(())
}

/// Decompress `packed` on the GPU engine into `out` (cleared first).
pub fn gpu_decompress(
    codec: &dyn BulkCodec,
    dev: &GpuEngine,
    packed: &[u8],
    window: usize,
    out: &mut Vec<u8>,
) -> Result<(), BulkError> {
    out.clear();
    decompress_with(
        codec,
        Cursor::new(packed),
        out,
        Engine::Gpu,
        window,
        Some(dev),
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
    let mut compress = || pool.install(|| gpu_compress(codec, dev, data, window, &mut packed));
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
    let mut decompress = || pool.install(|| gpu_decompress(codec, dev, &packed, window, &mut out));
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
        let gc =
            time(&mut || pool.install(|| gpu_compress(codec, dev, &data, GPU_WINDOW, &mut out)))?;
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
            pool.install(|| gpu_decompress(codec, dev, &packed, GPU_WINDOW, &mut out))
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
