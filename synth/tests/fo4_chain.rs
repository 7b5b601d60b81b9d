//! The FO4 delay measured on the generated inverter chain: positive,
//! settled along the chain, the load is four inverter inputs, within the
//! range measured for the OSU 0.18 um library (docs/hw/synthesis.md), and
//! cached per liberty by its hash. Without OpenSTA or the liberty it prints
//! how to install them and passes, unless MPCGEN_REQUIRE_TOOLS=1.

mod common;

use std::path::Path;

use synth::fo4;

#[test]
fn fo4_of_the_library_is_measured_and_cached() {
    let Some(lib) = common::tools_and_liberty(&["sta"]) else {
        return;
    };
    let cache = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/fo4-test");
    let _ = std::fs::remove_dir_all(&cache);
    let (f, cached) = fo4::measure_cached(&lib, &cache).expect("FO4 measured");
    assert!(!cached);
    let (inv, a, _) = lib.weakest_inverter().expect("an inverter");
    assert_eq!(f.inverter, inv);
    assert_eq!(f.liberty_sha256, lib.sha256);
    // Four inverter inputs on the measured stage.
    let cin = lib
        .cap_pf(a.capacitance.expect("input capacitance"))
        .unwrap();
    assert!(
        (f.load_pf - 4.0 * cin).abs() < 1e-3 * f.load_pf,
        "{f:?} vs 4 x {cin}"
    );
    assert!(f.rise_ns > 0.0 && f.fall_ns > 0.0, "{f:?}");
    assert!((f.fo4_ns - (f.rise_ns + f.fall_ns) / 2.0).abs() < 1e-12);
    assert!(f.input_slew_for_rise_ns > 0.0 && f.input_slew_for_fall_ns > 0.0);
    // The slew has settled: the stages around the measured one agree.
    for n in f.neighbours_ns {
        assert!((n - f.fo4_ns).abs() < 0.01 * f.fo4_ns, "{f:?}");
    }
    // Any library: between 5 ps and 1 ns. OSU 0.18 um (1.8 V, typical):
    // 99.2 ps measured; 0.18 um processes are quoted at 60-100 ps.
    assert!(f.fo4_ns > 0.005 && f.fo4_ns < 1.0, "{f:?}");
    if lib.name == "osu018_stdcells" {
        assert!(f.fo4_ns > 0.09 && f.fo4_ns < 0.11, "{f:?}");
    }

    // Cached: the second call reads the file named by the hash.
    assert!(fo4::cache_path(&lib, &cache).is_file());
    let (again, cached) = fo4::measure_cached(&lib, &cache).expect("cached FO4");
    assert!(cached);
    assert_eq!(again, f);
    // An entry for another file's hash is measured again.
    let mut stale = f.clone();
    stale.liberty_sha256 = "0".repeat(64);
    stale.fo4_ns = 1.0;
    std::fs::write(
        fo4::cache_path(&lib, &cache),
        serde_json::to_string(&stale).unwrap(),
    )
    .unwrap();
    let (fresh, cached) = fo4::measure_cached(&lib, &cache).expect("re-measured FO4");
    assert!(!cached);
    assert_eq!(fresh, f);
}
