//! Bulk codec throughput, side by side with lz4 and zstd on the same files:
//! per core (thread CPU time) and on all cores (wall clock).
//! `cargo bench -p bulk --bench bulk -- [MODEL_DIR] [CORPUS_DIR] [ALGOS]`
//! (ALGOS comma-separated, default `mpc,magbdi,dpc`; `MPC_BENCH_MIB=N`
//! limits each file to its first N MiB).

use std::path::PathBuf;

use bulk::bench::{self, General};
use bulk::open_codec;
use datafiles::corpus::data_files_of;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let fix = |p: PathBuf| {
        if p.exists() {
            p
        } else {
            PathBuf::from("..").join(p)
        }
    };
    let model = fix(PathBuf::from(
        args.first().map_or("models/default", String::as_str),
    ));
    let corpus = fix(PathBuf::from(
        args.get(1).map_or("../shared/corpus", String::as_str),
    ));
    let algos = args.get(2).map_or("mpc,magbdi,dpc", String::as_str);
    let limit = std::env::var("MPC_BENCH_MIB")
        .ok()
        .and_then(|v| v.parse::<usize>().ok());
    let mut data = Vec::new();
    for f in data_files_of(&corpus)? {
        let mut d = std::fs::read(&f)?;
        if let Some(m) = limit {
            d.truncate(m << 20);
        }
        data.push(d);
    }
    let pool = rayon::ThreadPoolBuilder::new().build()?;
    let threads = pool.current_num_threads();
    let mb: f64 = data.iter().map(|d| d.len() as f64).sum::<f64>() / 1e6;
    println!(
        "{} files from {}, {mb:.1} MB, model {}, {threads} threads",
        data.len(),
        corpus.display(),
        model.display()
    );
    let mut rows = Vec::new();
    for algo in algos.split(',') {
        let c = open_codec(algo, Some(&model), None)?;
        rows.push(bench::run(&bench::Bulk(c.as_ref()), &data, &pool)?);
    }
    rows.push(bench::run(&General::Lz4, &data, &pool)?);
    rows.push(bench::run(&General::Zstd(1), &data, &pool)?);
    rows.push(bench::run(&General::Zstd(3), &data, &pool)?);
    print!("{}", bench::render(&rows, threads));
    Ok(())
}
