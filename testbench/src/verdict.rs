//! The checks every co-simulation run gets, whatever the unit: the end of
//! the run, the handshake rules the testbench saw broken, the count and
//! order of the outputs, the delivery cycles, latencies and resets against
//! the ideal pipeline ([`crate::schedule::model_run`]), and each output
//! against the unit's golden check; all of it in one [`Verdict`].

use std::collections::BTreeMap;

use crate::records::{Record, SimOutput};
use crate::schedule::ModelRun;

/// One output that differs from the golden model.
#[derive(Clone, Debug)]
pub struct Mismatch {
    /// Vector index (in the whole run).
    pub idx: u64,
    /// Index within its shard, and the shard.
    pub shard: usize,
    pub shard_idx: u64,
    pub tag: String,
    pub input: String,
    pub expected: String,
    pub actual: String,
    pub what: String,
    /// Cycle the output was delivered in (shard-local), and its latency.
    pub cycle: u64,
    pub latency: u64,
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "block {} ({}; shard {} index {}, delivered in cycle {} after {} cycles): {}",
            self.idx, self.tag, self.shard, self.shard_idx, self.cycle, self.latency, self.what
        )?;
        writeln!(f, "    input    : {}", self.input)?;
        writeln!(f, "    expected : {}", self.expected)?;
        write!(f, "    actual   : {}", self.actual)
    }
}

/// Counts per category: (passed, total).
pub type TagCounts = BTreeMap<String, (u64, u64)>;

/// The outcome of checking one or more simulations.
#[derive(Clone, Debug, Default)]
pub struct Verdict {
    /// Vectors whose output was compared.
    pub checked: u64,
    pub passed: u64,
    pub per_tag: TagCounts,
    /// The first mismatches (at most [`MAX_REPORTED`]).
    pub mismatches: Vec<Mismatch>,
    pub mismatch_count: u64,
    /// Missing/extra outputs, protocol violations, timing and reset
    /// bookkeeping differences, simulator errors.
    pub problems: Vec<String>,
    /// Reset pulses and the blocks they dropped (and that were re-sent).
    pub resets: u64,
    pub dropped: u64,
    /// Simulated cycles.
    pub cycles: u64,
}

/// Mismatches kept with full detail.
pub const MAX_REPORTED: usize = 20;

impl Verdict {
    /// Every output checked and matching, no problem, and at least one
    /// vector checked: a run that checked nothing is not a pass.
    pub fn ok(&self) -> bool {
        self.checked > 0 && self.mismatch_count == 0 && self.problems.is_empty()
    }

    pub fn merge(&mut self, o: Verdict) {
        self.checked += o.checked;
        self.passed += o.passed;
        for (k, (p, t)) in o.per_tag {
            let e = self.per_tag.entry(k).or_default();
            e.0 += p;
            e.1 += t;
        }
        for m in o.mismatches {
            if self.mismatches.len() < MAX_REPORTED {
                self.mismatches.push(m);
            }
        }
        self.mismatch_count += o.mismatch_count;
        self.problems.extend(o.problems);
        self.resets += o.resets;
        self.dropped += o.dropped;
        self.cycles += o.cycles;
    }
}

/// What the golden check says of one output: its category (for the
/// per-category counts) and, when it differs, how.
#[derive(Clone, Debug, Default)]
pub struct Judged {
    pub tag: Option<String>,
    pub diff: Option<Diff>,
}

/// How an output differs from the golden model.
#[derive(Clone, Debug, Default)]
pub struct Diff {
    /// Which fields differ.
    pub what: String,
    pub input: String,
    pub expected: String,
    pub actual: String,
}

/// One simulation run to check: `n` vectors through a `stages`-deep unit.
#[derive(Clone, Copy, Debug)]
pub struct RunShape<'a> {
    /// The shard's number (problems are said as `shard K: ...`), or `None`
    /// for a run that is not split into shards.
    pub shard: Option<usize>,
    /// Index of its first vector in the whole run.
    pub offset: u64,
    pub n: u64,
    pub stages: usize,
    /// The ideal-pipeline model of the run's schedule (`None`: no timing
    /// checks).
    pub model: Option<&'a ModelRun>,
}

impl RunShape<'_> {
    fn say(&self, s: String) -> String {
        match self.shard {
            Some(k) => format!("shard {k}: {s}"),
            None => s,
        }
    }
}

/// Check a run's records: `golden(i, record)` judges output `i` (shard
/// local) of those that arrive, in order.
pub fn check_run<F>(
    s: &RunShape<'_>,
    out: &SimOutput<F>,
    mut golden: impl FnMut(usize, &Record<F>) -> Judged,
) -> Verdict {
    let mut v = Verdict::default();
    let n = s.n;
    let stages = s.stages;
    if n == 0 {
        v.problems
            .push(s.say("no vectors: the run checked nothing".to_string()));
    }
    if out.done.is_none() && out.errors.is_empty() {
        v.problems
            .push(s.say("the simulation ended without its final `D` record".to_string()));
    }
    for e in &out.errors {
        v.problems.push(s.say(format!("simulation stopped: {e}")));
    }
    for p in out.protocol.iter().take(5) {
        v.problems.push(s.say(format!(
            "protocol violation in cycle {}: handshake rule {} broken: {}",
            p.cycle,
            p.code,
            p.describe()
        )));
    }
    if out.protocol.len() > 5 {
        v.problems
            .push(s.say(format!("{} protocol violations in all", out.protocol.len())));
    }
    v.resets = out.resets.len() as u64;
    v.dropped = out.resets.iter().map(|r| r.dropped).sum();
    v.cycles = out.done.map_or(0, |d| d.0);
    for r in &out.resets {
        if r.dropped > stages as u64 {
            v.problems.push(s.say(format!(
                "reset in cycle {} found {} blocks in flight, more than the {stages} pipeline stages hold",
                r.cycle, r.dropped
            )));
        }
    }
    for (k, rec) in out.records.iter().enumerate() {
        if rec.idx != k as u64 {
            v.problems.push(s.say(format!(
                "output record {k} has index {} (testbench bookkeeping)",
                rec.idx
            )));
            break;
        }
        if rec.idx >= n {
            v.problems.push(s.say(format!(
                "{} outputs for {n} inputs (extra outputs)",
                out.records.len()
            )));
            break;
        }
        let j = golden(k, rec);
        v.checked += 1;
        let counts = j
            .tag
            .as_ref()
            .map(|t| v.per_tag.entry(t.clone()).or_default());
        let Some(d) = j.diff else {
            if let Some(c) = counts {
                *c = (c.0 + 1, c.1 + 1);
            }
            v.passed += 1;
            continue;
        };
        if let Some(c) = counts {
            c.1 += 1;
        }
        v.mismatch_count += 1;
        if v.mismatches.len() < MAX_REPORTED {
            v.mismatches.push(Mismatch {
                idx: s.offset + rec.idx,
                shard: s.shard.unwrap_or(0),
                shard_idx: rec.idx,
                tag: j.tag.unwrap_or_default(),
                input: d.input,
                expected: d.expected,
                actual: d.actual,
                what: d.what,
                cycle: rec.cycle,
                latency: rec.latency,
            });
        }
    }
    if (out.records.len() as u64) < n {
        v.problems.push(s.say(format!(
            "only {} of {n} outputs delivered (first missing: block {})",
            out.records.len(),
            s.offset + out.records.len() as u64
        )));
    }
    if let Some(m) = s.model {
        if out.resets != m.resets {
            v.problems.push(s.say(format!(
                "reset bookkeeping differs from an ideal {stages}-stage pipeline: testbench {:?}, model {:?}",
                out.resets, m.resets
            )));
        }
        for (rec, d) in out.records.iter().zip(&m.deliveries) {
            if rec.cycle != d.cycle || rec.latency != d.latency {
                v.problems.push(s.say(format!(
                    "block {} delivered in cycle {} after {} cycles; an ideal {stages}-stage ready-chain pipeline (docs/hw/mpc-interface.md) delivers it in cycle {} after {}",
                    rec.idx, rec.cycle, rec.latency, d.cycle, d.latency
                )));
                break;
            }
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schedule::{Delivery, ResetEvent};

    fn rec(idx: u64, cycle: u64, value: u32) -> Record<u32> {
        Record {
            idx,
            cycle,
            latency: 2,
            fields: Ok(value),
        }
    }

    /// Outputs equal to their index match.
    fn judge(i: usize, r: &Record<u32>) -> Judged {
        let diff = match &r.fields {
            Ok(v) if *v as usize == i => None,
            Ok(v) => Some(Diff {
                what: format!("value {v}"),
                ..Diff::default()
            }),
            Err(e) => Some(Diff {
                what: e.clone(),
                ..Diff::default()
            }),
        };
        Judged {
            tag: Some(if i.is_multiple_of(2) { "even" } else { "odd" }.to_string()),
            diff,
        }
    }

    fn shape(n: u64, model: Option<&ModelRun>) -> RunShape<'_> {
        RunShape {
            shard: None,
            offset: 10,
            n,
            stages: 2,
            model,
        }
    }

    #[test]
    fn a_run_that_checked_nothing_is_not_ok() {
        let out = SimOutput::<u32> {
            done: Some((4, 0)),
            ..SimOutput::default()
        };
        let v = check_run(&shape(0, None), &out, judge);
        assert_eq!(v.checked, 0);
        assert!(!v.ok(), "{v:?}");
        assert!(v.problems.iter().any(|p| p.contains("checked nothing")));
        assert!(!Verdict::default().ok());
    }

    #[test]
    fn counts_order_timing_and_the_golden_check() {
        let model = ModelRun {
            deliveries: (0..3)
                .map(|i| Delivery {
                    idx: i,
                    cycle: 2 + i,
                    latency: 2,
                })
                .collect(),
            resets: Vec::new(),
            cycles: 5,
        };
        let good = SimOutput {
            records: vec![rec(0, 2, 0), rec(1, 3, 1), rec(2, 4, 2)],
            done: Some((5, 3)),
            ..SimOutput::default()
        };
        let v = check_run(&shape(3, Some(&model)), &good, judge);
        assert!(v.ok(), "{v:?}");
        assert_eq!((v.checked, v.passed, v.cycles), (3, 3, 5));
        assert_eq!(v.per_tag["even"], (2, 2));

        // a wrong value, a late delivery, a missing output, a reset the
        // model did not make and a broken handshake rule: each named
        let mut bad = good.clone();
        bad.records[1].fields = Ok(7);
        bad.records[1].cycle = 9;
        bad.records.pop();
        bad.resets.push(ResetEvent {
            cycle: 1,
            first: 0,
            dropped: 3,
        });
        bad.protocol
            .push(crate::records::Protocol { cycle: 3, code: 2 });
        let v = check_run(
            &RunShape {
                shard: Some(4),
                ..shape(3, Some(&model))
            },
            &bad,
            judge,
        );
        assert!(!v.ok());
        assert_eq!((v.mismatch_count, v.mismatches[0].idx), (1, 11));
        assert_eq!(v.mismatches[0].what, "value 7");
        assert_eq!(v.per_tag["odd"], (0, 1));
        for needle in [
            "shard 4: protocol violation in cycle 3",
            "more than the 2 pipeline stages hold",
            "only 2 of 3 outputs delivered (first missing: block 12)",
            "reset bookkeeping differs",
            "block 1 delivered in cycle 9",
        ] {
            assert!(
                v.problems.iter().any(|p| p.contains(needle)),
                "no {needle:?} in {:?}",
                v.problems
            );
        }

        // a run stopped early, and one without an end
        let mut stopped = good.clone();
        stopped.done = None;
        stopped.errors.push("timeout".into());
        let v = check_run(&shape(3, None), &stopped, judge);
        assert!(v
            .problems
            .iter()
            .any(|p| p == "simulation stopped: timeout"));
        stopped.errors.clear();
        let v = check_run(&shape(3, None), &stopped, judge);
        assert!(v
            .problems
            .iter()
            .any(|p| p.contains("without its final `D`")));
    }
}
