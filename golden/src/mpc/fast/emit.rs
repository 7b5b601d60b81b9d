//! Table-1 codes of 16 symbols into a [`SliceWriter`], one field per symbol
//! and no data-dependent loop: a zero symbol that starts a run carries the
//! run's codes (a run of 16 is `run 15` + `zero` as one 11-bit field), a
//! zero symbol inside a run carries nothing.

use crate::bits::SliceWriter;

use super::super::SYMBOLS;

/// Code of a nonzero symbol: `(bits, length)`, in the priority of the spec
/// (single one, two adjacent ones, front half zero, back half zero,
/// default); equal to `table1::code_for_nonzero(s).bits()`.
#[inline(always)]
pub fn nonzero_code(s: u16) -> (u64, u32) {
    let s32 = s as u32;
    let ones = s.count_ones();
    let lead = s.leading_zeros();
    let trail = s.trailing_zeros();
    let mut code = ((1 << 16) | s32, 17);
    if s & 0x00ff == 0 {
        code = ((0b0010 << 8) | (s32 >> 8), 12);
    }
    if s & 0xff00 == 0 {
        code = ((0b0001 << 8) | s32, 12);
    }
    if ones == 2 && lead + trail == 14 {
        code = (lead, 8);
    }
    if ones == 1 {
        code = ((0b011 << 4) | lead, 7);
    }
    (code.0 as u64, code.1)
}

/// Codes of a run of `n` (1..=16) zero symbols as one field.
#[inline(always)]
pub fn run_code(n: u32) -> (u64, u32) {
    match n {
        1 => (0b0011, 4),
        16 => ((0b010_1111 << 4) | 0b0011, 11),
        _ => (((0b010 << 4) | n) as u64, 7),
    }
}

/// Append the codes of `symbols` (bit m of `zero_mask` set iff symbol m is
/// zero); returns the bits written.
#[inline(always)]
pub fn put_symbols(w: &mut SliceWriter<'_>, symbols: &[u16; SYMBOLS], zero_mask: u16) -> u32 {
    let start = w.position();
    let zm = zero_mask as u32;
    let run_starts = zm & !(zm << 1);
    for (m, &s) in symbols.iter().enumerate() {
        let (bits, len) = if (zm >> m) & 1 == 0 {
            nonzero_code(s)
        } else if (run_starts >> m) & 1 == 1 {
            run_code((!zm >> m).trailing_zeros())
        } else {
            (0, 0)
        };
        w.put(bits, len);
        // at most 3 x 17 bits pending on top of 7
        if m % 3 == 2 {
            w.flush();
        }
    }
    w.flush();
    (w.position() - start) as u32
}

/// Append fields computed beforehand (`vals[m]` the `lens[m]` low bits of
/// field m, as [`put_symbols`] would write them); returns the bits written.
#[inline(always)]
pub fn put_fields(w: &mut SliceWriter<'_>, vals: &[u32; SYMBOLS], lens: &[u32; SYMBOLS]) -> u32 {
    let start = w.position();
    // at most 3 x 17 bits pending on top of 7
    for k in 0..5 {
        for m in 3 * k..3 * k + 3 {
            w.put(vals[m] as u64, lens[m]);
        }
        w.flush();
    }
    w.put(vals[15] as u64, lens[15]);
    w.flush();
    (w.position() - start) as u32
}

#[cfg(test)]
mod tests {
    use super::super::super::table1::code_for_nonzero;
    use super::*;

    #[test]
    fn nonzero_codes_equal_table1() {
        for s in 1..=u16::MAX {
            let (bits, len) = code_for_nonzero(s).bits();
            assert_eq!(nonzero_code(s), (bits as u64, len), "symbol {s:#06x}");
        }
    }
}
