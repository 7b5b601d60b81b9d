//! RE matrix heatmaps as PNG, like the paper's Fig. 2: bright = low ratio
//! entropy (strongly correlated pair), dark = high; drawn by
//! [`crate::plot`] (reproducible, embedded font).
//!
//! Layout: row `i` (top to bottom), column `j` is RE(i, j) (byte i
//! predicted from base j); the colour bar on the right spans 0 .. log2(18)
//! bits (the largest possible RE), the same scale for every group; the
//! diagonal is grey.

use super::re::{ReStats, RE_BINS};
use crate::plot::{heatmap_png, Heatmap, PlotError};

/// Colour of t in 0..1 on an inferno-like scale, bright at 0.
pub fn colour(t: f64) -> [u8; 3] {
    const STOPS: [[f64; 3]; 5] = [
        [252.0, 255.0, 164.0],
        [249.0, 142.0, 9.0],
        [188.0, 55.0, 84.0],
        [87.0, 16.0, 110.0],
        [0.0, 0.0, 4.0],
    ];
    let t = t.clamp(0.0, 1.0) * 4.0;
    let k = (t.floor() as usize).min(3);
    let f = t - k as f64;
    std::array::from_fn(|c| (STOPS[k][c] * (1.0 - f) + STOPS[k + 1][c] * f).round() as u8)
}

/// PNG bytes of the heatmap of the first `n` byte positions (n <= 32) of
/// the predictor named `name`.
pub fn re_heatmap_png(stats: &ReStats, n: usize, name: &str) -> Result<Vec<u8>, PlotError> {
    let n = n.min(stats.re.len());
    let values: Vec<Vec<f64>> = stats.re[..n].iter().map(|r| r[..n].to_vec()).collect();
    heatmap_png(&Heatmap {
        title: &format!("Ratio entropy RE(i, j), predictor {name} (bright = predictable)"),
        x_desc: "base byte j",
        y_desc: "predicted byte i",
        value_desc: "ratio entropy (bits)",
        values: &values,
        max: (RE_BINS as f64).log2(),
        grey_diagonal: true,
        colour,
    })
}

/// Write the heatmap of predictor `name` to `path`.
pub fn write_re_heatmap(
    stats: &ReStats,
    n: usize,
    name: &str,
    path: &std::path::Path,
) -> Result<(), PlotError> {
    let png = re_heatmap_png(stats, n, name)?;
    datafiles::atomic::write_atomic(path, &png).map_err(|e| PlotError::Io {
        path: e.path,
        source: e.source,
    })
}
