// MPC compress kernel (docs/spec/mpc.md), one thread per 32-byte block,
// branch-free word code: no per-bit loop, no dynamically indexed array.
// Tables per predictor p, at word p * PW (see `bulk::gpu::mpc`):
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
fn tword(i: u32) -> u32 {
    return tables[i];
}
fn tvec(v: u32) -> vec4<u32> {
    let a = 4u * v;
    return vec4<u32>(tables[a], tables[a + 1u], tables[a + 2u], tables[a + 3u]);
}
// @tables-end
@group(0) @binding(2) var<storage, read> input: array<u32>;
@group(0) @binding(3) var<storage, read_write> slots: array<u32>;
@group(0) @binding(4) var<storage, read_write> lens: array<u32>;

const PW: u32 = 280u;
const FWD: u32 = 32u;
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

// Table words at .. at + 3 (at a multiple of 4).
fn mask4(at: u32) -> vec4<u32> {
    return tvec(at >> 2u);
}

// Delta swap at distance d < 32 inside every word with masks ml, mh.
fn swap_m(x: Bits, ml: vec4<u32>, mh: vec4<u32>, d: u32) -> Bits {
    let dv = vec4<u32>(d);
    let tl = ((x.lo >> dv) ^ x.lo) & ml;
    let th = ((x.hi >> dv) ^ x.hi) & mh;
    return Bits(x.lo ^ tl ^ (tl << dv), x.hi ^ th ^ (th << dv));
}

// The same with the masks at `at`.
fn swap_in(x: Bits, at: u32, d: u32) -> Bits {
    return swap_m(x, mask4(at), mask4(at + 4u), d);
}

// Distance 32: words (0,1), (2,3), (4,5), (6,7).
fn swap32(x: Bits, at: u32) -> Bits {
    let a = mask4(at);
    let b = mask4(at + 4u);
    let m = vec4<u32>(a.xz, b.xz);
    let t = (vec4<u32>(x.lo.xz, x.hi.xz) ^ vec4<u32>(x.lo.yw, x.hi.yw)) & m;
    return Bits(x.lo ^ t.xxyy, x.hi ^ t.zzww);
}

// Distance 64: words (0,2), (1,3), (4,6), (5,7).
fn swap64(x: Bits, at: u32) -> Bits {
    let a = mask4(at);
    let b = mask4(at + 4u);
    let m = vec4<u32>(a.xy, b.xy);
    let t = (vec4<u32>(x.lo.xy, x.hi.xy) ^ vec4<u32>(x.lo.zw, x.hi.zw)) & m;
    return Bits(x.lo ^ t.xyxy, x.hi ^ t.zwzw);
}

// Distance 128: words (k, k + 4).
fn swap128(x: Bits, at: u32) -> Bits {
    let t = (x.lo ^ x.hi) & mask4(at);
    return Bits(x.lo ^ t, x.hi ^ t);
}

// The first eleven stages of the network at `at`: every bit in its 16-bit
// group.
fn net_group(x: Bits, at: u32) -> Bits {
    var y = swap_in(x, at, 1u);
    y = swap_in(y, at + 8u, 2u);
    y = swap_in(y, at + 16u, 4u);
    y = swap_in(y, at + 24u, 8u);
    y = swap_in(y, at + 32u, 16u);
    y = swap32(y, at + 40u);
    y = swap64(y, at + 48u);
    y = swap128(y, at + 56u);
    y = swap64(y, at + 64u);
    y = swap32(y, at + 72u);
    return swap_in(y, at + 80u, 16u);
}

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

// Word k of the Gray-coded residues of predictor tables `t`: byte-wise
// x - pred, then each plane XORed with the plane above.
fn gray_word(x: Bits, t: u32, k: u32, w: u32) -> u32 {
    let rl = mask4(t + 4u * k);
    let y = pred_byte(x, rl.x) | (pred_byte(x, rl.y) << 8u) | (pred_byte(x, rl.z) << 16u) | (pred_byte(x, rl.w) << 24u);
    let r = ((w | H) - (y & ~H)) ^ ((w ^ ~y) & H);
    return r ^ ((r >> 1u) & 0x7f7f7f7fu);
}

fn gray(x: Bits, t: u32) -> Bits {
    return Bits(
        vec4<u32>(gray_word(x, t, 0u, x.lo.x), gray_word(x, t, 1u, x.lo.y), gray_word(x, t, 2u, x.lo.z), gray_word(x, t, 3u, x.lo.w)),
        vec4<u32>(gray_word(x, t, 4u, x.hi.x), gray_word(x, t, 5u, x.hi.y), gray_word(x, t, 6u, x.hi.z), gray_word(x, t, 7u, x.hi.w)),
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

// Mask words `off ..` of predictor p's tables (p may differ between
// threads).
fn pmask4(off: u32, p: u32) -> vec4<u32> {
    return mask4(p * PW + off);
}

// The last four stages of predictor p's forward network.
fn finish(x: Bits, p: u32) -> Bits {
    let at = FWD + 88u;
    var y = swap_m(x, pmask4(at, p), pmask4(at + 4u, p), 8u);
    y = swap_m(y, pmask4(at + 8u, p), pmask4(at + 12u, p), 4u);
    y = swap_m(y, pmask4(at + 16u, p), pmask4(at + 20u, p), 2u);
    return swap_m(y, pmask4(at + 24u, p), pmask4(at + 28u, p), 1u);
}

// Selection state: the best candidate so far.
var<private> best: u32;
var<private> best_key: u32;
var<private> best_y: Bits;
var<private> best_zm: u32;

// Candidate predictor p: zero-run: key = longest zero run * 32 + zero
// symbols, first largest; exact: fewest code bits, first smallest.
fn candidate(x: Bits, p: u32, exact: bool) {
    let t = p * PW;
    var g = net_group(gray(x, t), t + FWD);
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
// full words go to the slot at `wat`.
var<private> acc: u32;
var<private> fill: u32;
var<private> wat: u32;

// Append the low `n` bits of `v` (0 <= n <= 32), MSB first.
fn put(v: u32, n: u32) {
    let x = select(v & ((1u << (n & 31u)) - 1u), v, n >= 32u);
    let total = fill + n;
    if (total < 32u) {
        acc |= select(x << ((32u - total) & 31u), 0u, n == 0u);
        fill = total;
    } else {
        let spill = total - 32u;
        slots[wat] = acc | (x >> spill);
        wat += 1u;
        acc = select(x << ((32u - spill) & 31u), 0u, spill == 0u);
        fill = spill;
    }
}

fn put_word(w: u32, k: u32, zm: u32) {
    let a = code_of(w & 0xffffu, 2u * k, zm);
    put(a.x, a.y);
    let b = code_of(w >> 16u, 2u * k + 1u, zm);
    put(b.x, b.y);
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
    let exact = (flags & FLAG_EXACT) != 0u;
    // kind: 0 zero block, 1 same words, 2 predictor, 3 raw
    var kind = 2u;
    best = 0u;
    if (zero_ok) {
        kind = 0u;
    } else if (!exact && same_ok) {
        kind = 1u;
    } else {
        best_key = 0u;
        for (var p = 0u; p < params.np; p++) {
            candidate(x, p, exact);
        }
        if (exact && same_ok && 32u <= 0xffffffffu - best_key) {
            kind = 1u;
        }
        if (!exact) {
            best_y = finish(best_y, best);
        }
        if (kind == 2u && code_bits(best_y, best_zm) >= 256u) {
            kind = 3u;
        }
    }
    acc = 0u;
    fill = 0u;
    wat = i * params.slot_words;
    let h = params.h;
    if (kind == 0u) {
        put(0u, h);
    } else if (kind == 1u) {
        put(same_id, h);
        put(bswap(x.lo.x), 32u);
    } else if (kind == 3u) {
        put(params.raw_id, h);
        put(bswap(x.lo.x), 32u);
        put(bswap(x.lo.y), 32u);
        put(bswap(x.lo.z), 32u);
        put(bswap(x.lo.w), 32u);
        put(bswap(x.hi.x), 32u);
        put(bswap(x.hi.y), 32u);
        put(bswap(x.hi.z), 32u);
        put(bswap(x.hi.w), 32u);
    } else {
        put(params.pred_id0 + best, h);
        let y = best_y;
        let zm = best_zm;
        put_word(y.lo.x, 0u, zm);
        put_word(y.lo.y, 1u, zm);
        put_word(y.lo.z, 2u, zm);
        put_word(y.lo.w, 3u, zm);
        put_word(y.hi.x, 4u, zm);
        put_word(y.hi.y, 5u, zm);
        put_word(y.hi.z, 6u, zm);
        put_word(y.hi.w, 7u, zm);
    }
    if (fill != 0u) {
        slots[wat] = acc;
    }
    lens[i] = (wat - i * params.slot_words) * 32u + fill;
}
