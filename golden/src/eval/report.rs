//! The Markdown report of an [`Evaluation`].

use std::fmt::Write;

use super::{Evaluation, GroupResult, Totals};

fn f3(v: f64) -> String {
    if v == 0.0 {
        "-".into()
    } else {
        format!("{v:.3}")
    }
}

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
        let blocks = g.totals.first().map_or(0, |t| t.blocks);
        let _ = write!(out, "| {} | {} | {} |", g.name, g.apps, blocks);
        for t in &g.totals {
            let r = if byte { t.byte_ratio() } else { t.ratio() };
            let _ = write!(out, " {} |", f3(r));
        }
        let _ = writeln!(out, " {} | {} |", f3(g.lz4_ratio), f3(g.zstd_ratio));
    }
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
        "\n### Wins\n\nApplications (of {}) on which each algorithm has the best bit-exact \
         ratio (ties count for each; context algorithms excluded):\n",
        e.apps.len()
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
        let mut best = (0.0, String::new());
        for (k, t) in a.totals.iter().enumerate() {
            let _ = write!(s, " {} |", f3(t.ratio()));
            if !e.context[k] && t.ratio() > best.0 {
                best = (t.ratio(), e.algos[k].clone());
            }
        }
        let r = |c: u64| {
            if c == 0 {
                0.0
            } else {
                a.file_bytes as f64 / c as f64
            }
        };
        let _ = writeln!(
            s,
            " {} | {} | {} |",
            f3(r(a.lz4_file_bytes)),
            f3(r(a.zstd_file_bytes)),
            best.1
        );
    }
    let _ = writeln!(
        s,
        "\n(Per-application LZ4/zstd columns here are over the whole file; in the group tables \
         over the evaluated blocks.)"
    );
    s
}

/// Sum of `Totals` helper for callers.
pub fn total(ts: &[Totals]) -> Totals {
    let mut t = Totals::default();
    for x in ts {
        t.add(x);
    }
    t
}
