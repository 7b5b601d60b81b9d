//! A counting global allocator: live bytes, the peak during one input, and
//! a hard cap above which allocations are refused.
//!
//! The `fuzz` binary installs [`CountingAlloc`] as its `#[global_allocator]`.
//! Between [`begin_input`] and [`end_input`] every allocation is counted
//! against the live bytes at the start of the input:
//!
//! * the first time the input goes over the soft limit (`--max-peak-mib`),
//!   the allocating call stack is captured, so the finding names where the
//!   memory went;
//! * an allocation that would take the input over the hard cap is refused
//!   (null is returned, so the standard library aborts the process with
//!   "memory allocation of N bytes failed"); before that the call stack is
//!   written to stderr on one line starting with [`REFUSED_TAG`], which the
//!   supervising process turns into a finding. Refusing keeps a crafted
//!   137 GB request from taking the machine down.
//!
//! Allocations made while a call stack is being captured (symbolising it
//! loads debug information) are not counted, refused or captured.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering::Relaxed};
use std::sync::Mutex;

/// First word of the stderr line written before a refused allocation.
pub const REFUSED_TAG: &str = "fuzz-alloc-refused:";

static LIVE: AtomicI64 = AtomicI64::new(0);
static PEAK: AtomicI64 = AtomicI64::new(0);
static BASE: AtomicI64 = AtomicI64::new(0);
static SOFT: AtomicI64 = AtomicI64::new(i64::MAX);
static HARD: AtomicI64 = AtomicI64::new(i64::MAX);
static ARMED: AtomicBool = AtomicBool::new(false);
static SOFT_SEEN: AtomicBool = AtomicBool::new(false);
static SITE: Mutex<Option<String>> = Mutex::new(None);
/// The first refused allocation of the input: its site and a description.
static REFUSED: Mutex<Option<(String, String)>> = Mutex::new(None);
/// Call stacks being captured right now (any thread), and the time spent
/// capturing during the current input: the wall-time limit leaves it out.
static CAPTURES_NOW: AtomicI64 = AtomicI64::new(0);
static CAPTURE_MICROS: AtomicI64 = AtomicI64::new(0);

thread_local! {
    static CAPTURING: Cell<bool> = const { Cell::new(false) };
}

/// The counting allocator (a thin layer over the system allocator).
pub struct CountingAlloc;

fn capturing() -> bool {
    CAPTURING.with(|c| c.get())
}

/// Where the current thread is: the innermost frames of the workspace's
/// own crates, `fn (file:line)` joined by ` <- `.
fn call_site() -> String {
    CAPTURING.with(|c| c.set(true));
    CAPTURES_NOW.fetch_add(1, Relaxed);
    let t = std::time::Instant::now();
    let bt = std::backtrace::Backtrace::force_capture().to_string();
    let site = summarize_backtrace(&bt);
    CAPTURE_MICROS.fetch_add(t.elapsed().as_micros() as i64, Relaxed);
    CAPTURES_NOW.fetch_sub(1, Relaxed);
    CAPTURING.with(|c| c.set(false));
    site
}

/// Whether a call stack is being captured now (the watchdog waits).
pub fn capturing_now() -> bool {
    CAPTURES_NOW.load(Relaxed) > 0
}

/// Microseconds spent capturing call stacks during the current input.
pub fn capture_micros() -> u64 {
    CAPTURE_MICROS.load(Relaxed).max(0) as u64
}

/// The crates whose readers the fuzzer drives: their frames name an
/// allocation site.
const LIBRARY_CRATES: [&str; 2] = ["golden", "bulk"];

/// The first three frames of [`LIBRARY_CRATES`] (or, failing that, of this
/// crate's targets) in a `std::backtrace::Backtrace` rendering.
pub fn summarize_backtrace(bt: &str) -> String {
    let mut frames: Vec<(String, String)> = Vec::new();
    let mut lines = bt.lines().peekable();
    while let Some(l) = lines.next() {
        let t = l.trim_start();
        let Some((num, name)) = t.split_once(": ") else {
            continue;
        };
        if num.is_empty() || !num.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let at = match lines.peek() {
            Some(n) if n.trim_start().starts_with("at ") => {
                let loc = n.trim_start().trim_start_matches("at ").to_string();
                lines.next();
                loc
            }
            _ => String::new(),
        };
        frames.push((strip_hash(name.trim()), at));
    }
    let pick = |crates: &[&str]| -> Vec<String> {
        frames
            .iter()
            .filter(|(n, _)| {
                crates.iter().any(|c| n.starts_with(&format!("{c}::")))
                    && !n.starts_with("mpcgen_fuzz::alloc::")
                    && !n.starts_with("mpcgen_fuzz::harness::")
            })
            .take(3)
            .map(|(n, at)| {
                // the path from the crate's directory on
                let file = LIBRARY_CRATES
                    .iter()
                    .find_map(|c| {
                        at.rsplit_once(&format!("/{c}/src/"))
                            .map(|(_, f)| format!("{c}/src/{f}"))
                    })
                    .unwrap_or_else(|| at.rsplit('/').next().unwrap_or("").to_string());
                format!("{n} ({file})")
            })
            .collect()
    };
    let mut v = pick(&LIBRARY_CRATES);
    if v.is_empty() {
        v = pick(&["mpcgen_fuzz"]);
    }
    if v.is_empty() {
        "unknown site".into()
    } else {
        v.join(" <- ")
    }
}

fn strip_hash(name: &str) -> String {
    match name.rsplit_once("::h") {
        Some((head, h)) if h.len() == 16 && h.bytes().all(|b| b.is_ascii_hexdigit()) => {
            head.to_string()
        }
        _ => name.to_string(),
    }
}

/// The function part of a site summary (`golden::a::b`), used as a
/// finding class.
pub fn site_function(site: &str) -> &str {
    site.split(" (").next().unwrap_or(site)
}

impl CountingAlloc {
    /// Count `n` more bytes; false when the allocation must be refused.
    #[inline]
    fn admit(&self, n: usize) -> bool {
        if capturing() {
            return true;
        }
        let n = n as i64;
        let new = LIVE.fetch_add(n, Relaxed) + n;
        if !ARMED.load(Relaxed) {
            return true;
        }
        let over = new - BASE.load(Relaxed);
        if over > HARD.load(Relaxed) {
            LIVE.fetch_sub(n, Relaxed);
            // nothing more is counted or refused in this input (the
            // standard library's out-of-memory report allocates too)
            ARMED.store(false, Relaxed);
            let site = call_site();
            let hard = HARD.load(Relaxed);
            let what = format!(
                "{n} bytes with {} bytes live for this input, over the {hard}-byte cap, at {site}",
                over - n
            );
            let mut e = std::io::stderr().lock();
            let _ = writeln!(e, "{REFUSED_TAG} {what}");
            if let Ok(mut r) = REFUSED.lock() {
                r.get_or_insert((site, what));
            }
            return false;
        }
        PEAK.fetch_max(new, Relaxed);
        if over > SOFT.load(Relaxed) && !SOFT_SEEN.swap(true, Relaxed) {
            let site = call_site();
            if let Ok(mut s) = SITE.lock() {
                *s = Some(site);
            }
        }
        true
    }
}

// SAFETY: every call is forwarded to `System` with the same layout; the
// counters are only bookkeeping.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if !self.admit(layout.size()) {
            return std::ptr::null_mut();
        }
        let p = System.alloc(layout);
        if p.is_null() && !capturing() {
            LIVE.fetch_sub(layout.size() as i64, Relaxed);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if !self.admit(layout.size()) {
            return std::ptr::null_mut();
        }
        let p = System.alloc_zeroed(layout);
        if p.is_null() && !capturing() {
            LIVE.fetch_sub(layout.size() as i64, Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout);
        if !capturing() {
            LIVE.fetch_sub(layout.size() as i64, Relaxed);
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if capturing() {
            return System.realloc(ptr, layout, new_size);
        }
        let old = layout.size();
        if new_size > old {
            if !self.admit(new_size - old) {
                return std::ptr::null_mut();
            }
        } else {
            LIVE.fetch_sub((old - new_size) as i64, Relaxed);
        }
        let p = System.realloc(ptr, layout, new_size);
        if p.is_null() {
            // the old block stays allocated
            LIVE.fetch_add(old as i64 - new_size as i64, Relaxed);
        }
        p
    }
}

/// Start counting one input: `soft` bytes are the reported limit, more
/// than `hard` bytes are refused.
pub fn begin_input(soft: u64, hard: u64) {
    let live = LIVE.load(Relaxed);
    BASE.store(live, Relaxed);
    PEAK.store(live, Relaxed);
    SOFT.store(soft.min(i64::MAX as u64) as i64, Relaxed);
    HARD.store(hard.min(i64::MAX as u64) as i64, Relaxed);
    SOFT_SEEN.store(false, Relaxed);
    CAPTURE_MICROS.store(0, Relaxed);
    if let Ok(mut s) = SITE.lock() {
        *s = None;
    }
    if let Ok(mut r) = REFUSED.lock() {
        *r = None;
    }
    ARMED.store(true, Relaxed);
}

/// What one input used.
#[derive(Clone, Debug, Default)]
pub struct InputMemory {
    /// Peak live bytes above the live bytes at the start of the input.
    pub peak: u64,
    /// Call stack of the allocation that first went over the soft limit.
    pub site: Option<String>,
    /// A refused allocation the code survived (it handled the failure):
    /// its call stack and a description.
    pub refused: Option<(String, String)>,
}

/// Stop counting; the input's peak and where it went over the limit.
pub fn end_input() -> InputMemory {
    ARMED.store(false, Relaxed);
    let peak = (PEAK.load(Relaxed) - BASE.load(Relaxed)).max(0) as u64;
    let site = SITE.lock().ok().and_then(|mut s| s.take());
    let refused = REFUSED.lock().ok().and_then(|mut r| r.take());
    InputMemory {
        peak,
        site,
        refused,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backtrace_summary_keeps_library_frames() {
        let bt = "   0: std::backtrace::Backtrace::force_capture\n             at /rustc/x/library/std/src/backtrace.rs:312:13\n   1: bulk::stream::decode_slot::h0123456789abcdef\n             at /work/x/bulk/src/stream.rs:440:5\n   2: mpcgen_fuzz::harness::run\n";
        assert_eq!(
            summarize_backtrace(bt),
            "bulk::stream::decode_slot (bulk/src/stream.rs:440:5)"
        );
        assert_eq!(
            site_function(&summarize_backtrace(bt)),
            "bulk::stream::decode_slot"
        );
        assert_eq!(summarize_backtrace("nothing"), "unknown site");
    }
}
