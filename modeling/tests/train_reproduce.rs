#![cfg(unix)]

//! Every trained set in `models/` is reproduced byte for byte (model.toml,
//! report.md and every RE heatmap) by the command its report.md names, run
//! as written from a directory laid out like the repository's (`models/`
//! beside the working directory's `../shared/corpus`); and the README's
//! training commands are the ones `models/default` and `models/auto8`
//! name. Needs the shared corpus (`../shared/corpus` beside the
//! repository): skipped without it, a failure under
//! `MPCGEN_REQUIRE_TOOLS=1`.

use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "../../golden/tests/common/skip.rs"]
mod skip;

/// The repository root.
fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tools/ has a parent")
        .to_path_buf()
}

/// The shared corpus, or `None` after a recorded skip when it is missing
/// (a failure under `MPCGEN_REQUIRE_TOOLS=1`).
fn corpus(test: &str) -> Option<PathBuf> {
    let dir = repo().join("../shared/corpus");
    if dir.join("MANIFEST.tsv").is_file() {
        return Some(dir);
    }
    skip::skip(
        skip::REQUIRE_TOOLS,
        test,
        &format!(
            "no corpus at {} (place the shared corpus beside the repository)",
            dir.display()
        ),
    );
    None
}

const CARGO_PREFIX: &str = "cargo run --release -p modeling --bin train -- ";

/// The command line `models/SET/report.md` names (after its "Reproduce:").
fn named_command(set: &str) -> String {
    let path = repo().join("models").join(set).join("report.md");
    let text = std::fs::read_to_string(&path).expect("the shipped report");
    let line = text
        .lines()
        .find(|l| l.starts_with(CARGO_PREFIX))
        .unwrap_or_else(|| panic!("{} names no `{CARGO_PREFIX}...` command", path.display()));
    line.to_string()
}

/// The README's training commands (`models/NAME` as written).
fn readme_commands() -> Vec<String> {
    let text = std::fs::read_to_string(repo().join("README.md")).expect("README.md");
    text.lines()
        .filter(|l| l.starts_with(CARGO_PREFIX))
        .map(|l| l.split('#').next().unwrap_or(l).trim().to_string())
        .collect()
}

/// Run `command` (a `cargo run ... --bin train -- ARGS` line) with the
/// `train` binary under test, from a working directory whose
/// `../shared/corpus` is the corpus and whose `models/` holds the sets the
/// command compares with; then check that it wrote exactly the files of
/// `models/SET`, each byte for byte.
fn reproduces(set: &str, command: &str, corpus: &Path) {
    let args: Vec<&str> = command
        .strip_prefix(CARGO_PREFIX)
        .expect("a train command")
        .split_whitespace()
        .collect();
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("reproduce-{set}"));
    let _ = std::fs::remove_dir_all(&root);
    let work = root.join("work");
    std::fs::create_dir_all(work.join("models")).expect("mkdir");
    std::fs::create_dir_all(root.join("shared")).expect("mkdir");
    std::os::unix::fs::symlink(corpus, root.join("shared/corpus")).expect("link the corpus");
    for w in args.windows(2) {
        if w[0] == "--compare" {
            std::os::unix::fs::symlink(repo().join(w[1]), work.join(w[1]))
                .expect("link a compared set");
        }
    }
    let t0 = std::time::Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_train"))
        .args(&args)
        .current_dir(&work)
        .output()
        .expect("train runs");
    assert!(
        out.status.success(),
        "{command}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!("{set}: trained in {:.1} s", t0.elapsed().as_secs_f64());
    let shipped = repo().join("models").join(set);
    let made = work.join("models").join(set);
    let names = |dir: &Path| {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .expect("list")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    assert_eq!(
        names(&made),
        names(&shipped),
        "{command} writes other files than models/{set} holds"
    );
    for f in names(&shipped) {
        let a = std::fs::read(shipped.join(&f)).expect("read shipped");
        let b = std::fs::read(made.join(&f)).expect("read made");
        assert!(
            a == b,
            "models/{set}/{f} differs from what `{command}` writes (in {})",
            made.display()
        );
    }
    let _ = std::fs::remove_dir_all(&root);
}

/// The README command for `models/NAME` that trains `set` (the first that
/// holds `marker`), with NAME = `set`.
fn readme_command(marker: &str, set: &str) -> String {
    let cmds = readme_commands();
    let c = cmds
        .iter()
        .find(|c| c.contains(marker) && c.contains("--out models/NAME"))
        .unwrap_or_else(|| panic!("no README training command with {marker}: {cmds:?}"));
    c.replace("models/NAME", &format!("models/{set}"))
}

#[test]
fn the_readme_preset_command_reproduces_models_default() {
    let Some(corpus) = corpus("the_readme_preset_command_reproduces_models_default") else {
        return;
    };
    let cmd = readme_command("--preset default", "default");
    assert_eq!(
        named_command("default"),
        cmd,
        "models/default/report.md names another command than the README"
    );
    reproduces("default", &cmd, &corpus);
}

#[test]
fn the_readme_predictors_command_reproduces_models_auto8() {
    let Some(corpus) = corpus("the_readme_predictors_command_reproduces_models_auto8") else {
        return;
    };
    let cmd = readme_command("--predictors 8", "auto8");
    assert_eq!(
        named_command("auto8"),
        cmd,
        "models/auto8/report.md names another command than the README"
    );
    reproduces("auto8", &cmd, &corpus);
}

#[test]
fn the_other_shipped_sets_are_reproduced_by_the_commands_they_name() {
    let Some(corpus) = corpus("the_other_shipped_sets_are_reproduced_by_the_commands_they_name")
    else {
        return;
    };
    let mut sets: Vec<String> = std::fs::read_dir(repo().join("models"))
        .expect("models/")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|s| s != "default" && s != "auto8")
        .filter(|s| repo().join("models").join(s).join("report.md").is_file())
        .collect();
    sets.sort();
    assert!(!sets.is_empty(), "no other trained set in models/");
    for set in sets {
        reproduces(&set, &named_command(&set), &corpus);
    }
}
