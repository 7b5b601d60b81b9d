//! The reader against `docs/spec/container.md`: every header rejection the
//! spec lists, with its message; the exact length-field width; the frame
//! bounds; zero padding at a chunk's end; the default group size; codec
//! checks in the order the spec gives (block size before identity); and
//! the codec a header names, refused by its header field.

use std::io::Cursor;
use std::path::{Path, PathBuf};

use bulk::format::{crc32, Frame, Header, FRAME_BYTES, HEADER_BYTES, INDEX_HEAD_BYTES};
use bulk::stream::header_for;
use bulk::{
    compress, decompress, open_codec, open_codec_for, BlockReader, BulkCodec, BulkError,
    CompressOptions, Engine, ALGOS,
};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn model() -> PathBuf {
    root().join("models/default")
}

fn codec(algo: &str, bb: Option<usize>) -> Box<dyn BulkCodec> {
    open_codec(algo, Some(&model()), bb).unwrap_or_else(|e| panic!("{algo} {bb:?}: {e}"))
}

/// The spec with every run of white space made one space (code spans
/// break across lines).
fn spec() -> String {
    let s = std::fs::read_to_string(root().join("docs/spec/container.md")).unwrap();
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn assert_in_spec(spec: &str, msg: &str) {
    assert!(
        spec.contains(msg),
        "docs/spec/container.md does not state `{msg}`"
    );
}

/// Words, zero runs and noise.
fn sample(len: usize) -> Vec<u8> {
    let mut v = Vec::with_capacity(len + 4);
    let mut x = 0x2545_f491u32;
    let mut i = 0u32;
    while v.len() < len {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        let w = match (i / 8) % 4 {
            0 => 1000 + 7 * i,
            1 => 0,
            2 => x,
            _ => 0x3f80_0000 | (x & 0xfff),
        };
        v.extend_from_slice(&w.to_le_bytes());
        i += 1;
    }
    v.truncate(len);
    v
}

fn pack(codec: &dyn BulkCodec, data: &[u8], chunk_blocks: u32, groups: Option<u32>) -> Vec<u8> {
    let opts = CompressOptions {
        chunk_blocks,
        group_blocks: groups,
        engine: Engine::Single,
        window: 2,
        original_len: Some(data.len() as u64),
    };
    let mut out = Vec::new();
    compress(codec, Cursor::new(data), &mut out, &opts, &|_| {}).expect("compress");
    out
}

fn unpack(codec: &dyn BulkCodec, c: &[u8]) -> Result<Vec<u8>, BulkError> {
    let mut out = Vec::new();
    decompress(codec, Cursor::new(c), &mut out, Engine::Single, 2, &|_| {})?;
    Ok(out)
}

fn read_block(codec: &dyn BulkCodec, c: &[u8], i: u64) -> Result<Vec<u8>, BulkError> {
    BlockReader::open(Cursor::new(c))?.read_block(codec, i)
}

fn reseal(b: &mut [u8]) {
    let crc = crc32(&[&b[..80]]);
    b[80..84].copy_from_slice(&crc.to_le_bytes());
}

/// `c` with its header replaced by `h`.
fn with_header(c: &[u8], h: &[u8]) -> Vec<u8> {
    let mut v = h.to_vec();
    v.extend_from_slice(&c[HEADER_BYTES..]);
    v
}

fn err_text<T>(r: Result<T, BulkError>) -> String {
    match r {
        Ok(_) => panic!("accepted"),
        Err(e) => e.to_string(),
    }
}

/// `bits(n)` of the spec: the binary digits of n.
fn bits(n: usize) -> u8 {
    (usize::BITS - n.leading_zeros()) as u8
}

/// Containers of a few blocks: 32-byte BDI (a length per block, version
/// 1), MPC without a group table (version 1) and with one (version 2).
struct Bases {
    bdi: Vec<u8>,
    mpc1: Vec<u8>,
    mpc2: Vec<u8>,
}

fn bases() -> Bases {
    let data = sample(32 * 40 + 5);
    Bases {
        bdi: pack(codec("bdi", None).as_ref(), &data, 16, None),
        mpc1: pack(codec("mpc", None).as_ref(), &data, 16, Some(0)),
        mpc2: pack(codec("mpc", None).as_ref(), &data, 16, None),
    }
}

// ------------------------------------------------------------ header

#[test]
fn header_rejections_are_the_ones_the_spec_lists() {
    let b = bases();
    let spec = spec();
    type Edit = fn(&mut Vec<u8>);
    let cases: &[(&str, &[u8], Edit, bool, &str)] = &[
        (
            "magic",
            &b.bdi,
            |h| h[0] ^= 1,
            false,
            "not a bulk container (bad magic number)",
        ),
        (
            "version 3",
            &b.bdi,
            |h| h[8] = 3,
            true,
            "container format version 3 is not supported (this build reads versions 1 to 2)",
        ),
        (
            "header crc",
            &b.bdi,
            |h| h[80] ^= 1,
            false,
            "container header is corrupt: checksum mismatch",
        ),
        (
            "byte after the name's NUL",
            &b.bdi,
            |h| h[16] = b'x',
            true,
            "container header is corrupt: nonzero bytes after the NUL that ends the algorithm name",
        ),
        (
            "name with a dash",
            &b.bdi,
            |h| h[13] = b'-',
            true,
            "container header is corrupt: algorithm name \"b-i\" is not ASCII letters and digits",
        ),
        (
            "group flag in version 1",
            &b.mpc1,
            |h| h[10] = 3,
            true,
            "container header is corrupt: unknown flags 0x0003 for format version 1 (known: 0x0001)",
        ),
        (
            "version 2, self-delimiting, no group flag",
            &b.mpc1,
            |h| h[8] = 2,
            true,
            "container header is corrupt: format version 2 without flag bit 1 (group length \
             table); such headers are version 1",
        ),
        (
            "version 2, length table",
            &b.bdi,
            |h| h[8] = 2,
            true,
            "container header is corrupt: format version 2 without flag bit 1 (group length \
             table); such headers are version 1",
        ),
        (
            "group flag without self-delimiting",
            &b.mpc2,
            |h| h[10] = 2,
            true,
            "container header is corrupt: flag bit 1 (group length table) without flag bit 0 \
             (self-delimiting blocks)",
        ),
        (
            "g over 8",
            &b.mpc2,
            |h| h[77] = 9,
            true,
            "container header is corrupt: group size 2^9 blocks (g at most 8)",
        ),
        (
            "W 0 with groups",
            &b.mpc2,
            |h| h[76] = 0,
            true,
            "container header is corrupt: length-field width 0 with a group length table (1..=32)",
        ),
        (
            "byte 77 without groups",
            &b.mpc1,
            |h| h[77] = 5,
            true,
            "container header is corrupt: reserved byte 77 is not 0",
        ),
        (
            "block size 0",
            &b.bdi,
            |h| h[60..64].copy_from_slice(&0u32.to_le_bytes()),
            true,
            "container header is corrupt: block size 0 bytes (1..=1024)",
        ),
        (
            "0 blocks a chunk",
            &b.bdi,
            |h| h[64..68].copy_from_slice(&0u32.to_le_bytes()),
            true,
            "container header is corrupt: 0 blocks a chunk of 32-byte blocks (chunks hold at \
             least one block and at most 16777216 bytes)",
        ),
        (
            "W 33",
            &b.bdi,
            |h| h[76] = 33,
            true,
            "container header is corrupt: length-field width 33 (at most 32)",
        ),
        (
            "W 5 without a table",
            &b.mpc1,
            |h| h[76] = 5,
            true,
            "container header is corrupt: length-field width 5 with self-delimiting blocks \
             (must be 0)",
        ),
        (
            "reserved 78",
            &b.bdi,
            |h| h[78] = 1,
            true,
            "container header is corrupt: reserved bytes 78..80 are not 0",
        ),
    ];
    for (what, base, edit, seal, msg) in cases {
        let mut h = base[..HEADER_BYTES].to_vec();
        edit(&mut h);
        if *seal {
            reseal(&mut h);
        }
        assert_eq!(err_text(Header::parse(&h)), *msg, "{what}");
        let algo = if base.as_ptr() == b.bdi.as_ptr() {
            "bdi"
        } else {
            "mpc"
        };
        let c = with_header(base, &h);
        assert_eq!(
            err_text(unpack(codec(algo, None).as_ref(), &c)),
            *msg,
            "{what}"
        );
        assert_eq!(err_text(BlockReader::open(Cursor::new(&c))), *msg, "{what}");
        assert_in_spec(&spec, msg);
    }
    let short = "container truncated: 50 bytes, shorter than the 84-byte header";
    assert_eq!(err_text(Header::parse(&b.bdi[..50])), short);
    assert_in_spec(&spec, short);
}

/// Every header the parser accepts is the one `to_bytes` writes: random
/// edits of valid headers (checksum recomputed) are refused or round-trip
/// byte for byte.
#[test]
fn accepted_headers_round_trip_byte_for_byte() {
    let b = bases();
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut accepted = 0;
    for base in [&b.bdi, &b.mpc1, &b.mpc2] {
        let clean: [u8; HEADER_BYTES] = base[..HEADER_BYTES].try_into().unwrap();
        assert_eq!(Header::parse(&clean).unwrap().to_bytes(), clean);
        for _ in 0..20_000 {
            let mut h = clean;
            for _ in 0..1 + next() % 3 {
                let at = 8 + (next() % 72) as usize;
                let r = next();
                h[at] = match r % 4 {
                    0 => 0,
                    1 => (r >> 8) as u8 % 4,
                    2 => b'a' + (r >> 8) as u8 % 26,
                    _ => (r >> 8) as u8,
                };
            }
            reseal(&mut h);
            if let Ok(parsed) = Header::parse(&h) {
                assert_eq!(parsed.to_bytes(), h, "{parsed:?}");
                accepted += 1;
            }
        }
    }
    assert!(accepted > 1000, "{accepted}");
}

// ------------------------------------------------- length-field width

/// W is exactly `bits(M)` with a length per block and `bits(G x M)` with
/// a group table, for every codec, block size and group size; one more or
/// one less is refused with the message the spec gives.
#[test]
fn length_field_width_is_exactly_the_bits_of_the_largest_block_or_group() {
    let spec = spec();
    for &algo in ALGOS {
        for bb in bulk::codec::block_sizes(algo) {
            let c = codec(algo, Some(bb));
            let m = c.max_bits();
            let groups: Vec<Option<u32>> = if c.self_delimiting() {
                (0..=8).map(|g| Some(1 << g)).chain([Some(0)]).collect()
            } else {
                vec![None]
            };
            for g in groups {
                let opts = CompressOptions {
                    group_blocks: g,
                    ..CompressOptions::default()
                };
                let h = header_for(c.as_ref(), &opts).unwrap();
                let want = match g {
                    None => bits(m),
                    Some(0) => 0,
                    Some(g) => bits(g as usize * m),
                };
                assert_eq!(h.len_width, want, "{algo} {bb} {g:?}");
            }
        }
    }
    let data = sample(32 * 20);
    let cases = [
        (
            "bdi",
            10u8,
            "header: length-field width 10, but `bdi` needs 9, the bits needed for its largest \
             block, 260",
        ),
        (
            "bdi",
            8,
            "header: length-field width 8, but `bdi` needs 9, the bits needed for its largest \
             block, 260",
        ),
        (
            "mpc",
            13,
            "header: length-field width 13, but `mpc` with groups of 32 blocks needs 14, the \
             bits needed for 32 x 259 = 8288",
        ),
        (
            "mpc",
            15,
            "header: length-field width 15, but `mpc` with groups of 32 blocks needs 14, the \
             bits needed for 32 x 259 = 8288",
        ),
    ];
    for (algo, w, msg) in cases {
        let c = codec(algo, None);
        let packed = pack(c.as_ref(), &data, 8, None);
        let mut h = packed[..HEADER_BYTES].to_vec();
        h[76] = w;
        reseal(&mut h);
        let bad = with_header(&packed, &h);
        assert_eq!(err_text(unpack(c.as_ref(), &bad)), msg);
        assert_eq!(err_text(read_block(c.as_ref(), &bad, 0)), msg);
        if w == 10 || w == 13 {
            assert_in_spec(&spec, msg);
        }
    }
    assert_in_spec(&spec, "| length per block (bit 0 clear) | `bits(M)` |");
    assert_in_spec(
        &spec,
        "| self-delimiting with a group length table (bits 0 and 1 set) | `bits(G x M)` |",
    );
}

// -------------------------------------------------------------- frames

fn frame_only(header: &[u8], bits: u32, blocks: u32) -> Vec<u8> {
    let stored = bits.div_ceil(8);
    let f = Frame {
        chunk: 0,
        stored,
        bits,
        blocks,
        crc: 0,
    };
    let mut v = header.to_vec();
    v.extend_from_slice(&f.to_bytes());
    v.extend(std::iter::repeat_n(0u8, stored as usize));
    v
}

/// A frame needs `n + ceil(n/G) x W` bits with a group table, `n`
/// self-delimiting without one, `n x W` with a length per block: one bit
/// less is refused before the payload is read, the bound itself passes
/// the frame check. A chunk of 2048 zero MPC blocks at G = 32 takes 7040
/// bits, fewer than `2048 x W`.
#[test]
fn frame_bit_minimum_is_the_one_the_spec_gives() {
    let spec = spec();
    let mpc = codec("mpc", None);
    let zeros = vec![0u8; 2048 * 32];
    let packed = pack(mpc.as_ref(), &zeros, 2048, None);
    let h = Header::parse(&packed).unwrap();
    assert_eq!((h.group_log2, h.len_width), (Some(5), 14));
    let fb: [u8; FRAME_BYTES] = packed[HEADER_BYTES..HEADER_BYTES + FRAME_BYTES]
        .try_into()
        .unwrap();
    let f = Frame::parse(&fb);
    assert_eq!((f.blocks, f.bits), (2048, 7040));
    assert!(f.bits < 2048 * h.len_width as u32);
    assert_eq!(unpack(mpc.as_ref(), &packed).unwrap(), zeros);
    assert_in_spec(&spec, "`2048 x 3 + 64 x 14 = 7,040` bits");

    let bdi = codec("bdi", None);
    let b = bases();
    let n = 16u32;
    for (what, c, base, min) in [
        (
            "group table",
            mpc.as_ref(),
            &b.mpc2,
            n + n.div_ceil(32) * 14,
        ),
        ("self-delimiting", mpc.as_ref(), &b.mpc1, n),
        ("length per block", bdi.as_ref(), &b.bdi, n * 9),
    ] {
        let head = &base[..HEADER_BYTES];
        let low = format!(
            "chunk 0: frame says {n} blocks in {} bits (at least {min} needed)",
            min - 1
        );
        assert_eq!(
            err_text(unpack(c, &frame_only(head, min - 1, n))),
            low,
            "{what}"
        );
        assert_eq!(
            err_text(unpack(c, &frame_only(head, min, n))),
            "chunk 0: checksum mismatch",
            "{what}"
        );
    }
    let mut h2048 = packed[..HEADER_BYTES].to_vec();
    h2048[64..68].copy_from_slice(&2048u32.to_le_bytes());
    reseal(&mut h2048);
    let msg = "chunk 0: frame says 2048 blocks in 2943 bits (at least 2944 needed)";
    assert_eq!(
        err_text(unpack(mpc.as_ref(), &frame_only(&h2048, 2943, 2048))),
        msg
    );
    assert_in_spec(&spec, msg);
    assert_in_spec(&spec, "`n + ceil(n / G) x W` bits with a group table");
    assert!(!spec.contains("blocks x max(W, 1)"));
}

/// Frames of a container: (offset, frame).
fn frames(c: &[u8]) -> Vec<(usize, Frame)> {
    let r = BlockReader::open(Cursor::new(c)).unwrap();
    r.entries
        .iter()
        .map(|e| {
            let at = e.offset as usize;
            let fb: [u8; FRAME_BYTES] = c[at..at + FRAME_BYTES].try_into().unwrap();
            (at, Frame::parse(&fb))
        })
        .collect()
}

/// Set the last padding bit of chunk `k`, then recompute the frame CRC,
/// the index entry and the index CRC, so that only the padding is wrong.
fn set_padding_bit(c: &[u8], k: usize) -> Vec<u8> {
    let fs = frames(c);
    let mut t = c.to_vec();
    let (at, f) = fs[k];
    let start = at + FRAME_BYTES;
    t[start + f.stored as usize - 1] |= 1;
    let mut f2 = f;
    f2.crc = f2.compute_crc(&t[start..start + f.stored as usize]);
    t[at..start].copy_from_slice(&f2.to_bytes());
    let (last_at, last) = fs[fs.len() - 1];
    let index_at = last_at + FRAME_BYTES + last.stored as usize;
    let ent = index_at + INDEX_HEAD_BYTES + 16 * k + 12;
    t[ent..ent + 4].copy_from_slice(&f2.crc.to_le_bytes());
    let icrc = index_at + INDEX_HEAD_BYTES + 16 * fs.len();
    let crc = crc32(&[&t[index_at..icrc]]);
    t[icrc..icrc + 4].copy_from_slice(&crc.to_le_bytes());
    t
}

/// Writers leave the padding bits 0 and readers refuse any other value,
/// streaming and random access alike; the chunks around still read.
#[test]
fn nonzero_padding_bits_at_a_chunks_end_are_refused() {
    let spec = spec();
    let data = sample(64 * 32 * 3 + 100);
    let mut checked = 0;
    for (algo, groups) in [
        ("mpc", None),
        ("mpc", Some(0)),
        ("bdi", None),
        ("dpc", None),
        ("magbdi", None),
    ] {
        let c = codec(algo, None);
        let packed = pack(c.as_ref(), &data, 8, groups);
        let bb = c.block_bytes() as u64;
        for (k, (at, f)) in frames(&packed).into_iter().enumerate() {
            let last = packed[at + FRAME_BYTES + f.stored as usize - 1];
            let pad = 8 * f.stored - f.bits;
            assert_eq!(last & ((1u16 << pad) - 1) as u8, 0, "{algo}: chunk {k}");
            if pad == 0 {
                continue;
            }
            let bad = set_padding_bit(&packed, k);
            let msg = format!(
                "chunk {k}: nonzero padding bits after bit {} (the frame's bit count)",
                f.bits
            );
            assert_eq!(err_text(unpack(c.as_ref(), &bad)), msg, "{algo}");
            assert_eq!(
                err_text(read_block(c.as_ref(), &bad, k as u64 * 8)),
                msg,
                "{algo}"
            );
            let other = if k == 0 { 8 } else { 0 };
            let lo = (other * bb) as usize;
            assert_eq!(
                read_block(c.as_ref(), &bad, other).unwrap(),
                data[lo..lo + bb as usize],
                "{algo}"
            );
            checked += 1;
        }
    }
    assert!(checked >= 10, "{checked}");
    assert_in_spec(&spec, "chunk 0: nonzero padding bits after bit");
    assert_in_spec(&spec, "Writers always write 0 there");
}

/// Without `group_blocks`, a self-delimiting codec gets G = 32 (g = 5,
/// version 2), as the spec says.
#[test]
fn the_default_group_size_is_32() {
    let c = codec("mpc", None);
    let h = header_for(c.as_ref(), &CompressOptions::default()).unwrap();
    assert_eq!(h.group_log2, Some(5));
    let b = h.to_bytes();
    assert_eq!((b[8], b[10], b[76], b[77]), (2, 3, 14, 5));
    assert_eq!(bulk::stream::DEFAULT_GROUP_BLOCKS, 32);
    assert_in_spec(&spec(), "with G = 32 unless `--block-groups N`");
}

// -------------------------------------------------------------- codecs

/// A container read with a codec of the same algorithm at another block
/// size is refused on the block size, before the identity (which for
/// codecs without a model file follows from it).
#[test]
fn block_size_is_compared_before_the_identity() {
    let spec = spec();
    let data = sample(5000);
    let dpc32 = codec("dpc", Some(32));
    let dpc1024 = codec("dpc", Some(1024));
    let packed = pack(dpc32.as_ref(), &data, 8, None);
    let msg = "header: block size 32 bytes, but the `dpc` codec given codes 1024-byte blocks";
    let e = unpack(dpc1024.as_ref(), &packed).unwrap_err();
    assert!(matches!(e, BulkError::HeaderCodec(_)), "{e}");
    assert_eq!(e.to_string(), msg);
    assert_eq!(err_text(read_block(dpc1024.as_ref(), &packed, 0)), msg);
    assert_in_spec(&spec, msg);
    for &algo in ALGOS {
        let sizes = bulk::codec::block_sizes(algo);
        for (&a, &b) in sizes.iter().zip(sizes.iter().skip(1)).take(3) {
            let packed = pack(codec(algo, Some(a)).as_ref(), &data, 8, None);
            let other = codec(algo, Some(b));
            for e in [
                err_text(unpack(other.as_ref(), &packed)),
                err_text(read_block(other.as_ref(), &packed, 0)),
            ] {
                assert_eq!(
                    e,
                    format!(
                        "header: block size {a} bytes, but the `{algo}` codec given codes \
                         {b}-byte blocks"
                    )
                );
            }
        }
    }
    // another model set is still an identity mismatch
    let int32 = open_codec("mpc", Some(&root().join("models/int32")), None).unwrap();
    let packed = pack(codec("mpc", None).as_ref(), &data, 8, None);
    let e = unpack(int32.as_ref(), &packed).unwrap_err();
    assert!(matches!(e, BulkError::IdentityMismatch { .. }), "{e}");
    // and another algorithm, and another packing
    let fpc = codec("fpc", None);
    let msg = "container was written by algorithm `bdi`, but the codec given is `fpc`";
    let b = bases();
    assert_eq!(err_text(unpack(fpc.as_ref(), &b.bdi)), msg);
    assert_in_spec(&spec, msg);
    let mut h = b.bdi[..HEADER_BYTES].to_vec();
    h[10] = 1;
    h[76] = 0;
    reseal(&mut h);
    let msg = "header: flag bit 0 is 1, but `bdi` blocks need a length per block (bit 0)";
    assert_eq!(
        err_text(unpack(
            codec("bdi", None).as_ref(),
            &with_header(&b.bdi, &h)
        )),
        msg
    );
    assert_in_spec(&spec, msg);
}

/// The codec a header names is opened by its algorithm and block size; a
/// block size that codec does not code, or an unknown algorithm, is an
/// error naming the header field, never a command-line flag.
#[test]
fn a_header_block_size_its_codec_does_not_code_names_the_header() {
    let spec = spec();
    let b = bases();
    let header = |base: &[u8], name: &[u8], bb: u32| {
        let mut h = base[..HEADER_BYTES].to_vec();
        h[12..28].fill(0);
        h[12..12 + name.len()].copy_from_slice(name);
        h[60..64].copy_from_slice(&bb.to_le_bytes());
        reseal(&mut h);
        Header::parse(&h).unwrap()
    };
    let m = model();
    for (base, name, bb, msg) in [
        (
            &b.bdi,
            &b"bdi"[..],
            33,
            "header: block size 33 is not one `bdi` codes (32 or 128)",
        ),
        (
            &b.bdi,
            b"fpc",
            64,
            "header: block size 64 is not one `fpc` codes (32 or 128)",
        ),
        (
            &b.mpc2,
            b"mpc",
            64,
            "header: block size 64 is not one `mpc` codes (32)",
        ),
        (
            &b.bdi,
            b"magbdi",
            32,
            "header: block size 32 is not one `magbdi` codes (64 to 512 in steps of 32)",
        ),
        (
            &b.bdi,
            b"dpc",
            33,
            "header: block size 33 is not one `dpc` codes (32 to 1024 in steps of 32)",
        ),
        (
            &b.bdi,
            b"zzz",
            32,
            "header: algorithm `zzz` is not one this build codes (mpc, bdi, fpc, cpack, bpc, \
             magbdi, dpc)",
        ),
    ] {
        let h = header(base, name, bb);
        let e = open_codec_for(&h, Some(&m)).err().expect(msg);
        assert!(matches!(e, BulkError::HeaderCodec(_)), "{e}");
        assert_eq!(e.to_string(), msg);
        assert!(!e.to_string().contains("--"), "{e}");
    }
    assert_in_spec(
        &spec,
        "header: block size 33 is not one `bdi` codes (32 or 128)",
    );
    assert_in_spec(
        &spec,
        "header: algorithm `zzz` is not one this build codes (mpc, bdi, fpc, cpack, bpc, magbdi, dpc)",
    );
    // the header's codec reads every container written
    let data = sample(3000);
    for &algo in ALGOS {
        for bb in bulk::codec::block_sizes(algo).into_iter().take(2) {
            let packed = pack(codec(algo, Some(bb)).as_ref(), &data, 8, None);
            let h = Header::parse(&packed).unwrap();
            let c = open_codec_for(&h, Some(&m)).unwrap();
            assert_eq!(unpack(c.as_ref(), &packed).unwrap(), data, "{algo} {bb}");
        }
    }
}
