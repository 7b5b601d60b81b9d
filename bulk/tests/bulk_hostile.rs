//! The bulk codec and its CLI under hostile and careless input: output
//! over input, failed commands, spliced and crafted containers (with the
//! peak memory of decoding them), block sizes the writer accepts, flag
//! limits, and the small messages.

use std::io::Cursor;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use bulk::bits::BitSink;
use bulk::format::{
    crc32, parse_index, Frame, Header, FRAME_BYTES, HEADER_BYTES, INDEX_HEAD_BYTES, INDEX_MARKER,
    TRAILER_BYTES,
};
use bulk::{
    compress, decompress, open_codec, BlockReader, BulkCodec, BulkError, CompressOptions, Engine,
    ALGOS,
};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn model() -> PathBuf {
    root().join("models/default")
}

fn mpc_bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_mpc"));
    c.env_remove("RUST_BACKTRACE")
        .env("MPCGEN_CALIBRATION", "/nonexistent/calibration.toml")
        .current_dir(root());
    c
}

/// A scratch directory removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let d = std::env::temp_dir().join(format!("mpcgen-hostile-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Scratch(d)
    }
    fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
    /// File names in the directory, sorted.
    fn names(&self) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(&self.0)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Structured words, zero runs and noise: every codec compresses some of
/// it and escapes the rest.
fn sample(len: usize) -> Vec<u8> {
    let mut v = Vec::with_capacity(len + 4);
    let mut x = 0x9e37_79b9u32;
    let mut i = 0u32;
    while v.len() < len {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        let w = match (i / 8) % 5 {
            0 | 1 => 5000 + 3 * i,
            2 => 0,
            3 => x,
            _ => 0x3f80_0000 | (x & 0xff),
        };
        v.extend_from_slice(&w.to_le_bytes());
        i += 1;
    }
    v.truncate(len);
    v
}

fn pack(codec: &dyn BulkCodec, data: &[u8], chunk_blocks: u32) -> Vec<u8> {
    let mut out = Vec::new();
    let opts = CompressOptions {
        chunk_blocks,
        group_blocks: None,
        engine: Engine::Single,
        window: 2,
        original_len: Some(data.len() as u64),
    };
    compress(codec, Cursor::new(data), &mut out, &opts, &|_| {}).expect("compress");
    out
}

fn unpack(codec: &dyn BulkCodec, packed: &[u8]) -> Result<Vec<u8>, BulkError> {
    let mut out = Vec::new();
    decompress(
        codec,
        Cursor::new(packed),
        &mut out,
        Engine::Parallel,
        2,
        &|_| {},
    )?;
    Ok(out)
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn fails_with(o: &Output, needle: &str) {
    assert!(!o.status.success(), "exit 0: {}", text(o));
    assert!(text(o).contains(needle), "no `{needle}` in: {}", text(o));
    assert!(!text(o).contains("panicked"), "{}", text(o));
}

// ---------------------------------------------------------------- output

#[test]
fn compress_over_its_input_is_refused_and_the_input_kept() {
    let s = Scratch::new("over-c");
    let data = sample(100_000);
    let x = s.path("x.bin");
    std::fs::write(&x, &data).unwrap();
    std::os::unix::fs::symlink("x.bin", s.path("soft")).unwrap();
    std::fs::hard_link(&x, s.path("hard")).unwrap();
    for out in ["x.bin", "soft", "hard", "./x.bin"] {
        let o = mpc_bin()
            .args(["compress", "-q", "--force", "-o"])
            .arg(s.0.join(out))
            .arg(&x)
            .output()
            .unwrap();
        fails_with(&o, "it is the input file");
        assert_eq!(
            std::fs::read(&x).unwrap(),
            data,
            "input damaged by -o {out}"
        );
    }
    assert_eq!(s.names(), ["hard", "soft", "x.bin"]);
}

#[test]
fn decompress_over_its_input_is_refused_and_the_container_kept() {
    let s = Scratch::new("over-d");
    let x = s.path("x.bin");
    std::fs::write(&x, sample(50_000)).unwrap();
    let o = mpc_bin().args(["compress", "-q"]).arg(&x).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let gz = s.path("x.bin.gmcz");
    let packed = std::fs::read(&gz).unwrap();
    let o = mpc_bin()
        .args(["decompress", "-q", "--force", "-o"])
        .arg(&gz)
        .arg(&gz)
        .output()
        .unwrap();
    fails_with(&o, "it is the input file");
    assert_eq!(std::fs::read(&gz).unwrap(), packed);
    // and --force over another existing file works, replacing it whole
    std::fs::write(s.path("old"), vec![7u8; 1 << 20]).unwrap();
    let o = mpc_bin()
        .args(["decompress", "-q", "--force", "-o"])
        .arg(s.path("old"))
        .arg(&gz)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(std::fs::read(s.path("old")).unwrap(), sample(50_000));
}

/// A command that fails leaves nothing at its output path (and no
/// temporary file), so the next run needs no --force.
#[test]
fn failed_commands_leave_nothing_behind() {
    let s = Scratch::new("failed");
    let x = s.path("x.bin");
    std::fs::write(&x, sample(200_000)).unwrap();
    let o = mpc_bin()
        .args(["compress", "-q", "--chunk-blocks", "64", "-o"])
        .arg(s.path("x.gmcz"))
        .arg(&x)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let mut bad = std::fs::read(s.path("x.gmcz")).unwrap();
    // a payload byte of the 50th chunk: the first 49 chunks decode and are
    // written before the error
    let at = bad.len() * 50 / 98;
    bad[at] ^= 0x10;
    std::fs::write(s.path("bad.gmcz"), &bad).unwrap();
    let o = mpc_bin()
        .args(["decompress", "-q", "--window", "1", "-o"])
        .arg(s.path("out.bin"))
        .arg(s.path("bad.gmcz"))
        .output()
        .unwrap();
    fails_with(&o, "chunk");
    // a model set that does not match: fails before any data
    let o = mpc_bin()
        .args(["decompress", "-q", "-m", "models/int32", "-o"])
        .arg(s.path("out.bin"))
        .arg(s.path("x.gmcz"))
        .output()
        .unwrap();
    fails_with(&o, "model-set hash mismatch");
    // compressing a directory
    let o = mpc_bin()
        .args(["compress", "-q", "-o"])
        .arg(s.path("dir.gmcz"))
        .arg(&s.0)
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert_eq!(s.names(), ["bad.gmcz", "x.bin", "x.gmcz"]);
}

// ------------------------------------------------------- random access

/// The header of a container of the same file made with another chunk
/// size, spliced onto this one: the chunk count agrees, the block counts do
/// not. Random access must reject it as streaming does, never return a
/// block of the wrong chunk.
#[test]
fn spliced_header_is_rejected_by_random_access() {
    let c = open_codec("mpc", Some(&model()), None).unwrap();
    let data = sample(1000 * 32);
    let a = pack(c.as_ref(), &data, 600); // chunks of 600 + 400 blocks
    let b = pack(c.as_ref(), &data, 700); // 700 + 300
    let mut spliced = b[..HEADER_BYTES].to_vec();
    spliced.extend_from_slice(&a[HEADER_BYTES..]);
    let streaming = unpack(c.as_ref(), &spliced).unwrap_err();
    assert!(
        matches!(streaming, BulkError::ChunkCorrupt { .. }),
        "{streaming}"
    );
    let mut r = BlockReader::open(Cursor::new(&spliced)).unwrap();
    for i in [0u64, 100, 599, 600, 650, 699, 700, 800, 999] {
        let e = r.read_block(c.as_ref(), i).unwrap_err();
        assert!(
            matches!(e, BulkError::ChunkCorrupt { .. }),
            "block {i}: {e}"
        );
    }
    // and through the CLI: an error, not a block with exit 0
    let s = Scratch::new("splice");
    std::fs::write(s.path("s.gmcz"), &spliced).unwrap();
    let o = mpc_bin()
        .args(["get", "--block", "700"])
        .arg(s.path("s.gmcz"))
        .output()
        .unwrap();
    fails_with(&o, "chunk 1");
    assert!(o.stdout.is_empty());
}

/// Random access checks a chunk as streaming does: flip any byte of a
/// chunk's payload and recompute its CRCs (frame and index), so only the
/// decoder can notice; both readers agree on every block.
#[test]
fn random_access_and_streaming_agree_on_tampered_payloads() {
    let data = sample(64 * 32 + 17);
    for algo in ["mpc", "bdi", "magbdi"] {
        let c = open_codec(algo, Some(&model()), None).unwrap();
        let bb = c.block_bytes() as u64;
        let clean = pack(c.as_ref(), &data, 16);
        let r = BlockReader::open(Cursor::new(&clean)).unwrap();
        let entries = r.entries.clone();
        let index_at = entries
            .last()
            .map(|e| e.offset + 20 + e.stored as u64)
            .unwrap() as usize;
        for (k, e) in entries.iter().enumerate() {
            for pick in [0usize, 1, 3] {
                let mut t = clean.clone();
                let start = e.offset as usize + FRAME_BYTES;
                let at = start + (pick * 7) % e.stored as usize;
                t[at] ^= 1 << (pick % 8);
                // frame CRC
                let fb: [u8; FRAME_BYTES] = t[e.offset as usize..start].try_into().unwrap();
                let mut f = Frame::parse(&fb);
                f.crc = f.compute_crc(&t[start..start + e.stored as usize]);
                t[e.offset as usize..start].copy_from_slice(&f.to_bytes());
                // index entry CRC and index CRC
                let ent = index_at + INDEX_HEAD_BYTES + 16 * k + 12;
                t[ent..ent + 4].copy_from_slice(&f.crc.to_le_bytes());
                let icrc = index_at + INDEX_HEAD_BYTES + 16 * entries.len();
                let crc = crc32(&[&t[index_at..icrc]]);
                t[icrc..icrc + 4].copy_from_slice(&crc.to_le_bytes());
                let streamed = unpack(c.as_ref(), &t);
                let mut r = BlockReader::open(Cursor::new(&t)).unwrap();
                for i in 0..r.blocks() {
                    let got = r.read_block(c.as_ref(), i);
                    match (&streamed, got) {
                        (Ok(all), Ok(b)) => {
                            let lo = (i * bb) as usize;
                            let hi = (lo + bb as usize).min(all.len());
                            assert_eq!(&all[lo..hi], &b[..], "{algo} block {i}");
                        }
                        (Err(_), Ok(b)) => {
                            // allowed only outside the tampered chunk
                            assert_ne!(i / 16, k as u64, "{algo}: block {i} read from bad chunk");
                            let lo = (i * bb) as usize;
                            let hi = (lo + bb as usize).min(data.len());
                            assert_eq!(&data[lo..hi], &b[..], "{algo} block {i}");
                        }
                        (Ok(_), Err(e)) => panic!("{algo} block {i}: streaming ok, random {e}"),
                        (Err(_), Err(_)) => {}
                    }
                }
            }
        }
    }
}

// ------------------------------------------------------------ block sizes

/// Every block size each codec accepts round-trips through the container,
/// streaming and random access; sizes the container cannot hold are refused
/// when the codec is opened, before anything is written.
#[test]
fn every_accepted_block_size_round_trips() {
    let mut total = 0;
    for &algo in ALGOS {
        let sizes = bulk::codec::block_sizes(algo);
        assert!(!sizes.is_empty(), "{algo}");
        for &bb in &sizes {
            let c = open_codec(algo, Some(&model()), Some(bb)).expect(algo);
            let data = sample(bb * 9 + bb / 2 + 1);
            let p = pack(c.as_ref(), &data, 4);
            assert_eq!(unpack(c.as_ref(), &p).unwrap(), data, "{algo} {bb}");
            let mut r = BlockReader::open(Cursor::new(&p)).unwrap();
            let last = r.blocks() - 1;
            let b = r.read_block(c.as_ref(), last).unwrap();
            assert_eq!(b, data[(last as usize * bb)..], "{algo} {bb}");
            total += 1;
        }
        for bb in [0usize, 2048, 4096, 1 << 20] {
            assert!(
                open_codec(algo, Some(&model()), Some(bb)).is_err(),
                "{algo} {bb}"
            );
        }
    }
    // 2 each for four baselines, 15 MAG-aware BDI, 32 DPC, 1 MPC
    assert_eq!(total, 8 + 15 + 32 + 1);
}

/// DPC's 544-byte blocks (and every size up to 1024) read back through the
/// CLI.
#[test]
fn dpc_large_blocks_through_the_cli() {
    let s = Scratch::new("dpc");
    let data = sample(40_000);
    std::fs::write(s.path("x.bin"), &data).unwrap();
    for bb in ["544", "1024"] {
        let o = mpc_bin()
            .args([
                "compress",
                "-q",
                "-a",
                "dpc",
                "--force",
                "--block-bytes",
                bb,
                "-o",
            ])
            .arg(s.path("x.gmcz"))
            .arg(s.path("x.bin"))
            .output()
            .unwrap();
        assert!(o.status.success(), "{bb}: {}", text(&o));
        let o = mpc_bin()
            .args(["decompress", "-q", "--force", "-o"])
            .arg(s.path("y.bin"))
            .arg(s.path("x.gmcz"))
            .output()
            .unwrap();
        assert!(o.status.success(), "{bb}: {}", text(&o));
        assert_eq!(std::fs::read(s.path("y.bin")).unwrap(), data);
        let o = mpc_bin()
            .args(["get", "--block", "3"])
            .arg(s.path("x.gmcz"))
            .output()
            .unwrap();
        assert!(o.status.success(), "{bb}: {}", text(&o));
    }
}

/// A codec whose chunk could need more bits than a frame counts is
/// refused before anything is written.
#[test]
fn frame_bit_count_overflow_is_refused() {
    struct Wide;
    impl BulkCodec for Wide {
        fn algo(&self) -> &str {
            "wide"
        }
        fn block_bytes(&self) -> usize {
            1
        }
        fn max_bits(&self) -> usize {
            8000
        }
        fn identity(&self) -> [u8; 32] {
            [0; 32]
        }
        fn compress_block(&self, block: &[u8], sink: &mut BitSink) -> usize {
            sink.put_bits(block, 8);
            8
        }
        fn decompress_block(&self, b: &[u8], _: usize, out: &mut [u8]) -> Result<(), String> {
            out.copy_from_slice(&b[..1]);
            Ok(())
        }
    }
    let mut out = Vec::new();
    let opts = CompressOptions {
        chunk_blocks: 1 << 20,
        group_blocks: None,
        engine: Engine::Single,
        window: 1,
        original_len: None,
    };
    let e = compress(&Wide, Cursor::new(&[1u8; 10][..]), &mut out, &opts, &|_| {}).unwrap_err();
    assert!(e.to_string().contains("fewer blocks per chunk"), "{e}");
    assert!(out.is_empty());
}

// ------------------------------------------------------ crafted containers

fn header_bytes(h: &Header) -> Vec<u8> {
    h.to_bytes().to_vec()
}

fn frame_bytes(chunk: u32, stored: &[u8], bits: u32, blocks: u32) -> Vec<u8> {
    let mut f = Frame {
        chunk,
        stored: stored.len() as u32,
        bits,
        blocks,
        crc: 0,
    };
    f.crc = f.compute_crc(stored);
    let mut v = f.to_bytes().to_vec();
    v.extend_from_slice(stored);
    v
}

/// Crafted containers: headers and frames whose numbers ask for huge
/// buffers, backed by a few bytes.
fn crafted(codec: &dyn BulkCodec) -> Vec<(&'static str, Vec<u8>)> {
    let mut h = Header::parse(&pack(codec, &[0u8; 64], 4)).unwrap();
    let mut v = Vec::new();
    // the largest chunk a header may declare, one frame claiming all its
    // blocks and 16 MiB of stored bytes that are not there
    h.chunk_blocks = (16 << 20) / h.block_bytes;
    let mut c = header_bytes(&h);
    let mut f = Frame {
        chunk: 0,
        stored: 16 << 20,
        bits: (16 << 20) * 8,
        blocks: h.chunk_blocks,
        crc: 0,
    };
    f.crc = f.compute_crc(&[]);
    c.extend_from_slice(&f.to_bytes());
    c.extend_from_slice(&[0u8; 64]);
    v.push(("stored bytes missing", c));
    // many frames each claiming a full chunk from a handful of bits
    let mut c = header_bytes(&h);
    for k in 0..64u32 {
        c.extend_from_slice(&frame_bytes(k, &[0xff; 8], 64, 64));
    }
    v.push(("many frames, few bits", c));
    // a header asking for 2^32 - 1 blocks a chunk (refused at once)
    let mut b = h.to_bytes();
    b[64..68].copy_from_slice(&u32::MAX.to_le_bytes());
    let crc = crc32(&[&b[..80]]);
    b[80..84].copy_from_slice(&crc.to_le_bytes());
    let mut c = b.to_vec();
    c.extend_from_slice(&frame_bytes(0, &[0u8; 40], 320, 200));
    v.push(("2^32-1 blocks a chunk", c));
    // an index that claims 2^60 entries
    let mut c = header_bytes(&h);
    c.extend_from_slice(&INDEX_MARKER.to_le_bytes());
    c.extend_from_slice(&(1u64 << 60).to_le_bytes());
    c.extend_from_slice(&0u64.to_le_bytes());
    v.push(("huge index count", c));
    // a trailer pointing at a huge index
    let mut c = header_bytes(&h);
    c.extend_from_slice(&[0u8; 40]);
    let mut t = [0u8; TRAILER_BYTES];
    t[0..8].copy_from_slice(&(HEADER_BYTES as u64).to_le_bytes());
    t[8..16].copy_from_slice(&(u64::MAX / 8).to_le_bytes());
    t[16..24].copy_from_slice(&u64::MAX.to_le_bytes());
    let crc = crc32(&[&t[..24]]);
    t[24..28].copy_from_slice(&crc.to_le_bytes());
    t[28..32].copy_from_slice(b"GMCE");
    c.extend_from_slice(&t);
    v.push(("huge trailer count", c));
    v
}

#[test]
fn crafted_containers_fail_cleanly_in_the_library() {
    for algo in ["mpc", "dpc"] {
        let codec = open_codec(algo, Some(&model()), None).unwrap();
        for (what, c) in crafted(codec.as_ref()) {
            assert!(unpack(codec.as_ref(), &c).is_err(), "{algo}: {what}");
            if let Ok(mut r) = BlockReader::open(Cursor::new(&c)) {
                assert!(r.read_block(codec.as_ref(), 0).is_err(), "{algo}: {what}");
            }
        }
    }
}

/// Peak resident memory of a child process, in bytes (Linux `wait4`, which
/// also reaps the child).
#[allow(clippy::zombie_processes)]
fn run_measured(mut cmd: Command) -> (Output, u64) {
    let child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id() as libc::pid_t;
    let mut out = child.stdout.unwrap();
    let mut err = child.stderr.unwrap();
    let t_out = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut out, &mut v).unwrap();
        v
    });
    let t_err = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut err, &mut v).unwrap();
        v
    });
    let mut status = 0;
    // SAFETY: plain libc call on our own child's pid with valid pointers.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
    assert_eq!(r, pid);
    let out = Output {
        status: std::os::unix::process::ExitStatusExt::from_raw(status),
        stdout: t_out.join().unwrap(),
        stderr: t_err.join().unwrap(),
    };
    (out, ru.ru_maxrss as u64 * 1024)
}

/// Decoding the crafted containers through the CLI fails with a message
/// and stays under 64 MB of peak memory.
#[test]
fn crafted_containers_cost_little_memory() {
    let s = Scratch::new("crafted");
    let codec = open_codec("mpc", Some(&model()), None).unwrap();
    for (i, (what, c)) in crafted(codec.as_ref()).into_iter().enumerate() {
        let p = s.path(&format!("c{i}.gmcz"));
        std::fs::write(&p, &c).unwrap();
        for sub in ["decompress", "get", "info"] {
            let mut cmd = mpc_bin();
            cmd.arg(sub);
            match sub {
                "decompress" => cmd.args(["-q", "-o"]).arg(s.path("out")),
                "get" => cmd.args(["--block", "0"]),
                _ => &mut cmd,
            };
            cmd.arg(&p);
            let (o, peak) = run_measured(cmd);
            assert!(!o.status.success(), "{what} ({sub}): exit 0");
            assert!(!text(&o).contains("panicked"), "{what}: {}", text(&o));
            assert!(
                !text(&o).contains("memory allocation"),
                "{what}: {}",
                text(&o)
            );
            assert!(peak < 64 << 20, "{what} ({sub}): peak {} MB", peak >> 20);
            assert!(!s.path("out").exists());
        }
    }
}

// ------------------------------------------------------------ parsers

#[test]
fn index_parser_takes_any_slice() {
    for head_len in [0usize, 6, 19, 20, 21] {
        for body_len in [0usize, 3, 4, 20] {
            let head = vec![0xffu8; head_len];
            let body = vec![0u8; body_len];
            assert!(parse_index(&head, &body).is_err());
        }
    }
    // a count whose byte size overflows u64
    let mut head = [0u8; INDEX_HEAD_BYTES];
    head[..4].copy_from_slice(&INDEX_MARKER.to_le_bytes());
    head[4..12].copy_from_slice(&u64::MAX.to_le_bytes());
    assert!(parse_index(&head, &[0u8; 4]).is_err());
    assert!(Header::parse(&[]).is_err());
    assert!(Header::parse(&[0x89, b'G']).is_err());
}

// ------------------------------------------------------- flags, messages

#[test]
fn flags_out_of_range_are_clear_errors() {
    let s = Scratch::new("flags");
    std::fs::write(s.path("x.bin"), sample(10_000)).unwrap();
    let x = s.path("x.bin");
    let cases: &[(&[&str], &str)] = &[
        (&["compress", "--window", "100000000"], "--window"),
        (&["compress", "-j", "100000"], "--threads"),
        (&["compress", "-j", "0"], "--threads"),
        (&["compress", "--chunk-blocks", "0"], "--chunk-blocks"),
        (
            &["compress", "--chunk-blocks", "4294967295"],
            "--chunk-blocks",
        ),
        (
            &["compress", "-a", "dpc", "--block-bytes", "2048"],
            "block sizes",
        ),
        (
            &["compress", "-a", "magbdi", "--block-bytes", "16"],
            "--block-bytes 16",
        ),
    ];
    for (args, needle) in cases {
        let o = mpc_bin()
            .args(*args)
            .arg("-o")
            .arg(s.path("o.gmcz"))
            .arg(&x)
            .output()
            .unwrap();
        fails_with(&o, needle);
    }
    let o = mpc_bin().args(["compress", "-q"]).arg(&x).output().unwrap();
    assert!(o.status.success());
    let gz = s.path("x.bin.gmcz");
    for (args, needle) in [
        (vec!["decompress", "--window", "1000000000000"], "--window"),
        (vec!["decompress", "-j", "100000"], "--threads"),
    ] {
        let o = mpc_bin()
            .args(args)
            .arg("-o")
            .arg(s.path("o.bin"))
            .arg(&gz)
            .output()
            .unwrap();
        fails_with(&o, needle);
    }
    // magbdi names what the bulk codec fixes and the sizes it takes
    let o = mpc_bin()
        .args(["compress", "-a", "magbdi", "--block-bytes", "16", "-o"])
        .arg(s.path("o.gmcz"))
        .arg(&x)
        .output()
        .unwrap();
    fails_with(&o, "64 to 512 in steps of 32");
    assert_eq!(s.names(), ["x.bin", "x.bin.gmcz"]);
}

#[test]
fn small_messages() {
    let s = Scratch::new("msgs");
    std::fs::write(s.path("x.bin"), sample(5_000)).unwrap();
    let o = mpc_bin()
        .args(["compress", "-q"])
        .arg(s.path("x.bin"))
        .output()
        .unwrap();
    assert!(o.status.success());
    let gz = s.path("x.bin.gmcz");
    let packed = std::fs::read(&gz).unwrap();
    // a short container on stdin
    let mut c = mpc_bin()
        .args(["decompress", "-q", "-", "-o", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut c.stdin.take().unwrap(), &packed[..50]).unwrap();
    let o = c.wait_with_output().unwrap();
    fails_with(&o, "shorter than the 84-byte header");
    assert!(!text(&o).contains("failed to fill whole buffer"));
    // blocks out of range, however large
    for (block, count) in [("18446744073709551615", "1"), ("157", "1"), ("100", "100")] {
        let o = mpc_bin()
            .args(["get", "--block", block, "--count", count])
            .arg(&gz)
            .output()
            .unwrap();
        fails_with(&o, "out of range");
        assert!(o.stdout.is_empty());
    }
    let o = mpc_bin()
        .args(["get", "--block", "0", "--count", "0"])
        .arg(&gz)
        .output()
        .unwrap();
    fails_with(&o, "--count");
    let o = mpc_bin()
        .args(["calibrate", "--reps", "0", "--calibration"])
        .arg(s.path("cal.toml"))
        .output()
        .unwrap();
    fails_with(&o, "--reps");
    assert!(!s.path("cal.toml").exists());
    let o = mpc_bin().args(["compress", "--help"]).output().unwrap();
    let help = text(&o);
    assert!(help.contains("magbdi") && help.contains("dpc"), "{help}");
    assert!(!help.contains("not there yet") && !help.contains("once they land"));
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]
    /// The public parsers and both readers take any bytes without a panic
    /// (this file runs with overflow checks: the test profile has them).
    #[test]
    fn parsers_take_any_bytes(
        head in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..40),
        body in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..300),
        keep_magic in proptest::prelude::any::<bool>(),
    ) {
        let _ = parse_index(&head, &body);
        let _ = Header::parse(&body);
        let mut c = body.clone();
        if keep_magic && c.len() >= 8 {
            c[..8].copy_from_slice(&bulk::format::MAGIC);
        }
        let codec = open_codec("bdi", None, None).unwrap();
        let _ = unpack(codec.as_ref(), &c);
        if let Ok(mut r) = BlockReader::open(Cursor::new(&c)) {
            let _ = r.read_block(codec.as_ref(), 0);
        }
    }
}

#[test]
fn bench_refuses_empty_input() {
    let d = Scratch::new("bench-empty");
    let f = d.path("empty.bin");
    std::fs::write(&f, b"").unwrap();
    let out = mpc_bin()
        .args([
            "bench", "--algos", "dpc", "--zstd", "1", "-j", "1", "--model",
        ])
        .arg(model())
        .arg(&f)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "bench succeeded:\n{stdout}");
    assert!(stderr.contains("input holds 0 bytes"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    for bogus in ["NaN", "inf", "0.000"] {
        assert!(!stdout.contains(bogus), "`{bogus}` in\n{stdout}");
    }
}
