//! `model-loader`: mutated model files through `ModelSet::parse`.
//!
//! Seeds are the shipped `models/*/model.toml`. Mutations work on the
//! parsed TOML tree (values at their boundaries, wrong types, dropped,
//! renamed and unknown keys, array edits, extra predictors) and on the
//! text (line and character edits, duplicated keys, truncation), and now
//! and then make a huge file (long strings, huge arrays, deep nesting,
//! thousands of tables).
//!
//! Oracle: the loader never panics; a set it accepts has no key outside
//! the file format (`docs/spec/model-format.md`: unknown keys are errors),
//! writes back (`to_toml`) to text that loads to an equal set, and codes
//! blocks (reference and fast codec agree and round-trip).

use std::path::PathBuf;

use golden::mpc::fast::Kernel;
use golden::mpc::{reference, ModelSet, MpcCodec, BLOCK_BYTES};
use toml::{Table, Value};

use crate::rng::{fnv1a, Rng};
use crate::{Finding, FuzzError, Input, Paths, Target};

/// Keys the model-file format defines, per table.
const ROOT_KEYS: [&str; 7] = [
    "format",
    "version",
    "name",
    "selection",
    "custom",
    "provenance",
    "predictor",
];
const CUSTOM_KEYS: [&str; 2] = ["zero_block", "same_words"];
const PROVENANCE_KEYS: [&str; 6] = ["tool", "tool_version", "date", "corpus", "classes", "notes"];
const PREDICTOR_KEYS: [&str; 3] = ["name", "bytes", "reorder"];

const UNKNOWN_KEYS: [&str; 8] = [
    "extra",
    "zero-block",
    "comment",
    "x",
    "bytes2",
    "predictors",
    "tool_verison",
    "Name",
];

const RULES: [&str; 28] = [
    "root",
    "0",
    "31",
    "32",
    "-1",
    "5<<1",
    "5>>7",
    "5<<8",
    "5>>8",
    "5<<-1",
    " 5 ",
    "5 << 2",
    "root ",
    "ROOT",
    "",
    "5<<",
    "<<5",
    "1e3",
    "0x1f",
    "+5",
    "\u{663}",
    "5<<2<<3",
    "99999999999999999999",
    "5>>-0",
    "30>>0",
    "7<<7",
    "root<<1",
    "\u{0}",
];

const STRINGS: [&str; 14] = [
    "",
    " ",
    "zero-run",
    "exact",
    "mpc-model-set",
    "identity",
    "Zero-Run",
    "\u{0}",
    "\u{e9}\u{301}",
    "\n",
    "\"",
    "a\\b",
    "int8",
    "#",
];

const INTS: [i64; 12] = [
    0,
    1,
    -1,
    2,
    31,
    32,
    255,
    256,
    i64::MAX,
    i64::MIN,
    1 << 31,
    1 << 32,
];

const LINES: [&str; 14] = [
    "foo = 1",
    "[custom]",
    "[[predictor]]",
    "[extra]",
    "custom.x = 1",
    "name = \"x\"",
    "version = 1",
    "format = \"mpc-model-set\"",
    "[provenance]",
    "reorder = \"identity\"",
    "bytes = []",
    "zero_block = true",
    "[predictor]",
    "predictor = []",
];

pub struct ModelLoader {
    seeds: Vec<(String, Table)>,
    tmp: PathBuf,
}

impl ModelLoader {
    pub fn new(paths: &Paths) -> Result<Self, FuzzError> {
        let mut seeds = Vec::new();
        let rd = std::fs::read_dir(&paths.models).map_err(|e| {
            FuzzError::Setup(format!("model sets in {}: {e}", paths.models.display()))
        })?;
        let mut dirs: Vec<PathBuf> = rd.filter_map(|e| e.ok()).map(|e| e.path()).collect();
        dirs.sort();
        for d in dirs {
            let f = d.join("model.toml");
            if let Ok(text) = std::fs::read_to_string(&f) {
                let table: Table = text
                    .parse()
                    .map_err(|e| FuzzError::Setup(format!("{}: {e}", f.display())))?;
                seeds.push((text, table));
            }
        }
        if seeds.is_empty() {
            return Err(FuzzError::Setup(format!(
                "no model.toml under {}",
                paths.models.display()
            )));
        }
        Ok(ModelLoader {
            seeds,
            tmp: std::env::temp_dir().join(format!("mpcgen-fuzz-{}.toml", std::process::id())),
        })
    }
}

// ---- tree mutations -------------------------------------------------------------

#[derive(Clone, Debug)]
enum Seg {
    Key(String),
    Idx(usize),
}

fn paths_of(v: &Value, at: &mut Vec<Seg>, out: &mut Vec<Vec<Seg>>, depth: usize) {
    if depth > 4 {
        return;
    }
    match v {
        Value::Table(t) => {
            for (k, x) in t {
                at.push(Seg::Key(k.clone()));
                out.push(at.clone());
                paths_of(x, at, out, depth + 1);
                at.pop();
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                at.push(Seg::Idx(i));
                out.push(at.clone());
                paths_of(x, at, out, depth + 1);
                at.pop();
            }
        }
        _ => {}
    }
}

fn node_mut<'a>(root: &'a mut Value, path: &[Seg]) -> Option<&'a mut Value> {
    let mut v = root;
    for s in path {
        v = match (s, v) {
            (Seg::Key(k), Value::Table(t)) => t.get_mut(k)?,
            (Seg::Idx(i), Value::Array(a)) => a.get_mut(*i)?,
            _ => return None,
        };
    }
    Some(v)
}

fn random_value(rng: &mut Rng) -> Value {
    match rng.below(7) {
        0 => Value::Integer(*rng.pick(&INTS)),
        1 => Value::String(rng.pick(&STRINGS).to_string()),
        2 => Value::Boolean(rng.bool()),
        3 => Value::Float(*rng.pick(&[0.5, -1.0, f64::NAN, f64::INFINITY, 1e300])),
        4 => Value::Array(Vec::new()),
        5 => Value::Table(Table::new()),
        _ => Value::String(rng.pick(&RULES).to_string()),
    }
}

/// A value of the same kind as `v` at an edge, or of another kind.
fn new_value(rng: &mut Rng, v: &Value) -> Value {
    if rng.chance(1, 4) {
        return random_value(rng);
    }
    match v {
        Value::Integer(i) => Value::Integer(match rng.below(4) {
            0 => i.wrapping_add(1),
            1 => i.wrapping_sub(1),
            2 => i.wrapping_neg(),
            _ => *rng.pick(&INTS),
        }),
        Value::String(s) => Value::String(match rng.below(5) {
            0 => rng.pick(&RULES).to_string(),
            1 => rng.pick(&STRINGS).to_string(),
            2 => format!("{s}{s}"),
            3 => s.to_uppercase(),
            _ => "x".repeat(rng.range(100, 5000) as usize),
        }),
        Value::Boolean(b) => Value::Boolean(!b),
        _ => random_value(rng),
    }
}

fn array_op(rng: &mut Rng, a: &mut Vec<Value>) -> String {
    let n = a.len();
    match rng.below(8) {
        0 if n > 0 => {
            let i = rng.index(n);
            a.remove(i);
            format!("element {i} removed")
        }
        1 if n > 0 => {
            let i = rng.index(n);
            let x = a[i].clone();
            a.insert(i, x);
            format!("element {i} duplicated")
        }
        2 if n > 1 => {
            let (i, j) = (rng.index(n), rng.index(n));
            a.swap(i, j);
            format!("elements {i} and {j} swapped")
        }
        3 if n > 0 => {
            let i = rng.index(n);
            a[i] = new_value(rng, &a[i]);
            format!("element {i} = {}", a[i])
        }
        4 => {
            let x = random_value(rng);
            let i = rng.index(n + 1);
            a.insert(i, x);
            format!("element inserted at {i}")
        }
        5 => {
            let k = rng.index(n + 1);
            a.truncate(k);
            format!("cut to {k} elements")
        }
        6 if n > 0 => {
            let i = rng.index(n);
            let j = rng.index(n);
            a[i] = a[j].clone();
            format!("element {i} = element {j}")
        }
        _ => {
            a.clear();
            "emptied".into()
        }
    }
}

fn tree_op(rng: &mut Rng, t: &mut Table, ops: &mut Vec<String>) {
    let mut root = Value::Table(std::mem::take(t));
    let mut paths = Vec::new();
    paths_of(&root, &mut Vec::new(), &mut paths, 0);
    match rng.below(10) {
        // add an unknown key to one of the tables
        0 | 1 => {
            let mut tables: Vec<Vec<Seg>> = vec![vec![]];
            tables.extend(
                paths
                    .iter()
                    .filter(|p| matches!(node_mut(&mut root, p), Some(Value::Table(_))))
                    .cloned(),
            );
            let p = rng.pick(&tables).clone();
            let k = rng.pick(&UNKNOWN_KEYS).to_string();
            let v = random_value(rng);
            if let Some(Value::Table(x)) = node_mut(&mut root, &p) {
                ops.push(format!("unknown key {k} = {v} at {p:?}"));
                x.insert(k, v);
            }
        }
        // drop or rename a key
        2 | 3 if !paths.is_empty() => {
            let p = rng.pick(&paths).clone();
            let (parent, last) = p.split_at(p.len() - 1);
            let rename = rng.bool();
            let to = if rng.bool() {
                rng.pick(&UNKNOWN_KEYS).to_string()
            } else {
                rng.pick(&ROOT_KEYS).to_string()
            };
            match (node_mut(&mut root, parent), &last[0]) {
                (Some(Value::Table(x)), Seg::Key(k)) => {
                    if let Some(v) = x.remove(k) {
                        if rename {
                            ops.push(format!("key {k} renamed {to}"));
                            x.insert(to, v);
                        } else {
                            ops.push(format!("key {k} dropped"));
                        }
                    }
                }
                (Some(Value::Array(a)), Seg::Idx(i)) if *i < a.len() => {
                    a.remove(*i);
                    ops.push(format!("element {i} of {parent:?} dropped"));
                }
                _ => {}
            }
        }
        // predictors: duplicate, many, none
        4 => {
            if let Value::Table(x) = &mut root {
                if let Some(Value::Array(a)) = x.get_mut("predictor") {
                    match rng.below(3) {
                        0 if !a.is_empty() => {
                            let i = rng.index(a.len());
                            let p = a[i].clone();
                            a.push(p);
                            ops.push(format!("predictor {i} duplicated"));
                        }
                        1 if !a.is_empty() => {
                            let n = if rng.chance(1, 16) {
                                rng.range(240, 260)
                            } else {
                                rng.range(1, 20)
                            } as usize;
                            let p = a[0].clone();
                            a.extend(std::iter::repeat_n(p, n));
                            ops.push(format!("{n} more predictors"));
                        }
                        _ => {
                            a.clear();
                            ops.push("no predictors".into());
                        }
                    }
                }
            }
        }
        // array edits (byte rules, reorders, classes, predictors)
        5 | 6 => {
            let arrays: Vec<Vec<Seg>> = paths
                .iter()
                .filter(|p| matches!(node_mut(&mut root, p), Some(Value::Array(_))))
                .cloned()
                .collect();
            if !arrays.is_empty() {
                let p = rng.pick(&arrays).clone();
                if let Some(Value::Array(a)) = node_mut(&mut root, &p) {
                    let what = array_op(rng, a);
                    ops.push(format!("{p:?}: {what}"));
                }
            }
        }
        // any value at an edge or of another type
        _ if !paths.is_empty() => {
            let p = rng.pick(&paths).clone();
            if let Some(v) = node_mut(&mut root, &p) {
                let nv = new_value(rng, v);
                let shown: String = nv.to_string().chars().take(40).collect();
                ops.push(format!("{p:?} = {shown}"));
                *v = nv;
            }
        }
        _ => {}
    }
    if let Value::Table(x) = root {
        *t = x;
    }
}

// ---- text mutations -------------------------------------------------------------

fn char_boundary(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn text_op(rng: &mut Rng, s: &mut String, ops: &mut Vec<String>) {
    let mut lines: Vec<String> = s.lines().map(str::to_string).collect();
    let n = lines.len();
    match rng.below(10) {
        0 if n > 0 => {
            let i = rng.index(n);
            lines.remove(i);
            ops.push(format!("line {i} deleted"));
        }
        1 if n > 0 => {
            let i = rng.index(n);
            let l = lines[i].clone();
            lines.insert(i, l);
            ops.push(format!("line {i} duplicated"));
        }
        2 if n > 1 => {
            let (i, j) = (rng.index(n), rng.index(n));
            lines.swap(i, j);
            ops.push(format!("lines {i} and {j} swapped"));
        }
        3 => {
            let i = rng.index(n + 1);
            let l = rng.pick(&LINES).to_string();
            ops.push(format!("line {l:?} inserted at {i}"));
            lines.insert(i, l);
        }
        4 | 5 => {
            let k = rng.small(8);
            for _ in 0..k {
                let at = char_boundary(s, rng.index(s.len() + 1));
                let c = *rng.pick(&[
                    '[', ']', '{', '}', '=', '"', '\'', '#', '\n', ',', '.', '0', '9', '-', 'a',
                    ' ', '\\', '\u{0}', '\u{feff}', '\u{e9}',
                ]);
                if rng.bool() && at < s.len() {
                    let w = s[at..].chars().next().map_or(0, char::len_utf8);
                    s.replace_range(at..at + w, &c.to_string());
                } else {
                    s.insert(at, c);
                }
            }
            ops.push(format!("{k} characters edited"));
            return;
        }
        6 => {
            let at = char_boundary(s, rng.index(s.len() + 1));
            let len = rng.small(64) as usize;
            let end = char_boundary(s, at + len);
            s.replace_range(at..end, "");
            ops.push(format!("{} bytes deleted at {at}", end - at));
            return;
        }
        7 => {
            let at = char_boundary(s, rng.index(s.len() + 1));
            s.truncate(at);
            ops.push(format!("cut at byte {at}"));
            return;
        }
        8 => {
            // a whole section again (duplicate table or array-of-tables entry)
            let heads: Vec<usize> = (0..n).filter(|&i| lines[i].starts_with('[')).collect();
            if !heads.is_empty() {
                let h = *rng.pick(&heads);
                let end = (h + 1..n).find(|&i| lines[i].starts_with('[')).unwrap_or(n);
                let sec: Vec<String> = lines[h..end].to_vec();
                lines.extend(sec);
                ops.push(format!("section at line {h} repeated"));
            }
        }
        _ => {
            // a number literal changed in place
            let digits: Vec<usize> = s
                .bytes()
                .enumerate()
                .filter(|(_, b)| b.is_ascii_digit())
                .map(|(i, _)| i)
                .collect();
            if !digits.is_empty() {
                let at = *rng.pick(&digits);
                let rep = *rng.pick(&[
                    "-1",
                    "99999999999999999999",
                    "1.5",
                    "0x10",
                    "256",
                    "1_0",
                    "",
                ]);
                s.replace_range(at..at + 1, rep);
                ops.push(format!("digit at {at} -> {rep:?}"));
            }
            return;
        }
    }
    let mut t = lines.join("\n");
    t.push('\n');
    *s = t;
}

/// A huge file: long strings, huge arrays, deep nesting, many tables.
fn huge_op(rng: &mut Rng, s: &mut String, ops: &mut Vec<String>) {
    let scale = *rng.pick(&[1usize << 12, 1 << 16, 1 << 19, 1 << 21]);
    match rng.below(6) {
        0 => {
            let line = format!("notes = \"{}\"", "n".repeat(scale * 3));
            replace_or_insert(s, "notes = ", "[provenance]", &line);
            ops.push(format!("notes of {} bytes", scale * 3));
        }
        1 => {
            let mut line = String::with_capacity(scale * 5 + 16);
            line.push_str("bytes = [");
            for i in 0..scale {
                line.push_str(if i == 0 { "\"1\"" } else { ",\"1\"" });
            }
            line.push(']');
            replace_or_insert(s, "bytes = ", "[[predictor]]", &line);
            ops.push(format!("bytes with {scale} entries"));
        }
        2 => {
            let mut line = String::with_capacity(scale * 8 + 16);
            line.push_str("reorder = [");
            for i in 0..scale {
                if i > 0 {
                    line.push(',');
                }
                line.push_str(&(i % 256).to_string());
            }
            line.push(']');
            replace_or_insert(s, "reorder = ", "[[predictor]]", &line);
            ops.push(format!("reorder with {scale} entries"));
        }
        3 => {
            let d = *rng.pick(&[64usize, 1000, scale]);
            let line = if rng.bool() {
                format!("reorder = {}{}", "[".repeat(d), "]".repeat(d))
            } else {
                format!("reorder = {}1{}", "{a=".repeat(d), "}".repeat(d))
            };
            replace_or_insert(s, "reorder = ", "[[predictor]]", &line);
            ops.push(format!("reorder nested {d} deep"));
        }
        4 => {
            let sec = match s.rfind("[[predictor]]") {
                Some(i) => s[i..].to_string(),
                None => "[[predictor]]\nname = \"p\"\n".to_string(),
            };
            let k = (scale * 8 / sec.len().max(1)).max(2);
            let mut t = String::with_capacity(s.len() + k * (sec.len() + 1));
            t.push_str(s);
            for _ in 0..k {
                t.push('\n');
                t.push_str(&sec);
            }
            *s = t;
            ops.push(format!("{k} more predictor sections"));
        }
        _ => {
            let key = "k".repeat(scale * 2);
            replace_or_insert(s, "\u{0}", "[provenance]", &format!("{key} = 1"));
            ops.push(format!("key of {} bytes", scale * 2));
        }
    }
}

/// Replace the first line starting with `prefix`, or insert `line` after
/// the first line equal to `after` (at the end when there is none).
fn replace_or_insert(s: &mut String, prefix: &str, after: &str, line: &str) {
    let mut lines: Vec<&str> = s.lines().collect();
    if let Some(i) = lines.iter().position(|l| l.starts_with(prefix)) {
        lines[i] = line;
    } else if let Some(i) = lines.iter().position(|l| l.trim() == after) {
        lines.insert(i + 1, line);
    } else {
        lines.push(line);
    }
    let mut t = lines.join("\n");
    t.push('\n');
    *s = t;
}

// ---- oracle ---------------------------------------------------------------------

/// The first key of `text` outside the model-file format, as a dotted
/// path; `None` when every key is known (or the text is not TOML).
pub fn unknown_key(text: &str) -> Option<String> {
    let t: Table = text.parse().ok()?;
    let check = |t: &Table, allowed: &[&str], at: &str| -> Option<String> {
        t.keys()
            .find(|k| !allowed.contains(&k.as_str()))
            .map(|k| format!("{at}{k}"))
    };
    if let Some(k) = check(&t, &ROOT_KEYS, "") {
        return Some(k);
    }
    if let Some(Value::Table(c)) = t.get("custom") {
        if let Some(k) = check(c, &CUSTOM_KEYS, "custom.") {
            return Some(k);
        }
    }
    if let Some(Value::Table(p)) = t.get("provenance") {
        if let Some(k) = check(p, &PROVENANCE_KEYS, "provenance.") {
            return Some(k);
        }
    }
    if let Some(Value::Array(a)) = t.get("predictor") {
        for (i, p) in a.iter().enumerate() {
            if let Value::Table(p) = p {
                if let Some(k) = check(p, &PREDICTOR_KEYS, &format!("predictor[{i}].")) {
                    return Some(k);
                }
            }
        }
    }
    None
}

/// Blocks every accepted set must code: zeros, a ramp, repeated words and
/// bytes derived from the file.
fn probe_blocks(text: &[u8]) -> Vec<[u8; BLOCK_BYTES]> {
    let mut ramp = [0u8; BLOCK_BYTES];
    for (i, b) in ramp.iter_mut().enumerate() {
        *b = i as u8;
    }
    let mut words = [0u8; BLOCK_BYTES];
    for c in words.chunks_mut(4) {
        c.copy_from_slice(&0x1234_5678u32.to_le_bytes());
    }
    let mut rng = Rng::new(fnv1a(text));
    let mut rnd = [0u8; BLOCK_BYTES];
    rng.fill(&mut rnd);
    vec![[0u8; BLOCK_BYTES], ramp, words, rnd]
}

impl ModelLoader {
    fn check_set(&self, text: &str, set: &ModelSet) -> Result<(), Finding> {
        if let Some(k) = unknown_key(text) {
            return Err(Finding::new(
                "unknown-key-accepted",
                format!("the loader accepts a file with the unknown key `{k}`"),
            ));
        }
        let t2 = set.to_toml().map_err(|e| {
            Finding::new(
                "write-failed",
                format!("a set the loader accepts cannot be written: {e}"),
            )
        })?;
        match ModelSet::parse(&t2, "written.toml") {
            Ok(s2) if &s2 == set => {
                if s2.to_toml().ok().as_deref() != Some(t2.as_str()) {
                    return Err(Finding::new(
                        "roundtrip-unstable",
                        "writing the set read back gives other text",
                    ));
                }
            }
            Ok(_) => {
                return Err(Finding::new(
                    "roundtrip-changed",
                    "the set written back loads to a different set",
                ))
            }
            Err(e) => {
                return Err(Finding::new(
                    "roundtrip-rejected",
                    format!("the set written back does not load: {e}"),
                ))
            }
        }
        let fast = MpcCodec::with_kernel(set, Kernel::Scalar);
        for b in probe_blocks(text.as_bytes()) {
            let c = reference::compress(&b, set);
            match reference::decompress(c.as_bytes(), c.len as usize, set) {
                Ok(d) if d == b => {}
                _ => {
                    return Err(Finding::new(
                        "set-not-usable",
                        "a block compressed with the loaded set does not decode to itself",
                    ))
                }
            }
            if fast.compress(&b) != c {
                return Err(Finding::new(
                    "set-not-usable",
                    "fast and reference codecs differ on the loaded set",
                ));
            }
        }
        Ok(())
    }
}

impl Target for ModelLoader {
    fn next_input(&mut self, rng: &mut Rng) -> Input {
        let (text, table) = &self.seeds[rng.index(self.seeds.len())];
        let mut ops = Vec::new();
        let r = rng.below(200);
        let mut s = if r < 1 {
            let mut s = text.clone();
            huge_op(rng, &mut s, &mut ops);
            s
        } else if r < 130 {
            let mut t = table.clone();
            for _ in 0..rng.small(3) {
                tree_op(rng, &mut t, &mut ops);
            }
            match toml::to_string(&t) {
                Ok(s) => s,
                Err(e) => {
                    ops.push(format!("(not writable as TOML: {e}; seed text kept)"));
                    text.clone()
                }
            }
        } else {
            text.clone()
        };
        if r >= 130 || rng.chance(1, 3) {
            for _ in 0..rng.small(3) {
                text_op(rng, &mut s, &mut ops);
            }
        }
        let mut data = s.into_bytes();
        if rng.chance(1, 100) && !data.is_empty() {
            let i = rng.index(data.len());
            data[i] = 0xff;
            ops.push(format!("byte {i} = 0xff (not UTF-8)"));
        }
        Input {
            tag: "toml".into(),
            data,
            note: ops.join("; "),
        }
    }

    fn check(&self, input: &Input) -> Result<(), Finding> {
        let text = match std::str::from_utf8(&input.data) {
            Ok(t) => t,
            Err(_) => {
                // the file entry point must refuse it
                std::fs::write(&self.tmp, &input.data)
                    .map_err(|e| Finding::new("unreadable-input", format!("temp file: {e}")))?;
                let r = ModelSet::load(&self.tmp);
                let _ = std::fs::remove_file(&self.tmp);
                if r.is_ok() {
                    return Err(Finding::new(
                        "invalid-utf8-accepted",
                        "ModelSet::load accepts a file that is not UTF-8",
                    ));
                }
                return Ok(());
            }
        };
        match ModelSet::parse(text, "fuzz.toml") {
            Ok(set) => self.check_set(text, &set),
            Err(e) => {
                if e.to_string().trim().is_empty() {
                    return Err(Finding::new(
                        "empty-error",
                        "the loader fails with no message",
                    ));
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_check_names_unknown_keys() {
        let paths = Paths::default_for_workspace();
        let text =
            std::fs::read_to_string(paths.models.join("example/model.toml")).expect("example set");
        assert_eq!(unknown_key(&text), None);
        let with = text.replace("[custom]\n", "[custom]\nextra = 1\n");
        assert_eq!(unknown_key(&with).as_deref(), Some("custom.extra"));
    }

    #[test]
    fn shipped_sets_pass_the_oracle_and_mutations_stay_deterministic() {
        let paths = Paths::default_for_workspace();
        let mut t = ModelLoader::new(&paths).expect("target");
        for (text, _) in &t.seeds {
            let input = Input {
                tag: "toml".into(),
                data: text.clone().into_bytes(),
                note: String::new(),
            };
            assert_eq!(t.check(&input), Ok(()));
        }
        let mut a = Rng::new(9);
        let mut b = Rng::new(9);
        for _ in 0..50 {
            let x = t.next_input(&mut a);
            let y = t.next_input(&mut b);
            assert_eq!(x, y);
        }
    }
}
