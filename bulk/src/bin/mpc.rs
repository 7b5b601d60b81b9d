//! `mpc`: compress raw memory files with an MPC model set and report the
//! compression ratio, or print the per-stage trace of one block; and the
//! bulk codec over whole files (`compress`, `decompress`, `info`, `get`,
//! `bench`, `calibrate`; container format in `docs/spec/container.md`).

/// `println!` that hands back the error (a closed pipe) instead of
/// panicking; `main` ends quietly on a closed pipe.
macro_rules! outln {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout().lock(), $($t)*)
    }};
}

/// `eprintln!` that cannot panic (standard error closed or a closed
/// pipe): a message that cannot be shown is dropped.
macro_rules! errln {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr().lock(), $($t)*);
    }};
}

/// `print!` as [`outln!`].
macro_rules! out {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        write!(std::io::stdout().lock(), $($t)*)
    }};
}

#[path = "mpc/atomic_output.rs"]
mod atomic_output;
#[path = "mpc/bulk_cli.rs"]
mod bulk_cli;
#[path = "mpc/interrupt.rs"]
mod interrupt;
#[path = "mpc/program.rs"]
mod program;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use clap::{CommandFactory, Parser, Subcommand};
use golden::blocks::{read_blocks, read_blocks_and_len};
use golden::mpc::{self, table1::CODE_KIND_NAMES, ModelSet, MpcCodec, BLOCK_BYTES};

#[derive(Parser)]
#[command(name = "mpc", version, about = "MPC golden-model tools")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Compress raw files of 32-byte blocks and print the compression ratio
    /// (sum of original bits / sum of compressed bits) of each file and
    /// over every block of the files given, and model usage.
    Ratio {
        /// Model-set directory (holding model.toml) or model file.
        #[arg(long, short)]
        model: PathBuf,
        /// Zero-pad a short last block instead of rejecting the file (the
        /// ratio counts the file's bytes only, not the padding).
        #[arg(long)]
        pad: bool,
        /// Also decompress every block and check it equals the input; a
        /// last line says the round trip passed.
        #[arg(long)]
        verify: bool,
        /// The online protocol (docs/spec/program-slots.md): per file, train
        /// K programmable slots on its first quarter and print the ratio of
        /// the remaining three quarters with the hard-wired set alone and
        /// with the slots.
        #[arg(long, value_name = "K")]
        online: Option<usize>,
        /// Slot form of --online (full, any-part, stride-part,
        /// stride-k0-part, stride-cols, stride-lib, stride-colpart,
        /// stride-colpart-d8).
        #[arg(long, requires = "online", default_value = program::DEFAULT_FORM)]
        form: String,
        /// With --online: one JSON object (per file and `overall`, each with
        /// `hard_wired` and `programmed` ratios).
        #[arg(long, requires = "online")]
        json: bool,
        /// Raw input files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Train K programmable slots from a sample of one application's data
    /// and write the configuration image a driver loads
    /// (docs/spec/program-slots.md).
    Program {
        /// Model-set directory (holding model.toml) or model file: the
        /// hard-wired set the image is made for.
        #[arg(long, short)]
        model: PathBuf,
        /// Slot form (full, any-part, stride-part, stride-k0-part,
        /// stride-cols, stride-lib, stride-colpart, stride-colpart-d8).
        #[arg(long, default_value = program::DEFAULT_FORM)]
        form: String,
        /// Slots in the unit (K).
        #[arg(long)]
        slots: usize,
        /// Bytes of the sample (a prefix of the file, or with --spread
        /// 4 KiB pages evenly spaced over it).
        #[arg(long, default_value_t = 1 << 20)]
        sample_bytes: u64,
        /// Take the sample as evenly spaced 4 KiB pages, not a prefix.
        #[arg(long)]
        spread: bool,
        /// The image file to write.
        #[arg(long, short, required_unless_present = "registers")]
        output: Option<PathBuf>,
        /// Also (or instead) write the register writes that load the image
        /// on a unit's configuration port, one `ADDRESS VALUE` line of hex
        /// words, the COMMIT write last (docs/hw/program-slots.md).
        #[arg(long)]
        registers: Option<PathBuf>,
        /// The epoch of the register writes (0..255).
        #[arg(long, requires = "registers", default_value_t = 1)]
        epoch: u8,
        /// Overwrite existing output files.
        #[arg(long)]
        force: bool,
        /// The application's data (raw or .npy).
        file: PathBuf,
    },
    /// Print every stage of the compression of one block.
    Trace {
        #[arg(long, short)]
        model: PathBuf,
        /// The block as 64 hex digits, byte 0 first.
        #[arg(long, conflicts_with_all = ["file", "index"])]
        hex: Option<String>,
        /// Raw file to take the block from.
        #[arg(long, requires = "index")]
        file: Option<PathBuf>,
        /// Block index within --file.
        #[arg(long, requires = "file")]
        index: Option<usize>,
    },
    #[command(flatten)]
    Bulk(bulk_cli::BulkCmd),
}

/// Exit status on a closed standard output (`mpc ratio ... | head -3`):
/// what a shell reports for a command ended by SIGPIPE.
const CLOSED_PIPE: u8 = 128 + 13;

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Cmd::Bulk(b) = &cli.cmd {
        if let Err(e) = bulk_cli::check_flags(b) {
            e.exit();
        }
    }
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if closed_pipe(&e) => ExitCode::from(CLOSED_PIPE),
        Err(e) => {
            errln!("Error: {e:?}");
            ExitCode::FAILURE
        }
    }
}

/// Whether `e` comes from writing to a pipe whose reader has gone.
fn closed_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// A usage error of subcommand `sub` in clap's form (exit status 2), for
/// flags that conflict through their values.
fn usage_error(sub: &str, kind: clap::error::ErrorKind, msg: String) -> clap::Error {
    let mut cmd = Cli::command();
    cmd.build();
    match cmd.find_subcommand_mut(sub) {
        Some(s) => s.error(kind, msg),
        None => cmd.error(kind, msg),
    }
}

fn run(cli: Cli) -> Result<()> {
    match cli.cmd {
        Cmd::Ratio {
            model,
            pad,
            verify,
            online: Some(k),
            form,
            json,
            files,
        } => program::ratio_online(&model, k, &form, json, verify, pad, &files),
        Cmd::Ratio {
            model,
            pad,
            verify,
            online: None,
            files,
            ..
        } => ratio(&model, pad, verify, &files),
        Cmd::Program {
            model,
            form,
            slots,
            sample_bytes,
            spread,
            output,
            registers,
            epoch,
            force,
            file,
        } => program::program(&program::ProgramArgs {
            model: &model,
            form: &form,
            slots,
            sample_bytes,
            spread,
            output: output.as_deref(),
            registers: registers.as_deref(),
            epoch,
            force,
            file: &file,
        }),
        Cmd::Trace {
            model,
            hex,
            file,
            index,
        } => trace(&model, hex, file, index),
        Cmd::Bulk(b) => bulk_cli::run(b),
    }
}

fn load(model: &Path) -> Result<ModelSet> {
    Ok(ModelSet::load(model)?)
}

fn ratio(model: &Path, pad: bool, verify: bool, files: &[PathBuf]) -> Result<()> {
    let set = load(model)?;
    let codec = MpcCodec::new(&set);
    let mut usage = vec![0u64; set.id_count()];
    let mut kinds = [0u64; CODE_KIND_NAMES.len()];
    let (mut all_orig, mut all_comp, mut all_blocks) = (0u64, 0u64, 0u64);
    outln!(
        "model set `{}` ({} IDs, {}-bit header, selection {})",
        set.name,
        set.id_count(),
        set.header_bits(),
        set.selection
    )?;
    outln!("{:>8}  {:>10}  file", "ratio", "blocks")?;
    for f in files {
        let (blocks, bytes) = read_blocks_and_len::<BLOCK_BYTES>(f, pad)?;
        let bar = datafiles::progress::bar(blocks.len() as u64, "blocks", &f.display().to_string());
        let mut comp = 0u64;
        for (i, b) in blocks.iter().enumerate() {
            let c = codec.compress(b);
            usage[c.model as usize] += 1;
            comp += c.len as u64;
            if let Some(mpc::ModelKind::Predictor(p)) = set.kind_of(c.model) {
                mpc::table1::encode_symbols(&codec.predictor_symbols(p, b), |code| {
                    kinds[code.kind_index()] += 1
                });
            }
            if verify {
                let d = codec
                    .decompress(c.as_bytes(), c.len as usize)
                    .with_context(|| format!("{}: block {i} does not decode", f.display()))?;
                if &d != b {
                    bail!("{}: block {i} does not round-trip", f.display());
                }
            }
            if i % 4096 == 0 {
                bar.set_position(i as u64);
            }
        }
        bar.finish_and_clear();
        // the file's bytes only: zero padding of the last block is not data
        let orig = 8 * bytes as u64;
        let rest = bytes % BLOCK_BYTES;
        let padded = if rest == 0 {
            String::new()
        } else {
            format!(
                "  (last block: {rest} byte{}, zero-padded to {BLOCK_BYTES})",
                if rest == 1 { "" } else { "s" }
            )
        };
        outln!(
            "{:>8.3}  {:>10}  {}{padded}",
            orig as f64 / comp as f64,
            blocks.len(),
            f.display()
        )?;
        all_orig += orig;
        all_comp += comp;
        all_blocks += blocks.len() as u64;
    }
    outln!(
        "{:>8.3}  {:>10}  overall (every block of the files given; {} bits -> {} bits)",
        all_orig as f64 / all_comp as f64,
        all_blocks,
        all_orig,
        all_comp
    )?;
    let total: u64 = usage.iter().sum();
    outln!("model usage:")?;
    for (id, n) in usage.iter().enumerate() {
        outln!(
            "  {:>2} {:<20} {:>6.2}%",
            id,
            set.id_name(id as u32),
            100.0 * *n as f64 / total as f64
        )?;
    }
    let codes: u64 = kinds.iter().sum();
    if codes > 0 {
        outln!("Table-1 codes in predictor payloads:")?;
        for (k, n) in kinds.iter().enumerate() {
            outln!(
                "  {:<16} {:>6.2}%",
                CODE_KIND_NAMES[k],
                100.0 * *n as f64 / codes as f64
            )?;
        }
    }
    if verify {
        outln!(
            "verified: all {all_blocks} blocks of {} file{} decompress to their input",
            files.len(),
            if files.len() == 1 { "" } else { "s" }
        )?;
    }
    Ok(())
}

fn parse_hex_block(s: &str) -> Result<[u8; BLOCK_BYTES]> {
    let s: String = s
        .chars()
        .filter(|c| !c.is_whitespace() && *c != '_')
        .collect();
    let v = hex::decode(&s).with_context(|| format!("--hex {s:?} is not hexadecimal"))?;
    if v.len() != BLOCK_BYTES {
        bail!(
            "--hex has {} bytes; a block is {BLOCK_BYTES} bytes (64 hex digits)",
            v.len()
        );
    }
    let mut b = [0u8; BLOCK_BYTES];
    b.copy_from_slice(&v);
    Ok(b)
}

fn trace(
    model: &Path,
    hex: Option<String>,
    file: Option<PathBuf>,
    index: Option<usize>,
) -> Result<()> {
    let set = load(model)?;
    let block = match (hex, file, index) {
        (Some(h), _, _) => parse_hex_block(&h)?,
        (None, Some(f), Some(i)) => {
            let blocks = read_blocks::<BLOCK_BYTES>(&f, true)?;
            *blocks.get(i).with_context(|| {
                format!(
                    "{}: block {i} out of range (file has {} blocks)",
                    f.display(),
                    blocks.len()
                )
            })?
        }
        _ => bail!("give the block with --hex or with --file and --index"),
    };
    out!(
        "{}",
        golden::mpc::trace::render_compress(&mpc::compress_traced(&block, &set), &set)
    )?;
    Ok(())
}
