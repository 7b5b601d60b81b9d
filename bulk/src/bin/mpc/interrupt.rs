//! Temporary output files removed when the command is interrupted.
//!
//! An output file is written to a temporary file beside its target
//! ([`crate::output`]). Its path is registered here while it exists; on
//! SIGINT, SIGTERM or SIGHUP a watcher thread removes every registered file
//! and then ends the process as the signal would have (so a shell sees
//! "killed by SIGINT", exit status 130, 143 or 129). SIGKILL cannot be
//! caught: a `kill -9` can still leave a temporary file behind.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

/// The temporary files that exist now.
static PENDING: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// The registry, also after a panic elsewhere (a list of paths cannot be
/// left inconsistent).
pub fn pending() -> MutexGuard<'static, Vec<PathBuf>> {
    PENDING.lock().unwrap_or_else(|e| e.into_inner())
}

/// Start the watcher (once). Called before the first temporary file is
/// created, so that none exists without it. A signal this process was
/// started ignoring (`nohup` ignores SIGHUP; a shell ignores SIGINT in
/// background jobs) stays ignored.
#[cfg(unix)]
pub fn watch() -> std::io::Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    use std::sync::OnceLock;

    static STARTED: OnceLock<Result<(), String>> = OnceLock::new();
    let started = STARTED.get_or_init(|| {
        let wanted: Vec<i32> = [SIGINT, SIGTERM, SIGHUP]
            .into_iter()
            .filter(|&s| !ignored(s))
            .collect();
        let mut signals = signal_hook::iterator::Signals::new(wanted).map_err(|e| e.to_string())?;
        std::thread::Builder::new()
            .name("interrupt".into())
            .spawn(move || {
                if let Some(sig) = signals.forever().next() {
                    // held until the process ends: no temporary file is
                    // renamed into place or registered after this point
                    let files = pending();
                    for f in files.iter() {
                        let _ = std::fs::remove_file(f);
                    }
                    let _ = signal_hook::low_level::emulate_default_handler(sig);
                    std::process::exit(128 + sig);
                }
            })
            .map(|_| ())
            .map_err(|e| e.to_string())
    });
    started.clone().map_err(std::io::Error::other)
}

/// Whether `sig` is ignored (inherited from the parent).
#[cfg(unix)]
fn ignored(sig: i32) -> bool {
    let mut old = std::mem::MaybeUninit::<libc::sigaction>::zeroed();
    // SAFETY: sigaction(2) with a null new action only reads the current
    // one into `old`, a zeroed sigaction of the right type.
    let r = unsafe { libc::sigaction(sig, std::ptr::null(), old.as_mut_ptr()) };
    // SAFETY: zeroed is a valid sigaction (plain integers and a mask), and
    // a successful call filled it in.
    r == 0 && unsafe { old.assume_init() }.sa_sigaction == libc::SIG_IGN
}

#[cfg(not(unix))]
pub fn watch() -> std::io::Result<()> {
    Ok(())
}

/// A registered temporary file: unregistered when dropped.
pub struct Registered(Option<PathBuf>);

impl Registered {
    /// Register `path`; the caller holds the registry (`files`) from before
    /// the file is created until here.
    pub fn new(files: &mut Vec<PathBuf>, path: &Path) -> Registered {
        files.push(path.to_path_buf());
        Registered(Some(path.to_path_buf()))
    }

    /// Unregister with the registry already held (while the file is
    /// renamed into place).
    pub fn release(mut self, files: &mut Vec<PathBuf>) {
        if let Some(p) = self.0.take() {
            files.retain(|q| *q != p);
        }
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        if let Some(p) = self.0.take() {
            pending().retain(|q| *q != p);
        }
    }
}
