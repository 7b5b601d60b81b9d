//! Verilog identifier validation.
//!
//! Accepted: `[A-Za-z_][A-Za-z0-9_]*`, at most [`MAX_IDENT_LEN`] characters,
//! not starting with `__` (reserved by Verilator for its own names), and not
//! a reserved word of Verilog-2005, SystemVerilog-2017 (Verilator parses `.v`
//! files as SystemVerilog) or Icarus Verilog's extensions (`bool`, `wreal`).
//! Escaped identifiers (`\foo `) and `$` are deliberately not supported.

use super::error::IrError;

/// Longest accepted identifier.
pub const MAX_IDENT_LEN: usize = 200;

/// Reserved words: IEEE 1364-2005, IEEE 1800-2017, Icarus extensions.
#[rustfmt::skip]
const KEYWORDS: &[&str] = &[
    "accept_on", "alias", "always", "always_comb", "always_ff", "always_latch", "and", "assert",
    "assign", "assume", "automatic", "before", "begin", "bind", "bins", "binsof", "bit", "bool",
    "break", "buf", "bufif0", "bufif1", "byte", "case", "casex", "casez", "cell", "chandle",
    "checker", "class", "clocking", "cmos", "config", "const", "constraint", "context",
    "continue", "cover", "covergroup", "coverpoint", "cross", "deassign", "default", "defparam",
    "design", "disable", "dist", "do", "edge", "else", "end", "endcase", "endchecker",
    "endclass", "endclocking", "endconfig", "endfunction", "endgenerate", "endgroup",
    "endinterface", "endmodule", "endpackage", "endprimitive", "endprogram", "endproperty",
    "endsequence", "endspecify", "endtable", "endtask", "enum", "event", "eventually", "expect",
    "export", "extends", "extern", "final", "first_match", "for", "force", "foreach", "forever",
    "fork", "forkjoin", "function", "generate", "genvar", "global", "highz0", "highz1", "if",
    "iff", "ifnone", "ignore_bins", "illegal_bins", "implements", "implies", "import",
    "incdir", "include", "initial", "inout", "input", "inside", "instance", "int", "integer",
    "interconnect", "interface", "intersect", "join", "join_any", "join_none", "large", "let",
    "liblist", "library", "local", "localparam", "logic", "longint", "macromodule", "matches",
    "medium", "modport", "module", "nand", "negedge", "nettype", "new", "nexttime", "nmos",
    "nor", "noshowcancelled", "not", "notif0", "notif1", "null", "or", "output", "package",
    "packed", "parameter", "pmos", "posedge", "primitive", "priority", "program", "property",
    "protected", "pull0", "pull1", "pulldown", "pullup", "pulsestyle_ondetect",
    "pulsestyle_onevent", "pure", "rand", "randc", "randcase", "randsequence", "rcmos",
    "real", "realtime", "ref", "reg", "reject_on", "release", "repeat", "restrict", "return",
    "rnmos", "rpmos", "rtran", "rtranif0", "rtranif1", "s_always", "s_eventually",
    "s_nexttime", "s_until", "s_until_with", "scalared", "sequence", "shortint", "shortreal",
    "showcancelled", "signed", "small", "soft", "solve", "specify", "specparam", "static",
    "string", "strong", "strong0", "strong1", "struct", "super", "supply0", "supply1",
    "sync_accept_on", "sync_reject_on", "table", "tagged", "task", "this", "throughout",
    "time", "timeprecision", "timeunit", "tran", "tranif0", "tranif1", "tri", "tri0", "tri1",
    "triand", "trior", "trireg", "type", "typedef", "union", "unique", "unique0", "unsigned",
    "until", "until_with", "untyped", "use", "uwire", "var", "vectored", "virtual", "void",
    "wait", "wait_order", "wand", "weak", "weak0", "weak1", "while", "wildcard", "wire",
    "with", "within", "wor", "wreal", "xnor", "xor",
];

/// True if `name` is a reserved word of any of the accepted dialects.
pub fn is_keyword(name: &str) -> bool {
    KEYWORDS.binary_search(&name).is_ok()
}

/// Checks that `name` is a plain, non-reserved Verilog identifier.
pub fn validate_identifier(name: &str) -> Result<(), IrError> {
    let err = |reason: &str| {
        Err(IrError::InvalidIdentifier {
            name: name.to_string(),
            reason: reason.to_string(),
        })
    };
    let mut chars = name.chars();
    let Some(first) = chars.next() else {
        return err("it is empty");
    };
    if !(first.is_ascii_alphabetic() || first == '_') {
        return err("it must start with an ASCII letter or `_`");
    }
    if let Some(bad) = chars.find(|c| !(c.is_ascii_alphanumeric() || *c == '_')) {
        return err(&format!(
            "character {bad:?} is not allowed (only ASCII letters, digits and `_`)"
        ));
    }
    if name.len() > MAX_IDENT_LEN {
        return err(&format!("it is longer than {MAX_IDENT_LEN} characters"));
    }
    if name.starts_with("__") {
        return err("names starting with `__` are reserved for tool-generated names");
    }
    if is_keyword(name) {
        return err("it is a reserved word of Verilog/SystemVerilog");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keyword_table_is_sorted() {
        assert!(KEYWORDS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn accepts_plain_names() {
        for n in [
            "a",
            "s1_residue_p0",
            "_x",
            "X9",
            "mpc_compressor",
            "in_data",
        ] {
            assert_eq!(validate_identifier(n), Ok(()), "{n}");
        }
    }

    #[test]
    fn rejects_bad_names() {
        for n in [
            "",
            "1abc",
            "a-b",
            "a b",
            "a$b",
            "é",
            "__x",
            "wire",
            "module",
            "logic",
            "bool",
            "always_ff",
            "reg",
            "input",
            "int",
            "bit",
        ] {
            match validate_identifier(n) {
                Err(IrError::InvalidIdentifier { name, reason }) => {
                    assert_eq!(name, n);
                    assert!(!reason.is_empty());
                }
                other => panic!("{n:?} accepted: {other:?}"),
            }
        }
        assert!(validate_identifier(&"a".repeat(MAX_IDENT_LEN + 1)).is_err());
    }
}
