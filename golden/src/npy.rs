//! Memory data from NumPy `.npy` arrays: the array's bytes in C (row-major)
//! element order, exactly what `numpy.load(f).tobytes()` gives, whatever
//! the dtype and shape. The header's Python literal and the dtype are
//! parsed by the `npyz` crate; this module bounds the header before `npyz`
//! sees it, checks the data length against the shape, refuses object
//! arrays, and reorders Fortran-order arrays. The format is NumPy's
//! (`numpy.lib.format`, versions 1.0, 2.0 and 3.0).

use std::path::{Path, PathBuf};

/// The magic string at the start of every `.npy` file.
pub const MAGIC: &[u8; 6] = b"\x93NUMPY";
/// Largest header accepted, in bytes (NumPy itself refuses headers over
/// 10,000 bytes by default).
pub const MAX_HEADER: usize = 1 << 16;

/// A `.npy` problem, naming the file.
#[derive(Debug, thiserror::Error)]
pub enum NpyError {
    #[error("{path}: not a .npy file (no \\x93NUMPY magic)")]
    Magic { path: PathBuf },
    #[error("{path}: .npy format version {major}.{minor} (this reader takes 1.0, 2.0 and 3.0)")]
    Version { path: PathBuf, major: u8, minor: u8 },
    #[error("{path}: .npy header of {len} bytes (at most {MAX_HEADER}, and within the file)")]
    HeaderSize { path: PathBuf, len: u64 },
    #[error("{path}: .npy header: {message}")]
    Header { path: PathBuf, message: String },
    #[error(
        "{path}: .npy array of dtype `{descr}` holds Python objects, not memory data; \
         save a numeric or structured array"
    )]
    Object { path: PathBuf, descr: String },
    #[error(
        "{path}: .npy shape {shape:?} of {item}-byte items needs {expected} data bytes, \
         the file has {actual}"
    )]
    Length {
        path: PathBuf,
        shape: Vec<u64>,
        item: usize,
        expected: u128,
        actual: u64,
    },
}

/// What a `.npy` file holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NpyInfo {
    /// The dtype as NumPy writes it (`<f4`, `|u1`, a structured list ...).
    pub descr: String,
    pub shape: Vec<u64>,
    /// Bytes per element.
    pub item_bytes: usize,
    /// True when the file stores the array in Fortran (column-major) order.
    pub fortran: bool,
}

/// True when `bytes` start like a `.npy` file.
pub fn is_npy(bytes: &[u8]) -> bool {
    bytes.starts_with(MAGIC)
}

/// The data bytes of the `.npy` file `file` (its whole contents, read from
/// `path`), in C element order, and what the header says.
pub fn parse(file: &[u8], path: &Path) -> Result<(Vec<u8>, NpyInfo), NpyError> {
    let (data_at, info) = header(file, file.len() as u64, path)?;
    let data = &file[data_at..];
    let bytes = if info.fortran && info.shape.len() > 1 && info.item_bytes > 0 {
        fortran_to_c(data, &info.shape, info.item_bytes)
    } else {
        data.to_vec()
    };
    Ok((bytes, info))
}

/// The header of a `.npy` file of `file_len` bytes whose first bytes are
/// `head` (at least the header: [`MAX_HEADER`] + 12 bytes, or the whole
/// file): where the data starts and what it holds. The data length
/// (`file_len` less the header) is checked against the shape.
pub fn header(head: &[u8], file_len: u64, path: &Path) -> Result<(usize, NpyInfo), NpyError> {
    let p = || path.to_path_buf();
    let file = head;
    if !is_npy(file) {
        return Err(NpyError::Magic { path: p() });
    }
    let (major, minor) = match file.get(6..8) {
        Some(v) => (v[0], v[1]),
        None => return Err(NpyError::Magic { path: p() }),
    };
    let (len_bytes, prefix) = match (major, minor) {
        (1, 0) => (2usize, 10usize),
        (2, 0) | (3, 0) => (4, 12),
        _ => {
            return Err(NpyError::Version {
                path: p(),
                major,
                minor,
            })
        }
    };
    let field = file.get(8..8 + len_bytes).ok_or(NpyError::HeaderSize {
        path: p(),
        len: file.len() as u64,
    })?;
    let len = field
        .iter()
        .rev()
        .fold(0u64, |acc, &b| (acc << 8) | u64::from(b));
    if len > MAX_HEADER as u64 || prefix as u64 + len > (file.len() as u64).min(file_len) {
        return Err(NpyError::HeaderSize { path: p(), len });
    }
    let data_at = prefix + len as usize;
    let bad = |message: String| NpyError::Header { path: p(), message };
    // the header text, checked for an object dtype and a shape whose
    // element count overflows before npyz parses it
    let text = String::from_utf8_lossy(&file[prefix..data_at]);
    if let Some(shape) = shape_of(&text) {
        if shape
            .iter()
            .try_fold(1u64, |a, &d| a.checked_mul(d))
            .is_none()
        {
            return Err(NpyError::Length {
                path: p(),
                shape,
                item: 0,
                expected: u128::MAX,
                actual: file_len - data_at as u64,
            });
        }
    }
    let header =
        npyz::NpyHeader::from_reader(&file[..data_at]).map_err(|e| match object_descr(&text) {
            Some(descr) => NpyError::Object { path: p(), descr },
            None => bad(e.to_string()),
        })?;
    let dtype = header.dtype();
    let descr = match &dtype {
        npyz::DType::Plain(t) => t.to_string(),
        d => d.descr(),
    };
    let item = dtype
        .num_bytes()
        .ok_or_else(|| bad(format!("dtype `{descr}` has no fixed size")))?;
    let shape = header.shape().to_vec();
    let actual = file_len - data_at as u64;
    let expected = shape
        .iter()
        .try_fold(item as u128, |acc, &d| acc.checked_mul(u128::from(d)))
        .unwrap_or(u128::MAX);
    if expected != u128::from(actual) {
        return Err(NpyError::Length {
            path: p(),
            shape,
            item,
            expected,
            actual,
        });
    }
    let fortran = header.order() == npyz::Order::Fortran;
    Ok((
        data_at,
        NpyInfo {
            descr,
            shape,
            item_bytes: item,
            fortran,
        },
    ))
}

/// The object type (`O`, `|O8`, ...) named anywhere in a header's text,
/// if any: npyz does not parse it, and it is the one error users need
/// named plainly.
fn object_descr(text: &str) -> Option<String> {
    text.split('\'')
        .skip(1)
        .step_by(2)
        .find(|t| {
            let t = t.trim_start_matches(['<', '>', '|', '=']);
            t.strip_prefix('O')
                .is_some_and(|n| n.chars().all(|c| c.is_ascii_digit()))
        })
        .map(str::to_string)
}

/// The dimensions of the `'shape'` tuple in a header's text, when they
/// read as integers (otherwise npyz reports the header).
fn shape_of(text: &str) -> Option<Vec<u64>> {
    let at = text.find("'shape':").or_else(|| text.find("'shape'"))?;
    let rest = &text[at..];
    let open = rest.find('(')?;
    let close = rest[open..].find(')')? + open;
    rest[open + 1..close]
        .split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(|t| t.trim_end_matches('L').parse::<u64>().ok())
        .collect()
}

/// Elements of a Fortran-order array (first index fastest) in C order
/// (last index fastest). `data.len()` is `item x product(shape)`.
fn fortran_to_c(data: &[u8], shape: &[u64], item: usize) -> Vec<u8> {
    let dims: Vec<usize> = shape.iter().map(|&d| d as usize).collect();
    // Fortran stride of each axis, in elements
    let mut fstride = vec![1usize; dims.len()];
    for k in 1..dims.len() {
        fstride[k] = fstride[k - 1] * dims[k - 1];
    }
    let mut out = Vec::with_capacity(data.len());
    let mut idx = vec![0usize; dims.len()];
    let n = data.len() / item;
    for _ in 0..n {
        let src: usize = idx.iter().zip(&fstride).map(|(i, s)| i * s).sum();
        out.extend_from_slice(&data[src * item..(src + 1) * item]);
        // next C-order index: the last axis fastest
        for k in (0..dims.len()).rev() {
            idx[k] += 1;
            if idx[k] < dims[k] {
                break;
            }
            idx[k] = 0;
        }
    }
    out
}

/// The memory data of a file: a `.npy` array's bytes in C order (see
/// [`parse`]), or any other file's bytes as they are.
pub fn read_data(path: &Path) -> Result<Vec<u8>, DataError> {
    let file = std::fs::read(path).map_err(|source| DataError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(data_of(file, path)?)
}

/// [`read_data`] on bytes already read from `path`: a file named `.npy`
/// or starting with the `.npy` magic is parsed, anything else is raw.
pub fn data_of(file: Vec<u8>, path: &Path) -> Result<Vec<u8>, NpyError> {
    if is_npy(&file) || path.extension().is_some_and(|x| x == "npy") {
        Ok(parse(&file, path)?.0)
    } else {
        Ok(file)
    }
}

/// Reading a data file.
#[derive(Debug, thiserror::Error)]
pub enum DataError {
    #[error("cannot read {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Npy(#[from] NpyError),
}

/// True for the files the tools read as memory data in a directory: raw
/// `.bin` dumps and `.npy` arrays.
pub fn is_data_file(path: &Path) -> bool {
    path.extension().is_some_and(|x| x == "bin" || x == "npy")
}
