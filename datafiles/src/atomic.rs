//! Writing the files the tools make (model sets, reports, charts): each
//! goes to a temporary file beside its target (`.NAME.XXXXXX.tmp`) and is
//! renamed over the target once complete, so an interrupted or failed run
//! leaves the previous file whole, never a half-written one. [`wrote`]
//! prints the line every tool shows for each file it wrote.

use std::io::Write;
use std::path::{Path, PathBuf};

/// A file that could not be written.
#[derive(Debug, thiserror::Error)]
#[error("cannot write {path}: {source}")]
pub struct WriteError {
    pub path: PathBuf,
    #[source]
    pub source: std::io::Error,
}

/// Write `bytes` to `path` (its directory must exist) through a temporary
/// file in the same directory, renamed over `path` when complete. The new
/// file keeps the permissions of the file it replaces (a new one: read and
/// write for the owner, read for the others).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    let err = |source| WriteError {
        path: path.to_path_buf(),
        source,
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(err)?;
    tmp.write_all(bytes).map_err(err)?;
    tmp.as_file().sync_all().map_err(err)?;
    let perms = match std::fs::metadata(path) {
        Ok(m) => Some(m.permissions()),
        Err(_) => default_permissions(),
    };
    if let Some(p) = perms {
        tmp.as_file().set_permissions(p).map_err(err)?;
    }
    tmp.persist(path).map_err(|e| err(e.error))?;
    Ok(())
}

#[cfg(unix)]
fn default_permissions() -> Option<std::fs::Permissions> {
    use std::os::unix::fs::PermissionsExt;
    Some(std::fs::Permissions::from_mode(0o644))
}

#[cfg(not(unix))]
fn default_permissions() -> Option<std::fs::Permissions> {
    None
}

/// The line a tool prints (on stdout) for every file it wrote.
pub fn wrote(path: &Path) {
    println!("wrote {}", path.display());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_the_file_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("a.md");
        write_atomic(&p, b"one").expect("write");
        write_atomic(&p, b"two").expect("rewrite");
        assert_eq!(std::fs::read(&p).expect("read"), b"two");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .expect("list")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("a.md")]);
    }

    #[test]
    fn a_missing_directory_is_an_error_naming_the_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("no/such/a.md");
        let e = write_atomic(&p, b"x").expect_err("no directory");
        assert!(e.to_string().contains("a.md"), "{e}");
    }
}
