//! The generated units of a model set: generating them through the `hdl`
//! library, or loading a directory written earlier (`files.f`,
//! `params.json`, docs/hw/mpc-interface.md).

use std::path::{Path, PathBuf};

use golden::mpc::ModelSet;

/// RTL problems.
#[derive(Debug, thiserror::Error)]
pub enum RtlError {
    /// The model set cannot be loaded (the message names the file).
    #[error(transparent)]
    Model(#[from] golden::mpc::ModelError),
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
    #[error("{path}: not a params.json of generated MPC units: {message}")]
    ParamsFile { path: PathBuf, message: String },
    #[error("{0}")]
    WrongModel(Box<ModelMismatch>),
}

/// Units generated from another model set than the one given.
#[derive(Debug)]
pub struct ModelMismatch {
    pub dir: PathBuf,
    /// `params.json` or the Verilog file that names the other set.
    pub source_file: PathBuf,
    pub rtl_set: String,
    pub rtl_sha: String,
    pub model: PathBuf,
    pub model_sha: String,
}

impl std::fmt::Display for ModelMismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let model = self.model.display();
        write!(
            f,
            "the RTL in {} was generated from model set {} (model.toml SHA-256 {}, per {}), \
             not from {model} (SHA-256 {}); generate the units of {model} (gen --model \
             {model}, or cosim without --rtl) or pass the model set the RTL was generated from",
            self.dir.display(),
            self.rtl_set,
            self.rtl_sha,
            self.source_file.display(),
            self.model_sha,
        )
    }
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
            compressor_latency: hdl::mpc::COMPRESSOR_LATENCY as usize,
            decompressor_latency: hdl::mpc::DECOMPRESSOR_LATENCY as usize,
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
    /// The stage probes the generator published (`params.json` `units`),
    /// if it described both units.
    pub probes: Option<hdl::mpc::probes::StageProbes>,
}

/// What the testbench reads from a `params.json` ([`hdl::mpc::ParamsFile`]
/// written by `gen`); every key is optional so that a hand-written file
/// may give only some numbers.
#[derive(Debug, Default, serde::Deserialize)]
struct ParamsJson {
    model_set: Option<String>,
    model_sha256: Option<String>,
    header_bits: Option<u64>,
    max_bits: Option<u64>,
    units: Option<Vec<hdl::unit::UnitDescription>>,
}

fn read_params_json(path: &Path) -> Result<ParamsJson, RtlError> {
    let text = hdl::unit::read_params_text(path).map_err(|e| match e {
        hdl::unit::UnitsError::Io { path, source } => RtlError::Io { path, source },
        other => RtlError::ParamsFile {
            path: path.to_path_buf(),
            message: other.to_string(),
        },
    })?;
    parse_params_json(path, &text)
}

fn parse_params_json(path: &Path, text: &str) -> Result<ParamsJson, RtlError> {
    serde_json::from_str(text).map_err(|e| RtlError::ParamsFile {
        path: path.to_path_buf(),
        message: e.to_string(),
    })
}

/// The model-set identity in a generated Verilog file's header comment
/// (`// Model set: NAME (...)` and `// Model SHA-256: HEX`), if it has one.
fn verilog_identity(path: &Path) -> Result<Option<(String, String)>, RtlError> {
    use std::io::{BufRead, BufReader};
    let f = std::fs::File::open(path).map_err(|source| RtlError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let mut name = None;
    // The header is the first lines of the file; a module starts after it.
    for line in BufReader::new(f).lines().take(32) {
        let Ok(line) = line else { break };
        if let Some(rest) = line.strip_prefix("// Model set: ") {
            name = rest.split(" (").next().map(str::to_string);
        } else if let Some(sha) = line.strip_prefix("// Model SHA-256: ") {
            return Ok(Some((name.unwrap_or_default(), sha.trim().to_string())));
        } else if !line.starts_with("//") && !line.trim().is_empty() {
            break;
        }
    }
    Ok(None)
}

/// Load the units in `dir` (from `files.f`, else every `*.v`), with the
/// numbers of `params.json` when present (checked against the model set).
/// When `params.json` or the Verilog headers name the model set the units
/// were generated from, its SHA-256 must be that of `model`'s file.
pub fn load(dir: &Path, set: &ModelSet, model: &Path) -> Result<Rtl, RtlError> {
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
    let model_sha = golden::mpc::model::file_sha256(model)?;
    let wrong = |source_file: &Path, rtl_set: &str, rtl_sha: &str| {
        RtlError::WrongModel(Box::new(ModelMismatch {
            dir: dir.to_path_buf(),
            source_file: source_file.to_path_buf(),
            rtl_set: if rtl_set.is_empty() {
                "(unnamed)".to_string()
            } else {
                rtl_set.to_string()
            },
            rtl_sha: rtl_sha.to_string(),
            model: model.to_path_buf(),
            model_sha: model_sha.clone(),
        }))
    };
    let mut params = Params::of(set);
    let mut probes = None;
    let pj = dir.join("params.json");
    if pj.is_file() {
        let file = read_params_json(&pj)?;
        if let Some(units) = &file.units {
            let unit = |u: hdl::mpc::Unit| units.iter().find(|d| d.module == u.module_name());
            let (c, d) = (
                unit(hdl::mpc::Unit::Compressor),
                unit(hdl::mpc::Unit::Decompressor),
            );
            if let Some(c) = c {
                params.compressor_latency = c.latency;
            }
            if let Some(d) = d {
                params.decompressor_latency = d.latency;
            }
            if let (Some(c), Some(d)) = (c, d) {
                probes = Some(hdl::mpc::probes::StageProbes {
                    compressor: c.probes.clone(),
                    decompressor: d.probes.clone(),
                });
            }
        }
        if let Some(sha) = &file.model_sha256 {
            if !sha.eq_ignore_ascii_case(&model_sha) {
                return Err(wrong(&pj, file.model_set.as_deref().unwrap_or(""), sha));
            }
        }
        for (key, found, want) in [
            ("header_bits", file.header_bits, params.header_bits as u64),
            ("max_bits", file.max_bits, params.max_bits as u64),
        ] {
            if let Some(found) = found {
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
    }
    for f in &files {
        if let Some((name, sha)) = verilog_identity(f)? {
            if !sha.eq_ignore_ascii_case(&model_sha) {
                return Err(wrong(f, &name, &sha));
            }
        }
    }
    Ok(Rtl {
        dir: dir.to_path_buf(),
        files,
        params,
        probes,
    })
}

/// Load a model set with a clear error.
pub fn load_set(dir: &Path) -> Result<ModelSet, RtlError> {
    Ok(ModelSet::load(dir)?)
}

/// Generate both units of the model set in `set_dir` into `out_dir` with
/// the `hdl` library, and load them.
pub fn generate(set_dir: &Path, out_dir: &Path) -> Result<Rtl, RtlError> {
    let set = load_set(set_dir)?;
    let command_line = format!("cosim --model {}", set_dir.display());
    let opts = hdl::mpc::Options::default();
    hdl::mpc::write_units(set_dir, out_dir, &hdl::mpc::Unit::ALL, &opts, &command_line).map_err(
        |e| RtlError::Generate {
            path: set_dir.to_path_buf(),
            message: e.to_string(),
        },
    )?;
    load(out_dir, &set, set_dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_params_json_keys_in_any_layout() {
        let p = Path::new("dir/params.json");
        let j = parse_params_json(
            p,
            r#"{ "model_set": "example", "header_bits": 3, "max_bits" : 259,
  "units": [], "extra": [1, {"a": "}"}] }"#,
        )
        .expect("valid");
        assert_eq!(j.header_bits, Some(3));
        assert_eq!(j.max_bits, Some(259));
        assert_eq!(j.units, Some(Vec::new()));
        assert_eq!(j.model_sha256, None);
        let e = parse_params_json(p, r#"{ "header_bits": "three" }"#)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("dir/params.json") && e.contains("invalid type"),
            "{e}"
        );
    }
}
