//! The stream loops' device path (`Engine::Gpu` with a `WindowCoder`),
//! driven by a device that codes windows with the CPU chunk coder: the
//! containers must equal the CPU engines' byte for byte, chunks the device
//! reports malformed must be decoded (and named) by the CPU, and a missing
//! device is a clear error.

use std::io::Cursor;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use bulk::chunk::{decode_chunk, ChunkEncoder, ChunkPos, StoredChunk};
use bulk::format::Header;
use bulk::{
    compress, compress_with, decompress, decompress_with, open_codec, BulkCodec, BulkError,
    CompressOptions, Engine, WindowChunk, WindowCoder,
};

fn model() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../models/default")
}

/// Codes windows on the CPU; refuses (leaves undecoded) every chunk whose
/// index in the window is in `refuse`, and counts windows.
struct CpuDevice<'a> {
    codec: &'a dyn BulkCodec,
    refuse: Vec<usize>,
    windows: AtomicUsize,
    max_window: u64,
}

impl WindowCoder for CpuDevice<'_> {
    fn compress_window(
        &self,
        h: &Header,
        data: &[u8],
        stored: &mut [Vec<u8>],
        bits: &mut [u32],
    ) -> Result<(), BulkError> {
        self.windows.fetch_add(1, Ordering::Relaxed);
        let cb = h.block_bytes as usize * h.chunk_blocks as usize;
        for (k, d) in data.chunks(cb).enumerate() {
            let mut enc = ChunkEncoder::default();
            bits[k] = enc.encode(self.codec, d, h.len_width, h.group_blocks());
            stored[k] = enc.sink.bytes().to_vec();
        }
        Ok(())
    }
    fn decompress_window(
        &self,
        h: &Header,
        chunks: &mut [WindowChunk<'_>],
    ) -> Result<(), BulkError> {
        self.windows.fetch_add(1, Ordering::Relaxed);
        for (k, c) in chunks.iter_mut().enumerate() {
            if self.refuse.contains(&k) {
                c.decoded = false;
                continue;
            }
            let s = StoredChunk {
                padded: c.padded,
                bits: c.bits as usize,
                blocks: c.blocks as usize,
            };
            let pos = ChunkPos {
                chunk: 0,
                first_block: 0,
            };
            c.decoded =
                decode_chunk(self.codec, h.len_width, h.group_blocks(), &s, pos, c.out).is_ok();
        }
        Ok(())
    }
    fn max_window_bytes(&self) -> u64 {
        self.max_window
    }
}

fn data(n: usize) -> Vec<u8> {
    let mut x = 0x9e37_79b9u32;
    (0..n)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            if i % 96 < 64 {
                (i / 8) as u8
            } else {
                x as u8
            }
        })
        .collect()
}

#[test]
fn device_path_equals_the_cpu_engines() {
    for algo in ["mpc", "magbdi", "dpc"] {
        let codec = open_codec(algo, Some(&model()), None).expect(algo);
        let input = data(200_003);
        let opts = |engine| CompressOptions {
            chunk_blocks: 16,
            group_blocks: None,
            engine,
            window: 5,
            original_len: Some(input.len() as u64),
        };
        let mut cpu = Vec::new();
        compress(
            codec.as_ref(),
            Cursor::new(&input),
            &mut cpu,
            &opts(Engine::Parallel),
            &|_| {},
        )
        .expect("cpu");
        // a device whose windows hold 3 chunks at most: the window shrinks to it
        let dev = CpuDevice {
            codec: codec.as_ref(),
            refuse: vec![],
            windows: AtomicUsize::new(0),
            max_window: 3 * 16 * codec.block_bytes() as u64,
        };
        let mut gpu = Vec::new();
        compress_with(
            codec.as_ref(),
            Cursor::new(&input),
            &mut gpu,
            &opts(Engine::Gpu),
            Some(&dev),
            &|_| {},
        )
        .expect("device");
        assert_eq!(cpu, gpu, "{algo}: containers differ");
        let chunks = input.len().div_ceil(16 * codec.block_bytes());
        assert_eq!(
            dev.windows.load(Ordering::Relaxed),
            chunks.div_ceil(3),
            "{algo}: windows"
        );
        let mut out = Vec::new();
        decompress_with(
            codec.as_ref(),
            Cursor::new(&gpu),
            &mut out,
            Engine::Gpu,
            4,
            Some(&dev),
            &|_| {},
        )
        .expect("device decompress");
        assert_eq!(out, input, "{algo}");
    }
}

#[test]
fn chunks_the_device_refuses_are_decoded_and_named_by_the_cpu() {
    let codec = open_codec("mpc", Some(&model()), None).expect("mpc");
    let input = data(100_000);
    let opts = CompressOptions {
        chunk_blocks: 32,
        group_blocks: None,
        engine: Engine::Single,
        window: 4,
        original_len: Some(input.len() as u64),
    };
    let mut packed = Vec::new();
    compress(
        codec.as_ref(),
        Cursor::new(&input),
        &mut packed,
        &opts,
        &|_| {},
    )
    .expect("pack");
    let dev = CpuDevice {
        codec: codec.as_ref(),
        refuse: vec![0, 2],
        windows: AtomicUsize::new(0),
        max_window: 1 << 30,
    };
    let mut out = Vec::new();
    decompress_with(
        codec.as_ref(),
        Cursor::new(&packed),
        &mut out,
        Engine::Gpu,
        4,
        Some(&dev),
        &|_| {},
    )
    .expect("refused chunks decode on the CPU");
    assert_eq!(out, input);
    // a block that does not decode: the same named error on both paths
    // (flip payload bits of chunk 5 and fix its CRCs so only the code is wrong)
    let mut bad = packed.clone();
    let mut at = bulk::format::HEADER_BYTES;
    for _ in 0..5 {
        let s = u32::from_le_bytes(bad[at + 4..at + 8].try_into().unwrap()) as usize;
        at += 20 + s;
    }
    let s = u32::from_le_bytes(bad[at + 4..at + 8].try_into().unwrap()) as usize;
    for b in &mut bad[at + 20..at + 20 + s / 2] {
        *b = 0xff;
    }
    let crc = bulk::format::crc32(&[&bad[at..at + 16], &bad[at + 20..at + 20 + s]]);
    bad[at + 16..at + 20].copy_from_slice(&crc.to_le_bytes());
    let e_cpu = decompress(
        codec.as_ref(),
        Cursor::new(&bad),
        Vec::new(),
        Engine::Single,
        4,
        &|_| {},
    )
    .unwrap_err()
    .to_string();
    let dev = CpuDevice {
        codec: codec.as_ref(),
        refuse: vec![],
        windows: AtomicUsize::new(0),
        max_window: 1 << 30,
    };
    let e_dev = decompress_with(
        codec.as_ref(),
        Cursor::new(&bad),
        Vec::new(),
        Engine::Gpu,
        4,
        Some(&dev),
        &|_| {},
    )
    .unwrap_err()
    .to_string();
    assert!(e_cpu.starts_with("chunk 5"), "{e_cpu}");
    assert_eq!(e_cpu, e_dev);
}

#[test]
fn the_device_engine_without_a_device_is_a_clear_error() {
    let codec = open_codec("mpc", Some(&model()), None).expect("mpc");
    let opts = CompressOptions {
        engine: Engine::Gpu,
        ..CompressOptions::default()
    };
    let e = compress(
        codec.as_ref(),
        Cursor::new(&[1u8; 64]),
        Vec::new(),
        &opts,
        &|_| {},
    )
    .unwrap_err();
    assert!(e.to_string().contains("no GPU device"), "{e}");
}
