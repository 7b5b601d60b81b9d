//! Output files that are never half-written: data goes to a temporary file
//! in the target's directory, renamed over the target only when the
//! command succeeds. On any error (or a panic) the temporary file is
//! removed and the target is untouched, so a failed command leaves nothing
//! behind and a mistaken one cannot destroy its own input. On SIGINT,
//! SIGTERM or SIGHUP the temporary file is removed too
//! ([`crate::interrupt`]).

use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use tempfile::NamedTempFile;

use crate::interrupt::{self, Registered};

/// Where a command writes its output.
pub enum Output {
    Stdout,
    /// A device or FIFO (`/dev/null`, a named pipe): written in place, there
    /// is nothing in it to lose.
    Special(PathBuf),
    File {
        // dropped first: the file is removed, then unregistered
        tmp: NamedTempFile,
        registered: Registered,
        target: PathBuf,
    },
}

/// Whether `a` and `b` name the same file (also through hard or symbolic
/// links).
fn same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (fs::metadata(a), fs::metadata(b)) {
            (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        match (fs::canonicalize(a), fs::canonicalize(b)) {
            (Ok(x), Ok(y)) => x == y,
            _ => false,
        }
    }
}

#[cfg(unix)]
fn is_special(m: &fs::Metadata) -> bool {
    use std::os::unix::fs::FileTypeExt;
    let t = m.file_type();
    t.is_char_device() || t.is_fifo() || t.is_socket() || t.is_block_device()
}

#[cfg(not(unix))]
fn is_special(_: &fs::Metadata) -> bool {
    false
}

impl Output {
    /// Prepare to write `target` (`-` for stdout). `input` is the file the
    /// command reads: writing over it is refused whatever `force` says.
    pub fn create(target: &Path, force: bool, input: Option<&Path>) -> Result<Output> {
        if target.as_os_str() == "-" {
            return Ok(Output::Stdout);
        }
        if let Some(input) = input.filter(|i| i.as_os_str() != "-") {
            if same_file(target, input) {
                bail!(
                    "refusing to write {}: it is the input file {} (the same file{}); choose \
                     another --output",
                    target.display(),
                    input.display(),
                    if target == input {
                        ""
                    } else {
                        ", through a link"
                    }
                );
            }
        }
        // a symbolic link is followed: its target is replaced, not the link
        let target = match fs::symlink_metadata(target) {
            Ok(m) if m.file_type().is_symlink() => fs::canonicalize(target)
                .with_context(|| format!("{} is a dangling symbolic link", target.display()))?,
            _ => target.to_path_buf(),
        };
        match fs::metadata(&target) {
            Ok(m) if m.is_dir() => bail!("{} is a directory", target.display()),
            Ok(m) if is_special(&m) => return Ok(Output::Special(target)),
            Ok(_) if !force => {
                bail!("{} exists; pass --force to overwrite", target.display())
            }
            _ => {}
        }
        let dir = match target.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let name = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let prefix = format!(".{name}.");
        let mut b = tempfile::Builder::new();
        b.prefix(&prefix).suffix(".tmp");
        #[cfg(unix)]
        {
            // as a plain File::create would: 0666 less the umask
            use std::os::unix::fs::PermissionsExt;
            b.permissions(fs::Permissions::from_mode(0o666));
        }
        interrupt::watch().context("cannot watch for interrupts")?;
        // the registry is held from before the file exists until it is
        // registered: an interrupt in between still finds it
        let mut pending = interrupt::pending();
        let tmp = b.tempfile_in(&dir).with_context(|| {
            format!(
                "cannot create a temporary file in {} for {}",
                dir.display(),
                target.display()
            )
        })?;
        let registered = Registered::new(&mut pending, tmp.path());
        drop(pending);
        Ok(Output::File {
            tmp,
            registered,
            target,
        })
    }

    /// A buffered writer to the output.
    pub fn writer(&self) -> Result<Box<dyn Write + Send>> {
        Ok(match self {
            Output::Stdout => Box::new(BufWriter::with_capacity(1 << 20, std::io::stdout())),
            Output::Special(p) => {
                let f = fs::OpenOptions::new()
                    .write(true)
                    .open(p)
                    .with_context(|| format!("cannot open {}", p.display()))?;
                Box::new(BufWriter::with_capacity(1 << 20, f))
            }
            Output::File { tmp, .. } => {
                let f: File = tmp.as_file().try_clone()?;
                Box::new(BufWriter::with_capacity(1 << 20, f))
            }
        })
    }

    /// The command succeeded: move the data into place.
    pub fn commit(self) -> Result<()> {
        if let Output::File {
            tmp,
            registered,
            target,
        } = self
        {
            tmp.as_file()
                .sync_all()
                .with_context(|| format!("writing {}", target.display()))?;
            // an interrupt either removes the temporary file before the
            // rename or finds the output complete
            let mut pending = interrupt::pending();
            let r = tmp.persist(&target);
            registered.release(&mut pending);
            drop(pending);
            r.with_context(|| format!("cannot move the output into {}", target.display()))?;
        }
        Ok(())
    }
}

/// Fail now, before any work, where [`Output::create`] and
/// [`Output::commit`] could not write `target` later: it is a directory
/// or a read-only file, or neither its directory nor the nearest existing
/// directory above it takes a new file. Nothing is created or changed (a
/// probe file is created and removed).
pub fn check_writable(target: &Path) -> Result<()> {
    match fs::metadata(target) {
        Ok(m) if m.is_dir() => bail!("{} is a directory", target.display()),
        Ok(m) if !is_special(&m) && m.permissions().readonly() => {
            bail!("{} is read-only", target.display())
        }
        _ => {}
    }
    let target = fs::canonicalize(target).unwrap_or_else(|_| target.to_path_buf());
    let mut dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    while fs::symlink_metadata(dir).is_err() {
        match dir.parent() {
            Some(d) if !d.as_os_str().is_empty() => dir = d,
            _ => {
                dir = Path::new(".");
                break;
            }
        }
    }
    if !dir.is_dir() {
        bail!(
            "cannot write {}: {} is not a directory",
            target.display(),
            dir.display()
        );
    }
    interrupt::watch().context("cannot watch for interrupts")?;
    let mut pending = interrupt::pending();
    let probe = tempfile::Builder::new()
        .prefix(".mpc-probe.")
        .suffix(".tmp")
        .tempfile_in(dir)
        .with_context(|| {
            format!(
                "cannot write {}: cannot create a file in {}",
                target.display(),
                dir.display()
            )
        })?;
    let registered = Registered::new(&mut pending, probe.path());
    drop(pending);
    drop(probe);
    drop(registered);
    Ok(())
}
