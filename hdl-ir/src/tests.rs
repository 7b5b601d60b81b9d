//! Unit tests of the IR: width errors, names, drivers, checks, emitter
//! text and evaluator semantics.

use super::*;

type R = Result<(), IrError>;

fn c(v: u128, w: u32) -> Expr {
    Expr::constant(v, w).expect("constant fits")
}

/// A module with clock, reset and two 8-bit inputs.
fn base() -> Result<(Module, Signal, Signal), IrError> {
    let mut m = Module::new("m")?;
    m.clock("clk")?;
    m.reset("rst")?;
    let a = m.input("a", 8)?;
    let b = m.input("b", 8)?;
    Ok((m, a, b))
}

fn assert_mismatch(r: Result<impl std::fmt::Debug, IrError>, lw: u32, rw: u32) -> IrError {
    match r {
        Err(
            e @ IrError::WidthMismatch {
                left_width,
                right_width,
                ..
            },
        ) if left_width == lw && right_width == rw => e,
        other => panic!("expected a {lw}/{rw} width mismatch, got {other:?}"),
    }
}

// ---------------------------------------------------------------- widths

#[test]
fn assign_width_mismatch_names_both_sides() -> R {
    let (mut m, a, _) = base()?;
    let w = m.wire("w", 8)?;
    let e = assert_mismatch(m.assign(&w, a.slice(6, 0)?), 8, 7);
    let msg = e.to_string();
    assert!(msg.contains("`w` is 8 bits"), "{msg}");
    assert!(msg.contains("`a[6:0]` is 7 bits"), "{msg}");
    // Explicitly zero-extended it is fine.
    m.assign(&w, a.slice(6, 0)?.zext(8)?)?;
    Ok(())
}

#[test]
fn binary_operator_width_mismatches() -> R {
    let (mut m, a, _) = base()?;
    let n = m.input("n", 7)?;
    let (a, n) = (a.expr(), n.expr());
    for op in [
        BinOp::And,
        BinOp::Or,
        BinOp::Xor,
        BinOp::Add,
        BinOp::Sub,
        BinOp::Eq,
        BinOp::Ne,
        BinOp::Lt,
        BinOp::Le,
        BinOp::Gt,
        BinOp::Ge,
    ] {
        let e = assert_mismatch(a.binary(op, &n), 8, 7);
        assert!(e.to_string().contains(op.symbol()), "{e}");
    }
    assert_mismatch(a.and(&n), 8, 7);
    assert_mismatch(a.or(&n), 8, 7);
    assert_mismatch(a.xor(&n), 8, 7);
    assert_mismatch(a.add(&n), 8, 7);
    assert_mismatch(a.sub(&n), 8, 7);
    assert_mismatch(a.cmp_eq(&n), 8, 7);
    assert_mismatch(a.cmp_lt(&n), 8, 7);
    assert_eq!(a.cmp_ge(&a)?.width(), 1);
    assert_eq!(a.add(&a)?.width(), 8);
    Ok(())
}

#[test]
fn mux_width_errors() -> R {
    let (_, a, b) = base()?;
    let (a, b) = (a.expr(), b.expr());
    match Expr::mux(&a, &a, &b) {
        Err(IrError::NotOneBit {
            width: 8, context, ..
        }) => assert!(context.contains("mux")),
        other => panic!("{other:?}"),
    }
    assert_mismatch(Expr::mux(&a.bit(0)?, &a, &b.slice(3, 0)?), 8, 4);
    assert_eq!(Expr::mux(&a.bit(0)?, &a, &b)?.width(), 8);
    Ok(())
}

#[test]
fn select_and_resize_errors() -> R {
    let (_, a, _) = base()?;
    let a = a.expr();
    assert!(matches!(
        a.slice(8, 0),
        Err(IrError::SelectOutOfRange {
            hi: 8,
            lo: 0,
            width: 8,
            ..
        })
    ));
    assert!(matches!(
        a.slice(2, 3),
        Err(IrError::SelectOutOfRange { .. })
    ));
    assert!(matches!(a.bit(8), Err(IrError::SelectOutOfRange { .. })));
    assert!(matches!(
        a.zext(7),
        Err(IrError::BadResize {
            op: "zero-extend",
            width: 8,
            target: 7,
            ..
        })
    ));
    assert!(matches!(
        a.trunc(9),
        Err(IrError::BadResize { op: "truncate", .. })
    ));
    assert!(matches!(a.trunc(0), Err(IrError::BadResize { .. })));
    assert!(matches!(
        a.zext(MAX_WIDTH + 1),
        Err(IrError::WidthOutOfRange { .. })
    ));
    assert_eq!(a.resize(4)?.width(), 4);
    assert_eq!(a.resize(12)?.width(), 12);
    assert_eq!(a.resize(8)?, a);
    Ok(())
}

#[test]
fn concat_repeat_and_constant_limits() -> R {
    let (_, a, _) = base()?;
    let a = a.expr();
    assert!(matches!(Expr::concat([]), Err(IrError::EmptyConcat)));
    let too_many = vec![a.clone(); (MAX_WIDTH / 8 + 1) as usize];
    assert!(matches!(
        Expr::concat(too_many),
        Err(IrError::WidthOutOfRange { width, .. }) if width == u64::from(MAX_WIDTH) + 8
    ));
    assert!(matches!(a.repeat(0), Err(IrError::WidthOutOfRange { .. })));
    assert!(matches!(
        a.repeat(MAX_WIDTH / 8 + 1),
        Err(IrError::WidthOutOfRange { .. })
    ));
    assert_eq!(a.repeat(MAX_WIDTH / 8)?.width(), MAX_WIDTH);
    assert!(matches!(
        Expr::constant(256, 8),
        Err(IrError::ConstTooWide { width: 8, .. })
    ));
    assert!(matches!(
        Expr::constant(0, 0),
        Err(IrError::WidthOutOfRange { .. })
    ));
    assert!(Expr::zero(MAX_WIDTH).is_ok());
    Ok(())
}

#[test]
fn declaration_width_limits() -> R {
    let mut m = Module::new("m")?;
    assert!(matches!(
        m.wire("w", 0),
        Err(IrError::WidthOutOfRange { width: 0, .. })
    ));
    assert!(matches!(
        m.input("i", MAX_WIDTH + 1),
        Err(IrError::WidthOutOfRange { .. })
    ));
    assert_eq!(m.output("o", MAX_WIDTH)?.width(), MAX_WIDTH);
    Ok(())
}

#[test]
fn register_width_errors() -> R {
    let (mut m, a, _) = base()?;
    let r = m.reg("r", 8, Reset::None)?;
    assert_mismatch(m.reg_next(&r, a.slice(3, 0)?, None), 8, 4);
    match m.reg_next(&r, &a, Some(a.expr())) {
        Err(IrError::NotOneBit {
            width: 8, context, ..
        }) => assert!(context.contains("`r`")),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        m.reg("big", 4, Reset::Value(16)),
        Err(IrError::ConstTooWide { .. })
    ));
    let wrong = Bits::zero(5)?;
    assert_mismatch(m.reg("r2", 4, Reset::Bits(wrong)), 4, 5);
    m.reg_next(&r, &a, Some(a.bit(0)?))?;
    Ok(())
}

#[test]
fn instance_connection_errors() -> R {
    let mut child = Module::new("child")?;
    let x = child.input("x", 8)?;
    let y = child.output("y", 8)?;
    child.assign(&y, x.expr().not())?;

    let (mut m, a, _) = base()?;
    let w = m.wire("w", 8)?;
    let narrow = m.wire("narrow", 4)?;
    let e = assert_mismatch(
        m.instance("u0", &child, &[("x", a.slice(3, 0)?), ("y", w.expr())]),
        8,
        4,
    );
    assert!(e.to_string().contains("u0.x"), "{e}");
    assert_mismatch(
        m.instance("u0", &child, &[("x", a.expr()), ("y", narrow.expr())]),
        8,
        4,
    );
    assert!(matches!(
        m.instance("u0", &child, &[("x", a.expr()), ("z", w.expr())]),
        Err(IrError::UnknownPort { .. })
    ));
    assert!(matches!(
        m.instance("u0", &child, &[("x", a.expr())]),
        Err(IrError::BadConnection {
            problem: "not connected",
            ..
        })
    ));
    assert!(matches!(
        m.instance("u0", &child, &[("x", a.expr()), ("x", a.expr())]),
        Err(IrError::BadConnection {
            problem: "connected twice",
            ..
        })
    ));
    // Outputs must go to a whole wire.
    assert!(matches!(
        m.instance("u0", &child, &[("x", a.expr()), ("y", a.expr().not())]),
        Err(IrError::BadConnection { .. })
    ));
    assert!(matches!(
        m.instance("u0", &child, &[("x", a.expr()), ("y", a.expr())]),
        Err(IrError::NotAssignable { .. })
    ));
    // A failed attempt leaves the module unchanged: the name is still free.
    m.instance("u0", &child, &[("x", a.expr()), ("y", w.expr())])?;
    assert!(matches!(
        m.assign(&w, &a),
        Err(IrError::MultiplyDriven { existing, .. }) if existing.contains("u0")
    ));
    assert!(matches!(
        m.instance("u0", &child, &[("x", a.expr()), ("y", narrow.expr())]),
        Err(IrError::DuplicateName { .. })
    ));
    Ok(())
}

// ---------------------------------------------------------------- names

#[test]
fn identifiers_are_validated() {
    assert!(matches!(
        Module::new("module"),
        Err(IrError::InvalidIdentifier { .. })
    ));
    assert!(Module::new("9lives").is_err());
    let mut m = Module::new("ok").expect("valid");
    for bad in ["", "a-b", "wire", "logic", "__x", "s1 data"] {
        match m.wire(bad, 1) {
            Err(IrError::InvalidIdentifier { name, .. }) => assert_eq!(name, bad),
            other => panic!("{bad:?}: {other:?}"),
        }
    }
    let msg = m
        .input("reg", 1)
        .map(|_| ())
        .expect_err("keyword")
        .to_string();
    assert!(msg.contains("`reg`") && msg.contains("reserved"), "{msg}");
}

#[test]
fn duplicate_names_are_rejected() -> R {
    let (mut m, _, _) = base()?;
    assert!(matches!(m.wire("a", 3), Err(IrError::DuplicateName { .. })));
    let child = Module::new("c")?;
    m.instance("u", &child, &[])?;
    assert!(matches!(m.wire("u", 1), Err(IrError::DuplicateName { .. })));
    assert!(matches!(
        m.instance("u", &child, &[]),
        Err(IrError::DuplicateName { .. })
    ));
    Ok(())
}

// ---------------------------------------------------------------- drivers

#[test]
fn driver_kind_and_ownership_errors() -> R {
    let (mut m, a, b) = base()?;
    let r = m.reg("r", 8, Reset::Value(3))?;
    let w = m.wire("w", 8)?;
    assert!(matches!(
        m.assign(&a, &b),
        Err(IrError::NotAssignable {
            action: "assign to",
            ..
        })
    ));
    assert!(matches!(
        m.assign(&r, &b),
        Err(IrError::NotAssignable { .. })
    ));
    assert!(matches!(
        m.reg_next(&w, &b, None),
        Err(IrError::NotAssignable { .. })
    ));
    m.assign(&w, &a)?;
    assert!(matches!(
        m.assign(&w, &b),
        Err(IrError::MultiplyDriven { .. })
    ));
    m.reg_next(&r, &w, None)?;
    assert!(matches!(
        m.reg_next(&r, &w, None),
        Err(IrError::MultiplyDriven { .. })
    ));

    let mut other = Module::new("other")?;
    let foreign = other.input("a", 8)?;
    let ow = other.wire("ow", 8)?;
    assert!(matches!(
        m.assign(&ow, &a),
        Err(IrError::ForeignSignal { .. })
    ));
    let w2 = m.wire("w2", 8)?;
    assert!(matches!(
        m.assign(&w2, foreign.expr().not()),
        Err(IrError::ForeignSignal { .. })
    ));
    assert!(matches!(
        m.mark_unused(&foreign, 0, 0),
        Err(IrError::ForeignSignal { .. })
    ));
    assert!(matches!(
        m.kind(&foreign),
        Err(IrError::ForeignSignal { .. })
    ));
    assert_eq!(m.kind(&r)?, SignalKind::Reg);
    Ok(())
}

#[test]
fn clock_and_reset_rules() -> R {
    let mut m = Module::new("m")?;
    assert!(matches!(
        m.reg("r", 1, Reset::None),
        Err(IrError::MissingClockOrReset { what: "clock", .. })
    ));
    m.clock("clk")?;
    assert!(matches!(
        m.reg("r", 1, Reset::Value(0)),
        Err(IrError::MissingClockOrReset { what: "reset", .. })
    ));
    m.reg("r", 1, Reset::None)?;
    assert!(matches!(
        m.clock("clk2"),
        Err(IrError::ClockOrResetRedeclared { .. })
    ));
    m.reset("rst")?;
    assert!(matches!(
        m.reset("rst2"),
        Err(IrError::ClockOrResetRedeclared { .. })
    ));
    assert_eq!(
        m.clock_signal().map(|s| s.name().to_string()),
        Some("clk".into())
    );
    assert_eq!(m.reset_signal().map(|s| s.width()), Some(1));
    Ok(())
}

// ---------------------------------------------------------------- checks

#[test]
fn check_reports_undriven_and_unused() -> R {
    let (mut m, a, _) = base()?;
    let _y = m.output("y", 4)?;
    let _w = m.wire("w", 2)?;
    let r = m.reg("r", 4, Reset::Value(0))?;
    m.reg_next(&r, a.slice(5, 2)?, None)?;
    let problems = m.problems();
    assert!(problems.contains(&Problem::Undriven { signal: "y".into() }));
    assert!(problems.contains(&Problem::Undriven { signal: "w".into() }));
    assert!(problems.contains(&Problem::Unused {
        signal: "a".into(),
        ranges: vec![(7, 6), (1, 0)],
    }));
    assert!(problems.contains(&Problem::Unused {
        signal: "b".into(),
        ranges: vec![(7, 0)],
    }));
    assert!(problems.contains(&Problem::Unused {
        signal: "r".into(),
        ranges: vec![(3, 0)],
    }));
    // clk and rst are used by the register.
    assert!(!problems.iter().any(
        |p| matches!(p, Problem::Unused { signal, .. } if signal == "clk" || signal == "rst")
    ));
    let err = m.emit(&[]).expect_err("must not emit");
    let msg = err.to_string();
    assert!(msg.contains("`y` is never driven"), "{msg}");
    assert!(
        msg.contains("bits of `a` are never read: [7:6] [1:0]"),
        "{msg}"
    );
    Ok(())
}

#[test]
fn mark_unused_silences_check() -> R {
    let mut m = Module::new("m")?;
    let a = m.input("a", 8)?;
    let y = m.output("y", 4)?;
    m.assign(&y, a.slice(5, 2)?)?;
    assert_eq!(m.problems().len(), 1);
    m.mark_unused(&a, 7, 6)?;
    assert_eq!(m.problems().len(), 1);
    m.mark_unused(&a, 1, 0)?;
    m.check()?;
    assert!(matches!(
        m.mark_unused(&a, 8, 0),
        Err(IrError::SelectOutOfRange { .. })
    ));
    let text = m.emit(&[])?;
    assert!(text.contains(
        "    // deliberately unused: a[7:6], a[1:0]\n    /* verilator lint_off UNUSEDSIGNAL */\n    input  wire [7:0] a,\n    /* verilator lint_on UNUSEDSIGNAL */\n"
    ), "{text}");
    Ok(())
}

#[test]
fn unused_clock_is_reported() -> R {
    let mut m = Module::new("m")?;
    m.clock("clk")?;
    let a = m.input("a", 1)?;
    let y = m.output("y", 1)?;
    m.assign(&y, &a)?;
    assert_eq!(
        m.problems(),
        vec![Problem::Unused {
            signal: "clk".into(),
            ranges: vec![(0, 0)]
        }]
    );
    Ok(())
}

#[test]
fn combinational_loops_are_found() -> R {
    let mut m = Module::new("m")?;
    let a = m.input("a", 4)?;
    let y = m.output("y", 4)?;
    let p = m.wire("p", 4)?;
    let q = m.wire("q", 4)?;
    m.assign(&p, q.expr().xor(&a.expr())?)?;
    m.assign(&q, p.expr().not())?;
    m.assign(&y, &q)?;
    let loops: Vec<_> = m
        .problems()
        .into_iter()
        .filter(|p| matches!(p, Problem::CombinationalLoop { .. }))
        .collect();
    assert_eq!(loops.len(), 1, "{loops:?}");
    assert!(matches!(Sim::new(&m), Err(IrError::Check { .. })));
    Ok(())
}

#[test]
fn loops_through_instances_are_found() -> R {
    let mut inv = Module::new("inv")?;
    let x = inv.input("x", 1)?;
    let y = inv.output("y", 1)?;
    inv.assign(&y, x.expr().not())?;
    let mut top = Module::new("top")?;
    let o = top.output("o", 1)?;
    let w = top.wire("w", 1)?;
    top.instance("u", &inv, &[("x", w.expr()), ("y", w.expr())])?;
    top.assign(&o, &w)?;
    let problems = top.problems();
    assert!(
        problems.iter().any(|p| matches!(p, Problem::CombinationalLoop { path } if path.contains(&"u.y".to_string()))),
        "{problems:?}"
    );
    Ok(())
}

// ---------------------------------------------------------------- emitter

fn tiny() -> Result<Module, IrError> {
    let mut m = Module::new("tiny")?;
    m.clock("clk")?;
    m.reset("rst")?;
    let a = m.input("a", 8)?;
    let b = m.input("b", 8)?;
    let en = m.input("en", 1)?;
    let y = m.output("y", 8)?;
    let sum = m.wire("sum", 8)?;
    m.assign(&sum, a.expr().add(&b.expr())?)?;
    let s1_sum = m.reg("s1_sum", 8, Reset::Value(0))?;
    m.reg_next(&s1_sum, &sum, Some(en.expr()))?;
    m.assign(&y, &s1_sum)?;
    Ok(m)
}

#[test]
fn emits_exact_text_for_tiny_module() -> R {
    let text = tiny()?.emit(&["generated by: test".to_string(), String::new()])?;
    let expected = "\
// generated by: test
//
`default_nettype none

module tiny (
    input  wire       clk,
    input  wire       rst,
    input  wire [7:0] a,
    input  wire [7:0] b,
    input  wire       en,
    output wire [7:0] y
);

    wire [7:0] sum;
    reg  [7:0] s1_sum;

    assign y = s1_sum;
    assign sum = a + b;

    always @(posedge clk) begin
        if (rst) begin
            s1_sum <= 8'h00;
        end else if (en) begin
            s1_sum <= sum;
        end
    end

endmodule

`default_nettype wire
";
    assert_eq!(text, expected);
    // Deterministic.
    assert_eq!(
        tiny()?.emit(&["generated by: test".to_string(), String::new()])?,
        text
    );
    Ok(())
}

#[test]
fn register_groups_and_always_blocks() -> R {
    let mut m = Module::new("g")?;
    m.clock("clk")?;
    m.reset("rst")?;
    let a = m.input("a", 4)?;
    let en = m.input("en", 1)?;
    let y = m.output("y", 4)?;
    let r1 = m.reg("r1", 4, Reset::Value(5))?;
    let r2 = m.reg("r2", 4, Reset::None)?;
    let r3 = m.reg("r3", 4, Reset::Value(0xa))?;
    let r4 = m.reg("r4", 4, Reset::None)?;
    m.reg_next(&r1, &a, None)?;
    m.reg_next(&r2, &r1, Some(en.expr()))?;
    m.reg_next(&r3, &r2, None)?;
    m.reg_next(&r4, &r3, None)?;
    m.assign(&y, r4.expr().xor(&r1.expr())?)?;
    let text = m.emit(&[])?;
    let blocks = text.matches("always @(posedge clk) begin").count();
    assert_eq!(blocks, 3, "{text}");
    assert!(
        text.contains(
            "    always @(posedge clk) begin
        if (rst) begin
            r1 <= 4'h5;
            r3 <= 4'ha;
        end else begin
            r1 <= a;
            r3 <= r2;
        end
    end
"
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "    always @(posedge clk) begin
        if (en) begin
            r2 <= r1;
        end
    end
"
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "    always @(posedge clk) begin
        r4 <= r3;
    end
"
        ),
        "{text}"
    );
    Ok(())
}

#[test]
fn constants_are_always_sized_and_shifts_are_selects() -> R {
    let mut m = Module::new("k")?;
    let a = m.input("a", 8)?;
    let y = m.output("y", 8)?;
    let z = m.output("z", 8)?;
    let one = m.output("one", 1)?;
    m.assign(&y, a.expr().shl(3).or(&a.expr().shr(5))?)?;
    m.assign(&z, a.expr().and(&c(0x3f, 8))?)?;
    m.assign(&one, Expr::bool(true))?;
    let text = m.emit(&[])?;
    assert!(
        text.contains("assign y = {a[4:0], 3'h0} | {5'h00, a[7:5]};"),
        "{text}"
    );
    assert!(text.contains("assign z = a & 8'h3f;"), "{text}");
    assert!(text.contains("assign one = 1'b1;"), "{text}");
    assert!(!text.contains("<<") && !text.contains(">>"));
    Ok(())
}

#[test]
fn selects_of_sums_get_a_temporary() -> R {
    let mut m = Module::new("t")?;
    let a = m.input("a", 8)?;
    let b = m.input("b", 8)?;
    let hi = m.output("hi", 3)?;
    let lo = m.output("lo", 4)?;
    let top = m.output("top", 1)?;
    let s = a.expr().add(&b.expr())?;
    m.assign(&hi, s.slice(6, 4)?)?;
    // Low bits push down into a narrower add; no temporary needed.
    m.assign(&lo, s.slice(3, 0)?)?;
    m.assign(&top, a.bit(7)?.and(&b.bit(7)?)?)?;
    let text = m.emit(&[])?;
    assert!(text.contains("    wire [6:0] tmp_0;\n"), "{text}");
    assert!(text.contains("assign tmp_0 = a[6:0] + b[6:0];"), "{text}");
    assert!(text.contains("assign hi = tmp_0[6:4];"), "{text}");
    assert!(text.contains("assign top = a[7] & b[7];"), "{text}");
    assert!(text.contains("assign lo = a[3:0] + b[3:0];"), "{text}");
    Ok(())
}

#[test]
fn temporary_names_avoid_user_names() -> R {
    let mut m = Module::new("t")?;
    let a = m.input("a", 8)?;
    let tmp0 = m.output("tmp_0", 2)?;
    m.assign(&tmp0, a.expr().add(&a.expr())?.slice(7, 6)?)?;
    m.mark_unused(&a, 7, 7)?;
    let text = m.emit(&[])?;
    assert!(text.contains("wire [7:0] tmp_1;"), "{text}");
    assert!(text.contains("assign tmp_0 = tmp_1[7:6];"), "{text}");
    Ok(())
}

/// The text without `//` comments and whitespace.
fn tokens(text: &str) -> String {
    text.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .flat_map(|l| l.chars().filter(|c| !c.is_whitespace()))
        .collect()
}

#[test]
fn long_operator_chains_and_muxes_break_before_the_operator() -> R {
    let mut m = Module::new("w")?;
    let names: Vec<Signal> = (0..24)
        .map(|i| m.input(&format!("flag_{i:02}"), 1))
        .collect::<Result<_, _>>()?;
    let all = names
        .iter()
        .skip(1)
        .try_fold(names[0].expr(), |a, b| a.and(&b.expr()))?;
    let any = names
        .iter()
        .skip(1)
        .try_fold(names[0].expr(), |a, b| a.or(&b.expr()))?;
    let y = m.output("y", 1)?;
    m.assign(&y, all.clone())?;
    let z = m.output("z", 1)?;
    m.assign(&z, Expr::mux(&names[0].expr(), &all, &any)?)?;
    let text = m.emit(&[])?;
    assert!(text.lines().all(|l| l.len() <= LINE_LIMIT), "{text}");
    assert!(text.contains("\n        & flag_"), "{text}");
    assert!(text.contains("\n        ? ("), "{text}");
    assert!(text.contains("\n        : ("), "{text}");
    // only whitespace differs from the one-line form
    let flat = format!(
        "assigny={};assignz={};",
        all.render(None),
        Expr::mux(&names[0].expr(), &all, &any)?.render(None)
    );
    assert!(tokens(&text).contains(&tokens(&flat)), "{text}");
    Ok(())
}

#[test]
fn sections_open_their_declarations_assigns_and_registers() -> R {
    let mut m = Module::new("s")?;
    m.clock("clk")?;
    let a = m.input("a", 4)?;
    let y = m.output("y", 4)?;
    m.section("stage 1: invert")?;
    let inv = m.wire("inv", 4)?;
    m.assign(&inv, a.expr().not())?;
    let r1 = m.reg("s1_inv", 4, Reset::None)?;
    m.reg_next(&r1, inv.expr(), None)?;
    m.section("stage 2: add one")?;
    let r2 = m.reg("s2_sum", 4, Reset::None)?;
    m.reg_next(&r2, r1.expr().add(&Expr::constant(1, 4)?)?, None)?;
    m.assign(&y, r2.expr())?;
    let text = m.emit(&[])?;
    // stage 1 opens its declarations, its assign and the always block
    // (both registers have no enable, so they share that block, opened by
    // its first register's section); stage 2 opens its declaration. `y` is
    // a port, outside every section.
    assert_eq!(text.matches("// stage 1: invert").count(), 3, "{text}");
    assert_eq!(text.matches("// stage 2: add one").count(), 1, "{text}");
    let decl = text.find("// stage 1: invert").unwrap_or(usize::MAX);
    assert!(decl < text.find("wire [3:0] inv;").unwrap_or(0), "{text}");
    assert!(
        matches!(m.section("two\nlines"), Err(IrError::MultiLineTitle { .. })),
        "a title spanning lines is refused"
    );
    Ok(())
}

#[test]
fn long_concatenations_are_wrapped() -> R {
    let mut m = Module::new("w")?;
    let names: Vec<Signal> = (0..40)
        .map(|i| m.input(&format!("field_{i:02}"), 8))
        .collect::<Result<_, _>>()?;
    let y = m.output("y", 320)?;
    m.assign(&y, Expr::concat(names.iter().map(Expr::from))?)?;
    let text = m.emit(&[])?;
    assert!(text.lines().all(|l| l.len() <= LINE_LIMIT), "{text}");
    assert!(
        text.contains("    assign y = {\n        field_00, field_01,"),
        "{text}"
    );
    assert!(text.contains("field_39\n    };\n"), "{text}");
    Ok(())
}

#[test]
fn instances_are_emitted_by_port_name() -> R {
    let mut child = Module::new("inv8")?;
    let x = child.input("x", 8)?;
    let y = child.output("y", 8)?;
    child.assign(&y, x.expr().not())?;
    let mut top = Module::new("top")?;
    let a = top.input("a", 8)?;
    let o = top.output("o", 8)?;
    top.instance("u_inv", &child, &[("y", o.expr()), ("x", a.expr())])?;
    let text = top.emit(&[])?;
    assert!(
        text.contains("    inv8 u_inv (\n        .x(a),\n        .y(o)\n    );\n"),
        "{text}"
    );
    let files = top.emit_hierarchy(&["h".into()])?;
    let names: Vec<_> = files.iter().map(|f| f.file_name.as_str()).collect();
    assert_eq!(names, ["inv8.v", "top.v"]);
    Ok(())
}

#[test]
fn hierarchy_rejects_two_modules_with_one_name() -> R {
    let mut c1 = Module::new("leaf")?;
    let x = c1.input("x", 1)?;
    let y = c1.output("y", 1)?;
    c1.assign(&y, &x)?;
    let mut c2 = Module::new("leaf")?;
    let x2 = c2.input("x", 1)?;
    let y2 = c2.output("y", 1)?;
    c2.assign(&y2, x2.expr().not())?;
    let mut top = Module::new("top")?;
    let a = top.input("a", 1)?;
    let o1 = top.output("o1", 1)?;
    let o2 = top.output("o2", 1)?;
    top.instance("u1", &c1, &[("x", a.expr()), ("y", o1.expr())])?;
    top.instance("u2", &c2, &[("x", a.expr()), ("y", o2.expr())])?;
    assert!(matches!(
        top.emit_hierarchy(&[]),
        Err(IrError::ModuleNameClash { .. })
    ));
    Ok(())
}

// ---------------------------------------------------------------- evaluator

#[test]
fn eval_adder_wraps_and_keeps_carry_when_extended() -> R {
    let mut m = Module::new("add")?;
    let a = m.input("a", 8)?;
    let b = m.input("b", 8)?;
    let s = m.output("s", 8)?;
    let s9 = m.output("s9", 9)?;
    let d = m.output("d", 8)?;
    m.assign(&s, a.expr().add(&b.expr())?)?;
    m.assign(&s9, a.expr().zext(9)?.add(&b.expr().zext(9)?)?)?;
    m.assign(&d, a.expr().sub(&b.expr())?)?;
    let mut sim = Sim::new(&m)?;
    for (x, y) in [(0u128, 0u128), (200, 100), (255, 1), (3, 5), (128, 128)] {
        sim.set_u128("a", x)?;
        sim.set_u128("b", y)?;
        assert_eq!(sim.get_u128("s")?, (x + y) % 256);
        assert_eq!(sim.get_u128("s9")?, x + y);
        assert_eq!(sim.get_u128("d")?, (x + 256 - y) % 256);
    }
    Ok(())
}

#[test]
fn eval_mux_selects_compares_reductions() -> R {
    let mut m = Module::new("misc")?;
    let a = m.input("a", 8)?;
    let b = m.input("b", 8)?;
    let sel = m.input("sel", 1)?;
    let outs = [
        ("mux", Expr::mux(&sel.expr(), &a.expr(), &b.expr())?),
        ("mid", a.slice(5, 2)?.zext(8)?),
        ("swap", Expr::concat([a.slice(3, 0)?, a.slice(7, 4)?])?),
        ("rep", a.slice(1, 0)?.repeat(4)?),
        ("shl", a.expr().shl(3)),
        ("shr", a.expr().shr(3)),
        ("lt", a.expr().cmp_lt(&b.expr())?.zext(8)?),
        ("ge", a.expr().cmp_ge(&b.expr())?.zext(8)?),
        ("eq", a.expr().cmp_eq(&b.expr())?.zext(8)?),
        (
            "red",
            Expr::concat([
                a.expr().reduce_and(),
                a.expr().reduce_or(),
                a.expr().reduce_xor(),
            ])?
            .zext(8)?,
        ),
        ("hisum", a.expr().add(&b.expr())?.slice(7, 4)?.zext(8)?),
    ];
    for (name, e) in &outs {
        let o = m.output(name, 8)?;
        m.assign(&o, e)?;
    }
    let mut sim = Sim::new(&m)?;
    let cases = [
        (0x5au128, 0xa5u128, 0u128),
        (0xff, 0x01, 1),
        (0x00, 0x00, 1),
        (0x81, 0x80, 0),
    ];
    for (x, y, s) in cases {
        sim.set_u128("a", x)?;
        sim.set_u128("b", y)?;
        sim.set_u128("sel", s)?;
        assert_eq!(sim.get_u128("mux")?, if s == 1 { x } else { y });
        assert_eq!(sim.get_u128("mid")?, (x >> 2) & 0xf);
        assert_eq!(sim.get_u128("swap")?, ((x & 0xf) << 4) | (x >> 4));
        assert_eq!(sim.get_u128("rep")?, (x & 3) * 0x55);
        assert_eq!(sim.get_u128("shl")?, (x << 3) & 0xff);
        assert_eq!(sim.get_u128("shr")?, x >> 3);
        assert_eq!(sim.get_u128("lt")?, u128::from(x < y));
        assert_eq!(sim.get_u128("ge")?, u128::from(x >= y));
        assert_eq!(sim.get_u128("eq")?, u128::from(x == y));
        let red = (u128::from(x == 0xff) << 2)
            | (u128::from(x != 0) << 1)
            | u128::from(x.count_ones() % 2 == 1);
        assert_eq!(sim.get_u128("red")?, red);
        assert_eq!(sim.get_u128("hisum")?, ((x + y) >> 4) & 0xf);
    }
    Ok(())
}

#[test]
fn eval_registers_reset_and_enable() -> R {
    let text_module = tiny()?;
    let mut sim = Sim::new(&text_module)?;
    sim.set_u128("a", 10)?;
    sim.set_u128("b", 20)?;
    sim.set_u128("en", 1)?;
    sim.set_u128("rst", 1)?;
    sim.step();
    assert_eq!(sim.get_u128("y")?, 0);
    sim.set_u128("rst", 0)?;
    sim.step();
    assert_eq!(sim.get_u128("y")?, 30);
    sim.set_u128("en", 0)?;
    sim.set_u128("a", 1)?;
    sim.step();
    assert_eq!(sim.get_u128("y")?, 30, "disabled register holds");
    sim.set_u128("en", 1)?;
    sim.step();
    assert_eq!(sim.get_u128("y")?, 21);
    sim.set_u128("rst", 1)?;
    sim.step();
    assert_eq!(sim.get_u128("y")?, 0, "reset wins over enable");
    assert_eq!(sim.cycles(), 5);
    Ok(())
}

#[test]
fn eval_errors() -> R {
    let m = tiny()?;
    let mut sim = Sim::new(&m)?;
    assert!(matches!(
        sim.set_u128("nope", 1),
        Err(IrError::UnknownSignal { .. })
    ));
    assert!(matches!(
        sim.set_u128("sum", 1),
        Err(IrError::NotAnInput { .. })
    ));
    assert!(matches!(
        sim.set_u128("a", 256),
        Err(IrError::ConstTooWide { .. })
    ));
    assert_mismatch(sim.set("a", &Bits::zero(9)?), 8, 9);
    let mut wide = Module::new("wide")?;
    let i = wide.input("i", 200)?;
    let o = wide.output("o", 200)?;
    wide.assign(&o, &i)?;
    let mut sim = Sim::new(&wide)?;
    assert!(matches!(
        sim.get_u128("o"),
        Err(IrError::ValueTooWide { width: 200, .. })
    ));
    let mut undriven = Module::new("u")?;
    undriven.output("o", 1)?;
    assert!(matches!(Sim::new(&undriven), Err(IrError::Check { .. })));
    Ok(())
}

#[test]
fn eval_wide_values() -> R {
    let mut m = Module::new("wide")?;
    let a = m.input("a", 1000)?;
    let b = m.input("b", 1000)?;
    let s = m.output("s", 1000)?;
    let top = m.output("top", 64)?;
    m.assign(&s, a.expr().add(&b.expr())?)?;
    m.assign(&top, a.expr().add(&b.expr())?.slice(999, 936)?)?;
    let mut sim = Sim::new(&m)?;
    let ones = Bits::ones(1000)?;
    sim.set("a", &ones)?;
    sim.set_u128("b", 1)?;
    assert!(sim.get("s")?.is_zero());
    assert_eq!(sim.get_u128("top")?, 0);
    let mut words = vec![0u64; 16];
    words[14] = 1 << 35; // bit 931
    sim.set("a", &Bits::from_words(&words, 1000)?)?;
    sim.set("b", &Bits::from_words(&words, 1000)?)?;
    // 2 * 2^931 = 2^932; top holds bits 999..936.
    assert_eq!(sim.get_u128("top")?, 0);
    words[14] = 1 << 39; // bit 935
    sim.set("a", &Bits::from_words(&words, 1000)?)?;
    sim.set("b", &Bits::from_words(&words, 1000)?)?;
    assert_eq!(sim.get_u128("top")?, 1);
    Ok(())
}

#[test]
fn eval_through_instances() -> R {
    let mut add = Module::new("add4")?;
    add.clock("clk")?;
    let x = add.input("x", 4)?;
    let y = add.input("y", 4)?;
    let s = add.output("s", 4)?;
    let r = add.reg("r", 4, Reset::None)?;
    add.reg_next(&r, x.expr().add(&y.expr())?, None)?;
    add.assign(&s, &r)?;

    let mut top = Module::new("top")?;
    let clk = top.clock("clk")?;
    let a = top.input("a", 4)?;
    let o1 = top.output("o1", 4)?;
    let o2 = top.output("o2", 4)?;
    top.instance(
        "u1",
        &add,
        &[
            ("clk", clk.expr()),
            ("x", a.expr()),
            ("y", c(1, 4)),
            ("s", o1.expr()),
        ],
    )?;
    top.instance(
        "u2",
        &add,
        &[
            ("clk", clk.expr()),
            ("x", o1.expr()),
            ("y", o1.expr()),
            ("s", o2.expr()),
        ],
    )?;
    top.check()?;
    let mut sim = Sim::new(&top)?;
    sim.set_u128("a", 3)?;
    sim.step();
    assert_eq!(sim.get_u128("o1")?, 4);
    assert_eq!(sim.get_u128("u1.r")?, 4);
    sim.step();
    assert_eq!(sim.get_u128("o2")?, 8);
    assert!(sim.signal_names().contains(&"u2.x"));
    Ok(())
}

#[test]
fn constant_folding_and_simplification() -> R {
    let (_, a, _) = base()?;
    assert_eq!(
        c(3, 8).add(&c(255, 8))?.as_const(),
        Some(&Bits::from_u128(2, 8)?)
    );
    assert_eq!(
        Expr::concat([c(1, 4), c(2, 4)])?.as_const(),
        Some(&Bits::from_u128(0x12, 8)?)
    );
    assert_eq!(a.expr().not().not(), a.expr());
    assert_eq!(Expr::concat([a.slice(7, 4)?, a.slice(3, 0)?])?, a.expr());
    assert_eq!(Expr::mux(&Expr::bool(true), &a.expr(), &c(0, 8))?, a.expr());
    assert_eq!(a.expr().shl(8).as_const(), Some(&Bits::zero(8)?));
    assert_eq!(a.expr().shr(0), a.expr());
    assert_eq!(a.bit(3)?.reduce_or(), a.bit(3)?);
    assert_eq!(a.expr().repeat(4)?.slice(15, 8)?, a.expr());
    assert_eq!(a.expr().to_string(), "a");
    assert_eq!(a.slice(7, 7)?.to_string(), "a[7]");
    // Identities with a constant operand fold away.
    let (ones, zero, x) = (c(255, 8), c(0, 8), a.expr());
    assert_eq!(x.and(&ones)?, x);
    assert_eq!(ones.and(&x)?, x);
    assert_eq!(x.and(&zero)?.as_const(), Some(&Bits::zero(8)?));
    assert_eq!(zero.or(&x)?, x);
    assert_eq!(x.or(&ones)?.as_const(), Some(&Bits::ones(8)?));
    assert_eq!(x.xor(&zero)?, x);
    assert_eq!(zero.add(&x)?, x);
    assert_eq!(x.sub(&zero)?, x);
    // 0 - x is not x, and a partial mask is not an identity.
    assert_ne!(zero.sub(&x)?, x);
    assert_ne!(x.and(&c(15, 8))?, x);
    Ok(())
}

// ---------------------------------------------------------------- properties

mod props {
    use super::*;
    use proptest::prelude::*;

    fn mask(w: u32) -> u128 {
        if w == 128 {
            u128::MAX
        } else {
            (1u128 << w) - 1
        }
    }

    fn eval2(e: impl Fn(&Expr, &Expr) -> Result<Expr, IrError>, w: u32, x: u128, y: u128) -> u128 {
        let mut m = Module::new("p").expect("name");
        let a = m.input("a", w).expect("a");
        let b = m.input("b", w).expect("b");
        let out = e(&a.expr(), &b.expr()).expect("expr");
        let o = m.output("o", out.width()).expect("o");
        m.assign(&o, out).expect("assign");
        let mut sim = Sim::new(&m).expect("sim");
        sim.set_u128("a", x & mask(w)).expect("set");
        sim.set_u128("b", y & mask(w)).expect("set");
        sim.get_u128("o").expect("get")
    }

    proptest! {
        #[test]
        fn arithmetic_matches_u128(w in 1u32..=128, x: u128, y: u128) {
            let (xm, ym) = (x & mask(w), y & mask(w));
            prop_assert_eq!(eval2(|a, b| a.add(b), w, x, y), xm.wrapping_add(ym) & mask(w));
            prop_assert_eq!(eval2(|a, b| a.sub(b), w, x, y), xm.wrapping_sub(ym) & mask(w));
            prop_assert_eq!(eval2(|a, b| a.xor(b), w, x, y), xm ^ ym);
            prop_assert_eq!(eval2(|a, b| a.cmp_lt(b), w, x, y), u128::from(xm < ym));
            prop_assert_eq!(eval2(|a, b| a.cmp_le(b), w, x, y), u128::from(xm <= ym));
            prop_assert_eq!(eval2(|a, b| a.cmp_gt(b), w, x, y), u128::from(xm > ym));
            prop_assert_eq!(eval2(|a, b| a.cmp_ne(b), w, x, y), u128::from(xm != ym));
        }

        #[test]
        fn selects_and_shifts_match_u128(w in 2u32..=128, x: u128, k in 0u32..130, hi in 0u32..128, lo in 0u32..128) {
            let xm = x & mask(w);
            let (lo, hi) = (lo.min(hi) % w, hi.max(lo) % w);
            let (lo, hi) = (lo.min(hi), hi.max(lo));
            let shl = if k >= w { 0 } else { (xm << k) & mask(w) };
            let shr = if k >= w { 0 } else { xm >> k };
            prop_assert_eq!(eval2(|a, _| Ok(a.shl(k)), w, x, 0), shl);
            prop_assert_eq!(eval2(|a, _| Ok(a.shr(k)), w, x, 0), shr);
            prop_assert_eq!(eval2(|a, _| a.slice(hi, lo), w, x, 0), (xm >> lo) & mask(hi - lo + 1));
            // A select of a sum is the select of the full sum.
            let sum = (xm.wrapping_add(xm)) & mask(w);
            prop_assert_eq!(eval2(|a, _| a.add(a)?.slice(hi, lo), w, x, 0), (sum >> lo) & mask(hi - lo + 1));
        }
    }
}

// ---------------------------------------------------------------- mutation

/// A small pipelined unit that uses every operator family: a valid bit
/// with a reset, an enabled data register, compares, a mux, a part
/// select, a reduction, a negation and constants.
fn mutation_subject() -> Result<Module, IrError> {
    let mut m = Module::new("subject")?;
    m.clock("clk")?;
    let rst = m.reset("rst")?;
    let a = m.input("a", 8)?;
    let b = m.input("b", 8)?;
    let go = m.input("go", 1)?;
    let y = m.output("y", 8)?;
    let flag = m.output("flag", 1)?;
    m.section("stage 1: sum and compare")?;
    let v = m.reg("s1_valid", 1, Reset::Value(0))?;
    m.reg_next(&v, &go, None)?;
    let s = m.reg("s1_sum", 8, Reset::None)?;
    let lt = a.expr().cmp_lt(&b.expr())?;
    let sum = Expr::mux(&lt, &a.expr().add(&b.expr())?, &a.expr().sub(&b.expr())?)?;
    let masked = sum
        .and(&Expr::constant(0x7e, 8)?)?
        .or(&a.expr().xor(&b.expr())?)?;
    m.reg_next(&s, masked, Some(go.expr().and(&rst.expr().not())?))?;
    m.section("stage 2: output")?;
    let hi = Expr::concat([s.expr().slice(6, 0)?, s.expr().slice(7, 7)?])?;
    m.assign(&y, hi)?;
    let f = s.expr().slice(3, 0)?.reduce_or().and(&v.expr())?;
    m.assign(&flag, f.or(&s.expr().cmp_ge(&Expr::constant(200, 8)?)?)?)?;
    Ok(m)
}

/// Outputs of `m` over a fixed random input sequence (with `mutant` set to
/// `sel` when the module has that input).
fn trace(m: &Module, sel: Option<u128>) -> Result<Vec<(u128, u128)>, IrError> {
    let mut sim = Sim::new(m)?;
    if let Some(k) = sel {
        sim.set_u128("mutant", k)?;
    }
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut out = Vec::new();
    for cycle in 0..200 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        sim.set_u128("rst", u128::from(cycle < 2 || cycle == 100))?;
        sim.set_u128("a", u128::from(x & 0xff))?;
        sim.set_u128("b", u128::from((x >> 8) & 0xff))?;
        sim.set_u128("go", u128::from((x >> 16) & 3 != 0))?;
        out.push((sim.get_u128("y")?, sim.get_u128("flag")?));
        sim.step();
    }
    Ok(out)
}

#[test]
fn every_operator_family_is_enumerated_with_its_stage() -> R {
    use crate::mutate::{enumerate, Operator};
    let m = mutation_subject()?;
    let muts = enumerate(&m);
    for family in Operator::FAMILIES {
        assert!(
            muts.iter().any(|mu| mu.op.family() == family),
            "no `{family}` mutation in {:#?}",
            muts.iter().map(|mu| &mu.text).collect::<Vec<_>>()
        );
    }
    assert!(muts
        .iter()
        .filter(|mu| mu.signal == "s1_sum")
        .all(|mu| mu.section.as_deref() == Some("stage 1: sum and compare")));
    // ports are declared before the first section
    assert!(muts
        .iter()
        .filter(|mu| mu.signal == "y")
        .all(|mu| mu.section.is_none()));
    let boundary = muts
        .iter()
        .find(|mu| mu.op.family() == "boundary")
        .expect("a boundary mutation");
    assert_eq!(
        boundary.text, "flag: `s1_sum >= 8'hc8` -> `s1_sum > 8'hc8`",
        "the text shows the node before and after"
    );
    // the one register with a reset: after a reset the mutant holds ~0
    let reset = muts
        .iter()
        .find(|mu| mu.op.family() == "reset-value")
        .expect("a reset-value mutation");
    assert_eq!(reset.signal, "s1_valid");
    assert_eq!(reset.text, "s1_valid: reset value `1'b0` -> `1'b1`");
    for (module, after_reset) in [(m.clone(), 0), (crate::mutate::apply(&m, reset)?, 1)] {
        let mut sim = Sim::new(&module)?;
        sim.set_u128("rst", 1)?;
        sim.set_u128("go", 0)?;
        sim.step();
        assert_eq!(sim.get_u128("s1_valid")?, after_reset);
        sim.set_u128("rst", 0)?;
        sim.step();
        assert_eq!(sim.get_u128("s1_valid")?, 0, "loads `go` after the reset");
    }
    Ok(())
}

#[test]
fn a_schema_computes_the_original_at_zero_and_each_mutant_at_its_number() -> R {
    use crate::mutate::{apply, enumerate, schema};
    let m = mutation_subject()?;
    let muts = enumerate(&m);
    assert!(muts.len() > 20, "{} mutations", muts.len());
    let s = schema(&m, &muts, "mutant", 8)?;
    s.check()?;
    assert!(s.emit(&[])?.contains("input  wire [7:0] mutant"));
    let original = trace(&m, None)?;
    assert_eq!(trace(&s, Some(0))?, original, "select 0 is the original");
    let mut changed = 0;
    for (k, mu) in muts.iter().enumerate() {
        let single = apply(&m, mu)?;
        // a mutant may leave a signal unused (a dropped term), nothing worse
        assert!(
            single
                .problems()
                .iter()
                .all(|p| matches!(p, Problem::Unused { .. })),
            "{}: {:?}",
            mu.text,
            single.problems()
        );
        let t = trace(&single, None)?;
        assert_eq!(trace(&s, Some(k as u128 + 1))?, t, "{}", mu.text);
        changed += usize::from(t != original);
    }
    // most single mutations of this unit change its outputs
    assert!(changed * 4 > muts.len() * 3, "{changed} of {}", muts.len());
    Ok(())
}

#[test]
fn a_schema_refuses_a_select_too_narrow_and_a_foreign_mutation() -> R {
    use crate::mutate::{apply, enumerate, schema};
    let m = mutation_subject()?;
    let muts = enumerate(&m);
    assert!(matches!(
        schema(&m, &muts, "mutant", 2),
        Err(IrError::Mutation { .. })
    ));
    let mut other = Module::new("other")?;
    let a = other.input("a", 1)?;
    let y = other.output("y", 1)?;
    other.assign(&y, a.expr().not())?;
    assert!(matches!(
        apply(&other, &muts[0]),
        Err(IrError::Mutation { .. })
    ));
    Ok(())
}

// ------------------------------------------------- combinational data path

#[test]
fn the_transparent_view_computes_one_vector_through_every_stage() -> R {
    use crate::comb::transparent;
    let m = mutation_subject()?;
    let t = transparent(&m, &["y".to_string()])?;
    // the clock, the reset and what only control read are marked unused
    t.check()?;
    let text = t.emit(&[])?;
    assert!(!text.contains("always"), "no registers left:\n{text}");
    assert!(!text.contains("output wire flag"), "{text}");
    let mut sim = Sim::new(&t)?;
    for (a, b) in [(3u8, 200u8), (200, 3), (0, 0), (255, 1), (17, 17)] {
        sim.set_u128("a", u128::from(a))?;
        sim.set_u128("b", u128::from(b))?;
        let sum = if a < b {
            a.wrapping_add(b)
        } else {
            a.wrapping_sub(b)
        };
        let s = (sum & 0x7e) | (a ^ b);
        assert_eq!(sim.get_u128("y")?, u128::from(s.rotate_left(1)), "{a} {b}");
    }
    assert!(transparent(&m, &["s1_sum".to_string()]).is_err());
    Ok(())
}

#[test]
fn the_data_path_scope_refuses_control_unbalanced_and_looping_cones() -> R {
    use crate::comb::data_path_scope;
    use crate::mutate::{enumerate, Site};
    let m = mutation_subject()?;
    let muts = enumerate(&m);
    let on = |signal: &str, site: Site| {
        muts.iter()
            .find(|mu| mu.signal == signal && mu.site == site)
            .expect("a mutation there")
    };
    // an output's own assign, and a data register that only `y` and the
    // mixed-enable `flag` read
    assert_eq!(
        data_path_scope(&m, on("y", Site::Value)),
        Ok(vec!["y".to_string()])
    );
    let e = data_path_scope(&m, on("s1_sum", Site::Value)).expect_err("flag mixes enables");
    assert!(e.contains("different enables"), "{e}");
    let e = data_path_scope(&m, on("s1_sum", Site::Enable)).expect_err("control");
    assert!(e.contains("enable"), "{e}");

    // a counter (a register that reads itself), and an output that reads
    // two depths
    let mut c = Module::new("counter")?;
    c.clock("clk")?;
    let a = c.input("a", 4)?;
    let q = c.output("q", 4)?;
    let r = c.output("r", 4)?;
    let n = c.reg("n", 4, Reset::None)?;
    c.reg_next(&n, n.expr().add(&a.expr())?, None)?;
    c.assign(&q, n.expr().xor(&Expr::constant(5, 4)?)?)?;
    let d = c.reg("d", 4, Reset::None)?;
    c.reg_next(&d, a.expr().not(), None)?;
    c.assign(&r, d.expr().and(&a.expr())?)?;
    let muts = enumerate(&c);
    let e =
        data_path_scope(&c, muts.iter().find(|mu| mu.signal == "q").expect("q")).expect_err("loop");
    assert!(e.contains("loop"), "{e}");
    let e = data_path_scope(&c, muts.iter().find(|mu| mu.signal == "d").expect("d"))
        .expect_err("two depths");
    assert!(e.contains("mixes pipeline depths"), "{e}");
    Ok(())
}
