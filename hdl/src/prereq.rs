//! Test prerequisites: external tools (simulators, Yosys, OpenSTA) and the
//! shared corpus.
//!
//! A test that needs a tool calls [`available`]; one that needs the corpus
//! takes its files from [`corpus_files`] or [`corpus_blocks`]. When the
//! prerequisite is missing the test is skipped by the workspace's one rule
//! ([`skip`]): with `MPCGEN_REQUIRE_TOOLS=1` (CI sets it) that is a failure,
//! so a broken install cannot pass by skipping; otherwise the test prints
//! `SKIPPED ...`, records a line in the file `MPCGEN_SKIP_LOG` names (`make
//! test` lists them at the end) and returns early or runs without the
//! missing part.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

#[path = "../../golden/tests/common/skip.rs"]
mod rule;

pub use rule::{skip, skip_with, REQUIRE_GPU, REQUIRE_TOOLS, SKIP_LOG};

/// True when `tool` is an executable on `PATH`.
pub fn on_path(tool: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(tool).is_file()))
}

/// `MPCGEN_REQUIRE_TOOLS=1`: a missing prerequisite fails the test.
pub fn strict() -> bool {
    rule::strict(REQUIRE_TOOLS)
}

/// Report that `what` (e.g. "iverilog not on PATH") stops the test `test`:
/// a panic in strict mode, else a note on stderr and a line in the skip
/// log (the caller then returns).
pub fn missing(what: &str, test: &str, hint: &str) {
    skip(REQUIRE_TOOLS, test, &format!("{what} ({hint})"));
}

/// Whether every tool in `tools` is on `PATH`; when one is not, reports it
/// with [`missing`] (a panic in strict mode) and returns false.
pub fn available(tools: &[&str], test: &str, hint: &str) -> bool {
    match tools.iter().find(|t| !on_path(t)) {
        None => true,
        Some(t) => {
            missing(&format!("`{t}` is not on PATH"), test, hint);
            false
        }
    }
}

/// The shared corpus: `../shared/corpus` beside the repository.
pub fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus")
}

const CORPUS_HINT: &str = "place the shared corpus beside the repository";

/// The corpus's data files (`CLASS/*.bin` under [`corpus_dir`]), sorted.
/// When the corpus is missing, unreadable or holds no such file, the part
/// of `test` that needs it is skipped ([`missing`]: a panic in strict mode)
/// and the list is empty.
pub fn corpus_files(test: &str) -> Vec<PathBuf> {
    match list_corpus(&corpus_dir()) {
        Ok(files) => files,
        Err(why) => {
            missing(&why, test, CORPUS_HINT);
            Vec::new()
        }
    }
}

fn list_corpus(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let unreadable =
        |d: &Path, e: std::io::Error| format!("corpus {} unreadable: {e}", d.display());
    if !dir.exists() {
        return Err(format!("no corpus at {}", dir.display()));
    }
    let mut files = Vec::new();
    for class in std::fs::read_dir(dir).map_err(|e| unreadable(dir, e))? {
        let class = class.map_err(|e| unreadable(dir, e))?.path();
        if !class.is_dir() {
            continue;
        }
        for f in std::fs::read_dir(&class).map_err(|e| unreadable(&class, e))? {
            let f = f.map_err(|e| unreadable(&class, e))?.path();
            if f.extension().is_some_and(|x| x == "bin") {
                files.push(f);
            }
        }
    }
    if files.is_empty() {
        return Err(format!(
            "no CLASS/*.bin file in the corpus {}",
            dir.display()
        ));
    }
    files.sort();
    Ok(files)
}

/// Blocks of `bytes` bytes from every file of [`corpus_files`]: of a file
/// of `n` whole blocks, the blocks `pick(n)` names (indices past the end
/// are left out), file by file in order. Empty, after a skip, when the
/// corpus is missing or a file cannot be read (a panic in strict mode).
pub fn corpus_blocks(test: &str, bytes: usize, pick: impl Fn(usize) -> Vec<usize>) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for f in corpus_files(test) {
        match file_blocks(&f, bytes, &pick) {
            Ok(b) => out.extend(b),
            Err(e) => {
                missing(
                    &format!("corpus file {} unreadable: {e}", f.display()),
                    test,
                    CORPUS_HINT,
                );
                return Vec::new();
            }
        }
    }
    out
}

fn file_blocks(
    f: &Path,
    bytes: usize,
    pick: &impl Fn(usize) -> Vec<usize>,
) -> std::io::Result<Vec<Vec<u8>>> {
    let mut file = File::open(f)?;
    let n = (file.metadata()?.len() / bytes as u64) as usize;
    let mut out = Vec::new();
    for i in pick(n).into_iter().filter(|&i| i < n) {
        let mut b = vec![0; bytes];
        file.seek(SeekFrom::Start((i * bytes) as u64))?;
        file.read_exact(&mut b)?;
        out.push(b);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    fn log_in(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("hdl-skip-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temporary directory");
        dir.join("skipped.txt")
    }

    #[test]
    fn a_skip_outside_strict_mode_appends_its_line() {
        let log = log_in("param");
        skip_with(
            false,
            Some(&log),
            REQUIRE_TOOLS,
            "a check",
            "`x` is not on PATH",
        );
        skip_with(false, Some(&log), REQUIRE_TOOLS, "a check", "no\ncorpus");
        skip_with(false, None, REQUIRE_TOOLS, "a check", "not logged");
        let text = std::fs::read_to_string(&log).expect("the log is written");
        let name = "prereq::tests::a_skip_outside_strict_mode_appends_its_line";
        assert_eq!(
            text,
            format!("hdl {name}: `x` is not on PATH\nhdl {name}: no corpus\n")
        );
    }

    #[test]
    fn a_skip_in_strict_mode_panics_and_logs_nothing() {
        let log = log_in("strict");
        let r = std::panic::catch_unwind(|| {
            skip_with(true, Some(&log), REQUIRE_GPU, "a GPU test", "no adapter")
        });
        let msg = r.expect_err("strict mode panics");
        let msg = msg.downcast_ref::<String>().expect("a formatted message");
        assert!(
            msg.contains("MPCGEN_REQUIRE_GPU=1") && msg.contains("no adapter"),
            "{msg}"
        );
        assert!(!log.exists(), "a failure is not a skip");
    }

    #[test]
    fn a_log_that_cannot_be_written_fails_the_test() {
        let dir = log_in("unwritable");
        let r = std::panic::catch_unwind(|| {
            skip_with(
                false,
                Some(&dir.join("no/such/dir")),
                REQUIRE_TOOLS,
                "t",
                "r",
            )
        });
        assert!(r.is_err(), "an unrecorded skip would pass unseen");
    }

    #[test]
    fn a_corpus_lists_its_class_files_and_blocks_are_read_where_picked() {
        let root = log_in("corpus").with_file_name("corpus");
        let e = list_corpus(&root).expect_err("missing");
        assert!(e.starts_with("no corpus at"), "{e}");
        std::fs::create_dir_all(root.join("int32")).expect("mkdir");
        std::fs::write(root.join("MANIFEST.tsv"), "x").expect("write");
        std::fs::write(root.join("int32/a.txt"), "x").expect("write");
        let e = list_corpus(&root).expect_err("no data file");
        assert!(e.contains("no CLASS/*.bin file"), "{e}");
        let data: Vec<u8> = (0..100).collect();
        std::fs::write(root.join("int32/b.bin"), &data).expect("write");
        std::fs::create_dir_all(root.join("fp32")).expect("mkdir");
        std::fs::write(root.join("fp32/a.bin"), &data[..40]).expect("write");
        let files = list_corpus(&root).expect("listed");
        assert_eq!(files, [root.join("fp32/a.bin"), root.join("int32/b.bin")]);
        // 3 whole blocks of 32 bytes: the block past the end is left out
        let blocks = file_blocks(&files[1], 32, &|n| vec![n - 1, 0, n]).expect("read");
        assert_eq!(blocks, [data[64..96].to_vec(), data[..32].to_vec()]);
    }

    /// Run by [`the_environment_decides_and_processes_append_whole_lines`]
    /// in child processes, with the environment it sets.
    #[test]
    #[ignore = "a child of the_environment_decides_and_processes_append_whole_lines"]
    fn skip_child() {
        for i in 0..50 {
            missing(
                &format!("reason {i:03} {}", "x".repeat(200)),
                "child",
                "hint",
            );
        }
    }

    fn child(log: &Path, strict: Option<&str>) -> std::process::Output {
        let mut c = Command::new(std::env::current_exe().expect("test executable"));
        c.args(["--exact", "prereq::tests::skip_child", "--ignored"])
            .env(SKIP_LOG, log)
            .env_remove(REQUIRE_TOOLS);
        if let Some(v) = strict {
            c.env(REQUIRE_TOOLS, v);
        }
        c.output().expect("run the child")
    }

    #[test]
    fn the_environment_decides_and_processes_append_whole_lines() {
        let log = log_in("env");
        // only exactly `1` is strict
        let out = child(&log, Some("1"));
        assert!(!out.status.success(), "MPCGEN_REQUIRE_TOOLS=1 fails");
        assert!(String::from_utf8_lossy(&out.stdout).contains("MPCGEN_REQUIRE_TOOLS=1"));
        assert!(!log.exists());
        // four at once, each appending 50 lines of 240 bytes: 200 whole lines
        let kids: Vec<_> = [None, Some("0"), Some("yes"), Some("")]
            .into_iter()
            .map(|v| {
                let log = log.clone();
                std::thread::spawn(move || child(&log, v))
            })
            .collect();
        for k in kids {
            let out = k.join().expect("child thread");
            assert!(out.status.success(), "{out:?}");
        }
        let text = std::fs::read_to_string(&log).expect("log");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 200);
        let x = "x".repeat(200);
        for l in lines {
            let (head, tail) = l.split_once(": ").expect("CRATE TEST: REASON");
            assert_eq!(head, "hdl prereq::tests::skip_child");
            assert!(
                tail.starts_with("reason ") && tail.ends_with(&format!("{x} (hint)")),
                "{l}"
            );
        }
    }
}
