//! The coding part of the MPC round trip, by parts (docs/hw/formal.md,
//! "The coding part, by parts"): the compressor's Table-1 codes packed
//! into the stream, and the decompressor's decoder of the 16 codes.
//!
//! Everything is stated against the compressor's own code of each symbol
//! position `s` (`enc_code<s>`, left-aligned in a 17-bit slot, and its
//! length `enc_len<s>`: 0 for the zero symbols a run covers after its
//! first), with `P_s` the sum of the lengths before `s`, and against a
//! reference concatenation written in the wrapper: `R(a..b)`, `w` bits,
//! is 0 for `a = b`, else the code of `a` at the top, OR-ed with
//! `R(a+1..b)` shifted down by the length of `a` (a multiplexer over the
//! code lengths, not a barrel shifter). What a part assumes of a cut
//! wire is the reference the wire is driven with.
//!
//! * Packing, per level of the compressor's packing tree: the slot pairs
//!   (`s2_pairs`) are `R(2i..2i+2)` with lengths `P_{2i+2} - P_{2i}`; the
//!   merges of two references (`pack2_*`, `pack3_*`) are the references of
//!   four and eight slots; the stream (`s3_bits`, `s3_len`) is the model
//!   `k`, `R(0..16)` and `H + P_16`. The first level also proves that a
//!   predictor model out is `k` and that `P_16 <= 256`.
//! * Decoding, per decompressor stage, on the stream `{k, R(0..16)}` of
//!   length `H + P_16`: after each decode stage the registers hold the
//!   model `k`, no error, a symbol count `I <= 16`, the symbols below `I`
//!   (those at and past `I` zero), the bits used and consumed (`P_I` and
//!   the differences) and, while `I < 16`, a code starting at `I` and the
//!   stream `R(I..16)`; after
//!   the last codes the decoded symbols are `S` and the checks raise no
//!   error.

use std::fmt::Write as _;

use super::{decode, Shape, TIES};

/// One part of the coding proof: its wrapper, and the wires its view cuts
/// and exposes.
#[derive(Clone, Debug)]
pub(super) struct Part {
    /// File and top-module name.
    pub stem: String,
    pub name: String,
    pub statement: String,
    /// The wrapper module (one Verilog file).
    pub wrapper: String,
    /// `module/w:wire` cut to inputs.
    pub cuts: Vec<String>,
    /// `module/w:wire` exposed as outputs.
    pub exposed: Vec<String>,
    /// Which units the view holds.
    pub units: Units,
}

/// The units a part's view holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Units {
    /// None: a lemma about the wrapper's own logic.
    None,
    Compressor,
    Decompressor,
    Both,
}

/// Symbols of a block, and code slots.
pub(super) const SLOTS: usize = 16;
/// Bits of the payload.
pub(super) const PAYLOAD: u32 = 256;
/// Width of one code slot (the longest code).
pub(super) const SLOT: u32 = 17;
/// The lengths of a slot's codes but 0: Table 1's, and 11 (a run of 15
/// and one zero, the all-zero block's slot 0).
pub(super) const CODE_LENS: [u32; 6] = [4, 7, 8, 11, 12, 17];
/// Codes decoded by each of the decompressor's first two stages (the
/// default depth's plan: 6, 6 and 4).
const CODES_PER_STAGE: usize = 6;
/// The stream stage 2 of the decompressor hands on (codes 12 to 15).
const STAGE2_STREAM: u32 = 4 * SLOT;
/// Bits of each decode stage's shift amount (`dec<last>_shift`): stage
/// 1's up to the end of six codes of 17 bits, stage 2's past the fixed
/// offset of six shortest codes.
pub(super) const SHIFT_BITS: u32 = 7;
/// The shortest code's length; six of them are stage 2's fixed shift,
/// before its barrel shifter.
const STAGE2_OFFSET: u32 = 4 * CODES_PER_STAGE as u32;

/// Declarations of the codes `c<s>`, lengths `l<s>` and starts `p<s>`
/// (`p16`: the payload length).
fn codes_and_starts() -> String {
    let mut v = String::new();
    for s in 0..SLOTS {
        let _ = writeln!(v, "  wire [4:0] l{s}; wire [16:0] c{s};");
    }
    v.push_str("  wire [8:0] p0 = 9'd0;\n");
    for s in 0..SLOTS {
        let _ = writeln!(v, "  wire [8:0] p{} = p{s} + {{4'd0, l{s}}};", s + 1);
    }
    v
}

/// The compressor's port connections of the codes and lengths.
fn code_ports() -> String {
    (0..SLOTS)
        .map(|s| format!(", .enc_len{s}(l{s}), .enc_code{s}(c{s})"))
        .collect()
}

/// The reference `R(a..b)` in `w` bits: wires `<name>_<s>` for `s` in
/// `a..=b` (`<name>_<s>` is `R(s..b)`; `<name>_<b>` is 0).
pub(super) fn reference(name: &str, a: usize, b: usize, w: u32) -> String {
    let mut v = format!("  wire [{}:0] {name}_{b} = {w}'d0;\n", w - 1);
    for s in (a..b).rev() {
        let rest = format!("{name}_{}", s + 1);
        let shifted: Vec<String> = CODE_LENS
            .iter()
            .map(|n| format!("(l{s} == 5'd{n}) ? ({rest} >> {n})"))
            .collect();
        let _ = writeln!(
            v,
            "  wire [{}:0] {name}_{s} = {{c{s}, {}'d0}} | ({} : {rest});",
            w - 1,
            w - SLOT,
            shifted.join(" : ")
        );
    }
    v
}

/// The length of pair `i` (`P_{2i+2} - P_{2i}`, 6 bits).
fn pair_len(i: usize) -> String {
    format!("({{1'b0, l{}}} + {{1'b0, l{}}})", 2 * i, 2 * i + 1)
}

/// The reference pairs `pairs_r` and their lengths `plens_r`, as the
/// compressor's `s2_pairs` and `s2_pair_lens` lay them out.
fn reference_pairs() -> String {
    let mut v = String::new();
    for i in 0..SLOTS / 2 {
        v.push_str(&reference(&format!("a{i}"), 2 * i, 2 * i + 2, 2 * SLOT));
    }
    let pairs: Vec<String> = (0..SLOTS / 2).map(|i| format!("a{i}_{}", 2 * i)).collect();
    let lens: Vec<String> = (0..SLOTS / 2).map(pair_len).collect();
    let _ = writeln!(v, "  wire [271:0] pairs_r = {{{}}};", pairs.join(", "));
    let _ = writeln!(v, "  wire [47:0] plens_r = {{{}}};", lens.join(", "));
    v
}

/// `e_<i>` for a 5-bit count `i` (`e_16` for 16 and above), each term
/// `<e>_<s><slice>`.
pub(super) fn by_count(i: &str, e: &str, slice: &str) -> String {
    let mut x = format!("{e}{SLOTS}{slice}");
    for s in (0..SLOTS).rev() {
        x = format!("(({i}) == 5'd{s}) ? {e}{s}{slice} : {x}");
    }
    format!("({x})")
}

/// `P_i` for a 5-bit count `i`.
pub(super) fn start_of(i: &str) -> String {
    by_count(i, "p", "")
}

/// A wrapper: the compressor with its stage-1 registers cut (`k`, `s`,
/// `b`) and its codes and lengths exposed, with `dec` (its port
/// connections) the decompressor on the stream `{k, R(0..16)}`; `bad`
/// when the model is a predictor, no assumption fails and some claim
/// does. `decls` declares the wrapper's own wires (after the codes).
#[allow(clippy::too_many_arguments)]
pub(super) fn wrapper(
    shape: &Shape,
    name: &str,
    ports: &str,
    decls: &str,
    comp_extra: &str,
    dec: Option<&str>,
    assume: &[String],
    claim: &[String],
) -> String {
    let h = shape.header_bits;
    let mut v = format!(
        "module {name}(input [255:0] x, input [{}:0] k, input [255:0] s, input [255:0] b{ports}, output bad);\n\
         \x20 wire [{}:0] m;\n\
         \x20 wire [{}:0] bits; wire [8:0] len;\n",
        h - 1,
        h - 1,
        shape.max_bits - 1,
    );
    v.push_str(&codes_and_starts());
    v.push_str(decls);
    let (bits, len) = if dec.is_some() {
        ("", "")
    } else {
        ("bits", "len")
    };
    let _ = writeln!(
        v,
        "  mpc_compressor comp({TIES}, .in_block(x), .out_bits({bits}), .out_len({len}), .out_model(m), .s1_choice_id(k), .s1_symbols(s), .s1_block(b){}{comp_extra});",
        code_ports()
    );
    if let Some(conns) = dec {
        v.push_str(&reference("g", 0, SLOTS, PAYLOAD));
        let _ = writeln!(
            v,
            "  assign bits = {{k, g_0}};\n  assign len = p16 + 9'd{h};"
        );
        let _ = writeln!(
            v,
            "  mpc_decompressor dec({TIES}, .in_bits(bits), .in_len(len), .out_block(), .out_error(), .out_model(){conns});"
        );
    }
    let assume = if assume.is_empty() {
        "1'b0".to_string()
    } else {
        assume.join(" | ")
    };
    let _ = writeln!(
        v,
        "  assign bad = ({}) & ~({assume}) & ({});\nendmodule",
        shape.is_predictor("m"),
        claim.join(" | ")
    );
    v
}

fn comp(w: &str) -> String {
    format!("mpc_compressor/w:{w}")
}

fn dec(w: &str) -> String {
    format!("mpc_decompressor/w:{w}")
}

/// The decompressor's registers after decode stages 1 and 2, with widths
/// (0: the model ID's).
const REGS1: [(&str, u32); 7] = [
    ("s1_model_id", 0),
    ("s1_error", 1),
    ("s1_symbols", 256),
    ("s1_stream", 256),
    ("s1_consumed", 9),
    ("s1_sym_index", 5),
    ("s1_len", 9),
];
const REGS2: [(&str, u32); 8] = [
    ("s2_model_id", 0),
    ("s2_error", 1),
    ("s2_symbols", 256),
    ("s2_stream", STAGE2_STREAM),
    ("s2_used", 9),
    ("s2_consumed", 9),
    ("s2_sym_index", 5),
    ("s2_len", 9),
];

fn width(shape: &Shape, w: u32) -> String {
    let w = if w == 0 { shape.header_bits } else { w };
    if w == 1 {
        String::new()
    } else {
        format!("[{}:0] ", w - 1)
    }
}

fn reg_ports(shape: &Shape, regs: &[(&str, u32)]) -> String {
    regs.iter()
        .map(|(r, w)| format!(", input {}{r}", width(shape, *w)))
        .collect()
}

fn reg_wires(shape: &Shape, regs: &[(&str, u32)]) -> String {
    regs.iter()
        .map(|(r, w)| format!("  wire {}{r};\n", width(shape, *w)))
        .collect()
}

fn reg_conns(regs: &[(&str, u32)]) -> String {
    regs.iter().map(|(r, _)| format!(", .{r}({r})")).collect()
}

/// Conditions, each 1 when the registers of decode stage `st` (1 or 2,
/// stream of `w` bits) do not hold what the stage hands on; with
/// `stream` false, the condition on the stream is left out (the parts
/// that state the stage's shift amount instead).
pub(super) fn stage_fails(shape: &Shape, st: usize, w: u32, stream: bool) -> Vec<String> {
    let p = format!("s{st}");
    let i = format!("{p}_sym_index");
    let h = shape.header_bits;
    let mut c = vec![
        format!("({p}_model_id != k)"),
        format!("{p}_error"),
        format!("({p}_len != p16 + 9'd{h})"),
        format!("({i} > 5'd16)"),
        format!("({p}_symbols != (s & ~({{256{{1'b1}}}} >> {{{i}, 4'd0}})))"),
    ];
    if stream {
        c.push(format!(
            "(({i} < 5'd16) & ({p}_stream != {}))",
            by_count(&i, "g_", &format!("[255:{}]", PAYLOAD - w))
        ));
    }
    // a count below 16 is where a code starts (a zero symbol that a run
    // covers has no code; only the all-zero block codes two codes in slot
    // 0, and its count after any decode stage is 16)
    let mut len_at = "5'd1".to_string();
    for s in (0..SLOTS).rev() {
        len_at = format!("(({i}) == 5'd{s}) ? l{s} : {len_at}");
    }
    c.push(format!("(({i} < 5'd16) & (({len_at}) == 5'd0))"));
    // every code stands for one symbol or more: after the stage's codes
    // (6 a stage at the default depth) the count is at least theirs
    c.push(format!("({i} < 5'd{})", CODES_PER_STAGE * st));
    if st == 1 {
        c.push(format!("(s1_consumed != {})", start_of(&i)));
    } else {
        let before = start_of("s1_sym_index");
        c.push(format!("(s2_used != {before} + 9'd{h})"));
        c.push(format!("(s2_consumed != {} - {before})", start_of(&i)));
        c.push(format!("({i} < s1_sym_index)"));
    }
    c
}

fn regs(st: usize) -> &'static [(&'static str, u32)] {
    if st == 1 {
        &REGS1
    } else {
        &REGS2
    }
}

/// Input ports for the registers after decode stage `st`.
pub(super) fn stage_ports(shape: &Shape, st: usize) -> String {
    reg_ports(shape, regs(st))
}

/// Wires for the registers after decode stage `st`.
pub(super) fn stage_wires(shape: &Shape, st: usize) -> String {
    reg_wires(shape, regs(st))
}

/// Port connections of the registers after decode stage `st`.
pub(super) fn stage_conns(st: usize) -> String {
    reg_conns(regs(st))
}

/// The registers after decode stage `st`, as cuts or exposed wires.
pub(super) fn stage_cuts(st: usize) -> Vec<String> {
    regs(st).iter().map(|(r, _)| dec(r)).collect()
}

/// What "coding pairs" proves and every decode part assumes: the model
/// out is `k` and the codes fit the payload.
pub(super) fn base_assumptions() -> Vec<String> {
    vec!["(m != k)".to_string(), "(p16 > 9'd256)".to_string()]
}

/// Conditions, each 1 when the registers of decode stage `st` do not hold
/// what the stage hands on (the stream left out) or, while its count is
/// below 16, its shift amount (`sh`) is not the start of the next code:
/// `P_I` (stage 1), `P_J - P_I - 24` (stage 2).
pub(super) fn stage_claims(shape: &Shape, st: usize, sh: &str) -> Vec<String> {
    let w = if st == 1 { PAYLOAD } else { STAGE2_STREAM };
    let mut c = stage_fails(shape, st, w, false);
    let pad = 9 - SHIFT_BITS;
    if st == 1 {
        c.push(format!(
            "((s1_sym_index < 5'd16) & ({{{pad}'d0, {sh}}} != {}))",
            start_of("s1_sym_index")
        ));
    } else {
        c.push(format!(
            "((s2_sym_index < 5'd16) & (9'd{STAGE2_OFFSET} + {{{pad}'d0, {sh}}} != {} - {}))",
            start_of("s2_sym_index"),
            start_of("s1_sym_index")
        ));
    }
    c
}

/// The compressor's stage-1 registers, cut in every part with the
/// compressor.
pub(super) fn stage1_cuts() -> Vec<String> {
    ["s1_choice_id", "s1_symbols", "s1_block"]
        .iter()
        .map(|w| comp(w))
        .collect()
}

/// The compressor's codes and lengths, exposed in every part with the
/// compressor.
pub(super) fn code_exposed() -> Vec<String> {
    (0..SLOTS)
        .flat_map(|s| [comp(&format!("enc_len{s}")), comp(&format!("enc_code{s}"))])
        .collect()
}

/// The parts of the coding proof, in the order they compose.
pub(super) fn parts(shape: &Shape) -> Vec<Part> {
    let exposed: Vec<String> = (0..SLOTS)
        .flat_map(|s| [comp(&format!("enc_len{s}")), comp(&format!("enc_code{s}"))])
        .collect();
    let stage1_cuts: Vec<String> = ["s1_choice_id", "s1_symbols", "s1_block"]
        .iter()
        .map(|w| comp(w))
        .collect();
    let mut parts = Vec::new();
    let part = |stem: &str,
                statement: &str,
                wrapper: String,
                cuts: &[String],
                more: &[String],
                units: Units| Part {
        stem: stem.into(),
        name: stem.replace('_', " "),
        statement: statement.into(),
        wrapper,
        cuts: stage1_cuts.iter().chain(cuts).cloned().collect(),
        exposed: exposed.iter().chain(more).cloned().collect(),
        units,
    };
    let pairs_cut = [comp("s2_pairs"), comp("s2_pair_lens")];
    let pairs_driven = ", .s2_pairs(pairs_r), .s2_pair_lens(plens_r)";

    // packing, level 1: the slot pairs (and the compressor's model and
    // payload length)
    let mut decls = String::from("  wire [271:0] pairs; wire [47:0] plens;\n");
    let mut claim = vec!["(m != k)".to_string(), "(p16 > 9'd256)".to_string()];
    for i in 0..SLOTS / 2 {
        decls.push_str(&reference(&format!("a{i}"), 2 * i, 2 * i + 2, 2 * SLOT));
        let (hi, lhi) = (271 - 34 * i, 47 - 6 * i);
        claim.push(format!("(pairs[{hi}:{}] != a{i}_{})", hi - 33, 2 * i));
        claim.push(format!("(plens[{lhi}:{}] != {})", lhi - 5, pair_len(i)));
    }
    // each code has one of the lengths the reference shifts by (or 0) and
    // is zero past its length: what the shift lemmas assume of a code
    for s in 0..SLOTS {
        let (c, l) = (format!("c{s}"), format!("l{s}"));
        claim.push(format!(
            "~({} & {})",
            super::shifts::in_set(&l),
            super::shifts::code_fits(&c, &l)
        ));
    }
    let w = wrapper(
        shape,
        "coding_pairs",
        "",
        &decls,
        ", .s2_pairs(pairs), .s2_pair_lens(plens)",
        None,
        &[],
        &claim,
    );
    parts.push(part(
        "coding_pairs",
        "for all (k, S, B): a predictor model out means model = k and P_16 <= 256, every code has length 0, 4, 7, 8, 11, 12 or 17 and is zero past it, and the slot pairs are R(2i..2i+2) with their lengths",
        w,
        &[],
        &pairs_cut,
        Units::Compressor,
    ));

    // packing, level 2: four fields of four slots
    let mut decls = reference_pairs();
    decls.push_str("  wire [67:0] q0, q1, q2, q3;\n");
    let mut claim = Vec::new();
    for j in 0..4 {
        decls.push_str(&reference(&format!("q{j}r"), 4 * j, 4 * j + 4, 4 * SLOT));
        claim.push(format!("(q{j} != q{j}r_{})", 4 * j));
    }
    let w = wrapper(
        shape,
        "coding_pack2",
        "",
        &decls,
        &format!("{pairs_driven}, .pack2_0(q0), .pack2_1(q1), .pack2_2(q2), .pack2_3(q3)"),
        None,
        &[],
        &claim,
    );
    let pack2: Vec<String> = (0..4).map(|j| comp(&format!("pack2_{j}"))).collect();
    parts.push(part(
        "coding_pack2",
        "for all (k, S, B), the pairs being R(2i..2i+2): the merges of two pairs are R(4j..4j+4)",
        w,
        &pairs_cut,
        &pack2,
        Units::Compressor,
    ));

    // packing, level 3: two fields of eight slots
    let mut decls = reference_pairs();
    decls.push_str("  wire [135:0] r0, r1;\n");
    for j in 0..4 {
        decls.push_str(&reference(&format!("q{j}r"), 4 * j, 4 * j + 4, 4 * SLOT));
    }
    let mut claim = Vec::new();
    for j in 0..2 {
        decls.push_str(&reference(&format!("r{j}r"), 8 * j, 8 * j + 8, 8 * SLOT));
        claim.push(format!("(r{j} != r{j}r_{})", 8 * j));
    }
    let w = wrapper(
        shape,
        "coding_pack3",
        "",
        &decls,
        &format!("{pairs_driven}, .pack2_0(q0r_0), .pack2_1(q1r_4), .pack2_2(q2r_8), .pack2_3(q3r_12), .pack3_0(r0), .pack3_1(r1)"),
        None,
        &[],
        &claim,
    );
    let mut cuts = pairs_cut.to_vec();
    cuts.extend(pack2);
    let pack3: Vec<String> = (0..2).map(|j| comp(&format!("pack3_{j}"))).collect();
    parts.push(part(
        "coding_pack3",
        "for all (k, S, B), the pairs and their merges being R(2i..2i+2), R(4j..4j+4): the merges of those are R(8j..8j+8)",
        w,
        &cuts,
        &pack3,
        Units::Compressor,
    ));

    // packing, level 4: the stream
    let h = shape.header_bits;
    let mut decls = reference_pairs();
    for j in 0..2 {
        decls.push_str(&reference(&format!("r{j}r"), 8 * j, 8 * j + 8, 8 * SLOT));
    }
    let pad = PAYLOAD - 8 * SLOT;
    let claim = vec![
        format!("(bits != {{k, {{r0r_0, {pad}'d0}} | ({{r1r_8, {pad}'d0}} >> p8)}})"),
        format!("(len != p16 + 9'd{h})"),
    ];
    let w = wrapper(
        shape,
        "coding_stream",
        "",
        &decls,
        &format!("{pairs_driven}, .pack3_0(r0r_0), .pack3_1(r1r_8)"),
        None,
        &[],
        &claim,
    );
    let mut cuts = pairs_cut.to_vec();
    cuts.extend(pack3);
    parts.push(part(
        "coding_stream",
        "for all (k, S, B), the pairs and the merges of eight being R(2i..2i+2), R(8j..8j+8): the stream is {k, {R(0..8), 0} | ({R(8..16), 0} >> P_8)}, its length H + P_16",
        w,
        &cuts,
        &[],
        Units::Compressor,
    ));

    // decoding, on the stream {k, R(0..16)}: what the first part proves;
    // the all-zero block (slot 0's length 11) whole, every other block by
    // the windows and the codes of the stage
    let base = base_assumptions();
    let zero = "(l0 != 5'd11)".to_string();
    let regs1: Vec<String> = REGS1.iter().map(|(r, _)| dec(r)).collect();
    let regs2: Vec<String> = REGS2.iter().map(|(r, _)| dec(r)).collect();
    let (shift1, shift2) = (
        format!("dec{}_shift", CODES_PER_STAGE - 1),
        format!("dec{}_shift", 2 * CODES_PER_STAGE - 1),
    );
    let sw = SHIFT_BITS - 1;
    let claim = stage_claims(shape, 1, "a1");
    let mut assume = base.clone();
    assume.push(zero.clone());
    let w = wrapper(
        shape,
        "coding_decode1_zero",
        "",
        &format!("{}  wire [{sw}:0] a1;\n", reg_wires(shape, &REGS1)),
        "",
        Some(&format!("{}, .{shift1}(a1)", reg_conns(&REGS1))),
        &assume,
        &claim,
    );
    let mut exposed1 = regs1.clone();
    exposed1.push(dec(&shift1));
    parts.push(part(
        "coding_decode1_zero",
        "for all (k, S, B) with slot 0 the all-zero block's two codes (length 11), on the stream {k, R(0..16)}: the stage-1 registers hold model k, no error, a count I <= 16, the symbols below I, P_I bits consumed, and, for I < 16, the stage's shift amount is P_I",
        w,
        &[],
        &exposed1,
        Units::Both,
    ));
    let stage1 = decode::Stage {
        number: 1,
        first: 0,
        codes: CODES_PER_STAGE,
    };
    parts.extend(decode::windows(shape, stage1));
    parts.push(decode::codes(shape, stage1, decode::Codes::All));
    let mb = shape.max_bits - 1;
    let v = format!(
        "module coding_decode1_stream(input [{mb}:0] bits, input [8:0] len, input [{sw}:0] a, output bad);\n\
         \x20 wire [255:0] st;\n\
         \x20 mpc_decompressor dec({TIES}, .in_bits(bits), .in_len(len), .out_block(), .out_error(), .out_model(), .{shift1}(a), .s1_stream(st));\n\
         \x20 assign bad = st != (bits[255:0] << a);\nendmodule\n"
    );
    parts.push(Part {
        stem: "coding_decode1_stream".into(),
        name: "coding decode1 stream".into(),
        statement: "for every decompressor input and every stage-1 shift amount a (cut): the stage-1 stream is the payload shifted left by a".into(),
        wrapper: v,
        cuts: vec![dec(&shift1)],
        exposed: vec![dec("s1_stream")],
        units: Units::Decompressor,
    });
    let mut assume = base.clone();
    assume.push(zero);
    assume.extend(stage_fails(shape, 1, PAYLOAD, true));
    let claim = stage_claims(shape, 2, "a2");
    let w = wrapper(
        shape,
        "coding_decode2_zero",
        &reg_ports(shape, &REGS1),
        &format!("{}  wire [{sw}:0] a2;\n", reg_wires(shape, &REGS2)),
        "",
        Some(&format!(
            "{}{}, .{shift2}(a2)",
            reg_conns(&REGS1),
            reg_conns(&REGS2)
        )),
        &assume,
        &claim,
    );
    let mut exposed2 = regs2.clone();
    exposed2.push(dec(&shift2));
    parts.push(part(
        "coding_decode2_zero",
        "for all (k, S, B) with slot 0 the all-zero block's two codes, and stage-1 registers as decode stage 1 leaves them: the stage-2 registers hold model k, no error, a count J <= 16, the symbols below J, the bits used and consumed, and, for J < 16, the stage's shift amount is P_J - P_I - 24",
        w,
        &regs1,
        &exposed2,
        Units::Both,
    ));
    let stage2 = decode::Stage {
        number: 2,
        first: CODES_PER_STAGE,
        codes: CODES_PER_STAGE,
    };
    parts.extend(decode::windows(shape, stage2));
    parts.extend(
        (stage2.first..stage2.first + stage2.codes)
            .map(|c| decode::codes(shape, stage2, decode::Codes::One(c))),
    );
    parts.push(decode::codes(shape, stage2, decode::Codes::End));
    parts.push(decode::reach(CODES_PER_STAGE));
    let top = PAYLOAD - 1;
    let v = format!(
        "module coding_decode2_stream(input [{mb}:0] bits, input [8:0] len, input [255:0] x, input [{sw}:0] d, output bad);\n\
         \x20 wire [{}:0] st; wire [255:0] t = {{x[{}:0], {STAGE2_OFFSET}'d0}} << d;\n\
         \x20 mpc_decompressor dec({TIES}, .in_bits(bits), .in_len(len), .out_block(), .out_error(), .out_model(), .s1_stream(x), .{shift2}(d), .s2_stream(st));\n\
         \x20 assign bad = st != t[{top}:{}];\nendmodule\n",
        STAGE2_STREAM - 1,
        top - STAGE2_OFFSET,
        PAYLOAD - STAGE2_STREAM
    );
    parts.push(Part {
        stem: "coding_decode2_stream".into(),
        name: "coding decode2 stream".into(),
        statement: "for every decompressor input, stage-1 stream x (cut) and stage-2 shift amount d (cut): the stage-2 stream is the top 68 bits of (x << 24) << d".into(),
        wrapper: v,
        cuts: vec![dec("s1_stream"), dec(&shift2)],
        exposed: vec![dec("s2_stream")],
        units: Units::Decompressor,
    });
    let mut assume = base;
    assume.extend(stage_fails(shape, 2, STAGE2_STREAM, true));
    assume.push("(s1_sym_index > 5'd16)".to_string());
    let w = wrapper(
        shape,
        "coding_decode3",
        &format!("{}, input [4:0] s1_sym_index", reg_ports(shape, &REGS2)),
        "  wire [255:0] ds; wire de;\n",
        "",
        Some(&format!(
            "{}, .dec15_symbols(ds), .s4_error_d(de)",
            reg_conns(&REGS2)
        )),
        &assume,
        &["(ds != s)".to_string(), "de".to_string()],
    );
    parts.push(part(
        "coding_decode3",
        "for all (k, S, B) and stage-2 registers as decode stage 2 leaves them: the decoded symbols are S and the checks raise no error",
        w,
        &regs2,
        &[dec("dec15_symbols"), dec("s4_error_d")],
        Units::Both,
    ));
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_part_names_its_module_and_cuts_the_compressor_stage_1() {
        let shape = Shape {
            max_bits: 259,
            header_bits: 3,
            predictors: vec![2, 3, 4],
        };
        let parts = parts(&shape);
        assert_eq!(parts.len(), 26);
        for p in parts.iter().filter(|p| p.units != Units::None) {
            assert!(
                p.wrapper.starts_with(&format!("module {}(", p.stem)),
                "{}",
                p.stem
            );
            assert!(p.wrapper.trim_end().ends_with("endmodule"), "{}", p.stem);
            assert_eq!(
                p.units != Units::Compressor,
                p.wrapper.contains("mpc_decompressor dec("),
                "{}",
                p.stem
            );
            // every part with the compressor cuts its stage-1 registers
            // and speaks of predictor models only
            let comp = p.units == Units::Compressor || p.units == Units::Both;
            assert_eq!(
                comp,
                p.cuts.contains(&"mpc_compressor/w:s1_symbols".to_string()),
                "{}",
                p.stem
            );
            assert_eq!(
                comp,
                p.wrapper
                    .contains("(m == 3'd2) | (m == 3'd3) | (m == 3'd4)"),
                "{}",
                p.stem
            );
        }
        // each decode stage cuts what the stage before exposed
        let by = |stem: &str| parts.iter().find(|p| p.stem == stem).expect(stem);
        for r in ["s1_stream", "s1_sym_index"] {
            let w = format!("mpc_decompressor/w:{r}");
            for p in ["coding_decode1_zero", "coding_decode1_codes"] {
                assert!(by(p).exposed.contains(&w), "{p}");
            }
            for p in [
                "coding_decode2_zero",
                "coding_decode2_code6",
                "coding_decode2_end",
            ] {
                assert!(by(p).cuts.contains(&w), "{p}");
            }
        }
        // the all-zero block's slot 0 by the zero parts, every other
        // block by the codes parts
        for p in parts.iter().filter(|p| p.stem.starts_with("coding_decode")) {
            let zero = p.wrapper.contains("| (l0 != 5'd11)");
            let other = p.wrapper.contains("| (l0 == 5'd11)");
            if p.units == Units::Both && p.stem != "coding_decode3" {
                assert!(zero != other, "{}", p.stem);
                assert_eq!(zero, p.stem.ends_with("_zero"), "{}", p.stem);
            }
        }
        assert!(by("coding_decode3")
            .exposed
            .contains(&"mpc_decompressor/w:dec15_symbols".to_string()));
        // the shift amounts: stated by the decode parts, cut by the stream
        // parts
        for (part, by_codes, shift) in [
            ("decode1", "decode1_codes", "dec5_shift"),
            ("decode2", "decode2_end", "dec11_shift"),
        ] {
            let w = format!("mpc_decompressor/w:{shift}");
            assert!(by(&format!("coding_{part}_zero")).exposed.contains(&w));
            assert!(by(&format!("coding_{by_codes}")).exposed.contains(&w));
            assert!(by(&format!("coding_{part}_stream")).cuts.contains(&w));
        }
        assert!(by("coding_decode2_stream")
            .wrapper
            .contains("wire [255:0] t = {x[231:0], 24'd0} << d;"));
        assert!(by("coding_stream")
            .wrapper
            .contains("(bits != {k, {r0r_0, 120'd0} | ({r1r_8, 120'd0} >> p8)})"));
    }

    #[test]
    fn the_reference_shifts_by_the_code_lengths() {
        let r = reference("a0", 0, 2, 34);
        assert!(r.contains("wire [33:0] a0_2 = 34'd0;"), "{r}");
        assert!(r.contains("wire [33:0] a0_1 = {c1, 17'd0} | ((l1 == 5'd4) ? (a0_2 >> 4)"));
        assert!(r.contains("(l0 == 5'd17) ? (a0_1 >> 17) : a0_1);"), "{r}");
    }

    #[test]
    fn a_start_is_chosen_by_the_count() {
        let e = start_of("i");
        assert!(e.starts_with("(((i) == 5'd0) ? p0 : "), "{e}");
        assert!(e.contains("((i) == 5'd15) ? p15 : p16"));
    }
}
