//! Parsing the MPC testbench's output records (the record format is in
//! the header of `tb/stream_driver.svh`; the buses in `tb/mpc_tb.sv`).

use std::path::{Path, PathBuf};

use golden::mpc::{BLOCK_BYTES, MAX_BLOCK_BYTES};

use crate::hex;
use crate::rtl::Params;
use crate::schedule::ResetEvent;
use crate::stream_unit::LeBus;
use crate::vectors::Block;
use crate::vectors::LEN_WIDTH;
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
            4 => "in_ready high while full (every stage holds a block and out_ready is low)",
            5 => "in_ready low with room (a stage is free or out_ready is high)",
            6 => "out_valid high with no block in flight",
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

/// Width of the testbench's `out_all` bus for `unit`.
pub fn out_width(unit: Unit, params: &Params) -> usize {
    let h = params.header_bits as usize;
    match unit {
        Unit::Compressor => params.max_bits as usize + LEN_WIDTH as usize + h,
        Unit::Decompressor | Unit::Loopback => 8 * BLOCK_BYTES + 1 + h,
    }
}

/// The unit's fields of an `out_all` hex value: `{out_bits, out_len,
/// out_model}` (compressor) or `{out_block, out_error, out_model}`.
fn fields_of(unit: Unit, text: &str, params: &Params) -> Result<Fields, String> {
    let width = out_width(unit, params);
    let bus = LeBus::parse(text, width).ok_or_else(|| {
        let why = if text.bytes().any(|c| matches!(c, b'x' | b'X' | b'z' | b'Z')) {
            " (the simulator drove an unknown/undriven value)"
        } else {
            ""
        };
        format!("`{text}` is not a {width}-bit hex value{why}")
    })?;
    let h = params.header_bits as usize;
    let model = bus.uint(0, h) as u32;
    Ok(match unit {
        Unit::Compressor => {
            let mut bits = [0u8; MAX_BLOCK_BYTES];
            let w = params.max_bits as usize;
            for (d, s) in bits
                .iter_mut()
                .zip(bus.left_aligned(h + LEN_WIDTH as usize, w))
            {
                *d = s;
            }
            Fields::Comp {
                len: bus.uint(h, LEN_WIDTH as usize) as u32,
                model,
                bits,
            }
        }
        Unit::Decompressor | Unit::Loopback => {
            let mut block = [0u8; BLOCK_BYTES];
            block.copy_from_slice(&bus.bytes(h + 1, BLOCK_BYTES));
            Fields::Block {
                error: bus.bit(h),
                model,
                block,
            }
        }
    })
}

/// Parse the records of `text` (the contents of `path`, for messages).
pub fn parse(
    text: &[u8],
    path: &Path,
    unit: Unit,
    params: &Params,
) -> Result<SimOutput, OutputError> {
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
                if f.len() != 5 {
                    return Err(bad(format!("expected 5 fields, found {}", f.len())));
                }
                out.records.push(Record {
                    idx: num(1)?,
                    cycle: num(2)?,
                    latency: num(3)?,
                    fields: fields_of(unit, &String::from_utf8_lossy(f[4]), params),
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
pub fn read(path: &Path, unit: Unit, params: &Params) -> Result<SimOutput, OutputError> {
    let text = std::fs::read(path).map_err(|source| OutputError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    parse(&text, path, unit, params)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> Params {
        Params {
            header_bits: 2,
            max_bits: 258,
            compressor_latency: 3,
            decompressor_latency: 4,
        }
    }

    #[test]
    fn parses_every_record_type() {
        let p = params();
        // {out_bits = 1 then zeros, out_len = 5, out_model = 2}: 269 bits
        let mut bus = LeBus::new();
        bus.put_uint(2, 2);
        bus.put_uint(5, 9);
        bus.put_left_aligned(&[0x80], 1, 258);
        let text = format!(
            "O 0 3 3 {}\nR 10 4 3\nP 11 3\nO 1 c 4 {}\nE timeout\nD 20 2\n",
            bus.hex(),
            "x".repeat(68)
        );
        let o = parse(text.as_bytes(), Path::new("t"), Unit::Compressor, &p).expect("parse");
        assert_eq!(o.records.len(), 2);
        let Ok(Fields::Comp { len, model, bits }) = o.records[0].fields else {
            panic!("fields {:?}", o.records[0].fields);
        };
        assert_eq!((len, model, bits[0], bits[1]), (5, 2, 0x80, 0));
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
        assert!(parse(b"Q 1\n", Path::new("t"), Unit::Compressor, &p).is_err());
        assert!(parse(b"O 1 2\n", Path::new("t"), Unit::Compressor, &p).is_err());
    }

    #[test]
    fn parses_block_records() {
        let p = params();
        // {out_block = byte 0 is 0xa5, out_error = 1, out_model = 0}
        let mut bus = LeBus::new();
        bus.put_uint(0, 2);
        bus.put_bit(true);
        let mut block = [0u8; 32];
        block[0] = 0xa5;
        bus.put_bytes(&block);
        assert_eq!(bus.width(), out_width(Unit::Decompressor, &p));
        let text = format!("O 0 4 4 {}\n", bus.hex());
        let o = parse(text.as_bytes(), Path::new("t"), Unit::Decompressor, &p).expect("parse");
        assert_eq!(
            o.records[0].fields,
            Ok(Fields::Block {
                error: true,
                model: 0,
                block
            })
        );
    }
}
