//! Engine dispatch by input size, after Hybrid-Smash (Fernández et al.):
//! inputs below a threshold are coded on one thread (no pool start-up, no
//! window fan-out), larger ones on all cores of the rayon pool. The
//! threshold is measured per algorithm by [`calibrate`] on the machine and
//! stored in a small TOML file ([`Calibration`]); without one,
//! [`DEFAULT_THRESHOLD`] is used (and the CLI warns).
//!
//! The GPU engine (cargo feature `gpu`, `crate::gpu`) is a third variant:
//! `--engine auto` picks it above a second threshold, which `calibrate
//! --gpu` stores per algorithm when a GPU that is not a software adapter
//! wins (`docs/bulk-codec.md`, "Engine dispatch" and "GPU engine").

use std::collections::BTreeMap;
use std::io::Cursor;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::codec::BulkCodec;
use super::stream::{compress, decompress, CompressOptions};
use super::BulkError;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Engine {
    /// The calling thread only.
    Single,
    /// All threads of the current rayon pool.
    Parallel,
    /// The GPU engine (cargo feature `gpu`): windows of chunks coded by
    /// WGSL kernels through wgpu.
    Gpu,
}

/// Conservative threshold used without a calibration file: 4 MiB (64
/// chunks of 64 KiB), above which parallel coding wins on every machine
/// measured so far by a wide margin.
pub const DEFAULT_THRESHOLD: u64 = 4 << 20;

/// Threshold meaning "parallel never won" (TOML integers are i64).
pub const NEVER: u64 = i64::MAX as u64;

/// Measured thresholds for one algorithm.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AlgoCalibration {
    /// Inputs of at least this many bytes are compressed in parallel.
    pub compress_threshold: u64,
    /// Containers whose original length is at least this are decompressed
    /// in parallel.
    pub decompress_threshold: u64,
    /// Threads in the pool when measured.
    pub threads: usize,
    /// Throughputs measured on the largest size (MB/s, wall clock).
    pub compress_single_mb_s: f64,
    pub compress_parallel_mb_s: f64,
    pub decompress_single_mb_s: f64,
    pub decompress_parallel_mb_s: f64,
    /// Inputs of at least this many bytes are compressed on the GPU
    /// (absent: never; measured by `calibrate --gpu`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_compress_threshold: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_decompress_threshold: Option<u64>,
    /// The adapter measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_adapter: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_compress_mb_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_decompress_mb_s: Option<f64>,
}

/// The calibration file: one table per algorithm.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    #[serde(flatten)]
    pub algos: BTreeMap<String, AlgoCalibration>,
}

impl Calibration {
    /// `$MPCGEN_CALIBRATION`, else `$XDG_CONFIG_HOME/mpcgen/calibration.toml`,
    /// else `~/.config/mpcgen/calibration.toml`, else
    /// `build/calibration.toml`.
    pub fn default_path() -> PathBuf {
        if let Some(p) = std::env::var_os("MPCGEN_CALIBRATION") {
            return PathBuf::from(p);
        }
        let base = std::env::var_os("XDG_CONFIG_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")));
        match base {
            Some(b) => b.join("mpcgen").join("calibration.toml"),
            None => PathBuf::from("build/calibration.toml"),
        }
    }

    /// Load the file; `Ok(None)` if it does not exist.
    pub fn load(path: &Path) -> Result<Option<Calibration>, BulkError> {
        let err = |what: String| BulkError::Calibration {
            path: path.display().to_string(),
            what,
        };
        match std::fs::read_to_string(path) {
            Ok(text) => toml::from_str(&text)
                .map(Some)
                .map_err(|e| err(e.to_string())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(err(e.to_string())),
        }
    }

    pub fn save(&self, path: &Path) -> Result<(), BulkError> {
        let err = |what: String| BulkError::Calibration {
            path: path.display().to_string(),
            what,
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| err(e.to_string()))?;
        }
        let text = toml::to_string(self).map_err(|e| err(e.to_string()))?;
        std::fs::write(
            path,
            format!("# written by `mpc calibrate`; thresholds in bytes\n{text}"),
        )
        .map_err(|e| err(e.to_string()))
    }
}

/// The engine for `size` bytes (unknown size: parallel).
pub fn choose(size: Option<u64>, threshold: u64) -> Engine {
    match size {
        Some(s) if s < threshold => Engine::Single,
        _ => Engine::Parallel,
    }
}

/// Sizes tried by [`calibrate`]: 16 KiB to 16 MiB by powers of two.
pub fn calibration_sizes() -> Vec<usize> {
    (14..=24).map(|k| 1usize << k).collect()
}

fn best_of(reps: usize, mut f: impl FnMut() -> Result<(), BulkError>) -> Result<f64, BulkError> {
    let mut best = f64::INFINITY;
    for _ in 0..reps {
        let t = Instant::now();
        f()?;
        best = best.min(t.elapsed().as_secs_f64());
    }
    Ok(best)
}

/// Per size: `(size, compress single s, compress parallel s, decompress
/// single s, decompress parallel s)`.
pub type CalibrationRow = (usize, f64, f64, f64, f64);

/// Measure single vs parallel compress and decompress on prefixes of
/// `sample` (repeated to reach each size) on the current rayon pool; the
/// threshold is the smallest size from which parallel is at least 10%
/// faster at that size and every larger one.
pub fn calibrate(
    codec: &dyn BulkCodec,
    sample: &[u8],
    sizes: &[usize],
    reps: usize,
) -> Result<(AlgoCalibration, Vec<CalibrationRow>), BulkError> {
    if sample.is_empty() {
        return Err(BulkError::Config("calibration needs sample data".into()));
    }
    if reps == 0 {
        return Err(BulkError::Config(
            "calibration needs at least one timing repetition".into(),
        ));
    }
    let mut rows = Vec::new();
    for &size in sizes {
        let data: Vec<u8> = sample.iter().copied().cycle().take(size).collect();
        let mut packed = Vec::new();
        let run_c = |engine: Engine, out: &mut Vec<u8>| {
            out.clear();
            let opts = CompressOptions {
                engine,
                original_len: Some(size as u64),
                ..CompressOptions::default()
            };
            compress(codec, Cursor::new(&data), out, &opts, &|_| {}).map(|_| ())
        };
        // fewer repetitions on large sizes
        let r = if size >= 4 << 20 { reps.min(2) } else { reps };
        let cs = best_of(r, || run_c(Engine::Single, &mut packed))?;
        let cp = best_of(r, || run_c(Engine::Parallel, &mut packed))?;
        let mut sink = Vec::with_capacity(size);
        let mut run_d = |engine: Engine| {
            sink.clear();
            decompress(
                codec,
                Cursor::new(&packed),
                &mut sink,
                engine,
                super::stream::DEFAULT_WINDOW,
                &|_| {},
            )
            .map(|_| ())
        };
        let ds = best_of(r, || run_d(Engine::Single))?;
        let dp = best_of(r, || run_d(Engine::Parallel))?;
        rows.push((size, cs, cp, ds, dp));
    }
    let threshold = |pick: fn(&CalibrationRow) -> (f64, f64)| -> u64 {
        let mut t = NEVER;
        for row in rows.iter().rev() {
            let (s, p) = pick(row);
            if p < 0.9 * s {
                t = row.0 as u64;
            } else {
                break;
            }
        }
        t
    };
    let last = rows.last().copied().unwrap_or((1, 1.0, 1.0, 1.0, 1.0));
    let mb = last.0 as f64 / 1e6;
    Ok((
        AlgoCalibration {
            compress_threshold: threshold(|r| (r.1, r.2)),
            decompress_threshold: threshold(|r| (r.3, r.4)),
            threads: rayon::current_num_threads(),
            compress_single_mb_s: mb / last.1,
            compress_parallel_mb_s: mb / last.2,
            decompress_single_mb_s: mb / last.3,
            decompress_parallel_mb_s: mb / last.4,
            gpu_compress_threshold: None,
            gpu_decompress_threshold: None,
            gpu_adapter: None,
            gpu_compress_mb_s: None,
            gpu_decompress_mb_s: None,
        },
        rows,
    ))
}
