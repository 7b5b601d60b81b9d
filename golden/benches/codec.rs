//! Single-core throughput of the MPC golden codec over the corpus.
//! `cargo bench -p golden --bench codec -- [MODEL_DIR] [CORPUS_DIR]`

use std::path::PathBuf;
use std::time::Instant;

/// CPU time of this thread in seconds: throughput per core that does not
/// depend on what else the machine runs.
fn thread_cpu() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

use golden::blocks::read_blocks;
use golden::mpc::{CompressedBlock, ModelSet, MpcCodec, BLOCK_BYTES};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let model = PathBuf::from(args.first().map_or("models/example", String::as_str));
    let corpus = PathBuf::from(args.get(1).map_or("../shared/corpus", String::as_str));
    // cargo bench runs in the package directory; accept paths from the workspace root too.
    let fix = |p: PathBuf| {
        if p.exists() {
            p
        } else {
            PathBuf::from("..").join(p)
        }
    };
    let (model, corpus) = (fix(model), fix(corpus));
    let set = ModelSet::load(&model)?;
    let codec = MpcCodec::new(&set);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&corpus)?
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
        .flat_map(|d| {
            std::fs::read_dir(d.path())
                .into_iter()
                .flatten()
                .filter_map(|e| e.ok())
                .map(|e| e.path())
        })
        .filter(|p| p.extension().is_some_and(|x| x == "bin"))
        .collect();
    files.sort();
    let mut blocks = Vec::new();
    for f in &files {
        blocks.extend(read_blocks::<BLOCK_BYTES>(f, true)?);
    }
    let mb = (blocks.len() * BLOCK_BYTES) as f64 / 1e6;
    println!(
        "model set {} ({} predictors), {} files, {:.1} MB, 1 thread",
        set.name,
        set.predictors.len(),
        files.len(),
        mb
    );

    let mut out: Vec<CompressedBlock> = Vec::with_capacity(blocks.len());
    let (t, c0) = (Instant::now(), thread_cpu());
    for b in &blocks {
        out.push(codec.compress(b));
    }
    let (ct, ccpu) = (t.elapsed().as_secs_f64(), thread_cpu() - c0);
    let bits: u64 = out.iter().map(|c| c.len as u64).sum();

    let (t, d0) = (Instant::now(), thread_cpu());
    let mut check = 0u64;
    for c in &out {
        let b = codec.decompress(c.as_bytes(), c.len as usize)?;
        check = check.wrapping_add(b[0] as u64);
    }
    let (dt, dcpu) = (t.elapsed().as_secs_f64(), thread_cpu() - d0);
    let orig: u64 = blocks.iter().map(|b| b[0] as u64).sum();
    if check != orig {
        return Err("decompressed data differ from the input".into());
    }
    println!(
        "compress   {:8.1} MB/s per core (CPU time; {:.1} MB/s wall)",
        mb / ccpu,
        mb / ct
    );
    println!(
        "decompress {:8.1} MB/s per core (CPU time; {:.1} MB/s wall)",
        mb / dcpu,
        mb / dt
    );
    println!(
        "ratio      {:8.3}",
        (blocks.len() * 256) as f64 / bits as f64
    );
    Ok(())
}
