//! Bulk codec: round trips over every corpus file with every algorithm,
//! random access to single blocks, and corrupted / truncated containers.

use std::io::Cursor;
use std::path::{Path, PathBuf};

use golden::bulk::bench::corpus_files;
use golden::bulk::format::{FRAME_BYTES, HEADER_BYTES};
use golden::bulk::{
    compress, decompress, open_codec, BlockReader, BulkCodec, BulkError, CompressOptions, Engine,
    ALGOS,
};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn model() -> PathBuf {
    root().join("models/default")
}

fn codecs() -> Vec<Box<dyn BulkCodec>> {
    ALGOS
        .iter()
        .map(|a| open_codec(a, Some(&model()), None).expect(a))
        .collect()
}

fn pack(
    codec: &dyn BulkCodec,
    data: &[u8],
    engine: Engine,
    chunk_blocks: u32,
    known: bool,
) -> Vec<u8> {
    let mut out = Vec::new();
    let opts = CompressOptions {
        chunk_blocks,
        engine,
        window: 3,
        original_len: known.then_some(data.len() as u64),
    };
    compress(codec, Cursor::new(data), &mut out, &opts, &|_| {}).expect("compress");
    out
}

fn unpack(codec: &dyn BulkCodec, packed: &[u8], engine: Engine) -> Result<Vec<u8>, BulkError> {
    let mut out = Vec::new();
    decompress(codec, Cursor::new(packed), &mut out, engine, 3, &|_| {})?;
    Ok(out)
}

/// A prefix of every corpus file (ragged length: the last block is
/// partial) through every algorithm, single and parallel, with random
/// access to a few blocks.
#[test]
fn every_corpus_file_every_algorithm() {
    let corpus = root().join("../shared/corpus");
    let files = corpus_files(&corpus).unwrap_or_default();
    if files.is_empty() {
        eprintln!("no corpus at {}; skipped", corpus.display());
        return;
    }
    let codecs = codecs();
    for f in &files {
        let all = std::fs::read(f).expect("read corpus file");
        // a slice from the middle of the file, 12 KiB + 5 bytes
        let start = (all.len() / 2) & !127;
        let data = &all[start..(start + 12_293).min(all.len())];
        for c in &codecs {
            let what = format!("{} on {}", c.algo(), f.display());
            let a = pack(c.as_ref(), data, Engine::Single, 16, true);
            let b = pack(c.as_ref(), data, Engine::Parallel, 16, false);
            assert_eq!(
                unpack(c.as_ref(), &a, Engine::Parallel).expect(&what),
                data,
                "{what}"
            );
            assert_eq!(
                unpack(c.as_ref(), &b, Engine::Single).expect(&what),
                data,
                "{what}"
            );
            let mut r = BlockReader::open(Cursor::new(&a)).expect(&what);
            let bb = c.block_bytes();
            let n = r.blocks();
            assert_eq!(n as usize, data.len().div_ceil(bb));
            for i in [0, 1, n / 2, n - 2, n - 1] {
                let got = r.read_block(c.as_ref(), i).expect(&what);
                let s = i as usize * bb;
                assert_eq!(got, &data[s..(s + bb).min(data.len())], "{what}: block {i}");
            }
            assert!(matches!(
                r.read_block(c.as_ref(), n),
                Err(BulkError::BlockOutOfRange { .. })
            ));
        }
    }
}

fn sample() -> Vec<u8> {
    // words with small deltas, some zero blocks, some noise
    let mut v = Vec::new();
    let mut x = 0x1234_5678u32;
    for i in 0..1500u32 {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        let w = match i % 7 {
            0..=3 => 1000 + i,
            4 => 0,
            _ => x,
        };
        v.extend_from_slice(&w.to_le_bytes());
    }
    v.truncate(5999);
    v
}

#[test]
fn empty_and_tiny_inputs() {
    for c in codecs() {
        for len in [0usize, 1, 31, 32, 33] {
            let data: Vec<u8> = (0..len as u8).collect();
            let p = pack(c.as_ref(), &data, Engine::Parallel, 4, true);
            assert_eq!(unpack(c.as_ref(), &p, Engine::Single).unwrap(), data);
            let r = BlockReader::open(Cursor::new(&p)).unwrap();
            assert_eq!(r.blocks() as usize, len.div_ceil(c.block_bytes()));
        }
    }
}

/// Inputs that end exactly at, just before and just after a window
/// boundary, with windows of 1 to 3 chunks, on both engines: the pipeline
/// of coding, writing and reading windows loses and repeats nothing.
#[test]
fn window_boundaries() {
    let c = open_codec("mpc", Some(&model()), None).expect("mpc");
    let chunk = 4 * 32;
    for window in 1..=3usize {
        for windows in 0..=3usize {
            for delta in [-1i64, 0, 1] {
                let len = (windows * window * chunk) as i64 + delta;
                if len < 0 {
                    continue;
                }
                let data: Vec<u8> = (0..len as u32).map(|i| (i / 7) as u8).collect();
                for engine in [Engine::Single, Engine::Parallel] {
                    let opts = CompressOptions {
                        chunk_blocks: 4,
                        engine,
                        window,
                        original_len: None,
                    };
                    let mut p = Vec::new();
                    compress(c.as_ref(), Cursor::new(&data), &mut p, &opts, &|_| {})
                        .expect("compress");
                    let mut out = Vec::new();
                    decompress(
                        c.as_ref(),
                        Cursor::new(&p),
                        &mut out,
                        engine,
                        window,
                        &|_| {},
                    )
                    .expect("decompress");
                    assert_eq!(out, data, "len {len} window {window} {engine:?}");
                }
            }
        }
    }
}

/// Chunks whose bit count could overflow the frame's 32-bit field are
/// refused before anything is written.
#[test]
fn oversized_chunks_are_a_clear_error() {
    let c = open_codec("mpc", Some(&model()), None).expect("mpc");
    let opts = CompressOptions {
        chunk_blocks: u32::MAX / 64,
        engine: Engine::Single,
        window: 1,
        original_len: None,
    };
    let mut out = Vec::new();
    let e = compress(
        c.as_ref(),
        Cursor::new(&[0u8; 64][..]),
        &mut out,
        &opts,
        &|_| {},
    )
    .unwrap_err();
    assert!(matches!(e, BulkError::Config(_)), "{e}");
    assert!(e.to_string().contains("at most 16777216 bytes"), "{e}");
    assert!(out.is_empty());
}

/// Flip one byte anywhere: decompression fails (never wrong data); inside a
/// chunk the error names that chunk.
#[test]
fn corrupt_any_byte() {
    let data = sample();
    for algo in ["mpc", "bdi"] {
        let c = open_codec(algo, Some(&model()), None).unwrap();
        let p = pack(c.as_ref(), &data, Engine::Single, 32, true);
        let r = BlockReader::open(Cursor::new(&p)).unwrap();
        let entries = r.entries.clone();
        assert!(entries.len() >= 4);
        for at in 0..p.len() {
            let mut bad = p.clone();
            bad[at] ^= 0x5a;
            let e = unpack(c.as_ref(), &bad, Engine::Single)
                .expect_err(&format!("{algo}: flip at {at} went unnoticed"));
            let owner = entries.iter().position(|e| {
                at as u64 >= e.offset
                    && (at as u64) < e.offset + FRAME_BYTES as u64 + e.stored as u64
            });
            if let Some(k) = owner {
                let msg = e.to_string();
                assert!(
                    msg.contains(&format!("chunk {k}")),
                    "{algo}: flip at {at} (chunk {k}): {msg}"
                );
            }
            // random access into the corrupted chunk also names it
            if let Some(k) = owner {
                if at >= entries[k].offset as usize + FRAME_BYTES {
                    let mut rr = BlockReader::open(Cursor::new(&bad)).unwrap();
                    let blk = k as u64 * 32;
                    let e = rr.read_block(c.as_ref(), blk).unwrap_err();
                    assert!(e.to_string().contains(&format!("chunk {k}")), "{e}");
                }
            }
        }
    }
}

#[test]
fn one_corrupt_chunk_named() {
    let data = sample();
    let c = open_codec("mpc", Some(&model()), None).unwrap();
    let p = pack(c.as_ref(), &data, Engine::Parallel, 32, true);
    let r = BlockReader::open(Cursor::new(&p)).unwrap();
    let e2 = r.entries[2];
    let mut bad = p.clone();
    bad[e2.offset as usize + FRAME_BYTES + e2.stored as usize / 2] ^= 1;
    let e = unpack(c.as_ref(), &bad, Engine::Parallel).unwrap_err();
    assert!(matches!(e, BulkError::ChunkCorrupt { chunk: 2, .. }), "{e}");
    assert_eq!(e.to_string(), "chunk 2: checksum mismatch");
}

/// Cut the container anywhere: a clear error, naming the chunk when the
/// cut is inside one.
#[test]
fn truncated_anywhere() {
    let data = sample();
    let c = open_codec("mpc", Some(&model()), None).unwrap();
    let p = pack(c.as_ref(), &data, Engine::Single, 32, true);
    let r = BlockReader::open(Cursor::new(&p)).unwrap();
    for cut in 0..p.len() {
        let e = unpack(c.as_ref(), &p[..cut], Engine::Single)
            .expect_err(&format!("cut at {cut} went unnoticed"));
        if cut > HEADER_BYTES {
            if let Some(k) = r.entries.iter().position(|e| {
                cut as u64 > e.offset
                    && (cut as u64) <= e.offset + FRAME_BYTES as u64 + e.stored as u64
            }) {
                if cut as u64
                    != r.entries[k].offset + FRAME_BYTES as u64 + r.entries[k].stored as u64
                {
                    assert!(
                        matches!(e, BulkError::ChunkTruncated { chunk, .. } if chunk == k as u64),
                        "cut at {cut}: {e}"
                    );
                }
            }
        }
        assert!(BlockReader::open(Cursor::new(&p[..cut])).is_err());
    }
}

#[test]
fn other_model_set_fails_on_the_hash() {
    let data = sample();
    let c = open_codec("mpc", Some(&model()), None).unwrap();
    let p = pack(c.as_ref(), &data, Engine::Single, 32, true);
    let other = open_codec("mpc", Some(&root().join("models/example")), None).unwrap();
    let e = unpack(other.as_ref(), &p, Engine::Single).unwrap_err();
    assert!(matches!(e, BulkError::IdentityMismatch { .. }), "{e}");
    let mut r = BlockReader::open(Cursor::new(&p)).unwrap();
    assert!(matches!(
        r.read_block(other.as_ref(), 0),
        Err(BulkError::IdentityMismatch { .. })
    ));
    let bdi = open_codec("bdi", None, None).unwrap();
    assert!(matches!(
        unpack(bdi.as_ref(), &p, Engine::Single),
        Err(BulkError::AlgoMismatch { .. })
    ));
}

#[test]
fn unknown_algorithm_is_an_error() {
    assert!(matches!(
        open_codec("nope", None, None),
        Err(BulkError::UnknownAlgo { .. })
    ));
    assert!(matches!(
        open_codec("mpc", None, None),
        Err(BulkError::Config(_))
    ));
}
