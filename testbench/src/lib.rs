//! Co-simulation of the generated units (MPC, MAG-aware BDI, DPC) against
//! their golden models (docs/hw/cosim.md).
//!
//! * [`vectors`]: input vectors (corpus, random, corner cases, Table-1
//!   patterns, malformed compressed blocks) and their hex files.
//! * [`schedule`]: per-cycle stalls, backpressure and resets; the model of
//!   an ideal pipeline under the testbench.
//! * [`sim`]: compiling any testbench on the shared driver
//!   `tb/stream_driver.svh` (`tb/mpc_tb.sv`, `tb/bdi_tb.sv`, `tb/dpc_tb.sv`)
//!   on Icarus or Verilator, and running it.
//! * [`records`]: the one strict parser of the driver's output records,
//!   for every unit.
//! * [`verdict`]: the checks every run gets (end of run, handshake rules,
//!   count and order of the outputs, delivery cycles and resets against
//!   the ideal pipeline) around a unit's golden check.
//! * [`compare`]: the MPC units' output fields and golden check.
//! * [`vcd`], [`locate`]: on a mismatch, the first pipeline stage that
//!   differs, from a VCD of the failing block, plus a GTKWave save file.
//! * [`rtl`]: the generated units of a model set.
//! * [`run`]: everything together for MPC, as `cosim mpc` uses it.
//! * [`stream_unit`]: the output bus as fields ([`stream_unit::LeBus`]),
//!   one unit's run on the shared path (simulator, records, verdict) with a
//!   golden check of the output bus, its report, and the command-line and
//!   test helpers; [`magbdi`], [`dpc`]: the MAG-aware BDI and DPC vectors,
//!   port layouts and golden checks on it (`cosim magbdi`, `cosim dpc`).
//! * [`cache`]: the one build-cache policy of every testbench.

pub mod cache;
pub mod compare;
pub mod dpc;
pub mod equiv;
pub mod hex;
pub mod locate;
pub mod magbdi;
pub mod mutate;
pub mod prove;
pub mod records;
pub mod rng;
pub mod rtl;
pub mod run;
pub mod schedule;
pub mod sim;
pub mod slots;
pub mod stream_unit;
pub mod vcd;
pub mod vectors;
pub mod verdict;

use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// `f(0)`, ..., `f(n - 1)` taken from one queue by `jobs` threads; the
/// results in order.
pub(crate) fn work_queue<R: Send>(n: usize, jobs: usize, f: impl Fn(usize) -> R + Sync) -> Vec<R> {
    let next = AtomicUsize::new(0);
    let found: Mutex<Vec<(usize, R)>> = Mutex::new(Vec::new());
    // a panicking job makes the scope panic, so every result arrives
    std::thread::scope(|s| {
        for _ in 0..jobs.clamp(1, n.max(1)) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    break;
                }
                let r = f(i);
                if let Ok(mut v) = found.lock() {
                    v.push((i, r));
                }
            });
        }
    });
    let mut v = found.into_inner().unwrap_or_default();
    v.sort_by_key(|(i, _)| *i);
    v.into_iter().map(|(_, r)| r).collect()
}

/// Which design a run checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Unit {
    Compressor,
    Decompressor,
    /// `mpc_compressor` feeding `mpc_decompressor`.
    Loopback,
}

impl Unit {
    pub const ALL: [Unit; 3] = [Unit::Compressor, Unit::Decompressor, Unit::Loopback];

    pub fn name(self) -> &'static str {
        match self {
            Unit::Compressor => "compressor",
            Unit::Decompressor => "decompressor",
            Unit::Loopback => "loopback",
        }
    }

    /// The testbench define that selects the unit.
    pub fn define(self) -> &'static str {
        match self {
            Unit::Compressor => "UNIT_COMPRESSOR",
            Unit::Decompressor => "UNIT_DECOMPRESSOR",
            Unit::Loopback => "UNIT_LOOPBACK",
        }
    }

    /// Pipeline stages between the testbench's input and output.
    pub fn stages(self, params: &rtl::Params) -> usize {
        match self {
            Unit::Compressor => params.compressor_latency,
            Unit::Decompressor => params.decompressor_latency,
            Unit::Loopback => params.compressor_latency + params.decompressor_latency,
        }
    }
}

impl fmt::Display for Unit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Which simulator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Simulator {
    Icarus,
    Verilator,
}

impl Simulator {
    pub const ALL: [Simulator; 2] = [Simulator::Icarus, Simulator::Verilator];

    pub fn name(self) -> &'static str {
        match self {
            Simulator::Icarus => "icarus",
            Simulator::Verilator => "verilator",
        }
    }
}

impl fmt::Display for Simulator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
