//! Bulk codec: round trips over every corpus file with every algorithm,
//! random access to single blocks, and corrupted / truncated containers.

use std::io::Cursor;
use std::path::{Path, PathBuf};

use bulk::format::{FRAME_BYTES, HEADER_BYTES};
use bulk::{
    compress, decompress, open_codec, BlockReader, BulkCodec, BulkError, CompressOptions, Engine,
    ALGOS,
};
use datafiles::corpus::data_files_of;

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
        group_blocks: None,
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
    let files = data_files_of(&corpus).unwrap_or_default();
    assert!(
        !files.is_empty(),
        "no corpus files at {}: this test needs the shared corpus beside the repository",
        corpus.display()
    );
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
                        group_blocks: None,
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
        group_blocks: None,
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

fn pack_groups(
    codec: &dyn BulkCodec,
    data: &[u8],
    chunk_blocks: u32,
    groups: Option<u32>,
) -> Result<Vec<u8>, BulkError> {
    let mut out = Vec::new();
    let opts = CompressOptions {
        chunk_blocks,
        group_blocks: groups,
        engine: Engine::Parallel,
        window: 3,
        original_len: Some(data.len() as u64),
    };
    compress(codec, Cursor::new(data), &mut out, &opts, &|_| {})?;
    Ok(out)
}

/// MPC containers with and without the group length table (versions 2
/// and 1): every group size, chunks that are not a whole number of
/// groups, random access, and the table's cost.
#[test]
fn mpc_group_tables_round_trip() {
    let codec = open_codec("mpc", Some(&model()), None).expect("mpc");
    let data = sample();
    let v1 = pack_groups(codec.as_ref(), &data, 50, Some(0)).expect("v1");
    assert_eq!(u16::from_le_bytes([v1[8], v1[9]]), 1, "no table: version 1");
    for g in [1u32, 2, 4, 32, 64, 256] {
        for cb in [1u32, 7, 50, 300] {
            let packed = pack_groups(codec.as_ref(), &data, cb, Some(g)).expect("pack");
            assert_eq!(
                u16::from_le_bytes([packed[8], packed[9]]),
                2,
                "group table: version 2"
            );
            assert_eq!(packed[77], g.trailing_zeros() as u8);
            for engine in [Engine::Single, Engine::Parallel] {
                assert_eq!(
                    unpack(codec.as_ref(), &packed, engine).expect("unpack"),
                    data,
                    "groups {g}, chunks {cb}"
                );
            }
            let mut r = BlockReader::open(Cursor::new(&packed)).expect("open");
            for i in [0u64, 1, 31, 32, 33, r.blocks() - 1] {
                let b = r.read_block(codec.as_ref(), i).expect("block");
                let at = i as usize * 32;
                let want = data[at..(at + 32).min(data.len())].to_vec();
                assert_eq!(b, want, "groups {g}, chunks {cb}, block {i}");
            }
            if g == 32 && cb == 300 {
                let v1b = pack_groups(codec.as_ref(), &data, cb, Some(0)).expect("v1");
                let extra = packed.len() as f64 / v1b.len() as f64 - 1.0;
                assert!(extra > 0.0 && extra < 0.01, "group table costs {extra}");
            }
        }
    }
    // the default is a group table of 32 blocks
    let d = pack(codec.as_ref(), &data, Engine::Single, 64, true);
    assert_eq!(d[77], 5);
}

#[test]
fn group_table_options_are_checked() {
    let mpc = open_codec("mpc", Some(&model()), None).expect("mpc");
    for g in [3u32, 48, 512] {
        let e = pack_groups(mpc.as_ref(), &sample(), 64, Some(g))
            .unwrap_err()
            .to_string();
        assert!(e.contains("power of two"), "{e}");
    }
    let dpc = open_codec("dpc", None, None).expect("dpc");
    let e = pack_groups(dpc.as_ref(), &sample(), 64, Some(4))
        .unwrap_err()
        .to_string();
    assert!(e.contains("length per block"), "{e}");
}

/// A group field that disagrees with its blocks is named against its
/// chunk, streaming and random access alike (the frame CRC is recomputed
/// so that only the table is wrong).
#[test]
fn wrong_group_field_is_a_chunk_error() {
    let codec = open_codec("mpc", Some(&model()), None).expect("mpc");
    let data = sample();
    let packed = pack_groups(codec.as_ref(), &data, 64, Some(8)).expect("pack");
    // chunk 1: flip the last bit of its first group field
    let w = packed[76] as usize;
    let k1 = {
        let s0 = u32::from_le_bytes(
            packed[HEADER_BYTES + 4..HEADER_BYTES + 8]
                .try_into()
                .unwrap(),
        ) as usize;
        HEADER_BYTES + FRAME_BYTES + s0
    };
    let mut bad = packed.clone();
    let bit = w - 1;
    bad[k1 + FRAME_BYTES + bit / 8] ^= 0x80 >> (bit % 8);
    let s1 = u32::from_le_bytes(bad[k1 + 4..k1 + 8].try_into().unwrap()) as usize;
    let crc = bulk::format::crc32(&[
        &bad[k1..k1 + 16],
        &bad[k1 + FRAME_BYTES..k1 + FRAME_BYTES + s1],
    ]);
    bad[k1 + 16..k1 + 20].copy_from_slice(&crc.to_le_bytes());
    // the index entry carries the frame CRC too
    let trailer = bad.len() - 32;
    let idx = u64::from_le_bytes(bad[trailer..trailer + 8].try_into().unwrap()) as usize;
    let e1 = idx + 20 + 16 + 12;
    bad[e1..e1 + 4].copy_from_slice(&crc.to_le_bytes());
    let icrc_at =
        idx + 20 + 16 * u64::from_le_bytes(bad[idx + 4..idx + 12].try_into().unwrap()) as usize;
    let icrc = bulk::format::crc32(&[&bad[idx..icrc_at]]);
    bad[icrc_at..icrc_at + 4].copy_from_slice(&icrc.to_le_bytes());
    let e = unpack(codec.as_ref(), &bad, Engine::Single)
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("chunk 1"), "{e}");
    let mut r = BlockReader::open(Cursor::new(&bad)).expect("open");
    let e2 = r.read_block(codec.as_ref(), 64).unwrap_err().to_string();
    assert_eq!(e, e2);
}
