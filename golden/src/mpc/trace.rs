//! Per-stage traces of the reference codec. The field names are the names of
//! the RTL pipeline registers (`docs/hw/`), so a co-simulation mismatch can be
//! located stage by stage.

use super::select::CandidateScore;
use super::table1::Code;
use super::{CompressedBlock, BLOCK_BYTES, PLANES, SYMBOLS};

/// One predictor's path through stages 1..4.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PredictorTrace {
    /// Stage 1: predicted value of each byte.
    pub pred: [u8; BLOCK_BYTES],
    /// Stage 1: value - prediction mod 256.
    pub residue: [u8; BLOCK_BYTES],
    /// Stage 2: bit-plane p, bit j = bit p of residue j.
    pub planes: [u32; PLANES],
    /// Stage 2: each plane XOR the plane above.
    pub xored: [u32; PLANES],
    /// Stages 3-4: reordered stream as 16 symbols (first bit = MSB).
    pub symbols: [u16; SYMBOLS],
    /// Selector inputs.
    pub score: CandidateScore,
}

/// The whole compression of one block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompressTrace {
    pub block: [u8; BLOCK_BYTES],
    /// One entry per predictor, in model-set order.
    pub candidates: Vec<PredictorTrace>,
    pub is_zero_block: bool,
    pub is_same_words: bool,
    /// Model ID chosen by the selection rule (and after the raw check).
    pub selected_id: u32,
    /// Table-1 codes of the payload (empty unless a predictor was chosen).
    pub codes: Vec<Code>,
    pub output: CompressedBlock,
}

/// The decompression of one block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecompressTrace {
    pub model_id: u32,
    /// Table-1 codes read (empty unless a predictor model).
    pub codes: Vec<Code>,
    /// Decoded symbols (predictor models only; zero otherwise).
    pub symbols: [u16; SYMBOLS],
    pub xored: [u32; PLANES],
    pub planes: [u32; PLANES],
    pub residue: [u8; BLOCK_BYTES],
    pub block: [u8; BLOCK_BYTES],
    /// Bits consumed.
    pub used: usize,
}

fn hex_bytes(b: &[u8]) -> String {
    b.iter()
        .map(|x| format!("{x:02x}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn planes_text(p: &[u32; PLANES]) -> String {
    (0..PLANES)
        .rev()
        .map(|i| {
            format!(
                "      plane {i}: {:032b}  (0x{:08x}, bit j = byte j, printed j=31..0)\n",
                p[i], p[i]
            )
        })
        .collect()
}

/// A human-readable dump of every stage (used by `mpc trace` and the spec's
/// worked example).
pub fn render_compress(t: &CompressTrace, set: &super::ModelSet) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(s, "block      : {}", hex_bytes(&t.block));
    let _ = writeln!(
        s,
        "zero-block : {}   same-words: {}",
        t.is_zero_block, t.is_same_words
    );
    for (i, c) in t.candidates.iter().enumerate() {
        let _ = writeln!(
            s,
            "predictor {} `{}` (model ID {}):",
            i,
            set.predictors[i].name,
            set.predictor_id(i)
        );
        let _ = writeln!(s, "    pred     : {}", hex_bytes(&c.pred));
        let _ = writeln!(s, "    residue  : {}", hex_bytes(&c.residue));
        let _ = write!(s, "    planes   :\n{}", planes_text(&c.planes));
        let _ = write!(s, "    xored    :\n{}", planes_text(&c.xored));
        let syms: Vec<String> = c.symbols.iter().map(|v| format!("{v:04x}")).collect();
        let _ = writeln!(s, "    symbols  : {}", syms.join(" "));
        let _ = writeln!(
            s,
            "    score    : zero_mask={:016b} (bit m = symbol m) longest_zero_run={} zero_count={} code_bits={}",
            c.score.zero_mask, c.score.longest_zero_run, c.score.zero_count, c.score.code_bits
        );
    }
    let _ = writeln!(
        s,
        "selected   : model ID {} ({}), selection rule {}",
        t.selected_id,
        set.id_name(t.selected_id),
        set.selection
    );
    if !t.codes.is_empty() {
        let _ = writeln!(s, "codes      :");
        for c in &t.codes {
            let (bits, len) = c.bits();
            let _ = writeln!(
                s,
                "    {:<24} {:0width$b} ({len} bits)",
                format!("{c:?}"),
                bits,
                width = len as usize
            );
        }
    }
    let _ = writeln!(
        s,
        "output     : {} bits = {}-bit header + {} payload bits",
        t.output.len,
        set.header_bits(),
        t.output.len - set.header_bits()
    );
    let _ = writeln!(s, "bits       : {}", t.output.bit_string());
    let _ = writeln!(s, "bytes      : {}", hex_bytes(t.output.as_bytes()));
    s
}
