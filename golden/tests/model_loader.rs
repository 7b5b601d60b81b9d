//! One test per model-file validation error: each must name the field.

use golden::mpc::{ModelError, ModelSet};

const GOOD: &str = include_str!("../../models/example/model.toml");

fn err_of(text: &str) -> ModelError {
    match ModelSet::parse(text, "test.toml") {
        Ok(_) => panic!("expected an error for:\n{text}"),
        Err(e) => e,
    }
}

fn assert_field(text: &str, field: &str, needle: &str) {
    let e = err_of(text);
    assert_eq!(e.field(), Some(field), "wrong field in: {e}");
    let msg = e.to_string();
    assert!(
        msg.contains(field),
        "message does not name the field: {msg}"
    );
    assert!(msg.contains(needle), "message lacks {needle:?}: {msg}");
}

/// The example file with predictor 0's `bytes` line replaced.
fn with_bytes0(bytes: &[&str]) -> String {
    let line = format!(
        "bytes = [{}]",
        bytes
            .iter()
            .map(|b| format!("\"{b}\""))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let mut out = String::new();
    let mut done = false;
    for l in GOOD.lines() {
        if !done && l.starts_with("bytes = ") {
            out.push_str(&line);
            done = true;
        } else {
            out.push_str(l);
        }
        out.push('\n');
    }
    out
}

fn word_stride() -> Vec<String> {
    (0..32)
        .map(|i| {
            if i < 4 {
                "root".to_string()
            } else {
                (i % 4).to_string()
            }
        })
        .collect()
}

fn as_refs(v: &[String]) -> Vec<&str> {
    v.iter().map(|s| s.as_str()).collect()
}

#[test]
fn example_loads() {
    let set = ModelSet::parse(GOOD, "example").expect("example model set is valid");
    assert_eq!(set.predictors.len(), 3);
    assert_eq!(set.header_bits(), 3);
    assert_eq!(set.raw_id(), 5);
    assert_eq!(set.predictors[0].depth(), 1);
    // canonical text round-trips
    let again = ModelSet::parse(&set.to_toml().expect("serialises"), "again")
        .expect("to_toml output parses");
    assert_eq!(again, set);
}

#[test]
fn base_out_of_range() {
    let mut b = word_stride();
    b[5] = "40".into();
    assert_field(
        &with_bytes0(&as_refs(&b)),
        "predictor[0].bytes[5]",
        "base 40 out of range",
    );
}

#[test]
fn byte_is_its_own_base() {
    let mut b = word_stride();
    b[7] = "7".into();
    assert_field(
        &with_bytes0(&as_refs(&b)),
        "predictor[0].bytes[7]",
        "own base",
    );
}

#[test]
fn cycle_in_base_graph() {
    let mut b = word_stride();
    b[4] = "8".into();
    b[8] = "4".into();
    assert_field(&with_bytes0(&as_refs(&b)), "predictor[0].bytes[4]", "cycle");
}

#[test]
fn shift_out_of_range() {
    let mut b = word_stride();
    b[9] = "1<<8".into();
    assert_field(
        &with_bytes0(&as_refs(&b)),
        "predictor[0].bytes[9]",
        "shift 8 out of range",
    );
    b[9] = "1>>9".into();
    assert_field(
        &with_bytes0(&as_refs(&b)),
        "predictor[0].bytes[9]",
        "shift 9 out of range",
    );
}

#[test]
fn unparsable_rule() {
    let mut b = word_stride();
    b[3] = "base".into();
    assert_field(
        &with_bytes0(&as_refs(&b)),
        "predictor[0].bytes[3]",
        "expected `root`",
    );
}

#[test]
fn byte_rules_are_read_only_in_their_one_written_form() {
    // what `ByteRule`'s Display writes is all that is read: one spelling
    // per rule
    for bad in [
        "04", "+4", "-0", "00", " 4", "4 ", "4 << 1", "4<< 1", "4 >>1", "4<<01", "4<<+1", "4>>-1",
        "4<<0", "4>>0", "0x4", "4<<1<<1", "Root", " root", "",
    ] {
        let mut b = word_stride();
        b[6] = bad.into();
        let e = err_of(&with_bytes0(&as_refs(&b)));
        assert_eq!(e.field(), Some("predictor[0].bytes[6]"), "{bad:?}: {e}");
    }
    let mut b = word_stride();
    b[6] = "04".into();
    assert_field(
        &with_bytes0(&as_refs(&b)),
        "predictor[0].bytes[6]",
        "without sign, leading zero or spaces",
    );
    b[6] = "2<<0".into();
    assert_field(
        &with_bytes0(&as_refs(&b)),
        "predictor[0].bytes[6]",
        "write the base alone",
    );
    b[6] = "99999999999999999999".into();
    assert_field(
        &with_bytes0(&as_refs(&b)),
        "predictor[0].bytes[6]",
        "base 99999999999999999999 out of range",
    );
    // the canonical forms at the ends of their ranges
    let mut b = word_stride();
    b[4] = "0<<7".into();
    b[5] = "0>>1".into();
    b[6] = "31".into();
    b[31] = "root".into();
    b[8] = "10".into();
    b[10] = "9<<1".into();
    let text = with_bytes0(&as_refs(&b));
    let set = ModelSet::parse(&text, "t").expect("canonical rules load");
    let written: Vec<String> = set.predictors[0]
        .bytes
        .iter()
        .map(|r| r.to_string())
        .collect();
    assert_eq!(written, b, "rules are written back as read");
}

#[test]
fn every_shipped_model_set_loads_and_writes_back_its_rules() {
    let models = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../models");
    let mut n = 0;
    for entry in std::fs::read_dir(&models).expect("models/") {
        let dir = entry.expect("entry").path();
        if !dir.join("model.toml").is_file() {
            continue;
        }
        let set = ModelSet::load(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        let again = ModelSet::parse(&set.to_toml().expect("serialises"), "again")
            .unwrap_or_else(|e| panic!("{} written back: {e}", dir.display()));
        assert_eq!(again, set, "{}", dir.display());
        n += 1;
    }
    assert!(n >= 7, "{n} model sets in {}", models.display());
}

#[test]
fn predictor_names_must_differ() {
    // the third predictor takes the first one's name
    let text = GOOD.replacen("name = \"byte-stride\"", "name = \"word-stride\"", 1);
    assert_field(&text, "predictor[2].name", "duplicate name");
    let msg = err_of(&text).to_string();
    assert!(msg.contains("predictor[0]"), "names the other: {msg}");
    assert!(msg.contains("\"word-stride\""), "names the name: {msg}");
    // names become file names: case does not make them differ
    let text = GOOD.replacen("name = \"byte-stride\"", "name = \"Halfword-Stride\"", 1);
    assert_field(&text, "predictor[2].name", "predictor[1]");
    // nor may a predictor take the name of another model ID
    for reserved in ["raw", "zero-block", "Same-Words"] {
        let text = GOOD.replacen(
            "name = \"halfword-stride\"",
            &format!("name = \"{reserved}\""),
            1,
        );
        assert_field(&text, "predictor[1].name", "not a predictor");
    }
}

#[test]
fn wrong_byte_count() {
    let b = word_stride();
    assert_field(
        &with_bytes0(&as_refs(&b[..31])),
        "predictor[0].bytes",
        "31 entries",
    );
}

fn with_reorder0(reorder: &str) -> String {
    GOOD.replacen("reorder = \"identity\"", &format!("reorder = {reorder}"), 1)
}

#[test]
fn reorder_not_a_permutation() {
    let mut v: Vec<u32> = (0..256).collect();
    v[10] = 11;
    assert_field(
        &with_reorder0(&format!("{v:?}")),
        "predictor[0].reorder[11]",
        "appears twice",
    );
    let v: Vec<u32> = (0..255).collect();
    assert_field(
        &with_reorder0(&format!("{v:?}")),
        "predictor[0].reorder",
        "255 entries",
    );
    let mut v: Vec<i64> = (0..256).collect();
    v[0] = 256;
    assert_field(
        &with_reorder0(&format!("{v:?}")),
        "predictor[0].reorder[0]",
        "out of range",
    );
    assert_field(
        &with_reorder0("\"shuffled\""),
        "predictor[0].reorder",
        "identity",
    );
}

#[test]
fn explicit_permutation_is_accepted() {
    let v: Vec<u32> = (0..256).rev().collect();
    let set =
        ModelSet::parse(&with_reorder0(&format!("{v:?}")), "t").expect("reversal is a permutation");
    assert_eq!(set.predictors[0].reorder[0], 255);
    assert!(!set.predictors[0].reorder_is_identity());
}

#[test]
fn unknown_version() {
    assert_field(
        &GOOD.replace("version = 1", "version = 7"),
        "version",
        "unknown version",
    );
}

#[test]
fn wrong_format_and_selection() {
    assert_field(
        &GOOD.replace("format = \"mpc-model-set\"", "format = \"bdi\""),
        "format",
        "mpc-model-set",
    );
    assert_field(
        &GOOD.replace("selection = \"zero-run\"", "selection = \"best\""),
        "selection",
        "zero-run",
    );
}

#[test]
fn syntax_and_unknown_keys_are_reported_not_panicked() {
    let e = err_of("format = ");
    assert!(matches!(e, ModelError::Syntax { .. }), "{e}");
    let e = err_of(&GOOD.replace("name = \"example\"", "name = \"example\"\ncolour = 3"));
    assert!(e.to_string().contains("colour"), "{e}");
}

#[test]
fn missing_file_names_the_path() {
    let e = ModelSet::load(std::path::Path::new("/nonexistent/model-set")).unwrap_err();
    assert!(e.to_string().contains("/nonexistent/model-set"), "{e}");
}

#[test]
fn no_predictors() {
    let head = GOOD.split("[[predictor]]").next().unwrap_or_default();
    assert_field(head, "predictor", "at least one predictor");
}

/// The example file with `line` inserted after the line `after`.
fn with_line_after(after: &str, line: &str) -> String {
    assert!(GOOD.contains(after), "example lacks {after:?}");
    GOOD.replacen(after, &format!("{after}\n{line}"), 1)
}

#[test]
fn oversized_model_file_fails_before_parsing() {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("model-loader-big");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let path = dir.join("model.toml");
    // a sparse 100 MB file: nothing is written, reading it would take long
    let f = std::fs::File::create(&path).expect("create");
    f.set_len(100_000_000).expect("set_len");
    drop(f);
    let t0 = std::time::Instant::now();
    let e = ModelSet::load(&dir).unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains(&path.display().to_string()), "{msg}");
    assert!(msg.contains("100000000 bytes"), "names the size: {msg}");
    assert!(msg.contains("524288"), "names the limit: {msg}");
    assert!(t0.elapsed().as_secs() < 5, "took {:?}", t0.elapsed());
    // the hash reads the same bounded way
    let e = golden::mpc::model::file_sha256(&dir).unwrap_err();
    assert!(e.to_string().contains("524288"), "{e}");
    let _ = std::fs::remove_file(&path);
    // text handed to `parse` directly is bounded the same way
    let text = format!("{GOOD}\n{}", "#".repeat(2 << 20));
    let e = err_of(&text);
    assert!(e.to_string().contains("524288"), "{e}");
}

#[test]
fn largest_possible_set_is_far_below_the_size_limit() {
    // 255 predictors (256 model IDs with the raw escape) with explicit
    // reorders and long names: the canonical text must load.
    let mut set = ModelSet::parse(
        &GOOD.replace("zero_block = true", "zero_block = false"),
        "t",
    )
    .expect("valid");
    set.custom.same_words = false;
    let p = set.predictors[0].clone();
    set.predictors = (0..255)
        .map(|i| {
            let mut q = p.clone();
            q.name = format!("{i:0>64}");
            q.reorder = std::array::from_fn(|o| (255 - o) as u8);
            q
        })
        .collect();
    let text = set.to_toml().expect("serialises");
    assert!(
        (text.len() as u64) < golden::mpc::model::MAX_MODEL_FILE_BYTES,
        "{} bytes",
        text.len()
    );
    let back = ModelSet::parse(&text, "t").expect("largest set loads");
    assert_eq!(back.id_count(), 256);
}

#[test]
fn too_many_predictor_tables_are_counted_not_parsed() {
    // 300 empty tables: the count is reported, not the first missing key
    let text = format!("{GOOD}{}", "[[predictor]]\n".repeat(300));
    assert_field(&text, "predictor", "too many models");
    assert!(err_of(&text).to_string().contains("303 predictors"));
}

#[test]
fn too_many_classes() {
    let classes: Vec<String> = (0..300).map(|i| format!("\"c{i}\"")).collect();
    let text = GOOD.replace(
        "classes = []",
        &format!("classes = [{}]", classes.join(", ")),
    );
    assert_field(&text, "provenance.classes", "at most 256");
    let text = GOOD.replace("classes = []", "classes = [\"int8\", 3]");
    assert_field(&text, "provenance.classes[1]", "expected a string");
}

#[test]
fn set_names_that_are_not_safe_file_names() {
    for bad in [
        "/tmp/x/absolute",
        "../..",
        "a/b",
        ".hidden",
        "-flag",
        "quote\\\"d",
        "back\\\\slash",
        "new\\nline",
        "sp ace",
        "ümlaut",
    ] {
        let text = GOOD.replace("name = \"example\"", &format!("name = \"{bad}\""));
        assert_field(&text, "name", "A-Z");
    }
    let long = "n".repeat(65);
    let text = GOOD.replace("name = \"example\"", &format!("name = \"{long}\""));
    assert_field(&text, "name", "at most 64");
    let text = GOOD.replace("name = \"example\"", "name = \"\"");
    assert_field(&text, "name", "empty");
    // the allowed characters
    let text = GOOD.replace("name = \"example\"", "name = \"Set_2.v-1\"");
    ModelSet::parse(&text, "t").expect("letters, digits, _ . - are allowed");
}

#[test]
fn predictor_names_that_are_not_safe_file_names() {
    let text = GOOD.replacen("name = \"word-stride\"", "name = \"../w\"", 1);
    assert_field(&text, "predictor[0].name", "A-Z");
    let text = GOOD.replacen("name = \"byte-stride\"", "name = \"b\\\"\"", 1);
    assert_field(&text, "predictor[2].name", "A-Z");
}

#[test]
fn unknown_keys_name_their_path() {
    let text = with_line_after("same_words = true", "colour = true");
    assert_field(&text, "custom.colour", "unknown key");
    let text = with_line_after("corpus = \"none\"", "note = \"typo\"");
    assert_field(&text, "provenance.note", "notes");
    let text = with_line_after("reorder = \"identity\"", "bases = []");
    assert_field(&text, "predictor[0].bases", "unknown key");
    let text = GOOD.replace("name = \"example\"", "name = \"example\"\ncolour = 3");
    assert_field(&text, "colour", "unknown key");
}

#[test]
fn wrong_types_name_the_field_and_what_was_expected() {
    // the third predictor
    let mut n = 0;
    let text: String = GOOD
        .lines()
        .map(|l| {
            if l.starts_with("reorder = ") {
                n += 1;
                if n == 3 {
                    return "reorder = 7\n".to_string();
                }
            }
            format!("{l}\n")
        })
        .collect();
    assert_field(
        &text,
        "predictor[2].reorder",
        "\"identity\" or a list of 256",
    );
    assert_field(
        &with_reorder0("[1, \"two\"]"),
        "predictor[0].reorder",
        "256 entries",
    );
    let mut v: Vec<String> = (0..256).map(|i| i.to_string()).collect();
    v[4] = "\"four\"".into();
    assert_field(
        &with_reorder0(&format!("[{}]", v.join(", "))),
        "predictor[0].reorder[4]",
        "expected an integer",
    );
    let text = with_bytes0(&[]).replacen("bytes = []", "bytes = 5", 1);
    assert_field(&text, "predictor[0].bytes", "expected a list of 32");
    let mut b: Vec<String> = word_stride().iter().map(|s| format!("\"{s}\"")).collect();
    b[3] = "3".into();
    let text = with_bytes0(&[]).replacen("bytes = []", &format!("bytes = [{}]", b.join(", ")), 1);
    assert_field(&text, "predictor[0].bytes[3]", "expected a string");
    assert_field(
        &GOOD.replace("version = 1", "version = \"1\""),
        "version",
        "expected an integer",
    );
    assert_field(
        &GOOD.replace("selection = \"zero-run\"", "selection = 1"),
        "selection",
        "zero-run",
    );
    assert_field(
        &GOOD.replace("zero_block = true", "zero_block = \"yes\""),
        "custom.zero_block",
        "true or false",
    );
    assert_field(
        &GOOD.replace(
            "[custom]\nzero_block = true\nsame_words = true\n",
            "custom = 1\n",
        ),
        "custom",
        "expected a table",
    );
    assert_field(
        &GOOD.replace("date = \"2026-11-21\"", "date = 2026-11-21"),
        "provenance.date",
        "expected a string",
    );
    assert_field(
        &GOOD.replace("tool = \"hand-written\"\n", ""),
        "provenance.tool",
        "missing",
    );
}
