//! The valid/ready shell every generated unit shares: a module with the
//! clock `clk`, the reset `rst`, the handshake ports `in_valid`/`in_ready`
//! and `out_valid`/`out_ready`, the unit's typed data ports, and the stage
//! pipeline ([`Pipeline`]) whose first load enable is `in_ready` and whose
//! last valid flag is `out_valid`.
//!
//! A unit is declared in three steps, each a type of its own, so the ports
//! come out in the one order every unit has (`clk`, `rst`, `in_valid`,
//! `in_ready`, the data inputs, `out_valid`, `out_ready`, the data
//! outputs):
//!
//! 1. [`StreamUnit::begin`] gives the [`StreamInputs`]: declare the data
//!    inputs with [`StreamInputs::input`];
//! 2. [`StreamInputs::outputs`] gives the [`StreamOutputs`]: declare the
//!    data outputs with [`StreamOutputs::output`] (logic may follow, on
//!    [`StreamOutputs::m`], before the pipeline control is declared);
//! 3. [`StreamOutputs::pipeline`] declares the pipeline control and wires
//!    the handshake, giving the [`StreamUnit`]: open stages, make stage
//!    registers, drive the outputs and [`StreamUnit::finish`] into the
//!    module and its [`UnitDescription`].

use crate::circuits::Pipeline;
use crate::ir::{Expr, IrError, Module, Problem, Signal};
use crate::unit::{StageProbe, UnitDescription};

/// A data output port of a stream unit, driven once with
/// [`StreamUnit::drive`].
#[derive(Clone, Debug)]
pub struct OutPort(Signal);

impl OutPort {
    /// The port's name.
    pub fn name(&self) -> &str {
        self.0.name()
    }

    /// The port's width in bits.
    pub fn width(&self) -> u32 {
        self.0.width()
    }
}

/// The handshake ports of the input side: `in_valid` and `in_ready`.
struct InSide {
    in_valid: Expr,
    in_ready: Signal,
}

/// The module with `clk`, `rst`, `in_valid` and `in_ready` declared; the
/// data inputs come next.
pub struct StreamInputs {
    m: Module,
    side: InSide,
}

impl StreamInputs {
    /// Declares the data input `name`, `width` bits wide.
    pub fn input(&mut self, name: &str, width: u32) -> Result<Expr, IrError> {
        Ok(self.m.input(name, width)?.expr())
    }

    /// Declares `out_valid` and `out_ready`; the data outputs come next.
    pub fn outputs(mut self) -> Result<StreamOutputs, IrError> {
        let out_valid = self.m.output("out_valid", 1)?;
        let out_ready = self.m.input("out_ready", 1)?.expr();
        Ok(StreamOutputs {
            m: self.m,
            side: self.side,
            out_valid,
            out_ready,
            outputs: Vec::new(),
        })
    }
}

/// The module with every handshake port declared: the data outputs come
/// next, then (on [`StreamOutputs::m`]) any logic that precedes the
/// pipeline control in the Verilog.
pub struct StreamOutputs {
    /// The module being built.
    pub m: Module,
    side: InSide,
    out_valid: Signal,
    out_ready: Expr,
    outputs: Vec<Signal>,
}

impl StreamOutputs {
    /// Declares the data output `name`, `width` bits wide.
    pub fn output(&mut self, name: &str, width: u32) -> Result<OutPort, IrError> {
        let s = self.m.output(name, width)?;
        self.outputs.push(s.clone());
        Ok(OutPort(s))
    }

    /// Opens stage `stage` (1-based) before the pipeline control exists
    /// (see [`StreamUnit::stage`]).
    pub fn stage(&mut self, stage: usize, what: &str) -> Result<(), IrError> {
        Pipeline::open_stage(&mut self.m, stage, what)
    }

    /// Declares the control of a `stages`-stage pipeline
    /// ([`Pipeline::new`]) and wires the handshake: `in_ready` is the
    /// first stage's load enable, `out_valid` the last stage's valid flag.
    pub fn pipeline(self, stages: usize) -> Result<StreamUnit, IrError> {
        self.pipeline_with(stages, None)
    }

    /// [`StreamOutputs::pipeline`] with an input hold: while `hold` (1
    /// bit) is high no block is accepted: the pipeline sees
    /// `in_valid & !hold`, and `in_ready` is the first stage's load enable
    /// and `!hold`.
    pub fn pipeline_held(self, stages: usize, hold: &Expr) -> Result<StreamUnit, IrError> {
        self.pipeline_with(stages, Some(hold))
    }

    fn pipeline_with(mut self, stages: usize, hold: Option<&Expr>) -> Result<StreamUnit, IrError> {
        let in_valid = match hold {
            Some(h) => self.side.in_valid.and(&h.not())?,
            None => self.side.in_valid.clone(),
        };
        let pipe = Pipeline::new(&mut self.m, stages, &in_valid, &self.out_ready)?;
        let (first, last) = match (pipe.enable.first(), pipe.valid.last()) {
            (Some(f), Some(l)) => (f.clone(), l.expr()),
            _ => {
                return Err(IrError::ParameterOutOfRange {
                    what: format!("pipeline stages of `{}`", self.m.name()),
                    value: stages as u64,
                    min: 1,
                    max: u32::MAX as u64,
                })
            }
        };
        let first = match hold {
            Some(h) => first.and(&h.not())?,
            None => first,
        };
        self.m.assign(&self.side.in_ready, first)?;
        self.m.assign(&self.out_valid, last)?;
        Ok(StreamUnit {
            m: self.m,
            pipe,
            undriven: self.outputs,
        })
    }
}

/// A stream unit with its pipeline: stages, stage registers, output
/// assigns, and the description it finishes into.
pub struct StreamUnit {
    /// The module being built.
    pub m: Module,
    /// The pipeline control and its registers.
    pub pipe: Pipeline,
    /// The data outputs not driven yet.
    undriven: Vec<Signal>,
}

impl StreamUnit {
    /// Starts the module `module`: declares `clk`, `rst`, `in_valid` and
    /// `in_ready`.
    pub fn begin(module: &str) -> Result<StreamInputs, IrError> {
        let mut m = Module::new(module)?;
        m.clock("clk")?;
        m.reset("rst")?;
        let in_valid = m.input("in_valid", 1)?.expr();
        let in_ready = m.output("in_ready", 1)?;
        Ok(StreamInputs {
            m,
            side: InSide { in_valid, in_ready },
        })
    }

    /// The number of pipeline stages.
    pub fn stages(&self) -> usize {
        self.pipe.valid.len()
    }

    /// Opens stage `stage` (1-based): the signals declared from here on
    /// are its logic, and the Verilog opens them with the comment
    /// `// stage <stage>: <what>`.
    pub fn stage(&mut self, stage: usize, what: &str) -> Result<(), IrError> {
        Pipeline::open_stage(&mut self.m, stage, what)
    }

    /// The data register `s<stage>_<name>` of stage `stage` (1-based),
    /// loading `next` when the stage is enabled ([`Pipeline::reg`]).
    pub fn reg(&mut self, stage: usize, name: &str, next: Expr) -> Result<Expr, IrError> {
        self.pipe.reg(&mut self.m, stage, name, next)
    }

    /// Drives the data output `port` with `value` (of the port's width).
    pub fn drive(&mut self, port: &OutPort, value: Expr) -> Result<(), IrError> {
        self.m.assign(&port.0, value)?;
        self.undriven.retain(|s| s.name() != port.name());
        Ok(())
    }

    /// The module and its description (ports, latency, stages and their
    /// registers, `probes`); an error naming the data outputs left
    /// undriven.
    pub fn finish(self, probes: Vec<StageProbe>) -> Result<(Module, UnitDescription), IrError> {
        if !self.undriven.is_empty() {
            return Err(IrError::Check {
                module: self.m.name().to_string(),
                problems: self
                    .undriven
                    .iter()
                    .map(|s| Problem::Undriven {
                        signal: s.name().to_string(),
                    })
                    .collect(),
            });
        }
        let unit = self.pipe.describe(&self.m, probes);
        Ok((self.m, unit))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Sim;
    use crate::mpc::probes::{Probes, When};
    use crate::unit::{Direction, PortDesc, ProbeKind};

    /// A two-stage unit that delays `in_data` (8 bits) and its complement;
    /// `s2_data` recorded as a probe.
    fn delay_unit() -> Result<(Module, UnitDescription), IrError> {
        let mut u = StreamUnit::begin("delay")?;
        let in_data = u.input("in_data", 8)?;
        let mut u = u.outputs()?;
        let out_data = u.output("out_data", 8)?;
        let out_inv = u.output("out_inv", 8)?;
        let mut u = u.pipeline(2)?;
        u.stage(1, "take")?;
        let s1 = u.reg(1, "data", in_data)?;
        u.stage(2, "hold")?;
        let s2 = u.reg(2, "data", s1.clone())?;
        let inv = u.reg(2, "inv", s1.not())?;
        u.drive(&out_data, s2)?;
        u.drive(&out_inv, inv)?;
        let mut probes = Probes::default();
        probes.record_reg(&u.m, 2, "data", "block", When::Always, None)?;
        u.finish(probes.list)
    }

    #[test]
    fn ports_come_in_the_shell_order() -> Result<(), IrError> {
        let (_, unit) = delay_unit()?;
        let port = |name: &str, dir, width| PortDesc {
            name: name.to_string(),
            dir,
            width,
        };
        use Direction::{Input, Output};
        assert_eq!(
            unit.ports,
            vec![
                port("clk", Input, 1),
                port("rst", Input, 1),
                port("in_valid", Input, 1),
                port("in_ready", Output, 1),
                port("in_data", Input, 8),
                port("out_valid", Output, 1),
                port("out_ready", Input, 1),
                port("out_data", Output, 8),
                port("out_inv", Output, 8),
            ]
        );
        Ok(())
    }

    #[test]
    fn description_lists_stages_registers_and_probes() -> Result<(), IrError> {
        let (_, unit) = delay_unit()?;
        assert_eq!(unit.module, "delay");
        assert_eq!(unit.latency, 2);
        assert_eq!(
            unit.control,
            ["s1_valid", "s2_valid", "s1_enable", "s2_enable"]
        );
        let stages: Vec<(usize, &str, Vec<&str>)> = unit
            .stages
            .iter()
            .map(|s| {
                (
                    s.stage,
                    s.title.as_str(),
                    s.registers.iter().map(String::as_str).collect(),
                )
            })
            .collect();
        assert_eq!(
            stages,
            vec![
                (1, "stage 1: take", vec!["s1_data"]),
                (2, "stage 2: hold", vec!["s2_data", "s2_inv"]),
            ]
        );
        let probes: Vec<(&str, usize, ProbeKind, u32)> = unit
            .probes
            .iter()
            .map(|p| (p.name.as_str(), p.stage, p.kind, p.width))
            .collect();
        assert_eq!(probes, [("s2_data", 2, ProbeKind::Register, 8)]);
        Ok(())
    }

    /// `in_ready` is the first stage's load enable and `out_valid` the last
    /// stage's valid flag: a stalled output fills the pipeline and only
    /// then refuses input; a value comes out after exactly two edges.
    #[test]
    fn handshake_is_first_enable_and_last_valid() -> Result<(), IrError> {
        let (m, _) = delay_unit()?;
        let mut sim = Sim::new(&m)?;
        sim.set_u128("rst", 1)?;
        sim.set_u128("in_valid", 0)?;
        sim.set_u128("out_ready", 0)?;
        sim.set_u128("in_data", 0)?;
        sim.step();
        sim.set_u128("rst", 0)?;
        assert_eq!(sim.get_u128("in_ready")?, 1, "empty pipeline");
        assert_eq!(sim.get_u128("out_valid")?, 0);
        // one value in, output stalled
        sim.set_u128("in_valid", 1)?;
        sim.set_u128("in_data", 0x5a)?;
        sim.step();
        sim.set_u128("in_valid", 0)?;
        assert_eq!(sim.get_u128("out_valid")?, 0, "after one edge: stage 1");
        assert_eq!(sim.get_u128("in_ready")?, 1);
        sim.step();
        // stage 2 full and stalled, stage 1 empty: input still accepted
        assert_eq!(sim.get_u128("out_valid")?, 1, "after two edges: out");
        assert_eq!(sim.get_u128("out_data")?, 0x5a);
        assert_eq!(sim.get_u128("out_inv")?, 0xa5);
        assert_eq!(sim.get_u128("in_ready")?, 1, "stage 1 empty");
        // a second value fills stage 1: now input is refused
        sim.set_u128("in_valid", 1)?;
        sim.set_u128("in_data", 0x33)?;
        sim.step();
        sim.set_u128("in_valid", 0)?;
        assert_eq!(sim.get_u128("in_ready")?, 0, "both stages full, stalled");
        assert_eq!(sim.get_u128("out_data")?, 0x5a, "held while stalled");
        // the output drains: input accepted again, the second value moves on
        sim.set_u128("out_ready", 1)?;
        assert_eq!(sim.get_u128("in_ready")?, 1, "draining");
        sim.step();
        assert_eq!(sim.get_u128("out_valid")?, 1);
        assert_eq!(sim.get_u128("out_data")?, 0x33);
        sim.step();
        assert_eq!(sim.get_u128("out_valid")?, 0, "empty again");
        Ok(())
    }

    /// With a hold input, `in_ready` is low and no block enters while the
    /// hold is high; the blocks inside still move on and leave.
    #[test]
    fn a_held_pipeline_refuses_input_and_drains() -> Result<(), IrError> {
        let mut u = StreamUnit::begin("held")?;
        let in_data = u.input("in_data", 8)?;
        let hold = u.input("hold", 1)?;
        let mut u = u.outputs()?;
        let out_data = u.output("out_data", 8)?;
        let mut u = u.pipeline_held(2, &hold)?;
        let s1 = u.reg(1, "data", in_data)?;
        let s2 = u.reg(2, "data", s1)?;
        u.drive(&out_data, s2)?;
        let (m, _) = u.finish(Vec::new())?;
        let mut sim = Sim::new(&m)?;
        sim.set_u128("rst", 1)?;
        for port in ["in_valid", "out_ready", "in_data", "hold"] {
            sim.set_u128(port, 0)?;
        }
        sim.step();
        sim.set_u128("rst", 0)?;
        sim.set_u128("out_ready", 1)?;
        // one block in, then the hold
        sim.set_u128("in_valid", 1)?;
        sim.set_u128("in_data", 0x11)?;
        assert_eq!(sim.get_u128("in_ready")?, 1);
        sim.step();
        sim.set_u128("hold", 1)?;
        sim.set_u128("in_data", 0x22)?;
        assert_eq!(sim.get_u128("in_ready")?, 0, "held");
        sim.step();
        assert_eq!(sim.get_u128("out_valid")?, 1, "the block inside leaves");
        assert_eq!(sim.get_u128("out_data")?, 0x11);
        sim.step();
        assert_eq!(sim.get_u128("out_valid")?, 0, "nothing entered while held");
        sim.set_u128("hold", 0)?;
        assert_eq!(sim.get_u128("in_ready")?, 1, "released");
        sim.step();
        sim.set_u128("in_valid", 0)?;
        sim.step();
        assert_eq!(sim.get_u128("out_data")?, 0x22);
        assert_eq!(sim.get_u128("out_valid")?, 1);
        Ok(())
    }

    #[test]
    fn an_undriven_output_is_an_error() -> Result<(), IrError> {
        let mut u = StreamUnit::begin("half")?;
        let in_data = u.input("in_data", 4)?;
        let mut u = u.outputs()?;
        let out_a = u.output("out_a", 4)?;
        u.output("out_b", 4)?;
        let mut u = u.pipeline(1)?;
        let r = u.reg(1, "a", in_data)?;
        u.drive(&out_a, r)?;
        match u.finish(Vec::new()) {
            Err(IrError::Check { problems, .. }) => assert_eq!(
                problems,
                vec![Problem::Undriven {
                    signal: "out_b".to_string()
                }]
            ),
            other => panic!("expected an undriven out_b, got {:?}", other.map(|_| ())),
        }
        Ok(())
    }

    #[test]
    fn zero_stages_are_refused() -> Result<(), IrError> {
        let u = StreamUnit::begin("none")?.outputs()?;
        assert!(matches!(
            u.pipeline(0),
            Err(IrError::ParameterOutOfRange { value: 0, .. })
        ));
        Ok(())
    }
}
