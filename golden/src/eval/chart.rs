//! A bar chart of compression ratios per algorithm (like the paper's
//! Fig. 5), drawn directly with the `png` encoder and a built-in 3x5 font
//! (as `crate::train::heatmap`), so no system fonts are needed and the
//! output is byte-for-byte reproducible.

use std::io::Write;

use crate::canvas::{text_width, Canvas};

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

/// Draw grouped bars; `series` names the bars of each group (legend).
pub fn bar_chart_png(title: &str, series: &[&str], groups: &[BarGroup]) -> Vec<u8> {
    let nser = series.len().max(1);
    let bar_w = 16;
    let label_w = groups
        .iter()
        .map(|g| text_width(&g.label))
        .max()
        .unwrap_or(0);
    let group_w = (nser * bar_w + 24).max(label_w + 12);
    let left = 50;
    let top = 60;
    let plot_h = 360;
    let w = left + groups.len() * group_w + 20;
    let h = top + plot_h + 50;
    let mut c = Canvas::new(w, h);
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
        lx += 16 + text_width(s) + 20;
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
    c.png()
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
