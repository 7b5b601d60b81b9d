//! The Benes network `B(N)` of the slot reorders (`docs/hw/program-slots.md`
//! section 2) and the looping algorithm that routes a permutation through it.
//!
//! `B(N)`, `N = 2^n >= 2`, has `(2n - 1) N / 2` switches. `B(2)` is one
//! switch: `y = c ? (x[1], x[0]) : (x[0], x[1])`. For `N >= 4` the settings
//! are, in this order: the `N/2` input switches, the settings of the upper
//! `B(N/2)`, those of the lower `B(N/2)`, the `N/2` output switches. Input
//! switch `i` takes `x[2i], x[2i+1]` and, swapped when its setting is 1,
//! sends its first output to input `i` of the upper and its second to input
//! `i` of the lower network. Output switch `j` takes output `j` of the upper
//! and of the lower network and, swapped when its setting is 1, drives
//! `y[2j], y[2j+1]`.
//!
//! [`route`] gives the settings with `apply(route(p), x)[o] == x[p[o]]`;
//! every switch is its own inverse, so [`apply_inverse`] (the stages in
//! reverse order) maps `y` back to `x`.

/// Why a permutation cannot be routed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BenesError {
    #[error("size: a Benes network has a power of two >= 2 inputs, the permutation has {len}")]
    Size { len: usize },
    #[error("position {position}: value {value} is not an input 0..{len}")]
    OutOfRange {
        position: usize,
        value: usize,
        len: usize,
    },
    #[error("position {position}: value {value} is already named by position {first} (not a permutation)")]
    Repeated {
        position: usize,
        value: usize,
        first: usize,
    },
}

/// Switch settings of `B(n)`: `(2 log2 n - 1) n / 2` (0 when `n` is not a
/// power of two >= 2).
pub fn settings_bits(n: usize) -> usize {
    if n < 2 || !n.is_power_of_two() {
        return 0;
    }
    let log = n.trailing_zeros() as usize;
    (2 * log - 1) * n / 2
}

/// The outputs `y` of `B(x.len())` with `settings` on inputs `x`.
///
/// # Panics
///
/// When `x.len()` is not a power of two >= 2 or `settings` does not have
/// [`settings_bits`]`(x.len())` entries (a caller's bug: the sizes are the
/// network's, never data).
pub fn apply<T: Copy>(settings: &[bool], x: &[T]) -> Vec<T> {
    check_sizes(settings, x);
    let mut y = x.to_vec();
    walk(settings, &mut y, false);
    y
}

/// The inputs `x` of `B(y.len())` with `settings` that give outputs `y`:
/// the network with its stages in reverse order
/// (`apply_inverse(s, &apply(s, x)) == x`).
///
/// # Panics
///
/// As [`apply`].
pub fn apply_inverse<T: Copy>(settings: &[bool], y: &[T]) -> Vec<T> {
    check_sizes(settings, y);
    let mut x = y.to_vec();
    walk(settings, &mut x, true);
    x
}

fn check_sizes<T>(settings: &[bool], x: &[T]) {
    assert!(
        x.len() >= 2 && x.len().is_power_of_two(),
        "a Benes network has a power of two >= 2 inputs, not {}",
        x.len()
    );
    assert_eq!(
        settings.len(),
        settings_bits(x.len()),
        "B({}) has {} switch settings",
        x.len(),
        settings_bits(x.len())
    );
}

/// `v` (the inputs) becomes the outputs, or with `inverse` (the stages
/// in reverse order) `v` (the outputs) becomes the inputs.
fn walk<T: Copy>(s: &[bool], v: &mut [T], inverse: bool) {
    let n = v.len();
    if n == 2 {
        if s[0] {
            v.swap(0, 1);
        }
        return;
    }
    let h = n / 2;
    let sub = settings_bits(h);
    let (ins, rest) = s.split_at(h);
    let (upper_s, rest) = rest.split_at(sub);
    let (lower_s, outs) = rest.split_at(sub);
    // the column of switches met first splits `v` between the two
    // sub-networks; the last one merges them back
    let (first_col, last_col) = if inverse { (outs, ins) } else { (ins, outs) };
    let mut upper: Vec<T> = Vec::with_capacity(h);
    let mut lower: Vec<T> = Vec::with_capacity(h);
    for (i, &c) in first_col.iter().enumerate() {
        let (a, b) = (v[2 * i], v[2 * i + 1]);
        let (u, l) = if c { (b, a) } else { (a, b) };
        upper.push(u);
        lower.push(l);
    }
    walk(upper_s, &mut upper, inverse);
    walk(lower_s, &mut lower, inverse);
    for (j, &c) in last_col.iter().enumerate() {
        let (a, b) = (upper[j], lower[j]);
        let (first, second) = if c { (b, a) } else { (a, b) };
        v[2 * j] = first;
        v[2 * j + 1] = second;
    }
}

/// The settings that route `perm` (`perm[o]` = the input that output `o`
/// takes): `apply(&route(perm)?, x)[o] == x[perm[o]]`.
///
/// The looping algorithm: the output switches are visited in ascending
/// order; each one not yet set starts a loop with setting 0 (its first
/// output from the upper network), and the loop sets the switches its
/// choice forces. The same in both sub-networks, so the result is
/// deterministic and the identity routes to all-zero settings.
pub fn route<T: Copy + Into<usize>>(perm: &[T]) -> Result<Vec<bool>, BenesError> {
    let n = perm.len();
    if n < 2 || !n.is_power_of_two() {
        return Err(BenesError::Size { len: n });
    }
    let mut first = vec![usize::MAX; n];
    let mut p = Vec::with_capacity(n);
    for (position, &v) in perm.iter().enumerate() {
        let value: usize = v.into();
        if value >= n {
            return Err(BenesError::OutOfRange {
                position,
                value,
                len: n,
            });
        }
        if first[value] != usize::MAX {
            return Err(BenesError::Repeated {
                position,
                value,
                first: first[value],
            });
        }
        first[value] = position;
        p.push(value as u32);
    }
    let mut settings = vec![false; settings_bits(n)];
    route_into(&p, &mut settings);
    Ok(settings)
}

/// Route the valid permutation `p` into `s` (its `settings_bits` entries).
fn route_into(p: &[u32], s: &mut [bool]) {
    let n = p.len();
    if n == 2 {
        s[0] = p[0] == 1;
        return;
    }
    let h = n / 2;
    let mut inv = vec![0u32; n];
    for (o, &a) in p.iter().enumerate() {
        inv[a as usize] = o as u32;
    }
    // None: not yet set
    let mut ins: Vec<Option<bool>> = vec![None; h];
    let mut outs: Vec<Option<bool>> = vec![None; h];
    for j in 0..h {
        if outs[j].is_some() {
            continue;
        }
        // output `cur` comes through the upper network
        let mut cur = 2 * j;
        loop {
            // output switch of `cur`: swapped when `cur` is its second
            // output
            outs[cur / 2] = Some(cur % 2 == 1);
            // the partner output comes through the lower network, and so
            // does its input `a`; an input goes to the upper network when
            // `a % 2` equals its switch's setting
            let a = p[cur ^ 1] as usize;
            ins[a / 2] = Some(a & 1 == 0);
            // the partner input goes through the upper network: to the
            // output that takes it
            let next = inv[a ^ 1] as usize;
            if outs[next / 2].is_some() {
                break;
            }
            cur = next;
        }
    }
    let mut upper = vec![0u32; h];
    let mut lower = vec![0u32; h];
    for (o, &a) in p.iter().enumerate() {
        let c = outs[o / 2].unwrap_or(false);
        // output `o` comes from the lower network when c ^ (o odd)
        let from_lower = c ^ (o % 2 == 1);
        let i = a / 2;
        if from_lower {
            lower[o / 2] = i;
        } else {
            upper[o / 2] = i;
        }
    }
    let sub = settings_bits(h);
    let (in_s, rest) = s.split_at_mut(h);
    let (upper_s, rest) = rest.split_at_mut(sub);
    let (lower_s, out_s) = rest.split_at_mut(sub);
    for (d, c) in in_s.iter_mut().zip(&ins) {
        *d = c.unwrap_or(false);
    }
    for (d, c) in out_s.iter_mut().zip(&outs) {
        *d = c.unwrap_or(false);
    }
    route_into(&upper, upper_s);
    route_into(&lower, lower_s);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(settings_bits(2), 1);
        assert_eq!(settings_bits(4), 6);
        assert_eq!(settings_bits(32), 144);
        assert_eq!(settings_bits(256), 1920);
        assert_eq!(settings_bits(3), 0);
        assert_eq!(settings_bits(1), 0);
    }

    #[test]
    fn b4_follows_the_definition() {
        // input switch 0 swapped: x1 to the upper network, x0 to the lower
        let mut s = vec![false; 6];
        s[0] = true;
        assert_eq!(apply(&s, &[0, 1, 2, 3]), vec![1, 0, 2, 3]);
        // output switch 1 swapped: y2 from the lower, y3 from the upper
        let mut s = vec![false; 6];
        s[5] = true;
        assert_eq!(apply(&s, &[0, 1, 2, 3]), vec![0, 1, 3, 2]);
        // upper B(2) swapped: upper inputs (x0, x2) exchanged
        let mut s = vec![false; 6];
        s[2] = true;
        assert_eq!(apply(&s, &[0, 1, 2, 3]), vec![2, 1, 0, 3]);
    }
}
