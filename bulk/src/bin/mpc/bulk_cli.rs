//! Bulk-codec subcommands of `mpc`.

use std::fs::File;
use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{anyhow, bail, Context, Result};
use bulk::bench::{self, General};
use bulk::engine::{self, calibration_sizes, Calibration, DEFAULT_THRESHOLD, NEVER};
use bulk::format::{Header, HEADER_BYTES, MAX_CHUNK_BYTES};
use bulk::stream::{DEFAULT_CHUNK_BLOCKS, DEFAULT_WINDOW, GPU_WINDOW, MAX_WINDOW};
use bulk::{self, open_codec, BlockReader, BulkCodec, CompressOptions, Engine, MpcBulk};
use clap::error::ErrorKind;
use clap::{Args, Subcommand, ValueEnum};
use datafiles::corpus::data_files_of;
use golden::mpc::fast::Kernel;
use indicatif::{ProgressBar, ProgressDrawTarget};

use crate::atomic_output::{check_writable, Output};
use crate::usage_error;

/// Most threads `-j` takes.
const MAX_THREADS: u64 = 1024;

/// The model set used without `--model`, relative to the current
/// directory (the repository's root).
const DEFAULT_MODEL: &str = "models/default";

#[derive(Subcommand)]
pub enum BulkCmd {
    /// Compress a file into a container (`-`: standard input to standard
    /// output).
    Compress(CompressArgs),
    /// Decompress a container (`-`: standard input to standard output).
    Decompress(DecompressArgs),
    /// Print a container's header and index summary.
    Info { input: PathBuf },
    /// Random access: print blocks of a container as hex.
    Get(GetArgs),
    /// Throughput and ratio side by side with lz4 and zstd.
    Bench(BenchArgs),
    /// Measure the single/parallel (and GPU) thresholds and store them.
    Calibrate(CalibrateArgs),
    /// List the GPU adapters the GPU engine can use.
    Adapters,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum EngineArg {
    /// By input size against the calibrated thresholds.
    Auto,
    Single,
    Parallel,
    /// The GPU engine (builds with the cargo feature `gpu`).
    Gpu,
}

#[derive(Args)]
pub struct CodecArgs {
    /// Block codec: mpc, magbdi, dpc, bdi, fpc, cpack, bpc.
    #[arg(long, short, default_value = "mpc")]
    algo: String,
    /// Model set (mpc; other codecs do not read it): directory holding
    /// model.toml, or the file [default: models/default, relative to the
    /// current directory].
    #[arg(long, short)]
    model: Option<PathBuf>,
    /// Block size in bytes (default 32; 128 for magbdi and dpc): 32 or 128
    /// for the word-based baselines, 64 to 512 for magbdi, 32 to 1024 for
    /// dpc, in steps of 32.
    #[arg(long)]
    block_bytes: Option<usize>,
}

impl CodecArgs {
    fn open(&self) -> Result<Box<dyn BulkCodec>> {
        open(&self.algo, &self.model, self.block_bytes)
    }
}

/// The model-set path: the flag's, or [`DEFAULT_MODEL`].
fn model_path(model: &Option<PathBuf>) -> &Path {
    model.as_deref().unwrap_or(Path::new(DEFAULT_MODEL))
}

/// `e`, with a hint to pass `--model` where the default model set was
/// used and is not there (a command run outside the repository).
fn model_hint(e: anyhow::Error, algo: &str, model: &Option<PathBuf>) -> anyhow::Error {
    if algo != "mpc" || model.is_some() || Path::new(DEFAULT_MODEL).exists() {
        return e;
    }
    let cwd = std::env::current_dir()
        .map(|d| format!(" ({})", d.display()))
        .unwrap_or_default();
    anyhow!(
        "{e:#}\nhint: without --model, mpc reads the model set {DEFAULT_MODEL}, relative to the \
         current directory{cwd}: run from the repository's root or pass the model set with \
         --model DIR (-m DIR)"
    )
}

/// [`open_codec`] with the model set of `--model` (and a hint where the
/// default one is missing).
fn open(
    algo: &str,
    model: &Option<PathBuf>,
    block_bytes: Option<usize>,
) -> Result<Box<dyn BulkCodec>> {
    open_codec(algo, Some(model_path(model)), block_bytes)
        .map_err(|e| model_hint(e.into(), algo, model))
}

/// The codec a container's header names, with the model set of `--model`;
/// an error names the container (`what`) and the header field.
fn open_for_header(
    header: &Header,
    model: &Option<PathBuf>,
    what: &str,
) -> Result<Box<dyn BulkCodec>> {
    bulk::open_codec_for(header, Some(model_path(model)))
        .map_err(|e| model_hint(anyhow!("{what}: {e}"), &header.algo, model))
}

#[derive(Args)]
pub struct RunArgs {
    /// Engine: auto picks by size using the calibration file.
    #[arg(long, value_enum, default_value = "auto")]
    engine: EngineArg,
    /// Threads of the parallel engine (default: all cores; 1 to 1024; not
    /// with --engine single).
    #[arg(long, short = 'j', value_parser = clap::value_parser!(u64).range(1..=MAX_THREADS))]
    threads: Option<u64>,
    /// Calibration file that --engine auto reads (default:
    /// $MPCGEN_CALIBRATION or ~/.config/mpcgen/calibration.toml).
    #[arg(long)]
    calibration: Option<PathBuf>,
    /// Chunks coded per window (memory: about 3 x window x chunk; 1 to
    /// 4096, and a window holds at most 256 MiB; default 32, and 64 MiB of
    /// chunks on the GPU engine).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=MAX_WINDOW as u64))]
    window: Option<u64>,
    /// GPU adapter for the GPU engine (--engine gpu or auto): a position
    /// in `mpc adapters` or part of its name (default: a discrete GPU
    /// first, software last).
    #[arg(long)]
    gpu_adapter: Option<String>,
    /// No progress bar.
    #[arg(long, short)]
    quiet: bool,
    /// Overwrite the output file.
    #[arg(long, short)]
    force: bool,
}

impl RunArgs {
    /// Flags that `--engine` makes meaningless, refused as clap refuses
    /// conflicting flags.
    fn check(&self, sub: &str) -> Result<(), clap::Error> {
        let engine = match self.engine {
            EngineArg::Auto => return Ok(()),
            EngineArg::Single => "single",
            EngineArg::Parallel => "parallel",
            EngineArg::Gpu => "gpu",
        };
        let conflict = |arg: &str, why: &str| {
            usage_error(
                sub,
                ErrorKind::ArgumentConflict,
                format!("the argument '{arg}' cannot be used with '--engine {engine}' ({why})"),
            )
        };
        if self.threads.is_some() && self.engine == EngineArg::Single {
            return Err(conflict(
                "--threads <THREADS>",
                "the single engine codes on one thread",
            ));
        }
        if self.calibration.is_some() {
            return Err(conflict(
                "--calibration <CALIBRATION>",
                "only --engine auto reads the calibration",
            ));
        }
        if self.gpu_adapter.is_some() && self.engine != EngineArg::Gpu {
            return Err(conflict(
                "--gpu-adapter <GPU_ADAPTER>",
                "the GPU adapter is for --engine gpu or auto",
            ));
        }
        Ok(())
    }
}

#[derive(Args)]
pub struct CompressArgs {
    #[command(flatten)]
    codec: CodecArgs,
    #[command(flatten)]
    run: RunArgs,
    /// Blocks per chunk (the unit of parallelism, checksums and random
    /// access); a chunk holds at most 16 MiB.
    #[arg(long, default_value_t = DEFAULT_CHUNK_BLOCKS,
          value_parser = clap::value_parser!(u32).range(1..))]
    chunk_blocks: u32,
    /// MPC: blocks per field of each chunk's group length table (a power
    /// of two, 1 to 256; default 32), which lets the GPU engine decode a
    /// chunk 32 blocks per thread; 0 writes no table (format version 1).
    #[arg(long, value_parser = clap::value_parser!(u32).range(0..=256))]
    block_groups: Option<u32>,
    /// Input file, `-` for standard input; of a `.npy` array the array's
    /// bytes in C order are coded (decompress gives those bytes, not a
    /// `.npy` file).
    input: PathBuf,
    /// Output file, `-` for standard output [default: INPUT with `.gmcz`
    /// appended, beside it (data.bin -> data.bin.gmcz); standard output
    /// when INPUT is `-`].
    #[arg(long, short)]
    output: Option<PathBuf>,
}

#[derive(Args)]
pub struct DecompressArgs {
    /// Model set (mpc containers): the one the container was made with
    /// [default: models/default, relative to the current directory].
    #[arg(long, short)]
    model: Option<PathBuf>,
    #[command(flatten)]
    run: RunArgs,
    /// Container file, `-` for standard input.
    input: PathBuf,
    /// Output file, `-` for standard output [default: INPUT without its
    /// `.gmcz` extension (data.bin.gmcz -> data.bin), or INPUT with `.out`
    /// appended when it has no such extension (data.dat -> data.dat.out);
    /// standard output when INPUT is `-`].
    #[arg(long, short)]
    output: Option<PathBuf>,
}

#[derive(Args)]
pub struct GetArgs {
    /// Model set (mpc containers): the one the container was made with
    /// [default: models/default, relative to the current directory].
    #[arg(long, short)]
    model: Option<PathBuf>,
    /// First block.
    #[arg(long)]
    block: u64,
    /// Number of blocks (at least 1).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    count: u64,
    input: PathBuf,
}

#[derive(Args)]
pub struct BenchArgs {
    /// Codecs to time; lz4 and zstd are always added.
    #[arg(long, value_delimiter = ',', default_value = "mpc,magbdi,dpc")]
    algos: Vec<String>,
    /// Model set of mpc [default: models/default, relative to the current
    /// directory].
    #[arg(long, short)]
    model: Option<PathBuf>,
    #[arg(long)]
    block_bytes: Option<usize>,
    /// zstd levels to compare.
    #[arg(long, value_delimiter = ',', default_value = "1,3")]
    zstd: Vec<i32>,
    /// Use at most this many MiB of each file.
    #[arg(long)]
    limit_mib: Option<usize>,
    #[arg(long, short = 'j', value_parser = clap::value_parser!(u64).range(1..=MAX_THREADS))]
    threads: Option<u64>,
    /// MPC kernel (with mpc among --algos): the fastest this CPU runs, or
    /// a given one [default: auto].
    #[arg(long, value_enum)]
    kernel: Option<KernelArg>,
    /// Code every file as its own stream (default: the files concatenated
    /// into one stream, like one long memory trace).
    #[arg(long)]
    per_file: bool,
    /// Also time the GPU engine (mpc, magbdi, dpc), with the host<->device
    /// copy bandwidth (builds with the cargo feature `gpu`).
    #[arg(long)]
    gpu: bool,
    /// GPU adapter (see `mpc adapters`).
    #[arg(long, requires = "gpu")]
    gpu_adapter: Option<String>,
    /// GPU engine windows to time, MiB of input each, made whole chunks of
    /// the codec (a list times every window with every part size).
    #[arg(long, requires = "gpu", value_delimiter = ',', default_value = "64",
          value_parser = clap::value_parser!(u64).range(1..=256))]
    gpu_window_mib: Vec<u64>,
    /// GPU engine parts to time, MiB of input each (the unit of the
    /// upload / kernels / download pipeline and of the device-resident
    /// submissions).
    #[arg(long, requires = "gpu", value_delimiter = ',', default_value = "8",
          value_parser = clap::value_parser!(u64).range(1..=1024))]
    gpu_part_mib: Vec<u64>,
    /// With --gpu and mpc among --algos: the form of the MPC kernels, the
    /// engine's choice (auto), the kernels specialised for the model set,
    /// or the generic ones; several give a row each.
    #[arg(
        long,
        requires = "gpu",
        value_enum,
        value_delimiter = ',',
        default_value = "auto"
    )]
    gpu_mpc_kernels: Vec<MpcKernelsArg>,
    /// Files or corpus directories (default ../shared/corpus).
    files: Vec<PathBuf>,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum MpcKernelsArg {
    Auto,
    Specialised,
    Generic,
}

impl MpcKernelsArg {
    #[cfg(feature = "gpu")]
    fn name(self) -> &'static str {
        match self {
            MpcKernelsArg::Auto => "auto",
            MpcKernelsArg::Specialised => "specialised",
            MpcKernelsArg::Generic => "generic",
        }
    }

    #[cfg(feature = "gpu")]
    fn kernels(self) -> bulk::gpu::MpcKernels {
        match self {
            MpcKernelsArg::Auto => bulk::gpu::MpcKernels::Auto,
            MpcKernelsArg::Specialised => bulk::gpu::MpcKernels::Specialised,
            MpcKernelsArg::Generic => bulk::gpu::MpcKernels::Generic,
        }
    }
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum KernelArg {
    Auto,
    Avx512,
    Avx2,
    Scalar,
}

#[derive(Args)]
pub struct CalibrateArgs {
    /// Codecs to calibrate.
    #[arg(long, value_delimiter = ',', default_value = "mpc")]
    algos: Vec<String>,
    /// Model set of mpc [default: models/default, relative to the current
    /// directory].
    #[arg(long, short)]
    model: Option<PathBuf>,
    #[arg(long)]
    block_bytes: Option<usize>,
    #[arg(long, short = 'j', value_parser = clap::value_parser!(u64).range(1..=MAX_THREADS))]
    threads: Option<u64>,
    /// Where to store the thresholds (default: $MPCGEN_CALIBRATION or
    /// ~/.config/mpcgen/calibration.toml); checked before measuring.
    #[arg(long)]
    calibration: Option<PathBuf>,
    /// Timing repetitions per size (best is kept; 1 to 100).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u64).range(1..=100))]
    reps: u64,
    /// Also measure from which size the GPU engine beats the CPU pool
    /// (transfers included; 1 MiB to 256 MiB). A software adapter is not
    /// measured: `auto` never picks one.
    #[arg(long)]
    gpu: bool,
    /// GPU adapter (see `mpc adapters`).
    #[arg(long, requires = "gpu")]
    gpu_adapter: Option<String>,
    /// Sample files or corpus directories (default ../shared/corpus).
    files: Vec<PathBuf>,
}

/// Flags that do not apply given the others' values (clap's rules cover
/// the rest), refused with clap's usage error.
pub fn check_flags(cmd: &BulkCmd) -> Result<(), clap::Error> {
    match cmd {
        BulkCmd::Compress(a) => a.run.check("compress"),
        BulkCmd::Decompress(a) => a.run.check("decompress"),
        BulkCmd::Bench(a) if a.kernel.is_some() && !a.algos.iter().any(|x| x == "mpc") => {
            Err(usage_error(
                "bench",
                ErrorKind::ArgumentConflict,
                "the argument '--kernel <KERNEL>' cannot be used without mpc in '--algos' (it \
                 picks the MPC kernel)"
                    .to_string(),
            ))
        }
        _ => Ok(()),
    }
}

pub fn run(cmd: BulkCmd) -> Result<()> {
    match cmd {
        BulkCmd::Compress(a) => compress(a),
        BulkCmd::Decompress(a) => decompress(a),
        BulkCmd::Info { input } => info(&input),
        BulkCmd::Get(a) => get(a),
        BulkCmd::Bench(a) => bench_cmd(a),
        BulkCmd::Calibrate(a) => calibrate(a),
        BulkCmd::Adapters => list_adapters(),
    }
}

fn pool(threads: Option<u64>) -> Result<rayon::ThreadPool> {
    let mut b = rayon::ThreadPoolBuilder::new();
    if let Some(t) = threads {
        b = b.num_threads(t as usize);
    }
    b.build().context("cannot start the thread pool")
}

fn calibration_path(p: &Option<PathBuf>) -> PathBuf {
    p.clone().unwrap_or_else(Calibration::default_path)
}

/// Chunks per window: the flag, or the engine's default (on the GPU
/// engine, [`GPU_WINDOW`] chunks of 64 KiB: 64 MiB whatever the chunk size).
fn window_of(run: &RunArgs, engine: Engine, chunk_bytes: u64) -> usize {
    match (run.window, engine) {
        (Some(w), _) => w as usize,
        (None, Engine::Gpu) => ((GPU_WINDOW as u64 * (64 << 10)) / chunk_bytes.max(1))
            .clamp(1, MAX_WINDOW as u64) as usize,
        (None, _) => DEFAULT_WINDOW,
    }
}

/// The device of the GPU engine for `codec`.
#[cfg(feature = "gpu")]
fn open_device(run: &RunArgs, codec: &dyn BulkCodec) -> Result<Box<dyn bulk::WindowCoder>> {
    let e = bulk::gpu::open_engine(codec, run.gpu_adapter.as_deref())?;
    if !run.quiet {
        errln!("GPU engine on {}", e.gpu.adapter);
    }
    Ok(Box::new(e))
}

#[cfg(not(feature = "gpu"))]
fn open_device(_run: &RunArgs, _codec: &dyn BulkCodec) -> Result<Box<dyn bulk::WindowCoder>> {
    bail!("this build has no GPU engine: build with `cargo build --release -p bulk --features gpu`")
}

/// Whether `auto` may use the GPU: a calibrated GPU threshold reached and
/// an adapter that is not a software one.
#[cfg(feature = "gpu")]
fn auto_gpu(
    run: &RunArgs,
    codec: &dyn BulkCodec,
    threshold: Option<u64>,
    size: Option<u64>,
) -> Option<Box<dyn bulk::WindowCoder>> {
    let t = threshold?;
    if size? < t {
        return None;
    }
    match bulk::gpu::open_engine(codec, run.gpu_adapter.as_deref()) {
        Ok(e) if e.gpu.adapter.is_software() => None,
        Ok(e) => {
            if !run.quiet {
                errln!("GPU engine on {}", e.gpu.adapter);
            }
            Some(Box::new(e))
        }
        Err(e) => {
            if !run.quiet {
                errln!("warning: GPU engine unavailable ({e}); using the CPU");
            }
            None
        }
    }
}

#[cfg(not(feature = "gpu"))]
fn auto_gpu(
    _: &RunArgs,
    _: &dyn BulkCodec,
    _: Option<u64>,
    _: Option<u64>,
) -> Option<Box<dyn bulk::WindowCoder>> {
    None
}

/// The engine for this run, and the GPU device when it is the GPU engine.
fn pick_engine(
    run: &RunArgs,
    codec: &dyn BulkCodec,
    size: Option<u64>,
    decompress: bool,
) -> Result<(Engine, Option<Box<dyn bulk::WindowCoder>>)> {
    let algo = codec.algo();
    let threshold = match run.engine {
        EngineArg::Single => return Ok((Engine::Single, None)),
        EngineArg::Parallel => return Ok((Engine::Parallel, None)),
        EngineArg::Gpu => return Ok((Engine::Gpu, Some(open_device(run, codec)?))),
        EngineArg::Auto => {
            let path = calibration_path(&run.calibration);
            match Calibration::load(&path)?.and_then(|c| c.algos.get(algo).cloned()) {
                Some(c) => {
                    let gpu_t = if decompress {
                        c.gpu_decompress_threshold
                    } else {
                        c.gpu_compress_threshold
                    };
                    if let Some(d) = auto_gpu(run, codec, gpu_t, size) {
                        return Ok((Engine::Gpu, Some(d)));
                    }
                    if decompress {
                        c.decompress_threshold
                    } else {
                        c.compress_threshold
                    }
                }
                None => {
                    if !run.quiet {
                        errln!(
                            "warning: no calibration for `{algo}` in {}; using the default \
                             threshold of {} bytes (run `mpc calibrate --algos {algo}`)",
                            path.display(),
                            DEFAULT_THRESHOLD
                        );
                    }
                    DEFAULT_THRESHOLD
                }
            }
        }
    };
    Ok((engine::choose(size, threshold), None))
}

fn bar(len: Option<u64>, quiet: bool, what: &str) -> ProgressBar {
    let b = datafiles::progress::bytes_bar(len, what);
    if quiet {
        b.set_draw_target(ProgressDrawTarget::hidden());
    }
    b
}

/// Read until `buf` is full or the input ends; returns the bytes read.
fn read_up_to(input: &mut dyn Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match input.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

fn open_input(p: &Path) -> Result<(Box<dyn Read + Send>, Option<u64>)> {
    if p.as_os_str() == "-" {
        return Ok((Box::new(std::io::stdin()), None));
    }
    let f = File::open(p).with_context(|| format!("cannot open {}", p.display()))?;
    // the size of a regular file; a pipe or device has none known
    let len = f.metadata().ok().filter(|m| m.is_file()).map(|m| m.len());
    if p.extension().is_some_and(|x| x == "npy") {
        return open_npy(p, f, len);
    }
    Ok((Box::new(f), len))
}

/// The data of a `.npy` array: streamed from after the header when it is
/// in C order, reordered in memory when it is in Fortran order.
fn open_npy(
    p: &Path,
    mut f: File,
    len: Option<u64>,
) -> Result<(Box<dyn Read + Send>, Option<u64>)> {
    use std::io::{Seek, SeekFrom};
    let file_len = len.with_context(|| format!("cannot size {}", p.display()))?;
    let mut head = Vec::new();
    (&mut f)
        .take(golden::npy::MAX_HEADER as u64 + 12)
        .read_to_end(&mut head)
        .with_context(|| format!("cannot read {}", p.display()))?;
    let (at, info) = golden::npy::header(&head, file_len, p)?;
    if info.fortran && info.shape.len() > 1 {
        let data = golden::npy::read_data(p)?;
        let n = data.len() as u64;
        return Ok((Box::new(std::io::Cursor::new(data)), Some(n)));
    }
    f.seek(SeekFrom::Start(at as u64))
        .with_context(|| format!("cannot read {}", p.display()))?;
    Ok((Box::new(f), Some(file_len - at as u64)))
}

/// Whether `p` is `-`: standard input or output.
fn is_std(p: &Path) -> bool {
    p.as_os_str() == "-"
}

/// How messages name an input.
fn input_name(p: &Path) -> String {
    if is_std(p) {
        "standard input".to_string()
    } else {
        p.display().to_string()
    }
}

/// Where `decompress INPUT` writes without `--output`: standard output for
/// `-`; INPUT without its `.gmcz` extension; else INPUT with `.out`
/// appended.
fn decompressed_name(input: &Path) -> PathBuf {
    if is_std(input) {
        return PathBuf::from("-");
    }
    if input.extension().is_some_and(|x| x == "gmcz") {
        return input.with_extension("");
    }
    let mut s = input.as_os_str().to_os_string();
    s.push(".out");
    PathBuf::from(s)
}

fn compress(a: CompressArgs) -> Result<()> {
    let codec = a.codec.open()?;
    let chunk_bytes = a.chunk_blocks as u64 * codec.block_bytes() as u64;
    if chunk_bytes > MAX_CHUNK_BYTES {
        bail!(
            "--chunk-blocks {}: chunks of {}-byte blocks would hold {chunk_bytes} bytes, more \
             than the {MAX_CHUNK_BYTES} a container allows",
            a.chunk_blocks,
            codec.block_bytes()
        );
    }
    let out_path = a.output.clone().unwrap_or_else(|| {
        if is_std(&a.input) {
            return PathBuf::from("-");
        }
        let mut s = a.input.clone().into_os_string();
        s.push(".gmcz");
        PathBuf::from(s)
    });
    if is_std(&out_path) && std::io::stdout().is_terminal() {
        bail!(
            "refusing to write a container to a terminal: redirect standard output (> FILE) or \
             pass --output FILE"
        );
    }
    let (input, len) = open_input(&a.input)?;
    let (engine, device) = pick_engine(&a.run, codec.as_ref(), len, false)?;
    let output = Output::create(&out_path, a.run.force, Some(&a.input))?;
    let out = output.writer()?;
    let pool = pool(a.run.threads)?;
    let pb = bar(len, a.run.quiet, "compress");
    let t = Instant::now();
    let opts = CompressOptions {
        chunk_blocks: a.chunk_blocks,
        group_blocks: a.block_groups,
        engine,
        window: window_of(&a.run, engine, chunk_bytes),
        original_len: len,
    };
    let sum = pool
        .install(|| {
            bulk::compress_with(codec.as_ref(), input, out, &opts, device.as_deref(), &|n| {
                pb.set_position(n)
            })
        })
        .with_context(|| format!("compressing {}", a.input.display()))?;
    pb.finish_and_clear();
    output.commit()?;
    let secs = t.elapsed().as_secs_f64();
    if !a.run.quiet {
        errln!(
            "{}: {} -> {} bytes ({:.3}x; payload {:.3}x), {} chunks, {:?} engine ({} threads), {:.1} MB/s",
            input_name(&a.input),
            sum.original_len,
            sum.container_len,
            sum.original_len as f64 / sum.container_len.max(1) as f64,
            sum.ratio(),
            sum.chunks,
            engine,
            if engine == Engine::Single { 1 } else { pool.current_num_threads() },
            sum.original_len as f64 / 1e6 / secs
        );
    }
    Ok(())
}

fn decompress(a: DecompressArgs) -> Result<()> {
    // read the header, then put it back in front of the stream (stdin
    // cannot be reopened)
    let (mut input, _) = open_input(&a.input)?;
    let mut head = [0u8; HEADER_BYTES];
    let name = input_name(&a.input);
    let n = read_up_to(&mut input, &mut head).with_context(|| format!("reading {name}"))?;
    let header = Header::parse(&head[..n]).with_context(|| name.clone())?;
    let input: Box<dyn Read + Send> = Box::new(std::io::Cursor::new(head).chain(input));
    let codec = open_for_header(&header, &a.model, &name)?;
    let out_path = a
        .output
        .clone()
        .unwrap_or_else(|| decompressed_name(&a.input));
    let (engine, device) = pick_engine(&a.run, codec.as_ref(), header.original_len, true)?;
    let output = Output::create(&out_path, a.run.force, Some(&a.input))?;
    let out = output.writer()?;
    let pool = pool(a.run.threads)?;
    let pb = bar(header.original_len, a.run.quiet, "decompress");
    let t = Instant::now();
    let r = pool.install(|| {
        bulk::decompress_with(
            codec.as_ref(),
            input,
            out,
            engine,
            window_of(&a.run, engine, header.chunk_bytes()),
            device.as_deref(),
            &|n| pb.set_position(n),
        )
    });
    pb.finish_and_clear();
    let sum = r.with_context(|| format!("decompressing {name}"))?;
    output.commit()?;
    if !a.run.quiet {
        errln!(
            "{}: {} -> {} bytes, {} chunks, {:?} engine, {:.1} MB/s",
            name,
            sum.container_len,
            sum.original_len,
            sum.chunks,
            engine,
            sum.original_len as f64 / 1e6 / t.elapsed().as_secs_f64()
        );
    }
    Ok(())
}

fn info(input: &Path) -> Result<()> {
    let f = File::open(input).with_context(|| format!("cannot open {}", input.display()))?;
    let size = f.metadata()?.len();
    let r = BlockReader::open(f).with_context(|| input.display().to_string())?;
    let h = &r.header;
    outln!("algorithm      {}", h.algo)?;
    outln!("codec sha256   {}", hex::encode(h.identity))?;
    outln!("block          {} bytes", h.block_bytes)?;
    outln!("chunk          {} blocks", h.chunk_blocks)?;
    outln!(
        "packing        {}",
        if let Some(g) = h.group_log2 {
            format!(
                "self-delimiting blocks, group length table ({} blocks, {} bits a group; format version 2)",
                1u32 << g,
                h.len_width
            )
        } else if h.self_delimiting {
            "self-delimiting blocks".to_string()
        } else {
            format!("length table, {} bits a block", h.len_width)
        }
    )?;
    outln!("original       {} bytes", r.original_len)?;
    outln!(
        "container      {size} bytes ({:.3}x)",
        r.original_len as f64 / size as f64
    )?;
    outln!("chunks         {}", r.entries.len())?;
    outln!("blocks         {}", r.blocks())?;
    Ok(())
}

fn get(a: GetArgs) -> Result<()> {
    let f = File::open(&a.input).with_context(|| format!("cannot open {}", a.input.display()))?;
    let mut r = BlockReader::open(f).with_context(|| a.input.display().to_string())?;
    let codec = open_for_header(&r.header, &a.model, &a.input.display().to_string())?;
    let blocks = r.blocks();
    let end = a.block.checked_add(a.count).filter(|&e| e <= blocks);
    let Some(end) = end else {
        bail!(
            "blocks {} to {} are out of range: {} holds {blocks} blocks (0 to {})",
            a.block,
            a.block as u128 + a.count as u128 - 1,
            a.input.display(),
            blocks.saturating_sub(1)
        );
    };
    let mut out = String::new();
    for i in a.block..end {
        let b = r
            .read_block(codec.as_ref(), i)
            .with_context(|| a.input.display().to_string())?;
        out.push_str(&format!("{i:>10} {}\n", hex::encode(b)));
    }
    out!("{out}")?;
    Ok(())
}

fn load_files(paths: &[PathBuf], limit: Option<usize>) -> Result<Vec<(PathBuf, Vec<u8>)>> {
    let roots = if paths.is_empty() {
        vec![PathBuf::from("../shared/corpus")]
    } else {
        paths.to_vec()
    };
    let mut v = Vec::new();
    for root in roots {
        for f in data_files_of(&root).with_context(|| format!("cannot list {}", root.display()))? {
            let mut d = golden::npy::read_data(&f)?;
            if let Some(mib) = limit {
                d.truncate(mib << 20);
            }
            v.push((f, d));
        }
    }
    if v.is_empty() {
        bail!("no input files");
    }
    Ok(v)
}

fn bench_cmd(a: BenchArgs) -> Result<()> {
    // the codecs (and the model set) first: a wrong --model fails before
    // the files are read
    let mut codecs: Vec<Box<dyn BulkCodec>> = Vec::new();
    let mut notes = Vec::new();
    for algo in &a.algos {
        if algo == "mpc" && a.block_bytes.is_none_or(|b| b == 32) {
            let kernel = match a.kernel.unwrap_or(KernelArg::Auto) {
                KernelArg::Auto => Kernel::best(),
                KernelArg::Avx512 => Kernel::Avx512,
                KernelArg::Avx2 => Kernel::Avx2,
                KernelArg::Scalar => Kernel::Scalar,
            };
            let c = MpcBulk::load_with_kernel(model_path(&a.model), kernel)
                .map_err(|e| model_hint(e.into(), algo, &a.model))?;
            if c.kernel() != kernel {
                bail!("this CPU cannot run the {} kernel", kernel.name());
            }
            notes.push(format!("mpc kernel: {}", c.kernel().name()));
            codecs.push(Box::new(c));
            continue;
        }
        match open_codec(algo, Some(model_path(&a.model)), a.block_bytes) {
            Ok(c) => codecs.push(c),
            Err(e @ bulk::BulkError::Unavailable { .. }) => notes.push(format!("skipped: {e}")),
            Err(e) => return Err(model_hint(e.into(), algo, &a.model)),
        }
    }
    let files = load_files(&a.files, a.limit_mib)?;
    let n_files = files.len();
    let mut data: Vec<Vec<u8>> = files.into_iter().map(|(_, d)| d).collect();
    if !a.per_file {
        data = vec![data.concat()];
    }
    let pool = pool(a.threads)?;
    let threads = pool.current_num_threads();
    if data.iter().all(|d| d.is_empty()) {
        bail!("nothing to time: the input holds 0 bytes");
    }
    let mb: f64 = data.iter().map(|d| d.len() as f64).sum::<f64>() / 1e6;
    outln!(
        "{n_files} files, {mb:.1} MB, {} stream{}, {threads} threads",
        data.len(),
        if data.len() == 1 { "" } else { "s" }
    )?;
    for n in &notes {
        outln!("{n}")?;
    }
    let mut rows = Vec::new();
    for c in &codecs {
        rows.push(bench::run(&bench::Bulk(c.as_ref()), &data, &pool)?);
    }
    rows.push(bench::run(&General::Lz4, &data, &pool)?);
    for l in &a.zstd {
        rows.push(bench::run(&General::Zstd(*l), &data, &pool)?);
    }
    out!("{}", bench::render(&rows, threads))?;
    if a.gpu {
        gpu_bench(&a, &data, &pool)?;
    }
    Ok(())
}

#[cfg(feature = "gpu")]
fn gpu_bench(a: &BenchArgs, data: &[Vec<u8>], pool: &rayon::ThreadPool) -> Result<()> {
    use bulk::gpu::bench as gb;
    let stream = data.concat();
    let mut rows = Vec::new();
    let mut adapter = None;
    let mut transfers = None;
    for algo in &a.algos {
        let codec = open(algo, &a.model, a.block_bytes)?;
        if matches!(codec.gpu_kind(), bulk::GpuKind::None) {
            outln!("{algo}: no GPU kernels")?;
            continue;
        }
        let mut cpu = Vec::new();
        let opts = CompressOptions {
            original_len: Some(stream.len() as u64),
            ..CompressOptions::default()
        };
        pool.install(|| {
            bulk::compress(
                codec.as_ref(),
                std::io::Cursor::new(&stream),
                &mut cpu,
                &opts,
                &|_| {},
            )
        })?;
        let forms: Vec<MpcKernelsArg> = if matches!(codec.gpu_kind(), bulk::GpuKind::Mpc(_)) {
            a.gpu_mpc_kernels.clone()
        } else {
            vec![MpcKernelsArg::Auto]
        };
        for &form in &forms {
            let dev = bulk::gpu::open_engine_with(
                codec.as_ref(),
                a.gpu_adapter.as_deref(),
                form.kernels(),
            )?;
            if adapter.is_none() {
                let (up, down) = gb::copy_bandwidth(&dev.gpu, 256 << 20, 3)?;
                outln!(
                    "\nGPU engine on {}: host->device {up:.2} GB/s, device->host {down:.2} GB/s (256 MiB copies)",
                    dev.gpu.adapter
                )?;
                adapter = Some(dev.gpu.adapter.clone());
                // the host path alone: the first window and part size asked for
                let w = a.gpu_window_mib.first().copied().unwrap_or(64);
                let p = a.gpu_part_mib.first().copied().unwrap_or(8);
                dev.set_part_bytes((p as usize) << 20);
                transfers = Some(gb::transfer_rates(
                    codec.as_ref(),
                    &dev,
                    &stream,
                    (w as usize) << 20,
                    2,
                    pool,
                )?);
            }
            // a window of `w` MiB in the codec's chunks
            let chunk = bulk::stream::header_for(codec.as_ref(), &CompressOptions::default())?
                .chunk_bytes()
                .max(1);
            let chunks_of =
                |w: u64| ((w << 20) / chunk).clamp(1, bulk::stream::MAX_WINDOW as u64) as usize;
            let sweep = a.gpu_window_mib.len() * a.gpu_part_mib.len() > 1;
            for &w in &a.gpu_window_mib {
                for &p in &a.gpu_part_mib {
                    dev.set_part_bytes((p as usize) << 20);
                    let mut row =
                        gb::run(codec.as_ref(), &dev, &stream, &cpu, 2, chunks_of(w), pool)?;
                    let form = if forms.len() > 1 {
                        format!(" {}", form.name())
                    } else {
                        String::new()
                    };
                    row.name = if sweep {
                        format!("{algo}{form} w{w} p{p}")
                    } else {
                        format!("{}{form}", row.name)
                    };
                    rows.push(row);
                }
            }
        }
    }
    out!("{}", gb::render(&rows))?;
    if let Some(t) = &transfers {
        out!("{}", gb::render_transfers(t, &rows))?;
    }
    Ok(())
}

#[cfg(not(feature = "gpu"))]
fn gpu_bench(_: &BenchArgs, _: &[Vec<u8>], _: &rayon::ThreadPool) -> Result<()> {
    bail!("this build has no GPU engine: build with `cargo build --release -p bulk --features gpu`")
}

/// A threshold as `calibrate` prints it.
fn from_size(t: u64) -> String {
    if t >= NEVER {
        "never (not faster at any size measured)".to_string()
    } else {
        format!("from {t} bytes")
    }
}

fn calibrate(a: CalibrateArgs) -> Result<()> {
    // everything that can fail before the minutes of measuring: the
    // calibration file, the codecs, the sample
    let path = calibration_path(&a.calibration);
    check_writable(&path)
        .with_context(|| format!("calibration file {} cannot be written", path.display()))?;
    let mut cal = Calibration::load(&path)?.unwrap_or_default();
    let mut codecs = Vec::new();
    for algo in &a.algos {
        codecs.push(open(algo, &a.model, a.block_bytes)?);
    }
    let files = load_files(&a.files, Some(1))?;
    let mut sample = Vec::new();
    for (_, d) in &files {
        sample.extend_from_slice(d);
        if sample.len() >= 16 << 20 {
            break;
        }
    }
    let pool = pool(a.threads)?;
    for (algo, codec) in a.algos.iter().zip(&codecs) {
        let (c, rows) = pool.install(|| {
            engine::calibrate(
                codec.as_ref(),
                &sample,
                &calibration_sizes(),
                a.reps as usize,
            )
        })?;
        outln!(
            "{algo}: {} threads\n{:>10} {:>10} {:>10} {:>10} {:>10}   (MB/s, wall)",
            c.threads,
            "bytes",
            "c 1T",
            "c NT",
            "d 1T",
            "d NT"
        )?;
        for (s, cs, cp, ds, dp) in &rows {
            let mb = *s as f64 / 1e6;
            outln!(
                "{s:>10} {:>10.1} {:>10.1} {:>10.1} {:>10.1}",
                mb / cs,
                mb / cp,
                mb / ds,
                mb / dp
            )?;
        }
        outln!(
            "{algo}: parallel compress {}; parallel decompress {}",
            from_size(c.compress_threshold),
            from_size(c.decompress_threshold)
        )?;
        let mut c = c;
        if a.gpu {
            gpu_calibrate(&a, codec.as_ref(), &sample, &pool, &mut c)?;
        } else if let Some(old) = cal.algos.get(algo) {
            // keep an earlier GPU measurement
            c.gpu_compress_threshold = old.gpu_compress_threshold;
            c.gpu_decompress_threshold = old.gpu_decompress_threshold;
            c.gpu_adapter = old.gpu_adapter.clone();
            c.gpu_compress_mb_s = old.gpu_compress_mb_s;
            c.gpu_decompress_mb_s = old.gpu_decompress_mb_s;
        }
        cal.algos.insert(algo.clone(), c);
    }
    save_calibration(&cal, &path)?;
    outln!("saved {}", path.display())?;
    Ok(())
}

/// Write the calibration file whole or not at all (through a temporary
/// file, as every output).
fn save_calibration(cal: &Calibration, path: &Path) -> Result<()> {
    let what = || format!("calibration file {}", path.display());
    let text = toml::to_string(cal).with_context(what)?;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(what)?;
    }
    let output = Output::create(path, true, None).with_context(what)?;
    let mut w = output.writer()?;
    w.write_all(format!("# written by `mpc calibrate`; thresholds in bytes\n{text}").as_bytes())
        .and_then(|()| w.flush())
        .with_context(what)?;
    drop(w);
    output.commit()
}

#[cfg(feature = "gpu")]
fn list_adapters() -> Result<()> {
    let found = bulk::gpu::adapters();
    if found.is_empty() {
        bail!(
            "no GPU adapter found (Vulkan, Metal or DX12); on Linux without a GPU, Mesa's software \
             driver provides one: apt-get install mesa-vulkan-drivers"
        );
    }
    for (i, a) in found.iter().enumerate() {
        outln!("[{i}] {a}  driver: {}", a.driver)?;
    }
    Ok(())
}

#[cfg(not(feature = "gpu"))]
fn list_adapters() -> Result<()> {
    bail!("this build has no GPU engine: build with `cargo build --release -p bulk --features gpu`")
}

#[cfg(feature = "gpu")]
fn gpu_calibrate(
    a: &CalibrateArgs,
    codec: &dyn BulkCodec,
    sample: &[u8],
    pool: &rayon::ThreadPool,
    c: &mut engine::AlgoCalibration,
) -> Result<()> {
    use bulk::gpu::bench as gb;
    let algo = codec.algo();
    if matches!(codec.gpu_kind(), bulk::GpuKind::None) {
        outln!("{algo}: no GPU kernels; the GPU engine is never chosen for it")?;
        return Ok(());
    }
    let dev = bulk::gpu::open_engine(codec, a.gpu_adapter.as_deref())?;
    if dev.gpu.adapter.is_software() {
        outln!(
            "{algo}: {} is a software adapter; not measured (`auto` never picks a software adapter)",
            dev.gpu.adapter
        )?;
        return Ok(());
    }
    let (ct, dt, rows) = gb::calibrate(
        codec,
        &dev,
        sample,
        &gb::gpu_calibration_sizes(),
        a.reps as usize,
        pool,
    )?;
    outln!(
        "{algo} on {}:\n{:>10} {:>10} {:>10} {:>10} {:>10}   (MB/s, wall, transfers included)",
        dev.gpu.adapter,
        "bytes",
        "c CPU",
        "c GPU",
        "d CPU",
        "d GPU"
    )?;
    for (s, cc, gc, cd, gd) in &rows {
        let mb = *s as f64 / 1e6;
        outln!(
            "{s:>10} {:>10.1} {:>10.1} {:>10.1} {:>10.1}",
            mb / cc,
            mb / gc,
            mb / cd,
            mb / gd
        )?;
    }
    outln!(
        "{algo}: GPU compress {}; GPU decompress {}",
        from_size(ct),
        from_size(dt)
    )?;
    c.gpu_compress_threshold = Some(ct);
    c.gpu_decompress_threshold = Some(dt);
    c.gpu_adapter = Some(dev.gpu.adapter.to_string());
    if let Some(&(s, _, gc, _, gd)) = rows.last() {
        c.gpu_compress_mb_s = Some(s as f64 / 1e6 / gc);
        c.gpu_decompress_mb_s = Some(s as f64 / 1e6 / gd);
    }
    Ok(())
}

#[cfg(not(feature = "gpu"))]
fn gpu_calibrate(
    _: &CalibrateArgs,
    _: &dyn BulkCodec,
    _: &[u8],
    _: &rayon::ThreadPool,
    _: &mut engine::AlgoCalibration,
) -> Result<()> {
    bail!("this build has no GPU engine: build with `cargo build --release -p bulk --features gpu`")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds_are_printed_in_words() {
        assert_eq!(from_size(131072), "from 131072 bytes");
        assert!(from_size(NEVER).starts_with("never"));
        assert!(!from_size(NEVER).contains(&NEVER.to_string()));
    }

    #[test]
    fn decompressed_names() {
        for (input, out) in [
            ("-", "-"),
            ("a/data.bin.gmcz", "a/data.bin"),
            ("data.dat", "data.dat.out"),
            (".gmcz", ".gmcz.out"),
            ("x.GMCZ", "x.GMCZ.out"),
        ] {
            assert_eq!(
                decompressed_name(Path::new(input)),
                Path::new(out),
                "{input}"
            );
        }
    }
}
