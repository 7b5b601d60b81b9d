//! Stage probes: the named pipeline registers and stage-logic wires of the
//! generated units that mirror a field of the golden model's per-stage
//! trace. The generators record each probe where they create its signal,
//! and `params.json` publishes the lists, so a co-simulation locator
//! compares exactly the signals the RTL has (docs/hw/cosim.md).

use crate::circuits::{wire, Pipeline};
use crate::ir::{Expr, IrError, Module, SignalKind};
pub use crate::unit::{ProbeKind, StageProbe, When};

/// The probe lists of both MPC units.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StageProbes {
    pub compressor: Vec<StageProbe>,
    pub decompressor: Vec<StageProbe>,
}

/// Collects the probes of a unit while its generator builds it.
#[derive(Clone, Debug, Default)]
pub struct Probes {
    pub list: Vec<StageProbe>,
}

impl Probes {
    /// Record the existing signal `name` of `m` as a probe of `stage`
    /// (a register probe when it is a register, else a logic probe).
    pub fn record(
        &mut self,
        m: &Module,
        stage: usize,
        name: &str,
        mirrors: &str,
        when: When,
        with: Option<&str>,
    ) -> Result<(), IrError> {
        let sig = m.signal(name).ok_or_else(|| IrError::UnknownSignal {
            name: name.to_string(),
        })?;
        if let Some(w) = with {
            m.signal(w).ok_or_else(|| IrError::UnknownSignal {
                name: w.to_string(),
            })?;
        }
        let kind = match m.kind(&sig)? {
            SignalKind::Reg => ProbeKind::Register,
            _ => ProbeKind::Logic,
        };
        self.list.push(StageProbe {
            name: name.to_string(),
            stage,
            kind,
            width: sig.width(),
            mirrors: mirrors.to_string(),
            when,
            with: with.map(str::to_string),
        });
        Ok(())
    }

    /// A named wire of stage `stage`'s logic, recorded as a probe.
    pub fn wire(
        &mut self,
        m: &mut Module,
        stage: usize,
        name: &str,
        e: Expr,
        mirrors: &str,
        when: When,
    ) -> Result<Expr, IrError> {
        let w = wire(m, name, e)?;
        self.record(m, stage, name, mirrors, when, None)?;
        Ok(w)
    }

    /// Record stage `stage`'s existing register `s<stage>_<name>` as a
    /// probe (`with`: a sibling register of the stage, by the same kind of
    /// name).
    pub fn record_reg(
        &mut self,
        m: &Module,
        stage: usize,
        name: &str,
        mirrors: &str,
        when: When,
        with: Option<&str>,
    ) -> Result<(), IrError> {
        let with = with.map(|w| Pipeline::reg_name(stage, w));
        self.record(
            m,
            stage,
            &Pipeline::reg_name(stage, name),
            mirrors,
            when,
            with.as_deref(),
        )
    }

    /// The data register `s<stage>_<name>` of stage `stage`, recorded as a
    /// probe.
    #[allow(clippy::too_many_arguments)]
    pub fn reg(
        &mut self,
        m: &mut Module,
        pipe: &Pipeline,
        stage: usize,
        name: &str,
        next: Expr,
        mirrors: &str,
        when: When,
    ) -> Result<Expr, IrError> {
        let r = pipe.reg(m, stage, name, next)?;
        self.record_reg(m, stage, name, mirrors, when, None)?;
        Ok(r)
    }
}
