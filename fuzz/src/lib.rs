//! Structure-aware mutation fuzzer for mpcgen's untrusted-input readers:
//! the bulk container reader (streaming and random access), the MPC model
//! loader, every block decoder and the programmable-slot image loader. Design and rationale:
//! `docs/decisions/fuzzing.md`; usage: `fuzz/README.md`.
//!
//! * [`rng`]: the seeded generator.
//! * [`alloc`]: the counting allocator behind the per-input memory limit.
//! * [`container`]: a lenient model of a container's parts, the fix-ups
//!   that recompute checksums and layout, and the mutations.
//! * [`targets`]: the fuzz targets, each an input generator and an oracle.
//! * [`harness`]: the run loop, limits, findings, the supervising process
//!   and replay/minimisation.

pub mod alloc;
pub mod container;
pub mod harness;
pub mod rng;
pub mod targets;

use std::path::{Path, PathBuf};

/// One input of a target: `tag` says how to read `data` (the codec of a
/// container, the decoder of a compressed block, `toml` for model files).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Input {
    pub tag: String,
    pub data: Vec<u8>,
    /// How the input was made (the mutations applied), for the finding's
    /// description; not part of what is replayed.
    pub note: String,
}

/// An oracle violation: `class` groups findings with one cause (the first
/// input of each class is saved), `detail` says what happened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    pub class: String,
    pub detail: String,
}

impl Finding {
    pub fn new(class: impl Into<String>, detail: impl Into<String>) -> Finding {
        Finding {
            class: class.into(),
            detail: detail.into(),
        }
    }

    /// The one-line description saved next to the input.
    pub fn line(&self) -> String {
        format!("{}: {}", self.class, self.detail).replace(['\n', '\r'], " ")
    }
}

/// Where a target finds what it needs.
#[derive(Clone, Debug)]
pub struct Paths {
    /// The shipped model sets (`models/`).
    pub models: PathBuf,
    /// The corpus seeds are cut from; `None`: synthetic data only.
    pub corpus: Option<PathBuf>,
}

impl Paths {
    /// The workspace's `models/` and [`Paths::workspace_corpus`] (as it
    /// is: see [`default_corpus`] for the check the command line makes).
    pub fn default_for_workspace() -> Paths {
        Paths {
            models: workspace().join("models"),
            corpus: Some(Paths::workspace_corpus()),
        }
    }

    /// The dev corpus, `../shared/corpus` beside the workspace: the
    /// corpus when the command line names none.
    pub fn workspace_corpus() -> PathBuf {
        workspace().join("..").join("shared").join("corpus")
    }
}

fn workspace() -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    root.parent().map(PathBuf::from).unwrap_or(root)
}

#[path = "../../golden/tests/common/skip.rs"]
mod skip_rule;

/// Whether seeds can be cut from the corpus `dir`: it lists at least one
/// data file (`datafiles::corpus::data_files_of`), every one opens, and one is
/// not empty; else an error saying what is wrong.
pub fn check_corpus(dir: &Path) -> Result<(), FuzzError> {
    let setup = |what: String| FuzzError::Setup(format!("corpus {}: {what}", dir.display()));
    let files =
        datafiles::corpus::data_files_of(dir).map_err(|e| FuzzError::Setup(e.to_string()))?;
    let mut bytes = 0;
    for f in &files {
        let len = std::fs::File::open(f)
            .and_then(|h| h.metadata())
            .map_err(|e| setup(format!("{}: {e}", f.display())))?
            .len();
        bytes += len;
    }
    if bytes == 0 {
        return Err(setup(format!(
            "no data to cut seeds from ({} data files, all empty)",
            files.len()
        )));
    }
    Ok(())
}

/// The corpus when the command line names none: `dir` when
/// [`check_corpus`] accepts it. Otherwise an error when `strict`
/// (`MPCGEN_REQUIRE_TOOLS=1`), or `None` (synthetic data only) after a
/// note on stderr and a line in the skip log `log` (`MPCGEN_SKIP_LOG`).
pub fn default_corpus(
    dir: &Path,
    strict: bool,
    log: Option<&Path>,
) -> Result<Option<PathBuf>, FuzzError> {
    match check_corpus(dir) {
        Ok(()) => Ok(Some(dir.to_path_buf())),
        Err(e) if strict => Err(FuzzError::Setup(format!(
            "{}=1 and no usable corpus: {e} (name one with --corpus DIR, or fuzz without \
             one with --no-corpus)",
            skip_rule::REQUIRE_TOOLS
        ))),
        Err(e) => {
            skip_rule::skip_with(
                false,
                log,
                skip_rule::REQUIRE_TOOLS,
                "seeds from the corpus",
                &format!("{e}; synthetic data only"),
            );
            Ok(None)
        }
    }
}

/// [`default_corpus`] with the mode and the log from the environment
/// (`MPCGEN_REQUIRE_TOOLS`, `MPCGEN_SKIP_LOG`).
pub fn default_corpus_from_env(dir: &Path) -> Result<Option<PathBuf>, FuzzError> {
    let log = std::env::var_os(skip_rule::SKIP_LOG).filter(|p| !p.is_empty());
    default_corpus(
        dir,
        skip_rule::strict(skip_rule::REQUIRE_TOOLS),
        log.as_deref().map(Path::new),
    )
}

/// Why a target could not be set up or an input file not read.
#[derive(Debug, thiserror::Error)]
pub enum FuzzError {
    #[error("{0}")]
    Setup(String),
    #[error("input `{name}`: {what}")]
    BadInput { name: String, what: String },
    #[error("unknown target `{0}` (known: container-stream, container-random, model-loader, block-decoders, slot-image)")]
    UnknownTarget(String),
}

/// A fuzz target: makes inputs and checks them.
pub trait Target {
    /// The next input, mutated from the target's seeds.
    fn next_input(&mut self, rng: &mut rng::Rng) -> Input;
    /// Run the code under test on `input` and check the oracle. Panics
    /// escape to the harness, which reports them.
    fn check(&self, input: &Input) -> Result<(), Finding>;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("fuzz-corpus-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).expect("scratch directory");
        d
    }

    #[test]
    fn a_corpus_needs_a_data_file_with_data() {
        let d = scratch("check");
        let missing = d.join("missing");
        let e = check_corpus(&missing).expect_err("missing");
        assert!(
            e.to_string().contains(&missing.display().to_string()),
            "{e}"
        );
        let empty = d.join("empty");
        std::fs::create_dir_all(empty.join("int32")).expect("mkdir");
        assert!(check_corpus(&empty).is_err(), "no data file");
        std::fs::write(empty.join("int32/a.bin"), b"").expect("write");
        let e = check_corpus(&empty).expect_err("only an empty file");
        assert!(e.to_string().contains("all empty"), "{e}");
        std::fs::write(empty.join("int32/b.bin"), [7u8; 64]).expect("write");
        check_corpus(&empty).expect("a file with data");
    }

    #[test]
    fn without_the_default_corpus_strict_mode_fails_and_otherwise_a_skip_is_logged() {
        let d = scratch("default");
        let missing = d.join("missing");
        let log = d.join("skipped.txt");
        let e = default_corpus(&missing, true, Some(&log)).expect_err("strict");
        assert!(e.to_string().contains("MPCGEN_REQUIRE_TOOLS=1"), "{e}");
        assert!(!log.exists(), "a failure is not a skip");
        let got = default_corpus(&missing, false, Some(&log)).expect("not strict");
        assert_eq!(got, None);
        let text = std::fs::read_to_string(&log).expect("the skip is logged");
        assert_eq!(text.lines().count(), 1, "{text}");
        assert!(
            text.contains(&missing.display().to_string()) && text.contains("synthetic data only"),
            "{text}"
        );
        std::fs::create_dir_all(missing.join("fp32")).expect("mkdir");
        std::fs::write(missing.join("fp32/a.bin"), [1u8; 128]).expect("write");
        let got = default_corpus(&missing, true, Some(&log)).expect("usable");
        assert_eq!(got.as_deref(), Some(missing.as_path()));
    }
}
