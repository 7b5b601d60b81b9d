//! RE matrix heatmaps as PNG, like the paper's Fig. 2: bright = low ratio
//! entropy (strongly correlated pair), dark = high. Drawn directly with the
//! `png` encoder and a built-in 3x5 digit font, so no system fonts are needed
//! and the output is byte-for-byte reproducible.
//!
//! Layout: row `i`, column `j` is RE(i, j) (byte i predicted from base j);
//! byte numbers label the rows (left) and columns (top); the colour bar on
//! the right spans 0 .. log2(18) bits (the largest possible RE), the same
//! scale for every group; the diagonal is grey.

use std::io::Write;

use super::re::{ReStats, RE_BINS};
use crate::canvas::Canvas;

const CELL: usize = 14;
const MARGIN: usize = 22;
const BAR_W: usize = 16;
const BAR_GAP: usize = 14;

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

/// PNG bytes of the heatmap of the first `n` byte positions (n <= 32).
pub fn re_heatmap_png(stats: &ReStats, n: usize) -> Vec<u8> {
    let n = n.min(stats.re.len());
    let max = (RE_BINS as f64).log2();
    let grid = n * CELL;
    let w = MARGIN + grid + BAR_GAP + BAR_W + 4 + 4 * 8;
    let h = MARGIN + grid + 4;
    let mut cv = Canvas::new(w, h);
    for i in 0..n {
        let label = i.to_string();
        cv.text(2, MARGIN + i * CELL + 2, &label);
        if i % 2 == 0 || n <= 16 {
            let lx = MARGIN + i * CELL + (CELL.saturating_sub(label.len() * 8)) / 2;
            cv.text(lx, 4, &label);
        }
        for j in 0..n {
            let c = if i == j {
                [160, 160, 160]
            } else {
                colour(stats.re[i][j] / max)
            };
            cv.rect(MARGIN + j * CELL, MARGIN + i * CELL, CELL - 1, CELL - 1, c);
        }
    }
    let bx = MARGIN + grid + BAR_GAP;
    for y in 0..grid {
        cv.rect(bx, MARGIN + y, BAR_W, 1, colour(y as f64 / grid as f64));
    }
    cv.text(bx + BAR_W + 4, MARGIN, "0");
    cv.text(
        bx + BAR_W + 4,
        MARGIN + grid / 2 - 5,
        &format!("{:.1}", max / 2.0),
    );
    cv.text(bx + BAR_W + 4, MARGIN + grid - 10, &format!("{max:.1}"));
    cv.png()
}

/// Write the heatmap to `path`.
pub fn write_re_heatmap(stats: &ReStats, n: usize, path: &std::path::Path) -> std::io::Result<()> {
    let mut f = std::fs::File::create(path)?;
    f.write_all(&re_heatmap_png(stats, n))
}
