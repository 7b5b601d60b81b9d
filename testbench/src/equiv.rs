//! Deciding surviving mutants formally (docs/hw/cosim.md, "Closing the
//! survivors"): the combinational views of the original unit and of the
//! mutant ([`hdl::ir::comb`]) on the outputs the mutation reaches are
//! mapped to AIGER by Yosys, and ABC's combinational equivalence checker
//! (`cec`) either proves them equivalent or returns an input on which the
//! two differ, a vector that kills the mutant.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use hdl::ir::comb;
use hdl::ir::mutate::{self, Mutation};
use hdl::ir::Module;

/// What the formal check says about one mutant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The views are equivalent on every output the mutation reaches.
    Equivalent,
    /// Input port values (bits, least significant first) on which the
    /// views differ.
    Counterexample(BTreeMap<String, Vec<bool>>),
    /// The combinational argument does not apply (why).
    OutOfScope(String),
    /// ABC gave up within its limits (what it said).
    Undecided(String),
}

/// A verdict with the time the check took.
#[derive(Clone, Debug)]
pub struct Decision {
    pub verdict: Verdict,
    pub seconds: f64,
}

#[derive(Debug, thiserror::Error)]
pub enum EquivError {
    #[error("`{tool}` could not be run ({source}); it comes with Yosys (make setup)")]
    Tool {
        tool: &'static str,
        #[source]
        source: std::io::Error,
    },
    #[error("`{tool}` failed on {dir}: {tail}")]
    Failed {
        tool: &'static str,
        dir: PathBuf,
        tail: String,
    },
    #[error("the combinational view of mutant `{mutation}`: {source}")]
    Ir {
        mutation: String,
        #[source]
        source: hdl::ir::IrError,
    },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: unexpected ABC counterexample line `{line}`")]
    Counterexample { path: PathBuf, line: String },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> EquivError + '_ {
    move |source| EquivError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn tail(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(8)..].join("\n")
}

fn run_tool(tool: &'static str, args: &[&str], dir: &Path) -> Result<String, EquivError> {
    let out = Command::new(tool)
        .args(args)
        .current_dir(dir)
        .output()
        .map_err(|source| EquivError::Tool { tool, source })?;
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    if !out.status.success() {
        return Err(EquivError::Failed {
            tool,
            dir: dir.to_path_buf(),
            tail: tail(text.as_bytes()),
        });
    }
    Ok(text)
}

/// Run `tool` in `dir` with its output (stdout and stderr) in `out`,
/// stopping it after `limit`: the output, or `None` when it was stopped.
fn run_limited(
    tool: &'static str,
    args: &[&str],
    dir: &Path,
    out: &Path,
    limit: Duration,
) -> Result<Option<String>, EquivError> {
    let file = std::fs::File::create(out).map_err(io(out))?;
    let err = file.try_clone().map_err(io(out))?;
    let mut child = Command::new(tool)
        .args(args)
        .current_dir(dir)
        .stdout(file)
        .stderr(err)
        .spawn()
        .map_err(|source| EquivError::Tool { tool, source })?;
    let t0 = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().map_err(io(out))? {
            break status;
        }
        if t0.elapsed() >= limit {
            // it may have just finished: either way it is gone after this
            let _ = child.kill();
            let _ = child.wait();
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let text = std::fs::read_to_string(out).map_err(io(out))?;
    if !status.success() {
        return Err(EquivError::Failed {
            tool,
            dir: dir.to_path_buf(),
            tail: tail(text.as_bytes()),
        });
    }
    Ok(Some(text))
}

/// Map one view to an AIGER file `<stem>.aig` (with its port map
/// `<stem>.map`) in `dir`.
fn to_aiger(view: &Module, header: &[String], dir: &Path, stem: &str) -> Result<(), EquivError> {
    let v = dir.join(format!("{stem}.v"));
    let text = view.emit(header).map_err(|source| EquivError::Ir {
        mutation: stem.to_string(),
        source,
    })?;
    std::fs::write(&v, text).map_err(io(&v))?;
    let script = format!(
        "read_verilog {stem}.v; proc; opt_clean; techmap; aigmap; \
         write_aiger -map {stem}.map {stem}.aig"
    );
    run_tool("yosys", &["-q", "-p", &script], dir)?;
    Ok(())
}

/// Decide every mutation of `muts` (mutants of `module`) under `dir`, `jobs`
/// at a time, giving ABC `seconds` each (its own limit, and then it is
/// stopped: undecided). The views, their AIGER
/// files and ABC's answer stay in `dir/gold<k>/` (one per set of reached
/// outputs) and `dir/m<id>/`.
pub fn decide_all(
    module: &Module,
    muts: &[Mutation],
    dir: &Path,
    seconds: u32,
    jobs: usize,
) -> Result<Vec<Decision>, EquivError> {
    let scopes: Vec<Result<Vec<String>, String>> = muts
        .iter()
        .map(|mu| comb::data_path_scope(module, mu))
        .collect();
    // one original view per set of reached outputs
    let mut golds: Vec<Vec<String>> = Vec::new();
    for o in scopes.iter().flatten() {
        if !golds.contains(o) {
            golds.push(o.clone());
        }
    }
    let header = |what: &str| {
        vec![format!(
            "Combinational view of {what}, for the equivalence check of mutants: not a design file."
        )]
    };
    let gold_dirs: Vec<PathBuf> = (0..golds.len())
        .map(|k| dir.join(format!("gold{k}")))
        .collect();
    crate::work_queue(golds.len(), jobs, |k| {
        let d = &gold_dirs[k];
        std::fs::create_dir_all(d).map_err(io(d))?;
        let view = comb::transparent(module, &golds[k]).map_err(|source| EquivError::Ir {
            mutation: "(none)".to_string(),
            source,
        })?;
        to_aiger(&view, &header("the unit as generated"), d, "view")
    })
    .into_iter()
    .collect::<Result<Vec<()>, EquivError>>()?;
    crate::work_queue(muts.len(), jobs, |i| {
        let mu = &muts[i];
        let t0 = Instant::now();
        let done = |verdict| Decision {
            verdict,
            seconds: t0.elapsed().as_secs_f64(),
        };
        let outputs = match &scopes[i] {
            Ok(o) => o,
            Err(why) => return Ok(done(Verdict::OutOfScope(why.clone()))),
        };
        let g = golds.iter().position(|o| o == outputs).unwrap_or(0);
        let gold = &gold_dirs[g];
        let d = dir.join(format!("m{}", mu.id));
        std::fs::create_dir_all(&d).map_err(io(&d))?;
        let ir = |source| EquivError::Ir {
            mutation: mu.text.clone(),
            source,
        };
        let mutant = mutate::apply(module, mu).map_err(ir)?;
        let view = comb::transparent(&mutant, outputs).map_err(ir)?;
        to_aiger(&view, &header(&format!("mutant `{}`", mu.text)), &d, "view")?;
        let gold_map_path = gold.join("view.map");
        let map = std::fs::read_to_string(&gold_map_path).map_err(io(&gold_map_path))?;
        let gate_map_path = d.join("view.map");
        if std::fs::read_to_string(&gate_map_path).map_err(io(&gate_map_path))? != map {
            return Err(EquivError::Failed {
                tool: "yosys",
                dir: d.clone(),
                tail: "the two views' AIGER port maps differ".to_string(),
            });
        }
        let gold_aig = gold.join("view.aig");
        let abc = format!(
            "cec -T {seconds} -C 10000000 {} view.aig",
            gold_aig.display()
        );
        let said_path = d.join("abc.txt");
        let limit = Duration::from_secs(u64::from(seconds));
        let Some(said) = run_limited("yosys-abc", &["-c", &abc], &d, &said_path, limit)? else {
            return Ok(done(Verdict::Undecided(format!(
                "ABC gave no answer within {seconds} s (--prove-seconds)"
            ))));
        };
        if said.contains("Networks are equivalent") {
            return Ok(done(Verdict::Equivalent));
        }
        if !said.contains("NOT EQUIVALENT") {
            return Ok(done(Verdict::Undecided(tail(said.as_bytes()))));
        }
        Ok(done(Verdict::Counterexample(parse_counterexample(
            &map, &said, &said_path,
        )?)))
    })
    .into_iter()
    .collect()
}

/// The input port values of ABC's counterexample (`Input pattern:  pi134=0
/// pi135=1 ...`; inputs ABC leaves out are 0), by the view's AIGER port
/// map (`input <index> <bit> <port>`).
fn parse_counterexample(
    map: &str,
    said: &str,
    path: &Path,
) -> Result<BTreeMap<String, Vec<bool>>, EquivError> {
    let bad = |line: &str| EquivError::Counterexample {
        path: path.to_path_buf(),
        line: line.to_string(),
    };
    // AIGER input index -> (port, bit)
    let mut inputs: BTreeMap<usize, (String, usize)> = BTreeMap::new();
    let mut widths: BTreeMap<String, usize> = BTreeMap::new();
    for line in map.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if let ["input", i, bit, port] = f[..] {
            let (Ok(i), Ok(bit)) = (i.parse::<usize>(), bit.parse::<usize>()) else {
                return Err(bad(line));
            };
            let w = widths.entry(port.to_string()).or_insert(0);
            *w = (*w).max(bit + 1);
            inputs.insert(i, (port.to_string(), bit));
        }
    }
    let mut values: BTreeMap<String, Vec<bool>> = widths
        .iter()
        .map(|(p, &w)| (p.clone(), vec![false; w]))
        .collect();
    let line = said
        .lines()
        .find(|l| l.trim_start().starts_with("Input pattern:"))
        .ok_or_else(|| bad("(no `Input pattern:` line)"))?;
    for item in line.trim_start()["Input pattern:".len()..].split_whitespace() {
        let (idx, val) = item
            .strip_prefix("pi")
            .and_then(|r| r.split_once('='))
            .ok_or_else(|| bad(item))?;
        let i: usize = idx.parse().map_err(|_| bad(item))?;
        let (port, bit) = inputs.get(&i).ok_or_else(|| bad(item))?;
        if let Some(v) = values.get_mut(port).and_then(|v| v.get_mut(*bit)) {
            *v = val == "1";
        }
    }
    Ok(values)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_past_its_limit_is_stopped() {
        let dir = std::env::temp_dir().join(format!("equiv-limit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let out = dir.join("out.txt");
        let t0 = Instant::now();
        let r = run_limited("sleep", &["30"], &dir, &out, Duration::from_millis(300));
        assert!(matches!(r, Ok(None)), "{r:?}");
        assert!(t0.elapsed() < Duration::from_secs(10));
        let r = run_limited("echo", &["done"], &dir, &out, Duration::from_secs(30));
        assert_eq!(r.expect("runs").as_deref(), Some("done\n"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn counterexamples_map_back_to_ports() {
        let map = "input 0 0 b\ninput 1 1 b\ninput 2 0 a\noutput 0 0 y\n";
        let said = "Input pattern:  pi2=1 pi1=1\nNetworks are NOT EQUIVALENT.\n";
        let v = parse_counterexample(map, said, Path::new("x")).expect("parses");
        assert_eq!(v["b"], vec![false, true]);
        assert_eq!(v["a"], vec![true]);
        for bad in [
            "Input pattern:  pi7=1\n",
            "Input pattern:  q1=1\n",
            "nothing\n",
        ] {
            assert!(
                parse_counterexample(map, bad, Path::new("x")).is_err(),
                "{bad}"
            );
        }
    }
}
