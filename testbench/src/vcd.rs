//! The VCD files Icarus and Verilator write, read with the `vcd` crate
//! into the variable tree and every value change, so that pipeline
//! registers can be read by name at a given time.

use std::collections::HashMap;

/// VCD problems.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VcdError {
    /// What the `vcd` crate's parser says (its message names the line).
    #[error("VCD: {0}")]
    Parse(String),
}

/// One `$var`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Var {
    /// Enclosing scopes, outermost first (e.g. `["TOP", "mpc_tb", "dut"]`).
    pub scope: Vec<String>,
    pub name: String,
    pub width: u32,
    /// The VCD identifier code.
    pub code: String,
}

impl Var {
    /// `scope.name` as GTKWave shows it, with `[w-1:0]` for vectors.
    pub fn path(&self) -> String {
        let mut s = self.scope.join(".");
        if !s.is_empty() {
            s.push('.');
        }
        s.push_str(&self.name);
        if self.width > 1 {
            s.push_str(&format!("[{}:0]", self.width - 1));
        }
        s
    }
}

/// A parsed VCD.
#[derive(Clone, Debug, Default)]
pub struct Vcd {
    pub vars: Vec<Var>,
    /// Per identifier code: (time, value) in time order; vector values are
    /// as written (`0101`, leading zeros possibly dropped).
    changes: HashMap<String, Vec<(u64, String)>>,
    /// Last timestamp.
    pub end: u64,
}

impl Vcd {
    pub fn parse(text: &str) -> Result<Vcd, VcdError> {
        Vcd::read(text, false)
    }

    /// Only the variable tree (everything up to `$enddefinitions`), for
    /// large dumps: the text may end anywhere after it.
    pub fn parse_header(text: &str) -> Result<Vcd, VcdError> {
        Vcd::read(text, true)
    }

    fn read(text: &str, header_only: bool) -> Result<Vcd, VcdError> {
        use vcd::Command;
        let mut vcd = Vcd::default();
        let mut scope: Vec<String> = Vec::new();
        let mut time = 0u64;
        for cmd in vcd::Parser::new(text.as_bytes()) {
            let cmd = cmd.map_err(|e| VcdError::Parse(e.to_string()))?;
            let mut change = |code: &vcd::IdCode, value: String| {
                vcd.changes
                    .entry(code.to_string())
                    .or_default()
                    .push((time, value));
            };
            match cmd {
                Command::ScopeDef(_, name) => scope.push(name),
                Command::Upscope => {
                    scope.pop();
                }
                Command::VarDef(_, width, code, name, _) => vcd.vars.push(Var {
                    scope: scope.clone(),
                    name,
                    width,
                    code: code.to_string(),
                }),
                Command::Enddefinitions if header_only => break,
                Command::Timestamp(t) => {
                    time = t;
                    vcd.end = vcd.end.max(t);
                }
                Command::ChangeScalar(code, v) => change(&code, v.to_string()),
                Command::ChangeVector(code, v) => {
                    change(&code, v.iter().map(|b| b.to_string()).collect())
                }
                // dates, comments, $dumpvars/$end, real and string changes
                _ => {}
            }
        }
        Ok(vcd)
    }

    /// The variable `name` in a scope whose path ends with `scope`
    /// (e.g. `["dut"]`, or `["mpc_tb", "comp"]`).
    pub fn find(&self, scope: &[&str], name: &str) -> Option<&Var> {
        self.vars.iter().find(|v| {
            v.name == name
                && v.scope.len() >= scope.len()
                && v.scope[v.scope.len() - scope.len()..]
                    .iter()
                    .zip(scope)
                    .all(|(a, b)| a == b)
        })
    }

    /// The variables directly in a scope ending with `scope`.
    pub fn vars_in<'a>(&'a self, scope: &'a [&'a str]) -> impl Iterator<Item = &'a Var> + 'a {
        self.vars.iter().filter(move |v| {
            v.scope.len() >= scope.len()
                && v.scope[v.scope.len() - scope.len()..]
                    .iter()
                    .zip(scope)
                    .all(|(a, b)| a == b)
        })
    }

    /// The value of `var` at time `t` (after the changes at `t`), as
    /// `width` characters of `0`/`1`/`x`/`z`, MSB first; `None` before its
    /// first change.
    pub fn value_at(&self, var: &Var, t: u64) -> Option<String> {
        let ch = self.changes.get(&var.code)?;
        let k = ch.partition_point(|(time, _)| *time <= t);
        if k == 0 {
            return None;
        }
        Some(extend(&ch[k - 1].1, var.width))
    }

    /// Times at which `var` changes to `value` (a scalar `0`/`1` or bits).
    pub fn rises(&self, var: &Var, value: &str) -> Vec<u64> {
        self.changes.get(&var.code).map_or_else(Vec::new, |ch| {
            ch.iter()
                .filter(|(_, v)| extend(v, var.width) == extend(value, var.width))
                .map(|(t, _)| *t)
                .collect()
        })
    }
}

/// Extend a VCD vector value to `width` (VCD drops leading zeros; a leading
/// `x`/`z` extends with itself).
pub fn extend(v: &str, width: u32) -> String {
    let w = width as usize;
    if v.len() >= w {
        return v[v.len() - w..].to_string();
    }
    let fill = match v.as_bytes().first() {
        Some(b'x') => 'x',
        Some(b'z') => 'z',
        _ => '0',
    };
    let mut s: String = std::iter::repeat_n(fill, w - v.len()).collect();
    s.push_str(v);
    s
}

/// A `0`/`1` string as hex (unknown bits make the digit `x`).
pub fn bits_to_hex(bits: &str) -> String {
    let b = bits.as_bytes();
    let pad = (4 - b.len() % 4) % 4;
    let mut s = String::with_capacity(b.len() / 4 + 1);
    let mut digit = 0u8;
    let mut unknown = false;
    for i in 0..pad + b.len() {
        let c = if i < pad { b'0' } else { b[i - pad] };
        match c {
            b'1' => digit = (digit << 1) | 1,
            b'0' => digit <<= 1,
            _ => {
                unknown = true;
                digit <<= 1;
            }
        }
        if (i + 1) % 4 == 0 {
            s.push(if unknown {
                'x'
            } else {
                char::from_digit(digit as u32, 16).unwrap_or('?')
            });
            digit = 0;
            unknown = false;
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    const TINY: &str = "$date today $end
$timescale 1ps $end
$scope module TOP $end
$scope module mpc_tb $end
$var wire 1 ! clk $end
$scope module dut $end
$var reg 1 \" s1_valid $end
$var reg 8 # s1_block [7:0] $end
$var wire 4 $ x [3:0] $end
$upscope $end
$upscope $end
$upscope $end
$enddefinitions $end
#0
$dumpvars
0!
0\"
bx #
b0 $
$end
#5
1!
1\"
b101 #
#10
0!
bz $
#15
1!
b11110000 #
";

    #[test]
    fn reads_a_tiny_vcd() {
        let v = Vcd::parse(TINY).expect("parse");
        assert_eq!(v.vars.len(), 4);
        let blk = v.find(&["dut"], "s1_block").expect("var");
        assert_eq!(blk.scope, vec!["TOP", "mpc_tb", "dut"]);
        assert_eq!(blk.path(), "TOP.mpc_tb.dut.s1_block[7:0]");
        assert_eq!(v.value_at(blk, 0).as_deref(), Some("xxxxxxxx"));
        assert_eq!(v.value_at(blk, 5).as_deref(), Some("00000101"));
        assert_eq!(v.value_at(blk, 14).as_deref(), Some("00000101"));
        assert_eq!(v.value_at(blk, 15).as_deref(), Some("11110000"));
        let valid = v.find(&["mpc_tb", "dut"], "s1_valid").expect("valid");
        assert_eq!(v.rises(valid, "1"), vec![5]);
        let x = v.find(&["dut"], "x").expect("x");
        assert_eq!(v.value_at(x, 12).as_deref(), Some("zzzz"));
        assert!(v.find(&["other"], "x").is_none());
        assert_eq!(v.end, 15);
        assert_eq!(v.vars_in(&["dut"]).count(), 3);
    }

    #[test]
    fn hex_of_bits() {
        assert_eq!(bits_to_hex("11110000"), "f0");
        assert_eq!(bits_to_hex("101"), "5");
        assert_eq!(bits_to_hex("1x010"), "1x");
        assert_eq!(extend("1", 4), "0001");
        assert_eq!(extend("x1", 4), "xxx1");
    }

    #[test]
    fn header_only() {
        let v = Vcd::parse_header(TINY).expect("parse");
        assert_eq!(v.vars.len(), 4);
        assert_eq!(v.end, 0);
    }

    #[test]
    fn rejects_garbage() {
        assert!(Vcd::parse("$enddefinitions $end\n#0\n?what\n").is_err());
    }
}
