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
    #[error("{path}: file is empty; there are no {block}-byte blocks to compress")]
    Empty { path: PathBuf, block: usize },
    #[error(
        "{path}: size {size} bytes is not a multiple of the {block}-byte block \
         ({rest} bytes left over); pass --pad to zero-pad the last block"
    )]
    Ragged {
        path: PathBuf,
        size: usize,
        block: usize,
        rest: usize,
    },
    #[error(transparent)]
    Npy(#[from] crate::npy::NpyError),
}

/// Read a whole file as `N`-byte blocks: a raw dump, or a `.npy` array's
/// bytes in C order ([`crate::npy`]). With `pad`, a short last block is
/// zero-padded; without it a ragged size is an error.
pub fn read_blocks<const N: usize>(path: &Path, pad: bool) -> Result<Vec<[u8; N]>, BlockFileError> {
    let file = std::fs::read(path).map_err(|source| BlockFileError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let data = crate::npy::data_of(file, path)?;
    blocks_of(&data, pad).map_err(|e| match e {
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
    })
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
}
