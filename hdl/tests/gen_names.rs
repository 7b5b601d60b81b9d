//! The `gen` binary on bad model sets: a set name that is a path must be
//! refused before anything is written.

use std::path::{Path, PathBuf};
use std::process::Command;

const EXAMPLE: &str = include_str!("../../models/example/model.toml");

fn scratch(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("gen_cli")
        .join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("mkdir");
    d
}

#[test]
fn set_names_that_are_paths_are_refused_and_nothing_is_written() {
    let root = scratch("names");
    let abs = root.join("absolute-target");
    for (i, bad) in [
        "../../escape".to_string(),
        abs.display().to_string(),
        "q\\\"uote".to_string(),
    ]
    .iter()
    .enumerate()
    {
        let set = root.join(format!("set{i}"));
        std::fs::create_dir_all(&set).expect("mkdir");
        let text = EXAMPLE.replace("name = \"example\"", &format!("name = \"{bad}\""));
        std::fs::write(set.join("model.toml"), text).expect("write");
        let work = root.join("work").join("cwd");
        std::fs::create_dir_all(&work).expect("mkdir");
        let out = Command::new(env!("CARGO_BIN_EXE_gen"))
            .arg("--model")
            .arg(&set)
            .current_dir(&work)
            .output()
            .expect("gen runs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{bad}: gen succeeded");
        assert!(err.contains("field `name`"), "{bad}: {err}");
        assert!(err.contains("A-Z a-z 0-9 _ . -"), "{bad}: {err}");
        assert!(
            !root.join("work").join("escape").exists(),
            "{bad}: wrote outside build/"
        );
        assert!(!abs.exists(), "{bad}: wrote to an absolute path");
        let build = work.join("build");
        assert!(
            !build.exists() || std::fs::read_dir(&build).map_or(0, |d| d.count()) == 0,
            "{bad}: wrote into build/"
        );
    }
}
