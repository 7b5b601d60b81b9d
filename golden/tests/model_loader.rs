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
    let again = ModelSet::parse(&set.to_toml(), "again").expect("to_toml output parses");
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
