//! Markdown rendering of the reports.

use std::fmt::Write as _;

use crate::flow::{StageRow, Timing, UnitReport};
use crate::power::Power;

/// The cell of a figure that was not measured (an area-only run has no
/// timing and no gate depths): the same in every report and table.
pub const NOT_MEASURED: &str = "–";

fn opt(v: Option<f64>, digits: usize) -> String {
    v.map_or(NOT_MEASURED.to_string(), |x| format!("{x:.digits$}"))
}

/// A count, or [`NOT_MEASURED`].
pub fn opt_count(v: Option<u32>) -> String {
    v.map_or(NOT_MEASURED.to_string(), |x| x.to_string())
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
        "| NAND2-equivalent gates (total, area-mapped) | **{:.0}**{verdict} |",
        u.nand2_eq
    );
    if let Some(t) = &u.timing {
        let _ = writeln!(
            s,
            "| NAND2-equivalent gates (total, timing-mapped: buffered and sized) | {:.0} ({:+.1}%, {} cells) |",
            t.nand2_eq,
            100.0 * (t.nand2_eq / u.nand2_eq - 1.0),
            t.cells
        );
    }
    let _ = writeln!(s, "| flip-flops | {} ({:.0} NAND2-eq); {} at elaboration, {} merged as duplicates or removed as constant |", u.flops, u.flop_nand2, u.rtl_flop_bits, u.rtl_flop_bits.saturating_sub(u.flops as u64));
    let _ = writeln!(
        s,
        "| combinational NAND2-eq (area-mapped) | {:.0} |",
        u.comb_nand2
    );
    let _ = writeln!(s, "| cells (area-mapped) | {} |", u.cells);
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
            "| **minimum clock period** (timing-mapped, OpenSTA) | **{:.3} ns = {:.1} FO4** ({:.0} MHz) |",
            t.period_ns,
            t.period_fo4,
            1000.0 / t.period_ns
        );
        let _ = writeln!(
            s,
            "| critical path | {} → {} ({}: arrival {:.3} ns + setup {}) |",
            t.critical.start,
            t.critical.end,
            t.critical.group,
            t.critical.arrival_ns,
            opt(t.critical.setup_ns, 3)
        );
        if let Some(r) = &t.reg_to_reg {
            let _ = writeln!(
                s,
                "| worst register-to-register path | {:.3} ns = {:.1} FO4 ({} → {}) |",
                r.period_ns, r.period_fo4, r.start, r.end
            );
        }
        let _ = writeln!(
            s,
            "| FO4 delay of the library | {:.1} ps ({} driving 4 copies: rise {:.1} ps, fall {:.1} ps, input slew {:.1} ps) |",
            1000.0 * t.fo4.fo4_ns,
            t.fo4.inverter,
            1000.0 * t.fo4.rise_ns,
            1000.0 * t.fo4.fall_ns,
            1000.0 * t.fo4.slew_ns()
        );
        let _ = writeln!(
            s,
            "| ABC's own estimate (`stime -p`) | {} ns |",
            opt(t.abc_delay_ns, 3)
        );
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
    s.push_str(&stage_table(&u.stages));
    if let Some(t) = &u.timing {
        s.push_str(&timing_markdown(t));
    }
    if let Some(p) = &u.power {
        s.push_str(&power_markdown(p));
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

/// The per-stage table (area, flops and levels of each pipeline stage);
/// depths the run did not measure read [`NOT_MEASURED`].
pub fn stage_table(stages: &[StageRow]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "| stage | flops | flop NAND2-eq | comb NAND2-eq | levels (mapped cells) | levels (2-in gates, ABC area) | levels (2-in gates, ABC delay) |");
    let _ = writeln!(s, "|---|---:|---:|---:|---:|---:|---:|");
    for r in stages {
        let _ = writeln!(
            s,
            "| {} | {} | {:.0} | {:.0} | {} | {} | {} |",
            r.stage,
            r.flops,
            r.flop_nand2,
            r.comb_nand2,
            r.levels_cells,
            opt_count(r.levels_gates_area),
            opt_count(r.levels_gates_delay),
        );
    }
    s
}

/// The per-stage timing table of one unit.
pub fn timing_markdown(t: &Timing) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "\n### Timing per pipeline stage (timing-mapped netlist)\n"
    );
    let _ = writeln!(
        s,
        "Clock on `{}` (ideal, transition {:.0} ps); inputs driven by `{}` at the clock edge; outputs loaded with {:.1} fF and due at the next edge. \
         Worst path into each group of endpoints; period = arrival + setup; FO4 = {:.1} ps. Method: docs/hw/synthesis.md.\n",
        t.clock_port,
        1000.0 * t.clock_transition_ns,
        t.input_driver,
        1000.0 * t.output_load_pf,
        1000.0 * t.fo4.fo4_ns
    );
    let _ = writeln!(
        s,
        "| endpoints | worst path (ns) | FO4 | arrival (ns) | setup (ns) | start | end |\n|---|---:|---:|---:|---:|---|---|"
    );
    for p in &t.stages {
        let _ = writeln!(
            s,
            "| {} | {:.3} | {:.1} | {:.3} | {} | {} | {} |",
            p.group,
            p.period_ns,
            p.period_fo4,
            p.arrival_ns,
            opt(p.setup_ns, 3),
            p.start,
            p.end
        );
    }
    s
}

/// The power section of one unit: totals, then per pipeline stage.
pub fn power_markdown(p: &Power) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "\n### Power (timing-mapped netlist, OpenSTA)\n");
    let _ = writeln!(
        s,
        "At {:.3} ns ({:.0} MHz; {}). Activity: {}; {}. {:.2} blocks per cycle over {} cycles; mean toggle rate {:.3} per cycle, mean time at 1 {:.2}, over {} nets. Method: docs/hw/synthesis.md, \"Power\".\n",
        p.clock_ns,
        1000.0 / p.clock_ns,
        p.clock_source,
        p.activity_source,
        p.check,
        p.blocks_per_cycle,
        p.cycles,
        p.mean_toggle_rate,
        p.mean_duty,
        p.nets
    );
    let _ = writeln!(
        s,
        "| total (mW) | dynamic (mW) | internal (mW) | switching (mW) | leakage (mW) | pJ per block |\n|---:|---:|---:|---:|---:|---:|"
    );
    let _ = writeln!(
        s,
        "| {:.3} | {:.3} | {:.3} | {:.3} | {:.6} | {:.2} |",
        p.total_mw, p.dynamic_mw, p.internal_mw, p.switching_mw, p.leakage_mw, p.pj_per_block
    );
    if !p.stages.is_empty() {
        let _ = writeln!(
            s,
            "\nPer pipeline stage (cells charged to the registers they feed, as the area):\n\n| stage | total (mW) | dynamic (mW) | leakage (mW) | pJ per block |\n|---|---:|---:|---:|---:|"
        );
        for r in &p.stages {
            let _ = writeln!(
                s,
                "| {} | {:.3} | {:.3} | {:.6} | {:.2} |",
                r.stage, r.total_mw, r.dynamic_mw, r.leakage_mw, r.pj_per_block
            );
        }
    }
    s
}

impl UnitReport {
    fn liberty_name(&self) -> String {
        std::path::Path::new(&self.liberty)
            .file_name()
            .map_or(self.liberty.clone(), |f| f.to_string_lossy().into_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depths_not_measured_read_as_a_dash_and_measured_zeros_as_zero() {
        let rows = [
            StageRow {
                stage: "stage 1".into(),
                flops: 3,
                levels_cells: 7,
                ..StageRow::default()
            },
            StageRow {
                stage: "stage 2".into(),
                levels_gates_area: Some(0),
                levels_gates_delay: Some(12),
                ..StageRow::default()
            },
        ];
        let t = stage_table(&rows);
        assert!(t.contains("| stage 1 | 3 | 0 | 0 | 7 | – | – |"), "{t}");
        assert!(t.contains("| stage 2 | 0 | 0 | 0 | 0 | 0 | 12 |"), "{t}");
    }
}
