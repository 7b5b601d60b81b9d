//! SC2-style statistical compression (Arelakis and Stenstrom, ISCA 2014):
//! canonical Huffman codes over 32-bit words from a value-frequency table
//! (VFT) sampled from training data only (`docs/spec/baselines.md`, SC2).
//!
//! Table: the `table_size` most frequent words of the training blocks
//! (ties: smaller value first) plus an escape symbol whose weight is the
//! count of all other training words (at least 1). Code lengths: Huffman,
//! limited to `max_len` bits by halving every weight (floor, minimum 1) and
//! rebuilding until the longest code fits. Codes: canonical (shorter codes
//! first; within a length, table order by value, escape last).
//!
//! Format: a 1-bit flag (`0`: the raw block follows), then per
//! little-endian 32-bit word its code, or the escape code and 32 raw bits.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use super::{
    check_len, flagged, from_words32, read_flag, words32, BlockCodec, Compressed, ConfigError,
    DecodeError, Reader, VecBitWriter,
};

const NAME: &str = "SC2";
/// Default VFT size (values; the escape comes on top).
pub const DEFAULT_TABLE: usize = 1024;
/// Default longest code.
pub const DEFAULT_MAX_LEN: u32 = 16;

#[derive(Clone, Debug)]
pub struct Sc2 {
    block: usize,
    /// Table values in symbol order; symbol `values.len()` is the escape.
    values: Vec<u32>,
    /// Code length per symbol (escape last).
    lengths: Vec<u32>,
    /// Canonical code per symbol.
    codes: Vec<u32>,
    index: HashMap<u32, usize>,
    /// Canonical decoding: per length, (first code, first rank, count),
    /// with `by_rank` the symbols in canonical order.
    first: Vec<(u32, usize, usize)>,
    by_rank: Vec<usize>,
    max_len: u32,
}

/// Huffman code lengths of positive weights (deterministic: ties by
/// symbol index); a single symbol gets length 1.
pub fn huffman_lengths(weights: &[u64]) -> Vec<u32> {
    let n = weights.len();
    if n <= 1 {
        return vec![1; n];
    }
    let mut parent = vec![usize::MAX; 2 * n - 1];
    let mut heap: BinaryHeap<Reverse<(u64, usize)>> = weights
        .iter()
        .enumerate()
        .map(|(i, &w)| Reverse((w, i)))
        .collect();
    let mut next = n;
    while heap.len() > 1 {
        let (Some(Reverse((wa, a))), Some(Reverse((wb, b)))) = (heap.pop(), heap.pop()) else {
            break;
        };
        parent[a] = next;
        parent[b] = next;
        heap.push(Reverse((wa + wb, next)));
        next += 1;
    }
    // Depths: parents have higher indices, so walk down from the root.
    let mut depth = vec![0u32; 2 * n - 1];
    for i in (0..2 * n - 2).rev() {
        depth[i] = depth[parent[i]] + 1;
    }
    depth.truncate(n);
    depth
}

/// Huffman lengths no longer than `max_len` (needs `2^max_len >= n`).
pub fn limited_lengths(weights: &[u64], max_len: u32) -> Vec<u32> {
    let mut w: Vec<u64> = weights.iter().map(|&x| x.max(1)).collect();
    loop {
        let l = huffman_lengths(&w);
        if l.iter().all(|&x| x <= max_len) {
            return l;
        }
        w.iter_mut().for_each(|x| *x = (*x / 2).max(1));
    }
}

impl Sc2 {
    /// Build the VFT and codes from training words.
    pub fn train(
        block_bytes: usize,
        words: impl IntoIterator<Item = u32>,
        table_size: usize,
        max_len: u32,
    ) -> Result<Sc2, ConfigError> {
        let block_bytes = super::check_block_size(NAME, block_bytes)?;
        if !(1..=24).contains(&max_len) || (1u64 << max_len) < table_size as u64 + 1 {
            return Err(ConfigError::Other(format!(
                "SC2: {} symbols do not fit codes of at most {max_len} bits (1..=24)",
                table_size + 1
            )));
        }
        let mut counts: HashMap<u32, u64> = HashMap::new();
        let mut total = 0u64;
        for w in words {
            *counts.entry(w).or_default() += 1;
            total += 1;
        }
        let mut freq: Vec<(u32, u64)> = counts.into_iter().collect();
        freq.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        freq.truncate(table_size);
        freq.sort_unstable_by_key(|&(v, _)| v);
        let covered: u64 = freq.iter().map(|f| f.1).sum();
        let mut weights: Vec<u64> = freq.iter().map(|f| f.1).collect();
        weights.push((total - covered).max(1));
        let values: Vec<u32> = freq.iter().map(|f| f.0).collect();
        Ok(Sc2::from_table(block_bytes, values, &weights, max_len))
    }

    /// Train on blocks.
    pub fn train_blocks<'a>(
        block_bytes: usize,
        blocks: impl IntoIterator<Item = &'a [u8]>,
        table_size: usize,
        max_len: u32,
    ) -> Result<Sc2, ConfigError> {
        Sc2::train(
            block_bytes,
            blocks.into_iter().flat_map(words32),
            table_size,
            max_len,
        )
    }

    fn from_table(block: usize, values: Vec<u32>, weights: &[u64], max_len: u32) -> Sc2 {
        let lengths = limited_lengths(weights, max_len);
        let n = lengths.len();
        let mut by_rank: Vec<usize> = (0..n).collect();
        by_rank.sort_by_key(|&s| (lengths[s], s));
        let mut codes = vec![0u32; n];
        let mut first = vec![(0u32, 0usize, 0usize); max_len as usize + 1];
        let mut code = 0u32;
        let mut prev_len = 0;
        for (rank, &s) in by_rank.iter().enumerate() {
            let l = lengths[s];
            if rank > 0 {
                code += 1;
            }
            code <<= l - prev_len;
            prev_len = l;
            codes[s] = code;
            let f = &mut first[l as usize];
            if f.2 == 0 {
                *f = (code, rank, 0);
            }
            f.2 += 1;
        }
        let index = values.iter().enumerate().map(|(i, &v)| (v, i)).collect();
        Sc2 {
            block,
            values,
            lengths,
            codes,
            index,
            first,
            by_rank,
            max_len,
        }
    }

    /// Number of table values (without the escape).
    pub fn table_len(&self) -> usize {
        self.values.len()
    }

    /// Code length of the escape symbol.
    pub fn escape_len(&self) -> u32 {
        self.lengths[self.values.len()]
    }

    /// Code length of a word (escape + 32 for words not in the table).
    pub fn word_bits(&self, w: u32) -> u32 {
        match self.index.get(&w) {
            Some(&s) => self.lengths[s],
            None => self.escape_len() + 32,
        }
    }
}

impl BlockCodec for Sc2 {
    fn name(&self) -> &str {
        NAME
    }

    fn block_bytes(&self) -> usize {
        self.block
    }

    fn max_bits(&self) -> usize {
        1 + 8 * self.block
    }

    fn compress(&self, block: &[u8]) -> Compressed {
        check_len(NAME, block, self.block);
        let words = words32(block);
        let bits: u32 = words.iter().map(|&w| self.word_bits(w)).sum();
        if bits as usize >= 8 * self.block {
            return flagged(block, None);
        }
        let mut out = VecBitWriter::new();
        let esc = self.values.len();
        for w in words {
            match self.index.get(&w) {
                Some(&s) => out.put(self.codes[s] as u64, self.lengths[s]),
                None => {
                    out.put(self.codes[esc] as u64, self.lengths[esc]);
                    out.put(w as u64, 32);
                }
            }
        }
        flagged(block, Some(out))
    }

    fn decompress(&self, bits: &[u8], len: usize) -> Result<Vec<u8>, DecodeError> {
        let mut r = Reader::new(NAME, bits, len)?;
        if let Some(raw) = read_flag(&mut r, self.block)? {
            return Ok(raw);
        }
        let n = self.block / 4;
        let mut words = Vec::with_capacity(n);
        while words.len() < n {
            let at = r.pos();
            let mut code = 0u32;
            let mut sym = None;
            for l in 1..=self.max_len {
                code = code << 1 | r.get(1)? as u32;
                let (fc, fr, cnt) = self.first[l as usize];
                if cnt > 0 && code >= fc && code - fc < cnt as u32 {
                    sym = Some(self.by_rank[fr + (code - fc) as usize]);
                    break;
                }
            }
            let s = sym.ok_or(DecodeError::BadCode {
                codec: NAME,
                code,
                at,
            })?;
            if s == self.values.len() {
                words.push(r.get(32)? as u32);
            } else {
                words.push(self.values[s]);
            }
        }
        r.finish()?;
        Ok(from_words32(&words))
    }
}
