//! MPC model sets: the predictors, their transformers, the custom models and
//! the selection rule, loaded from and written to the versioned TOML format of
//! `docs/spec/model-format.md`.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::{BLOCK_BYTES, STREAM_BITS};

/// Name of the model file inside a model-set directory.
pub const MODEL_FILE: &str = "model.toml";
/// The only model-file version this build understands.
pub const FORMAT_VERSION: u32 = 1;
/// Magic value of the `format` key.
pub const FORMAT_NAME: &str = "mpc-model-set";
/// Largest |k| of a ratio factor 2^k.
pub const MAX_SHIFT: i8 = 7;
/// Largest number of model IDs (custom + predictors + raw escape) so that the
/// header fits in 8 bits.
pub const MAX_MODEL_IDS: usize = 256;

/// How one byte position is predicted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ByteRule {
    /// The byte predicts 0: its residue is the byte itself.
    Root,
    /// `pred = shift(block[base], shift)`; positive `shift` is a left shift,
    /// negative a logical right shift, both truncated to 8 bits.
    Base { base: u8, shift: i8 },
}

impl ByteRule {
    /// The prediction for this byte given the whole (original) block.
    #[inline]
    pub fn predict(self, block: &[u8; BLOCK_BYTES]) -> u8 {
        match self {
            ByteRule::Root => 0,
            ByteRule::Base { base, shift } => shift_byte(block[base as usize], shift),
        }
    }
}

/// `v * 2^k` truncated to 8 bits: left shift for k > 0, logical right shift
/// for k < 0.
#[inline]
pub fn shift_byte(v: u8, k: i8) -> u8 {
    if k >= 0 {
        ((v as u32) << k) as u8
    } else {
        v >> (-k)
    }
}

impl fmt::Display for ByteRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            ByteRule::Root => write!(f, "root"),
            ByteRule::Base { base, shift: 0 } => write!(f, "{base}"),
            ByteRule::Base { base, shift } if shift > 0 => write!(f, "{base}<<{shift}"),
            ByteRule::Base { base, shift } => write!(f, "{base}>>{}", -shift),
        }
    }
}

/// One trained (or hand-written) prediction model with its transformer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Predictor {
    pub name: String,
    /// Rule for each byte position 0..31.
    pub bytes: [ByteRule; BLOCK_BYTES],
    /// `reorder[o]` = index in the natural stream of the bit that goes to
    /// reordered position `o` (see the spec, section "Transformer").
    pub reorder: [u8; STREAM_BITS],
}

impl Predictor {
    /// Number of edges on the longest path from a byte to its root.
    pub fn depth(&self) -> usize {
        (0..BLOCK_BYTES)
            .map(|i| {
                let mut d = 0;
                let mut cur = i;
                while let ByteRule::Base { base, .. } = self.bytes[cur] {
                    cur = base as usize;
                    d += 1;
                }
                d
            })
            .max()
            .unwrap_or(0)
    }

    /// True when `reorder` is the identity permutation.
    pub fn reorder_is_identity(&self) -> bool {
        self.reorder
            .iter()
            .enumerate()
            .all(|(o, &n)| o == n as usize)
    }
}

/// The selection rule among candidate models (spec section "Selection").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Selection {
    /// The paper's rule: longest run of zero symbols.
    ZeroRun,
    /// Smallest encoded size.
    Exact,
}

impl fmt::Display for Selection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Selection::ZeroRun => "zero-run",
            Selection::Exact => "exact",
        })
    }
}

/// Which custom models are present.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CustomModels {
    /// All 32 bytes zero: header only.
    pub zero_block: bool,
    /// All eight 32-bit words equal: header + one word.
    pub same_words: bool,
}

/// Where a model set came from.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Provenance {
    /// Tool that produced the file (`train`, `hand-written`, ...).
    pub tool: String,
    pub tool_version: String,
    /// ISO date the set was produced.
    pub date: String,
    /// Description of the training data (`none` for hand-made sets).
    pub corpus: String,
    #[serde(default)]
    pub classes: Vec<String>,
    /// Free text: split, seed, corpus hashes, design notes.
    #[serde(default)]
    pub notes: String,
}

/// What a model ID in the compressed-block header stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ModelKind {
    ZeroBlock,
    SameWords,
    /// Index into `ModelSet::predictors`.
    Predictor(usize),
    Raw,
}

/// A validated MPC model set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelSet {
    pub name: String,
    pub selection: Selection,
    pub custom: CustomModels,
    pub predictors: Vec<Predictor>,
    pub provenance: Provenance,
}

/// A model-file problem: the field path, the offending value and what is wrong.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("cannot read model file {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{file}: not valid TOML for a model set: {message}")]
    Syntax { file: String, message: String },
    #[error("{file}: field `{field}` = {value}: {problem}")]
    Field {
        file: String,
        field: String,
        value: String,
        problem: String,
    },
}

impl ModelError {
    /// The field path for `Field` errors.
    pub fn field(&self) -> Option<&str> {
        match self {
            ModelError::Field { field, .. } => Some(field),
            _ => None,
        }
    }
}

// ---- on-disk representation -------------------------------------------------

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileModelSet {
    format: String,
    version: u32,
    name: String,
    selection: String,
    custom: CustomModels,
    provenance: Provenance,
    #[serde(default, rename = "predictor")]
    predictors: Vec<FilePredictor>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct FilePredictor {
    name: String,
    bytes: Vec<String>,
    reorder: ReorderField,
}

#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum ReorderField {
    Named(String),
    Explicit(Vec<i64>),
}

struct Ctx<'a> {
    file: &'a str,
}

impl Ctx<'_> {
    fn err(
        &self,
        field: impl Into<String>,
        value: impl fmt::Display,
        problem: impl Into<String>,
    ) -> ModelError {
        ModelError::Field {
            file: self.file.to_string(),
            field: field.into(),
            value: value.to_string(),
            problem: problem.into(),
        }
    }
}

/// Parse one byte rule string: `root`, `B`, `B<<k` or `B>>k`.
fn parse_rule(s: &str) -> Result<ByteRule, String> {
    let t = s.trim();
    if t == "root" {
        return Ok(ByteRule::Root);
    }
    let (base_s, shift) = if let Some((b, k)) = t.split_once("<<") {
        (b, parse_shift(k)?)
    } else if let Some((b, k)) = t.split_once(">>") {
        (b, -parse_shift(k)?)
    } else {
        (t, 0)
    };
    let base: i64 = base_s
        .trim()
        .parse()
        .map_err(|_| "expected `root`, `B`, `B<<k` or `B>>k` with a byte position B".to_string())?;
    if !(0..BLOCK_BYTES as i64).contains(&base) {
        return Err(format!("base {base} out of range 0..={}", BLOCK_BYTES - 1));
    }
    Ok(ByteRule::Base {
        base: base as u8,
        shift,
    })
}

fn parse_shift(k: &str) -> Result<i8, String> {
    let v: i64 = k
        .trim()
        .parse()
        .map_err(|_| format!("shift `{}` is not an integer", k.trim()))?;
    if !(0..=MAX_SHIFT as i64).contains(&v) {
        return Err(format!("shift {v} out of range 0..={MAX_SHIFT}"));
    }
    Ok(v as i8)
}

impl ModelSet {
    /// Load `DIR/model.toml` (or a file path directly).
    pub fn load(path: &Path) -> Result<ModelSet, ModelError> {
        let file = if path.is_dir() {
            path.join(MODEL_FILE)
        } else {
            path.to_path_buf()
        };
        let text = std::fs::read_to_string(&file).map_err(|source| ModelError::Io {
            path: file.clone(),
            source,
        })?;
        ModelSet::parse(&text, &file.display().to_string())
    }

    /// Parse and validate model-file text; `file` names it in errors.
    pub fn parse(text: &str, file: &str) -> Result<ModelSet, ModelError> {
        let cx = Ctx { file };
        let raw: FileModelSet = toml::from_str(text).map_err(|e| ModelError::Syntax {
            file: file.to_string(),
            message: e.to_string(),
        })?;
        if raw.format != FORMAT_NAME {
            return Err(cx.err(
                "format",
                format!("{:?}", raw.format),
                format!("expected {FORMAT_NAME:?}"),
            ));
        }
        if raw.version != FORMAT_VERSION {
            return Err(cx.err(
                "version",
                raw.version,
                format!("unknown version; this build reads version {FORMAT_VERSION}"),
            ));
        }
        if raw.name.trim().is_empty() {
            return Err(cx.err("name", "\"\"", "must not be empty"));
        }
        let selection = match raw.selection.as_str() {
            "zero-run" => Selection::ZeroRun,
            "exact" => Selection::Exact,
            other => {
                return Err(cx.err(
                    "selection",
                    format!("{other:?}"),
                    "expected \"zero-run\" or \"exact\"",
                ))
            }
        };
        let mut predictors = Vec::with_capacity(raw.predictors.len());
        for (pi, fp) in raw.predictors.iter().enumerate() {
            predictors.push(validate_predictor(&cx, pi, fp)?);
        }
        let n_ids =
            raw.custom.zero_block as usize + raw.custom.same_words as usize + predictors.len() + 1;
        if predictors.is_empty() {
            return Err(cx.err(
                "predictor",
                "[]",
                "a model set needs at least one predictor",
            ));
        }
        if n_ids > MAX_MODEL_IDS {
            return Err(cx.err(
                "predictor",
                format!("{} predictors", predictors.len()),
                format!(
                    "too many models: at most {MAX_MODEL_IDS} model IDs including the raw escape"
                ),
            ));
        }
        Ok(ModelSet {
            name: raw.name,
            selection,
            custom: raw.custom,
            predictors,
            provenance: raw.provenance,
        })
    }

    /// The canonical TOML text of this set (what `parse` reads back).
    pub fn to_toml(&self) -> String {
        let file = FileModelSet {
            format: FORMAT_NAME.to_string(),
            version: FORMAT_VERSION,
            name: self.name.clone(),
            selection: self.selection.to_string(),
            custom: self.custom,
            provenance: self.provenance.clone(),
            predictors: self
                .predictors
                .iter()
                .map(|p| FilePredictor {
                    name: p.name.clone(),
                    bytes: p.bytes.iter().map(|r| r.to_string()).collect(),
                    reorder: if p.reorder_is_identity() {
                        ReorderField::Named("identity".to_string())
                    } else {
                        ReorderField::Explicit(p.reorder.iter().map(|&v| v as i64).collect())
                    },
                })
                .collect(),
        };
        // Serialising plain data structures to TOML cannot fail.
        toml::to_string(&file).unwrap_or_default()
    }

    /// Number of model IDs including the raw escape.
    pub fn id_count(&self) -> usize {
        self.custom.zero_block as usize
            + self.custom.same_words as usize
            + self.predictors.len()
            + 1
    }

    /// Width of the model-ID header in bits: ceil(log2(id_count)), at least 1.
    pub fn header_bits(&self) -> u32 {
        let n = self.id_count();
        let mut h = 1;
        while (1usize << h) < n {
            h += 1;
        }
        h
    }

    /// Model ID of the zero-block custom model, if present.
    pub fn zero_block_id(&self) -> Option<u32> {
        self.custom.zero_block.then_some(0)
    }

    /// Model ID of the same-words custom model, if present.
    pub fn same_words_id(&self) -> Option<u32> {
        self.custom
            .same_words
            .then_some(self.custom.zero_block as u32)
    }

    /// Model ID of predictor `i`.
    pub fn predictor_id(&self, i: usize) -> u32 {
        (self.custom.zero_block as usize + self.custom.same_words as usize + i) as u32
    }

    /// Model ID of the raw escape (the last ID).
    pub fn raw_id(&self) -> u32 {
        (self.id_count() - 1) as u32
    }

    /// What a model ID stands for, or `None` for an unused header value.
    pub fn kind_of(&self, id: u32) -> Option<ModelKind> {
        let id = id as usize;
        let nz = self.custom.zero_block as usize;
        let ns = self.custom.same_words as usize;
        let np = self.predictors.len();
        if id < nz {
            Some(ModelKind::ZeroBlock)
        } else if id < nz + ns {
            Some(ModelKind::SameWords)
        } else if id < nz + ns + np {
            Some(ModelKind::Predictor(id - nz - ns))
        } else if id == nz + ns + np {
            Some(ModelKind::Raw)
        } else {
            None
        }
    }

    /// Human-readable name of a model ID.
    pub fn id_name(&self, id: u32) -> String {
        match self.kind_of(id) {
            Some(ModelKind::ZeroBlock) => "zero-block".to_string(),
            Some(ModelKind::SameWords) => "same-words".to_string(),
            Some(ModelKind::Predictor(i)) => self.predictors[i].name.clone(),
            Some(ModelKind::Raw) => "raw".to_string(),
            None => format!("invalid-{id}"),
        }
    }

    /// Maximum compressed size in bits (header + raw block).
    pub fn max_bits(&self) -> u32 {
        self.header_bits() + 8 * BLOCK_BYTES as u32
    }
}

fn validate_predictor(
    cx: &Ctx<'_>,
    pi: usize,
    fp: &FilePredictor,
) -> Result<Predictor, ModelError> {
    let at = |f: &str| format!("predictor[{pi}].{f}");
    if fp.name.trim().is_empty() {
        return Err(cx.err(at("name"), "\"\"", "must not be empty"));
    }
    if fp.bytes.len() != BLOCK_BYTES {
        return Err(cx.err(
            at("bytes"),
            format!("{} entries", fp.bytes.len()),
            format!("expected exactly {BLOCK_BYTES} entries, one per byte position"),
        ));
    }
    let mut bytes = [ByteRule::Root; BLOCK_BYTES];
    for (i, s) in fp.bytes.iter().enumerate() {
        let rule = parse_rule(s)
            .map_err(|problem| cx.err(at(&format!("bytes[{i}]")), format!("{s:?}"), problem))?;
        if let ByteRule::Base { base, .. } = rule {
            if base as usize == i {
                return Err(cx.err(
                    at(&format!("bytes[{i}]")),
                    format!("{s:?}"),
                    "a byte cannot be its own base",
                ));
            }
        }
        bytes[i] = rule;
    }
    // Cycle check: every chain of bases must reach a root within 32 steps.
    for start in 0..BLOCK_BYTES {
        let mut cur = start;
        let mut steps = 0;
        while let ByteRule::Base { base, .. } = bytes[cur] {
            cur = base as usize;
            steps += 1;
            if steps > BLOCK_BYTES {
                return Err(cx.err(
                    at(&format!("bytes[{start}]")),
                    format!("{:?}", fp.bytes[start]),
                    "the base chain from this byte forms a cycle and never reaches a root",
                ));
            }
        }
    }
    let reorder = match &fp.reorder {
        ReorderField::Named(n) if n == "identity" => {
            let mut r = [0u8; STREAM_BITS];
            for (o, v) in r.iter_mut().enumerate() {
                *v = o as u8;
            }
            r
        }
        ReorderField::Named(n) => {
            return Err(cx.err(
                at("reorder"),
                format!("{n:?}"),
                "expected \"identity\" or a list of 256 bit indices",
            ))
        }
        ReorderField::Explicit(v) => {
            if v.len() != STREAM_BITS {
                return Err(cx.err(
                    at("reorder"),
                    format!("{} entries", v.len()),
                    format!("not a permutation: expected exactly {STREAM_BITS} entries"),
                ));
            }
            let mut seen = [false; STREAM_BITS];
            let mut r = [0u8; STREAM_BITS];
            for (o, &n) in v.iter().enumerate() {
                if !(0..STREAM_BITS as i64).contains(&n) {
                    return Err(cx.err(
                        at(&format!("reorder[{o}]")),
                        n,
                        format!(
                            "not a permutation: index out of range 0..={}",
                            STREAM_BITS - 1
                        ),
                    ));
                }
                if seen[n as usize] {
                    return Err(cx.err(
                        at(&format!("reorder[{o}]")),
                        n,
                        "not a permutation: index appears twice",
                    ));
                }
                seen[n as usize] = true;
                r[o] = n as u8;
            }
            r
        }
    };
    Ok(Predictor {
        name: fp.name.clone(),
        bytes,
        reorder,
    })
}

/// SHA-256 of a model file, hex-encoded: the identity used in generated
/// Verilog headers and provenance.
pub fn file_sha256(path: &Path) -> Result<String, ModelError> {
    let file = if path.is_dir() {
        path.join(MODEL_FILE)
    } else {
        path.to_path_buf()
    };
    let bytes = std::fs::read(&file).map_err(|source| ModelError::Io {
        path: file.clone(),
        source,
    })?;
    Ok(hex::encode(Sha256::digest(&bytes)))
}
