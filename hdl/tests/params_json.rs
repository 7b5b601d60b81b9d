//! `params.json` is real JSON whatever the names hold, and carries what a
//! testbench needs (same keys and values for every generator).

use std::path::Path;

use golden::mpc::ModelSet;
use hdl::family::params_json;
use hdl::mpc::MpcConfig;
use hdl::params::{FamilyParams, ParamsFile};
use serde_json::Value;

fn example() -> (ModelSet, String) {
    ModelSet::load_with_sha256(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../models/example"))
        .expect("models/example loads")
}

/// The MPC units of `set` at the default depths.
fn mpc_config(set: &ModelSet, sha: &str) -> MpcConfig {
    MpcConfig {
        set: set.clone(),
        sha256: sha.to_string(),
        model_file: "model.toml".to_string(),
        options: Default::default(),
    }
}

fn bdi_table() -> golden::magbdi::Table {
    golden::magbdi::Table::new(golden::magbdi::Params::new(
        128,
        32,
        4,
        golden::magbdi::DeltaMode::Unsigned,
    ))
    .expect("valid BDI parameters")
}

fn dpc_params() -> golden::dpc::DpcParams {
    golden::dpc::DpcParams::new(128, 4, 32).expect("valid DPC parameters")
}

#[test]
fn mpc_params_json_keys_and_values() {
    let (set, sha) = example();
    let mut v: Value =
        serde_json::from_str(&params_json(&mpc_config(&set, &sha)).expect("generates"))
            .expect("valid JSON");
    // the descriptions are checked in tests/stage_probes.rs; here their shape
    let units = v
        .as_object_mut()
        .and_then(|o| o.remove("units"))
        .expect("units");
    assert_eq!(units[0]["module"], "mpc_compressor");
    assert_eq!(units[0]["latency"], 3);
    assert_eq!(units[1]["module"], "mpc_decompressor");
    assert_eq!(units[1]["latency"], 4);
    assert_eq!(
        units[0]["ports"][0],
        serde_json::json!({"name": "clk", "dir": "input", "width": 1})
    );
    assert_eq!(
        units[0]["stages"][2],
        serde_json::json!({"stage": 3, "title": "stage 3: pack the pairs behind the header",
                           "registers": ["s3_bits", "s3_len", "s3_model"]})
    );
    assert_eq!(
        units[0]["probes"][0],
        serde_json::json!({"name": "pred_p0", "stage": 1, "kind": "logic", "width": 256,
                           "mirrors": "candidates[0].pred", "when": "always"})
    );
    let last = units[1]["probes"]
        .as_array()
        .and_then(|a| a.last())
        .expect("decompressor probes");
    assert_eq!(
        *last,
        serde_json::json!({"name": "s4_model", "stage": 4, "kind": "register", "width": 3,
                           "mirrors": "model_id", "when": "accepted"})
    );
    let want = serde_json::json!({
        "unit": "mpc",
        "model_set": "example",
        "model_sha256": sha,
        "header_bits": 3,
        "max_bits": 259,
        "len_bits": 9,
        "model_ids": ["zero-block", "same-words", "word-stride", "halfword-stride", "byte-stride", "raw"],
    });
    assert_eq!(v, want);
}

#[test]
fn names_with_quotes_backslashes_and_newlines_stay_valid_json() {
    // Sets built in code are not checked by the loader: the JSON writer
    // must escape whatever the names hold.
    let (mut set, sha) = example();
    set.name = "a\"b\\c\nd".to_string();
    set.predictors[0].name = "p\"0\\".to_string();
    let text = params_json(&mpc_config(&set, &sha)).expect("generates");
    let v: Value = serde_json::from_str(&text).expect("valid JSON");
    assert_eq!(v["model_set"], "a\"b\\c\nd");
    assert_eq!(v["model_ids"][2], "p\"0\\");
    let back = ParamsFile::parse(&text).expect("reads back");
    let FamilyParams::Mpc(keys) = &back.family else {
        panic!("not MPC: {back:?}")
    };
    assert_eq!(keys.model_set, set.name);
    assert_eq!(params_json(&mpc_config(&set, &sha)).expect("again"), text);
}

#[test]
fn bdi_and_dpc_params_json_keys_and_values() {
    let t = bdi_table();
    let mut v: Value =
        serde_json::from_str(&params_json(&t).expect("generates")).expect("valid JSON");
    let units = v
        .as_object_mut()
        .and_then(|o| o.remove("units"))
        .expect("units");
    assert_eq!(units[0]["module"], "bdi_compressor");
    assert_eq!(units[1]["latency"], 1);
    assert_eq!(
        units[1]["stages"][0]["registers"],
        serde_json::json!(["s1_block", "s1_error"])
    );
    let want = serde_json::json!({
        "unit": "bdi", "block_bytes": 128, "mag_bytes": 32, "base_bytes": 4,
        "mode": "unsigned", "encoding_bits": 2, "raw_code": 3,
        "sizes": [{"bytes": 32, "delta_bits": 6}, {"bytes": 64, "delta_bits": 14},
                  {"bytes": 96, "delta_bits": 22}],
    });
    assert_eq!(v, want);
    let p = dpc_params();
    let v: Value = serde_json::from_str(&params_json(&p).expect("generates")).expect("valid JSON");
    for key in [
        "block_bytes",
        "segment_bytes",
        "sector_bytes",
        "groups",
        "segments",
        "sectors",
        "max_bits",
        "max_truc_bits",
        "len_bits",
        "truc_len_bits",
    ] {
        assert!(v[key].is_u64(), "{key} in {v}");
    }
    assert_eq!(v["unit"], "dpc");
    assert_eq!(v["block_bytes"], 128);
    assert_eq!(v["max_bits"], p.max_bits());
    let modules: Vec<&str> = v["units"]
        .as_array()
        .expect("units")
        .iter()
        .filter_map(|u| u["module"].as_str())
        .collect();
    assert_eq!(
        modules,
        [
            "dpc_compressor",
            "dpc_truc_compressor",
            "dpc_man_compressor",
            "dpc_decompressor",
            "dpc_truc_decompressor"
        ]
    );
}

/// Every family's `params.json` reads back through the one schema into
/// what was written, and writes again to the same text.
#[test]
fn every_family_round_trips_through_the_one_schema() {
    let (set, sha) = example();
    let texts = [
        ("mpc", params_json(&mpc_config(&set, &sha)).expect("MPC")),
        ("bdi", params_json(&bdi_table()).expect("MAG-aware BDI")),
        ("dpc", params_json(&dpc_params()).expect("DPC")),
    ];
    for (tag, text) in texts {
        let file = ParamsFile::parse(&text).unwrap_or_else(|e| panic!("{tag}: {e}"));
        assert_eq!(file.family.tag(), tag);
        assert!(!file.units.is_empty(), "{tag}: no units");
        assert_eq!(file.to_json().expect("writes"), text, "{tag}");
    }
}

/// Reading is strict: an unknown key, a missing key or an unknown family
/// is refused with a message naming it, in the family's keys and in
/// `units` alike.
#[test]
fn unknown_and_missing_keys_are_refused_by_name() {
    let (set, sha) = example();
    let text = params_json(&mpc_config(&set, &sha)).expect("MPC");
    let v: Value = serde_json::from_str(&text).expect("valid JSON");
    let refused = |edit: &dyn Fn(&mut Value), needle: &str| {
        let mut w = v.clone();
        edit(&mut w);
        let e = ParamsFile::parse(&w.to_string())
            .expect_err(needle)
            .to_string();
        assert!(e.contains(needle), "no {needle:?} in {e}");
    };
    refused(
        &|w| w["extra_key"] = Value::from(1),
        "unknown field `extra_key`",
    );
    refused(
        &|w| {
            w.as_object_mut().and_then(|o| o.remove("max_bits"));
        },
        "missing field `max_bits`",
    );
    refused(
        &|w| {
            w.as_object_mut().and_then(|o| o.remove("units"));
        },
        "missing field `units`",
    );
    refused(
        &|w| {
            w.as_object_mut().and_then(|o| o.remove("unit"));
        },
        "missing field `unit`",
    );
    refused(&|w| w["unit"] = Value::from("lz4"), "unknown variant `lz4`");
    refused(
        &|w| w["units"][0]["clock"] = Value::from("clk"),
        "unknown field `clock`",
    );
    refused(
        &|w| {
            w["units"][1]["ports"][0]
                .as_object_mut()
                .and_then(|o| o.remove("width"));
        },
        "missing field `width`",
    );
    // a key of another family is unknown to this one
    refused(
        &|w| w["sizes"] = Value::from(Vec::<u32>::new()),
        "unknown field `sizes`",
    );
}

/// `hdl::params::read` names the file, and refuses one over the size limit.
#[test]
fn read_names_the_file_and_the_key() {
    let dir = std::env::temp_dir().join(format!("params-json-read-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch directory");
    let path = dir.join("params.json");
    let text = params_json(&dpc_params()).expect("DPC");
    std::fs::write(&path, text.replace("\"groups\"", "\"group\"")).expect("write");
    let e = hdl::params::read(&path).expect_err("refused").to_string();
    assert!(e.contains("params.json") && e.contains("`group`"), "{e}");
    std::fs::write(&path, " ".repeat(hdl::unit::MAX_PARAMS_BYTES as usize + 1)).expect("write");
    let e = hdl::params::read(&path).expect_err("too large").to_string();
    assert!(e.contains("larger than"), "{e}");
    std::fs::write(&path, &text).expect("write");
    let file = hdl::params::read(&path).expect("reads");
    assert!(matches!(file.family, FamilyParams::Dpc(_)));
    std::fs::remove_dir_all(&dir).ok();
}
