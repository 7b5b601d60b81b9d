//! Expressions with statically known widths.
//!
//! Every constructor checks its operands' widths and returns
//! [`IrError`] on a mismatch, so a built [`Expr`] is always well-typed:
//!
//! | construct                    | operand widths          | result width       |
//! |------------------------------|-------------------------|--------------------|
//! | constant                     | —                       | as given           |
//! | signal                       | —                       | signal width       |
//! | `x[hi:lo]`, `x[i]`           | `hi < w`, `lo <= hi`    | `hi - lo + 1`      |
//! | `{a, b, ...}`                | any                     | sum (≤ 65536)      |
//! | `{n{a}}`                     | any, `n >= 1`           | `n * w` (≤ 65536)  |
//! | `~a`                         | any                     | `w`                |
//! | `a & b`, `a \| b`, `a ^ b`   | equal                   | `w`                |
//! | `a + b`, `a - b`             | equal                   | `w` (wraps mod 2^w)|
//! | `==` `!=` `<` `<=` `>` `>=`  | equal (unsigned)        | 1                  |
//! | `&a`, `\|a`, `^a`            | any                     | 1                  |
//! | `c ? a : b`                  | `c` 1 bit, `a`,`b` equal| `w`                |
//! | shift by a constant          | any                     | `w` (zero fill)    |
//! | zero-extend / truncate       | to wider / narrower     | as given           |
//!
//! Add and subtract keep the operand width and drop the carry; to keep the
//! carry, zero-extend both operands by one bit first. Because every
//! operator's operands have equal widths and assignments must match the
//! target exactly, Verilog's context-determined expression sizing gives the
//! same result as these rules.
//!
//! Constant shifts, selects and resizes are built from selects,
//! concatenations and zero literals, so the emitted Verilog has no shift
//! operators and no unsized literals. Selects are pushed through bitwise
//! operators, concatenations, muxes and the low bits of add/sub, so they
//! usually land on a signal; the few that cannot (the upper bits of a sum)
//! are given a temporary wire by the emitter, since Verilog-2005 can only
//! select from a name.

use std::fmt;
use std::sync::Arc;

use super::bits::{check_width, Bits};
use super::error::{brief, IrError};
use super::signal::Signal;

/// Binary operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinOp {
    And,
    Or,
    Xor,
    Add,
    Sub,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl BinOp {
    /// The Verilog operator.
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::And => "&",
            BinOp::Or => "|",
            BinOp::Xor => "^",
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
        }
    }

    /// True for the comparisons (1-bit result).
    pub fn is_compare(self) -> bool {
        matches!(
            self,
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge
        )
    }
}

/// Reduction operators (1-bit result).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    And,
    Or,
    Xor,
}

impl ReduceOp {
    /// The Verilog operator.
    pub fn symbol(self) -> &'static str {
        match self {
            ReduceOp::And => "&",
            ReduceOp::Or => "|",
            ReduceOp::Xor => "^",
        }
    }
}

/// A width-checked expression. Build it with the constructors below; its
/// width is always known.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Expr {
    pub(crate) width: u32,
    pub(crate) kind: ExprKind,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum ExprKind {
    Const(Bits),
    Ref(Signal),
    /// `arg[hi:lo]`; `arg` is a `Ref` except for the upper bits of a sum.
    Slice {
        arg: Arc<Expr>,
        hi: u32,
        lo: u32,
    },
    /// Most significant part first.
    Concat(Vec<Expr>),
    Repeat {
        arg: Arc<Expr>,
        count: u32,
    },
    Not(Arc<Expr>),
    Binary {
        op: BinOp,
        lhs: Arc<Expr>,
        rhs: Arc<Expr>,
    },
    Reduce {
        op: ReduceOp,
        arg: Arc<Expr>,
    },
    Mux {
        cond: Arc<Expr>,
        then: Arc<Expr>,
        els: Arc<Expr>,
    },
}

impl From<&Signal> for Expr {
    fn from(s: &Signal) -> Expr {
        Expr {
            width: s.width,
            kind: ExprKind::Ref(s.clone()),
        }
    }
}

impl From<Signal> for Expr {
    fn from(s: Signal) -> Expr {
        Expr {
            width: s.width,
            kind: ExprKind::Ref(s),
        }
    }
}

impl From<Bits> for Expr {
    fn from(b: Bits) -> Expr {
        Expr::bits(b)
    }
}

impl From<&Expr> for Expr {
    fn from(e: &Expr) -> Expr {
        e.clone()
    }
}

fn mismatch(context: &str, a: &Expr, b: &Expr) -> IrError {
    IrError::WidthMismatch {
        context: context.to_string(),
        left: brief(a),
        left_width: a.width,
        right: brief(b),
        right_width: b.width,
    }
}

impl Expr {
    // ----- leaves -----

    /// A `width`-bit constant; an error if `value` does not fit.
    pub fn constant(value: u128, width: u32) -> Result<Expr, IrError> {
        Ok(Expr::bits(Bits::from_u128(value, width)?))
    }

    /// A constant from a bit vector.
    pub fn bits(b: Bits) -> Expr {
        Expr {
            width: b.width(),
            kind: ExprKind::Const(b),
        }
    }

    /// All-zero constant.
    pub fn zero(width: u32) -> Result<Expr, IrError> {
        Ok(Expr::bits(Bits::zero(width)?))
    }

    /// All-ones constant.
    pub fn ones(width: u32) -> Result<Expr, IrError> {
        Ok(Expr::bits(Bits::ones(width)?))
    }

    /// 1-bit constant.
    pub fn bool(b: bool) -> Expr {
        Expr::bits(Bits::from_bool(b))
    }

    // ----- inspection -----

    /// Width in bits.
    pub fn width(&self) -> u32 {
        self.width
    }

    /// The value, if this is a constant.
    pub fn as_const(&self) -> Option<&Bits> {
        match &self.kind {
            ExprKind::Const(b) => Some(b),
            _ => None,
        }
    }

    /// The signal, if this is a whole-signal reference.
    pub fn as_signal(&self) -> Option<&Signal> {
        match &self.kind {
            ExprKind::Ref(s) => Some(s),
            _ => None,
        }
    }

    // ----- selects and resizing -----

    /// Constant part select `self[hi:lo]` (`lo <= hi < width`).
    pub fn slice(&self, hi: u32, lo: u32) -> Result<Expr, IrError> {
        if lo > hi || hi >= self.width {
            return Err(IrError::SelectOutOfRange {
                expr: brief(self),
                width: self.width,
                hi,
                lo,
            });
        }
        Ok(self.slice_unchecked(hi, lo))
    }

    /// Constant bit select `self[i]`.
    pub fn bit(&self, i: u32) -> Result<Expr, IrError> {
        self.slice(i, i)
    }

    /// Zero-extends to `width` (which must be at least the current width).
    pub fn zext(&self, width: u32) -> Result<Expr, IrError> {
        check_width(
            || format!("zero-extension of `{}`", brief(self)),
            u64::from(width),
        )?;
        if width < self.width {
            return Err(IrError::BadResize {
                op: "zero-extend",
                expr: brief(self),
                width: self.width,
                target: width,
            });
        }
        if width == self.width {
            return Ok(self.clone());
        }
        Expr::concat([Expr::bits(Bits::zeros(width - self.width)), self.clone()])
    }

    /// Keeps the low `width` bits (which must be at most the current width).
    pub fn trunc(&self, width: u32) -> Result<Expr, IrError> {
        if width == 0 || width > self.width {
            return Err(IrError::BadResize {
                op: "truncate",
                expr: brief(self),
                width: self.width,
                target: width,
            });
        }
        Ok(self.slice_unchecked(width - 1, 0))
    }

    /// Zero-extends or truncates to `width`, whichever applies.
    pub fn resize(&self, width: u32) -> Result<Expr, IrError> {
        if width < self.width {
            self.trunc(width)
        } else {
            self.zext(width)
        }
    }

    /// Logical shift left by a constant, keeping the width (zero fill).
    /// Emitted as a select and a concatenation, never `<<`.
    pub fn shl(&self, amount: u32) -> Expr {
        let w = self.width;
        if amount == 0 {
            self.clone()
        } else if amount >= w {
            Expr::bits(Bits::zeros(w))
        } else {
            Expr::concat_unchecked(vec![
                self.slice_unchecked(w - 1 - amount, 0),
                Expr::bits(Bits::zeros(amount)),
            ])
        }
    }

    /// Logical shift right by a constant, keeping the width (zero fill).
    pub fn shr(&self, amount: u32) -> Expr {
        let w = self.width;
        if amount == 0 {
            self.clone()
        } else if amount >= w {
            Expr::bits(Bits::zeros(w))
        } else {
            Expr::concat_unchecked(vec![
                Expr::bits(Bits::zeros(amount)),
                self.slice_unchecked(w - 1, amount),
            ])
        }
    }

    // ----- concatenation -----

    /// `{parts[0], parts[1], ...}`: the first part is the most significant,
    /// as in Verilog.
    pub fn concat(parts: impl IntoIterator<Item = Expr>) -> Result<Expr, IrError> {
        let parts: Vec<Expr> = parts.into_iter().collect();
        if parts.is_empty() {
            return Err(IrError::EmptyConcat);
        }
        let total: u64 = parts.iter().map(|p| u64::from(p.width)).sum();
        check_width(|| "concatenation".to_string(), total)?;
        Ok(Expr::concat_unchecked(parts))
    }

    /// `{count{self}}`.
    pub fn repeat(&self, count: u32) -> Result<Expr, IrError> {
        check_width(
            || format!("replication {{{count}{{{}}}}}", brief(self)),
            u64::from(count) * u64::from(self.width),
        )?;
        if count == 1 {
            return Ok(self.clone());
        }
        if let ExprKind::Const(b) = &self.kind {
            return Ok(Expr::bits(b.repeat(count)));
        }
        Ok(Expr {
            width: self.width * count,
            kind: ExprKind::Repeat {
                arg: Arc::new(self.clone()),
                count,
            },
        })
    }

    // ----- bitwise -----

    /// `~self`.
    pub fn not(&self) -> Expr {
        if let ExprKind::Const(b) = &self.kind {
            return Expr::bits(b.not());
        }
        if let ExprKind::Not(inner) = &self.kind {
            return (**inner).clone();
        }
        Expr {
            width: self.width,
            kind: ExprKind::Not(Arc::new(self.clone())),
        }
    }

    /// `self & rhs` (equal widths).
    pub fn and(&self, rhs: &Expr) -> Result<Expr, IrError> {
        self.binary(BinOp::And, rhs)
    }

    /// `self | rhs` (equal widths).
    pub fn or(&self, rhs: &Expr) -> Result<Expr, IrError> {
        self.binary(BinOp::Or, rhs)
    }

    /// `self ^ rhs` (equal widths).
    pub fn xor(&self, rhs: &Expr) -> Result<Expr, IrError> {
        self.binary(BinOp::Xor, rhs)
    }

    // ----- arithmetic -----

    /// `self + rhs` (equal widths; the result has the same width and the
    /// carry is dropped).
    pub fn add(&self, rhs: &Expr) -> Result<Expr, IrError> {
        self.binary(BinOp::Add, rhs)
    }

    /// `self - rhs` (equal widths; wraps modulo 2^width).
    pub fn sub(&self, rhs: &Expr) -> Result<Expr, IrError> {
        self.binary(BinOp::Sub, rhs)
    }

    // ----- comparisons (unsigned, 1-bit result) -----

    /// `self == rhs`.
    pub fn cmp_eq(&self, rhs: &Expr) -> Result<Expr, IrError> {
        self.binary(BinOp::Eq, rhs)
    }

    /// `self != rhs`.
    pub fn cmp_ne(&self, rhs: &Expr) -> Result<Expr, IrError> {
        self.binary(BinOp::Ne, rhs)
    }

    /// `self < rhs` (unsigned).
    pub fn cmp_lt(&self, rhs: &Expr) -> Result<Expr, IrError> {
        self.binary(BinOp::Lt, rhs)
    }

    /// `self <= rhs` (unsigned).
    pub fn cmp_le(&self, rhs: &Expr) -> Result<Expr, IrError> {
        self.binary(BinOp::Le, rhs)
    }

    /// `self > rhs` (unsigned).
    pub fn cmp_gt(&self, rhs: &Expr) -> Result<Expr, IrError> {
        self.binary(BinOp::Gt, rhs)
    }

    /// `self >= rhs` (unsigned).
    pub fn cmp_ge(&self, rhs: &Expr) -> Result<Expr, IrError> {
        self.binary(BinOp::Ge, rhs)
    }

    /// Any binary operator; operands must have equal widths.
    pub fn binary(&self, op: BinOp, rhs: &Expr) -> Result<Expr, IrError> {
        if self.width != rhs.width {
            return Err(mismatch(
                &format!("operands of `{}`", op.symbol()),
                self,
                rhs,
            ));
        }
        if let (ExprKind::Const(a), ExprKind::Const(b)) = (&self.kind, &rhs.kind) {
            return Ok(Expr::bits(fold_binary(op, a, b)));
        }
        // Identities with one constant operand, so generated code never
        // shows `x & 1'b1` or `1'b0 | x`: x & 1..1 = x, x & 0 = 0,
        // x | 0 = x, x | 1..1 = 1..1, x ^ 0 = x, x + 0 = x, x - 0 = x.
        let folded = |c: &Bits, x: &Expr, c_first: bool| -> Option<Expr> {
            match op {
                BinOp::And if c.is_ones() => Some(x.clone()),
                BinOp::And if c.is_zero() => Some(Expr::bits(c.clone())),
                BinOp::Or if c.is_zero() => Some(x.clone()),
                BinOp::Or if c.is_ones() => Some(Expr::bits(c.clone())),
                BinOp::Xor | BinOp::Add if c.is_zero() => Some(x.clone()),
                BinOp::Sub if c.is_zero() && !c_first => Some(x.clone()),
                _ => None,
            }
        };
        if let ExprKind::Const(c) = &rhs.kind {
            if let Some(e) = folded(c, self, false) {
                return Ok(e);
            }
        }
        if let ExprKind::Const(c) = &self.kind {
            if let Some(e) = folded(c, rhs, true) {
                return Ok(e);
            }
        }
        Ok(Expr {
            width: if op.is_compare() { 1 } else { self.width },
            kind: ExprKind::Binary {
                op,
                lhs: Arc::new(self.clone()),
                rhs: Arc::new(rhs.clone()),
            },
        })
    }

    // ----- reductions (1-bit result) -----

    /// `&self`.
    pub fn reduce_and(&self) -> Expr {
        self.reduce(ReduceOp::And)
    }

    /// `|self`.
    pub fn reduce_or(&self) -> Expr {
        self.reduce(ReduceOp::Or)
    }

    /// `^self`.
    pub fn reduce_xor(&self) -> Expr {
        self.reduce(ReduceOp::Xor)
    }

    /// Any reduction. Reducing a 1-bit expression returns it unchanged.
    pub fn reduce(&self, op: ReduceOp) -> Expr {
        if self.width == 1 {
            return self.clone();
        }
        if let ExprKind::Const(b) = &self.kind {
            return Expr::bits(fold_reduce(op, b));
        }
        Expr {
            width: 1,
            kind: ExprKind::Reduce {
                op,
                arg: Arc::new(self.clone()),
            },
        }
    }

    // ----- mux -----

    /// `cond ? then : els`: `cond` is 1 bit, `then` and `els` equal widths.
    pub fn mux(cond: &Expr, then: &Expr, els: &Expr) -> Result<Expr, IrError> {
        if cond.width != 1 {
            return Err(IrError::NotOneBit {
                context: "mux select".to_string(),
                expr: brief(cond),
                width: cond.width,
            });
        }
        if then.width != els.width {
            return Err(mismatch("mux arms", then, els));
        }
        if let ExprKind::Const(c) = &cond.kind {
            return Ok(if c.bit(0) { then.clone() } else { els.clone() });
        }
        if then == els {
            return Ok(then.clone());
        }
        Ok(Expr {
            width: then.width,
            kind: ExprKind::Mux {
                cond: Arc::new(cond.clone()),
                then: Arc::new(then.clone()),
                els: Arc::new(els.clone()),
            },
        })
    }

    // ----- internals -----

    /// Builds a concatenation: flattens nested ones, merges adjacent
    /// constants and adjacent selects of the same signal.
    pub(crate) fn concat_unchecked(parts: Vec<Expr>) -> Expr {
        let mut flat: Vec<Expr> = Vec::with_capacity(parts.len());
        for p in parts {
            let items = match p.kind {
                ExprKind::Concat(inner) => inner,
                other => vec![Expr {
                    width: p.width,
                    kind: other,
                }],
            };
            for item in items {
                if let Some(last) = flat.last_mut() {
                    if let Some(merged) = merge_adjacent(last, &item) {
                        *last = merged;
                        continue;
                    }
                }
                flat.push(item);
            }
        }
        if flat.len() == 1 {
            if let Some(only) = flat.pop() {
                return only;
            }
        }
        Expr {
            width: flat.iter().map(|p| p.width).sum(),
            kind: ExprKind::Concat(flat),
        }
    }

    /// `self[hi:lo]` for an in-range select, pushed down the tree.
    pub(crate) fn slice_unchecked(&self, hi: u32, lo: u32) -> Expr {
        let width = hi - lo + 1;
        if lo == 0 && width == self.width {
            return self.clone();
        }
        let raw = |arg: &Expr| Expr {
            width,
            kind: ExprKind::Slice {
                arg: Arc::new(arg.clone()),
                hi,
                lo,
            },
        };
        match &self.kind {
            ExprKind::Const(b) => Expr::bits(b.slice(hi, lo)),
            ExprKind::Ref(_) => raw(self),
            ExprKind::Slice { arg, lo: l0, .. } => arg.slice_unchecked(hi + l0, lo + l0),
            ExprKind::Concat(parts) => {
                let mut picked = Vec::new();
                let mut top = self.width;
                for p in parts {
                    let p_hi = top - 1;
                    let p_lo = top - p.width;
                    top = p_lo;
                    if p_lo > hi || p_hi < lo {
                        continue;
                    }
                    let s_hi = hi.min(p_hi) - p_lo;
                    let s_lo = lo.max(p_lo) - p_lo;
                    picked.push(p.slice_unchecked(s_hi, s_lo));
                }
                Expr::concat_unchecked(picked)
            }
            ExprKind::Repeat { arg, .. } => {
                let aw = arg.width;
                let (first, last) = (hi / aw, lo / aw);
                let mut picked = Vec::new();
                let mut k = first;
                loop {
                    let c_lo = k * aw;
                    let s_hi = hi.min(c_lo + aw - 1) - c_lo;
                    let s_lo = lo.max(c_lo) - c_lo;
                    picked.push(arg.slice_unchecked(s_hi, s_lo));
                    if k == last {
                        break;
                    }
                    k -= 1;
                }
                let full = picked.iter().filter(|p| p.width == aw).count() as u32;
                if full >= 2 && picked.len() as u32 == full {
                    Expr {
                        width,
                        kind: ExprKind::Repeat {
                            arg: arg.clone(),
                            count: full,
                        },
                    }
                } else {
                    Expr::concat_unchecked(picked)
                }
            }
            ExprKind::Not(a) => a.slice_unchecked(hi, lo).not(),
            ExprKind::Binary { op, lhs, rhs } => match op {
                BinOp::And | BinOp::Or | BinOp::Xor => Expr {
                    width,
                    kind: ExprKind::Binary {
                        op: *op,
                        lhs: Arc::new(lhs.slice_unchecked(hi, lo)),
                        rhs: Arc::new(rhs.slice_unchecked(hi, lo)),
                    },
                },
                BinOp::Add | BinOp::Sub => {
                    // The low hi+1 bits of a sum depend only on the low
                    // hi+1 bits of its operands.
                    let low = Expr {
                        width: hi + 1,
                        kind: ExprKind::Binary {
                            op: *op,
                            lhs: Arc::new(lhs.slice_unchecked(hi, 0)),
                            rhs: Arc::new(rhs.slice_unchecked(hi, 0)),
                        },
                    };
                    if lo == 0 {
                        low
                    } else {
                        raw(&low)
                    }
                }
                // Comparisons are 1 bit wide: only the full select exists.
                _ => raw(self),
            },
            ExprKind::Reduce { .. } => raw(self),
            ExprKind::Mux { cond, then, els } => Expr {
                width,
                kind: ExprKind::Mux {
                    cond: cond.clone(),
                    then: Arc::new(then.slice_unchecked(hi, lo)),
                    els: Arc::new(els.slice_unchecked(hi, lo)),
                },
            },
        }
    }

    /// Visits every signal reference with the bit range `(hi, lo)` it reads.
    pub(crate) fn visit_refs(&self, f: &mut dyn FnMut(&Signal, u32, u32)) {
        match &self.kind {
            ExprKind::Const(_) => {}
            ExprKind::Ref(s) => f(s, s.width - 1, 0),
            ExprKind::Slice { arg, hi, lo } => match &arg.kind {
                ExprKind::Ref(s) => f(s, *hi, *lo),
                _ => arg.visit_refs(f),
            },
            ExprKind::Concat(parts) => parts.iter().for_each(|p| p.visit_refs(f)),
            ExprKind::Repeat { arg, .. } | ExprKind::Not(arg) | ExprKind::Reduce { arg, .. } => {
                arg.visit_refs(f)
            }
            ExprKind::Binary { lhs, rhs, .. } => {
                lhs.visit_refs(f);
                rhs.visit_refs(f);
            }
            ExprKind::Mux { cond, then, els } => {
                cond.visit_refs(f);
                then.visit_refs(f);
                els.visit_refs(f);
            }
        }
    }

    /// Rebuilds the tree bottom-up, letting `f` replace each node after its
    /// children were rebuilt. `f` must preserve widths.
    pub(crate) fn rewrite(&self, f: &mut dyn FnMut(Expr) -> Expr) -> Expr {
        let b = |e: &Expr, f: &mut dyn FnMut(Expr) -> Expr| Arc::new(e.rewrite(f));
        let kind = match &self.kind {
            ExprKind::Const(_) | ExprKind::Ref(_) => self.kind.clone(),
            ExprKind::Slice { arg, hi, lo } => ExprKind::Slice {
                arg: b(arg, f),
                hi: *hi,
                lo: *lo,
            },
            ExprKind::Concat(parts) => {
                ExprKind::Concat(parts.iter().map(|p| p.rewrite(f)).collect())
            }
            ExprKind::Repeat { arg, count } => ExprKind::Repeat {
                arg: b(arg, f),
                count: *count,
            },
            ExprKind::Not(a) => ExprKind::Not(b(a, f)),
            ExprKind::Binary { op, lhs, rhs } => ExprKind::Binary {
                op: *op,
                lhs: b(lhs, f),
                rhs: b(rhs, f),
            },
            ExprKind::Reduce { op, arg } => ExprKind::Reduce {
                op: *op,
                arg: b(arg, f),
            },
            ExprKind::Mux { cond, then, els } => ExprKind::Mux {
                cond: b(cond, f),
                then: b(then, f),
                els: b(els, f),
            },
        };
        f(Expr {
            width: self.width,
            kind,
        })
    }

    /// Renders as single-line Verilog.
    pub(crate) fn render(&self, wrap: Option<usize>) -> String {
        let mut out = String::new();
        self.write(&mut out, wrap);
        out
    }

    /// Appends the Verilog text to `out`, which holds the statement so far
    /// (its last line is the current line). Concatenations that would make
    /// the current line longer than [`LINE_LIMIT`] are split one part per
    /// line, indented from `indent` (the statement's indentation); binary
    /// operators and `?:` break before the operator.
    pub(crate) fn write_wrapped(&self, out: &mut String, indent: usize) {
        self.write(out, Some(indent));
    }

    fn is_atom(&self) -> bool {
        match &self.kind {
            ExprKind::Const(_) | ExprKind::Ref(_) | ExprKind::Concat(_) => true,
            ExprKind::Repeat { .. } => true,
            ExprKind::Slice { arg, .. } => matches!(arg.kind, ExprKind::Ref(_)),
            // `~` binds tighter than every binary operator. (A reduction
            // is never an atom: `a & &b` would read badly.)
            ExprKind::Not(a) => a.is_atom(),
            _ => false,
        }
    }

    fn write_operand(&self, out: &mut String, wrap: Option<usize>) {
        if self.is_atom() {
            self.write(out, wrap);
        } else {
            out.push('(');
            self.write(out, wrap);
            out.push(')');
        }
    }

    fn write(&self, out: &mut String, wrap: Option<usize>) {
        match &self.kind {
            ExprKind::Const(b) => out.push_str(&b.verilog_literal()),
            ExprKind::Ref(s) => out.push_str(&s.name),
            ExprKind::Slice { arg, hi, lo } => {
                arg.write_operand(out, wrap);
                if hi == lo {
                    out.push_str(&format!("[{hi}]"));
                } else {
                    out.push_str(&format!("[{hi}:{lo}]"));
                }
            }
            ExprKind::Concat(parts) => {
                let multiline = match wrap {
                    Some(indent) => {
                        let flat = self.render(None);
                        let col = out.rsplit('\n').next().map_or(0, str::len).max(indent);
                        col + flat.len() > LINE_LIMIT
                    }
                    None => false,
                };
                if multiline {
                    // Parts are packed greedily into lines of at most
                    // LINE_LIMIT columns; a part too long for a line of
                    // its own is wrapped recursively.
                    let indent = wrap.unwrap_or(0);
                    let pad = " ".repeat(indent + 4);
                    out.push_str("{\n");
                    let mut line = String::new();
                    for (i, p) in parts.iter().enumerate() {
                        let comma = if i + 1 < parts.len() { "," } else { "" };
                        let text = format!("{}{comma}", p.render(None));
                        if pad.len() + text.len() > LINE_LIMIT {
                            if !line.is_empty() {
                                out.push_str(&format!("{pad}{line}\n"));
                                line.clear();
                            }
                            out.push_str(&pad);
                            p.write(out, Some(indent + 4));
                            out.push_str(comma);
                            out.push('\n');
                        } else if line.is_empty() {
                            line = text;
                        } else if pad.len() + line.len() + 1 + text.len() > LINE_LIMIT {
                            out.push_str(&format!("{pad}{line}\n"));
                            line = text;
                        } else {
                            line.push(' ');
                            line.push_str(&text);
                        }
                    }
                    if !line.is_empty() {
                        out.push_str(&format!("{pad}{line}\n"));
                    }
                    out.push_str(&" ".repeat(indent));
                    out.push('}');
                } else {
                    out.push('{');
                    for (i, p) in parts.iter().enumerate() {
                        if i > 0 {
                            out.push_str(", ");
                        }
                        p.write(out, None);
                    }
                    out.push('}');
                }
            }
            ExprKind::Repeat { arg, count } => {
                out.push_str(&format!("{{{count}{{"));
                arg.write(out, wrap);
                out.push_str("}}");
            }
            ExprKind::Not(a) => {
                out.push('~');
                a.write_operand(out, wrap);
            }
            ExprKind::Binary { op, lhs, rhs } => {
                lhs.write_operand(out, wrap);
                match self.break_at(out, wrap) {
                    Some(inner) => {
                        out.push_str(&format!("\n{}{} ", " ".repeat(inner), op.symbol()));
                        rhs.write_operand(out, Some(inner));
                    }
                    None => {
                        out.push(' ');
                        out.push_str(op.symbol());
                        out.push(' ');
                        rhs.write_operand(out, wrap);
                    }
                }
            }
            ExprKind::Reduce { op, arg } => {
                out.push_str(op.symbol());
                arg.write_operand(out, wrap);
            }
            ExprKind::Mux { cond, then, els } => {
                let brk = self.break_at(out, wrap);
                cond.write_operand(out, wrap);
                match brk {
                    Some(inner) => {
                        let pad = " ".repeat(inner);
                        out.push_str(&format!("\n{pad}? "));
                        then.write_operand(out, Some(inner));
                        out.push_str(&format!("\n{pad}: "));
                        els.write_operand(out, Some(inner));
                    }
                    None => {
                        out.push_str(" ? ");
                        then.write_operand(out, wrap);
                        out.push_str(" : ");
                        els.write_operand(out, wrap);
                    }
                }
            }
        }
    }

    /// Whether a binary operator or a `?:` being written into `out` breaks
    /// its line: when wrapping, and the statement's current line plus what
    /// is left of this expression would pass [`LINE_LIMIT`]. Then the
    /// operator starts a new line indented four columns from the
    /// statement (`Some` of that indentation). Only whitespace changes: the
    /// tokens are those of the one-line form.
    fn break_at(&self, out: &str, wrap: Option<usize>) -> Option<usize> {
        let indent = wrap?;
        let col = out.rsplit('\n').next().map_or(0, str::len).max(indent);
        let rest = match &self.kind {
            ExprKind::Binary { op, rhs, .. } => op.symbol().len() + 2 + rhs.render(None).len() + 2,
            ExprKind::Mux { .. } => self.render(None).len(),
            _ => return None,
        };
        (col + rest > LINE_LIMIT).then_some(indent + 4)
    }
}

/// Lines longer than this get their expressions wrapped.
pub const LINE_LIMIT: usize = 100;

/// Merges two adjacent concatenation parts into one, where possible.
fn merge_adjacent(hi_part: &Expr, lo_part: &Expr) -> Option<Expr> {
    match (&hi_part.kind, &lo_part.kind) {
        (ExprKind::Const(a), ExprKind::Const(b)) => Some(Expr::bits(Bits::concat([a, b]))),
        _ => {
            let (s1, h1, l1) = ref_range(hi_part)?;
            let (s2, h2, l2) = ref_range(lo_part)?;
            if s1 == s2 && l1 == h2 + 1 {
                Some(Expr::from(s1).slice_unchecked(h1, l2))
            } else {
                None
            }
        }
    }
}

/// `(signal, hi, lo)` of a whole-signal reference or a select of one.
fn ref_range(e: &Expr) -> Option<(&Signal, u32, u32)> {
    match &e.kind {
        ExprKind::Ref(s) => Some((s, s.width - 1, 0)),
        ExprKind::Slice { arg, hi, lo } => match &arg.kind {
            ExprKind::Ref(s) => Some((s, *hi, *lo)),
            _ => None,
        },
        _ => None,
    }
}

pub(crate) fn fold_binary(op: BinOp, a: &Bits, b: &Bits) -> Bits {
    match op {
        BinOp::And => a.and(b),
        BinOp::Or => a.or(b),
        BinOp::Xor => a.xor(b),
        BinOp::Add => a.add(b),
        BinOp::Sub => a.sub(b),
        BinOp::Eq => Bits::from_bool(a == b),
        BinOp::Ne => Bits::from_bool(a != b),
        BinOp::Lt => Bits::from_bool(a.lt(b)),
        BinOp::Le => Bits::from_bool(!b.lt(a)),
        BinOp::Gt => Bits::from_bool(b.lt(a)),
        BinOp::Ge => Bits::from_bool(!a.lt(b)),
    }
}

pub(crate) fn fold_reduce(op: ReduceOp, a: &Bits) -> Bits {
    Bits::from_bool(match op {
        ReduceOp::And => a.reduce_and(),
        ReduceOp::Or => a.reduce_or(),
        ReduceOp::Xor => a.reduce_xor(),
    })
}

impl fmt::Display for Expr {
    /// Single-line Verilog. A select of a non-signal prints as
    /// `(a + b)[7:4]` here; the emitter gives such operands a wire.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render(None))
    }
}

impl fmt::Debug for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Expr<{}>({})", self.width, self.render(None))
    }
}
