//! A bar chart of compression ratios per algorithm (like the paper's
//! Fig. 5), drawn directly with the `png` encoder and a built-in 3x5 font
//! (as `crate::train::heatmap`), so no system fonts are needed and the
//! output is byte-for-byte reproducible.

use std::io::Write;

/// One group of bars: a label, its bar values, and an optional marker (the
/// paper's value) drawn as a black line across the group.
pub struct BarGroup {
    pub label: String,
    pub values: Vec<f64>,
    pub marker: Option<f64>,
}

/// Series colours (overall, int, fp, unseen, ...).
pub const COLOURS: [[u8; 3]; 5] = [
    [31, 119, 180],
    [255, 127, 14],
    [44, 160, 44],
    [148, 103, 189],
    [140, 86, 75],
];

/// 3x5 glyphs, rows top-down, 3 bits each (MSB left).
fn glyph(c: char) -> [u8; 5] {
    match c.to_ascii_uppercase() {
        '0' => [7, 5, 5, 5, 7],
        '1' => [2, 6, 2, 2, 7],
        '2' => [7, 1, 7, 4, 7],
        '3' => [7, 1, 7, 1, 7],
        '4' => [5, 5, 7, 1, 1],
        '5' => [7, 4, 7, 1, 7],
        '6' => [7, 4, 7, 5, 7],
        '7' => [7, 1, 1, 1, 1],
        '8' => [7, 5, 7, 5, 7],
        '9' => [7, 5, 7, 1, 7],
        '.' => [0, 0, 0, 0, 2],
        'A' => [2, 5, 7, 5, 5],
        'B' => [6, 5, 6, 5, 6],
        'C' => [3, 4, 4, 4, 3],
        'D' => [6, 5, 5, 5, 6],
        'E' => [7, 4, 6, 4, 7],
        'F' => [7, 4, 6, 4, 4],
        'G' => [3, 4, 5, 5, 3],
        'H' => [5, 5, 7, 5, 5],
        'I' => [7, 2, 2, 2, 7],
        'J' => [1, 1, 1, 5, 2],
        'K' => [5, 5, 6, 5, 5],
        'L' => [4, 4, 4, 4, 7],
        'M' => [5, 7, 7, 5, 5],
        'N' => [6, 5, 5, 5, 5],
        'O' => [2, 5, 5, 5, 2],
        'P' => [6, 5, 6, 4, 4],
        'Q' => [2, 5, 5, 6, 3],
        'R' => [6, 5, 6, 5, 5],
        'S' => [3, 4, 2, 1, 6],
        'T' => [7, 2, 2, 2, 2],
        'U' => [5, 5, 5, 5, 7],
        'V' => [5, 5, 5, 5, 2],
        'W' => [5, 5, 7, 7, 5],
        'X' => [5, 5, 2, 5, 5],
        'Y' => [5, 5, 2, 2, 2],
        'Z' => [7, 1, 2, 4, 7],
        '-' => [0, 0, 7, 0, 0],
        '(' => [1, 2, 2, 2, 1],
        ')' => [4, 2, 2, 2, 4],
        '/' => [1, 1, 2, 4, 4],
        ':' => [0, 2, 0, 2, 0],
        '+' => [0, 2, 7, 2, 0],
        '_' => [0, 0, 0, 0, 7],
        _ => [0, 0, 0, 0, 0],
    }
}

struct Canvas {
    w: usize,
    h: usize,
    px: Vec<u8>,
}

impl Canvas {
    fn rect(&mut self, x: usize, y: usize, w: usize, h: usize, c: [u8; 3]) {
        for yy in y..(y + h).min(self.h) {
            for xx in x..(x + w).min(self.w) {
                let o = (yy * self.w + xx) * 3;
                self.px[o..o + 3].copy_from_slice(&c);
            }
        }
    }

    /// Text at scale 2 (6x10 px glyphs, 8 px advance).
    fn text(&mut self, x: usize, y: usize, s: &str) {
        for (k, ch) in s.chars().enumerate() {
            for (r, bits) in glyph(ch).iter().enumerate() {
                for col in 0..3 {
                    if (bits >> (2 - col)) & 1 == 1 {
                        self.rect(x + k * 8 + col * 2, y + r * 2, 2, 2, [0, 0, 0]);
                    }
                }
            }
        }
    }
}

/// Width of `s` in pixels at scale 2.
fn text_w(s: &str) -> usize {
    s.chars().count() * 8
}

/// Draw grouped bars; `series` names the bars of each group (legend).
pub fn bar_chart_png(title: &str, series: &[&str], groups: &[BarGroup]) -> Vec<u8> {
    let nser = series.len().max(1);
    let bar_w = 16;
    let label_w = groups.iter().map(|g| text_w(&g.label)).max().unwrap_or(0);
    let group_w = (nser * bar_w + 24).max(label_w + 12);
    let left = 50;
    let top = 60;
    let plot_h = 360;
    let w = left + groups.len() * group_w + 20;
    let h = top + plot_h + 50;
    let mut c = Canvas {
        w,
        h,
        px: vec![255; w * h * 3],
    };
    let max = groups
        .iter()
        .flat_map(|g| g.values.iter().copied().chain(g.marker))
        .fold(1.0f64, f64::max);
    let ymax = (max * 2.0).ceil() / 2.0;
    let y_of = |v: f64| top + plot_h - ((v / ymax) * plot_h as f64).round() as usize;
    // Title and legend.
    c.text(left, 8, title);
    let mut lx = left;
    for (k, s) in series.iter().enumerate() {
        c.rect(lx, 30, 12, 10, COLOURS[k % COLOURS.len()]);
        c.text(lx + 16, 30, s);
        lx += 16 + text_w(s) + 20;
    }
    c.rect(lx, 34, 16, 2, [0, 0, 0]);
    c.text(lx + 20, 30, "PAPER");
    // Grid every 0.5, the 1.0 line darker.
    let mut v = 0.0;
    while v <= ymax + 1e-9 {
        let y = y_of(v);
        let shade = if (v - 1.0).abs() < 1e-9 { 120 } else { 220 };
        c.rect(left, y, w - left - 10, 1, [shade; 3]);
        c.text(4, y.saturating_sub(5), &format!("{v:.1}"));
        v += 0.5;
    }
    for (gi, g) in groups.iter().enumerate() {
        let gx = left + gi * group_w + 12;
        for (k, &val) in g.values.iter().enumerate() {
            let y = y_of(val.max(0.0));
            c.rect(
                gx + k * bar_w,
                y,
                bar_w - 2,
                top + plot_h - y,
                COLOURS[k % COLOURS.len()],
            );
        }
        if let Some(m) = g.marker {
            let y = y_of(m);
            c.rect(gx - 4, y.saturating_sub(1), nser * bar_w + 6, 3, [0, 0, 0]);
        }
        c.text(gx, top + plot_h + 10, &g.label);
        if let Some(&v0) = g.values.first() {
            c.text(gx, top + plot_h + 26, &format!("{v0:.2}"));
        }
    }
    let mut out = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut out, w as u32, h as u32);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        // Writing into a Vec cannot fail.
        if let Ok(mut wr) = enc.write_header() {
            let _ = wr.write_image_data(&c.px);
        }
    }
    out
}

/// Write the chart to a file.
pub fn write_bar_chart(
    path: &std::path::Path,
    title: &str,
    series: &[&str],
    groups: &[BarGroup],
) -> std::io::Result<()> {
    let mut f = std::fs::File::create(path)?;
    f.write_all(&bar_chart_png(title, series, groups))
}
