//! Just enough of a Liberty file: the area of every cell, the direction,
//! capacitance and function of every pin, the units, and a hash of the file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::SynthError;

/// One pin of a cell.
#[derive(Debug, Clone, PartialEq)]
pub struct Pin {
    pub name: String,
    /// `input`, `output`, `inout` (as written).
    pub direction: String,
    /// Input capacitance in library units (`capacitive_load_unit`).
    pub capacitance: Option<f64>,
    /// Boolean function of an output pin, as written (`(!A)`).
    pub function: Option<String>,
    /// `clock : true`.
    pub clock: bool,
}

/// Cell areas and pins of a standard-cell library.
#[derive(Debug, Clone)]
pub struct Liberty {
    pub path: PathBuf,
    pub name: String,
    /// SHA-256 of the file's bytes (hex): the key of measurements cached per library.
    pub sha256: String,
    /// Cell name -> area (library units, usually square micrometres).
    pub areas: BTreeMap<String, f64>,
    /// Cell name -> pins, in file order.
    pub pins: BTreeMap<String, Vec<Pin>>,
    /// One capacitance unit of the library in picofarads (`capacitive_load_unit (1,pf)` -> 1).
    pub cap_unit_pf: Option<f64>,
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
        let mut pins: BTreeMap<String, Vec<Pin>> = BTreeMap::new();
        let mut cap_unit_pf = None;
        let mut cell: Option<String> = None;
        // The cell's area is its first `area` attribute.
        let mut area_open = false;
        for line in text.lines() {
            let t = line.trim();
            if let Some(rest) = t.strip_prefix("library") {
                if name.is_empty() {
                    name = paren_arg(rest).unwrap_or_default();
                }
            } else if let Some(rest) = t.strip_prefix("capacitive_load_unit") {
                cap_unit_pf = Some(cap_unit(rest).ok_or_else(|| {
                    bad(&format!(
                        "capacitive_load_unit `{}` is not (N, pf|ff)",
                        rest.trim()
                    ))
                })?);
            } else if let Some(rest) = t.strip_prefix("cell") {
                if let Some(arg) = paren_arg(rest) {
                    pins.entry(arg.clone()).or_default();
                    cell = Some(arg);
                    area_open = true;
                }
            } else if let Some(rest) = t.strip_prefix("pin") {
                if let (Some(arg), Some(c)) = (paren_arg(rest), &cell) {
                    pins.entry(c.clone()).or_default().push(Pin {
                        name: arg,
                        direction: String::new(),
                        capacitance: None,
                        function: None,
                        clock: false,
                    });
                }
            } else if let Some((key, value)) = attribute(t) {
                let Some(c) = &cell else { continue };
                let pin = pins.get_mut(c).and_then(|p| p.last_mut());
                match (key, pin) {
                    ("area", _) if area_open => {
                        area_open = false;
                        let a: f64 = value.parse().map_err(|_| {
                            bad(&format!("cell {c}: area `{value}` is not a number"))
                        })?;
                        areas.insert(c.clone(), a);
                    }
                    ("direction", Some(p)) => p.direction = value.to_string(),
                    ("capacitance", Some(p)) if p.capacitance.is_none() => {
                        p.capacitance = Some(value.parse().map_err(|_| {
                            bad(&format!(
                                "cell {c} pin {}: capacitance `{value}` is not a number",
                                p.name
                            ))
                        })?);
                    }
                    ("function", Some(p)) => p.function = Some(value.to_string()),
                    ("clock", Some(p)) => p.clock = value == "true",
                    _ => {}
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
            sha256: hex::encode(Sha256::digest(text.as_bytes())),
            areas,
            pins,
            cap_unit_pf,
            nand2,
        })
    }

    /// Area of `cell`, or `None` for a cell the library does not have.
    pub fn area(&self, cell: &str) -> Option<f64> {
        self.areas.get(cell).copied()
    }

    /// Inverters: cells with one input `A` and one output whose function is `!A`
    /// (or `A'`), with the input's capacitance, smallest input first.
    pub fn inverters(&self) -> Vec<(&str, &Pin, &Pin)> {
        let mut out: Vec<(&str, &Pin, &Pin)> = self
            .pins
            .iter()
            .filter_map(|(cell, pins)| {
                let ins: Vec<&Pin> = pins.iter().filter(|p| p.direction == "input").collect();
                let outs: Vec<&Pin> = pins.iter().filter(|p| p.direction == "output").collect();
                let ([i], [o]) = (ins.as_slice(), outs.as_slice()) else {
                    return None;
                };
                let f: String = o
                    .function
                    .as_deref()?
                    .chars()
                    .filter(|c| !c.is_whitespace() && *c != '(' && *c != ')')
                    .collect();
                let inverting = f == format!("!{}", i.name) || f == format!("{}'", i.name);
                (inverting && i.capacitance.is_some_and(|c| c > 0.0)).then_some((
                    cell.as_str(),
                    *i,
                    *o,
                ))
            })
            .collect();
        out.sort_by(|a, b| {
            let ca = a.1.capacitance.unwrap_or(0.0);
            let cb = b.1.capacitance.unwrap_or(0.0);
            ca.total_cmp(&cb).then(a.0.cmp(b.0))
        });
        out
    }

    /// The weakest inverter (smallest input capacitance): the FO4 reference
    /// and the driver ABC assumes on its inputs.
    pub fn weakest_inverter(&self) -> Result<(&str, &Pin, &Pin), SynthError> {
        self.inverters()
            .into_iter()
            .next()
            .ok_or_else(|| SynthError::Liberty {
                path: self.path.clone(),
                problem: "no inverter (a cell with one input A, one output, function !A and an input capacitance): cannot measure FO4".into(),
            })
    }

    /// Data (non-clock) input pins and output pins of a sequential `cell`
    /// (one with a `clock : true` pin).
    pub fn flop_pins(&self, cell: &str) -> Result<(Vec<&Pin>, Vec<&Pin>), SynthError> {
        let bad = |why: String| SynthError::Liberty {
            path: self.path.clone(),
            problem: format!("flip-flop {cell}: {why}"),
        };
        let pins = self
            .pins
            .get(cell)
            .ok_or_else(|| bad("not in the library".into()))?;
        if !pins.iter().any(|p| p.clock) {
            return Err(bad("no clock pin (`clock : true`)".into()));
        }
        let data: Vec<&Pin> = pins
            .iter()
            .filter(|p| p.direction == "input" && !p.clock)
            .collect();
        let outs: Vec<&Pin> = pins.iter().filter(|p| p.direction == "output").collect();
        if data.is_empty() || outs.is_empty() {
            return Err(bad("no data input or no output pin".into()));
        }
        Ok((data, outs))
    }

    /// Capacitance in picofarads of `cap` library units.
    pub fn cap_pf(&self, cap: f64) -> Result<f64, SynthError> {
        self.cap_unit_pf
            .map(|u| cap * u)
            .ok_or_else(|| SynthError::Liberty {
                path: self.path.clone(),
                problem: "no capacitive_load_unit: pin capacitances have no unit".into(),
            })
    }
}

/// `(NAME) {` -> `NAME` (quotes removed).
fn paren_arg(rest: &str) -> Option<String> {
    let r = rest.trim_start();
    let r = r.strip_prefix('(')?;
    let end = r.find(')')?;
    Some(r[..end].trim().trim_matches('"').to_string())
}

/// `key : value ;` -> (key, value without quotes).
fn attribute(t: &str) -> Option<(&str, &str)> {
    let (k, v) = t.split_once(':')?;
    let k = k.trim();
    if k.is_empty() || !k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return None;
    }
    Some((k, v.trim().trim_end_matches(';').trim().trim_matches('"')))
}

/// `(1,pf);` -> 1.0 (picofarads per unit), `(1,ff)` -> 0.001.
fn cap_unit(rest: &str) -> Option<f64> {
    let r = rest.trim_start().strip_prefix('(')?;
    let (n, u) = r[..r.find(')')?].split_once(',')?;
    let n: f64 = n.trim().parse().ok()?;
    let scale = match u.trim().trim_matches('"').to_ascii_lowercase().as_str() {
        "pf" => 1.0,
        "ff" => 1e-3,
        "nf" => 1e3,
        _ => return None,
    };
    Some(n * scale)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TINY: &str = "library (tiny) {\n capacitive_load_unit (1,ff);\n cell (INVX2) {\n  area : 16;\n  pin(A) {\n   direction : input;\n   capacitance : 18.6;\n   rise_capacitance : 18.0;\n  }\n  pin(Y) {\n   direction : output;\n   max_capacitance : 500;\n   function : \"(!A)\";\n   timing() {\n    related_pin : \"A\";\n   }\n  }\n }\n cell (INVX1) {\n  area : 16;\n  pin(A) {\n   direction : input;\n   capacitance : 9.3;\n  }\n  pin(Y) {\n   direction : output;\n   function : \"A'\";\n  }\n }\n cell (NAND2X2) {\n area : 40;\n}\n cell (NAND2X1) {\n area : 24;\n  pin(A) { }\n }\n cell (DFFPOSX1) {\n  area : 96;\n  pin(CLK) {\n   direction : input;\n   capacitance : 9.0;\n   clock : true;\n  }\n  pin(D) {\n   direction : input;\n   capacitance : 8.9;\n  }\n  pin(Q) {\n   direction : output;\n   function : \"DS0000\";\n  }\n }\n}\n";

    #[test]
    fn parses_areas_and_nand2() {
        let lib = Liberty::parse(Path::new("t.lib"), TINY).unwrap();
        assert_eq!(lib.name, "tiny");
        assert_eq!(lib.area("INVX1"), Some(16.0));
        assert_eq!(lib.nand2, ("NAND2X1".to_string(), 24.0));
    }

    #[test]
    fn parses_pins_units_and_hash() {
        let lib = Liberty::parse(Path::new("t.lib"), TINY).unwrap();
        assert_eq!(lib.cap_unit_pf, Some(1e-3));
        let a = &lib.pins["INVX2"][0];
        assert_eq!((a.name.as_str(), a.direction.as_str()), ("A", "input"));
        // `capacitance`, not `rise_capacitance`
        assert_eq!(a.capacitance, Some(18.6));
        assert_eq!(lib.pins["INVX2"][1].function.as_deref(), Some("(!A)"));
        // Both inverters found, the weaker first; NAND2 and the flop are not inverters.
        let inv: Vec<&str> = lib.inverters().iter().map(|i| i.0).collect();
        assert_eq!(inv, ["INVX1", "INVX2"]);
        assert_eq!(lib.weakest_inverter().unwrap().0, "INVX1");
        let (data, outs) = lib.flop_pins("DFFPOSX1").unwrap();
        assert_eq!(data.len(), 1);
        assert_eq!(data[0].name, "D");
        assert_eq!(outs[0].name, "Q");
        assert!(lib.flop_pins("INVX1").is_err());
        assert!((lib.cap_pf(8.9).unwrap() - 0.0089).abs() < 1e-12);
        assert_eq!(lib.sha256.len(), 64);
        let other = Liberty::parse(Path::new("t.lib"), &TINY.replace("9.3", "9.4")).unwrap();
        assert_ne!(lib.sha256, other.sha256);
    }

    #[test]
    fn rejects_library_without_nand2() {
        assert!(Liberty::parse(
            Path::new("x.lib"),
            "library (x) {\n cell (INVX1) {\n area : 16;\n }\n}"
        )
        .is_err());
    }

    #[test]
    fn library_without_inverter_or_cap_unit_is_an_error_when_needed() {
        let lib = Liberty::parse(
            Path::new("x.lib"),
            "library (x) {\n cell (NAND2X1) {\n area : 24;\n }\n}",
        )
        .unwrap();
        let e = lib.weakest_inverter().unwrap_err().to_string();
        assert!(e.contains("no inverter"), "{e}");
        let e = lib.cap_pf(1.0).unwrap_err().to_string();
        assert!(e.contains("capacitive_load_unit"), "{e}");
    }
}
