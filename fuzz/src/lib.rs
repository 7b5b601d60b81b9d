//! Structure-aware mutation fuzzer for mpcgen's untrusted-input readers:
//! the bulk container reader (streaming and random access), the MPC model
//! loader and every block decoder. Design and rationale:
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

use std::path::PathBuf;

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
    /// The dev corpus (`../shared/corpus`); random data when missing.
    pub corpus: PathBuf,
}

impl Paths {
    /// The workspace's `models/` and `../shared/corpus` next to it.
    pub fn default_for_workspace() -> Paths {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let ws = root.parent().map(PathBuf::from).unwrap_or(root);
        Paths {
            models: ws.join("models"),
            corpus: ws.join("..").join("shared").join("corpus"),
        }
    }
}

/// Why a target could not be set up or an input file not read.
#[derive(Debug, thiserror::Error)]
pub enum FuzzError {
    #[error("{0}")]
    Setup(String),
    #[error("input `{name}`: {what}")]
    BadInput { name: String, what: String },
    #[error("unknown target `{0}` (known: container-stream, container-random, model-loader, block-decoders)")]
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
