//! The decoding of the first two decode stages, by parts
//! (docs/hw/formal.md, "The decode stages, by parts").
//!
//! A decode stage finds the start of each of its codes as a one-hot
//! vector over offsets (`dec<c>_at`, the end of its last code
//! `dec<last>_end`) and picks each code's 17-bit window (`dec<c>_head`)
//! from the stream at that start; the decoding proper reads the windows
//! only. The stage is proven in three kinds of parts:
//!
//! * **windows**: for every stream `x` and every start offset `a` (the
//!   start cut and driven by the one-hot of `a`), the window is the top
//!   17 bits of `x << a`, and the starts the stage computes from it are
//!   `a` plus the length `L` its first four bits give (`L` written in the
//!   wrapper as the decoder's length table), and for a pair step `a + L1`
//!   plus the length at `a + L1`;
//! * **codes**: for every `(k, S, B)` with the compressor's model a
//!   predictor and slot 0 not the all-zero block's two codes, with the
//!   windows, starts and end cut and driven by their references (the
//!   top 17 bits of `R(I_c..16)` and the one-hot of `P_{I_c}`, where
//!   `I_c` is the symbol count before code `c`: the next position after
//!   `I_{c-1}` whose code length is not 0), the stage's registers hold
//!   what the stage hands on, and for each code the length `L` of its
//!   window is its code length and the next start is the reference's;
//! * **zero**: the same registers for the all-zero block (slot 0's
//!   length 11: a run of 15 and a zero code in one slot), with nothing
//!   cut.

use std::fmt::Write as _;

use super::coding::{self, Part, Units, PAYLOAD, SLOTS};
use super::{Shape, TIES};

/// The codes of a decode stage at the default depth: the first code and
/// how many (a stage of six or more finds its even-numbered starts two
/// codes at a time).
#[derive(Clone, Copy, Debug)]
pub(super) struct Stage {
    /// 1 or 2.
    pub number: usize,
    pub first: usize,
    pub codes: usize,
}

impl Stage {
    /// Bits of the one-hot start of the stage's `j`-th code (`j` =
    /// `codes`: the end), offsets `4j..=17j`.
    fn at_width(j: usize) -> u32 {
        13 * j as u32 + 1
    }

    /// Name of the start wire of the stage's `j`-th code (`j` >= 1).
    fn at_wire(&self, j: usize) -> String {
        if j == self.codes {
            format!("dec{}_end", self.first + self.codes - 1)
        } else {
            format!("dec{}_at", self.first + j)
        }
    }

    /// Whether the start of code `j` comes from the start two codes
    /// before (a pair step) rather than from the one just before.
    fn paired(&self, j: usize) -> bool {
        self.codes >= 6 && j.is_multiple_of(2)
    }

    /// The stage's stream: the payload in stage 1, `s1_stream` after.
    fn stream_cut(&self) -> Option<&'static str> {
        (self.number > 1).then_some("s1_stream")
    }
}

/// The decoder's code lengths (a run and a single 1 share 7; no code of
/// its own is 11 bits long).
const DECODER_LENS: [u32; 5] = [4, 7, 8, 12, 17];

/// The offsets where the stage's `j`-th code can start: the sums of `j`
/// code lengths (a start flag at any other offset is the constant 0 in
/// the unit, which no cut reaches).
fn reachable(j: usize) -> Vec<u32> {
    let mut set = std::collections::BTreeSet::from([0u32]);
    for _ in 0..j {
        set = set
            .iter()
            .flat_map(|a| DECODER_LENS.iter().map(move |l| a + l))
            .collect();
    }
    set.into_iter().collect()
}

/// 1 when the 9-bit `a` is not an offset where the `j`-th code can start.
fn unreachable(a: &str, j: usize) -> String {
    let terms: Vec<String> = reachable(j)
        .iter()
        .map(|o| format!("({a} == 9'd{o})"))
        .collect();
    format!("~({})", terms.join(" | "))
}

/// The length a code's first four bits give (the decoder's table):
/// `1` 17; `01x` 7; `0011` 4; `0000` 8; `0001`, `0010` 12.
fn length_of(t4: &str) -> String {
    format!(
        "({t4}[3] ? 5'd17 : {t4}[2] ? 5'd7 : ({t4}[1:0] == 2'd3) ? 5'd4 : ({t4}[1:0] == 2'd0) ? 5'd8 : 5'd12)"
    )
}

fn dec(w: &str) -> String {
    format!("mpc_decompressor/w:{w}")
}

/// The starts a window part cuts, the codes whose windows it states, and
/// the steps (from the start of one code to that of another) it states.
type WindowGroup = (Vec<usize>, Vec<usize>, Vec<(usize, usize)>);

/// The window parts of a stage: one for the starts the stage computes
/// from offset 0, one per even start (cut) with the starts it gives,
/// and one with the odd starts cut and their windows.
pub(super) fn windows(shape: &Shape, st: Stage) -> Vec<Part> {
    let mb = shape.max_bits - 1;
    let mut parts = Vec::new();
    // groups: (cut starts, (window of start j), (start j from start i))
    let mut groups: Vec<WindowGroup> = Vec::new();
    let mut even = 0;
    while even < st.codes {
        let mut steps = vec![(even, even + 1)];
        if even + 2 <= st.codes && st.paired(even + 2) {
            steps.push((even, even + 2));
        }
        let cut = if even == 0 { vec![] } else { vec![even] };
        groups.push((cut, vec![even], steps));
        even += if st.paired(even + 2) { 2 } else { 1 };
    }
    let odd: Vec<usize> = (1..st.codes).filter(|j| j % 2 == 1).collect();
    if st.codes >= 6 {
        groups.push((odd.clone(), odd, Vec::new()));
    }
    for (cut, heads, steps) in groups {
        let stem = if cut.len() > 1 {
            format!("coding_decode{}_window_odd", st.number)
        } else {
            format!("coding_decode{}_window{}", st.number, heads[0])
        };
        let mut v = format!("module {stem}(input [{mb}:0] bits, input [8:0] len, input [255:0] xs");
        for j in &cut {
            let _ = write!(v, ", input [8:0] a{j}");
        }
        v.push_str(", output bad);\n");
        let x = if st.stream_cut().is_some() {
            "xs"
        } else {
            "bits[255:0]"
        };
        let _ = writeln!(v, "  wire [255:0] x = {x};");
        let mut conns = String::new();
        let mut cuts = Vec::new();
        let mut exposed = Vec::new();
        let mut assume = Vec::new();
        let mut claim = Vec::new();
        if let Some(s) = st.stream_cut() {
            let _ = write!(conns, ", .{s}(xs)");
            cuts.push(dec(s));
        }
        if cut.is_empty() {
            v.push_str("  wire [8:0] a0 = 9'd0;\n");
        }
        for &j in &cut {
            let w = Stage::at_width(j);
            let _ = writeln!(
                v,
                "  wire [{}:0] at{j} = {w}'d1 << (a{j} - 9'd{});",
                w - 1,
                4 * j
            );
            let _ = write!(conns, ", .{}(at{j})", st.at_wire(j));
            cuts.push(dec(&st.at_wire(j)));
            assume.push(unreachable(&format!("a{j}"), j));
        }
        for &j in &heads {
            let head = format!("dec{}_head", st.first + j);
            let _ = writeln!(v, "  wire [16:0] h{j}; wire [255:0] xa{j} = x << a{j};");
            let _ = write!(conns, ", .{head}(h{j})");
            exposed.push(dec(&head));
            claim.push(format!("(h{j} != xa{j}[255:239])"));
        }
        for (i, j) in steps {
            let w = Stage::at_width(j);
            let _ = writeln!(
                v,
                "  wire [3:0] t{i}_{j} = xa{i}[255:252]; wire [8:0] b{i}_{j} = a{i} + {{4'd0, {}}};",
                length_of(&format!("t{i}_{j}"))
            );
            let to = if j == i + 2 {
                let _ = writeln!(
                    v,
                    "  wire [255:0] xb{i}_{j} = x << b{i}_{j}; wire [3:0] u{i}_{j} = xb{i}_{j}[255:252];\n\
                     \x20 wire [8:0] e{i}_{j} = b{i}_{j} + {{4'd0, {}}};",
                    length_of(&format!("u{i}_{j}"))
                );
                format!("e{i}_{j}")
            } else {
                format!("b{i}_{j}")
            };
            let _ = writeln!(v, "  wire [{}:0] n{j};", w - 1);
            let _ = write!(conns, ", .{}(n{j})", st.at_wire(j));
            exposed.push(dec(&st.at_wire(j)));
            claim.push(format!("(n{j} != ({w}'d1 << ({to} - 9'd{})))", 4 * j));
        }
        let _ = writeln!(
            v,
            "  mpc_decompressor dec({TIES}, .in_bits(bits), .in_len(len), .out_block(), .out_error(), .out_model(){conns});"
        );
        let assume = if assume.is_empty() {
            "1'b0".to_string()
        } else {
            assume.join(" | ")
        };
        let _ = writeln!(
            v,
            "  assign bad = ~({assume}) & ({});\nendmodule",
            claim.join(" | ")
        );
        let cut_names: Vec<String> = cut.iter().map(|j| st.at_wire(j.to_owned())).collect();
        let statement = format!(
            "for every decompressor input{}{}: each window is the top 17 bits of the stream shifted left by its start, and each start computed here is the start it comes from plus the length of the code there (two such for a pair step)",
            if st.number > 1 { ", every stage-1 stream" } else { "" },
            if cut.is_empty() {
                String::new()
            } else {
                format!(
                    " and every start of {} (cut, one-hot at an offset where the code can start)",
                    cut_names.join(", ")
                )
            }
        );
        parts.push(Part {
            name: stem.replace('_', " "),
            stem,
            statement,
            wrapper: v,
            cuts,
            exposed,
            units: Units::Decompressor,
        });
    }
    parts
}

/// `e_<i>` for a 5-bit count `i`, `last` for 16 and above.
fn by_count_or(i: &str, e: &str, slice: &str, last: &str) -> String {
    let mut x = last.to_string();
    for s in (0..SLOTS).rev() {
        x = format!("(({i}) == 5'd{s}) ? {e}{s}{slice} : {x}");
    }
    format!("({x})")
}

/// Which codes of a stage a codes part decodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Codes {
    /// All of them, from the stage's input registers to its output
    /// registers.
    All,
    /// Code `c` alone, from a free count before it (the stage's input
    /// count for its first code) with the state before it (the symbols,
    /// the count and the error after code `c - 1`) cut and driven by the
    /// reference's for that count; the stage's last code with the count,
    /// symbols and error it hands to the registers.
    One(usize),
    /// The stage's other registers (model, lengths, bits used and
    /// consumed, shift amount), with free counts before each code, each
    /// the next position with a code after the one before, the counts
    /// (`dec<c>_index`) and the starts cut and driven by them.
    End,
}

/// The symbols `S` with those from count `i` on zeroed.
fn symbols_below(i: &str) -> String {
    format!("(s & ~({{256{{1'b1}}}} >> {{{i}, 4'd0}}))")
}

/// The next position with a code after count `i` (16 for 16).
fn next_of(i: &str) -> String {
    by_count_or(i, "nx", "", "5'd16")
}

/// The next positions with a code (`nx<s>`).
fn next_positions() -> String {
    let mut v = String::new();
    for s in 0..SLOTS {
        let mut x = "5'd16".to_string();
        for t in (s + 1..SLOTS).rev() {
            x = format!("(l{t} != 5'd0) ? 5'd{t} : {x}");
        }
        let _ = writeln!(v, "  wire [4:0] nx{s} = {x};");
    }
    v
}

/// The window of code `c` driven by the reference's for its count `ic<c>`
/// (free past the 16th symbol: `hf<c>`), its length by the decoder's
/// table (`lw<c>`) and the code length at the count (`lc<c>`).
fn window(c: usize, ports: &mut String, decls: &mut String, conns: &mut String) -> String {
    let _ = write!(ports, ", input [16:0] hf{c}");
    let _ = writeln!(
        decls,
        "  wire [16:0] hd{c} = (ic{c} < 5'd16) ? {} : hf{c};\n\
         \x20 wire [3:0] t{c} = hd{c}[16:13]; wire [4:0] lw{c} = {};\n\
         \x20 wire [4:0] lc{c} = {};",
        coding::by_count(&format!("ic{c}"), "g_", "[255:239]"),
        length_of(&format!("t{c}")),
        by_count_or(&format!("ic{c}"), "l", "", "5'd0"),
    );
    let _ = write!(conns, ", .dec{c}_head(hd{c})");
    dec(&format!("dec{c}_head"))
}

/// A codes part of a stage ([`Codes`]). Every window, start and count
/// cut is driven by the reference's: the top 17 bits of `R(I..16)` for
/// a code's count `I`, the one-hot of `P_I` less the stage's first
/// start, and the one-hot of the count. For each code decoded, the claim
/// includes that its window's length is its code length and that the
/// start after it is its start plus that length.
pub(super) fn codes(shape: &Shape, st: Stage, which: Codes) -> Part {
    let n = st.number;
    let f = st.first;
    let last = f + st.codes - 1;
    let stem = match which {
        Codes::All => format!("coding_decode{n}_codes"),
        Codes::One(c) => format!("coding_decode{n}_code{c}"),
        Codes::End => format!("coding_decode{n}_end"),
    };
    let mut ports = String::new();
    let mut decls = next_positions();
    decls.push_str("  wire [4:0] nx16 = 5'd16;\n");
    let mut conns = String::new();
    let mut cuts = Vec::new();
    let mut exposed = Vec::new();
    let mut claim = Vec::new();
    let mut assume = coding::base_assumptions();
    assume.push("(l0 == 5'd11)".to_string());
    let start = if n == 1 {
        "5'd0".to_string()
    } else {
        ports.push_str(&coding::stage_ports(shape, 1));
        conns.push_str(&coding::stage_conns(1));
        cuts.extend(coding::stage_cuts(1));
        assume.extend(coding::stage_fails(shape, 1, PAYLOAD, false));
        "s1_sym_index".to_string()
    };
    let _ = writeln!(decls, "  wire [4:0] ic{f} = {start};");
    // the stage's registers (all but those the last code's part states,
    // with the End part)
    let registers = |decls: &mut String,
                     conns: &mut String,
                     exposed: &mut Vec<String>,
                     claim: &mut Vec<String>,
                     end: bool| {
        decls.push_str(&coding::stage_wires(shape, n));
        let shift = format!("dec{last}_shift");
        let sw = coding::SHIFT_BITS - 1;
        let _ = writeln!(decls, "  wire [{sw}:0] sh;");
        let _ = write!(conns, ", .{shift}(sh)");
        exposed.push(dec(&shift));
        let by_end = |r: &str| {
            [
                format!("s{n}_symbols"),
                format!("s{n}_error"),
                format!("s{n}_sym_index"),
            ]
            .contains(&r.to_string())
        };
        for (r, w) in coding::stage_cuts(n)
            .iter()
            .zip(coding::stage_conns(n).split(", ").filter(|x| !x.is_empty()))
        {
            let name = r.rsplit(':').next().unwrap_or_default();
            if end && by_end(name) {
                continue;
            }
            let _ = write!(conns, ", {w}");
            exposed.push(r.clone());
        }
        claim.extend(
            coding::stage_claims(shape, n, "sh")
                .into_iter()
                .filter(|c| {
                    !end || !(c.contains(&format!("s{n}_symbols")) || c == &format!("s{n}_error"))
                }),
        );
    };
    match which {
        Codes::All => {
            registers(&mut decls, &mut conns, &mut exposed, &mut claim, false);
            claim.push(format!("(s{n}_sym_index != ic{})", last + 1));
            for c in f..=last {
                let _ = writeln!(
                    decls,
                    "  wire [4:0] ic{} = {};",
                    c + 1,
                    next_of(&format!("ic{c}"))
                );
            }
            for c in f..=last + 1 {
                let _ = writeln!(
                    decls,
                    "  wire [8:0] pc{c} = {};",
                    coding::start_of(&format!("ic{c}"))
                );
            }
            for c in f..=last {
                cuts.push(window(c, &mut ports, &mut decls, &mut conns));
                claim.push(format!(
                    "((ic{c} < 5'd16) & ((lw{c} != lc{c}) | (pc{} != pc{c} + {{4'd0, lc{c}}})))",
                    c + 1
                ));
            }
        }
        Codes::One(c) => {
            if c > f {
                let _ = write!(ports, ", input [4:0] ic{c}");
                let b = c - 1;
                let w = 17 - c as u32;
                let _ = writeln!(
                    decls,
                    "  wire [{}:0] xi{b} = {w}'d1 << (ic{c} - 5'd{c});\n\
                     \x20 wire [255:0] xs{b} = {};",
                    w - 1,
                    symbols_below(&format!("ic{c}"))
                );
                let _ = write!(
                    conns,
                    ", .dec{b}_index(xi{b}), .dec{b}_symbols(xs{b}), .dec{b}_error(1'b0)"
                );
                for w in ["index", "symbols", "error"] {
                    cuts.push(dec(&format!("dec{b}_{w}")));
                }
            }
            let _ = writeln!(
                decls,
                "  wire [4:0] ic{} = {};\n  wire [8:0] pc{c} = {};\n  wire [8:0] pc{} = {};",
                c + 1,
                next_of(&format!("ic{c}")),
                coding::start_of(&format!("ic{c}")),
                c + 1,
                coding::start_of(&format!("ic{}", c + 1)),
            );
            cuts.push(window(c, &mut ports, &mut decls, &mut conns));
            if c > f {
                // a count the decoder can reach before code c: at least c
                // (every code stands for a symbol or more), a code there
                assume.push(format!(
                    "(ic{c} > 5'd16) | (ic{c} < 5'd{c}) | ((ic{c} < 5'd16) & (lc{c} == 5'd0))"
                ));
            }
            claim.push(format!(
                "((ic{c} < 5'd16) & ((lw{c} != lc{c}) | (pc{} != pc{c} + {{4'd0, lc{c}}})))",
                c + 1
            ));
            let _ = writeln!(decls, "  wire [255:0] ys; wire ye;");
            let _ = write!(conns, ", .dec{c}_symbols(ys), .dec{c}_error(ye)");
            exposed.push(dec(&format!("dec{c}_symbols")));
            exposed.push(dec(&format!("dec{c}_error")));
            claim.push(format!(
                "(ys != {})",
                symbols_below(&format!("ic{}", c + 1))
            ));
            claim.push("ye".to_string());
            if c == last {
                let _ = writeln!(decls, "  wire [4:0] yi;");
                let _ = write!(conns, ", .s{n}_sym_index(yi)");
                exposed.push(dec(&format!("s{n}_sym_index")));
                claim.push(format!("(yi != ic{})", c + 1));
            } else {
                let w = 16 - c as u32;
                let _ = writeln!(decls, "  wire [{}:0] yi;", w - 1);
                let _ = write!(conns, ", .dec{c}_index(yi)");
                exposed.push(dec(&format!("dec{c}_index")));
                claim.push(format!("(yi != ({w}'d1 << (ic{} - 5'd{})))", c + 1, c + 1));
            }
        }
        Codes::End => {
            registers(&mut decls, &mut conns, &mut exposed, &mut claim, true);
            let _ = writeln!(decls, "  assign s{n}_sym_index = ic{};", last + 1);
            for c in f + 1..=last + 1 {
                let _ = write!(ports, ", input [4:0] ic{c}");
                assume.push(format!("(ic{c} != {})", next_of(&format!("ic{}", c - 1))));
            }
            // what the parts of the codes state: the code length at each
            // count is one of the decoder's, and the start after it is
            // its start plus that length
            for c in f..=last {
                let lens: Vec<String> = DECODER_LENS
                    .iter()
                    .map(|l| format!("(lc{c} == 5'd{l})"))
                    .collect();
                let _ = writeln!(
                    decls,
                    "  wire [4:0] lc{c} = {};
  wire [8:0] pc{c} = {};",
                    by_count_or(&format!("ic{c}"), "l", "", "5'd0"),
                    coding::start_of(&format!("ic{c}"))
                );
                assume.push(format!(
                    "((ic{c} < 5'd16) & (~({}) | (pc{} != pc{c} + {{4'd0, lc{c}}})))",
                    lens.join(" | "),
                    c + 1
                ));
            }
            let _ = writeln!(
                decls,
                "  wire [8:0] pc{} = {};",
                last + 1,
                coding::start_of(&format!("ic{}", last + 1))
            );
            for b in f..last {
                let w = 16 - b as u32;
                let _ = writeln!(
                    decls,
                    "  wire [{}:0] xi{b} = {w}'d1 << (ic{} - 5'd{});",
                    w - 1,
                    b + 1,
                    b + 1
                );
                let _ = write!(conns, ", .dec{b}_index(xi{b})");
                cuts.push(dec(&format!("dec{b}_index")));
            }
        }
    }
    if matches!(which, Codes::All | Codes::End) {
        let base = coding::start_of(&format!("ic{f}"));
        for j in 1..=st.codes {
            let c = f + j;
            let w = Stage::at_width(j);
            let _ = write!(ports, ", input [{}:0] af{c}", w - 1);
            let _ = writeln!(
                decls,
                "  wire [8:0] rc{c} = {} - {base};\n\
                 \x20 wire [{}:0] at{c} = (ic{} < 5'd16) ? ({w}'d1 << (rc{c} - 9'd{})) : af{c};",
                coding::start_of(&format!("ic{c}")),
                w - 1,
                c - 1,
                4 * j
            );
            let _ = write!(conns, ", .{}(at{c})", st.at_wire(j));
            cuts.push(dec(&st.at_wire(j)));
            if which == Codes::End {
                // each start a sum of j code lengths ("coding decode
                // reach", by induction over the codes)
                assume.push(format!(
                    "((ic{} < 5'd16) & {})",
                    c - 1,
                    unreachable(&format!("rc{c}"), j)
                ));
            }
        }
    }
    let w = coding::wrapper(
        shape,
        &stem,
        &ports,
        &decls,
        "",
        Some(&conns),
        &assume,
        &claim,
    );
    let given = if n > 1 {
        ", stage-1 registers as decode stage 1 leaves them"
    } else {
        ""
    };
    let statement = match which {
        Codes::All => format!(
            "for all (k, S, B) but the all-zero block's slot 0{given}, with the stage's windows, starts and end driven by the reference's (top 17 bits of R(I_c..16), one-hot of P_I_c): the stage-{n} registers hold what the stage hands on, the count is the reference's, and each code's window gives its code length and the next start"
        ),
        Codes::One(c) => format!(
            "for all (k, S, B) but the all-zero block's slot 0{given}, {}, with window {c} driven by the reference's{}: after code {c} the count is the next position with a code, the symbols below it are S's, no error, and the window gives the code length at I",
            if c > f { format!("and every count I >= {c} before code {c} with a code at I (or 16)") } else { "the count I before the code the stage's input count".to_string() },
            if c > f { " and the state after the code before driven by the reference's for I" } else { "" }
        ),
        Codes::End => format!(
            "for all (k, S, B) but the all-zero block's slot 0{given}, and counts before each code each the next position with a code after the one before, with the counts and starts driven by them: the stage-{n} registers but the symbols, the error and the count hold what the stage hands on"
        ),
    };
    Part {
        name: stem.replace('_', " "),
        stem: stem.clone(),
        statement,
        wrapper: w,
        cuts: coding::stage1_cuts().into_iter().chain(cuts).collect(),
        exposed: coding::code_exposed().into_iter().chain(exposed).collect(),
        units: Units::Both,
    }
}

/// The lemma that a start plus a code length is a start of the next
/// code: for every `j` from 1 to `codes` and 9-bit `r`, `r` a sum of
/// `j - 1` code lengths and `l` one of them give `r + l` a sum of `j`.
pub(super) fn reach(codes: usize) -> Part {
    let stem = "coding_decode_reach".to_string();
    let mut v = format!("module {stem}(input [8:0] r, input [4:0] l, output bad);\n");
    let lens: Vec<String> = DECODER_LENS
        .iter()
        .map(|n| format!("(l == 5'd{n})"))
        .collect();
    let _ = writeln!(v, "  wire [8:0] e = r + {{4'd0, l}};");
    let mut terms = Vec::new();
    for j in 1..=codes {
        terms.push(format!(
            "(~{} & {})",
            unreachable("r", j - 1),
            unreachable("e", j)
        ));
    }
    let _ = writeln!(
        v,
        "  assign bad = ({}) & ({});\nendmodule",
        lens.join(" | "),
        terms.join(" | ")
    );
    Part {
        name: stem.replace('_', " "),
        stem,
        statement: format!("for every j from 1 to {codes}, every r a sum of j - 1 code lengths (4, 7, 8, 12, 17) and every such length l: r + l is a sum of j"),
        wrapper: v,
        cuts: Vec::new(),
        exposed: Vec::new(),
        units: Units::None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape() -> Shape {
        Shape {
            max_bits: 259,
            header_bits: 3,
            predictors: vec![2, 3, 4],
        }
    }

    const STAGE2: Stage = Stage {
        number: 2,
        first: 6,
        codes: 6,
    };

    #[test]
    fn the_starts_of_a_code_are_the_sums_of_code_lengths() {
        assert_eq!(reachable(0), vec![0]);
        assert_eq!(reachable(1), vec![4, 7, 8, 12, 17]);
        let two = reachable(2);
        assert!(two.contains(&8) && two.contains(&34) && !two.contains(&31));
        // the unit's start buses span 4j..=17j
        for j in 1..=6 {
            let r = reachable(j);
            assert_eq!(r.first(), Some(&(4 * j as u32)));
            assert_eq!(r.last(), Some(&(17 * j as u32)));
            assert_eq!(Stage::at_width(j), 13 * j as u32 + 1);
        }
    }

    #[test]
    fn the_windows_cover_every_code_and_step_of_a_stage() {
        let parts = windows(&shape(), STAGE2);
        let stems: Vec<&str> = parts.iter().map(|p| p.stem.as_str()).collect();
        assert_eq!(
            stems,
            [
                "coding_decode2_window0",
                "coding_decode2_window2",
                "coding_decode2_window4",
                "coding_decode2_window_odd"
            ]
        );
        let mut heads = Vec::new();
        let mut starts = Vec::new();
        for p in &parts {
            assert!(p.cuts.contains(&dec("s1_stream")), "{}", p.stem);
            for e in &p.exposed {
                if e.ends_with("_head") {
                    heads.push(e.clone());
                } else {
                    starts.push(e.clone());
                }
            }
            // no part states a start it cuts
            assert!(p.exposed.iter().all(|e| !p.cuts.contains(e)), "{}", p.stem);
        }
        heads.sort();
        assert_eq!(heads.len(), 6);
        assert_eq!(starts.len(), 6);
        assert!(starts.contains(&dec("dec11_end")));
        let w2 = &parts[1].wrapper;
        assert!(
            w2.contains("wire [26:0] at2 = 27'd1 << (a2 - 9'd8);"),
            "{w2}"
        );
        assert!(w2.contains("(h2 != xa2[255:239])"), "{w2}");
    }

    #[test]
    fn a_code_part_drives_the_state_before_and_states_the_state_after() {
        let p = codes(&shape(), STAGE2, Codes::One(8));
        for w in ["dec7_index", "dec7_symbols", "dec7_error", "dec8_head"] {
            assert!(p.cuts.contains(&dec(w)), "{w}");
        }
        for w in ["dec8_index", "dec8_symbols", "dec8_error"] {
            assert!(p.exposed.contains(&dec(w)), "{w}");
        }
        assert!(p.wrapper.contains("wire [8:0] xi7 = 9'd1 << (ic8 - 5'd8);"));
        assert!(p.wrapper.contains("(yi != (8'd1 << (ic9 - 5'd9)))"));
        let last = codes(&shape(), STAGE2, Codes::One(11));
        assert!(last.exposed.contains(&dec("s2_sym_index")));
        let end = codes(&shape(), STAGE2, Codes::End);
        assert!(end.cuts.contains(&dec("dec11_end")));
        assert!(!end.exposed.contains(&dec("s2_symbols")));
        assert!(end.exposed.contains(&dec("s2_consumed")));
    }
}
