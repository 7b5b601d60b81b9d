//! The Benes network of the slot reorders (`docs/hw/program-slots.md`
//! section 2): every permutation of 2, 4 and 8 inputs routes, random
//! permutations of 16, 32 and 256 route, the identity routes to all-zero
//! settings, the inverse undoes the network, and bad permutations are
//! refused naming the position.

#[path = "common/rng.rs"]
mod rng;

use golden::mpc::program::benes::{apply, apply_inverse, route, settings_bits, BenesError};
use rng::XorShift;

/// Every permutation of 0..n, by Heap's algorithm.
fn all_perms(n: usize) -> Vec<Vec<u8>> {
    fn heap(k: usize, a: &mut Vec<u8>, out: &mut Vec<Vec<u8>>) {
        if k == 1 {
            out.push(a.clone());
            return;
        }
        for i in 0..k {
            heap(k - 1, a, out);
            if k & 1 == 0 {
                a.swap(i, k - 1);
            } else {
                a.swap(0, k - 1);
            }
        }
    }
    let mut a: Vec<u8> = (0..n as u8).collect();
    let mut out = Vec::new();
    heap(n, &mut a, &mut out);
    out
}

/// `route(p)` realises `p` forward and its inverse maps it back.
fn check<T: Copy + Into<usize>>(p: &[T]) {
    let n = p.len();
    let s = route(p).expect("a permutation routes");
    assert_eq!(s.len(), settings_bits(n));
    let x: Vec<u32> = (0..n as u32).map(|i| i * 7 + 3).collect();
    let y = apply(&s, &x);
    for (o, &v) in p.iter().enumerate() {
        assert_eq!(y[o], x[v.into()], "output {o} of {n}");
    }
    assert_eq!(apply_inverse(&s, &y), x, "inverse of {n}");
}

#[test]
fn every_permutation_of_2_4_8_routes() {
    for n in [2, 4, 8] {
        let perms = all_perms(n);
        assert_eq!(perms.len(), (1..=n).product::<usize>());
        let mut distinct = std::collections::HashSet::new();
        for p in &perms {
            check(p);
            distinct.insert(route(p).expect("routes"));
        }
        // different permutations need different settings
        assert_eq!(distinct.len(), perms.len(), "n = {n}");
    }
}

#[test]
fn random_permutations_of_16_32_256_route() {
    let mut r = XorShift(0x2545_f491_4f6c_dd1d);
    for (n, count) in [(16, 1000), (32, 1000), (256, 1000)] {
        for _ in 0..count {
            check(&r.perm(n));
        }
    }
}

#[test]
fn the_identity_routes_to_all_zero_settings() {
    for log in 1..=8 {
        let n = 1usize << log;
        let id: Vec<u16> = (0..n as u16).collect();
        let s = route(&id).expect("routes");
        assert_eq!(s.len(), (2 * log - 1) * n / 2);
        assert!(s.iter().all(|&c| !c), "n = {n}");
    }
}

#[test]
fn inverse_undoes_any_settings() {
    let mut r = XorShift(0x1234_5678_9abc_def1);
    for n in [2usize, 4, 8, 32, 256] {
        for _ in 0..50 {
            let s: Vec<bool> = (0..settings_bits(n)).map(|_| r.next() & 1 == 1).collect();
            let x: Vec<u16> = (0..n as u16).collect();
            let y = apply(&s, &x);
            // a permutation of the inputs
            let mut sorted = y.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, x);
            assert_eq!(apply_inverse(&s, &y), x);
            assert_eq!(apply(&s, &apply_inverse(&s, &x)), x);
        }
    }
}

#[test]
fn bad_permutations_are_refused_naming_the_position() {
    assert_eq!(route::<u8>(&[]), Err(BenesError::Size { len: 0 }));
    assert_eq!(route(&[0u8]), Err(BenesError::Size { len: 1 }));
    assert_eq!(route(&[0u8, 1, 2]), Err(BenesError::Size { len: 3 }));
    assert_eq!(
        route(&[0u8, 1, 4, 2]),
        Err(BenesError::OutOfRange {
            position: 2,
            value: 4,
            len: 4
        })
    );
    assert_eq!(
        route(&[3u16, 1, 2, 1]),
        Err(BenesError::Repeated {
            position: 3,
            value: 1,
            first: 1
        })
    );
    let e = route(&[0u8, 0]).expect_err("repeated").to_string();
    assert!(e.contains("position 1"), "{e}");
}

#[test]
fn routing_256_is_fast() {
    let mut r = XorShift(0x0bad_cafe_f00d_beef);
    let perms: Vec<Vec<u16>> = (0..200).map(|_| r.perm(256)).collect();
    let t = std::time::Instant::now();
    for p in &perms {
        route(p).expect("routes");
    }
    let per = t.elapsed().as_secs_f64() / perms.len() as f64;
    eprintln!("route(256): {:.1} us per permutation", per * 1e6);
    // generous: debug builds and a shared machine
    assert!(per < 0.02, "route(256) took {per} s");
}
