//! The MPC kernels of the GPU engine against the CPU codec
//! ([`MpcCodec`]): every shipped model set under both selection rules (and
//! with the custom models left out), on corpus blocks, random blocks and
//! corner cases; decoding in segments of 1, 32 and many blocks; corrupted
//! payloads and wrong segment sizes fail exactly where the CPU walk of the
//! bulk layer fails. Runs on llvmpipe in CI (`MPCGEN_REQUIRE_GPU=1`).
#![cfg(feature = "gpu")]

#[path = "../../golden/tests/common/mod.rs"]
mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use bulk::gpu::device::test_gpu;
use bulk::gpu::kernel::{run_compress, run_decompress, Segment};
use bulk::gpu::{mpc, Gpu, GpuAlgo};
use golden::mpc::{ByteRule, ModelSet, MpcCodec, Selection};

const BB: usize = 32;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every shipped model set, as shipped, with the other selection rule, and
/// (for the first) without either custom model.
fn variants() -> Vec<ModelSet> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root().join("models"))
        .expect("models/ directory")
        .map(|e| e.expect("models/ entry").path())
        .filter(|p| p.join("model.toml").is_file())
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 2, "shipped model sets missing: {dirs:?}");
    let mut out = Vec::new();
    for d in &dirs {
        let set = ModelSet::load(&d.join("model.toml"))
            .unwrap_or_else(|e| panic!("{}: {e}", d.display()));
        let mut other = set.clone();
        other.selection = match set.selection {
            Selection::ZeroRun => Selection::Exact,
            Selection::Exact => Selection::ZeroRun,
        };
        out.push(set);
        out.push(other);
    }
    for (zb, sw) in [(false, true), (true, false), (false, false)] {
        for sel in [Selection::ZeroRun, Selection::Exact] {
            let mut s = out[0].clone();
            s.custom.zero_block = zb;
            s.custom.same_words = sw;
            s.selection = sel;
            out.push(s);
        }
    }
    out
}

/// 96 blocks from the start and 96 from the middle of every corpus file.
fn corpus_blocks() -> Vec<u8> {
    let files = common::corpus_bin_files();
    assert!(
        files.len() >= 4,
        "the corpus has {} .bin files, the MPC GPU tests need several",
        files.len()
    );
    let mut v = Vec::new();
    for f in &files {
        let data = std::fs::read(f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let n = data.len() / BB;
        for start in [0, n / 2] {
            let end = (start + 96).min(n);
            v.extend_from_slice(&data[start * BB..end * BB]);
        }
    }
    assert!(v.len() / BB >= 2000, "only {} corpus blocks", v.len() / BB);
    v
}

/// A block predictor `p` predicts perfectly from random roots.
fn grown(set: &ModelSet, p: usize, rng: &mut Rng, small: bool) -> [u8; BB] {
    let pr = &set.predictors[p];
    let order = golden::mpc::transform::restore_order(pr);
    let mut b = [0u8; BB];
    for &i in &order {
        b[i] = match pr.bytes[i] {
            ByteRule::Root => rng.next() as u8 & if small { 3 } else { 0xff },
            r => r
                .predict(&b)
                .wrapping_add(if small { rng.below(2) as u8 } else { 0 }),
        };
    }
    b
}

/// Corner cases, random blocks and blocks grown from each predictor.
fn special_blocks(set: &ModelSet) -> Vec<u8> {
    let mut v = Vec::new();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    v.extend_from_slice(&[0u8; BB]);
    v.extend_from_slice(&[0xffu8; BB]);
    for w in [
        [1u8, 2, 3, 4],
        [0, 0, 0, 0x80],
        [0xff, 0, 0, 0],
        [7, 7, 7, 7],
    ] {
        for _ in 0..8 {
            v.extend_from_slice(&w);
        }
    }
    for i in 0..BB {
        for val in [1u8, 0x80, 0xff, 0x5a] {
            let mut b = [0u8; BB];
            b[i] = val;
            v.extend_from_slice(&b);
            let mut c = [0xffu8; BB];
            c[i] = !val;
            v.extend_from_slice(&c);
        }
    }
    for k in 0..300 {
        let mut b = [0u8; BB];
        for x in b.iter_mut() {
            *x = match k % 3 {
                0 => rng.next() as u8,
                1 => rng.below(4) as u8,
                _ => (rng.below(3) as u8).wrapping_sub(1),
            };
        }
        v.extend_from_slice(&b);
    }
    for p in 0..set.predictors.len() {
        for k in 0..24 {
            v.extend_from_slice(&grown(set, p, &mut rng, k % 2 == 1));
        }
    }
    v
}

fn gpu() -> Option<Gpu> {
    test_gpu()
}

fn label(set: &ModelSet) -> String {
    format!(
        "{} ({:?}, zero-block {}, same-words {})",
        set.name, set.selection, set.custom.zero_block, set.custom.same_words
    )
}

/// GPU codes equal the CPU's; returns the model IDs the blocks used.
fn check_compress(gpu: &Gpu, algo: &GpuAlgo, set: &ModelSet, blocks: &[u8]) -> BTreeSet<u32> {
    let codec = MpcCodec::new(set);
    let codes = run_compress(gpu, algo, blocks).expect("compress kernel");
    assert_eq!(codes.len(), blocks.len() / BB);
    let mut ids = BTreeSet::new();
    for (i, (b, code)) in blocks.chunks_exact(BB).zip(&codes).enumerate() {
        let block: &[u8; BB] = b.try_into().expect("block");
        let cpu = codec.compress(block);
        ids.insert(cpu.model);
        assert_eq!(
            (code.bits, code.bytes.as_slice()),
            (cpu.len as usize, cpu.as_bytes()),
            "{}: block {i} {block:02x?} (CPU model {})",
            label(set),
            cpu.model
        );
    }
    ids
}

/// The kernels of variant `k`: with the tables bound as a uniform array
/// (the default for the shipped sets), and for the first variant also
/// from a storage buffer (the binding of sets too large for a uniform).
fn algos(k: usize, set: &ModelSet) -> Vec<GpuAlgo> {
    let algo = mpc::algo(set).expect("algo");
    assert!(algo.tables_uniform(), "{}: tables not uniform", label(set));
    let mut out = vec![algo];
    if k == 0 {
        let storage = mpc::algo_with(set, false).expect("algo");
        assert!(!storage.tables_uniform());
        out.push(storage);
    }
    out
}

#[test]
fn compress_equals_the_cpu_codec() {
    let Some(gpu) = gpu() else { return };
    let corpus = corpus_blocks();
    for (k, set) in variants().into_iter().enumerate() {
        let mut blocks = corpus.clone();
        blocks.extend(special_blocks(&set));
        let mut ids = BTreeSet::new();
        for algo in algos(k, &set) {
            ids = check_compress(&gpu, &algo, &set, &blocks);
        }
        // every model of the set was exercised
        for id in 0..set.id_count() as u32 {
            assert!(
                ids.contains(&id),
                "{}: no test block selects model {id} ({})",
                label(&set),
                set.id_name(id)
            );
        }
    }
}

/// The CPU codes of `blocks` back to back, and where each starts.
fn pack(codec: &MpcCodec, blocks: &[u8]) -> (Vec<u8>, Vec<usize>) {
    let mut bytes = Vec::new();
    let mut bits = 0usize;
    let mut starts = Vec::new();
    for b in blocks.chunks_exact(BB) {
        let c = codec.compress(b.try_into().expect("block"));
        starts.push(bits);
        for k in 0..c.len as usize {
            if bits.is_multiple_of(8) {
                bytes.push(0);
            }
            if c.bit(k) {
                bytes[bits / 8] |= 0x80 >> (bits % 8);
            }
            bits += 1;
        }
    }
    starts.push(bits);
    (bytes, starts)
}

/// The bulk layer's walk over one segment (`chunk::walk`, self-delimiting
/// codes): the decoded blocks, or `None` where it reports an error.
fn cpu_walk(codec: &MpcCodec, max: usize, src: &[u8], s: &Segment) -> Option<Vec<u8>> {
    let end = (s.start_bit + s.bits) as usize;
    let mut at = s.start_bit as usize;
    let mut out = Vec::new();
    for _ in 0..s.blocks {
        let avail = (end - at).min(max);
        if avail == 0 {
            return None;
        }
        let (block, used) = codec.decompress_at(src, at, avail).ok()?;
        if used == 0 {
            return None;
        }
        at += used;
        out.extend_from_slice(&block);
    }
    (at == end).then_some(out)
}

/// Run the decompress kernel on `segs` (consecutive block numbers from 0)
/// and compare with the CPU walk: equal failure, equal blocks on success.
/// Returns the number of failing segments.
fn check_segments(
    gpu: &Gpu,
    algo: &GpuAlgo,
    set: &ModelSet,
    src: &[u8],
    segs: &[Segment],
) -> usize {
    let codec = MpcCodec::new(set);
    let max = set.max_bits() as usize;
    let blocks = segs.iter().map(|s| s.blocks as usize).sum();
    // the host pads the payload with 8 zero bytes; the CPU reads the same
    let mut padded = src.to_vec();
    padded.resize(src.len() + 8, 0);
    let (out, status) = run_decompress(gpu, algo, src, segs, blocks).expect("decompress kernel");
    let mut failed = 0;
    for (k, (s, &st)) in segs.iter().zip(&status).enumerate() {
        let cpu = cpu_walk(&codec, max, &padded, s);
        let at = s.first_block as usize * BB;
        let gpu_blocks = &out[at..at + s.blocks as usize * BB];
        match &cpu {
            None => {
                failed += 1;
                assert_ne!(
                    st,
                    0,
                    "{}: segment {k} {s:?}: the CPU fails, the GPU says 0",
                    label(set)
                );
            }
            Some(b) => {
                assert_eq!(
                    st,
                    0,
                    "{}: segment {k} {s:?}: the CPU decodes, GPU status {st}",
                    label(set)
                );
                assert_eq!(
                    gpu_blocks,
                    b.as_slice(),
                    "{}: segment {k} {s:?}",
                    label(set)
                );
            }
        }
    }
    failed
}

/// Segments over the blocks of `starts` cut after `sizes` blocks in turn.
fn segments(starts: &[usize], sizes: &[usize]) -> Vec<Segment> {
    let n = starts.len() - 1;
    let mut segs = Vec::new();
    let (mut b, mut k) = (0, 0);
    while b < n {
        let c = sizes[k % sizes.len()].min(n - b);
        segs.push(Segment {
            start_bit: starts[b] as u32,
            bits: (starts[b + c] - starts[b]) as u32,
            first_block: b as u32,
            blocks: c as u32,
        });
        b += c;
        k += 1;
    }
    segs
}

#[test]
fn decompress_round_trips_in_segments() {
    let Some(gpu) = gpu() else { return };
    let corpus = corpus_blocks();
    for (k, set) in variants().into_iter().enumerate() {
        let codec = MpcCodec::new(&set);
        let mut blocks = corpus.clone();
        blocks.extend(special_blocks(&set));
        let (src, starts) = pack(&codec, &blocks);
        for (algo, sizes) in algos(k, &set).into_iter().flat_map(|a| {
            [&[1usize][..], &[32], &[1, 32, 5, 300, 3, 64, 200]].map(|s| (a.clone(), s))
        }) {
            let segs = segments(&starts, sizes);
            assert_eq!(check_segments(&gpu, &algo, &set, &src, &segs), 0);
            let (out, _) = run_decompress(&gpu, &algo, &src, &segs, blocks.len() / BB)
                .expect("decompress kernel");
            assert_eq!(out, blocks, "{}: round trip", label(&set));
        }
    }
}

#[test]
fn corrupt_payloads_fail_where_the_cpu_fails() {
    let Some(gpu) = gpu() else { return };
    let corpus = corpus_blocks();
    let mut rng = Rng(0x1234_5678_9abc_def1);
    for set in variants() {
        let algo = mpc::algo(&set).expect("algo");
        let codec = MpcCodec::new(&set);
        let mut blocks = corpus[..600 * BB].to_vec();
        blocks.extend(special_blocks(&set));
        let (src, starts) = pack(&codec, &blocks);
        let total = 8 * src.len() as u32;
        let mut segs = segments(&starts, &[1, 4, 32, 2, 9]);
        // bit flips
        let mut flipped = src.clone();
        for _ in 0..segs.len() / 2 {
            let bit = rng.below(starts[starts.len() - 1] as u64) as usize;
            flipped[bit / 8] ^= 0x80 >> (bit % 8);
        }
        let failed = check_segments(&gpu, &algo, &set, &flipped, &segs);
        assert!(failed > 0, "{}: no flip was detected", label(&set));
        assert!(failed < segs.len(), "{}: every segment failed", label(&set));
        // segment sizes off by a little, within the payload
        for s in segs.iter_mut() {
            let d = rng.below(7) as u32;
            match rng.below(3) {
                0 => s.bits = s.bits.saturating_sub(d + 1),
                1 => s.bits = (s.bits + d + 1).min(total - s.start_bit),
                _ => {}
            }
        }
        let failed = check_segments(&gpu, &algo, &set, &src, &segs);
        assert!(failed > 0, "{}: no wrong size was detected", label(&set));
        // random garbage, random segment sizes
        let garbage: Vec<u8> = (0..src.len()).map(|_| rng.next() as u8).collect();
        let mut gsegs = Vec::new();
        let (mut at, mut b) = (0u32, 0u32);
        while at < total - 600 {
            let blocks = 1 + rng.below(3) as u32;
            let bits = (rng.below(300 * blocks as u64) as u32).min(total - at);
            gsegs.push(Segment {
                start_bit: at,
                bits,
                first_block: b,
                blocks,
            });
            at += bits;
            b += blocks;
        }
        check_segments(&gpu, &algo, &set, &garbage, &gsegs);
        // garbage whose segments are the lengths of real blocks: some decode
        let mut lsegs = Vec::new();
        for (k, w) in starts.windows(2).enumerate() {
            lsegs.push(Segment {
                start_bit: w[0] as u32,
                bits: (w[1] - w[0]) as u32,
                first_block: k as u32,
                blocks: 1,
            });
        }
        let failed = check_segments(&gpu, &algo, &set, &garbage, &lsegs);
        assert!(
            failed > 0 && failed < lsegs.len(),
            "{}: garbage: {failed} of {} failed",
            label(&set),
            lsegs.len()
        );
    }
}
