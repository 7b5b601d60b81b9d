//! Reading raw memory files as fixed-size blocks, with clear errors for
//! sizes that do not divide.

use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum BlockFileError {
    #[error("cannot read {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// No whole block: the file is empty, or (where a short last block is
    /// dropped rather than padded) shorter than one block.
    #[error("{path}: shorter than one {block}-byte block; there is no block to code")]
    Empty { path: PathBuf, block: usize },
    #[error("{path}: {}", ragged(*.size, *.block, *.rest))]
    Ragged {
        path: PathBuf,
        size: usize,
        block: usize,
        rest: usize,
    },
    #[error(transparent)]
    Npy(#[from] crate::npy::NpyError),
}

/// What [`BlockFileError::Ragged`] says after the path.
fn ragged(size: usize, block: usize, rest: usize) -> String {
    if size < block {
        format!(
            "{size} byte{}, shorter than one {block}-byte block; pass --pad to zero-pad it \
             to one block",
            if size == 1 { "" } else { "s" }
        )
    } else {
        format!(
            "size {size} bytes is not a multiple of the {block}-byte block ({rest} bytes left \
             over); pass --pad to zero-pad the last block"
        )
    }
}

/// Read a whole file as `N`-byte blocks: a raw dump, or a `.npy` array's
/// bytes in C order ([`crate::npy`]). With `pad`, a short last block is
/// zero-padded; without it a ragged size is an error.
pub fn read_blocks<const N: usize>(path: &Path, pad: bool) -> Result<Vec<[u8; N]>, BlockFileError> {
    read_blocks_and_len(path, pad).map(|(blocks, _)| blocks)
}

/// [`read_blocks`], with the number of data bytes the blocks hold (less
/// than `N` times the blocks where the last one is padded).
pub fn read_blocks_and_len<const N: usize>(
    path: &Path,
    pad: bool,
) -> Result<(Vec<[u8; N]>, usize), BlockFileError> {
    let file = std::fs::read(path).map_err(|source| BlockFileError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let data = crate::npy::data_of(file, path)?;
    let len = data.len();
    let blocks = blocks_of(&data, pad).map_err(|e| match e {
        BlockFileError::Empty { block, .. } => BlockFileError::Empty {
            path: path.to_path_buf(),
            block,
        },
        BlockFileError::Ragged {
            size, block, rest, ..
        } => BlockFileError::Ragged {
            path: path.to_path_buf(),
            size,
            block,
            rest,
        },
        other => other,
    })?;
    Ok((blocks, len))
}

/// Split bytes into `N`-byte blocks (see [`read_blocks`]).
pub fn blocks_of<const N: usize>(data: &[u8], pad: bool) -> Result<Vec<[u8; N]>, BlockFileError> {
    if data.is_empty() {
        return Err(BlockFileError::Empty {
            path: PathBuf::new(),
            block: N,
        });
    }
    let rest = data.len() % N;
    if rest != 0 && !pad {
        return Err(BlockFileError::Ragged {
            path: PathBuf::new(),
            size: data.len(),
            block: N,
            rest,
        });
    }
    Ok(data
        .chunks(N)
        .map(|c| {
            let mut b = [0u8; N];
            b[..c.len()].copy_from_slice(c);
            b
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ragged_sizes_need_pad() {
        let data = [1u8; 40];
        assert!(matches!(
            blocks_of::<32>(&data, false),
            Err(BlockFileError::Ragged {
                size: 40,
                rest: 8,
                ..
            })
        ));
        let b = blocks_of::<32>(&data, true).unwrap();
        assert_eq!(b.len(), 2);
        assert_eq!(b[1][7], 1);
        assert_eq!(b[1][8], 0);
        assert!(matches!(
            blocks_of::<32>(&[], true),
            Err(BlockFileError::Empty { .. })
        ));
    }

    #[test]
    fn short_files_say_so() {
        let e = blocks_of::<32>(&[], false).unwrap_err().to_string();
        assert!(e.contains("shorter than one 32-byte block"), "{e}");
        let e = blocks_of::<32>(&[7], false).unwrap_err().to_string();
        assert!(
            e.contains("1 byte, shorter than one 32-byte block; pass --pad"),
            "{e}"
        );
        let e = blocks_of::<32>(&[7; 40], false).unwrap_err().to_string();
        assert!(e.contains("not a multiple of the 32-byte block"), "{e}");
    }
}
