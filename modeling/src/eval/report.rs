//! The Markdown report of an [`Evaluation`].

use std::fmt::Write;

use super::{fmt_ratio, ratio_of, Evaluation, GroupResult, ProgrammedInfo, Totals};

fn ratio_rows(e: &Evaluation, groups: &[GroupResult], byte: bool, out: &mut String) {
    let _ = write!(out, "| group | apps | blocks |");
    for a in &e.algos {
        let _ = write!(out, " {a} |");
    }
    let _ = writeln!(out, " LZ4 file | zstd file |");
    let _ = write!(out, "|---|---:|---:|");
    for _ in &e.algos {
        let _ = write!(out, "---:|");
    }
    let _ = writeln!(out, "---:|---:|");
    for g in groups {
        let _ = write!(out, "| {} | {} | {} |", g.name, g.apps, g.blocks());
        for t in &g.totals {
            let r = if byte { t.byte_ratio() } else { t.ratio() };
            let _ = write!(out, " {} |", fmt_ratio(r));
        }
        let _ = writeln!(
            out,
            " {} | {} |",
            fmt_ratio(g.lz4_ratio),
            fmt_ratio(g.zstd_ratio)
        );
    }
}

/// The console summary: one line per group of `groups`, each algorithm's
/// bit-exact ratio, or `no blocks` for an empty group.
pub fn console_summary(e: &Evaluation, groups: &[GroupResult]) -> String {
    let mut s = String::new();
    for g in groups {
        if g.is_empty() {
            let _ = writeln!(s, "{:<30} no blocks", g.name);
            continue;
        }
        let cells: Vec<String> = e
            .algos
            .iter()
            .zip(&g.totals)
            .map(|(a, t)| format!("{a} {}", fmt_ratio(t.ratio())))
            .collect();
        let _ = writeln!(s, "{:<30} {}", g.name, cells.join("  "));
    }
    s
}

/// The comparison with the paper's Fig. 5 averages: per algorithm, the
/// overall (seen + unseen) and all-applications ratios and the paper's.
pub fn paper_table(e: &Evaluation, groups: &[GroupResult]) -> String {
    let mut s = String::from(
        "| algorithm | ours, overall (seen + unseen) | ours, all applications | paper |\n\
         |---|---:|---:|---:|\n",
    );
    let pick = |n: &str| groups.iter().find(|g| g.name.starts_with(n));
    let ratio = |g: Option<&GroupResult>, k: usize| g.and_then(|g| g.totals[k].ratio());
    let (ov, all) = (pick("overall"), pick("all"));
    for (k, a) in e.algos.iter().enumerate() {
        let p = e.paper[k].map_or("-".to_string(), |v| format!("{v:.2}"));
        let _ = writeln!(
            s,
            "| {a} | {} | {} | {p} |",
            fmt_ratio(ratio(ov, k)),
            fmt_ratio(ratio(all, k))
        );
    }
    s
}

/// The report body (the caller adds the title, command and commentary).
pub fn markdown(e: &Evaluation) -> String {
    let groups = e.groups();
    let mut s = String::new();
    let _ = writeln!(
        s,
        "Block size {} bytes; split seed {}; blocks: {}. Ratio = sum of original bits / \
         sum of compressed bits. LZ4 (lz4_flex block format) and zstd (level {}) compress \
         the same evaluated blocks concatenated in file order, as one buffer per application \
         (no random access); `LZ4/block` is LZ4 on each block alone.\n",
        e.block_bytes, e.seed, e.block_set, e.zstd_level
    );
    let _ = writeln!(s, "### Bit-exact sizes\n");
    ratio_rows(e, &groups, false, &mut s);
    let _ = writeln!(
        s,
        "\n### Byte-rounded sizes (every compressed block rounded up to whole bytes)\n"
    );
    ratio_rows(e, &groups, true, &mut s);
    let wins = e.wins();
    let _ = writeln!(
        s,
        "\n### Wins\n\nApplications (of {} with evaluated blocks) on which each algorithm has \
         the best bit-exact ratio (ties count for each; context algorithms excluded):\n",
        e.apps_with_blocks()
    );
    let _ = writeln!(s, "| algorithm | wins |\n|---|---:|");
    for (k, a) in e.algos.iter().enumerate() {
        if !e.context[k] {
            let _ = writeln!(s, "| {a} | {} |", wins[k]);
        }
    }
    let mpc: Vec<usize> = (0..e.algos.len())
        .filter(|&k| e.algos[k].starts_with("MPC"))
        .collect();
    let base: Vec<usize> = (0..e.algos.len())
        .filter(|&k| !e.context[k] && !e.algos[k].starts_with("MPC"))
        .collect();
    if !mpc.is_empty() {
        let _ = writeln!(
            s,
            "\nHead to head: each MPC set alone against the baselines (applications won):\n"
        );
        let _ = write!(s, "| MPC set | MPC |");
        for &k in &base {
            let _ = write!(s, " {} |", e.algos[k]);
        }
        let _ = write!(s, "\n|---|---:|");
        for _ in &base {
            let _ = write!(s, "---:|");
        }
        let _ = writeln!(s);
        for &m in &mpc {
            let mut among = base.clone();
            among.push(m);
            let w = e.wins_among(&among);
            let _ = write!(s, "| {} | {} |", e.algos[m], w[m]);
            for &k in &base {
                let _ = write!(s, " {} |", w[k]);
            }
            let _ = writeln!(s);
        }
    }
    let _ = writeln!(s, "\n### Per application (bit-exact)\n");
    let _ = write!(s, "| application | class | role | blocks |");
    for a in &e.algos {
        let _ = write!(s, " {a} |");
    }
    let _ = writeln!(s, " LZ4 file | zstd file | best |");
    let _ = write!(s, "|---|---|---|---:|");
    for _ in &e.algos {
        let _ = write!(s, "---:|");
    }
    let _ = writeln!(s, "---:|---:|---|");
    for a in &e.apps {
        let blocks = a.totals.first().map_or(0, |t| t.blocks);
        let _ = write!(s, "| {} | {} | {} | {} |", a.file, a.class, a.role, blocks);
        let mut best: Option<(f64, &str)> = None;
        for (k, t) in a.totals.iter().enumerate() {
            let _ = write!(s, " {} |", fmt_ratio(t.ratio()));
            if let Some(r) = t.ratio().filter(|_| !e.context[k]) {
                if best.is_none_or(|b| r > b.0) {
                    best = Some((r, &e.algos[k]));
                }
            }
        }
        // The whole-file columns: the file has bytes even when it has no
        // whole evaluated block.
        let r = |c: u64| ratio_of(a.file_bytes, c, a.file_bytes);
        let _ = writeln!(
            s,
            " {} | {} | {} |",
            fmt_ratio(r(a.lz4_file_bytes)),
            fmt_ratio(r(a.zstd_file_bytes)),
            best.map_or("no blocks", |b| b.1)
        );
    }
    let _ = writeln!(
        s,
        "\n(Per-application LZ4/zstd columns here are over the whole file; in the group tables \
         over the evaluated blocks.)"
    );
    if let Some(prog) = &e.online {
        online_section(e, prog, &mut s);
    }
    s
}

/// The online protocol's section: each programmed column against its set
/// alone per group, then per application the 32-byte blocks the slots were
/// trained on and the slots each programmed column loaded.
fn online_section(e: &Evaluation, prog: &[ProgrammedInfo], s: &mut String) {
    let _ = writeln!(s, "\n### Online protocol\n");
    gains(e, prog, s);
    let _ = writeln!(
        s,
        "Samples and slots: per application, the 32-byte blocks of its first quarter (the \
         sample the slots of {} were trained on; no column measures them) and the slots the \
         trainer loaded (a slot the sample cannot fill stays unloaded and takes no model ID).\n",
        prog.iter()
            .map(ProgrammedInfo::describe)
            .collect::<Vec<_>>()
            .join(", ")
    );
    let _ = write!(s, "| application | sample blocks | evaluated blocks |");
    for p in prog {
        let _ = write!(s, " {}: slots loaded |", p.name);
    }
    let _ = write!(s, "\n|---|---:|---:|");
    for _ in prog {
        let _ = write!(s, "---:|");
    }
    let _ = writeln!(s);
    for a in &e.apps {
        let blocks = a.totals.first().map_or(0, |t| t.blocks);
        let (sample, loaded) = a
            .online
            .as_ref()
            .map_or((0, &[][..]), |x| (x.sample_blocks, &x.slots_loaded[..]));
        let _ = write!(s, "| {} | {sample} | {blocks} |", a.file);
        for (l, p) in loaded.iter().zip(prog) {
            let _ = write!(s, " {l} of {} |", p.k);
        }
        let _ = writeln!(s);
    }
}

/// Per programmed column with a column of its set alone: both bit-exact
/// ratios and the gain, per group.
fn gains(e: &Evaluation, prog: &[ProgrammedInfo], s: &mut String) {
    let col = |n: &str| e.algos.iter().position(|a| a == n);
    for p in prog {
        let (Some(base), Some(k)) = (p.base.as_deref(), col(&p.name)) else {
            continue;
        };
        let Some(h) = col(base) else {
            continue;
        };
        let _ = writeln!(
            s,
            "{} against `{base}` alone (bit-exact; gain = programmed ratio / hard-wired ratio \
             - 1):\n\n| group | blocks | {base} | {} | gain |\n|---|---:|---:|---:|---:|",
            p.describe(),
            p.name
        );
        for g in e.groups() {
            let (rh, rp) = (g.totals[h].ratio(), g.totals[k].ratio());
            let gain = match (rh, rp) {
                (Some(rh), Some(rp)) => format!("{:+.2}%", 100.0 * (rp / rh - 1.0)),
                _ => super::EMPTY_CELL.to_string(),
            };
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {gain} |",
                g.name,
                g.blocks(),
                fmt_ratio(rh),
                fmt_ratio(rp)
            );
        }
        let _ = writeln!(s);
    }
}

/// Sum of `Totals` helper for callers.
pub fn total(ts: &[Totals]) -> Totals {
    let mut t = Totals::default();
    for x in ts {
        t.add(x);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::AppResult;

    fn totals(blocks: u64, bits: u64) -> Totals {
        Totals {
            blocks,
            original_bits: 256 * blocks,
            bits,
            byte_bits: bits.div_ceil(8) * 8,
        }
    }

    fn app(file: &str, class: &str, role: &str, blocks: u64) -> AppResult {
        AppResult {
            file: file.into(),
            class: class.into(),
            role: role.into(),
            totals: vec![totals(blocks, 100 * blocks), totals(blocks, 50 * blocks)],
            file_bytes: 32 * blocks.max(2),
            lz4_file_bytes: 20,
            zstd_file_bytes: 10,
            eval_bytes: 32 * blocks,
            lz4_eval_bytes: if blocks == 0 { 0 } else { 20 },
            zstd_eval_bytes: if blocks == 0 { 0 } else { 10 },
            online: None,
        }
    }

    /// One seen int32 application with blocks, one mixed one without a
    /// whole block: unseen, floating point and mixed + workload are empty.
    fn evaluation() -> Evaluation {
        Evaluation {
            block_bytes: 128,
            seed: 1,
            block_set: "test".into(),
            algos: vec!["A".into(), "B".into()],
            paper: vec![Some(1.5), None],
            context: vec![false, false],
            zstd_level: 3,
            apps: vec![
                app("int32/a.bin", "int32", "seen", 4),
                app("mixed/m.bin", "mixed", "evaluation", 0),
            ],
            online: None,
        }
    }

    fn no_bogus(text: &str) {
        for bad in ["NaN", "inf", " 0.000", "| 0.000"] {
            assert!(!text.contains(bad), "`{bad}` in\n{text}");
        }
    }

    #[test]
    fn empty_groups_have_no_ratio() {
        let e = evaluation();
        let groups = e.groups();
        let g = |n: &str| groups.iter().find(|g| g.name.starts_with(n)).unwrap();
        assert!(g("unseen").is_empty());
        assert_eq!(g("unseen").totals[0].ratio(), None);
        assert_eq!(g("unseen").lz4_ratio, None);
        assert_eq!(g("mixed").apps, 1);
        assert!(g("mixed").is_empty());
        assert_eq!(g("mixed").zstd_ratio, None);
        assert_eq!(g("overall").totals[0].ratio(), Some(2.56));
        assert_eq!(g("overall").zstd_ratio, Some(12.8));
        assert_eq!(Totals::default().byte_ratio(), None);
    }

    #[test]
    fn the_application_without_blocks_wins_nothing() {
        let e = evaluation();
        assert_eq!(e.wins(), vec![0, 1]);
        assert_eq!(e.apps_with_blocks(), 1);
    }

    #[test]
    fn markdown_shows_empty_groups_as_dashes() {
        let e = evaluation();
        let md = markdown(&e);
        no_bogus(&md);
        assert!(md.contains("| unseen | 0 | 0 | — | — | — | — |"), "{md}");
        assert!(
            md.contains("| mixed + workload | 1 | 0 | — | — | — | — |"),
            "{md}"
        );
        assert!(
            md.contains(
                "| mixed/m.bin | mixed | evaluation | 0 | — | — | 3.200 | 6.400 | no blocks |"
            ),
            "{md}"
        );
        assert!(
            md.contains("Applications (of 1 with evaluated blocks)"),
            "{md}"
        );
    }

    #[test]
    fn console_summary_and_paper_table_say_no_blocks() {
        let e = evaluation();
        let groups = e.groups();
        let c = console_summary(&e, &groups);
        no_bogus(&c);
        let unseen = c.lines().find(|l| l.starts_with("unseen")).unwrap();
        assert!(unseen.ends_with("no blocks"), "{c}");
        let overall = c.lines().find(|l| l.starts_with("overall")).unwrap();
        assert!(overall.ends_with("A 2.560  B 5.120"), "{c}");
        let p = paper_table(&e, &groups);
        assert!(p.contains("| A | 2.560 | 2.560 | 1.50 |"), "{p}");
        // No trainable application at all: the overall column is empty.
        let mut only_mixed = evaluation();
        only_mixed.apps.remove(0);
        let p = paper_table(&only_mixed, &only_mixed.groups());
        no_bogus(&p);
        assert!(p.contains("| A | — | — | 1.50 |"), "{p}");
    }
}
