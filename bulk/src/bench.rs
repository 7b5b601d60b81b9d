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

/// CPU seconds a pass used: the calling thread's for `Single`, the whole
/// pool's for `Parallel`.
fn cpu_since(engine: Engine, c0: f64, p0: f64, pool: &rayon::ThreadPool) -> f64 {
    match engine {
        Engine::Single => thread_cpu() - c0,
        Engine::Parallel | Engine::Gpu => pool_cpu(pool) - p0,
    }
}

/// One codec's figures. A rate is `None` when the pass took no measurable
/// time (a clock that did not advance): there is no rate to report then,
/// rather than an infinite one.
#[derive(Clone, Debug, Default)]
pub struct BenchRow {
    pub name: String,
    pub original: u64,
    pub compressed: u64,
    /// MB/s per core: bytes over CPU seconds of the single coding thread.
    pub compress_core: Option<f64>,
    pub decompress_core: Option<f64>,
    /// MB/s on all threads: bytes over wall seconds.
    pub compress_all: Option<f64>,
    pub decompress_all: Option<f64>,
    /// Bytes over the pool's summed CPU seconds, all threads.
    pub compress_all_cpu: Option<f64>,
    pub decompress_all_cpu: Option<f64>,
    /// Wall-clock MB/s single-threaded (for the scaling figure).
    pub compress_wall1: Option<f64>,
    pub decompress_wall1: Option<f64>,
}

impl BenchRow {
    /// Original over output bytes; `None` when nothing was written.
    pub fn ratio(&self) -> Option<f64> {
        (self.compressed > 0).then(|| self.original as f64 / self.compressed as f64)
    }

    /// Speed-up of all threads over one (wall clock), compressing.
    pub fn compress_scaling(&self) -> Option<f64> {
        Some(self.compress_all? / self.compress_wall1?)
    }

    /// Speed-up of all threads over one (wall clock), decompressing.
    pub fn decompress_scaling(&self) -> Option<f64> {
        Some(self.decompress_all? / self.decompress_wall1?)
    }
}

/// `mb / secs`, or `None` when the time is not a positive, finite number
/// (a pass too short for the clock).
pub fn rate(mb: f64, secs: f64) -> Option<f64> {
    (secs > 0.0 && secs.is_finite()).then(|| mb / secs)
}

/// A chunked codec to time: `c(input) -> container`, `d(container) ->
/// output`, each appending to a buffer the caller reuses (so that the
/// timed passes do not pay for fresh pages).
pub trait Timed: Sync {
    fn name(&self) -> String;
    fn c(&self, input: &[u8], engine: Engine, out: &mut Vec<u8>) -> Result<(), BulkError>;
    fn d(&self, packed: &[u8], engine: Engine, out: &mut Vec<u8>) -> Result<(), BulkError>;
}

/// A bulk codec through the container layer.
pub struct Bulk<'a>(pub &'a dyn BulkCodec);

impl Timed for Bulk<'_> {
    fn name(&self) -> String {
        self.0.algo().to_string()
    }
    fn c(&self, input: &[u8], engine: Engine, out: &mut Vec<u8>) -> Result<(), BulkError> {
        let opts = CompressOptions {
            engine,
            original_len: Some(input.len() as u64),
            ..CompressOptions::default()
        };
        compress(self.0, Cursor::new(input), out, &opts, &|_| {})?;
        Ok(())
    }
    fn d(&self, packed: &[u8], engine: Engine, out: &mut Vec<u8>) -> Result<(), BulkError> {
        decompress(
            self.0,
            Cursor::new(packed),
            out,
            engine,
            DEFAULT_WINDOW,
            &|_| {},
        )?;
        Ok(())
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

fn frame(chunks: Vec<Vec<u8>>, out: &mut Vec<u8>) {
    for c in chunks {
        out.extend_from_slice(&(c.len() as u32).to_le_bytes());
        out.extend_from_slice(&c);
    }
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
    fn c(&self, input: &[u8], engine: Engine, out: &mut Vec<u8>) -> Result<(), BulkError> {
        let chunks: Result<Vec<_>, _> = match engine {
            Engine::Single => input.chunks(CHUNK).map(|c| self.one_c(c)).collect(),
            Engine::Parallel | Engine::Gpu => {
                input.par_chunks(CHUNK).map(|c| self.one_c(c)).collect()
            }
        };
        frame(chunks?, out);
        Ok(())
    }
    fn d(&self, packed: &[u8], engine: Engine, out: &mut Vec<u8>) -> Result<(), BulkError> {
        let parts = unframe(packed)?;
        let chunks: Result<Vec<_>, _> = match engine {
            Engine::Single => parts.iter().map(|c| self.one_d(c)).collect(),
            Engine::Parallel | Engine::Gpu => parts.par_iter().map(|c| self.one_d(c)).collect(),
        };
        for c in chunks? {
            out.extend_from_slice(&c);
        }
        Ok(())
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
    if row.original == 0 {
        return Err(BulkError::Config(format!(
            "{}: nothing to time: the input holds 0 bytes ({} empty file{})",
            row.name,
            files.len(),
            if files.len() == 1 { "" } else { "s" }
        )));
    }
    // REPS passes on the calling thread, then REPS on the pool; the best
    // pass of each counts (the first pays for cold caches and fresh
    // pages). Output buffers are reused across passes, and round trips are
    // checked outside the timed spans.
    let mut packed: Vec<Vec<u8>> = files.iter().map(|_| Vec::new()).collect();
    let mut outs: Vec<Vec<u8>> = files.iter().map(|_| Vec::new()).collect();
    let mut reference: Vec<Vec<u8>> = Vec::new();
    let mut single = [f64::MAX; 4];
    let mut all = [f64::MAX; 4];
    for (engine, best) in [(Engine::Single, &mut single), (Engine::Parallel, &mut all)] {
        for _ in 0..REPS {
            // Single runs on the calling thread (no pool), Parallel on the
            // pool
            let on = |e: Engine, f: &mut (dyn FnMut() -> Result<(), BulkError> + Send)| match e {
                Engine::Single => f(),
                Engine::Parallel | Engine::Gpu => pool.install(f),
            };
            let pass = |e: Engine, p: &mut [Vec<u8>], o: &mut [Vec<u8>]| {
                let (t, c0, p0) = (Instant::now(), thread_cpu(), pool_cpu(pool));
                let r = on(e, &mut || {
                    for (f, out) in files.iter().zip(p.iter_mut()) {
                        out.clear();
                        codec.c(f, e, out)?;
                    }
                    Ok(())
                });
                let cw = t.elapsed().as_secs_f64();
                let cc = cpu_since(e, c0, p0, pool);
                r?;
                let (t, c0, p0) = (Instant::now(), thread_cpu(), pool_cpu(pool));
                let r = on(e, &mut || {
                    for (pk, out) in p.iter().zip(o.iter_mut()) {
                        out.clear();
                        codec.d(pk, e, out)?;
                    }
                    Ok(())
                });
                let (dw, dc) = (t.elapsed().as_secs_f64(), cpu_since(e, c0, p0, pool));
                r?;
                Ok::<_, BulkError>([cw, cc, dw, dc])
            };
            let times = pass(engine, &mut packed, &mut outs)?;
            for (b, t) in best.iter_mut().zip(times) {
                *b = b.min(t);
            }
            if outs.iter().zip(files).any(|(o, f)| o != f) {
                return Err(BulkError::Config(format!(
                    "{} ({engine:?}): round trip differs",
                    row.name
                )));
            }
            if reference.is_empty() {
                reference = packed.clone();
            } else if packed != reference {
                return Err(BulkError::Config(format!(
                    "{}: parallel output differs from single-threaded",
                    row.name
                )));
            }
        }
    }
    row.compressed = packed.iter().map(|p| p.len() as u64).sum();
    let [cw, cc, dw, dc] = single;
    row.compress_core = rate(mb, cc);
    row.decompress_core = rate(mb, dc);
    row.compress_wall1 = rate(mb, cw);
    row.decompress_wall1 = rate(mb, dw);
    let [cw, cc, dw, dc] = all;
    row.compress_all = rate(mb, cw);
    row.decompress_all = rate(mb, dw);
    row.compress_all_cpu = rate(mb, cc);
    row.decompress_all_cpu = rate(mb, dc);
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
    let mut untimed = false;
    for r in rows {
        let mut cell = |v: Option<f64>, digits: usize| {
            untimed |= v.is_none();
            v.map_or_else(|| "—".to_string(), |v| format!("{v:.digits$}"))
        };
        let cells = [
            cell(r.compress_core, 1),
            cell(r.decompress_core, 1),
            cell(r.compress_all, 1),
            cell(r.decompress_all, 1),
            cell(r.compress_scaling(), 2),
            cell(r.decompress_scaling(), 2),
            cell(r.compress_all_cpu, 1),
            cell(r.decompress_all_cpu, 1),
        ];
        s += &format!(
            "{:<10} {:>7} | {:>9} {:>9} | {:>9} {:>9} {:>6} {:>6} | {:>9} {:>9}\n",
            r.name,
            r.ratio()
                .map_or_else(|| "—".to_string(), |v| format!("{v:.3}")),
            cells[0],
            cells[1],
            cells[2],
            cells[3],
            cells[4],
            cells[5],
            cells[6],
            cells[7],
        );
    }
    s += "ratio: original bytes / output bytes (containers and framing included)\n";
    s += "MB/s/c: per core (thread CPU time); NT: wall clock on N threads; x: NT wall / 1T wall;\n";
    s += "MB/cpu: MB per CPU-second summed over the pool's threads (parallel efficiency)\n";
    if untimed {
        s += "—: the pass took no measurable time (input too small for the clock)\n";
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(name: &str, timed: bool) -> BenchRow {
        let t = |v: f64| timed.then_some(v);
        BenchRow {
            name: name.into(),
            original: 1000,
            compressed: 500,
            compress_core: t(100.0),
            decompress_core: t(200.0),
            compress_all: t(180.0),
            decompress_all: t(360.0),
            compress_all_cpu: t(90.0),
            decompress_all_cpu: t(180.0),
            compress_wall1: t(100.0),
            decompress_wall1: t(200.0),
        }
    }

    #[test]
    fn a_pass_without_measurable_time_has_no_rate() {
        assert_eq!(rate(2.0, 0.5), Some(4.0));
        assert_eq!(rate(2.0, 0.0), None);
        assert_eq!(rate(2.0, f64::NAN), None);
        assert_eq!(rate(2.0, -1.0), None);
        assert_eq!(BenchRow::default().ratio(), None);
        assert_eq!(row("x", false).compress_scaling(), None);
        assert_eq!(row("x", true).decompress_scaling(), Some(1.8));
    }

    #[test]
    fn render_shows_untimed_rates_as_dashes() {
        let s = render(&[row("fast", true), row("tiny", false)], 2);
        for cell in s.split_whitespace() {
            assert!(
                !matches!(cell, "NaN" | "inf" | "0.0" | "0.00" | "0.000"),
                "`{cell}` in\n{s}"
            );
        }
        let fast = s.lines().find(|l| l.starts_with("fast")).unwrap();
        assert!(fast.contains("2.000 |"), "{fast}");
        assert!(fast.contains(" 1.80 "), "{fast}");
        assert!(!fast.contains('—'), "{fast}");
        let tiny = s.lines().find(|l| l.starts_with("tiny")).unwrap();
        assert_eq!(tiny.matches('—').count(), 8, "{tiny}");
        assert!(s.contains("—: the pass took no measurable time"), "{s}");
        let timed_only = render(&[row("fast", true)], 2);
        assert!(!timed_only.contains('—'), "{timed_only}");
    }

    #[test]
    fn an_empty_input_is_an_error() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let err = run(&General::Lz4, &[Vec::new()], &pool).unwrap_err();
        assert!(err.to_string().contains("input holds 0 bytes"), "{err}");
        let err = run(&General::Lz4, &[], &pool).unwrap_err();
        assert!(err.to_string().contains("0 bytes"), "{err}");
        let ok = run(&General::Lz4, &[vec![7u8; 4096]], &pool).unwrap();
        assert!(ok.ratio().is_some_and(|r| r > 1.0));
    }
}
