//! Deciding surviving mutants formally (docs/hw/cosim.md, "Closing the
//! survivors"): the combinational views of the original unit and of the
//! mutant ([`hdl::ir::comb`]) on the outputs the mutation reaches are
//! mapped to AIGER by Yosys, and ABC's combinational equivalence checker
//! (`cec`) either proves them equivalent or returns an input on which the
//! two differ, a vector that kills the mutant. Control mutants (pipeline
//! control, enables, reset values), outside the views' scope, are decided
//! by temporal induction on a miter of the two sequential units (Yosys
//! `sat -tempinduct`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use hdl::ir::comb;
use hdl::ir::mutate::{self, Mutation};
use hdl::ir::Module;
use hdl::unit::UnitDescription;

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
    /// ABC or Yosys gave up within its limits (what it said, or why).
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

/// The miter of a sequential check: the unit as generated (`gold`) and the
/// mutant (`gate`) on the same inputs; `ok` is high while the two agree
/// on everything a testbench sees: `in_ready`, `out_valid`, and every
/// other output in `reached` while `out_valid` is high (the outputs the
/// mutation cannot reach are equal by construction; leaving them out
/// leaves their logic out of the problem).
fn miter_verilog(desc: &UnitDescription, reached: &[String]) -> String {
    use hdl::unit::{Direction, PortRole};
    let mut v = String::from("module miter (\n");
    let mut decl = Vec::new();
    let mut wires = String::new();
    let (mut g, mut m) = (Vec::new(), Vec::new());
    let mut data = Vec::new();
    for p in &desc.ports {
        let range = if p.width > 1 {
            format!("[{}:0] ", p.width - 1)
        } else {
            String::new()
        };
        match p.dir {
            Direction::Input => {
                decl.push(format!("  input wire {range}{}", p.name));
                g.push(format!(".{0}({0})", p.name));
                m.push(format!(".{0}({0})", p.name));
            }
            Direction::Output => {
                wires.push_str(&format!("  wire {range}g_{0}, m_{0};\n", p.name));
                g.push(format!(".{0}(g_{0})", p.name));
                m.push(format!(".{0}(m_{0})", p.name));
                if p.role() == PortRole::Data && reached.contains(&p.name) {
                    data.push(format!("(g_{0} == m_{0})", p.name));
                }
            }
        }
    }
    decl.push("  output wire ok".to_string());
    v.push_str(&decl.join(",\n"));
    v.push_str("\n);\n");
    v.push_str(&wires);
    v.push_str(&format!("  gold g ({});\n", g.join(", ")));
    v.push_str(&format!("  gate m ({});\n", m.join(", ")));
    let data = if data.is_empty() {
        "1'b1".to_string()
    } else {
        data.join(" && ")
    };
    v.push_str(&format!(
        "  assign ok = (g_in_ready == m_in_ready) && (g_out_valid == m_out_valid) && (!g_out_valid || ({data}));\nendmodule\n"
    ));
    v
}

/// Decide a control mutant (of the pipeline control, an enable or a reset
/// value) by temporal induction on the miter ([`miter_verilog`]) with
/// Yosys' SAT solver: every register starts at zero, reset is high in the
/// first step, and `ok` must hold in every later step; `depth` bounds the
/// induction length. Equivalent when the induction closes; a model of the
/// base case is a run from reset that tells the two apart (not turned
/// into a vector: undecided, with the number of steps); otherwise
/// undecided.
fn decide_sequential(
    module: &Module,
    mutant: &Module,
    desc: &UnitDescription,
    reached: &[String],
    d: &Path,
    seconds: u32,
    depth: u32,
) -> Result<Verdict, EquivError> {
    let write = |name: &str, text: String| -> Result<(), EquivError> {
        let path = d.join(name);
        std::fs::write(&path, text).map_err(io(&path))
    };
    let emit = |m: &Module, what: &str| {
        m.emit(&[format!(
            "{what}, for the sequential equivalence check of a mutant: not a design file."
        )])
        .map_err(|source| EquivError::Ir {
            mutation: what.to_string(),
            source,
        })
    };
    write("gold.v", emit(module, "The unit as generated")?)?;
    write("gate.v", emit(mutant, "The mutant")?)?;
    write("miter.v", miter_verilog(desc, reached))?;
    let name = module.name();
    let script = format!(
        "read_verilog gold.v; rename {name} gold; read_verilog gate.v; rename {name} gate; \
         read_verilog miter.v; prep -top miter; flatten; opt_clean; \
         sat -tempinduct -prove ok 1 -set-at 1 rst 1 -set-init-zero -seq 1 \
         -maxsteps {depth} -timeout {seconds}"
    );
    let out = d.join("yosys-sat.txt");
    let limit = Duration::from_secs(u64::from(seconds) + 30);
    let Some(said) = run_limited("yosys", &["-p", &script], d, &out, limit)? else {
        return Ok(Verdict::Undecided(format!(
            "Yosys gave no answer within {seconds} s (--prove-seconds)"
        )));
    };
    if said.contains("SUCCESS!") {
        return Ok(Verdict::Equivalent);
    }
    if said.contains("model found for base case: FAIL!") {
        return Ok(Verdict::Undecided(
            "not equivalent: a run from reset tells the mutant apart (Yosys sat, base case), not yet a vector".to_string(),
        ));
    }
    Ok(Verdict::Undecided(format!(
        "the induction did not close within {depth} steps (Yosys sat)"
    )))
}

/// Decide every mutation of `muts` (mutants of `module`) under `dir`, `jobs`
/// at a time, giving ABC `seconds` each (its own limit, and then it is
/// stopped: undecided). The views, their AIGER
/// files and ABC's answer stay in `dir/gold<k>/` (one per set of reached
/// outputs) and `dir/m<id>/`.
pub fn decide_all(
    module: &Module,
    desc: &UnitDescription,
    muts: &[Mutation],
    dir: &Path,
    seconds: u32,
    jobs: usize,
) -> Result<Vec<Decision>, EquivError> {
    decide_all_with(module, desc, muts, dir, seconds, jobs, &View::default())
}

/// A validity assumption on a view's signals ([`comb::transparent_cut`]).
pub type Assumption<'a> =
    dyn Fn(&mut Module) -> Result<hdl::ir::Expr, hdl::ir::IrError> + Sync + 'a;

/// How the combinational views are made: registers taken as free inputs
/// (`cuts`: registers that change only while no vector is in flight, such
/// as the active configuration of a unit with programmable slots) and an
/// assumption on them (`assume`: the views' outputs are compared only
/// where it holds).
#[derive(Default)]
pub struct View<'a> {
    pub cuts: Vec<String>,
    pub assume: Option<&'a Assumption<'a>>,
    /// Leave out the one-step check (it ran before, [`one_step_all`]).
    pub skip_one_step: bool,
}

/// What the one-step check ([`one_step_all`]) says about a mutant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OneStep {
    /// The one-step views are equivalent: so are the units.
    Equivalent,
    /// They differ: the values of the one-step view's inputs (every
    /// register, the data inputs) on which they do, when SAT on their
    /// miter gave them. Not a proof of anything (the state may be
    /// unreachable), but a hint for a vector.
    Differs(Option<BTreeMap<String, Vec<bool>>>),
    /// The check does not apply (not a value mutation, no cut registers),
    /// or ABC gave no answer.
    Unknown,
}

/// The one-step check of every mutation of `muts` under `dir` (`m<id>/step`),
/// `jobs` at a time, ABC `seconds` each: with the time it took.
pub fn one_step_all(
    module: &Module,
    muts: &[Mutation],
    dir: &Path,
    seconds: u32,
    jobs: usize,
    view: &View<'_>,
) -> Result<Vec<(OneStep, f64)>, EquivError> {
    let assume = || {
        view.assume
            .map(|a| a as &dyn Fn(&mut Module) -> Result<hdl::ir::Expr, hdl::ir::IrError>)
    };
    crate::work_queue(muts.len(), jobs, |i| {
        let mu = &muts[i];
        let t0 = Instant::now();
        if view.cuts.is_empty() || mu.site != hdl::ir::mutate::Site::Value {
            return Ok((OneStep::Unknown, 0.0));
        }
        if comb::reached_outputs(module, mu).is_empty() {
            return Ok((OneStep::Equivalent, t0.elapsed().as_secs_f64()));
        }
        let d = dir.join(format!("m{}", mu.id)).join("step");
        let r = decide_one_step(module, mu, &d, seconds, assume())?;
        Ok((r, t0.elapsed().as_secs_f64()))
    })
    .into_iter()
    .collect()
}

/// [`decide_all`] with the views of `view`.
pub fn decide_all_with(
    module: &Module,
    desc: &UnitDescription,
    muts: &[Mutation],
    dir: &Path,
    seconds: u32,
    jobs: usize,
    view: &View<'_>,
) -> Result<Vec<Decision>, EquivError> {
    let assume = || {
        view.assume
            .map(|a| a as &dyn Fn(&mut Module) -> Result<hdl::ir::Expr, hdl::ir::IrError>)
    };
    let scopes: Vec<Result<Vec<String>, String>> = muts
        .iter()
        .map(|mu| comb::data_path_scope_cut(module, mu, &view.cuts))
        .collect();
    // the views' inputs: the cuts, and the registers no accepted output
    // reads that hold their own value (taken from the unit as generated,
    // so that every view has the same ports)
    let view_inputs: Vec<String> = if view.cuts.is_empty() {
        Vec::new()
    } else {
        let mut v = view.cuts.clone();
        v.extend(comb::mixed_registers(module, &view.cuts));
        v
    };
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
        let view =
            comb::transparent_cut(module, &golds[k], &view_inputs, assume()).map_err(|source| {
                EquivError::Ir {
                    mutation: "(none)".to_string(),
                    source,
                }
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
        // a signal in no output's cone (enables included), such as a probe
        // wire kept for the locator, cannot change any output
        if comb::reached_outputs(module, mu).is_empty() {
            return Ok(done(Verdict::Equivalent));
        }
        // with cut registers (units with slots), a value mutant whose next
        // registers and outputs are unchanged from every state is
        // equivalent: a small problem, tried first
        if !view.cuts.is_empty() && !view.skip_one_step && mu.site == hdl::ir::mutate::Site::Value {
            let d = dir.join(format!("m{}", mu.id)).join("step");
            if decide_one_step(module, mu, &d, seconds.min(60), assume())? == OneStep::Equivalent {
                return Ok(done(Verdict::Equivalent));
            }
        }
        let outputs = match &scopes[i] {
            Ok(o) => o,
            Err(why) if crate::mutate::is_control(mu) => {
                let d = dir.join(format!("m{}", mu.id));
                std::fs::create_dir_all(&d).map_err(io(&d))?;
                let mutant = mutate::apply(module, mu).map_err(|source| EquivError::Ir {
                    mutation: mu.text.clone(),
                    source,
                })?;
                let depth = 2 * desc.latency as u32 + 4;
                let reached = comb::reached_outputs(module, mu);
                let v = decide_sequential(module, &mutant, desc, &reached, &d, seconds, depth)?;
                return Ok(done(match v {
                    Verdict::Undecided(said) => Verdict::Undecided(format!("{why}; {said}")),
                    v => v,
                }));
            }
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
        let view = comb::transparent_cut(&mutant, outputs, &view_inputs, assume()).map_err(ir)?;
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
        // with cut registers (units with slots) the views are large: ABC's
        // `&cec` first, which decides equivalence faster but prints no
        // input pattern
        let mut fast_said = None;
        if !view_inputs.is_empty() {
            let fast = format!("&r {}; &cec view.aig", gold_aig.display());
            let fast_path = d.join("abc-fast.txt");
            let limit = Duration::from_secs(u64::from(seconds));
            if let Some(t) = run_limited("yosys-abc", &["-c", &fast], &d, &fast_path, limit)? {
                if t.contains("Networks are equivalent") {
                    return Ok(done(Verdict::Equivalent));
                }
                if t.contains("NOT EQUIVALENT") {
                    if let Some(ports) = miter_counterexample(
                        &gold_aig,
                        &d,
                        "view.aig",
                        disproved_output(&t),
                        seconds,
                        &map,
                    )? {
                        return Ok(done(Verdict::Counterexample(ports)));
                    }
                    fast_said = Some(
                        "not equivalent (ABC &cec), but SAT on the miter gave no input pattern",
                    );
                }
            }
        }
        let abc = format!(
            "cec -T {seconds} -C 10000000 {} view.aig",
            gold_aig.display()
        );
        let said_path = d.join("abc.txt");
        let limit = Duration::from_secs(u64::from(seconds));
        let Some(said) = run_limited("yosys-abc", &["-c", &abc], &d, &said_path, limit)? else {
            return Ok(done(Verdict::Undecided(match fast_said {
                Some(f) => {
                    format!("{f}; `cec` gave no answer within {seconds} s (--prove-seconds)")
                }
                None => format!("ABC gave no answer within {seconds} s (--prove-seconds)"),
            })));
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

/// Input port values (bits least significant first).
pub type Ports = BTreeMap<String, Vec<bool>>;

/// Counterexamples at given configurations: for each mutation of `muts`,
/// the views of the unit and of the mutant (as [`decide_all_with`] makes
/// them, `view`'s cuts and mixed registers as inputs) with the inputs of
/// `pins[k]` fixed to those values ([`comb::pin_inputs`]), compared with
/// ABC's `&cec` and, where they differ, SAT on their miter for the other
/// inputs ([`miter_counterexample`]); `pins` in order until one gives a
/// counterexample (`dir/m<id>/pin<k>/`). With a unit's configuration
/// fixed, its wide multiplexers and networks are constants and the miter
/// is that of the data path alone: much smaller than the full views'. The
/// counterexample holds the pinned values too. `None`: no configuration
/// of `pins` gave one within `seconds` each (or the mutation's outputs are
/// out of the views' scope); with the time each took.
pub fn pinned_counterexamples(
    module: &Module,
    muts: &[Mutation],
    dir: &Path,
    seconds: u32,
    jobs: usize,
    view: &View<'_>,
    pins: &[BTreeMap<String, hdl::ir::Bits>],
) -> Result<Vec<(Option<Ports>, f64)>, EquivError> {
    let assume = || {
        view.assume
            .map(|a| a as &dyn Fn(&mut Module) -> Result<hdl::ir::Expr, hdl::ir::IrError>)
    };
    let mut view_inputs = view.cuts.clone();
    view_inputs.extend(comb::mixed_registers(module, &view.cuts));
    let scopes: Vec<Option<Vec<String>>> = muts
        .iter()
        .map(|mu| comb::data_path_scope_cut(module, mu, &view.cuts).ok())
        .collect();
    let mut golds: Vec<Vec<String>> = Vec::new();
    for o in scopes.iter().flatten() {
        if !golds.contains(o) {
            golds.push(o.clone());
        }
    }
    let header = |what: &str| {
        vec![format!(
            "Combinational view of {what} at a fixed configuration, for the equivalence check of mutants: not a design file."
        )]
    };
    let pinned = |m: &Module, outputs: &[String], k: usize| -> Result<Module, hdl::ir::IrError> {
        let v = comb::transparent_cut(m, outputs, &view_inputs, assume())?;
        comb::pin_inputs(&v, &pins[k])
    };
    let gold_dir = |g: usize, k: usize| dir.join(format!("pinned-gold{g}-{k}"));
    crate::work_queue(golds.len() * pins.len(), jobs, |n| {
        let (g, k) = (n / pins.len(), n % pins.len());
        let d = gold_dir(g, k);
        std::fs::create_dir_all(&d).map_err(io(&d))?;
        let v = pinned(module, &golds[g], k).map_err(|source| EquivError::Ir {
            mutation: "(none)".to_string(),
            source,
        })?;
        to_aiger(&v, &header("the unit as generated"), &d, "view")
    })
    .into_iter()
    .collect::<Result<Vec<()>, EquivError>>()?;
    crate::work_queue(muts.len(), jobs, |i| {
        let mu = &muts[i];
        let t0 = Instant::now();
        let Some(outputs) = &scopes[i] else {
            return Ok((None, 0.0));
        };
        let g = golds.iter().position(|o| o == outputs).unwrap_or(0);
        let ir = |source| EquivError::Ir {
            mutation: mu.text.clone(),
            source,
        };
        let mutant = mutate::apply(module, mu).map_err(ir)?;
        for (k, pin) in pins.iter().enumerate() {
            let gold = gold_dir(g, k);
            let d = dir.join(format!("m{}", mu.id)).join(format!("pin{k}"));
            std::fs::create_dir_all(&d).map_err(io(&d))?;
            let v = pinned(&mutant, outputs, k).map_err(ir)?;
            to_aiger(&v, &header(&format!("mutant `{}`", mu.text)), &d, "view")?;
            let gold_map_path = gold.join("view.map");
            let map = std::fs::read_to_string(&gold_map_path).map_err(io(&gold_map_path))?;
            let gold_aig = gold.join("view.aig");
            let script = format!("&r {}; &cec view.aig", gold_aig.display());
            let limit = Duration::from_secs(u64::from(seconds));
            let Some(t) = run_limited(
                "yosys-abc",
                &["-c", &script],
                &d,
                &d.join("abc-fast.txt"),
                limit,
            )?
            else {
                continue;
            };
            if !t.contains("NOT EQUIVALENT") {
                continue;
            }
            let found = miter_counterexample(
                &gold_aig,
                &d,
                "view.aig",
                disproved_output(&t),
                seconds,
                &map,
            )?;
            if let Some(mut ports) = found {
                for (name, b) in pin {
                    ports.insert(name.clone(), (0..b.width()).map(|j| b.bit(j)).collect());
                }
                return Ok((Some(ports), t0.elapsed().as_secs_f64()));
            }
        }
        Ok((None, t0.elapsed().as_secs_f64()))
    })
    .into_iter()
    .collect()
}

/// The miter output ABC's `&cec` names as disproved (`Disproved at least
/// one output of the miter (zero-based number 7)`).
fn disproved_output(said: &str) -> Option<usize> {
    let key = "zero-based number";
    let at = said.find(key)? + key.len();
    let digits: String = said[at..]
        .trim_start()
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// An input on which the views `gold_aig` and `dir/<gate>` differ, by
/// SAT on their miter (ABC `&miter`, one output per output pair): first on
/// the cone of miter output `output` alone (every input kept, `cone -a`;
/// `dsat`), else on the whole miter (`iprove`); ABC writes the satisfying
/// input (`write_cex -n`: `pi<index>@0=<value>` per input) to
/// `dir/cex.txt`, mapped back to ports by the view's port map. `None`
/// when neither finds one within `seconds` each.
fn miter_counterexample(
    gold_aig: &Path,
    dir: &Path,
    gate: &str,
    output: Option<usize>,
    seconds: u32,
    map: &str,
) -> Result<Option<BTreeMap<String, Vec<bool>>>, EquivError> {
    let gold = gold_aig.display();
    let mut scripts = Vec::new();
    if let Some(n) = output {
        scripts.push((
            "abc-cex-cone.txt",
            format!(
                "&r {gold}; &miter {gate}; &put; cone -a -O {n}; strash; dsat; write_cex -n cex.txt"
            ),
        ));
    }
    scripts.push((
        "abc-cex-iprove.txt",
        format!("&r {gold}; &miter {gate}; &put; iprove; write_cex -n cex.txt"),
    ));
    let cex = dir.join("cex.txt");
    for (log, script) in scripts {
        if cex.exists() {
            std::fs::remove_file(&cex).map_err(io(&cex))?;
        }
        let limit = Duration::from_secs(u64::from(seconds));
        let Some(said) = run_limited("yosys-abc", &["-c", &script], dir, &dir.join(log), limit)?
        else {
            continue;
        };
        let sat = said.lines().any(|l| {
            let l = l.trim_start();
            l.starts_with("SATISFIABLE")
        });
        if !sat || !cex.exists() {
            continue;
        }
        let text = std::fs::read_to_string(&cex).map_err(io(&cex))?;
        return parse_cex_file(map, &text, &cex).map(Some);
    }
    Ok(None)
}

/// AIGER input index -> (port, bit), and each input port's width, from a
/// view's port map (`input <index> <bit> <port>`).
type InputMap = (
    BTreeMap<usize, (String, usize)>,
    BTreeMap<String, Vec<bool>>,
);

fn input_map(map: &str, path: &Path) -> Result<InputMap, EquivError> {
    let mut inputs: BTreeMap<usize, (String, usize)> = BTreeMap::new();
    let mut widths: BTreeMap<String, usize> = BTreeMap::new();
    for line in map.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if let ["input", i, bit, port] = f[..] {
            let (Ok(i), Ok(bit)) = (i.parse::<usize>(), bit.parse::<usize>()) else {
                return Err(EquivError::Counterexample {
                    path: path.to_path_buf(),
                    line: line.to_string(),
                });
            };
            let w = widths.entry(port.to_string()).or_insert(0);
            *w = (*w).max(bit + 1);
            inputs.insert(i, (port.to_string(), bit));
        }
    }
    let values = widths
        .iter()
        .map(|(p, &w)| (p.clone(), vec![false; w]))
        .collect();
    Ok((inputs, values))
}

/// The input port values of ABC's `write_cex -n` file (`pi0134@0=1` per
/// input; comment lines start with `#`; inputs it leaves out are 0).
fn parse_cex_file(
    map: &str,
    text: &str,
    path: &Path,
) -> Result<BTreeMap<String, Vec<bool>>, EquivError> {
    let bad = |line: &str| EquivError::Counterexample {
        path: path.to_path_buf(),
        line: line.to_string(),
    };
    let (inputs, mut values) = input_map(map, path)?;
    let mut seen = 0;
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (name, val) = line.split_once('=').ok_or_else(|| bad(line))?;
        let idx = name
            .strip_prefix("pi")
            .and_then(|r| r.strip_suffix("@0"))
            .ok_or_else(|| bad(line))?;
        let i: usize = idx.parse().map_err(|_| bad(line))?;
        let (port, bit) = inputs.get(&i).ok_or_else(|| bad(line))?;
        let v = match val.trim() {
            "0" | "x" | "-" => false,
            "1" => true,
            _ => return Err(bad(line)),
        };
        if let Some(b) = values.get_mut(port).and_then(|p| p.get_mut(*bit)) {
            *b = v;
        }
        seen += 1;
    }
    if seen == 0 {
        return Err(bad("(no input values)"));
    }
    Ok(values)
}

/// The one-step views ([`comb::next_state_view`]) of the unit and of
/// mutant `mu` compared (ABC `&cec` within `seconds`): equivalent (then so
/// are the two units), or differing, with an input on which they do (SAT
/// on their miter, [`miter_counterexample`]), or no answer.
fn decide_one_step(
    module: &Module,
    mu: &Mutation,
    d: &Path,
    seconds: u32,
    assume: Option<comb::Assume<'_>>,
) -> Result<OneStep, EquivError> {
    std::fs::create_dir_all(d).map_err(io(d))?;
    let ir = |source| EquivError::Ir {
        mutation: mu.text.clone(),
        source,
    };
    let (regs, outputs) = comb::first_registers(module, mu);
    let mutant = mutate::apply(module, mu).map_err(ir)?;
    let header = |what: &str| {
        vec![format!(
            "One-step view of {what}, for the equivalence check of a mutant: not a design file."
        )]
    };
    let gold = comb::next_state_view(module, &regs, &outputs, assume).map_err(ir)?;
    to_aiger(&gold, &header("the unit as generated"), d, "gold")?;
    let gate = comb::next_state_view(&mutant, &regs, &outputs, assume).map_err(ir)?;
    to_aiger(&gate, &header(&format!("mutant `{}`", mu.text)), d, "gate")?;
    let read = |p: PathBuf| std::fs::read_to_string(&p).map_err(io(&p));
    let map = read(d.join("gold.map"))?;
    if map != read(d.join("gate.map"))? {
        return Ok(OneStep::Unknown);
    }
    let said_path = d.join("abc.txt");
    let limit = Duration::from_secs(u64::from(seconds));
    let said = run_limited(
        "yosys-abc",
        &["-c", "&r gold.aig; &cec gate.aig"],
        d,
        &said_path,
        limit,
    )?;
    Ok(match said {
        Some(t) if t.contains("Networks are equivalent") => OneStep::Equivalent,
        Some(t) if t.contains("NOT EQUIVALENT") => OneStep::Differs(miter_counterexample(
            &d.join("gold.aig"),
            d,
            "gate.aig",
            disproved_output(&t),
            seconds,
            &map,
        )?),
        _ => OneStep::Unknown,
    })
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
    let (inputs, mut values) = input_map(map, path)?;
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
    fn cex_files_map_back_to_ports() {
        let map = "input 0 0 b\ninput 1 1 b\ninput 2 0 a\noutput 0 0 y\n";
        let text = "# FALSIFYING OUTPUTS: po000\n# COUNTEREXAMPLE LENGTH: 1\npi0000@0=0\npi0001@0=1\npi0002@0=1\n";
        let v = parse_cex_file(map, text, Path::new("x")).expect("parses");
        assert_eq!(v["b"], vec![false, true]);
        assert_eq!(v["a"], vec![true]);
        for bad in ["pi0007@0=1\n", "po0001@0=1\n", "pi0001=1\n", "# nothing\n"] {
            assert!(parse_cex_file(map, bad, Path::new("x")).is_err(), "{bad}");
        }
        let said = "Disproved at least one output of the miter (zero-based number 17).\nNetworks are NOT EQUIVALENT.";
        assert_eq!(disproved_output(said), Some(17));
        assert_eq!(disproved_output("Networks are NOT EQUIVALENT."), None);
    }

    /// Two views that differ only where a 32-bit input holds one value
    /// (random simulation does not find it): `&cec` says not equivalent,
    /// and SAT on the miter gives an input on which they differ.
    #[test]
    fn the_miter_gives_an_input_that_tells_two_views_apart() {
        if !hdl::prereq::available(
            &["yosys", "yosys-abc"],
            "the miter counterexample test",
            "install Yosys (make setup)",
        ) {
            return;
        }
        let dir = std::env::temp_dir().join(format!("equiv-miter-{}", std::process::id()));
        let (gd, md) = (dir.join("gold"), dir.join("m"));
        for d in [&gd, &md] {
            std::fs::create_dir_all(d).expect("dir");
        }
        let view = |bits: &str| {
            format!(
                "module v(input [31:0] a, input [15:0] b, output [7:0] y);\n  \
                 assign y = (a == 32'hdeadbeef) ? b[{bits}] : 8'd0;\nendmodule\n"
            )
        };
        let aiger = |d: &Path, text: String| {
            std::fs::write(d.join("view.v"), text).expect("write");
            run_tool(
                "yosys",
                &[
                    "-q",
                    "-p",
                    "read_verilog view.v; proc; opt_clean; techmap; aigmap; \
                     write_aiger -map view.map view.aig",
                ],
                d,
            )
            .expect("yosys");
        };
        aiger(&gd, view("7:0"));
        aiger(&md, view("8:1"));
        let gold_aig = gd.join("view.aig");
        let script = format!("&r {}; &cec view.aig", gold_aig.display());
        let said = run_tool("yosys-abc", &["-c", &script], &md).expect("abc");
        assert!(said.contains("NOT EQUIVALENT"), "{said}");
        let map = std::fs::read_to_string(gd.join("view.map")).expect("map");
        let ports = miter_counterexample(
            &gold_aig,
            &md,
            "view.aig",
            disproved_output(&said),
            60,
            &map,
        )
        .expect("runs")
        .expect("a counterexample");
        let word = |name: &str| {
            ports[name]
                .iter()
                .enumerate()
                .fold(0u64, |acc, (i, &b)| acc | (u64::from(b) << i))
        };
        assert_eq!(word("a"), 0xdead_beef, "{ports:?}");
        let b = word("b");
        assert_ne!(b & 0xff, (b >> 1) & 0xff, "{ports:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// At a configuration where the mutation cannot matter the pinned
    /// views are equivalent; at the next one SAT gives a data input that
    /// tells them apart, and the counterexample holds the configuration.
    #[test]
    fn pinned_views_give_a_counterexample_at_a_configuration_that_tells_them_apart() {
        if !hdl::prereq::available(
            &["yosys", "yosys-abc"],
            "the pinned counterexample test",
            "install Yosys (make setup)",
        ) {
            return;
        }
        let build = || -> Result<Module, hdl::ir::IrError> {
            let mut m = Module::new("configured")?;
            m.clock("clk")?;
            let a = m.input("a", 8)?;
            let b = m.input("b", 8)?;
            let w = m.input("w", 2)?;
            let y = m.output("y", 8)?;
            let cfg = m.reg("cfg", 2, hdl::ir::Reset::None)?;
            m.reg_next(&cfg, w.expr(), None)?;
            // y = a & b where cfg is 2, else a
            let two = cfg.expr().cmp_eq(&hdl::ir::Expr::constant(2, 2)?)?;
            let both = m.wire("both", 8)?;
            m.assign(&both, a.expr().and(&b.expr())?)?;
            m.assign(&y, hdl::ir::Expr::mux(&two, &both.expr(), &a.expr())?)?;
            Ok(m)
        };
        let m = build().expect("module");
        let mu = mutate::enumerate(&m)
            .into_iter()
            .find(|mu| mu.signal == "both" && mu.op.family() == "drop-term")
            .expect("a term of the and dropped");
        let dir = std::env::temp_dir().join(format!("equiv-pinned-{}", std::process::id()));
        let view = View {
            cuts: vec!["cfg".to_string()],
            assume: None,
            skip_one_step: true,
        };
        let pin = |v: u128| {
            let mut p = BTreeMap::new();
            p.insert(
                "cfg".to_string(),
                hdl::ir::Bits::from_u128(v, 2).expect("bits"),
            );
            p
        };
        let found = pinned_counterexamples(
            &m,
            std::slice::from_ref(&mu),
            &dir,
            60,
            1,
            &view,
            &[pin(1), pin(2)],
        )
        .expect("runs");
        let ports = found[0].0.clone().expect("a counterexample at cfg 2");
        assert_eq!(ports["cfg"], vec![false, true], "{ports:?}");
        assert!(dir.join(format!("m{}/pin0/abc-fast.txt", mu.id)).exists());
        let word = |name: &str| {
            ports[name]
                .iter()
                .enumerate()
                .fold(0u8, |acc, (i, &b)| acc | (u8::from(b) << i))
        };
        // the mutant's `both` is one operand: a & b differs from it
        let (a, b) = (word("a"), word("b"));
        assert!(a & b != a || a & b != b, "a {a:#x} b {b:#x}");
        let none =
            pinned_counterexamples(&m, std::slice::from_ref(&mu), &dir, 60, 1, &view, &[pin(0)])
                .expect("runs");
        assert!(none[0].0.is_none());
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
