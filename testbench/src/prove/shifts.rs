//! The lemmas about shifts and the reference concatenation that the
//! coding part's composition uses (docs/hw/formal.md, "Why the coding
//! parts compose"): facts about logical shifts of 256-bit vectors and
//! about one step of the reference, each for every value of its free
//! inputs, with no unit in the view. They carry the barrel shifts of the
//! packer and the decoder (a shift by a sum of code lengths) over to the
//! reference's chain of shifts by one length at a time, an identity ABC
//! does not decide on the units' views in reasonable time.

use std::fmt::Write as _;

use super::coding::{reference, Part, Units, CODE_LENS, PAYLOAD, SLOT, SLOTS};

/// The lengths a code can have (0 for a zero symbol a run covers).
pub(super) fn in_set(l: &str) -> String {
    let terms: Vec<String> = std::iter::once(0)
        .chain(CODE_LENS)
        .map(|n| format!("({l} == 5'd{n})"))
        .collect();
    format!("({})", terms.join(" | "))
}

/// A 17-bit code `c` of length `l` is zero past its length.
pub(super) fn code_fits(c: &str, l: &str) -> String {
    format!("(({c} & ~(17'h1ffff << (5'd{SLOT} - {l}))) == 17'd0)")
}

/// One step of the reference in `w` bits: `{c, 0} | (x >> l)`, the shift
/// a multiplexer over the non-zero code lengths (none for any other
/// length), as `coding::reference` writes it.
pub(super) fn step(c: &str, l: &str, x: &str, w: u32) -> String {
    let shifted: Vec<String> = CODE_LENS
        .iter()
        .map(|n| format!("({l} == 5'd{n}) ? ({x} >> {n})"))
        .collect();
    format!(
        "({{{c}, {}'d0}} | ({} : {x}))",
        w - SLOT,
        shifted.join(" : ")
    )
}

fn lemma(stem: &str, statement: &str, wrapper: String) -> Part {
    Part {
        stem: stem.into(),
        name: stem.replace('_', " "),
        statement: statement.into(),
        wrapper,
        cuts: Vec::new(),
        exposed: Vec::new(),
        units: Units::None,
    }
}

/// The shift lemmas, each a view of its own wrapper alone.
pub(super) fn lemmas() -> Vec<Part> {
    let w = PAYLOAD;
    let ones = format!("{{{w}{{1'b1}}}}");
    let mut parts = Vec::new();
    // left and right shifts compose: by a free 9-bit amount and by each
    // code length (and the decoder's fixed offset of six shortest codes)
    for n in CODE_LENS.iter().copied().chain([24]) {
        let stem = format!("shift_compose_{n}");
        let v = format!(
            "module {stem}(input [{}:0] x, input [8:0] a, output bad);\n\
             \x20 wire [9:0] s = {{1'b0, a}} + 10'd{n};\n\
             \x20 assign bad = (((x << a) << {n}) != (x << s)) | (((x << {n}) << a) != (x << s))\n\
             \x20   | (((x >> a) >> {n}) != (x >> s));\n\
             endmodule\n",
            w - 1
        );
        parts.push(lemma(
            &stem,
            &format!("for all x (256 bits) and a (9 bits): (x << a) << {n} = (x << {n}) << a = x << (a + {n}), and (x >> a) >> {n} = x >> (a + {n})"),
            v,
        ));
    }
    // one step of the reference: undone by a left shift by the length,
    // and it keeps a value that fits in q bits within q + l bits
    let stem = "shift_reference_step";
    let mut v = format!(
        "module {stem}(input [{}:0] x, input [8:0] q, input [16:0] c, input [4:0] l, output bad);\n\
         \x20 wire [9:0] s = {{1'b0, q}} + {{5'd0, l}};\n\
         \x20 wire [{}:0] y = {};\n",
        w - 1,
        w - 1,
        step("c", "l", "x", w)
    );
    let _ = writeln!(
        v,
        "  wire ok = {} & {} & (s <= 10'd{w}) & ((x & ({ones} >> q)) == {w}'d0);",
        in_set("l"),
        code_fits("c", "l"),
    );
    let _ = writeln!(
        v,
        "  assign bad = ok & (((y << l) != x) | ((y & ({ones} >> s)) != {w}'d0));\nendmodule"
    );
    parts.push(lemma(
        stem,
        "for all x (256 bits), q, a code c of length l zero past it, with x zero below its top q bits and q + l <= 256: y = {c, 0} | (x >> l) gives y << l = x, and y is zero below its top q + l bits",
        v,
    ));
    // the reference in 136 and in 256 bits
    let stem = "shift_reference_widths";
    let half = SLOTS / 2;
    let hw = SLOT * half as u32;
    let ports: Vec<String> = (0..SLOTS)
        .map(|s| format!("input [16:0] c{s}, input [4:0] l{s}"))
        .collect();
    let mut v = format!("module {stem}({}, output bad);\n", ports.join(", "));
    v.push_str(&reference("g", half, SLOTS, w));
    v.push_str(&reference("r0", 0, half, hw));
    v.push_str(&reference("r1", half, SLOTS, hw));
    let ok: Vec<String> = (0..SLOTS)
        .map(|s| {
            format!(
                "{} & {}",
                in_set(&format!("l{s}")),
                code_fits(&format!("c{s}"), &format!("l{s}"))
            )
        })
        .collect();
    let mut claim = vec![format!("(g_{half} != {{r1_{half}, {}'d0}})", w - hw)];
    for k in 0..half {
        claim.push(format!(
            "({} != {{r0_{k}, {}'d0}})",
            step(
                &format!("c{k}"),
                &format!("l{k}"),
                &format!("{{r0_{}, {}'d0}}", k + 1, w - hw),
                w
            ),
            w - hw
        ));
    }
    let _ = writeln!(
        v,
        "  assign bad = {} & ({});\nendmodule",
        ok.join(" & "),
        claim.join(" | ")
    );
    parts.push(lemma(
        stem,
        "for all codes c_s of lengths l_s zero past them: R(8..16) in 256 bits is R(8..16) in 136 bits followed by zeros, and one step of the reference on R(k+1..8) in 136 bits followed by zeros is R(k..8) in 136 bits followed by zeros",
        v,
    ));
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_step_is_the_references() {
        let s = step("c3", "l3", "g_4", 256);
        assert!(
            s.starts_with("({c3, 239'd0} | ((l3 == 5'd4) ? (g_4 >> 4)"),
            "{s}"
        );
        assert!(s.ends_with("(l3 == 5'd17) ? (g_4 >> 17) : g_4))"), "{s}");
        assert_eq!(
            code_fits("c", "l"),
            "((c & ~(17'h1ffff << (5'd17 - l))) == 17'd0)"
        );
    }

    #[test]
    fn every_lemma_is_a_module_of_its_own() {
        let l = lemmas();
        assert_eq!(l.len(), CODE_LENS.len() + 3);
        for p in &l {
            assert!(p.wrapper.starts_with(&format!("module {}(", p.stem)));
            assert!(p.wrapper.trim_end().ends_with("endmodule"));
            assert_eq!(p.units, Units::None);
        }
    }
}
