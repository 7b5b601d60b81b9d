//! The bulk implementations of MAG-aware BDI and DPC against the golden
//! models: the same bits and lengths block by block (corpus, random and
//! corner blocks, several parameter sets), the same decoded bytes or the
//! same error message for any bit string, and byte-identical containers
//! for every block size the bulk layer takes.

use std::io::Cursor;
use std::path::Path;

use bulk::codec::{block_sizes, DynBulk, GpuKind};
use bulk::fast::{FastDpc, FastMagBdi};
use bulk::{compress, decompress, open_codec, BulkCodec, CompressOptions, Engine};
use datafiles::corpus::data_files_of;
use golden::baselines::BlockCodec;
use golden::dpc::{Dpc, DpcParams};
use golden::magbdi::{DeltaMode, MagBdi, Params};
use proptest::prelude::*;

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

/// The first `bytes` of every corpus file, concatenated.
fn corpus(bytes: usize) -> Vec<u8> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus");
    let files = data_files_of(&dir).unwrap_or_default();
    assert!(
        !files.is_empty(),
        "no corpus files at {}: this test needs the shared corpus beside the repository",
        dir.display()
    );
    let mut v = Vec::new();
    for f in files {
        let all = std::fs::read(&f).expect("read corpus file");
        v.extend_from_slice(&all[..all.len().min(bytes)]);
    }
    v
}

/// Blocks of `bb` bytes for words of `k` bytes: constant, all zeros / ones,
/// small values, a base with small deltas either way, values at the sign
/// and width boundaries, one odd value, noise in some bit planes.
fn corners(bb: usize, k: usize, rng: &mut Rng) -> Vec<Vec<u8>> {
    let n = bb / k;
    let wm = if k == 8 {
        u64::MAX
    } else {
        (1u64 << (8 * k)) - 1
    };
    let words = |f: &mut dyn FnMut(usize) -> u64| -> Vec<u8> {
        (0..n)
            .flat_map(|i| (f(i) & wm).to_le_bytes().into_iter().take(k))
            .collect()
    };
    let mut out = vec![vec![0u8; bb], vec![0xffu8; bb]];
    for d in 0..(8 * k as u32) {
        let lim = 1u64 << d;
        let base = rng.next();
        let r = rng.next();
        out.push(words(&mut |i| (i as u64 * 2654435761) % lim.max(1)));
        out.push(words(&mut |i| {
            lim.wrapping_sub(1).wrapping_sub(i as u64 % 3)
        }));
        out.push(words(&mut |i| lim.wrapping_add(i as u64 % 2)));
        out.push(words(&mut |i| {
            0u64.wrapping_sub(lim >> 1).wrapping_add(i as u64 % 4)
        }));
        out.push(words(&mut |i| match i % 3 {
            0 => base.wrapping_add((r >> (i % 32)) % lim.max(1)),
            1 => base.wrapping_sub((r >> (i % 29)) % lim.max(1)),
            _ => (r >> (i % 17)) % lim.max(1),
        }));
        out.push(words(&mut |i| {
            if i == n / 2 {
                base
            } else {
                i as u64 % lim.max(1)
            }
        }));
        // bit plane d noisy, the others constant
        out.push(words(&mut |i| {
            (0x5a5a_5a5a_5a5a_5a5a & !lim) | ((r >> (i % 64)) & 1) << d
        }));
        out.push(words(&mut |i| {
            if i == 0 {
                wm
            } else {
                (r >> (i % 64)) & lim
            }
        }));
    }
    out
}

fn random_blocks(bb: usize, count: usize, rng: &mut Rng) -> Vec<Vec<u8>> {
    (0..count)
        .map(|_| {
            // random bytes under a random per-byte mask: any density
            let m = rng.next();
            (0..bb)
                .map(|i| (rng.next() as u8) & (m >> (8 * (i % 8))) as u8)
                .collect()
        })
        .collect()
}

fn all_blocks(bb: usize, k: usize, seed: u64, corpus: &[u8]) -> Vec<Vec<u8>> {
    let mut rng = Rng(seed);
    let mut v = corners(bb, k, &mut rng);
    v.extend(random_blocks(bb, 150, &mut rng));
    v.extend(corpus.chunks_exact(bb).step_by(13).map(<[u8]>::to_vec));
    v
}

/// The first `len` bits of `b` (the rest of the last byte cleared).
fn bits_of(b: &[u8], len: usize) -> Vec<u8> {
    let mut v = b[..len.div_ceil(8)].to_vec();
    if !len.is_multiple_of(8) {
        if let Some(last) = v.last_mut() {
            *last &= 0xffu8 << (8 - len % 8);
        }
    }
    v
}

fn mag_sets() -> Vec<Params> {
    let mut v: Vec<Params> = block_sizes("magbdi")
        .into_iter()
        .map(|bb| Params::new(bb, 32, 4, DeltaMode::Unsigned))
        .collect();
    for (bb, mag, k) in [
        (128, 32, 4),
        (64, 16, 2),
        (16, 8, 2),
        (256, 64, 8),
        (256, 32, 8),
        (96, 32, 4),
        (64, 1, 2),
        (512, 64, 8),
    ] {
        for mode in [DeltaMode::Unsigned, DeltaMode::Signed] {
            v.push(Params::new(bb, mag, k, mode));
        }
    }
    v
}

fn dpc_sets() -> Vec<DpcParams> {
    let mut v: Vec<DpcParams> = block_sizes("dpc")
        .into_iter()
        .map(|bb| DpcParams::new(bb, 4, 32).expect("bulk dpc"))
        .collect();
    for (bb, s, sec) in [
        (128, 1, 32),
        (64, 2, 16),
        (256, 8, 64),
        (1024, 1, 32),
        (1024, 8, 32),
        (96, 8, 32),
        (40, 8, 8),
        (8, 1, 1),
        (24, 2, 2),
    ] {
        v.push(DpcParams::new(bb, s, sec).expect("dpc params"));
    }
    v
}

#[test]
fn magbdi_bits_match_the_golden_model() {
    let data = corpus(1 << 14);
    for p in mag_sets() {
        let gold = MagBdi::new(p).expect("golden params");
        let fast = FastMagBdi::new(p).expect("fast params");
        assert_eq!(fast.max_bits(), gold.max_bits());
        let mut out = vec![0u8; p.block_bytes];
        for (i, block) in all_blocks(p.block_bytes, p.base_bytes, 7 + p.block_bytes as u64, &data)
            .iter()
            .enumerate()
        {
            let g = gold.compress(block);
            let (fb, fl) = fast.compress(block);
            assert_eq!(fl, g.len, "{p:?} block {i}: length");
            assert_eq!(
                bits_of(&fb, fl),
                bits_of(&g.bytes, g.len),
                "{p:?} block {i}"
            );
            fast.decompress_into(&fb, fl, &mut out)
                .unwrap_or_else(|e| panic!("{p:?} block {i}: {e}"));
            assert_eq!(&out, block, "{p:?} block {i}: round trip");
        }
    }
}

#[test]
fn dpc_bits_match_the_golden_model() {
    let data = corpus(1 << 14);
    for p in dpc_sets() {
        let gold = Dpc::new(p);
        let fast = FastDpc::new(p);
        assert_eq!(fast.max_bits(), BlockCodec::max_bits(&gold));
        let mut out = vec![0u8; p.block_bytes()];
        let k = p.segment_bytes();
        for (i, block) in all_blocks(p.block_bytes(), k, 11 + p.block_bytes() as u64, &data)
            .iter()
            .enumerate()
        {
            let g = gold.compress(block);
            let (fb, fl) = fast.compress(block);
            assert_eq!(fl, g.len, "{p:?} block {i}: length");
            assert_eq!(
                bits_of(&fb, fl),
                bits_of(&g.bytes, g.len),
                "{p:?} block {i}"
            );
            fast.decompress_into(&fb, fl, &mut out)
                .unwrap_or_else(|e| panic!("{p:?} block {i}: {e}"));
            assert_eq!(&out, block, "{p:?} block {i}: round trip");
        }
    }
}

/// Bit strings around valid packets: truncated, extended, bits flipped,
/// the buffer shorter than the length, random bits of any length.
fn hostile(valid: &[(Vec<u8>, usize)], max_bits: usize, rng: &mut Rng) -> Vec<(Vec<u8>, usize)> {
    let mut v = Vec::new();
    for (b, len) in valid {
        let mut padded = b.clone();
        padded.resize(max_bits.div_ceil(8) + 16, 0);
        v.push((b.clone(), *len));
        for cut in [1, 2, 7, 8, 9, 33] {
            if *len >= cut {
                v.push((bits_of(b, len - cut), len - cut));
            }
        }
        for extra in [1, 5, 8, 64] {
            let mut e = padded.clone();
            let at = len / 8;
            e[at] |= (rng.next() as u8) & (0xffu8 >> (len % 8));
            v.push((e.clone(), len + extra));
        }
        for _ in 0..4 {
            let mut f = bits_of(b, *len);
            if *len > 0 {
                let at = rng.below(*len as u64) as usize;
                f[at / 8] ^= 0x80 >> (at % 8);
            }
            v.push((f, *len));
        }
        if *len > 8 {
            v.push((b[..len.div_ceil(8) - 1].to_vec(), *len));
        }
    }
    for _ in 0..100 {
        let len = rng.below(max_bits as u64 + 70) as usize;
        let bytes: Vec<u8> = (0..len.div_ceil(8)).map(|_| rng.next() as u8).collect();
        v.push((bytes, len));
    }
    v.push((Vec::new(), 0));
    v
}

fn same_outcome(what: &str, gold: Result<Vec<u8>, String>, fast: Result<Vec<u8>, String>) {
    match (gold, fast) {
        (Ok(g), Ok(f)) => assert_eq!(g, f, "{what}: decoded bytes"),
        (Err(g), Err(f)) => assert_eq!(g, f, "{what}: error"),
        (g, f) => panic!("{what}: golden {g:?}, fast {f:?}"),
    }
}

#[test]
fn decode_errors_match_the_golden_models() {
    let data = corpus(1 << 12);
    for p in mag_sets() {
        let gold = MagBdi::new(p).expect("golden params");
        let fast = FastMagBdi::new(p).expect("fast params");
        let mut rng = Rng(99 + p.block_bytes as u64);
        let valid: Vec<_> = all_blocks(p.block_bytes, p.base_bytes, 5, &data)
            .iter()
            .step_by(16)
            .map(|b| fast.compress(b))
            .collect();
        for (i, (bits, len)) in hostile(&valid, fast.max_bits(), &mut rng)
            .iter()
            .enumerate()
        {
            let mut out = vec![0u8; p.block_bytes];
            let f = fast
                .decompress_into(bits, *len, &mut out)
                .map(|()| out)
                .map_err(|e| e.to_string());
            let g = gold.decompress(bits, *len).map_err(|e| e.to_string());
            same_outcome(&format!("{p:?} string {i} ({len} bits)"), g, f);
        }
        // an output buffer that is not one block is an error, not a panic
        let (b, len) = &valid[0];
        let mut short = vec![0u8; p.block_bytes - 1];
        assert!(fast.decompress_into(b, *len, &mut short).is_err());
    }
    for p in dpc_sets() {
        let gold = Dpc::new(p);
        let fast = FastDpc::new(p);
        let mut rng = Rng(77 + p.block_bytes() as u64);
        let valid: Vec<_> = all_blocks(p.block_bytes(), p.segment_bytes(), 3, &data)
            .iter()
            .step_by(16)
            .map(|b| fast.compress(b))
            .collect();
        for (i, (bits, len)) in hostile(&valid, fast.max_bits(), &mut rng)
            .iter()
            .enumerate()
        {
            let mut out = vec![0u8; p.block_bytes()];
            let f = fast
                .decompress_into(bits, *len, &mut out)
                .map(|()| out)
                .map_err(|e| e.to_string());
            let g = gold.decompress(bits, *len).map_err(|e| e.to_string());
            same_outcome(&format!("{p:?} string {i} ({len} bits)"), g, f);
        }
        let (b, len) = &valid[0];
        let mut long = vec![0u8; p.block_bytes() + 1];
        assert!(fast.decompress_into(b, *len, &mut long).is_err());
    }
}

/// The golden model behind the generic wrapper: the containers the bulk
/// layer wrote before it had its own implementations.
fn golden_codec(algo: &str, bb: usize) -> DynBulk {
    match algo {
        "magbdi" => {
            let p = Params::new(bb, 32, 4, DeltaMode::Unsigned);
            DynBulk::new(algo, Box::new(MagBdi::new(p).expect("params")))
                .with_gpu(GpuKind::MagBdi(p))
        }
        _ => {
            let p = DpcParams::new(bb, 4, 32).expect("params");
            DynBulk::new(algo, Box::new(Dpc::new(p))).with_gpu(GpuKind::Dpc(p))
        }
    }
}

fn pack(codec: &dyn BulkCodec, data: &[u8]) -> Vec<u8> {
    let opts = CompressOptions {
        chunk_blocks: 64,
        engine: Engine::Single,
        original_len: Some(data.len() as u64),
        ..CompressOptions::default()
    };
    let mut out = Vec::new();
    compress(codec, Cursor::new(data), &mut out, &opts, &|_| {}).expect("compress");
    out
}

fn unpack(codec: &dyn BulkCodec, packed: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    decompress(
        codec,
        Cursor::new(packed),
        &mut out,
        Engine::Single,
        4,
        &|_| {},
    )
    .map_err(|e| e.to_string())?;
    Ok(out)
}

#[test]
fn containers_are_byte_identical_for_every_block_size() {
    let mut data = corpus(3000);
    let mut rng = Rng(5);
    data.extend((0..5000).map(|_| rng.next() as u8 & 0x0f));
    data.truncate(data.len() - 13); // a ragged last block
    for algo in ["magbdi", "dpc"] {
        for bb in block_sizes(algo) {
            let fast = open_codec(algo, None, Some(bb)).expect("open");
            let gold = golden_codec(algo, bb);
            assert_eq!(fast.identity(), gold.identity(), "{algo} {bb}");
            assert_eq!(fast.max_bits(), gold.max_bits(), "{algo} {bb}");
            let packed = pack(fast.as_ref(), &data);
            assert_eq!(packed, pack(&gold, &data), "{algo} {bb}: containers differ");
            assert_eq!(
                unpack(fast.as_ref(), &packed).as_deref(),
                Ok(&data[..]),
                "{algo} {bb}"
            );
            // a damaged container fails the same way through both
            for at in [40, packed.len() / 2, packed.len() - 30] {
                let mut bad = packed.clone();
                bad[at] ^= 0x24;
                assert_eq!(
                    unpack(fast.as_ref(), &bad),
                    unpack(&gold, &bad),
                    "{algo} {bb}: byte {at} flipped"
                );
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Any block, any parameter set of the bulk layer's kind: the same bits.
    #[test]
    fn random_blocks_code_the_same(
        seed in any::<u64>(),
        set in 0usize..64,
        density in any::<u64>(),
    ) {
        let mags = mag_sets();
        let p = mags[set % mags.len()];
        let mut rng = Rng(seed | 1);
        let block: Vec<u8> = (0..p.block_bytes)
            .map(|i| rng.next() as u8 & (density >> (8 * (i % 8))) as u8)
            .collect();
        let g = MagBdi::new(p).expect("params").compress(&block);
        let (fb, fl) = FastMagBdi::new(p).expect("params").compress(&block);
        prop_assert_eq!(fl, g.len);
        prop_assert_eq!(bits_of(&fb, fl), bits_of(&g.bytes, g.len));

        let dpcs = dpc_sets();
        let q = dpcs[set % dpcs.len()];
        let block: Vec<u8> = (0..q.block_bytes())
            .map(|i| rng.next() as u8 & (density >> (8 * (i % 8))) as u8)
            .collect();
        let g = Dpc::new(q).compress(&block);
        let (fb, fl) = FastDpc::new(q).compress(&block);
        prop_assert_eq!(fl, g.len);
        prop_assert_eq!(bits_of(&fb, fl), bits_of(&g.bytes, g.len));
    }
}
