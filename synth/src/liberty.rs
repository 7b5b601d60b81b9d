//! Just enough of a Liberty file: the area of every cell.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::SynthError;

/// Cell areas of a standard-cell library.
#[derive(Debug, Clone)]
pub struct Liberty {
    pub path: PathBuf,
    pub name: String,
    /// Cell name -> area (library units, usually square micrometres).
    pub areas: BTreeMap<String, f64>,
    /// Name and area of the smallest 2-input NAND: the NAND2-equivalent unit.
    pub nand2: (String, f64),
}

impl Liberty {
    pub fn load(path: &Path) -> Result<Liberty, SynthError> {
        let text = std::fs::read_to_string(path).map_err(|source| SynthError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Liberty::parse(path, &text)
    }

    pub fn parse(path: &Path, text: &str) -> Result<Liberty, SynthError> {
        let bad = |why: &str| SynthError::Liberty {
            path: path.to_path_buf(),
            problem: why.to_string(),
        };
        let mut name = String::new();
        let mut areas = BTreeMap::new();
        let mut current: Option<String> = None;
        for line in text.lines() {
            let t = line.trim();
            if let Some(rest) = t.strip_prefix("library") {
                if name.is_empty() {
                    name = paren_arg(rest).unwrap_or_default();
                }
            } else if let Some(rest) = t.strip_prefix("cell") {
                if let Some(arg) = paren_arg(rest) {
                    current = Some(arg);
                }
            } else if let Some(rest) = t.strip_prefix("area") {
                if let Some(cell) = current.take() {
                    let v = rest
                        .trim_start()
                        .trim_start_matches(':')
                        .trim()
                        .trim_end_matches(';')
                        .trim();
                    let a: f64 = v
                        .parse()
                        .map_err(|_| bad(&format!("cell {cell}: area `{v}` is not a number")))?;
                    areas.insert(cell, a);
                }
            }
        }
        let nand2 = areas
            .iter()
            .filter(|(c, _)| c.to_ascii_uppercase().starts_with("NAND2"))
            .min_by(|a, b| a.1.total_cmp(b.1))
            .map(|(c, a)| (c.clone(), *a))
            .ok_or_else(|| bad("no NAND2 cell: cannot express area in NAND2 equivalents"))?;
        if nand2.1 <= 0.0 {
            return Err(bad("NAND2 cell has no positive area"));
        }
        Ok(Liberty {
            path: path.to_path_buf(),
            name,
            areas,
            nand2,
        })
    }

    /// Area of `cell`, or `None` for a cell the library does not have.
    pub fn area(&self, cell: &str) -> Option<f64> {
        self.areas.get(cell).copied()
    }
}

/// `(NAME) {` -> `NAME` (quotes removed).
fn paren_arg(rest: &str) -> Option<String> {
    let r = rest.trim_start();
    let r = r.strip_prefix('(')?;
    let end = r.find(')')?;
    Some(r[..end].trim().trim_matches('"').to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_areas_and_nand2() {
        let text = "library (tiny) {\n cell (INVX1) {\n  area : 16;\n }\n cell (NAND2X2) {\n area : 40;\n}\n cell (NAND2X1) {\n area : 24;\n  pin(A) { }\n }\n}\n";
        let lib = Liberty::parse(Path::new("t.lib"), text).unwrap();
        assert_eq!(lib.name, "tiny");
        assert_eq!(lib.area("INVX1"), Some(16.0));
        assert_eq!(lib.nand2, ("NAND2X1".to_string(), 24.0));
    }

    #[test]
    fn rejects_library_without_nand2() {
        let text = "library (x) { cell (INVX1) { area : 16; } }";
        assert!(Liberty::parse(
            Path::new("x.lib"),
            "library (x) {\n cell (INVX1) {\n area : 16;\n }\n}"
        )
        .is_err());
        let _ = text;
    }
}
