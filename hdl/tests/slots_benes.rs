//! The Benes networks of the slot reorders (`hdl::mpc::slots::benes`,
//! `benes_inverse`), evaluated by the IR simulator, against a direct
//! recursive reading of `B(N)` (`docs/hw/program-slots.md` section 2) and
//! the golden `golden::mpc::program::benes::apply` / `apply_inverse` on
//! random settings: 1-bit elements (the 256 stream bits), 8-bit elements
//! (the 32 byte columns), and small networks; and on the settings
//! `benes::route` gives for random permutations.

use golden::mpc::program::benes as golden_benes;
use hdl::ir::{Bits, Expr, Module, Sim};
use hdl::mpc::slots::{benes, benes_inverse, BenesPlan};

fn lcg(seed: &mut u64) -> u64 {
    *seed = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    *seed >> 11
}

/// `B(N)` read from its definition: `y` from `x` with `settings`.
fn reference(settings: &[bool], x: &[u64]) -> Vec<u64> {
    let n = x.len();
    if n == 2 {
        return if settings[0] {
            vec![x[1], x[0]]
        } else {
            vec![x[0], x[1]]
        };
    }
    let half = n / 2;
    let sub = BenesPlan::settings_of(half);
    let (mut upper, mut lower) = (Vec::new(), Vec::new());
    for i in 0..half {
        let (a, b) = if settings[i] {
            (x[2 * i + 1], x[2 * i])
        } else {
            (x[2 * i], x[2 * i + 1])
        };
        upper.push(a);
        lower.push(b);
    }
    let up = reference(&settings[half..half + sub], &upper);
    let low = reference(&settings[half + sub..half + 2 * sub], &lower);
    let out = &settings[half + 2 * sub..];
    let mut y = Vec::with_capacity(n);
    for j in 0..half {
        if out[j] {
            y.extend([low[j], up[j]]);
        } else {
            y.extend([up[j], low[j]]);
        }
    }
    y
}

/// A bus of `w`-bit elements, element 0 in the low bits.
fn pack(vals: &[u64], w: u32) -> Bits {
    let total = vals.len() as u32 * w;
    let mut words = vec![0u64; (total as usize).div_ceil(64)];
    for (i, &v) in vals.iter().enumerate() {
        for b in 0..w {
            if (v >> b) & 1 == 1 {
                let pos = i as u32 * w + b;
                words[pos as usize / 64] |= 1 << (pos % 64);
            }
        }
    }
    Bits::from_words(&words, total).expect("width")
}

fn unpack(bits: &Bits, n: usize, w: u32) -> Vec<u64> {
    let words = bits.words();
    (0..n)
        .map(|i| {
            (0..w).fold(0u64, |v, b| {
                let pos = i as u32 * w + b;
                v | ((words[pos as usize / 64] >> (pos % 64)) & 1) << b
            })
        })
        .collect()
}

/// A module `x` (n elements of w bits), `c` (the settings) -> `y`
/// (forward) and `x_back` (the inverse of `y`).
fn network(n: usize, w: u32) -> Module {
    let s = BenesPlan::settings_of(n);
    let mut m = Module::new("benes_test").expect("module");
    let x = m.input("x", n as u32 * w).expect("x").expr();
    let c = m.input("c", s as u32).expect("c").expr();
    let y_out = m.output("y", n as u32 * w).expect("y");
    let back_out = m.output("x_back", n as u32 * w).expect("x_back");
    let xs: Vec<Expr> = (0..n as u32)
        .map(|i| x.slice(w * i + w - 1, w * i).expect("slice"))
        .collect();
    let cs: Vec<Expr> = (0..s as u32).map(|i| c.bit(i).expect("bit")).collect();
    let y = benes(&mut m, "fwd", &cs, &xs).expect("benes");
    let back = benes_inverse(&mut m, "inv", &cs, &y).expect("benes_inverse");
    m.assign(&y_out, Expr::concat(y.into_iter().rev()).expect("cat"))
        .expect("assign");
    m.assign(
        &back_out,
        Expr::concat(back.into_iter().rev()).expect("cat"),
    )
    .expect("assign");
    m.emit(&[]).expect("passes the generation-time lint");
    m
}

fn check(n: usize, w: u32, trials: usize, seed: &mut u64) {
    let m = network(n, w);
    let mut sim = Sim::new(&m).expect("sim");
    let s = BenesPlan::settings_of(n);
    let plan = BenesPlan::new(n).expect("plan");
    assert_eq!(plan.depth(), 2 * n.trailing_zeros() as usize - 1);
    for t in 0..trials {
        let settings: Vec<bool> = (0..s)
            .map(|_| match t {
                0 => false,
                1 => true,
                _ => lcg(seed) & 1 == 1,
            })
            .collect();
        let x: Vec<u64> = (0..n).map(|_| lcg(seed) & ((1u64 << w) - 1)).collect();
        let c: Vec<u64> = settings.iter().map(|&b| b as u64).collect();
        sim.set("x", &pack(&x, w)).expect("x");
        sim.set("c", &pack(&c, 1)).expect("c");
        let y = unpack(&sim.get("y").expect("y"), n, w);
        assert_eq!(y, reference(&settings, &x), "B({n}) forward, trial {t}");
        assert_eq!(
            y,
            golden_benes::apply(&settings, &x),
            "B({n}) golden, trial {t}"
        );
        let back = unpack(&sim.get("x_back").expect("x_back"), n, w);
        assert_eq!(back, x, "B({n}) inverse of forward, trial {t}");
        // the inverse circuit alone: x from y
        assert_eq!(
            golden_benes::apply_inverse(&settings, &y),
            x,
            "B({n}) golden inverse, trial {t}"
        );
    }
}

#[test]
fn benes_256_bits_matches_the_definition() {
    let mut seed = 1;
    check(256, 1, 24, &mut seed);
}

#[test]
fn benes_32_columns_matches_the_definition() {
    let mut seed = 2;
    check(32, 8, 40, &mut seed);
}

#[test]
fn small_benes_networks_match_the_definition() {
    let mut seed = 3;
    for n in [2, 4, 8, 16] {
        check(n, 3, 30, &mut seed);
    }
}

/// Every setting of the 4-input network moves values: the 6 settings bits
/// give 64 networks, and the reference and the circuit agree on all.
#[test]
fn every_setting_of_b4_matches() {
    let m = network(4, 4);
    let mut sim = Sim::new(&m).expect("sim");
    let x = [1u64, 2, 3, 4];
    let mut outputs = std::collections::HashSet::new();
    for c in 0..64u64 {
        let settings: Vec<bool> = (0..6).map(|b| (c >> b) & 1 == 1).collect();
        sim.set("x", &pack(&x, 4)).expect("x");
        sim.set("c", &Bits::from_u128(c as u128, 6).expect("c"))
            .expect("c");
        let y = unpack(&sim.get("y").expect("y"), 4, 4);
        assert_eq!(y, reference(&settings, &x), "settings {c:06b}");
        outputs.insert(y);
    }
    // B(4) reaches all 24 permutations
    assert_eq!(outputs.len(), 24);
}

#[test]
fn a_network_of_no_power_of_two_is_refused() {
    let mut m = Module::new("bad").expect("module");
    let x = m.input("x", 3).expect("x").expr();
    let xs: Vec<Expr> = (0..3).map(|i| x.bit(i).expect("bit")).collect();
    assert!(benes(&mut m, "b", &[], &xs).is_err());
    assert!(BenesPlan::new(1).is_err());
}

/// The settings `benes::route` gives for a random permutation make the
/// circuit put `x[p[o]]` at output `o`, for 256 bits and 32 columns.
#[test]
fn routed_permutations_reorder_as_asked() {
    let mut seed = 4;
    for (n, w) in [(256usize, 1u32), (32, 8)] {
        let m = network(n, w);
        let mut sim = Sim::new(&m).expect("sim");
        for _ in 0..6 {
            let mut p: Vec<usize> = (0..n).collect();
            for a in (1..n).rev() {
                p.swap(a, (lcg(&mut seed) % (a as u64 + 1)) as usize);
            }
            let settings = golden_benes::route(&p).expect("a permutation routes");
            let x: Vec<u64> = (0..n).map(|_| lcg(&mut seed) & ((1u64 << w) - 1)).collect();
            let c: Vec<u64> = settings.iter().map(|&b| b as u64).collect();
            sim.set("x", &pack(&x, w)).expect("x");
            sim.set("c", &pack(&c, 1)).expect("c");
            let y = unpack(&sim.get("y").expect("y"), n, w);
            let want: Vec<u64> = p.iter().map(|&i| x[i]).collect();
            assert_eq!(y, want, "B({n}) routed");
        }
    }
}
