//! The hand-structured arithmetic of `hdl::circuits` against plain integer
//! arithmetic, through the IR's evaluator.

use hdl::circuits::{sub_prefix, sub_prefix_gray};
use hdl::ir::{IrError, Module, Sim};

/// `sub_prefix` and `sub_prefix_gray` of width `w` on every operand pair of that width (widths up
/// to 8), and on a spread of pairs for wider ones.
#[test]
fn sub_prefix_is_subtraction_modulo_width() -> Result<(), IrError> {
    for w in [1u32, 2, 3, 5, 8, 13, 16] {
        let mut m = Module::new("sub")?;
        let a = m.input("a", w)?;
        let b = m.input("b", w)?;
        let d = m.output("d", w)?;
        let g = m.output("g", w)?;
        let diff = sub_prefix(&mut m, "whole", &a.expr(), &b.expr())?;
        m.assign(&d, diff)?;
        let gray = sub_prefix_gray(&mut m, "lanes", &a.expr(), &b.expr(), w)?.1;
        m.assign(&g, gray)?;
        let mut sim = Sim::new(&m)?;
        let modulus = 1u128 << w;
        let values: Vec<u128> = if w <= 8 {
            (0..modulus).collect()
        } else {
            // corners and a multiplicative spread
            let mut v = vec![
                0,
                1,
                2,
                modulus / 2 - 1,
                modulus / 2,
                modulus - 2,
                modulus - 1,
            ];
            v.extend((0..61u128).map(|i| (i * 0x9E37_79B9) % modulus));
            v
        };
        for &x in &values {
            for &y in &values {
                sim.set_u128("a", x)?;
                sim.set_u128("b", y)?;
                let diff = (x + modulus - y) % modulus;
                assert_eq!(sim.get_u128("d")?, diff, "{w}-bit {x} - {y}");
                assert_eq!(
                    sim.get_u128("g")?,
                    diff ^ (diff >> 1),
                    "Gray of {w}-bit {x} - {y}"
                );
            }
        }
    }
    Ok(())
}

#[test]
fn sub_prefix_refuses_operands_of_different_widths() -> Result<(), IrError> {
    let mut m = Module::new("sub")?;
    let a = m.input("a", 8)?;
    let b = m.input("b", 7)?;
    assert!(matches!(
        sub_prefix(&mut m, "s", &a.expr(), &b.expr()),
        Err(IrError::WidthMismatch { .. })
    ));
    let b8 = m.input("b8", 8)?;
    assert!(matches!(
        sub_prefix_gray(&mut m, "t", &a.expr(), &b8.expr(), 3),
        Err(IrError::ParameterOutOfRange { .. })
    ));
    Ok(())
}
