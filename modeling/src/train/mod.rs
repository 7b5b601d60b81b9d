//! Training of MPC prediction models from memory data (paper sections 2.3,
//! 3.1, 3.2; docs/spec/training.md):
//!
//! 1. [`re`]: ratio entropy of every ordered byte pair;
//! 2. [`tree`]: minimum spanning tree over the RE graph, a root, edges
//!    oriented away from it, a ratio factor 2^k per edge;
//! 3. [`reorder`]: the transformer permutation from joint zero statistics;
//! 4. [`eval`]: compression ratios with the golden codec on the split's test
//!    sets; [`report`] and [`heatmap`] write `report.md` and the pictures.

pub mod cluster;
pub mod eval;
pub mod heatmap;
pub mod re;
pub mod reorder;
pub mod report;
pub mod tree;

use datafiles::corpus::{is_custom_block, Block, Corpus, Split, KNOWN_CLASSES};
use golden::mpc::model::{ByteRule, CustomModels, ModelSet, Predictor, Provenance, Selection};
use golden::mpc::{BLOCK_BYTES, STREAM_BITS};

pub use re::ReStats;
pub use tree::{EdgeWeight, RootChoice, ShiftCost};

/// A training problem.
#[derive(Debug, thiserror::Error)]
pub enum TrainError {
    #[error(
        "group `{group}` (classes {classes}) has no training blocks: {why}; \
         check the class names against the manifest"
    )]
    EmptyGroup {
        group: String,
        classes: String,
        why: String,
    },
    #[error("bad group specification {spec:?}: {problem}")]
    GroupSpec { spec: String, problem: String },
    #[error("no groups to train: a model set needs at least one predictor")]
    NoGroups,
    #[error(
        "the corpus has no trainable application: all {apps} of its files are of the \
         evaluation-only classes {classes}; training needs files of int8..fp64"
    )]
    NothingTrainable { apps: usize, classes: String },
    #[error("max depth must be at least 1 (0 would make every byte a root)")]
    ZeroDepth,
}

/// A data-type group: one predictor is trained per group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    pub name: String,
    pub classes: Vec<String>,
}

impl Group {
    pub fn new(name: &str, classes: &[&str]) -> Group {
        Group {
            name: name.to_string(),
            classes: classes.iter().map(|c| c.to_string()).collect(),
        }
    }
}

/// The paper's five groups (INT8/bool, INT16, INT32/INT64, FP32, FP64).
pub fn paper_groups() -> Vec<Group> {
    vec![
        Group::new("int8", &["int8"]),
        Group::new("int16", &["int16"]),
        Group::new("int32-64", &["int32", "int64"]),
        Group::new("fp32", &["fp32"]),
        Group::new("fp64", &["fp64"]),
    ]
}

/// The paper's groups plus FP16 and BF16.
pub fn extended_groups() -> Vec<Group> {
    let mut g = paper_groups();
    g.push(Group::new("fp16", &["fp16"]));
    g.push(Group::new("bf16", &["bf16"]));
    g
}

/// Parse `NAME=CLASS[+CLASS...]` items separated by commas; a bare `CLASS`
/// is a group of that one class.
pub fn parse_groups(spec: &str) -> Result<Vec<Group>, TrainError> {
    let bad = |problem: String| TrainError::GroupSpec {
        spec: spec.to_string(),
        problem,
    };
    let mut out: Vec<Group> = Vec::new();
    for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (name, classes) = item.split_once('=').unwrap_or((item, item));
        let name = name.trim();
        if name.is_empty() {
            return Err(bad(format!("empty group name in {item:?}")));
        }
        let classes: Vec<String> = classes
            .split('+')
            .map(|c| c.trim().to_string())
            .filter(|c| !c.is_empty())
            .collect();
        if classes.is_empty() {
            return Err(bad(format!("group {name:?} lists no classes")));
        }
        for c in &classes {
            if !KNOWN_CLASSES.contains(&c.as_str()) {
                return Err(bad(format!(
                    "unknown class {c:?}; expected one of {}",
                    KNOWN_CLASSES.join(", ")
                )));
            }
            if datafiles::corpus::EVALUATION_ONLY_CLASSES.contains(&c.as_str()) {
                return Err(bad(format!(
                    "class {c:?} holds several data types and is evaluation-only"
                )));
            }
        }
        if out.iter().any(|g| g.name == name) {
            return Err(bad(format!("group {name:?} given twice")));
        }
        out.push(Group {
            name: name.to_string(),
            classes,
        });
    }
    if out.is_empty() {
        return Err(TrainError::NoGroups);
    }
    Ok(out)
}

/// Training options (defaults: docs/spec/training.md).
#[derive(Clone, Debug)]
pub struct TrainOptions {
    pub edge_weight: EdgeWeight,
    pub root: RootChoice,
    pub shift_cost: ShiftCost,
    /// Make a byte a root when no shift of its base beats sending it as is.
    pub prune: bool,
    /// Longest base chain allowed (None: unbounded MST).
    pub max_depth: Option<usize>,
    /// Most blocks for the RE and shift statistics (evenly spaced sample).
    pub stats_sample: usize,
    /// Most blocks for the reorder statistics.
    pub reorder_sample: usize,
    /// Train the reorder (false: identity, for ablation).
    pub train_reorder: bool,
}

impl Default for TrainOptions {
    fn default() -> Self {
        TrainOptions {
            edge_weight: EdgeWeight::Mean,
            root: RootChoice::Entropy,
            shift_cost: ShiftCost::GrayOnes,
            prune: true,
            max_depth: None,
            stats_sample: 1 << 19,
            reorder_sample: 1 << 16,
            train_reorder: true,
        }
    }
}

/// `max` blocks evenly spaced over `blocks` (all when there are fewer).
pub fn even_sample(blocks: &[Block], max: usize) -> Vec<Block> {
    let n = blocks.len();
    if n <= max {
        return blocks.to_vec();
    }
    (0..max).map(|k| blocks[k * n / max]).collect()
}

/// One trained predictor with what it was trained from.
#[derive(Clone, Debug)]
pub struct TrainedPredictor {
    pub predictor: Predictor,
    pub group: Group,
    pub stats: ReStats,
    /// Training blocks (after removing all-zero and all-words-same blocks).
    pub train_blocks: usize,
    /// Root chosen for the tree.
    pub root: usize,
}

/// Train one predictor from `blocks` (custom-model blocks are dropped
/// first: the zero-block and same-words models take those).
pub fn train_predictor(
    name: &str,
    blocks: &[Block],
    opts: &TrainOptions,
) -> Result<TrainedPredictor, TrainError> {
    if opts.max_depth == Some(0) {
        return Err(TrainError::ZeroDepth);
    }
    let useful: Vec<Block> = blocks
        .iter()
        .filter(|b| !is_custom_block(b))
        .copied()
        .collect();
    if useful.is_empty() {
        return Err(TrainError::EmptyGroup {
            group: name.to_string(),
            classes: "-".to_string(),
            why: if blocks.is_empty() {
                "no blocks given".to_string()
            } else {
                "every block is all-zero or all-words-same".to_string()
            },
        });
    }
    let sample = even_sample(&useful, opts.stats_sample);
    let stats = re::ratio_entropy(&sample);
    let root = tree::choose_root(&stats, opts.edge_weight, opts.root);
    let parent = tree::prim(&stats, opts.edge_weight, root, opts.max_depth);
    let mut bytes = tree::byte_rules(&parent, &sample, opts.shift_cost, opts.prune);
    if opts.prune && bytes.iter().filter(|r| **r == ByteRule::Root).count() > 1 {
        // Pruning split the tree: root every part at its own cheapest byte.
        let parent2 = tree::reroot(&stats, &bytes);
        let bytes2 = tree::byte_rules(&parent2, &sample, opts.shift_cost, false);
        let p2 = Predictor {
            name: String::new(),
            bytes: bytes2,
            reorder: [0; STREAM_BITS],
        };
        if opts.max_depth.is_none_or(|d| p2.depth() <= d) {
            bytes = bytes2;
        }
    }
    let mut predictor = Predictor {
        name: name.to_string(),
        bytes,
        reorder: std::array::from_fn(|o| o as u8),
    };
    let rs = even_sample(&useful, opts.reorder_sample);
    if opts.train_reorder {
        predictor.reorder = reorder::train_reorder(&rs, &predictor);
    }
    Ok(TrainedPredictor {
        predictor,
        group: Group {
            name: name.to_string(),
            classes: Vec::new(),
        },
        stats,
        train_blocks: useful.len(),
        root,
    })
}

/// Train the predictor of `group` from the split's training blocks.
pub fn train_group(
    corpus: &Corpus,
    split: &Split,
    group: &Group,
    opts: &TrainOptions,
) -> Result<TrainedPredictor, TrainError> {
    let blocks = split.train_blocks(corpus, &group.classes);
    let empty = |why: String| TrainError::EmptyGroup {
        group: group.name.clone(),
        classes: group.classes.join("+"),
        why,
    };
    if blocks.is_empty() {
        let in_corpus = corpus
            .apps
            .iter()
            .filter(|a| group.classes.contains(&a.entry.class))
            .count();
        return Err(empty(if in_corpus == 0 {
            "the corpus has no application of these classes".to_string()
        } else {
            format!("all {in_corpus} application(s) of these classes are unseen test data")
        }));
    }
    let mut t = train_predictor(&group.name, &blocks, opts).map_err(|e| match e {
        TrainError::EmptyGroup { why, .. } => empty(why),
        other => other,
    })?;
    t.group = group.clone();
    Ok(t)
}

/// How a model set is assembled.
#[derive(Clone, Debug)]
pub struct SetSpec {
    pub name: String,
    pub groups: Vec<Group>,
    pub selection: Selection,
    pub custom: CustomModels,
    pub date: String,
    pub seed: u64,
    /// Train K predictors without labels ([`cluster`]) instead of one per
    /// group: from the training blocks of every trainable application.
    pub cluster: Option<cluster::ClusterOptions>,
}

/// Human-readable description of the options, for provenance.
pub fn describe_options(opts: &TrainOptions) -> String {
    format!(
        "RE with a zero byte counted as 1/2; MST edge weight {:?}; root {:?}; shift cost {:?}; \
         prune {}; max depth {}; stats sample {} blocks, reorder sample {} blocks; \
         reorder {}",
        opts.edge_weight,
        opts.root,
        opts.shift_cost,
        opts.prune,
        opts.max_depth
            .map_or_else(|| "unbounded".to_string(), |d| d.to_string()),
        opts.stats_sample,
        opts.reorder_sample,
        if opts.train_reorder {
            "greedy joint-zero"
        } else {
            "identity"
        },
    )
}

/// Train every group of `spec` and assemble the model set with provenance.
pub fn train_set(
    corpus: &Corpus,
    split: &Split,
    spec: &SetSpec,
    opts: &TrainOptions,
    mut progress: impl FnMut(&str),
) -> Result<(ModelSet, Vec<TrainedPredictor>), TrainError> {
    if spec.groups.is_empty() && spec.cluster.is_none() {
        return Err(TrainError::NoGroups);
    }
    if !corpus.apps.iter().any(|a| a.entry.trainable()) {
        return Err(TrainError::NothingTrainable {
            apps: corpus.apps.len(),
            classes: datafiles::corpus::EVALUATION_ONLY_CLASSES.join("/"),
        });
    }
    let mut trained = Vec::with_capacity(spec.groups.len());
    let mut classes: Vec<String>;
    let mut steps = Vec::new();
    if let Some(c) = &spec.cluster {
        // every trainable class, labels otherwise unused
        classes = corpus
            .apps
            .iter()
            .filter(|a| a.entry.trainable())
            .map(|a| a.entry.class.clone())
            .collect();
        classes.sort();
        classes.dedup();
        let blocks = split.train_blocks(corpus, &classes);
        let (t, s) = cluster::train_clustered("p", &blocks, opts, c, |s| {
            progress(&format!(
                "{}: {} predictors, sample at {:.4} of its size",
                s.kind,
                s.predictors,
                s.bits as f64 / (256.0 * s.blocks.max(1) as f64)
            ))
        })?;
        trained = t;
        steps = s;
    } else {
        for g in &spec.groups {
            progress(&format!("group {}", g.name));
            trained.push(train_group(corpus, split, g, opts)?);
        }
        classes = spec
            .groups
            .iter()
            .flat_map(|g| g.classes.iter().cloned())
            .collect();
        classes.dedup();
    }
    let how = match &spec.cluster {
        Some(c) => format!(
            "Predictors: {} found without labels (docs/spec/training.md, \"Training without \
             labels\"): split of the cluster with the most coded bits, then up to {} rounds of \
             assigning every block to its shortest predictor and retraining, on an evenly \
             spaced sample of at most {} training blocks; steps (kind, predictors, bits per \
             256 of the sample): {}",
            c.k,
            c.rounds,
            c.sample,
            steps
                .iter()
                .map(|s| format!(
                    "{} {} {:.4}",
                    s.kind,
                    s.predictors,
                    s.bits as f64 / (256.0 * s.blocks.max(1) as f64)
                ))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        None => format!(
            "Groups: {}",
            spec.groups
                .iter()
                .map(|g| format!("{}={}", g.name, g.classes.join("+")))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let train_files: Vec<String> = split
        .apps
        .iter()
        .filter(|s| !s.train.is_empty())
        .map(|s| &corpus.apps[s.app].entry)
        .filter(|e| classes.contains(&e.class))
        .map(|e| format!("{} ({})", e.file, e.sha256_16))
        .collect();
    let set = ModelSet {
        name: spec.name.clone(),
        selection: spec.selection,
        custom: spec.custom,
        predictors: trained.iter().map(|t| t.predictor.clone()).collect(),
        provenance: Provenance {
            tool: "train".to_string(),
            tool_version: env!("CARGO_PKG_VERSION").to_string(),
            date: spec.date.clone(),
            corpus: format!(
                "MANIFEST.tsv, {} applications; trained on 80% of the blocks of: {}",
                corpus.apps.len(),
                train_files.join(", ")
            ),
            classes,
            notes: format!(
                "Split: paper protocol over all trainable applications (classes other than \
                 mixed/workload), sorted by byte-value entropy of their non-zero, \
                 non-same-words blocks, descending; every 4th is unseen; 80/20 seeded block \
                 split (SplitMix64, seed {}) of the rest. Roles: {}. {}. Options: {}. \
                 See docs/spec/training.md.",
                spec.seed,
                split.describe(corpus),
                how,
                describe_options(opts),
            ),
        },
    };
    Ok((set, trained))
}

/// Depth of every byte position in a predictor's base forest.
pub fn depths(p: &Predictor) -> [usize; BLOCK_BYTES] {
    std::array::from_fn(|i| {
        let mut d = 0;
        let mut cur = i;
        while let ByteRule::Base { base, .. } = p.bytes[cur] {
            cur = base as usize;
            d += 1;
            if d > BLOCK_BYTES {
                break;
            }
        }
        d
    })
}

/// Check a permutation (for tests and debug assertions).
pub fn is_permutation(r: &[u8; STREAM_BITS]) -> bool {
    let mut seen = [false; STREAM_BITS];
    r.iter()
        .all(|&v| !std::mem::replace(&mut seen[v as usize], true))
}
