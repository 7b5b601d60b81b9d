//! The generated units of a model set: generating them through the `hdl`
//! library, or loading a directory written earlier (`files.f`,
//! `params.json`, docs/hw/mpc-interface.md). The identity of the model set
//! and each unit's latency come from `params.json`, read through the one
//! typed schema of `hdl::params` (the stage locator reads the units' stages
//! and probes from the same file).

use std::path::{Path, PathBuf};

use golden::mpc::ModelSet;
use hdl::params::{FamilyParams, ParamsFile};
use hdl::unit::UnitDescription;
use hdl::{Side, Unit};

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
    #[error(
        "{dir}: no params.json; gen writes one with the units (it names the model set they \
         were generated from): regenerate them with gen --model MODEL --out {dir}"
    )]
    NoParams { dir: PathBuf },
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
    #[error("{path}: the units have programmable slots {found}, not the {expected} asked for")]
    Slots {
        path: PathBuf,
        found: String,
        expected: String,
    },
}

/// Units generated from another model set than the one given.
#[derive(Debug)]
pub struct ModelMismatch {
    pub dir: PathBuf,
    /// The `params.json` that names the other set.
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
    /// The interface's numbers for a model set, with the latencies of the
    /// default pipeline depths.
    pub fn of(set: &ModelSet) -> Params {
        let depths = hdl::mpc::Options::default();
        Params {
            header_bits: set.header_bits(),
            max_bits: set.max_bits(),
            compressor_latency: depths.compressor_stages(),
            decompressor_latency: depths.decompressor_stages(),
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
    /// The programmable slots of the units (`None`: none, K = 0).
    pub slots: Option<crate::slots::SlotUnit>,
}

fn read_params_json(path: &Path) -> Result<ParamsFile, RtlError> {
    hdl::params::read(path).map_err(|e| match e {
        hdl::unit::UnitsError::Io { path, source } => RtlError::Io { path, source },
        hdl::unit::UnitsError::Parse { path, message } => RtlError::ParamsFile { path, message },
        hdl::unit::UnitsError::TooLarge { path } => RtlError::ParamsFile {
            path,
            message: format!("larger than {} bytes", hdl::unit::MAX_PARAMS_BYTES),
        },
        other => RtlError::ParamsFile {
            path: path.to_path_buf(),
            message: other.to_string(),
        },
    })
}

/// The description of MPC unit `side` in `file`, if it has one.
fn described(file: &ParamsFile, side: Side) -> Option<&UnitDescription> {
    file.unit(Unit::Mpc(side).module_name())
}

/// Load the units in `dir` (from `files.f`, else every `*.v`) with their
/// `params.json`, which must be that of MPC units generated from `model`:
/// the SHA-256 it names must be that of `model`'s file and its numbers
/// those of `set`. Each unit's latency is the one its description
/// publishes; a unit `params.json` does not describe (not
/// generated) keeps the default depth's latency.
pub fn load(dir: &Path, set: &ModelSet, model: &Path) -> Result<Rtl, RtlError> {
    load_units(dir, set, model, None)
}

/// [`load`] for units with the programmable slots `slots` (`None`: those
/// `params.json` describes, under its key `slots`, or none); units whose
/// `params.json` describes other slots than `slots` are refused.
pub fn load_units(
    dir: &Path,
    set: &ModelSet,
    model: &Path,
    slots: Option<crate::slots::SlotUnit>,
) -> Result<Rtl, RtlError> {
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
    let pj = dir.join("params.json");
    if !pj.is_file() {
        return Err(RtlError::NoParams {
            dir: dir.to_path_buf(),
        });
    }
    let file = read_params_json(&pj)?;
    let FamilyParams::Mpc(keys) = &file.family else {
        return Err(RtlError::ParamsFile {
            path: pj,
            message: format!(
                "it describes units of another family (\"unit\": \"{}\")",
                file.family.tag()
            ),
        });
    };
    let model_sha = golden::mpc::model::file_sha256(model)?;
    if !keys.model_sha256.eq_ignore_ascii_case(&model_sha) {
        return Err(RtlError::WrongModel(Box::new(ModelMismatch {
            dir: dir.to_path_buf(),
            source_file: pj,
            rtl_set: if keys.model_set.is_empty() {
                "(unnamed)".to_string()
            } else {
                keys.model_set.clone()
            },
            rtl_sha: keys.model_sha256.clone(),
            model: model.to_path_buf(),
            model_sha,
        })));
    }
    let described_slots = described_slots(&pj, keys)?;
    let slots = match (slots, described_slots) {
        (Some(want), found) if found != Some(want) => {
            return Err(RtlError::Slots {
                path: pj,
                found: found.map_or("none".to_string(), |f| {
                    format!("{} of form {}", f.k, f.form.name)
                }),
                expected: format!("{} of form {}", want.k, want.form.name),
            })
        }
        (_, found) => found,
    };
    // the top-level keys are those of the hard-wired set; with slots, the
    // port widths come from `slots.header_bits_loaded`, h(L) for L = 0..=K
    let mut params = Params::of(set);
    for (key, found, want) in [
        ("header_bits", keys.header_bits, params.header_bits),
        ("max_bits", keys.max_bits, params.max_bits),
    ] {
        if found != want {
            return Err(RtlError::Params {
                path: pj,
                key: key.to_string(),
                found: found.into(),
                expected: want.into(),
            });
        }
    }
    if let (Some(u), Some(k)) = (slots, &keys.slots) {
        if k.header_bits_loaded.len() != u.k + 1 {
            return Err(RtlError::ParamsFile {
                path: pj,
                message: format!(
                    "`slots.header_bits_loaded` has {} entries; K = {} slots need {}",
                    k.header_bits_loaded.len(),
                    u.k,
                    u.k + 1
                ),
            });
        }
        let ids = set.id_count();
        for (l, &found) in k.header_bits_loaded.iter().enumerate() {
            let want = golden::mpc::program::train::header_bits(ids + l);
            if found != want {
                return Err(RtlError::Params {
                    path: pj,
                    key: format!("slots.header_bits_loaded[{l}]"),
                    found: found.into(),
                    expected: want.into(),
                });
            }
        }
        params.header_bits = u.header_bits(set);
        params.max_bits = params.header_bits + 8 * golden::mpc::BLOCK_BYTES as u32;
    }
    let (c, d) = (
        described(&file, Side::Compressor),
        described(&file, Side::Decompressor),
    );
    if let Some(c) = c {
        params.compressor_latency = c.latency;
    }
    if let Some(d) = d {
        params.decompressor_latency = d.latency;
    }
    Ok(Rtl {
        dir: dir.to_path_buf(),
        files,
        params,
        slots,
    })
}

/// The programmable slots that the key `slots` of `params.json` (`pj`)
/// describes, if any.
fn described_slots(
    pj: &Path,
    keys: &hdl::params::MpcKeys,
) -> Result<Option<crate::slots::SlotUnit>, RtlError> {
    let Some(k) = &keys.slots else {
        return Ok(None);
    };
    let form =
        golden::mpc::program::Form::by_name(&k.form).ok_or_else(|| RtlError::ParamsFile {
            path: pj.to_path_buf(),
            message: format!("`slots.form` `{}` is not a slot form", k.form),
        })?;
    Ok((k.k > 0).then_some(crate::slots::SlotUnit { k: k.k, form }))
}

/// Load a model set with a clear error.
pub fn load_set(dir: &Path) -> Result<ModelSet, RtlError> {
    Ok(ModelSet::load(dir)?)
}

/// Generate both units of the model set in `set_dir` into `out_dir` with
/// the `hdl` library, and load them.
pub fn generate(set_dir: &Path, out_dir: &Path) -> Result<Rtl, RtlError> {
    generate_units(set_dir, out_dir, None)
}

/// [`generate`] with `slots` programmable slots (`None`: none, the units
/// of [`generate`]).
pub fn generate_units(
    set_dir: &Path,
    out_dir: &Path,
    slots: Option<crate::slots::SlotUnit>,
) -> Result<Rtl, RtlError> {
    let set = load_set(set_dir)?;
    let generate_error = |message: String| RtlError::Generate {
        path: set_dir.to_path_buf(),
        message,
    };
    let mut options = hdl::mpc::Options::default();
    let command_line = match slots {
        None => format!("cosim --model {}", set_dir.display()),
        Some(u) => {
            let spec =
                hdl::mpc::SlotSpec::new(u.k, u.form).map_err(|e| generate_error(e.to_string()))?;
            // the default depths of units with slots
            options = hdl::mpc::Options::with_slots(spec, None, None)
                .map_err(|e| generate_error(e.to_string()))?;
            format!(
                "cosim --model {} --program-slots {} --slot-form {}",
                set_dir.display(),
                u.k,
                u.form.name
            )
        }
    };
    let config =
        hdl::mpc::MpcConfig::load(set_dir, options).map_err(|e| generate_error(e.to_string()))?;
    hdl::family::write_units(&config, out_dir, &hdl::mpc::UNITS, &command_line)
        .map_err(|e| generate_error(e.to_string()))?;
    load_units(out_dir, &set, set_dir, slots)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn models() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../models")
    }

    fn scratch(name: &str) -> PathBuf {
        let d = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../target/rtl-test")
            .join(name);
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    /// Generated units load with the latencies of their descriptions, at
    /// any depth, and the locator takes their probes from `params.json`.
    #[test]
    fn latencies_and_probes_come_from_the_descriptions() {
        let model = models().join("example");
        let dir = scratch("depths");
        let opts = hdl::mpc::Options::with_stages(4, 6).expect("depths");
        let config = hdl::mpc::MpcConfig::load(&model, opts).expect("example loads");
        hdl::family::write_units(&config, &dir, &hdl::mpc::UNITS, "rtl test").expect("gen");
        let rtl = load(&dir, &config.set, &model).expect("loads");
        assert_eq!(rtl.params.compressor_latency, 4);
        assert_eq!(rtl.params.decompressor_latency, 6);
        assert_eq!(rtl.params.max_bits, config.set.max_bits());
        let units = crate::locate::mpc_unit_descriptions(&rtl, &config.set).expect("units");
        assert_eq!(units.note, None, "params.json describes both units");
        assert_eq!(units.compressor.latency, 4);
        assert_eq!(units.decompressor.latency, 6);
        assert!(!units.compressor.probes.is_empty() && !units.decompressor.probes.is_empty());
        assert_eq!(rtl.files.len(), 2, "{:?}", rtl.files);
    }

    /// Without params.json, with a params.json of another family, or with
    /// one whose numbers are not the model set's, loading is refused with
    /// the file named.
    #[test]
    fn a_missing_foreign_or_inconsistent_params_json_is_refused() {
        let model = models().join("example");
        let set = load_set(&model).expect("example loads");
        let dir = scratch("refused");
        let config = hdl::mpc::MpcConfig::load(&model, Default::default()).expect("example loads");
        hdl::family::write_units(&config, &dir, &hdl::mpc::UNITS, "rtl test").expect("gen");
        let pj = dir.join("params.json");
        let text = std::fs::read_to_string(&pj).expect("params.json");

        std::fs::write(&pj, text.replace("\"max_bits\": 259", "\"max_bits\": 258")).expect("write");
        let e = load(&dir, &set, &model)
            .expect_err("wrong max_bits")
            .to_string();
        assert!(e.contains("`max_bits` is 258") && e.contains("259"), "{e}");

        std::fs::write(&pj, text.replace("\"len_bits\"", "\"length_bits\"")).expect("write");
        let e = load(&dir, &set, &model)
            .expect_err("unknown key")
            .to_string();
        assert!(
            e.contains("params.json") && e.contains("`length_bits`"),
            "{e}"
        );

        let bdi = golden::magbdi::Table::new(golden::magbdi::Params::new(
            128,
            32,
            4,
            golden::magbdi::DeltaMode::Unsigned,
        ))
        .expect("BDI parameters");
        std::fs::write(
            &pj,
            hdl::family::params_json(&bdi).expect("BDI params.json"),
        )
        .expect("write");
        let e = load(&dir, &set, &model).expect_err("BDI").to_string();
        assert!(e.contains("params.json") && e.contains("\"bdi\""), "{e}");

        std::fs::remove_file(&pj).expect("remove");
        let e = load(&dir, &set, &model)
            .expect_err("no params.json")
            .to_string();
        assert!(
            e.contains("no params.json") && e.contains("gen --model"),
            "{e}"
        );
    }
}
