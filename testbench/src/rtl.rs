//! The generated units of a model set: generating them through the `hdl`
//! library, or loading a directory written earlier (`files.f`,
//! `params.json`, docs/hw/mpc-interface.md).

use std::path::{Path, PathBuf};

use golden::mpc::ModelSet;

/// RTL problems.
#[derive(Debug, thiserror::Error)]
pub enum RtlError {
    #[error("cannot load model set {path}: {source}")]
    Model {
        path: PathBuf,
        #[source]
        source: golden::mpc::ModelError,
    },
    #[error("generating the RTL of {path} failed: {message}")]
    Generate { path: PathBuf, message: String },
    #[error("cannot read {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{dir}: no Verilog files (files.f or *.v)")]
    NoFiles { dir: PathBuf },
    #[error("{path}: `{key}` is {found}, but the model set needs {expected}")]
    Params {
        path: PathBuf,
        key: String,
        found: u64,
        expected: u64,
    },
}

/// The numbers a testbench needs (`params.json`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    /// `H`: model-ID header bits.
    pub header_bits: u32,
    /// `W = H + 256`: the compressed-bit bus width.
    pub max_bits: u32,
    pub compressor_latency: usize,
    pub decompressor_latency: usize,
}

impl Params {
    /// The interface's numbers for a model set (latencies 3 and 4).
    pub fn of(set: &ModelSet) -> Params {
        Params {
            header_bits: set.header_bits(),
            max_bits: set.max_bits(),
            compressor_latency: 3,
            decompressor_latency: 4,
        }
    }
}

/// A directory of generated units.
#[derive(Clone, Debug)]
pub struct Rtl {
    pub dir: PathBuf,
    /// Verilog files, absolute or relative to the current directory.
    pub files: Vec<PathBuf>,
    pub params: Params,
}

/// The number after `"key":` in a flat JSON text.
fn json_number(text: &str, key: &str) -> Option<u64> {
    let at = text.find(&format!("\"{key}\""))?;
    let rest = &text[at + key.len() + 2..];
    let rest = rest.trim_start().strip_prefix(':')?.trim_start();
    let end = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    rest[..end].parse().ok()
}

/// Load the units in `dir` (from `files.f`, else every `*.v`), with the
/// numbers of `params.json` when present (checked against the model set).
pub fn load(dir: &Path, set: &ModelSet) -> Result<Rtl, RtlError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| RtlError::Io { path, source }
    };
    let list = dir.join("files.f");
    let mut files: Vec<PathBuf> = if list.is_file() {
        std::fs::read_to_string(&list)
            .map_err(io(&list))?
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with("//") && !l.starts_with('#'))
            .map(|l| {
                let p = Path::new(l);
                if p.is_absolute() {
                    p.to_path_buf()
                } else {
                    dir.join(p)
                }
            })
            .collect()
    } else {
        std::fs::read_dir(dir)
            .map_err(io(dir))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "v" || x == "sv"))
            .collect()
    };
    files.sort();
    files.dedup();
    if files.is_empty() {
        return Err(RtlError::NoFiles {
            dir: dir.to_path_buf(),
        });
    }
    let mut params = Params::of(set);
    let pj = dir.join("params.json");
    if pj.is_file() {
        let text = std::fs::read_to_string(&pj).map_err(io(&pj))?;
        for (key, want) in [
            ("header_bits", params.header_bits as u64),
            ("max_bits", params.max_bits as u64),
        ] {
            if let Some(found) = json_number(&text, key) {
                if found != want {
                    return Err(RtlError::Params {
                        path: pj,
                        key: key.to_string(),
                        found,
                        expected: want,
                    });
                }
            }
        }
        if let Some(l) = json_number(&text, "compressor_latency") {
            params.compressor_latency = l as usize;
        }
        if let Some(l) = json_number(&text, "decompressor_latency") {
            params.decompressor_latency = l as usize;
        }
    }
    Ok(Rtl {
        dir: dir.to_path_buf(),
        files,
        params,
    })
}

/// Load a model set with a clear error.
pub fn load_set(dir: &Path) -> Result<ModelSet, RtlError> {
    ModelSet::load(dir).map_err(|source| RtlError::Model {
        path: dir.to_path_buf(),
        source,
    })
}

/// Generate both units of the model set in `set_dir` into `out_dir` with
/// the `hdl` library, and load them.
pub fn generate(set_dir: &Path, out_dir: &Path) -> Result<Rtl, RtlError> {
    let set = load_set(set_dir)?;
    let command_line = format!("cosim --model {}", set_dir.display());
    hdl::mpc::write_units(set_dir, out_dir, &hdl::mpc::Unit::ALL, &command_line).map_err(|e| {
        RtlError::Generate {
            path: set_dir.to_path_buf(),
            message: e.to_string(),
        }
    })?;
    load(out_dir, &set)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_params_json_numbers() {
        let t = r#"{ "model_set": "example", "header_bits": 3, "max_bits" : 259,
  "compressor_latency": 3, "decompressor_latency": 4 }"#;
        assert_eq!(json_number(t, "header_bits"), Some(3));
        assert_eq!(json_number(t, "max_bits"), Some(259));
        assert_eq!(json_number(t, "decompressor_latency"), Some(4));
        assert_eq!(json_number(t, "missing"), None);
    }
}
