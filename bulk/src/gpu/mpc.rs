//! MPC kernels of the GPU engine (`wgsl/mpc_compress.wgsl`,
//! `wgsl/mpc_decompress.wgsl`), bit-exact with [`golden::mpc::MpcCodec`]:
//! both selection rules, the custom models, the raw escape and the
//! decoder's checks (`docs/spec/mpc.md`).
//!
//! The kernels do word code only: the prediction byte by byte from the
//! block's words, residues and the Gray code four bytes to a word, the
//! transpose to bit planes and the reorder as one Beneš network of 15
//! masked delta swaps on eight 32-bit words ([`super::benes`]), the
//! Table-1 codes chosen with selects and written through a 32-bit
//! accumulator. Per predictor the tables hold [`PREDICTOR_WORDS`] words:
//! 32 byte rules (base in bits 0..7, 32 for a root; `8 + shift` in bits
//! 8..11), the forward network (residue bits to symbol bits, 15 x 8 mask
//! words), the inverse network, and the restore order (32 bytes, every
//! byte after its base).
//!
//! Model sets whose tables fit a uniform binding (up to 14 predictors) get
//! kernels specialised for them: the compress kernel's loop over the
//! predictors written as one call per predictor (every table offset a
//! constant), its selection rule a constant, and the prediction (compress)
//! and the restoration (decompress) written as one WGSL function per
//! predictor with its byte rules as constants. Larger sets run the generic
//! source, its tables in a storage buffer; both give the same output.

use super::benes;
use super::uniform::MpcUniform;
use super::GpuAlgo;
use crate::BulkError;
use golden::mpc::{ByteRule, ModelSet, Selection, BLOCK_BYTES, STREAM_BITS};

/// Table words per predictor.
pub const PREDICTOR_WORDS: usize = 32 + 2 * 8 * benes::STAGES + 8;

/// Index of natural-stream bit `n` (plane `7 - n / 32` of byte `n % 32`)
/// in the residue layout: bit `8 * byte + plane`.
fn residue_index(n: usize) -> usize {
    8 * (n % 32) + 7 - n / 32
}

/// Index of stream bit `o` in the symbol layout: symbol `o / 16` in bits
/// `16 * (o / 16) ..`, its first bit in the MSB.
fn lane_index(o: usize) -> usize {
    16 * (o / 16) + 15 - o % 16
}

/// Largest tables bound as a uniform array (bytes): the smallest
/// uniform binding WebGPU guarantees. Larger model sets (more than 14
/// predictors) read them from a storage buffer.
pub const UNIFORM_TABLES_MAX: usize = 16 << 10;

/// WGSL of the compress kernel (without the bit-writer prelude).
pub const COMPRESS_WGSL: &str = include_str!("wgsl/mpc_compress.wgsl");
/// WGSL of the decompress kernel (without the bit-reader prelude).
pub const DECOMPRESS_WGSL: &str = include_str!("wgsl/mpc_decompress.wgsl");

fn pack_bytes(bytes: &[u8]) -> impl Iterator<Item = u32> + '_ {
    bytes
        .chunks(4)
        .map(|c| c.iter().rev().fold(0u32, |acc, &b| (acc << 8) | b as u32))
}

const TABLES_BEGIN: &str = "// @tables-begin";
const TABLES_END: &str = "// @tables-end";

/// `src` with its tables bound as a uniform array of `vec4s` vectors.
fn uniform_tables(src: &str, vec4s: usize) -> Result<String, BulkError> {
    let (Some(a), Some(b)) = (src.find(TABLES_BEGIN), src.find(TABLES_END)) else {
        return Err(BulkError::Gpu(
            "mpc kernel source lacks its tables section".into(),
        ));
    };
    Ok(format!(
        "{}// tables as a uniform array
@group(0) @binding(1) var<uniform> tables: array<vec4<u32>, {vec4s}>;
fn tab(p: u32, v: u32) -> vec4<u32> {{
    return tables[p * {}u + v];
}}
fn tword(i: u32) -> u32 {{
    return tables[i >> 2u][i & 3u];
}}
{}",
        &src[..a],
        PREDICTOR_WORDS / 4,
        &src[b + TABLES_END.len()..]
    ))
}

const CANDIDATES_BEGIN: &str = "// @candidates-begin";
const CANDIDATES_END: &str = "// @candidates-end";

const EXACT: &str = "// @exact";

/// The compress kernel specialised for `set`: its loop over the
/// predictors written as one call per predictor, so that every table
/// offset in them is a constant (on llvmpipe a uniform read at a constant
/// offset is one load, at any other offset a gather of one load per
/// thread), and its selection rule a constant, so that the rule not taken
/// is not compiled (llvmpipe runs both sides of every branch).
fn specialised_compress(
    src: &str,
    set: &ModelSet,
    fwd: &[benes::Masks],
) -> Result<String, BulkError> {
    let np = set.predictors.len();
    let exact = set.selection == Selection::Exact;
    let missing = |what: &str| BulkError::Gpu(format!("mpc kernel source lacks its {what}"));
    let calls: String = (0..np)
        .map(|k| format!("candidate(x, {k}u, exact);\n    "))
        .collect();
    let src = replace_section(
        src,
        CANDIDATES_BEGIN,
        CANDIDATES_END,
        &calls,
        "candidates section",
    )?;
    let e = src.find(EXACT).ok_or_else(|| missing("selection rule"))?;
    let line_end = |from: usize| src[from..].find('\n').map(|n| from + n + 1);
    let (Some(a), Some(b)) = (line_end(e), line_end(e).and_then(line_end)) else {
        return Err(missing("selection rule"));
    };
    let src = format!("{}    let exact = {exact};\n{}", &src[..a], &src[b..]);
    let mut f = String::from(
        "// The prediction of every byte of x under predictor p: one function
// per predictor.
fn predict(x: Bits, p: u32) -> Bits {
    var y = predict_0(x);
",
    );
    for k in 1..np {
        f += &format!("    y = pick(y, predict_{k}(x), p == {k}u);\n");
    }
    f += "    return y;\n}\n";
    for (k, pred) in set.predictors.iter().enumerate() {
        f += &format!("fn predict_{k}(x: Bits) -> Bits {{\n");
        for (j, rule) in pred.bytes.iter().enumerate() {
            f += &match *rule {
                ByteRule::Root => format!("    let b{j} = 0u;\n"),
                ByteRule::Base { base, shift } => format!(
                    "    let b{j} = ((((x.{} >> {}u) & 0xffu) << {}u) >> 8u) & 0xffu;\n",
                    WORDS[base as usize / 4],
                    8 * (base as usize % 4),
                    8 + shift as i32
                ),
            };
        }
        f += &bits_of_bytes();
    }
    let src = replace_section(&src, PREDICT_BEGIN, PREDICT_END, &f, "prediction section")?;
    let mut f = String::from(
        "// The first eleven stages of predictor p's forward network: every bit
// in its 16-bit group. One function per predictor.
fn net_group(x: Bits, p: u32) -> Bits {
    var y = net_group_0(x);
",
    );
    for k in 1..np {
        f += &format!("    y = pick(y, net_group_{k}(x), p == {k}u);\n");
    }
    f += "    return y;\n}\n";
    for (k, masks) in fwd.iter().enumerate() {
        f += &format!("fn net_group_{k}(x: Bits) -> Bits {{\n    var y = x;\n");
        for (s, m) in masks.iter().enumerate().take(benes::GROUP_STAGES) {
            let v = |w: &[u32]| {
                format!(
                    "vec4<u32>({:#010x}u, {:#010x}u, {:#010x}u, {:#010x}u)",
                    w[0], w[1], w[2], w[3]
                )
            };
            let (a, b) = (v(&m[..4]), v(&m[4..]));
            f += &match benes::distance(s) {
                32 => format!("    y = swap32_m(y, {a}, {b});\n"),
                64 => format!("    y = swap64_m(y, {a}, {b});\n"),
                128 => format!("    y = swap128_m(y, {a});\n"),
                d => format!("    y = swap_m(y, {a}, {b}, {d}u);\n"),
            };
        }
        f += "    return y;\n}\n";
    }
    replace_section(&src, NET_BEGIN, NET_END, &f, "network section")
}

const NET_BEGIN: &str = "// @net-begin";
const NET_END: &str = "// @net-end";

const PREDICT_BEGIN: &str = "// @predict-begin";
const PREDICT_END: &str = "// @predict-end";

/// `src` with the text from `begin` to the end of `end` replaced by `with`.
fn replace_section(
    src: &str,
    begin: &str,
    end: &str,
    with: &str,
    what: &str,
) -> Result<String, BulkError> {
    let (Some(a), Some(b)) = (src.find(begin), src.find(end)) else {
        return Err(BulkError::Gpu(format!(
            "mpc kernel source lacks its {what}"
        )));
    };
    Ok(format!("{}{with}{}", &src[..a], &src[b + end.len()..]))
}

/// The WGSL that returns the `Bits` of bytes `b0` .. `b31`, and closes the
/// function.
fn bits_of_bytes() -> String {
    let word = |w: usize| {
        (0..4)
            .map(|q| format!("(b{} << {}u)", 4 * w + q, 8 * q))
            .collect::<Vec<_>>()
            .join(" | ")
    };
    format!(
        "    return Bits(vec4<u32>({}, {}, {}, {}), vec4<u32>({}, {}, {}, {}));\n}}\n",
        word(0),
        word(1),
        word(2),
        word(3),
        word(4),
        word(5),
        word(6),
        word(7)
    )
}

const RESTORE_BEGIN: &str = "// @restore-begin";
const RESTORE_END: &str = "// @restore-end";

/// WGSL of `Bits` word k.
const WORDS: [&str; 8] = [
    "lo.x", "lo.y", "lo.z", "lo.w", "hi.x", "hi.y", "hi.z", "hi.w",
];

/// The decompress kernel specialised for `set`: the restoration written
/// as one function per predictor with its rules as constants (a byte's
/// base and shift known to the compiler: a few operations a byte instead
/// of reads and selects by a per-thread index), the block's predictor
/// picking the result.
fn specialised_decompress(src: &str, set: &ModelSet) -> Result<String, BulkError> {
    let mut f = String::from(
        "// Restoration of the residues r of a block under predictor p, along
// the trees (every byte after its base): one function per predictor.
fn restore_bytes(r: Bits, p: u32) -> Bits {
    var blk = restore_0(r);
",
    );
    for k in 1..set.predictors.len() {
        f += &format!("    blk = pick(blk, restore_{k}(r), p == {k}u);\n");
    }
    f += "    return blk;\n}\n";
    for (k, pred) in set.predictors.iter().enumerate() {
        f += &format!("fn restore_{k}(r: Bits) -> Bits {{\n");
        for &j in &restore_order(&pred.bytes) {
            let res = format!("((r.{} >> {}u) & 0xffu)", WORDS[j / 4], 8 * (j % 4));
            f += &match pred.bytes[j] {
                ByteRule::Root => format!("    let b{j} = {res};\n"),
                ByteRule::Base { base, shift } => format!(
                    "    let b{j} = ({res} + (((b{base} << {}u) >> 8u) & 0xffu)) & 0xffu;\n",
                    8 + shift as i32
                ),
            };
        }
        f += &bits_of_bytes();
    }
    replace_section(src, RESTORE_BEGIN, RESTORE_END, &f, "restoration section")
}

/// The byte positions in restoration order: every byte after its base (by
/// depth in its tree, then position). The rules are checked by
/// [`algo_with`] first (bases in range, no cycle).
fn restore_order(bytes: &[ByteRule; BLOCK_BYTES]) -> [usize; BLOCK_BYTES] {
    let depth = |mut at: usize| {
        let mut d = 0;
        while let ByteRule::Base { base, .. } = bytes[at] {
            at = base as usize;
            d += 1;
            if d > BLOCK_BYTES {
                break;
            }
        }
        d
    };
    let mut order: [usize; BLOCK_BYTES] = std::array::from_fn(|i| i);
    order.sort_by_key(|&i| (depth(i), i));
    order
}

/// The kernels and tables of `set` (the tables bound as a uniform array
/// when they fit [`UNIFORM_TABLES_MAX`]); an error when the set breaks the
/// model-file invariants the kernels rely on (no predictor, more than 256
/// IDs, a reorder that is not a permutation, a base out of range or on a
/// cycle, a shift outside -7..=7).
pub fn algo(set: &ModelSet) -> Result<GpuAlgo, BulkError> {
    algo_with(set, fits_uniform(set))
}

/// Whether the tables of `set` fit [`UNIFORM_TABLES_MAX`] (at most 14
/// predictors): the condition for the specialised kernels.
pub fn fits_uniform(set: &ModelSet) -> bool {
    4 * (set.predictors.len() * PREDICTOR_WORDS + 4) <= UNIFORM_TABLES_MAX
}

/// [`algo`] with the tables bound as a uniform array and the kernels
/// specialised for `set` (`uniform`: on software devices such as llvmpipe
/// a uniform read costs a fraction of a storage read) or as a storage
/// buffer with the generic kernels; both give the same output.
pub fn algo_with(set: &ModelSet, uniform: bool) -> Result<GpuAlgo, BulkError> {
    let bad = |msg: String| BulkError::Config(format!("mpc model set `{}`: {msg}", set.name));
    if set.predictors.is_empty() {
        return Err(bad("no predictor".into()));
    }
    if set.id_count() > 256 {
        return Err(bad(format!("{} model IDs (at most 256)", set.id_count())));
    }
    let mut tables = Vec::with_capacity(set.predictors.len() * PREDICTOR_WORDS + 1);
    let mut fwd_masks = Vec::with_capacity(set.predictors.len());
    for p in &set.predictors {
        let mut rules = [BLOCK_BYTES as u32 | 8 << 8; BLOCK_BYTES];
        let mut parent = [None; BLOCK_BYTES];
        for (i, r) in p.bytes.iter().enumerate() {
            if let ByteRule::Base { base, shift } = *r {
                if base as usize >= BLOCK_BYTES || base as usize == i || !(-7..=7).contains(&shift)
                {
                    return Err(bad(format!(
                        "predictor {}: byte {i} has base {base}, shift {shift}",
                        p.name
                    )));
                }
                rules[i] = base as u32 | ((8 + shift as i32) as u32) << 8;
                parent[i] = Some(base as usize);
            }
        }
        let mut depth = [0usize; BLOCK_BYTES];
        for (i, d) in depth.iter_mut().enumerate() {
            let mut at = i;
            while let Some(b) = parent[at] {
                at = b;
                *d += 1;
                if *d > BLOCK_BYTES {
                    return Err(bad(format!(
                        "predictor {}: the bases of byte {i} form a cycle",
                        p.name
                    )));
                }
            }
        }
        let order = restore_order(&p.bytes).map(|i| i as u8);
        let mut fwd_src = [0u16; STREAM_BITS];
        let mut inv_src = [0u16; STREAM_BITS];
        let mut seen = [false; STREAM_BITS];
        for (o, &n) in p.reorder.iter().enumerate() {
            if std::mem::replace(&mut seen[n as usize], true) {
                return Err(bad(format!(
                    "predictor {}: reorder names bit {n} twice",
                    p.name
                )));
            }
            let (s, r) = (lane_index(o), residue_index(n as usize));
            fwd_src[s] = r as u16;
            inv_src[r] = s as u16;
        }
        let not_perm = || {
            bad(format!(
                "predictor {}: reorder is not a permutation",
                p.name
            ))
        };
        let fwd = benes::route(&fwd_src).ok_or_else(not_perm)?;
        let inv = benes::route(&inv_src).ok_or_else(not_perm)?;
        tables.extend_from_slice(&rules);
        tables.extend(fwd.iter().flatten());
        fwd_masks.push(fwd);
        tables.extend(inv.iter().flatten());
        tables.extend(pack_bytes(&order));
    }
    // spare words: the binding is never empty and is whole vectors
    tables.resize(tables.len() + 4, 0);
    let flags = set.custom.zero_block as u32
        | (set.custom.same_words as u32) << 1
        | ((set.selection == Selection::Exact) as u32) << 2;
    let max_bits = set.max_bits();
    let slot_words = max_bits.div_ceil(32);
    Ok(GpuAlgo {
        name: "mpc",
        source: if uniform {
            specialised_compress(
                &uniform_tables(COMPRESS_WGSL, tables.len() / 4)?,
                set,
                &fwd_masks,
            )?
        } else {
            COMPRESS_WGSL.to_string()
        },
        decompress: if uniform {
            specialised_decompress(&uniform_tables(DECOMPRESS_WGSL, tables.len() / 4)?, set)?
        } else {
            DECOMPRESS_WGSL.to_string()
        },
        params: GpuAlgo::params_of(&MpcUniform {
            n: 0,
            h: set.header_bits(),
            np: set.predictors.len() as u32,
            flags,
            pred_id0: set.predictor_id(0),
            raw_id: set.raw_id(),
            max_bits,
            slot_words,
        }),
        tables,
        block_words: (BLOCK_BYTES / 4) as u32,
        slot_words,
    })
}
