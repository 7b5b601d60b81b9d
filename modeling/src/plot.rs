//! Charts as PNG: grouped bars (ratios per algorithm), lines with labelled
//! points (ratio against area), heatmaps with a colour bar (RE matrices).
//!
//! Drawn with `plotters` on its bitmap backend into memory and encoded with
//! the `png` crate. Text is set in DejaVu Sans, embedded by the `dejavu`
//! crate and rasterised by `ab_glyph`: no system font is read, so a chart
//! is byte-identical on every machine. Every chart has a title, axis
//! descriptions (with units where there are units) and, with more than one
//! series, a legend.

use std::path::Path;

use std::ops::Range;

use plotters::coord::ranged1d::{KeyPointHint, NoDefaultFormatting, Ranged, ValueFormatter};
use plotters::prelude::*;
use plotters::style::{register_font, FontStyle};

/// Why a chart could not be drawn or written.
#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    #[error("drawing the chart `{title}`: {message}")]
    Draw { title: String, message: String },
    #[error("cannot write {path}: {source}")]
    Io {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// The font family every chart uses (registered from the embedded bytes).
const FONT: &str = "sans-serif";

fn register_fonts() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // The embedded fonts are valid TrueType files; a failure would only
        // leave text undrawn, which the tests would show.
        let _ = register_font(FONT, FontStyle::Normal, dejavu::sans::regular());
        let _ = register_font(FONT, FontStyle::Bold, dejavu::sans::bold());
    });
}

/// Series colours (a colour-blind-safe palette: Okabe and Ito).
pub const COLOURS: [RGBColor; 7] = [
    RGBColor(0, 114, 178),
    RGBColor(230, 159, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(86, 180, 233),
    RGBColor(213, 94, 0),
    RGBColor(120, 120, 120),
];

fn colour(k: usize) -> RGBColor {
    COLOURS[k % COLOURS.len()]
}

/// Render `draw` on a `w` x `h` white canvas and encode it as PNG.
fn render(
    title: &str,
    w: u32,
    h: u32,
    draw: impl FnOnce(
        &DrawingArea<BitMapBackend<'_>, plotters::coord::Shift>,
    ) -> Result<(), Box<dyn std::error::Error>>,
) -> Result<Vec<u8>, PlotError> {
    register_fonts();
    let err = |e: &dyn std::fmt::Display| PlotError::Draw {
        title: title.to_string(),
        message: e.to_string(),
    };
    let mut px = vec![255u8; w as usize * h as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut px, (w, h)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(&e))?;
        draw(&root).map_err(|e| err(&e))?;
        root.present().map_err(|e| err(&e))?;
    }
    let mut out = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut out, w, h);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        let mut wr = enc.write_header().map_err(|e| err(&e))?;
        wr.write_image_data(&px).map_err(|e| err(&e))?;
    }
    Ok(out)
}

fn write(path: &Path, png: &[u8]) -> Result<(), PlotError> {
    datafiles::atomic::write_atomic(path, png).map_err(|e| PlotError::Io {
        path: e.path,
        source: e.source,
    })
}

/// An axis of `n` unit-wide slots (bar groups, heatmap cells) over
/// `0..n`, with a tick at the middle of every `step`-th slot; the chart's
/// label formatter names the slot of `v.floor()`.
struct Slots {
    n: usize,
    step: usize,
}

impl Ranged for Slots {
    type FormatOption = NoDefaultFormatting;
    type ValueType = f64;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        let f = v / self.n as f64;
        limit.0 + (f * (limit.1 - limit.0) as f64).round() as i32
    }

    fn key_points<H: KeyPointHint>(&self, _hint: H) -> Vec<f64> {
        (0..self.n)
            .step_by(self.step.max(1))
            .map(|i| i as f64 + 0.5)
            .collect()
    }

    fn range(&self) -> Range<f64> {
        0.0..self.n as f64
    }
}

impl ValueFormatter<f64> for Slots {
    fn format(v: &f64) -> String {
        format!("{}", v.floor())
    }
}

/// A round upper bound for an axis that must show `max`.
fn nice_max(max: f64) -> f64 {
    if max.is_nan() || max <= 0.0 || max.is_infinite() {
        return 1.0;
    }
    let step = 10f64.powf((max * 1.1).log10().floor()) / 2.0;
    ((max * 1.1) / step).ceil() * step
}

/// One group of bars: a label, one value per series, and an optional
/// reference value (e.g. the paper's figure) drawn as a black line across
/// the group.
pub struct BarGroup {
    pub label: String,
    pub values: Vec<f64>,
    pub marker: Option<f64>,
}

/// A grouped bar chart.
pub struct BarChart<'a> {
    pub title: &'a str,
    /// What the groups are (x axis).
    pub x_desc: &'a str,
    /// What the bars measure, with its unit (y axis).
    pub y_desc: &'a str,
    /// Names of the bars of each group, in order (the legend).
    pub series: &'a [&'a str],
    pub groups: &'a [BarGroup],
    /// Legend entry of the reference lines, when any group has one.
    pub marker_name: &'a str,
}

/// PNG bytes of a grouped bar chart.
pub fn bar_chart_png(c: &BarChart) -> Result<Vec<u8>, PlotError> {
    let n = c.groups.len().max(1);
    let nser = c.series.len().max(1);
    let w = (110 + n * (nser * 16 + 36)).max(720) as u32;
    let h = 520;
    let max = c
        .groups
        .iter()
        .flat_map(|g| g.values.iter().copied().chain(g.marker))
        .fold(0.0f64, f64::max);
    let ymax = nice_max(max);
    let labels: Vec<String> = c.groups.iter().map(|g| g.label.clone()).collect();
    render(c.title, w, h, |root| {
        let mut chart = ChartBuilder::on(root)
            .caption(c.title, (FONT, 20))
            .margin(12)
            .x_label_area_size(48)
            .y_label_area_size(64)
            .build_cartesian_2d(Slots { n, step: 1 }, 0f64..ymax)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_desc(c.x_desc)
            .y_desc(c.y_desc)
            .x_label_formatter(&|x| {
                let i = x.floor() as usize;
                labels.get(i).cloned().unwrap_or_default()
            })
            .label_style((FONT, 13))
            .axis_desc_style((FONT, 15))
            .draw()?;
        let bw = 0.8 / nser as f64;
        for (k, name) in c.series.iter().enumerate() {
            let col = colour(k);
            chart
                .draw_series(c.groups.iter().enumerate().filter_map(|(i, g)| {
                    let v = *g.values.get(k)?;
                    let x0 = i as f64 + 0.1 + k as f64 * bw;
                    Some(Rectangle::new(
                        [(x0, 0.0), (x0 + bw * 0.92, v.max(0.0))],
                        col.filled(),
                    ))
                }))?
                .label(*name)
                .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 12, y + 6)], col.filled()));
        }
        if c.groups.iter().any(|g| g.marker.is_some()) {
            chart
                .draw_series(c.groups.iter().enumerate().filter_map(|(i, g)| {
                    let m = g.marker?;
                    Some(PathElement::new(
                        vec![(i as f64 + 0.05, m), (i as f64 + 0.95, m)],
                        BLACK.stroke_width(3),
                    ))
                }))?
                .label(c.marker_name)
                .legend(|(x, y)| {
                    PathElement::new(vec![(x, y), (x + 14, y)], BLACK.stroke_width(3))
                });
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .label_font((FONT, 13))
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()?;
        Ok(())
    })
}

/// Write a grouped bar chart to `path`.
pub fn write_bar_chart(path: &Path, c: &BarChart) -> Result<(), PlotError> {
    write(path, &bar_chart_png(c)?)
}

/// One line: points in drawing order, each with a label drawn next to it
/// (empty for none).
pub struct Line {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    pub labels: Vec<String>,
}

/// A chart of lines with labelled points.
pub struct LineChart<'a> {
    pub title: &'a str,
    pub x_desc: &'a str,
    pub y_desc: &'a str,
    pub lines: &'a [Line],
}

/// PNG bytes of a line chart; the axes span the points with a margin.
pub fn line_chart_png(c: &LineChart) -> Result<Vec<u8>, PlotError> {
    let pts = || c.lines.iter().flat_map(|l| l.points.iter().copied());
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for (x, y) in pts() {
        x0 = x0.min(x);
        x1 = x1.max(x);
        y0 = y0.min(y);
        y1 = y1.max(y);
    }
    if x0 > x1 {
        (x0, x1, y0, y1) = (0.0, 1.0, 0.0, 1.0);
    }
    let (dx, dy) = ((x1 - x0).max(1e-9) * 0.08, (y1 - y0).max(1e-9) * 0.12);
    render(c.title, 900, 560, |root| {
        let mut chart = ChartBuilder::on(root)
            .caption(c.title, (FONT, 20))
            .margin(14)
            .x_label_area_size(48)
            .y_label_area_size(70)
            .build_cartesian_2d((x0 - dx)..(x1 + dx), (y0 - dy)..(y1 + dy))?;
        // Wide ranges (areas, counts) get whole numbers, narrow ones
        // (ratios) two decimals.
        let fmt = |span: f64| {
            move |v: &f64| {
                if span >= 100.0 {
                    format!("{v:.0}")
                } else {
                    format!("{v:.2}")
                }
            }
        };
        let (fx, fy) = (fmt(x1 - x0), fmt(y1 - y0));
        chart
            .configure_mesh()
            .x_desc(c.x_desc)
            .y_desc(c.y_desc)
            .x_label_formatter(&fx)
            .y_label_formatter(&fy)
            .label_style((FONT, 13))
            .axis_desc_style((FONT, 15))
            .draw()?;
        for (k, l) in c.lines.iter().enumerate() {
            let col = colour(k);
            chart
                .draw_series(LineSeries::new(l.points.clone(), col.stroke_width(2)))?
                .label(l.name.as_str())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 16, y)], col.stroke_width(2))
                });
            chart.draw_series(l.points.iter().map(|&p| Circle::new(p, 4, col.filled())))?;
            chart.draw_series(
                l.points
                    .iter()
                    .zip(&l.labels)
                    .map(|(&p, t)| Text::new(t.clone(), p, (FONT, 12).into_font().color(&col))),
            )?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .label_font((FONT, 13))
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()?;
        Ok(())
    })
}

/// Write a line chart to `path`.
pub fn write_line_chart(path: &Path, c: &LineChart) -> Result<(), PlotError> {
    write(path, &line_chart_png(c)?)
}

/// A square heatmap: `values[i][j]` is drawn in row `i` (top to bottom),
/// column `j`, coloured by `colour(value / max)`; cells on the diagonal
/// grey when `grey_diagonal`. A colour bar on the right spans 0..`max`.
pub struct Heatmap<'a> {
    pub title: &'a str,
    pub x_desc: &'a str,
    pub y_desc: &'a str,
    /// What the colours measure, with its unit (the colour bar).
    pub value_desc: &'a str,
    pub values: &'a [Vec<f64>],
    pub max: f64,
    pub grey_diagonal: bool,
    pub colour: fn(f64) -> [u8; 3],
}

/// PNG bytes of a heatmap.
pub fn heatmap_png(c: &Heatmap) -> Result<Vec<u8>, PlotError> {
    let n = c.values.len().max(1);
    let cell = 18u32;
    let grid = n as u32 * cell;
    let (w, h) = (grid + 250, grid + 120);
    let step = if n > 16 { 2 } else { 1 };
    render(c.title, w, h, |root| {
        let root = root.titled(c.title, (FONT, 19))?;
        let (left, right) = root.split_horizontally(grid + 80);
        let mut chart = ChartBuilder::on(&left)
            .margin(8)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d(Slots { n, step }, Slots { n, step })?;
        let fmt = |v: &f64| format!("{}", v.floor() as usize);
        let fmt_rev = |v: &f64| format!("{}", n - 1 - v.floor() as usize);
        chart
            .configure_mesh()
            .disable_mesh()
            .x_desc(c.x_desc)
            .y_desc(c.y_desc)
            .x_label_formatter(&fmt)
            .y_label_formatter(&fmt_rev)
            .label_style((FONT, 11))
            .axis_desc_style((FONT, 14))
            .draw()?;
        chart.draw_series(c.values.iter().enumerate().flat_map(|(i, row)| {
            row.iter().enumerate().map(move |(j, &v)| {
                let rgb = if c.grey_diagonal && i == j {
                    [160, 160, 160]
                } else {
                    (c.colour)(v / c.max)
                };
                let y = (n - 1 - i) as f64;
                Rectangle::new(
                    [(j as f64, y), (j as f64 + 0.96, y + 0.96)],
                    RGBColor(rgb[0], rgb[1], rgb[2]).filled(),
                )
            })
        }))?;
        let mut bar = ChartBuilder::on(&right)
            .margin_top(8)
            .margin_bottom(48)
            .margin_right(36)
            .y_label_area_size(64)
            .build_cartesian_2d(0f64..1.0, 0f64..c.max)?;
        bar.configure_mesh()
            .disable_mesh()
            .disable_x_axis()
            .y_desc(c.value_desc)
            .label_style((FONT, 11))
            .axis_desc_style((FONT, 13))
            .draw()?;
        let steps = 128;
        bar.draw_series((0..steps).map(|k| {
            let (a, b) = (
                c.max * k as f64 / steps as f64,
                c.max * (k + 1) as f64 / steps as f64,
            );
            let rgb = (c.colour)(k as f64 / (steps - 1) as f64);
            Rectangle::new(
                [(0.0, a), (1.0, b)],
                RGBColor(rgb[0], rgb[1], rgb[2]).filled(),
            )
        }))?;
        Ok(())
    })
}

/// Write a heatmap to `path`.
pub fn write_heatmap(path: &Path, c: &Heatmap) -> Result<(), PlotError> {
    write(path, &heatmap_png(c)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(png_bytes: &[u8]) -> (u32, u32, Vec<u8>) {
        let dec = png::Decoder::new(std::io::Cursor::new(png_bytes));
        let mut r = dec.read_info().expect("png header");
        let mut buf = vec![0; r.output_buffer_size()];
        let info = r.next_frame(&mut buf).expect("frame");
        buf.truncate(info.buffer_size());
        (info.width, info.height, buf)
    }

    /// Pixels that are neither white nor grey: coloured marks.
    fn coloured(px: &[u8], rgb: RGBColor) -> usize {
        px.chunks_exact(3)
            .filter(|p| p[0] == rgb.0 && p[1] == rgb.1 && p[2] == rgb.2)
            .count()
    }

    /// Dark pixels: text, axes and lines.
    fn dark(px: &[u8]) -> usize {
        px.chunks_exact(3)
            .filter(|p| (p[0] as u32 + p[1] as u32 + p[2] as u32) < 150)
            .count()
    }

    #[test]
    fn bars_are_drawn_in_their_colours_and_reproducibly() {
        let groups = [
            BarGroup {
                label: "A".into(),
                values: vec![1.5, 0.5],
                marker: Some(2.0),
            },
            BarGroup {
                label: "B".into(),
                values: vec![1.0, 3.0],
                marker: None,
            },
        ];
        let c = BarChart {
            title: "Ratio",
            x_desc: "algorithm",
            y_desc: "compression ratio",
            series: &["one", "two"],
            groups: &groups,
            marker_name: "paper",
        };
        let a = bar_chart_png(&c).expect("chart");
        assert_eq!(a, bar_chart_png(&c).expect("chart"), "reproducible");
        let (w, h, px) = decode(&a);
        assert!(w >= 720 && h == 520);
        // Both series are drawn; the second is taller in total (0.5 + 3.0
        // against 1.5 + 1.0) and so has more pixels.
        let (one, two) = (coloured(&px, COLOURS[0]), coloured(&px, COLOURS[1]));
        assert!(one > 500 && two > one, "{one} {two}");
        // Text and axes are drawn (the embedded font works).
        assert!(dark(&px) > 2000, "{}", dark(&px));
    }

    #[test]
    fn text_comes_from_the_embedded_font() {
        let mk = |t: &str| {
            let l = [Line {
                name: "s".into(),
                points: vec![(0.0, 0.0), (1.0, 1.0)],
                labels: vec![String::new(), String::new()],
            }];
            line_chart_png(&LineChart {
                title: t,
                x_desc: "x",
                y_desc: "y",
                lines: &l,
            })
            .expect("chart")
        };
        // A longer title darkens more pixels: text is really rendered.
        let (_, _, short) = decode(&mk("T"));
        let (_, _, long) = decode(&mk("A much longer title with many glyphs"));
        assert!(dark(&long) > dark(&short) + 300);
    }

    #[test]
    fn heatmap_cells_follow_the_values() {
        let values = vec![vec![0.0, 1.0], vec![2.0, 0.0]];
        fn grey(t: f64) -> [u8; 3] {
            let v = (255.0 * (1.0 - t.clamp(0.0, 1.0))) as u8;
            [v, 0, 0]
        }
        let png_bytes = heatmap_png(&Heatmap {
            title: "H",
            x_desc: "base",
            y_desc: "byte",
            value_desc: "bits",
            values: &values,
            max: 2.0,
            grey_diagonal: true,
            colour: grey,
        })
        .expect("heatmap");
        let (_, _, px) = decode(&png_bytes);
        // Cell (0, 1) = 1.0 of 2.0 -> [127, 0, 0]; the diagonal is grey.
        assert!(coloured(&px, RGBColor(127, 0, 0)) > 100);
        assert!(coloured(&px, RGBColor(160, 160, 160)) > 200);
    }

    #[test]
    fn nice_axis_bounds() {
        assert_eq!(nice_max(0.0), 1.0);
        assert_eq!(nice_max(f64::NAN), 1.0);
        assert!(nice_max(1.7) >= 1.7 * 1.1);
        assert!(nice_max(63.0) >= 63.0 && nice_max(63.0) <= 80.0);
    }
}
