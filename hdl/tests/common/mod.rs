//! Helpers shared by the integration tests of the generated units: block
//! and bus conversions, a seeded generator, corpus samples, and the
//! Verilator lint of a unit.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use golden::mpc::program::{Form, ReorderClass, SlotReorder};
use golden::mpc::ModelSet;
use hdl::ir::{Bits, Module};

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The model set of `models/<name>`.
pub fn load(name: &str) -> ModelSet {
    let dir = repo().join("models").join(name);
    ModelSet::load(&dir).unwrap_or_else(|e| panic!("models/{name}: {e}"))
}

pub fn default_set() -> ModelSet {
    load("default")
}

pub fn form(name: &str) -> Form {
    Form::by_name(name).expect("a slot form")
}

pub fn lcg(seed: &mut u64) -> u64 {
    *seed = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    *seed >> 11
}

pub fn block_bits(b: &[u8; 32]) -> Bits {
    let words: Vec<u64> = b
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
        .collect();
    Bits::from_words(&words, 256).expect("256 bits")
}

pub fn bits_block(v: &Bits) -> [u8; 32] {
    let mut out = [0u8; 32];
    for (i, w) in v.words().iter().enumerate().take(4) {
        out[8 * i..8 * i + 8].copy_from_slice(&w.to_le_bytes());
    }
    out
}

/// Left-align a compressed bit string in a `w`-bit bus.
pub fn left_aligned(bytes: &[u8], len: usize, w: u32) -> Bits {
    let mut words = vec![0u64; (w as usize).div_ceil(64)];
    for k in 0..len {
        if (bytes[k / 8] >> (7 - k % 8)) & 1 == 1 {
            let pos = w as usize - 1 - k;
            words[pos / 64] |= 1 << (pos % 64);
        }
    }
    Bits::from_words(&words, w).expect("width")
}

/// `per_file` evenly spaced corpus blocks of every corpus file, starting at
/// `offset` (in 1/64ths of a file); empty after a recorded skip without the
/// corpus.
pub fn corpus(test: &str, per_file: usize, offset: usize) -> Vec<[u8; 32]> {
    hdl::prereq::corpus_blocks(test, 32, |n| {
        (0..per_file)
            .map(|i| (i * n + offset * n / 64) / per_file % n.max(1))
            .collect()
    })
    .into_iter()
    .filter_map(|b| b.try_into().ok())
    .collect()
}

/// Write the hierarchy of `m` under `root/label` and run
/// `verilator --lint-only -Wall` on it with top module `top`; the problem,
/// if any (a failing status or any output).
pub fn verilator_lint(label: &str, top: &str, m: &Module, root: &Path) -> Option<String> {
    let files = match m.emit_hierarchy(&[]) {
        Ok(f) => f,
        Err(e) => return Some(format!("{label}: {e}")),
    };
    let dir = root.join(label.replace(' ', "_"));
    let paths = match hdl::ir::write_files(&dir, &files) {
        Ok(p) => p,
        Err(e) => return Some(format!("{label}: writing {}: {e}", dir.display())),
    };
    let out = Command::new("verilator")
        .args(["--lint-only", "-Wall", "--top-module", top])
        .args(&paths)
        .output();
    match out {
        Ok(o) if o.status.success() && o.stdout.is_empty() && o.stderr.is_empty() => None,
        Ok(o) => Some(format!(
            "{label}: verilator ({}):\n{}{}",
            o.status,
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )),
        Err(e) => Some(format!("{label}: could not run verilator: {e}")),
    }
}

/// `check` on every job, the jobs split over two threads; the problems.
pub fn problems_in_parallel<T: Sync>(
    jobs: &[T],
    check: impl Fn(&T) -> Option<String> + Sync,
) -> Vec<String> {
    let check = &check;
    std::thread::scope(|s| {
        let handles: Vec<_> = jobs
            .chunks(jobs.len().div_ceil(2).max(1))
            .map(|chunk| s.spawn(move || chunk.iter().filter_map(check).collect::<Vec<_>>()))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("lint thread"))
            .collect()
    })
}

/// The shapes of [`shaped_block`].
#[derive(Clone, Copy)]
pub enum Shape {
    /// 32 random bytes.
    Noise,
    /// Eight 32-bit words a little apart from a random base.
    WordDeltas,
    /// Zeros with up to four random bytes.
    Sparse,
    /// Sixteen 16-bit words a little apart from a random base.
    HalfwordDeltas,
    /// A random byte plus 0, 1, 2 repeating.
    Repeats,
}

/// A random block of `shape`.
pub fn shaped_block(shape: Shape, seed: &mut u64) -> [u8; 32] {
    let mut b = [0u8; 32];
    match shape {
        Shape::Noise => b.iter_mut().for_each(|x| *x = lcg(seed) as u8),
        Shape::WordDeltas => {
            let base = lcg(seed) as u32;
            for w in 0..8 {
                let d = (lcg(seed) % 64) as u32;
                b[4 * w..4 * w + 4].copy_from_slice(&base.wrapping_add(d).to_le_bytes());
            }
        }
        Shape::Sparse => {
            for _ in 0..(lcg(seed) % 5) {
                b[(lcg(seed) % 32) as usize] = lcg(seed) as u8;
            }
        }
        Shape::HalfwordDeltas => {
            let base = lcg(seed) as u16;
            for w in 0..16 {
                let d = (lcg(seed) % 8) as u16;
                b[2 * w..2 * w + 2].copy_from_slice(&base.wrapping_add(d).to_le_bytes());
            }
        }
        Shape::Repeats => {
            let x = lcg(seed) as u8;
            b.iter_mut()
                .enumerate()
                .for_each(|(j, y)| *y = x.wrapping_add((j % 3) as u8));
        }
    }
    b
}

/// The words 1, 2, 3, 4 as bytes, repeated over a block.
pub fn repeating_words() -> [u8; 32] {
    let mut same = [0u8; 32];
    for w in same.chunks_exact_mut(4) {
        w.copy_from_slice(&[1, 2, 3, 4]);
    }
    same
}

/// A random reorder of the class of `form` for `set` (random columns
/// and partition mask, or a random library entry).
pub fn random_reorder(set: &ModelSet, form: Form, seed: &mut u64) -> SlotReorder {
    let mut cols: [u8; 32] = std::array::from_fn(|c| c as u8);
    for a in (1..32).rev() {
        cols.swap(a, (lcg(seed) % (a as u64 + 1)) as usize);
    }
    let mask: [u8; 32] = std::array::from_fn(|_| lcg(seed) as u8);
    match form.reorder {
        ReorderClass::Partition => SlotReorder::Partition(mask),
        ReorderClass::Columns => SlotReorder::Columns(cols),
        ReorderClass::ColumnsPartition => SlotReorder::ColumnsPartition(cols, mask),
        ReorderClass::Library => {
            SlotReorder::Library((lcg(seed) % (set.predictors.len() as u64 + 1)) as u8)
        }
        ReorderClass::Any => panic!("no RTL for any-base forms"),
    }
}
