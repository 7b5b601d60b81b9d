//! FNV-1a (64-bit): the one non-cryptographic hash of the project, for
//! stable names and seeds (split seeds per file, fuzz input names) and
//! build-cache keys. Not for integrity: the corpus and model files are
//! identified by SHA-256.

/// The FNV-1a 64 offset basis: the hash of nothing.
pub const FNV1A64_START: u64 = 0xcbf2_9ce4_8422_2325;

const PRIME: u64 = 0x0000_0100_0000_01b3;

/// FNV-1a 64 of `data`, continuing from `h` ([`FNV1A64_START`] for a new
/// hash), so several pieces hash as their concatenation.
pub fn fnv1a64_from(h: u64, data: &[u8]) -> u64 {
    data.iter()
        .fold(h, |h, &b| (h ^ b as u64).wrapping_mul(PRIME))
}

/// FNV-1a 64 of `data`.
pub fn fnv1a64(data: &[u8]) -> u64 {
    fnv1a64_from(FNV1A64_START, data)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values_and_continuation() {
        // Published FNV-1a 64 test vectors.
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
        assert_eq!(fnv1a64_from(fnv1a64(b"foo"), b"bar"), fnv1a64(b"foobar"));
    }
}
