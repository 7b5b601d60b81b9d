//! The GPU engine's device layer and kernel contract, on whatever adapter
//! exists (Mesa's llvmpipe in CI). With `MPCGEN_REQUIRE_GPU=1` a missing
//! adapter is a failure, not a skip.
#![cfg(feature = "gpu")]

use bulk::gpu::device::test_gpu as gpu;
use bulk::gpu::kernel::{run_compress, run_decompress, Segment};
use bulk::gpu::{Gpu, GpuAlgo};

/// A test algorithm exercising the bit reader and writer at every offset:
/// block i (4 words) is coded as its words cut into fields of 1..=32 bits
/// (widths from the tables), so codes have odd lengths; decoding reads the
/// fields back.
const FIELDS: &str = r#"
struct Params { n: u32, nw: u32, p2: u32, p3: u32 }
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> tables: array<u32>;
@group(0) @binding(2) var<storage, read> input: array<u32>;
@group(0) @binding(3) var<storage, read_write> slots: array<u32>;
@group(0) @binding(4) var<storage, read_write> lens: array<u32>;

@compute @workgroup_size(64)
fn compress(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * 64u;
    if (i >= params.n) { return; }
    var w = bw_start(i * 5u, 5u);
    let width = tables[i % 32u];
    for (var k = 0u; k < 4u; k++) {
        bw_put(&w, input[i * 4u + k], width);
    }
    lens[i] = w.pos;
}
"#;

const FIELDS_DEC: &str = r#"
struct Params { n: u32, nw: u32, p2: u32, p3: u32 }
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
    var pos = seg.x;
    for (var b = seg.z; b < seg.z + seg.w; b++) {
        let width = tables[b % 32u];
        for (var k = 0u; k < 4u; k++) {
            out[b * 4u + k] = read_bits(pos, width);
            pos += width;
        }
    }
    status[s] = select(1u, 0u, pos == seg.x + seg.y);
}
"#;

fn fields_algo(src: &str) -> GpuAlgo {
    GpuAlgo {
        name: "fields",
        source: src.to_string(),
        decompress: src.to_string(),
        params: vec![4],
        tables: (0..32).map(|k| k + 1).collect(),
        block_words: 4,
        slot_words: 5,
    }
}

fn mask(v: u32, width: u32) -> u32 {
    if width == 32 {
        v
    } else {
        v & ((1 << width) - 1)
    }
}

#[test]
fn bit_writer_and_reader_round_trip_at_every_offset() {
    let Some(gpu) = gpu() else { return };
    eprintln!("adapter: {}", gpu.adapter);
    let n = 1000usize;
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut data = vec![0u8; n * 16];
    for b in data.iter_mut() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        *b = x as u8;
    }
    let codes = run_compress(&gpu, &fields_algo(FIELDS), &data).expect("compress kernel");
    assert_eq!(codes.len(), n);
    // expected: the fields, MSB first, in a plain bit string
    let mut stream: Vec<bool> = Vec::new();
    let mut starts = Vec::new();
    for (i, c) in codes.iter().enumerate() {
        let width = (i % 32) as u32 + 1;
        assert_eq!(c.bits, 4 * width as usize, "block {i}");
        let mut want = Vec::new();
        for k in 0..4 {
            let w =
                u32::from_le_bytes(data[i * 16 + 4 * k..i * 16 + 4 * k + 4].try_into().unwrap());
            let v = mask(w, width);
            for b in (0..width).rev() {
                want.push(v >> b & 1 == 1);
            }
        }
        let got: Vec<bool> = (0..c.bits)
            .map(|b| c.bytes[b / 8] >> (7 - b % 8) & 1 == 1)
            .collect();
        assert_eq!(got, want, "block {i}");
        starts.push(stream.len());
        stream.extend(want);
    }
    // pack the whole stream and decode it in segments of 1..=7 blocks
    let mut payload = vec![0u8; stream.len().div_ceil(8)];
    for (k, &b) in stream.iter().enumerate() {
        if b {
            payload[k / 8] |= 0x80 >> (k % 8);
        }
    }
    let mut segs = Vec::new();
    let mut b = 0usize;
    while b < n {
        let cnt = (1 + b % 7).min(n - b);
        let end = if b + cnt < n {
            starts[b + cnt]
        } else {
            stream.len()
        };
        segs.push(Segment {
            start_bit: starts[b] as u32,
            bits: (end - starts[b]) as u32,
            first_block: b as u32,
            blocks: cnt as u32,
        });
        b += cnt;
    }
    // one segment claims a bit too many: its status must say so
    segs[3].bits += 1;
    let (out, status) = run_decompress(&gpu, &fields_algo(FIELDS_DEC), &payload, &segs, n)
        .expect("decompress kernel");
    for (s, &st) in status.iter().enumerate() {
        assert_eq!(st != 0, s == 3, "segment {s} status {st}");
    }
    for i in 0..n {
        let width = (i % 32) as u32 + 1;
        for k in 0..4 {
            let w =
                u32::from_le_bytes(data[i * 16 + 4 * k..i * 16 + 4 * k + 4].try_into().unwrap());
            let got =
                u32::from_le_bytes(out[i * 16 + 4 * k..i * 16 + 4 * k + 4].try_into().unwrap());
            assert_eq!(got, mask(w, width), "block {i} word {k}");
        }
    }
}

#[test]
fn a_kernel_that_does_not_compile_is_a_clear_error() {
    let Some(gpu) = gpu() else { return };
    let err = run_compress(&gpu, &fields_algo("fn compress( {"), &[0u8; 16]).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("GPU engine") && msg.contains("fields"),
        "{msg}"
    );
}

#[test]
fn naming_an_adapter_that_does_not_exist_lists_the_adapters_found() {
    let err = match Gpu::open(Some("no-such-adapter-xyz")) {
        Ok(_) => panic!("opened an adapter that does not exist"),
        Err(e) => e.to_string(),
    };
    assert!(
        err.contains("no-such-adapter-xyz") && err.contains("adapters found"),
        "{err}"
    );
}

#[test]
fn staged_uploads_arrive_whole() {
    let Some(gpu) = gpu() else { return };
    let up = gpu.upload_staging("up", 4096);
    let dst = gpu.storage("dst", 4096);
    for round in 0..3u8 {
        let a: Vec<u8> = (0..1000)
            .map(|i| (i as u8).wrapping_mul(7).wrapping_add(round))
            .collect();
        let b: Vec<u8> = (0..333).map(|i| (i as u8) ^ 0x5a ^ round).collect();
        gpu.stage(&up, 2000, &[(3, &a), (1500, &b)]).expect("stage");
        let mut enc = gpu.device.create_command_encoder(&Default::default());
        enc.copy_buffer_to_buffer(&up, 0, &dst, 0, 2000);
        gpu.submit_wait(enc).expect("copy");
        let got = gpu.read(&dst, 2000).expect("read");
        let mut want = vec![0u8; 2000];
        want[3..1003].copy_from_slice(&a);
        want[1500..1833].copy_from_slice(&b);
        assert!(
            got == want,
            "round {round}: first difference at {:?}",
            got.iter().zip(&want).position(|(x, y)| x != y)
        );
    }
}
