//! Throughput of the bulk codecs side by side with lz4 and zstd on the same
//! data, chunked the same way (64 KiB chunks coded independently), per core
//! (CPU time of the coding thread) and on all threads of a rayon pool
//! (wall clock, plus the pool's CPU time).

use std::io::Cursor;
use std::time::Instant;

use rayon::prelude::*;

use super::codec::BulkCodec;
use super::engine::Engine;
use super::stream::{compress, decompress, CompressOptions, DEFAULT_WINDOW};
use super::BulkError;

/// CPU time of the calling thread in seconds (Linux `schedstat`, ns
/// resolution); wall-clock seconds since first call elsewhere.
pub fn thread_cpu() -> f64 {
    if let Ok(s) = std::fs::read_to_string("/proc/thread-self/schedstat") {
        if let Some(ns) = s
            .split_whitespace()
            .next()
            .and_then(|v| v.parse::<u64>().ok())
        {
            return ns as f64 * 1e-9;
        }
    }
    static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_secs_f64()
}

/// Sum of the CPU time of every thread of `pool`.
fn pool_cpu(pool: &rayon::ThreadPool) -> f64 {
    pool.broadcast(|_| thread_cpu()).iter().sum()
}

/// One codec's figures.
#[derive(Clone, Debug, Default)]
pub struct BenchRow {
    pub name: String,
    pub original: u64,
    pub compressed: u64,
    /// MB/s per core: bytes over CPU seconds of the single coding thread.
    pub compress_core: f64,
    pub decompress_core: f64,
    /// MB/s on all threads: bytes over wall seconds.
    pub compress_all: f64,
    pub decompress_all: f64,
    /// Bytes over the pool's summed CPU seconds, all threads.
    pub compress_all_cpu: f64,
    pub decompress_all_cpu: f64,
    /// Wall-clock MB/s single-threaded (for the scaling figure).
    pub compress_wall1: f64,
    pub decompress_wall1: f64,
}

impl BenchRow {
    pub fn ratio(&self) -> f64 {
        self.original as f64 / self.compressed.max(1) as f64
    }
}

/// A chunked codec to time: `c(input) -> container`, `d(container) -> output`.
pub trait Timed: Sync {
    fn name(&self) -> String;
    fn c(&self, input: &[u8], engine: Engine) -> Result<Vec<u8>, BulkError>;
    fn d(&self, packed: &[u8], engine: Engine, len: usize) -> Result<Vec<u8>, BulkError>;
}

/// A bulk codec through the container layer.
pub struct Bulk<'a>(pub &'a dyn BulkCodec);

impl Timed for Bulk<'_> {
    fn name(&self) -> String {
        self.0.algo().to_string()
    }
    fn c(&self, input: &[u8], engine: Engine) -> Result<Vec<u8>, BulkError> {
        let mut out = Vec::with_capacity(input.len() / 2);
        let opts = CompressOptions {
            engine,
            original_len: Some(input.len() as u64),
            ..CompressOptions::default()
        };
        compress(self.0, Cursor::new(input), &mut out, &opts, &|_| {})?;
        Ok(out)
    }
    fn d(&self, packed: &[u8], engine: Engine, len: usize) -> Result<Vec<u8>, BulkError> {
        let mut out = Vec::with_capacity(len);
        decompress(
            self.0,
            Cursor::new(packed),
            &mut out,
            engine,
            DEFAULT_WINDOW,
            &|_| {},
        )?;
        Ok(out)
    }
}

/// Chunk size for lz4/zstd (the bulk layer's default chunk).
pub const CHUNK: usize = 64 << 10;

/// lz4 (lz4_flex block format) or zstd at a level, each 64 KiB chunk on
/// its own, framed with a 4-byte length.
pub enum General {
    Lz4,
    Zstd(i32),
}

fn frame(chunks: Vec<Vec<u8>>) -> Vec<u8> {
    let total = chunks.iter().map(|c| c.len() + 4).sum();
    let mut out = Vec::with_capacity(total);
    for c in chunks {
        out.extend_from_slice(&(c.len() as u32).to_le_bytes());
        out.extend_from_slice(&c);
    }
    out
}

fn unframe(packed: &[u8]) -> Result<Vec<&[u8]>, BulkError> {
    let mut v = Vec::new();
    let mut at = 0;
    while at < packed.len() {
        let n = packed
            .get(at..at + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
            .ok_or_else(|| BulkError::Truncated("frame".into()))?;
        let c = packed
            .get(at + 4..at + 4 + n)
            .ok_or_else(|| BulkError::Truncated("frame".into()))?;
        v.push(c);
        at += 4 + n;
    }
    Ok(v)
}

impl General {
    fn one_c(&self, c: &[u8]) -> Result<Vec<u8>, BulkError> {
        match self {
            General::Lz4 => Ok(lz4_flex::block::compress(c)),
            General::Zstd(l) => Ok(zstd::bulk::compress(c, *l)?),
        }
    }
    fn one_d(&self, c: &[u8]) -> Result<Vec<u8>, BulkError> {
        match self {
            General::Lz4 => {
                lz4_flex::block::decompress(c, CHUNK).map_err(|e| BulkError::Config(e.to_string()))
            }
            General::Zstd(_) => Ok(zstd::bulk::decompress(c, CHUNK)?),
        }
    }
}

impl Timed for General {
    fn name(&self) -> String {
        match self {
            General::Lz4 => "lz4".into(),
            General::Zstd(l) => format!("zstd-{l}"),
        }
    }
    fn c(&self, input: &[u8], engine: Engine) -> Result<Vec<u8>, BulkError> {
        let chunks: Result<Vec<_>, _> = match engine {
            Engine::Single => input.chunks(CHUNK).map(|c| self.one_c(c)).collect(),
            Engine::Parallel => input.par_chunks(CHUNK).map(|c| self.one_c(c)).collect(),
        };
        Ok(frame(chunks?))
    }
    fn d(&self, packed: &[u8], engine: Engine, len: usize) -> Result<Vec<u8>, BulkError> {
        let parts = unframe(packed)?;
        let chunks: Result<Vec<_>, _> = match engine {
            Engine::Single => parts.iter().map(|c| self.one_d(c)).collect(),
            Engine::Parallel => parts.par_iter().map(|c| self.one_d(c)).collect(),
        };
        let mut out = Vec::with_capacity(len);
        for c in chunks? {
            out.extend_from_slice(&c);
        }
        Ok(out)
    }
}

/// Single-threaded passes timed; the best one counts.
pub const REPS: usize = 2;

/// Time `codec` over `files` (each coded as its own stream): [`REPS`] times
/// on the calling thread (the best pass counts), once on `pool`. Checks
/// every round trip.
pub fn run(
    codec: &dyn Timed,
    files: &[Vec<u8>],
    pool: &rayon::ThreadPool,
) -> Result<BenchRow, BulkError> {
    let mut row = BenchRow {
        name: codec.name(),
        ..BenchRow::default()
    };
    let mb: f64 = files.iter().map(|f| f.len() as f64).sum::<f64>() / 1e6;
    row.original = files.iter().map(|f| f.len() as u64).sum();
    // single thread, best of REPS passes (the first pays for cold caches
    // and fresh pages); round trips are checked outside the timed spans
    let mut packed = Vec::new();
    let (mut cw, mut cc, mut dw, mut dc) = (f64::MAX, f64::MAX, f64::MAX, f64::MAX);
    for _ in 0..REPS {
        packed.clear();
        let (t, c0) = (Instant::now(), thread_cpu());
        for f in files {
            packed.push(codec.c(f, Engine::Single)?);
        }
        cw = cw.min(t.elapsed().as_secs_f64());
        cc = cc.min(thread_cpu() - c0);
        let (mut wall, mut cpu) = (0.0, 0.0);
        for (p, f) in packed.iter().zip(files) {
            let (t, d0) = (Instant::now(), thread_cpu());
            let d = codec.d(p, Engine::Single, f.len())?;
            wall += t.elapsed().as_secs_f64();
            cpu += thread_cpu() - d0;
            if d != *f {
                return Err(BulkError::Config(format!(
                    "{}: round trip differs",
                    row.name
                )));
            }
        }
        dw = dw.min(wall);
        dc = dc.min(cpu);
    }
    row.compressed = packed.iter().map(|p| p.len() as u64).sum();
    row.compress_core = mb / cc;
    row.decompress_core = mb / dc;
    row.compress_wall1 = mb / cw;
    row.decompress_wall1 = mb / dw;
    // all threads
    let (t, p0) = (Instant::now(), pool_cpu(pool));
    let packed2: Result<Vec<_>, _> =
        pool.install(|| files.iter().map(|f| codec.c(f, Engine::Parallel)).collect());
    let (cw, cc) = (t.elapsed().as_secs_f64(), pool_cpu(pool) - p0);
    let packed2 = packed2?;
    if packed2 != packed {
        return Err(BulkError::Config(format!(
            "{}: parallel output differs from single-threaded",
            row.name
        )));
    }
    let (t, p0) = (Instant::now(), pool_cpu(pool));
    let ok: Result<bool, BulkError> = pool.install(|| {
        let mut ok = true;
        for (p, f) in packed.iter().zip(files) {
            ok &= codec.d(p, Engine::Parallel, f.len())? == *f;
        }
        Ok(ok)
    });
    let (dw, dc) = (t.elapsed().as_secs_f64(), pool_cpu(pool) - p0);
    if !ok? {
        return Err(BulkError::Config(format!(
            "{}: parallel round trip differs",
            row.name
        )));
    }
    row.compress_all = mb / cw;
    row.decompress_all = mb / dw;
    row.compress_all_cpu = mb / cc;
    row.decompress_all_cpu = mb / dc;
    Ok(row)
}

/// The table printed by `mpc bench` and `cargo bench --bench bulk`.
pub fn render(rows: &[BenchRow], threads: usize) -> String {
    let mut s = format!(
        "{:<10} {:>7} | {:>9} {:>9} | {:>9} {:>9} {:>6} {:>6} | {:>9} {:>9}\n",
        "codec",
        "ratio",
        "c MB/s/c",
        "d MB/s/c",
        format!("c {threads}T"),
        format!("d {threads}T"),
        "c x",
        "d x",
        "c MB/cpu",
        "d MB/cpu"
    );
    for r in rows {
        s += &format!(
            "{:<10} {:>7.3} | {:>9.1} {:>9.1} | {:>9.1} {:>9.1} {:>6.2} {:>6.2} | {:>9.1} {:>9.1}\n",
            r.name,
            r.ratio(),
            r.compress_core,
            r.decompress_core,
            r.compress_all,
            r.decompress_all,
            r.compress_all / r.compress_wall1,
            r.decompress_all / r.decompress_wall1,
            r.compress_all_cpu,
            r.decompress_all_cpu,
        );
    }
    s += "ratio: original bytes / output bytes (containers and framing included)\n";
    s += "MB/s/c: per core (thread CPU time); NT: wall clock on N threads; x: NT wall / 1T wall;\n";
    s += "MB/cpu: MB per CPU-second summed over the pool's threads (parallel efficiency)\n";
    s
}

/// The `.bin` files under `dir` (one level of class folders, as the dev
/// corpus), sorted; `dir` itself may be a file.
pub fn corpus_files(dir: &std::path::Path) -> std::io::Result<Vec<std::path::PathBuf>> {
    if dir.is_file() {
        return Ok(vec![dir.to_path_buf()]);
    }
    let mut v = Vec::new();
    for e in std::fs::read_dir(dir)? {
        let p = e?.path();
        if p.is_dir() {
            for f in std::fs::read_dir(&p)? {
                let f = f?.path();
                if f.extension().is_some_and(|x| x == "bin") {
                    v.push(f);
                }
            }
        } else if p.extension().is_some_and(|x| x == "bin") {
            v.push(p);
        }
    }
    v.sort();
    Ok(v)
}
