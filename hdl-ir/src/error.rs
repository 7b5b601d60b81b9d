//! Typed errors of the IR: every width, naming and connectivity problem is
//! reported here, never by a panic.

use std::fmt;

use thiserror::Error;

/// Everything that can go wrong while building, checking, emitting or
/// evaluating IR.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum IrError {
    /// A mutation that does not fit the module or node it is applied to.
    #[error("mutation: {detail}")]
    Mutation { detail: String },

    /// A section title (a `//` comment in the output) that spans lines.
    #[error("module `{module}`: section title `{title}` spans lines")]
    MultiLineTitle { module: String, title: String },

    /// A module, signal or instance name is not a plain Verilog identifier,
    /// or is a reserved word.
    #[error("invalid identifier `{name}`: {reason}")]
    InvalidIdentifier { name: String, reason: String },

    /// Two signals or instances of one module share a name.
    #[error("module `{module}`: name `{name}` is already declared")]
    DuplicateName { module: String, name: String },

    /// A width outside `1..=MAX_WIDTH`.
    #[error("{what}: width {width} is out of range 1..={max}")]
    WidthOutOfRange { what: String, width: u64, max: u32 },

    /// A generator parameter outside the range the generator supports.
    #[error("{what} {value} is out of range {min}..={max}")]
    ParameterOutOfRange {
        what: String,
        value: u64,
        min: u64,
        max: u64,
    },

    /// Two widths that must be equal are not.
    #[error(
        "width mismatch in {context}: `{left}` is {left_width} bits but `{right}` is {right_width} bits"
    )]
    WidthMismatch {
        context: String,
        left: String,
        left_width: u32,
        right: String,
        right_width: u32,
    },

    /// An operand that must be 1 bit wide (mux select, enable, ...) is not.
    #[error("{context}: `{expr}` must be 1 bit wide but is {width} bits")]
    NotOneBit {
        context: String,
        expr: String,
        width: u32,
    },

    /// A bit/part select outside the operand, or with `hi < lo`.
    #[error("select [{hi}:{lo}] of `{expr}` is out of range for its width {width}")]
    SelectOutOfRange {
        expr: String,
        width: u32,
        hi: u32,
        lo: u32,
    },

    /// A zero-extension to a narrower width, or a truncation to a wider one.
    #[error("cannot {op} `{expr}` ({width} bits) to {target} bits")]
    BadResize {
        op: &'static str,
        expr: String,
        width: u32,
        target: u32,
    },

    /// A constant value does not fit in the requested width.
    #[error("constant {value} does not fit in {width} bits")]
    ConstTooWide { value: String, width: u32 },

    /// A concatenation with no parts.
    #[error("empty concatenation")]
    EmptyConcat,

    /// A signal of another module was used.
    #[error("signal `{signal}` does not belong to module `{module}`")]
    ForeignSignal { signal: String, module: String },

    /// The target of an assignment has the wrong kind (input, register, ...).
    #[error("module `{module}`: cannot {action} `{signal}`: it is {kind}")]
    NotAssignable {
        module: String,
        signal: String,
        kind: String,
        action: &'static str,
    },

    /// A signal was given a second driver.
    #[error("module `{module}`: `{signal}` is already driven by {existing}")]
    MultiplyDriven {
        module: String,
        signal: String,
        existing: String,
    },

    /// A register was declared before the module had a clock (or a reset,
    /// for a register with a reset value).
    #[error("module `{module}`: register `{signal}` needs a {what}; declare it first")]
    MissingClockOrReset {
        module: String,
        signal: String,
        what: &'static str,
    },

    /// The clock or reset was declared twice.
    #[error("module `{module}`: the {what} is already `{existing}`")]
    ClockOrResetRedeclared {
        module: String,
        what: &'static str,
        existing: String,
    },

    /// An instance connection names a port the child does not have.
    #[error("instance `{instance}` of `{child}`: no port `{port}`")]
    UnknownPort {
        instance: String,
        child: String,
        port: String,
    },

    /// An instance connection is missing or given twice.
    #[error("instance `{instance}` of `{child}`: port `{port}` is {problem}")]
    BadConnection {
        instance: String,
        child: String,
        port: String,
        problem: &'static str,
    },

    /// Two different modules with the same name in one hierarchy.
    #[error("two different modules are both named `{name}`")]
    ModuleNameClash { name: String },

    /// Generation-time lint failed (undriven, unused, loops).
    #[error("module `{module}` failed its checks:\n{}", ProblemList(.problems))]
    Check {
        module: String,
        problems: Vec<Problem>,
    },

    /// Evaluator: no signal of that (hierarchical) name.
    #[error("no signal named `{name}`")]
    UnknownSignal { name: String },

    /// Evaluator: only top-level inputs can be set.
    #[error("`{name}` is not a top-level input")]
    NotAnInput { name: String },

    /// A value does not fit the integer type asked for.
    #[error("`{name}` is {width} bits wide, too wide for {target}")]
    ValueTooWide {
        name: String,
        width: u32,
        target: &'static str,
    },
}

/// One finding of [`crate::Module::check`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// A wire, output or register that nothing drives.
    Undriven { signal: String },
    /// Bits of a signal that nothing reads (and that were not marked with
    /// [`crate::Module::mark_unused`]). Ranges are `(hi, lo)`.
    Unused {
        signal: String,
        ranges: Vec<(u32, u32)>,
    },
    /// A combinational cycle; the path lists hierarchical signal names.
    CombinationalLoop { path: Vec<String> },
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::Undriven { signal } => write!(f, "`{signal}` is never driven"),
            Problem::Unused { signal, ranges } => {
                write!(f, "bits of `{signal}` are never read:")?;
                for (hi, lo) in ranges {
                    if hi == lo {
                        write!(f, " [{hi}]")?;
                    } else {
                        write!(f, " [{hi}:{lo}]")?;
                    }
                }
                write!(
                    f,
                    " (use them, or Module::mark_unused if that is deliberate)"
                )
            }
            Problem::CombinationalLoop { path } => {
                write!(f, "combinational loop: {}", path.join(" -> "))
            }
        }
    }
}

struct ProblemList<'a>(&'a [Problem]);

impl fmt::Display for ProblemList<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, p) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "  - {p}")?;
        }
        Ok(())
    }
}

/// Shortens an expression's text for an error message.
pub(crate) fn brief(text: impl fmt::Display) -> String {
    const MAX: usize = 80;
    let s = text.to_string();
    if s.chars().count() <= MAX {
        s
    } else {
        let mut out: String = s.chars().take(MAX - 3).collect();
        out.push_str("...");
        out
    }
}
