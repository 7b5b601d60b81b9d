//! The GPU engine's window pipeline (upload, per-block kernels, device
//! chunk packing with length and group tables, download; decoding by
//! segments with CPU fallback) with a test codec whose CPU and WGSL
//! versions are written here side by side: containers must equal the CPU
//! engines' byte for byte, decode on either engine, and give the same
//! named errors. Runs on llvmpipe in CI (`MPCGEN_REQUIRE_GPU=1`).
#![cfg(feature = "gpu")]

use std::io::Cursor;

use bulk::bits::BitSink;
use bulk::gpu::device::test_gpu;
use bulk::gpu::{GpuAlgo, GpuEngine};
use bulk::stream::{compress_reusing, decompress_reusing, CompressScratch, DecompressScratch};
use bulk::{
    compress, compress_with, decompress, decompress_with, BulkCodec, BulkError, CompressOptions,
    Engine,
};

/// 16-byte blocks coded as a 5-bit field `width - 1`, then the four
/// little-endian words in `width` bits each (width = bits of the largest
/// word, at least 1): 9 to 133 bits, self-delimiting or with lengths.
struct Widths {
    self_delimiting: bool,
}

const MAX_BITS: usize = 5 + 4 * 32;

fn words(block: &[u8]) -> [u32; 4] {
    let mut w = [0u32; 4];
    for (k, c) in block.chunks_exact(4).enumerate() {
        w[k] = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
    }
    w
}

/// `width` bits at `pos`, MSB first (bits past the slice read as 0).
fn read_field(bits: &[u8], pos: usize, width: u32) -> u32 {
    (0..width as usize).fold(0u32, |v, k| {
        let p = pos + k;
        let bit = bits.get(p / 8).map_or(0, |b| (b >> (7 - p % 8)) & 1);
        (v << 1) | bit as u32
    })
}

impl Widths {
    fn decode(
        &self,
        bits: &[u8],
        at: usize,
        avail: usize,
        out: &mut [u8],
    ) -> Result<usize, String> {
        if avail < 5 {
            return Err(format!("{avail} bits, a header takes 5"));
        }
        let width = read_field(bits, at, 5) as usize + 1;
        let need = 5 + 4 * width;
        if need > avail {
            return Err(format!("{need} bits needed, {avail} available"));
        }
        for k in 0..4 {
            let v = read_field(bits, at + 5 + k * width, width as u32);
            out[4 * k..4 * k + 4].copy_from_slice(&v.to_le_bytes());
        }
        Ok(need)
    }
}

impl BulkCodec for Widths {
    fn algo(&self) -> &str {
        "widths"
    }
    fn block_bytes(&self) -> usize {
        16
    }
    fn max_bits(&self) -> usize {
        MAX_BITS
    }
    fn identity(&self) -> [u8; 32] {
        [7; 32]
    }
    fn self_delimiting(&self) -> bool {
        self.self_delimiting
    }
    fn compress_block(&self, block: &[u8], sink: &mut BitSink) -> usize {
        let w = words(block);
        let width = w
            .iter()
            .map(|v| 32 - v.leading_zeros())
            .max()
            .unwrap_or(0)
            .max(1);
        sink.put(width - 1, 5);
        for v in w {
            sink.put(v, width);
        }
        5 + 4 * width as usize
    }
    fn decompress_block(&self, bits: &[u8], len: usize, out: &mut [u8]) -> Result<(), String> {
        let used = self.decode(bits, 0, len, out)?;
        if used != len {
            return Err(format!("{} bits left over", len - used));
        }
        Ok(())
    }
    fn decompress_prefix(
        &self,
        bits: &[u8],
        avail: usize,
        out: &mut [u8],
    ) -> Result<usize, String> {
        self.decode(bits, 0, avail, out)
    }
}

const WGSL: &str = r#"
struct Params { n: u32, max_bits: u32, p2: u32, p3: u32 }
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> tables: array<u32>;
@group(0) @binding(2) var<storage, read> input: array<u32>;
@group(0) @binding(3) var<storage, read_write> slots: array<u32>;
@group(0) @binding(4) var<storage, read_write> lens: array<u32>;

@compute @workgroup_size(64)
fn compress(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * 64u;
    if (i >= params.n) { return; }
    var width = tables[0];
    for (var k = 0u; k < 4u; k++) {
        width = max(width, 32u - countLeadingZeros(input[i * 4u + k]));
    }
    var w = bw_start(i * 5u, 5u);
    bw_put(&w, width - 1u, 5u);
    for (var k = 0u; k < 4u; k++) {
        bw_put(&w, input[i * 4u + k], width);
    }
    lens[i] = w.pos;
}
"#;

const WGSL_DEC: &str = r#"
struct Params { n: u32, max_bits: u32, p2: u32, p3: u32 }
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> tables: array<u32>;
@group(0) @binding(2) var<storage, read> payload: array<u32>;
@group(0) @binding(3) var<storage, read> segs: array<vec4<u32>>;
@group(0) @binding(4) var<storage, read_write> out: array<u32>;
@group(0) @binding(5) var<storage, read_write> status: array<u32>;

@compute @workgroup_size(64)
fn decompress(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let s = gid.x + gid.y * nwg.x * 64u;
    if (s >= params.n) { return; }
    let seg = segs[s];
    let end = seg.x + seg.y;
    var pos = seg.x;
    var bad = tables[0] - 1u;
    for (var b = seg.z; b < seg.z + seg.w; b++) {
        let avail = min(end - pos, params.max_bits);
        if (avail < 5u) { bad = 1u; break; }
        let width = read_bits(pos, 5u) + 1u;
        let need = 5u + 4u * width;
        if (need > avail) { bad = 1u; break; }
        for (var k = 0u; k < 4u; k++) {
            out[b * 4u + k] = read_bits(pos + 5u + k * width, width);
        }
        pos += need;
    }
    status[s] = select(1u, bad, pos == end);
}
"#;

fn algo() -> GpuAlgo {
    GpuAlgo {
        name: "widths",
        source: WGSL.to_string(),
        decompress: WGSL_DEC.to_string(),
        params: vec![MAX_BITS as u32],
        tables: vec![1],
        block_words: 4,
        slot_words: 5,
    }
}

fn engine() -> Option<GpuEngine> {
    let gpu = test_gpu()?;
    Some(GpuEngine::new(gpu, algo(), MAX_BITS).expect("engine"))
}

fn data(n: usize, seed: u32) -> Vec<u8> {
    let mut x = seed | 1;
    let mut v = Vec::with_capacity(n);
    for i in 0..n {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        // stretches of small values (narrow codes) and of noise (wide ones)
        v.push(match (i / 48) % 4 {
            0 => 0,
            1 => (x % 7) as u8,
            2 => (i % 4 == 0) as u8 * x as u8,
            _ => x as u8,
        });
    }
    v
}

fn pack(
    codec: &dyn BulkCodec,
    input: &[u8],
    cb: u32,
    groups: Option<u32>,
    window: usize,
    dev: Option<&GpuEngine>,
) -> Result<Vec<u8>, BulkError> {
    let opts = CompressOptions {
        chunk_blocks: cb,
        group_blocks: groups,
        engine: if dev.is_some() {
            Engine::Gpu
        } else {
            Engine::Parallel
        },
        window,
        original_len: Some(input.len() as u64),
    };
    let mut out = Vec::new();
    compress_with(
        codec,
        Cursor::new(input),
        &mut out,
        &opts,
        dev.map(|d| d as _),
        &|_| {},
    )?;
    Ok(out)
}

fn unpack(
    codec: &dyn BulkCodec,
    packed: &[u8],
    window: usize,
    dev: Option<&GpuEngine>,
) -> Result<Vec<u8>, BulkError> {
    let mut out = Vec::new();
    let engine = if dev.is_some() {
        Engine::Gpu
    } else {
        Engine::Single
    };
    decompress_with(
        codec,
        Cursor::new(packed),
        &mut out,
        engine,
        window,
        dev.map(|d| d as _),
        &|_| {},
    )?;
    Ok(out)
}

#[test]
fn gpu_containers_equal_the_cpu_engines_and_cross_decode() {
    let Some(dev) = engine() else { return };
    for sd in [false, true] {
        let codec = Widths {
            self_delimiting: sd,
        };
        let groups: &[Option<u32>] = if sd {
            &[None, Some(0), Some(1), Some(8), Some(256)]
        } else {
            &[None]
        };
        for &g in groups {
            // chunk sizes that are and are not whole groups; windows of 1
            // to many chunks; inputs ending inside a block, at a chunk
            // boundary and just after one
            for (cb, window, len) in [
                (1u32, 1usize, 16usize),
                (7, 3, 16 * 7 * 3),
                (7, 3, 16 * 7 * 3 + 1),
                (64, 2, 5000),
                (300, 4, 100_003),
                (2048, 32, 300_000),
            ] {
                let input = data(len, cb ^ len as u32);
                let cpu = pack(&codec, &input, cb, g, window, None).expect("cpu");
                let gpu = pack(&codec, &input, cb, g, window, Some(&dev)).expect("gpu");
                assert!(cpu == gpu, "sd {sd}, groups {g:?}, chunks {cb}, window {window}, {len} bytes: containers differ");
                assert_eq!(
                    unpack(&codec, &cpu, window, Some(&dev)).expect("gpu decode"),
                    input
                );
                assert_eq!(
                    unpack(&codec, &gpu, window, None).expect("cpu decode"),
                    input
                );
            }
        }
    }
    let st = dev.stats();
    assert!(
        st.windows > 0 && st.bytes_up > 0 && st.bytes_down > 0,
        "{st:?}"
    );
}

#[test]
fn stream_buffers_reused_across_streams_give_the_same_containers() {
    let Some(dev) = engine() else { return };
    let codec = Widths {
        self_delimiting: true,
    };
    // one set of stream buffers each way through streams of larger and
    // smaller windows and inputs, on the device and on the CPU engines,
    // each stream's stale bytes from the last one left in the buffers:
    // every container equals a fresh stream's and decodes to its input
    let mut scratch = CompressScratch::default();
    let mut slots = DecompressScratch::default();
    for (cb, window, len, gpu) in [
        (64u32, 8usize, 64 * 16 * 8 * 2 + 100, true),
        (64, 8, 5000, true),
        (7, 3, 16 * 7 * 3 + 1, false),
        (300, 2, 100_003, true),
        (64, 16, 64 * 16 * 16 * 3, false),
        (1, 1, 16, true),
        (64, 8, 3, true),
    ] {
        let input = data(len, cb ^ len as u32);
        let fresh = pack(&codec, &input, cb, Some(8), window, None).expect("cpu");
        let opts = CompressOptions {
            chunk_blocks: cb,
            group_blocks: Some(8),
            engine: if gpu { Engine::Gpu } else { Engine::Parallel },
            window,
            original_len: Some(len as u64),
        };
        let mut out = Vec::new();
        compress_reusing(
            &codec,
            Cursor::new(&input),
            &mut out,
            &opts,
            if gpu { Some(&dev as _) } else { None },
            &mut scratch,
            &|_| {},
        )
        .expect("reusing");
        assert!(
            out == fresh,
            "chunks {cb}, window {window}, {len} bytes, gpu {gpu}: containers differ"
        );
        let mut back = Vec::new();
        decompress_reusing(
            &codec,
            Cursor::new(&out),
            &mut back,
            if gpu { Engine::Gpu } else { Engine::Parallel },
            window,
            if gpu { Some(&dev as _) } else { None },
            &mut slots,
            &|_| {},
        )
        .expect("decompress reusing");
        assert!(
            back == input,
            "chunks {cb}, window {window}, {len} bytes, gpu {gpu}: round trip differs"
        );
    }
}

#[test]
fn pipelined_parts_equal_the_cpu_engines() {
    let Some(dev) = engine() else { return };
    let codec = Widths {
        self_delimiting: true,
    };
    // windows of 9 chunks of 100 blocks (1,600 bytes), cut into parts of 1,
    // 2 or 4 chunks with 1 to 4 buffer sets in flight; the last window and
    // the last part partial
    let input = data(9 * 1600 * 3 + 4000 + 5, 17);
    let cpu = pack(&codec, &input, 100, Some(8), 9, None).expect("cpu");
    for part in [1usize, 1600 * 2, 1600 * 4 + 1] {
        dev.set_part_bytes(part);
        for k in 1..=4 {
            dev.set_in_flight(k).expect("in flight");
            let gpu = pack(&codec, &input, 100, Some(8), 9, Some(&dev)).expect("gpu");
            assert!(
                gpu == cpu,
                "parts of {part} bytes, {k} in flight: containers differ"
            );
            assert_eq!(
                unpack(&codec, &cpu, 9, Some(&dev)).expect("gpu decode"),
                input,
                "parts of {part} bytes, {k} in flight"
            );
        }
    }
    assert!(dev.set_in_flight(0).is_err() && dev.set_in_flight(5).is_err());
}

#[test]
fn damaged_containers_give_the_cpu_engines_errors() {
    let Some(dev) = engine() else { return };
    // one chunk a part: the damaged chunk's part is in flight beside others
    dev.set_part_bytes(1);
    for sd in [false, true] {
        let codec = Widths {
            self_delimiting: sd,
        };
        let input = data(40_000, 99);
        let packed = pack(&codec, &input, 100, None, 4, None).expect("pack");
        // every byte of chunk 3's payload set to 0xff in turn, the frame
        // CRC made right again, so that only the codes are wrong
        let mut at = bulk::format::HEADER_BYTES;
        for _ in 0..3 {
            at += 20 + u32::from_le_bytes(packed[at + 4..at + 8].try_into().unwrap()) as usize;
        }
        let s = u32::from_le_bytes(packed[at + 4..at + 8].try_into().unwrap()) as usize;
        let mut differing = 0;
        for j in (0..s).step_by(7) {
            let mut bad = packed.clone();
            bad[at + 20 + j] ^= 0xa5;
            let crc = bulk::format::crc32(&[&bad[at..at + 16], &bad[at + 20..at + 20 + s]]);
            bad[at + 16..at + 20].copy_from_slice(&crc.to_le_bytes());
            let c = unpack(&codec, &bad, 4, None);
            let g = unpack(&codec, &bad, 4, Some(&dev));
            match (&c, &g) {
                (Ok(a), Ok(b)) => assert_eq!(a, b, "byte {j}"),
                (Err(a), Err(b)) => {
                    assert_eq!(a.to_string(), b.to_string(), "byte {j}");
                    differing += 1;
                }
                _ => panic!("sd {sd}, byte {j}: cpu {c:?}, gpu {g:?}"),
            }
        }
        assert!(differing > 0, "no damage was detected at all");
        // cut anywhere: the same error
        for cut in (0..packed.len()).step_by(997) {
            let c = unpack(&codec, &packed[..cut], 4, None)
                .unwrap_err()
                .to_string();
            let g = unpack(&codec, &packed[..cut], 4, Some(&dev))
                .unwrap_err()
                .to_string();
            assert_eq!(c, g, "cut at {cut}");
        }
    }
}

#[test]
fn plain_decompress_reads_gpu_containers() {
    let Some(dev) = engine() else { return };
    let codec = Widths {
        self_delimiting: true,
    };
    let input = data(70_001, 5);
    let gpu = pack(&codec, &input, 256, Some(32), 8, Some(&dev)).expect("gpu");
    let mut out = Vec::new();
    decompress(
        &codec,
        Cursor::new(&gpu),
        &mut out,
        Engine::Parallel,
        8,
        &|_| {},
    )
    .expect("decode");
    assert_eq!(out, input);
    let mut again = Vec::new();
    let opts = CompressOptions {
        chunk_blocks: 256,
        group_blocks: Some(32),
        window: 8,
        original_len: Some(input.len() as u64),
        ..CompressOptions::default()
    };
    compress(&codec, Cursor::new(&input), &mut again, &opts, &|_| {}).expect("cpu");
    assert_eq!(again, gpu);
}

#[test]
fn resident_chunks_equal_the_window_path_and_decode_on_the_device() {
    use bulk::gpu::{ResidentBlocks, ResidentChunks};
    use bulk::stream::header_for;
    use bulk::WindowCoder;
    let Some(dev) = engine() else { return };
    assert!(dev.upload_blocks(&[0u8; 17]).is_err(), "a partial block");
    let mut chunks = ResidentChunks::new();
    let mut back = ResidentBlocks::new();
    for sd in [false, true] {
        let codec = Widths {
            self_delimiting: sd,
        };
        let groups: &[Option<u32>] = if sd { &[Some(0), Some(8)] } else { &[None] };
        for &g in groups {
            // one part, and parts of a few chunks; the last chunk partial
            for (cb, blocks, part) in [
                (7u32, 21usize, 1usize << 20),
                (64, 1000, 1),
                (300, 2999, 5000),
            ] {
                dev.set_part_bytes(part);
                let what = format!(
                    "sd {sd}, groups {g:?}, chunks of {cb}, {blocks} blocks, parts of {part} bytes"
                );
                let input = data(16 * blocks, cb ^ blocks as u32);
                let opts = CompressOptions {
                    chunk_blocks: cb,
                    group_blocks: g,
                    ..CompressOptions::default()
                };
                let header = header_for(&codec, &opts).expect("header");
                let resident = dev.upload_blocks(&input).expect("upload");
                dev.compress_resident(&header, &resident, &mut chunks)
                    .expect("compress");
                let n = blocks.div_ceil(cb as usize);
                let mut stored = vec![Vec::new(); n];
                let mut bits = vec![0u32; n];
                dev.compress_window(&header, &input, &mut stored, &mut bits)
                    .expect("window");
                let want: Vec<(Vec<u8>, u32)> = stored.into_iter().zip(bits).collect();
                let got = dev.download_chunks(&chunks).expect("download");
                assert!(
                    got == want,
                    "{what}: resident chunks differ from the window path's"
                );
                let total: u64 = want.iter().map(|c| c.0.len() as u64).sum();
                assert_eq!(chunks.stored_bytes(), total, "{what}");
                assert_eq!(
                    (chunks.chunks(), chunks.blocks()),
                    (n, blocks as u64),
                    "{what}"
                );
                dev.decompress_resident(&chunks, &mut back)
                    .expect("decompress");
                assert!(
                    dev.download_blocks(&back).expect("blocks") == input,
                    "{what}: round trip"
                );
                // the same chunks loaded from the host
                dev.upload_chunks(&header, &want, blocks as u64, &mut chunks)
                    .expect("upload chunks");
                dev.decompress_resident(&chunks, &mut back)
                    .expect("decompress");
                assert!(
                    dev.download_blocks(&back).expect("blocks") == input,
                    "{what}: uploaded chunks"
                );
                if n < 3 {
                    continue;
                }
                // chunk 2 damaged: its first byte (a table field where there
                // is a table) all ones, or its last bit cut off
                let mut bad = want.clone();
                bad[2].0[0] = 0xff;
                dev.upload_chunks(&header, &bad, blocks as u64, &mut chunks)
                    .expect("upload chunks");
                match dev.decompress_resident(&chunks, &mut back) {
                    Err(BulkError::ChunkCorrupt { chunk: 2, .. }) => {}
                    Ok(()) if g == Some(0) => {
                        assert!(
                            dev.download_blocks(&back).expect("blocks") != input,
                            "{what}"
                        )
                    }
                    other => panic!("{what}: damaged table: {other:?}"),
                }
                let mut cut = want.clone();
                cut[2].1 -= 1;
                let keep = cut[2].1.div_ceil(8) as usize;
                cut[2].0.truncate(keep);
                dev.upload_chunks(&header, &cut, blocks as u64, &mut chunks)
                    .expect("upload chunks");
                match dev.decompress_resident(&chunks, &mut back) {
                    Err(BulkError::ChunkCorrupt { chunk: 2, .. }) => {}
                    other => panic!("{what}: a bit short: {other:?}"),
                }
            }
        }
    }
    dev.set_part_bytes(bulk::gpu::engine::PART_BYTES);
}

#[test]
fn transfers_alone_bring_every_byte_back() {
    let Some(dev) = engine() else { return };
    // lengths not a multiple of 4 and parts not a multiple of 4 (rounded
    // up to one), 1 to 4 buffer sets in flight, and the stats counted
    for len in [0usize, 1, 13, 4099, 3 * 4096 + 7] {
        let input = data(len, 23);
        for part in [1usize, 6, 1000, 4096, 1 << 20] {
            if len / part.next_multiple_of(4) > 16 {
                continue; // a submission per part: few of them
            }
            dev.set_part_bytes(part);
            for k in 1..=4 {
                dev.set_in_flight(k).expect("in flight");
                dev.reset_stats();
                let mut back = vec![0xa5u8; len];
                dev.transfer_window(&input, &mut back).expect("transfer");
                assert!(back == input, "{len} bytes, parts of {part}, {k} in flight");
                let st = dev.stats();
                assert_eq!((st.bytes_up, st.bytes_down), (len as u64, len as u64));
            }
        }
    }
    let mut short = vec![0u8; 3];
    assert!(dev.transfer_window(&[1, 2, 3, 4], &mut short).is_err());
    dev.set_part_bytes(bulk::gpu::engine::PART_BYTES);
    dev.set_in_flight(2).expect("in flight");
}
