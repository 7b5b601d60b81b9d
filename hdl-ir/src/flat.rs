//! Flattening a module hierarchy into one netlist, for loop detection and
//! for the evaluator. Hierarchical names use `.` (`u_add.sum`).

use std::sync::Arc;

use super::bits::Bits;
use super::expr::{Expr, ExprKind};
use super::module::{fresh_tag, Driver, Module};
use super::signal::{Signal, SignalKind};

#[derive(Debug, Clone)]
pub(crate) enum FlatDriver {
    /// A top-level input (set from outside).
    Input,
    /// Nothing drives it (an error for [`super::Module::check`]).
    Undriven,
    /// Combinational: a continuous assign, a child input port, or a
    /// parent wire driven by a child output.
    Comb(Expr),
    /// A register; `next` is `None` when it has no update.
    Reg {
        next: Option<Expr>,
        enable: Option<Expr>,
        /// Flat index of the reset input and the reset value.
        reset: Option<(usize, Bits)>,
    },
}

#[derive(Debug, Clone)]
pub(crate) struct FlatSig {
    pub name: Arc<str>,
    pub width: u32,
    pub driver: FlatDriver,
}

#[derive(Debug, Clone)]
pub(crate) struct Flat {
    pub tag: u64,
    pub sigs: Vec<FlatSig>,
}

impl Flat {
    pub fn build(top: &Module) -> Flat {
        let mut flat = Flat {
            tag: fresh_tag(),
            sigs: Vec::new(),
        };
        flat.add(top, "", true);
        flat
    }

    fn signal(&self, index: usize) -> Signal {
        let s = &self.sigs[index];
        Signal {
            module: self.tag,
            index,
            width: s.width,
            name: s.name.clone(),
        }
    }

    fn remap(&self, map: &[usize], e: &Expr) -> Expr {
        e.rewrite(&mut |x| match &x.kind {
            ExprKind::Ref(s) => Expr::from(self.signal(map[s.index])),
            _ => x,
        })
    }

    /// Adds `m`'s signals under `prefix`; returns local index -> flat index.
    fn add(&mut self, m: &Module, prefix: &str, is_top: bool) -> Vec<usize> {
        let base = self.sigs.len();
        for d in &m.decls {
            let driver = match d.kind {
                SignalKind::Input if is_top => FlatDriver::Input,
                SignalKind::Reg => FlatDriver::Reg {
                    next: None,
                    enable: None,
                    reset: None,
                },
                _ => FlatDriver::Undriven,
            };
            self.sigs.push(FlatSig {
                name: Arc::from(format!("{prefix}{}", d.name)),
                width: d.width,
                driver,
            });
        }
        let map: Vec<usize> = (base..base + m.decls.len()).collect();
        for (i, d) in m.decls.iter().enumerate() {
            let reset = match (&d.reset, m.reset) {
                (Some(v), Some(r)) => Some((map[r], v.clone())),
                _ => None,
            };
            let driver = match &m.drivers[i] {
                Some(Driver::Assign(e)) => FlatDriver::Comb(self.remap(&map, e)),
                Some(Driver::Reg { next, enable }) => FlatDriver::Reg {
                    next: Some(self.remap(&map, next)),
                    enable: enable.as_ref().map(|e| self.remap(&map, e)),
                    reset,
                },
                None if d.kind == SignalKind::Reg => FlatDriver::Reg {
                    next: None,
                    enable: None,
                    reset,
                },
                // Instance outputs are filled in below; inputs stay as set.
                _ => continue,
            };
            self.sigs[map[i]].driver = driver;
        }
        for inst in &m.instances {
            let child_map = self.add(&inst.module, &format!("{prefix}{}.", inst.name), false);
            for (port, conn) in &inst.conns {
                if inst.module.decls[*port].kind == SignalKind::Output {
                    if let Some(target) = conn.as_signal() {
                        let src = Expr::from(self.signal(child_map[*port]));
                        self.sigs[map[target.index]].driver = FlatDriver::Comb(src);
                    }
                } else {
                    let e = self.remap(&map, conn);
                    self.sigs[child_map[*port]].driver = FlatDriver::Comb(e);
                }
            }
        }
        map
    }

    /// Combinational signals in evaluation order, or a cycle (names).
    pub fn comb_order(&self) -> Result<Vec<usize>, Vec<String>> {
        let n = self.sigs.len();
        let is_comb = |i: usize| matches!(self.sigs[i].driver, FlatDriver::Comb(_));
        let deps: Vec<Vec<usize>> = (0..n)
            .map(|i| {
                let mut d = Vec::new();
                if let FlatDriver::Comb(e) = &self.sigs[i].driver {
                    e.visit_refs(&mut |s, _, _| {
                        if is_comb(s.index) && !d.contains(&s.index) {
                            d.push(s.index);
                        }
                    });
                }
                d
            })
            .collect();
        // 0 = unvisited, 1 = on the stack, 2 = done.
        let mut state = vec![0u8; n];
        let mut order = Vec::with_capacity(n);
        for start in (0..n).filter(|&i| is_comb(i)) {
            if state[start] != 0 {
                continue;
            }
            state[start] = 1;
            let mut stack: Vec<(usize, usize)> = vec![(start, 0)];
            while let Some(&(v, k)) = stack.last() {
                if let Some(&w) = deps[v].get(k) {
                    if let Some(top) = stack.last_mut() {
                        top.1 += 1;
                    }
                    match state[w] {
                        0 => {
                            state[w] = 1;
                            stack.push((w, 0));
                        }
                        1 => {
                            let from = stack.iter().position(|&(x, _)| x == w).unwrap_or(0);
                            let mut path: Vec<String> = stack[from..]
                                .iter()
                                .map(|&(x, _)| self.sigs[x].name.to_string())
                                .collect();
                            path.push(self.sigs[w].name.to_string());
                            return Err(path);
                        }
                        _ => {}
                    }
                } else {
                    state[v] = 2;
                    order.push(v);
                    stack.pop();
                }
            }
        }
        Ok(order)
    }
}
