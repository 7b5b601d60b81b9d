//! Parsing the testbench's output records (see the header of
//! `tb/mpc_tb.sv`).

use std::path::{Path, PathBuf};

use golden::mpc::MAX_BLOCK_BYTES;

use crate::hex;
use crate::schedule::ResetEvent;
use crate::vectors::Block;
use crate::Unit;

/// Output-file problems.
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
}

/// The unit's output fields of one record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fields {
    /// Compressor: `out_len`, `out_model`, `out_bits` (MSB-first bytes).
    Comp {
        len: u32,
        model: u32,
        bits: [u8; MAX_BLOCK_BYTES],
    },
    /// Decompressor and loopback: `out_error`, `out_model`, `out_block`.
    Block {
        error: bool,
        model: u32,
        block: Block,
    },
}

/// One delivered output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    pub idx: u64,
    pub cycle: u64,
    pub latency: u64,
    /// `Err` when a field holds unknown (`x`/`z`) bits or is malformed.
    pub fields: Result<Fields, String>,
}

/// A protocol violation seen by the testbench.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Protocol {
    pub cycle: u64,
    pub code: u32,
}

impl Protocol {
    pub fn describe(&self) -> &'static str {
        match self.code {
            1 => "out_valid dropped while the output was stalled (out_ready low)",
            2 => "output data changed while stalled (out_valid high, out_ready low)",
            3 => "out_valid high in or right after reset (the pipeline must be empty)",
            _ => "unknown protocol violation",
        }
    }
}

/// Everything one simulation wrote.
#[derive(Clone, Debug, Default)]
pub struct SimOutput {
    pub records: Vec<Record>,
    pub resets: Vec<ResetEvent>,
    pub protocol: Vec<Protocol>,
    /// `E` records: why the run stopped early.
    pub errors: Vec<String>,
    /// `D` record: (cycles, outputs).
    pub done: Option<(u64, u64)>,
}

fn fields_of(unit: Unit, f: &[&[u8]], width: u32) -> Result<Fields, String> {
    let e = |x: hex::HexError| x.to_string();
    match unit {
        Unit::Compressor => Ok(Fields::Comp {
            len: hex::parse_u64(f[0]).map_err(e)? as u32,
            model: hex::parse_u64(f[1]).map_err(e)? as u32,
            bits: hex::parse_bus(f[2], width).map_err(e)?,
        }),
        Unit::Decompressor | Unit::Loopback => Ok(Fields::Block {
            error: hex::parse_u64(f[0]).map_err(e)? != 0,
            model: hex::parse_u64(f[1]).map_err(e)? as u32,
            block: hex::parse_block(f[2]).map_err(e)?,
        }),
    }
}

/// Parse the records of `text` (the contents of `path`, for messages).
pub fn parse(text: &[u8], path: &Path, unit: Unit, width: u32) -> Result<SimOutput, OutputError> {
    let mut out = SimOutput::default();
    for (i, line) in text.split(|&c| c == b'\n').enumerate() {
        if line.is_empty() {
            continue;
        }
        let bad = |problem: String| OutputError::Record {
            path: path.to_path_buf(),
            line: i + 1,
            text: String::from_utf8_lossy(line).into_owned(),
            problem,
        };
        let f: Vec<&[u8]> = line
            .split(|&c| c == b' ')
            .filter(|x| !x.is_empty())
            .collect();
        let num = |k: usize| -> Result<u64, OutputError> {
            let field = f.get(k).ok_or_else(|| bad("too few fields".to_string()))?;
            hex::parse_u64(field).map_err(|e| bad(e.to_string()))
        };
        match f[0] {
            b"O" => {
                if f.len() != 7 {
                    return Err(bad(format!("expected 7 fields, found {}", f.len())));
                }
                out.records.push(Record {
                    idx: num(1)?,
                    cycle: num(2)?,
                    latency: num(3)?,
                    fields: fields_of(unit, &f[4..7], width),
                });
            }
            b"R" => out.resets.push(ResetEvent {
                cycle: num(1)?,
                first: num(2)?,
                dropped: num(3)?,
            }),
            b"P" => out.protocol.push(Protocol {
                cycle: num(1)?,
                code: num(2)? as u32,
            }),
            b"D" => out.done = Some((num(1)?, num(2)?)),
            b"E" => out
                .errors
                .push(String::from_utf8_lossy(&line[2.min(line.len())..]).into_owned()),
            _ => return Err(bad("unknown record type".to_string())),
        }
    }
    Ok(out)
}

/// Read and parse an output file.
pub fn read(path: &Path, unit: Unit, width: u32) -> Result<SimOutput, OutputError> {
    let text = std::fs::read(path).map_err(|source| OutputError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    parse(&text, path, unit, width)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_record_type() {
        let bits = "2".to_string() + &"0".repeat(64);
        let text = format!(
            "O 0 3 3 005 2 {bits}\nR 10 4 3\nP 11 3\nO 1 c 4 104 5 {}\nE timeout\nD 20 2\n",
            "x".repeat(65)
        );
        let o = parse(text.as_bytes(), Path::new("t"), Unit::Compressor, 259).expect("parse");
        assert_eq!(o.records.len(), 2);
        let Ok(Fields::Comp { len, model, bits }) = o.records[0].fields else {
            panic!("fields {:?}", o.records[0].fields);
        };
        assert_eq!((len, model, bits[0]), (5, 2, 0x40));
        assert!(o.records[1]
            .fields
            .as_ref()
            .is_err_and(|e| e.contains("unknown")));
        assert_eq!(o.records[1].cycle, 12);
        assert_eq!(
            o.resets,
            vec![ResetEvent {
                cycle: 16,
                first: 4,
                dropped: 3
            }]
        );
        assert_eq!(o.protocol[0].code, 3);
        assert_eq!(o.errors, vec!["timeout".to_string()]);
        assert_eq!(o.done, Some((32, 2)));
        assert!(parse(b"Q 1\n", Path::new("t"), Unit::Compressor, 259).is_err());
        assert!(parse(b"O 1 2\n", Path::new("t"), Unit::Compressor, 259).is_err());
    }

    #[test]
    fn parses_block_records() {
        let text = format!("O 0 4 4 1 0 {}\n", "0".repeat(64));
        let o = parse(text.as_bytes(), Path::new("t"), Unit::Decompressor, 259).expect("parse");
        assert_eq!(
            o.records[0].fields,
            Ok(Fields::Block {
                error: true,
                model: 0,
                block: [0; 32]
            })
        );
    }
}
