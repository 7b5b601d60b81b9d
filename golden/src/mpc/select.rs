//! The selection rule among candidate models (spec section "Selection").

use super::model::{ModelSet, Selection};
use super::table1;
use super::{BLOCK_BYTES, SYMBOLS};

/// What the selector knows about one predictor's transformed residues.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CandidateScore {
    /// Bit m set when symbol m is zero (bit 0 = symbol 0).
    pub zero_mask: u16,
    /// Longest run of consecutive zero symbols (0..=16).
    pub longest_zero_run: u8,
    /// Number of zero symbols (0..=16).
    pub zero_count: u8,
    /// Encoded length of the 16 symbols in bits, header excluded.
    pub code_bits: u32,
}

impl CandidateScore {
    pub fn of(symbols: &[u16; SYMBOLS]) -> CandidateScore {
        let mut zero_mask = 0u16;
        for (m, &s) in symbols.iter().enumerate() {
            if s == 0 {
                zero_mask |= 1 << m;
            }
        }
        CandidateScore {
            zero_mask,
            longest_zero_run: longest_run_of_ones(zero_mask),
            zero_count: zero_mask.count_ones() as u8,
            code_bits: table1::encoded_len(symbols),
        }
    }

    /// The zero-run rule's key: compared lexicographically, larger wins.
    pub fn zero_run_key(&self) -> (u8, u8) {
        (self.longest_zero_run, self.zero_count)
    }
}

/// Longest run of consecutive 1 bits in each byte value.
const BYTE_RUNS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut v = 0;
    while v < 256 {
        let (mut x, mut n) = (v as u8, 0u8);
        while x != 0 {
            x &= x << 1;
            n += 1;
        }
        t[v] = n;
        v += 1;
    }
    t
};

/// Longest run of consecutive 1 bits in a 16-bit mask: the longest run of
/// either byte, or the run across the byte boundary (the ones at the top
/// of the low byte and at the bottom of the high byte). No data-dependent
/// loop.
#[inline]
pub fn longest_run_of_ones(m: u16) -> u8 {
    let (lo, hi) = (m as u8, (m >> 8) as u8);
    let across = (!lo).leading_zeros() + (!hi).trailing_zeros();
    (across as u8)
        .max(BYTE_RUNS[lo as usize])
        .max(BYTE_RUNS[hi as usize])
}

/// The block as four little-endian words.
#[inline]
fn words64(block: &[u8; BLOCK_BYTES]) -> [u64; 4] {
    std::array::from_fn(|w| {
        let mut a = [0u8; 8];
        a.copy_from_slice(&block[8 * w..8 * w + 8]);
        u64::from_le_bytes(a)
    })
}

/// The custom-model tests on the original block.
#[inline]
pub fn is_zero_block(block: &[u8; BLOCK_BYTES]) -> bool {
    let w = words64(block);
    (w[0] | w[1] | w[2] | w[3]) == 0
}

/// All eight little-endian 32-bit words equal.
#[inline]
pub fn is_same_words(block: &[u8; BLOCK_BYTES]) -> bool {
    let w = words64(block);
    w[0] == w[1] && w[0] == w[2] && w[0] == w[3] && (w[0] >> 32) == (w[0] & 0xffff_ffff)
}

/// Payload bits of the same-words model.
pub const SAME_WORDS_BITS: u32 = 32;
/// Payload bits of the raw escape.
pub const RAW_BITS: u32 = 8 * BLOCK_BYTES as u32;

/// The selector's choice before the raw check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Choice {
    ZeroBlock,
    SameWords,
    Predictor(usize),
}

/// Step 1 of selection: which model would encode the block. Under
/// `zero-run` only the zero-run keys of `scores` are read (`code_bits` may be
/// left 0); under `exact` only `code_bits`.
pub fn choose(set: &ModelSet, block: &[u8; BLOCK_BYTES], scores: &[CandidateScore]) -> Choice {
    if set.custom.zero_block && is_zero_block(block) {
        return Choice::ZeroBlock;
    }
    let same = set.custom.same_words && is_same_words(block);
    match set.selection {
        Selection::ZeroRun => {
            if same {
                return Choice::SameWords;
            }
            // Largest key; on ties the first (lowest ID) stays.
            let mut best = 0;
            for (i, s) in scores.iter().enumerate().skip(1) {
                if s.zero_run_key() > scores[best].zero_run_key() {
                    best = i;
                }
            }
            Choice::Predictor(best)
        }
        Selection::Exact => {
            let mut best = 0;
            for (i, s) in scores.iter().enumerate().skip(1) {
                if s.code_bits < scores[best].code_bits {
                    best = i;
                }
            }
            if same && SAME_WORDS_BITS <= scores[best].code_bits {
                Choice::SameWords
            } else {
                Choice::Predictor(best)
            }
        }
    }
}

/// Step 2: the model ID, given the chosen predictor's payload size.
pub fn finish(set: &ModelSet, choice: Choice, chosen_code_bits: u32) -> u32 {
    match choice {
        Choice::ZeroBlock => set.zero_block_id().unwrap_or(0),
        Choice::SameWords => set.same_words_id().unwrap_or(0),
        Choice::Predictor(_) if chosen_code_bits >= RAW_BITS => set.raw_id(),
        Choice::Predictor(i) => set.predictor_id(i),
    }
}

/// Which model ID encodes the block, given every predictor's full score.
pub fn select(set: &ModelSet, block: &[u8; BLOCK_BYTES], scores: &[CandidateScore]) -> u32 {
    let choice = choose(set, block, scores);
    let bits = match choice {
        Choice::Predictor(i) => scores[i].code_bits,
        _ => 0,
    };
    finish(set, choice, bits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longest_run_counts_consecutive_zero_symbols() {
        assert_eq!(longest_run_of_ones(0), 0);
        assert_eq!(longest_run_of_ones(0xffff), 16);
        assert_eq!(longest_run_of_ones(0b1011_1001_1111_0000), 5);
        assert_eq!(longest_run_of_ones(0b1000_0000_0000_0001), 1);
    }

    #[test]
    fn longest_run_equals_the_shift_and_loop_on_every_mask() {
        for m in 0..=u16::MAX {
            let (mut x, mut n) = (m, 0u8);
            while x != 0 {
                x &= x << 1;
                n += 1;
            }
            assert_eq!(longest_run_of_ones(m), n, "mask {m:#06x}");
        }
    }

    #[test]
    fn same_words_needs_all_eight_words() {
        let mut b = [0u8; 32];
        for w in 0..8 {
            b[4 * w..4 * w + 4].copy_from_slice(&[1, 2, 3, 4]);
        }
        assert!(is_same_words(&b));
        for i in 0..32 {
            let mut c = b;
            c[i] ^= 0x10;
            assert!(!is_same_words(&c), "byte {i} changed");
            let mut z = [0u8; 32];
            assert!(is_zero_block(&z));
            z[i] = 0x80;
            assert!(!is_zero_block(&z), "byte {i} set");
        }
    }
}
