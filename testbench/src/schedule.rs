//! The per-cycle stimulus pattern: input stalls (`in_valid` withheld),
//! output backpressure (`out_ready` low) and mid-stream reset pulses, made
//! by Rust from a seed and read by the testbench, so every simulator sees the
//! same cycles. Also a cycle-exact model of the testbench driving an ideal
//! ready-chain pipeline (docs/hw/mpc-interface.md), against which the
//! simulated handshake timing and reset bookkeeping are checked.

use std::io::Write;
use std::path::Path;

use crate::rng::Rng;

/// Schedule-file problems.
#[derive(Debug, thiserror::Error)]
pub enum ScheduleError {
    #[error("cannot write {path}: {source}")]
    Write {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("schedule line {line}: {problem}")]
    Parse { line: usize, problem: String },
}

/// How to make a schedule.
#[derive(Clone, Copy, Debug)]
pub struct ScheduleConfig {
    /// Probability that the source withholds a block in a random cycle (0 =
    /// never stall and never backpressure: full throughput).
    pub stall: f64,
    /// Mid-stream reset pulses.
    pub resets: usize,
    pub seed: u64,
}

/// One cycle's stimulus.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cycle {
    /// The source may offer a block.
    pub valid: bool,
    /// The sink takes an output.
    pub ready: bool,
    /// `rst` is high.
    pub rst: bool,
}

/// Cycle `c` of the schedule is `cycles[c]`; past the end every cycle is
/// valid, ready, no reset.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Schedule {
    pub cycles: Vec<Cycle>,
}

const FREE: Cycle = Cycle {
    valid: true,
    ready: true,
    rst: false,
};

impl Schedule {
    /// No stalls, no resets.
    pub fn free() -> Schedule {
        Schedule::default()
    }

    pub fn at(&self, c: u64) -> Cycle {
        self.cycles.get(c as usize).copied().unwrap_or(FREE)
    }

    /// A schedule for about `blocks` blocks: segments of 16..512 cycles,
    /// each free-running, random (i.i.d. stalls with probability `stall` on
    /// both sides), bursty (long stall runs), backpressured (the sink stops
    /// and the pipeline fills) or starved (the source mostly idle); resets of
    /// 1..3 cycles at random cycles between 10 % and 80 % of the run (as
    /// an ideal `stages`-deep pipeline would take it).
    pub fn generate(cfg: &ScheduleConfig, blocks: usize, stages: usize) -> Schedule {
        if cfg.stall <= 0.0 && cfg.resets == 0 {
            return Schedule::free();
        }
        let mut rng = Rng::fork(cfg.seed, 3);
        let p = cfg.stall.clamp(0.0, 1.0);
        let len = ((blocks as f64) * (1.0 + 3.0 * p) + 64.0) as usize;
        let mut cycles = Vec::with_capacity(len);
        // segments of at most a quarter of the run: a short run sees
        // several kinds too
        let longest = (len as u64 / 4).clamp(32, 512);
        while p > 0.0 && cycles.len() < len {
            let seg = rng.range(16, longest) as usize;
            let mode = rng.below(100);
            let mut stall_in = false;
            let mut stall_out = false;
            for _ in 0..seg {
                let c = match mode {
                    0..=24 => FREE,
                    25..=64 => Cycle {
                        valid: !rng.chance(p),
                        ready: !rng.chance(p),
                        rst: false,
                    },
                    65..=84 => {
                        // runs of stalls with mean length ~8
                        if rng.chance(if stall_in { 0.125 } else { p / 4.0 }) {
                            stall_in = !stall_in;
                        }
                        if rng.chance(if stall_out { 0.125 } else { p / 4.0 }) {
                            stall_out = !stall_out;
                        }
                        Cycle {
                            valid: !stall_in,
                            ready: !stall_out,
                            rst: false,
                        }
                    }
                    85..=94 => Cycle {
                        valid: true,
                        ready: rng.chance(0.1),
                        rst: false,
                    },
                    _ => Cycle {
                        valid: rng.chance(0.1),
                        ready: true,
                        rst: false,
                    },
                };
                cycles.push(c);
            }
        }
        let mut s = Schedule { cycles };
        if cfg.resets == 0 {
            return s;
        }
        let span = model_run(&s, stages.max(1), blocks as u64, u64::MAX / 2).cycles as usize;
        let lo = span / 10;
        let hi = (span * 8 / 10).max(lo + 1);
        let cycles = &mut s.cycles;
        let mut starts: Vec<usize> = (0..cfg.resets)
            .map(|_| rng.range(lo as u64, hi as u64) as usize)
            .collect();
        starts.sort_unstable();
        let mut last_end = 0usize;
        for start in starts {
            let start = start.max(last_end + 8);
            let n = rng.range(1, 3) as usize;
            if start + n > cycles.len() {
                cycles.resize(start + n, FREE);
            }
            for c in &mut cycles[start..start + n] {
                c.rst = true;
            }
            last_end = start + n;
        }
        s
    }

    /// The text the testbench reads: one line per 32 cycles, three 32-bit
    /// hex masks `valid ready reset`, bit `c` = cycle `32*line + c`.
    pub fn to_text(&self) -> String {
        let mut s = String::with_capacity(self.cycles.len() / 32 * 28 + 28);
        for chunk in self.cycles.chunks(32) {
            let mut m = [0u32; 3];
            for (i, c) in chunk.iter().enumerate() {
                m[0] |= (c.valid as u32) << i;
                m[1] |= (c.ready as u32) << i;
                m[2] |= (c.rst as u32) << i;
            }
            // cycles past the end of a short last line are free
            for i in chunk.len()..32 {
                m[0] |= 1 << i;
                m[1] |= 1 << i;
            }
            s.push_str(&format!("{:08x} {:08x} {:08x}\n", m[0], m[1], m[2]));
        }
        s
    }

    pub fn write(&self, path: &Path) -> Result<(), ScheduleError> {
        std::fs::File::create(path)
            .and_then(|mut f| f.write_all(self.to_text().as_bytes()))
            .map_err(|source| ScheduleError::Write {
                path: path.to_path_buf(),
                source,
            })
    }

    /// Parse [`Schedule::to_text`] output.
    pub fn parse(text: &str) -> Result<Schedule, ScheduleError> {
        let mut cycles = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let m: Vec<u32> = line
                .split_whitespace()
                .map(|f| u32::from_str_radix(f, 16))
                .collect::<Result<_, _>>()
                .map_err(|e| ScheduleError::Parse {
                    line: i + 1,
                    problem: e.to_string(),
                })?;
            if m.len() != 3 {
                return Err(ScheduleError::Parse {
                    line: i + 1,
                    problem: format!("expected 3 masks, found {}", m.len()),
                });
            }
            for b in 0..32 {
                cycles.push(Cycle {
                    valid: (m[0] >> b) & 1 == 1,
                    ready: (m[1] >> b) & 1 == 1,
                    rst: (m[2] >> b) & 1 == 1,
                });
            }
        }
        Ok(Schedule { cycles })
    }

    /// Number of reset pulses.
    pub fn reset_pulses(&self) -> usize {
        let mut n = 0;
        let mut prev = false;
        for c in &self.cycles {
            if c.rst && !prev {
                n += 1;
            }
            prev = c.rst;
        }
        n
    }
}

/// A reset pulse as the testbench logs it: blocks `first..first+dropped`
/// were in flight and are offered again after the reset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResetEvent {
    pub cycle: u64,
    pub first: u64,
    pub dropped: u64,
}

/// One delivered output of the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Delivery {
    pub idx: u64,
    pub cycle: u64,
    pub latency: u64,
}

/// What an ideal pipeline under the testbench delivers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ModelRun {
    pub deliveries: Vec<Delivery>,
    pub resets: Vec<ResetEvent>,
    /// Cycles until the last output (the testbench's `D` record).
    pub cycles: u64,
}

/// The testbench driver (tb/stream_driver.svh, the same rules), cycle by
/// cycle, for any unit: [`Driver::drive`] gives what it drives in a cycle,
/// [`Driver::edge`] counts the handshakes at the edge that ends it.
#[derive(Clone, Debug)]
pub struct Driver<'a> {
    s: &'a Schedule,
    n: u64,
    /// Driven in the current cycle.
    pub rst: bool,
    pub in_valid: bool,
    pub out_ready: bool,
    /// The vector on the input bus (the last one offered).
    pub offered: u64,
    /// The vector offered next (or being offered).
    pub next_idx: u64,
    /// Vectors delivered.
    pub n_out: u64,
    pub resets: Vec<ResetEvent>,
}

impl<'a> Driver<'a> {
    /// The driver after the boot reset, before cycle 0, for `n` vectors.
    pub fn new(s: &'a Schedule, n: u64) -> Driver<'a> {
        Driver {
            s,
            n,
            rst: true,
            in_valid: false,
            out_ready: false,
            offered: 0,
            next_idx: 0,
            n_out: 0,
            resets: Vec::new(),
        }
    }

    /// Drive cycle `c`, with the unit's `in_ready` as sampled at the edge
    /// that ended cycle `c - 1`: true when a new vector (`offered`) goes on
    /// the bus.
    pub fn drive(&mut self, c: u64, in_ready: bool) -> bool {
        let b = self.s.at(c);
        if b.rst && !self.rst {
            self.resets.push(ResetEvent {
                cycle: c,
                first: self.n_out,
                dropped: self.next_idx - self.n_out,
            });
            self.next_idx = self.n_out;
        }
        let old_rst = self.rst;
        self.rst = b.rst;
        if b.rst {
            self.in_valid = false;
            self.out_ready = false;
            return false;
        }
        self.out_ready = b.ready;
        if self.in_valid && !in_ready && !old_rst {
            // the offer stays until it is taken
            false
        } else if self.next_idx < self.n && b.valid {
            self.in_valid = true;
            self.offered = self.next_idx;
            true
        } else {
            self.in_valid = false;
            false
        }
    }

    /// The edge that ends the cycle, with the unit's `out_valid` and
    /// `in_ready` in it: the vector delivered and the vector accepted, if
    /// any (none in reset).
    pub fn edge(&mut self, out_valid: bool, in_ready: bool) -> (Option<u64>, Option<u64>) {
        if self.rst {
            return (None, None);
        }
        let mut delivered = None;
        if out_valid && self.out_ready {
            delivered = Some(self.n_out);
            self.n_out += 1;
        }
        let mut accepted = None;
        if self.in_valid && in_ready {
            accepted = Some(self.next_idx);
            self.next_idx += 1;
        }
        (delivered, accepted)
    }
}

/// Run the testbench driver ([`Driver`]) against an ideal `stages`-deep
/// pipeline with the interface's ready chain (a stage takes a new entry
/// when it is empty or its content moves on; reset empties it), for `n`
/// vectors.
pub fn model_run(s: &Schedule, stages: usize, n: u64, max_cycles: u64) -> ModelRun {
    let mut valid = vec![false; stages];
    let mut tag = vec![0u64; stages];
    let mut enable = vec![false; stages];
    let mut acc = vec![0u64; n as usize];
    let mut run = ModelRun::default();
    let mut drv = Driver::new(s, n);
    let mut in_ready = false;
    let mut c = 0u64;
    drv.drive(0, in_ready);
    while c < max_cycles {
        // combinational ready chain
        let mut down = drv.out_ready;
        for i in (0..stages).rev() {
            enable[i] = !valid[i] || down;
            down = enable[i];
        }
        in_ready = enable[0];
        let out_valid = valid[stages - 1];
        // the edge that ends cycle c
        let (delivered, accepted) = drv.edge(out_valid, in_ready);
        if let Some(idx) = delivered {
            run.deliveries.push(Delivery {
                idx,
                cycle: c,
                latency: c - acc[idx as usize],
            });
        }
        if let Some(idx) = accepted {
            acc[idx as usize] = c;
        }
        if drv.rst {
            valid.iter_mut().for_each(|v| *v = false);
        } else {
            for i in (0..stages).rev() {
                if enable[i] {
                    if i == 0 {
                        valid[0] = drv.in_valid;
                        tag[0] = drv.offered;
                    } else {
                        valid[i] = valid[i - 1];
                        tag[i] = tag[i - 1];
                    }
                }
            }
        }
        if drv.n_out >= n {
            run.cycles = c + 1;
            run.resets = drv.resets;
            return run;
        }
        c += 1;
        drv.drive(c, in_ready);
    }
    run.cycles = c;
    run.resets = drv.resets;
    run
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stall_probability_one_is_used_as_given_and_still_delivers() {
        let cfg = |stall| ScheduleConfig {
            stall,
            resets: 0,
            seed: 4,
        };
        let one = Schedule::generate(&cfg(1.0), 2000, 3);
        let almost = Schedule::generate(&cfg(0.95), 2000, 3);
        // `1` is not cut to another probability
        assert_ne!(one.cycles, almost.cycles);
        let run = model_run(&one, 3, 2000, 1 << 30);
        assert_eq!(run.deliveries.len(), 2000);
    }

    #[test]
    fn text_round_trip() {
        let s = Schedule::generate(
            &ScheduleConfig {
                stall: 0.3,
                resets: 3,
                seed: 11,
            },
            1000,
            3,
        );
        assert_eq!(s.reset_pulses(), 3);
        let back = Schedule::parse(&s.to_text()).expect("parse");
        for c in 0..back.cycles.len() as u64 {
            assert_eq!(back.at(c), s.at(c), "cycle {c}");
        }
        assert!(s.cycles.iter().any(|c| !c.valid) && s.cycles.iter().any(|c| !c.ready));
        assert_eq!(Schedule::free().at(5), FREE);
        assert!(Schedule::parse("1 2\n").is_err());
    }

    #[test]
    fn free_pipeline_has_fixed_latency_and_full_rate() {
        let r = model_run(&Schedule::free(), 3, 10, 1000);
        assert_eq!(r.deliveries.len(), 10);
        assert!(r.deliveries.iter().all(|d| d.latency == 3));
        // accepted in cycles 0..9, delivered in 3..12
        assert_eq!(r.deliveries[0].cycle, 3);
        assert_eq!(r.cycles, 13);
        assert!(r.resets.is_empty());
    }

    #[test]
    fn backpressure_fills_and_holds() {
        // sink stalls for cycles 0..19: the 3 stages fill, then the source waits
        let mut cycles = vec![
            Cycle {
                valid: true,
                ready: false,
                rst: false
            };
            20
        ];
        cycles.extend(std::iter::repeat_n(FREE, 40));
        let r = model_run(&Schedule { cycles }, 3, 8, 1000);
        assert_eq!(r.deliveries.len(), 8);
        // first output waits for ready at cycle 20, then one per cycle
        let cyc: Vec<u64> = r.deliveries.iter().map(|d| d.cycle).collect();
        assert_eq!(cyc, (20..28).collect::<Vec<_>>());
        assert_eq!(r.deliveries[0].latency, 20);
    }

    #[test]
    fn reset_drops_in_flight_blocks_and_resends_them() {
        // reset in cycle 5: blocks 0,1 delivered (cycles 3,4), 2..4 in flight
        // (accepted in cycles 2,3,4)
        let mut cycles = vec![FREE; 5];
        cycles.push(Cycle {
            valid: true,
            ready: true,
            rst: true,
        });
        let r = model_run(&Schedule { cycles }, 3, 10, 1000);
        assert_eq!(
            r.resets,
            vec![ResetEvent {
                cycle: 5,
                first: 2,
                dropped: 3
            }]
        );
        let idx: Vec<u64> = r.deliveries.iter().map(|d| d.idx).collect();
        assert_eq!(idx, (0..10).collect::<Vec<_>>());
        // block 2 is offered again in cycle 6 and delivered 3 cycles later
        assert_eq!(r.deliveries[2].cycle, 9);
        assert_eq!(r.deliveries[2].latency, 3);
    }

    #[test]
    fn random_schedules_deliver_everything_in_order() {
        for seed in 0..20 {
            let s = Schedule::generate(
                &ScheduleConfig {
                    stall: 0.4,
                    resets: 4,
                    seed,
                },
                500,
                4,
            );
            let r = model_run(&s, 4, 500, 1_000_000);
            let idx: Vec<u64> = r.deliveries.iter().map(|d| d.idx).collect();
            assert_eq!(idx, (0..500).collect::<Vec<_>>(), "seed {seed}");
            assert!(r.deliveries.iter().all(|d| d.latency >= 4));
            assert!(r.resets.iter().all(|e| e.dropped <= 4));
            assert_eq!(r.resets.len(), 4, "every reset falls inside the run");
        }
    }
}
