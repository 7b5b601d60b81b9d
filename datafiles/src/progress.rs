//! The progress display every long-running command shows on stderr.
//!
//! On a terminal: an `indicatif` bar (or spinner) redrawn in place. When
//! stderr is not a terminal (a CI log, `nohup`, a pipe): plain lines, one
//! every [`plain_interval`] at most (default 5 s; the environment variable
//! `MPCGEN_PROGRESS_SECONDS` sets another, 0 for every update), e.g.
//! `cosim verilator compressor: 40000/100000 blocks (40%), eta 25s`.
//! A run shorter than the interval prints no progress line at all.
//!
//! Every bar is an `indicatif::ProgressBar`, so callers use its methods
//! (`inc`, `set_position`, `set_message`, `finish_and_clear`) either way.

use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle, TermLike};

/// The environment variable that sets the seconds between plain progress
/// lines (a whole or decimal number; 0 prints every update).
pub const INTERVAL_ENV: &str = "MPCGEN_PROGRESS_SECONDS";

/// Seconds between plain progress lines when [`INTERVAL_ENV`] is not set.
pub const DEFAULT_INTERVAL_SECONDS: f64 = 5.0;

/// The time between two plain progress lines: [`INTERVAL_ENV`] when it
/// holds a number of seconds (0 or more), else [`DEFAULT_INTERVAL_SECONDS`].
pub fn plain_interval() -> Duration {
    let secs = std::env::var(INTERVAL_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .unwrap_or(DEFAULT_INTERVAL_SECONDS);
    Duration::from_secs_f64(secs)
}

/// Whether progress is drawn as a bar (stderr is a terminal) rather than
/// as plain lines.
pub fn interactive() -> bool {
    std::io::stderr().is_terminal()
}

/// A bar of `len` steps counted in `unit` (e.g. "blocks", "sets"), with
/// the elapsed time, rate and remaining time; `label` names what is being
/// done (a file, a unit). Plain lines read `LABEL: POS/LEN UNIT (P%), eta
/// T`.
pub fn bar(len: u64, unit: &str, label: &str) -> ProgressBar {
    let pb = ProgressBar::new(len);
    if interactive() {
        pb.set_style(style(&format!(
            "{{msg:>20}} [{{bar:36}}] {{pos}}/{{len}} {unit} {{per_sec}} eta {{eta}}"
        )));
    } else {
        pb.set_style(style(&format!(
            "{{msg}}: {{pos}}/{{len}} {unit} ({{percent}}%), eta {{eta}}"
        )));
        pb.set_draw_target(plain_target());
    }
    pb.set_message(label.to_string());
    pb
}

/// The same for a byte count (streams: rates in MiB/s).
pub fn bytes_bar(len: Option<u64>, label: &str) -> ProgressBar {
    let pb = match len {
        Some(l) => ProgressBar::new(l),
        None => ProgressBar::new_spinner(),
    };
    if interactive() {
        pb.set_style(style(
            "{msg:>20} [{bar:36}] {bytes}/{total_bytes} {binary_bytes_per_sec} eta {eta}",
        ));
    } else {
        pb.set_style(style(if len.is_some() {
            "{msg}: {bytes}/{total_bytes} ({percent}%), {binary_bytes_per_sec}, eta {eta}"
        } else {
            "{msg}: {bytes}, {binary_bytes_per_sec}"
        }));
        pb.set_draw_target(plain_target());
    }
    pb.set_message(label.to_string());
    pb
}

/// A spinner for work without a count (a subprocess, loading): `label`
/// and the elapsed time, redrawn by its own thread until finished. Plain
/// lines read `LABEL: running for T`.
pub fn spinner(label: &str) -> ProgressBar {
    let pb = ProgressBar::new_spinner();
    if interactive() {
        pb.set_style(
            ProgressStyle::with_template("{spinner} {msg} ({elapsed})")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
    } else {
        pb.set_style(
            ProgressStyle::with_template("{msg}: running for {elapsed}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        pb.set_draw_target(plain_target());
    }
    pb.set_message(label.to_string());
    pb.enable_steady_tick(Duration::from_millis(200));
    pb
}

/// A draw target that writes whole plain lines to stderr, at most one per
/// [`plain_interval`].
fn plain_target() -> ProgressDrawTarget {
    ProgressDrawTarget::term_like_with_hz(Box::new(PlainLines::new(plain_interval())), 4)
}

fn style(template: &str) -> ProgressStyle {
    // The templates are constants of this module; the default bar is only
    // a fallback should one fail to parse.
    ProgressStyle::with_template(template)
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ")
}

/// A terminal stand-in for `indicatif` that ignores cursor movement and
/// collects each drawn frame into one line, printed to stderr when
/// `interval` has passed since the last printed line (or since the bar
/// was made).
#[derive(Debug)]
struct PlainLines {
    interval: Duration,
    state: Mutex<PlainState>,
}

#[derive(Debug)]
struct PlainState {
    /// The frame being drawn.
    buf: String,
    /// When the last line was printed (at first: when the bar was made).
    last: Instant,
    /// Whether a line was printed yet.
    printed: bool,
}

impl PlainLines {
    fn new(interval: Duration) -> PlainLines {
        PlainLines {
            interval,
            state: Mutex::new(PlainState {
                buf: String::new(),
                last: Instant::now(),
                printed: false,
            }),
        }
    }

    fn with_state<T>(&self, f: impl FnOnce(&mut PlainState) -> T) -> T {
        let mut guard = match self.state.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        f(&mut guard)
    }
}

impl TermLike for PlainLines {
    fn width(&self) -> u16 {
        // wide enough that no frame is wrapped or cut
        400
    }

    fn move_cursor_up(&self, _: usize) -> std::io::Result<()> {
        Ok(())
    }

    fn move_cursor_down(&self, _: usize) -> std::io::Result<()> {
        Ok(())
    }

    fn move_cursor_right(&self, _: usize) -> std::io::Result<()> {
        Ok(())
    }

    fn move_cursor_left(&self, _: usize) -> std::io::Result<()> {
        Ok(())
    }

    fn write_line(&self, s: &str) -> std::io::Result<()> {
        self.with_state(|st| {
            if !st.buf.is_empty() && !s.is_empty() {
                st.buf.push_str("; ");
            }
            st.buf.push_str(s);
        });
        Ok(())
    }

    fn write_str(&self, s: &str) -> std::io::Result<()> {
        self.with_state(|st| st.buf.push_str(s));
        Ok(())
    }

    fn clear_line(&self) -> std::io::Result<()> {
        Ok(())
    }

    fn flush(&self) -> std::io::Result<()> {
        let line = self.with_state(|st| {
            let frame = std::mem::take(&mut st.buf);
            let frame = frame.trim();
            let now = Instant::now();
            if frame.is_empty() || now.duration_since(st.last) < self.interval {
                return None;
            }
            st.last = now;
            st.printed = true;
            Some(frame.trim_start_matches("; ").to_string())
        });
        if let Some(line) = line {
            let mut err = std::io::stderr().lock();
            // progress is best effort: a closed stderr must not stop the work
            let _ = writeln!(err, "{line}");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_lines_wait_for_the_interval() {
        let p = PlainLines::new(Duration::from_secs(3600));
        p.write_str("x: 1/2").expect("write");
        p.flush().expect("flush");
        assert!(!p.with_state(|s| s.printed), "printed before the interval");
        let q = PlainLines::new(Duration::ZERO);
        q.write_str("x: 1/2   ").expect("write");
        q.flush().expect("flush");
        assert!(q.with_state(|s| s.printed && s.buf.is_empty()));
    }

    #[test]
    fn an_empty_frame_prints_nothing() {
        let q = PlainLines::new(Duration::ZERO);
        q.write_str("    ").expect("write");
        q.flush().expect("flush");
        assert!(!q.with_state(|s| s.printed));
    }
}
