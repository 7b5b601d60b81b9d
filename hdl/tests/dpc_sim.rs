//! The generated DPC units (plain, DF-TRUC, DF-MAN compressors; plain and
//! DF-TRUC decompressors), evaluated by the IR's simulator (`Sim`) against
//! the golden model: corner-case, structured, random and corpus blocks,
//! every critical mask, corrupted packets, with random valid/ready stalls.

use golden::dpc::{Dpc, DpcParams, Mode};
use hdl::dpc::{self, packet_width, DpcUnit};
use hdl::ir::{Bits, Module, Sim};

fn lcg(seed: &mut u64) -> u64 {
    *seed = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    *seed >> 11
}

fn block_bits(b: &[u8]) -> Bits {
    let words: Vec<u64> = b
        .chunks(8)
        .map(|c| {
            let mut w = [0u8; 8];
            w[..c.len()].copy_from_slice(c);
            u64::from_le_bytes(w)
        })
        .collect();
    Bits::from_words(&words, 8 * b.len() as u32).expect("width")
}

fn bits_block(v: &Bits, bytes: usize) -> Vec<u8> {
    v.words()
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .take(bytes)
        .collect()
}

/// Left-align a bit string (`len` bits of `bytes`) in a `w`-bit bus.
fn left_aligned(bytes: &[u8], len: usize, w: u32) -> Bits {
    let mut words = vec![0u64; (w as usize).div_ceil(64)];
    for k in 0..len.min(w as usize) {
        if (bytes.get(k / 8).copied().unwrap_or(0) >> (7 - k % 8)) & 1 == 1 {
            let pos = w as usize - 1 - k;
            words[pos / 64] |= 1 << (pos % 64);
        }
    }
    Bits::from_words(&words, w).expect("width")
}

/// The first `w` bits of a left-aligned bus as bytes.
fn bus_bytes(v: &Bits, w: u32) -> Vec<u8> {
    let mut out = vec![0u8; (w as usize).div_ceil(8)];
    for k in 0..w as usize {
        if v.bit(w - 1 - k as u32) {
            out[k / 8] |= 0x80 >> (k % 8);
        }
    }
    out
}

fn test_blocks(p: &DpcParams, n_random: usize, seed: u64) -> Vec<Vec<u8>> {
    let b = p.block_bytes();
    let mut s = seed;
    let mut v = vec![
        vec![0u8; b],
        vec![0xff; b],
        (0..b)
            .map(|i| if i % 4 == 0 { (i / 4) as u8 } else { 0 })
            .collect(),
        (0..b).map(|i| i as u8).collect(),
        (0..b)
            .map(|i| if i % 2 == 0 { 0x55 } else { 0xaa })
            .collect(),
    ];
    // One uniform group only (raw fallback by one bit).
    let mut one: Vec<u8> = (0..b).map(|_| lcg(&mut s) as u8).collect();
    for i in (p.segment_bytes() - 1..b).step_by(p.segment_bytes()) {
        one[i] &= 0x7f;
    }
    v.push(one);
    // Two uniform groups (the shortest coded block).
    let mut two: Vec<u8> = (0..b).map(|_| lcg(&mut s) as u8).collect();
    for i in (p.segment_bytes() - 1..b).step_by(p.segment_bytes()) {
        two[i] &= 0x3f;
    }
    v.push(two);
    // Sector-structured: some sectors zero, some ones, some small ints.
    for _ in 0..n_random {
        let kind = lcg(&mut s) % 4;
        let blk: Vec<u8> = match kind {
            0 => (0..b).map(|_| lcg(&mut s) as u8).collect(),
            1 => {
                let keep = lcg(&mut s) as u8 & lcg(&mut s) as u8;
                let set = lcg(&mut s) as u8 & lcg(&mut s) as u8 & lcg(&mut s) as u8;
                (0..b).map(|_| (lcg(&mut s) as u8 & keep) | set).collect()
            }
            2 => {
                let mut x: Vec<u8> = Vec::new();
                for _ in 0..p.sectors() {
                    let f = lcg(&mut s) % 3;
                    for _ in 0..p.sector_bytes() {
                        x.push(match f {
                            0 => 0,
                            1 => 0xff,
                            _ => lcg(&mut s) as u8,
                        });
                    }
                }
                x
            }
            _ => (0..b / 4)
                .flat_map(|_| ((lcg(&mut s) % 200) as u32).to_le_bytes())
                .collect(),
        };
        v.push(blk);
    }
    v
}

/// `per_file` blocks of every corpus file (none, after a recorded skip,
/// without the corpus; a failure under MPCGEN_REQUIRE_TOOLS=1).
fn corpus_blocks(b: usize, per_file: usize) -> Vec<Vec<u8>> {
    hdl::prereq::corpus_blocks("the corpus blocks of the DPC IR simulation", b, |n| {
        (0..per_file.min(n)).map(|i| i * 7919 % n.max(1)).collect()
    })
}

/// Drive `inputs` through `m` with random stalls on both sides; return
/// the outputs named `outs`, one vector per transfer, in order.
fn stream(
    m: &Module,
    inputs: &[Vec<(&'static str, Bits)>],
    outs: &[&str],
    seed: u64,
    stall: bool,
) -> Vec<Vec<Bits>> {
    let mut sim = Sim::new(m).expect("sim");
    let one = Bits::from_u128(1, 1).expect("1");
    let zero = Bits::from_u128(0, 1).expect("0");
    sim.set("rst", &one).expect("rst");
    sim.step();
    sim.set("rst", &zero).expect("rst");
    let mut s = seed;
    let mut next = 0usize;
    let mut got = Vec::new();
    let mut cycles = 0;
    while got.len() < inputs.len() {
        cycles += 1;
        assert!(cycles < 10 * inputs.len() + 100, "pipeline stuck");
        let offer = next < inputs.len() && (!stall || !lcg(&mut s).is_multiple_of(4));
        let ready = !stall || !lcg(&mut s).is_multiple_of(3);
        if next < inputs.len() {
            for (name, v) in &inputs[next] {
                sim.set(name, v).expect("set");
            }
        }
        sim.set("in_valid", if offer { &one } else { &zero })
            .expect("v");
        sim.set("out_ready", if ready { &one } else { &zero })
            .expect("r");
        if offer && sim.get_u128("in_ready").expect("in_ready") == 1 {
            next += 1;
        }
        if ready && sim.get_u128("out_valid").expect("out_valid") == 1 {
            got.push(outs.iter().map(|o| sim.get(o).expect("out")).collect());
        }
        sim.step();
    }
    got
}

fn check_compressor(p: &DpcParams, mode: Mode, blocks: &[Vec<u8>], seed: u64, stall: bool) {
    let d = Dpc::new(*p);
    let (m, _) = hdl::Family::build(p, DpcUnit::Compressor(mode).into()).expect("build");
    let w = packet_width(p, mode);
    let full = p.full_mask();
    let mut s = seed;
    let mut cases = Vec::new();
    for (i, b) in blocks.iter().enumerate() {
        let masks: Vec<u32> = if mode == Mode::Plain {
            vec![full]
        } else if i < 8 {
            (0..=full).collect()
        } else {
            vec![(lcg(&mut s) as u32) & full]
        };
        for mask in masks {
            cases.push((b.clone(), mask));
        }
    }
    let inputs: Vec<Vec<(&'static str, Bits)>> = cases
        .iter()
        .map(|(b, mask)| {
            let mut v = vec![("in_block", block_bits(b))];
            if mode != Mode::Plain {
                v.push((
                    "in_mask",
                    Bits::from_u128(*mask as u128, p.sectors() as u32).expect("mask"),
                ));
            }
            v
        })
        .collect();
    let mut outs = vec!["out_bits", "out_len"];
    if mode == Mode::Man {
        outs.push("out_manipulated");
    }
    let got = stream(&m, &inputs, &outs, seed, stall);
    for ((b, mask), o) in cases.iter().zip(&got) {
        let (want, manip) = match mode {
            Mode::Plain => (d.encode(b).expect("encode"), None),
            Mode::Truc => (d.encode_truc(b, *mask).expect("truc"), None),
            Mode::Man => {
                let r = d.encode_man(b, *mask).expect("man");
                (r.packet, Some(r.manipulated))
            }
        };
        let len = o[1].to_u128().expect("len") as usize;
        assert_eq!(
            (len, bus_bytes(&o[0], w)),
            (
                want.len,
                left_aligned(&want.bytes, want.len, w).pipe(|x| bus_bytes(&x, w))
            ),
            "{mode:?} mask {mask:#x} block {b:02x?}"
        );
        if let Some(mm) = manip {
            assert_eq!(o[2].bit(0), mm, "{mode:?} manipulated flag");
        }
    }
}

trait Pipe: Sized {
    fn pipe<R>(self, f: impl FnOnce(Self) -> R) -> R {
        f(self)
    }
}
impl<T> Pipe for T {}

fn check_decompressor(p: &DpcParams, truc: bool, blocks: &[Vec<u8>], seed: u64, stall: bool) {
    check_decompressor_staged(p, truc, 2, blocks, seed, stall)
}

fn check_decompressor_staged(
    p: &DpcParams,
    truc: bool,
    stages: usize,
    blocks: &[Vec<u8>],
    seed: u64,
    stall: bool,
) {
    let d = Dpc::new(*p);
    let mode = if truc { Mode::Truc } else { Mode::Plain };
    let (m, desc) = if stages == 2 {
        hdl::Family::build(p, DpcUnit::Decompressor(mode).into()).expect("build")
    } else {
        hdl::dpc::decompressor::build_staged(p, truc, stages).expect("build")
    };
    assert_eq!(desc.latency, stages, "latency of the {stages}-stage unit");
    let w = packet_width(p, mode);
    let lw = dpc::len_width(p, mode);
    let full = p.full_mask();
    let mut s = seed;
    let mut packets: Vec<(Vec<u8>, usize)> = Vec::new();
    for (i, b) in blocks.iter().enumerate() {
        let masks: Vec<u32> = if i < 6 {
            (0..=full).collect()
        } else {
            vec![(lcg(&mut s) as u32) & full]
        };
        for mask in masks {
            let c = if truc {
                d.encode_truc(b, mask).expect("truc")
            } else {
                d.encode_man(b, mask).expect("man").packet
            };
            packets.push((c.bytes.clone(), c.len));
            // Corruptions: wrong length, flipped bit.
            match lcg(&mut s) % 4 {
                0 => packets.push((c.bytes.clone(), c.len.saturating_sub(1))),
                1 => packets.push((c.bytes.clone(), (c.len + 1).min(w as usize))),
                2 => {
                    let mut x = c.bytes.clone();
                    let at = (lcg(&mut s) as usize) % c.len.max(1);
                    if let Some(byte) = x.get_mut(at / 8) {
                        *byte ^= 0x80 >> (at % 8);
                    }
                    packets.push((x, c.len));
                }
                _ => {}
            }
        }
    }
    // Random garbage.
    for _ in 0..20 {
        let x: Vec<u8> = (0..(w as usize).div_ceil(8))
            .map(|_| lcg(&mut s) as u8)
            .collect();
        let len = (lcg(&mut s) as usize) % (w as usize + 1);
        packets.push((x, len));
    }
    let inputs: Vec<Vec<(&'static str, Bits)>> = packets
        .iter()
        .map(|(x, len)| {
            vec![
                ("in_bits", left_aligned(x, *len, w)),
                ("in_len", Bits::from_u128(*len as u128, lw).expect("len")),
            ]
        })
        .collect();
    let mut outs = vec!["out_block", "out_error"];
    if truc {
        outs.push("out_mask");
    }
    let got = stream(&m, &inputs, &outs, seed ^ 0x5a, stall);
    let mut errors = 0;
    for ((x, len), o) in packets.iter().zip(&got) {
        // The golden decoder sees exactly the bits the RTL sees.
        let bus = bus_bytes(&left_aligned(x, *len, w), w);
        let want = if truc {
            d.decode_truc(&bus, *len)
        } else {
            d.decode(&bus, *len).map(|b| (b, 0))
        };
        let blk = bits_block(&o[0], p.block_bytes());
        let err = o[1].bit(0);
        let mask = if truc {
            o[2].to_u128().expect("mask") as u32
        } else {
            0
        };
        match want {
            Ok((b, wm)) => {
                assert!(!err, "RTL error on a valid packet of {len} bits");
                assert_eq!(blk, b, "block, packet of {len} bits");
                assert_eq!(mask, wm);
            }
            Err(e) => {
                errors += 1;
                assert!(err, "RTL accepted a packet golden rejects: {e}");
                assert!(blk.iter().all(|&x| x == 0));
                assert_eq!(mask, 0);
            }
        }
    }
    assert!(errors > 0, "no error cases exercised");
}

#[test]
fn compressors_match_golden() {
    let p = DpcParams::default();
    let mut blocks = test_blocks(&p, 40, 11);
    blocks.extend(corpus_blocks(p.block_bytes(), 1));
    for mode in Mode::ALL {
        check_compressor(&p, mode, &blocks, 3, false);
        check_compressor(&p, mode, &blocks[..20], 5, true);
    }
}

#[test]
fn decompressors_match_golden() {
    let p = DpcParams::default();
    let mut blocks = test_blocks(&p, 30, 13);
    blocks.extend(corpus_blocks(p.block_bytes(), 1));
    for truc in [false, true] {
        check_decompressor(&p, truc, &blocks, 7, false);
        check_decompressor(&p, truc, &blocks[..12], 9, true);
    }
}

#[test]
fn other_geometries_match_golden() {
    // 64-byte blocks of 2-byte segments, 16-byte sectors (4-bit mask);
    // 6 segments in 3 sectors (the unpacker's shifts are not powers of
    // two); one segment (never coded: every coded packet is longer than
    // the bus); sectors of one segment (DF-TRUC's fields: one segment per
    // critical sector).
    for (b, s, t) in [(64, 2, 16), (24, 4, 8), (8, 8, 8), (16, 4, 4)] {
        let p = DpcParams::new(b, s, t).expect("params");
        let blocks = test_blocks(&p, 12, 17);
        for mode in Mode::ALL {
            check_compressor(&p, mode, &blocks, 19, true);
        }
        for truc in [false, true] {
            check_decompressor(&p, truc, &blocks, 23, true);
        }
    }
}

#[test]
fn three_stage_decompressors_match_golden() {
    // the default geometry and the odd ones (shifts that are not powers
    // of two; one segment: nothing to unpack in the middle stage)
    for (b, sg, t) in [(128, 4, 32), (64, 2, 16), (24, 4, 8), (8, 8, 8), (16, 4, 4)] {
        let p = DpcParams::new(b, sg, t).expect("params");
        let mut blocks = test_blocks(&p, 12, 29);
        if b == 128 {
            blocks.extend(corpus_blocks(p.block_bytes(), 1));
        }
        for truc in [false, true] {
            check_decompressor_staged(&p, truc, 3, &blocks, 31, false);
            check_decompressor_staged(&p, truc, 3, &blocks[..12], 37, true);
        }
    }
}

#[test]
fn decompressor_depths_out_of_range_are_refused() {
    let p = DpcParams::default();
    for stages in [0, 1, 4] {
        let e = hdl::dpc::decompressor::build_staged(&p, true, stages)
            .err()
            .unwrap_or_else(|| panic!("{stages} stages accepted"));
        assert!(e.to_string().contains("2..=3"), "{e}");
    }
}
