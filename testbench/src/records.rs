//! The one parser of the testbench driver's output records (the format is
//! in the header of `tb/stream_driver.svh` and in docs/hw/cosim.md), for
//! every unit: MPC, MAG-aware BDI and DPC. It is strict: an unknown record
//! kind, a field that is not a hex number, an output bus of the wrong
//! width, a `D` record whose count disagrees with the outputs, a record
//! after the end of the run or a file without one are errors naming the
//! file, the line and the field. An output bus with unknown (`x`/`z`) bits
//! is a well-formed record of a wrong output: its value is an `Err` the
//! golden check reports as a mismatch.

use std::path::{Path, PathBuf};

use crate::hex;
use crate::schedule::ResetEvent;
use crate::stream_unit::LeBus;

/// Record-file problems.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    #[error("cannot read simulator output {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}:{line}: malformed record `{text}`: {problem}")]
    Record {
        path: PathBuf,
        line: usize,
        text: String,
        problem: String,
    },
    #[error("{path}: {problem}")]
    Run { path: PathBuf, problem: String },
}

/// A handshake rule the testbench saw broken (`P cycle code`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Protocol {
    pub cycle: u64,
    pub code: u32,
}

impl Protocol {
    /// The codes the driver writes.
    pub const CODES: std::ops::RangeInclusive<u32> = 1..=6;

    pub fn describe(&self) -> &'static str {
        match self.code {
            1 => "out_valid dropped while the output was stalled (out_ready low)",
            2 => "output data changed while stalled (out_valid high, out_ready low)",
            3 => "out_valid high in or right after reset (the pipeline must be empty)",
            4 => "in_ready high while full (every stage holds a block and out_ready is low)",
            5 => "in_ready low with room (a stage is free or out_ready is high)",
            6 => "out_valid high with no block in flight",
            _ => "unknown protocol violation",
        }
    }
}

/// One delivered output (`O idx cycle latency out_all`), its bus decoded
/// into the unit's fields `F`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record<F> {
    pub idx: u64,
    pub cycle: u64,
    pub latency: u64,
    /// `Err` when the bus holds unknown (`x`/`z`) bits, or the unit's
    /// decoder refuses it.
    pub fields: Result<F, String>,
}

/// Everything one simulation wrote.
#[derive(Clone, Debug)]
pub struct SimOutput<F> {
    pub records: Vec<Record<F>>,
    pub resets: Vec<ResetEvent>,
    pub protocol: Vec<Protocol>,
    /// `E` records: why the run stopped early.
    pub errors: Vec<String>,
    /// `D` record: (cycles, outputs).
    pub done: Option<(u64, u64)>,
}

impl<F> Default for SimOutput<F> {
    fn default() -> Self {
        SimOutput {
            records: Vec::new(),
            resets: Vec::new(),
            protocol: Vec::new(),
            errors: Vec::new(),
            done: None,
        }
    }
}

impl SimOutput<LeBus> {
    /// The outputs decoded into a unit's fields by `decode`.
    pub fn decode<F>(self, decode: impl Fn(&LeBus) -> Result<F, String>) -> SimOutput<F> {
        SimOutput {
            records: self
                .records
                .into_iter()
                .map(|r| Record {
                    idx: r.idx,
                    cycle: r.cycle,
                    latency: r.latency,
                    fields: r.fields.and_then(|b| decode(&b)),
                })
                .collect(),
            resets: self.resets,
            protocol: self.protocol,
            errors: self.errors,
            done: self.done,
        }
    }
}

/// The `width`-bit output bus of an `O` record: `Err(problem)` when the
/// record is malformed (wrong digit count, a bit above `width`, not a hex
/// digit), `Ok(Err(why))` when it holds unknown bits.
fn bus(text: &[u8], width: usize) -> Result<Result<LeBus, String>, String> {
    let digits = width.div_ceil(4);
    if text.len() != digits {
        return Err(format!(
            "field 4 (out_all): {} hex digits, a {width}-bit bus has {digits}",
            text.len()
        ));
    }
    if let Some(&c) = text
        .iter()
        .find(|c| !c.is_ascii_hexdigit() && !matches!(c, b'x' | b'X' | b'z' | b'Z'))
    {
        return Err(format!(
            "field 4 (out_all): `{}` is not a hex digit",
            c as char
        ));
    }
    let s = String::from_utf8_lossy(text);
    if text.iter().any(|c| matches!(c, b'x' | b'X' | b'z' | b'Z')) {
        return Ok(Err(format!(
            "`{s}`: the simulator drove an unknown/undriven value (x/z bits)"
        )));
    }
    LeBus::parse(&s, width)
        .map(Ok)
        .ok_or_else(|| format!("field 4 (out_all): `{s}` has bits set above the {width}-bit bus"))
}

/// Parse the records of `text` (the contents of `path`, for messages) of a
/// unit whose output bus `out_all` is `width` bits wide.
pub fn parse(text: &[u8], path: &Path, width: usize) -> Result<SimOutput<LeBus>, OutputError> {
    let mut out = SimOutput::default();
    let mut ended: Option<usize> = None;
    let n_lines = text.split(|&c| c == b'\n').count();
    for (i, line) in text.split(|&c| c == b'\n').enumerate() {
        let last = i + 1 == n_lines;
        if last && line.is_empty() {
            break;
        }
        let bad = |problem: String| OutputError::Record {
            path: path.to_path_buf(),
            line: i + 1,
            text: String::from_utf8_lossy(line).into_owned(),
            problem,
        };
        if last {
            return Err(bad("the line has no end (the file is truncated)".into()));
        }
        if let Some(end) = ended {
            return Err(bad(format!(
                "a record after the end of the run (line {})",
                end + 1
            )));
        }
        let f: Vec<&[u8]> = line
            .split(|&c| c == b' ')
            .filter(|x| !x.is_empty())
            .collect();
        let Some(&kind) = f.first() else {
            return Err(bad("an empty line".into()));
        };
        let count = |want: usize| -> Result<(), OutputError> {
            if f.len() == want {
                Ok(())
            } else {
                Err(bad(format!("expected {want} fields, found {}", f.len())))
            }
        };
        let num = |k: usize, name: &str| -> Result<u64, OutputError> {
            let field = f
                .get(k)
                .ok_or_else(|| bad(format!("field {k} ({name}) missing")))?;
            hex::parse_u64(field).map_err(|e| bad(format!("field {k} ({name}): {e}")))
        };
        match kind {
            b"O" => {
                count(5)?;
                let idx = num(1, "idx")?;
                if idx != out.records.len() as u64 {
                    return Err(bad(format!(
                        "field 1 (idx): output {idx} where output {} comes next",
                        out.records.len()
                    )));
                }
                out.records.push(Record {
                    idx,
                    cycle: num(2, "cycle")?,
                    latency: num(3, "latency")?,
                    fields: bus(f[4], width).map_err(bad)?,
                });
            }
            b"R" => {
                count(4)?;
                out.resets.push(ResetEvent {
                    cycle: num(1, "cycle")?,
                    first: num(2, "first")?,
                    dropped: num(3, "n")?,
                });
            }
            b"P" => {
                count(3)?;
                let cycle = num(1, "cycle")?;
                let code = num(2, "code")?;
                match u32::try_from(code) {
                    Ok(code) if Protocol::CODES.contains(&code) => {
                        out.protocol.push(Protocol { cycle, code })
                    }
                    _ => {
                        return Err(bad(format!(
                            "field 2 (code): {code} is not a handshake rule (1 to 6)"
                        )))
                    }
                }
            }
            b"D" => {
                count(3)?;
                let cycles = num(1, "cycles")?;
                let outputs = num(2, "outputs")?;
                if outputs != out.records.len() as u64 {
                    return Err(bad(format!(
                        "field 2 (outputs): {outputs}, but the file holds {} output records",
                        out.records.len()
                    )));
                }
                out.done = Some((cycles, outputs));
                ended = Some(i);
            }
            b"E" => {
                let why = String::from_utf8_lossy(&line[1..]).trim().to_string();
                if why.is_empty() || line.get(1) != Some(&b' ') {
                    return Err(bad("field 1 (text): missing".into()));
                }
                out.errors.push(why);
                ended = Some(i);
            }
            _ => {
                return Err(bad(format!(
                    "field 0: unknown record kind `{}` (O, R, P, E, D)",
                    String::from_utf8_lossy(kind)
                )))
            }
        }
    }
    if ended.is_none() {
        return Err(OutputError::Run {
            path: path.to_path_buf(),
            problem: format!(
                "no end-of-run record (`D` or `E`) after {} lines: the simulation did not finish",
                n_lines.saturating_sub(1)
            ),
        });
    }
    Ok(out)
}

/// Read and parse a record file (see [`parse`]).
pub fn read(path: &Path, width: usize) -> Result<SimOutput<LeBus>, OutputError> {
    let text = std::fs::read(path).map_err(|source| OutputError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    parse(&text, path, width)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 12-bit bus holding `v`, as the driver writes it.
    fn hex12(v: u64) -> String {
        let mut b = LeBus::new();
        b.put_uint(v, 12);
        b.hex()
    }

    fn parse12(text: &str) -> Result<SimOutput<LeBus>, OutputError> {
        parse(text.as_bytes(), Path::new("run/out.txt"), 12)
    }

    /// The error of `text`: its line, and that it names the file and
    /// `needle`.
    fn refused(text: &str, line: usize, needle: &str) {
        let e = parse12(text).expect_err(text);
        let msg = e.to_string();
        assert!(
            msg.starts_with(&format!("run/out.txt:{line}: ")),
            "{text:?}: {msg}"
        );
        assert!(msg.contains(needle), "{text:?}: no {needle:?} in {msg}");
        assert!(
            matches!(e, OutputError::Record { line: l, .. } if l == line),
            "{e:?}"
        );
    }

    #[test]
    fn parses_every_record_kind() {
        let text = format!(
            "O 0 3 3 {}\nR 10 4 3\nP 11 3\nO 1 c 4 xxx\nO 2 d 4 {}\nD 20 3\n",
            hex12(0xabc),
            hex12(1)
        );
        let o = parse12(&text).expect("parse");
        assert_eq!(o.records.len(), 3);
        assert_eq!(
            o.records[0].fields.as_ref().map(|b| b.uint(0, 12)),
            Ok(0xabc)
        );
        assert!(o.records[1]
            .fields
            .as_ref()
            .is_err_and(|e| e.contains("unknown")));
        assert_eq!((o.records[1].cycle, o.records[1].latency), (12, 4));
        assert_eq!(
            o.resets,
            vec![ResetEvent {
                cycle: 16,
                first: 4,
                dropped: 3
            }]
        );
        assert_eq!(o.protocol, vec![Protocol { cycle: 17, code: 3 }]);
        assert_eq!(o.done, Some((32, 3)));
        let stopped = parse12("O 0 3 3 000\nE timeout: no output\n").expect("parse");
        assert_eq!(stopped.errors, vec!["timeout: no output".to_string()]);
        assert_eq!(stopped.done, None);
        // the decoded view keeps the records and their order
        let d = o.decode(|b| Ok(b.uint(0, 4)));
        assert_eq!(d.records[2].fields, Ok(1));
        assert!(d.records[1].fields.is_err());
    }

    #[test]
    fn an_unknown_record_kind_names_its_line() {
        refused("R 1 0 0\nQ 1\nD 2 0\n", 2, "unknown record kind `Q`");
        refused(
            "O 0 3 3 000\no 1 4 3 000\nD 5 2\n",
            2,
            "unknown record kind `o`",
        );
    }

    #[test]
    fn a_bad_done_record_names_its_line() {
        refused("O 0 3 3 000\nD 5\n", 2, "expected 3 fields, found 2");
        refused("O 0 3 3 000\nD 5 g\n", 2, "field 2 (outputs)");
        refused("O 0 3 3 000\nD -5 1\n", 2, "field 1 (cycles)");
        refused(
            "O 0 3 3 000\nD 5 2\n",
            2,
            "2, but the file holds 1 output records",
        );
        refused("D 5 0\nO 0 3 3 000\n", 2, "after the end of the run");
        refused("E timeout\nD 5 0\n", 2, "after the end of the run");
        refused("P 3 7\nD 5 0\n", 1, "7 is not a handshake rule");
    }

    #[test]
    fn a_truncated_line_names_its_line() {
        refused(
            "O 0 3 3 000\nO 1 4\nD 5 2\n",
            2,
            "expected 5 fields, found 3",
        );
        refused("R 1 0\nD 5 0\n", 1, "expected 4 fields, found 3");
        // the last line cut short (no line end): the writer was stopped
        refused(
            "O 0 3 3 000\nO 1 4 3 0",
            2,
            "no end (the file is truncated)",
        );
        refused("E\nD 1 0\n", 1, "field 1 (text): missing");
    }

    #[test]
    fn a_bus_of_the_wrong_width_names_its_line() {
        refused(
            "O 0 3 3 0000\nD 5 1\n",
            1,
            "4 hex digits, a 12-bit bus has 3",
        );
        refused("O 0 3 3 00\nD 5 1\n", 1, "2 hex digits");
        let mut b = LeBus::new();
        b.put_uint(0x1f, 5);
        // 5 bits: 2 digits, the top one at most 1
        assert!(parse(b"O 0 3 3 1f\nD 4 1\n", Path::new("t"), 5).is_ok());
        let e = parse(b"O 0 3 3 2f\nD 4 1\n", Path::new("t"), 5).expect_err("bit 5");
        assert!(e.to_string().contains("above the 5-bit bus"), "{e}");
        refused("O 0 3 3 0g0\nD 5 1\n", 1, "`g` is not a hex digit");
        refused(
            "O 1 3 3 000\nD 5 1\n",
            1,
            "output 1 where output 0 comes next",
        );
    }

    #[test]
    fn a_run_without_an_end_record_is_refused() {
        let e = parse12("O 0 3 3 000\nR 4 1 0\n").expect_err("no end");
        assert!(matches!(e, OutputError::Run { .. }), "{e:?}");
        assert!(e.to_string().contains("did not finish"), "{e}");
        assert!(parse12("").is_err(), "an empty file has no end record");
    }
}
