//! The GPU engine on every corpus file with every codec that has GPU
//! kernels (MPC with `models/default`, MAG-aware BDI, DPC): containers
//! identical to the CPU engines' and cross-decoding both ways. A slice of
//! each file (its start and its middle, 384 KiB in all, ending inside a
//! block) keeps the run short on a software adapter; windows of a few
//! chunks put window and part boundaries inside every slice.

#![cfg(feature = "gpu")]

#[path = "../../golden/tests/common/mod.rs"]
mod common;

use std::io::Cursor;
use std::path::PathBuf;

use bulk::gpu::device::test_gpu;
use bulk::gpu::{open_engine, GpuEngine};
use bulk::{compress_with, decompress_with, open_codec, BulkCodec, CompressOptions, Engine};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// 256 KiB from the start and 128 KiB less 5 bytes from the middle.
fn slice(data: &[u8]) -> Vec<u8> {
    let mut v = data[..data.len().min(256 << 10)].to_vec();
    let mid = data.len() / 2;
    v.extend_from_slice(&data[mid..(mid + (128 << 10) - 5).min(data.len())]);
    v
}

fn pack(codec: &dyn BulkCodec, input: &[u8], dev: Option<&GpuEngine>) -> Vec<u8> {
    let opts = CompressOptions {
        chunk_blocks: 256,
        engine: if dev.is_some() {
            Engine::Gpu
        } else {
            Engine::Parallel
        },
        window: 3,
        original_len: Some(input.len() as u64),
        ..CompressOptions::default()
    };
    let mut out = Vec::new();
    compress_with(
        codec,
        Cursor::new(input),
        &mut out,
        &opts,
        dev.map(|d| d as _),
        &|_| {},
    )
    .expect("compress");
    out
}

fn unpack(codec: &dyn BulkCodec, packed: &[u8], dev: Option<&GpuEngine>) -> Vec<u8> {
    let engine = if dev.is_some() {
        Engine::Gpu
    } else {
        Engine::Parallel
    };
    let mut out = Vec::new();
    decompress_with(
        codec,
        Cursor::new(packed),
        &mut out,
        engine,
        3,
        dev.map(|d| d as _),
        &|_| {},
    )
    .expect("decompress");
    out
}

#[test]
fn every_corpus_file_gives_the_cpu_container_on_the_gpu() {
    if test_gpu().is_none() {
        return;
    }
    let files = common::corpus_bin_files();
    assert!(files.len() >= 8, "only {} corpus files", files.len());
    let model = root().join("models/default");
    for algo in ["mpc", "magbdi", "dpc"] {
        let codec = open_codec(algo, Some(&model), None).expect("codec");
        let dev = open_engine(codec.as_ref(), None).expect("GPU engine");
        // one chunk a part, three parts a window: the pipeline runs
        // within every slice
        dev.set_part_bytes(codec.block_bytes() * 256);
        for f in &files {
            let data = std::fs::read(f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            let input = slice(&data);
            let cpu = pack(codec.as_ref(), &input, None);
            let gpu = pack(codec.as_ref(), &input, Some(&dev));
            assert!(
                cpu == gpu,
                "{algo}, {}: the GPU container differs from the CPU engines' ({} vs {} bytes)",
                f.display(),
                gpu.len(),
                cpu.len()
            );
            assert!(
                unpack(codec.as_ref(), &cpu, Some(&dev)) == input,
                "{algo}, {}: GPU decoding of the CPU container",
                f.display()
            );
            assert!(
                unpack(codec.as_ref(), &gpu, None) == input,
                "{algo}, {}: CPU decoding of the GPU container",
                f.display()
            );
        }
    }
}
