//! Permutations of 256 bits as a Beneš network of 15 delta-swap stages on
//! eight 32-bit words, routed once per predictor by the looping algorithm
//! (the MPC kernels' reorder, `wgsl/mpc_compress.wgsl`).
//!
//! Bit i is bit `i % 32` of word `i / 32`. Stage s swaps bits i and
//! i + d(s) where bit i of its mask is set (i with bit d(s) clear), the
//! distances being 1, 2, ..., 64, 128, 64, ..., 2, 1. Stages with d < 32
//! are shift-and-mask swaps inside each word, the others swap masked bits
//! between two words. After [`GROUP_STAGES`] stages every bit is in its
//! final aligned 16-bit group: the last four stages only move bits inside a
//! group, so a zero test of the groups needs only the first eleven.

/// Stages of the network for 256 = 2^8 bits.
pub const STAGES: usize = 15;

/// Stages after which every bit is in its final 16-bit group.
pub const GROUP_STAGES: usize = 11;

/// 256 bits as eight words.
pub type Bits = [u32; 8];

/// Stage masks: bit i of `masks[s]` swaps bits i and i + [`distance`]`(s)`.
pub type Masks = [Bits; STAGES];

/// Swap distance of stage `s`.
pub const fn distance(s: usize) -> usize {
    if s < 8 {
        1 << s
    } else {
        1 << (14 - s)
    }
}

fn rev(i: usize) -> usize {
    (i as u8).reverse_bits() as usize
}

fn set_bit(m: &mut Bits, i: usize) {
    m[i / 32] |= 1u32 << (i % 32);
}

fn bit(x: &Bits, i: usize) -> bool {
    (x[i / 32] >> (i % 32)) & 1 == 1
}

/// Route the permutation `out[o] = in[src[o]]`; `None` when `src` is not a
/// permutation of `0..256`.
///
/// The recursion splits on the top index bit; it runs on bit-reversed
/// indices so that the outer stages have distance 1 and the middle one 128.
pub fn route(src: &[u16; 256]) -> Option<Masks> {
    let mut seen = [false; 256];
    for &s in src {
        if std::mem::replace(seen.get_mut(s as usize)?, true) {
            return None;
        }
    }
    let mut src_rev = vec![0usize; 256];
    for (o, &s) in src.iter().enumerate() {
        src_rev[rev(o)] = rev(s as usize);
    }
    let mut reversed = [[0u32; 8]; STAGES];
    route_into(&src_rev, 0, 0, &mut reversed);
    let mut masks = [[0u32; 8]; STAGES];
    for s in 0..STAGES {
        for i in 0..256 {
            if bit(&reversed[s], i) {
                set_bit(&mut masks[s], rev(i));
            }
        }
    }
    Some(masks)
}

fn route_into(src: &[usize], base: usize, level: usize, masks: &mut Masks) {
    let n = src.len();
    let half = n / 2;
    if n == 2 {
        if src[0] == 1 {
            set_bit(&mut masks[level], base);
        }
        return;
    }
    let mut dst = vec![0usize; n];
    for (o, &s) in src.iter().enumerate() {
        dst[s] = o;
    }
    // in_swap[p]: input p goes to the upper subnetwork (and p + half to the
    // lower); out_swap[q]: output q is served by the upper subnetwork.
    let mut in_swap = vec![false; half];
    let mut out_swap: Vec<Option<bool>> = vec![None; half];
    for start in 0..half {
        if out_swap[start].is_some() {
            continue;
        }
        out_swap[start] = Some(false);
        let mut o = start;
        loop {
            let s = src[o];
            in_swap[s % half] = s >= half;
            let o2 = dst[s ^ half];
            let q = o2 % half;
            if out_swap[q].is_some() {
                break;
            }
            out_swap[q] = Some(o2 < half);
            o = o2 ^ half;
        }
    }
    let out_swap: Vec<bool> = out_swap.into_iter().map(|s| s == Some(true)).collect();
    let (mut src_lo, mut src_hi) = (vec![0usize; half], vec![0usize; half]);
    for r in 0..half {
        let (lo_out, hi_out) = if out_swap[r] {
            (r + half, r)
        } else {
            (r, r + half)
        };
        src_lo[r] = src[lo_out] % half;
        src_hi[r] = src[hi_out] % half;
    }
    for i in 0..half {
        if in_swap[i] {
            set_bit(&mut masks[level], base + i);
        }
        if out_swap[i] {
            set_bit(&mut masks[STAGES - 1 - level], base + i);
        }
    }
    route_into(&src_lo, base, level + 1, masks);
    route_into(&src_hi, base + half, level + 1, masks);
}

/// Apply stages `stages` of the network (what the kernels do, on the host).
pub fn apply(masks: &Masks, stages: std::ops::Range<usize>, mut x: Bits) -> Bits {
    for s in stages {
        let m = &masks[s];
        let d = distance(s);
        if d >= 32 {
            let dw = d / 32;
            for w in 0..8 {
                if w & dw == 0 {
                    let t = (x[w] ^ x[w + dw]) & m[w];
                    x[w] ^= t;
                    x[w + dw] ^= t;
                }
            }
        } else {
            for w in x.iter_mut().zip(m) {
                let t = ((*w.0 >> d) ^ *w.0) & w.1;
                *w.0 ^= t ^ (t << d);
            }
        }
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(src: &[u16; 256]) {
        let masks = route(src).expect("a permutation");
        for i in (0..256).step_by(3).chain([255]) {
            let mut x = [0u32; 8];
            set_bit(&mut x, i);
            let y = apply(&masks, 0..STAGES, x);
            for (o, &s) in src.iter().enumerate() {
                assert_eq!(bit(&y, o), s as usize == i, "input {i} output {o}");
            }
            let g = apply(&masks, 0..GROUP_STAGES, x);
            let o = src.iter().position(|&s| s as usize == i).unwrap_or(0);
            assert!(
                (g[o / 32] >> (16 * (o % 32 / 16))) & 0xffff != 0,
                "input {i}"
            );
        }
        let x = [
            0x0123_4567,
            0x89ab_cdef,
            0xfedc_ba98,
            0x7654_3210,
            0xdead_beef,
            0x0bad_f00d,
            0x5555_aaaa,
            0x3333_cccc,
        ];
        let y = apply(&masks, 0..STAGES, x);
        for (o, &s) in src.iter().enumerate() {
            assert_eq!(bit(&y, o), bit(&x, s as usize));
        }
    }

    #[test]
    fn routes_identity_reversal_and_random_permutations() {
        check(&std::array::from_fn(|i| i as u16));
        check(&std::array::from_fn(|i| 255 - i as u16));
        check(&std::array::from_fn(|i| ((i * 37 + 11) % 256) as u16));
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..100 {
            let mut p: [u16; 256] = std::array::from_fn(|i| i as u16);
            for i in (1..256).rev() {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                p.swap(i, (seed % (i as u64 + 1)) as usize);
            }
            check(&p);
        }
    }

    #[test]
    fn rejects_a_repeated_index() {
        let mut p: [u16; 256] = std::array::from_fn(|i| i as u16);
        p[7] = 3;
        assert!(route(&p).is_none());
        p[7] = 256;
        assert!(route(&p).is_none());
    }
}
