//! Printing a checked [`Module`] as Verilog-2005.
//!
//! Layout (deterministic, in declaration order): the caller's header as
//! `//` comments, `` `default_nettype none ``, an ANSI port list with one
//! port per line, one declaration per line (`[W-1:0]`, no range for 1-bit
//! signals), continuous assigns, instances, one `always @(posedge clk)`
//! block per group of registers sharing reset-ness and enable,
//! `endmodule`, and `` `default_nettype wire ``.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::error::IrError;
use super::expr::{Expr, ExprKind};
use super::module::{Driver, Module};
use super::signal::{Signal, SignalKind};

/// One emitted module: write `text` to `file_name` (`<module>.v`, as
/// Verilator's DECLFILENAME expects).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerilogFile {
    pub module: String,
    pub file_name: String,
    pub text: String,
}

const LINT_OFF: &str = "/* verilator lint_off UNUSEDSIGNAL */";
const LINT_ON: &str = "/* verilator lint_on UNUSEDSIGNAL */";

impl Module {
    /// Checks the module ([`Module::check`]) and prints it. `header` lines
    /// (generator version, model file and hash, command line, ...) become
    /// `//` comments at the top.
    pub fn emit(&self, header: &[String]) -> Result<String, IrError> {
        self.check()?;
        Ok(Emitter::new(self).run(header))
    }

    /// Emits this module and every module it instantiates (children first,
    /// each once). Two different modules with one name are an error.
    pub fn emit_hierarchy(&self, header: &[String]) -> Result<Vec<VerilogFile>, IrError> {
        let mut files = Vec::new();
        let mut seen = BTreeMap::new();
        self.emit_into(header, &mut files, &mut seen)?;
        Ok(files)
    }

    fn emit_into(
        &self,
        header: &[String],
        files: &mut Vec<VerilogFile>,
        seen: &mut BTreeMap<String, String>,
    ) -> Result<(), IrError> {
        for inst in &self.instances {
            inst.module.emit_into(header, files, seen)?;
        }
        let text = self.emit(header)?;
        match seen.get(&self.name) {
            Some(prev) if *prev == text => {}
            Some(_) => {
                return Err(IrError::ModuleNameClash {
                    name: self.name.clone(),
                })
            }
            None => {
                seen.insert(self.name.clone(), text.clone());
                files.push(VerilogFile {
                    module: self.name.clone(),
                    file_name: format!("{}.v", self.name),
                    text,
                });
            }
        }
        Ok(())
    }
}

/// Writes `files` into `dir` (created if needed); returns their paths.
pub fn write_files(dir: &Path, files: &[VerilogFile]) -> io::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    files
        .iter()
        .map(|f| {
            let path = dir.join(&f.file_name);
            std::fs::write(&path, &f.text)?;
            Ok(path)
        })
        .collect()
}

struct Temp {
    name: Arc<str>,
    value: Expr,
}

/// Registers sharing one `always` block: same reset-ness, same enable.
struct RegGroup {
    has_reset: bool,
    enable: Option<Expr>,
    /// (signal index, next value)
    members: Vec<(usize, Expr)>,
}

struct Emitter<'m> {
    m: &'m Module,
    temps: Vec<Temp>,
}

fn range(width: u32) -> String {
    if width == 1 {
        String::new()
    } else {
        format!("[{}:0]", width - 1)
    }
}

/// `name[hi:lo], name[i]` for the deliberately unused ranges.
fn describe_ranges(name: &str, ranges: &[(u32, u32)]) -> String {
    ranges
        .iter()
        .map(|&(hi, lo)| {
            if hi == lo {
                format!("{name}[{hi}]")
            } else {
                format!("{name}[{hi}:{lo}]")
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// A declaration line with aligned columns: `<kw> <range> <name>`.
fn decl_line(keyword: &str, kw_width: usize, width: u32, range_width: usize, name: &str) -> String {
    if range_width == 0 {
        format!("{keyword:<kw_width$} {name}")
    } else {
        format!("{keyword:<kw_width$} {:<range_width$} {name}", range(width))
    }
}

impl<'m> Emitter<'m> {
    fn new(m: &'m Module) -> Emitter<'m> {
        Emitter {
            m,
            temps: Vec::new(),
        }
    }

    /// Gives every select of a non-signal operand a temporary wire.
    fn hoist(&mut self, e: &Expr) -> Expr {
        e.rewrite(&mut |x| {
            let ExprKind::Slice { arg, hi, lo } = &x.kind else {
                return x;
            };
            if matches!(arg.kind, ExprKind::Ref(_)) {
                return x;
            }
            let name = self.temp_for(arg);
            let sig = Signal {
                module: self.m.tag,
                index: usize::MAX,
                width: arg.width,
                name,
            };
            Expr {
                width: x.width,
                kind: ExprKind::Slice {
                    arg: Arc::new(Expr::from(sig)),
                    hi: *hi,
                    lo: *lo,
                },
            }
        })
    }

    fn temp_for(&mut self, value: &Expr) -> Arc<str> {
        if let Some(t) = self.temps.iter().find(|t| t.value == *value) {
            return t.name.clone();
        }
        let mut n = self.temps.len();
        let name = loop {
            let candidate = format!("tmp_{n}");
            let taken = self.m.names.contains(&candidate)
                || self.temps.iter().any(|t| *t.name == candidate);
            if !taken {
                break candidate;
            }
            n += 1;
        };
        let name: Arc<str> = Arc::from(name);
        self.temps.push(Temp {
            name: name.clone(),
            value: value.clone(),
        });
        name
    }

    fn run(mut self, header: &[String]) -> String {
        let m = self.m;
        // Hoist first, so the temporaries are known before declarations.
        let mut assigns: Vec<(usize, Arc<str>, Expr)> = Vec::new();
        let mut regs: Vec<(usize, Expr, Option<Expr>)> = Vec::new();
        for (i, d) in m.decls.iter().enumerate() {
            match &m.drivers[i] {
                Some(Driver::Assign(e)) => {
                    let e = self.hoist(e);
                    assigns.push((i, d.name.clone(), e));
                }
                Some(Driver::Reg { next, enable }) => {
                    let next = self.hoist(next);
                    let enable = enable.as_ref().map(|e| self.hoist(e));
                    regs.push((i, next, enable));
                }
                _ => {}
            }
        }
        let mut instances: Vec<Vec<(Arc<str>, Expr)>> = Vec::new();
        for inst in &m.instances {
            let conns = inst
                .conns
                .iter()
                .map(|(p, e)| (inst.module.decls[*p].name.clone(), self.hoist(e)))
                .collect();
            instances.push(conns);
        }

        let mut out = String::new();
        for line in header.iter().flat_map(|h| h.split('\n')) {
            let line = line.trim_end();
            if line.is_empty() {
                out.push_str("//\n");
            } else {
                let _ = writeln!(out, "// {line}");
            }
        }
        out.push_str("`default_nettype none\n\n");

        // Ports.
        let ports: Vec<usize> = m.port_indices().collect();
        if ports.is_empty() {
            let _ = writeln!(out, "module {};", m.name);
        } else {
            let _ = writeln!(out, "module {} (", m.name);
            let rw = ports
                .iter()
                .map(|&i| range(m.decls[i].width).len())
                .max()
                .unwrap_or(0);
            for (k, &i) in ports.iter().enumerate() {
                let d = &m.decls[i];
                let dir = if d.kind == SignalKind::Input {
                    "input  wire"
                } else {
                    "output wire"
                };
                let comma = if k + 1 < ports.len() { "," } else { "" };
                let line = decl_line(dir, 0, d.width, rw, &d.name);
                self.wrapped_decl(&mut out, &d.name, &d.unused, &format!("{line}{comma}"));
            }
            out.push_str(");\n");
        }

        // Internal declarations.
        let body: Vec<usize> = (0..m.decls.len())
            .filter(|&i| matches!(m.decls[i].kind, SignalKind::Wire | SignalKind::Reg))
            .collect();
        if !body.is_empty() || !self.temps.is_empty() {
            out.push('\n');
            let rw = body
                .iter()
                .map(|&i| range(m.decls[i].width).len())
                .chain(self.temps.iter().map(|t| range(t.value.width).len()))
                .max()
                .unwrap_or(0);
            let mut section = None;
            for &i in &body {
                self.open_section(&mut out, &mut section, i);
                let d = &m.decls[i];
                let kw = if d.kind == SignalKind::Reg {
                    "reg"
                } else {
                    "wire"
                };
                let line = format!("{};", decl_line(kw, 4, d.width, rw, &d.name));
                self.wrapped_decl(&mut out, &d.name, &d.unused, &line);
            }
            if !self.temps.is_empty() {
                let _ = writeln!(
                    out,
                    "    // partly selected below (Verilog-2005 selects only from names)"
                );
                let _ = writeln!(out, "    {LINT_OFF}");
                for t in &self.temps {
                    let line = decl_line("wire", 4, t.value.width, rw, &t.name);
                    let _ = writeln!(out, "    {line};");
                }
                let _ = writeln!(out, "    {LINT_ON}");
            }
        }

        // Continuous assigns: temporaries first, then in declaration order.
        let temp_assigns: Vec<(Arc<str>, Expr)> = self
            .temps
            .iter()
            .map(|t| (t.name.clone(), t.value.clone()))
            .collect();
        if !temp_assigns.is_empty() || !assigns.is_empty() {
            out.push('\n');
            for (name, e) in &temp_assigns {
                statement(&mut out, 4, &format!("assign {name} = "), e);
            }
            let mut section = None;
            for (i, name, e) in &assigns {
                self.open_section(&mut out, &mut section, *i);
                statement(&mut out, 4, &format!("assign {name} = "), e);
            }
        }

        // Instances.
        for (inst, conns) in m.instances.iter().zip(&instances) {
            out.push('\n');
            let _ = writeln!(out, "    {} {} (", inst.module.name, inst.name);
            for (k, (port, e)) in conns.iter().enumerate() {
                let mut line = format!("        .{port}(");
                e.write_wrapped(&mut line, 8);
                line.push(')');
                if k + 1 < conns.len() {
                    line.push(',');
                }
                out.push_str(&line);
                out.push('\n');
            }
            out.push_str("    );\n");
        }

        // Registers, grouped by (has reset, enable).
        let mut groups: Vec<RegGroup> = Vec::new();
        for (i, next, enable) in regs {
            let has_reset = m.decls[i].reset.is_some();
            match groups
                .iter_mut()
                .find(|g| g.has_reset == has_reset && g.enable == enable)
            {
                Some(g) => g.members.push((i, next)),
                None => groups.push(RegGroup {
                    has_reset,
                    enable,
                    members: vec![(i, next)],
                }),
            }
        }
        let clk = m
            .clock
            .map(|c| m.decls[c].name.to_string())
            .unwrap_or_default();
        let rst = m
            .reset
            .map(|r| m.decls[r].name.to_string())
            .unwrap_or_default();
        let mut section = None;
        for RegGroup {
            has_reset,
            enable,
            members,
        } in &groups
        {
            out.push('\n');
            if let Some((first, _)) = members.first() {
                self.open_section(&mut out, &mut section, *first);
            }
            let _ = writeln!(out, "    always @(posedge {clk}) begin");
            let en = enable.as_ref().map(|e| e.render(None));
            let inner = if *has_reset || en.is_some() { 12 } else { 8 };
            if *has_reset {
                let _ = writeln!(out, "        if ({rst}) begin");
                for (i, _) in members {
                    let d = &m.decls[*i];
                    let value = d
                        .reset
                        .as_ref()
                        .map(|b| b.verilog_literal())
                        .unwrap_or_default();
                    let _ = writeln!(out, "            {} <= {value};", d.name);
                }
                match &en {
                    Some(en) => {
                        let _ = writeln!(out, "        end else if ({en}) begin");
                    }
                    None => out.push_str("        end else begin\n"),
                }
            } else if let Some(en) = &en {
                let _ = writeln!(out, "        if ({en}) begin");
            }
            for (i, next) in members {
                statement(&mut out, inner, &format!("{} <= ", m.decls[*i].name), next);
            }
            if inner == 12 {
                out.push_str("        end\n");
            }
            out.push_str("    end\n");
        }

        out.push_str("\nendmodule\n\n`default_nettype wire\n");
        out
    }

    /// Writes the `// title` comment of the section declaration `index`
    /// belongs to, when that is not `current` (the section last opened).
    fn open_section(&self, out: &mut String, current: &mut Option<usize>, index: usize) {
        let s = self.m.section_of(index);
        if s.is_some() && s != *current {
            if let Some((_, title)) = s.and_then(|s| self.m.sections.get(s)) {
                if !out.ends_with("\n\n") {
                    out.push('\n');
                }
                let _ = writeln!(out, "    // {title}");
            }
            *current = s;
        }
    }

    /// A declaration line, wrapped in lint_off/lint_on if bits of it are
    /// deliberately unused.
    fn wrapped_decl(&self, out: &mut String, name: &str, unused: &[(u32, u32)], line: &str) {
        if unused.is_empty() {
            let _ = writeln!(out, "    {line}");
        } else {
            let _ = writeln!(
                out,
                "    // deliberately unused: {}",
                describe_ranges(name, unused)
            );
            let _ = writeln!(out, "    {LINT_OFF}");
            let _ = writeln!(out, "    {line}");
            let _ = writeln!(out, "    {LINT_ON}");
        }
    }
}

/// `<indent><prefix><expr>;` with long concatenations wrapped.
fn statement(out: &mut String, indent: usize, prefix: &str, e: &Expr) {
    let mut line = " ".repeat(indent);
    line.push_str(prefix);
    e.write_wrapped(&mut line, indent);
    line.push_str(";\n");
    out.push_str(&line);
}
