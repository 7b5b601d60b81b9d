//! `mpc`: compress raw memory files with an MPC model set and report the
//! compression ratio, or print the per-stage trace of one block; and the
//! bulk codec over whole files (`compress`, `decompress`, `info`, `get`,
//! `bench`, `calibrate`; container format in `docs/spec/container.md`).

#[path = "mpc/bulk_cli.rs"]
mod bulk_cli;
#[path = "mpc/output.rs"]
mod output;

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand};
use golden::blocks::read_blocks;
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
    /// (sum of original bits / sum of compressed bits) and model usage.
    Ratio {
        /// Model-set directory (holding model.toml) or model file.
        #[arg(long, short)]
        model: PathBuf,
        /// Zero-pad a short last block instead of rejecting the file.
        #[arg(long)]
        pad: bool,
        /// Also decompress every block and check it equals the input.
        #[arg(long)]
        verify: bool,
        /// Raw input files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
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
        #[arg(long)]
        index: Option<usize>,
    },
    #[command(flatten)]
    Bulk(bulk_cli::BulkCmd),
}

fn main() -> Result<()> {
    match Cli::parse().cmd {
        Cmd::Ratio {
            model,
            pad,
            verify,
            files,
        } => ratio(&model, pad, verify, &files),
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
    let (mut all_orig, mut all_comp) = (0u64, 0u64);
    println!(
        "model set `{}` ({} IDs, {}-bit header, selection {})",
        set.name,
        set.id_count(),
        set.header_bits(),
        set.selection
    );
    for f in files {
        let blocks = read_blocks::<BLOCK_BYTES>(f, pad)?;
        let bar = tools::progress::bar(blocks.len() as u64, "blocks", &f.display().to_string());
        let (mut orig, mut comp) = (0u64, 0u64);
        for (i, b) in blocks.iter().enumerate() {
            let c = codec.compress(b);
            usage[c.model as usize] += 1;
            orig += 8 * BLOCK_BYTES as u64;
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
        println!(
            "{:>8.3}  {}  ({} blocks)",
            orig as f64 / comp as f64,
            f.display(),
            blocks.len()
        );
        all_orig += orig;
        all_comp += comp;
    }
    println!(
        "{:>8.3}  overall ({} bits -> {} bits)",
        all_orig as f64 / all_comp as f64,
        all_orig,
        all_comp
    );
    let total: u64 = usage.iter().sum();
    println!("model usage:");
    for (id, n) in usage.iter().enumerate() {
        println!(
            "  {:>2} {:<20} {:>6.2}%",
            id,
            set.id_name(id as u32),
            100.0 * *n as f64 / total as f64
        );
    }
    let codes: u64 = kinds.iter().sum();
    if codes > 0 {
        println!("Table-1 codes in predictor payloads:");
        for (k, n) in kinds.iter().enumerate() {
            println!(
                "  {:<16} {:>6.2}%",
                CODE_KIND_NAMES[k],
                100.0 * *n as f64 / codes as f64
            );
        }
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
    print!(
        "{}",
        golden::mpc::trace::render_compress(&mpc::compress_traced(&block, &set), &set)
    );
    Ok(())
}
