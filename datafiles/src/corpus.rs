//! The training/evaluation corpus: `MANIFEST.tsv`, the raw application
//! files, and the paper's split protocol (Jin et al. 2022, section 4), shared
//! by the training tool and any later evaluation tool so that both see the
//! same blocks in the same roles.
//!
//! Split protocol (docs/spec/training.md, "Split"):
//! 1. Only *trainable* applications take part (every class except `mixed`
//!    and `workload`, which are evaluation-only).
//! 2. Each application's entropy is the Shannon entropy, in bits per byte,
//!    of the byte-value histogram over all its 32-byte blocks that are
//!    neither all-zero nor all-words-same ([`app_entropy`]).
//! 3. Applications are sorted by that entropy, descending (ties by file
//!    name); every fourth one (ranks 3, 7, 11, ... counting from 0) is
//!    *unseen*: none of its blocks trains. Exception: an application is
//!    never made unseen when no other application of its class would remain
//!    for training (fp16 and bf16 have one file each); the unseen slot then
//!    passes to the next application in the order, and the count of four
//!    restarts from the one that took it.
//! 4. In every other application a seeded shuffle ([`SplitMix64`], seeded
//!    from the split seed and the file name) puts `floor(0.8 n)` blocks into
//!    training and the rest into the *seen* test set.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use golden::blocks::{blocks_of, BlockFileError};
use golden::mpc::select::{is_same_words, is_zero_block};
use golden::mpc::BLOCK_BYTES;

/// Name of the manifest inside a corpus directory.
pub const MANIFEST_FILE: &str = "MANIFEST.tsv";
/// The manifest's columns, in order.
pub const MANIFEST_COLUMNS: [&str; 8] = [
    "file",
    "class",
    "domain",
    "bytes",
    "zero_block_fraction_32B",
    "sha256_16",
    "source",
    "licence",
];
/// Every data class a manifest may name.
pub const KNOWN_CLASSES: [&str; 10] = [
    "int8", "int16", "int32", "int64", "fp16", "bf16", "fp32", "fp64", "mixed", "workload",
];
/// The class of every file of a corpus without a manifest.
pub const UNLABELLED_CLASS: &str = "unlabelled";
/// Classes that hold several data types in one file: evaluation only.
pub const EVALUATION_ONLY_CLASSES: [&str; 2] = ["mixed", "workload"];
/// Fraction of a seen application's blocks that train (the rest: seen test).
pub const TRAIN_FRACTION_NUM: usize = 4;
pub const TRAIN_FRACTION_DEN: usize = 5;
/// Every `UNSEEN_EVERY`-th application in entropy order is unseen.
pub const UNSEEN_EVERY: usize = 4;
/// One 32-byte block.
pub type Block = [u8; BLOCK_BYTES];

/// A corpus problem, naming the file (and line/column) concerned.
#[derive(Debug, thiserror::Error)]
pub enum CorpusError {
    #[error("corpus directory {0} does not exist or is not a directory")]
    NoDir(PathBuf),
    #[error("cannot read {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}:{line}:{column}: {message}")]
    Manifest {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{0}: the manifest lists no application files; the corpus is empty")]
    Empty(PathBuf),
    #[error("{0}: no .bin or .npy data files (and no MANIFEST.tsv)")]
    NoData(PathBuf),
    #[error("{path}: manifest says {expected} bytes, file has {actual}")]
    Size {
        path: PathBuf,
        expected: u64,
        actual: u64,
    },
    #[error("{path}: SHA-256 starts {actual}, manifest says {expected}")]
    Hash {
        path: PathBuf,
        expected: String,
        actual: String,
    },
    #[error("{path}: none of its {files} data files holds a whole {block}-byte block")]
    NoBlocks {
        path: PathBuf,
        files: usize,
        block: usize,
    },
    #[error(transparent)]
    Blocks(#[from] BlockFileError),
}

/// A data file with no whole block: left out of a corpus, with a warning
/// ([`ShortFile`]'s text), by every tool that reads corpora.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShortFile {
    pub path: PathBuf,
    /// Its data bytes (a `.npy` array's, without the header).
    pub bytes: u64,
    /// The block size it is shorter than.
    pub block: usize,
}

impl std::fmt::Display for ShortFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: {} byte{} of data, shorter than one {}-byte block; skipped",
            self.path.display(),
            self.bytes,
            if self.bytes == 1 { "" } else { "s" },
            self.block
        )
    }
}

/// One row of `MANIFEST.tsv`.
#[derive(Clone, Debug, PartialEq)]
pub struct ManifestEntry {
    /// Path relative to the corpus directory, e.g. `fp32/navy-winds.bin`.
    pub file: String,
    pub class: String,
    pub domain: String,
    pub bytes: u64,
    pub zero_block_fraction: f64,
    /// First 16 hex digits of the file's SHA-256.
    pub sha256_16: String,
    pub source: String,
    pub licence: String,
    /// 1-based line in the manifest.
    pub line: usize,
}

impl ManifestEntry {
    /// True for classes that may train (not `mixed`/`workload`).
    pub fn trainable(&self) -> bool {
        !EVALUATION_ONLY_CLASSES.contains(&self.class.as_str())
    }
}

/// The parsed manifest.
#[derive(Clone, Debug, PartialEq)]
pub struct Manifest {
    pub path: PathBuf,
    pub entries: Vec<ManifestEntry>,
}

impl Manifest {
    /// Read and parse `DIR/MANIFEST.tsv`.
    pub fn load(dir: &Path) -> Result<Manifest, CorpusError> {
        if !dir.is_dir() {
            return Err(CorpusError::NoDir(dir.to_path_buf()));
        }
        let path = dir.join(MANIFEST_FILE);
        let text = std::fs::read_to_string(&path).map_err(|source| CorpusError::Io {
            path: path.clone(),
            source,
        })?;
        Manifest::parse(&text, &path)
    }

    /// Parse manifest text; `path` names it in errors. The first line must be
    /// the header ([`MANIFEST_COLUMNS`]); blank lines and lines starting with
    /// `#` are skipped.
    pub fn parse(text: &str, path: &Path) -> Result<Manifest, CorpusError> {
        let err = |line: usize, column: usize, message: String| CorpusError::Manifest {
            path: path.to_path_buf(),
            line,
            column,
            message,
        };
        let mut lines = text.lines().enumerate();
        let header = loop {
            match lines.next() {
                None => return Err(CorpusError::Empty(path.to_path_buf())),
                Some((_, l)) if l.trim().is_empty() || l.starts_with('#') => continue,
                Some((n, l)) => break (n + 1, l),
            }
        };
        let cols: Vec<&str> = header.1.split('\t').collect();
        for (c, want) in MANIFEST_COLUMNS.iter().enumerate() {
            match cols.get(c) {
                Some(got) if got.trim() == *want => {}
                got => {
                    return Err(err(
                        header.0,
                        c + 1,
                        format!(
                            "header column {} should be `{want}`, found {:?}",
                            c + 1,
                            got.map(|g| g.trim()).unwrap_or("(missing)")
                        ),
                    ))
                }
            }
        }
        let mut entries = Vec::new();
        let mut seen: BTreeMap<String, usize> = BTreeMap::new();
        for (n, l) in lines {
            let line = n + 1;
            if l.trim().is_empty() || l.starts_with('#') {
                continue;
            }
            let f: Vec<&str> = l.split('\t').collect();
            if f.len() != MANIFEST_COLUMNS.len() {
                return Err(err(
                    line,
                    f.len().min(MANIFEST_COLUMNS.len()) + 1,
                    format!(
                        "expected {} tab-separated columns, found {}",
                        MANIFEST_COLUMNS.len(),
                        f.len()
                    ),
                ));
            }
            let file = f[0].trim().to_string();
            if file.is_empty() || file.starts_with('/') || file.split('/').any(|s| s == "..") {
                return Err(err(
                    line,
                    1,
                    format!("file {file:?} must be a non-empty relative path inside the corpus"),
                ));
            }
            if let Some(prev) = seen.insert(file.clone(), line) {
                return Err(err(
                    line,
                    1,
                    format!("file {file:?} already listed on line {prev}"),
                ));
            }
            let class = f[1].trim().to_string();
            if !KNOWN_CLASSES.contains(&class.as_str()) {
                return Err(err(
                    line,
                    2,
                    format!(
                        "unknown class {class:?}; expected one of {}",
                        KNOWN_CLASSES.join(", ")
                    ),
                ));
            }
            let bytes: u64 = f[3]
                .trim()
                .parse()
                .map_err(|_| err(line, 4, format!("bytes {:?} is not an integer", f[3])))?;
            if bytes == 0 {
                return Err(err(line, 4, "bytes is 0: an empty application".into()));
            }
            let zero_block_fraction: f64 = f[4]
                .trim()
                .parse()
                .ok()
                .filter(|v: &f64| (0.0..=1.0).contains(v))
                .ok_or_else(|| {
                    err(
                        line,
                        5,
                        format!("zero_block_fraction_32B {:?} is not a number in 0..1", f[4]),
                    )
                })?;
            let sha = f[5].trim().to_ascii_lowercase();
            if sha.len() != 16 || !sha.chars().all(|c| c.is_ascii_hexdigit()) {
                return Err(err(
                    line,
                    6,
                    format!("sha256_16 {:?} is not 16 hex digits", f[5]),
                ));
            }
            entries.push(ManifestEntry {
                file,
                class,
                domain: f[2].trim().to_string(),
                bytes,
                zero_block_fraction,
                sha256_16: sha,
                source: f[6].trim().to_string(),
                licence: f[7].trim().to_string(),
                line,
            });
        }
        if entries.is_empty() {
            return Err(CorpusError::Empty(path.to_path_buf()));
        }
        Ok(Manifest {
            path: path.to_path_buf(),
            entries,
        })
    }
}

/// One application: its manifest row and its blocks.
#[derive(Clone, Debug)]
pub struct App {
    pub entry: ManifestEntry,
    pub blocks: Vec<Block>,
}

/// A loaded corpus, applications in manifest order.
#[derive(Clone, Debug)]
pub struct Corpus {
    pub dir: PathBuf,
    /// The manifest (without one: a row per data file that has a block).
    pub manifest: Manifest,
    /// Every file with at least one whole 32-byte block.
    pub apps: Vec<App>,
    /// The files left out for having no whole block (warn about each).
    pub skipped: Vec<ShortFile>,
}

impl Corpus {
    /// Load a corpus: with `DIR/MANIFEST.tsv`, every file it lists (see
    /// [`Corpus::load`]); a directory without one, or a single file, as
    /// unlabelled data ([`Corpus::load_unlabelled`]).
    pub fn open(path: &Path) -> Result<Corpus, CorpusError> {
        if path.is_dir() && path.join(MANIFEST_FILE).exists() {
            Corpus::load(path)
        } else {
            Corpus::load_unlabelled(path)
        }
    }

    /// Unlabelled data: `path` is one data file, or a directory whose `.bin`
    /// and `.npy` files (in its subdirectories too, in path order) are the
    /// applications. Every file is of class [`UNLABELLED_CLASS`] (trainable);
    /// its size, hash and zero-block fraction are computed; the bytes past
    /// its last whole 32-byte block are not used.
    pub fn load_unlabelled(path: &Path) -> Result<Corpus, CorpusError> {
        let (dir, files) = if path.is_file() {
            let dir = path.parent().unwrap_or(Path::new(".")).to_path_buf();
            (dir, vec![path.to_path_buf()])
        } else if path.is_dir() {
            let mut files = Vec::new();
            data_files(path, &mut files)?;
            files.sort();
            (path.to_path_buf(), files)
        } else {
            return Err(CorpusError::NoDir(path.to_path_buf()));
        };
        let mut entries = Vec::with_capacity(files.len());
        let mut apps = Vec::with_capacity(files.len());
        let mut skipped = Vec::new();
        for (line, f) in files.iter().enumerate() {
            let raw = std::fs::read(f).map_err(|source| CorpusError::Io {
                path: f.clone(),
                source,
            })?;
            let bytes = raw.len() as u64;
            let sha = hex::encode(&Sha256::digest(&raw)[..8]);
            let mut data = golden::npy::data_of(raw, f).map_err(BlockFileError::from)?;
            if data.len() < BLOCK_BYTES {
                skipped.push(ShortFile {
                    path: f.clone(),
                    bytes: data.len() as u64,
                    block: BLOCK_BYTES,
                });
                continue;
            }
            data.truncate(data.len() - data.len() % BLOCK_BYTES);
            let blocks =
                blocks_of::<BLOCK_BYTES>(&data, false).map_err(|_| BlockFileError::Empty {
                    path: f.clone(),
                    block: BLOCK_BYTES,
                })?;
            let zero = blocks.iter().filter(|b| b.iter().all(|&x| x == 0)).count();
            let file = f
                .strip_prefix(&dir)
                .unwrap_or(f)
                .to_string_lossy()
                .into_owned();
            let entry = ManifestEntry {
                file,
                class: UNLABELLED_CLASS.to_string(),
                domain: "-".to_string(),
                bytes,
                zero_block_fraction: zero as f64 / blocks.len().max(1) as f64,
                sha256_16: sha,
                source: "-".to_string(),
                licence: "-".to_string(),
                line: line + 1,
            };
            entries.push(entry.clone());
            apps.push(App { entry, blocks });
        }
        if apps.is_empty() {
            if skipped.is_empty() {
                return Err(CorpusError::NoData(dir));
            }
            return Err(CorpusError::NoBlocks {
                path: path.to_path_buf(),
                files: skipped.len(),
                block: BLOCK_BYTES,
            });
        }
        Ok(Corpus {
            dir,
            manifest: Manifest {
                path: PathBuf::from("(no manifest: unlabelled files)"),
                entries,
            },
            apps,
            skipped,
        })
    }

    /// Print a warning on stderr, prefixed with `tool`, for every file left
    /// out for having no whole block.
    pub fn warn_skipped(&self, tool: &str) {
        for s in &self.skipped {
            eprintln!("{tool}: warning: {s}");
        }
    }

    /// True when the corpus came without labels.
    pub fn unlabelled(&self) -> bool {
        self.apps.iter().all(|a| a.entry.class == UNLABELLED_CLASS)
    }

    /// Load every file of the manifest, checking size and SHA-256 prefix.
    pub fn load(dir: &Path) -> Result<Corpus, CorpusError> {
        let manifest = Manifest::load(dir)?;
        let mut apps = Vec::with_capacity(manifest.entries.len());
        let mut skipped = Vec::new();
        for e in &manifest.entries {
            let path = dir.join(&e.file);
            let data = std::fs::read(&path).map_err(|source| CorpusError::Io {
                path: path.clone(),
                source,
            })?;
            if data.len() as u64 != e.bytes {
                return Err(CorpusError::Size {
                    path,
                    expected: e.bytes,
                    actual: data.len() as u64,
                });
            }
            let actual = hex::encode(&Sha256::digest(&data)[..8]);
            if actual != e.sha256_16 {
                return Err(CorpusError::Hash {
                    path,
                    expected: e.sha256_16.clone(),
                    actual,
                });
            }
            // a .npy array's bytes in C order; the manifest's size and hash
            // are the file's
            let data = golden::npy::data_of(data, &path).map_err(BlockFileError::from)?;
            if data.len() < BLOCK_BYTES {
                skipped.push(ShortFile {
                    path,
                    bytes: data.len() as u64,
                    block: BLOCK_BYTES,
                });
                continue;
            }
            let blocks = blocks_of::<BLOCK_BYTES>(&data, false).map_err(|err| match err {
                BlockFileError::Ragged {
                    size, block, rest, ..
                } => BlockFileError::Ragged {
                    path: path.clone(),
                    size,
                    block,
                    rest,
                },
                BlockFileError::Empty { block, .. } => BlockFileError::Empty {
                    path: path.clone(),
                    block,
                },
                other => other,
            })?;
            apps.push(App {
                entry: e.clone(),
                blocks,
            });
        }
        Ok(Corpus {
            dir: dir.to_path_buf(),
            manifest,
            apps,
            skipped,
        })
    }

    /// Build a corpus from in-memory applications (tests, synthetic data).
    pub fn from_apps(apps: Vec<App>) -> Corpus {
        let entries = apps.iter().map(|a| a.entry.clone()).collect();
        Corpus {
            dir: PathBuf::new(),
            manifest: Manifest {
                path: PathBuf::from(MANIFEST_FILE),
                entries,
            },
            apps,
            skipped: Vec::new(),
        }
    }
}

/// The `.bin` and `.npy` files under `dir`, recursively.
fn data_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), CorpusError> {
    let io = |source| CorpusError::Io {
        path: dir.to_path_buf(),
        source,
    };
    for e in std::fs::read_dir(dir).map_err(io)? {
        let p = e.map_err(io)?.path();
        if p.is_dir() {
            data_files(&p, out)?;
        } else if golden::npy::is_data_file(&p) {
            out.push(p);
        }
    }
    Ok(())
}

/// The data files of a corpus by class, without reading them: with
/// `MANIFEST.tsv`, the files it lists under their classes; otherwise every
/// `.bin`/`.npy` file under `path` (recursively), of the class named by its
/// first subdirectory below `path`, or [`UNLABELLED_CLASS`] for a file
/// directly in `path` (and for `path` itself when it is a file). Classes
/// sorted by name, files by path; an error when there is no file.
pub fn files_by_class(path: &Path) -> Result<Vec<(String, Vec<PathBuf>)>, CorpusError> {
    let mut classes: Vec<(String, Vec<PathBuf>)> = Vec::new();
    let mut add = |class: &str, path: PathBuf| match classes.iter_mut().find(|(c, _)| c == class) {
        Some((_, v)) => v.push(path),
        None => classes.push((class.to_string(), vec![path])),
    };
    if path.is_file() {
        add(UNLABELLED_CLASS, path.to_path_buf());
    } else if path.is_dir() && path.join(MANIFEST_FILE).exists() {
        let manifest = Manifest::load(path)?;
        if manifest.entries.is_empty() {
            return Err(CorpusError::Empty(manifest.path));
        }
        for e in manifest.entries {
            add(&e.class, path.join(&e.file));
        }
    } else if path.is_dir() {
        let mut files = Vec::new();
        data_files(path, &mut files)?;
        for f in files {
            let rel = f.strip_prefix(path).unwrap_or(&f);
            let mut parts = rel.components();
            let first = parts
                .next()
                .map(|c| c.as_os_str().to_string_lossy().into_owned());
            let class = match (first, parts.next()) {
                (Some(dir), Some(_)) => dir,
                _ => UNLABELLED_CLASS.to_string(),
            };
            add(&class, f);
        }
    } else {
        return Err(CorpusError::NoDir(path.to_path_buf()));
    }
    if classes.is_empty() {
        return Err(CorpusError::NoData(path.to_path_buf()));
    }
    classes.sort_by(|a, b| a.0.cmp(&b.0));
    for (_, v) in &mut classes {
        v.sort();
    }
    Ok(classes)
}

/// The bytes of memory data in `path`: a `.npy` array's data (without its
/// header), any other file's size; only the header is read.
pub fn data_len(path: &Path) -> Result<u64, CorpusError> {
    use std::io::Read;
    let io = |source| CorpusError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let len = file.metadata().map_err(io)?.len();
    let mut head = Vec::new();
    file.take(golden::npy::MAX_HEADER as u64 + 12)
        .read_to_end(&mut head)
        .map_err(io)?;
    if golden::npy::is_npy(&head) || path.extension().is_some_and(|x| x == "npy") {
        let (data_at, _) = golden::npy::header(&head, len, path).map_err(BlockFileError::from)?;
        Ok(len.saturating_sub(data_at as u64))
    } else {
        Ok(len)
    }
}

/// Data files by class: `(class, files)`, classes sorted by name.
pub type ClassFiles = Vec<(String, Vec<PathBuf>)>;

/// [`files_by_class`] less the files with no whole `block`-byte block
/// (returned apart, to be warned about); a class left without files is
/// left out. An error when no file is left.
pub fn usable_files_by_class(
    path: &Path,
    block: usize,
) -> Result<(ClassFiles, Vec<ShortFile>), CorpusError> {
    let mut short = Vec::new();
    let mut classes = Vec::new();
    let mut files_seen = 0;
    for (class, files) in files_by_class(path)? {
        let mut keep = Vec::with_capacity(files.len());
        for f in files {
            files_seen += 1;
            let bytes = data_len(&f)?;
            if bytes < block as u64 {
                short.push(ShortFile {
                    path: f,
                    bytes,
                    block,
                });
            } else {
                keep.push(f);
            }
        }
        if !keep.is_empty() {
            classes.push((class, keep));
        }
    }
    if classes.is_empty() {
        return Err(CorpusError::NoBlocks {
            path: path.to_path_buf(),
            files: files_seen,
            block,
        });
    }
    Ok((classes, short))
}

/// Every data file of a corpus ([`files_by_class`] without the classes),
/// sorted by path.
pub fn data_files_of(path: &Path) -> Result<Vec<PathBuf>, CorpusError> {
    let mut files: Vec<PathBuf> = files_by_class(path)?
        .into_iter()
        .flat_map(|(_, f)| f)
        .collect();
    files.sort();
    Ok(files)
}

/// True for blocks the custom models take (all-zero, all-words-same); the
/// split's entropy and the predictor training leave them out.
pub fn is_custom_block(b: &Block) -> bool {
    is_zero_block(b) || is_same_words(b)
}

/// Shannon entropy (bits per byte, 0..8) of the byte-value histogram over
/// the blocks that are not all-zero and not all-words-same; 0 when there are
/// none.
pub fn app_entropy(blocks: &[Block]) -> f64 {
    let mut hist = [0u64; 256];
    for b in blocks.iter().filter(|b| !is_custom_block(b)) {
        for &v in b {
            hist[v as usize] += 1;
        }
    }
    entropy_of(&hist)
}

/// Shannon entropy in bits of a histogram (0 for an empty one).
pub fn entropy_of(hist: &[u64]) -> f64 {
    let total: u64 = hist.iter().sum();
    if total == 0 {
        return 0.0;
    }
    let t = total as f64;
    hist.iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = c as f64 / t;
            -p * p.log2()
        })
        .sum()
}

/// SplitMix64 (Steele et al.): a tiny, fully specified PRNG, so the split
/// never changes with a dependency's version.
#[derive(Clone, Debug)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in 0..n (n > 0), by 128-bit multiply (Lemire, no rejection:
    /// the bias is below 2^-40 for the sizes used here).
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }
}

/// The role of an application in the split.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AppRole {
    /// 80 % of its blocks train, 20 % are the seen test set.
    Seen,
    /// Every fourth application by entropy: test only.
    Unseen,
    /// `mixed` / `workload`: evaluation only, never trains.
    Evaluation,
}

impl std::fmt::Display for AppRole {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            AppRole::Seen => "seen",
            AppRole::Unseen => "unseen",
            AppRole::Evaluation => "evaluation",
        })
    }
}

/// One application's part in the split.
#[derive(Clone, Debug)]
pub struct AppSplit {
    /// Index into `Corpus::apps`.
    pub app: usize,
    pub role: AppRole,
    /// Entropy ([`app_entropy`]).
    pub entropy: f64,
    /// Rank in descending entropy order among trainable apps (`None` for
    /// evaluation-only apps).
    pub rank: Option<usize>,
    /// Block indices that train (sorted; empty unless `Seen`).
    pub train: Vec<u32>,
    /// Block indices of the test set: the 20 % for `Seen`, all blocks
    /// otherwise (sorted).
    pub test: Vec<u32>,
}

/// The split of a whole corpus, in `Corpus::apps` order.
#[derive(Clone, Debug)]
pub struct Split {
    pub seed: u64,
    /// True for [`Split::held_out`]: nothing of the corpus trains, every
    /// block is a test block.
    pub held_out: bool,
    pub apps: Vec<AppSplit>,
}

impl Split {
    /// The paper's protocol over all trainable applications (module docs).
    pub fn paper(corpus: &Corpus, seed: u64) -> Split {
        let entropies: Vec<f64> = corpus.apps.iter().map(|a| app_entropy(&a.blocks)).collect();
        let mut order: Vec<usize> = (0..corpus.apps.len())
            .filter(|&i| corpus.apps[i].entry.trainable())
            .collect();
        order.sort_by(|&a, &b| {
            entropies[b]
                .total_cmp(&entropies[a])
                .then_with(|| corpus.apps[a].entry.file.cmp(&corpus.apps[b].entry.file))
        });
        let mut rank = vec![None; corpus.apps.len()];
        let mut unseen = vec![false; corpus.apps.len()];
        let mut since_unseen = 0;
        for (r, &i) in order.iter().enumerate() {
            rank[i] = Some(r);
            let class = &corpus.apps[i].entry.class;
            // Another application of this class that is not unseen (yet):
            // every class keeps at least one training application.
            let keeps_one = order
                .iter()
                .any(|&o| o != i && !unseen[o] && corpus.apps[o].entry.class == *class);
            if since_unseen >= UNSEEN_EVERY - 1 && keeps_one {
                unseen[i] = true;
                since_unseen = 0;
            } else {
                since_unseen += 1;
            }
        }
        let apps = corpus
            .apps
            .iter()
            .enumerate()
            .map(|(i, app)| {
                let n = app.blocks.len();
                let all: Vec<u32> = (0..n as u32).collect();
                let role = match rank[i] {
                    None => AppRole::Evaluation,
                    Some(_) if unseen[i] => AppRole::Unseen,
                    Some(_) => AppRole::Seen,
                };
                let (train, test) = if role == AppRole::Seen {
                    let mut idx = all;
                    let mut rng =
                        SplitMix64(seed ^ golden::hash::fnv1a64(app.entry.file.as_bytes()));
                    for k in (1..n).rev() {
                        let j = rng.below(k as u64 + 1) as usize;
                        idx.swap(k, j);
                    }
                    let cut = n * TRAIN_FRACTION_NUM / TRAIN_FRACTION_DEN;
                    let mut train = idx[..cut].to_vec();
                    let mut test = idx[cut..].to_vec();
                    train.sort_unstable();
                    test.sort_unstable();
                    (train, test)
                } else {
                    (Vec::new(), all)
                };
                AppSplit {
                    app: i,
                    role,
                    entropy: entropies[i],
                    rank: rank[i],
                    train,
                    test,
                }
            })
            .collect();
        Split {
            seed,
            held_out: false,
            apps,
        }
    }

    /// A corpus held out from training altogether (e.g. one the model sets
    /// never saw): every block of every file is a test block and none
    /// trains. Applications of trainable classes (labelled or
    /// `unlabelled`) are [`AppRole::Unseen`], `mixed`/`workload` files
    /// [`AppRole::Evaluation`]; no application has a rank.
    pub fn held_out(corpus: &Corpus, seed: u64) -> Split {
        let apps = corpus
            .apps
            .iter()
            .enumerate()
            .map(|(i, app)| AppSplit {
                app: i,
                role: if app.entry.trainable() {
                    AppRole::Unseen
                } else {
                    AppRole::Evaluation
                },
                entropy: app_entropy(&app.blocks),
                rank: None,
                train: Vec::new(),
                test: (0..app.blocks.len() as u32).collect(),
            })
            .collect();
        Split {
            seed,
            held_out: true,
            apps,
        }
    }

    /// The classes of the corpus's trainable applications, in first-seen
    /// order (for [`Split::train_blocks`] over everything that may train).
    pub fn trainable_classes(corpus: &Corpus) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for a in &corpus.apps {
            if a.entry.trainable() && !out.contains(&a.entry.class) {
                out.push(a.entry.class.clone());
            }
        }
        out
    }

    /// Training blocks of the applications whose class is in `classes`, in
    /// corpus order.
    pub fn train_blocks(&self, corpus: &Corpus, classes: &[String]) -> Vec<Block> {
        self.collect(corpus, classes, |s| &s.train)
    }

    /// Test blocks (seen 20 %, unseen, evaluation) of the applications whose
    /// class is in `classes`.
    pub fn test_blocks(&self, corpus: &Corpus, classes: &[String]) -> Vec<Block> {
        self.collect(corpus, classes, |s| &s.test)
    }

    fn collect(
        &self,
        corpus: &Corpus,
        classes: &[String],
        pick: impl Fn(&AppSplit) -> &Vec<u32>,
    ) -> Vec<Block> {
        let mut out = Vec::new();
        for s in &self.apps {
            let app = &corpus.apps[s.app];
            if classes.contains(&app.entry.class) {
                out.extend(pick(s).iter().map(|&k| app.blocks[k as usize]));
            }
        }
        out
    }

    /// The test blocks of one application.
    pub fn app_test_blocks<'a>(
        &'a self,
        corpus: &'a Corpus,
        app: usize,
    ) -> impl Iterator<Item = &'a Block> + 'a {
        let blocks = &corpus.apps[app].blocks;
        self.apps[app]
            .test
            .iter()
            .map(move |&k| &blocks[k as usize])
    }

    /// One line per application for provenance: `file sha role`.
    pub fn describe(&self, corpus: &Corpus) -> String {
        self.apps
            .iter()
            .map(|s| {
                let e = &corpus.apps[s.app].entry;
                format!("{} {} {}", e.file, e.sha256_16, s.role)
            })
            .collect::<Vec<_>>()
            .join("; ")
    }
}
