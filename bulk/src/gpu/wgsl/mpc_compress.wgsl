// MPC compress kernel (docs/spec/mpc.md), one thread per 32-byte block,
// branch-free word code: no per-bit loop, no dynamically indexed array,
// straight-line code where it can be (llvmpipe runs both sides of a
// branch that differs between threads).
// Tables per predictor p, at word p * PW (see `bulk::gpu::mpc`), read as
// vectors with `tab(p, v)` (words 4v .. 4v + 3):
//   +0   32 byte rules: base (bits 0..7, 32 = root), shift s (bits 8..11):
//        pred = ((d[base] << s) >> 8) & 0xff (s = 8 + the model's shift);
//   +32  forward Beneš network, 15 stages of 8 mask words: the Gray-coded
//        residues (byte j plane q at bit 8j + q) to the symbols (symbol m
//        in bits 16m .. 16m+15, its first stream bit in the MSB);
//   +152 the inverse network; +272 the restore order (decompress only).
// 256-bit values are `Bits`: words 0..3 in `lo`, 4..7 in `hi`.

struct Params {
    n: u32,
    h: u32,
    np: u32,
    flags: u32,
    pred_id0: u32,
    raw_id: u32,
    max_bits: u32,
    slot_words: u32,
}
@group(0) @binding(0) var<uniform> params: Params;
// @tables-begin (the host may bind the tables as a uniform array instead)
@group(0) @binding(1) var<storage, read> tables: array<u32>;
// Vector v (words 4v .. 4v + 3) of predictor p's tables.
fn tab(p: u32, v: u32) -> vec4<u32> {
    let a = p * PW + 4u * v;
    return vec4<u32>(tables[a], tables[a + 1u], tables[a + 2u], tables[a + 3u]);
}
// @tables-end
@group(0) @binding(2) var<storage, read> input: array<u32>;
@group(0) @binding(3) var<storage, read_write> slots: array<u32>;
@group(0) @binding(4) var<storage, read_write> lens: array<u32>;

// Words per predictor; vector offsets of the forward network.
const PW: u32 = 280u;
const FWD: u32 = 8u;
const FLAG_ZERO: u32 = 1u;
const FLAG_SAME: u32 = 2u;
const FLAG_EXACT: u32 = 4u;
const H: u32 = 0x80808080u;

struct Bits {
    lo: vec4<u32>,
    hi: vec4<u32>,
}

fn bswap(v: u32) -> u32 {
    return (v >> 24u) | ((v >> 8u) & 0xff00u) | ((v << 8u) & 0xff0000u) | (v << 24u);
}


// Delta swap at distance d < 32 inside every word with masks ml, mh.
fn swap_m(x: Bits, ml: vec4<u32>, mh: vec4<u32>, d: u32) -> Bits {
    let dv = vec4<u32>(d);
    let tl = ((x.lo >> dv) ^ x.lo) & ml;
    let th = ((x.hi >> dv) ^ x.hi) & mh;
    return Bits(x.lo ^ tl ^ (tl << dv), x.hi ^ th ^ (th << dv));
}

// The same with the masks of stage vectors v, v + 1 of predictor p.
fn swap_in(x: Bits, p: u32, v: u32, d: u32) -> Bits {
    return swap_m(x, tab(p, v), tab(p, v + 1u), d);
}

// Distance 32: words (0,1), (2,3), (4,5), (6,7).
fn swap32(x: Bits, p: u32, v: u32) -> Bits {
    return swap32_m(x, tab(p, v), tab(p, v + 1u));
}

// The same with the mask words in a (0..3) and b (4..7).
fn swap32_m(x: Bits, a: vec4<u32>, b: vec4<u32>) -> Bits {
    let m = vec4<u32>(a.xz, b.xz);
    let t = (vec4<u32>(x.lo.xz, x.hi.xz) ^ vec4<u32>(x.lo.yw, x.hi.yw)) & m;
    return Bits(x.lo ^ t.xxyy, x.hi ^ t.zzww);
}

// Distance 64: words (0,2), (1,3), (4,6), (5,7).
fn swap64(x: Bits, p: u32, v: u32) -> Bits {
    return swap64_m(x, tab(p, v), tab(p, v + 1u));
}

fn swap64_m(x: Bits, a: vec4<u32>, b: vec4<u32>) -> Bits {
    let m = vec4<u32>(a.xy, b.xy);
    let t = (vec4<u32>(x.lo.xy, x.hi.xy) ^ vec4<u32>(x.lo.zw, x.hi.zw)) & m;
    return Bits(x.lo ^ t.xyxy, x.hi ^ t.zwzw);
}

// Distance 128: words (k, k + 4).
fn swap128(x: Bits, p: u32, v: u32) -> Bits {
    return swap128_m(x, tab(p, v));
}

fn swap128_m(x: Bits, m: vec4<u32>) -> Bits {
    let t = (x.lo ^ x.hi) & m;
    return Bits(x.lo ^ t, x.hi ^ t);
}

// @net-begin (the host may write one function per predictor, its masks
// as constants)
// The first eleven stages of predictor p's forward network: every bit in
// its 16-bit group.
fn net_group(x: Bits, p: u32) -> Bits {
    var y = swap_in(x, p, FWD, 1u);
    y = swap_in(y, p, FWD + 2u, 2u);
    y = swap_in(y, p, FWD + 4u, 4u);
    y = swap_in(y, p, FWD + 6u, 8u);
    y = swap_in(y, p, FWD + 8u, 16u);
    y = swap32(y, p, FWD + 10u);
    y = swap64(y, p, FWD + 12u);
    y = swap128(y, p, FWD + 14u);
    y = swap64(y, p, FWD + 16u);
    y = swap32(y, p, FWD + 18u);
    return swap_in(y, p, FWD + 20u, 16u);
}
// @net-end

// Byte b (0..31; 32 and above: 0) of x.
fn byte_at(x: Bits, b: u32) -> u32 {
    let k = b >> 2u;
    let v = select(x.lo, x.hi, k >= 4u);
    let s = k & 3u;
    let w = select(select(v.x, v.y, s == 1u), select(v.z, v.w, s == 3u), s >= 2u);
    return select((w >> ((b & 3u) * 8u)) & 0xffu, 0u, k >= 8u);
}

fn pred_byte(x: Bits, rule: u32) -> u32 {
    return ((byte_at(x, rule & 0xffu) << ((rule >> 8u) & 0xfu)) >> 8u) & 0xffu;
}

// @predict-begin (the host may write one function per predictor, its
// rules as constants)
// Word k of the prediction of x under predictor p.
fn pred_word(x: Bits, p: u32, k: u32) -> u32 {
    let rl = tab(p, k);
    return pred_byte(x, rl.x) | (pred_byte(x, rl.y) << 8u) | (pred_byte(x, rl.z) << 16u) | (pred_byte(x, rl.w) << 24u);
}

// The prediction of every byte of x under predictor p.
fn predict(x: Bits, p: u32) -> Bits {
    return Bits(
        vec4<u32>(pred_word(x, p, 0u), pred_word(x, p, 1u), pred_word(x, p, 2u), pred_word(x, p, 3u)),
        vec4<u32>(pred_word(x, p, 4u), pred_word(x, p, 5u), pred_word(x, p, 6u), pred_word(x, p, 7u)),
    );
}
// @predict-end

// b where c, else a.
fn pick(a: Bits, b: Bits, c: bool) -> Bits {
    return Bits(select(a.lo, b.lo, c), select(a.hi, b.hi, c));
}

// Byte-wise w - y, then each plane XORed with the plane above.
fn gray_word(w: u32, y: u32) -> u32 {
    let r = ((w | H) - (y & ~H)) ^ ((w ^ ~y) & H);
    return r ^ ((r >> 1u) & 0x7f7f7f7fu);
}

// The Gray-coded residues of x under predictor p.
fn gray(x: Bits, p: u32) -> Bits {
    let y = predict(x, p);
    return Bits(
        vec4<u32>(gray_word(x.lo.x, y.lo.x), gray_word(x.lo.y, y.lo.y), gray_word(x.lo.z, y.lo.z), gray_word(x.lo.w, y.lo.w)),
        vec4<u32>(gray_word(x.hi.x, y.hi.x), gray_word(x.hi.y, y.hi.y), gray_word(x.hi.z, y.hi.z), gray_word(x.hi.w, y.hi.w)),
    );
}

// Bit m set when symbol m (bits 16m .. of y, only its group counts) is 0.
fn zero_mask(y: Bits) -> u32 {
    let z = vec4<u32>(0u);
    let one = vec4<u32>(1u);
    let a = select(z, one, (y.lo & vec4<u32>(0xffffu)) == z) | select(z, vec4<u32>(2u), (y.lo >> vec4<u32>(16u)) == z);
    let b = select(z, one, (y.hi & vec4<u32>(0xffffu)) == z) | select(z, vec4<u32>(2u), (y.hi >> vec4<u32>(16u)) == z);
    let s = vec4<u32>(0u, 2u, 4u, 6u);
    let c = (a << s) | (b << (s + vec4<u32>(8u)));
    return c.x | c.y | c.z | c.w;
}

// Longest run of consecutive set bits of a 16-bit mask.
fn longest_run(zm: u32) -> u32 {
    var x = zm;
    var n = 0u;
    for (var k = 0u; k < 16u; k++) {
        n += select(0u, 1u, x != 0u);
        x &= x << 1u;
    }
    return n;
}

// Table-1 code of a nonzero symbol: (bits, length), shortest match.
fn nonzero_code(s: u32) -> vec2<u32> {
    let ones = countOneBits(s);
    let lead = countLeadingZeros(s) - 16u;
    let trail = countTrailingZeros(s);
    var c = vec2<u32>((1u << 16u) | s, 17u);
    c = select(c, vec2<u32>((2u << 8u) | (s >> 8u), 12u), (s & 0xffu) == 0u);
    c = select(c, vec2<u32>((1u << 8u) | s, 12u), (s & 0xff00u) == 0u);
    c = select(c, vec2<u32>(lead, 8u), ones == 2u && lead + trail == 14u);
    c = select(c, vec2<u32>((3u << 4u) | lead, 7u), ones == 1u);
    return c;
}

// Codes of symbol m (value s) as one field: a nonzero symbol its code, the
// first zero of a run the run's codes (16 zeros: run of 15 then one zero),
// other zeros nothing.
fn code_of(s: u32, m: u32, zm: u32) -> vec2<u32> {
    let run = countTrailingZeros(~(zm >> m));
    var z = vec2<u32>((2u << 4u) | run, 7u);
    z = select(z, vec2<u32>(3u, 4u), run == 1u);
    z = select(z, vec2<u32>((0x2fu << 4u) | 3u, 11u), run == 16u);
    let prev_zero = m > 0u && ((zm >> (m - 1u)) & 1u) == 1u;
    z = select(z, vec2<u32>(0u, 0u), prev_zero);
    return select(nonzero_code(s), z, s == 0u);
}

// Code bits of the two symbols in word w (symbol 2k in its low half,
// 2k + 1 in its high half).
fn word_bits(w: u32, k: u32, zm: u32) -> u32 {
    return code_of(w & 0xffffu, 2u * k, zm).y + code_of(w >> 16u, 2u * k + 1u, zm).y;
}

fn code_bits(y: Bits, zm: u32) -> u32 {
    return word_bits(y.lo.x, 0u, zm) + word_bits(y.lo.y, 1u, zm) + word_bits(y.lo.z, 2u, zm) + word_bits(y.lo.w, 3u, zm)
        + word_bits(y.hi.x, 4u, zm) + word_bits(y.hi.y, 5u, zm) + word_bits(y.hi.z, 6u, zm) + word_bits(y.hi.w, 7u, zm);
}

// The last four stages of predictor p's forward network (p may differ
// between threads).
fn finish(x: Bits, p: u32) -> Bits {
    var y = swap_in(x, p, FWD + 22u, 8u);
    y = swap_in(y, p, FWD + 24u, 4u);
    y = swap_in(y, p, FWD + 26u, 2u);
    return swap_in(y, p, FWD + 28u, 1u);
}

// Selection state: the best candidate so far.
var<private> best: u32;
var<private> best_key: u32;
var<private> best_y: Bits;
var<private> best_zm: u32;

// Candidate predictor p: zero-run: key = longest zero run * 32 + zero
// symbols, first largest; exact: fewest code bits, first smallest.
fn candidate(x: Bits, p: u32, exact: bool) {
    var g = net_group(gray(x, p), p);
    var key = 0u;
    let z = zero_mask(g);
    if (exact) {
        g = finish(g, p);
        key = 0xffffffffu - code_bits(g, z);
    } else {
        key = longest_run(z) * 32u + countOneBits(z);
    }
    if (p == 0u || key > best_key) {
        best = p;
        best_key = key;
        best_y = g;
        best_zm = z;
    }
}

// Bit writer: `acc` holds `fill` (< 32) pending bits from its MSB down;
// the slot's words stay in registers (o0: words 0..3, o1: 4..7, o2: 8)
// until the end, word `wat` written again at every append (a register
// select instead of a store per code).
var<private> acc: u32;
var<private> fill: u32;
var<private> wat: u32;
var<private> o0: vec4<u32>;
var<private> o1: vec4<u32>;
var<private> o2: u32;

// Append the low `n` bits of `v` (0 <= n <= 32), MSB first.
fn put(v: u32, n: u32) {
    let x = select(v & ((1u << (n & 31u)) - 1u), v, n >= 32u);
    let total = fill + n;
    let full = total >= 32u;
    let hi = acc | select(x << ((32u - total) & 31u), x >> ((total - 32u) & 31u), full);
    let lo = select(0u, x << ((64u - total) & 31u), total > 32u);
    let w = vec4<u32>(wat);
    let hv = vec4<u32>(hi);
    o0 = select(o0, hv, w == vec4<u32>(0u, 1u, 2u, 3u));
    o1 = select(o1, hv, w == vec4<u32>(4u, 5u, 6u, 7u));
    o2 = select(o2, hi, wat == 8u);
    wat = select(wat, wat + 1u, full);
    acc = select(hi, lo, full);
    fill = select(total, total - 32u, full);
}

// The codes of the two symbols of word w (symbols 2k, 2k + 1), or (a
// block of another kind, `words`) `raw` when `whole`, else nothing.
fn put_word(w: u32, k: u32, zm: u32, words: bool, raw: u32, whole: bool) {
    let a = code_of(w & 0xffffu, 2u * k, zm);
    put(select(a.x, raw, words), select(a.y, select(0u, 32u, whole), words));
    let b = code_of(w >> 16u, 2u * k + 1u, zm);
    put(b.x, select(b.y, 0u, words));
}

@compute @workgroup_size(64)
fn compress(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * 64u;
    if (i >= params.n) {
        return;
    }
    let at = i * 8u;
    let x = Bits(
        vec4<u32>(input[at], input[at + 1u], input[at + 2u], input[at + 3u]),
        vec4<u32>(input[at + 4u], input[at + 5u], input[at + 6u], input[at + 7u]),
    );
    let o4 = x.lo | x.hi;
    let d4 = (x.lo ^ vec4<u32>(x.lo.x)) | (x.hi ^ vec4<u32>(x.lo.x));
    let ored = o4.x | o4.y | o4.z | o4.w;
    let differ = d4.x | d4.y | d4.z | d4.w;
    let flags = params.flags;
    let zero_ok = (flags & FLAG_ZERO) != 0u && ored == 0u;
    let same_ok = (flags & FLAG_SAME) != 0u && differ == 0u;
    let same_id = flags & FLAG_ZERO;
    // @exact (the host may write the rule as a constant)
    let exact = (flags & FLAG_EXACT) != 0u;
    // every candidate is evaluated whatever the block
    best = 0u;
    best_key = 0u;
    // @candidates-begin (the host may write one call per predictor)
    for (var p = 0u; p < params.np; p++) {
        candidate(x, p, exact);
    }
    // @candidates-end
    if (!exact) {
        best_y = finish(best_y, best);
    }
    // kind: 0 zero block, 1 same words, 2 predictor, 3 raw
    var kind = select(2u, 3u, code_bits(best_y, best_zm) >= 256u);
    kind = select(kind, 1u, same_ok && (!exact || 32u <= 0xffffffffu - best_key));
    kind = select(kind, 0u, zero_ok);
    acc = 0u;
    fill = 0u;
    wat = 0u;
    o0 = vec4<u32>(0u);
    o1 = vec4<u32>(0u);
    o2 = 0u;
    var id = params.pred_id0 + best;
    id = select(id, params.raw_id, kind == 3u);
    id = select(id, same_id, kind == 1u);
    id = select(id, 0u, kind == 0u);
    put(id, params.h);
    // after the ID: a predictor's codes, the raw block's eight words, the
    // same-words block's word, nothing for a zero block
    let words = kind != 2u;
    let all = kind == 3u;
    let zm = best_zm;
    let y = best_y;
    put_word(y.lo.x, 0u, zm, words, bswap(x.lo.x), all || kind == 1u);
    put_word(y.lo.y, 1u, zm, words, bswap(x.lo.y), all);
    put_word(y.lo.z, 2u, zm, words, bswap(x.lo.z), all);
    put_word(y.lo.w, 3u, zm, words, bswap(x.lo.w), all);
    put_word(y.hi.x, 4u, zm, words, bswap(x.hi.x), all);
    put_word(y.hi.y, 5u, zm, words, bswap(x.hi.y), all);
    put_word(y.hi.z, 6u, zm, words, bswap(x.hi.z), all);
    put_word(y.hi.w, 7u, zm, words, bswap(x.hi.w), all);
    // the last word, when the last code began it
    put(0u, 0u);
    // a slot is nine words for every model set (the raw escape: an ID of
    // at most 8 bits and 256 bits)
    let base = i * params.slot_words;
    slots[base] = o0.x;
    slots[base + 1u] = o0.y;
    slots[base + 2u] = o0.z;
    slots[base + 3u] = o0.w;
    slots[base + 4u] = o1.x;
    slots[base + 5u] = o1.y;
    slots[base + 6u] = o1.z;
    slots[base + 7u] = o1.w;
    slots[base + 8u] = o2;
    lens[i] = wat * 32u + fill;
}
