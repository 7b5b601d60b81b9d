//! A minimal RGB canvas with a built-in 3x5 font, encoded as PNG with the
//! `png` crate: pictures (heatmaps, bar charts) need no system fonts and are
//! byte-for-byte reproducible.

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

/// An RGB image, white to start with.
pub struct Canvas {
    pub w: usize,
    pub h: usize,
    px: Vec<u8>,
}

impl Canvas {
    pub fn new(w: usize, h: usize) -> Canvas {
        Canvas {
            w,
            h,
            px: vec![255; w * h * 3],
        }
    }

    /// Fill a rectangle (clipped to the canvas).
    pub fn rect(&mut self, x: usize, y: usize, w: usize, h: usize, c: [u8; 3]) {
        for yy in y..(y + h).min(self.h) {
            for xx in x..(x + w).min(self.w) {
                let o = (yy * self.w + xx) * 3;
                self.px[o..o + 3].copy_from_slice(&c);
            }
        }
    }

    /// Black text at scale 2 (6x10 px glyphs, 8 px advance).
    pub fn text(&mut self, x: usize, y: usize, s: &str) {
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

    /// The image as PNG bytes.
    pub fn png(&self) -> Vec<u8> {
        let mut out = Vec::new();
        {
            let mut enc = png::Encoder::new(&mut out, self.w as u32, self.h as u32);
            enc.set_color(png::ColorType::Rgb);
            enc.set_depth(png::BitDepth::Eight);
            // Writing a well-formed image into a Vec cannot fail.
            if let Ok(mut wr) = enc.write_header() {
                let _ = wr.write_image_data(&self.px);
            }
        }
        out
    }
}

/// Width of `s` in pixels at scale 2.
pub fn text_width(s: &str) -> usize {
    s.chars().count() * 8
}
