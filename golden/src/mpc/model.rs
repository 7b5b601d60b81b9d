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
/// Largest model file accepted, in bytes (512 KiB), checked before anything
/// is parsed. A set of 256 model IDs with explicit reorders and 64-character
/// names takes about 0.4 MiB in the canonical layout; the shipped sets take
/// 1.5 to 14 KiB. Parsing a hostile file of this size takes under 0.1 s and
/// under 64 MB.
pub const MAX_MODEL_FILE_BYTES: u64 = 512 << 10;
/// Longest set or predictor name, in characters.
pub const MAX_NAME_LEN: usize = 64;
/// Most entries of `provenance.classes`.
pub const MAX_CLASSES: usize = 256;

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
#[serde(deny_unknown_fields)]
pub struct CustomModels {
    /// All 32 bytes zero: header only.
    pub zero_block: bool,
    /// All eight 32-bit words equal: header + one word.
    pub same_words: bool,
}

/// Where a model set came from.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
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
    #[error("cannot write model set {name} as TOML: {message}")]
    Serialize { name: String, message: String },
    #[error("cannot read model file {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "model file {file} is too large: {size}; the limit is {limit} bytes \
         (a set of 256 model IDs takes about 0.4 MiB)"
    )]
    TooLarge {
        file: String,
        /// `N bytes`, or `more than N bytes` for a file read as a stream.
        size: String,
        limit: u64,
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

/// What `to_toml` writes. Reading goes through [`toml::Table`] and the
/// checks of [`ModelSet::parse`], so that every problem names its field.
#[derive(Serialize)]
struct FileModelSet {
    format: String,
    version: u32,
    name: String,
    selection: String,
    custom: CustomModels,
    provenance: Provenance,
    #[serde(rename = "predictor")]
    predictors: Vec<FilePredictor>,
}

#[derive(Serialize)]
struct FilePredictor {
    name: String,
    bytes: Vec<String>,
    reorder: ReorderField,
}

#[derive(Serialize)]
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

    /// The table at `path` (`""` for the root), with every key checked
    /// against `keys`.
    fn table<'a>(
        &'a self,
        path: &str,
        table: &'a toml::Table,
        keys: &'static [&'static str],
    ) -> Result<Obj<'a>, ModelError> {
        let obj = Obj {
            cx: self,
            path: path.to_string(),
            table,
        };
        if let Some((k, v)) = table.iter().find(|(k, _)| !keys.contains(&k.as_str())) {
            let where_ = if path.is_empty() {
                "the top level".to_string()
            } else {
                format!("`{path}`")
            };
            return Err(self.err(
                obj.at(k),
                describe(v),
                format!("unknown key; {where_} takes {}", keys.join(", ")),
            ));
        }
        Ok(obj)
    }
}

/// A short rendering of a TOML value for error messages.
fn describe(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => quoted(s),
        toml::Value::Array(a) => format!("a list of {} entries", a.len()),
        toml::Value::Table(_) => "a table".to_string(),
        toml::Value::Datetime(d) => d.to_string(),
        other => other.to_string(),
    }
}

/// `s` in quotes with escapes, cut to 80 characters.
fn quoted(s: &str) -> String {
    const MAX: usize = 80;
    if s.chars().count() > MAX {
        let head: String = s.chars().take(MAX).collect();
        format!("{head:?}... ({} characters)", s.chars().count())
    } else {
        format!("{s:?}")
    }
}

/// A TOML table being read: its path for errors and typed getters.
struct Obj<'a> {
    cx: &'a Ctx<'a>,
    path: String,
    table: &'a toml::Table,
}

impl<'a> Obj<'a> {
    fn at(&self, key: &str) -> String {
        if self.path.is_empty() {
            key.to_string()
        } else {
            format!("{}.{key}", self.path)
        }
    }

    fn required(&self, key: &str) -> Result<&'a toml::Value, ModelError> {
        self.table.get(key).ok_or_else(|| {
            self.cx
                .err(self.at(key), "(missing)", "required key is missing")
        })
    }

    fn type_err(&self, key: &str, v: &toml::Value, expected: &str) -> ModelError {
        self.cx.err(
            self.at(key),
            describe(v),
            format!("expected {expected}, found {}", v.type_str()),
        )
    }

    fn string(&self, key: &str) -> Result<&'a str, ModelError> {
        let v = self.required(key)?;
        v.as_str().ok_or_else(|| self.type_err(key, v, "a string"))
    }

    fn opt_string(&self, key: &str) -> Result<Option<&'a str>, ModelError> {
        match self.table.get(key) {
            None => Ok(None),
            Some(v) => v
                .as_str()
                .map(Some)
                .ok_or_else(|| self.type_err(key, v, "a string")),
        }
    }

    fn boolean(&self, key: &str) -> Result<bool, ModelError> {
        let v = self.required(key)?;
        v.as_bool()
            .ok_or_else(|| self.type_err(key, v, "true or false"))
    }

    fn sub_table(&self, key: &str, keys: &'static [&'static str]) -> Result<Obj<'a>, ModelError> {
        let v = self.required(key)?;
        let t = v
            .as_table()
            .ok_or_else(|| self.type_err(key, v, &format!("a table `[{}]`", self.at(key))))?;
        self.cx.table(&self.at(key), t, keys)
    }
}

/// Whether `name` may name a model set or a predictor: it becomes a
/// directory name (`build/<set name>/`), a file name and a JSON string, so
/// only `A-Z a-z 0-9 _ . -`, not starting with `.` or `-`, 1 to
/// [`MAX_NAME_LEN`] characters.
pub fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("must not be empty".to_string());
    }
    let n = name.chars().count();
    if n > MAX_NAME_LEN {
        return Err(format!("{n} characters; a name has at most {MAX_NAME_LEN}"));
    }
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-');
    if let Some(c) = name.chars().find(|&c| !allowed(c)) {
        return Err(format!(
            "character {c:?} is not allowed; a name uses only A-Z a-z 0-9 _ . - \
             (it becomes a directory and file name)"
        ));
    }
    if name.starts_with('.') || name.starts_with('-') {
        return Err(
            "must not start with `.` or `-`; a name uses only A-Z a-z 0-9 _ . - \
             and starts with a letter, digit or `_`"
                .to_string(),
        );
    }
    Ok(())
}

/// What a byte rule must look like, for error messages.
const RULE_SYNTAX: &str = "expected `root`, `B`, `B<<k` or `B>>k`: B a byte position 0..31 and \
     k a shift 1..7, written in decimal without sign, leading zero or spaces";

/// Parse one byte rule string, exactly as [`ByteRule`]'s `Display` writes
/// it: `root`, `B`, `B<<k` or `B>>k`, with `B` in 0..=31 and `k` in
/// 1..=[`MAX_SHIFT`], in decimal without sign, leading zero or spaces
/// (`"04"`, `"+4"`, `"4 << 1"`, `"4<<0"` are refused): one spelling per
/// rule, so that a file and the set written back from it agree.
fn parse_rule(s: &str) -> Result<ByteRule, String> {
    if s == "root" {
        return Ok(ByteRule::Root);
    }
    let (base_s, shift) = if let Some((b, k)) = s.split_once("<<") {
        (b, parse_shift(k)?)
    } else if let Some((b, k)) = s.split_once(">>") {
        (b, -parse_shift(k)?)
    } else {
        (s, 0)
    };
    let base = decimal(base_s).ok_or_else(|| RULE_SYNTAX.to_string())?;
    if base >= BLOCK_BYTES as u64 {
        return Err(format!(
            "base {} out of range 0..={}",
            digits(base_s),
            BLOCK_BYTES - 1
        ));
    }
    Ok(ByteRule::Base {
        base: base as u8,
        shift,
    })
}

/// The value of a canonical decimal number: ASCII digits only, no leading
/// zero (but `0` itself); `u64::MAX` for one too large to hold.
fn decimal(s: &str) -> Option<u64> {
    let canonical =
        !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit()) && (s == "0" || !s.starts_with('0'));
    canonical.then(|| s.parse().unwrap_or(u64::MAX))
}

/// A decimal number for an error message: the first 20 digits of a longer
/// one, with its length.
fn digits(s: &str) -> String {
    match s.get(..20) {
        Some(head) if s.len() > 20 => format!("{head}... ({} digits)", s.len()),
        _ => s.to_string(),
    }
}

fn parse_shift(k: &str) -> Result<i8, String> {
    let v = decimal(k).ok_or_else(|| RULE_SYNTAX.to_string())?;
    if v == 0 {
        return Err("shift 0: write the base alone (`B`)".to_string());
    }
    if v > MAX_SHIFT as u64 {
        return Err(format!("shift {} out of range 1..={MAX_SHIFT}", digits(k)));
    }
    Ok(v as i8)
}

/// Names of the model IDs that are not predictors ([`ModelSet::id_name`]):
/// no predictor may take them.
pub const RESERVED_NAMES: [&str; 3] = ["zero-block", "same-words", "raw"];

/// Whether `name` may name a predictor after the predictors named
/// `earlier`: it differs from each of them without regard to ASCII case
/// (the names become file names, and some file systems ignore case) and
/// from [`RESERVED_NAMES`]. [`check_name`] is checked apart.
pub fn check_predictor_name<'a>(
    name: &str,
    earlier: impl IntoIterator<Item = &'a str>,
) -> Result<(), String> {
    if let Some(r) = RESERVED_NAMES.iter().find(|r| r.eq_ignore_ascii_case(name)) {
        return Err(format!(
            "`{r}` is the name of a model ID that is not a predictor; predictor \
             names must differ from {}",
            RESERVED_NAMES.join(", ")
        ));
    }
    match earlier
        .into_iter()
        .enumerate()
        .find(|(_, q)| q.eq_ignore_ascii_case(name))
    {
        Some((j, q)) => Err(format!(
            "duplicate name: predictor[{j}] is named {}; predictor names become file \
             and model-ID names and must differ (ignoring case)",
            quoted(q)
        )),
        None => Ok(()),
    }
}

impl ModelSet {
    /// Load `DIR/model.toml` (or a file path directly).
    pub fn load(path: &Path) -> Result<ModelSet, ModelError> {
        Ok(ModelSet::load_with_sha256(path)?.0)
    }

    /// Load a model set and the SHA-256 of its file (hex), read once.
    pub fn load_with_sha256(path: &Path) -> Result<(ModelSet, String), ModelError> {
        let (file, bytes) = read_model_file(path)?;
        let name = file.display().to_string();
        let text = String::from_utf8(bytes).map_err(|e| ModelError::Syntax {
            file: name.clone(),
            message: format!("not UTF-8 text: {}", e.utf8_error()),
        })?;
        let set = ModelSet::parse(&text, &name)?;
        Ok((set, hex::encode(Sha256::digest(text.as_bytes()))))
    }

    /// Parse and validate model-file text; `file` names it in errors.
    pub fn parse(text: &str, file: &str) -> Result<ModelSet, ModelError> {
        if text.len() as u64 > MAX_MODEL_FILE_BYTES {
            return Err(ModelError::TooLarge {
                file: file.to_string(),
                size: format!("{} bytes", text.len()),
                limit: MAX_MODEL_FILE_BYTES,
            });
        }
        let cx = Ctx { file };
        let root: toml::Table = toml::from_str(text).map_err(|e| ModelError::Syntax {
            file: file.to_string(),
            message: e.to_string(),
        })?;
        // Format and version first: a file of another version may have
        // other keys.
        let top = Obj {
            cx: &cx,
            path: String::new(),
            table: &root,
        };
        let format = top.string("format")?;
        if format != FORMAT_NAME {
            return Err(cx.err(
                "format",
                quoted(format),
                format!("expected {FORMAT_NAME:?}"),
            ));
        }
        let version = top.required("version")?;
        let version = version
            .as_integer()
            .ok_or_else(|| top.type_err("version", version, "an integer"))?;
        if version != FORMAT_VERSION as i64 {
            return Err(cx.err(
                "version",
                version,
                format!("unknown version; this build reads version {FORMAT_VERSION}"),
            ));
        }
        let top = cx.table(
            "",
            &root,
            &[
                "format",
                "version",
                "name",
                "selection",
                "custom",
                "provenance",
                "predictor",
            ],
        )?;
        let name = top.string("name")?;
        check_name(name).map_err(|problem| cx.err("name", quoted(name), problem))?;
        let selection = match top.required("selection")? {
            toml::Value::String(s) if s == "zero-run" => Selection::ZeroRun,
            toml::Value::String(s) if s == "exact" => Selection::Exact,
            other => {
                return Err(cx.err(
                    "selection",
                    describe(other),
                    "expected \"zero-run\" or \"exact\"",
                ))
            }
        };
        let c = top.sub_table("custom", &["zero_block", "same_words"])?;
        let custom = CustomModels {
            zero_block: c.boolean("zero_block")?,
            same_words: c.boolean("same_words")?,
        };
        let provenance = parse_provenance(&top)?;
        let tables: &[toml::Value] = match top.table.get("predictor") {
            None => &[],
            Some(toml::Value::Array(a)) => a,
            Some(other) => return Err(top.type_err("predictor", other, "`[[predictor]]` tables")),
        };
        if tables.is_empty() {
            return Err(cx.err(
                "predictor",
                "[]",
                "a model set needs at least one predictor",
            ));
        }
        // Counted before any predictor is looked at.
        let n_ids = custom.zero_block as usize + custom.same_words as usize + tables.len() + 1;
        if n_ids > MAX_MODEL_IDS {
            return Err(cx.err(
                "predictor",
                format!("{} predictors", tables.len()),
                format!(
                    "too many models: at most {MAX_MODEL_IDS} model IDs including the raw escape"
                ),
            ));
        }
        let mut predictors = Vec::with_capacity(tables.len());
        for (pi, v) in tables.iter().enumerate() {
            let t = v.as_table().ok_or_else(|| {
                cx.err(
                    format!("predictor[{pi}]"),
                    describe(v),
                    "expected a `[[predictor]]` table",
                )
            })?;
            let t = cx.table(
                &format!("predictor[{pi}]"),
                t,
                &["name", "bytes", "reorder"],
            )?;
            let p = validate_predictor(&cx, pi, &t, &predictors)?;
            predictors.push(p);
        }
        Ok(ModelSet {
            name: name.to_string(),
            selection,
            custom,
            predictors,
            provenance,
        })
    }

    /// The canonical TOML text of this set (what `parse` reads back).
    pub fn to_toml(&self) -> Result<String, ModelError> {
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
        toml::to_string(&file).map_err(|e| ModelError::Serialize {
            name: self.name.clone(),
            message: e.to_string(),
        })
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

fn parse_provenance(top: &Obj<'_>) -> Result<Provenance, ModelError> {
    let p = top.sub_table(
        "provenance",
        &["tool", "tool_version", "date", "corpus", "classes", "notes"],
    )?;
    let classes = match p.table.get("classes") {
        None => Vec::new(),
        Some(toml::Value::Array(a)) => {
            if a.len() > MAX_CLASSES {
                return Err(top.cx.err(
                    "provenance.classes",
                    format!("a list of {} entries", a.len()),
                    format!("at most {MAX_CLASSES} classes"),
                ));
            }
            a.iter()
                .enumerate()
                .map(|(i, v)| {
                    v.as_str()
                        .map(str::to_string)
                        .ok_or_else(|| p.type_err(&format!("classes[{i}]"), v, "a string"))
                })
                .collect::<Result<_, _>>()?
        }
        Some(other) => return Err(p.type_err("classes", other, "a list of strings")),
    };
    Ok(Provenance {
        tool: p.string("tool")?.to_string(),
        tool_version: p.string("tool_version")?.to_string(),
        date: p.string("date")?.to_string(),
        corpus: p.string("corpus")?.to_string(),
        classes,
        notes: p.opt_string("notes")?.unwrap_or_default().to_string(),
    })
}

/// Predictor `pi` of the file, `earlier` the predictors before it.
fn validate_predictor(
    cx: &Ctx<'_>,
    pi: usize,
    t: &Obj<'_>,
    earlier: &[Predictor],
) -> Result<Predictor, ModelError> {
    let at = |f: &str| format!("predictor[{pi}].{f}");
    let name = t.string("name")?;
    check_name(name).map_err(|problem| cx.err(at("name"), quoted(name), problem))?;
    check_predictor_name(name, earlier.iter().map(|p| p.name.as_str()))
        .map_err(|problem| cx.err(at("name"), quoted(name), problem))?;
    let bytes_v = t.required("bytes")?;
    let list = bytes_v.as_array().ok_or_else(|| {
        t.type_err(
            "bytes",
            bytes_v,
            &format!("a list of {BLOCK_BYTES} rules, one per byte position"),
        )
    })?;
    if list.len() != BLOCK_BYTES {
        return Err(cx.err(
            at("bytes"),
            format!("{} entries", list.len()),
            format!("expected exactly {BLOCK_BYTES} entries, one per byte position"),
        ));
    }
    let mut texts: Vec<&str> = Vec::with_capacity(BLOCK_BYTES);
    for (i, v) in list.iter().enumerate() {
        texts.push(v.as_str().ok_or_else(|| {
            t.type_err(
                &format!("bytes[{i}]"),
                v,
                "a string such as \"root\", \"3\" or \"3<<1\"",
            )
        })?);
    }
    let mut bytes = [ByteRule::Root; BLOCK_BYTES];
    for (i, s) in texts.iter().enumerate() {
        let rule = parse_rule(s)
            .map_err(|problem| cx.err(at(&format!("bytes[{i}]")), quoted(s), problem))?;
        if let ByteRule::Base { base, .. } = rule {
            if base as usize == i {
                return Err(cx.err(
                    at(&format!("bytes[{i}]")),
                    quoted(s),
                    "a byte cannot be its own base",
                ));
            }
        }
        bytes[i] = rule;
    }
    // Cycle check: every chain of bases must reach a root within 32 steps.
    for (start, text) in texts.iter().enumerate() {
        let mut cur = start;
        let mut steps = 0;
        while let ByteRule::Base { base, .. } = bytes[cur] {
            cur = base as usize;
            steps += 1;
            if steps > BLOCK_BYTES {
                return Err(cx.err(
                    at(&format!("bytes[{start}]")),
                    quoted(text),
                    "the base chain from this byte forms a cycle and never reaches a root",
                ));
            }
        }
    }
    let reorder = match t.required("reorder")? {
        toml::Value::String(n) if n == "identity" => {
            let mut r = [0u8; STREAM_BITS];
            for (o, v) in r.iter_mut().enumerate() {
                *v = o as u8;
            }
            r
        }
        toml::Value::Array(v) => {
            if v.len() != STREAM_BITS {
                return Err(cx.err(
                    at("reorder"),
                    format!("{} entries", v.len()),
                    format!("not a permutation: expected exactly {STREAM_BITS} entries"),
                ));
            }
            let mut seen = [false; STREAM_BITS];
            let mut r = [0u8; STREAM_BITS];
            for (o, x) in v.iter().enumerate() {
                let n = x.as_integer().ok_or_else(|| {
                    t.type_err(&format!("reorder[{o}]"), x, "an integer bit index")
                })?;
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
        other => {
            return Err(cx.err(
                at("reorder"),
                describe(other),
                "expected \"identity\" or a list of 256 bit indices",
            ))
        }
    };
    Ok(Predictor {
        name: name.to_string(),
        bytes,
        reorder,
    })
}

/// Read a model file (`DIR/model.toml` or the file itself), refusing one
/// larger than [`MAX_MODEL_FILE_BYTES`] before reading it; also bounded for
/// files whose size is not known in advance (pipes, devices).
fn read_model_file(path: &Path) -> Result<(PathBuf, Vec<u8>), ModelError> {
    use std::io::Read;
    let file = if path.is_dir() {
        path.join(MODEL_FILE)
    } else {
        path.to_path_buf()
    };
    let io = |source| ModelError::Io {
        path: file.clone(),
        source,
    };
    let too_large = |size: String| ModelError::TooLarge {
        file: file.display().to_string(),
        size,
        limit: MAX_MODEL_FILE_BYTES,
    };
    let f = std::fs::File::open(&file).map_err(io)?;
    let len = f.metadata().map_err(io)?.len();
    if len > MAX_MODEL_FILE_BYTES {
        return Err(too_large(format!("{len} bytes")));
    }
    let mut bytes = Vec::with_capacity(len as usize);
    f.take(MAX_MODEL_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > MAX_MODEL_FILE_BYTES {
        return Err(too_large(format!("more than {MAX_MODEL_FILE_BYTES} bytes")));
    }
    Ok((file, bytes))
}

/// SHA-256 of a model file, hex-encoded: the identity used in generated
/// Verilog headers and provenance.
pub fn file_sha256(path: &Path) -> Result<String, ModelError> {
    let (_, bytes) = read_model_file(path)?;
    Ok(hex::encode(Sha256::digest(&bytes)))
}
