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

const CELL: usize = 14;
const MARGIN: usize = 22;
const BAR_W: usize = 16;
const BAR_GAP: usize = 14;

/// 3x5 bitmaps of the digits 0-9 and '.', rows top-down, 3 bits each.
const FONT: [[u8; 5]; 11] = [
    [7, 5, 5, 5, 7],
    [2, 6, 2, 2, 7],
    [7, 1, 7, 4, 7],
    [7, 1, 7, 1, 7],
    [5, 5, 7, 1, 1],
    [7, 4, 7, 1, 7],
    [7, 4, 7, 5, 7],
    [7, 1, 1, 1, 1],
    [7, 5, 7, 5, 7],
    [7, 5, 7, 1, 7],
    [0, 0, 0, 0, 2],
];

struct Canvas {
    w: usize,
    h: usize,
    px: Vec<u8>,
}

impl Canvas {
    fn new(w: usize, h: usize) -> Canvas {
        Canvas {
            w,
            h,
            px: vec![255; w * h * 3],
        }
    }

    fn rect(&mut self, x: usize, y: usize, w: usize, h: usize, c: [u8; 3]) {
        for yy in y..(y + h).min(self.h) {
            for xx in x..(x + w).min(self.w) {
                let o = (yy * self.w + xx) * 3;
                self.px[o..o + 3].copy_from_slice(&c);
            }
        }
    }

    /// Text of digits and '.', scale 2 (6x10 px glyphs, 8 px advance).
    fn text(&mut self, x: usize, y: usize, s: &str) {
        for (k, ch) in s.chars().enumerate() {
            let g = match ch {
                '0'..='9' => FONT[ch as usize - '0' as usize],
                '.' => FONT[10],
                _ => continue,
            };
            for (r, bits) in g.iter().enumerate() {
                for col in 0..3 {
                    if (bits >> (2 - col)) & 1 == 1 {
                        self.rect(x + k * 8 + col * 2, y + r * 2, 2, 2, [0, 0, 0]);
                    }
                }
            }
        }
    }
}

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
    let mut out = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut out, w as u32, h as u32);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        // Writing into a Vec cannot fail for a well-formed image.
        if let Ok(mut wr) = enc.write_header() {
            let _ = wr.write_image_data(&cv.px);
        }
    }
    out
}

/// Write the heatmap to `path`.
pub fn write_re_heatmap(stats: &ReStats, n: usize, path: &std::path::Path) -> std::io::Result<()> {
    let mut f = std::fs::File::create(path)?;
    f.write_all(&re_heatmap_png(stats, n))
}
