//! Bulk-codec subcommands of `mpc`.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use bulk::bench::{self, General};
use bulk::engine::{self, calibration_sizes, Calibration, DEFAULT_THRESHOLD};
use bulk::format::{Header, HEADER_BYTES, MAX_CHUNK_BYTES};
use bulk::stream::{DEFAULT_CHUNK_BLOCKS, DEFAULT_WINDOW, GPU_WINDOW, MAX_WINDOW};
use bulk::{self, open_codec, BlockReader, BulkCodec, CompressOptions, Engine, MpcBulk};
use clap::{Args, Subcommand, ValueEnum};
use golden::mpc::fast::Kernel;
use indicatif::{ProgressBar, ProgressDrawTarget};
use tools::corpus::data_files_of;

use crate::output::Output;

/// Most threads `-j` takes.
const MAX_THREADS: u64 = 1024;

#[derive(Subcommand)]
pub enum BulkCmd {
    /// Compress a file (or `-` for stdin) into a container.
    Compress(CompressArgs),
    /// Decompress a container (or `-` for stdin).
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
    /// Model set (MPC): directory holding model.toml, or the file.
    #[arg(long, short, default_value = "models/default")]
    model: PathBuf,
    /// Block size in bytes (default 32; 128 for magbdi and dpc): 32 or 128
    /// for the word-based baselines, 64 to 512 for magbdi, 32 to 1024 for
    /// dpc, in steps of 32.
    #[arg(long)]
    block_bytes: Option<usize>,
}

impl CodecArgs {
    fn open(&self) -> Result<Box<dyn BulkCodec>> {
        Ok(open_codec(&self.algo, Some(&self.model), self.block_bytes)?)
    }
}

#[derive(Args)]
pub struct RunArgs {
    /// Engine: auto picks by size using the calibration file.
    #[arg(long, value_enum, default_value = "auto")]
    engine: EngineArg,
    /// Threads of the parallel engine (default: all cores; 1 to 1024).
    #[arg(long, short = 'j', value_parser = clap::value_parser!(u64).range(1..=MAX_THREADS))]
    threads: Option<u64>,
    /// Calibration file (default: $MPCGEN_CALIBRATION or
    /// ~/.config/mpcgen/calibration.toml).
    #[arg(long)]
    calibration: Option<PathBuf>,
    /// Chunks coded per window (memory: about 3 x window x chunk; 1 to
    /// 4096, and a window holds at most 256 MiB; default 32, and 64 MiB of
    /// chunks on the GPU engine).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=MAX_WINDOW as u64))]
    window: Option<u64>,
    /// GPU adapter for the GPU engine: a position in `mpc adapters` or
    /// part of its name (default: a discrete GPU first, software last).
    #[arg(long)]
    gpu_adapter: Option<String>,
    /// No progress bar.
    #[arg(long, short)]
    quiet: bool,
    /// Overwrite the output file.
    #[arg(long, short)]
    force: bool,
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
    /// Input file, `-` for stdin; of a `.npy` array the array's bytes in C
    /// order are coded (decompress gives those bytes, not a `.npy` file).
    input: PathBuf,
    /// Output (default INPUT.gmcz; `-` for stdout).
    #[arg(long, short)]
    output: Option<PathBuf>,
}

#[derive(Args)]
pub struct DecompressArgs {
    /// Model set (MPC); must be the one the container was made with.
    #[arg(long, short, default_value = "models/default")]
    model: PathBuf,
    #[command(flatten)]
    run: RunArgs,
    input: PathBuf,
    /// Output (default INPUT without .gmcz; `-` for stdout).
    #[arg(long, short)]
    output: Option<PathBuf>,
}

#[derive(Args)]
pub struct GetArgs {
    #[arg(long, short, default_value = "models/default")]
    model: PathBuf,
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
    #[arg(long, short, default_value = "models/default")]
    model: PathBuf,
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
    /// MPC kernel: the fastest this CPU runs, or a given one.
    #[arg(long, value_enum, default_value = "auto")]
    kernel: KernelArg,
    /// Code every file as its own stream (default: the files concatenated
    /// into one stream, like one long memory trace).
    #[arg(long)]
    per_file: bool,
    /// Also time the GPU engine (mpc, magbdi, dpc), with the host<->device
    /// copy bandwidth (builds with the cargo feature `gpu`).
    #[arg(long)]
    gpu: bool,
    /// GPU adapter (see `mpc adapters`).
    #[arg(long)]
    gpu_adapter: Option<String>,
    /// Files or corpus directories (default ../shared/corpus).
    files: Vec<PathBuf>,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum KernelArg {
    Auto,
    Avx2,
    Scalar,
}

#[derive(Args)]
pub struct CalibrateArgs {
    /// Codecs to calibrate.
    #[arg(long, value_delimiter = ',', default_value = "mpc")]
    algos: Vec<String>,
    #[arg(long, short, default_value = "models/default")]
    model: PathBuf,
    #[arg(long)]
    block_bytes: Option<usize>,
    #[arg(long, short = 'j', value_parser = clap::value_parser!(u64).range(1..=MAX_THREADS))]
    threads: Option<u64>,
    /// Where to store the thresholds.
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
    #[arg(long)]
    gpu_adapter: Option<String>,
    /// Sample files or corpus directories (default ../shared/corpus).
    files: Vec<PathBuf>,
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
        eprintln!("GPU engine on {}", e.gpu.adapter);
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
                eprintln!("GPU engine on {}", e.gpu.adapter);
            }
            Some(Box::new(e))
        }
        Err(e) => {
            if !run.quiet {
                eprintln!("warning: GPU engine unavailable ({e}); using the CPU");
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
                        eprintln!(
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
    let b = tools::progress::bytes_bar(len, what);
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
    let len = f.metadata().ok().map(|m| m.len());
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
    let (input, len) = open_input(&a.input)?;
    let out_path = a.output.clone().unwrap_or_else(|| {
        let mut s = a.input.clone().into_os_string();
        s.push(".gmcz");
        PathBuf::from(s)
    });
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
        eprintln!(
            "{}: {} -> {} bytes ({:.3}x; payload {:.3}x), {} chunks, {:?} engine ({} threads), {:.1} MB/s",
            a.input.display(),
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
    let name = if a.input.as_os_str() == "-" {
        "standard input".to_string()
    } else {
        a.input.display().to_string()
    };
    let n = read_up_to(&mut input, &mut head).with_context(|| format!("reading {name}"))?;
    let header = Header::parse(&head[..n]).with_context(|| name.clone())?;
    let input: Box<dyn Read + Send> = Box::new(std::io::Cursor::new(head).chain(input));
    let codec = open_codec(
        &header.algo,
        Some(&a.model),
        Some(header.block_bytes as usize),
    )?;
    let out_path = a.output.clone().unwrap_or_else(|| {
        let s = a.input.to_string_lossy();
        PathBuf::from(
            s.strip_suffix(".gmcz")
                .map_or_else(|| format!("{s}.out"), str::to_string),
        )
    });
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
    let sum = r.with_context(|| format!("decompressing {}", a.input.display()))?;
    output.commit()?;
    if !a.run.quiet {
        eprintln!(
            "{}: {} -> {} bytes, {} chunks, {:?} engine, {:.1} MB/s",
            a.input.display(),
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
    println!("algorithm      {}", h.algo);
    println!("codec sha256   {}", hex::encode(h.identity));
    println!("block          {} bytes", h.block_bytes);
    println!("chunk          {} blocks", h.chunk_blocks);
    println!(
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
    );
    println!("original       {} bytes", r.original_len);
    println!(
        "container      {size} bytes ({:.3}x)",
        r.original_len as f64 / size as f64
    );
    println!("chunks         {}", r.entries.len());
    println!("blocks         {}", r.blocks());
    Ok(())
}

fn get(a: GetArgs) -> Result<()> {
    let f = File::open(&a.input).with_context(|| format!("cannot open {}", a.input.display()))?;
    let mut r = BlockReader::open(f).with_context(|| a.input.display().to_string())?;
    let codec = open_codec(
        &r.header.algo.clone(),
        Some(&a.model),
        Some(r.header.block_bytes as usize),
    )?;
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
    print!("{out}");
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
    println!(
        "{n_files} files, {mb:.1} MB, {} stream{}, {threads} threads",
        data.len(),
        if data.len() == 1 { "" } else { "s" }
    );
    let mut rows = Vec::new();
    for algo in &a.algos {
        if algo == "mpc" && a.block_bytes.is_none_or(|b| b == 32) {
            let kernel = match a.kernel {
                KernelArg::Auto => Kernel::best(),
                KernelArg::Avx2 => Kernel::Avx2,
                KernelArg::Scalar => Kernel::Scalar,
            };
            let c = MpcBulk::load_with_kernel(&a.model, kernel)?;
            if c.kernel() != kernel {
                bail!("this CPU cannot run the {} kernel", kernel.name());
            }
            println!("mpc kernel: {}", c.kernel().name());
            rows.push(bench::run(&bench::Bulk(&c), &data, &pool)?);
            continue;
        }
        match open_codec(algo, Some(&a.model), a.block_bytes) {
            Ok(c) => rows.push(bench::run(&bench::Bulk(c.as_ref()), &data, &pool)?),
            Err(e @ bulk::BulkError::Unavailable { .. }) => println!("skipped: {e}"),
            Err(e) => return Err(e.into()),
        }
    }
    rows.push(bench::run(&General::Lz4, &data, &pool)?);
    for l in &a.zstd {
        rows.push(bench::run(&General::Zstd(*l), &data, &pool)?);
    }
    print!("{}", bench::render(&rows, threads));
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
    for algo in &a.algos {
        let codec = open_codec(algo, Some(&a.model), a.block_bytes)?;
        if matches!(codec.gpu_kind(), bulk::GpuKind::None) {
            println!("{algo}: no GPU kernels");
            continue;
        }
        let dev = bulk::gpu::open_engine(codec.as_ref(), a.gpu_adapter.as_deref())?;
        if adapter.is_none() {
            let (up, down) = gb::copy_bandwidth(&dev.gpu, 256 << 20, 3)?;
            println!(
                "\nGPU engine on {}: host->device {up:.2} GB/s, device->host {down:.2} GB/s (256 MiB copies)",
                dev.gpu.adapter
            );
            adapter = Some(dev.gpu.adapter.clone());
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
        rows.push(gb::run(codec.as_ref(), &dev, &stream, &cpu, 2, pool)?);
    }
    print!("{}", gb::render(&rows));
    Ok(())
}

#[cfg(not(feature = "gpu"))]
fn gpu_bench(_: &BenchArgs, _: &[Vec<u8>], _: &rayon::ThreadPool) -> Result<()> {
    bail!("this build has no GPU engine: build with `cargo build --release -p bulk --features gpu`")
}

fn calibrate(a: CalibrateArgs) -> Result<()> {
    let files = load_files(&a.files, Some(1))?;
    let mut sample = Vec::new();
    for (_, d) in &files {
        sample.extend_from_slice(d);
        if sample.len() >= 16 << 20 {
            break;
        }
    }
    let pool = pool(a.threads)?;
    let path = calibration_path(&a.calibration);
    let mut cal = Calibration::load(&path)?.unwrap_or_default();
    for algo in &a.algos {
        let codec = open_codec(algo, Some(&a.model), a.block_bytes)?;
        let (c, rows) = pool.install(|| {
            engine::calibrate(
                codec.as_ref(),
                &sample,
                &calibration_sizes(),
                a.reps as usize,
            )
        })?;
        println!(
            "{algo}: {} threads\n{:>10} {:>10} {:>10} {:>10} {:>10}   (MB/s, wall)",
            c.threads, "bytes", "c 1T", "c NT", "d 1T", "d NT"
        );
        for (s, cs, cp, ds, dp) in &rows {
            let mb = *s as f64 / 1e6;
            println!(
                "{s:>10} {:>10.1} {:>10.1} {:>10.1} {:>10.1}",
                mb / cs,
                mb / cp,
                mb / ds,
                mb / dp
            );
        }
        println!(
            "{algo}: parallel from {} bytes (compress), {} bytes (decompress)",
            c.compress_threshold, c.decompress_threshold
        );
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
    cal.save(&path)?;
    println!("saved {}", path.display());
    Ok(())
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
        println!("[{i}] {a}  driver: {}", a.driver);
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
        println!("{algo}: no GPU kernels; the GPU engine is never chosen for it");
        return Ok(());
    }
    let dev = bulk::gpu::open_engine(codec, a.gpu_adapter.as_deref())?;
    if dev.gpu.adapter.is_software() {
        println!(
            "{algo}: {} is a software adapter; not measured (`auto` never picks a software adapter)",
            dev.gpu.adapter
        );
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
    println!(
        "{algo} on {}:\n{:>10} {:>10} {:>10} {:>10} {:>10}   (MB/s, wall, transfers included)",
        dev.gpu.adapter, "bytes", "c CPU", "c GPU", "d CPU", "d GPU"
    );
    for (s, cc, gc, cd, gd) in &rows {
        let mb = *s as f64 / 1e6;
        println!(
            "{s:>10} {:>10.1} {:>10.1} {:>10.1} {:>10.1}",
            mb / cc,
            mb / gc,
            mb / cd,
            mb / gd
        );
    }
    println!("{algo}: GPU from {ct} bytes (compress), {dt} bytes (decompress)");
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
