//! Markdown rendering of the reports.

use std::fmt::Write as _;

use crate::flow::UnitReport;

fn opt(v: Option<f64>, digits: usize) -> String {
    v.map_or("–".to_string(), |x| format!("{x:.digits$}"))
}

/// The Markdown section of one unit.
pub fn unit_markdown(u: &UnitReport, budget: Option<f64>) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "## `{}`\n", u.top);
    let _ = writeln!(s, "| metric | value |\n|---|---|");
    let verdict = budget.map_or(String::new(), |b| {
        format!(
            " (budget {b:.0}: {})",
            if u.nand2_eq <= b { "met" } else { "MISSED" }
        )
    });
    let _ = writeln!(
        s,
        "| NAND2-equivalent gates (total) | **{:.0}**{verdict} |",
        u.nand2_eq
    );
    let _ = writeln!(s, "| flip-flops | {} ({:.0} NAND2-eq); {} at elaboration, {} merged as duplicates or removed as constant |", u.flops, u.flop_nand2, u.rtl_flop_bits, u.rtl_flop_bits.saturating_sub(u.flops as u64));
    let _ = writeln!(s, "| combinational NAND2-eq | {:.0} |", u.comb_nand2);
    let _ = writeln!(s, "| cells | {} |", u.cells);
    let _ = writeln!(
        s,
        "| area ({} units) / {} area | {:.0} / {} |",
        u.liberty_name(),
        u.nand2_cell,
        u.area,
        u.nand2_area
    );
    let _ = writeln!(
        s,
        "| `stat -tech cmos` transistors / 4 (library-free) | {} ({} transistors) |",
        opt(u.transistors_div4, 0),
        u.transistors.map_or("–".into(), |t| t.to_string())
    );
    if let Some(t) = &u.timing {
        let _ = writeln!(
            s,
            "| OpenSTA reg-to-reg max delay | {} ns ({} → {}) |",
            opt(t.reg_to_reg_ns, 3),
            t.reg_to_reg_start,
            t.reg_to_reg_end
        );
        let _ = writeln!(
            s,
            "| OpenSTA worst path incl. ports | {} ns ({} → {}) |",
            opt(t.worst_ns, 3),
            t.worst_start,
            t.worst_end
        );
        let _ = writeln!(s, "| flop setup time | {} ns |", opt(t.setup_ns, 3));
    }
    if let Some(d) = &u.longest_path {
        let _ = writeln!(
            s,
            "| longest path (mapped cells) | {} cells, {} → {} |",
            d.levels, d.start, d.end
        );
    }
    let _ = writeln!(s, "| flow time | {:.0} s |", u.seconds);
    let _ = writeln!(s, "\n### Per pipeline stage (flat netlist)\n");
    let _ = writeln!(s, "Combinational cells are charged to the registers they feed (split evenly where a cell feeds several stages).\n");
    let _ = writeln!(s, "| stage | flops | flop NAND2-eq | comb NAND2-eq | levels (mapped cells) | levels (2-in gates, ABC area) | levels (2-in gates, ABC delay) | STA arrival (ns) |");
    let _ = writeln!(s, "|---|---:|---:|---:|---:|---:|---:|---:|");
    for r in &u.stages {
        let _ = writeln!(
            s,
            "| {} | {} | {:.0} | {:.0} | {} | {} | {} | {} |",
            r.stage,
            r.flops,
            r.flop_nand2,
            r.comb_nand2,
            r.levels_cells,
            r.levels_gates_area,
            r.levels_gates_delay,
            opt(r.sta_arrival_ns, 3)
        );
    }
    if !u.blocks.is_empty() {
        let _ = writeln!(s, "\n### Per block\n");
        if let Some(t) = u.blocks_run_nand2 {
            let _ = writeln!(s, "From a second run with the block boundaries kept (`keep` on the boundary wires): total {t:.0} NAND2-eq vs {:.0} flat ({:+.1}%, the cost of not optimising across the boundary).\n", u.nand2_eq, 100.0 * (t / u.nand2_eq - 1.0));
        } else {
            let _ = writeln!(
                s,
                "Blocks coincide with pipeline stages here, so this is the flat netlist.\n"
            );
        }
        let _ = writeln!(
            s,
            "| block | comb NAND2-eq | flops | flop NAND2-eq |\n|---|---:|---:|---:|"
        );
        for b in &u.blocks {
            let _ = writeln!(
                s,
                "| {} | {:.0} | {} | {:.0} |",
                b.block, b.comb_nand2, b.flops, b.flop_nand2
            );
        }
    }
    let _ = writeln!(s, "\n<details><summary>cells by type</summary>\n");
    let _ = writeln!(s, "| cell | count |\n|---|---:|");
    for (c, n) in &u.cells_by_type {
        let _ = writeln!(s, "| {c} | {n} |");
    }
    let _ = writeln!(s, "\n</details>\n");
    s
}

impl UnitReport {
    fn liberty_name(&self) -> String {
        std::path::Path::new(&self.liberty)
            .file_name()
            .map_or(self.liberty.clone(), |f| f.to_string_lossy().into_owned())
    }
}
