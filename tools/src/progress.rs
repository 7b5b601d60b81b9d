//! The progress bar every long-running command shows (on stderr; hidden
//! when stderr is not a terminal, as `indicatif` does).

use indicatif::{ProgressBar, ProgressStyle};

/// A bar of `len` steps counted in `unit` (e.g. "blocks", "sets"), with
/// the elapsed time, rate and remaining time; `label` names what is being
/// done (a file, a unit).
pub fn bar(len: u64, unit: &str, label: &str) -> ProgressBar {
    let pb = ProgressBar::new(len);
    pb.set_style(style(&format!(
        "{{msg:>20}} [{{bar:36}}] {{pos}}/{{len}} {unit} {{per_sec}} eta {{eta}}"
    )));
    pb.set_message(label.to_string());
    pb
}

/// The same for a byte count (streams: rates in MiB/s).
pub fn bytes_bar(len: Option<u64>, label: &str) -> ProgressBar {
    let pb = match len {
        Some(l) => ProgressBar::new(l),
        None => ProgressBar::new_spinner(),
    };
    pb.set_style(style(
        "{msg:>20} [{bar:36}] {bytes}/{total_bytes} {binary_bytes_per_sec} eta {eta}",
    ));
    pb.set_message(label.to_string());
    pb
}

fn style(template: &str) -> ProgressStyle {
    // The templates are constants of this module; the default bar is only
    // a fallback should one fail to parse.
    ProgressStyle::with_template(template)
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ")
}
