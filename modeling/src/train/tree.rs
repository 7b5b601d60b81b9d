//! Base selection: a minimum spanning tree over the ratio-entropy graph,
//! oriented away from a root, and the ratio factor 2^k of every edge
//! (docs/spec/training.md, "Base tree" and "Ratio factor").

use rayon::prelude::*;

use datafiles::corpus::{entropy_of, Block};
use golden::mpc::model::{shift_byte, ByteRule, MAX_SHIFT};
use golden::mpc::BLOCK_BYTES;

use super::re::ReStats;

/// How the two directed REs of a pair become one undirected edge weight.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EdgeWeight {
    /// `(RE(i,j) + RE(j,i)) / 2`.
    Mean,
    /// `min(RE(i,j), RE(j,i))`.
    Min,
}

/// Byte entropies within this many bits of the lowest count as equal when
/// choosing the root (sampling noise); the lowest such position wins, which
/// puts the root in word 0 for data whose words look alike.
pub const ROOT_ENTROPY_TOLERANCE: f64 = 0.05;

/// With pruning, an edge stays only when its best ratio factor makes the
/// residue at least this fraction cheaper than sending the byte itself;
/// smaller gains are sampling noise on unrelated bytes.
pub const PRUNE_MIN_GAIN: f64 = 0.01;

/// How the root of the tree is chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RootChoice {
    /// The byte position with the lowest byte-value entropy (the lowest
    /// position among those within [`ROOT_ENTROPY_TOLERANCE`]): the root's
    /// residue is the byte itself, so the cheapest byte to send.
    Entropy,
    /// The centre of the MST (minimum eccentricity): the shallowest tree.
    Centre,
}

/// What the ratio factor minimises over the training blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShiftCost {
    /// Total number of one bits in the Gray-coded residue `r ^ (r >> 1)`,
    /// i.e. the ones this byte puts into the XORed bit-planes the encoder
    /// sees.
    GrayOnes,
    /// Shannon entropy of the residue value.
    Entropy,
}

/// The undirected weight of pair (i, j).
pub fn edge_weight(re: &ReStats, w: EdgeWeight, i: usize, j: usize) -> f64 {
    let (a, b) = (re.re[i][j], re.re[j][i]);
    match w {
        EdgeWeight::Mean => 0.5 * (a + b),
        EdgeWeight::Min => a.min(b),
    }
}

/// Prim's algorithm from `root` on the complete RE graph, optionally bounded
/// in depth: each step adds the cheapest edge (ties: lower child, then lower
/// parent position) from a tree node whose depth is below `max_depth` to a
/// node outside. Without a bound this is an exact minimum spanning tree.
/// Returns `parent[i]` (`None` for the root).
pub fn prim(
    re: &ReStats,
    w: EdgeWeight,
    root: usize,
    max_depth: Option<usize>,
) -> [Option<usize>; BLOCK_BYTES] {
    let mut parent = [None; BLOCK_BYTES];
    let mut depth = [usize::MAX; BLOCK_BYTES];
    depth[root] = 0;
    for _ in 1..BLOCK_BYTES {
        let mut best: Option<(f64, usize, usize)> = None;
        for c in (0..BLOCK_BYTES).filter(|&c| depth[c] == usize::MAX) {
            for p in (0..BLOCK_BYTES).filter(|&p| depth[p] != usize::MAX) {
                if max_depth.is_some_and(|d| depth[p] >= d) {
                    continue;
                }
                let wt = edge_weight(re, w, c, p);
                let better = match best {
                    None => true,
                    Some((bw, bc, bp)) => {
                        wt.total_cmp(&bw).then(c.cmp(&bc)).then(p.cmp(&bp)).is_lt()
                    }
                };
                if better {
                    best = Some((wt, c, p));
                }
            }
        }
        // max_depth >= 1 always leaves the root as a possible parent.
        let Some((_, c, p)) = best else { break };
        parent[c] = Some(p);
        depth[c] = depth[p] + 1;
    }
    parent
}

/// Eccentricity (longest path in edges) of every node in the undirected tree
/// given by `parent`.
fn eccentricities(parent: &[Option<usize>; BLOCK_BYTES]) -> [usize; BLOCK_BYTES] {
    let mut adj = vec![Vec::new(); BLOCK_BYTES];
    for (c, p) in parent.iter().enumerate() {
        if let Some(p) = *p {
            adj[c].push(p);
            adj[p].push(c);
        }
    }
    std::array::from_fn(|s| {
        let mut dist = [usize::MAX; BLOCK_BYTES];
        dist[s] = 0;
        let mut queue = vec![s];
        let mut k = 0;
        while k < queue.len() {
            let u = queue[k];
            k += 1;
            for &v in &adj[u] {
                if dist[v] == usize::MAX {
                    dist[v] = dist[u] + 1;
                    queue.push(v);
                }
            }
        }
        dist.iter()
            .filter(|&&d| d != usize::MAX)
            .copied()
            .max()
            .unwrap_or(0)
    })
}

/// The root position under `choice` (ties: lowest position).
pub fn choose_root(re: &ReStats, w: EdgeWeight, choice: RootChoice) -> usize {
    match choice {
        RootChoice::Entropy => {
            let min = re
                .byte_entropy
                .iter()
                .copied()
                .fold(f64::INFINITY, f64::min);
            (0..BLOCK_BYTES)
                .find(|&i| re.byte_entropy[i] <= min + ROOT_ENTROPY_TOLERANCE)
                .unwrap_or(0)
        }
        RootChoice::Centre => {
            let mst = prim(re, w, 0, None);
            let ecc = eccentricities(&mst);
            (0..BLOCK_BYTES)
                .min_by(|&a, &b| {
                    ecc[a].cmp(&ecc[b]).then(
                        re.byte_entropy[a]
                            .total_cmp(&re.byte_entropy[b])
                            .then(a.cmp(&b)),
                    )
                })
                .unwrap_or(0)
        }
    }
}

/// Cost of every shift k = -7..=7 (index k + 7) of every edge, plus the cost
/// of sending the child as a root (index 15).
pub type EdgeCosts = Vec<[f64; 16]>;

/// Residue histograms of each `(child, parent)` edge for every k, turned
/// into costs.
pub fn edge_costs(blocks: &[Block], edges: &[(usize, usize)], cost: ShiftCost) -> EdgeCosts {
    const K: usize = 16;
    let n = edges.len();
    let zero = || vec![0u64; n * K * 256];
    let hist = blocks
        .par_chunks(16384)
        .map(|chunk| {
            let mut h = vec![0u32; n * K * 256];
            for b in chunk {
                for (e, &(c, p)) in edges.iter().enumerate() {
                    let (dc, dp) = (b[c], b[p]);
                    let base = e * K * 256;
                    for k in -MAX_SHIFT..=MAX_SHIFT {
                        let r = dc.wrapping_sub(shift_byte(dp, k));
                        h[base + (k + MAX_SHIFT) as usize * 256 + r as usize] += 1;
                    }
                    h[base + 15 * 256 + dc as usize] += 1;
                }
            }
            h.into_iter().map(u64::from).collect::<Vec<_>>()
        })
        .reduce(zero, |mut a, b| {
            for (x, y) in a.iter_mut().zip(&b) {
                *x += y;
            }
            a
        });
    (0..n)
        .map(|e| {
            std::array::from_fn(|k| {
                let h = &hist[(e * K + k) * 256..][..256];
                match cost {
                    ShiftCost::GrayOnes => h
                        .iter()
                        .enumerate()
                        .map(|(r, &c)| c as f64 * ((r ^ (r >> 1)) as u8).count_ones() as f64)
                        .sum(),
                    ShiftCost::Entropy => entropy_of(h),
                }
            })
        })
        .collect()
}

/// The best shift of one edge's costs: the lowest cost, ties to the smaller
/// |k|, then to the positive k.
pub fn best_shift(costs: &[f64; 16]) -> i8 {
    let mut ks: Vec<i8> = (-MAX_SHIFT..=MAX_SHIFT).collect();
    ks.sort_by(|&a, &b| {
        costs[(a + MAX_SHIFT) as usize]
            .total_cmp(&costs[(b + MAX_SHIFT) as usize])
            .then(a.abs().cmp(&b.abs()))
            .then(b.cmp(&a))
    });
    ks[0]
}

/// The byte rules of a tree: each non-root byte takes its parent as base
/// with the best shift; with `prune`, a byte whose best residue costs no
/// less than the byte itself becomes a root (lower depth, no loss).
pub fn byte_rules(
    parent: &[Option<usize>; BLOCK_BYTES],
    blocks: &[Block],
    cost: ShiftCost,
    prune: bool,
) -> [ByteRule; BLOCK_BYTES] {
    let edges: Vec<(usize, usize)> = parent
        .iter()
        .enumerate()
        .filter_map(|(c, p)| p.map(|p| (c, p)))
        .collect();
    let costs = edge_costs(blocks, &edges, cost);
    let mut rules = [ByteRule::Root; BLOCK_BYTES];
    for (&(c, p), cs) in edges.iter().zip(&costs) {
        let k = best_shift(cs);
        if prune && cs[(k + MAX_SHIFT) as usize] >= cs[15] * (1.0 - PRUNE_MIN_GAIN) {
            continue;
        }
        rules[c] = ByteRule::Base {
            base: p as u8,
            shift: k,
        };
    }
    rules
}

/// Re-root every tree of a forest (given by `rules`) at its own best root
/// under [`RootChoice::Entropy`] (the lowest-entropy node of the component,
/// lowest position among near-ties), orienting edges away from it. Returns
/// the new parent array; shifts must be chosen again for it.
pub fn reroot(re: &ReStats, rules: &[ByteRule; BLOCK_BYTES]) -> [Option<usize>; BLOCK_BYTES] {
    let mut adj = vec![Vec::new(); BLOCK_BYTES];
    for (c, r) in rules.iter().enumerate() {
        if let ByteRule::Base { base, .. } = *r {
            adj[c].push(base as usize);
            adj[base as usize].push(c);
        }
    }
    for a in adj.iter_mut() {
        a.sort_unstable();
    }
    let mut comp = [usize::MAX; BLOCK_BYTES];
    let mut parent = [None; BLOCK_BYTES];
    for start in 0..BLOCK_BYTES {
        if comp[start] != usize::MAX {
            continue;
        }
        // Collect the component.
        let mut nodes = vec![start];
        comp[start] = start;
        let mut k = 0;
        while k < nodes.len() {
            let u = nodes[k];
            k += 1;
            for &v in &adj[u] {
                if comp[v] == usize::MAX {
                    comp[v] = start;
                    nodes.push(v);
                }
            }
        }
        nodes.sort_unstable();
        let min = nodes
            .iter()
            .map(|&i| re.byte_entropy[i])
            .fold(f64::INFINITY, f64::min);
        let root = nodes
            .iter()
            .copied()
            .find(|&i| re.byte_entropy[i] <= min + ROOT_ENTROPY_TOLERANCE)
            .unwrap_or(start);
        // Orient away from the root.
        let mut seen = [false; BLOCK_BYTES];
        seen[root] = true;
        let mut queue = vec![root];
        let mut k = 0;
        while k < queue.len() {
            let u = queue[k];
            k += 1;
            for &v in &adj[u] {
                if !seen[v] {
                    seen[v] = true;
                    parent[v] = Some(u);
                    queue.push(v);
                }
            }
        }
    }
    parent
}
