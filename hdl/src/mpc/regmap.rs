//! The driver files of MPC units with programmable slots
//! (docs/hw/program-slots.md section 5): the `"slots"` key of
//! `params.json` ([`keys`]) and the C header `mpc_slots.h` ([`c_header`])
//! written from it. The addresses are those of
//! `golden::mpc::program::registers`, which writes the register image of a
//! slot image.

use golden::mpc::program::registers::{
    self, ADDR_BITS, DATA_BITS, EPOCH_BITS, FLAG_OFFSET, ROUTE_OFFSET, RULES_OFFSET, RULES_WORDS,
};
use golden::mpc::program::train::header_bits;
use golden::mpc::program::{Form, ReorderClass};
use golden::mpc::ModelSet;

use crate::params::{FieldKeys, RegisterKeys, SlotsKeys};

/// The file name of the C header.
pub const C_HEADER_FILE: &str = "mpc_slots.h";

/// The `"slots"` key of the units of `set` with `k` slots of `form`, or
/// `None` when `k` is 0 (units without slots: `params.json` as without the
/// option).
pub fn optional_keys(set: &ModelSet, k: usize, form: Form) -> Option<SlotsKeys> {
    (k > 0).then(|| keys(set, k, form))
}

/// The `"slots"` key of the units of `set` with `k` slots of `form`. The
/// any-base forms (`full`, `any-part`), which have no RTL, have no route
/// registers (`route_class` `"none"`).
pub fn keys(set: &ModelSet, k: usize, form: Form) -> SlotsKeys {
    let p = set.predictors.len();
    let route_words = registers::route_word_count(form).unwrap_or(0);
    let route_bits = registers::route_bits(form, p).unwrap_or(0);
    let route_class = match (route_words, form.reorder) {
        (0, _) => "none",
        (_, ReorderClass::Columns) => "benes-32",
        (_, ReorderClass::Library) => "library",
        _ => "benes-256",
    };
    let field = |name: &str, lsb, bits, count, stride| FieldKeys {
        name: name.to_string(),
        lsb,
        bits,
        count,
        stride,
    };
    let global = |name: &str, addr: u16, fields| RegisterKeys {
        name: name.to_string(),
        scope: "global".to_string(),
        offset: addr as u32,
        address_formula: format!("{addr:#05x}"),
        words: 1,
        fields,
    };
    // `indexed`: a run of words, addressed by `w` (also when it has one)
    let per_slot = |name: &str, offset: u16, words: usize, indexed: bool, fields| RegisterKeys {
        name: name.to_string(),
        scope: "slot".to_string(),
        offset: offset as u32,
        address_formula: if !indexed {
            format!("0x100 + 0x100*s + {offset}")
        } else {
            format!("0x100 + 0x100*s + {offset} + w")
        },
        words,
        fields,
    };
    let route_field = if route_class == "library" {
        field("library", 0, route_bits as u32, 1, 0)
    } else {
        field("settings", 0, 32, 1, 0)
    };
    SlotsKeys {
        k,
        form: form.name.to_string(),
        form_id: form.id,
        addr_bits: ADDR_BITS,
        data_bits: DATA_BITS,
        epoch_bits: EPOCH_BITS,
        header_bits_loaded: (0..=k).map(|l| header_bits(set.id_count() + l)).collect(),
        group_base: registers::group_base(0) as u32,
        group_stride: (registers::group_base(1) - registers::group_base(0)) as u32,
        route_class: route_class.to_string(),
        route_bits,
        registers: vec![
            global(
                "COMMIT",
                registers::COMMIT,
                vec![field("commit", 0, 1, 1, 0)],
            ),
            global(
                "EPOCH",
                registers::EPOCH,
                vec![field("epoch", 0, EPOCH_BITS, 1, 0)],
            ),
            per_slot(
                "SLOT_FLAG",
                FLAG_OFFSET,
                1,
                false,
                vec![field("loaded", 0, 1, 1, 0)],
            ),
            per_slot(
                "SLOT_RULES",
                RULES_OFFSET,
                RULES_WORDS,
                true,
                vec![
                    field("k_plus_7", 0, 4, 4, 8),
                    field("candidate", 4, 3, 4, 8),
                ],
            ),
            per_slot(
                "SLOT_ROUTE",
                ROUTE_OFFSET,
                route_words,
                true,
                vec![route_field],
            ),
        ],
    }
}

/// A C identifier's worth of `s`: letters and digits kept, the rest `_`,
/// upper case.
fn c_name(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect()
}

/// A C string literal of `s` (printable ASCII kept, the rest escaped).
fn c_string(s: &str) -> String {
    let mut o = String::from("\"");
    for b in s.bytes() {
        match b {
            b'"' | b'\\' => {
                o.push('\\');
                o.push(b as char);
            }
            0x20..=0x7e => o.push(b as char),
            _ => o.push_str(&format!("\\{b:03o}")),
        }
    }
    o.push('"');
    o
}

/// The text of `mpc_slots.h` for `keys`, with `header_comment_lines` (the
/// generated files' header) in its first comment: an include guard,
/// `MPC_SLOTS_K`, `MPC_SLOTS_FORM`, the port widths, `h(L)`, the register
/// addresses (`MPC_REG_COMMIT`, `MPC_REG_EPOCH`, `MPC_REG_SLOT_FLAG(s)`,
/// `MPC_REG_SLOT_RULES(s, w)`, `MPC_REG_SLOT_ROUTE(s, w)`), the word
/// counts and the fields of each register.
pub fn c_header(keys: &SlotsKeys, header_comment_lines: &[String]) -> String {
    let mut o = String::from("/*\n");
    for l in header_comment_lines {
        // a comment cannot end inside the block
        o.push_str(&format!(" * {}\n", l.replace("*/", "* /")).replace(" \n", "\n"));
    }
    o.push_str(
        " *\n * Register map of the programmable slots of the MPC units\n \
         * (docs/hw/program-slots.md section 2): word addresses on cfg_addr,\n \
         * one 32-bit word written per cfg_we cycle; COMMIT makes the written\n \
         * image active between blocks.\n */\n",
    );
    o.push_str("#ifndef MPC_SLOTS_H\n#define MPC_SLOTS_H\n\n");
    let def = |o: &mut String, name: &str, value: String| {
        o.push_str(&format!("#define {name} {value}\n"));
    };
    def(&mut o, "MPC_SLOTS_K", format!("{}u", keys.k));
    def(&mut o, "MPC_SLOTS_FORM", c_string(&keys.form));
    def(&mut o, "MPC_SLOTS_FORM_ID", format!("{}u", keys.form_id));
    def(&mut o, "MPC_CFG_ADDR_BITS", format!("{}u", keys.addr_bits));
    def(&mut o, "MPC_CFG_DATA_BITS", format!("{}u", keys.data_bits));
    def(&mut o, "MPC_EPOCH_BITS", format!("{}u", keys.epoch_bits));
    o.push_str("\n/* header bits h(L) of a block with L loaded slots */\n");
    for (l, h) in keys.header_bits_loaded.iter().enumerate() {
        def(
            &mut o,
            &format!("MPC_HEADER_BITS_LOADED_{l}"),
            format!("{h}u"),
        );
    }
    o.push_str("\n/* addresses */\n");
    def(
        &mut o,
        "MPC_REG_GROUP(s)",
        format!(
            "({:#x}u + {:#x}u * (unsigned)(s))",
            keys.group_base, keys.group_stride
        ),
    );
    let mut counts = Vec::new();
    for r in &keys.registers {
        let name = format!("MPC_REG_{}", c_name(&r.name));
        let indexed = r.address_formula.ends_with(" + w");
        let macro_ = match (r.scope.as_str(), indexed) {
            ("global", _) => name.clone(),
            (_, false) => format!("{name}(s)"),
            (_, true) => format!("{name}(s, w)"),
        };
        let value = match (r.scope.as_str(), indexed) {
            ("global", _) => format!("{:#05x}u", r.offset),
            (_, false) => format!("(MPC_REG_GROUP(s) + {}u)", r.offset),
            (_, true) => format!("(MPC_REG_GROUP(s) + {}u + (unsigned)(w))", r.offset),
        };
        def(&mut o, &macro_, value);
        if r.scope != "global" {
            counts.push((format!("{}_WORDS", name), r.words));
        }
    }
    o.push_str("\n/* words per slot register */\n");
    for (name, words) in counts {
        def(&mut o, &name, format!("{words}u"));
    }
    o.push_str(&format!(
        "\n/* SLOT_ROUTE: {} ({} bits stored, bit c in word c / 32, bit c % 32) */\n",
        keys.route_class, keys.route_bits
    ));
    def(&mut o, "MPC_SLOT_ROUTE_CLASS", c_string(&keys.route_class));
    def(
        &mut o,
        "MPC_SLOT_ROUTE_BITS",
        format!("{}u", keys.route_bits),
    );
    o.push_str(
        "\n/* fields: shift and mask of each (field i of a word at shift + i * stride) */\n",
    );
    for r in &keys.registers {
        for f in &r.fields {
            let name = format!("MPC_{}_{}", c_name(&r.name), c_name(&f.name));
            let mask = if f.bits >= 32 {
                u32::MAX
            } else {
                (1u32 << f.bits) - 1
            };
            def(&mut o, &format!("{name}_SHIFT"), format!("{}u", f.lsb));
            def(&mut o, &format!("{name}_MASK"), format!("{mask:#x}u"));
            if f.count > 1 {
                def(&mut o, &format!("{name}_COUNT"), format!("{}u", f.count));
                def(&mut o, &format!("{name}_STRIDE"), format!("{}u", f.stride));
            }
        }
    }
    o.push_str("\n#endif /* MPC_SLOTS_H */\n");
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use golden::mpc::program::registers::{slot_flag, slot_route, slot_rules, COMMIT, EPOCH};

    fn default_set() -> ModelSet {
        ModelSet::parse(
            include_str!("../../../models/default/model.toml"),
            "default",
        )
        .expect("models/default is valid")
    }

    fn form(name: &str) -> Form {
        Form::by_name(name).expect("form")
    }

    #[test]
    fn keys_follow_the_register_map() {
        let set = default_set();
        assert_eq!(optional_keys(&set, 0, form("stride-colpart")), None);
        let k = keys(&set, 2, form("stride-colpart"));
        assert_eq!((k.k, k.form.as_str(), k.form_id), (2, "stride-colpart", 6));
        assert_eq!((k.addr_bits, k.data_bits, k.epoch_bits), (12, 32, 8));
        // models/default: 8 IDs, a 3-bit header; 9 or 10 with slots: 4 bits
        assert_eq!(k.header_bits_loaded, vec![3, 4, 4]);
        assert_eq!((k.group_base, k.group_stride), (0x100, 0x100));
        assert_eq!((k.route_class.as_str(), k.route_bits), ("benes-256", 1920));
        let names: Vec<&str> = k.registers.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(
            names,
            ["COMMIT", "EPOCH", "SLOT_FLAG", "SLOT_RULES", "SLOT_ROUTE"]
        );
        // every address the formula gives is the golden register map's
        let at = |r: &RegisterKeys, s: usize, w: usize| -> u16 {
            if r.scope == "global" {
                r.offset as u16
            } else {
                (k.group_base + k.group_stride * s as u32 + r.offset + w as u32) as u16
            }
        };
        let r = &k.registers;
        assert_eq!(at(&r[0], 0, 0), COMMIT);
        assert_eq!(at(&r[1], 0, 0), EPOCH);
        for s in 0..2 {
            assert_eq!(at(&r[2], s, 0), slot_flag(s));
            assert_eq!(r[3].words, 8);
            assert_eq!(at(&r[3], s, 7), slot_rules(s, 7));
            assert_eq!(r[4].words, 60);
            assert_eq!(at(&r[4], s, 59), slot_route(s, 59));
        }
        assert_eq!(r[4].address_formula, "0x100 + 0x100*s + 9 + w");
        let cols = keys(&set, 1, form("stride-cols"));
        assert_eq!(
            (cols.route_class.as_str(), cols.route_bits),
            ("benes-32", 144)
        );
        assert_eq!(cols.registers[4].words, 5);
        let lib = keys(&set, 4, form("stride-lib"));
        // models/default: 5 hard-wired predictors, 6 library entries
        assert_eq!((lib.route_class.as_str(), lib.route_bits), ("library", 3));
        assert_eq!(lib.registers[4].words, 1);
        assert_eq!(lib.registers[4].fields[0].bits, 3);
        assert_eq!(lib.registers[4].address_formula, "0x100 + 0x100*s + 9 + w");
        assert_eq!(lib.registers[2].address_formula, "0x100 + 0x100*s + 0");
        assert_eq!(lib.header_bits_loaded, vec![3, 4, 4, 4, 4]);
    }

    #[test]
    fn the_c_header_has_the_map() {
        let set = default_set();
        let k = keys(&set, 2, form("stride-colpart"));
        let lines = vec![
            "Generated by test".to_string(),
            "Command: gen --model 'a */ b'".to_string(),
        ];
        let h = c_header(&k, &lines);
        assert!(h.starts_with("/*\n * Generated by test\n"), "{h}");
        assert!(!h[2..h.find("*/").expect("comment end")].contains("*/"));
        assert!(h.contains(" * Command: gen --model 'a * / b'\n"), "{h}");
        for line in [
            "#ifndef MPC_SLOTS_H",
            "#define MPC_SLOTS_H",
            "#define MPC_SLOTS_K 2u",
            "#define MPC_SLOTS_FORM \"stride-colpart\"",
            "#define MPC_SLOTS_FORM_ID 6u",
            "#define MPC_HEADER_BITS_LOADED_0 3u",
            "#define MPC_HEADER_BITS_LOADED_2 4u",
            "#define MPC_REG_GROUP(s) (0x100u + 0x100u * (unsigned)(s))",
            "#define MPC_REG_COMMIT 0x000u",
            "#define MPC_REG_EPOCH 0x001u",
            "#define MPC_REG_SLOT_FLAG(s) (MPC_REG_GROUP(s) + 0u)",
            "#define MPC_REG_SLOT_RULES(s, w) (MPC_REG_GROUP(s) + 1u + (unsigned)(w))",
            "#define MPC_REG_SLOT_ROUTE(s, w) (MPC_REG_GROUP(s) + 9u + (unsigned)(w))",
            "#define MPC_REG_SLOT_RULES_WORDS 8u",
            "#define MPC_REG_SLOT_ROUTE_WORDS 60u",
            "#define MPC_SLOT_ROUTE_BITS 1920u",
            "#define MPC_SLOT_RULES_CANDIDATE_SHIFT 4u",
            "#define MPC_SLOT_RULES_CANDIDATE_MASK 0x7u",
            "#define MPC_SLOT_RULES_K_PLUS_7_STRIDE 8u",
            "#define MPC_EPOCH_EPOCH_MASK 0xffu",
            "#endif /* MPC_SLOTS_H */",
        ] {
            assert!(h.lines().any(|l| l == line), "{line} missing:\n{h}");
        }
        // no trailing blanks, a final newline
        assert!(h.lines().all(|l| !l.ends_with(' ')), "{h}");
        assert!(h.ends_with("*/\n"));
    }

    #[test]
    fn the_c_header_compiles() {
        if !crate::prereq::available(&["cc"], "the_c_header_compiles", "a C compiler") {
            return;
        }
        let cc = "cc";
        let set = default_set();
        let dir = std::env::temp_dir().join(format!("mpc_slots_h_{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        for (i, name) in ["stride-colpart", "stride-cols", "stride-lib"]
            .iter()
            .enumerate()
        {
            let keys = keys(&set, 1 + i, form(name));
            let h = dir.join(C_HEADER_FILE);
            std::fs::write(&h, c_header(&keys, &["Generated — by a test".to_string()]))
                .expect("write header");
            let c = dir.join("use.c");
            std::fs::write(
                &c,
                "#include \"mpc_slots.h\"\n#include \"mpc_slots.h\"\n\
                 _Static_assert(MPC_REG_SLOT_ROUTE(1, 2) == 0x20bu, \"route\");\n\
                 _Static_assert(MPC_REG_SLOT_FLAG(MPC_SLOTS_K - 1) < (1u << MPC_CFG_ADDR_BITS), \"addr\");\n\
                 static const char *form = MPC_SLOTS_FORM;\n\
                 unsigned f(void) { return MPC_REG_COMMIT + MPC_REG_EPOCH + MPC_SLOT_ROUTE_BITS + (form[0] != 0); }\n",
            )
            .expect("write source");
            let out = std::process::Command::new(cc)
                .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-fsyntax-only"])
                .arg(&c)
                .output()
                .expect("cc runs");
            assert!(
                out.status.success(),
                "{name}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
