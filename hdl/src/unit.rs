//! The typed description of a generated unit: its module name, ports,
//! latency, pipeline stages with their registers, and the stage probes (the
//! registers and wires that mirror a field of the golden model's per-stage
//! trace). Every generator returns one per unit, `params.json` publishes
//! them (`units`), and the testbench, the mismatch locator and the
//! synthesis stage attribution read them rather than names or numbers of
//! their own.

/// A port's direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    Input,
    Output,
}

/// One port of a unit.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PortDesc {
    pub name: String,
    pub dir: Direction,
    pub width: u32,
}

/// What a port carries, by the names of the stream-unit shell every
/// generator builds on (`crate::stream`): the clock `clk`, the reset `rst`,
/// the handshake `in_valid`/`out_valid` and `in_ready`/`out_ready`, and the
/// data ports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PortRole {
    Clock,
    Reset,
    /// `in_valid` or `out_valid`.
    Valid,
    /// `in_ready` or `out_ready`.
    Ready,
    Data,
}

impl PortDesc {
    /// The port's role in the stream-unit interface.
    pub fn role(&self) -> PortRole {
        match self.name.as_str() {
            "clk" => PortRole::Clock,
            "rst" => PortRole::Reset,
            "in_valid" | "out_valid" => PortRole::Valid,
            "in_ready" | "out_ready" => PortRole::Ready,
            _ => PortRole::Data,
        }
    }
}

/// One pipeline stage: its number (1-based), the title of the section that
/// opens it in the Verilog, and its data registers (`s<stage>_<name>`).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StageDesc {
    pub stage: usize,
    pub title: String,
    pub registers: Vec<String>,
}

/// One generated unit.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UnitDescription {
    /// The Verilog module name (also the file stem).
    pub module: String,
    /// Pipeline stages from input to output: edges from an accepted input
    /// to its output when nothing stalls.
    pub latency: usize,
    pub ports: Vec<PortDesc>,
    /// The pipeline control signals: the stage valid flags (`s<N>_valid`)
    /// and load enables (`s<N>_enable`).
    pub control: Vec<String>,
    pub stages: Vec<StageDesc>,
    /// The signals a co-simulation compares with the golden trace, stage
    /// by stage (docs/hw/cosim.md); empty for units whose golden model has
    /// no per-stage trace.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub probes: Vec<StageProbe>,
}

/// Why the unit descriptions of a `params.json` cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum UnitsError {
    #[error("cannot read {path}: {source}")]
    Io {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: larger than {MAX_PARAMS_BYTES} bytes; not a generated params.json")]
    TooLarge { path: std::path::PathBuf },
    #[error("{path}: not a params.json of generated units: {message}")]
    Parse {
        path: std::path::PathBuf,
        message: String,
    },
    #[error("{path} describes no unit `{module}` (it has: {have})")]
    Missing {
        path: std::path::PathBuf,
        module: String,
        have: String,
    },
}

/// Largest `params.json` read (a generated one is well under: mostly the
/// stage probes, about 150 bytes each).
pub const MAX_PARAMS_BYTES: u64 = 1 << 20;

/// The text of the `params.json` at `path`, refused when larger than
/// [`MAX_PARAMS_BYTES`] (read no further).
pub fn read_params_text(path: &std::path::Path) -> Result<String, UnitsError> {
    use std::io::Read;
    let io = |source| UnitsError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut text = String::new();
    std::fs::File::open(path)
        .map_err(io)?
        .take(MAX_PARAMS_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(io)?;
    if text.len() as u64 > MAX_PARAMS_BYTES {
        return Err(UnitsError::TooLarge {
            path: path.to_path_buf(),
        });
    }
    Ok(text)
}

/// The `units` of the `params.json` at `path` (any family's), read with
/// [`crate::params::read`].
pub fn read_units(path: &std::path::Path) -> Result<Vec<UnitDescription>, UnitsError> {
    Ok(crate::params::read(path)?.units)
}

/// The description of module `module` among `units` (read from `path`).
pub fn find<'a>(
    units: &'a [UnitDescription],
    module: &str,
    path: &std::path::Path,
) -> Result<&'a UnitDescription, UnitsError> {
    units
        .iter()
        .find(|u| u.module == module)
        .ok_or_else(|| UnitsError::Missing {
            path: path.to_path_buf(),
            module: module.to_string(),
            have: units
                .iter()
                .map(|u| u.module.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        })
}

impl UnitDescription {
    /// The stage whose data register `name` is, if it is one.
    pub fn stage_of_register(&self, name: &str) -> Option<usize> {
        self.stages
            .iter()
            .find(|s| s.registers.iter().any(|r| r == name))
            .map(|s| s.stage)
    }

    /// The port named `name`, if the unit has one.
    pub fn port(&self, name: &str) -> Option<&PortDesc> {
        self.ports.iter().find(|p| p.name == name)
    }

    /// The data ports of direction `dir`, in declaration order.
    pub fn data_ports(&self, dir: Direction) -> impl Iterator<Item = &PortDesc> {
        self.ports
            .iter()
            .filter(move |p| p.dir == dir && p.role() == PortRole::Data)
    }

    /// Whether `name` is a pipeline control signal (valid flag or enable).
    pub fn is_control(&self, name: &str) -> bool {
        self.control.iter().any(|c| c == name)
    }
}

/// Where a probe is sampled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProbeKind {
    /// A pipeline register of the stage, read after the edge that loads it.
    Register,
    /// A wire of the stage's logic, read while the stage's inputs hold the
    /// block.
    Logic,
}

/// For which blocks a probe is compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum When {
    /// Every block (for the decompressor: inputs the golden model rejects
    /// included).
    Always,
    /// Decompressor inputs the golden model accepts.
    Accepted,
    /// The model chosen (compressor: by the selection rule, before the raw
    /// check) or decoded (decompressor) is a predictor.
    Predictor,
    /// The model chosen or decoded has this model ID.
    Model(u32),
    /// Compressor: the output is not the raw escape. Decompressor: inputs
    /// the golden model accepts with a model other than raw.
    NotRaw,
}

/// One probe of a generated unit.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StageProbe {
    /// The Verilog signal name.
    pub name: String,
    /// The pipeline stage (1-based) whose register it is or whose logic
    /// computes it.
    pub stage: usize,
    pub kind: ProbeKind,
    pub width: u32,
    /// The golden trace field it mirrors, e.g. `candidates[2].pred`,
    /// `output.len`, `planes[3]` (the vocabulary is in docs/hw/cosim.md).
    pub mirrors: String,
    pub when: When,
    /// A sibling signal of the same stage the comparison needs (the slot
    /// lengths of a code register, the symbol count of a partly decoded
    /// symbol register).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub with: Option<String>,
}
