//! The fuzz targets. Each one makes inputs from seeds and checks an oracle
//! on them; the harness adds the limits every target shares (no panic,
//! peak memory, wall time).

pub mod blocks;
pub mod container;
pub mod model;
pub mod samples;
pub mod slots;

use crate::{FuzzError, Paths, Target};

/// Every target, in the order `all` runs them.
pub const TARGETS: [&str; 5] = [
    "container-stream",
    "container-random",
    "model-loader",
    "block-decoders",
    "slot-image",
];

/// The targets whose seeds are cut from the corpus (when there is one).
pub const CORPUS_TARGETS: [&str; 4] = [
    "container-stream",
    "container-random",
    "block-decoders",
    "slot-image",
];

/// Targets that only check the harness itself (used by its tests; not
/// part of `all`).
pub const SELFTESTS: [&str; 3] = ["selftest-panic", "selftest-memory", "selftest-time"];

/// Set up target `name`; `seed` seeds the data it samples.
pub fn build(name: &str, paths: &Paths, seed: u64) -> Result<Box<dyn Target>, FuzzError> {
    Ok(match name {
        "container-stream" => Box::new(container::ContainerTarget::new(
            paths,
            seed,
            container::Mode::Stream,
        )?),
        "container-random" => Box::new(container::ContainerTarget::new(
            paths,
            seed,
            container::Mode::Random,
        )?),
        "model-loader" => Box::new(model::ModelLoader::new(paths)?),
        "block-decoders" => Box::new(blocks::BlockDecoders::new(paths, seed)?),
        "slot-image" => Box::new(slots::SlotImages::new(paths, seed)?),
        "selftest-panic" | "selftest-memory" | "selftest-time" => {
            Box::new(SelfTest(name.to_string()))
        }
        _ => return Err(FuzzError::UnknownTarget(name.to_string())),
    })
}

/// Deliberately misbehaving targets: an input with a first byte of 1
/// panics, allocates 200 MiB (2: 48 MiB, from another function), or
/// sleeps past the time limit.
struct SelfTest(String);

#[inline(never)]
fn selftest_alloc_large() -> usize {
    let v = vec![1u8; 200 << 20];
    std::hint::black_box(&v).len()
}

#[inline(never)]
fn selftest_alloc_medium() -> usize {
    let v = vec![1u8; 48 << 20];
    std::hint::black_box(&v).len()
}

impl Target for SelfTest {
    fn next_input(&mut self, rng: &mut crate::rng::Rng) -> crate::Input {
        crate::Input {
            tag: "self".into(),
            data: vec![match rng.below(50) {
                0 => 1,
                1 => 2,
                _ => 0,
            }],
            note: String::new(),
        }
    }

    fn check(&self, input: &crate::Input) -> Result<(), crate::Finding> {
        let kind = input.data.first().copied().unwrap_or(0);
        match (self.0.as_str(), kind) {
            (_, 0) => {}
            ("selftest-panic", _) => panic!("selftest panic"),
            ("selftest-memory", 1) => {
                selftest_alloc_large();
            }
            ("selftest-memory", _) => {
                selftest_alloc_medium();
            }
            _ => std::thread::sleep(std::time::Duration::from_secs(60)),
        }
        Ok(())
    }
}
