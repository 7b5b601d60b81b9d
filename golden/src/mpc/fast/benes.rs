//! Arbitrary permutations of 256 bits as a Beneš network of 15 delta-swap
//! stages (distances 1, 2, ..., 64, 128, 64, ..., 2, 1), routed once per
//! predictor by the looping algorithm. Applying it costs 15 masked swaps
//! whatever the data, which is what makes the reorder (and its inverse)
//! cheap on dense blocks. The last four stages only move bits inside
//! aligned 16-bit groups, so a caller that needs only which group a bit
//! lands in (the zero-symbol test) stops after [`GROUP_STAGES`].

use super::tables::Bits256;

/// Number of stages for 256 = 2^8 bits.
pub const STAGES: usize = 15;

/// Stages after which every bit is in its final 16-bit group.
pub const GROUP_STAGES: usize = 11;

/// Swap distance of stage `s`.
#[inline]
pub const fn distance(s: usize) -> usize {
    if s < 8 {
        1 << s
    } else {
        1 << (14 - s)
    }
}

/// Distance of stage `s` in the network routed on bit-reversed indices
/// (top index bit first).
const fn reversed_distance(s: usize) -> usize {
    256 / 2 / distance(s)
}

/// Bit-reversal of an 8-bit index.
fn rev(i: usize) -> usize {
    (i as u8).reverse_bits() as usize
}

/// Stage masks: bit i of `masks[s]` (i with bit `distance(s)` clear) swaps
/// bits i and i + distance(s).
pub type Masks = [Bits256; STAGES];

fn set_bit(m: &mut Bits256, i: usize) {
    m[i / 64] |= 1u64 << (i % 64);
}

/// Route the permutation `out[o] = in[src[o]]` (`src` must be a permutation
/// of `0..256`).
///
/// The recursion splits on the top index bit (distances 128, 64, ... from
/// the outside in); it runs on bit-reversed indices so that the network's
/// outer stages have distance 1 and its inner ones 128.
pub fn route(src: &[u16; 256]) -> Masks {
    let mut reversed = [[0u64; 4]; STAGES];
    let mut src_rev = vec![0usize; 256];
    for (o, &s) in src.iter().enumerate() {
        src_rev[rev(o)] = rev(s as usize);
    }
    route_into(&src_rev, 0, 0, &mut reversed);
    let mut masks = [[0u64; 4]; STAGES];
    for s in 0..STAGES {
        debug_assert_eq!(reversed_distance(s) * distance(s), 128);
        for i in 0..256 {
            if (reversed[s][i / 64] >> (i % 64)) & 1 == 1 {
                set_bit(&mut masks[s], rev(i));
            }
        }
    }
    masks
}

fn route_into(src: &[usize], base: usize, level: usize, masks: &mut Masks) {
    let n = src.len();
    let half = n / 2;
    if n == 2 {
        // one switch: the middle stage
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
    // Looping algorithm: each cycle starts at an unassigned output pair
    // whose lower output the lower subnetwork serves; following the cycle,
    // every output `o` visited is served by the lower subnetwork, its input
    // goes there, that input's partner goes to the upper one, and so does
    // the output needing it.
    for start in 0..half {
        if out_swap[start].is_some() {
            continue;
        }
        out_swap[start] = Some(false);
        let mut o = start;
        loop {
            let s = src[o];
            in_swap[s % half] = s >= half;
            let o2 = dst[s ^ half]; // served by the upper subnetwork
            let q = o2 % half;
            if out_swap[q].is_some() {
                break;
            }
            out_swap[q] = Some(o2 < half);
            o = o2 ^ half; // its partner: served by the lower one
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

/// Apply the network to 256 bits (portable).
#[inline]
pub fn apply(masks: &Masks, x: Bits256) -> Bits256 {
    apply_stages(masks, 0..STAGES, x)
}

/// Apply stages `stages` of the network (portable).
#[inline]
pub fn apply_stages(masks: &Masks, stages: std::ops::Range<usize>, mut x: Bits256) -> Bits256 {
    for s in stages {
        let m = &masks[s];
        let d = distance(s);
        if d >= 64 {
            let dw = d / 64;
            for w in 0..4 {
                if w & dw == 0 {
                    let t = (x[w] ^ x[w + dw]) & m[w];
                    x[w] ^= t;
                    x[w + dw] ^= t;
                }
            }
        } else {
            for w in 0..4 {
                let t = ((x[w] >> d) ^ x[w]) & m[w];
                x[w] ^= t ^ (t << d);
            }
        }
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bit(x: &Bits256, i: usize) -> bool {
        (x[i / 64] >> (i % 64)) & 1 == 1
    }

    fn check(src: &[u16; 256]) {
        let masks = route(src);
        // every input bit alone lands where the permutation sends it
        for i in (0..256).step_by(7).chain([255]) {
            let mut x = [0u64; 4];
            set_bit(&mut x, i);
            let y = apply(&masks, x);
            for (o, &s) in src.iter().enumerate() {
                assert_eq!(bit(&y, o), s as usize == i, "input {i} output {o}");
            }
        }
        // and a dense pattern
        let x = [
            0x0123_4567_89ab_cdef,
            0xfedc_ba98_7654_3210,
            0xdead_beef_0bad_f00d,
            0x5555_aaaa_3333_cccc,
        ];
        let y = apply(&masks, x);
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
        for _ in 0..200 {
            let mut p: [u16; 256] = std::array::from_fn(|i| i as u16);
            for i in (1..256).rev() {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                p.swap(i, (seed % (i as u64 + 1)) as usize);
            }
            check(&p);
            // after GROUP_STAGES every bit is in its output's 16-bit group
            let masks = route(&p);
            for i in (0..256).step_by(5) {
                let mut x = [0u64; 4];
                set_bit(&mut x, i);
                let y = apply_stages(&masks, 0..GROUP_STAGES, x);
                let o = p
                    .iter()
                    .position(|&s| s as usize == i)
                    .expect("a permutation");
                let g = o / 16;
                assert!((y[g / 4] >> (16 * (g % 4))) & 0xffff != 0, "input {i}");
            }
        }
    }
}
