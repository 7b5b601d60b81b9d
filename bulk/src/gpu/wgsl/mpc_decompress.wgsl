// MPC decompress kernel (docs/spec/mpc.md section 8), one thread per
// segment: the segment's blocks are decoded one after the other, each with
// at most min(bits left, max_bits) bits, as the CPU codec's
// `decompress_at` does; status 0 only when every block decodes and the
// blocks use exactly the segment's bits. Table layout as in
// mpc_compress.wgsl; the inverse network takes the symbols back to the
// Gray-coded residues.

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
@group(0) @binding(2) var<storage, read> payload: array<u32>;
@group(0) @binding(3) var<storage, read> segs: array<vec4<u32>>;
@group(0) @binding(4) var<storage, read_write> out: array<u32>;
@group(0) @binding(5) var<storage, read_write> status: array<u32>;

const PW: u32 = 280u;
const INV: u32 = 152u;
const ORD: u32 = 272u;
const FLAG_ZERO: u32 = 1u;
const FLAG_SAME: u32 = 2u;
const BAD: u32 = 0xffffffffu;

fn bswap(v: u32) -> u32 {
    return (v >> 24u) | ((v >> 8u) & 0xff00u) | ((v << 8u) & 0xff0000u) | (v << 24u);
}

// Stream reader: the two payload words (as MSB-first stream words) that
// hold the 32 bits at a position, cached by word index.
var<private> c_at: u32;
var<private> c_hi: u32;
var<private> c_lo: u32;

// The 32 stream bits at `pos` (bits past the payload read as 0: the host
// pads it).
fn peek(pos: u32) -> u32 {
    let j = pos >> 5u;
    if (j != c_at) {
        if (j == c_at + 1u) {
            c_hi = c_lo;
        } else {
            c_hi = bswap(payload[j]);
        }
        c_lo = bswap(payload[j + 1u]);
        c_at = j;
    }
    let s = pos & 31u;
    return select((c_hi << s) | (c_lo >> ((32u - s) & 31u)), c_hi, s == 0u);
}

// The `n` bits (0 <= n <= 32) at `pos`.
fn take(pos: u32, n: u32) -> u32 {
    return select(peek(pos) >> ((32u - n) & 31u), 0u, n == 0u);
}

struct Bits {
    lo: vec4<u32>,
    hi: vec4<u32>,
}

// Table words at .. at + 3 (at a multiple of 4).
fn mask4(at: u32) -> vec4<u32> {
    return tvec(at >> 2u);
}

// Mask words `off ..` of predictor p's tables (p may differ between
// threads).
fn pmask4(off: u32, p: u32) -> vec4<u32> {
    return mask4(p * PW + off);
}

// In-word delta swap at distance d with masks ml, mh.
fn swap_m(x: Bits, ml: vec4<u32>, mh: vec4<u32>, d: u32) -> Bits {
    let dv = vec4<u32>(d);
    let tl = ((x.lo >> dv) ^ x.lo) & ml;
    let th = ((x.hi >> dv) ^ x.hi) & mh;
    return Bits(x.lo ^ tl ^ (tl << dv), x.hi ^ th ^ (th << dv));
}

// In-word stage at `off` of predictor p's inverse network.
fn inv_in(x: Bits, off: u32, p: u32, d: u32) -> Bits {
    return swap_m(x, pmask4(INV + off, p), pmask4(INV + off + 4u, p), d);
}

// Stage at `off` of distance 32 (words (0,1), (2,3), ...).
fn inv32(x: Bits, off: u32, p: u32) -> Bits {
    let a = pmask4(INV + off, p);
    let b = pmask4(INV + off + 4u, p);
    let t = (vec4<u32>(x.lo.xz, x.hi.xz) ^ vec4<u32>(x.lo.yw, x.hi.yw)) & vec4<u32>(a.xz, b.xz);
    return Bits(x.lo ^ t.xxyy, x.hi ^ t.zzww);
}

// Stage at `off` of distance 64 (words (0,2), (1,3), ...).
fn inv64(x: Bits, off: u32, p: u32) -> Bits {
    let a = pmask4(INV + off, p);
    let b = pmask4(INV + off + 4u, p);
    let t = (vec4<u32>(x.lo.xy, x.hi.xy) ^ vec4<u32>(x.lo.zw, x.hi.zw)) & vec4<u32>(a.xy, b.xy);
    return Bits(x.lo ^ t.xyxy, x.hi ^ t.zwzw);
}

// Predictor p's inverse network (all 15 stages): symbols to Gray-coded
// residues.
fn inv_net(x: Bits, p: u32) -> Bits {
    var y = inv_in(x, 0u, p, 1u);
    y = inv_in(y, 8u, p, 2u);
    y = inv_in(y, 16u, p, 4u);
    y = inv_in(y, 24u, p, 8u);
    y = inv_in(y, 32u, p, 16u);
    y = inv32(y, 40u, p);
    y = inv64(y, 48u, p);
    let t = (y.lo ^ y.hi) & pmask4(INV + 56u, p);
    y = Bits(y.lo ^ t, y.hi ^ t);
    y = inv64(y, 64u, p);
    y = inv32(y, 72u, p);
    y = inv_in(y, 80u, p, 16u);
    y = inv_in(y, 88u, p, 8u);
    y = inv_in(y, 96u, p, 4u);
    y = inv_in(y, 104u, p, 2u);
    return inv_in(y, 112u, p, 1u);
}

// Byte b (0..31; 32 and above: 0) of x.
fn byte_at(x: Bits, b: u32) -> u32 {
    let k = b >> 2u;
    let v = select(x.lo, x.hi, k >= 4u);
    let s = k & 3u;
    let w = select(select(v.x, v.y, s == 1u), select(v.z, v.w, s == 3u), s >= 2u);
    return select((w >> ((b & 3u) * 8u)) & 0xffu, 0u, k >= 8u);
}

// Decoded symbols (symbol m in bits 16m .. of `sym`).
var<private> sym: Bits;

// Table-1 codes from `start` until 16 symbols are complete, none past
// `lim`; returns the position after the last code, or BAD.
fn decode_symbols(start: u32, lim: u32) -> u32 {
    sym = Bits(vec4<u32>(0u), vec4<u32>(0u));
    var pos = start;
    var m = 0u;
    let lanes = vec4<u32>(0u, 1u, 2u, 3u);
    while (m < 16u) {
        let w = peek(pos);
        let sel = (w >> 28u) & 3u;
        let f = (w >> 25u) & 0xfu;
        let q = (w >> 24u) & 0xfu;
        // 00xx: 0000 two ones (8), 0001 low byte (12), 0010 high byte
        // (12), 0011 one zero (4)
        var len = select(select(8u, 12u, sel != 0u), 4u, sel == 3u);
        var val = select(select(select(0xc000u >> q, (w >> 20u) & 0xffu, sel == 1u), ((w >> 20u) & 0xffu) << 8u, sel == 2u), 0u, sel == 3u);
        var cnt = 1u;
        var bad = sel == 0u && q == 15u;
        // 01: 011 one one (7), 010 zero run (7)
        let b01 = (w >> 30u) == 1u;
        let single = ((w >> 29u) & 1u) == 1u;
        len = select(len, 7u, b01);
        val = select(val, select(0u, 0x8000u >> f, single), b01);
        cnt = select(cnt, f, b01 && !single);
        bad = select(bad, !single && f < 2u, b01);
        // 1: uncompressed (17)
        let b1 = (w >> 31u) == 1u;
        len = select(len, 17u, b1);
        val = select(val, (w >> 15u) & 0xffffu, b1);
        cnt = select(cnt, 1u, b1);
        bad = bad && !b1;
        if (bad || len > lim - pos || m + cnt > 16u) {
            return BAD;
        }
        let v = vec4<u32>(val << (16u * (m & 1u)));
        let k = vec4<u32>(m >> 1u);
        sym.lo |= select(vec4<u32>(0u), v, k == lanes);
        sym.hi |= select(vec4<u32>(0u), v, k == lanes + vec4<u32>(4u));
        m += cnt;
        pos += len;
    }
    return pos;
}

// The block of `sym` under predictor p: the inverse network, the inverse
// Gray code per byte, restoration along the trees (every byte after its
// base).
fn restore(p: u32) -> Bits {
    let t = p * PW;
    var r = inv_net(sym, p);
    r.lo ^= (r.lo >> vec4<u32>(1u)) & vec4<u32>(0x7f7f7f7fu);
    r.hi ^= (r.hi >> vec4<u32>(1u)) & vec4<u32>(0x7f7f7f7fu);
    r.lo ^= (r.lo >> vec4<u32>(2u)) & vec4<u32>(0x3f3f3f3fu);
    r.hi ^= (r.hi >> vec4<u32>(2u)) & vec4<u32>(0x3f3f3f3fu);
    r.lo ^= (r.lo >> vec4<u32>(4u)) & vec4<u32>(0x0f0f0f0fu);
    r.hi ^= (r.hi >> vec4<u32>(4u)) & vec4<u32>(0x0f0f0f0fu);
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

fn put_block(ob: u32, x: Bits) {
    out[ob] = x.lo.x;
    out[ob + 1u] = x.lo.y;
    out[ob + 2u] = x.lo.z;
    out[ob + 3u] = x.lo.w;
    out[ob + 4u] = x.hi.x;
    out[ob + 5u] = x.hi.y;
    out[ob + 6u] = x.hi.z;
    out[ob + 7u] = x.hi.w;
}

// Decode the block at `start` with no bit at or past `lim` into block b of
// `out`; returns the bits used, or BAD.
fn decode_block(start: u32, lim: u32, b: u32) -> u32 {
    let h = params.h;
    if (h > lim - start) {
        return BAD;
    }
    let id = take(start, h);
    let pos = start + h;
    let room = lim - pos;
    let nz = params.flags & FLAG_ZERO;
    let ns = (params.flags & FLAG_SAME) >> 1u;
    let ob = b * 8u;
    if (id > params.raw_id) {
        return BAD;
    }
    if (id < nz) {
        put_block(ob, Bits(vec4<u32>(0u), vec4<u32>(0u)));
        return h;
    }
    if (id < nz + ns) {
        if (room < 32u) {
            return BAD;
        }
        let v = vec4<u32>(bswap(peek(pos)));
        put_block(ob, Bits(v, v));
        return h + 32u;
    }
    if (id == params.raw_id) {
        if (room < 256u) {
            return BAD;
        }
        let a = vec4<u32>(bswap(peek(pos)), bswap(peek(pos + 32u)), bswap(peek(pos + 64u)), bswap(peek(pos + 96u)));
        let c = vec4<u32>(bswap(peek(pos + 128u)), bswap(peek(pos + 160u)), bswap(peek(pos + 192u)), bswap(peek(pos + 224u)));
        put_block(ob, Bits(a, c));
        return h + 256u;
    }
    let after = decode_symbols(pos, lim);
    if (after == BAD) {
        return BAD;
    }
    put_block(ob, restore(id - params.pred_id0));
    return after - start;
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
    // no cached word yet (never equal to a word index or one below it)
    c_at = 0xfffffffeu;
    for (var b = seg.z; b < seg.z + seg.w; b++) {
        let avail = min(end - pos, params.max_bits);
        if (avail == 0u) {
            bad = 1u;
            break;
        }
        let used = decode_block(pos, pos + avail, b);
        if (used == BAD) {
            bad = 2u;
            break;
        }
        pos += used;
    }
    if (bad == 0u && pos != end) {
        bad = 3u;
    }
    status[s] = bad;
}
