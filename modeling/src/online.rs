//! The JSON of the online protocol of programmable slots
//! (`mpc ratio --online K --form F --json`, `docs/spec/program-slots.md`
//! section 4) as typed rows, their sums, and the roles of the applications
//! from a model set's provenance notes. `programmable_eval` (the ratio
//! report) and `programmable_hw` (ratio against synthesised area) read
//! them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use golden::mpc::ModelSet;
use serde_json::Value;

/// Why a run could not be read.
#[derive(Debug, thiserror::Error)]
pub enum OnlineError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: not JSON: {source}")]
    Json {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error("{path}: no `files` array")]
    NoFiles { path: PathBuf },
    #[error("{path}: file {index}: field `{field}` missing or not a number")]
    Field {
        path: PathBuf,
        index: usize,
        field: &'static str,
    },
}

/// One file of one run.
#[derive(Clone, Debug)]
pub struct FileRow {
    /// `class/name.bin`.
    pub key: String,
    /// Compressed bits of the test blocks with the hard-wired set alone.
    pub hw: u64,
    /// Compressed bits of the test blocks with the slots loaded.
    pub pr: u64,
    /// Original bits of the test blocks.
    pub orig: u64,
    pub train_blocks: u64,
    pub train_s: f64,
}

/// One run (form, K): every file.
pub struct Run {
    pub files: Vec<FileRow>,
}

/// Sums of a set of files.
#[derive(Clone, Copy, Default)]
pub struct Sum {
    pub hw: u64,
    pub pr: u64,
    pub orig: u64,
}

impl Sum {
    /// Ratio of the hard-wired set alone.
    pub fn hw_ratio(&self) -> f64 {
        self.orig as f64 / self.hw.max(1) as f64
    }
    /// Ratio of the programmed unit.
    pub fn pr_ratio(&self) -> f64 {
        self.orig as f64 / self.pr.max(1) as f64
    }
    /// Programmed over hard-wired, minus 1, in percent.
    pub fn gain(&self) -> f64 {
        100.0 * (self.pr_ratio() / self.hw_ratio() - 1.0)
    }
}

/// `class/name.bin`: the last two components of a path.
pub fn key_of(path: &str) -> String {
    let p = Path::new(path);
    let name = p
        .file_name()
        .map(|s| s.to_string_lossy())
        .unwrap_or_default();
    let class = p
        .parent()
        .and_then(|d| d.file_name())
        .map(|s| s.to_string_lossy())
        .unwrap_or_default();
    format!("{class}/{name}")
}

/// The class (corpus directory) of a `class/name.bin` key.
pub fn class_of(key: &str) -> &str {
    key.split('/').next().unwrap_or("")
}

/// Roles (`seen`, `unseen`, `evaluation`) from the set's provenance notes
/// (`Roles: FILE HASH ROLE; ...`).
pub fn roles(set: &ModelSet) -> BTreeMap<String, String> {
    let notes = &set.provenance.notes;
    let mut out = BTreeMap::new();
    let Some(start) = notes.find("Roles: ") else {
        return out;
    };
    let rest = &notes[start + 7..];
    let end = rest.find(". ").unwrap_or(rest.len());
    for item in rest[..end].split("; ") {
        let parts: Vec<&str> = item.split_whitespace().collect();
        if let [file, _, role] = parts[..] {
            out.insert(file.to_string(), role.to_string());
        }
    }
    out
}

/// The run in `path` (the JSON object `mpc ratio --online --json` prints).
pub fn read_run(path: &Path) -> Result<Run, OnlineError> {
    let text = std::fs::read_to_string(path).map_err(|source| OnlineError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let v: Value = serde_json::from_str(&text).map_err(|source| OnlineError::Json {
        path: path.to_path_buf(),
        source,
    })?;
    let files = v["files"].as_array().ok_or_else(|| OnlineError::NoFiles {
        path: path.to_path_buf(),
    })?;
    let mut rows = Vec::new();
    for (index, f) in files.iter().enumerate() {
        let num = |field: &'static str| -> Result<u64, OnlineError> {
            f[field].as_u64().ok_or_else(|| OnlineError::Field {
                path: path.to_path_buf(),
                index,
                field,
            })
        };
        rows.push(FileRow {
            key: key_of(f["file"].as_str().unwrap_or("")),
            hw: num("hard_wired_bits")?,
            pr: num("programmed_bits")?,
            orig: num("original_bits")?,
            train_blocks: num("train_blocks")?,
            train_s: f["train_seconds"].as_f64().unwrap_or(0.0),
        });
    }
    Ok(Run { files: rows })
}

/// The sums of `rows`.
pub fn sum<'a>(rows: impl IntoIterator<Item = &'a FileRow>) -> Sum {
    rows.into_iter().fold(Sum::default(), |s, r| Sum {
        hw: s.hw + r.hw,
        pr: s.pr + r.pr,
        orig: s.orig + r.orig,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_reads_and_sums() -> Result<(), Box<dyn std::error::Error>> {
        let dir = std::env::temp_dir().join(format!("online-run-{}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        let p = dir.join("r.json");
        std::fs::write(
            &p,
            r#"{"files":[{"file":"/c/int32/a.bin","hard_wired_bits":100,"programmed_bits":80,
                "original_bits":256,"train_blocks":4,"train_seconds":0.5},
               {"file":"x/fp32/b.bin","hard_wired_bits":50,"programmed_bits":50,
                "original_bits":64,"train_blocks":2}]}"#,
        )?;
        let run = read_run(&p)?;
        assert_eq!(run.files.len(), 2);
        assert_eq!(run.files[0].key, "int32/a.bin");
        assert_eq!(class_of(&run.files[1].key), "fp32");
        let s = sum(&run.files);
        assert_eq!((s.hw, s.pr, s.orig), (150, 130, 320));
        assert!((s.gain() - 100.0 * (150.0 / 130.0 - 1.0)).abs() < 1e-9);
        std::fs::write(&p, r#"{"files":[{"file":"a","hard_wired_bits":1}]}"#)?;
        match read_run(&p) {
            Err(OnlineError::Field {
                field, index: 0, ..
            }) => assert_eq!(field, "programmed_bits"),
            other => panic!("expected a missing field, got {:?}", other.map(|_| ())),
        }
        std::fs::remove_dir_all(&dir)?;
        Ok(())
    }
}
