//! `report.md` of a trained model set.

use std::fmt::Write;

use crate::eval::{fmt_ratio, EMPTY_CELL};
use datafiles::corpus::{AppRole, Corpus, Split};
use golden::mpc::model::ByteRule;
use golden::mpc::{ModelSet, BLOCK_BYTES, SYMBOLS};

use super::eval::{Summary, Tally};
use super::{depths, Group, TrainedPredictor};

/// The paper's figures (Jin et al. 2022, section 4).
pub const PAPER: [(&str, f64); 5] = [
    ("seen", 2.31),
    ("unseen", 2.06),
    ("overall", 2.26),
    ("integer", 2.87),
    ("floating point", 2.09),
];

/// A model set evaluated for comparison (e.g. `models/example`).
pub struct Compared<'a> {
    pub name: String,
    pub tallies: &'a [Tally],
}

/// A tally's ratio, or `—` for an empty one.
fn r(t: &Tally) -> String {
    fmt_ratio(t.ratio())
}

/// One line of the paper's aggregates: `label ratio` per test set, `no
/// blocks` for an empty one (e.g. no unseen application in a small corpus).
pub fn summary_line(sum: &Summary) -> String {
    let parts = [
        ("seen", &sum.seen),
        ("unseen", &sum.unseen),
        ("overall", &sum.overall),
        ("int", &sum.int),
        ("fp", &sum.fp),
        ("mixed/workload", &sum.evaluation),
    ];
    parts
        .iter()
        .map(|(label, t)| match t.ratio() {
            Some(v) => format!("{label} {v:.3}"),
            None => format!("{label}: no blocks"),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The tree of a predictor, one line per non-root byte, in restore order.
pub fn tree_listing(p: &golden::mpc::Predictor) -> String {
    let d = depths(p);
    let mut order: Vec<usize> = (0..BLOCK_BYTES).collect();
    order.sort_by_key(|&i| (d[i], i));
    let mut s = String::new();
    let roots: Vec<String> = order
        .iter()
        .filter(|&&i| p.bytes[i] == ByteRule::Root)
        .map(|i| i.to_string())
        .collect();
    let _ = writeln!(s, "roots: {}", roots.join(", "));
    for &i in &order {
        if let ByteRule::Base { base, shift } = p.bytes[i] {
            let _ = writeln!(
                s,
                "byte {i:2} <- byte {base:2} (k={shift:+}, depth {})",
                d[i]
            );
        }
    }
    s
}

/// Everything the report shows.
pub struct ReportInput<'a> {
    pub set: &'a ModelSet,
    pub trained: &'a [TrainedPredictor],
    pub corpus: &'a Corpus,
    pub split: &'a Split,
    pub tallies: &'a [Tally],
    pub compared: &'a [Compared<'a>],
    /// Command line that reproduces the set.
    pub command: &'a str,
    /// Heatmap file names per predictor (same order).
    pub heatmaps: &'a [String],
    /// Optional depth sweep: (max depth, ratio overall) lines.
    pub extra: &'a str,
}

pub fn render(inp: &ReportInput<'_>) -> String {
    let set = inp.set;
    let (corpus, split) = (inp.corpus, inp.split);
    let mut s = String::new();
    let w = &mut s;
    let _ = writeln!(w, "# Model set `{}`\n", set.name);
    let _ = writeln!(
        w,
        "Trained by `train` {} (docs/spec/training.md). Selection `{}`; custom models: \
         zero-block {}, same-words {}; {} predictors; {} model IDs, {}-bit header.\n",
        set.provenance.tool_version,
        set.selection,
        set.custom.zero_block,
        set.custom.same_words,
        set.predictors.len(),
        set.id_count(),
        set.header_bits()
    );
    let _ = writeln!(w, "Reproduce:\n\n```\n{}\n```\n", inp.command);
    let _ = writeln!(
        w,
        "Ratios are sum of original bits / sum of compressed bits (header included), \
         measured with the golden `MpcCodec` on the test blocks only (never on blocks that \
         trained). **Our corpus is not the paper's**: the paper measured GPGPU-Sim LLC-DRAM \
         traffic of 59 GPU applications; we use 22 single-type files of real data plus 6 \
         mixed/workload images (/work/shared/corpus), so the paper's figures are context, not \
         a target.\n"
    );
    let sum = Summary::of(corpus, split, inp.tallies);
    let csum: Vec<Summary> = inp
        .compared
        .iter()
        .map(|c| Summary::of(corpus, split, c.tallies))
        .collect();
    let _ = write!(
        w,
        "## Compression ratio\n\n| test set | blocks | `{}` |",
        set.name
    );
    for c in inp.compared {
        let _ = write!(w, " `{}` |", c.name);
    }
    let _ = writeln!(w, " paper |");
    let _ = write!(w, "|---|---:|---:|");
    for _ in inp.compared {
        let _ = write!(w, "---:|");
    }
    let _ = writeln!(w, "---:|");
    type Row = (&'static str, fn(&Summary) -> &Tally, Option<f64>);
    let rows: [Row; 6] = [
        ("seen", |s| &s.seen, Some(PAPER[0].1)),
        ("unseen", |s| &s.unseen, Some(PAPER[1].1)),
        ("overall (seen + unseen)", |s| &s.overall, Some(PAPER[2].1)),
        ("integer (int8..int64)", |s| &s.int, Some(PAPER[3].1)),
        ("floating point (fp16..fp64)", |s| &s.fp, Some(PAPER[4].1)),
        ("mixed + workload", |s| &s.evaluation, None),
    ];
    for (label, get, paper) in rows {
        let _ = write!(w, "| {label} | {} | {} |", get(&sum).blocks, r(get(&sum)));
        for c in &csum {
            let _ = write!(w, " {} |", r(get(c)));
        }
        let _ = writeln!(
            w,
            " {} |",
            paper.map_or_else(|| "-".to_string(), |p| format!("{p:.2}"))
        );
    }
    // Per group (the predictors' groups and every class).
    let _ = write!(
        w,
        "\n## Per group (seen + unseen test blocks)\n\n| group | classes | `{}` |",
        set.name
    );
    for c in inp.compared {
        let _ = write!(w, " `{}` |", c.name);
    }
    let _ = writeln!(w);
    let _ = write!(w, "|---|---|---:|");
    for _ in inp.compared {
        let _ = write!(w, "---:|");
    }
    let _ = writeln!(w);
    let mut groups: Vec<Group> = super::extended_groups();
    for t in inp.trained {
        if !groups.iter().any(|g| g.classes == t.group.classes) {
            groups.push(t.group.clone());
        }
    }
    for g in &groups {
        let t = Summary::classes(corpus, split, inp.tallies, &g.classes);
        if t.blocks == 0 {
            continue;
        }
        let _ = write!(w, "| {} | {} | {} |", g.name, g.classes.join("+"), r(&t));
        for c in inp.compared {
            let _ = write!(
                w,
                " {} |",
                r(&Summary::classes(corpus, split, c.tallies, &g.classes))
            );
        }
        let _ = writeln!(w);
    }
    // Per application.
    let _ = write!(
        w,
        "\n## Per application\n\nEntropy: bits per byte over the blocks that are neither \
         all-zero nor all-words-same (the split's sort key); rank in descending order among \
         trainable applications; every 4th is unseen, except that a class always keeps one training application (the slot passes to the next).\n\n\
         | file | class | role | entropy | rank | test blocks | `{}` |",
        set.name
    );
    for c in inp.compared {
        let _ = write!(w, " `{}` |", c.name);
    }
    let _ = writeln!(w);
    let _ = write!(w, "|---|---|---|---:|---:|---:|---:|");
    for _ in inp.compared {
        let _ = write!(w, "---:|");
    }
    let _ = writeln!(w);
    for (a, t) in inp.tallies.iter().enumerate() {
        let e = &corpus.apps[a].entry;
        let sp = &split.apps[a];
        let _ = write!(
            w,
            "| {} | {} | {} | {:.3} | {} | {} | {} |",
            e.file,
            e.class,
            sp.role,
            sp.entropy,
            sp.rank.map_or_else(|| "-".to_string(), |k| k.to_string()),
            t.blocks,
            r(t)
        );
        for c in inp.compared {
            let _ = write!(w, " {} |", r(&c.tallies[a]));
        }
        let _ = writeln!(w);
    }
    // Model use.
    let mut all = Tally::default();
    for (a, t) in inp.tallies.iter().enumerate() {
        if split.apps[a].role != AppRole::Evaluation {
            all.add(t);
        }
    }
    let _ = writeln!(
        w,
        "\n## Model use (seen + unseen test blocks)\n\n| ID | model | blocks | share |\n|---:|---|---:|---:|"
    );
    for (id, &n) in all.model_use.iter().enumerate() {
        let share = if all.blocks == 0 {
            EMPTY_CELL.to_string()
        } else {
            format!("{:.1}%", 100.0 * n as f64 / all.blocks as f64)
        };
        let _ = writeln!(w, "| {id} | {} | {n} | {share} |", set.id_name(id as u32));
    }
    // Predictors.
    let _ = writeln!(w, "\n## Predictors\n");
    for (k, t) in inp.trained.iter().enumerate() {
        let p = &t.predictor;
        let _ = writeln!(
            w,
            "### `{}` (classes {}; {} training blocks after dropping all-zero/same-words, \
             statistics on {}; root byte {}; depth {})\n",
            p.name,
            t.group.classes.join("+"),
            t.train_blocks,
            t.stats.blocks,
            t.root,
            p.depth()
        );
        if let Some(h) = inp.heatmaps.get(k) {
            let _ = writeln!(
                w,
                "![RE matrix of {}]({h})\n\nRatio entropy RE(i, j) (row i = byte predicted, \
                 column j = base), bits; bright = low (good base), scale 0..log2(18).\n",
                p.name
            );
        }
        let _ = writeln!(w, "```\n{}```\n", tree_listing(p));
        let _ = writeln!(
            w,
            "Byte-value entropy per position (bits): {}\n",
            t.stats
                .byte_entropy
                .iter()
                .map(|e| format!("{e:.2}"))
                .collect::<Vec<_>>()
                .join(" ")
        );
        let _ = writeln!(
            w,
            "Reorder, symbol by symbol (natural index n = 32*(7-p)+j: plane p, byte j):\n\n```"
        );
        for m in 0..SYMBOLS {
            let bits: Vec<String> = p.reorder[16 * m..16 * m + 16]
                .iter()
                .map(|&n| format!("p{}b{}", 7 - n / 32, n % 32))
                .collect();
            let _ = writeln!(w, "sym {m:2}: {}", bits.join(" "));
        }
        let _ = writeln!(w, "```\n");
    }
    if !inp.extra.is_empty() {
        let _ = writeln!(w, "{}", inp.extra);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tally(blocks: u64) -> Tally {
        Tally {
            blocks,
            orig_bits: 256 * blocks,
            comp_bits: 128 * blocks,
            model_use: vec![blocks],
        }
    }

    #[test]
    fn summary_line_names_empty_test_sets() {
        let sum = Summary {
            seen: tally(10),
            unseen: Tally::default(),
            overall: tally(10),
            int: tally(10),
            fp: Tally::default(),
            evaluation: Tally::default(),
        };
        let line = summary_line(&sum);
        assert_eq!(
            line,
            "seen 2.000, unseen: no blocks, overall 2.000, int 2.000, fp: no blocks, \
             mixed/workload: no blocks"
        );
        assert_eq!(r(&Tally::default()), "—");
        assert_eq!(r(&tally(3)), "2.000");
    }
}
