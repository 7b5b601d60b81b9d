//! Stage probes: the named pipeline registers and stage-logic wires of the
//! generated units that mirror a field of the golden model's per-stage
//! trace. The generators record each probe where they create its signal,
//! and `params.json` publishes the lists, so a co-simulation locator
//! compares exactly the signals the RTL has (docs/hw/cosim.md).

use crate::circuits::{wire, Pipeline};
use crate::ir::{Expr, IrError, Module, SignalKind};
pub use crate::unit::{Mirror, MirrorError, ProbeKind, StageProbe, When};

/// What a generator names as the golden trace field of a probe: a
/// [`Mirror`], or its text (`"candidates[2].pred"`), read when the probe
/// is recorded.
pub trait IntoMirror {
    fn into_mirror(self) -> Result<Mirror, MirrorError>;
}

impl IntoMirror for Mirror {
    fn into_mirror(self) -> Result<Mirror, MirrorError> {
        Ok(self)
    }
}

impl IntoMirror for &str {
    fn into_mirror(self) -> Result<Mirror, MirrorError> {
        self.parse()
    }
}

impl IntoMirror for &String {
    fn into_mirror(self) -> Result<Mirror, MirrorError> {
        self.parse()
    }
}

/// A probe's mirror that names no golden trace field, as the generator's
/// error.
fn mirror_error(name: &str, e: MirrorError) -> IrError {
    IrError::InvalidIdentifier {
        name: e.text.clone(),
        reason: format!("the golden trace field of probe `{name}`: {e}"),
    }
}

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
        mirrors: impl IntoMirror,
        when: When,
        with: Option<&str>,
    ) -> Result<(), IrError> {
        let mirrors = mirrors.into_mirror().map_err(|e| mirror_error(name, e))?;
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
            mirrors,
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
        mirrors: impl IntoMirror,
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
        mirrors: impl IntoMirror,
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
        mirrors: impl IntoMirror,
        when: When,
    ) -> Result<Expr, IrError> {
        let r = pipe.reg(m, stage, name, next)?;
        self.record_reg(m, stage, name, mirrors, when, None)?;
        Ok(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::unit::{CandidateField, CopyField, DfManCopy, SizeField};

    #[test]
    fn mirrors_read_back_as_written() {
        let texts = [
            "candidates[0].pred",
            "candidates[12].score.longest_zero_run.thermometer",
            "candidates[3].score.zero_count.thermometer",
            "candidates[1].score.code_bits",
            "chosen.symbols",
            "chosen.score.code_bits",
            "slots[1].symbols",
            "slots[0].score.zero_count.thermometer",
            "best_hard_wired.score.code_bits",
            "best_hard_wired.pred",
            "output.payload.pairs",
            "output.bits",
            "planes[7]",
            "planes",
            "model_id",
            "sizes[2].zero_fit",
            "sizes[0].data",
            "orig.es",
            "man.len",
            "expected_len",
            "raw_len",
        ];
        for t in texts {
            let m: Mirror = t.parse().unwrap_or_else(|e| panic!("{t}: {e}"));
            assert_eq!(m.to_string(), t);
            let json = serde_json::to_string(&m).expect("json");
            assert_eq!(json, format!("\"{t}\""));
            let back: Mirror = serde_json::from_str(&json).expect("json");
            assert_eq!(back, m);
        }
        assert_eq!(
            "candidates[2].xored".parse::<Mirror>(),
            Ok(Mirror::Candidate {
                index: 2,
                field: CandidateField::Xored
            })
        );
        assert_eq!(
            "slots[3].pred".parse::<Mirror>(),
            Ok(Mirror::Slot {
                slot: 3,
                field: CandidateField::Pred
            })
        );
        assert_eq!(
            "best_hard_wired.xored".parse::<Mirror>(),
            Ok(Mirror::BestHardWired(CandidateField::Xored))
        );
        assert_eq!(
            "sizes[1].fits".parse::<Mirror>(),
            Ok(Mirror::Size {
                index: 1,
                field: SizeField::Fits
            })
        );
        assert_eq!(
            "man.data".parse::<Mirror>(),
            Ok(Mirror::Copy {
                copy: DfManCopy::ZeroFilled,
                field: CopyField::Data
            })
        );
    }

    #[test]
    fn a_bad_mirror_is_an_error_naming_its_text() {
        for bad in [
            "candidates[x].pred",
            "candidates[01].pred",
            "candidates[1].nothing",
            "candidates[1",
            "slots[0].nothing",
            "slots[01].pred",
            "best_hard_wired.",
            "planes[3].x",
            "sizes[-1].data",
            "chosen.",
            "orig.block",
            "",
            "Block",
        ] {
            let e = bad.parse::<Mirror>().expect_err(bad);
            assert_eq!(e.text, bad);
            assert!(e.to_string().contains(&format!("`{bad}`")), "{e}");
            let json = format!("\"{bad}\"");
            let e = serde_json::from_str::<Mirror>(&json).expect_err(bad);
            assert!(e.to_string().contains(&format!("`{bad}`")), "{e}");
        }
    }

    #[test]
    fn recording_a_probe_with_an_unknown_field_fails() {
        let mut m = Module::new("t").expect("module");
        let a = m.input("a", 4).expect("input");
        let mut probes = Probes::default();
        let e = probes
            .wire(
                &mut m,
                1,
                "w",
                a.expr(),
                "candidates[0].nothing",
                When::Always,
            )
            .expect_err("unknown field");
        let text = e.to_string();
        assert!(
            text.contains("candidates[0].nothing") && text.contains("`w`"),
            "{text}"
        );
        probes
            .record(&m, 1, "a", "block", When::Always, None)
            .expect("a known field");
        assert_eq!(probes.list[0].mirrors, Mirror::Block);
    }
}
