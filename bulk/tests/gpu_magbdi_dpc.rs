//! The MAG-aware BDI and DPC GPU kernels against the golden CPU codecs:
//! compress gives the same bits and lengths on corpus, random and corner
//! blocks at several block sizes; decompress round trips; corrupted codes
//! (bit flips, wrong lengths, garbage) fail on the GPU exactly when the CPU
//! decoder fails, and otherwise decode to the CPU's block. Runs on
//! llvmpipe in CI (`MPCGEN_REQUIRE_GPU=1`).
#![cfg(feature = "gpu")]

use std::path::Path;

use bulk::codec::block_sizes;
use bulk::gpu::device::test_gpu;
use bulk::gpu::kernel::{run_compress, run_decompress, Segment};
use bulk::gpu::{dpc, magbdi, Gpu, GpuAlgo};
use golden::baselines::BlockCodec;
use golden::dpc::{Dpc, DpcParams};
use golden::magbdi::{DeltaMode, MagBdi, Params};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn from_words(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// Up to `per_file` bytes from the middle of the first `.bin` file of every
/// corpus directory.
fn corpus(per_file: usize) -> Vec<u8> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus");
    let mut dirs: Vec<_> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("corpus {} missing: {e}", root.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    let mut out = Vec::new();
    let mut files = 0;
    for d in dirs {
        let mut bins: Vec<_> = std::fs::read_dir(&d)
            .unwrap_or_else(|e| panic!("{}: {e}", d.display()))
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "bin"))
            .collect();
        bins.sort();
        if let Some(f) = bins.first() {
            let data = std::fs::read(f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            let at = (data.len() / 2).saturating_sub(per_file / 2);
            out.extend_from_slice(&data[at..(at + per_file).min(data.len())]);
            files += 1;
        }
    }
    assert!(files >= 4, "corpus {}: only {files} files", root.display());
    out
}

/// At most `max` blocks of `bb` bytes spread evenly over `data`.
fn spread(data: &[u8], bb: usize, max: usize) -> Vec<u8> {
    let n = data.len() / bb;
    let step = n.div_ceil(max).max(1);
    data.chunks_exact(bb)
        .step_by(step)
        .flatten()
        .copied()
        .collect()
}

/// Random blocks of several kinds: noise, small values, runs, sparse.
fn random_blocks(bb: usize, n: usize, seed: u64) -> Vec<u8> {
    let mut r = Rng(seed | 1);
    let mut out = Vec::with_capacity(n * bb);
    for b in 0..n {
        let kind = b % 5;
        let base = r.next() as u32;
        let shift = r.below(32) as u32;
        for _ in 0..bb / 4 {
            let x = r.next() as u32;
            let w = match kind {
                0 => x,
                1 => x >> shift,
                2 => base.wrapping_add(x >> shift),
                3 => {
                    if r.below(8) == 0 {
                        x
                    } else {
                        base
                    }
                }
                _ => base.wrapping_sub(x >> shift) & !(1 << (x % 32)),
            };
            out.extend_from_slice(&w.to_le_bytes());
        }
    }
    out
}

/// Compress `blocks` on the GPU and check every code against the CPU's.
fn check_compress(gpu: &Gpu, cpu: &dyn BlockCodec, algo: &GpuAlgo, blocks: &[u8], what: &str) {
    let bb = cpu.block_bytes();
    let codes = run_compress(gpu, algo, blocks).expect("compress kernel");
    assert_eq!(codes.len(), blocks.len() / bb);
    for (i, (code, block)) in codes.iter().zip(blocks.chunks(bb)).enumerate() {
        let want = cpu.compress(block);
        assert_eq!(code.bits, want.len, "{what}: block {i} ({bb} B): length");
        assert_eq!(
            code.bytes,
            want.bytes[..want.len.div_ceil(8)],
            "{what}: block {i} ({bb} B): bits"
        );
    }
}

/// Codes back to back, one segment (one block) each.
fn pack(codes: &[(Vec<u8>, usize)]) -> (Vec<u8>, Vec<Segment>) {
    let total: usize = codes.iter().map(|c| c.1).sum();
    let mut pay = vec![0u8; total.div_ceil(8)];
    let mut segs = Vec::with_capacity(codes.len());
    let mut pos = 0usize;
    for (b, (bytes, len)) in codes.iter().enumerate() {
        for k in 0..*len {
            let bit = bytes.get(k / 8).map_or(0, |x| (x >> (7 - k % 8)) & 1);
            pay[(pos + k) / 8] |= bit << (7 - (pos + k) % 8);
        }
        segs.push(Segment {
            start_bit: pos as u32,
            bits: *len as u32,
            first_block: b as u32,
            blocks: 1,
        });
        pos += len;
    }
    (pay, segs)
}

/// Decode `codes` on the GPU; each must succeed exactly when the CPU
/// decoder does, with the CPU's block. Returns how many were accepted.
fn check_decode(
    gpu: &Gpu,
    cpu: &dyn BlockCodec,
    algo: &GpuAlgo,
    codes: &[(Vec<u8>, usize)],
    what: &str,
) -> usize {
    let bb = cpu.block_bytes();
    let (pay, segs) = pack(codes);
    let (out, status) =
        run_decompress(gpu, algo, &pay, &segs, codes.len()).expect("decompress kernel");
    let mut ok = 0;
    for (i, (bytes, len)) in codes.iter().enumerate() {
        match cpu.decompress(bytes, *len) {
            Ok(block) => {
                assert_eq!(
                    status[i], 0,
                    "{what}: code {i} ({len} bits): CPU accepts, GPU status {}",
                    status[i]
                );
                assert_eq!(
                    out[i * bb..(i + 1) * bb],
                    block[..],
                    "{what}: code {i} ({len} bits): block"
                );
                ok += 1;
            }
            Err(e) => assert_ne!(
                status[i], 0,
                "{what}: code {i} ({len} bits): CPU rejects ({e}), GPU accepts"
            ),
        }
    }
    ok
}

/// Segments of several back-to-back codes (the kernel contract allows any
/// count): each decodes to the CPU's blocks with status 0; one bit more or
/// less than the codes' total gives a nonzero status.
fn check_runs(gpu: &Gpu, cpu: &dyn BlockCodec, algo: &GpuAlgo, blocks: &[u8], what: &str) {
    let bb = cpu.block_bytes();
    let codes: Vec<(Vec<u8>, usize)> = blocks
        .chunks(bb)
        .map(|b| {
            let c = cpu.compress(b);
            (c.bytes, c.len)
        })
        .collect();
    let (pay, one) = pack(&codes);
    let mut segs = Vec::new();
    let mut b = 0;
    while b < one.len() {
        let count = (1 + segs.len() % 7).min(one.len() - b);
        let bits = one[b..b + count].iter().map(|s| s.bits).sum();
        segs.push(Segment {
            start_bit: one[b].start_bit,
            bits,
            first_block: b as u32,
            blocks: count as u32,
        });
        b += count;
    }
    let (out, status) =
        run_decompress(gpu, algo, &pay, &segs, codes.len()).expect("decompress kernel");
    assert!(
        status.iter().all(|&s| s == 0),
        "{what}: multi-block segments: status {status:?}"
    );
    assert_eq!(out, blocks, "{what}: multi-block segments: blocks");
    let off: Vec<Segment> = segs
        .iter()
        .enumerate()
        .map(|(k, s)| Segment {
            bits: if k % 2 == 0 { s.bits + 1 } else { s.bits - 1 },
            ..*s
        })
        .collect();
    let (_, status) =
        run_decompress(gpu, algo, &pay, &off, codes.len()).expect("decompress kernel");
    for (k, st) in status.iter().enumerate() {
        assert_ne!(
            *st, 0,
            "{what}: multi-block segment {k} with one bit too many or too few accepted"
        );
    }
}

/// The full check for one configuration: compress equality on `blocks`,
/// the round trip, and corrupted variants of the codes.
fn check_all(
    gpu: &Gpu,
    cpu: &dyn BlockCodec,
    algo: &GpuAlgo,
    blocks: &[u8],
    what: &str,
    seed: u64,
) {
    check_compress(gpu, cpu, algo, blocks, what);
    let bb = cpu.block_bytes();
    let codes: Vec<(Vec<u8>, usize)> = blocks
        .chunks(bb)
        .map(|b| {
            let c = cpu.compress(b);
            (c.bytes, c.len)
        })
        .collect();
    assert_eq!(
        check_decode(gpu, cpu, algo, &codes, what),
        codes.len(),
        "{what}: round trip"
    );
    check_runs(gpu, cpu, algo, blocks, what);
    let mut r = Rng(seed | 1);
    let max = cpu.max_bits();
    let mut bad = Vec::new();
    for (k, (bytes, len)) in codes.iter().enumerate().take(600) {
        let (bytes, len) = (bytes.clone(), *len);
        let fixed = |mut b: Vec<u8>, l: usize| {
            b.resize(l.div_ceil(8), 0);
            (b, l)
        };
        match k % 6 {
            // one flipped bit
            0 | 1 => {
                let mut b = bytes;
                let p = r.below(len.max(1));
                if let Some(x) = b.get_mut(p / 8) {
                    *x ^= 0x80 >> (p % 8);
                }
                bad.push((b, len));
            }
            // one bit or one byte too long or short (extra bits zero)
            2 => bad.push(fixed(bytes, len + [1, 8][r.below(2)])),
            3 => bad.push(fixed(bytes, len.saturating_sub([1, 8, len][r.below(3)]))),
            // a length anywhere from 0 to past the longest code
            4 => {
                let l = r.below(max + 16);
                bad.push(fixed(bytes, l));
            }
            // garbage of a random length
            _ => {
                let l = r.below(max + 16);
                let b: Vec<u8> = (0..l.div_ceil(8)).map(|_| r.next() as u8).collect();
                bad.push((b, l));
            }
        }
    }
    let ok = check_decode(gpu, cpu, algo, &bad, &format!("{what} corrupted"));
    assert!(ok < bad.len(), "{what}: every corrupted code decoded");
}

fn mag_corners(p: &Params) -> Vec<u8> {
    let cpu = MagBdi::new(*p).expect("params");
    let n = p.values();
    let mut blocks: Vec<Vec<u32>> = vec![
        vec![0; n],
        vec![u32::MAX; n],
        vec![0x1234_5678; n],
        vec![7; n],
    ];
    let big = 0x8000_0000u32;
    for s in &cpu.table().sizes {
        let d = s.delta_bits;
        let top = (1u32 << d) - 1;
        let half = 1u32 << (d - 1);
        for delta in [
            top,
            top + 1,
            half - 1,
            half,
            0u32.wrapping_sub(half),
            0u32.wrapping_sub(half + 1),
        ] {
            // base-relative delta at and one past the field width
            let mut v: Vec<u32> = (0..n as u32).map(|j| big.wrapping_add(j % 3)).collect();
            v[n - 1] = big.wrapping_add(delta);
            blocks.push(v);
            // zero-base value at and one past the width
            let mut v = vec![big; n];
            v[n / 2] = delta;
            blocks.push(v);
            let mut v = vec![1u32; n];
            v[0] = delta;
            blocks.push(v);
        }
    }
    for pos in 0..n {
        // the non-zero base at every position
        let mut v: Vec<u32> = (0..n as u32).map(|j| j & 3).collect();
        v[pos] = 0x7654_3210;
        blocks.push(v);
        // the first value no base covers at every position
        let mut v: Vec<u32> = vec![0x1000_0000; n];
        v[(pos + 1) % n] = 3;
        v[pos] = 0x9000_0000;
        if pos > 0 {
            v[0] = 0x1000_0000;
        }
        blocks.push(v);
        let mut v: Vec<u32> = (0..n as u32).map(|j| 0x4000_0000 + j).collect();
        v[pos] = 0x4000_0000 + (1 << 20);
        blocks.push(v);
    }
    blocks.iter().flat_map(|v| from_words(v)).collect()
}

fn dpc_corners(n: usize, seed: u64) -> Vec<u8> {
    let mut r = Rng(seed | 1);
    let mut blocks: Vec<Vec<u32>> = vec![
        vec![0; n],
        vec![u32::MAX; n],
        vec![0xdead_beef; n],
        (0..n as u32).collect(),
    ];
    // exactly u uniform groups for every u: at and around every raw boundary
    for u in 0..=32u32 {
        for ones in [0u32, 0x5555_5555, u32::MAX] {
            let uniform =
                if u == 32 { u32::MAX } else { (1u32 << u) - 1 }.rotate_left(r.below(32) as u32);
            let mut v: Vec<u32> = (0..n).map(|_| r.next() as u32).collect();
            if n >= 2 {
                v[0] = 0;
                v[1] = u32::MAX;
            }
            for x in v.iter_mut() {
                *x = (*x & !uniform) | (ones & uniform);
            }
            blocks.push(v);
        }
    }
    blocks.iter().flat_map(|v| from_words(v)).collect()
}

/// A sample of the accepted block sizes: the smallest, the largest, 128
/// and a few between.
fn sample(sizes: &[usize]) -> Vec<usize> {
    assert!(
        sizes.contains(&128),
        "128-byte blocks not accepted: {sizes:?}"
    );
    let mut s = vec![
        sizes[0],
        128,
        sizes[sizes.len() / 2],
        sizes[sizes.len() - 2],
        sizes[sizes.len() - 1],
    ];
    s.sort();
    s.dedup();
    s
}

#[test]
fn magbdi_matches_cpu() {
    let Some(gpu) = test_gpu() else { return };
    let data = corpus(64 * 1024);
    let sizes = block_sizes("magbdi");
    let mut configs: Vec<Params> = sample(&sizes)
        .into_iter()
        .map(|bb| Params::new(bb, 32, 4, DeltaMode::Unsigned))
        .collect();
    // other MAGs and the signed mode through the same kernels
    configs.push(Params::new(128, 16, 4, DeltaMode::Signed));
    configs.push(Params::new(128, 8, 4, DeltaMode::Unsigned));
    configs.push(Params::new(64, 16, 4, DeltaMode::Signed));
    for (c, p) in configs.iter().enumerate() {
        let bb = p.block_bytes;
        let cpu = MagBdi::new(*p).expect("params");
        let algo = magbdi::algo(p).expect("algo");
        let what = format!("magbdi {bb} B, MAG {}, {}", p.mag_bytes, p.mode);
        let mut blocks = spread(&data, bb, 3000);
        blocks.extend(random_blocks(bb, 300, 11 + c as u64));
        blocks.extend(mag_corners(p));
        check_all(&gpu, &cpu, &algo, &blocks, &what, 5 + c as u64);
        // the blocks reach every encoding, raw included
        let codes = run_compress(&gpu, &algo, &blocks).expect("compress");
        let t = cpu.table();
        for e in 0..=t.raw_code() {
            let bits = t.encoding_bits() as usize + 8 * t.size_of(e).expect("used encoding");
            assert!(
                codes.iter().any(|c| c.bits == bits),
                "{what}: no block of encoding {e} ({bits} bits)"
            );
        }
    }
}

#[test]
fn magbdi_refuses_other_bases() {
    for k in [2, 8] {
        let p = Params::new(128, 32, k, DeltaMode::Unsigned);
        assert!(MagBdi::new(p).is_ok());
        let e = magbdi::algo(&p).expect_err("only 4-byte bases");
        assert!(e.to_string().contains("4-byte bases"), "{e}");
    }
    assert!(magbdi::algo(&Params::new(16, 8, 8, DeltaMode::Unsigned)).is_err());
}

#[test]
fn dpc_matches_cpu() {
    let Some(gpu) = test_gpu() else { return };
    let data = corpus(64 * 1024);
    let sizes = block_sizes("dpc");
    let mut configs: Vec<DpcParams> = sample(&sizes)
        .into_iter()
        .map(|bb| DpcParams::new(bb, 4, 32).expect("params"))
        .collect();
    // blocks of one and two segments are legal though never coded
    configs.push(DpcParams::new(4, 4, 4).expect("params"));
    configs.push(DpcParams::new(8, 4, 8).expect("params"));
    for (c, p) in configs.iter().enumerate() {
        let bb = p.block_bytes();
        let cpu = Dpc::new(*p);
        let algo = dpc::algo(p).expect("algo");
        let what = format!("dpc {bb} B");
        let mut blocks = spread(&data, bb, 3000);
        blocks.extend(random_blocks(bb, 300, 21 + c as u64));
        blocks.extend(dpc_corners(p.segments(), 31 + c as u64));
        check_all(&gpu, &cpu, &algo, &blocks, &what, 7 + c as u64);
        // every count of uniform groups, so both sides of the raw boundary
        // (a one-segment block has only uniform groups)
        let mut seen = [p.segments() == 1; 33];
        seen[32] = false;
        for b in blocks.chunks(bb) {
            seen[cpu.analyse(b).es.count_ones() as usize] = true;
        }
        assert!(
            seen.iter().all(|&x| x),
            "{what}: uniform group counts {seen:?}"
        );
        if p.segments() > 2 {
            let codes = run_compress(&gpu, &algo, &blocks).expect("compress");
            assert!(
                codes.iter().any(|c| c.bits == 1 + 8 * bb),
                "{what}: no raw block"
            );
            assert!(
                codes.iter().any(|c| c.bits < 1 + 8 * bb),
                "{what}: no coded block"
            );
        }
    }
}

#[test]
fn dpc_refuses_other_segments() {
    for s in [1, 2, 8] {
        let p = DpcParams::new(128, s, 32).expect("params");
        let e = dpc::algo(&p).expect_err("only 4-byte segments");
        assert!(e.to_string().contains("4-byte segments"), "{e}");
    }
}
