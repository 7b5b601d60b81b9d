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
    /// Units with programmable slots: the model chosen (compressor, before
    /// the raw check) or decoded (decompressor) is one of the loaded slots
    /// of the active image.
    Slot,
    /// Units with programmable slots: the model chosen or decoded is a
    /// hard-wired predictor (not a slot, not a custom model, not raw).
    HardWired,
    /// Units with programmable slots: every block (decompressor: every
    /// input, rejected ones included) except those whose model is a
    /// loaded slot.
    NotSlot,
    /// Units with programmable slots: the output is (compressor), or the
    /// input decodes as (decompressor), the raw escape of the active
    /// image, whose model ID depends on the slots it loads.
    Raw,
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
    pub mirrors: Mirror,
    pub when: When,
    /// A sibling signal of the same stage the comparison needs (the slot
    /// lengths of a code register, the symbol count of a partly decoded
    /// symbol register).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub with: Option<String>,
}

/// A field of a predictor's path through the MPC compressor
/// (`golden::mpc::trace::PredictorTrace`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CandidateField {
    /// `pred`: the predicted value of each byte.
    Pred,
    /// `residue`: value minus prediction.
    Residue,
    /// `planes`: the bit planes of the residues.
    Planes,
    /// `xored`: each plane XOR the plane above.
    Xored,
    /// `symbols`: the reordered stream as 16 symbols.
    Symbols,
    /// `score.zero_mask`: bit m set when symbol m is zero.
    ZeroMask,
    /// `score.longest_zero_run`.
    LongestZeroRun,
    /// `score.longest_zero_run.thermometer`: bit k-1 set when the run is
    /// at least k.
    LongestZeroRunThermometer,
    /// `score.zero_count`.
    ZeroCount,
    /// `score.zero_count.thermometer`.
    ZeroCountThermometer,
    /// `score.code_bits`: the payload bits of the predictor's codes.
    CodeBits,
}

impl CandidateField {
    const ALL: [(CandidateField, &'static str); 11] = [
        (CandidateField::Pred, "pred"),
        (CandidateField::Residue, "residue"),
        (CandidateField::Planes, "planes"),
        (CandidateField::Xored, "xored"),
        (CandidateField::Symbols, "symbols"),
        (CandidateField::ZeroMask, "score.zero_mask"),
        (CandidateField::LongestZeroRun, "score.longest_zero_run"),
        (
            CandidateField::LongestZeroRunThermometer,
            "score.longest_zero_run.thermometer",
        ),
        (CandidateField::ZeroCount, "score.zero_count"),
        (
            CandidateField::ZeroCountThermometer,
            "score.zero_count.thermometer",
        ),
        (CandidateField::CodeBits, "score.code_bits"),
    ];

    /// The field's name in the trace (`pred`, `score.code_bits`, ...).
    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(f, _)| *f == self)
            .map_or("", |(_, n)| n)
    }

    fn parse(text: &str) -> Option<CandidateField> {
        Self::ALL.iter().find(|(_, n)| *n == text).map(|(f, _)| *f)
    }
}

/// A field of one MAG-aware BDI compressor unit (one delta width).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SizeField {
    /// `zero_fit`: bit j set when value j fits the zero base.
    ZeroFit,
    /// `base`: the first value the zero base does not cover (0 if none).
    Base,
    /// `fits`: every value fits one of the two bases.
    Fits,
    /// `data`: the compressed bytes of this size, zero above.
    Data,
}

impl SizeField {
    const ALL: [(SizeField, &'static str); 4] = [
        (SizeField::ZeroFit, "zero_fit"),
        (SizeField::Base, "base"),
        (SizeField::Fits, "fits"),
        (SizeField::Data, "data"),
    ];

    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(f, _)| *f == self)
            .map_or("", |(_, n)| n)
    }

    fn parse(text: &str) -> Option<SizeField> {
        Self::ALL.iter().find(|(_, n)| *n == text).map(|(f, _)| *f)
    }
}

/// One of the two copies a DF-MAN compressor codes and compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DfManCopy {
    /// `orig`: the block as it is.
    Original,
    /// `man`: the block with the non-critical sectors zeroed.
    ZeroFilled,
}

impl DfManCopy {
    pub fn name(self) -> &'static str {
        match self {
            DfManCopy::Original => "orig",
            DfManCopy::ZeroFilled => "man",
        }
    }
}

/// A field of one DF-MAN copy's analysis.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CopyField {
    /// `data`: the copy's bytes.
    Data,
    /// `es`: bit i set when group i is uniform.
    Es,
    /// `ones`: bit i set when group i is all ones.
    Ones,
    /// `len`: the payload bits it would code to (coded or raw, whichever
    /// the packet would use).
    Len,
}

impl CopyField {
    const ALL: [(CopyField, &'static str); 4] = [
        (CopyField::Data, "data"),
        (CopyField::Es, "es"),
        (CopyField::Ones, "ones"),
        (CopyField::Len, "len"),
    ];

    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(f, _)| *f == self)
            .map_or("", |(_, n)| n)
    }

    fn parse(text: &str) -> Option<CopyField> {
        Self::ALL.iter().find(|(_, n)| *n == text).map(|(f, _)| *f)
    }
}

/// The golden trace field a probe mirrors. Each unit's golden model has
/// its own per-stage trace (docs/hw/cosim.md lists the fields of each);
/// the same name can be a field of several (`block`, `error`, `data`).
/// In `params.json` a mirror is written as its text (`candidates[2].pred`,
/// `output.len`, `planes[3]`, `sizes[0].fits`, `orig.es`): [`Mirror`]'s
/// `Display` and `FromStr`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum Mirror {
    // ---- MPC compressor ----
    /// `candidates[i].<field>`: predictor `i`'s path.
    Candidate { index: usize, field: CandidateField },
    /// `chosen.<field>`: the chosen predictor's path.
    Chosen(CandidateField),
    /// `slots[j].<field>`: the path of slot `j` of a unit with
    /// programmable slots (the golden trace of the programmed set: the
    /// candidate of the slot's predictor after the hard-wired ones);
    /// compared only while the active image loads slot `j`.
    Slot { slot: usize, field: CandidateField },
    /// `best_hard_wired.<field>`: the path of the predictor the selection
    /// rule chooses among the hard-wired predictors alone (units with
    /// programmable slots, which choose between it and the slots).
    BestHardWired(CandidateField),
    /// `is_zero_block`.
    IsZeroBlock,
    /// `is_same_words`.
    IsSameWords,
    /// `best_predictor`: the choice of the selection rule among the
    /// predictors alone.
    BestPredictor,
    /// `choice_id`: the model ID chosen by the selection rule.
    ChoiceId,
    /// `selected_id`: the model ID after the raw check.
    SelectedId,
    /// `output.payload`: the payload bits, one code per slot.
    OutputPayload,
    /// `output.payload.pairs`: the payload bits, two codes per slot.
    OutputPayloadPairs,
    /// `output.bits`: the compressed bits, left-aligned on the bus.
    OutputBits,
    /// `output.len`: the compressed length in bits.
    OutputLen,
    /// `output.model`: the model ID in the header.
    OutputModel,
    // ---- MPC decompressor ----
    /// `header`: the header field of the input.
    Header,
    /// `model_id`: the decoded model ID.
    ModelId,
    /// `symbols`: the decoded symbols.
    Symbols,
    /// `used`: the bits consumed.
    Used,
    /// `xored`.
    Xored,
    /// `planes`.
    Planes,
    /// `planes[q]`: one bit plane.
    Plane(usize),
    /// `residue`.
    Residue,
    // ---- shared names ----
    /// `block`: the input block (compressors) or the decoded block, zero
    /// on an error (decompressors).
    Block,
    /// `error`: the golden decoder rejects the input.
    Error,
    /// `len`: the input length (decompressors).
    Len,
    /// `data`: MAG-aware BDI: the stored bytes of the chosen encoding;
    /// DPC: the bytes coded (the critical sectors packed for DF-TRUC, the
    /// chosen copy for DF-MAN).
    Data,
    /// `mask`: MAG-aware BDI: the bitmask of the stored bytes (value 0
    /// first); DPC: the critical-sector mask.
    Mask,
    // ---- MAG-aware BDI ----
    /// `sizes[i].<field>`: the compressor unit of size `i`.
    Size { index: usize, field: SizeField },
    /// `encoding`: the chosen encoding.
    Encoding,
    /// `base`: the non-zero base of the stored bytes.
    Base,
    // ---- DPC ----
    /// `es`: the encoding status (bit i: group i is uniform).
    Es,
    /// `ones`: bit i: group i is all ones.
    Ones,
    /// `npc`: the number of critical sectors.
    Npc,
    /// `manipulated`: DF-MAN codes the zero-filled copy.
    Manipulated,
    /// `orig.<field>`, `man.<field>`: one DF-MAN copy.
    Copy { copy: DfManCopy, field: CopyField },
    /// `segments`: the segments coded.
    Segments,
    /// `raw_len`: the bits of the raw payload.
    RawLen,
    /// `coded_len`: the bits of the coded payload (ES + ED).
    CodedLen,
    /// `compressed`: the flag C (the coded payload is shorter).
    Compressed,
    /// `flag`: the flag C read from the input.
    Flag,
    /// `expected_len`: the packet length the input's header implies.
    ExpectedLen,
}

/// A mirror text that names no golden trace field.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{text}` is not a golden trace field ({reason}; the fields are listed in docs/hw/cosim.md)"
)]
pub struct MirrorError {
    pub text: String,
    pub reason: String,
}

impl Mirror {
    /// The fields without an index or sub-field, with their names.
    const PLAIN: [(Mirror, &'static str); 34] = [
        (Mirror::IsZeroBlock, "is_zero_block"),
        (Mirror::IsSameWords, "is_same_words"),
        (Mirror::BestPredictor, "best_predictor"),
        (Mirror::ChoiceId, "choice_id"),
        (Mirror::SelectedId, "selected_id"),
        (Mirror::OutputPayload, "output.payload"),
        (Mirror::OutputPayloadPairs, "output.payload.pairs"),
        (Mirror::OutputBits, "output.bits"),
        (Mirror::OutputLen, "output.len"),
        (Mirror::OutputModel, "output.model"),
        (Mirror::Header, "header"),
        (Mirror::ModelId, "model_id"),
        (Mirror::Symbols, "symbols"),
        (Mirror::Used, "used"),
        (Mirror::Xored, "xored"),
        (Mirror::Planes, "planes"),
        (Mirror::Residue, "residue"),
        (Mirror::Block, "block"),
        (Mirror::Error, "error"),
        (Mirror::Len, "len"),
        (Mirror::Data, "data"),
        (Mirror::Mask, "mask"),
        (Mirror::Encoding, "encoding"),
        (Mirror::Base, "base"),
        (Mirror::Es, "es"),
        (Mirror::Ones, "ones"),
        (Mirror::Npc, "npc"),
        (Mirror::Manipulated, "manipulated"),
        (Mirror::Segments, "segments"),
        (Mirror::RawLen, "raw_len"),
        (Mirror::CodedLen, "coded_len"),
        (Mirror::Compressed, "compressed"),
        (Mirror::Flag, "flag"),
        (Mirror::ExpectedLen, "expected_len"),
    ];
}

impl std::fmt::Display for Mirror {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Mirror::Candidate { index, field } => {
                write!(f, "candidates[{index}].{}", field.name())
            }
            Mirror::Chosen(field) => write!(f, "chosen.{}", field.name()),
            Mirror::Slot { slot, field } => write!(f, "slots[{slot}].{}", field.name()),
            Mirror::BestHardWired(field) => write!(f, "best_hard_wired.{}", field.name()),
            Mirror::Plane(q) => write!(f, "planes[{q}]"),
            Mirror::Size { index, field } => write!(f, "sizes[{index}].{}", field.name()),
            Mirror::Copy { copy, field } => write!(f, "{}.{}", copy.name(), field.name()),
            plain => f.write_str(
                Mirror::PLAIN
                    .iter()
                    .find(|(m, _)| m == plain)
                    .map_or("", |(_, n)| n),
            ),
        }
    }
}

/// `prefix[<index>]<rest>` as (index, rest); the index in canonical
/// decimal (no sign, no leading zero), so that the text reads back as it
/// was written.
fn indexed<'a>(text: &'a str, prefix: &str) -> Option<Result<(usize, &'a str), String>> {
    let rest = text.strip_prefix(prefix)?.strip_prefix('[')?;
    let Some((digits, rest)) = rest.split_once(']') else {
        return Some(Err("no `]` after the index".to_string()));
    };
    let canonical = !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (digits == "0" || !digits.starts_with('0'));
    Some(match digits.parse::<usize>() {
        Ok(i) if canonical => Ok((i, rest)),
        _ => Err(format!("index `{digits}` is not a whole number")),
    })
}

impl std::str::FromStr for Mirror {
    type Err = MirrorError;

    fn from_str(text: &str) -> Result<Mirror, MirrorError> {
        let err = |reason: String| MirrorError {
            text: text.to_string(),
            reason,
        };
        if let Some(&(m, _)) = Mirror::PLAIN.iter().find(|(_, n)| *n == text) {
            return Ok(m);
        }
        if let Some(r) = indexed(text, "candidates") {
            let (index, rest) = r.map_err(err)?;
            let field = rest
                .strip_prefix('.')
                .and_then(CandidateField::parse)
                .ok_or_else(|| err(format!("`{rest}` is not a field of a predictor's path")))?;
            return Ok(Mirror::Candidate { index, field });
        }
        if let Some(r) = indexed(text, "slots") {
            let (slot, rest) = r.map_err(err)?;
            let field = rest
                .strip_prefix('.')
                .and_then(CandidateField::parse)
                .ok_or_else(|| err(format!("`{rest}` is not a field of a predictor's path")))?;
            return Ok(Mirror::Slot { slot, field });
        }
        if let Some(rest) = text.strip_prefix("best_hard_wired.") {
            let field = CandidateField::parse(rest)
                .ok_or_else(|| err(format!("`{rest}` is not a field of a predictor's path")))?;
            return Ok(Mirror::BestHardWired(field));
        }
        if let Some(rest) = text.strip_prefix("chosen.") {
            let field = CandidateField::parse(rest)
                .ok_or_else(|| err(format!("`{rest}` is not a field of a predictor's path")))?;
            return Ok(Mirror::Chosen(field));
        }
        if let Some(r) = indexed(text, "planes") {
            let (q, rest) = r.map_err(err)?;
            if !rest.is_empty() {
                return Err(err(format!("`{rest}` after `planes[{q}]`")));
            }
            return Ok(Mirror::Plane(q));
        }
        if let Some(r) = indexed(text, "sizes") {
            let (index, rest) = r.map_err(err)?;
            let field = rest
                .strip_prefix('.')
                .and_then(SizeField::parse)
                .ok_or_else(|| err(format!("`{rest}` is not a field of a compressor unit")))?;
            return Ok(Mirror::Size { index, field });
        }
        for copy in [DfManCopy::Original, DfManCopy::ZeroFilled] {
            if let Some(rest) = text
                .strip_prefix(copy.name())
                .and_then(|r| r.strip_prefix('.'))
            {
                let field = CopyField::parse(rest)
                    .ok_or_else(|| err(format!("`{rest}` is not a field of a DF-MAN copy")))?;
                return Ok(Mirror::Copy { copy, field });
            }
        }
        Err(err("unknown name".to_string()))
    }
}

impl TryFrom<String> for Mirror {
    type Error = MirrorError;
    fn try_from(s: String) -> Result<Mirror, MirrorError> {
        s.parse()
    }
}

impl From<Mirror> for String {
    fn from(m: Mirror) -> String {
        m.to_string()
    }
}
