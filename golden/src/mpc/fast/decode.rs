//! Table-1 decoding from 64-bit windows at any bit offset, for the fast
//! codec's happy path. Anything unusual (an invalid code, a run past symbol
//! 16, bits past the end) returns `None` and the caller asks the careful
//! decoder of [`super::super::reference`] for the exact error.

use super::super::SYMBOLS;

/// The 32 bits of `src` from bit `pos` on, first bit in the MSB; bits past
/// the end of `src` read as zero.
#[inline(always)]
pub fn peek32(src: &[u8], pos: usize) -> u32 {
    let i = pos / 8;
    let word = match src.get(i..i + 8) {
        Some(s) => {
            let mut a = [0u8; 8];
            a.copy_from_slice(s);
            u64::from_be_bytes(a)
        }
        None => {
            let mut a = [0u8; 8];
            for (k, b) in a.iter_mut().enumerate() {
                *b = src.get(i + k).copied().unwrap_or(0);
            }
            u64::from_be_bytes(a)
        }
    };
    ((word << (pos % 8)) >> 32) as u32
}

/// Decode 16 symbols from bit `pos`; returns them and the position after
/// the last code, or `None` when the careful decoder must explain.
#[inline(always)]
pub fn symbols(src: &[u8], mut pos: usize, end: usize) -> Option<([u16; SYMBOLS], usize)> {
    let mut s = [0u16; SYMBOLS];
    let mut m = 0usize;
    while m < SYMBOLS {
        let w = peek32(src, pos);
        if w >> 31 == 1 {
            s[m] = (w >> 15) as u16;
            pos += 17;
            m += 1;
        } else if w >> 30 == 0b01 {
            let f = ((w >> 25) & 0xf) as usize;
            if (w >> 29) & 1 == 0 {
                if f < 2 || m + f > SYMBOLS {
                    return None;
                }
                m += f;
            } else {
                s[m] = 0x8000 >> f;
                m += 1;
            }
            pos += 7;
        } else {
            match (w >> 28) & 0b11 {
                0b00 => {
                    let q = (w >> 24) & 0xf;
                    if q == 15 {
                        return None;
                    }
                    s[m] = 0xc000 >> q;
                    pos += 8;
                }
                0b01 => {
                    s[m] = ((w >> 20) & 0xff) as u16;
                    pos += 12;
                }
                0b10 => {
                    s[m] = (((w >> 20) & 0xff) as u16) << 8;
                    pos += 12;
                }
                _ => pos += 4,
            }
            m += 1;
        }
    }
    (pos <= end).then_some((s, pos))
}
