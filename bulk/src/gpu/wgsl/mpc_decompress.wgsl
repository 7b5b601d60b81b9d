// MPC decompress kernel (docs/spec/mpc.md section 8), one thread per
// segment: the segment's blocks are decoded one after the other, each with
// at most min(bits left, max_bits) bits, as the CPU codec's
// `decompress_at` does; status 0 only when every block decodes and the
// blocks use exactly the segment's bits. Table layout as in
// mpc_compress.wgsl; the inverse network takes the symbols back to the
// Gray-coded residues. Every block is decoded by one loop over its codes
// (a predictor's Table-1 codes, the raw escape's eight words, the
// same-words block's word) and stored once: llvmpipe runs both sides of a
// branch that differs between threads, so separate paths per kind would
// all run, each with its own payload reads and stores.

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
// Word i of the tables.
fn tword(i: u32) -> u32 {
    return tables[i];
}
// @tables-end
@group(0) @binding(2) var<storage, read> payload: array<u32>;
@group(0) @binding(3) var<storage, read> segs: array<vec4<u32>>;
@group(0) @binding(4) var<storage, read_write> out: array<u32>;
@group(0) @binding(5) var<storage, read_write> status: array<u32>;

// Words per predictor; vector offset of the inverse network, word offset
// of the restore order.
const PW: u32 = 280u;
const INV: u32 = 38u;
const ORD: u32 = 272u;
const FLAG_ZERO: u32 = 1u;
const FLAG_SAME: u32 = 2u;

fn bswap(v: u32) -> u32 {
    return (v >> 24u) | ((v >> 8u) & 0xff00u) | ((v << 8u) & 0xff0000u) | (v << 24u);
}

// Stream reader: the stream words c_at (c_hi) and c_at + 1 (c_lo), MSB
// first. `sync` moves it one word on when `pos` has reached c_lo, with one
// payload read whether it moves or not (codes are at most 32 bits, so
// `pos` never passes c_lo).
var<private> c_at: u32;
var<private> c_hi: u32;
var<private> c_lo: u32;

fn sync(pos: u32) {
    let next = bswap(payload[c_at + 2u]);
    let step = (pos >> 5u) != c_at;
    c_hi = select(c_hi, c_lo, step);
    c_lo = select(c_lo, next, step);
    c_at = select(c_at, c_at + 1u, step);
}

// The 32 stream bits at `pos` (after `sync(pos)`; bits past the payload
// read as 0: the host pads it).
fn peek(pos: u32) -> u32 {
    let s = pos & 31u;
    return select((c_hi << s) | (c_lo >> ((32u - s) & 31u)), c_hi, s == 0u);
}

struct Bits {
    lo: vec4<u32>,
    hi: vec4<u32>,
}

// b where c, else a.
fn pick(a: Bits, b: Bits, c: bool) -> Bits {
    return Bits(select(a.lo, b.lo, c), select(a.hi, b.hi, c));
}

// In-word delta swap at distance d with masks ml, mh.
fn swap_m(x: Bits, ml: vec4<u32>, mh: vec4<u32>, d: u32) -> Bits {
    let dv = vec4<u32>(d);
    let tl = ((x.lo >> dv) ^ x.lo) & ml;
    let th = ((x.hi >> dv) ^ x.hi) & mh;
    return Bits(x.lo ^ tl ^ (tl << dv), x.hi ^ th ^ (th << dv));
}

// In-word stage s of predictor p's inverse network.
fn inv_in(x: Bits, p: u32, s: u32, d: u32) -> Bits {
    return swap_m(x, tab(p, INV + 2u * s), tab(p, INV + 2u * s + 1u), d);
}

// Stage s, distance 32 (words (0,1), (2,3), ...).
fn inv32(x: Bits, p: u32, s: u32) -> Bits {
    let a = tab(p, INV + 2u * s);
    let b = tab(p, INV + 2u * s + 1u);
    let t = (vec4<u32>(x.lo.xz, x.hi.xz) ^ vec4<u32>(x.lo.yw, x.hi.yw)) & vec4<u32>(a.xz, b.xz);
    return Bits(x.lo ^ t.xxyy, x.hi ^ t.zzww);
}

// Stage s, distance 64 (words (0,2), (1,3), ...).
fn inv64(x: Bits, p: u32, s: u32) -> Bits {
    let a = tab(p, INV + 2u * s);
    let b = tab(p, INV + 2u * s + 1u);
    let t = (vec4<u32>(x.lo.xy, x.hi.xy) ^ vec4<u32>(x.lo.zw, x.hi.zw)) & vec4<u32>(a.xy, b.xy);
    return Bits(x.lo ^ t.xyxy, x.hi ^ t.zwzw);
}

// Predictor p's inverse network (all 15 stages): symbols to Gray-coded
// residues.
fn inv_net(x: Bits, p: u32) -> Bits {
    var y = inv_in(x, p, 0u, 1u);
    y = inv_in(y, p, 1u, 2u);
    y = inv_in(y, p, 2u, 4u);
    y = inv_in(y, p, 3u, 8u);
    y = inv_in(y, p, 4u, 16u);
    y = inv32(y, p, 5u);
    y = inv64(y, p, 6u);
    let t = (y.lo ^ y.hi) & tab(p, INV + 14u);
    y = Bits(y.lo ^ t, y.hi ^ t);
    y = inv64(y, p, 8u);
    y = inv32(y, p, 9u);
    y = inv_in(y, p, 10u, 16u);
    y = inv_in(y, p, 11u, 8u);
    y = inv_in(y, p, 12u, 4u);
    y = inv_in(y, p, 13u, 2u);
    return inv_in(y, p, 14u, 1u);
}

// Byte b (0..31; 32 and above: 0) of x.
fn byte_at(x: Bits, b: u32) -> u32 {
    let k = b >> 2u;
    let v = select(x.lo, x.hi, k >= 4u);
    let s = k & 3u;
    let w = select(select(v.x, v.y, s == 1u), select(v.z, v.w, s == 3u), s >= 2u);
    return select((w >> ((b & 3u) * 8u)) & 0xffu, 0u, k >= 8u);
}

// @restore-begin (the host may write one function per predictor, its
// rules as constants)
// Restoration of the residues r of a block under predictor p, along the
// trees (every byte after its base).
fn restore_bytes(r: Bits, p: u32) -> Bits {
    let t = p * PW;
    var blk = Bits(vec4<u32>(0u), vec4<u32>(0u));
    let lanes = vec4<u32>(0u, 1u, 2u, 3u);
    for (var q = 0u; q < 32u; q++) {
        let i = (tword(t + ORD + (q >> 2u)) >> ((q & 3u) * 8u)) & 0xffu;
        let rule = tword(t + i);
        let pred = ((byte_at(blk, rule & 0xffu) << ((rule >> 8u) & 0xfu)) >> 8u) & 0xffu;
        let v = vec4<u32>(((byte_at(r, i) + pred) & 0xffu) << ((i & 3u) * 8u));
        let k = vec4<u32>(i >> 2u);
        blk.lo |= select(vec4<u32>(0u), v, k == lanes);
        blk.hi |= select(vec4<u32>(0u), v, k == lanes + vec4<u32>(4u));
    }
    return blk;
}
// @restore-end

// The block of symbols `sym` under predictor p: the inverse network, the
// inverse Gray code per byte, the restoration.
fn restore(sym: Bits, p: u32) -> Bits {
    var r = inv_net(sym, p);
    r.lo ^= (r.lo >> vec4<u32>(1u)) & vec4<u32>(0x7f7f7f7fu);
    r.hi ^= (r.hi >> vec4<u32>(1u)) & vec4<u32>(0x7f7f7f7fu);
    r.lo ^= (r.lo >> vec4<u32>(2u)) & vec4<u32>(0x3f3f3f3fu);
    r.hi ^= (r.hi >> vec4<u32>(2u)) & vec4<u32>(0x3f3f3f3fu);
    r.lo ^= (r.lo >> vec4<u32>(4u)) & vec4<u32>(0x0f0f0f0fu);
    r.hi ^= (r.hi >> vec4<u32>(4u)) & vec4<u32>(0x0f0f0f0fu);
    return restore_bytes(r, p);
}

@compute @workgroup_size(64)
fn decompress(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let s = gid.x + gid.y * nwg.x * 64u;
    if (s >= params.n) {
        return;
    }
    let seg = segs[s];
    let end = seg.x + seg.y;
    var pos = seg.x;
    var bad = 0u;
    c_at = pos >> 5u;
    c_hi = bswap(payload[c_at]);
    c_lo = bswap(payload[c_at + 1u]);
    let h = params.h;
    let nz = params.flags & FLAG_ZERO;
    let ns = (params.flags & FLAG_SAME) >> 1u;
    let lanes = vec4<u32>(0u, 1u, 2u, 3u);
    for (var b = seg.z; b < seg.z + seg.w; b++) {
        // each block at most min(bits left, max_bits)
        let lim = pos + min(end - pos, params.max_bits);
        if (lim == pos) {
            bad = 1u;
            break;
        }
        if (h > lim - pos) {
            bad = 2u;
            break;
        }
        sync(pos);
        let id = select(peek(pos) >> ((32u - h) & 31u), 0u, h == 0u);
        pos += h;
        if (id > params.raw_id) {
            bad = 2u;
            break;
        }
        let is_zero = id < nz;
        let is_same = !is_zero && id < nz + ns;
        let is_raw = id == params.raw_id;
        // a predictor's block: Table-1 codes until 16 symbols; the raw
        // escape: eight 32-bit words; same words: one word (in the
        // places of 16 symbols); a zero block: nothing
        let words = is_same || is_raw;
        var sym = Bits(vec4<u32>(0u), vec4<u32>(0u));
        var m = select(0u, 16u, is_zero);
        var fail = false;
        while (m < 16u) {
            sync(pos);
            let w = peek(pos);
            let sel = (w >> 28u) & 3u;
            let f = (w >> 25u) & 0xfu;
            let q = (w >> 24u) & 0xfu;
            // 00xx: 0000 two ones (8), 0001 low byte (12), 0010 high byte
            // (12), 0011 one zero (4)
            var len = select(select(8u, 12u, sel != 0u), 4u, sel == 3u);
            var val = select(select(select(0xc000u >> q, (w >> 20u) & 0xffu, sel == 1u), ((w >> 20u) & 0xffu) << 8u, sel == 2u), 0u, sel == 3u);
            var cnt = 1u;
            var bad_code = sel == 0u && q == 15u;
            // 01: 011 one one (7), 010 zero run (7)
            let b01 = (w >> 30u) == 1u;
            let single = ((w >> 29u) & 1u) == 1u;
            len = select(len, 7u, b01);
            val = select(val, select(0u, 0x8000u >> f, single), b01);
            cnt = select(cnt, f, b01 && !single);
            bad_code = select(bad_code, !single && f < 2u, b01);
            // 1: uncompressed (17)
            let b1 = (w >> 31u) == 1u;
            len = select(len, 17u, b1);
            val = select(val, (w >> 15u) & 0xffffu, b1);
            cnt = select(cnt, 1u, b1);
            bad_code = bad_code && !b1;
            // a word of the raw escape or of same words
            len = select(len, 32u, words);
            val = select(val, bswap(w), words);
            cnt = select(cnt, select(2u, 16u, is_same), words);
            bad_code = bad_code && !words;
            if (bad_code || len > lim - pos || m + cnt > 16u) {
                fail = true;
                break;
            }
            let v = vec4<u32>(val << (16u * (m & 1u)));
            let k = vec4<u32>(m >> 1u);
            sym.lo |= select(vec4<u32>(0u), v, k == lanes);
            sym.hi |= select(vec4<u32>(0u), v, k == lanes + vec4<u32>(4u));
            m += cnt;
            pos += len;
        }
        if (fail) {
            bad = 2u;
            break;
        }
        var blk = pick(restore(sym, id - params.pred_id0), sym, words);
        let v0 = vec4<u32>(sym.lo.x);
        blk = pick(blk, Bits(v0, v0), is_same);
        blk = pick(blk, Bits(vec4<u32>(0u), vec4<u32>(0u)), is_zero);
        let ob = b * 8u;
        out[ob] = blk.lo.x;
        out[ob + 1u] = blk.lo.y;
        out[ob + 2u] = blk.lo.z;
        out[ob + 3u] = blk.lo.w;
        out[ob + 4u] = blk.hi.x;
        out[ob + 5u] = blk.hi.y;
        out[ob + 6u] = blk.hi.z;
        out[ob + 7u] = blk.hi.w;
    }
    if (bad == 0u && pos != end) {
        bad = 3u;
    }
    status[s] = bad;
}
