//! Hex text of the values that cross the Verilog boundary: 256-bit blocks
//! (byte `i` at bits `[8i+7:8i]`) and plain numbers, as `$fscanf("%h")`
//! reads them and `$fwrite("%h")` writes them: most significant digit
//! first, fixed width. Buses built from several fields, such as the
//! left-aligned compressed-bit bus, are [`crate::stream_unit::LeBus`].

use golden::mpc::BLOCK_BYTES;

/// A hex field that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HexError {
    #[error("`{text}`: expected {digits} hex digits, found {found}")]
    Width {
        text: String,
        digits: usize,
        found: usize,
    },
    #[error("`{text}`: not a hex digit: `{ch}`{}", if matches!(ch, 'x' | 'X' | 'z' | 'Z') { " (the simulator drove an unknown/undriven value)" } else { "" })]
    Digit { text: String, ch: char },
}

const DIGITS: &[u8; 16] = b"0123456789abcdef";

fn digit(c: u8, text: &[u8]) -> Result<u8, HexError> {
    match c {
        b'0'..=b'9' => Ok(c - b'0'),
        b'a'..=b'f' => Ok(c - b'a' + 10),
        b'A'..=b'F' => Ok(c - b'A' + 10),
        _ => Err(HexError::Digit {
            text: String::from_utf8_lossy(text).into_owned(),
            ch: c as char,
        }),
    }
}

/// Append the 64 hex digits of a block as a 256-bit bus (byte 31 first).
pub fn push_block(out: &mut Vec<u8>, block: &[u8; BLOCK_BYTES]) {
    for &b in block.iter().rev() {
        out.push(DIGITS[(b >> 4) as usize]);
        out.push(DIGITS[(b & 15) as usize]);
    }
}

/// The block as 64 hex digits (see [`push_block`]).
pub fn block_hex(block: &[u8; BLOCK_BYTES]) -> String {
    let mut v = Vec::with_capacity(64);
    push_block(&mut v, block);
    String::from_utf8(v).unwrap_or_default()
}

/// Parse 64 hex digits of a 256-bit bus into a block.
pub fn parse_block(text: &[u8]) -> Result<[u8; BLOCK_BYTES], HexError> {
    if text.len() != 64 {
        return Err(HexError::Width {
            text: String::from_utf8_lossy(text).into_owned(),
            digits: 64,
            found: text.len(),
        });
    }
    let mut block = [0u8; BLOCK_BYTES];
    for (i, pair) in text.chunks_exact(2).enumerate() {
        block[BLOCK_BYTES - 1 - i] = (digit(pair[0], text)? << 4) | digit(pair[1], text)?;
    }
    Ok(block)
}

/// Parse an unsigned hex number (no width check; at most 16 digits).
pub fn parse_u64(text: &[u8]) -> Result<u64, HexError> {
    if text.is_empty() || text.len() > 16 {
        return Err(HexError::Width {
            text: String::from_utf8_lossy(text).into_owned(),
            digits: 16,
            found: text.len(),
        });
    }
    let mut v = 0u64;
    for &c in text {
        v = (v << 4) | digit(c, text)? as u64;
    }
    Ok(v)
}

/// Hex of arbitrary bytes, space separated (for messages).
pub fn bytes_hex(b: &[u8]) -> String {
    b.iter()
        .map(|x| format!("{x:02x}"))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_round_trip_and_byte_order() {
        let mut b = [0u8; 32];
        b[0] = 0x12;
        b[31] = 0xab;
        let h = block_hex(&b);
        assert_eq!(h.len(), 64);
        assert!(h.starts_with("ab"));
        assert!(h.ends_with("12"));
        assert_eq!(parse_block(h.as_bytes()), Ok(b));
    }

    #[test]
    fn bus_is_left_aligned() {
        use crate::stream_unit::LeBus;
        // W = 259: 65 digits, 65*4 = 260, one pad bit.
        let mut bytes = [0u8; 33];
        bytes[0] = 0b0100_0000; // bit 1 set
        let mut bus = LeBus::new();
        bus.put_left_aligned(&bytes, 259, 259);
        let h = bus.hex();
        assert_eq!(h.len(), 65);
        // bus bit 257 set: value 2^257 -> digit 0 covers bits 259..256 -> 0b0010
        assert!(h.starts_with('2'));
        assert_eq!(&h[1..], &"0".repeat(64));
        for w in [257usize, 258, 259, 260, 264] {
            let mut r = crate::rng::Rng::new(w as u64);
            let mut bytes = [0u8; 33];
            r.fill(&mut bytes);
            // clear bits past w
            for k in w..264 {
                bytes[k / 8] &= !(0x80 >> (k % 8));
            }
            let mut bus = LeBus::new();
            bus.put_left_aligned(&bytes, w, w);
            let back = LeBus::parse(&bus.hex(), w).expect("parses");
            assert_eq!(back.left_aligned(0, w), bytes[..w.div_ceil(8)], "w={w}");
        }
    }

    #[test]
    fn unknown_digits_are_reported() {
        let e = parse_u64(b"1x").unwrap_err();
        assert!(e.to_string().contains("unknown"), "{e}");
        assert!(parse_block(b"00").is_err());
        assert_eq!(parse_u64(b"ff"), Ok(255));
    }
}
